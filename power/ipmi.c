// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPMI power driver: the box's BMC through ipmitool, as an argv (no
 * shell):
 *
 *	ipmitool -I lanplus -H HOST -p PORT [-U USER] [-C CIPHER]
 *		 [-E | -f FILE] chassis power {on,off,cycle,status}
 *
 * The password is never on ipmitool's command line (ps shows that to every
 * user): with IPMI_PASSWORD it goes in ipmitool's environment (-E reads
 * IPMI_PASSWORD), with IPMI_PASSWORD_FILE ipmitool reads the file (-f). No
 * message names it: ipmitool does not print it, and what it prints is
 * masked like every other command's output (kcmd_redact).
 *
 * cycle() asks the status first: a BMC refuses "power cycle" on a chassis
 * that is off (IPMI 2.0, 28.3), so an off chassis gets "power on". Each
 * ipmitool run is bounded by timeout_ms; ipmitool itself gives up on a BMC
 * that does not answer after its own retries (about 10 s).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "power/power.h"

#define OUTPUT_KEEP 1024

struct ipmi {
	char *host;
	char *port;
	char *user;
	char *password;
	char *password_file;
	char *cipher;
	char *ipmitool;
	long timeout_ms;
};

/* kcmd_line_fn: the first OUTPUT_KEEP bytes, lines joined by " | " */
static void keep_line(void *ctx, const char *line, size_t len)
{
	struct sbuf *out = ctx;

	if (!len || out->len >= OUTPUT_KEEP)
		return;
	if (out->len)
		sbuf_adds(out, " | ");
	sbuf_addn(out, line, len < OUTPUT_KEEP ? len : OUTPUT_KEEP);
}

/* argv for "chassis power what"; returns the count */
static size_t build_argv(const struct ipmi *m, const char *what,
			 const char **argv)
{
	size_t n = 0;

	argv[n++] = m->ipmitool;
	argv[n++] = "-I";
	argv[n++] = "lanplus";
	argv[n++] = "-H";
	argv[n++] = m->host;
	argv[n++] = "-p";
	argv[n++] = m->port;
	if (m->user) {
		argv[n++] = "-U";
		argv[n++] = m->user;
	}
	if (m->cipher) {
		argv[n++] = "-C";
		argv[n++] = m->cipher;
	}
	if (m->password_file) {
		argv[n++] = "-f";
		argv[n++] = m->password_file;
	} else if (m->password) {
		argv[n++] = "-E";
	}
	argv[n++] = "chassis";
	argv[n++] = "power";
	argv[n++] = what;
	argv[n] = NULL;
	return n;
}

/*
 * ipmitool ... chassis power what; 0 on exit 0 (its output in *out), else
 * -1 with p->err naming the BMC, the user and how it ended.
 */
static int ipmitool(struct kpower *p, const char *what, struct sbuf *out)
{
	struct ipmi *m = p->priv;
	const char *argv[24];
	struct sbuf env;
	const char *envv[2] = { NULL, NULL };
	struct kcmd_opts o = {
		.timeout_ms = m->timeout_ms,
		.on_line = keep_line,
		.ctx = out,
		.stdin_null = true,
		.env = envv,
	};
	struct kcmd_result r;
	char how[64], head[320], hint[200] = "";
	int ret = -1;

	sbuf_init(&env);
	build_argv(m, what, argv);
	if (m->password && !m->password_file) {
		sbuf_addf(&env, "IPMI_PASSWORD=%s", m->password);
		envv[0] = sbuf_str(&env);
	} else {
		envv[0] = "IPMI_PASSWORD";	/* not ours: none */
	}
	snprintf(head, sizeof(head),
		 "IPMI: ipmitool chassis power %s, BMC %s port %s, user '%s'",
		 what, m->host, m->port, m->user ? m->user : "");
	if (kcmd_runv(argv, &o, &r) < 0) {
		snprintf(p->err, sizeof(p->err),
			 "%s: cannot run %s: %s (is ipmitool installed?)", head,
			 m->ipmitool, strerror(errno));
		goto out;
	}
	if (!r.timed_out && !r.signal && r.status == 0) {
		p->err[0] = '\0';
		ret = 0;
		goto out;
	}
	if (r.status == 127 && !r.signal && !r.timed_out)	/* no exec */
		snprintf(hint, sizeof(hint), " (cannot run %.150s: is ipmitool installed?)",
			 m->ipmitool);
	else if (r.status == 1 && strstr(sbuf_str(out), "session"))
		snprintf(hint, sizeof(hint), " (check IPMI_USER and the password, IPMI_HOST and IPMI_PORT)");
	/* bounded parts: 120 + 2 + 100 + 2 + 160 + 110 < sizeof(p->err) */
	snprintf(p->err, sizeof(p->err), "%.120s: %.100s%s%.160s%.110s", head,
		 kcmd_describe(&r, how, sizeof(how)),
		 out->len ? ": " : "", sbuf_str(out), hint);
	kcmd_redact_buf(p->err, sizeof(p->err));
out:
	/* the password leaves no copy behind in freed memory */
	if (env.buf)
		memset(env.buf, 0, env.len);
	sbuf_free(&env);
	return ret;
}

