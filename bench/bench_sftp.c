// SPDX-License-Identifier: GPL-2.0-only
/*
 * SFTP upload throughput: kssh_upload() of a 64 MiB file to the lab's real
 * OpenSSH sshd on 127.0.0.1 (tests/lab/sshd.sh, started and stopped here as
 * the tests do), over one session, 3 times. What a kernel image or a
 * modules tarball costs to install, without the network. Prints one row
 * for bench/run.sh's table: the median MiB/s, and the slowest / fastest.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/ssh.h"
#include "tests/unit/sshlab.h"

#define SIZE	(64 << 20)
#define ROUNDS	3

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int die(const char *what, const char *why)
{
	fprintf(stderr, "bench_sftp: %s: %s\n", what, why);
	return 1;
}

/* Random bytes, so nothing on the way can make them smaller. */
static int make_file(const char *path)
{
	char *buf = xmalloc(1 << 20);
	int in = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int i, ret = -1;

	if (in < 0 || out < 0)
		goto out;
	for (i = 0; i < SIZE >> 20; i++)
		if (read(in, buf, 1 << 20) != 1 << 20 ||
		    write(out, buf, 1 << 20) != 1 << 20)
			goto out;
	ret = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		ret = -1;
	free(buf);
	return ret;
}

/*
 * bench/run.sh runs us from a scratch directory: find tests/lab/sshd.sh
 * from where this program is (O/bench/bench_sftp, O one below the top).
 */
static void find_top(void)
{
	char exe[4096], *slash;
	ssize_t n;
	int i;

	if (getenv("KTEST_SRC"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	for (i = 0; i < 3; i++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return;
		*slash = '\0';
	}
	setenv("KTEST_SRC", exe, 0);
}

int main(void)
{
	struct sshlab lab;
	struct kssh_opts o;
	struct kssh *s = NULL;
	enum kssh_fail fail;
	double mibs[ROUNDS];
	char why[2048], row[96], *local = NULL, *remote = NULL;
	struct stat st;
	int i, ret = 1;

	find_top();
	if (sshlab_start(&lab, "bench_sftp") < 0)
		goto out;
	local = sshlab_path(&lab, "image.local");
	remote = sshlab_path(&lab, "image.remote");
	if (make_file(local) < 0) {
		ret = die(local, "cannot write it");
		goto out;
	}
	o = sshlab_opts(&lab);
	s = kssh_connect(&o, &fail, why, sizeof(why));
	if (!s) {
		ret = die("connect", why);
		goto out;
	}
	for (i = 0; i < ROUNDS; i++) {
		int64_t t0 = now_ns();

		if (kssh_upload(s, local, remote, 0644) < 0) {
			ret = die("upload", kssh_error(s));
			goto out;
		}
		mibs[i] = (double)SIZE / (1 << 20) /
			  ((double)(now_ns() - t0) / 1e9);
		if (stat(remote, &st) < 0 || st.st_size != SIZE) {
			ret = die(remote, "not all of it arrived");
			goto out;
		}
	}
	qsort(mibs, ROUNDS, sizeof(mibs[0]), cmp);
	snprintf(row, sizeof(row), "%.0f (%.0f-%.0f)", mibs[ROUNDS / 2],
		 mibs[0], mibs[ROUNDS - 1]);
	printf("%-42s %s\n", "sftp upload 64 MiB, loopback (MiB/s)", row);
	ret = 0;
out:
	kssh_close(s);
	free(local);
	free(remote);
	if (sshlab_stop(&lab) < 0 && !ret)
		ret = die("sshd", "did not stop");
	return ret;
}
