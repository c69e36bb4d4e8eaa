// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lab side of a step: install the kernel that was just built, boot the
 * box into it while the console monitor watches, run TEST while it still
 * watches, and put the box back. One struct krun_lab per test, opened on
 * the first step that needs the box and closed when the test ends.
 *
 * Two kinds of box:
 * - ssh (ktest.pl's): install over libssh (or SSH_EXEC/SCP_TO_TARGET as
 *   written), REBOOT_TYPE to boot the test kernel, POWER_CYCLE/POWER_OFF
 *   behind it, the CONSOLE command/serial/tcp for the console.
 * - qemu (BOX_TYPE = qemu): the built-in qemu box boots QEMU_KERNEL (where
 *   install puts the kernel, or the build's image itself with NO_INSTALL);
 *   booting is a power cycle and its serial line is the console; "back to
 *   good" is power off, since the next step boots its own kernel anyway.
 *
 * What ktest.pl got wrong here, and this does not: the console is read
 * with poll and deadlines (no busy loop on a closed stdin, no 1-second
 * flush that swallows the next boot's banner), a boot that panics is
 * power-cycled once, and SIGINT is not ignored while waiting.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "console/monitor.h"
#include "ktest/box.h"
#include "ktest/cmd.h"
#include "ktest/install.h"
#include "ktest/reboot.h"
#include "ktest/run.h"
#include "power/power.h"

struct krun_lab {
	bool qemu;
	struct kbox_opts bo;
	struct kbox *box;
	struct kinstall_opts io;
	struct kreboot_opts ro;
	struct kreboot *rb;
	struct kpower *power;
	struct kconsole *con;
	char **qemu_extra;
	size_t nqemu_extra;
	FILE *dmesg;
	struct krun *r;
	/* lines the reboot's watch read: the boot monitor sees them first */
	struct sbuf pending;
	bool booting;		/* a boot's monitor: krun.kernel_up, _booted */
	/* the reboot watch's stop line, compiled: ktest.pl's /$stop/ */
	char *stop_src;
	pcre2_code *stop_re;
	pcre2_match_data *stop_md;
};

/*
 * The booting kernel printed a line: the box has it (krun.kernel_up);
 * and once m has seen SUCCESS_LINE, krun.kernel_booted.
 */
static void kernel_news(struct krun_lab *l, const struct kmonitor *m)
{
	struct krun *r = l->r;
	void (*up)(void *ctx) = r->kernel_up;
	void (*booted)(void *ctx) = r->kernel_booted;

	if (!l->booting)
		return;
	if (up) {
		r->kernel_up = NULL;
		up(r->kernel_up_ctx);
	}
	if (booted && kmonitor_booted(m) &&
	    (kmonitor_verdict(m) == KMON_RUNNING ||
	     kmonitor_verdict(m) == KMON_BOOTED)) {
		r->kernel_booted = NULL;
		booted(r->kernel_booted_ctx);
	}
}

static void lab_line(void *ctx, const char *line, size_t len)
{
	struct krun *r = ctx;

	krun_log(r, "%.*s\n", (int)len, line);
}

static int signal_of(const char *s)
{
	static const struct { const char *name; int sig; } t[] = {
		{ "INT", SIGINT }, { "TERM", SIGTERM }, { "KILL", SIGKILL },
		{ "HUP", SIGHUP }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 },
	};
	long n;

	if (!s || !*s)
		return SIGINT;
	if (kopt_parse_int(s, &n))
		return (int)n;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t k = 0; k < sizeof(t) / sizeof(*t); k++)
		if (!strcasecmp(s, t[k].name))
			return t[k].sig;
	return SIGINT;
}

static int open_qemu(struct krun *r, struct krun_lab *l, char *why, size_t len)
{
	struct kqemu_opts q = { 0 };

	l->qemu_extra = krun_words(krun_opt(r, KOPT_QEMU_OPTIONS), &l->nqemu_extra);
	q.kernel = krun_opt(r, KOPT_QEMU_KERNEL);
	if (!q.kernel || !*q.kernel)
		q.kernel = krun_opt(r, KOPT_TARGET_IMAGE);
	q.initrd = krun_opt(r, KOPT_QEMU_INITRD);
	q.append = krun_opt(r, KOPT_QEMU_APPEND);
	q.memory_mb = (int)krun_int(r, KOPT_QEMU_MEMORY, 256);
	q.kvm = true;
	q.extra = (const char *const *)l->qemu_extra;
	q.notes = stdout;
	l->power = kpower_qemu_new(&q, why, len);
	if (!l->power)
		return -1;
	return 0;
}

