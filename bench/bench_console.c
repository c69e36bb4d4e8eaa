// SPDX-License-Identifier: GPL-2.0-only
/*
 * Console line latency: a pty as the serial line, one line written on its
 * master, the time until kconsole_read_line() hands it over; 1000 times.
 * Prints one row for bench/run.sh's table: median / p99 in microseconds.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"

#define ROUNDS 1000
#define WARMUP 50

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int die(const char *what, const char *why)
{
	fprintf(stderr, "bench_console: %s: %s\n", what, why);
	return 1;
}

int main(void)
{
	static int64_t us[ROUNDS];
	char slave[64], spec[80], err[512], msg[64];
	struct kconsole_opts o = { .spec = spec, .exclusive = true };
	struct kconsole *c;
	struct termios t;
	struct sbuf l;
	int m, i;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m) ||
	    ptsname_r(m, slave, sizeof(slave)))
		return die("pty", "cannot make one");
	tcgetattr(m, &t);
	cfmakeraw(&t);
	tcsetattr(m, TCSANOW, &t);
	snprintf(spec, sizeof(spec), "pty:%s", slave);
	c = kconsole_open(&o, err, sizeof(err));
	if (!c)
		return die("open", err);
	sbuf_init(&l);
	for (i = -WARMUP; i < ROUNDS; i++) {
		int n = snprintf(msg, sizeof(msg), "[    1.%06d] line %d\n",
				 i + WARMUP, i);
		int64_t t0 = now_ns();

		if (write(m, msg, (size_t)n) != n)
			return die("write", "short");
		if (kconsole_read_line(c, kclock_ms() + 2000, &l) != KCON_LINE)
			return die("read", kconsole_error(c));
		if (i >= 0)
			us[i] = (now_ns() - t0) / 1000;
	}
	qsort(us, ROUNDS, sizeof(us[0]), cmp);
	snprintf(msg, sizeof(msg), "%lld / %lld", (long long)us[ROUNDS / 2],
		 (long long)us[ROUNDS * 99 / 100]);
	printf("%-42s %s\n", "console line latency (us), median / p99", msg);
	sbuf_free(&l);
	kconsole_close(c);
	close(m);
	return 0;
}
