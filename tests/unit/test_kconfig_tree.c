// SPDX-License-Identifier: GPL-2.0-only
/*
 * kctree: a kernel tree's whole Kconfig read into a dependency graph, and
 * option lists ordered by it. Synthetic trees written here into mkdtemp()
 * directories cover every construct; then the real thing, Debian's
 * linux-source-6.1 from the kernel lab (tests/lab/kernel.sh), when the
 * machine has it.
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

#include "conf/kconfig_tree.h"
#include "conf/strmap.h"
#include "kernel_lab.h"
#include "scratch.h"

/* ---- scratch trees ---- */

/* Writes dir/rel, making the directories on the way. */
static void put(const char *dir, const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", dir, rel);
	FILE *f;

	for (char *s = strchr(path + strlen(dir) + 1, '/'); s;
	     s = strchr(s + 1, '/')) {
		*s = '\0';
		assert_true(!mkdir(path, 0755) || errno == EEXIST);
		*s = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(path);
}

static struct kctree *load(const char *dir, const char *arch)
{
	char why[512] = "";
	struct kctree *t = kctree_load(dir, arch, why, sizeof(why));

	if (!t)
		fail_msg("kctree_load: %s", why);
	return t;
}

/* name's deps, space-separated */
static void assert_deps(const struct kctree *t, const char *name,
			const char *want)
{
	const char *const *deps;
	size_t n = kctree_deps(t, name, &deps);
	struct sbuf b;

	sbuf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&b, ' ');
		sbuf_adds(&b, deps[i]);
	}
	if (strcmp(sbuf_str(&b), want))
		fail_msg("deps(%s): \"%s\", want \"%s\"", name, sbuf_str(&b),
			 want);
	sbuf_free(&b);
}

/* ---- every construct ---- */

static const char root_kconfig[] =
	"# SPDX-License-Identifier: GPL-2.0\n"
	"mainmenu \"Linux/$(ARCH) Kernel # not a comment\"\n"
	"cc-option = $(success,trap \"rm -rf .tmp_$$\" EXIT; mkdir .tmp_$$)\n"
	"$(error-if,$(failure,true),never)\n"
	"\n"
	"source \"arch/$(SRCARCH)/Kconfig\"\n"
	"source \"lib/Kconfig\"\n"
	"osource \"missing/Kconfig\"\n"
	"osource \"drivers/*/Kconfig.none\"\n"
	"source \"drivers/*/Kconfig\"\n"
	"\n"
	"config TOP\n"
	"\tbool \"top # not a comment\"\t# a comment: NOTDEP1\n"
	"\tdepends on A && \\\n"
	"\t\t   (B || !C) && D != \"E\" && F >= 3 && G = y && \\\n"
	"\t\t   0x10 < H && M = m\n"
	"\tselect S1 if T1\n"
	"\timply I1 if T2\n"
	"\tdefault y if DEFC\n"
	"\tdefault \"$(cc-option,-mfoo)\" if DEF2\n"
	"\thelp\n"
	"\t  This help mentions config X, if Y, select Z, depends on W.\n"
	"\t    Deeper indentation is still help: endmenu\n"
	"\n"
	"\t  select AFTERBLANK\n"
	"\tdepends on AFTER_HELP_DEP\n"
	"\n"
	"config NEXT\n"
	"\tdef_bool $(cc-option,-mbar)\n"
	"\tdepends on TOP\n"
	"\t---help---\n"
	"\t\thelp indented by two tabs, then by a tab and 2 spaces: ends it\n"
	"\t  select HELP_END_LESS\n"
	"\tprompt \"p\" if PR\n"
	"\tdef_tristate m if DT\n"
	"\thelp\n"
	"config AFTER_EMPTY_HELP\n"
	"\tbool\n"
	"\thelp\n"
	"\t  the last help, to the end of the file:\n"
	"\t  config NOT_A_SYMBOL\n"
	"\t  endif\n";

