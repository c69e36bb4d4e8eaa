// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patchcheck state machine driven by simulated series, and the warning
 * matcher on build-log lines as gcc 12, clang 14, GNU as, ld and make print
 * them. Pure: linked with patchcheck.o and strmap.o only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/patchcheck.h"

/* A series of eight, oldest first. */
static const char *const ids[] = {
	"0b1e3a5c7d9f11223344556677889900aabbccdd",
	"1f2e3d4c5b6a79881726354453627180fedcba98",
	"2a2b2c2d2e2f30313233343536373839404142aa",
	"3c0ffee0123456789abcdef0123456789abcdef0",
	"4deadbeef00112233445566778899aabbccddeef",
	"5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
	"6b8c9dae0f1e2d3c4b5a69788796a5b4c3d2e1f0",
	"7777777777777777777777777777777777777777",
};

#define NIDS (sizeof(ids) / sizeof(ids[0]))

/* What a step should say, as a compact string: "C" clean, "T" touched... */
static void step_flags(const struct kp_step *s, char *buf)
{
	sprintf(buf, "%s%s%s%s%s", s->clean ? "C" : "-",
		s->check_touched ? "T" : "-",
		s->check_warnings_file ? "W" : "-", s->boot ? "B" : "-",
		s->test ? "R" : "-");
}

/* Runs every step reporting OK; checks ids and indices, returns the flags. */
static void run_all_ok(struct kpatchcheck *p, char flags[][8], size_t want)
{
	struct kp_step s;
	size_t i;

	for (i = 0; i < want; i++) {
		kpatchcheck_next(p, &s);
		assert_false(s.done);
		assert_int_equal(s.index, i);
		step_flags(&s, flags[i]);
		kpatchcheck_report(p, KP_OK, NULL);
	}
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	assert_null(s.id);
	assert_int_equal(kpatchcheck_failures(p, NULL), 0);
}

static void test_build_steps(void **state)
{
	struct kp_options o = { .type = KP_BUILD };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	struct kp_step s;
	char flags[NIDS][8];
	size_t i;

	assert_int_equal(kpatchcheck_total(p), NIDS);
	for (i = 0; i < NIDS; i++) {
		kpatchcheck_next(p, &s);
		assert_string_equal(s.id, ids[i]);
		step_flags(&s, flags[i]);
		kpatchcheck_report(p, KP_OK, NULL);
	}
	/* only the first and the last build from clean */
	assert_string_equal(flags[0], "CT---");
	for (i = 1; i < NIDS - 1; i++)
		assert_string_equal(flags[i], "-T---");
	assert_string_equal(flags[NIDS - 1], "CT---");
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	kpatchcheck_free(p);
}

static void test_boot_and_test_steps(void **state)
{
	struct kp_options o = { .type = KP_BOOT };
	struct kpatchcheck *p = kpatchcheck_new(ids, 3, &o);
	char flags[3][8];

	run_all_ok(p, flags, 3);
	assert_string_equal(flags[0], "CT-B-");
	assert_string_equal(flags[1], "-T-B-");
	assert_string_equal(flags[2], "CT-B-");
	kpatchcheck_free(p);

	o.type = KP_TEST;
	p = kpatchcheck_new(ids, 3, &o);
	run_all_ok(p, flags, 3);
	assert_string_equal(flags[0], "CT-BR");
	assert_string_equal(flags[1], "-T-BR");
	assert_string_equal(flags[2], "CT-BR");
	kpatchcheck_free(p);
}

static void test_noclean(void **state)
{
	struct kp_options o = { .type = KP_TEST, .noclean = true };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	char flags[NIDS][8];
	size_t i;

	run_all_ok(p, flags, NIDS);
	for (i = 0; i < NIDS; i++)
		assert_string_equal(flags[i], "-T-BR");
	kpatchcheck_free(p);
}

static void test_one_and_none(void **state)
{
	struct kp_options o = { .type = KP_BUILD };
	struct kpatchcheck *p = kpatchcheck_new(ids, 1, &o);
	struct kp_step s;
	char flags[1][8], flags2[2][8];

	/* the only commit is first and last: clean */
	run_all_ok(p, flags, 1);
	assert_string_equal(flags[0], "CT---");
	kpatchcheck_free(p);

	p = kpatchcheck_new(NULL, 0, &o);
	assert_non_null(p);
	assert_int_equal(kpatchcheck_total(p), 0);
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	kpatchcheck_free(p);

	/* no options: a build patchcheck */
	p = kpatchcheck_new(ids, 2, NULL);
	run_all_ok(p, flags2, 2);
	assert_string_equal(flags2[0], "CT---");
	assert_string_equal(flags2[1], "CT---");
	kpatchcheck_free(p);
}

static void test_bad_arguments(void **state)
{
	const char *holes[] = { ids[0], NULL, ids[2] };

	assert_null(kpatchcheck_new(NULL, 3, NULL));
	assert_null(kpatchcheck_new(holes, 3, NULL));
	kpatchcheck_free(NULL);
}

