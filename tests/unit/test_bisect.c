// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bisect state machine against git's algorithm (git 2.39 bisect.c).
 *
 * Hand-checked cases derive git's picks step by step in their comments.
 * The property tests run thousands of random DAGs and compare every pick
 * with ref_pick(), a second implementation written the plain way: the
 * candidates walked afresh from the bad and the goods at every step, every
 * weight counted by an explicit walk, git's loops transcribed literally
 * (its float sqrti() too). A failure prints the seed; KTEST_SEED=n reruns
 * that one.
 *
 * Linked with bisect.o, patchcheck.o and strmap.o only: no git, no I/O.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest/bisect.h"

#define NONE UINT32_MAX

/* ---- graphs ---- */

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/*
 * n commits, nodes[0] the bad one; ids look like SHA-1s and sort in an
 * order unrelated to the graph (git breaks ties by id).
 */
static struct kb_graph *graph_new(size_t n)
{
	struct kb_graph *g = calloc(1, sizeof(*g));
	size_t i;

	g->n = n;
	g->nodes = calloc(n ? n : 1, sizeof(*g->nodes));
	for (i = 0; i < n; i++)
		snprintf(g->nodes[i].id, KB_ID_LEN, "%08x%024x%08x",
			 mix((uint32_t)i + 1), 0u, (unsigned)i);
	return g;
}

static void add_parent(struct kb_graph *g, uint32_t x, uint32_t p)
{
	struct kb_node *c = &g->nodes[x];

	c->parents = realloc(c->parents,
			     (c->nparents + 1) * sizeof(*c->parents));
	c->parents[c->nparents++] = p;
}

static void graph_free(struct kb_graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->nodes[i].parents);
	free(g->nodes);
	free(g);
}

/* A chain named by the letters of names, newest (bad) first. */
static struct kb_graph *chain_named(const char *names)
{
	size_t i, n = strlen(names);
	struct kb_graph *g = graph_new(n);

	for (i = 0; i < n; i++) {
		snprintf(g->nodes[i].id, KB_ID_LEN, "%c", names[i]);
		if (i + 1 < n)
			add_parent(g, (uint32_t)i, (uint32_t)i + 1);
	}
	return g;
}

static struct kb_graph *chain(size_t n)
{
	struct kb_graph *g = graph_new(n);
	size_t i;

	for (i = 0; i + 1 < n; i++)
		add_parent(g, (uint32_t)i, (uint32_t)i + 1);
	return g;
}

static uint32_t index_of(const struct kb_graph *g, const char *id)
{
	size_t i;

	if (!id)
		return NONE;
	for (i = 0; i < g->n; i++)
		if (!strcmp(g->nodes[i].id, id))
			return (uint32_t)i;
	return NONE;
}

static const char *good0[] = { "g00d" };

/* ---- a seeded PRNG (xorshift64) ---- */

static uint64_t rng;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(xorshift() % n) : 0;
}

static void seed(uint64_t s)
{
	rng = s * 0x9e3779b97f4a7c15ULL + 1;
	xorshift();
}

/*
 * A random history of n commits: every commit j > 0 is a parent of one of
 * the few commits listed just before it (so all of them are reachable from
 * the bad one), merge_pct of them get one more parent further down,
 * parents come in random order (first parents vary), ts_pct are treesame
 * (merges too only if ts_merges), and swaps adjacent commits trade places
 * in the list (out-of-order commit dates: git then needs several passes).
 */
static struct kb_graph *random_dag(size_t n, unsigned merge_pct,
				   unsigned ts_pct, bool ts_merges,
				   unsigned swaps)
{
	struct kb_graph *g = graph_new(n), *h;
	uint32_t *pos2old, *old2pos, i, j, k;

	for (j = 1; j < n; j++) {
		uint32_t spread = j < 4 ? j : 4;

		add_parent(g, j - 1 - rnd(spread), j);
	}
	for (i = 0; i + 2 < n; i++) {
		uint32_t p, room = (uint32_t)n - 1 - i, far;

		if (rnd(100) >= merge_pct)
			continue;
		far = rnd(4) ? (room < 8 ? room : 8) : room;
		p = i + 1 + rnd(far);
		for (k = 0; k < g->nodes[i].nparents; k++)
			if (g->nodes[i].parents[k] == p)
				break;
		if (k == g->nodes[i].nparents)
			add_parent(g, i, p);
	}
	for (i = 0; i < n; i++) {
		struct kb_node *c = &g->nodes[i];

		for (k = c->nparents; k > 1; k--) {
			uint32_t r = rnd(k), t = c->parents[k - 1];

			c->parents[k - 1] = c->parents[r];
			c->parents[r] = t;
		}
		if (rnd(100) < ts_pct && (ts_merges || c->nparents < 2))
			c->treesame = true;
	}
	if (!swaps || n < 3)
		return g;

	pos2old = malloc(n * sizeof(*pos2old));
	old2pos = malloc(n * sizeof(*old2pos));
	for (i = 0; i < n; i++)
		pos2old[i] = i;
	for (k = 0; k < swaps; k++) {
		uint32_t a = 1 + rnd((uint32_t)n - 2), t = pos2old[a];

		pos2old[a] = pos2old[a + 1];
		pos2old[a + 1] = t;
	}
	for (i = 0; i < n; i++)
		old2pos[pos2old[i]] = i;
	h = graph_new(n);
	for (i = 0; i < n; i++) {
		const struct kb_node *c = &g->nodes[pos2old[i]];

		h->nodes[i].treesame = c->treesame;
		for (k = 0; k < c->nparents; k++)
			add_parent(h, i, old2pos[c->parents[k]]);
	}
	free(pos2old);
	free(old2pos);
	graph_free(g);
	return h;
}

/* ---- the reference: git's bisect_next_all(), transcribed plainly ---- */

/* What from reaches (itself included), through first parents if fp. */
static bool *ref_reach(const struct kb_graph *g, const uint32_t *from,
		       size_t nfrom, bool fp, const bool *within)
{
	bool *seen = calloc(g->n + 1, sizeof(*seen));
	uint32_t *stack = malloc((g->n + 1) * sizeof(*stack));
	size_t sp = 0, i;

	for (i = 0; i < nfrom; i++) {
		if (!seen[from[i]]) {
			seen[from[i]] = true;
			stack[sp++] = from[i];
		}
	}
	while (sp) {
		const struct kb_node *c = &g->nodes[stack[--sp]];

		for (i = 0; i < c->nparents; i++) {
			uint32_t p = c->parents[i];

			if (fp && i)
				break;
			if (seen[p] || (within && !within[p]))
				continue;
			seen[p] = true;
			stack[sp++] = p;
		}
	}
	free(stack);
	return seen;
}

struct ref_state {
	uint32_t bad;
	bool *good;		/* marked good */
	bool *skip;		/* marked skip */
	bool any_skip;
	bool fp;
};

struct ref_result {
	enum kb_kind kind;
	uint32_t pick;
	long left;
	int steps;
	uint32_t only[512];
	size_t nonly;
};

/* git's candidates, from scratch: reach(bad) minus reach(goods) */
static bool *ref_candidates(const struct kb_graph *g,
			    const struct ref_state *st)
{
	uint32_t *goods = calloc(g->n + 1, sizeof(*goods));
	bool *in, *out;
	size_t i, ng = 0;

	for (i = 0; i < g->n; i++)
		if (st->good[i])
			goods[ng++] = (uint32_t)i;
	in = ref_reach(g, &st->bad, 1, st->fp, NULL);
	out = ref_reach(g, goods, ng, false, NULL);
	for (i = 0; i < g->n; i++)
		in[i] = in[i] && !out[i];
	free(goods);
	free(out);
	return in;
}

/* count_distance(): the non-treesame candidates x reaches */
static long ref_count(const struct kb_graph *g, const bool *in, uint32_t x,
		      bool fp)
{
	bool *seen = ref_reach(g, &x, 1, fp, in);
	long count = 0;
	size_t i;

	for (i = 0; i < g->n; i++)
		if (seen[i] && in[i] && !g->nodes[i].treesame)
			count++;
	free(seen);
	return count;
}

/* git's float Newton sqrti(), as written there */
static int git_sqrti(int val)
{
	float d, x = (float)val;

	if (!val)
		return 0;
	do {
		float y = (x + (float)val / x) / 2;

		d = (y > x) ? y - x : x - y;
		x = y;
	} while (d >= 0.5);
	return (int)x;
}

static unsigned git_get_prn(unsigned count)
{
	count = count * 1103515245 + 12345;
	return (count / 65536) % 32768;
}

static int git_estimate(int all)
{
	int n = 0;

	if (all < 3)
		return 0;
	while ((2 << n) <= all)
		n++;
	return ((1 << n) < 3 * (all - (1 << n))) ? n : n - 1;
}

struct ref_dist {
	uint32_t x;
	long d;
	const char *id;
};

static int ref_cmp(const void *pa, const void *pb)
{
	const struct ref_dist *a = pa, *b = pb;

	if (a->d != b->d)
		return b->d > a->d ? 1 : -1;
	return strcmp(a->id, b->id);
}

static void ref_pick(const struct kb_graph *g, const struct ref_state *st,
		     struct ref_result *res)
{
	size_t n = g->n, i, nlist = 0;
	bool *in = ref_candidates(g, st);
	uint32_t *list = malloc((n + 1) * sizeof(*list));
	long *w = calloc(n + 1, sizeof(*w));
	long nr = 0, counted = 0, reaches;
	uint32_t hit = NONE, best = NONE;
	bool all = st->any_skip;

