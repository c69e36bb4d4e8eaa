// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host commands, as ktest.pl's run_command ran them ("sh -c 'cmd 2>&1'"
 * through a pipe), with what it got wrong put right:
 *
 * - RUN_TIMEOUT is measured on CLOCK_MONOTONIC and enforced whatever the
 *   command prints. ktest.pl only looked at the clock when the command
 *   went quiet, so a build printing a line a second was never stopped.
 * - The command runs in its own process group and the whole group is
 *   stopped: SIGTERM (and SIGCONT, for stopped members), then SIGKILL
 *   after KCMD_GRACE_MS. ktest.pl's "kill 9, $pid" hit the shell only and
 *   left make and its compilers running.
 * - A command is over when its shell has exited and its output has reached
 *   EOF (ktest.pl waited for EOF too, so "x &" holding the output counts).
 *   Whatever is still left in the group after that is stopped the same
 *   way: nothing outlives the command unless it left the group (setsid).
 *
 * The child is started with posix_spawn (a vfork underneath: safe in a
 * threaded process, and exec errors come back as a return value), with
 * default signal dispositions, an empty signal mask and every descriptor
 * above 2 closed, whatever the caller forgot to mark close-on-exec.
 */
#include "ktest/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/leftover.h"

extern char **environ;

/* A line longer than this reaches on_line in pieces of this size. */
#define KCMD_LINE_MAX	(64 * 1024)
/* Between SIGTERM and SIGKILL. */
#define KCMD_GRACE_MS	2000
/* How often the exit is polled for when the kernel has no pidfd_open. */
#define KCMD_TICK_MS	50

struct kcmd_child {
	pid_t pid;		/* also the process group id */
	int out;		/* read end of the output pipe; -1 after EOF */
	int pidfd;		/* readable when the child exits; -1: none */
	bool reaped;
	int wstatus;
	kcmd_line_fn on_line;
	void *ctx;
	char *buf;		/* KCMD_LINE_MAX + 1 for the NUL */
	size_t len;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void emit(struct kcmd_child *c, char *line, size_t len)
{
	line[len] = '\0';
	if (c->on_line)
		c->on_line(c->ctx, line, len);
}

/* Hands every complete line in the buffer out; keeps the rest. */
static void split_lines(struct kcmd_child *c, bool eof)
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(c->buf + start, '\n', c->len - start))) {
		size_t end = (size_t)(nl - c->buf);

		emit(c, c->buf + start, end - start);
		start = end + 1;
	}
	if (start < c->len && (eof || c->len - start == KCMD_LINE_MAX)) {
		emit(c, c->buf + start, c->len - start);
		start = c->len;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
}

/*
 * One read; at EOF the pipe is closed and the partial line handed out.
 * Returns what read() did: > 0 bytes, 0 at EOF, -1 for nothing there yet.
 */
