// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-commit build cache (ktest/build_cache.c) on real files in a
 * scratch directory: a round trip, a restore over the same build that
 * leaves its files alone, a kernel with modules kept with its packed
 * modules (or only for steps that install nothing), a different build type is another entry, a broken entry is an error (the
 * caller builds instead), and no more than KBC_KEEP entries stay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/strmap.h"
#include "ktest/build_cache.h"
#include "ktest/cmd.h"
#include "ktest/install.h"

struct fx {
	char dir[64];
	char *state, *out;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *p;

	snprintf(f->dir, sizeof(f->dir), "/tmp/ktest-bc.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->state = xasprintf("%s/state", f->dir);
	f->out = xasprintf("%s/out", f->dir);
	p = xasprintf("%s/arch/x86/boot", f->out);
	assert_int_equal(kcmd_mkdirs(p), 0);
	free(p);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f->state);
	free(f->out);
	free(f);
	return 0;
}

static void build(struct fx *f, const char *image, const char *config)
{
	char *p = xasprintf("%s/arch/x86/boot/bzImage", f->out);

	put(p, image);
	free(p);
	p = xasprintf("%s/.config", f->out);
	put(p, config);
	free(p);
}

static struct kbc_key key(struct fx *f, const char *commit, const char *bt)
{
	struct kbc_key k = { .state_dir = f->state, .commit = commit,
			     .build_type = bt, .make_cmd = "make",
			     .localversion = "-t",
			     .build_target = "arch/x86/boot/bzImage" };

	return k;
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "aaaa", "oldconfig");
	char rel[64], why[512], *p;

	build(f, "kernel A", "CONFIG_A=y\n");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-a", NULL, why, sizeof(why)), 0);
	build(f, "kernel B", "CONFIG_B=y\n");
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 0);
	assert_string_equal(rel, "6.1.0-a");
	p = xasprintf("%s/arch/x86/boot/bzImage", f->out);
	assert_string_equal(get(p), "kernel A");
	free(p);
	p = xasprintf("%s/.config", f->out);
	assert_string_equal(get(p), "CONFIG_A=y\n");
	free(p);

	/* another commit, another build type: not in the cache */
	k = key(f, "bbbb", "oldconfig");
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 1);
	k = key(f, "aaaa", "defconfig");
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 1);
}

/* mtime of path, made 10 s older first (so a rewrite would show) */
static time_t aged(const char *path)
{
	struct timeval tv[2] = { { time(NULL) - 10, 0 }, { time(NULL) - 10, 0 } };
	struct stat st;

	assert_int_equal(utimes(path, tv), 0);
	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

static time_t mtime(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

/*
 * OUTPUT_DIR already holding the cached build (a build ahead made in
 * place) is left alone, mtimes included; a file that differs is written
 */
static void test_restore_same(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "dddd", "oldconfig");
	char rel[64], why[512];
	char *img = xasprintf("%s/arch/x86/boot/bzImage", f->out);
	char *cfg = xasprintf("%s/.config", f->out);
	time_t ti, tc;

	build(f, "kernel D", "CONFIG_D=y\n");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-d", NULL, why, sizeof(why)), 0);
	ti = aged(img);
	tc = aged(cfg);
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 0);
	assert_string_equal(rel, "6.1.0-d");
	assert_true(mtime(img) == ti);
	assert_true(mtime(cfg) == tc);

	put(cfg, "CONFIG_D=n\n");
	tc = aged(cfg);
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 0);
	assert_string_equal(get(cfg), "CONFIG_D=y\n");
	assert_true(mtime(cfg) > tc);
	assert_true(mtime(img) == ti);
	free(img);
	free(cfg);
}

/* A packed modules tarball at path, as kinstall_pack_modules leaves it. */
static char *tarball(struct fx *f, const char *text)
{
	char *p = xasprintf("%s/packed.tmp", f->dir);

	put(p, text);
	return p;
}

/* A kernel with modules that is installed keeps them packed in its entry. */
static void test_modules_packed(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "cccc", "oldconfig");
	char rel[64], why[512], *t, *m;

	k.modules = true;
	build(f, "kernel C", "CONFIG_A=y\nCONFIG_MODULES=y\n");
	assert_true(kbc_needs_modules(&k, f->out));
	t = tarball(f, "modules of C");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-c", t, why, sizeof(why)), 0);
	assert_int_equal(access(t, F_OK), -1);	/* moved into the entry */
	assert_true(kbc_has(&k));
	m = kbc_modules(&k);
	assert_non_null(m);
	assert_non_null(strstr(m, "/build-cache/cccc-"));
	assert_string_equal(strrchr(m, '/') + 1, KINSTALL_MODS_TARBALL);
	assert_string_equal(get(m), "modules of C");
	free(m);
	build(f, "kernel B", "CONFIG_B=y\n");
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 0);
	assert_string_equal(rel, "6.1.0-c");
	free(t);
}

