// SPDX-License-Identifier: GPL-2.0-only
/*
 * patchcheck for real: a git repository made here (with the git program,
 * which tests may use) holding a tiny C project, a series of eight commits,
 * and the state machine driven through the git layer (kvcs_range,
 * kvcs_checkout, kvcs_touched_files) and real incremental builds with
 * gcc -Wall, the build log fed line by line to the warning matcher.
 *
 * The series, oldest first (the base commit before it has a warning in
 * src/old.c already):
 *   1 util: add util_mul                       clean
 *   2 main: print the product                  clean
 *   3 util: count calls                        a new warning in src/util.c
 *   4 old: say hello first                     touches src/old.c, which
 *                                              already warned: not blamed
 *   5 main: print the quotient                 breaks the build
 *   6 main: fix the quotient                   fixes it
 *   7 Add a README                             clean
 *   8 util: document util_mul                  touches src/util.c, which
 *                                              warns since 3: not blamed
 * The runner here does what ktest's will: checkout, make clean for the
 * steps that ask, make, blame the new warnings in the touched files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/patchcheck.h"
#include "ktest/vcs.h"

#define NSERIES 8

struct repo {
	char top[64];		/* the scratch directory */
	char *dir;		/* top/repo: the work tree (BUILD_DIR) */
	char *obj;		/* top/obj: an object tree beside it */
	char base[KB_ID_LEN];
	char ids[NSERIES][KB_ID_LEN];
};

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fail_msg("\"%s\" exited %d", cmd, rc);
	free(cmd);
}

static void put(const struct repo *r, const char *path, const char *text)
{
	char *p = xasprintf("%s/%s", r->dir, path);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	free(p);
}

#define GIT "git -c user.name=ktest -c user.email=ktest@example.org " \
	    "-c commit.gpgsign=false -c init.defaultBranch=master "

static void commit(const struct repo *r, const char *msg, char *id)
{
	char *cmd;
	FILE *p;

	sh("cd '%s' && " GIT "add -A && " GIT "commit -q -m '%s'", r->dir,
	   msg);
	cmd = xasprintf("cd '%s' && git rev-parse HEAD", r->dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(id, KB_ID_LEN, p));
	assert_int_equal(strlen(id), KB_ID_LEN - 1);
	assert_int_equal(pclose(p), 0);
	free(cmd);
}

/*
 * S is where the sources are, seen from where make runs: "." in the tree,
 * the absolute path, or ../repo from the object tree beside it. gcc prints
 * the paths the way it was given them.
 */
static const char makefile[] =
	"S ?= .\n"
	"CFLAGS = -Wall -O0 -I$(S)/src\n"
	"OBJS = src/main.o src/util.o src/old.o\n"
	"\n"
	"prog: $(OBJS)\n"
	"\t$(CC) -o $@ $(OBJS)\n"
	"\n"
	"src/%.o: $(S)/src/%.c $(S)/src/util.h\n"
	"\t@mkdir -p src\n"
	"\t$(CC) $(CFLAGS) -c -o $@ $<\n"
	"\n"
	"clean:\n"
	"\trm -f prog $(OBJS)\n";

static const char util_h[] =
	"int util_add(int a, int b);\n";

static const char util_h_mul[] =
	"int util_add(int a, int b);\n"
	"int util_mul(int a, int b);\n";

static const char util_h_div[] =
	"int util_add(int a, int b);\n"
	"int util_mul(int a, int b);\n"
	"int util_div(int a, int b);\n";

static const char util_c[] =
	"#include \"util.h\"\n"
	"\n"
	"int util_add(int a, int b)\n"
	"{\n"
	"\treturn a + b;\n"
	"}\n";

static const char util_c_mul[] =
	"#include \"util.h\"\n"
	"\n"
	"int util_add(int a, int b)\n"
	"{\n"
	"\treturn a + b;\n"
	"}\n"
	"\n"
	"int util_mul(int a, int b)\n"
	"{\n"
	"\treturn a * b;\n"
	"}\n";

