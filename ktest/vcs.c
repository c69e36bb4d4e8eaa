// SPDX-License-Identifier: GPL-2.0-only
/*
 * The git layer, on libgit2 only: revisions, ranges, git cherry, the bisect
 * candidate graph, status, checkout and worktrees. No git program runs.
 *
 * The bisect graph is not a git_revwalk: git's candidate list depends on
 * the exact moment at which git's walk learns that a commit is reachable
 * from a good one (a merge is simplified to a parent only while that parent
 * still looks "relevant"), and on how it breaks ties between equal commit
 * dates. So the walk below is a port of git's own loop (revision.c:
 * limit_list, process_parents, try_to_simplify_commit, still_interesting),
 * fed with commits read from the commit-graph file when there is one and
 * from the object database otherwise. tests/unit/test_vcs.c holds it
 * against "git rev-list" on a few hundred random histories.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "conf/strmap.h"
#include "ktest/leftover.h"
#include "ktest/vcs.h"
#include "ktest/vcs_stat.h"

struct kvcs {
	git_repository *repo;
	char *path;
	char err[1024];
	bool synced;	/* the work tree is as the index (checked or checked out) */
	/*
	 * The index is this tree's (known), as long as its checksum is
	 * still known_sum: proven by kvcs_stat_clean() or made so by
	 * kvcs_checkout_changed(). The next such checkout then compares
	 * two trees (only their differing subtrees are read) instead of
	 * the target's whole tree with the index.
	 */
	bool known;
	git_oid known_tree, known_sum;
	char note[768];	/* what a checkout mended before it ran (kvcs_note) */
	char shown[768];	/* the note kvcs_note() last gave */
};

/* Our own branch for a worktree while git_worktree_add() needs one. */
#define WT_BRANCH_PREFIX "ktest-worktree-"

/* ---- errors ---- */

static void set_err(struct kvcs *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct kvcs *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->err, sizeof(v->err), fmt, ap);
	va_end(ap);
}

/*
 * Our context, then libgit2's reason: "unknown revision 'v9.9': revspec
 * 'v9.9' not found". Call right after the failing libgit2 call, while
 * git_error_last() still describes it; the entry points clear it first,
 * so that a call failing without a reason never shows an old one.
 * Returns -1.
 */
static int git_fail(struct kvcs *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int git_fail(struct kvcs *v, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(v->err, sizeof(v->err), fmt, ap);
	va_end(ap);
	n = strlen(v->err);
	if (e && e->message && n < sizeof(v->err))
		snprintf(v->err + n, sizeof(v->err) - n, ": %s", e->message);
	return -1;
}

const char *kvcs_error(const struct kvcs *v)
{
	return v ? v->err : "no repository";
}

static int bad_args(struct kvcs *v, const char *what)
{
	if (v)
		set_err(v, "%s: invalid argument", what);
	return -1;
}

/* ---- small helpers ---- */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	*cap = c;
	return xrealloc(p, c * size);
}

static void oid_hex(char out[KB_ID_LEN], const git_oid *id)
{
	git_oid_tostr(out, KB_ID_LEN, id);
}

void kvcs_free_paths(char **paths, size_t n)
{
	if (!paths)
		return;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

void kvcs_commit_clear(struct kvcs_commit *c)
{
	if (!c)
		return;
	free(c->subject);
	memset(c, 0, sizeof(*c));
}

void kvcs_list_free(struct kvcs_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].subject);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* A growing list of strings, handed out as char ** plus a count. */
struct strvec {
	char **v;
	size_t n, cap;
};

static void strvec_push(struct strvec *s, const char *str)
{
	s->v = grow(s->v, &s->cap, s->n + 2, sizeof(*s->v));
	s->v[s->n++] = xstrdup(str);
	s->v[s->n] = NULL;
}

static void strvec_give(struct strvec *s, char ***out, size_t *n)
{
	if (!s->v)
		s->v = xcalloc(1, sizeof(*s->v));
	*out = s->v;
	*n = s->n;
	memset(s, 0, sizeof(*s));
}

static void strvec_clear(struct strvec *s)
{
	kvcs_free_paths(s->v, s->n);
	memset(s, 0, sizeof(*s));
}

/* ---- opening ---- */

struct kvcs *kvcs_open(const char *path, char *err, size_t errlen)
{
	git_repository *repo = NULL;
	struct kvcs *v;

	if (!path || !*path) {
		snprintf(err, errlen, "BUILD_DIR is not set");
		return NULL;
	}
	if (git_libgit2_init() < 0) {
		snprintf(err, errlen, "can't initialise libgit2");
		return NULL;
	}
	/* like git run in BUILD_DIR: the tree may be a parent directory */
	if (git_repository_open_ext(&repo, path, 0, NULL) < 0) {
		const git_error *e = git_error_last();

		snprintf(err, errlen, "BUILD_DIR %s is not a git work tree: %s",
			 path, e && e->message ? e->message : "unknown error");
		git_libgit2_shutdown();
		return NULL;
	}
	if (git_repository_is_bare(repo)) {
		snprintf(err, errlen,
			 "BUILD_DIR %s is a bare repository: ktest needs a work tree to build in",
			 path);
		git_repository_free(repo);
		git_libgit2_shutdown();
		return NULL;
	}
	v = xcalloc(1, sizeof(*v));
	v->repo = repo;
	v->path = xstrdup(path);
	return v;
}

void kvcs_close(struct kvcs *v)
{
	if (!v)
		return;
	git_repository_free(v->repo);
	free(v->path);
	free(v);
	git_libgit2_shutdown();
}

/* ---- revisions ---- */

static int lookup_commit(struct kvcs *v, const char *rev, git_commit **out)
{
	git_object *obj = NULL, *peeled = NULL;

	*out = NULL;
	git_error_clear();
	if (!rev || !*rev) {
		set_err(v, "empty revision");
		return -1;
	}
	if (git_revparse_single(&obj, v->repo, rev) < 0)
		return git_fail(v, "unknown revision '%s'", rev);
	if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0) {
		git_fail(v, "revision '%s' is not a commit", rev);
		git_object_free(obj);
		return -1;
	}
	git_object_free(obj);
	*out = (git_commit *)peeled;
	return 0;
}

static int resolve_oid(struct kvcs *v, const char *rev, git_oid *out)
{
	git_commit *c;

	if (lookup_commit(v, rev, &c) < 0)
		return -1;
	git_oid_cpy(out, git_commit_id(c));
	git_commit_free(c);
	return 0;
}

static void fill_commit(struct kvcs_commit *out, git_commit *c)
{
	const char *s = git_commit_summary(c);

	oid_hex(out->id, git_commit_id(c));
	out->subject = xstrdup(s ? s : "");
}

int kvcs_resolve(struct kvcs *v, const char *rev, struct kvcs_commit *out)
{
	git_commit *c;

	if (!v || !out)
		return bad_args(v, "kvcs_resolve");
	memset(out, 0, sizeof(*out));
	if (lookup_commit(v, rev, &c) < 0)
		return -1;
	fill_commit(out, c);
	git_commit_free(c);
	return 0;
}

/*
 * remote.NAME.url, read from the config rather than by git_remote_lookup(),
 * whose config glob leaks pcre2 match data (libgit2 1.5, under LSan).
 */
char *kvcs_remote_url(struct kvcs *v, const char *name)
{
	git_config *cfg = NULL;
	git_buf buf = GIT_BUF_INIT;
	char *key, *ret = NULL;

	if (!v || !name)
		return NULL;
	if (git_repository_config_snapshot(&cfg, v->repo) < 0) {
		git_error_clear();
		return NULL;
	}
	key = xasprintf("remote.%s.url", name);
	if (git_config_get_string_buf(&buf, cfg, key) == 0 && buf.ptr && *buf.ptr)
		ret = xstrdup(buf.ptr);
	git_error_clear();
	git_buf_dispose(&buf);
	free(key);
	git_config_free(cfg);
	return ret;
}

char *kvcs_branch(struct kvcs *v)
{
	git_reference *head = NULL;
	char *ret = NULL;

	if (!v || git_repository_head_detached(v->repo) != 0)
		return NULL;
	if (git_repository_head(&head, v->repo) < 0) {
		git_error_clear();
		return NULL;
	}
	if (git_reference_is_branch(head))
		ret = xstrdup(git_reference_shorthand(head));
	git_reference_free(head);
	return ret;
}

int kvcs_head(struct kvcs *v, struct kvcs_commit *out)
{
	git_reference *head = NULL;
	git_object *obj = NULL;
	int err;

	if (!v || !out)
		return bad_args(v, "kvcs_head");
	memset(out, 0, sizeof(*out));
	git_error_clear();
	err = git_repository_head(&head, v->repo);
	if (err == GIT_EUNBORNBRANCH) {
		set_err(v, "HEAD of %s has no commit yet (unborn branch)",
			v->path);
		return -1;
	}
	if (err < 0)
		return git_fail(v, "can't read HEAD of %s", v->path);
	if (git_reference_peel(&obj, head, GIT_OBJECT_COMMIT) < 0) {
		git_fail(v, "HEAD of %s is not a commit", v->path);
		git_reference_free(head);
		return -1;
	}
	fill_commit(out, (git_commit *)obj);
	git_object_free(obj);
	git_reference_free(head);
	return 0;
}

int kvcs_is_ancestor(struct kvcs *v, const char *a, const char *b)
{
	git_oid ia, ib;
	int r;

	if (!v)
		return bad_args(v, "kvcs_is_ancestor");
	if (resolve_oid(v, a, &ia) < 0 || resolve_oid(v, b, &ib) < 0)
		return -1;
	if (git_oid_equal(&ia, &ib))
		return 1;
	r = git_graph_descendant_of(v->repo, &ib, &ia);
	if (r < 0)
		return git_fail(v, "can't tell whether %s is an ancestor of %s",
				a, b);
	return r;
}

/* ---- ranges (patchcheck) ---- */

static int list_add(struct kvcs *v, struct kvcs_list *l, size_t *cap,
		    const git_oid *id)
{
	git_commit *c;

	if (git_commit_lookup(&c, v->repo, id) < 0) {
		char hex[KB_ID_LEN];

		oid_hex(hex, id);
		return git_fail(v, "can't read commit %s", hex);
	}
	l->v = grow(l->v, cap, l->n + 1, sizeof(*l->v));
	fill_commit(&l->v[l->n++], c);
	git_commit_free(c);
	return 0;
}

static bool list_has(const struct kvcs_list *l, const git_oid *id)
{
	char hex[KB_ID_LEN];

	oid_hex(hex, id);
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].id, hex))
			return true;
	return false;
}

/* Hides from's parents, so that "from^@..to" keeps from itself. */
static int hide_parents(struct kvcs *v, git_revwalk *w, const git_oid *from,
			const char *rev)
{
	git_commit *c;
	unsigned int i, n;

	if (git_commit_lookup(&c, v->repo, from) < 0)
		return git_fail(v, "can't read commit '%s'", rev);
	n = git_commit_parentcount(c);
	for (i = 0; i < n; i++) {
		if (git_revwalk_hide(w, git_commit_parent_id(c, i)) < 0) {
			git_commit_free(c);
			return git_fail(v, "can't walk the parents of '%s'",
					rev);
		}
	}
	git_commit_free(c);
	return 0;
}

int kvcs_range(struct kvcs *v, const char *from, const char *to,
	       bool first_parent, struct kvcs_list *out)
{
	git_revwalk *w = NULL;
	git_oid ifrom, ito, id;
	size_t cap = 0;
	int r, ret = -1;

	if (!v || !out)
		return bad_args(v, "kvcs_range");
	memset(out, 0, sizeof(*out));
	if (resolve_oid(v, to, &ito) < 0)
		return -1;
	if (from) {
		if (resolve_oid(v, from, &ifrom) < 0)
			return -1;
		r = git_oid_equal(&ifrom, &ito) ? 1 :
			git_graph_descendant_of(v->repo, &ito, &ifrom);
		if (r < 0)
			return git_fail(v, "can't compare '%s' with '%s'",
					from, to);
		if (!r) {
			set_err(v, "'%s' is not an ancestor of '%s'", from, to);
			return -1;
		}
	}
	if (git_revwalk_new(&w, v->repo) < 0)
		return git_fail(v, "can't walk %s", v->path);
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (first_parent)
		git_revwalk_simplify_first_parent(w);
	if (git_revwalk_push(w, &ito) < 0) {
		git_fail(v, "can't walk from '%s'", to);
		goto out;
	}
	if (from && hide_parents(v, w, &ifrom, from) < 0)
		goto out;
	while ((r = git_revwalk_next(&id, w)) == 0)
		if (list_add(v, out, &cap, &id) < 0)
			goto out;
	if (r != GIT_ITEROVER) {
		git_fail(v, "walking %s..%s failed", from ? from : "", to);
		goto out;
	}
	/* first parents of to may pass by from on a side branch */
	if (from && first_parent && !list_has(out, &ifrom)) {
		set_err(v, "'%s' is not on the first-parent line of '%s'",
			from, to);
		goto out;
	}
	ret = 0;
out:
	git_revwalk_free(w);
	if (ret)
		kvcs_list_free(out);
	return ret;
}

