/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the fuzz targets whose code under test reads or writes files: one
 * temporary directory per process (in TMPDIR, else /tmp), made on first use
 * and removed with everything in it when the process exits.
 */
#ifndef KTEST_FUZZ_TMPDIR_H
#define KTEST_FUZZ_TMPDIR_H

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[4096];

static int fuzz_rm(const char *path, const struct stat *st, int type,
		   struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void fuzz_tmpdir_rm(void)
{
	if (fuzz_dir[0])
		nftw(fuzz_dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* The directory, made on the first call; aborts when it cannot be made. */
static inline const char *fuzz_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	if (fuzz_dir[0])
		return fuzz_dir;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/ktest-fuzz.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(fuzz_dir)) {
		perror(fuzz_dir);
		abort();
	}
	atexit(fuzz_tmpdir_rm);
	return fuzz_dir;
}

/* Writes data to path (made or truncated); aborts on failure. */
static inline void fuzz_write(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;

	if (fd < 0) {
		perror(path);
		abort();
	}
	while (size) {
		ssize_t w = write(fd, p, size);

		if (w <= 0) {
			perror(path);
			abort();
		}
		p += w;
		size -= (size_t)w;
	}
	close(fd);
}

#endif
