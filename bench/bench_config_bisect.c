// SPDX-License-Identifier: GPL-2.0-only
/*
 * Config bisect, ours beside ktest.pl's config-bisect.pl, on simulated
 * Kconfig universes (tests/unit/kcsim.h): for each case, how many builds
 * and how many olddefconfig runs to an answer, and whether the answer is
 * right.
 *
 * Each case is NINST instances of one shape: the same options and
 * culprit kind, the culprit's options at other places among the harmless
 * changes and the harmless values drawn anew (cases 1-7: instance 0 is
 * the case as first written, the others place the special options at
 * random; cases 8: kcsim_random() seeds giving the same culprit shape).
 * Ours runs once per instance (it is deterministic); config-bisect.pl
 * NSEED times per instance, with PERL_HASH_SEED 1..NSEED (Perl's hash
 * order picks its halves). Every figure is a mean (and max) over all the
 * runs of a case: NINST for ours, NINST * NSEED for ktest.pl. Cost: 1 to
 * 2 minutes (62-102 s measured on a shared 2-CPU box with NINST 10, NSEED
 * 3: 270 chases, 4 at a time); keep it under 3 minutes when changing
 * these.
 *
 *   ours      ktest/config_bisect.h's machine, driven as
 *             ktest/run_config_bisect.c drives it: both configs normalised
 *             (2 olddefconfig), the changes (kdotconfig_diff) in Kconfig
 *             dependency order (kctree_order's rule, on the universe's
 *             depends and selects), each candidate the good config with
 *             changes taken from the bad one (removed when the bad one has
 *             no line), normalised (1 olddefconfig), then built unless
 *             known from earlier verdicts (1 olddefconfig more: the
 *             build's make_oldconfig). Builds: kcb_tests(). It tests its
 *             answer alone before it stops: its answer needs no more
 *             builds.
 *   ktest.pl  the real config-bisect.pl of /usr/src/linux-source-6.1.tar.xz
 *             (KTEST_CONFIG_BISECT_PL: one already extracted), run as
 *             ktest.pl runs it: the inputs normalised by ktest.pl itself
 *             (2 olddefconfig) into TMP_DIR/good_config and bad_config,
 *             then "config-bisect.pl -r -b OUTPUT_DIR good bad" from the
 *             tree, then with "good" or "bad" after each build of the
 *             .config it left (its make_oldconfig: 1 olddefconfig), until
 *             it exits non-zero. The tree is a fake: its Makefile's
 *             olddefconfig runs this program as the normaliser
 *             (--olddefconfig UNIVERSE CONFIG) and counts itself. Its
 *             answer: the difference between its last good and bad
 *             configs (what it prints at the end), "-X" for an option
 *             that good config does not have, "+X" for one the bad does
 *             not have.
 *
 * Columns:
 *   ours              builds mean/max, olddefconfig runs mean, right x/N
 *   ktest.pl one run  builds mean/max, olddefconfig mean, right x/N
 *   + verify          builds mean/max of one run plus the build a user
 *                     needs to know its answer is right: the good config
 *                     plus the reported changes
 *   to a right answer ktest.pl driven as a user would after a wrong
 *                     answer, every build and olddefconfig of every
 *                     round counted:
 *       1. run ktest.pl's config_bisect (CONFIG_BISECT_GOOD = the
 *          original good, CONFIG_BISECT = the original bad) and add the
 *          changes it reports to the changes found so far;
 *       2. if a change found so far cannot be applied to the original
 *          good config (good + the changes so far, through olddefconfig,
 *          does not hold its bad value: e.g. a "-X" for an option only
 *          the bad config has, whose depends good does not meet), that run
 *          never reaches a right answer: "never";
 *       3. build the original good config plus the changes so far (1
 *          build, its make_oldconfig 1 olddefconfig); if that fails, the
 *          answer is complete: stop (it is right when it is the culprit
 *          set, see below);
 *       4. if it passes: rerun config_bisect with CONFIG_BISECT_GOOD =
 *          the original good + the changes found so far (normalised) and
 *          CONFIG_BISECT = the original bad, add the changes it reports,
 *          and go to 2; after MAX_ROUNDS rounds: "never".
 *       Builds mean/max and olddefconfig mean are over the runs that
 *       reached a right answer; "never" counts the runs that did not.
 *
 * Right: the answer applied to the good config (normalised) fails, and
 * what it needs of it (kcsim_core: changes that came anyway dropped) is
 * the case's culprit set.
 *
 * After the table: one line per case, ours beside ktest.pl to a right
 * answer (fewer / same / more builds; same: equal to one decimal), then
 * what ktest.pl's one run reported when it was wrong and why runs never
 * reached a right answer (the most frequent answers, names as in the
 * universes: H*, N* harmless, the rest the culprit's options).
 *
 * Progress goes to stderr, the table to stdout. KTEST_BENCH_VERBOSE=1
 * adds each run under its row (2: and each step of ours on stderr);
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

#define NINST 10		/* instances per case */
#define NSEED 3			/* PERL_HASH_SEEDs per instance */
#define NRUNS (NINST * NSEED)
#define MAX_ROUNDS 6		/* ktest.pl reruns to a right answer */
#define STR_(x) #x
#define STR(x) STR_(x)
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

