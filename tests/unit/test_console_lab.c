// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lab consoles against the real programs: ser2net 4 (Debian 12) on
 * 127.0.0.1, a free port, its own YAML config in a scratch directory,
 * serving a pty whose master is the box's side of the serial line; in raw
 * mode (tcp:), telnet mode (telnet:) and telnet with RFC 2217 (telnet:,
 * the COM-PORT-OPTION refused). Lines arrive whole and in order, 255 bytes
 * both ways, the console comes back when ser2net restarts, and a dead
 * ser2net is named by host:port. The telnet filter is tested alone too,
 * a byte at a time. Each ser2net is stopped by its pid, also when a test
 * fails (the child dies with us: PR_SET_PDEATHSIG).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "console/console_int.h"

#define SER2NET "/usr/sbin/ser2net"

/* ---- the telnet filter alone ---------------------------------------------- */

/* Feeds in (len bytes) one byte at a time; data into data, answers into rep. */
static void feed(struct kcon_telnet *t, const char *in, size_t len,
		 struct sbuf *data, struct sbuf *rep)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char b = in[i];

		if (kcon_telnet_filter(t, &b, 1, rep))
			sbuf_addc(data, b);
	}
}

static void test_telnet_filter(void **state)
{
	/* ser2net's opening offers, RFC 2217's DO COM-PORT, then data */
	static const char in[] =
		"\xff\xfb\x03\xff\xfd\x03\xff\xfb\x01\xff\xfe\x01\xff\xfd\x00"
		"\xff\xfb\x00\xff\xfd\x2c"
		"a\xff\xff" "b\r\n"
		"\xff\xfa\x2c\x01\xff\xff\x00\xff\xf0"	/* SB ... 255 ... SE */
		"c\xff\xf1" "d\r\x00" "e\n"		/* NOP, CR NUL */
		"\xff\xfb\x03\xff\xfd\x00";		/* again: no answer */
	static const char want_rep[] =
		"\xff\xfd\x03"		/* DO SGA */
		"\xff\xfb\x03"		/* WILL SGA */
		"\xff\xfd\x01"		/* DO ECHO */
		"\xff\xfb\x00"		/* WILL BINARY */
		"\xff\xfd\x00"		/* DO BINARY */
		"\xff\xfc\x2c";		/* WONT COM-PORT-OPTION */
	struct kcon_telnet t;
	struct sbuf data, rep;

	(void)state;
	kcon_telnet_reset(&t);
	sbuf_init(&data);
	sbuf_init(&rep);
	feed(&t, in, sizeof(in) - 1, &data, &rep);
	/* binary on: CR NUL stays as it is */
	assert_int_equal(data.len, 11);
	assert_memory_equal(data.buf, "a\xff" "b\r\nc" "d\r\x00" "e\n", 11);
	assert_int_equal(rep.len, sizeof(want_rep) - 1);
	assert_memory_equal(rep.buf, want_rep, rep.len);
	sbuf_free(&data);
	sbuf_free(&rep);
}

static void test_telnet_refusals(void **state)
{
	static const char in[] =
		"x\r\0y"		/* not binary: CR NUL is CR */
		"\xff\xfd\x18"		/* DO TERMINAL-TYPE */
		"\xff\xfb\x1f"		/* WILL NAWS */
		"\xff\xfe\x03"		/* DONT SGA: never on, no answer */
		"\xff\xfb\x01\xff\xfc\x01"	/* WILL ECHO, WONT ECHO */
		"\xff\xfd\x01";		/* DO ECHO: we do not echo */
	static const char want_rep[] =
		"\xff\xfc\x18" "\xff\xfe\x1f" "\xff\xfd\x01" "\xff\xfe\x01"
		"\xff\xfc\x01";
	struct kcon_telnet t;
	struct sbuf data, rep;

	(void)state;
	kcon_telnet_reset(&t);
	sbuf_init(&data);
	sbuf_init(&rep);
	feed(&t, in, sizeof(in) - 1, &data, &rep);
	assert_int_equal(data.len, 3);
	assert_memory_equal(data.buf, "x\ry", 3);
	assert_int_equal(rep.len, sizeof(want_rep) - 1);
	assert_memory_equal(rep.buf, want_rep, rep.len);
	sbuf_free(&data);
	sbuf_free(&rep);
}

/* ---- ser2net --------------------------------------------------------------- */

struct lab {
	char dir[64];		/* scratch: config and log */
	int master;		/* the box's side of the serial line */
	char slave[64];
	int port;
	pid_t pid;		/* ser2net, or 0 */
};

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
	close(s);
	return ntohs(a.sin_port);
}

