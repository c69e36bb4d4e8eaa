// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdotconfig: .config files and fragments read, changed and written back;
 * ktest.pl's forcing (apply_min_config) in a fixed order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/kconfig.h"

static const char sample[] =
	"#\n"
	"# Automatically generated file; DO NOT EDIT.\n"
	"# Linux/x86 6.1.192 Kernel Configuration\n"
	"#\n"
	"CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
	"CONFIG_64BIT=y\n"
	"# CONFIG_SMP is not set\n"
	"CONFIG_EXT4_FS=m\n"
	"CONFIG_LOG_BUF_SHIFT=17\n"
	"CONFIG_PHYSICAL_START=0x1000000\n"
	"CONFIG_LOCALVERSION=\"\"\n"
	"\n"
	"#\n"
	"# General setup\n"
	"#\n"
	"CONFIG_DISABLED=n\n"
	"# end of General setup\n";

static void parse(struct kdotconfig *c, const char *text)
{
	kdotconfig_init(c);
	kdotconfig_parse(c, text, strlen(text));
}

static void assert_text(const struct kdotconfig *c, const char *want)
{
	char *s = kdotconfig_format(c);

	assert_string_equal(s, want);
	free(s);
}

static void test_parse_sample(void **state)
{
	const struct kdotconfig_entry *e;
	struct kdotconfig c;

	parse(&c, sample);
	assert_int_equal(kdotconfig_count(&c), 8);
	assert_int_equal(c.bad, 0);
	e = kdotconfig_get(&c, "CONFIG_CC_VERSION_TEXT");
	assert_non_null(e);
	assert_string_equal(e->value, "\"gcc (Debian 12.2.0-14) 12.2.0\"");
	assert_int_equal(e->line, 5);
	e = kdotconfig_get(&c, "CONFIG_SMP");
	assert_non_null(e);
	assert_null(e->value);
	assert_int_equal(e->line, 7);
	assert_string_equal(kdotconfig_get(&c, "CONFIG_LOG_BUF_SHIFT")->value, "17");
	assert_string_equal(kdotconfig_get(&c, "CONFIG_PHYSICAL_START")->value,
			    "0x1000000");
	assert_string_equal(kdotconfig_get(&c, "CONFIG_LOCALVERSION")->value,
			    "\"\"");
	assert_null(kdotconfig_get(&c, "CONFIG_NOPE"));
	assert_null(kdotconfig_get(&c, "64BIT"));
	/* read and written back: the same file */
	assert_text(&c, sample);
	kdotconfig_free(&c);
}

static void test_enabled(void **state)
{
	struct kdotconfig c;

	parse(&c, sample);
	assert_true(kdotconfig_enabled(&c, "CONFIG_64BIT"));
	assert_true(kdotconfig_enabled(&c, "CONFIG_EXT4_FS"));
	assert_false(kdotconfig_enabled(&c, "CONFIG_SMP"));
	assert_false(kdotconfig_enabled(&c, "CONFIG_DISABLED"));
	assert_false(kdotconfig_enabled(&c, "CONFIG_LOG_BUF_SHIFT"));
	assert_false(kdotconfig_enabled(&c, "CONFIG_NOPE"));
	kdotconfig_free(&c);
}