static void test_warnings_file(void **state)
{
	const char *ign[] = { ids[1] };
	struct kp_options o = { .type = KP_BUILD, .warnings_file = true,
				.ignore_warnings = ign, .nignore = 1 };
	struct kpatchcheck *p = kpatchcheck_new(ids, 3, &o);
	char flags[3][8];

	/* the file covers the touched files too; IGNORE_WARNINGS does not
	 * excuse a commit from it (ktest.pl runs check_buildlog regardless) */
	run_all_ok(p, flags, 3);
	assert_string_equal(flags[0], "C-W--");
	assert_string_equal(flags[1], "--W--");
	assert_string_equal(flags[2], "C-W--");
	kpatchcheck_free(p);
}

static void test_skip(void **state)
{
	/* full, and upper case (the runner hands full ids, but be kind) */
	const char *skip[] = { ids[2], "5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A",
			       ids[7] };
	struct kp_options o = { .type = KP_BUILD, .skip = skip, .nskip = 3 };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	const size_t want[] = { 0, 1, 3, 4, 6 };
	const char **sk;
	struct kp_step s;
	size_t i;

	assert_int_equal(kpatchcheck_total(p), 5);
	assert_int_equal(kpatchcheck_skipped(p, &sk), 3);
	assert_string_equal(sk[0], ids[2]);
	assert_string_equal(sk[1], ids[5]);
	assert_string_equal(sk[2], ids[7]);
	for (i = 0; i < 5; i++) {
		kpatchcheck_next(p, &s);
		assert_false(s.done);
		assert_int_equal(s.index, i);
		assert_string_equal(s.id, ids[want[i]]);
		/* the last commit is skipped: the last one built is clean */
		assert_int_equal(s.clean, i == 0 || i == 4);
		kpatchcheck_report(p, KP_OK, NULL);
	}
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	kpatchcheck_free(p);
}

static void test_skip_first_and_all(void **state)
{
	const char *skip[] = { ids[0] };
	struct kp_options o = { .type = KP_BUILD, .skip = skip, .nskip = 1 };
	struct kpatchcheck *p = kpatchcheck_new(ids, 3, &o);
	struct kp_step s;

	kpatchcheck_next(p, &s);
	assert_string_equal(s.id, ids[1]);
	assert_true(s.clean);
	kpatchcheck_free(p);

	o.skip = ids;
	o.nskip = 3;
	p = kpatchcheck_new(ids, 3, &o);
	assert_int_equal(kpatchcheck_total(p), 0);
	assert_int_equal(kpatchcheck_skipped(p, NULL), 3);
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	kpatchcheck_free(p);
}

static void test_ignored(void **state)
{
	const char *ign[] = {
		"1f2e3d4c5b6a79881726354453627180fedcba98",	/* full */
		"2a2b2c2",				/* abbreviated */
		"3C0FFEE",				/* upper case */
		"4de",					/* too short */
		"5a5g",					/* not hex */
		"",
		"6b8c9dae0f1e2d3c4b5a69788796a5b4c3d2e1f0ff",	/* too long */
		"7778",					/* not a prefix */
	};
	struct kp_options o = { .type = KP_BUILD, .ignore_warnings = ign,
				.nignore = sizeof(ign) / sizeof(ign[0]) };
	const bool want[NIDS] = { false, true, true, true, false, false,
				  false, false };
	struct kpatchcheck *p;
	struct kp_step s;
	size_t i;

	for (i = 0; i < NIDS; i++)
		assert_int_equal(kp_ignored(&o, ids[i]), want[i]);
	/* ktest.pl's own case: the full id, exactly; and the shortest */
	assert_true(kp_ignored(&o, "1f2e3d4c5b6a79881726354453627180fedcba98"));
	ign[3] = "4dea";
	assert_true(kp_ignored(&o, ids[4]));
	ign[3] = "4de";
	assert_false(kp_ignored(NULL, ids[1]));
	assert_false(kp_ignored(&o, NULL));
	/* an upper-case id from the caller matches a lower-case entry */
	assert_true(kp_ignored(&o, "1F2E3D4C5B6A79881726354453627180FEDCBA98"));

	p = kpatchcheck_new(ids, NIDS, &o);
	for (i = 0; i < NIDS; i++) {
		kpatchcheck_next(p, &s);
		assert_int_equal(s.check_touched, !want[i]);
		kpatchcheck_report(p, KP_OK, NULL);
	}
	kpatchcheck_free(p);
}

/*
 * A series of eight where commit 3 (index 2) breaks the build and commit 5
 * (index 4) adds a warning in a file it touches.
 */
static enum kp_stage outcome(size_t i)
{
	if (i == 2)
		return KP_FAIL_BUILD;
	if (i == 4)
		return KP_FAIL_WARNING;
	return KP_OK;
}

static size_t drive(struct kpatchcheck *p)
{
	struct kp_step s;
	size_t steps = 0;

	for (;;) {
		kpatchcheck_next(p, &s);
		if (s.done)
			break;
		steps++;
		kpatchcheck_report(p, outcome(s.index),
				   outcome(s.index) == KP_FAIL_WARNING ?
				   "drivers/foo.c built with warnings" : NULL);
	}
	return steps;
}

