// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST_TYPE = bisect: git bisect's search, with our state machine
 * (ktest/bisect.c) over a graph from libgit2, each candidate checked out
 * and built (and, by BISECT_TYPE, booted and tested) as one journalled
 * step. A rerun after a kill replays the journalled verdicts through the
 * same deterministic machine, so it lands on the step that was in flight.
 *
 * As ktest.pl: BISECT_GOOD/BAD/TYPE required; BISECT_REVERSE turns the
 * verdicts round (it finds the commit that fixed something); BISECT_CHECK
 * tests bad and/or good first; BISECT_START is tested first; BISECT_FILES
 * limits the search to paths; BISECT_REPLAY starts from a git bisect log;
 * BISECT_SKIP (default 1) turns a commit that cannot be tested (a build
 * break while bisecting a boot bug) into "skip". At the end the log is
 * written to TMP_DIR/ktest_bisect_log in git bisect log's format, and the
 * tree is put back at the commit it was on.
 */
#include <math.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "ktest/bisect.h"
#include "ktest/cmd.h"
#include "ktest/flaky.h"
#include "ktest/pool.h"
#include "ktest/speculate.h"
#include "ktest/run.h"
#include "ktest/vcs.h"

struct bis {
	struct krun *r;
	struct kvcs *v;
	struct kb_graph g;
	struct kbisect *b;
	char **goods;
	size_t ngoods;
	char **paths;
	size_t npaths;
	char **bases;
	size_t nbases;
	char bad[KB_ID_LEN];
	bool reverse;
	bool skip_untestable;
	enum kstep_level level;
	struct kb_retmap ret;		/* BISECT_RET_* */
	struct kflaky fl;		/* runs per commit (flaky.h) */
	bool verify;			/* BISECT_VERIFY */
	bool manual;			/* BISECT_MANUAL */
	bool by_hand;			/* ... with BISECT_TRIES = 0: no runs */
	bool verify_revert;		/* BISECT_VERIFY_REVERT */
	const char *revert_of;		/* the commit run_once reverts */
	bool revert_passed;		/* BISECT_BAD passed with it reverted */
	bool checking;			/* judging the answer's good side again */
	/* BISECT_SAME_CRASH, BISECT_CRASH_TITLE: the failure bisected */
	bool same_crash;
	char *crash;			/* its title once seen ("": none) */
	pcre2_code *crash_re;
	pcre2_match_data *crash_md;
	bool other;			/* the last run failed otherwise */
	/* BISECT_SPECULATE: the marks so far, to ask what comes next */
	struct kspec *spec;
	struct kspec *side;		/* beside an in-place spec (speculate.h) */
	struct kpool *pool;		/* BOXES: k commits at once... */
	bool spread;			/* ... or one commit's runs at once */
	struct spread *sp;		/* the commit whose runs are spread */
	struct kb_options kbo;
	char start_id[KB_ID_LEN];
	char **hid;
	enum kb_verdict *hv;
	size_t nh;
	const char *spec_x;		/* the commit being built */
	/*
	 * In place, a build ahead starts at the kernel's first line when
	 * the last boot took as long from there to SUCCESS_LINE as a build
	 * (both next commits are built before the verdict); else at
	 * SUCCESS_LINE, when the verdict is most likely good, so a short
	 * boot neither shares the CPUs with it nor builds the commit not
	 * needed before a crash.
	 */
	int64_t spec_up_ms;		/* the first line of this boot, or 0 */
	long spec_boot_ms;		/* the last boot: first line to success */
	long spec_build_ms;		/* the last build that ran make */
	bool spec_early, spec_started;
	long runs;			/* runs of commits, replayed ones too */
	long left;			/* revisions left after this one */
	struct strmap images;		/* id -> digest of its built image */
	bool pinned;			/* we set KBUILD_BUILD_* */
	/*
	 * With BISECT_FILES, the graph is read afresh after every verdict,
	 * as every "git bisect good/bad" walks afresh: a merge treesame to a
	 * parent just marked good is simplified away only then. fb chooses;
	 * b keeps the whole history (the log, the checks).
	 */
	struct kbisect *fb;
	struct kb_graph fg;
	char **fbases;
	size_t nfbases;
	bool fresh_bases;		/* still passing merge bases on */
	char **marked;			/* ids marked, in order */
	enum kb_verdict *verdicts;
	size_t nmarked;
	char cur_bad[KB_ID_LEN];
	struct strmap subjects;		/* id -> subject */
	/* a flaky bisect's passes (raw), to take one back (again()) */
	struct passed {
		char id[KB_ID_LEN];
		struct kfl_runs r;
	} *passed;
	size_t npassed;
	char wrong[KB_ID_LEN];		/* verify(): that pass was wrong */
};

/* found(): the verification turned a verdict, the bisect goes on */
#define AGAIN 2

static const char *subject_of(void *ctx, const char *id)
{
	struct bis *s = ctx;
	struct kvcs_commit c;
	char *subj;

	subj = strmap_get(&s->subjects, id);
	if (subj)
		return subj;
	if (kvcs_resolve(s->v, id, &c))
		return NULL;
	subj = xstrdup(c.subject ? c.subject : "");
	kvcs_commit_clear(&c);
	strmap_put(&s->subjects, id, subj);
	return subj;
}

static int resolve(struct bis *s, enum kopt_id id, const char *rev, char *out)
{
	struct kvcs_commit c;

	if (kvcs_resolve(s->v, rev, &c)) {
		krun_print(s->r, "ktest: %s = %s: %s\n",
			   kconfig_opt_name(s->r->c, id), rev, kvcs_error(s->v));
		s->r->config_error = true;
		return -1;
	}
	memcpy(out, c.id, KB_ID_LEN);
	kvcs_commit_clear(&c);
	return 0;
}

/* good, bad and paths from the config, or from BISECT_REPLAY's log */
static int endpoints(struct bis *s, struct kb_replay *rp, bool *have_replay)
{
	struct krun *r = s->r;
	const char *replay = krun_opt(r, KOPT_BISECT_REPLAY);
	const char *good = krun_opt(r, KOPT_BISECT_GOOD);
	const char *bad = krun_opt(r, KOPT_BISECT_BAD);
	char **gw;
	size_t ng;

	*have_replay = false;
	if (replay && *replay) {
		FILE *f = fopen(replay, "r");
		struct sbuf b;
		char buf[4096], why[512];
		size_t n;

		if (!f) {
			krun_print(r, "ktest: cannot read BISECT_REPLAY %s\n", replay);
			return -1;
		}
		sbuf_init(&b);
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			sbuf_addn(&b, buf, n);
		fclose(f);
		if (kbisect_parse_log(sbuf_str(&b), rp, why, sizeof(why))) {
			krun_print(r, "ktest: BISECT_REPLAY %s: %s\n", replay, why);
			sbuf_free(&b);
			return -1;
		}
		sbuf_free(&b);
		*have_replay = true;
		good = NULL;
		bad = rp->bad;
		s->paths = xcalloc(rp->npaths + 1, sizeof(char *));
		for (size_t k = 0; k < rp->npaths; k++)
			s->paths[k] = xstrdup(rp->paths[k]);
		s->npaths = rp->npaths;
	} else {
		s->paths = krun_words(krun_opt(r, KOPT_BISECT_FILES), &s->npaths);
	}
	if (!bad || (!good && !*have_replay)) {
		krun_print(r, "ktest: %s[%d] not defined\n",
			   kconfig_opt_name(r->c, bad ? KOPT_BISECT_GOOD : KOPT_BISECT_BAD),
			   r->i);
		r->config_error = true;
		return -1;
	}
	if (resolve(s, KOPT_BISECT_BAD, bad, s->bad))
		return -1;
	if (*have_replay) {
		gw = xcalloc(rp->ngoods + 1, sizeof(char *));
		for (size_t k = 0; k < rp->ngoods; k++)
			gw[k] = xstrdup(rp->goods[k]);
		ng = rp->ngoods;
	} else {
		gw = krun_words(good, &ng);
	}
	s->goods = xcalloc(ng + 1, sizeof(char *));
	for (size_t k = 0; k < ng; k++) {
		s->goods[k] = xmalloc(KB_ID_LEN);
		s->ngoods++;
		if (resolve(s, KOPT_BISECT_GOOD, gw[k], s->goods[k])) {
			krun_words_free(gw, ng);
			return -1;
		}
	}
	krun_words_free(gw, ng);
	return 0;
}