	memset(res, 0, sizeof(*res));
	res->pick = NONE;
	/* find_bisection(): the list reversed, oldest first */
	for (i = n; i-- > 0;) {
		if (!in[i])
			continue;
		list[nlist++] = (uint32_t)i;
		if (!g->nodes[i].treesame)
			nr++;
	}

#define HALFWAY(x) (!g->nodes[x].treesame && \
		    (labs(2 * w[x] - nr) <= 1 || \
		     labs(2 * w[x] - nr) < nr / 1024))
	for (i = 0; i < nlist; i++) {
		const struct kb_node *c = &g->nodes[list[i]];
		unsigned k, cnt = 0;

		for (k = 0; k < c->nparents; k++) {
			if (in[c->parents[k]])
				cnt++;
			if (st->fp)
				break;
		}
		if (cnt == 0) {
			w[list[i]] = c->treesame ? 0 : 1;
			counted += !c->treesame;
		} else {
			w[list[i]] = cnt == 1 ? -1 : -2;
		}
	}
	for (i = 0; i < nlist; i++) {
		uint32_t x = list[i];

		if (w[x] != -2)
			continue;
		w[x] = ref_count(g, in, x, false);
		if (!all && HALFWAY(x)) {
			hit = x;
			goto done;
		}
		counted++;
	}
	while (counted < nr) {
		bool progress = false;

		for (i = 0; i < nlist; i++) {
			uint32_t x = list[i];
			const struct kb_node *c = &g->nodes[x];
			unsigned k;

			if (w[x] >= 0)
				continue;
			for (k = 0; k < c->nparents; k++) {
				if (st->fp && k)
					break;
				if (in[c->parents[k]] && w[c->parents[k]] >= 0)
					break;
			}
			if (k == c->nparents || (st->fp && k))
				continue;
			progress = true;
			w[x] = ref_count(g, in, x, st->fp);
			counted += !c->treesame;
			if (!all && HALFWAY(x)) {
				hit = x;
				goto done;
			}
		}
		assert_true(progress);
	}
done:
	if (!all) {
		/* best_bisection() */
		long best_d = -1;

		best = hit;
		if (best == NONE) {
			best = nlist ? list[0] : NONE;
			for (i = 0; i < nlist; i++) {
				long d = w[list[i]];

				if (g->nodes[list[i]].treesame)
					continue;
				if (nr - d < d)
					d = nr - d;
				if (d > best_d) {
					best_d = d;
					best = list[i];
				}
			}
		}
		reaches = best != NONE ? w[best] : 0;
		res->pick = best;
	} else {
		/* best_bisection_sorted(), managed_skipped() */
		struct ref_dist *a = calloc(nlist + 1, sizeof(*a));
		size_t cnt = 0, count = 0;
		uint32_t *filtered = malloc((nlist + 1) * sizeof(*filtered));

		for (i = 0; i < nlist; i++) {
			long d = w[list[i]];

			if (g->nodes[list[i]].treesame)
				continue;
			if (nr - d < d)
				d = nr - d;
			a[cnt].x = list[i];
			a[cnt].d = d;
			a[cnt].id = g->nodes[list[i]].id;
			cnt++;
		}
		qsort(a, cnt, sizeof(*a), ref_cmp);
		if (!cnt) {
			a[0].x = list[0];
			cnt = 1;
		}
		reaches = w[a[0].x];
		if (!st->skip[a[0].x]) {
			res->pick = a[0].x;
		} else {
			for (i = 0; i < cnt; i++) {
				if (st->skip[a[i].x])
					res->only[res->nonly++] = a[i].x;
				else
					filtered[count++] = a[i].x;
			}
			/* skip_away() */
			if (count) {
				int prn = (int)git_get_prn((unsigned)count);
				int index = ((int)count * prn / 32768) *
					    git_sqrti(prn) / git_sqrti(32768);

				res->pick = filtered[0];
				if (index >= 0 && (size_t)index < count) {
					if (filtered[index] != st->bad)
						res->pick = filtered[index];
					else if (index)
						res->pick = filtered[index - 1];
				}
			}
		}
		free(filtered);
		free(a);
	}
#undef HALFWAY

	if (res->pick == NONE) {
		res->kind = res->nonly ? KB_ONLY_SKIPPED : KB_FAILED;
	} else if (!nr) {
		res->kind = KB_FAILED;
	} else if (res->pick == st->bad) {
		if (res->nonly) {
			res->only[res->nonly++] = st->bad;
			res->kind = KB_ONLY_SKIPPED;
		} else {
			res->kind = KB_FOUND;
		}
	} else {
		res->kind = KB_TEST;
		res->left = nr - reaches - 1;
		res->steps = git_estimate((int)nr);
	}
	free(list);
	free(w);
	free(in);
}

/* ---- driving a bisect ---- */

/* The world: a commit is bad iff it reaches a culprit. */
static bool *bad_set(const struct kb_graph *g, const bool *culprit)
{
	bool *bad = calloc(g->n + 1, sizeof(*bad));
	size_t i, j;

	for (i = 0; i < g->n; i++) {
		uint32_t x = (uint32_t)i;
		bool *r = ref_reach(g, &x, 1, false, NULL);

		for (j = 0; j < g->n && !bad[i]; j++)
			bad[i] = r[j] && culprit[j];
		free(r);
	}
	return bad;
}

/* A first bad commit: bad, and its parents (the first one, fp) good. */
static bool first_bad(const struct kb_graph *g, const bool *bad, uint32_t x,
		      bool fp)
{
	const struct kb_node *c = &g->nodes[x];
	size_t i;

	if (!bad[x])
		return false;
	for (i = 0; i < c->nparents && !(fp && i); i++)
		if (bad[c->parents[i]])
			return false;
	return true;
}

struct run {
	enum kb_kind kind;
	uint32_t found;
	size_t steps;
	size_t rounds;
	const char **only;
	size_t nonly;
	uint32_t picks[64];
};

static enum kb_verdict verdict(const bool *bad, const bool *untestable,
			       uint32_t x)
{
	if (untestable && untestable[x])
		return KB_SKIP;
	return bad[x] ? KB_BAD : KB_GOOD;
}

static void fail_seed(uint64_t s, const char *what)
{
	print_error("seed %llu: %s\n", (unsigned long long)s, what);
	fail();
}

/*
 * One commit at a time, as git bisect does; with compare, every step is
 * checked against ref_pick() on the same verdicts.
 */
static void run_seq(const struct kb_graph *g, const struct kb_options *o,
		    const bool *bad, const bool *untestable, bool compare,
		    uint64_t s, struct run *out)
{
	char why[256];
	struct kbisect *b = kbisect_new(g, good0, 1, o, why, sizeof(why));
	struct ref_state st = { 0 };
	struct ref_result ref;
	struct kb_step step;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!b)
		fail_seed(s, why);
	st.good = calloc(g->n + 1, sizeof(bool));
	st.skip = calloc(g->n + 1, sizeof(bool));
	st.fp = o && o->first_parent;
	for (;;) {
		uint32_t x;

		kbisect_next(b, &step, 1, &n);
		assert_int_equal(n, 1);
		if (compare) {
			ref_pick(g, &st, &ref);
			if (ref.kind != step.kind)
				fail_seed(s, "kind differs from git's");
			if (ref.kind == KB_TEST || ref.kind == KB_FOUND) {
				if (index_of(g, step.id) != ref.pick) {
					print_error("step %zu: %s, git: %s\n",
						    out->steps, step.id,
						    g->nodes[ref.pick].id);
					fail_seed(s, "pick differs from git's");
				}
			}
			if (ref.kind == KB_TEST &&
			    ((long)step.left != (ref.left > 0 ? ref.left : 0) ||
			     step.steps != ref.steps))
				fail_seed(s, "left/steps differ from git's");
		}
		if (step.kind != KB_TEST)
			break;
		x = index_of(g, step.id);
		assert_int_not_equal(x, NONE);
		if (out->steps < 64)
			out->picks[out->steps] = x;
		out->steps++;
		if (out->steps > g->n + 2)
			fail_seed(s, "no end");
		switch (verdict(bad, untestable, x)) {
		case KB_GOOD:
			st.good[x] = true;
			break;
		case KB_BAD:
			st.bad = x;
			break;
		case KB_SKIP:
			st.skip[x] = true;
			st.any_skip = true;
			break;
		}
		if (kbisect_mark(b, step.id, verdict(bad, untestable, x), why,
				 sizeof(why)))
			fail_seed(s, why);
	}
	out->kind = step.kind;
	out->found = index_of(g, step.id);
	if (step.kind == KB_ONLY_SKIPPED) {
		const char **ids;
		size_t i;

		out->nonly = kbisect_candidates(b, &ids);
		if (compare) {
			if (out->nonly != ref.nonly)
				fail_seed(s, "only-skipped list differs");
			for (i = 0; i < ref.nonly; i++)
				if (index_of(g, ids[i]) != ref.only[i])
					fail_seed(s, "only-skipped differs");
		}
		out->only = malloc((out->nonly + 1) * sizeof(*out->only));
		memcpy(out->only, ids, out->nonly * sizeof(*ids));
	}
	free(st.good);
	free(st.skip);
	kbisect_free(b);
}

static void run_free(struct run *r)
{
	free(r->only);
	r->only = NULL;
}

/* The outcome must name a first bad commit, or list one. */
static void check_outcome(const struct kb_graph *g, const bool *bad,
			  bool fp, const struct run *r, uint64_t s)
{
	size_t i;

	if (r->kind == KB_FOUND) {
		if (!first_bad(g, bad, r->found, fp))
			fail_seed(s, "found a commit that is not first bad");
		return;
	}
	if (r->kind != KB_ONLY_SKIPPED)
		fail_seed(s, "neither found nor only skipped");
	for (i = 0; i < r->nonly; i++)
		if (first_bad(g, bad, index_of(g, r->only[i]), fp))
			return;
	fail_seed(s, "the skipped candidates miss the first bad commit");
}

static int ceil_log(size_t n, size_t base)
{
	size_t p = 1;
	int k = 0;

	while (p < n) {
		p *= base;
		k++;
	}
	return k;
}

/* ---- hand-checked picks ---- */

static void expect_test(struct kbisect *b, const char *id, size_t left,
			int steps)
{
	struct kb_step s;
	size_t n;

	kbisect_next(b, &s, 1, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s.kind, KB_TEST);
	assert_string_equal(s.id, id);
	assert_int_equal(s.left, left);
	assert_int_equal(s.steps, steps);
}

static void expect_kind(struct kbisect *b, enum kb_kind kind, const char *id)
{
	struct kb_step s;
	size_t n;

	kbisect_next(b, &s, 1, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s.kind, kind);
	if (id)
		assert_string_equal(s.id, id);
}

static void mark(struct kbisect *b, const char *id, enum kb_verdict v)
{
	char why[256];

	if (kbisect_mark(b, id, v, why, sizeof(why)))
		fail_msg("mark %s: %s", id, why);
}

