/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The test box as install and reboot reach it: commands run on it, files
 * copied to it.
 *
 * With ktest.pl's default SSH_EXEC, SCP_TO_TARGET and SCP_TO_TARGET_INSTALL
 * that is libssh (ktest/ssh.h): one session, opened on first use and again
 * after the box hung up (a reboot does that), host keys verified, uploads
 * written to a temporary name and renamed. A config that sets one of them to
 * anything else gets that command run as written through /bin/sh, with
 * ktest.pl's substitutions: $SSH_COMMAND, $SRC_FILE, $DST_FILE, $SSH_USER,
 * $MACHINE (SSH_USER and MACHINE are also in the environment, as ktest.pl
 * exports them).
 *
 * Remote commands are written for the box's shell, once. On the SSH_EXEC
 * path $SSH_COMMAND becomes that command quoted as one shell word, so the
 * host's shell hands ssh exactly one argument and the box's shell reads it
 * as written: what ktest.pl's own '(cd / && tar ...)' quoting did by hand.
 */
#ifndef KTEST_BOX_H
#define KTEST_BOX_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/model.h"
#include "ktest/cmd.h"
#include "ktest/ssh.h"

/* Strings an options struct owns (the config readers fill it). */
struct kstrs {
	char **v;
	size_t n;
};

/* Keeps s (malloc'd, may be NULL) until kstrs_free; returns it. */
char *kstrs_keep(struct kstrs *k, char *s);
void kstrs_free(struct kstrs *k);
/*
 * Option id of test i, kept in k; *out is NULL when it is unset or blank.
 * Returns 0, or -1 after the config reported why.
 */
int kstrs_get(struct kconfig *c, enum kopt_id id, int i, struct kstrs *k,
	      const char **out);

struct kbox_opts {
	struct kssh_opts ssh;		/* libssh: host, port, keys ... */
	const char *machine;		/* MACHINE ($MACHINE, messages) */
	const char *ssh_user;		/* SSH_USER ($SSH_USER) */
	/* NULL: libssh; else the command as the config wrote it */
	const char *ssh_exec;		/* SSH_EXEC */
	const char *scp_to_target;	/* SCP_TO_TARGET (modules) */
	const char *scp_to_target_install;	/* ..._INSTALL (the image) */
	long timeout_ms;		/* RUN_TIMEOUT for those (0: none) */
	kcmd_line_fn on_line;		/* output and progress; may be NULL */
	void *ctx;
	struct kstrs keep;
};

/*
 * The box options of test i: MACHINE, SSH_USER, CONNECT_TIMEOUT,
 * RUN_TIMEOUT, and SSH_EXEC / SCP_TO_TARGET / SCP_TO_TARGET_INSTALL when
 * they are not ktest.pl's defaults. The ssh port, keys and known_hosts come
 * from ~/.ssh/config, as they did for ktest.pl's ssh. Returns 0, or -1
 * after reporting through the config's diagnostics.
 */
int kbox_opts_read(struct kconfig *c, int i, struct kbox_opts *o);
void kbox_opts_release(struct kbox_opts *o);

/*
 * The host command line that runs remote on the box through SSH_EXEC, or
 * NULL when the box is reached with libssh. Pure; malloc'd.
 */
char *kbox_exec_line(const struct kbox_opts *o, const char *remote);

/*
 * The host command line that copies src to dst on the box through
 * SCP_TO_TARGET_INSTALL (install: the image) or SCP_TO_TARGET, or NULL for
 * SFTP. Pure; malloc'd.
 */
char *kbox_copy_line(const struct kbox_opts *o, bool install, const char *src,
		     const char *dst);

/* The env entries (SSH_USER=..., MACHINE=...) legacy commands run with. */
struct kbox_env {
	char *entries[3];
};
void kbox_env_init(struct kbox_env *e, const struct kbox_opts *o);
void kbox_env_free(struct kbox_env *e);

/* $SSH_USER and $MACHINE in a host command, as ktest.pl's run_command. */
char *kbox_subst(const struct kbox_opts *o, const char *cmd);

struct kbox;

/* o must outlive the box. Connects on first use. */
struct kbox *kbox_new(const struct kbox_opts *o);
void kbox_free(struct kbox *b);
const struct kbox_opts *kbox_opts(const struct kbox *b);

/*
 * Runs remote on the box, its output to on_line (NULL: o->on_line).
 * Returns 0 when it ran to an end: *status is its exit status, 255 when the
 * box hung up while it ran (what ssh(1) reports, and what a reboot does),
 * -1 when it died of a signal. Returns -1 when it could not be run or timed
 * out (kbox_error). timeout_ms 0: o->timeout_ms (RUN_TIMEOUT), which may be
 * no limit.
 */
int kbox_exec(struct kbox *b, const char *remote, long timeout_ms,
	      kcmd_line_fn on_line, void *ctx, int *status);

/*
 * A host command (REBOOT, SWITCH_TO_TEST, ...) as ktest.pl's run_command:
 * $SSH_USER and $MACHINE substituted and exported, /bin/sh, output to
 * o->on_line, timeout_ms (0: none). Returns 0 when it exited 0, else -1
 * with why naming opt, the command, how it ended and its last line.
 */
int kbox_run_host(const struct kbox_opts *o, const char *opt, const char *cmd,
		  long timeout_ms, char *why, size_t whylen);

/* Copies src to dst on the box (see kbox_copy_line); mode for SFTP. */
int kbox_copy(struct kbox *b, bool install, const char *src, const char *dst,
	      int mode);

/* Drops the session (after a reboot); the next use connects again. */
void kbox_disconnect(struct kbox *b);

const char *kbox_error(const struct kbox *b);
/* Why the last connection attempt failed (KSSH_OK: it did not). */
enum kssh_fail kbox_ssh_fail(const struct kbox *b);

/* A progress line to o->on_line (printf-like). */
void kbox_say(const struct kbox_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
