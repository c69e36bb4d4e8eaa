// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcmd: real commands through /bin/sh. Exit codes and signals, output split
 * into lines (partial, empty, longer than the buffer), RUN_TIMEOUT on a
 * chatty and a silent command, the whole process group stopped (a
 * backgrounded grandchild too), nothing left behind, env, cwd, descriptors,
 * EINTR, the caller's watch (kcmd_set_watch), and the two text helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"

/* Every line the command printed. */
struct lines {
	char **v;
	size_t n, cap;
};

static void collect(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	assert_int_equal(strlen(line), len);	/* NUL-terminated */
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = xstrndup(line, len);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}

/* Runs cmd collecting its lines; asserts it started. */
static struct kcmd_result run(const char *cmd, long timeout_ms,
			      struct lines *l)
{
	struct kcmd_opts o = {
		.timeout_ms = timeout_ms,
		.on_line = collect,
		.ctx = l,
		.stdin_null = true,
	};
	struct kcmd_result r;

	assert_int_equal(kcmd_run(cmd, &o, &r), 0);
	return r;
}

/* The whole output of cmd, lines joined with '\n'. */
static char *output(const char *cmd)
{
	struct lines l = { 0 };
	struct kcmd_result r = run(cmd, 10000, &l);
	struct sbuf b;

	assert_int_equal(r.status, 0);
	sbuf_init(&b);
	for (size_t i = 0; i < l.n; i++)
		sbuf_addf(&b, "%s%s", i ? "\n" : "", l.v[i]);
	lines_free(&l);
	return sbuf_detach(&b);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Gone, or a zombie waiting for init: either way it runs no more. */
static bool dead(pid_t pid)
{
	long until = now_ms() + 3000;
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (now_ms() < until) {
		FILE *f;
		char *p;

		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
		f = fopen(path, "r");
		if (!f)
			return true;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[1] == ' ' && p[2] == 'Z')
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Under valgrind, posix_spawn's child is a fork, not a vfork sharing our
 * memory, so a failed exec (a missing program, a missing cwd) comes back as
 * exit 127 of a spawned child instead of an error: those checks are skipped.
 */
static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

/* Our own children: every one must have been reaped. */
static void assert_no_children(void)
{
	int st;

	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_exit_codes(void **state)
{
	static const int codes[] = { 0, 1, 3, 127, 255 };
	struct lines l = { 0 };
	char cmd[32], how[64];

	for (size_t i = 0; i < sizeof(codes) / sizeof(*codes); i++) {
		struct kcmd_result r;

		snprintf(cmd, sizeof(cmd), "exit %d", codes[i]);
		r = run(cmd, 0, &l);
		assert_int_equal(r.status, codes[i]);
		assert_int_equal(r.signal, 0);
		assert_false(r.timed_out);
		snprintf(cmd, sizeof(cmd), "exit %d", codes[i]);
		assert_string_equal(kcmd_describe(&r, how, sizeof(how)), cmd);
	}
	assert_int_equal(l.n, 0);
	assert_no_children();
}

static void test_signals(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;
	char how[64];

	r = run("kill -TERM $$", 0, &l);
	assert_int_equal(r.status, -1);
	assert_int_equal(r.signal, SIGTERM);
	assert_string_equal(kcmd_describe(&r, how, sizeof(how)),
			    "killed by SIGTERM");
	r = run("kill -KILL $$", 0, &l);
	assert_int_equal(r.signal, SIGKILL);
	assert_string_equal(kcmd_describe(&r, how, sizeof(how)),
			    "killed by SIGKILL");
	assert_no_children();
}

static void test_lines(void **state)
{
	char *s;

	/* the last line without '\n' still arrives */
	s = output("printf 'a\\nb\\nc'");
	assert_string_equal(s, "a\nb\nc");
	free(s);
	/* stdout and stderr merged, in order */
	s = output("echo out; echo err >&2; echo out2");
	assert_string_equal(s, "out\nerr\nout2");
	free(s);
	s = output("printf '\\n\\nx\\n'");
	assert_string_equal(s, "\n\nx");
	free(s);
	s = output("true");
	assert_string_equal(s, "");
	free(s);
	s = output("printf 'cr\\r\\n'");
	assert_string_equal(s, "cr\r");
	free(s);
}

/* 200000 x's and a newline, then "tail": 64 KiB pieces, then the rest. */
static void test_long_line(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;

	r = run("head -c 200000 /dev/zero | tr '\\0' x; echo; printf tail",
		10000, &l);
	assert_int_equal(r.status, 0);
	assert_int_equal(l.n, 5);
	assert_int_equal(strlen(l.v[0]), 65536);
	assert_int_equal(strlen(l.v[1]), 65536);
	assert_int_equal(strlen(l.v[2]), 65536);
	assert_int_equal(strlen(l.v[3]), 200000 - 3 * 65536);
	assert_int_equal(strspn(l.v[3], "x"), strlen(l.v[3]));
	assert_string_equal(l.v[4], "tail");
	lines_free(&l);
}

/* Lots of output, quickly: nothing lost, nothing reordered. */
static void test_volume(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;
	char want[24];

	r = run("seq 1 100000", 10000, &l);
	assert_int_equal(r.status, 0);
	assert_int_equal(l.n, 100000);
	for (size_t i = 0; i < l.n; i += 9973) {
		snprintf(want, sizeof(want), "%zu", i + 1);
		assert_string_equal(l.v[i], want);
	}
	lines_free(&l);
}

static void test_timeout_silent(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;
	char how[64];

	r = run("echo start; sleep 30; echo never", 300, &l);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, SIGTERM);
	assert_true(r.elapsed_ms >= 300);
	assert_true(r.elapsed_ms < 2000);	/* no grace wait */
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "start");
	assert_string_equal(kcmd_describe(&r, how, sizeof(how)),
			    "timed out after 0.3 s");
	lines_free(&l);
	assert_no_children();
}

/* ktest.pl never stopped this one: it checked the clock only in silence. */
static void test_timeout_chatty(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;

	r = run("while :; do echo x; done", 300, &l);
	assert_true(r.timed_out);
	assert_true(r.elapsed_ms >= 300);
	assert_true(r.elapsed_ms < 2000);	/* no grace wait */
	assert_true(l.n > 10);
	lines_free(&l);
	assert_no_children();
}

/* SIGTERM ignored by everyone: SIGKILL after the grace time. */
static void test_timeout_term_ignored(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;

	r = run("trap '' TERM; sleep 1000 & echo $!; "
		"while :; do sleep 0.05; done", 200, &l);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, SIGKILL);
	assert_true(r.elapsed_ms >= 2200);
	/* the fork cannot reap the group: it waits out its 4 s bound */
	assert_true(r.elapsed_ms < 10000);
	assert_int_equal(l.n, 1);
	assert_true(dead((pid_t)atoi(l.v[0])));
	lines_free(&l);
	assert_no_children();
}

