// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST_TYPE = config_bisect: which option changes between a good and a bad
 * .config make the kernel fail. Our own search (ktest/config_bisect.c), no
 * config-bisect.pl.
 *
 * As ktest.pl: CONFIG_BISECT is the bad config; the good one is
 * CONFIG_BISECT_GOOD, else MIN_CONFIG, else what "make defconfig" gives
 * when it passes; MIN_CONFIG is not forced onto the candidates;
 * CONFIG_BISECT_TYPE build|boot|test; CONFIG_BISECT_CHECK (1, good, bad)
 * tests the ends first; BISECT_MANUAL asks for each verdict.
 *
 * Both configs are normalised by the tree's olddefconfig (in a scratch O=
 * in the state directory; OUTPUT_DIR is only for builds), and every change
 * between them is a suspect — also options that only one side has, which
 * config-bisect.pl never set. The changes go in Kconfig dependency order
 * when the tree's Kconfig can be read (what an option depends on first),
 * else in the bad config's order. Each candidate is the good config with
 * some changes from the bad one, normalised, and built with useconfig: as
 * one journalled step keyed by its digest, so a rerun replays the verdicts
 * through the same deterministic machine.
 *
 * The answer is printed as scripts/diffconfig prints changes, and the
 * smallest failing config found is kept (TMP_DIR/config_bisect_bad.config).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/kconfig.h"
#include "conf/kconfig_tree.h"
#include "conf/strmap.h"
#include "ktest/build.h"
#include "ktest/cmd.h"
#include "ktest/config_bisect.h"
#include "ktest/run.h"

struct cbis {
	struct krun *r;
	enum kstep_level level;
	char *work;			/* state dir/config-bisect-<i> */
	char *scratch;			/* work/o: olddefconfig's O= */
	struct kdotconfig good, bad;	/* normalised */
	struct kdotconfig_change *ch;
	size_t n;
	struct kcb *m;
	bool manual;
	int pass;
};

static void cbis_free(struct cbis *s)
{
	kcb_free(s->m);
	free(s->ch);
	kdotconfig_free(&s->good);
	kdotconfig_free(&s->bad);
	free(s->work);
	free(s->scratch);
}

/* olddefconfig of in into out (initialised here); -1 after printing why. */
static int normalise(struct cbis *s, const struct kdotconfig *in,
		     struct kdotconfig *out)
{
	struct kbuild_opts b;
	char why[1024];
	bool host;

	krun_scratch_opts(s->r, &b);
	kdotconfig_init(out);
	if (!kbuild_normalise(&b, s->scratch, in, out, &host, why, sizeof(why)))
		return 0;
	krun_print(s->r, "ktest: config_bisect: %s\n", why);
	if (host)
		s->r->infra = true;
	return -1;
}

static int load(struct cbis *s, enum kopt_id id, const char *path,
		struct kdotconfig *out)
{
	struct kdotconfig raw;
	int ret;

	kdotconfig_init(&raw);
	if (kdotconfig_read(&raw, path) < 0) {
		krun_print(s->r, "ktest: %s = %s: %s\n",
			   kconfig_opt_name(s->r->c, id), path, strerror(errno));
		s->r->config_error = true;
		kdotconfig_free(&raw);
		return -1;
	}
	ret = normalise(s, &raw, out);
	kdotconfig_free(&raw);
	return ret;
}

/* scripts/diffconfig's values: "is not set" is n */
static const char *dv(const char *v)
{
	return v ? v : "n";
}

static const char *short_name(const char *name)
{
	return strncmp(name, "CONFIG_", 7) ? name : name + 7;
}

static void print_change(struct krun *r, const struct kdotconfig_change *c)
{
	if (!c->in_a)
		krun_print(r, "+%s %s\n", short_name(c->name), dv(c->b));
	else if (!c->in_b)
		krun_print(r, "-%s %s\n", short_name(c->name), dv(c->a));
	else
		krun_print(r, " %s %s -> %s\n", short_name(c->name), dv(c->a),
			   dv(c->b));
}

/*
 * The changes in Kconfig dependency order (what an option depends on
 * first), when the tree's Kconfig reads; else as they are (bad's order).
 */
