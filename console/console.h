/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Consoles: where a test box's console output comes from. One interface,
 * several drivers, chosen by the CONSOLE value:
 *
 *   serial:/dev/ttyUSB0[,BAUD[,8N1[,rtscts|xonxoff]]]   a serial port
 *   pty:/dev/pts/N          a pseudo-terminal (qemu, relays), termios path
 *   tcp:HOST:PORT           a raw TCP console server (ser2net's raw mode)
 *   telnet:HOST:PORT        a telnet console server (ser2net's telnet
 *                           mode, terminal servers): IAC taken out
 *   anything else           a command whose output is the console, run
 *                           on a pty as ktest.pl runs CONSOLE
 *                           (conmux-console, ipmitool ... sol activate)
 *
 * Reads are event-driven (poll), never byte-at-a-time polling loops. A
 * console that vanishes (EOF, hang-up, device gone) is reopened until the
 * caller's deadline; lines read before and after are one continuous stream.
 * Time is CLOCK_MONOTONIC milliseconds (kclock_ms()).
 */
#ifndef KTEST_CONSOLE_H
#define KTEST_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/strmap.h"

struct kconsole_opts {
	const char *spec;	/* the CONSOLE value */
	int close_signal;	/* CLOSE_CONSOLE_SIGNAL (command consoles) */
	bool exclusive;		/* lock the device (serial, pty): default on */
};

enum kcon_status {
	KCON_LINE = 1,		/* a whole line (or a long partial one) */
	KCON_TIMEOUT = 0,	/* the deadline came first */
	KCON_GONE = -1,		/* it went away and did not come back in time */
	KCON_ERROR = -2,	/* see kconsole_error() */
};

struct kconsole;

/* Returns NULL with the reason in err (naming the device/host/command). */
struct kconsole *kconsole_open(const struct kconsole_opts *o, char *err,
			       size_t errlen);
/*
 * The next line (without '\n'; '\r' dropped) into line, waiting until
 * deadline_ms at the latest. Lines longer than 64 KiB come in pieces.
 */
enum kcon_status kconsole_read_line(struct kconsole *c, int64_t deadline_ms,
				    struct sbuf *line);
/* Bytes to the box (a command console's stdin, the serial port, the socket). */
int kconsole_write(struct kconsole *c, const void *buf, size_t n);
/* Closes and opens again (power cycles of boxes whose console dies). */
int kconsole_reopen(struct kconsole *c, int64_t deadline_ms);
void kconsole_close(struct kconsole *c);
const char *kconsole_error(const struct kconsole *c);
/*
 * Since the last byte it gave, did it go away without giving any (a command
 * that exits at once, a relay that drops us)? Then silence is the
 * console's, not the box's.
 */
bool kconsole_dead_silent(const struct kconsole *c);
/*
 * When it was last (re)opened (kclock_ms()). A console opened a moment ago
 * may not have said anything yet: a command still starting, a console
 * server about to replay its buffer.
 */
int64_t kconsole_opened_ms(const struct kconsole *c);
/* The driver's name: "serial", "pty", "tcp", "telnet", "command". */
const char *kconsole_driver(const struct kconsole *c);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t kclock_ms(void);

#endif
