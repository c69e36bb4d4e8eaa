// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST_TYPE = patchcheck: is the series bisectable? Each commit from
 * PATCHCHECK_START (inclusive) to PATCHCHECK_END, oldest first, is checked
 * out and built (booted, tested by PATCHCHECK_TYPE) as one journalled step;
 * new warnings in the files a commit touches (from its diff, by libgit2)
 * and warnings beyond WARNINGS_FILE fail it. By default every commit is
 * checked and every failing one reported; PATCHCHECK_STOP_AT_FIRST keeps
 * ktest.pl's stop at the first.
 *
 * BOXES (pool.h), in a boot or test patchcheck: the commits are still
 * built one after the other in BUILD_DIR (a build's warnings are judged
 * against the one before), each into the build cache; each build that
 * passes is booted (and tested) on the next free box, which takes it from
 * the cache in a work tree of its own, while the next commits build. A
 * box that ends during a build takes the next commit queued at once (the
 * build's commands watch the boxes: kcmd_set_watch). PATCHCHECK_PIPELINE
 * does the same with one box.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/bisect.h"
#include "ktest/cmd.h"
#include "ktest/patchcheck.h"
#include "ktest/pool.h"
#include "ktest/run.h"
#include "ktest/vcs.h"

static const char *stage_name(enum kp_stage s)
{
	switch (s) {
	case KP_FAIL_BUILD:
		return "build";
	case KP_FAIL_WARNING:
		return "warning";
	case KP_FAIL_BOOT:
		return "boot";
	case KP_FAIL_TEST:
		return "test";
	default:
		return "ok";
	}
}

static enum kp_stage to_stage(const struct kstep_result *res)
{
	if (res->verdict == KV_GOOD)
		return KP_OK;
	if (!strcmp(res->phase, "build"))
		return strstr(res->why, "warning") ? KP_FAIL_WARNING : KP_FAIL_BUILD;
	if (!strcmp(res->phase, "boot") || !strcmp(res->phase, "install"))
		return KP_FAIL_BOOT;
	return KP_FAIL_TEST;
}

static int list_series(struct krun *r, struct kvcs *v, struct kvcs_list *l)
{
	const char *start = krun_opt(r, KOPT_PATCHCHECK_START);
	const char *end = krun_opt(r, KOPT_PATCHCHECK_END);
	struct kvcs_commit s, e;
	int ret;

	if (!start || !*start) {
		krun_print(r, "ktest: PATCHCHECK_START[%d] not defined\n", r->i);
		return -1;
	}
	if (!end || !*end)
		end = "HEAD";
	if (kvcs_resolve(v, start, &s)) {
		krun_print(r, "ktest: PATCHCHECK_START = %s: %s\n", start,
			   kvcs_error(v));
		return -1;
	}
	if (kvcs_resolve(v, end, &e)) {
		krun_print(r, "ktest: PATCHCHECK_END = %s: %s\n", end, kvcs_error(v));
		kvcs_commit_clear(&s);
		return -1;
	}
	if (krun_bool(r, KOPT_PATCHCHECK_CHERRY))
		ret = kvcs_cherry(v, s.id, e.id, l);
	else
		ret = kvcs_range(v, s.id, e.id, false, l);
	if (ret)
		krun_print(r, "ktest: patchcheck %s..%s: %s\n", start, end,
			   kvcs_error(v));
	kvcs_commit_clear(&s);
	kvcs_commit_clear(&e);
	return ret;
}

static char **resolve_list(struct krun *r, struct kvcs *v, enum kopt_id id,
			   size_t *n, bool full)
{
	const char *s = krun_opt(r, id);
	char *copy, *save = NULL, *w, **out = NULL;

	*n = 0;
	if (!s)
		return NULL;
	copy = xstrdup(s);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		struct kvcs_commit c;

		out = xrealloc(out, (*n + 1) * sizeof(*out));
		if (full && !kvcs_resolve(v, w, &c)) {
			out[(*n)++] = xstrdup(c.id);
			kvcs_commit_clear(&c);
		} else {
			out[(*n)++] = xstrdup(w);
		}
	}
	free(copy);
	return out;
}

