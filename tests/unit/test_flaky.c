// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flaky-aware verdicts (ktest/flaky.c): the plain BISECT_TRIES rule,
 * the runs a good verdict needs, the rate and the confidence, and bisects
 * of simulated histories whose failure shows in a fraction of the runs:
 * with the flaky policy the answer is right at least as often as its
 * confidence says, and far more often than with one run per commit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ktest/flaky.h"

static struct kflaky fl;

static void init_fails(int tries, bool flaky, int max, double conf, int fails)
{
	struct kfl_policy p = { .tries = tries, .flaky = flaky,
				.max_tries = max, .confidence = conf,
				.fails = fails };

	kflaky_init(&fl, &p);
}

static void init(int tries, bool flaky, int max, double conf)
{
	init_fails(tries, flaky, max, conf, 1);
}

static void test_plain_one_run(void **state)
{
	struct kfl_runs r = { 0 };

	init(1, false, 0, 0);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_UNTESTABLE), KFL_SKIP);
	assert_true(kflaky_confidence(&fl) == 1.0);
}

/* ktest.pl's BISECT_TRIES: all runs pass, or the first failure decides */
static void test_plain_tries(void **state)
{
	struct kfl_runs r = { 0 };

	init(3, false, 0, 0);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
	kflaky_record(&fl, &r, KFL_GOOD);
	assert_false(fl.flaky);

	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	assert_false(fl.flipped);
	assert_true(kflaky_measured(&fl) == 1.0);
	/* one failing run in one: 1/2 on the low side */
	assert_true(fabs(kflaky_rate(&fl) - 0.5) < 1e-9);
}

/* a commit that passes and then fails turns the flaky policy on */
static void test_flip_turns_flaky(void **state)
{
	struct kfl_runs r = { 0 };

	init(2, false, 20, 0.9);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	assert_true(fl.flipped);
	assert_true(fl.flaky);
	assert_true(fabs(kflaky_measured(&fl) - 0.5) < 1e-9);
	assert_true(kflaky_rate(&fl) < 0.5);
	/* a good now needs more than the 2 tries */
	kflaky_set_steps(&fl, 3);
	assert_true(kflaky_needed(&fl) > 2);
}

/* untestable runs among real ones are not verdicts */
static void test_untestable_among_runs(void **state)
{
	struct kfl_runs r = { 0 };

	init(3, false, 0, 0);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_UNTESTABLE), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
}

/*
 * A run that failed otherwise (BISECT_SAME_CRASH) counts neither way: one
 * run a commit, it is a skip; a flaky commit runs again, its runs still
 * capped by max_tries, and it is not a skip at once as a build break is;
 * it does not feed the rate
 */
static void test_other_failure(void **state)
{
	struct kfl_runs r = { 0 }, m = { .measure = true };
	int need, k;

	(void)state;
	init(1, false, 0, 0);
	assert_int_equal(kflaky_add(&fl, &r, KFL_OTHER), KFL_SKIP);

	init(4, true, 12, 0.9);
	for (k = 0; k < 4; k++)
		kflaky_add(&fl, &m, k == 1 ? KFL_OTHER : k & 1 ? KFL_PASS : KFL_FAIL);
	assert_int_equal(m.other, 1);
	kflaky_record(&fl, &m, KFL_BAD);
	assert_int_equal(fl.fail_runs, 2);
	assert_int_equal(fl.all_runs, 3);
	need = kflaky_needed(&fl);
	assert_true(need > 1 && need < 11);
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_OTHER), KFL_MORE);
	assert_int_equal(kflaky_runs_left(&fl, &r), need);
	for (k = 0; k < need - 1; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
	assert_int_equal(r.pass + r.other, need + 1);
	/* nothing but other failures: a skip at max_tries */
	memset(&r, 0, sizeof(r));
	for (k = 0; k < 11; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_OTHER), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_OTHER), KFL_SKIP);
}

