// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ktest.conf reader and the model's run-time resolution: every construct
 * of ktest.pl's config language, with the values ktest.pl would use.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/legacy.h"
#include "conf/model.h"
#include "fixture.h"

/* reads text as "t.conf"; applies defaults and NUM_TESTS like a run does */
static int rd(struct fx *f, const char *text)
{
	const struct kval *n;
	long num = 1;
	int ret = klegacy_read_buf(&f->c, "t.conf", text, strlen(text));

	if (ret)
		return ret;
	kconfig_apply_defaults(&f->c);
	n = kconfig_lookup(&f->c, "NUM_TESTS");
	if (n)
		assert_true(kopt_parse_int(n->value, &num));
	f->c.num_tests = (int)num;
	return 0;
}

/* the value test i resolves for name ("(undef)" when undefined) */
static char *val(struct fx *f, const char *name, int i)
{
	static char buf[4096];
	char *v;

	assert_int_equal(kconfig_resolve(&f->c, name, i, &v), 0);
	snprintf(buf, sizeof(buf), "%s", v ? v : "(undef)");
	free(v);
	return buf;
}

#define BASE "MACHINE = box\nBUILD_DIR = /src\nOUTPUT_DIR = /out\n"

static void t_defaults_and_tests(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TIMEOUT = 30\n"
			 "TEST_START\nTEST_TYPE = build\n"
			 "TEST_START\nTEST_TYPE = install\nTIMEOUT = 5\n"), 0);
	assert_int_equal(f->c.num_tests, 2);
	assert_string_equal(val(f, "TEST_TYPE", 1), "build");
	assert_string_equal(val(f, "TEST_TYPE", 2), "install");
	assert_string_equal(val(f, "TIMEOUT", 1), "30");
	assert_string_equal(val(f, "TIMEOUT", 2), "5");
	/* ktest.pl's own defaults fill the rest */
	assert_string_equal(val(f, "SSH_USER", 1), "root");
	assert_string_equal(val(f, "TMP_DIR", 2), "/tmp/ktest/box");
	assert_string_equal(val(f, "BISECT_TYPE", 1), "(undef)");
}

static void t_no_headers_is_no_test_case(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE), 0);
	assert_false(f->c.test_case);
}

static void t_defaults_header_is_test_case(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "DEFAULTS\n" BASE "NUM_TESTS = 3\n"), 0);
	assert_true(f->c.test_case);
	assert_int_equal(f->c.num_tests, 3);
	assert_string_equal(val(f, "MACHINE", 3), "box");
}

static void t_iterate(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START ITERATE 3\nTEST_TYPE = boot\n"
			 "TEST_START\nTEST_TYPE = build\n"), 0);
	assert_int_equal(f->c.num_tests, 4);
	assert_int_equal(kconfig_repeat_count(&f->c, 1), 3);
	assert_int_equal(kconfig_repeat_parent(&f->c, 3), 1);
	/* iterations 2 and 3 find the first one's options */
	assert_string_equal(val(f, "TEST_TYPE", 3), "boot");
	assert_string_equal(val(f, "TEST_TYPE", 4), "build");
}

static void t_skip_takes_no_number(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START SKIP\nTEST_TYPE = boot\n"
			 "TEST_START\nTEST_TYPE = install\n"), 0);
	assert_int_equal(f->c.num_tests, 1);
	assert_string_equal(val(f, "TEST_TYPE", 1), "install");
}

static void t_if_else_chain(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "R := fail\n"
			 "DEFAULTS IF ${R} == none\nX1 = a\n"
			 "DEFAULTS ELSE IF ${R} == fail\nX1 = b\n"
			 "DEFAULTS ELSE\nX1 = c\n"
			 "DEFAULTS\nIGNORE_UNUSED = 1\nTEST_START\n"), 0);
	assert_string_equal(val(f, "X1", 1), "b");
}

