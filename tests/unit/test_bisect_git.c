// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest's bisect beside the real "git bisect" (the git program: tests only),
 * on histories written here with libgit2 into a mkdtemp() directory.
 *
 * For each history the first bad commit (the culprit) goes to every
 * position in turn, and both bisects get the same oracle: a commit is bad
 * when the culprit is its ancestor or itself, untestable (skip) when it lies
 * in the history's unbuildable stretch, good otherwise.
 *
 *   ours  the graph ktest/vcs.c reads from the repository, the state machine
 *         driven one step at a time;
 *   git   "git bisect start --no-checkout BAD GOOD... [-- PATHS]", then
 *         "git bisect run ORACLE", a shell script that answers from
 *         BISECT_HEAD; its steps and outcome read back from BISECT_LOG.
 *
 * Held: the same outcome (the same first bad commit, or "only skipped
 * commits left" with the same candidates, or git's "No testable commit
 * found"), and our steps <= git's. bisect.c ports git 2.39's bisect.c, so
 * with git 2.39 every pick must be git's, step by step. Then our log, cut
 * after some step (another one for every fourth case), goes to "git bisect
 * replay", which must leave git in our state: the same refs/bisect/bad,
 * good-* and skip-* refs, and the same next commit checked out (or the same
 * first bad commit printed, or the same skipped candidates listed).
 *
 * With paths git's candidate graph is more than the first one pruned: a
 * merge treesame to a parent outside the candidates is simplified to that
 * parent once it is marked good (a merge base, typically), and drops out.
 * Read once, as ktest/run_bisect.c reads it, our graph keeps it: path
 * cases are run both ways, read afresh for every step (held to git as
 * above) and read once (compared, and the differences counted in a WARN
 * line: a known gap of the runner, not of the state machine).
 *
 * Two git 2.39 quirks are worked around where git's own logs and runs hit
 * them too: "git bisect run" stops ("bisect run success") when a verdict
 * leaves another merge base to test, so it is run again; and "git bisect
 * replay" stops at a start line that asks for a merge base first, so a
 * log after such a start must leave git where we stood after the start.
 *
 * The histories: linear; topic branches merged back (with octopus merges),
 * also with --first-parent; criss-cross merges; a path-limited bisect
 * (commits that change p/ and commits that do not, merges that history
 * simplification follows to their side); unbuildable stretches, answered
 * "skip". Commit dates rise with each commit, so git's walk order is fixed.
 * Then random histories: twenty thousand small DAGs checked against a
 * brute-force oracle (the set of first bad commits, computed directly) with
 * no git at all, and a few hundred random cases against git: random good
 * and bad (goods that are no ancestors too: merge bases), one or two
 * culprits, skips, paths, --first-parent. KTEST_SEED=n picks other random
 * histories; the seed is printed.
 *
 * git 2.39's "git bisect" is a shell script that sources git-sh-setup
 * (seven more processes) and then runs "git bisect--helper <same words>".
 * When the installed git-bisect is such a script we call the helper
 * directly: the same C code with the same arguments, five times faster.
 * KTEST_BISECT_PORCELAIN=1 goes through the script instead. Newer git has
 * a built-in "git bisect", used as it is.
 *
 * git runs with HOME in the scratch directory ($TMPDIR or /tmp, removed at
 * the end unless KTEST_KEEP is set), GIT_CONFIG_NOSYSTEM=1 and LC_ALL=C
 * (its messages are read). Without a git program every test that needs one
 * fails, saying so. KTEST_VERBOSE=1 shows the path cases that differ when
 * the graph is read once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>

#include "conf/strmap.h"
#include "ktest/bisect.h"
#include "ktest/vcs.h"

#define BASE_TIME 1600000000
#define MAXPAR 3
#define NONE UINT32_MAX

extern char **environ;

static char top[64];		/* everything the tests make lives here */
static unsigned ndirs;
static bool have_git;
static bool git_239;		/* the version bisect.c ports */
static const char *bisect_cmd = "bisect";	/* or "bisect--helper" */
static char *oracle_path, *replay_path;

/* What the comparisons saw, printed by each test. */
static struct {
	size_t cases, same, ours_steps, git_steps, replays, replay_stops;
	size_t found, skipped, failed, git_runs;
	size_t path_cases, once_differs, once_other_outcome;
	char once_example[128];
} st;

/* ---- plumbing ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *new_dir(void)
{
	char *d = xasprintf("%s/d%u", top, ndirs++);

	assert_int_equal(mkdir(d, 0755), 0);
	return d;
}

static void need_git(void)
{
	if (!have_git)
		fail_msg("the git program is missing (not in PATH): these tests compare ktest's bisect with \"git bisect\" and cannot run without it; .ci/deps.sh installs it");
}

/* An argv under construction. */
struct args {
	char *v[96];
	size_t n;
};

static void arg(struct args *a, const char *s)
{
	assert_true(a->n + 2 < sizeof(a->v) / sizeof(a->v[0]));
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

/* "git -C dir <identity> bisect" */
static void args_bisect(struct args *a, const char *dir)
{
	a->n = 0;
	arg(a, "git");
	arg(a, "-C");
	arg(a, dir);
	arg(a, "-c");
	arg(a, "user.name=t");
	arg(a, "-c");
	arg(a, "user.email=t@t");
	arg(a, bisect_cmd);
}

/*
 * Runs argv (found in PATH, no shell), its stdout and stderr into out.
 * Returns its exit status, or -1 if it did not run or was killed.
 */
static int spawn(struct sbuf *out, char *const *argv)
{
	posix_spawn_file_actions_t fa;
	char buf[4096];
	int fd[2], rc, status;
	ssize_t n;
	pid_t pid;

	sbuf_reset(out);
	if (pipe2(fd, O_CLOEXEC))
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	rc = posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		sbuf_addf(out, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	for (;;) {
		n = read(fd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sbuf_addn(out, buf, (size_t)n);
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	st.git_runs++;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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
	assert_false(ferror(f));
	fclose(f);
	return sbuf_detach(&b);
}

static void spit(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted set of ids. */
struct ids {
	char **v;
	size_t n;
};

static void ids_add(struct ids *s, const char *id)
{
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n++] = xstrdup(id);
}

/* Sorts and drops duplicates. */
static void ids_sort(struct ids *s)
{
	size_t i, k = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	for (i = 0; i < s->n; i++) {
		if (k && !strcmp(s->v[k - 1], s->v[i])) {
			free(s->v[i]);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

static bool ids_equal(const struct ids *a, const struct ids *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

static void ids_print(const char *what, const struct ids *s)
{
	size_t i;

	print_error("  %s (%zu):", what, s->n);
	for (i = 0; i < s->n; i++)
		print_error(" %.10s", s->v[i]);
	print_error("\n");
}

static void ids_free(struct ids *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* ---- a seeded PRNG (xorshift64) ---- */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static void seed(uint64_t s)
{
	rng = s * 0x9e3779b97f4a7c15ULL + 1;
	rnd(1);
}

static uint64_t first_seed(uint64_t dflt)
{
	const char *s = getenv("KTEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

/* ---- histories ---- */

/*
 * n commits, oldest first: a commit's parents come before it, and its
 * commit date is BASE_TIME + 60 * its index (git walks them newest first).
 * A commit that is no merge changes p/f (touch) or o; a merge takes each
 * file from the parent that changed it last.
 */
struct hist {
	const char *name;
	size_t n, cap;
	uint32_t (*par)[MAXPAR];
	uint8_t *np;
	bool *touch;
	char (*h)[KB_ID_LEN];
	struct strmap at;	/* id -> index + 1 */
	git_repository *r;	/* NULL: a graph only */
	struct kvcs *v;
	char *dir;
};

static void hist_init(struct hist *h, const char *name, size_t cap)
{
	memset(h, 0, sizeof(*h));
	h->name = name;
	h->cap = cap;
	h->par = xcalloc(cap, sizeof(*h->par));
	h->np = xcalloc(cap, sizeof(*h->np));
	h->touch = xcalloc(cap, sizeof(*h->touch));
	h->h = xcalloc(cap, sizeof(*h->h));
	strmap_init(&h->at);
}

static uint32_t add(struct hist *h, const uint32_t *par, size_t np)
{
	uint32_t i = (uint32_t)h->n++;
	size_t k;

	assert_true(h->n <= h->cap && np <= MAXPAR);
	for (k = 0; k < np; k++) {
		assert_true(par[k] < i);
		h->par[i][k] = par[k];
	}
	h->np[i] = (uint8_t)np;
	return i;
}

static uint32_t add1(struct hist *h, uint32_t p)
{
	return add(h, &p, 1);
}

static uint32_t add2(struct hist *h, uint32_t p, uint32_t q)
{
	uint32_t par[2] = { p, q };

	return add(h, par, 2);
}

static void hist_free(struct hist *h)
{
	kvcs_close(h->v);
	git_repository_free(h->r);
	if (h->dir && !getenv("KTEST_KEEP"))
		rm_rf(h->dir);
	free(h->dir);
	free(h->par);
	free(h->np);
	free(h->touch);
	free(h->h);
	strmap_free(&h->at, NULL);
}

static uint32_t index_of(const struct hist *h, const char *id)
{
	uintptr_t x = (uintptr_t)strmap_get(&h->at, id);

	if (!x)
		fail_msg("%s: commit %s is not in the history", h->name, id);
	return (uint32_t)(x - 1);
}

/* Made-up ids for graphs that never see git (hex, in no particular order). */
static void fake_ids(struct hist *h)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL;

		snprintf(h->h[i], KB_ID_LEN, "%016llx%024zx",
			 (unsigned long long)x, i);
		strmap_put(&h->at, h->h[i], (void *)(uintptr_t)(i + 1));
	}
}

static void linear(struct hist *h, size_t n)
{
	size_t i;

	add(h, NULL, 0);
	for (i = 1; i < n; i++)
		add1(h, (uint32_t)i - 1);
}

/*
 * A mainline with topic branches: a topic forks from the mainline, gets a
 * few commits while the mainline goes on, and is merged back; topics
 * overlap, and two that are due together go in as one octopus merge.
 */
static void topics(struct hist *h, size_t n, uint64_t s)
{
	struct {
		uint32_t tip;
		size_t due;
	} open[4];
	size_t nopen = 0, i;
	uint32_t main_tip;

	seed(s);
	main_tip = add(h, NULL, 0);
	while (h->n + nopen + 1 < n) {
		unsigned k = rnd(10);
		size_t due[2], ndue = 0;

		for (i = 0; i < nopen && ndue < 2; i++)
			if (open[i].due <= h->n)
				due[ndue++] = i;
		if (ndue) {
			uint32_t par[3] = { main_tip, open[due[0]].tip, 0 };

			if (ndue == 2)
				par[2] = open[due[1]].tip;
			main_tip = add(h, par, 1 + ndue);
			while (ndue--) {
				open[due[ndue]] = open[nopen - 1];
				nopen--;
			}
		} else if (k < 2 && nopen < 4) {
			open[nopen].tip = add1(h, main_tip);
			open[nopen++].due = h->n + 2 + rnd(10);
		} else if (k < 6 && nopen) {
			i = rnd((uint32_t)nopen);
			open[i].tip = add1(h, open[i].tip);
		} else {
			main_tip = add1(h, main_tip);
		}
	}
	while (nopen)
		main_tip = add2(h, main_tip, open[--nopen].tip);
}

/* Two branches that merge each other, round after round. */
static void criss_cross(struct hist *h, size_t rounds)
{
	uint32_t root = add(h, NULL, 0), a = add1(h, root), b = add1(h, root);
	size_t k;

	for (k = 0; k < rounds; k++) {
		uint32_t a2 = add2(h, a, b), b2 = add2(h, b, a);

		a = add1(h, a2);
		b = add1(h, b2);
	}
	add2(h, a, b);
}

/*
 * A random DAG: parents among the last dozen commits, a quarter merges (a
 * few octopus), now and then a new root.
 */
static void random_dag(struct hist *h, size_t n)
{
	size_t i;

	add(h, NULL, 0);
	for (i = 1; i < n; i++) {
		uint32_t par[MAXPAR];
		size_t np = 0, span = i < 12 ? i : 12, k;
		unsigned kind = rnd(100);

		if (i > 3 && kind < 2) {
			add(h, NULL, 0);
			continue;
		}
		par[np++] = (uint32_t)(i - 1 - rnd((uint32_t)span));
		if (kind >= 75) {
			uint32_t q = rnd((uint32_t)i);

			if (q != par[0])
				par[np++] = q;
			q = rnd((uint32_t)i);
			if (kind >= 96 && q != par[0] &&
			    (np < 2 || q != par[1]))
				par[np++] = q;
		}
		/* parents in random order: the first one varies */
		for (k = np; k > 1; k--) {
			uint32_t r = rnd((uint32_t)k), t = par[k - 1];

			par[k - 1] = par[r];
			par[r] = t;
		}
		add(h, par, np);
	}
}

/* ---- writing a history with libgit2 ---- */

static git_oid blob(git_repository *r, const char *name, uint32_t v)
{
	char buf[32];
	git_oid id;
	int n = snprintf(buf, sizeof(buf), "%s %u\n", name, v);

	assert_int_equal(git_blob_create_from_buffer(&id, r, buf, (size_t)n),
			 0);
	return id;
}

/* The tree { o, p/f } of the versions vo and vp. */
static git_oid tree(git_repository *r, uint32_t vo, uint32_t vp)
{
	git_treebuilder *tb;
	git_oid b, sub, t;

	assert_int_equal(git_treebuilder_new(&tb, r, NULL), 0);
	b = blob(r, "f", vp);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "f", &b,
						GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&sub, tb), 0);
	git_treebuilder_clear(tb);
	b = blob(r, "o", vo);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "o", &b,
						GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "p", &sub,
						GIT_FILEMODE_TREE), 0);
	assert_int_equal(git_treebuilder_write(&t, tb), 0);
	git_treebuilder_free(tb);
	return t;
}

static git_oid commit(git_repository *r, const git_oid *t,
		      const git_oid *par, size_t np, int64_t when,
		      const char *msg)
{
	const git_commit *pc[MAXPAR];
	git_signature *sig;
	git_tree *tr;
	git_oid id;
	size_t i;

	for (i = 0; i < np; i++)
		assert_int_equal(git_commit_lookup((git_commit **)&pc[i], r,
						   &par[i]), 0);
	assert_int_equal(git_tree_lookup(&tr, r, t), 0);
	assert_int_equal(git_signature_new(&sig, "A U Thor", "a@example.com",
					   when, 0), 0);
	assert_int_equal(git_commit_create(&id, r, NULL, sig, sig, NULL, msg,
					   tr, np, pc), 0);
	git_signature_free(sig);
	git_tree_free(tr);
	for (i = 0; i < np; i++)
		git_commit_free((git_commit *)pc[i]);
	return id;
}

/*
 * Objects go to memory and then into one pack: loose objects cost a
 * directory and a file each. main points at the last commit and is
 * checked out (git bisect replay checks commits out in the work tree).
 */
static void hist_write(struct hist *h)
{
	git_checkout_options co;
	uint32_t (*ver)[2] = xcalloc(h->n, sizeof(*ver));
	git_oid *id = xcalloc(h->n, sizeof(*id));
	git_indexer_progress prog;
	git_odb_backend *mp;
	git_buf pack = { 0 };
	git_reference *ref;
	git_indexer *ix;
	char err[512], *packdir;
	git_odb *odb;
	size_t i, k;

	h->dir = new_dir();
	assert_int_equal(git_repository_init(&h->r, h->dir, 0), 0);
	assert_int_equal(git_repository_set_head(h->r, "refs/heads/main"), 0);
	assert_int_equal(git_repository_odb(&odb, h->r), 0);
	assert_int_equal(git_mempack_new(&mp), 0);
	assert_int_equal(git_odb_add_backend(odb, mp, 1000), 0);

	for (i = 0; i < h->n; i++) {
		git_oid par[MAXPAR], t;
		char msg[32];

		ver[i][0] = ver[i][1] = (uint32_t)i;
		if (h->np[i])
			memcpy(ver[i], ver[h->par[i][0]], sizeof(ver[i]));
		for (k = 0; k < h->np[i]; k++) {
			par[k] = id[h->par[i][k]];
			if (ver[h->par[i][k]][0] > ver[i][0])
				ver[i][0] = ver[h->par[i][k]][0];
			if (ver[h->par[i][k]][1] > ver[i][1])
				ver[i][1] = ver[h->par[i][k]][1];
		}
		if (h->np[i] == 1)
			ver[i][h->touch[i]] = (uint32_t)i;
		t = tree(h->r, ver[i][0], ver[i][1]);
		snprintf(msg, sizeof(msg), "c%zu\n", i);
		id[i] = commit(h->r, &t, par, h->np[i],
			       BASE_TIME + 60 * (int64_t)i, msg);
		git_oid_tostr(h->h[i], KB_ID_LEN, &id[i]);
		strmap_put(&h->at, h->h[i], (void *)(uintptr_t)(i + 1));
	}

	packdir = xasprintf("%s/.git/objects/pack", h->dir);
	assert_int_equal(git_mempack_dump(&pack, h->r, mp), 0);
	assert_int_equal(git_indexer_new(&ix, packdir, 0, odb, NULL), 0);
	assert_int_equal(git_indexer_append(ix, pack.ptr, pack.size, &prog),
			 0);
	assert_int_equal(git_indexer_commit(ix, &prog), 0);
	git_indexer_free(ix);
	git_buf_dispose(&pack);
	assert_int_equal(git_mempack_reset(mp), 0);
	assert_int_equal(git_odb_refresh(odb), 0);
	git_odb_free(odb);
	free(packdir);

	assert_int_equal(git_reference_create(&ref, h->r, "refs/heads/main",
					      &id[h->n - 1], 1, NULL), 0);
	git_reference_free(ref);
	assert_int_equal(git_checkout_options_init(&co,
					GIT_CHECKOUT_OPTIONS_VERSION), 0);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	assert_int_equal(git_checkout_head(h->r, &co), 0);
	h->v = kvcs_open(h->dir, err, sizeof(err));
	if (!h->v)
		fail_msg("kvcs_open(%s): %s", h->dir, err);
	free(ver);
	free(id);
}

/* ---- one case: a history, bad, goods, culprits, the oracle ---- */

struct kase {
	struct hist *h;
	uint32_t bad;
	uint32_t goods[4];
	size_t ngoods;
	const char *const *paths;
	size_t npaths;
	bool first_parent;
	const bool *skip;	/* untestable commits, or NULL */
	bool *isbad;		/* reaches a culprit */
	uint32_t expect;	/* the first bad commit to find, or NONE */
	char label[128];
};

/* The graph (and merge bases) of bad --not goods, read by vcs.c. */
struct setup {
	struct kb_graph g;
	char **bases;
	size_t nbases;
	const char *goods[4];
};

static void setup_read(struct setup *s, const struct kase *k)
{
	size_t i;

	for (i = 0; i < k->ngoods; i++)
		s->goods[i] = k->h->h[k->goods[i]];
	if (kvcs_bisect_graph(k->h->v, k->h->h[k->bad], s->goods, k->ngoods,
			      k->paths, k->npaths, k->first_parent, &s->g,
			      &s->bases, &s->nbases))
		fail_msg("%s: kvcs_bisect_graph: %s", k->label,
			 kvcs_error(k->h->v));
}

static void setup_free(struct setup *s)
{
	kvcs_graph_free(&s->g);
	kvcs_free_paths(s->bases, s->nbases);
}

/* isbad from the culprits: parents come first, so one pass does it. */
static bool *bad_from(const struct hist *h, const bool *culprit)
{
	bool *bad = xcalloc(h->n + 1, sizeof(*bad));
	size_t i, k;

	for (i = 0; i < h->n; i++) {
		bad[i] = culprit[i];
		for (k = 0; k < h->np[i]; k++)
			bad[i] |= bad[h->par[i][k]];
	}
	return bad;
}

static enum kb_verdict oracle(const struct kase *k, const char *id)
{
	uint32_t x = index_of(k->h, id);

	if (k->skip && k->skip[x])
		return KB_SKIP;
	return k->isbad[x] ? KB_BAD : KB_GOOD;
}

static const char *word(enum kb_verdict v)
{
	return v == KB_GOOD ? "good" : v == KB_BAD ? "bad" : "skip";
}

/* How a bisect went: what it tested, in order, and how it ended. */
struct res {
	enum kb_kind kind;
	char found[KB_ID_LEN];
	struct ids only;	/* KB_ONLY_SKIPPED */
	char why[256];		/* KB_FAILED */
	char (*seq)[KB_ID_LEN];
	enum kb_verdict *v;
	size_t n, cap;
};

static void res_push(struct res *r, const char *id, enum kb_verdict v)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 32;
		r->seq = xrealloc(r->seq, r->cap * sizeof(*r->seq));
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	snprintf(r->seq[r->n], KB_ID_LEN, "%s", id);
	r->v[r->n++] = v;
}

static void res_free(struct res *r)
{
	ids_free(&r->only);
	free(r->seq);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static const char *kind_name(enum kb_kind k)
{
	switch (k) {
	case KB_TEST:
		return "test";
	case KB_WAIT:
		return "wait";
	case KB_FOUND:
		return "found";
	case KB_ONLY_SKIPPED:
		return "only skipped left";
	case KB_FAILED:
		break;
	}
	return "failed";
}

static void kase_print(const struct kase *k, const struct setup *s)
{
	size_t i;

	print_error("  %s: bad c%u, good", k->h->dir, k->bad);
	for (i = 0; i < k->ngoods; i++)
		print_error(" c%u", k->goods[i]);
	if (s->nbases)
		print_error(", merge bases");
	for (i = 0; i < s->nbases; i++)
		print_error(" c%u", index_of(k->h, s->bases[i]));
	if (k->npaths)
		print_error(", -- %s", k->paths[0]);
	if (k->first_parent)
		print_error(", --first-parent");
	if (k->skip) {
		print_error(", skip");
		for (i = 0; i < k->h->n; i++)
			if (k->skip[i])
				print_error(" c%zu", i);
	}
	print_error("\n  graph:");
	for (i = 0; i < s->g.n; i++) {
		const struct kb_node *c = &s->g.nodes[i];
		uint32_t p;

		print_error(" c%u%s(", index_of(k->h, c->id),
			    c->treesame ? "=" : "");
		for (p = 0; p < c->nparents; p++)
			print_error("%sc%u", p ? "," : "", index_of(k->h,
				    s->g.nodes[c->parents[p]].id));
		print_error(")");
	}
	print_error("\n");
}

static void res_print(const char *who, const struct kase *k,
		      const struct res *r)
{
	size_t i;

	print_error("  %s: %zu steps:", who, r->n);
	for (i = 0; i < r->n; i++)
		print_error(" %s c%u", word(r->v[i]),
			    index_of(k->h, r->seq[i]));
	print_error("; %s", kind_name(r->kind));
	if (r->kind == KB_FOUND)
		print_error(" c%u", index_of(k->h, r->found));
	if (r->kind == KB_FAILED)
		print_error(": %s", r->why);
	print_error("\n");
	if (r->kind == KB_ONLY_SKIPPED)
		ids_print("candidates", &r->only);
}

/* Our state after some step, for "git bisect replay". */
struct snap {
	size_t cut;		/* after this many steps */
	char *log;
	size_t loglen;
	char bad[KB_ID_LEN];
	enum kb_kind next;
	char next_id[KB_ID_LEN];
};

static void take_snap(struct kbisect *b, const struct kase *k,
		      struct snap *sn)
{
	FILE *f = open_memstream(&sn->log, &sn->loglen);

	assert_non_null(f);
	assert_int_equal(kbisect_write_log(b, k->paths, k->npaths, f, NULL,
					   NULL), 0);
	assert_int_equal(fclose(f), 0);
	snprintf(sn->bad, sizeof(sn->bad), "%s", kbisect_bad(b));
}

/* How ours ended, into r. */
static void ours_end(struct kbisect *b, const struct kb_step *step,
		     const struct kase *k, struct res *r)
{
	const char **c;
	size_t i, nc;

	r->kind = step->kind;
	switch (step->kind) {
	case KB_FOUND:
		snprintf(r->found, KB_ID_LEN, "%s", step->id);
		break;
	case KB_ONLY_SKIPPED:
		nc = kbisect_candidates(b, &c);
		for (i = 0; i < nc; i++)
			ids_add(&r->only, c[i]);
		ids_sort(&r->only);
		break;
	case KB_FAILED:
		snprintf(r->why, sizeof(r->why), "%s", step->why);
		break;
	default:
		fail_msg("%s: ours ended with %s", k->label,
			 kind_name(step->kind));
	}
}

static void ours_step(struct kbisect *b, const struct kase *k, struct res *r,
		      const char *id)
{
	char why[256];

	if (r->n > 2 * k->h->n + 4)
		fail_msg("%s: ours does not end", k->label);
	res_push(r, id, oracle(k, id));
	if (kbisect_mark(b, id, r->v[r->n - 1], why, sizeof(why)) < 0)
		fail_msg("%s: kbisect_mark(%s, %s): %s", k->label, id,
			 word(r->v[r->n - 1]), why);
}

/*
 * Ours as ktest runs it: the graph read once (s), the state machine fed
 * one verdict after another; with sn, the state after sn->cut steps too.
 */
static void ours_run(const struct kase *k, const struct setup *s,
		     struct res *r, struct snap *sn)
{
	struct kb_options o = {
		.first_parent = k->first_parent,
		.merge_bases = (const char *const *)s->bases,
		.nmerge_bases = s->nbases,
	};
	struct kb_step step;
	struct kbisect *b;
	char why[256];
	size_t n;

	memset(r, 0, sizeof(*r));
	b = kbisect_new(&s->g, s->goods, k->ngoods, &o, why, sizeof(why));
	if (!b)
		fail_msg("%s: kbisect_new: %s", k->label, why);
	for (;;) {
		bool at_cut = sn && r->n == sn->cut;

		if (at_cut)
			take_snap(b, k, sn);
		kbisect_next(b, &step, 1, &n);
		assert_int_equal(n, 1);
		if (at_cut) {
			sn->next = step.kind;
			snprintf(sn->next_id, KB_ID_LEN, "%s",
				 step.id ? step.id : "");
		}
		if (step.kind != KB_TEST)
			break;
		ours_step(b, k, r, step.id);
	}
	ours_end(b, &step, k, r);
	kbisect_free(b);
}

/*
 * Ours with the graph read afresh for every step, from the bad and goods
 * known by then, as every "git bisect good/bad" walks afresh. With paths
 * that is not the same as pruning the first graph: a merge treesame to a
 * parent that has just been marked good is simplified to that parent
 * now (git's relevant_commit(): a good is a BOTTOM commit, and relevant),
 * so it becomes treesame and drops out of the count. The merge bases are
 * passed on until git would have written BISECT_ANCESTORS_OK.
 */
static void ours_fresh(const struct kase *k, struct res *r)
{
	const char *goods[96], *bad = k->h->h[k->bad];
	struct kb_step step;
	size_t ng, i, n;
	bool bases = true;
	char why[256];

	memset(r, 0, sizeof(*r));
	for (;;) {
		struct kb_options o = { .first_parent = k->first_parent };
		struct setup s = { 0 };
		struct kbisect *b;

		for (ng = 0; ng < k->ngoods; ng++)
			goods[ng] = k->h->h[k->goods[ng]];
		for (i = 0; i < r->n; i++) {
			if (r->v[i] == KB_GOOD) {
				assert_true(ng < 96);
				goods[ng++] = r->seq[i];
			}
		}
		if (kvcs_bisect_graph(k->h->v, bad, goods, ng, k->paths,
				      k->npaths, k->first_parent, &s.g,
				      &s.bases, &s.nbases))
			fail_msg("%s: kvcs_bisect_graph: %s", k->label,
				 kvcs_error(k->h->v));
		if (bases) {
			o.merge_bases = (const char *const *)s.bases;
			o.nmerge_bases = s.nbases;
		}
		b = kbisect_new(&s.g, goods, ng, &o, why, sizeof(why));
		if (!b)
			fail_msg("%s: kbisect_new: %s", k->label, why);
		/* skipped commits still in the graph stay skipped */
		for (i = 0; i < r->n; i++)
			if (r->v[i] == KB_SKIP)
				kbisect_mark(b, r->seq[i], KB_SKIP, why,
					     sizeof(why));
		kbisect_next(b, &step, 1, &n);
		assert_int_equal(n, 1);
		if (step.kind != KB_TEST) {
			ours_end(b, &step, k, r);
			kbisect_free(b);
			setup_free(&s);
			return;
		}
		bases = step.purpose == KB_FOR_MERGE_BASE;
		ours_step(b, k, r, step.id);
		if (r->v[r->n - 1] == KB_BAD)
			bad = r->seq[r->n - 1];
		kbisect_free(b);
		setup_free(&s);
	}
}

/* ---- git's side ---- */

static void case_list(struct sbuf *s, const struct kase *k, bool skip,
		      int code)
{
	size_t i, n = 0;

	for (i = 0; i < k->h->n; i++) {
		if (skip ? !(k->skip && k->skip[i]) : !k->isbad[i])
			continue;
		sbuf_adds(s, n++ ? "|" : "case $h in\n");
		sbuf_adds(s, k->h->h[i]);
	}
	if (n)
		sbuf_addf(s, ") exit %d ;;\nesac\n", code);
}

/* The oracle as a script for "git bisect run": no process of its own. */
static void write_oracle(const struct kase *k)
{
	struct sbuf s;

	sbuf_init(&s);
	sbuf_adds(&s, "#!/bin/sh\nread h < .git/BISECT_HEAD || exit 255\n");
	case_list(&s, k, true, 125);
	case_list(&s, k, false, 1);
	sbuf_adds(&s, "exit 0\n");
	spit(oracle_path, sbuf_str(&s), 0755);
	sbuf_free(&s);
}

/* "[id]" of a "# first bad commit: [id] subject" line. */
static bool bracket_id(const char *line, const char *prefix, char *out)
{
	size_t n = strlen(prefix);

	if (strncmp(line, prefix, n) || line[n] != '[')
		return false;
	snprintf(out, KB_ID_LEN, "%.40s", line + n + 1);
	return strlen(out) == 40;
}

/*
 * git's BISECT_LOG: the marks after the last start line, and the outcome.
 * Returns whether it has one.
 */
static bool parse_git_log(const char *text, struct res *r)
{
	const char *p = text, *start = NULL;
	bool done = false;

	memset(r, 0, sizeof(*r));
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "git bisect start", 16))
			start = p;
	for (p = start; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char line[256], id[KB_ID_LEN];
		size_t len = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (!strncmp(line, "git bisect good ", 16))
			res_push(r, line + 16, KB_GOOD);
		else if (!strncmp(line, "git bisect bad ", 15))
			res_push(r, line + 15, KB_BAD);
		else if (!strncmp(line, "git bisect skip ", 16))
			res_push(r, line + 16, KB_SKIP);
		else if (bracket_id(line, "# first bad commit: ", id)) {
			r->kind = KB_FOUND;
			snprintf(r->found, KB_ID_LEN, "%s", id);
			done = true;
		} else if (!strcmp(line,
				   "# only skipped commits left to test")) {
			r->kind = KB_ONLY_SKIPPED;
			done = true;
		} else if (bracket_id(line, "# possible first bad commit: ",
				      id)) {
			ids_add(&r->only, id);
		}
	}
	ids_sort(&r->only);
	return done;
}

/* A bisect git gave up on, with the reason we give too. */
static bool git_failed(struct res *r, const struct sbuf *out)
{
	static const char *const whys[] = {
		"No testable commit found",
	};
	size_t i;

	for (i = 0; i < sizeof(whys) / sizeof(whys[0]); i++) {
		if (strstr(sbuf_str(out), whys[i])) {
			r->kind = KB_FAILED;
			snprintf(r->why, sizeof(r->why), "%s", whys[i]);
			return true;
		}
	}
	return false;
}

static char *bisect_log(const struct kase *k)
{
	char *path = xasprintf("%s/.git/BISECT_LOG", k->h->dir);
	char *text = slurp(path);

	if (!text)
		fail_msg("%s: no %s", k->label, path);
	free(path);
	return text;
}

static void git_run(const struct kase *k, struct res *r)
{
	struct sbuf out, out2;
	struct args a;
	char *log;
	size_t i;
	int rc;

	write_oracle(k);
	sbuf_init(&out);
	sbuf_init(&out2);
	args_bisect(&a, k->h->dir);
	arg(&a, "start");
	arg(&a, "--no-checkout");
	if (k->first_parent)
		arg(&a, "--first-parent");
	arg(&a, k->h->h[k->bad]);
	for (i = 0; i < k->ngoods; i++)
		arg(&a, k->h->h[k->goods[i]]);
	if (k->npaths)
		arg(&a, "--");
	for (i = 0; i < k->npaths; i++)
		arg(&a, k->paths[i]);
	rc = spawn(&out, a.v);
	if (rc) {
		/* git gave up at once, and cleaned up */
		memset(r, 0, sizeof(*r));
		if (!git_failed(r, &out))
			fail_msg("%s: git bisect start exited %d:\n%s",
				 k->label, rc, sbuf_str(&out));
		sbuf_free(&out);
		sbuf_free(&out2);
		return;
	}
	/*
	 * git 2.39's "bisect run" stops ("bisect run success") when a
	 * verdict leaves another merge base to test: run it again then.
	 */
	log = bisect_log(k);
	for (i = 0; !parse_git_log(log, r); i++) {
		if (i && !strstr(sbuf_str(&out2),
				 "a merge base must be tested")) {
			if (git_failed(r, &out2))
				break;
			fail_msg("%s: git bisect run exited %d without an outcome:\n%s\n%s\n%s",
				 k->label, rc, sbuf_str(&out),
				 sbuf_str(&out2), log);
		}
		if (i > k->h->n)
			fail_msg("%s: git bisect run does not end", k->label);
		res_free(r);
		free(log);
		args_bisect(&a, k->h->dir);
		arg(&a, "run");
		arg(&a, oracle_path);
		rc = spawn(&out2, a.v);
		log = bisect_log(k);
	}
	free(log);
	sbuf_free(&out);
	sbuf_free(&out2);
}

/* ---- the replay ---- */

struct bisect_refs {
	char bad[KB_ID_LEN];
	struct ids good, skip;
};

static int ref_cb(const char *name, void *payload)
{
	struct bisect_refs *br = payload;
	const char *rest = name + strlen("refs/bisect/");

	if (!strncmp(rest, "good-", 5))
		ids_add(&br->good, rest + 5);
	else if (!strncmp(rest, "skip-", 5))
		ids_add(&br->skip, rest + 5);
	return 0;
}

static void read_bisect_refs(git_repository *r, struct bisect_refs *br)
{
	git_oid id;

	memset(br, 0, sizeof(*br));
	assert_int_equal(git_reference_foreach_glob(r, "refs/bisect/*",
						    ref_cb, br), 0);
	ids_sort(&br->good);
	ids_sort(&br->skip);
	if (!git_reference_name_to_id(&id, r, "refs/bisect/bad"))
		git_oid_tostr(br->bad, KB_ID_LEN, &id);
}

/* The 40-hex lines of git's "could be any of:" list. */
static void listed_ids(const char *text, struct ids *s)
{
	const char *p = strstr(text, "could be any of:");

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\n");

		if (len == 40 && strspn(p, "0123456789abcdef") == 40) {
			char id[KB_ID_LEN];

			snprintf(id, sizeof(id), "%.40s", p);
			ids_add(s, id);
		}
	}
	ids_sort(s);
}

/* Where a replay should leave git: our state after cut steps. */
struct want {
	size_t cut;
	const char *bad;
	enum kb_kind next;
	const char *next_id;
	struct ids goods, skips;
};

static void want_fill(struct want *w, const struct kase *k,
		      const struct res *ours)
{
	size_t i;

	for (i = 0; i < k->ngoods; i++)
		ids_add(&w->goods, k->h->h[k->goods[i]]);
	for (i = 0; i < w->cut; i++) {
		if (ours->v[i] == KB_GOOD)
			ids_add(&w->goods, ours->seq[i]);
		if (ours->v[i] == KB_SKIP)
			ids_add(&w->skips, ours->seq[i]);
	}
	ids_sort(&w->goods);
	ids_sort(&w->skips);
}

/* Does git, after the replay that printed out, stand where w says? */
static bool lands(const struct kase *k, const struct res *ours,
		  const struct want *w, const struct sbuf *out,
		  const struct bisect_refs *br, const char *head)
{
	struct ids listed = { 0 };
	char *found;
	bool ok;

	/* a start git gives up on leaves no bisect behind */
	if (w->next == KB_FAILED && !w->cut)
		return !br->bad[0] && !br->good.n &&
		       strstr(sbuf_str(out), ours->why) != NULL;
	if (strcmp(br->bad, w->bad) || !ids_equal(&br->good, &w->goods) ||
	    !ids_equal(&br->skip, &w->skips))
		return false;
	switch (w->next) {
	case KB_TEST:
		return !strcmp(head, w->next_id);
	case KB_FOUND:
		found = xasprintf("%s is the first bad commit", w->next_id);
		ok = strstr(sbuf_str(out), found) != NULL;
		free(found);
		return ok;
	case KB_ONLY_SKIPPED:
		listed_ids(sbuf_str(out), &listed);
		ok = ids_equal(&listed, &ours->only);
		ids_free(&listed);
		return ok;
	case KB_FAILED:
		return strstr(sbuf_str(out), ours->why) != NULL;
	case KB_WAIT:
		break;
	}
	return false;
}

static bool is_base(const struct setup *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->nbases; i++)
		if (!strcmp(s->bases[i], id))
			return true;
	return false;
}

/*
 * Our log after sn->cut steps, replayed by git: git must hold our bad, our
 * goods and skips, and pick what we pick next.
 *
 * Except where git's own log would fail the same way: git 2.39 replays a
 * start line by starting, and when that start has a merge base to test
 * first, "git bisect replay" stops right there (exit 1) and leaves the
 * rest of the log unread. A log git wrote itself for the same bisect is
 * the same text and stops the same way, so then git must stand where we
 * stood after the start: nothing marked, the merge base to test.
 */
static void replay_check(const struct kase *k, const struct setup *s,
			 const struct res *ours, const struct snap *sn)
{
	struct want w = {
		.cut = sn->cut, .bad = sn->bad, .next = sn->next,
		.next_id = sn->next_id,
	};
	struct want w0 = {
		.cut = 0, .bad = k->h->h[k->bad], .next = KB_TEST,
		.next_id = ours->n ? ours->seq[0] : "",
	};
	char head[KB_ID_LEN] = "";
	struct bisect_refs br;
	struct sbuf out;
	struct args a;
	git_oid id;
	int rc;

	spit(replay_path, sn->log, 0644);
	sbuf_init(&out);
	args_bisect(&a, k->h->dir);
	arg(&a, "replay");
	arg(&a, replay_path);
	rc = spawn(&out, a.v);
	st.replays++;
	read_bisect_refs(k->h->r, &br);
	if (!git_reference_name_to_id(&id, k->h->r, "HEAD"))
		git_oid_tostr(head, sizeof(head), &id);
	want_fill(&w, k, ours);
	want_fill(&w0, k, ours);

	if (lands(k, ours, &w, &out, &br, head)) {
		/* fine */
	} else if (sn->cut && ours->n && is_base(s, ours->seq[0]) &&
		   lands(k, ours, &w0, &out, &br, head)) {
		st.replay_stops++;
	} else {
		print_error("%s: git bisect replay (exit %d) of our log after %zu steps does not land where we are\n",
			    k->label, rc, sn->cut);
		print_error("  bad: ours %s, git %s\n", w.bad, br.bad);
		ids_print("our goods", &w.goods);
		ids_print("git's goods", &br.good);
		ids_print("our skips", &w.skips);
		ids_print("git's skips", &br.skip);
		print_error("  next: ours %s %s, git's HEAD %s\n",
			    kind_name(w.next), w.next_id, head);
		print_error("--- our log:\n%s--- git said:\n%s\n", sn->log,
			    sbuf_str(&out));
		fail();
	}
	ids_free(&w.goods);
	ids_free(&w.skips);
	ids_free(&w0.goods);
	ids_free(&w0.skips);
	ids_free(&br.good);
	ids_free(&br.skip);
	sbuf_free(&out);
}

/* ---- comparing ---- */

static bool same_seq(const struct res *a, const struct res *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->seq[i], b->seq[i]) || a->v[i] != b->v[i])
			return false;
	return true;
}