static const char arch_kconfig[] =
	"config X86\n"
	"\tdef_bool y\n"
	"\tselect ARCH_SEL\n"
	"\tselect ARCH_SEL2 if \\\n"
	"\t\tCOND\n"
	"rsource \"Kconfig.sub\"\n"
	"orsource \"Kconfig.nope\"\n"
	"orsource \"sub/*.kc\"\n"
	"source \"arch/$(HEADER_ARCH)/Kconfig.$(SRCARCH)\"\n";

static const char lib_kconfig[] =
	"if LIB_IF\n"
	"menu \"Library\"\n"
	"\tdepends on MENU_DEP\n"
	"\tvisible if MENU_VIS\n"
	"\n"
	"  if IF_OUTER\n"
	"config L1\n"
	"\tbool\n"
	"\t  if IF_INNER && L1_COND\n"
	"config L2\n"
	"\ttristate \"l2\"\n"
	"\tdepends on L1\n"
	"\t  endif\n"
	"comment \"a comment\"\n"
	"\tdepends on COMMENT_DEP\n"
	"config L3\n"
	"\tbool\n"
	"endif\n"
	"\n"
	"choice\n"
	"\tprompt \"pick\"\n"
	"\tdepends on CHOICE_DEP\n"
	"config CH_A\n"
	"\tbool \"a\"\n"
	"if CH_IF\n"
	"config CH_B\n"
	"\tbool \"b\"\n"
	"\tdepends on CH_B_DEP\n"
	"endif\n"
	"endchoice\n"
	"\n"
	"menuconfig MC\n"
	"\tbool \"mc\"\n"
	"endmenu\n"
	"endif\n"
	"config OUTSIDE\n"
	"\tbool\n"
	"choice NAMED\n"
	"\tprompt \"named\"\n"
	"config NM1\n"
	"\tbool \"nm1\"\n"
	"endchoice\n";

static char *constructs_tree(void)
{
	char *dir = tmp_dir_new("kctree");

	put(dir, "Kconfig", root_kconfig);
	put(dir, "arch/x86/Kconfig", arch_kconfig);
	put(dir, "arch/x86/Kconfig.sub", "config SUB\n\tdepends on X86\n");
	put(dir, "arch/x86/sub/one.kc", "config ONE\n");
	put(dir, "arch/x86/sub/two.kc", "config TWO\n\tdepends on ONE\n");
	put(dir, "arch/x86/Kconfig.x86", "config HDR\n");
	put(dir, "arch/arm/Kconfig", "config ARMONLY\n");
	put(dir, "arch/foo/Kconfig", "config FOOARCH\n");
	put(dir, "lib/Kconfig", lib_kconfig);
	put(dir, "drivers/a/Kconfig",
	    "config TOP\n\tdepends on TWICE\nconfig DA\n");
	put(dir, "drivers/b/Kconfig", "config DB\n\tselect DA\n");
	put(dir, "drivers/c/Kconfig.unused", "config UNUSED\n");
	return dir;
}