/* What kconfig ignores is no setting here either, and is counted. */
static void test_bad_and_odd_lines(void **state)
{
	static const char text[] =
		"CONFIG_A=y\n"
		"CONFIG_B y\n"			/* bad */
		"CONFIG_C = y\n"		/* bad */
		"# CONFIG_D is not set  \n"	/* trailing blanks: fine */
		"# CONFIG_E is not set, really\n"	/* a comment */
		"#CONFIG_F is not set\n"	/* a comment */
		"# CONFIG_ is not set\n"	/* a comment */
		"CONFIG_=y\n"			/* bad */
		"  CONFIG_G=y\n"		/* indented: a comment to kconfig */
		"CONFIG_H=\n"			/* empty value: a setting */
		"CONFIG_I=y # trailing\n";	/* kconfig's problem, kept */
	struct kdotconfig c;

	parse(&c, text);
	assert_int_equal(c.bad, 3);
	assert_int_equal(c.first_bad, 2);
	assert_int_equal(kdotconfig_count(&c), 4);
	assert_non_null(kdotconfig_get(&c, "CONFIG_A"));
	assert_null(kdotconfig_get(&c, "CONFIG_B"));
	assert_null(kdotconfig_get(&c, "CONFIG_C"));
	assert_non_null(kdotconfig_get(&c, "CONFIG_D"));
	assert_null(kdotconfig_get(&c, "CONFIG_D")->value);
	assert_null(kdotconfig_get(&c, "CONFIG_E"));
	assert_null(kdotconfig_get(&c, "CONFIG_F"));
	assert_null(kdotconfig_get(&c, "CONFIG_G"));
	assert_string_equal(kdotconfig_get(&c, "CONFIG_H")->value, "");
	assert_string_equal(kdotconfig_get(&c, "CONFIG_I")->value, "y # trailing");
	/* every line is still there; the not-set line is written canonically */
	assert_text(&c,
		    "CONFIG_A=y\nCONFIG_B y\nCONFIG_C = y\n"
		    "# CONFIG_D is not set\n"
		    "# CONFIG_E is not set, really\n#CONFIG_F is not set\n"
		    "# CONFIG_ is not set\nCONFIG_=y\n  CONFIG_G=y\nCONFIG_H=\n"
		    "CONFIG_I=y # trailing\n");
	kdotconfig_free(&c);
}

static void test_crlf_and_no_newline(void **state)
{
	struct kdotconfig c;

	parse(&c, "CONFIG_A=y\r\n# CONFIG_B is not set\r\nCONFIG_C=m");
	assert_int_equal(kdotconfig_count(&c), 3);
	assert_string_equal(kdotconfig_get(&c, "CONFIG_A")->value, "y");
	assert_null(kdotconfig_get(&c, "CONFIG_B")->value);
	assert_string_equal(kdotconfig_get(&c, "CONFIG_C")->value, "m");
	assert_text(&c, "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\n");
	kdotconfig_free(&c);

	parse(&c, "");
	assert_int_equal(kdotconfig_count(&c), 0);
	assert_text(&c, "");
	kdotconfig_free(&c);
}

/* kconfig: the last assignment wins. Here it keeps the first place. */
static void test_duplicates(void **state)
{
	struct kdotconfig c;

	parse(&c, "CONFIG_A=y\nCONFIG_B=y\nCONFIG_A=m\n# CONFIG_B is not set\n");
	assert_int_equal(kdotconfig_count(&c), 2);
	assert_text(&c, "CONFIG_A=m\n# CONFIG_B is not set\n");
	kdotconfig_free(&c);
}

static void test_set_remove(void **state)
{
	struct kdotconfig c;

	parse(&c, "# head\nCONFIG_A=y\nCONFIG_B=y\n# tail\n");
	kdotconfig_set(&c, "CONFIG_A", "m");		/* in place */
	kdotconfig_set(&c, "CONFIG_NEW", "\"x y\"");	/* at the end */
	kdotconfig_set(&c, "CONFIG_OFF", NULL);
	assert_int_equal(kdotconfig_get(&c, "CONFIG_NEW")->line, 0);
	assert_text(&c, "# head\nCONFIG_A=m\nCONFIG_B=y\n# tail\n"
			"CONFIG_NEW=\"x y\"\n# CONFIG_OFF is not set\n");
	assert_true(kdotconfig_remove(&c, "CONFIG_B"));
	assert_false(kdotconfig_remove(&c, "CONFIG_B"));
	assert_false(kdotconfig_remove(&c, "CONFIG_NOPE"));
	assert_null(kdotconfig_get(&c, "CONFIG_B"));
	assert_int_equal(kdotconfig_count(&c), 3);
	assert_text(&c, "# head\nCONFIG_A=m\n# tail\n"
			"CONFIG_NEW=\"x y\"\n# CONFIG_OFF is not set\n");
	/* removed, then set again: a new entry at the end */
	kdotconfig_set(&c, "CONFIG_B", "y");
	assert_text(&c, "# head\nCONFIG_A=m\n# tail\n"
			"CONFIG_NEW=\"x y\"\n# CONFIG_OFF is not set\nCONFIG_B=y\n");
	kdotconfig_free(&c);
}

