// SPDX-License-Identifier: GPL-2.0-only
/*
 * "NAME =~ s/pattern/replacement/flags": ktest.pl runs
 * eval "\$value =~ EXPR", i.e. any Perl. We take the s/// it is meant for,
 * parse it as Perl's tokenizer would, match with PCRE2 and build the
 * result ourselves. Whatever would make Perl do more than substitute (the
 * e flag, variables, array elements, tr///, trailing code) is refused with
 * the reason.
 */
#include "subst.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

/*
 * PCRE2 before 10.45 can miss matches of patterns like (?=a)a?a because
 * of its first/last code unit optimisation (PCRE2Project/pcre2#444).
 * Config values are short: trade the speed for Perl's answer.
 */
#define KSUBST_PCRE2_OPTS PCRE2_NO_START_OPTIMIZE

/* A piece of the replacement: literal text, or capture group n ($&: 0). */
struct rpiece {
	int group;		/* -1: lit[off .. off + len) */
	size_t off, len;
};

struct subst {
	struct sbuf pat;	/* the pattern, as PCRE2 gets it */
	struct sbuf lit;	/* the replacement's literal text */
	struct rpiece *pieces;
	size_t npieces;
	uint32_t copts;		/* PCRE2_CASELESS ... */
	bool global;
	bool pat_vars;		/* Perl interpolates the pattern */
	bool repl_vars;		/* ... and the replacement: not with ' */
	char *err;
	size_t errlen;
};

/* Records why in sb->err; always -1. */
static __attribute__((format(printf, 2, 3)))
int fail(struct subst *sb, const char *fmt, ...)
{
	va_list ap;

	if (!sb->err || !sb->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(sb->err, sb->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is_word(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static char closing(char open)
{
	const char *pairs = "()[]{}<>";
	const char *at = strchr(pairs, open);

	return at && (at - pairs) % 2 == 0 ? at[1] : open;
}

/*
 * One delimited part, from just after its opening delimiter. Bracketing
 * delimiters nest; a backslash always protects the next character. Perl
 * drops the backslash of an escaped non-bracketing delimiter in a
 * pattern, so with s|a\|b|X| the | is alternation again.
 */
static int scan_part(struct subst *sb, const char **pp, char open,
		     bool unescape, struct sbuf *out)
{
	char close = closing(open);
	const char *p = *pp;
	int depth = 0;

	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			if (!(unescape && open == close && p[1] == close))
				sbuf_addc(out, '\\');
			sbuf_addc(out, *++p);
			continue;
		}
		if (*p == close) {
			if (!depth) {
				*pp = p + 1;
				return 0;
			}
			depth--;
		} else if (*p == open) {
			depth++;
		}
		sbuf_addc(out, *p);
	}
	return fail(sb, "missing closing '%c' in s///", close);
}

static int fail_var(struct subst *sb, const char *p)
{
	if (!*p)
		return fail(sb, "a final $ in the replacement must be written \\$");
	return fail(sb,
		    "'$%c' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported",
		    *p);
}

static void add_piece(struct subst *sb, int group, size_t off, size_t len)
{
	sb->pieces = xrealloc(sb->pieces,
			      (sb->npieces + 1) * sizeof(*sb->pieces));
	sb->pieces[sb->npieces++] = (struct rpiece){ group, off, len };
}

static void add_literal(struct subst *sb, const char *s, size_t n)
{
	struct rpiece *last = sb->npieces ? &sb->pieces[sb->npieces - 1] : NULL;

	if (last && last->group < 0)
		last->len += n;
	else
		add_piece(sb, -1, sb->lit.len, n);
	sbuf_addn(&sb->lit, s, n);
}

/* What Perl would interpolate in a pattern: $name, @name, $$, $. ... */
static int check_pattern_vars(struct subst *sb)
{
	const char *p = sbuf_str(&sb->pat);

	if (!sb->pat_vars)
		return 0;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '$' && p[1] && !strchr("()| \t\n", p[1])) {
			return fail(sb,
				    "'$%c' in the pattern is a Perl variable; ktest does not run Perl (write \\$ for a literal $)",
				    p[1]);
		} else if (*p == '@' && (is_word(p[1]) || (p[1] &&
					 strchr("{$:+-", p[1])))) {
			return fail(sb,
				    "'@%c' in the pattern is a Perl array; ktest does not run Perl (write \\@ for a literal @)",
				    p[1]);
		}
	}
	return 0;
}

/* $1 ... ${12} $&, from just after the $; returns the group or -1. */
static int parse_group_var(struct subst *sb, const char **pp)
{
	const char *p = *pp, *end = p + 1;
	bool braced = *p == '{';
	long n = 0;

	if (*p != '&') {
		char *e;

		if (!isdigit((unsigned char)p[braced]) || p[braced] == '0')
			return fail_var(sb, p);
		n = strtol(p + braced, &e, 10);
		end = e;
		if (n > 65535 || (braced && *end++ != '}'))
			return fail_var(sb, p);
	}
	if (!braced && (*end == '[' || *end == '{'))
		return fail(sb,
			    "Perl reads '$%.*s%c' as an array or hash element; write ${%ld}\\%c",
			    (int)(end - p), p, *end, n, *end);
	*pp = end;
	return (int)n;
}