static void t_if_defined(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "DEFAULTS IF NOT DEFINED BOX\nBOX := ${MACHINE}x\n"
			 "DEFAULTS\nTEST_START\nTEST_NAME = ${BOX}\n"), 0);
	/* MACHINE is an option: unknown to the read-time expansion */
	assert_string_equal(val(f, "TEST_NAME", 1), "boxx");
}

static void t_else_flag_quirk(void **state)
{
	struct fx *f = *state;

	/* ktest.pl: a false IF does not reset "a branch was taken" */
	assert_int_equal(rd(f, BASE "IGNORE_UNUSED = 1\n"
			 "DEFAULTS IF 1\nX1 = a\n"
			 "DEFAULTS IF 0\nX2 = b\n"
			 "ELSE\nX3 = c\n"
			 "TEST_START\n"), 0);
	assert_string_equal(val(f, "X1", 1), "a");
	assert_string_equal(val(f, "X2", 1), "(undef)");
	assert_string_equal(val(f, "X3", 1), "(undef)");
	assert_non_null(strstr(msgs(f), "t.conf:9: warning: this ELSE is skipped because the IF at line 5 was true"));
}

static void t_bare_else_after_false_test(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "IGNORE_UNUSED = 1\nTEST_START\nTEST_NAME = one\n"
			 "TEST_START IF 0\nX1 = no\n"
			 "ELSE\nX2 = yes\n"), 0);
	assert_int_equal(f->c.num_tests, 1);
	/* the options land on the test before the skipped one */
	assert_string_equal(val(f, "X2", 1), "yes");
	assert_non_null(strstr(msgs(f), "t.conf:9: warning: options after this ELSE go to test 1"));
}

static void t_else_without_if(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "ELSE\nX = 1\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: ELSE found with out matching IF section"));
}

static void t_test_start_else(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START IF 0\nTEST_NAME = a\n"
			 "TEST_START ELSE\nTEST_NAME = b\n"), 0);
	assert_int_equal(f->c.num_tests, 1);
	assert_string_equal(val(f, "TEST_NAME", 1), "b");
}

static void t_iterate_after_if_dies(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START IF 1 ITERATE 2\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: Undefined content"));
	assert_non_null(strstr(msgs(f), "ITERATE must come before IF"));
}

static void t_garbage_after_header(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START FOO\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: Garbage found after TEST_START"));
}

static void t_override(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "POWER_CYCLE = a\n"
			 "DEFAULTS OVERRIDE\nPOWER_CYCLE = b\n"
			 "TEST_START\n"), 0);
	assert_string_equal(val(f, "POWER_CYCLE", 1), "b");
}

static void t_override_twice_dies(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "POWER_CYCLE = a\n"
			 "DEFAULTS OVERRIDE\nPOWER_CYCLE = b\nPOWER_CYCLE = c\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:7: error: Option POWER_CYCLE defined more than once! (In the same override section!)"));
}

static void t_override_new_name_quirk(void **state)
{
	struct fx *f = *state;

	/* a name new in the section may be set twice; the third time dies */
	assert_int_equal(rd(f, BASE "DEFAULTS OVERRIDE\nPOWER_OFF = a\nPOWER_OFF = b\n"
			 "TEST_START\n"), 0);
	assert_string_equal(val(f, "POWER_OFF", 1), "b");
	assert_non_null(strstr(msgs(f), "t.conf:6: warning: POWER_OFF is set twice"));
}

static void t_override_then_defaults_dies(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "DEFAULTS OVERRIDE\nMACHINE = b\n"
			 "DEFAULTS\nMACHINE = c\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:7: error: Option MACHINE defined more than once!"));
}

static void t_duplicate(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nTIMEOUT = 1\nTIMEOUT = 2\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:6: error: Option TIMEOUT[1] defined more than once!"));
	assert_non_null(strstr(msgs(f), "t.conf:5: first defined here"));
}

