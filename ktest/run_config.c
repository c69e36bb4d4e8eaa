// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the runners share beyond one step: a step the lab failed (INFRA) run
 * again a bounded number of times, and for config_bisect and
 * make_min_config the scratch make's options and the candidate configs
 * written under their digest (the step's name in the journal).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "ktest/build.h"
#include "ktest/run.h"

#define MAX_DELAY_MS 600000

const char *krun_box_name(struct krun *r)
{
	const char *m = krun_opt(r, KOPT_MACHINE);
	const char *bt = krun_opt(r, KOPT_BOX_TYPE);

	if (m && *m)
		return m;
	return bt && !strcmp(bt, "qemu") ? "the qemu box" : "the box";
}

/* Waits ms, a second at a time: SIGINT still stops the run. */
static int retry_wait(struct krun *r, long ms)
{
	if (ms <= 0)
		return 0;
	krun_print(r, "Waiting %ld s before the retry (INFRA_RETRY_DELAY)\n",
		   ms / 1000);
	for (; ms > 0; ms -= 1000) {
		long n = ms < 1000 ? ms : 1000;
		struct timespec ts = { n / 1000, (n % 1000) * 1000000L };

		if (krun_interrupted(r))
			return -1;
		nanosleep(&ts, NULL);	/* SIGINT cuts it short: checked */
	}
	return krun_interrupted(r) ? -1 : 0;
}

int krun_health_check(struct krun *r, const char *before, char *why,
		      size_t len)
{
	int rc;

	krun_print(r, "Health check: %s boots its good kernel before %s\n",
		   krun_box_name(r), before);
	rc = krun_lab_health(r, why, len);
	if (rc > 0) {
		krun_print(r, "Health check: nothing to check (the qemu box boots only the kernel under test)\n");
		return 0;
	}
	if (rc < 0) {
		krun_print(r, "ktest: %s failed its health check: %s. Fix the box, then rerun the same command to resume.\n",
			   krun_box_name(r), why);
		r->unhealthy = true;
		r->infra = true;
		return -1;
	}
	krun_print(r, "Health check: %s is healthy\n", krun_box_name(r));
	return 0;
}

/*
 * A failed attempt's console lines (the dmesg file), kept as
 * DMESG-tryN beside the next attempt's, which starts the file afresh
 */
static void keep_dmesg(struct krun *r, int attempt)
{
	struct stat st;
	char *to;

	if (!r->dmesg || stat(r->dmesg, &st) || !st.st_size)
		return;
	to = xasprintf("%s-try%d", r->dmesg, attempt);
	if (rename(r->dmesg, to))
		krun_print(r, "ktest: cannot keep the console of that attempt (%s as %s): %s\n",
			   r->dmesg, to, strerror(errno));
	else
		krun_print(r, "The console of that attempt: %s\n", to);
	free(to);
}

int krun_step_retry(struct krun *r, const struct kstep_opts *o,
		    const char *what, struct kstep_result *res)
{
	struct kstep_opts again = *o;
	char why[2048];
	long max = krun_int(r, KOPT_INFRA_RETRIES, 2);
	long delay = krun_int(r, KOPT_INFRA_RETRY_DELAY, 0) * 1000;
	char kind[64];
	int tries = 0;

	for (;;) {
		int rc = krun_step(r, &again, res);

		if (rc)
			return rc;
		if (res->verdict != KV_INFRA)
			break;
		/* SIGINT cut the step short (a boot's watch): no retry */
		if (krun_interrupted(r))
			return -1;
		if (r->unhealthy || tries >= max) {
			krun_print(r, "ktest: the lab (%s) failed %d time%s on %s: %s\n",
				   krun_box_name(r), tries + 1,
				   tries ? "s" : "", what, res->why);
			r->infra = true;
			return -1;
		}
		tries++;
		krun_print(r, "INFRA trouble (%s); trying %s again (retry %d of %ld)\n",
			   res->why, what, tries, max);
		keep_dmesg(r, tries);
		if (krun_bool(r, KOPT_INFRA_HEALTH_CHECK) &&
		    krun_health_check(r, "the retry", why, sizeof(why))) {
			/* what the test failed of, for KTEST RESULT */
			snprintf(res->why, sizeof(res->why),
				 "%s failed its health check: %s",
				 krun_box_name(r), why);
			return -1;
		}
		if (retry_wait(r, delay))
			return -1;
		delay = delay * 2 > MAX_DELAY_MS ? MAX_DELAY_MS : delay * 2;
		/* a new attempt: the journal must not replay the failed one */
		snprintf(kind, sizeof(kind), "%s-retry%d", o->kind, tries);
		again.kind = kind;
	}
	krun_print_times(r);
	return 0;
}

bool krun_failed_before(enum kstep_level level, const struct kstep_result *res)
{
	return res->phase[0] &&
		((level > KSTEP_BUILD && !strcmp(res->phase, "build")) ||
		 (level > KSTEP_BOOT && !strcmp(res->phase, "boot")));
}

void krun_scratch_opts(struct krun *r, struct kbuild_opts *b)
{
	memset(b, 0, sizeof(*b));
	b->make_cmd = krun_opt(r, KOPT_MAKE_CMD);
	b->build_dir = krun_opt(r, KOPT_BUILD_DIR);
	b->timeout_ms = krun_int(r, KOPT_RUN_TIMEOUT, 0) * 1000;
}

static uint64_t fnv1a(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ull;
	}
	return h;
}

char *krun_save_config(struct krun *r, const char *dir,
		       const struct kdotconfig *c, char *key, size_t keylen)
{
	char *text = kdotconfig_format(c);
	char *path;

	snprintf(key, keylen, "%016llx", (unsigned long long)fnv1a(text));
	free(text);
	path = xasprintf("%s/cand-%s.config", dir, key);
	if (kdotconfig_write(c, path) < 0) {
		krun_print(r, "ktest: cannot write %s: %s\n", path,
			   strerror(errno));
		r->infra = true;
		free(path);
		return NULL;
	}
	return path;
}