static void test_go_on(void **state)
{
	struct kp_options o = { .type = KP_BUILD };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	const struct kp_failure *f;

	assert_int_equal(drive(p), NIDS);
	assert_int_equal(kpatchcheck_failures(p, &f), 2);
	assert_string_equal(f[0].id, ids[2]);
	assert_int_equal(f[0].stage, KP_FAIL_BUILD);
	assert_string_equal(f[0].why, "failed build");
	assert_string_equal(f[1].id, ids[4]);
	assert_int_equal(f[1].stage, KP_FAIL_WARNING);
	assert_string_equal(f[1].why, "drivers/foo.c built with warnings");
	kpatchcheck_free(p);
}

static void test_stop_at_first(void **state)
{
	struct kp_options o = { .type = KP_BUILD, .stop_at_first = true };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	const struct kp_failure *f;
	struct kp_step s;

	assert_int_equal(drive(p), 3);
	assert_int_equal(kpatchcheck_failures(p, &f), 1);
	assert_string_equal(f[0].id, ids[2]);
	assert_int_equal(f[0].stage, KP_FAIL_BUILD);
	/* done stays done, and late reports change nothing */
	kpatchcheck_report(p, KP_FAIL_TEST, "late");
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	assert_int_equal(kpatchcheck_failures(p, NULL), 1);
	kpatchcheck_free(p);
}

/*
 * A pool: builds reported in order, boots found failing later. The late
 * failures land in series order among the build failures; with
 * stop_at_first only the series' first stays and nothing more is handed
 * out.
 */
static void test_late_failures(void **state)
{
	struct kp_options o = { .type = KP_BOOT };
	struct kpatchcheck *p = kpatchcheck_new(ids, NIDS, &o);
	const struct kp_failure *f;
	struct kp_step s;

	for (size_t i = 0; i < 4; i++) {
		kpatchcheck_next(p, &s);
		kpatchcheck_report(p, i == 2 ? KP_FAIL_BUILD : KP_OK, NULL);
	}
	kpatchcheck_late_failure(p, ids[3], KP_FAIL_BOOT, "panic in 3");
	kpatchcheck_late_failure(p, ids[0], KP_FAIL_TEST, NULL);
	kpatchcheck_late_failure(p, ids[1], KP_OK, NULL);
	kpatchcheck_late_failure(p, "no such commit", KP_FAIL_BOOT, NULL);
	assert_int_equal(kpatchcheck_failures(p, &f), 3);
	assert_string_equal(f[0].id, ids[0]);
	assert_int_equal(f[0].stage, KP_FAIL_TEST);
	assert_string_equal(f[1].id, ids[2]);
	assert_int_equal(f[1].stage, KP_FAIL_BUILD);
	assert_string_equal(f[2].id, ids[3]);
	assert_string_equal(f[2].why, "panic in 3");
	kpatchcheck_next(p, &s);
	assert_false(s.done);
	assert_int_equal(s.index, 4);
	/* where a late failure goes: the series' order */
	assert_int_equal(kpatchcheck_index(p, ids[0]), 0);
	assert_int_equal(kpatchcheck_index(p, ids[3]), 3);
	assert_int_equal(kpatchcheck_index(p, "no such commit"), NIDS);
	kpatchcheck_free(p);

	o.stop_at_first = true;
	p = kpatchcheck_new(ids, NIDS, &o);
	for (size_t i = 0; i < 3; i++) {
		kpatchcheck_next(p, &s);
		kpatchcheck_report(p, KP_OK, NULL);
	}
	kpatchcheck_late_failure(p, ids[2], KP_FAIL_BOOT, NULL);
	kpatchcheck_late_failure(p, ids[1], KP_FAIL_BOOT, "the first");
	assert_int_equal(kpatchcheck_failures(p, &f), 1);
	assert_string_equal(f[0].id, ids[1]);
	assert_string_equal(f[0].why, "the first");
	kpatchcheck_next(p, &s);
	assert_true(s.done);
	kpatchcheck_free(p);
	(void)state;
}

static void test_boot_and_test_failures(void **state)
{
	struct kp_options o = { .type = KP_TEST };
	struct kpatchcheck *p = kpatchcheck_new(ids, 4, &o);
	const struct kp_failure *f;
	struct kp_step s;

	kpatchcheck_next(p, &s);
	kpatchcheck_report(p, KP_FAIL_BOOT, "Kernel panic - not syncing");
	kpatchcheck_next(p, &s);
	kpatchcheck_report(p, KP_OK, NULL);
	kpatchcheck_next(p, &s);
	kpatchcheck_report(p, KP_FAIL_TEST, NULL);
	kpatchcheck_next(p, &s);
	kpatchcheck_report(p, KP_FAIL_WARNING, NULL);
	kpatchcheck_next(p, &s);
	assert_true(s.done);

	assert_int_equal(kpatchcheck_failures(p, &f), 3);
	assert_string_equal(f[0].id, ids[0]);
	assert_int_equal(f[0].stage, KP_FAIL_BOOT);
	assert_string_equal(f[0].why, "Kernel panic - not syncing");
	assert_string_equal(f[1].id, ids[2]);
	assert_int_equal(f[1].stage, KP_FAIL_TEST);
	assert_string_equal(f[1].why, "failed test");
	assert_string_equal(f[2].id, ids[3]);
	assert_string_equal(f[2].why, "built with warnings");
	kpatchcheck_free(p);
}

