// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST_TYPE = make_min_config: the smallest config that still boots (or
 * passes TEST), found with fewer builds than ktest.pl: the state machine
 * (ktest/min_config.c) turns off batches of options at once and halves a
 * batch that fails.
 *
 * As ktest.pl: MIN_CONFIG_TYPE boot|test; OUTPUT_MIN_CONFIG required and
 * rewritten (a temporary file, then rename) after every step, so an
 * interrupted run leaves a usable file; START_MIN_CONFIG, else MIN_CONFIG,
 * is where it starts, or OUTPUT_MIN_CONFIG when it exists and
 * USE_OUTPUT_MIN_CONFIG says so; IGNORE_CONFIG lists options never turned
 * off, and the options found needed are added to it after every step;
 * options that "make allnoconfig" sets the same are left out, the ones it
 * sets differently are kept; MIN_CONFIG and ADD_CONFIG are not forced onto
 * the trials. Any failure of a trial (build, boot, test) means needed.
 *
 * Where it differs:
 * - USE_OUTPUT_MIN_CONFIG unset: ktest.pl asks (and took the answer the
 *   wrong way round: "no" used OUTPUT_MIN_CONFIG). We ask on a terminal,
 *   yes meaning use it; without one, OUTPUT_MIN_CONFIG is used (the
 *   prompt's default), and we say so.
 * - The trials: the start config with the options removed so far and the
 *   ones tried "is not set" (ktest.pl dropped them, and olddefconfig turned
 *   the default-y ones back on), normalised by the tree's olddefconfig in a
 *   scratch O= in the state directory (OUTPUT_DIR is only for builds).
 *   OUTPUT_MIN_CONFIG lists the removed ones as "is not set" too: the file
 *   gives the config that was tested, also through olddefconfig.
 * - The order: from the tree's whole Kconfig (conf/kconfig_tree.h), what
 *   others depend on last; else the start config's order reversed.
 * - Each trial is one journalled step keyed by a digest of its normalised
 *   config. A rerun resumes: it starts from the copies of the start config
 *   and IGNORE_CONFIG taken when the test began (both are rewritten as it
 *   goes), replays the verdicts through the same machine and goes on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/kconfig.h"
#include "conf/kconfig_tree.h"
#include "conf/strmap.h"
#include "ktest/build.h"
#include "ktest/cmd.h"
#include "ktest/min_config.h"
#include "ktest/run.h"

#define NAMES_SHOWN 8

struct mc {
	struct krun *r;
	enum kstep_level level;
	char *work;			/* state dir/min-config-<i> */
	char *scratch;			/* work/o: olddefconfig's O= */
	const char *output;		/* OUTPUT_MIN_CONFIG */
	const char *ignore_path;	/* IGNORE_CONFIG, or NULL */
	struct kdotconfig start;	/* as read */
	struct kdotconfig ignore;	/* IGNORE_CONFIG when the test began */
	struct kdotconfig base;		/* start + ignore - allnoconfig's */
	char **cand;			/* the candidates, dependents first */
	size_t n;
	char **keep;			/* enabled options kept by the runner */
	size_t nkeep;
	struct kmc *m;
	unsigned char *seen;		/* kmc_state() last printed */
	int pass;
};

static void mc_free(struct mc *s)
{
	kmc_free(s->m);
	for (size_t k = 0; k < s->n; k++)
		free(s->cand[k]);
	free(s->cand);
	for (size_t k = 0; k < s->nkeep; k++)
		free(s->keep[k]);
	free(s->keep);
	free(s->seen);
	kdotconfig_free(&s->start);
	kdotconfig_free(&s->ignore);
	kdotconfig_free(&s->base);
	free(s->work);
	free(s->scratch);
}

/* A make in a scratch O= failed: the host's fault stops the run. */
static int scratch_failed(struct mc *s, bool host, const char *why)
{
	krun_print(s->r, "ktest: make_min_config: %s\n", why);
	if (host) {
		s->r->infra = true;
		return -1;
	}
	return krun_fail(s->r, "%s", why);
}

static int copy_config(struct mc *s, const char *from, const char *to)
{
	struct kdotconfig c;
	int ret = 0;

	kdotconfig_init(&c);
	if (kdotconfig_read(&c, from) < 0 || kdotconfig_write(&c, to) < 0) {
		krun_print(s->r, "ktest: cannot copy %s to %s: %s\n", from, to,
			   strerror(errno));
		ret = -1;
	}
	kdotconfig_free(&c);
	return ret;
}

/* ---- where to start ---- */

static bool exists(const char *path)
{
	struct stat st;

	return path && !stat(path, &st);
}

/* USE_OUTPUT_MIN_CONFIG unset: ask on a terminal, else use it. */
static bool ask_use_output(struct mc *s)
{
	char buf[64];

	if (!isatty(STDIN_FILENO)) {
		krun_print(s->r, "USE_OUTPUT_MIN_CONFIG is not set and stdin is not a terminal: starting from %s (set USE_OUTPUT_MIN_CONFIG = 0 to start from MIN_CONFIG)\n",
			   s->output);
		return true;
	}
	for (;;) {
		printf(" Use it as minconfig? [Y/n] ");
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return true;
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!buf[0] || !strcasecmp(buf, "y") || !strcasecmp(buf, "yes"))
			return true;
		if (!strcasecmp(buf, "n") || !strcasecmp(buf, "no"))
			return false;
	}
}

