// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config bisect state machine driven by simulated universes of option
 * changes: a hidden set of culprits (one, two, up to five needed together),
 * changes olddefconfig drops when what they depend on is not applied, or
 * forces on through select, flaky candidates that are skipped. Every answer
 * is checked against the universe: applying it fails, and leaving out any
 * one group of it passes. Pure: linked with config_bisect.o and strmap.o.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/config_bisect.h"

#define MAXN 256

/*
 * A universe: n changes; dep[k] >= 0: change k survives olddefconfig only
 * when change dep[k] does (depends on); sel[k] >= 0: change k is forced on
 * when change sel[k] is on (select). Bad when every culprit is on; a
 * candidate holding a flaky change (and not every culprit) is skipped.
 */
struct uni {
	size_t n;
	int dep[MAXN], sel[MAXN];
	bool culprit[MAXN];
	bool flaky[MAXN];
	bool normalise;		/* tell the machine what olddefconfig did */
};

static void uni_init(struct uni *u, size_t n)
{
	memset(u, 0, sizeof(*u));
	u->n = n;
	for (size_t k = 0; k < MAXN; k++)
		u->dep[k] = u->sel[k] = -1;
	u->normalise = true;
}

static void olddefconfig(const struct uni *u, const bool *apply, bool *eff)
{
	bool changed = true;

	memcpy(eff, apply, u->n * sizeof(bool));
	while (changed) {
		changed = false;
		for (size_t k = 0; k < u->n; k++) {
			bool v = eff[k];

			if (u->sel[k] >= 0 && eff[u->sel[k]])
				v = true;
			else if (u->dep[k] >= 0 && !eff[u->dep[k]])
				v = false;
			if (v != eff[k]) {
				eff[k] = v;
				changed = true;
			}
		}
	}
}

static bool is_bad(const struct uni *u, const bool *eff)
{
	for (size_t k = 0; k < u->n; k++)
		if (u->culprit[k] && !eff[k])
			return false;
	return true;
}

static enum kcb_verdict judge(const struct uni *u, const bool *eff)
{
	bool bad = is_bad(u, eff);

	for (size_t k = 0; k < u->n && !bad; k++)
		if (u->flaky[k] && eff[k])
			return KCB_SKIP;
	return bad ? KCB_BAD : KCB_GOOD;
}

struct outcome {
	enum kcb_kind kind;
	size_t tests;
	size_t inferred;
	bool found[MAXN];	/* union of the groups */
	size_t ngroups;
	size_t biggest;		/* the largest group */
	bool groups_ok;		/* applied: bad; any group left out: good */
	const char *why;
};

static size_t count(const bool *v, size_t n)
{
	size_t c = 0;

	for (size_t k = 0; k < n; k++)
		c += v[k];
	return c;
}

static void drive(const struct uni *u, const struct kcb_options *o,
		  struct outcome *out)
{
	struct kcb *m = kcb_new(u->n, o);
	struct kcb_step st;
	const struct kcb_group *g;
	bool eff[MAXN];
	int guard = 0;

	memset(out, 0, sizeof(*out));
	for (;;) {
		kcb_next(m, &st);
		if (st.kind != KCB_TEST)
			break;
		assert_true(++guard < 10000);
		assert_int_equal(st.napply, count(st.apply, u->n));
		olddefconfig(u, st.apply, eff);
		if (u->normalise && !kcb_normalised(m, eff))
			continue;
		kcb_report(m, judge(u, u->normalise ? eff : st.apply));
	}
	out->kind = st.kind;
	out->why = st.why;
	out->tests = kcb_tests(m);
	out->inferred = kcb_inferred(m);
	if (st.kind == KCB_FOUND) {
		bool apply[MAXN] = { false };

		out->ngroups = kcb_culprits(m, &g);
		for (size_t k = 0; k < out->ngroups; k++) {
			if (g[k].n > out->biggest)
				out->biggest = g[k].n;
			for (size_t j = 0; j < g[k].n; j++)
				out->found[g[k].idx[j]] = true;
		}
		memcpy(apply, out->found, sizeof(apply));
		olddefconfig(u, apply, eff);
		out->groups_ok = is_bad(u, eff);
		for (size_t k = 0; k < out->ngroups; k++) {
			memcpy(apply, out->found, sizeof(apply));
			for (size_t j = 0; j < g[k].n; j++)
				apply[g[k].idx[j]] = false;
			olddefconfig(u, apply, eff);
			if (is_bad(u, eff))
				out->groups_ok = false;
		}
		/* the smallest failing config really fails */
		assert_non_null(kcb_minimal_bad(m));
		assert_true(is_bad(u, kcb_minimal_bad(m)));
	} else {
		assert_null(kcb_minimal_bad(m));
	}
	kcb_free(m);
}

