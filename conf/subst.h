/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * "NAME =~ s/pattern/replacement/flags" edits of ktest.conf, applied with
 * PCRE2 instead of Perl's eval. Supported: s/// with any delimiter (also
 * bracketing pairs s{a}{b}), flags g i m s x; $1..$9, ${1}, $& and \1..\9 in
 * the replacement; \n \t \\ and escaped delimiters. Anything else (the e
 * flag, tr///, arbitrary Perl) is refused with a message: ktest never runs
 * code from a config file.
 */
#ifndef KTEST_SUBST_H
#define KTEST_SUBST_H

#include <stddef.h>

/* Returns 0 and a malloc'd *out, or -1 with a one-line reason in err. */
int ksubst_apply(const char *expr, const char *value, char **out,
		 char *err, size_t errlen);
/* Syntax (and regex) check only. */
int ksubst_check(const char *expr, char *err, size_t errlen);

#endif