static void t_variables(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "V := one\nA1 = ${V}\nV := two\nA2 = ${V}\n"
			 "V :=\nA3 = ${V}\nIGNORE_UNUSED = 1\nTEST_START\n"), 0);
	/* evaluated at once: later changes do not reach earlier values */
	assert_string_equal(val(f, "A1", 1), "one");
	assert_string_equal(val(f, "A2", 1), "two");
	/* an empty assignment deletes: ${V} stays for the run-time pass */
	assert_string_equal(val(f, "A3", 1), "${V}");
}

static void t_variable_in_test_section_is_global(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nV := x\nTEST_START\nTEST_NAME = ${V}\n"), 0);
	assert_string_equal(val(f, "TEST_NAME", 2), "x");
}

static void t_hash_drops_line(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "BUILD_OPTIONS = -j8 # fast\n# comment\nTEST_START\n"), 0);
	assert_string_equal(val(f, "BUILD_OPTIONS", 1), "(undef)");
	assert_non_null(strstr(msgs(f), "t.conf:4: warning: the whole line is ignored"));
	/* a real comment line says nothing */
	assert_null(strstr(msgs(f), "t.conf:5:"));
}

static void t_quotes_kept(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "SYSLINUX_LABEL = \"test-kernel\"   \nTEST_START\n"), 0);
	assert_string_equal(val(f, "SYSLINUX_LABEL", 1), "\"test-kernel\"");
}

static void t_self_append(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "ADD_CONFIG = /a\nTEST_START\nADD_CONFIG = ${ADD_CONFIG} /b\n"
			 "TEST_START\n"), 0);
	assert_string_equal(val(f, "ADD_CONFIG", 1), "/a /b");
	assert_string_equal(val(f, "ADD_CONFIG", 2), "/a");
}

static void t_self_append_without_default(void **state)
{
	struct fx *f = *state;

	/* ktest.pl 6.1 recursed here until its guard died; upstream: empty */
	assert_int_equal(rd(f, BASE "TEST_START\nADD_CONFIG = ${ADD_CONFIG} /b\n"), 0);
	assert_string_equal(val(f, "ADD_CONFIG", 1), " /b");
}

static void t_late_binding(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "T := ${OUTPUT_DIR}/${BUILD_TARGET}\n"
			 "POST_INSTALL = cp ${T} /tftp\n"
			 "TEST_START\nOUTPUT_DIR = /o1\n"
			 "TEST_START\nBUILD_TARGET = vmlinux\n"), 0);
	assert_string_equal(val(f, "POST_INSTALL", 1), "cp /o1/arch/x86/boot/bzImage /tftp");
	assert_string_equal(val(f, "POST_INSTALL", 2), "cp /out/vmlinux /tftp");
}

static void t_iterate_parent_lookup(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "CROSS = none\nIGNORE_UNUSED = 1\n"
			 "TEST_START ITERATE 2\nCROSS = arm\nTEST_NAME = ${CROSS}\n"), 0);
	assert_string_equal(val(f, "TEST_NAME", 2), "arm");
}

static void t_empty_per_test_removes_default(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "POWER_OFF = off\nTEST_START\nPOWER_OFF =\nTEST_START\n"), 0);
	assert_string_equal(val(f, "POWER_OFF", 1), "(undef)");
	assert_string_equal(val(f, "POWER_OFF", 2), "off");
}

static void t_per_test_key_in_defaults(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nTEST_START\nDEFAULTS\nTIMEOUT[2] = 7\n"), 0);
	assert_string_equal(val(f, "TIMEOUT", 1), "120");
	assert_string_equal(val(f, "TIMEOUT", 2), "7");
}

static void t_escaped_dollar(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "V := x\nTEST := echo \\${V}\nTEST_START\nTEST = echo \\${V} ${V}\n"), 0);
	assert_string_equal(val(f, "TEST", 1), "echo \\${V} x");
}

static void t_nested_and_shell(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "B := ARM\nA_ARM := yes\nTEST_START\n"
			 "TEST_NAME = ${A_${B}} ${shell printf hi} end\n"), 0);
	assert_string_equal(val(f, "TEST_NAME", 1), "yes hi end");
}

