// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command power driver with real commands: ones that work, fail (the
 * message carries the option, the command, how it ended and its output),
 * hang (killed at the timeout, the whole group: a backgrounded child too),
 * die of a signal, print too much; options left unset; on = cycle; state
 * unknown. The qemu box's kpower_qemu_stop() with a stand-in qemu.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "power/power.h"

static void contains(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("'%s' does not contain '%s'", s, want);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A scratch file name, removed by the caller. */
static void scratch(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/ktest-power.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_success(void **state)
{
	struct kpower *p = kpower_command_new("true", "exit 0", 5000);

	(void)state;
	assert_string_equal(p->drv->name, "command");
	assert_int_equal(kpower_cycle(p), 0);
	assert_int_equal(kpower_off(p), 0);
	assert_int_equal(kpower_on(p), 0);
	assert_string_equal(p->err, "");
	kpower_free(p);
}

static void test_failure(void **state)
{
	struct kpower *p = kpower_command_new(
		"echo 'pdu: outlet 7: no such outlet'; echo 'try 1-6' >&2; exit 1",
		"exit 4", 5000);

	(void)state;
	assert_int_equal(kpower_cycle(p), -1);
	contains(p->err, "POWER_CYCLE 'echo 'pdu: outlet 7");
	contains(p->err, "exit 1");
	contains(p->err, "pdu: outlet 7: no such outlet");
	contains(p->err, "try 1-6");		/* stderr too */

	assert_int_equal(kpower_off(p), -1);
	contains(p->err, "POWER_OFF 'exit 4' failed: exit 4");

	/* a later success clears the message */
	kpower_free(p);
	p = kpower_command_new("true", NULL, 5000);
	assert_int_equal(kpower_cycle(p), 0);
	assert_string_equal(p->err, "");
	kpower_free(p);
}

static void test_hang(void **state)
{
	char file[256], cmd[512];
	struct kpower *p;
	pid_t bg;
	long t0, dt;

	(void)state;
	scratch(file, sizeof(file));
	/* the PDU tool, and a helper it left in the background */
	snprintf(cmd, sizeof(cmd),
		 "echo connecting to pdu; sleep 100 & echo $! > %s; sleep 100",
		 file);
	p = kpower_command_new(cmd, NULL, 300);
	t0 = now_ms();
	assert_int_equal(kpower_cycle(p), -1);
	dt = now_ms() - t0;
	assert_true(dt >= 300 && dt < 5000);
	contains(p->err, "POWER_CYCLE");
	contains(p->err, "timed out after 0.3 s and was killed");
	contains(p->err, "connecting to pdu");

	bg = atoi(slurp(file));
	assert_true(bg > 0);
	/* it was in the group, so it is dead (a zombie of ours at most) */
	for (t0 = now_ms(); now_ms() - t0 < 2000; usleep(10000))
		if (kill(bg, 0) < 0 || waitpid(bg, NULL, WNOHANG) == bg)
			break;
	assert_true(kill(bg, 0) < 0);
	unlink(file);
	kpower_free(p);
}

static void test_signal(void **state)
{
	struct kpower *p = kpower_command_new("kill -TERM $$", NULL, 5000);

	(void)state;
	assert_int_equal(kpower_cycle(p), -1);
	contains(p->err, "killed by SIGTERM");
	kpower_free(p);
}

static void test_not_set(void **state)
{
	struct kpower *p = kpower_command_new(NULL, NULL, 5000);

	(void)state;
	assert_int_equal(kpower_cycle(p), -1);
	assert_string_equal(p->err, "POWER_CYCLE is not set");
	assert_int_equal(kpower_on(p), -1);
	assert_string_equal(p->err, "POWER_CYCLE is not set");
	assert_int_equal(kpower_off(p), -1);
	assert_string_equal(p->err, "POWER_OFF is not set");
	kpower_free(p);

	p = kpower_command_new("", "", 5000);
	assert_int_equal(kpower_cycle(p), -1);
	assert_int_equal(kpower_off(p), -1);
	kpower_free(p);
}

/* ktest.pl has no power-on command: on is a cycle. */
static void test_on_is_cycle(void **state)
{
	char file[256], cmd[512];
	struct kpower *p;

	(void)state;
	scratch(file, sizeof(file));
	snprintf(cmd, sizeof(cmd), "echo cycled >> %s", file);
	p = kpower_command_new(cmd, NULL, 5000);
	assert_int_equal(kpower_on(p), 0);
	assert_int_equal(kpower_cycle(p), 0);
	assert_string_equal(slurp(file), "cycled\ncycled\n");
	unlink(file);
	kpower_free(p);
}

static void test_state_unknown(void **state)
{
	struct kpower *p = kpower_command_new("true", "true", 5000);

	(void)state;
	assert_int_equal(kpower_state(p), KPOWER_UNKNOWN);
	assert_int_equal(kpower_off(p), 0);
	assert_int_equal(kpower_state(p), KPOWER_UNKNOWN);
	kpower_free(p);
	kpower_free(NULL);
}

/* The message keeps the end of a long output, and fits. */
static void test_long_output(void **state)
{
	struct kpower *p = kpower_command_new("seq 1 20000; exit 3", NULL, 5000);
	size_t n;

	(void)state;
	assert_int_equal(kpower_cycle(p), -1);
	n = strlen(p->err);
	assert_true(n < sizeof(p->err));
	contains(p->err, "exit 3");
	contains(p->err, "output: ...");
	assert_string_equal(p->err + n - 5, "20000");
	kpower_free(p);
}

/* A stand-in for qemu-system-x86_64: a script running sleep, dying of SIGTERM or not. */
static void fake_qemu(char *path, size_t len, bool ignores_term)
{
	FILE *f;

	scratch(path, len);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%sexec sleep 60\n",
		ignores_term ? "trap '' TERM\n" : "");
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static struct kpower *fake_box(const char *qemu, long stop_ms)
{
	struct kqemu_opts o = { .kernel = qemu, .qemu = qemu, .stop_ms = stop_ms };
	struct kpower *p;
	char err[512];

	p = kpower_qemu_new(&o, err, sizeof(err));
	if (!p)
		fail_msg("kpower_qemu_new: %s", err);
	if (kpower_on(p) < 0)
		fail_msg("kpower_on: %s", p->err);
	return p;
}

static bool gone(int pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/*
 * kpower_qemu_stop(): SIGTERM and back, no wait; the next on() waits for
 * that qemu to end (SIGKILL after stop_ms if it ignores SIGTERM), reaps it
 * and starts a new one.
 */
static void test_qemu_stop(void **state)
{
	char meek[256], stubborn[256];
	struct kpower *p, *cmd;
	int pid;

	(void)state;
	fake_qemu(meek, sizeof(meek), false);
	fake_qemu(stubborn, sizeof(stubborn), true);

	p = fake_box(meek, 3000);
	pid = kpower_qemu_pid(p);
	assert_true(pid > 0);
	kpower_qemu_stop(p);
	assert_int_equal(kpower_on(p), 0);
	assert_true(kpower_qemu_pid(p) > 0);
	assert_int_not_equal(kpower_qemu_pid(p), pid);
	assert_true(gone(pid));		/* ended and reaped */
	assert_string_equal(p->err, "");
	pid = kpower_qemu_pid(p);
	kpower_qemu_stop(p);
	kpower_free(p);
	assert_true(gone(pid));

	/* SIGTERM only: a qemu that ignores it still runs, until on() kills it */
	p = fake_box(stubborn, 200);
	pid = kpower_qemu_pid(p);
	kpower_qemu_stop(p);
	usleep(300 * 1000);
	assert_int_equal(kill(pid, 0), 0);
	assert_int_equal(kpower_on(p), 0);
	assert_int_not_equal(kpower_qemu_pid(p), pid);
	assert_true(gone(pid));
	assert_string_equal(p->err, "");
	kpower_free(p);

	/* a box that is off, and a box that is not qemu: nothing happens */
	p = fake_box(meek, 3000);
	assert_int_equal(kpower_off(p), 0);
	kpower_qemu_stop(p);
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	kpower_free(p);
	cmd = kpower_command_new("true", NULL, 5000);
	kpower_qemu_stop(cmd);
	kpower_free(cmd);
	kpower_qemu_stop(NULL);
	unlink(meek);
	unlink(stubborn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_failure),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_not_set),
		cmocka_unit_test(test_on_is_cycle),
		cmocka_unit_test(test_state_unknown),
		cmocka_unit_test(test_long_output),
		cmocka_unit_test(test_qemu_stop),
	};

	/* the killed background helper comes to us, so we can see it die */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