static void write_config(struct lab *l, const char *accepter)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/ser2net.yaml", l->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%%YAML 1.1\n---\n"
		"connection: &box\n"
		"  accepter: %s,127.0.0.1,%d\n"
		"  connector: serialdev,%s,115200n81,local\n"
		"  options:\n"
		"    kickolduser: true\n", accepter, l->port, l->slave);
	assert_int_equal(fclose(f), 0);
}

static void start_ser2net(struct lab *l)
{
	char conf[128], log[128];
	pid_t pid;

	snprintf(conf, sizeof(conf), "%s/ser2net.yaml", l->dir);
	snprintf(log, sizeof(log), "%s/ser2net.log", l->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 ||
		    chdir(l->dir) < 0)
			_exit(126);
		execl(SER2NET, "ser2net", "-n", "-d", "-u", "-c", conf,
		      (char *)NULL);
		_exit(127);
	}
	l->pid = pid;
}

static void stop_ser2net(struct lab *l)
{
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGTERM);
	waitpid(l->pid, NULL, 0);
	l->pid = 0;
}

static int lab_setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));
	struct termios t;

	if (access(SER2NET, X_OK)) {
		free(l);
		return 0;
	}
	snprintf(l->dir, sizeof(l->dir), "/tmp/ktest-s2n.XXXXXX");
	if (!mkdtemp(l->dir))
		return -1;
	l->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (l->master < 0 || grantpt(l->master) || unlockpt(l->master) ||
	    ptsname_r(l->master, l->slave, sizeof(l->slave)) ||
	    tcgetattr(l->master, &t))
		return -1;
	cfmakeraw(&t);
	if (tcsetattr(l->master, TCSANOW, &t))
		return -1;
	l->port = free_port();
	*state = l;
	return 0;
}

static int lab_teardown(void **state)
{
	struct lab *l = *state;
	char cmd[128];

	if (!l)
		return 0;
	stop_ser2net(l);
	close(l->master);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l->dir);
	if (system(cmd) != 0)
		return -1;
	free(l);
	return 0;
}

static struct lab *lab_of(void **state)
{
	if (!*state)
		skip();	/* ser2net is not installed: .ci/deps.sh installs it */
	return *state;
}

/* The console once ser2net listens (it takes a moment to start). */
static struct kconsole *connect_console(const char *spec)
{
	struct kconsole_opts o = { .spec = spec };
	int64_t until = kclock_ms() + 5000;
	char err[512] = "";

	for (;;) {
		struct kconsole *c = kconsole_open(&o, err, sizeof(err));

		if (c)
			return c;
		if (kclock_ms() > until)
			fail_msg("%s: %s", spec, err);
		poll(NULL, 0, 50);
	}
}

static void put(int fd, const char *s, size_t n)
{
	assert_int_equal(write(fd, s, n), (ssize_t)n);
}

/*
 * ser2net opens the serial side when a client comes: until then what the
 * box says is not read. Says "sync" until a line comes through, then
 * "ready", and eats lines up to "ready".
 */
static void sync_console(struct lab *l, struct kconsole *c)
{
	int64_t until = kclock_ms() + 10000;
	struct sbuf line;

	sbuf_init(&line);
	for (;;) {
		put(l->master, "sync\r\n", 6);
		if (kconsole_read_line(c, kclock_ms() + 200, &line) ==
		    KCON_LINE)
			break;
		if (kclock_ms() > until)
			fail_msg("nothing came through ser2net in 10 s: %s",
				 kconsole_error(c));
	}
	put(l->master, "ready\r\n", 7);
	do {
		if (kconsole_read_line(c, kclock_ms() + 2000, &line) !=
		    KCON_LINE)
			fail_msg("no 'ready' through ser2net: %s",
				 kconsole_error(c));
	} while (strcmp(sbuf_str(&line), "ready"));
	sbuf_free(&line);
}

static void expect_line(struct kconsole *c, const char *want, size_t n,
			int ms)
{
	struct sbuf l;
	enum kcon_status st;

	sbuf_init(&l);
	st = kconsole_read_line(c, kclock_ms() + ms, &l);
	if (st != KCON_LINE)
		fail_msg("wanted '%s', got status %d (%s)", want, st,
			 kconsole_error(c));
	if (l.len != n || memcmp(l.buf, want, n))
		fail_msg("wanted '%s', got '%s'", want, sbuf_str(&l));
	sbuf_free(&l);
}