/* A special option's values: 1 y, 0 "is not set", -1 no line. */
struct hset {
	const char *name;
	int good, bad;
};

/*
 * A hand-made case: nfill fillers (plain options, good's value random,
 * bad flips it), the declarations decl[] placed after fillers at[] (in
 * this order), the culprit line, the special options' values.
 */
struct hand {
	const char *name;
	size_t nfill;
	uint64_t seed;
	const char *decl[4];
	size_t at[3];		/* instance 0; the others: at random */
	const char *culprit, *expect;
	struct hset set[4];
};

static const struct hand hands[] = {
	/* (1) one culprit among 21 */
	{ "1: one culprit", 20, 1, { "config C" }, { 13 }, "C", "C",
	  { { "C", 0, 1 } } },
	/* (2) one culprit among 100 */
	{ "2: one culprit", 99, 2, { "config C" }, { 61 }, "C", "C",
	  { { "C", 0, 1 } } },
	/* (3) two needed together among 22 */
	{ "3: two together", 20, 3, { "config C1", "config C2" }, { 5, 16 },
	  "C1 C2", "C1 C2", { { "C1", 0, 1 }, { "C2", 0, 1 } } },
	/*
	 * (4) through depends: X needs A needs B; B n -> y, A comes with it
	 * (default y), X is set y in bad. Good has no X line (and no A line).
	 */
	{ "4: via depends", 20, 4,
	  { "config B", "config A depends B default y", "config X depends A" },
	  { 4, 11, 17 }, "X", "B X", { { "B", 0, 1 }, { "X", -1, 1 } } },
	/*
	 * (5) S selects C: a candidate with C back at n but S still y gets
	 * C forced on again. Either change alone makes it fail.
	 */
	{ "5: select forces back", 20, 5, { "config C", "config S select C" },
	  { 7, 14 }, "C", "C | S", { { "C", 0, 1 }, { "S", 0, 1 } } },
	/* (6) X exists only in bad: it depends on !G, G y -> n, X set y */
	{ "6: bad side only", 20, 6,
	  { "config G default y", "config X depends !G" }, { 3, 15 }, "X",
	  "G X", { { "G", 1, 0 }, { "X", -1, 1 } } },
	/* (7) three needed together among 60 */
	{ "7: three together", 57, 7,
	  { "config C1", "config C2", "config C3" }, { 9, 30, 48 },
	  "C1 C2 C3", "C1 C2 C3",
	  { { "C1", 0, 1 }, { "C2", 0, 1 }, { "C3", 0, 1 } } },
};
#define NHAND (sizeof(hands) / sizeof(hands[0]))

/* (8) realistic: dependency clusters (kcsim_random) */
static const struct rnd {
	char tag;
	uint64_t seed;
	size_t nopts, harm, ncul;
} rnds[] = { { 'a', 11, 400, 40, 1 }, { 'b', 5, 800, 60, 2 } };
#define NRND (sizeof(rnds) / sizeof(rnds[0]))
#define NCASES (NHAND + NRND)