/* 3: a variable set and never used: -Wunused-but-set-variable */
static const char util_c_count[] =
	"#include \"util.h\"\n"
	"\n"
	"int util_add(int a, int b)\n"
	"{\n"
	"\tint calls;\n"
	"\n"
	"\tcalls = 1;\n"
	"\treturn a + b;\n"
	"}\n"
	"\n"
	"int util_mul(int a, int b)\n"
	"{\n"
	"\treturn a * b;\n"
	"}\n"
	"\n"
	"int util_div(int a, int b)\n"
	"{\n"
	"\treturn b ? a / b : 0;\n"
	"}\n";

/* 8: a comment above the warning moves it down two lines */
static const char util_c_doc[] =
	"#include \"util.h\"\n"
	"\n"
	"/* the sum */\n"
	"int util_add(int a, int b)\n"
	"{\n"
	"\tint calls;\n"
	"\n"
	"\tcalls = 1;\n"
	"\treturn a + b;\n"
	"}\n"
	"\n"
	"/* the product */\n"
	"int util_mul(int a, int b)\n"
	"{\n"
	"\treturn a * b;\n"
	"}\n"
	"\n"
	"int util_div(int a, int b)\n"
	"{\n"
	"\treturn b ? a / b : 0;\n"
	"}\n";

/* the base: an unused variable since before the series */
static const char old_c[] =
	"#include <stdio.h>\n"
	"\n"
	"void old_fn(void)\n"
	"{\n"
	"\tint legacy;\n"
	"\n"
	"\tputs(\"old\");\n"
	"}\n";

/* 4: a comment above the warning moves it down a line */
static const char old_c_hello[] =
	"#include <stdio.h>\n"
	"\n"
	"/* says hello first */\n"
	"void old_fn(void)\n"
	"{\n"
	"\tint legacy;\n"
	"\n"
	"\tputs(\"hello\");\n"
	"\tputs(\"old\");\n"
	"}\n";

static const char main_c[] =
	"#include <stdio.h>\n"
	"#include \"util.h\"\n"
	"\n"
	"void old_fn(void);\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\told_fn();\n"
	"\tprintf(\"%d\\n\", util_add(1, 2));\n"
	"\treturn 0;\n"
	"}\n";

static const char main_c_mul[] =
	"#include <stdio.h>\n"
	"#include \"util.h\"\n"
	"\n"
	"void old_fn(void);\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\told_fn();\n"
	"\tprintf(\"%d\\n\", util_add(1, 2));\n"
	"\tprintf(\"%d\\n\", util_mul(2, 3));\n"
	"\treturn 0;\n"
	"}\n";

/* 5: a missing ';' */
static const char main_c_broken[] =
	"#include <stdio.h>\n"
	"#include \"util.h\"\n"
	"\n"
	"void old_fn(void);\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\told_fn();\n"
	"\tprintf(\"%d\\n\", util_add(1, 2));\n"
	"\tprintf(\"%d\\n\", util_mul(2, 3))\n"
	"\tprintf(\"%d\\n\", util_div(6, 3));\n"
	"\treturn 0;\n"
	"}\n";

static const char main_c_fixed[] =
	"#include <stdio.h>\n"
	"#include \"util.h\"\n"
	"\n"
	"void old_fn(void);\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\told_fn();\n"
	"\tprintf(\"%d\\n\", util_add(1, 2));\n"
	"\tprintf(\"%d\\n\", util_mul(2, 3));\n"
	"\tprintf(\"%d\\n\", util_div(6, 3));\n"
	"\treturn 0;\n"
	"}\n";

static void make_series(struct repo *r)
{
	sh("cd '%s' && " GIT "init -q", r->dir);
	sh("mkdir -p '%s/src'", r->dir);
	/* build products are no local changes for the checkout */
	put(r, ".gitignore", "*.o\nprog\n");
	put(r, "Makefile", makefile);
	put(r, "src/util.h", util_h);
	put(r, "src/util.c", util_c);
	put(r, "src/old.c", old_c);
	put(r, "src/main.c", main_c);
	commit(r, "The base", r->base);

	put(r, "src/util.h", util_h_mul);
	put(r, "src/util.c", util_c_mul);
	commit(r, "util: add util_mul", r->ids[0]);
	put(r, "src/main.c", main_c_mul);
	commit(r, "main: print the product", r->ids[1]);
	put(r, "src/util.h", util_h_div);
	put(r, "src/util.c", util_c_count);
	commit(r, "util: count calls", r->ids[2]);
	put(r, "src/old.c", old_c_hello);
	commit(r, "old: say hello first", r->ids[3]);
	put(r, "src/main.c", main_c_broken);
	commit(r, "main: print the quotient", r->ids[4]);
	put(r, "src/main.c", main_c_fixed);
	commit(r, "main: fix the quotient", r->ids[5]);
	put(r, "README", "A tiny project for ktest's patchcheck.\n");
	commit(r, "Add a README", r->ids[6]);
	put(r, "src/util.c", util_c_doc);
	commit(r, "util: document util_mul", r->ids[7]);
}

