// SPDX-License-Identifier: GPL-2.0-only
/*
 * kif_eval() against ktest.pl's process_expression(). Every expected value
 * in the table below was produced by running ktest.pl's own
 * process_expression/process_compare (copied into a Perl script, with
 * FOO a config variable and BAR a default option). REFUSE rows are where
 * Perl would run the text as code and we stop with an error instead; the
 * comment says what Perl does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/ifexpr.h"
#include "conf/strmap.h"

struct if_case {
	const char *expr;
	int rc;			/* 0, or -1 for an error */
	bool result;
	int warnings;
	const char *error;	/* the error's text (kdiag's last) */
};

#define T(e)		{ e, 0, true, 0, NULL }
#define F(e)		{ e, 0, false, 0, NULL }
#define TW(e)		{ e, 0, true, 1, NULL }
#define FW(e)		{ e, 0, false, 1, NULL }
#define ERR(e, msg)	{ e, -1, false, 0, msg }
#define REFUSE(e)	{ e, -1, false, 0, "Unable to process comparison" }
#define UNDEF(e, what)	ERR(e, "Undefined content " what " in if statement")

static const struct if_case cases[] = {
	/* 1. innermost parentheses first */
	T("(1)"),
	F("(0)"),
	T("((1))"),
	F("((((0))))"),
	T("(1 && 0) || 1"),
	T("(0 && 1) || (1 && 1)"),
	T("(a == a) && (b != c)"),
	T("NOT (a == b)"),
	F("NOT (1 == 1)"),
	/* groups are folded before || can short-circuit */
	UNDEF("1 || (garbage)", "garbage"),
	UNDEF("(1", "(1"),
	UNDEF("1)", "1)"),
	UNDEF(") (1)", ")  1 "),
	UNDEF("(1) (1)", " 1   1 "),
	UNDEF("() || 1", ""),
	/* a regex group in =~ is folded too: ktest.pl cannot use them */
	UNDEF("ABC =~ (?i)abc", "?i"),
	UNDEF("x86 =~ ^(x86|arm)", "x86|arm"),

	/* 2. && and ||, left to right, no precedence */
	FW("0 && X || 1"),		/* C would say true */
	TW("1 && 0 || 1"),
	TW("1 > 0 && 2 < 1 || 1"),
	T("1 || 0 && 0"),		/* same as C: no warning */
	F("0 || 1 && 0"),
	T("0 || 0 || 1"),
	F("1 && 1 && 0"),
	F("0 && garbage"),		/* never evaluated */
	T("1 || garbage"),
	F("DEFINED FOO && DEFINED BAZ"),
	T("NOT DEFINED FOO || DEFINED BAR"),
	F("NOT 0 && 0"),
	UNDEF("1 &&", ""),
	UNDEF("|| 1", ""),
	UNDEF("1 &", "1 &"),
	UNDEF("1 & 1", "1 & 1"),

	/* 3. comparisons, at the last operator */
	T("a==a"),
	F("a == b"),
	T("a != b"),
	T("\"frodo\" == \"frodo\""),
	F("\"frodo\" == frodo"),	/* quotes are kept */
	F("a == a == a"),		/* "a == a" eq "a" */
	F("x >= 1 == 1"),		/* "x >= 1" eq "1" */
	F("010 == 8"),			/* == compares strings */
	T("abc =~ b"),
	F("abc =~ ^b"),
	T("abc !~ ^b"),
	T("abc =~ ^a.c$"),
	F("abc =~ a\\d"),
	T("x86_64 =~ ^x86"),
	T("abc =~ "),			/* an empty regex matches */
	F("abc !~ "),
	T("2 > 1"),
	F("1 > 2"),
	T("2 >= 2"),
	F("2 <= 1"),
	T("010 > 7"),			/* octal */
	F("010 > 9"),
	T("0x10 > 15"),
	T("0X10 > 15"),
	T("0b101 >= 5"),
	T("0B11 > 2"),
	T("0o17 > 14"),
	T("0777 > 510"),
	T("0_7 > 6"),
	T("1_000 > 999"),
	T("1__0 > 1"),
	T("-5 < 0"),
	T("- 5 < 0"),
	T("- -5 > 0"),
	T("-+5 < 0"),
	T("+5 > 4"),
	T("1e3 > 999"),
	T("1E+3 >= 1000"),
	T("1e-3 < 0.002"),
	T("1.5 > 1.4"),
	T(".5 > 0.4"),
	T("1. > 0"),
	T("1.e2 > 99"),
	T("1._5 > 1"),
	F("0.1 > 0.1"),
	T("1e400 > 1e308"),
	T("'10' > 9"),
	T("'5' <= 5"),
	T("'5' >= 5"),
	T("\"10abc\" > 9"),		/* numified prefix */
	T("\"  12\" > 11"),
	T("\"\\n5\" > 4"),
	T("\" +3\" > 2"),
	T("\"-.5e1\" < -4"),
	T("\"1e3\" > 999"),
	T("\"1e\" > 0.9"),
	F("\"1e\" > 1"),
	T("\"abc\" > -1"),		/* "abc" is 0 */
	F("\"a\" < \"b\""),
	T("'' < 1"),
	F("'0x10' > 1"),		/* strings never read hex */
	F("\"1_000\" > 999"),
	F("\" - 5\" < 0"),
	F("'\\n5' > 4"),		/* no escapes in '' */
	T("'a\\'b' > -1"),
	T("\"inf\" > 1e308"),
	T("\"infxyz\" > 1"),
	T("\" -inf\" < 0"),
	T("\"in\" < 1"),
	F("\"nan\" > 1"),
	F("\"nan\" < 1"),
	F("\"nanxyz\" >= 1"),
	/* integers compare exactly, doubles as doubles */
	T("9007199254740993 > 9007199254740992"),
	T("\"9007199254740993\" > 9007199254740992"),
	F("\"9007199254740993x\" > 9007199254740992"),
	F("9007199254740993 > 9007199254740992.0"),
	T("18446744073709551615 > 18446744073709551614"),
	F("18446744073709551616 > 18446744073709551615"),
	T("-9223372036854775808 < -9223372036854775807"),
	F("-9223372036854775809 < -9223372036854775808"),
	T("- -9223372036854775808 > 9223372036854775807"),
	F("-0 < 0"),
	T("0xFFFFFFFFFFFFFFFFF > 1"),
	/* barewords die under ktest.pl's use strict */
	REFUSE("a > 1"),
	REFUSE("1 > a"),
	REFUSE("a <= b"),
	REFUSE("a => b"),
	REFUSE("08 > 1"),		/* Illegal octal digit */
	REFUSE("0x > 0"),
	REFUSE("--5 < 0"),		/* predecrement of a constant */
	REFUSE("1e > 0"),
	REFUSE("\"$x\" > 1"),
	/* Perl runs these as code; we do not */
	REFUSE("1+1 > 1"),		/* Perl: true */
	REFUSE("1.2.3 > 1"),		/* Perl: v-string, false */
	REFUSE("1 < 2 < 3"),		/* Perl 5.32: chained, true */
	REFUSE("01.5 > 1"),		/* Perl: "1" . "5", true */
	REFUSE("-'abc' < 0"),		/* Perl: "-abc", false */
	REFUSE("\"\\x37\" > 6"),	/* Perl: "7", true */
	REFUSE("1 > 0 ;"),		/* Perl: true */
	/* the bad regex itself is the error; the offset is PCRE2's */
	ERR("abc =~ (", "bad regex /(/ in IF: missing closing parenthesis at offset 1"),
	ERR("abc =~ [", "bad regex /[/ in IF: missing terminating ] for character class at offset 1"),

	/* 4. [NOT] DEFINED */
	T("DEFINED FOO"),
	T("DEFINED BAR"),
	F("DEFINED BAZ"),
	T("NOT DEFINED BAZ"),
	T("NOTDEFINED BAZ"),
	F(" NOT  DEFINED   FOO  "),
	UNDEF("DEFINED", "DEFINED"),
	UNDEF("DEFINED FOO BAR", "DEFINED FOO BAR"),

	/* 5. NOT, after comparisons */
	T("NOT 0"),
	F("NOT 1"),
	F("NOT NOT 0"),
	FW("NOT a == b"),		/* "NOT a" eq "b" */
	FW("NOT a == a"),		/* "NOT a" eq "a" */
	UNDEF("NOT a", "a"),

	/* 6. integers */
	T("1"),
	F("0"),
	T("00"),
	T(" 007 "),
	F(" 0 "),
	T("42"),

	/* 7. anything else */
	UNDEF("garbage", "garbage"),
	UNDEF("", ""),
	UNDEF("1 ITERATE 2", "1 ITERATE 2"),
	UNDEF("-1", "-1"),
	UNDEF("true", "true"),
};

