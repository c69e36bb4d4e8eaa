// SPDX-License-Identifier: GPL-2.0-only
/*
 * The native config reader (every construct, and the places where
 * libconfuse 3.3 would get it wrong on its own: line numbers after comments,
 * ${...} and the environment, unclosed sections, repeated options), and
 * ktest convert's round trip through it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/convert.h"
#include "conf/legacy.h"
#include "conf/model.h"
#include "conf/native.h"
#include "fixture.h"

/* what is needed for a run, after reading: defaults and NUM_TESTS */
static void ready(struct fx *f)
{
	const struct kval *n;
	long num = 1;

	kconfig_apply_defaults(&f->c);
	n = kconfig_lookup(&f->c, "NUM_TESTS");
	if (n)
		assert_true(kopt_parse_int(n->value, &num));
	f->c.num_tests = (int)num;
}

/* reads text as "t.ktest" and gets it ready for a run */
static int rd(struct fx *f, const char *text)
{
	int ret = knative_read_buf(&f->c, "t.ktest", text, strlen(text));

	if (!ret)
		ready(f);
	return ret;
}

/* a fresh config and no messages, for the next read */
static void reset(struct fx *f)
{
	kconfig_free(&f->c);
	kconfig_init(&f->c, &f->d);
	fclose(f->out);
	free(f->msgs);
	f->msgs = NULL;
	f->out = open_memstream(&f->msgs, &f->msgs_len);
	f->d.out = f->out;
}

/* reading must fail, with this text in the messages; then starts afresh */
static void rd_fails(struct fx *f, const char *text, const char *want)
{
	assert_int_equal(knative_read_buf(&f->c, "t.ktest", text, strlen(text)),
			 -1);
	if (!strstr(msgs(f), want))
		fail_msg("wanted '%s' in:\n%s", want, msgs(f));
	reset(f);
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

/* the value as stored, before run-time expansion */
static const char *raw(struct fx *f, const char *key)
{
	const struct kval *v = kconfig_lookup(&f->c, key);

	return v ? v->value : "(unset)";
}

static int line_of(struct fx *f, const char *key)
{
	const struct kval *v = kconfig_lookup(&f->c, key);

	assert_non_null(v);
	return v->origin.line;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void make_dir(struct fx *f)
{
	char sub[PATH_MAX];

	snprintf(f->dir, sizeof(f->dir), "/tmp/ktest-native.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	assert_int_equal(mkdir(sub, 0700), 0);
}

#define BASE "machine = \"box\"\nbuild_dir = \"/src\"\noutput_dir = \"/out\"\n"

/* ---- options, values, quoting ---- */

static void t_globals(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "timeout = 120\nbuild_type = defconfig\n"
			 "test_type = 'build'\n"), 0);
	assert_true(f->c.test_case);
	assert_int_equal(f->c.num_tests, 1);
	assert_string_equal(val(f, "MACHINE", 1), "box");
	assert_string_equal(val(f, "TIMEOUT", 1), "120");
	assert_string_equal(val(f, "BUILD_TYPE", 1), "defconfig");
	assert_string_equal(val(f, "TEST_TYPE", 1), "build");
	/* ktest.pl's defaults fill the rest */
	assert_string_equal(val(f, "SSH_USER", 1), "root");
	assert_int_equal(line_of(f, "TIMEOUT"), 4);
	assert_int_equal(kconfig_check_values(&f->c), 0);
}

static void t_string_escapes(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "test = \"a\\tb \\\"q\\\" \\\\ c\\nd\"\n"
			 "post_build = 'x \\' \\\\ \\n'\n"), 0);
	assert_string_equal(raw(f, "TEST"), "a\tb \"q\" \\ c\nd");
	assert_string_equal(raw(f, "POST_BUILD"), "x ' \\ \\n");
}

static void t_test_option_at_top(void **state)
{
	struct fx *f = *state;

	/* the option TEST and the test sections share a name */
	assert_int_equal(rd(f, BASE "test = \"ssh ${machine} run\"\n"
			 "test \"t\" {\n\ttest_type = test\n}\n"
			 "test \"u\" {\n\ttest = \"own\"\n}\n"), 0);
	assert_string_equal(val(f, "TEST", 1), "ssh box run");
	assert_string_equal(val(f, "TEST", 2), "own");
	assert_int_equal(f->c.num_tests, 2);
}