/* ---- git's revision walk ---- */

/*
 * The flags of revision.c that decide the candidate list. PARSED stands
 * for "parents known": git only propagates UNINTERESTING through commits
 * whose parents it has read, and that is what makes the timing matter.
 */
enum {
	W_SEEN = 1 << 0,
	W_UNINTERESTING = 1 << 1,
	W_BOTTOM = 1 << 2,	/* a good commit given by the user */
	W_ADDED = 1 << 3,	/* process_parents() done */
	W_PARSED = 1 << 4,
	W_TREESAME = 1 << 5,
	W_MET = 1 << 6,		/* good, met as a candidate's parent */
	W_SIG = 1 << 7,		/* trees[] is the paths' fingerprint */
};

#define NO_POS UINT32_MAX

struct wnode {
	git_oid oid;
	uint16_t flags;
	uint16_t nparents;
	uint32_t parents;	/* first of them in walk.par */
	uint32_t aux;		/* graph position, then output index */
	uint64_t date;		/* unsigned, as git's timestamp_t */
};

struct wqent {
	uint64_t date;
	uint32_t seq;
	uint32_t node;
};

/* One file of a commit-graph (or of a chain of them). */
struct cg_file {
	unsigned char *map;
	size_t size;
	const unsigned char *fanout, *oids, *cdat, *edges;
	size_t nedges;
	uint32_t n, base;
};

struct cgraph {
	struct cg_file *f;
	size_t nf;
	uint32_t total;
};

struct walk {
	struct kvcs *v;
	git_odb *odb;
	struct cgraph cg;
	bool prune;		/* path limited: git's revs->prune */
	bool first_parent;
	bool literal;		/* plain paths only: no git_diff needed */
	const char *const *paths;
	size_t npaths;
	git_oid absent;		/* the fingerprint of "none of the paths" */
	git_diff_options dopts;

	struct wnode *n;
	size_t nn, capn;
	git_oid *trees;		/* prune: each commit's tree, or W_SIG */
	size_t captrees;
	uint32_t *par;
	size_t npar, cappar;
	uint32_t *hash;		/* node index + 1, open addressing */
	size_t hcap;

	struct wqent *q;	/* git's date-ordered commit list, as a heap */
	size_t nq, capq;
	uint32_t seq;
	uint32_t interesting_cache;

	uint32_t *list;		/* what limit_list() keeps, in order */
	size_t nlist, caplist;
	uint32_t *stack;
	size_t nstack, capstack;
	uint32_t *tmp;
	size_t ntmp, captmp;
};

/* -- the commit-graph file (gitformat-commit-graph(5)) -- */

#define CG_NO_PARENT 0x70000000u
#define CG_OCTOPUS 0x80000000u
#define CG_ENTRY 36		/* tree, 2 parents, generation+date */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void cg_file_unmap(struct cg_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	memset(f, 0, sizeof(*f));
}

/*
 * Maps one graph file and checks every size we will rely on, so that a
 * damaged file is ignored (the odb answers instead) rather than read out
 * of bounds.
 */
static int cg_file_map(struct cg_file *f, const char *path, unsigned nbase)
{
	const unsigned char *p, *end;
	struct stat st;
	unsigned nchunks, i;
	int fd;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < 8 + 12 + 20 ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return -1;
	}
	f->size = (size_t)st.st_size;
	f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		return -1;
	}
	p = f->map;
	end = p + f->size;
	/* version 1, SHA-1 */
	if (memcmp(p, "CGPH", 4) || p[4] != 1 || p[5] != 1 || p[7] != nbase)
		goto bad;
	nchunks = p[6];
	if ((size_t)(nchunks + 1) * 12 + 8 > f->size)
		goto bad;
	for (i = 0; i < nchunks; i++) {
		const unsigned char *c = p + 8 + i * 12;
		uint64_t off = be64(c + 4), next = be64(c + 16);
		size_t len;

		if (off > next || next > f->size)
			goto bad;
		len = (size_t)(next - off);
		switch (be32(c)) {
		case 0x4f494446:	/* OIDF */
			if (len != 256 * 4)
				goto bad;
			f->fanout = p + off;
			break;
		case 0x4f49444c:	/* OIDL */
			f->oids = p + off;
			f->n = (uint32_t)(len / GIT_OID_RAWSZ);
			if (len % GIT_OID_RAWSZ)
				goto bad;
			break;
		case 0x43444154:	/* CDAT */
			f->cdat = p + off;
			if (len % CG_ENTRY)
				goto bad;
			break;
		case 0x45444745:	/* EDGE */
			f->edges = p + off;
			f->nedges = len / 4;
			break;
		}
	}
	if (!f->fanout || !f->oids || !f->cdat)
		goto bad;
	if (be32(f->fanout + 255 * 4) != f->n ||
	    f->cdat + (size_t)f->n * CG_ENTRY > end)
		goto bad;
	for (i = 1; i < 256; i++)
		if (be32(f->fanout + (i - 1) * 4) > be32(f->fanout + i * 4))
			goto bad;
	return 0;
bad:
	cg_file_unmap(f);
	return -1;
}

static void cg_close(struct cgraph *g)
{
	for (size_t i = 0; i < g->nf; i++)
		cg_file_unmap(&g->f[i]);
	free(g->f);
	memset(g, 0, sizeof(*g));
}

static bool cg_add(struct cgraph *g, const char *path)
{
	struct cg_file f;

	if (cg_file_map(&f, path, (unsigned)g->nf) < 0)
		return false;
	if ((uint64_t)g->total + f.n >= NO_POS) {
		cg_file_unmap(&f);
		return false;
	}
	f.base = g->total;
	g->total += f.n;
	g->f = xrealloc(g->f, (g->nf + 1) * sizeof(*g->f));
	g->f[g->nf++] = f;
	return true;
}

/*
 * objects/info/commit-graph, or else the split chain in
 * objects/info/commit-graphs (base first), as git reads them. None is fine.
 */
static void cg_open(struct cgraph *g, git_repository *repo)
{
	const char *common = git_repository_commondir(repo);
	char *path, *chain, line[128];
	FILE *fp;

	memset(g, 0, sizeof(*g));
	path = xasprintf("%sobjects/info/commit-graph", common);
	if (cg_add(g, path)) {
		free(path);
		return;
	}
	free(path);
	chain = xasprintf("%sobjects/info/commit-graphs/commit-graph-chain",
			  common);
	fp = fopen(chain, "re");
	free(chain);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		path = xasprintf("%sobjects/info/commit-graphs/graph-%s.graph",
				 common, line);
		if (!cg_add(g, path)) {
			free(path);
			cg_close(g);
			break;
		}
		free(path);
	}
	fclose(fp);
}

