// SPDX-License-Identifier: GPL-2.0-only
/*
 * kbuild_run() against a fake kbuild: a source directory whose Makefile
 * answers the config targets (writing .config from configs/TARGET), notes
 * every target it ran in O=/calls, keeps the .config olddefconfig saw in
 * O=/seen.config, and fails, hangs or warns when a marker file in O= says
 * so. Every BUILD_TYPE path, the forcing order, who is blamed for what.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/build.h"

/* $(O)/calls gets one line per target run. */
static const char makefile[] =
	"O ?= .\n"
	"C := $(O)/.config\n"
	"note = echo $(1) >> $(O)/calls\n"
	"fail_if = test ! -e $(O)/fail-$(1) || { echo \"*** $(1) failed\"; exit 2; }\n"
	"\n"
	"all:\n"
	"\t@$(call note,all)\n"
	"\t@test ! -e $(O)/hang || sleep 30\n"
	"\t@echo '  CC      init/main.o'\n"
	"\t@if [ -e $(O)/warn ]; then \\\n"
	"\t\techo \"init/main.c: In function 'f':\"; \\\n"
	"\t\techo \"init/main.c:12:3: warning: unused variable 'x'\"; fi\n"
	"\t@test ! -e $(O)/nospace || { echo 'cc1: fatal error: init/main.o: No space left on device'; exit 1; }\n"
	"\t@test ! -e $(O)/nodistcc || { echo 'distcc[4242] (dcc_build_somewhere) Warning: failed to distribute and fallbacks are disabled'; exit 2; }\n"
	"\t@if grep -q '^CONFIG_BREAK=y' $(C); then \\\n"
	"\t\techo 'init/main.c:20:1: error: expected ; before }'; exit 1; fi\n"
	"\t@mkdir -p $(O)/arch/x86/boot && cp $(C) $(O)/arch/x86/boot/bzImage\n"
	"\t@test ! -e $(O)/kbuild-release || { mkdir -p $(O)/include/config && \\\n"
	"\t\techo \"6.1.0$$(cat $(O)/localversion)\" > $(O)/include/config/kernel.release; }\n"
	"\n"
	"mrproper:\n"
	"\t@$(call note,mrproper)\n"
	"\t@$(call fail_if,mrproper)\n"
	"\t@rm -rf $(C) $(O)/arch\n"
	"\n"
	"olddefconfig oldnoconfig:\n"
	"\t@$(call note,$@)\n"
	"\t@$(call fail_if,$@)\n"
	"\t@cp $(C) $(O)/seen.config\n"
	"\t@grep -q CONFIG_DEFAULT_ON $(C) || echo CONFIG_DEFAULT_ON=y >> $(C)\n"
	"\n"
	"oldconfig:\n"
	"\t@$(call note,$@)\n"
	"\t@read answer; echo \"answer=[$$answer]\"\n"
	"\t@$(call fail_if,$@)\n"
	"\t@cp $(C) $(O)/seen.config\n"
	"\n"
	"%config:\n"
	"\t@$(call note,$@)\n"
	"\t@test -f configs/$@ || { echo \"*** No rule to make target '$@'\"; exit 2; }\n"
	"\t@cp configs/$@ $(C)\n"
	"\n"
	"kernelrelease:\n"
	"\t@test -e $(O)/arch/x86/boot/bzImage || { echo \"Error: kernelrelease not valid - run 'make prepare' to update it\" >&2; exit 2; }\n"
	"\t@echo kernelrelease >> $(O)/release-asked\n"
	"\t@echo \"6.1.0$$(cat $(O)/localversion)\"\n";

