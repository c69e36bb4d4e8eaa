// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patchcheck state machine and the build-log warning matcher.
 *
 * The machine is a cursor over the series: it hands out one step per commit,
 * oldest first, and takes the outcome back. Everything it needs to decide a
 * step (skip, ignore, clean) is worked out once in kpatchcheck_new(), so it
 * borrows nothing from the caller after that.
 *
 * The warning functions reimplement ktest.pl's check_build_re,
 * process_warning_line and check_patch_buildlog by hand: they must stay in
 * the pure link (no PCRE2), and the one regex is simple enough. Where
 * ktest.pl matched a touched file only by its exact name, the paths of an
 * O= build are brought back to the tree first; and kp_seen remembers what
 * each file warned about before, which ktest.pl did not, so that a commit
 * touching an old offender is not blamed for it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/patchcheck.h"

struct kp_commit {
	char *id;
	bool ignored;		/* in IGNORE_WARNINGS */
};

struct kpatchcheck {
	struct kp_commit *series;	/* the commits to check, oldest first */
	size_t n;
	char **skipped;		/* PATCHCHECK_SKIP hits, in series order */
	size_t nskipped;
	struct kp_failure *failures;
	size_t nfailures;
	enum kp_type type;
	bool noclean;
	bool stop_at_first;
	bool warnings_file;
	size_t cur;		/* the commit the next step is for */
	bool in_flight;		/* series[cur] handed out, not yet reported */
};

/* ---- commit ids ---- */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/*
 * git takes an abbreviated id from 4 hex digits on; anything shorter (or
 * not hex) would match far too much, so it matches nothing at all.
 */
static bool id_abbrev_ok(const char *s)
{
	size_t len = 0;

	for (; s[len]; len++)
		if (!is_hex(s[len]))
			return false;
	return len >= 4 && len < KB_ID_LEN;
}

/*
 * Is abbrev (full or abbreviated) a name for id? Case does not matter:
 * people copy ids from mail and web pages in either case. ktest.pl only
 * matched the full id, exactly.
 */
static bool id_matches(const char *id, const char *abbrev)
{
	size_t i;

	if (!abbrev || !id_abbrev_ok(abbrev))
		return false;
	for (i = 0; abbrev[i]; i++) {
		if (!id[i])
			return false;
		if ((id[i] | 0x20) != (abbrev[i] | 0x20))
			return false;
	}
	return true;
}

static bool id_in(const char *id, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; list && i < n; i++)
		if (id_matches(id, list[i]))
			return true;
	return false;
}

bool kp_ignored(const struct kp_options *o, const char *id)
{
	if (!o || !id)
		return false;
	return id_in(id, o->ignore_warnings, o->nignore);
}

/* ---- the state machine ---- */

struct kpatchcheck *kpatchcheck_new(const char *const *ids, size_t n,
				    const struct kp_options *o)
{
	static const struct kp_options defaults = { .type = KP_BUILD };
	struct kpatchcheck *p;
	size_t i;

	if (n && !ids)
		return NULL;
	for (i = 0; i < n; i++)
		if (!ids[i])
			return NULL;
	if (!o)
		o = &defaults;

	p = xcalloc(1, sizeof(*p));
	p->type = o->type;
	p->noclean = o->noclean;
	p->stop_at_first = o->stop_at_first;
	p->warnings_file = o->warnings_file;
	p->series = xcalloc(n ? n : 1, sizeof(*p->series));
	p->skipped = xcalloc(n ? n : 1, sizeof(*p->skipped));

	for (i = 0; i < n; i++) {
		if (id_in(ids[i], o->skip, o->nskip)) {
			p->skipped[p->nskipped++] = xstrdup(ids[i]);
			continue;
		}
		p->series[p->n].id = xstrdup(ids[i]);
		p->series[p->n].ignored = kp_ignored(o, ids[i]);
		p->n++;
	}
	return p;
}

void kpatchcheck_free(struct kpatchcheck *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->series[i].id);
	for (i = 0; i < p->nskipped; i++)
		free(p->skipped[i]);
	for (i = 0; i < p->nfailures; i++)
		free(p->failures[i].why);
	free(p->series);
	free(p->skipped);
	free(p->failures);
	free(p);
}

