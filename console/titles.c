// SPDX-License-Identifier: GPL-2.0-only
/*
 * Crash reports in console output and their titles, after syzkaller's
 * pkg/report/linux.go: the same headers, the same title formats, the same
 * list of generic frames to look past, the same recipes for stalls and hung
 * tasks. Differences are ours on purpose and marked "ktest:".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "conf/strmap.h"
#include "console/monitor.h"
#include "console/titles.h"

#define REP_MAX_LINES	400		/* a report is cut after this */
#define REP_MAX_BYTES	(64 * 1024)
#define REP_LINE_MAX	512		/* longer lines are cut in reports */
#define REP_MAX_FRAMES	64
#define REP_PRE_TRACE	40		/* lines a stack report may wait for
					 * its call trace (lockdep: 200) */
#define FN_MAX		80
#define TITLE_MAX	200

/* A function name in a frame: syzkaller's {{FUNC}} (".cold" etc. cut off) */
#define FUNC "([A-Za-z0-9_]+)(?:\\.|\\+)"
#define PC "\\[<?(?:0x)?[0-9a-f]+>?\\]"

static const struct {
	enum krep_kind kind;
	const char *re;
} hdr_pats[] = {
	/* before "BUG:": "watchdog: BUG: soft lockup" is a hang */
	{ KREP_SOFT_LOCKUP, "^(?:watchdog: )?BUG: soft lockup" },
	{ KREP_HARD_LOCKUP, "^(?:NMI watchdog: )?Watchdog detected hard LOCKUP on cpu" },
	{ KREP_RCU_STALL,
	  "^(?:rcu: )?INFO: rcu_(?:preempt|sched|bh) (?:self-)?detected(?: expedited)? stall" },
	{ KREP_HUNG_TASK, "^INFO: task .* blocked for more than [0-9]+ seconds" },
	{ KREP_KASAN, "^BUG: KASAN: ([a-z-]+(?: or [a-z-]+)?)(?: in " FUNC ")?" },
	{ KREP_KFENCE, "^BUG: KFENCE: ([a-z -]+?)(?: in " FUNC "|\\s*$)" },
	{ KREP_KCSAN, "^BUG: KCSAN: (.*)" },
	{ KREP_KMSAN, "^BUG: KMSAN: ([a-z-]+)(?: in " FUNC ")?" },
	{ KREP_UBSAN, "^UBSAN: (.+?) in (\\S+)" },
	{ KREP_BUG_NULL,
	  "^BUG: (?:unable to handle kernel NULL pointer dereference"
	  "|kernel NULL pointer dereference|Kernel NULL pointer dereference)" },
	{ KREP_BUG_PAGING,
	  "^BUG: (?:unable to handle kernel paging request"
	  "|unable to handle page fault for address"
	  "|Unable to handle kernel data access)" },
	{ KREP_BUG_UNABLE, "^BUG: (?:unable|Unable) to handle kernel" },
	{ KREP_UNABLE,
	  "^Unable to handle kernel "
	  "(paging request|NULL pointer dereference|access to user memory)" },
	/* not "traps: sh[42] general protection fault ... error:0 in libc" */
	{ KREP_GPF, "^general protection fault(?!.* error:[0-9]+ in )" },
	{ KREP_DIVIDE, "^divide(?: |_)error: " },
	{ KREP_INVALID_OPCODE, "^invalid opcode: " },
	{ KREP_STACK_SEGMENT, "^stack segment: " },
	{ KREP_DOUBLE_FAULT, "^PANIC: double fault" },
	{ KREP_OOPS, "^(?:Internal error: )?Oops(?: - [^:]+)?: " },
	{ KREP_KERNEL_BUG, "^kernel BUG at (\\S+?)!?(?:\\s|$)" },
	{ KREP_WARNING,
	  "^WARNING: CPU: [0-9]+ PID: [0-9]+ at (?:(\\S+:[0-9]+) )?(?:" FUNC ")?" },
	{ KREP_LOCKDEP,
	  "^WARNING: (possible circular locking dependency detected"
	  "|possible recursive locking detected"
	  "|possible irq lock inversion dependency detected"
	  "|inconsistent lock state|suspicious RCU usage"
	  "|bad unlock balance detected!|held lock freed!"
	  "|lock held when returning to user space!"
	  "|(?:SOFT|HARD)IRQ-safe -> (?:SOFT|HARD)IRQ-unsafe lock order detected)" },
	{ KREP_BUG, "^BUG: (.*)" },
	/* ktest.pl's two, matched where ktest.pl matches them: anywhere */
	{ KREP_PANIC, "Kernel panic -(?: not syncing:?)? ?(.*)" },
	{ KREP_CALL_TRACE, "(?i)call trace:" },
};
#define NHDR (sizeof(hdr_pats) / sizeof(hdr_pats[0]))

/* Lines without one of these words start nothing: one cheap test first. */
static const char prefilter_re[] =
	"BUG|WARNING|Oops|anic|fault|error|opcode|segment|LOCKUP|INFO:|UBSAN"
	"|Unable|(?i:call trace:)";

/*
 * syzkaller's generic frames (linuxStackParams.skipPatterns), then ours:
 * the x86 exception entry and the oops machinery the brief names.
 */