struct fx {
	char dir[64];
	char *src, *out, *log;
	struct kbuild_opts o;
	struct kbuild_result r;
	size_t lines;		/* seen by on_line */
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The file's text, or NULL when there is none. */
static char *slurp(const char *path)
{
	struct sbuf b;
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return sbuf_detach(&b);
}

static void put(struct fx *f, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", f->src, name);

	write_text(path, text);
	free(path);
}

/* A file in O=, made before the build. */
static void write_out(struct fx *f, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", f->out, name);

	mkdir(f->out, 0755);
	write_text(path, text);
	free(path);
}

/* A marker file in O= that makes the fake fail, hang or warn. */
static void mark(struct fx *f, const char *name)
{
	write_out(f, name, "");
}

static void unlink_out(struct fx *f, const char *name)
{
	char *path = xasprintf("%s/%s", f->out, name);

	unlink(path);
	free(path);
}

static void assert_file(struct fx *f, const char *name, const char *want)
{
	char *path = xasprintf("%s/%s", f->out, name);
	char *text = slurp(path);

	if (!want) {
		assert_null(text);
	} else {
		assert_non_null(text);
		assert_string_equal(text, want);
	}
	free(text);
	free(path);
}

static void count_line(void *ctx, const char *line, size_t len)
{
	struct fx *f = ctx;

	f->lines++;
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char *path;

	snprintf(f->dir, sizeof(f->dir), "/tmp/ktest-build.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->src = xasprintf("%s/src", f->dir);
	f->out = xasprintf("%s/out", f->dir);
	f->log = xasprintf("%s/buildlog", f->dir);
	assert_int_equal(mkdir(f->src, 0755), 0);
	path = xasprintf("%s/configs", f->src);
	assert_int_equal(mkdir(path, 0755), 0);
	free(path);
	put(f, "Makefile", makefile);
	put(f, "configs/tinyconfig", "# tiny\nCONFIG_A=y\n# CONFIG_B is not set\n"
				     "CONFIG_C=y\n");
	put(f, "configs/defconfig", "CONFIG_DEF=y\n");
	f->o = (struct kbuild_opts){
		.build_dir = f->src,
		.output_dir = f->out,
		.build_type = "tinyconfig",
		.build_target = "arch/x86/boot/bzImage",
		.localversion = "-test",
		.timeout_ms = 20000,
		.log = f->log,
		.on_line = count_line,
		.ctx = f,
	};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f->src);
	free(f->out);
	free(f->log);
	free(f);
	return 0;
}

static enum kbuild_status build(struct fx *f)
{
	int ret = kbuild_run(&f->o, &f->r);

	assert_int_equal(ret, f->r.status == KBUILD_OK ? 0 : -1);
	if (f->r.status != KBUILD_OK)
		print_message("why: %s\n", f->r.why);
	return f->r.status;
}

static void test_tinyconfig(void **state)
{
	struct fx *f = *state;
	char *log;

	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\ntinyconfig\nolddefconfig\nall\n");
	assert_file(f, "localversion", "-test\n");
	assert_file(f, "seen.config", "# tiny\nCONFIG_A=y\n# CONFIG_B is not set\n"
				      "CONFIG_C=y\n");
	assert_file(f, ".config", "# tiny\nCONFIG_A=y\n# CONFIG_B is not set\n"
				  "CONFIG_C=y\nCONFIG_DEFAULT_ON=y\n");
	assert_string_equal(f->r.release, "6.1.0-test");
	assert_int_equal(f->r.warnings, 0);
	assert_true(f->r.elapsed_ms >= 0);
	/* the log: every command framed, its output in between */
	log = slurp(f->log);
	assert_non_null(log);
	assert_non_null(strstr(log, " mrproper ...\n"));
	assert_non_null(strstr(log, " tinyconfig ...\n"));
	assert_non_null(strstr(log, "  CC      init/main.o\n"));
	assert_non_null(strstr(log, "] SUCCESS\n"));
	assert_null(strstr(log, "FAILED"));
	assert_true(f->lines > 8);
	free(log);
}

/* ADD_CONFIG files in order, then MIN_CONFIG; the last word wins. */
static void test_forcing_order(void **state)
{
	struct fx *f = *state;

	put(f, "add1", "CONFIG_X=y\n# CONFIG_A is not set\nCONFIG_Y=m\n");
	put(f, "add2", "CONFIG_Z=y\nCONFIG_X=m\n");
	put(f, "min", "# the minimum\nCONFIG_B=y\nCONFIG_Y=y\n");
	f->o.add_config = "add1  add2";		/* relative to BUILD_DIR */
	f->o.min_config = "min";
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "seen.config",
		    "# tiny\nCONFIG_C=y\n"
		    "CONFIG_X=m\n# CONFIG_A is not set\nCONFIG_Y=y\n"
		    "CONFIG_Z=y\nCONFIG_B=y\n");
	assert_file(f, ".config.new", NULL);
}

