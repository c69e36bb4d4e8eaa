// SPDX-License-Identifier: GPL-2.0-only
/*
 * The config model: storage, ktest.pl's run-time option resolution, and the
 * checks that run before anything touches the lab.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subst.h"
#include "text.h"

/* ktest.pl gives up after this many expansion rounds ("Over 100 evaluations") */
#define MAX_EVAL_ROUNDS 100
/* a value that doubles each round would reach 2^100 bytes first: cap it */
#define MAX_VALUE_LEN (1 << 20)

static void free_kval(void *p)
{
	struct kval *v = p;

	free(v->value);
	free(v);
}

static void free_kevals(void *p)
{
	struct kevals *e = p;

	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].expr);
	free(e->v);
	free(e);
}

void kconfig_init(struct kconfig *c, struct kdiag *d)
{
	memset(c, 0, sizeof(*c));
	strmap_init(&c->opts);
	strmap_init(&c->evals);
	strmap_init(&c->vars);
	strmap_init(&c->locked);
	strmap_init(&c->used);
	strmap_init(&c->files);
	c->allow_shell = true;
	c->diag = d;
}

void kconfig_free(struct kconfig *c)
{
	strmap_free(&c->opts, free_kval);
	strmap_free(&c->evals, free_kevals);
	strmap_free(&c->vars, free);
	strmap_free(&c->locked, free);
	strmap_free(&c->used, NULL);
	strmap_free(&c->files, NULL);
	free(c->repeats);
	memset(c, 0, sizeof(*c));
}

const char *kconfig_intern(struct kconfig *c, const char *file)
{
	size_t it = 0;
	const char *k;

	if (!strmap_has(&c->files, file))
		strmap_put(&c->files, file, NULL);
	/* the map owns its keys: hand out the stored copy */
	while (strmap_next(&c->files, &it, &k, NULL))
		if (!strcmp(k, file))
			return k;
	return NULL;
}

struct kval *kconfig_lookup(const struct kconfig *c, const char *key)
{
	return strmap_get(&c->opts, key);
}

void kconfig_store(struct kconfig *c, const char *key, const char *value,
		   const struct korigin *o)
{
	struct kval *v = xcalloc(1, sizeof(*v));

	v->value = xstrdup(value);
	if (o)
		v->origin = *o;
	v = strmap_put(&c->opts, key, v);
	if (v)
		free_kval(v);
}

void kconfig_add_eval(struct kconfig *c, const char *key, const char *expr,
		      const struct korigin *o)
{
	struct kevals *e = strmap_get(&c->evals, key);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		strmap_put(&c->evals, key, e);
	}
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
	e->v[e->n].expr = xstrdup(expr);
	e->v[e->n].origin = o ? *o : KORIGIN_NONE;
	e->n++;
}

void kconfig_add_repeat(struct kconfig *c, int first, int count)
{
	for (size_t i = 0; i < c->nrepeats; i++) {
		if (c->repeats[i].first == first) {
			c->repeats[i].count = count;
			return;
		}
	}
	c->repeats = xrealloc(c->repeats, (c->nrepeats + 1) * sizeof(*c->repeats));
	c->repeats[c->nrepeats].first = first;
	c->repeats[c->nrepeats].count = count;
	c->nrepeats++;
}

int kconfig_repeat_parent(const struct kconfig *c, int i)
{
	for (size_t r = 0; r < c->nrepeats; r++)
		if (i >= c->repeats[r].first &&
		    i < c->repeats[r].first + c->repeats[r].count)
			return c->repeats[r].first;
	return 0;
}

int kconfig_repeat_count(const struct kconfig *c, int i)
{
	for (size_t r = 0; r < c->nrepeats; r++)
		if (c->repeats[r].first == i)
			return c->repeats[r].count;
	return 1;
}

void kconfig_set_var(struct kconfig *c, const char *name, const char *value)
{
	char *old;

	if (!value || ktext_blank(value))
		old = strmap_del(&c->vars, name);
	else
		old = strmap_put(&c->vars, name, xstrdup(value));
	free(old);
}

