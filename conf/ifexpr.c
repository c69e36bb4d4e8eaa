// SPDX-License-Identifier: GPL-2.0-only
/*
 * IF expressions, evaluated the way ktest.pl's process_expression() does:
 *
 *   1. innermost ( ... ) groups first, each replaced by " 1 " or " 0 ";
 *   2. && and || strictly left to right, no precedence, short-circuit;
 *   3. a comparison at the LAST operator (greedy /(.*)(op)(.*)/);
 *   4. [NOT] DEFINED NAME;
 *   5. NOT expr;
 *   6. a bare integer;
 *   7. anything else is an error.
 *
 * The regexes are ktest.pl's own, run through PCRE2, so corner cases (a
 * newline in the text, "NOTDEFINED X", "00") behave as they do in Perl.
 * The numeric comparisons, which ktest.pl hands to Perl's eval, accept
 * Perl number literals and quoted strings only: see struct pnum.
 */
#include "ifexpr.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strmap.h"

/* NOT NOT NOT ... recurses once per NOT; Perl would go on, we stop here. */
#define KIF_MAX_DEPTH 200

enum {
	RE_ANDOR,	/* s/^(.*?)(\|\||&&)// */
	RE_DEFINED,	/* /^\s*(NOT\s*)?DEFINED\s+(\S+)\s*$/ */
	RE_NOT,		/* s/^\s*NOT\s+(.*)// */
	RE_ZERO,	/* /^\s*0\s*$/ */
	RE_DIGITS,	/* /^\s*\d+\s*$/ */
	RE_NOTWORD,	/* a comparison's left side that starts with NOT */
	RE_COUNT
};

static const char *const re_src[RE_COUNT] = {
	[RE_ANDOR] = "^(.*?)(\\|\\||&&)",
	[RE_DEFINED] = "^\\s*(NOT\\s*)?DEFINED\\s+(\\S+)\\s*$",
	[RE_NOT] = "^\\s*NOT\\s+(.*)",
	[RE_ZERO] = "^\\s*0\\s*$",
	[RE_DIGITS] = "^\\s*\\d+\\s*$",
	[RE_NOTWORD] = "^\\s*NOT\\s",
};

struct ifctx {
	const struct kif_ops *ops;
	struct kdiag *d;
	const struct korigin *o;
	pcre2_code *re[RE_COUNT];	/* compiled on first use */
	pcre2_match_data *md;
};

/* Start and end offsets of up to four groups (0 = the whole match). */
struct span {
	size_t so[4], eo[4];
	bool set[4];
};

static int eval_expr(struct ifctx *c, const char *expr, int depth, bool *res);

static pcre2_code *get_re(struct ifctx *c, int which)
{
	int err;
	PCRE2_SIZE off;

	if (c->re[which])
		return c->re[which];
	c->re[which] = pcre2_compile((PCRE2_SPTR)re_src[which],
				     PCRE2_ZERO_TERMINATED, 0, &err, &off,
				     NULL);
	return c->re[which];
}

/* 1 on a match (groups in *sp), 0 on none, -1 after reporting an error. */
static int re_match(struct ifctx *c, int which, const char *s, struct span *sp)
{
	pcre2_code *re = get_re(c, which);
	PCRE2_SIZE *ov;
	int rc, i;

	if (!re) {
		kdiag_error(c->d, c->o, "internal error: cannot compile /%s/",
			    re_src[which]);
		return -1;
	}
	if (!c->md) {
		c->md = pcre2_match_data_create(8, NULL);
		if (!c->md) {
			kdiag_error(c->d, c->o, "out of memory");
			return -1;
		}
	}
	rc = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, c->md, NULL);
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc < 0) {
		kdiag_error(c->d, c->o, "IF expression too complex to match");
		return -1;
	}
	ov = pcre2_get_ovector_pointer(c->md);
	for (i = 0; i < 4; i++) {
		sp->set[i] = i < rc && ov[2 * i] != PCRE2_UNSET;
		sp->so[i] = sp->set[i] ? ov[2 * i] : 0;
		sp->eo[i] = sp->set[i] ? ov[2 * i + 1] : 0;
	}
	return 1;
}