static void test_constructs(void **state)
{
	char *dir = constructs_tree();
	struct kctree *t = load(dir, "x86");
	static const char *const defined[] = {
		"TOP", "NEXT", "AFTER_EMPTY_HELP", "X86", "SUB", "ONE", "TWO",
		"HDR", "L1", "L2", "L3", "CH_A", "CH_B", "MC", "OUTSIDE",
		"NAMED", "NM1", "DA", "DB",
	};
	static const char *const not_defined[] = {
		"A", "S1", "X", "Y", "Z", "AFTERBLANK", "HELP_END_LESS",
		"NOT_A_SYMBOL", "ARMONLY", "FOOARCH", "UNUSED", "E", "y", "m",
		"3", "0x10", "",
	};

	/* Kconfig, arch/x86/{Kconfig,Kconfig.sub,sub/one.kc,sub/two.kc,
	 * Kconfig.x86}, lib/Kconfig, drivers/{a,b}/Kconfig */
	assert_int_equal(kctree_files(t), 9);
	assert_int_equal(kctree_count(t), 19);
	for (size_t i = 0; i < sizeof(defined) / sizeof(defined[0]); i++) {
		if (!kctree_has(t, defined[i]))
			fail_msg("%s not defined", defined[i]);
	}
	for (size_t i = 0; i < sizeof(not_defined) / sizeof(*not_defined);
	     i++) {
		if (kctree_has(t, not_defined[i]))
			fail_msg("%s defined", not_defined[i]);
	}
	assert_true(kctree_has(t, "CONFIG_TOP"));
	assert_false(kctree_has(t, "CONFIG_"));

	/* two definitions merged; continuation; expressions; help skipped */
	assert_deps(t, "TOP", "TWICE A B C D F G H M S1 I1 AFTER_HELP_DEP");
	assert_deps(t, "CONFIG_TOP",
		    "TWICE A B C D F G H M S1 I1 AFTER_HELP_DEP");
	assert_deps(t, "NEXT", "TOP HELP_END_LESS");
	assert_deps(t, "AFTER_EMPTY_HELP", "");
	assert_deps(t, "X86", "ARCH_SEL ARCH_SEL2");
	assert_deps(t, "SUB", "X86");
	assert_deps(t, "TWO", "ONE");
	assert_deps(t, "HDR", "");
	assert_deps(t, "DB", "DA");
	/* if blocks at any indentation, menus, choices, nested */
	assert_deps(t, "L1", "LIB_IF MENU_DEP MENU_VIS IF_OUTER");
	assert_deps(t, "L2",
		    "LIB_IF MENU_DEP MENU_VIS IF_OUTER IF_INNER L1_COND L1");
	assert_deps(t, "L3", "LIB_IF MENU_DEP MENU_VIS IF_OUTER");
	assert_deps(t, "CH_A", "LIB_IF MENU_DEP MENU_VIS CHOICE_DEP");
	assert_deps(t, "CH_B",
		    "LIB_IF MENU_DEP MENU_VIS CHOICE_DEP CH_IF CH_B_DEP");
	assert_deps(t, "MC", "LIB_IF MENU_DEP MENU_VIS");
	assert_deps(t, "OUTSIDE", "");
	assert_deps(t, "NAMED", "");
	assert_deps(t, "NM1", "NAMED");
	/* named but not defined: no deps */
	assert_deps(t, "A", "");
	assert_deps(t, "NOPE", "");
	kctree_free(t);

	/* another arch: its Kconfig instead */
	t = load(dir, "arm");
	assert_true(kctree_has(t, "ARMONLY"));
	assert_false(kctree_has(t, "X86"));
	assert_int_equal(kctree_files(t), 5);
	kctree_free(t);
	/* no arch/foo32: trailing digits dropped */
	t = load(dir, "foo32");
	assert_true(kctree_has(t, "FOOARCH"));
	kctree_free(t);
	tmp_dir_rm(dir);
}

static void restore_env(const char *name, char *saved)
{
	if (saved)
		assert_int_equal(setenv(name, saved, 1), 0);
	else
		assert_int_equal(unsetenv(name), 0);
	free(saved);
}

static char *save_env(const char *name)
{
	const char *v = getenv(name);

	return v ? xstrdup(v) : NULL;
}

static void test_arch_from_environment(void **state)
{
	char *dir = constructs_tree();
	char *srcarch = save_env("SRCARCH"), *arch = save_env("ARCH");
	struct kctree *t;

	assert_int_equal(unsetenv("SRCARCH"), 0);
	assert_int_equal(unsetenv("ARCH"), 0);
	t = load(dir, NULL);
	assert_true(kctree_has(t, "X86"));	/* the default */
	kctree_free(t);

	assert_int_equal(setenv("ARCH", "arm", 1), 0);
	t = load(dir, NULL);
	assert_true(kctree_has(t, "ARMONLY"));
	kctree_free(t);

	assert_int_equal(setenv("ARCH", "x86_64", 1), 0);
	t = load(dir, NULL);
	assert_true(kctree_has(t, "HDR"));
	kctree_free(t);

	assert_int_equal(setenv("SRCARCH", "arm", 1), 0);	/* wins */
	t = load(dir, NULL);
	assert_true(kctree_has(t, "ARMONLY"));
	assert_false(kctree_has(t, "X86"));
	kctree_free(t);

	restore_env("SRCARCH", srcarch);
	restore_env("ARCH", arch);
	tmp_dir_rm(dir);
}