/* the bad commit's check runs all tries, to measure the rate */
static void test_measure(void **state)
{
	struct kfl_runs r = { .measure = true };
	int k;

	init(10, true, 20, 0.9);
	for (k = 0; k < 9; k++)
		assert_int_equal(kflaky_add(&fl, &r, k % 2 ? KFL_FAIL : KFL_PASS),
				 KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	assert_true(fabs(kflaky_measured(&fl) - 0.5) < 1e-9);
	/* Wilson's lower end, 1 sigma: (0.5 + 0.05 - sqrt(0.025 + 0.0025)) / 1.1 */
	assert_true(fabs(kflaky_rate(&fl) - (0.55 - sqrt(0.0275)) / 1.1) < 1e-9);

	/* a bad commit that never fails in its runs tested good */
	init(4, true, 20, 0.9);
	memset(&r, 0, sizeof(r));
	r.measure = true;
	for (k = 0; k < 3; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
}

/* (1 - p)^g <= 1 - C^(1/k) with p on the low side: 5 steps to come, k 6 */
static void test_needed(void **state)
{
	struct kfl_runs r = { .measure = true };
	double p, g;
	int k, want;

	init(4, true, 50, 0.9);
	assert_int_equal(kflaky_needed(&fl), 50);	/* no rate yet */
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	kflaky_set_steps(&fl, 5);
	p = kflaky_rate(&fl);
	g = ceil(log(1 - pow(0.9, 1.0 / 6)) / log(1 - p));
	want = (int)g;
	assert_int_equal(kflaky_needed(&fl), want);
	assert_true(want > 6);	/* more than the measured 0.5 would ask */
	memset(&r, 0, sizeof(r));
	for (k = 0; k < want - 1; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
	kflaky_record(&fl, &r, KFL_GOOD);
	assert_true(fabs(kflaky_confidence(&fl) - (1 - pow(1 - p, want))) < 1e-9);
	/* the next good has less of the target left to spend */
	assert_true(kflaky_needed(&fl) >= want);

	/* capped by max_tries */
	init(2, true, 4, 0.999999);
	memset(&r, 0, sizeof(r));
	r.measure = true;
	kflaky_add(&fl, &r, KFL_PASS);
	kflaky_add(&fl, &r, KFL_FAIL);
	kflaky_record(&fl, &r, KFL_BAD);
	assert_int_equal(kflaky_needed(&fl), 4);
}

/* P(at most f failures in n runs), against the sums written out */
static void test_miss(void **state)
{
	(void)state;
	assert_true(fabs(kflaky_miss(0.5, 4, 0) - 0.0625) < 1e-12);
	/* (1-p)^5 + 5 p (1-p)^4 at p 0.3 */
	assert_true(fabs(kflaky_miss(0.3, 5, 1) -
			 (pow(0.7, 5) + 5 * 0.3 * pow(0.7, 4))) < 1e-12);
	/* + C(6,2) p^2 (1-p)^4 at p 0.2, n 6 */
	assert_true(fabs(kflaky_miss(0.2, 6, 2) -
			 (pow(0.8, 6) + 6 * 0.2 * pow(0.8, 5) +
			  15 * 0.04 * pow(0.8, 4))) < 1e-12);
	assert_true(kflaky_miss(0.4, 3, 3) == 1.0);	/* every outcome */
	assert_true(kflaky_miss(1.0, 3, 1) == 0.0);	/* it always fails */
}

/*
 * BISECT_FLAKY_FAILURES = 2: one failure does not make a commit bad; a
 * second does; a commit that failed once is good after the runs that make
 * a second failure unlikely enough, more than with no failure; one that
 * reaches max_tries short of that cannot be told (skip)
 */
static void test_two_failures(void **state)
{
	struct kfl_runs r = { .measure = true };
	int k, clean, with_one;

	(void)state;
	init_fails(8, true, 60, 0.9, 2);
	/* the bad commit's measurement: 6 failures in 8 */
	for (k = 0; k < 7; k++)
		assert_int_equal(kflaky_add(&fl, &r, k < 2 ? KFL_PASS : KFL_FAIL),
				 KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	kflaky_set_steps(&fl, 3);

	/* one failure is not enough, a second one is */
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_BAD);
	/* (not recorded: the rate stays the measurement's) */

	clean = kflaky_needed(&fl);
	with_one = kflaky_needed_with(&fl, 1);
	assert_true(with_one > clean);
	assert_true(kflaky_miss(kflaky_rate(&fl), with_one, 1) <=
		    1 - pow(0.9, 1.0 / 4));
	assert_true(kflaky_miss(kflaky_rate(&fl), with_one - 1, 1) >
		    1 - pow(0.9, 1.0 / 4));
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	for (k = 0; k < with_one - 2; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_GOOD);
	kflaky_record(&fl, &r, KFL_GOOD);
	/* its share of the confidence is that of one failure in with_one */
	assert_true(fabs(kflaky_confidence(&fl) -
			 (1 - kflaky_miss(kflaky_rate(&fl), with_one, 1))) < 1e-9);

	/* short of it at max_tries: skip */
	init_fails(2, true, 6, 0.999, 2);
	memset(&r, 0, sizeof(r));
	r.measure = true;
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_BAD);
	kflaky_record(&fl, &r, KFL_BAD);
	memset(&r, 0, sizeof(r));
	assert_int_equal(kflaky_add(&fl, &r, KFL_FAIL), KFL_MORE);
	for (k = 0; k < 4; k++)
		assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_SKIP);
}

/*
 * The verification's check of the answer's good side: a wrong answer had
 * to pass it too, so the chance of one is the bisect's times the check's
 * (the largest check's, of a merge's parents); the check does not change
 * what the bisect's goods need, and a check that fails feeds the rate.
 * Its runs are a good's share of the target, also when the goods are far
 * below it (a good would then need every run it may have).
 */
static void test_check(void **state)
{
	struct kfl_runs r = { .measure = true }, g = { 0 };
	struct kfl_runs c = { .check = true };
	double p, bis, c1, c2, share;
	int need, k;

	(void)state;
	init(4, true, 50, 0.9);
	kflaky_add(&fl, &r, KFL_FAIL);
	kflaky_add(&fl, &r, KFL_PASS);
	kflaky_add(&fl, &r, KFL_FAIL);
	kflaky_add(&fl, &r, KFL_PASS);
	kflaky_record(&fl, &r, KFL_BAD);
	g.pass = 3;
	kflaky_record(&fl, &g, KFL_GOOD);
	p = kflaky_rate(&fl);
	bis = kflaky_confidence(&fl);
	assert_true(fabs(bis - (1 - pow(1 - p, 3))) < 1e-12);
	assert_true(bis < 0.9);

	/* the goods are below the target: a good needs all 50 runs, ... */
	kflaky_set_steps(&fl, 2);
	assert_int_equal(kflaky_needed(&fl), 50);
	/* ... the check a good's share of it, 1 - 0.9^(1/3) */
	share = 1 - pow(0.9, 1.0 / 3);
	need = kflaky_needed_check(&fl, 0);
	assert_true(need < 50);
	assert_true(pow(1 - p, need) <= share);
	assert_true(pow(1 - p, need - 1) > share);
	for (k = 0; k < need - 1; k++)
		assert_int_equal(kflaky_add(&fl, &c, KFL_PASS), KFL_MORE);
	assert_int_equal(kflaky_add(&fl, &c, KFL_PASS), KFL_GOOD);
	assert_int_equal(kflaky_runs_left(&fl, &c), 0);
	kflaky_record(&fl, &c, KFL_GOOD);
	c1 = kflaky_confidence(&fl);
	assert_true(fabs(c1 - (1 - (1 - bis) * pow(1 - p, need))) < 1e-12);
	assert_true(c1 >= 0.9);
	assert_int_equal(kflaky_needed(&fl), 50);
	assert_int_equal(fl.goods, 1);

	/* a merge's second parent, fewer runs and a failure: it counts */
	c.pass = 3;
	c.fail = 1;
	kflaky_record(&fl, &c, KFL_GOOD);
	c2 = kflaky_confidence(&fl);
	assert_true(fabs(c2 - (1 - (1 - bis) * kflaky_miss(p, 4, 1))) < 1e-12);
	assert_true(c2 < c1);

	/* a check decided bad is a failing commit's runs: the rate */
	c.pass = 1;
	c.fail = 3;
	kflaky_record(&fl, &c, KFL_BAD);
	assert_int_equal(fl.fail_runs, 5);
	assert_int_equal(fl.all_runs, 8);
	assert_int_equal(fl.checks, 2);

	/* not flaky: 1 whatever the checks */
	init(1, false, 1, 0.9);
	c.pass = 1;
	c.fail = 0;
	kflaky_record(&fl, &c, KFL_GOOD);
	assert_true(kflaky_confidence(&fl) == 1.0);
}

/* ---- several boxes: how many runs at once, and in which order they count ---- */

static uint64_t rng;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ull << 53);
}

