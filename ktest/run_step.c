// SPDX-License-Identifier: GPL-2.0-only
/*
 * One step of a test: check a commit out, build it (then, by level, install,
 * boot and test it), and turn what happened into one verdict: GOOD, BAD
 * (the commit's fault: why), SKIP, or INFRA (the host's or the lab's fault,
 * never blamed on a commit).
 *
 * Each step is journalled ("ev=step", started, then finished with its
 * outcome), keyed by the test, its kind and the commit; when the journal
 * already has the outcome of a step (a rerun after a kill), the step is not
 * run again and its outcome is replayed.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "ktest/build.h"
#include "ktest/build_cache.h"
#include "ktest/install.h"
#include "ktest/patchcheck.h"
#include "ktest/run.h"
#include "ktest/vcs.h"

struct line_ctx {
	struct krun *r;
	const struct kstep_opts *o;
	const char *srcdir;
	struct strmap *known;		/* WARNINGS_FILE, normalised */
	bool check_file;
	char first_new[1024];		/* first warning not in WARNINGS_FILE */
	char first_touched[1024];	/* first new warning in a touched file */
};

static void on_build_line(void *ctx, const char *line, size_t len)
{
	struct line_ctx *lc = ctx;
	char *norm;

	krun_log(lc->r, "%.*s\n", (int)len, line);
	if (lc->check_file && !lc->first_new[0]) {
		norm = kp_warning_normalize(line, lc->srcdir);
		if (norm && (!lc->known || !strmap_has(lc->known, norm)))
			snprintf(lc->first_new, sizeof(lc->first_new), "%.*s",
				 (int)len, line);
		free(norm);
	}
	if (lc->o->seen && kp_seen_line(lc->o->seen, line, lc->srcdir) &&
	    !lc->first_touched[0] &&
	    kp_warning_in_touched(line, lc->srcdir, lc->o->touched,
				  lc->o->ntouched))
		snprintf(lc->first_touched, sizeof(lc->first_touched), "%.*s",
			 (int)len, line);
}

/* WARNINGS_FILE, normalised; NULL when it does not exist (every warning is new). */
static struct strmap *load_warnings(const char *path, const char *srcdir)
{
	FILE *f = fopen(path, "r");
	struct strmap *m;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	m = xmalloc(sizeof(*m));
	strmap_init(m);
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *norm;

		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		norm = kp_warning_normalize(line, srcdir);
		if (norm) {
			strmap_put(m, norm, NULL);
			free(norm);
		}
	}
	free(line);
	fclose(f);
	return m;
}

static void free_warnings(struct strmap *m)
{
	if (!m)
		return;
	strmap_free(m, NULL);
	free(m);
}

int krun_write_warnings(struct krun *r, const char *path)
{
	FILE *in = fopen(r->buildlog, "r"), *out;
	const char *srcdir = krun_opt(r, KOPT_BUILD_DIR);
	char *line = NULL, *tmp;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	if (!in)
		return -1;
	tmp = xasprintf("%s.tmp", path);
	out = fopen(tmp, "w");
	if (!out) {
		fclose(in);
		free(tmp);
		return -1;
	}
	while ((n = getline(&line, &cap, in)) >= 0) {
		char *norm;

		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		norm = kp_warning_normalize(line, srcdir);
		if (norm && fprintf(out, "%s\n", norm) < 0)
			ret = -1;
		free(norm);
	}
	free(line);
	fclose(in);
	if (fclose(out) || ret || rename(tmp, path))
		ret = -1;
	free(tmp);
	return ret;
}

static void fill_build_opts(struct krun *r, const struct kstep_opts *o,
			    struct kbuild_opts *b, struct line_ctx *lc)
{
	memset(b, 0, sizeof(*b));
	b->make_cmd = krun_opt(r, KOPT_MAKE_CMD);
	b->build_dir = krun_opt(r, KOPT_BUILD_DIR);
	b->output_dir = krun_opt(r, KOPT_OUTPUT_DIR);
	b->build_type = o->build_type ? o->build_type :
		krun_opt(r, KOPT_BUILD_TYPE);
	b->build_options = krun_opt(r, KOPT_BUILD_OPTIONS);
	b->build_target = krun_opt(r, KOPT_BUILD_TARGET);
	b->localversion = krun_opt(r, KOPT_LOCALVERSION);
	b->min_config = krun_opt(r, KOPT_MIN_CONFIG);
	b->add_config = krun_opt(r, KOPT_ADD_CONFIG);
	b->noclean = o->noclean || krun_bool(r, KOPT_BUILD_NOCLEAN);
	b->pre_build = krun_opt(r, KOPT_PRE_BUILD);
	b->post_build = krun_opt(r, KOPT_POST_BUILD);
	b->pre_build_die = krun_bool(r, KOPT_PRE_BUILD_DIE);
	b->post_build_die = krun_bool(r, KOPT_POST_BUILD_DIE);
	b->timeout_ms = krun_int(r, KOPT_RUN_TIMEOUT, 0) * 1000;
	b->log = r->buildlog;
	b->on_line = on_build_line;
	b->ctx = lc;
}

