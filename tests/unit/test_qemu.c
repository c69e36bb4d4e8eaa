// SPDX-License-Identifier: GPL-2.0-only
/*
 * The qemu box on the real thing: the lab kernel (tests/lab/kernel.sh, the
 * tinyconfig + lab fragment build of Debian's linux-source-6.1) booting to
 * the lab initramfs (tests/lab/initramfs.sh) under kpower_qemu_new(), read
 * through kconsole_open() on the box's serial pty and judged by the console
 * monitor, as ktest's boot step will do it:
 *
 *   a clean boot (verdict booted, a command typed on the console answers),
 *   a power cycle (the same console, no hang-up, the next boot follows),
 *   a reboot that stops the box, a panic, an Oops with its call trace, a
 *   WARN_ON, a hang (the monitor's timeout), a reboot into another kernel (a triple
 *   fault as ktest.pl sees it), and free() leaving no qemu behind.
 *
 * Two kernels are built, LOCALVERSION -ktest and -ktest2, with kbuild_run()
 * in a private copy of the lab tree, and kept in $KTEST_LAB/qemu-kernel
 * with a key (the lab tree's stamp, the fragment, this file's recipe): a
 * rerun on the same lab boots at once. Without the lab the test fails; it
 * never skips.
 *
 * KTEST_CAPTURE=DIR saves each boot's console log as DIR/real-NAME.log
 * (tests/lab/capture-logs.sh turns them into tests/data/console cases).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "console/monitor.h"
#include "ktest/build.h"
#include "ktest/cmd.h"
#include "power/power.h"
#include "kernel_lab.h"

/* Bump when the way the kernels are built changes. */
#define RECIPE		1
#define BUILD_TIMEOUT	(30 * 60 * 1000L)
/* Silence before the success line that fails a boot (TCG on a busy box). */
#define BOOT_TIMEOUT	(90 * 1000L)
/* No verdict after this long: the test itself is stuck. */
#define WATCH_LIMIT	(180 * 1000L)
#define SUCCESS		"ktest: booted "

static const char *const versions[2] = { "-ktest", "-ktest2" };

struct lab {
	char *kernel_sh, *initramfs_sh;
	char *work;			/* $KTEST_LAB/qemu-kernel */
	char *image[2], *release[2];	/* the two kernels */
	char *installed;		/* the box's "disk": a copy of one */
	char *initrd;
	char *capture;			/* KTEST_CAPTURE */
	int lock;
	struct kpower *box;
	struct kconsole *con;
};

/* ---- the two kernels ------------------------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	struct sbuf b;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return sbuf_detach(&b);
}

static void spit(const char *path, const char *text)
{
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "we");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
	free(tmp);
}

/* The fragment's settings, without its comments. */
static char *settings(const char *text)
{
	struct sbuf b;

	sbuf_init(&b);
	while (*text) {
		size_t n = strcspn(text, "\n");

		if (*text != '#')
			sbuf_addn(&b, text, n);
		if (*text != '#' && n)
			sbuf_addc(&b, '\n');
		text += n + (text[n] == '\n');
	}
	return sbuf_detach(&b);
}

/* What the cached kernels were built from. */
static char *build_key(struct lab *l, const char *fragment)
{
	char *stamp_path = xasprintf("%s/../linux.stamp", l->work);
	char *stamp = slurp(stamp_path), *frag = slurp(fragment), *key, *set;

	if (!stamp || !frag)
		fail_msg("cannot read %s or %s", stamp_path, fragment);
	set = settings(frag);
	key = xasprintf("recipe %d\n%s%s-- %s %s\n", RECIPE, stamp, set,
			versions[0], versions[1]);
	free(set);
	free(stamp_path);
	free(stamp);
	free(frag);
	return key;
}

struct watch_build {
	long next;
	size_t lines;
};

static void build_line(void *ctx, const char *line, size_t len)
{
	struct watch_build *w = ctx;

	(void)len;
	w->lines++;
	if (lab_now_ms() >= w->next || strstr(line, "Kernel: ")) {
		progress("  %zu lines: %s", w->lines, line);
		w->next = lab_now_ms() + 20000;
	}
}