/* The start config as ktest.pl chooses it; NULL when there is none. */
static const char *choose_start(struct mc *s, const char *min)
{
	struct krun *r = s->r;
	const char *start = krun_opt(r, KOPT_START_MIN_CONFIG);

	if (start && *start)
		return start;		/* given explicitly: OUTPUT_ is not asked */
	start = min && *min ? min : NULL;
	if (!exists(s->output))
		return start;
	krun_print(r, "%s exists\n", s->output);
	if (krun_opt(r, KOPT_USE_OUTPUT_MIN_CONFIG)) {
		if (krun_int(r, KOPT_USE_OUTPUT_MIN_CONFIG, 0) > 0) {
			krun_print(r, "Using %s as MIN_CONFIG\n", s->output);
			return s->output;
		}
		krun_print(r, "Set to still use MIN_CONFIG as starting point\n");
		return start;
	}
	return ask_use_output(s) ? s->output : start;
}

/*
 * The start config and IGNORE_CONFIG, as copies in the work directory: a
 * rerun of an interrupted test starts from the same ones (the originals
 * are rewritten as it goes), or the journal would not replay.
 */
static int load_start(struct mc *s, const char *min)
{
	struct krun *r = s->r;
	char *startc = xasprintf("%s/start.config", s->work);
	char *ignorec = xasprintf("%s/ignore.config", s->work);
	const char *start;
	char idx[16];
	int ret = -1;

	snprintf(idx, sizeof(idx), "%d", r->i);
	if (kjournal_find(&r->j, "ev", "min_config", "test", idx, NULL) &&
	    exists(startc)) {
		krun_print(r, "Resuming make_min_config from the journal: starting from %s, the start config of the interrupted run\n",
			   startc);
	} else {
		start = choose_start(s, min);
		if (!start) {
			ret = krun_fail(r, "START_MIN_CONFIG or MIN_CONFIG not defined");
			goto out;
		}
		if (copy_config(s, start, startc))
			goto fail;
		if (s->ignore_path) {
			FILE *f = fopen(s->ignore_path, "a");	/* touch */

			if (!f || fclose(f)) {
				krun_print(r, "ktest: cannot create IGNORE_CONFIG %s: %s\n",
					   s->ignore_path, strerror(errno));
				goto fail;
			}
			if (copy_config(s, s->ignore_path, ignorec))
				goto fail;
		} else {
			unlink(ignorec);
		}
		if (kjournal_append(&r->j, "ev", "min_config", "test", idx,
				    "start", start, NULL)) {
			krun_print(r, "ktest: cannot write the journal %s: %s\n",
				   r->j.path, strerror(errno));
			goto fail;
		}
	}
	krun_print(r, "Load initial configs from %s\n", startc);
	if (kdotconfig_read(&s->start, startc) < 0 ||
	    (exists(ignorec) && kdotconfig_read(&s->ignore, ignorec) < 0)) {
		krun_print(r, "ktest: cannot read %s: %s\n", startc,
			   strerror(errno));
		goto fail;
	}
	ret = 0;
	goto out;
fail:
	r->config_error = true;
out:
	free(startc);
	free(ignorec);
	return ret;
}

/* ---- the candidates ---- */

static void add_name(char ***v, size_t *n, const char *name)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(name);
}

static const char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

