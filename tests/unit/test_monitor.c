// SPDX-License-Identifier: GPL-2.0-only
/*
 * The console monitor against ktest.pl's monitor(): every timeout with its
 * exact boundary, the order of the checks on one line, the backtrace-test
 * markers, IGNORE_ERRORS, triple faults; then crash titles on reports
 * written the way an x86_64 6.1 kernel prints them.
 *
 * Times are in ms from the monitor's start; ktest.pl's defaults are
 * TIMEOUT 120 s, BOOTED_TIMEOUT 1 s, STOP_AFTER_SUCCESS 10 s,
 * STOP_AFTER_FAILURE 60 s, STOP_TEST_AFTER 600 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/monitor.h"

static struct kmon_config ktest_pl(void)
{
	struct kmon_config c = {
		.success_line = "login:",
		.expected_version = "6.1.0-ktest",
		.detect_triple_fault = true,
		.ignore_errors = false,
		.fail_classes = KMON_DEFAULT_FAIL,
		.timeout_ms = 120000,
		.booted_timeout_ms = 1000,
		.stop_after_success_ms = 10000,
		.stop_after_failure_ms = 60000,
		.stop_test_after_ms = 600000,
	};
	return c;
}

static struct kmonitor *mk(const struct kmon_config *c)
{
	char why[256];
	struct kmonitor *m = kmonitor_new(c, 0, why, sizeof(why));

	if (!m)
		fail_msg("kmonitor_new: %s", why);
	return m;
}

static void line(struct kmonitor *m, const char *s, int64_t now)
{
	kmonitor_line(m, s, strlen(s), now);
}

/* Feeds text line by line, 1 ms apart from *now on; returns the next time. */
static int64_t feed(struct kmonitor *m, const char *text, int64_t now)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);

		kmonitor_line(m, text, n, now++);
		text += n + (nl != NULL);
	}
	return now;
}

static size_t ncrashes(const struct kmonitor *m)
{
	const struct kmon_crash *c;

	return kmonitor_crashes(m, &c);
}

static const struct kmon_crash *crash(const struct kmonitor *m, size_t i)
{
	const struct kmon_crash *c;
	size_t n = kmonitor_crashes(m, &c);

	assert_true(i < n);
	return &c[i];
}

#define assert_reason(m, want) assert_string_equal(kmonitor_reason(m), want)
#define assert_verdict(m, v) assert_int_equal(kmonitor_verdict(m), v)

/* ---- timeouts ---- */

static void test_timeout_before_boot(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	assert_int_equal(kmonitor_deadline(m), 120000);
	line(m, "SeaBIOS (version 1.16.2-debian-1.16.2-1)", 1000);
	/* every line restarts wait_for_input()'s clock */
	assert_int_equal(kmonitor_deadline(m), 121000);
	kmonitor_tick(m, 120999);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_tick(m, 121000);
	assert_verdict(m, KMON_TIMED_OUT);
	assert_reason(m, "failed - never got a boot prompt. (Timed out after 120 seconds)");
	assert_false(kmonitor_booted(m));
	assert_int_equal(kmonitor_deadline(m), INT64_MAX);
	kmonitor_free(m);
}

static void test_timeout_one_second(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.timeout_ms = 1000;
	m = mk(&c);
	kmonitor_tick(m, 1000);
	assert_reason(m, "failed - never got a boot prompt. (Timed out after 1 second)");
	kmonitor_free(m);
}

static void test_timeout_negative_waits_forever(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.timeout_ms = -1;
	m = mk(&c);
	assert_int_equal(kmonitor_deadline(m), INT64_MAX);
	kmonitor_tick(m, INT64_MAX - 1);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_free(m);
}

static void test_booted_timeout(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "buildroot login: ", 5000);
	assert_true(kmonitor_booted(m));
	assert_int_equal(kmonitor_deadline(m), 6000);
	line(m, "random: crng init done", 5500);
	assert_int_equal(kmonitor_deadline(m), 6500);
	kmonitor_tick(m, 6499);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_tick(m, 6500);
	assert_verdict(m, KMON_BOOTED);
	assert_reason(m, "Successful boot found: break after 1 second");
	kmonitor_free(m);
}

static void test_booted_timeout_zero(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.booted_timeout_ms = 0;
	m = mk(&c);
	line(m, "buildroot login: ", 1000);
	/* select() with 0 s: nothing already there ends it */
	line(m, "[   12.000000] Call Trace:", 1001);
	assert_verdict(m, KMON_BOOTED);
	assert_reason(m, "Successful boot found: break after 0 seconds");
	assert_int_equal(ncrashes(m), 0);
	kmonitor_free(m);
}

static void test_stop_after_success(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	int64_t t;

	(void)state;
	line(m, "buildroot login: ", 1000);
	for (t = 1500; t < 11000; t += 500)
		line(m, "chatter", t);
	assert_verdict(m, KMON_RUNNING);
	/* 10 s after the success: this line is printed, not examined */
	line(m, "[   11.000000] Call Trace:", 11000);
	assert_verdict(m, KMON_BOOTED);
	assert_reason(m, "Test forced to stop after 10 seconds after success");
	assert_int_equal(ncrashes(m), 0);
	kmonitor_free(m);
}

static void test_stop_after_success_restarts(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	int64_t t;

	(void)state;
	line(m, "buildroot login: ", 1000);
	for (t = 1500; t < 6000; t += 500)
		line(m, "chatter", t);
	line(m, "buildroot login: ", 6000);	/* the timer starts again */
	for (t = 6500; t < 16000; t += 500)
		line(m, "chatter", t);
	assert_verdict(m, KMON_RUNNING);
	line(m, "chatter", 16000);
	assert_reason(m, "Test forced to stop after 10 seconds after success");
	kmonitor_free(m);
}

static void test_stop_after_success_zero(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.stop_after_success_ms = 0;
	m = mk(&c);
	/* the success line itself is 0 s after the success */
	line(m, "buildroot login: Call Trace:", 1000);
	assert_verdict(m, KMON_BOOTED);
	assert_int_equal(ncrashes(m), 0);
	kmonitor_free(m);
}

static void test_stop_after_success_off(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;
	int64_t t;

	(void)state;
	c.stop_after_success_ms = -1;
	m = mk(&c);
	line(m, "buildroot login: ", 1000);
	for (t = 1500; t < 100000; t += 500)
		line(m, "chatter", t);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_tick(m, t - 500 + 1000);
	assert_reason(m, "Successful boot found: break after 1 second");
	kmonitor_free(m);
}

static void test_stop_after_failure(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	int64_t t;

	(void)state;
	line(m, "[    2.000000] Call Trace:", 2000);
	assert_int_equal(kmonitor_deadline(m), 62000);
	/* a chatty console does not stretch it */
	for (t = 2500; t < 62000; t += 500)
		line(m, "[    2.100000]  foo+0x1/0x2", t);
	assert_int_equal(kmonitor_deadline(m), 62000);
	kmonitor_tick(m, 61999);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_tick(m, 62000);
	assert_verdict(m, KMON_CRASHED);
	assert_reason(m, "failed - got a bug report: Call Trace in foo "
		      "(Test forced to stop after 60 seconds after failure)");
	kmonitor_free(m);
}

static void test_stop_after_failure_on_line(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.stop_after_failure_ms = 0;
	m = mk(&c);
	/* the call trace trips it before the panic check */
	line(m, "Call Trace: Kernel panic - not syncing: x", 2000);
	assert_verdict(m, KMON_CRASHED);
	assert_reason(m, "failed - got a bug report: kernel panic: x "
		      "(Test forced to stop after 0 seconds after failure)");
	kmonitor_free(m);
}

static void test_panic_restarts_failure_timer(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "[    2.000000] Kernel panic - not syncing: first", 2000);
	assert_int_equal(kmonitor_deadline(m), 62000);
	line(m, "[   30.000000] Kernel panic - not syncing: again", 30000);
	assert_int_equal(kmonitor_deadline(m), 90000);
	/* a call trace after the bug does not move it */
	line(m, "[   40.000000] Call Trace:", 40000);
	assert_int_equal(kmonitor_deadline(m), 90000);
	kmonitor_tick(m, 90000);
	assert_verdict(m, KMON_CRASHED);
	kmonitor_free(m);
}

static void test_failure_off_falls_back(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.stop_after_failure_ms = -1;
	m = mk(&c);
	line(m, "Call Trace:", 2000);
	assert_int_equal(kmonitor_deadline(m), 122000);
	kmonitor_tick(m, 122000);
	assert_verdict(m, KMON_CRASHED);
	assert_reason(m, "failed - got a bug report: Call Trace (Timed out after 120 seconds)");
	kmonitor_free(m);

	m = mk(&c);
	line(m, "buildroot login: ", 1000);
	line(m, "[ 5.0] Call Trace:", 1500);
	assert_int_equal(kmonitor_deadline(m), 2500);
	kmonitor_tick(m, 2500);
	assert_reason(m, "failed - got a bug report: Call Trace "
		      "(Successful boot found: break after 1 second)");
	kmonitor_free(m);
}