static void build_kernels(struct lab *l, const char *key)
{
	char *dir = xasprintf("%s/build", l->work), *cmd, *make, *frag;
	char *src = xasprintf("%s/linux", dir), *out = xasprintf("%s/out", dir);
	char *log = xasprintf("%s/build.log", dir), jobs[32];
	struct watch_build w = { 0 };
	struct kbuild_opts o;
	struct kbuild_result r;

	cmd = xasprintf("rm -rf '%s' && mkdir -p '%s'", dir, dir);
	sh(cmd);
	free(cmd);
	cmd = xasprintf("copy '%s'", src);
	free(lab_run(l->kernel_sh, cmd));
	free(cmd);
	cmd = xasprintf("config '%s'", dir);
	frag = lab_run(l->kernel_sh, cmd);
	free(cmd);
	cmd = xasprintf("make '%s'", dir);
	make = lab_run(l->kernel_sh, cmd);
	free(cmd);
	snprintf(jobs, sizeof(jobs), "-j%ld", sysconf(_SC_NPROCESSORS_ONLN));
	o = (struct kbuild_opts){
		.make_cmd = make,
		.build_dir = src,
		.output_dir = out,
		.build_type = "tinyconfig",
		.build_options = jobs,
		.build_target = "arch/x86/boot/bzImage",
		.min_config = frag,
		.timeout_ms = BUILD_TIMEOUT,
		.log = log,
		.on_line = build_line,
		.ctx = &w,
	};
	for (int i = 0; i < 2; i++) {
		o.localversion = versions[i];
		if (i) {
			/* the same tree again: only the version changes */
			o.build_type = "oldconfig";
			o.noclean = true;
		}
		progress("building the lab kernel with LOCALVERSION=%s (%s; ~40 s with a warm ccache, ~2.5 min cold)",
			 versions[i], o.build_type);
		w.next = 0;
		if (kbuild_run(&o, &r) < 0) {
			cmd = xasprintf("tail -n 30 '%s'", log);
			if (system(cmd) < 0)
				perror("system");
			fail_msg("building the lab kernel: %s", r.why);
		}
		progress("built %s in %.1f s", r.release, r.elapsed_ms / 1000.0);
		cmd = xasprintf("cp '%s/arch/x86/boot/bzImage' '%s.tmp' && mv '%s.tmp' '%s'",
				out, l->image[i], l->image[i], l->image[i]);
		sh(cmd);
		free(cmd);
		cmd = xasprintf("%s.release", l->image[i]);
		spit(cmd, r.release);
		free(cmd);
	}
	cmd = xasprintf("%s/key", l->work);
	spit(cmd, key);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", dir);
	sh(cmd);
	free(cmd);
	free(make);
	free(frag);
	free(src);
	free(out);
	free(log);
	free(dir);
}

static void prepare_kernels(struct lab *l)
{
	char *frag_dir = xasprintf("%s/key-config", l->work), *cmd, *frag;
	char *key, *old, *path;
	bool fresh;

	cmd = xasprintf("config '%s'", frag_dir);
	frag = lab_run(l->kernel_sh, cmd);
	free(cmd);
	key = build_key(l, frag);
	path = xasprintf("%s/key", l->work);
	old = slurp(path);
	fresh = old && !strcmp(old, key);
	for (int i = 0; i < 2 && fresh; i++)
		fresh = access(l->image[i], R_OK) == 0;
	if (!fresh)
		build_kernels(l, key);
	else
		progress("the lab kernels are built already (%s)", l->work);
	for (int i = 0; i < 2; i++) {
		char *rel = xasprintf("%s.release", l->image[i]);

		l->release[i] = slurp(rel);
		if (!l->release[i])
			fail_msg("cannot read %s", rel);
		free(rel);
	}
	free(path);
	free(old);
	free(key);
	free(frag);
	free(frag_dir);
}

