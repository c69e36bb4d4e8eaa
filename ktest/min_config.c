// SPDX-License-Identifier: GPL-2.0-only
/*
 * The make_min_config state machine (see min_config.h for what it does).
 *
 * Two modes. Batch: the next few pending candidates, in the runner's order,
 * are asked off together. Split: a set S of candidates is known to fail
 * when turned off on top of the ones removed (the trial with S off was
 * built and failed, or was inferred to fail); its first half is asked off
 * alone. If that passes, the half is removed and the rest of S still
 * fails (removed + rest is the very trial that failed); if it fails, S
 * becomes that half and the rest goes back to pending. When S is one
 * candidate, it is needed. So a failed batch of b costs log2(b) builds
 * more and finds one needed option, removing on the way every half that
 * passed.
 *
 * When neither half of S can be turned off alone (each stays on while the
 * other is on: selects among them), S is kept as a whole: the config stays
 * one that passed. The random universes of the unit test never get there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"	/* xcalloc, xrealloc */
#include "ktest/min_config.h"

/* The prior: one needed option in eight, before anything is known. */
#define PRIOR_NEEDED 1
#define PRIOR_SEEN 8

struct kmc {
	size_t n;
	unsigned char *st;	/* enum kmc_state per candidate */
	size_t counts[4];	/* candidates in each state */

	/* the step handed out */
	bool in_flight;
	bool normalised;	/* kmc_normalised() said: build it */
	enum kmc_purpose purpose;
	bool *off;		/* removed + asked */
	bool *ask;
	size_t nask;
	bool *eff;		/* off in the normalised trial */

	/* split mode: S, in candidate order; empty in batch mode */
	size_t *split;
	size_t nsplit;
	bool second_half;	/* the first half changed nothing */

	/* the off sets of the trials that failed, as bitsets */
	uint64_t *fails;
	size_t nfails, words;

	size_t removals;		/* candidates removed so far */
	size_t removals_at_unstick;	/* ... when the stuck were last retried */
	size_t first_batch, max_batch;
	size_t tests, inferred, skips;
	bool done;
};

static void set_state(struct kmc *m, size_t k, enum kmc_state s)
{
	m->counts[m->st[k]]--;
	m->st[k] = (unsigned char)s;
	m->counts[s]++;
	if (s == KMC_REMOVED)
		m->removals++;
}

struct kmc *kmc_new(size_t n, const struct kmc_options *o)
{
	struct kmc *m = xcalloc(1, sizeof(*m));

	m->n = n;
	m->st = xcalloc(n + 1, 1);
	m->counts[KMC_PENDING] = n;
	m->off = xcalloc(n + 1, sizeof(bool));
	m->ask = xcalloc(n + 1, sizeof(bool));
	m->eff = xcalloc(n + 1, sizeof(bool));
	m->split = xcalloc(n + 1, sizeof(size_t));
	m->words = (n + 63) / 64;
	if (o) {
		m->first_batch = o->first_batch;
		m->max_batch = o->max_batch;
	}
	return m;
}

void kmc_free(struct kmc *m)
{
	if (!m)
		return;
	free(m->st);
	free(m->off);
	free(m->ask);
	free(m->eff);
	free(m->split);
	free(m->fails);
	free(m);
}

/*
 * Hwang's generalised binary splitting: with d needed among n pending,
 * test groups of 2^a, a = floor(log2((n - d + 1) / d)), and one by one
 * when n <= 2d - 2. d is estimated from the candidates decided so far
 * plus the prior: 1000 pending and nothing known gives d = 125 and
 * groups of 4; after 100 removed and 2 kept, d = 28 and groups of 32.
 */
static size_t batch_size(const struct kmc *m, size_t pending)
{
	size_t kept = m->counts[KMC_KEPT] + PRIOR_NEEDED;
	size_t seen = m->counts[KMC_KEPT] + m->counts[KMC_REMOVED] + PRIOR_SEEN;
	size_t d = (pending * kept + seen - 1) / seen, q, b = 1;

	if (m->first_batch && !m->tests && !m->inferred) {
		b = m->first_batch;
	} else if (pending + 2 > 2 * d) {
		q = (pending - d + 1) / d;
		while (b * 2 <= q)
			b *= 2;
	}
	if (m->max_batch && b > m->max_batch)
		b = m->max_batch;
	return b < pending ? b : pending;
}