static void read_retmap(struct krun *r, struct kb_retmap *m)
{
	const char *d = krun_opt(r, KOPT_BISECT_RET_DEFAULT);

	m->ret_good = (int)krun_int(r, KOPT_BISECT_RET_GOOD, -1);
	m->ret_bad = (int)krun_int(r, KOPT_BISECT_RET_BAD, -1);
	m->ret_skip = (int)krun_int(r, KOPT_BISECT_RET_SKIP, -1);
	m->ret_abort = (int)krun_int(r, KOPT_BISECT_RET_ABORT, -1);
	m->ret_default = !d || !*d ? KB_DEFAULT_NONE :
		!strcmp(d, "good") ? KB_DEFAULT_GOOD :
		!strcmp(d, "bad") ? KB_DEFAULT_BAD :
		!strcmp(d, "skip") ? KB_DEFAULT_SKIP : KB_DEFAULT_ABORT;
}

/*
 * BISECT_SAME_CRASH, BISECT_CRASH_TITLE: is a run's failure the one
 * bisected? Under BISECT_SAME_CRASH the first failure seen names it: the
 * bad commit's, which runs first.
 */
static const char *quoted(const char *title, char *buf, size_t len)
{
	if (!title[0])
		return "no crash title";
	snprintf(buf, len, "\"%s\"", title);
	return buf;
}

static bool same_failure(struct bis *s, const char *id, const char *title)
{
	char q[300];

	if (s->crash_re)
		return title[0] &&
			pcre2_match(s->crash_re, (PCRE2_SPTR)title,
				    PCRE2_ZERO_TERMINATED, 0, 0, s->crash_md,
				    NULL) > 0;
	if (!s->same_crash)
		return true;
	if (!s->crash) {
		s->crash = xstrdup(title);
		krun_print(s->r, "The failure bisected (BISECT_SAME_CRASH): %s, as %.12s showed it; a run that fails otherwise counts neither way\n",
			   title[0] ? quoted(title, q, sizeof(q)) :
			   "a failure with no crash title", id);
		return true;
	}
	return !strcmp(s->crash, title);
}

/* A failing run whose failure is another: a skip (flaky: KFL_OTHER) */
static bool other_failure(struct bis *s, const char *id,
			  const struct kstep_result *res, enum kb_verdict *m)
{
	char got[300], want[300];

	if (same_failure(s, id, res->title))
		return false;
	if (s->crash_re)
		snprintf(want, sizeof(want), "BISECT_CRASH_TITLE %s",
			 krun_opt(s->r, KOPT_BISECT_CRASH_TITLE));
	else
		snprintf(want, sizeof(want), "%s",
			 quoted(s->crash, got, sizeof(got)));
	krun_print(s->r, "%.12s: failed with %s, not the failure bisected (%s): the run counts neither way\n",
		   id, quoted(res->title, got, sizeof(got)), want);
	*m = KB_SKIP;
	s->other = true;
	return true;
}

/* A step's verdict as a bisect mark; -1: stop (INFRA, or no BISECT_SKIP). */
static int to_mark(struct bis *s, const char *id,
		   const struct kstep_result *res, enum kb_verdict *m)
{
	bool failed_earlier = krun_failed_before(s->level, res);

	s->other = false;
	if (s->level == KSTEP_TEST && !strcmp(res->phase, "test") &&
	    !res->title[0] && res->verdict != KV_INFRA) {
		/* TEST's exit status, BISECT_RET_* or git bisect run's rule */
		switch (kbisect_test_result(&s->ret, res->test_status)) {
		case KB_R_GOOD:
			*m = s->reverse ? KB_BAD : KB_GOOD;
			return 0;
		case KB_R_BAD:
			if (!other_failure(s, id, res, m))
				*m = s->reverse ? KB_GOOD : KB_BAD;
			return 0;
		case KB_R_SKIP:
			*m = KB_SKIP;
			return 0;
		case KB_R_ABORT:
			krun_print(s->r, "ktest: TEST exit status %d means abort: stopping\n",
				   res->test_status);
			return -1;
		}
	}
	switch (res->verdict) {
	case KV_GOOD:
		*m = s->reverse ? KB_BAD : KB_GOOD;
		return 0;
	case KV_BAD:
		if (failed_earlier) {
			if (!s->skip_untestable) {
				krun_print(s->r, "ktest: failed on %s and BISECT_SKIP is 0: stopping\n",
					   res->phase);
				return -1;
			}
			krun_print(s->r, "HIT A BAD COMMIT ... SKIPPING\n");
			*m = KB_SKIP;
			return 0;
		}
		if (!other_failure(s, id, res, m))
			*m = s->reverse ? KB_GOOD : KB_BAD;
		return 0;
	case KV_SKIP:
		*m = KB_SKIP;
		return 0;
	default:
		return -1;
	}
}

static const char *purpose_text(enum kb_purpose p)
{
	switch (p) {
	case KB_FOR_CHECK_BAD:
		return "TESTING BISECT BAD ";
	case KB_FOR_CHECK_GOOD:
		return "TESTING BISECT GOOD ";
	case KB_FOR_START:
		return "BISECT_START ";
	case KB_FOR_MERGE_BASE:
		return "a merge base must be tested: ";
	default:
		return "";
	}
}

static void hist_add(struct bis *s, const char *id, enum kb_verdict v)
{
	s->hid = xrealloc(s->hid, (s->nh + 1) * sizeof(*s->hid));
	s->hv = xrealloc(s->hv, (s->nh + 1) * sizeof(*s->hv));
	s->hid[s->nh] = xstrdup(id);
	s->hv[s->nh++] = v;
}

/*
 * The commit the bisect would test next if x[0..n) were marked v[0..n)
 * (malloc'd), or NULL.
 */
static char *peek_n(struct bis *s, const char *const *x,
		    const enum kb_verdict *v, size_t n)
{
	struct kbisect *t;
	struct kb_step st;
	char why[512], *next = NULL;
	size_t got, i;

	t = kbisect_new(&s->g, (const char *const *)s->goods, s->ngoods,
			&s->kbo, why, sizeof(why));
	if (!t)
		return NULL;
	for (size_t k = 0; k < s->nh; k++)
		kbisect_mark(t, s->hid[k], s->hv[k], why, sizeof(why));
	for (i = 0; i < n && x[i]; i++)
		if (kbisect_mark(t, x[i], v[i], why, sizeof(why)))
			break;
	if (i == n) {
		kbisect_next(t, &st, 1, &got);
		if (st.kind == KB_TEST)
			next = xstrdup(st.id);
	}
	kbisect_free(t);
	return next;
}

/* The commit the bisect would test next if x were marked v (malloc'd). */
static char *peek(struct bis *s, const char *x, enum kb_verdict v)
{
	return peek_n(s, &x, &v, 1);
}

/*
 * The side build (speculate.h): the commit that comes next if the newest
 * commit being built, X's own build or good's next in place, is bad.
 */
static void side_start(struct bis *s, const char *good_next)
{
	const char *x[2] = { s->spec_x, good_next };
	const enum kb_verdict v[2] = { KB_GOOD, KB_BAD };
	char *id;

	if (!s->side)
		return;
	id = good_next ? peek_n(s, x, v, 2) : peek(s, s->spec_x, KB_BAD);
	kspec_start(s->side, (const char *const *)&id, 1);
	free(id);
}

/*
 * X built: build what can come next (first if good) while the box has it;
 * with side_too, the side build then goes from bad's next to what comes
 * after good's next if that one is bad (X is most likely good now).
 */
static void speculate_side(struct bis *s, size_t n, bool side_too)
{
	char *ids[2];

	s->spec_started = true;
	ids[0] = peek(s, s->spec_x, KB_GOOD);
	/* beside a side build, bad's next is the side's */
	ids[1] = n > 1 && !s->side ? peek(s, s->spec_x, KB_BAD) : NULL;
	if (n)
		kspec_start(s->spec, (const char *const *)ids, n);
	if (side_too && ids[0])
		side_start(s, ids[0]);
	free(ids[0]);
	free(ids[1]);
}

static void speculate_n(struct bis *s, size_t n)
{
	speculate_side(s, n, false);
}

static void speculate(void *ctx)
{
	speculate_n(ctx, 2);
}

/* In place: the kernel's first line. */
static void spec_up(void *ctx)
{
	struct bis *s = ctx;

	s->spec_up_ms = kclock_ms();
	if (s->spec_early)
		speculate(s);
}

/*
 * In place: SUCCESS_LINE. Only the next pick if good is built: the other
 * would be needed only after a crash in BOOTED_TIMEOUT's quiet time, and
 * its checkout, in BUILD_DIR, would make the next step's build longer.
 */
static void spec_booted(void *ctx)
{
	struct bis *s = ctx;

	if (s->spec_up_ms)
		s->spec_boot_ms = (long)(kclock_ms() - s->spec_up_ms);
	/* started at the first line already: only the side moves on */
	speculate_side(s, s->spec_started ? 0 : 1, true);
}