static size_t log2up(size_t n)
{
	size_t l = 0;

	while ((size_t)1 << l < n)
		l++;
	return l;
}

/* One culprit, at every position of every size up to 64. */
static void test_one_culprit(void **state)
{
	struct uni u;
	struct outcome o;

	(void)state;
	for (size_t n = 1; n <= 64; n++) {
		for (size_t c = 0; c < n; c++) {
			uni_init(&u, n);
			u.culprit[c] = true;
			drive(&u, NULL, &o);
			assert_int_equal(o.kind, KCB_FOUND);
			assert_int_equal(o.ngroups, 1);
			assert_int_equal(o.biggest, 1);
			assert_true(o.found[c]);
			assert_true(o.groups_ok);
			/* the search, plus one check that it is alone */
			assert_true(o.tests <= log2up(n) + 1);
		}
	}
}

/* Two changes needed together, every pair up to 24. */
static void test_two_culprits(void **state)
{
	struct uni u;
	struct outcome o;

	(void)state;
	for (size_t n = 2; n <= 24; n++) {
		for (size_t a = 0; a < n; a++) {
			for (size_t b = a + 1; b < n; b++) {
				uni_init(&u, n);
				u.culprit[a] = u.culprit[b] = true;
				drive(&u, NULL, &o);
				assert_int_equal(o.kind, KCB_FOUND);
				assert_int_equal(o.ngroups, 2);
				assert_true(o.found[a] && o.found[b]);
				assert_true(o.groups_ok);
				assert_true(o.tests <= 2 * (log2up(n) + 1));
			}
		}
	}
}

static unsigned int rnd(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/*
 * Random universes: up to 200 changes, 1-5 culprits, dependencies and
 * selects (always on earlier changes, as the dependency order puts them),
 * culprits that are only on through a dependency or a select. The answer
 * must be exact on the culprits that olddefconfig does not force, and
 * 1-minimal whatever the structure.
 */
static void test_random_universes(void **state)
{
	unsigned int seed = 42;
	size_t total_tests = 0, total_inferred = 0;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		struct uni u;
		struct outcome o;
		size_t n = 2 + rnd(&seed) % 199;
		size_t k = 1 + rnd(&seed) % 5;
		bool structured = round % 2;

		uni_init(&u, n);
		for (size_t j = 0; j < k; j++)
			u.culprit[rnd(&seed) % n] = true;
		for (size_t j = 1; structured && j < n; j++) {
			unsigned int r = rnd(&seed) % 10;

			if (r < 3)
				u.dep[j] = (int)(rnd(&seed) % j);
			else if (r < 4)
				u.sel[j] = (int)(rnd(&seed) % j);
		}
		drive(&u, NULL, &o);
		assert_int_equal(o.kind, KCB_FOUND);
		assert_true(o.groups_ok);
		assert_int_equal(o.biggest, 1);
		if (!structured) {
			for (size_t j = 0; j < n; j++)
				assert_int_equal(o.found[j], u.culprit[j]);
			assert_true(o.tests <= o.ngroups * (log2up(n) + 1));
		}
		total_tests += o.tests;
		total_inferred += o.inferred;
	}
	/* dependencies make some candidates known without a build */
	assert_true(total_inferred > 0);
	print_message("random universes: %zu builds, %zu answered without one\n",
		      total_tests, total_inferred);
}

