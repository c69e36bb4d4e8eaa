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

int kflaky_needed(const struct kflaky *f)
{
	double p = kflaky_rate(f), eps, g, c;
	int k = f->steps_left + 1;	/* the goods to come, and this one */

	if (!f->flaky)
		return f->p.tries;
	if (!f->all_runs)
		return f->p.max_tries;	/* no rate yet: as sure as allowed */
	if (p >= 1.0)
		return 1;
	/* what the goods so far left of the target, shared by those to come */
	c = f->p.confidence / kflaky_confidence(f);
	if (c >= 1.0)
		return f->p.max_tries;
	eps = 1.0 - pow(c, 1.0 / k);
	g = ceil(log(eps) / log(1.0 - p));
	if (g < 1)
		g = 1;
	if (g > f->p.max_tries)
		g = f->p.max_tries;
	return (int)g;
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
	case KFL_UNTESTABLE:
		r->untestable++;
		/* a build break does not mend itself: no second run */
		if (!r->pass && !r->fail)
			return KFL_SKIP;
		break;
	}
	runs = r->pass + r->fail + r->untestable;
	if (r->measure && runs < f->p.tries && runs < f->p.max_tries)
		return KFL_MORE;
	if (r->fail)
		return KFL_BAD;
	if (!f->flaky || r->measure)
		return runs < f->p.tries ? KFL_MORE : r->pass ? KFL_GOOD : KFL_SKIP;
	if (r->pass < kflaky_needed(f) && runs < f->p.max_tries)
		return KFL_MORE;
	return r->pass ? KFL_GOOD : KFL_SKIP;
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
	} else if (d == KFL_GOOD) {
		f->good_runs[r->pass > KFL_MAX_RUNS ? KFL_MAX_RUNS : r->pass]++;
		f->goods++;
	}
}

double kflaky_confidence(const struct kflaky *f)
{
	double p = kflaky_rate(f), c = 1.0;

	if (!f->flaky)
		return 1.0;
	for (int g = 0; g <= KFL_MAX_RUNS; g++)
		if (f->good_runs[g])
			c *= pow(1.0 - pow(1.0 - p, g), f->good_runs[g]);
	return c;
}
