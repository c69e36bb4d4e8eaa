/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The make_min_config state machine: which of the options enabled in a
 * start config can be turned off while the kernel still boots (or passes
 * TEST)? Pure: the runner turns each step into a .config, normalises it
 * (make olddefconfig), builds and tests it, and reports back.
 *
 * The candidates are numbered 0..n-1 in the order the runner chose: what
 * depends on others first, what others depend on last (turning a leaf off
 * takes nothing with it; turning a parent off takes its dependents along).
 *
 * ktest.pl builds once per candidate. This machine does group testing
 * (Hwang's generalised binary splitting): it turns off a batch of pending
 * candidates at once; when the kernel still passes, the whole batch is gone
 * in one build; when it fails, the batch holds at least one needed option
 * and is halved (the first half tried, the rest set aside) until one
 * option is left, which is kept. The batch is a power of two near
 * (pending - d) / d, d the needed options expected among the pending ones
 * from what was found so far (a prior of one in eight before anything is
 * known: batches of 4). With few needed options that is far fewer builds
 * than one per option; when most are needed (one in three or more) the
 * batch is 1 and the cost is ktest.pl's, plus a few builds while the
 * estimate learns.
 *
 * What olddefconfig made of a trial is what counts (kmc_normalised): an
 * option asked off that stays on (another option selects it) cannot be
 * disabled now; it tells nothing and is not counted as tested: it is
 * marked "stuck" and asked again once something else was removed (as
 * ktest.pl's "did not change .config" marks). Options that went off with
 * the ones asked (their dependents) go with them: removed when the trial
 * passes, suspects when it fails. A trial that turns off everything a
 * failed trial turned off (or an option known to be needed) fails without
 * being built: this assumes that turning more off never mends a kernel.
 *
 * SKIP (the trial could not be tested) counts as a failure: an option that
 * might be needed is kept, so the config written always boots; the price is
 * at most a kept option that was not needed.
 *
 * Nothing is random: the same verdicts give the same steps, so a rerun
 * replaying the journal walks the same way.
 */
#ifndef KTEST_MIN_CONFIG_H
#define KTEST_MIN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum kmc_verdict { KMC_GOOD, KMC_BAD, KMC_SKIP };

enum kmc_state {
	KMC_PENDING,		/* not decided yet */
	KMC_REMOVED,		/* off in the last passing config */
	KMC_KEPT,		/* needed: turning it off fails */
	KMC_STUCK,		/* stays on when asked off (selected) */
};

struct kmc_options {
	size_t first_batch;	/* 0: from the prior (4) */
	size_t max_batch;	/* 0: no limit */
};

enum kmc_kind {
	KMC_TEST,		/* build and test the trial st->off */
	KMC_DONE,		/* every candidate decided */
};

enum kmc_purpose {
	KMC_FOR_BATCH,		/* a new batch of pending candidates */
	KMC_FOR_SPLIT,		/* half of a batch that failed */
};

struct kmc_step {
	enum kmc_kind kind;
	enum kmc_purpose purpose;
	/*
	 * n flags: candidate k is "is not set" in the trial: the ones
	 * removed so far and the ones asked off now (st->ask).
	 */
	const bool *off;
	const bool *ask;	/* n flags: asked off in this step */
	size_t nask;
	size_t pending;		/* candidates not decided yet */
	int steps;		/* about how many builds are left */
};

struct kmc;

struct kmc *kmc_new(size_t n, const struct kmc_options *o);
void kmc_free(struct kmc *m);

/* The next step. Until it is answered, the same step is handed out. */
void kmc_next(struct kmc *m, struct kmc_step *st);

/*
 * What the normalised trial of the last KMC_TEST step holds: off[k] is
 * true when candidate k is not enabled there. lost_keep: an option the
 * runner keeps (IGNORE_CONFIG, allnoconfig's) went off with them. Returns
 * true when the trial must be built and tested (then kmc_report()); false
 * when nothing changed or its verdict follows from earlier ones (it was
 * recorded: call kmc_next()). Without this call the trial counts as
 * exactly st->off.
 */
bool kmc_normalised(struct kmc *m, const bool *off, bool lost_keep);

/* The verdict of the last KMC_TEST step. */
void kmc_report(struct kmc *m, enum kmc_verdict v);

enum kmc_state kmc_state(const struct kmc *m, size_t k);
size_t kmc_count(const struct kmc *m, enum kmc_state s);
static inline size_t kmc_kept(const struct kmc *m)
{
	return kmc_count(m, KMC_KEPT);
}
static inline size_t kmc_removed(const struct kmc *m)
{
	return kmc_count(m, KMC_REMOVED);
}

/* Builds asked for, trials decided without one, and SKIP verdicts. */
size_t kmc_tests(const struct kmc *m);
size_t kmc_inferred(const struct kmc *m);
size_t kmc_skips(const struct kmc *m);

#endif
