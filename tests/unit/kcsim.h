/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsim: a simulated Kconfig universe of bool options, for the config
 * bisect tests and benchmark. Header only (static functions); needs
 * conf/kconfig.o and conf/strmap.o.
 *
 * A universe is text, one declaration a line, '#' to the end of a line a
 * comment:
 *
 *	config A
 *	config B depends A
 *	config C depends A !B select D default y
 *	config D
 *	culprit C D
 *
 * "config NAME" then, in any order and number: "depends [on] X !Y ..."
 * (all must hold; !Y: Y is n), "select X ...", "default y|n" (n when not
 * given). Names are written with or without CONFIG_; .config files carry
 * it. A name may be used before its declaration. A dependency loop
 * (through depends and select, as kconfig counts them) is an error.
 * "culprit X !Y ...": the kernel is bad when X is y and Y is n; with
 * several culprit lines, when any of them holds.
 *
 * kcsim_olddefconfig() is what "make olddefconfig" does with these rules:
 * an option whose depends do not all hold is invisible: no line at all,
 * value n, unless an enabled option selects it: select forces y whatever
 * the depends (kconfig warns about unmet direct dependencies, and writes
 * it). A visible option takes the input's value (y or m: y; "is not set"
 * or any other value: n) or its default when the input does not mention
 * it. Values are iterated to the fixpoint; the output lists every written
 * option, in declaration order, as "CONFIG_X=y" or "# CONFIG_X is not set".
 * Names the universe does not declare are dropped, as kconfig drops them.
 *
 * kcsim_random() makes seeded universes with a hidden culprit and a
 * good/bad pair of normalised configs; see there.
 */
#ifndef KTEST_TESTS_KCSIM_H
#define KTEST_TESTS_KCSIM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"

struct kcsim_ref {
	size_t opt;
	bool neg;
};

struct kcsim_opt {
	char *name;			/* "CONFIG_X" */
	unsigned int line;
	struct kcsim_ref *dep;		/* depends: all must hold */
	size_t ndep;
	size_t *sel;			/* what it selects */
	size_t nsel;
	size_t *rsel;			/* what selects it */
	size_t nrsel;
	bool defy;
};

struct kcsim_clause {
	struct kcsim_ref *ref;
	size_t n;
};

struct kcsim {
	struct kcsim_opt *o;
	size_t n;
	struct kcsim_clause *cul;
	size_t ncul;
	struct strmap idx;		/* "CONFIG_X" -> index + 1 */
};

/* ---- small helpers ---- */

static inline void *kcsim__grow(void *v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 8;
	return xrealloc(v, *cap * sz);
}

/* "X" or "CONFIG_X" -> a malloc'd "CONFIG_X" */
static inline char *kcsim__full(const char *name, size_t len)
{
	if (len >= 7 && !memcmp(name, "CONFIG_", 7))
		return xstrndup(name, len);
	return xasprintf("CONFIG_%.*s", (int)len, name);
}

/* The index of option name ("X" or "CONFIG_X"); false when undeclared. */
static inline bool kcsim_find(const struct kcsim *u, const char *name,
			      size_t *i)
{
	char *full = kcsim__full(name, strlen(name));
	void *v = strmap_get(&u->idx, full);

	free(full);
	if (!v)
		return false;
	*i = (size_t)(uintptr_t)v - 1;
	return true;
}

static inline void kcsim_free(struct kcsim *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		free(u->o[i].name);
		free(u->o[i].dep);
		free(u->o[i].sel);
		free(u->o[i].rsel);
	}
	for (size_t i = 0; i < u->ncul; i++)
		free(u->cul[i].ref);
	free(u->o);
	free(u->cul);
	strmap_free(&u->idx, NULL);
	free(u);
}

/* The same (the first name it had). */
static inline bool kcsim__find(const struct kcsim *u, const char *name,
			       size_t *i)
{
	return kcsim_find(u, name, i);
}

/* ---- parsing ---- */

struct kcsim__tok {
	const char *s;
	size_t len;
};