/* The same first bad commit, skipped candidates or reason to give up. */
static bool same_outcome(const struct res *a, const struct res *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case KB_FOUND:
		return !strcmp(a->found, b->found);
	case KB_ONLY_SKIPPED:
		return ids_equal(&a->only, &b->only);
	case KB_FAILED:
		return !strncmp(a->why, b->why, strlen(b->why));
	default:
		return false;
	}
}

/*
 * Ours and git's on one case; with replay, our log cut after some step
 * (chosen from ix) replayed by git. With paths, ours is the fresh-graph
 * run (see ours_fresh()); the run on the graph read once is compared as
 * well, and where it differs from git it is counted, not failed.
 */
static void run_case(const struct kase *k, const struct setup *s,
		     bool replay, size_t ix)
{
	struct res once, fresh, theirs, *ours = &once;
	bool ok;

	ours_run(k, s, &once, NULL);
	if (k->npaths) {
		ours_fresh(k, &fresh);
		ours = &fresh;
	}
	git_run(k, &theirs);
	ok = same_outcome(ours, &theirs) && ours->n <= theirs.n;
	if (ok && k->expect != NONE)
		ok = ours->kind == KB_FOUND &&
		     !strcmp(ours->found, k->h->h[k->expect]);
	if (!ok) {
		print_error("%s: ours and git bisect differ (expected: c%d)\n",
			    k->label,
			    k->expect == NONE ? -1 : (int)k->expect);
		kase_print(k, s);
		res_print("ours", k, ours);
		res_print("git ", k, &theirs);
		fail();
	}
	/* bisect.c ports git 2.39's bisect.c: the same picks, step by step */
	if (git_239 && !same_seq(ours, &theirs)) {
		print_error("%s: ours and git 2.39 pick different commits\n",
			    k->label);
		kase_print(k, s);
		res_print("ours", k, ours);
		res_print("git ", k, &theirs);
		fail();
	}
	st.cases++;
	st.same += same_seq(ours, &theirs);
	st.ours_steps += ours->n;
	st.git_steps += theirs.n;
	st.found += ours->kind == KB_FOUND;
	st.skipped += ours->kind == KB_ONLY_SKIPPED;
	st.failed += ours->kind == KB_FAILED;
	if (k->npaths) {
		st.path_cases++;
		if (!same_seq(&once, &theirs) ||
		    !same_outcome(&once, &theirs)) {
			st.once_differs++;
			if (!same_outcome(&once, &theirs))
				st.once_other_outcome++;
			if (getenv("KTEST_VERBOSE")) {
				print_message("%s: the graph read once:\n",
					      k->label);
				kase_print(k, s);
				res_print("once ", k, &once);
				res_print("fresh", k, ours);
			}
			if (!st.once_example[0])
				snprintf(st.once_example,
					 sizeof(st.once_example), "%s",
					 k->label);
		}
		res_free(&fresh);
	}

	/* the log of the run on one graph, where it is git's run */
	if (replay && same_seq(&once, &theirs) &&
	    same_outcome(&once, &theirs)) {
		struct snap sn = { .cut = (ix * 7 + 3) % (once.n + 1) };
		struct res again;

		ours_run(k, s, &again, &sn);
		assert_true(same_seq(&once, &again));
		replay_check(k, s, &once, &sn);
		free(sn.log);
		res_free(&again);
	}
	res_free(&once);
	res_free(&theirs);
}