static void spec_stop(void *ctx)
{
	struct bis *s = ctx;

	kspec_settle(s->spec, NULL);
}

/*
 * One run of a commit: build (boot, test) it, with INFRA retried; the
 * second and later runs of a boot or test bisect boot what the first one
 * built. Its outcome as the failure bisected for showing or not (before
 * BISECT_REVERSE turns it round); -1: stop.
 */
/* What a bisect step builds with: MIN_CONFIG, else the last .config (malloc'd). */
static char *build_type(struct bis *s)
{
	const char *min = krun_opt(s->r, KOPT_MIN_CONFIG);

	return min && *min ? xasprintf("useconfig:%s", min) : xstrdup("oldconfig");
}

/* The options every run of a commit shares. */
static void step_opts(struct bis *s, const char *id, const char *kind,
		      long steps_left, struct kstep_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->commit = id;
	o->kind = kind;
	o->left = s->left;
	o->steps_left = steps_left;
	o->level = s->level;
	o->subject = subject_of(s, id);
	o->force_checkout = true;
	o->settle_ms = krun_int(s->r, KOPT_BISECT_SLEEP_TIME, 60) * 1000;
	o->revert = s->revert_of;
	o->digest_image = s->verify && !o->revert;
	/* a boot or test bisect builds a commit once (build_cache.h) */
	o->cache_build = s->level >= KSTEP_BOOT && !o->revert;
}

/*
 * BISECT_MANUAL: the user says what the run of id (its step's kind k)
 * showed, *m (KB_GOOD: it passed), as ktest.pl asked it; BISECT_REVERSE
 * turns the mark round afterwards, as for any run
 */
static int ask(struct bis *s, const char *id, const char *k,
	       enum kb_verdict *m)
{
	char *key = xasprintf("%s:%s", k, id);
	enum kverdict v;
	int ret;

	if (s->by_hand)
		krun_print(s->r, "%.12s is checked out in BUILD_DIR: test it\n",
			   id);
	else
		krun_print(s->r, "%.12s: the run says %s\n", id,
			   *m == KB_GOOD ? "pass" : *m == KB_BAD ? "fail" : "skip");
	ret = krun_ask_verdict(s->r, key, "Pass, fail, or skip? [p/f/s] ", &v);
	free(key);
	if (!ret)
		*m = v == KV_GOOD ? KB_GOOD : v == KV_BAD ? KB_BAD : KB_SKIP;
	return ret;
}

/*
 * What one run of id showed, *m: KB_GOOD for a pass, whichever way the
 * marks go (BISECT_REVERSE); its built image kept for the verification
 */
static int run_outcome(struct bis *s, const char *id,
		       const struct kstep_result *res, enum kb_verdict *m)
{
	if (res->image[0])
		free(strmap_put(&s->images, id, xstrdup(res->image)));
	if (to_mark(s, id, res, m))
		return -1;
	if (s->reverse && *m != KB_SKIP)
		*m = *m == KB_GOOD ? KB_BAD : KB_GOOD;
	return 0;
}

static void spread_early(void *ctx);

static int run_once(struct bis *s, const char *id, const char *kind, int run,
		    long steps_left, enum kfl_run *out)
{
	struct kstep_opts o;
	struct kstep_result res;
	char *bt = build_type(s);
	char what[40], k[32];
	enum kb_verdict m;
	int ret;

	snprintf(k, sizeof(k), run > 1 ? "%s-run%d" : "%s", kind, run);
	step_opts(s, id, k, steps_left, &o);
	o.checkout_only = s->by_hand;
	/* in place, the speculative builds overwrote OUTPUT_DIR: the cache */
	o.built_before = run > 1 && s->level >= KSTEP_BOOT &&
		!(s->spec && s->spec->in_place);
	o.build_type = o.built_before ? "nobuild" : bt;
	o.first_type = bt;
	if (s->spec && s->spec->in_place) {
		/* a later run, a retry, the verification: the tree is the step's */
		o.before_tree = spec_stop;
		o.before_tree_ctx = s;
	}
	snprintf(what, sizeof(what), run > 1 ? "%.12s (run %d)" : "%.12s",
		 id, run);
	if (s->spec && run == 1 && !o.revert && !strcmp(kind, "bisect")) {
		s->spec_x = id;
		o.after_build = speculate;
		o.after_build_ctx = s;
		if (s->spec->in_place) {
			o.after_build = spec_up;
			o.after_build_when_up = true;
			o.after_boot = spec_booted;
			s->spec_up_ms = 0;
			s->spec_started = false;
			s->spec_early = s->spec_boot_ms > 0 &&
				s->spec_boot_ms >= s->spec_build_ms;
			side_start(s, NULL);
		}
	}
	if (s->sp) {
		/* the other boxes start on their runs once it is built */
		o.after_build = spread_early;
		o.after_build_ctx = s->sp;
	}
	ret = krun_step_retry(s->r, &o, what, &res);
	free(bt);
	/*
	 * A build taken from the cache (0 ms) says nothing of make's time,
	 * nor does one that failed (the step ended in its build phase)
	 */
	if (!ret && res.ms[KPH_BUILD] > 0 && strcmp(res.phase, "build"))
		s->spec_build_ms = res.ms[KPH_BUILD];
	if (ret || run_outcome(s, id, &res, &m))
		return -1;
	if (s->manual) {
		if (ask(s, id, k, &m))
			return -1;
		s->other = false;	/* the answer given is the verdict */
	}
	*out = s->other ? KFL_OTHER : m == KB_SKIP ? KFL_UNTESTABLE :
		m == KB_BAD ? KFL_FAIL : KFL_PASS;
	return 0;
}

static const char *const decision_name[] = {
	[KFL_MORE] = "more", [KFL_GOOD] = "passes", [KFL_BAD] = "fails",
	[KFL_SKIP] = "cannot be tested",
};

/*
 * BOXES with several runs a commit: one commit's runs on the boxes at
 * once (flaky.h, kfl_spread). Run 1 builds the commit on box 0 in ktest's
 * own process; once it is built, the other boxes start on the next runs,
 * taking the build from the build cache (box 0 too, for its later runs).
 */
struct spread {
	struct bis *s;
	const char *id, *kind;
	long steps_left;
	char *bt;
	struct kfl_spread fs;
	int run[KPOOL_MAX];		/* box k's run, 0: none */
	char kinds[KPOOL_MAX][48];
	char what[KPOOL_MAX][48];
	struct kstep_opts o[KPOOL_MAX];
	bool failed;			/* a box could not be started */
};

/*
 * BISECT_SAME_CRASH, until a failure named the failure bisected: one run
 * at a time, so that the first failing run in the order of the runs names
 * it, whichever box ends first
 */
static bool one_at_a_time(const struct bis *s)
{
	return s->same_crash && !s->crash;
}

/* The free boxes from box `from` on take the runs that can be needed. */
static int spread_hand(struct spread *sp, size_t from)
{
	struct bis *s = sp->s;
	struct kpool *p = s->pool;

	for (size_t k = from; k < p->n; k++) {
		int n;

		if (one_at_a_time(s) && kpool_any_busy(p))
			break;
		if (kpool_busy(p, k))
			continue;
		n = kfl_spread_next(&s->fl, &sp->fs);
		if (!n)
			break;
		sp->run[k] = n;
		snprintf(sp->kinds[k], sizeof(sp->kinds[k]),
			 n > 1 ? "%s-run%d" : "%s", sp->kind, n);
		step_opts(s, sp->id, sp->kinds[k], sp->steps_left, &sp->o[k]);
		sp->o[k].build_type = sp->bt;
		snprintf(sp->what[k], sizeof(sp->what[k]), "%.12s (run %d)",
			 sp->id, n);
		krun_print(s->r, "%.12s: run %d on box %s\n", sp->id, n,
			   p->names[k]);
		if (kpool_start(p, k, &sp->o[k], sp->what[k]))
			return -1;
	}
	return 0;
}

/*
 * run_once's after_build: run 1 is built, the other boxes start, and
 * (BISECT_SPECULATE) the commits that can come next build meanwhile
 */
static void spread_early(void *ctx)
{
	struct spread *sp = ctx;

	if (sp->s->spec && !strcmp(sp->kind, "bisect")) {
		sp->s->spec_x = sp->id;
		speculate(sp->s);
	}
	if (one_at_a_time(sp->s))
		return;		/* run 1 is still going */
	if (!sp->failed && spread_hand(sp, 1))
		sp->failed = true;
}

static const char *const run_name[] = {
	[KFL_PASS] = "passed", [KFL_FAIL] = "failed",
	[KFL_UNTESTABLE] = "could not be tested",
	[KFL_OTHER] = "failed otherwise (counts neither way)",
};