static int setup_repo(void **state)
{
	struct repo *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	strcpy(r->top, "/tmp/ktest-patchcheck.XXXXXX");
	if (!mkdtemp(r->top))
		return -1;
	r->dir = xasprintf("%s/repo", r->top);
	r->obj = xasprintf("%s/obj", r->top);
	if (mkdir(r->dir, 0755) || mkdir(r->obj, 0755))
		return -1;
	make_series(r);
	*state = r;
	return 0;
}

static int teardown_repo(void **state)
{
	struct repo *r = *state;

	if (!r)
		return 0;
	sh("rm -rf '%s'", r->top);
	free(r->dir);
	free(r->obj);
	free(r);
	return 0;
}

/* ---- the runner ---- */

struct run {
	/* in */
	const char *make;	/* the build, a shell command run in the tree */
	const char *clean;
	bool ktest_pl;		/* ktest.pl's rule: any warning in a touched file */
	struct kp_options o;
	/* out */
	size_t steps;
	char *log[NSERIES];	/* each step's build log */
};

/* What one step's build log is checked with. */
struct step_ctx {
	struct kp_seen *seen;
	const char *srcdir;
	const char *const *touched;
	size_t ntouched;
	bool check_touched;
	bool ktest_pl;
	const char *blamed;
	struct sbuf log;
};

static void check_line(struct step_ctx *c, const char *line)
{
	bool fresh = kp_seen_line(c->seen, line, c->srcdir);
	const char *f;

	sbuf_adds(&c->log, line);
	if (!c->check_touched || c->blamed || (!fresh && !c->ktest_pl))
		return;
	f = kp_warning_in_touched(line, c->srcdir, c->touched, c->ntouched);
	if (f)
		c->blamed = f;
}

/* Runs cmd in dir; its output goes line by line to check_line(). */
static int run_make(const char *dir, const char *cmd, struct step_ctx *c)
{
	char *full = xasprintf("cd '%s' && %s 2>&1", dir, cmd);
	char *line = NULL;
	size_t cap = 0;
	FILE *p = popen(full, "r");
	int rc;

	assert_non_null(p);
	while (getline(&line, &cap, p) > 0)
		if (c)
			check_line(c, line);
	rc = pclose(p);
	free(line);
	free(full);
	return rc;
}

/* One step: checkout, build, the verdict. */
static void do_step(struct kvcs *v, const struct repo *r, struct run *run,
		    struct kp_seen *seen, const struct kp_step *s,
		    struct kpatchcheck *p)
{
	struct step_ctx c = { .seen = seen, .srcdir = r->dir,
			      .check_touched = s->check_touched,
			      .ktest_pl = run->ktest_pl };
	char **touched;
	size_t n;
	char *why;
	int rc;

	if (kvcs_checkout(v, s->id, false))
		fail_msg("checkout %s: %s", s->id, kvcs_error(v));
	if (kvcs_touched_files(v, s->id, &touched, &n))
		fail_msg("touched files of %s: %s", s->id, kvcs_error(v));
	c.touched = (const char *const *)touched;
	c.ntouched = n;
	sbuf_init(&c.log);

	if (s->clean)
		assert_int_equal(run_make(r->dir, run->clean, NULL), 0);
	rc = run_make(r->dir, run->make, &c);
	kp_seen_build_done(seen, rc ? NULL : c.touched, rc ? 0 : n);

	if (rc) {
		kpatchcheck_report(p, KP_FAIL_BUILD, "failed build");
	} else if (c.blamed) {
		why = xasprintf("%s built with warnings", c.blamed);
		kpatchcheck_report(p, KP_FAIL_WARNING, why);
		free(why);
	} else {
		kpatchcheck_report(p, KP_OK, NULL);
	}
	run->log[s->index] = sbuf_detach(&c.log);
	kvcs_free_paths(touched, n);
}

