// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest convert: the model a ktest.conf was read into, written in the native
 * format (doc/ktest-native.5).
 *
 * The model only knows keys: NAME for a default, NAME[n] for test n, and the
 * ITERATE blocks. The native file has a section per test (one per ITERATE
 * block), so each NAME[n] goes into the section of test n, wherever the
 * original wrote it. Reading the result must give the same keys with the
 * same values back: test titles are chosen so that they add no TEST_NAME the
 * original did not have, and values are quoted so that the native reader's
 * own rewrites (${env:...}, ${lower_case_option}) leave them as they are.
 * Before anything is printed, the result is read back and compared with the
 * model, so a conversion that would change a test is an error, not a
 * surprise at run time.
 */
#include "convert.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "text.h"

/* the read-back comparison costs tests x options lookups */
#define CHECK_MAX_TESTS 10000

struct ckey {			/* one key for a test section */
	const char *name;	/* upper-case option, or a variable */
	const char *value;
};

struct cedit {
	const char *name;
	const struct kevals *e;
};

struct cbucket {		/* what the model says about one test */
	struct ckey *keys;
	size_t nkeys;
	struct cedit *edits;
	size_t nedits;
};

struct csec {			/* one test section of the output */
	int first;
	int iterate;		/* > 1: an ITERATE block */
	struct cbucket b;
	char *title;
	bool titled_by_name;	/* the title is its TEST_NAME */
};

struct conv {
	struct kconfig *c;
	struct kdiag *d;
	int ntests;
	bool sections;
	struct cbucket *tests;	/* [1..ntests] */
	struct csec *secs;
	size_t nsecs;
	bool global_name;	/* a default TEST_NAME exists */
};

static const struct kopt_desc *option_of_lname(const char *name)
{
	const struct kopt_desc *d = kopt_find_any_case(name);

	return d && !strcmp(kopt_lname(d), name) ? d : NULL;
}

/* ---- quoting ---- */

/*
 * Would the native reader change the ${ at p in v? It resolves ${env:...}
 * and upper-cases ${lower_case_option}, unless the ${ follows a backslash.
 */
static bool reader_rewrites(const char *v, const char *p)
{
	const char *close;
	char name[64];
	size_t n;

	if ((p > v && p[-1] == '\\') || !(close = strchr(p + 2, '}')))
		return false;
	n = (size_t)(close - p - 2);
	if (!strncmp(p + 2, "env:", 4))
		return true;
	if (n >= sizeof(name))
		return false;
	memcpy(name, p + 2, n);
	name[n] = '\0';
	return option_of_lname(name) != NULL;
}