/* Box k's run ended: its outcome counts as flaky.h says. */
static int spread_take(struct spread *sp, size_t k,
		       const struct kstep_result *res)
{
	struct bis *s = sp->s;
	int n = sp->run[k];
	enum kb_verdict m;
	enum kfl_run out;

	sp->run[k] = 0;
	s->runs++;
	if (run_outcome(s, sp->id, res, &m))
		return -1;
	out = s->other ? KFL_OTHER : m == KB_SKIP ? KFL_UNTESTABLE :
		m == KB_BAD ? KFL_FAIL : KFL_PASS;
	krun_print(s->r, "%.12s run %d (box %s): %s\n", sp->id, n,
		   s->pool->names[k], run_name[out]);
	kfl_spread_in(&s->fl, &sp->fs, n, out);
	return 0;
}

static int judge_spread(struct bis *s, const char *id, const char *kind,
			long steps_left, struct kfl_runs *r,
			enum kfl_decision *d)
{
	struct kpool *p = s->pool;
	struct spread *sp = xcalloc(1, sizeof(*sp));
	enum kfl_run out;
	int ret, n;

	sp->s = s;
	sp->id = id;
	sp->kind = kind;
	sp->steps_left = steps_left;
	sp->bt = build_type(s);
	kfl_spread_init(&sp->fs, r->measure);
	sp->fs.r.check = r->check;
	n = kfl_spread_next(&s->fl, &sp->fs);
	krun_print(s->r, "%.12s: run %d on box %s\n", id, n,
		   p->names[0]);
	s->sp = sp;
	ret = run_once(s, id, kind, n, steps_left, &out) || sp->failed ? -1 : 0;
	s->sp = NULL;
	if (!ret) {
		s->runs++;
		kfl_spread_in(&s->fl, &sp->fs, n, out);
	}
	while (!ret && sp->fs.d == KFL_MORE) {
		struct kstep_result res;
		size_t k;

		if (!krun_interrupted(s->r) && spread_hand(sp, 0))
			ret = -1;
		else if (!kpool_any_busy(p))	/* interrupted: the run stops */
			ret = -1;
		else if (kpool_wait(p, -1, &k, &res) || spread_take(sp, k, &res))
			ret = -1;
	}
	if (ret)
		kpool_finish(p);	/* the other runs kept */
	for (size_t k = 0; k < p->n; k++) {
		if (!kpool_busy(p, k))
			continue;
		kpool_stop(p, k);
		if (!ret)
			krun_print(s->r, "%.12s run %d (box %s): stopped, not needed: the runs before it decided\n",
				   id, sp->run[k], p->names[k]);
	}
	*r = sp->fs.r;
	*d = sp->fs.d;
	free(sp->bt);
	free(sp);
	return ret;
}

/*
 * A commit's runs until they decide (flaky.h): once with the defaults.
 * measure: all BISECT_TRIES runs, to measure how often the failure shows.
 * With a pool shared by the runs (s->spread), on the boxes at once.
 */
static int judge(struct bis *s, const char *id, const char *kind,
		 bool measure, long steps_left, enum kfl_decision *d)
{
	struct kfl_runs r = { .measure = measure, .check = s->checking };
	bool was_flaky = s->fl.flaky;
	int run = 0;

	kflaky_set_steps(&s->fl, (int)steps_left + (s->verify ? 1 : 0));
	/* a revert on top is built in BUILD_DIR alone: one box */
	if (s->spread && !s->revert_of) {
		if (judge_spread(s, id, kind, steps_left, &r, d))
			return -1;
		run = r.pass + r.fail + r.untestable + r.other;
	} else {
		do {
			enum kfl_run out;

			if (run_once(s, id, kind, ++run, steps_left, &out))
				return -1;
			s->runs++;
			*d = kflaky_add(&s->fl, &r, out);
			if (*d == KFL_MORE)
				krun_print(s->r, "%.12s: %d run%s, %d failed: running it again (%s)\n",
					   id, run, run == 1 ? "" : "s", r.fail,
					   measure ? "measuring how often the failure shows" :
					   s->fl.flaky && r.fail ?
					   "too few failures to fail it, too few runs to pass it" :
					   s->fl.flaky ? "a pass needs more clean runs" :
					   "BISECT_TRIES");
		} while (*d == KFL_MORE);
	}
	kflaky_record(&s->fl, &r, *d);
	if (*d == KFL_GOOD && !r.check && !strcmp(kind, "bisect")) {
		s->passed = xrealloc(s->passed,
				     (s->npassed + 1) * sizeof(*s->passed));
		snprintf(s->passed[s->npassed].id, KB_ID_LEN, "%s", id);
		s->passed[s->npassed++].r = r;
	}
	if (run > 1) {
		char other[64] = "";

		if (r.other)
			snprintf(other, sizeof(other), ", %d failed otherwise",
				 r.other);
		krun_print(s->r, "%.12s %s: %d runs, %d failed, %d passed%s%s\n",
			   id, decision_name[*d], run, r.fail, r.pass, other,
			   r.untestable ? ", some could not be tested" : "");
	}
	if (s->fl.flaky && !was_flaky)
		krun_print(s->r, "%.12s both passed and failed: the failure is flaky; a pass needs enough clean runs from now on (BISECT_FLAKY)\n",
			   id);
	return 0;
}

/*
 * Before the step of id: the build ahead that is not of id stops first,
 * so the CPUs go to the one that is. The side build goes on when it
 * builds what comes after id if id is bad (it started when id's build
 * did).
 */
static void settle_specs(struct bis *s, const char *id)
{
	char *after_bad;

	if (kspec_building(s->side, id)) {
		kspec_settle(s->spec, id);
		kspec_settle(s->side, id);
		return;
	}
	after_bad = s->side ? peek(s, id, KB_BAD) : NULL;
	if (!kspec_building(s->side, after_bad))
		kspec_settle(s->side, id);
	free(after_bad);
	kspec_settle(s->spec, id);
}

/* One candidate: its runs decide its mark. */
static int test_one(struct bis *s, const struct kb_step *st, enum kb_verdict *m)
{
	bool measure = s->fl.p.flaky &&
		st->purpose == (s->reverse ? KB_FOR_CHECK_GOOD : KB_FOR_CHECK_BAD);
	enum kfl_decision d;

	s->left = (long)st->left;
	settle_specs(s, st->id);
	if (judge(s, st->id, "bisect", measure, st->steps, &d))
		return -1;
	if (d == KFL_SKIP)
		*m = KB_SKIP;
	else if ((d == KFL_BAD) != s->reverse)
		*m = KB_BAD;
	else
		*m = KB_GOOD;
	return 0;
}

static void write_log(struct bis *s)
{
	const char *tmp = krun_opt(s->r, KOPT_TMP_DIR);
	char *path = xasprintf("%s/ktest_bisect_log", tmp ? tmp : ".");
	char *copy = xasprintf("%s/bisect-%d.log", s->r->state_dir, s->r->i);
	const char *const files[] = { path, copy };

	for (int k = 0; k < 2; k++) {
		FILE *f = kcmd_fopen_private(files[k], "w");

		if (!f || kbisect_write_log(s->b, (const char *const *)s->paths,
					    s->npaths, f, subject_of, s) ||
		    fclose(f)) {
			krun_print(s->r, "ktest: cannot write the bisect log %s\n",
				   files[k]);
			continue;
		}
	}
	krun_print(s->r, "The bisect log (git bisect replay accepts it): %s\n", path);
	free(path);
	free(copy);
}

static int apply_replay(struct bis *s, const struct kb_replay *rp)
{
	char why[512];

	for (size_t k = 0; k < rp->nmarks; k++) {
		char id[KB_ID_LEN];

		if (resolve(s, KOPT_BISECT_REPLAY, rp->marks[k].rev, id))
			return -1;
		if (kbisect_mark(s->b, id, rp->marks[k].verdict, why, sizeof(why)) &&
		    why[0]) {
			krun_print(s->r, "ktest: BISECT_REPLAY: %s\n", why);
			return -1;
		}
		hist_add(s, id, rp->marks[k].verdict);
	}
	return 0;
}

