// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mail as ktest.pl sends it (see mail.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/mail.h"

/*
 * ktest.pl wrote -s '$SUBJECT'; the values come quoted here, so the
 * template does not quote them again.
 */
const char *kmail_default_command(const char *mailer)
{
	if (!mailer)
		mailer = "sendmail";
	if (!strcmp(mailer, "mail") || !strcmp(mailer, "mailx"))
		return "cat $HEADER_FILE $BODY_FILE | $MAIL_PATH/$MAILER -s $SUBJECT $MAILTO";
	if (!strcmp(mailer, "sendmail"))
		return "cat $HEADER_FILE $BODY_FILE | $MAIL_PATH/$MAILER -t $MAILTO";
	return NULL;
}

static bool executable(const char *dir, size_t n, const char *mailer)
{
	char *p = xasprintf("%.*s/%s", (int)n, dir, mailer);
	bool ok = access(p, X_OK) == 0;

	free(p);
	return ok;
}

/* sendmail is usually in /usr/sbin, which a user's PATH may lack */
char *kmail_find(const char *mailer, const char *path)
{
	const char *p = path;

	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n && executable(p, n, mailer))
			return xstrndup(p, n);
		p += n;
		if (*p == ':')
			p++;
	}
	if (executable("/usr/sbin", 9, mailer))
		return xstrdup("/usr/sbin");
	return NULL;
}

static const char *var_value(const struct kmail_vars *v, const char *name,
			     size_t n, bool *known)
{
	static const struct {
		const char *name;
		size_t off;
	} t[] = {
		{ "HEADER_FILE", offsetof(struct kmail_vars, header_file) },
		{ "BODY_FILE", offsetof(struct kmail_vars, body_file) },
		{ "SUBJECT", offsetof(struct kmail_vars, subject) },
		{ "MAILTO", offsetof(struct kmail_vars, mailto) },
		{ "MAIL_PATH", offsetof(struct kmail_vars, mail_path) },
		{ "MAILER", offsetof(struct kmail_vars, mailer) },
		{ "MESSAGE", offsetof(struct kmail_vars, message) },
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(*t); k++) {
		if (strlen(t[k].name) == n && !strncmp(t[k].name, name, n)) {
			*known = true;
			return *(const char *const *)((const char *)v + t[k].off);
		}
	}
	*known = false;
	return NULL;
}

/*
 * A value is one shell word whatever the template puts around it: the
 * template's quoting is followed (outside quotes, in '...' and in "...")
 * so that a quote, $(...) or `...` in a value (a commit subject in
 * $MESSAGE) stays text.
 */
char *kmail_expand(const char *tmpl, const struct kmail_vars *v)
{
	enum { BARE, SQ, DQ } in = BARE;
	struct sbuf b;
	const char *p = tmpl;

	sbuf_init(&b);
	while (*p) {
		const char *name, *val;
		bool known, quoted;
		size_t n;

		if (*p != '$') {
			if (*p == '\\' && in != SQ && p[1]) {
				sbuf_addn(&b, p, 2);
				p += 2;
				continue;
			}
			if (*p == '\'' && in != DQ)
				in = in == SQ ? BARE : SQ;
			else if (*p == '"' && in != SQ)
				in = in == DQ ? BARE : DQ;
			sbuf_addc(&b, *p++);
			continue;
		}
		name = p + 1;
		for (n = 0; isalnum((unsigned char)name[n]) || name[n] == '_'; n++)
			;
		val = var_value(v, name, n, &known);
		if (!known) {
			sbuf_addn(&b, p, n + 1);
			p = name + n;
			continue;
		}
		/* '$SUBJECT': the quotes go, the quoted value stands alone */
		quoted = in == SQ && b.len && b.buf[b.len - 1] == '\'' &&
			 name[n] == '\'';
		if (quoted) {
			b.buf[--b.len] = '\0';
			in = BARE;
		}
		if (in == SQ) {
			/* inside '...': only a quote needs care */
			for (const char *c = val ? val : ""; *c; c++) {
				if (*c == '\'')
					sbuf_adds(&b, "'\\''");
				else
					sbuf_addc(&b, *c);
			}
		} else if (val && *val) {
			char *q = kcmd_quote(val);

			/* inside "...": close, the quoted word, reopen */
			if (in == DQ)
				sbuf_addc(&b, '"');
			sbuf_adds(&b, q);
			if (in == DQ)
				sbuf_addc(&b, '"');
			free(q);
		} else if (quoted) {
			sbuf_adds(&b, "''");
		}
		p = name + n + (quoted ? 1 : 0);
	}
	return sbuf_detach(&b);
}