/*
 * A culprit only reachable through depends on: C (the culprit) depends on
 * D; both changed. C alone is dropped by olddefconfig, so the answer is
 * both, and C's candidates without D are never built twice.
 */
static void test_through_depends(void **state)
{
	struct uni u;
	struct outcome o;

	(void)state;
	uni_init(&u, 30);
	u.dep[17] = 4;
	u.culprit[17] = true;
	drive(&u, NULL, &o);
	assert_int_equal(o.kind, KCB_FOUND);
	assert_int_equal(o.ngroups, 2);
	assert_true(o.found[17] && o.found[4]);
	assert_true(o.groups_ok);
}

/*
 * A culprit forced on through select: 9 selects 3, 3 is the culprit. 3 on
 * its own is a smaller answer than 9; both are 1-minimal. Ours names 3 (the
 * earlier in dependency order) and never both.
 */
static void test_through_select(void **state)
{
	struct uni u;
	struct outcome o;

	(void)state;
	uni_init(&u, 20);
	u.sel[9] = 3;
	u.culprit[3] = true;
	drive(&u, NULL, &o);
	assert_int_equal(o.kind, KCB_FOUND);
	assert_int_equal(o.ngroups, 1);
	assert_true(o.found[3]);
	assert_false(o.found[9]);
	assert_true(o.groups_ok);
}

/*
 * Without telling the machine what olddefconfig did it still answers (the
 * candidate counts as asked), only with more builds.
 */
static void test_not_normalised(void **state)
{
	struct uni u, v;
	struct outcome o, p;

	(void)state;
	uni_init(&u, 40);
	for (size_t k = 1; k < 40; k += 2)
		u.dep[k] = (int)k - 1;
	u.culprit[33] = true;
	v = u;
	v.normalise = false;
	drive(&u, NULL, &o);
	drive(&v, NULL, &p);
	assert_int_equal(o.kind, KCB_FOUND);
	assert_int_equal(p.kind, KCB_FOUND);
	assert_true(o.groups_ok);
	assert_true(o.found[33] && o.found[32]);
	assert_true(o.tests <= p.tests);
}

/* Flaky changes: skipped candidates are stepped round, never blamed. */
static void test_skips(void **state)
{
	unsigned int seed = 7;
	int grouped = 0;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		struct uni u;
		struct outcome o;
		size_t n = 4 + rnd(&seed) % 60;
		size_t c = rnd(&seed) % n;

		uni_init(&u, n);
		u.culprit[c] = true;
		for (size_t j = 0; j < 1 + rnd(&seed) % 3; j++) {
			size_t f = rnd(&seed) % n;

			if (f != c)
				u.flaky[f] = true;
		}
		drive(&u, NULL, &o);
		assert_int_equal(o.kind, KCB_FOUND);
		/* the culprit is named, alone or in a group of suspects */
		assert_true(o.found[c]);
		assert_true(o.groups_ok);
		if (o.biggest > 1)
			grouped++;
		else
			assert_int_equal(o.ngroups, 1);
	}
	/* some were hidden by skips: those are reported as groups */
	assert_true(grouped > 0);
}

/* Every candidate skipped but the ends: one group of all the suspects. */
static void test_all_skipped(void **state)
{
	struct kcb *m = kcb_new(5, NULL);
	struct kcb_step st;
	const struct kcb_group *g;
	int tests = 0;

	(void)state;
	for (kcb_next(m, &st); st.kind == KCB_TEST; kcb_next(m, &st)) {
		kcb_report(m, KCB_SKIP);
		tests++;
	}
	assert_int_equal(st.kind, KCB_FOUND);
	assert_int_equal(tests, 4);	/* prefixes 1..4 */
	assert_int_equal(kcb_culprits(m, &g), 1);
	assert_int_equal(g[0].n, 5);
	kcb_free(m);
}