/*
 * A chain of 8, h bad (newest), a oldest, every commit testable. Oldest
 * first the weights are a=1 .. h=8 (nr 8). git gives a its weight at
 * setup (no interesting parent), then walks: b=2 (2*2-8=-4), c=3 (-2),
 * d=4: 2*4-8=0, halfway, so d is returned at once. git says "3 revisions
 * left to test after this (roughly 2 steps)": 8 - 4 - 1, and
 * estimate_bisect_steps(8): 2^3=8, x=0, 8 < 0 is false so 3-1 = 2.
 *
 * Culprit c: d is bad, so {a,b,c,d}, nr 4: a=1, b=2 (2*2-4=0) -> b;
 * b good leaves {c,d}: c=1, d=2 (2*2-2=2, not halfway), best_bisection:
 * c min(1,1)=1 beats d min(2,0)=0 -> c; c bad leaves {c}: best is c, the
 * bad one itself: c is the first bad commit.
 */
static void test_chain8_sequence(void **state)
{
	static const struct {
		char culprit;
		const char *picks;
	} want[] = {
		{ 'a', "dba" }, { 'b', "dba" }, { 'c', "dbc" }, { 'd', "dbc" },
		{ 'e', "dfe" }, { 'f', "dfe" }, { 'g', "dfg" }, { 'h', "dfg" },
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct kb_graph *g = chain_named("hgfedcba");
		struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
		const char *p;

		assert_non_null(b);
		assert_int_equal(kbisect_remaining(b), 8);
		for (p = want[i].picks; *p; p++) {
			struct kb_step s;
			char id[2] = { *p, 0 };
			size_t n;

			kbisect_next(b, &s, 1, &n);
			assert_int_equal(s.kind, KB_TEST);
			assert_string_equal(s.id, id);
			if (p == want[i].picks) {
				assert_int_equal(s.left, 3);
				assert_int_equal(s.steps, 2);
			}
			mark(b, id, *p >= want[i].culprit ? KB_BAD : KB_GOOD);
		}
		{
			char id[2] = { want[i].culprit, 0 };

			expect_kind(b, KB_FOUND, id);
			assert_string_equal(kbisect_bad(b), id);
		}
		kbisect_free(b);
		graph_free(g);
	}
}

/*
 * bad -> M (merge of X2 and Y1) ; X2 -> X1 -> base ; Y1 -> base.
 * Listed newest first: bad M X2 X1 Y1 base; oldest first: base Y1 X1 X2
 * M bad, nr 6. Setup: base=1 (counted 1), M=-2, the others -1.
 * count_distance(M) = {M X2 X1 Y1 base} = 5: 2*5-6=4, not halfway.
 * Then the pass: Y1=2 (-2), X1=2 (-2), X2=3: 2*3-6=0, halfway: X2,
 * "2 revisions left (roughly 2 steps)".
 *
 * Culprit Y1: X2 good leaves {bad M Y1}: Y1=1, M=2 (4-3=1, halfway) ->
 * M; M bad leaves {M Y1}: Y1=1, M=2, best Y1; Y1 bad -> found.
 * Culprit X1: X2 bad leaves {X2 X1 base}: base=1, X1=2 (halfway) -> X1;
 * X1 bad leaves {X1 base}: best base; base good -> X1 found.
 */
static struct kb_graph *merge6(void)
{
	static const char *names[] = { "bad", "M", "X2", "X1", "Y1", "base" };
	struct kb_graph *g = graph_new(6);
	size_t i;

	for (i = 0; i < 6; i++)
		snprintf(g->nodes[i].id, KB_ID_LEN, "%s", names[i]);
	add_parent(g, 0, 1);
	add_parent(g, 1, 2);
	add_parent(g, 1, 4);
	add_parent(g, 2, 3);
	add_parent(g, 3, 5);
	add_parent(g, 4, 5);
	return g;
}

static void test_merge_sequence(void **state)
{
	struct kb_graph *g = merge6();
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);

	expect_test(b, "X2", 2, 2);
	mark(b, "X2", KB_GOOD);
	expect_test(b, "M", 0, 1);
	mark(b, "M", KB_BAD);
	expect_test(b, "Y1", 0, 0);
	mark(b, "Y1", KB_BAD);
	expect_kind(b, KB_FOUND, "Y1");
	kbisect_free(b);

	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	expect_test(b, "X2", 2, 2);
	mark(b, "X2", KB_BAD);
	expect_test(b, "X1", 0, 1);
	mark(b, "X1", KB_BAD);
	expect_test(b, "base", 0, 0);
	mark(b, "base", KB_GOOD);
	expect_kind(b, KB_FOUND, "X1");
	kbisect_free(b);
	graph_free(g);
}

/*
 * Path-limited: h g f e d c b a with g, e, c treesame. nr counts h f d b
 * a = 5. Oldest first: a=1 at setup; b=2: 2*2-5=-1, halfway -> b, "2
 * left (roughly 1 step)" (estimate(5): 4 < 3*1 is false, 2-1).
 * Culprit d: b good leaves c..h, nr 3 (d f h). c has no interesting
 * parent and is treesame: weight 0, not counted. d = 0+1 = 1: 2-3=-1,
 * halfway -> d. d bad leaves {d, c}, nr 1: d=1, 2-1=1 halfway, and d is
 * the bad one: found.
 */
static void test_treesame_sequence(void **state)
{
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b;

	g->nodes[1].treesame = g->nodes[3].treesame = true;
	g->nodes[5].treesame = true;
	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	assert_int_equal(kbisect_remaining(b), 5);
	expect_test(b, "b", 2, 1);
	mark(b, "b", KB_GOOD);
	expect_test(b, "d", 1, 1);
	mark(b, "d", KB_BAD);
	expect_kind(b, KB_FOUND, "d");
	kbisect_free(b);
	graph_free(g);
}

/*
 * A treesame bad commit: h (treesame) -> g. nr 1, g weighs 1, best g
 * (distance min(1, 0) = 0 beats -1). g good leaves only h, nothing
 * countable: git says "No testable commit found".
 */
static void test_treesame_bad_no_testable(void **state)
{
	struct kb_graph *g = chain_named("hg");
	struct kbisect *b;
	struct kb_step s;
	size_t n;

	g->nodes[0].treesame = true;
	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	expect_test(b, "g", 0, 0);
	mark(b, "g", KB_GOOD);
	kbisect_next(b, &s, 1, &n);
	assert_int_equal(s.kind, KB_FAILED);
	assert_non_null(strstr(s.why, "No testable commit found"));
	kbisect_free(b);
	graph_free(g);
}

/*
 * Skipping git's pick in the chain of 8: d is skipped, so git sorts every
 * candidate by distance min(w, 8-w), ties by id: d(4) c(3) e(3) b(2)
 * f(2) a(1) g(1) h(0). d heads it and is skipped: skip_away() over the
 * other 7. get_prn(7): 7*1103515245+12345 = 7724619060, mod 2^32 =
 * 3429651764, /65536 = 52332, %32768 = 19564. index = (7*19564/32768 =
 * 4) * sqrti(19564) / sqrti(32768) = 4*139/181 = 3: c e b [f] -> f.
 * "left" uses the weight of the list's head, the skipped d: 8-4-1 = 3.
 */
static void test_skip_away(void **state)
{
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);

	assert_int_equal(git_get_prn(7), 19564);
	expect_test(b, "d", 3, 2);
	mark(b, "d", KB_SKIP);
	expect_test(b, "f", 3, 2);
	kbisect_free(b);
	graph_free(g);
}

/*
 * Skip everything in d c b a (d bad). b first (w 2 of 4). Skip b:
 * sorted b(2) a(1) c(1) d(0); filtered a c d, get_prn(3) = 17747, index
 * (3*17747/32768 = 1) * 133 / 181 = 0 -> a. Skip a: filtered c d,
 * get_prn(2) = 908, index 0 -> c ("left" is 4 - w(b) - 1 = 1 each time,
 * the steps estimate(4) = 1). Skip c: filtered d, index 0 is the bad
 * one with nothing before it, so d itself: only skipped commits left,
 * "could be any of" b a c (sorted order) and d.
 */
static void test_only_skipped(void **state)
{
	struct kb_graph *g = chain_named("dcba");
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	const char **ids;
	struct kb_step s;
	size_t n;

	expect_test(b, "b", 1, 1);
	mark(b, "b", KB_SKIP);
	expect_test(b, "a", 1, 1);
	mark(b, "a", KB_SKIP);
	expect_test(b, "c", 1, 1);
	mark(b, "c", KB_SKIP);
	kbisect_next(b, &s, 1, &n);
	assert_int_equal(s.kind, KB_ONLY_SKIPPED);
	assert_int_equal(kbisect_candidates(b, &ids), 4);
	assert_string_equal(ids[0], "b");
	assert_string_equal(ids[1], "a");
	assert_string_equal(ids[2], "c");
	assert_string_equal(ids[3], "d");

	/* a skipped commit that turns out good after all: bisect goes on */
	mark(b, "b", KB_GOOD);
	assert_int_equal(kbisect_candidates(b, &ids), 0);
	kbisect_next(b, &s, 1, &n);
	assert_int_equal(s.kind, KB_ONLY_SKIPPED);
	assert_int_equal(kbisect_candidates(b, &ids), 2);
	assert_string_equal(ids[0], "c");
	assert_string_equal(ids[1], "d");
	kbisect_free(b);
	graph_free(g);
}

/*
 * git's skip_away() computes count * prn in int: past 65535 candidates it
 * wraps. A chain of 70001 (nr 70001). The first pick is the first weight
 * within 0.1% of the half: |2w - 70001| < 70001/1024 = 68 first holds at
 * w = 34967, commit 35034. Skipping it puts git in its sorted mode, whose
 * head (distance 35000: w 35000 or 35001, the smaller id) is not skipped,
 * so that comes next; skipping it too makes skip_away() run over the
 * 69999 others, with the index computed the way git's compiled code does.
 */
