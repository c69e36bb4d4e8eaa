// SPDX-License-Identifier: GPL-2.0-only
/*
 * Config bisect, ours beside ktest.pl's config-bisect.pl, on simulated
 * Kconfig universes (tests/unit/kcsim.h): for each case, how many builds
 * and how many olddefconfig runs to an answer, and whether the answer is
 * right.
 *
 *   ours      ktest/config_bisect.h's machine, driven as
 *             ktest/run_config_bisect.c drives it: both configs normalised
 *             (2 olddefconfig), the changes (kdotconfig_diff) in Kconfig
 *             dependency order (kctree_order's rule, on the universe's
 *             depends and selects), each candidate the good config with
 *             changes taken from the bad one (removed when the bad one has
 *             no line), normalised (1 olddefconfig), then built unless
 *             known from earlier verdicts (1 olddefconfig more: the
 *             build's make_oldconfig). Builds: kcb_tests().
 *   ktest.pl  the real config-bisect.pl of /usr/src/linux-source-6.1.tar.xz
 *             (KTEST_CONFIG_BISECT_PL: one already extracted), run as
 *             ktest.pl runs it: the inputs normalised by ktest.pl itself
 *             (2 olddefconfig) into TMP_DIR/good_config and bad_config,
 *             then "config-bisect.pl -r -b OUTPUT_DIR good bad" from the
 *             tree, then with "good" or "bad" after each build of the
 *             .config it left (its make_oldconfig: 1 olddefconfig), until
 *             it exits non-zero. The tree is a fake: its Makefile's
 *             olddefconfig runs this program as the normaliser
 *             (--olddefconfig UNIVERSE CONFIG) and counts itself. Perl's
 *             hash order, random per run, picks its halves: each case runs
 *             with PERL_HASH_SEED 1..SEEDS, mean and max shown.
 *
 * Right: the answer applied to the good config (normalised) fails, and
 * what it needs of it (kcsim_core: changes that came anyway dropped) is
 * the case's culprit set. ktest.pl's answer is the difference between its
 * last good and bad configs (what it prints at the end); a user must
 * still build good + that difference to know it fails: "verified" counts
 * that build. Ours tests its answer alone before it stops.
 *
 * Progress goes to stderr, the table to stdout. KTEST_BENCH_VERBOSE=1
 * adds each answer under its row (2: and each step of ours on stderr);
 * KTEST_BENCH_KEEP keeps the runs' directories (logs, .tmp files).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "ktest/config_bisect.h"
#include "tests/unit/kcsim.h"

#define SEEDS 10
#define MAX_STEPS 500
#define TARBALL "/usr/src/linux-source-6.1.tar.xz"
#define PL_PATH "linux-source-6.1/tools/testing/ktest/config-bisect.pl"

extern char **environ;

/* ---- the cases ---- */

struct bcase {
	char *name;
	char *text;			/* the universe */
	struct kdotconfig good, bad;	/* as the user gives them */
	char *expect;			/* kcsim_expect_match() form */
};

/* One filler option: a plain change, good's value random, bad flips it. */
static void filler(struct sbuf *t, struct kdotconfig *g, struct kdotconfig *b,
		   uint64_t *s, size_t i)
{
	char *name = xasprintf("CONFIG_H%zu", i);
	bool on = kcsim_chance(s, 50);

	sbuf_addf(t, "config H%zu%s\n", i, kcsim_chance(s, 30) ? " default y" : "");
	kdotconfig_set(g, name, on ? "y" : NULL);
	kdotconfig_set(b, name, on ? NULL : "y");
	free(name);
}

static void set(struct kdotconfig *c, const char *name, bool on)
{
	char *full = xasprintf("CONFIG_%s", name);

	kdotconfig_set(c, full, on ? "y" : NULL);
	free(full);
}

/*
 * nfill fillers; the special options go in after filler number at[k]
 * (decl[k] their declarations, NULL-terminated). Returns the case with
 * the culprit line and the good/bad values still to be set.
 */