/* A step is handed out again until it is reported (a resumed run). */
static void test_next_repeats(void **state)
{
	struct kpatchcheck *p = kpatchcheck_new(ids, 3, NULL);
	struct kp_step a, b;

	/* a report before anything was handed out is ignored */
	kpatchcheck_report(p, KP_FAIL_BUILD, "nothing in flight");
	assert_int_equal(kpatchcheck_failures(p, NULL), 0);

	kpatchcheck_next(p, &a);
	kpatchcheck_next(p, &b);
	assert_int_equal(a.index, 0);
	assert_memory_equal(&a, &b, sizeof(a));
	kpatchcheck_report(p, KP_OK, NULL);
	/* a second report for the same step does not skip the next one */
	kpatchcheck_report(p, KP_FAIL_BUILD, NULL);
	kpatchcheck_next(p, &a);
	assert_int_equal(a.index, 1);
	assert_int_equal(kpatchcheck_failures(p, NULL), 0);
	kpatchcheck_free(p);
}

/* The machine keeps its own copies of everything it was given. */
static void test_copies(void **state)
{
	char buf[3][KB_ID_LEN], sk[KB_ID_LEN], ig[KB_ID_LEN];
	const char *list[3] = { buf[0], buf[1], buf[2] };
	const char *skl[1] = { sk }, *igl[1] = { ig };
	struct kp_options o = { .skip = skl, .nskip = 1,
				.ignore_warnings = igl, .nignore = 1 };
	struct kpatchcheck *p;
	const char **skipped;
	struct kp_step s;
	size_t i;

	for (i = 0; i < 3; i++)
		strcpy(buf[i], ids[i]);
	strcpy(sk, ids[1]);
	strcpy(ig, ids[2]);
	p = kpatchcheck_new(list, 3, &o);
	memset(buf, 'x', sizeof(buf));
	memset(sk, 0, sizeof(sk));
	memset(ig, 0, sizeof(ig));

	kpatchcheck_next(p, &s);
	assert_string_equal(s.id, ids[0]);
	assert_true(s.check_touched);
	kpatchcheck_report(p, KP_OK, NULL);
	kpatchcheck_next(p, &s);
	assert_string_equal(s.id, ids[2]);
	assert_false(s.check_touched);
	kpatchcheck_report(p, KP_OK, NULL);
	assert_int_equal(kpatchcheck_skipped(p, &skipped), 1);
	assert_string_equal(skipped[0], ids[1]);
	kpatchcheck_free(p);
}

/* ---- simulated series by the thousand, against a plain model ---- */