/* The step of one commit of the series, as far as level goes. */
static int step_opts(struct krun *r, struct kvcs *v, struct kpatchcheck *p,
		     const struct kp_step *st, struct strmap *subjects,
		     struct kp_seen *seen, struct kstep_opts *o,
		     char ***touched, size_t *ntouched)
{
	memset(o, 0, sizeof(*o));
	o->kind = "patchcheck";
	o->level = krun_level(r, KOPT_PATCHCHECK_TYPE);
	o->steps_left = -1;
	o->commit = st->id;
	o->left = (long)(kpatchcheck_total(p) - st->index - 1);
	o->subject = strmap_get(subjects, st->id);
	o->noclean = !st->clean;
	o->check_warnings = st->check_warnings_file;
	o->force_checkout = true;
	o->settle_ms = krun_int(r, KOPT_PATCHCHECK_SLEEP_TIME, 60) * 1000;
	*touched = NULL;
	*ntouched = 0;
	if (st->check_touched && kvcs_touched_files(v, st->id, touched, ntouched)) {
		krun_print(r, "ktest: %s\n", kvcs_error(v));
		return -1;
	}
	o->touched = (const char *const *)*touched;
	o->ntouched = *ntouched;
	o->seen = seen;
	return 0;
}

/*
 * One commit's step, reported: all of it on one box; with a pool, its
 * build only ("patchcheck-build", kept in the build cache for the box
 * that boots it). *passed: it did.
 */
static int check_one(struct krun *r, struct kvcs *v, struct kpatchcheck *p,
		     const struct kp_step *st, struct strmap *subjects,
		     struct kp_seen *seen, const char *bt, bool build_only,
		     bool *passed)
{
	struct kstep_opts o;
	struct kstep_result res;
	char **touched, what[32];
	size_t ntouched;
	int ret;

	if (step_opts(r, v, p, st, subjects, seen, &o, &touched, &ntouched))
		return -1;
	o.build_type = bt;
	if (build_only) {
		o.kind = "patchcheck-build";
		o.level = KSTEP_BUILD;
		o.cache_store = true;
	}
	krun_print(r, "\nProcessing commit \"%.12s %s\" (%zu of %zu)%s\n",
		   st->id, o.subject ? o.subject : "", st->index + 1,
		   kpatchcheck_total(p), build_only ? ": its build" : "");
	snprintf(what, sizeof(what), "commit %.12s", st->id);
	/* INFRA retried; once the retries are spent, the run stops */
	ret = krun_step_retry(r, &o, what, &res);
	kvcs_free_paths(touched, ntouched);
	if (ret > 0) {		/* stopped: an earlier commit failed */
		krun_print(r, "%.12s: its build stopped, not needed (PATCHCHECK_STOP_AT_FIRST: an earlier commit failed)\n",
			   st->id);
		*passed = false;
		return 0;
	}
	if (ret)
		return -1;
	kpatchcheck_report(p, to_stage(&res), res.why[0] ? res.why : NULL);
	*passed = to_stage(&res) == KP_OK;
	return 0;
}

/* BOXES: a commit whose build passed, booted (tested) on a box */
struct pc_boot {
	char id[KB_ID_LEN];
	size_t index;		/* in the series */
	char what[32];
	struct kstep_opts o;
};

struct pc_sched {
	struct krun *r;
	struct kpool *pool;
	struct kpatchcheck *p;
	struct strmap *subjects;
	const char *bt;
	struct pc_boot *queue;	/* built, waiting for a box, oldest first */
	size_t nqueue;
	struct pc_boot box[KPOOL_MAX];
	bool failed;		/* a box's end, taken during a build, stops the run */
	size_t building;	/* the commit being built (its series index) */
};

/* With PATCHCHECK_STOP_AT_FIRST and a failure: the series' first one. */
static bool past_first(struct pc_sched *c, size_t index)
{
	const struct kp_failure *f;

	if (!kpatchcheck_failures(c->p, &f) ||
	    !krun_bool(c->r, KOPT_PATCHCHECK_STOP_AT_FIRST))
		return false;
	return index > kpatchcheck_index(c->p, f[0].id);
}