static int open_console(struct krun *r, struct krun_lab *l, char *why,
			size_t len)
{
	struct kconsole_opts co = { 0 };

	co.spec = l->qemu ? kpower_qemu_console(l->power) :
		krun_opt(r, KOPT_CONSOLE);
	co.close_signal = signal_of(krun_opt(r, KOPT_CLOSE_CONSOLE_SIGNAL));
	co.exclusive = true;
	if (!co.spec || !*co.spec) {
		snprintf(why, len, "CONSOLE is not set");
		return -1;
	}
	l->con = kconsole_open(&co, why, len);
	return l->con ? 0 : -1;
}

static void stop_forget(struct krun_lab *l)
{
	pcre2_match_data_free(l->stop_md);
	pcre2_code_free(l->stop_re);
	free(l->stop_src);
	l->stop_src = NULL;
	l->stop_re = NULL;
	l->stop_md = NULL;
}

/*
 * Does the console line hold stop? stop is a Perl regex, as ktest.pl
 * matched REBOOT_SUCCESS_LINE (the option reader checked it compiles;
 * if it did not, it is taken as text).
 */
static bool stop_seen(struct krun_lab *l, const char *stop,
		      const char *line, size_t len)
{
	int err;
	PCRE2_SIZE off;

	if (!l->stop_src || strcmp(l->stop_src, stop)) {
		stop_forget(l);
		l->stop_src = xstrdup(stop);
		l->stop_re = pcre2_compile((PCRE2_SPTR)stop,
					   PCRE2_ZERO_TERMINATED, 0, &err,
					   &off, NULL);
		if (l->stop_re)
			l->stop_md = pcre2_match_data_create_from_pattern(
				l->stop_re, NULL);
	}
	if (!l->stop_re || !l->stop_md)
		return strstr(line, stop) != NULL;
	return pcre2_match(l->stop_re, (PCRE2_SPTR)line, len, 0, 0,
			   l->stop_md, NULL) > 0;
}

static void lab_close(struct krun_lab *l)
{
	if (!l)
		return;
	if (l->con)
		kconsole_close(l->con);
	if (l->rb)
		kreboot_free(l->rb);
	if (l->power)
		kpower_free(l->power);
	if (l->box)
		kbox_free(l->box);
	kinstall_opts_release(&l->io);
	kreboot_opts_release(&l->ro);
	kbox_opts_release(&l->bo);
	krun_words_free(l->qemu_extra, l->nqemu_extra);
	if (l->dmesg)
		fclose(l->dmesg);
	sbuf_free(&l->pending);
	stop_forget(l);
	free(l);
}

void krun_lab_close(struct krun *r)
{
	lab_close(r->lab);
	r->lab = NULL;
}

/* The console watch the reboot code uses: until stop, quiet or max_ms. */
static int watch(void *ctx, const char *stop, long quiet_ms, long max_ms)
{
	struct krun_lab *l = ctx;
	int64_t end = kclock_ms() + max_ms;
	struct sbuf line;
	bool got = false;
	int ret = 0;

	sbuf_init(&line);
	for (;;) {
		int64_t quiet = kclock_ms() + quiet_ms;
		enum kcon_status st;

		st = kconsole_read_line(l->con, quiet < end ? quiet : end,
					&line);
		if (st == KCON_TIMEOUT) {
			/* quiet and max at once: quiet, if nothing came at all */
			ret = quiet < end || (quiet == end && !got) ? 0 : 2;
			break;
		}
		if (st != KCON_LINE) {
			ret = -1;
			break;
		}
		got = true;
		krun_log(l->r, "%s\n", sbuf_str(&line));
		sbuf_addn(&l->pending, line.buf ? line.buf : "", line.len);
		sbuf_addc(&l->pending, '\n');
		if (stop && stop_seen(l, stop, sbuf_str(&line), line.len)) {
			ret = 1;
			break;
		}
		if (kclock_ms() >= end) {	/* a console that never stops */
			ret = 2;
			break;
		}
		if (krun_interrupted(l->r))
			break;
	}
	sbuf_free(&line);
	return ret;
}

/*
 * A power command without RUN_TIMEOUT: a PDU script stuck on a dead network
 * must not hang the run for ever (ktest.pl waited); 5 minutes covers an
 * "off; sleep; on" script and a slow IPMI.
 */
#define POWER_MS 300000