static const char *const skip_pats[] = {
	"__sanitizer", "__asan", "kasan", "hwasan", "__msan", "kmsan",
	"kcsan_setup_watchpoint", "check_memory_region", "check_heap_object",
	"check_object", "read_word_at_a_time", "(read|write)_once_.*nocheck",
	"print_address_description", "panic", "invalid_op", "report_bug",
	"fixup_bug", "print_report", "print_usage_bug", "do_error",
	"_trap$|do_trap", "show_stack", "dump_stack", "walk_stack",
	"dump_backtrace", "warn_slowpath", "warn_alloc", "warn_bogus", "__warn",
	"alloc_page", "k?v?(?:m|z|c)alloc", "krealloc", "kmem_cache",
	"allocate_slab", "folio_(?:alloc|unlock)", "filemap_alloc_folio",
	"__filemap_get_folio", "find_or_create_page", "do_read_cache_folio",
	"read_cache_page", "pagecache_get_page", "grab_cache_page_write_begin",
	"slab_", "debug_object", "timer_is_static_object",
	"work_is_static_object", "__might_fault", "print_unlock",
	"imbalance_bug", "lockdep", "bh_enable", "bh_disable", "perf_trace",
	"lock_acquire", "lock_release", "lock_class", "mark_lock",
	"(reacquire|mark)_held_locks", "raw_spin_rq", "spin_lock",
	"spin_trylock", "spin_unlock", "read_lock", "read_trylock",
	"write_lock", "write_trylock", "read_unlock", "write_unlock", "^down$",
	"down_read", "down_write", "down_trylock", "up_read", "up_write",
	"^mutex_", "^__mutex_", "^rt_mutex_", "owner_on_cpu", "osq_lock",
	"osq_unlock",
	"atomic(64)?_(dec|inc|read|set|or|xor|and|add|sub|fetch|xchg|cmpxchg|try)",
	"(set|clear|change|test)_bit", "__wake_up", "^refcount_", "^kref_",
	"ref_tracker", "seqprop_assert", "memcpy", "memcmp", "memset", "memchr",
	"memmove", "memdup", "strcmp", "strncmp", "strcpy", "strlcpy",
	"strncpy", "strscpy", "strlen", "strstr", "strnstr", "strnlen",
	"strchr", "strdup", "strndup", "copy_to_user", "copy_from_user",
	"copy_to_iter", "copy_from_iter", "copy_page_to_iter",
	"copy_page_from_iter", "copy_folio_to_iter", "^copyin$", "^copyout$",
	"put_user", "get_user", "might_fault", "might_sleep", "list_add",
	"list_del", "list_replace", "list_move", "list_splice", "^rb_",
	"^__rb_", "_indirect_thunk_", "string", "pointer", "snprintf",
	"scnprintf", "kasprintf", "kvasprintf", "printk", "va_format",
	"dev_info", "dev_notice", "dev_warn", "dev_err", "dev_alert",
	"dev_crit", "dev_emerg", "program_check_exception",
	"program_check_common", "del_timer", "flush_work",
	"__cancel_work_timer", "cancel_work_sync", "try_to_grab_pending",
	"flush_workqueue", "drain_workqueue", "destroy_workqueue", "queue_work",
	"finish_wait", "kthread_stop", "kobject_", "add_uevent_var",
	"get_device_parent", "device_add", "device_del", "device_unregister",
	"device_destroy", "device_release", "devres_release_all",
	"hwrng_unregister", "i2c_del_adapter", "__unregister_client",
	"device_for_each_child", "rollback_registered", "unregister_netdev",
	"sysfs_remove", "device_remove_file", "tty_unregister_device",
	"dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs",
	"usb_control_msg", "usb_hcd_submit_urb", "usb_submit_urb",
	"^complete$", "wait_for_completion", "^kv?free$", "kfree_skb", "readb$",
	"readw$", "readl$", "readq$", "writeb$", "writew$", "writel$",
	"writeq$", "logic_in", "logic_out", "^crc\\d+", "crc_itu_t",
	"__might_resched", "assertfail", "^iput$", "^iput_final$", "^ihold$",
	"hex_dump_to_buffer", "print_hex_dump", "^klist_",
	"(trace|lockdep)_(hard|soft)irq", "^(un)?lock_page",
	"stack_trace_consume_entry", "arch_stack_walk", "stack_trace_save",
	"insert_work", "__queue_delayed_work", "queue_delayed_work_on",
	"ida_free", "do_(kernel|translation)_fault", "do_mem_abort",
	"el1_abort", "el1h_64_sync(?:_handler)?", "print_tainted",
	"xas_(?:start|load|find)", "find_lock_entries",
	"truncate_inode_pages_range", "__phys_addr", "__fortify_report",
	"cleanup_srcu_struct", "rhashtable_lookup", "extract_(user|iter)_to_sg",
	"drop_nlink", "^get_taint$", "^put_device$", "lock_timer_base",
	"__timer_delete_sync", "sk_stop_timer_sync", "__mod_timer",
	"fast_dput", "dput",
	/* ktest: the x86 trap entry and the oops printing around it */
	"handle_bug", "^exc_", "^asm_exc_", "^__ubsan_", "^ubsan_", "^kfence_",
	"^__kfence_", "page_fault_oops",
	"^__die", "^die$", "^oops_", "^__show_regs", "^show_regs",
	"^nmi_cpu_backtrace", "^nmi_trigger_cpumask_backtrace",
};

/*
 * syzkaller's linuxStallAnchorFrames: a stall's title names the frame just
 * above the first of these (the syscall or work item that looped), not the
 * random spot the loop was in when the watchdog looked.
 */
static const char *const anchor_pats[] = {
	"process_one_work", "do_syscall_", "do_fast_syscall_",
	"sysenter_dispatch", "tracesys_phase2", "el0_svc_handler",
	"invoke_syscall", "ret_fast_syscall", "netif_receive_skb", "do_softirq",
	"call_timer_fn", "_run_timers", "run_timer_softirq", "hrtimer_run",
	"run_ksoftirqd", "smpboot_thread_fn", "^kthread$", "start_secondary",
	"cpu_startup_entry", "ret_from_fork", "vfs_write", "vfs_read",
	"vfs_iter_read", "vfs_iter_write", "do_iter_read", "do_iter_write",
	"call_read_iter", "call_write_iter", "new_sync_read", "new_sync_write",
	"vfs_ioctl", "ksys_ioctl", "compat_ioctl", "compat_sys_ioctl",
	"blkdev_driver_ioctl", "blkdev_ioctl", "do_iter_readv_writev",
	"^call_mmap", "mmap_region", "do_mmap", "do_dentry_open", "vfs_open",
	"^sock_sendmsg", "^sock_recvmsg", "^sock_release", "^__sock_release",
	"^setsockopt$", "kernel_setsockopt", "sock_common_setsockopt",
	"^listen$", "kernel_listen", "sk_common_release", "^sock_mmap",
	"^accept$", "kernel_accept", "^sock_do_ioctl", "^sock_ioctl",
	"^compat_sock_ioctl", "^nfnetlink_rcv_msg", "^rtnetlink_rcv_msg",
	"^netlink_dump", "^(sys_)?(socketpair|connect|ioctl)", "__do_fault",
	"do_page_fault", "^page_fault$", "__fput", "task_work_run",
	"exit_to_usermode", "smp_call_function", "tasklet_action",
	"tasklet_hi_action",
	/* ktest: boot tests hang in initcalls, not in syscalls */
	"^do_one_initcall$", "^kernel_init$",
};