static void t_shell_disabled(void **state)
{
	struct fx *f = *state;

	f->c.allow_shell = false;
	assert_int_equal(rd(f, BASE "X := ${shell echo hi}\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: ${shell echo hi}: running commands is disabled"));
}

static void t_recursive_variable(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "A := ${A}x\nB := ${A}\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:5: error: variable ${A} keeps expanding"));
}

static void t_recursive_options(void **state)
{
	struct fx *f = *state;
	char *v;

	assert_int_equal(rd(f, BASE "IGNORE_UNUSED = 1\nA1 = ${B1}x\nB1 = ${A1}\nTEST_START\n"), 0);
	assert_int_equal(kconfig_resolve(&f->c, "A1", 1, &v), -1);
	assert_null(v);
	assert_non_null(strstr(msgs(f), "t.conf:5: error: A1: over 100 evaluations"));
}

static void t_doubling_value(void **state)
{
	struct fx *f = *state;
	char *v;

	/* doubles every round: stopped long before 100 rounds */
	assert_int_equal(rd(f, BASE "ADD_CONFIG = base\nTEST_START\n"
			 "ADD_CONFIG = ${ADD_CONFIG} x ${ADD_CONFIG}\n"
			 "POST_BUILD = echo ${ADD_CONFIG}\n"), 0);
	assert_int_equal(kconfig_resolve(&f->c, "POST_BUILD", 1, &v), -1);
	assert_non_null(strstr(msgs(f), "t.conf:7: error: POST_BUILD: more than 1 MiB"));
	assert_non_null(strstr(msgs(f), "t.conf:6: a value in the loop"));
}

static int fake_version(void *ctx, char **out)
{
	(void)ctx;
	*out = strdup("6.1.0-test");
	return 0;
}

static void t_kernel_version(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nPOST_INSTALL = dracut ${KERNEL_VERSION}\n"), 0);
	/* no kernel yet: it stays as written */
	assert_string_equal(val(f, "POST_INSTALL", 1), "dracut ${KERNEL_VERSION}");
	f->c.kernel_version = fake_version;
	assert_string_equal(val(f, "POST_INSTALL", 1), "dracut 6.1.0-test");
}

static void t_unknown_stays(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nMAKE_CMD = PATH=${PATH}:/x make\n"), 0);
	assert_string_equal(val(f, "MAKE_CMD", 1), "PATH=${PATH}:/x make");
}

static void t_num_tests_and_test_start(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "NUM_TESTS = 2\nTEST_START\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:5: error: Can not specify both NUM_TESTS and TEST_START"));
}

static void t_log_file_in_test(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nLOG_FILE = /x\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:5: error: LOG_FILE must be set in DEFAULTS section"));
}

static void t_log_file_resolved_at_minus_one(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "LOG_FILE = ${OUTPUT_DIR}/log\nTEST_START\nOUTPUT_DIR = /o1\n"), 0);
	assert_string_equal(val(f, "LOG_FILE", 1), "/out/log");
}

static void t_include_in_test(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nINCLUDE x.conf\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:5: error: INCLUDE can only be done in default sections"));
}

static void t_garbage(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "timeout = 5\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: Garbage found in config"));
	assert_non_null(strstr(msgs(f), "did you mean TIMEOUT?"));
}

static void t_default_singular(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "DEFAULT\n"), -1);
	assert_non_null(strstr(msgs(f), "the section keyword is DEFAULTS"));
}

static void t_crlf(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "MACHINE = box\r\nBUILD_DIR = /src\r\nOUTPUT_DIR = /o\r\n"
			 "TEST_START\r\nTEST_TYPE = build\r\n"), 0);
	assert_string_equal(val(f, "OUTPUT_DIR", 1), "/o");
	assert_string_equal(val(f, "TEST_TYPE", 1), "build");
}