/*
 * What was built, as a digest of OUTPUT_DIR/BUILD_TARGET: two commits whose
 * images are the same built the same kernel (bisect's verification). Not a
 * security hash; "" when the image cannot be read.
 */
static void image_digest(const struct kbuild_opts *b, char *out, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char buf[65536];
	char *path;
	FILE *f;
	size_t n;

	out[0] = '\0';
	if (!b->output_dir || !b->build_target || !*b->build_target)
		return;
	path = xasprintf("%s/%s", b->output_dir, b->build_target);
	f = fopen(path, "rb");
	free(path);
	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
	if (!ferror(f))
		snprintf(out, len, "%016llx", (unsigned long long)h);
	fclose(f);
}

void krun_build_key(struct krun *r, const char *commit,
		    const char *build_type, struct kbc_key *k)
{
	memset(k, 0, sizeof(*k));
	k->state_dir = r->state_dir;
	k->commit = commit;
	k->build_type = build_type;
	k->min_config = krun_opt(r, KOPT_MIN_CONFIG);
	k->make_cmd = krun_opt(r, KOPT_MAKE_CMD);
	k->build_options = krun_opt(r, KOPT_BUILD_OPTIONS);
	k->localversion = krun_opt(r, KOPT_LOCALVERSION);
	k->build_target = krun_opt(r, KOPT_BUILD_TARGET);
	k->modules = !krun_bool(r, KOPT_NO_INSTALL);
}

static void pack_line(void *ctx, const char *line, size_t len)
{
	krun_log(ctx, "%.*s\n", (int)len, line);
}

/*
 * A checkout, or a store into the build cache, finishes before a SIGTERM
 * takes effect (a box of the pool stopped, pool.c): cut short, it would
 * leave index.lock or a half-made entry. The commands they run start
 * with no signal blocked (kcmd).
 */
static void hold_term(sigset_t *old)
{
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, old);
}