static uint32_t cg_find(const struct cgraph *g, const git_oid *id)
{
	for (size_t i = 0; i < g->nf; i++) {
		const struct cg_file *f = &g->f[i];
		unsigned b = id->id[0];
		uint32_t lo = b ? be32(f->fanout + (b - 1) * 4) : 0;
		uint32_t hi = be32(f->fanout + b * 4);

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int c = memcmp(f->oids + (size_t)mid * GIT_OID_RAWSZ,
				       id->id, GIT_OID_RAWSZ);

			if (!c)
				return f->base + mid;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return NO_POS;
}

static const struct cg_file *cg_file_of(const struct cgraph *g, uint32_t pos)
{
	for (size_t i = g->nf; i-- > 0; )
		if (pos >= g->f[i].base)
			return pos - g->f[i].base < g->f[i].n ? &g->f[i] : NULL;
	return NULL;
}

/* -- nodes -- */

static void hash_grow(struct walk *w)
{
	size_t cap = w->hcap ? w->hcap * 2 : 1024;

	free(w->hash);
	w->hash = xcalloc(cap, sizeof(*w->hash));
	w->hcap = cap;
	for (size_t i = 0; i < w->nn; i++) {
		uint32_t h;
		size_t j;

		memcpy(&h, w->n[i].oid.id, sizeof(h));
		for (j = h & (cap - 1); w->hash[j]; j = (j + 1) & (cap - 1))
			;
		w->hash[j] = (uint32_t)i + 1;
	}
}

/* The node of a commit, made on first sight (not parsed). */
static uint32_t node_get(struct walk *w, const git_oid *id)
{
	struct wnode *n;
	uint32_t h;
	size_t j;

	if ((w->nn + 1) * 2 > w->hcap)
		hash_grow(w);
	memcpy(&h, id->id, sizeof(h));
	for (j = h & (w->hcap - 1); w->hash[j]; j = (j + 1) & (w->hcap - 1))
		if (git_oid_equal(&w->n[w->hash[j] - 1].oid, id))
			return w->hash[j] - 1;
	if (w->nn >= NO_POS - 1) {
		fputs("ktest: more than 4 billion commits\n", stderr);
		abort();
	}
	w->n = grow(w->n, &w->capn, w->nn + 1, sizeof(*w->n));
	if (w->prune)
		w->trees = grow(w->trees, &w->captrees, w->nn + 1,
				sizeof(*w->trees));
	n = &w->n[w->nn];
	memset(n, 0, sizeof(*n));
	git_oid_cpy(&n->oid, id);
	n->aux = NO_POS;
	w->hash[j] = (uint32_t)w->nn + 1;
	return (uint32_t)w->nn++;
}

static uint32_t parent_of(const struct walk *w, uint32_t c, unsigned k)
{
	return w->par[w->n[c].parents + k];
}

/* The parents collected in w->tmp become c's. */
static int set_parents(struct walk *w, uint32_t c, uint64_t date)
{
	struct wnode *n = &w->n[c];

	if (w->ntmp > UINT16_MAX) {
		char hex[KB_ID_LEN];

		oid_hex(hex, &n->oid);
		set_err(w->v, "commit %s has %zu parents", hex, w->ntmp);
		return -1;
	}
	w->par = grow(w->par, &w->cappar, w->npar + w->ntmp, sizeof(*w->par));
	if (w->ntmp)
		memcpy(w->par + w->npar, w->tmp, w->ntmp * sizeof(*w->tmp));
	n->parents = (uint32_t)w->npar;
	n->nparents = (uint16_t)w->ntmp;
	n->date = date;
	n->flags |= W_PARSED;
	w->npar += w->ntmp;
	return 0;
}

static void tmp_push(struct walk *w, uint32_t x)
{
	w->tmp = grow(w->tmp, &w->captmp, w->ntmp + 1, sizeof(*w->tmp));
	w->tmp[w->ntmp++] = x;
}

/* Parents and date from the commit-graph. 1 if found there. */
static int parse_from_graph(struct walk *w, uint32_t c)
{
	const struct cg_file *f, *pf;
	const unsigned char *e;
	uint32_t pos = w->n[c].aux, p1, p2, k;
	uint64_t date;

	if (!w->cg.nf)
		return 0;
	if (pos == NO_POS)
		pos = cg_find(&w->cg, &w->n[c].oid);
	f = pos == NO_POS ? NULL : cg_file_of(&w->cg, pos);
	if (!f)
		return 0;
	e = f->cdat + (size_t)(pos - f->base) * CG_ENTRY;
	/* collect the positions first: a bad one sends us to the odb */
	w->ntmp = 0;
	p1 = be32(e + 20);
	p2 = be32(e + 24);
	if (p1 != CG_NO_PARENT)
		tmp_push(w, p1);
	if (p2 & CG_OCTOPUS) {
		for (k = p2 & ~CG_OCTOPUS; ; k++) {
			uint32_t edge;

			if (k >= f->nedges)
				return 0;
			edge = be32(f->edges + (size_t)k * 4);
			tmp_push(w, edge & ~CG_OCTOPUS);
			if (edge & CG_OCTOPUS)
				break;
		}
	} else if (p2 != CG_NO_PARENT) {
		tmp_push(w, p2);
	}
	for (k = 0; k < w->ntmp; k++)
		if (!cg_file_of(&w->cg, w->tmp[k]))
			return 0;
	for (k = 0; k < w->ntmp; k++) {
		uint32_t ppos = w->tmp[k], p;

		pf = cg_file_of(&w->cg, ppos);
		p = node_get(w, (const git_oid *)(pf->oids +
				(size_t)(ppos - pf->base) * GIT_OID_RAWSZ));
		w->n[p].aux = ppos;
		w->tmp[k] = p;
	}
	if (w->prune)
		memcpy(w->trees[c].id, e, GIT_OID_RAWSZ);
	date = (uint64_t)(be32(e + 28) & 3) << 32 | be32(e + 32);
	return set_parents(w, c, date) < 0 ? -1 : 1;
}

/* git's parse_commit_date(): the committer's time, 0 if malformed. */
static uint64_t parse_commit_date(const char *buf, const char *tail)
{
	const char *d, *eol;
	uint64_t t = 0;
	bool neg = false;

	if (tail - buf <= 6 || memcmp(buf, "author", 6))
		return 0;
	while (buf < tail && *buf++ != '\n')
		;
	if (tail - buf <= 9 || memcmp(buf, "committer", 9))
		return 0;
	eol = memchr(buf, '\n', (size_t)(tail - buf));
	if (!eol)
		return 0;
	for (d = eol; d > buf && d[-1] != '>'; d--)
		;
	if (d == buf)
		return 0;
	while (d < eol && isspace((unsigned char)*d))
		d++;
	if (d < eol && *d == '-') {
		neg = true;
		d++;
	} else if (d >= eol || !isdigit((unsigned char)*d)) {
		return 0;
	}
	/* strtoumax(): overflow saturates, a minus sign wraps around */
	for (; d < eol && isdigit((unsigned char)*d); d++) {
		if (t > (UINT64_MAX - (uint64_t)(*d - '0')) / 10)
			return UINT64_MAX;
		t = t * 10 + (uint64_t)(*d - '0');
	}
	return neg ? 0 - t : t;
}

/*
 * A raw object, straight from the backends: git_odb_read() would hash
 * every object again and keep it in the object cache, which for a million
 * commits costs seconds and hundreds of megabytes.
 */
struct rawobj {
	void *data;
	size_t len;
	git_odb_backend *owner;
	git_odb_object *obj;
};

static void raw_free(struct rawobj *r)
{
	if (r->obj)
		git_odb_object_free(r->obj);
	else if (r->owner)
		git_odb_backend_data_free(r->owner, r->data);
}

static int read_raw(struct walk *w, const git_oid *id, git_object_t want,
		    struct rawobj *r)
{
	size_t i, nb = git_odb_num_backends(w->odb);
	git_object_t type = GIT_OBJECT_INVALID;
	char hex[KB_ID_LEN];

	memset(r, 0, sizeof(*r));
	for (i = 0; i < nb; i++) {
		git_odb_backend *b;

		if (git_odb_get_backend(&b, w->odb, i) < 0 || !b->read)
			continue;
		if (b->read(&r->data, &r->len, &type, b, id) == 0) {
			r->owner = b;
			break;
		}
		r->data = NULL;
	}
	if (!r->data) {
		/* new packs, or a real error: let libgit2 say which */
		if (git_odb_read(&r->obj, w->odb, id) < 0) {
			oid_hex(hex, id);
			return git_fail(w->v, "can't read %s %s",
					git_object_type2string(want), hex);
		}
		r->data = (void *)git_odb_object_data(r->obj);
		r->len = git_odb_object_size(r->obj);
		type = git_odb_object_type(r->obj);
	}
	if (type != want) {
		oid_hex(hex, id);
		set_err(w->v, "object %s is a %s, not a %s", hex,
			git_object_type2string(type),
			git_object_type2string(want));
		raw_free(r);
		return -1;
	}
	return 0;
}

/* What git's parse_commit_buffer() takes from a commit: tree, parents, date. */
static int parse_from_odb(struct walk *w, uint32_t c)
{
	struct rawobj r;
	const char *p, *end;
	char hex[KB_ID_LEN];
	git_oid id;
	int ret = -1;

	if (read_raw(w, &w->n[c].oid, GIT_OBJECT_COMMIT, &r) < 0)
		return -1;
	p = r.data;
	end = p + r.len;
	w->ntmp = 0;
	if (end - p <= 46 || memcmp(p, "tree ", 5) || p[45] != '\n' ||
	    git_oid_fromstrn(&id, p + 5, 40) < 0)
		goto bogus;
	if (w->prune)
		git_oid_cpy(&w->trees[c], &id);
	p += 46;
	while (end - p > 47 && !memcmp(p, "parent ", 7)) {
		if (end - p <= 48 || p[47] != '\n' ||
		    git_oid_fromstrn(&id, p + 7, 40) < 0)
			goto bogus;
		tmp_push(w, node_get(w, &id));
		p += 48;
	}
	ret = set_parents(w, c, parse_commit_date(p, end));
	raw_free(&r);
	return ret;
bogus:
	raw_free(&r);
	oid_hex(hex, &w->n[c].oid);
	set_err(w->v, "bogus commit object %s", hex);
	return -1;
}

static int parse_node(struct walk *w, uint32_t c)
{
	int r;

	if (w->n[c].flags & W_PARSED)
		return 0;
	r = parse_from_graph(w, c);
	if (r)
		return r < 0 ? -1 : 0;
	return parse_from_odb(w, c);
}

/* -- git's date-ordered list -- */

/*
 * git keeps the commits to visit in a list sorted by date, a newcomer
 * going after every commit of the same date. A heap ordered by (date
 * descending, arrival ascending) pops in exactly that order.
 */
static bool q_before(const struct wqent *a, const struct wqent *b)
{
	return a->date > b->date || (a->date == b->date && a->seq < b->seq);
}

static void q_put(struct walk *w, uint32_t c)
{
	struct wqent e = { w->n[c].date, w->seq++, c };
	size_t i;

	w->q = grow(w->q, &w->capq, w->nq + 1, sizeof(*w->q));
	for (i = w->nq++; i > 0; ) {
		size_t up = (i - 1) / 2;

		if (!q_before(&e, &w->q[up]))
			break;
		w->q[i] = w->q[up];
		i = up;
	}
	w->q[i] = e;
}

static uint32_t q_pop(struct walk *w)
{
	uint32_t top = w->q[0].node;
	struct wqent last = w->q[--w->nq];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, best;

		if (l >= w->nq)
			break;
		best = l;
		if (l + 1 < w->nq && q_before(&w->q[l + 1], &w->q[l]))
			best = l + 1;
		if (!q_before(&w->q[best], &last))
			break;
		w->q[i] = w->q[best];
		i = best;
	}
	if (w->nq)
		w->q[i] = last;
	return top;
}

/* -- revision.c -- */

static void mark_one_uninteresting(struct walk *w, uint32_t c)
{
	struct wnode *n = &w->n[c];

	if (n->flags & W_UNINTERESTING)
		return;
	n->flags |= W_UNINTERESTING;
	/* unparsed commits have no parents yet: the walk reaches them later */
	w->stack = grow(w->stack, &w->capstack, w->nstack + n->nparents,
			sizeof(*w->stack));
	for (unsigned k = 0; k < n->nparents; k++)
		w->stack[w->nstack++] = parent_of(w, c, k);
}

static void mark_parents_uninteresting(struct walk *w, uint32_t c)
{
	for (unsigned k = 0; k < w->n[c].nparents; k++)
		mark_one_uninteresting(w, parent_of(w, c, k));
	while (w->nstack)
		mark_one_uninteresting(w, w->stack[--w->nstack]);
}

/* Counts for merge simplification: a given good commit is "relevant". */
static bool relevant(const struct walk *w, uint32_t c)
{
	return (w->n[c].flags & (W_UNINTERESTING | W_BOTTOM)) !=
	       W_UNINTERESTING;
}

/*
 * A plain path, that git's pathspec matching treats as "this file, or
 * everything below this directory": then comparing the entries at the
 * path says all a diff limited to it would. Globs and ":(magic)" are left
 * to git_diff.
 */
static bool literal_path(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/' || *p == ':' || strpbrk(p, "*?[\\"))
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n] || !c[n + 1])
			return true;	/* the end, or a trailing '/' */
		c += n + 1;
	}
}

/* The entry name in raw tree t: its mode (0: none) and id. */
static int tree_entry(struct walk *w, const git_oid *t, const char *name,
		      size_t len, unsigned *mode, git_oid *id)
{
	struct rawobj r;
	const char *p, *end;
	char hex[KB_ID_LEN];

	*mode = 0;
	memset(id, 0, sizeof(*id));
	if (read_raw(w, t, GIT_OBJECT_TREE, &r) < 0)
		return -1;
	for (p = r.data, end = p + r.len; p < end; ) {
		const char *nm, *nul;
		unsigned m = 0;

		for (; p < end && *p >= '0' && *p <= '7'; p++)
			m = m * 8 + (unsigned)(*p - '0');
		if (p >= end || *p != ' ')
			goto bogus;
		nm = ++p;
		nul = memchr(nm, '\0', (size_t)(end - nm));
		if (!nul || end - nul < 1 + GIT_OID_RAWSZ)
			goto bogus;
		if ((size_t)(nul - nm) == len && !memcmp(nm, name, len)) {
			*mode = m;
			memcpy(id->id, nul + 1, GIT_OID_RAWSZ);
			break;
		}
		p = nul + 1 + GIT_OID_RAWSZ;
	}
	raw_free(&r);
	return 0;
bogus:
	raw_free(&r);
	oid_hex(hex, t);
	set_err(w->v, "bogus tree object %s", hex);
	return -1;
}

/* Mode and id of what sits at path in tree root (mode 0: nothing). */
static int path_entry(struct walk *w, const git_oid *root, const char *path,
		      unsigned *mode, git_oid *id)
{
	git_oid t = *root;

	for (const char *c = path; ; ) {
		size_t n = strcspn(c, "/");

		if (tree_entry(w, &t, c, n, mode, id) < 0)
			return -1;
		if (!*mode || !c[n])
			return 0;
		/* "dir/" and "dir/x" need a directory here */
		if (*mode != 040000) {
			*mode = 0;
			memset(id, 0, sizeof(*id));
			return 0;
		}
		if (!c[n + 1])
			return 0;
		t = *id;
		c += n + 1;
	}
}

/*
 * What the paths hold in commit c, hashed into one id that replaces its
 * tree id: two commits are TREESAME for the paths when these match.
 * Read straight from the backends, like the commits, so a million of
 * them pass without filling libgit2's object cache.
 */
static int path_sig(struct walk *w, uint32_t c)
{
	unsigned char buf[256 * (4 + GIT_OID_RAWSZ)];
	unsigned char *b = buf;
	git_oid root, sig;

	if (w->n[c].flags & W_SIG)
		return 0;
	root = w->trees[c];
	for (size_t i = 0; i < w->npaths; i++) {
		unsigned mode;
		git_oid id;

		if (path_entry(w, &root, w->paths[i], &mode, &id) < 0)
			return -1;
		b[0] = (unsigned char)(mode >> 24);
		b[1] = (unsigned char)(mode >> 16);
		b[2] = (unsigned char)(mode >> 8);
		b[3] = (unsigned char)mode;
		memcpy(b + 4, id.id, GIT_OID_RAWSZ);
		b += 4 + GIT_OID_RAWSZ;
	}
	if (git_odb_hash(&sig, buf, (size_t)(b - buf), GIT_OBJECT_BLOB) < 0)
		return git_fail(w->v, "can't hash paths");
	w->trees[c] = sig;
	w->n[c].flags |= W_SIG;
	return 0;
}

/* Do trees a (NULL: the empty tree) and b differ within the paths? */
static int trees_differ(struct walk *w, const git_oid *a, const git_oid *b)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	char hex[KB_ID_LEN];
	int r = -1;

	if (a && git_oid_equal(a, b))
		return 0;
	if ((a && git_tree_lookup(&ta, w->v->repo, a) < 0) ||
	    git_tree_lookup(&tb, w->v->repo, b) < 0) {
		oid_hex(hex, a && !ta ? a : b);
		git_fail(w->v, "can't read tree %s", hex);
		goto out;
	}
	if (git_diff_tree_to_tree(&d, w->v->repo, ta, tb, &w->dopts) < 0) {
		oid_hex(hex, b);
		git_fail(w->v, "can't diff tree %s", hex);
		goto out;
	}
	r = git_diff_num_deltas(d) > 0;
