// SPDX-License-Identifier: GPL-2.0-only
/*
 * The common part of every console: which driver a CONSOLE value means,
 * turning reads into lines, and coming back after the far end went away.
 *
 * ktest.pl reads its console one byte per sysread and gives up on the first
 * EOF. Here a read takes whatever the kernel has (up to 64 KiB) and lines
 * are cut out of a buffer. When the far end goes away (EOF, POLLHUP, EIO,
 * ENXIO: a USB serial unplugged at power-off, ser2net dropping us, a qemu
 * that exited) the driver closes and kconsole_read_line() keeps opening
 * it again until the caller's deadline. Bytes read before the hang-up stay
 * in the buffer, so the lines before and after are one stream; a line cut
 * short by the hang-up is handed out as it is. KCON_GONE comes at the
 * deadline, never sooner, so that a caller looping on it cannot spin the
 * way ktest.pl did on EOF; a console that can never come back (a pty named
 * directly, see serial.c) is not reopened at all.
 *
 * A line that is still partial after KCON_PARTIAL_IDLE_MS of silence is
 * handed out too: prompts ("buildroot login: ") end without a newline and
 * SUCCESS_LINE must see them. ktest.pl does the same (it returns what a
 * non-blocking read got). The price: a line the far end prints in two
 * bursts more than 250 ms apart arrives as two lines.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "console/console_int.h"

int64_t kclock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void kcon_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

bool kcon_errno_gone(int e)
{
	switch (e) {
	case EIO:		/* pty whose other side closed, tty hung up */
	case ENXIO:		/* device node without a device */
	case ENODEV:		/* USB serial unplugged */
	case EPIPE:
	case ECONNRESET:
	case ECONNABORTED:
	case ETIMEDOUT:		/* TCP keepalive gave up */
	case ENOTCONN:
	case ENETDOWN:
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ESHUTDOWN:
		return true;
	default:
		return false;
	}
}