static ssize_t read_output(struct kcmd_child *c)
{
	ssize_t n;

	do {
		n = read(c->out, c->buf + c->len, KCMD_LINE_MAX - c->len);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return -1;
	if (n <= 0) {
		close(c->out);
		c->out = -1;
		split_lines(c, true);
		return 0;
	}
	c->len += (size_t)n;
	split_lines(c, false);
	return n;
}

static void try_reap(struct kcmd_child *c, bool block)
{
	pid_t p;

	if (c->reaped)
		return;
	do {
		p = waitpid(c->pid, &c->wstatus, block ? 0 : WNOHANG);
	} while (p < 0 && errno == EINTR);
	/* ECHILD: someone else reaped it (SIGCHLD set to SIG_IGN) */
	if (p == c->pid || (p < 0 && errno == ECHILD)) {
		/* neither exited nor signalled: reads as status -1 */
		if (p < 0)
			c->wstatus = 0xffff;
		c->reaped = true;
	}
}

/*
 * Is anybody left in the group? Asked once the leader is reaped: until then
 * it answers itself, even as a zombie. kill(-pgid, 0) counts zombies too,
 * and the zombies of our grandchildren are init's to reap, which some inits
 * do slowly, so a "yes" is checked in /proc for members that still run.
 * The leader's pid cannot be reused while the group has members, so the
 * answer is about our group.
 */
static bool group_empty(const struct kcmd_child *c)
{
	if (!c->reaped)
		return false;
	/* members that came to us (kcmd_after_fork's subreaper) */
	while (waitpid(-c->pid, NULL, WNOHANG) > 0)
		;
	if (kill(-c->pid, 0) < 0 && errno == ESRCH)
		return true;
	return !kleft_group_runs(c->pid);
}

/* The caller's watch (kcmd_set_watch), or NULL */
static const struct kcmd_watch *watch;

void kcmd_set_watch(const struct kcmd_watch *w)
{
	watch = w;
}

/* One of the watch's descriptors is readable: ready(), not watched meanwhile. */
static void watched(const struct pollfd *p, nfds_t from, nfds_t n)
{
	const struct kcmd_watch *w = watch;

	for (nfds_t i = from; i < n; i++) {
		if (!p[i].revents)
			continue;
		watch = NULL;
		w->ready(w->ctx);
		watch = w;
		return;
	}
}

/*
 * Waits up to wait_ms for output, the child's exit or the watch, and takes
 * them in.
 */
static void wait_some(struct kcmd_child *c, long wait_ms)
{
	struct pollfd p[2 + KCMD_WATCH_MAX];
	nfds_t n = 0, own;

	if (!c->reaped && c->pidfd < 0 && (wait_ms < 0 || wait_ms > KCMD_TICK_MS))
		wait_ms = KCMD_TICK_MS;
	if (wait_ms > INT_MAX)
		wait_ms = INT_MAX;	/* the loop comes back for the rest */
	if (c->out >= 0)
		p[n++] = (struct pollfd){ .fd = c->out, .events = POLLIN };
	if (!c->reaped && c->pidfd >= 0)
		p[n++] = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
	own = n;
	if (watch) {
		int got = watch->fds(watch->ctx, p + n, KCMD_WATCH_MAX);

		n += got > 0 ? (nfds_t)got : 0;
	}
	if (poll(p, n, (int)wait_ms) > 0) {
		if (c->out >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			read_output(c);
		if (watch)
			watched(p, own, n);
	}
	try_reap(c, false);
}

/* SIGTERM to the group, SIGKILL to whatever is left after the grace time. */
static void stop_group(struct kcmd_child *c)
{
	long until = now_ms() + KCMD_GRACE_MS;

	kill(-c->pid, SIGTERM);
	kill(-c->pid, SIGCONT);
	while (!group_empty(c)) {
		long left = until - now_ms();

		if (left <= 0) {
			kill(-c->pid, SIGKILL);
			break;
		}
		/* reaped leader: nothing to poll on but the clock */
		wait_some(c, c->reaped ? (left < 10 ? left : 10) : left);
	}
	try_reap(c, true);
}

/* The command's output after it ended: what is in the pipe now, no more. */
static void drain(struct kcmd_child *c)
{
	if (c->out >= 0) {
		fcntl(c->out, F_SETFL, fcntl(c->out, F_GETFL) | O_NONBLOCK);
		/* EAGAIN: a holder that left the group (setsid); not waited for */
		while (c->out >= 0 && read_output(c) > 0)
			;
	}
	if (c->out >= 0) {
		close(c->out);
		c->out = -1;
	}
	split_lines(c, true);
}

/*
 * The child's environment: ours, with opts->env laid over it. An entry
 * without '=' removes that variable.
 */
static char **make_env(const char *const *extra)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	while (extra && extra[m])
		m++;
	env = xcalloc(n + m + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(environ[i], "=");
		bool replaced = false;

		for (size_t j = 0; j < m && !replaced; j++)
			replaced = strcspn(extra[j], "=") == len &&
				   !strncmp(extra[j], environ[i], len);
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		if (strchr(extra[j], '='))
			env[k++] = (char *)extra[j];
	env[k] = NULL;
	return env;
}

static int setup_spawn(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
		       const struct kcmd_opts *o, int out)
{
	sigset_t all, none;

	sigfillset(&all);
	sigemptyset(&none);
	if (posix_spawn_file_actions_init(fa))
		return -1;
	if (posix_spawnattr_init(at)) {
		posix_spawn_file_actions_destroy(fa);
		return -1;
	}
	if (o->stdin_null)
		posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(fa, out, 1);
	posix_spawn_file_actions_adddup2(fa, out, 2);
	posix_spawn_file_actions_addclosefrom_np(fa, 3);
	if (o->cwd)
		posix_spawn_file_actions_addchdir_np(fa, o->cwd);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(at, 0);
	posix_spawnattr_setsigdefault(at, &all);
	posix_spawnattr_setsigmask(at, &none);
	return 0;
}

/*
 * With stdin, stdout or stderr closed, the pipe may get fd 0-2 and the
 * child's dup2s would trample it: move it above 2.
 */
static int above_stdio(int fd)
{
	int moved;

	if (fd > 2)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

static int open_pipe(int pfd[2])
{
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pfd[0] = above_stdio(pfd[0]);
	pfd[1] = above_stdio(pfd[1]);
	if (pfd[0] >= 0 && pfd[1] >= 0)
		return 0;
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return -1;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	return -1;
#endif
}

static int spawn(struct kcmd_child *c, const char *const *argv, bool path,
		 const struct kcmd_opts *o)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char **env;
	int pfd[2];
	int err;

	if (open_pipe(pfd) < 0)
		return -1;
	if (setup_spawn(&fa, &at, o, pfd[1]) < 0) {
		err = ENOMEM;	/* the only way the inits fail */
		goto fail;
	}
	env = make_env(o->env);
	if (path)
		err = posix_spawnp(&c->pid, argv[0], &fa, &at,
				   (char *const *)argv, env);
	else
		err = posix_spawn(&c->pid, argv[0], &fa, &at,
				  (char *const *)argv, env);
	free(env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err)
		goto fail;
	close(pfd[1]);
	c->out = pfd[0];
	c->pidfd = open_pidfd(c->pid);
	return 0;
fail:
	close(pfd[0]);
	close(pfd[1]);
	errno = err;
	return -1;
}

static void fill_result(const struct kcmd_child *c, bool timed_out,
			long start, struct kcmd_result *r)
{
	r->status = WIFEXITED(c->wstatus) ? WEXITSTATUS(c->wstatus) : -1;
	r->signal = WIFSIGNALED(c->wstatus) ? WTERMSIG(c->wstatus) : 0;
	r->timed_out = timed_out;
	r->elapsed_ms = now_ms() - start;
}

/* The process group of the command running now (kcmd_stop_running). */
static volatile sig_atomic_t running_pgid;

int kcmd_signal_running(int sig)
{
	pid_t pg = (pid_t)running_pgid;
	int saved = errno;

	if (pg <= 0)
		return 0;
	kill(-pg, sig);
	kill(-pg, SIGCONT);
	errno = saved;
	return 1;
}

int kcmd_stop_running(void)
{
	struct timespec ts = { 0, 20 * 1000000L };
	pid_t pg = (pid_t)running_pgid;
	int saved = errno;

	if (!kcmd_signal_running(SIGTERM))
		return 0;
	for (int i = 0; i < KCMD_GRACE_MS / 20 * 2; i++) {
		if (i == KCMD_GRACE_MS / 20)
			kill(-pg, SIGKILL);
		while (waitpid(-pg, NULL, WNOHANG) > 0)
			;
		if (kill(-pg, 0) < 0 && errno == ESRCH) {
			kleft_forget_running();
			break;
		}
		nanosleep(&ts, NULL);
	}
	errno = saved;
	return 1;
}

/*
 * spawn(), the group made running_pgid and noted, with signals held: a
 * SIGTERM that came while posix_spawn ran (it blocks them) was handled
 * once it returned, before running_pgid was set, and the handler's
 * kcmd_stop_running() left the new group running, not even noted (a
 * pool's box whose ktest was SIGKILLed: its make went on, and cleaned
 * OUTPUT_DIR under the next run's build).
 */
static int spawn_noted(struct kcmd_child *c, const char *const *argv,
		       bool path, const struct kcmd_opts *o,
		       char note[KLEFT_NAME_MAX])
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	ret = spawn(c, argv, path, o);
	if (!ret) {
		running_pgid = c->pid;
		kleft_note(c->pid, note);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void kcmd_after_fork(void)
{
	running_pgid = 0;
	watch = NULL;
	/*
	 * A worker's commands' orphans (make's compilers, when a stop killed
	 * make first) come to it, not to init: kcmd_stop_running() waits
	 * while the group has members, zombies too, and some inits reap
	 * late (up to its 2 s grace on the test VMs). Best effort: without
	 * it (a kernel before 3.4) the stop waits for init, as before.
	 */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static int run(const char *const *argv, bool path, const struct kcmd_opts *o,
	       struct kcmd_result *r)
{
	static const struct kcmd_opts none;
	struct kcmd_child c = { .out = -1, .pidfd = -1 };
	pid_t outer = (pid_t)running_pgid;	/* a watch's ready() runs us */
	char note[KLEFT_NAME_MAX];
	long start = now_ms(), deadline;
	bool timed_out = false;

	if (!o)
		o = &none;
	memset(r, 0, sizeof(*r));
	r->status = -1;
	c.on_line = o->on_line;
	c.ctx = o->ctx;
	if (spawn_noted(&c, argv, path, o, note) < 0)
		return -1;
	c.buf = xmalloc(KCMD_LINE_MAX + 1);
	deadline = o->timeout_ms > 0 ? start + o->timeout_ms : 0;

	while (c.out >= 0 || !c.reaped) {
		long wait = -1;

		if (deadline) {
			wait = deadline - now_ms();
			if (wait <= 0) {
				timed_out = true;
				break;
			}
		}
		wait_some(&c, wait);
	}
	if (timed_out || !group_empty(&c))
		stop_group(&c);
	running_pgid = outer;
	kleft_forget(note);
	drain(&c);
	if (c.pidfd >= 0)
		close(c.pidfd);
	free(c.buf);
	fill_result(&c, timed_out, start, r);
	return 0;
}

int kcmd_run(const char *cmd, const struct kcmd_opts *o, struct kcmd_result *r)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };

	return run(argv, false, o, r);
}

int kcmd_runv(const char *const *argv, const struct kcmd_opts *o,
	      struct kcmd_result *r)
{
	if (!argv || !argv[0]) {
		errno = EINVAL;
		return -1;
	}
	return run(argv, !strchr(argv[0], '/'), o, r);
}

const char *kcmd_describe(const struct kcmd_result *r, char *buf, size_t len)
{
	const char *name;

	if (r->timed_out) {
		if (r->elapsed_ms < 10000)
			snprintf(buf, len, "timed out after %.1f s",
				 r->elapsed_ms / 1000.0);
		else
			snprintf(buf, len, "timed out after %ld s",
				 r->elapsed_ms / 1000);
	} else if (r->signal) {
		name = sigabbrev_np(r->signal);
		if (name)
			snprintf(buf, len, "killed by SIG%s", name);
		else
			snprintf(buf, len, "killed by signal %d", r->signal);
	} else {
		snprintf(buf, len, "exit %d", r->status);
	}
	return buf;
}

/* The longest of names that text starts with, or -1. */
static long longest_name(const char *text, const char *const *names, size_t n)
{
	size_t best_len = 0;
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (len > best_len && !strncmp(text, names[i], len)) {
			best = (long)i;
			best_len = len;
		}
	}
	return best;
}

/*
 * ktest.pl ran one s/\$NAME/value/g after another, so a value containing
 * "$MACHINE" was substituted again and $MACHINE ate the front of
 * $MACHINE_X. Here the command is scanned once: at each '$' the longest
 * matching name wins, and substituted values are never rescanned.
 */
char *kcmd_subst(const char *cmd, const char *const *names,
		 const char *const *values, size_t n)
{
	struct sbuf b;

	sbuf_init(&b);
	for (const char *p = cmd; *p; p++) {
		long i = *p == '$' ? longest_name(p + 1, names, n) : -1;

		if (i < 0) {
			sbuf_addc(&b, *p);
			continue;
		}
		if (values[i])
			sbuf_adds(&b, values[i]);
		p += strlen(names[i]);
	}
	return sbuf_detach(&b);
}

/* Characters that never need quoting, so the logs stay readable. */
static bool plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_@%+=:,./-", *s))
			return false;
	return true;
}