static void test_skip_away_wraps(void **state)
{
	size_t n = 70001, i, k = 0, count = 0;
	struct kb_graph *g = chain(n);
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	struct ref_dist *a = calloc(n, sizeof(*a));
	uint32_t prn, first, second, pick;
	int32_t index;
	struct kb_step s;
	size_t got;

	kbisect_next(b, &s, 1, &got);
	first = index_of(g, s.id);
	assert_int_equal(first, 35034);
	assert_int_equal(s.left, n - 34967 - 1);
	mark(b, s.id, KB_SKIP);
	for (i = 0; i < n; i++) {
		long w = (long)(n - i);

		a[k].x = (uint32_t)i;
		a[k].d = w < (long)n - w ? w : (long)n - w;
		a[k].id = g->nodes[i].id;
		k++;
	}
	qsort(a, k, sizeof(*a), ref_cmp);
	kbisect_next(b, &s, 1, &got);
	second = index_of(g, s.id);
	assert_int_equal(second, a[0].x);
	mark(b, s.id, KB_SKIP);

	for (i = 0; i < k; i++)
		if (a[i].x != first && a[i].x != second)
			a[count++] = a[i];
	assert_int_equal(count, 69999);
	prn = git_get_prn((unsigned)count);
	index = (int32_t)((uint32_t)count * prn);
	index = index / 32768 * git_sqrti((int)prn) / git_sqrti(32768);
	if (index < 0 || (size_t)index >= count)
		pick = a[0].x;
	else if (a[index].x != 0)
		pick = a[index].x;
	else
		pick = index ? a[index - 1].x : a[0].x;
	kbisect_next(b, &s, 1, &got);
	assert_int_equal(s.kind, KB_TEST);
	assert_string_equal(s.id, g->nodes[pick].id);
	print_message("skip_away over %zu: prn %u, index %d\n", count, prn,
		      index);
	free(a);
	kbisect_free(b);
	graph_free(g);
}

/* git's float sqrti() is the integer square root where it is used. */
static void test_sqrti(void **state)
{
	int v, r = 0;

	for (v = 0; v <= 32768; v++) {
		while ((r + 1) * (r + 1) <= v)
			r++;
		assert_int_equal(git_sqrti(v), r);
	}
}

static void test_estimate_steps(void **state)
{
	size_t n;

	for (n = 0; n < 5000; n++)
		assert_int_equal(kbisect_estimate_steps(n),
				 git_estimate((int)n));
	/* git's own doc example: 1024 commits, ~10 steps, 1500 ~10 too */
	assert_int_equal(kbisect_estimate_steps(1024), 9);
	assert_int_equal(kbisect_estimate_steps(1500), 10);
}

/* ---- structured graphs, every culprit, against the reference ---- */

static void every_culprit(const struct kb_graph *g, const struct kb_options *o,
			  uint64_t s)
{
	bool *culprit = calloc(g->n + 1, sizeof(bool));
	size_t c;

	for (c = 0; c < g->n; c++) {
		struct run r;
		bool *bad;

		if (g->nodes[c].treesame)
			continue;
		culprit[c] = true;
		bad = bad_set(g, culprit);
		run_seq(g, o, bad, NULL, true, s + c, &r);
		check_outcome(g, bad, o && o->first_parent, &r, s + c);
		if (r.kind == KB_FOUND && !(o && o->first_parent))
			assert_int_equal(r.found, c);
		run_free(&r);
		free(bad);
		culprit[c] = false;
	}
	free(culprit);
}

static void test_linear_every_culprit(void **state)
{
	size_t n;

	for (n = 1; n <= 70; n++) {
		struct kb_graph *g = chain(n);
		bool *culprit = calloc(n, sizeof(bool));
		size_t c;

		every_culprit(g, NULL, n);
		/* steps: at most ceil(log2 n) (git halves a chain exactly) */
		for (c = 0; c < n; c++) {
			struct run r;
			bool *bad;

			culprit[c] = true;
			bad = bad_set(g, culprit);
			run_seq(g, NULL, bad, NULL, false, n, &r);
			assert_true(r.steps <= (size_t)ceil_log(n, 2));
			culprit[c] = false;
			free(bad);
		}
		free(culprit);
		graph_free(g);
	}
}

/* A mainline with a topic branch merged every few commits. */
static struct kb_graph *topic_merges(size_t n)
{
	struct kb_graph *g = graph_new(n);
	uint32_t i;

	for (i = 0; i + 1 < n; i++) {
		add_parent(g, i, i + 1);
		if (i % 5 == 0 && i + 4 < n)
			add_parent(g, i, i + 4);
	}
	return g;
}

/* Criss-cross: two branches that keep merging each other. */
static struct kb_graph *criss_cross(size_t pairs)
{
	size_t n = 2 * pairs + 1;
	struct kb_graph *g = graph_new(n);
	uint32_t k;

	/* 0 merges both tips; A_k = 1 + 2k, B_k = 2 + 2k, k = 0 newest */
	add_parent(g, 0, 1);
	add_parent(g, 0, 2);
	for (k = 0; k + 1 < pairs; k++) {
		add_parent(g, 1 + 2 * k, 3 + 2 * k);
		add_parent(g, 1 + 2 * k, 4 + 2 * k);
		add_parent(g, 2 + 2 * k, 4 + 2 * k);
		add_parent(g, 2 + 2 * k, 3 + 2 * k);
	}
	return g;
}

static void test_merges_every_culprit(void **state)
{
	size_t n;

	for (n = 2; n <= 40; n += 3) {
		struct kb_graph *g = topic_merges(n);

		every_culprit(g, NULL, 1000 + n);
		graph_free(g);
	}
	for (n = 1; n <= 12; n++) {
		struct kb_graph *g = criss_cross(n);

		every_culprit(g, NULL, 2000 + n);
		graph_free(g);
	}
}

/*
 * Path-limited: treesame commits in chains and merges, and simplified
 * merges (a merge treesame to one parent is listed with that parent only,
 * its side branch gone from the walk).
 */
static void test_path_limited_every_culprit(void **state)
{
	size_t n, i;

	for (n = 2; n <= 40; n += 2) {
		struct kb_graph *g = topic_merges(n);

		for (i = 1; i < n; i++)
			g->nodes[i].treesame = g->nodes[i].nparents < 2 &&
					       (i % 3 == 1);
		every_culprit(g, NULL, 3000 + n);
		graph_free(g);
	}
	for (n = 4; n <= 30; n += 2) {
		struct kb_graph *g = chain(n);

		/* simplified merges: treesame, one parent, nothing beside */
		for (i = 2; i < n; i += 4)
			g->nodes[i].treesame = true;
		every_culprit(g, NULL, 4000 + n);
		graph_free(g);
	}
}

static void test_first_parent_every_culprit(void **state)
{
	struct kb_options o = { .first_parent = true };
	size_t n;

	for (n = 2; n <= 40; n += 3) {
		struct kb_graph *g = topic_merges(n);

		every_culprit(g, &o, 5000 + n);
		graph_free(g);
	}
	for (n = 1; n <= 10; n++) {
		struct kb_graph *g = criss_cross(n);

		every_culprit(g, &o, 6000 + n);
		graph_free(g);
	}
}

/* ---- random histories against the reference ---- */

static uint64_t first_seed(void)
{
	const char *s = getenv("KTEST_SEED");

	return s ? strtoull(s, NULL, 0) : 1;
}

static void random_runs(unsigned count, size_t maxn, bool fp, unsigned ts_pct,
			bool ts_merges, unsigned skip_pct)
{
	struct kb_options o = { .first_parent = fp };
	uint64_t s0 = first_seed();
	unsigned t;

	for (t = 0; t < count; t++) {
		uint64_t s = s0 + t * 7919 + (fp ? 1 : 0) + ts_pct * 31 +
			     skip_pct * 977;
		size_t n, i, nc;
		struct kb_graph *g;
		bool *culprit, *bad, *untestable;
		struct run r;

		unsigned merge_pct, swaps;

		seed(s);
		n = 1 + rnd((uint32_t)maxn);
		merge_pct = rnd(40);
		swaps = rnd(3) ? 0 : rnd(8);
		g = random_dag(n, merge_pct, ts_pct, ts_merges, swaps);
		culprit = calloc(n, sizeof(bool));
		untestable = calloc(n, sizeof(bool));
		nc = 1 + rnd(3);
		for (i = 0; i < nc; i++) {
			uint32_t c = rnd((uint32_t)n);

			if (!g->nodes[c].treesame)
				culprit[c] = true;
		}
		for (i = 1; i < n; i++)
			untestable[i] = rnd(100) < skip_pct;
		bad = bad_set(g, culprit);
		run_seq(g, &o, bad, untestable, true, s, &r);
		/* no culprit (all picks treesame): nothing is bad */
		if (bad[0] && !(ts_merges && ts_pct))
			check_outcome(g, bad, fp, &r, s);
		run_free(&r);
		free(bad);
		free(untestable);
		free(culprit);
		graph_free(g);
	}
}

static void test_random_dags(void **state)
{
	random_runs(2500, 48, false, 0, false, 0);
}

static void test_random_dags_skips(void **state)
{
	random_runs(1500, 48, false, 0, false, 25);
	random_runs(300, 200, false, 0, false, 10);
}

static void test_random_dags_path_limited(void **state)
{
	random_runs(1500, 48, false, 30, false, 10);
	/* treesame merges: git's counted++ quirk, compared, not judged */
	random_runs(800, 30, false, 30, true, 10);
}

static void test_random_dags_first_parent(void **state)
{
	random_runs(1500, 48, true, 0, false, 0);
	random_runs(500, 48, true, 0, false, 25);
}

/* ---- k-ary ---- */

/*
 * A chain of 12 (weights 1..12 oldest first), three boxes: git's pick is
 * w=6 (2*6-12 = 0); the pending pick cuts 0..12 into two gaps of 6; the
 * two slots go one to each, cut at their middles: w=3 and w=9. Those are
 * commits 9 and 3 of the list (newest first, w = 12 - index).
 * Two boxes: the second slot goes to the first gap of the tie: w=3.
 */