/* a random policy, and for a flaky one a measured bad commit before */
static void random_policy(void)
{
	int tries = 1 + (int)(uniform() * 12);
	int max = tries + (int)(uniform() * 30);
	bool flaky = uniform() < 0.7;
	int fails = 1 + (int)(uniform() * 3);

	init_fails(tries, flaky, max, 0.8 + uniform() * 0.19, fails);
	if (flaky) {
		struct kfl_runs m = { .measure = true };
		double q = 0.2 + uniform() * 0.8;
		enum kfl_decision d;

		do
			d = kflaky_add(&fl, &m, uniform() < q ? KFL_FAIL : KFL_PASS);
		while (d == KFL_MORE);
		kflaky_record(&fl, &m, d);
		kflaky_set_steps(&fl, (int)(uniform() * 8));
	}
}

static enum kfl_run random_run(double q)
{
	double u = uniform();

	return u < 0.08 ? KFL_UNTESTABLE : u < q ? KFL_FAIL : KFL_PASS;
}

/* runs_left is what all passes from now take to decide, 0 once decided */
static void test_runs_left(void **state)
{
	(void)state;
	rng = 0x1234567;
	for (int c = 0; c < 5000; c++) {
		struct kfl_runs r = { .measure = uniform() < 0.2 };
		enum kfl_decision d = KFL_MORE;
		int prefix = (int)(uniform() * 6), left;

		random_policy();
		for (int k = 0; k < prefix && d == KFL_MORE; k++)
			d = kflaky_add(&fl, &r, random_run(0.3));
		left = kflaky_runs_left(&fl, &r);
		if (d != KFL_MORE) {
			assert_int_equal(left, 0);
			continue;
		}
		assert_true(left >= 1);
		for (int k = 0; k < left - 1; k++)
			assert_int_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
		assert_int_not_equal(kflaky_add(&fl, &r, KFL_PASS), KFL_MORE);
	}
}