/* ktest.pl's pruning: IGNORE_CONFIG's and allnoconfig's out. */
static void split_start(struct mc *s, const struct kdotconfig *allno)
{
	struct krun *r = s->r;
	const struct kdotconfig_entry *e, *a;
	size_t it = 0, same = 0, ign = 0;

	while ((e = kdotconfig_next(&s->start, &it))) {
		if (kdotconfig_get(&s->ignore, e->name)) {
			krun_log(r, "%s set by %s ... ignored\n", e->name,
				 base_name(s->ignore_path));
			ign++;
			continue;
		}
		a = kdotconfig_get(allno, e->name);
		if (a && a->value && e->value && !strcmp(a->value, e->value)) {
			/* not a candidate, but it stays as it is: olddefconfig
			 * would give it its default, not allnoconfig's value */
			krun_log(r, "%s set by allnoconfig ... ignored\n", e->name);
			kdotconfig_set(&s->base, e->name, e->value);
			same++;
			continue;
		}
		kdotconfig_set(&s->base, e->name, e->value);
		if (a && a->value) {
			krun_print(r, "%s is in allnoconfig as '%s' but it is '%s' in minconfig .. keeping\n",
				   e->name, a->value, e->value ? e->value : "n");
			if (kdotconfig_enabled(&s->start, e->name))
				add_name(&s->keep, &s->nkeep, e->name);
		} else if (kdotconfig_enabled(&s->start, e->name)) {
			add_name(&s->cand, &s->n, e->name);
		}
	}
	it = 0;
	while ((e = kdotconfig_next(&s->ignore, &it))) {
		kdotconfig_set(&s->base, e->name, e->value);
		if (kdotconfig_enabled(&s->ignore, e->name))
			add_name(&s->keep, &s->nkeep, e->name);
	}
	krun_print(r, "%zu options set as allnoconfig sets them and %zu in IGNORE_CONFIG are left alone; %zu enabled options to try (%zu kept)\n",
		   same, ign, s->n, s->nkeep);
}

/*
 * Dependents first: the tree's Kconfig order (what is depended on
 * first) reversed; else the start config's order reversed (a menu's
 * options come after the option that opens it).
 */
static void order(struct mc *s)
{
	const char *tree = krun_opt(s->r, KOPT_BUILD_DIR);
	char *text = kdotconfig_format(&s->start), *arch, why[512];
	struct kctree *t;

	arch = kctree_arch_from_config(text);
	free(text);
	t = tree ? kctree_load(tree, arch, why, sizeof(why)) : NULL;
	free(arch);
	if (t) {
		kctree_order(t, s->cand, s->n);
		krun_print(s->r, "Options in Kconfig dependency order (%zu Kconfig files, %zu symbols), dependents first\n",
			   kctree_files(t), kctree_count(t));
		kctree_free(t);
	} else {
		krun_print(s->r, "Cannot read the Kconfig tree (%s): the options go in the start config's order, reversed\n",
			   tree ? why : "no BUILD_DIR");
	}
	for (size_t i = 0, j = s->n; i + 1 < j; i++, j--) {
		char *x = s->cand[i];

		s->cand[i] = s->cand[j - 1];
		s->cand[j - 1] = x;
	}
}

static int setup(struct mc *s)
{
	struct krun *r = s->r;
	const char *type = krun_opt(r, KOPT_MIN_CONFIG_TYPE);
	const char *min = krun_opt(r, KOPT_MIN_CONFIG);
	struct kdotconfig allno;
	struct kbuild_opts b;
	char *dir, why[1024];
	bool host;
	int ret;

	if (!type)
		type = "boot";
	if (strcmp(type, "boot") && strcmp(type, "test"))
		return krun_fail(r, "Invalid MIN_CONFIG_TYPE '%s'\n make_min_config works only with 'boot' and 'test'",
				 type);
	s->level = krun_level(r, KOPT_MIN_CONFIG_TYPE);
	s->output = krun_opt(r, KOPT_OUTPUT_MIN_CONFIG);
	if (!s->output || !*s->output)
		return krun_fail(r, "OUTPUT_MIN_CONFIG not defined");
	s->ignore_path = krun_opt(r, KOPT_IGNORE_CONFIG);
	if (s->ignore_path && !*s->ignore_path)
		s->ignore_path = NULL;
	s->work = xasprintf("%s/min-config-%d", r->state_dir, r->i);
	s->scratch = xasprintf("%s/o", s->work);
	if (kcmd_mkdirs_private(s->scratch) < 0) {
		krun_print(r, "ktest: cannot make %s: %s\n", s->scratch,
			   strerror(errno));
		return -1;
	}
	ret = load_start(s, min);
	if (ret)
		return ret;
	/* ktest.pl's make_min_config builds without MIN_CONFIG (ADD_CONFIG
	 * is part of it there) */
	krun_mask(r, KOPT_MIN_CONFIG);
	krun_mask(r, KOPT_ADD_CONFIG);

	krun_scratch_opts(r, &b);
	dir = xasprintf("%s/allno", s->work);
	kdotconfig_init(&allno);
	krun_print(r, "make allnoconfig (in %s): what it sets is not ours to remove\n",
		   dir);
	ret = kbuild_scratch_config(&b, dir, "allnoconfig", &allno, &host, why,
				    sizeof(why));
	free(dir);
	if (ret) {
		kdotconfig_free(&allno);
		return scratch_failed(s, host, why);
	}
	split_start(s, &allno);
	kdotconfig_free(&allno);
	order(s);
	s->m = kmc_new(s->n, NULL);
	s->seen = xcalloc(s->n + 1, 1);
	return 0;
}

