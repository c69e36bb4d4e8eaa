/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The console monitor: what a console line means. Pure: lines and the time
 * come in, a verdict goes out; no I/O, no clock, no sleeps. The same code
 * watches a live boot (ktest's boot step) and a saved log (ktest monitor).
 *
 * ktest.pl's semantics exactly (§4.4 of the parity list): SUCCESS_LINE,
 * "call trace:" and "Kernel panic -", the backtrace-testing markers,
 * IGNORE_ERRORS, DETECT_TRIPLE_FAULT with the "Linux version" banner,
 * TIMEOUT, BOOTED_TIMEOUT, STOP_AFTER_SUCCESS, STOP_AFTER_FAILURE,
 * STOP_TEST_AFTER. Plus crash reports ktest.pl misses, each with a one-line
 * title as syzkaller names them; which classes fail a boot is configurable
 * (ktest.pl's two by default).
 */
#ifndef KTEST_MONITOR_H
#define KTEST_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Crash classes (bits). */
enum {
	KMON_CALL_TRACE = 1 << 0,	/* "Call Trace:" (ktest.pl) */
	KMON_PANIC = 1 << 1,		/* "Kernel panic - not syncing" (ktest.pl) */
	KMON_BUG = 1 << 2,		/* "BUG: ...", "kernel BUG at ..." */
	KMON_WARNING = 1 << 3,		/* "WARNING: CPU: ... at ..." */
	KMON_OOPS = 1 << 4,		/* "Oops:", general protection fault, ... */
	KMON_SANITIZER = 1 << 5,	/* KASAN, UBSAN, KFENCE, KCSAN, KMSAN */
	KMON_HANG = 1 << 6,		/* hung task, RCU stall, soft/hard lockup */
	KMON_DEFAULT_FAIL = KMON_CALL_TRACE | KMON_PANIC,
	KMON_ALL = (1 << 7) - 1,
};

struct kmon_config {
	const char *success_line;	/* PCRE2 (SUCCESS_LINE); NULL: never */
	const char *expected_version;	/* our kernelrelease, for triple faults */
	bool detect_triple_fault;
	bool ignore_errors;		/* call traces do not fail (panics do) */
	unsigned int fail_classes;	/* KMON_* that fail the boot */
	long timeout_ms;		/* TIMEOUT: silence before success */
	long booted_timeout_ms;		/* BOOTED_TIMEOUT: silence after it */
	long stop_after_success_ms;	/* < 0: off */
	long stop_after_failure_ms;	/* < 0: off */
	long stop_test_after_ms;	/* <= 0: never */
};

enum kmon_verdict {
	KMON_RUNNING,		/* not decided yet */
	KMON_BOOTED,		/* SUCCESS_LINE seen, no failing crash */
	KMON_CRASHED,		/* a failing crash was seen */
	KMON_TIMED_OUT,		/* silence (or STOP_TEST_AFTER) before booting */
	KMON_TRIPLE_FAULT,	/* another kernel booted after ours */
};

struct kmon_crash {
	unsigned int cls;	/* one KMON_* bit */
	char *title;		/* "KASAN: use-after-free Read in foo" */
	char *report;		/* the report's lines, '\n'-separated */
	bool fails;		/* in fail_classes (and not ignored) */
};

struct kmonitor;

/* Returns NULL with a reason in why (a bad SUCCESS_LINE regex). */
struct kmonitor *kmonitor_new(const struct kmon_config *c, int64_t now_ms,
			      char *why, size_t whylen);
void kmonitor_free(struct kmonitor *m);

/* A whole console line (without its '\n'; a trailing '\r' is dropped). */
void kmonitor_line(struct kmonitor *m, const char *line, size_t len,
		   int64_t now_ms);
/* Nothing arrived until now: timeouts may decide. */
void kmonitor_tick(struct kmonitor *m, int64_t now_ms);
/* The console ended (EOF, no reopen): decide with what we have. */
void kmonitor_eof(struct kmonitor *m, int64_t now_ms);

enum kmon_verdict kmonitor_verdict(const struct kmonitor *m);
/* When the monitor needs a tick at the latest (for poll's timeout). */
int64_t kmonitor_deadline(const struct kmonitor *m);
/* ktest.pl's message for the verdict ("never got a boot prompt", ...). */
const char *kmonitor_reason(const struct kmonitor *m);

size_t kmonitor_crashes(const struct kmonitor *m, const struct kmon_crash **c);
bool kmonitor_booted(const struct kmonitor *m);

/* Parses "call_trace,panic,bug" / "all" / "ktest" into KMON_* bits. */
int kmon_parse_classes(const char *s, unsigned int *out);

#endif