/* About how many builds are left: the estimate behind batch_size(). */
static int estimate(const struct kmc *m, size_t pending, size_t b)
{
	size_t kept = m->counts[KMC_KEPT] + PRIOR_NEEDED;
	size_t seen = m->counts[KMC_KEPT] + m->counts[KMC_REMOVED] + PRIOR_SEEN;
	size_t d = (pending * kept + seen - 1) / seen, lg = 0;

	if (!pending)
		return 0;
	while (((size_t)1 << lg) < b)
		lg++;
	if (d > pending)
		d = pending;
	return (int)(d * lg + (pending + b - 1) / b + m->nsplit / 2);
}

static void clear_ask(struct kmc *m)
{
	memset(m->ask, 0, m->n * sizeof(bool));
	m->nask = 0;
}

static void ask(struct kmc *m, size_t k)
{
	m->ask[k] = true;
	m->nask++;
}

/* Split mode: ask off the first half of S, or the second. */
static void plan_split(struct kmc *m)
{
	size_t h = m->nsplit / 2;
	size_t from = m->second_half ? h : 0;
	size_t to = m->second_half ? m->nsplit : h;

	clear_ask(m);
	for (size_t j = from; j < to; j++)
		ask(m, m->split[j]);
	m->purpose = KMC_FOR_SPLIT;
}

/* Batch mode: the next pending candidates; false when there are none. */
static bool plan_batch(struct kmc *m)
{
	size_t pending = m->counts[KMC_PENDING], b;

	if (!pending && m->counts[KMC_STUCK] &&
	    m->removals > m->removals_at_unstick) {
		/* something went since they were stuck: ask them again */
		for (size_t k = 0; k < m->n; k++)
			if (m->st[k] == KMC_STUCK)
				set_state(m, k, KMC_PENDING);
		m->removals_at_unstick = m->removals;
		pending = m->counts[KMC_PENDING];
	}
	if (!pending)
		return false;
	b = batch_size(m, pending);
	clear_ask(m);
	for (size_t k = 0; k < m->n && m->nask < b; k++)
		if (m->st[k] == KMC_PENDING)
			ask(m, k);
	m->purpose = KMC_FOR_BATCH;
	return true;
}

static void fill_step(const struct kmc *m, struct kmc_step *st)
{
	size_t pending = m->counts[KMC_PENDING];

	memset(st, 0, sizeof(*st));
	st->kind = m->done ? KMC_DONE : KMC_TEST;
	st->pending = pending;
	if (m->done)
		return;
	st->purpose = m->purpose;
	st->off = m->off;
	st->ask = m->ask;
	st->nask = m->nask;
	st->steps = estimate(m, pending, m->purpose == KMC_FOR_BATCH ?
			     m->nask : batch_size(m, pending ? pending : 1));
}

void kmc_next(struct kmc *m, struct kmc_step *st)
{
	if (!m->in_flight && !m->done) {
		if (m->nsplit)
			plan_split(m);
		else if (!plan_batch(m))
			m->done = true;
		if (!m->done) {
			for (size_t k = 0; k < m->n; k++)
				m->off[k] = m->st[k] == KMC_REMOVED || m->ask[k];
			m->in_flight = true;
			m->normalised = false;
		}
	}
	fill_step(m, st);
}

/* ---- answers ---- */

static void keep(struct kmc *m, size_t k)
{
	set_state(m, k, KMC_KEPT);
}

/* Does the trial's off set (removed + eff) hold all of a failed one? */
static bool covers_a_failure(const struct kmc *m, const uint64_t *o)
{
	for (size_t f = 0; f < m->nfails; f++) {
		const uint64_t *F = m->fails + f * m->words;
		size_t w;

		for (w = 0; w < m->words; w++)
			if (F[w] & ~o[w])
				break;
		if (w == m->words)
			return true;
	}
	return false;
}

static uint64_t *off_set(const struct kmc *m)
{
	uint64_t *o = xcalloc(m->words + 1, sizeof(uint64_t));

	for (size_t k = 0; k < m->n; k++)
		if (m->eff[k] || m->st[k] == KMC_REMOVED)
			o[k / 64] |= (uint64_t)1 << (k % 64);
	return o;
}

static void remember_failure(struct kmc *m)
{
	uint64_t *o = off_set(m);

	m->fails = xrealloc(m->fails, (m->nfails + 1) * m->words *
			    sizeof(uint64_t) + sizeof(uint64_t));
	memcpy(m->fails + m->nfails * m->words, o, m->words * sizeof(uint64_t));
	m->nfails++;
	free(o);
}