static bool is_done(const struct kpatchcheck *p)
{
	if (p->stop_at_first && p->nfailures)
		return true;
	return p->cur >= p->n;
}

/*
 * ktest.pl's rule: only the first and the last commit build from a clean
 * tree (if BUILD_NOCLEAN allows it at all); the ones in between build on
 * top of the previous build, which is what makes a long series bearable.
 * First and last are of the commits actually built, so a skipped first
 * commit moves the clean build to the next one.
 */
static bool wants_clean(const struct kpatchcheck *p, size_t i)
{
	if (p->noclean)
		return false;
	return i == 0 || i == p->n - 1;
}

void kpatchcheck_next(struct kpatchcheck *p, struct kp_step *step)
{
	const struct kp_commit *c;

	memset(step, 0, sizeof(*step));
	if (is_done(p)) {
		step->done = true;
		step->index = p->cur;
		return;
	}
	/* A step not yet reported is handed out again, not skipped over. */
	c = &p->series[p->cur];
	p->in_flight = true;
	step->index = p->cur;
	step->id = c->id;
	step->clean = wants_clean(p, p->cur);
	/*
	 * With WARNINGS_FILE the whole log is compared against the file, which
	 * covers the touched files too (ktest.pl skips the per-patch check).
	 */
	step->check_touched = !p->warnings_file && !c->ignored;
	step->check_warnings_file = p->warnings_file;
	step->boot = p->type == KP_BOOT || p->type == KP_TEST;
	step->test = p->type == KP_TEST;
}

static const char *stage_why(enum kp_stage stage)
{
	switch (stage) {
	case KP_FAIL_BUILD:
		return "failed build";
	case KP_FAIL_WARNING:
		return "built with warnings";
	case KP_FAIL_BOOT:
		return "failed boot";
	case KP_FAIL_TEST:
		return "failed test";
	case KP_OK:
		break;
	}
	return "failed";
}

static void add_failure(struct kpatchcheck *p, enum kp_stage stage,
			const char *why)
{
	struct kp_failure *f;

	p->failures = xrealloc(p->failures,
			       (p->nfailures + 1) * sizeof(*p->failures));
	f = &p->failures[p->nfailures++];
	f->id = p->series[p->cur].id;
	f->stage = stage;
	f->why = xstrdup(why ? why : stage_why(stage));
}

void kpatchcheck_report(struct kpatchcheck *p, enum kp_stage stage,
			const char *why)
{
	/* Nothing handed out (or the run is over): nothing to report on. */
	if (!p->in_flight || is_done(p))
		return;
	if (stage != KP_OK)
		add_failure(p, stage, why);
	p->in_flight = false;
	p->cur++;
}

static size_t series_index(const struct kpatchcheck *p, const char *id)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->series[i].id, id))
			return i;
	return p->n;
}

size_t kpatchcheck_index(const struct kpatchcheck *p, const char *id)
{
	return series_index(p, id);
}

void kpatchcheck_late_failure(struct kpatchcheck *p, const char *id,
			      enum kp_stage stage, const char *why)
{
	size_t i = series_index(p, id), at = 0;
	struct kp_failure *f;

	if (i == p->n || stage == KP_OK)
		return;
	while (at < p->nfailures &&
	       series_index(p, p->failures[at].id) < i)
		at++;
	p->failures = xrealloc(p->failures,
			       (p->nfailures + 1) * sizeof(*p->failures));
	memmove(&p->failures[at + 1], &p->failures[at],
		(p->nfailures - at) * sizeof(*p->failures));
	p->nfailures++;
	f = &p->failures[at];
	f->id = p->series[i].id;
	f->stage = stage;
	f->why = xstrdup(why ? why : stage_why(stage));
	if (!p->stop_at_first)
		return;
	for (size_t k = 1; k < p->nfailures; k++)
		free(p->failures[k].why);
	p->nfailures = 1;
}

size_t kpatchcheck_failures(const struct kpatchcheck *p,
			    const struct kp_failure **f)
{
	if (f)
		*f = p->failures;
	return p->nfailures;
}

