/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Scratch directories of the unit tests, and counting what a directory
 * holds. Include after cmocka.h.
 */
#ifndef KTEST_TEST_SCRATCH_H
#define KTEST_TEST_SCRATCH_H

#include <dirent.h>
#include <stdlib.h>

#include "conf/strmap.h"

/* A new directory /tmp/ktest-TAG.XXXXXX (malloc'd). */
static inline char *tmp_dir_new(const char *tag)
{
	char *dir = xasprintf("/tmp/ktest-%s.XXXXXX", tag);

	assert_non_null(mkdtemp(dir));
	return dir;
}

/* rm -rf dir, and frees the name. */
static inline void tmp_dir_rm(char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* The entries of dir, but those whose name starts with '.'. */
static inline size_t dir_count(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#endif