static void release_term(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

static int cache_store(struct krun *r, const struct kbc_key *k,
		       const char *build_dir, const char *output_dir,
		       const char *release, kcmd_line_fn on_line, void *ctx,
		       char *why, size_t len);

int krun_cache_store(struct krun *r, const struct kbc_key *k,
		     const char *build_dir, const char *output_dir,
		     const char *release, kcmd_line_fn on_line, void *ctx,
		     char *why, size_t len)
{
	sigset_t old;
	int ret;

	hold_term(&old);
	ret = cache_store(r, k, build_dir, output_dir, release, on_line, ctx,
			  why, len);
	release_term(&old);
	return ret;
}

static int cache_store(struct krun *r, const struct kbc_key *k,
		       const char *build_dir, const char *output_dir,
		       const char *release, kcmd_line_fn on_line, void *ctx,
		       char *why, size_t len)
{
	struct kinstall_opts io;
	struct kinstall_result ir;
	char *tarball, *top;
	int ret;

	if (!kbc_needs_modules(k, output_dir))
		return kbc_store(k, output_dir, release, NULL, why, len);
	if (kinstall_opts_read(r->c, r->i, &io)) {
		snprintf(why, len, "the install options of test %d do not resolve",
			 r->i);
		return -1;
	}
	io.build_dir = build_dir;
	io.output_dir = output_dir;
	io.kernel_version = release;
	io.on_line = on_line;
	io.ctx = ctx;
	top = xasprintf("%s/build-cache", r->state_dir);
	tarball = xasprintf("%s/modules.tmp%ld", top, (long)getpid());
	if (kcmd_mkdirs_private(top)) {
		snprintf(why, len, "cannot make %s: %s", top, strerror(errno));
		ret = -1;
	} else if (kinstall_pack_modules(&io, tarball, &ir)) {
		snprintf(why, len, "the modules of %s were not packed: %s",
			 release, ir.why);
		ret = -1;
	} else {
		ret = kbc_store(k, output_dir, release, tarball, why, len);
	}
	unlink(tarball);	/* kbc_store moved it, or it failed */
	free(tarball);
	free(top);
	kinstall_opts_release(&io);
	return ret;
}

/*
 * The build cache (build_cache.h): true when the commit's build is back,
 * with *mods its packed modules (or NULL).
 */
static bool from_cache(struct krun *r, const struct kstep_opts *o,
		       const struct kbuild_opts *b, struct kstep_result *res,
		       long *ms, char **mods)
{
	struct kbc_key k;
	char why[1024];
	int rc;

	if (!b->output_dir || !b->build_target || !*b->build_target)
		return false;
	krun_build_key(r, o->commit, b->build_type, &k);
	rc = kbc_restore(&k, b->output_dir, res->release, sizeof(res->release),
			 why, sizeof(why));
	if (rc < 0)
		krun_print(r, "ktest: the build cache: %s: building instead\n", why);
	if (rc)
		return false;
	snprintf(res->phase, sizeof(res->phase), "build");
	*ms = 0;
	krun_forget(r);		/* another kernel: ${KERNEL_VERSION} changed */
	if (o->digest_image)
		image_digest(b, res->image, sizeof(res->image));
	*mods = k.modules ? kbc_modules(&k) : NULL;
	krun_print(r, "Building %.12s: built by an earlier step, taken from the build cache: %s%s\n",
		   o->commit, res->release, *mods ? ", with its modules" : "");
	return true;
}

/* Into the cache; *mods: the modules it packed (or NULL). */
static void to_cache(struct krun *r, const struct kstep_opts *o,
		     const struct kbuild_opts *b, const char *release,
		     char **mods)
{
	struct kbc_key k;
	char why[1024];

	if (!b->output_dir || !b->build_target || !*b->build_target)
		return;
	krun_build_key(r, o->commit, b->build_type, &k);
	if (kbc_needs_modules(&k, b->output_dir))
		krun_print(r, "Packing the modules of %s for the build cache and the install\n",
			   release);
	if (krun_cache_store(r, &k, b->build_dir, b->output_dir, release,
			     pack_line, r, why, sizeof(why)) < 0)
		krun_print(r, "warning: the build cache: %s\n", why);
	else if (k.modules)
		*mods = kbc_modules(&k);
}

/* A later run of a commit: its first run's packed modules. */
static char *first_run_modules(struct krun *r, const struct kstep_opts *o)
{
	struct kbc_key k;

	if (!o->first_type || !o->commit)
		return NULL;
	krun_build_key(r, o->commit, o->first_type, &k);
	return k.modules && kbc_has(&k) ? kbc_modules(&k) : NULL;
}

/*
 * Build; fills res unless the build was good. Returns true when good, with
 * *mods the kernel's packed modules when the build cache has them.
 */
static bool do_build(struct krun *r, const struct kstep_opts *o,
		     struct kstep_result *res, long *ms, char **mods)
{
	struct kbuild_opts b;
	struct kbuild_result br;
	struct line_ctx lc = { .r = r, .o = o };
	const char *wf = krun_opt(r, KOPT_WARNINGS_FILE);
	bool good = false;

	lc.srcdir = krun_opt(r, KOPT_BUILD_DIR);
	if (o->check_warnings && wf && *wf) {
		lc.check_file = true;
		lc.known = load_warnings(wf, lc.srcdir);
	}
	fill_build_opts(r, o, &b, &lc);
	if (o->cache_build && o->commit && b.build_type &&
	    strcmp(b.build_type, "nobuild") &&
	    from_cache(r, o, &b, res, ms, mods)) {
		free_warnings(lc.known);
		return true;
	}
	if (o->built_before)
		krun_print(r, "Building %.12s: its first run built it in OUTPUT_DIR, nothing to build\n",
			   o->commit ? o->commit : "");
	else
		krun_print(r, "Building%s%.12s%s (BUILD_TYPE %s, log %s)\n",
			   o->commit ? " " : "", o->commit ? o->commit : "",
			   o->commit ? "" : " the tree", b.build_type,
			   r->buildlog);
	kbuild_run(&b, &br);
	*ms = br.elapsed_ms;
	r->ms[0] += br.elapsed_ms;
	krun_forget(r);		/* a new kernel: ${KERNEL_VERSION} changed */
	snprintf(res->phase, sizeof(res->phase), "build");
	switch (br.status) {
	case KBUILD_OK:
		good = true;
		break;
	case KBUILD_FAILED:
	case KBUILD_CONFIG_FAILED:
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why), "failed build: %s", br.why);
		break;
	case KBUILD_HOOK_FAILED:
	case KBUILD_ERROR:
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why), "build could not run: %s",
			 br.why);
		break;
	}
	if (good && lc.first_new[0]) {
		good = false;
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why),
			 "New warning found (not in %s)\n%.900s", wf, lc.first_new);
	}
	if (good && lc.first_touched[0]) {
		good = false;
		res->verdict = KV_BAD;
		snprintf(res->why, sizeof(res->why),
			 "new warning in a file the commit touches:\n%.900s",
			 lc.first_touched);
	}
	if (o->seen)
		kp_seen_build_done(o->seen, br.status == KBUILD_OK ?
				   o->touched : NULL,
				   br.status == KBUILD_OK ? o->ntouched : 0);
	free_warnings(lc.known);
	if (good) {
		snprintf(res->release, sizeof(res->release), "%s", br.release);
		if (o->digest_image)
			image_digest(&b, res->image, sizeof(res->image));
		if ((o->cache_build || o->cache_store) && o->commit &&
		    b.build_type && strcmp(b.build_type, "nobuild")) {
			int64_t t0 = kclock_ms();

			/* the phase's time includes packing the modules */
			to_cache(r, o, &b, br.release, mods);
			*ms += (long)(kclock_ms() - t0);
		}
		if (o->built_before)
			*mods = first_run_modules(r, o);
	}
	if (good && o->built_before)
		krun_print(r, "Kernel %s\n", br.release);
	else if (good)
		krun_print(r, "Build done in %ld.%ld s: %s, %d warning%s\n",
			   br.elapsed_ms / 1000, br.elapsed_ms % 1000 / 100,
			   br.release, br.warnings, br.warnings == 1 ? "" : "s");
	else if (!r->cancel_step)	/* a build stopped, not needed, did not fail */
		krun_print(r, "%s\n", res->why);
	return good;
}