/* "Installs" kernel i: replaces the box's disk, as an install over ssh. */
static void install(struct lab *l, int i)
{
	char *cmd = xasprintf("cp '%s' '%s.tmp' && mv '%s.tmp' '%s'",
			      l->image[i], l->installed, l->installed,
			      l->installed);

	sh(cmd);
	free(cmd);
}

/* ---- the box and its console ---------------------------------------------------- */

static struct kpower *new_box(struct lab *l)
{
	struct kqemu_opts o = {
		.kernel = l->installed,
		.initrd = l->initrd,
		.append = "ktest.mode=ok",
		.kvm = true,
		.notes = stdout,
	};
	char err[512];
	struct kpower *p = kpower_qemu_new(&o, err, sizeof(err));

	if (!p)
		fail_msg("kpower_qemu_new: %s", err);
	return p;
}

static struct kconsole *open_console(struct kpower *p)
{
	struct kconsole_opts o = { .spec = kpower_qemu_console(p),
				   .exclusive = true };
	char err[512];
	struct kconsole *c = kconsole_open(&o, err, sizeof(err));

	if (!c)
		fail_msg("kconsole_open(%s): %s", o.spec, err);
	return c;
}

static int setup(void **state)
{
	struct lab *l = xcalloc(1, sizeof(*l));
	char *tree, *lockpath, *cmd;

	lab_t0 = lab_now_ms();
	l->kernel_sh = lab_script("kernel.sh");
	l->initramfs_sh = lab_script("initramfs.sh");
	if (!l->kernel_sh || !l->initramfs_sh)
		fail_msg("tests/lab/kernel.sh or initramfs.sh not found (set KTEST_SRC)");
	progress("preparing the lab tree (the first time: ~1 min)");
	tree = lab_run(l->kernel_sh, "tree");
	cmd = xstrdup(tree);
	l->work = xasprintf("%s/qemu-kernel", dirname(cmd));
	free(cmd);
	free(tree);
	cmd = xasprintf("mkdir -p '%s'", l->work);
	sh(cmd);
	free(cmd);

	/* one run at a time: the kernels and the box's disk are shared */
	lockpath = xasprintf("%s.lock", l->work);
	l->lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(l->lock >= 0);
	assert_int_equal(flock(l->lock, LOCK_EX), 0);
	free(lockpath);

	for (int i = 0; i < 2; i++)
		l->image[i] = xasprintf("%s/bzImage%s", l->work, versions[i]);
	prepare_kernels(l);
	l->initrd = lab_run(l->initramfs_sh, "");
	l->installed = xasprintf("%s/installed", l->work);
	install(l, 0);
	l->capture = getenv("KTEST_CAPTURE");
	if (l->capture)
		progress("capturing console logs into %s", l->capture);

	l->box = new_box(l);
	l->con = open_console(l->box);
	progress("box: %s, console %s", kpower_qemu_kvm(l->box) ? "KVM" :
		 "software emulation (TCG)", kpower_qemu_console(l->box));
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;

	kconsole_close(l->con);
	kpower_free(l->box);
	close(l->lock);
	for (int i = 0; i < 2; i++) {
		free(l->image[i]);
		free(l->release[i]);
	}
	free(l->kernel_sh);
	free(l->initramfs_sh);
	free(l->work);
	free(l->installed);
	free(l->initrd);
	free(l);
	return 0;
}

/* ---- watching a boot ------------------------------------------------------------- */

struct boot {
	struct kmonitor *m;
	struct sbuf log;	/* every line read, '\n'-terminated */
	long on_ms;		/* when the box was switched on */
	long booted_ms;		/* the success line, from on_ms; -1: none */
	int reinstall;		/* >= 0: when the box stops, install this
				 * kernel and switch it on again (once) */
	bool stopped;		/* the box switched itself off */
};

