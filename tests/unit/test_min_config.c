// SPDX-License-Identifier: GPL-2.0-only
/*
 * The make_min_config state machine on simulated Kconfig universes
 * (tests/unit/kcsim.h): seeded random option sets with depends, "!"
 * depends, selects and defaults, a start config, and a hidden set of
 * needed options ("culprit !X": the kernel fails when X is off). A small
 * runner here does what ktest/run_min_config.c does: the trial is the
 * start config with the removed and asked candidates "is not set", made
 * by olddefconfig; the machine is told what went off.
 *
 * What is checked, on thousands of cases: the final config passes (no
 * needed option lost); nothing more can be turned off one option at a
 * time (every candidate still on is needed, needed by one that is, or
 * selected); without selects, the options still on are exactly the needed
 * ones and what they depend on; the builds: far fewer than one per option
 * (ktest.pl) when few are needed, at most about one per option plus a few
 * when most are. Pure: linked with min_config.o, kconfig.o and strmap.o.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "ktest/min_config.h"
#include "tests/unit/kcsim.h"

struct universe {
	struct kcsim *u;
	char *text;
	struct kdotconfig start;	/* normalised */
	char **cand;			/* candidates, dependents first */
	size_t ncand;
	bool *needed;			/* per universe option */
	size_t nneeded;
	char **fixed;			/* kept by the runner (IGNORE_CONFIG) */
	size_t nfixed;
};

struct shape {
	size_t nopts;
	unsigned int dep_pct;		/* options with a depends */
	unsigned int neg_pct;		/* of those, a "!" one too */
	unsigned int sel_pct;		/* options that select a later one */
	unsigned int defy_pct;
	unsigned int on_pct;		/* asked y in the start config */
	unsigned int need_pmil;		/* needed: per mille of the enabled */
	unsigned int fixed_pct;		/* enabled options in IGNORE_CONFIG */
};

static void universe_free(struct universe *w)
{
	kcsim_free(w->u);
	free(w->text);
	kdotconfig_free(&w->start);
	for (size_t i = 0; i < w->ncand; i++)
		free(w->cand[i]);
	free(w->cand);
	for (size_t i = 0; i < w->nfixed; i++)
		free(w->fixed[i]);
	free(w->fixed);
	free(w->needed);
}

/*
 * Depends name earlier options and selects later ones, so the universe has
 * no loop and declaration order is dependency order.
 */
static void universe_make(uint64_t seed, const struct shape *sh,
			  struct universe *w)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
	struct sbuf t;
	struct kdotconfig in;
	size_t n = sh->nopts;

	memset(w, 0, sizeof(*w));
	sbuf_init(&t);
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(&t, "config O%zu", i);
		if (i && kcsim_chance(&s, sh->dep_pct)) {
			sbuf_addf(&t, " depends O%zu", kcsim_below(&s, i));
			if (kcsim_chance(&s, 30))
				sbuf_addf(&t, " O%zu", kcsim_below(&s, i));
			if (kcsim_chance(&s, sh->neg_pct))
				sbuf_addf(&t, " !O%zu", kcsim_below(&s, i));
		}
		if (i + 1 < n && kcsim_chance(&s, sh->sel_pct))
			sbuf_addf(&t, " select O%zu",
				  i + 1 + kcsim_below(&s, n - i - 1));
		if (kcsim_chance(&s, sh->defy_pct))
			sbuf_adds(&t, " default y");
		sbuf_addc(&t, '\n');
	}
	kdotconfig_init(&in);
	kdotconfig_init(&w->start);
	w->text = sbuf_detach(&t);
	sbuf_free(&t);
	w->u = kcsim_parse(w->text);
	assert_non_null(w->u);
	for (size_t i = 0; i < n; i++)
		kdotconfig_set(&in, w->u->o[i].name,
			       kcsim_chance(&s, sh->on_pct) ? "y" : NULL);
	kcsim_olddefconfig(w->u, &in, &w->start);
	kdotconfig_free(&in);

	/* needed and fixed among the enabled; candidates: the rest, reversed */
	w->needed = xcalloc(n + 1, sizeof(bool));
	w->cand = xcalloc(n + 1, sizeof(char *));
	w->fixed = xcalloc(n + 1, sizeof(char *));
	sbuf_init(&t);
	sbuf_adds(&t, w->text);
	for (size_t i = n; i-- > 0; ) {
		const char *name = w->u->o[i].name;

		if (!kdotconfig_enabled(&w->start, name))
			continue;
		if (kcsim_below(&s, 1000) < sh->need_pmil) {
			w->needed[i] = true;
			w->nneeded++;
			sbuf_addf(&t, "culprit !%s\n", name);
		}
		if (kcsim_chance(&s, sh->fixed_pct))
			w->fixed[w->nfixed++] = xstrdup(name);
		else
			w->cand[w->ncand++] = xstrdup(name);
	}
	kcsim_free(w->u);
	free(w->text);
	w->text = sbuf_detach(&t);
	sbuf_free(&t);
	w->u = kcsim_parse(w->text);
	assert_non_null(w->u);
	/* the start config passes, as make_min_config assumes */
	assert_false(kcsim_bad(w->u, &w->start));
}