/* ---- errors: file:line: what ---- */

struct bad_tree {
	const char *files[3][2];	/* rel, text */
	const char *why;		/* what why must start with */
};

static const struct bad_tree bad_trees[] = {
	{ { { "Kconfig", "config A\nsource \"nope/Kconfig\"\n" } },
	  "Kconfig:2: can't open file \"nope/Kconfig\": No such file" },
	{ { { "Kconfig", "source \"lib/Kconfig\"\n" },
	    { "lib/Kconfig", "\n\n\tsource \"lib/gone\"\n" } },
	  "lib/Kconfig:3: can't open file \"lib/gone\": No such file" },
	{ { { "Kconfig", "source \"lib/Kconfig\"\n" },
	    { "lib/Kconfig", "rsource \"gone\"\n" } },
	  "lib/Kconfig:1: can't open file \"lib/gone\"" },
	{ { { "Kconfig", "source \"x/*/Kconfig\"\n" } },
	  "Kconfig:1: no file matches \"x/*/Kconfig\"" },
	{ { { "Kconfig", "endmenu\n" } }, "Kconfig:1: endmenu without menu" },
	{ { { "Kconfig", "menu \"m\"\nendif\n" } },
	  "Kconfig:2: endif in the menu opened at Kconfig:1" },
	{ { { "Kconfig", "config A\n  if A\nconfig B\n" } },
	  "Kconfig:2: if without endif" },
	{ { { "Kconfig", "choice\nconfig A\n" } },
	  "Kconfig:1: choice without endchoice" },
	{ { { "Kconfig", "config A\n\tfrobnicate X\n" } },
	  "Kconfig:2: unknown statement \"frobnicate\"" },
	{ { { "Kconfig", "source \"a\"\n" },
	    { "a", "\nsource \"Kconfig\"\n" } },
	  "a:2: recursive inclusion of \"Kconfig\"" },
	{ { { "Kconfig", "depends on A\n" } },
	  "Kconfig:1: depends on outside of an entry" },
	{ { { "Kconfig", "menu \"m\"\n\tselect A\nendmenu\n" } },
	  "Kconfig:2: select or imply outside of a config entry" },
	{ { { "Kconfig", "config A\n\tdepends on B && \\\n\t\tC\nbogus\n" } },
	  "Kconfig:4: unknown statement \"bogus\"" },
	{ { { "Kconfig", "if\nendif\n" } },
	  "Kconfig:1: if needs an expression" },
	{ { { "Kconfig", "config\n" } },
	  "Kconfig:1: config needs a symbol name" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < sizeof(bad_trees) / sizeof(bad_trees[0]); i++) {
		const struct bad_tree *b = &bad_trees[i];
		char *dir = tmp_dir_new("kctree"), why[512] = "";
		struct kctree *t;

		for (size_t j = 0; j < 3 && b->files[j][0]; j++)
			put(dir, b->files[j][0], b->files[j][1]);
		t = kctree_load(dir, "x86", why, sizeof(why));
		if (t)
			fail_msg("tree %zu loaded; want %s", i, b->why);
		if (strncmp(why, b->why, strlen(b->why)))
			fail_msg("tree %zu: \"%s\", want \"%s\"", i, why,
				 b->why);
		tmp_dir_rm(dir);
	}
}

