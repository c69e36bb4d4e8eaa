/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the tests that build or boot the real kernel share: finding the lab
 * scripts (tests/lab/), running them, shell one-liners that must work, and
 * progress lines with the time since the start, so a slow machine shows
 * life. Include after cmocka.h.
 */
#ifndef KTEST_TEST_KERNEL_LAB_H
#define KTEST_TEST_KERNEL_LAB_H

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"

static long lab_t0;

static inline long lab_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void progress(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void progress(const char *fmt, ...)
{
	va_list ap;

	printf("[%4ld s] ", (lab_now_ms() - lab_t0) / 1000);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* A helper's output: shown as it comes, the last line kept. */
struct lab_capture {
	char *last;
};

static inline void lab_capture_line(void *ctx, const char *line, size_t len)
{
	struct lab_capture *c = ctx;

	printf("  | %s\n", line);
	fflush(stdout);
	free(c->last);
	c->last = xstrndup(line, len);
}

/* Runs "sh SCRIPT ARGS"; returns its last line (a path or a command). */
static inline char *lab_run(const char *script, const char *args)
{
	struct lab_capture c = { NULL };
	struct kcmd_opts o = { .on_line = lab_capture_line, .ctx = &c,
			       .stdin_null = true };
	struct kcmd_result r;
	char *cmd = xasprintf("sh %s %s", script, args);
	char how[64];

	if (kcmd_run(cmd, &o, &r) < 0)
		fail_msg("cannot run %s: %s", cmd, strerror(errno));
	if (r.status != 0 || !c.last)
		fail_msg("%s: %s", cmd, kcmd_describe(&r, how, sizeof(how)));
	free(cmd);
	return c.last;
}

/* A shell command that must succeed. */
static inline void sh(const char *cmd)
{
	struct kcmd_result r;
	char how[64];

	if (kcmd_run(cmd, NULL, &r) < 0 || r.status != 0)
		fail_msg("%s: %s", cmd, kcmd_describe(&r, how, sizeof(how)));
}

/*
 * tests/lab/NAME: under $KTEST_SRC, the current directory, or next to the
 * test binary (build/tests/test_x -> ../../tests/lab/NAME). NULL when none.
 */
static inline char *lab_script(const char *name)
{
	const char *src = getenv("KTEST_SRC");
	char exe[4096], *rel = xasprintf("tests/lab/%s", name);
	ssize_t n;
	char *p;

	if (src) {
		p = xasprintf("%s/%s", src, rel);
		goto out;
	}
	if (!access(rel, R_OK)) {
		p = realpath(rel, NULL);
		goto out;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		p = xasprintf("%s/../../%s", dirname(exe), rel);
		if (!access(p, R_OK))
			goto out;
		free(p);
	}
	p = NULL;
out:
	free(rel);
	return p;
}

#endif
