// SPDX-License-Identifier: GPL-2.0-only
/*
 * ksubst_apply() against Perl. Every OK row's result was produced by
 * ktest.pl's own step, eval "\$option =~ EXPR" under use strict, on the
 * same value. REFUSED rows are where Perl would fail to compile the line
 * (ktest.pl then silently leaves the value alone) or would run more than a
 * substitution; the comment says what Perl does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/subst.h"

struct subst_case {
	const char *value;
	const char *expr;
	const char *want;	/* the result, or NULL for an error */
	const char *error;	/* the error message */
};

#define OK(v, e, w)		{ v, e, w, NULL }
#define REFUSED(e, msg)		{ "abc", e, NULL, msg }

static const struct subst_case cases[] = {
	/* the common forms */
	OK("-j2 V=1", "s/-j\\d+/-j8/", "-j8 V=1"),
	OK("aaa", "s/a/b/", "baa"),
	OK("aaa", "s/a/b/g", "bbb"),
	OK("abc", "s/z/X/", "abc"),
	OK("", "s/^/x/", "x"),
	OK("AbC", "s/[a-z]/_/gi", "___"),
	OK("abc", "s/B/X/ig", "aXc"),
	OK("abc", "s/ b /X/x", "aXc"),
	OK("abc", "s/b/X/xx", "aXc"),
	OK("abc", "s/b/X/gg", "aXc"),
	OK("abc", "  s{b}{X}g;  ", "aXc"),
	OK("l1\nl2", "s/^l/L/mg", "L1\nL2"),
	OK("l1\nl2", "s/^l/L/g", "L1\nl2"),
	OK("a\nb", "s/a.b/X/s", "X"),
	OK("a\nb", "s/a.b/X/", "a\nb"),
	OK("\xc3\xa9", "s/./X/g", "XX"),	/* bytes, as in ktest.pl */

	/* the replacement */
	OK("foo bar", "s/(\\w+) (\\w+)/$2 $1/", "bar foo"),
	OK("foo bar", "s/(\\w+) (\\w+)/\\2 \\1/", "bar foo"),
	OK("abc", "s/(b)/${1}x/", "abxc"),
	OK("abc", "s/(b)/${1}[0]/", "ab[0]c"),
	OK("abc", "s/(b)/$1-/", "ab-c"),
	OK("abc", "s/(b)/$1]/", "ab]c"),
	OK("abc", "s/(b)/$1->x/", "ab->xc"),
	OK("abcdefghijk", "s/(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)/$10|${11}/",
	   "j|k"),
	OK("a1b22c333", "s/\\d+/<$&>/g", "a<1>b<22>c<333>"),
	OK("abc", "s/b/$&$&/", "abbc"),
	OK("x", "s/(y)?x/<$1>/", "<>"),		/* unset group: "" */
	OK("abc", "s/b/[$5]/", "a[]c"),		/* missing group: "" */
	OK("aaa", "s/(a)|b/[$1]/g", "[a][a][a]"),
	OK("abc", "s/b/\\n/", "a\nc"),
	OK("abc", "s/b/\\t/", "a\tc"),
	OK("abc", "s/b/\\./", "a.c"),
	OK("abc", "s/b/\\$1/", "a$1c"),
	OK("abc", "s/b/\\@/", "a@c"),
	OK("abc", "s/b/user@ host/", "auser@ hostc"),
	OK("abc", "s'(b)'[$1]'", "a[$1]c"),		/* no interpolation */
	OK("abc", "s'b'$1\\\\x\\''", "a$1\\x'c"),

	/* Perl's empty-match rule for /g */
	OK("abc", "s/x*/-/g", "-a-b-c-"),
	OK("xab", "s/x*/-/g", "--a-b-"),
	OK("abc", "s/x*|b/-/g", "-a---c-"),
	OK("aaa", "s/a*?/-/g", "-------"),
	OK("aaa", "s/a?\?/-/g", "-------"),	/* a?? */
	OK("hello", "s/l*/X/g", "XhXeXXoX"),
	OK("hello", "s/l+?/X/g", "heXXo"),
	OK("abcd", "s/b|/-/g", "-a--c-d-"),
	OK("abc", "s/\\b/|/g", "|abc|"),
	OK("abc", "s/$/!/g", "abc!"),
	OK("abc", "s/(?=b)/^/g", "a^bc"),
	OK("abcabc", "s/(?<=a)b/B/g", "aBcaBc"),
	/* PCRE2 < 10.45 misses this one with its start optimisation */
	OK("bxa", "s/(?=a)a?(a)/<$&>/", "bx<a>"),

	/* delimiters */
	OK("a/b", "s/a\\/b/X/", "X"),
	OK("a.b.c", "s/\\./\\//g", "a/b/c"),
	OK("abc", "s#b#X#", "aXc"),
	OK("abc", "s!b!X!", "aXc"),
	OK("abc", "s,b,X,", "aXc"),
	OK("abc", "s:b:X:", "aXc"),
	OK("abc", "s=b=X=", "aXc"),
	OK("abc", "s?b?X?", "aXc"),
	OK("abc", "s /b/X/", "aXc"),
	OK("one", "s{o}{0}", "0ne"),
	OK("abc", "s{b} {X}", "aXc"),
	OK("abc", "s{b}/X/", "aXc"),
	OK("abc", "s(b)<X>", "aXc"),
	OK("one", "s[n][N]", "oNe"),
	OK("one", "s<e>[E]", "onE"),
	OK("ab", "s(a(b))($1)", "b"),
	OK("aa", "s{a{2}}{X}", "X"),
	OK("a{2}", "s{a\\{2\\}}{X}", "X"),
	OK("a(b", "s(a\\(b)(X)", "X"),
	OK("abc", "s<b><\\<\\>>", "a<>c"),
	OK("a.b", "s'\\.'X'", "aXb"),
	OK("abc", "s{(b)}'[$1]'", "a[$1]c"),	/* ' replacement only */
	OK("abc", "s{b}'\\\\x'", "a\\xc"),
	/* an escaped delimiter loses its backslash: | is alternation again */
	OK("a|b", "s|a\\|b|X|", "X|b"),
	OK("axb", "s.a\\.b.X.", "X"),
	OK("aab", "s+a\\+b+X+", "X"),

	/* $ that Perl does not interpolate in a pattern */
	OK("abc", "s/c$/X/", "abX"),
	OK("ab", "s/a$|b/X/g", "aX"),
	OK("1a", "s/$(a)/-/g", "1a"),
	OK("a", "s/a$ /X/x", "X"),
	OK("a$b", "s/a\\$b/X/", "X"),
	OK("a@b", "s/a\\@b/X/", "X"),
	OK("a$c", "s'$c'X'", "a$c"),

	/* the flags Perl has and we refuse */
	REFUSED("s/b/\"X\"/e",
		"the e flag runs the replacement as Perl code; not supported"),
	REFUSED("s/b/X/ee",
		"the e flag runs the replacement as Perl code; not supported"),
	REFUSED("s/b/X/r",
		"the r flag leaves the value unchanged in ktest.pl; not supported"),
	REFUSED("s/b/X/o", "unsupported s/// flag 'o'"),
	/* other Perl */
	REFUSED("tr/a-c/A-C/", "tr/// is not supported; ktest only applies s///"),
	REFUSED("y/a-c/A-C/", "y/// is not supported; ktest only applies s///"),
	REFUSED("m/b/",
		"only s/PATTERN/REPLACEMENT/FLAGS is supported; ktest does not run Perl code"),
	REFUSED("sxbxXx",
		"only s/PATTERN/REPLACEMENT/FLAGS is supported; ktest does not run Perl code"),
	REFUSED("",
		"only s/PATTERN/REPLACEMENT/FLAGS is supported; ktest does not run Perl code"),
	REFUSED("s xbxXx",
		"'x' as an s/// delimiter is not supported; use a punctuation character"),
	REFUSED("s/b/X/; $option = \"pwned\"",
		"unexpected '$option = \"pwned\"' after s///; ktest does not run Perl code"),
	REFUSED("s//X/",
		"an empty pattern reuses Perl's last successful match; not supported"),
	/* syntax */
	REFUSED("s/b/X", "missing closing '/' in s///"),
	REFUSED("s/b", "missing closing '/' in s///"),
	REFUSED("s{b}{X", "missing closing '}' in s///"),
	REFUSED("s{b}", "s/// is missing its delimiters"),
	REFUSED("s/[/X/",
		"bad regex /[/: missing terminating ] for character class at offset 1"),
	REFUSED("s/c$)/X/",
		"bad regex /c$)/: unmatched closing parenthesis at offset 2"),
	/* Perl variables */
	REFUSED("s/b/${FOO}/",
		"'${' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported"),
	REFUSED("s/b/$foo/",
		"'$f' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported"),
	REFUSED("s/b/$0/",
		"'$0' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported"),
	REFUSED("s/b/$$/",
		"'$$' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported"),
	REFUSED("s/b/x$ y/",
		"'$ ' in the replacement is a Perl variable; only $1..$9, ${N} and $& are supported"),
	REFUSED("s/b/$/", "a final $ in the replacement must be written \\$"),
	REFUSED("s/(b)/$1[0]/",
		"Perl reads '$1[' as an array or hash element; write ${1}\\["),
	REFUSED("s/(b)/$1{x}/",
		"Perl reads '$1{' as an array or hash element; write ${1}\\{"),
	REFUSED("s/b/user@host/",
		"'@h' in the replacement is a Perl array; write \\@ for a literal @"),
	REFUSED("s/${FOO}/x/",
		"'${' in the pattern is a Perl variable; ktest does not run Perl (write \\$ for a literal $)"),
	REFUSED("s/a$b/x/",
		"'$b' in the pattern is a Perl variable; ktest does not run Perl (write \\$ for a literal $)"),
	REFUSED("s/a$./x/",
		"'$.' in the pattern is a Perl variable; ktest does not run Perl (write \\$ for a literal $)"),
	REFUSED("s/[$]/x/",
		"'$]' in the pattern is a Perl variable; ktest does not run Perl (write \\$ for a literal $)"),
	REFUSED("s/a@b/X/",
		"'@b' in the pattern is a Perl array; ktest does not run Perl (write \\@ for a literal @)"),
	/* escapes we do not translate */
	REFUSED("s/b/\\x41/", "unsupported escape '\\x' in the replacement"),
	REFUSED("s/b/\\U$&/", "unsupported escape '\\U' in the replacement"),
	REFUSED("s/b/\\10/",
		"'\\10' is an octal character escape in Perl; not supported"),
	REFUSED("s/b/\\0/",
		"'\\0' is an octal character escape in Perl; not supported"),
};