static void stats_reset(void)
{
	memset(&st, 0, sizeof(st));
}

static void stats_print(const char *what, double t0)
{
	print_message("[   INFO   ] %s: %zu cases (%zu found, %zu only skipped left, %zu no testable commit), %zu identical step by step, steps ours %zu / git %zu, %zu replays (%zu stopped by git at the start), %zu git runs, %.1f s\n",
		      what, st.cases, st.found, st.skipped, st.failed,
		      st.same, st.ours_steps, st.git_steps, st.replays,
		      st.replay_stops, st.git_runs, now_s() - t0);
	if (st.once_differs)
		print_message("[   WARN   ] %s: with paths, %zu of %zu cases pick other commits than git when the graph is read once and pruned (%zu end elsewhere), e.g. %s; read afresh every step, all are git's\n",
			      what, st.once_differs, st.path_cases,
			      st.once_other_outcome, st.once_example);
}

/*
 * Every commit of bad --not goods as the culprit in turn (every step-th,
 * starting at offset); the first bad commit must be the culprit unless
 * skips, paths or first parents make it another.
 */
static void every_culprit(struct hist *h, const char *label, uint32_t bad,
			  uint32_t good, const char *const *paths,
			  size_t npaths, bool fp, const bool *skip,
			  size_t step)
{
	bool *culprit = xcalloc(h->n, sizeof(*culprit));
	bool *reach_bad = xcalloc(h->n, sizeof(*reach_bad));
	bool *reach_good = xcalloc(h->n, sizeof(*reach_good));
	struct kase k = {
		.h = h, .bad = bad, .goods = { good }, .ngoods = 1,
		.paths = paths, .npaths = npaths, .first_parent = fp,
		.skip = skip,
	};
	struct setup s = { 0 };
	size_t i, c, nth = 0;

	setup_read(&s, &k);
	reach_bad[bad] = reach_good[good] = true;
	for (i = h->n; i-- > 0;) {
		for (c = 0; c < h->np[i]; c++) {
			reach_bad[h->par[i][c]] |= reach_bad[i];
			reach_good[h->par[i][c]] |= reach_good[i];
		}
	}
	for (c = 0; c < h->n; c++) {
		if (!reach_bad[c] || reach_good[c] || nth++ % step)
			continue;
		culprit[c] = true;
		k.isbad = bad_from(h, culprit);
		k.expect = skip || npaths || fp ? NONE : (uint32_t)c;
		snprintf(k.label, sizeof(k.label), "%s, culprit c%zu", label,
			 c);
		run_case(&k, &s, nth % 4 == 1, c);
		free(k.isbad);
		culprit[c] = false;
	}
	setup_free(&s);
	free(culprit);
	free(reach_bad);
	free(reach_good);
}