static void test_no_tree(void **state)
{
	char *dir = tmp_dir_new("kctree"), why[512] = "", *want;

	assert_null(kctree_load(dir, "x86", why, sizeof(why)));
	want = xasprintf("%s/Kconfig: No such file or directory", dir);
	assert_string_equal(why, want);
	free(want);
	/* a tiny why buffer, and none at all */
	assert_null(kctree_load(dir, "x86", why, 4));
	assert_int_equal(strlen(why), 3);
	assert_null(kctree_load(dir, "x86", NULL, 0));
	tmp_dir_rm(dir);
}

static void test_help_is_not_parsed(void **state)
{
	char *dir = tmp_dir_new("kctree");
	struct kctree *t;

	/* kconfig's rule: the first non-blank line sets the indentation */
	put(dir, "Kconfig",
	    "config A\n"
	    "\tbool\n"
	    "\thelp\n"
	    "\n"
	    "\t\t  deep first line\n"
	    "\t\t  endmenu\n"
	    "   \n"
	    "\t\t  frobnicate\n"
	    "\t\t\tconfig DEEPER\n"
	    "\tselect AFTER\n"
	    "config B\n"
	    "\thelp\n"
	    "  two spaces\n"
	    "  config C\n"
	    " select ONE_SPACE\n");
	t = load(dir, "x86");
	assert_int_equal(kctree_count(t), 2);
	assert_deps(t, "A", "AFTER");
	assert_deps(t, "B", "ONE_SPACE");
	assert_false(kctree_has(t, "C"));
	assert_false(kctree_has(t, "DEEPER"));
	kctree_free(t);
	tmp_dir_rm(dir);
}

/* ---- ordering ---- */

static const char order_kconfig[] =
	"config A\n\tdepends on B\n"
	"config B\n\tdepends on C\n"
	"config C\n"
	"config D\n\tselect A\n"
	"config TOPD\n\tdepends on L && R\n"
	"config L\n\tdepends on BOT\n"
	"config R\n\tdepends on BOT\n"
	"config BOT\n"
	"config CY1\n\tdepends on CY2\n"
	"config CY2\n\tselect CY1\n"
	"config X1\nconfig X2\nconfig X3\n";

/* Orders the space-separated list and checks the result. */
static void assert_order(const struct kctree *t, const char *list,
			 const char *want)
{
	char *copy = xstrdup(list), *save = NULL, *names[32], *given[32];
	size_t n = 0;
	struct sbuf b;

	for (char *s = strtok_r(copy, " ", &save); s;
	     s = strtok_r(NULL, " ", &save))
		names[n++] = s;
	memcpy(given, names, n * sizeof(*names));
	kctree_order(t, names, n);
	sbuf_init(&b);
	for (size_t i = 0; i < n; i++) {
		bool found = false;

		for (size_t j = 0; j < n; j++)
			found = found || names[i] == given[j];
		assert_true(found);	/* the same pointers */
		sbuf_addf(&b, "%s%s", i ? " " : "", names[i]);
	}
	if (strcmp(sbuf_str(&b), want))
		fail_msg("order(%s): \"%s\", want \"%s\"", list, sbuf_str(&b),
			 want);
	sbuf_free(&b);
	free(copy);
}