/* FOO is a config variable, BAR a default option; counts the calls */
struct fake_defs {
	int calls;
	char last[64];
};

static bool fake_defined(void *ctx, const char *name)
{
	struct fake_defs *f = ctx;

	f->calls++;
	snprintf(f->last, sizeof(f->last), "%s", name);
	return !strcmp(name, "FOO") || !strcmp(name, "BAR");
}

static int eval_quiet(const char *expr, bool *res, struct kdiag *d,
		      struct fake_defs *f)
{
	struct kif_ops ops = { .defined = fake_defined, .ctx = f };
	struct korigin o = { "test.conf", 3 };

	kdiag_init(d);
	d->quiet = true;
	return kif_eval(expr, &ops, res, d, &o);
}

static void run_case(void **state)
{
	const struct if_case *c = *state;
	struct fake_defs f = { 0 };
	struct kdiag d;
	bool res = !c->result;
	int rc;

	rc = eval_quiet(c->expr, &res, &d, &f);
	assert_int_equal(rc, c->rc);
	assert_int_equal(d.nerrors, c->rc ? 1 : 0);
	assert_int_equal(d.nwarnings, c->warnings);
	if (c->rc)
		assert_string_equal(d.last, c->error);
	else
		assert_int_equal(res, c->result);
}

/* What the user sees: file:line, the message, and the hint. */
static char *eval_output(const char *expr, int *rc)
{
	struct kif_ops ops = { .defined = fake_defined, .ctx = NULL };
	struct korigin o = { "ktest.conf", 12 };
	struct fake_defs f = { 0 };
	struct kdiag d;
	char *buf = NULL;
	size_t len = 0;
	bool res;

	ops.ctx = &f;
	kdiag_init(&d);
	d.out = open_memstream(&buf, &len);
	assert_non_null(d.out);
	*rc = kif_eval(expr, &ops, &res, &d, &o);
	fclose(d.out);
	return buf;
}