static uint32_t rnd(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static void random_series(uint32_t seed)
{
	enum { MAXN = 40 };
	char idbuf[MAXN][KB_ID_LEN], abbrev[MAXN][KB_ID_LEN];
	const char *list[MAXN] = { 0 }, *skip[MAXN], *ign[MAXN];
	enum kp_stage want_stage[MAXN];
	bool skipped[MAXN], ignored[MAXN];
	struct kp_options o = { 0 };
	const struct kp_failure *f;
	size_t n, i, j, k, built, nfail, last = 0;
	struct kpatchcheck *p;
	struct kp_step s;

	n = rnd(&seed) % MAXN;
	o.type = rnd(&seed) % 3;
	o.noclean = rnd(&seed) % 4 == 0;
	o.stop_at_first = rnd(&seed) % 2;
	o.warnings_file = rnd(&seed) % 5 == 0;
	o.skip = skip;
	o.ignore_warnings = ign;
	for (i = 0; i < n; i++) {
		snprintf(idbuf[i], KB_ID_LEN, "%08x%08x%08x%08x%08x",
			 (unsigned)i, rnd(&seed), rnd(&seed), rnd(&seed),
			 rnd(&seed));
		list[i] = idbuf[i];
		skipped[i] = rnd(&seed) % 6 == 0;
		ignored[i] = rnd(&seed) % 4 == 0;
		if (skipped[i])
			skip[o.nskip++] = idbuf[i];
		/*
		 * Abbreviated to 8 hex digits or more, in either case: the
		 * first 8 ("%08x" of i) are unique in the series.
		 */
		if (ignored[i]) {
			strcpy(abbrev[i], idbuf[i]);
			abbrev[i][8 + rnd(&seed) % 33] = '\0';
			if (rnd(&seed) % 2)
				for (j = 0; abbrev[i][j]; j++)
					abbrev[i][j] = toupper(abbrev[i][j]);
			ign[o.nignore++] = abbrev[i];
		}
		want_stage[i] = rnd(&seed) % 5 == 0 ? 1 + rnd(&seed) % 4 :
				KP_OK;
		if (!skipped[i])
			last = i;
	}

	p = kpatchcheck_new(list, n, &o);
	built = 0;
	nfail = 0;
	for (i = 0; i < n; i++) {
		if (skipped[i])
			continue;
		kpatchcheck_next(p, &s);
		assert_false(s.done);
		assert_string_equal(s.id, list[i]);
		assert_int_equal(s.index, built);
		assert_int_equal(s.clean,
				 !o.noclean && (built == 0 || i == last));
		assert_int_equal(s.check_touched,
				 !o.warnings_file && !ignored[i]);
		assert_int_equal(s.check_warnings_file, o.warnings_file);
		assert_int_equal(s.boot, o.type != KP_BUILD);
		assert_int_equal(s.test, o.type == KP_TEST);
		kpatchcheck_report(p, want_stage[i], NULL);
		built++;
		if (want_stage[i] != KP_OK)
			nfail++;
		if (nfail && o.stop_at_first)
			break;
	}
	kpatchcheck_next(p, &s);
	assert_true(s.done);

	assert_int_equal(kpatchcheck_failures(p, &f), nfail);
	for (i = 0, k = 0; k < nfail; i++) {
		if (skipped[i] || want_stage[i] == KP_OK)
			continue;
		assert_string_equal(f[k].id, list[i]);
		assert_int_equal(f[k].stage, want_stage[i]);
		k++;
	}
	for (i = 0, j = 0; i < n; i++)
		j += skipped[i];
	assert_int_equal(kpatchcheck_skipped(p, NULL), j);
	assert_int_equal(kpatchcheck_total(p), n - j);
	kpatchcheck_free(p);
}

static void test_random_series(void **state)
{
	uint32_t seed;

	for (seed = 1; seed <= 5000; seed++)
		random_series(seed);
}

/* ---- warnings ---- */

#define SRC "/home/dev/linux"
/* gcc's quotes in a UTF-8 locale, U+2018 and U+2019 */
#define LQ "\xe2\x80\x98"
#define RQ "\xe2\x80\x99"

struct norm_case {
	const char *line;
	const char *want;	/* normalised, or NULL: no warning line */
	const char *file;	/* kp_warning_file() */
};

static const struct norm_case norm_cases[] = {
	/* gcc 12: column dropped, curly quotes plain */
	{ "drivers/foo.c:12:5: warning: unused variable " LQ "x" RQ " [-Wunused-variable]\n",
	  "drivers/foo.c:12: warning: unused variable 'x' [-Wunused-variable]",
	  "drivers/foo.c" },
	/* a compiler without columns says the same (the distcc case) */
	{ "drivers/foo.c:12: warning: unused variable 'x' [-Wunused-variable]",
	  "drivers/foo.c:12: warning: unused variable 'x' [-Wunused-variable]",
	  "drivers/foo.c" },
	/* O= build, srctree absolute */
	{ SRC "/drivers/foo.c:12:5: warning: unused variable " LQ "x" RQ " [-Wunused-variable]",
	  "drivers/foo.c:12: warning: unused variable 'x' [-Wunused-variable]",
	  "drivers/foo.c" },
	/* O= build in a subdirectory: srctree is ".." */
	{ "../drivers/foo.c:12:5: warning: unused variable " LQ "x" RQ " [-Wunused-variable]\r\n",
	  "drivers/foo.c:12: warning: unused variable 'x' [-Wunused-variable]",
	  "drivers/foo.c" },
	/* from an object tree beside the tree: the way down goes too */
	{ "../linux/drivers/foo.c:12:5: warning: unused variable 'x'",
	  "drivers/foo.c:12: warning: unused variable 'x'",
	  "drivers/foo.c" },
	{ "../../dev/linux/drivers/foo.c:12:5: warning: unused variable 'x'",
	  "drivers/foo.c:12: warning: unused variable 'x'",
	  "drivers/foo.c" },
	/* ... but only a way down to srcdir: include/linux is the tree's */
	{ "../include/linux/foo.h:3:1: warning: x",
	  "include/linux/foo.h:3: warning: x", "include/linux/foo.h" },
	{ "../linux2/drivers/foo.c:1:1: warning: x",
	  "linux2/drivers/foo.c:1: warning: x", "linux2/drivers/foo.c" },
	{ "../inux/drivers/foo.c:1:1: warning: x",	/* whole components */
	  "inux/drivers/foo.c:1: warning: x", "inux/drivers/foo.c" },
	/* outside the tree: as it is */
	{ "/usr/include/linux/types.h:5:1: warning: x",
	  "/usr/include/linux/types.h:5: warning: x",
	  "/usr/include/linux/types.h" },
	/* generated header in the object tree */
	{ "./include/generated/autoconf.h:3:9: warning: \"CONFIG_X\" redefined",
	  "include/generated/autoconf.h:3: warning: \"CONFIG_X\" redefined",
	  "include/generated/autoconf.h" },
	/* clang 14 */
	{ "drivers/net/bar.c:88:16: warning: variable 'ret' is used uninitialized whenever 'if' condition is false [-Wsometimes-uninitialized]",
	  "drivers/net/bar.c:88: warning: variable 'ret' is used uninitialized whenever 'if' condition is false [-Wsometimes-uninitialized]",
	  "drivers/net/bar.c" },
	{ "drivers/foo.c:40:2: error: implicit declaration of function " LQ "frob" RQ " [-Werror=implicit-function-declaration]",
	  "drivers/foo.c:40: error: implicit declaration of function 'frob' [-Werror=implicit-function-declaration]",
	  "drivers/foo.c" },
	{ "drivers/foo.c:3:10: fatal error: linux/nope.h: No such file or directory",
	  "drivers/foo.c:3: fatal error: linux/nope.h: No such file or directory",
	  "drivers/foo.c" },
	/* GNU as: "Error:" counts */
	{ "arch/x86/entry/entry_64.S:120: Error: no such instruction: `frob %rax'",
	  "arch/x86/entry/entry_64.S:120: Error: no such instruction: `frob %rax'",
	  "arch/x86/entry/entry_64.S" },
	/* the last ":line:col" of the first word goes, as with \S+ greedy */
	{ "foo.c:1:2:3:4: warning: odd", "foo.c:1:2:3: warning: odd",
	  "foo.c" },
	/* leading blanks stay (ktest.pl keeps them) */
	{ "  drivers/foo.c:7:1: warning: x", "  drivers/foo.c:7: warning: x",
	  "drivers/foo.c" },
	/* not below srcdir: /home/dev/linux2 is another tree */
	{ SRC "2/drivers/foo.c:1:2: warning: x",
	  SRC "2/drivers/foo.c:1: warning: x", SRC "2/drivers/foo.c" },
	/* the linker and make itself */
	{ "ld: warning: arch/x86/boot/compressed/head_64.o: missing .note.GNU-stack section implies executable stack",
	  "ld: warning: arch/x86/boot/compressed/head_64.o: missing .note.GNU-stack section implies executable stack",
	  "ld" },
	{ "Makefile:12: warning: overriding recipe for target 'all'",
	  "Makefile:12: warning: overriding recipe for target 'all'",
	  "Makefile" },

	/* no warning lines */
	{ "make[2]: *** [scripts/Makefile.build:250: drivers/foo.o] Error 1",
	  NULL, NULL },
	{ "make[1]: *** [Makefile:1992: drivers] Error 2", NULL, NULL },
	{ "make: *** [Makefile:234: __sub-make] Error 2", NULL, NULL },
	{ "In file included from drivers/foo.c:3:", NULL, NULL },
	{ "drivers/foo.c: In function " LQ "foo" RQ ":", NULL, NULL },
	{ "drivers/foo.c:3:12: note: " LQ "error_count" RQ " declared here",
	  NULL, NULL },
	{ "cc1: all warnings being treated as errors", NULL, NULL },
	{ "   12 |         int x;", NULL, NULL },
	{ "      |             ^", NULL, NULL },
	{ "  CC      drivers/foo.o", NULL, NULL },
	{ "WARNING: modpost: vmlinux.o: section mismatch in reference", NULL,
	  NULL },
	{ "warning: no colon before it", NULL, NULL },
	{ "", NULL, NULL },
	/* a second line never counts: a log line ends at its newline */
	{ "foo\nbar.c:1: warning: x", NULL, NULL },
};

static void test_normalize(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(norm_cases) / sizeof(norm_cases[0]); i++) {
		const struct norm_case *c = &norm_cases[i];
		char *got = kp_warning_normalize(c->line, SRC);
		char *file = kp_warning_file(c->line, SRC "/");

		if (!c->want) {
			if (got)
				fail_msg("case %zu: \"%s\" is no warning, got \"%s\"",
					 i, c->line, got);
		} else {
			if (!got || strcmp(got, c->want))
				fail_msg("case %zu: \"%s\"\n want \"%s\"\n got  \"%s\"",
					 i, c->line, c->want,
					 got ? got : "(null)");
		}
		if (c->file)
			assert_string_equal(file, c->file);
		else
			assert_null(file);
		free(got);
		free(file);
	}
}