static void test_stop_test_after(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	int64_t t;

	(void)state;
	for (t = 1000; t <= 600000; t += 1000)
		line(m, "still booting", t);
	/* time - $monitor_start > $stop_test_after: strictly more */
	assert_verdict(m, KMON_RUNNING);
	line(m, "still booting", 600001);
	assert_verdict(m, KMON_TIMED_OUT);
	assert_reason(m, "failed - never got a boot prompt. "
		      "(STOP_TEST_AFTER (600 seconds) timed out)");
	kmonitor_free(m);
}

static void test_stop_test_after_only_on_lines(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	/* ktest.pl checks it after a line; a silent console waits TIMEOUT */
	c.timeout_ms = -1;
	m = mk(&c);
	line(m, "x", 1000);
	kmonitor_tick(m, 10000000);
	assert_verdict(m, KMON_RUNNING);
	line(m, "x", 10000001);
	assert_verdict(m, KMON_TIMED_OUT);
	kmonitor_free(m);
}

static void test_stop_test_after_not_after_boot(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;
	int64_t t;

	(void)state;
	c.stop_after_success_ms = -1;
	c.stop_test_after_ms = 5000;
	m = mk(&c);
	line(m, "buildroot login: ", 1000);
	for (t = 1500; t < 20000; t += 500)
		line(m, "x", t);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_free(m);

	c.stop_test_after_ms = 0;	/* <= 0: never */
	m = mk(&c);
	for (t = 1000; t < 1000000; t += 1000)
		line(m, "x", t);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_free(m);
}

static void test_line_after_deadline(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "x", 1000);
	/* the caller was late: the wait had run out before this came */
	line(m, "Kernel panic - not syncing: late", 121000);
	assert_verdict(m, KMON_TIMED_OUT);
	assert_int_equal(ncrashes(m), 0);
	/* and nothing after the verdict counts */
	line(m, "buildroot login: ", 121001);
	assert_false(kmonitor_booted(m));
	kmonitor_free(m);
}

static void test_eof(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "x", 1000);
	kmonitor_eof(m, 2000);
	assert_verdict(m, KMON_TIMED_OUT);
	assert_reason(m, "failed - never got a boot prompt. (the console ended)");
	kmonitor_free(m);

	m = mk(&c);
	line(m, "buildroot login: ", 1000);
	kmonitor_eof(m, 1001);
	assert_verdict(m, KMON_BOOTED);
	assert_reason(m, "Successful boot found: the console ended");
	kmonitor_free(m);

	m = mk(&c);
	kmonitor_eof(m, 500000);	/* late news: the timeout came first */
	assert_reason(m, "failed - never got a boot prompt. (Timed out after 120 seconds)");
	kmonitor_free(m);
}

static void test_fractional_seconds(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.booted_timeout_ms = 1500;
	m = mk(&c);
	line(m, "login:", 10);
	kmonitor_tick(m, 1510);
	assert_reason(m, "Successful boot found: break after 1.500 seconds");
	kmonitor_free(m);
}

/* ---- ktest.pl's detections ---- */

static void test_success_line_perl_regex(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	/* $ matches before the line's newline, as in Perl; \r is dropped */
	c.success_line = "login:\\s*$";
	m = mk(&c);
	kmonitor_line(m, "box login: \r", 12, 10);
	assert_true(kmonitor_booted(m));
	kmonitor_free(m);

	c.success_line = "^/ \\x23 $";
	m = mk(&c);
	line(m, "// # ", 10);
	assert_false(kmonitor_booted(m));
	line(m, "/ # ", 11);
	assert_true(kmonitor_booted(m));
	kmonitor_free(m);

	c.success_line = NULL;		/* no SUCCESS_LINE: never */
	m = mk(&c);
	line(m, "login:", 10);
	assert_false(kmonitor_booted(m));
	kmonitor_free(m);
}

static void test_bad_success_line(void **state)
{
	struct kmon_config c = ktest_pl();
	char why[256];

	(void)state;
	c.success_line = "login(";
	assert_null(kmonitor_new(&c, 0, why, sizeof(why)));
	assert_non_null(strstr(why, "SUCCESS_LINE 'login('"));
	assert_non_null(strstr(why, "missing closing parenthesis"));
}

static void test_call_trace_any_case(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "[   1.0] Call trace:", 10);	/* arm64 spells it so */
	assert_int_equal(kmonitor_deadline(m), 60010);
	kmonitor_eof(m, 20);
	assert_verdict(m, KMON_CRASHED);
	kmonitor_free(m);
}

static void test_ignore_errors(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.ignore_errors = true;
	m = mk(&c);
	feed(m, "[    3.000000] WARNING: CPU: 0 PID: 1 at drivers/ktest/warn.c:12 ktest_warn_init+0x15/0x30\n"
		"[    3.000001] Call Trace:\n"
		"[    3.000002]  ktest_warn_init+0x15/0x30\n"
		"[    3.000003] ---[ end trace 0000000000000000 ]---\n"
		"buildroot login: ", 10);
	kmonitor_eof(m, 100);
	assert_verdict(m, KMON_BOOTED);
	assert_reason(m, "Successful boot found: the console ended; WARNING: "
		      "Call Trace detected but ignored due to IGNORE_ERRORS=1");
	assert_int_equal(ncrashes(m), 1);
	assert_false(crash(m, 0)->fails);
	kmonitor_free(m);

	/* a panic fails all the same */
	m = mk(&c);
	line(m, "[    3.0] Kernel panic - not syncing: VFS: Unable to mount root fs", 10);
	kmonitor_eof(m, 100);
	assert_verdict(m, KMON_CRASHED);
	assert_true(crash(m, 0)->fails);
	kmonitor_free(m);
}

static void test_backtrace_markers(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	int64_t t;

	(void)state;
	t = feed(m, "[    1.000000] [ backtrace testing ]\n"
		    "[    1.000001] Testing a backtrace from process context.\n"
		    "[    1.000002] The following trace is a kernel self test and not a bug!\n"
		    "[    1.000003] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
		    "[    1.000004] Call Trace:\n"
		    "[    1.000005]  <TASK>\n"
		    "[    1.000006]  dump_stack_lvl+0x44/0x5c\n"
		    "[    1.000007]  backtrace_regression_test+0x3a/0x100\n"
		    "[    1.000008]  </TASK>\n"
		    "[    1.000009] [ end of backtrace testing ]\n", 10);
	assert_int_equal(ncrashes(m), 0);
	assert_int_equal(kmonitor_deadline(m), t - 1 + 120000);
	/* a trace after the end marker is a bug again */
	line(m, "[    2.0] Call Trace:", t);
	assert_int_equal(ncrashes(m), 1);
	assert_int_equal(kmonitor_deadline(m), t + 60000);
	kmonitor_free(m);

	/* both markers act on their own line before / after the check */
	m = mk(&c);
	line(m, "[ backtrace testing ] Call Trace:", 10);
	line(m, "Call Trace: [ end of backtrace testing ]", 11);
	assert_int_equal(ncrashes(m), 0);
	assert_int_equal(kmonitor_deadline(m), 11 + 120000);
	/* a panic inside the markers still counts */
	line(m, "[ backtrace testing ]", 12);
	line(m, "Kernel panic - not syncing: oops", 13);
	assert_int_equal(kmonitor_deadline(m), 13 + 60000);
	kmonitor_free(m);
}

static void test_triple_fault_after_login(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.stop_after_success_ms = -1;
	m = mk(&c);
	feed(m, "[    0.000000] Linux version 6.1.0-ktest (builder@lab) (gcc 12.2.0) #1 SMP\n"
		"buildroot login: \n"
		"SeaBIOS (version 1.16.2-debian-1.16.2-1)\n"
		"[    0.000000] Linux version 6.1.0-9-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.27-1 (2023-05-08)\n", 10);
	assert_verdict(m, KMON_TRIPLE_FAULT);
	assert_reason(m, "Already booted in Linux kernel 6.1.0-ktest, but now we booted into "
		      "Linux kernel 6.1.0-9-amd64: assuming a triple fault (set "
		      "DETECT_TRIPLE_FAULT = 0 to disable); it came after the boot prompt, "
		      "which ktest.pl 6.1 counts as a success");
	kmonitor_free(m);
}

static void test_triple_fault_before_login(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	feed(m, "[    0.000000] Linux version 6.1.0-ktest (builder@lab) #1\n"
		"[    0.100000] smpboot: CPU0: Intel Core Processor (Skylake)\n"
		"[    0.000000] Linux version 5.10.0-23-amd64 (debian) #1\n", 10);
	assert_verdict(m, KMON_TRIPLE_FAULT);
	assert_non_null(strstr(kmonitor_reason(m), "it came before the boot prompt"));
	kmonitor_free(m);

	/* DETECT_TRIPLE_FAULT = 0: just another line */
	c.detect_triple_fault = false;
	m = mk(&c);
	feed(m, "[    0.000000] Linux version 6.1.0-ktest (builder@lab) #1\n"
		"[    0.000000] Linux version 5.10.0-23-amd64 (debian) #1\n", 10);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_free(m);
}

static void test_triple_fault_needs_ours_first(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	/* the old kernel's banner before ours is no triple fault */
	feed(m, "[    0.000000] Linux version 6.1.0-9-amd64 (debian) #1\n"
		"[    0.000000] Linux version 6.1.0-ktest (builder@lab) #1\n"
		"[    0.000000] Linux version 6.1.0-ktest (builder@lab) #1\n"
		"xLinux version 9.9 is not a banner\n", 10);
	assert_verdict(m, KMON_RUNNING);
	kmonitor_free(m);
}