/* The boots queued go to the free boxes, oldest first. */
static int dispatch(struct pc_sched *c)
{
	struct kpool *pool = c->pool;

	for (size_t k = 0; k < pool->n && c->nqueue; k++) {
		struct pc_boot *b = &c->box[k];

		if (kpool_busy(pool, k))
			continue;
		*b = c->queue[0];
		memmove(c->queue, c->queue + 1, --c->nqueue * sizeof(*c->queue));
		memset(&b->o, 0, sizeof(b->o));
		b->o.kind = "patchcheck";
		b->o.level = krun_level(c->r, KOPT_PATCHCHECK_TYPE);
		b->o.steps_left = -1;
		b->o.left = -1;
		b->o.commit = b->id;
		b->o.subject = strmap_get(c->subjects, b->id);
		b->o.build_type = c->bt;
		b->o.noclean = true;
		b->o.force_checkout = true;
		b->o.cache_build = true;
		b->o.settle_ms = krun_int(c->r, KOPT_PATCHCHECK_SLEEP_TIME, 60) * 1000;
		snprintf(b->what, sizeof(b->what), "commit %.12s", b->id);
		krun_print(c->r, "Booting %.12s %s (box %s)\n", b->id,
			   b->o.subject ? b->o.subject : "", pool->names[k]);
		if (kpool_start(pool, k, &b->o, b->what))
			return -1;
	}
	return 0;
}

/*
 * The boxes that ended within timeout_ms (-1: the first one, however long
 * it takes; 0: only those that have): their failures recorded late, and
 * with PATCHCHECK_STOP_AT_FIRST what comes after the first failure dropped.
 */
static int collect_boots(struct pc_sched *c, int timeout_ms)
{
	struct kpool *pool = c->pool;

	while (kpool_any_busy(pool)) {
		struct kstep_result res;
		enum kp_stage st;
		size_t k;
		int got = kpool_wait(pool, timeout_ms, &k, &res);

		if (got < 0)
			return -1;
		if (got > 0)
			return 0;
		st = to_stage(&res);
		if (st == KP_OK)
			krun_print(c->r, "%.12s (box %s): passed\n",
				   c->box[k].id, pool->names[k]);
		else
			krun_print(c->r, "%.12s (box %s): failed (%s)\n",
				   c->box[k].id, pool->names[k], stage_name(st));
		if (st != KP_OK)
			kpatchcheck_late_failure(c->p, c->box[k].id, st,
						 res.why[0] ? res.why : NULL);
		for (size_t j = 0; j < pool->n; j++) {
			if (!kpool_busy(pool, j) || !past_first(c, c->box[j].index))
				continue;
			kpool_stop(pool, j);
			krun_print(c->r, "%.12s (box %s): stopped, after the first failure (PATCHCHECK_STOP_AT_FIRST)\n",
				   c->box[j].id, pool->names[j]);
		}
		while (c->nqueue && past_first(c, c->queue[c->nqueue - 1].index))
			c->nqueue--;
		if (timeout_ms)
			return 0;
	}
	return 0;
}

/* kcmd_watch: the boxes, while ktest builds */
static int box_fds(void *ctx, struct pollfd *pf, int max)
{
	struct pc_sched *c = ctx;

	return c->failed ? 0 : kpool_pollfds(c->pool, pf, max);
}

/* A box ended during a build: its result taken, the free boxes given the
 * next commits queued. */
static void box_ended(void *ctx)
{
	struct pc_sched *c = ctx;

	if (!c->failed && (collect_boots(c, 0) || dispatch(c)))
		c->failed = true;
	/* PATCHCHECK_STOP_AT_FIRST: the build after an earlier failure stops */
	if (!c->failed && past_first(c, c->building)) {
		c->r->cancel_step = true;
		kcmd_stop_running();
	}
}

/*
 * One commit's build (with a pool) while the boxes are watched: a box
 * that ends meanwhile takes the next commit queued without waiting for
 * the build to end.
 */
static int build_one(struct pc_sched *c, struct kvcs *v, const struct kp_step *st,
		     struct kp_seen *seen, bool *passed)
{
	const struct kcmd_watch w = { .fds = box_fds, .ready = box_ended,
				      .ctx = c };
	int ret;