/* POWER_TYPE = pdudaemon: the PDUDAEMON_* options */
static struct kpower *open_pdudaemon(struct krun *r, long timeout_ms)
{
	struct kpdud_opts o = {
		.url = krun_opt(r, KOPT_PDUDAEMON_URL),
		.pdu = krun_opt(r, KOPT_PDUDAEMON_PDU),
		.port = krun_opt(r, KOPT_PDUDAEMON_PORT),
		.delay_s = krun_int(r, KOPT_PDUDAEMON_DELAY, -1),
		.timeout_ms = timeout_ms,
	};

	return kpower_pdudaemon_new(&o);
}

/* POWER_TYPE = ipmi: the IPMI_* options */
static struct kpower *open_ipmi(struct krun *r, long timeout_ms)
{
	struct kipmi_opts o = {
		.host = krun_opt(r, KOPT_IPMI_HOST),
		.port = (int)krun_int(r, KOPT_IPMI_PORT, 0),
		.user = krun_opt(r, KOPT_IPMI_USER),
		.password = krun_opt(r, KOPT_IPMI_PASSWORD),
		.password_file = krun_opt(r, KOPT_IPMI_PASSWORD_FILE),
		.cipher = (int)krun_int(r, KOPT_IPMI_CIPHER, -1),
		.timeout_ms = timeout_ms,
	};

	return kpower_ipmi_new(&o);
}

/*
 * The power driver (POWER_TYPE: POWER_CYCLE / POWER_OFF, pdudaemon or
 * ipmi) and the reboot options of an ssh box
 */
static int open_ssh_power(struct krun *r, struct krun_lab *l, char *why,
			  size_t len)
{
	const char *pc = krun_opt(r, KOPT_POWER_CYCLE);
	const char *po = krun_opt(r, KOPT_POWER_OFF);
	/* $MACHINE and $SSH_USER, as ktest.pl's run_command */
	char *cycle = pc ? kstrs_keep(&l->bo.keep, kbox_subst(&l->bo, pc)) : NULL;
	char *off = po ? kstrs_keep(&l->bo.keep, kbox_subst(&l->bo, po)) : NULL;
	long timeout = krun_int(r, KOPT_RUN_TIMEOUT, 0) * 1000;

	const char *type = krun_opt(r, KOPT_POWER_TYPE);

	if (kreboot_opts_read(r->c, r->i, &l->ro)) {
		snprintf(why, len, "the reboot options of test %d do not resolve",
			 r->i);
		return -1;
	}
	timeout = timeout > 0 ? timeout : POWER_MS;
	if (type && !strcmp(type, "pdudaemon"))
		l->power = open_pdudaemon(r, timeout);
	else if (type && !strcmp(type, "ipmi"))
		l->power = open_ipmi(r, timeout);
	else
		l->power = kpower_command_new(cycle, off, timeout);
	return 0;
}

static struct krun_lab *lab_open(struct krun *r, enum kstep_level level,
				 char *why, size_t len)
{
	struct krun_lab *l = xcalloc(1, sizeof(*l));
	const char *bt = krun_opt(r, KOPT_BOX_TYPE);

	sbuf_init(&l->pending);

	l->r = r;
	l->qemu = bt && !strcmp(bt, "qemu");
	if (kbox_opts_read(r->c, r->i, &l->bo) ||
	    kinstall_opts_read(r->c, r->i, &l->io)) {
		snprintf(why, len, "the box options of test %d do not resolve", r->i);
		goto fail;
	}
	l->bo.on_line = lab_line;
	l->bo.ctx = r;
	l->io.on_line = lab_line;
	l->io.ctx = r;
	l->box = kbox_new(&l->bo);
	if (level < KSTEP_BOOT)
		return l;
	if (l->qemu) {
		const char *spec;

		if (open_qemu(r, l, why, len))
			goto fail;
		/* commands (TEST) can type on the box's serial line */
		spec = kpower_qemu_console(l->power);
		if (spec && !strncmp(spec, "pty:", 4))
			setenv("KTEST_CONSOLE", spec + 4, 1);
	} else if (open_ssh_power(r, l, why, len)) {
		goto fail;
	}
	if (open_console(r, l, why, len))
		goto fail;
	if (!l->qemu)
		l->rb = kreboot_new(l->box, &l->ro, l->power, watch, l);
	return l;
fail:
	lab_close(l);
	return NULL;
}

/* ---- install ---- */