/*
 * A warnings file made from an O= build in a subdirectory and the log of an
 * in-tree build by another compiler (no column, straight quotes) compare
 * equal; a different line does not.
 */
static void test_normalize_compare(void **state)
{
	char *a = kp_warning_normalize(
		"../drivers/foo.c:12:5: warning: " LQ "x" RQ " defined but not used [-Wunused-variable]\n",
		NULL);
	char *b = kp_warning_normalize(
		SRC "/drivers/foo.c:12:9: warning: 'x' defined but not used [-Wunused-variable]",
		SRC);
	char *c = kp_warning_normalize(
		"drivers/foo.c:13:5: warning: 'x' defined but not used [-Wunused-variable]",
		SRC);

	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	free(a);
	free(b);
	free(c);

	/* no srcdir, an empty one, or "/": nothing to strip but ./ and ../ */
	a = kp_warning_normalize("./a/b.c:1:1: warning: x", "");
	assert_string_equal(a, "a/b.c:1: warning: x");
	free(a);
	a = kp_warning_normalize("/a/b.c:1:1: warning: x", "/");
	assert_string_equal(a, "/a/b.c:1: warning: x");
	free(a);
}

static const char *const touched[] = {
	"drivers/foo.c", "include/linux/foo.h", "Makefile", "bar.c",
};

#define NT (sizeof(touched) / sizeof(touched[0]))

struct blame_case {
	const char *line;
	const char *want;	/* the touched path, or NULL */
};

