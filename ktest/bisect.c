// SPDX-License-Identifier: GPL-2.0-only
/*
 * git bisect's choice of the next commit (git 2.39's bisect.c), as a pure
 * state machine: verdicts in, steps out; no git, no I/O, no clock.
 *
 * The graph is given once (bad --not goods, newest first, as git's walk
 * lists it). The candidates are a subset of it: what the current bad
 * reaches minus what any good reaches. That is exactly the list a fresh
 * "git rev-list BAD --not GOODS" walk gives, in the same relative order,
 * so every step computes what git would compute on it:
 *
 *   find_bisection()        the list reversed, oldest first; nr counts the
 *                           non-treesame commits
 *   do_find_bisection()     weights, with the early return at an
 *                           approx_halfway() commit when nothing is skipped
 *   best_bisection()        otherwise the max of min(w, nr - w), first wins
 *   best_bisection_sorted() with skips: every candidate by distance, then
 *   managed_skipped()       object id, and skip_away() from a skipped best
 *
 * Memory: 25 bytes per commit of the graph (flags 1, weight 4, a visit
 * stamp 4, a DFS stack 4, the candidate list 4, the id hash 8), plus 12
 * and 4 per parent once merges are met (the chains), 16 once something is
 * skipped (the sorted distances) and 8 when only skipped ones are left
 * (their list): about 65 at most. No allocation per commit; the caller's
 * graph is read, never copied.
 *
 * Time: the weights are O(N) for single-parent chains; every merge costs a
 * count_distance() walk over what it reaches, as in git, but a chain of
 * single-parent commits is one step of that walk. A verdict costs a
 * walk over what the marked commit reaches plus one pass over the
 * candidates left; a good's walk stops at what earlier goods reached, so
 * all goods together cost O(N) over a whole bisect.
 *
 * What git leaves open, decided here:
 *  - Order: BISECT_CHECK steps first (the bad and the goods, several at
 *    once if asked), then the merge bases (git's "a merge base must be
 *    tested"), then BISECT_START in place of git's first pick, then git.
 *    A bad merge base fails with git's message; a skipped one goes on
 *    with git's warning (in kbisect_mark()'s why).
 *  - Verdicts in any order (k boxes): a verdict for a commit that left the
 *    candidates is taken and logged. A good prunes what it reaches; it is
 *    refused if it reaches the bad commit (the test contradicts itself).
 *    A bad outside the candidates is refused if a good reaches it;
 *    otherwise it lies below the bad one or beside it: true but of no use
 *    to git's single bad ref, so it is logged as a comment only, and a
 *    replay of the log keeps the better bad.
 *  - k-ary: git's own pick first (as long as it is not out already), the
 *    other slots cut the weights around the commits under test (fill()).
 *  - first_parent: only parents[0] is followed from the bad one, so it
 *    must be the real first parent (vcs.c's first-parent graph lists
 *    nothing else); commits it does not reach are never candidates.
 *  - kbisect_remaining() is nr, the non-treesame candidates, bad included
 *    (git's "all"); a step's left is git's "all - reaches - 1", never
 *    below 0 (git would print -1 for a treesame bad with one commit).
 */
#include "ktest/bisect.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"

#define NONE UINT32_MAX
#define PRN_MODULO 32768

/* Per-commit flags. */
enum {
	IN = 1 << 0,		/* a candidate */
	SKIPPED = 1 << 1,	/* marked skip, for good: refs/bisect/skip-* */
	PENDING = 1 << 2,	/* handed out, no verdict yet */
	GOOD_REACH = 1 << 3,	/* a commit marked good reaches it */
	TREESAME = 1 << 4,	/* does not change the paths */
	KID1 = 1 << 5,		/* a candidate has it as parent */
	KIDS = 1 << 6,		/* two or more candidates do */
};

enum outcome { RUNNING, FOUND, ONLY_SKIPPED, FAILED };

/* A step that comes before the bisection proper: a check, a merge base. */
struct special {
	const char *id;
	enum kb_purpose purpose;
	enum { SP_TODO, SP_OUT, SP_DONE } state;
};

/* One verdict, for the log. */
struct mark {
	const char *id;
	enum kb_verdict v;
	bool replay;		/* a "git bisect" line, else a comment */
};

/* best_bisection_sorted()'s entries */
struct dist {
	const char *id;
	uint32_t x;
	int32_t d;
};

struct kbisect {
	const struct kb_graph *g;
	uint32_t n;
	bool first_parent;

	uint8_t *flags;
	int32_t *weight;
	uint32_t *stamp;	/* == gen: visited by the current walk */
	uint32_t gen;
	uint32_t *stack;
	uint32_t *cand;		/* the candidates, oldest first */
	uint32_t ncand;
	uint32_t nr;		/* non-treesame candidates: git's "all" */
	uint32_t bad;
	/* chains of single-parent commits, see find_chains() */
	uint32_t *seg;		/* a candidate's chain */
	uint32_t *seg_run;	/* a chain's non-treesame commits */
	uint32_t *seg_off;	/* parent chains: seg_par[off[s]..off[s+1]) */
	uint32_t *seg_par;
	uint32_t nseg;

	uint32_t *slot;		/* id hash: node index + 1, 0 is empty */
	uint32_t mask;

	char **goods;		/* the goods we started with */
	size_t ngoods;
	char **bases;		/* merge bases to test */
	size_t nbases;
	char *start;		/* BISECT_START */
	bool start_done;
	struct special *sp;
	size_t nsp;

	struct mark *marks;
	size_t nmarks, marks_cap;
	bool any_skip;		/* git's skipped_revs.nr != 0 */

	struct dist *dist;
	const char **only;	/* only skipped left: the candidates */
	size_t nonly;

	enum outcome outcome;
	uint32_t found;
	char why[256];
};

__attribute__((format(printf, 3, 4)))
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

const char *kbisect_verdict_word(enum kb_verdict v)
{
	switch (v) {
	case KB_GOOD:
		return "good";
	case KB_BAD:
		return "bad";
	case KB_SKIP:
		break;
	}
	return "skip";
}

static const char *id_of(const struct kbisect *b, uint32_t x)
{
	return b->g->nodes[x].id;
}

/* ---- the id hash ---- */

