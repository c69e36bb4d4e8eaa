// SPDX-License-Identifier: GPL-2.0-only
/*
 * Consoles against real parts the tests start and stop themselves: a pty
 * whose master is the "serial line" (as a relay or qemu holds it), a
 * symlink to it that a relay re-points (udev's /dev/serial/by-id, socat's
 * link=), a TCP listener in a child process that drops us and takes us
 * again (ser2net when the USB serial behind it vanishes), and console
 * commands whose whole process group must die at close. Every test checks
 * that it leaves no descriptor open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "scratch.h"

/* ---- helpers --------------------------------------------------------------- */

static int count_fds(void)
{
	return (int)dir_count("/proc/self/fd");
}

/* Every test: the same descriptors open after it as before. */
static int fd_setup(void **state)
{
	int *n = malloc(sizeof(*n));

	*n = count_fds();
	*state = n;
	return 0;
}

static void reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static int fd_teardown(void **state)
{
	int *n = *state;

	reap_orphans();
	assert_int_equal(count_fds(), *n);
	free(n);
	return 0;
}

/* The far end of a serial line: a raw pty master, as qemu sets its own. */
struct line {
	int master;
	char slave[64];
};

static void line_open(struct line *l)
{
	struct termios t;

	l->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(l->master >= 0);
	assert_int_equal(grantpt(l->master), 0);
	assert_int_equal(unlockpt(l->master), 0);
	assert_int_equal(ptsname_r(l->master, l->slave, sizeof(l->slave)), 0);
	assert_int_equal(tcgetattr(l->master, &t), 0);
	cfmakeraw(&t);
	assert_int_equal(tcsetattr(l->master, TCSANOW, &t), 0);
}

static void line_close(struct line *l)
{
	if (l->master >= 0)
		close(l->master);
	l->master = -1;
}

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static struct kconsole *open_console(const char *spec, bool exclusive)
{
	struct kconsole_opts o = { .spec = spec, .exclusive = exclusive };
	struct kconsole *c;
	char err[512] = "";

	c = kconsole_open(&o, err, sizeof(err));
	if (!c)
		fail_msg("kconsole_open(%s): %s", spec, err);
	return c;
}

/* kconsole_open() must fail; returns its message. */
static const char *open_fails(const char *spec, bool exclusive)
{
	static char err[512];
	struct kconsole_opts o = { .spec = spec, .exclusive = exclusive };
	struct kconsole *c;

	err[0] = '\0';
	c = kconsole_open(&o, err, sizeof(err));
	if (c) {
		kconsole_close(c);
		fail_msg("kconsole_open(%s) worked", spec);
	}
	assert_true(err[0]);
	return err;
}

static void contains(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("'%s' does not contain '%s'", s, want);
}

/* The next line within ms; it must be want. */
static void expect_line(struct kconsole *c, const char *want, int ms)
{
	struct sbuf l;
	enum kcon_status st;

	sbuf_init(&l);
	st = kconsole_read_line(c, kclock_ms() + ms, &l);
	if (st != KCON_LINE)
		fail_msg("wanted '%s', got status %d (%s)", want, st,
			 kconsole_error(c));
	assert_string_equal(sbuf_str(&l), want);
	sbuf_free(&l);
}

static enum kcon_status read_status(struct kconsole *c, int ms)
{
	struct sbuf l;
	enum kcon_status st;

	sbuf_init(&l);
	st = kconsole_read_line(c, kclock_ms() + ms, &l);
	if (st == KCON_LINE)
		print_message("# unexpected line '%s'\n", sbuf_str(&l));
	sbuf_free(&l);
	return st;
}

struct pstat {
	pid_t pid, ppid, sid;
	char state;
	char comm[64];
};

static bool read_pstat(pid_t pid, struct pstat *s)
{
	char path[64], buf[512], *rp;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	rp = ok ? strrchr(buf, ')') : NULL;
	if (!rp)
		return false;
	*rp = '\0';
	snprintf(s->comm, sizeof(s->comm), "%s", strchr(buf, '(') + 1);
	s->pid = pid;
	return sscanf(rp + 2, "%c %d %*d %d", &s->state, &s->ppid, &s->sid) == 3;
}

