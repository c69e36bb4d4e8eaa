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

static void init(int tries, bool flaky, int max, double conf)
{
	struct kfl_policy p = { .tries = tries, .flaky = flaky,
				.max_tries = max, .confidence = conf };

	kflaky_init(&fl, &p);
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

/* ---- simulated bisects ---- */

static uint64_t rng;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ull << 53);
}

/* one commit's runs until a decision; commits >= culprit fail at rate p */
static enum kfl_decision judge(int commit, int culprit, double p,
			       bool measure, long *runs)
{
	struct kfl_runs r = { .measure = measure };
	enum kfl_decision d;

	do {
		bool fails = commit >= culprit && uniform() < p;

		(*runs)++;
		d = kflaky_add(&fl, &r, fails ? KFL_FAIL : KFL_PASS);
	} while (d == KFL_MORE);
	kflaky_record(&fl, &r, d);
	return d;
}

/*
 * Commits 1..n, 0 good, n bad; the culprit in 1..n. Returns the answer
 * (-1: the bad commit did not fail), its confidence in *conf.
 */
static int bisect(int n, int culprit, double p, int tries, bool flaky,
		  double *conf, long *runs)
{
	int lo = 0, hi = n;

	init(tries, flaky, 40, 0.9);
	if (flaky && judge(n, culprit, p, true, runs) != KFL_BAD)
		return -1;
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		kflaky_set_steps(&fl, (int)ceil(log2((double)(hi - lo))));
		if (judge(mid, culprit, p, false, runs) == KFL_BAD)
			hi = mid;
		else
			lo = mid;
	}
	*conf = kflaky_confidence(&fl);
	return hi;
}

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
		cmocka_unit_test(test_measure),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_simulated_flaky),
		cmocka_unit_test(test_simulated_solid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