/*
 * One commit's runs on `boxes` boxes (8 at most) through kfl_spread (s
 * initialised): run n's outcome is outcome(n, ctx), asked when the run is
 * handed out; a run takes lo + span * uniform(), a failing one fail_len
 * times that. While undecided, every run going is needed. Returns the
 * time to the decision; *first: the first run whose outcome came in;
 * *ended: one more for each run that ended.
 */
static double spread_sim(struct kfl_spread *s, int boxes, double lo,
			 double span, double fail_len,
			 enum kfl_run (*outcome)(int n, void *ctx), void *ctx,
			 int *first, long *ended)
{
	int run[8] = { 0 };
	enum kfl_run out[8];
	double end[8], now = 0;

	while (s->d == KFL_MORE) {
		int b, best = -1;

		for (b = 0; b < boxes; b++) {
			if (run[b])
				continue;
			run[b] = kfl_spread_next(&fl, s);
			if (!run[b])
				break;
			out[b] = outcome(run[b], ctx);
			end[b] = now + (lo + span * uniform()) *
				(out[b] == KFL_FAIL ? fail_len : 1);
		}
		for (b = 0; b < boxes; b++)
			if (run[b] && (best < 0 || end[b] < end[best]))
				best = b;
		assert_true(best >= 0);	/* undecided: something runs */
		now = end[best];
		if (!*first)
			*first = run[best];
		(*ended)++;
		kfl_spread_in(&fl, s, run[best], out[best]);
		run[best] = 0;
		for (b = 0; b < boxes; b++)
			if (run[b] && s->d == KFL_MORE)
				assert_true(kfl_spread_needed(s, run[b]));
	}
	return now;
}

static enum kfl_run preset(int n, void *ctx)
{
	return ((const enum kfl_run *)ctx)[n];
}

/*
 * 1 to 4 boxes, the runs ending in any order (a failure up to 5 times as
 * long as a pass): against kflaky_add's loop on one box, given the same
 * outcome for each run number, the commit is decided on the same runs,
 * the same way; runs past them were handed out only when it failed or was
 * skipped, and never with one box.
 */