static void test_order(void **state)
{
	char *dir = tmp_dir_new("kctree");
	struct kctree *t;

	put(dir, "Kconfig", order_kconfig);
	t = load(dir, "x86");
	/* chains, directly and through names not in the list */
	assert_order(t, "A B C", "C B A");
	assert_order(t, "A C", "C A");
	assert_order(t, "CONFIG_A CONFIG_C", "CONFIG_C CONFIG_A");
	assert_order(t, "CONFIG_A C", "C CONFIG_A");
	assert_order(t, "D C", "C D");	/* D selects A, needs B, needs C */
	assert_order(t, "X1 D X2 B", "X1 B D X2");
	/* already in order, or no order at all: unchanged */
	assert_order(t, "C B A", "C B A");
	assert_order(t, "X3 X1 X2", "X3 X1 X2");
	assert_order(t, "C X1 A", "C X1 A");
	/* a diamond: what moves keeps its order */
	assert_order(t, "TOPD R L BOT", "BOT R L TOPD");
	assert_order(t, "TOPD L R BOT", "BOT L R TOPD");
	assert_order(t, "TOPD X1 BOT", "BOT TOPD X1");
	/* names the tree does not know stay where they are among the rest */
	assert_order(t, "U1 A U2 C U3", "U1 C A U2 U3");
	assert_order(t, "U2 U1", "U2 U1");
	/* cycles: broken by list order, every time the same */
	assert_order(t, "CY1 CY2", "CY2 CY1");
	assert_order(t, "CY2 CY1", "CY1 CY2");
	assert_order(t, "CY1 X1 CY2", "CY2 CY1 X1");
	assert_order(t, "CY1 X1 CY2", "CY2 CY1 X1");
	/* a name twice: both, together */
	assert_order(t, "CONFIG_A X1 A B", "B CONFIG_A A X1");
	assert_order(t, "U1 U1", "U1 U1");
	/* nothing */
	kctree_order(t, NULL, 0);
	kctree_free(t);
	tmp_dir_rm(dir);
}

static void test_arch_from_config(void **state)
{
	static const char *const cases[][2] = {
		{ "#\n# Automatically generated file; DO NOT EDIT.\n"
		  "# Linux/x86 6.1.0 Kernel Configuration\n#\nCONFIG_X=y\n",
		  "x86" },
		{ "# Linux/x86_64 6.1.0 Kernel Configuration\n", "x86" },
		{ "# Linux/i386 4.19.0-rc1 Kernel Configuration\n", "x86" },
		{ "# Linux/sparc64 6.1.0 Kernel Configuration\n", "sparc" },
		{ "# Linux/parisc64 6.1.0 Kernel Configuration\n", "parisc" },
		{ "# Linux/arm64 6.1.0 Kernel Configuration\n", "arm64" },
		{ "# Linux/s390 6.1.0 Kernel Configuration\n", "s390" },
		{ "# Linux/mips32 6.1.0 Kernel Configuration\n", "mips" },
		{ "# Linux/powerpc 6.1.0-rc1 Kernel Configuration\r\n",
		  "powerpc" },
		{ "# Linux/um 6.1.0 Kernel Configuration", "um" },
		{ "# see Linux/x86 docs\n"
		  "# Linux/arm 6.1.0 Kernel Configuration\n", "arm" },
	};
	static const char *const none[] = {
		"", "CONFIG_X=y\n", "# Linux/x86 6.1.0\n",
		"# Linux/ 6.1.0 Kernel Configuration\n",
		"# Linux/x86 Kernel Configuration\n",
		"# Linux/x86 6.1.0\nKernel Configuration\n",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = kctree_arch_from_config(cases[i][0]);

		assert_non_null(a);
		assert_string_equal(a, cases[i][1]);
		free(a);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		char *a = kctree_arch_from_config(none[i]);

		if (a)
			fail_msg("\"%s\" gave \"%s\"", none[i], a);
	}
}

/* ---- the real tree ---- */

#define TARBALL	"/usr/src/linux-source-6.1.tar.xz"

/* The lab's tree, prepared by tests/lab/kernel.sh; NULL when there is none. */
static char *lab_tree(void)
{
	const char *lab = getenv("KTEST_LAB");
	const char *tarball = getenv("KTEST_LAB_TARBALL");
	char *script = lab_script("kernel.sh"), *kconfig, *tree = NULL;
	bool have;

	kconfig = xasprintf("%s/linux/Kconfig",
			    lab ? lab : "/var/tmp/ktest-lab");
	have = !access(kconfig, R_OK) ||
	       !access(tarball ? tarball : TARBALL, R_OK);
	free(kconfig);
	if (script && have)
		tree = lab_run(script, "tree");
	free(script);
	return tree;
}

