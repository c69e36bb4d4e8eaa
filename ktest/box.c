// SPDX-License-Identifier: GPL-2.0-only
/*
 * The test box: libssh, or the config's own SSH_EXEC / SCP_TO_TARGET
 * commands (see box.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "conf/text.h"
#include "ktest/box.h"

struct kbox {
	const struct kbox_opts *o;
	struct kssh *s;
	enum kssh_fail fail;
	char err[4096];
};

char *kstrs_keep(struct kstrs *k, char *s)
{
	if (!s)
		return NULL;
	k->v = xrealloc(k->v, (k->n + 1) * sizeof(*k->v));
	k->v[k->n++] = s;
	return s;
}

void kstrs_free(struct kstrs *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

void kbox_say(const struct kbox_opts *o, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	if (!o->on_line)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	o->on_line(o->ctx, buf, (size_t)n);
}

static void seterr(struct kbox *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void seterr(struct kbox *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
}

/* ---- the config ---- */

int kstrs_get(struct kconfig *c, enum kopt_id id, int i, struct kstrs *k,
	      const char **out)
{
	char *v;

	if (kconfig_get(c, id, i, &v, NULL))
		return -1;
	if (v && ktext_blank(v)) {
		free(v);
		v = NULL;
	}
	*out = kstrs_keep(k, v);
	return 0;
}

/* A ktest.pl default command is a job libssh does: NULL then. */
static const char *unless_default(const char *v, enum kopt_id def)
{
	return v && strcmp(v, kopt_table[def].def) ? v : NULL;
}

int kbox_opts_read(struct kconfig *c, int i, struct kbox_opts *o)
{
	const char *v;
	long secs;

	memset(o, 0, sizeof(*o));
	o->ssh.hostkeys = KSSH_STRICT;
	if (kstrs_get(c, KOPT_MACHINE, i, &o->keep, &o->machine) ||
	    kstrs_get(c, KOPT_SSH_USER, i, &o->keep, &o->ssh_user))
		goto fail;
	o->ssh.host = o->machine;
	o->ssh.user = o->ssh_user;
	/* SSH_CONFIG: another client config than ~/.ssh/config (which
	 * libssh, like ssh(1), finds through the password database) */
	if (kstrs_get(c, KOPT_SSH_CONFIG, i, &o->keep, &o->ssh.config))
		goto fail;
	if (kconfig_get_int(c, KOPT_CONNECT_TIMEOUT, i, 25, &secs))
		goto fail;
	o->ssh.connect_timeout_ms = secs > 0 ? secs * 1000 : 0;
	if (kconfig_get_int(c, KOPT_RUN_TIMEOUT, i, 0, &secs))
		goto fail;
	o->timeout_ms = secs > 0 ? secs * 1000 : 0;

	if (kstrs_get(c, KOPT_SSH_EXEC, i, &o->keep, &v))
		goto fail;
	o->ssh_exec = unless_default(v, KOPT_SSH_EXEC);
	if (kstrs_get(c, KOPT_SCP_TO_TARGET, i, &o->keep, &v))
		goto fail;
	o->scp_to_target = unless_default(v, KOPT_SCP_TO_TARGET);
	/* its default is ${SCP_TO_TARGET}: compare what that gives */
	if (kstrs_get(c, KOPT_SCP_TO_TARGET_INSTALL, i, &o->keep, &v))
		goto fail;
	o->scp_to_target_install = unless_default(v, KOPT_SCP_TO_TARGET);
	return 0;
fail:
	kbox_opts_release(o);
	return -1;
}

void kbox_opts_release(struct kbox_opts *o)
{
	kstrs_free(&o->keep);
}

/* ---- the command lines (pure) ---- */

char *kbox_subst(const struct kbox_opts *o, const char *cmd)
{
	static const char *const names[] = { "SSH_USER", "MACHINE" };
	const char *values[] = { o->ssh_user, o->machine };

	return kcmd_subst(cmd, names, values, 2);
}