static struct kmon_config mon_config(void)
{
	struct kmon_config c = {
		.success_line = SUCCESS,
		.detect_triple_fault = true,
		.fail_classes = KMON_ALL,
		.timeout_ms = BOOT_TIMEOUT,
		.booted_timeout_ms = 1000,
		.stop_after_success_ms = -1,
		.stop_after_failure_ms = 2000,
		.stop_test_after_ms = 0,
	};
	return c;
}

/* Reads what is left on the line, until it is quiet for ms. */
static void drain(struct lab *l, struct sbuf *log, long ms)
{
	struct sbuf line;

	sbuf_init(&line);
	while (kconsole_read_line(l->con, kclock_ms() + ms, &line) == KCON_LINE) {
		if (log) {
			sbuf_addn(log, line.buf, line.len);
			sbuf_addc(log, '\n');
		}
	}
	sbuf_free(&line);
}

/* Switches the box on with the kernel command line "ktest.mode=MODE". */
static void power_on(struct lab *l, struct boot *b, const char *mode,
		     const struct kmon_config *c)
{
	char why[256], *append = xasprintf("ktest.mode=%s", mode);

	/* what the previous boot still had to say is not this boot's */
	assert_int_equal(kpower_off(l->box), 0);
	drain(l, NULL, 300);
	kpower_qemu_set_append(l->box, append);
	free(append);
	memset(b, 0, sizeof(*b));
	sbuf_init(&b->log);
	b->booted_ms = -1;
	b->reinstall = -1;
	b->m = kmonitor_new(c, kclock_ms(), why, sizeof(why));
	if (!b->m)
		fail_msg("kmonitor_new: %s", why);
	b->on_ms = lab_now_ms();
	if (kpower_on(l->box) < 0)
		fail_msg("kpower_on: %s", l->box->err);
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
}

/*
 * Feeds console lines to the monitor until it decides. The box stopping
 * (qemu exited: a reboot or a panic with -no-reboot) is the console
 * ending, once the last bytes are read.
 */
static enum kmon_verdict watch(struct lab *l, struct boot *b)
{
	long limit = lab_now_ms() + WATCH_LIMIT;
	struct sbuf line;
	enum kcon_status st;
	int64_t off_at = -1;

	sbuf_init(&line);
	while (kmonitor_verdict(b->m) == KMON_RUNNING) {
		int64_t now = kclock_ms(), dl = kmonitor_deadline(b->m);

		if (lab_now_ms() > limit)
			fail_msg("no verdict after %ld s", WATCH_LIMIT / 1000);
		/* a look at the box five times a second */
		if (dl > now + 200)
			dl = now + 200;
		st = kconsole_read_line(l->con, dl, &line);
		if (st == KCON_LINE) {
			sbuf_addn(&b->log, line.buf, line.len);
			sbuf_addc(&b->log, '\n');
			if (b->booted_ms < 0 && strstr(line.buf, SUCCESS))
				b->booted_ms = lab_now_ms() - b->on_ms;
			kmonitor_line(b->m, line.buf, line.len, kclock_ms());
			continue;
		}
		if (st != KCON_TIMEOUT)
			fail_msg("console: %s", kconsole_error(l->con));
		now = kclock_ms();
		if (off_at < 0 && kpower_state(l->box) == KPOWER_OFF) {
			if (l->box->err[0])
				fail_msg("%s", l->box->err);
			off_at = now;
			b->stopped = true;
		}
		/* the partial-line flush (250 ms) has had its chance */
		if (off_at >= 0 && now - off_at >= 400) {
			if (b->reinstall >= 0) {
				progress("the box stopped: installing %s and switching it on",
					 l->release[b->reinstall]);
				install(l, b->reinstall);
				b->reinstall = -1;
				off_at = -1;
				if (kpower_on(l->box) < 0)
					fail_msg("kpower_on: %s", l->box->err);
				continue;
			}
			kmonitor_eof(b->m, now);
			break;
		}
		kmonitor_tick(b->m, now);
	}
	sbuf_free(&line);
	return kmonitor_verdict(b->m);
}