static void test_spread_any_order(void **state)
{
	int held = 0, stopped = 0;

	(void)state;
	rng = 4242;
	for (int c = 0; c < 8000; c++) {
		enum kfl_run out[KFL_MAX_RUNS + 1];
		struct kfl_runs r = { .measure = uniform() < 0.2 };
		struct kfl_spread s;
		enum kfl_decision d = KFL_MORE;
		int boxes = 1 + (int)(uniform() * 4);
		double q = uniform(), slow = 1 + uniform() * 4;
		int n1 = 0, first_in = 0;
		long ended = 0;

		random_policy();
		for (int k = 1; k <= KFL_MAX_RUNS; k++)
			out[k] = random_run(q);
		while (d == KFL_MORE)
			d = kflaky_add(&fl, &r, out[++n1]);
		kfl_spread_init(&s, r.measure);
		spread_sim(&s, boxes, 0.5, 1, slow, preset, out, &first_in,
			   &ended);
		assert_true(s.handed <= fl.p.max_tries);
		/* decided on one box's runs, one box's way */
		assert_int_equal(s.d, d);
		assert_memory_equal(&s.r, &r, sizeof(r));
		for (int k = 1; k <= n1; k++)
			assert_int_equal(s.st[k], KFL_S_COUNTED);
		if (d == KFL_GOOD || boxes == 1)
			assert_int_equal(s.handed, n1);
		assert_int_equal(kfl_spread_next(&fl, &s), 0);
		stopped += s.handed - n1;
		/* an earlier run's outcome held the decision back */
		held += first_in != 1;
	}
	printf("any order: %d runs stopped, not needed; %d decisions waited for an earlier run\n",
	       stopped, held);
	assert_true(stopped > 0 && held > 0);
}

/*
 * A good verdict taken back (kflaky_forget): the confidence is as if it had
 * never been given, and with failed, its clean runs count in the rate as
 * a failing commit's; kflaky_forget_checks drops the verification's.
 */
static void test_forget(void **state)
{
	struct kfl_runs bad = { .fail = 3, .pass = 3 }, g1 = { .pass = 5 };
	struct kfl_runs g2 = { .pass = 8 }, c = { .pass = 4, .check = true };
	struct kflaky alone;
	double p;

	(void)state;
	init(4, true, 50, 0.9);
	kflaky_record(&fl, &bad, KFL_BAD);
	kflaky_record(&fl, &g1, KFL_GOOD);
	alone = fl;
	kflaky_record(&fl, &g2, KFL_GOOD);
	kflaky_record(&fl, &c, KFL_GOOD);
	assert_int_equal(fl.goods, 2);
	assert_int_equal(fl.checks, 1);
	assert_true(kflaky_goods_confidence(&fl) < kflaky_goods_confidence(&alone));

	kflaky_forget(&fl, &g2, false);
	kflaky_forget_checks(&fl);
	assert_int_equal(fl.goods, 1);
	assert_int_equal(fl.checks, 0);
	assert_true(fabs(kflaky_confidence(&fl) - kflaky_confidence(&alone)) < 1e-12);
	assert_true(kflaky_rate(&fl) == kflaky_rate(&alone));

	/* g1 failed since: its 5 clean runs were a failing commit's */
	kflaky_forget(&fl, &g1, true);
	assert_int_equal(fl.goods, 0);
	assert_int_equal(fl.fail_runs, 3);
	assert_int_equal(fl.all_runs, 11);
	p = kflaky_measured(&fl);
	assert_true(fabs(p - 3.0 / 11) < 1e-12);
	assert_true(kflaky_confidence(&fl) == 1.0);
	/* a verdict never given is not taken back */
	kflaky_forget(&fl, &g2, false);
	assert_int_equal(fl.goods, 0);
}

/* ---- simulated bisects ---- */


/* an unrelated failure's rate on every commit (the box's own trouble) */
static double noise;

/*
 * One commit's runs until a decision; commits >= culprit fail at rate p,
 * every commit also at rate noise
 */
/*
 * With sim_boxes > 0, a commit's runs go to that many boxes through
 * kfl_spread: a run takes 0.75 to 1.25 units, a failing one sim_fail_len
 * times that; sim_wall adds up the time to each decision.
 */
static int sim_boxes;
static double sim_fail_len = 1, sim_wall;
static bool sim_check;		/* the verification's check of the parent */
static struct kfl_runs sim_last;	/* the runs of the last commit judged */

static bool sim_fails(int commit, int culprit, double p)
{
	return (commit >= culprit && uniform() < p) || uniform() < noise;
}

struct sim_commit {
	int commit, culprit;
	double p;
};

static enum kfl_run sim_outcome(int n, void *ctx)
{
	const struct sim_commit *c = ctx;