char *kbox_exec_line(const struct kbox_opts *o, const char *remote)
{
	static const char *const names[] = {
		"SSH_COMMAND", "SSH_USER", "MACHINE",
	};
	const char *values[3];
	char *q, *line;

	if (!o->ssh_exec)
		return NULL;
	q = kcmd_quote(remote);
	values[0] = q;
	values[1] = o->ssh_user;
	values[2] = o->machine;
	line = kcmd_subst(o->ssh_exec, names, values, 3);
	free(q);
	return line;
}

char *kbox_copy_line(const struct kbox_opts *o, bool install, const char *src,
		     const char *dst)
{
	static const char *const names[] = {
		"SRC_FILE", "DST_FILE", "SSH_USER", "MACHINE",
	};
	const char *cmd = install ? o->scp_to_target_install :
			  o->scp_to_target;
	const char *values[4];
	char *qs, *qd, *line;

	if (!cmd)
		return NULL;
	qs = kcmd_quote(src);
	qd = kcmd_quote(dst);
	values[0] = qs;
	values[1] = qd;
	values[2] = o->ssh_user;
	values[3] = o->machine;
	line = kcmd_subst(cmd, names, values, 4);
	free(qs);
	free(qd);
	return line;
}

void kbox_env_init(struct kbox_env *e, const struct kbox_opts *o)
{
	size_t n = 0;

	memset(e, 0, sizeof(*e));
	if (o->ssh_user)
		e->entries[n++] = xasprintf("SSH_USER=%s", o->ssh_user);
	if (o->machine)
		e->entries[n++] = xasprintf("MACHINE=%s", o->machine);
}

void kbox_env_free(struct kbox_env *e)
{
	for (size_t i = 0; i < 2; i++)
		free(e->entries[i]);
	memset(e, 0, sizeof(*e));
}

/* ---- doing it ---- */

struct kbox *kbox_new(const struct kbox_opts *o)
{
	struct kbox *b = xcalloc(1, sizeof(*b));

	b->o = o;
	return b;
}

void kbox_free(struct kbox *b)
{
	if (!b)
		return;
	kssh_close(b->s);
	free(b);
}

const struct kbox_opts *kbox_opts(const struct kbox *b)
{
	return b->o;
}

const char *kbox_error(const struct kbox *b)
{
	return b->err;
}

enum kssh_fail kbox_ssh_fail(const struct kbox *b)
{
	return b->fail;
}

void kbox_disconnect(struct kbox *b)
{
	kssh_close(b->s);
	b->s = NULL;
}

static int box_connect(struct kbox *b)
{
	char why[2048];

	if (b->s && kssh_alive(b->s))
		return 0;
	kbox_disconnect(b);
	b->fail = KSSH_OK;
	if (!b->o->ssh.host || !*b->o->ssh.host) {
		b->fail = KSSH_OTHER;
		seterr(b, "MACHINE is not set: ktest cannot reach the test box");
		return -1;
	}
	b->s = kssh_connect(&b->o->ssh, &b->fail, why, sizeof(why));
	if (!b->s) {
		seterr(b, "ssh to the test box (MACHINE = %s): %s",
		       b->o->ssh.host, why);
		return -1;
	}
	return 0;
}

/* Output goes on; the last line is kept for messages. */
struct tee {
	kcmd_line_fn fn;
	void *ctx;
	char last[512];
};

static void tee_line(void *ctx, const char *line, size_t len)
{
	struct tee *t = ctx;

	if (t->fn)
		t->fn(t->ctx, line, len);
	/* make's "make: *** [Makefile:2: x] Error 2" says less than the
	 * line before it */
	if (len && !(t->last[0] && len > 4 && !memcmp(line, "make", 4) &&
		     memmem(line, len, ": *** ", 6))) {
		if (len >= sizeof(t->last))
			len = sizeof(t->last) - 1;
		memcpy(t->last, line, len);
		t->last[len] = '\0';
	}
}

/*
 * A host command line, already substituted: 0 when it ran (*status: its
 * exit status, -1 for a signal), -1 when it could not start or timed out.
 */