/* syzkaller's stripFramePrefixes, applied in this order */
static const char *const strip_prefixes[] = {
	"SYSC_", "SyS_", "sys_", "__x64_", "__ia32_", "__arm64_", "____sys_",
	"___sys_", "__sys_", "__se_", "__se_sys_", "__do_sys_", "compat_SYSC_",
	"compat_SyS_", "ksys_",
};

struct krecog {
	pcre2_code *hdr[NHDR];
	pcre2_code *prefilter;
	pcre2_code *frame;	/* " ? foo.cold+0x1/0x2 [mod]" */
	pcre2_code *rip;	/* "RIP: 0010:foo+0x1/0x2", "pc : foo+..." */
	pcre2_code *stackish;	/* what else a call trace block holds */
	pcre2_code *access;	/* KASAN's "Read of size 8" */
	pcre2_code *lockdep_at;	/* lockdep's ", at: foo+0x1/0x2" */
	pcre2_code *skip;
	pcre2_code *anchor;
	pcre2_code *prompt;
	pcre2_code *cpu;
	pcre2_match_data *md;
};

enum kend {
	END_TRACE,	/* "---[ end trace ...]---" (oops_end, __warn) */
	END_DELIM,	/* the "=====" line (sanitizers) */
	END_STACK,	/* the first line after its call trace that is not
			 * part of a stack dump (dump_stack() reports) */
	END_PANIC,	/* "---[ end Kernel panic - not syncing: ... ]---" */
};

enum { FR_RIP, FR_TRACE, FR_LOOSE };

struct kframe {
	char fn[FN_MAX];
	unsigned char where;	/* FR_* */
	bool skip;		/* a generic frame */
	bool after_irq;		/* after the timer interrupt (RCU stalls) */
};

struct kreport {
	const struct krecog *r;
	enum krep_kind kind;
	enum kend end;
	struct sbuf text;
	size_t nlines;
	char ctx[16];
	char what[160];		/* from the header: the kind of bug */
	char fn[FN_MAX];	/* from the header (lockdep: the "at:") */
	char loc[160];		/* file:line from the header */
	const char *access;	/* "Read" or "Write" */
	struct kframe frames[REP_MAX_FRAMES];
	size_t nframes;
	int traces;		/* "Call Trace:" lines seen */
	bool in_trace;		/* inside the first call trace */
	bool trace_frame;	/* a frame since the last "Call Trace:" */
	bool irq;		/* the timer interrupt frame went by */
	size_t pre_trace;	/* lines before the first call trace */
	char *title;
	bool dirty;
};

/* ---- patterns ---- */

static pcre2_code *compile(const char *re, char *why, size_t whylen)
{
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE off;
	pcre2_code *c;
	int err;

	c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &off,
			  NULL);
	if (!c) {
		pcre2_get_error_message(err, msg, sizeof(msg));
		snprintf(why, whylen, "%s at offset %zu of %s", (char *)msg,
			 (size_t)off, re);
		return NULL;
	}
	/* plain interpretation if the JIT is not there */
	pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);
	return c;
}

static pcre2_code *compile_list(const char *const *pats, size_t n, char *why,
				size_t whylen)
{
	struct sbuf b;
	pcre2_code *c;

	sbuf_init(&b);
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&b, "%s(?:%s)", i ? "|" : "", pats[i]);
	c = compile(sbuf_str(&b), why, whylen);
	sbuf_free(&b);
	return c;
}

struct krecog *krecog_new(char *why, size_t whylen)
{
	struct krecog *r = xcalloc(1, sizeof(*r));
	bool ok = true;

	for (size_t i = 0; i < NHDR && ok; i++)
		ok = (r->hdr[i] = compile(hdr_pats[i].re, why, whylen)) != NULL;
#define C(field, re) \
	do { if (ok) ok = (r->field = compile(re, why, whylen)) != NULL; } while (0)
	C(prefilter, prefilter_re);
	C(frame, "^\\s*(?:" PC "\\s*){0,2}(\\?\\s+)?([A-Za-z0-9_]+)"
		 "(?:\\.[A-Za-z0-9_.]*)?\\+0x[0-9a-f]+/0x[0-9a-f]+");
	C(rip, "^\\s*(?:(?:R|E|N)?IP:? (?:[0-9]+:)?(?:" PC " +){0,2}|pc\\s*: |PC is at )"
	       FUNC);
	C(stackish, "^\\s*(?:(?:RIP|RSP|RAX|RBX|RCX|RDX|RSI|RDI|RBP|R[0-9]+|FS|GS|CS|DS|ES|SS"
		    "|CR[0-9]|DR[0-9]|PKRU|Code|EFLAGS|ORIG_RAX)\\s*:"
		    "|</?(?:TASK|IRQ|NMI|SOFTIRQ|EOI)>|Call [Tt]race:|Modules linked in:"
		    "|CPU: [0-9]+ PID:|Hardware name:|NMI backtrace for cpu|Sending NMI"
		    "|Kernel Offset:|---\\[|task:|Workqueue:|irq event stamp:"
		    "|hardirqs last|softirqs last|\\? |" PC ")");
	C(access, "(Read|Write) (?:of size|at addr) [0-9a-f]+");
	C(lockdep_at, "\\bat: (?:" PC " +)?" FUNC);
	C(prompt, "^(?:\\S+ )?login:\\s*$|^\\S*\\s?[#$]\\s*$");
	C(cpu, "^CPU: [0-9]+ PID: [0-9]+ ");
#undef C
	if (ok)
		ok = (r->skip = compile_list(skip_pats,
					     sizeof(skip_pats) / sizeof(skip_pats[0]),
					     why, whylen)) != NULL;
	if (ok)
		ok = (r->anchor = compile_list(anchor_pats,
					       sizeof(anchor_pats) / sizeof(anchor_pats[0]),
					       why, whylen)) != NULL;
	if (ok) {
		r->md = pcre2_match_data_create(16, NULL);
		if (!r->md) {
			snprintf(why, whylen, "out of memory");
			ok = false;
		}
	}
	if (!ok) {
		krecog_free(r);
		return NULL;
	}
	return r;
}