static void order(struct cbis *s)
{
	const char *tree = krun_opt(s->r, KOPT_BUILD_DIR);
	char *text = kdotconfig_format(&s->bad), *arch, why[512];
	char **names = xcalloc(s->n + 1, sizeof(char *));
	struct kdotconfig_change *sorted;
	struct kctree *t;
	struct strmap pos;

	arch = kctree_arch_from_config(text);
	free(text);
	t = kctree_load(tree, arch, why, sizeof(why));
	free(arch);
	if (!t) {
		krun_print(s->r, "Cannot read the Kconfig tree (%s): the changes go in the bad config's order\n",
			   why);
		free(names);
		return;
	}
	strmap_init(&pos);
	for (size_t k = 0; k < s->n; k++) {
		names[k] = (char *)s->ch[k].name;
		strmap_put(&pos, names[k], (void *)(uintptr_t)(k + 1));
	}
	kctree_order(t, names, s->n);
	sorted = xcalloc(s->n ? s->n : 1, sizeof(*sorted));
	for (size_t k = 0; k < s->n; k++)
		sorted[k] = s->ch[(uintptr_t)strmap_get(&pos, names[k]) - 1];
	free(s->ch);
	s->ch = sorted;
	krun_print(s->r, "Changes in Kconfig dependency order (%zu Kconfig files, %zu symbols)\n",
		   kctree_files(t), kctree_count(t));
	strmap_free(&pos, NULL);
	kctree_free(t);
	free(names);
}

/* The good config with the changes flagged in apply taken from the bad. */
static void candidate(struct cbis *s, const bool *apply, struct kdotconfig *c)
{
	char *text = kdotconfig_format(&s->good);

	kdotconfig_init(c);
	kdotconfig_parse(c, text, strlen(text));
	free(text);
	for (size_t k = 0; k < s->n; k++) {
		if (!apply[k])
			continue;
		/* an option the bad config lacks is off there: n where it
		 * is visible (absent would give its default) */
		kdotconfig_set(c, s->ch[k].name, s->ch[k].b);
	}
}

static void effect(struct cbis *s, const struct kdotconfig *c, bool *eff)
{
	for (size_t k = 0; k < s->n; k++)
		eff[k] = kdotconfig_has_value(c, s->ch[k].name, s->ch[k].b);
}

/* BISECT_MANUAL: the user's verdict, journalled; -1 at end of input. */
static int ask(struct cbis *s, const char *key, enum kcb_verdict *v)
{
	enum kverdict kv;

	if (krun_ask_verdict(s->r, key, "Is this config good, bad or skip? ",
			     &kv))
		return -1;
	*v = kv == KV_GOOD ? KCB_GOOD : kv == KV_BAD ? KCB_BAD : KCB_SKIP;
	return 0;
}

/* A step's verdict for the machine; -1: stop. */
static int verdict(struct cbis *s, const struct kstep_result *res,
		   enum kcb_verdict *v)
{
	bool earlier = krun_failed_before(s->level, res);

	switch (res->verdict) {
	case KV_GOOD:
		*v = KCB_GOOD;
		return 0;
	case KV_BAD:
		if (earlier) {
			krun_print(s->r, "This config fails on %s, before what is bisected: skipping it\n",
				   res->phase);
			*v = KCB_SKIP;
		} else {
			*v = KCB_BAD;
		}
		return 0;
	case KV_SKIP:
		*v = KCB_SKIP;
		return 0;
	default:
		return -1;
	}
}

/* Builds (boots, tests) a normalised candidate; INFRA retried. */
static int test_config(struct cbis *s, const struct kcb_step *st,
		       const char *path, const char *key, enum kcb_verdict *v)
{
	struct kstep_opts o = { .kind = "config_bisect", .key = key,
				.level = s->level, .left = (long)st->suspects,
				.steps_left = st->steps };
	struct kstep_result res;
	char *bt = xasprintf("useconfig:%s", path), *what;
	int ret;

	o.build_type = bt;
	o.settle_ms = krun_int(s->r, KOPT_BISECT_SLEEP_TIME, 60) * 1000;
	what = xasprintf("config %s", key);
	ret = krun_step_retry(s->r, &o, what, &res);
	free(what);
	free(bt);
	if (!ret)
		ret = verdict(s, &res, v);
	if (!ret && s->manual)
		ret = ask(s, key, v);
	return ret;
}

static const char *purpose(enum kcb_purpose p)
{
	switch (p) {
	case KCB_FOR_CHECK_BAD:
		return "Testing the bad config (CONFIG_BISECT_CHECK)";
	case KCB_FOR_CHECK_GOOD:
		return "Testing the good config (CONFIG_BISECT_CHECK)";
	case KCB_FOR_VERIFY:
		return "Testing the good config with only the changes found";
	default:
		return "Testing the good config with";
	}
}