	(void)n;
	return sim_fails(c->commit, c->culprit, c->p) ? KFL_FAIL : KFL_PASS;
}

static enum kfl_decision judge_boxes(int commit, int culprit, double p,
				     bool measure, long *runs)
{
	struct sim_commit c = { commit, culprit, p };
	struct kfl_spread s;
	int first = 0;

	kfl_spread_init(&s, measure);
	s.r.check = sim_check;
	sim_wall += spread_sim(&s, sim_boxes, 0.75, 0.5, sim_fail_len,
			       sim_outcome, &c, &first, runs);
	kflaky_record(&fl, &s.r, s.d);
	sim_last = s.r;
	return s.d;
}

static enum kfl_decision judge(int commit, int culprit, double p,
			       bool measure, long *runs)
{
	struct kfl_runs r = { .measure = measure, .check = sim_check };
	enum kfl_decision d;

	if (sim_boxes)
		return judge_boxes(commit, culprit, p, measure, runs);
	do {
		bool fails = sim_fails(commit, culprit, p);

		(*runs)++;
		d = kflaky_add(&fl, &r, fails ? KFL_FAIL : KFL_PASS);
	} while (d == KFL_MORE);
	kflaky_record(&fl, &r, d);
	sim_last = r;
	return d;
}

/*
 * Commits 1..n, 0 good, n bad; the culprit in 1..n. Returns the answer
 * (-1: the bad commit did not fail), its confidence in *conf.
 */
static int fails_needed = 1;
static double sim_target = 0.9;
static bool sim_verify;		/* as BISECT_VERIFY: -2 when it fails */
static bool sim_again;		/* a parent failing the verification: bisect on */
static int sim_agains;		/* how often that happened */

/*
 * as run_bisect.c's verify(): the parent passes, the answer fails again
 * (-3: the parent failed)
 */
static int verify(int hi, int culprit, double p, long *runs)
{
	enum kfl_decision d;

	kflaky_set_steps(&fl, 2);
	sim_check = true;
	d = judge(hi - 1, culprit, p, false, runs);
	sim_check = false;
	if (d != KFL_GOOD)
		return d == KFL_BAD ? -3 : -2;
	kflaky_set_steps(&fl, 1);
	return judge(hi, culprit, p, false, runs) == KFL_BAD ? hi : -2;
}

static int bisect(int n, int culprit, double p, int tries, bool flaky,
		  double *conf, long *runs)
{
	int lo = 0, hi = n, ngood = 0, v;
	/* the good verdicts, in order: each raised lo (as run_bisect.c's passed) */
	struct { int commit; struct kfl_runs r; } good[64];
	enum kfl_decision d;

	init_fails(tries, flaky, 40, sim_target, fails_needed);
	if (flaky && judge(n, culprit, p, true, runs) != KFL_BAD)
		return -1;
again:
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		kflaky_set_steps(&fl, (int)ceil(log2((double)(hi - lo))) +
				 (sim_verify ? 1 : 0));
		d = judge(mid, culprit, p, false, runs);
		if (d == KFL_SKIP)	/* as git bisect skip would, roughly */
			d = judge(mid, culprit, p, false, runs);
		if (d == KFL_SKIP)
			return -1;
		if (d == KFL_BAD) {
			hi = mid;
		} else {
			lo = mid;
			good[ngood].commit = mid;
			good[ngood++].r = sim_last;
		}
	}
	v = sim_verify ? verify(hi, culprit, p, runs) : hi;
	if (v == -3 && sim_again && ngood && good[ngood - 1].commit == hi - 1) {
		/* as run_bisect.c's again(): the parent is bad, its pass wrong */
		sim_agains++;
		kflaky_forget(&fl, &good[--ngood].r, true);
		kflaky_forget_checks(&fl);
		hi = lo;
		lo = ngood ? good[ngood - 1].commit : 0;
		goto again;
	}
	if (v < 0)
		return -2;
	*conf = kflaky_confidence(&fl);
	return hi;
}

static int sim_answered;		/* the last simulate()'s answers */