/* v in double quotes, such that the reader gives v back */
static void put_str(FILE *out, const char *v, bool refs)
{
	fputc('"', out);
	for (const char *p = v; *p; p++) {
		switch (*p) {
		case '\\':
			fputs("\\\\", out);
			break;
		case '"':
			fputs("\\\"", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '$':
			/* \${ is a ${ the reader keeps as written */
			if (refs && p[1] == '{' && reader_rewrites(v, p))
				fputc('\\', out);
			fputc('$', out);
			break;
		default:
			if ((unsigned char)*p < 0x20)
				fprintf(out, "\\%03o", (unsigned char)*p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

/* a word libconfuse reads unquoted, as it is: defconfig, 120, v6.1 */
static bool plain_word(const char *v)
{
	if (!isalnum((unsigned char)*v))
		return false;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("_.-", *v))
			return false;
	return true;
}

static void put_value(FILE *out, const char *v)
{
	if (plain_word(v))
		fputs(v, out);
	else
		put_str(out, v, true);
}

/*
 * ktest.pl reads any word as true, and the native format reads yes/no,
 * on/off and true/false as 1 and 0: a word there would change meaning.
 */
static int check_bool(struct conv *cv, const struct kopt_desc *d,
		      const struct kval *v)
{
	long n;

	if (!v || d->type != KT_BOOL || ktext_blank(v->value) ||
	    strstr(v->value, "${") || kopt_parse_int(v->value, &n))
		return 0;
	kdiag_error(cv->d, &v->origin,
		    "%s = %s: ktest.pl reads any word as true, the native format reads '%s' as a boolean",
		    d->name, v->value, v->value);
	kdiag_note(cv->d, "write %s = 1 (or 0) before converting", d->name);
	return -1;
}

static int check_bools(struct conv *cv)
{
	size_t it = 0;
	const char *key;
	void *val;
	int ret = 0;

	while (strmap_next(&cv->c->opts, &it, &key, &val)) {
		char name[256];
		const struct kopt_desc *d;
		int t;

		kconfig_split_key(key, name, sizeof(name), &t);
		d = kopt_find(name);
		if (d && check_bool(cv, d, val))
			ret = -1;
	}
	return ret;
}

/* ---- sorting the model's keys into tests ---- */

static void bucket_key(struct cbucket *b, const char *name, const char *value)
{
	b->keys = xrealloc(b->keys, (b->nkeys + 1) * sizeof(*b->keys));
	b->keys[b->nkeys].name = name;
	b->keys[b->nkeys].value = value;
	b->nkeys++;
}

static void bucket_edit(struct cbucket *b, const char *name,
			const struct kevals *e)
{
	b->edits = xrealloc(b->edits, (b->nedits + 1) * sizeof(*b->edits));
	b->edits[b->nedits].name = name;
	b->edits[b->nedits].e = e;
	b->nedits++;
}

static const char *bucket_value(const struct cbucket *b, const char *name)
{
	for (size_t i = 0; i < b->nkeys; i++)
		if (!strcmp(b->keys[i].name, name))
			return b->keys[i].value;
	return NULL;
}

static bool bucket_has_edit(const struct cbucket *b, const char *name)
{
	for (size_t i = 0; i < b->nedits; i++)
		if (!strcmp(b->edits[i].name, name))
			return true;
	return false;
}

static void bucket_free(struct cbucket *b)
{
	free(b->keys);
	free(b->edits);
}

/*
 * The test a NAME[n] key is for, or 0 (after a warning) when no test reads
 * it: [0], beyond the last test, not written as ktest.pl looks it up
 * ("[01]"), or an option that is only ever read from its default.
 */
static int key_test(struct conv *cv, const char *key, char *name,
		    size_t namelen, const struct korigin *o, const char *what)
{
	const struct kopt_desc *d;
	char again[600];
	int t;

	kconfig_split_key(key, name, namelen, &t);
	snprintf(again, sizeof(again), "%s[%d]", name, t);
	if (t <= 0 || strcmp(again, key)) {
		kdiag_warn(cv->d, o, "%s %s: no test reads this key; dropped", what,
			   key);
		return 0;
	}
	if (t > cv->ntests) {
		kdiag_warn(cv->d, o, "%s %s: there are only %d tests; dropped",
			   what, key, cv->ntests);
		return 0;
	}
	d = kopt_find(name);
	if (d && (d->flags & (KF_GLOBAL | KF_DEFAULTS_ONLY))) {
		kdiag_warn(cv->d, o, "%s %s: %s is only read from its default; dropped",
			   what, key, name);
		return 0;
	}
	return t;
}

/* one copy of each name, owned by names */
static const char *intern(struct strmap *names, const char *name)
{
	if (!strmap_has(names, name))
		strmap_put(names, name, xstrdup(name));
	return strmap_get(names, name);
}

/* Per-test keys point into the model; their names are interned. */
static void sort_keys(struct conv *cv, struct strmap *names)
{
	size_t it = 0;
	const char *key;
	void *val;

	while (strmap_next(&cv->c->opts, &it, &key, &val)) {
		const struct kval *v = val;
		char name[256];
		int t;

		if (!strchr(key, '['))
			continue;
		t = key_test(cv, key, name, sizeof(name), &v->origin, "option");
		if (!t)
			continue;
		bucket_key(&cv->tests[t], intern(names, name), v->value);
	}
	it = 0;
	while (strmap_next(&cv->c->evals, &it, &key, &val)) {
		const struct kevals *e = val;
		char name[256];
		int t;

		if (!strchr(key, '['))
			continue;
		t = key_test(cv, key, name, sizeof(name),
			     e->n ? &e->v[0].origin : NULL, "edit of");
		if (t)
			bucket_edit(&cv->tests[t], intern(names, name), e);
	}
}

/* ---- the sections ---- */

static struct csec *add_sec(struct conv *cv, int first, int iterate)
{
	struct csec *s;

	cv->secs = xrealloc(cv->secs, (cv->nsecs + 1) * sizeof(*cv->secs));
	s = &cv->secs[cv->nsecs++];
	memset(s, 0, sizeof(*s));
	s->first = first;
	s->iterate = iterate;
	return s;
}

/*
 * Test j of an ITERATE block read its options from j, then from the block's
 * first test. Unrolled into tests of their own, j gets those values itself.
 */
static void unrolled(struct conv *cv, int first, int j)
{
	const struct cbucket *p = &cv->tests[first], *own = &cv->tests[j];
	struct csec *s = add_sec(cv, j, 1);

	for (size_t i = 0; i < p->nkeys; i++) {
		const char *v = bucket_value(own, p->keys[i].name);

		bucket_key(&s->b, p->keys[i].name, v ? v : p->keys[i].value);
	}
	for (size_t i = 0; i < own->nkeys; i++)
		if (!bucket_value(p, own->keys[i].name))
			bucket_key(&s->b, own->keys[i].name, own->keys[i].value);
	for (size_t i = 0; i < own->nedits; i++)
		bucket_edit(&s->b, own->edits[i].name, own->edits[i].e);
	for (size_t i = 0; i < p->nedits; i++)
		if (!bucket_has_edit(own, p->edits[i].name))
			bucket_edit(&s->b, p->edits[i].name, p->edits[i].e);
}

static void copy_bucket(struct cbucket *to, const struct cbucket *from)
{
	for (size_t i = 0; i < from->nkeys; i++)
		bucket_key(to, from->keys[i].name, from->keys[i].value);
	for (size_t i = 0; i < from->nedits; i++)
		bucket_edit(to, from->edits[i].name, from->edits[i].e);
}

static void make_sections(struct conv *cv)
{
	int i = 1;

	while (i <= cv->ntests) {
		int count = kconfig_repeat_parent(cv->c, i) == i ?
			    kconfig_repeat_count(cv->c, i) : 1;
		bool targeted = false;

		if (count > cv->ntests - i + 1)
			count = cv->ntests - i + 1;
		for (int j = i + 1; j < i + count; j++)
			if (cv->tests[j].nkeys || cv->tests[j].nedits)
				targeted = true;
		if (count > 1 && targeted) {
			/* a key for one iteration: the block can't be one section */
			copy_bucket(&add_sec(cv, i, 1)->b, &cv->tests[i]);
			for (int j = i + 1; j < i + count; j++)
				unrolled(cv, i, j);
		} else {
			copy_bucket(&add_sec(cv, i, count)->b, &cv->tests[i]);
		}
		i += count;
	}
}

/* "test-12": the titles made up for tests, never taken from a TEST_NAME */
static bool made_up_title(const char *s)
{
	if (strncmp(s, "test-", 5) || !s[5])
		return false;
	return strspn(s + 5, "0123456789") == strlen(s + 5);
}

static bool title_ok(const char *v)
{
	if (ktext_blank(v) || strstr(v, "${") || made_up_title(v))
		return false;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20)
			return false;
	return true;
}

static void make_titles(struct conv *cv)
{
	struct strmap count;

	strmap_init(&count);
	for (size_t i = 0; i < cv->nsecs; i++) {
		const char *v = bucket_value(&cv->secs[i].b, "TEST_NAME");

		if (v && title_ok(v))
			strmap_put(&count, v, (void *)((uintptr_t)
					strmap_get(&count, v) + 1));
	}
	for (size_t i = 0; i < cv->nsecs; i++) {
		struct csec *s = &cv->secs[i];
		const char *v = bucket_value(&s->b, "TEST_NAME");

		if (v && title_ok(v) && (uintptr_t)strmap_get(&count, v) == 1) {
			s->title = xstrdup(v);
			s->titled_by_name = true;
		} else {
			s->title = xasprintf("test-%d", s->first);
		}
	}
	strmap_free(&count, NULL);
}

/* ---- writing ---- */

static int put_var(struct conv *cv, FILE *out, const char *indent,
		   const char *name, const char *value)
{
	if (!ktext_word(name) || kopt_find_any_case(name)) {
		kdiag_error(cv->d, NULL,
			    "%s: the native format has no way to write this name",
			    name);
		return -1;
	}
	fprintf(out, "%s\t%s = ", indent, name);
	put_value(out, value);
	fputc('\n', out);
	return 0;
}

static int put_edit(struct conv *cv, FILE *out, const char *indent,
		    const char *name, const struct kevals *e)
{
	const struct kopt_desc *d = kopt_find(name);

	if (!d && (!ktext_word(name) || kopt_find_any_case(name))) {
		kdiag_error(cv->d, e->n ? &e->v[0].origin : NULL,
			    "%s =~: the native format has no way to write this name",
			    name);
		return -1;
	}
	fprintf(out, "%sedit \"%s\" {\n%s\texpr = ", indent,
		d ? kopt_lname(d) : name, indent);
	if (e->n == 1) {
		put_str(out, e->v[0].expr, false);
	} else {
		fputs("{\n", out);
		for (size_t i = 0; i < e->n; i++) {
			fprintf(out, "%s\t\t", indent);
			put_str(out, e->v[i].expr, false);
			fputs(i + 1 < e->n ? ",\n" : "\n", out);
		}
		fprintf(out, "%s\t}", indent);
	}
	fprintf(out, "\n%s}\n", indent);
	return 0;
}

static void put_option(FILE *out, const char *indent,
		       const struct kopt_desc *d, const char *value)
{
	fprintf(out, "%s%s = ", indent, kopt_lname(d));
	put_value(out, value);
	fputc('\n', out);
}

static int put_globals(struct conv *cv, FILE *out)
{
	size_t it = 0, nvars = 0;
	const char *key;
	void *val;
	int ret = 0;

	while (strmap_next(&cv->c->opts, &it, &key, &val)) {
		const struct kval *v = val;
		const struct kopt_desc *d = kopt_find(key);

		if (strchr(key, '['))
			continue;
		if (d && kopt_id_of(d) == KOPT_NUM_TESTS && cv->sections)
			continue;	/* the sections count the tests */
		if (d)
			put_option(out, "", d, v->value);
		else
			nvars++;
	}
	if (nvars) {
		fputs("\nvars {\n", out);
		it = 0;
		while (strmap_next(&cv->c->opts, &it, &key, &val))
			if (!strchr(key, '[') && !kopt_find(key) &&
			    put_var(cv, out, "", key, ((struct kval *)val)->value))
				ret = -1;
		fputs("}\n", out);
	}
	it = 0;
	while (strmap_next(&cv->c->evals, &it, &key, &val)) {
		if (strchr(key, '['))
			continue;
		fputc('\n', out);
		if (put_edit(cv, out, "", key, val))
			ret = -1;
	}
	return ret;
}

static int put_section(struct conv *cv, FILE *out, const struct csec *s)
{
	const struct cbucket *b = &s->b;
	size_t nvars = 0;
	int ret = 0;

	fputs("\ntest ", out);
	put_str(out, s->title, true);
	fputs(" {\n", out);
	if (s->iterate > 1)
		fprintf(out, "\titerate = %d\n", s->iterate);
	for (size_t i = 0; i < b->nkeys; i++) {
		const struct kopt_desc *d = kopt_find(b->keys[i].name);

		if (!d) {
			nvars++;
			continue;
		}
		/* the title gives the name: unless a default one hides it */
		if (kopt_id_of(d) == KOPT_TEST_NAME && s->titled_by_name &&
		    !cv->global_name)
			continue;
		put_option(out, "\t", d, b->keys[i].value);
	}
	/* no name at all: the title must not become one */
	if (!bucket_value(b, "TEST_NAME") && !cv->global_name)
		fputs("\ttest_name = \"\"\n", out);
	if (nvars) {
		fputs("\tvars {\n", out);
		for (size_t i = 0; i < b->nkeys; i++)
			if (!kopt_find(b->keys[i].name) &&
			    put_var(cv, out, "\t", b->keys[i].name, b->keys[i].value))
				ret = -1;
		fputs("\t}\n", out);
	}
	for (size_t i = 0; i < b->nedits; i++)
		if (put_edit(cv, out, "\t", b->edits[i].name, b->edits[i].e))
			ret = -1;
	fputs("}\n", out);
	return ret;
}

static void put_header(struct conv *cv, FILE *out)
{
	const char *from = cv->c->main_file ? cv->c->main_file : "a ktest.conf";

	fprintf(out,
		"# Converted from %s\n"
		"# by ktest convert (see ktest-native(5)).\n"
		"#\n"
		"# IF/ELSE sections, := variables, INCLUDE and OVERRIDE were resolved\n"
		"# when the original was read: this file holds their outcome, as it was\n"
		"# for the -D values given to ktest convert (if any).\n\n",
		from);
}

static int write_native(struct conv *cv, FILE *out)
{
	int ret;

	put_header(cv, out);
	ret = put_globals(cv, out);
	for (size_t i = 0; i < cv->nsecs; i++)
		if (put_section(cv, out, &cv->secs[i]))
			ret = -1;
	return ret;
}

/* ---- the read-back check ---- */

static bool same_evals(const struct kevals *a, const struct kevals *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;

	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++)
		if (strcmp(a->v[k].expr, b->v[k].expr))
			return false;
	return true;
}

/* what test i (-1: the defaults) reads for name, in both models */
static int compare_one(struct conv *cv, const struct kconfig *n,
		       const char *name, int i)
{
	const struct kval *a = kconfig_raw(cv->c, name, i);
	const struct kval *b = kconfig_raw(n, name, i);
	char where[300];

	if (i > 0)
		snprintf(where, sizeof(where), "%s of test %d", name, i);
	else
		snprintf(where, sizeof(where), "%s", name);
	if ((a || b) && (!a || !b || strcmp(a->value, b->value))) {
		kdiag_error(cv->d, a ? &a->origin : NULL,
			    "internal error: converting changes %s: '%s' becomes '%s'",
			    where, a ? a->value : "(unset)", b ? b->value : "(unset)");
		return -1;
	}
	if (!same_evals(kconfig_evals(cv->c, name, i), kconfig_evals(n, name, i))) {
		kdiag_error(cv->d, NULL,
			    "internal error: converting changes the edits of %s",
			    where);
		return -1;
	}
	return 0;
}

static int compare_name(struct conv *cv, const struct kconfig *n,
			const char *name)
{
	const struct kopt_desc *d = kopt_find(name);

	if (compare_one(cv, n, name, -1))
		return -1;
	if (d && (d->flags & KF_GLOBAL))
		return 0;
	for (int i = 1; i <= cv->ntests; i++)
		if (compare_one(cv, n, name, i))
			return -1;
	return 0;
}

/* every option and variable, as every test reads it, is unchanged */
static int compare(struct conv *cv, const struct kconfig *n,
		   const struct strmap *names)
{
	const struct kval *num = kconfig_lookup(n, "NUM_TESTS");
	size_t it = 0;
	const char *key;

	if (cv->ntests > CHECK_MAX_TESTS)
		return 0;
	if (cv->sections && (!num || atoi(num->value) != cv->ntests)) {
		kdiag_error(cv->d, NULL,
			    "internal error: converting changes the number of tests");
		return -1;
	}
	for (size_t k = 0; k < KOPT__COUNT; k++)
		if (k != KOPT_NUM_TESTS &&
		    compare_name(cv, n, kopt_table[k].name))
			return -1;
	while (strmap_next(&cv->c->opts, &it, &key, NULL))
		if (!strchr(key, '[') && !kopt_find(key) &&
		    compare_name(cv, n, key))
			return -1;
	it = 0;
	while (strmap_next(names, &it, &key, NULL))
		if (!kopt_find(key) && compare_name(cv, n, key))
			return -1;
	return 0;
}

static int read_back(struct conv *cv, const char *text, size_t len,
		     const struct strmap *names)
{
	struct kdiag d;
	struct kconfig n;
	int ret;

	kdiag_init(&d);
	d.quiet = true;
	kconfig_init(&n, &d);
	n.no_includes = true;
	ret = knative_read_buf(&n, "(converted)", text, len);
	if (ret) {
		kdiag_error(cv->d, NULL,
			    "internal error: the converted file does not read back: %s",
			    d.last);
	} else {
		ret = compare(cv, &n, names);
	}
	kconfig_free(&n);
	return ret;
}

/* ---- the whole ---- */

static int count_tests(struct conv *cv)
{
	const struct kval *v = kconfig_lookup(cv->c, "NUM_TESTS");
	long n = 1;

	if (v && (!kopt_parse_int(v->value, &n) || n < 0 || n > 1000000)) {
		kdiag_error(cv->d, &v->origin, "NUM_TESTS: '%s' is not a number of tests",
			    v->value);
		return -1;
	}
	cv->ntests = (int)n;
	return 0;
}

/* any key or edit for one test, or an ITERATE block: test sections */
static bool needs_sections(const struct conv *cv)
{
	for (int i = 1; i <= cv->ntests; i++)
		if (cv->tests[i].nkeys || cv->tests[i].nedits ||
		    kconfig_repeat_count(cv->c, i) > 1)
			return true;
	return false;
}

int kconvert_native(struct kconfig *c, FILE *out)
{
	struct conv cv;
	struct strmap names;	/* every name met as NAME[n] */
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int ret = -1;

	memset(&cv, 0, sizeof(cv));
	cv.c = c;
	cv.d = c->diag;
	strmap_init(&names);
	if (count_tests(&cv) || check_bools(&cv))
		goto out;
	cv.tests = xcalloc((size_t)cv.ntests + 1, sizeof(*cv.tests));
	sort_keys(&cv, &names);
	cv.sections = needs_sections(&cv);
	cv.global_name = kconfig_lookup(c, "TEST_NAME") != NULL;
	if (cv.sections) {
		make_sections(&cv);
		make_titles(&cv);
	}
	mem = open_memstream(&text, &len);
	if (!mem) {
		kdiag_error(cv.d, NULL, "out of memory");
		goto out;
	}
	ret = write_native(&cv, mem);
	if (fclose(mem)) {
		kdiag_error(cv.d, NULL, "out of memory");
		ret = -1;
	}
	if (!ret)
		ret = read_back(&cv, text, len, &names);
	if (!ret && fwrite(text, 1, len, out) != len)
		ret = -1;
out:
	for (int i = 0; cv.tests && i <= cv.ntests; i++)
		bucket_free(&cv.tests[i]);
	free(cv.tests);
	for (size_t i = 0; i < cv.nsecs; i++) {
		bucket_free(&cv.secs[i].b);
		free(cv.secs[i].title);
	}
	free(cv.secs);
	strmap_free(&names, free);
	free(text);
	return ret;
}