out:
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	return r;
}

/* Does commit c differ from p (NO_POS: the empty tree) in the paths? */
static int differs(struct walk *w, uint32_t p, uint32_t c)
{
	if (!w->literal)
		return trees_differ(w, p == NO_POS ? NULL : &w->trees[p],
				    &w->trees[c]);
	if ((p != NO_POS && path_sig(w, p) < 0) || path_sig(w, c) < 0)
		return -1;
	return !git_oid_equal(p == NO_POS ? &w->absent : &w->trees[p],
			      &w->trees[c]);
}

/*
 * try_to_simplify_commit() with git's defaults (dense, simplify_history):
 * the first parent the commit is TREESAME to, if that parent is relevant,
 * becomes its only parent; the walk then never follows the others. A
 * parent already known to be reachable from a good one is no reason to
 * drop the rest: "even if a merge with an uninteresting side branch
 * brought the entire change we are interested in, we do not want to lose
 * the other branches of this merge".
 */
static int simplify_commit(struct walk *w, uint32_t c)
{
	bool relevant_change = false, irrelevant_change = false;
	unsigned relevant_parents = 0, k;
	int d;

	if (!w->prune)
		return 0;
	if (!w->n[c].nparents) {
		d = differs(w, NO_POS, c);
		if (d < 0)
			return -1;
		if (!d)
			w->n[c].flags |= W_TREESAME;
		return 0;
	}
	for (k = 0; k < w->n[c].nparents; k++) {
		uint32_t p = parent_of(w, c, k);

		if (relevant(w, p))
			relevant_parents++;
		/* first parents only: never derail onto a side branch */
		if (k == 1 && w->first_parent)
			break;
		if (parse_node(w, p) < 0)
			return -1;
		d = differs(w, p, c);
		if (d < 0)
			return -1;
		if (!d) {
			if (!relevant(w, p))
				continue;
			w->par[w->n[c].parents] = p;
			w->n[c].nparents = 1;
			w->n[c].flags |= W_TREESAME;
			return 0;
		}
		if (relevant(w, p))
			relevant_change = true;
		else
			irrelevant_change = true;
	}
	if (relevant_parents ? !relevant_change : !irrelevant_change)
		w->n[c].flags |= W_TREESAME;
	return 0;
}

static int process_parents(struct walk *w, uint32_t c)
{
	unsigned k;

	if (w->n[c].flags & W_ADDED)
		return 0;
	w->n[c].flags |= W_ADDED;

	if (w->n[c].flags & W_UNINTERESTING) {
		/* the maximal uninteresting set: every parent */
		for (k = 0; k < w->n[c].nparents; k++) {
			uint32_t p = parent_of(w, c, k);

			w->n[p].flags |= W_UNINTERESTING;
			if (parse_node(w, p) < 0)
				continue;	/* git parses gently here */
			if (w->n[p].nparents)
				mark_parents_uninteresting(w, p);
			if (w->n[p].flags & W_SEEN)
				continue;
			w->n[p].flags |= W_SEEN;
			q_put(w, p);
		}
		return 0;
	}
	/* met from bad's side: an ancestor of bad, found for free */
	for (k = 0; k < w->n[c].nparents; k++)
		if (w->n[parent_of(w, c, k)].flags & W_BOTTOM)
			w->n[parent_of(w, c, k)].flags |= W_MET;
	if (simplify_commit(w, c) < 0)
		return -1;
	for (k = 0; k < w->n[c].nparents; k++) {
		uint32_t p = parent_of(w, c, k);

		if (parse_node(w, p) < 0)
			return -1;
		if (!(w->n[p].flags & W_SEEN)) {
			w->n[p].flags |= W_SEEN;
			q_put(w, p);
		}
		if (w->first_parent)
			break;
	}
	return 0;
}

static bool everybody_uninteresting(struct walk *w)
{
	uint32_t c = w->interesting_cache;

	if (c != NO_POS && !(w->n[c].flags & W_UNINTERESTING))
		return false;
	for (size_t i = 0; i < w->nq; i++) {
		if (!(w->n[w->q[i].node].flags & W_UNINTERESTING)) {
			w->interesting_cache = w->q[i].node;
			return false;
		}
	}
	return true;
}

/* How many extra uninteresting commits git looks at before it stops. */
#define SLOP 5

static int still_interesting(struct walk *w, uint64_t date, int slop)
{
	if (!w->nq)
		return 0;
	if (date <= w->q[0].date)
		return SLOP;
	if (!everybody_uninteresting(w))
		return SLOP;
	return slop - 1;
}

static int limit_list(struct walk *w)
{
	uint64_t date = UINT64_MAX;
	int slop = SLOP;

	w->interesting_cache = NO_POS;
	while (w->nq) {
		uint32_t c = q_pop(w);

		if (c == w->interesting_cache)
			w->interesting_cache = NO_POS;
		if (process_parents(w, c) < 0)
			return -1;
		if (w->n[c].flags & W_UNINTERESTING) {
			mark_parents_uninteresting(w, c);
			slop = still_interesting(w, date, slop);
			if (slop)
				continue;
			break;
		}
		date = w->n[c].date;
		w->list = grow(w->list, &w->caplist, w->nlist + 1,
			       sizeof(*w->list));
		w->list[w->nlist++] = c;
	}
	return 0;
}

struct pending {
	git_oid id;
	uint16_t flags;
	const char *name;	/* for errors */
};

/*
 * setup_revisions() + prepare_revision_walk() + limit_list(): the commits
 * are parsed in the order given, then the negative ones mark their parents,
 * then everything goes into the date-ordered list.
 */
static int walk_run(struct walk *w, const struct pending *pend, size_t npend)
{
	size_t i;

	for (i = 0; i < npend; i++) {
		uint32_t c = node_get(w, &pend[i].id);

		if (parse_node(w, c) < 0) {
			size_t n = strlen(w->v->err);

			snprintf(w->v->err + n, sizeof(w->v->err) - n,
				 " (revision '%s')", pend[i].name);
			return -1;
		}
		w->n[c].flags |= pend[i].flags;
	}
	for (i = 0; i < npend; i++) {
		uint32_t c = node_get(w, &pend[i].id);

		if (w->n[c].flags & W_UNINTERESTING)
			mark_parents_uninteresting(w, c);
		if (!(w->n[c].flags & W_SEEN)) {
			w->n[c].flags |= W_SEEN;
			q_put(w, c);
		}
	}
	return limit_list(w);
}

static int walk_init(struct walk *w, struct kvcs *v, const char *const *paths,
		     size_t npaths, bool first_parent)
{
	memset(w, 0, sizeof(*w));
	git_error_clear();
	w->v = v;
	w->first_parent = first_parent;
	w->prune = npaths > 0;
	if (git_repository_odb(&w->odb, v->repo) < 0)
		return git_fail(v, "can't open the objects of %s", v->path);
	git_diff_options_init(&w->dopts, GIT_DIFF_OPTIONS_VERSION);
	w->dopts.flags |= GIT_DIFF_SKIP_BINARY_CHECK;
	w->dopts.pathspec.strings = (char **)paths;
	w->dopts.pathspec.count = npaths;
	w->paths = paths;
	w->npaths = npaths;
	w->literal = npaths <= 256;
	for (size_t i = 0; i < npaths && w->literal; i++)
		w->literal = literal_path(paths[i]);
	if (w->literal && npaths) {
		unsigned char zero[256 * (4 + GIT_OID_RAWSZ)] = { 0 };

		if (git_odb_hash(&w->absent, zero,
				 npaths * (4 + GIT_OID_RAWSZ),
				 GIT_OBJECT_BLOB) < 0)
			return git_fail(v, "can't hash paths");
	}
	cg_open(&w->cg, v->repo);
	return 0;
}

static void walk_free(struct walk *w)
{
	git_odb_free(w->odb);
	cg_close(&w->cg);
	free(w->n);
	free(w->trees);
	free(w->par);
	free(w->hash);
	free(w->q);
	free(w->list);
	free(w->stack);
	free(w->tmp);
	memset(w, 0, sizeof(*w));
}

/* ---- git cherry ---- */

/* c against its first parent (a root against the empty tree) */
static int commit_diff(struct kvcs *v, git_commit *c, uint32_t flags,
		       git_diff **out)
{
	git_diff_options o;
	git_commit *parent = NULL;
	git_tree *t = NULL, *pt = NULL;
	char hex[KB_ID_LEN];
	int ret = -1;

	*out = NULL;
	oid_hex(hex, git_commit_id(c));
	if (git_commit_tree(&t, c) < 0) {
		git_fail(v, "can't read the tree of %s", hex);
		goto out;
	}
	if (git_commit_parentcount(c) &&
	    (git_commit_parent(&parent, c, 0) < 0 ||
	     git_commit_tree(&pt, parent) < 0)) {
		git_fail(v, "can't read the parent of %s", hex);
		goto out;
	}
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags |= flags;
	if (git_diff_tree_to_tree(out, v->repo, pt, t, &o) < 0) {
		git_fail(v, "can't diff %s against its parent", hex);
		goto out;
	}
	ret = 0;
out:
	git_tree_free(t);
	git_tree_free(pt);
	git_commit_free(parent);
	return ret;
}

/*
 * A patch id that also tells binary changes apart: libgit2 prints a binary
 * change as "Binary files a/x and b/x differ", so two different binary
 * edits of one file would otherwise look like the same patch (git hashes
 * the blob ids of binary changes into the id).
 */
static int patch_id(struct kvcs *v, const git_oid *id, git_oid *out)
{
	git_commit *c = NULL;
	git_diff *d = NULL;
	char hex[KB_ID_LEN];
	int ret = -1;

	oid_hex(hex, id);
	if (git_commit_lookup(&c, v->repo, id) < 0)
		return git_fail(v, "can't read commit %s", hex);
	if (commit_diff(v, c, 0, &d) < 0)
		goto out;
	if (git_diff_patchid(out, d, NULL) < 0) {
		git_fail(v, "can't compute the patch id of %s", hex);
		goto out;
	}
	for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		git_oid both[3];

		if (!(dd->flags & GIT_DIFF_FLAG_BINARY))
			continue;
		both[0] = *out;
		both[1] = dd->old_file.id;
		both[2] = dd->new_file.id;
		if (git_odb_hash(out, both, sizeof(both),
				 GIT_OBJECT_BLOB) < 0) {
			git_fail(v, "can't hash the patch id of %s", hex);
			goto out;
		}
	}
	ret = 0;
out:
	git_diff_free(d);
	git_commit_free(c);
	return ret;
}

static int oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

/* For another walk in the same process: only "parsed" survives. */
static void walk_reset(struct walk *w)
{
	for (size_t i = 0; i < w->nn; i++)
		w->n[i].flags &= W_PARSED;
	w->nq = 0;
	w->nlist = 0;
	w->seq = 0;
}

/*
 * git cherry (builtin/log.c): first the walk of head..upstream for the
 * patch ids of upstream's side, then, in the same process and so with the
 * same commits already parsed, upstream..head in git's order; listed
 * reversed (oldest first), merges never (max_parents = 1), and only the
 * commits whose patch id upstream's side lacks ("+" lines).
 */
int kvcs_cherry(struct kvcs *v, const char *upstream, const char *head,
		struct kvcs_list *out)
{
	struct pending p[2];
	struct walk w;
	git_oid *ids = NULL, pid;
	size_t nids = 0, cap = 0, lcap = 0, i;
	int ret = -1;

