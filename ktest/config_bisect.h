/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config bisect state machine: which of the option changes between a
 * good and a bad .config make the kernel fail? Pure: the runner turns each
 * candidate into a .config, normalises it (make olddefconfig), builds and
 * tests it, and reports back.
 *
 * The changes are numbered 0..n-1 in the order the runner chose (the
 * Kconfig dependency order: what an option depends on comes first, so every
 * prefix is a config olddefconfig keeps as asked). A candidate is the good
 * config with some changes taken from the bad one.
 *
 * The search finds a smallest set of changes that turns good into bad,
 * also when it needs several changes together: it finds the shortest
 * prefix of the suspects that still fails (a binary search), whose last
 * change is then known to be needed; it keeps that one, and searches the
 * suspects before it, until the good config plus the changes kept fails
 * on its own. One culprit costs about log2(n) + 1 tests, k culprits about
 * k (log2(n) + 1).
 *
 * What olddefconfig made of a candidate is what counts: the runner reports
 * which changes the normalised config really holds (kcb_normalised), and a
 * candidate whose changes were tested before, or that holds every change
 * of a config known to fail, or only changes of one known to pass, is not
 * built again. Nothing is random: the same verdicts give the same steps,
 * so a rerun replaying the journal walks the same way.
 *
 * A SKIP (the candidate cannot be tested: it does not build while a boot
 * bug is hunted, a flaky box) is neither good nor bad: the search tries
 * the nearest other prefix, and when every prefix between the last good
 * and the first bad was skipped, the culprit is reported as a group
 * ("one of these").
 */
#ifndef KTEST_CONFIG_BISECT_H
#define KTEST_CONFIG_BISECT_H

#include <stdbool.h>
#include <stddef.h>

enum kcb_verdict { KCB_GOOD, KCB_BAD, KCB_SKIP };

struct kcb_options {
	bool check_bad;		/* CONFIG_BISECT_CHECK: the bad config first */
	bool check_good;	/* ... and the good one */
};

enum kcb_kind {
	KCB_TEST,		/* build and test st->apply */
	KCB_FOUND,		/* done: kcb_culprits() */
	KCB_FAILED,		/* done: st->why */
};

enum kcb_purpose {
	KCB_FOR_CHECK_BAD,	/* CONFIG_BISECT_CHECK: the bad config */
	KCB_FOR_CHECK_GOOD,	/* CONFIG_BISECT_CHECK: the good config */
	KCB_FOR_SEARCH,		/* a prefix of the suspects */
	KCB_FOR_VERIFY,		/* the good config plus the culprits so far */
};

struct kcb_step {
	enum kcb_kind kind;
	enum kcb_purpose purpose;
	const bool *apply;	/* n flags: change k takes the bad value */
	size_t napply;		/* how many are set */
	size_t suspects;	/* where the change searched for is: the
				 * rest of the suspects while searching */
	int steps;		/* about how many tests are left after this */
	const char *why;	/* KCB_FAILED */
};

struct kcb;

struct kcb *kcb_new(size_t n, const struct kcb_options *o);
void kcb_free(struct kcb *m);

/* The next step. Until it is answered, the same step is handed out. */
void kcb_next(struct kcb *m, struct kcb_step *st);

/*
 * What the normalised candidate of the last KCB_TEST step holds: eff[k] is
 * true when change k has its bad value there. Returns true when it must be
 * built and tested (then kcb_report()); false when its verdict follows from
 * earlier ones (it was recorded; call kcb_next()). Without this call the
 * candidate counts as exactly st->apply.
 */
bool kcb_normalised(struct kcb *m, const bool *eff);

/* The verdict of the last KCB_TEST step. */
void kcb_report(struct kcb *m, enum kcb_verdict v);

/*
 * The answer (KCB_FOUND): groups of change indices. A group of one is a
 * change that is needed; a larger group means one or more of those (skips
 * hid which). Every group is needed together with the others.
 */
struct kcb_group {
	const size_t *idx;
	size_t n;
};
size_t kcb_culprits(const struct kcb *m, const struct kcb_group **g);

/*
 * The smallest failing config found: the changes it holds (after
 * olddefconfig), n flags, or NULL before KCB_FOUND.
 */
const bool *kcb_minimal_bad(const struct kcb *m);

/* Tests asked for (built), and candidates answered from earlier verdicts. */
size_t kcb_tests(const struct kcb *m);
size_t kcb_inferred(const struct kcb *m);

#endif