static void test_triple_fault_first_banner_is_ours(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;

	(void)state;
	c.expected_version = NULL;
	m = mk(&c);
	feed(m, "[    0.000000] Linux version 6.1.0-rc1 (x) #1\n"
		"[    0.000000] Linux version 6.1.0-rc1 (x) #2\n", 10);
	assert_verdict(m, KMON_RUNNING);
	line(m, "[    0.000000] Linux version 6.0.0 (x) #2", 20);
	assert_verdict(m, KMON_TRIPLE_FAULT);
	assert_non_null(strstr(kmonitor_reason(m), "Linux kernel 6.1.0-rc1, but now we booted into Linux kernel 6.0.0"));
	kmonitor_free(m);
}

static void test_reboot_after_panic_is_a_crash(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	feed(m, "[    0.000000] Linux version 6.1.0-ktest (builder@lab) #1\n"
		"[    1.000000] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n"
		"[    1.000100] Rebooting in 1 seconds..\n"
		"[    0.000000] Linux version 6.1.0-9-amd64 (debian) #1\n", 10);
	assert_verdict(m, KMON_CRASHED);
	assert_reason(m, "failed - got a bug report: kernel panic: VFS: Unable to mount root fs "
		      "on unknown-block(0,0) (then Linux kernel 6.1.0-9-amd64 booted instead "
		      "of 6.1.0-ktest)");
	kmonitor_free(m);
}

static const char kcsan_report[] =
	"[   20.100000] ==================================================================\n"
	"[   20.100001] BUG: KCSAN: data-race in ktest_reader / ktest_writer\n"
	"[   20.100002] \n"
	"[   20.100003] write to 0xffffffffc0004010 of 4 bytes by task 120 on cpu 1:\n"
	"[   20.100004]  ktest_writer+0x1a/0x40 [ktest_race]\n"
	"[   20.100005]  kthread+0xe6/0x110\n"
	"[   20.100006]  ret_from_fork+0x1f/0x30\n"
	"[   20.100007] \n"
	"[   20.100008] read to 0xffffffffc0004010 of 4 bytes by task 121 on cpu 0:\n"
	"[   20.100009]  ktest_reader+0x14/0x40 [ktest_race]\n"
	"[   20.100010]  kthread+0xe6/0x110\n"
	"[   20.100011]  ret_from_fork+0x1f/0x30\n"
	"[   20.100012] \n"
	"[   20.100013] value changed: 0x00000001 -> 0x00000002\n"
	"[   20.100014] \n"
	"[   20.100015] Reported by Kernel Concurrency Sanitizer on:\n"
	"[   20.100016] CPU: 0 PID: 121 Comm: ktest_reader Not tainted 6.1.0-ktest #1\n"
	"[   20.100017] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	"[   20.100018] ==================================================================\n";

static void test_fail_classes(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;
	int64_t t;

	(void)state;
	/* a KCSAN report has no "Call Trace:": ktest.pl lets it pass */
	m = mk(&c);
	t = feed(m, kcsan_report, 10);
	line(m, "buildroot login: ", t);
	kmonitor_eof(m, t + 1);
	assert_verdict(m, KMON_BOOTED);
	assert_int_equal(ncrashes(m), 1);
	assert_int_equal(crash(m, 0)->cls, KMON_SANITIZER);
	assert_false(crash(m, 0)->fails);
	assert_string_equal(crash(m, 0)->title, "KCSAN: data-race in ktest_reader / ktest_writer");
	kmonitor_free(m);

	c.fail_classes = KMON_ALL;
	m = mk(&c);
	t = feed(m, kcsan_report, 10);
	assert_int_equal(kmonitor_deadline(m), 11 + 60000);
	kmonitor_eof(m, t);
	assert_verdict(m, KMON_CRASHED);
	assert_true(crash(m, 0)->fails);
	kmonitor_free(m);

	/* panics only: a call trace is recorded and passes */
	c.fail_classes = KMON_PANIC;
	m = mk(&c);
	feed(m, "Call Trace:\n login:\n", 10);
	kmonitor_eof(m, 100);
	assert_verdict(m, KMON_BOOTED);
	assert_string_equal(kmonitor_reason(m), "Successful boot found: the console ended");
	assert_int_equal(ncrashes(m), 1);
	assert_false(crash(m, 0)->fails);
	kmonitor_free(m);

	/* nothing fails, not even a panic */
	c.fail_classes = 0;
	m = mk(&c);
	feed(m, "Kernel panic - not syncing: x\n", 10);
	kmonitor_eof(m, 100);
	assert_verdict(m, KMON_TIMED_OUT);
	kmonitor_free(m);
}

static void test_parse_classes(void **state)
{
	unsigned int b = 12345;

	(void)state;
	assert_int_equal(kmon_parse_classes("call_trace,panic", &b), 0);
	assert_int_equal(b, KMON_DEFAULT_FAIL);
	assert_int_equal(kmon_parse_classes("ktest", &b), 0);
	assert_int_equal(b, KMON_DEFAULT_FAIL);
	assert_int_equal(kmon_parse_classes("all", &b), 0);
	assert_int_equal(b, KMON_ALL);
	assert_int_equal(kmon_parse_classes(" ktest  WARNING | hang,sanitizer ", &b), 0);
	assert_int_equal(b, KMON_DEFAULT_FAIL | KMON_WARNING | KMON_HANG | KMON_SANITIZER);
	assert_int_equal(kmon_parse_classes("call-trace oops bug", &b), 0);
	assert_int_equal(b, KMON_CALL_TRACE | KMON_OOPS | KMON_BUG);
	assert_int_equal(kmon_parse_classes("none", &b), 0);
	assert_int_equal(b, 0);
	b = 7;
	assert_int_equal(kmon_parse_classes("panic,bogus", &b), -1);
	assert_int_equal(b, 7);
	assert_int_equal(kmon_parse_classes("averyveryveryveryveryverylongword", &b), -1);
}

static void test_binary_lines(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	static const char noise[] = "\x00\xff\xfe\x80garbage\x00" "Call Trace:\x00\xc3";

	(void)state;
	/* NUL bytes are bytes: the trace after one is seen */
	kmonitor_line(m, noise, sizeof(noise) - 1, 10);
	assert_int_equal(ncrashes(m), 1);
	assert_null(strchr(crash(m, 0)->title, '\x01'));
	assert_int_equal(kmonitor_deadline(m), 60010);
	kmonitor_line(m, "", 0, 11);
	kmonitor_line(m, "\r", 1, 12);
	kmonitor_free(m);
}

/* ---- titles ---- */

struct titled {
	const char *name;
	const char *log;
	const char *titles[4];
};