/* The grandchild in the background dies with the group, chatty or not. */
static void check_group_killed(const char *cmd)
{
	struct lines l = { 0 };
	struct kcmd_result r;
	pid_t pid;

	r = run(cmd, 300, &l);
	assert_true(r.timed_out);
	assert_true(l.n >= 1);
	pid = (pid_t)atoi(l.v[0]);
	assert_true(pid > 1);
	assert_true(dead(pid));
	lines_free(&l);
	assert_no_children();
}

static void test_group_killed(void **state)
{
	check_group_killed("sleep 1000 & echo $!; "
			   "while :; do echo tick; sleep 0.01; done");
	check_group_killed("sleep 1000 & echo $!; wait");
	/* the grandchild holds the output open after the shell exited */
	check_group_killed("sleep 1000 & echo $!; exit 0");
}

/* Left behind after a normal end, not holding the output: stopped too. */
static void test_leftover_stopped(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;
	long t0 = now_ms();

	r = run("sleep 1000 >/dev/null 2>&1 & echo $!", 10000, &l);
	assert_int_equal(r.status, 0);
	assert_false(r.timed_out);
	assert_true(now_ms() - t0 < 2000);	/* no grace wait */
	assert_int_equal(l.n, 1);
	assert_true(dead((pid_t)atoi(l.v[0])));
	lines_free(&l);
	assert_no_children();
}