/* ktest.pl's apply_min_config: forced lines leave their place, go last. */
static void test_force(void **state)
{
	struct kdotconfig c, f;

	parse(&c, "# gen\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n"
		  "CONFIG_D=m\n");
	parse(&f, "# my fragment\nCONFIG_C=n\nCONFIG_B=y\nCONFIG_E=y\n"
		  "# CONFIG_D is not set\nbogus line\n");
	kdotconfig_force(&c, &f);
	assert_text(&c, "# gen\nCONFIG_A=y\n"
			"CONFIG_C=n\nCONFIG_B=y\nCONFIG_E=y\n"
			"# CONFIG_D is not set\n");
	kdotconfig_free(&f);
	/* an empty force list changes nothing */
	kdotconfig_init(&f);
	kdotconfig_force(&c, &f);
	assert_int_equal(kdotconfig_count(&c), 5);
	kdotconfig_free(&f);
	kdotconfig_free(&c);
}

/* Building the force list: ADD_CONFIG files, then MIN_CONFIG on top. */
static void test_merge(void **state)
{
	struct kdotconfig all, a, b;

	kdotconfig_init(&all);
	parse(&a, "CONFIG_X=y\nCONFIG_Y=y\n# CONFIG_Z is not set\n");
	parse(&b, "CONFIG_Z=y\nCONFIG_X=m\nCONFIG_W=y\n");
	kdotconfig_merge(&all, &a);
	kdotconfig_merge(&all, &b);
	assert_text(&all, "CONFIG_X=m\nCONFIG_Y=y\nCONFIG_Z=y\nCONFIG_W=y\n");
	kdotconfig_free(&a);
	kdotconfig_free(&b);
	kdotconfig_free(&all);
}

static void test_iterate_and_compact(void **state)
{
	const struct kdotconfig_entry *e;
	struct kdotconfig c;
	char name[32];
	size_t i = 0, n = 0;

	kdotconfig_init(&c);
	for (int k = 0; k < 1000; k++) {
		snprintf(name, sizeof(name), "CONFIG_S%d", k);
		kdotconfig_set(&c, name, k % 2 ? "y" : NULL);
	}
	for (int k = 0; k < 1000; k++) {
		if (k % 10 == 3)
			continue;
		snprintf(name, sizeof(name), "CONFIG_S%d", k);
		assert_true(kdotconfig_remove(&c, name));
	}
	assert_int_equal(kdotconfig_count(&c), 100);
	assert_true(c.n < 1000);	/* the holes were closed */
	while ((e = kdotconfig_next(&c, &i))) {
		snprintf(name, sizeof(name), "CONFIG_S%zu", n * 10 + 3);
		assert_string_equal(e->name, name);
		assert_ptr_equal(kdotconfig_get(&c, name), e);
		assert_string_equal(e->value, "y");
		n++;
	}
	assert_int_equal(n, 100);
	kdotconfig_free(&c);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/ktest-kconfig.XXXXXX";
	char path[128], tmp[140];
	struct kdotconfig c, d;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/.config", dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);

	kdotconfig_init(&c);
	errno = 0;
	assert_int_equal(kdotconfig_read(&c, path), -1);
	assert_int_equal(errno, ENOENT);
	kdotconfig_parse(&c, sample, strlen(sample));
	kdotconfig_set(&c, "CONFIG_SMP", "y");
	assert_int_equal(kdotconfig_write(&c, path), 0);
	assert_int_equal(access(tmp, F_OK), -1);

	kdotconfig_init(&d);
	assert_int_equal(kdotconfig_read(&d, path), 0);
	assert_int_equal(kdotconfig_count(&d), 8);
	assert_string_equal(kdotconfig_get(&d, "CONFIG_SMP")->value, "y");
	kdotconfig_free(&d);

	snprintf(path, sizeof(path), "%s/no/such/dir/.config", dir);
	assert_int_equal(kdotconfig_write(&c, path), -1);
	assert_int_equal(errno, ENOENT);
	kdotconfig_free(&c);

	snprintf(path, sizeof(path), "%s/.config", dir);
	unlink(path);
	rmdir(dir);
}