__attribute__((format(printf, 3, 4)))
static inline void kcsim__err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

static inline bool kcsim__is(const struct kcsim__tok *t, const char *w)
{
	return t->len == strlen(w) && !memcmp(t->s, w, t->len);
}

static inline bool kcsim__name_ok(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'A' && c <= 'Z') ||
		      (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* Splits line (up to a '#') into words; returns how many (at most max). */
static inline size_t kcsim__words(const char *s, size_t len,
				  struct kcsim__tok *w, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len && s[i] != '#') {
		size_t st;

		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++;
			continue;
		}
		st = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' &&
		       s[i] != '\r' && s[i] != '#')
			i++;
		if (n < max) {
			w[n].s = s + st;
			w[n].len = i - st;
		}
		n++;
	}
	return n;
}

/* A name word, "!name" when neg is allowed; false when unknown. */
static inline bool kcsim__ref(const struct kcsim *u, const struct kcsim__tok *t,
			      bool allow_neg, struct kcsim_ref *r,
			      char *err, size_t errsz, unsigned int line)
{
	const char *s = t->s;
	size_t len = t->len;
	char *full;
	void *v;

	r->neg = false;
	if (len && *s == '!') {
		if (!allow_neg) {
			kcsim__err(err, errsz, "line %u: '!' only in depends and culprit",
				   line);
			return false;
		}
		r->neg = true;
		s++;
		len--;
	}
	if (!kcsim__name_ok(s, len)) {
		kcsim__err(err, errsz, "line %u: bad name '%.*s'", line,
			   (int)t->len, t->s);
		return false;
	}
	full = kcsim__full(s, len);
	v = strmap_get(&u->idx, full);
	if (!v) {
		kcsim__err(err, errsz, "line %u: unknown option %s", line, full);
		free(full);
		return false;
	}
	free(full);
	r->opt = (size_t)(uintptr_t)v - 1;
	return true;
}

/* The rest of a config line: depends, select, default. */
static inline bool kcsim__attrs(struct kcsim *u, struct kcsim_opt *o,
				const struct kcsim__tok *w, size_t nw,
				unsigned int line, char *err, size_t errsz)
{
	enum { NONE, DEP, SEL } in = NONE;
	size_t dcap = 0, scap = 0;

	for (size_t i = 2; i < nw; i++) {
		struct kcsim_ref r;

		if (kcsim__is(&w[i], "depends")) {
			in = DEP;
			if (i + 1 < nw && kcsim__is(&w[i + 1], "on"))
				i++;
			continue;
		}
		if (kcsim__is(&w[i], "select")) {
			in = SEL;
			continue;
		}
		if (kcsim__is(&w[i], "default")) {
			if (i + 1 >= nw || !(kcsim__is(&w[i + 1], "y") ||
					     kcsim__is(&w[i + 1], "n"))) {
				kcsim__err(err, errsz,
					   "line %u: default takes y or n", line);
				return false;
			}
			o->defy = kcsim__is(&w[++i], "y");
			in = NONE;
			continue;
		}
		if (in == NONE) {
			kcsim__err(err, errsz, "line %u: unexpected '%.*s'",
				   line, (int)w[i].len, w[i].s);
			return false;
		}
		if (!kcsim__ref(u, &w[i], in == DEP, &r, err, errsz, line))
			return false;
		if (in == DEP) {
			o->dep = kcsim__grow(o->dep, o->ndep, &dcap,
					     sizeof(*o->dep));
			o->dep[o->ndep++] = r;
		} else {
			o->sel = kcsim__grow(o->sel, o->nsel, &scap,
					     sizeof(*o->sel));
			o->sel[o->nsel++] = r.opt;
		}
	}
	return true;
}

#define KCSIM__MAXW 512

