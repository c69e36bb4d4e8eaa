// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pure parts of ktest/mail.c: MAIL_COMMAND's defaults and expansion
 * (quoted values, ktest.pl's '$SUBJECT', the template never changed), the
 * search for the mailer, and the span of LOG_FILE that is attached.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktest/mail.h"

static void test_defaults(void **state)
{
	(void)state;
	assert_string_equal(kmail_default_command(NULL),
			    "cat $HEADER_FILE $BODY_FILE | $MAIL_PATH/$MAILER -t $MAILTO");
	assert_string_equal(kmail_default_command("sendmail"),
			    kmail_default_command(NULL));
	assert_string_equal(kmail_default_command("mail"),
			    "cat $HEADER_FILE $BODY_FILE | $MAIL_PATH/$MAILER -s $SUBJECT $MAILTO");
	assert_string_equal(kmail_default_command("mailx"),
			    kmail_default_command("mail"));
	assert_null(kmail_default_command("pigeon"));
}

static const struct kmail_vars vars = {
	.header_file = "/tmp/ktest/header",
	.body_file = "/tmp/ktest/log",
	.subject = "KTEST: Your [boot] test was started",
	.mailto = "dev@example.com",
	.mail_path = "/usr/sbin",
	.mailer = "sendmail",
	.message = "it's $HOME",
};

struct expand_case {
	const char *tmpl;
	const char *want;
};

static const struct expand_case cases[] = {
	{ "cat $HEADER_FILE $BODY_FILE | $MAIL_PATH/$MAILER -t $MAILTO",
	  "cat /tmp/ktest/header /tmp/ktest/log | /usr/sbin/sendmail -t dev@example.com" },
	/* values with spaces and brackets: one shell word each */
	{ "mail -s $SUBJECT $MAILTO",
	  "mail -s 'KTEST: Your [boot] test was started' dev@example.com" },
	/* ktest.pl's own quotes around $SUBJECT give way to ours */
	{ "mail -s '$SUBJECT' $MAILTO",
	  "mail -s 'KTEST: Your [boot] test was started' dev@example.com" },
	/* a quote and a $ in a value stay literal */
	{ "echo $MESSAGE", "echo 'it'\\''s $HOME'" },
	/* in "...": the double quotes close round the quoted value, so a
	 * $(...) or `...` in it is not run */
	{ "mail -m \"$MESSAGE\" to", "mail -m \"\"'it'\\''s $HOME'\"\" to" },
	{ "echo \"a \\\"$MESSAGE\\\"\"",
	  "echo \"a \\\"\"'it'\\''s $HOME'\"\\\"\"" },
	/* in '...' with more text: only its quote is escaped */
	{ "echo 'msg: $MESSAGE.'", "echo 'msg: it'\\''s $HOME.'" },
	/* an escaped quote outside quotes opens nothing */
	{ "echo \\'$MESSAGE", "echo \\''it'\\''s $HOME'" },
	/* unknown names, and names that only start like a known one */
	{ "$HOME $MAILERS $MAIL $", "$HOME $MAILERS $MAIL $" },
	{ "x$MAILER.y", "xsendmail.y" },
};

static void test_expand(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		char *got = kmail_expand(cases[k].tmpl, &vars);

		assert_string_equal(got, cases[k].want);
		free(got);
	}
}

static void test_expand_empty(void **state)
{
	struct kmail_vars v = vars;
	char *got;

	(void)state;
	v.body_file = NULL;
	got = kmail_expand("cat $HEADER_FILE $BODY_FILE | x", &v);
	assert_string_equal(got, "cat /tmp/ktest/header  | x");
	free(got);
	v.subject = "";
	got = kmail_expand("mail -s '$SUBJECT' to", &v);
	assert_string_equal(got, "mail -s '' to");
	free(got);
}

/* ktest.pl's bug: the second mail reused the first one's subject */
static void test_template_unchanged(void **state)
{
	const char *tmpl = "mail -s $SUBJECT $MAILTO";
	struct kmail_vars v = vars;
	char *a, *b;

	(void)state;
	a = kmail_expand(tmpl, &v);
	v.subject = "KTEST: Your test has finished!";
	b = kmail_expand(tmpl, &v);
	assert_string_equal(tmpl, "mail -s $SUBJECT $MAILTO");
	assert_string_equal(b, "mail -s 'KTEST: Your test has finished!' dev@example.com");
	assert_string_not_equal(a, b);
	free(a);
	free(b);
}

static void test_find(void **state)
{
	char dir[] = "/tmp/ktest-mail.XXXXXX", *a, *b, *path, *bin, *got;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	a = malloc(strlen(dir) + 3);
	b = malloc(strlen(dir) + 3);
	sprintf(a, "%s/a", dir);
	sprintf(b, "%s/b", dir);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	bin = malloc(strlen(b) + 16);
	sprintf(bin, "%s/ktest-mailer", b);
	f = fopen(bin, "w");
	assert_non_null(f);
	fclose(f);

	path = malloc(strlen(a) + strlen(b) + 8);
	sprintf(path, "%s::%s", a, b);
	/* not executable yet: not found */
	assert_null(kmail_find("ktest-mailer", path));
	assert_int_equal(chmod(bin, 0755), 0);
	got = kmail_find("ktest-mailer", path);
	assert_non_null(got);
	assert_string_equal(got, b);
	free(got);
	assert_null(kmail_find("ktest-mailer", a));
	assert_null(kmail_find("ktest-mailer", NULL));

	unlink(bin);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
	free(path);
	free(bin);
	free(a);
	free(b);
}

static void test_log_span(void **state)
{
	long off, len;

	(void)state;
	/* the test began at 1000; the log is at 5000 now */
	kmail_log_span(1000, 5000, 0, &off, &len);
	assert_int_equal(off, 1000);
	assert_int_equal(len, 4000);
	/* MAIL_MAX_SIZE keeps the last bytes */
	kmail_log_span(1000, 5000, 100, &off, &len);
	assert_int_equal(off, 4900);
	assert_int_equal(len, 100);
	/* a cap larger than the part changes nothing */
	kmail_log_span(1000, 5000, 10000, &off, &len);
	assert_int_equal(off, 1000);
	assert_int_equal(len, 4000);
	/* the log shrank under us: from its top */
	kmail_log_span(1000, 300, 0, &off, &len);
	assert_int_equal(off, 0);
	assert_int_equal(len, 300);
}

static void test_check(void **state)
{
	struct kmail_opts o = { .mailto = "dev@example.com" };
	char why[256];

	(void)state;
	o.mailer = "pigeon";
	assert_int_equal(kmail_check(&o, NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "MAILER pigeon is not supported"));
	/* with a command of one's own, any mailer name will do */
	o.command = "true";
	o.mail_path = "/nonexistent";
	assert_int_equal(kmail_check(&o, NULL, why, sizeof(why)), 0);
	o.command = NULL;
	o.mailer = "sendmail";
	assert_int_equal(kmail_check(&o, NULL, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "MAILER sendmail is not an executable in MAIL_PATH /nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_expand_empty),
		cmocka_unit_test(test_template_unchanged),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_log_span),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