static void run_case(void **state)
{
	const struct subst_case *c = *state;
	char err[256] = "stale", *out = (char *)"stale";
	int rc;

	rc = ksubst_apply(c->expr, c->value, &out, err, sizeof(err));
	if (c->want) {
		assert_int_equal(rc, 0);
		assert_string_equal(err, "");
		assert_non_null(out);
		assert_string_equal(out, c->want);
		free(out);
	} else {
		assert_int_equal(rc, -1);
		assert_null(out);
		assert_string_equal(err, c->error);
	}

	/* ksubst_check() agrees with ksubst_apply() on every row */
	strcpy(err, "stale");
	rc = ksubst_check(c->expr, err, sizeof(err));
	assert_int_equal(rc, c->want ? 0 : -1);
	assert_string_equal(err, c->want ? "" : c->error);
}

static void test_no_err_buffer(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(ksubst_check("s/b/X/e", NULL, 0), -1);
	assert_int_equal(ksubst_apply("s/[/X/", "abc", &out, NULL, 0), -1);
	assert_null(out);
	assert_int_equal(ksubst_apply("s/b/X/", "abc", &out, NULL, 0), 0);
	assert_string_equal(out, "aXc");
	free(out);
}

static void test_truncated_err(void **state)
{
	char err[8];

	(void)state;
	assert_int_equal(ksubst_check("tr/a/b/", err, sizeof(err)), -1);
	assert_string_equal(err, "tr/// i");
}