/* Pass 1 declares every config; pass 2 reads the rest. */
static inline bool kcsim__pass(struct kcsim *u, const char *text, int pass,
			       char *err, size_t errsz)
{
	struct kcsim__tok w[KCSIM__MAXW];
	size_t cap = u->n, ccap = u->ncul, optno = 0;
	unsigned int line = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		size_t nw = kcsim__words(p, len, w, KCSIM__MAXW);

		line++;
		p += len + (nl ? 1 : 0);
		if (!nw)
			continue;
		if (nw > KCSIM__MAXW) {
			kcsim__err(err, errsz, "line %u: too many words", line);
			return false;
		}
		if (kcsim__is(&w[0], "culprit")) {
			struct kcsim_clause *c;

			if (pass == 1)
				continue;
			if (nw < 2) {
				kcsim__err(err, errsz,
					   "line %u: culprit names no option", line);
				return false;
			}
			u->cul = kcsim__grow(u->cul, u->ncul, &ccap, sizeof(*u->cul));
			c = &u->cul[u->ncul++];
			c->n = 0;
			c->ref = xcalloc(nw - 1, sizeof(*c->ref));
			for (size_t i = 1; i < nw; i++)
				if (!kcsim__ref(u, &w[i], true, &c->ref[c->n++],
						err, errsz, line))
					return false;
			continue;
		}
		if (!kcsim__is(&w[0], "config")) {
			kcsim__err(err, errsz, "line %u: unknown keyword '%.*s'",
				   line, (int)w[0].len, w[0].s);
			return false;
		}
		if (nw < 2 || !kcsim__name_ok(w[1].s, w[1].len)) {
			kcsim__err(err, errsz, "line %u: config needs a name", line);
			return false;
		}
		if (pass == 1) {
			char *full = kcsim__full(w[1].s, w[1].len);
			struct kcsim_opt *o;

			if (strmap_has(&u->idx, full)) {
				kcsim__err(err, errsz,
					   "line %u: %s declared twice", line, full);
				free(full);
				return false;
			}
			u->o = kcsim__grow(u->o, u->n, &cap, sizeof(*u->o));
			o = &u->o[u->n++];
			memset(o, 0, sizeof(*o));
			o->name = full;
			o->line = line;
			strmap_put(&u->idx, full, (void *)(uintptr_t)u->n);
			continue;
		}
		if (!kcsim__attrs(u, &u->o[optno++], w, nw, line, err, errsz))
			return false;
	}
	return true;
}

/*
 * Loop check: X's value needs its depends and its selectors. Colours:
 * 0 unseen, 1 on the path, 2 done.
 */
static inline bool kcsim__acyclic(const struct kcsim *u, size_t i,
				  unsigned char *col, char *err, size_t errsz)
{
	const struct kcsim_opt *o = &u->o[i];

	if (col[i] == 2)
		return true;
	if (col[i] == 1) {
		kcsim__err(err, errsz,
			   "line %u: recursive dependency involving %s",
			   o->line, o->name);
		return false;
	}
	col[i] = 1;
	for (size_t k = 0; k < o->ndep; k++)
		if (!kcsim__acyclic(u, o->dep[k].opt, col, err, errsz))
			return false;
	for (size_t k = 0; k < o->nrsel; k++)
		if (!kcsim__acyclic(u, o->rsel[k], col, err, errsz))
			return false;
	col[i] = 2;
	return true;
}

/* The universe of text, or NULL with err set to "line N: what". */
static inline struct kcsim *kcsim_parse_err(const char *text, char *err,
					    size_t errsz)
{
	struct kcsim *u = xcalloc(1, sizeof(*u));
	unsigned char *col;
	bool ok;

	strmap_init(&u->idx);
	kcsim__err(err, errsz, "no error");
	if (!kcsim__pass(u, text, 1, err, errsz) ||
	    !kcsim__pass(u, text, 2, err, errsz)) {
		kcsim_free(u);
		return NULL;
	}
	for (size_t i = 0; i < u->n; i++) {
		const struct kcsim_opt *o = &u->o[i];

		for (size_t k = 0; k < o->nsel; k++) {
			struct kcsim_opt *t = &u->o[o->sel[k]];

			t->rsel = xrealloc(t->rsel, (t->nrsel + 1) *
					   sizeof(*t->rsel));
			t->rsel[t->nrsel++] = i;
		}
	}
	col = xcalloc(u->n ? u->n : 1, 1);
	ok = true;
	for (size_t i = 0; ok && i < u->n; i++)
		ok = kcsim__acyclic(u, i, col, err, errsz);
	free(col);
	if (!ok) {
		kcsim_free(u);
		return NULL;
	}
	return u;
}