static const struct titled reports[] = {
	{ "NULL pointer dereference, panic after",
	  "[    1.234600] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"
	  "[    1.234612] #PF: supervisor read access in kernel mode\n"
	  "[    1.234619] #PF: error_code(0x0000) - not-present page\n"
	  "[    1.234625] PGD 0 P4D 0 \n"
	  "[    1.234633] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
	  "[    1.234641] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    1.234650] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    1.234658] RIP: 0010:ktest_null_init+0x11/0x30\n"
	  "[    1.234670] Code: 00 00 00 00 0f 1f 44 00 00 48 c7 c7 a0 12 4b 82 e8 d1 f3 7a ff 31 c0 <8b> 04 25 00 00 00 00 0f 0b c3 cc cc cc cc 66\n"
	  "[    1.234680] RSP: 0018:ffffc90000013e48 EFLAGS: 00010246\n"
	  "[    1.234690] RAX: 0000000000000000 RBX: ffffffff82a4b020 RCX: 0000000000000000\n"
	  "[    1.234691] RDX: 0000000000000000 RSI: 00000000ffffdfff RDI: ffffffff824b12a0\n"
	  "[    1.234692] RBP: ffffc90000013e58 R08: 0000000000000000 R09: ffffc90000013cf0\n"
	  "[    1.234693] R10: 0000000000000003 R11: ffffffff82d3e728 R12: 0000000000000000\n"
	  "[    1.234694] R13: ffff888003a8c000 R14: 0000000000000000 R15: 0000000000000000\n"
	  "[    1.234695] FS:  0000000000000000(0000) GS:ffff888007c00000(0000) knlGS:0000000000000000\n"
	  "[    1.234696] CS:  0010 DS: 0000 ES: 0000 CR0: 0000000080050033\n"
	  "[    1.234697] CR2: 0000000000000000 CR3: 000000000280a000 CR4: 00000000000006f0\n"
	  "[    1.234700] Call Trace:\n"
	  "[    1.234702]  <TASK>\n"
	  "[    1.234705]  ? __die+0x23/0x70\n"
	  "[    1.234710]  ? page_fault_oops+0x171/0x4e0\n"
	  "[    1.234720]  ? exc_page_fault+0x77/0x170\n"
	  "[    1.234730]  ? asm_exc_page_fault+0x26/0x30\n"
	  "[    1.234740]  ? ktest_null_init+0x11/0x30\n"
	  "[    1.234750]  do_one_initcall+0x56/0x230\n"
	  "[    1.234760]  kernel_init_freeable+0x1c4/0x211\n"
	  "[    1.234770]  ? rest_init+0xd0/0xd0\n"
	  "[    1.234780]  kernel_init+0x16/0x120\n"
	  "[    1.234790]  ret_from_fork+0x22/0x30\n"
	  "[    1.234800]  </TASK>\n"
	  "[    1.234810] Modules linked in:\n"
	  "[    1.234820] CR2: 0000000000000000\n"
	  "[    1.234830] ---[ end trace 0000000000000000 ]---\n"
	  "[    1.234840] RIP: 0010:ktest_null_init+0x11/0x30\n"
	  "[    1.234841] Code: 00 00 00 00 0f 1f 44 00 00 48 c7 c7 a0 12 4b 82 e8 d1 f3 7a ff 31 c0 <8b> 04 25 00 00 00 00 0f 0b c3 cc cc cc cc 66\n"
	  "[    1.234842] RSP: 0018:ffffc90000013e48 EFLAGS: 00010246\n"
	  "[    1.234850] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009\n"
	  "[    1.234860] Kernel Offset: disabled\n"
	  "[    1.234870] ---[ end Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009 ]---\n",
	  { "BUG: unable to handle kernel NULL pointer dereference in ktest_null_init" } },

	{ "page fault for address",
	  "[   12.001000] BUG: unable to handle page fault for address: ffffffffc0010000\n"
	  "[   12.001010] #PF: supervisor write access in kernel mode\n"
	  "[   12.001020] #PF: error_code(0x0003) - permissions violation\n"
	  "[   12.001030] PGD 2a0f067 P4D 2a0f067 PUD 2a11067 PMD 3b4e067 PTE 8000000003b6b061\n"
	  "[   12.001040] Oops: 0003 [#1] PREEMPT SMP NOPTI\n"
	  "[   12.001050] CPU: 1 PID: 150 Comm: insmod Tainted: G           O       6.1.0-ktest #1\n"
	  "[   12.001060] RIP: 0010:memset_orig+0x33/0xb0\n"
	  "[   12.001070] Call Trace:\n"
	  "[   12.001071]  <TASK>\n"
	  "[   12.001072]  ktest_bad_ptr+0x2a/0x40 [ktest_fault]\n"
	  "[   12.001073]  do_one_initcall+0x41/0x200\n"
	  "[   12.001074]  do_init_module+0x4c/0x1f0\n"
	  "[   12.001075]  __do_sys_finit_module+0xb1/0x120\n"
	  "[   12.001076]  do_syscall_64+0x3b/0x90\n"
	  "[   12.001077]  entry_SYSCALL_64_after_hwframe+0x63/0xcd\n"
	  "[   12.001078] RIP: 0033:0x7f2b1c8e2f29\n"
	  "[   12.001079]  </TASK>\n"
	  "[   12.001080] ---[ end trace 0000000000000000 ]---\n",
	  { "BUG: unable to handle kernel paging request in ktest_bad_ptr" } },

	{ "general protection fault",
	  "[    5.500000] general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI\n"
	  "[    5.500001] CPU: 0 PID: 44 Comm: kworker/0:2 Not tainted 6.1.0-ktest #1\n"
	  "[    5.500002] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    5.500003] Workqueue: events ktest_gpf_work\n"
	  "[    5.500004] RIP: 0010:ktest_list_walk+0x1c/0x50\n"
	  "[    5.500005] Code: 48 8b 07 48 39 c7 74 1a 31 d2 <48> 8b 00 83 c2 01 48 39 c7 75 f5 89 d0 c3 cc cc cc cc\n"
	  "[    5.500006] RSP: 0018:ffffc900001bfe60 EFLAGS: 00010202\n"
	  "[    5.500007] Call Trace:\n"
	  "[    5.500008]  <TASK>\n"
	  "[    5.500009]  ktest_gpf_work+0x15/0x30\n"
	  "[    5.500010]  process_one_work+0x1e2/0x3b0\n"
	  "[    5.500011]  worker_thread+0x50/0x3a0\n"
	  "[    5.500012]  kthread+0xe6/0x110\n"
	  "[    5.500013]  ret_from_fork+0x1f/0x30\n"
	  "[    5.500014]  </TASK>\n"
	  "[    5.500015] Modules linked in:\n"
	  "[    5.500016] ---[ end trace 0000000000000000 ]---\n",
	  { "general protection fault in ktest_list_walk" } },

	{ "WARN_ON with printk prefixes",
	  "<4>[    3.141592] ------------[ cut here ]------------\n"
	  "<4>[    3.141600] WARNING: CPU: 0 PID: 1 at drivers/ktest/warn.c:12 ktest_warn_init+0x15/0x30\n"
	  "<4>[    3.141610] Modules linked in:\n"
	  "<4>[    3.141620] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "<4>[    3.141630] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "<4>[    3.141640] RIP: 0010:ktest_warn_init+0x15/0x30\n"
	  "<4>[    3.141650] Code: cc cc cc 0f 1f 44 00 00 48 c7 c7 10 3e 4b 82 e8 9d 8c 77 ff <0f> 0b 31 c0 c3 cc cc cc cc\n"
	  "<4>[    3.141660] RSP: 0000:ffffc90000013e60 EFLAGS: 00010246\n"
	  "<4>[    3.141670] Call Trace:\n"
	  "<4>[    3.141680]  <TASK>\n"
	  "<4>[    3.141690]  ? __warn+0x7d/0xc0\n"
	  "<4>[    3.141700]  ? ktest_warn_init+0x15/0x30\n"
	  "<4>[    3.141710]  ? report_bug+0xe6/0x170\n"
	  "<4>[    3.141720]  ? handle_bug+0x41/0x70\n"
	  "<4>[    3.141730]  ? exc_invalid_op+0x13/0x60\n"
	  "<4>[    3.141740]  ? asm_exc_invalid_op+0x16/0x20\n"
	  "<4>[    3.141750]  do_one_initcall+0x56/0x230\n"
	  "<4>[    3.141760]  kernel_init_freeable+0x1c4/0x211\n"
	  "<4>[    3.141770]  kernel_init+0x16/0x120\n"
	  "<4>[    3.141780]  ret_from_fork+0x22/0x30\n"
	  "<4>[    3.141790]  </TASK>\n"
	  "<4>[    3.141800] ---[ end trace 0000000000000000 ]---\n",
	  { "WARNING in ktest_warn_init" } },

	{ "refcount WARNING names the caller",
	  "[    9.000000] ------------[ cut here ]------------\n"
	  "[    9.000001] refcount_t: underflow; use-after-free.\n"
	  "[    9.000002] WARNING: CPU: 1 PID: 77 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110\n"
	  "[    9.000003] Modules linked in: ktest_ref(O)\n"
	  "[    9.000004] CPU: 1 PID: 77 Comm: insmod Tainted: G           O       6.1.0-ktest #1\n"
	  "[    9.000005] RIP: 0010:refcount_warn_saturate+0xba/0x110\n"
	  "[    9.000006] Call Trace:\n"
	  "[    9.000007]  <TASK>\n"
	  "[    9.000008]  ktest_put+0x2d/0x40 [ktest_ref]\n"
	  "[    9.000009]  ktest_ref_init+0x1c/0x1000 [ktest_ref]\n"
	  "[    9.000010]  do_one_initcall+0x41/0x200\n"
	  "[    9.000011]  </TASK>\n"
	  "[    9.000012] ---[ end trace 0000000000000000 ]---\n",
	  { "WARNING: refcount bug in ktest_put" } },

	{ "BUG_ON",
	  "[    4.000000] ------------[ cut here ]------------\n"
	  "[    4.000001] kernel BUG at drivers/ktest/bug.c:42!\n"
	  "[    4.000002] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI\n"
	  "[    4.000003] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    4.000004] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    4.000005] RIP: 0010:ktest_bug_init+0x9/0x10\n"
	  "[    4.000006] Code: 00 00 00 00 00 0f 1f 44 00 00 0f 0b 66 0f 1f 44 00 00 <0f> 0b 66 66 2e 0f 1f 84 00 00\n"
	  "[    4.000007] RSP: 0000:ffffc90000013e68 EFLAGS: 00010246\n"
	  "[    4.000008] Call Trace:\n"
	  "[    4.000009]  <TASK>\n"
	  "[    4.000010]  do_one_initcall+0x56/0x230\n"
	  "[    4.000011]  kernel_init_freeable+0x1c4/0x211\n"
	  "[    4.000012]  kernel_init+0x16/0x120\n"
	  "[    4.000013]  ret_from_fork+0x22/0x30\n"
	  "[    4.000014]  </TASK>\n"
	  "[    4.000015] Modules linked in:\n"
	  "[    4.000016] ---[ end trace 0000000000000000 ]---\n",
	  { "kernel BUG in ktest_bug_init" } },

	{ "KASAN use-after-free",
	  "[   15.200000] ==================================================================\n"
	  "[   15.200001] BUG: KASAN: use-after-free in ktest_uaf_read+0x4a/0x60 [ktest_kasan]\n"
	  "[   15.200002] Read of size 8 at addr ffff888003e1c2a8 by task insmod/123\n"
	  "[   15.200003] \n"
	  "[   15.200004] CPU: 0 PID: 123 Comm: insmod Tainted: G           O       6.1.0-ktest #1\n"
	  "[   15.200005] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[   15.200006] Call Trace:\n"
	  "[   15.200007]  <TASK>\n"
	  "[   15.200008]  dump_stack_lvl+0x44/0x5c\n"
	  "[   15.200009]  print_report+0x184/0x4be\n"
	  "[   15.200010]  ? __virt_addr_valid+0xe8/0x160\n"
	  "[   15.200011]  ? ktest_uaf_read+0x4a/0x60 [ktest_kasan]\n"
	  "[   15.200012]  kasan_report+0xb0/0xe0\n"
	  "[   15.200013]  ? ktest_uaf_read+0x4a/0x60 [ktest_kasan]\n"
	  "[   15.200014]  ktest_uaf_read+0x4a/0x60 [ktest_kasan]\n"
	  "[   15.200015]  ktest_kasan_init+0x15/0x1000 [ktest_kasan]\n"
	  "[   15.200016]  do_one_initcall+0x9c/0x300\n"
	  "[   15.200017]  </TASK>\n"
	  "[   15.200018] \n"
	  "[   15.200019] Allocated by task 123:\n"
	  "[   15.200020]  kasan_save_stack+0x1e/0x40\n"
	  "[   15.200021]  kasan_set_track+0x21/0x30\n"
	  "[   15.200022]  __kasan_kmalloc+0x7a/0x90\n"
	  "[   15.200023]  ktest_uaf_read+0x1d/0x60 [ktest_kasan]\n"
	  "[   15.200024] \n"
	  "[   15.200025] Freed by task 123:\n"
	  "[   15.200026]  kasan_save_stack+0x1e/0x40\n"
	  "[   15.200027]  kasan_set_track+0x21/0x30\n"
	  "[   15.200028]  kasan_save_free_info+0x2a/0x40\n"
	  "[   15.200029]  ____kasan_slab_free+0x143/0x1b0\n"
	  "[   15.200030]  __kmem_cache_free+0xc8/0x290\n"
	  "[   15.200031]  ktest_uaf_read+0x36/0x60 [ktest_kasan]\n"
	  "[   15.200032] \n"
	  "[   15.200033] The buggy address belongs to the object at ffff888003e1c2a0\n"
	  "[   15.200034]  which belongs to the cache kmalloc-16 of size 16\n"
	  "[   15.200035] The buggy address is located 8 bytes inside of\n"
	  "[   15.200036]  16-byte region [ffff888003e1c2a0, ffff888003e1c2b0)\n"
	  "[   15.200037] \n"
	  "[   15.200038] Memory state around the buggy address:\n"
	  "[   15.200039]  ffff888003e1c180: fa fb fc fc fa fb fc fc fa fb fc fc fa fb fc fc\n"
	  "[   15.200040] >ffff888003e1c280: fa fb fc fc fa fb fc fc 00 00 fc fc fa fb fc fc\n"
	  "[   15.200041]                                   ^\n"
	  "[   15.200042] ==================================================================\n"
	  "[   15.200043] Disabling lock debugging due to kernel taint\n",
	  { "KASAN: use-after-free Read in ktest_uaf_read" } },

	{ "KASAN in a generic function names the caller",
	  "==================================================================\n"
	  "BUG: KASAN: slab-out-of-bounds in strlen+0x1e/0x30\n"
	  "Read of size 1 at addr ffff888003f0c010 by task swapper/0/1\n"
	  "\n"
	  "Call Trace:\n"
	  " <TASK>\n"
	  " dump_stack_lvl+0x44/0x5c\n"
	  " print_report+0x184/0x4be\n"
	  " kasan_report+0xb0/0xe0\n"
	  " strlen+0x1e/0x30\n"
	  " ktest_parse_name+0x2c/0x60\n"
	  " do_one_initcall+0x56/0x230\n"
	  " </TASK>\n"
	  "==================================================================\n",
	  { "KASAN: slab-out-of-bounds Read in ktest_parse_name" } },

	{ "KASAN double-free",
	  "[    7.000000] ==================================================================\n"
	  "[    7.000001] BUG: KASAN: double-free in kfree+0x7c/0x120\n"
	  "[    7.000002] Free of addr ffff888003e1c2a0 by task swapper/0/1\n"
	  "[    7.000003] Call Trace:\n"
	  "[    7.000004]  <TASK>\n"
	  "[    7.000005]  dump_stack_lvl+0x44/0x5c\n"
	  "[    7.000006]  print_report+0x184/0x4be\n"
	  "[    7.000007]  kasan_report_invalid_free+0x8f/0x110\n"
	  "[    7.000008]  ____kasan_slab_free+0x18c/0x1b0\n"
	  "[    7.000009]  __kmem_cache_free+0xc8/0x290\n"
	  "[    7.000010]  kfree+0x7c/0x120\n"
	  "[    7.000011]  ktest_double_free+0x31/0x50\n"
	  "[    7.000012]  </TASK>\n"
	  "[    7.000013] ==================================================================\n",
	  { "KASAN: invalid-free in ktest_double_free" } },

	{ "UBSAN shift",
	  "[    2.718281] ================================================================================\n"
	  "[    2.718282] UBSAN: shift-out-of-bounds in drivers/ktest/ubsan.c:21:12\n"
	  "[    2.718283] shift exponent 64 is too large for 64-bit type 'long unsigned int'\n"
	  "[    2.718284] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    2.718285] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    2.718286] Call Trace:\n"
	  "[    2.718287]  <TASK>\n"
	  "[    2.718288]  dump_stack_lvl+0x44/0x5c\n"
	  "[    2.718289]  __ubsan_handle_shift_out_of_bounds.cold+0x61/0xef\n"
	  "[    2.718290]  ktest_shift_by+0x3e/0x50\n"
	  "[    2.718291]  do_one_initcall+0x56/0x230\n"
	  "[    2.718292]  </TASK>\n"
	  "[    2.718293] ================================================================================\n",
	  { "UBSAN: shift-out-of-bounds in ktest_shift_by" } },

	{ "UBSAN cut short: the location",
	  "UBSAN: array-index-out-of-bounds in drivers/ktest/ubsan.c:30:9\n"
	  "index 8 is out of range for type 'int [8]'\n",
	  { "UBSAN: array-index-out-of-bounds in drivers/ktest/ubsan.c:30:9" } },

	{ "KFENCE",
	  "[   30.000000] ==================================================================\n"
	  "[   30.000001] BUG: KFENCE: use-after-free read in ktest_read_freed+0xb3/0x143\n"
	  "[   30.000002] \n"
	  "[   30.000003] Use-after-free read at 0xffff88803e1f2fe0 (in kfence-#24):\n"
	  "[   30.000004]  ktest_read_freed+0xb3/0x143\n"
	  "[   30.000005]  do_one_initcall+0x56/0x230\n"
	  "[   30.000006] \n"
	  "[   30.000007] kfence-#24: 0xffff88803e1f2fe0-0xffff88803e1f2fff, size=32, cache=kmalloc-32\n"
	  "[   30.000008] ==================================================================\n",
	  { "KFENCE: use-after-free read in ktest_read_freed" } },

	{ "KMSAN",
	  "=====================================================\n"
	  "BUG: KMSAN: uninit-value in ktest_use_uninit+0x52/0x90\n"
	  " ktest_use_uninit+0x52/0x90\n"
	  " do_one_initcall+0x56/0x230\n"
	  "\n"
	  "Uninit was created at:\n"
	  " __kmalloc+0x11a/0x2a0\n"
	  " ktest_alloc_uninit+0x10/0x30\n"
	  "=====================================================\n",
	  { "KMSAN: uninit-value in ktest_use_uninit" } },

	{ "KCSAN", kcsan_report,
	  { "KCSAN: data-race in ktest_reader / ktest_writer" } },

	{ "hung task",
	  "[  245.000000] INFO: task kworker/0:1:23 blocked for more than 122 seconds.\n"
	  "[  245.000001]       Not tainted 6.1.0-ktest #1\n"
	  "[  245.000002] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.\n"
	  "[  245.000003] task:kworker/0:1     state:D stack:0     pid:23    ppid:2      flags:0x00004000\n"
	  "[  245.000004] Workqueue: events ktest_hang_work\n"
	  "[  245.000005] Call Trace:\n"
	  "[  245.000006]  <TASK>\n"
	  "[  245.000007]  __schedule+0x2f3/0x950\n"
	  "[  245.000008]  schedule+0x5d/0xe0\n"
	  "[  245.000009]  schedule_timeout+0x11e/0x160\n"
	  "[  245.000010]  ? __timer_delete_sync+0x6e/0x90\n"
	  "[  245.000011]  __wait_for_common+0x90/0x1d0\n"
	  "[  245.000012]  wait_for_completion+0x24/0x30\n"
	  "[  245.000013]  ktest_hang_work+0x30/0x60\n"
	  "[  245.000014]  process_one_work+0x1e2/0x3b0\n"
	  "[  245.000015]  worker_thread+0x50/0x3a0\n"
	  "[  245.000016]  ? rescuer_thread+0x390/0x390\n"
	  "[  245.000017]  kthread+0xe6/0x110\n"
	  "[  245.000018]  ? kthread_complete_and_exit+0x20/0x20\n"
	  "[  245.000019]  ret_from_fork+0x1f/0x30\n"
	  "[  245.000020]  </TASK>\n"
	  "[  245.000021] \n"
	  "[  245.000022] Showing all locks held in the system:\n",
	  { "INFO: task hung in ktest_hang_work" } },

	{ "hung task in synchronize_rcu",
	  "INFO: task ktest_sync:90 blocked for more than 120 seconds.\n"
	  "task:ktest_sync      state:D stack:0     pid:90    ppid:2      flags:0x00004000\n"
	  "Call Trace:\n"
	  " <TASK>\n"
	  " __schedule+0x2f3/0x950\n"
	  " schedule+0x5d/0xe0\n"
	  " schedule_timeout+0x11e/0x160\n"
	  " __wait_for_common+0x90/0x1d0\n"
	  " __synchronize_srcu.part.0+0x7b/0xd0\n"
	  " synchronize_rcu+0x41/0x50\n"
	  " ktest_sync_fn+0x15/0x30\n"
	  " </TASK>\n",
	  { "INFO: task hung in synchronize_rcu" } },

	{ "RCU stall",
	  "[   42.000000] rcu: INFO: rcu_sched self-detected stall on CPU\n"
	  "[   42.000001] rcu: \t0-....: (21000 ticks this GP) idle=b8c/1/0x4000000000000000 softirq=1201/1201 fqs=5250\n"
	  "[   42.000002] \t(t=21001 jiffies g=945 q=12 ncpus=2)\n"
	  "[   42.000003] NMI backtrace for cpu 0\n"
	  "[   42.000004] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[   42.000005] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[   42.000006] Call Trace:\n"
	  "[   42.000007]  <IRQ>\n"
	  "[   42.000008]  dump_stack_lvl+0x44/0x5c\n"
	  "[   42.000009]  nmi_cpu_backtrace.cold+0x30/0x70\n"
	  "[   42.000010]  ? lapic_can_unplug_cpu+0x80/0x80\n"
	  "[   42.000011]  nmi_trigger_cpumask_backtrace+0xe6/0x100\n"
	  "[   42.000012]  rcu_dump_cpu_stacks+0xc6/0xf0\n"
	  "[   42.000013]  rcu_sched_clock_irq.cold+0x61/0x2d6\n"
	  "[   42.000014]  update_process_times+0x5a/0x90\n"
	  "[   42.000015]  tick_sched_handle+0x34/0x50\n"
	  "[   42.000016]  tick_sched_timer+0x6f/0x80\n"
	  "[   42.000017]  __hrtimer_run_queues+0x112/0x2b0\n"
	  "[   42.000018]  hrtimer_interrupt+0x104/0x220\n"
	  "[   42.000019]  __sysvec_apic_timer_interrupt+0x5a/0x100\n"
	  "[   42.000020]  sysvec_apic_timer_interrupt+0x69/0x90\n"
	  "[   42.000021]  </IRQ>\n"
	  "[   42.000022]  <TASK>\n"
	  "[   42.000023]  asm_sysvec_apic_timer_interrupt+0x16/0x20\n"
	  "[   42.000024] RIP: 0010:ktest_spin+0x10/0x20\n"
	  "[   42.000025] Code: 0f 1f 44 00 00 eb fe 66 2e 0f 1f 84 00 00 00 00 00 <eb> fe 66 2e 0f 1f 84 00 00\n"
	  "[   42.000026] RSP: 0000:ffffc90000013e68 EFLAGS: 00000246\n"
	  "[   42.000027] RAX: 0000000000000000 RBX: ffffffff82a4b020 RCX: 0000000000000000\n"
	  "[   42.000028]  ktest_stall_init+0x15/0x30\n"
	  "[   42.000029]  do_one_initcall+0x56/0x230\n"
	  "[   42.000030]  kernel_init_freeable+0x1c4/0x211\n"
	  "[   42.000031]  kernel_init+0x16/0x120\n"
	  "[   42.000032]  ret_from_fork+0x22/0x30\n"
	  "[   42.000033]  </TASK>\n",
	  { "INFO: rcu detected stall in ktest_stall_init" } },

	{ "soft lockup in a syscall, then softlockup_panic",
	  "[   50.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [ktest_ioctl:201]\n"
	  "[   50.000001] Modules linked in: ktest_lockup(O)\n"
	  "[   50.000002] CPU: 1 PID: 201 Comm: ktest_ioctl Tainted: G           O       6.1.0-ktest #1\n"
	  "[   50.000003] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[   50.000004] RIP: 0010:ktest_busy_loop+0x12/0x20 [ktest_lockup]\n"
	  "[   50.000005] Code: cc cc cc 0f 1f 44 00 00 f3 90 eb fc 66 0f 1f 44 00 00 <f3> 90 eb fc\n"
	  "[   50.000006] RSP: 0018:ffffc900002cfe58 EFLAGS: 00000202\n"
	  "[   50.000007] Call Trace:\n"
	  "[   50.000008]  <TASK>\n"
	  "[   50.000009]  ktest_ioctl+0x3c/0x60 [ktest_lockup]\n"
	  "[   50.000010]  __x64_sys_ioctl+0x8d/0xd0\n"
	  "[   50.000011]  do_syscall_64+0x3b/0x90\n"
	  "[   50.000012]  entry_SYSCALL_64_after_hwframe+0x63/0xcd\n"
	  "[   50.000013]  </TASK>\n"
	  "[   50.000014] Kernel panic - not syncing: softlockup: hung tasks\n"
	  "[   50.000015] CPU: 1 PID: 201 Comm: ktest_ioctl Tainted: G           OL      6.1.0-ktest #1\n"
	  "[   50.000016] Call Trace:\n"
	  "[   50.000017]  <IRQ>\n"
	  "[   50.000018]  dump_stack_lvl+0x44/0x5c\n"
	  "[   50.000019]  panic+0x118/0x2ed\n"
	  "[   50.000020]  watchdog_timer_fn.cold+0x23/0x23\n"
	  "[   50.000021]  </IRQ>\n"
	  "[   50.000022] Kernel Offset: disabled\n"
	  "[   50.000023] ---[ end Kernel panic - not syncing: softlockup: hung tasks ]---\n",
	  { "BUG: soft lockup in ktest_ioctl" } },

	{ "hard lockup",
	  "[   60.000000] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1\n"
	  "[   60.000001] Modules linked in:\n"
	  "[   60.000002] CPU: 1 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[   60.000003] RIP: 0010:ktest_irqoff_spin+0x8/0x10\n"
	  "[   60.000004] Call Trace:\n"
	  "[   60.000005]  <TASK>\n"
	  "[   60.000006]  ktest_hard_init+0x21/0x40\n"
	  "[   60.000007]  do_one_initcall+0x56/0x230\n"
	  "[   60.000008]  </TASK>\n",
	  { "hard LOCKUP in ktest_hard_init" } },

	{ "panic with Kernel Offset",
	  "[    1.900000] VFS: Cannot open root device \"vda\" or unknown-block(0,0): error -6\n"
	  "[    1.900001] Please append a correct \"root=\" boot option; here are the available partitions:\n"
	  "[    1.900002] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\n"
	  "[    1.900003] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    1.900004] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    1.900005] Call Trace:\n"
	  "[    1.900006]  <TASK>\n"
	  "[    1.900007]  dump_stack_lvl+0x44/0x5c\n"
	  "[    1.900008]  panic+0x118/0x2ed\n"
	  "[    1.900009]  mount_block_root+0x1d3/0x1e6\n"
	  "[    1.900010]  prepare_namespace+0x136/0x165\n"
	  "[    1.900011]  kernel_init_freeable+0x1e1/0x211\n"
	  "[    1.900012]  ? rest_init+0xd0/0xd0\n"
	  "[    1.900013]  kernel_init+0x16/0x120\n"
	  "[    1.900014]  ret_from_fork+0x22/0x30\n"
	  "[    1.900015]  </TASK>\n"
	  "[    1.900016] Kernel Offset: disabled\n"
	  "[    1.900017] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0) ]---\n",
	  { "kernel panic: VFS: Unable to mount root fs on unknown-block(0,0)" } },

	{ "panic_on_warn joins the WARNING",
	  "[    3.000000] WARNING: CPU: 0 PID: 1 at drivers/ktest/warn.c:12 ktest_warn_init+0x15/0x30\n"
	  "[    3.000001] Modules linked in:\n"
	  "[    3.000002] Kernel panic - not syncing: kernel: panic_on_warn set ...\n"
	  "[    3.000003] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    3.000004] Call Trace:\n"
	  "[    3.000005]  <TASK>\n"
	  "[    3.000006]  dump_stack_lvl+0x44/0x5c\n"
	  "[    3.000007]  panic+0x118/0x2ed\n"
	  "[    3.000008]  check_panic_on_warn.cold+0x19/0x19\n"
	  "[    3.000009]  __warn+0x9b/0xc0\n"
	  "[    3.000010]  ktest_warn_init+0x15/0x30\n"
	  "[    3.000011]  </TASK>\n"
	  "[    3.000012] Kernel Offset: disabled\n"
	  "[    3.000013] ---[ end Kernel panic - not syncing: kernel: panic_on_warn set ... ]---\n",
	  { "WARNING in ktest_warn_init" } },

	{ "an oops with other printk lines in it",
	  "[    6.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
	  "[    6.000001] #PF: supervisor read access in kernel mode\n"
	  "[    6.000002] e1000: eth0 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX\n"
	  "[    6.000003] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
	  "[    6.000004] CPU: 1 PID: 88 Comm: kworker/1:1 Not tainted 6.1.0-ktest #1\n"
	  "[    6.000005] random: crng init done\n"
	  "[    6.000006] RIP: 0010:__list_del_entry_valid+0x5/0x60\n"
	  "[    6.000007] Call Trace:\n"
	  "[    6.000008]  <TASK>\n"
	  "[    6.000009] IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n"
	  "[    6.000010]  ktest_unlink+0x1b/0x40\n"
	  "[    6.000011]  process_one_work+0x1e2/0x3b0\n"
	  "[    6.000012]  </TASK>\n"
	  "[    6.000013] ---[ end trace 0000000000000000 ]---\n",
	  { "BUG: unable to handle kernel NULL pointer dereference in ktest_unlink" } },

	{ "printk caller ids keep other tasks out",
	  "[    8.000000][    T1] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580\n"
	  "[    8.000001][    T1] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 1, name: swapper/0\n"
	  "[    8.000002][   T42] ktest_noise:  bogus_frame+0x1/0x2\n"
	  "[    8.000003][    T1] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    8.000004][    T1] Call Trace:\n"
	  "[    8.000005][   T42]  other_task_fn+0x10/0x20\n"
	  "[    8.000006][    T1]  <TASK>\n"
	  "[    8.000007][    T1]  dump_stack_lvl+0x44/0x5c\n"
	  "[    8.000008][    T1]  __might_resched.cold+0xc6/0xd8\n"
	  "[    8.000009][    T1]  mutex_lock+0x1a/0x40\n"
	  "[    8.000010][    T1]  ktest_sleep_atomic+0x2f/0x50\n"
	  "[    8.000011][    T1]  </TASK>\n",
	  { "BUG: sleeping function called from invalid context in ktest_sleep_atomic" } },

	{ "scheduling while atomic, then a WARNING",
	  "BUG: scheduling while atomic: swapper/0/1/0x00000002\n"
	  "Modules linked in:\n"
	  "CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "Call Trace:\n"
	  " <TASK>\n"
	  " dump_stack_lvl+0x44/0x5c\n"
	  " __schedule_bug.cold+0x7d/0x8b\n"
	  " __schedule+0x6a7/0x950\n"
	  " schedule+0x5d/0xe0\n"
	  " ktest_sched_atomic+0x22/0x40\n"
	  " </TASK>\n"
	  "WARNING: CPU: 0 PID: 1 at kernel/sched/core.c:9716 __might_sleep+0x59/0x70\n"
	  "RIP: 0010:__might_sleep+0x59/0x70\n"
	  "Call Trace:\n"
	  " <TASK>\n"
	  " ktest_sleep_again+0x11/0x20\n"
	  " </TASK>\n"
	  "---[ end trace 0000000000000000 ]---\n",
	  { "BUG: scheduling while atomic in ktest_sched_atomic",
	    "WARNING in ktest_sleep_again" } },

	{ "lockdep circular dependency",
	  "======================================================\n"
	  "WARNING: possible circular locking dependency detected\n"
	  "6.1.0-ktest #1 Not tainted\n"
	  "------------------------------------------------------\n"
	  "insmod/133 is trying to acquire lock:\n"
	  "ffffffffc0002010 (lock_b){+.+.}-{3:3}, at: ktest_lock_b+0x15/0x30 [ktest_lockdep]\n"
	  "\n"
	  "but task is already holding lock:\n"
	  "ffffffffc0002050 (lock_a){+.+.}-{3:3}, at: ktest_lock_a+0x15/0x30 [ktest_lockdep]\n"
	  "\n"
	  "which lock already depends on the new lock.\n"
	  "\n"
	  "stack backtrace:\n"
	  "CPU: 0 PID: 133 Comm: insmod Tainted: G           O       6.1.0-ktest #1\n"
	  "Call Trace:\n"
	  " <TASK>\n"
	  " dump_stack_lvl+0x58/0x73\n"
	  " check_noncircular+0xfe/0x110\n"
	  " __lock_acquire+0x1247/0x1ed0\n"
	  " lock_acquire+0xc2/0x2b0\n"
	  " __mutex_lock+0x8d/0x8e0\n"
	  " ktest_lock_b+0x15/0x30 [ktest_lockdep]\n"
	  " </TASK>\n",
	  { "possible deadlock in ktest_lock_b" } },

	{ "divide error, invalid opcode, stack segment",
	  "divide error: 0000 [#1] PREEMPT SMP NOPTI\n"
	  "RIP: 0010:ktest_div0+0x8/0x10\n"
	  "---[ end trace 0000000000000000 ]---\n"
	  "invalid opcode: 0000 [#2] PREEMPT SMP NOPTI\n"
	  "RIP: 0010:ktest_ud2+0x4/0x10\n"
	  "---[ end trace 0000000000000000 ]---\n"
	  "stack segment: 0000 [#3] PREEMPT SMP NOPTI\n"
	  "RIP: 0010:ktest_ss+0x4/0x10\n"
	  "---[ end trace 0000000000000000 ]---\n",
	  { "divide error in ktest_div0", "invalid opcode in ktest_ud2",
	    "stack segment fault in ktest_ss" } },

	{ "a bare call trace starts at its CPU: line",
	  "[    3.300000] ktest_dump: here is a stack\n"
	  "[    3.300001] CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-ktest #1\n"
	  "[    3.300002] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
	  "[    3.300003] Call Trace:\n"
	  "[    3.300004]  <TASK>\n"
	  "[    3.300005]  dump_stack_lvl+0x44/0x5c\n"
	  "[    3.300006]  ktest_dump_init+0x11/0x20\n"
	  "[    3.300007]  do_one_initcall+0x56/0x230\n"
	  "[    3.300008]  </TASK>\n"
	  "[    3.300009] ktest_dump: done\n",
	  { "Call Trace in ktest_dump_init" } },

	{ "user space traps are not kernel crashes",
	  "[   20.000000] traps: a.out[123] general protection fault ip:401136 sp:7ffd8bd0 error:0 in a.out[401000+1000]\n"
	  "[   20.000001] a.out[124]: segfault at 0 ip 0000000000401136 sp 00007ffd8bd0 error 6 in a.out[401000+1000]\n"
	  "WARNING: this is only a shell script talking\n",
	  { NULL } },
};