static void t_booleans(void **state)
{
	struct fx *f = *state;
	bool b;

	assert_int_equal(rd(f, BASE "die_on_failure = no\nclear_log = TRUE\n"
			 "build_noclean = on\nno_install = off\n"
			 "reboot_on_success = 0\npoweroff_on_error = 7\n"
			 "email_on_error = \"yes\"\nbisect_skip = false\n"), 0);
	assert_string_equal(raw(f, "DIE_ON_FAILURE"), "0");
	assert_string_equal(raw(f, "CLEAR_LOG"), "1");
	assert_string_equal(raw(f, "BUILD_NOCLEAN"), "1");
	assert_string_equal(raw(f, "NO_INSTALL"), "0");
	assert_string_equal(raw(f, "REBOOT_ON_SUCCESS"), "0");
	assert_string_equal(raw(f, "POWEROFF_ON_ERROR"), "7");
	assert_string_equal(raw(f, "EMAIL_ON_ERROR"), "1");
	assert_string_equal(raw(f, "BISECT_SKIP"), "0");
	assert_int_equal(kconfig_get_bool(&f->c, KOPT_DIE_ON_FAILURE, 1, &b), 0);
	assert_false(b);
	assert_int_equal(kconfig_get_bool(&f->c, KOPT_CLEAR_LOG, -1, &b), 0);
	assert_true(b);
	assert_int_equal(kconfig_check_values(&f->c), 0);
}

static void t_bad_boolean(void **state)
{
	rd_fails(*state, BASE "\ndie_on_failure = maybe\n",
		 "t.ktest:5: error: die_on_failure = 'maybe' is not a boolean");
}

static void t_bad_int_found_later(void **state)
{
	struct fx *f = *state;

	/* types are the model's job, with the origin the reader recorded */
	assert_int_equal(rd(f, BASE "# one\n// two\n/* three */\ntimeout = 12x\n"),
			 0);
	assert_true(kconfig_check_values(&f->c) > 0);
	assert_non_null(strstr(msgs(f), "t.ktest:7: error: TIMEOUT"));
}

/* ---- line numbers: libconfuse counts comment lines two or three times ---- */

static void t_lines_after_comments(void **state)
{
	struct fx *f = *state;

	rd_fails(f, "# 1\n# 2\n// 3\n/* 4\n 5\n 6 */\n## 7\n//// 8\n"
		 "machine = \"box\" # 9\n/* 10 */ /* 10 */\n"
		 "# 11\n# 12\n# 13\n# 14\n# 15\n# 16\n# 17\n# 18\n# 19\n"
		 "buld_dir = \"x\" // 20\n",
		 "t.ktest:20: error: unknown option 'buld_dir'\n"
		 "  did you mean 'build_dir'?\n");
}

static void t_origins_after_comments(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "# a\n# b\n# c\n// d\nmachine = box\n"
			 "/* e\n f\n g */\n# h\nbuild_dir = \"/src\" # i\n"
			 "// j\n/* k */ output_dir = \"/out\"\n"
			 "test \"t\" { # l\n// m\n\ttimeout = 5 /* n */\n"
			 "# o\n}\n"), 0);
	assert_int_equal(line_of(f, "MACHINE"), 5);
	assert_int_equal(line_of(f, "BUILD_DIR"), 10);
	assert_int_equal(line_of(f, "OUTPUT_DIR"), 12);
	assert_int_equal(line_of(f, "TIMEOUT[1]"), 15);
	/* the title's TEST_NAME comes from the header line */
	assert_int_equal(line_of(f, "TEST_NAME[1]"), 13);
}

static void t_multiline_string_lines(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "test = \"one\ntwo\nthree\"\npre_test = 'a\nb'\n"
		 "# x\nzz = 1\n",
		 "t.ktest:10: error: unknown option 'zz'");
	assert_int_equal(rd(f, BASE "test = \"one\ntwo\nthree\"\n"), 0);
	assert_string_equal(raw(f, "TEST"), "one\ntwo\nthree");
}

static void t_unknown_in_test_section(void **state)
{
	rd_fails(*state, BASE "# c\n# c\ntest \"a\" {\n\t# c\n\ttest_typ = build\n}\n",
		 "t.ktest:8: error: unknown option 'test_typ' in a test section\n"
		 "  did you mean 'test_type'?\n");
}

static void t_upper_case_option(void **state)
{
	rd_fails(*state, "BUILD_DIR = \"/src\"\n",
		 "t.ktest:1: error: unknown option 'BUILD_DIR'\n"
		 "  option names are lower case: did you mean 'build_dir'?\n");
}

static void t_unquoted_blank(void **state)
{
	/* libconfuse reads "V=1" as the next option */
	rd_fails(*state, BASE "build_options = -j8 V=1\n",
		 "t.ktest:4: error: unknown option 'V'\n"
		 "  a value with blanks needs quotes: build_options = \"... V...\"\n");
}

/* ---- structure ---- */