char *kcmd_quote(const char *s)
{
	struct sbuf b;

	if (plain(s))
		return xstrdup(s);
	sbuf_init(&b);
	sbuf_addc(&b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_adds(&b, "'\\''");
		else
			sbuf_addc(&b, *s);
	}
	sbuf_addc(&b, '\'');
	return sbuf_detach(&b);
}

/* ---- secrets in command lines ---- */

/* the end of the value at s: a quoted string, or up to a blank or ;|& */
static const char *value_end(const char *s)
{
	if (*s == '\'' || *s == '"') {
		const char *e = strchr(s + 1, *s);

		return e ? e + 1 : s + strlen(s);
	}
	return s + strcspn(s, " \t\n;|&'\"");
}

static bool secret_name(const char *s, size_t n)
{
	static const char *const words[] = { "pass", "secret", "token" };

	for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++) {
		size_t w = strlen(words[k]);

		for (size_t i = 0; i + w <= n; i++)
			if (!strncasecmp(s + i, words[k], w))
				return true;
	}
	return false;
}

/*
 * At a word's start: the length of what precedes a secret value ("-P ",
 * "--password=", "IPMI_PASSWORD=", "sshpass -p "), or 0.
 */
static size_t secret_prefix(const char *s)
{
	static const char *const flags[] = {
		"-P", "--password", "--passwd", "--pass", "--token",
		"--secret", "sshpass -p",
	};
	size_t n;

	for (size_t k = 0; k < sizeof(flags) / sizeof(*flags); k++) {
		n = strlen(flags[k]);
		if (strncmp(s, flags[k], n))
			continue;
		if (s[n] == '=')
			return n + 1;
		if (s[n] == ' ' || s[n] == '\t') {
			while (s[n] == ' ' || s[n] == '\t')
				n++;
			return s[n] ? n : 0;
		}
	}
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		   "0123456789_-.");
	if (n && s[n] == '=' && secret_name(s, n))
		return n + 1;
	return 0;
}