static const struct blame_case blame_cases[] = {
	{ "drivers/foo.c:12:5: warning: unused variable " LQ "x" RQ " [-Wunused-variable]",
	  "drivers/foo.c" },
	{ SRC "/drivers/foo.c:12:5: warning: unused variable 'x'",
	  "drivers/foo.c" },
	{ "../drivers/foo.c:12:5: warning: unused variable 'x'",
	  "drivers/foo.c" },
	{ "../linux/drivers/foo.c:12:5: warning: unused variable 'x'",
	  "drivers/foo.c" },
	{ "../include/linux/foo.h:3:1: warning: x", "include/linux/foo.h" },
	{ "./include/linux/foo.h:3:1: warning: 'static' is not at beginning of declaration [-Wold-style-declaration]",
	  "include/linux/foo.h" },
	{ "drivers/foo.c:40:2: error: 'frob' undeclared (first use in this function)",
	  "drivers/foo.c" },
	{ "Makefile:12: warning: overriding recipe for target 'all'",
	  "Makefile" },
	{ "bar.c:1:1: warning: x", "bar.c" },

	/* false positives that must not be */
	{ "drivers/afoo.c:1:1: warning: x", NULL },		/* name tail */
	{ "abar.c:1:1: warning: x", NULL },
	{ "drivers/foo.c.orig:1:1: warning: x", NULL },
	{ "drivers/foo.h:1:1: warning: x", NULL },
	{ "foo.c:1:1: warning: x", NULL },		/* a touched tail */
	/* top-level bar.c touched: drivers/bar.c is another file */
	{ "drivers/bar.c:1:1: warning: x", NULL },
	{ SRC "/drivers/bar.c:1:1: warning: x", NULL },
	{ "../drivers/bar.c:1:1: warning: x", NULL },
	{ "../linux/drivers/bar.c:1:1: warning: x", NULL },
	/* outside the tree: the system's header, or another tree */
	{ "/usr/include/linux/foo.h:1:1: warning: x", NULL },
	{ "/elsewhere/linux/drivers/foo.c:12:5: warning: x", NULL },
	{ "../linux2/drivers/foo.c:12:5: warning: x", NULL },
	/* context and notes name the file, but are no warnings */
	{ "In file included from drivers/foo.c:3:", NULL },
	{ "drivers/foo.c: In function " LQ "foo" RQ ":", NULL },
	{ "drivers/foo.c:3:12: note: " LQ "error_count" RQ " declared here",
	  NULL },
	/* a header's warning is the header's */
	{ "include/linux/kernel.h:5:3: warning: x", NULL },
	{ "make[2]: *** [scripts/Makefile.build:250: drivers/foo.o] Error 1",
	  NULL },
	{ "ld: warning: drivers/foo.o: missing .note.GNU-stack section", NULL },
	{ "cc1: all warnings being treated as errors", NULL },
};

static void test_in_touched(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(blame_cases) / sizeof(blame_cases[0]); i++) {
		const struct blame_case *c = &blame_cases[i];
		const char *got = kp_warning_in_touched(c->line, SRC, touched,
							NT);

		if (c->want && (!got || strcmp(got, c->want)))
			fail_msg("case %zu: \"%s\" should blame %s, got %s", i,
				 c->line, c->want, got ? got : "(null)");
		if (!c->want && got)
			fail_msg("case %zu: \"%s\" blamed %s", i, c->line, got);
	}
}

/*
 * "../drivers/foo.c" may be drivers/foo.c (srctree "..") or, by its tail,
 * foo.c: the exact match wins, whatever the order of the touched files.
 */
static void test_in_touched_exact_first(void **state)
{
	const char *t[] = { "foo.c", "drivers/foo.c" };
	const char *k[] = { "sched/core.c", "kernel/sched/core.c" };
	const char *nul[] = { NULL, "", "drivers/foo.c" };
	const char *got;

	got = kp_warning_in_touched("../drivers/foo.c:1:2: warning: x", SRC,
				    t, 2);
	assert_ptr_equal(got, t[1]);
	/* beside the tree: the way down "linux/" goes */
	got = kp_warning_in_touched("../linux/foo.c:1:2: warning: x", SRC,
				    t, 2);
	assert_ptr_equal(got, t[0]);
	/* a tree called kernel, objects inside: kernel/ is the tree's own */
	got = kp_warning_in_touched("../kernel/sched/core.c:9:1: warning: x",
				    "/home/dev/kernel", k, 2);
	assert_ptr_equal(got, k[1]);
	got = kp_warning_in_touched("../kernel/sched/core.c:9:1: warning: x",
				    "/home/dev/kernel", k, 1);
	assert_ptr_equal(got, k[0]);
	/* no srcdir: any "/path" tail of a ../ path, still by components */
	got = kp_warning_in_touched("../linux/drivers/foo.c:1:2: warning: x",
				    NULL, t + 1, 1);
	assert_ptr_equal(got, t[1]);
	assert_null(kp_warning_in_touched("../linux/drivers/afoo.c:1:2: warning: x",
					  NULL, t, 2));
	/* ... but not of a plain or absolute one */
	assert_null(kp_warning_in_touched("linux/drivers/foo.c:1:2: warning: x",
					  NULL, t + 1, 1));
	assert_null(kp_warning_in_touched("/x/drivers/foo.c:1:2: warning: x",
					  NULL, t + 1, 1));

	got = kp_warning_in_touched("drivers/foo.c:1:2: warning: x", SRC,
				    nul, 3);
	assert_ptr_equal(got, nul[2]);
	assert_null(kp_warning_in_touched("drivers/foo.c:1:2: warning: x",
					  SRC, NULL, 0));
	assert_null(kp_warning_in_touched(":1:2: warning: x", SRC, nul, 3));
}