/*
 * A live process named comm in a console command's session: a session
 * whose leader is our child.
 */
static pid_t find_in_console(const char *comm)
{
	int64_t deadline = kclock_ms() + 3000;

	do {
		DIR *d = opendir("/proc");
		struct dirent *e;
		pid_t found = 0;

		while (!found && (e = readdir(d))) {
			struct pstat s, leader;
			pid_t pid = atoi(e->d_name);

			if (pid <= 0 || !read_pstat(pid, &s) ||
			    strcmp(s.comm, comm) || s.state == 'Z' ||
			    s.sid == getsid(0) || !read_pstat(s.sid, &leader))
				continue;
			if (leader.ppid == getpid())
				found = pid;
		}
		closedir(d);
		if (found)
			return found;
		usleep(10000);
	} while (kclock_ms() < deadline);
	fail_msg("no '%s' in a console's session", comm);
	return 0;
}

/* Gone, or a zombie waiting for us (we are the subreaper). */
static bool dead_within(pid_t pid, int ms)
{
	int64_t deadline = kclock_ms() + ms;
	struct pstat s;

	do {
		if (!read_pstat(pid, &s) || s.state == 'Z')
			return true;
		usleep(10000);
	} while (kclock_ms() < deadline);
	return false;
}

/* A scratch directory for symlinks and files. */
static void scratch(char *dir, size_t len)
{
	snprintf(dir, len, "%s/ktest-console.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
}

static void rm_scratch(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Points link at target atomically (rename over it), as udev does. */
static void relink(const char *target, const char *link)
{
	char tmp[600];

	snprintf(tmp, sizeof(tmp), "%s.new", link);
	unlink(tmp);
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(rename(tmp, link), 0);
}

/* ---- spec errors --------------------------------------------------------- */

static void test_spec_errors(void **state)
{
	(void)state;
	contains(open_fails("", true), "no CONSOLE");
	contains(open_fails("serial:", true), "no device path");
	contains(open_fails("serial:/dev/ttyS0,fast", true),
		 "bad baud rate 'fast'");
	contains(open_fails("serial:/dev/ttyS0,115201", true), "CONSOLE 'serial:/dev/ttyS0,115201'");
	contains(open_fails("serial:/dev/ttyS0,115200,9N1", true),
		 "bad frame '9N1'");
	contains(open_fails("pty:/dev/pts/0,9600,8X1", true), "bad frame");
	contains(open_fails("serial:/dev/ttyS0,115200,8N1,cts", true),
		 "bad flow control 'cts'");
	contains(open_fails("serial:/dev/ttyS0,1200,8N1,none,x", true),
		 "too many fields");
	contains(open_fails("tcp:localhost", true), "expected tcp:HOST:PORT");
	contains(open_fails("tcp:localhost:99999", true), "bad port '99999'");
	contains(open_fails("tcp:[::1:80", true), "tcp:[ADDRESS]:PORT");
	{
		struct kconsole_opts o = { .spec = "cat", .close_signal = 999 };
		char err[512] = "";

		assert_null(kconsole_open(&o, err, sizeof(err)));
		contains(err, "CLOSE_CONSOLE_SIGNAL 999 is not a signal");
	}
}

/* No real serial port here: libserialport's path is checked for its errors. */
static void test_serial_errors(void **state)
{
	char dir[256], file[300];
	const char *e;

	(void)state;
	e = open_fails("serial:/dev/ttyUSB9", true);
	contains(e, "serial console /dev/ttyUSB9");
	contains(e, "No such file or directory");

	e = open_fails("serial:/dev/null,9600", true);
	contains(e, "/dev/null");
	contains(e, "libserialport");

	scratch(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/plain", dir);
	close(open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	{
		char spec[320];

		snprintf(spec, sizeof(spec), "pty:%s", file);
		contains(open_fails(spec, true), "not a character device");
	}
	rm_scratch(dir);
}

/* ---- pty consoles: lines ----------------------------------------------------- */

static void test_pty_lines(void **state)
{
	struct line l;
	struct kconsole *c;
	char spec[80];

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	assert_string_equal(kconsole_driver(c), "pty");

	put(l.master, "Linux version 6.1.0\r\n\r\nsecond\n");
	expect_line(c, "Linux version 6.1.0", 2000);
	expect_line(c, "", 2000);
	expect_line(c, "second", 2000);

	/* a line in three writes, with reads in between */
	put(l.master, "hel");
	assert_int_equal(read_status(c, 50), KCON_TIMEOUT);
	put(l.master, "lo wor");
	assert_int_equal(read_status(c, 50), KCON_TIMEOUT);
	put(l.master, "ld\r\nnext\r\n");
	expect_line(c, "hello world", 2000);
	expect_line(c, "next", 2000);

	kconsole_close(c);
	line_close(&l);
}

static void test_pty_timeout(void **state)
{
	struct line l;
	struct kconsole *c;
	char spec[80];
	int64_t t0, dt;

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	t0 = kclock_ms();
	assert_int_equal(read_status(c, 200), KCON_TIMEOUT);
	dt = kclock_ms() - t0;
	assert_true(dt >= 200 && dt < 1000);
	/* a deadline in the past still hands out what is there */
	put(l.master, "ready\n");
	usleep(20000);
	{
		struct sbuf s;

		sbuf_init(&s);
		assert_int_equal(kconsole_read_line(c, kclock_ms() - 1, &s),
				 KCON_LINE);
		assert_string_equal(sbuf_str(&s), "ready");
		sbuf_free(&s);
	}
	kconsole_close(c);
	line_close(&l);
}

/* "login: " has no newline, and SUCCESS_LINE must still see it. */
static void test_pty_prompt(void **state)
{
	struct line l;
	struct kconsole *c;
	char spec[80];
	int64_t t0, dt;

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	put(l.master, "Welcome\r\nbuildroot login: ");
	t0 = kclock_ms();
	expect_line(c, "Welcome", 2000);
	expect_line(c, "buildroot login: ", 5000);
	dt = kclock_ms() - t0;
	assert_true(dt >= 200 && dt < 2000);
	kconsole_close(c);
	line_close(&l);
}

/* Writes buf on fd from a child, which the pty's buffer would block. */
static pid_t writer(int fd, const char *buf, size_t n)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10);	/* not left behind should the test fail */
		while (n) {
			ssize_t w = write(fd, buf, n);

			if (w <= 0)
				_exit(1);
			buf += w;
			n -= (size_t)w;
		}
		_exit(0);
	}
	return pid;
}

static void test_pty_long_line(void **state)
{
	size_t big = 200 * 1024, got = 0;
	char *data = malloc(big + 16);
	struct line l;
	struct kconsole *c;
	char spec[80];
	struct sbuf s;
	int st, pieces = 0;
	pid_t pid;

	(void)state;
	for (size_t i = 0; i < big; i++)
		data[i] = (char)('a' + i % 26);
	memcpy(data + big, "\r\nafter\n", 8);
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	pid = writer(l.master, data, big + 8);

	sbuf_init(&s);
	while (got < big) {
		assert_int_equal(kconsole_read_line(c, kclock_ms() + 5000, &s),
				 KCON_LINE);
		assert_true(s.len <= 64 * 1024);
		if (got + s.len < big)
			assert_int_equal(s.len, 64 * 1024);
		assert_memory_equal(s.buf, data + got, s.len);
		got += s.len;
		pieces++;
	}
	assert_int_equal(got, big);
	assert_int_equal(pieces, 4);	/* 64 + 64 + 64 + 8 KiB */
	expect_line(c, "after", 5000);
	sbuf_free(&s);

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kconsole_close(c);
	line_close(&l);
	free(data);
}

/* ---- vanishing ------------------------------------------------------------- */

/*
 * The far end closes (qemu exited without a relay). What was read stays
 * (a line cut short comes out as it is), then the console is gone. A pty
 * named directly is gone for good: the kernel gives its number to the next
 * pty, which is someone else's, and must not be opened.
 */
static void test_pty_far_end_closes(void **state)
{
	struct line l, other;
	struct kconsole *c;
	char spec[80];
	int64_t t0;
	int fd;

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	put(l.master, "l1\nl2\ntail");
	expect_line(c, "l1", 2000);	/* the rest is in our buffer now */
	line_close(&l);
	expect_line(c, "l2", 2000);
	expect_line(c, "tail", 2000);
	t0 = kclock_ms();
	assert_int_equal(read_status(c, 300), KCON_GONE);
	/* at the deadline, so that a caller looping on GONE cannot spin */
	assert_true(kclock_ms() - t0 >= 300);
	contains(kconsole_error(c), spec);
	contains(kconsole_error(c), "gone for good");

	/* the next pty most likely gets the same number: not ours */
	line_open(&other);
	put(other.master, "someone else's terminal\n");
	assert_int_equal(read_status(c, 300), KCON_GONE);
	fd = open(other.slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	assert_int_equal(kconsole_write(c, "x", 1), -1);
	kconsole_close(c);
	line_close(&other);
}

/*
 * The serial line vanishes and comes back under a stable name, as a USB
 * serial re-enumerates (udev moves /dev/serial/by-id/...) or a relay
 * restarts (socat link=): a symlink that another process re-points to a new
 * pty while the console waits. Lines before (including a partial one) and
 * after arrive, in order, none lost.
 */
static void test_symlink_vanish_and_come_back(void **state)
{
	char dir[256], link[300], spec[320];
	struct line a, b;
	struct kconsole *c;
	int64_t t0;
	pid_t relay;
	int st;

	(void)state;
	scratch(dir, sizeof(dir));
	snprintf(link, sizeof(link), "%s/ttyV0", dir);
	line_open(&a);
	relink(a.slave, link);
	snprintf(spec, sizeof(spec), "serial:%s", link);
	c = open_console(spec, true);
	assert_string_equal(kconsole_driver(c), "serial");
	put(a.master, "a1\na2\n");
	expect_line(c, "a1", 2000);
	expect_line(c, "a2", 2000);
	put(a.master, "a3\npart");
	expect_line(c, "a3", 2000);

	relay = fork();
	assert_true(relay >= 0);
	if (relay == 0) {
		/* the restarted relay: a new pty, the name moved, then output */
		alarm(10);	/* not left behind should the test fail */
		close(a.master);
		usleep(300000);
		line_open(&b);
		relink(b.slave, link);
		put(b.master, "b1\r\nb2\r\n");
		pause();
		_exit(0);
	}
	line_close(&a);
	t0 = kclock_ms();
	expect_line(c, "part", 2000);
	expect_line(c, "b1", 5000);
	assert_true(kclock_ms() - t0 >= 250);
	expect_line(c, "b2", 2000);
	assert_int_equal(kconsole_write(c, "hi\n", 3), 0);

	kill(relay, SIGTERM);
	assert_int_equal(waitpid(relay, &st, 0), relay);
	kconsole_close(c);
	rm_scratch(dir);
}

/*
 * The name disappears for longer than the caller waits: KCON_GONE with the
 * reason; the next read, once it is back, opens it again.
 */
static void test_symlink_gone_then_back(void **state)
{
	char dir[256], link[300], spec[320];
	struct line a, b;
	struct kconsole *c;
	int64_t t0, dt;

	(void)state;
	scratch(dir, sizeof(dir));
	snprintf(link, sizeof(link), "%s/console", dir);
	line_open(&a);
	relink(a.slave, link);
	snprintf(spec, sizeof(spec), "pty:%s", link);
	c = open_console(spec, true);
	put(a.master, "before\n");
	expect_line(c, "before", 2000);

	line_open(&b);		/* before a closes: another number */
	line_close(&a);
	unlink(link);
	t0 = kclock_ms();
	assert_int_equal(read_status(c, 300), KCON_GONE);
	dt = kclock_ms() - t0;
	assert_true(dt >= 300 && dt < 1500);
	contains(kconsole_error(c), "did not come back");
	contains(kconsole_error(c), link);
	assert_int_equal(read_status(c, 100), KCON_GONE);

	put(b.master, "after\n");
	relink(b.slave, link);
	expect_line(c, "after", 2000);
	kconsole_close(c);
	line_close(&b);
	rm_scratch(dir);
}

/* kconsole_reopen() on a live line: the stream goes on, a partial too. */
static void test_pty_reopen(void **state)
{
	struct line l;
	struct kconsole *c;
	char spec[80];
	int64_t t0, t1, opened;

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	t0 = kclock_ms();
	c = open_console(spec, true);
	opened = kconsole_opened_ms(c);
	assert_true(opened >= t0 && opened <= kclock_ms());
	put(l.master, "x\npart");
	expect_line(c, "x", 2000);
	usleep(20000);
	t1 = kclock_ms();
	assert_int_equal(kconsole_reopen(c, kclock_ms() + 1000), 0);
	/* the reopen is the console's new age */
	assert_true(kconsole_opened_ms(c) >= t1);
	assert_true(kconsole_opened_ms(c) > opened);
	put(l.master, "ial\n");
	expect_line(c, "partial", 2000);
	kconsole_close(c);
	line_close(&l);
}

/* ---- exclusive ------------------------------------------------------------- */

static void test_exclusive(void **state)
{
	char dir[256], link[300], spec[320], pid[32];
	struct line l;
	struct kconsole *c, *c2;
	const char *e;

	(void)state;
	line_open(&l);
	snprintf(spec, sizeof(spec), "pty:%s", l.slave);
	c = open_console(spec, true);
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());

	e = open_fails(spec, true);
	contains(e, l.slave);
	contains(e, "in use");
	contains(e, pid);

	/* another name for the same device */
	scratch(dir, sizeof(dir));
	snprintf(link, sizeof(link), "%s/ttyS9", dir);
	relink(l.slave, link);
	snprintf(spec, sizeof(spec), "serial:%s", link);
	e = open_fails(spec, true);
	contains(e, link);
	contains(e, l.slave);
	contains(e, "in use");

	/* without the lock both may read (the user asked for it) */
	kconsole_close(c);
	c = open_console(spec, false);
	c2 = open_console(spec, false);
	kconsole_close(c2);
	kconsole_close(c);

	/* and the lock goes with the console */
	c = open_console(spec, true);
	kconsole_close(c);
	c = open_console(spec, true);
	kconsole_close(c);
	line_close(&l);
	rm_scratch(dir);
}

/* ---- tcp --------------------------------------------------------------------- */

static int listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 4), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return s;
}