static const char *verdict_name(enum kmon_verdict v)
{
	static const char *const names[] = {
		[KMON_RUNNING] = "running", [KMON_BOOTED] = "booted",
		[KMON_CRASHED] = "crashed", [KMON_TIMED_OUT] = "timed out",
		[KMON_TRIPLE_FAULT] = "triple fault",
	};
	return names[v];
}

static void expect_verdict(struct lab *l, struct boot *b, enum kmon_verdict want)
{
	enum kmon_verdict v = watch(l, b);

	if (b->booted_ms >= 0)
		progress("\"%s...\" after %.1f s (%s)", SUCCESS, b->booted_ms / 1000.0,
			 kpower_qemu_kvm(l->box) ? "KVM" : "TCG");
	progress("verdict: %s: %s", verdict_name(v), kmonitor_reason(b->m));
	if (v != want) {
		fputs(b->log.buf ? b->log.buf : "", stdout);
		fail_msg("verdict %s, wanted %s", verdict_name(v),
			 verdict_name(want));
	}
}

/* The title of a crash report that contains what, or fails. */
static const struct kmon_crash *crash_with(struct boot *b, const char *what)
{
	const struct kmon_crash *c;
	size_t n = kmonitor_crashes(b->m, &c);

	for (size_t i = 0; i < n; i++) {
		progress("crash report: %s%s", c[i].title,
			 c[i].fails ? " (fails the boot)" : "");
	}
	for (size_t i = 0; i < n; i++)
		if (strstr(c[i].title, what))
			return &c[i];
	fputs(b->log.buf ? b->log.buf : "", stdout);
	fail_msg("no crash report titled '...%s...' among %zu", what, n);
	return NULL;
}

static bool log_has(struct boot *b, const char *what)
{
	return b->log.buf && strstr(b->log.buf, what);
}

/* KTEST_CAPTURE: the boot's console log as DIR/real-NAME.log */
static void capture(struct lab *l, struct boot *b, const char *name)
{
	char *path;

	if (!l->capture)
		return;
	path = xasprintf("%s/real-%s.log", l->capture, name);
	spit(path, b->log.buf ? b->log.buf : "");
	progress("saved %s (%zu bytes)", path, b->log.len);
	free(path);
}

static void boot_done(struct boot *b)
{
	kmonitor_free(b->m);
	sbuf_free(&b->log);
}

/* ---- the tests -------------------------------------------------------------------- */

static void test_boot(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	struct boot b;
	struct sbuf line;
	char *want = xasprintf("%s%s", SUCCESS, l->release[0]);
	static const char cmd[] = "echo ktest-$((6 * 7))\n";
	bool answered = false;

	c.expected_version = l->release[0];
	power_on(l, &b, "ok", &c);
	expect_verdict(l, &b, KMON_BOOTED);
	assert_true(log_has(&b, want));
	assert_true(log_has(&b, "Linux version "));
	assert_true(log_has(&b, "ktest: mode ok"));
	capture(l, &b, "clean-boot");

	/* the line works both ways: a command typed on the console answers */
	assert_int_equal(kconsole_write(l->con, cmd, strlen(cmd)), 0);
	sbuf_init(&line);
	while (!answered &&
	       kconsole_read_line(l->con, kclock_ms() + 10000, &line) == KCON_LINE)
		answered = !strcmp(line.buf, "ktest-42");
	if (!answered)
		fail_msg("no answer to '%s' on the console", "echo ktest-$((6 * 7))");
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
	sbuf_free(&line);
	boot_done(&b);
	free(want);
}

