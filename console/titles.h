/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel crash reports in console output: which line starts one, where it
 * ends, and the one-line title syzkaller (pkg/report/linux.go) would give
 * it: "KASAN: use-after-free Read in foo", "WARNING in bar", "kernel panic:
 * Attempted to kill init!". Private to the console monitor; pure.
 *
 * Lines are matched with their printk prefixes stripped ("<4>", the
 * "[   12.345678]" timestamp, the "[  T123]" caller id). A report collects
 * its lines (stripped, bounded) and, as they come, what its title needs:
 * the function on the RIP line, the frames of its first call trace, the
 * access of a KASAN report. The guilty function is the first frame that is
 * not generic (dump_stack, __warn, kasan_*, panic, mutex_lock, ...);
 * stalls and hung tasks use syzkaller's two special recipes.
 */
#ifndef KTEST_TITLES_H
#define KTEST_TITLES_H

#include <stdbool.h>
#include <stddef.h>

enum krep_kind {
	KREP_NONE = 0,
	KREP_CALL_TRACE,	/* a "Call Trace:" nothing above explains */
	KREP_PANIC,		/* Kernel panic - not syncing: */
	KREP_BUG,		/* BUG: <anything else> */
	KREP_KERNEL_BUG,	/* kernel BUG at file:line! */
	KREP_BUG_NULL,		/* BUG: kernel NULL pointer dereference */
	KREP_BUG_PAGING,	/* BUG: unable to handle page fault */
	KREP_BUG_UNABLE,	/* BUG: unable to handle kernel (cut short) */
	KREP_UNABLE,		/* Unable to handle kernel ... (arm64) */
	KREP_GPF,		/* general protection fault */
	KREP_DIVIDE,		/* divide error: */
	KREP_INVALID_OPCODE,	/* invalid opcode: */
	KREP_STACK_SEGMENT,	/* stack segment: */
	KREP_DOUBLE_FAULT,	/* PANIC: double fault */
	KREP_OOPS,		/* Oops: (with no BUG: line before it) */
	KREP_WARNING,		/* WARNING: CPU: N PID: M at file:line func */
	KREP_LOCKDEP,		/* WARNING: possible circular locking ... */
	KREP_KASAN,
	KREP_KFENCE,
	KREP_KCSAN,
	KREP_KMSAN,
	KREP_UBSAN,
	KREP_HUNG_TASK,		/* INFO: task X blocked for more than N s */
	KREP_RCU_STALL,		/* rcu: INFO: rcu_sched self-detected stall */
	KREP_SOFT_LOCKUP,	/* watchdog: BUG: soft lockup - CPU#N stuck */
	KREP_HARD_LOCKUP,	/* Watchdog detected hard LOCKUP on cpu N */
};

/* One console line, its printk prefixes stripped. */
struct kline {
	const char *text;	/* points into the caller's line */
	size_t len;
	char ctx[16];		/* caller id ("T123", "C1") or "" */
	bool kernel;		/* it had a printk timestamp */
};

/* The compiled patterns; one per monitor. */
struct krecog;

/* NULL on failure, with the reason in why (PCRE2 out of memory, ...). */
struct krecog *krecog_new(char *why, size_t whylen);
void krecog_free(struct krecog *r);

void krecog_strip(const char *line, size_t len, struct kline *out);

/* The report this line starts, or KREP_NONE. */
enum krep_kind krecog_header(const struct krecog *r, const struct kline *l);
/* The monitor's KMON_* class of a kind. */
unsigned int krep_class(enum krep_kind k);
/*
 * Lines that may also sit inside another report without starting one:
 * the "Oops:" after a "BUG: unable to handle", the "invalid opcode:" after
 * "kernel BUG at", a panic (panic_on_warn, "Fatal exception"), and any
 * "Call Trace:".
 */
bool krep_continues(enum krep_kind k);
/* A shell or getty prompt (no printk timestamp): reports end there. */
bool krecog_prompt(const struct krecog *r, const struct kline *l);
/* "CPU: 0 PID: 1 Comm: ..." (a bare call trace's report starts there) */
bool krecog_cpu_line(const struct krecog *r, const struct kline *l);

/* A report being collected. */
struct kreport;

enum kreport_add {
	KREPORT_MORE,		/* the line is part of it; it goes on */
	KREPORT_END_WITH,	/* the line is its last */
	KREPORT_END_BEFORE,	/* it ended before the line (not part) */
	KREPORT_OTHER,		/* another task's line: not part, goes on */
};

/*
 * A report of kind k, named by what its header line says; the caller then
 * adds its lines, the header (or for a bare call trace, the "CPU:" line
 * before it) first.
 */
struct kreport *kreport_new(const struct krecog *r, enum krep_kind k,
			    const struct kline *header);
void kreport_free(struct kreport *rep);
enum kreport_add kreport_add(struct kreport *rep, const struct kline *l);
/*
 * Opens an ended report again for a panic that follows it (after its "end
 * trace" or its last frame): it then runs to "---[ end Kernel panic".
 */
void kreport_reopen(struct kreport *rep);
enum krep_kind kreport_kind(const struct kreport *rep);
/* The title as far as the lines so far tell; recomputed when they change. */
const char *kreport_title(struct kreport *rep);
/* Its lines, each ended by '\n'. */
const char *kreport_text(const struct kreport *rep);

#endif