static void set(struct kdotconfig *c, const char *name, int v)
{
	char *full;

	if (v < 0)
		return;
	full = xasprintf("CONFIG_%s", name);
	kdotconfig_set(c, full, v ? "y" : NULL);
	free(full);
}

static struct bcase *mk_hand(const struct hand *h, size_t inst)
{
	struct bcase *c = xcalloc(1, sizeof(*c));
	uint64_t s = inst ? h->seed * 1000 + inst : h->seed;
	size_t at[4], nd = 0, d = 0;
	struct sbuf t;

	while (nd < 4 && h->decl[nd])
		nd++;
	if (!inst) {
		memcpy(at, h->at, nd * sizeof(*at));
	} else {
		/* nd positions in 0..nfill at random, ascending */
		for (size_t k = 0; k < nd; k++) {
			size_t v = kcsim_below(&s, h->nfill + 1), j = k;

			for (; j > 0 && at[j - 1] > v; j--)
				at[j] = at[j - 1];
			at[j] = v;
		}
	}
	c->name = xstrdup(h->name);
	c->expect = xstrdup(h->expect);
	kdotconfig_init(&c->good);
	kdotconfig_init(&c->bad);
	sbuf_init(&t);
	for (size_t i = 0; i <= h->nfill; i++) {
		while (d < nd && at[d] == i)
			sbuf_addf(&t, "%s\n", h->decl[d++]);
		if (i < h->nfill) {
			char *name = xasprintf("CONFIG_H%zu", i);
			bool on = kcsim_chance(&s, 50);

			sbuf_addf(&t, "config H%zu%s\n", i,
				  kcsim_chance(&s, 30) ? " default y" : "");
			kdotconfig_set(&c->good, name, on ? "y" : NULL);
			kdotconfig_set(&c->bad, name, on ? NULL : "y");
			free(name);
		}
	}
	sbuf_addf(&t, "culprit %s\n", h->culprit);
	for (size_t k = 0; k < 4 && h->set[k].name; k++) {
		set(&c->good, h->set[k].name, h->set[k].good);
		set(&c->bad, h->set[k].name, h->set[k].bad);
	}
	c->text = sbuf_detach(&t);
	sbuf_free(&t);
	return c;
}

static const char *const shape_name[] = { "plain", "chain", "select", "!dep" };

static struct bcase *from_kcsim(struct kcsim_case *k, const char *name)
{
	struct bcase *c = xcalloc(1, sizeof(*c));

	c->name = xstrdup(name);
	c->text = k->text;
	k->text = NULL;
	c->good = k->good;
	c->bad = k->bad;
	kdotconfig_init(&k->good);
	kdotconfig_init(&k->bad);
	c->expect = k->expect;
	k->expect = NULL;
	kcsim_case_free(k);
	return c;
}

/*
 * Case 8x's instances: the case's seed, then seeds + 1000, + 2000, ...
 * whose culprit has the same shape(s).
 */
static void mk_rnd(const struct rnd *r, struct bcase **v)
{
	enum kcsim_shape want[2];
	size_t nsh = r->ncul < 2 ? r->ncul : 2, got = 0;
	char *name = NULL;

	for (uint64_t seed = r->seed; got < NINST; seed += 1000) {
		struct kcsim_case k;
		bool same = true;

		kcsim_random(seed, r->nopts, r->harm, r->ncul, &k);
		if (!got) {
			memcpy(want, k.shape, sizeof(want));
			name = xasprintf("8%c: clusters, %s%s%s", r->tag,
					 shape_name[k.shape[0]],
					 r->ncul > 1 ? "+" : "",
					 r->ncul > 1 ? shape_name[k.shape[1]] : "");
		}
		for (size_t q = 0; q < nsh; q++)
			same = same && k.shape[q] == want[q];
		if (!same) {
			kcsim_case_free(&k);
			continue;
		}
		v[got++] = from_kcsim(&k, name);
	}
	free(name);
}