/* Milliseconds from now until deadline, for poll(): never negative. */
static int ms_until(int64_t deadline_ms)
{
	int64_t left = deadline_ms - kclock_ms();

	if (left <= 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

int kcon_poll_one(int fd, short events, int64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do {
		r = poll(&p, 1, ms_until(deadline_ms));
	} while (r < 0 && errno == EINTR);
	return r;
}

/* ---- the spec ---------------------------------------------------------- */

static const struct {
	const char *prefix;
	const struct kcon_ops *ops;
} drivers[] = {
	{ "serial:", &kcon_serial_ops },
	{ "pty:", &kcon_pty_ops },
	{ "tcp:", &kcon_tcp_ops },
	{ "telnet:", &kcon_telnet_ops },
};

/* The driver a CONSOLE value means, and where its own part starts. */
static const struct kcon_ops *driver_for(const char *spec, const char **rest)
{
	size_t i;

	for (i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		size_t n = strlen(drivers[i].prefix);

		if (!strncmp(spec, drivers[i].prefix, n)) {
			*rest = spec + n;
			return drivers[i].ops;
		}
	}
	/* anything else is a command, as CONSOLE is for ktest.pl */
	*rest = spec;
	return &kcon_command_ops;
}

/* ---- the input buffer ---------------------------------------------------- */

static size_t pending(const struct kconsole *c)
{
	return c->end - c->start;
}

/* Room for at least want more bytes at c->end. */
static void make_room(struct kconsole *c, size_t want)
{
	if (c->start == c->end)
		c->start = c->end = c->scanned = 0;
	if (c->cap - c->end >= want)
		return;
	if (c->start) {
		memmove(c->buf, c->buf + c->start, pending(c));
		c->end -= c->start;
		c->start = 0;
	}
	while (c->cap - c->end < want)
		c->cap = c->cap ? c->cap * 2 : want;
	c->buf = xrealloc(c->buf, c->cap);
}

/* Hands out the first n pending bytes; skip more are consumed silently. */
static void hand_out(struct kconsole *c, size_t n, size_t skip,
		     struct sbuf *line, bool strip_cr)
{
	const char *p = c->buf + c->start;
	size_t len = n;

	while (strip_cr && len && p[len - 1] == '\r')
		len--;
	sbuf_reset(line);
	sbuf_addn(line, p, len);
	c->start += n + skip;
	c->scanned = 0;
}

/*
 * A whole line, or a 64 KiB piece of a longer one. A line of exactly
 * KCON_MAX_LINE bytes is still whole: its '\n' may be byte MAX + 1.
 */
static bool take_line(struct kconsole *c, struct sbuf *line)
{
	size_t avail = pending(c);
	size_t look = avail < KCON_MAX_LINE + 1 ? avail : KCON_MAX_LINE + 1;
	const char *nl = NULL;

	if (c->scanned < look)
		nl = memchr(c->buf + c->start + c->scanned, '\n',
			    look - c->scanned);
	if (nl) {
		hand_out(c, (size_t)(nl - (c->buf + c->start)), 1, line, true);
		return true;
	}
	c->scanned = look;
	if (avail > KCON_MAX_LINE) {
		hand_out(c, KCON_MAX_LINE, 0, line, false);
		return true;
	}
	return false;
}

/* Whatever is pending, as a line (cut short by a hang-up, or idle). */
static bool take_partial(struct kconsole *c, struct sbuf *line)
{
	if (!pending(c))
		return false;
	hand_out(c, pending(c), 0, line, true);
	return true;
}

/* ---- opening, closing, coming back ------------------------------------- */

static void close_watch(struct kconsole *c)
{
	if (c->watch_fd >= 0)
		close(c->watch_fd);
	c->watch_fd = -1;
}

static void drv_close(struct kconsole *c)
{
	if (c->fd >= 0)
		c->ops->close(c);
	c->fd = -1;
}

static int drv_open(struct kconsole *c, int64_t deadline_ms)
{
	char err[sizeof(c->err)];

	if (c->ops->open(c, deadline_ms, err, sizeof(err)) < 0) {
		kcon_errf(c->err, sizeof(c->err), "%s", err);
		return -1;
	}
	c->opened_ms = kclock_ms();
	return 0;
}

/* The far end went away: close, and let the driver say if that is final. */
static void hang_up(struct kconsole *c)
{
	if (c->last_data_ms < c->opened_ms)
		c->empty_hangup = true;
	if (c->ops->hangup)
		c->ops->hangup(c);
	drv_close(c);
}

/*
 * Wakes up on a change in the driver's directory (a device node or a
 * symlink appearing: udev, a relay restarting), so reopening follows the
 * event rather than the 100 ms timer. Best effort: devpts, for one, sends
 * no events, and then the timer does the work.
 */
static void start_watch(struct kconsole *c)
{
	char dir[4096];

	if (c->watch_fd >= 0 || !c->ops->watch_dir ||
	    !c->ops->watch_dir(c, dir, sizeof(dir)))
		return;
	c->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c->watch_fd < 0)
		return;
	if (inotify_add_watch(c->watch_fd, dir,
			      IN_CREATE | IN_MOVED_TO | IN_ATTRIB) < 0)
		close_watch(c);
}

/* Waits until 'until' or a watch event, whichever comes first. */
static void wait_to_retry(struct kconsole *c, int64_t until)
{
	char ev[4096];

	if (c->watch_fd < 0) {
		kcon_poll_one(-1, 0, until);
		return;
	}
	if (kcon_poll_one(c->watch_fd, POLLIN, until) > 0)
		while (read(c->watch_fd, ev, sizeof(ev)) > 0)
			;
}

/*
 * Opens again until deadline_ms. The first attempt waits for the driver's
 * min_reopen_ms since the last open, so a far end that accepts and drops
 * us at once (ser2net with the port taken, a console command that exits
 * immediately) is not hammered. Later attempts follow the watch's events
 * (at most one per KCON_EVENT_GAP_MS: a busy directory must not make this
 * spin) or the KCON_RETRY_MS timer.
 */
static int reopen_until(struct kconsole *c, int64_t deadline_ms)
{
	int64_t next = c->opened_ms + c->ops->min_reopen_ms;
	int ret = -1;

	c->err[0] = '\0';
	if (c->final)
		return -1;
	start_watch(c);
	if (next > kclock_ms()) {
		if (next > deadline_ms)
			goto out;
		kcon_poll_one(-1, 0, next);
	}
	for (;;) {
		int64_t tried = kclock_ms();

		if (drv_open(c, deadline_ms) == 0) {
			ret = 0;
			break;
		}
		if (kclock_ms() >= deadline_ms || c->final)
			break;
		next = tried + KCON_RETRY_MS;
		wait_to_retry(c, next < deadline_ms ? next : deadline_ms);
		kcon_poll_one(-1, 0, tried + KCON_EVENT_GAP_MS);
	}
out:
	close_watch(c);
	return ret;
}

/* ---- reading ----------------------------------------------------------- */

enum fill { FILL_DATA, FILL_NONE, FILL_GONE, FILL_ERROR };

/* One read(2) of what the kernel has, into the buffer. */
static enum fill fill(struct kconsole *c)
{
	ssize_t n;

	make_room(c, KCON_MAX_LINE);
	if (c->ops->read)
		n = c->ops->read(c, c->buf + c->end, c->cap - c->end);
	else
		n = read(c->fd, c->buf + c->end, c->cap - c->end);
	if (n > 0) {
		c->end += (size_t)n;
		c->last_data_ms = kclock_ms();
		c->empty_hangup = false;
		return FILL_DATA;
	}
	if (n == 0)
		return FILL_GONE;
	if (errno == EAGAIN || errno == EINTR)
		return FILL_NONE;
	if (kcon_errno_gone(errno))
		return FILL_GONE;
	kcon_errf(c->err, sizeof(c->err), "console %s: read: %s", c->spec,
		  strerror(errno));
	return FILL_ERROR;
}

/* When to stop waiting for more bytes: the deadline, or an idle partial. */
static int64_t wake_at(const struct kconsole *c, int64_t deadline_ms)
{
	int64_t idle;

	if (!pending(c))
		return deadline_ms;
	idle = c->last_data_ms + KCON_PARTIAL_IDLE_MS;
	return idle < deadline_ms ? idle : deadline_ms;
}

/* Why the console is not back: the driver's last error, with the spec. */
static void say_gone(struct kconsole *c)
{
	char why[sizeof(c->err)];

	snprintf(why, sizeof(why), "%s", c->err);
	if (c->final)
		kcon_errf(c->err, sizeof(c->err),
			  "console %s is gone for good (%s)", c->spec,
			  why[0] ? why : "its far end closed");
	else
		kcon_errf(c->err, sizeof(c->err),
			  "console %s went away and did not come back: %s",
			  c->spec, why[0] ? why : "no reason given");
}

enum kcon_status kconsole_read_line(struct kconsole *c, int64_t deadline_ms,
				    struct sbuf *line)
{
	for (;;) {
		struct pollfd p;
		int64_t until;
		int r;

		if (take_line(c, line))
			return KCON_LINE;
		if (c->fd < 0) {
			/* cut short by the hang-up: the rest will never come */
			if (take_partial(c, line))
				return KCON_LINE;
			if (reopen_until(c, deadline_ms) < 0) {
				/*
				 * Only at the deadline, even when it is
				 * final: a caller that loops on GONE must
				 * not spin (ktest.pl did, at 100% CPU, on
				 * EOF).
				 */
				kcon_poll_one(-1, 0, deadline_ms);
				say_gone(c);
				return KCON_GONE;
			}
			continue;
		}
		until = wake_at(c, deadline_ms);
		p = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		r = poll(&p, 1, ms_until(until));
		if (r < 0 && errno != EINTR) {
			kcon_errf(c->err, sizeof(c->err), "console %s: poll: %s",
				  c->spec, strerror(errno));
			return KCON_ERROR;
		}
		if (r <= 0) {
			if (kclock_ms() < until)
				continue;
			if (until < deadline_ms && take_partial(c, line))
				return KCON_LINE;
			if (kclock_ms() >= deadline_ms)
				return KCON_TIMEOUT;
			continue;
		}
		if (p.revents & POLLNVAL) {
			kcon_errf(c->err, sizeof(c->err),
				  "console %s: its fd was closed under it",
				  c->spec);
			return KCON_ERROR;
		}
		/*
		 * POLLHUP with POLLIN: read what is left first; read() says
		 * 0 or EIO once it is all gone.
		 */
		switch (fill(c)) {
		case FILL_DATA:
			break;
		case FILL_NONE:
			/* a hang-up that reads as "try again" would spin */
			if ((p.revents & (POLLHUP | POLLERR)) &&
			    !(p.revents & POLLIN))
				hang_up(c);
			break;
		case FILL_GONE:
			hang_up(c);
			break;
		case FILL_ERROR:
			return KCON_ERROR;
		}
	}
}

/* ---- writing ----------------------------------------------------------- */

static ssize_t drv_write(struct kconsole *c, const void *buf, size_t n)
{
	if (c->ops->write)
		return c->ops->write(c, buf, n);
	return write(c->fd, buf, n);
}

int kconsole_write(struct kconsole *c, const void *buf, size_t n)
{
	int64_t deadline = kclock_ms() + KCON_WRITE_MS;
	const char *p = buf;

	while (n) {
		ssize_t w;

		if (c->fd < 0) {
			kcon_errf(c->err, sizeof(c->err),
				  "console %s: cannot write: it is closed (gone)",
				  c->spec);
			return -1;
		}
		w = drv_write(c, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN) {
			kcon_errf(c->err, sizeof(c->err), "console %s: write: %s",
				  c->spec, strerror(errno));
			return -1;
		}
		if (kcon_poll_one(c->fd, POLLOUT, deadline) <= 0 &&
		    kclock_ms() >= deadline) {
			kcon_errf(c->err, sizeof(c->err),
				  "console %s: write: no room for %d s",
				  c->spec, KCON_WRITE_MS / 1000);
			return -1;
		}
	}
	return 0;
}

/* ---- life cycle ---------------------------------------------------------- */

struct kconsole *kconsole_open(const struct kconsole_opts *o, char *err,
			       size_t errlen)
{
	struct kconsole *c;
	const char *target;
	char why[sizeof(c->err)];

	if (!o || !o->spec || !*o->spec) {
		kcon_errf(err, errlen, "no CONSOLE given");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->spec = xstrdup(o->spec);
	c->close_signal = o->close_signal;
	c->exclusive = o->exclusive;
	c->fd = -1;
	c->watch_fd = -1;
	c->ops = driver_for(c->spec, &target);
	if (c->ops->parse(c, target, why, sizeof(why)) < 0) {
		kcon_errf(err, errlen, "CONSOLE '%s': %s", o->spec, why);
		goto fail;
	}
	if (c->ops->open(c, kclock_ms() + KCON_OPEN_MS, why, sizeof(why)) < 0) {
		kcon_errf(err, errlen, "%s", why);
		goto fail;
	}
	c->opened_ms = kclock_ms();
	return c;
fail:
	kconsole_close(c);
	return NULL;
}

int kconsole_reopen(struct kconsole *c, int64_t deadline_ms)
{
	drv_close(c);
	if (reopen_until(c, deadline_ms) == 0)
		return 0;
	say_gone(c);
	return -1;
}

void kconsole_close(struct kconsole *c)
{
	if (!c)
		return;
	drv_close(c);
	close_watch(c);
	if (c->ops && c->ops->free)
		c->ops->free(c);
	free(c->buf);
	free(c->spec);
	free(c);
}

bool kconsole_dead_silent(const struct kconsole *c)
{
	return c->empty_hangup;
}

int64_t kconsole_opened_ms(const struct kconsole *c)
{
	return c->opened_ms;
}

const char *kconsole_error(const struct kconsole *c)
{
	return c->err;
}

const char *kconsole_driver(const struct kconsole *c)
{
	return c->ops->name;
}
