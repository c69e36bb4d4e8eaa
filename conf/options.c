// SPDX-License-Identifier: GPL-2.0-only
#include "options.h"

#include "strmap.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct kopt_desc kopt_table[KOPT__COUNT] = {
#define KOPT(n, t, d, f, c, h) \
	[KOPT_##n] = { .name = #n, .type = t, .def = d, .flags = f, \
		       .choices = c, .help = h },
#include "options.def"
#undef KOPT
};

/* lower-case names, filled once */
static char lnames[KOPT__COUNT][32];

static void init_lnames(void)
{
	static bool done;

	if (done)
		return;
	for (size_t i = 0; i < KOPT__COUNT; i++) {
		const char *s = kopt_table[i].name;
		size_t j;

		for (j = 0; s[j] && j < sizeof(lnames[i]) - 1; j++)
			lnames[i][j] = (char)tolower((unsigned char)s[j]);
		lnames[i][j] = '\0';
	}
	done = true;
}

const char *kopt_lname(const struct kopt_desc *d)
{
	init_lnames();
	return lnames[d - kopt_table];
}

/* name -> descriptor, built on first use (the table never changes) */
static struct strmap by_name;

const struct kopt_desc *kopt_find(const char *name)
{
	if (!strmap_size(&by_name))
		for (size_t i = 0; i < KOPT__COUNT; i++)
			strmap_put(&by_name, kopt_table[i].name,
				   (void *)&kopt_table[i]);
	return strmap_get(&by_name, name);
}

const struct kopt_desc *kopt_find_any_case(const char *name)
{
	init_lnames();
	for (size_t i = 0; i < KOPT__COUNT; i++)
		if (!strcasecmp(kopt_table[i].name, name))
			return &kopt_table[i];
	return NULL;
}

/*
 * Optimal string alignment distance (Levenshtein plus swapping two
 * neighbours, the commonest typo: "boto" is one edit from "boot").
 * Case-insensitive; gives up (limit + 1) once every path costs more.
 */
size_t kopt_edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *block, *prev2, *prev, *cur, d = limit + 1;

	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	block = calloc(3 * (lb + 1), sizeof(size_t));
	if (!block)
		return limit + 1;
	prev2 = block;
	prev = prev2 + lb + 1;
	cur = prev + lb + 1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t best;

		cur[0] = best = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = toupper((unsigned char)a[i - 1]);
			int cb = toupper((unsigned char)b[j - 1]);
			size_t v = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == toupper((unsigned char)b[j - 2]) &&
			    toupper((unsigned char)a[i - 2]) == cb &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			goto out;
		/* rotate the three rows */
		{
			size_t *t = prev2;

			prev2 = prev;
			prev = cur;
			cur = t;
		}
	}
	d = prev[lb];
out:
	free(block);
	return d > limit ? limit + 1 : d;
}

/* A typo is at most a third of the word wrong (and at least one edit). */
static size_t typo_limit(const char *word)
{
	size_t l = strlen(word) / 3;

	return l ? l : 1;
}

const char *kopt_suggest(const char *name)
{
	size_t limit = typo_limit(name), best = limit + 1;
	const char *pick = NULL;

	for (size_t i = 0; i < KOPT__COUNT; i++) {
		size_t d = kopt_edit_distance(name, kopt_table[i].name, limit);

		if (d < best) {
			best = d;
			pick = kopt_table[i].name;
		}
	}
	return pick;
}

const char *kopt_suggest_choice(const char *choices, const char *word)
{
	static char pick[64];
	size_t limit = typo_limit(word), best = limit + 1;
	const char *p = choices;
	bool found = false;

	while (p && *p) {
		const char *e = strchr(p, '|');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char c[64];
		size_t d;

		if (n < sizeof(c)) {
			memcpy(c, p, n);
			c[n] = '\0';
			d = kopt_edit_distance(word, c, limit);
			if (d < best) {
				best = d;
				memcpy(pick, c, n + 1);
				found = true;
			}
		}
		p = e ? e + 1 : NULL;
	}
	return found ? pick : NULL;
}

