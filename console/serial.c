// SPDX-License-Identifier: GPL-2.0-only
/*
 * Serial and pty consoles:
 *
 *   serial:PATH[,BAUD[,FRAME[,FLOW]]]	FRAME like 8N1, 7E1, 8N2 (N E O M S)
 *   pty:PATH[,...]			FLOW none, rtscts, xonxoff
 *
 * Defaults 115200 8N1, no flow control. PATH may be a symlink
 * (/dev/serial/by-id/..., a relay's stable name): it is resolved at every
 * open, so a USB serial that comes back as another ttyUSBn after a power
 * cycle is found again by the name udev keeps for it.
 *
 * Real ttys go through libserialport 0.1.1. It cannot open a pseudo-terminal
 * (it wants /sys/class/tty/NAME and fails on TIOCMGET) nor a symlinked name,
 * so ptys take a plain termios path, and every name is realpath()ed first.
 * libserialport's own reads and sp_wait are not used (sp_wait returns
 * SP_OK on timeout, blocking reads spin on a hung-up port): console.c polls
 * the fd from sp_get_port_handle(). Its settings are applied with raw
 * termios semantics; ktest never touches its own terminal.
 *
 * Two runs must not share a console: the device is flock()ed (what picocom
 * does too, and what works between root processes) and set TIOCEXCL (which
 * keeps other non-root programs from opening it at all). TIOCEXCL outlives
 * the fd on a tty whose other side stays open, so it is cleared before
 * closing: otherwise our own reopen, non-root, would get EBUSY.
 *
 * A pty's number is freed when its master closes and the kernel hands the
 * lowest free number to the next pty: /dev/pts/N after a hang-up is most
 * likely someone else's terminal. So a pty named directly (pty:/dev/pts/N)
 * is gone for good once its master closes; a pty reached through a symlink
 * that its relay maintains (socat's link=, a lab relay) is reopened through
 * the symlink like any serial device.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/major.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <libserialport.h>

#include "console/console_int.h"

enum flow { FLOW_NONE, FLOW_RTSCTS, FLOW_XONXOFF };

struct serial {
	char *path;		/* as written */
	char real[PATH_MAX];	/* what it resolved to at the last open */
	int baud, bits, stop;
	char parity;		/* N E O M S */
	enum flow flow;
	bool pty_spec;		/* "pty:" */
	bool direct_pty;	/* a devpts node named without a symlink */
	bool excl;		/* we set TIOCEXCL */
	struct sp_port *port;	/* libserialport, or NULL on the termios path */
};

static const struct {
	int baud;
	speed_t speed;
} speeds[] = {
	{ 50, B50 }, { 75, B75 }, { 110, B110 }, { 134, B134 },
	{ 150, B150 }, { 200, B200 }, { 300, B300 }, { 600, B600 },
	{ 1200, B1200 }, { 1800, B1800 }, { 2400, B2400 }, { 4800, B4800 },
	{ 9600, B9600 }, { 19200, B19200 }, { 38400, B38400 },
	{ 57600, B57600 }, { 115200, B115200 }, { 230400, B230400 },
	{ 460800, B460800 }, { 500000, B500000 }, { 576000, B576000 },
	{ 921600, B921600 }, { 1000000, B1000000 }, { 1152000, B1152000 },
	{ 1500000, B1500000 }, { 2000000, B2000000 }, { 2500000, B2500000 },
	{ 3000000, B3000000 }, { 3500000, B3500000 }, { 4000000, B4000000 },
};

static bool termios_speed(int baud, speed_t *out)
{
	size_t i;

	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
		if (speeds[i].baud == baud) {
			*out = speeds[i].speed;
			return true;
		}
	}
	return false;
}

/* ---- the spec ---------------------------------------------------------- */

static int parse_baud(struct serial *s, const char *v, char *err, size_t len)
{
	char *end;
	long b;
	speed_t sp;

	errno = 0;
	b = strtol(v, &end, 10);
	if (errno || *end || b <= 0 || b > 4000000 || !termios_speed((int)b, &sp)) {
		kcon_errf(err, len, "bad baud rate '%s' (e.g. 9600, 115200)", v);
		return -1;
	}
	s->baud = (int)b;
	return 0;
}

