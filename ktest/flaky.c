// SPDX-License-Identifier: GPL-2.0-only
/*
 * Flaky-aware verdicts for a bisect (see flaky.h): pure arithmetic over
 * the runs of each commit, no I/O.
 */
#include <math.h>
#include <string.h>

#include "ktest/flaky.h"

void kflaky_init(struct kflaky *f, const struct kfl_policy *p)
{
	memset(f, 0, sizeof(*f));
	f->p = *p;
	if (f->p.tries < 1)
		f->p.tries = 1;
	if (f->p.tries > KFL_MAX_RUNS)
		f->p.tries = KFL_MAX_RUNS;
	if (f->p.max_tries < f->p.tries)
		f->p.max_tries = f->p.tries;
	if (f->p.max_tries > KFL_MAX_RUNS)
		f->p.max_tries = KFL_MAX_RUNS;
	if (!(f->p.confidence > 0 && f->p.confidence < 1))
		f->p.confidence = 0.95;
	if (f->p.fails < 1)
		f->p.fails = 1;
	if (f->p.fails > KFL_MAX_FAILS)
		f->p.fails = KFL_MAX_FAILS;
	if (f->p.max_tries < f->p.fails)
		f->p.max_tries = f->p.fails;
	f->flaky = f->p.flaky;
	f->steps_left = 1;
}

void kflaky_set_steps(struct kflaky *f, int steps_left)
{
	f->steps_left = steps_left > 0 ? steps_left : 0;
}

double kflaky_measured(const struct kflaky *f)
{
	return f->all_runs ? (double)f->fail_runs / (double)f->all_runs : 1.0;
}

/*
 * The rate, on the low side: the Wilson score interval's lower end (one
 * standard deviation) of failing runs over all runs of failing commits. A
 * rate measured high would take goods on too few runs; low costs runs.
 */
double kflaky_rate(const struct kflaky *f)
{
	double n = (double)f->all_runs, p, z = 1.0, lo;

	if (!f->all_runs)
		return 1.0;
	p = (double)f->fail_runs / n;
	lo = (p + z * z / (2 * n) -
	      z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n);
	return lo > 0.01 ? lo : 0.01;
}

double kflaky_miss(double p, int n, int fails)
{
	double sum = 0, term = pow(1.0 - p, n);	/* i = 0 */

	if (p >= 1.0)
		return fails >= n ? 1.0 : 0.0;
	for (int i = 0; i <= fails && i <= n; i++) {
		sum += term;
		/* C(n, i+1) p^(i+1) (1-p)^(n-i-1) from C(n, i) p^i (1-p)^(n-i) */
		term *= (double)(n - i) / (double)(i + 1) * p / (1.0 - p);
	}
	return sum < 1.0 ? sum : 1.0;
}

/* The product over the good verdicts (the bisect's own budget) */
double kflaky_goods_confidence(const struct kflaky *f)
{
	double p = kflaky_rate(f), c = 1.0;

	if (!f->flaky)
		return 1.0;
	for (int i = 0; i < KFL_MAX_FAILS; i++)
		for (int n = 0; n <= KFL_MAX_RUNS; n++)
			if (f->good_runs[i][n])
				c *= pow(1.0 - kflaky_miss(p, n, i),
					 f->good_runs[i][n]);
	return c;
}

/*
 * The fewest runs with fails failures that a commit with the failure
 * passes with a chance of eps at most (most: out of reach)
 */
static int runs_for(const struct kflaky *f, int fails, double eps)
{
	double p = kflaky_rate(f);
	int n;

	for (n = fails + 1; n <= f->p.max_tries; n++)
		if (kflaky_miss(p, n, fails) <= eps)
			return n;
	return fails ? f->p.max_tries + 1 : f->p.max_tries;
}