static void test_kary_chain12(void **state)
{
	struct kb_graph *g = chain(12);
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	struct kb_step s[4];
	size_t n;

	kbisect_next(b, s, 3, &n);
	assert_int_equal(n, 3);
	assert_int_equal(index_of(g, s[0].id), 6);
	assert_int_equal(index_of(g, s[1].id), 9);
	assert_int_equal(index_of(g, s[2].id), 3);
	assert_int_equal(s[0].left, 5);
	/*
	 * Three more boxes while those run: the four gaps of 3 take one
	 * slot each but the last, cut in the middle: w 2, 5, 8.
	 */
	kbisect_next(b, s, 3, &n);
	assert_int_equal(n, 3);
	assert_int_equal(index_of(g, s[0].id), 10);
	assert_int_equal(index_of(g, s[1].id), 7);
	assert_int_equal(index_of(g, s[2].id), 4);
	/*
	 * Culprit w=5 (commit 7), verdicts out of order: w=9 bad first
	 * (candidates w 1..9), w=3 good (4..9), w=6 bad (4..6).
	 */
	mark(b, g->nodes[3].id, KB_BAD);
	mark(b, g->nodes[9].id, KB_GOOD);
	mark(b, g->nodes[6].id, KB_BAD);
	assert_string_equal(kbisect_bad(b), g->nodes[6].id);
	assert_int_equal(kbisect_remaining(b), 3);
	kbisect_free(b);

	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	kbisect_next(b, s, 2, &n);
	assert_int_equal(n, 2);
	assert_int_equal(index_of(g, s[0].id), 6);
	assert_int_equal(index_of(g, s[1].id), 9);
	/*
	 * w=3 good, one box free while w=6 (now 3 of 9) runs: git's own
	 * pick on the 9 left comes first: 1 2 3 4: 2*4-9 = -1, commit 5.
	 */
	mark(b, s[1].id, KB_GOOD);
	kbisect_next(b, s, 1, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].kind, KB_TEST);
	assert_int_equal(index_of(g, s[0].id), 5);
	kbisect_free(b);
	graph_free(g);

	/* nothing left to hand out: wait */
	g = chain(3);
	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	kbisect_next(b, s, 3, &n);
	assert_int_equal(n, 2);
	assert_int_equal(index_of(g, s[0].id), 1);
	assert_int_equal(index_of(g, s[1].id), 2);
	kbisect_next(b, s, 3, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].kind, KB_WAIT);
	mark(b, g->nodes[2].id, KB_GOOD);
	kbisect_next(b, s, 3, &n);
	assert_int_equal(s[0].kind, KB_WAIT);
	mark(b, g->nodes[1].id, KB_BAD);
	expect_kind(b, KB_FOUND, g->nodes[1].id);
	kbisect_free(b);
	graph_free(g);
}

/* With nothing pending, the first commit handed out is git's pick. */
static void check_first(const struct kb_graph *g, const struct ref_state *st,
			const char *id, uint64_t s)
{
	struct ref_result ref;

	ref_pick(g, st, &ref);
	assert_int_equal(ref.kind, KB_TEST);
	if (index_of(g, id) != ref.pick)
		fail_seed(s, "k-ary: first is not git's pick");
}

/* A commit handed out must be new: not out already, never marked. */
static void handed(const struct kb_graph *g, const struct kb_step *step,
		   bool *pending, const bool *marked, uint32_t *pend,
		   size_t *npend, uint64_t s)
{
	uint32_t x = index_of(g, step->id);

	assert_int_equal(step->kind, KB_TEST);
	if (x == NONE || pending[x] || marked[x])
		fail_seed(s, "k-ary: handed out twice");
	pending[x] = true;
	pend[(*npend)++] = x;
}

/*
 * Async: each commit out whose verdict can no longer matter (git's
 * candidates from scratch no longer hold it) must say so, and the others
 * must not; about half of the stale ones are taken back (their test
 * stopped), the rest keep running and bring their verdict later.
 */
static void drop_stale(const struct kb_graph *g, struct kbisect *b,
		       const struct ref_state *st, uint32_t *pend,
		       size_t *npend, bool *pending, uint64_t s)
{
	bool *in = ref_candidates(g, st);

	for (size_t j = 0; j < *npend;) {
		uint32_t x = pend[j];
		bool want = in[x] && x != st->bad;

		if (kbisect_needed(b, g->nodes[x].id) != want)
			fail_seed(s, want ? "k-ary: a needed commit said stale" :
				  "k-ary: a stale commit said needed");
		if (want || rnd(2)) {
			j++;
			continue;
		}
		if (kbisect_release(b, g->nodes[x].id))
			fail_seed(s, "k-ary: release refused");
		if (!kbisect_release(b, g->nodes[x].id))
			fail_seed(s, "k-ary: released twice");
		pending[x] = false;
		pend[j] = pend[--*npend];
	}
	free(in);
}

/*
 * k boxes. sync: hand out k, all verdicts (in random order), again.
 * async: a random few verdicts arrive between calls. Every hand-out must
 * be new (not pending, never marked); in sync rounds the first commit is
 * git's own pick.
 */
static void run_kary(const struct kb_graph *g, const bool *bad,
		     const bool *untestable, size_t k, bool sync, bool compare,
		     uint64_t s, struct run *out)
{
	char why[256];
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, why, sizeof(why));
	uint32_t *pend = calloc(k + 1, sizeof(*pend));
	bool *marked = calloc(g->n + 1, sizeof(bool));
	bool *pending = calloc(g->n + 1, sizeof(bool));
	struct kb_step *steps = calloc(k + 1, sizeof(*steps));
	struct ref_state st = { 0 };
	size_t npend = 0, n, i, guard = 0;

	memset(out, 0, sizeof(*out));
	if (!b)
		fail_seed(s, why);
	st.good = calloc(g->n + 1, sizeof(bool));
	st.skip = calloc(g->n + 1, sizeof(bool));
	for (;;) {
		size_t cnt;

		if (++guard > 4 * g->n + 20)
			fail_seed(s, "k-ary bisect does not end");
		if (npend < k) {
			kbisect_next(b, steps, k - npend, &n);
			assert_true(n >= 1 && n <= k - npend);
			if (steps[0].kind == KB_FOUND ||
			    steps[0].kind == KB_ONLY_SKIPPED ||
			    steps[0].kind == KB_FAILED)
				break;
			if (steps[0].kind == KB_WAIT) {
				assert_int_equal(n, 1);
				assert_true(npend > 0);
			} else {
				if (compare && sync && !npend)
					check_first(g, &st, steps[0].id, s);
				out->rounds++;
				for (i = 0; i < n; i++)
					handed(g, &steps[i], pending, marked,
					       pend, &npend, s);
			}
		}
		if (!npend)
			fail_seed(s, "k-ary: nothing pending, nothing handed");
		cnt = sync ? npend : 1 + rnd((uint32_t)npend);
		while (cnt--) {
			size_t j = rnd((uint32_t)npend);
			uint32_t x = pend[j];
			enum kb_verdict v = verdict(bad, untestable, x);
			bool *in = ref_candidates(g, &st);

			if (v == KB_BAD && in[x])
				st.bad = x;
			else if (v == KB_GOOD)
				st.good[x] = true;
			else if (v == KB_SKIP)
				st.skip[x] = st.any_skip = true;
			free(in);
			pend[j] = pend[--npend];
			pending[x] = false;
			marked[x] = true;
			if (kbisect_mark(b, g->nodes[x].id, v, why,
					 sizeof(why)))
				fail_seed(s, why);
			out->steps++;
		}
		assert_string_equal(kbisect_bad(b), g->nodes[st.bad].id);
		if (!sync)
			drop_stale(g, b, &st, pend, &npend, pending, s);
	}
	out->kind = steps[0].kind;
	out->found = index_of(g, steps[0].id);
	if (out->kind == KB_ONLY_SKIPPED) {
		const char **ids;

		out->nonly = kbisect_candidates(b, &ids);
		out->only = malloc((out->nonly + 1) * sizeof(*ids));
		memcpy(out->only, ids, out->nonly * sizeof(*ids));
	}
	free(st.good);
	free(st.skip);
	free(steps);
	free(pending);
	free(marked);
	free(pend);
	kbisect_free(b);
}

static void test_kary_linear_rounds(void **state)
{
	size_t n = 1000, k, c;
	struct kb_graph *g = chain(n);
	bool *culprit = calloc(n, sizeof(bool));

	seed(42);
	for (k = 1; k <= 3; k++) {
		size_t total = 0, worst = 0;

		for (c = 0; c < n; c += 7) {
			struct run r;
			bool *bad;

			culprit[c] = true;
			bad = bad_set(g, culprit);
			run_kary(g, bad, NULL, k, true, false, 42, &r);
			check_outcome(g, bad, false, &r, 42);
			total += r.rounds;
			if (r.rounds > worst)
				worst = r.rounds;
			run_free(&r);
			free(bad);
			culprit[c] = false;
		}
		/*
		 * git's pick stays the half, so two boxes split 1/4 1/4 1/2
		 * (expected 3/8 left: log base 2.67), three boxes quarters.
		 */
		print_message("k=%zu: %.2f rounds on average, %zu at worst, "
			      "log_(k+1) %zu = %d\n", k,
			      (double)total / ((n + 6) / 7), worst, n,
			      ceil_log(n, k + 1));
		assert_true(total <= ((n + 6) / 7) *
				     (size_t)(ceil_log(n, k + 1) + 1));
		assert_true(worst <= (size_t)ceil_log(n, 2) + 1);
	}
	free(culprit);
	graph_free(g);
}

static void test_kary_random(void **state)
{
	uint64_t s0 = first_seed();
	unsigned t;

	for (t = 0; t < 1200; t++) {
		uint64_t s = s0 + 100003 + t;
		size_t n, i, k;
		bool *culprit, *bad, *untestable, sync;
		struct kb_graph *g;
		struct run r;

		unsigned merge_pct, swaps;

		seed(s);
		n = 1 + rnd(60);
		k = 2 + rnd(2);
		sync = rnd(2);
		merge_pct = rnd(40);
		swaps = rnd(3) ? 0 : rnd(6);
		g = random_dag(n, merge_pct, 0, false, swaps);
		culprit = calloc(n, sizeof(bool));
		untestable = calloc(n, sizeof(bool));
		culprit[rnd((uint32_t)n)] = true;
		if (rnd(2))
			culprit[rnd((uint32_t)n)] = true;
		for (i = 1; i < n; i++)
			untestable[i] = rnd(100) < (t % 3 ? 0u : 20u);
		bad = bad_set(g, culprit);
		run_kary(g, bad, untestable, k, sync, true, s, &r);
		check_outcome(g, bad, false, &r, s);
		run_free(&r);
		free(bad);
		free(untestable);
		free(culprit);
		graph_free(g);
	}
}

/*
 * The pool's schedules, timed: k boxes, box j takes speed[j] times
 * 0.75..1.25 units a test. ROUNDS hands out k commits and waits for all
 * k verdicts (ktest before 2026-12-06); REFILL gives a box that ends the
 * next commit at once; STOP also stops a test whose verdict can no longer
 * matter (kbisect_needed) and gives its box another (run_bisect.c's).
 */
enum sched { SCHED_ROUNDS, SCHED_REFILL, SCHED_STOP, SCHED__COUNT };

#define SIM_MAX 4

struct sim {
	double time;		/* when the answer was known */
	size_t tests;		/* tests started */
	size_t stopped;		/* of which stopped as stale */
	struct run r;
};

static bool sim_over(enum kb_kind k)
{
	return k == KB_FOUND || k == KB_ONLY_SKIPPED || k == KB_FAILED;
}