	if (!v || !out)
		return bad_args(v, "kvcs_cherry");
	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	memset(p, 0, sizeof(p));
	p[0].name = head;
	p[1].name = upstream;
	if (resolve_oid(v, upstream, &p[1].id) < 0 ||
	    resolve_oid(v, head, &p[0].id) < 0)
		return -1;
	if (git_oid_equal(&p[0].id, &p[1].id))
		return 0;
	if (walk_init(&w, v, NULL, 0, false) < 0)
		goto out;
	p[0].flags = W_UNINTERESTING;
	if (walk_run(&w, p, 2) < 0)
		goto out;
	for (i = 0; i < w.nlist; i++) {
		const struct wnode *n = &w.n[w.list[i]];

		if ((n->flags & W_UNINTERESTING) || n->nparents > 1)
			continue;
		ids = grow(ids, &cap, nids + 1, sizeof(*ids));
		if (patch_id(v, &n->oid, &ids[nids++]) < 0)
			goto out;
	}
	qsort(ids, nids, sizeof(*ids), oid_cmp);
	walk_reset(&w);
	p[0].flags = 0;
	p[1].flags = W_UNINTERESTING;
	if (walk_run(&w, p, 2) < 0)
		goto out;
	for (i = w.nlist; i-- > 0; ) {
		git_oid id = w.n[w.list[i]].oid;

		if ((w.n[w.list[i]].flags & W_UNINTERESTING) ||
		    w.n[w.list[i]].nparents > 1)
			continue;
		if (patch_id(v, &id, &pid) < 0)
			goto out;
		if (nids && bsearch(&pid, ids, nids, sizeof(*ids), oid_cmp))
			continue;
		if (list_add(v, out, &lcap, &id) < 0)
			goto out;
	}
	ret = 0;
out:
	free(ids);
	walk_free(&w);
	if (ret)
		kvcs_list_free(out);
	return ret;
}

/* ---- touched files ---- */

static int tree_paths(struct kvcs *v, const git_tree *to, const git_tree *was,
		      struct strvec *paths);

/*
 * The files a commit changes against its first parent, sorted: its tree
 * and its parent's compared where their subtrees differ (walk_trees()),
 * not file by file as a diff of the two whole trees would (0.05-0.2 s in
 * a kernel tree, before each commit of a patchcheck). Without rename
 * detection a rename is a deletion and an addition, so both the old and
 * the new path are listed: a warning in either counts. A type change
 * (file to symlink) is one path, listed once.
 */
int kvcs_touched_files(struct kvcs *v, const char *id, char ***paths,
		       size_t *n)
{
	struct strvec s = { 0 };
	git_commit *c, *parent = NULL;
	git_tree *t = NULL, *pt = NULL;
	int ret = -1;

	if (!v || !paths || !n)
		return bad_args(v, "kvcs_touched_files");
	*paths = NULL;
	*n = 0;
	if (lookup_commit(v, id, &c) < 0)
		return -1;
	if (git_commit_tree(&t, c) < 0 ||
	    (git_commit_parentcount(c) &&
	     (git_commit_parent(&parent, c, 0) < 0 ||
	      git_commit_tree(&pt, parent) < 0))) {
		git_fail(v, "can't read the trees of %s and its parent", id);
		goto out;
	}
	if (tree_paths(v, t, pt, &s) < 0) {
		git_fail(v, "can't diff %s against its parent", id);
		goto out;
	}
	strvec_give(&s, paths, n);
	ret = 0;
out:
	git_tree_free(t);
	git_tree_free(pt);
	git_commit_free(parent);
	git_commit_free(c);
	strvec_clear(&s);
	return ret;
}

/* ---- the bisect graph ---- */

void kvcs_graph_free(struct kb_graph *g)
{
	if (!g)
		return;
	/* nodes and their parent lists are one block */
	free(g->nodes);
	g->nodes = NULL;
	g->n = 0;
}

/*
 * The candidates, compact: what the graph needs, so that the walk (40
 * bytes a commit and its hash table) can go before the 64-byte kb_nodes
 * are made. Peak memory stays near 100 bytes a commit.
 */
struct cand {
	git_oid *ids;
	uint32_t *poff;		/* i's: par[poff[i]] to par[poff[i+1]] */
	uint32_t *par;
	uint8_t *treesame;
	size_t n, m;
};

/*
 * The candidates in limit_list() order, minus those found reachable from
 * a good commit after they were listed (find_bisection() drops them the
 * same way). Parents: the simplified ones, inside the set, the first only
 * for a first-parent bisect.
 */
static void take_candidates(struct walk *w, struct cand *c)
{
	size_t i, n = 0, m = 0;
	unsigned k;

	/* aux held commit-graph positions: now it is the output index */
	for (i = 0; i < w->nn; i++)
		w->n[i].aux = NO_POS;
	for (i = 0; i < w->nlist; i++) {
		struct wnode *x = &w->n[w->list[i]];

		if (!(x->flags & W_UNINTERESTING))
			x->aux = (uint32_t)n++;
	}
	for (i = 0; i < w->nlist; i++) {
		uint32_t x = w->list[i];

		if (w->n[x].aux == NO_POS)
			continue;
		for (k = 0; k < w->n[x].nparents; k++) {
			if (w->n[parent_of(w, x, k)].aux != NO_POS)
				m++;
			if (w->first_parent)
				break;
		}
	}
	c->n = n;
	c->m = m;
	c->ids = xmalloc(n * sizeof(*c->ids));
	c->poff = xmalloc((n + 1) * sizeof(*c->poff));
	c->par = xmalloc(m * sizeof(*c->par));
	c->treesame = xmalloc(n);
	m = 0;
	for (i = 0; i < w->nlist; i++) {
		uint32_t x = w->list[i], o = w->n[x].aux;

		if (o == NO_POS)
			continue;
		c->ids[o] = w->n[x].oid;
		c->treesame[o] = !!(w->n[x].flags & W_TREESAME);
		c->poff[o] = (uint32_t)m;
		for (k = 0; k < w->n[x].nparents; k++) {
			uint32_t p = w->n[parent_of(w, x, k)].aux;

			if (p != NO_POS)
				c->par[m++] = p;
			if (w->first_parent)
				break;
		}
	}
	c->poff[n] = (uint32_t)m;
}

static void cand_free(struct cand *c)
{
	free(c->ids);
	free(c->poff);
	free(c->par);
	free(c->treesame);
	memset(c, 0, sizeof(*c));
}

/* The kb_graph: nodes and their parent lists in one block. */
static void build_graph(const struct cand *c, struct kb_graph *g)
{
	uint32_t *par;

	g->nodes = xcalloc(1, c->n * sizeof(*g->nodes) +
			   c->m * sizeof(uint32_t));
	g->n = c->n;
	par = (uint32_t *)(g->nodes + c->n);
	if (c->m)
		memcpy(par, c->par, c->m * sizeof(*par));
	for (size_t i = 0; i < c->n; i++) {
		struct kb_node *out = &g->nodes[i];

		oid_hex(out->id, &c->ids[i]);
		out->treesame = c->treesame[i];
		out->parents = par + c->poff[i];
		out->nparents = c->poff[i + 1] - c->poff[i];
	}
}

static int good_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct pending *)a)->id,
			   &((const struct pending *)b)->id);
}

struct dated {
	git_oid id;
	int64_t when;
	size_t order;
};