void krecog_free(struct krecog *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < NHDR; i++)
		pcre2_code_free(r->hdr[i]);
	pcre2_code_free(r->prefilter);
	pcre2_code_free(r->frame);
	pcre2_code_free(r->rip);
	pcre2_code_free(r->stackish);
	pcre2_code_free(r->access);
	pcre2_code_free(r->lockdep_at);
	pcre2_code_free(r->skip);
	pcre2_code_free(r->anchor);
	pcre2_code_free(r->prompt);
	pcre2_code_free(r->cpu);
	pcre2_match_data_free(r->md);
	free(r);
}

static bool rx(const struct krecog *r, const pcre2_code *c, const char *s,
	       size_t n)
{
	return pcre2_match(c, (PCRE2_SPTR)s, n, 0, 0, r->md, NULL) > 0;
}

/* Capture group g of the last match, into buf (empty when unset). */
static void group(const struct krecog *r, const char *s, int g, char *buf,
		  size_t len)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
	size_t n;

	buf[0] = '\0';
	if ((uint32_t)g >= pcre2_get_ovector_count(r->md) ||
	    ov[2 * g] == PCRE2_UNSET)
		return;
	n = ov[2 * g + 1] - ov[2 * g];
	if (n >= len)
		n = len - 1;
	memcpy(buf, s + ov[2 * g], n);
	buf[n] = '\0';
}

static bool group_set(const struct krecog *r, int g)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);

	return (uint32_t)g < pcre2_get_ovector_count(r->md) &&
	       ov[2 * g] != PCRE2_UNSET;
}

static bool has(const char *s, size_t n, const char *what)
{
	return memmem(s, n, what, strlen(what)) != NULL;
}

/* ---- lines ---- */

static size_t digits(const char *s, size_t n, size_t i)
{
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	return i;
}

/*
 * The length of "<4>[   12.345678][  T123] " at s, filling l->ctx and
 * l->kernel; 0 when there is no timestamp (a bare "<4>" still counts).
 */
static size_t printk_prefix(const char *s, size_t n, struct kline *l)
{
	size_t i = 0, j, d;

	if (n && s[0] == '<') {
		j = digits(s, n, 1);
		if (j > 1 && j <= 4 && j < n && s[j] == '>')
			i = j + 1;
	}
	if (i >= n || s[i] != '[')
		return i;
	j = i + 1;
	while (j < n && s[j] == ' ')
		j++;
	d = digits(s, n, j);
	if (d == j || d >= n || s[d] != '.')
		return i;
	j = digits(s, n, d + 1);
	if (j == d + 1 || j >= n || s[j] != ']')
		return i;
	l->kernel = true;
	i = j + 1;
	/* CONFIG_PRINTK_CALLER: "[  T123]" or "[    C1]" */
	if (i < n && s[i] == '[') {
		j = i + 1;
		while (j < n && s[j] == ' ')
			j++;
		if (j < n && (s[j] == 'T' || s[j] == 'C')) {
			d = digits(s, n, j + 1);
			if (d > j + 1 && d < n && s[d] == ']' &&
			    d - j < sizeof(l->ctx)) {
				memcpy(l->ctx, s + j, d - j);
				l->ctx[d - j] = '\0';
				i = d + 1;
			}
		}
	}
	if (i < n && s[i] == ' ')
		i++;
	return i;
}

void krecog_strip(const char *line, size_t len, struct kline *out)
{
	size_t skip;

	memset(out, 0, sizeof(*out));
	if (len && line[len - 1] == '\r')
		len--;
	skip = printk_prefix(line, len, out);
	if (!out->kernel) {
		/* "box login: [   12.3] BUG: ..." (syzkaller's consoleOutputRe) */
		size_t look = len < 512 ? len : 512;
		const char *p = memmem(line, look, "login: ", 7);

		if (p) {
			struct kline k;
			size_t at = (size_t)(p - line) + 7;
			size_t s2;

			memset(&k, 0, sizeof(k));
			s2 = printk_prefix(line + at, len - at, &k);
			if (k.kernel) {
				*out = k;
				skip = at + s2;
			}
		}
	}
	out->text = line + skip;
	out->len = len - skip;
}


bool krecog_prompt(const struct krecog *r, const struct kline *l)
{
	return !l->kernel && l->len && l->len < 128 &&
	       rx(r, r->prompt, l->text, l->len);
}

bool krecog_cpu_line(const struct krecog *r, const struct kline *l)
{
	return rx(r, r->cpu, l->text, l->len);
}

static int hdr_index(enum krep_kind k)
{
	for (size_t i = 0; i < NHDR; i++)
		if (hdr_pats[i].kind == k)
			return (int)i;
	return -1;
}

enum krep_kind krecog_header(const struct krecog *r, const struct kline *l)
{
	if (!l->len || !rx(r, r->prefilter, l->text, l->len))
		return KREP_NONE;
	for (size_t i = 0; i < NHDR; i++)
		if (rx(r, r->hdr[i], l->text, l->len))
			return hdr_pats[i].kind;
	return KREP_NONE;
}

unsigned int krep_class(enum krep_kind k)
{
	switch (k) {
	case KREP_NONE:
		return 0;
	case KREP_CALL_TRACE:
		return KMON_CALL_TRACE;
	case KREP_PANIC:
		return KMON_PANIC;
	case KREP_BUG:
	case KREP_KERNEL_BUG:
		return KMON_BUG;
	case KREP_WARNING:
	case KREP_LOCKDEP:
		return KMON_WARNING;
	case KREP_KASAN:
	case KREP_KFENCE:
	case KREP_KCSAN:
	case KREP_KMSAN:
	case KREP_UBSAN:
		return KMON_SANITIZER;
	case KREP_HUNG_TASK:
	case KREP_RCU_STALL:
	case KREP_SOFT_LOCKUP:
	case KREP_HARD_LOCKUP:
		return KMON_HANG;
	default:
		return KMON_OOPS;
	}
}

