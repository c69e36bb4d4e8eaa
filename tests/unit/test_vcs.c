// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest/vcs.c on real repositories, written with libgit2 into mkdtemp()
 * directories with controlled commit dates.
 *
 * The bisect graph is held against the git program (tests only), on
 * hand-made histories and a few hundred random ones, with these oracles:
 *
 *   git rev-list --parents [--first-parent] BAD --not GOODS
 *	the candidate ids, their order, and their parents inside the set
 *	(bisect reads commit->parents as the walk left them; without paths
 *	nothing rewrites them).
 *
 *   git rev-list --parents --sparse [--first-parent] BAD --not GOODS -- PATHS
 *	the set, the order and the simplified parents with paths. --sparse
 *	only keeps git from comparing single-parent commits with their parent
 *	(which changes their TREESAME flag, never the walk or a parent list)
 *	and from hiding TREESAME commits; and since dense is off, git prints
 *	commit->parents as try_to_simplify_commit() left them, not rewritten
 *	through TREESAME commits. So this lists exactly the commits bisect
 *	walks, in its order, with the parents bisect counts with.
 *
 *   git rev-list [--first-parent] BAD --not GOODS -- PATHS
 *	the same walk, dense: it shows precisely the commits that are not
 *	TREESAME. Our treesame flags must leave exactly this subsequence.
 *
 *   git merge-base --all BAD GOODS, when "git rev-list GOODS --not BAD"
 *	lists anything (bisect's check_ancestors): the merge bases to test
 *	first, minus the goods themselves, newest first.
 *
 * The random histories mix rising, equal and skewed commit dates (git's
 * order on ties and its early stop are part of the list), merges of two
 * and three, several roots, merges that take one side whole (treesame to
 * it), and paths that are files, directories, absent, or globs (which our
 * walk leaves to git_diff). A quarter are checked again with a
 * commit-graph, single (with Bloom filters) or split in two layers, and
 * git using it too.
 *
 * git bisect sets its walk up the same way (bisect_rev_setup: BAD, then
 * ^GOOD for each good in refs/bisect/ order, which is hex order, then
 * "-- paths"; limited; first_parent_only on request), and find_bisection()
 * takes every commit of that walk not UNINTERESTING, with its flags and
 * parents. Equal lists, order, parents and flags therefore mean the same
 * candidate graph. (git bisect's very first step also runs an ancestry
 * check walk in the same process first; commits it parsed can change
 * timing-dependent simplifications. The graph is the one of every later
 * step, i.e. of "git rev-list".)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <spawn.h>

#include <git2.h>
#include <git2/sys/mempack.h>

#include "conf/strmap.h"
#include "ktest/vcs.h"
#include "ktest/vcs_stat.h"

#define BASE_TIME 1600000000

static char top[64];		/* everything the tests make lives here */
static unsigned dirs;

/* ---- plumbing ---- */

static int rm_one(const char *path, const struct stat *st, int flag,
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
	char *d = xasprintf("%s/d%u", top, dirs++);

	assert_int_equal(mkdir(d, 0755), 0);
	return d;
}

/* Runs a shell command line, returns its exit status; output in *out. */
static int run(struct sbuf *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int run(struct sbuf *out, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	char *cmd;
	FILE *p;
	size_t n;
	int st;

	va_start(ap, fmt);
	n = (size_t)vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	cmd = xmalloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(cmd, n + 1, fmt, ap);
	va_end(ap);
	sbuf_reset(out);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		sbuf_addn(out, buf, n);
	st = pclose(p);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

extern char **environ;

/*
 * git with these arguments, no shell in between (the hot path of the
 * random tests: a shell costs as much again as git itself).
 */
static int gitv(struct sbuf *out, char *const *argv)
{
	posix_spawn_file_actions_t fa;
	char buf[4096];
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fd), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	assert_int_equal(posix_spawnp(&pid, "git", &fa, NULL, argv, environ),
			 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	sbuf_reset(out);
	while ((n = read(fd[0], buf, sizeof(buf))) > 0)
		sbuf_addn(out, buf, (size_t)n);
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An argv under construction. */
struct args {
	char *v[64];
	size_t n;
};

static void arg(struct args *a, const char *s)
{
	assert_true(a->n + 2 < sizeof(a->v) / sizeof(a->v[0]));
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void args_git(struct args *a, const char *dir, bool graph)
{
	a->n = 0;
	arg(a, "git");
	arg(a, "-C");
	arg(a, dir);
	arg(a, "-c");
	arg(a, graph ? "core.commitGraph=true" : "core.commitGraph=false");
}

/* ---- writing histories with libgit2 ---- */

struct file {
	const char *path;
	const char *content;	/* NULL: absent */
};

/* Contents starting with \x01 are binary: '~' stands for a NUL byte. */
static git_oid write_blob(git_repository *r, const char *s)
{
	char *b = xstrdup(s);
	git_oid id;

	if (b[0] == '\x01')
		for (char *p = b; *p; p++)
			if (*p == '~')
				*p = '\0';
	assert_int_equal(git_blob_create_from_buffer(&id, r, b, strlen(s)), 0);
	free(b);
	return id;
}

/* The tree of the files under prefix (plen bytes of each path). */
static git_oid build_tree(git_repository *r, const struct file *f, size_t n,
			  const char *prefix, size_t plen)
{
	git_treebuilder *tb;
	git_oid id;

	assert_int_equal(git_treebuilder_new(&tb, r, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		const char *rest, *slash;
		char *name;

		if (!f[i].content || strncmp(f[i].path, prefix, plen))
			continue;
		rest = f[i].path + plen;
		slash = strchr(rest, '/');
		if (!slash) {
			id = write_blob(r, f[i].content);
			assert_int_equal(git_treebuilder_insert(NULL, tb, rest,
					 &id, GIT_FILEMODE_BLOB), 0);
			continue;
		}
		name = xstrndup(rest, (size_t)(slash - rest));
		if (!git_treebuilder_get(tb, name)) {
			id = build_tree(r, f, n, f[i].path,
					(size_t)(slash - f[i].path) + 1);
			assert_int_equal(git_treebuilder_insert(NULL, tb, name,
					 &id, GIT_FILEMODE_TREE), 0);
		}
		free(name);
	}
	assert_int_equal(git_treebuilder_write(&id, tb), 0);
	git_treebuilder_free(tb);
	return id;
}

static git_oid tree_of(git_repository *r, const struct file *f, size_t n)
{
	return build_tree(r, f, n, "", 0);
}

static git_oid commit_at(git_repository *r, const git_oid *tree,
			 const git_oid *parents, size_t np, int64_t when,
			 const char *msg)
{
	const git_commit *pc[8];
	git_signature *sig;
	git_tree *t;
	git_oid id;

	assert_true(np <= 8);
	for (size_t i = 0; i < np; i++)
		assert_int_equal(git_commit_lookup((git_commit **)&pc[i], r,
						   &parents[i]), 0);
	assert_int_equal(git_tree_lookup(&t, r, tree), 0);
	assert_int_equal(git_signature_new(&sig, "A U Thor", "a@example.com",
					   when, 0), 0);
	assert_int_equal(git_commit_create(&id, r, NULL, sig, sig, NULL, msg,
					   t, np, pc), 0);
	git_signature_free(sig);
	git_tree_free(t);
	for (size_t i = 0; i < np; i++)
		git_commit_free((git_commit *)pc[i]);
	return id;
}

static void set_ref(git_repository *r, const char *name, const git_oid *id)
{
	git_reference *ref;

	assert_int_equal(git_reference_create(&ref, r, name, id, 1, NULL), 0);
	git_reference_free(ref);
}

static void hex(char out[KB_ID_LEN], const git_oid *id)
{
	git_oid_tostr(out, KB_ID_LEN, id);
}

/* A repository in a new directory, HEAD at refs/heads/main. */
static git_repository *new_repo(char **dir)
{
	git_repository *r;

	*dir = new_dir();
	assert_int_equal(git_repository_init(&r, *dir, 0), 0);
	assert_int_equal(git_repository_set_head(r, "refs/heads/main"), 0);
	return r;
}

static struct kvcs *open_ok(const char *dir)
{
	char err[512];
	struct kvcs *v = kvcs_open(dir, err, sizeof(err));

	if (!v)
		print_error("kvcs_open(%s): %s\n", dir, err);
	assert_non_null(v);
	return v;
}

static void assert_err_has(struct kvcs *v, const char *what)
{
	if (!strstr(kvcs_error(v), what))
		print_error("error \"%s\" lacks \"%s\"\n", kvcs_error(v), what);
	assert_non_null(strstr(kvcs_error(v), what));
}

/* ---- open, resolve ---- */

static void test_open_errors(void **state)
{
	char err[512], *dir = new_dir();
	struct kvcs_commit c;
	struct kvcs_list l;
	struct kb_graph g;

	assert_null(kvcs_open(NULL, err, sizeof(err)));
	assert_null(kvcs_open(dir, err, sizeof(err)));
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, "is not a git work tree"));
	/* libgit2's own words follow */
	assert_non_null(strstr(err, "could not find repository"));
	assert_null(kvcs_open("/nonexistent/ktest", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/ktest"));

	/* NULL everywhere: errors, no crash */
	assert_string_equal(kvcs_error(NULL), "no repository");
	kvcs_close(NULL);
	kvcs_list_free(NULL);
	kvcs_commit_clear(NULL);
	kvcs_graph_free(NULL);
	kvcs_free_paths(NULL, 3);
	assert_int_equal(kvcs_resolve(NULL, "HEAD", &c), -1);
	assert_int_equal(kvcs_range(NULL, NULL, "HEAD", false, &l), -1);
	assert_int_equal(kvcs_bisect_graph(NULL, "HEAD", NULL, 0, NULL, 0,
					   false, &g, NULL, NULL), -1);
	assert_int_equal(kvcs_checkout(NULL, "HEAD", false), -1);
	assert_int_equal(kvcs_is_ancestor(NULL, "a", "b"), -1);
	free(dir);
}

static void test_bare_and_empty(void **state)
{
	char err[512], *dir = new_dir(), **paths;
	git_repository *r;
	struct kvcs_commit c;
	struct kvcs_list l;
	struct kb_graph g;
	struct kvcs *v;
	size_t n;

	assert_int_equal(git_repository_init(&r, dir, 1), 0);
	git_repository_free(r);
	assert_null(kvcs_open(dir, err, sizeof(err)));
	assert_non_null(strstr(err, "bare"));
	free(dir);

	r = new_repo(&dir);
	v = open_ok(dir);
	assert_int_equal(kvcs_head(v, &c), -1);
	assert_err_has(v, "no commit yet");
	assert_int_equal(kvcs_resolve(v, "HEAD", &c), -1);
	assert_err_has(v, "unknown revision 'HEAD'");
	assert_int_equal(kvcs_resolve(v, "", &c), -1);
	assert_int_equal(kvcs_resolve(v, NULL, &c), -1);
	assert_int_equal(kvcs_range(v, NULL, "HEAD", false, &l), -1);
	assert_int_equal(kvcs_bisect_graph(v, "HEAD", NULL, 0, NULL, 0, false,
					   &g, NULL, NULL), -1);
	assert_int_equal(kvcs_dirty_files(v, &paths, &n), 0);
	assert_int_equal(n, 0);
	kvcs_free_paths(paths, n);
	assert_int_equal(kvcs_worktree_add(v, "w", "/tmp/x", "HEAD"), -1);
	kvcs_close(v);
	git_repository_free(r);
	free(dir);
}

static void test_resolve(void **state)
{
	struct file f[] = { { "a", "1\n" } };
	git_oid t, c[5], tag;
	git_object *obj;
	git_signature *sig;
	git_reference *ref;
	git_repository *r;
	char *dir, id[5][KB_ID_LEN], tagid[KB_ID_LEN], shortid[8];
	struct kvcs_commit k;
	struct kvcs *v;

	r = new_repo(&dir);
	for (int i = 0; i < 5; i++) {
		char content[16], msg[64];

		snprintf(content, sizeof(content), "%d\n", i);
		f[0].content = content;
		t = tree_of(r, f, 1);
		snprintf(msg, sizeof(msg), "commit %d\n\nthe body\n", i);
		c[i] = commit_at(r, &t, i ? &c[i - 1] : NULL, i ? 1 : 0,
				 BASE_TIME + i, msg);
		hex(id[i], &c[i]);
	}
	set_ref(r, "refs/heads/main", &c[4]);
	set_ref(r, "refs/heads/topic", &c[1]);
	assert_int_equal(git_object_lookup(&obj, r, &c[2], GIT_OBJECT_COMMIT),
			 0);
	assert_int_equal(git_tag_create_lightweight(&tag, r, "light", obj, 0), 0);
	git_object_free(obj);
	assert_int_equal(git_object_lookup(&obj, r, &c[3], GIT_OBJECT_COMMIT),
			 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@e", BASE_TIME, 0), 0);
	assert_int_equal(git_tag_create(&tag, r, "v1.0", obj, sig, "v1.0\n", 0), 0);
	git_signature_free(sig);
	git_object_free(obj);
	hex(tagid, &tag);
	/* a tag of a tag peels twice */
	assert_int_equal(git_reference_create(&ref, r, "refs/tags/v1.0-again",
					      &tag, 0, NULL), 0);
	git_reference_free(ref);

	v = open_ok(dir);
	struct { const char *rev; int want; } cases[] = {
		{ "HEAD", 4 }, { "main", 4 }, { "refs/heads/main", 4 },
		{ "HEAD~2", 2 }, { "HEAD^", 3 }, { "main~4", 0 },
		{ "topic", 1 }, { "light", 2 }, { "v1.0", 3 },
		{ "refs/tags/v1.0", 3 }, { "v1.0^{commit}", 3 },
		{ "v1.0~1", 2 }, { "v1.0-again", 3 }, { "HEAD@{0}", 4 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (kvcs_resolve(v, cases[i].rev, &k))
			print_error("%s: %s\n", cases[i].rev, kvcs_error(v));
		assert_string_equal(k.id, id[cases[i].want]);
		kvcs_commit_clear(&k);
	}
	assert_int_equal(kvcs_resolve(v, id[1], &k), 0);
	assert_string_equal(k.id, id[1]);
	assert_string_equal(k.subject, "commit 1");
	kvcs_commit_clear(&k);
	memcpy(shortid, id[2], 7);
	shortid[7] = '\0';
	assert_int_equal(kvcs_resolve(v, shortid, &k), 0);
	assert_string_equal(k.id, id[2]);
	kvcs_commit_clear(&k);
	/* the id of the tag object itself */
	assert_int_equal(kvcs_resolve(v, tagid, &k), 0);
	assert_string_equal(k.id, id[3]);
	kvcs_commit_clear(&k);
	assert_int_equal(kvcs_head(v, &k), 0);
	assert_string_equal(k.id, id[4]);
	kvcs_commit_clear(&k);

	/* errors carry the revision and libgit2's reason */
	assert_int_equal(kvcs_resolve(v, "v9.9", &k), -1);
	assert_string_equal(kvcs_error(v),
			    "unknown revision 'v9.9': revspec 'v9.9' not found");
	assert_int_equal(kvcs_resolve(v, "HEAD~9", &k), -1);
	assert_err_has(v, "'HEAD~9'");
	assert_int_equal(kvcs_resolve(v, "HEAD^{tree}", &k), -1);
	assert_err_has(v, "'HEAD^{tree}' is not a commit");
	assert_int_equal(kvcs_resolve(v, "main..topic", &k), -1);
	assert_int_equal(kvcs_resolve(v, "0000000000000000000000000000000000000000",
				      &k), -1);

	assert_int_equal(kvcs_is_ancestor(v, "topic", "main"), 1);
	assert_int_equal(kvcs_is_ancestor(v, "main", "topic"), 0);
	assert_int_equal(kvcs_is_ancestor(v, "v1.0", "v1.0^{commit}"), 1);
	assert_int_equal(kvcs_is_ancestor(v, "nope", "main"), -1);
	assert_err_has(v, "'nope'");
	kvcs_close(v);
	git_repository_free(r);
	free(dir);
}

/* ---- a small history with a side branch ---- */

/*
 *   c1 - c2 - c3 ------- m - c4        main
 *          \            /
 *           s1 - s2 ---'               side
 */
struct small {
	git_repository *r;
	char *dir;
	git_oid c1, c2, c3, s1, s2, m, c4;
	char h_c1[KB_ID_LEN], h_c2[KB_ID_LEN], h_c3[KB_ID_LEN];
	char h_s1[KB_ID_LEN], h_s2[KB_ID_LEN], h_m[KB_ID_LEN];
	char h_c4[KB_ID_LEN];
};

static void make_small(struct small *s)
{
	struct file f[] = {
		{ "a", "a1\n" }, { "b", "b1\n" }, { "dir/c", "c1\n" },
		{ "e", NULL }, { "k", "keep\n" },
	};
	git_oid t, p[2];

	s->r = new_repo(&s->dir);
	t = tree_of(s->r, f, 5);
	s->c1 = commit_at(s->r, &t, NULL, 0, BASE_TIME, "c1");
	f[0].content = "a2\n";
	t = tree_of(s->r, f, 5);
	s->c2 = commit_at(s->r, &t, &s->c1, 1, BASE_TIME + 10, "c2");
	f[1].content = NULL;			/* b removed */
	f[3].content = "e3\n";			/* e added */
	t = tree_of(s->r, f, 5);
	s->c3 = commit_at(s->r, &t, &s->c2, 1, BASE_TIME + 20, "c3");
	{
		struct file g[] = {
			{ "a", "a2\n" }, { "b", "b1\n" }, { "dir/c", "c-s1\n" },
			{ "k", "keep\n" },
		};

		t = tree_of(s->r, g, 4);
		s->s1 = commit_at(s->r, &t, &s->c2, 1, BASE_TIME + 15, "s1");
		g[2].content = "c-s2\n";
		t = tree_of(s->r, g, 4);
		s->s2 = commit_at(s->r, &t, &s->s1, 1, BASE_TIME + 25, "s2");
	}
	f[2].content = "c-s2\n";
	t = tree_of(s->r, f, 5);
	p[0] = s->c3;
	p[1] = s->s2;
	s->m = commit_at(s->r, &t, p, 2, BASE_TIME + 30, "merge side");
	f[0].content = "a4\n";
	t = tree_of(s->r, f, 5);
	s->c4 = commit_at(s->r, &t, &s->m, 1, BASE_TIME + 40, "c4");
	set_ref(s->r, "refs/heads/main", &s->c4);
	set_ref(s->r, "refs/heads/side", &s->s2);
	hex(s->h_c1, &s->c1);
	hex(s->h_c2, &s->c2);
	hex(s->h_c3, &s->c3);
	hex(s->h_s1, &s->s1);
	hex(s->h_s2, &s->s2);
	hex(s->h_m, &s->m);
	hex(s->h_c4, &s->c4);
}

static void free_small(struct small *s)
{
	git_repository_free(s->r);
	free(s->dir);
}

static bool in_list(const struct kvcs_list *l, const char *id, size_t *at)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i].id, id)) {
			if (at)
				*at = i;
			return true;
		}
	}
	return false;
}

/* Every commit after its parents that are listed too. */
static void assert_parents_first(git_repository *r, const struct kvcs_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		git_commit *c;
		git_oid id;

		assert_int_equal(git_oid_fromstr(&id, l->v[i].id), 0);
		assert_int_equal(git_commit_lookup(&c, r, &id), 0);
		for (unsigned k = 0; k < git_commit_parentcount(c); k++) {
			char ph[KB_ID_LEN];
			size_t at;

			hex(ph, git_commit_parent_id(c, k));
			if (in_list(l, ph, &at))
				assert_true(at < i);
		}
		git_commit_free(c);
	}
}

static void assert_list(const struct kvcs_list *l, const char *const *want,
			size_t n)
{
	if (l->n != n)
		print_error("got %zu commits, want %zu\n", l->n, n);
	assert_int_equal(l->n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(l->v[i].id, want[i]);
}

/* The same set as git's "rev-list from^@ to" (git's own order may differ). */
static void assert_range_like_git(struct small *s, struct kvcs_list *l,
				  const char *from, const char *to, bool fp)
{
	struct sbuf out;
	size_t n = 0;
	char *line, *save = NULL;

	sbuf_init(&out);
	assert_int_equal(run(&out, "git -C %s rev-list %s %s --not %s%s",
			     s->dir, fp ? "--first-parent" : "", to,
			     from ? from : "", from ? "^@" : ""), 0);
	for (line = strtok_r(out.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++)
		assert_true(in_list(l, line, NULL));
	assert_int_equal(n, l->n);
	sbuf_free(&out);
}

static void test_range(void **state)
{
	struct small s;
	struct kvcs_list l;
	struct kvcs *v;

	make_small(&s);
	v = open_ok(s.dir);

	assert_int_equal(kvcs_range(v, s.h_c2, "main", false, &l), 0);
	assert_int_equal(l.n, 6);
	assert_string_equal(l.v[0].id, s.h_c2);
	assert_string_equal(l.v[5].id, s.h_c4);
	assert_string_equal(l.v[5].subject, "c4");
	assert_false(in_list(&l, s.h_c1, NULL));
	assert_parents_first(s.r, &l);
	assert_range_like_git(&s, &l, s.h_c2, "main", false);
	kvcs_list_free(&l);

	{
		const char *want[] = { s.h_c2, s.h_c3, s.h_m, s.h_c4 };

		assert_int_equal(kvcs_range(v, s.h_c2, "main", true, &l), 0);
		assert_list(&l, want, 4);
		assert_range_like_git(&s, &l, s.h_c2, "main", true);
		kvcs_list_free(&l);
	}
	/* s1^@..m: c3 is no descendant of s1, but no ancestor of c2 either */
	assert_int_equal(kvcs_range(v, s.h_s1, s.h_m, false, &l), 0);
	assert_int_equal(l.n, 4);
	assert_true(in_list(&l, s.h_c3, NULL));
	assert_string_equal(l.v[3].id, s.h_m);
	assert_parents_first(s.r, &l);
	assert_range_like_git(&s, &l, s.h_s1, s.h_m, false);
	kvcs_list_free(&l);
	{
		const char *want[] = { s.h_c4 };

		assert_int_equal(kvcs_range(v, "main", "main", false, &l), 0);
		assert_list(&l, want, 1);
		kvcs_list_free(&l);
	}
	/* everything */
	assert_int_equal(kvcs_range(v, NULL, "main", false, &l), 0);
	assert_int_equal(l.n, 7);
	assert_string_equal(l.v[0].id, s.h_c1);
	assert_parents_first(s.r, &l);
	assert_range_like_git(&s, &l, NULL, "main", false);
	kvcs_list_free(&l);
	/* a root as from: from^@ is nothing */
	assert_int_equal(kvcs_range(v, s.h_c1, "main", true, &l), 0);
	assert_int_equal(l.n, 5);
	kvcs_list_free(&l);

	/* errors name both ends */
	assert_int_equal(kvcs_range(v, s.h_s1, s.h_c3, false, &l), -1);
	assert_err_has(v, "is not an ancestor of");
	assert_err_has(v, s.h_s1);
	assert_int_equal(l.n, 0);
	assert_int_equal(kvcs_range(v, s.h_s1, "main", true, &l), -1);
	assert_err_has(v, "is not on the first-parent line of 'main'");
	assert_int_equal(kvcs_range(v, "nope", "main", false, &l), -1);
	assert_err_has(v, "unknown revision 'nope'");
	assert_int_equal(kvcs_range(v, s.h_c1, "nope", false, &l), -1);
	assert_err_has(v, "'nope'");
	kvcs_close(v);
	free_small(&s);
}

static void test_touched_files(void **state)
{
	struct small s;
	struct kvcs *v;
	char **p;
	size_t n;

	make_small(&s);
	v = open_ok(s.dir);
	assert_int_equal(kvcs_touched_files(v, s.h_c3, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0], "b");		/* deleted */
	assert_string_equal(p[1], "e");		/* added */
	assert_null(p[2]);
	kvcs_free_paths(p, n);
	/* a root: everything */
	assert_int_equal(kvcs_touched_files(v, s.h_c1, &p, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(p[0], "a");
	assert_string_equal(p[1], "b");
	assert_string_equal(p[2], "dir/c");
	assert_string_equal(p[3], "k");
	kvcs_free_paths(p, n);
	/* a merge: against its first parent */
	assert_int_equal(kvcs_touched_files(v, s.h_m, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(p[0], "dir/c");
	kvcs_free_paths(p, n);
	assert_int_equal(kvcs_touched_files(v, "nope", &p, &n), -1);
	assert_null(p);
	assert_int_equal(n, 0);

	/* a rename lists both names */
	{
		struct file f[] = { { "old", "same\n" }, { "new", NULL } };
		git_oid t, c1, c2;
		char h[KB_ID_LEN];

		t = tree_of(s.r, f, 2);
		c1 = commit_at(s.r, &t, &s.c4, 1, BASE_TIME + 50, "x");
		f[0].content = NULL;
		f[1].content = "same\n";
		t = tree_of(s.r, f, 2);
		c2 = commit_at(s.r, &t, &c1, 1, BASE_TIME + 60, "rename");
		hex(h, &c2);
		assert_int_equal(kvcs_touched_files(v, h, &p, &n), 0);
		assert_int_equal(n, 2);
		assert_string_equal(p[0], "new");
		assert_string_equal(p[1], "old");
		kvcs_free_paths(p, n);

		/* a file turned symlink: one path, once */
		{
			git_treebuilder *tb;
			git_oid blob = write_blob(s.r, "target"), c3;

			assert_int_equal(git_treebuilder_new(&tb, s.r, NULL),
					 0);
			assert_int_equal(git_treebuilder_insert(NULL, tb, "new",
					 &blob, GIT_FILEMODE_LINK), 0);
			assert_int_equal(git_treebuilder_write(&t, tb), 0);
			git_treebuilder_free(tb);
			c3 = commit_at(s.r, &t, &c2, 1, BASE_TIME + 70, "link");
			hex(h, &c3);
			assert_int_equal(kvcs_touched_files(v, h, &p, &n), 0);
			assert_int_equal(n, 1);
			assert_string_equal(p[0], "new");
			kvcs_free_paths(p, n);
		}
	}
	kvcs_close(v);
	free_small(&s);
}

/* ---- git cherry ---- */

static void test_cherry(void **state)
{
	struct file base[] = {
		{ "a", "1\n2\n3\n4\n5\n6\n7\n8\n9\n" }, { "b", "b\n" },
		{ "bin", "\x01\x02~\x03" },
	};
	struct file f[3];
	git_oid t, b0, u1, u2, u3, t1, t2, t3, t4, tm, p[2];
	char *dir, h[KB_ID_LEN], want[8][KB_ID_LEN];
	git_repository *r;
	struct kvcs_list l;
	struct sbuf out;
	struct kvcs *v;
	size_t nwant = 0;

	r = new_repo(&dir);
	t = tree_of(r, base, 3);
	b0 = commit_at(r, &t, NULL, 0, BASE_TIME, "base");

	/* upstream: the change of t1 (same patch, other place), u2, u3 */
	memcpy(f, base, sizeof(f));
	f[1].content = "b\nupstream\n";
	t = tree_of(r, f, 3);
	u1 = commit_at(r, &t, &b0, 1, BASE_TIME + 10, "upstream u1");
	f[0].content = "1\n2\nTWO\n3\n4\n5\n6\n7\n8\n9\n";
	t = tree_of(r, f, 3);
	u2 = commit_at(r, &t, &u1, 1, BASE_TIME + 20, "picked t1");
	f[2].content = "\x01\x02~\x03upstream";
	t = tree_of(r, f, 3);
	u3 = commit_at(r, &t, &u2, 1, BASE_TIME + 30, "binary upstream");

	/* topic: t1 (picked upstream), t2, binary t3 (differs), merge, t4 */
	memcpy(f, base, sizeof(f));
	f[0].content = "1\n2\nTWO\n3\n4\n5\n6\n7\n8\n9\n";
	t = tree_of(r, f, 3);
	t1 = commit_at(r, &t, &b0, 1, BASE_TIME + 11, "t1");
	f[0].content = "1\n2\nTWO\n3\n4\n5\n6\n7\n8\nNINE\n";
	t = tree_of(r, f, 3);
	t2 = commit_at(r, &t, &t1, 1, BASE_TIME + 21, "t2");
	f[2].content = "\x01\x02~\x03topic";
	t = tree_of(r, f, 3);
	t3 = commit_at(r, &t, &t2, 1, BASE_TIME + 31, "binary topic");
	p[0] = t3;
	p[1] = u1;
	f[1].content = "b\nupstream\n";
	t = tree_of(r, f, 3);
	tm = commit_at(r, &t, p, 2, BASE_TIME + 41, "merge u1");
	f[1].content = "b\nupstream\nmore\n";
	t = tree_of(r, f, 3);
	t4 = commit_at(r, &t, &tm, 1, BASE_TIME + 51, "t4");
	set_ref(r, "refs/heads/upstream", &u3);
	set_ref(r, "refs/heads/topic", &t4);

	v = open_ok(dir);
	assert_int_equal(kvcs_cherry(v, "upstream", "topic", &l), 0);
	/* git cherry's "+" lines, in its order */
	sbuf_init(&out);
	assert_int_equal(run(&out, "git -C %s cherry upstream topic", dir), 0);
	for (char *s = out.buf; s && *s; ) {
		char *e = strchr(s, '\n');

		if (*s == '+' && nwant < 8) {
			memcpy(want[nwant], s + 2, KB_ID_LEN - 1);
			want[nwant++][KB_ID_LEN - 1] = '\0';
		}
		s = e ? e + 1 : NULL;
	}
	assert_int_equal(l.n, nwant);
	for (size_t i = 0; i < l.n; i++)
		assert_string_equal(l.v[i].id, want[i]);
	/* and what that is: t2, binary t3 (differs from upstream's), t4 */
	assert_int_equal(l.n, 3);
	hex(h, &t2);
	assert_string_equal(l.v[0].id, h);
	assert_string_equal(l.v[0].subject, "t2");
	hex(h, &t3);
	assert_string_equal(l.v[1].id, h);
	hex(h, &t4);
	assert_string_equal(l.v[2].id, h);
	kvcs_list_free(&l);

	assert_int_equal(kvcs_cherry(v, "topic", "topic", &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(kvcs_cherry(v, "nope", "topic", &l), -1);
	assert_err_has(v, "unknown revision 'nope'");
	kvcs_close(v);
	sbuf_free(&out);
	git_repository_free(r);
	free(dir);
}

/* ---- status, checkout ---- */

static const struct timespec OLD = { 978307200, 0 };	/* 2001-01-01 */

static void age(const char *dir, const char *path)
{
	struct timespec ts[2] = { OLD, OLD };
	char *p = xasprintf("%s/%s", dir, path);

	assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
	free(p);
}

static bool is_old(const char *dir, const char *path)
{
	char *p = xasprintf("%s/%s", dir, path);
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	free(p);
	return st.st_mtim.tv_sec == OLD.tv_sec;
}

static bool exists(const char *dir, const char *path)
{
	char *p = xasprintf("%s/%s", dir, path);
	struct stat st;
	bool r = lstat(p, &st) == 0;

	free(p);
	return r;
}

static void put(const char *dir, const char *path, const char *s)
{
	char *p = xasprintf("%s/%s", dir, path);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(s, f);
	fclose(f);
	free(p);
}

static char *slurp(const char *dir, const char *path)
{
	char *p = xasprintf("%s/%s", dir, path), buf[256];
	FILE *f = fopen(p, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	free(p);
	return xstrdup(buf);
}

static void assert_head_detached_at(git_repository *r, const char *id)
{
	git_reference *head;
	char h[KB_ID_LEN];

	assert_int_equal(git_repository_head_detached(r), 1);
	assert_int_equal(git_repository_head(&head, r), 0);
	hex(h, git_reference_target(head));
	assert_string_equal(h, id);
	git_reference_free(head);
}

static void assert_dirty(struct kvcs *v, const char *const *want, size_t n)
{
	char **p;
	size_t np;

	assert_int_equal(kvcs_dirty_files(v, &p, &np), 0);
	if (np != n)
		for (size_t i = 0; i < np; i++)
			print_error("dirty: %s\n", p[i]);
	assert_int_equal(np, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(p[i], want[i]);
	kvcs_free_paths(p, np);
}

/* the file dir/path holds want */
static void assert_file(const char *dir, const char *path, const char *want)
{
	char *txt = slurp(dir, path);

	assert_string_equal(txt, want);
	free(txt);
}

/* git agrees: HEAD detached at id, no tracked file changed */
static void assert_git_clean_at(const char *dir, const char *id)
{
	struct sbuf out;

	sbuf_init(&out);
	assert_int_equal(run(&out, "git -C %s status --porcelain --untracked-files=no",
			     dir), 0);
	assert_string_equal(sbuf_str(&out), "");
	assert_int_equal(run(&out, "git -C %s symbolic-ref -q HEAD", dir), 1);
	assert_int_equal(run(&out, "git -C %s rev-parse HEAD", dir), 0);
	assert_memory_equal(out.buf, id, 40);
	sbuf_free(&out);
}

static void age_all(const char *dir, const char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		age(dir, paths[i]);
}

static void test_checkout(void **state)
{
	const char *all[] = { "a", "dir/c", "e", "k" };
	struct small s;
	struct kvcs *v;
	git_repository *r;
	git_index *idx;
	char *p;

	make_small(&s);
	v = open_ok(s.dir);
	/* HEAD is main but nothing is checked out: only force will do */
	assert_int_equal(kvcs_check_clean(v), 1);
	assert_err_has(v, "has local changes to 4 files: a, dir/c, e, k");
	assert_false(kvcs_synced(v));
	assert_int_equal(kvcs_checkout(v, "main", false), -1);
	assert_err_has(v, "can't check out 'main' (it would lose them): ");
	assert_err_has(v, "has local changes to 4 files: a, dir/c, e, k");
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	assert_true(kvcs_synced(v));
	assert_head_detached_at(s.r, s.h_c4);
	assert_dirty(v, NULL, 0);
	assert_int_equal(kvcs_check_clean(v), 0);

	/* c4 -> c2: a and dir/c rewritten, e goes, b comes, k untouched */
	age_all(s.dir, all, 4);
	put(s.dir, "junk.o", "untracked\n");
	assert_int_equal(kvcs_check_clean(v), 0);	/* untracked: no change */
	assert_int_equal(kvcs_checkout(v, s.h_c2, false), 0);
	assert_head_detached_at(s.r, s.h_c2);
	assert_true(is_old(s.dir, "k"));
	assert_false(is_old(s.dir, "a"));
	assert_false(is_old(s.dir, "dir/c"));
	assert_true(exists(s.dir, "b"));
	assert_false(exists(s.dir, "e"));
	assert_true(exists(s.dir, "junk.o"));	/* untracked stays */

	/* c2 -> c3: only b and e change; a, dir/c, k keep their mtimes */
	{
		const char *now[] = { "a", "b", "dir/c", "k" };

		age_all(s.dir, now, 4);
	}
	assert_int_equal(kvcs_checkout(v, s.h_c3, false), 0);
	assert_true(is_old(s.dir, "a"));
	assert_true(is_old(s.dir, "dir/c"));
	assert_true(is_old(s.dir, "k"));
	assert_false(exists(s.dir, "b"));
	assert_false(is_old(s.dir, "e"));

	/* c3 -> the merge: dir/c only */
	age_all(s.dir, all, 4);
	assert_int_equal(kvcs_checkout(v, s.h_m, false), 0);
	assert_head_detached_at(s.r, s.h_m);
	assert_true(is_old(s.dir, "a"));
	assert_true(is_old(s.dir, "e"));
	assert_true(is_old(s.dir, "k"));
	assert_false(is_old(s.dir, "dir/c"));
	assert_file(s.dir, "dir/c", "c-s2\n");

	/* local changes: listed, and the checkout refuses naming them */
	put(s.dir, "a", "local\n");
	{
		const char *want[] = { "a" };

		assert_dirty(v, want, 1);
	}
	assert_int_equal(kvcs_checkout(v, s.h_c4, false), -1);
	assert_err_has(v, "has local changes to 1 file: a");
	assert_err_has(v, s.h_c4);
	assert_head_detached_at(s.r, s.h_m);
	assert_file(s.dir, "a", "local\n");
	/* staged, deleted, "git rm --cached" */
	assert_int_equal(git_repository_index(&idx, s.r), 0);
	put(s.dir, "new", "staged\n");
	assert_int_equal(git_index_add_bypath(idx, "new"), 0);
	assert_int_equal(git_index_remove_bypath(idx, "e"), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	p = xasprintf("%s/dir/c", s.dir);
	assert_int_equal(unlink(p), 0);
	free(p);
	{
		const char *want[] = { "a", "dir/c", "e", "new" };

		assert_dirty(v, want, 4);
	}
	assert_int_equal(kvcs_checkout(v, s.h_c4, false), -1);
	assert_err_has(v, "has local changes to 4 files: a, dir/c, e, new");

	/* force: back to exactly c4 */
	assert_int_equal(kvcs_checkout(v, s.h_c4, true), 0);
	assert_head_detached_at(s.r, s.h_c4);
	assert_file(s.dir, "a", "a4\n");
	assert_true(exists(s.dir, "dir/c"));
	assert_true(exists(s.dir, "junk.o"));
	assert_dirty(v, NULL, 0);

	/* an untracked file where the target has a tracked one */
	assert_int_equal(kvcs_checkout(v, s.h_c2, false), 0);
	put(s.dir, "e", "mine\n");
	assert_int_equal(kvcs_checkout(v, s.h_c3, false), -1);
	assert_err_has(v, "would overwrite untracked files: e");
	assert_file(s.dir, "e", "mine\n");
	assert_head_detached_at(s.r, s.h_c2);
	/* forced (a resumed run's first checkout): not lost either */
	assert_int_equal(kvcs_checkout(v, s.h_c3, true), -1);
	assert_err_has(v, "would overwrite untracked files: e (move them away");
	assert_file(s.dir, "e", "mine\n");
	assert_head_detached_at(s.r, s.h_c2);
	/* what a checkout of c3 killed half-way would have left: no loss */
	put(s.dir, "e", "e3\n");
	assert_int_equal(kvcs_checkout(v, s.h_c3, true), 0);
	assert_file(s.dir, "e", "e3\n");
	assert_head_detached_at(s.r, s.h_c3);

	assert_int_equal(kvcs_checkout(v, "nope", true), -1);
	assert_err_has(v, "unknown revision 'nope'");
	kvcs_close(v);

	assert_git_clean_at(s.dir, s.h_c3);
	/* and a repository opened afresh sees it */
	assert_int_equal(git_repository_open(&r, s.dir), 0);
	assert_head_detached_at(r, s.h_c3);
	git_repository_free(r);
	free_small(&s);
}

/* The work tree and HEAD as c2 has them (k aside: tests vary it). */
static void assert_at_c2(const struct small *s)
{
	assert_head_detached_at(s->r, s->h_c2);
	assert_file(s->dir, "a", "a2\n");
	assert_file(s->dir, "dir/c", "c1\n");
	assert_file(s->dir, "b", "b1\n");
	assert_false(exists(s->dir, "e"));
}

/* The small repository, checked out at main by a new handle. */
static struct kvcs *small_at_main(struct small *s)
{
	struct kvcs *v;

	make_small(s);
	v = open_ok(s->dir);
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	return v;
}

/*
 * kvcs_checkout_changed(): only the files where the index and the target
 * differ are written; a local change elsewhere stays (as "git checkout").
 */
static void test_checkout_changed(void **state)
{
	const char *all[] = { "a", "dir/c", "e", "k" };
	const char *c2_files[] = { "a", "b", "dir/c", "k" };
	struct small s;
	struct kvcs *v = small_at_main(&s);

	/* c4 -> c2: a and dir/c rewritten, e goes, b comes; k's local change stays */
	age_all(s.dir, all, 4);
	put(s.dir, "junk.o", "untracked\n");
	put(s.dir, "k", "mine\n");
	age(s.dir, "k");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), 0);
	assert_at_c2(&s);
	assert_file(s.dir, "k", "mine\n");
	assert_true(is_old(s.dir, "k"));
	assert_true(exists(s.dir, "junk.o"));
	{
		const char *want[] = { "k" };

		assert_dirty(v, want, 1);
	}

	/* nothing differs: nothing is written */
	age_all(s.dir, c2_files, 4);
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), 0);
	for (size_t i = 0; i < 4; i++)
		assert_true(is_old(s.dir, c2_files[i]));

	/* after a revert on top (work tree and index as the revert left them) */
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	{
		bool conflicts;

		assert_int_equal(kvcs_checkout_revert(v, s.h_c4, s.h_c4,
						      &conflicts), 0);
	}
	assert_file(s.dir, "a", "a2\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c4), 0);
	assert_file(s.dir, "a", "a4\n");
	assert_dirty(v, NULL, 0);

	/* another handle moved the tree (a speculative build in place) */
	{
		struct kvcs *other = open_ok(s.dir);

		assert_int_equal(kvcs_checkout_changed(v, s.h_c3), 0);
		assert_int_equal(kvcs_checkout_again(other, s.h_c2), 0);
		kvcs_close(other);
	}
	assert_int_equal(kvcs_checkout_again(v, s.h_c4), 0);
	assert_false(exists(s.dir, "b"));
	assert_file(s.dir, "e", "e3\n");
	assert_file(s.dir, "a", "a4\n");
	assert_dirty(v, NULL, 0);

	assert_int_equal(kvcs_checkout_changed(v, "nope"), -1);
	assert_err_has(v, "unknown revision 'nope'");
	assert_int_equal(kvcs_checkout_changed(NULL, s.h_c4), -1);
	kvcs_close(v);

	assert_git_clean_at(s.dir, s.h_c4);
	free_small(&s);
}

/*
 * A work tree that kvcs_check_clean() finds clean is as its index: the
 * handle is synced, and the first checkout of a run writes only what
 * changes. A dirty one is not synced.
 */
static void test_clean_syncs(void **state)
{
	const char *all[] = { "a", "dir/c", "e", "k" };
	struct small s;
	struct kvcs *v = small_at_main(&s);

	kvcs_close(v);

	/* a new run: a fresh handle on a clean tree */
	v = open_ok(s.dir);
	assert_false(kvcs_synced(v));
	age_all(s.dir, all, 4);
	put(s.dir, "junk.o", "untracked\n");
	assert_int_equal(kvcs_check_clean(v), 0);
	assert_true(kvcs_synced(v));
	assert_int_equal(kvcs_checkout_again(v, s.h_c2), 0);
	assert_at_c2(&s);
	assert_true(is_old(s.dir, "k"));
	assert_true(exists(s.dir, "junk.o"));
	assert_dirty(v, NULL, 0);
	kvcs_close(v);

	/* a local change: refused, not synced */
	put(s.dir, "k", "mine\n");
	v = open_ok(s.dir);
	assert_int_equal(kvcs_check_clean(v), 1);
	assert_false(kvcs_synced(v));
	assert_file(s.dir, "k", "mine\n");
	kvcs_close(v);
	free_small(&s);
}

/* ---- the quick clean check (vcs_stat.c) ---- */

/* kvcs_stat_clean(); when 1, the tree it gives is HEAD's */
static int stat_clean(git_repository *r)
{
	git_oid tree;
	git_object *head;
	int ret = kvcs_stat_clean(r, &tree);

	if (ret == 1) {
		assert_int_equal(git_revparse_single(&head, r, "HEAD^{tree}"), 0);
		assert_true(git_oid_equal(&tree, git_object_id(head)));
		git_object_free(head);
	}
	return ret;
}

static char *path_in(const char *dir, const char *path)
{
	return xasprintf("%s/%s", dir, path);
}

static void set_mtime(const char *path, const struct timespec *t)
{
	struct timespec ts[2] = { *t, *t };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/*
 * kvcs_stat_clean() proves a checked-out tree clean from the stat data
 * and, where that does not settle it, the content; any change makes it
 * answer 0, and the status (kvcs_dirty_files) names the file.
 */
static void test_stat_clean(void **state)
{
	const char *all[] = { "a", "dir/c", "e", "k" };
	const char *k[] = { "k" }, *c[] = { "dir/c" }, *n[] = { "new" };
	struct small s;
	struct kvcs *v = small_at_main(&s);
	char *kp = path_in(s.dir, "k"), *c_was = slurp(s.dir, "dir/c");
	git_index *idx;

	assert_int_equal(stat_clean(s.r), 1);
	put(s.dir, "junk.o", "untracked\n");
	assert_int_equal(stat_clean(s.r), 1);
	/* new mtimes, the same content: hashed, clean */
	age_all(s.dir, all, 4);
	assert_int_equal(stat_clean(s.r), 1);

	/* modified, then put back as it was */
	put(s.dir, "k", "mine, longer\n");
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, k, 1);
	put(s.dir, "k", "kept\n");		/* the same size */
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, k, 1);
	put(s.dir, "k", "keep\n");
	assert_int_equal(stat_clean(s.r), 1);

	/* an exec bit; a file turned symlink */
	assert_int_equal(chmod(kp, 0755), 0);
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, k, 1);
	assert_int_equal(chmod(kp, 0644), 0);
	assert_int_equal(stat_clean(s.r), 1);
	assert_int_equal(unlink(kp), 0);
	assert_int_equal(symlink("keep\n", kp), 0);
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, k, 1);
	assert_int_equal(unlink(kp), 0);
	put(s.dir, "k", "keep\n");
	assert_int_equal(stat_clean(s.r), 1);

	/* deleted */
	{
		char *cp = path_in(s.dir, "dir/c");

		assert_int_equal(unlink(cp), 0);
		assert_int_equal(stat_clean(s.r), 0);
		assert_dirty(v, c, 1);
		put(s.dir, "dir/c", c_was);
		assert_int_equal(stat_clean(s.r), 1);
		free(cp);
	}

	/* staged: the index is not HEAD's tree */
	put(s.dir, "new", "staged\n");
	assert_int_equal(git_repository_index(&idx, s.r), 0);
	assert_int_equal(git_index_add_bypath(idx, "new"), 0);
	assert_int_equal(git_index_write(idx), 0);
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, n, 1);
	assert_int_equal(git_index_remove_bypath(idx, "new"), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	assert_int_equal(stat_clean(s.r), 1);
	assert_dirty(v, NULL, 0);

	/* ktest's own checkouts leave stat data that settles it */
	assert_int_equal(kvcs_checkout_again(v, s.h_c2), 0);
	assert_int_equal(stat_clean(s.r), 1);
	assert_int_equal(kvcs_checkout(v, s.h_c3, false), 0);
	assert_int_equal(stat_clean(s.r), 1);

	free(kp);
	free(c_was);
	kvcs_close(v);
	free_small(&s);
}

/*
 * A file rewritten within the index's own timestamp keeps stat data that
 * matches its entry (git's "racy" case): its content must tell. Written
 * later, the same stat data is trusted, as git and libgit2 trust it.
 */
static void test_stat_clean_racy(void **state)
{
	const char *k[] = { "k" };
	struct small s;
	struct kvcs *v = small_at_main(&s);
	char *kp = path_in(s.dir, "k"), *ip = path_in(s.dir, ".git/index");
	const git_index_entry *e;
	struct timespec t, later;
	git_config *cfg;
	git_index *idx;

	/* a rewrite changes the ctime: leave it out (core.trustctime) */
	assert_int_equal(git_repository_config(&cfg, s.r), 0);
	assert_int_equal(git_config_set_bool(cfg, "core.trustctime", 0), 0);
	git_config_free(cfg);
	assert_int_equal(git_repository_index(&idx, s.r), 0);
	assert_int_equal(git_index_read(idx, 1), 0);
	e = git_index_get_bypath(idx, "k", 0);
	assert_non_null(e);
	t.tv_sec = e->mtime.seconds;
	t.tv_nsec = e->mtime.nanoseconds;
	git_index_free(idx);
	later = t;
	later.tv_sec += 10;

	/* the same size, the same inode, the entry's mtime */
	put(s.dir, "k", "KEEP\n");
	set_mtime(kp, &t);
	set_mtime(ip, &later);
	assert_int_equal(stat_clean(s.r), 1);
	/* the index written in the same tick: racy, hashed */
	set_mtime(ip, &t);
	assert_int_equal(stat_clean(s.r), 0);
	assert_dirty(v, k, 1);

	free(kp);
	free(ip);
	kvcs_close(v);
	free_small(&s);
}

/*
 * More files than one thread scans (two threads on two CPUs): a change is
 * seen in the first part and in the last; a symlink is hashed as git
 * stores it (its target's name); more files to hash than is
 * worth it gives no verdict, and the status still finds the tree clean.
 */
static void test_stat_clean_many(void **state)
{
	const char *first[] = { "d00/f00" }, *last[] = { "d89/f99" };
	struct sbuf out;
	git_repository *r;
	struct kvcs *v;
	char *dir;

	r = new_repo(&dir);
	for (unsigned d = 0; d < 90; d++) {
		char *sub = xasprintf("%s/d%02u", dir, d);

		assert_int_equal(mkdir(sub, 0755), 0);
		for (unsigned f = 0; f < 100; f++) {
			char name[16], body[16];

			snprintf(name, sizeof(name), "f%02u", f);
			snprintf(body, sizeof(body), "%u\n", d * 100 + f);
			put(sub, name, body);
		}
		free(sub);
	}
	{
		char *lp = path_in(dir, "link");

		assert_int_equal(symlink("d00/f00", lp), 0);
		free(lp);
	}
	sbuf_init(&out);
	assert_int_equal(run(&out, "cd %s && git add -A && git -c user.name=t -c user.email=t@t.invalid commit -q -m all",
			     dir), 0);
	sbuf_free(&out);
	v = open_ok(dir);
	assert_int_equal(stat_clean(r), 1);

	put(dir, "d89/f99", "changed\n");
	assert_int_equal(stat_clean(r), 0);
	assert_dirty(v, last, 1);
	put(dir, "d89/f99", "8999\n");
	assert_int_equal(stat_clean(r), 1);
	put(dir, "d00/f00", "changed\n");
	assert_int_equal(stat_clean(r), 0);
	assert_dirty(v, first, 1);
	put(dir, "d00/f00", "0\n");
	assert_int_equal(stat_clean(r), 1);
	/* a symlink's new mtime: its target's name tells */
	age(dir, "link");
	assert_int_equal(stat_clean(r), 1);

	/* 300 files with new mtimes: the status hashes them, not this */
	for (unsigned i = 0; i < 300; i++) {
		char name[16];

		snprintf(name, sizeof(name), "d%02u/f%02u", i / 100, i % 100);
		age(dir, name);
	}
	assert_int_equal(stat_clean(r), 0);
	assert_dirty(v, NULL, 0);

	kvcs_close(v);
	git_repository_free(r);
	free(dir);
}

static char *slurp_bin(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void put_bin(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/*
 * After a check that found the index HEAD's, or a checkout by the index,
 * the next checkout compares the index's known tree with the commit's: a
 * subtree the two share is not read (here its object is gone, and the
 * checkout still works). When the index changed in between (a change
 * staged by hand), the index itself is compared, and the staged file is
 * checked out as in the commit.
 */
static void test_checkout_known(void **state)
{
	struct small s;
	struct kvcs *v;
	git_tree *t = NULL;
	git_tree_entry *dir = NULL;
	git_commit *c = NULL;
	git_index *idx;
	char hexid[KB_ID_LEN], *obj, *saved;
	size_t len;

	/* what libgit2 read once must be read again */
	assert_int_equal(git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 0), 0);
	v = small_at_main(&s);
	assert_int_equal(kvcs_checkout(v, s.h_c1, true), 0);
	kvcs_close(v);
	v = open_ok(s.dir);
	assert_int_equal(kvcs_check_clean(v), 0);

	/* dir/ is the same tree in c1 and c2: take its object away */
	assert_int_equal(git_commit_lookup(&c, s.r, &s.c2), 0);
	assert_int_equal(git_commit_tree(&t, c), 0);
	assert_int_equal(git_tree_entry_bypath(&dir, t, "dir"), 0);
	hex(hexid, git_tree_entry_id(dir));
	obj = xasprintf("%s/.git/objects/%.2s/%s", s.dir, hexid, hexid + 2);
	saved = slurp_bin(obj, &len);
	assert_int_equal(unlink(obj), 0);
	assert_int_equal(kvcs_checkout_again(v, s.h_c2), 0);
	assert_file(s.dir, "a", "a2\n");
	assert_file(s.dir, "dir/c", "c1\n");
	assert_head_detached_at(s.r, s.h_c2);
	put_bin(obj, saved, len);

	/* staged by hand: the index, not the known tree, says what to write */
	put(s.dir, "k", "mine\n");
	assert_int_equal(git_repository_index(&idx, s.r), 0);
	assert_int_equal(git_index_read(idx, 1), 0);
	assert_int_equal(git_index_add_bypath(idx, "k"), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	assert_int_equal(kvcs_checkout_again(v, s.h_c1), 0);
	assert_file(s.dir, "a", "a1\n");
	assert_file(s.dir, "k", "keep\n");
	assert_git_clean_at(s.dir, s.h_c1);

	assert_int_equal(git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 1), 0);
	free(saved);
	free(obj);
	git_tree_entry_free(dir);
	git_tree_free(t);
	git_commit_free(c);
	kvcs_close(v);
	free_small(&s);
}

/* from each of ids to each other, by the index: git agrees each time */
static void checkout_pairs(struct kvcs *v, const char *dir,
			   const char *const *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				continue;
			assert_int_equal(kvcs_checkout_again(v, ids[i]), 0);
			assert_git_clean_at(dir, ids[i]);
			assert_int_equal(kvcs_checkout_again(v, ids[j]), 0);
			assert_git_clean_at(dir, ids[j]);
		}
	}
}

/*
 * From every commit of the small history to every other, by the index's
 * known tree (files added, removed, changed, in and out of a directory,
 * the merge): git finds the tree and the index exactly as the commit.
 */
static void test_checkout_known_pairs(void **state)
{
	struct small s;
	struct kvcs *v = small_at_main(&s);
	const char *ids[] = { s.h_c1, s.h_c2, s.h_c3, s.h_s1, s.h_s2,
			      s.h_m, s.h_c4 };
	size_t n = sizeof(ids) / sizeof(ids[0]);

	assert_int_equal(kvcs_check_clean(v), 0);
	checkout_pairs(v, s.dir, ids, n);
	kvcs_close(v);
	free_small(&s);
}

/*
 * The same for trees that change shape: a directory that comes and goes
 * whole, nested ones, a file that becomes a directory and back; and an
 * untracked file where a directory that comes whole has one. The files
 * each commit touches are those git lists.
 */
static void test_checkout_known_shapes(void **state)
{
	struct file f[][4] = {
		{ { "a", "a\n" }, { "d1/x", "x\n" }, { "d1/sub/y", "y\n" },
		  { "k", "k\n" } },
		{ { "a", "a\n" }, { "d2/z", "z\n" }, { "d2/deep/er/w", "w\n" },
		  { "k", "k\n" } },
		{ { "a/b", "b\n" }, { "d1/sub/y", "y\n" }, { "k", "k2\n" },
		  { "e", NULL } },
		{ { "a", "a2\n" }, { "d1", "now a file\n" }, { "k", "k\n" },
		  { "e", NULL } },
	};
	char ids[4][KB_ID_LEN];
	const char *idp[4];
	git_repository *r;
	git_oid t, c, prev;
	struct kvcs *v;
	char *dir;

	r = new_repo(&dir);
	for (size_t i = 0; i < 4; i++) {
		t = tree_of(r, f[i], 4);
		c = commit_at(r, &t, i ? &prev : NULL, i ? 1 : 0,
			      BASE_TIME + 10 * (int64_t)i, "shape");
		hex(ids[i], &c);
		idp[i] = ids[i];
		prev = c;
	}
	set_ref(r, "refs/heads/main", &c);
	v = open_ok(dir);
	/* the files each commit touches, as git lists them */
	for (size_t i = 0; i < 4; i++) {
		struct sbuf out, mine;
		char **p;
		size_t np;

		sbuf_init(&out);
		sbuf_init(&mine);
		assert_int_equal(run(&out, "git -C %s diff-tree --root --no-commit-id --name-only -r %s",
				     dir, ids[i]), 0);
		assert_int_equal(kvcs_touched_files(v, ids[i], &p, &np), 0);
		for (size_t k = 0; k < np; k++)
			sbuf_addf(&mine, "%s\n", p[k]);
		assert_string_equal(sbuf_str(&mine), sbuf_str(&out));
		kvcs_free_paths(p, np);
		sbuf_free(&mine);
		sbuf_free(&out);
	}
	assert_int_equal(kvcs_checkout(v, ids[0], true), 0);
	assert_int_equal(kvcs_check_clean(v), 0);
	checkout_pairs(v, dir, idp, 4);

	/* an untracked file in a directory that comes whole stops it */
	assert_int_equal(kvcs_checkout_again(v, ids[0]), 0);
	{
		char *d2 = path_in(dir, "d2");

		assert_int_equal(mkdir(d2, 0755), 0);
		free(d2);
	}
	put(dir, "d2/z", "mine\n");
	assert_int_equal(kvcs_checkout_again(v, ids[1]), -1);
	assert_err_has(v, "would overwrite untracked files: d2/z");
	assert_file(dir, "d2/z", "mine\n");
	assert_git_clean_at(dir, ids[0]);
	kvcs_close(v);
	git_repository_free(r);
	free(dir);
}

/*
 * A checkout that goes by the index does not overwrite a user's untracked
 * file where the next commit has one ("git checkout" refuses too): not a
 * file, not a directory where a file comes, not a file where a directory
 * comes. Ignored files, and files already as in the commit, are no loss.
 */
static void test_untracked_in_way(void **state)
{
	struct file f[] = {
		{ "a", "a4\n" }, { "dir/c", "c-s2\n" }, { "e", "e3\n" },
		{ "k", "keep\n" }, { "new/x", "x\n" },
	};
	char h_d[GIT_OID_HEXSZ + 1], *p;
	struct small s;
	struct kvcs *v = small_at_main(&s);	/* c4: no b */
	git_oid t, d;

	t = tree_of(s.r, f, 5);
	d = commit_at(s.r, &t, &s.c4, 1, BASE_TIME + 50, "d");
	hex(h_d, &d);

	/* c4 -> c2 brings b back: a file of the user's there stops it */
	put(s.dir, "b", "mine\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), -1);
	assert_err_has(v, "would overwrite untracked files: b (move them away");
	assert_file(s.dir, "b", "mine\n");
	assert_head_detached_at(s.r, s.h_c4);
	assert_int_equal(kvcs_checkout_again(v, s.h_c2), -1);
	assert_file(s.dir, "b", "mine\n");
	/* already what c2 has: nothing is lost */
	put(s.dir, "b", "b1\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), 0);
	assert_head_detached_at(s.r, s.h_c2);
	assert_int_equal(kvcs_checkout_changed(v, s.h_c4), 0);
	assert_false(exists(s.dir, "b"));

	/* ignored: overwritten, as git does */
	put(s.dir, "b", "mine\n");
	p = xasprintf("%s/.git/info", s.dir);
	mkdir(p, 0755);
	free(p);
	put(s.dir, ".git/info/exclude", "b\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), 0);
	assert_file(s.dir, "b", "b1\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c4), 0);
	put(s.dir, ".git/info/exclude", "");

	/* a directory of the user's where a file comes */
	p = xasprintf("%s/b", s.dir);
	assert_int_equal(mkdir(p, 0755), 0);
	put(s.dir, "b/x", "mine\n");
	assert_int_equal(kvcs_checkout_changed(v, s.h_c2), -1);
	assert_err_has(v, "would overwrite untracked files: b (");
	assert_file(s.dir, "b/x", "mine\n");
	rm_rf(p);
	free(p);

	/* a file of the user's where a directory comes */
	put(s.dir, "new", "mine\n");
	assert_int_equal(kvcs_checkout_changed(v, h_d), -1);
	assert_err_has(v, "would overwrite untracked files: new (");
	assert_file(s.dir, "new", "mine\n");
	p = xasprintf("%s/new", s.dir);
	assert_int_equal(unlink(p), 0);
	free(p);
	assert_int_equal(kvcs_checkout_changed(v, h_d), 0);
	assert_file(s.dir, "new/x", "x\n");
	assert_head_detached_at(s.r, h_d);

	/* reverting c3 on c4 brings b back: not over the user's b */
	assert_int_equal(kvcs_checkout_changed(v, s.h_c4), 0);
	put(s.dir, "b", "mine\n");
	{
		bool conflicts;

		assert_int_equal(kvcs_checkout_revert(v, s.h_c4, s.h_c3,
						      &conflicts), -1);
		assert_false(conflicts);
		assert_err_has(v, "would overwrite untracked files: b (");
		assert_file(s.dir, "b", "mine\n");
		p = xasprintf("%s/b", s.dir);
		assert_int_equal(unlink(p), 0);
		free(p);
		assert_int_equal(kvcs_checkout_revert(v, s.h_c4, s.h_c3,
						      &conflicts), 0);
		assert_file(s.dir, "b", "b1\n");
		assert_false(exists(s.dir, "e"));
	}
	assert_int_equal(kvcs_checkout(v, h_d, true), 0);

	/* a tracked directory that becomes a file is no untracked one */
	{
		struct file g[] = {
			{ "a", "a4\n" }, { "dir", "now a file\n" },
			{ "e", "e3\n" }, { "k", "keep\n" },
		};
		char h_f[GIT_OID_HEXSZ + 1];
		git_oid fc;

		t = tree_of(s.r, g, 4);
		fc = commit_at(s.r, &t, &s.c4, 1, BASE_TIME + 60, "f");
		hex(h_f, &fc);
		assert_int_equal(kvcs_checkout_changed(v, h_f), 0);
		assert_file(s.dir, "dir", "now a file\n");
		assert_int_equal(kvcs_checkout_changed(v, s.h_c4), 0);
		assert_file(s.dir, "dir/c", "c-s2\n");
	}
	kvcs_close(v);
	free_small(&s);
}

/* ---- killed in a checkout, or in a work tree's add ---- */

#define KILLED_FILES 4000

/*
 * A repository whose main (checked out) has one file and whose "big"
 * commit has KILLED_FILES: a checkout of big writes an index of as many
 * entries, under index.lock long enough for a signal to land in it.
 */
static char *make_big(char big[KB_ID_LEN])
{
	struct file *f = xcalloc(KILLED_FILES, sizeof(*f));
	char **names = xcalloc(KILLED_FILES, sizeof(*names));
	struct file one = { "README", "one file\n" };
	git_repository *r;
	git_oid t, c1, c2;
	char *dir;

	r = new_repo(&dir);
	for (size_t i = 0; i < KILLED_FILES; i++) {
		names[i] = xasprintf("d%02zu/f%04zu.c", i % 40, i);
		f[i].path = names[i];
		f[i].content = names[i];
	}
	t = tree_of(r, &one, 1);
	c1 = commit_at(r, &t, NULL, 0, BASE_TIME, "one file");
	t = tree_of(r, f, KILLED_FILES);
	c2 = commit_at(r, &t, &c1, 1, BASE_TIME + 60, "many files");
	set_ref(r, "refs/heads/main", &c1);
	hex(big, &c2);
	git_repository_free(r);
	for (size_t i = 0; i < KILLED_FILES; i++)
		free(names[i]);
	free(names);
	free(f);
	return dir;
}

/* A child stopped in its checkout: killed after the test, even a failed one. */
static pid_t stopped_child;

static int kill_stopped_child(void **state)
{
	if (stopped_child > 0) {
		kill(stopped_child, SIGKILL);
		waitpid(stopped_child, NULL, 0);
	}
	stopped_child = 0;
	return 0;
}

/* How many ktest-checkout-* notes the git directory holds. */
static int checkout_notes(const char *dir)
{
	char *gitdir = xasprintf("%s/.git", dir);
	DIR *d = opendir(gitdir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "ktest-checkout-", 15);
	closedir(d);
	free(gitdir);
	return n;
}

/*
 * This process and the children it forks from now on on one CPU (the one
 * it runs on), until on_all_cpus(old): a child at nice 19 beside it there
 * runs only while this one waits, and is preempted as soon as this one
 * wakes (so the signal sent then lands before the child writes on).
 */
static void on_one_cpu(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	assert_int_equal(sched_getaffinity(0, sizeof(*old), old), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

static void on_all_cpus(const cpu_set_t *old)
{
	assert_int_equal(sched_setaffinity(0, sizeof(*old), old), 0);
}

/*
 * A child checks big out in dir; sig (SIGKILL or SIGSTOP) reaches it as
 * soon as index.lock appears. Returns its pid (reaped when killed), or 0
 * when its checkout ended before the signal (then again, at most 5
 * times). The index is written under the lock in a few milliseconds: the
 * child runs at nice 19 on this process's CPU (on_one_cpu), so it does
 * not go on writing while the event wakes this process and the signal
 * goes out (with both on their own CPUs, under ASan, every signal came
 * after the lock was gone).
 */
static pid_t signalled_in_checkout(const char *dir, const char *big, int sig)
{
	char *gitdir = xasprintf("%s/.git", dir), *lock = xasprintf("%s/index.lock", gitdir);

	for (int attempt = 0; attempt < 5; attempt++) {
		int in = inotify_init1(IN_CLOEXEC), st;
		struct pollfd pfd = { .events = POLLIN };
		char buf[4096] __attribute__((aligned(8)));
		bool seen = false;
		cpu_set_t cpus;
		pid_t pid;

		assert_true(in >= 0);
		assert_true(inotify_add_watch(in, gitdir, IN_CREATE) >= 0);
		on_one_cpu(&cpus);
		pid = fork();
		if (pid == 0) {
			char err[512];
			struct kvcs *v;

			if (setpriority(PRIO_PROCESS, 0, 19) < 0)
				_exit(2);
			v = kvcs_open(dir, err, sizeof(err));
			_exit(v && kvcs_checkout(v, big, true) == 0 ? 0 : 1);
		}
		assert_true(pid >= 0);
		pfd.fd = in;
		while (!seen && poll(&pfd, 1, 30000) == 1) {
			ssize_t n = read(in, buf, sizeof(buf));

			for (ssize_t o = 0; n > 0 && o < n;) {
				const struct inotify_event *ev = (const void *)(buf + o);

				if (ev->len && !strcmp(ev->name, "index.lock"))
					seen = true;
				o += (ssize_t)(sizeof(*ev) + ev->len);
			}
		}
		kill(pid, seen ? sig : SIGKILL);
		on_all_cpus(&cpus);
		close(in);
		assert_true(seen);
		assert_int_equal(waitpid(pid, &st, sig == SIGSTOP ? WUNTRACED : 0), pid);
		if (sig == SIGSTOP)
			stopped_child = pid;
		if (access(lock, F_OK) == 0) {
			free(lock);
			free(gitdir);
			return pid;
		}
		/* too late: the checkout ended; back to main for another try */
		kill_stopped_child(NULL);
		{
			struct kvcs *v = open_ok(dir);

			assert_int_equal(kvcs_checkout(v, "main", true), 0);
			kvcs_close(v);
		}
	}
	fail_msg("the checkout of %d files always ended before the signal", KILLED_FILES);
	return 0;
}

/*
 * ktest killed in a checkout (SIGKILL: no handler runs) leaves
 * index.lock; the next checkout there removes it, says so once, and
 * checks out. The lock of a checkout that still runs (stopped), of one
 * that was not ours (no note), or older than the note stays, and the
 * error names it.
 */
static void test_killed_checkout(void **state)
{
	char big[KB_ID_LEN], pid[64], *lock;
	struct kvcs *v;
	char *dir = make_big(big);
	pid_t child;

	lock = xasprintf("%s/.git/index.lock", dir);
	v = open_ok(dir);
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	assert_null(kvcs_note(v));
	assert_int_equal(checkout_notes(dir), 0);	/* gone after it */

	/* killed: its lock and its note stay; the next checkout mends */
	child = signalled_in_checkout(dir, big, SIGKILL);
	assert_int_equal(checkout_notes(dir), 1);
	assert_int_equal(kvcs_checkout(v, big, true), 0);
	assert_non_null(kvcs_note(v));
	assert_int_equal(access(lock, F_OK), -1);
	assert_int_equal(checkout_notes(dir), 0);
	assert_null(kvcs_note(v));			/* said once */
	assert_file(dir, "d07/f3927.c", "d07/f3927.c");
	assert_git_clean_at(dir, big);

	/* what it says: the lock, and the killed process */
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	child = signalled_in_checkout(dir, big, SIGKILL);
	snprintf(pid, sizeof(pid), "(pid %ld)", (long)child);
	assert_int_equal(kvcs_checkout_again(v, big), 0);
	{
		const char *note = kvcs_note(v);

		assert_non_null(note);
		if (!strstr(note, "index.lock") || !strstr(note, pid) ||
		    !strstr(note, "did not finish"))
			fail_msg("note \"%s\" lacks index.lock or %s", note, pid);
	}
	assert_git_clean_at(dir, big);

	/* stopped, not killed: its lock is its own; the error names it */
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	child = signalled_in_checkout(dir, big, SIGSTOP);
	assert_int_equal(kvcs_checkout(v, big, true), -1);
	snprintf(pid, sizeof(pid), "ktest (pid %ld) is checking out", (long)child);
	assert_err_has(v, "index.lock is there");
	assert_err_has(v, pid);
	assert_err_has(v, "wait for it to end");
	assert_int_equal(access(lock, F_OK), 0);
	assert_int_equal(stopped_child, child);
	kill_stopped_child(NULL);
	assert_int_equal(kvcs_checkout(v, big, true), 0);
	assert_non_null(kvcs_note(v));
	assert_git_clean_at(dir, big);

	/* a lock older than the killed checkout's note is not its */
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	signalled_in_checkout(dir, big, SIGKILL);
	age(dir, ".git/index.lock");
	assert_int_equal(kvcs_checkout(v, big, true), -1);
	assert_err_has(v, "index.lock is there");
	assert_int_equal(access(lock, F_OK), 0);
	assert_null(kvcs_note(v));

	/* a lock with no note (a git command killed): named, left */
	assert_int_equal(unlink(lock), 0);
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	assert_int_equal(checkout_notes(dir), 0);
	put(dir, ".git/index.lock", "");
	assert_int_equal(kvcs_checkout(v, big, true), -1);
	assert_err_has(v, lock);
	assert_err_has(v, "one was killed there; remove the file");
	assert_int_equal(access(lock, F_OK), 0);
	assert_int_equal(unlink(lock), 0);
	assert_int_equal(kvcs_checkout(v, big, true), 0);
	assert_null(kvcs_note(v));

	kvcs_close(v);
	free(lock);
	rm_rf(dir);
	free(dir);
}

/*
 * A child adds a work tree of big at path; sig (SIGKILL or SIGSTOP)
 * reaches it once the checkout has written some of it (path/d00 there).
 * Returns its pid (reaped when killed), or 0 when the add ended first
 * (then the caller tries again).
 */
static pid_t signalled_in_add(const char *dir, const char *path,
			      const char *big, int sig)
{
	char *probe = xasprintf("%s/d00", path);
	struct timespec tick = { 0, 20000 };
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		char err[512];
		struct kvcs *v = kvcs_open(dir, err, sizeof(err));

		_exit(v && kvcs_worktree_add(v, "wt", path, big) == 0 ? 0 : 1);
	}
	for (int i = 0; i < 1000000 && access(probe, F_OK); i++)
		nanosleep(&tick, NULL);
	free(probe);
	kill(pid, sig);
	assert_int_equal(waitpid(pid, &st, sig == SIGSTOP ? WUNTRACED : 0), pid);
	if (sig == SIGSTOP && WIFSTOPPED(st))
		stopped_child = pid;
	else if (WIFEXITED(st))
		return 0;
	assert_true(exists(path, ".git"));
	return pid;
}

/*
 * ktest killed while it added a work tree (a box's first one: 37 s on
 * the kernel) leaves a half-made one: files, no index, so a checkout
 * there would take them for untracked files in its way.
 * kvcs_worktree_reclaim() removes it (returns 2), and it is added again,
 * whole; a whole one, and one being added by a process that runs, stay.
 */
static void test_killed_worktree_add(void **state)
{
	char big[KB_ID_LEN];
	char *dir = make_big(big), *path = xasprintf("%s-wt", dir);
	struct kvcs *v = open_ok(dir), *w;
	pid_t child = 0;

	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	for (int i = 0; i < 10 && !child; i++) {
		child = signalled_in_add(dir, path, big, SIGKILL);
		if (!child)
			assert_int_equal(kvcs_worktree_remove(v, "wt"), 0);
	}
	assert_true(child > 0);
	assert_true(exists(path, "d00"));
	assert_int_equal(kvcs_worktree_reclaim(v, path), KVCS_RECLAIMED_HALF);
	assert_false(exists(path, ""));
	assert_int_equal(kvcs_worktree_add(v, "wt", path, big), 0);
	assert_git_clean_at(path, big);
	/* whole now: it stays, and no note is left */
	assert_int_equal(kvcs_worktree_reclaim(v, path), 0);
	assert_true(exists(path, "d07/f3927.c"));
	w = open_ok(path);
	assert_int_equal(kvcs_checkout_again(w, "main"), 0);
	assert_false(exists(path, "d00"));
	assert_int_equal(kvcs_checkout_again(w, big), 0);
	assert_git_clean_at(path, big);
	kvcs_close(w);
	{
		char *gitdir = xasprintf("%s/.git", dir);
		DIR *d = opendir(gitdir);
		struct dirent *e;

		assert_non_null(d);
		while ((e = readdir(d)))
			assert_true(strncmp(e->d_name, "ktest-adding-", 13));
		closedir(d);
		free(gitdir);
	}
	assert_int_equal(kvcs_worktree_remove(v, "wt"), 0);

	/* stopped in its add (it runs): its tree is left alone */
	child = 0;
	for (int i = 0; i < 10 && !child; i++) {
		child = signalled_in_add(dir, path, big, SIGSTOP);
		if (!child)
			assert_int_equal(kvcs_worktree_remove(v, "wt"), 0);
	}
	assert_int_equal(stopped_child, child);
	assert_int_equal(kvcs_worktree_reclaim(v, path), 0);
	assert_true(exists(path, "d00"));
	kill_stopped_child(NULL);
	assert_int_equal(kvcs_worktree_reclaim(v, path), KVCS_RECLAIMED_HALF);

	kvcs_close(v);
	rm_rf(path);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* ---- worktrees ---- */

static bool has_branch(git_repository *r, const char *name)
{
	git_reference *ref;

	if (git_branch_lookup(&ref, r, name, GIT_BRANCH_LOCAL))
		return false;
	git_reference_free(ref);
	return true;
}

static void test_worktrees(void **state)
{
	struct small s;
	struct kvcs *v;
	struct sbuf out;
	char *w1, *w2, *w3;
	git_repository *wr;
	git_worktree *wt;

	make_small(&s);
	v = open_ok(s.dir);
	assert_int_equal(kvcs_checkout(v, "main", true), 0);
	w1 = xasprintf("%s.w1", s.dir);
	w2 = xasprintf("%s.w2", s.dir);
	w3 = xasprintf("%s.w3", s.dir);

	assert_int_equal(kvcs_worktree_add(v, "w1", w1, s.h_c2), 0);
	assert_true(exists(w1, "b"));
	assert_false(exists(w1, "e"));
	assert_file(w1, "a", "a2\n");
	assert_int_equal(git_repository_open(&wr, w1), 0);
	assert_head_detached_at(wr, s.h_c2);
	git_repository_free(wr);
	/* no branch left behind, the main tree untouched */
	assert_false(has_branch(s.r, "w1"));
	assert_false(has_branch(s.r, "ktest-worktree-w1"));
	assert_head_detached_at(s.r, s.h_c4);
	sbuf_init(&out);
	assert_int_equal(run(&out, "git -C %s status --porcelain", w1), 0);
	assert_string_equal(sbuf_str(&out), "");
	assert_int_equal(run(&out, "git -C %s symbolic-ref -q HEAD", w1), 1);
	assert_int_equal(run(&out, "git -C %s worktree list --porcelain", s.dir), 0);
	assert_non_null(strstr(out.buf, "detached"));

	/* a vcs on the worktree works like on the main tree */
	{
		struct kvcs *vw = open_ok(w1);

		assert_int_equal(kvcs_checkout(vw, s.h_c3, false), 0);
		assert_false(exists(w1, "b"));
		kvcs_close(vw);
	}

	assert_int_equal(kvcs_worktree_add(v, "w1", w2, s.h_c2), -1);
	assert_err_has(v, "worktree 'w1' already exists");
	assert_int_equal(kvcs_worktree_add(v, "w2", w1, s.h_c2), -1);
	assert_err_has(v, "not empty");
	assert_int_equal(kvcs_worktree_add(v, "w/x", w2, s.h_c2), -1);
	assert_int_equal(kvcs_worktree_add(v, "w2", w2, "nope"), -1);
	assert_err_has(v, "'nope'");
	assert_false(exists(w2, ""));
	/* failing halfway (no parent directory) leaves nothing behind */
	assert_int_equal(kvcs_worktree_add(v, "w2", "/nonexistent/ktest/w2",
					   s.h_c2), -1);
	assert_err_has(v, "can't add worktree 'w2' at /nonexistent/ktest/w2");
	assert_int_not_equal(git_worktree_lookup(&wt, s.r, "w2"), 0);
	assert_false(has_branch(s.r, "ktest-worktree-w2"));

	/* an empty directory is fine, as for git */
	assert_int_equal(mkdir(w2, 0755), 0);
	assert_int_equal(kvcs_worktree_add(v, "w2", w2, s.h_m), 0);
	assert_true(exists(w2, "e"));
	put(w2, "built.o", "object\n");		/* build output goes too */

	assert_int_equal(kvcs_worktree_remove(v, "w1"), 0);
	assert_false(exists(w1, ""));
	assert_int_not_equal(git_worktree_lookup(&wt, s.r, "w1"), 0);
	assert_int_equal(kvcs_worktree_remove(v, "w1"), -1);
	assert_err_has(v, "no worktree 'w1'");
	assert_int_equal(kvcs_worktree_remove(v, "w2"), 0);
	assert_false(exists(w2, ""));

	/* a worktree whose directory vanished is pruned on the next add */
	assert_int_equal(kvcs_worktree_add(v, "w3", w3, s.h_c1), 0);
	rm_rf(w3);
	assert_int_equal(kvcs_worktree_add(v, "w3", w1, s.h_c1), 0);
	assert_true(exists(w1, "a"));
	assert_int_equal(kvcs_worktree_remove(v, "w3"), 0);
	assert_false(exists(w1, ""));
	/* and one removed by hand can still be removed */
	assert_int_equal(kvcs_worktree_add(v, "w3", w3, s.h_c1), 0);
	rm_rf(w3);
	assert_int_equal(kvcs_worktree_remove(v, "w3"), 0);

	assert_int_equal(run(&out, "git -C %s worktree list --porcelain | grep -c '^worktree'",
			     s.dir), 0);
	assert_string_equal(sbuf_str(&out), "1\n");
	assert_int_equal(run(&out, "git -C %s branch --list", s.dir), 0);
	assert_null(strstr(sbuf_str(&out), "ktest-worktree"));
	assert_int_equal(run(&out, "git -C %s fsck --no-progress 2>&1", s.dir), 0);
	sbuf_free(&out);
	kvcs_close(v);
	free(w1);
	free(w2);
	free(w3);
	free_small(&s);
}

/*
 * A kept work tree of another repository (BUILD_DIR changed) or of one that
 * is gone is removed, so that it can be added again; v's own is kept.
 */
static void test_worktree_reclaim(void **state)
{
	struct small a, b;
	struct kvcs *va, *vb;
	char *w, *none;

	(void)state;
	make_small(&a);
	make_small(&b);
	va = open_ok(a.dir);
	vb = open_ok(b.dir);
	w = xasprintf("%s.wt", a.dir);
	none = xasprintf("%s.none", a.dir);
	assert_int_equal(kvcs_worktree_add(va, "w", w, a.h_c2), 0);
	put(w, "untracked", "x\n");

	assert_int_equal(kvcs_worktree_reclaim(va, w), 0);	/* its own */
	assert_true(exists(w, "untracked"));
	assert_int_equal(kvcs_worktree_reclaim(va, none), 0);	/* nothing */
	assert_int_equal(kvcs_worktree_reclaim(vb, w), 1);	/* another's */
	assert_false(exists(w, ""));
	/* b adds its own there, kept; then b's repository goes */
	assert_int_equal(kvcs_worktree_add(vb, "w", w, b.h_c3), 0);
	assert_int_equal(kvcs_worktree_reclaim(vb, w), 0);
	assert_true(exists(w, "e"));
	kvcs_close(vb);
	rm_rf(b.dir);
	assert_int_equal(kvcs_worktree_reclaim(va, w), 1);
	assert_false(exists(w, ""));
	/* and a adds its own again */
	assert_int_equal(kvcs_worktree_add(va, "w2", w, a.h_c2), 0);
	assert_true(exists(w, "b"));
	kvcs_close(va);
	free(w);
	free(none);
	free_small(&a);
	free_small(&b);
}

/*
 * Worktree names: one per path, stable from one ktest to the next (a box's
 * or the speculative builds' work tree is found again by its name), and
 * valid for kvcs_worktree_add().
 */
static void test_worktree_name(void **state)
{
	char *a = kvcs_worktree_name("ktest-spec", "/s/one/spec-src");
	char *a2 = kvcs_worktree_name("ktest-spec", "/s/one/spec-src");
	char *b = kvcs_worktree_name("ktest-spec", "/s/two/spec-src");
	char *v = kvcs_worktree_name("x", "a");

	(void)state;
	assert_string_equal(a, a2);
	assert_string_not_equal(a, b);
	assert_int_equal(strlen(a), strlen("ktest-spec-") + 8);
	assert_int_equal(strncmp(a, "ktest-spec-", 11), 0);
	assert_int_equal(strspn(a + 11, "0123456789abcdef"), 8);
	/* FNV-1a's 32-bit test vector: "a" is e40c292c */
	assert_string_equal(v, "x-e40c292c");
	free(a);
	free(a2);
	free(b);
	free(v);
}

/* ---- the bisect graph against git ---- */

struct gitline {
	char id[KB_ID_LEN];
	char **parents;
	size_t nparents;
};

struct gitlist {
	struct gitline *v;
	size_t n;
};

static void gitlist_free(struct gitlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		kvcs_free_paths(l->v[i].parents, l->v[i].nparents);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* "id parent..." lines */
static void parse_revlist(const char *text, struct gitlist *l)
{
	const char *s = text;

	memset(l, 0, sizeof(*l));
	while (*s) {
		const char *e = strchr(s, '\n');
		struct gitline *g;

		if (!e)
			e = s + strlen(s);
		l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		g = &l->v[l->n++];
		memset(g, 0, sizeof(*g));
		assert_true(e - s >= 40);
		memcpy(g->id, s, 40);
		for (const char *p = s + 40; p + 41 <= e; p += 41) {
			g->parents = xrealloc(g->parents, (g->nparents + 1) *
					      sizeof(char *));
			g->parents[g->nparents++] = xstrndup(p + 1, 40);
		}
		s = *e ? e + 1 : e;
	}
}

struct oracle_stats {
	size_t runs, nodes, treesame, dropped_parents, errors, bases;
};

static struct oracle_stats stats;

static char *join(const char *const *v, size_t n, const char *sep)
{
	struct sbuf b;

	sbuf_init(&b);
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&b, "%s%s", i ? sep : "", v[i]);
	return sbuf_detach(&b);
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * git's answer for the merge bases bisect would test first, or none. As
 * check_ancestors() does: goods not all ancestors of bad when "rev-list
 * GOODS --not BAD" lists anything.
 */
static void expected_bases(const char *dir, const char *bad,
			   const char *const *goods, size_t ng,
			   struct gitlist *want)
{
	struct sbuf out;
	struct args a;

	sbuf_init(&out);
	memset(want, 0, sizeof(*want));
	args_git(&a, dir, false);
	arg(&a, "rev-list");
	arg(&a, "-n1");
	for (size_t i = 0; i < ng; i++)
		arg(&a, goods[i]);
	arg(&a, "--not");
	arg(&a, bad);
	assert_int_equal(gitv(&out, a.v), 0);
	if (out.len) {
		struct gitlist all_mb;

		args_git(&a, dir, false);
		arg(&a, "merge-base");
		arg(&a, "--all");
		arg(&a, bad);
		for (size_t i = 0; i < ng; i++)
			arg(&a, goods[i]);
		/* 1: unrelated histories, no merge base */
		assert_in_range(gitv(&out, a.v), 0, 1);
		parse_revlist(sbuf_str(&out), &all_mb);
		for (size_t i = 0; i < all_mb.n; i++) {
			size_t k;

			for (k = 0; k < ng; k++)
				if (!strcmp(all_mb.v[i].id, goods[k]))
					break;
			if (k < ng)
				continue;
			want->v = xrealloc(want->v, (want->n + 1) *
					   sizeof(*want->v));
			want->v[want->n++] = all_mb.v[i];
			all_mb.v[i].parents = NULL;
			all_mb.v[i].nparents = 0;
		}
		gitlist_free(&all_mb);
	}
	sbuf_free(&out);
}

static int64_t commit_time(git_repository *r, const char *id)
{
	git_commit *c;
	git_oid o;
	int64_t t;

	assert_int_equal(git_oid_fromstr(&o, id), 0);
	assert_int_equal(git_commit_lookup(&c, r, &o), 0);
	t = git_commit_time(c);
	git_commit_free(c);
	return t;
}

/*
 * One kvcs_bisect_graph() call held against git. goods as given to us
 * (any order, duplicates); git gets them sorted, as bisect passes them.
 */
static void check_against_git(struct kvcs *v, git_repository *r,
			      const char *dir, const char *bad,
			      const char *const *goods, size_t ng,
			      const char *const *paths, size_t np, bool fp,
			      bool git_graph, struct gitlist *wantb)
{
	char **sorted = xcalloc(ng + 1, sizeof(char *)), *g, *p, **bases;
	struct gitlist full, dense, mine = { 0 };
	struct kb_graph kg;
	struct strmap set;
	struct sbuf out;
	struct args a;
	size_t nb, ns = 0, k, rest;
	int rc;

	for (size_t i = 0; i < ng; i++)
		sorted[ns++] = (char *)goods[i];
	qsort(sorted, ns, sizeof(*sorted), strp_cmp);
	g = join((const char *const *)sorted, ns, " ");
	p = join(paths, np, " ");
	sbuf_init(&out);
	args_git(&a, dir, git_graph);
	arg(&a, "rev-list");
	arg(&a, "--parents");
	if (np)
		arg(&a, "--sparse");
	rest = a.n;
	if (fp)
		arg(&a, "--first-parent");
	arg(&a, bad);
	arg(&a, "--not");
	for (size_t i = 0; i < ns; i++)
		arg(&a, sorted[i]);
	if (np)
		arg(&a, "--");
	for (size_t i = 0; i < np; i++)
		arg(&a, paths[i]);
	rc = gitv(&out, a.v);
	assert_int_equal(rc, 0);
	parse_revlist(sbuf_str(&out), &full);
	stats.runs++;

	rc = kvcs_bisect_graph(v, bad, goods, ng, paths, np, fp, &kg, &bases,
			       &nb);
	if (!full.n || strcmp(full.v[0].id, bad)) {
		/* bad is reachable from a good: nothing to bisect */
		if (rc == 0)
			print_error("expected an error for %s --not %s\n", bad, g);
		assert_int_equal(rc, -1);
		assert_err_has(v, "is an ancestor of the good commit");
		assert_null(kg.nodes);
		assert_null(bases);
		stats.errors++;
		goto out;
	}
	if (rc)
		print_error("kvcs_bisect_graph: %s\n", kvcs_error(v));
	assert_int_equal(rc, 0);
	if (kg.n != full.n) {
		print_error("%s: %zu candidates, git has %zu (%s --not %s -- %s%s)\n",
			    dir, kg.n, full.n, bad, g, p, fp ? " first-parent" : "");
		for (size_t i = 0; i < full.n || i < kg.n; i++)
			print_error("  %-40s %s\n", i < kg.n ? kg.nodes[i].id : "",
				    i < full.n ? full.v[i].id : "");
	}
	assert_int_equal(kg.n, full.n);
	strmap_init(&set);
	for (size_t i = 0; i < full.n; i++)
		strmap_put(&set, full.v[i].id, NULL);
	for (size_t i = 0; i < full.n; i++) {
		const struct kb_node *n = &kg.nodes[i];
		size_t want = 0;

		if (strcmp(n->id, full.v[i].id))
			print_error("%s: candidate %zu is %s, git has %s (%s --not %s -- %s%s)\n",
				    dir, i, n->id, full.v[i].id, bad, g, p,
				    fp ? " first-parent" : "");
		assert_string_equal(n->id, full.v[i].id);
		for (k = 0; k < full.v[i].nparents; k++) {
			const char *pk = full.v[i].parents[k];

			if (strmap_has(&set, pk)) {
				assert_true(want < n->nparents);
				assert_string_equal(
					kg.nodes[n->parents[want]].id, pk);
				want++;
			}
			if (fp)
				break;
		}
		if (want != n->nparents)
			print_error("%s: %s has %u parents, git %zu\n", dir,
				    n->id, n->nparents, want);
		assert_int_equal(n->nparents, want);
		stats.dropped_parents += full.v[i].nparents - want;
	}
	strmap_free(&set, NULL);
	stats.nodes += kg.n;

	/* treesame: exactly the commits git's dense walk hides */
	if (np) {
		size_t j = 0;

		/* the same command, dense: drop "--parents --sparse" */
		memmove(a.v + rest - 2, a.v + rest,
			(a.n - rest + 1) * sizeof(*a.v));
		a.n -= 2;
		rc = gitv(&out, a.v);
		assert_int_equal(rc, 0);
		parse_revlist(sbuf_str(&out), &dense);
		for (size_t i = 0; i < kg.n; i++) {
			bool shown = j < dense.n &&
				     !strcmp(dense.v[j].id, kg.nodes[i].id);

			if (shown == kg.nodes[i].treesame)
				print_error("%s: %s treesame=%d, git %s it (%s --not %s -- %s%s)\n",
					    dir, kg.nodes[i].id,
					    kg.nodes[i].treesame,
					    shown ? "shows" : "hides", bad, g, p,
					    fp ? " first-parent" : "");
			assert_int_not_equal(shown, kg.nodes[i].treesame);
			j += shown;
			stats.treesame += kg.nodes[i].treesame;
		}
		assert_int_equal(j, dense.n);
		gitlist_free(&dense);
	} else {
		for (size_t i = 0; i < kg.n; i++)
			assert_false(kg.nodes[i].treesame);
	}

	/* merge bases: git's set, newest first */
	if (!wantb) {
		expected_bases(dir, bad, (const char *const *)sorted, ns,
			       &mine);
		wantb = &mine;
	}
	assert_int_equal(nb, wantb->n);
	for (size_t i = 0; i < wantb->n; i++) {
		for (k = 0; k < nb; k++)
			if (!strcmp(bases[k], wantb->v[i].id))
				break;
		assert_true(k < nb);
	}
	for (k = 1; k < nb; k++)
		assert_true(commit_time(r, bases[k - 1]) >=
			    commit_time(r, bases[k]));
	stats.bases += nb;
	gitlist_free(&mine);
	kvcs_free_paths(bases, nb);
	kvcs_graph_free(&kg);
out:
	gitlist_free(&full);
	sbuf_free(&out);
	free(sorted);
	free(g);
	free(p);
}

/* ---- hand-made histories ---- */

/*
 * Path-limited, linear: only c2 and c4 touch dir/. Merges: m1 treesame to
 * its first parent (brings only "a" from the side), m2 treesame to its
 * second (side) parent, whose first-parent line dies out of the walk.
 */
static void test_bisect_fixed(void **state)
{
	struct file f[] = {
		{ "a", "0\n" }, { "dir/x", "0\n" }, { "dir/y", "0\n" },
	};
	git_oid t, c[6], s1, s2, m1, m2, q1, q2, x1, x2, p[2];
	char *dir, h[6][KB_ID_LEN], hm1[KB_ID_LEN], hm2[KB_ID_LEN];
	char hs1[KB_ID_LEN], hq1[KB_ID_LEN], hx[2][KB_ID_LEN];
	git_repository *r;
	struct kb_graph g;
	struct kvcs *v;
	char **bases;
	size_t nb;
	int64_t T = BASE_TIME;

	static const char *const txt[] = { "0\n", "1\n", "2\n", "3\n", "4\n",
					   "5\n" };

	r = new_repo(&dir);
	t = tree_of(r, f, 3);
	c[0] = commit_at(r, &t, NULL, 0, T, "c0");
	for (int i = 1; i < 6; i++) {
		/* c2 and c4 change dir/, the others a */
		if (i == 2 || i == 4)
			f[1 + i / 4].content = txt[i];
		else
			f[0].content = txt[i];
		t = tree_of(r, f, 3);
		c[i] = commit_at(r, &t, &c[i - 1], 1, T + i * 10, "c");
	}
	for (int i = 0; i < 6; i++)
		hex(h[i], &c[i]);
	v = open_ok(dir);
	{
		const char *goods[] = { h[0] };
		const char *paths[] = { "dir" };

		assert_int_equal(kvcs_bisect_graph(v, h[5], goods, 1, paths, 1,
						   false, &g, &bases, &nb), 0);
		assert_int_equal(g.n, 5);
		assert_int_equal(nb, 0);
		for (int i = 0; i < 5; i++) {
			assert_string_equal(g.nodes[i].id, h[5 - i]);
			assert_int_equal(g.nodes[i].treesame,
					 !(5 - i == 2 || 5 - i == 4));
			assert_int_equal(g.nodes[i].nparents, i < 4);
			if (i < 4)
				assert_int_equal(g.nodes[i].parents[0], i + 1);
		}
		kvcs_graph_free(&g);
		check_against_git(v, r, dir, h[5], goods, 1, paths, 1, false,
				  false, NULL);
	}

	/* side branch from c1, merged twice */
	f[0].content = "side\n";
	t = tree_of(r, (struct file[]){ { "a", "side\n" }, { "dir/x", "0\n" },
					{ "dir/y", "0\n" } }, 3);
	s1 = commit_at(r, &t, &c[1], 1, T + 11, "s1");
	hex(hs1, &s1);
	p[0] = c[5];
	p[1] = s1;
	/* m1: takes a from the side, dir/ from mainline: treesame to c5 */
	t = tree_of(r, (struct file[]){ { "a", "side\n" }, { "dir/x", "2\n" },
					{ "dir/y", "4\n" } }, 3);
	m1 = commit_at(r, &t, p, 2, T + 60, "m1");
	hex(hm1, &m1);
	/* s2 on the side changes dir/x; m2 takes the side's dir/ */
	t = tree_of(r, (struct file[]){ { "a", "side\n" }, { "dir/x", "s2\n" },
					{ "dir/y", "4\n" } }, 3);
	p[0] = s1;
	p[1] = c[4];
	s2 = commit_at(r, &t, p, 2, T + 61, "s2 merges c4");
	t = tree_of(r, (struct file[]){ { "a", "q1\n" }, { "dir/x", "2\n" },
					{ "dir/y", "4\n" } }, 3);
	q1 = commit_at(r, &t, &m1, 1, T + 62, "q1");
	hex(hq1, &q1);
	p[0] = q1;
	p[1] = s2;
	t = tree_of(r, (struct file[]){ { "a", "side\n" }, { "dir/x", "s2\n" },
					{ "dir/y", "4\n" } }, 3);
	m2 = commit_at(r, &t, p, 2, T + 70, "m2");
	hex(hm2, &m2);
	t = tree_of(r, (struct file[]){ { "a", "q2\n" }, { "dir/x", "s2\n" },
					{ "dir/y", "4\n" } }, 3);
	q2 = commit_at(r, &t, &m2, 1, T + 80, "q2");
	{
		char hq2[KB_ID_LEN];
		const char *goods[] = { h[0] };
		const char *paths[] = { "dir" };
		const char *none[] = { "nothing-here" };
		bool seen_q1 = false;

		hex(hq2, &q2);
		assert_int_equal(kvcs_bisect_graph(v, hq2, goods, 1, paths, 1,
						   false, &g, NULL, NULL), 0);
		/* m2 simplified to its side parent: q1, m1 drop out */
		for (size_t i = 0; i < g.n; i++) {
			if (!strcmp(g.nodes[i].id, hm2)) {
				assert_true(g.nodes[i].treesame);
				assert_int_equal(g.nodes[i].nparents, 1);
			}
			if (!strcmp(g.nodes[i].id, hq1) ||
			    !strcmp(g.nodes[i].id, hm1))
				seen_q1 = true;
		}
		assert_false(seen_q1);
		kvcs_graph_free(&g);
		check_against_git(v, r, dir, hq2, goods, 1, paths, 1, false,
				  false, NULL);
		check_against_git(v, r, dir, hq2, goods, 1, paths, 1, true,
				  false, NULL);
		check_against_git(v, r, dir, hq2, goods, 1, NULL, 0, false,
				  false, NULL);
		check_against_git(v, r, dir, hq2, goods, 1, NULL, 0, true,
				  false, NULL);
		/* the good itself is relevant: a merge treesame to it */
		{
			const char *g2[] = { hs1, h[2] };

			check_against_git(v, r, dir, hq2, g2, 2, paths, 1,
					  false, false, NULL);
		}
		/* a path nothing touches: all treesame */
		assert_int_equal(kvcs_bisect_graph(v, hq2, goods, 1, none, 1,
						   false, &g, NULL, NULL), 0);
		for (size_t i = 0; i < g.n; i++)
			assert_true(g.nodes[i].treesame);
		kvcs_graph_free(&g);
		check_against_git(v, r, dir, hq2, goods, 1, none, 1, false,
				  false, NULL);
	}

	/* criss-cross: x1 and x2 merge c3/s1 both ways */
	p[0] = c[3];
	p[1] = s1;
	t = tree_of(r, (struct file[]){ { "a", "x\n" }, { "dir/x", "2\n" },
					{ "dir/y", "0\n" } }, 3);
	x1 = commit_at(r, &t, p, 2, T + 90, "x1");
	p[0] = s1;
	p[1] = c[3];
	x2 = commit_at(r, &t, p, 2, T + 91, "x2");
	hex(hx[0], &x1);
	hex(hx[1], &x2);
	{
		/* bad x1, good x2: not an ancestor, bases c3 and s1 */
		const char *goods[] = { hx[1] };
		const char *g2[] = { hx[1], h[0], hx[1] };

		assert_int_equal(kvcs_bisect_graph(v, hx[0], goods, 1, NULL, 0,
						   false, &g, &bases, &nb), 0);
		assert_int_equal(g.n, 1);
		assert_string_equal(g.nodes[0].id, hx[0]);
		assert_int_equal(g.nodes[0].nparents, 0);
		assert_int_equal(nb, 2);
		assert_string_equal(bases[0], h[3]);	/* newer first */
		assert_string_equal(bases[1], hs1);
		kvcs_free_paths(bases, nb);
		kvcs_graph_free(&g);
		check_against_git(v, r, dir, hx[0], goods, 1, NULL, 0, false,
				  false, NULL);
		check_against_git(v, r, dir, hx[0], g2, 3, NULL, 0, false,
				  false, NULL);
	}
	{
		/* bad below good */
		const char *goods[] = { h[5] };

		assert_int_equal(kvcs_bisect_graph(v, h[3], goods, 1, NULL, 0,
						   false, &g, &bases, &nb), -1);
		assert_err_has(v, "the bad commit");
		assert_err_has(v, h[5]);
		assert_null(g.nodes);
		assert_int_equal(g.n, 0);
		assert_int_equal(kvcs_bisect_graph(v, h[3],
						   (const char *[]){ h[3] }, 1,
						   NULL, 0, false, &g, NULL,
						   NULL), -1);
		assert_int_equal(kvcs_bisect_graph(v, "nope", goods, 1, NULL, 0,
						   false, &g, NULL, NULL), -1);
		assert_err_has(v, "unknown revision 'nope'");
		assert_int_equal(kvcs_bisect_graph(v, h[5], (const char *[]){ "x~" },
						   1, NULL, 0, false, &g, NULL,
						   NULL), -1);
		assert_err_has(v, "'x~'");
	}
	{
		/* no goods: everything reachable */
		assert_int_equal(kvcs_bisect_graph(v, h[5], NULL, 0, NULL, 0,
						   false, &g, &bases, &nb), 0);
		assert_int_equal(g.n, 6);
		assert_int_equal(nb, 0);
		assert_string_equal(g.nodes[5].id, h[0]);
		kvcs_graph_free(&g);
		kvcs_free_paths(bases, nb);
	}
	kvcs_close(v);
	git_repository_free(r);
	free(dir);
}

/* ---- random histories ---- */

static const char *const rfiles[] = {
	"a", "b", "dir/c", "dir/d", "dir/sub/e", "f",
};
#define NRF (sizeof(rfiles) / sizeof(rfiles[0]))

/* plain paths, a directory with its slash, globs (the git_diff path) */
static const char *const rpaths[] = {
	"a", "b", "dir", "dir/sub", "dir/c", "f", "dir/sub/e", "dir/sub/",
	"dir/*", "*e", "d?r/c", "nothing", "a/x",
};
#define NRP (sizeof(rpaths) / sizeof(rpaths[0]))

static uint64_t rng = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct rhist {
	git_repository *r;
	char *dir;
	size_t n;
	git_oid *id;
	char (*h)[KB_ID_LEN];
	char (*content)[NRF][16];	/* "" for absent */
	bool *has_child;
};

static void rhist_free(struct rhist *x)
{
	git_repository_free(x->r);
	if (!getenv("KTEST_VCS_KEEP"))
		rm_rf(x->dir);
	free(x->dir);
	free(x->id);
	free(x->h);
	free(x->content);
	free(x->has_child);
}

static git_oid rtree(struct rhist *x, size_t i)
{
	struct file f[NRF];

	for (size_t k = 0; k < NRF; k++) {
		f[k].path = rfiles[k];
		f[k].content = x->content[i][k][0] ? x->content[i][k] : NULL;
	}
	return tree_of(x->r, f, NRF);
}

/*
 * n commits: branches off recent commits, merges of two or three, a few
 * roots; trees that take a merge's sides whole (treesame merges) or file
 * by file; commits that change nothing; dates rising, equal, skewed, or
 * now and then far in the past (so that git stops its walk early).
 */
/*
 * Objects written to memory and stored as one pack at the end: loose
 * objects cost a directory and a file each, and this disk is slow at both.
 */
static git_odb_backend *mem_start(git_repository *r)
{
	git_odb_backend *mp;
	git_odb *odb;

	assert_int_equal(git_repository_odb(&odb, r), 0);
	assert_int_equal(git_mempack_new(&mp), 0);
	assert_int_equal(git_odb_add_backend(odb, mp, 1000), 0);
	git_odb_free(odb);
	return mp;
}

static void mem_to_pack(git_repository *r, const char *dir,
			git_odb_backend *mp)
{
	git_indexer_progress st;
	git_buf pack = { 0 };
	git_indexer *ix;
	git_odb *odb;
	char *packdir = xasprintf("%s/.git/objects/pack", dir);

	assert_int_equal(git_repository_odb(&odb, r), 0);
	assert_int_equal(git_mempack_dump(&pack, r, mp), 0);
	assert_int_equal(git_indexer_new(&ix, packdir, 0, odb, NULL), 0);
	assert_int_equal(git_indexer_append(ix, pack.ptr, pack.size, &st), 0);
	assert_int_equal(git_indexer_commit(ix, &st), 0);
	git_indexer_free(ix);
	git_buf_dispose(&pack);
	assert_int_equal(git_mempack_reset(mp), 0);
	assert_int_equal(git_odb_refresh(odb), 0);
	git_odb_free(odb);
	free(packdir);
}

static void make_random(struct rhist *x, size_t n, unsigned datemode,
			bool loose)
{
	git_odb_backend *mp = NULL;
	int64_t when = BASE_TIME;

	memset(x, 0, sizeof(*x));
	x->r = new_repo(&x->dir);
	if (!loose)
		mp = mem_start(x->r);
	x->n = n;
	x->id = xcalloc(n, sizeof(*x->id));
	x->h = xcalloc(n, sizeof(*x->h));
	x->content = xcalloc(n, sizeof(*x->content));
	x->has_child = xcalloc(n, sizeof(*x->has_child));
	for (size_t i = 0; i < n; i++) {
		git_oid par[3], t;
		size_t np = 0, pi[3];
		unsigned kind = rnd(100);

		if (i && !(i > 3 && kind < 3)) {
			/* parents among the last dozen or so */
			size_t span = i < 12 ? i : 12;

			pi[np++] = i - 1 - rnd((unsigned)span);
			if (kind >= 75 && i > 2) {
				size_t q = rnd((unsigned)i);

				if (q != pi[0])
					pi[np++] = q;
				if (kind >= 96 && i > 3) {
					q = rnd((unsigned)i);
					if (q != pi[0] && (np < 2 || q != pi[1]))
						pi[np++] = q;
				}
			}
		}
		for (size_t k = 0; k < np; k++) {
			par[k] = x->id[pi[k]];
			x->has_child[pi[k]] = true;
		}
		/* the tree: a parent's, whole or file by file */
		if (np) {
			unsigned how = rnd(4);
			size_t whole = rnd((unsigned)np);

			for (size_t k = 0; k < NRF; k++) {
				size_t from = how < 2 ? whole :
					      rnd((unsigned)np);

				memcpy(x->content[i][k],
				       x->content[pi[from]][k], 16);
			}
		}
		if (!np || rnd(100) < 65) {
			unsigned nch = 1 + rnd(2);

			for (unsigned c = 0; c < nch; c++) {
				size_t k = rnd(NRF);

				if (rnd(10) == 0)
					x->content[i][k][0] = '\0';
				else
					snprintf(x->content[i][k], 16, "%u-%u\n",
						 (unsigned)i % 100000,
						 (unsigned)k % 10);
			}
		}
		switch (datemode) {
		case 0:
			when += 60;
			break;
		case 1:
			when += rnd(3) ? 0 : 60;	/* many equal dates */
			break;
		case 2:
			when += (int64_t)rnd(400) - 150;	/* clock skew */
			break;
		case 3:
			break;			/* all equal */
		default:
			when += 60;
			break;
		}
		t = rtree(x, i);
		{
			/* distinct messages: no two commits the same object */
			char msg[32];

			/* a broken clock now and then: git stops early */
			int64_t at = datemode == 4 && !rnd(8) ?
				when - 100000 + rnd(1000) : when;

			snprintf(msg, sizeof(msg), "r%zu", i);
			x->id[i] = commit_at(x->r, &t, par, np, at, msg);
		}
		hex(x->h[i], &x->id[i]);
	}
	if (mp)
		mem_to_pack(x->r, x->dir, mp);
	/* every tip on a ref: "git commit-graph write --reachable" */
	for (size_t i = 0; i < n; i++) {
		if (!x->has_child[i]) {
			char *ref = xasprintf("refs/heads/t%zu", i);

			set_ref(x->r, ref, &x->id[i]);
			free(ref);
		}
	}
}

static void random_round(struct rhist *x, struct kvcs *v, bool git_graph)
{
	const char *goods[4], *paths[2];
	size_t ng = 1 + rnd(3), np = 1 + rnd(2), bad;
	struct gitlist wantb;

	/* bad mostly late; goods anywhere (ancestors or not) */
	bad = x->n - 1 - rnd((unsigned)(x->n / 3));
	for (size_t i = 0; i < ng; i++)
		goods[i] = x->h[rnd((unsigned)x->n)];
	if (rnd(4) == 0)
		goods[ng++] = goods[0];		/* a duplicate */
	for (size_t i = 0; i < np; i++)
		paths[i] = rpaths[rnd(NRP)];
	expected_bases(x->dir, x->h[bad], goods, ng, &wantb);
	check_against_git(v, x->r, x->dir, x->h[bad], goods, ng, NULL, 0,
			  false, git_graph, &wantb);
	check_against_git(v, x->r, x->dir, x->h[bad], goods, ng, NULL, 0,
			  true, git_graph, &wantb);
	check_against_git(v, x->r, x->dir, x->h[bad], goods, ng, paths, np,
			  false, git_graph, &wantb);
	check_against_git(v, x->r, x->dir, x->h[bad], goods, ng, paths, np,
			  true, git_graph, &wantb);
	gitlist_free(&wantb);
}

static void test_bisect_random(void **state)
{
	/* KTEST_VCS_ROUNDS, KTEST_VCS_SEED: for longer runs by hand */
	unsigned rounds = getenv("KTEST_VCS_ROUNDS") ?
		(unsigned)atoi(getenv("KTEST_VCS_ROUNDS")) : 200;
	struct sbuf out;

	memset(&stats, 0, sizeof(stats));
	if (getenv("KTEST_VCS_SEED"))
		rng = strtoull(getenv("KTEST_VCS_SEED"), NULL, 0) | 1;
	sbuf_init(&out);
	for (unsigned i = 0; i < rounds; i++) {
		struct rhist x;
		struct kvcs *v;

		make_random(&x, 20 + rnd(181), i % 5, false);
		v = open_ok(x.dir);
		random_round(&x, v, false);
		/* every fourth: again from a commit-graph (some split) */
		if (i % 4 == 0) {
			if (i % 8 == 0) {
				/* with Bloom filters, which git then uses */
				assert_int_equal(run(&out, "git -C %s commit-graph write --reachable --changed-paths",
						     x.dir), 0);
			} else {
				/* two layers: part of the history, then all */
				assert_int_equal(run(&out, "echo %s | git -C %s commit-graph write --split=no-merge --stdin-commits",
						     x.h[x.n / 2], x.dir), 0);
				assert_int_equal(run(&out, "git -C %s commit-graph write --reachable --split=no-merge",
						     x.dir), 0);
			}
			random_round(&x, v, true);
		}
		kvcs_close(v);
		rhist_free(&x);
	}
	sbuf_free(&out);
	print_message("[   INFO   ] %zu comparisons with git rev-list: %zu candidates, %zu treesame, %zu parents outside or simplified away, %zu bad-below-good, %zu merge bases\n",
		      stats.runs, stats.nodes, stats.treesame,
		      stats.dropped_parents, stats.errors, stats.bases);
}

/* ---- the commit-graph reader ---- */

static void remove_loose(const char *dir, const git_oid *id)
{
	char h[KB_ID_LEN], *p;

	hex(h, id);
	p = xasprintf("%s/.git/objects/%.2s/%s", dir, h, h + 2);
	assert_int_equal(unlink(p), 0);
	free(p);
}

static void assert_same_graph(const struct kb_graph *a,
			      const struct kb_graph *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->nodes[i].id, b->nodes[i].id);
		assert_int_equal(a->nodes[i].treesame, b->nodes[i].treesame);
		assert_int_equal(a->nodes[i].nparents, b->nodes[i].nparents);
		for (uint32_t k = 0; k < a->nodes[i].nparents; k++)
			assert_int_equal(a->nodes[i].parents[k],
					 b->nodes[i].parents[k]);
	}
}

/*
 * The commit-graph reader, proven by taking the commits away: with their
 * objects gone only the graph (a file, or a chain of two) can answer.
 */
static void test_commit_graph(void **state)
{
	const char *paths[] = { "dir" };
	struct kb_graph g1, g2, p1, p2;
	const char *goods[1];
	struct sbuf out;
	struct rhist x;
	struct kvcs *v;
	char *cg;
	FILE *f;

	rng = 88172645463325252ULL;	/* a history with a long one */
	make_random(&x, 120, 0, true);
	v = open_ok(x.dir);
	goods[0] = x.h[10];
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g1, NULL, NULL), 0);
	assert_true(g1.n > 20);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, paths, 1,
					   false, &p1, NULL, NULL), 0);
	sbuf_init(&out);
	assert_int_equal(run(&out, "cd %s/.git/objects/info && echo %s | git commit-graph write --split=no-merge --stdin-commits && git commit-graph write --reachable --split=no-merge && cp -r commit-graphs ../../chain && git commit-graph write --reachable",
			     x.dir, x.h[60]), 0);
	assert_int_equal(run(&out, "ls %s/.git/chain/*.graph | wc -l", x.dir), 0);
	assert_string_equal(sbuf_str(&out), "2\n");
	for (size_t i = 0; i < x.n; i++)
		if (i != 10 && i != 119)
			remove_loose(x.dir, &x.id[i]);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), 0);
	assert_same_graph(&g1, &g2);
	kvcs_graph_free(&g2);
	/* trees still come from the odb: paths work too */
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, paths, 1,
					   false, &p2, NULL, NULL), 0);
	assert_same_graph(&p1, &p2);
	kvcs_graph_free(&p2);

	/* the chain of two instead */
	cg = xasprintf("%s/.git/objects/info/commit-graph", x.dir);
	assert_int_equal(unlink(cg), 0);
	assert_int_equal(run(&out, "cd %s/.git && rm -rf objects/info/commit-graphs && mv chain objects/info/commit-graphs",
			     x.dir), 0);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), 0);
	assert_same_graph(&g1, &g2);
	kvcs_graph_free(&g2);
	/* a damaged layer: the whole chain is ignored, the odb fails */
	assert_int_equal(run(&out, "cd %s/.git/objects/info/commit-graphs && for f in *.graph; do head -c 200 $f > t && chmod u+w $f && mv t $f; break; done",
			     x.dir), 0);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), -1);
	assert_err_has(v, "can't read commit");
	assert_int_equal(run(&out, "rm -rf %s/.git/objects/info/commit-graphs",
			     x.dir), 0);

	/* a truncated file, garbage, none: no crash, the odb answers */
	f = fopen(cg, "w");
	assert_non_null(f);
	fwrite("CGPH\1\1\4\0", 1, 8, f);
	for (int i = 0; i < 100; i++)
		fputc(i * 7 & 0xff, f);
	fclose(f);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), -1);
	assert_err_has(v, "can't read commit");
	f = fopen(cg, "w");
	assert_non_null(f);
	for (int i = 0; i < 5000; i++)
		fputc(i * 7 & 0xff, f);
	fclose(f);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), -1);
	unlink(cg);
	assert_int_equal(kvcs_bisect_graph(v, x.h[119], goods, 1, NULL, 0,
					   false, &g2, NULL, NULL), -1);
	free(cg);
	kvcs_graph_free(&g1);
	kvcs_graph_free(&p1);
	sbuf_free(&out);
	kvcs_close(v);
	rhist_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_bare_and_empty),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_touched_files),
		cmocka_unit_test(test_cherry),
		cmocka_unit_test(test_checkout),
		cmocka_unit_test(test_checkout_changed),
		cmocka_unit_test(test_clean_syncs),
		cmocka_unit_test(test_stat_clean),
		cmocka_unit_test(test_stat_clean_racy),
		cmocka_unit_test(test_stat_clean_many),
		cmocka_unit_test(test_checkout_known),
		cmocka_unit_test(test_checkout_known_pairs),
		cmocka_unit_test(test_checkout_known_shapes),
		cmocka_unit_test(test_untracked_in_way),
		cmocka_unit_test(test_worktrees),
		cmocka_unit_test(test_worktree_name),
		cmocka_unit_test(test_worktree_reclaim),
		cmocka_unit_test_teardown(test_killed_worktree_add,
					  kill_stopped_child),
		cmocka_unit_test_teardown(test_killed_checkout,
					  kill_stopped_child),
		cmocka_unit_test(test_bisect_fixed),
		cmocka_unit_test(test_bisect_random),
		cmocka_unit_test(test_commit_graph),
	};
	const char *tmp;
	char *home;
	int ret;

	/*
	 * Some hundred repositories and a couple of thousand git runs: on
	 * tmpfs unless TMPDIR says otherwise (on this lab's disk every file
	 * git opens costs as much as the rest of the test).
	 */
	tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK | X_OK) ? "/tmp" : "/dev/shm";
	snprintf(top, sizeof(top), "%s/ktest-vcs.XXXXXX", tmp);
	if (!mkdtemp(top)) {
		perror(top);
		return 1;
	}
	/* no user or system config for git or libgit2 */
	home = xasprintf("%s/home", top);
	mkdir(home, 0755);
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	git_libgit2_init();
	ret = cmocka_run_group_tests_name("vcs", tests, NULL, NULL);
	git_libgit2_shutdown();
	if (!getenv("KTEST_VCS_KEEP"))
		rm_rf(top);
	free(home);
	return ret;
}