static void t_unclosed_section(void **state)
{
	rd_fails(*state, BASE "test \"a\" {\n\ttest_type = build\n"
		 "# a comment\ntest \"b\" {\n}\n",
		 "t.ktest:4: error: section 'test' is not closed: '}' missing");
}

static void t_stray_brace(void **state)
{
	rd_fails(*state, BASE "test \"a\" {\n}\n}\nmachine = x\n",
		 "t.ktest:6: error: '}' without a section or list to close");
}

static void t_unterminated(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "test = \"abc\n\n", "t.ktest:4: error: string not closed");
	rd_fails(f, BASE "/* open\n\n", "t.ktest:4: error: comment not closed");
}

static void t_duplicate_option(void **state)
{
	rd_fails(*state, BASE "timeout = 1\n\ntimeout = 2\n",
		 "t.ktest:6: error: 'timeout' is set twice in this section (first at line 4)");
}

static void t_duplicate_in_test(void **state)
{
	rd_fails(*state, BASE "test \"a\" {\n\ttest_type = build\n"
		 "\tbox = x\n\ttest_type = boot\n}\n",
		 "t.ktest:7: error: 'test_type' is set twice in this section (first at line 5)");
}

static void t_duplicate_var(void **state)
{
	/* libconfuse merges the two blocks */
	rd_fails(*state, BASE "vars {\n\tA = 1\n}\nvars {\n\tA = 2\n}\n",
		 "t.ktest:8: error: 'A' is set twice in this section (first at line 5)");
}

static void t_duplicate_title(void **state)
{
	rd_fails(*state, BASE "test a {\n}\ntest \"a\" {\n}\n",
		 "t.ktest:6: error: test 'a' is defined twice (first at line 4)");
}

static void t_box_only_in_box(void **state)
{
	rd_fails(*state, BASE "box \"b\" {\n\tssh_user = root\n"
		 "\tbuild_options = \"-j8\"\n}\n",
		 "t.ktest:6: error: 'build_options' does not describe a box\n"
		 "  set it at the top level or in a test section\n");
}

static void t_global_only_in_test(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "test \"a\" {\n\tlog_file = x.log\n}\n",
		 "t.ktest:5: error: 'log_file' applies to the whole run, not to one test");
	rd_fails(f, BASE "test \"a\" {\n\tnum_tests = 3\n}\n",
		 "'num_tests' applies to the whole run");
	rd_fails(f, BASE "test \"a\" {\n\tdefault_box = b\n}\n",
		 "default_box is set at the top level");
	rd_fails(f, BASE "iterate = 3\n", "iterate = N goes in a test section");
}

static void t_text_checks(void **state)
{
	struct fx *f = *state;
	static const char nul[] = "machine = \"a\"\nbuild_dir = \"x\0y\"\n";
	char *big;

	assert_int_equal(knative_read_buf(&f->c, "t.ktest", nul, sizeof(nul) - 1),
			 -1);
	assert_non_null(strstr(msgs(f), "t.ktest:2: error: NUL byte"));
	rd_fails(f, "machine = \"a\"\rbuild_dir = \"b\"\r", "t.ktest:1: error: carriage return");
	rd_fails(f, "machine = \"a\"\ntest = \"\xc3\x28\"\n", "t.ktest:2: error: test: not valid UTF-8");
	rd_fails(f, "machine = \"a\"\ntest = \"\\xff\"\n", "not valid UTF-8");
	rd_fails(f, "machine = \"a\\0\"\n", "t.ktest:1: error: NUL character in a string");
	rd_fails(f, "machine = a*b\n", "unexpected '*'");
	rd_fails(f, "machine = \"\x01\"\n", "control character 0x01");
	big = malloc(70000);
	memset(big, 'a', 70000);
	memcpy(big, "machine = \"", 11);
	big[69998] = '"';
	big[69999] = '\0';
	rd_fails(f, big, "t.ktest:1: error: line longer than 65536 bytes");
	free(big);
}

static void t_crlf_accepted(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "machine = \"box\"\r\nbuild_dir = \"/src\"\r\n"
			 "# c\r\nzz = 1\r\n"), -1);
	assert_non_null(strstr(msgs(f), "t.ktest:4: error: unknown option 'zz'"));
}

/* ---- ${...}: ktest's, not the environment's ---- */