/* The same inputs give the same .config, run after run. */
static void test_forcing_deterministic(void **state)
{
	struct fx *f = *state;
	char *path = xasprintf("%s/seen.config", f->out);
	char *first;

	put(f, "min", "CONFIG_M1=y\nCONFIG_M2=y\nCONFIG_M3=y\nCONFIG_M4=y\n");
	f->o.min_config = "min";
	assert_int_equal(build(f), KBUILD_OK);
	first = slurp(path);
	for (int i = 0; i < 3; i++) {
		char *again;

		assert_int_equal(build(f), KBUILD_OK);
		again = slurp(path);
		assert_string_equal(again, first);
		free(again);
	}
	free(first);
	free(path);
}

/* oldconfig: the .config survives make mrproper (moved aside and back). */
static void test_oldconfig(void **state)
{
	struct fx *f = *state;

	write_out(f, ".config", "CONFIG_MINE=y\n");
	f->o.build_type = "oldconfig";
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\nolddefconfig\nall\n");
	assert_file(f, "seen.config", "CONFIG_MINE=y\n");
	assert_file(f, "config_temp", NULL);
}

/* BUILD_TYPE unset means oldconfig; an empty O= gets an empty .config. */
static void test_default_type_empty(void **state)
{
	struct fx *f = *state;

	f->o.build_type = NULL;
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\nolddefconfig\nall\n");
	assert_file(f, "seen.config", "");
}

static void test_oldconfig_noclean(void **state)
{
	struct fx *f = *state;

	mark(f, ".config");
	f->o.build_type = "oldconfig";
	f->o.noclean = true;
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "olddefconfig\nall\n");
}

static void test_target_noclean(void **state)
{
	struct fx *f = *state;

	f->o.build_type = "defconfig";
	f->o.noclean = true;
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "defconfig\nolddefconfig\nall\n");
	assert_file(f, "seen.config", "CONFIG_DEF=y\n");
}

static void test_useconfig(void **state)
{
	struct fx *f = *state;

	put(f, "my.config", "CONFIG_USE=y\n");
	f->o.build_type = "useconfig:my.config";
	f->o.min_config = "my.config";
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\nolddefconfig\nall\n");
	assert_file(f, "seen.config", "CONFIG_USE=y\n");

	f->o.build_type = "useconfig:missing.config";
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "missing.config"));
	f->o.build_type = "useconfig:";
	assert_int_equal(build(f), KBUILD_ERROR);
}

static void test_nobuild(void **state)
{
	struct fx *f = *state;

	f->o.build_type = "nobuild";
	f->o.pre_build = "touch pre-ran";
	assert_int_equal(build(f), KBUILD_OK);
	assert_int_equal(access(f->out, F_OK), -1);
	assert_int_equal(access(f->log, F_OK), -1);
	assert_int_equal(f->lines, 0);
	/* nothing built: no release known */
	assert_string_equal(f->r.release, "");
}

/* What is already in OUTPUT_DIR boots: its release, as ktest.pl asks. */
static void test_nobuild_release(void **state)
{
	struct fx *f = *state;
	char *dir = xasprintf("%s/arch/x86/boot", f->out);
	char *cmd = xasprintf("mkdir -p '%s'", dir);

	assert_int_equal(system(cmd), 0);
	write_out(f, "arch/x86/boot/bzImage", "");
	write_out(f, "localversion", "-built\n");
	f->o.build_type = "nobuild";
	assert_int_equal(build(f), KBUILD_OK);
	assert_string_equal(f->r.release, "6.1.0-built");
	assert_file(f, "calls", NULL);
	assert_int_equal(f->lines, 0);
	free(cmd);
	free(dir);
}

static void test_unknown_target(void **state)
{
	struct fx *f = *state;

	f->o.build_type = "nosuchconfig";
	assert_int_equal(build(f), KBUILD_CONFIG_FAILED);
	assert_non_null(strstr(f->r.why, "make nosuchconfig failed (exit 2)"));
	assert_file(f, "calls", "mrproper\nnosuchconfig\n");
	assert_string_equal(f->r.release, "");
}