static int run_line(const struct kbox_opts *o, const char *opt,
		    const char *line, long timeout_ms, kcmd_line_fn on_line,
		    void *ctx, int *status, char *why, size_t whylen)
{
	struct tee t = { .fn = on_line, .ctx = ctx };
	struct kbox_env env;
	struct kcmd_opts ko = {
		.timeout_ms = timeout_ms,
		.on_line = tee_line,
		.ctx = &t,
		.stdin_null = true,
	};
	struct kcmd_result r;
	char how[64];
	int ret = -1;

	*status = -1;
	kbox_env_init(&env, o);
	ko.env = (const char *const *)env.entries;
	kbox_say(o, "%s", line);
	if (kcmd_run(line, &ko, &r) < 0) {
		snprintf(why, whylen, "%s: cannot run '%s': %s", opt, line,
			 strerror(errno));
	} else if (r.timed_out) {
		snprintf(why, whylen, "%s: '%s' %s%s%s", opt, line,
			 kcmd_describe(&r, how, sizeof(how)),
			 t.last[0] ? ": " : "", t.last);
	} else {
		*status = r.signal ? -1 : r.status;
		if (*status)
			snprintf(why, whylen, "%s: '%s' failed (%s)%s%s", opt,
				 line, kcmd_describe(&r, how, sizeof(how)),
				 t.last[0] ? ": " : "", t.last);
		ret = 0;
	}
	kbox_env_free(&env);
	return ret;
}

int kbox_run_host(const struct kbox_opts *o, const char *opt, const char *cmd,
		  long timeout_ms, char *why, size_t whylen)
{
	char *line = kbox_subst(o, cmd);
	int status, ret;

	why[0] = '\0';
	ret = run_line(o, opt, line, timeout_ms, o->on_line, o->ctx, &status,
		       why, whylen);
	free(line);
	return ret == 0 && status == 0 ? 0 : -1;
}

int kbox_exec(struct kbox *b, const char *remote, long timeout_ms,
	      kcmd_line_fn on_line, void *ctx, int *status)
{
	const struct kbox_opts *o = b->o;
	char *line = kbox_exec_line(o, remote);
	int st = -1, ret;

	*status = -1;
	b->err[0] = '\0';
	if (!on_line) {
		on_line = o->on_line;
		ctx = o->ctx;
	}
	if (timeout_ms <= 0)
		timeout_ms = o->timeout_ms;
	if (line) {
		ret = run_line(o, "SSH_EXEC", line, timeout_ms, on_line, ctx,
			       status, b->err, sizeof(b->err));
		free(line);
		return ret;
	}
	if (box_connect(b) < 0)
		return -1;
	kbox_say(o, "ssh %s: %s", o->ssh.host, remote);
	if (kssh_exec(b->s, remote, timeout_ms, on_line, ctx, &st) == 0) {
		*status = st;
		if (st)
			seterr(b, "'%s' on %s failed (%s %d)%s%s", remote,
			       o->ssh.host, st < 0 ? "status" : "exit", st,
			       kssh_error(b->s)[0] ? ": " : "",
			       kssh_error(b->s));
		return 0;
	}
	seterr(b, "%s", kssh_error(b->s));
	if (!kssh_alive(b->s)) {
		/* the box hung up while it ran: ssh(1) says 255 */
		kbox_disconnect(b);
		*status = 255;
		return 0;
	}
	return -1;
}

int kbox_copy(struct kbox *b, bool install, const char *src, const char *dst,
	      int mode)
{
	const struct kbox_opts *o = b->o;
	char *line = kbox_copy_line(o, install, src, dst);
	int st = -1, ret;

	b->err[0] = '\0';
	if (line) {
		ret = run_line(o, install ? "SCP_TO_TARGET_INSTALL" :
			       "SCP_TO_TARGET", line, o->timeout_ms, o->on_line,
			       o->ctx, &st, b->err, sizeof(b->err));
		free(line);
		return ret == 0 && st == 0 ? 0 : -1;
	}
	if (box_connect(b) < 0)
		return -1;
	kbox_say(o, "upload %s to %s:%s", src, o->ssh.host, dst);
	if (kssh_upload(b->s, src, dst, mode) < 0) {
		seterr(b, "%s", kssh_error(b->s));
		if (!kssh_alive(b->s))
			kbox_disconnect(b);
		return -1;
	}
	return 0;
}
