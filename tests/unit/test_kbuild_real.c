// SPDX-License-Identifier: GPL-2.0-only
/*
 * kbuild_run() on the real thing: Debian's linux-source-6.1 from the kernel
 * lab (tests/lab/kernel.sh), BUILD_TYPE=tinyconfig with the lab's fragment
 * as MIN_CONFIG, to a bzImage; then a one-file change rebuilt with
 * BUILD_NOCLEAN, and kernelrelease ending in LOCALVERSION.
 *
 * The build runs in a private hard-linked copy of the lab tree at a fixed
 * path under the lab ($KTEST_LAB/kbuild-real, under a lock), so ccache
 * (when installed) sees the same paths every run: a fresh build of this
 * config then takes ~40 s instead of ~2.5 min. Without the tarball the test
 * fails; it never skips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "ktest/build.h"
#include "ktest/cmd.h"
#include "kernel_lab.h"

#define LOCALVERSION	"-ktest"
#define BUILD_TIMEOUT	(20 * 60 * 1000L)

static const char *const lab_options[] = {
	"CONFIG_64BIT", "CONFIG_PRINTK", "CONFIG_TTY", "CONFIG_SERIAL_8250",
	"CONFIG_SERIAL_8250_CONSOLE", "CONFIG_BLK_DEV_INITRD", "CONFIG_RD_GZIP",
	"CONFIG_BINFMT_ELF", "CONFIG_BINFMT_SCRIPT", "CONFIG_DEVTMPFS",
	"CONFIG_DEVTMPFS_MOUNT", "CONFIG_PROC_FS", "CONFIG_SYSFS",
	"CONFIG_PRINTK_TIME", "CONFIG_KALLSYMS", "CONFIG_BUG",
	"CONFIG_DEBUG_FS", "CONFIG_RUNTIME_TESTING_MENU", "CONFIG_LKDTM",
};

struct lab {
	char *script;		/* tests/lab/kernel.sh */
	char *tree;		/* the shared, read-only tree */
	char *work;		/* $KTEST_LAB/kbuild-real */
	char *src, *out, *log, *fragment, *make;
	int lock;
};

/* Build progress: a line every 20 s, so a slow machine shows life. */
struct watch {
	long next;
	size_t lines;
	char last[160];
};

static void watch_line(void *ctx, const char *line, size_t len)
{
	struct watch *w = ctx;

	w->lines++;
	if (strstr(line, "  CC ") || strstr(line, "  LD ") ||
	    strstr(line, "  AS ") || strstr(line, "...") ||
	    strstr(line, "Kernel: "))
		snprintf(w->last, sizeof(w->last), "%s", line);
	if (lab_now_ms() >= w->next || strstr(line, "Kernel: ")) {
		progress("%zu lines, %s", w->lines, w->last);
		w->next = lab_now_ms() + 20000;
	}
}

static int setup(void **state)
{
	struct lab *l = xcalloc(1, sizeof(*l));
	char *lockpath, *cmd;

	lab_t0 = lab_now_ms();
	l->script = lab_script("kernel.sh");
	if (!l->script)
		fail_msg("tests/lab/kernel.sh not found (set KTEST_SRC)");
	progress("preparing the lab tree (the first time: ~1 min)");
	l->tree = lab_run(l->script, "tree");
	progress("lab tree: %s", l->tree);

	/* one run at a time on this machine: the path is fixed for ccache */
	cmd = xstrdup(l->tree);
	l->work = xasprintf("%s/kbuild-real", dirname(cmd));
	free(cmd);
	lockpath = xasprintf("%s.lock", l->work);
	l->lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(l->lock >= 0);
	assert_int_equal(flock(l->lock, LOCK_EX), 0);
	free(lockpath);

	cmd = xasprintf("rm -rf '%s'", l->work);
	sh(cmd);
	free(cmd);
	l->src = xasprintf("%s/linux", l->work);
	l->out = xasprintf("%s/out", l->work);
	l->log = xasprintf("%s/build.log", l->work);
	cmd = xasprintf("copy '%s'", l->src);
	free(lab_run(l->script, cmd));
	free(cmd);
	cmd = xasprintf("config '%s'", l->work);
	l->fragment = lab_run(l->script, cmd);
	free(cmd);
	/*
	 * relative paths for ccache: test_qemu and the e2e tests build the
	 * same config from BASE/linux into BASE/out, so they hit its cache
	 */
	cmd = xasprintf("make '%s'", l->work);
	l->make = lab_run(l->script, cmd);
	free(cmd);
	progress("private copy in %s, MAKE_CMD=%s", l->src, l->make);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;
	char *cmd = xasprintf("rm -rf '%s'", l->work);

	sh(cmd);
	free(cmd);
	close(l->lock);
	free(l->script);
	free(l->tree);
	free(l->work);
	free(l->src);
	free(l->out);
	free(l->log);
	free(l->fragment);
	free(l->make);
	free(l);
	return 0;
}

