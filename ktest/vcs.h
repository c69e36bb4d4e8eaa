/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The git layer, on libgit2 only (no git program anywhere in the product).
 * Every error names the repository or the revision asked for and carries
 * libgit2's own message.
 */
#ifndef KTEST_VCS_H
#define KTEST_VCS_H

#include <stdbool.h>
#include <stddef.h>

#include "ktest/bisect.h"

struct kvcs;

/* One commit, as the layer hands it out. */
struct kvcs_commit {
	char id[KB_ID_LEN];	/* full hex id */
	char *subject;		/* first line of the message */
};

struct kvcs_list {
	struct kvcs_commit *v;
	size_t n;
};

void kvcs_list_free(struct kvcs_list *l);

/*
 * Opens the work tree at path (BUILD_DIR). Returns NULL with the reason in
 * err ("BUILD_DIR /x is not a git work tree: ...").
 */
struct kvcs *kvcs_open(const char *path, char *err, size_t errlen);
void kvcs_close(struct kvcs *v);

/* The last error, e.g. "unknown revision 'v9.9': revspec 'v9.9' not found". */
const char *kvcs_error(const struct kvcs *v);

/*
 * Any revision git accepts (tags, full and short ids, HEAD~n,
 * v6.1^{commit}, branches), peeled to a commit. 0 or -1.
 */
int kvcs_resolve(struct kvcs *v, const char *rev, struct kvcs_commit *out);
void kvcs_commit_clear(struct kvcs_commit *c);

/* Is a an ancestor of b (or b itself)? 1, 0, or -1 on error. */
int kvcs_is_ancestor(struct kvcs *v, const char *a, const char *b);

/*
 * The commits of from..to with from included (from's parents excluded:
 * "from^@..to"), oldest first, topologically; first parents only on
 * request. from must be an ancestor of to (else an error naming both).
 * from == NULL: everything reachable from to.
 */
int kvcs_range(struct kvcs *v, const char *from, const char *to,
	       bool first_parent, struct kvcs_list *out);

/*
 * git cherry FROM TO: the commits of FROM..TO whose change is not already
 * in FROM (by patch id), oldest first. ktest.pl broke on the "-" lines;
 * those are simply not listed here.
 */
int kvcs_cherry(struct kvcs *v, const char *upstream, const char *head,
		struct kvcs_list *out);

/* Files a commit changes against its first parent (all of them for a root). */
int kvcs_touched_files(struct kvcs *v, const char *id, char ***paths,
		       size_t *n);
void kvcs_free_paths(char **paths, size_t n);

/*
 * The bisect graph of bad --not goods (see struct kb_graph), limited to
 * paths when npaths > 0 (treesame marks and git's history simplification),
 * first parents only on request. Merge bases of bad with goods that are no
 * ancestors of bad go to *bases (git tests those first). The graph is freed
 * with kvcs_graph_free().
 */
int kvcs_bisect_graph(struct kvcs *v, const char *bad,
		      const char *const *goods, size_t ngoods,
		      const char *const *paths, size_t npaths,
		      bool first_parent, struct kb_graph *g,
		      char ***bases, size_t *nbases);
void kvcs_graph_free(struct kb_graph *g);

/* Files in the work tree that differ from HEAD or the index (git status). */
int kvcs_dirty_files(struct kvcs *v, char ***paths, size_t *n);
/*
 * A checkout through this handle has left the work tree as the index, or
 * kvcs_check_clean() found it so: kvcs_checkout_again() then writes only
 * the files that change.
 */
bool kvcs_synced(const struct kvcs *v);
/*
 * 0 when no tracked file has local changes (the handle is then synced);
 * 1 when some do, the error naming them (up to 10); -1 when the status
 * cannot be read.
 */
int kvcs_check_clean(struct kvcs *v);

/*
 * Checks a commit out into the work tree and detaches HEAD at it. Files
 * that do not change keep their mtime, so kbuild stays incremental. With
 * local changes it refuses and names the files, unless force.
 */
int kvcs_checkout(struct kvcs *v, const char *id, bool force);
/*
 * A forced checkout of only the files whose index entry differs from id
 * (written, added, removed; the index updated, HEAD detached at id). The
 * rest of the work tree is not looked at: a local change to a file that
 * id and the index share stays, as "git checkout" keeps it. For a tree
 * whose work tree is known to match its index (after kvcs_checkout() with
 * force): on a kernel tree ~50 ms instead of ~0.5 s for kvcs_checkout(),
 * which compares every file of the work tree.
 */
int kvcs_checkout_changed(struct kvcs *v, const char *id);
/*
 * What a run's steps check out with (forced): the whole work tree the first
 * time on this handle, kvcs_checkout(v, id, true), then only the files that
 * differ from the index, kvcs_checkout_changed(): nothing but ktest's own
 * checkouts changed the tree in between, unless a hook did, and then its
 * change to a file the commits share stays, as with ktest.pl's checkouts.
 */
int kvcs_checkout_again(struct kvcs *v, const char *id);
/*
 * onto checked out (forced), then revert's changes taken back on top of it
 * in the work tree (HEAD stays at onto; the files differ from it): a
 * culprit's revert to test. Returns 0, or -1 with the error; *conflicts
 * when the revert does not apply cleanly (nothing to test).
 */
int kvcs_checkout_revert(struct kvcs *v, const char *onto, const char *revert,
			 bool *conflicts);
/*
 * A checkout killed before it ended (SIGKILL, the OOM killer) leaves the
 * index's and HEAD's locks in the git directory; every checkout above
 * removes the ones a killed ktest's checkout left (each checkout is noted
 * there while it runs: "ktest-checkout-PID-START-BOOTID") before it
 * starts. What it removed, once after each such checkout, for the log;
 * NULL when nothing. A lock that has no such note stays, and the error of
 * the checkout it stops names it.
 */
const char *kvcs_note(struct kvcs *v);

/* The commit HEAD points at. */
int kvcs_head(struct kvcs *v, struct kvcs_commit *out);

/* The URL of remote name ("origin"), or NULL when there is none. malloc'd. */
char *kvcs_remote_url(struct kvcs *v, const char *name);

/* The branch HEAD is on ("master"), or NULL when HEAD is detached. malloc'd. */
char *kvcs_branch(struct kvcs *v);

/*
 * A separate work tree at path with id checked out, for building several
 * commits at once; removed (and pruned) by kvcs_worktree_remove().
 */
int kvcs_worktree_add(struct kvcs *v, const char *name, const char *path,
		      const char *id);
int kvcs_worktree_remove(struct kvcs *v, const char *name);

/*
 * A work tree of ours at path (under STATE_DIR) that is not one of v's
 * repository's: of another repository (BUILD_DIR changed since it was
 * made), or one whose repository is gone; or one of v's left half made,
 * its kvcs_worktree_add() killed before it ended (each add is noted in
 * the git directory while it runs: "ktest-adding-PID-START-BOOTID").
 * Removes it so that it can be added again: KVCS_RECLAIMED_OTHER or
 * KVCS_RECLAIMED_HALF when it did, 0 when path is v's work tree or holds
 * none, -1 (kvcs_error) when it cannot remove it.
 */
enum { KVCS_RECLAIMED_OTHER = 1, KVCS_RECLAIMED_HALF = 2 };
int kvcs_worktree_reclaim(struct kvcs *v, const char *path);

/*
 * A worktree name for a work tree at path: base, '-' and a hash of path,
 * so that the work trees of two STATE_DIRs of one repository do not share
 * a name. malloc'd.
 */
char *kvcs_worktree_name(const char *base, const char *path);

#endif