size_t kpatchcheck_skipped(const struct kpatchcheck *p, const char ***ids)
{
	if (ids)
		*ids = (const char **)p->skipped;
	return p->nskipped;
}

size_t kpatchcheck_total(const struct kpatchcheck *p)
{
	return p->n;
}

/* ---- warnings ---- */

/*
 * The line as ktest.pl sees it after chomp: up to the first newline. A
 * trailing CR goes too (ktest.pl kept it), so a warnings file with CRLF
 * line ends still matches a build log without.
 */
static char *dup_line(const char *line)
{
	size_t len = strcspn(line, "\n");

	if (len && line[len - 1] == '\r')
		len--;
	return xstrndup(line, len);
}

/*
 * check_build_re, the Perl regex .*:.*(warning|error|Error):.* unanchored:
 * some ':' and, after it, one of the three words followed by ':'. The first
 * ':' leaves the most room, so it is the only one worth trying. Note that
 * make's "make[2]: *** [scripts/Makefile.build:250: drivers/foo.o] Error 1"
 * has no ':' after "Error" and so is no warning line, in ktest.pl either
 * (checked with perl). A failed build is reported as such anyway.
 */
static bool is_warning_line(const char *s)
{
	static const char *const words[] = { "warning:", "error:", "Error:" };
	const char *colon = strchr(s, ':');
	size_t i;

	if (!colon)
		return false;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(colon + 1, words[i]))
			return true;
	return false;
}

/*
 * The source tree as the matcher knows it: srcdir without trailing
 * slashes; empty when there is none (or it is "/").
 */
struct srctree {
	const char *dir;
	size_t len;
};

static void srctree_init(struct srctree *t, const char *srcdir)
{
	size_t len = srcdir ? strlen(srcdir) : 0;

	while (len && srcdir[len - 1] == '/')
		len--;
	t->dir = srcdir;
	t->len = len;
}

/*
 * A warning's file, made relative to the tree as far as that can be told.
 * full is the path with srcdir/, ./ and ../ stripped; tree is full without
 * a leading part that leads to the tree from elsewhere (see tree_path()),
 * else the same as full.
 */
struct wpath {
	const char *full;
	size_t full_len;
	const char *tree;
	size_t tree_len;
	bool up;		/* it began with ../ */
};

static const char *skip_slashes(const char *p, const char *end)
{
	while (p < end && *p == '/')
		p++;
	return p;
}

/*
 * Is p (of len) the end of srcdir, whole components: "linux" and
 * "dev/linux" are for /home/dev/linux, "include/linux" and "inux" not.
 */
static bool srcdir_tail(const char *p, size_t len, const struct srctree *t)
{
	const char *s;

	if (!len || len > t->len)
		return false;
	s = t->dir + t->len - len;
	if (memcmp(s, p, len))
		return false;
	return len == t->len || s[-1] == '/';
}

/*
 * After the ../ of "../linux/drivers/foo.c" (an object tree beside the
 * source tree) comes the way down into it, "linux/": a leading part that
 * is the end of srcdir. Only that may go: "../include/linux/foo.h" (an
 * object tree inside the source tree) is include/linux/foo.h, even in a
 * tree called linux.
 */
static void strip_way_down(struct wpath *w, const struct srctree *t)
{
	const char *end = w->full + w->full_len;
	const char *p;

	for (p = w->full; p < end; p++) {
		if (*p != '/' || !srcdir_tail(w->full, p - w->full, t))
			continue;
		p = skip_slashes(p, end);
		w->tree = p;
		w->tree_len = end - p;
		return;
	}
}

/*
 * gcc prints the path it was given. Kbuild gives it "drivers/foo.c" in the
 * tree, and with O= $(srctree)/drivers/foo.c where srctree is ".." (the
 * object tree inside the source tree) or the source tree's real path;
 * generated headers come as ./include/generated/... Strip those down to
 * the repository-relative path that a diff names.
 */
static void tree_path(const char *p, size_t len, const struct srctree *t,
		      struct wpath *w)
{
	const char *end = p + len;