void kmail_log_span(long start, long end, long max, long *off, long *len)
{
	long size = end - start;

	/* the log was cleared under us: take it from the top */
	if (start < 0 || size < 0)
		size = end > 0 ? end : 0;
	if (max > 0 && size > max)
		size = max;
	*off = end - size;
	*len = size;
}

int kmail_check(const struct kmail_opts *o, char **path, char *why,
		size_t len)
{
	const char *mailer = o->mailer && *o->mailer ? o->mailer : "sendmail";
	char *dir = NULL;

	if (path)
		*path = NULL;
	if ((!o->command || !*o->command) && !kmail_default_command(mailer)) {
		snprintf(why, len, "MAILER %s is not supported: use sendmail, mail or mailx, or set MAIL_COMMAND",
			 mailer);
		return -1;
	}
	if (o->mail_path && *o->mail_path) {
		/* a MAIL_COMMAND of one's own may not use $MAILER at all */
		if ((!o->command || !*o->command) &&
		    !executable(o->mail_path, strlen(o->mail_path), mailer)) {
			snprintf(why, len, "MAILER %s is not an executable in MAIL_PATH %s",
				 mailer, o->mail_path);
			return -1;
		}
		dir = xstrdup(o->mail_path);
	} else {
		dir = kmail_find(mailer, getenv("PATH"));
		if (!dir) {
			snprintf(why, len, "cannot find MAILER %s in PATH or /usr/sbin (set MAIL_PATH)",
				 mailer);
			return -1;
		}
	}
	if (path)
		*path = dir;
	else
		free(dir);
	return 0;
}

static int write_header(const char *path, const char *mailto,
			const char *subject, const char *message)
{
	FILE *f = kcmd_fopen_private(path, "w");
	int ret;

	if (!f)
		return -1;
	fprintf(f, "To: %s\nSubject: %s\n\n%s\n", mailto, subject, message);
	ret = ferror(f) ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static int send_once(const struct kmail_opts *o, const char *dir,
		     const char *subject, const char *message,
		     const char *body_file, char *why, size_t len)
{
	const char *mailer = o->mailer && *o->mailer ? o->mailer : "sendmail";
	const char *tmpl = o->command && *o->command ? o->command :
		kmail_default_command(mailer);
	struct kcmd_opts co = { .timeout_ms = o->timeout_ms,
				.on_line = o->on_line, .ctx = o->ctx,
				.stdin_null = true };
	struct kmail_vars v;
	struct kcmd_result res;
	char *header, *cmd, how[128];
	int ret = 0;

	header = xasprintf("%s/header", o->tmp_dir && *o->tmp_dir ?
			   o->tmp_dir : "/tmp");
	if (write_header(header, o->mailto, subject, message)) {
		snprintf(why, len, "cannot write %s: %s", header, strerror(errno));
		free(header);
		return -1;
	}
	v = (struct kmail_vars){
		.header_file = header, .body_file = body_file,
		.subject = subject, .mailto = o->mailto, .mail_path = dir,
		.mailer = mailer, .message = message,
	};
	/* a fresh copy every time: the template itself never changes */
	cmd = kmail_expand(tmpl, &v);
	if (o->on_line) {
		char *line = xasprintf("Sending mail: %s", cmd);

		o->on_line(o->ctx, line, strlen(line));
		free(line);
	}
	if (kcmd_run(cmd, &co, &res)) {
		snprintf(why, len, "cannot run the mail command (MAILER %s): %s",
			 mailer, strerror(errno));
		ret = -1;
	} else if (res.status || res.signal || res.timed_out) {
		snprintf(why, len, "the mail command (MAILER %s) failed: %s",
			 mailer, kcmd_describe(&res, how, sizeof(how)));
		ret = -1;
	}
	free(cmd);
	free(header);
	return ret;
}

int kmail_send(const struct kmail_opts *o, const char *subject,
	       const char *message, const char *body_file, char *why,
	       size_t len)
{
	char *dir, *retry;
	int ret;

	if (!o->mailto || !*o->mailto) {
		snprintf(why, len, "MAILTO is not set");
		return -1;
	}
	if (kmail_check(o, &dir, why, len))
		return -1;
	ret = send_once(o, dir, subject, message, body_file, why, len);
	if (ret && body_file && *body_file) {
		/* maybe the log was too much for it: try without */
		retry = xasprintf("%s\n\n*** FAILED TO SEND LOG ***\n\n", message);
		ret = send_once(o, dir, subject, retry, NULL, why, len);
		free(retry);
	}
	free(dir);
	return ret;
}