/* ---- the tests ---- */

static void test_git_is_there(void **state)
{
	need_git();
	print_message("[   INFO   ] git bisect through \"git %s\"%s\n",
		      bisect_cmd, git_239 ?
		      "; git 2.39: every pick must be the same as ours" : "");
}

static void test_linear(void **state)
{
	double t0 = now_s();
	struct hist h;

	need_git();
	stats_reset();
	hist_init(&h, "linear", 100);
	linear(&h, 100);
	hist_write(&h);
	every_culprit(&h, "linear 100", 99, 0, NULL, 0, false, NULL, 1);
	/* a chain is halved exactly: as many steps as git, never more */
	assert_int_equal(st.ours_steps, st.git_steps);
	hist_free(&h);
	stats_print("linear, 100 commits", t0);
}

static void test_merges(void **state)
{
	double t0 = now_s();
	struct hist h;

	need_git();
	stats_reset();
	hist_init(&h, "topics", 70);
	topics(&h, 70, 11);
	hist_write(&h);
	every_culprit(&h, "topics 70", (uint32_t)h.n - 1, 0, NULL, 0, false,
		      NULL, 1);
	stats_print("topic merges, 70 commits", t0);
	t0 = now_s();
	stats_reset();
	every_culprit(&h, "topics 70 --first-parent", (uint32_t)h.n - 1, 0,
		      NULL, 0, true, NULL, 4);
	stats_print("the same, --first-parent, every 4th culprit", t0);
	hist_free(&h);
}

