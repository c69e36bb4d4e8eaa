// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command power driver: POWER_CYCLE and POWER_OFF as ktest.pl runs them
 * (/bin/sh -c), through kcmd_run(), so each runs in its own process group
 * under a wall-clock timeout and the whole group is killed when it hangs: a
 * PDU script stuck on a dead network must not stall a bisect forever.
 *
 * "on" is POWER_CYCLE: ktest.pl has no separate power-on command, and a
 * cycle leaves a box on whatever state it was in. "state" is unknown:
 * a command cannot be asked.
 *
 * A failure's message names the option, the command, how it ended and the
 * end of its output (stdout and stderr), which is where PDU tools say why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "power/power.h"

/* How much of a command's output is kept for the message. */
#define OUTPUT_KEEP 4096

struct power_cmd {
	char *cycle;
	char *off;
	long timeout_ms;
};

/* kcmd_line_fn: keeps the last OUTPUT_KEEP bytes, lines joined by " | ". */
static void keep_line(void *ctx, const char *line, size_t len)
{
	struct sbuf *out = ctx;

	if (!len)
		return;
	if (out->len)
		sbuf_adds(out, " | ");
	sbuf_addn(out, line, len);
	if (out->len > 2 * OUTPUT_KEEP) {
		memmove(out->buf, out->buf + out->len - OUTPUT_KEEP, OUTPUT_KEEP);
		out->len = OUTPUT_KEEP;
		out->buf[out->len] = '\0';
	}
}

/* "0.3 s", "600 s" */
static const char *seconds(long ms, char *buf, size_t len)
{
	if (ms < 10000)
		snprintf(buf, len, "%.1f s", (double)ms / 1000.0);
	else
		snprintf(buf, len, "%ld s", ms / 1000);
	return buf;
}

/* p->err = head + "; output: " + as much of the output's end as fits */
static void say_failed(struct kpower *p, const char *head,
		       const struct sbuf *out)
{
	static const char sep[] = "; output: ...";
	size_t room, hl = strlen(head);

	if (!out->len || hl + sizeof(sep) >= sizeof(p->err)) {
		snprintf(p->err, sizeof(p->err), "%s", head);
		return;
	}
	room = sizeof(p->err) - hl - sizeof(sep);
	if (out->len <= room)
		snprintf(p->err, sizeof(p->err), "%s; output: %s", head,
			 out->buf);
	else
		snprintf(p->err, sizeof(p->err), "%s%s%s", head, sep,
			 out->buf + out->len - room);
}

static int run(struct kpower *p, const char *opt, const char *cmd)
{
	struct power_cmd *pc = p->priv;
	struct sbuf out;
	struct kcmd_opts o = {
		.timeout_ms = pc->timeout_ms,
		.on_line = keep_line,
		.ctx = &out,
		.stdin_null = true,
	};
	struct kcmd_result r;
	char head[320], how[64], t[32];

	if (!cmd || !*cmd) {
		snprintf(p->err, sizeof(p->err), "%s is not set", opt);
		return -1;
	}
	sbuf_init(&out);
	if (kcmd_run(cmd, &o, &r) < 0) {
		snprintf(p->err, sizeof(p->err), "%s '%.200s': cannot start it: %s",
			 opt, cmd, strerror(errno));
		goto fail;
	}
	if (!r.timed_out && !r.signal && r.status == 0) {
		sbuf_free(&out);
		p->err[0] = '\0';
		return 0;
	}
	if (r.timed_out)
		snprintf(how, sizeof(how), "timed out after %s and was killed",
			 seconds(pc->timeout_ms, t, sizeof(t)));
	else
		snprintf(how, sizeof(how), "failed: %s",
			 kcmd_describe(&r, t, sizeof(t)));
	snprintf(head, sizeof(head), "%s '%.200s' %s", opt, cmd, how);
	say_failed(p, head, &out);
fail:
	sbuf_free(&out);
	return -1;
}

static int cmd_cycle(struct kpower *p)
{
	return run(p, "POWER_CYCLE", ((struct power_cmd *)p->priv)->cycle);
}

static int cmd_off(struct kpower *p)
{
	return run(p, "POWER_OFF", ((struct power_cmd *)p->priv)->off);
}

static enum kpower_state cmd_state(struct kpower *p)
{
	(void)p;
	return KPOWER_UNKNOWN;
}

static void cmd_free(struct kpower *p)
{
	struct power_cmd *pc = p->priv;

	if (!pc)
		return;
	free(pc->cycle);
	free(pc->off);
	free(pc);
	p->priv = NULL;
}

static const struct kpower_driver command_driver = {
	.name = "command",
	.on = cmd_cycle,
	.off = cmd_off,
	.cycle = cmd_cycle,
	.state = cmd_state,
	.free = cmd_free,
};

struct kpower *kpower_command_new(const char *cycle_cmd, const char *off_cmd,
				  long timeout_ms)
{
	struct kpower *p = xcalloc(1, sizeof(*p));
	struct power_cmd *pc = xcalloc(1, sizeof(*pc));

	pc->cycle = cycle_cmd ? xstrdup(cycle_cmd) : NULL;
	pc->off = off_cmd ? xstrdup(off_cmd) : NULL;
	pc->timeout_ms = timeout_ms;
	p->drv = &command_driver;
	p->priv = pc;
	return p;
}
