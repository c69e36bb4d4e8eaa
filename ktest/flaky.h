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
 * good verdicts of 1 - P(at most f in n), with the final p; a verified
 * answer also counts the verification's runs of its good side (below).
 */
#ifndef KTEST_FLAKY_H
#define KTEST_FLAKY_H

#include <stdbool.h>
#include <stddef.h>

#define KFL_MAX_RUNS 100	/* runs of one commit, at most */
#define KFL_MAX_FAILS 10	/* BISECT_FLAKY_FAILURES, at most */
#define KFL_MAX_CHECKS 8	/* the verification's checks, at most */

/*
 * A run: the failure seen or not, the commit could not be tested (a build
 * break: no second run), or another failure than the one bisected
 * (BISECT_SAME_CRASH: it hid whether the failure is there; the commit runs
 * again, up to max_tries)
 */
enum kfl_run { KFL_PASS, KFL_FAIL, KFL_UNTESTABLE, KFL_OTHER };
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
	int pass, fail, untestable, other;
	bool measure;		/* the bad commit's check: all tries runs */
	bool check;		/* the verification's check of the good side */
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
	int checks;		/* the verification's good checks */
	struct { int fail, n; } check[KFL_MAX_CHECKS];
};

void kflaky_init(struct kflaky *f, const struct kfl_policy *p);

/* How many steps the bisect expects still: sizes eps for later goods. */
void kflaky_set_steps(struct kflaky *f, int steps_left);

/* The outcome of one more run, and whether to run again. */
enum kfl_decision kflaky_add(struct kflaky *f, struct kfl_runs *r,
			     enum kfl_run run);

/*
 * The most runs the commit can still need, were every run from now a pass
 * (0 once its runs decided): how many may run at once on several boxes.
 * Exact when they all pass; a failure can make it grow.
 */
int kflaky_runs_left(const struct kflaky *f, const struct kfl_runs *r);

/*
 * The runs of one commit on several boxes at once (BOXES). Runs are
 * numbered as they are handed out, and their outcomes come in any order;
 * they count in that order, as far as the outcomes are in, so the commit
 * is decided on the same runs as on one box: a run's outcome never waits
 * on a later one, and a slow failure (a hang) is not outrun by quick
 * passes. No more runs are handed out than the commit can still need were
 * they all to pass, so none is handed past a pass; a run with no outcome
 * when the commit fails (or is skipped) is not needed: stop it.
 */
enum kfl_slot { KFL_S_NONE, KFL_S_RUNNING, KFL_S_IN, KFL_S_COUNTED };

struct kfl_spread {
	struct kfl_runs r;	/* the runs that counted */
	enum kfl_decision d;	/* KFL_MORE until decided */
	int handed;		/* runs 1..handed handed out */
	unsigned char st[KFL_MAX_RUNS + 1];	/* enum kfl_slot, by run */
	unsigned char out[KFL_MAX_RUNS + 1];	/* enum kfl_run, once in */
};

void kfl_spread_init(struct kfl_spread *s, bool measure);

/*
 * The number of the next run to hand out to a free box, or 0: the commit
 * is decided, or as many run as it can still need.
 */
int kfl_spread_next(const struct kflaky *f, struct kfl_spread *s);

/* Run n's outcome: the commit's decision so far (KFL_MORE: not yet). */
enum kfl_decision kfl_spread_in(struct kflaky *f, struct kfl_spread *s,
				int n, enum kfl_run run);

/* Whether run n still runs and is needed (else stop it). */
bool kfl_spread_needed(const struct kfl_spread *s, int n);

/*
 * The decision taken for a commit: it feeds the rate and the confidence.
 * A check (r->check) decided good is the verification's check of the
 * answer's good side: the parents of the first bad commit (or, in a
 * reverse bisect, the first good commit itself) decided good again, in
 * runs of their own. Were the answer wrong, that commit would be bad: the
 * answer would have to be wrong and a bad commit pass these runs too, so
 * the chance of a wrong answer is the bisect's times the check's (the
 * largest check's, of a merge's parents). It is not one of the goods.
 */
void kflaky_record(struct kflaky *f, const struct kfl_runs *r,
		   enum kfl_decision d);

/*
 * A good verdict taken back (r: the runs it was given on): it is no longer
 * one of the goods. failed: the commit has shown the failure since (the
 * verification's runs of it failed), so the runs it passed were a failing
 * commit's, and count toward the rate.
 */
void kflaky_forget(struct kflaky *f, const struct kfl_runs *r, bool failed);
/* The answer the checks verified is dropped: so are the checks. */
void kflaky_forget_checks(struct kflaky *f);

/* Clean runs a good verdict needs now (1 when the runs are not flaky). */
int kflaky_needed(const struct kflaky *f);
/* Runs a good verdict needs now for a commit that failed fails times. */
int kflaky_needed_with(const struct kflaky *f, int fails);
/*
 * Runs the verification's check needs: as sure as a good verdict's share
 * of the target, whatever the goods spent of it (then the answer reaches
 * the target with the check counted, however far below it the goods are).
 */
int kflaky_needed_check(const struct kflaky *f, int fails);

/* P(at most fails failures in n runs) for a failure of rate p. */
double kflaky_miss(double p, int n, int fails);

/* The failure's rate where present: as measured (1 when none yet)... */
double kflaky_measured(const struct kflaky *f);
/* ... and on the low side, as the decisions use it (Wilson, 1 sigma). */
double kflaky_rate(const struct kflaky *f);

/*
 * The answer's confidence so far: 1 unless flaky. The product over the
 * good verdicts of 1 - P(at most f in n), c; with checks,
 * 1 - (1 - c) * the largest check's P(at most f in n).
 */
double kflaky_confidence(const struct kflaky *f);
/* Its parts: the good verdicts' product, the largest check's chance (1: none) */
double kflaky_goods_confidence(const struct kflaky *f);
double kflaky_check_miss(const struct kflaky *f);

#endif