/* The Kconfig symbols a grep finds in the files x86 can read. */
static struct strmap *grep_symbols(const char *tree)
{
	struct strmap *m = xcalloc(1, sizeof(*m));
	char *cmd = xasprintf(
		"cd '%s' && find . "
		"\\( -path './arch/*/*' ! -path './arch/x86/*' \\) -prune -o"
		" -name 'Kconfig*' -type f -print0 | "
		"xargs -0 grep -hE '^\\s*(menu)?config\\s+[A-Za-z0-9_]+' | "
		"awk '{print $2}' | sort -u", tree);
	FILE *f = popen(cmd, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	assert_non_null(f);
	strmap_init(m);
	while ((len = getline(&line, &cap, f)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		strmap_put(m, line, NULL);
	}
	assert_int_equal(pclose(f), 0);
	free(line);
	free(cmd);
	return m;
}

/* Does from reach to through deps? seen: names already walked. */
static bool reaches(const struct kctree *t, const char *from, const char *to,
		    struct strmap *seen)
{
	const char *const *deps;
	size_t n;

	if (!strcmp(from, to))
		return true;
	if (strmap_has(seen, from))
		return false;
	strmap_put(seen, from, NULL);
	n = kctree_deps(t, from, &deps);
	for (size_t i = 0; i < n; i++)
		if (reaches(t, deps[i], to, seen))
			return true;
	return false;
}

static bool has_dep(const struct kctree *t, const char *name, const char *dep)
{
	const char *const *deps;
	size_t n = kctree_deps(t, name, &deps);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(deps[i], dep))
			return true;
	return false;
}

static void real_facts(const struct kctree *t)
{
	assert_true(kctree_has(t, "X86_64"));
	assert_true(kctree_has(t, "CONFIG_64BIT"));
	assert_true(kctree_has(t, "PRINTK"));
	assert_true(kctree_has(t, "TTY"));
	assert_true(kctree_has(t, "SERIAL_8250"));
	assert_true(kctree_has(t, "SERIAL_8250_CONSOLE"));
	/* defined in drivers/hwtracing/coresight, sourced by arm only */
	assert_false(kctree_has(t, "CORESIGHT"));
	/* depends on SERIAL_8250=y; if TTY around drivers/tty; selects */
	assert_true(has_dep(t, "SERIAL_8250_CONSOLE", "SERIAL_8250"));
	assert_true(has_dep(t, "SERIAL_8250_CONSOLE", "TTY"));
	assert_true(has_dep(t, "SERIAL_8250_CONSOLE", "SERIAL_CORE_CONSOLE"));
	/* menu "Serial drivers" depends on HAS_IOMEM */
	assert_true(has_dep(t, "SERIAL_8250", "HAS_IOMEM"));
	assert_true(has_dep(t, "SERIAL_8250", "TTY"));
	assert_true(has_dep(t, "X86_64", "64BIT"));
	/* select ARCH_SUPPORTS_INT128 if CC_HAS_INT128 */
	assert_true(has_dep(t, "X86_64", "ARCH_SUPPORTS_INT128"));
	assert_false(has_dep(t, "X86_64", "CC_HAS_INT128"));
	/* in choice "High Memory Support", which depends on X86_32 */
	assert_true(has_dep(t, "NOHIGHMEM", "X86_32"));
}

/* Every name after its direct dependencies, unless they form a cycle. */
static void check_whole_order(const struct kctree *t, struct strmap *grep)
{
	const char **names = xcalloc(strmap_size(grep), sizeof(*names));
	const char *key;
	struct strmap pos;
	size_t n = 0, it = 0, cyclic = 0;
	void *v;

	while (strmap_next(grep, &it, &key, &v))
		if (kctree_has(t, key))
			names[n++] = key;
	for (size_t i = 0; i < n / 2; i++) {	/* worst first */
		const char *s = names[i];

		names[i] = names[n - 1 - i];
		names[n - 1 - i] = s;
	}
	kctree_order(t, (char **)names, n);
	strmap_init(&pos);
	for (size_t i = 0; i < n; i++)
		strmap_put(&pos, names[i], (void *)(i + 1));
	for (size_t i = 0; i < n; i++) {
		const char *const *deps;
		size_t nd = kctree_deps(t, names[i], &deps);

		for (size_t j = 0; j < nd; j++) {
			size_t at = (size_t)strmap_get(&pos, deps[j]);
			struct strmap seen;

			if (at <= i + 1)
				continue;
			strmap_init(&seen);
			if (!reaches(t, deps[j], names[i], &seen))
				fail_msg("%s before its dependency %s",
					 names[i], deps[j]);
			strmap_free(&seen, NULL);
			cyclic++;
		}
	}
	progress("%zu names ordered; %zu dependencies inside cycles", n,
		 cyclic);
	strmap_free(&pos, NULL);
	free(names);
}

/* Where name is in the six names of test_real_tree(). */
static size_t place(char **names, const char *name)
{
	for (size_t i = 0; i < 6; i++)
		if (!strcmp(names[i], name))
			return i;
	fail_msg("%s lost", name);
	return 6;
}

static void test_real_tree(void **state)
{
	char *tree, why[512] = "";
	struct strmap *grep;
	struct kctree *t;
	size_t missing = 0, it = 0;
	const char *key;
	char *order[] = {
		"CONFIG_SERIAL_8250_CONSOLE", "CONFIG_SERIAL_8250", "PRINTK",
		"CONFIG_X86_64", "CONFIG_TTY", "64BIT",
	};
	long t0, ms;
	void *v;

	lab_t0 = lab_now_ms();
	tree = lab_tree();
	if (!tree) {
		print_message("no kernel lab tree (%s): test skipped\n",
			      TARBALL);
		skip();
	}
	t0 = lab_now_ms();
	t = kctree_load(tree, "x86", why, sizeof(why));
	ms = lab_now_ms() - t0;
	if (!t)
		fail_msg("%s: %s", tree, why);
	progress("%s for x86: %zu symbols from %zu files in %ld ms", tree,
		 kctree_count(t), kctree_files(t), ms);
	/* its speed: bench/bench_kconfig_tree.c (make bench), not here */
	assert_true(kctree_files(t) > 1000);

	grep = grep_symbols(tree);
	while (strmap_next(grep, &it, &key, &v))
		missing += !kctree_has(t, key);
	progress("grep: %zu symbols, %zu of them not read for x86",
		 strmap_size(grep), missing);
	assert_true(strmap_size(grep) > 10000);
	assert_true(kctree_count(t) * 100 >= strmap_size(grep) * 95);
	assert_true(missing * 100 < strmap_size(grep));
	real_facts(t);

	kctree_order(t, order, sizeof(order) / sizeof(order[0]));
	assert_true(place(order, "CONFIG_TTY") <
		    place(order, "CONFIG_SERIAL_8250"));
	assert_true(place(order, "CONFIG_SERIAL_8250") <
		    place(order, "CONFIG_SERIAL_8250_CONSOLE"));
	assert_true(place(order, "64BIT") < place(order, "CONFIG_X86_64"));
	check_whole_order(t, grep);
	kctree_free(t);

	t = kctree_load(tree, "arm64", why, sizeof(why));
	if (!t)
		fail_msg("%s for arm64: %s", tree, why);
	assert_true(kctree_has(t, "CORESIGHT"));
	assert_true(kctree_has(t, "ARM64"));
	assert_false(kctree_has(t, "X86_64"));
	kctree_free(t);
	strmap_free(grep, NULL);
	free(grep);
	free(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constructs),
		cmocka_unit_test(test_arch_from_environment),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_no_tree),
		cmocka_unit_test(test_help_is_not_parsed),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_arch_from_config),
		cmocka_unit_test(test_real_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