static void t_refs_kept_everywhere(void **state)
{
	struct fx *f = *state;

	/* libconfuse would expand these from the environment */
	setenv("MACHINE", "from-env", 1);
	setenv("OUTPUT_DIR", "from-env", 1);
	assert_int_equal(rd(f, BASE "test_name = \"${MACHINE}-dq\"\n"
			 "pre_build = '${MACHINE}-sq'\n"
			 "post_build = ${MACHINE}-bare/${OUTPUT_DIR}\n"
			 "pre_test = ${MACHINE}\n"), 0);
	assert_string_equal(raw(f, "TEST_NAME"), "${MACHINE}-dq");
	assert_string_equal(raw(f, "PRE_BUILD"), "${MACHINE}-sq");
	assert_string_equal(raw(f, "POST_BUILD"), "${MACHINE}-bare/${OUTPUT_DIR}");
	assert_string_equal(val(f, "TEST_NAME", 1), "box-dq");
	assert_string_equal(val(f, "PRE_BUILD", 1), "box-sq");
	assert_string_equal(val(f, "POST_BUILD", 1), "box-bare//out");
	assert_string_equal(val(f, "PRE_TEST", 1), "box");
	unsetenv("MACHINE");
	unsetenv("OUTPUT_DIR");
}

static void t_lower_case_refs(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "min_config = \"${build_dir}/min\"\n"
			 "add_config = ${output_dir}/a\n"
			 "vars {\n\tmine = \"m\"\n}\n"
			 "post_build = \"${mine} ${BUILD_DIR} ${no_such}\"\n"), 0);
	assert_string_equal(raw(f, "MIN_CONFIG"), "${BUILD_DIR}/min");
	assert_string_equal(raw(f, "ADD_CONFIG"), "${OUTPUT_DIR}/a");
	assert_string_equal(val(f, "MIN_CONFIG", 1), "/src/min");
	/* names that are no option are kept as written */
	assert_string_equal(raw(f, "POST_BUILD"), "${mine} ${BUILD_DIR} ${no_such}");
	assert_string_equal(val(f, "POST_BUILD", 1), "m /src ${no_such}");
}

static void t_env(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX + 16];

	if (!getenv("HOME"))
		setenv("HOME", "/nowhere", 1);
	setenv("KTEST_T_EMPTY", "", 1);
	unsetenv("KTEST_T_UNSET");
	assert_int_equal(rd(f, BASE "build_options = \"${env:HOME}/x\"\n"
			 "pre_build = ${env:HOME}\n"
			 "post_build = 'a${env:KTEST_T_UNSET:-dflt}b'\n"
			 "pre_test = \"<${env:KTEST_T_EMPTY:-no}>\"\n"), 0);
	snprintf(want, sizeof(want), "%s/x", getenv("HOME"));
	assert_string_equal(raw(f, "BUILD_OPTIONS"), want);
	assert_string_equal(raw(f, "PRE_BUILD"), getenv("HOME"));
	assert_string_equal(raw(f, "POST_BUILD"), "adfltb");
	assert_string_equal(raw(f, "PRE_TEST"), "<>");
	unsetenv("KTEST_T_EMPTY");
}

static void t_env_unset(void **state)
{
	unsetenv("KTEST_T_UNSET");
	rd_fails(*state, BASE "\nbuild_options = \"-j ${env:KTEST_T_UNSET}\"\n",
		 "t.ktest:5: error: environment variable KTEST_T_UNSET is not set\n"
		 "  write ${env:KTEST_T_UNSET:-default}");
}

static void t_escaped_refs(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "test_name = \"\\${env:HOME} \\${build_dir}\"\n"
			 "pre_build = \"\\\\${MACHINE} is ${MACHINE}\"\n"
			 "post_build = 'a \\${env:HOME}'\n"
			 "pre_test = \"cost $5 ${MACHINE}$\"\n"), 0);
	/* \${ in double quotes: kept as written */
	assert_string_equal(raw(f, "TEST_NAME"), "${env:HOME} ${build_dir}");
	/* \\${ is ktest's own escape: the backslash stays, nothing expands */
	assert_string_equal(raw(f, "PRE_BUILD"), "\\${MACHINE} is ${MACHINE}");
	assert_string_equal(val(f, "PRE_BUILD", 1), "\\${MACHINE} is box");
	assert_string_equal(raw(f, "POST_BUILD"), "a \\${env:HOME}");
	assert_string_equal(val(f, "PRE_TEST", 1), "cost $5 box$");
}

/* ---- tests, iterate, titles ---- */

static void t_iterate_numbering(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "test \"a\" {\n}\n"
			 "test \"b\" {\n\titerate = 3\n\tbuild_type = randconfig\n}\n"
			 "test \"c\" {\n\tbuild_type = defconfig\n}\n"), 0);
	assert_int_equal(f->c.num_tests, 5);
	assert_string_equal(raw(f, "NUM_TESTS"), "5");
	assert_int_equal(kconfig_repeat_parent(&f->c, 4), 2);
	assert_int_equal(kconfig_repeat_count(&f->c, 2), 3);
	assert_string_equal(val(f, "BUILD_TYPE", 1), "oldconfig");
	assert_string_equal(val(f, "BUILD_TYPE", 3), "randconfig");
	assert_string_equal(val(f, "BUILD_TYPE", 4), "randconfig");
	assert_string_equal(val(f, "BUILD_TYPE", 5), "defconfig");
	assert_string_equal(val(f, "TEST_NAME", 4), "b");
	assert_string_equal(val(f, "TEST_NAME", 5), "c");
}