static void test_mrproper_fails(void **state)
{
	struct fx *f = *state;

	mark(f, "fail-mrproper");
	write_out(f, ".config", "CONFIG_KEEP=y\n");
	f->o.build_type = "oldconfig";
	assert_int_equal(build(f), KBUILD_CONFIG_FAILED);
	/* the user's .config is put back all the same */
	assert_file(f, ".config", "CONFIG_KEEP=y\n");
	assert_file(f, "config_temp", NULL);
}

static void test_oldconfig_fallbacks(void **state)
{
	struct fx *f = *state;
	char *log;

	mark(f, "fail-olddefconfig");
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\ntinyconfig\nolddefconfig\n"
				"oldnoconfig\nall\n");

	mark(f, "fail-oldnoconfig");
	unlink_out(f, "calls");
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\ntinyconfig\nolddefconfig\n"
				"oldnoconfig\noldconfig\nall\n");
	log = slurp(f->log);
	assert_non_null(strstr(log, "answer=[]"));	/* yes '' */
	free(log);

	mark(f, "fail-oldconfig");
	assert_int_equal(build(f), KBUILD_CONFIG_FAILED);
	assert_non_null(strstr(f->r.why, "make oldconfig failed"));
}

/* The commit's fault: KBUILD_FAILED, with the first error line. */
static void test_build_fails(void **state)
{
	struct fx *f = *state;

	put(f, "min", "CONFIG_BREAK=y\n");
	f->o.min_config = "min";
	mark(f, "warn");
	assert_int_equal(build(f), KBUILD_FAILED);
	assert_non_null(strstr(f->r.why, "(exit 2)"));
	assert_non_null(strstr(f->r.why, "init/main.c:20:1: error: expected"));
	/* the warning and the error line */
	assert_int_equal(f->r.warnings, 2);
	assert_string_equal(f->r.release, "");
}

static void test_warnings(void **state)
{
	struct fx *f = *state;
	char *log;

	mark(f, "warn");
	assert_int_equal(build(f), KBUILD_OK);
	assert_int_equal(f->r.warnings, 1);
	log = slurp(f->log);
	assert_non_null(strstr(log, "init/main.c:12:3: warning: unused variable 'x'\n"));
	assert_non_null(strstr(log, "1 warning"));
	free(log);
}

/* The host's fault: KBUILD_ERROR, never blamed on the commit. */
static void test_timeout_is_infra(void **state)
{
	struct fx *f = *state;

	mark(f, "hang");
	f->o.timeout_ms = 500;
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "timed out"));
	assert_true(f->r.elapsed_ms < 5000);
}

static void test_no_space_is_infra(void **state)
{
	struct fx *f = *state;

	mark(f, "nospace");
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "No space left on device"));
}

/* distcc with DISTCC_FALLBACK=0 and no helper: the lab's, not the tree's */
static void test_no_distcc_helper_is_infra(void **state)
{
	struct fx *f = *state;

	mark(f, "nodistcc");
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "failed to distribute"));
}

static void test_no_make_is_infra(void **state)
{
	struct fx *f = *state;

	f->o.make_cmd = "no-such-make-for-ktest";
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "exit 127"));
}

static void test_output_dir_trouble(void **state)
{
	struct fx *f = *state;
	char *file = xasprintf("%s/plainfile", f->dir);
	char *under = xasprintf("%s/sub", file);
	char *nolog = xasprintf("%s/nodir/log", f->dir);

	write_text(file, "");
	f->o.output_dir = under;	/* under a plain file */
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "cannot create OUTPUT_DIR"));
	f->o.output_dir = f->src;
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "must differ"));
	f->o.output_dir = "";
	assert_int_equal(build(f), KBUILD_ERROR);
	f->o.output_dir = f->out;
	f->o.log = nolog;
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "build log"));
	free(nolog);
	free(under);
	free(file);
}

/* OUTPUT_DIR relative to BUILD_DIR, as ktest.pl (chdir BUILD_DIR) had it. */
static void test_relative_output_dir(void **state)
{
	struct fx *f = *state;

	f->o.output_dir = "../out";
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", "mrproper\ntinyconfig\nolddefconfig\nall\n");
}