static struct bcase *mk(const char *name, size_t nfill, const size_t *at,
			const char *const *decl, const char *culprit,
			const char *expect, uint64_t seed, struct sbuf *t)
{
	struct bcase *c = xcalloc(1, sizeof(*c));
	uint64_t s = seed;
	size_t d = 0;

	c->name = xstrdup(name);
	c->expect = xstrdup(expect);
	kdotconfig_init(&c->good);
	kdotconfig_init(&c->bad);
	sbuf_init(t);
	for (size_t i = 0; i <= nfill; i++) {
		while (decl[d] && at[d] == i)
			sbuf_addf(t, "%s\n", decl[d++]);
		if (i < nfill)
			filler(t, &c->good, &c->bad, &s, i);
	}
	sbuf_addf(t, "culprit %s\n", culprit);
	return c;
}

static void done(struct bcase *c, struct sbuf *t)
{
	c->text = sbuf_detach(t);
	sbuf_free(t);
}

static size_t mkcases(struct bcase **v)
{
	struct sbuf t;
	struct bcase *c;
	size_t n = 0;

	{	/* (1) one culprit among 21 */
		static const size_t at[] = { 13 };
		static const char *const decl[] = { "config C", NULL };

		c = mk("1: one culprit", 20, at, decl, "C", "C", 1, &t);
		set(&c->good, "C", false);
		set(&c->bad, "C", true);
		done(c, &t);
		v[n++] = c;
	}
	{	/* (2) one culprit among 100 */
		static const size_t at[] = { 61 };
		static const char *const decl[] = { "config C", NULL };

		c = mk("2: one culprit", 99, at, decl, "C", "C", 2, &t);
		set(&c->good, "C", false);
		set(&c->bad, "C", true);
		done(c, &t);
		v[n++] = c;
	}
	{	/* (3) two needed together among 22 */
		static const size_t at[] = { 5, 16 };
		static const char *const decl[] = { "config C1", "config C2", NULL };

		c = mk("3: two together", 20, at, decl, "C1 C2", "C1 C2", 3, &t);
		set(&c->good, "C1", false);
		set(&c->bad, "C1", true);
		set(&c->good, "C2", false);
		set(&c->bad, "C2", true);
		done(c, &t);
		v[n++] = c;
	}
	{
		/*
		 * (4) through depends: X needs A needs B; B n -> y, A comes
		 * with it (default y), X is set y in bad. Good has no X line
		 * (and no A line).
		 */
		static const size_t at[] = { 4, 11, 17 };
		static const char *const decl[] = {
			"config B", "config A depends B default y",
			"config X depends A", NULL };

		c = mk("4: via depends", 20, at, decl, "X", "B X", 4, &t);
		set(&c->good, "B", false);
		set(&c->bad, "B", true);
		set(&c->bad, "X", true);
		done(c, &t);
		v[n++] = c;
	}
	{
		/*
		 * (5) S selects C: a candidate with C back at n but S still y
		 * gets C forced on again. Either change alone makes it fail.
		 */
		static const size_t at[] = { 7, 14 };
		static const char *const decl[] = { "config C", "config S select C",
						    NULL };

		c = mk("5: select forces back", 20, at, decl, "C", "C | S", 5, &t);
		set(&c->good, "C", false);
		set(&c->good, "S", false);
		set(&c->bad, "C", true);
		set(&c->bad, "S", true);
		done(c, &t);
		v[n++] = c;
	}
	{
		/*
		 * (6) X exists only in bad: it depends on !G, and G goes from
		 * y to n; X is set y there.
		 */
		static const size_t at[] = { 3, 15 };
		static const char *const decl[] = { "config G default y",
						    "config X depends !G", NULL };

		c = mk("6: bad side only", 20, at, decl, "X", "G X", 6, &t);
		set(&c->good, "G", true);
		set(&c->bad, "G", false);
		set(&c->bad, "X", true);
		done(c, &t);
		v[n++] = c;
	}
	{	/* (7) three needed together among 60 */
		static const size_t at[] = { 9, 30, 48 };
		static const char *const decl[] = {
			"config C1", "config C2", "config C3", NULL };

		c = mk("7: three together", 57, at, decl, "C1 C2 C3", "C1 C2 C3", 7,
		       &t);
		set(&c->good, "C1", false);
		set(&c->good, "C2", false);
		set(&c->good, "C3", false);
		set(&c->bad, "C1", true);
		set(&c->bad, "C2", true);
		set(&c->bad, "C3", true);
		done(c, &t);
		v[n++] = c;
	}
	/* (8) realistic: dependency clusters (kcsim_random) */
	{
		static const struct {
			uint64_t seed;
			size_t nopts, harm, ncul;
		} r[] = { { 11, 400, 40, 1 }, { 5, 800, 60, 2 } };
		static const char *const shape[] = { "plain", "chain", "select",
						     "!dep" };

		for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
			struct kcsim_case k;

			kcsim_random(r[i].seed, r[i].nopts, r[i].harm, r[i].ncul, &k);
			c = xcalloc(1, sizeof(*c));
			c->name = xasprintf("8%c: clusters, %s%s%s", (int)('a' + i),
					    shape[k.shape[0]], r[i].ncul > 1 ? "+" : "",
					    r[i].ncul > 1 ? shape[k.shape[1]] : "");
			c->text = k.text;
			k.text = NULL;
			c->good = k.good;
			c->bad = k.bad;
			kdotconfig_init(&k.good);
			kdotconfig_init(&k.bad);
			c->expect = k.expect;
			k.expect = NULL;
			kcsim_case_free(&k);
			v[n++] = c;
		}
	}
	return n;
}