static void test_titles(void **state)
{
	struct kmon_config c = ktest_pl();
	int bad = 0;

	(void)state;
	c.stop_after_failure_ms = -1;
	c.timeout_ms = -1;
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
		const struct titled *r = &reports[i];
		struct kmonitor *m = mk(&c);
		const struct kmon_crash *cr;
		size_t n, want = 0;
		int64_t t = feed(m, r->log, 10);

		kmonitor_eof(m, t);
		n = kmonitor_crashes(m, &cr);
		while (want < 4 && r->titles[want])
			want++;
		for (size_t j = 0; j < n || j < want; j++) {
			const char *got = j < n ? cr[j].title : "(none)";
			const char *exp = j < want ? r->titles[j] : "(none)";

			if (strcmp(got, exp)) {
				print_error("%s: title %zu is \"%s\", not \"%s\"\n",
					    r->name, j, got, exp);
				bad++;
			}
		}
		kmonitor_free(m);
	}
	assert_int_equal(bad, 0);
}

static const char *report_log(const char *name)
{
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
		if (!strcmp(reports[i].name, name))
			return reports[i].log;
	fail_msg("no report %s", name);
	return NULL;
}

static void test_report_text(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;
	const char *rep;

	(void)state;
	/* the oops, its panic after the end trace, through the panic's end */
	m = mk(&c);
	feed(m, report_log("NULL pointer dereference, panic after"), 10);
	kmonitor_eof(m, 1000);
	assert_int_equal(ncrashes(m), 1);
	rep = crash(m, 0)->report;
	assert_int_equal(strncmp(rep, "BUG: kernel NULL pointer dereference, address: 0000000000000000\n", 64), 0);
	assert_non_null(strstr(rep, "\nCall Trace:\n"));
	assert_non_null(strstr(rep, "\nKernel panic - not syncing: Attempted to kill init!"));
	assert_non_null(strstr(rep, "\n---[ end Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009 ]---\n"));
	assert_null(strstr(rep, "[    1."));	/* timestamps stripped */
	assert_int_equal(crash(m, 0)->cls, KMON_OOPS);
	assert_true(crash(m, 0)->fails);
	kmonitor_free(m);

	/* a panic: from its line to "---[ end Kernel panic" with Kernel Offset */
	m = mk(&c);
	feed(m, report_log("panic with Kernel Offset"), 10);
	kmonitor_eof(m, 1000);
	rep = crash(m, 0)->report;
	assert_int_equal(strncmp(rep, "Kernel panic - not syncing: VFS", 31), 0);
	assert_non_null(strstr(rep, "\nKernel Offset: disabled\n---[ end Kernel panic"));
	assert_null(strstr(rep, "Please append"));
	assert_int_equal(crash(m, 0)->cls, KMON_PANIC);
	kmonitor_free(m);

	/* another task's lines stay out */
	m = mk(&c);
	feed(m, report_log("printk caller ids keep other tasks out"), 10);
	kmonitor_eof(m, 1000);
	rep = crash(m, 0)->report;
	assert_null(strstr(rep, "other_task_fn"));
	assert_null(strstr(rep, "ktest_noise"));
	assert_non_null(strstr(rep, "ktest_sleep_atomic"));
	kmonitor_free(m);

	/* a bare call trace from its CPU: line to its last frame */
	m = mk(&c);
	feed(m, report_log("a bare call trace starts at its CPU: line"), 10);
	kmonitor_eof(m, 1000);
	rep = crash(m, 0)->report;
	assert_int_equal(strncmp(rep, "CPU: 0 PID: 1 Comm: swapper/0", 29), 0);
	assert_null(strstr(rep, "ktest_dump:"));
	assert_non_null(strstr(rep, "</TASK>\n"));
	kmonitor_free(m);

	/* a KASAN report with its blank lines, to the closing ===== */
	m = mk(&c);
	feed(m, report_log("KASAN use-after-free"), 10);
	kmonitor_eof(m, 1000);
	rep = crash(m, 0)->report;
	assert_non_null(strstr(rep, "\nFreed by task 123:\n"));
	assert_non_null(strstr(rep, "Memory state around"));
	assert_null(strstr(rep, "Disabling lock debugging"));
	kmonitor_free(m);
}