static int checkout(struct krun *r, const struct kstep_opts *o,
		    struct kstep_result *res);

static int step_checkout(struct krun *r, const struct kstep_opts *o,
			 struct kstep_result *res)
{
	sigset_t old;
	int ret;

	hold_term(&old);
	ret = checkout(r, o, res);
	release_term(&old);
	return ret;
}

/* What the checkout mended first (a lock a killed run left), said. */
static int checked_out(struct krun *r, struct kvcs *v)
{
	const char *note = kvcs_note(v);

	if (note)
		krun_print(r, "ktest: %s\n", note);
	return 0;
}

static int checkout(struct krun *r, const struct kstep_opts *o,
		    struct kstep_result *res)
{
	struct kvcs *v = krun_vcs(r);

	if (!v)
		return -1;
	if (o->revert) {
		bool conflicts;

		if (!kvcs_checkout_revert(v, o->commit, o->revert, &conflicts))
			return checked_out(r, v);
		if (!conflicts) {
			krun_print(r, "ktest: cannot check out %.12s with %.12s reverted in BUILD_DIR: %s\n",
				   o->commit, o->revert, kvcs_error(v));
			return -1;
		}
		/* nothing to test: a skip, not a stop */
		res->verdict = KV_SKIP;
		snprintf(res->phase, sizeof(res->phase), "build");
		snprintf(res->why, sizeof(res->why), "%s", kvcs_error(v));
		krun_print(r, "%s: nothing to test\n", kvcs_error(v));
		return 1;
	}
	if (o->force_checkout ? kvcs_checkout_again(v, o->commit) :
	    kvcs_checkout(v, o->commit, false)) {
		krun_print(r, "ktest: cannot check out %.12s in BUILD_DIR: %s\n",
			   o->commit, kvcs_error(v));
		return -1;
	}
	return checked_out(r, v);
}

static const char *step_key(const struct kstep_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%s", o->kind,
		 o->key ? o->key : o->commit ? o->commit : "-");
	return buf;
}

