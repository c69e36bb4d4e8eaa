/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Speculative builds for a boot or test bisect (BISECT_SPECULATE): while
 * the box boots candidate X, the two commits that can come next (the next
 * pick if X is good, and if it is bad) are built by a child process, into
 * the build cache (build_cache.h). The next step waits for its commit's
 * build there, stops the other, and takes it from the cache: the verdicts
 * still come from the boots in order, so the answer is the same whatever
 * the timing.
 *
 * Where: in place (BUILD_DIR and OUTPUT_DIR themselves) once the box has
 * X's kernel, when nothing of the step reads them again (a boot bisect,
 * one run a commit): incremental builds, with the side build beside them
 * (kspec_new_side) for the commits a bad verdict needs. Otherwise in a
 * work tree and an output directory of their own (STATE_DIR/spec-src,
 * spec-out), started right after X's build: their first build is a whole
 * one (the kernel's commands name the source tree, so none of
 * OUTPUT_DIR's objects serve); they stay for the next bisect, whose
 * builds there are incremental.
 */
#ifndef KTEST_SPECULATE_H
#define KTEST_SPECULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct krun;

struct kspec {
	struct krun *r;
	char *build_type;	/* what the bisect's steps build with */
	char *src, *out, *log;	/* STATE_DIR/spec-src, spec-out, spec.log */
	bool in_place;		/* src, out: BUILD_DIR, OUTPUT_DIR */
	bool idle;		/* builds at SCHED_IDLE (kspec_new_side) */
	pid_t pid;		/* the child building, or 0 */
	pid_t dying;		/* not in place: a child told to stop */
	char ids[2][41];	/* what it builds, in order */
	size_t nids;
};

/*
 * Ready to speculate (in place or not, see above), or NULL with why
 * (BISECT_FILES, PRE_BUILD or POST_BUILD set: a build elsewhere would not
 * be the same build).
 */
struct kspec *kspec_new(struct krun *r, const char *build_type, bool in_place,
			char *why, size_t len);

/*
 * Beside an in-place one: builds in STATE_DIR/spec-src and spec-out at
 * SCHED_IDLE, on the CPU time that the step's own build, the box's boot
 * and the build ahead in place leave (an incremental kernel build keeps
 * about 1.3 of 2 CPUs busy: its links are serial). It builds the commit
 * that comes next if the newest commit being built turns out bad, so a
 * bad verdict, which a build ahead in place does not serve, finds its
 * next build done or mostly done. Its first build there is a whole one.
 */
struct kspec *kspec_new_side(struct krun *r, const char *build_type);

/*
 * After X was built: build ids (at most 2; NULL ones skipped) in a child.
 * A child already building exactly these goes on.
 */
void kspec_start(struct kspec *sp, const char *const *ids, size_t n);

/* Is id one of what the child builds now? */
bool kspec_building(const struct kspec *sp, const char *id);

/*
 * Before a step of id: wait until the child has id in the cache (then stop
 * it) or has ended; a child building anything else now (another commit,
 * or the first of its two when id is the second) is stopped at once, and
 * the step builds id itself (id NULL: before anything else uses
 * BUILD_DIR).
 */
void kspec_settle(struct kspec *sp, const char *id);

/*
 * Stops the child. The work tree and output directory stay, as a box's
 * do (pool.h): the next bisect's builds there are incremental.
 */
void kspec_free(struct kspec *sp);

#endif