/*
 * Stored without them (NO_INSTALL), a kernel with modules serves a step
 * that installs nothing and no step that installs it, until a store with
 * its modules replaces the entry
 */
static void test_modules_not_kept(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "eeee", "oldconfig");
	char rel[64], why[512], *t, *m;

	build(f, "kernel E", "CONFIG_MODULES=y\n");
	assert_false(kbc_needs_modules(&k, f->out));
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-e", NULL, why, sizeof(why)), 0);
	assert_true(kbc_has(&k));
	assert_null(kbc_modules(&k));
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 0);

	k.modules = true;
	assert_true(kbc_needs_modules(&k, f->out));
	assert_false(kbc_has(&k));
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), 1);

	t = tarball(f, "modules of E");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-e", t, why, sizeof(why)), 0);
	assert_true(kbc_has(&k));
	m = kbc_modules(&k);
	assert_non_null(m);
	assert_string_equal(get(m), "modules of E");
	free(m);
	free(t);
}

/* Without CONFIG_MODULES there is nothing to pack, installed or not. */
static void test_no_modules_installed(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "ffff", "oldconfig");
	char why[512];

	k.modules = true;
	build(f, "kernel F", "CONFIG_MODULES=n\n# CONFIG_X is not set\n");
	assert_false(kbc_needs_modules(&k, f->out));
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-f", NULL, why, sizeof(why)), 0);
	assert_true(kbc_has(&k));
	assert_null(kbc_modules(&k));
}

/* A tarball that cannot be moved in: an error, and no entry. */
static void test_modules_missing(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "9999", "oldconfig");
	char why[512], *t = xasprintf("%s/nothing-here", f->dir);

	k.modules = true;
	build(f, "kernel 9", "CONFIG_MODULES=y\n");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-9", t, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "nothing-here"));
	assert_false(kbc_has(&k));
	k.modules = false;
	assert_false(kbc_has(&k));
	free(t);
}

static void test_broken_entry(void **state)
{
	struct fx *f = *state;
	struct kbc_key k = key(f, "dddd", "oldconfig");
	char rel[64], why[512], *cmd;

	build(f, "kernel D", "CONFIG_D=y\n");
	assert_int_equal(kbc_store(&k, f->out, "6.1.0-d", NULL, why, sizeof(why)), 0);
	cmd = xasprintf("rm -f %s/build-cache/dddd-*/image", f->state);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
				     sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot copy"));
	assert_non_null(strstr(why, "No such file"));
}

static void test_prune(void **state)
{
	struct fx *f = *state;
	char why[512], rel[64], id[16];
	char *cmd, *t;
	FILE *ls;
	int n = 0;

	for (int i = 0; i < KBC_KEEP + 4; i++) {
		struct kbc_key k;

		snprintf(id, sizeof(id), "c%02d", i);
		k = key(f, id, "oldconfig");
		/* the oldest with its modules: pruned as whole as the rest */
		k.modules = i == 0;
		build(f, id, i == 0 ? "CONFIG_MODULES=y\n" : "CONFIG_X=y\n");
		t = i == 0 ? tarball(f, "modules") : NULL;
		assert_int_equal(kbc_store(&k, f->out, id, t, why, sizeof(why)), 0);
		free(t);
		/* mtimes a second apart: the order is the age */
		cmd = xasprintf("touch -d '-%d minutes' %s/build-cache/%s-*",
				KBC_KEEP + 4 - i, f->state, id);
		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	cmd = xasprintf("ls %s/build-cache | wc -l", f->state);
	ls = popen(cmd, "r");
	free(cmd);
	assert_non_null(ls);
	assert_int_equal(fscanf(ls, "%d", &n), 1);
	pclose(ls);
	assert_int_equal(n, KBC_KEEP);
	/* the KBC_KEEP newest stayed, the oldest went */
	for (int i = 0; i < KBC_KEEP + 4; i++) {
		struct kbc_key k;

		snprintf(id, sizeof(id), "c%02d", i);
		k = key(f, id, "oldconfig");
		assert_int_equal(kbc_restore(&k, f->out, rel, sizeof(rel), why,
					     sizeof(why)), i < 4 ? 1 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modules_packed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modules_not_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_modules_installed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modules_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