static void test_name_ok(void **state)
{
	assert_true(kdotconfig_name_ok("CONFIG_A"));
	assert_true(kdotconfig_name_ok("CONFIG_SERIAL_8250_CONSOLE"));
	assert_true(kdotconfig_name_ok("CONFIG_lower_1"));
	assert_false(kdotconfig_name_ok("CONFIG_"));
	assert_false(kdotconfig_name_ok("CONFIG"));
	assert_false(kdotconfig_name_ok("SMP"));
	assert_false(kdotconfig_name_ok("CONFIG_A B"));
	assert_false(kdotconfig_name_ok("CONFIG_A=y"));
	assert_false(kdotconfig_name_ok(""));
}

/*
 * The differences config bisect works on: values that differ, a name one
 * side does not have (only when the other enables or sets it: absent and
 * "is not set" are both n), in b's order then a's own.
 */
static void test_diff(void **state)
{
	static const char a_text[] =
		"CONFIG_A=y\n"
		"# CONFIG_B is not set\n"
		"CONFIG_C=\"one\"\n"
		"CONFIG_SAME=m\n"
		"# CONFIG_ABSENT_IN_B is not set\n"
		"CONFIG_ONLY_A=y\n";
	static const char b_text[] =
		"CONFIG_ONLY_B=123\n"
		"CONFIG_C=\"two\"\n"
		"CONFIG_B=y\n"
		"CONFIG_SAME=m\n"
		"# CONFIG_A is not set\n"
		"# CONFIG_NOT_IN_A is not set\n";
	struct kdotconfig a, b;
	struct kdotconfig_change *d;
	size_t n;

	(void)state;
	kdotconfig_init(&a);
	kdotconfig_init(&b);
	kdotconfig_parse(&a, a_text, strlen(a_text));
	kdotconfig_parse(&b, b_text, strlen(b_text));
	n = kdotconfig_diff(&a, &b, &d);
	assert_int_equal(n, 5);
	assert_string_equal(d[0].name, "CONFIG_ONLY_B");
	assert_false(d[0].in_a);
	assert_null(d[0].a);
	assert_string_equal(d[0].b, "123");
	assert_string_equal(d[1].name, "CONFIG_C");
	assert_string_equal(d[1].a, "\"one\"");
	assert_string_equal(d[1].b, "\"two\"");
	assert_string_equal(d[2].name, "CONFIG_B");
	assert_null(d[2].a);
	assert_true(d[2].in_a);
	assert_string_equal(d[3].name, "CONFIG_A");
	assert_string_equal(d[3].a, "y");
	assert_null(d[3].b);
	assert_true(d[3].in_b);
	assert_string_equal(d[4].name, "CONFIG_ONLY_A");
	assert_false(d[4].in_b);
	assert_true(kdotconfig_has_value(&a, "CONFIG_B", NULL));
	assert_true(kdotconfig_has_value(&a, "CONFIG_NOWHERE", NULL));
	assert_true(kdotconfig_has_value(&b, "CONFIG_ONLY_B", "123"));
	assert_false(kdotconfig_has_value(&b, "CONFIG_ONLY_B", NULL));
	free(d);
	assert_int_equal(kdotconfig_diff(&a, &a, &d), 0);
	free(d);
	kdotconfig_free(&a);
	kdotconfig_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_sample),
		cmocka_unit_test(test_enabled),
		cmocka_unit_test(test_bad_and_odd_lines),
		cmocka_unit_test(test_crlf_and_no_newline),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_set_remove),
		cmocka_unit_test(test_force),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_iterate_and_compact),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_name_ok),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