/* a long value, many matches, and an empty match at every position */
static void test_long_value(void **state)
{
	size_t n = 100000, i;
	char *value = malloc(n + 1), *out = NULL, err[128];

	(void)state;
	assert_non_null(value);
	memset(value, 'a', n);
	value[n] = '\0';
	assert_int_equal(ksubst_apply("s/a/bb/g", value, &out, err,
				      sizeof(err)), 0);
	assert_int_equal(strlen(out), 2 * n);
	free(out);
	assert_int_equal(ksubst_apply("s/x*/-/g", value, &out, err,
				      sizeof(err)), 0);
	assert_int_equal(strlen(out), 2 * n + 1);
	for (i = 0; i < 2 * n + 1; i++)
		assert_int_equal(out[i], i % 2 ? 'a' : '-');
	free(out);
	free(value);
}

#define N_CASES (sizeof(cases) / sizeof(cases[0]))
#define N_OTHER 3

int main(void)
{
	struct CMUnitTest tests[N_CASES + N_OTHER] = {
		cmocka_unit_test(test_no_err_buffer),
		cmocka_unit_test(test_truncated_err),
		cmocka_unit_test(test_long_value),
	};
	size_t i;

	/* one named test per table row */
	for (i = 0; i < N_CASES; i++) {
		tests[N_OTHER + i] = (struct CMUnitTest){
			.name = cases[i].expr[0] ? cases[i].expr : "(empty)",
			.test_func = run_case,
			.initial_state = (void *)&cases[i],
		};
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