static bool is_perl_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
	       ch == '\f' || ch == '\v';
}

/* A malloc'd copy of s[0..n) without leading and trailing whitespace */
static char *trimmed(const char *s, size_t n)
{
	while (n && is_perl_space(*s)) {
		s++;
		n--;
	}
	while (n && is_perl_space(s[n - 1]))
		n--;
	return xstrndup(s, n);
}

/*
 * A number as Perl holds it for a comparison: an integer (IV or UV,
 * compared exactly) or a double (NV). A comparison that involves a double
 * is done in doubles, which is what Perl does for the values that can reach
 * it here: see the 9007199254740993 cases in the tests.
 */
struct pnum {
	bool is_int;
	bool neg;		/* is_int: the value is -mag */
	uint64_t mag;
	double nv;
};

static double pnum_double(const struct pnum *v)
{
	if (!v->is_int)
		return v->nv;
	return v->neg ? -(double)v->mag : (double)v->mag;
}

static void pnum_set_double(struct pnum *v, double nv)
{
	v->is_int = false;
	v->nv = nv;
}

/* Perl's unary minus, applied to a number. */
static void pnum_negate(struct pnum *v)
{
	if (!v->is_int) {
		v->nv = -v->nv;
	} else if (v->mag == 0) {
		v->neg = false;
	} else if (v->neg) {
		v->neg = false;
	} else if (v->mag <= (uint64_t)INT64_MAX + 1) {
		v->neg = true;
	} else {
		pnum_set_double(v, -(double)v->mag);
	}
}

/* -1, 0, 1, or 2 when either side is NaN */
static int pnum_cmp(const struct pnum *a, const struct pnum *b)
{
	double x, y;

	if (a->is_int && b->is_int) {
		bool an = a->neg && a->mag, bn = b->neg && b->mag;

		if (an != bn)
			return an ? -1 : 1;
		if (a->mag == b->mag)
			return 0;
		return (a->mag < b->mag) != an ? -1 : 1;
	}
	x = pnum_double(a);
	y = pnum_double(b);
	if (isnan(x) || isnan(y))
		return 2;
	return x < y ? -1 : x > y;
}

static int digit_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return 99;
}

/*
 * Digits of a 0x, 0b, 0o or 0 literal; '_' may appear anywhere, as Perl
 * accepts it (with a "Misplaced _" warning at worst). Past 2^64 Perl goes
 * on in a double after "Integer overflow in ... number".
 */
static bool parse_radix(const char *s, size_t n, int base, struct pnum *v)
{
	uint64_t mag = 0;
	double nv = 0;
	bool overflow = false, any = false;
	size_t i;

	for (i = 0; i < n; i++) {
		int dv = digit_value(s[i]);

		if (s[i] == '_')
			continue;
		if (dv >= base)
			return false;
		any = true;
		nv = nv * base + dv;
		if (mag > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
			overflow = true;
		else
			mag = mag * base + dv;
	}
	if (!any)
		return false;
	v->is_int = !overflow;
	v->neg = false;
	v->mag = mag;
	v->nv = nv;
	return true;
}

/*
 * Length of a run of digits and '_', which starts with a digit unless
 * lead_underscore ("1._5" is 1.5 to Perl).
 */
static size_t digit_run(const char *s, size_t n, bool lead_underscore)
{
	size_t i = 0;

	if (!n || (s[0] == '_' && !lead_underscore))
		return 0;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
		i++;
	return i;
}

/* An integer or a double from decimal text, underscores dropped. */
static void decimal_value(const char *s, size_t n, bool integral,
			  struct pnum *v)
{
	char *clean = xmalloc(n + 1);
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (s[i] != '_')
			clean[k++] = s[i];
	clean[k] = '\0';
	v->neg = false;
	v->is_int = false;
	if (integral) {
		char *end;

		errno = 0;
		v->mag = strtoull(clean, &end, 10);
		v->is_int = errno != ERANGE;
	}
	if (!v->is_int)
		v->nv = strtod(clean, NULL);
	free(clean);
}

/*
 * A decimal literal: 12, 1_000, 1.5, .5, 1., 1.e2, 1e-3. Returns false for
 * anything else, including "1.2.3" (a Perl v-string, numerically 0).
 */
static bool parse_decimal(const char *s, size_t n, struct pnum *v)
{
	size_t i = digit_run(s, n, false);
	bool integral = true;

	if (i < n && s[i] == '.') {
		size_t f = digit_run(s + i + 1, n - i - 1, true);

		if (!i && !(f && s[1] >= '0' && s[1] <= '9'))
			return false;
		i += 1 + f;
		integral = false;
	}
	if (!i)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1, e;

		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		e = digit_run(s + j, n - j, false);
		if (!e)
			return false;
		i = j + e;
		integral = false;
	}
	if (i != n)
		return false;
	decimal_value(s, n, integral, v);
	return true;
}