const char *kconfig_get_var(const struct kconfig *c, const char *name)
{
	return strmap_get(&c->vars, name);
}

void kconfig_split_key(const char *key, char *name, size_t namelen, int *test)
{
	const char *b = strchr(key, '[');
	size_t n = b ? (size_t)(b - key) : strlen(key);

	if (n >= namelen)
		n = namelen - 1;
	memcpy(name, key, n);
	name[n] = '\0';
	*test = 0;
	if (b) {
		char *end;
		long t = strtol(b + 1, &end, 10);

		if (end != b + 1 && *end == ']' && !end[1] && t > 0 && t < 1000000)
			*test = (int)t;
		else
			*test = -1;	/* not a test number ktest.pl would look up */
	}
}

/* ---- read-time expansion: ktest.pl's process_variables ---- */

/* Marks a ${NAME} that was left alone, so that rescanning skips it. */
#define KEPT "$\001{"

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
	       ch == '\f' || ch == '\v';
}

/*
 * Finds the first ${NAME} that ktest.pl's read-time regex
 * /(.*?[^\\])\$\{([^\{]*?)\}(.*)/ would match: a '$' not at the start and not
 * after a backslash, then '{', then no '{' before the closing '}'.
 */
static bool find_var(const char *s, size_t *dollar, size_t *close)
{
	for (size_t p = 1; s[0] && s[p]; p++) {
		size_t q;

		if (s[p] != '$' || s[p + 1] != '{' || s[p - 1] == '\\')
			continue;
		for (q = p + 2; s[q] && s[q] != '}' && s[q] != '{'; q++)
			;
		if (s[q] == '}') {
			*dollar = p;
			*close = q;
			return true;
		}
	}
	return false;
}

/* ${shell CMD}: CMD's output, the trailing newline dropped on success */
static int run_shell(struct kconfig *c, const char *cmd, struct sbuf *out,
		     const struct korigin *o)
{
	char buf[4096];
	size_t n, start = out->len;
	FILE *p;
	int st;

	if (!c->allow_shell) {
		kdiag_error(c->diag, o, "${shell %s}: running commands is disabled here",
			    cmd);
		return -1;
	}
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p) {
		kdiag_error(c->diag, o, "${shell %s}: cannot run it: %m", cmd);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (out->len - start + n > (1 << 20)) {
			pclose(p);
			kdiag_error(c->diag, o,
				    "${shell %s}: more than 1 MiB of output", cmd);
			return -1;
		}
		sbuf_addn(out, buf, n);
	}
	st = pclose(p);
	if (st != 0) {
		kdiag_warn(c->diag, o, "%s returned an error", cmd);
	} else if (out->len > start && out->buf[out->len - 1] == '\n') {
		out->buf[--out->len] = '\0';
	}
	return 0;
}

/* One substitution; appends what ${var} stands for to out. */
static int expand_one(struct kconfig *c, const char *var, bool remove_undef,
		      struct sbuf *out, const struct korigin *o)
{
	const char *v;

	if (!strncmp(var, "shell", 5) && is_space(var[5])) {
		var += 5;
		while (is_space(*var))
			var++;
		return run_shell(c, var, out, o);
	}
	v = kconfig_get_var(c, var);
	if (v) {
		sbuf_adds(out, v);
	} else if (remove_undef) {
		sbuf_addc(out, '0');
	} else {
		sbuf_adds(out, KEPT);
		sbuf_adds(out, var);
		sbuf_addc(out, '}');
		/* may be an option used later: not a typo */
		if (!strmap_has(&c->used, var))
			strmap_put(&c->used, var, NULL);
	}
	return 0;
}

