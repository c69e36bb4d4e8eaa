/* SPDX-License-Identifier: GPL-2.0-only */
/* Small questions about text, asked by more than one reader. */
#ifndef KTEST_TEXT_H
#define KTEST_TEXT_H

#include <stdbool.h>

/* Empty or only white space (Perl's \s): ktest.pl's "not defined". */
bool ktext_blank(const char *s);
/* Well-formed UTF-8: no overlong forms, surrogates or code points > U+10FFFF. */
bool ktext_utf8(const char *s);
/* One or more letters, digits or underscores. */
bool ktext_word(const char *s);

#endif