static int parse_frame(struct serial *s, const char *v, char *err, size_t len)
{
	if (strlen(v) != 3 || v[0] < '5' || v[0] > '8' ||
	    !strchr("NEOMS", v[1]) || (v[2] != '1' && v[2] != '2')) {
		kcon_errf(err, len,
			  "bad frame '%s' (data bits 5-8, parity N/E/O/M/S, stop bits 1/2: e.g. 8N1)",
			  v);
		return -1;
	}
	s->bits = v[0] - '0';
	s->parity = v[1];
	s->stop = v[2] - '0';
	return 0;
}

static int parse_flow(struct serial *s, const char *v, char *err, size_t len)
{
	if (!strcmp(v, "none"))
		s->flow = FLOW_NONE;
	else if (!strcmp(v, "rtscts"))
		s->flow = FLOW_RTSCTS;
	else if (!strcmp(v, "xonxoff"))
		s->flow = FLOW_XONXOFF;
	else {
		kcon_errf(err, len,
			  "bad flow control '%s' (none, rtscts or xonxoff)", v);
		return -1;
	}
	return 0;
}

static int parse_fields(struct serial *s, char *opts, char *err, size_t len)
{
	int (*const field[])(struct serial *, const char *, char *, size_t) = {
		parse_baud, parse_frame, parse_flow,
	};
	size_t i = 0;
	char *f;

	while ((f = strsep(&opts, ","))) {
		if (i == sizeof(field) / sizeof(field[0])) {
			kcon_errf(err, len, "too many fields at '%s' (PATH,BAUD,FRAME,FLOW)", f);
			return -1;
		}
		if (*f && field[i](s, f, err, len) < 0)
			return -1;
		i++;
	}
	return 0;
}

static int parse(struct kconsole *c, const char *target, bool pty_spec,
		 char *err, size_t len)
{
	struct serial *s = xcalloc(1, sizeof(*s));
	char *copy = xstrdup(target);
	char *comma = strchr(copy, ',');
	int ret = -1;

	c->priv = s;
	s->pty_spec = pty_spec;
	s->baud = 115200;
	s->bits = 8;
	s->parity = 'N';
	s->stop = 1;
	if (comma)
		*comma = '\0';
	if (!*copy) {
		kcon_errf(err, len, "no device path");
		goto out;
	}
	s->path = xstrdup(copy);
	if (comma && parse_fields(s, comma + 1, err, len) < 0)
		goto out;
	ret = 0;
out:
	free(copy);
	return ret;
}

static int serial_parse(struct kconsole *c, const char *t, char *err, size_t len)
{
	return parse(c, t, false, err, len);
}

static int pty_parse(struct kconsole *c, const char *t, char *err, size_t len)
{
	return parse(c, t, true, err, len);
}

/* ---- naming things in messages ------------------------------------------- */

static const char *kind(const struct serial *s)
{
	return s->pty_spec ? "pty" : "serial";
}

/* "/dev/ttyUSB0" or "/dev/serial/by-id/x (/dev/ttyUSB0)" */
static const char *name(const struct serial *s, char *buf, size_t len)
{
	if (!s->real[0] || !strcmp(s->path, s->real))
		snprintf(buf, len, "%s", s->path);
	else
		snprintf(buf, len, "%s (%s)", s->path, s->real);
	return buf;
}

/*
 * Who holds the flock on fd's file, from /proc/locks:
 * "1: FLOCK  ADVISORY  WRITE 1234 00:18:3 0 EOF". 0 when not found.
 */
static pid_t lock_holder(int fd)
{
	struct stat st;
	char line[256];
	pid_t pid = 0;
	FILE *f;

	if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long ino;
		int p;

		if (strstr(line, "->") || !strstr(line, "FLOCK"))
			continue;
		if (sscanf(line, "%*s FLOCK %*s %*s %d %x:%x:%lu", &p, &maj,
			   &min, &ino) == 4 && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && ino == st.st_ino)
			pid = p;
	}
	fclose(f);
	return pid;
}