static void test_error_output(void **state)
{
	char *out;
	int rc;

	(void)state;
	out = eval_output("a > 1", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(out,
		"ktest.conf:12: error: Unable to process comparison\n"
		"  'a > 1': only numbers and quoted strings are supported with >; ktest.pl would run it as Perl code\n");
	free(out);

	out = eval_output("6.1.0 >= 5.10.0", &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(out, "v-string whose numeric value is 0"));
	free(out);

	out = eval_output("1 ITERATE 2", &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(out,
		"ktest.conf:12: error: Undefined content 1 ITERATE 2 in if statement\n");
	free(out);
}

static void test_warning_output(void **state)
{
	char *out;
	int rc;

	(void)state;
	out = eval_output("0 && 1 || 1", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out,
		"ktest.conf:12: warning: '0 && 1 || 1': && and || are evaluated left to right with no precedence\n"));
	assert_non_null(strstr(out, "'(a && b) || c'"));
	free(out);

	out = eval_output("NOT ${A} == x", &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out,
		"ktest.conf:12: warning: 'NOT ${A} == x' compares the text 'NOT ${A}' with 'x', it does not negate\n"));
	assert_non_null(strstr(out, "write NOT (${A} == x) to negate"));
	free(out);

	/* parentheses are the fix, and silence the warning */
	out = eval_output("(0 && 1) || 1", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
	out = eval_output("NOT (a == x)", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
}

static void test_defined_calls(void **state)
{
	struct fake_defs f = { 0 };
	struct kdiag d;
	bool res = false;

	(void)state;
	assert_int_equal(eval_quiet("NOT  DEFINED   MACHINE ", &res, &d, &f),
			 0);
	assert_true(res);
	assert_int_equal(f.calls, 1);
	assert_string_equal(f.last, "MACHINE");

	/* short-circuit: the right side is never asked about */
	f.calls = 0;
	assert_int_equal(eval_quiet("DEFINED FOO || DEFINED X", &res, &d, &f),
			 0);
	assert_true(res);
	assert_int_equal(f.calls, 1);
	assert_string_equal(f.last, "FOO");

	/* names are anything but whitespace */
	assert_int_equal(eval_quiet("DEFINED OPT[1]", &res, &d, &f), 0);
	assert_false(res);
	assert_string_equal(f.last, "OPT[1]");
}

static void test_no_ops(void **state)
{
	struct kdiag d;
	bool res = true;

	(void)state;
	kdiag_init(&d);
	d.quiet = true;
	assert_int_equal(kif_eval("DEFINED FOO", NULL, &res, &d, NULL), 0);
	assert_false(res);
	assert_int_equal(kif_eval("NOT DEFINED FOO", NULL, &res, &d, NULL),
			 0);
	assert_true(res);
}

static void test_error_clears_result(void **state)
{
	struct fake_defs f = { 0 };
	struct kdiag d;
	bool res = true;

	(void)state;
	assert_int_equal(eval_quiet("NOT garbage", &res, &d, &f), -1);
	assert_false(res);
}

/* One pass over the parentheses, whatever the depth. */
static void test_deep_parens(void **state)
{
	struct fake_defs f = { 0 };
	struct sbuf b;
	struct kdiag d;
	bool res = false;
	int i;

	(void)state;
	sbuf_init(&b);
	for (i = 0; i < 10000; i++)
		sbuf_addc(&b, '(');
	sbuf_adds(&b, "1 == 1");
	for (i = 0; i < 10000; i++)
		sbuf_addc(&b, ')');
	assert_int_equal(eval_quiet(sbuf_str(&b), &res, &d, &f), 0);
	assert_true(res);

	sbuf_reset(&b);
	for (i = 0; i < 10000; i++)
		sbuf_adds(&b, "NOT (");
	sbuf_adds(&b, "0");
	for (i = 0; i < 10000; i++)
		sbuf_addc(&b, ')');
	assert_int_equal(eval_quiet(sbuf_str(&b), &res, &d, &f), 0);
	assert_false(res);		/* an even number of NOTs */
	sbuf_free(&b);
}

static void test_long_chain(void **state)
{
	struct fake_defs f = { 0 };
	struct sbuf b;
	struct kdiag d;
	bool res = false;
	int i;

	(void)state;
	sbuf_init(&b);
	for (i = 0; i < 10000; i++)
		sbuf_adds(&b, "1 && ");
	sbuf_adds(&b, "DEFINED BAR");
	assert_int_equal(eval_quiet(sbuf_str(&b), &res, &d, &f), 0);
	assert_true(res);
	assert_int_equal(d.nwarnings, 0);
	sbuf_free(&b);
}

/* NOT NOT ... recurses once per NOT: bounded, with a clean error. */
static void test_deep_not(void **state)
{
	struct fake_defs f = { 0 };
	struct sbuf b;
	struct kdiag d;
	bool res = false;
	int i;

	(void)state;
	sbuf_init(&b);
	for (i = 0; i < 200; i++)
		sbuf_adds(&b, "NOT ");
	sbuf_adds(&b, "1");
	assert_int_equal(eval_quiet(sbuf_str(&b), &res, &d, &f), 0);
	assert_true(res);

	sbuf_reset(&b);
	for (i = 0; i < 10000; i++)
		sbuf_adds(&b, "NOT ");
	sbuf_adds(&b, "1");
	assert_int_equal(eval_quiet(sbuf_str(&b), &res, &d, &f), -1);
	assert_string_equal(d.last,
			    "IF expression nested more than 200 levels deep");
	assert_int_equal(d.nerrors, 1);
	sbuf_free(&b);
}

#define N_CASES (sizeof(cases) / sizeof(cases[0]))
#define N_OTHER 8

int main(void)
{
	struct CMUnitTest tests[N_CASES + N_OTHER] = {
		cmocka_unit_test(test_error_output),
		cmocka_unit_test(test_warning_output),
		cmocka_unit_test(test_defined_calls),
		cmocka_unit_test(test_no_ops),
		cmocka_unit_test(test_error_clears_result),
		cmocka_unit_test(test_deep_parens),
		cmocka_unit_test(test_long_chain),
		cmocka_unit_test(test_deep_not),
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