/* The console server: ser2net dropping its client, then taking it again. */
static void __attribute__((noreturn)) tcp_server(int ls)
{
	char buf[64];
	ssize_t n;
	int s;

	alarm(10);	/* not left behind should the test fail */
	s = accept(ls, NULL, NULL);
	if (s < 0 || write(s, "t1\r\nt2\r\npart", 12) != 12)
		_exit(1);
	close(s);
	usleep(200000);
	s = accept(ls, NULL, NULL);
	if (s < 0 || write(s, "t3\r\n", 4) != 4)
		_exit(2);
	n = read(s, buf, sizeof(buf));	/* "ping\n" from the console */
	if (n != 5 || memcmp(buf, "ping\n", 5))
		_exit(3);
	if (write(s, "got ping\r\n", 10) != 10)
		_exit(4);
	while (read(s, buf, sizeof(buf)) > 0)	/* until the console closes */
		;
	_exit(0);
}

static void test_tcp_reconnect(void **state)
{
	struct kconsole *c;
	char spec[64];
	int ls, port, st;
	pid_t srv;

	(void)state;
	ls = listener(&port);
	srv = fork();
	assert_true(srv >= 0);
	if (srv == 0)
		tcp_server(ls);
	close(ls);
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%d", port);
	c = open_console(spec, true);
	assert_string_equal(kconsole_driver(c), "tcp");
	expect_line(c, "t1", 2000);
	expect_line(c, "t2", 2000);
	expect_line(c, "part", 2000);
	expect_line(c, "t3", 5000);
	assert_int_equal(kconsole_write(c, "ping\n", 5), 0);
	expect_line(c, "got ping", 2000);
	kconsole_close(c);
	assert_int_equal(waitpid(srv, &st, 0), srv);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_tcp_gone(void **state)
{
	struct kconsole *c;
	char spec[64];
	int ls, port, s;
	const char *e;

	(void)state;
	ls = listener(&port);
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%d", port);
	c = open_console(spec, true);
	s = accept(ls, NULL, NULL);
	assert_true(s >= 0);
	put(s, "bye\n");
	close(s);
	close(ls);		/* nobody listens any more */
	expect_line(c, "bye", 2000);
	assert_int_equal(read_status(c, 300), KCON_GONE);
	contains(kconsole_error(c), "127.0.0.1");
	contains(kconsole_error(c), "refused");
	kconsole_close(c);

	e = open_fails(spec, true);
	contains(e, "tcp console 127.0.0.1:");
	contains(e, "Connection refused");
}

/* ---- command consoles ---------------------------------------------------- */

static struct kconsole *open_command(const char *cmd, int sig)
{
	struct kconsole_opts o = { .spec = cmd, .close_signal = sig };
	struct kconsole *c;
	char err[512] = "";

	c = kconsole_open(&o, err, sizeof(err));
	if (!c)
		fail_msg("kconsole_open(%s): %s", cmd, err);
	assert_string_equal(kconsole_driver(c), "command");
	return c;
}

/* Closes c; returns how long that took (ms). */
static int64_t timed_close(struct kconsole *c)
{
	int64_t t0 = kclock_ms();

	kconsole_close(c);
	return kclock_ms() - t0;
}

static void test_command_group_killed(void **state)
{
	struct kconsole *c;
	pid_t sleeper;

	(void)state;
	c = open_command("sh -c 'echo one; echo two; sleep 100'", 0);
	expect_line(c, "one", 5000);
	expect_line(c, "two", 5000);
	sleeper = find_in_console("sleep");
	/* SIGINT (the default) is enough here: no grace period needed */
	assert_true(timed_close(c) < 900);
	assert_true(dead_within(sleeper, 2000));
}

/* CLOSE_CONSOLE_SIGNAL=INT against a command that ignores it: SIGKILL. */
static void test_command_needs_kill(void **state)
{
	struct kconsole *c;
	pid_t sleeper;
	int64_t dt;

	(void)state;
	c = open_command("trap '' INT; echo ready; sleep 100; echo survived",
			 SIGINT);
	expect_line(c, "ready", 5000);
	sleeper = find_in_console("sleep");
	dt = timed_close(c);
	assert_true(dt >= 900 && dt < 3000);
	assert_true(dead_within(sleeper, 2000));
}

static void test_command_close_signal(void **state)
{
	char dir[256], file[300], cmd[700], got[32] = "";
	struct kconsole *c;
	FILE *f;

	(void)state;
	scratch(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/sig", dir);
	snprintf(cmd, sizeof(cmd),
		 "trap 'echo TERM > %s; exit 0' TERM; trap '' INT; echo ready; "
		 "while :; do sleep 0.05; done", file);
	c = open_command(cmd, SIGTERM);
	expect_line(c, "ready", 5000);
	assert_true(timed_close(c) < 900);
	f = fopen(file, "re");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "TERM\n");
	rm_scratch(dir);
}

/* ktest run with SIGINT ignored must still stop its console with SIGINT. */
static void test_command_ignored_int_reset(void **state)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct kconsole *c;

	(void)state;
	sigaction(SIGINT, &ign, &old);
	c = open_command("echo ready; sleep 100", 0);
	expect_line(c, "ready", 5000);
	/*
	 * Not before sleep runs: dash catches SIGINT under -c, and one that
	 * lands between its fork and the exec of sleep is lost in the child
	 * (the KILL after the grace period is there for that).
	 */
	find_in_console("sleep");
	assert_true(timed_close(c) < 900);
	sigaction(SIGINT, &old, NULL);
}