/* A Perl numeric literal, without sign. */
static bool parse_literal(const char *s, size_t n, struct pnum *v)
{
	if (n >= 2 && s[0] == '0') {
		switch (s[1]) {
		case 'x': case 'X':
			return parse_radix(s + 2, n - 2, 16, v);
		case 'b': case 'B':
			return parse_radix(s + 2, n - 2, 2, v);
		case 'o': case 'O':
			return parse_radix(s + 2, n - 2, 8, v);
		}
		/* 010 is octal 8; 0.5 and 0e1 are decimal */
		if ((s[1] >= '0' && s[1] <= '9') || s[1] == '_')
			return parse_radix(s, n, 8, v);
	}
	return parse_decimal(s, n, v);
}

/* Leading unary + and -: "- -5" is 5, "-+5" is -5, "--5" is an error. */
static bool parse_signed_literal(const char *s, size_t n, struct pnum *v)
{
	size_t i = 0, k;

	while (i < n && (s[i] == '+' || s[i] == '-' || is_perl_space(s[i]))) {
		if (i && s[i] == s[i - 1] && !is_perl_space(s[i]))
			return false;	/* ++ and -- are other operators */
		i++;
	}
	if (!parse_literal(s + i, n - i, v))
		return false;
	for (k = i; k-- > 0; )
		if (s[k] == '-')
			pnum_negate(v);
	return true;
}

/*
 * Perl's numification of a string: leading whitespace, then the longest
 * decimal number (or Inf/NaN), else 0. It stays an integer only if nothing
 * but whitespace follows: "12" is an IV, "12x" is an NV.
 */
