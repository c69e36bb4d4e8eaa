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

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "ktest/build.h"
#include "ktest/run.h"

#define MAX_INFRA 3

int krun_step_retry(struct krun *r, const struct kstep_opts *o,
		    const char *what, struct kstep_result *res)
{
	struct kstep_opts again = *o;
	char kind[64];
	int tries = 0;

	for (;;) {
		if (krun_step(r, &again, res))
			return -1;
		if (res->verdict != KV_INFRA)
			break;
		if (++tries >= MAX_INFRA) {
			krun_print(r, "ktest: the lab failed %d times on %s: %s\n",
				   tries, what, res->why);
			r->infra = true;
			return -1;
		}
		krun_print(r, "INFRA trouble (%s); trying %s again\n", res->why,
			   what);
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