/* The NINST instances of case i. */
static void mk_case(size_t i, struct bcase **v)
{
	if (i < NHAND) {
		for (size_t j = 0; j < NINST; j++)
			v[j] = mk_hand(&hands[i], j);
	} else {
		mk_rnd(&rnds[i - NHAND], v);
	}
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

/*
 * config-bisect.pl's difference between good.tmp and bad.tmp, as changes
 * relative to og (the good config it was given, normalised)
 */
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

/*
 * One config_bisect of ktest.pl in the new directory dir: good gin, bad
 * bin (as the user gives them). The changes it reports go into rep (name:
 * bad value; NULL: not set), judged against expect.
 */
static void run_theirs(const struct kdotconfig *gin,
		       const struct kdotconfig *bin, const char *expect,
		       const struct kcsim *u, const char *text, const char *pl,
		       const char *self, const char *dir, unsigned int seed,
		       struct theirs *r, struct kdotconfig *rep)
{
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
	    mkdir(tmpd, 0755) || write_text(uni, text) ||
	    write_text(mk, FAKE_MAKEFILE)) {
		snprintf(r->answer, sizeof(r->answer), "setup: %s", strerror(errno));
		goto out;
	}
	/* ktest.pl: each input through make_oldconfig into TMP_DIR */
	kcsim_olddefconfig(u, gin, &og);
	kcsim_olddefconfig(u, bin, &ob);
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
			kdotconfig_set(rep, ch[k].name, ch[k].b);
		}
		snprintf(r->answer, sizeof(r->answer), "%s", sbuf_str(&a));
		sbuf_free(&a);
	}
	judge(u, &og, ch, n, all, expect, &r->fails, &r->right);
	free(all);
	free(ch);
out:
	kdotconfig_free(&og);
	kdotconfig_free(&ob);
	kdotconfig_free(&c);
	kdotconfig_free(&g);
	kdotconfig_free(&b);
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

/* ---- ktest.pl to a right answer ---- */

enum chase_end {
	CH_RIGHT,	/* good + the changes fails, and they are the culprit set */
	CH_WRONG,	/* it fails, but they are not the culprit set */
	CH_NOAPPLY,	/* a change found does not hold in good + the changes */
	CH_CAP,		/* still passes after MAX_ROUNDS rounds */
	CH_ERROR,	/* config-bisect.pl did not end with exit 2 */
};

struct chase {
	struct theirs first;	/* round 1: ktest.pl's one run */
	unsigned int builds, odc, rounds;
	int end;		/* enum chase_end */
	char why[240];		/* the changes found, or what went wrong */
};

/* The changes in f (name: bad value) as diffconfig-ish text into buf */
static void changes_text(const struct kdotconfig *f,
			 const struct kdotconfig *og, char *buf, size_t len)
{
	const struct kdotconfig_entry *e;
	struct sbuf a;
	size_t i = 0;

	sbuf_init(&a);
	while ((e = kdotconfig_next(f, &i)))
		sbuf_addf(&a, "%s%s%s", a.len ? " " : "",
			  !kdotconfig_get(og, e->name) ? "-" : !e->value ? "+" : "",
			  e->name + 7);
	snprintf(buf, len, "%s", sbuf_str(&a));
	sbuf_free(&a);
}