static void simulate(double p, bool flaky, int tries, int cases,
		     double *right, double *mean_conf, double *mean_runs)
{
	int ok = 0, answered = 0;
	double confs = 0;
	long runs = 0;

	for (int k = 0; k < cases; k++) {
		int n = 8 + (int)(uniform() * 120);
		int culprit = 1 + (int)(uniform() * n);
		double conf = 0;
		int a = bisect(n, culprit, p, tries, flaky, &conf, &runs);

		if (a < 0)
			continue;
		answered++;
		ok += a == culprit;
		confs += conf;
	}
	sim_answered = answered;
	*right = answered ? (double)ok / answered : 0;
	*mean_conf = answered ? confs / answered : 0;
	*mean_runs = (double)runs / cases;
}

static void test_simulated_flaky(void **state)
{
	const double rates[] = { 0.3, 0.5, 0.8 };

	rng = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double right, conf, runs, right1, conf1, runs1;

		simulate(rates[i], true, 10, 2000, &right, &conf, &runs);
		simulate(rates[i], false, 1, 2000, &right1, &conf1, &runs1);
		printf("p %.1f: flaky-aware right %.3f (confidence %.3f, %.1f runs); one run each right %.3f (%.1f runs)\n",
		       rates[i], right, conf, runs, right1, runs1);
		/* right at least as often as the confidence it claims */
		assert_true(right >= 0.9);
		assert_true(right >= conf - 0.02);
		assert_true(conf >= 0.85);
		if (rates[i] <= 0.5)
			assert_true(right > right1 + 0.2);
	}
}

/*
 * BISECT_VERIFY: the answers that pass the verification are right at
 * least as often as the confidence they are given, which counts the
 * check of the parent; higher than without it, as the answers are.
 * A low target and rate, so that wrong answers are many enough to count.
 */
static void test_simulated_verified(void **state)
{
	const double rates[] = { 0.3, 0.5 }, targets[] = { 0.6, 0.9 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		double right, conf, runs, right0, conf0, runs0;

		rng = 0x853c49e6748fea9bull;
		sim_target = targets[i];
		simulate(rates[i], true, 10, 4000, &right0, &conf0, &runs0);
		rng = 0x853c49e6748fea9bull;
		sim_verify = true;
		simulate(rates[i], true, 10, 4000, &right, &conf, &runs);
		sim_verify = false;
		printf("p %.1f, target %.1f: unverified right %.4f (confidence %.4f, %.1f runs); verified right %.4f (confidence %.4f, %.1f runs)\n",
		       rates[i], targets[i], right0, conf0, runs0, right, conf,
		       runs);
		assert_true(right >= conf - 0.005);
		assert_true(conf > conf0);
		assert_true(right > right0);
		assert_true(conf >= targets[i]);
	}
	sim_target = 0.9;
}

/*
 * A parent failing the verification: the bisect goes on below it with that
 * good verdict taken back (run_bisect.c's again()), where it used to give
 * no answer. More bisects answer, and the answers are right at least as
 * often as the confidence they are given (which no longer counts the good
 * taken back).
 */
static void test_simulated_rebisect(void **state)
{
	const double rates[] = { 0.3, 0.5 }, targets[] = { 0.6, 0.9 };

	(void)state;
	sim_verify = true;
	for (size_t i = 0; i < 2; i++) {
		double right, conf, runs, right0, conf0, runs0;
		int answered0;

		rng = 0x2545f4914f6cdd1dull;
		sim_target = targets[i];
		simulate(rates[i], true, 10, 4000, &right0, &conf0, &runs0);
		answered0 = sim_answered;
		rng = 0x2545f4914f6cdd1dull;
		sim_again = true;
		sim_agains = 0;
		simulate(rates[i], true, 10, 4000, &right, &conf, &runs);
		sim_again = false;
		printf("p %.1f, target %.1f: verified %d answers, right %.4f (confidence %.4f, %.1f runs); bisecting on after a parent failed: %d answers (%d turns), right %.4f (confidence %.4f, %.1f runs)\n",
		       rates[i], targets[i], answered0, right0, conf0, runs0,
		       sim_answered, sim_agains, right, conf, runs);
		assert_true(sim_agains > 0);
		assert_true(sim_answered > answered0);
		assert_true(right >= conf - 0.005);
		assert_true(conf >= targets[i]);
	}
	sim_verify = false;
	sim_target = 0.9;
}

/*
 * The box also fails now and then on its own (2 % of all runs): one
 * failure makes a good commit bad and the answer wrong far more often
 * than with BISECT_FLAKY_FAILURES = 2
 */
