// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest monitor [CONFIG] LOGFILE: what the boot step would decide on a saved
 * console log. It prints a "TITLE: <title>" line per crash report found,
 * first first, then "VERDICT: <verdict>: <reason>"; exit 0 when the verdict
 * is "booted", 1 for any other, 2 when the input is bad.
 *
 * Time: a log's timestamps are not when its lines reached the console (the
 * firmware prints none, the kernel's clock stops in a hang), so the log is
 * replayed at 1000 lines a second: line n arrives at n ms. Silence never
 * exceeds a second between lines, so TIMEOUT and BOOTED_TIMEOUT can only
 * fire at the end of the log, which is the console falling silent for good,
 * as when ktest.pl's console command exits. The caps count lines:
 * STOP_AFTER_SUCCESS = 10 ends the watch 10000 lines after the last
 * SUCCESS_LINE, STOP_AFTER_FAILURE = 60 60000 lines after the first bug.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "console/monitor.h"

#define LINE_MS 1	/* console time per log line */

#define CRASH_FAIL_CLASSES (kopt_table[KOPT_CRASH_FAIL_CLASSES].name)

struct monitor_opts {
	struct kmon_config mc;
	char *success_line;
	struct korigin success_origin;
};

/* -D NAME=VALUE without a config: the monitor options as DEFAULTS */
static void apply_defines(struct kcli *cli, struct kconfig *c)
{
	static const struct korigin cmdline = { "(command line -D)", 0 };

	for (int i = 0; i < cli->ndefines; i++) {
		const struct kdefine *d = &cli->defines[i];
		const struct kopt_desc *k;
		char name[256], *key;
		int test;

		if (d->variable)
			continue;
		kconfig_split_key(d->name, name, sizeof(name), &test);
		k = kopt_find_any_case(name);
		if (test > 0)
			key = xasprintf("%s[%d]", k ? k->name : name, test);
		else
			key = xstrdup(k ? k->name : name);
		kconfig_store(c, key, d->value, &cmdline);
		free(key);
	}
}

/*
 * A time option in ms. Blank is Perl's undef: for_undef (TIMEOUT and the
 * STOP_* caps are then off; BOOTED_TIMEOUT falls back to TIMEOUT).
 */
static int get_ms(struct kcli *cli, struct kconfig *c, enum kopt_id id,
		  long for_undef, long *out)
{
	struct korigin o;
	char *s;
	long v;

	if (kconfig_get(c, id, 1, &s, &o))
		return -1;
	if (!s) {
		*out = for_undef;
		return 0;
	}
	if (!kopt_parse_int(s, &v)) {
		kdiag_error(&cli->diag, &o, "%s: '%s' is not a whole number",
			    kconfig_opt_name(c, id), s);
		free(s);
		return -1;
	}
	free(s);
	if (v > LONG_MAX / 1000)
		v = LONG_MAX / 1000;
	else if (v < LONG_MIN / 1000)
		v = LONG_MIN / 1000;
	*out = v * 1000;
	return 0;
}

static int get_classes(struct kcli *cli, struct kconfig *c, unsigned int *out)
{
	const struct kval *raw = kconfig_raw(c, CRASH_FAIL_CLASSES, 1);
	char *s;
	int ret = 0;

	*out = KMON_DEFAULT_FAIL;
	if (kconfig_resolve(c, CRASH_FAIL_CLASSES, 1, &s))
		return -1;
	if (s && kmon_parse_classes(s, out)) {
		kdiag_error(&cli->diag, raw ? &raw->origin : NULL,
			    "%s: '%s' is not a list of crash classes",
			    CRASH_FAIL_CLASSES, s);
		kdiag_note(&cli->diag,
			   "use call_trace, panic, bug, warning, oops, sanitizer, hang, ktest (the first two), all or none");
		ret = -1;
	}
	free(s);
	return ret;
}

static int read_options(struct kcli *cli, struct kconfig *c,
			struct monitor_opts *o)
{
	struct kmon_config *mc = &o->mc;
	bool b;