static void run_series(const struct repo *r, struct run *run,
		       struct kpatchcheck **out)
{
	const char **ids = NULL;
	struct kvcs_list list = { 0 };
	struct kpatchcheck *p;
	struct kp_seen *seen;
	struct kp_step s;
	char err[256];
	struct kvcs *v;
	size_t i;

	v = kvcs_open(r->dir, err, sizeof(err));
	if (!v)
		fail_msg("%s", err);
	/* PATCHCHECK_START..PATCHCHECK_END, the start included */
	if (kvcs_range(v, r->ids[0], r->ids[NSERIES - 1], false, &list))
		fail_msg("range: %s", kvcs_error(v));
	assert_int_equal(list.n, NSERIES);
	ids = xcalloc(list.n, sizeof(*ids));
	for (i = 0; i < list.n; i++) {
		assert_string_equal(list.v[i].id, r->ids[i]);
		ids[i] = list.v[i].id;
	}

	p = kpatchcheck_new(ids, list.n, &run->o);
	seen = kp_seen_new();
	for (run->steps = 0;; run->steps++) {
		kpatchcheck_next(p, &s);
		if (s.done)
			break;
		assert_string_equal(s.id, r->ids[s.index]);
		do_step(v, r, run, seen, &s, p);
	}
	kp_seen_free(seen);
	free(ids);
	kvcs_list_free(&list);
	kvcs_close(v);
	*out = p;
}

static void run_free(struct run *run)
{
	size_t i;

	for (i = 0; i < NSERIES; i++)
		free(run->log[i]);
}

/* The two failures of the series, in order, with their stages. */
static void assert_default_failures(const struct repo *r,
				    const struct kpatchcheck *p)
{
	const struct kp_failure *f;

	assert_int_equal(kpatchcheck_failures(p, &f), 2);
	assert_string_equal(f[0].id, r->ids[2]);
	assert_int_equal(f[0].stage, KP_FAIL_WARNING);
	assert_string_equal(f[0].why, "src/util.c built with warnings");
	assert_string_equal(f[1].id, r->ids[4]);
	assert_int_equal(f[1].stage, KP_FAIL_BUILD);
}

/*
 * The old warnings were really in the logs of the commits that are not to
 * blame for them, so not blaming them meant something.
 */
static void assert_old_warnings_seen(const struct run *run)
{
	assert_non_null(strstr(run->log[3], "old.c:6:"));
	assert_non_null(strstr(run->log[3], "legacy"));
	assert_non_null(strstr(run->log[7], "util.c:6:"));
	assert_non_null(strstr(run->log[7], "calls"));
	/* and the break was one */
	assert_non_null(strstr(run->log[4], "main.c:10:"));
	assert_non_null(strstr(run->log[4], "error:"));
}

/*
 * The default run (every commit, every failure), with the make command
 * given; where says how gcc named the warning's file in commit 3's log,
 * to be sure the path form meant was the one matched.
 */
static void check_default(void **state, const char *make, const char *clean,
			  const char *where)
{
	const struct repo *r = *state;
	struct run run = { .make = make, .clean = clean,
			   .o = { .type = KP_BUILD } };
	struct kpatchcheck *p;

	run_series(r, &run, &p);
	assert_int_equal(run.steps, NSERIES);
	assert_default_failures(r, p);
	assert_old_warnings_seen(&run);
	if (!strstr(run.log[2], where))
		fail_msg("no \"%s\" in the log:\n%s", where, run.log[2]);
	kpatchcheck_free(p);
	run_free(&run);
}

/* make in the tree: gcc prints src/util.c */
static void test_in_tree(void **state)
{
	/* C: plain quotes, whatever the environment says */
	check_default(state, "LC_ALL=C make", "make clean",
		      "\nsrc/util.c:5:13: warning: variable 'calls' set but not used");
}

/* the sources by absolute path, in a UTF-8 locale (curly quotes) */
static void test_absolute_paths(void **state)
{
	const struct repo *r = *state;
	char *make = xasprintf("LC_ALL=C.UTF-8 make S='%s'", r->dir);
	char *clean = xasprintf("make S='%s' clean", r->dir);
	char *where = xasprintf("\n%s/src/util.c:5:13: warning: variable "
				"\xe2\x80\x98" "calls\xe2\x80\x99 set but not used",
				r->dir);

	check_default(state, make, clean, where);
	free(where);
	free(make);
	free(clean);
}