static void t_bad_iterate(void **state)
{
	rd_fails(*state, BASE "test \"a\" {\n\titerate = 0\n}\n",
		 "t.ktest:5: error: iterate = '0': give a count from 1 to 100000");
}

static void t_titles(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "test \"from title\" {\n}\n"
			 "test \"t2\" {\n\ttest_name = \"own ${MACHINE}\"\n}\n"
			 "test \"t3\" {\n\ttest_name = \"\"\n}\n"), 0);
	assert_string_equal(val(f, "TEST_NAME", 1), "from title");
	assert_string_equal(val(f, "TEST_NAME", 2), "own box");
	assert_string_equal(val(f, "TEST_NAME", 3), "(undef)");
}

static void t_global_test_name(void **state)
{
	struct fx *f = *state;

	/* a global test_name outranks the titles */
	assert_int_equal(rd(f, BASE "test_name = \"all\"\n"
			 "test \"a\" {\n}\ntest \"b\" {\n\ttest_name = \"bee\"\n}\n"),
			 0);
	assert_string_equal(val(f, "TEST_NAME", 1), "all");
	assert_string_equal(val(f, "TEST_NAME", 2), "bee");
}

static void t_num_tests(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "num_tests = 3\n"), 0);
	assert_int_equal(f->c.num_tests, 3);
	assert_string_equal(val(f, "MACHINE", 3), "box");
	assert_string_equal(val(f, "TEST_NAME", 2), "(undef)");
}

static void t_num_tests_with_tests(void **state)
{
	rd_fails(*state, BASE "num_tests = 2\ntest \"a\" {\n}\n",
		 "t.ktest:4: error: num_tests can't be used with test sections");
}

/* ---- boxes ---- */

static void t_box_inheritance(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "build_dir = /src\noutput_dir = /out\n"
			 "ssh_user = nobody\n"
			 "box \"qemu1\" {\n\tssh_user = root\n\tconsole = \"cat pty\"\n}\n"
			 "box \"rack\" {\n\tmachine = \"rack.lab\"\n\tssh_user = admin\n}\n"
			 "default_box = qemu1\n"
			 "test \"a\" {\n}\n"
			 "test \"b\" {\n\tbox = rack\n}\n"
			 "test \"c\" {\n\tbox = rack\n\tssh_user = me\n\tmachine = m\n}\n"),
			 0);
	assert_string_equal(val(f, "MACHINE", 1), "qemu1");
	assert_string_equal(val(f, "SSH_USER", 1), "root");
	assert_string_equal(val(f, "CONSOLE", 1), "cat pty");
	assert_string_equal(val(f, "MACHINE", 2), "rack.lab");
	assert_string_equal(val(f, "SSH_USER", 2), "admin");
	assert_string_equal(val(f, "CONSOLE", 2), "(undef)");
	/* the test's own values win over its box's */
	assert_string_equal(val(f, "SSH_USER", 3), "me");
	assert_string_equal(val(f, "MACHINE", 3), "m");
	assert_string_equal(val(f, "TMP_DIR", 2), "/tmp/ktest/rack.lab");
	assert_int_equal(line_of(f, "SSH_USER[2]"), 10);
	assert_int_equal(line_of(f, "MACHINE[1]"), 4);
}

static void t_single_box(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "build_dir = /src\noutput_dir = /out\n"
			 "box \"only\" {\n\treboot_type = script\n}\n"
			 "test \"a\" {\n}\ntest \"b\" {\n\titerate = 2\n}\n"), 0);
	assert_string_equal(val(f, "MACHINE", 1), "only");
	assert_string_equal(val(f, "MACHINE", 3), "only");
	assert_string_equal(val(f, "REBOOT_TYPE", 2), "script");
}

static void t_box_without_tests(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, "build_dir = /src\noutput_dir = /out\n"
			 "num_tests = 2\nbox \"only\" {\n\tssh_user = u\n}\n"), 0);
	assert_string_equal(val(f, "MACHINE", 2), "only");
	assert_string_equal(val(f, "SSH_USER", 1), "u");
}