/* 200 numbered lines in bursts, one with a 255 in it: whole and in order. */
static void lines_in_order(struct lab *l, struct kconsole *c)
{
	char buf[128];
	int i;

	for (i = 0; i < 200; i++) {
		int n = snprintf(buf, sizeof(buf),
				 "[%8d.000000] line %d of the boot\r\n", i, i);

		put(l->master, buf, (size_t)n);
	}
	put(l->master, "ff \xff here\r\n", 11);
	for (i = 0; i < 200; i++) {
		int n = snprintf(buf, sizeof(buf),
				 "[%8d.000000] line %d of the boot", i, i);

		expect_line(c, buf, (size_t)n, 3000);
	}
	expect_line(c, "ff \xff here", 9, 3000);
}

/* What the console writes reaches the box, a 255 as one 255. */
static void box_reads(struct lab *l, struct kconsole *c)
{
	char got[16];
	size_t n = 0;

	assert_int_equal(kconsole_write(c, "k\xffy\n", 4), 0);
	while (n < 4) {
		ssize_t r;

		assert_true(kcon_poll_one(l->master, POLLIN,
					  kclock_ms() + 3000) > 0);
		r = read(l->master, got + n, sizeof(got) - n);
		assert_true(r > 0);
		n += (size_t)r;
	}
	assert_int_equal(n, 4);
	assert_memory_equal(got, "k\xffy\n", 4);
}

static void run_mode(void **state, const char *accepter, const char *scheme)
{
	struct lab *l = lab_of(state);
	struct kconsole *c;
	char spec[64], where[32];
	int64_t t0;

	write_config(l, accepter);
	start_ser2net(l);
	snprintf(spec, sizeof(spec), "%s:127.0.0.1:%d", scheme, l->port);
	c = connect_console(spec);
	assert_string_equal(kconsole_driver(c), scheme);
	sync_console(l, c);
	lines_in_order(l, c);
	box_reads(l, c);

	/* ser2net restarts: the console comes back by itself */
	stop_ser2net(l);
	start_ser2net(l);
	sync_console(l, c);
	put(l->master, "after restart\r\n", 15);
	expect_line(c, "after restart", 13, 3000);

	/* ser2net dies for good: GONE at the deadline, naming host:port */
	stop_ser2net(l);
	t0 = kclock_ms();
	{
		struct sbuf line;
		enum kcon_status st;

		sbuf_init(&line);
		do
			st = kconsole_read_line(c, t0 + 500, &line);
		while (st == KCON_LINE);
		sbuf_free(&line);
		assert_int_equal(st, KCON_GONE);
	}
	snprintf(where, sizeof(where), "127.0.0.1:%d", l->port);
	if (!strstr(kconsole_error(c), where) ||
	    !strstr(kconsole_error(c), "refused"))
		fail_msg("'%s' names not %s, refused", kconsole_error(c),
			 where);
	kconsole_close(c);
}

static void test_ser2net_raw(void **state)
{
	run_mode(state, "tcp", "tcp");
}

static void test_ser2net_telnet(void **state)
{
	run_mode(state, "telnet,tcp", "telnet");
}

static void test_ser2net_rfc2217(void **state)
{
	run_mode(state, "telnet(rfc2217),tcp", "telnet");
}

/* Nobody there: the open's error names the driver and host:port. */
static void test_telnet_refused(void **state)
{
	struct kconsole_opts o = { 0 };
	char spec[64], err[512] = "", want[64];
	int port = free_port();

	(void)state;
	snprintf(spec, sizeof(spec), "telnet:127.0.0.1:%d", port);
	o.spec = spec;
	assert_null(kconsole_open(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "telnet console 127.0.0.1:%d: connect",
		 port);
	if (!strstr(err, want) || !strstr(err, "refused"))
		fail_msg("'%s' does not say '%s ... refused'", err, want);
	o.spec = "telnet:nohost";
	assert_null(kconsole_open(&o, err, sizeof(err)));
	if (!strstr(err, "expected telnet:HOST:PORT"))
		fail_msg("'%s'", err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_telnet_filter),
		cmocka_unit_test(test_telnet_refusals),
		cmocka_unit_test(test_telnet_refused),
		cmocka_unit_test_setup_teardown(test_ser2net_raw, lab_setup,
						lab_teardown),
		cmocka_unit_test_setup_teardown(test_ser2net_telnet, lab_setup,
						lab_teardown),
		cmocka_unit_test_setup_teardown(test_ser2net_rfc2217,
						lab_setup, lab_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