static void test_criss_cross(void **state)
{
	double t0 = now_s();
	struct hist h;

	need_git();
	stats_reset();
	hist_init(&h, "criss-cross", 44);
	criss_cross(&h, 10);
	hist_write(&h);
	every_culprit(&h, "criss-cross", (uint32_t)h.n - 1, 0, NULL, 0, false,
		      NULL, 1);
	hist_free(&h);
	stats_print("criss-cross merges, 10 rounds, 44 commits", t0);
}

static void test_path_limited(void **state)
{
	static const char *const paths[] = { "p" };
	double t0 = now_s();
	struct hist h;
	size_t i;

	need_git();
	stats_reset();
	hist_init(&h, "paths", 70);
	topics(&h, 70, 23);
	seed(5);
	for (i = 0; i < h.n; i++)
		h.touch[i] = rnd(100) < 40;
	hist_write(&h);
	every_culprit(&h, "topics 70 -- p", (uint32_t)h.n - 1, 0, paths, 1,
		      false, NULL, 1);
	hist_free(&h);
	stats_print("path-limited (-- p), 70 commits", t0);
}

static void test_unbuildable(void **state)
{
	double t0 = now_s();
	struct hist h;
	bool skip[44] = { false };
	size_t i;

	need_git();
	stats_reset();
	hist_init(&h, "unbuildable", 44);
	linear(&h, 44);
	hist_write(&h);
	for (i = 16; i < 25; i++)
		skip[i] = true;
	every_culprit(&h, "linear 44, c16..c24 skip", 43, 0, NULL, 0, false,
		      skip, 1);
	hist_free(&h);

	hist_init(&h, "unbuildable topics", 44);
	topics(&h, 44, 37);
	hist_write(&h);
	memset(skip, 0, sizeof(skip));
	for (i = 18; i < 28; i++)
		skip[i] = true;
	every_culprit(&h, "topics 44, c18..c27 skip", (uint32_t)h.n - 1, 0,
		      NULL, 0, false, skip, 1);
	hist_free(&h);
	stats_print("unbuildable stretches (skip), 2 x 44 commits", t0);
}

