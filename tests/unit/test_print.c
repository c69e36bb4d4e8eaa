// SPDX-License-Identifier: GPL-2.0-only
/*
 * krun_print and krun_log in a box of a pool (r->prefix set): the boxes
 * and ktest share stdout and LOG_FILE, so a box's line must reach them in
 * one write, its prefix first, however many prints make it; a print that
 * ends no line writes nothing yet. Without a prefix (ktest itself), each
 * print is written at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest/run.h"

/* What is in the pipe now (non-blocking), NUL-terminated. */
static size_t pending(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return got;
}

/*
 * A child with stdout and LOG_FILE on pipes prints "Build time:   ", waits
 * for a byte on go, then prints "3 seconds\n", logs "make: done\n" in two
 * pieces and ends.
 */
static pid_t printer(const char *prefix, int out, int log, int go)
{
	pid_t pid = fork();
	struct krun r;
	char c;

	assert_true(pid >= 0);
	if (pid)
		return pid;
	alarm(10);	/* a failed assertion leaves go open: no child left */
	memset(&r, 0, sizeof(r));
	r.prefix = prefix;
	if (dup2(out, STDOUT_FILENO) < 0)
		_exit(2);
	r.log = fdopen(log, "w");
	if (!r.log)
		_exit(2);
	krun_print(&r, "Build time:   ");
	if (read(go, &c, 1) != 1)
		_exit(2);
	krun_print(&r, "%d seconds\n", 3);
	krun_log(&r, "make: ");
	krun_log(&r, "done\n");
	fclose(r.log);
	_exit(0);
}

static void run(const char *prefix, const char *partial, const char *whole,
		const char *log_rest)
{
	int out[2], log[2], go[2], st;
	char buf[256];
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(log), 0);
	assert_int_equal(pipe(go), 0);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(log[0], F_SETFL, O_NONBLOCK);
	pid = printer(prefix, out[1], log[1], go[0]);
	close(out[1]);
	close(log[1]);
	close(go[0]);
	/* the partial print has had the time to be written if it is */
	usleep(200 * 1000);
	pending(out[0], buf, sizeof(buf));
	assert_string_equal(buf, partial);
	pending(log[0], buf, sizeof(buf));
	assert_string_equal(buf, partial);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pending(out[0], buf, sizeof(buf));
	assert_string_equal(buf, whole);
	pending(log[0], buf, sizeof(buf));
	assert_string_equal(buf, log_rest);
	close(out[0]);
	close(log[0]);
	close(go[1]);
}

/* a box: nothing of the line until its end, then all of it */
static void test_box_whole_lines(void **state)
{
	run("[box b] ", "", "[box b] Build time:   3 seconds\n",
	    "[box b] Build time:   3 seconds\n[box b] make: done\n");
}

/* ktest itself: each print at once */
static void test_main_at_once(void **state)
{
	run(NULL, "Build time:   ", "3 seconds\n",
	    "3 seconds\nmake: done\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_box_whole_lines),
		cmocka_unit_test(test_main_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