static void t_unknown_box(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "box \"qemu-arm\" {\n}\ntest \"a\" {\n\tbox = \"qemu-amr\"\n}\n",
		 "t.ktest:7: error: no box named 'qemu-amr'\n  did you mean 'qemu-arm'?\n");
	rd_fails(f, BASE "default_box = nope\n", "t.ktest:4: error: no box named 'nope'");
}

/* ---- vars and edits ---- */

static void t_vars(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "vars {\n\tCROSS = \"x86_64-linux\"\n\tARCH = x86\n}\n"
			 "make_cmd = \"make ARCH=${ARCH} CROSS_COMPILE=${CROSS}-\"\n"
			 "test \"arm\" {\n\tvars {\n\t\tARCH = arm64\n\t}\n}\n"
			 "test \"x86\" {\n}\n"), 0);
	assert_string_equal(raw(f, "CROSS"), "x86_64-linux");
	assert_string_equal(raw(f, "ARCH[1]"), "arm64");
	assert_string_equal(val(f, "MAKE_CMD", 1), "make ARCH=arm64 CROSS_COMPILE=x86_64-linux-");
	assert_string_equal(val(f, "MAKE_CMD", 2), "make ARCH=x86 CROSS_COMPILE=x86_64-linux-");
	assert_true(strmap_has(&f->c.used, "CROSS"));
	assert_int_equal(line_of(f, "ARCH[1]"), 11);
	/* they are referenced: not "unused" */
	assert_int_equal(kconfig_check_unused(&f->c), 0);
}

static void t_var_errors(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "vars {\n\tBUILD_DIR = x\n}\n",
		 "t.ktest:5: error: 'BUILD_DIR' is a ktest option, not a variable\n"
		 "  set it directly: build_dir = \"...\"\n");
	rd_fails(f, BASE "vars {\n\t\"A B\" = x\n}\n",
		 "'A B' is not a valid variable name");
}

static void t_edits(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, BASE "build_options = \"-j8 W=1\"\n"
			 "edit \"build_options\" {\n\texpr = { \"s/-j8/-j2/\", \"s/W=1/W=12/\" }\n}\n"
			 "test \"a\" {\n}\n"
			 "test \"b\" {\n\tedit \"build_options\" {\n\t\texpr = \"s/(W)/${1}X/\"\n\t}\n}\n"),
			 0);
	assert_string_equal(val(f, "BUILD_OPTIONS", 1), "-j2 W=12");
	/* a test's edits replace the global list, as in ktest.pl */
	assert_string_equal(val(f, "BUILD_OPTIONS", 2), "-j8 WX=1");
	assert_int_equal(kconfig_check_values(&f->c), 0);
}

static void t_edit_without_expr(void **state)
{
	rd_fails(*state, BASE "edit \"timeout\" {\n}\n",
		 "t.ktest:4: error: edit \"timeout\" has no expr");
}

/* ---- include() ---- */

static void t_include_relative(void **state)
{
	struct fx *f = *state;
	char main_path[PATH_MAX], cwd[PATH_MAX];

	make_dir(f);
	write_file(f->dir, "sub/common.ktest",
		   "build_dir = /src\n# c\ninclude(\"deeper.ktest\")\n");
	write_file(f->dir, "sub/deeper.ktest", "# c\n// c\noutput_dir = /out\n");
	write_file(f->dir, "main.ktest",
		   "machine = box\ninclude(\"sub/common.ktest\")\n");
	snprintf(main_path, sizeof(main_path), "%s/main.ktest", f->dir);
	/* relative to the including file, not to the current directory */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(knative_read(&f->c, main_path), 0);
	assert_int_equal(chdir(cwd), 0);
	ready(f);
	assert_string_equal(val(f, "OUTPUT_DIR", 1), "/out");
	assert_string_equal(val(f, "BUILD_DIR", 1), "/src");
	assert_int_equal(line_of(f, "OUTPUT_DIR"), 3);
	assert_non_null(strstr(kconfig_lookup(&f->c, "OUTPUT_DIR")->origin.file,
			       "sub/deeper.ktest"));
}

static void t_include_test_order(void **state)
{
	struct fx *f = *state;
	char main_path[PATH_MAX];

	make_dir(f);
	write_file(f->dir, "tests.ktest",
		   "test \"b\" {\n\titerate = 2\n}\nbox \"inc-box\" {\n}\ntest \"c\" {\n}\n");
	write_file(f->dir, "main.ktest",
		   BASE "test \"a\" {\n}\ninclude(\"tests.ktest\")\ntest \"d\" {\n}\n");
	snprintf(main_path, sizeof(main_path), "%s/main.ktest", f->dir);
	assert_int_equal(knative_read(&f->c, main_path), 0);
	ready(f);
	assert_int_equal(f->c.num_tests, 5);
	assert_string_equal(val(f, "TEST_NAME", 1), "a");
	assert_string_equal(val(f, "TEST_NAME", 3), "b");
	assert_string_equal(val(f, "TEST_NAME", 4), "c");
	assert_string_equal(val(f, "TEST_NAME", 5), "d");
	/* the one box of all files is everyone's box */
	assert_string_equal(val(f, "MACHINE", 1), "inc-box");
}