static void test_simulated_noise(void **state)
{
	double right1, conf1, runs1, right2, conf2, runs2;

	(void)state;
	rng = 0x2545f4914f6cdd1dull;
	noise = 0.02;
	fails_needed = 1;
	simulate(0.5, true, 10, 2000, &right1, &conf1, &runs1);
	fails_needed = 2;
	simulate(0.5, true, 10, 2000, &right2, &conf2, &runs2);
	noise = 0;
	fails_needed = 1;
	printf("p 0.5, noise 0.02: one failure is bad: right %.3f (confidence %.3f, %.1f runs); two: right %.3f (confidence %.3f, %.1f runs)\n",
	       right1, conf1, runs1, right2, conf2, runs2);
	assert_true(right1 < 0.7);
	assert_true(right2 >= 0.8);
	assert_true(right2 > right1 + 0.2);
	fails_needed = 3;
	noise = 0.02;
	simulate(0.5, true, 10, 2000, &right2, &conf2, &runs2);
	printf("three: right %.3f (confidence %.3f, %.1f runs)\n", right2, conf2, runs2);
	assert_true(right2 >= 0.9);
	/* without the noise, two cost runs, not answers */
	noise = 0;
	fails_needed = 2;
	simulate(0.5, true, 10, 2000, &right2, &conf2, &runs2);
	printf("no noise, two: right %.3f (confidence %.3f, %.1f runs)\n", right2, conf2, runs2);
	assert_true(right2 >= 0.95);
	fails_needed = 1;
}

/*
 * Several boxes share each commit's runs: right as often, in less time;
 * also when a failure takes 4 times as long to show as a pass (a hang
 * caught by TIMEOUT).
 */
static void test_simulated_boxes(void **state)
{
	double right[4], conf[4], runs[4], wall[4];

	(void)state;
	for (int slow = 0; slow < 2; slow++) {
		sim_fail_len = slow ? 4 : 1;
		for (int k = 1; k <= 3; k++) {
			rng = 0xfeedfacecafebeefull;
			sim_boxes = k;
			sim_wall = 0;
			simulate(0.5, true, 10, 1000, &right[k], &conf[k], &runs[k]);
			wall[k] = sim_wall / 1000;
			printf("p 0.5, failures %gx as long, %d box%s: right %.3f (confidence %.3f, %.1f runs), time %.1f (%.3f of one box)\n",
			       sim_fail_len, k, k == 1 ? "" : "es", right[k],
			       conf[k], runs[k], wall[k], wall[k] / wall[1]);
			assert_true(right[k] >= 0.9);
			assert_true(right[k] >= conf[k] - 0.03);
		}
		/* the same runs, so about as right; in less time */
		assert_true(fabs(right[2] - right[1]) < 0.03);
		assert_true(wall[2] < 0.65 * wall[1]);
		assert_true(wall[3] < wall[2]);
	}
	sim_boxes = 0;
	sim_fail_len = 1;
}

/* with a failure that always shows, the flaky policy costs one run a commit */
static void test_simulated_solid(void **state)
{
	double right, conf, runs, right1, conf1, runs1;

	rng = 42;
	simulate(1.0, true, 3, 500, &right, &conf, &runs);
	simulate(1.0, false, 1, 500, &right1, &conf1, &runs1);
	assert_true(right == 1.0);
	assert_true(conf >= 0.9);
	assert_true(right1 == 1.0);
	/*
	 * the bad commit's 3 measuring runs, then a few runs a good step: 3
	 * failures in 3 runs do not prove a rate of 1
	 */
	printf("always failing: %.1f runs flaky-aware, %.1f one run each\n",
	       runs, runs1);
	assert_true(runs <= 3 * runs1 + 3.0 + 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_one_run),
		cmocka_unit_test(test_plain_tries),
		cmocka_unit_test(test_flip_turns_flaky),
		cmocka_unit_test(test_untestable_among_runs),
		cmocka_unit_test(test_other_failure),
		cmocka_unit_test(test_measure),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_miss),
		cmocka_unit_test(test_two_failures),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_runs_left),
		cmocka_unit_test(test_spread_any_order),
		cmocka_unit_test(test_simulated_flaky),
		cmocka_unit_test(test_simulated_verified),
		cmocka_unit_test(test_simulated_rebisect),
		cmocka_unit_test(test_simulated_noise),
		cmocka_unit_test(test_simulated_solid),
		cmocka_unit_test(test_simulated_boxes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