int kflaky_needed_with(const struct kflaky *f, int fails)
{
	double c;
	int k = f->steps_left + 1;	/* the goods to come, and this one */

	/*
	 * Out of reach: max_tries clean runs still pass a commit (with the
	 * confidence it leaves); one that failed is not passed short of it
	 */
	if (!f->flaky)
		return f->p.tries;
	if (!f->all_runs)
		return runs_for(f, fails, -1);	/* no rate yet: as sure as allowed */
	if (kflaky_rate(f) >= 1.0)
		return fails + 1;
	/* what the goods so far left of the target, shared by those to come */
	c = f->p.confidence / kflaky_goods_confidence(f);
	if (c >= 1.0)
		return runs_for(f, fails, -1);
	return runs_for(f, fails, 1.0 - pow(c, 1.0 / k));
}

/*
 * A good's share of the target, whatever the goods spent: that alone takes
 * the answer there, (1 - c) * eps <= eps = 1 - t^(1/k) <= 1 - t
 */
int kflaky_needed_check(const struct kflaky *f, int fails)
{
	if (!f->flaky)
		return f->p.tries;
	if (!f->all_runs)
		return runs_for(f, fails, -1);
	if (kflaky_rate(f) >= 1.0)
		return fails + 1;
	return runs_for(f, fails,
			1.0 - pow(f->p.confidence, 1.0 / (f->steps_left + 1)));
}

/* what a good verdict needs of these runs */
static int needed(const struct kflaky *f, const struct kfl_runs *r, int fails)
{
	return r->check ? kflaky_needed_check(f, fails) :
		kflaky_needed_with(f, fails);
}

int kflaky_needed(const struct kflaky *f)
{
	return kflaky_needed_with(f, 0);
}

enum kfl_decision kflaky_add(struct kflaky *f, struct kfl_runs *r,
			     enum kfl_run run)
{
	int runs;

	switch (run) {
	case KFL_PASS:
		r->pass++;
		break;
	case KFL_FAIL:
		r->fail++;
		break;
	case KFL_OTHER:
		r->other++;
		break;
	case KFL_UNTESTABLE:
		r->untestable++;
		/* a build break does not mend itself: no second run */
		if (!r->pass && !r->fail)
			return KFL_SKIP;
		break;
	}
	runs = r->pass + r->fail + r->untestable + r->other;
	if (r->measure && runs < f->p.tries && runs < f->p.max_tries)
		return KFL_MORE;
	if (!f->flaky || r->measure) {
		if (r->fail)
			return KFL_BAD;
		return runs < f->p.tries ? KFL_MORE : r->pass ? KFL_GOOD : KFL_SKIP;
	}
	if (r->fail >= f->p.fails)
		return KFL_BAD;
	if (!r->fail) {
		if (r->pass < needed(f, r, 0) && runs < f->p.max_tries)
			return KFL_MORE;
		return r->pass ? KFL_GOOD : KFL_SKIP;
	}
	/* failed, but fewer times than the failure needs: the runs decide */
	if (r->pass + r->fail >= needed(f, r, r->fail))
		return KFL_GOOD;
	return runs < f->p.max_tries ? KFL_MORE : KFL_SKIP;
}

int kflaky_runs_left(const struct kflaky *f, const struct kfl_runs *r)
{
	int runs = r->pass + r->fail + r->untestable + r->other, left;

	/* as kflaky_add decides, from the runs so far */
	if (r->untestable && !r->pass && !r->fail)
		return 0;
	if (r->measure) {
		left = f->p.tries - runs;
	} else if (!f->flaky) {
		left = r->fail ? 0 : f->p.tries - runs;
	} else if (r->fail >= f->p.fails) {
		left = 0;
	} else if (!r->fail) {
		left = needed(f, r, 0) - r->pass;
	} else {
		left = needed(f, r, r->fail) - (r->pass + r->fail);
	}
	if (left > f->p.max_tries - runs)
		left = f->p.max_tries - runs;
	return left > 0 ? left : 0;
}