static int start(struct bis *s, const struct kb_replay *rp, bool have_replay)
{
	struct krun *r = s->r;
	struct kb_options o = { 0 };
	const char *check = krun_opt(r, KOPT_BISECT_CHECK);
	const char *st = krun_opt(r, KOPT_BISECT_START);
	char start_id[KB_ID_LEN], why[512];

	if (kvcs_bisect_graph(s->v, s->bad, (const char *const *)s->goods,
			      s->ngoods, (const char *const *)s->paths, s->npaths,
			      false, &s->g, &s->bases, &s->nbases)) {
		krun_print(r, "ktest: bisect: %s\n", kvcs_error(s->v));
		return -1;
	}
	if (check && *check && strcmp(check, "0")) {
		o.check_bad = strcmp(check, "good") != 0;
		o.check_good = strcmp(check, "bad") != 0;
	}
	/*
	 * a flaky bisect measures the failure where it shows, first; under
	 * BISECT_SAME_CRASH that run names the failure
	 */
	if (s->fl.p.flaky || s->same_crash) {
		if (s->reverse)
			o.check_good = true;
		else
			o.check_bad = true;
	}
	if (st && *st) {
		if (resolve(s, KOPT_BISECT_START, st, start_id))
			return -1;
		memcpy(s->start_id, start_id, KB_ID_LEN);
		o.start = s->start_id;
	}
	o.merge_bases = (const char *const *)s->bases;
	o.nmerge_bases = s->nbases;
	s->kbo = o;
	s->b = kbisect_new(&s->g, (const char *const *)s->goods, s->ngoods, &o,
			   why, sizeof(why));
	if (!s->b) {
		krun_print(r, "ktest: bisect: %s\n", why);
		return -1;
	}
	if (have_replay && apply_replay(s, rp))
		return -1;
	snprintf(s->cur_bad, sizeof(s->cur_bad), "%s", kbisect_bad(s->b));
	s->fresh_bases = true;
	return 0;
}

/*
 * BISECT_VERIFY: the culprit's parents pass and it fails again (raw
 * terms: with BISECT_REVERSE, the parents fail and it passes). Returns 0,
 * 1 with why when it does not hold, -1 to stop.
 */
static int verify(struct bis *s, const char *id, char *why, size_t len)
{
	enum kfl_decision d;
	bool want_fail = !s->reverse;
	int ret;

	s->left = -1;
	for (int k = 1; k <= 8; k++) {
		struct kvcs_commit c;
		char rev[64];

		snprintf(rev, sizeof(rev), "%s^%d", id, k);
		if (kvcs_resolve(s->v, rev, &c))
			break;
		krun_print(s->r, "Verifying: the parent %.12s of %.12s must %s\n",
			   c.id, id, want_fail ? "pass" : "fail");
		s->checking = want_fail;
		if (judge(s, c.id, "verify", false, 1, &d)) {
			s->checking = false;
			kvcs_commit_clear(&c);
			return -1;
		}
		s->checking = false;
		if (d != (want_fail ? KFL_GOOD : KFL_BAD)) {
			snprintf(why, len, "its parent %.12s %s too", c.id,
				 decision_name[d]);
			if (want_fail && d == KFL_BAD)
				snprintf(s->wrong, sizeof(s->wrong), "%s", c.id);
			kvcs_commit_clear(&c);
			return 1;
		}
		kvcs_commit_clear(&c);
	}
	krun_print(s->r, "Verifying: %.12s must %s again\n", id,
		   want_fail ? "fail" : "pass");
	s->checking = !want_fail;
	ret = judge(s, id, "verify", false, 0, &d);
	s->checking = false;
	if (ret)
		return -1;
	if (d != (want_fail ? KFL_BAD : KFL_GOOD)) {
		snprintf(why, len, "it %s this time", decision_name[d]);
		if (!want_fail && d == KFL_BAD)
			snprintf(s->wrong, sizeof(s->wrong), "%s", id);
		return 1;
	}
	if (!s->verify_revert)
		return 0;
	krun_print(s->r, "Verifying: %.12s with %.12s reverted on top must %s\n",
		   s->bad, id, want_fail ? "pass" : "fail");
	s->revert_of = id;
	if (judge(s, s->bad, "revert", false, 0, &d)) {
		s->revert_of = NULL;
		return -1;
	}
	s->revert_of = NULL;
	if (d == KFL_SKIP) {
		krun_print(s->r, "The revert could not be tested (see above): the verification stands without it\n");
		return 0;
	}
	if (d != (want_fail ? KFL_GOOD : KFL_BAD)) {
		snprintf(why, len, "%.12s with it reverted %s too", s->bad,
			 decision_name[d]);
		return 1;
	}
	s->revert_passed = true;
	return 0;
}

/* Is the culprit's built image its first parent's? (why: which) */
static bool same_image(struct bis *s, const char *id, char *why, size_t len)
{
	struct kvcs_commit c;
	const char *mine = strmap_get(&s->images, id), *theirs;
	char rev[64];
	bool same;

	snprintf(rev, sizeof(rev), "%s^1", id);
	if (!mine || kvcs_resolve(s->v, rev, &c))
		return false;
	theirs = strmap_get(&s->images, c.id);
	same = theirs && !strcmp(mine, theirs);
	if (same)
		snprintf(why, len, "its built image is identical to its parent %.12s's (%s)",
			 c.id, mine);
	kvcs_commit_clear(&c);
	return same;
}

/*
 * A verified bisect compares the images of the culprit and its parent:
 * builds made reproducible (the build number, time, user and host that
 * the kernel embeds pinned), unless the environment already says.
 */
static const char *const pinned_env[][2] = {
	{ "KBUILD_BUILD_TIMESTAMP", "Thu Jan  1 00:00:00 UTC 1970" },
	{ "KBUILD_BUILD_VERSION", "1" },
	{ "KBUILD_BUILD_USER", "ktest" },
	{ "KBUILD_BUILD_HOST", "ktest" },
};

static void pin_builds(struct bis *s, bool on)
{
	size_t n = sizeof(pinned_env) / sizeof(pinned_env[0]);

	if (on) {
		for (size_t k = 0; k < n; k++)
			if (getenv(pinned_env[k][0]))
				return;		/* the user's choice */
		for (size_t k = 0; k < n; k++)
			setenv(pinned_env[k][0], pinned_env[k][1], 1);
		s->pinned = true;
		krun_print(s->r, "Builds made reproducible for the verification (KBUILD_BUILD_TIMESTAMP, _VERSION, _USER and _HOST pinned)\n");
		return;
	}
	if (s->pinned)
		for (size_t k = 0; k < n; k++)
			unsetenv(pinned_env[k][0]);
	s->pinned = false;
}

/*
 * A confidence in percent: 99% and above cut (not rounded) to 0.01, so
 * that below 1 it never shows as 100
 */
static const char *percent(double c, char *buf, size_t len)
{
	if (c < 0.99)
		snprintf(buf, len, "%.1f", 100.0 * c);
	else
		snprintf(buf, len, "%.2f", floor(c * 10000.0) / 100.0);
	return buf;
}

/* The confidence, printed and kept for report.json (a flaky bisect's). */
static void give_confidence(struct bis *s)
{
	struct ktest_report *t = s->r->t;
	char pct[16];

	if (!s->fl.flaky)
		return;
	t->flaky = true;
	t->confidence = kflaky_confidence(&s->fl);
	t->runs = s->runs;
	krun_print(s->r, "Confidence %s%%: the failure showed in %.0f%% of the runs of the commits it showed on (%.0f%% counted, on the low side); %ld runs in all\n",
		   percent(t->confidence, pct, sizeof(pct)),
		   100.0 * kflaky_measured(&s->fl), 100.0 * kflaky_rate(&s->fl),
		   s->runs);
	if (s->fl.checks)
		krun_print(s->r, "  (the bisect's verdicts alone: %s%%; a wrong answer would also have passed the verification's runs of %s, which a commit with the failure passes %.2g%% of the time at most)\n",
			   percent(kflaky_goods_confidence(&s->fl), pct, sizeof(pct)),
			   s->reverse ? "the answer" : "its parents",
			   100.0 * kflaky_check_miss(&s->fl));
}

static void remember(struct bis *s, const char *id, enum kb_verdict v);
static void fresh_free(struct bis *s);

/* BISECT_GOOD or BISECT_BAD: its verdict cannot turn, the bisect stands on it */
static bool endpoint(const struct bis *s, const char *id)
{
	if (!strcmp(s->bad, id))
		return true;
	for (size_t k = 0; k < s->ngoods; k++)
		if (!strcmp(s->goods[k], id))
			return true;
	return false;
}

/* A pass taken back: its runs no longer make a good verdict (kflaky_forget). */
static void forget(struct bis *s, const char *id, bool failed)
{
	for (size_t k = 0; k < s->npassed; k++) {
		if (strcmp(s->passed[k].id, id))
			continue;
		kflaky_forget(&s->fl, &s->passed[k].r, failed);
		s->passed[k] = s->passed[--s->npassed];
		return;
	}
}

/* Marks a verdict again into the new bisect, or drops it (and its pass). */
static void replay_mark(struct bis *s, const char *id, enum kb_verdict v)
{
	char why[512];

	if (kbisect_mark(s->b, id, v, why, sizeof(why)) == 0) {
		hist_add(s, id, v);
		if (s->npaths)
			remember(s, id, v);
		return;
	}
	krun_print(s->r, "  dropped: %.12s %s: %s\n", id,
		   kbisect_verdict_word(v), why);
	/* a raw pass (bad in a reverse bisect) made that verdict */
	if (v == (s->reverse ? KB_BAD : KB_GOOD))
		forget(s, id, false);
}