static void numify(const char *s, struct pnum *v)
{
	const char *p = s;
	size_t n, i;
	bool neg = false;

	while (is_perl_space(*p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	n = strlen(p);
	if (!strncasecmp(p, "inf", 3) || !strncasecmp(p, "nan", 3)) {
		pnum_set_double(v, tolower((unsigned char)*p) == 'i' ?
				HUGE_VAL : NAN);
		if (neg)
			v->nv = -v->nv;
		return;
	}
	/* the longest prefix that parse_decimal() accepts, without '_' */
	for (i = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (i < n && p[i] == '.' && (i || (p[1] >= '0' && p[1] <= '9')))
		for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			;
	if (i && i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t j = i + 1;

		if (j < n && (p[j] == '+' || p[j] == '-'))
			j++;
		if (j < n && p[j] >= '0' && p[j] <= '9') {
			for (i = j; i < n && p[i] >= '0' && p[i] <= '9'; i++)
				;
		}
	}
	if (!i) {
		v->is_int = true;
		v->neg = false;
		v->mag = 0;
		return;
	}
	decimal_value(p, i, strspn(p, "0123456789") == i, v);
	while (is_perl_space(p[i]))
		i++;
	if (p[i] && v->is_int)		/* trailing garbage */
		pnum_set_double(v, (double)v->mag);
	if (neg)
		pnum_negate(v);
}

/* \n \t ... in a Perl double-quoted string; 0 if ch is not one of them */
static char char_escape(char ch)
{
	static const char from[] = "ntrfea", to[] = "\n\t\r\f\033\a";
	const char *at = ch ? strchr(from, ch) : NULL;

	return at ? to[at - from] : 0;
}

/*
 * The contents of one Perl quoted string, or NULL if s is not exactly one.
 * '...' knows only \\ and \'. "..." also knows the character escapes, and
 * refuses what Perl would interpolate ("$x", "@x": errors under ktest.pl's
 * use strict, or worse).
 */
static char *unquote(const char *s, size_t n)
{
	char q = s[0];
	struct sbuf b;
	size_t i;

	sbuf_init(&b);
	for (i = 1; i < n; i++) {
		char ch = s[i], next = i + 1 < n ? s[i + 1] : '\0';

		if (ch == q) {
			if (i != n - 1)
				break;
			return sbuf_detach(&b);
		}
		if (q == '"' && (ch == '$' || (ch == '@' && next != q &&
					      !is_perl_space(next))))
			break;
		if (ch != '\\' || !next) {
			sbuf_addc(&b, ch);
			continue;
		}
		i++;
		if (next == '\\' || next == q)
			sbuf_addc(&b, next);
		else if (q == '\'')
			sbuf_addn(&b, s + i - 1, 2);
		else if (char_escape(next))
			sbuf_addc(&b, char_escape(next));
		else if (!isalnum((unsigned char)next))
			sbuf_addc(&b, next);
		else
			break;		/* \x, \0, \U...: not supported */
	}
	sbuf_free(&b);
	return NULL;
}

/* A comparison operand: a Perl number literal or a quoted string. */
static bool operand_value(const char *s, struct pnum *v)
{
	size_t n = strlen(s);
	char *str;

	if (n && (s[0] == '\'' || s[0] == '"')) {
		str = unquote(s, n);
		if (!str)
			return false;
		numify(str, v);
		free(str);
		return true;
	}
	return parse_signed_literal(s, n, v);
}

/* 1.2.3 is a Perl v-string: chr(1).chr(2).chr(3), numerically 0 */
static bool is_vstring(const char *s)
{
	const char *dot = strchr(s, '.');

	return dot && strchr(dot + 1, '.') &&
	       strspn(s, "0123456789._") == strlen(s);
}

/* > < >= <=, which ktest.pl runs as eval "$lval $cmp $rval" */
static int numeric_compare(struct ifctx *c, const char *l, const char *op,
			   const char *r, bool *res)
{
	struct pnum a, b;
	int cmp;

	if (!operand_value(l, &a) || !operand_value(r, &b)) {
		kdiag_error(c->d, c->o, "Unable to process comparison");
		kdiag_note(c->d,
			   "'%s %s %s': only numbers and quoted strings are supported with %s; ktest.pl would run it as Perl code",
			   l, op, r, op);
		if (is_vstring(l) || is_vstring(r))
			kdiag_note(c->d,
				   "to Perl, 1.2.3 is a v-string whose numeric value is 0, not a version number");
		return -1;
	}
	cmp = pnum_cmp(&a, &b);
	if (cmp == 2)
		*res = false;		/* NaN */
	else if (op[0] == '>')
		*res = op[1] ? cmp >= 0 : cmp > 0;
	else
		*res = op[1] ? cmp <= 0 : cmp < 0;
	return 0;
}

/* =~ and !~: $lval =~ m/$rval/ */
static int regex_compare(struct ifctx *c, const char *l, const char *op,
			 const char *r, bool *res)
{
	pcre2_match_data *md;
	pcre2_code *re;
	PCRE2_SIZE off;
	int err, rc;

	/* as in subst.c: PCRE2 < 10.45 misses (?=a)a?a on "ba" without it */
	re = pcre2_compile((PCRE2_SPTR)r, PCRE2_ZERO_TERMINATED,
			   PCRE2_NO_START_OPTIMIZE, &err, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof(msg));
		kdiag_error(c->d, c->o, "bad regex /%s/ in IF: %s at offset %zu",
			    r, (char *)msg, (size_t)off);
		return -1;
	}
	md = pcre2_match_data_create_from_pattern(re, NULL);
	rc = md ? pcre2_match(re, (PCRE2_SPTR)l, strlen(l), 0, 0, md, NULL) :
		  PCRE2_ERROR_NOMEMORY;
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
		kdiag_error(c->d, c->o, "regex /%s/ in IF failed to match (%d)",
			    r, rc);
		return -1;
	}
	*res = (rc >= 0) == (op[0] == '=');
	return 0;
}

/* "NOT a == b" compares the text "NOT a" with "b"; 0, or -1 on error */
static int warn_not_compare(struct ifctx *c, const char *l, const char *op,
			    const char *r)
{
	struct span sp;
	int rc = re_match(c, RE_NOTWORD, l, &sp);

	if (rc <= 0)
		return rc;
	kdiag_warn(c->d, c->o,
		   "'%s %s %s' compares the text '%s' with '%s', it does not negate",
		   l, op, r, l, r);
	kdiag_note(c->d,
		   "ktest.pl tries comparisons before NOT; write NOT (%s %s %s) to negate",
		   l + sp.eo[0] + strspn(l + sp.eo[0], " \t\n\r\f\v"), op, r);
	return 0;
}

/*
 * Step 3's /(.*)(==|!=|>=|<=|>|<|=~|!~)(.*)/: the greedy (.*) makes it the
 * rightmost position where an operator starts, the alternatives tried in
 * that order there. Scanned by hand: the backtracking regex is quadratic.
 */
static bool find_compare(const char *val, struct span *sp)
{
	static const char *const ops[] = {
		"==", "!=", ">=", "<=", ">", "<", "=~", "!~"
	};
	size_t len = strlen(val);

	for (size_t pos = len; pos-- > 0; ) {
		if (!strchr("=!<>", val[pos]))
			continue;	/* no operator starts here */
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k]);

			if (strncmp(val + pos, ops[k], n))
				continue;
			memset(sp, 0, sizeof(*sp));
			sp->set[0] = sp->set[1] = sp->set[2] = sp->set[3] = true;
			sp->eo[0] = len;
			sp->eo[1] = pos;
			sp->so[2] = pos;
			sp->eo[2] = pos + n;
			sp->so[3] = pos + n;
			sp->eo[3] = len;
			return true;
		}
	}
	return false;
}