static int dated_cmp(const void *a, const void *b)
{
	const struct dated *x = a, *y = b;

	if (x->when != y->when)
		return x->when > y->when ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * git bisect's check_merge_bases(): when a good commit is no ancestor of
 * bad, the merge bases of bad and the goods (newest first) must be tested
 * first; those that are good commits already are skipped. The walk has
 * met most goods as parents of candidates, which proves them ancestors;
 * only the others cost a libgit2 ancestry check (a walk of its own, with
 * every commit in libgit2's object cache).
 */
static int merge_bases(struct kvcs *v, struct walk *w,
		       const struct pending *p, size_t np,
		       char ***bases, size_t *nbases)
{
	git_oid *in = xmalloc(np * sizeof(*in));
	git_oidarray mb = { 0 };
	struct dated *d = NULL;
	struct strvec s = { 0 };
	size_t i, j, nd = 0;
	bool all = true;
	int r, ret = -1;

	for (i = 0; i < np; i++)
		in[i] = p[i].id;
	for (i = 1; i < np && all; i++) {
		if (w->n[node_get(w, &in[i])].flags & W_MET)
			continue;
		r = git_graph_descendant_of(v->repo, &in[0], &in[i]);
		if (r < 0) {
			git_fail(v, "can't compare '%s' with '%s'", p[0].name,
				 p[i].name);
			goto out;
		}
		all = r;
	}
	if (all) {
		ret = 0;
		goto out;
	}
	r = git_merge_bases_many(&mb, v->repo, np, in);
	if (r == GIT_ENOTFOUND) {
		ret = 0;	/* unrelated histories: nothing to test first */
		goto out;
	}
	if (r < 0) {
		git_fail(v, "can't find the merge bases of '%s' and the good commits",
			 p[0].name);
		goto out;
	}
	d = xcalloc(mb.count ? mb.count : 1, sizeof(*d));
	for (i = 0; i < mb.count; i++) {
		git_commit *c;

		for (j = 1; j < np; j++)
			if (git_oid_equal(&mb.ids[i], &in[j]))
				break;
		if (j < np)
			continue;
		if (git_commit_lookup(&c, v->repo, &mb.ids[i]) < 0) {
			git_fail(v, "can't read a merge base of '%s'",
				 p[0].name);
			goto out;
		}
		d[nd].id = mb.ids[i];
		d[nd].when = git_commit_time(c);
		d[nd].order = nd;
		nd++;
		git_commit_free(c);
	}
	qsort(d, nd, sizeof(*d), dated_cmp);
	for (i = 0; i < nd; i++) {
		char hex[KB_ID_LEN];

		oid_hex(hex, &d[i].id);
		strvec_push(&s, hex);
	}
	strvec_give(&s, bases, nbases);
	ret = 0;
out:
	strvec_clear(&s);
	git_oidarray_dispose(&mb);
	free(d);
	free(in);
	return ret;
}

/* The good commit that has bad among its ancestors, for the message. */
static const char *good_above(struct kvcs *v, const struct pending *p,
			      size_t np)
{
	for (size_t i = 1; i < np; i++)
		if (git_oid_equal(&p[0].id, &p[i].id) ||
		    git_graph_descendant_of(v->repo, &p[i].id, &p[0].id) > 0)
			return p[i].name;
	return "?";
}

/*
 * The candidates of "git rev-list BAD --not GOOD... [-- PATHS]", which is
 * what git bisect computes at every step: same setup (bad, then the goods
 * in id order as refs/bisect/ lists them, BOTTOM flags, limited walk),
 * same flags and parents as find_bisection() reads. One difference from
 * "git bisect start" itself: its first step runs an ancestry check walk in
 * the same process before, and the commits that walk parsed can change a
 * timing-dependent simplification (paths) or cut-off (clock skew). Later
 * steps (BISECT_ANCESTORS_OK exists) are fresh walks, like this one.
 */
int kvcs_bisect_graph(struct kvcs *v, const char *bad,
		      const char *const *goods, size_t ngoods,
		      const char *const *paths, size_t npaths,
		      bool first_parent, struct kb_graph *g,
		      char ***bases, size_t *nbases)
{
	struct cand c = { 0 };
	struct pending *p;
	struct walk w;
	size_t i, np = 1;
	int ret = -1;

	if (!v || !g || (ngoods && !goods) || (npaths && !paths))
		return bad_args(v, "kvcs_bisect_graph");
	memset(g, 0, sizeof(*g));
	if (bases)
		*bases = NULL;
	if (nbases)
		*nbases = 0;
	memset(&w, 0, sizeof(w));
	p = xcalloc(ngoods + 1, sizeof(*p));
	p[0].name = bad;
	if (resolve_oid(v, bad, &p[0].id) < 0)
		goto out;
	for (i = 0; i < ngoods; i++) {
		p[np].name = goods[i];
		p[np].flags = W_UNINTERESTING | W_BOTTOM;
		if (resolve_oid(v, goods[i], &p[np].id) < 0)
			goto out;
		np++;
	}
	/* git bisect reads refs/bisect/good-<id>: the goods in id order */
	qsort(p + 1, np - 1, sizeof(*p), good_cmp);
	for (i = 2, np = ngoods ? 2 : 1; i <= ngoods; i++)
		if (!git_oid_equal(&p[i].id, &p[np - 1].id))
			p[np++] = p[i];
	if (walk_init(&w, v, paths, npaths, first_parent) < 0 ||
	    walk_run(&w, p, np) < 0)
		goto out;
	if (!w.nlist || w.list[0] != node_get(&w, &p[0].id) ||
	    (w.n[w.list[0]].flags & W_UNINTERESTING)) {
		set_err(v, "the bad commit '%s' is an ancestor of the good commit '%s': nothing to bisect",
			bad, good_above(v, p, np));
		goto out;
	}
	if (bases && nbases && np > 1 &&
	    merge_bases(v, &w, p, np, bases, nbases) < 0)
		goto out;
	take_candidates(&w, &c);
	walk_free(&w);
	build_graph(&c, g);
	ret = 0;
out:
	cand_free(&c);
	walk_free(&w);
	free(p);
	if (ret && bases && nbases) {
		kvcs_free_paths(*bases, *nbases);
		*bases = NULL;
		*nbases = 0;
	}
	return ret;
}

/* ---- status and checkout ---- */

/*
 * The index, as last read or written, is tree's (struct kvcs); nothing is
 * known when its checksum cannot be read.
 */
static void know_index(struct kvcs *v, const git_oid *tree)
{
	const git_oid *sum = NULL;
	git_index *idx = NULL;

	v->known = false;
	if (git_repository_index(&idx, v->repo) == 0)
		sum = git_index_checksum(idx);
	if (sum && !git_oid_is_zero(sum)) {
		git_oid_cpy(&v->known_tree, tree);
		git_oid_cpy(&v->known_sum, sum);
		v->known = true;
	}
	git_index_free(idx);
}

/* idx's tree if it is still the one known (its checksum unchanged) */
static const git_oid *known_tree(struct kvcs *v, git_index *idx)
{
	const git_oid *sum = git_index_checksum(idx);

	return v->known && sum && git_oid_equal(sum, &v->known_sum) ?
		&v->known_tree : NULL;
}

/*
 * Tracked files that differ from HEAD or the index: staged, modified,
 * deleted, type changes, conflicts. Untracked files are not listed: a
 * build directory is full of them (objects, .config), and a checkout only
 * refuses those that a tracked file of the target would overwrite, which
 * kvcs_checkout() reports itself. Submodules are left out: a checkout does
 * not touch their work trees.
 */
int kvcs_dirty_files(struct kvcs *v, char ***paths, size_t *n)
{
	git_oid tree;
	git_status_options so;
	git_status_list *st = NULL;
	struct strvec s = { 0 };
	const char *last = NULL;

	if (!v || !paths || !n)
		return bad_args(v, "kvcs_dirty_files");
	*paths = NULL;
	*n = 0;
	git_error_clear();
	/* the stat data settles most runs: the status only when it does not */
	if (kvcs_stat_clean(v->repo, &tree) == 1) {
		know_index(v, &tree);
		return 0;
	}
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES |
		   GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
	if (git_status_list_new(&st, v->repo, &so) < 0)
		return git_fail(v, "can't read the status of %s", v->path);
	for (size_t i = 0; i < git_status_list_entrycount(st); i++) {
		const git_status_entry *e = git_status_byindex(st, i);
		const git_diff_delta *d = e->head_to_index ?
			e->head_to_index : e->index_to_workdir;
		const char *path;

		/* "git rm --cached" is INDEX_DELETED|WT_NEW: that one counts */
		if (!(e->status & ~(GIT_STATUS_IGNORED | GIT_STATUS_WT_NEW)) ||
		    !d)
			continue;
		path = d->new_file.path ? d->new_file.path : d->old_file.path;
		if (!path || (last && !strcmp(last, path)))
			continue;
		strvec_push(&s, path);
		last = s.v[s.n - 1];
	}
	git_status_list_free(st);
	strvec_give(&s, paths, n);
	return 0;
}

bool kvcs_synced(const struct kvcs *v)
{
	return v && v->synced;
}

static void list_files(struct sbuf *b, char **paths, size_t n)
{
	for (size_t i = 0; i < n && i < 10; i++)
		sbuf_addf(b, "%s%s", i ? ", " : "", paths[i]);
	if (n > 10)
		sbuf_addf(b, " and %zu more", n - 10);
}

/*
 * 0 when no tracked file has local changes; else 1, the error naming them
 * after doing ("" or what they stop); -1 when the status cannot be read.
 */
static int refuse_dirty(struct kvcs *v, const char *doing)
{
	char **dirty = NULL;
	size_t n = 0;
	struct sbuf b;

	if (kvcs_dirty_files(v, &dirty, &n) < 0)
		return -1;
	if (n) {
		sbuf_init(&b);
		list_files(&b, dirty, n);
		set_err(v, "%s%s has local changes to %zu file%s: %s", doing,
			v->path, n, n == 1 ? "" : "s", sbuf_str(&b));
		sbuf_free(&b);
	}
	kvcs_free_paths(dirty, n);
	return n ? 1 : 0;
}

/*
 * A work tree found clean is as its index: the next checkout may then
 * write only the files where the index and its commit differ (about 50 ms
 * in a kernel tree) instead of comparing every file again (0.5 s).
 */
int kvcs_check_clean(struct kvcs *v)
{
	int ret = refuse_dirty(v, "");

	if (ret == 0)
		v->synced = true;
	return ret;
}

/* Neither in the index nor ignored: a file of the user's. */
static bool untracked(struct kvcs *v, git_index *idx, const char *path)
{
	int ignored = 0;

	if (git_index_get_bypath(idx, path, 0))
		return false;
	return git_ignore_path_is_ignored(&ignored, v->repo, path) < 0 ||
	       !ignored;
}

/* Does the index track files under the directory path? */
static bool tracked_dir(git_index *idx, const char *path)
{
	char *prefix = xasprintf("%s/", path);
	size_t pos;
	bool ret = git_index_find_prefix(&pos, idx, prefix) == 0;

	free(prefix);
	return ret;
}

/*
 * What a forced checkout of path (in the target, not in the index) would
 * overwrite or remove: an untracked directory there, or an untracked file
 * that is not already the target's blob (what a checkout killed half-way wrote is), or
 * an untracked file where the path needs a directory. "git checkout"
 * refuses these; libgit2's forced checkout would lose them.
 */
static void in_the_way(struct kvcs *v, git_index *idx, const char *path,
		       const git_oid *id, struct strvec *in_way)
{
	const char *wd = git_repository_workdir(v->repo);
	char *full = xasprintf("%s%s", wd ? wd : "", path);
	size_t root = strlen(full) - strlen(path);
	struct stat st;
	char *slash;

	if (!lstat(full, &st)) {
		/* a tracked directory that becomes a file is a change */
		if (S_ISDIR(st.st_mode) ? !tracked_dir(idx, path) :
		    !kvcs_is_blob(full, &st, id))
			if (untracked(v, idx, path))
				strvec_push(in_way, path);
	} else if (errno == ENOTDIR) {
		/* the first component that is not a directory */
		for (slash = strchr(full + root, '/'); slash;
		     slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			if (!lstat(full, &st) && !S_ISDIR(st.st_mode)) {
				if (untracked(v, idx, full + root))
					strvec_push(in_way, full + root);
				break;
			}
			*slash = '/';
		}
	}
	free(full);
}

/*
 * In paths (when not NULL), where the index and tree differ (both sides of
 * each change); in in_way (when not NULL), the untracked files a forced
 * checkout of the tree would lose.
 */
/* what index_changes() gathers */
struct changes {
	struct kvcs *v;
	git_index *idx;
	struct strvec *paths, *in_way;
	struct sbuf path;	/* the entry's, while the trees are walked */
};

/*
 * path differs; comes is its id when only the commit has it (what a
 * checkout brings, and what an untracked file may be in the way of)
 */
static void changed(struct changes *ch, const char *path, const git_oid *comes)
{
	if (ch->paths)
		strvec_push(ch->paths, path);
	if (comes && ch->in_way)
		in_the_way(ch->v, ch->idx, path, comes, ch->in_way);
}

static int walk_trees(struct changes *ch, const git_tree *to,
		      const git_tree *was);

/* an entry of one tree only: itself, or every file under it */
static int one_side(struct changes *ch, const git_tree_entry *e, bool in_to)
{
	git_tree *sub = NULL;
	int ret;

	if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
		changed(ch, sbuf_str(&ch->path),
			in_to ? git_tree_entry_id(e) : NULL);
		return 0;
	}
	if (git_tree_lookup(&sub, ch->v->repo, git_tree_entry_id(e)) < 0)
		return -1;
	sbuf_addc(&ch->path, '/');
	ret = in_to ? walk_trees(ch, sub, NULL) : walk_trees(ch, NULL, sub);
	git_tree_free(sub);
	return ret;
}

/* an entry of both trees (same name, same kind), not the same object */
static int both_sides(struct changes *ch, const git_tree_entry *a,
		      const git_tree_entry *b)
{
	git_tree *ta = NULL, *tb = NULL;
	int ret = -1;

	if (git_tree_entry_type(a) != GIT_OBJECT_TREE) {
		changed(ch, sbuf_str(&ch->path), NULL);
		return 0;
	}
	sbuf_addc(&ch->path, '/');
	if (git_tree_lookup(&ta, ch->v->repo, git_tree_entry_id(a)) == 0 &&
	    git_tree_lookup(&tb, ch->v->repo, git_tree_entry_id(b)) == 0)
		ret = walk_trees(ch, ta, tb);
	git_tree_free(ta);
	git_tree_free(tb);
	return ret;
}

/*
 * The files where trees to (the commit's) and was (the index's) differ,
 * in git's order, as a diff of the two lists them; a subtree that both
 * have as the same object is not read. Either tree may be NULL (empty).
 */
static int walk_trees(struct changes *ch, const git_tree *to,
		      const git_tree *was)
{
	size_t na = to ? git_tree_entrycount(to) : 0;
	size_t nb = was ? git_tree_entrycount(was) : 0;
	size_t i = 0, j = 0, len = ch->path.len;
	int ret = 0;

	while (!ret && (i < na || j < nb)) {
		const git_tree_entry *a = i < na ? git_tree_entry_byindex(to, i) : NULL;
		const git_tree_entry *b = j < nb ? git_tree_entry_byindex(was, j) : NULL;
		int cmp = !a ? 1 : !b ? -1 : git_tree_entry_cmp(a, b);
		const git_tree_entry *e = cmp > 0 ? b : a;

		sbuf_adds(&ch->path, git_tree_entry_name(e));
		if (cmp < 0) {
			ret = one_side(ch, a, true);
			i++;
		} else if (cmp > 0) {
			ret = one_side(ch, b, false);
			j++;
		} else {
			if (!git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)) ||
			    git_tree_entry_filemode(a) != git_tree_entry_filemode(b))
				ret = both_sides(ch, a, b);
			i++;
			j++;
		}
		/* back to this tree's own path */
		ch->path.len = len;
		ch->path.buf[len] = '\0';
	}
	return ret;
}

/* the paths where trees to and was (either may be NULL) differ, sorted */
static int tree_paths(struct kvcs *v, const git_tree *to, const git_tree *was,
		      struct strvec *paths)
{
	struct changes ch = { .v = v, .paths = paths };
	int ret;

	sbuf_init(&ch.path);
	ret = walk_trees(&ch, to, was);
	sbuf_free(&ch.path);
	return ret;
}

static int index_changes(struct kvcs *v, git_tree *tree, git_index *idx,
			 const git_oid *known, struct strvec *paths,
			 struct strvec *in_way)
{
	git_diff *diff = NULL;

	/*
	 * The index is the known tree: the subtrees where it and the
	 * commit differ tell (a few objects), where the index against the
	 * commit reads all of the commit's trees (0.1 s in a kernel tree).
	 * Else, or when a tree cannot be read, the index itself.
	 */
	if (known) {
		struct changes ch = { .v = v, .idx = idx, .paths = paths,
				       .in_way = in_way };
		git_tree *was = NULL;
		int ret = -1;

		sbuf_init(&ch.path);
		if (git_tree_lookup(&was, v->repo, known) == 0)
			ret = walk_trees(&ch, tree, was);
		git_tree_free(was);
		sbuf_free(&ch.path);
		if (ret == 0)
			return 0;
		if (paths)
			strvec_clear(paths);
		if (in_way)
			strvec_clear(in_way);
		git_error_clear();
	}
	if (git_diff_tree_to_index(&diff, v->repo, tree, idx, NULL) < 0)
		return git_fail(v, "can't compare the index of %s with a commit",
				v->path);
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		/* from the tree to the index: "deleted" is what comes */
		if (in_way && d->status == GIT_DELTA_DELETED &&
		    d->old_file.path)
			in_the_way(v, idx, d->old_file.path, &d->old_file.id,
				   in_way);
		if (!paths)
			continue;
		if (d->old_file.path)
			strvec_push(paths, d->old_file.path);
		if (d->new_file.path && (!d->old_file.path ||
		    strcmp(d->new_file.path, d->old_file.path)))
			strvec_push(paths, d->new_file.path);
	}
	git_diff_free(diff);
	return 0;
}