/* One step of the machine; 1 when it has more, 0 done, -1 stop. */
static int step(struct cbis *s, const struct kcb_step *st)
{
	struct kdotconfig c, nc;
	bool *eff = xcalloc(s->n + 1, sizeof(bool));
	char key[32], *path = NULL;
	enum kcb_verdict v;
	int ret = -1;

	candidate(s, st->apply, &c);
	if (normalise(s, &c, &nc))
		goto out;
	effect(s, &nc, eff);
	if (st->purpose == KCB_FOR_SEARCH)
		krun_print(s->r, "%s %zu of the %zu changes (%zu suspects left)\n",
			   purpose(st->purpose), st->napply, s->n, st->suspects);
	else
		krun_print(s->r, "%s\n", purpose(st->purpose));
	if (!kcb_normalised(s->m, eff)) {
		krun_print(s->r, "After olddefconfig this config is known from earlier verdicts: no build\n");
		ret = 1;
		goto out_nc;
	}
	path = krun_save_config(s->r, s->work, &nc, key, sizeof(key));
	if (!path || test_config(s, st, path, key, &v))
		goto out_nc;
	s->pass++;
	if (v != KCB_SKIP)
		krun_print(s->r, "NEW %s CONFIG (pass %d)\n",
			   v == KCB_GOOD ? "GOOD" : "BAD", s->pass);
	else
		krun_print(s->r, "SKIPPED CONFIG (pass %d)\n", s->pass);
	kcb_report(s->m, v);
	ret = 1;
out_nc:
	kdotconfig_free(&nc);
out:
	kdotconfig_free(&c);
	free(path);
	free(eff);
	return ret;
}

/* The answer, as scripts/diffconfig prints changes; the smallest bad config kept. */
static int found(struct cbis *s)
{
	struct krun *r = s->r;
	const struct kcb_group *g;
	size_t ng = kcb_culprits(s->m, &g);
	const bool *min = kcb_minimal_bad(s->m);
	const char *tmp = krun_opt(r, KOPT_TMP_DIR);
	struct sbuf names;
	struct kdotconfig c;
	char *path;

	krun_print(r, "\nConfig bisect done: %zu build%s, %zu config%s known without one.\n",
		   kcb_tests(s->m), kcb_tests(s->m) == 1 ? "" : "s",
		   kcb_inferred(s->m), kcb_inferred(s->m) == 1 ? "" : "s");
	krun_print(r, "The good config fails with %s:\n",
		   ng == 1 && g[0].n == 1 ? "this change" : "these changes together");
	sbuf_init(&names);
	for (size_t k = 0; k < ng; k++) {
		if (g[k].n > 1)
			krun_print(r, "one or more of (skipped configs hid which):\n");
		for (size_t j = 0; j < g[k].n; j++) {
			print_change(r, &s->ch[g[k].idx[j]]);
			sbuf_addf(&names, "%s%s", names.len ? " " : "",
				  s->ch[g[k].idx[j]].name);
		}
	}
	kresults_set(&r->t->result_options, sbuf_str(&names));
	sbuf_free(&names);
	candidate(s, min, &c);
	path = xasprintf("%s/config_bisect_bad.config", tmp ? tmp : s->work);
	if (kdotconfig_write(&c, path) == 0)
		krun_print(r, "The smallest failing config found: %s\n", path);
	else
		krun_print(r, "ktest: cannot write %s: %s\n", path, strerror(errno));
	free(path);
	kdotconfig_free(&c);
	return krun_success(r);
}

/*
 * No good config given: "make defconfig", if that passes. NULL with *rc 1
 * when it failed (the test failed), -1 when the run must stop.
 */