static void test_hooks(void **state)
{
	struct fx *f = *state;
	char *pwd = xasprintf("%s/pre.txt", f->src);
	char *txt;

	/* PRE_BUILD runs in BUILD_DIR; its failure counts only with _DIE */
	f->o.pre_build = "pwd > pre.txt; exit 1";
	assert_int_equal(build(f), KBUILD_OK);
	txt = slurp(pwd);
	assert_non_null(txt);
	assert_non_null(strstr(txt, "/src\n"));
	free(txt);
	f->o.pre_build_die = true;
	unlink_out(f, "calls");
	assert_int_equal(build(f), KBUILD_HOOK_FAILED);
	assert_non_null(strstr(f->r.why, "PRE_BUILD failed (exit 1)"));
	assert_file(f, "calls", NULL);
	f->o.pre_build = NULL;

	/* POST_BUILD may change the version: the release is read before it */
	f->o.post_build = "echo -changed > ../out/localversion";
	assert_int_equal(build(f), KBUILD_OK);
	assert_string_equal(f->r.release, "6.1.0-test");
	assert_file(f, "localversion", "-changed\n");

	f->o.post_build = "exit 3";
	assert_int_equal(build(f), KBUILD_OK);
	f->o.post_build_die = true;
	assert_int_equal(build(f), KBUILD_HOOK_FAILED);
	assert_non_null(strstr(f->r.why, "POST_BUILD failed (exit 3)"));

	/* after a failed build too; ktest.pl died there first */
	put(f, "min", "CONFIG_BREAK=y\n");
	f->o.min_config = "min";
	assert_int_equal(build(f), KBUILD_HOOK_FAILED);
	f->o.post_build = "true";
	assert_int_equal(build(f), KBUILD_FAILED);
	free(pwd);
}

static void test_build_target_missing(void **state)
{
	struct fx *f = *state;

	f->o.build_target = "vmlinux";
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "BUILD_TARGET"));
}

static void test_bad_fragment(void **state)
{
	struct fx *f = *state;
	char *log;

	put(f, "min", "CONFIG_GOOD=y\nCONFIG_TYPO y\n");
	f->o.min_config = "min";
	assert_int_equal(build(f), KBUILD_OK);
	log = slurp(f->log);
	assert_non_null(strstr(log, "min:2: not a config setting"));
	free(log);
	f->o.min_config = "absent";
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "MIN_CONFIG"));
	f->o.min_config = NULL;
	f->o.add_config = "min absent";
	assert_int_equal(build(f), KBUILD_ERROR);
	assert_non_null(strstr(f->r.why, "ADD_CONFIG"));
}

static void test_log_truncated(void **state)
{
	struct fx *f = *state;
	char *log;

	write_text(f->log, "OLD LOG CONTENT\n");
	assert_int_equal(build(f), KBUILD_OK);
	log = slurp(f->log);
	assert_null(strstr(log, "OLD LOG"));
	free(log);
}

/* Started from a make: its MAKEFLAGS (and broken jobserver) stay out. */
static void test_under_make(void **state)
{
	struct fx *f = *state;
	char *level = getenv("MAKELEVEL"), *flags = getenv("MAKEFLAGS");
	char *log;

	level = level ? xstrdup(level) : NULL;
	flags = flags ? xstrdup(flags) : NULL;
	setenv("MAKELEVEL", "1", 1);
	setenv("MAKEFLAGS", " -w -j2 --jobserver-auth=3,4 -- CI=true", 1);
	assert_int_equal(build(f), KBUILD_OK);
	assert_int_equal(f->r.warnings, 0);
	log = slurp(f->log);
	assert_null(strstr(log, "jobserver"));
	assert_null(strstr(log, "Entering directory"));
	free(log);
	if (level)
		setenv("MAKELEVEL", level, 1);
	else
		unsetenv("MAKELEVEL");
	if (flags)
		setenv("MAKEFLAGS", flags, 1);
	else
		unsetenv("MAKEFLAGS");
	free(level);
	free(flags);
}