static void test_report_bounded(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m;
	char buf[128];
	size_t lines = 0;
	int64_t t = 10;

	(void)state;
	c.stop_after_failure_ms = -1;
	m = mk(&c);
	line(m, "WARNING: CPU: 0 PID: 1 at a.c:1 ktest_loop+0x1/0x2", t++);
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), " ktest_frame_%d+0x1/0x2", i);
		line(m, buf, t++);
	}
	for (const char *p = crash(m, 0)->report; *p; p++)
		lines += *p == '\n';
	assert_true(lines <= 400);
	assert_int_equal(ncrashes(m), 1);
	kmonitor_free(m);
}

static void test_title_while_open(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);

	(void)state;
	line(m, "==================================================================", 10);
	line(m, "BUG: KASAN: use-after-free in ktest_uaf_read+0x4a/0x60", 11);
	assert_string_equal(crash(m, 0)->title, "KASAN: use-after-free in ktest_uaf_read");
	line(m, "Read of size 8 at addr ffff888003e1c2a8 by task insmod/123", 12);
	assert_string_equal(crash(m, 0)->title, "KASAN: use-after-free Read in ktest_uaf_read");
	kmonitor_free(m);
}

static void test_long_line(void **state)
{
	struct kmon_config c = ktest_pl();
	struct kmonitor *m = mk(&c);
	size_t n = 1 << 20;
	char *big = malloc(n + 32);

	(void)state;
	assert_non_null(big);
	memset(big, 'A', n);
	memcpy(big + n, " Kernel panic - not syncing: x", 30);
	kmonitor_line(m, big, n + 30, 10);
	assert_int_equal(ncrashes(m), 1);
	assert_true(strlen(crash(m, 0)->title) <= 200);
	assert_true(strlen(crash(m, 0)->report) < 1024);
	free(big);
	kmonitor_free(m);
}

