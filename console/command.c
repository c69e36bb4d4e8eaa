// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command consoles: CONSOLE is a command (`virsh console box`, `nc host
 * port`, `cat /dev/ttyS0`, `ipmitool sol activate`) whose output is the
 * box's console. As in ktest.pl it runs with /bin/sh -c on a pseudo-terminal
 * (many console programs want a terminal), but:
 *
 *  - the pty comes from posix_openpt/grantpt/unlockpt/ptsname, not from
 *    ioctl numbers written into the source;
 *  - the pty is raw (no echo: bytes ktest writes reach the command once and
 *    are not read back as console output; no ^C-to-SIGINT translation), and
 *    ktest's own terminal is never touched;
 *  - the command is a session and process-group leader with the pty as its
 *    controlling terminal, so closing reaches the whole group: pipelines
 *    and children of `sh -c` included. Closing sends CLOSE_CONSOLE_SIGNAL
 *    (default SIGINT) to the group, gives the leader KCON_KILL_GRACE_MS to
 *    exit, then SIGKILLs the group — while the leader is still unreaped, so
 *    its id cannot have been reused — and reaps it. Processes that left the
 *    group (setsid daemons) are out of reach, as they would be for a shell;
 *  - signal dispositions and the mask are reset in the child: a SIGINT
 *    that ktest's parent ignored would otherwise be ignored by the console
 *    command too, and CLOSE_CONSOLE_SIGNAL=INT would do nothing.
 *
 * The parent opens the pty's slave before forking and keeps it until the
 * child has it: a master whose slave was never opened, or is closed for a
 * moment, reads as EIO, which would look like a console that went away.
 * When the command exits, the master reads the rest of its output and then
 * EIO; console.c then runs it again (as `virsh console` has to be after a
 * domain restarts), at most once per second.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "console/console_int.h"

/* A command that exits at once is not run again more often than this. */
#define RESPAWN_MS 1000

struct command {
	char *cmd;
	pid_t pid;		/* the group's leader, 0 when none */
	int pidfd;		/* polls for its exit, -1 when unsupported */
};

static int command_parse(struct kconsole *c, const char *target, char *err,
			 size_t len)
{
	struct command *x = xcalloc(1, sizeof(*x));

	x->pidfd = -1;
	x->cmd = xstrdup(target);
	c->priv = x;
	if (c->close_signal < 0 || c->close_signal >= NSIG) {
		kcon_errf(err, len, "CLOSE_CONSOLE_SIGNAL %d is not a signal",
			  c->close_signal);
		return -1;
	}
	return 0;
}

/* After fork(): only async-signal-safe calls until exec. */
static void __attribute__((noreturn)) run_child(int slave, const char *cmd)
{
	static const char msg[] = "ktest: cannot run /bin/sh for the console\n";
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		_exit(127);
	/* the pty becomes the session's controlling terminal */
	ioctl(slave, TIOCSCTTY, 0);
	/* keep it off 0-2 so the dup2s below cannot clobber it */
	if (slave <= STDERR_FILENO) {
		slave = fcntl(slave, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		if (slave < 0)
			_exit(127);
	}
	if (dup2(slave, STDIN_FILENO) < 0 || dup2(slave, STDOUT_FILENO) < 0 ||
	    dup2(slave, STDERR_FILENO) < 0)
		_exit(127);
	close_range(STDERR_FILENO + 1, ~0U, 0);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/* A raw pty with a sane size; returns the slave, or -1 with err set. */
static int make_pty(struct kconsole *c, int *master_out, char *err, size_t len)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	const char *what = "posix_openpt";
	int master, slave = -1;
	struct termios t;
	char name[64];

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		goto fail;
	what = "grantpt/unlockpt";
	if (grantpt(master) < 0 || unlockpt(master) < 0)
		goto fail;
	what = "ptsname";
	errno = ptsname_r(master, name, sizeof(name));
	if (errno)
		goto fail;
	what = name;
	slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		goto fail;
	what = "setting the pty up";
	if (tcgetattr(slave, &t) < 0)
		goto fail;
	cfmakeraw(&t);
	if (tcsetattr(slave, TCSANOW, &t) < 0 ||
	    ioctl(slave, TIOCSWINSZ, &ws) < 0)
		goto fail;
	*master_out = master;
	return slave;
fail:
	kcon_errf(err, len, "console command '%s': %s: %s",
		  ((struct command *)c->priv)->cmd, what, strerror(errno));
	if (slave >= 0)
		close(slave);
	if (master >= 0)
		close(master);
	return -1;
}

static int command_open(struct kconsole *c, int64_t deadline_ms, char *err,
			size_t len)
{
	struct command *x = c->priv;
	int master, slave, fl;
	pid_t pid;

	(void)deadline_ms;
	slave = make_pty(c, &master, err, len);
	if (slave < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		run_child(slave, x->cmd);
	close(slave);
	if (pid < 0) {
		kcon_errf(err, len, "console command '%s': fork: %s", x->cmd,
			  strerror(errno));
		close(master);
		return -1;
	}
	fl = fcntl(master, F_GETFL);
	fcntl(master, F_SETFL, fl | O_NONBLOCK);
	x->pid = pid;
	x->pidfd = pidfd_open(pid, 0);
	c->fd = master;
	return 0;
}

/* Has the leader exited (without reaping it)? */
static bool exited(struct command *x)
{
	siginfo_t si = { 0 };

	if (waitid(P_PID, (id_t)x->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == ECHILD;		/* reaped by someone else */
	return si.si_pid == x->pid;
}

/* Waits up to ms for the leader to exit. */
static void wait_exit(struct command *x, int ms)
{
	int64_t deadline = kclock_ms() + ms;

	if (x->pidfd >= 0) {
		kcon_poll_one(x->pidfd, POLLIN, deadline);
		return;
	}
	/* kernels before 5.3: look every 10 ms */
	while (!exited(x) && kclock_ms() < deadline)
		kcon_poll_one(-1, 0, kclock_ms() + 10);
}

static void reap(struct command *x)
{
	while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (x->pidfd >= 0)
		close(x->pidfd);
	x->pidfd = -1;
	x->pid = 0;
}

static void command_close(struct kconsole *c)
{
	struct command *x = c->priv;
	int sig = c->close_signal > 0 ? c->close_signal : SIGINT;

	if (x->pid > 0) {
		kill(-x->pid, sig);
		wait_exit(x, KCON_KILL_GRACE_MS);
		/* the stragglers, and the leader if it ignored sig */
		kill(-x->pid, SIGKILL);
		reap(x);
	}
	/* only now: closing first would SIGHUP the group before sig */
	close(c->fd);
	c->fd = -1;
}

static void command_free(struct kconsole *c)
{
	struct command *x = c->priv;

	if (!x)
		return;
	free(x->cmd);
	free(x);
	c->priv = NULL;
}

const struct kcon_ops kcon_command_ops = {
	.name = "command",
	.parse = command_parse,
	.open = command_open,
	.close = command_close,
	.free = command_free,
	.min_reopen_ms = RESPAWN_MS,
};
