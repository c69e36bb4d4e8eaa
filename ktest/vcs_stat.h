/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The quick answer to "does any tracked file differ from HEAD?", as git
 * gets it: the index's cached tree against HEAD's, and the stat data the
 * index keeps against each file's (lstat in a few threads), hashing only
 * the files whose stat data does not settle it. kvcs_dirty_files() asks
 * it first and reads the full status only when it is not sure.
 */
#ifndef KTEST_VCS_STAT_H
#define KTEST_VCS_STAT_H

#include <stdbool.h>
#include <sys/stat.h>

#include <git2.h>

/*
 * 1 when every tracked file is as HEAD has it (nothing staged, modified,
 * deleted, retyped); 0 when that is not proven: a file whose stat data
 * and content differ from its index entry, too many files to hash, a
 * conflict, a staged change, a filter, any error. A 0 is no verdict:
 * the caller reads the full status then. tree gets the index's tree
 * (HEAD's) when the answer is 1.
 *
 * With staged changes, the index's trees are written to the object
 * store to be compared (what "git write-tree" does); a clean index
 * writes nothing.
 */
int kvcs_stat_clean(git_repository *repo, git_oid *tree);

/*
 * Is the file at path (lstat'ed as st) the blob id, as git stores it (a
 * symlink: its target's name)? No filters are applied: a filtered file
 * is not.
 */
bool kvcs_is_blob(const char *path, const struct stat *st, const git_oid *id);

#endif
