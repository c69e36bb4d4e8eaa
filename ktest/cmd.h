/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running host commands (builds, hooks, POWER_CYCLE, TEST, CONSOLE ...):
 * through /bin/sh -c as ktest.pl does, in their own process group, output
 * streamed line by line to the caller, RUN_TIMEOUT enforced by the wall
 * clock whatever the command prints, the whole group killed on timeout.
 */
#ifndef KTEST_CMD_H
#define KTEST_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Called for every output line (stdout and stderr merged, no '\n'). */
typedef void (*kcmd_line_fn)(void *ctx, const char *line, size_t len);

struct kcmd_opts {
	const char *cwd;	/* NULL: stay */
	const char *const *env;	/* extra NAME=VALUE entries, NULL-terminated;
				 * a bare NAME removes NAME */
	long timeout_ms;	/* 0: none (RUN_TIMEOUT) */
	kcmd_line_fn on_line;	/* may be NULL: output dropped */
	void *ctx;
	bool stdin_null;	/* stdin from /dev/null (default: inherited) */
};

struct kcmd_result {
	int status;		/* exit status 0-255, or -1 */
	int signal;		/* the signal that killed it, or 0 */
	bool timed_out;		/* killed because of timeout_ms */
	long elapsed_ms;
};

/*
 * Runs cmd with /bin/sh -c. Returns 0 when it ran (look at r for how it
 * ended), -1 when it could not be started (errno set).
 */
int kcmd_run(const char *cmd, const struct kcmd_opts *o, struct kcmd_result *r);

/* An argv instead of a shell line (no shell involved: for git-derived values). */
int kcmd_runv(const char *const *argv, const struct kcmd_opts *o,
	      struct kcmd_result *r);

/*
 * From a signal handler (async-signal-safe): stops the process group of the
 * command kcmd_run or kcmd_runv is running now (SIGTERM, SIGKILL 2 s
 * later) and waits until it is gone, 4 s at most.
 * Returns 1 when a command was running, 0 when none was. The command's
 * run is not usable after it: the caller _exits.
 */
int kcmd_stop_running(void);

/*
 * From a signal handler (async-signal-safe): sends sig (and SIGCONT) to the
 * process group of the command running now, and returns. The run waits for
 * the command as it would for one that ended by itself. Returns 1 when a
 * command was running, 0 when none was.
 */
int kcmd_signal_running(int sig);

/*
 * What else a caller waits for while its commands run (the boxes of a
 * pool while ktest builds): kcmd_run and kcmd_runv poll fds(), up to
 * KCMD_WATCH_MAX descriptors, beside the command, and call ready() when
 * one of them is readable. While ready() runs, nothing is watched (a
 * command it runs is not watched in turn). NULL: nothing watched.
 */
#define KCMD_WATCH_MAX	16
struct pollfd;
struct kcmd_watch {
	int (*fds)(void *ctx, struct pollfd *p, int max);
	void (*ready)(void *ctx);
	void *ctx;
};
void kcmd_set_watch(const struct kcmd_watch *w);

/*
 * In a process just forked: the parent's command running now and its
 * watch are not this process's (kcmd_stop_running would stop the
 * parent's command). And the orphans of its own commands are its to reap
 * (PR_SET_CHILD_SUBREAPER): stopping its command does not wait for init.
 */
void kcmd_after_fork(void);

/* A one-line description of how it ended: "exit 2", "killed by SIGKILL",
 * "timed out after 600 s". */
const char *kcmd_describe(const struct kcmd_result *r, char *buf, size_t len);

/*
 * ktest.pl's command-time text substitutions: every $NAME in names is
 * replaced by its value (longest names first, no braces). Returns a malloc'd
 * string.
 */
char *kcmd_subst(const char *cmd, const char *const *names,
		 const char *const *values, size_t n);

/* mkdir -p dir (mode 0755): 0, or -1 with errno. */
int kcmd_mkdirs(const char *dir);
/* cp from to, streamed (any size): 0, or -1 with errno. */
int kcmd_copy_file(const char *from, const char *to);
/* Do the two files hold the same bytes? false when either is missing. */
bool kcmd_same_file(const char *a, const char *b);

/*
 * mkdir -p dir, the directories it creates 0700 whatever the umask (the
 * state directory, TMP_DIR, STORE_FAILURES): 0, or -1 with errno.
 */
int kcmd_mkdirs_private(const char *dir);

/*
 * fopen(path, mode) ("w", "a"; "e" is implied) for a file only its owner
 * may read: created 0600 whatever the umask, and an existing file of ours
 * that others could read loses their bits. Logs, journal, report.
 */
FILE *kcmd_fopen_private(const char *path, const char *mode);

/* open(path, flags | O_CLOEXEC, 0600), made private as above. */
int kcmd_open_private(const char *path, int flags);

/* Quotes s for /bin/sh (single quotes), for values that come from git. */
char *kcmd_quote(const char *s);

/*
 * s with the secrets a command line may carry masked as "***", for what
 * ktest writes down (LOG_FILE, stdout, journal, report, mail): the password
 * of a URL (scheme://user:PASS@), the value after -P, --password, --passwd,
 * --pass, --token or --secret (as a next word or after '='), after
 * "sshpass -p", and of NAME=VALUE when NAME holds PASS, SECRET or TOKEN
 * (any case). Returns a malloc'd string.
 */
char *kcmd_redact(const char *s);

/* kcmd_redact into buf itself (cut to len if the mask is longer). */
void kcmd_redact_buf(char *buf, size_t len);

#endif
