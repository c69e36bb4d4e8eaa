/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The test box over ssh, with libssh (no ssh or scp programs): commands with
 * streamed output and their exit status, SFTP uploads that land atomically.
 * Host keys are verified by default: an unknown or changed key is refused
 * with its fingerprint and the exact way to accept it.
 */
#ifndef KTEST_SSH_H
#define KTEST_SSH_H

#include <stdbool.h>
#include <stddef.h>

#include "ktest/cmd.h"		/* kcmd_line_fn */

enum kssh_hostkeys {
	KSSH_STRICT,		/* known and unchanged only (default) */
	KSSH_ACCEPT_NEW,	/* add unknown keys; changed ones are refused */
};

struct kssh_opts {
	const char *host;	/* MACHINE (a ~/.ssh/config Host alias works) */
	int port;		/* 0: from ~/.ssh/config, else 22 */
	const char *user;	/* SSH_USER; NULL: from ~/.ssh/config */
	const char *identity;	/* a private key file; NULL: agent + defaults */
	const char *config;	/* ssh config file; NULL: ~/.ssh/config */
	const char *known_hosts;	/* NULL: ~/.ssh/known_hosts */
	enum kssh_hostkeys hostkeys;
	long connect_timeout_ms;	/* CONNECT_TIMEOUT */
};

enum kssh_fail {
	KSSH_OK,
	KSSH_UNREACHABLE,	/* refused, no route, timed out */
	KSSH_HOSTKEY_UNKNOWN,
	KSSH_HOSTKEY_CHANGED,
	KSSH_AUTH,		/* no key was accepted */
	KSSH_OTHER,
};

struct kssh;

/* Returns NULL with why and the failure class (what to tell the user). */
struct kssh *kssh_connect(const struct kssh_opts *o, enum kssh_fail *fail,
			  char *why, size_t whylen);
void kssh_close(struct kssh *s);
const char *kssh_error(const struct kssh *s);
/* Still connected? (false once the box hung up, e.g. on a reboot) */
bool kssh_alive(const struct kssh *s);

/*
 * Runs cmd on the box, streaming its output (stdout and stderr) line by
 * line, waiting timeout_ms at most (0: no limit). *status: the exit status,
 * or -1 when the command died of a signal or the session broke.
 * Returns 0, or -1 (see kssh_error) when it could not run or timed out.
 */
int kssh_exec(struct kssh *s, const char *cmd, long timeout_ms,
	      kcmd_line_fn on_line, void *ctx, int *status);

/*
 * Copies a local file to path on the box over SFTP: written to a temporary
 * name beside it in chunks of at most 255 KiB, then renamed, so the box
 * never sees half an image. mode: the file mode (0644).
 */
int kssh_upload(struct kssh *s, const char *local, const char *path,
		int mode);

#endif