/* The trial: the start config with the flagged candidates not set. */
static void trial(const struct universe *w, const bool *off,
		  struct kdotconfig *out)
{
	struct kdotconfig in;

	kdotconfig_init(&in);
	kdotconfig_merge(&in, &w->start);
	for (size_t k = 0; k < w->ncand; k++)
		if (off[k])
			kdotconfig_set(&in, w->cand[k], NULL);
	kcsim_olddefconfig(w->u, &in, out);
	kdotconfig_free(&in);
}

struct outcome {
	size_t tests, inferred, kept, removed, stuck;
	bool *final_off;		/* the last passing trial's off flags */
	struct kdotconfig final;	/* ... normalised */
	char *trace;			/* every step, for the determinism test */
};

static void outcome_free(struct outcome *o)
{
	free(o->final_off);
	kdotconfig_free(&o->final);
	free(o->trace);
}

/*
 * Runs the machine on w as run_min_config.c would. skip_pmil: that many
 * builds in a thousand answer SKIP instead of their verdict.
 */
static void run(const struct universe *w, const struct kmc_options *opt,
		unsigned int skip_pmil, uint64_t seed, struct outcome *out)
{
	struct kmc *m = kmc_new(w->ncand, opt);
	bool *off = xcalloc(w->ncand + 1, sizeof(bool));
	uint64_t s = seed + 99;
	struct sbuf tr;
	size_t guard = 0;

	memset(out, 0, sizeof(*out));
	kdotconfig_init(&out->final);
	sbuf_init(&tr);
	for (;;) {
		struct kmc_step st;
		struct kdotconfig norm;
		bool lost = false;

		kmc_next(m, &st);
		if (st.kind == KMC_DONE)
			break;
		assert_true(++guard < 20 * w->ncand + 100);
		kdotconfig_init(&norm);
		trial(w, st.off, &norm);
		for (size_t k = 0; k < w->ncand; k++)
			off[k] = !kdotconfig_enabled(&norm, w->cand[k]);
		for (size_t f = 0; f < w->nfixed; f++)
			lost |= !kdotconfig_enabled(&norm, w->fixed[f]);
		sbuf_addf(&tr, "%c%zu:", st.purpose == KMC_FOR_BATCH ? 'B' : 'S',
			  st.nask);
		if (kmc_normalised(m, off, lost)) {
			bool bad = kcsim_bad(w->u, &norm);
			enum kmc_verdict v = bad ? KMC_BAD : KMC_GOOD;

			if (kcsim_below(&s, 1000) < skip_pmil)
				v = KMC_SKIP;
			sbuf_addc(&tr, "gbs"[v]);
			kmc_report(m, v);
		}
		kdotconfig_free(&norm);
	}
	out->tests = kmc_tests(m);
	out->inferred = kmc_inferred(m);
	out->kept = kmc_kept(m);
	out->removed = kmc_removed(m);
	out->stuck = kmc_count(m, KMC_STUCK);
	assert_int_equal(kmc_count(m, KMC_PENDING), 0);
	assert_int_equal(out->kept + out->removed + out->stuck, w->ncand);
	out->final_off = xcalloc(w->ncand + 1, sizeof(bool));
	for (size_t k = 0; k < w->ncand; k++)
		out->final_off[k] = kmc_state(m, k) == KMC_REMOVED;
	trial(w, out->final_off, &out->final);
	out->trace = sbuf_detach(&tr);
	sbuf_free(&tr);
	free(off);
	kmc_free(m);
}

/*
 * How many candidates still on could go one at a time: not one that
 * stays on when asked off (selected), nor one that takes a needed or
 * fixed option along. 0 in universes without "!" depends (turning more
 * off never turns anything on); with them, a kept option can become
 * removable after later removals, and neither ktest.pl nor this machine
 * asks a kept option again.
 */