/* 0, or -1 naming the untracked files a forced checkout of id would lose. */
static int refuse_in_way(struct kvcs *v, const char *id, struct strvec *in_way)
{
	struct sbuf b;

	if (!in_way->n)
		return 0;
	sbuf_init(&b);
	list_files(&b, in_way->v, in_way->n);
	set_err(v, "can't check out '%s' in %s: it would overwrite untracked files: %s (move them away, then run ktest again)",
		id, v->path, sbuf_str(&b));
	sbuf_free(&b);
	return -1;
}

/* 0, or -1 when a forced checkout of c would lose untracked files. */
static int refuse_untracked(struct kvcs *v, git_commit *c, git_index *idx,
			    const char *id)
{
	struct strvec in_way = { 0 };
	git_tree *tree = NULL;
	int ret = -1;

	if (git_index_read(idx, false) < 0 || git_commit_tree(&tree, c) < 0)
		git_fail(v, "can't read '%s' or the index of %s", id, v->path);
	else if (!index_changes(v, tree, idx, NULL, NULL, &in_way))
		ret = refuse_in_way(v, id, &in_way);
	strvec_clear(&in_way);
	git_tree_free(tree);
	return ret;
}

/* ---- a checkout that did not finish ---- */

/*
 * A checkout writes the index under its lock (index.lock), then HEAD
 * under HEAD.lock. Killed then (SIGKILL, the OOM killer), ktest leaves
 * them, and every later checkout there fails ("the index is locked"). So
 * each checkout is bracketed by an empty note in the git directory,
 * "ktest-checkout-PID-START-BOOTID" (leftover.h's name of the process).
 * A note whose process is gone marks a checkout that did not finish: the
 * locks not older than the note are that checkout's, and go before the
 * next checkout there; unless a process that runs has a note too (a
 * checkout of its own: the locks may be its, and it ends by itself).
 */
#define CO_NOTE "ktest-checkout-"

static const char *const co_locks[] = { "index.lock", "HEAD.lock" };

struct co_notes {
	bool live;
	bool dead;
	struct timespec oldest;		/* of the dead ones */
	long pid;			/* of a dead one */
	long live_pid;			/* of a live one */
};

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The notes in gitdir, but self's (a kleft_self() name; "": none). */
static void read_co_notes(const char *gitdir, const char *self,
			  struct co_notes *n)
{
	DIR *d = opendir(gitdir);
	struct dirent *e;

	memset(n, 0, sizeof(*n));
	while (d && (e = readdir(d))) {
		const char *name;
		struct stat st;
		int runs;

		if (strncmp(e->d_name, CO_NOTE, strlen(CO_NOTE)))
			continue;
		name = e->d_name + strlen(CO_NOTE);
		if (!strcmp(name, self))
			continue;
		runs = kleft_process_runs(name);
		if (runs > 0) {
			n->live = true;
			n->live_pid = strtol(name, NULL, 10);
		} else if (runs == 0 && !fstatat(dirfd(d), e->d_name, &st, 0)) {
			if (!n->dead || ts_before(&st.st_mtim, &n->oldest))
				n->oldest = st.st_mtim;
			n->dead = true;
			n->pid = strtol(name, NULL, 10);
		}
	}
	if (d)
		closedir(d);
}

/* The dead notes and the locks their checkouts left, gone; said in note. */
static void mend_checkout(struct kvcs *v, const char *gitdir,
			  const struct co_notes *n)
{
	DIR *d = opendir(gitdir);
	struct dirent *e;
	struct sbuf b;

	sbuf_init(&b);
	for (size_t i = 0; i < sizeof(co_locks) / sizeof(co_locks[0]); i++) {
		char *path = xasprintf("%s%s", gitdir, co_locks[i]);
		struct stat st;

		if (!lstat(path, &st) && !ts_before(&st.st_mtim, &n->oldest) &&
		    !unlink(path))
			sbuf_addf(&b, "%s%s", b.len ? " and " : "", co_locks[i]);
		free(path);
	}
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, CO_NOTE, strlen(CO_NOTE)) &&
		    !kleft_process_runs(e->d_name + strlen(CO_NOTE)))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	if (b.len)
		snprintf(v->note, sizeof(v->note),
			 "removed %s left in %s by a checkout of ktest (pid %ld) that did not finish (killed)",
			 sbuf_str(&b), gitdir, n->pid);
	sbuf_free(&b);
}

/*
 * Our note dir/prefix<self> holding text (may be empty): its path in
 * mine, "" when it could not be made (what it notes goes on without it).
 */
static void note_make(const char *dir, const char *prefix, const char *self,
		      const char *text, char *mine, size_t len)
{
	size_t n = strlen(text);
	int fd;

	mine[0] = '\0';
	if (!self[0])
		return;
	snprintf(mine, len, "%s%s%s", dir, prefix, self);
	fd = open(mine, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && (!n || write(fd, text, n) == (ssize_t)n)) {
		close(fd);
		return;
	}
	if (fd >= 0) {
		close(fd);
		unlink(mine);
	}
	mine[0] = '\0';
}

/*
 * Before a checkout: what a dead one left is mended, and this one noted
 * (its path in mine, "" when it could not be made: the checkout goes on).
 */
static void checkout_begin(struct kvcs *v, char *mine, size_t len)
{
	const char *gitdir = git_repository_path(v->repo);
	char self[KLEFT_NAME_MAX];
	struct co_notes n;

	mine[0] = '\0';
	if (!gitdir)
		return;
	kleft_self(self);
	read_co_notes(gitdir, self, &n);
	if (n.dead && !n.live)
		mend_checkout(v, gitdir, &n);
	note_make(gitdir, CO_NOTE, self, "", mine, len);
}

/* A note of ours (checkout_begin's, adding_begin's) goes. */
static void drop_note(const char *mine)
{
	if (mine[0])
		unlink(mine);
}

/*
 * After a checkout failed: a lock that is still there is named, and what
 * to do (a git command or an older ktest killed in a checkout leaves one
 * without a note).
 */
static void lock_hint(struct kvcs *v)
{
	const char *gitdir = git_repository_path(v->repo);
	char self[KLEFT_NAME_MAX];
	size_t n = strlen(v->err);
	struct co_notes cn;

	if (!gitdir)
		return;
	kleft_self(self);
	read_co_notes(gitdir, self, &cn);
	for (size_t i = 0; i < sizeof(co_locks) / sizeof(co_locks[0]); i++) {
		char *path = xasprintf("%s%s", gitdir, co_locks[i]);
		bool there = !access(path, F_OK);

		if (there && cn.live && n < sizeof(v->err))
			snprintf(v->err + n, sizeof(v->err) - n,
				 " (%s is there: ktest (pid %ld) is checking out in %s now: wait for it to end, or give this run a BUILD_DIR of its own)",
				 path, cn.live_pid, v->path);
		else if (there && n < sizeof(v->err))
			snprintf(v->err + n, sizeof(v->err) - n,
				 " (%s is there: if no git command runs in %s, one was killed there; remove the file)",
				 path, v->path);
		free(path);
		if (there)
			break;	/* one is enough */
	}
}

const char *kvcs_note(struct kvcs *v)
{
	if (!v || !v->note[0])
		return NULL;
	memcpy(v->shown, v->note, sizeof(v->shown));
	v->note[0] = '\0';
	return v->shown;
}

struct conflicts {
	struct strvec paths;
};

static int note_conflict(git_checkout_notify_t why, const char *path,
			 const git_diff_file *baseline,
			 const git_diff_file *target,
			 const git_diff_file *workdir, void *payload)
{
	struct conflicts *c = payload;

	if (path)
		strvec_push(&c->paths, path);
	return 0;
}

int kvcs_checkout(struct kvcs *v, const char *id, bool force)
{
	git_checkout_options co;
	struct conflicts cf = { { 0 } };
	char mine[4096] = "";
	git_index *idx = NULL;
	struct sbuf b;
	git_commit *c;
	int ret = -1;

	if (!v)
		return bad_args(v, "kvcs_checkout");
	if (lookup_commit(v, id, &c) < 0)
		return -1;
	sbuf_init(&b);
	if (!force) {
		char *doing = xasprintf("can't check out '%s' (it would lose them): ", id);
		int dirty = refuse_dirty(v, doing);

		free(doing);
		if (dirty)
			goto out;
	}
	/*
	 * Files already as in the target are not written, so they keep
	 * their mtime and kbuild stays incremental. SAFE (nothing is dirty
	 * now) still refuses to clobber an untracked file that the target
	 * tracks; FORCE overwrites changes to tracked files, as "git
	 * checkout -f" does, but refuse_untracked() stops it first where it
	 * would lose an untracked file (what "git checkout -f" overwrites).
	 *
	 * libgit2 compares the target with HEAD's tree by default and then
	 * leaves alone what the two share, in the index too: a file that
	 * was "git rm --cached" stayed out of the index after a forced
	 * checkout. Compared with the index, a forced checkout ends like
	 * "git checkout -f": index and tracked files as in the target.
	 */
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = force ? GIT_CHECKOUT_FORCE : GIT_CHECKOUT_SAFE;
	if (force) {
		if (git_repository_index(&idx, v->repo) < 0) {
			git_fail(v, "can't read the index of %s", v->path);
			goto out;
		}
		co.baseline_index = idx;
		if (refuse_untracked(v, c, idx, id) < 0)
			goto out;
	}
	co.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
	co.notify_cb = note_conflict;
	co.notify_payload = &cf;
	checkout_begin(v, mine, sizeof(mine));
	if (git_checkout_tree(v->repo, (git_object *)c, &co) < 0) {
		if (cf.paths.n) {
			list_files(&b, cf.paths.v, cf.paths.n);
			set_err(v, "can't check out '%s' in %s: it would overwrite untracked files: %s",
				id, v->path, sbuf_str(&b));
		} else {
			git_fail(v, "can't check out '%s' in %s", id, v->path);
			lock_hint(v);
		}
		goto out;
	}
	/* checkout writes files and index; HEAD is ours to move */
	if (git_repository_set_head_detached(v->repo, git_commit_id(c)) < 0) {
		git_fail(v, "checked out '%s' but can't detach HEAD at it", id);
		lock_hint(v);
		goto out;
	}
	v->synced = true;
	ret = 0;
out:
	drop_note(mine);
	git_index_free(idx);
	strvec_clear(&cf.paths);
	sbuf_free(&b);
	git_commit_free(c);
	return ret;
}

int kvcs_checkout_changed(struct kvcs *v, const char *id)
{
	struct strvec paths = { 0 }, in_way = { 0 };
	git_checkout_options co;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	char mine[4096] = "";
	git_commit *c;
	int ret = -1;

	if (!v)
		return bad_args(v, "kvcs_checkout_changed");
	if (lookup_commit(v, id, &c) < 0)
		return -1;
	/* as on disk: another handle (a speculative build) may have moved it */
	if (git_repository_index(&idx, v->repo) < 0 ||
	    git_index_read(idx, false) < 0 || git_commit_tree(&tree, c) < 0) {
		git_fail(v, "can't read '%s' or the index of %s", id, v->path);
		goto out;
	}
	if (index_changes(v, tree, idx, known_tree(v, idx), &paths,
			  &in_way) < 0 ||
	    refuse_in_way(v, id, &in_way) < 0)
		goto out;
	v->known = false;
	checkout_begin(v, mine, sizeof(mine));
	/* no paths would mean every path to libgit2 */
	if (paths.n) {
		git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
		co.checkout_strategy = GIT_CHECKOUT_FORCE |
				       GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
		co.baseline_index = idx;
		co.paths.strings = paths.v;
		co.paths.count = paths.n;
		if (git_checkout_tree(v->repo, (git_object *)c, &co) < 0) {
			git_fail(v, "can't check out '%s' in %s", id, v->path);
			lock_hint(v);
			goto out;
		}
	}
	if (git_repository_set_head_detached(v->repo, git_commit_id(c)) < 0) {
		git_fail(v, "checked out '%s' but can't detach HEAD at it", id);
		lock_hint(v);
		goto out;
	}
	/* every entry that differed was checked out: the index is tree's */
	know_index(v, git_tree_id(tree));
	ret = 0;
out:
	drop_note(mine);
	strvec_clear(&in_way);
	strvec_clear(&paths);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(c);
	return ret;
}

int kvcs_checkout_again(struct kvcs *v, const char *id)
{
	if (v && v->synced)
		return kvcs_checkout_changed(v, id);
	return kvcs_checkout(v, id, true);
}

/*
 * 0, or -1 naming the untracked files that a forced checkout of the index
 * to (a revert's) would lose: what it brings that the index lacks.
 */