static int run(struct kpower *p, const char *what)
{
	struct sbuf out;
	int ret;

	sbuf_init(&out);
	ret = ipmitool(p, what, &out);
	sbuf_free(&out);
	return ret;
}

static int ipmi_on(struct kpower *p)
{
	return run(p, "on");
}

static int ipmi_off(struct kpower *p)
{
	return run(p, "off");
}

/* "Chassis Power is on" */
static enum kpower_state parse_status(const char *s)
{
	if (strstr(s, "Power is on"))
		return KPOWER_ON;
	if (strstr(s, "Power is off"))
		return KPOWER_OFF;
	return KPOWER_UNKNOWN;
}

static enum kpower_state ipmi_state(struct kpower *p)
{
	struct sbuf out;
	enum kpower_state st = KPOWER_UNKNOWN;

	sbuf_init(&out);
	if (!ipmitool(p, "status", &out))
		st = parse_status(sbuf_str(&out));
	sbuf_free(&out);
	return st;
}

static int ipmi_cycle(struct kpower *p)
{
	struct sbuf out;
	enum kpower_state st;
	int ret;

	sbuf_init(&out);
	ret = ipmitool(p, "status", &out);
	st = parse_status(sbuf_str(&out));
	sbuf_free(&out);
	if (ret)
		return -1;
	return run(p, st == KPOWER_OFF ? "on" : "cycle");
}

static void wipe_free(char *s)
{
	if (s)
		memset(s, 0, strlen(s));
	free(s);
}

static void ipmi_free(struct kpower *p)
{
	struct ipmi *m = p->priv;

	if (!m)
		return;
	free(m->host);
	free(m->port);
	free(m->user);
	wipe_free(m->password);
	free(m->password_file);
	free(m->cipher);
	free(m->ipmitool);
	free(m);
	p->priv = NULL;
}

static const struct kpower_driver ipmi_driver = {
	.name = "ipmi",
	.on = ipmi_on,
	.off = ipmi_off,
	.cycle = ipmi_cycle,
	.state = ipmi_state,
	.free = ipmi_free,
};

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

struct kpower *kpower_ipmi_new(const struct kipmi_opts *o)
{
	struct kpower *p = xcalloc(1, sizeof(*p));
	struct ipmi *m = xcalloc(1, sizeof(*m));
	char num[16];

	m->host = xstrdup(o->host ? o->host : "");
	snprintf(num, sizeof(num), "%d", o->port > 0 ? o->port : 623);
	m->port = xstrdup(num);
	m->user = dup_or_null(o->user);
	m->password = dup_or_null(o->password);
	m->password_file = dup_or_null(o->password_file);
	if (o->cipher >= 0) {
		snprintf(num, sizeof(num), "%d", o->cipher);
		m->cipher = xstrdup(num);
	}
	m->ipmitool = xstrdup(o->ipmitool && *o->ipmitool ? o->ipmitool :
			      "ipmitool");
	m->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 300000;
	p->drv = &ipmi_driver;
	p->priv = m;
	return p;
}