	memset(o, 0, sizeof(*o));
	if (kconfig_get(c, KOPT_SUCCESS_LINE, 1, &o->success_line,
			&o->success_origin))
		return -1;
	mc->success_line = o->success_line;
	if (kconfig_get_bool(c, KOPT_DETECT_TRIPLE_FAULT, 1, &b))
		return -1;
	mc->detect_triple_fault = b;
	if (kconfig_get_bool(c, KOPT_IGNORE_ERRORS, 1, &b))
		return -1;
	mc->ignore_errors = b;
	if (get_ms(cli, c, KOPT_TIMEOUT, -1, &mc->timeout_ms) ||
	    get_ms(cli, c, KOPT_BOOTED_TIMEOUT, mc->timeout_ms,
		   &mc->booted_timeout_ms) ||
	    get_ms(cli, c, KOPT_STOP_AFTER_SUCCESS, -1,
		   &mc->stop_after_success_ms) ||
	    get_ms(cli, c, KOPT_STOP_AFTER_FAILURE, -1,
		   &mc->stop_after_failure_ms) ||
	    get_ms(cli, c, KOPT_STOP_TEST_AFTER, 0, &mc->stop_test_after_ms))
		return -1;
	return get_classes(cli, c, &mc->fail_classes);
}

static const char *verdict_name(enum kmon_verdict v)
{
	switch (v) {
	case KMON_BOOTED:
		return "booted";
	case KMON_CRASHED:
		return "crashed";
	case KMON_TIMED_OUT:
		return "timed out";
	case KMON_TRIPLE_FAULT:
		return "triple fault";
	case KMON_RUNNING:
		break;
	}
	return "running";
}

/* Feeds the log to m; -1 after reporting a read error. */
static int replay(struct kcli *cli, const char *log, struct kmonitor *m)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int64_t now = 0;
	FILE *f = fopen(log, "r");

	if (!f) {
		kdiag_error(&cli->diag, NULL, "can't read console log %s: %s", log,
			    strerror(errno));
		return -1;
	}
	/* getdelim: NUL bytes and invalid UTF-8 are only bytes */
	while ((n = getdelim(&line, &cap, '\n', f)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		now += LINE_MS;
		kmonitor_line(m, line, (size_t)n, now);
	}
	free(line);
	if (ferror(f)) {
		kdiag_error(&cli->diag, NULL, "can't read console log %s: %s", log,
			    strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	kmonitor_eof(m, now + LINE_MS);
	return 0;
}

int cmd_monitor(struct kcli *cli)
{
	/* one operand: the log; two: the config, then the log */
	const char *log = cli->operand ? cli->operand : cli->config;
	const struct kmon_crash *crashes;
	struct monitor_opts o;
	struct kmonitor *m = NULL;
	struct kconfig c;
	char why[512];
	size_t n;
	int ret = KEXIT_USAGE;

	cli->interactive = false;
	if (cli->operand) {
		ret = kload(cli, &c, KLOAD_RAW);
		if (ret) {
			kconfig_free(&c);
			return ret;
		}
		ret = KEXIT_USAGE;
	} else {
		kconfig_init(&c, &cli->diag);
		apply_defines(cli, &c);
	}
	kconfig_apply_defaults(&c);
	if (read_options(cli, &c, &o))
		goto out;
	m = kmonitor_new(&o.mc, 0, why, sizeof(why));
	if (!m) {
		kdiag_error(&cli->diag, o.success_origin.file ? &o.success_origin : NULL,
			    "%s", why);
		goto out;
	}
	if (replay(cli, log, m))
		goto out;
	n = kmonitor_crashes(m, &crashes);
	for (size_t i = 0; i < n; i++)
		printf("TITLE: %s\n", crashes[i].title);
	printf("VERDICT: %s: %s\n", verdict_name(kmonitor_verdict(m)),
	       kmonitor_reason(m));
	ret = kmonitor_verdict(m) == KMON_BOOTED ? KEXIT_OK : KEXIT_FAIL;
	if (fflush(stdout))
		ret = KEXIT_USAGE;
out:
	kmonitor_free(m);
	free(o.success_line);
	kconfig_free(&c);
	return ret;
}