/* A backslash escape of the replacement, from just after the \. */
static int parse_escape(struct subst *sb, const char **pp)
{
	static const char from[] = "ntrfea", to[] = "\n\t\r\f\033\a";
	const char *p = *pp;
	const char *at = strchr(from, *p);

	*pp = p + 1;
	if (*p >= '1' && *p <= '9' && !isdigit((unsigned char)p[1])) {
		add_piece(sb, *p - '0', 0, 0);
		return 0;
	}
	if (isdigit((unsigned char)*p))
		return fail(sb,
			    "'\\%.*s' is an octal character escape in Perl; not supported",
			    isdigit((unsigned char)p[1]) ? 2 : 1, p);
	if (*p && at) {
		add_literal(sb, &to[at - from], 1);
		return 0;
	}
	if (isalnum((unsigned char)*p))
		return fail(sb, "unsupported escape '\\%c' in the replacement",
			    *p);
	add_literal(sb, p, 1);
	return 0;
}

/* The replacement, as a Perl double-quoted string. */
static int parse_replacement(struct subst *sb, const char *p)
{
	while (*p) {
		if (!sb->repl_vars) {
			/* s'a'b': \\ and \' only */
			if (*p == '\\' && (p[1] == '\\' || p[1] == '\''))
				p++;
			add_literal(sb, p++, 1);
		} else if (*p == '\\') {
			p++;
			if (parse_escape(sb, &p))
				return -1;
		} else if (*p == '$') {
			int n;

			p++;
			n = parse_group_var(sb, &p);
			if (n < 0)
				return -1;
			add_piece(sb, n, 0, 0);
		} else if (*p == '@' && (is_word(p[1]) || (p[1] &&
					 strchr("{$:+-", p[1])))) {
			return fail(sb,
				    "'@%c' in the replacement is a Perl array; write \\@ for a literal @",
				    p[1]);
		} else {
			add_literal(sb, p++, 1);
		}
	}
	return 0;
}

static int parse_flags(struct subst *sb, const char **pp)
{
	const char *p = *pp;
	int nx = 0;

	for (; isalpha((unsigned char)*p); p++) {
		switch (*p) {
		case 'g':
			sb->global = true;
			break;
		case 'i':
			sb->copts |= PCRE2_CASELESS;
			break;
		case 'm':
			sb->copts |= PCRE2_MULTILINE;
			break;
		case 's':
			sb->copts |= PCRE2_DOTALL;
			break;
		case 'x':
			sb->copts |= ++nx > 1 ? PCRE2_EXTENDED_MORE :
				     PCRE2_EXTENDED;
			break;
		case 'e':
			return fail(sb,
				    "the e flag runs the replacement as Perl code; not supported");
		case 'r':
			return fail(sb,
				    "the r flag leaves the value unchanged in ktest.pl; not supported");
		default:
			return fail(sb, "unsupported s/// flag '%c'", *p);
		}
	}
	*pp = p;
	return 0;
}

/* s, optional space, then a delimiter that Perl would take as one */
static int parse_delimiter(struct subst *sb, const char **pp, char *d)
{
	const char *p = skip_space(*pp);

	*d = *p;
	if (!*p)
		return fail(sb, "s/// is missing its delimiters");
	if (is_word(*p) || *p == '\\')
		return fail(sb,
			    "'%c' as an s/// delimiter is not supported; use a punctuation character",
			    *p);
	*pp = p + 1;
	return 0;
}

/* Which s/// this is not. */
static int refuse_other(struct subst *sb, const char *p)
{
	if (!strncmp(p, "tr", 2) && !is_word(p[2]))
		return fail(sb, "tr/// is not supported; ktest only applies s///");
	if (*p == 'y' && !is_word(p[1]))
		return fail(sb, "y/// is not supported; ktest only applies s///");
	return fail(sb,
		    "only s/PATTERN/REPLACEMENT/FLAGS is supported; ktest does not run Perl code");
}

