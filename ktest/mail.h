/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Mail, as ktest.pl 6.1 sends it: a header file (To:, Subject:, the
 * message) in TMP_DIR, an optional body file (a piece of LOG_FILE), and
 * MAIL_COMMAND, whose default depends on MAILER, run through /bin/sh.
 *
 * What ktest.pl got wrong and this does not: the command template is
 * never changed by a send (ktest.pl substituted into the stored
 * MAIL_COMMAND, so every later mail went out with the first one's subject),
 * the values put into it are quoted for the shell, and the retry without
 * the log calls a routine that exists.
 *
 * The pure parts (the default command, the search for the mailer, the
 * substitution, the span of log to attach) are separate so that they can
 * be tested without sending anything.
 */
#ifndef KTEST_MAIL_H
#define KTEST_MAIL_H

#include <stdbool.h>
#include <stddef.h>

#include "ktest/cmd.h"

/*
 * MAIL_COMMAND's default for mailer ("sendmail", "mail", "mailx"); NULL
 * for a mailer ktest.pl does not know.
 */
const char *kmail_default_command(const char *mailer);

/*
 * The first directory of path (a $PATH value; NULL: none), then /usr/sbin,
 * holding an executable mailer. malloc'd; NULL when there is none.
 */
char *kmail_find(const char *mailer, const char *path);

/* What MAIL_COMMAND's $NAMEs stand for. NULL or "" puts in nothing. */
struct kmail_vars {
	const char *header_file;	/* $HEADER_FILE */
	const char *body_file;		/* $BODY_FILE */
	const char *subject;		/* $SUBJECT */
	const char *mailto;		/* $MAILTO */
	const char *mail_path;		/* $MAIL_PATH */
	const char *mailer;		/* $MAILER */
	const char *message;		/* $MESSAGE */
};

/*
 * tmpl with every $NAME of struct kmail_vars replaced by its value, quoted
 * for the shell. A name already in single quotes ('$SUBJECT', as ktest.pl's
 * own mail command wrote it) loses them: the value brings its own. Other
 * $WORDs are left as they are. Returns a malloc'd string.
 */
char *kmail_expand(const char *tmpl, const struct kmail_vars *v);

/*
 * The part of LOG_FILE to attach: from start (where the test began) to end,
 * but no more than max bytes (MAIL_MAX_SIZE; <= 0: no cap) and then its
 * last ones. Sets *off and *len.
 */
void kmail_log_span(long start, long end, long max, long *off, long *len);

struct kmail_opts {
	const char *mailto;		/* MAILTO: no mail without it */
	const char *mailer;		/* MAILER (NULL: sendmail) */
	const char *mail_path;		/* MAIL_PATH (NULL: searched) */
	const char *command;		/* MAIL_COMMAND (NULL: the default) */
	const char *tmp_dir;		/* TMP_DIR: where the header goes */
	long timeout_ms;		/* for the mail command (0: none) */
	kcmd_line_fn on_line;		/* the command's output (may be NULL) */
	void *ctx;
};

/*
 * Whether o can send: the mailer found (in *path, malloc'd, when path is
 * not NULL) and a command to send with. Returns 0, or -1 with why.
 */
int kmail_check(const struct kmail_opts *o, char **path, char *why,
		size_t len);

/*
 * Sends subject and message to MAILTO, with body_file (may be NULL)
 * attached. When that fails, sends once more without body_file. Returns 0,
 * or -1 with why.
 */
int kmail_send(const struct kmail_opts *o, const char *subject,
	       const char *message, const char *body_file, char *why,
	       size_t len);

#endif