/* Bytes written reach the command once (no echo from the pty). */
static void test_command_write(void **state)
{
	struct kconsole *c;

	(void)state;
	c = open_command("cat", 0);
	assert_int_equal(kconsole_write(c, "hello\n", 6), 0);
	expect_line(c, "hello", 5000);
	assert_int_equal(kconsole_write(c, "a\r\nb\n", 5), 0);
	expect_line(c, "a", 5000);
	expect_line(c, "b", 5000);
	assert_int_equal(read_status(c, 300), KCON_TIMEOUT);
	kconsole_close(c);
}

/* A console command that exits is run again, at most once a second. */
static void test_command_exits(void **state)
{
	struct kconsole *c;
	int64_t t0;

	(void)state;
	c = open_command("echo hi; printf 'no newline'", 0);
	t0 = kclock_ms();
	expect_line(c, "hi", 5000);
	expect_line(c, "no newline", 5000);
	expect_line(c, "hi", 5000);
	assert_true(kclock_ms() - t0 >= 900);
	expect_line(c, "no newline", 5000);
	kconsole_close(c);
}

/* ktest.pl put its own terminal in cbreak mode; we leave it alone. */
static void test_own_terminal_untouched(void **state)
{
	struct termios before, after;
	struct kconsole *c;
	struct line tty;
	int saved, fd;

	(void)state;
	line_open(&tty);
	fd = open(tty.slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* the terminal ktest runs in: a cooked one, as a shell leaves it */
	{
		struct termios t;

		assert_int_equal(tcgetattr(fd, &t), 0);
		t.c_lflag |= ICANON | ECHO;
		t.c_iflag |= ICRNL;
		assert_int_equal(tcsetattr(fd, TCSANOW, &t), 0);
	}
	saved = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	assert_true(dup2(fd, STDIN_FILENO) == STDIN_FILENO);
	assert_int_equal(tcgetattr(STDIN_FILENO, &before), 0);

	c = open_command("cat", 0);
	assert_int_equal(kconsole_write(c, "x\n", 2), 0);
	expect_line(c, "x", 5000);
	kconsole_close(c);

	assert_int_equal(tcgetattr(STDIN_FILENO, &after), 0);
	assert_int_equal(before.c_iflag, after.c_iflag);
	assert_int_equal(before.c_oflag, after.c_oflag);
	assert_int_equal(before.c_cflag, after.c_cflag);
	assert_int_equal(before.c_lflag, after.c_lflag);
	assert_memory_equal(before.c_cc, after.c_cc, sizeof(before.c_cc));
	if (saved >= 0) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	} else {
		close(STDIN_FILENO);
	}
	close(fd);
	line_close(&tty);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fd_setup, fd_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_spec_errors),
		T(test_serial_errors),
		T(test_pty_lines),
		T(test_pty_timeout),
		T(test_pty_prompt),
		T(test_pty_long_line),
		T(test_pty_far_end_closes),
		T(test_symlink_vanish_and_come_back),
		T(test_symlink_gone_then_back),
		T(test_pty_reopen),
		T(test_exclusive),
		T(test_tcp_reconnect),
		T(test_tcp_gone),
		T(test_command_group_killed),
		T(test_command_needs_kill),
		T(test_command_close_signal),
		T(test_command_ignored_int_reset),
		T(test_command_write),
		T(test_command_exits),
		T(test_own_terminal_untouched),
	};

	/* orphaned console processes come to us, so we can see them die */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