bool krep_continues(enum krep_kind k)
{
	return k == KREP_OOPS || k == KREP_INVALID_OPCODE ||
	       k == KREP_PANIC || k == KREP_CALL_TRACE;
}

/* ---- collecting a report ---- */

static enum kend end_of(enum krep_kind k)
{
	switch (k) {
	case KREP_KASAN:
	case KREP_KFENCE:
	case KREP_KCSAN:
	case KREP_KMSAN:
	case KREP_UBSAN:
		return END_DELIM;
	case KREP_PANIC:
		return END_PANIC;
	case KREP_CALL_TRACE:
	case KREP_BUG:
	case KREP_LOCKDEP:
	case KREP_HUNG_TASK:
	case KREP_RCU_STALL:
	case KREP_SOFT_LOCKUP:
	case KREP_HARD_LOCKUP:
		return END_STACK;
	default:
		return END_TRACE;
	}
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* "=====" lines around sanitizer reports */
static bool delimiter(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] == '=')
		i++;
	return i >= 10 && blank(s + i, n - i);
}

static bool ci_has(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what);

	for (size_t i = 0; i + w <= n; i++)
		if (!strncasecmp(s + i, what, w))
			return true;
	return false;
}

/* Where one call trace's frames end and the next list of frames begins */
static bool stack_break(const char *s, size_t n)
{
	static const char *const words[] = {
		"Allocated by task", "Freed by task", "allocated by task",
		"freed by task", "The buggy address", "Memory state around",
		"Uninit was ", "Local variable ", "Last potentially related",
	};

	if (blank(s, n))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (has(s, n, words[i]))
			return true;
	return false;
}

static const char *strip_prefix(const char *fn)
{
	for (size_t i = 0; i < sizeof(strip_prefixes) / sizeof(strip_prefixes[0]); i++) {
		size_t n = strlen(strip_prefixes[i]);

		if (!strncmp(fn, strip_prefixes[i], n) && fn[n])
			fn += n;
	}
	return fn;
}

static void add_frame(struct kreport *rep, const char *fn, int where)
{
	const struct krecog *r = rep->r;
	struct kframe *f;

	if (rep->nframes >= REP_MAX_FRAMES)
		return;
	f = &rep->frames[rep->nframes++];
	snprintf(f->fn, sizeof(f->fn), "%s", strip_prefix(fn));
	f->where = (unsigned char)where;
	f->skip = rx(r, r->skip, f->fn, strlen(f->fn));
	f->after_irq = rep->irq;
	if (strstr(f->fn, "apic_timer_interrupt") || strstr(f->fn, "el1h_64_irq"))
		rep->irq = true;
	rep->dirty = true;
}

/* What the title needs from one line of the report */
static void parse_line(struct kreport *rep, const struct kline *l)
{
	const struct krecog *r = rep->r;
	const char *s = l->text;
	size_t n = l->len;
	char fn[FN_MAX];

	if (has(s, n, "Kernel panic -") && !has(s, n, "---[ end Kernel panic"))
		rep->end = END_PANIC;
	if (ci_has(s, n, "call trace:")) {
		rep->traces++;
		rep->in_trace = rep->traces == 1;
		rep->trace_frame = false;
		return;
	}
	if (stack_break(s, n))
		rep->in_trace = false;
	if (rx(r, r->rip, s, n)) {
		group(r, s, 1, fn, sizeof(fn));
		add_frame(rep, fn, FR_RIP);
		if (rep->traces)
			rep->trace_frame = true;
	} else if (rx(r, r->frame, s, n)) {
		if (!group_set(r, 1)) {		/* "? foo": a guess, not a frame */
			group(r, s, 2, fn, sizeof(fn));
			add_frame(rep, fn, rep->in_trace ? FR_TRACE : FR_LOOSE);
		}
		if (rep->traces)
			rep->trace_frame = true;
	}
	if (rep->kind == KREP_KASAN && !rep->access && rx(r, r->access, s, n)) {
		char acc[8];

		group(r, s, 1, acc, sizeof(acc));
		rep->access = acc[0] == 'R' ? "Read" : "Write";
		rep->dirty = true;
	}
	if (rep->kind == KREP_LOCKDEP && !rep->fn[0] && rx(r, r->lockdep_at, s, n)) {
		group(r, s, 1, fn, sizeof(fn));
		snprintf(rep->fn, sizeof(rep->fn), "%s", strip_prefix(fn));
		rep->dirty = true;
	}
}

/* A line of a stack dump (a report that ends with its stack goes on) */
static bool stackish(const struct krecog *r, const struct kline *l)
{
	if (blank(l->text, l->len))
		return false;
	return rx(r, r->frame, l->text, l->len) ||
	       rx(r, r->stackish, l->text, l->len);
}

static void append(struct kreport *rep, const struct kline *l)
{
	size_t n = l->len < REP_LINE_MAX ? l->len : REP_LINE_MAX;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)l->text[i];

		sbuf_addc(&rep->text, (c < 0x20 && c != '\t') || c == 0x7f ?
			  '?' : (char)c);
	}
	sbuf_addc(&rep->text, '\n');
	rep->nlines++;
}

enum kreport_add kreport_add(struct kreport *rep, const struct kline *l)
{
	const char *s = l->text;
	size_t n = l->len;

	if (rep->ctx[0] == 'T' && l->ctx[0] == 'T' && strcmp(rep->ctx, l->ctx))
		return KREPORT_OTHER;
	if (rep->nlines >= REP_MAX_LINES || rep->text.len >= REP_MAX_BYTES)
		return KREPORT_END_BEFORE;
	if (rep->end == END_STACK) {
		if (rep->traces && rep->trace_frame && !stackish(rep->r, l))
			return KREPORT_END_BEFORE;
		if (!rep->traces) {
			bool lockdep = rep->kind == KREP_LOCKDEP;

			if (++rep->pre_trace > (lockdep ? 200 : REP_PRE_TRACE))
				return KREPORT_END_BEFORE;
			if (!lockdep && blank(s, n))
				return KREPORT_END_BEFORE;
		}
	}
	append(rep, l);
	parse_line(rep, l);
	if (has(s, n, "---[ end trace") || has(s, n, "---[ end Kernel panic"))
		return KREPORT_END_WITH;
	if (rep->end == END_DELIM && rep->nlines > 1 && delimiter(s, n))
		return KREPORT_END_WITH;
	return KREPORT_MORE;
}

