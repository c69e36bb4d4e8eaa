/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A pool of boxes (BOXES): one step a box, each box on its own time. Each
 * box runs its step in a child process, where ${BOX} is the box's name (so
 * MACHINE, CONSOLE, POWER_CYCLE, QEMU_KERNEL... can name it). Box 0 is the
 * configured one and builds in BUILD_DIR and OUTPUT_DIR; every other box
 * (and box 0 too with box0_own_tree), unless the config already gives it
 * BUILD_DIR and OUTPUT_DIR of its own through ${BOX}, builds in a work
 * tree and an output directory under STATE_DIR/box-NAME (kept across
 * runs: the next build there is an incremental one). The child journals
 * nothing: it hands its result back, and the main process puts the step
 * into the report and the journal as it comes, so a rerun replays it as
 * any other step.
 */
#ifndef KTEST_POOL_H
#define KTEST_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KPOOL_MAX 16

struct krun;
struct kstep_opts;
struct kstep_result;

struct kpool {
	struct krun *r;
	char *names[KPOOL_MAX];
	size_t n;
	char *prefix[KPOOL_MAX];	/* "[box NAME] " */
	/* kpool_start's boxes: their process, its pipe and their step */
	pid_t pid[KPOOL_MAX];
	int fd[KPOOL_MAX];
	const struct kstep_opts *o[KPOOL_MAX];
	/* box 0 too builds in a work tree of its own (kpool_start): the
	 * patchcheck builds in BUILD_DIR meanwhile */
	bool box0_own_tree;
};

/*
 * The pool of BOXES (words: box names, [A-Za-z0-9_.-]), or NULL with why
 * when it is not one; fewer than 2 boxes is no pool (NULL, why "") unless
 * one: then one box is a pool too (PATCHCHECK_PIPELINE), named 1 when
 * BOXES is unset. ${BOX} is the first name from now on, in this process.
 */
struct kpool *kpool_new(struct krun *r, bool one, char *why, size_t len);


/*
 * One step a box, each box on its own time (the bisect's schedule, the
 * patchcheck's boots): box k (k < n, box 0 too) runs o in a process of its
 * own; box 0's builds in BUILD_DIR and OUTPUT_DIR (unless box0_own_tree),
 * and ktest's own lab is closed first (the box opens its own). o and its strings must stay valid until the box ends
 * (kpool_wait, kpool_stop). Returns 0, or -1 (printed) when the box could
 * not be started.
 */
int kpool_start(struct kpool *p, size_t k, const struct kstep_opts *o,
		const char *what);

/* Whether box k runs a step kpool_start gave it. */
bool kpool_busy(const struct kpool *p, size_t k);

/* Whether any box does. */
bool kpool_any_busy(const struct kpool *p);

/*
 * The busy boxes' result pipes, readable once the box ended (for a
 * kcmd_watch): how many were put in pf (max at most).
 */
struct pollfd;
int kpool_pollfds(const struct kpool *p, struct pollfd *pf, int max);

/*
 * Waits up to timeout_ms (-1: for as long as it takes) for the first of
 * the busy boxes to end: its index in *k, its result in res, adopted (the
 * report, the journal). Returns 0, 1 when none ended in time, or -1 when
 * the run must stop (the step's -1, a box that ended without a result, or
 * no box busy).
 */
int kpool_wait(struct kpool *p, int timeout_ms, size_t *k,
	       struct kstep_result *res);

/*
 * Stops box k's step (SIGTERM: its make and its commands stopped with it,
 * a checkout or a store into the build cache finished first) and waits
 * for its process; nothing of the step is kept.
 */
void kpool_stop(struct kpool *p, size_t k);

/* Every busy box stopped. */
void kpool_stop_all(struct kpool *p);

/*
 * The run stops (a box's step gave up, the bisect failed, ...): the steps
 * still in flight on the other boxes end as they would have, and each is
 * adopted (the report, the journal) and printed with its verdict, so that
 * the rerun takes it from the journal instead of running it again. After
 * a second Ctrl-C (krun_stopped_hard) they are stopped instead
 * (kpool_stop_all): what they would give is INFRA, nothing to keep.
 */
void kpool_finish(struct kpool *p);

void kpool_free(struct kpool *p);

/*
 * What the end of a run does to the box (POWEROFF_ON_SUCCESS, ...), done
 * to every box of BOXES in turn: fn with the box's name, ${BOX} that name
 * and ktest's lab closed before and after (each box's is opened on
 * demand, from its own options); ${BOX} is the first box's again after.
 * Once, with NULL, when BOXES names fewer than 2 boxes (or a bad pool).
 */
void kpool_each_box(struct krun *r,
		    void (*fn)(struct krun *r, const char *box, void *ctx),
		    void *ctx);

#endif