static int refuse_untracked_index(struct kvcs *v, git_index *to,
				  const char *what)
{
	struct strvec in_way = { 0 };
	git_index *idx = NULL;
	git_diff *diff = NULL;
	int ret = -1;

	if (git_repository_index(&idx, v->repo) < 0 ||
	    git_index_read(idx, false) < 0 ||
	    git_diff_index_to_index(&diff, v->repo, idx, to, NULL) < 0) {
		git_fail(v, "can't compare the index of %s with %s", v->path,
			 what);
		goto out;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (d->status == GIT_DELTA_ADDED && d->new_file.path)
			in_the_way(v, idx, d->new_file.path, &d->new_file.id,
				   &in_way);
	}
	ret = refuse_in_way(v, what, &in_way);
out:
	strvec_clear(&in_way);
	git_diff_free(diff);
	git_index_free(idx);
	return ret;
}

int kvcs_checkout_revert(struct kvcs *v, const char *onto, const char *revert,
			 bool *conflicts)
{
	git_checkout_options co;
	git_commit *r = NULL, *o = NULL;
	git_index *idx = NULL;
	char mine[4096] = "";
	char *what = NULL;
	int ret = -1;

	*conflicts = false;
	if (!v)
		return bad_args(v, "kvcs_checkout_revert");
	if (kvcs_checkout(v, onto, true))
		return -1;
	if (lookup_commit(v, revert, &r) < 0 || lookup_commit(v, onto, &o) < 0)
		goto out;
	/* the first parent is the mainline of a merge, as "git revert -m 1" */
	if (git_revert_commit(&idx, v->repo, r, o,
			      git_commit_parentcount(r) > 1 ? 1 : 0, NULL) < 0) {
		git_fail(v, "can't revert %s on %s", revert, onto);
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		*conflicts = true;
		set_err(v, "reverting %.12s on %.12s conflicts", revert, onto);
		goto out;
	}
	what = xasprintf("%s reverted on %s", revert, onto);
	if (refuse_untracked_index(v, idx, what) < 0)
		goto out;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	checkout_begin(v, mine, sizeof(mine));
	if (git_checkout_index(v->repo, idx, &co) < 0) {
		git_fail(v, "can't check out %s reverted on %s in %s", revert,
			 onto, v->path);
		lock_hint(v);
		goto out;
	}
	ret = 0;
out:
	drop_note(mine);
	free(what);
	git_index_free(idx);
	git_commit_free(r);
	git_commit_free(o);
	return ret;
}

/* ---- worktrees ---- */

static bool valid_wt_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..") && name[0] != '-';
}

/* Our branch if it is left over and nobody has it checked out. */
static void drop_wt_branch(struct kvcs *v, const char *name)
{
	git_reference *ref = NULL;
	char *bname = xasprintf(WT_BRANCH_PREFIX "%s", name);

	if (git_branch_lookup(&ref, v->repo, bname, GIT_BRANCH_LOCAL) == 0 &&
	    git_branch_is_checked_out(ref) == 0)
		git_reference_delete(ref);
	git_reference_free(ref);
	free(bname);
	git_error_clear();
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int rm_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* "git worktree add" accepts an empty directory; git_worktree_add does not. */
static int clear_target(struct kvcs *v, const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		set_err(v, "can't add a worktree at %s: it exists", path);
		return -1;
	}
	d = opendir(path);
	if (!d) {
		set_err(v, "can't add a worktree at %s: %s", path,
			strerror(errno));
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty) {
		set_err(v, "can't add a worktree at %s: the directory is not empty",
			path);
		return -1;
	}
	if (rmdir(path) < 0) {
		set_err(v, "can't add a worktree at %s: %s", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * .git/worktrees/<name> that git_worktree_lookup() can't open: what a
 * git_worktree_add() that failed halfway leaves (libgit2 does not clean
 * up), and it would make every later add of that name fail.
 */
static void drop_half_made(struct kvcs *v, const char *name)
{
	char *gd = xasprintf("%sworktrees/%s",
			     git_repository_commondir(v->repo), name);
	git_worktree *wt = NULL;
	struct stat st;

	if (git_worktree_lookup(&wt, v->repo, name) < 0 &&
	    lstat(gd, &st) == 0 && S_ISDIR(st.st_mode))
		rm_tree(gd);
	git_worktree_free(wt);
	git_error_clear();
	free(gd);
}

/* A worktree of that name whose directory is gone: prune its records. */
static int prune_stale(struct kvcs *v, const char *name)
{
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_worktree *wt = NULL;
	int ret = 0;

	drop_half_made(v, name);
	if (git_worktree_lookup(&wt, v->repo, name) < 0) {
		git_error_clear();
		return 0;
	}
	if (git_worktree_validate(wt) == 0) {
		set_err(v, "worktree '%s' already exists at %s", name,
			git_worktree_path(wt));
		ret = -1;
	} else if (git_worktree_prune(wt, &po) < 0) {
		ret = git_fail(v, "can't prune the stale worktree '%s'", name);
	}
	git_worktree_free(wt);
	return ret;
}

/*
 * An add that did not finish (ktest killed while it checked a whole tree
 * out: 37 s on the kernel) leaves a work tree with files but no index:
 * a later checkout there takes them for untracked files in its way, and
 * the box fails. So an add is noted in the repository's git directory
 * while it runs, "ktest-adding-PID-START-BOOTID" holding the work tree's
 * path, and kvcs_worktree_reclaim() removes the tree of a dead note.
 */
#define ADD_NOTE "ktest-adding-"

static void adding_begin(struct kvcs *v, const char *path, char *mine,
			 size_t len)
{
	char self[KLEFT_NAME_MAX];

	kleft_self(self);
	note_make(git_repository_commondir(v->repo), ADD_NOTE, self, path,
		  mine, len);
}

/*
 * Was the work tree at path being added by a process that is gone? Its
 * note's path in note (for the caller to drop once the tree is gone);
 * the dead notes of paths that are gone go.
 */
static bool half_added(struct kvcs *v, const char *path, char *note,
		       size_t len)
{
	const char *gitdir = git_repository_commondir(v->repo);
	DIR *d = opendir(gitdir);
	bool found = false;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char buf[4096];
		ssize_t n = -1;
		int fd;

		if (strncmp(e->d_name, ADD_NOTE, strlen(ADD_NOTE)) ||
		    kleft_process_runs(e->d_name + strlen(ADD_NOTE)) != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (n < 0)
			continue;
		buf[n] = '\0';
		if (!strcmp(buf, path)) {
			snprintf(note, len, "%s%s", gitdir, e->d_name);
			found = true;
		} else if (access(buf, F_OK) != 0) {
			unlinkat(dirfd(d), e->d_name, 0);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * git_worktree_add() has no detached mode: it checks out a branch, its
 * own (named after the worktree, at HEAD) unless given one. So we hand it
 * our own branch at id, which gets the right files checked out in one
 * go, then detach the worktree's HEAD at id and delete the branch, so
 * that no branch is left behind or held checked out.
 */
int kvcs_worktree_add(struct kvcs *v, const char *name, const char *path,
		      const char *id)
{
	git_worktree_add_options wo;
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_reference *branch = NULL;
	git_repository *wrepo = NULL;
	git_worktree *wt = NULL;
	git_commit *c = NULL;
	char *bname = NULL;
	char mine[4096] = "";
	int ret = -1;

	if (!v || !path || !*path)
		return bad_args(v, "kvcs_worktree_add");
	if (!valid_wt_name(name)) {
		set_err(v, "bad worktree name '%s'", name ? name : "(null)");
		return -1;
	}
	if (lookup_commit(v, id, &c) < 0)
		return -1;
	if (prune_stale(v, name) < 0 || clear_target(v, path) < 0)
		goto out;
	bname = xasprintf(WT_BRANCH_PREFIX "%s", name);
	if (git_branch_create(&branch, v->repo, bname, c, 1) < 0) {
		git_fail(v, "can't create branch %s for worktree '%s'", bname,
			 name);
		goto out;
	}
	git_worktree_add_options_init(&wo, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	wo.ref = branch;
	wo.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
	adding_begin(v, path, mine, sizeof(mine));
	if (git_worktree_add(&wt, v->repo, name, path, &wo) < 0) {
		git_fail(v, "can't add worktree '%s' at %s", name, path);
		/* it may have got halfway: records, directory, checkout */
		if (git_worktree_lookup(&wt, v->repo, name) == 0) {
			po.flags = GIT_WORKTREE_PRUNE_VALID |
				   GIT_WORKTREE_PRUNE_WORKING_TREE;
			git_worktree_prune(wt, &po);
		}
		drop_half_made(v, name);
		goto out;
	}
	if (git_repository_open_from_worktree(&wrepo, wt) < 0 ||
	    git_repository_set_head_detached(wrepo, git_commit_id(c)) < 0) {
		git_fail(v, "can't detach the HEAD of worktree '%s' at '%s'",
			 name, id);
		po.flags = GIT_WORKTREE_PRUNE_VALID |
			   GIT_WORKTREE_PRUNE_WORKING_TREE;
		git_worktree_prune(wt, &po);
		goto out;
	}
	ret = 0;
out:
	drop_note(mine);
	/*
	 * Not git_branch_delete(): our branch has no config section, and
	 * dropping one runs libgit2 1.5's regex matcher, which leaks its
	 * match data on every miss.
	 */
	if (branch) {
		git_reference_delete(branch);
		git_reference_free(branch);
	}
	git_repository_free(wrepo);
	git_worktree_free(wt);
	git_commit_free(c);
	free(bname);
	return ret;
}

int kvcs_worktree_reclaim(struct kvcs *v, const char *path)
{
	char *git, *mine = NULL, *theirs = NULL, note[4096] = "";
	git_repository *w = NULL;
	int ret = 0;
	bool half;

	if (!v || !path || !*path)
		return bad_args(v, "kvcs_worktree_reclaim");
	half = half_added(v, path, note, sizeof(note));
	git = xasprintf("%s/.git", path);
	if (access(git, F_OK) != 0)
		goto out;
	mine = realpath(git_repository_commondir(v->repo), NULL);
	if (git_repository_open(&w, path) == 0)
		theirs = realpath(git_repository_commondir(w), NULL);
	git_error_clear();
	if (!mine || (theirs && !strcmp(mine, theirs) && !half))
		goto out;
	half = half && theirs && !strcmp(mine, theirs);
	if (rm_tree(path)) {
		if (half)
			set_err(v, "can't remove %s, a work tree left half made (ktest was killed while it added it): %s",
				path, strerror(errno));
		else
			set_err(v, "can't remove %s, a work tree of %s: %s",
				path, theirs ? theirs : "a repository that is gone",
				strerror(errno));
		ret = -1;
		goto out;
	}
	ret = half ? KVCS_RECLAIMED_HALF : KVCS_RECLAIMED_OTHER;
out:
	/* a dead add's note goes with its tree (it stays if that stays) */
	if (note[0] && access(git, F_OK) != 0)
		unlink(note);
	git_repository_free(w);
	free(git);
	free(mine);
	free(theirs);
	return ret;
}

char *kvcs_worktree_name(const char *base, const char *path)
{
	unsigned int h = 2166136261u;	/* FNV-1a, 32 bits */

	for (const char *s = path; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return xasprintf("%s-%08x", base, h);
}

int kvcs_worktree_remove(struct kvcs *v, const char *name)
{
	git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
	git_worktree *wt = NULL;
	struct stat st;
	char *path;
	int ret = -1;

	if (!v)
		return bad_args(v, "kvcs_worktree_remove");
	if (!valid_wt_name(name)) {
		set_err(v, "bad worktree name '%s'", name ? name : "(null)");
		return -1;
	}
	git_error_clear();
	if (git_worktree_lookup(&wt, v->repo, name) < 0)
		return git_fail(v, "no worktree '%s' in %s", name, v->path);
	path = xstrdup(git_worktree_path(wt));
	/* valid or not (its directory may be gone), never a locked one */
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE;
	if (git_worktree_prune(wt, &po) < 0) {
		git_fail(v, "can't remove worktree '%s' at %s", name, path);
		goto out;
	}
	/* prune leaves the directory when its .git file was gone */
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && rm_tree(path)) {
		set_err(v, "pruned worktree '%s' but can't remove %s: %s",
			name, path, strerror(errno));
		goto out;
	}
	drop_wt_branch(v, name);
	ret = 0;
out:
	free(path);
	git_worktree_free(wt);
	return ret;
}