/* ---- random histories ---- */

/* Ancestor sets of up to 64 commits, as bit masks (itself included). */
static void ancestors(const struct hist *h, uint64_t *anc)
{
	size_t i, k;

	for (i = 0; i < h->n; i++) {
		anc[i] = 1ULL << i;
		for (k = 0; k < h->np[i]; k++)
			anc[i] |= anc[h->par[i][k]];
	}
}

/*
 * The graph of bad --not goods as vcs.c hands it out, built directly:
 * newest first (the dates rise with the index), parents inside the set.
 */
static void pure_graph(const struct hist *h, uint64_t cands, uint32_t bad,
		       struct kb_graph *g)
{
	uint32_t pos[64];
	size_t i, k, n = 0;

	g->nodes = xcalloc(64, sizeof(*g->nodes));
	for (i = h->n; i-- > 0;) {
		if (!(cands >> i & 1))
			continue;
		pos[i] = (uint32_t)n;
		snprintf(g->nodes[n++].id, KB_ID_LEN, "%s", h->h[i]);
	}
	g->n = n;
	assert_string_equal(g->nodes[0].id, h->h[bad]);
	for (i = 0; i < h->n; i++) {
		struct kb_node *c;

		if (!(cands >> i & 1))
			continue;
		c = &g->nodes[pos[i]];
		c->parents = xcalloc(MAXPAR, sizeof(*c->parents));
		for (k = 0; k < h->np[i]; k++)
			if (cands >> h->par[i][k] & 1)
				c->parents[c->nparents++] = pos[h->par[i][k]];
	}
}