char *kcmd_redact(const char *s)
{
	struct sbuf b;
	const char *p = s;
	bool word_start = true;

	sbuf_init(&b);
	while (*p) {
		size_t n;

		if (word_start && (n = secret_prefix(p))) {
			const char *e = value_end(p + n);

			sbuf_addn(&b, p, n);
			if (p[n] == '\'' || p[n] == '"')
				sbuf_addf(&b, "%c***%c", p[n], p[n]);
			else
				sbuf_adds(&b, "***");
			p = e;
			word_start = false;
			continue;
		}
		if (!strncmp(p, "://", 3)) {
			const char *u = p + 3, *pw, *at;

			n = strcspn(u, ":/@ \t\n'\"");
			pw = u + n + 1;
			at = pw + strcspn(pw, "@/ \t\n'\"");
			if (u[n] == ':' && *at == '@' && at > pw) {
				sbuf_addn(&b, p, (size_t)(pw - p));
				sbuf_adds(&b, "***");
				p = at;
				word_start = false;
				continue;
			}
		}
		word_start = strchr(" \t\n;|&(?'\"", *p) != NULL;
		sbuf_addc(&b, *p++);
	}
	if (!b.buf)
		return xstrdup("");
	return sbuf_detach(&b);
}

void kcmd_redact_buf(char *buf, size_t len)
{
	char *r = kcmd_redact(buf);

	snprintf(buf, len, "%s", r);
	free(r);
}