static void replay(const struct kjrec *rec, struct kstep_result *res)
{
	const char *v;

	res->verdict = kverdict_parse(kjrec_get(rec, "verdict"));
	res->resumed = true;
	if ((v = kjrec_get(rec, "why")))
		snprintf(res->why, sizeof(res->why), "%s", v);
	if ((v = kjrec_get(rec, "phase")))
		snprintf(res->phase, sizeof(res->phase), "%s", v);
	if ((v = kjrec_get(rec, "title")))
		snprintf(res->title, sizeof(res->title), "%s", v);
	if ((v = kjrec_get(rec, "status")))
		res->test_status = (int)strtol(v, NULL, 10);
	if ((v = kjrec_get(rec, "image")))
		snprintf(res->image, sizeof(res->image), "%s", v);
}

static void to_report(struct krun *r, const struct kstep_opts *o,
		      const struct kstep_result *res, const long *ms)
{
	struct kstep_report *s = kresults_step(r->t, o->kind, o->commit,
					      o->subject);
	const char *out = krun_opt(r, KOPT_OUTPUT_DIR);
	const char *bt = o->build_type;
	char *cfg;

	/* a config step (keyed by its config): the candidate built, kept */
	if (o->key && bt && !strncmp(bt, "useconfig:", 10))
		cfg = xstrdup(bt + 10);
	else
		cfg = xasprintf("%s/.config", out ? out : ".");

	s->verdict = res->verdict;
	s->resumed = res->resumed;
	kresults_set(&s->config, cfg);
	kresults_set(&s->why, res->why[0] ? res->why : NULL);
	kresults_set(&s->title, res->title[0] ? res->title : NULL);
	kresults_set(&s->failed_phase,
		    res->verdict != KV_GOOD && res->phase[0] ? res->phase : NULL);
	for (int p = 0; p < KPH__COUNT; p++)
		s->ms[p] = ms[p];
	free(cfg);
}

static int journal_step(struct krun *r, const char *key, const char *state,
			const struct kstep_result *res, const long *ms)
{
	char idx[16], t[KPH__COUNT][24], st[16];
	const char *names[] = { "ev", "test", "key", "state", "verdict", "why",
				"phase", "title", "build_ms", "install_ms",
				"boot_ms", "test_ms", "status", "image" };
	const char *values[14];

	if (r->no_journal)
		return 0;
	snprintf(idx, sizeof(idx), "%d", r->i);
	values[0] = "step";
	values[1] = idx;
	values[2] = key;
	values[3] = state;
	for (int k = 4; k < 14; k++)
		values[k] = NULL;
	if (res) {
		values[4] = kverdict_name(res->verdict);
		values[5] = res->why[0] ? res->why : NULL;
		values[6] = res->phase[0] ? res->phase : NULL;
		values[7] = res->title[0] ? res->title : NULL;
		for (int p = 0; p < KPH__COUNT; p++) {
			snprintf(t[p], sizeof(t[p]), "%ld", ms[p]);
			values[8 + p] = ms[p] >= 0 ? t[p] : NULL;
		}
		snprintf(st, sizeof(st), "%d", res->test_status);
		values[12] = ms[KPH_TEST] >= 0 ? st : NULL;
		values[13] = res->image[0] ? res->image : NULL;
	}
	if (kjournal_appendv(&r->j, names, values, 14)) {
		krun_print(r, "ktest: cannot write the journal %s: %s\n",
			   r->j.path, strerror(errno));
		return -1;
	}
	return 0;
}

static void hms(char *buf, size_t len, long ms)
{
	long s = ms / 1000;

	if (s >= 3600)
		snprintf(buf, len, "%ldh%02ldm", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, len, "%lds", s);
}

/*
 * On a terminal, one line before each step: where the run is, what is
 * left, and when it should end (the average step so far times the steps
 * left). Not in LOG_FILE.
 */