static void pure_graph_free(struct kb_graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->nodes[i].parents);
	free(g->nodes);
}

/* A random commit whose ancestors avoid bad and that is not bad: a good. */
static uint32_t pick_good(const uint64_t *anc, size_t n, uint32_t bad,
			  bool ancestor)
{
	uint32_t tries, g;

	for (tries = 0; tries < 50; tries++) {
		/* ancestors from the older half: more to bisect */
		g = rnd(ancestor ? bad / 2 + 1 : (uint32_t)n);
		if (g == bad || (anc[g] >> bad & 1))
			continue;
		if (ancestor && !(anc[bad] >> g & 1))
			continue;
		return g;
	}
	return NONE;
}

static uint32_t pick_in(uint64_t set)
{
	uint32_t k = rnd((uint32_t)__builtin_popcountll(set));

	while (k--)
		set &= set - 1;
	return (uint32_t)__builtin_ctzll(set);
}

/*
 * Thousands of small random DAGs, no git: whatever our bisect ends with
 * must agree with the first bad commits computed directly (bad, and no
 * parent bad): a found commit is one of them; "only skipped left" lists
 * only skipped commits and the bad one, and one of them is first bad.
 */
static void test_random_brute_force(void **state)
{
	uint64_t s0 = first_seed(20240611);
	unsigned rounds = 20000, t, skipped_runs = 0, found_runs = 0;
	double t0 = now_s();

	print_message("[   INFO   ] seed %llu (KTEST_SEED=%llu reruns it)\n",
		      (unsigned long long)s0, (unsigned long long)s0);
	for (t = 0; t < rounds; t++) {
		uint64_t anc[64], goods_reach = 0, cands, culprits = 0;
		size_t n, i, k, ng;
		bool skip[64] = { false }, isbad[64], fb[64];
		struct kase kc = { 0 };
		struct setup s = { 0 };
		struct res r;
		struct hist h;
		uint32_t bad;

		seed(s0 + t);
		n = 2 + rnd(60);
		hist_init(&h, "random", n);
		random_dag(&h, n);
		fake_ids(&h);
		ancestors(&h, anc);
		bad = (uint32_t)(n / 2 + rnd((uint32_t)(n - n / 2)));
		ng = 1 + rnd(2);
		for (i = 0; i < ng; i++) {
			uint32_t g = pick_good(anc, n, bad, rnd(4) != 0);

			if (g == NONE)
				break;
			kc.goods[kc.ngoods++] = g;
			goods_reach |= anc[g];
		}
		if (!kc.ngoods) {
			hist_free(&h);
			continue;
		}
		cands = anc[bad] & ~goods_reach;
		for (i = 1 + rnd(3); i > 0; i--)
			culprits |= 1ULL << pick_in(cands);
		if (rnd(3) == 0)
			for (i = 0; i < n; i++)
				skip[i] = rnd(100) < 25;
		for (i = 0; i < n; i++) {
			isbad[i] = (anc[i] & culprits) != 0;
			fb[i] = isbad[i];
			for (k = 0; k < h.np[i]; k++)
				fb[i] &= !(anc[h.par[i][k]] & culprits);
		}

		kc.h = &h;
		kc.bad = bad;
		kc.skip = skip;
		kc.isbad = isbad;
		snprintf(kc.label, sizeof(kc.label), "seed %llu",
			 (unsigned long long)(s0 + t));
		for (i = 0; i < kc.ngoods; i++)
			s.goods[i] = h.h[kc.goods[i]];
		pure_graph(&h, cands, bad, &s.g);
		ours_run(&kc, &s, &r, NULL);

		/* no commit twice; nothing outside the candidates */
		for (i = 0; i < r.n; i++) {
			uint32_t x = index_of(&h, r.seq[i]);

			if (!(cands >> x & 1))
				fail_msg("%s: tested c%u, no candidate",
					 kc.label, x);
			for (k = 0; k < i; k++)
				if (!strcmp(r.seq[k], r.seq[i]))
					fail_msg("%s: tested c%u twice",
						 kc.label, x);
		}
		if (r.kind == KB_FOUND) {
			uint32_t x = index_of(&h, r.found);

			if (!fb[x] || !(cands >> x & 1))
				fail_msg("%s: found c%u, which is no first bad commit",
					 kc.label, x);
			found_runs++;
		} else {
			bool any = false;

			assert_int_equal(r.kind, KB_ONLY_SKIPPED);
			for (i = 0; i < r.only.n; i++) {
				uint32_t x = index_of(&h, r.only.v[i]);

				if (!isbad[x] && !skip[x])
					fail_msg("%s: c%u listed, neither skipped nor bad",
						 kc.label, x);
				any |= fb[x];
			}
			if (!any)
				fail_msg("%s: the candidates left miss every first bad commit",
					 kc.label);
			skipped_runs++;
		}
		res_free(&r);
		pure_graph_free(&s.g);
		hist_free(&h);
	}
	print_message("[   INFO   ] %u random DAGs: %u found, %u only-skipped, %.1f s\n",
		      rounds, found_runs, skipped_runs, now_s() - t0);
}