static void test_kernelrelease(void **state)
{
	struct fx *f = *state;
	char why[256];
	char *rel;

	/* not built yet: an error, and no .config appears (no allnoconfig) */
	rel = kbuild_kernelrelease(&f->o, why, sizeof(why));
	assert_null(rel);
	assert_non_null(strstr(why, "kernelrelease not valid"));
	assert_file(f, ".config", NULL);
	assert_file(f, "calls", NULL);

	assert_int_equal(build(f), KBUILD_OK);
	rel = kbuild_kernelrelease(&f->o, why, sizeof(why));
	assert_non_null(rel);
	assert_string_equal(rel, "6.1.0-test");
	free(rel);

	f->o.make_cmd = "true";
	rel = kbuild_kernelrelease(&f->o, why, sizeof(why));
	assert_null(rel);
	assert_non_null(strstr(why, "printed nothing"));
}

/*
 * After a build, the release is the one kbuild wrote to O=/include/config/
 * kernel.release; make kernelrelease is asked only when there is none.
 */
static void test_release_file(void **state)
{
	struct fx *f = *state;
	char *asked = xasprintf("%s/release-asked", f->out);

	assert_int_equal(build(f), KBUILD_OK);
	assert_string_equal(f->r.release, "6.1.0-test");
	assert_int_equal(access(asked, F_OK), 0);

	mark(f, "kbuild-release");
	unlink_out(f, "release-asked");
	assert_int_equal(build(f), KBUILD_OK);
	assert_string_equal(f->r.release, "6.1.0-test");
	assert_int_equal(access(asked, F_OK), -1);
	assert_file(f, "include/config/kernel.release", "6.1.0-test\n");

	/* an empty file is no release: make is asked */
	unlink_out(f, "kbuild-release");
	write_out(f, "include/config/kernel.release", "");
	assert_int_equal(build(f), KBUILD_OK);
	assert_string_equal(f->r.release, "6.1.0-test");
	assert_int_equal(access(asked, F_OK), 0);
	free(asked);
}

/* O=/.config's modification time, in nanoseconds. */
static long long config_mtime(struct fx *f)
{
	char *path = xasprintf("%s/.config", f->out);
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	free(path);
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* A build that passes, from O=/calls emptied: the targets it ran. */
static void build_calls(struct fx *f, const char *want)
{
	unlink_out(f, "calls");
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "calls", want);
}

static bool log_says(struct fx *f, const char *what)
{
	char *log = slurp(f->log);
	bool found = log && strstr(log, what);

	free(log);
	return found;
}

/*
 * BUILD_NOCLEAN: the same .config to build, in an OUTPUT_DIR whose .config
 * is what olddefconfig made of it last time, is not run through
 * olddefconfig again, and the .config is left alone (its mtime too: the
 * make after it has nothing to sync). Anything else runs it.
 */
static void test_noclean_same_config(void **state)
{
	struct fx *f = *state;
	long long mtime;

	put(f, "my.config", "CONFIG_USE=y\n");
	put(f, "min", "CONFIG_M=y\n");
	f->o.build_type = "useconfig:my.config";
	f->o.min_config = "min";
	f->o.noclean = true;
	build_calls(f, "olddefconfig\nall\n");
	assert_false(log_says(f, "not run again"));
	mtime = config_mtime(f);

	build_calls(f, "all\n");
	assert_true(log_says(f, "not run again"));
	assert_file(f, ".config", "CONFIG_USE=y\nCONFIG_M=y\nCONFIG_DEFAULT_ON=y\n");
	assert_true(config_mtime(f) == mtime);
	assert_file(f, ".ktest-olddefconfig.next", NULL);

	/* the file changed: run */
	put(f, "my.config", "CONFIG_USE=m\n");
	build_calls(f, "olddefconfig\nall\n");
	assert_file(f, "seen.config", "CONFIG_USE=m\nCONFIG_M=y\n");

	/* MIN_CONFIG changed: run */
	put(f, "min", "CONFIG_M=m\n");
	build_calls(f, "olddefconfig\nall\n");
	build_calls(f, "all\n");

	/* someone changed the .config there: run, and it is replaced */
	write_out(f, ".config", "CONFIG_EDITED=y\n");
	build_calls(f, "olddefconfig\nall\n");
	assert_file(f, "seen.config", "CONFIG_USE=m\nCONFIG_M=m\n");

	/* another make command (another compiler, say): run */
	f->o.make_cmd = "make CC=gcc";
	build_calls(f, "olddefconfig\nall\n");
	build_calls(f, "all\n");

	/* a build from clean always runs it */
	f->o.noclean = false;
	build_calls(f, "mrproper\nolddefconfig\nall\n");
	/* and remembers it for the next one */
	f->o.noclean = true;
	build_calls(f, "all\n");
}