/* kcsim_parse_err(), the error printed to stderr. */
static inline struct kcsim *kcsim_parse(const char *text)
{
	char err[256];
	struct kcsim *u = kcsim_parse_err(text, err, sizeof(err));

	if (!u)
		fprintf(stderr, "kcsim: %s\n", err);
	return u;
}

/* ---- olddefconfig ---- */

/* The value in of option name asks for: 1 y, 0 n, -1 not mentioned. */
static inline int kcsim__input(const struct kdotconfig *in, const char *name)
{
	const struct kdotconfig_entry *e = kdotconfig_get(in, name);

	if (!e)
		return -1;
	return e->value && (!strcmp(e->value, "y") || !strcmp(e->value, "m"));
}

/*
 * The fixpoint: val[i] the value, wr[i] whether it is written. Either
 * array may be NULL. Returns the number of rounds.
 */
static inline int kcsim_values(const struct kcsim *u, const struct kdotconfig *in,
			       bool *val_out, bool *wr_out)
{
	bool *val = xcalloc(u->n + 1, sizeof(bool));
	bool *wr = xcalloc(u->n + 1, sizeof(bool));
	int *want = xcalloc(u->n + 1, sizeof(int));
	bool changed = true;
	int rounds = 0;

	for (size_t i = 0; i < u->n; i++) {
		int v = kcsim__input(in, u->o[i].name);

		want[i] = v < 0 ? u->o[i].defy : v;
	}
	/* acyclic: the fixpoint is unique and reached in at most n+1 rounds */
	while (changed && rounds <= (int)u->n + 1) {
		changed = false;
		rounds++;
		for (size_t i = 0; i < u->n; i++) {
			const struct kcsim_opt *o = &u->o[i];
			bool vis = true, sel = false, v;

			for (size_t k = 0; vis && k < o->ndep; k++)
				vis = val[o->dep[k].opt] != o->dep[k].neg;
			for (size_t k = 0; !sel && k < o->nrsel; k++)
				sel = val[o->rsel[k]];
			v = sel || (vis && want[i]);
			wr[i] = vis || sel;
			if (v != val[i]) {
				val[i] = v;
				changed = true;
			}
		}
	}
	if (val_out)
		memcpy(val_out, val, u->n * sizeof(bool));
	if (wr_out)
		memcpy(wr_out, wr, u->n * sizeof(bool));
	free(val);
	free(wr);
	free(want);
	return rounds;
}

/*
 * make olddefconfig: out (kdotconfig_init()ed, not in) is emptied and
 * filled with the normalised config.
 */
static inline void kcsim_olddefconfig(const struct kcsim *u,
				      const struct kdotconfig *in,
				      struct kdotconfig *out)
{
	bool *val = xcalloc(u->n + 1, sizeof(bool));
	bool *wr = xcalloc(u->n + 1, sizeof(bool));

	kcsim_values(u, in, val, wr);
	kdotconfig_free(out);
	for (size_t i = 0; i < u->n; i++)
		if (wr[i])
			kdotconfig_set(out, u->o[i].name, val[i] ? "y" : NULL);
	free(val);
	free(wr);
}

/* Does the (normalised) cfg fail: does a culprit line hold? */
static inline bool kcsim_bad(const struct kcsim *u, const struct kdotconfig *cfg)
{
	for (size_t c = 0; c < u->ncul; c++) {
		bool all = true;

		for (size_t k = 0; all && k < u->cul[c].n; k++) {
			const struct kcsim_ref *r = &u->cul[c].ref[k];

			all = kdotconfig_enabled(cfg, u->o[r->opt].name) != r->neg;
		}
		if (all)
			return true;
	}
	return false;
}

