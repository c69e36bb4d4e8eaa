/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The option table: names, types, ktest.pl's defaults, and value checks.
 */
#ifndef KTEST_OPTIONS_H
#define KTEST_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

enum kopt_type {
	KT_STR,		/* free text */
	KT_CMD,		/* a shell command line */
	KT_PATH,	/* a file or directory */
	KT_REV,		/* a git revision */
	KT_LIST,	/* space-separated words */
	KT_INT,		/* a whole number, may be negative */
	KT_BOOL,	/* a number: 0 is false, anything else true */
	KT_ENUM,	/* one of a fixed set of words */
	KT_REGEX,	/* a Perl-compatible regular expression */
	KT_SIGNAL,	/* a signal name (INT, SIGKILL) or number */
	KT_BUILDTYPE,	/* oldconfig, nobuild, useconfig:FILE, a config target */
};

enum {
	KF_DEFAULTS_ONLY = 1 << 0,	/* only in DEFAULTS */
	KF_GLOBAL = 1 << 1,		/* read from the default key only */
	KF_BOX = 1 << 2,		/* describes the test box */
	KF_UPSTREAM = 1 << 3,		/* added to ktest.pl after 6.1 */
	KF_KTEST = 1 << 4,		/* ktest's own: ktest.pl has none */
};

enum kopt_id {
#define KOPT(name, type, def, flags, choices, help) KOPT_##name,
#include "options.def"
#undef KOPT
	KOPT__COUNT
};

struct kopt_desc {
	const char *name;	/* upper case, as in ktest.conf */
	enum kopt_type type;
	const char *def;	/* ktest.pl's default, or NULL */
	unsigned int flags;
	const char *choices;	/* KT_ENUM: "a|b|c" */
	const char *help;
};

extern const struct kopt_desc kopt_table[KOPT__COUNT];

/* By upper-case name; NULL if unknown. */
const struct kopt_desc *kopt_find(const char *name);
/* By name in either case (native format); NULL if unknown. */
const struct kopt_desc *kopt_find_any_case(const char *name);
/* The lower-case name used by the native format. */
const char *kopt_lname(const struct kopt_desc *d);
static inline enum kopt_id kopt_id_of(const struct kopt_desc *d)
{
	return (enum kopt_id)(d - kopt_table);
}

/*
 * The known option closest to an unknown name (edit distance), or NULL if
 * nothing is close enough to be a plausible typo.
 */
const char *kopt_suggest(const char *name);
/* Nearest of a '|'-separated choice list; NULL if none is close. */
const char *kopt_suggest_choice(const char *choices, const char *word);

/*
 * Checks a fully expanded value against the option's type. Returns true if
 * it fits; otherwise writes a one-line reason (and a hint, when there is one)
 * into why/hint.
 */
bool kopt_check_value(const struct kopt_desc *d, const char *value,
		      char *why, size_t whylen, char *hint, size_t hintlen);

/* Parsing helpers shared with the readers. */
bool kopt_parse_int(const char *s, long *out);
/* Perl truthiness of a stored value: undefined, "" and "0" are false. */
bool kopt_truthy(const char *s);
const char *kopt_type_name(enum kopt_type t);

/* Levenshtein distance, capped at limit + 1 (cheap for long strings). */
size_t kopt_edit_distance(const char *a, const char *b, size_t limit);

#endif