/* The trial passed: everything it turned off is gone. */
static void passed(struct kmc *m)
{
	size_t j = 0;

	for (size_t k = 0; k < m->n; k++)
		if (m->eff[k] && (m->st[k] == KMC_PENDING ||
				  m->st[k] == KMC_STUCK))
			set_state(m, k, KMC_REMOVED);
	/* S minus the half that went still fails (it is the failed trial) */
	for (size_t i = 0; i < m->nsplit; i++)
		if (m->st[m->split[i]] != KMC_REMOVED)
			m->split[j++] = m->split[i];
	m->nsplit = j;
	m->second_half = false;
	if (m->nsplit == 1) {
		keep(m, m->split[0]);
		m->nsplit = 0;
	}
	/* nsplit 0 here: what failed before passed now (a flaky box) */
}

/* The trial failed: what was asked and went off holds a needed option. */
static void failed(struct kmc *m)
{
	remember_failure(m);
	m->nsplit = 0;
	m->second_half = false;
	for (size_t k = 0; k < m->n; k++)
		if (m->ask[k] && m->eff[k] && m->st[k] != KMC_REMOVED)
			m->split[m->nsplit++] = k;
	if (m->nsplit == 1) {
		keep(m, m->split[0]);
		m->nsplit = 0;
	}
}

/* Neither half of S goes off alone: keep S whole (see the top). */
static void entangled(struct kmc *m)
{
	for (size_t i = 0; i < m->nsplit; i++)
		if (m->st[m->split[i]] == KMC_PENDING)
			keep(m, m->split[i]);
	m->nsplit = 0;
	m->second_half = false;
}

enum absorbed { NOTHING, FAILS, BUILD };

/* What the normalised trial means, before any build. */
static enum absorbed absorb(struct kmc *m, const bool *off, bool lost_keep)
{
	size_t asked_off = 0;
	bool lost = lost_keep;
	uint64_t *o;

	memcpy(m->eff, off, m->n * sizeof(bool));
	for (size_t k = 0; k < m->n; k++) {
		if (m->st[k] == KMC_REMOVED)
			continue;
		if (m->ask[k] && m->eff[k])
			asked_off++;
		if (m->eff[k] && m->st[k] == KMC_KEPT)
			lost = true;
		/* batch: asked off, stayed on: selected; ask later */
		if (m->purpose == KMC_FOR_BATCH && m->ask[k] && !m->eff[k])
			set_state(m, k, KMC_STUCK);
	}
	if (!asked_off) {
		if (m->purpose == KMC_FOR_SPLIT) {
			if (m->second_half)
				entangled(m);
			else
				m->second_half = true;
		}
		return NOTHING;
	}
	if (lost)
		return FAILS;
	o = off_set(m);
	lost = covers_a_failure(m, o);
	free(o);
	return lost ? FAILS : BUILD;
}

bool kmc_normalised(struct kmc *m, const bool *off, bool lost_keep)
{
	if (!m->in_flight || m->normalised)
		return m->in_flight;
	switch (absorb(m, off, lost_keep)) {
	case NOTHING:
		m->in_flight = false;
		return false;
	case FAILS:
		m->inferred++;
		failed(m);
		m->in_flight = false;
		return false;
	default:
		m->normalised = true;
		return true;
	}
}

void kmc_report(struct kmc *m, enum kmc_verdict v)
{
	if (!m->in_flight)
		return;
	if (!m->normalised && absorb(m, m->off, false) == NOTHING) {
		m->in_flight = false;
		return;
	}
	m->tests++;
	if (v == KMC_SKIP)
		m->skips++;
	if (v == KMC_GOOD)
		passed(m);
	else
		failed(m);
	m->in_flight = false;
	m->normalised = false;
}

enum kmc_state kmc_state(const struct kmc *m, size_t k)
{
	return k < m->n ? (enum kmc_state)m->st[k] : KMC_PENDING;
}

size_t kmc_count(const struct kmc *m, enum kmc_state s)
{
	return m->counts[s];
}

size_t kmc_tests(const struct kmc *m)
{
	return m->tests;
}

size_t kmc_inferred(const struct kmc *m)
{
	return m->inferred;
}

size_t kmc_skips(const struct kmc *m)
{
	return m->skips;
}