static int install(struct krun *r, struct krun_lab *l, const char *release,
		   const char *modules, struct kstep_result *res, long *ms)
{
	struct kinstall_result ir;

	l->io.kernel_version = release;
	l->io.modules_tarball = modules;
	krun_print(r, "Installing %s%s\n", release,
		   l->io.no_install ? " (NO_INSTALL: skipped)" : "");
	kinstall_run(l->box, &l->io, &ir);
	l->io.modules_tarball = NULL;
	*ms = ir.elapsed_ms;
	r->ms[1] += ir.elapsed_ms;
	snprintf(res->phase, sizeof(res->phase), "install");
	switch (ir.status) {
	case KINSTALL_OK:
	case KINSTALL_SKIPPED:
		return 0;
	case KINSTALL_MODULES:
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why), "failed install: %s", ir.why);
		return -1;
	default:
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "install could not run: %s",
			 ir.why);
		return -1;
	}
}

/* ---- boot ---- */

static long secs_ms(struct krun *r, enum kopt_id id, long undef)
{
	const char *v = krun_opt(r, id);
	long n;

	if (!v || !*v || !kopt_parse_int(v, &n))
		return undef;
	return n * 1000;
}

static int fill_monitor(struct krun *r, struct kmon_config *mc,
			const char *release, bool test_phase)
{
	const char *classes = krun_opt(r, KOPT_CRASH_FAIL_CLASSES);

	memset(mc, 0, sizeof(*mc));
	mc->success_line = test_phase ? NULL : krun_opt(r, KOPT_SUCCESS_LINE);
	mc->expected_version = release;
	mc->detect_triple_fault = krun_bool(r, KOPT_DETECT_TRIPLE_FAULT);
	mc->ignore_errors = krun_bool(r, KOPT_IGNORE_ERRORS);
	mc->fail_classes = KMON_DEFAULT_FAIL;
	if (classes && *classes && kmon_parse_classes(classes, &mc->fail_classes))
		return -1;
	mc->timeout_ms = test_phase ? -1 : secs_ms(r, KOPT_TIMEOUT, -1);
	mc->booted_timeout_ms = secs_ms(r, KOPT_BOOTED_TIMEOUT, mc->timeout_ms);
	mc->stop_after_success_ms = secs_ms(r, KOPT_STOP_AFTER_SUCCESS, -1);
	mc->stop_after_failure_ms = secs_ms(r, KOPT_STOP_AFTER_FAILURE, -1);
	mc->stop_test_after_ms = test_phase ? secs_ms(r, KOPT_STOP_TEST_AFTER, 0) : 0;
	return 0;
}

static void console_line(struct krun_lab *l, const char *s, bool logged)
{
	if (logged)
		printf("%s\n", s);
	else
		krun_print(l->r, "%s\n", s);
	if (l->dmesg) {
		fprintf(l->dmesg, "%s\n", s);
		fflush(l->dmesg);
	}
}

/* The first crash that fails, as the step's title. */
static void crash_title(struct kmonitor *m, struct kstep_result *res)
{
	const struct kmon_crash *c;
	size_t n = kmonitor_crashes(m, &c);

	for (size_t k = 0; k < n; k++) {
		if (c[k].fails) {
			snprintf(res->title, sizeof(res->title), "%s", c[k].title);
			return;
		}
	}
}

/* Feeds console lines to m until it decides (or done() says stop). */
static int watch_console(struct krun_lab *l, struct kmonitor *m,
			 volatile int *done)
{
	struct sbuf line;
	int64_t max = kclock_ms() + secs_ms(l->r, KOPT_MAX_MONITOR_WAIT, 1800000);
	int ret = 0;

	/* what the reboot already read, in order */
	for (const char *p = sbuf_str(&l->pending); *p && kmonitor_verdict(m) == KMON_RUNNING;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *one = xstrndup(p, n);

		console_line(l, one, true);	/* watch() logged it */
		kmonitor_line(m, one, n, kclock_ms());
		free(one);
		kernel_news(l, m);
		p += n + (nl ? 1 : 0);
	}
	sbuf_reset(&l->pending);
	sbuf_init(&line);
	while (kmonitor_verdict(m) == KMON_RUNNING) {
		int64_t want = kmonitor_deadline(m), dl;
		enum kcon_status st;

		if (want > max)
			want = max;
		dl = want;
		if (done) {
			if (*done)
				break;
			if (dl > kclock_ms() + 200)
				dl = kclock_ms() + 200;
		}
		/*
		 * Looked at twice a second: SIGINT (the console's poll goes
		 * on after EINTR, so a silent console would keep it until
		 * TIMEOUT), and the qemu box, which says nothing more once
		 * qemu has exited (a panic with -no-reboot)
		 */
		if (dl > kclock_ms() + 500)
			dl = kclock_ms() + 500;
		st = kconsole_read_line(l->con, dl, &line);
		if (st == KCON_LINE) {
			console_line(l, sbuf_str(&line), false);
			kmonitor_line(m, line.buf, line.len, kclock_ms());
			kernel_news(l, m);
		} else if (st == KCON_TIMEOUT && l->qemu &&
			   kpower_state(l->power) == KPOWER_OFF) {
			kmonitor_eof(m, kclock_ms());
			break;
		} else if (st == KCON_TIMEOUT) {
			kmonitor_tick(m, kclock_ms());
		} else if (st != KCON_GONE || dl >= want) {
			ret = -1;
			break;
		}	/* else gone for now: reopened until the monitor's deadline */
		if (kclock_ms() >= max || krun_interrupted(l->r)) {
			ret = -1;
			break;
		}
	}
	sbuf_free(&line);
	return ret;
}

