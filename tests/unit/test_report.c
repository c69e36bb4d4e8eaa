// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON report: written whole (temp file + rename), valid JSON (read back
 * by jq), every step with its verdict, why and durations, awkward strings
 * escaped, and the KCIDB view with one checkout per commit, a build per
 * built step and a test per boot/test that ran.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/report.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/ktest-report.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* jq -r FILTER FILE, first output line */
static char *jq(const char *path, const char *filter)
{
	char *cmd = xasprintf("jq -r '%s' '%s' 2>&1", filter, path);
	FILE *p = popen(cmd, "r");
	char buf[4096] = "";
	int st;

	assert_non_null(p);
	if (!fgets(buf, sizeof(buf), p))
		buf[0] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	if (st)
		fail_msg("jq '%s' failed (%d): %s (is jq installed? make deps)",
			 filter, st, buf);
	free(cmd);
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

static void expect(const char *path, const char *filter, const char *want)
{
	char *got = jq(path, filter);

	if (strcmp(got, want))
		fail_msg("%s: got '%s', want '%s'", filter, got, want);
	free(got);
}

static void build_report(struct kresults *r)
{
	struct ktest_report *t;
	struct kstep_report *s;

	kresults_init(r, "/etc/ktest/my \"lab\".conf");
	t = kresults_test(r, 1, "bisect boot", "bisect", "boot");
	s = kresults_step(t, "bisect", "aaaa", "fix: a \"quoted\"\tsubject\n");
	s->verdict = KV_GOOD;
	s->ms[KPH_BUILD] = 8123;
	s->ms[KPH_INSTALL] = 450;
	s->ms[KPH_BOOT] = 2001;
	s = kresults_step(t, "bisect", "bbbb", "break boot");
	s->verdict = KV_BAD;
	kresults_set(&s->why, "boot: Kernel panic - not syncing: x");
	kresults_set(&s->title, "Kernel panic - not syncing: x");
	kresults_set(&s->failed_phase, "boot");
	s->ms[KPH_BUILD] = 7000;
	s->ms[KPH_INSTALL] = 400;
	s->ms[KPH_BOOT] = 3000;
	s = kresults_step(t, "bisect", "cccc", "build break");
	s->verdict = KV_SKIP;
	kresults_set(&s->failed_phase, "build");
	s->ms[KPH_BUILD] = 5000;
	s = kresults_step(t, "bisect", "aaaa", "again, from the journal");
	s->verdict = KV_GOOD;
	s->resumed = true;
	t->verdict = KV_GOOD;
	kresults_set(&t->result_commit, "bbbb");
	kresults_set(&t->result_subject, "break boot");
	t = kresults_test(r, 2, NULL, "build", "oldconfig");
	t->verdict = KV_BAD;
	kresults_set(&t->why, "failed build");
	kresults_finish(r);
}

static void test_report(void **state)
{
	struct kresults r;
	char *path = xasprintf("%s/report.json", dir);
	char *tmp = xasprintf("%s.tmp", path);

	build_report(&r);
	assert_int_equal(kresults_write(&r, path), 0);
	assert_int_equal(access(tmp, F_OK), -1);
	expect(path, ".config", "/etc/ktest/my \"lab\".conf");
	expect(path, ".tests | length", "2");
	expect(path, ".tests[0].first_bad_commit", "bbbb");
	expect(path, ".tests[0].steps | length", "4");
	expect(path, ".tests[0].steps[0].subject | @json",
	       "\"fix: a \\\"quoted\\\"\\tsubject\\n\"");
	expect(path, ".tests[0].steps[0].durations.build", "8.123");
	expect(path, ".tests[0].steps[0].durations.boot", "2.001");
	expect(path, ".tests[0].steps[0].durations.test", "null");
	expect(path, ".tests[0].steps[1].verdict", "BAD");
	expect(path, ".tests[0].steps[1].crash_title", "Kernel panic - not syncing: x");
	expect(path, ".tests[0].steps[3].resumed", "true");
	expect(path, ".tests[1].name", "null");
	expect(path, ".tests[1].why", "failed build");
	expect(path, ".tests[1].steps | length", "0");
	/* KCIDB: three distinct commits, three builds, two boots */
	expect(path, ".kcidb.version.major", "4");
	expect(path, ".kcidb.checkouts | length", "3");
	/* "bbbb" is no full sha1: KCIDB's pattern would refuse it */
	expect(path, ".kcidb.checkouts[1].git_commit_hash", "null");
	expect(path, ".kcidb.builds | length", "3");
	expect(path, ".kcidb.builds[2].valid", "false");
	expect(path, ".kcidb.builds[1].checkout_id", "ktest:bbbb");
	expect(path, ".kcidb.tests | length", "2");
	expect(path, ".kcidb.tests[1].status", "FAIL");
	expect(path, ".kcidb.tests[1].misc.crash_title",
	       "Kernel panic - not syncing: x");
	expect(path, ".kcidb.tests[0].status", "PASS");
	kresults_free(&r);
	free(path);
	free(tmp);
}

/*
 * Found by tests/fuzz/fuzz_report (corpus: regress-invalid-utf8.bin): bytes
 * that are no UTF-8 went into the JSON as they were, and a commit went into
 * the KCIDB ids unescaped. Both made a file no JSON reader takes.
 */
static void test_invalid_utf8_and_quotes(void **state)
{
	struct kresults r;
	struct ktest_report *t;
	struct kstep_report *s;
	char *path = xasprintf("%s/report.json", dir);
	char buf[8192];
	size_t n;
	FILE *f;

	kresults_init(&r, "/lab/\xe4 latin-1 \xff.conf");
	t = kresults_test(&r, 1, "caf\xc3\xa9", "boot", NULL);
	s = kresults_step(t, "bisect", "ab\"c", "surrogate \xed\xa0\x80 cut \xe2\x82");
	kresults_set(&s->title, "BUG: noise \x80\xc0\xaf\xf5\x80\x80\x80 \xf0\x9f\x90\xa7");
	s->ms[KPH_BUILD] = 1000;
	assert_int_equal(kresults_write(&r, path), 0);
	kresults_free(&r);

	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* only the valid characters are left as bytes */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] >= 0x80)
			assert_true(!strncmp(buf + i, "\xc3\xa9", 2) ||
				    !strncmp(buf + i, "\xf0\x9f\x90\xa7", 4) ||
				    (i && (unsigned char)buf[i - 1] >= 0x80));
	expect(path, ".config | @json", "\"/lab/\ufffd latin-1 \ufffd.conf\"");
	expect(path, ".tests[0].name", "caf\xc3\xa9");
	expect(path, ".tests[0].steps[0].subject | @json",
	       "\"surrogate \ufffd\ufffd\ufffd cut \ufffd\ufffd\"");
	expect(path, ".tests[0].steps[0].crash_title | @json",
	       "\"BUG: noise \ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd \xf0\x9f\x90\xa7\"");
	expect(path, ".kcidb.checkouts[0].id", "ktest:ab\"c");
	expect(path, ".kcidb.checkouts[0].git_commit_hash", "null");
	expect(path, ".kcidb.builds[0].checkout_id", "ktest:ab\"c");
	free(path);
}