static size_t removable_left(const struct universe *w, const struct outcome *o)
{
	bool *off = xcalloc(w->ncand + 1, sizeof(bool));
	size_t left = 0;

	for (size_t k = 0; k < w->ncand; k++) {
		struct kdotconfig norm;
		bool lost = false;

		if (!kdotconfig_enabled(&o->final, w->cand[k]))
			continue;
		memcpy(off, o->final_off, w->ncand * sizeof(bool));
		off[k] = true;
		kdotconfig_init(&norm);
		trial(w, off, &norm);
		for (size_t f = 0; f < w->nfixed; f++)
			lost |= !kdotconfig_enabled(&norm, w->fixed[f]);
		if (!kdotconfig_enabled(&norm, w->cand[k]) && !lost &&
		    !kcsim_bad(w->u, &norm))
			left++;
		kdotconfig_free(&norm);
	}
	free(off);
	return left;
}

/* Without selects: on = needed + what they depend on (and the fixed). */
static void assert_exact(const struct universe *w, const struct outcome *o)
{
	size_t n = w->u->n;
	bool *want = xcalloc(n + 1, sizeof(bool));

	for (size_t i = 0; i < n; i++)
		want[i] = w->needed[i];
	for (size_t f = 0; f < w->nfixed; f++) {
		size_t i = 0;

		assert_true(kcsim__find(w->u, w->fixed[f], &i));
		want[i] = true;
	}
	/* depends name earlier options: one pass from the end closes it */
	for (size_t i = n; i-- > 0; )
		for (size_t d = 0; want[i] && d < w->u->o[i].ndep; d++)
			if (!w->u->o[i].dep[d].neg)
				want[w->u->o[i].dep[d].opt] = true;
	for (size_t k = 0; k < w->ncand; k++) {
		size_t i = 0;
		bool on = kdotconfig_enabled(&o->final, w->cand[k]);

		assert_true(kcsim__find(w->u, w->cand[k], &i));
		if (on != want[i]) {
			fprintf(stderr, "%s is %s, wanted %s\n", w->cand[k],
				on ? "on" : "off", want[i] ? "on" : "off");
			fail();
		}
	}
	free(want);
}

/* ---- the cases ---- */

static const struct shape typical = {
	.nopts = 300, .dep_pct = 50, .neg_pct = 10, .sel_pct = 8,
	.defy_pct = 20, .on_pct = 60, .need_pmil = 50, .fixed_pct = 3,
};

static void test_small_by_hand(void **state)
{
	/* B depends on A; C selects D; D needed, B needed */
	static const char *const text =
		"config A\nconfig B depends A\nconfig C select D\nconfig D\n"
		"config E default y\nculprit !B\nculprit !D\n";
	struct universe w = { 0 };
	struct outcome o;
	struct kdotconfig in;
	static const char *const order[] = { "CONFIG_E", "CONFIG_D",
					     "CONFIG_C", "CONFIG_B",
					     "CONFIG_A" };

	(void)state;
	w.u = kcsim_parse(text);
	assert_non_null(w.u);
	kdotconfig_init(&in);
	kdotconfig_init(&w.start);
	for (size_t i = 0; i < 5; i++)
		kdotconfig_set(&in, w.u->o[i].name, "y");
	kcsim_olddefconfig(w.u, &in, &w.start);
	kdotconfig_free(&in);
	w.cand = xcalloc(6, sizeof(char *));
	for (size_t i = 0; i < 5; i++)
		w.cand[w.ncand++] = xstrdup(order[i]);
	w.needed = xcalloc(6, sizeof(bool));
	run(&w, NULL, 0, 1, &o);
	/* D stays on: needed; C goes (D's own y holds it); A kept for B */
	assert_true(kdotconfig_enabled(&o.final, "CONFIG_A"));
	assert_true(kdotconfig_enabled(&o.final, "CONFIG_B"));
	assert_false(kdotconfig_enabled(&o.final, "CONFIG_C"));
	assert_true(kdotconfig_enabled(&o.final, "CONFIG_D"));
	assert_false(kdotconfig_enabled(&o.final, "CONFIG_E"));
	assert_false(kcsim_bad(w.u, &o.final));
	assert_int_equal(o.kept, 3);
	assert_int_equal(o.removed, 2);
	outcome_free(&o);
	universe_free(&w);
}