static void opts(struct lab *l, struct kbuild_opts *o, struct watch *w,
		 char *jobs, size_t jobslen)
{
	snprintf(jobs, jobslen, "-j%ld", sysconf(_SC_NPROCESSORS_ONLN));
	*o = (struct kbuild_opts){
		.make_cmd = l->make,
		.build_dir = l->src,
		.output_dir = l->out,
		.build_type = "tinyconfig",
		.build_options = jobs,
		.build_target = "arch/x86/boot/bzImage",
		.localversion = LOCALVERSION,
		.min_config = l->fragment,
		.timeout_ms = BUILD_TIMEOUT,
		.log = l->log,
		.on_line = watch_line,
		.ctx = w,
	};
}

static void show_log_tail(struct lab *l)
{
	char *cmd = xasprintf("tail -n 40 '%s'", l->log);

	if (system(cmd) < 0)
		perror("system");
	free(cmd);
}

static void check_built(struct lab *l, const struct kbuild_result *r)
{
	if (r->status != KBUILD_OK) {
		show_log_tail(l);
		fail_msg("build: %s", r->why);
	}
	assert_true(strlen(r->release) > strlen(LOCALVERSION));
	assert_string_equal(r->release + strlen(r->release) - strlen(LOCALVERSION),
			    LOCALVERSION);
}

static time_t mtime(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

/*
 * A change to init/main.c. The copy is hard-linked to the shared tree:
 * the file is replaced by rename, never written in place.
 */
static void change_one_file(struct lab *l)
{
	char *path = xasprintf("%s/init/main.c", l->src);
	char *tmp = xasprintf("%s.ktest-tmp", path);
	char *cmd = xasprintf("{ cat '%s'; echo '/* ktest lab: changed %ld */'; } > '%s'",
			      path, (long)time(NULL), tmp);

	sh(cmd);
	assert_int_equal(rename(tmp, path), 0);
	free(cmd);
	free(tmp);
	free(path);
}

static void test_real_kernel(void **state)
{
	struct lab *l = *state;
	struct kbuild_opts o;
	struct kbuild_result r;
	struct watch w = { 0 };
	struct kdotconfig c;
	char *config, *image, *shared, *rel, *cmd;
	char jobs[32], why[256];
	time_t built;
	long t;

	opts(l, &o, &w, jobs, sizeof(jobs));
	progress("fresh build: BUILD_TYPE=tinyconfig, MIN_CONFIG=%s, %s",
		 l->fragment, jobs);
	t = lab_now_ms();
	kbuild_run(&o, &r);
	check_built(l, &r);
	progress("fresh build done in %.1f s: %s, %d warning(s)",
		 (lab_now_ms() - t) / 1000.0, r.release, r.warnings);

	image = xasprintf("%s/arch/x86/boot/bzImage", l->out);
	assert_int_equal(access(image, R_OK), 0);
	built = mtime(image);

	/* every option the qemu box needs made it through olddefconfig */
	config = xasprintf("%s/.config", l->out);
	kdotconfig_init(&c);
	assert_int_equal(kdotconfig_read(&c, config), 0);
	for (size_t i = 0; i < sizeof(lab_options) / sizeof(*lab_options); i++)
		if (!kdotconfig_enabled(&c, lab_options[i]))
			fail_msg("%s is not =y in %s", lab_options[i], config);
	assert_false(kdotconfig_enabled(&c, "CONFIG_MODULES"));
	kdotconfig_free(&c);

	/* one file changed, rebuilt without mrproper */
	sleep(1);	/* a new mtime second for make */
	change_one_file(l);
	o.build_type = "oldconfig";
	o.noclean = true;
	w.next = 0;
	progress("one-file change rebuild: BUILD_TYPE=oldconfig, BUILD_NOCLEAN=1");
	t = lab_now_ms();
	kbuild_run(&o, &r);
	check_built(l, &r);
	progress("rebuild done in %.1f s", (lab_now_ms() - t) / 1000.0);
	assert_true(mtime(image) > built);
	assert_true(lab_now_ms() - t < 120 * 1000);	/* incremental, not from scratch */

	rel = kbuild_kernelrelease(&o, why, sizeof(why));
	if (!rel) {
		fail_msg("kernelrelease: %s", why);
		return;
	}
	progress("kernelrelease: %s", rel);
	assert_string_equal(rel, r.release);
	assert_string_equal(rel + strlen(rel) - strlen(LOCALVERSION), LOCALVERSION);
	free(rel);

	/* the shared tree did not change through the hard links */
	shared = xasprintf("%s/init/main.c", l->tree);
	cmd = xasprintf("! grep -q 'ktest lab: changed' '%s' && "
			"test -z \"$(git -C '%s' --no-optional-locks status --porcelain)\"",
			shared, l->tree);
	sh(cmd);
	free(cmd);
	free(shared);
	free(config);
	free(image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_real_kernel, setup, teardown),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