static void t_cr_only(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "MACHINE = box\rBUILD_DIR = /src\r"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:1: error: carriage return inside the line"));
}

static void t_nul(void **state)
{
	struct fx *f = *state;
	static const char text[] = "MACHINE = box\nX = a\0b\n";

	assert_int_equal(klegacy_read_buf(&f->c, "t.conf", text, sizeof(text) - 1), -1);
	assert_non_null(strstr(msgs(f), "t.conf:2: error: NUL byte"));
}

static void t_bad_utf8(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "MACHINE = box\nTEST_NAME = caf\xe9\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:2: error: the line is not valid UTF-8"));
}

static void t_long_line(void **state)
{
	struct fx *f = *state;
	size_t n = KLEGACY_MAX_LINE + 100;
	char *text = malloc(n + 32);

	strcpy(text, "MACHINE = box\nX = ");
	memset(text + strlen(text), 'a', n);
	text[18 + n] = '\0';
	assert_int_equal(rd(f, text), -1);
	assert_non_null(strstr(msgs(f), "t.conf:2: error: line longer than"));
	free(text);
}

static void t_unused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TIMEOUTT = 5\nCROSS = x\nMAKE_CMD = make ${CROSS}\nTEST_START\n"), 0);
	assert_int_equal(kconfig_check_unused(&f->c), 1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: unknown option TIMEOUTT"));
	assert_non_null(strstr(msgs(f), "did you mean TIMEOUT?"));
}

static void t_unused_ignored(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TIMEOUTT = 5\nIGNORE_UNUSED = 1\nTEST_START\n"), 0);
	assert_int_equal(kconfig_check_unused(&f->c), 0);
}

static void t_check_values(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TIMEOUT = soon\nTEST_START\nTEST_TYPE = boto\n"), 0);
	assert_int_equal(kconfig_check_values(&f->c), 2);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: TIMEOUT (test 1): 'soon' is not a whole number"));
	assert_non_null(strstr(msgs(f), "t.conf:6: error: TEST_TYPE (test 1): 'boto' is not one of"));
	assert_non_null(strstr(msgs(f), "did you mean 'boot'?"));
}

static void t_mandatory(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "BUILD_DIR = /s\nOUTPUT_DIR = /o\nTEST_START\nTEST_TYPE = boot\n"
			 "TEST_START\nTEST_TYPE = build\n"), 0);
	/* MACHINE for both; POWER_CYCLE, CONSOLE, GRUB_MENU for the boot */
	assert_int_equal(kconfig_check_mandatory(&f->c, NULL, NULL), 4);
	assert_non_null(strstr(msgs(f), "mandatory option MACHINE is not set (needed by tests 1, 2)"));
	assert_non_null(strstr(msgs(f), "mandatory option POWER_CYCLE is not set (needed by test 1)"));
	assert_non_null(strstr(msgs(f), "mandatory option GRUB_MENU is not set (needed by test 1)"));
}

static void t_levels(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "TEST_START\nTEST_TYPE = patchcheck\nPATCHCHECK_TYPE = build\n"
			 "TEST_START\nTEST_TYPE = install\n"
			 "TEST_START\nTEST_TYPE = bisect\nBISECT_TYPE = boot\n"), 0);
	assert_int_equal(kconfig_test_level(&f->c, 1), KLEVEL_BUILD);
	assert_int_equal(kconfig_test_level(&f->c, 2), KLEVEL_INSTALL);
	assert_int_equal(kconfig_test_level(&f->c, 3), KLEVEL_BOOT);
}

static void t_locked_variable(void **state)
{
	struct fx *f = *state;

	kconfig_set_var(&f->c, "RUN", "arm");
	strmap_put(&f->c.locked, "RUN", NULL);
	assert_int_equal(rd(f, BASE "RUN := x86\nTEST_START IF ${RUN} == arm\nTEST_NAME = arm\n"), 0);
	assert_int_equal(f->c.num_tests, 1);
	assert_string_equal(val(f, "TEST_NAME", 1), "arm");
}