	w->up = false;
	if (t->len && len > t->len && !strncmp(p, t->dir, t->len) &&
	    p[t->len] == '/')
		p = skip_slashes(p + t->len, end);
	for (;;) {
		if (end - p >= 2 && !strncmp(p, "./", 2)) {
			p = skip_slashes(p + 2, end);
		} else if (end - p >= 3 && !strncmp(p, "../", 3)) {
			p = skip_slashes(p + 3, end);
			w->up = true;
		} else {
			break;
		}
	}
	w->full = w->tree = p;
	w->full_len = w->tree_len = end - p;
	if (w->up)
		strip_way_down(w, t);
}

/*
 * The file part of a warning line: after leading blanks, up to the first
 * ':' (check_patch_buildlog's /^\s*(.*?):/). False if there is none.
 */
static bool line_file(const char *s, const struct srctree *t,
		      struct wpath *w)
{
	const char *p = s + strspn(s, " \t");
	const char *colon = strchr(p, ':');

	if (!colon || colon == p)
		return false;
	tree_path(p, colon - p, t, w);
	return w->tree_len > 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * process_warning_line's s/^(\s*\S+:\d+:)\d+/$1/: the greedy \S+ makes it
 * the last ":line:col" in the first word. ktest.pl keeps the colon after
 * the column ("foo.c:12:: warning"); dropping it too gives "foo.c:12:
 * warning", which is also what a compiler printing no column says, so the
 * two match (the distcc case the substitution is there for).
 */
static void drop_column(char *s)
{
	char *word = s + strspn(s, " \t");
	char *end = word + strcspn(word, " \t");
	char *p, *q, *col;

	for (p = end - 1; p > word; p--) {
		if (*p != ':' || !is_digit(p[1]))
			continue;
		for (q = p + 1; is_digit(*q); q++)
			;
		if (*q != ':' || !is_digit(q[1]))
			continue;
		col = q + 1;
		for (q = col; is_digit(*q); q++)
			;
		if (*q == ':')
			q++;
		memmove(col, q, strlen(q) + 1);
		return;
	}
}

/* ktest.pl's $utf8_quote: U+2018 and U+2019 become ' (in place). */
static void plain_quotes(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if ((unsigned char)r[0] == 0xe2 && (unsigned char)r[1] == 0x80 &&
		    ((unsigned char)r[2] == 0x98 ||
		     (unsigned char)r[2] == 0x99)) {
			*w++ = '\'';
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

char *kp_warning_normalize(const char *line, const char *srcdir)
{
	char *s = dup_line(line);
	struct srctree t;
	struct sbuf b;
	struct wpath w;
	const char *file;

	if (!is_warning_line(s)) {
		free(s);
		return NULL;
	}
	srctree_init(&t, srcdir);
	sbuf_init(&b);
	if (line_file(s, &t, &w)) {
		file = s + strspn(s, " \t");
		sbuf_addn(&b, s, file - s);
		sbuf_addn(&b, w.tree, w.tree_len);
		sbuf_adds(&b, strchr(file, ':'));
	} else {
		sbuf_adds(&b, s);
	}
	free(s);
	s = sbuf_detach(&b);
	drop_column(s);
	plain_quotes(s);
	return s;
}

char *kp_warning_file(const char *line, const char *srcdir)
{
	char *s = dup_line(line);
	char *file = NULL;
	struct srctree t;
	struct wpath w;

	srctree_init(&t, srcdir);
	if (is_warning_line(s) && line_file(s, &t, &w))
		file = xstrndup(w.tree, w.tree_len);
	free(s);
	return file;
}

static bool path_eq(const char *p, size_t len, const char *touched)
{
	return strlen(touched) == len && !memcmp(p, touched, len);
}

/* "linux/drivers/foo.c" ends in "/drivers/foo.c"; "afoo.c" not in "/foo.c". */
static bool path_tail(const char *p, size_t len, const char *touched)
{
	size_t tl = strlen(touched);

	if (!tl || len <= tl || p[len - tl - 1] != '/')
		return false;
	return !memcmp(p + len - tl, touched, tl);
}

/*
 * Which reading of the warning's path names a touched file? The path as
 * it stands first: "../kernel/sched/core.c" from inside a tree called
 * "kernel" is kernel/sched/core.c, not sched/core.c. Then without the way
 * down from outside. Without srcdir there is nothing to tell the way down
 * by, and any "/path" tail of a ../ path will do.
 */
static const char *touched_by(const struct wpath *w, const struct srctree *t,
			      const char *const *touched, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (touched[i] && path_eq(w->full, w->full_len, touched[i]))
			return touched[i];
	for (i = 0; i < n; i++)
		if (touched[i] && path_eq(w->tree, w->tree_len, touched[i]))
			return touched[i];
	for (i = 0; w->up && !t->len && i < n; i++)
		if (touched[i] && path_tail(w->full, w->full_len, touched[i]))
			return touched[i];
	return NULL;
}

/*
 * Only the warning line itself counts: a warning in a header is the
 * header's, even when an "In file included from" line before it names a
 * touched file (ktest.pl too). A tree-relative path must equal a touched
 * path: a change to a top-level foo.c is not to blame for drivers/foo.c,
 * nor one to include/linux/types.h for /usr/include/linux/types.h.
 */
const char *kp_warning_in_touched(const char *line, const char *srcdir,
				  const char *const *touched, size_t ntouched)
{
	char *s = dup_line(line);
	const char *hit = NULL;
	struct srctree t;
	struct wpath w;

	srctree_init(&t, srcdir);
	if (touched && is_warning_line(s) && line_file(s, &t, &w))
		hit = touched_by(&w, &t, touched, ntouched);
	free(s);
	return hit;
}

/* ---- warnings the files already had ---- */

struct kp_seen {
	struct strmap past;	/* file -> its warnings (a struct strmap set) */
	struct strmap now;	/* the same, for the build going on */
};

struct kp_seen *kp_seen_new(void)
{
	struct kp_seen *s = xcalloc(1, sizeof(*s));

	strmap_init(&s->past);
	strmap_init(&s->now);
	return s;
}

static void free_set(void *set)
{
	if (!set)
		return;
	strmap_free(set, NULL);
	free(set);
}

void kp_seen_free(struct kp_seen *s)
{
	if (!s)
		return;
	strmap_free(&s->past, free_set);
	strmap_free(&s->now, free_set);
	free(s);
}

static struct strmap *set_of(struct strmap *m, const char *file)
{
	struct strmap *set = strmap_get(m, file);

	if (!set) {
		set = xcalloc(1, sizeof(*set));
		strmap_init(set);
		strmap_put(m, file, set);
	}
	return set;
}

/*
 * Splits a normalised warning, in place, into its file and its text after
 * "file:line:" ("drivers/foo.c:12: warning: x" gives " warning: x").
 */
static void split_warning(char *n, const char **file, const char **text)
{
	char *p = n + strspn(n, " \t");
	char *colon = strchr(p, ':');	/* a warning line has one */
	char *q;

	*colon = '\0';
	*file = p;
	for (q = colon + 1; is_digit(*q); q++)
		;
	*text = q > colon + 1 && *q == ':' ? q + 1 : colon + 1;
}

bool kp_seen_line(struct kp_seen *s, const char *line, const char *srcdir)
{
	char *n = kp_warning_normalize(line, srcdir);
	const char *file, *text;
	struct strmap *past;
	bool fresh;

	if (!n)
		return false;
	split_warning(n, &file, &text);
	strmap_put(set_of(&s->now, file), text, NULL);
	past = strmap_get(&s->past, file);
	fresh = !past || !strmap_has(past, text);
	free(n);
	return fresh;
}

/*
 * A header's warning comes once per file including it, and how many of
 * those an incremental build compiles varies: so a set, not a count. The
 * price: a second identical warning in the same file is not new.
 */
void kp_seen_build_done(struct kp_seen *s, const char *const *touched,
			size_t ntouched)
{
	const char *file;
	void *set;
	size_t i;

	/* touched ones that warned now get their new set right after */
	for (i = 0; touched && i < ntouched; i++)
		if (touched[i])
			free_set(strmap_del(&s->past, touched[i]));
	for (i = 0; strmap_next(&s->now, &i, &file, &set);)
		free_set(strmap_put(&s->past, file, set));
	strmap_free(&s->now, NULL);
}