static int eval_compare(struct ifctx *c, const char *val,
			const struct span *sp, bool *res)
{
	char *l = trimmed(val + sp->so[1], sp->eo[1] - sp->so[1]);
	char *r = trimmed(val + sp->so[3], sp->eo[3] - sp->so[3]);
	char op[3] = { 0 };
	int ret;

	memcpy(op, val + sp->so[2], sp->eo[2] - sp->so[2]);
	ret = warn_not_compare(c, l, op, r);
	if (ret < 0)
		goto out;
	if (!strcmp(op, "=="))
		*res = !strcmp(l, r);
	else if (!strcmp(op, "!="))
		*res = strcmp(l, r) != 0;
	else if (op[1] == '~')
		ret = regex_compare(c, l, op, r, res);
	else
		ret = numeric_compare(c, l, op, r, res);
out:
	free(l);
	free(r);
	return ret;
}

/* [NOT] DEFINED NAME: a config variable or a default option */
static bool is_defined(struct ifctx *c, const char *val, const struct span *sp)
{
	char *name = xstrndup(val + sp->so[2], sp->eo[2] - sp->so[2]);
	bool def = false;

	if (c->ops && c->ops->defined)
		def = c->ops->defined(c->ops->ctx, name);
	free(name);
	return sp->set[1] ? !def : def;
}

/* Step 5: NOT expr */
static int eval_not(struct ifctx *c, const char *val, const struct span *sp,
		    int depth, bool *res)
{
	char *rest = xstrndup(val + sp->so[1], sp->eo[1] - sp->so[1]);
	int ret = eval_expr(c, rest, depth + 1, res);

	free(rest);
	if (!ret)
		*res = !*res;
	return ret;
}