/* ---- real logs: the lab kernel in the qemu box (tests/lab/capture-logs.sh) ---- */

/* tests/data/console: under $KTEST_SRC, here, or next to the binary */
static char *console_data(void)
{
	const char *src = getenv("KTEST_SRC");
	char exe[4096];
	ssize_t n;
	char *p;

	if (src)
		return xasprintf("%s/tests/data/console", src);
	if (!access("tests/data/console", R_OK))
		return xstrdup("tests/data/console");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return xstrdup("tests/data/console");
	exe[n] = '\0';
	p = xasprintf("%s/../../tests/data/console", dirname(exe));
	return p;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	struct sbuf b;
	char buf[4096];
	size_t n;

	if (!f)
		fail_msg("cannot read %s", path);
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return sbuf_detach(&b);
}

/*
 * A real log replayed as ktest monitor does (a line a millisecond) with
 * the lab initramfs's success line; its TITLE lines must be the .expect's.
 */
static struct kmonitor *replay_real(const char *dir, const char *name)
{
	struct kmon_config c = ktest_pl();
	char *path = xasprintf("%s/%s.log", dir, name);
	char *log = read_text(path), *expect, *want;
	struct sbuf got;
	const struct kmon_crash *cr;
	struct kmonitor *m;
	size_t n;