struct kreport *kreport_new(const struct krecog *r, enum krep_kind k,
			    const struct kline *header)
{
	struct kreport *rep = xcalloc(1, sizeof(*rep));
	int i = hdr_index(k);
	const char *s = header->text;

	rep->r = r;
	rep->kind = k;
	rep->end = end_of(k);
	rep->dirty = true;
	sbuf_init(&rep->text);
	snprintf(rep->ctx, sizeof(rep->ctx), "%s", header->ctx);
	/* a bare call trace may start at its "CPU:" line, not a header */
	if (i >= 0 && rx(r, r->hdr[i], s, header->len)) {
		switch (k) {
		case KREP_KASAN:
		case KREP_KFENCE:
		case KREP_KMSAN:
			group(r, s, 1, rep->what, sizeof(rep->what));
			group(r, s, 2, rep->fn, sizeof(rep->fn));
			break;
		case KREP_UBSAN:
			group(r, s, 1, rep->what, sizeof(rep->what));
			group(r, s, 2, rep->loc, sizeof(rep->loc));
			break;
		case KREP_KERNEL_BUG:
			group(r, s, 1, rep->loc, sizeof(rep->loc));
			break;
		case KREP_WARNING:
			group(r, s, 1, rep->loc, sizeof(rep->loc));
			group(r, s, 2, rep->fn, sizeof(rep->fn));
			break;
		case KREP_KCSAN:
		case KREP_UNABLE:
		case KREP_LOCKDEP:
		case KREP_BUG:
		case KREP_PANIC:
			group(r, s, 1, rep->what, sizeof(rep->what));
			break;
		default:
			break;
		}
		s = strip_prefix(rep->fn);
		memmove(rep->fn, s, strlen(s) + 1);
	}
	return rep;
}

void kreport_free(struct kreport *rep)
{
	if (!rep)
		return;
	sbuf_free(&rep->text);
	free(rep->title);
	free(rep);
}

void kreport_reopen(struct kreport *rep)
{
	rep->end = END_PANIC;
}

enum krep_kind kreport_kind(const struct kreport *rep)
{
	return rep->kind;
}

const char *kreport_text(const struct kreport *rep)
{
	return sbuf_str(&rep->text);
}

/* ---- titles ---- */

/* "^x": prefix, "x$": suffix, "^x$": whole, else a substring */
static bool word_match(const char *fn, const char *pat)
{
	size_t n = strlen(pat), f = strlen(fn);
	bool head = pat[0] == '^', tail = n && pat[n - 1] == '$';
	const char *p = pat + head;
	size_t m = n - head - tail;

	if (head && tail)
		return f == m && !strncmp(fn, p, m);
	if (head)
		return !strncmp(fn, p, m);
	if (tail)
		return f >= m && !strncmp(fn + f - m, p, m);
	return memmem(fn, f, p, m) != NULL;
}

static bool extra_skip(const char *fn, const char *const *extra)
{
	for (; extra && *extra; extra++)
		if (word_match(fn, *extra))
			return true;
	return false;
}

static bool frame_skipped(const struct kframe *f, const char *const *extra)
{
	return f->skip || extra_skip(f->fn, extra);
}

/*
 * The guilty function: the header's (when the kind names one), then the
 * first RIP line's, then the frames of the first call trace (and frames
 * outside one, for the sanitizers that print bare stacks), the first that
 * is not generic.
 */
static const char *guilty(const struct kreport *rep, bool use_hdr,
			  bool use_rip, bool use_trace, bool use_loose,
			  const char *const *extra)
{
	const struct krecog *r = rep->r;

	if (use_hdr && rep->fn[0] &&
	    !rx(r, r->skip, rep->fn, strlen(rep->fn)) &&
	    !extra_skip(rep->fn, extra))
		return rep->fn;
	if (use_rip) {
		for (size_t i = 0; i < rep->nframes; i++) {
			if (rep->frames[i].where != FR_RIP)
				continue;
			if (!frame_skipped(&rep->frames[i], extra))
				return rep->frames[i].fn;
			break;
		}
	}
	for (size_t i = 0; i < rep->nframes; i++) {
		const struct kframe *f = &rep->frames[i];

		if (((use_trace && f->where == FR_TRACE) ||
		     (use_loose && f->where == FR_LOOSE)) &&
		    !frame_skipped(f, extra))
			return f->fn;
	}
	return NULL;
}

/*
 * syzkaller's linuxStallFrameExtractor: the frame just above the first
 * anchor (the syscall, work item or initcall that looped).
 */
static const char *stall_frame(const struct kreport *rep,
			       const struct kframe *const *fr, size_t n)
{
	const struct krecog *r = rep->r;
	const char *prev;

	if (!n)
		return NULL;
	prev = fr[0]->fn;
	for (size_t i = 0; i < n; i++) {
		if (rx(r, r->anchor, fr[i]->fn, strlen(fr[i]->fn)))
			return prev;
		prev = fr[i]->fn;
	}
	return fr[0]->fn;	/* ktest: no anchor, the top frame */
}

static const char *stall(const struct kreport *rep, bool rcu)
{
	static const char *const rcu_extra[] = {
		"apic_timer_interrupt", "rcu", NULL,
	};
	const struct kframe *fr[REP_MAX_FRAMES];
	size_t n = 0;
	bool rip = false;

	/* RCU: what the timer interrupt interrupted */
	if (rcu) {
		for (size_t i = 0; i < rep->nframes; i++)
			if (rep->frames[i].after_irq &&
			    !frame_skipped(&rep->frames[i], rcu_extra))
				fr[n++] = &rep->frames[i];
		if (n)
			return stall_frame(rep, fr, n);
	}
	for (size_t i = 0; i < rep->nframes; i++) {
		const struct kframe *f = &rep->frames[i];

		if (f->where == FR_RIP && !rip) {
			rip = true;
			if (!frame_skipped(f, rcu ? rcu_extra : NULL))
				fr[n++] = f;
		} else if (f->where == FR_TRACE &&
			   !frame_skipped(f, rcu ? rcu_extra : NULL)) {
			fr[n++] = f;
		}
	}
	return stall_frame(rep, fr, n);
}