/* A failed olddefconfig is forgotten: the next build runs it again. */
static void test_noclean_failed_config(void **state)
{
	struct fx *f = *state;

	put(f, "my.config", "CONFIG_USE=y\n");
	f->o.build_type = "useconfig:my.config";
	f->o.noclean = true;
	assert_int_equal(build(f), KBUILD_OK);
	mark(f, "fail-olddefconfig");
	mark(f, "fail-oldnoconfig");
	mark(f, "fail-oldconfig");
	put(f, "my.config", "CONFIG_USE=m\n");
	unlink_out(f, "calls");
	assert_int_equal(build(f), KBUILD_CONFIG_FAILED);
	assert_file(f, ".ktest-olddefconfig.in", NULL);
	assert_file(f, ".ktest-olddefconfig.out", NULL);
	unlink_out(f, "fail-olddefconfig");
	unlink_out(f, "fail-oldnoconfig");
	unlink_out(f, "fail-oldconfig");
	build_calls(f, "olddefconfig\nall\n");
}

/*
 * BUILD_TYPE oldconfig with BUILD_NOCLEAN: the .config there is the
 * input; once olddefconfig has nothing more to change, it is not run.
 * Without a .config, an empty one (ktest.pl's touch).
 */
static void test_noclean_oldconfig_settles(void **state)
{
	struct fx *f = *state;

	f->o.build_type = "oldconfig";
	f->o.noclean = true;
	assert_int_equal(build(f), KBUILD_OK);
	assert_file(f, "seen.config", "");
	assert_file(f, "calls", "olddefconfig\nall\n");
	build_calls(f, "olddefconfig\nall\n");
	build_calls(f, "all\n");
	assert_file(f, ".config", "CONFIG_DEFAULT_ON=y\n");
}

static void test_is_warning(void **state)
{
	static const struct {
		const char *line;
		bool warning;
	} cases[] = {
		{ "init/main.c:12:3: warning: unused variable 'x'", true },
		{ "init/main.c:20:1: error: expected ';'", true },
		{ "make[2]: *** [scripts/Makefile.build:250: x.o] Error 1", false },
		{ "ld: x.o: Error: bad thing", true },
		{ "drivers/x.c: In function 'f':", false },
		{ "warning: no colon before", false },
		{ "a:warning:", true },
		{ "a: mywarning: x", true },	/* no word boundary in the regex */
		{ "a: Warning: capital", false },
		{ "a: error without colon", false },
		{ "", false },
		{ ":error:", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		if (kbuild_is_warning(cases[i].line) != cases[i].warning)
			fail_msg("\"%s\" should%s be a warning", cases[i].line,
				 cases[i].warning ? "" : " not");
	}
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tinyconfig),
		T(test_forcing_order),
		T(test_forcing_deterministic),
		T(test_oldconfig),
		T(test_default_type_empty),
		T(test_oldconfig_noclean),
		T(test_target_noclean),
		T(test_useconfig),
		T(test_nobuild),
		T(test_nobuild_release),
		T(test_unknown_target),
		T(test_mrproper_fails),
		T(test_oldconfig_fallbacks),
		T(test_build_fails),
		T(test_warnings),
		T(test_timeout_is_infra),
		T(test_no_space_is_infra),
		T(test_no_distcc_helper_is_infra),
		T(test_no_make_is_infra),
		T(test_output_dir_trouble),
		T(test_relative_output_dir),
		T(test_hooks),
		T(test_build_target_missing),
		T(test_bad_fragment),
		T(test_log_truncated),
		T(test_under_make),
		T(test_kernelrelease),
		T(test_release_file),
		T(test_noclean_same_config),
		T(test_noclean_failed_config),
		T(test_noclean_oldconfig_settles),
		cmocka_unit_test(test_is_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