/* an object tree beside the sources: gcc prints ../repo/src/util.c */
static void test_object_tree(void **state)
{
	const struct repo *r = *state;
	char *make = xasprintf("LC_ALL=C make -C '%s' -f '%s/Makefile' S=../repo",
			       r->obj, r->dir);
	char *clean = xasprintf("make -C '%s' -f '%s/Makefile' S=../repo clean",
				r->obj, r->dir);
	/* nothing left in the tree from the tests before */
	assert_int_equal(run_make(r->dir, "make clean", NULL), 0);
	check_default(state, make, clean,
		      "\n../repo/src/util.c:5:13: warning: variable 'calls'");
	/* the objects were built there, not in the tree */
	assert_int_equal(run_make(r->obj, "test -f prog && test -f src/util.o",
				  NULL), 0);
	assert_int_not_equal(run_make(r->dir, "test -f src/util.o", NULL), 0);
	free(make);
	free(clean);
}

static void test_stop_at_first(void **state)
{
	const struct repo *r = *state;
	struct run run = { .make = "make", .clean = "make clean",
			   .o = { .type = KP_BUILD, .stop_at_first = true } };
	const struct kp_failure *f;
	struct kpatchcheck *p;

	run_series(r, &run, &p);
	assert_int_equal(run.steps, 3);
	assert_int_equal(kpatchcheck_failures(p, &f), 1);
	assert_string_equal(f[0].id, r->ids[2]);
	assert_int_equal(f[0].stage, KP_FAIL_WARNING);
	assert_string_equal(f[0].why, "src/util.c built with warnings");
	kpatchcheck_free(p);
	run_free(&run);
}

/* IGNORE_WARNINGS with commit 3 abbreviated (upper case, as mailed) */
static void test_ignore_warnings(void **state)
{
	const struct repo *r = *state;
	char abbrev[13];
	const char *ign[] = { abbrev };
	struct run run = { .make = "make", .clean = "make clean",
			   .o = { .type = KP_BUILD, .ignore_warnings = ign,
				  .nignore = 1 } };
	const struct kp_failure *f;
	struct kpatchcheck *p;
	size_t i;

	for (i = 0; i < sizeof(abbrev) - 1; i++)
		abbrev[i] = toupper((unsigned char)r->ids[2][i]);
	abbrev[i] = '\0';
	run_series(r, &run, &p);
	assert_int_equal(run.steps, NSERIES);
	assert_int_equal(kpatchcheck_failures(p, &f), 1);
	assert_string_equal(f[0].id, r->ids[4]);
	assert_int_equal(f[0].stage, KP_FAIL_BUILD);
	kpatchcheck_free(p);
	run_free(&run);
}

/*
 * What ktest.pl's rule (any warning in a touched file) makes of the same
 * series: commits 4 and 8 blamed for warnings that were there before.
 */
static void test_ktest_pl_rule(void **state)
{
	const struct repo *r = *state;
	struct run run = { .make = "make", .clean = "make clean",
			   .ktest_pl = true, .o = { .type = KP_BUILD } };
	const struct kp_failure *f;
	struct kpatchcheck *p;

	run_series(r, &run, &p);
	assert_int_equal(kpatchcheck_failures(p, &f), 4);
	assert_string_equal(f[0].id, r->ids[2]);
	assert_string_equal(f[1].id, r->ids[3]);
	assert_string_equal(f[1].why, "src/old.c built with warnings");
	assert_string_equal(f[2].id, r->ids[4]);
	assert_int_equal(f[2].stage, KP_FAIL_BUILD);
	assert_string_equal(f[3].id, r->ids[7]);
	assert_string_equal(f[3].why, "src/util.c built with warnings");
	kpatchcheck_free(p);
	run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_tree),
		cmocka_unit_test(test_absolute_paths),
		cmocka_unit_test(test_object_tree),
		cmocka_unit_test(test_stop_at_first),
		cmocka_unit_test(test_ignore_warnings),
		cmocka_unit_test(test_ktest_pl_rule),
	};

	return cmocka_run_group_tests(tests, setup_repo, teardown_repo);
}