/* Do a and b hold the same settings (order and comments aside)? */
static inline bool kcsim_same(const struct kdotconfig *a,
			      const struct kdotconfig *b)
{
	const struct kdotconfig_entry *e;
	size_t i = 0;

	if (kdotconfig_count(a) != kdotconfig_count(b))
		return false;
	while ((e = kdotconfig_next(a, &i))) {
		const struct kdotconfig_entry *f = kdotconfig_get(b, e->name);

		if (!f || (!e->value) != (!f->value) ||
		    (e->value && strcmp(e->value, f->value)))
			return false;
	}
	return true;
}

/* ---- changes between good and bad, candidates, answers ---- */

/*
 * The changes from good to bad, as the runner sees them
 * (kdotconfig_diff(): absent and "is not set" are both n), in the
 * universe's declaration order (depends before what depends on them in
 * the generated universes). *out malloc'd; returns how many. The names
 * and values point into good and bad.
 */
static inline size_t kcsim_changes(const struct kcsim *u,
				   const struct kdotconfig *good,
				   const struct kdotconfig *bad,
				   struct kdotconfig_change **out)
{
	struct kdotconfig_change *d, *v;
	size_t n = kdotconfig_diff(good, bad, &d), k = 0;

	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < u->n; i++)
		for (size_t j = 0; j < n; j++)
			if (!strcmp(d[j].name, u->o[i].name))
				v[k++] = d[j];
	/* names the universe does not know: at the end, as found */
	for (size_t j = 0; j < n; j++)
		if (!strmap_has(&u->idx, d[j].name))
			v[k++] = d[j];
	free(d);
	*out = v;
	return k;
}

/*
 * good with the changes flagged in apply set to their bad value (not set
 * when bad does not set it), not normalised. out kdotconfig_init()ed.
 */
static inline void kcsim_mix(const struct kdotconfig *good,
			     const struct kdotconfig_change *ch, size_t n,
			     const bool *apply, struct kdotconfig *out)
{
	const struct kdotconfig_entry *e;
	size_t i = 0;

	kdotconfig_free(out);
	while ((e = kdotconfig_next(good, &i)))
		kdotconfig_set(out, e->name, e->value);
	for (size_t k = 0; k < n; k++)
		if (apply[k])
			kdotconfig_set(out, ch[k].name, ch[k].b);
}

/* eff[k]: does cfg hold change k's bad value? Returns how many do. */
static inline size_t kcsim_holds(const struct kdotconfig *cfg,
				 const struct kdotconfig_change *ch, size_t n,
				 bool *eff)
{
	size_t m = 0;

	for (size_t k = 0; k < n; k++) {
		eff[k] = kdotconfig_has_value(cfg, ch[k].name, ch[k].b);
		m += eff[k];
	}
	return m;
}

/* kcsim_mix() then olddefconfig; returns kcsim_bad() of it. */
static inline bool kcsim_try(const struct kcsim *u,
			     const struct kdotconfig *good,
			     const struct kdotconfig_change *ch, size_t n,
			     const bool *apply, struct kdotconfig *out)
{
	struct kdotconfig raw;

	kdotconfig_init(&raw);
	kcsim_mix(good, ch, n, apply, &raw);
	kcsim_olddefconfig(u, &raw, out);
	kdotconfig_free(&raw);
	return kcsim_bad(u, out);
}

/*
 * The core of an answer (changes flagged in apply): going from the last
 * change to the first, a change is dropped when the normalised result is
 * the same without it (it came anyway: a default, a select). core[] gets
 * what is left; returns how many.
 */