static uint32_t hash_id(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static uint32_t lookup(const struct kbisect *b, const char *id)
{
	uint32_t i = hash_id(id) & b->mask, v;

	while ((v = b->slot[i])) {
		if (!strcmp(id_of(b, v - 1), id))
			return v - 1;
		i = (i + 1) & b->mask;
	}
	return NONE;
}

static bool insert(struct kbisect *b, uint32_t x, uint32_t h)
{
	const char *id = id_of(b, x);
	uint32_t i = h & b->mask, v;

	while ((v = b->slot[i])) {
		if (!strcmp(id_of(b, v - 1), id))
			return false;
		i = (i + 1) & b->mask;
	}
	b->slot[i] = x + 1;
	return true;
}

/* ---- walks ---- */

static uint32_t next_gen(struct kbisect *b)
{
	if (++b->gen == 0) {
		memset(b->stamp, 0, b->n * sizeof(*b->stamp));
		b->gen = 1;
	}
	return b->gen;
}

/*
 * Stamps with a new generation what x reaches (x included), through first
 * parents only when fp, entering only commits whose flags have all of need
 * and none of avoid. Returns how many non-treesame commits it stamped.
 * Like git's count_distance() it follows a first parent without pushing
 * it, so a chain costs no stack traffic.
 */
static uint32_t reach(struct kbisect *b, uint32_t x, bool fp, uint8_t need,
		      uint8_t avoid)
{
	const struct kb_node *nodes = b->g->nodes;
	uint32_t gen = next_gen(b), sp = 0, count = 0;

	b->stamp[x] = gen;
	b->stack[sp++] = x;
	while (sp) {
		x = b->stack[--sp];
		for (;;) {
			const struct kb_node *c = &nodes[x];
			uint32_t i, np = c->nparents, next = NONE;

			if (!(b->flags[x] & TREESAME))
				count++;
			if (fp && np > 1)
				np = 1;
			for (i = 0; i < np; i++) {
				uint32_t p = c->parents[i];
				uint8_t f = b->flags[p];

				if ((f & need) != need || (f & avoid) ||
				    b->stamp[p] == gen)
					continue;
				b->stamp[p] = gen;
				if (next == NONE)
					next = p;
				else
					b->stack[sp++] = p;
			}
			if (next == NONE)
				break;
			x = next;
		}
	}
	return count;
}

/* Drops from the list what lost its IN flag; recounts nr. */
static void compact(struct kbisect *b)
{
	uint32_t i, k = 0, nr = 0;

	for (i = 0; i < b->ncand; i++) {
		uint32_t x = b->cand[i];

		if (!(b->flags[x] & IN))
			continue;
		b->cand[k++] = x;
		if (!(b->flags[x] & TREESAME))
			nr++;
	}
	b->ncand = k;
	b->nr = nr;
}

/* A new bad: the candidates become what it reaches. */
static void narrow_to(struct kbisect *b, uint32_t x)
{
	uint32_t i, gen;

	reach(b, x, b->first_parent, IN, 0);
	gen = b->gen;
	for (i = 0; i < b->ncand; i++)
		if (b->stamp[b->cand[i]] != gen)
			b->flags[b->cand[i]] &= ~IN;
	compact(b);
}

/*
 * A good: everything it reaches (all parents, even with first_parent, as
 * git marks UNINTERESTING) stops being a candidate. What an earlier good
 * reached is not walked again.
 */
static void prune_good(struct kbisect *b, uint32_t x)
{
	const struct kb_node *nodes = b->g->nodes;
	uint32_t sp = 0;

	if (b->flags[x] & GOOD_REACH)
		return;
	b->flags[x] = (b->flags[x] | GOOD_REACH) & ~IN;
	b->stack[sp++] = x;
	while (sp) {
		const struct kb_node *c = &nodes[b->stack[--sp]];
		uint32_t i;

		for (i = 0; i < c->nparents; i++) {
			uint32_t p = c->parents[i];

			if (b->flags[p] & GOOD_REACH)
				continue;
			b->flags[p] = (b->flags[p] | GOOD_REACH) & ~IN;
			b->stack[sp++] = p;
		}
	}
	compact(b);
}

/* ---- git's find_bisection() ---- */

/* git's count_interesting_parents() */
static uint32_t interesting_parents(const struct kbisect *b, uint32_t x)
{
	const struct kb_node *c = &b->g->nodes[x];
	uint32_t i, count = 0;

	for (i = 0; i < c->nparents; i++) {
		if (b->flags[c->parents[i]] & IN)
			count++;
		if (b->first_parent)
			break;
	}
	return count;
}

/*
 * For a small number of commits 2 and 3 are halfway of 5, and 3 is
 * halfway of 6 but 2 and 4 are not. For a large number we are not so
 * strict: within ~0.1% of the halfway point is good enough, e.g. 5000 is
 * exactly halfway of 10000, but [4996, 5004] count as halfway as well.
 * Treesame commits are never returned, so never taken as a short cut.
 */
static bool approx_halfway(const struct kbisect *b, uint32_t x)
{
	int64_t diff;

	if (b->flags[x] & TREESAME)
		return false;
	diff = 2 * (int64_t)b->weight[x] - b->nr;
	if (diff >= -1 && diff <= 1)
		return true;
	return (diff < 0 ? -diff : diff) < b->nr / 1024;
}

/*
 * x's chain link: its only candidate parent, if x is that parent's only
 * candidate child. A walk down from anywhere else can only enter a chain
 * at its head and then goes all the way to its tail.
 */
static uint32_t link_of(const struct kbisect *b, uint32_t x)
{
	const struct kb_node *c = &b->g->nodes[x];
	uint32_t i, p = NONE;

	for (i = 0; i < c->nparents; i++) {
		if (!(b->flags[c->parents[i]] & IN))
			continue;
		if (p != NONE)
			return NONE;
		p = c->parents[i];
	}
	if (p == NONE || (b->flags[p] & (KID1 | KIDS)) != KID1)
		return NONE;
	return p;
}

/*
 * For count_distance(): cuts the candidates into chains (single parents
 * with single children) and numbers them densely, each with its count of
 * non-treesame commits and the chains its tail's parents head. A walk
 * over those small arrays costs a step per chain, not per commit, and no
 * cache miss into the caller's nodes. O(N + E) per pick; 12 bytes per
 * commit and 4 per parent, allocated when merges are first met.
 */
static void find_chains(struct kbisect *b)
{
	const struct kb_node *nodes = b->g->nodes;
	uint32_t i, k, gen, npar = 0;

	if (!b->seg) {
		size_t edges = 0;

		for (i = 0; i < b->n; i++)
			edges += nodes[i].nparents;
		b->seg = xcalloc(b->n, sizeof(*b->seg));
		b->seg_run = xcalloc(b->n, sizeof(*b->seg_run));
		b->seg_off = xcalloc((size_t)b->n + 1, sizeof(*b->seg_off));
		b->seg_par = xcalloc(edges + 1, sizeof(*b->seg_par));
	}
	for (i = 0; i < b->ncand; i++)
		b->flags[b->cand[i]] &= ~(KID1 | KIDS);
	for (i = 0; i < b->ncand; i++) {
		const struct kb_node *c = &nodes[b->cand[i]];

		for (k = 0; k < c->nparents; k++) {
			uint8_t *f = &b->flags[c->parents[k]];

			if (*f & IN)
				*f |= (*f & KID1) ? KIDS : KID1;
		}
	}

	/* down each chain to its tail, or to a part already numbered */
	gen = next_gen(b);
	b->nseg = 0;
	for (i = 0; i < b->ncand; i++) {
		uint32_t y = b->cand[i], last = y, sp = 0, s;

		while (y != NONE && b->stamp[y] != gen) {
			b->stamp[y] = gen;
			b->stack[sp++] = y;
			last = y;
			y = link_of(b, y);
		}
		if (!sp)
			continue;
		if (y != NONE) {
			s = b->seg[y];
		} else {
			/* a new chain, tail last: note its parents' commits */
			const struct kb_node *c = &nodes[last];

			s = b->nseg++;
			b->seg_run[s] = 0;
			b->seg_off[s] = npar;
			for (k = 0; k < c->nparents; k++)
				if (b->flags[c->parents[k]] & IN)
					b->seg_par[npar++] = c->parents[k];
		}
		while (sp) {
			y = b->stack[--sp];
			b->seg[y] = s;
			if (!(b->flags[y] & TREESAME))
				b->seg_run[s]++;
		}
	}
	b->seg_off[b->nseg] = npar;
	/* every parent of a tail heads a chain: commits to chains */
	for (k = 0; k < npar; k++)
		b->seg_par[k] = b->seg[b->seg_par[k]];
}

/*
 * git's count_distance(): the non-treesame candidates a merge reaches,
 * itself included. The same walk, chain by chain: a merge is the tail of
 * its chain, and every chain entered from below is entered at its head
 * and walked to its tail (the stamps here are per chain).
 */
static int32_t count_distance(struct kbisect *b, uint32_t m)
{
	const uint32_t *off = b->seg_off, *par = b->seg_par;
	uint32_t gen = next_gen(b), sp = 0, s = b->seg[m], k;
	int32_t count = !(b->flags[m] & TREESAME);

	for (;;) {
		for (k = off[s]; k < off[s + 1]; k++) {
			uint32_t p = par[k];

			if (b->stamp[p] == gen)
				continue;
			b->stamp[p] = gen;
			b->stack[sp++] = p;
		}
		if (!sp)
			break;
		s = b->stack[--sp];
		count += (int32_t)b->seg_run[s];
	}
	return count;
}

/* The first candidate parent of x whose weight is known (git's loop). */
static uint32_t known_parent(const struct kbisect *b, uint32_t x)
{
	const struct kb_node *c = &b->g->nodes[x];
	uint32_t i;

	for (i = 0; i < c->nparents; i++) {
		uint32_t p = c->parents[i];

		if (b->first_parent && i)
			break;
		if (!(b->flags[p] & IN))
			continue;
		if (b->weight[p] >= 0)
			return p;
	}
	return NONE;
}

/*
 * git's do_find_bisection(): a weight is the number of non-treesame
 * candidates a commit reaches, itself included; -1 is "one parent, not yet
 * known", -2 "a merge, not yet known". Merges are counted the expensive
 * way first (their parents usually reach the same ancestors, so the
 * parents' weights cannot just be added); then single-parent commits get
 * their parent's weight, plus one for themselves unless treesame, in
 * passes over the oldest-first list until every non-treesame commit is
 * counted (more than one pass only when dates are out of order).
 *
 * Returns the first commit found at approx_halfway(), in git's order.
 * With stop, it returns right there as git does when nothing is skipped;
 * without, it goes on and leaves every weight computed.
 *
 * Like git, "counted" also counts treesame merges, so it can reach nr
 * with a few weights left at -1; those commits are then never picked.
 */
static uint32_t do_find_bisection(struct kbisect *b, bool stop)
{
	uint32_t i, x, counted = 0, hit = NONE;
	int32_t *w = b->weight;
	bool progress = true, chains = false;

	for (i = 0; i < b->ncand; i++) {
		x = b->cand[i];
		switch (interesting_parents(b, x)) {
		case 0:
			if (!(b->flags[x] & TREESAME)) {
				w[x] = 1;
				counted++;
			} else {
				w[x] = 0;
			}
			break;
		case 1:
			w[x] = -1;
			break;
		default:
			w[x] = -2;
			break;
		}
	}

	for (i = 0; i < b->ncand; i++) {
		x = b->cand[i];
		if (w[x] != -2)
			continue;
		if (!chains) {
			find_chains(b);
			chains = true;
		}
		w[x] = count_distance(b, x);
		if (hit == NONE && approx_halfway(b, x)) {
			hit = x;
			if (stop)
				return hit;
		}
		counted++;
	}

	while (counted < b->nr && progress) {
		progress = false;
		for (i = 0; i < b->ncand; i++) {
			uint32_t q;

			x = b->cand[i];
			if (w[x] >= 0)
				continue;
			q = known_parent(b, x);
			if (q == NONE)
				continue;
			progress = true;
			if (!(b->flags[x] & TREESAME)) {
				w[x] = w[q] + 1;
				counted++;
			} else {
				w[x] = w[q];
			}
			if (hit == NONE && approx_halfway(b, x)) {
				hit = x;
				if (stop)
					return hit;
			}
		}
	}
	return hit;
}

/* git's best_bisection(): max of min(w, nr - w); the oldest wins ties. */
static uint32_t best_bisection(const struct kbisect *b)
{
	uint32_t i, best = b->ncand ? b->cand[0] : NONE;
	int64_t best_d = -1;

	for (i = 0; i < b->ncand; i++) {
		uint32_t x = b->cand[i];
		int64_t d;

		if (b->flags[x] & TREESAME)
			continue;
		d = b->weight[x];
		if ((int64_t)b->nr - d < d)
			d = (int64_t)b->nr - d;
		if (d > best_d) {
			best = x;
			best_d = d;
		}
	}
	return best;
}

/* Distance descending, then object id ascending (hex sorts as binary). */
static int cmp_dist(const void *pa, const void *pb)
{
	const struct dist *a = pa, *b = pb;

	if (a->d != b->d)
		return a->d > b->d ? -1 : 1;
	return strcmp(a->id, b->id);
}

/*
 * A pseudo-random number from "man 3 rand", seeded with its argument, as
 * git's get_prn() does.
 */
static uint32_t get_prn(uint32_t count)
{
	count = count * 1103515245u + 12345u;
	return (count / 65536) % PRN_MODULO;
}

/*
 * git's sqrti() is a float Newton loop; on every value it is called with
 * (0 to 32768) it equals the integer square root, which needs no libm
 * (test_sqrti runs git's loop against the integer root over that range).
 */
static int32_t sqrti(uint32_t val)
{
	uint32_t r = 0, bit = 1u << 30;

	while (bit > val)
		bit >>= 2;
	while (bit) {
		if (val >= r + bit) {
			val -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return (int32_t)r;
}

/*
 * git's skip_away(): the best commit is skipped, so take one at a
 * pseudo-random place of the sorted non-skipped list, nearer the front
 * more often (the sqrt), never the bad one if it can be helped. git does
 * this arithmetic in int: count * prn wraps for count > 65535, which can
 * make the index negative and the choice the list's head; we wrap the
 * same way.
 */
static uint32_t skip_away(const struct kbisect *b, const struct dist *list,
			  uint32_t count)
{
	uint32_t prn = get_prn(count);
	int32_t index = (int32_t)(count * prn);

	if (!count)
		return NONE;
	index = index / PRN_MODULO * sqrti(prn) / sqrti(PRN_MODULO);
	if (index < 0 || (uint32_t)index >= count)
		return list[0].x;
	if (list[index].x != b->bad)
		return list[index].x;
	return index ? list[index - 1].x : list[0].x;
}

struct pick {
	enum kb_kind kind;
	uint32_t x;
	int64_t reaches;
};

/*
 * git's bisect_next_all() on the current candidates: find_bisection(),
 * managed_skipped(), then the checks on its result. With all, every
 * weight is left computed (for k-ary splits).
 */
static void git_pick(struct kbisect *b, bool all, struct pick *pk)
{
	uint32_t first, i, cnt = 0, count = 0;

	pk->kind = KB_TEST;
	pk->x = NONE;
	pk->reaches = 0;
	b->nonly = 0;

	if (!b->any_skip) {
		uint32_t hit = do_find_bisection(b, !all);

		pk->x = hit != NONE ? hit : best_bisection(b);
		if (pk->x != NONE)
			pk->reaches = b->weight[pk->x];
	} else {
		/* FIND_BISECTION_ALL: best_bisection_sorted() */
		do_find_bisection(b, false);
		if (!b->dist)
			b->dist = xcalloc(b->n, sizeof(*b->dist));
		for (i = 0; i < b->ncand; i++) {
			uint32_t x = b->cand[i];
			int32_t d = b->weight[x];

			if (b->flags[x] & TREESAME)
				continue;
			if ((int64_t)b->nr - d < d)
				d = (int32_t)b->nr - d;
			b->dist[cnt].id = id_of(b, x);
			b->dist[cnt].x = x;
			b->dist[cnt].d = d;
			cnt++;
		}
		qsort(b->dist, cnt, sizeof(*b->dist), cmp_dist);
		/* with nothing countable, git's list keeps its oldest commit */
		first = cnt ? b->dist[0].x : b->cand[0];
		pk->reaches = b->weight[first];
		if (!(b->flags[first] & SKIPPED)) {
			pk->x = first;
		} else {
			/* filter_skipped(): skipped ones are "tried" */
			if (!b->only)
				b->only = xcalloc((size_t)b->n + 1,
						  sizeof(*b->only));
			if (!cnt)
				b->only[b->nonly++] = id_of(b, first);
			for (i = 0; i < cnt; i++) {
				if (b->flags[b->dist[i].x] & SKIPPED)
					b->only[b->nonly++] = b->dist[i].id;
				else
					b->dist[count++] = b->dist[i];
			}
			pk->x = skip_away(b, b->dist, count);
		}
	}

	if (pk->x == NONE) {
		if (b->nonly) {
			pk->kind = KB_ONLY_SKIPPED;
		} else {
			pk->kind = KB_FAILED;
			say(b->why, sizeof(b->why), "%s was both good and bad",
			    id_of(b, b->bad));
		}
		return;
	}
	if (!b->nr) {
		pk->kind = KB_FAILED;
		say(b->why, sizeof(b->why),
		    "No testable commit found.\n"
		    "Maybe you started with bad path arguments?");
		return;
	}
	if (pk->x == b->bad) {
		if (b->nonly) {
			b->only[b->nonly++] = id_of(b, b->bad);
			pk->kind = KB_ONLY_SKIPPED;
		} else {
			pk->kind = KB_FOUND;
		}
	}
}

/* ---- handing out ---- */

/* git's estimate_bisect_steps() */
int kbisect_estimate_steps(size_t all)
{
	size_t e = 1;
	int n = 0;

	if (all < 3)
		return 0;
	while (e <= all / 2) {
		e <<= 1;
		n++;
	}
	/* P(2^n + x) < 0.5 means 2^n < 3x */
	return e < 3 * (all - e) ? n : n - 1;
}

static struct kb_step *new_step(struct kb_step *steps, size_t *n,
				enum kb_kind kind, enum kb_purpose purpose,
				const char *id)
{
	struct kb_step *s = &steps[(*n)++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->purpose = purpose;
	s->id = id;
	return s;
}

static void emit_test(struct kbisect *b, struct kb_step *steps, size_t *n,
		      enum kb_purpose purpose, uint32_t x, int64_t reaches)
{
	struct kb_step *s = new_step(steps, n, KB_TEST, purpose, id_of(b, x));
	int64_t left = (int64_t)b->nr - reaches - 1;

	s->left = left > 0 ? (size_t)left : 0;
	s->steps = kbisect_estimate_steps(b->nr);
	b->flags[x] |= PENDING;
}

/* Checks first, then merge bases; true while any is not done. */
static bool hand_specials(struct kbisect *b, struct kb_step *steps,
			  size_t max, size_t *n)
{
	int phase;
	size_t i;

	for (phase = 0; phase < 2; phase++) {
		bool open = false;

		for (i = 0; i < b->nsp; i++) {
			struct special *sp = &b->sp[i];
			struct kb_step *s;

			if ((sp->purpose == KB_FOR_MERGE_BASE) != phase ||
			    sp->state == SP_DONE)
				continue;
			open = true;
			if (sp->state != SP_TODO || *n >= max)
				continue;
			s = new_step(steps, n, KB_TEST, sp->purpose, sp->id);
			s->left = b->nr;
			s->steps = kbisect_estimate_steps(b->nr) + 1;
			sp->state = SP_OUT;
		}
		if (open) {
			if (!*n)
				new_step(steps, n, KB_WAIT, KB_FOR_BISECT,
					 NULL);
			return true;
		}
	}
	return false;
}

static bool eligible(const struct kbisect *b, uint32_t x)
{
	int32_t w = b->weight[x];

	return !(b->flags[x] & (TREESAME | SKIPPED | PENDING)) &&
	       x != b->bad && w >= 1 && (uint32_t)w < b->nr;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* The eligible commit whose weight is nearest t; the oldest wins ties. */
static uint32_t nearest(const struct kbisect *b, int64_t t)
{
	int64_t best_d = INT64_MAX;
	uint32_t i, best = NONE;

	for (i = 0; i < b->ncand; i++) {
		uint32_t x = b->cand[i];
		int64_t d;

		if (!eligible(b, x))
			continue;
		d = b->weight[x] - t;
		if (d < 0)
			d = -d;
		if (d < best_d) {
			best_d = d;
			best = x;
		}
	}
	return best;
}

/*
 * k-ary: fills the free slots so that the commits under test (the pending
 * ones, git's pick among them) cut the weights 0..nr into parts as equal
 * as they can. The pending weights cut 0..nr into gaps; each slot goes to
 * the gap where one more cut lowers the sum of squared parts most (the
 * expected size of what is left, for a culprit anywhere), and a gap with
 * s slots is cut at its s+1 equal points. With git's pick at the half,
 * three slots give the quartiles, seven the octiles: log base k+1. Each
 * target gets the eligible commit of nearest weight (never treesame,
 * skipped, pending or the bad one). Weights must be all computed.
 * Cost O(slots * (pending + candidates)).
 */
static void fill(struct kbisect *b, struct kb_step *steps, size_t max,
		 size_t *n)
{
	size_t slots = max - *n, npts = 0, i, j;
	int64_t *cut;
	size_t *split;

	for (i = 0; i < b->ncand; i++) {
		uint32_t x = b->cand[i];

		if ((b->flags[x] & PENDING) && !(b->flags[x] & TREESAME) &&
		    b->weight[x] >= 0)
			npts++;
	}
	cut = xcalloc(npts + 2, sizeof(*cut));
	split = xcalloc(npts + 1, sizeof(*split));
	npts = 0;
	for (i = 0; i < b->ncand; i++) {
		uint32_t x = b->cand[i];

		if ((b->flags[x] & PENDING) && !(b->flags[x] & TREESAME) &&
		    b->weight[x] >= 0)
			cut[1 + npts++] = b->weight[x];
	}
	qsort(cut + 1, npts, sizeof(*cut), cmp_i64);
	cut[npts + 1] = b->nr;

	for (j = 0; j < slots; j++) {
		double gain, best_gain = -1;
		size_t best = 0;

		for (i = 0; i <= npts; i++) {
			double len = (double)(cut[i + 1] - cut[i]);

			/* L^2/(s+1) - L^2/(s+2) */
			gain = len * len /
			       ((split[i] + 1.0) * (split[i] + 2.0));
			if (gain > best_gain) {
				best_gain = gain;
				best = i;
			}
		}
		split[best]++;
	}

	for (i = 0; i <= npts; i++) {
		int64_t len = cut[i + 1] - cut[i], parts = split[i] + 1;

		for (j = 1; j <= split[i] && *n < max; j++) {
			int64_t t = cut[i] + (2 * len * (int64_t)j + parts) /
					     (2 * parts);
			uint32_t x = nearest(b, t);

			if (x == NONE)
				goto out;
			emit_test(b, steps, n, KB_FOR_BISECT, x, b->weight[x]);
		}
	}
out:
	free(split);
	free(cut);
}

void kbisect_next(struct kbisect *b, struct kb_step *steps, size_t max,
		  size_t *n)
{
	struct pick pk;
	uint32_t i, pending = 0, x = NONE;
	struct kb_step *s;

	*n = 0;
	if (!steps || !max)
		return;
	if (b->outcome == FAILED) {
		s = new_step(steps, n, KB_FAILED, KB_FOR_BISECT, NULL);
		memcpy(s->why, b->why, sizeof(s->why));
		return;
	}
	if (hand_specials(b, steps, max, n))
		return;

	for (i = 0; i < b->ncand; i++)
		if (b->flags[b->cand[i]] & PENDING)
			pending++;
	git_pick(b, max > 1 || pending, &pk);

	switch (pk.kind) {
	case KB_FOUND:
		b->outcome = FOUND;
		b->found = pk.x;
		new_step(steps, n, KB_FOUND, KB_FOR_BISECT, id_of(b, pk.x));
		return;
	case KB_ONLY_SKIPPED:
		b->outcome = ONLY_SKIPPED;
		s = new_step(steps, n, KB_ONLY_SKIPPED, KB_FOR_BISECT, NULL);
		s->left = b->nonly;
		say(s->why, sizeof(s->why),
		    "There are only 'skip'ped commits left to test.");
		return;
	case KB_FAILED:
		b->outcome = FAILED;
		s = new_step(steps, n, KB_FAILED, KB_FOR_BISECT, NULL);
		memcpy(s->why, b->why, sizeof(s->why));
		return;
	default:
		break;
	}
	b->outcome = RUNNING;

	if (!b->start_done) {
		b->start_done = true;
		x = lookup(b, b->start);
		if (x != NONE && ((b->flags[x] & (IN | PENDING | SKIPPED)) !=
				  IN || x == b->bad))
			x = NONE;
	}
	if (x != NONE)
		emit_test(b, steps, n, KB_FOR_START, x,
			  reach(b, x, b->first_parent, IN, 0));
	else if (!(b->flags[pk.x] & PENDING))
		emit_test(b, steps, n, KB_FOR_BISECT, pk.x, pk.reaches);

	if (*n < max)
		fill(b, steps, max, n);
	if (!*n)
		new_step(steps, n, KB_WAIT, KB_FOR_BISECT, NULL);
}

/* ---- verdicts ---- */

static void record(struct kbisect *b, const char *id, enum kb_verdict v,
		   bool replay)
{
	if (b->nmarks == b->marks_cap) {
		b->marks_cap = b->marks_cap ? 2 * b->marks_cap : 16;
		b->marks = xrealloc(b->marks,
				    b->marks_cap * sizeof(*b->marks));
	}
	b->marks[b->nmarks].id = id;
	b->marks[b->nmarks].v = v;
	b->marks[b->nmarks].replay = replay;
	b->nmarks++;
	/* the candidates may change: found or only-skipped is recomputed */
	b->outcome = RUNNING;
	b->found = NONE;
}

static int fail(struct kbisect *b, char *why, size_t whylen)
{
	b->outcome = FAILED;
	say(why, whylen, "%s", b->why);
	return -1;
}

static int cmp_str(const void *pa, const void *pb)
{
	return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/*
 * The good commits as git lists them in its messages: its good refs,
 * sorted by name, i.e. by id, space-separated.
 */
static void good_list(const struct kbisect *b, struct sbuf *out)
{
	const char **v = xcalloc(b->ngoods + b->nmarks + 1, sizeof(*v));
	size_t i, k = 0;

	for (i = 0; i < b->ngoods; i++)
		v[k++] = b->goods[i];
	for (i = 0; i < b->nmarks; i++)
		if (b->marks[i].v == KB_GOOD)
			v[k++] = b->marks[i].id;
	qsort(v, k, sizeof(*v), cmp_str);
	for (i = 0; i < k; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (out->len)
			sbuf_addc(out, ' ');
		sbuf_adds(out, v[i]);
	}
	free(v);
}

static int mark_special(struct kbisect *b, struct special *sp,
			enum kb_verdict v, char *why, size_t whylen)
{
	struct sbuf goods;
	const char *name = sp->purpose == KB_FOR_CHECK_BAD ? "BISECT_BAD" :
			   "BISECT_GOOD";
	enum kb_verdict want = sp->purpose == KB_FOR_CHECK_BAD ? KB_BAD :
			       KB_GOOD;

	sp->state = SP_DONE;
	if (sp->purpose != KB_FOR_MERGE_BASE) {
		if (v == want)
			return 0;
		if (v == KB_SKIP)
			say(b->why, sizeof(b->why),
			    "%s [%s] could not be tested (skipped)", name,
			    sp->id);
		else
			say(b->why, sizeof(b->why), "%s [%s] tested %s", name,
			    sp->id, kbisect_verdict_word(v));
		return fail(b, why, whylen);
	}

	/* git's check_merge_bases() */
	record(b, sp->id, v, true);
	if (v == KB_GOOD)
		return 0;
	sbuf_init(&goods);
	good_list(b, &goods);
	if (v == KB_SKIP) {
		b->any_skip = true;
		say(why, whylen,
		    "warning: the merge base between %s and [%s] must be skipped.\n"
		    "So we cannot be sure the first bad commit is between %s and %s.\n"
		    "We continue anyway.", id_of(b, b->bad), sbuf_str(&goods),
		    sp->id, id_of(b, b->bad));
		sbuf_free(&goods);
		return 0;
	}
	say(b->why, sizeof(b->why),
	    "The merge base %s is bad.\n"
	    "This means the bug has been fixed between %s and [%s].",
	    sp->id, sp->id, sbuf_str(&goods));
	sbuf_free(&goods);
	return fail(b, why, whylen);
}

static struct special *find_special(struct kbisect *b, const char *id)
{
	size_t i;

	for (i = 0; i < b->nsp; i++) {
		struct special *sp = &b->sp[i];

		if (sp->state == SP_DONE && sp->purpose != KB_FOR_MERGE_BASE)
			continue;
		if (!strcmp(sp->id, id))
			return sp;
	}
	return NULL;
}

/* A verdict for a commit not in the graph: one of the goods, or unknown. */
static int mark_outside(struct kbisect *b, const char *id, enum kb_verdict v,
			char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < b->ngoods; i++) {
		if (strcmp(b->goods[i], id))
			continue;
		if (v == KB_BAD) {
			say(why, whylen, "%s was both good and bad", id);
			return -1;
		}
		if (v == KB_SKIP)
			b->any_skip = true;
		record(b, b->goods[i], v, true);
		return 0;
	}
	say(why, whylen,
	    "unknown commit %s: not between the good and the bad commits", id);
	return -1;
}

static int mark_good(struct kbisect *b, uint32_t x, char *why, size_t whylen)
{
	if (x == b->bad) {
		say(why, whylen, "%s was both good and bad", id_of(b, x));
		return -1;
	}
	if (!(b->flags[x] & (IN | GOOD_REACH))) {
		/* no candidate: fine unless it reaches the bad commit */
		reach(b, x, false, 0, GOOD_REACH);
		if (b->stamp[b->bad] == b->gen) {
			say(why, whylen,
			    "%s tested good but reaches the bad commit %s",
			    id_of(b, x), id_of(b, b->bad));
			return -1;
		}
	}
	prune_good(b, x);
	record(b, id_of(b, x), KB_GOOD, true);
	return 0;
}

static int mark_bad(struct kbisect *b, uint32_t x, char *why, size_t whylen)
{
	size_t i;

	if (x == b->bad || (b->flags[x] & IN)) {
		if (x != b->bad) {
			b->bad = x;
			narrow_to(b, x);
		}
		record(b, id_of(b, x), KB_BAD, true);
		return 0;
	}
	if (!(b->flags[x] & GOOD_REACH)) {
		/*
		 * Below the bad one (or beside it): true, but it tells
		 * nothing git's one bad ref could hold. Kept in the log as a
		 * comment, so that a replay keeps the better bad.
		 */
		record(b, id_of(b, x), KB_BAD, false);
		return 0;
	}
	for (i = 0; i < b->nmarks; i++) {
		uint32_t g;

		if (b->marks[i].v != KB_GOOD)
			continue;
		g = lookup(b, b->marks[i].id);
		if (g == NONE)
			continue;
		reach(b, g, false, 0, 0);
		if (b->stamp[x] == b->gen)
			break;
	}
	say(why, whylen, "%s tested bad but the good commit %s reaches it",
	    id_of(b, x), i < b->nmarks ? b->marks[i].id : "(?)");
	return -1;
}

int kbisect_mark(struct kbisect *b, const char *id, enum kb_verdict v,
		 char *why, size_t whylen)
{
	struct special *sp;
	uint32_t x;

	say(why, whylen, "%s", "");
	if (!id) {
		say(why, whylen, "no commit given");
		return -1;
	}
	if (v != KB_GOOD && v != KB_BAD && v != KB_SKIP) {
		say(why, whylen, "unknown verdict %d for %s", (int)v, id);
		return -1;
	}
	if (b->outcome == FAILED) {
		say(why, whylen, "the bisect has failed already: %s", b->why);
		return -1;
	}

	sp = find_special(b, id);
	if (sp)
		return mark_special(b, sp, v, why, whylen);
	x = lookup(b, id);
	if (x == NONE)
		return mark_outside(b, id, v, why, whylen);

	b->flags[x] &= ~PENDING;
	if (!b->start_done && !strcmp(b->start, id))
		b->start_done = true;
	switch (v) {
	case KB_GOOD:
		return mark_good(b, x, why, whylen);
	case KB_BAD:
		return mark_bad(b, x, why, whylen);
	case KB_SKIP:
		break;
	}
	b->flags[x] |= SKIPPED;
	b->any_skip = true;
	record(b, id_of(b, x), KB_SKIP, true);
	return 0;
}

bool kbisect_needed(const struct kbisect *b, const char *id)
{
	uint32_t x = id ? lookup(b, id) : NONE;

	return x != NONE && b->outcome == RUNNING &&
	       (b->flags[x] & (IN | PENDING)) == (IN | PENDING) &&
	       x != b->bad;
}

int kbisect_release(struct kbisect *b, const char *id)
{
	uint32_t x = id ? lookup(b, id) : NONE;

	if (x == NONE || !(b->flags[x] & PENDING))
		return -1;
	b->flags[x] &= ~PENDING;
	return 0;
}

size_t kbisect_remaining(const struct kbisect *b)
{
	return b->nr;
}

const char *kbisect_bad(const struct kbisect *b)
{
	return id_of(b, b->bad);
}

size_t kbisect_candidates(const struct kbisect *b, const char ***ids)
{
	if (b->outcome != ONLY_SKIPPED) {
		*ids = NULL;
		return 0;
	}
	*ids = b->only;
	return b->nonly;
}

/* ---- setting up ---- */

static bool valid_id(const char *id)
{
	return id && id[0] && memchr(id, '\0', KB_ID_LEN);
}

/* Kahn's algorithm: every commit comes out iff there is no cycle. */
static uint32_t find_cycle(struct kbisect *b)
{
	const struct kb_node *nodes = b->g->nodes;
	uint32_t *indeg = b->stamp, *queue = b->stack;
	uint32_t x, i, head = 0, tail = 0;

	for (x = 0; x < b->n; x++)
		for (i = 0; i < nodes[x].nparents; i++)
			indeg[nodes[x].parents[i]]++;
	for (x = 0; x < b->n; x++)
		if (!indeg[x])
			queue[tail++] = x;
	while (head < tail) {
		x = queue[head++];
		for (i = 0; i < nodes[x].nparents; i++)
			if (!--indeg[nodes[x].parents[i]])
				queue[tail++] = nodes[x].parents[i];
	}
	x = NONE;
	if (tail < b->n)
		for (x = 0; indeg[x] == 0; x++)
			;
	memset(indeg, 0, b->n * sizeof(*indeg));
	return x;
}

/* One commit: its id goes into the hash, its parents must be in range. */
static int check_commit(struct kbisect *b, uint32_t x, uint32_t h, char *why,
			size_t whylen)
{
	const struct kb_node *c = &b->g->nodes[x];
	uint32_t i;

	if (!insert(b, x, h)) {
		say(why, whylen, "commit %s is listed twice", c->id);
		return -1;
	}
	if (c->nparents && !c->parents) {
		say(why, whylen, "commit %s has no parent array", c->id);
		return -1;
	}
	for (i = 0; i < c->nparents; i++) {
		if (c->parents[i] >= b->n || c->parents[i] == x) {
			say(why, whylen,
			    "commit %s has a parent #%u out of the graph",
			    c->id, c->parents[i]);
			return -1;
		}
	}
	if (c->treesame)
		b->flags[x] |= TREESAME;
	return 0;
}

/* Validates the graph and fills the id hash. */
static int check_graph(struct kbisect *b, char *why, size_t whylen)
{
	const struct kb_node *nodes = b->g->nodes;
	uint32_t x;

	for (x = 0; x < b->n; x++) {
		if (!valid_id(nodes[x].id)) {
			say(why, whylen, "commit #%u has no valid id", x);
			return -1;
		}
		if (check_commit(b, x, hash_id(nodes[x].id), why, whylen))
			return -1;
	}
	x = find_cycle(b);
	if (x != NONE) {
		say(why, whylen, "the graph has a cycle through commit %s",
		    nodes[x].id);
		return -1;
	}
	return 0;
}

static int add_specials(struct kbisect *b, const struct kb_options *o,
			char *why, size_t whylen)
{
	size_t i, j;

	b->sp = xcalloc(2 + b->ngoods + o->nmerge_bases, sizeof(*b->sp));
	b->bases = xcalloc(o->nmerge_bases + 1, sizeof(*b->bases));
	if (o->check_bad) {
		b->sp[b->nsp].id = id_of(b, 0);
		b->sp[b->nsp++].purpose = KB_FOR_CHECK_BAD;
	}
	for (i = 0; o->check_good && i < b->ngoods; i++) {
		b->sp[b->nsp].id = b->goods[i];
		b->sp[b->nsp++].purpose = KB_FOR_CHECK_GOOD;
	}
	for (i = 0; i < o->nmerge_bases; i++) {
		const char *mb = o->merge_bases[i];
		bool known = false;

		if (!valid_id(mb) || lookup(b, mb) != NONE) {
			say(why, whylen, "merge base %s is %s", mb ? mb : "",
			    mb ? "a candidate" : "missing");
			return -1;
		}
		/* a merge base that is good already needs no test */
		for (j = 0; j < b->ngoods; j++)
			known |= !strcmp(b->goods[j], mb);
		for (j = 0; j < b->nbases; j++)
			known |= !strcmp(b->bases[j], mb);
		if (known)
			continue;
		b->bases[b->nbases] = xstrdup(mb);
		b->sp[b->nsp].id = b->bases[b->nbases++];
		b->sp[b->nsp++].purpose = KB_FOR_MERGE_BASE;
	}
	return 0;
}

struct kbisect *kbisect_new(const struct kb_graph *g, const char *const *goods,
			    size_t ngoods, const struct kb_options *o,
			    char *why, size_t whylen)
{
	static const struct kb_options none;
	struct kbisect *b;
	uint32_t x, size = 2;

	say(why, whylen, "%s", "");
	if (!o)
		o = &none;
	if (!g || !g->n || !g->nodes) {
		say(why, whylen, "the graph is empty: no bad commit");
		return NULL;
	}
	if (g->n >= (1u << 30)) {
		say(why, whylen, "the graph is too large (%zu commits)", g->n);
		return NULL;
	}
	b = xcalloc(1, sizeof(*b));
	b->g = g;
	b->n = (uint32_t)g->n;
	b->first_parent = o->first_parent;
	b->found = NONE;
	while (size < 2 * b->n)
		size <<= 1;
	b->mask = size - 1;
	b->slot = xcalloc(size, sizeof(*b->slot));
	b->flags = xcalloc(b->n, sizeof(*b->flags));
	b->weight = xcalloc(b->n, sizeof(*b->weight));
	b->stamp = xcalloc(b->n, sizeof(*b->stamp));
	b->stack = xcalloc(b->n, sizeof(*b->stack));
	b->cand = xcalloc(b->n, sizeof(*b->cand));
	if (check_graph(b, why, whylen))
		goto fail;

	b->goods = xcalloc(ngoods + 1, sizeof(*b->goods));
	for (; b->ngoods < ngoods; b->ngoods++) {
		const char *id = goods[b->ngoods];

		if (!valid_id(id)) {
			say(why, whylen, "good commit #%zu has no valid id",
			    b->ngoods);
			goto fail;
		}
		if (lookup(b, id) != NONE) {
			say(why, whylen,
			    "good commit %s is in the graph of candidates", id);
			goto fail;
		}
		b->goods[b->ngoods] = xstrdup(id);
	}

	/* the candidates: what bad reaches (first parents only, if asked) */
	reach(b, 0, b->first_parent, 0, 0);
	for (x = b->n; x-- > 0;) {
		if (b->stamp[x] == b->gen) {
			b->flags[x] |= IN;
			b->cand[b->ncand++] = x;
			if (!(b->flags[x] & TREESAME))
				b->nr++;
		} else if (!b->first_parent) {
			say(why, whylen,
			    "commit %s is not reachable from the bad commit %s",
			    id_of(b, x), id_of(b, 0));
			goto fail;
		}
	}

	if (add_specials(b, o, why, whylen))
		goto fail;
	if (o->start)
		b->start = xstrdup(o->start);
	else
		b->start_done = true;
	return b;
fail:
	kbisect_free(b);
	return NULL;
}

void kbisect_free(struct kbisect *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->ngoods; i++)
		free(b->goods[i]);
	for (i = 0; i < b->nbases; i++)
		free(b->bases[i]);
	free(b->goods);
	free(b->bases);
	free(b->start);
	free(b->sp);
	free(b->marks);
	free(b->dist);
	free(b->only);
	free(b->slot);
	free(b->flags);
	free(b->weight);
	free(b->stamp);
	free(b->stack);
	free(b->cand);
	free(b->seg);
	free(b->seg_run);
	free(b->seg_off);
	free(b->seg_par);
	free(b);
}

/* ---- the log ---- */

/* git's sq_quote_buf(), with the space sq_quote_argv() puts before */
static void sq_quote(FILE *out, const char *s)
{
	fputs(" '", out);
	for (; *s; s++) {
		if (*s == '\'' || *s == '!')
			fprintf(out, "'\\%c'", *s);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* git's log_commit(): "# <label>: [<id>] <subject>" */
static void log_commit(FILE *out, const char *label, const char *id,
		       kb_subject_fn subject, void *ctx)
{
	const char *s = subject ? subject(ctx, id) : NULL;

	if (!s)
		s = "";
	fprintf(out, "# %s: [%s] %.*s\n", label, id, (int)strcspn(s, "\n"),
		s);
}

int kbisect_write_log(const struct kbisect *b, const char *const *paths,
		      size_t npaths, FILE *out, kb_subject_fn subject,
		      void *ctx)
{
	size_t i;

	log_commit(out, "bad", id_of(b, 0), subject, ctx);
	for (i = 0; i < b->ngoods; i++)
		log_commit(out, "good", b->goods[i], subject, ctx);
	fputs("git bisect start", out);
	if (b->first_parent)
		sq_quote(out, "--first-parent");
	sq_quote(out, id_of(b, 0));
	for (i = 0; i < b->ngoods; i++)
		sq_quote(out, b->goods[i]);
	if (npaths)
		sq_quote(out, "--");
	for (i = 0; i < npaths; i++)
		sq_quote(out, paths[i]);
	fputc('\n', out);

	for (i = 0; i < b->nmarks; i++) {
		const struct mark *m = &b->marks[i];

		log_commit(out, kbisect_verdict_word(m->v), m->id, subject, ctx);
		if (m->replay)
			fprintf(out, "git bisect %s %s\n", kbisect_verdict_word(m->v),
				m->id);
		else
			fprintf(out,
				"# not replayed: no candidate any more, the bad commit stays\n");
	}

	if (b->outcome == FOUND)
		log_commit(out, "first bad commit", id_of(b, b->found),
			   subject, ctx);
	if (b->outcome == ONLY_SKIPPED) {
		fputs("# only skipped commits left to test\n", out);
		for (i = b->ncand; i-- > 0;)
			log_commit(out, "possible first bad commit",
				   id_of(b, b->cand[i]), subject, ctx);
	}
	fflush(out);
	return ferror(out) ? -1 : 0;
}

/* ---- reading a log (git's process_replay_line()) ---- */

struct replay_ctx {
	struct kb_replay *r;
	char *term_good, *term_bad;	/* NULL: no terms yet */
	size_t line;
	char *why;
	size_t whylen;
};

static void replay_clear(struct kb_replay *r)
{
	size_t i;

	free(r->bad);
	for (i = 0; i < r->ngoods; i++)
		free(r->goods[i]);
	free(r->goods);
	for (i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	for (i = 0; i < r->nmarks; i++)
		free(r->marks[i].rev);
	free(r->marks);
	memset(r, 0, sizeof(*r));
}

void kbisect_replay_free(struct kb_replay *r)
{
	if (r)
		replay_clear(r);
}

static void push_str(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

static void set_terms(struct replay_ctx *c, const char *bad, const char *good)
{
	free(c->term_bad);
	free(c->term_good);
	c->term_bad = xstrdup(bad);
	c->term_good = xstrdup(good);
}

__attribute__((format(printf, 2, 3)))
static int replay_error(struct replay_ctx *c, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say(c->why, c->whylen, "line %zu: %s", c->line, msg);
	return -1;
}

/*
 * git's sq_dequote_to_strvec(), which also takes bare words (git itself
 * would drop the whole start line on one, a worse reading of it).
 */
static int dequote(struct replay_ctx *c, const char *s, char ***argv,
		   size_t *argc)
{
	struct sbuf w;

	sbuf_init(&w);
	for (;;) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		sbuf_reset(&w);
		while (*s && *s != ' ' && *s != '\t') {
			if (*s != '\'') {
				sbuf_addc(&w, *s++);
				continue;
			}
			for (s++; *s && *s != '\''; s++)
				sbuf_addc(&w, *s);
			if (!*s) {
				sbuf_free(&w);
				return replay_error(c, "unterminated quote");
			}
			s++;
			/* '\'' and '\!' continue the word */
			if (s[0] == '\\' && (s[1] == '\'' || s[1] == '!') &&
			    s[2] == '\'') {
				sbuf_addc(&w, s[1]);
				s += 2;
			}
		}
		push_str(argv, argc, sbuf_str(&w));
	}
	sbuf_free(&w);
	return 0;
}

static void free_argv(char **argv, size_t argc)
{
	size_t i;

	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* git's bisect_start() on the arguments of a start line */
static int replay_start(struct replay_ctx *c, const char *args)
{
	struct kb_replay *r = c->r;
	char **argv = NULL, *tgood = NULL, *tbad = NULL;
	size_t argc = 0, i;
	bool revs = false;
	int ret = -1;

	if (dequote(c, args, &argv, &argc)) {
		free_argv(argv, argc);
		return -1;
	}
	replay_clear(r);
	free(c->term_good);
	free(c->term_bad);
	c->term_good = c->term_bad = NULL;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		char **term = NULL;

		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				push_str(&r->paths, &r->npaths, argv[i]);
			break;
		}
		if (!strcmp(a, "--no-checkout") ||
		    !strcmp(a, "--first-parent"))
			continue;
		if (!strcmp(a, "--term-good") || !strcmp(a, "--term-old") ||
		    !strncmp(a, "--term-good=", 12) ||
		    !strncmp(a, "--term-old=", 11))
			term = &tgood;
		else if (!strcmp(a, "--term-bad") ||
			 !strcmp(a, "--term-new") ||
			 !strncmp(a, "--term-bad=", 11) ||
			 !strncmp(a, "--term-new=", 11))
			term = &tbad;
		if (term) {
			v = strchr(a, '=');
			if (v)
				v++;
			else if (++i < argc)
				v = argv[i];
			if (!v || !*v) {
				replay_error(c, "'' is not a valid term");
				goto out;
			}
			free(*term);
			*term = xstrdup(v);
			continue;
		}
		if (!strncmp(a, "--", 2)) {
			replay_error(c, "unrecognized option: '%s'", a);
			goto out;
		}
		/* without "--" git would take the first non-rev for a path */
		if (!r->bad)
			r->bad = xstrdup(a);
		else
			push_str(&r->goods, &r->ngoods, a);
		revs = true;
	}
	if (revs || tgood || tbad)
		set_terms(c, tbad ? tbad : "bad", tgood ? tgood : "good");
	ret = 0;
out:
	free(tgood);
	free(tbad);
	free_argv(argv, argc);
	return ret;
}

static int replay_mark(struct replay_ctx *c, enum kb_verdict v,
		       const char *word, const char *rev)
{
	struct kb_replay *r = c->r;
	size_t len = strlen(rev);

	while (len && (rev[len - 1] == ' ' || rev[len - 1] == '\t'))
		len--;
	if (!len)
		return replay_error(c, "git bisect %s without a revision",
				    word);
	if (strcspn(rev, " \t") < len)
		return replay_error(c, "'%.*s' is not one revision", (int)len,
				    rev);

	/* until the bisect can start, marks name the bad and the goods */
	if (v == KB_BAD && (!r->bad || !r->ngoods)) {
		free(r->bad);
		r->bad = xstrndup(rev, len);
		return 0;
	}
	if (v == KB_GOOD && (!r->bad || !r->ngoods)) {
		r->goods = xrealloc(r->goods,
				    (r->ngoods + 1) * sizeof(*r->goods));
		r->goods[r->ngoods++] = xstrndup(rev, len);
		return 0;
	}
	r->marks = xrealloc(r->marks, (r->nmarks + 1) * sizeof(*r->marks));
	r->marks[r->nmarks].verdict = v;
	r->marks[r->nmarks].rev = xstrndup(rev, len);
	r->nmarks++;
	return 0;
}

static int replay_line(struct replay_ctx *c, const char *line)
{
	const char *p = line + strspn(line, " \t");
	char word[64];
	size_t wlen;

	if (strncmp(p, "git bisect", 10) && strncmp(p, "git-bisect", 10))
		return 0;
	p += 10;
	if (*p != ' ' && *p != '\t' && *p != '\v' && *p != '\f')
		return 0;
	p += strspn(p, " \t");
	wlen = strcspn(p, " \t");
	if (wlen >= sizeof(word))
		return replay_error(c, "'%.*s'?? what are you talking about?",
				    (int)wlen, p);
	memcpy(word, p, wlen);
	word[wlen] = '\0';
	p += wlen;
	p += strspn(p, " \t");

	/* git's check_and_set_terms() */
	if (strcmp(word, "skip") && strcmp(word, "start") &&
	    strcmp(word, "terms")) {
		if (c->term_bad && strcmp(word, c->term_bad) &&
		    strcmp(word, c->term_good))
			return replay_error(c,
				"Invalid command: you're currently in a %s/%s bisect",
				c->term_bad, c->term_good);
		if (!c->term_bad && (!strcmp(word, "bad") ||
				     !strcmp(word, "good")))
			set_terms(c, "bad", "good");
		if (!c->term_bad && (!strcmp(word, "new") ||
				     !strcmp(word, "old")))
			set_terms(c, "new", "old");
	}

	if (!strcmp(word, "start"))
		return replay_start(c, p);
	if (!strcmp(word, "skip"))
		return replay_mark(c, KB_SKIP, word, p);
	if (c->term_bad && !strcmp(word, c->term_bad))
		return replay_mark(c, KB_BAD, word, p);
	if (c->term_good && !strcmp(word, c->term_good))
		return replay_mark(c, KB_GOOD, word, p);
	if (!strcmp(word, "terms"))
		return 0;
	return replay_error(c, "'%s'?? what are you talking about?", word);
}

int kbisect_parse_log(const char *text, struct kb_replay *r, char *why,
		      size_t whylen)
{
	struct replay_ctx c = { .r = r, .why = why, .whylen = whylen };
	struct sbuf line;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	say(why, whylen, "%s", "");
	if (!text)
		return 0;
	sbuf_init(&line);
	while (*text && !ret) {
		size_t len = strcspn(text, "\n");

		c.line++;
		sbuf_reset(&line);
		sbuf_addn(&line, text, len);
		if (len && line.buf[len - 1] == '\r')
			line.buf[--line.len] = '\0';
		ret = replay_line(&c, sbuf_str(&line));
		text += len;
		if (*text)
			text++;
	}
	sbuf_free(&line);
	free(c.term_good);
	free(c.term_bad);
	if (ret)
		replay_clear(r);
	return ret;
}

/* ---- verdicts from results ---- */

enum kb_result kbisect_test_result(const struct kb_retmap *m, int status)
{
	static const enum kb_result from_default[] = {
		[KB_DEFAULT_GOOD] = KB_R_GOOD,
		[KB_DEFAULT_BAD] = KB_R_BAD,
		[KB_DEFAULT_SKIP] = KB_R_SKIP,
		[KB_DEFAULT_ABORT] = KB_R_ABORT,
	};

	if (m) {
		if (m->ret_good >= 0 && status == m->ret_good)
			return KB_R_GOOD;
		if (m->ret_bad >= 0 && status == m->ret_bad)
			return KB_R_BAD;
		if (m->ret_skip >= 0 && status == m->ret_skip)
			return KB_R_SKIP;
		if (m->ret_abort >= 0 && status == m->ret_abort)
			return KB_R_ABORT;
		if (status && m->ret_default != KB_DEFAULT_NONE &&
		    m->ret_default <= KB_DEFAULT_ABORT)
			return from_default[m->ret_default];
	}
	/* git bisect run */
	if (status == 0)
		return KB_R_GOOD;
	if (status == 125)
		return KB_R_SKIP;
	if (status >= 1 && status <= 127)
		return KB_R_BAD;
	return KB_R_ABORT;
}

enum kb_result kbisect_combine_tries(const enum kb_result *runs, size_t n)
{
	bool bad = false, good = false, skip = false;
	size_t i;

	for (i = 0; i < n; i++) {
		switch (runs[i]) {
		case KB_R_ABORT:
			return KB_R_ABORT;
		case KB_R_BAD:
			bad = true;
			break;
		case KB_R_GOOD:
			good = true;
			break;
		case KB_R_SKIP:
			skip = true;
			break;
		}
	}
	if (bad)
		return KB_R_BAD;
	if (good || !skip)
		return KB_R_GOOD;
	return KB_R_SKIP;
}