/* The protocol in the top comment, for one instance and one hash seed. */
static void chase(const struct bcase *bc, const struct kcsim *u,
		  const char *pl, const char *self, const char *base,
		  size_t inst, unsigned int seed, struct chase *r)
{
	struct kdotconfig og, found, gin, mix, nc;
	const struct kdotconfig_entry *e;

	memset(r, 0, sizeof(*r));
	r->end = CH_CAP;
	kdotconfig_init(&og);
	kdotconfig_init(&found);
	kdotconfig_init(&gin);
	kdotconfig_init(&mix);
	kdotconfig_init(&nc);
	kcsim_olddefconfig(u, &bc->good, &og);
	kdotconfig_merge(&gin, &bc->good);
	while (r->rounds < MAX_ROUNDS) {
		char *dir = xasprintf("%s/i%zu-s%u-r%u", base, inst, seed,
				      r->rounds + 1);
		struct theirs t;
		struct kdotconfig rep;
		bool hold = true;
		size_t i = 0;

		kdotconfig_init(&rep);
		run_theirs(&gin, &bc->bad, bc->expect, u, bc->text, pl, self, dir,
			   seed, &t, &rep);
		free(dir);
		if (!r->rounds)
			r->first = t;
		r->rounds++;
		r->builds += t.builds;
		r->odc += t.odc;
		kdotconfig_merge(&found, &rep);
		kdotconfig_free(&rep);
		if (!t.ok) {
			r->end = CH_ERROR;
			snprintf(r->why, sizeof(r->why), "round %u: %s", r->rounds,
				 t.answer);
			break;
		}
		/* the original good plus the changes so far */
		kdotconfig_free(&mix);
		kdotconfig_merge(&mix, &og);
		kdotconfig_merge(&mix, &found);
		kcsim_olddefconfig(u, &mix, &nc);
		while ((e = kdotconfig_next(&found, &i)))
			if (!kdotconfig_has_value(&nc, e->name, e->value))
				hold = false;
		if (!hold) {
			struct kdotconfig lost;

			kdotconfig_init(&lost);
			i = 0;
			while ((e = kdotconfig_next(&found, &i)))
				if (!kdotconfig_has_value(&nc, e->name, e->value))
					kdotconfig_set(&lost, e->name, e->value);
			r->end = CH_NOAPPLY;
			changes_text(&lost, &og, r->why, sizeof(r->why));
			kdotconfig_free(&lost);
			break;
		}
		/* the user's build of it */
		r->builds++;
		r->odc++;
		if (kcsim_bad(u, &nc)) {
			struct kdotconfig_change *ch;
			size_t n = kdotconfig_count(&found), k = 0;
			bool *all = xcalloc(n + 1, sizeof(bool)), fails, right;

			ch = xcalloc(n + 1, sizeof(*ch));
			i = 0;
			while ((e = kdotconfig_next(&found, &i))) {
				const struct kdotconfig_entry *eo =
					kdotconfig_get(&og, e->name);

				ch[k].name = e->name;
				ch[k].in_a = eo != NULL;
				ch[k].a = eo ? eo->value : NULL;
				ch[k].in_b = true;
				ch[k].b = e->value;
				all[k++] = true;
			}
			judge(u, &og, ch, n, all, bc->expect, &fails, &right);
			r->end = right ? CH_RIGHT : CH_WRONG;
			changes_text(&found, &og, r->why, sizeof(r->why));
			free(ch);
			free(all);
			break;
		}
		/* it passes: the next round starts from it */
		kdotconfig_free(&gin);
		kdotconfig_merge(&gin, &nc);
	}
	if (r->end == CH_CAP)
		changes_text(&found, &og, r->why, sizeof(r->why));
	kdotconfig_free(&og);
	kdotconfig_free(&found);
	kdotconfig_free(&gin);
	kdotconfig_free(&mix);
	kdotconfig_free(&nc);
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

/*
 * The ktest.pl side of one case: NINST instances times NSEED hash seeds,
 * each chased to a right answer in a child, two children per CPU.
 */
static void theirs_all(struct bcase *const *bc, struct kcsim *const *u,
		       const char *pl, const char *self, const char *base,
		       struct chase *r)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t par = ncpu > 0 ? (size_t)ncpu * 2 : 2, next = 0, running = 0;
	pid_t pid[NRUNS];
	int fd[NRUNS];

	while (next < NRUNS || running) {
		if (next < NRUNS && running < par) {
			size_t inst = next / NSEED;
			unsigned int seed = (unsigned int)(next % NSEED) + 1;
			int p[2];

			if (pipe(p) || (pid[next] = fork()) < 0) {
				memset(&r[next], 0, sizeof(r[next]));
				r[next].end = CH_ERROR;
				snprintf(r[next].why, sizeof(r[next].why),
					 "fork: %s", strerror(errno));
				fd[next++] = -1;
				continue;
			}
			if (pid[next] == 0) {
				struct chase one;
				ssize_t w;

				close(p[0]);
				chase(bc[inst], u[inst], pl, self, base, inst,
				      seed, &one);
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
				r[i].end = CH_ERROR;
				snprintf(r[i].why, sizeof(r[i].why), "the run died");
			}
			close(fd[i]);
			fd[i] = -1;
			waitpid(pid[i], &st, 0);
			running--;
			break;
		}
	}
}