/* ---- warnings the files already had ---- */

static void test_seen(void **state)
{
	const char *old[] = { "old.c" };
	const char *inc[] = { "inc.h" };
	struct kp_seen *s = kp_seen_new();

	/* a clean build: everything is new, as in ktest.pl */
	assert_true(kp_seen_line(s,
		"old.c:5:9: warning: unused variable " LQ "y" RQ " [-Wunused-variable]",
		SRC));
	assert_true(kp_seen_line(s,
		"inc.h:2:12: warning: " LQ "f" RQ " defined but not used [-Wunused-function]",
		SRC));
	assert_false(kp_seen_line(s, "In file included from main.c:1:", SRC));
	assert_false(kp_seen_line(s, "  CC main.o", SRC));
	kp_seen_build_done(s, NULL, 0);

	/*
	 * The commit touches old.c above the warning (it moves to line 7),
	 * from an O= build with another compiler: it is still old.c's own.
	 * It adds one: that one is new.
	 */
	assert_false(kp_seen_line(s,
		"../old.c:7: warning: unused variable 'y' [-Wunused-variable]",
		SRC));
	assert_true(kp_seen_line(s,
		SRC "/old.c:9:6: warning: unused variable " LQ "z" RQ " [-Wunused-variable]",
		SRC));
	/* the header's, once per includer: never new */
	assert_false(kp_seen_line(s,
		"inc.h:2:12: warning: 'f' defined but not used [-Wunused-function]",
		SRC));
	assert_false(kp_seen_line(s,
		"inc.h:2:12: warning: 'f' defined but not used [-Wunused-function]",
		SRC));
	kp_seen_build_done(s, old, 1);

	/* the same message in another file is that file's, and new */
	assert_true(kp_seen_line(s,
		"new.c:5:9: warning: unused variable 'y' [-Wunused-variable]",
		SRC));
	/* a failed build that never got to old.c forgets nothing */
	kp_seen_build_done(s, NULL, 0);
	assert_false(kp_seen_line(s,
		"old.c:9:6: warning: unused variable 'z' [-Wunused-variable]",
		SRC));
	/* a file in a log was built: what it said is all it has now */
	kp_seen_build_done(s, NULL, 0);
	assert_true(kp_seen_line(s,
		"old.c:7: warning: unused variable 'y' [-Wunused-variable]",
		SRC));
	assert_false(kp_seen_line(s,
		"old.c:9:6: warning: unused variable 'z' [-Wunused-variable]",
		SRC));
	kp_seen_build_done(s, NULL, 0);

	/* old.c fixed: built and silent, it has no past any more */
	kp_seen_build_done(s, old, 1);
	assert_true(kp_seen_line(s,
		"old.c:9:6: warning: unused variable 'z' [-Wunused-variable]",
		SRC));
	/*
	 * inc.h touched but warned again through an includer: its warnings
	 * are this build's, not wiped
	 */
	assert_false(kp_seen_line(s,
		"inc.h:2:12: warning: 'f' defined but not used [-Wunused-function]",
		SRC));
	kp_seen_build_done(s, inc, 1);
	assert_false(kp_seen_line(s,
		"inc.h:2:12: warning: 'f' defined but not used [-Wunused-function]",
		SRC));
	kp_seen_build_done(s, NULL, 0);

	/* lines with no line number, and the linker's */
	assert_true(kp_seen_line(s,
		"ld: warning: x.o: missing .note.GNU-stack section",
		NULL));
	kp_seen_build_done(s, NULL, 0);
	assert_false(kp_seen_line(s,
		"ld: warning: x.o: missing .note.GNU-stack section",
		NULL));
	assert_true(kp_seen_line(s,
		"ld: warning: y.o: missing .note.GNU-stack section",
		NULL));
	/* left open: kp_seen_free frees the build going on too */
	kp_seen_free(s);
	kp_seen_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_steps),
		cmocka_unit_test(test_boot_and_test_steps),
		cmocka_unit_test(test_noclean),
		cmocka_unit_test(test_one_and_none),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_warnings_file),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_skip_first_and_all),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_go_on),
		cmocka_unit_test(test_stop_at_first),
		cmocka_unit_test(test_late_failures),
		cmocka_unit_test(test_boot_and_test_failures),
		cmocka_unit_test(test_next_repeats),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_random_series),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_normalize_compare),
		cmocka_unit_test(test_in_touched),
		cmocka_unit_test(test_in_touched_exact_first),
		cmocka_unit_test(test_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
