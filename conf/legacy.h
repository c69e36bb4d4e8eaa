/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ktest.conf reader: ktest.pl's config syntax, read as ktest.pl reads it
 * (its quirks included, with a warning where a quirk silently changes what a
 * line probably means).
 */
#ifndef KTEST_LEGACY_H
#define KTEST_LEGACY_H

#include "model.h"

/* Longest line we accept (ktest.pl has no limit; nothing real comes close). */
#define KLEGACY_MAX_LINE (64 * 1024)
/* INCLUDE nesting limit (ktest.pl recurses until Perl runs out of memory). */
#define KLEGACY_MAX_DEPTH 32

/*
 * Reads path into c (which may hold -D variables already). Returns 0, or -1
 * after reporting the first error with its file:line (ktest.pl stops at the
 * first error too).
 */
int klegacy_read(struct kconfig *c, const char *path);

/* The same from a buffer (fuzzing, tests); name is used in messages. */
int klegacy_read_buf(struct kconfig *c, const char *name, const char *buf,
		     size_t len);

/* Does this file look like ktest.conf syntax (rather than the native one)? */
int klegacy_sniff(const char *path);

#endif