static void progress(struct krun *r, const struct kstep_opts *o)
{
	char el[32], eta[32] = "";
	long steps;

	if (!r->tty)
		return;
	hms(el, sizeof(el), kclock_ms() - r->run_t0);
	steps = o->steps_left >= 0 ? o->steps_left + 1 : o->left >= 0 ? o->left + 1 : -1;
	if (steps > 0 && r->steps_done > 0) {
		char t[24];

		hms(t, sizeof(t), r->steps_ms / r->steps_done * steps);
		snprintf(eta, sizeof(eta), ", ETA %s", t);
	}
	printf("ktest: test %d of %d, %s%s%.12s", r->i, r->c->num_tests, o->kind,
	       o->commit ? " " : "", o->commit ? o->commit : "");
	if (o->left >= 0)
		printf(", %ld commit%s left after this", o->left,
		       o->left == 1 ? "" : "s");
	if (o->steps_left >= 0)
		printf(" (about %d more step%s)", o->steps_left,
		       o->steps_left == 1 ? "" : "s");
	printf(", %s elapsed%s\n", el, eta);
	fflush(stdout);
}

/*
 * INFRA_HEALTH_CHECK: a boot or test failure on a box the lab already
 * failed in this run is blamed on the commit only once the box boots its
 * good kernel; if it does not, the failure is the box's (INFRA).
 */
static void check_before_blame(struct krun *r, const struct kstep_opts *o,
			       struct kstep_result *res)
{
	char before[160], health[2048], why[sizeof(res->why)];

	if (strcmp(res->phase, "boot") && strcmp(res->phase, "test"))
		return;
	snprintf(before, sizeof(before), "this failed %s is blamed on %.12s",
		 res->phase, o->commit ? o->commit : "the kernel");
	if (!krun_health_check(r, before, health, sizeof(health)))
		return;
	snprintf(why, sizeof(why),
		 "%s failed its health check after this %s failure (%.1500s), so the failure is the lab's: %.4000s",
		 krun_box_name(r), res->phase, health, res->why);
	memcpy(res->why, why, sizeof(why));
	res->verdict = KV_INFRA;
	res->title[0] = '\0';
}

/* An answer to BISECT_MANUAL's question, or KV_NONE. */
static enum kverdict answer_of(const char *a)
{
	static const struct { const char *word; enum kverdict v; } t[] = {
		{ "good", KV_GOOD }, { "pass", KV_GOOD }, { "p", KV_GOOD },
		{ "bad", KV_BAD }, { "fail", KV_BAD }, { "f", KV_BAD },
		{ "skip", KV_SKIP }, { "s", KV_SKIP },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcasecmp(a, t[i].word))
			return t[i].v;
	return KV_NONE;
}

int krun_ask_verdict(struct krun *r, const char *key, const char *question,
		     enum kverdict *v)
{
	static const char *const names[] = { "ev", "test", "key", "answer" };
	const char *values[4];
	const struct kjrec *rec;
	char idx[16], buf[64];
	const char *a;

	snprintf(idx, sizeof(idx), "%d", r->i);
	rec = kjournal_find(&r->j, "ev", "manual", "test", idx, "key", key,
			    NULL);
	a = rec ? kjrec_get(rec, "answer") : NULL;
	if (a && answer_of(a) != KV_NONE) {
		*v = answer_of(a);
		krun_print(r, "%s%s (BISECT_MANUAL, from the journal)\n",
			   question, a);
		return 0;
	}
	for (;;) {
		printf("%s", question);
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin)) {
			krun_print(r, "\nktest: BISECT_MANUAL: no answer (end of input)\n");
			return -1;
		}
		buf[strcspn(buf, "\r\n")] = '\0';
		*v = answer_of(buf);
		if (*v != KV_NONE)
			break;
		printf("Please answer p, f or s (pass, fail, skip; good, bad)\n");
	}
	krun_log(r, "%s%s (BISECT_MANUAL)\n", question, buf);
	values[0] = "manual";
	values[1] = idx;
	values[2] = key;
	values[3] = buf;
	return kjournal_appendv(&r->j, names, values, 4) ? -1 : 0;
}

int krun_step(struct krun *r, const struct kstep_opts *o,
	      struct kstep_result *res)
{
	long t0;
	char key[128], idx[16];
	const struct kjrec *done;
	long ms[KPH__COUNT] = { -1, -1, -1, -1 };
	char *mods = NULL;
	int co;