static int parse(struct subst *sb, const char *expr)
{
	struct sbuf repl;
	const char *p = skip_space(expr);
	char d;
	int ret = -1;

	if (*p != 's' || is_word(p[1]))
		return refuse_other(sb, p);
	p++;
	if (parse_delimiter(sb, &p, &d) ||
	    scan_part(sb, &p, d, true, &sb->pat))
		return -1;
	sb->pat_vars = d != '\'';
	/* s{a}{b}, s{a} {b} and s{a}/b/: the second part has its own */
	if (closing(d) != d && parse_delimiter(sb, &p, &d))
		return -1;
	sb->repl_vars = d != '\'';
	sbuf_init(&repl);
	if (scan_part(sb, &p, d, false, &repl) || parse_flags(sb, &p))
		goto out;
	p = skip_space(p);
	if (*p == ';')
		p = skip_space(p + 1);
	if (*p) {
		fail(sb, "unexpected '%s' after s///; ktest does not run Perl code",
		     p);
		goto out;
	}
	if (!sb->pat.len) {
		fail(sb,
		     "an empty pattern reuses Perl's last successful match; not supported");
		goto out;
	}
	if (check_pattern_vars(sb))
		goto out;
	ret = parse_replacement(sb, sbuf_str(&repl));
out:
	sbuf_free(&repl);
	return ret;
}

static pcre2_code *compile(struct subst *sb)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	pcre2_code *re;
	int err;

	re = pcre2_compile((PCRE2_SPTR)sbuf_str(&sb->pat), sb->pat.len,
			   sb->copts | KSUBST_PCRE2_OPTS, &err, &off, NULL);
	if (re)
		return re;
	pcre2_get_error_message(err, msg, sizeof(msg));
	fail(sb, "bad regex /%s/: %s at offset %zu", sbuf_str(&sb->pat),
	     (char *)msg, (size_t)off);
	return NULL;
}

static void subst_init(struct subst *sb, char *err, size_t errlen)
{
	memset(sb, 0, sizeof(*sb));
	sbuf_init(&sb->pat);
	sbuf_init(&sb->lit);
	sb->err = err;
	sb->errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
}

static void subst_free(struct subst *sb)
{
	sbuf_free(&sb->pat);
	sbuf_free(&sb->lit);
	free(sb->pieces);
}

static void add_replacement(const struct subst *sb, const char *subj,
			    const PCRE2_SIZE *ov, int rc, struct sbuf *out)
{
	size_t i;

	for (i = 0; i < sb->npieces; i++) {
		const struct rpiece *pc = &sb->pieces[i];
		int g = pc->group;

		if (g < 0)
			sbuf_addn(out, sb->lit.buf + pc->off, pc->len);
		else if (g < rc && ov[2 * g] != PCRE2_UNSET)
			sbuf_addn(out, subj + ov[2 * g],
				  ov[2 * g + 1] - ov[2 * g]);
		/* else: an unset or missing group is undef, i.e. "" */
	}
}

/*
 * Perl's s///g: after an empty match at p, the next match may not be
 * empty at p (but may be longer there, or start later). That is exactly
 * PCRE2_NOTEMPTY_ATSTART: x* with g turns "abc" into "-a-b-c-", as Perl does.
 */
static int substitute(struct subst *sb, pcre2_code *re, const char *subj,
		      struct sbuf *out)
{
	size_t len = strlen(subj), start = 0, copied = 0;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	uint32_t mopts = 0;
	PCRE2_SIZE *ov;
	int rc;

	if (!md)
		return fail(sb, "out of memory");
	ov = pcre2_get_ovector_pointer(md);
	while ((rc = pcre2_match(re, (PCRE2_SPTR)subj, len, start, mopts, md,
				 NULL)) > 0) {
		if (ov[1] < ov[0]) {
			rc = PCRE2_ERROR_BADSUBSPATTERN;
			break;
		}
		sbuf_addn(out, subj + copied, ov[0] - copied);
		add_replacement(sb, subj, ov, rc, out);
		copied = ov[1];
		if (!sb->global)
			break;
		start = ov[1];
		mopts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART : 0;
	}
	pcre2_match_data_free(md);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(rc, msg, sizeof(msg));
		return fail(sb, "matching /%s/ failed: %s", sbuf_str(&sb->pat),
			    (char *)msg);
	}
	sbuf_addn(out, subj + copied, len - copied);
	return 0;
}

int ksubst_apply(const char *expr, const char *value, char **out,
		 char *err, size_t errlen)
{
	struct subst sb;
	struct sbuf res;
	pcre2_code *re = NULL;
	int ret = -1;

	*out = NULL;
	subst_init(&sb, err, errlen);
	sbuf_init(&res);
	if (parse(&sb, expr))
		goto out;
	re = compile(&sb);
	if (!re || substitute(&sb, re, value, &res))
		goto out;
	*out = sbuf_detach(&res);
	ret = 0;
out:
	pcre2_code_free(re);
	sbuf_free(&res);
	subst_free(&sb);
	return ret;
}

int ksubst_check(const char *expr, char *err, size_t errlen)
{
	struct subst sb;
	pcre2_code *re = NULL;
	int ret = -1;

	subst_init(&sb, err, errlen);
	if (!parse(&sb, expr)) {
		re = compile(&sb);
		ret = re ? 0 : -1;
	}
	pcre2_code_free(re);
	subst_free(&sb);
	return ret;
}