/* An option selected by another stays on until the selector is gone. */
static void test_stuck_then_retried(void **state)
{
	/* dependents first would put D before C: D is stuck while C is on */
	static const char *const text =
		"config C select D\nconfig D\nconfig N\nculprit !N\n";
	struct universe w = { 0 };
	struct outcome o;
	struct kdotconfig in;

	(void)state;
	w.u = kcsim_parse(text);
	kdotconfig_init(&in);
	kdotconfig_init(&w.start);
	for (size_t i = 0; i < 3; i++)
		kdotconfig_set(&in, w.u->o[i].name, "y");
	kcsim_olddefconfig(w.u, &in, &w.start);
	kdotconfig_free(&in);
	w.cand = xcalloc(4, sizeof(char *));
	w.cand[w.ncand++] = xstrdup("CONFIG_D");
	w.cand[w.ncand++] = xstrdup("CONFIG_N");
	w.cand[w.ncand++] = xstrdup("CONFIG_C");
	w.needed = xcalloc(4, sizeof(bool));
	run(&w, &(struct kmc_options){ .max_batch = 1 }, 0, 1, &o);
	assert_false(kdotconfig_enabled(&o.final, "CONFIG_C"));
	assert_false(kdotconfig_enabled(&o.final, "CONFIG_D"));
	assert_true(kdotconfig_enabled(&o.final, "CONFIG_N"));
	assert_int_equal(o.kept, 1);
	assert_int_equal(o.removed, 2);
	assert_int_equal(o.stuck, 0);
	/* D asked first: stuck, no build; N: kept; C: removed; D again */
	assert_int_equal(o.tests, 3);
	outcome_free(&o);
	universe_free(&w);
}

static void test_random_universes(void **state)
{
	size_t cases = 0, tests = 0, ktestpl = 0, left = 0, kept = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 1000; seed++) {
		struct shape sh = typical;
		struct universe w;
		struct outcome o;
		uint64_t s = seed;
		size_t l;

		sh.nopts = 20 + kcsim_below(&s, 200);
		sh.need_pmil = (unsigned int)kcsim_below(&s, 400);
		sh.sel_pct = (unsigned int)kcsim_below(&s, 15);
		sh.fixed_pct = (unsigned int)kcsim_below(&s, 5);
		sh.neg_pct = seed % 2 ? 0 : 10;
		universe_make(seed, &sh, &w);
		run(&w, NULL, 0, seed, &o);
		assert_false(kcsim_bad(w.u, &o.final));
		l = removable_left(&w, &o);
		if (!sh.neg_pct)
			assert_int_equal(l, 0);
		left += l;
		kept += o.kept;
		cases++;
		tests += o.tests;
		ktestpl += w.ncand;
		outcome_free(&o);
		universe_free(&w);
	}
	printf("# %zu random universes: %zu builds, one per option: %zu; %zu kept, %zu of them could go after all (\"!\" depends)\n",
	       cases, tests, ktestpl, kept, left);
	assert_true(tests < ktestpl);
	assert_true(left * 50 < kept);
}

/* Without selects, what is left is exactly needed + their depends. */
static void test_exact_without_selects(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 1000; seed++) {
		struct shape sh = typical;
		struct universe w;
		struct outcome o;
		uint64_t s = seed * 7;

		sh.nopts = 10 + kcsim_below(&s, 150);
		sh.sel_pct = 0;
		sh.need_pmil = (unsigned int)kcsim_below(&s, 1000);
		universe_make(seed + 50000, &sh, &w);
		run(&w, NULL, 0, seed, &o);
		assert_false(kcsim_bad(w.u, &o.final));
		assert_exact(&w, &o);
		outcome_free(&o);
		universe_free(&w);
	}
}

/* SKIP counts as needed: the result still passes, nothing needed goes. */
static void test_skips_keep_safe(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 500; seed++) {
		struct shape sh = typical;
		struct universe w;
		struct outcome o;

		sh.nopts = 150;
		universe_make(seed + 90000, &sh, &w);
		run(&w, NULL, 100, seed, &o);
		assert_false(kcsim_bad(w.u, &o.final));
		outcome_free(&o);
		universe_free(&w);
	}
}

/*
 * Builds, by density, against one build per candidate (what ktest.pl
 * would do at most) and against this machine with batches of one (about
 * what ktest.pl does: one build per option still on when its turn comes,
 * the rest gone with their parents). *over: the most builds a case took
 * beyond batches of one.
 */