/* ---- the steps ---- */

/* base with the flagged candidates "is not set" */
static void trial(const struct mc *s, const bool *off, struct kdotconfig *c)
{
	kdotconfig_init(c);
	kdotconfig_merge(c, &s->base);
	for (size_t k = 0; k < s->n; k++)
		if (off[k])
			kdotconfig_set(c, s->cand[k], NULL);
}

/* OUTPUT_MIN_CONFIG: the last config that passed. */
static int save_output(struct mc *s)
{
	struct kdotconfig c;
	bool *off = xcalloc(s->n + 1, sizeof(bool));
	int ret = 0;

	for (size_t k = 0; k < s->n; k++)
		off[k] = kmc_state(s->m, k) == KMC_REMOVED;
	trial(s, off, &c);
	if (kdotconfig_write(&c, s->output) < 0) {
		krun_print(s->r, "ktest: cannot write OUTPUT_MIN_CONFIG %s: %s\n",
			   s->output, strerror(errno));
		ret = -1;
	}
	kdotconfig_free(&c);
	free(off);
	return ret;
}

/* IGNORE_CONFIG: what it held, and every option found needed. */
static int save_ignore(struct mc *s)
{
	struct kdotconfig c;
	int ret = 0;

	if (!s->ignore_path)
		return 0;
	kdotconfig_init(&c);
	kdotconfig_merge(&c, &s->ignore);
	for (size_t k = 0; k < s->n; k++)
		if (kmc_state(s->m, k) == KMC_KEPT)
			kdotconfig_set(&c, s->cand[k],
				       kdotconfig_get(&s->start, s->cand[k])->value);
	if (kdotconfig_write(&c, s->ignore_path) < 0) {
		krun_print(s->r, "ktest: cannot write IGNORE_CONFIG %s: %s\n",
			   s->ignore_path, strerror(errno));
		ret = -1;
	}
	kdotconfig_free(&c);
	return ret;
}

/* What changed since the last step, as ktest.pl says it; the files. */
static int record(struct mc *s)
{
	bool kept = false;

	for (size_t k = 0; k < s->n; k++) {
		enum kmc_state st = kmc_state(s->m, k);

		if (st == s->seen[k])
			continue;
		if (st == KMC_KEPT) {
			krun_print(s->r, "%s=%s is needed to boot the box... keeping\n",
				   s->cand[k],
				   kdotconfig_get(&s->start, s->cand[k])->value);
			kept = true;
		} else if (st == KMC_REMOVED) {
			krun_print(s->r, "%s is not needed, disabling\n",
				   s->cand[k]);
		} else if (st == KMC_STUCK) {
			krun_print(s->r, "disabling config %s did not change .config (selected): later\n",
				   s->cand[k]);
		}
		s->seen[k] = (unsigned char)st;
	}
	if (save_output(s) || (kept && save_ignore(s)))
		return -1;
	return 0;
}

static void print_asked(struct mc *s, const struct kmc_step *st)
{
	struct sbuf b;
	size_t shown = 0;

	sbuf_init(&b);
	for (size_t k = 0; k < s->n && shown < NAMES_SHOWN; k++)
		if (st->ask[k]) {
			sbuf_addf(&b, " %s", s->cand[k]);
			shown++;
		}
	if (st->nask > shown)
		sbuf_addf(&b, " and %zu more", st->nask - shown);
	krun_print(s->r, "\nTest with%s disabled (%s; %zu undecided)\n",
		   sbuf_str(&b), st->purpose == KMC_FOR_BATCH ? "a new batch" :
		   "half of a batch that failed", st->pending);
	sbuf_free(&b);
}