/*
 * syzkaller's linuxHangTaskFrameExtractor: hangs on rtnl_lock and on
 * synchronize_rcu are grouped; otherwise the first frame that is not
 * scheduling, locking or waiting.
 */
static const char *hung(const struct kreport *rep)
{
	static const char *const anchors[][2] = {
		{ "rtnl_lock", NULL },
		{ "synchronize_rcu", "synchronize_rcu" },
		{ "synchronize_srcu", "synchronize_rcu" },
		{ "synchronize_net", "synchronize_rcu" },
		{ "synchronize_sched", "synchronize_rcu" },
	};
	static const char *const waits[] = {
		"sched", "_lock", "_slowlock", "down", "rwsem", "completion",
		"kthread", "wait", "synchronize", "context_switch",
		"__switch_to", "cancel_delayed_work", "rcu_barrier", NULL,
	};

	for (size_t i = 0; i < rep->nframes; i++) {
		const struct kframe *f = &rep->frames[i];

		if (f->where != FR_TRACE || f->skip)
			continue;
		for (size_t a = 0; a < sizeof(anchors) / sizeof(anchors[0]); a++)
			if (strstr(f->fn, anchors[a][0]))
				return anchors[a][1] ? anchors[a][1] : f->fn;
	}
	return guilty(rep, false, false, true, false, waits);
}

/* Drops from the first word holding one of c, and the words that are hex
 * numbers or "[...]" */
static void tidy_words(char *s)
{
	char *out = s, *p = s;
	bool first = true;

	while (*p) {
		char *w = p, *e;
		size_t n, hex = 0;

		while (*w == ' ')
			w++;
		if (!*w)
			break;
		e = w;
		while (*e && *e != ' ')
			e++;
		n = (size_t)(e - w);
		if (memchr(w, ':', n) || memchr(w, '=', n))
			break;
		for (size_t i = 0; i < n; i++)
			if (isxdigit((unsigned char)w[i]) || w[i] == 'x')
				hex++;
		p = e;
		if ((w[0] == '[' && w[n - 1] == ']') || (n >= 8 && hex == n))
			continue;
		if (!first)
			*out++ = ' ';
		memmove(out, w, n);
		out += n;
		first = false;
	}
	*out = '\0';
}

/* "scheduling while atomic: swapper/0/1/0x2" -> "scheduling while atomic" */
static void bug_what(char *s)
{
	static const char *const cuts[] = {
		": ", " at ", ", ", " - ", " in process", " on CPU", "!",
	};

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char *c = strstr(s, cuts[i]);

		if (c)
			*c = '\0';
	}
	tidy_words(s);
}

static void panic_what(char *s, size_t len)
{
	static const char prot[] = "stack-protector: Kernel stack is corrupted in: ";
	size_t n = strlen(s);
	char *c;

	while (n && (isspace((unsigned char)s[n - 1])))
		s[--n] = '\0';
	if (n >= 4 && !strcmp(s + n - 4, "]---")) {
		s[n -= 4] = '\0';
		while (n && s[n - 1] == ' ')
			s[--n] = '\0';
	}
	c = strstr(s, " exitcode=");
	if (c)
		*c = '\0';
	if (!strncmp(s, prot, sizeof(prot) - 1)) {
		char fn[FN_MAX];
		size_t i = 0;

		for (c = s + sizeof(prot) - 1; *c && (isalnum((unsigned char)*c) || *c == '_') &&
		     i < sizeof(fn) - 1; c++)
			fn[i++] = *c;
		fn[i] = '\0';
		snprintf(s, len, "stack is corrupted in %s", fn);
	}
}

static const char *const *bug_extra(const char *what)
{
	static const char *const spin[] = { "spin_", "_lock", "_unlock", NULL };
	static const char *const preempt[] = {
		"dump_stack", "preemption", "preempt", "debug_", "processor_id",
		"this_cpu", NULL,
	};
	static const char *const atomic[] = { "schedule", NULL };
	static const char *const page[] = {
		"free_page", "put_page", "get_page", "update_page",
		"release_page", "free_unref", "folio", "truncate_inode_pages",
		"page_frag_free", "alloc", "vmap", "page_owner", NULL,
	};

	if (strstr(what, "spinlock") || strstr(what, "rwlock"))
		return spin;
	if (strstr(what, "preemptible"))
		return preempt;
	if (strstr(what, "scheduling while atomic"))
		return atomic;
	if (strstr(what, "Bad page"))
		return page;
	return NULL;
}

static void title_in(struct sbuf *t, const char *what, const char *fn)
{
	sbuf_adds(t, what);
	if (fn && *fn)
		sbuf_addf(t, " in %s", fn);
}

static void warning_title(const struct kreport *rep, struct sbuf *t)
{
	static const char *const refcount[] = { "refcount", "kobject_", NULL };
	static const char *const locking[] = { "lock_sock", "release_sock", NULL };
	static const char *const odebug[] = {
		"debug_", "rcu", "hrtimer_", "timer_", "work_", "percpu_",
		"kmem_", "slab_", "kfree", "vunmap", "vfree", "__free_",
		"debug_check", "kobject_", NULL,
	};
	static const char *const usercopy[] = { "usercopy", "__check", NULL };
	static const char *const kobject[] = { "kobject_", NULL };
	static const struct {
		const char *file, *title;
		const char *const *extra;
	} special[] = {
		{ "lib/refcount.c", "WARNING: refcount bug", refcount },
		{ "kernel/locking/lockdep.c", "WARNING: locking bug", locking },
		{ "lib/debugobjects.c", "WARNING: ODEBUG bug", odebug },
		{ "mm/usercopy.c", "WARNING: bad usercopy", usercopy },
		{ "lib/kobject.c", "WARNING: kobject bug", kobject },
	};

	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		if (!strncmp(rep->loc, special[i].file, strlen(special[i].file))) {
			title_in(t, special[i].title,
				 guilty(rep, false, true, true, false,
					special[i].extra));
			return;
		}
	}
	title_in(t, "WARNING", guilty(rep, true, true, true, false, NULL));
}