/* Output of a background job that keeps the pipe: waited for (ktest.pl). */
static void test_background_output(void **state)
{
	char *s = output("(sleep 0.3; echo late) & echo early");

	assert_string_equal(s, "early\nlate");
	free(s);
}

static void test_env_cwd(void **state)
{
	const char *env[] = { "KT_A=one two", "HOME=/nowhere", "KT_GONE", NULL };
	struct lines l = { 0 };
	struct kcmd_opts o = { .env = env, .cwd = "/tmp", .on_line = collect,
			       .ctx = &l, .stdin_null = true };
	struct kcmd_result r;

	setenv("KT_GONE", "still here", 1);
	setenv("KT_KEPT", "kept", 1);
	assert_int_equal(kcmd_run("echo \"$KT_A|$HOME|${KT_GONE-unset}|$KT_KEPT\"; pwd",
				  &o, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0], "one two|/nowhere|unset|kept");
	assert_string_equal(l.v[1], "/tmp");
	lines_free(&l);

	if (under_valgrind())
		return;
	o.cwd = "/nonexistent/dir";
	errno = 0;
	assert_int_equal(kcmd_run("true", &o, &r), -1);
	assert_int_equal(errno, ENOENT);
	assert_no_children();
}

static void test_stdin(void **state)
{
	struct lines l = { 0 };
	struct kcmd_result r;

	/* would wait for the terminal if stdin were inherited */
	r = run("cat; echo done", 5000, &l);
	assert_int_equal(r.status, 0);
	assert_false(r.timed_out);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "done");
	lines_free(&l);
}

/* A descriptor the caller forgot to mark close-on-exec does not leak. */
static void test_fds_closed(void **state)
{
	int fd = open("/dev/null", O_RDONLY);
	char *s;

	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 57), 57);
	s = output("[ -e /proc/self/fd/57 ] && echo open || echo closed");
	assert_string_equal(s, "closed");
	free(s);
	close(57);
	close(fd);
}

static void on_alarm(int sig)
{
}

/* A signal storm in the parent: every call retried, nothing lost. */
static void test_eintr(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	char *s;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	s = output("echo a; sleep 0.2; echo b; seq 1 3 | tail -n 1");
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	assert_string_equal(s, "a\nb\n3");
	free(s);
}

static void on_alarm_term(int sig)
{
	(void)sig;
	kcmd_signal_running(SIGTERM);
}

/*
 * kcmd_signal_running from a handler (a second SIGINT's): the command
 * running gets the signal, and its run goes on to a normal end, the signal
 * in its result; with no command running it sends nothing.
 */