/*
 * Random histories against git: random bad and goods (a quarter no
 * ancestors of bad: merge bases come first), one or two culprits among the
 * candidates, and now and then skips, a path limit, --first-parent.
 */
static void test_random_with_git(void **state)
{
	static const char *const paths[] = { "p" };
	uint64_t s0 = first_seed(7);
	unsigned repos = 10, per = 20, rr, t;
	double t0 = now_s();

	need_git();
	stats_reset();
	print_message("[   INFO   ] seed %llu (KTEST_SEED=%llu reruns it)\n",
		      (unsigned long long)s0, (unsigned long long)s0);
	for (rr = 0; rr < repos; rr++) {
		uint64_t anc[64];
		struct hist h;
		size_t n, i;

		seed(s0 * 1000003 + rr);
		n = 20 + rnd(45);
		hist_init(&h, "random", n);
		random_dag(&h, n);
		for (i = 0; i < n; i++)
			h.touch[i] = rnd(2);
		hist_write(&h);
		ancestors(&h, anc);
		for (t = 0; t < per; t++) {
			uint64_t goods_reach = 0, cands, culprits = 0;
			bool skip[64] = { false }, cul[64] = { false };
			struct kase k = { .h = &h, .expect = NONE };
			struct setup s = { 0 };
			size_t ng = 1 + rnd(2);
			unsigned what = rnd(100);

			k.bad = (uint32_t)(n - 1 - rnd((uint32_t)n / 3));
			for (i = 0; i < ng; i++) {
				uint32_t g = pick_good(anc, n, k.bad,
						       rnd(4) != 0);

				if (g != NONE) {
					k.goods[k.ngoods++] = g;
					goods_reach |= anc[g];
				}
			}
			if (!k.ngoods)
				continue;
			cands = anc[k.bad] & ~goods_reach;
			for (i = 1 + rnd(2); i > 0; i--)
				culprits |= 1ULL << pick_in(cands);
			for (i = 0; i < n; i++)
				cul[i] = culprits >> i & 1;
			if (what < 25)
				for (i = 0; i < n; i++)
					skip[i] = rnd(100) < 20;
			if (what >= 25 && what < 50) {
				k.paths = paths;
				k.npaths = 1;
			}
			k.first_parent = what >= 50 && what < 65;
			k.skip = what < 25 ? skip : NULL;
			k.isbad = bad_from(&h, cul);
			snprintf(k.label, sizeof(k.label),
				 "seed %llu, repo %u (%zu commits), case %u",
				 (unsigned long long)s0, rr, n, t);
			setup_read(&s, &k);
			run_case(&k, &s, t % 4 == 0, t);
			setup_free(&s);
			free(k.isbad);
		}
		hist_free(&h);
	}
	stats_print("random histories against git", t0);
}

/* git bisect, or its helper when "git bisect" is 2.39's shell script. */
static void find_bisect(void)
{
	struct sbuf out;
	char *version[] = { "git", "--version", NULL };
	char *argv[] = { "git", "--exec-path", NULL }, *path, *text;

	sbuf_init(&out);
	have_git = spawn(&out, version) == 0;
	git_239 = have_git && !strncmp(sbuf_str(&out), "git version 2.39.", 17);
	have_git = have_git && spawn(&out, argv) == 0;
	if (have_git && !getenv("KTEST_BISECT_PORCELAIN")) {
		path = xasprintf("%.*s/git-bisect",
				 (int)strcspn(sbuf_str(&out), "\n"),
				 sbuf_str(&out));
		text = slurp(path);
		if (text && !strncmp(text, "#!", 2) &&
		    strstr(text, "git bisect--helper"))
			bisect_cmd = "bisect--helper";
		free(text);
		free(path);
	}
	sbuf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git_is_there),
		cmocka_unit_test(test_random_brute_force),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_merges),
		cmocka_unit_test(test_criss_cross),
		cmocka_unit_test(test_path_limited),
		cmocka_unit_test(test_unbuildable),
		cmocka_unit_test(test_random_with_git),
	};
	const char *tmp = getenv("TMPDIR");
	char *home;
	int ret;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(top, sizeof(top), "%s/ktest-bisect-git.XXXXXX", tmp);
	if (!mkdtemp(top)) {
		perror(top);
		return 1;
	}
	home = xasprintf("%s/home", top);
	if (mkdir(home, 0755)) {
		perror(home);
		return 1;
	}
	oracle_path = xasprintf("%s/oracle.sh", top);
	replay_path = xasprintf("%s/replay.log", top);
	/* no user or system config, messages in English */
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("LC_ALL", "C", 1);
	unsetenv("LANGUAGE");
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_OBJECT_DIRECTORY");
	find_bisect();
	git_libgit2_init();
	ret = cmocka_run_group_tests_name("bisect_git", tests, NULL, NULL);
	git_libgit2_shutdown();
	if (!getenv("KTEST_KEEP"))
		rm_rf(top);
	free(home);
	free(oracle_path);
	free(replay_path);
	return ret;
}