/* ---- the table ---- */

/* how often each text came, for the notes */
struct tally {
	char s[288];
	unsigned int n;
};
#define NTALLY 64

static void tally_add(struct tally *t, const char *s)
{
	for (size_t i = 0; i < NTALLY; i++) {
		if (!t[i].n) {
			snprintf(t[i].s, sizeof(t[i].s), "%s", s);
			t[i].n = 1;
			return;
		}
		if (!strcmp(t[i].s, s)) {
			t[i].n++;
			return;
		}
	}
	snprintf(t[NTALLY - 1].s, sizeof(t[NTALLY - 1].s), "(others)");
	t[NTALLY - 1].n++;
}

/* the top most frequent, "text x3, text x2, ... (k more)" */
static void tally_print(struct tally *t, size_t top)
{
	size_t n = 0, shown = 0;
	unsigned int rest = 0;

	while (n < NTALLY && t[n].n)
		n++;
	/* by count, descending (stable: first seen first) */
	for (size_t i = 1; i < n; i++) {
		struct tally x = t[i];
		size_t j = i;

		for (; j > 0 && t[j - 1].n < x.n; j--)
			t[j] = t[j - 1];
		t[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		if (shown < top) {
			printf("%s%s x%u", shown ? ", " : "", t[i].s, t[i].n);
			shown++;
		} else {
			rest += t[i].n;
		}
	}
	if (rest)
		printf(", other answers x%u", rest);
	printf("\n");
}

struct agg {
	char name[64];
	/* ours, over NINST */
	double n, o_builds, o_odc;
	unsigned int o_max, o_right;
	/* ktest.pl one run, over NRUNS */
	double t_builds, t_odc;
	unsigned int t_max, t_right, t_ok;
	/* to a right answer, over the runs that got there */
	double c_builds, c_odc, c_rounds;
	unsigned int c_max, c_right, c_end[CH_ERROR + 1];
	struct tally wrong[NTALLY], never[NTALLY];
};

static void fmt_mm(char *buf, size_t len, double sum, unsigned int max,
		   unsigned int n)
{
	if (n)
		snprintf(buf, len, "%.1f/%u", sum / n, max);
	else
		snprintf(buf, len, "-");
}

static void row(const struct agg *a, bool have_pl)
{
	char ob[16], tb[16], vb[16], cb[16], r1[16], r2[16], r3[16];

	fmt_mm(ob, sizeof(ob), a->o_builds, a->o_max, NINST);
	snprintf(r1, sizeof(r1), "%u/%u", a->o_right, NINST);
	printf("%-26s %4.0f | %7s %5.1f %5s |", a->name, a->n / NINST, ob,
	       a->o_odc / NINST, r1);
	if (!have_pl) {
		printf(" n/a\n");
		return;
	}
	fmt_mm(tb, sizeof(tb), a->t_builds, a->t_max, NRUNS);
	fmt_mm(vb, sizeof(vb), a->t_builds + NRUNS, a->t_max + 1, NRUNS);
	fmt_mm(cb, sizeof(cb), a->c_builds, a->c_max, a->c_right);
	snprintf(r2, sizeof(r2), "%u/%u", a->t_right, NRUNS);
	snprintf(r3, sizeof(r3), "%u/%u", a->c_right, NRUNS);
	printf(" %7s %5.1f %5s | %7s | %7s", tb, a->t_odc / NRUNS, r2, vb, cb);
	if (a->c_right)
		printf(" %5.1f %6.1f", a->c_odc / a->c_right,
		       a->c_rounds / a->c_right);
	else
		printf(" %5s %6s", "-", "-");
	printf(" %5s %5u%s\n", r3, NRUNS - a->c_right,
	       a->t_ok == NRUNS ? "" : "  (some runs did not end with exit 2)");
}

static void summary(const struct agg *a)
{
	double o = a->o_builds / NINST, t;
	double d;
	unsigned int never = NRUNS - a->c_right;

	printf("%s: ours %.1f builds", a->name, o);
	if (!a->c_right) {
		printf("; ktest.pl never reached a right answer (%u/%u runs): only ours answers\n",
		       never, NRUNS);
		return;
	}
	t = a->c_builds / a->c_right;
	d = o - t;
	printf(", ktest.pl to a right answer %.1f", t);
	if (never)
		printf(" (in the %u/%u runs that got there; %u never)",
		       a->c_right, NRUNS, never);
	{
		char so[32], st[32];

		snprintf(so, sizeof(so), "%.1f", o);
		snprintf(st, sizeof(st), "%.1f", t);
		if (!strcmp(so, st))
			printf(": ours the same\n");
		else
			printf(": ours %.1f %s (%+.0f%%)\n", d < 0 ? -d : d,
			       d < 0 ? "fewer" : "more", 100.0 * d / t);
	}
}

static const char *const end_name[] = {
	[CH_RIGHT] = "right",
	[CH_WRONG] = "fails, not the culprit set",
	[CH_NOAPPLY] = "a change found does not hold in good + the changes",
	[CH_CAP] = "still passes after " STR(MAX_ROUNDS) " rounds",
	[CH_ERROR] = "config-bisect.pl did not end with exit 2",
};

static void notes(struct agg *a)
{
	unsigned int wrong = NRUNS - a->t_right, never = NRUNS - a->c_right;

	if (!wrong && !never)
		return;
	printf("%s:\n", a->name);
	if (wrong) {
		printf("    one run wrong %u/%u: ", wrong, NRUNS);
		tally_print(a->wrong, 4);
	}
	if (never) {
		printf("    never right %u/%u:", never, NRUNS);
		for (int e = CH_WRONG; e <= CH_ERROR; e++)
			if (a->c_end[e])
				printf(" %s x%u;", end_name[e], a->c_end[e]);
		printf("\n      ");
		tally_print(a->never, 4);
	}
}

int main(int argc, char **argv)
{
	static struct agg aggs[NCASES];
	static struct chase t[NRUNS];
	char *base, *pl, *self;
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

	printf("\nconfig bisect on simulated Kconfig universes, %d instances a case (culprit\n"
	       "placed anew, harmless changes drawn anew); ktest.pl = config-bisect.pl of\n"
	       "linux 6.1 driven as ktest.pl drives it, PERL_HASH_SEED 1..%d on each\n"
	       "instance (%d runs a case). Means (/max) over all runs; odc = olddefconfig\n"
	       "runs; right = good + the answer fails and is the culprit set.\n"
	       "+ verify: one run plus the build of good + its answer, to know it is right.\n"
	       "to a right answer: build good + the changes so far; fails: done; passes:\n"
	       "rerun config_bisect with good = good + the changes so far (normalised), bad =\n"
	       "the original bad, add what it reports, repeat (at most %d rounds); a change\n"
	       "that does not hold in good + the changes after olddefconfig (e.g. -X, an\n"
	       "option only bad has): never. All builds and odc of all rounds counted;\n"
	       "builds, odc, rounds over the runs that got there.\n",
	       NINST, NSEED, NRUNS, MAX_ROUNDS);
	printf("%-26s %4s | %-19s | %-19s | %-7s | %s\n", "", "", "ours",
	       "ktest.pl, one run", "+verify", "ktest.pl to a right answer");
	printf("%-26s %4s | %7s %5s %5s | %7s %5s %5s | %7s | %7s %5s %6s %5s %5s\n",
	       "case", "n", "builds", "odc", "right", "builds", "odc", "right",
	       "builds", "builds", "odc", "rounds", "right", "never");
	for (size_t i = 0; i < NCASES; i++) {
		struct bcase *bc[NINST];
		struct kcsim *u[NINST];
		struct ours o[NINST];
		struct agg *a = &aggs[i];

		mk_case(i, bc);
		snprintf(a->name, sizeof(a->name), "%s", bc[0]->name);
		for (size_t j = 0; j < NINST; j++) {
			u[j] = kcsim_parse(bc[j]->text);
			if (!u[j])
				return 1;
			run_ours(bc[j], u[j], &o[j]);
			a->n += (double)o[j].n;
			a->o_builds += (double)o[j].builds;
			if (o[j].builds > a->o_max)
				a->o_max = (unsigned int)o[j].builds;
			a->o_odc += (double)o[j].odc;
			a->o_right += o[j].right;
		}
		memset(t, 0, sizeof(t));
		if (pl) {
			char *cb = xasprintf("%s/case%zu", base, i);

			if (mkdir(cb, 0755)) {
				perror(cb);
				return 1;
			}
			fprintf(stderr, "bench_config_bisect: %s\n", a->name);
			fflush(stdout);
			theirs_all(bc, u, pl, self, cb, t);
			free(cb);
		}
		for (size_t k = 0; pl && k < NRUNS; k++) {
			const struct theirs *f = &t[k].first;

			a->t_builds += f->builds;
			a->t_max = f->builds > a->t_max ? f->builds : a->t_max;
			a->t_odc += f->odc;
			a->t_right += f->right;
			a->t_ok += (unsigned int)f->ok;
			if (!f->right) {
				char s[288];

				snprintf(s, sizeof(s), "%s (%s)", f->answer,
					 !f->ok ? "no answer" :
					 f->fails ? "fails, wrong set" : "passes");
				tally_add(a->wrong, s);
			}
			a->c_end[t[k].end]++;
			if (t[k].end == CH_RIGHT) {
				a->c_right++;
				a->c_builds += t[k].builds;
				a->c_max = t[k].builds > a->c_max ? t[k].builds : a->c_max;
				a->c_odc += t[k].odc;
				a->c_rounds += t[k].rounds;
			} else {
				char s[288];

				snprintf(s, sizeof(s), "%s%s",
					 t[k].end == CH_NOAPPLY ? "does not hold: " : "",
					 t[k].why);
				tally_add(a->never, s);
			}
		}
		row(a, pl != NULL);
		for (size_t j = 0; verbose && j < NINST; j++)
			printf("    instance %zu: expect %s; ours %zu builds: %s (%zu inferred, fails %s)\n",
			       j, bc[j]->expect, o[j].builds, o[j].answer,
			       o[j].inferred, o[j].fails ? "yes" : "no");
		for (size_t k = 0; pl && verbose && k < NRUNS; k++) {
			const struct theirs *f = &t[k].first;

			printf("    instance %zu seed %zu: one run %u builds, %u odc, exit %d: %s%s; to a right answer: %u rounds, %u builds, %u odc: %s: %s\n",
			       k / NSEED, k % NSEED + 1, f->builds, f->odc,
			       f->rc, f->answer,
			       f->right ? "" : f->fails ? " (wrong set)" :
			       " (passes)", t[k].rounds, t[k].builds,
			       t[k].odc, end_name[t[k].end], t[k].why);
		}
		fflush(stdout);
		for (size_t j = 0; j < NINST; j++) {
			kcsim_free(u[j]);
			bcase_free(bc[j]);
		}
	}
	if (pl) {
		printf("\nours beside ktest.pl to a right answer (builds):\n");
		for (size_t i = 0; i < NCASES; i++)
			summary(&aggs[i]);
		printf("\nwhat ktest.pl reported when wrong (one run: \"-X\": not in good, \"+X\":\n"
		       "not in bad), and why runs never reached a right answer (the changes\n"
		       "found, or those that did not hold):\n");
		for (size_t i = 0; i < NCASES; i++)
			notes(&aggs[i]);
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