static char *defconfig_good(struct cbis *s, int *rc)
{
	struct kstep_opts o = { .kind = "config_bisect-defconfig",
				.build_type = "defconfig", .level = s->level,
				.left = -1, .steps_left = -1 };
	struct kstep_result res;
	const char *out = krun_opt(s->r, KOPT_OUTPUT_DIR);
	char *from, *to;
	struct kdotconfig c;

	*rc = -1;
	krun_print(s->r, "No config specified, checking if defconfig works\n");
	o.settle_ms = krun_int(s->r, KOPT_BISECT_SLEEP_TIME, 60) * 1000;
	if (krun_step(s->r, &o, &res))
		return NULL;
	if (res.verdict == KV_INFRA) {
		krun_print(s->r, "ktest: defconfig could not be tested: %s\n", res.why);
		s->r->infra = true;
		return NULL;
	}
	if (res.verdict != KV_GOOD) {
		*rc = krun_fail(s->r, "Have no good config to compare with, please set CONFIG_BISECT_GOOD");
		return NULL;
	}
	from = xasprintf("%s/.config", out ? out : ".");
	to = xasprintf("%s/defconfig.config", s->work);
	kdotconfig_init(&c);
	if (kdotconfig_read(&c, from) < 0 || kdotconfig_write(&c, to) < 0) {
		krun_print(s->r, "ktest: cannot copy %s to %s: %s\n", from, to,
			   strerror(errno));
		free(to);
		to = NULL;
	}
	kdotconfig_free(&c);
	free(from);
	return to;
}

/* 0: bisect; 1: the test failed already; -1: stop the run. */
static int setup(struct cbis *s)
{
	struct krun *r = s->r;
	const char *badp = krun_opt(r, KOPT_CONFIG_BISECT);
	const char *goodp = krun_opt(r, KOPT_CONFIG_BISECT_GOOD);
	const char *minc = krun_opt(r, KOPT_MIN_CONFIG);
	const char *check = krun_opt(r, KOPT_CONFIG_BISECT_CHECK);
	struct kcb_options o = { 0 };
	char *dflt = NULL;
	int ret = -1;

	if (!krun_opt(r, KOPT_CONFIG_BISECT_TYPE) || !badp) {
		krun_print(r, "ktest: %s[%d] not defined\n",
			   badp ? "CONFIG_BISECT_TYPE" : "CONFIG_BISECT", r->i);
		r->config_error = true;
		return -1;
	}
	s->level = krun_level(r, KOPT_CONFIG_BISECT_TYPE);
	s->manual = krun_bool(r, KOPT_BISECT_MANUAL);
	s->work = xasprintf("%s/config-bisect-%d", r->state_dir, r->i);
	s->scratch = xasprintf("%s/o", s->work);
	if (kcmd_mkdirs_private(s->scratch) < 0) {
		krun_print(r, "ktest: cannot make %s: %s\n", s->scratch,
			   strerror(errno));
		return -1;
	}
	if (!goodp && minc)
		goodp = minc;
	if (minc) {
		krun_print(r, "Disabling 'MIN_CONFIG' for this test\n");
		krun_mask(r, KOPT_MIN_CONFIG);
	}
	if (!goodp) {
		goodp = dflt = defconfig_good(s, &ret);
		if (!goodp)
			return ret;
	}
	krun_print(r, "Normalising the good (%s) and the bad (%s) config with olddefconfig\n",
		   goodp, badp);
	if (load(s, goodp == minc ? KOPT_MIN_CONFIG : KOPT_CONFIG_BISECT_GOOD,
		 goodp, &s->good) ||
	    load(s, KOPT_CONFIG_BISECT, badp, &s->bad))
		goto out;
	s->n = kdotconfig_diff(&s->good, &s->bad, &s->ch);
	order(s);
	krun_print(r, "%zu option%s differ%s between the good and the bad config:\n",
		   s->n, s->n == 1 ? "" : "s", s->n == 1 ? "s" : "");
	for (size_t k = 0; k < s->n; k++)
		print_change(r, &s->ch[k]);
	if (check && *check && strcmp(check, "0")) {
		o.check_bad = strcmp(check, "good") != 0;
		o.check_good = strcmp(check, "bad") != 0;
	}
	s->m = kcb_new(s->n, &o);
	ret = 0;
out:
	free(dflt);
	return ret;
}

int krun_config_bisect(struct krun *r)
{
	struct cbis s = { .r = r };
	struct kcb_step st;
	int ret = setup(&s);

	if (ret) {
		cbis_free(&s);
		if (ret < 0)
			r->die = true;
		return ret;
	}
	for (;;) {
		kcb_next(s.m, &st);
		if (st.kind == KCB_FOUND) {
			ret = found(&s);
			break;
		}
		if (st.kind == KCB_FAILED) {
			ret = krun_fail(r, "%s", st.why);
			break;
		}
		if (step(&s, &st) < 0) {
			ret = -1;
			r->die = true;
			break;
		}
	}
	cbis_free(&s);
	return ret;
}