static void run_timed(const struct kb_graph *g, const bool *bad, size_t k,
		      const double *speed, enum sched mode, uint64_t s,
		      struct sim *out)
{
	char why[256];
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, why, sizeof(why));
	uint32_t box[SIM_MAX];
	double end[SIM_MAX];
	bool busy[SIM_MAX] = { false };
	struct kb_step steps[SIM_MAX];
	double now = 0;
	size_t n, guard = 0;

	memset(out, 0, sizeof(*out));
	if (!b)
		fail_seed(s, why);
	for (;;) {
		size_t nfree = 0, j, i;

		if (++guard > 4 * g->n + 20)
			fail_seed(s, "timed: no end");
		for (j = 0; j < k; j++)
			nfree += !busy[j];
		if (nfree && (mode != SCHED_ROUNDS || nfree == k)) {
			kbisect_next(b, steps, nfree, &n);
			if (sim_over(steps[0].kind))
				break;
			for (i = 0; steps[0].kind == KB_TEST && i < n; i++) {
				for (j = 0; busy[j]; j++)
					;
				box[j] = index_of(g, steps[i].id);
				end[j] = now + speed[j] *
					 (0.75 + rnd(51) / 100.0);
				busy[j] = true;
				out->tests++;
			}
		}
		/* the next box to end */
		for (i = k, j = 0; j < k; j++)
			if (busy[j] && (i == k || end[j] < end[i]))
				i = j;
		if (i == k)
			fail_seed(s, "timed: nothing running, nothing handed");
		now = end[i];
		busy[i] = false;
		if (kbisect_mark(b, g->nodes[box[i]].id,
				 verdict(bad, NULL, box[i]), why, sizeof(why)))
			fail_seed(s, why);
		for (j = 0; mode == SCHED_STOP && j < k; j++) {
			if (!busy[j] || kbisect_needed(b, g->nodes[box[j]].id))
				continue;
			if (kbisect_release(b, g->nodes[box[j]].id))
				fail_seed(s, "timed: release refused");
			busy[j] = false;
			out->stopped++;
		}
	}
	out->time = now;
	out->r.kind = steps[0].kind;
	out->r.found = index_of(g, steps[0].id);
	kbisect_free(b);
}

/*
 * Every schedule names the commit one box names, whatever the timing; a
 * box that ends early takes the next commit, and a test made useless by
 * another box's verdict is stopped: the pool's wall time (in tests) falls
 * below that of rounds, most with boxes of unequal speed. Printed, and
 * the order asserted.
 */
static void test_kary_timed(void **state)
{
	static const double speeds[][SIM_MAX] = {
		{ 1, 1 }, { 1, 3 }, { 1, 1, 1 }, { 1, 2, 4 },
	};
	static const size_t ks[] = { 2, 2, 3, 3 };
	static const char *const names[] = { "rounds", "refill", "stop" };
	size_t n = 300;
	struct kb_graph *g = chain(n);
	bool *culprit = calloc(n, sizeof(bool));
	double one = 0;

	seed(7);
	for (size_t c = 0; c < n; c++) {
		struct run r;
		bool *bad;

		culprit[c] = true;
		bad = bad_set(g, culprit);
		run_seq(g, NULL, bad, NULL, false, 7, &r);
		one += (double)r.steps;
		run_free(&r);
		free(bad);
		culprit[c] = false;
	}
	print_message("one box: %.2f tests\n", one / (double)n);
	for (size_t v = 0; v < sizeof(ks) / sizeof(ks[0]); v++) {
		double t[SCHED__COUNT] = { 0 }, tests[SCHED__COUNT] = { 0 };
		size_t stopped = 0;
		char sp[64];

		for (size_t c = 0; c < n; c++) {
			bool *bad;
			struct run r;

			culprit[c] = true;
			bad = bad_set(g, culprit);
			run_seq(g, NULL, bad, NULL, false, 7, &r);
			for (enum sched m = 0; m < SCHED__COUNT; m++) {
				struct sim sm;

				run_timed(g, bad, ks[v], speeds[v], m,
					  1000 * v + c, &sm);
				check_outcome(g, bad, false, &sm.r, c);
				if (sm.r.kind != r.kind || sm.r.found != r.found)
					fail_seed(c, "timed: another answer than one box's");
				t[m] += sm.time;
				tests[m] += (double)sm.tests;
				if (m == SCHED_STOP)
					stopped += sm.stopped;
			}
			run_free(&r);
			free(bad);
			culprit[c] = false;
		}
		for (size_t j = 0, len = 0; j < ks[v]; j++)
			len += (size_t)snprintf(sp + len, sizeof(sp) - len,
						" %g", speeds[v][j]);
		for (int m = 0; m < SCHED__COUNT; m++)
			print_message("%zu boxes, speeds%s: %-6s %.2f units, %.2f tests\n",
				      ks[v], sp, names[m], t[m] / (double)n,
				      tests[m] / (double)n);
		print_message("  stopped as stale: %.2f a bisect\n",
			      (double)stopped / (double)n);
		assert_true(t[SCHED_STOP] < t[SCHED_ROUNDS]);
		assert_true(t[SCHED_STOP] < t[SCHED_REFILL]);
		assert_true(stopped > 0);
	}
	free(culprit);
	graph_free(g);
}

/* ---- verdicts outside the candidates ---- */

static void test_marks_outside(void **state)
{
	struct kb_graph *g = chain(10);
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	char why[256];

	/* commit 2 bad: 0 and 1 fall out, below the bad one: recorded */
	mark(b, g->nodes[2].id, KB_BAD);
	assert_int_equal(kbisect_mark(b, g->nodes[1].id, KB_BAD, why,
				      sizeof(why)), 0);
	assert_string_equal(kbisect_bad(b), g->nodes[2].id);
	/* good on a descendant of the bad one contradicts it */
	assert_int_equal(kbisect_mark(b, g->nodes[1].id, KB_GOOD, why,
				      sizeof(why)), -1);
	assert_non_null(strstr(why, "reaches the bad commit"));
	/* 6 good prunes 6..9; bad on 8 now contradicts 6 */
	mark(b, g->nodes[6].id, KB_GOOD);
	assert_int_equal(kbisect_mark(b, g->nodes[8].id, KB_BAD, why,
				      sizeof(why)), -1);
	assert_non_null(strstr(why, g->nodes[6].id));
	/* good on a pruned one, skip on anything: fine */
	mark(b, g->nodes[7].id, KB_GOOD);
	mark(b, g->nodes[0].id, KB_SKIP);
	/* the bad one good: no */
	assert_int_equal(kbisect_mark(b, g->nodes[2].id, KB_GOOD, why,
				      sizeof(why)), -1);
	assert_non_null(strstr(why, "was both good and bad"));
	/* unknown commits, and a good one marked bad */
	assert_int_equal(kbisect_mark(b, "f00", KB_GOOD, why, sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "unknown commit f00"));
	assert_int_equal(kbisect_mark(b, "g00d", KB_BAD, why, sizeof(why)),
			 -1);
	mark(b, "g00d", KB_GOOD);
	assert_int_equal(kbisect_remaining(b), 4);
	kbisect_free(b);
	graph_free(g);
}

static void test_bad_graphs(void **state)
{
	struct kb_graph *g = chain(4);
	struct kb_graph empty = { 0 };
	char why[256];

	assert_null(kbisect_new(&empty, good0, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "empty"));

	add_parent(g, 3, 1);	/* 1 -> 2 -> 3 -> 1 */
	assert_null(kbisect_new(g, good0, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "cycle"));
	g->nodes[3].nparents = 0;

	strcpy(g->nodes[3].id, g->nodes[1].id);
	assert_null(kbisect_new(g, good0, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "twice"));
	strcpy(g->nodes[3].id, "three");

	g->nodes[2].parents[0] = 9;
	assert_null(kbisect_new(g, good0, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "out of the graph"));
	g->nodes[2].parents[0] = 3;

	g->nodes[0].nparents = 0;	/* 1..3 unreachable from bad */
	assert_null(kbisect_new(g, good0, 1, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "not reachable"));
	g->nodes[0].nparents = 1;

	{
		const char *goods[] = { "three" };

		assert_null(kbisect_new(g, goods, 1, NULL, why, sizeof(why)));
		assert_non_null(strstr(why, "in the graph"));
	}
	graph_free(g);
}

/* ---- checks, merge bases, start ---- */

static void test_checks(void **state)
{
	const char *goods[] = { "g1", "g2" };
	struct kb_options o = { .check_bad = true, .check_good = true };
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b = kbisect_new(g, goods, 2, &o, NULL, 0);
	struct kb_step s[4];
	char why[256];
	size_t n;

	/* one box: one check at a time */
	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].kind, KB_TEST);
	assert_int_equal(s[0].purpose, KB_FOR_CHECK_BAD);
	assert_string_equal(s[0].id, "h");
	kbisect_next(b, s, 4, &n);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].purpose, KB_FOR_CHECK_GOOD);
	assert_string_equal(s[0].id, "g1");
	assert_string_equal(s[1].id, "g2");
	kbisect_next(b, s, 4, &n);
	assert_int_equal(s[0].kind, KB_WAIT);
	mark(b, "g2", KB_GOOD);
	mark(b, "h", KB_BAD);
	kbisect_next(b, s, 4, &n);
	assert_int_equal(s[0].kind, KB_WAIT);
	mark(b, "g1", KB_GOOD);
	expect_test(b, "d", 3, 2);
	kbisect_free(b);

	/* a bad commit that tests good */
	b = kbisect_new(g, goods, 2, &o, NULL, 0);
	kbisect_next(b, s, 4, &n);
	assert_int_equal(n, 3);
	assert_int_equal(kbisect_mark(b, "h", KB_GOOD, why, sizeof(why)), -1);
	assert_string_equal(why, "BISECT_BAD [h] tested good");
	kbisect_next(b, s, 4, &n);
	assert_int_equal(s[0].kind, KB_FAILED);
	assert_string_equal(s[0].why, "BISECT_BAD [h] tested good");
	assert_int_equal(kbisect_mark(b, "d", KB_GOOD, why, sizeof(why)), -1);
	kbisect_free(b);

	/* a good one that fails, and one that cannot be tested */
	b = kbisect_new(g, goods, 2, &o, NULL, 0);
	assert_int_equal(kbisect_mark(b, "g2", KB_BAD, why, sizeof(why)), -1);
	assert_string_equal(why, "BISECT_GOOD [g2] tested bad");
	kbisect_free(b);
	b = kbisect_new(g, goods, 2, &o, NULL, 0);
	assert_int_equal(kbisect_mark(b, "g1", KB_SKIP, why, sizeof(why)), -1);
	assert_string_equal(why, "BISECT_GOOD [g1] could not be tested (skipped)");
	kbisect_free(b);
	graph_free(g);
}