/*
 * What the console holds before the power up is the old kernel's: the good
 * kernel the last step rebooted into (its banner and login prompt, unread
 * when BISECT_SLEEP_TIME is 0 or it took longer), what it printed while
 * this kernel was built and installed. Read as this boot's, its login
 * prompt passed a kernel that never printed one. ktest.pl read its console
 * until 5 s of silence before the install, and closed it until the boot.
 * Here what is queued is read into the log until DRAIN_QUIET_MS of silence
 * (DRAIN_MAX_MS at most: a box that keeps talking), before the power up,
 * so the new boot's banner cannot be swallowed.
 *
 * A console (re)opened less than DRAIN_FRESH_MS ago may not have spoken
 * yet: a console command still starting, a console server that replays its
 * buffer a moment after the connect (a resumed run whose first build comes
 * from the cache boots right after the open). Its silence is not the old
 * kernel's, so the drain waits until the console is DRAIN_FRESH_MS old.
 * The qemu box is ours: it is turned off first (its power cycle would),
 * and what its pty holds then is all there is, read without a quiet time.
 *
 * The same is read before the end of the run's halt or reboot (boot
 * false), whose wait ends on the kernel's last line: an old shutdown's
 * must not end it.
 */
#define DRAIN_QUIET_MS	100
#define DRAIN_FRESH_MS	1000
#define DRAIN_MAX_MS	2000

static void drain_console(struct krun *r, struct krun_lab *l, bool boot)
{
	int64_t end = kclock_ms() + DRAIN_MAX_MS;
	int64_t fresh, quiet = DRAIN_QUIET_MS;
	struct sbuf line;
	size_t n = 0;

	if (!l->con)
		return;
	fresh = l->qemu ? 0 : kconsole_opened_ms(l->con) + DRAIN_FRESH_MS;
	/* a qemu box that is off says nothing more: what is queued is all */
	if (l->qemu && kpower_state(l->power) == KPOWER_OFF)
		quiet = 0;
	sbuf_init(&line);
	while (kclock_ms() < end) {
		int64_t dl = kclock_ms() + quiet;

		if (dl < fresh)
			dl = fresh;
		if (kconsole_read_line(l->con, dl < end ? dl : end, &line) !=
		    KCON_LINE)
			break;
		if (!n++)
			krun_log(r, "%s", boot ?
				 "ktest: the console before this boot (the old kernel's, not this one's):\n" :
				 "ktest: the console before the box goes down (old lines):\n");
		krun_log(r, "%s\n", sbuf_str(&line));
	}
	sbuf_free(&line);
	if (n && boot)
		krun_print(r, "ktest: %zu line%s on the console from before this boot, not this kernel's: in the log\n",
			   n, n == 1 ? "" : "s");
}

static int power_up(struct krun *r, struct krun_lab *l, struct kstep_result *res)
{
	struct kreboot_result rr;

	if (l->qemu) {
		if (kpower_cycle(l->power)) {
			res->verdict = KV_INFRA;
			snprintf(res->why, sizeof(res->why), "qemu box: %s",
				 l->power->err);
			return -1;
		}
		return 0;
	}
	memset(&rr, 0, sizeof(rr));
	if (kreboot_to_test(l->rb, &rr)) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "cannot reboot the box: %s",
			 rr.why);
		return -1;
	}
	return 0;
}

