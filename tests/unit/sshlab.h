/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ssh lab for tests and benchmarks: a real OpenSSH sshd on 127.0.0.1
 * (tests/lab/sshd.sh) in a scratch directory of its own, with its own host
 * key, client key, known_hosts and empty ssh config. sshlab_start() starts
 * it, sshlab_stop() stops it by pid and removes the directory; a watchdog
 * child does both if the program dies first (a crash, an abort, a kill).
 *
 * A missing sshd is a failure, never a skip: sshlab_start() returns -1 and
 * says why.
 */
#ifndef KTEST_TEST_SSHLAB_H
#define KTEST_TEST_SSHLAB_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/ssh.h"

struct sshlab {
	char dir[PATH_MAX];
	char script[PATH_MAX];
	int port;
	pid_t watchdog;
	int guard;		/* write end of the watchdog's pipe */
	char *user;
	/* for sshlab_opts() */
	char id[PATH_MAX + 16], config[PATH_MAX + 16], kh[PATH_MAX + 16];
};

static inline char *sshlab_path(const struct sshlab *l, const char *name)
{
	return xasprintf("%s/%s", l->dir, name);
}

static int sshlab_watchdog(struct sshlab *l)
{
	int fds[2];
	pid_t pid;

	/* close-on-exec: no other child (sshd above all) may hold it open */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		ssize_t n;

		close(fds[1]);
		/* EOF: the program is gone, however it ended */
		do
			n = read(fds[0], &c, 1);
		while (n > 0 || (n < 0 && errno == EINTR));
		execl("/bin/sh", "sh", "-c",
		      "sh \"$0\" stop \"$1\" && rm -rf \"$1\"",
		      l->script, l->dir, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	l->watchdog = pid;
	l->guard = fds[1];
	return 0;
}

/* Starts the lab; who names the program in messages. */
static int sshlab_start(struct sshlab *l, const char *who)
{
	const char *src = getenv("KTEST_SRC");
	struct passwd *pw = getpwuid(getuid());
	char *rel, *cmd, line[64] = "";
	FILE *p;

	memset(l, 0, sizeof(*l));
	l->guard = -1;
	rel = xasprintf("%s/tests/lab/sshd.sh", src ? src : ".");
	if (!realpath(rel, l->script)) {
		fprintf(stderr, "%s: %s: %s (run from the top of the tree or "
			"set KTEST_SRC)\n", who, rel, strerror(errno));
		free(rel);
		return -1;
	}
	free(rel);
	snprintf(l->dir, sizeof(l->dir), "%s/ktest-lab.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(l->dir) || !pw) {
		fprintf(stderr, "%s: %s: %s\n", who, l->dir, strerror(errno));
		return -1;
	}
	l->user = xstrdup(pw->pw_name);
	/* The watchdog first: it also cleans up after a failed start. */
	if (sshlab_watchdog(l) < 0) {
		fprintf(stderr, "%s: watchdog: %s\n", who, strerror(errno));
		return -1;
	}
	cmd = xasprintf("sh '%s' start '%s'", l->script, l->dir);
	p = popen(cmd, "r");
	free(cmd);
	if (p) {
		if (!fgets(line, sizeof(line), p))
			line[0] = '\0';
		pclose(p);
	}
	l->port = atoi(line);
	if (l->port <= 0) {
		fprintf(stderr, "%s: the lab sshd did not start (is "
			"openssh-server installed? make deps)\n", who);
		return -1;
	}
	snprintf(l->id, sizeof(l->id), "%s/id_ed25519", l->dir);
	snprintf(l->config, sizeof(l->config), "%s/ssh_config", l->dir);
	snprintf(l->kh, sizeof(l->kh), "%s/known_hosts", l->dir);
	/* No agent: what is tried must be exactly what the test gives. */
	unsetenv("SSH_AUTH_SOCK");
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int sshlab_stop(struct sshlab *l)
{
	char *cmd;
	int rc = 0;

	if (l->port > 0) {
		cmd = xasprintf("sh '%s' stop '%s'", l->script, l->dir);
		rc = system(cmd);
		free(cmd);
	}
	if (l->guard >= 0) {
		close(l->guard);	/* the watchdog removes the directory */
		waitpid(l->watchdog, NULL, 0);
	}
	free(l->user);
	l->user = NULL;
	return rc == 0 ? 0 : -1;
}

/* Options that reach the lab with the good key and known host. */
static inline struct kssh_opts sshlab_opts(const struct sshlab *l)
{
	struct kssh_opts o = {
		.host = "127.0.0.1",
		.port = l->port,
		.user = l->user,
		.identity = l->id,
		.config = l->config,
		.known_hosts = l->kh,
		.hostkeys = KSSH_STRICT,
		.connect_timeout_ms = 10000,
	};

	return o;
}

/* ssh(1) / scp(1) options that reach the lab the same way. */
static inline char *sshlab_ssh_args(const struct sshlab *l, bool scp)
{
	return xasprintf("-F %s -i %s -o UserKnownHostsFile=%s "
			 "-o IdentitiesOnly=yes -o BatchMode=yes %s %d",
			 l->config, l->id, l->kh, scp ? "-P" : "-p", l->port);
}

#endif