/* Off and on again: the same console reads the next boot, no hang-up. */
static void test_power_cycle(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	struct boot b;
	char why[256];
	int pid;

	c.expected_version = l->release[0];
	power_on(l, &b, "ok", &c);
	expect_verdict(l, &b, KMON_BOOTED);
	pid = kpower_qemu_pid(l->box);
	assert_true(pid > 0);
	kmonitor_free(b.m);
	b.m = kmonitor_new(&c, kclock_ms(), why, sizeof(why));
	assert_non_null(b.m);
	sbuf_reset(&b.log);
	b.booted_ms = -1;
	b.on_ms = lab_now_ms();
	if (kpower_cycle(l->box) < 0)
		fail_msg("kpower_cycle: %s", l->box->err);
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
	assert_int_not_equal(kpower_qemu_pid(l->box), pid);
	assert_int_equal(kill(pid, 0), -1);	/* the old qemu is gone */
	expect_verdict(l, &b, KMON_BOOTED);
	assert_true(log_has(&b, "Linux version "));
	assert_string_equal(kconsole_driver(l->con), "pty");
	boot_done(&b);
}

/* A reboot with -no-reboot: the box stops and says so. */
static void test_reboot_stops(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	struct boot b;

	c.booted_timeout_ms = 20000;	/* the stop decides, not the silence */
	power_on(l, &b, "reboot", &c);
	expect_verdict(l, &b, KMON_BOOTED);
	assert_true(b.stopped);
	assert_int_equal(kpower_state(l->box), KPOWER_OFF);
	assert_int_equal(kpower_qemu_pid(l->box), 0);
	assert_true(log_has(&b, "reboot: Restarting system"));
	assert_string_equal(l->box->err, "");
	boot_done(&b);
}

static void test_panic(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	const struct kmon_crash *k;
	struct boot b;

	power_on(l, &b, "panic", &c);
	expect_verdict(l, &b, KMON_CRASHED);
	k = crash_with(&b, "Attempted to kill init");
	assert_true(k->fails);
	assert_true(log_has(&b, "Kernel panic - not syncing: Attempted to kill init!"));
	assert_true(log_has(&b, "Call Trace:"));
	/* panic=-1 and -no-reboot: the box is off */
	assert_true(b.stopped);
	assert_int_equal(kpower_state(l->box), KPOWER_OFF);
	capture(l, &b, "panic");
	boot_done(&b);
}

static void test_oops(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	const struct kmon_crash *k;
	struct boot b;

	power_on(l, &b, "oops", &c);
	expect_verdict(l, &b, KMON_CRASHED);
	k = crash_with(&b, "NULL pointer dereference");
	assert_true(k->fails);
	assert_non_null(strstr(k->report, "Call Trace:"));
	assert_true(log_has(&b, "lkdtm: Performing direct entry EXCEPTION"));
	assert_true(log_has(&b, "Oops: "));
	/* an Oops kills the task, not the kernel */
	drain(l, &b.log, 1000);
	assert_true(log_has(&b, "ktest: after the oops"));
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
	capture(l, &b, "oops");
	boot_done(&b);
}

/* A WARN_ON before the prompt: the boot fails (a warning class fails here). */
static void test_warning(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	const struct kmon_crash *k;
	struct boot b;

	power_on(l, &b, "warning", &c);
	expect_verdict(l, &b, KMON_CRASHED);
	k = crash_with(&b, "WARNING in lkdtm_WARNING");
	assert_true(k->fails);
	assert_true(log_has(&b, "Call Trace:"));
	drain(l, &b.log, 1000);
	assert_true(log_has(&b, SUCCESS));
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
	capture(l, &b, "warning");
	boot_done(&b);
}

static void test_hang(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	struct boot b;
	long t;

	c.timeout_ms = 3000;
	power_on(l, &b, "hang", &c);
	t = lab_now_ms();
	expect_verdict(l, &b, KMON_TIMED_OUT);
	assert_true(lab_now_ms() - t >= 3000);
	assert_true(log_has(&b, "ktest: hanging"));
	assert_false(log_has(&b, SUCCESS));
	assert_string_equal(kmonitor_reason(b.m),
			    "failed - never got a boot prompt. (Timed out after 3 seconds)");
	assert_int_equal(kpower_state(l->box), KPOWER_ON);
	capture(l, &b, "hang");
	assert_int_equal(kpower_off(l->box), 0);
	assert_int_equal(kpower_state(l->box), KPOWER_OFF);
	boot_done(&b);
}