/* Builds (boots, tests) a normalised trial; INFRA retried. */
static int test_config(struct mc *s, const struct kmc_step *st,
		       const char *path, const char *key, enum kmc_verdict *v)
{
	struct kstep_opts o = { .kind = "min_config", .key = key,
				.level = s->level, .left = (long)st->pending,
				.steps_left = st->steps };
	struct kstep_result res;
	char *bt = xasprintf("useconfig:%s", path), *what;
	int ret;

	o.build_type = bt;
	o.settle_ms = krun_int(s->r, KOPT_SLEEP_TIME, 60) * 1000;
	what = xasprintf("config %s", key);
	ret = krun_step_retry(s->r, &o, what, &res);
	free(what);
	free(bt);
	/* a build, boot or test failure: something it lacks is needed */
	if (!ret)
		*v = res.verdict == KV_GOOD ? KMC_GOOD :
			res.verdict == KV_SKIP ? KMC_SKIP : KMC_BAD;
	return ret;
}

/* What olddefconfig made of the trial, for the machine. */
static bool effect(const struct mc *s, const struct kdotconfig *nc,
		   bool *off)
{
	bool lost = false;

	for (size_t k = 0; k < s->n; k++)
		off[k] = !kdotconfig_enabled(nc, s->cand[k]);
	for (size_t k = 0; k < s->nkeep; k++)
		if (!kdotconfig_enabled(nc, s->keep[k])) {
			krun_log(s->r, "%s (kept) would go too\n", s->keep[k]);
			lost = true;
		}
	return lost;
}

/* One step of the machine; 0 done, -1 stop, else the test's result + 1. */
static int step(struct mc *s, const struct kmc_step *st)
{
	struct kdotconfig c, nc;
	struct kbuild_opts b;
	bool *off = xcalloc(s->n + 1, sizeof(bool)), host, lost;
	char key[32], why[1024], *path = NULL;
	enum kmc_verdict v;
	int ret = -1;

	print_asked(s, st);
	trial(s, st->off, &c);
	krun_scratch_opts(s->r, &b);
	kdotconfig_init(&nc);
	if (kbuild_normalise(&b, s->scratch, &c, &nc, &host, why, sizeof(why))) {
		ret = scratch_failed(s, host, why);
		ret = ret < 0 ? -1 : ret + 1;
		goto out;
	}
	lost = effect(s, &nc, off);
	if (!kmc_normalised(s->m, off, lost)) {
		krun_print(s->r, "After olddefconfig: %s: no build\n",
			   lost ? "an option kept would go too" :
			   "known from earlier verdicts or nothing changed");
		ret = record(s) ? -1 : 1;
		goto out;
	}
	path = krun_save_config(s->r, s->work, &nc, key, sizeof(key));
	if (!path || test_config(s, st, path, key, &v))
		goto out;
	s->pass++;
	krun_print(s->r, "Pass %d: %s\n", s->pass, v == KMC_GOOD ? "it still works" :
		   v == KMC_SKIP ? "skipped (counted as failed)" : "failed");
	kmc_report(s->m, v);
	ret = record(s) ? -1 : 1;
out:
	kdotconfig_free(&nc);
	kdotconfig_free(&c);
	free(path);
	free(off);
	return ret;
}

static int finish(struct mc *s)
{
	struct krun *r = s->r;
	size_t stuck = kmc_count(s->m, KMC_STUCK);

	if (record(s))
		return -1;
	krun_print(r, "\nNo more configs found that we can disable\n");
	krun_print(r, "make_min_config done: %zu of %zu options removed, %zu needed, %zu kept on by options that select them; %zu build%s (ktest.pl: one per option), %zu trial%s known without one\n",
		   kmc_removed(s->m), s->n, kmc_kept(s->m), stuck,
		   kmc_tests(s->m), kmc_tests(s->m) == 1 ? "" : "s",
		   kmc_inferred(s->m), kmc_inferred(s->m) == 1 ? "" : "s");
	krun_print(r, "The minimal config: %s\n", s->output);
	return krun_success(r);
}

int krun_min_config(struct krun *r)
{
	struct mc s = { .r = r };
	struct kmc_step st;
	int ret;

	kdotconfig_init(&s.start);
	kdotconfig_init(&s.ignore);
	kdotconfig_init(&s.base);
	ret = setup(&s);
	while (!ret) {
		kmc_next(s.m, &st);
		if (st.kind == KMC_DONE) {
			ret = finish(&s);
			break;
		}
		ret = step(&s, &st);
		if (ret > 0)
			ret--;
	}
	mc_free(&s);
	if (ret < 0)
		r->die = true;
	return ret;
}