static inline size_t kcsim_core(const struct kcsim *u,
				const struct kdotconfig *good,
				const struct kdotconfig_change *ch, size_t n,
				const bool *apply, bool *core)
{
	struct kdotconfig want, got;
	size_t m = 0;

	kdotconfig_init(&want);
	kdotconfig_init(&got);
	memcpy(core, apply, n * sizeof(bool));
	kcsim_try(u, good, ch, n, core, &want);
	for (size_t k = n; k-- > 0; ) {
		if (!core[k])
			continue;
		core[k] = false;
		kcsim_try(u, good, ch, n, core, &got);
		if (!kcsim_same(&want, &got))
			core[k] = true;
	}
	for (size_t k = 0; k < n; k++)
		m += core[k];
	kdotconfig_free(&want);
	kdotconfig_free(&got);
	return m;
}

/*
 * Does the set of changes flagged in core match expect: names with or
 * without CONFIG_, blank-separated; " | " separates alternatives
 * ("C | S": either C alone or S alone)?
 */
static inline bool kcsim_expect_match(const char *expect,
				      const struct kdotconfig_change *ch,
				      size_t n, const bool *core)
{
	const char *p = expect;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		size_t want = 0, hit = 0;
		bool ok = true;
		const char *q = p;

		while (q < p + len) {
			const char *s;
			char *full;
			bool found = false;

			while (q < p + len && (*q == ' ' || *q == '\t'))
				q++;
			if (q >= p + len)
				break;
			s = q;
			while (q < p + len && *q != ' ' && *q != '\t')
				q++;
			full = kcsim__full(s, (size_t)(q - s));
			want++;
			for (size_t k = 0; k < n; k++)
				if (core[k] && !strcmp(ch[k].name, full))
					found = true;
			free(full);
			if (found)
				hit++;
			else
				ok = false;
		}
		if (ok) {
			size_t have = 0;

			for (size_t k = 0; k < n; k++)
				have += core[k];
			if (have == want && hit == want)
				return true;
		}
		if (!bar)
			return false;
		p = bar + 1;
	}
}

/* ---- seeded universes ---- */

static inline uint64_t kcsim_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n) */
static inline size_t kcsim_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(kcsim_rand(s) % n) : 0;
}

/* true with probability pct % */
static inline bool kcsim_chance(uint64_t *s, unsigned int pct)
{
	return kcsim_below(s, 100) < pct;
}

enum kcsim_shape {
	KCSIM_PLAIN,	/* C: n -> y */
	KCSIM_CHAIN,	/* D n -> y; E depends D default y; C depends E */
	KCSIM_SELECT,	/* C depends Z (n on both sides); S selects C */
	KCSIM_NEGDEP,	/* G y -> n; C depends !G, set y in bad */
	KCSIM_NSHAPES
};

struct kcsim_case {
	char *text;			/* the universe */
	struct kcsim *u;
	struct kdotconfig good, bad;	/* both normalised */
	char *expect;			/* kcsim_expect_match() form */
	size_t nculprit;		/* options in the culprit line */
	enum kcsim_shape shape[2];
};

static inline void kcsim_case_free(struct kcsim_case *c)
{
	free(c->text);
	kcsim_free(c->u);
	kdotconfig_free(&c->good);
	kdotconfig_free(&c->bad);
	free(c->expect);
	memset(c, 0, sizeof(*c));
}

struct kcsim__gopt {
	char *decl;		/* "config ..." */
	int good, bad;		/* input values: 1 y, 0 n, -1 unset */
};

/*
 * A seeded universe of about nopts options and its good/bad pair:
 *
 *  - the harmless part: clusters of 4 to 16 options, a head that may
 *    depend on an earlier head, members that depend on the head and may
 *    depend on an earlier member (sometimes "!"), some selecting a later
 *    member or a later head, some default y;
 *  - the culprit: one line of nculprit options (0: 1 or 2 at random), each
 *    reached one of four ways (enum kcsim_shape), in options of its own
 *    that the harmless part neither selects nor depends on, spread among
 *    the harmless ones;
 *  - good: random values, the culprit off; bad: good with the culprit on
 *    plus nharmless harmless options flipped (fewer when there are fewer
 *    visible), each normalised. Dependency fallout makes more changes.
 *
 * expect: the changes a right answer holds (kcsim_core() of it): C, or D
 * (C default y) or D C, or S, or G C. Depends always name earlier options,
 * so declaration order is dependency order. Deterministic in its inputs.
 */