/* Into the new bisect: s->wrong turned first, then the marks hid, hv. */
static int replay_turned(struct bis *s, char **hid, const enum kb_verdict *hv,
			 size_t nh, enum kb_verdict turned)
{
	char why[512];

	if (kbisect_mark(s->b, s->wrong, turned, why, sizeof(why)))
		return krun_fail(s->r, "bisect: cannot go on with %.12s %s: %s",
				 s->wrong, kbisect_verdict_word(turned), why);
	hist_add(s, s->wrong, turned);
	if (s->npaths)
		remember(s, s->wrong, turned);
	for (size_t k = 0; k < nh; k++)
		if (strcmp(hid[k], s->wrong))
			replay_mark(s, hid[k], hv[k]);
	return AGAIN;
}

/*
 * A flaky bisect's verification proved a pass wrong (s->wrong): a parent of
 * the answer failed, or, in a reverse bisect, the answer failed again. That
 * commit has the failure: the bisect goes on from the same verdicts with
 * its verdict turned (bad; good in a reverse bisect), those it contradicts
 * dropped. The runs it passed now count as a failing commit's, and the
 * goods dropped no longer count in the confidence, nor do the checks of
 * the answer given up. Each time the range shrinks, so this ends.
 */
static int again(struct bis *s, const char *id, const char *why)
{
	enum kb_verdict turned = s->reverse ? KB_GOOD : KB_BAD;
	char **hid = s->hid, w[512];
	enum kb_verdict *hv = s->hv;
	size_t nh = s->nh;
	struct kbisect *b;
	int ret;

	krun_print(s->r, "%.12s looked like the first %s commit, but the verification failed: %s. %.12s has the failure, so its verdict in the bisect was wrong: bisecting on with it %s\n",
		   id, s->reverse ? "good (fixing)" : "bad", why, s->wrong,
		   s->reverse ? "good (not fixed yet)" : "bad");
	s->kbo.check_bad = s->kbo.check_good = false;
	s->kbo.start = NULL;
	b = kbisect_new(&s->g, (const char *const *)s->goods, s->ngoods,
			&s->kbo, w, sizeof(w));
	if (!b) {
		krun_print(s->r, "ktest: bisect: %s\n", w);
		return -1;
	}
	kbisect_free(s->b);
	s->b = b;
	s->hid = NULL;
	s->hv = NULL;
	s->nh = 0;
	if (s->npaths) {
		for (size_t k = 0; k < s->nmarked; k++)
			free(s->marked[k]);
		s->nmarked = 0;
		fresh_free(s);
	}
	forget(s, s->wrong, true);
	ret = replay_turned(s, hid, hv, nh, turned);
	for (size_t k = 0; k < nh; k++)
		free(hid[k]);
	free(hid);
	free(hv);
	kflaky_forget_checks(&s->fl);
	snprintf(s->cur_bad, sizeof(s->cur_bad), "%s", kbisect_bad(s->b));
	s->revert_passed = false;
	return ret;
}

static int found(struct bis *s, const char *id)
{
	struct krun *r = s->r;
	const char *subj = subject_of(s, id);
	char why[256];
	int v;

	if (s->verify) {
		s->wrong[0] = '\0';
		v = verify(s, id, why, sizeof(why));
		if (v < 0)
			return -1;
		if (v > 0 && s->wrong[0] && s->fl.flaky && !endpoint(s, s->wrong))
			return again(s, id, why);
		if (v > 0) {
			write_log(s);
			give_confidence(s);
			return krun_fail(r, "bisect: %.12s looked like the first %s commit, but the verification failed: %s; the failure is flakier than BISECT_CONFIDENCE allowed for, or not one commit's",
					 id, s->reverse ? "good (fixing)" : "bad",
					 why);
		}
		krun_print(r, "Verified: the parents %s and %.12s %s%s\n",
			   s->reverse ? "fail" : "pass", id,
			   s->reverse ? "passes" : "fails",
			   !s->revert_passed ? "" : s->reverse ?
			   "; BISECT_BAD fails with it reverted" :
			   "; BISECT_BAD passes with it reverted");
		if (same_image(s, id, why, sizeof(why))) {
			write_log(s);
			give_confidence(s);
			return krun_fail(r, "bisect: %.12s looked like the first %s commit, but %s: the commit did not change the kernel that was tested, so it cannot be what %s it; the failure comes from outside the kernel (the lab, the tree's other files) or is flakier than measured",
					 id, s->reverse ? "good (fixing)" : "bad",
					 why, s->reverse ? "fixed" : "broke");
		}
	}

	krun_print(r, "%s is the first %s commit\n", id,
		   s->reverse ? "good (fixing)" : "bad");
	krun_print(r, "    %s\n", subj ? subj : "");
	write_log(s);
	kresults_set(&r->t->result_commit, id);
	kresults_set(&r->t->result_subject, subj);
	krun_print(r, "%s commit was [%s] %s\n", s->reverse ? "Good" : "Bad",
		   id, subj ? subj : "");
	give_confidence(s);
	return krun_success(r);
}

static int only_skipped(struct bis *s)
{
	const char **ids;
	size_t n = kbisect_candidates(s->b, &ids);
	struct sbuf b;
	int ret;

	sbuf_init(&b);
	sbuf_adds(&b, "There are only 'skip'ped commits left to test.\n"
		  "The first bad commit could be any of:");
	for (size_t k = 0; k < n; k++) {
		const char *subj = subject_of(s, ids[k]);

		sbuf_addf(&b, "\n%s %s", ids[k], subj ? subj : "");
	}
	write_log(s);
	ret = krun_fail(s->r, "%s", sbuf_str(&b));
	sbuf_free(&b);
	return ret;
}

static int fresh(struct bis *s);

/* BOXES: what each box of the pool runs now */
struct box_step {
	char id[KB_ID_LEN];
	char what[16];
	struct kstep_opts o;
};

/* The steps st[0..n) go to the free boxes, in order. */
static int hand_out(struct bis *s, struct box_step *bs, const char *bt,
		    const struct kb_step *st, size_t n)
{
	struct kpool *p = s->pool;
	size_t k = 0;

	krun_print(s->r, "Bisecting: %zu revision%s left to test after %s (roughly %d step%s)%s\n",
		   st[0].left, st[0].left == 1 ? "" : "s",
		   n == 1 ? "this" : "these", st[0].steps,
		   st[0].steps == 1 ? "" : "s", n == 1 ? "" : ", one a box:");
	for (size_t i = 0; i < n; i++, k++) {
		const char *subj = subject_of(s, st[i].id);

		while (kpool_busy(p, k))
			k++;
		snprintf(bs[k].id, sizeof(bs[k].id), "%s", st[i].id);
		snprintf(bs[k].what, sizeof(bs[k].what), "%.12s", st[i].id);
		s->left = (long)st[i].left;
		step_opts(s, bs[k].id, "bisect", st[i].steps, &bs[k].o);
		bs[k].o.build_type = bt;
		krun_print(s->r, "[%s] %s (box %s)\n", st[i].id, subj ? subj : "",
			   p->names[k]);
		if (kpool_start(p, k, &bs[k].o, bs[k].what))
			return -1;
	}
	return 0;
}

/* A box's verdict, marked as it comes; the boxes it made useless stopped. */
static int take(struct bis *s, struct box_step *bs, size_t k,
		const struct kstep_result *res)
{
	struct kpool *p = s->pool;
	enum kb_verdict m;
	char why[512];

	s->runs++;
	if (res->image[0])
		free(strmap_put(&s->images, bs[k].id, xstrdup(res->image)));
	if (to_mark(s, bs[k].id, res, &m))
		return -1;
	krun_print(s->r, "%.12s (box %s): %s\n", bs[k].id, p->names[k],
		   kbisect_verdict_word(m));
	if (kbisect_mark(s->b, bs[k].id, m, why, sizeof(why))) {
		write_log(s);
		return krun_fail(s->r, "%s", why);
	}
	hist_add(s, bs[k].id, m);
	if (why[0])
		krun_print(s->r, "%s\n", why);
	for (size_t j = 0; j < p->n; j++) {
		if (!kpool_busy(p, j) || kbisect_needed(s->b, bs[j].id))
			continue;
		kpool_stop(p, j);
		kbisect_release(s->b, bs[j].id);
		krun_print(s->r, "%.12s (box %s): stopped, its verdict no longer matters (%.12s is %s)\n",
			   bs[j].id, p->names[j], bs[k].id,
			   kbisect_verdict_word(m));
	}
	return 0;
}