/* INCLUDE, with real files */
static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void t_include(void **state)
{
	struct fx *f = *state;
	char dir[] = "/tmp/ktest-unit.XXXXXX";
	char a[256], b[256], sub[256];

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/inc", dir);
	mkdir(sub, 0700);
	snprintf(a, sizeof(a), "%s/main.conf", dir);
	snprintf(b, sizeof(b), "%s/inc/more.conf", dir);
	write_file(a, BASE "INCLUDE inc/more.conf\nTEST_START\nTEST_NAME = after\n");
	write_file(b, "TIMEOUT = 9\nTEST_START\nTEST_NAME = inside\n");
	assert_int_equal(klegacy_read(&f->c, a), 0);
	kconfig_apply_defaults(&f->c);
	f->c.num_tests = 2;
	assert_string_equal(val(f, "TEST_NAME", 1), "inside");
	assert_string_equal(val(f, "TEST_NAME", 2), "after");
	assert_string_equal(val(f, "TIMEOUT", 2), "9");
	assert_string_equal(kconfig_lookup(&f->c, "NUM_TESTS")->value, "2");
	unlink(b);
	unlink(a);
	rmdir(sub);
	rmdir(dir);
}

static void t_include_loop(void **state)
{
	struct fx *f = *state;
	char dir[] = "/tmp/ktest-unit.XXXXXX";
	char a[256], b[256];

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.conf", dir);
	snprintf(b, sizeof(b), "%s/b.conf", dir);
	write_file(a, "MACHINE = m\nINCLUDE b.conf\n");
	write_file(b, "\nINCLUDE a.conf\n");
	assert_int_equal(klegacy_read(&f->c, a), -1);
	assert_non_null(strstr(msgs(f), "b.conf:2: error: INCLUDE loop"));
	unlink(b);
	unlink(a);
	rmdir(dir);
}

static void t_include_missing(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "INCLUDE /nonexistent/x.conf\n"), -1);
	assert_non_null(strstr(msgs(f), "t.conf:4: error: Can't read file /nonexistent/x.conf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(t_defaults_and_tests),
		T(t_no_headers_is_no_test_case),
		T(t_defaults_header_is_test_case),
		T(t_iterate),
		T(t_skip_takes_no_number),
		T(t_if_else_chain),
		T(t_if_defined),
		T(t_else_flag_quirk),
		T(t_bare_else_after_false_test),
		T(t_else_without_if),
		T(t_test_start_else),
		T(t_iterate_after_if_dies),
		T(t_garbage_after_header),
		T(t_override),
		T(t_override_twice_dies),
		T(t_override_new_name_quirk),
		T(t_override_then_defaults_dies),
		T(t_duplicate),
		T(t_variables),
		T(t_variable_in_test_section_is_global),
		T(t_hash_drops_line),
		T(t_quotes_kept),
		T(t_self_append),
		T(t_self_append_without_default),
		T(t_late_binding),
		T(t_iterate_parent_lookup),
		T(t_empty_per_test_removes_default),
		T(t_per_test_key_in_defaults),
		T(t_escaped_dollar),
		T(t_nested_and_shell),
		T(t_shell_disabled),
		T(t_recursive_variable),
		T(t_recursive_options),
		T(t_doubling_value),
		T(t_kernel_version),
		T(t_unknown_stays),
		T(t_num_tests_and_test_start),
		T(t_log_file_in_test),
		T(t_log_file_resolved_at_minus_one),
		T(t_include_in_test),
		T(t_garbage),
		T(t_default_singular),
		T(t_crlf),
		T(t_cr_only),
		T(t_nul),
		T(t_bad_utf8),
		T(t_long_line),
		T(t_unused),
		T(t_unused_ignored),
		T(t_check_values),
		T(t_mandatory),
		T(t_levels),
		T(t_locked_variable),
		T(t_include),
		T(t_include_loop),
		T(t_include_missing),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