static void test_empty_and_unwritable(void **state)
{
	struct kresults r;
	char *path = xasprintf("%s/empty.json", dir);

	kresults_init(&r, NULL);
	assert_int_equal(kresults_write(&r, path), 0);
	expect(path, ".tests | length", "0");
	expect(path, ".kcidb.builds | length", "0");
	expect(path, ".finished", "null");
	assert_int_equal(kresults_write(&r, "/proc/no/such/report.json"), -1);
	kresults_free(&r);
	free(path);
}

/*
 * Two runs started in the same second (two quick build tests) never share
 * a KCIDB id: each run's part holds its start, its pid and microseconds.
 */
static void test_run_ids_unique(void **state)
{
	char other[128] = "", pid[32];
	struct kresults r;
	int fd[2], st;
	pid_t child;
	ssize_t n;

	assert_int_equal(pipe(fd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		kresults_init(&r, NULL);
		n = write(fd[1], r.run, strlen(r.run));
		_exit(n == (ssize_t)strlen(r.run) ? 0 : 1);
	}
	kresults_init(&r, NULL);
	close(fd[1]);
	n = read(fd[0], other, sizeof(other) - 1);
	close(fd[0]);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(n > 0);
	assert_string_not_equal(r.run, other);
	snprintf(pid, sizeof(pid), "Z-%ld-", (long)getpid());
	assert_non_null(strstr(r.run, pid));
	snprintf(pid, sizeof(pid), "Z-%ld-", (long)child);
	assert_non_null(strstr(other, pid));
	/* the start's second, as started says it */
	assert_true(strlen(r.run) > 16 && r.run[8] == 'T');
	assert_memory_equal(r.run, r.started, 4);
	assert_memory_equal(r.run + 4, r.started + 5, 2);
	assert_memory_equal(r.run + 9, r.started + 11, 2);
	kresults_free(&r);
}

static void test_verdict_names(void **state)
{
	for (int v = KV_NONE; v <= KV_INFRA; v++)
		assert_int_equal(kverdict_parse(kverdict_name(v)), v);
	assert_int_equal(kverdict_parse("good"), KV_NONE);
	assert_int_equal(kverdict_parse(NULL), KV_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8_and_quotes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_unwritable, setup,
						teardown),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_run_ids_unique),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