/*
 * BOXES: the n candidates st[] at once, one a box; then each verdict is
 * marked as it comes, a box whose commit no longer matters is stopped,
 * and each box that is free takes the next commit at once (kbisect_next
 * fills the gaps the commits still under test leave). Until the answer
 * is known (the boxes all idle; loop() names it). The answer is the one
 * box's for a box that fails alike each time; which commits are tested
 * depends on which box ends first.
 */
static int schedule(struct bis *s, const struct kb_step *st, size_t n)
{
	struct kpool *p = s->pool;
	struct box_step *bs = xcalloc(p->n, sizeof(*bs));
	char *bt = build_type(s);
	int ret = hand_out(s, bs, bt, st, n);

	while (!ret) {
		struct kb_step next[KPOOL_MAX];
		struct kstep_result res;
		size_t k, nfree = 0;

		for (k = 0; k < p->n; k++)
			nfree += !kpool_busy(p, k);
		if (nfree == p->n)
			break;
		if (kpool_wait(p, -1, &k, &res) || take(s, bs, k, &res)) {
			ret = -1;
			break;
		}
		if (krun_interrupted(s->r))
			continue;	/* the others end, and the run with them */
		for (k = 0, nfree = 0; k < p->n; k++)
			nfree += !kpool_busy(p, k);
		kbisect_next(s->b, next, nfree, &n);
		if (next[0].kind == KB_TEST)
			ret = hand_out(s, bs, bt, next, n);
		else if (next[0].kind != KB_WAIT)
			kpool_stop_all(p);	/* the answer, or the end */
	}
	if (ret)
		kpool_finish(p);	/* the other boxes' steps kept */
	free(bt);
	free(bs);
	return ret;
}

static int loop(struct bis *s)
{
	for (;;) {
		struct kb_step st[KPOOL_MAX];
		enum kb_verdict m;
		size_t n;
		int ret;
		char why[512];

		/* checks and BISECT_START come from the whole machine first */
		kbisect_next(s->b, st, s->pool && !s->spread ? s->pool->n : 1,
			     &n);
		if (n > 1) {
			if (schedule(s, st, n))
				return -1;
			continue;
		}
		if (s->npaths && !(st->kind == KB_TEST &&
				   (st->purpose == KB_FOR_CHECK_BAD ||
				    st->purpose == KB_FOR_CHECK_GOOD ||
				    st->purpose == KB_FOR_START))) {
			if (!s->fb && fresh(s))
				return -1;
			kbisect_next(s->fb, st, 1, &n);
		}
		if (st->kind != KB_TEST) {	/* BUILD_DIR is ours again */
			kspec_settle(s->side, NULL);
			kspec_settle(s->spec, NULL);
		}
		switch (st->kind) {
		case KB_FOUND:
			ret = found(s, st->id);
			if (ret != AGAIN)
				return ret;
			continue;
		case KB_ONLY_SKIPPED:
			return only_skipped(s);
		case KB_FAILED:
			write_log(s);
			return krun_fail(s->r, "bisect: %s", st->why);
		case KB_WAIT:
			return krun_fail(s->r, "bisect: nothing to test (internal)");
		case KB_TEST:
			break;
		}
		if (st->purpose == KB_FOR_BISECT)
			krun_print(s->r, "Bisecting: %zu revision%s left to test after this (roughly %d step%s)\n",
				   st->left, st->left == 1 ? "" : "s", st->steps,
				   st->steps == 1 ? "" : "s");
		krun_print(s->r, "%s[%s] %s\n", purpose_text(st->purpose), st->id,
			   subject_of(s, st->id) ? subject_of(s, st->id) : "");
		if (test_one(s, st, &m))
			return -1;
		if (kbisect_mark(s->b, st->id, m, why, sizeof(why))) {
			write_log(s);
			return krun_fail(s->r, "%s", why);
		}
		hist_add(s, st->id, m);
		if (why[0])
			krun_print(s->r, "%s\n", why);
		if (s->npaths) {
			remember(s, st->id, m);
			s->fresh_bases = st->purpose == KB_FOR_MERGE_BASE;
			if (s->fb && fresh(s))
				return -1;
		}
	}
}

static void fresh_free(struct bis *s)
{
	if (s->fb)
		kbisect_free(s->fb);
	s->fb = NULL;
	if (s->fg.nodes)
		kvcs_graph_free(&s->fg);
	memset(&s->fg, 0, sizeof(s->fg));
	kvcs_free_paths(s->fbases, s->nfbases);
	s->fbases = NULL;
	s->nfbases = 0;
}

/* The chooser from the bad and goods known now (see struct bis). */
static int fresh(struct bis *s)
{
	struct kb_options o = { 0 };
	const char **goods = xcalloc(s->ngoods + s->nmarked + 1, sizeof(char *));
	size_t ng = 0;
	char why[512];

	fresh_free(s);
	for (size_t k = 0; k < s->ngoods; k++)
		goods[ng++] = s->goods[k];
	for (size_t k = 0; k < s->nmarked; k++)
		if (s->verdicts[k] == KB_GOOD)
			goods[ng++] = s->marked[k];
	if (kvcs_bisect_graph(s->v, s->cur_bad, goods, ng,
			      (const char *const *)s->paths, s->npaths, false,
			      &s->fg, &s->fbases, &s->nfbases)) {
		krun_print(s->r, "ktest: bisect: %s\n", kvcs_error(s->v));
		free(goods);
		return -1;
	}
	if (s->fresh_bases) {
		o.merge_bases = (const char *const *)s->fbases;
		o.nmerge_bases = s->nfbases;
	}
	s->fb = kbisect_new(&s->fg, goods, ng, &o, why, sizeof(why));
	free(goods);
	if (!s->fb) {
		krun_print(s->r, "ktest: bisect: %s\n", why);
		return -1;
	}
	for (size_t k = 0; k < s->nmarked; k++)
		if (s->verdicts[k] == KB_SKIP)
			kbisect_mark(s->fb, s->marked[k], KB_SKIP, why, sizeof(why));
	return 0;
}

static void remember(struct bis *s, const char *id, enum kb_verdict v)
{
	s->marked = xrealloc(s->marked, (s->nmarked + 1) * sizeof(char *));
	s->verdicts = xrealloc(s->verdicts, (s->nmarked + 1) * sizeof(*s->verdicts));
	s->marked[s->nmarked] = xstrdup(id);
	s->verdicts[s->nmarked++] = v;
	if (v == KB_BAD)
		snprintf(s->cur_bad, sizeof(s->cur_bad), "%s", id);
}

static void bis_free(struct bis *s)
{
	fresh_free(s);
	for (size_t k = 0; k < s->nmarked; k++)
		free(s->marked[k]);
	free(s->marked);
	free(s->verdicts);
	if (s->b)
		kbisect_free(s->b);
	if (s->g.nodes)
		kvcs_graph_free(&s->g);
	for (size_t k = 0; k < s->ngoods; k++)
		free(s->goods[k]);
	free(s->goods);
	krun_words_free(s->paths, s->npaths);
	kvcs_free_paths(s->bases, s->nbases);
	strmap_free(&s->subjects, free);
	strmap_free(&s->images, free);
	pin_builds(s, false);
	free(s->crash);
	pcre2_match_data_free(s->crash_md);
	pcre2_code_free(s->crash_re);
	kspec_free(s->side);
	kspec_free(s->spec);
	kpool_free(s->pool);
	for (size_t k = 0; k < s->nh; k++)
		free(s->hid[k]);
	free(s->hid);
	free(s->hv);
	free(s->passed);
}

/* BISECT_SAME_CRASH, BISECT_CRASH_TITLE */
static int read_crash(struct bis *s)
{
	const char *re = krun_opt(s->r, KOPT_BISECT_CRASH_TITLE);
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	int err;

	s->same_crash = krun_bool(s->r, KOPT_BISECT_SAME_CRASH);
	if (!(re && *re) && !s->same_crash)
		return 0;
	if (s->level < KSTEP_BOOT) {
		krun_print(s->r, "BISECT_SAME_CRASH, BISECT_CRASH_TITLE: a build bisect has no crash to tell apart: every failure counts\n");
		s->same_crash = false;
		return 0;
	}
	if (!(re && *re))
		return 0;
	if (s->same_crash)
		krun_print(s->r, "BISECT_CRASH_TITLE names the failure bisected: BISECT_SAME_CRASH has nothing to learn\n");
	s->same_crash = false;
	s->crash_re = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0,
				    &err, &off, NULL);
	if (!s->crash_re) {
		pcre2_get_error_message(err, msg, sizeof(msg));
		krun_print(s->r, "ktest: BISECT_CRASH_TITLE: not a regex: %s at offset %zu: fix the option\n",
			   (const char *)msg, (size_t)off);
		return -1;
	}
	s->crash_md = pcre2_match_data_create_from_pattern(s->crash_re, NULL);
	if (!s->crash_md) {
		krun_print(s->r, "ktest: BISECT_CRASH_TITLE: out of memory\n");
		return -1;
	}
	krun_print(s->r, "The failure bisected: a crash whose title matches BISECT_CRASH_TITLE (%s); a run that fails otherwise counts neither way\n",
		   re);
	return 0;
}