static void test_checks(void **state)
{
	struct kcb_options both = { .check_bad = true, .check_good = true };
	struct kcb *m;
	struct kcb_step st;
	struct uni u;
	struct outcome o;

	(void)state;
	/* the bad config passes: stop, ktest.pl's words */
	m = kcb_new(8, &both);
	kcb_next(m, &st);
	assert_int_equal(st.kind, KCB_TEST);
	assert_int_equal(st.purpose, KCB_FOR_CHECK_BAD);
	assert_int_equal(st.napply, 8);
	kcb_report(m, KCB_GOOD);
	kcb_next(m, &st);
	assert_int_equal(st.kind, KCB_FAILED);
	assert_string_equal(st.why, "Bad config succeeded when expected to fail!");
	kcb_free(m);

	/* the good config fails */
	m = kcb_new(8, &both);
	kcb_next(m, &st);
	kcb_report(m, KCB_BAD);
	kcb_next(m, &st);
	assert_int_equal(st.purpose, KCB_FOR_CHECK_GOOD);
	assert_int_equal(st.napply, 0);
	kcb_report(m, KCB_BAD);
	kcb_next(m, &st);
	assert_int_equal(st.kind, KCB_FAILED);
	assert_string_equal(st.why, "Good config failed when expected to succeed!");
	kcb_free(m);

	/* checks cost two builds and change nothing else */
	uni_init(&u, 21);
	u.culprit[13] = true;
	drive(&u, &both, &o);
	assert_int_equal(o.kind, KCB_FOUND);
	assert_true(o.found[13]);
	assert_true(o.tests <= log2up(21) + 1 + 2);
}

static void test_nothing_to_bisect(void **state)
{
	struct kcb *m = kcb_new(0, NULL);
	struct kcb_step st;

	(void)state;
	kcb_next(m, &st);
	assert_int_equal(st.kind, KCB_FAILED);
	assert_non_null(strstr(st.why, "same"));
	kcb_free(m);
}

/* The same verdicts give the same steps (the journal replays them). */
static void test_deterministic(void **state)
{
	struct kcb *a = kcb_new(50, NULL), *b = kcb_new(50, NULL);
	struct kcb_step sa, sb;
	struct uni u;

	(void)state;
	uni_init(&u, 50);
	u.culprit[7] = u.culprit[41] = true;
	for (;;) {
		kcb_next(a, &sa);
		kcb_next(b, &sb);
		assert_int_equal(sa.kind, sb.kind);
		if (sa.kind != KCB_TEST)
			break;
		assert_memory_equal(sa.apply, sb.apply, 50 * sizeof(bool));
		/* asked again before an answer: the same step */
		kcb_next(a, &sa);
		assert_memory_equal(sa.apply, sb.apply, 50 * sizeof(bool));
		kcb_report(a, judge(&u, sa.apply));
		kcb_report(b, judge(&u, sb.apply));
	}
	kcb_free(a);
	kcb_free(b);
}

/* The progress estimate goes down and is never far off. */
static void test_estimate(void **state)
{
	struct kcb *m = kcb_new(100, NULL);
	struct kcb_step st;
	struct uni u;
	int asked = 0, first = -1;

	(void)state;
	uni_init(&u, 100);
	u.culprit[61] = true;
	size_t last = 101;

	for (kcb_next(m, &st); st.kind == KCB_TEST; kcb_next(m, &st)) {
		if (first < 0) {
			first = st.steps;
			assert_int_equal(st.suspects, 100);
		}
		/* the suspects narrow with every answer */
		if (st.purpose == KCB_FOR_SEARCH)
			assert_true(st.suspects < last);
		last = st.suspects;
		asked++;
		kcb_report(m, judge(&u, st.apply));
	}
	/* 7 halvings and the check: 8 tests, the first saying 7 more */
	assert_int_equal(asked, 8);
	assert_int_equal(first, 7);
	kcb_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_culprit),
		cmocka_unit_test(test_two_culprits),
		cmocka_unit_test(test_random_universes),
		cmocka_unit_test(test_through_depends),
		cmocka_unit_test(test_through_select),
		cmocka_unit_test(test_not_normalised),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_all_skipped),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_nothing_to_bisect),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_estimate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