static int boot(struct krun *r, struct krun_lab *l, const char *release,
		struct kstep_result *res, long *ms)
{
	struct kmon_config mc;
	struct kmonitor *m;
	char why[512];
	int64_t t0 = kclock_ms();
	int ret = -1, watched;
	bool dead;

	snprintf(res->phase, sizeof(res->phase), "boot");
	if (fill_monitor(r, &mc, release, false)) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "CRASH_FAIL_CLASSES is not a list of crash classes");
		return -1;
	}
	if (l->dmesg)
		fclose(l->dmesg);
	l->dmesg = kcmd_fopen_private(r->dmesg, "w");
	sbuf_reset(&l->pending);	/* the old kernel's lines are not this boot's */
	/* the qemu box goes off now, not in the power cycle: no quiet wait */
	if (l->qemu && kpower_off(l->power))
		krun_log(r, "ktest: %s (the power cycle tries again)\n",
			 l->power->err);
	drain_console(r, l, true);
	krun_print(r, "Booting %s%s\n", release, l->qemu ? " on the qemu box" : "");
	if (power_up(r, l, res))
		goto out_time;
	m = kmonitor_new(&mc, kclock_ms(), why, sizeof(why));
	if (!m) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "SUCCESS_LINE: %s", why);
		goto out_time;
	}
	/*
	 * A console that kept dying without a line is the same fault whether
	 * it was closed (gone) or just reopened (silent) when TIMEOUT came:
	 * one message for both.
	 */
	l->booting = true;
	watched = watch_console(l, m, NULL);
	l->booting = false;
	dead = !r->interrupted && kconsole_dead_silent(l->con);
	if (watched && !dead) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "the console of %s: %s",
			 krun_opt(r, KOPT_MACHINE) ? krun_opt(r, KOPT_MACHINE) : "the box",
			 r->interrupted ? "interrupted" :
			 kconsole_error(l->con) ? kconsole_error(l->con) :
			 "no decision before MAX_MONITOR_WAIT");
	} else if (kmonitor_verdict(m) == KMON_BOOTED) {
		ret = 0;
	} else if (dead && (watched || kmonitor_verdict(m) == KMON_TIMED_OUT)) {
		/* the console kept dying: the boot was not seen, not silent */
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why),
			 "the console of %s: console %s went away and did not come back (it ended without a line each time it was opened)",
			 krun_opt(r, KOPT_MACHINE) ? krun_opt(r, KOPT_MACHINE) : "the box",
			 krun_opt(r, KOPT_CONSOLE) ? krun_opt(r, KOPT_CONSOLE) : "");
	} else {
		res->verdict = KV_BAD;
		crash_title(m, res);
		const char *reason = kmonitor_reason(m);
		bool has = res->title[0] && strstr(reason, res->title);

		snprintf(res->why, sizeof(res->why), "failed boot: %s%s%s",
			 reason, res->title[0] && !has ? ": " : "",
			 has ? "" : res->title);
	}
	kmonitor_free(m);
out_time:
	*ms = kclock_ms() - t0;
	r->ms[2] += *ms;
	return ret;
}

/* ---- test ---- */

struct test_run {
	const char *cmd;
	struct kcmd_opts o;
	struct kcmd_result res;
	int started;
	volatile int done;
	FILE *log;
	struct krun *r;
};

static void test_line(void *ctx, const char *line, size_t len)
{
	struct test_run *t = ctx;

	krun_log(t->r, "%.*s\n", (int)len, line);
	if (t->log)
		fprintf(t->log, "%.*s\n", (int)len, line);
}

static void *test_thread(void *arg)
{
	struct test_run *t = arg;

	t->started = kcmd_run(t->cmd, &t->o, &t->res);
	t->done = 1;
	return NULL;
}