static void lockdep_title(const struct kreport *rep, struct sbuf *t)
{
	static const char *const rcu[] = { "rcu", "kmem", "slab", NULL };
	static const struct {
		const char *what, *title;
	} names[] = {
		{ "possible circular", "possible deadlock" },
		{ "possible recursive", "possible deadlock" },
		{ "possible irq lock inversion", "possible deadlock" },
		{ "IRQ-safe -> ", "possible deadlock" },
		{ "inconsistent lock state", "inconsistent lock state" },
		{ "bad unlock balance", "WARNING: bad unlock balance" },
		{ "held lock freed", "WARNING: held lock freed" },
		{ "lock held when returning", "WARNING: lock held when returning to user space" },
	};

	if (strstr(rep->what, "suspicious RCU usage")) {
		title_in(t, "WARNING: suspicious RCU usage",
			 guilty(rep, false, false, true, false, rcu));
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strstr(rep->what, names[i].what)) {
			title_in(t, names[i].title, rep->fn[0] ? rep->fn :
				 guilty(rep, false, false, true, false, NULL));
			return;
		}
	}
	sbuf_addf(t, "WARNING: %s", rep->what);
}

static void make_title(const struct kreport *rep, struct sbuf *t)
{
	static const char *const kasan[] = {
		"kernel_fault", "tag_check", "mem_abort", "^el1_", "^el1h_", NULL,
	};
	static const char *const kasan_free[] = {
		"slab_", "kfree", "vunmap", "vfree", NULL,
	};
	static const char *const ubsan[] = { "ubsan", "overflow", NULL };
	static const char *const skb[] = { "^skb_", NULL };
	char what[160];
	const char *fn;

	snprintf(what, sizeof(what), "%s", rep->what);
	switch (rep->kind) {
	case KREP_CALL_TRACE:
		title_in(t, "Call Trace", guilty(rep, false, false, true, false, NULL));
		break;
	case KREP_PANIC:
		panic_what(what, sizeof(what));
		sbuf_addf(t, "kernel panic%s%s", what[0] ? ": " : "", what);
		break;
	case KREP_BUG:
		bug_what(what);
		sbuf_addf(t, "BUG: %s", what);
		title_in(t, "", guilty(rep, false, false, true, false, bug_extra(what)));
		break;
	case KREP_KERNEL_BUG:
		fn = guilty(rep, false, true, true, false, skb);
		if (fn || !rep->loc[0])
			title_in(t, "kernel BUG", fn);
		else
			sbuf_addf(t, "kernel BUG at %s", rep->loc);
		break;
	case KREP_BUG_NULL:
		title_in(t, "BUG: unable to handle kernel NULL pointer dereference",
			 guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_BUG_PAGING:
		title_in(t, "BUG: unable to handle kernel paging request",
			 guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_BUG_UNABLE:
		sbuf_adds(t, "BUG: unable to handle kernel");
		break;
	case KREP_UNABLE:
		sbuf_addf(t, "BUG: unable to handle kernel %s", what);
		title_in(t, "", guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_GPF:
		title_in(t, "general protection fault",
			 guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_DIVIDE:
		title_in(t, "divide error", guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_INVALID_OPCODE:
		title_in(t, "invalid opcode", guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_STACK_SEGMENT:
		title_in(t, "stack segment fault",
			 guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_DOUBLE_FAULT:
		title_in(t, "PANIC: double fault", guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_OOPS:
		title_in(t, "Oops", guilty(rep, false, true, true, false, NULL));
		break;
	case KREP_WARNING:
		warning_title(rep, t);
		break;
	case KREP_LOCKDEP:
		lockdep_title(rep, t);
		break;
	case KREP_KASAN:
		if (!strcmp(what, "double-free") || !strcmp(what, "invalid-free") ||
		    !strcmp(what, "double-free or invalid-free")) {
			title_in(t, "KASAN: invalid-free",
				 guilty(rep, true, false, true, false, kasan_free));
			break;
		}
		sbuf_addf(t, "KASAN: %s", what);
		if (rep->access)
			sbuf_addf(t, " %s", rep->access);
		title_in(t, "", guilty(rep, true, false, true, false, kasan));
		break;
	case KREP_KFENCE:
		sbuf_addf(t, "KFENCE: %s", what);
		title_in(t, "", guilty(rep, true, false, true, true, NULL));
		break;
	case KREP_KCSAN:
		sbuf_addf(t, "KCSAN: %s", what);
		break;
	case KREP_KMSAN:
		sbuf_addf(t, "KMSAN: %s", what);
		title_in(t, "", guilty(rep, true, false, true, true, NULL));
		break;
	case KREP_UBSAN:
		if (!strcmp(what, "Undefined behaviour"))
			snprintf(what, sizeof(what), "undefined-behaviour");
		fn = guilty(rep, false, false, true, false, ubsan);
		sbuf_addf(t, "UBSAN: %s", what);
		title_in(t, "", fn ? fn : rep->loc);
		break;
	case KREP_HUNG_TASK:
		title_in(t, "INFO: task hung", hung(rep));
		break;
	case KREP_RCU_STALL:
		title_in(t, "INFO: rcu detected stall", stall(rep, true));
		break;
	case KREP_SOFT_LOCKUP:
		title_in(t, "BUG: soft lockup", stall(rep, false));
		break;
	case KREP_HARD_LOCKUP:
		title_in(t, "hard LOCKUP", stall(rep, false));
		break;
	case KREP_NONE:
		sbuf_adds(t, "?");
		break;
	}
}

const char *kreport_title(struct kreport *rep)
{
	struct sbuf t;
	char *s;
	size_t n;

	if (rep->title && !rep->dirty)
		return rep->title;
	sbuf_init(&t);
	make_title(rep, &t);
	s = sbuf_detach(&t);
	/* one printable line */
	for (n = 0; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f)
			s[n] = '?';
	if (n > TITLE_MAX)
		s[n = TITLE_MAX] = '\0';
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	free(rep->title);
	rep->title = s;
	rep->dirty = false;
	return s;
}
