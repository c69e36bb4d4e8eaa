/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Diagnostics: every error and warning carries where it came from
 * (file:line, or the option name) and, where we can, what to do about it.
 */
#ifndef KTEST_DIAG_H
#define KTEST_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* Where a value or a construct came from. file == NULL: nowhere in a file. */
struct korigin {
	const char *file;
	int line;
};

#define KORIGIN_NONE ((struct korigin){ NULL, 0 })

struct kdiag {
	FILE *out;		/* where messages go; NULL = stderr */
	int nerrors;
	int nwarnings;
	bool quiet;		/* count, but print nothing */
	bool no_warnings;	/* drop warnings */
	char last[512];		/* the last error's text, for tests */
	bool mute_note;		/* the previous message was dropped */
};

void kdiag_init(struct kdiag *d);

/* "file:line: error: message" (or "ktest: error: message" without origin) */
void kdiag_error(struct kdiag *d, const struct korigin *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kdiag_warn(struct kdiag *d, const struct korigin *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A follow-up line for the previous message ("  hint: ...") */
void kdiag_note(struct kdiag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void kdiag_verror(struct kdiag *d, const struct korigin *o, const char *fmt,
		  va_list ap);

#endif