/* Steps 3 to 7 on what the && / || scan left over. */
static int eval_term(struct ifctx *c, const char *val, int depth, bool *res)
{
	struct span sp;
	int rc;

	if (find_compare(val, &sp))
		return eval_compare(c, val, &sp, res);
	rc = re_match(c, RE_DEFINED, val, &sp);
	if (rc > 0)
		*res = is_defined(c, val, &sp);
	if (rc)
		return rc < 0 ? -1 : 0;
	rc = re_match(c, RE_NOT, val, &sp);
	if (rc)
		return rc < 0 ? -1 : eval_not(c, val, &sp, depth, res);
	rc = re_match(c, RE_ZERO, val, &sp);
	if (rc > 0)
		*res = false;
	if (rc)
		return rc < 0 ? -1 : 0;
	rc = re_match(c, RE_DIGITS, val, &sp);	/* "00" too */
	if (rc > 0)
		*res = true;
	if (rc)
		return rc < 0 ? -1 : 0;
	kdiag_error(c->d, c->o, "Undefined content %s in if statement", val);
	return -1;
}

/*
 * ktest.pl has no precedence: "a && b || c" stops at a false a, where C
 * would go on to c. Only an && before an || can differ ("a || b && c"
 * agrees with C), so that is what gets a warning.
 */
static void warn_mixed(struct ifctx *c, const char *val)
{
	const char *and = strstr(val, "&&");

	if (!and || !strstr(and + 2, "||"))
		return;
	kdiag_warn(c->d, c->o,
		   "'%s': && and || are evaluated left to right with no precedence",
		   val);
	kdiag_note(c->d,
		   "ktest.pl stops at the first false operand of &&, so '0 && x || 1' is false; add parentheses: '(a && b) || c'");
}

/* Step 2, then the rest; val has no parentheses left. */
static int eval_folded(struct ifctx *c, const char *val, int depth,
		       bool *res)
{
	struct span sp;
	int rc;

	warn_mixed(c, val);
	while ((rc = re_match(c, RE_ANDOR, val, &sp)) > 0) {
		char *left = xstrndup(val, sp.eo[1]);
		bool is_or = val[sp.so[2]] == '|';

		rc = eval_expr(c, left, depth + 1, res);
		free(left);
		if (rc)
			return rc;
		val += sp.eo[0];
		if (*res == is_or)
			return 0;	/* true || ..., false && ... */
	}
	return rc < 0 ? -1 : eval_term(c, val, depth, res);
}

/*
 * Step 1. Perl repeatedly replaces the first match of /\(([^\(]*?)\)/,
 * which is the last "(" before the first ")"; after the replacement the
 * next one is found the same way further right. That is a stack: every
 * ")" closes the latest open "(", in one pass, however deep.
 */
static int fold_parens(struct ifctx *c, const char *s, int depth,
		       struct sbuf *out)
{
	size_t *open = xmalloc((strlen(s) + 1) * sizeof(*open));
	size_t nopen = 0;
	int ret = 0;

	for (; *s && !ret; s++) {
		char *inner;
		size_t at;
		bool v = false;

		if (*s != ')' || !nopen) {
			if (*s == '(')
				open[nopen++] = out->len;
			sbuf_addc(out, *s);
			continue;
		}
		at = open[--nopen];
		inner = xstrdup(out->buf + at + 1);
		ret = eval_expr(c, inner, depth + 1, &v);
		free(inner);
		out->len = at;
		out->buf[at] = '\0';
		sbuf_adds(out, v ? " 1 " : " 0 ");
	}
	free(open);
	return ret;
}

static int eval_expr(struct ifctx *c, const char *expr, int depth, bool *res)
{
	struct sbuf folded;
	int ret;

	if (depth > KIF_MAX_DEPTH) {
		kdiag_error(c->d, c->o,
			    "IF expression nested more than %d levels deep",
			    KIF_MAX_DEPTH);
		return -1;
	}
	sbuf_init(&folded);
	ret = fold_parens(c, expr, depth, &folded);
	if (!ret)
		ret = eval_folded(c, sbuf_str(&folded), depth, res);
	sbuf_free(&folded);
	return ret;
}

int kif_eval(const char *expr, const struct kif_ops *ops, bool *result,
	     struct kdiag *d, const struct korigin *o)
{
	struct ifctx c = { .ops = ops, .d = d, .o = o };
	bool res = false;
	int ret, i;

	ret = eval_expr(&c, expr, 0, &res);
	*result = ret ? false : res;
	for (i = 0; i < RE_COUNT; i++)
		pcre2_code_free(c.re[i]);
	pcre2_match_data_free(c.md);
	return ret;
}