static void bcase_free(struct bcase *c)
{
	free(c->name);
	free(c->text);
	free(c->expect);
	kdotconfig_free(&c->good);
	kdotconfig_free(&c->bad);
	free(c);
}

/* ---- judging an answer ---- */

/*
 * ch[0..n) are changes relative to good (normalised), apply the answer:
 * does good + answer fail, and is its core the expected set?
 */
static void judge(const struct kcsim *u, const struct kdotconfig *good,
		  const struct kdotconfig_change *ch, size_t n, const bool *apply,
		  const char *expect, bool *fails, bool *right)
{
	struct kdotconfig out;
	bool *core = xcalloc(n + 1, sizeof(bool));

	kdotconfig_init(&out);
	*fails = kcsim_try(u, good, ch, n, apply, &out);
	kcsim_core(u, good, ch, n, apply, core);
	*right = *fails && kcsim_expect_match(expect, ch, n, core);
	kdotconfig_free(&out);
	free(core);
}

/* ---- ours ---- */

struct ours {
	size_t n;		/* changes */
	size_t builds, inferred, odc;
	bool found, fails, right;
	char answer[256];
};

/* kctree_order()'s rule: each change after what it needs (depends, selects) */
static void order_visit(const struct kcsim *u, size_t i, unsigned char *st,
			const long *pos, size_t *out, size_t *k)
{
	const struct kcsim_opt *o = &u->o[i];

	if (st[i])
		return;
	st[i] = 1;
	for (size_t d = 0; d < o->ndep; d++)
		order_visit(u, o->dep[d].opt, st, pos, out, k);
	for (size_t d = 0; d < o->nsel; d++)
		order_visit(u, o->sel[d], st, pos, out, k);
	if (pos[i] >= 0)
		out[(*k)++] = (size_t)pos[i];
}

static void order(const struct kcsim *u, struct kdotconfig_change *ch, size_t n)
{
	long *pos = xcalloc(u->n + 1, sizeof(long));
	unsigned char *st = xcalloc(u->n + 1, 1);
	size_t *out = xcalloc(n + 1, sizeof(size_t)), k = 0, m = 0;
	struct kdotconfig_change *sorted = xcalloc(n + 1, sizeof(*sorted));
	bool *taken = xcalloc(n + 1, sizeof(bool));

	for (size_t i = 0; i < u->n; i++)
		pos[i] = -1;
	for (size_t j = 0; j < n; j++) {
		size_t i;

		if (kcsim_find(u, ch[j].name, &i))
			pos[i] = (long)j;
	}
	for (size_t j = 0; j < n; j++) {
		size_t i;

		if (kcsim_find(u, ch[j].name, &i))
			order_visit(u, i, st, pos, out, &k);
		else
			out[k++] = j;	/* unknown: stays */
	}
	for (size_t j = 0; j < k; j++) {
		if (taken[out[j]])
			continue;
		taken[out[j]] = true;
		sorted[m++] = ch[out[j]];
	}
	memcpy(ch, sorted, m * sizeof(*ch));
	free(pos);
	free(st);
	free(out);
	free(sorted);
	free(taken);
}

