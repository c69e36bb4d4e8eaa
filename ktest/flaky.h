/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Flaky-aware verdicts for a bisect: how many runs a commit gets, what
 * they add up to, and how much the answer can be trusted. Pure: fed the
 * outcome of each run (the failure seen, not seen, or the commit could not
 * be tested), it says "run again" or the commit's verdict.
 *
 * Plain (ktest.pl's BISECT_TRIES): up to tries runs, the first failure
 * makes the commit fail; only skips make a skip.
 *
 * Flaky (BISECT_FLAKY, or a commit that flipped under BISECT_TRIES > 1),
 * after syzkaller's bisection: a failure seen fails times (1 unless
 * BISECT_FLAKY_FAILURES says more) is the failure (the commit is bad); a
 * commit is good only after enough runs that the failure, at the rate it
 * shows where it is present, would have shown that often: P(at most f
 * failures in n runs) <= eps, for the f failures it had (f = 0: (1 - p)^n),
 * where p is the rate measured so far (failing runs over all runs of
 * failing commits: the bad commit is run tries times first to measure it)
 * and eps is what the answer's target confidence leaves each good verdict.
 * A commit with some failures, too few, that reaches max_tries without
 * that is a skip. The confidence of the answer is the product over the
 * good verdicts of 1 - P(at most f in n), with the final p.
 */
#ifndef KTEST_FLAKY_H
#define KTEST_FLAKY_H

#include <stdbool.h>
#include <stddef.h>

#define KFL_MAX_RUNS 100	/* runs of one commit, at most */
#define KFL_MAX_FAILS 10	/* BISECT_FLAKY_FAILURES, at most */

enum kfl_run { KFL_PASS, KFL_FAIL, KFL_UNTESTABLE };
enum kfl_decision { KFL_MORE, KFL_GOOD, KFL_BAD, KFL_SKIP };

struct kfl_policy {
	int tries;		/* BISECT_TRIES: runs (flaky: the bad's runs) */
	bool flaky;		/* BISECT_FLAKY */
	int max_tries;		/* at most this many runs of one commit */
	double confidence;	/* target for the answer, 0 < c < 1 */
	int fails;		/* flaky: failing runs that make a commit bad */
};

/* The runs of one commit so far. */
struct kfl_runs {
	int pass, fail, untestable;
	bool measure;		/* the bad commit's check: all tries runs */
};

struct kflaky {
	struct kfl_policy p;
	bool flaky;		/* on, by the policy or since a commit flipped */
	bool flipped;		/* a commit gave both outcomes */
	long fail_runs;		/* runs that failed on failing commits */
	long all_runs;		/* every run of the failing commits */
	int goods;		/* good verdicts */
	/* goods by their failing runs and all their runs */
	int good_runs[KFL_MAX_FAILS][KFL_MAX_RUNS + 1];
	int steps_left;		/* estimate of good verdicts still to come */
};

void kflaky_init(struct kflaky *f, const struct kfl_policy *p);

/* How many steps the bisect expects still: sizes eps for later goods. */
void kflaky_set_steps(struct kflaky *f, int steps_left);

/* The outcome of one more run, and whether to run again. */
enum kfl_decision kflaky_add(struct kflaky *f, struct kfl_runs *r,
			     enum kfl_run run);

/* The decision taken for a commit: it feeds the rate and the confidence. */
void kflaky_record(struct kflaky *f, const struct kfl_runs *r,
		   enum kfl_decision d);

/* Clean runs a good verdict needs now (1 when the runs are not flaky). */
int kflaky_needed(const struct kflaky *f);
/* Runs a good verdict needs now for a commit that failed fails times. */
int kflaky_needed_with(const struct kflaky *f, int fails);

/* P(at most fails failures in n runs) for a failure of rate p. */
double kflaky_miss(double p, int n, int fails);

/* The failure's rate where present: as measured (1 when none yet)... */
double kflaky_measured(const struct kflaky *f);
/* ... and on the low side, as the decisions use it (Wilson, 1 sigma). */
double kflaky_rate(const struct kflaky *f);

/* The answer's confidence so far: 1 unless flaky. */
double kflaky_confidence(const struct kflaky *f);

#endif