	c.success_line = "ktest: booted";
	c.expected_version = NULL;
	c.timeout_ms = c.booted_timeout_ms = -1;
	c.stop_after_success_ms = c.stop_after_failure_ms = -1;
	c.stop_test_after_ms = 0;
	m = mk(&c);
	kmonitor_eof(m, feed(m, log, 1));
	sbuf_init(&got);
	n = kmonitor_crashes(m, &cr);
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&got, "TITLE: %s\n", cr[i].title);
	free(path);
	path = xasprintf("%s/%s.expect", dir, name);
	expect = read_text(path);
	want = xstrndup(expect, strstr(expect, "VERDICT: ") ?
			(size_t)(strstr(expect, "VERDICT: ") - expect) : strlen(expect));
	assert_string_equal(sbuf_str(&got), want);
	sbuf_free(&got);
	free(want);
	free(expect);
	free(path);
	free(log);
	return m;
}

static void test_real_logs(void **state)
{
	char *dir = console_data();
	struct kmonitor *m;
	const char *rep;

	(void)state;
	m = replay_real(dir, "real-clean-boot");
	assert_verdict(m, KMON_BOOTED);
	assert_int_equal(ncrashes(m), 0);
	kmonitor_free(m);

	m = replay_real(dir, "real-hang");
	assert_verdict(m, KMON_TIMED_OUT);
	kmonitor_free(m);

	/* the Oops: from its BUG: line through the second register dump */
	m = replay_real(dir, "real-oops");
	assert_verdict(m, KMON_CRASHED);
	assert_int_equal(ncrashes(m), 1);
	assert_int_equal(crash(m, 0)->cls, KMON_OOPS);
	rep = crash(m, 0)->report;
	assert_int_equal(strncmp(rep, "BUG: kernel NULL pointer dereference", 36), 0);
	assert_non_null(strstr(rep, "\nCall Trace:\n"));
	assert_non_null(strstr(rep, "direct_entry+"));
	assert_null(strstr(rep, "ktest: after the oops"));
	kmonitor_free(m);

	m = replay_real(dir, "real-panic");
	assert_verdict(m, KMON_CRASHED);
	assert_int_equal(crash(m, 0)->cls, KMON_PANIC);
	assert_non_null(strstr(crash(m, 0)->report, "\nCall Trace:\n"));
	kmonitor_free(m);

	/* a WARN_ON, and the boot still reaches its success line */
	m = replay_real(dir, "real-warning");
	assert_verdict(m, KMON_CRASHED);
	assert_int_equal(crash(m, 0)->cls, KMON_WARNING);
	assert_true(kmonitor_booted(m));
	kmonitor_free(m);

	/* two kernels in one log: the second banner is not ours */
	m = replay_real(dir, "real-reboot-other-version");
	assert_verdict(m, KMON_TRIPLE_FAULT);
	assert_true(kmonitor_booted(m));
	kmonitor_free(m);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_before_boot),
		cmocka_unit_test(test_timeout_one_second),
		cmocka_unit_test(test_timeout_negative_waits_forever),
		cmocka_unit_test(test_booted_timeout),
		cmocka_unit_test(test_booted_timeout_zero),
		cmocka_unit_test(test_stop_after_success),
		cmocka_unit_test(test_stop_after_success_restarts),
		cmocka_unit_test(test_stop_after_success_zero),
		cmocka_unit_test(test_stop_after_success_off),
		cmocka_unit_test(test_stop_after_failure),
		cmocka_unit_test(test_stop_after_failure_on_line),
		cmocka_unit_test(test_panic_restarts_failure_timer),
		cmocka_unit_test(test_failure_off_falls_back),
		cmocka_unit_test(test_stop_test_after),
		cmocka_unit_test(test_stop_test_after_only_on_lines),
		cmocka_unit_test(test_stop_test_after_not_after_boot),
		cmocka_unit_test(test_line_after_deadline),
		cmocka_unit_test(test_eof),
		cmocka_unit_test(test_fractional_seconds),
		cmocka_unit_test(test_success_line_perl_regex),
		cmocka_unit_test(test_bad_success_line),
		cmocka_unit_test(test_call_trace_any_case),
		cmocka_unit_test(test_ignore_errors),
		cmocka_unit_test(test_backtrace_markers),
		cmocka_unit_test(test_triple_fault_after_login),
		cmocka_unit_test(test_triple_fault_before_login),
		cmocka_unit_test(test_triple_fault_needs_ours_first),
		cmocka_unit_test(test_triple_fault_first_banner_is_ours),
		cmocka_unit_test(test_reboot_after_panic_is_a_crash),
		cmocka_unit_test(test_fail_classes),
		cmocka_unit_test(test_parse_classes),
		cmocka_unit_test(test_binary_lines),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_report_text),
		cmocka_unit_test(test_report_bounded),
		cmocka_unit_test(test_title_while_open),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_real_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