static void lock_error(struct kconsole *c, int fd, char *err, size_t len)
{
	struct serial *s = c->priv;
	pid_t pid = lock_holder(fd);
	char comm[64] = "", path[64], nm[2 * PATH_MAX + 4];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (pid && (f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (pid)
		kcon_errf(err, len,
			  "%s console %s is in use: locked by pid %d (%s)",
			  kind(s), name(s, nm, sizeof(nm)), (int)pid,
			  comm[0] ? comm : "?");
	else
		kcon_errf(err, len,
			  "%s console %s is in use: locked by another process",
			  kind(s), name(s, nm, sizeof(nm)));
}

/* ---- opening ------------------------------------------------------------- */

static int lock_tty(struct kconsole *c, int fd, char *err, size_t len)
{
	struct serial *s = c->priv;

	if (!c->exclusive)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		lock_error(c, fd, err, len);
		return -1;
	}
	s->excl = ioctl(fd, TIOCEXCL) == 0;
	return 0;
}

static void unlock_tty(struct serial *s, int fd)
{
	if (s->excl)
		ioctl(fd, TIOCNXCL);
	s->excl = false;
}

/* Raw 8-bit line with the spec's speed, frame and flow control. */
static int set_termios(struct kconsole *c, int fd, char *err, size_t len)
{
	struct serial *s = c->priv;
	static const tcflag_t csize[] = { CS5, CS6, CS7, CS8 };
	char nm[2 * PATH_MAX + 4];
	struct termios t;
	speed_t speed = B115200;

	if (tcgetattr(fd, &t) < 0)
		goto fail;
	cfmakeraw(&t);
	termios_speed(s->baud, &speed);
	cfsetspeed(&t, speed);
	t.c_cflag &= ~(CSIZE | PARENB | PARODD | CMSPAR | CSTOPB | CRTSCTS);
	t.c_cflag |= csize[s->bits - 5] | CLOCAL | CREAD;
	if (s->parity != 'N')
		t.c_cflag |= PARENB;
	if (s->parity == 'O' || s->parity == 'M')
		t.c_cflag |= PARODD;
	if (s->parity == 'M' || s->parity == 'S')
		t.c_cflag |= CMSPAR;
	if (s->stop == 2)
		t.c_cflag |= CSTOPB;
	t.c_iflag &= ~(IXON | IXOFF | IXANY);
	if (s->flow == FLOW_RTSCTS)
		t.c_cflag |= CRTSCTS;
	else if (s->flow == FLOW_XONXOFF)
		t.c_iflag |= IXON | IXOFF;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSANOW, &t) < 0)
		goto fail;
	return 0;
fail:
	kcon_errf(err, len, "%s console %s: setting the line up: %s", kind(s),
		  name(s, nm, sizeof(nm)), strerror(errno));
	return -1;
}

static void open_error(struct serial *s, int e, char *err, size_t len)
{
	char nm[2 * PATH_MAX + 4];
	const char *hint = "";

	if (e == EBUSY)
		hint = " (another program opened it exclusively, TIOCEXCL)";
	else if (e == EACCES)
		hint = " (is this user in the device's group, e.g. dialout?)";
	kcon_errf(err, len, "%s console %s: %s%s", kind(s),
		  name(s, nm, sizeof(nm)), strerror(e), hint);
}

/* The termios path: ptys, and ttys named with "pty:". */
static int open_termios(struct kconsole *c, char *err, size_t len)
{
	struct serial *s = c->priv;
	int fd;

	fd = open(s->real, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		open_error(s, errno, err, len);
		return -1;
	}
	if (!isatty(fd)) {
		char nm[2 * PATH_MAX + 4];

		kcon_errf(err, len, "%s console %s: not a terminal", kind(s),
			  name(s, nm, sizeof(nm)));
		goto fail;
	}
	if (lock_tty(c, fd, err, len) < 0 || set_termios(c, fd, err, len) < 0)
		goto fail;
	c->fd = fd;
	return 0;
fail:
	unlock_tty(s, fd);
	close(fd);
	return -1;
}

static void sp_error(struct serial *s, const char *what, char *err, size_t len)
{
	char *msg = sp_last_error_message();
	char nm[2 * PATH_MAX + 4];

	kcon_errf(err, len, "serial console %s: libserialport %s: %s",
		  name(s, nm, sizeof(nm)), what, msg ? msg : "failed");
	if (msg)
		sp_free_error_message(msg);
}

static void sp_drop(struct serial *s)
{
	if (!s->port)
		return;
	sp_close(s->port);
	sp_free_port(s->port);
	s->port = NULL;
}

static const enum sp_parity sp_parities[] = {
	['N'] = SP_PARITY_NONE, ['E'] = SP_PARITY_EVEN, ['O'] = SP_PARITY_ODD,
	['M'] = SP_PARITY_MARK, ['S'] = SP_PARITY_SPACE,
};

