/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the console: what console.c (spec parsing, line assembly,
 * reopening) shares with the drivers (serial.c, tcp.c, command.c). Not for
 * users of console.h.
 *
 * A driver opens something that gives one pollable fd (c->fd) and closes it
 * again; everything about lines, deadlines and coming back after a hang-up
 * lives in console.c, so every driver behaves the same way.
 */
#ifndef KTEST_CONSOLE_INT_H
#define KTEST_CONSOLE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "console/console.h"

/* Longest line handed out in one piece. */
#define KCON_MAX_LINE		(64 * 1024)
/* A partial line with no new byte for this long is handed out (prompts). */
#define KCON_PARTIAL_IDLE_MS	250
/* Failed reopen attempts are repeated this often (sooner on an event). */
#define KCON_RETRY_MS		100
/* Attempts woken by events are at least this far apart. */
#define KCON_EVENT_GAP_MS	10
/* Connecting a TCP console at kconsole_open(): how long at most. */
#define KCON_OPEN_MS		5000
/* kconsole_write() gives up on a console that takes no bytes this long. */
#define KCON_WRITE_MS		5000
/* CLOSE_CONSOLE_SIGNAL, then this long, then SIGKILL for the group. */
#define KCON_KILL_GRACE_MS	1000

struct kconsole;

struct kcon_ops {
	const char *name;		/* kconsole_driver() */
	/* Checks the spec (after the "xxx:" prefix), sets up c->priv. */
	int (*parse)(struct kconsole *c, const char *target, char *err,
		     size_t errlen);
	/* Opens: c->fd becomes a non-blocking, close-on-exec fd. */
	int (*open)(struct kconsole *c, int64_t deadline_ms, char *err,
		    size_t errlen);
	/* Closes c->fd (sets it to -1) and whatever hangs on it. */
	void (*close)(struct kconsole *c);
	/* The far end went away (before close): may set c->final. */
	void (*hangup)(struct kconsole *c);
	/* A directory whose changes mean "try again now" (may be NULL). */
	const char *(*watch_dir)(struct kconsole *c, char *buf, size_t len);
	/* Bytes in; NULL means read(2). Returns what read(2) returns. */
	ssize_t (*read)(struct kconsole *c, void *buf, size_t n);
	/* Bytes out; NULL means write(2). Returns what write(2) returns. */
	ssize_t (*write)(struct kconsole *c, const void *buf, size_t n);
	void (*free)(struct kconsole *c);
	/* Successive opens at least this far apart (flapping far ends). */
	int min_reopen_ms;
};

struct kconsole {
	const struct kcon_ops *ops;
	char *spec;
	int close_signal;
	bool exclusive;

	int fd;			/* -1 while closed */
	bool final;		/* gone and never coming back (dead pty) */
	int64_t opened_ms;	/* the last successful open */
	bool empty_hangup;	/* went away with nothing read since its open */

	/* Bytes read but not handed out yet: buf[start, end). */
	char *buf;
	size_t start, end, cap;
	size_t scanned;		/* bytes after start known to hold no '\n' */
	int64_t last_data_ms;

	int watch_fd;		/* inotify while waiting to reopen, or -1 */
	char err[512];
	void *priv;		/* the driver's */
};

extern const struct kcon_ops kcon_serial_ops;
extern const struct kcon_ops kcon_pty_ops;
extern const struct kcon_ops kcon_tcp_ops;
extern const struct kcon_ops kcon_telnet_ops;
extern const struct kcon_ops kcon_command_ops;

/* telnet.c: the protocol of a telnet console, one connection's state. */
struct kcon_telnet {
	int state;			/* where the last byte left us */
	unsigned char verb;		/* WILL/WONT/DO/DONT being read */
	unsigned char us[32], him[32];	/* options on, one bit each */
};

void kcon_telnet_reset(struct kcon_telnet *t);
/*
 * Takes the telnet commands out of the n bytes at buf (in place) and
 * returns how many data bytes are left; the answers to the far end's
 * negotiation are appended to reply.
 */
size_t kcon_telnet_filter(struct kcon_telnet *t, char *buf, size_t n,
			  struct sbuf *reply);

/* snprintf into err, never failing. */
void kcon_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Is this errno a console that went away (rather than a bug of ours)? */
bool kcon_errno_gone(int e);

/* Waits (poll) up to deadline_ms for fd to become ready for events. */
int kcon_poll_one(int fd, short events, int64_t deadline_ms);

#endif