/* run_config_bisect.c's candidate() */
static void candidate(const struct kdotconfig *good,
		      const struct kdotconfig_change *ch, size_t n,
		      const bool *apply, struct kdotconfig *c)
{
	const struct kdotconfig_entry *e;
	size_t i = 0;

	kdotconfig_free(c);
	while ((e = kdotconfig_next(good, &i)))
		kdotconfig_set(c, e->name, e->value);
	for (size_t k = 0; k < n; k++) {
		if (!apply[k])
			continue;
		if (ch[k].in_b)
			kdotconfig_set(c, ch[k].name, ch[k].b);
		else
			kdotconfig_remove(c, ch[k].name);
	}
}

/* KTEST_BENCH_VERBOSE=2: each step of ours on stderr */
static void trace_step(const struct kcb_step *st,
		       const struct kdotconfig_change *ch, size_t n,
		       const bool *eff, bool bad)
{
	static const char *const why[] = { "check bad", "check good", "search",
					   "verify" };

	fprintf(stderr, "    %-6s %s:", why[st->purpose], bad ? "BAD " : "good");
	for (size_t k = 0; k < n; k++)
		if (st->apply[k] || eff[k])
			fprintf(stderr, " %s%s", ch[k].name + 7,
				!eff[k] ? "(dropped)" : !st->apply[k] ? "(came)" : "");
	fprintf(stderr, "\n");
}

static void run_ours(const struct bcase *bc, const struct kcsim *u,
		     struct ours *r)
{
	const char *v = getenv("KTEST_BENCH_VERBOSE");
	bool trace = v && atoi(v) >= 2;

	struct kdotconfig good, bad, c, nc;
	struct kdotconfig_change *ch;
	struct kcb_step st;
	struct kcb *m;
	bool *eff, *ans;
	size_t steps = 0;

	memset(r, 0, sizeof(*r));
	kdotconfig_init(&good);
	kdotconfig_init(&bad);
	kdotconfig_init(&c);
	kdotconfig_init(&nc);
	kcsim_olddefconfig(u, &bc->good, &good);
	kcsim_olddefconfig(u, &bc->bad, &bad);
	r->odc = 2;
	r->n = kdotconfig_diff(&good, &bad, &ch);
	order(u, ch, r->n);
	eff = xcalloc(r->n + 1, sizeof(bool));
	ans = xcalloc(r->n + 1, sizeof(bool));
	m = kcb_new(r->n, NULL);
	for (;;) {
		kcb_next(m, &st);
		if (st.kind != KCB_TEST || ++steps > MAX_STEPS)
			break;
		candidate(&good, ch, r->n, st.apply, &c);
		kcsim_olddefconfig(u, &c, &nc);
		r->odc++;
		kcsim_holds(&nc, ch, r->n, eff);
		if (trace)
			trace_step(&st, ch, r->n, eff, kcsim_bad(u, &nc));
		if (!kcb_normalised(m, eff)) {
			if (trace)
				fprintf(stderr, "      known: no build\n");
			continue;
		}
		r->odc++;	/* the build's make_oldconfig */
		kcb_report(m, kcsim_bad(u, &nc) ? KCB_BAD : KCB_GOOD);
	}
	r->builds = kcb_tests(m);
	r->inferred = kcb_inferred(m);
	if (st.kind == KCB_FOUND) {
		const struct kcb_group *g;
		size_t ng = kcb_culprits(m, &g);
		struct sbuf a;

		r->found = true;
		sbuf_init(&a);
		for (size_t k = 0; k < ng; k++) {
			sbuf_adds(&a, a.len ? " " : "");
			sbuf_adds(&a, g[k].n > 1 ? "(" : "");
			for (size_t j = 0; j < g[k].n; j++) {
				ans[g[k].idx[j]] = true;
				sbuf_addf(&a, "%s%s", j ? " " : "",
					  ch[g[k].idx[j]].name + 7);
			}
			sbuf_adds(&a, g[k].n > 1 ? ")" : "");
		}
		snprintf(r->answer, sizeof(r->answer), "%s", sbuf_str(&a));
		sbuf_free(&a);
		judge(u, &good, ch, r->n, ans, bc->expect, &r->fails, &r->right);
	} else {
		snprintf(r->answer, sizeof(r->answer), "%s",
			 st.kind == KCB_FAILED ? st.why : "no end");
	}
	kcb_free(m);
	free(eff);
	free(ans);
	free(ch);
	kdotconfig_free(&good);
	kdotconfig_free(&bad);
	kdotconfig_free(&c);
	kdotconfig_free(&nc);
}