static void t_include_loop(void **state)
{
	struct fx *f = *state;
	char main_path[PATH_MAX];

	make_dir(f);
	write_file(f->dir, "a.ktest", "# a\ninclude(\"sub/b.ktest\")\n");
	write_file(f->dir, "sub/b.ktest", "# b\n# b\ninclude(\"../a.ktest\")\n");
	snprintf(main_path, sizeof(main_path), "%s/a.ktest", f->dir);
	assert_int_equal(knative_read(&f->c, main_path), -1);
	assert_non_null(strstr(msgs(f), "sub/b.ktest:3: error: include() loop"));
}

static void t_include_missing(void **state)
{
	struct fx *f = *state;

	rd_fails(f, BASE "\ninclude(\"no-such-file.ktest\")\n",
		 "t.ktest:5: error: can't include no-such-file.ktest");
	rd_fails(f, "include(\"a\", \"b\")\n", "t.ktest:1: error: include() takes one file name");
	rd_fails(f, "test \"t\" {\n\tinclude(\"x\")\n}\n",
		 "t.ktest:2: error: unknown option 'include' in a test section");
	f->c.no_includes = true;
	rd_fails(f, "include(\"/etc/passwd\")\n", "t.ktest:1: error: include() is disabled here");
}

static void t_include_duplicate_global(void **state)
{
	struct fx *f = *state;
	char main_path[PATH_MAX];

	make_dir(f);
	write_file(f->dir, "inc.ktest", "\ntimeout = 5\n");
	write_file(f->dir, "main.ktest", "timeout = 6\ninclude(\"inc.ktest\")\n");
	snprintf(main_path, sizeof(main_path), "%s/main.ktest", f->dir);
	assert_int_equal(knative_read(&f->c, main_path), -1);
	assert_non_null(strstr(msgs(f), "inc.ktest:2: error: 'timeout' is set twice"));
	assert_non_null(strstr(msgs(f), "main.ktest:1: first set here"));
}

static void t_include_depth(void **state)
{
	struct fx *f = *state;
	char main_path[PATH_MAX], name[32], text[64];

	make_dir(f);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "f%d.ktest", i);
		snprintf(text, sizeof(text), "include(\"f%d.ktest\")\n", i + 1);
		write_file(f->dir, name, text);
	}
	write_file(f->dir, "f40.ktest", "");
	snprintf(main_path, sizeof(main_path), "%s/f0.ktest", f->dir);
	assert_int_equal(knative_read(&f->c, main_path), -1);
	assert_non_null(strstr(msgs(f), "f32.ktest:1: error: include()s nested more than 32 deep"));
}

/* ---- ktest convert: the model of a ktest.conf, read back the same ---- */

/* converts a ktest.conf; the result must read back to the same model */
static char *convert(struct fx *f, const char *legacy)
{
	struct kconfig n;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	assert_int_equal(klegacy_read_buf(&f->c, "t.conf", legacy, strlen(legacy)), 0);
	assert_int_equal(kconvert_native(&f->c, mem), 0);
	fclose(mem);
	/* kconvert_native checks the round trip itself; once more, here */
	kconfig_init(&n, &f->d);
	assert_int_equal(knative_read_buf(&n, "c.ktest", text, len), 0);
	kconfig_free(&n);
	return text;
}

static void t_convert_quoting(void **state)
{
	struct fx *f = *state;
	char *text;

	setenv("HOME", "/home/x", 1);
	text = convert(f, "MACHINE = box\nBUILD_DIR = /src\n"
		       "TEST_NAME = \\${MACHINE} \"q\" ${env:HOME} ${build_dir}\n"
		       "PRE_BUILD = echo $PATH $${PWD} \\\\x\n"
		       /* a ${ inside a reference the reader keeps as written */
		       "POST_BUILD = ${a ${env:HOME}} ${build_dir /* b */ // c\n"
		       "CROSS = arm\nMAKE_CMD = make ${CROSS}\n"
		       "BUILD_OPTIONS =~ s/(a)/${1}b/\n"
		       "TEST_START\nTIMEOUT = 5\n");
	assert_non_null(strstr(text, "test_name = \"\\\\${MACHINE} \\\"q\\\" \\${env:HOME} \\${build_dir}\""));
	assert_non_null(strstr(text, "vars {\n\tCROSS = arm\n}"));
	assert_non_null(strstr(text, "edit \"build_options\" {\n\texpr = \"s/(a)/${1}b/\"\n}"));
	assert_non_null(strstr(text, "test \"test-1\" {\n\ttimeout = 5\n}"));
	free(text);
}