	c->building = st->index;
	kcmd_set_watch(&w);
	ret = check_one(c->r, v, c->p, st, c->subjects, seen, c->bt, true,
			passed);
	c->r->cancel_step = false;	/* set after the step's end: nothing to stop */
	kcmd_set_watch(NULL);
	return ret || c->failed ? -1 : 0;
}

/*
 * The series in order. With a pool (BOXES), only the builds are made
 * here, in order in BUILD_DIR (warnings judged as on one box); each build
 * that passes goes to the next free box, which boots (tests) it from the
 * build cache in a work tree of its own while the next commits build.
 */
static int check_series(struct krun *r, struct kvcs *v, struct kpatchcheck *p,
			struct strmap *subjects, struct kpool *pool)
{
	struct kp_seen *seen = kp_seen_new();
	const char *min = krun_opt(r, KOPT_MIN_CONFIG);
	char *bt = min && *min ? xasprintf("useconfig:%s", min) : xstrdup("oldconfig");
	struct pc_sched c = { .r = r, .pool = pool, .p = p,
			      .subjects = subjects, .bt = bt };
	bool passed;
	int ret = 0;

	if (pool) {
		pool->box0_own_tree = true;
		c.queue = xcalloc(kpatchcheck_total(p) + 1, sizeof(*c.queue));
	}
	while (!ret) {
		struct kp_step st;

		if (pool)
			ret = collect_boots(&c, 0) ? -1 : dispatch(&c);
		kpatchcheck_next(p, &st);
		if (ret || st.done)
			break;
		if (pool)
			ret = build_one(&c, v, &st, seen, &passed);
		else
			ret = check_one(r, v, p, &st, subjects, seen, bt,
					false, &passed);
		if (!ret && pool && passed && !past_first(&c, st.index)) {
			struct pc_boot *b = &c.queue[c.nqueue++];

			snprintf(b->id, sizeof(b->id), "%s", st.id);
			b->index = st.index;
		}
	}
	while (!ret && pool && (c.nqueue || kpool_any_busy(pool)))
		ret = dispatch(&c) || collect_boots(&c, -1) ? -1 : 0;
	if (pool && ret)
		kpool_finish(pool);	/* the other boxes' boots kept */
	if (pool)
		kpool_stop_all(pool);
	free(c.queue);
	free(bt);
	kp_seen_free(seen);
	return ret;
}

static int verdict(struct krun *r, struct kpatchcheck *p,
		   struct strmap *subjects)
{
	const struct kp_failure *f;
	size_t n = kpatchcheck_failures(p, &f);
	struct sbuf b;
	int ret;

	if (!n) {
		krun_print(r, "All %zu commits of the series passed.\n",
			   kpatchcheck_total(p));
		return krun_success(r);
	}
	sbuf_init(&b);
	sbuf_addf(&b, "%zu of %zu commits break the series:", n,
		  kpatchcheck_total(p));
	for (size_t k = 0; k < n; k++) {
		const char *subj = strmap_get(subjects, f[k].id);

		sbuf_addf(&b, "\n  %.12s %s: %s%s%s", f[k].id, subj ? subj : "",
			  stage_name(f[k].stage), f[k].why ? ": " : "",
			  f[k].why ? f[k].why : "");
	}
	kresults_set(&r->t->result_commit, f[0].id);
	kresults_set(&r->t->result_subject, strmap_get(subjects, f[0].id));
	ret = krun_fail(r, "%s", sbuf_str(&b));
	sbuf_free(&b);
	return ret;
}