/* ---- ktest.pl ---- */

struct theirs {
	int ok;			/* 1: ran to exit 2; 0: something else */
	int rc;			/* its last exit status */
	unsigned int builds, odc, reported;
	bool fails, right;
	char answer[200];
};

static char *self_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Runs argv in dir, stdout and stderr to log, stdin /dev/null; exit status. */
static int run(const char *dir, char *const argv[], char *const envp[],
	       const char *log)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (in < 0 || out < 0 || chdir(dir) ||
		    dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned int count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned int n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* config-bisect.pl's difference between good.tmp and bad.tmp, as changes */
static size_t reported(const struct kcsim *u, const struct kdotconfig *og,
		       const struct kdotconfig *g, const struct kdotconfig *b,
		       struct kdotconfig_change **out)
{
	struct kdotconfig_change *v = xcalloc(u->n + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < u->n; i++) {
		const char *name = u->o[i].name;
		const struct kdotconfig_entry *eg = kdotconfig_get(g, name);
		const struct kdotconfig_entry *eb = kdotconfig_get(b, name);
		const struct kdotconfig_entry *eo = kdotconfig_get(og, name);

		if (!eg && !eb)
			continue;
		if (eg && eb && (!eg->value) == (!eb->value) &&
		    (!eg->value || !strcmp(eg->value, eb->value)))
			continue;
		v[n].name = name;
		v[n].in_a = eo != NULL;
		v[n].a = eo ? eo->value : NULL;
		v[n].in_b = eb != NULL;
		v[n].b = eb ? eb->value : NULL;
		n++;
	}
	*out = v;
	return n;
}

/* The fake tree: olddefconfig counts itself and runs kcsim on $(O)/.config */
#define FAKE_MAKEFILE \
	".PHONY: olddefconfig\n" \
	"olddefconfig:\n" \
	"\t@echo olddefconfig >> \"$(KCSIM_COUNT)\"\n" \
	"\t@\"$(KCSIM_BIN)\" --olddefconfig \"$(KCSIM_UNIVERSE)\" " \
	"\"$(O)/.config\"\n"

static void run_theirs(const struct bcase *bc, const struct kcsim *u,
		       const char *pl, const char *self, const char *base,
		       unsigned int seed, struct theirs *r)
{
	char *dir = xasprintf("%s/pl-%u", base, seed);
	char *tree = xasprintf("%s/tree", dir), *outd = xasprintf("%s/out", dir);
	char *tmpd = xasprintf("%s/tmp", dir);
	char *uni = xasprintf("%s/universe", dir);
	char *cnt = xasprintf("%s/count", dir);
	char *log = xasprintf("%s/log", dir);
	char *mk = xasprintf("%s/Makefile", tree);
	char *gp = xasprintf("%s/good_config", tmpd);
	char *bp = xasprintf("%s/bad_config", tmpd);
	char *cfg = xasprintf("%s/.config", outd);
	char *e_seed = xasprintf("PERL_HASH_SEED=%u", seed);
	char *e_bin = xasprintf("KCSIM_BIN=%s", self);
	char *e_uni = xasprintf("KCSIM_UNIVERSE=%s", uni);
	char *e_cnt = xasprintf("KCSIM_COUNT=%s", cnt);
	char *path = getenv("PATH") ? xasprintf("PATH=%s", getenv("PATH")) :
		xstrdup("PATH=/usr/bin:/bin");
	char *envp[] = { path, e_seed, e_bin, e_uni, e_cnt,
			 "PERL_PERTURB_KEYS=2", "LC_ALL=C", NULL };
	char *argv[10];
	const char *last = NULL;
	struct kdotconfig og, ob, c, g, b;
	struct kdotconfig_change *ch;
	bool *all;
	size_t n;

	memset(r, 0, sizeof(*r));
	kdotconfig_init(&og);
	kdotconfig_init(&ob);
	kdotconfig_init(&c);
	kdotconfig_init(&g);
	kdotconfig_init(&b);
	if (mkdir(dir, 0755) || mkdir(tree, 0755) || mkdir(outd, 0755) ||
	    mkdir(tmpd, 0755) || write_text(uni, bc->text) ||
	    write_text(mk, FAKE_MAKEFILE)) {
		snprintf(r->answer, sizeof(r->answer), "setup: %s", strerror(errno));
		goto out;
	}
	/* ktest.pl: each input through make_oldconfig into TMP_DIR */
	kcsim_olddefconfig(u, &bc->good, &og);
	kcsim_olddefconfig(u, &bc->bad, &ob);
	r->odc = 2;
	if (kdotconfig_write(&og, gp) || kdotconfig_write(&ob, bp)) {
		snprintf(r->answer, sizeof(r->answer), "setup: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		int k = 0;

		argv[k++] = "/usr/bin/perl";
		argv[k++] = (char *)pl;
		if (!last)
			argv[k++] = "-r";
		argv[k++] = "-b";
		argv[k++] = outd;
		argv[k++] = gp;
		argv[k++] = bp;
		if (last)
			argv[k++] = (char *)last;
		argv[k] = NULL;
		r->rc = run(tree, argv, envp, log);
		if (r->rc)
			break;
		if (r->builds >= MAX_STEPS) {
			snprintf(r->answer, sizeof(r->answer), "no end");
			goto out;
		}
		/* build and test what it left: ktest.pl's make_oldconfig first */
		kdotconfig_free(&c);
		if (kdotconfig_read(&c, cfg)) {
			snprintf(r->answer, sizeof(r->answer), "no .config");
			goto out;
		}
		r->builds++;
		r->odc++;
		last = kcsim_bad(u, &c) ? "bad" : "good";
	}
	r->odc += count_lines(cnt);
	if (r->rc != 2) {
		snprintf(r->answer, sizeof(r->answer), "exit %d", r->rc);
		goto out;
	}
	r->ok = 1;
	{
		char *gt = xasprintf("%s.tmp", gp), *bt = xasprintf("%s.tmp", bp);
		int e = kdotconfig_read(&g, gt) || kdotconfig_read(&b, bt);

		free(gt);
		free(bt);
		if (e) {
			r->ok = 0;
			snprintf(r->answer, sizeof(r->answer), "no .tmp files");
			goto out;
		}
	}
	n = reported(u, &og, &g, &b, &ch);
	r->reported = (unsigned int)n;
	all = xcalloc(n + 1, sizeof(bool));
	{
		struct sbuf a;

		sbuf_init(&a);
		for (size_t k = 0; k < n; k++) {
			all[k] = true;
			sbuf_addf(&a, "%s%s%s", k ? " " : "",
				  !ch[k].in_a ? "-" : !ch[k].in_b ? "+" : "",
				  ch[k].name + 7);
		}
		snprintf(r->answer, sizeof(r->answer), "%s", sbuf_str(&a));
		sbuf_free(&a);
	}
	judge(u, &og, ch, n, all, bc->expect, &r->fails, &r->right);
	free(all);
	free(ch);
out:
	kdotconfig_free(&og);
	kdotconfig_free(&ob);
	kdotconfig_free(&c);
	kdotconfig_free(&g);
	kdotconfig_free(&b);
	free(dir);
	free(tree);
	free(outd);
	free(tmpd);
	free(uni);
	free(cnt);
	free(log);
	free(mk);
	free(gp);
	free(bp);
	free(cfg);
	free(e_seed);
	free(e_bin);
	free(e_uni);
	free(e_cnt);
	free(path);
}

/* ---- the --olddefconfig program the fake tree's Makefile runs ---- */

static int olddefconfig_main(const char *uni, const char *cfg)
{
	struct kdotconfig in, out;
	struct kcsim *u;
	struct sbuf t;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(uni, "re");

	if (!f) {
		perror(uni);
		return 1;
	}
	sbuf_init(&t);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_addn(&t, chunk, n);
	fclose(f);
	u = kcsim_parse(sbuf_str(&t));
	sbuf_free(&t);
	if (!u)
		return 1;
	kdotconfig_init(&in);
	kdotconfig_init(&out);
	if (kdotconfig_read(&in, cfg)) {
		perror(cfg);
		return 1;
	}
	kcsim_olddefconfig(u, &in, &out);
	if (kdotconfig_write(&out, cfg)) {
		perror(cfg);
		return 1;
	}
	kdotconfig_free(&in);
	kdotconfig_free(&out);
	kcsim_free(u);
	return 0;
}

/* ---- main ---- */

/* config-bisect.pl: KTEST_CONFIG_BISECT_PL, else out of the tarball */
static char *find_pl(const char *base)
{
	const char *env = getenv("KTEST_CONFIG_BISECT_PL");
	char *argv[] = { "/bin/tar", "-xJf", TARBALL, "-C", (char *)base,
			 PL_PATH, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	char *log, *pl;
	int rc;

	if (env)
		return access(env, R_OK) ? NULL : xstrdup(env);
	if (access(TARBALL, R_OK) || access("/usr/bin/perl", X_OK))
		return NULL;
	fprintf(stderr, "bench_config_bisect: extracting config-bisect.pl from %s\n",
		TARBALL);
	log = xasprintf("%s/tar.log", base);
	rc = run(base, argv, envp, log);
	free(log);
	pl = xasprintf("%s/%s", base, PL_PATH);
	if (rc || access(pl, R_OK)) {
		free(pl);
		return NULL;
	}
	return pl;
}

static int rm_rf(const char *dir)
{
	char *argv[] = { "/bin/rm", "-rf", (char *)dir, NULL };
	char *envp[] = { NULL };

	return run("/", argv, envp, "/dev/null");
}

/* Runs the ktest.pl side of one case, SEEDS runs, two at a time per CPU. */
static void theirs_all(const struct bcase *bc, const struct kcsim *u,
		       const char *pl, const char *self, const char *base,
		       struct theirs *r)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t par = ncpu > 0 ? (size_t)ncpu * 2 : 2, next = 0, running = 0;
	pid_t pid[SEEDS];
	int fd[SEEDS];

	while (next < SEEDS || running) {
		if (next < SEEDS && running < par) {
			int p[2];

			if (pipe(p) || (pid[next] = fork()) < 0) {
				memset(&r[next], 0, sizeof(r[next]));
				snprintf(r[next].answer, sizeof(r[next].answer),
					 "fork: %s", strerror(errno));
				next++;
				continue;
			}
			if (pid[next] == 0) {
				struct theirs one;
				ssize_t w;

				close(p[0]);
				run_theirs(bc, u, pl, self, base,
					   (unsigned int)next + 1, &one);
				w = write(p[1], &one, sizeof(one));
				_exit(w == (ssize_t)sizeof(one) ? 0 : 1);
			}
			close(p[1]);
			fd[next++] = p[0];
			running++;
			continue;
		}
		/* wait for the oldest still running */
		for (size_t i = 0; i < next; i++) {
			ssize_t got;
			int st;

			if (fd[i] < 0)
				continue;
			got = read(fd[i], &r[i], sizeof(r[i]));
			if (got != (ssize_t)sizeof(r[i])) {
				memset(&r[i], 0, sizeof(r[i]));
				snprintf(r[i].answer, sizeof(r[i].answer),
					 "the run died");
			}
			close(fd[i]);
			fd[i] = -1;
			waitpid(pid[i], &st, 0);
			running--;
			break;
		}
	}
}

static void row(const struct bcase *bc, const struct ours *o,
		const struct theirs *t, bool have_pl)
{
	char tb[32], tv[32], to[32], tr[16], tf[16];
	unsigned int sum = 0, max = 0, odc = 0, right = 0, fails = 0, ok = 0;

	printf("%-28s %4zu | %6zu %4zu %5s |", bc->name, o->n, o->builds,
	       o->odc, o->right ? "yes" : "NO");
	if (!have_pl) {
		printf(" n/a\n");
		return;
	}
	for (int s = 0; s < SEEDS; s++) {
		sum += t[s].builds;
		max = t[s].builds > max ? t[s].builds : max;
		odc += t[s].odc;
		right += t[s].right;
		fails += t[s].fails;
		ok += t[s].ok;
	}
	snprintf(tb, sizeof(tb), "%.1f/%u", (double)sum / SEEDS, max);
	snprintf(tv, sizeof(tv), "%.1f", (double)sum / SEEDS + 1);
	snprintf(to, sizeof(to), "%.1f", (double)odc / SEEDS);
	snprintf(tr, sizeof(tr), "%u/%u", right, SEEDS);
	snprintf(tf, sizeof(tf), "%u/%u", fails, SEEDS);
	printf(" %9s %8s %6s %6s %6s%s\n", tb, tv, to, tr, tf,
	       ok == SEEDS ? "" : "  (some runs did not end with exit 2)");
}

int main(int argc, char **argv)
{
	struct bcase *cases[16];
	struct theirs t[SEEDS];
	char *base, *pl, *self;
	size_t nc;
	bool verbose = getenv("KTEST_BENCH_VERBOSE") != NULL;
	char tmpl[PATH_MAX];
	struct timespec t0, t1;

	if (argc == 4 && !strcmp(argv[1], "--olddefconfig"))
		return olddefconfig_main(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--olddefconfig UNIVERSE CONFIG]\n",
			argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(tmpl, sizeof(tmpl), "%s/ktest-bench-cb.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	base = mkdtemp(tmpl);
	self = self_path();
	if (!base || !self) {
		fprintf(stderr, "bench_config_bisect: no temp dir or no /proc/self/exe\n");
		return 1;
	}
	pl = find_pl(base);
	if (!pl)
		fprintf(stderr, "bench_config_bisect: no config-bisect.pl (%s and perl needed): ours only\n",
			TARBALL);

	nc = mkcases(cases);
	printf("\nconfig bisect on simulated Kconfig universes: builds (make runs),\n"
	       "olddefconfig runs (odc); ktest.pl = config-bisect.pl of linux 6.1,\n"
	       "mean/max over PERL_HASH_SEED 1..%d; verified = + the build of good +\n"
	       "its answer; right = that fails and is the culprit set; fails = only\n"
	       "that it fails\n", SEEDS);
	printf("%-28s %4s | %-18s | %s\n", "", "", "ours",
	       "ktest.pl config-bisect.pl");
	printf("%-28s %4s | %6s %4s %5s | %9s %8s %6s %6s %6s\n", "case",
	       "n", "builds", "odc", "right", "builds", "verified", "odc",
	       "right", "fails");
	for (size_t i = 0; i < nc; i++) {
		struct kcsim *u = kcsim_parse(cases[i]->text);
		struct ours o;
		char *cb;

		if (!u)
			return 1;
		run_ours(cases[i], u, &o);
		memset(t, 0, sizeof(t));
		if (pl) {
			cb = xasprintf("%s/case%zu", base, i);
			if (mkdir(cb, 0755)) {
				perror(cb);
				return 1;
			}
			fprintf(stderr, "bench_config_bisect: %s\n", cases[i]->name);
			fflush(stdout);
			theirs_all(cases[i], u, pl, self, cb, t);
			free(cb);
		}
		row(cases[i], &o, t, pl != NULL);
		if (verbose) {
			printf("    expect %s; ours %s (%zu inferred, fails %s)\n",
			       cases[i]->expect, o.answer, o.inferred,
			       o.fails ? "yes" : "no");
			for (int s = 0; pl && s < SEEDS; s++)
				printf("    seed %2d: %u builds, %u odc, exit %d: %s%s\n",
				       s + 1, t[s].builds, t[s].odc, t[s].rc,
				       t[s].answer, t[s].right ? "" :
				       t[s].fails ? "  (wrong set)" : "  (passes)");
		}
		fflush(stdout);
		kcsim_free(u);
		bcase_free(cases[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "bench_config_bisect: %.1f s\n",
		(double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (!getenv("KTEST_BENCH_KEEP"))
		rm_rf(base);
	else
		fprintf(stderr, "bench_config_bisect: kept %s\n", base);
	free(pl);
	free(self);
	return 0;
}
