// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config bisect state machine (see config_bisect.h).
 *
 * A round: the changes kept so far (F) plus all the suspects (U, in the
 * runner's order) is known to fail. If F alone fails, F is the answer.
 * Otherwise the shortest prefix U[0..hi) with F + U[0..hi) failing is
 * found by binary search between lo (passes) and hi (fails); U[hi - 1] is
 * then needed (without it, the prefix passes), so it joins F and the next
 * round searches U[0..hi - 1). Skipped prefixes are stepped round; when
 * all of lo+1..hi-1 are skipped, U[lo..hi) joins F as one group.
 *
 * Every tested candidate is remembered by what olddefconfig made of it
 * (the changes it really holds). A candidate equal to one tested, or
 * inside one that passed, or holding all of one that failed, is answered
 * without a build: the search assumes, as every bisection does, that
 * adding changes to a failing config keeps it failing.
 */
#include "ktest/config_bisect.h"

#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"

enum phase {
	P_CHECK_BAD,
	P_CHECK_GOOD,
	P_ROUND,		/* decide: verify F, or search, or done */
	P_VERIFY,		/* testing F */
	P_SEARCH,		/* testing F + U[0..mid) */
	P_DONE,
	P_FAILED,
};

struct hist {
	bool *eff;
	enum kcb_verdict v;
};

struct group {
	size_t *idx;
	size_t n;
};

struct kcb {
	size_t n;
	struct kcb_options o;
	enum phase phase;
	const char *why;

	bool *f;		/* F: the changes kept (the culprits so far) */
	struct group *groups;
	struct kcb_group *out;
	size_t ngroups;

	size_t *u;		/* the suspects, in order */
	size_t nu;
	size_t lo, hi;		/* F + U[0..lo) passes, F + U[0..hi) fails */
	bool *skipped;		/* prefix lengths skipped this round */
	size_t mid;
	bool *hi_eff;		/* what F + U[0..hi) held */

	bool ready;		/* the step below is the one handed out */
	bool *apply;
	size_t napply;
	bool *eff;
	bool have_eff;

	struct hist *h;
	size_t nh;
	bool *minimal;
	size_t tests, inferred;
};

static bool *flags(size_t n)
{
	return xcalloc(n ? n : 1, sizeof(bool));
}

static bool subset(const bool *a, const bool *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (a[k] && !b[k])
			return false;
	return true;
}

static void remember(struct kcb *m, const bool *eff, enum kcb_verdict v)
{
	m->h = xrealloc(m->h, (m->nh + 1) * sizeof(*m->h));
	m->h[m->nh].eff = flags(m->n);
	memcpy(m->h[m->nh].eff, eff, m->n * sizeof(bool));
	m->h[m->nh++].v = v;
}

/* The verdict earlier ones imply for eff; -1 when none. */
static int known(const struct kcb *m, const bool *eff)
{
	for (size_t k = 0; k < m->nh; k++)
		if (!memcmp(m->h[k].eff, eff, m->n * sizeof(bool)))
			return (int)m->h[k].v;
	for (size_t k = 0; k < m->nh; k++) {
		if (m->h[k].v == KCB_GOOD && subset(eff, m->h[k].eff, m->n))
			return KCB_GOOD;
		if (m->h[k].v == KCB_BAD && subset(m->h[k].eff, eff, m->n))
			return KCB_BAD;
	}
	return -1;
}

struct kcb *kcb_new(size_t n, const struct kcb_options *o)
{
	struct kcb *m = xcalloc(1, sizeof(*m));
	bool *all = flags(n);

	m->n = n;
	if (o)
		m->o = *o;
	m->f = flags(n);
	m->apply = flags(n);
	m->eff = flags(n);
	m->hi_eff = flags(n);
	m->u = xcalloc(n ? n : 1, sizeof(size_t));
	m->skipped = flags(n + 1);
	for (size_t k = 0; k < n; k++) {
		m->u[k] = k;
		all[k] = true;
	}
	m->nu = n;
	memcpy(m->hi_eff, all, n * sizeof(bool));
	if (!m->o.check_bad)
		remember(m, all, KCB_BAD);
	if (!m->o.check_good)
		remember(m, m->f, KCB_GOOD);
	free(all);
	if (!n) {
		m->phase = P_FAILED;
		m->why = "the good and the bad config are the same after olddefconfig: nothing to bisect";
	} else {
		m->phase = m->o.check_bad ? P_CHECK_BAD :
			m->o.check_good ? P_CHECK_GOOD : P_ROUND;
	}
	return m;
}

void kcb_free(struct kcb *m)
{
	if (!m)
		return;
	for (size_t k = 0; k < m->nh; k++)
		free(m->h[k].eff);
	for (size_t k = 0; k < m->ngroups; k++)
		free(m->groups[k].idx);
	free(m->groups);
	free(m->out);
	free(m->h);
	free(m->f);
	free(m->u);
	free(m->skipped);
	free(m->hi_eff);
	free(m->apply);
	free(m->eff);
	free(m->minimal);
	free(m);
}

static void set_apply(struct kcb *m, size_t prefix, bool all)
{
	m->napply = 0;
	for (size_t k = 0; k < m->n; k++)
		m->apply[k] = all || m->f[k];
	for (size_t k = 0; k < prefix; k++)
		m->apply[m->u[k]] = true;
	for (size_t k = 0; k < m->n; k++)
		m->napply += m->apply[k];
	m->have_eff = false;
	m->ready = true;
}

static void add_group(struct kcb *m, size_t from, size_t to)
{
	struct group *g;

	m->groups = xrealloc(m->groups, (m->ngroups + 1) * sizeof(*m->groups));
	g = &m->groups[m->ngroups++];
	g->n = to - from;
	g->idx = xcalloc(g->n, sizeof(size_t));
	for (size_t k = from; k < to; k++) {
		g->idx[k - from] = m->u[k];
		m->f[m->u[k]] = true;
	}
}

static void finish(struct kcb *m, const bool *bad_eff)
{
	m->minimal = flags(m->n);
	memcpy(m->minimal, bad_eff, m->n * sizeof(bool));
	m->phase = P_DONE;
}

/* The untested prefix length in (lo, hi) nearest the middle; 0: none. */
static size_t pick_mid(const struct kcb *m)
{
	size_t mid = m->lo + (m->hi - m->lo) / 2;

	for (size_t d = 0; d < m->hi - m->lo; d++) {
		if (mid + d < m->hi && mid + d > m->lo && !m->skipped[mid + d])
			return mid + d;
		if (mid >= d && mid - d > m->lo && !m->skipped[mid - d])
			return mid - d;
	}
	return 0;
}

/* Binary search state after lo or hi moved: next prefix, or a culprit. */
static void search(struct kcb *m)
{
	size_t mid;

	if (m->hi - m->lo > 1 && (mid = pick_mid(m))) {
		m->mid = mid;
		m->phase = P_SEARCH;
		set_apply(m, mid, false);
		return;
	}
	/* U[lo..hi) holds a needed change: keep it, search what is before */
	add_group(m, m->lo, m->hi);
	m->nu = m->lo;
	memset(m->skipped, 0, (m->n + 1) * sizeof(bool));
	if (!m->nu) {
		/* F + U[0..hi) failed and F is now all of it */
		finish(m, m->hi_eff);
		return;
	}
	m->phase = P_ROUND;
}

static void round_start(struct kcb *m)
{
	bool empty = true;

	for (size_t k = 0; k < m->n; k++)
		empty &= !m->f[k];
	m->lo = 0;
	m->hi = m->nu;
	if (empty) {
		search(m);
		return;
	}
	m->phase = P_VERIFY;
	set_apply(m, 0, false);
}

static void decide(struct kcb *m, const bool *eff, enum kcb_verdict v)
{
	switch (m->phase) {
	case P_CHECK_BAD:
		if (v != KCB_BAD) {
			m->phase = P_FAILED;
			m->why = v == KCB_GOOD ?
				"Bad config succeeded when expected to fail!" :
				"the bad config cannot be tested (skip)";
			return;
		}
		m->phase = m->o.check_good ? P_CHECK_GOOD : P_ROUND;
		return;
	case P_CHECK_GOOD:
		if (v != KCB_GOOD) {
			m->phase = P_FAILED;
			m->why = v == KCB_BAD ?
				"Good config failed when expected to succeed!" :
				"the good config cannot be tested (skip)";
			return;
		}
		m->phase = P_ROUND;
		return;
	case P_VERIFY:
		if (v == KCB_BAD) {
			finish(m, eff);
			return;
		}
		/* a skip: F cannot be told alone; search on, F stays kept */
		search(m);
		return;
	case P_SEARCH:
		if (v == KCB_BAD) {
			m->hi = m->mid;
			memcpy(m->hi_eff, eff, m->n * sizeof(bool));
		} else if (v == KCB_GOOD) {
			m->lo = m->mid;
		} else {
			m->skipped[m->mid] = true;
		}
		search(m);
		return;
	default:
		return;
	}
}

void kcb_next(struct kcb *m, struct kcb_step *st)
{
	memset(st, 0, sizeof(*st));
	if (!m->ready) {
		while (m->phase == P_ROUND)
			round_start(m);
		if (m->phase == P_CHECK_BAD)
			set_apply(m, 0, true);
		else if (m->phase == P_CHECK_GOOD)
			set_apply(m, 0, false);
	}
	st->suspects = m->phase == P_DONE ? 0 :
		m->phase == P_SEARCH ? m->hi - m->lo : m->nu;
	if (m->phase == P_DONE) {
		st->kind = KCB_FOUND;
		return;
	}
	if (m->phase == P_FAILED) {
		st->kind = KCB_FAILED;
		st->why = m->why;
		return;
	}
	st->kind = KCB_TEST;
	st->apply = m->apply;
	st->napply = m->napply;
	switch (m->phase) {
	case P_CHECK_BAD:
		st->purpose = KCB_FOR_CHECK_BAD;
		break;
	case P_CHECK_GOOD:
		st->purpose = KCB_FOR_CHECK_GOOD;
		break;
	case P_VERIFY:
		st->purpose = KCB_FOR_VERIFY;
		break;
	default:
		st->purpose = KCB_FOR_SEARCH;
		break;
	}
	for (size_t w = m->hi - m->lo; w > 1; w = (w + 1) / 2)
		st->steps++;
	if (m->phase == P_CHECK_BAD || m->phase == P_CHECK_GOOD)
		st->steps = 0;
	else if (st->steps)
		st->steps--;	/* this one */
	if (m->phase == P_SEARCH || m->phase == P_VERIFY)
		st->steps++;	/* the check of the culprits found */
}

bool kcb_normalised(struct kcb *m, const bool *eff)
{
	int v;

	if (!m->ready || (m->phase != P_SEARCH && m->phase != P_VERIFY &&
			  m->phase != P_CHECK_BAD && m->phase != P_CHECK_GOOD))
		return false;
	memcpy(m->eff, eff, m->n * sizeof(bool));
	m->have_eff = true;
	/* the checks are asked for: they are tested, whatever is known */
	if (m->phase == P_CHECK_BAD || m->phase == P_CHECK_GOOD)
		return true;
	v = known(m, eff);
	if (v < 0)
		return true;
	m->inferred++;
	m->ready = false;
	decide(m, m->eff, (enum kcb_verdict)v);
	return false;
}

void kcb_report(struct kcb *m, enum kcb_verdict v)
{
	if (!m->ready)
		return;
	if (!m->have_eff)
		memcpy(m->eff, m->apply, m->n * sizeof(bool));
	m->tests++;
	remember(m, m->eff, v);
	m->ready = false;
	decide(m, m->eff, v);
}

size_t kcb_culprits(const struct kcb *m, const struct kcb_group **g)
{
	struct kcb *w = (struct kcb *)m;

	free(w->out);
	w->out = xcalloc(m->ngroups ? m->ngroups : 1, sizeof(*w->out));
	/* in change order: the last found is the first in the order */
	for (size_t k = 0; k < m->ngroups; k++) {
		w->out[k].idx = m->groups[m->ngroups - 1 - k].idx;
		w->out[k].n = m->groups[m->ngroups - 1 - k].n;
	}
	*g = w->out;
	return m->phase == P_DONE ? m->ngroups : 0;
}

const bool *kcb_minimal_bad(const struct kcb *m)
{
	return m->phase == P_DONE ? m->minimal : NULL;
}

size_t kcb_tests(const struct kcb *m)
{
	return m->tests;
}

size_t kcb_inferred(const struct kcb *m)
{
	return m->inferred;
}