/*
 * BISECT_TRIES, BISECT_FLAKY, BISECT_FLAKY_FAILURES, BISECT_MAX_TRIES,
 * BISECT_CONFIDENCE, BISECT_VERIFY
 */
static int read_flaky(struct bis *s)
{
	struct krun *r = s->r;
	struct kfl_policy p = { 0 };
	const char *v = krun_opt(r, KOPT_BISECT_VERIFY);
	long tries = krun_int(r, KOPT_BISECT_TRIES, 1);
	long max = krun_int(r, KOPT_BISECT_MAX_TRIES, 30);
	long conf = krun_int(r, KOPT_BISECT_CONFIDENCE, 95);
	long fails = krun_int(r, KOPT_BISECT_FLAKY_FAILURES, 1);

	p.flaky = krun_bool(r, KOPT_BISECT_FLAKY);
	s->manual = krun_bool(r, KOPT_BISECT_MANUAL);
	/* as ktest.pl: no runs, the user says (it took 0 alone for good) */
	s->by_hand = tries == 0 && s->manual && !p.flaky;
	if (tries == 0 && !s->by_hand) {
		krun_print(r, "ktest: test %d: BISECT_TRIES = 0 runs nothing: it needs BISECT_MANUAL = 1 (you test each commit by hand) and no BISECT_FLAKY\n",
			   r->i);
		r->config_error = true;
		return -1;
	}
	if (s->by_hand)
		tries = 1;
	if (tries < 1 || tries > KFL_MAX_RUNS || max < 1 || max > KFL_MAX_RUNS ||
	    conf < 1 || conf > 99 || fails < 1 || fails > KFL_MAX_FAILS ||
	    fails > max) {
		krun_print(r, "ktest: test %d: BISECT_TRIES and BISECT_MAX_TRIES are 1 to %d, BISECT_CONFIDENCE 1 to 99 (percent), BISECT_FLAKY_FAILURES 1 to %d and at most BISECT_MAX_TRIES\n",
			   r->i, KFL_MAX_RUNS, KFL_MAX_FAILS);
		r->config_error = true;
		return -1;
	}
	p.tries = p.flaky && tries < 2 ? 10 : (int)tries;
	p.max_tries = (int)max;
	p.confidence = conf / 100.0;
	p.fails = (int)fails;
	kflaky_init(&s->fl, &p);
	s->verify = v && *v ? krun_bool(r, KOPT_BISECT_VERIFY) : p.flaky;
	s->verify_revert = s->verify && krun_bool(r, KOPT_BISECT_VERIFY_REVERT);
	if (s->by_hand)
		krun_print(r, "BISECT_MANUAL with BISECT_TRIES = 0: ktest checks each commit out and asks; you build and test it\n");
	if (p.flaky && fails > 1)
		krun_print(r, "Flaky bisect: the %s commit runs %d times first; a commit fails once it failed %ld times, passes after enough runs (at most %d) for %ld%% confidence\n",
			   s->reverse ? "good" : "bad", p.tries, fails,
			   p.max_tries, conf);
	else if (p.flaky)
		krun_print(r, "Flaky bisect: the %s commit runs %d times first; a commit fails once it fails, passes after enough clean runs (at most %d) for %ld%% confidence\n",
			   s->reverse ? "good" : "bad", p.tries, p.max_tries, conf);
	return 0;
}

/*
 * BOXES: the pool, when a step is one run of a commit on one box; it
 * says why not otherwise and bisects on the first box.
 */
static int pool(struct bis *s)
{
	struct krun *r = s->r;
	const char *files = krun_opt(r, KOPT_BISECT_FILES);
	char why[512];

	s->pool = kpool_new(r, false, why, sizeof(why));
	if (!s->pool) {
		if (!why[0])
			return 0;
		krun_print(r, "ktest: test %d: %s\n", r->i, why);
		r->config_error = true;
		return -1;
	}
	if (s->manual)
		snprintf(why, sizeof(why), "BISECT_MANUAL asks for one verdict at a time");
	else if (files && *files)
		snprintf(why, sizeof(why), "BISECT_FILES reads the history afresh after every verdict");
	else if ((s->fl.p.tries > 1 || s->fl.p.flaky) && s->level < KSTEP_BOOT)
		snprintf(why, sizeof(why), "the runs of a build bisect are builds, made in BUILD_DIR");
	else if (krun_bool(r, KOPT_BISECT_SPECULATE) &&
		 s->fl.p.tries == 1 && !s->fl.p.flaky)
		krun_print(r, "BOXES: the boxes build for themselves; BISECT_SPECULATE is not used\n");
	if (why[0]) {
		krun_print(r, "BOXES: one box (%s): %s\n", s->pool->names[0], why);
		kpool_free(s->pool);
		s->pool = NULL;
		return 0;
	}
	s->spread = s->fl.p.tries > 1 || s->fl.p.flaky;
	if (s->spread)
		krun_print(r, "BOXES: %zu boxes share the runs of each commit (%s), one commit at a time\n",
			   s->pool->n, s->fl.p.flaky ? "BISECT_FLAKY" : "BISECT_TRIES");
	else
		krun_print(r, "BOXES: %zu boxes, %zu commits tested at once\n",
			   s->pool->n, s->pool->n);
	return 0;
}

int krun_bisect(struct krun *r)
{
	struct bis s = { .r = r };
	struct kb_replay rp = { 0 };
	struct kvcs_commit head = { 0 };
	bool have_replay = false, have_head = false;
	int ret = -1;

	strmap_init(&s.subjects);
	strmap_init(&s.images);
	if (!krun_opt(r, KOPT_BISECT_TYPE)) {
		krun_print(r, "ktest: BISECT_TYPE[%d] not defined\n", r->i);
		goto out;
	}
	s.v = krun_vcs(r);
	if (!s.v || krun_check_tree(r, s.v))
		goto out;
	s.level = krun_level(r, KOPT_BISECT_TYPE);
	s.reverse = krun_bool(r, KOPT_BISECT_REVERSE);
	s.skip_untestable = krun_bool(r, KOPT_BISECT_SKIP);
	read_retmap(r, &s.ret);
	if (read_flaky(&s) || read_crash(&s))
		goto out;
	if (s.verify)
		pin_builds(&s, true);
	if (pool(&s))
		goto out;
	/* a pool sharing each commit's runs builds ahead as one box does */
	if (krun_bool(r, KOPT_BISECT_SPECULATE) && s.level >= KSTEP_BOOT &&
	    (!s.pool || s.spread) && !s.by_hand) {
		const char *min = krun_opt(r, KOPT_MIN_CONFIG);
		char *bt = min && *min ? xasprintf("useconfig:%s", min) :
			xstrdup("oldconfig");
		char why[256];

		/*
		 * In place (BUILD_DIR, OUTPUT_DIR: incremental builds) when
		 * the box needs nothing of them once it has the kernel: a
		 * boot bisect, one run a commit (speculate.h)
		 */
		bool in_place = s.level == KSTEP_BOOT && s.fl.p.tries == 1 &&
			!s.fl.p.flaky;

		s.spec = kspec_new(r, bt, in_place, why, sizeof(why));
		if (!s.spec)
			krun_print(r, "BISECT_SPECULATE: not speculating: %s\n", why);
		else if (s.spec->in_place &&
			 krun_int(r, KOPT_BISECT_SPECULATE_SIDE, 1) != 0)
			s.side = kspec_new_side(r, bt);
		free(bt);
	}
	if (s.reverse)
		krun_print(r, "Performing a reverse bisect (bad is good, good is bad!)\n");
	have_head = kvcs_head(s.v, &head) == 0;
	if (endpoints(&s, &rp, &have_replay) || start(&s, &rp, have_replay))
		goto out;
	ret = loop(&s);
	if (have_head && kvcs_checkout_again(s.v, head.id))
		krun_print(r, "ktest: cannot put BUILD_DIR back at %.12s: %s\n",
			   head.id, kvcs_error(s.v));
out:
	if (have_head)
		kvcs_commit_clear(&head);
	if (have_replay)
		kbisect_replay_free(&rp);
	bis_free(&s);
	if (ret < 0)
		r->die = true;
	return ret;
}