	memset(res, 0, sizeof(*res));
	step_key(o, key, sizeof(key));
	snprintf(idx, sizeof(idx), "%d", r->i);
	/* a checkout for the user is made again: the tree must be there */
	done = o->checkout_only ? NULL :
		kjournal_find(&r->j, "ev", "step", "test", idx, "key", key,
			      "state", "done", NULL);
	/* the lab's trouble is not the commit's outcome: run it again */
	if (done && kverdict_parse(kjrec_get(done, "verdict")) == KV_INFRA)
		done = NULL;
	if (done) {
		replay(done, res);
		for (int p = 0; p < KPH__COUNT; p++) {
			static const char *const f[] = { "build_ms", "install_ms",
							 "boot_ms", "test_ms" };
			const char *v = kjrec_get(done, f[p]);

			ms[p] = v ? strtol(v, NULL, 10) : -1;
		}
		krun_print(r, "%s%s%.12s: %s in the earlier run (from the journal)\n",
			   o->kind, o->commit ? " " : "", o->commit ? o->commit : "",
			   kverdict_name(res->verdict));
		memcpy(res->ms, ms, sizeof(ms));
		to_report(r, o, res, ms);
		return 0;
	}
	if (krun_interrupted(r))
		return -1;
	progress(r, o);
	t0 = kclock_ms();
	if (journal_step(r, key, "start", NULL, NULL))
		return -1;
	if (o->before_tree)
		o->before_tree(o->before_tree_ctx);
	co = o->commit ? step_checkout(r, o, res) : 0;
	if (co < 0)
		return -1;
	if (!co && o->checkout_only) {
		/* nothing ran: what the user says decides */
		res->verdict = KV_SKIP;
		snprintf(res->why, sizeof(res->why),
			 "checked out for a test by hand (BISECT_MANUAL, BISECT_TRIES = 0)");
	} else if (!co && do_build(r, o, res, &ms[KPH_BUILD], &mods)) {
		res->verdict = KV_GOOD;
		if (o->after_build && o->after_build_when_up) {
			r->kernel_up = o->after_build;
			r->kernel_up_ctx = o->after_build_ctx;
		} else if (o->after_build) {
			o->after_build(o->after_build_ctx);
		}
		r->kernel_booted = o->after_boot;
		r->kernel_booted_ctx = o->after_build_ctx;
		if (o->level > KSTEP_BUILD &&
		    !krun_lab_step(r, o->level, res->release, mods, res, ms)) {
			res->verdict = KV_GOOD;
			res->phase[0] = '\0';
		}
		r->kernel_up = NULL;
		r->kernel_up_ctx = NULL;
		r->kernel_booted = NULL;
		r->kernel_booted_ctx = NULL;
		if (o->level >= KSTEP_BOOT && o->settle_ms >= 0)
			krun_lab_settle(r, o->settle_ms);
	}
	if (krun_stopped_hard()) {
		/* its commands were stopped: no outcome, the rerun runs it */
		res->verdict = KV_INFRA;
		snprintf(res->why, sizeof(res->why),
			 "interrupted: a second Ctrl-C (SIGINT) stopped its commands");
	}
	if (r->cancel_step) {
		/* not needed: nothing of it kept (the journal says started) */
		r->cancel_step = false;
		free(mods);
		return 1;
	}
	if (res->verdict == KV_GOOD)
		res->why[0] = '\0';
	if (res->verdict == KV_INFRA)
		r->infra_seen++;
	else if (res->verdict == KV_BAD && r->infra_seen &&
		 krun_bool(r, KOPT_INFRA_HEALTH_CHECK))
		check_before_blame(r, o, res);
	r->steps_done++;
	r->steps_ms += kclock_ms() - t0;
	/* a failed POWER_CYCLE's why names it: no secret in the record */
	kcmd_redact_buf(res->why, sizeof(res->why));
	kcmd_redact_buf(res->title, sizeof(res->title));
	memcpy(res->ms, ms, sizeof(ms));
	free(mods);
	to_report(r, o, res, ms);
	if (r->step_done)
		r->step_done(r->step_done_ctx, o, res);
	return journal_step(r, key, "done", res, ms);
}

int krun_step_adopt(struct krun *r, const struct kstep_opts *o,
		    const struct kstep_result *res)
{
	char key[128];

	to_report(r, o, res, res->ms);
	if (res->resumed)
		return 0;
	for (int p = 0; p < KPH__COUNT; p++)
		if (res->ms[p] > 0)
			r->ms[p] += res->ms[p];
	if (res->verdict == KV_INFRA)
		r->infra_seen++;
	r->steps_done++;
	return journal_step(r, step_key(o, key, sizeof(key)), "done", res,
			    res->ms);
}