int krun_patchcheck(struct krun *r)
{
	struct kvcs *v = krun_vcs(r);
	struct kvcs_list l = { 0 };
	struct kp_options ko = { 0 };
	struct kpatchcheck *p = NULL;
	struct strmap subjects;
	struct kvcs_commit head = { 0 };
	bool have_head = false;
	char **ids = NULL, **skip = NULL, **ign = NULL;
	size_t nskip = 0, nign = 0;
	const char *wf;
	struct kpool *pool = NULL;
	char why[512];
	int ret = -1;

	strmap_init(&subjects);
	if (!v || !krun_opt(r, KOPT_PATCHCHECK_TYPE)) {
		if (v)
			krun_print(r, "ktest: PATCHCHECK_TYPE[%d] not defined\n", r->i);
		goto out;
	}
	if (krun_check_tree(r, v) || list_series(r, v, &l))
		goto out;
	have_head = kvcs_head(v, &head) == 0;
	ids = xcalloc(l.n + 1, sizeof(char *));
	krun_print(r, "Going to test the following commits:\n");
	for (size_t k = 0; k < l.n; k++) {
		ids[k] = l.v[k].id;
		strmap_put(&subjects, l.v[k].id, xstrdup(l.v[k].subject ?
							 l.v[k].subject : ""));
		krun_print(r, "%s %s\n", l.v[k].id, l.v[k].subject ? l.v[k].subject : "");
	}
	skip = resolve_list(r, v, KOPT_PATCHCHECK_SKIP, &nskip, true);
	ign = resolve_list(r, v, KOPT_IGNORE_WARNINGS, &nign, false);
	wf = krun_opt(r, KOPT_WARNINGS_FILE);
	ko.type = krun_level(r, KOPT_PATCHCHECK_TYPE) == KSTEP_BUILD ? KP_BUILD :
		krun_level(r, KOPT_PATCHCHECK_TYPE) == KSTEP_BOOT ? KP_BOOT : KP_TEST;
	ko.noclean = krun_bool(r, KOPT_BUILD_NOCLEAN);
	ko.stop_at_first = krun_bool(r, KOPT_PATCHCHECK_STOP_AT_FIRST);
	ko.warnings_file = wf && *wf;
	ko.skip = (const char *const *)skip;
	ko.nskip = nskip;
	ko.ignore_warnings = (const char *const *)ign;
	ko.nignore = nign;
	p = kpatchcheck_new((const char *const *)ids, l.n, &ko);
	if (nskip) {
		const char **sk;
		size_t ns = kpatchcheck_skipped(p, &sk);

		krun_print(r, "Skipping the following commits:\n");
		for (size_t k = 0; k < ns; k++)
			krun_print(r, "%s\n", sk[k]);
	}
	/* PATCHCHECK_PIPELINE: one box is a pool too (it boots while ktest
	 * builds on) */
	pool = kpool_new(r, krun_bool(r, KOPT_PATCHCHECK_PIPELINE) &&
			 krun_level(r, KOPT_PATCHCHECK_TYPE) >= KSTEP_BOOT,
			 why, sizeof(why));
	if (!pool && why[0]) {
		krun_print(r, "ktest: test %d: %s\n", r->i, why);
		r->config_error = true;
		goto out;
	}
	if (pool && krun_level(r, KOPT_PATCHCHECK_TYPE) < KSTEP_BOOT) {
		krun_print(r, "BOXES: one box (%s): a build patchcheck builds each commit on top of the one before\n",
			   pool->names[0]);
		kpool_free(pool);
		pool = NULL;
	}
	if (krun_bool(r, KOPT_PATCHCHECK_PIPELINE)) {
		if (!pool)
			krun_print(r, "PATCHCHECK_PIPELINE: a build patchcheck has no boot to build beside\n");
		else if (pool->n == 1)
			krun_print(r, "PATCHCHECK_PIPELINE: box %s boots each commit while the next ones build\n",
				   pool->names[0]);
	}
	if (check_series(r, v, p, &subjects, pool))
		goto out;
	ret = verdict(r, p, &subjects);
out:
	/* the tree goes back where it was (ktest.pl left the last commit) */
	if (have_head) {
		if (kvcs_checkout_again(v, head.id))
			krun_print(r, "ktest: cannot put BUILD_DIR back at %.12s: %s\n",
				   head.id, kvcs_error(v));
		kvcs_commit_clear(&head);
	}
	if (p)
		kpatchcheck_free(p);
	kpool_free(pool);
	for (size_t k = 0; k < nskip; k++)
		free(skip[k]);
	for (size_t k = 0; k < nign; k++)
		free(ign[k]);
	free(skip);
	free(ign);
	free(ids);
	kvcs_list_free(&l);
	strmap_free(&subjects, free);
	if (ret < 0)
		r->die = true;
	return ret;
}