char *kconfig_expand_vars(struct kconfig *c, const char *value,
			  bool remove_undef, const struct korigin *o)
{
	struct sbuf cur, next;
	size_t dollar, close, rounds = 0;
	char *res, *w;
	const char *r;

	sbuf_init(&cur);
	sbuf_init(&next);
	/* a leading space lets the "not after a backslash" test see position 0 */
	sbuf_addc(&cur, ' ');
	sbuf_adds(&cur, value);
	while (find_var(cur.buf, &dollar, &close)) {
		char *var = xstrndup(cur.buf + dollar + 2, close - dollar - 2);

		/* each round may substitute text holding more ${...}: bound it */
		if (++rounds > 1000) {
			kdiag_error(c->diag, o,
				    "variable ${%s} keeps expanding: recursive config variables?",
				    var);
			free(var);
			goto fail;
		}
		sbuf_reset(&next);
		sbuf_addn(&next, cur.buf, dollar);
		if (expand_one(c, var, remove_undef, &next, o)) {
			free(var);
			goto fail;
		}
		free(var);
		sbuf_adds(&next, cur.buf + close + 1);
		if (next.len > MAX_VALUE_LEN) {
			kdiag_error(c->diag, o,
				    "expanding '%.100s' gives more than 1 MiB: recursive config variables?",
				    value);
			goto fail;
		}
		sbuf_reset(&cur);
		sbuf_addn(&cur, next.buf, next.len);
	}
	/* put the kept ${NAME}s back, and drop the leading space */
	res = xmalloc(cur.len + 1);
	for (r = cur.buf + 1, w = res; *r; ) {
		if (!strncmp(r, KEPT, 3)) {
			*w++ = '$';
			*w++ = '{';
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	sbuf_free(&cur);
	sbuf_free(&next);
	return res;
fail:
	sbuf_free(&cur);
	sbuf_free(&next);
	return NULL;
}

void kconfig_apply_defaults(struct kconfig *c)
{
	static const struct korigin def = { "(ktest default)", 0 };

	for (size_t i = 0; i < KOPT__COUNT; i++) {
		const struct kopt_desc *d = &kopt_table[i];

		if (d->def && !kconfig_lookup(c, d->name))
			kconfig_store(c, d->name, d->def, &def);
	}
}

/* ---- run-time expansion: ktest.pl's eval_option ---- */

static const struct kval *lookup_defined(const struct kconfig *c,
					 const char *key)
{
	const struct kval *v = kconfig_lookup(c, key);

	return v && !ktext_blank(v->value) ? v : NULL;
}

const struct kval *kconfig_raw(const struct kconfig *c, const char *name, int i)
{
	char key[256];
	const struct kval *v;
	int parent;

	if (i >= 0) {
		snprintf(key, sizeof(key), "%s[%d]", name, i);
		v = kconfig_lookup(c, key);
		if (v)
			return ktext_blank(v->value) ? NULL : v;
		parent = kconfig_repeat_parent(c, i);
		if (parent) {
			snprintf(key, sizeof(key), "%s[%d]", name, parent);
			v = kconfig_lookup(c, key);
			if (v)
				return ktext_blank(v->value) ? NULL : v;
		}
	}
	return lookup_defined(c, name);
}

static const char *opt_value(const struct kconfig *c, const char *key,
			     struct korigin *from)
{
	const struct kval *v = kconfig_lookup(c, key);

	if (v && from)
		*from = v->origin;
	return v ? v->value : NULL;
}

/* What ${var} stands for in option name of test i, appended to out. */
static int substitute(struct kconfig *c, const char *name, const char *var,
		      int i, int parent, struct sbuf *out, struct korigin *last)
{
	char *key;
	const char *v;

	if (!strcmp(var, name)) {
		/*
		 * A self-reference appends to the default, unless the default
		 * contains itself. Without a default it is empty (upstream
		 * ktest.pl; 6.1 recursed until its 100-round guard died).
		 */
		char *self = xasprintf("${%s}", var);

		v = opt_value(c, var, NULL);
		if (v && !strstr(v, self))
			sbuf_adds(out, v);
		free(self);
		return 0;
	}
	key = xasprintf("%s[%d]", var, i);
	v = opt_value(c, key, last);
	free(key);
	if (!v && parent) {
		key = xasprintf("%s[%d]", var, parent);
		v = opt_value(c, key, last);
		free(key);
	}
	if (!v)
		v = opt_value(c, var, last);
	if (v) {
		sbuf_adds(out, v);
	} else if (!strcmp(var, "KERNEL_VERSION") && c->kernel_version) {
		char *ver = NULL;

		if (c->kernel_version(c->kernel_version_ctx, &ver))
			return -1;
		sbuf_adds(out, ver);
		free(ver);
	} else {
		sbuf_addf(out, "${%s}", var);
	}
	return 0;
}

/*
 * One pass of ktest.pl's __eval_option: the regex
 * /(.*?[^\\])\$\{(.*?)\}(.*)/ applied left to right, each time on what
 * follows the previous match (so a ${ right after a } waits for the next
 * pass), each ${VAR} replaced as substitute() says.
 */
static int eval_pass(struct kconfig *c, const char *name, const char *in,
		     int i, struct sbuf *out, struct korigin *last)
{
	int parent = i > 0 ? kconfig_repeat_parent(c, i) : 0;
	/* a leading space lets "not after a backslash" see position 0 */
	char *buf = xasprintf(" %s", in);
	const char *rest = buf;

	sbuf_reset(out);
	while (rest[0]) {
		const char *p, *close = NULL;
		char *var;
		int ret;

		for (p = rest + 1; *p; p++) {
			if (p[0] != '$' || p[1] != '{' || p[-1] == '\\')
				continue;
			close = strchr(p + 2, '}');
			break;	/* without a '}' later, nothing after matches */
		}
		if (!close)
			break;
		sbuf_addn(out, rest, (size_t)(p - rest));
		var = xstrndup(p + 2, (size_t)(close - p - 2));
		ret = substitute(c, name, var, i, parent, out, last);
		free(var);
		if (ret) {
			free(buf);
			return -1;
		}
		rest = close + 1;
	}
	sbuf_adds(out, rest);
	free(buf);
	/* drop the space added in front (only at the very start) */
	if (out->len && out->buf[0] == ' ') {
		memmove(out->buf, out->buf + 1, out->len);
		out->len--;
	}
	return 0;
}

const struct kevals *kconfig_evals(const struct kconfig *c, const char *name,
				   int i)
{
	char key[512];
	const struct kevals *e;
	int parent;

	snprintf(key, sizeof(key), "%s[%d]", name, i);
	e = strmap_get(&c->evals, key);
	if (e)
		return e;
	/*
	 * ktest.pl files a test's "=~" under the first test of an ITERATE
	 * block and then never finds it for the other iterations; we do.
	 */
	parent = i > 0 ? kconfig_repeat_parent(c, i) : 0;
	if (parent && parent != i) {
		snprintf(key, sizeof(key), "%s[%d]", name, parent);
		e = strmap_get(&c->evals, key);
		if (e)
			return e;
	}
	return strmap_get(&c->evals, name);
}

static int apply_evals(struct kconfig *c, const char *name, int i, char **val)
{
	const struct kevals *e = kconfig_evals(c, name, i);
	char err[256];

	if (!e)
		return 0;
	for (size_t k = 0; k < e->n; k++) {
		char *out;

		if (ksubst_apply(e->v[k].expr, *val, &out, err, sizeof(err))) {
			kdiag_error(c->diag, &e->v[k].origin, "%s =~ %s: %s",
				    name, e->v[k].expr, err);
			return -1;
		}
		free(*val);
		*val = out;
	}
	return 0;
}

/*
 * A value that never settles: report it where the option was set, and name
 * the value substituted last (the one that keeps bringing a reference back);
 * for one of ktest's own defaults, report it there instead.
 */
static void runaway(struct kconfig *c, const char *name, const char *value,
		    const struct korigin *o, const struct korigin *last,
		    const char *why)
{
	bool here = o->file && o->line > 0;
	const struct korigin *at = here || !last->file ? o : last;

	kdiag_error(c->diag, at, "%s: %s '%.100s': recursive ${...} references?",
		    name, why, value);
	if (here && last->file && last->line > 0 &&
	    (last->file != o->file || last->line != o->line))
		kdiag_note(c->diag, "%s:%d: a value in the loop", last->file,
			   last->line);
	else if (!here)
		kdiag_note(c->diag, "while expanding ktest's default for %s", name);
}

static int eval_option(struct kconfig *c, const char *name, const char *value,
		       int i, const struct korigin *o, char **out)
{
	struct korigin last = KORIGIN_NONE;
	struct sbuf prev, cur;
	const char *why = NULL;
	int rounds = 0;

	sbuf_init(&prev);
	sbuf_init(&cur);
	sbuf_adds(&cur, value);
	/* an option can expand to another option: repeat until stable */
	do {
		if (rounds++ > MAX_EVAL_ROUNDS) {
			why = "over 100 evaluations of";
			break;
		}
		sbuf_reset(&prev);
		sbuf_adds(&prev, sbuf_str(&cur));
		if (eval_pass(c, name, prev.buf, i, &cur, &last)) {
			sbuf_free(&prev);
			sbuf_free(&cur);
			return -1;
		}
		if (cur.len > MAX_VALUE_LEN) {
			why = "more than 1 MiB from";
			break;
		}
	} while (strcmp(prev.buf, sbuf_str(&cur)));
	sbuf_free(&prev);
	if (why) {
		runaway(c, name, value, o, &last, why);
		sbuf_free(&cur);
		return -1;
	}
	*out = sbuf_detach(&cur);
	if (apply_evals(c, name, i, out)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static bool is_global(const char *name)
{
	const struct kopt_desc *d = kopt_find(name);

	return d && (d->flags & KF_GLOBAL);
}

int kconfig_resolve(struct kconfig *c, const char *name, int i, char **out)
{
	const struct kval *v;

	*out = NULL;
	if (i < 0 || is_global(name)) {
		/* read from the default key; ktest.pl evaluates LOG_FILE at -1 */
		v = kconfig_lookup(c, name);
		if (!v)
			return 0;
		return eval_option(c, name, v->value, -1, &v->origin, out);
	}
	v = kconfig_raw(c, name, i);
	if (!v)
		return 0;
	return eval_option(c, name, v->value, i, &v->origin, out);
}

int kconfig_get(struct kconfig *c, enum kopt_id id, int i, char **out,
		struct korigin *origin)
{
	const char *name = kopt_table[id].name;
	const struct kval *v = is_global(name) || i < 0 ?
		kconfig_lookup(c, name) : kconfig_raw(c, name, i);

	if (origin)
		*origin = v ? v->origin : KORIGIN_NONE;
	return kconfig_resolve(c, name, i, out);
}

int kconfig_get_int(struct kconfig *c, enum kopt_id id, int i, long fallback,
		    long *out)
{
	struct korigin o;
	char *s;

	if (kconfig_get(c, id, i, &s, &o))
		return -1;
	*out = fallback;
	if (!s)
		return 0;
	if (ktext_blank(s)) {
		free(s);
		return 0;
	}
	if (!kopt_parse_int(s, out)) {
		kdiag_error(c->diag, &o, "%s: '%s' is not a whole number",
			    kopt_table[id].name, s);
		free(s);
		return -1;
	}
	free(s);
	return 0;
}

int kconfig_get_bool(struct kconfig *c, enum kopt_id id, int i, bool *out)
{
	long v;

	if (kconfig_get_int(c, id, i, 0, &v))
		return -1;
	*out = v != 0;
	return 0;
}

/* ---- checks ---- */

int kconfig_check_unused(struct kconfig *c)
{
	struct strmap seen;
	size_t it = 0;
	const char *key;
	void *val;
	bool ign;
	int n = 0;

	if (kconfig_get_bool(c, KOPT_IGNORE_UNUSED, -1, &ign) == 0 && ign)
		return 0;
	strmap_init(&seen);
	while (strmap_next(&c->opts, &it, &key, &val)) {
		const struct kval *v = val;
		char name[256];
		const char *b = strchr(key, '[');
		const char *sugg;

		/* ktest.pl strips s/\[.*\]// before looking the name up */
		if (b && strrchr(b, ']'))
			snprintf(name, sizeof(name), "%.*s%s", (int)(b - key), key,
				 strrchr(b, ']') + 1);
		else
			snprintf(name, sizeof(name), "%s", key);
		if (kopt_find(name) || strmap_has(&c->used, name) ||
		    strmap_has(&seen, name))
			continue;
		strmap_put(&seen, name, NULL);
		n++;
		kdiag_error(c->diag, &v->origin,
			    "unknown option %s is not used by anything; could be a typo", name);
		sugg = kopt_suggest(name);
		if (sugg)
			kdiag_note(c->diag, "did you mean %s?", sugg);
	}
	if (n)
		kdiag_note(c->diag,
			   "set IGNORE_UNUSED = 1 in DEFAULTS to allow options nothing uses");
	strmap_free(&seen, NULL);
	return n;
}

static int check_one(struct kconfig *c, const struct kopt_desc *d, int i,
		     struct strmap *reported)
{
	struct korigin o;
	char why[512], hint[256], key[600];
	char *v;
	int bad = 0;

	if (kconfig_get(c, kopt_id_of(d), i, &v, &o))
		return 1;
	if (v && !ktext_blank(v) && !kopt_check_value(d, v, why, sizeof(why), hint,
						 sizeof(hint))) {
		snprintf(key, sizeof(key), "%s@%s:%d", d->name,
			 o.file ? o.file : "", o.line);
		if (!strmap_has(reported, key)) {
			const char *name = kconfig_opt_name(c, kopt_id_of(d));

			strmap_put(reported, key, NULL);
			if (i > 0)
				kdiag_error(c->diag, &o, "%s (test %d): %s",
					    name, i, why);
			else
				kdiag_error(c->diag, &o, "%s: %s", name, why);
			if (hint[0])
				kdiag_note(c->diag, "%s", hint);
		}
		bad = 1;
	}
	free(v);
	return bad;
}

static int check_evals(struct kconfig *c)
{
	size_t it = 0;
	void *val;
	char err[256];
	int n = 0;

	while (strmap_next(&c->evals, &it, NULL, &val)) {
		const struct kevals *e = val;

		for (size_t k = 0; k < e->n; k++) {
			if (!ksubst_check(e->v[k].expr, err, sizeof(err)))
				continue;
			kdiag_error(c->diag, &e->v[k].origin, "=~ %s: %s",
				    e->v[k].expr, err);
			n++;
		}
	}
	return n;
}

/* Test numbers that some key names directly (NAME[i]). */
static void tests_with_keys(struct kconfig *c, struct strmap *set)
{
	size_t it = 0;
	const char *key;

	while (strmap_next(&c->opts, &it, &key, NULL)) {
		const char *b = strrchr(key, '[');

		if (b && !strmap_has(set, b))
			strmap_put(set, b, NULL);
	}
	it = 0;
	while (strmap_next(&c->evals, &it, &key, NULL)) {
		const char *b = strrchr(key, '[');

		if (b && !strmap_has(set, b))
			strmap_put(set, b, NULL);
	}
}

/*
 * An iteration after the first of an ITERATE block resolves exactly like the
 * first, unless something names it: no need to check it again (ITERATE
 * 100000 would otherwise resolve every option 100000 times).
 */
static bool same_as_parent(struct kconfig *c, struct strmap *named, int i)
{
	char b[32];
	int parent = kconfig_repeat_parent(c, i);

	if (!parent || parent == i)
		return false;
	snprintf(b, sizeof(b), "[%d]", i);
	return !strmap_has(named, b);
}

int kconfig_check_values(struct kconfig *c)
{
	struct strmap reported, named;
	int n = check_evals(c);

	if (n)
		return n;	/* resolving would only repeat these */
	strmap_init(&reported);
	strmap_init(&named);
	tests_with_keys(c, &named);
	for (size_t k = 0; k < KOPT__COUNT; k++)
		if (kopt_table[k].flags & KF_GLOBAL)
			n += check_one(c, &kopt_table[k], -1, &reported);
	for (int i = 1; i <= c->num_tests; i++) {
		if (same_as_parent(c, &named, i))
			continue;
		for (size_t k = 0; k < KOPT__COUNT; k++)
			if (!(kopt_table[k].flags & KF_GLOBAL))
				n += check_one(c, &kopt_table[k], i, &reported);
	}
	strmap_free(&reported, NULL);
	strmap_free(&named, NULL);
	return n;
}

static enum klevel level_of_subtype(struct kconfig *c, enum kopt_id id, int i)
{
	char *t = NULL;
	enum klevel l = KLEVEL_BUILD;

	if (kconfig_get(c, id, i, &t, NULL) == 0 && t && strcmp(t, "build"))
		l = KLEVEL_BOOT;
	free(t);
	return l;
}

enum klevel kconfig_test_level(struct kconfig *c, int i)
{
	char *type = NULL;
	enum klevel l = KLEVEL_BOOT;

	if (kconfig_get(c, KOPT_TEST_TYPE, i, &type, NULL) || !type)
		return KLEVEL_BUILD;
	if (!strcmp(type, "build") || !strcmp(type, "make_warnings_file"))
		l = KLEVEL_BUILD;
	else if (!strcmp(type, "install"))
		l = KLEVEL_INSTALL;
	else if (!strcmp(type, "bisect"))
		l = level_of_subtype(c, KOPT_BISECT_TYPE, i);
	else if (!strcmp(type, "config_bisect"))
		l = level_of_subtype(c, KOPT_CONFIG_BISECT_TYPE, i);
	else if (!strcmp(type, "patchcheck"))
		l = level_of_subtype(c, KOPT_PATCHCHECK_TYPE, i);
	free(type);
	return l;
}

/* What POWER_TYPE needs: POWER_CYCLE (ktest.pl's), or the driver's own. */
static size_t power_needs(struct kconfig *c, int i, enum kopt_id *out)
{
	char *pt = NULL;
	size_t n = 0;

	if (kconfig_get(c, KOPT_POWER_TYPE, i, &pt, NULL) || !pt ||
	    !strcmp(pt, "command")) {
		out[n++] = KOPT_POWER_CYCLE;
	} else if (!strcmp(pt, "pdudaemon")) {
		out[n++] = KOPT_PDUDAEMON_PDU;
		out[n++] = KOPT_PDUDAEMON_PORT;
	} else if (!strcmp(pt, "ipmi")) {
		out[n++] = KOPT_IPMI_HOST;
	}
	free(pt);
	return n;
}

/* Options test i must have, by ktest.pl's get_mandatory_configs() rules. */
static size_t needed_for(struct kconfig *c, int i, enum kopt_id *out)
{
	enum klevel l = kconfig_test_level(c, i);
	size_t n = 0;
	char *rt = NULL;

	out[n++] = KOPT_MACHINE;
	out[n++] = KOPT_BUILD_DIR;
	out[n++] = KOPT_OUTPUT_DIR;
	out[n++] = KOPT_LOCALVERSION;
	/* ktest.pl found out when the test began ("not defined") */
	if (!kconfig_get(c, KOPT_TEST_TYPE, i, &rt, NULL) && rt &&
	    !strcmp(rt, "make_min_config"))
		out[n++] = KOPT_OUTPUT_MIN_CONFIG;
	free(rt);
	rt = NULL;
	if (l == KLEVEL_BUILD)
		return n;
	out[n++] = KOPT_SSH_USER;
	out[n++] = KOPT_BUILD_TARGET;
	out[n++] = KOPT_TARGET_IMAGE;
	if (l != KLEVEL_BOOT)
		return n;
	if (!kconfig_get(c, KOPT_BOX_TYPE, i, &rt, NULL) && rt &&
	    !strcmp(rt, "qemu")) {
		free(rt);
		return n;	/* the qemu box is power, console and loader */
	}
	free(rt);
	rt = NULL;
	n += power_needs(c, i, out + n);
	out[n++] = KOPT_CONSOLE;
	if (kconfig_get(c, KOPT_REBOOT_TYPE, i, &rt, NULL) || !rt)
		return n;
	if (!strcmp(rt, "grub") || !strcmp(rt, "grub2bls")) {
		out[n++] = KOPT_GRUB_MENU;
	} else if (!strcmp(rt, "grub2")) {
		out[n++] = KOPT_GRUB_MENU;
		out[n++] = KOPT_GRUB_FILE;
	} else if (!strcmp(rt, "syslinux")) {
		out[n++] = KOPT_SYSLINUX_LABEL;
	}
	free(rt);
	return n;
}

static bool missing_in(struct kconfig *c, enum kopt_id id, int i)
{
	return !kconfig_raw(c, kopt_table[id].name, i);
}

const char *kconfig_opt_name(const struct kconfig *c, enum kopt_id id)
{
	return c->native ? kopt_lname(&kopt_table[id]) : kopt_table[id].name;
}

/* Where test i's type was set: the place to blame for what it needs. */
static struct korigin type_origin(struct kconfig *c, int i)
{
	struct korigin o = KORIGIN_NONE;
	char *v = NULL;

	kconfig_get(c, KOPT_TEST_TYPE, i, &v, &o);
	free(v);
	if (!o.file || o.line <= 0)
		o = (struct korigin){ c->main_file, 0 };
	return o;
}

struct missing {			/* one mandatory option some tests lack */
	struct sbuf tests;	/* "1, 2, 5" */
	int count;
	int first;
};

/* The mandatory options test i lacks; returns how many. */
static size_t lacks(struct kconfig *c, int i, enum kopt_id *need)
{
	enum kopt_id all[16];
	size_t na = needed_for(c, i, all), n = 0;

	for (size_t j = 0; j < na; j++)
		if (missing_in(c, all[j], i))
			need[n++] = all[j];
	return n;
}

/* Which tests lack which mandatory option, in one pass over the tests. */
static void find_missing(struct kconfig *c, struct missing *m)
{
	struct strmap named;
	enum kopt_id own[16], block[16];
	size_t nown, nblock = 0;

	strmap_init(&named);
	tests_with_keys(c, &named);
	for (int i = 1; i <= c->num_tests; i++) {
		const enum kopt_id *need = own;
		size_t n;

		/* an iteration like its block's first lacks the same */
		if (same_as_parent(c, &named, i)) {
			need = block;
			n = nblock;
		} else {
			n = nown = lacks(c, i, own);
			if (kconfig_repeat_parent(c, i) == i) {
				memcpy(block, own, nown * sizeof(*own));
				nblock = nown;
			}
		}
		for (size_t j = 0; j < n; j++) {
			struct missing *e = &m[need[j]];

			sbuf_addf(&e->tests, "%s%d", e->count ? ", " : "", i);
			if (!e->count++)
				e->first = i;
		}
	}
	strmap_free(&named, NULL);
}

int kconfig_check_mandatory(struct kconfig *c, kconfig_ask_fn ask, void *ctx)
{
	static const struct korigin answered = { "(answered at the prompt)", 0 };
	struct missing *m = xcalloc(KOPT__COUNT, sizeof(*m));
	int nmissing = 0;

	find_missing(c, m);
	for (size_t k = 0; k < KOPT__COUNT; k++) {
		const struct kopt_desc *d = &kopt_table[k];
		const char *name = kconfig_opt_name(c, (enum kopt_id)k);
		struct korigin o;

		if (m[k].count && ask) {
			char *ans = ask(ctx, name, d->help);

			if (ans && !ktext_blank(ans)) {
				kconfig_store(c, d->name, ans, &answered);
				m[k].count = 0;
			}
			free(ans);
		}
		if (m[k].count) {
			o = type_origin(c, m[k].first);
			nmissing++;
			kdiag_error(c->diag, &o,
				    "mandatory option %s is not set (needed by test%s %s)",
				    name, m[k].count > 1 ? "s" : "",
				    sbuf_str(&m[k].tests));
			kdiag_note(c->diag, "%s: %s", name, d->help);
		}
		sbuf_free(&m[k].tests);
	}
	free(m);
	return nmissing;
}