void kfl_spread_init(struct kfl_spread *s, bool measure)
{
	memset(s, 0, sizeof(*s));
	s->r.measure = measure;
	s->d = KFL_MORE;
}

static int counted(const struct kfl_runs *r)
{
	return r->pass + r->fail + r->untestable + r->other;
}

int kfl_spread_next(const struct kflaky *f, struct kfl_spread *s)
{
	if (s->d != KFL_MORE || s->handed >= KFL_MAX_RUNS ||
	    s->handed - counted(&s->r) >= kflaky_runs_left(f, &s->r))
		return 0;
	s->st[++s->handed] = KFL_S_RUNNING;
	return s->handed;
}

static void count(struct kflaky *f, struct kfl_spread *s, int n)
{
	s->st[n] = KFL_S_COUNTED;
	s->d = kflaky_add(f, &s->r, (enum kfl_run)s->out[n]);
}

enum kfl_decision kfl_spread_in(struct kflaky *f, struct kfl_spread *s,
				int n, enum kfl_run run)
{
	int k;

	if (n < 1 || n > s->handed || s->st[n] != KFL_S_RUNNING)
		return s->d;
	s->st[n] = KFL_S_IN;
	s->out[n] = (unsigned char)run;
	if (s->d != KFL_MORE)
		return s->d;
	/* in the order handed out, as far as the outcomes are in */
	for (k = 1; s->d == KFL_MORE && k <= s->handed &&
	     s->st[k] != KFL_S_RUNNING; k++)
		if (s->st[k] == KFL_S_IN)
			count(f, s, k);
	return s->d;
}

bool kfl_spread_needed(const struct kfl_spread *s, int n)
{
	return s->d == KFL_MORE && n >= 1 && n <= s->handed &&
		s->st[n] == KFL_S_RUNNING;
}

/* Where a good verdict on runs r is counted. */
static int *good_slot(struct kflaky *f, const struct kfl_runs *r)
{
	int n = r->pass + r->fail;

	return &f->good_runs[r->fail < KFL_MAX_FAILS ? r->fail : KFL_MAX_FAILS - 1]
			    [n > KFL_MAX_RUNS ? KFL_MAX_RUNS : n];
}

void kflaky_record(struct kflaky *f, const struct kfl_runs *r,
		   enum kfl_decision d)
{
	if (r->pass && r->fail) {
		f->flipped = true;
		f->flaky = true;
	}
	if (d == KFL_BAD) {
		f->fail_runs += r->fail;
		f->all_runs += r->fail + r->pass;
	} else if (d == KFL_GOOD && r->check && f->checks < KFL_MAX_CHECKS) {
		f->check[f->checks].fail = r->fail;
		f->check[f->checks].n = r->pass + r->fail;
		f->checks++;
	} else if (d == KFL_GOOD) {
		(*good_slot(f, r))++;
		f->goods++;
	}
}

void kflaky_forget(struct kflaky *f, const struct kfl_runs *r, bool failed)
{
	int *g = good_slot(f, r);

	if (*g > 0) {
		(*g)--;
		f->goods--;
	}
	if (failed) {
		f->fail_runs += r->fail;
		f->all_runs += r->pass + r->fail;
	}
}

void kflaky_forget_checks(struct kflaky *f)
{
	f->checks = 0;
}

/* a wrong answer passed the checks too: the largest chance of that */
double kflaky_check_miss(const struct kflaky *f)
{
	double p = kflaky_rate(f), worst = 0;

	if (!f->checks)
		return 1.0;
	for (int k = 0; k < f->checks; k++) {
		double m = kflaky_miss(p, f->check[k].n, f->check[k].fail);

		if (m > worst)
			worst = m;
	}
	return worst;
}

double kflaky_confidence(const struct kflaky *f)
{
	if (!f->flaky)
		return 1.0;
	return 1.0 - (1.0 - kflaky_goods_confidence(f)) * kflaky_check_miss(f);
}