static int run_test_cmd(struct krun *r, struct krun_lab *l,
			const char *release, struct kstep_result *res, long *ms)
{
	struct test_run t = { 0 };
	struct kmon_config mc;
	struct kmonitor *m;
	pthread_t th;
	char why[256], how[128];
	int64_t t0 = kclock_ms();

	snprintf(res->phase, sizeof(res->phase), "test");
	t.cmd = krun_opt(r, KOPT_TEST);
	t.r = r;
	t.o.on_line = test_line;
	t.o.ctx = &t;
	t.o.stdin_null = true;
	t.o.timeout_ms = secs_ms(r, KOPT_STOP_TEST_AFTER, 0);
	t.log = kcmd_fopen_private(r->testlog, "w");
	fill_monitor(r, &mc, release, true);
	m = kmonitor_new(&mc, kclock_ms(), why, sizeof(why));
	krun_print(r, "Running TEST: %s\n", t.cmd);
	if (!m || pthread_create(&th, NULL, test_thread, &t)) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "cannot start TEST");
		if (m)
			kmonitor_free(m);
		if (t.log)
			fclose(t.log);
		return -1;
	}
	watch_console(l, m, &t.done);
	pthread_join(th, NULL);
	if (t.log)
		fclose(t.log);
	*ms = kclock_ms() - t0;
	r->ms[3] += *ms;
	res->test_status = t.res.signal ? -1 : t.res.status;
	crash_title(m, res);
	kmonitor_free(m);
	if (t.started) {
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "cannot run TEST %s: %s",
			 t.cmd, strerror(errno));
		return -1;
	}
	if (res->title[0]) {
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why), "failed test: the kernel crashed: %s",
			 res->title);
		return -1;
	}
	if (t.res.status != 0 || t.res.signal || t.res.timed_out) {
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why), "failed test: TEST %s",
			 kcmd_describe(&t.res, how, sizeof(how)));
		return -1;
	}
	return 0;
}

/* ---- after the step ---- */

/*
 * The line that says the good kernel is up: REBOOT_SUCCESS_LINE, else
 * SUCCESS_LINE ("login:"). ktest.pl waited for REBOOT_SUCCESS_LINE only,
 * and without it for SLEEP_TIME of console quiet after the login prompt.
 */
static const char *good_line(struct krun *r, struct krun_lab *l)
{
	const char *line = l->ro.reboot_success_line;

	if (!line || !*line)
		line = krun_opt(r, KOPT_SUCCESS_LINE);
	return line && *line ? line : "login:";
}

/*
 * SLEEP_TIME, BISECT_SLEEP_TIME, PATCHCHECK_SLEEP_TIME: ended by the good
 * kernel's line or ssh answering; sleep_ms of console quiet is the bound.
 */
void krun_lab_settle(struct krun *r, long sleep_ms)
{
	struct krun_lab *l = r->lab;
	struct kreboot_result rr;
	const char *saved;
	int64_t t0 = kclock_ms();
	int rc;

	if (!l || !l->power)
		return;
	if (l->qemu) {
		kpower_qemu_stop(l->power);
		return;
	}
	memset(&rr, 0, sizeof(rr));
	krun_print(r, "Reboot and wait %ld seconds\n", sleep_ms / 1000);
	saved = l->ro.reboot_success_line;
	l->ro.reboot_success_line = good_line(r, l);
	rc = kreboot_to_good(l->rb, sleep_ms, &rr);
	if (rc)
		krun_print(r, "ktest: could not reboot the box to its good kernel: %s\n",
			   rr.why);
	else if (rr.up && sleep_ms > 0)
		krun_print(r, "ktest: the good kernel is up (%s) after %.1f s\n",
			   rr.up_ssh ? "it answers ssh" : l->ro.reboot_success_line,
			   (kclock_ms() - t0) / 1000.0);
	l->ro.reboot_success_line = saved;
}

int krun_lab_health(struct krun *r, char *why, size_t len)
{
	long wait_ms = krun_int(r, KOPT_TIMEOUT, 120) * 1000;
	struct kreboot_result rr;
	const char *saved, *line;
	struct krun_lab *l;
	int rc;

	if (r->lab && r->lab->qemu)
		return 1;
	if (!r->lab || !r->lab->rb) {
		krun_lab_close(r);	/* opened for install only: no console */
		r->lab = lab_open(r, KSTEP_BOOT, why, len);
		if (!r->lab)
			return -1;
	}
	l = r->lab;
	if (l->qemu)
		return 1;
	/* up means a line was waited for: SUCCESS_LINE when REBOOT_SUCCESS_LINE is unset */
	saved = l->ro.reboot_success_line;
	line = good_line(r, l);
	l->ro.reboot_success_line = line;
	memset(&rr, 0, sizeof(rr));
	rc = kreboot_to_good(l->rb, wait_ms, &rr);
	l->ro.reboot_success_line = saved;
	if (rc) {
		snprintf(why, len, "it could not be rebooted: %s", rr.why);
		return -1;
	}
	if (!rr.up) {
		snprintf(why, len, "its good kernel did not show '%s' (%s) on the console within %ld s%s",
			 line, saved && *saved ? "REBOOT_SUCCESS_LINE" : "SUCCESS_LINE",
			 wait_ms / 1000, rr.stuck ? " (no \"Linux version\" either, even after a power cycle)" : "");
		return -1;
	}
	return 0;
}