static void test_signal_running(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm_term };
	/* again and again: one that comes before the spawn sends nothing */
	struct itimerval it = { { 0, 300 * 1000 }, { 0, 300 * 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct kcmd_result r;

	(void)state;
	assert_int_equal(kcmd_signal_running(SIGTERM), 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	assert_int_equal(kcmd_run("sleep 20 & wait", NULL, &r), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	assert_int_equal(r.signal, SIGTERM);
	assert_false(r.timed_out);
	assert_true(r.elapsed_ms < 20000);
	/* the run is over: nothing runs, nothing is sent */
	assert_int_equal(kcmd_signal_running(SIGTERM), 0);
}

/* kcmd_set_watch: a pipe written to 0.2 s into a 1 s command */
struct watch_state {
	int fd;			/* -1 once at EOF */
	int calls;
	long first_ms;		/* when ready() was first called */
	char got;
	int nested;		/* a watch call while ready() ran */
	int child_stopped;	/* what kcmd_stop_running said in a fork */
	bool as_handler;	/* the fork stops the command, as ktest's
				 * SIGINT handler would (no kcmd_after_fork) */
};

static int watch_fds(void *ctx, struct pollfd *p, int max)
{
	struct watch_state *w = ctx;

	assert_true(max >= 1);
	if (w->calls && !w->first_ms)
		w->nested++;
	if (w->fd < 0)
		return 0;
	p[0] = (struct pollfd){ .fd = w->fd, .events = POLLIN };
	return 1;
}

static void watch_ready(void *ctx)
{
	struct watch_state *w = ctx;
	struct kcmd_result r;
	char c;
	ssize_t n = read(w->fd, &c, 1);
	pid_t pid;
	int st;

	w->calls++;
	if (n <= 0) {
		close(w->fd);
		w->fd = -1;
		return;
	}
	w->got = c;
	/* a command run from ready() is not watched in turn */
	assert_int_equal(kcmd_run("true", NULL, &r), 0);
	w->first_ms = now_ms();
	/* a process forked here, during the command: not its to stop */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (!w->as_handler)
			kcmd_after_fork();
		_exit(kcmd_stop_running() ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	w->child_stopped = WEXITSTATUS(st);
}

static void test_watch(void **state)
{
	struct watch_state w = { .fd = -1 };
	const struct kcmd_watch kw = { .fds = watch_fds, .ready = watch_ready,
				       .ctx = &w };
	struct lines l = { 0 };
	struct kcmd_result r;
	long t0;
	int p[2];
	pid_t writer;

	assert_int_equal(pipe(p), 0);
	writer = fork();
	assert_true(writer >= 0);
	if (!writer) {
		struct timespec ts = { 0, 200 * 1000000L };

		close(p[0]);
		nanosleep(&ts, NULL);
		_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	w.fd = p[0];
	kcmd_set_watch(&kw);
	t0 = now_ms();
	r = run("sleep 1; echo done", 10000, &l);
	kcmd_set_watch(NULL);
	assert_int_equal(waitpid(writer, NULL, 0), writer);
	/* the command ran to its end, not stopped by the fork's call */
	assert_int_equal(r.status, 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "done");
	assert_true(r.elapsed_ms >= 1000);
	/* ready() came with the byte, during the command, then at EOF */
	assert_int_equal(w.got, 'x');
	assert_true(w.first_ms - t0 >= 150 && w.first_ms - t0 < 900);
	assert_int_equal(w.calls, 2);
	assert_int_equal(w.fd, -1);
	assert_int_equal(w.nested, 0);
	assert_int_equal(w.child_stopped, 0);
	lines_free(&l);
	/* nothing watched any more */
	w.calls = 0;
	lines_free(&l);
	r = run("echo again", 10000, &l);
	assert_int_equal(w.calls, 0);
	lines_free(&l);
}

/*
 * After a command run from ready(), the command that was running is still
 * the one kcmd_stop_running stops (SIGINT's handler)
 */
static void test_watch_stop(void **state)
{
	struct watch_state w = { .fd = -1, .as_handler = true };
	const struct kcmd_watch kw = { .fds = watch_fds, .ready = watch_ready,
				       .ctx = &w };
	struct lines l = { 0 };
	struct kcmd_result r;
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "y", 1), 1);
	close(p[1]);
	w.fd = p[0];
	kcmd_set_watch(&kw);
	r = run("sleep 30; echo done", 60000, &l);
	kcmd_set_watch(NULL);
	assert_int_equal(w.got, 'y');
	assert_int_equal(w.child_stopped, 3);
	assert_int_equal(r.signal, SIGTERM);
	assert_int_equal(l.n, 0);
	/* the fork cannot reap the group: it waits out its 4 s bound */
	assert_true(r.elapsed_ms < 10000);
	lines_free(&l);
}

/*
 * A forked worker (kcmd_after_fork) gets its commands' orphans to reap,
 * not init: here one that left the group and outlives its shell.
 */
static void test_after_fork_reaps_orphans(void **state)
{
	pid_t w;
	int st;

	w = fork();
	assert_true(w >= 0);
	if (!w) {
		struct lines l = { 0 };
		struct kcmd_result r;
		pid_t orphan;

		kcmd_after_fork();
		r = run("setsid sleep 0.3 >/dev/null 2>&1 & echo $!", 10000, &l);
		if (r.status || l.n != 1)
			_exit(2);
		orphan = (pid_t)atoi(l.v[0]);
		/* init's, it would be ECHILD here */
		_exit(orphan > 1 && waitpid(orphan, NULL, 0) == orphan ? 0 : 1);
	}
	assert_int_equal(waitpid(w, &st, 0), w);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_runv(void **state)
{
	const char *argv[] = { "printf", "%s|", "a b", "c'd", "$HOME", NULL };
	const char *missing[] = { "/nonexistent/program", NULL };
	struct lines l = { 0 };
	struct kcmd_opts o = { .on_line = collect, .ctx = &l };
	struct kcmd_result r;

	assert_int_equal(kcmd_runv(argv, &o, &r), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "a b|c'd|$HOME|");
	lines_free(&l);
	if (under_valgrind())
		return;
	errno = 0;
	assert_int_equal(kcmd_runv(missing, &o, &r), -1);
	assert_int_equal(errno, ENOENT);
	argv[0] = "no-such-program-for-ktest";
	assert_int_equal(kcmd_runv(argv, &o, &r), -1);
	assert_no_children();
}

static void test_subst(void **state)
{
	const char *names[] = { "MACHINE", "SSH_USER", "MACHINE_X",
				"KERNEL_VERSION", "EMPTY" };
	const char *values[] = { "box", "root", "bx", "6.1.0-test$MACHINE",
				 NULL };
	char *s;

	s = kcmd_subst("ssh $SSH_USER@$MACHINE 'ls /lib/modules/$KERNEL_VERSION'",
		       names, values, 5);
	assert_string_equal(s, "ssh root@box 'ls /lib/modules/6.1.0-test$MACHINE'");
	free(s);
	/* longest name first; an unknown one and $$ stay */
	s = kcmd_subst("$MACHINE_X $MACHINEY $$ $NOPE [$EMPTY] $", names,
		       values, 5);
	assert_string_equal(s, "bx boxY $$ $NOPE [] $");
	free(s);
	s = kcmd_subst("", names, values, 5);
	assert_string_equal(s, "");
	free(s);
	s = kcmd_subst("$MACHINE", names, values, 0);
	assert_string_equal(s, "$MACHINE");
	free(s);
}

static void test_quote(void **state)
{
	static const char *const samples[] = {
		"", "a", "plain-path/x_1.2:3@4%5+6=7,8", "a b", "it's", "'",
		"''", "$HOME", "`id`", "$(id)", "\\", "a\\nb", "a\nb", "*",
		"-n", "\xc3\xa9t\xc3\xa9", "!", "\"q\"", "; rm -rf /", "~",
		"\t", "a'b'c''d",
	};
	char *q, *cmd, *s;

	q = kcmd_quote("simple/path-1.0");
	assert_string_equal(q, "simple/path-1.0");
	free(q);
	q = kcmd_quote("it's");
	assert_string_equal(q, "'it'\\''s'");
	free(q);
	q = kcmd_quote("");
	assert_string_equal(q, "''");
	free(q);
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		q = kcmd_quote(samples[i]);
		cmd = xasprintf("printf '%%s' %s", q);
		s = output(cmd);
		assert_string_equal(s, samples[i]);
		free(s);
		free(cmd);
		free(q);
	}
}

/* Private files and directories, whatever the umask. */
/* kcmd_copy_file: bigger than its buffer, byte for byte; errors with errno */
static void test_copy_file(void **state)
{
	char dir[] = "/tmp/ktest-copy.XXXXXX", *from, *to, *bad;
	char buf[4096];
	FILE *f;
	size_t n, total = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	from = xasprintf("%s/from", dir);
	to = xasprintf("%s/to", dir);
	bad = xasprintf("%s/no/such/dir/to", dir);
	f = fopen(from, "wb");
	assert_non_null(f);
	for (int i = 0; i < 200000; i++)
		fputc(i * 7 % 251, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(kcmd_copy_file(from, to), 0);
	f = fopen(to, "rb");
	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n; i++)
			assert_int_equal((unsigned char)buf[i],
					 (int)((total + i) * 7 % 251));
		total += n;
	}
	fclose(f);
	assert_int_equal(total, 200000);
	errno = 0;
	assert_int_equal(kcmd_copy_file(bad, to), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(kcmd_copy_file(from, bad), -1);
	assert_int_equal(errno, ENOENT);
	unlink(from);
	unlink(to);
	rmdir(dir);
	free(from);
	free(to);
	free(bad);
}

static void test_private(void **state)
{
	char dir[] = "/tmp/ktest-private.XXXXXX", *sub, *file;
	struct stat st;
	mode_t old = umask(022);
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	sub = xasprintf("%s/a/b", dir);
	assert_int_equal(kcmd_mkdirs_private(sub), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	free(sub);
	sub = xasprintf("%s/a", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	file = xasprintf("%s/log", sub);
	f = kcmd_fopen_private(file, "w");
	assert_non_null(f);
	fputs("one\n", f);
	fclose(f);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* an existing file others could read loses their bits; "a" appends */
	assert_int_equal(chmod(file, 0644), 0);
	f = kcmd_fopen_private(file, "a");
	assert_non_null(f);
	fputs("two\n", f);
	fclose(f);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 8);
	assert_int_equal(chmod(file, 0640), 0);
	fd = kcmd_open_private(file, O_RDWR);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	umask(old);
	unlink(file);
	free(file);
	file = xasprintf("%s/b", sub);
	rmdir(file);
	rmdir(sub);
	rmdir(dir);
	free(file);
	free(sub);
}

/* Secrets masked in what ktest writes down; the rest as written. */
static void test_redact(void **state)
{
	static const char *const cases[][2] = {
		{ "ipmitool -H bmc -U admin -P hunter2 power cycle",
		  "ipmitool -H bmc -U admin -P *** power cycle" },
		{ "curl -s http://admin:hunter2@pdu/outlet?1=CCL",
		  "curl -s http://admin:***@pdu/outlet?1=CCL" },
		{ "curl https://pdu.lab/x?token=abc&port=3",
		  "curl https://pdu.lab/x?token=***&port=3" },
		{ "IPMI_PASSWORD=hunter2 ipmitool -E; x --password='a b' y",
		  "IPMI_PASSWORD=*** ipmitool -E; x --password='***' y" },
		{ "sshpass -p hunter2 ssh root@box", "sshpass -p *** ssh root@box" },
		{ "pdu --token \"s e c\" --port 3", "pdu --token \"***\" --port 3" },
		/* nothing secret: unchanged */
		{ "make -j8 O=/tmp/out bzImage", "make -j8 O=/tmp/out bzImage" },
		{ "ssh root@box reboot; echo http://host/p", "ssh root@box reboot; echo http://host/p" },
		{ "echo passed -P", "echo passed -P" },
		{ "", "" },
	};
	char buf[16];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		char *got = kcmd_redact(cases[k][0]);

		assert_string_equal(got, cases[k][1]);
		free(got);
	}
	snprintf(buf, sizeof(buf), "-P x y");
	kcmd_redact_buf(buf, sizeof(buf));
	assert_string_equal(buf, "-P *** y");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_volume),
		cmocka_unit_test(test_timeout_silent),
		cmocka_unit_test(test_timeout_chatty),
		cmocka_unit_test(test_timeout_term_ignored),
		cmocka_unit_test(test_group_killed),
		cmocka_unit_test(test_leftover_stopped),
		cmocka_unit_test(test_background_output),
		cmocka_unit_test(test_env_cwd),
		cmocka_unit_test(test_stdin),
		cmocka_unit_test(test_fds_closed),
		cmocka_unit_test(test_eintr),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_watch_stop),
		cmocka_unit_test(test_after_fork_reaps_orphans),
		cmocka_unit_test(test_runv),
		cmocka_unit_test(test_subst),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_private),
		cmocka_unit_test(test_copy_file),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_signal_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
