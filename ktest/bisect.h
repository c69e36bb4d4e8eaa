/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bisect state machine: git bisect's choice of the next commit, fed by
 * verdicts, handing out the next step. Pure: no git, no I/O, no clock. The
 * history comes in as a graph the caller built (ktest/vcs.c from libgit2, or
 * a unit test from thin air).
 */
#ifndef KTEST_BISECT_H
#define KTEST_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KB_ID_LEN 41		/* hex SHA-1 and its NUL */

/*
 * One commit of the candidate graph: reachable from the bad commit and not
 * from any good one, listed the way git's revision walk lists them (newest
 * first by commit date: the walk of "git rev-list BAD --not GOOD...").
 * Parents outside the graph are left out. With path limits, a commit that
 * does not change the paths is treesame, and a merge treesame to one of its
 * parents has been simplified to that parent, as git's history
 * simplification does.
 */
struct kb_node {
	char id[KB_ID_LEN];
	uint32_t *parents;	/* indices into the graph */
	uint32_t nparents;
	bool treesame;
};

struct kb_graph {
	struct kb_node *nodes;	/* nodes[0] is the bad commit */
	size_t n;
};

enum kb_verdict { KB_GOOD, KB_BAD, KB_SKIP };

/* "good", "bad" or "skip", as git bisect says it */
const char *kbisect_verdict_word(enum kb_verdict v);

/* Why a step asks for a commit. */
enum kb_purpose {
	KB_FOR_BISECT,		/* git's pick */
	KB_FOR_START,		/* BISECT_START: the first commit to test */
	KB_FOR_CHECK_BAD,	/* BISECT_CHECK: the bad commit must fail */
	KB_FOR_CHECK_GOOD,	/* BISECT_CHECK: a good commit must pass */
	KB_FOR_MERGE_BASE,	/* a good is no ancestor of bad: test the base */
};

enum kb_kind {
	KB_TEST,		/* test step.id and report its verdict */
	KB_WAIT,		/* nothing new to hand out: report pending ones */
	KB_FOUND,		/* step.id is the first bad commit */
	KB_ONLY_SKIPPED,	/* only skipped commits left: see candidates */
	KB_FAILED,		/* the bisect cannot go on: see why */
};

struct kb_step {
	enum kb_kind kind;
	enum kb_purpose purpose;
	const char *id;		/* KB_TEST, KB_FOUND (valid until next call) */
	size_t left;		/* revisions left to test after this one */
	int steps;		/* roughly how many more steps (as git says) */
	char why[256];		/* KB_FAILED */
};

struct kb_options {
	const char *start;	/* BISECT_START: test first (if a candidate) */
	bool check_bad;		/* BISECT_CHECK: verify bad first */
	bool check_good;	/* BISECT_CHECK: verify the goods first */
	bool first_parent;	/* follow first parents only */
	/*
	 * Goods that are no ancestors of bad, and their merge bases with
	 * bad (which git tests first: "a merge base must be tested").
	 */
	const char *const *merge_bases;
	size_t nmerge_bases;
};

struct kbisect;

/*
 * Starts a bisect of g (nodes[0] is bad) with the good commits goods (their
 * ids; they are not in g). The graph is borrowed and must outlive b.
 * Returns NULL with a reason in why for a graph that is not one.
 */
struct kbisect *kbisect_new(const struct kb_graph *g, const char *const *goods,
			    size_t ngoods, const struct kb_options *o,
			    char *why, size_t whylen);
void kbisect_free(struct kbisect *b);

/*
 * The next step. With max > 1 and no check or merge-base step pending, up
 * to max commits are handed out at once, splitting the candidates max+1
 * ways (the first is git's own pick); *n says how many were written. A
 * commit handed out and not yet marked is never handed out again.
 */
void kbisect_next(struct kbisect *b, struct kb_step *steps, size_t max,
		  size_t *n);