static void test_merge_bases(void **state)
{
	const char *goods[] = { "g2", "g1" };
	const char *bases[] = { "m1", "g1", "m2" };
	struct kb_options o = { .merge_bases = bases, .nmerge_bases = 3 };
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b = kbisect_new(g, goods, 2, &o, NULL, 0);
	struct kb_step s[4];
	char why[300];
	size_t n;

	/* g1 is good already: m1 and m2 are to be tested, first things */
	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].purpose, KB_FOR_MERGE_BASE);
	assert_string_equal(s[0].id, "m1");
	kbisect_next(b, s, 1, &n);
	assert_string_equal(s[0].id, "m2");
	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].kind, KB_WAIT);
	mark(b, "m2", KB_GOOD);
	mark(b, "m1", KB_GOOD);
	expect_test(b, "d", 3, 2);
	kbisect_free(b);

	/* git's message for a bad merge base: goods sorted, as its refs */
	b = kbisect_new(g, goods, 2, &o, NULL, 0);
	mark(b, "m2", KB_GOOD);
	assert_int_equal(kbisect_mark(b, "m1", KB_BAD, why, sizeof(why)), -1);
	assert_string_equal(why, "The merge base m1 is bad.\n"
			    "This means the bug has been fixed between m1 and "
			    "[g1 g2 m2].");
	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].kind, KB_FAILED);
	assert_string_equal(s[0].why, why);
	kbisect_free(b);

	/* a merge base that cannot be tested: git's warning, then on */
	b = kbisect_new(g, goods, 2, &o, NULL, 0);
	assert_int_equal(kbisect_mark(b, "m1", KB_SKIP, why, sizeof(why)), 0);
	assert_string_equal(why,
		"warning: the merge base between h and [g1 g2] must be skipped.\n"
		"So we cannot be sure the first bad commit is between m1 and h.\n"
		"We continue anyway.");
	mark(b, "m2", KB_GOOD);
	why[0] = 'x';
	assert_int_equal(kbisect_mark(b, "m2", KB_GOOD, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* a skip anywhere puts git in its sorted mode: d is still first */
	expect_test(b, "d", 3, 2);
	kbisect_free(b);
	graph_free(g);
}

static void test_start(void **state)
{
	struct kb_options o = { .start = "b" };
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b = kbisect_new(g, good0, 1, &o, NULL, 0);
	struct kb_step s[3];
	size_t n;

	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].purpose, KB_FOR_START);
	assert_string_equal(s[0].id, "b");
	assert_int_equal(s[0].left, 5);
	mark(b, "b", KB_GOOD);
	/* c..h, nr 6: c=1 d=2 e=3: 2*3-6=0 */
	expect_test(b, "e", 2, 2);
	kbisect_free(b);

	/* not a candidate: ignored */
	o.start = "x";
	b = kbisect_new(g, good0, 1, &o, NULL, 0);
	expect_test(b, "d", 3, 2);
	kbisect_free(b);

	/* with boxes: start first, the rest split around it */
	o.start = "f";
	b = kbisect_new(g, good0, 1, &o, NULL, 0);
	kbisect_next(b, s, 3, &n);
	assert_int_equal(n, 3);
	assert_int_equal(s[0].purpose, KB_FOR_START);
	assert_string_equal(s[0].id, "f");
	assert_int_equal(s[1].purpose, KB_FOR_BISECT);
	kbisect_free(b);

	/* start handed out, verdict late: not handed again */
	o.start = "c";
	b = kbisect_new(g, good0, 1, &o, NULL, 0);
	kbisect_next(b, s, 1, &n);
	assert_string_equal(s[0].id, "c");
	kbisect_next(b, s, 1, &n);
	assert_int_equal(s[0].purpose, KB_FOR_BISECT);
	assert_string_equal(s[0].id, "d");
	kbisect_free(b);
	graph_free(g);
}

/* ---- the log ---- */

static const char *subject(void *ctx, const char *id)
{
	static char buf[64];

	if (!strcmp(id, "e"))
		return NULL;
	snprintf(buf, sizeof(buf), "subject of %s\nbody", id);
	return buf;
}

static char *write_log(const struct kbisect *b, const char *const *paths,
		       size_t npaths)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(kbisect_write_log(b, paths, npaths, f, subject, NULL),
			 0);
	fclose(f);
	return text;
}

static void test_log_write(void **state)
{
	const char *paths[] = { "drivers/net", "it's!" };
	struct kb_graph *g = chain_named("hgfedcba");
	struct kbisect *b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	struct kb_replay r;
	char why[128];
	char *text;

	mark(b, "d", KB_BAD);
	mark(b, "e", KB_BAD);		/* below bad d: a comment only */
	mark(b, "a", KB_SKIP);
	mark(b, "b", KB_GOOD);
	mark(b, "c", KB_BAD);
	expect_kind(b, KB_FOUND, "c");
	text = write_log(b, paths, 2);
	assert_string_equal(text,
		"# bad: [h] subject of h\n"
		"# good: [g00d] subject of g00d\n"
		"git bisect start 'h' 'g00d' '--' 'drivers/net' 'it'\\''s'\\!''\n"
		"# bad: [d] subject of d\n"
		"git bisect bad d\n"
		"# bad: [e] \n"
		"# not replayed: no candidate any more, the bad commit stays\n"
		"# skip: [a] subject of a\n"
		"git bisect skip a\n"
		"# good: [b] subject of b\n"
		"git bisect good b\n"
		"# bad: [c] subject of c\n"
		"git bisect bad c\n"
		"# first bad commit: [c] subject of c\n");

	/* and back */
	assert_int_equal(kbisect_parse_log(text, &r, why, sizeof(why)), 0);
	assert_string_equal(r.bad, "h");
	assert_int_equal(r.ngoods, 1);
	assert_string_equal(r.goods[0], "g00d");
	assert_int_equal(r.npaths, 2);
	assert_string_equal(r.paths[0], "drivers/net");
	assert_string_equal(r.paths[1], "it's!");
	assert_int_equal(r.nmarks, 4);
	assert_int_equal(r.marks[0].verdict, KB_BAD);
	assert_string_equal(r.marks[0].rev, "d");
	assert_int_equal(r.marks[1].verdict, KB_SKIP);
	assert_string_equal(r.marks[1].rev, "a");
	assert_int_equal(r.marks[2].verdict, KB_GOOD);
	assert_int_equal(r.marks[3].verdict, KB_BAD);
	assert_string_equal(r.marks[3].rev, "c");
	kbisect_replay_free(&r);
	free(text);
	kbisect_free(b);

	/* only skipped left: git lists the possible ones, newest first */
	b = kbisect_new(g, good0, 1, NULL, NULL, 0);
	mark(b, "b", KB_GOOD);
	mark(b, "c", KB_SKIP);
	mark(b, "d", KB_BAD);
	expect_kind(b, KB_ONLY_SKIPPED, NULL);
	text = write_log(b, NULL, 0);
	assert_non_null(strstr(text, "git bisect bad d\n"
				     "# only skipped commits left to test\n"
				     "# possible first bad commit: [d] subject of d\n"
				     "# possible first bad commit: [c] subject of c\n"));
	free(text);
	kbisect_free(b);
	graph_free(g);
}

/*
 * Replaying a written log into a new bisect of the same graph lands in
 * the same state: same next step, through random histories, k-ary ones
 * included (their out-of-order verdicts).
 */
static void test_log_replay_random(void **state)
{
	unsigned t;

	for (t = 0; t < 300; t++) {
		uint64_t s = first_seed() + 555555 + t;
		struct kbisect *b, *c;
		struct kb_graph *g;
		struct kb_replay r;
		struct kb_step s1[4], s2[4];
		bool *culprit, *bad;
		char why[256], *text;
		size_t n, i, k, n1, n2;

		seed(s);
		n = 2 + rnd(40);
		k = 1 + rnd(3);
		i = rnd(40);
		g = random_dag(n, (unsigned)i, 0, false, 0);
		culprit = calloc(n, sizeof(bool));
		culprit[rnd((uint32_t)n)] = true;
		bad = bad_set(g, culprit);
		b = kbisect_new(g, good0, 1, NULL, NULL, 0);
		for (i = 0; i < 1 + rnd(6); i++) {
			size_t j;

			kbisect_next(b, s1, k, &n1);
			if (s1[0].kind != KB_TEST)
				break;
			for (j = n1; j-- > 0;) {
				uint32_t x = index_of(g, s1[j].id);

				mark(b, s1[j].id, rnd(5) ? verdict(bad, NULL, x)
							 : KB_SKIP);
			}
		}
		text = write_log(b, NULL, 0);
		if (kbisect_parse_log(text, &r, why, sizeof(why)))
			fail_seed(s, why);
		assert_string_equal(r.bad, g->nodes[0].id);
		c = kbisect_new(g, (const char *const *)r.goods, r.ngoods,
				NULL, NULL, 0);
		for (i = 0; i < r.nmarks; i++)
			if (kbisect_mark(c, r.marks[i].rev, r.marks[i].verdict,
					 why, sizeof(why)))
				fail_seed(s, why);
		kbisect_next(b, s1, 1, &n1);
		kbisect_next(c, s2, 1, &n2);
		assert_int_equal(s1[0].kind, s2[0].kind);
		if (s1[0].id || s2[0].id)
			assert_string_equal(s1[0].id ? s1[0].id : "",
					    s2[0].id ? s2[0].id : "");
		assert_string_equal(kbisect_bad(b), kbisect_bad(c));
		assert_int_equal(kbisect_remaining(b), kbisect_remaining(c));
		kbisect_replay_free(&r);
		free(text);
		kbisect_free(b);
		kbisect_free(c);
		free(bad);
		free(culprit);
		graph_free(g);
	}
}