int krun_lab_step(struct krun *r, enum kstep_level level, const char *release,
		  const char *modules, struct kstep_result *res, long *ms)
{
	char why[1024];

	if (!r->lab) {
		r->lab = lab_open(r, level, why, sizeof(why));
		if (!r->lab) {
			res->verdict = KV_INFRA;
			snprintf(res->phase, sizeof(res->phase), "install");
			snprintf(res->why, sizeof(res->why), "%s", why);
			return -1;
		}
	}
	if (install(r, r->lab, release, modules, res, &ms[KPH_INSTALL]))
		return -1;
	if (level == KSTEP_INSTALL)
		return 0;
	if (boot(r, r->lab, release, res, &ms[KPH_BOOT]))
		return -1;
	if (level == KSTEP_BOOT)
		return 0;
	return run_test_cmd(r, r->lab, release, res, &ms[KPH_TEST]);
}

/* ---- the end of the run, or a critical failure ---- */

static int lab_power(struct krun *r, struct krun_lab *l, enum krun_power what)
{
	struct kreboot_result rr;
	int ret = 0;

	if (l->qemu) {
		/* its good kernel is no kernel: off, whatever was asked */
		if (l->power && kpower_off(l->power)) {
			krun_print(r, "ktest: cannot power off the qemu box: %s\n",
				   l->power->err);
			return -1;
		}
		return 0;
	}
	if (!l->rb)
		l->rb = kreboot_new(l->box, &l->ro, l->power, NULL, NULL);
	memset(&rr, 0, sizeof(rr));
	switch (what) {
	case KRUN_TO_GOOD:
		ret = kreboot_to_good(l->rb, 0, &rr);
		if (ret)
			krun_print(r, "ktest: could not reboot the box to its good kernel: %s\n",
				   rr.why);
		break;
	case KRUN_POWER_OFF:
		ret = kpower_off(l->power);
		if (ret)
			krun_print(r, "ktest: POWER_OFF failed: %s\n",
				   l->power->err);
		break;
	case KRUN_HALT:
		ret = kreboot_halt(l->rb, &rr);
		if (ret)
			krun_print(r, "ktest: could not halt the box: %s\n",
				   rr.why);
		break;
	}
	return ret ? -1 : 0;
}

/*
 * A halt with POWEROFF_AFTER_HALT, a reboot with POWERCYCLE_AFTER_REBOOT
 * wait for the kernel's last line (doc/waits.md): the lab is opened with
 * its console for them, what it had queued read first. A console that
 * does not open leaves them the whole delay, and so does a delay no
 * longer than that read may take.
 */
static struct krun_lab *lab_open_power(struct krun *r, enum krun_power what,
				       char *why, size_t len)
{
	enum kopt_id o = what == KRUN_HALT ? KOPT_POWEROFF_AFTER_HALT :
		KOPT_POWERCYCLE_AFTER_REBOOT;
	struct krun_lab *l;
	char cwhy[1024];

	if (what != KRUN_POWER_OFF && krun_int(r, o, -1) * 1000 > DRAIN_MAX_MS) {
		l = lab_open(r, KSTEP_BOOT, cwhy, sizeof(cwhy));
		if (l) {
			drain_console(r, l, false);
			return l;
		}
		krun_print(r, "ktest: %s: %s is waited whole\n", cwhy,
			   kopt_table[o].name);
	}
	return lab_open(r, KSTEP_INSTALL, why, len);
}

int krun_lab_power(struct krun *r, enum krun_power what)
{
	struct krun_lab *l = r->lab;
	const char *bt = krun_opt(r, KOPT_BOX_TYPE);
	char why[1024];
	int ret;

	if (l)
		goto have_lab;
	/* a closed qemu box is a stopped one */
	if (bt && !strcmp(bt, "qemu"))
		return 0;
	l = lab_open_power(r, what, why, sizeof(why));
	if (!l) {
		krun_print(r, "ktest: %s\n", why);
		return -1;
	}
have_lab:
	if (!l->qemu && !l->power && open_ssh_power(r, l, why, sizeof(why))) {
		krun_print(r, "ktest: %s\n", why);
		ret = -1;
	} else {
		ret = lab_power(r, l, what);
	}
	if (l != r->lab)
		lab_close(l);
	return ret;
}