/*
 * A verdict for a commit, in any order. Returns 0, or -1 with a reason in
 * why (an unknown commit, a check that did not hold: "bad commit X tested
 * good"; a verdict that contradicts earlier ones is not taken). A skipped
 * merge base returns 0 with git's warning in why; why is "" otherwise.
 */
int kbisect_mark(struct kbisect *b, const char *id, enum kb_verdict v,
		 char *why, size_t whylen);

/*
 * A commit handed out and not yet marked: whether its verdict can still
 * change the answer (it is still a candidate). Verdicts that came in since
 * it was handed out can make it useless: a bad one under it, a good one
 * over it. False for any other commit.
 */
bool kbisect_needed(const struct kbisect *b, const char *id);

/*
 * Takes back a commit handed out whose verdict will not come (its test was
 * stopped): it can be handed out again. Returns 0, or -1 when id was not
 * handed out.
 */
int kbisect_release(struct kbisect *b, const char *id);

/* Candidates left (git's "revisions left") and the current bad commit. */
size_t kbisect_remaining(const struct kbisect *b);
const char *kbisect_bad(const struct kbisect *b);
/* The candidates when only skipped ones are left (KB_ONLY_SKIPPED). */
size_t kbisect_candidates(const struct kbisect *b, const char ***ids);

/* git's estimate_bisect_steps(): roughly how many steps for n candidates. */
int kbisect_estimate_steps(size_t n);

/* ---- the log, in git bisect log's format ---- */

/* A commit's subject line for the log's comments, or NULL. */
typedef const char *(*kb_subject_fn)(void *ctx, const char *id);

/*
 * Writes what happened so far as "git bisect log" would, so that
 * "git bisect replay" accepts it and lands in the same state.
 */
int kbisect_write_log(const struct kbisect *b, const char *const *paths,
		      size_t npaths, FILE *out, kb_subject_fn subject,
		      void *ctx);

struct kb_replay_mark {
	enum kb_verdict verdict;
	char *rev;		/* as written: a hex id or any revision */
};

struct kb_replay {
	char *bad;		/* from "git bisect start BAD GOOD..." or marks */
	char **goods;
	size_t ngoods;
	char **paths;		/* after "--" */
	size_t npaths;
	struct kb_replay_mark *marks;	/* the marks after start, in order */
	size_t nmarks;
};

/*
 * Parses a "git bisect log" (BISECT_REPLAY). Returns 0, or -1 with the line
 * number and the reason in why.
 */
int kbisect_parse_log(const char *text, struct kb_replay *r, char *why,
		      size_t whylen);
void kbisect_replay_free(struct kb_replay *r);

/* ---- verdicts from results ---- */

/* How a TEST exit status maps to a verdict (BISECT_RET_*). */
struct kb_retmap {
	int ret_good, ret_bad, ret_skip, ret_abort;	/* -1: not set */
	enum { KB_DEFAULT_NONE, KB_DEFAULT_GOOD, KB_DEFAULT_BAD,
	       KB_DEFAULT_SKIP, KB_DEFAULT_ABORT } ret_default;
};

enum kb_result { KB_R_GOOD, KB_R_BAD, KB_R_SKIP, KB_R_ABORT };

/*
 * TEST's exit status (or -1: killed by a signal) as a verdict: the
 * BISECT_RET_* codes first (all of them work, unlike ktest.pl's), then
 * BISECT_RET_DEFAULT for other non-zero codes; with none of them set, git
 * bisect run's convention: 0 good, 125 skip, 1-127 bad, anything else abort.
 */
enum kb_result kbisect_test_result(const struct kb_retmap *m, int status);

/*
 * BISECT_TRIES: several runs of one step. An abort aborts; otherwise any
 * bad run makes it bad (and ktest stops trying); otherwise any good run
 * makes it good; only skips make a skip.
 */
enum kb_result kbisect_combine_tries(const enum kb_result *runs, size_t n);

#endif