/*
 * Kernel -ktest boots and reboots; the box comes back with -ktest2
 * installed meanwhile: what ktest.pl calls a triple fault (another kernel
 * booted after ours), after the boot prompt.
 */
static void test_reboot_other_version(void **state)
{
	struct lab *l = *state;
	struct kmon_config c = mon_config();
	struct boot b;
	char *want;

	c.expected_version = l->release[0];
	c.booted_timeout_ms = 20000;
	power_on(l, &b, "reboot", &c);
	b.reinstall = 1;
	expect_verdict(l, &b, KMON_TRIPLE_FAULT);
	want = xasprintf("Already booted in Linux kernel %s, but now we booted into Linux kernel %s",
			 l->release[0], l->release[1]);
	assert_non_null(strstr(kmonitor_reason(b.m), want));
	free(want);
	/* the second kernel's boot to its end, for the record */
	drain(l, &b.log, 3000);
	want = xasprintf("%s%s", SUCCESS, l->release[1]);
	assert_true(log_has(&b, want));
	free(want);
	capture(l, &b, "reboot-other-version");
	boot_done(&b);
	install(l, 0);
}

/* free() stops qemu: a box never outlives its owner. */
static void test_free_stops_qemu(void **state)
{
	struct lab *l = *state;
	struct kpower *p = new_box(l);
	int pid;

	if (kpower_on(p) < 0)
		fail_msg("kpower_on: %s", p->err);
	pid = kpower_qemu_pid(p);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, 0), 0);
	kpower_free(p);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void contains(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("'%s' does not contain '%s'", s, want);
}

static void test_errors(void **state)
{
	struct lab *l = *state;
	const char *const bad_opt[] = { "-no-such-option", NULL };
	struct kqemu_opts o = { .kernel = l->installed, .initrd = l->initrd };
	struct kpower *p;
	char err[512];

	/* no qemu: named, with what to install */
	o.qemu = "/nonexistent/qemu-system-x86_64";
	assert_null(kpower_qemu_new(&o, err, sizeof(err)));
	contains(err, "/nonexistent/qemu-system-x86_64");
	contains(err, "install qemu-system-x86");
	o.qemu = "no-such-qemu-system";
	assert_null(kpower_qemu_new(&o, err, sizeof(err)));
	contains(err, "no-such-qemu-system: not found in PATH");
	o.qemu = NULL;

	o.kernel = NULL;
	assert_null(kpower_qemu_new(&o, err, sizeof(err)));
	contains(err, "no kernel image");

	/* no kernel installed: on() says which file */
	o.kernel = "/nonexistent/bzImage";
	p = kpower_qemu_new(&o, err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(kpower_on(p), -1);
	contains(p->err, "kernel image /nonexistent/bzImage: No such file or directory");
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	kpower_free(p);

	/* qemu refusing its command line: its own words */
	o.kernel = l->installed;
	o.extra = bad_opt;
	p = kpower_qemu_new(&o, err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(kpower_on(p), -1);
	progress("qemu with a bad option: %s", p->err);
	contains(p->err, "qemu-system-x86_64 exited with status 1");
	contains(p->err, "-no-such-option");
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	assert_int_equal(kpower_qemu_pid(p), 0);
	kpower_free(p);

	/* off, cycle and state on a box that is off */
	o.extra = NULL;
	p = kpower_qemu_new(&o, err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	assert_int_equal(kpower_off(p), 0);
	assert_non_null(strstr(kpower_qemu_console(p), "pty:/dev/pts/"));
	kpower_free(p);
	assert_null(kpower_qemu_console(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_boot),
		cmocka_unit_test(test_power_cycle),
		cmocka_unit_test(test_reboot_stops),
		cmocka_unit_test(test_panic),
		cmocka_unit_test(test_oops),
		cmocka_unit_test(test_warning),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_reboot_other_version),
		cmocka_unit_test(test_free_stops_qemu),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, setup, teardown);
}