static int mkdirs_mode(const char *dir, mode_t mode)
{
	char *p = xstrdup(dir), *s = p;
	int ret = 0;

	do {
		s = strchr(s + 1, '/');
		if (s)
			*s = '\0';
		if (*p && mkdir(p, mode) < 0 && errno != EEXIST)
			ret = -1;
		if (s)
			*s = '/';
	} while (s && !ret);
	free(p);
	return ret;
}

bool kcmd_same_file(const char *a, const char *b)
{
	char ca[65536], cb[65536];
	bool same = false;
	FILE *fa = fopen(a, "re"), *fb = fopen(b, "re");

	if (!fa || !fb)
		goto out;
	for (;;) {
		size_t na = fread(ca, 1, sizeof(ca), fa);
		size_t nb = fread(cb, 1, sizeof(cb), fb);

		if (na != nb || memcmp(ca, cb, na))
			break;
		if (na < sizeof(ca)) {
			same = !ferror(fa) && !ferror(fb) && feof(fa) && feof(fb);
			break;
		}
	}
out:
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

int kcmd_copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out;
	char buf[65536];
	size_t n;
	int err = 0;

	if (!in)
		return -1;
	out = fopen(to, "wb");
	if (!out) {
		err = errno;
		fclose(in);
		errno = err;
		return -1;
	}
	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = errno ? errno : EIO;
	if (!err && ferror(in))
		err = errno ? errno : EIO;
	fclose(in);
	if (fclose(out) && !err)
		err = errno ? errno : EIO;
	errno = err;
	return err ? -1 : 0;
}

int kcmd_mkdirs(const char *dir)
{
	return mkdirs_mode(dir, 0755);
}

int kcmd_mkdirs_private(const char *dir)
{
	return mkdirs_mode(dir, 0700);
}

int kcmd_open_private(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, flags | O_CLOEXEC, 0600);

	/* created before (by us, an older ktest, a umask of 022): fix it */
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 077))
		(void)fchmod(fd, st.st_mode & 0700);
	return fd;
}

FILE *kcmd_fopen_private(const char *path, const char *mode)
{
	int flags = O_WRONLY | O_CREAT;
	FILE *f;
	int fd;

	flags |= mode[0] == 'a' ? O_APPEND : O_TRUNC;
	fd = kcmd_open_private(path, flags);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode[0] == 'a' ? "a" : "w");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}