static void measure(unsigned int need_pmil, size_t nopts, size_t ncases,
		    double *ratio, double *ratio1, size_t *over)
{
	size_t tests = 0, ones = 0, per_option = 0;
	const struct kmc_options one = { .max_batch = 1 };

	*over = 0;
	for (uint64_t seed = 1; seed <= ncases; seed++) {
		struct shape sh = typical;
		struct universe w;
		struct outcome o, o1;

		sh.nopts = nopts;
		sh.need_pmil = need_pmil;
		sh.fixed_pct = 0;
		universe_make(seed * 31 + need_pmil, &sh, &w);
		run(&w, NULL, 0, seed, &o);
		run(&w, &one, 0, seed, &o1);
		assert_false(kcsim_bad(w.u, &o.final));
		tests += o.tests;
		ones += o1.tests;
		per_option += w.ncand;
		if (o.tests > o1.tests && o.tests - o1.tests > *over)
			*over = o.tests - o1.tests;
		outcome_free(&o);
		outcome_free(&o1);
		universe_free(&w);
	}
	*ratio = (double)tests / (double)per_option;
	*ratio1 = (double)tests / (double)ones;
	printf("# needed %5.1f%% of %4zu enabled: %5zu builds; one per option %5zu (%.2f); batches of one %5zu (%.2f); worst case +%zu\n",
	       need_pmil / 10.0, per_option / ncases, tests, per_option,
	       *ratio, ones, *ratio1, *over);
}

static void test_build_counts(void **state)
{
	static const unsigned int pmil[] = { 10, 30, 50, 100, 200, 300, 500,
					     800, 1000 };
	double ratio, ratio1;
	size_t over;

	(void)state;
	for (size_t i = 0; i < sizeof(pmil) / sizeof(*pmil); i++) {
		measure(pmil[i], 500, 6, &ratio, &ratio1, &over);
		if (pmil[i] <= 50)
			assert_true(ratio < 0.4);
		else if (pmil[i] <= 100)
			assert_true(ratio < 0.6);
		else if (pmil[i] <= 200)
			assert_true(ratio < 0.9);
		/*
		 * Never more than one per option; when most are needed,
		 * about what batches of one take, plus the learning.
		 */
		assert_true(ratio < 1.0);
		assert_true(ratio1 < 1.05);
		assert_true(over <= 20);
	}
}

/* A distro-sized config: 1300 enabled options, 2% needed. */
static void test_build_counts_large(void **state)
{
	double ratio, ratio1;
	size_t over;

	(void)state;
	measure(20, 3000, 1, &ratio, &ratio1, &over);
	assert_true(ratio < 0.25);
}

/* The same verdicts give the same steps (a journal replay). */
static void test_deterministic(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct universe w;
		struct outcome a, b;

		universe_make(seed + 777, &typical, &w);
		run(&w, NULL, 50, seed, &a);
		run(&w, NULL, 50, seed, &b);
		assert_string_equal(a.trace, b.trace);
		outcome_free(&a);
		outcome_free(&b);
		universe_free(&w);
	}
}

static void test_edges(void **state)
{
	struct kmc *m;
	struct kmc_step st;
	bool off[1] = { true };

	(void)state;
	m = kmc_new(0, NULL);
	kmc_next(m, &st);
	assert_int_equal(st.kind, KMC_DONE);
	kmc_report(m, KMC_GOOD);	/* nothing in flight: ignored */
	kmc_free(m);

	/* one candidate, no kmc_normalised(): counts as asked */
	m = kmc_new(1, NULL);
	kmc_next(m, &st);
	assert_int_equal(st.kind, KMC_TEST);
	assert_true(st.off[0]);
	kmc_next(m, &st);		/* the same step again */
	assert_int_equal(st.nask, 1);
	kmc_report(m, KMC_BAD);
	kmc_next(m, &st);
	assert_int_equal(st.kind, KMC_DONE);
	assert_int_equal(kmc_kept(m), 1);
	assert_int_equal(kmc_tests(m), 1);
	kmc_free(m);

	/* a kept option lost by the runner: inferred, no build */
	m = kmc_new(1, NULL);
	kmc_next(m, &st);
	assert_false(kmc_normalised(m, off, true));
	kmc_next(m, &st);
	assert_int_equal(st.kind, KMC_DONE);
	assert_int_equal(kmc_kept(m), 1);
	assert_int_equal(kmc_tests(m), 0);
	assert_int_equal(kmc_inferred(m), 1);
	kmc_free(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_small_by_hand),
		cmocka_unit_test(test_stuck_then_retried),
		cmocka_unit_test(test_random_universes),
		cmocka_unit_test(test_exact_without_selects),
		cmocka_unit_test(test_skips_keep_safe),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_build_counts),
		cmocka_unit_test(test_build_counts_large),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