static inline void kcsim_random(uint64_t seed, size_t nopts, size_t nharmless,
				size_t nculprit, struct kcsim_case *c)
{
	struct kcsim__gopt *h, *x = NULL;
	size_t nh, nx = 0, xcap = 0, *heads, nheads = 0;
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
	struct sbuf t, ex, cul;
	struct kdotconfig in;
	size_t *vis, nvis = 0;
	bool *val, *wr;

	memset(c, 0, sizeof(*c));
	kdotconfig_init(&c->good);
	kdotconfig_init(&c->bad);
	if (!nculprit)
		nculprit = 1 + kcsim_below(&s, 2);
	c->nculprit = nculprit;
	sbuf_init(&ex);
	sbuf_init(&cul);
	sbuf_adds(&cul, "culprit");

	/* the culprit's options */
	for (size_t q = 0; q < nculprit; q++) {
		enum kcsim_shape sh = (enum kcsim_shape)kcsim_below(&s, KCSIM_NSHAPES);
		struct kcsim__gopt g[3];
		size_t ng = 0;

		if (q < 2)
			c->shape[q] = sh;
		memset(g, 0, sizeof(g));
		switch (sh) {
		case KCSIM_PLAIN:
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config C%zu", q), 0, 1 };
			sbuf_addf(&ex, " C%zu", q);
			break;
		case KCSIM_CHAIN: {
			bool defy = kcsim_chance(&s, 50);

			g[ng++] = (struct kcsim__gopt){
				xasprintf("config D%zu", q), 0, 1 };
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config E%zu depends D%zu default y",
					  q, q), -1, -1 };
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config C%zu depends on E%zu%s", q, q,
					  defy ? " default y" : ""),
				-1, defy ? -1 : 1 };
			sbuf_addf(&ex, defy ? " D%zu" : " D%zu C%zu", q, q);
			break;
		}
		case KCSIM_SELECT:
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config Z%zu", q), 0, 0 };
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config C%zu depends Z%zu", q, q), -1, -1 };
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config S%zu select C%zu", q, q), 0, 1 };
			sbuf_addf(&ex, " S%zu", q);
			break;
		default:
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config G%zu default y", q), 1, 0 };
			g[ng++] = (struct kcsim__gopt){
				xasprintf("config C%zu depends !G%zu", q, q), -1, 1 };
			sbuf_addf(&ex, " G%zu C%zu", q, q);
			break;
		}
		for (size_t i = 0; i < ng; i++) {
			x = kcsim__grow(x, nx, &xcap, sizeof(*x));
			x[nx++] = g[i];
		}
		sbuf_addf(&cul, " C%zu", q);
	}

	/* the harmless clusters */
	nh = nopts > nx ? nopts - nx : 1;
	h = xcalloc(nh, sizeof(*h));
	heads = xcalloc(nh, sizeof(*heads));
	for (size_t i = 0; i < nh; ) {
		size_t size = 4 + kcsim_below(&s, 13), first = i;

		if (size > nh - i)
			size = nh - i;
		for (size_t j = 0; j < size; j++, i++) {
			struct sbuf d;

			sbuf_init(&d);
			sbuf_addf(&d, "config N%zu", i);
			if (j == 0) {
				if (nheads && kcsim_chance(&s, 40))
					sbuf_addf(&d, " depends N%zu",
						  heads[kcsim_below(&s, nheads)]);
				heads[nheads++] = i;
			} else {
				bool any = false;

				if (kcsim_chance(&s, 80)) {
					sbuf_addf(&d, " depends N%zu", first);
					any = true;
				}
				if (j > 1 && kcsim_chance(&s, 25))
					sbuf_addf(&d, "%s %sN%zu",
						  any ? "" : " depends",
						  kcsim_chance(&s, 20) ? "!" : "",
						  first + 1 + kcsim_below(&s, j - 1));
			}
			if (kcsim_chance(&s, 10)) {
				size_t to;

				if (i + 1 < first + size)
					to = i + 1 + kcsim_below(&s,
								 first + size - i - 1);
				else
					to = i + 1 + kcsim_below(&s, nh - i);
				if (to < nh)
					sbuf_addf(&d, " select N%zu", to);
			}
			if (kcsim_chance(&s, 30))
				sbuf_adds(&d, " default y");
			h[i].decl = sbuf_detach(&d);
			sbuf_free(&d);
			h[i].good = kcsim_chance(&s, 40);
			h[i].bad = h[i].good;
		}
	}

	/* the text: the culprit's options spread in order among the rest */
	sbuf_init(&t);
	{
		size_t xi = 0;

		for (size_t i = 0; i < nh; i++) {
			while (xi < nx && kcsim_below(&s, nh) < nx)
				sbuf_addf(&t, "%s\n", x[xi++].decl);
			sbuf_addf(&t, "%s\n", h[i].decl);
		}
		while (xi < nx)
			sbuf_addf(&t, "%s\n", x[xi++].decl);
	}
	sbuf_addf(&t, "%s\n", sbuf_str(&cul));
	c->text = sbuf_detach(&t);
	c->u = kcsim_parse(c->text);
	if (!c->u)
		abort();
	c->expect = xstrdup(sbuf_str(&ex) + 1);

	/* good */
	kdotconfig_init(&in);
	for (size_t i = 0; i < nh; i++) {
		char *n = xasprintf("CONFIG_N%zu", i);

		kdotconfig_set(&in, n, h[i].good ? "y" : NULL);
		free(n);
	}
	for (size_t i = 0; i < nx; i++) {
		char name[64];

		if (x[i].good < 0)
			continue;
		sscanf(x[i].decl, "config %40s", name);
		{
			char *n = xasprintf("CONFIG_%s", name);

			kdotconfig_set(&in, n, x[i].good ? "y" : NULL);
			free(n);
		}
	}
	kcsim_olddefconfig(c->u, &in, &c->good);

	/* bad: flip nharmless visible harmless options, turn the culprit on */
	kdotconfig_free(&in);
	kdotconfig_merge(&in, &c->good);
	val = xcalloc(c->u->n + 1, sizeof(bool));
	wr = xcalloc(c->u->n + 1, sizeof(bool));
	vis = xcalloc(c->u->n + 1, sizeof(size_t));
	kcsim_values(c->u, &c->good, val, wr);
	for (size_t i = 0; i < c->u->n; i++)
		if (wr[i] && c->u->o[i].name[7] == 'N')
			vis[nvis++] = i;
	for (size_t k = 0; k < nharmless && nvis; k++) {
		size_t j = kcsim_below(&s, nvis), i = vis[j];

		kdotconfig_set(&in, c->u->o[i].name, val[i] ? NULL : "y");
		vis[j] = vis[--nvis];
	}
	for (size_t i = 0; i < nx; i++) {
		char name[64];

		if (x[i].bad < 0)
			continue;
		sscanf(x[i].decl, "config %40s", name);
		{
			char *n = xasprintf("CONFIG_%s", name);

			kdotconfig_set(&in, n, x[i].bad ? "y" : NULL);
			free(n);
		}
	}
	kcsim_olddefconfig(c->u, &in, &c->bad);
	if (kcsim_bad(c->u, &c->good) || !kcsim_bad(c->u, &c->bad))
		abort();

	kdotconfig_free(&in);
	for (size_t i = 0; i < nh; i++)
		free(h[i].decl);
	for (size_t i = 0; i < nx; i++)
		free(x[i].decl);
	free(h);
	free(x);
	free(heads);
	free(val);
	free(wr);
	free(vis);
	sbuf_free(&ex);
	sbuf_free(&cul);
}

#endif