bool kopt_parse_int(const char *s, long *out)
{
	char *end;
	long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

bool kopt_truthy(const char *s)
{
	return s && *s && strcmp(s, "0") != 0;
}

const char *kopt_type_name(enum kopt_type t)
{
	switch (t) {
	case KT_STR: return "text";
	case KT_CMD: return "command";
	case KT_PATH: return "path";
	case KT_REV: return "git revision";
	case KT_LIST: return "list";
	case KT_INT: return "number";
	case KT_BOOL: return "boolean (0 or 1)";
	case KT_ENUM: return "choice";
	case KT_REGEX: return "regular expression";
	case KT_SIGNAL: return "signal";
	case KT_BUILDTYPE: return "build type";
	}
	return "value";
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);
	const char *p = choices;

	while (p) {
		if (!strncmp(p, v, n) && (p[n] == '|' || p[n] == '\0'))
			return true;
		p = strchr(p, '|');
		if (p)
			p++;
	}
	return false;
}

static bool check_signal(const char *v)
{
	static const char *const names[] = {
		"HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE",
		"KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM",
		"CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", NULL
	};
	long n;

	if (kopt_parse_int(v, &n))
		return n > 0 && n < 65;
	if (!strncmp(v, "SIG", 3))
		v += 3;
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return true;
	return false;
}

static bool check_regex(const char *v, char *why, size_t whylen)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)v, PCRE2_ZERO_TERMINATED,
				       0, &err, &off, NULL);
	PCRE2_UCHAR msg[160];

	if (re) {
		pcre2_code_free(re);
		return true;
	}
	pcre2_get_error_message(err, msg, sizeof(msg));
	snprintf(why, whylen, "is not a valid regular expression: %s at offset %zu",
		 (char *)msg, (size_t)off);
	return false;
}

static bool check_buildtype(const char *v)
{
	size_t n = strlen(v);

	if (!strcmp(v, "oldconfig") || !strcmp(v, "nobuild"))
		return true;
	if (!strncmp(v, "useconfig:", 10))
		return v[10] != '\0';
	/* any make config target: defconfig, allnoconfig, foo_defconfig... */
	if (n < 6 || strcmp(v + n - 6, "config"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("_.-/", v[i]))
			return false;
	return true;
}

bool kopt_check_value(const struct kopt_desc *d, const char *v,
		      char *why, size_t whylen, char *hint, size_t hintlen)
{
	long n;
	const char *s;

	why[0] = hint[0] = '\0';
	switch (d->type) {
	case KT_INT:
		if (kopt_parse_int(v, &n))
			return true;
		snprintf(why, whylen, "'%s' is not a whole number", v);
		return false;
	case KT_BOOL:
		if (kopt_parse_int(v, &n))
			return true;
		snprintf(why, whylen, "'%s' is not 0 or 1", v);
		if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
		    !strcasecmp(v, "no") || !strcasecmp(v, "false"))
			snprintf(hint, hintlen,
				 "ktest.pl would read any word as true; write 0 or 1");
		return false;
	case KT_ENUM:
		if (in_choices(d->choices, v))
			return true;
		snprintf(why, whylen, "'%s' is not one of: %s", v, d->choices);
		s = kopt_suggest_choice(d->choices, v);
		if (s)
			snprintf(hint, hintlen, "did you mean '%s'?", s);
		return false;
	case KT_REGEX:
		return check_regex(v, why, whylen);
	case KT_SIGNAL:
		if (check_signal(v))
			return true;
		snprintf(why, whylen, "'%s' is not a signal name or number", v);
		snprintf(hint, hintlen, "use a name like INT, TERM or KILL");
		return false;
	case KT_BUILDTYPE:
		if (check_buildtype(v))
			return true;
		snprintf(why, whylen,
			 "'%s' is not a build type (oldconfig, nobuild, useconfig:FILE or a *config target)",
			 v);
		return false;
	case KT_STR:
	case KT_CMD:
	case KT_PATH:
	case KT_REV:
	case KT_LIST:
		break;
	}
	return true;
}