static void test_log_parse(void **state)
{
	struct kb_replay r;
	char why[128];

	/* older logs: git-bisect, terms old/new, comments, CRLF, blanks */
	assert_int_equal(kbisect_parse_log(
		"# a comment\r\n"
		"\n"
		"  git-bisect start\r\n"
		"git-bisect new abc123\n"
		"git bisect old def456   \n"
		"git bisect skip 0a0a\n"
		"git bisect old 777\n"
		"some other line\n"
		"git bisect\n"
		"git bisectfoo bar\n"
		"git bisect terms\n", &r, why, sizeof(why)), 0);
	assert_string_equal(r.bad, "abc123");
	assert_int_equal(r.ngoods, 1);
	assert_string_equal(r.goods[0], "def456");
	assert_int_equal(r.npaths, 0);
	assert_int_equal(r.nmarks, 2);
	assert_int_equal(r.marks[0].verdict, KB_SKIP);
	assert_string_equal(r.marks[0].rev, "0a0a");
	assert_int_equal(r.marks[1].verdict, KB_GOOD);
	assert_string_equal(r.marks[1].rev, "777");
	kbisect_replay_free(&r);

	/* revisions on the start line: terms bad/good, three of them */
	assert_int_equal(kbisect_parse_log(
		"git bisect start 'v6.1' 'v6.0' 'v5.19'\n", &r, why,
		sizeof(why)), 0);
	assert_string_equal(r.bad, "v6.1");
	assert_int_equal(r.ngoods, 2);
	assert_string_equal(r.goods[1], "v5.19");
	kbisect_replay_free(&r);

	/* marks before start, no start at all: they name bad and goods */
	assert_int_equal(kbisect_parse_log(
		"git bisect skip s1\n"
		"git bisect bad b1\n"
		"git bisect bad b2\n"
		"git bisect good g1\n"
		"git bisect good g2\n", &r, why, sizeof(why)), 0);
	assert_string_equal(r.bad, "b2");
	assert_int_equal(r.ngoods, 1);
	assert_int_equal(r.nmarks, 2);
	assert_string_equal(r.marks[0].rev, "s1");
	assert_string_equal(r.marks[1].rev, "g2");
	kbisect_replay_free(&r);

	/* a second start starts over; custom terms; bare words */
	assert_int_equal(kbisect_parse_log(
		"git bisect start 'x' 'y'\n"
		"git bisect bad z\n"
		"git bisect start --term-new=broken --first-parent B G -- a b\n"
		"git bisect broken C\n"
		"git bisect good D\n", &r, why, sizeof(why)), 0);
	assert_string_equal(r.bad, "B");
	assert_string_equal(r.goods[0], "G");
	assert_int_equal(r.npaths, 2);
	assert_int_equal(r.nmarks, 2);
	assert_int_equal(r.marks[0].verdict, KB_BAD);
	assert_int_equal(r.marks[1].verdict, KB_GOOD);
	kbisect_replay_free(&r);

	assert_int_equal(kbisect_parse_log("", &r, why, sizeof(why)), 0);
	assert_null(r.bad);
	kbisect_replay_free(&r);
}

static void test_log_parse_errors(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
		{ "git bisect start 'a' 'b'\ngit bisect frob x\n",
		  "line 2: Invalid command: you're currently in a bad/good bisect" },
		{ "# x\ngit bisect frob x\n",
		  "line 2: 'frob'?? what are you talking about?" },
		{ "git bisect start 'a' 'b'\n\ngit bisect new x\n",
		  "line 3: Invalid command: you're currently in a bad/good bisect" },
		{ "git bisect old x\ngit bisect good y\n",
		  "line 2: Invalid command: you're currently in a new/old bisect" },
		{ "git bisect start 'a\n", "line 1: unterminated quote" },
		/*
		 * words before the unterminated one were leaked (found by
		 * tests/fuzz/fuzz_bisect_log; make SAN=1 check sees the leak)
		 */
		{ "# bad: [267f1cd71ebd0c1e0a8b29d3f0ec6a6134b530ac] step 12\n"
		  "git bisect start 'HEAD' 'HEAD~10\n"
		  " oogd'#: [b199fd2d3170b58a6608b2e94b6345aa2646a4a3] step 7\n",
		  "line 2: unterminated quote" },
		{ "git bisect start --frob a\n",
		  "line 1: unrecognized option: '--frob'" },
		{ "git bisect start --term-good\n",
		  "line 1: '' is not a valid term" },
		{ "git bisect good\n", "line 1: git bisect good without a revision" },
		{ "\n\ngit bisect skip a b\n",
		  "line 3: 'a b' is not one revision" },
		{ "git bisect run make\n",
		  "line 1: 'run'?? what are you talking about?" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kb_replay r;
		char why[128];

		assert_int_equal(kbisect_parse_log(bad[i].text, &r, why,
						   sizeof(why)), -1);
		assert_string_equal(why, bad[i].why);
		assert_null(r.bad);
		assert_int_equal(r.nmarks, 0);
	}
}

/* ---- verdicts from results ---- */

#define UNSET { -1, -1, -1, -1, KB_DEFAULT_NONE }

static void test_test_result(void **state)
{
	static const struct {
		struct kb_retmap m;
		int status;
		enum kb_result want;
	} rows[] = {
		/* nothing set: git bisect run's convention */
		{ UNSET, 0, KB_R_GOOD },
		{ UNSET, 1, KB_R_BAD },
		{ UNSET, 124, KB_R_BAD },
		{ UNSET, 125, KB_R_SKIP },
		{ UNSET, 126, KB_R_BAD },	/* not executable: as git */
		{ UNSET, 127, KB_R_BAD },
		{ UNSET, 128, KB_R_ABORT },
		{ UNSET, 255, KB_R_ABORT },
		{ UNSET, -1, KB_R_ABORT },	/* killed by a signal */
		/* BISECT_RET_BAD works (dead in ktest.pl) */
		{ { -1, 3, -1, -1, KB_DEFAULT_NONE }, 3, KB_R_BAD },
		{ { -1, 0, -1, -1, KB_DEFAULT_NONE }, 0, KB_R_BAD },
		/* skip and abort stay skip and abort (ktest.pl: good) */
		{ { -1, -1, 77, -1, KB_DEFAULT_NONE }, 77, KB_R_SKIP },
		{ { -1, -1, -1, 9, KB_DEFAULT_NONE }, 9, KB_R_ABORT },
		{ { 10, -1, -1, -1, KB_DEFAULT_NONE }, 10, KB_R_GOOD },
		/* the codes before the convention */
		{ { 125, -1, -1, -1, KB_DEFAULT_NONE }, 125, KB_R_GOOD },
		{ { -1, 200, -1, -1, KB_DEFAULT_NONE }, 200, KB_R_BAD },
		/* unmatched: the convention again */
		{ { -1, -1, 77, -1, KB_DEFAULT_NONE }, 125, KB_R_SKIP },
		{ { -1, -1, 77, -1, KB_DEFAULT_NONE }, 1, KB_R_BAD },
		/* BISECT_RET_DEFAULT for other non-zero codes */
		{ { -1, -1, -1, -1, KB_DEFAULT_SKIP }, 1, KB_R_SKIP },
		{ { -1, -1, -1, -1, KB_DEFAULT_SKIP }, 0, KB_R_GOOD },
		{ { -1, -1, -1, -1, KB_DEFAULT_GOOD }, 200, KB_R_GOOD },
		{ { -1, -1, -1, -1, KB_DEFAULT_BAD }, 125, KB_R_BAD },
		{ { -1, -1, -1, -1, KB_DEFAULT_ABORT }, 2, KB_R_ABORT },
		{ { -1, -1, -1, -1, KB_DEFAULT_ABORT }, -1, KB_R_ABORT },
		{ { 2, -1, -1, -1, KB_DEFAULT_ABORT }, 2, KB_R_GOOD },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (kbisect_test_result(&rows[i].m, rows[i].status) !=
		    rows[i].want)
			fail_msg("row %zu: status %d", i, rows[i].status);
	}
	assert_int_equal(kbisect_test_result(NULL, 3), KB_R_BAD);
}

static void test_combine_tries(void **state)
{
	static const struct {
		const char *runs;	/* g b s a */
		enum kb_result want;
	} rows[] = {
		{ "", KB_R_GOOD },	/* BISECT_TRIES < 1: as ktest.pl */
		{ "g", KB_R_GOOD }, { "b", KB_R_BAD }, { "s", KB_R_SKIP },
		{ "a", KB_R_ABORT },
		{ "ggb", KB_R_BAD }, { "bg", KB_R_BAD }, { "sg", KB_R_GOOD },
		{ "gs", KB_R_GOOD }, { "sss", KB_R_SKIP }, { "sb", KB_R_BAD },
		{ "gba", KB_R_ABORT }, { "ag", KB_R_ABORT },
		{ "sa", KB_R_ABORT },
	};
	size_t i, j;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum kb_result runs[8];
		size_t n = strlen(rows[i].runs);

		for (j = 0; j < n; j++)
			runs[j] = strchr("gbsa", rows[i].runs[j]) -
				  "gbsa" + KB_R_GOOD;
		if (kbisect_combine_tries(runs, n) != rows[i].want)
			fail_msg("row %zu: %s", i, rows[i].runs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain8_sequence),
		cmocka_unit_test(test_merge_sequence),
		cmocka_unit_test(test_treesame_sequence),
		cmocka_unit_test(test_treesame_bad_no_testable),
		cmocka_unit_test(test_skip_away),
		cmocka_unit_test(test_only_skipped),
		cmocka_unit_test(test_skip_away_wraps),
		cmocka_unit_test(test_sqrti),
		cmocka_unit_test(test_estimate_steps),
		cmocka_unit_test(test_linear_every_culprit),
		cmocka_unit_test(test_merges_every_culprit),
		cmocka_unit_test(test_path_limited_every_culprit),
		cmocka_unit_test(test_first_parent_every_culprit),
		cmocka_unit_test(test_random_dags),
		cmocka_unit_test(test_random_dags_skips),
		cmocka_unit_test(test_random_dags_path_limited),
		cmocka_unit_test(test_random_dags_first_parent),
		cmocka_unit_test(test_kary_chain12),
		cmocka_unit_test(test_kary_linear_rounds),
		cmocka_unit_test(test_kary_random),
		cmocka_unit_test(test_kary_timed),
		cmocka_unit_test(test_marks_outside),
		cmocka_unit_test(test_bad_graphs),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_merge_bases),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_log_write),
		cmocka_unit_test(test_log_replay_random),
		cmocka_unit_test(test_log_parse),
		cmocka_unit_test(test_log_parse_errors),
		cmocka_unit_test(test_test_result),
		cmocka_unit_test(test_combine_tries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