static int sp_configure(struct serial *s, char *err, size_t len)
{
	static const enum sp_flowcontrol flows[] = {
		[FLOW_NONE] = SP_FLOWCONTROL_NONE,
		[FLOW_RTSCTS] = SP_FLOWCONTROL_RTSCTS,
		[FLOW_XONXOFF] = SP_FLOWCONTROL_XONXOFF,
	};

	if (sp_set_baudrate(s->port, s->baud) != SP_OK) {
		sp_error(s, "setting the baud rate", err, len);
		return -1;
	}
	if (sp_set_bits(s->port, s->bits) != SP_OK ||
	    sp_set_parity(s->port, sp_parities[(unsigned char)s->parity]) != SP_OK ||
	    sp_set_stopbits(s->port, s->stop) != SP_OK) {
		sp_error(s, "setting the frame", err, len);
		return -1;
	}
	if (sp_set_flowcontrol(s->port, flows[s->flow]) != SP_OK) {
		sp_error(s, "setting flow control", err, len);
		return -1;
	}
	return 0;
}

/* The libserialport path: real serial ports. */
static int open_sp(struct kconsole *c, char *err, size_t len)
{
	struct serial *s = c->priv;
	int fd, fl;

	if (sp_get_port_by_name(s->real, &s->port) != SP_OK) {
		s->port = NULL;
		sp_error(s, "cannot use it as a serial port", err, len);
		return -1;
	}
	if (sp_open(s->port, SP_MODE_READ_WRITE) != SP_OK) {
		sp_error(s, "open", err, len);
		goto fail;
	}
	if (sp_get_port_handle(s->port, &fd) != SP_OK) {
		sp_error(s, "handle", err, len);
		goto fail;
	}
	if (lock_tty(c, fd, err, len) < 0)
		goto fail;
	if (sp_configure(s, err, len) < 0)
		goto fail_unlock;
	/* console.c polls and reads the fd itself */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		open_error(s, errno, err, len);
		goto fail_unlock;
	}
	c->fd = fd;
	return 0;
fail_unlock:
	unlock_tty(s, fd);
fail:
	sp_drop(s);
	return -1;
}

static bool is_pty(const struct stat *st)
{
	unsigned int maj = major(st->st_rdev);

	return maj >= UNIX98_PTY_SLAVE_MAJOR &&
	       maj < UNIX98_PTY_SLAVE_MAJOR + UNIX98_PTY_MAJOR_COUNT;
}

static int serial_open(struct kconsole *c, int64_t deadline_ms, char *err,
		       size_t len)
{
	struct serial *s = c->priv;
	struct stat st, lst;
	bool pty;

	(void)deadline_ms;
	s->real[0] = '\0';
	if (!realpath(s->path, s->real)) {
		int e = errno;

		s->real[0] = '\0';
		open_error(s, e, err, len);
		return -1;
	}
	if (stat(s->real, &st) < 0) {
		open_error(s, errno, err, len);
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		char nm[2 * PATH_MAX + 4];

		kcon_errf(err, len, "%s console %s: not a character device",
			  kind(s), name(s, nm, sizeof(nm)));
		return -1;
	}
	pty = is_pty(&st);
	s->direct_pty = pty && lstat(s->path, &lst) == 0 && !S_ISLNK(lst.st_mode);
	if (pty || s->pty_spec)
		return open_termios(c, err, len);
	return open_sp(c, err, len);
}

/* ---- the rest -------------------------------------------------------------- */

static void serial_close(struct kconsole *c)
{
	struct serial *s = c->priv;

	unlock_tty(s, c->fd);
	if (s->port)
		sp_drop(s);	/* closes c->fd */
	else
		close(c->fd);
	c->fd = -1;
}

/* See the top: a pty named directly never comes back under its name. */
static void serial_hangup(struct kconsole *c)
{
	struct serial *s = c->priv;

	if (s->direct_pty)
		c->final = true;
}

static const char *serial_watch_dir(struct kconsole *c, char *buf, size_t len)
{
	struct serial *s = c->priv;
	char *copy = xstrdup(s->path);

	snprintf(buf, len, "%s", dirname(copy));
	free(copy);
	return buf;
}

static void serial_free(struct kconsole *c)
{
	struct serial *s = c->priv;

	if (!s)
		return;
	free(s->path);
	free(s);
	c->priv = NULL;
}

const struct kcon_ops kcon_serial_ops = {
	.name = "serial",
	.parse = serial_parse,
	.open = serial_open,
	.close = serial_close,
	.hangup = serial_hangup,
	.watch_dir = serial_watch_dir,
	.free = serial_free,
};

const struct kcon_ops kcon_pty_ops = {
	.name = "pty",
	.parse = pty_parse,
	.open = serial_open,
	.close = serial_close,
	.hangup = serial_hangup,
	.watch_dir = serial_watch_dir,
	.free = serial_free,
};