static void t_convert_titles_and_iterate(void **state)
{
	struct fx *f = *state;
	char *text;

	text = convert(f, "MACHINE = box\nTEST_NAME[3] = middle\n"
		       "TEST_START\nTEST_NAME = first\n"
		       "TEST_START ITERATE 3\nTEST_NAME = loop\nTIMEOUT = 9\n"
		       "TEST_START ITERATE 2\nTEST_NAME = pair\n"
		       "TEST_START\nTEST_NAME = pair\n"
		       "TEST_START\n");
	/* a key for the second iteration: that block is unrolled */
	assert_non_null(strstr(text, "test \"first\" {\n}"));
	assert_non_null(strstr(text, "test \"test-2\" {\n\ttest_name = loop\n\ttimeout = 9\n}"));
	assert_non_null(strstr(text, "test \"middle\" {\n\ttimeout = 9\n}"));
	assert_non_null(strstr(text, "test \"test-4\" {\n\ttest_name = loop\n\ttimeout = 9\n}"));
	/* an untouched block stays one section; equal names are no titles */
	assert_non_null(strstr(text, "test \"test-5\" {\n\titerate = 2\n\ttest_name = pair\n}"));
	assert_non_null(strstr(text, "test \"test-8\" {\n\ttest_name = \"\"\n}"));
	free(text);
}

static void t_convert_drops_dead_keys(void **state)
{
	struct fx *f = *state;
	char *text;

	text = convert(f, "MACHINE = box\nTIMEOUT[0] = 1\nTIMEOUT[9] = 2\n"
		       "LOG_FILE[1] = x\nNUM_TESTS = 2\nTIMEOUT[2] = 3\n");
	assert_null(strstr(text, "timeout = 1"));
	assert_null(strstr(text, "log_file"));
	assert_null(strstr(text, "num_tests"));
	assert_non_null(strstr(msgs(f), "t.conf:2: warning: option TIMEOUT[0]"));
	assert_non_null(strstr(msgs(f), "t.conf:3: warning: option TIMEOUT[9]: there are only 2 tests"));
	free(text);
}

static void t_convert_bool_word(void **state)
{
	struct fx *f = *state;
	FILE *mem = fopen("/dev/null", "w");
	const char *legacy = "DIE_ON_FAILURE = no\n";

	assert_int_equal(klegacy_read_buf(&f->c, "t.conf", legacy, strlen(legacy)), 0);
	/* ktest.pl reads "no" as true: converting it would change it */
	assert_int_equal(kconvert_native(&f->c, mem), -1);
	assert_non_null(strstr(msgs(f), "t.conf:1: error: DIE_ON_FAILURE = no"));
	fclose(mem);
}

int main(void)
{
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(t_globals),
		T(t_string_escapes),
		T(t_test_option_at_top),
		T(t_booleans),
		T(t_bad_boolean),
		T(t_bad_int_found_later),
		T(t_lines_after_comments),
		T(t_origins_after_comments),
		T(t_multiline_string_lines),
		T(t_unknown_in_test_section),
		T(t_upper_case_option),
		T(t_unquoted_blank),
		T(t_unclosed_section),
		T(t_stray_brace),
		T(t_unterminated),
		T(t_duplicate_option),
		T(t_duplicate_in_test),
		T(t_duplicate_var),
		T(t_duplicate_title),
		T(t_box_only_in_box),
		T(t_global_only_in_test),
		T(t_text_checks),
		T(t_crlf_accepted),
		T(t_refs_kept_everywhere),
		T(t_lower_case_refs),
		T(t_env),
		T(t_env_unset),
		T(t_escaped_refs),
		T(t_iterate_numbering),
		T(t_bad_iterate),
		T(t_titles),
		T(t_global_test_name),
		T(t_num_tests),
		T(t_num_tests_with_tests),
		T(t_box_inheritance),
		T(t_single_box),
		T(t_box_without_tests),
		T(t_unknown_box),
		T(t_vars),
		T(t_var_errors),
		T(t_edits),
		T(t_edit_without_expr),
		T(t_include_relative),
		T(t_include_test_order),
		T(t_include_loop),
		T(t_include_missing),
		T(t_include_duplicate_global),
		T(t_include_depth),
		T(t_convert_quoting),
		T(t_convert_titles_and_iterate),
		T(t_convert_drops_dead_keys),
		T(t_convert_bool_word),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
