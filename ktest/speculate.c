// SPDX-License-Identifier: GPL-2.0-only
/*
 * Speculative builds for a boot or test bisect (see speculate.h). The
 * child is a fork of ktest that touches nothing of the run's: it opens the
 * repository afresh, checks out in its own work tree, builds in its own
 * output directory with the step's options, writes only its log and the
 * build cache, and ends with _exit (no stdio buffer of the parent's is
 * flushed twice). It leads its own process group, so stopping it stops
 * its make too.
 */
#include <errno.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "console/console.h"
#include "ktest/build.h"
#include "ktest/build_cache.h"
#include "ktest/cmd.h"
#include "ktest/run.h"
#include "ktest/speculate.h"
#include "ktest/vcs.h"

/* How often a step waiting for a build ahead looks in the cache (a stat). */
#define POLL_MS 20
/* How long kspec_start waits for a child told to stop to end. */
#define DYING_WAIT_MS 300

static void key_of(struct kspec *sp, const char *id, struct kbc_key *k)
{
	krun_build_key(sp->r, id, sp->build_type, k);
}

/* A work tree kept from a bisect of another BUILD_DIR, or half made: made again. */
static void reclaim(struct kspec *sp)
{
	struct kvcs *v = krun_vcs(sp->r);
	int ret = v ? kvcs_worktree_reclaim(v, sp->src) : 0;

	if (ret == KVCS_RECLAIMED_OTHER)
		krun_print(sp->r, "BISECT_SPECULATE: %s was a work tree of another repository (BUILD_DIR changed since): it is added again, and its first build is a whole one\n",
			   sp->src);
	else if (ret == KVCS_RECLAIMED_HALF)
		krun_print(sp->r, "BISECT_SPECULATE: %s was left half made (ktest was killed while it added it): it is added again\n",
			   sp->src);
	else if (ret < 0)
		krun_print(sp->r, "BISECT_SPECULATE: %s\n", kvcs_error(v));
}

static struct kspec *alloc(struct krun *r, const char *build_type,
			   bool in_place, bool idle)
{
	struct kspec *sp = xcalloc(1, sizeof(*sp));

	sp->r = r;
	sp->build_type = xstrdup(build_type);
	sp->in_place = in_place;
	sp->idle = idle;
	if (in_place) {
		sp->src = xstrdup(krun_opt(r, KOPT_BUILD_DIR));
		sp->out = xstrdup(krun_opt(r, KOPT_OUTPUT_DIR));
	} else {
		sp->src = xasprintf("%s/spec-src", r->state_dir);
		sp->out = xasprintf("%s/spec-out", r->state_dir);
		reclaim(sp);
	}
	sp->log = xasprintf("%s/spec%s.log", r->state_dir, idle ? "-side" : "");
	return sp;
}

struct kspec *kspec_new(struct krun *r, const char *build_type, bool in_place,
			char *why, size_t len)
{
	const char *pre = krun_opt(r, KOPT_PRE_BUILD);
	const char *post = krun_opt(r, KOPT_POST_BUILD);
	const char *files = krun_opt(r, KOPT_BISECT_FILES);
	const char *bd = krun_opt(r, KOPT_BUILD_DIR);
	const char *od = krun_opt(r, KOPT_OUTPUT_DIR);

	if ((pre && *pre) || (post && *post)) {
		snprintf(why, len, "PRE_BUILD or POST_BUILD is set: a build elsewhere would not be the same build");
		return NULL;
	}
	if (files && *files) {
		snprintf(why, len, "BISECT_FILES is set");
		return NULL;
	}
	return alloc(r, build_type, in_place && bd && od, false);
}

struct kspec *kspec_new_side(struct krun *r, const char *build_type)
{
	return alloc(r, build_type, false, true);
}

/*
 * The child's work tree at id: added the first time, checked out after.
 * In place, when the run's own handle has made BUILD_DIR's work tree
 * match its index (kvcs_synced()), only ktest's checkouts have changed it
 * since: the child checks out with that handle (its copy, with the trees
 * already read), only the files that differ from the index, as the step's
 * next checkout does (0.19 s in the lab's kernel tree; 0.29-0.46 s with
 * a fresh handle).
 */
static struct kvcs *worktree_at(struct kspec *sp, struct kvcs *w,
				const char *id, FILE *log)
{
	char err[512], *gitfile = xasprintf("%s/.git", sp->src);
	bool changed = sp->in_place && kvcs_synced(sp->r->vcs);
	struct kvcs *main;
	char *name;

	if (!w && changed)
		w = sp->r->vcs;
	else if (!w && (sp->in_place || access(gitfile, F_OK) == 0))
		w = kvcs_open(sp->src, err, sizeof(err));
	free(gitfile);
	if (w) {
		if ((changed ? kvcs_checkout_changed(w, id) :
		     kvcs_checkout_again(w, id)) == 0) {
			const char *note = kvcs_note(w);

			if (note)
				fprintf(log, "spec: %s\n", note);
			return w;
		}
		fprintf(log, "spec: checkout of %s: %s\n", id, kvcs_error(w));
		if (w != sp->r->vcs)
			kvcs_close(w);
		return NULL;
	}
	main = kvcs_open(krun_opt(sp->r, KOPT_BUILD_DIR), err, sizeof(err));
	if (!main) {
		fprintf(log, "spec: %s\n", err);
		return NULL;
	}
	name = kvcs_worktree_name("ktest-spec", sp->src);
	if (kvcs_worktree_add(main, name, sp->src, id)) {
		fprintf(log, "spec: worktree: %s\n", kvcs_error(main));
		kvcs_close(main);
		free(name);
		return NULL;
	}
	kvcs_close(main);
	free(name);
	w = kvcs_open(sp->src, err, sizeof(err));
	if (!w)
		fprintf(log, "spec: %s\n", err);
	return w;
}

static int copy_config(const char *from_dir, const char *to_dir)
{
	char *from = xasprintf("%s/.config", from_dir);
	char *to = xasprintf("%s/.config", to_dir);
	int ret = kcmd_mkdirs(to_dir) ? -1 : kcmd_copy_file(from, to);

	free(from);
	free(to);
	return ret;
}

/*
 * The child's SIGTERM (stop(), or ktest gone: PDEATHSIG): a make running
 * is stopped with its whole group and waited for, so nothing of it writes
 * to the build directories once the child is reaped; during a checkout or
 * a store into the cache, the child ends after it (a checkout cut short
 * leaves index.lock, a store its temporary directory).
 */
static volatile sig_atomic_t stop_asked, in_critical;

static void on_term(int sig)
{
	(void)sig;
	stop_asked = 1;
	if (in_critical)
		return;
	kcmd_stop_running();
	_exit(1);
}

static void child_signals(pid_t parent)
{
	struct sigaction sa = { .sa_handler = on_term };

	kcmd_after_fork();	/* a command of the parent's is not ours */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);	/* the parent decides */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
}

static struct kvcs *checkout(struct kspec *sp, struct kvcs *w, const char *id,
			     FILE *log)
{
	in_critical = 1;
	w = worktree_at(sp, w, id, log);
	in_critical = 0;
	if (stop_asked)
		_exit(1);
	return w;
}

static void log_line(void *ctx, const char *line, size_t len)
{
	fprintf(ctx, "spec: %.*s\n", (int)len, line);
}

/*
 * The side build: CPU time only when nothing else wants it, and the
 * disk's idle class (where the I/O scheduler has classes: BFQ). make and
 * its compilers inherit both.
 */
static void go_idle(FILE *log)
{
	struct sched_param prio = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &prio) < 0)
		fprintf(log, "spec: SCHED_IDLE: %s\n", strerror(errno));
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0)
		fprintf(log, "spec: I/O idle class: %s\n", strerror(errno));
}

static void child(struct kspec *sp, const char *output_dir)
{
	struct krun *r = sp->r;
	struct kvcs *w = NULL;
	FILE *log = fopen(sp->log, "a");

	if (!log)
		_exit(1);
	setvbuf(log, NULL, _IOLBF, 0);
	if (sp->idle)
		go_idle(log);
	for (size_t i = 0; i < sp->nids; i++) {
		const char *id = sp->ids[i];
		struct kbuild_opts b = { 0 };
		struct kbuild_result br;
		struct kbc_key k;
		char why[512];
		int64_t t0;

		key_of(sp, id, &k);
		if (kbc_has(&k))
			continue;
		t0 = kclock_ms();
		w = checkout(sp, w, id, log);
		if (!w)
			break;
		fprintf(log, "spec: %s checked out in %lld ms\n", id,
			(long long)(kclock_ms() - t0));
		/* as the next step would: from this step's .config */
		if (!sp->in_place && !strcmp(sp->build_type, "oldconfig"))
			copy_config(output_dir, sp->out);
		b.make_cmd = k.make_cmd;
		b.build_dir = sp->src;
		b.output_dir = sp->out;
		b.build_type = sp->build_type;
		b.build_options = k.build_options;
		b.build_target = k.build_target;
		b.localversion = k.localversion;
		b.min_config = k.min_config;
		b.add_config = krun_opt(r, KOPT_ADD_CONFIG);
		b.noclean = krun_bool(r, KOPT_BUILD_NOCLEAN);
		b.timeout_ms = krun_int(r, KOPT_RUN_TIMEOUT, 0) * 1000;
		b.log = xasprintf("%s/spec-%sbuild-%d.log", r->state_dir,
				  sp->idle ? "side-" : "", (int)i);
		fprintf(log, "spec: building %s\n", id);
		kbuild_run(&b, &br);
		fprintf(log, "spec: %s: %s%s\n", id,
			br.status == KBUILD_OK ? "built " : "failed: ",
			br.status == KBUILD_OK ? br.release : br.why);
		in_critical = 1;
		if (br.status == KBUILD_OK &&
		    krun_cache_store(r, &k, sp->src, sp->out, br.release,
				     log_line, log, why, sizeof(why)) < 0)
			fprintf(log, "spec: cache: %s\n", why);
		in_critical = 0;
		if (stop_asked)
			_exit(1);
		free((char *)b.log);
	}
	if (w && w != r->vcs)
		kvcs_close(w);
	fclose(log);
	_exit(0);
}

/* Has the child told to stop ended? Waits at most ms for it. */
static bool dying_gone(struct kspec *sp, long ms)
{
	struct timespec ts = { 0, 10 * 1000000L };

	for (long t = 0; sp->dying; t += 10) {
		pid_t w = waitpid(sp->dying, NULL, WNOHANG);

		if (w == sp->dying || (w < 0 && errno != EINTR)) {
			sp->dying = 0;
			break;
		}
		if (t >= ms)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/*
 * Stops the child. In place, waited for: the step uses BUILD_DIR and
 * OUTPUT_DIR next. Else only told: it may be adding its work tree, the
 * whole tree's checkout, which it finishes first (a minute on a kernel
 * tree, at idle priority longer), and nothing but the next child uses
 * its directories (kspec_start waits for it).
 */
static void stop(struct kspec *sp)
{
	if (!sp->pid)
		return;
	kill(-sp->pid, SIGTERM);
	kill(sp->pid, SIGTERM);
	if (sp->in_place) {
		while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
			;
	} else {
		sp->dying = sp->pid;
	}
	sp->pid = 0;
}

bool kspec_building(const struct kspec *sp, const char *id)
{
	for (size_t i = 0; sp && sp->pid && id && i < sp->nids; i++)
		if (!strcmp(sp->ids[i], id))
			return true;
	return false;
}

/* Is the child still at work on exactly ids[0..n) (as kept)? */
static bool same_work(struct kspec *sp, char ids[2][41], size_t n)
{
	if (!sp->pid || n != sp->nids)
		return false;
	if (waitpid(sp->pid, NULL, WNOHANG) == sp->pid) {
		sp->pid = 0;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], sp->ids[i]))
			return false;
	return true;
}

void kspec_start(struct kspec *sp, const char *const *ids, size_t n)
{
	const char *out = krun_opt(sp->r, KOPT_OUTPUT_DIR);
	struct kbc_key k;
	pid_t pid, parent;
	char want[2][41];
	size_t nw = 0;

	for (size_t i = 0; i < n && nw < 2; i++) {
		if (!ids[i])
			continue;
		key_of(sp, ids[i], &k);
		if (kbc_has(&k))
			continue;
		snprintf(want[nw++], sizeof(want[0]), "%s", ids[i]);
	}
	if (same_work(sp, want, nw))
		return;
	stop(sp);
	sp->nids = 0;
	/*
	 * A child stopped a moment ago is gone in milliseconds (its make
	 * stopped), unless it is in a checkout: then nothing is started
	 * now, and the next call tries again
	 */
	if (!dying_gone(sp, DYING_WAIT_MS))
		return;
	sp->nids = nw;
	memcpy(sp->ids, want, sizeof(want));
	if (!sp->nids || !out)
		return;
	fflush(NULL);		/* nothing of ours is written twice */
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		krun_print(sp->r, "warning: no speculative build: fork: %s\n",
			   strerror(errno));
		return;
	}
	if (!pid) {
		setpgid(0, 0);
		child_signals(parent);
		child(sp, out);
	}
	setpgid(pid, pid);
	sp->pid = pid;
	krun_print(sp->r, "Speculating: building %.12s%s%.12s in the background%s (%s)\n",
		   sp->ids[0], sp->nids > 1 ? " and " : "",
		   sp->nids > 1 ? sp->ids[1] : "",
		   sp->in_place ? ", in BUILD_DIR and OUTPUT_DIR (the box has the kernel)" :
		   sp->idle ? ", in its own work tree at idle priority" : "",
		   sp->log);
}

void kspec_settle(struct kspec *sp, const char *id)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };
	long waited = 0;
	bool mine = false;
	struct kbc_key k;

	if (!sp || !sp->pid)
		return;
	for (size_t i = 0; id && i < sp->nids; i++)
		mine |= !strcmp(sp->ids[i], id);
	/*
	 * Still on the other one (id is second and the first is not in the
	 * cache yet): building id in the step is sooner than after it
	 */
	if (mine && sp->nids == 2 && !strcmp(sp->ids[1], id)) {
		key_of(sp, sp->ids[0], &k);
		mine = kbc_has(&k);
	}
	if (!mine) {
		stop(sp);
		return;
	}
	key_of(sp, id, &k);
	for (;;) {
		if (kbc_has(&k)) {
			stop(sp);
			break;
		}
		if (waitpid(sp->pid, NULL, WNOHANG) == sp->pid) {
			sp->pid = 0;
			break;
		}
		if (krun_interrupted(sp->r)) {
			stop(sp);
			return;
		}
		nanosleep(&ts, NULL);
		waited += POLL_MS;
	}
	if (waited >= 1000)
		krun_print(sp->r, "Waited %ld s for the speculative build of %.12s\n",
			   waited / 1000, id);
}

void kspec_free(struct kspec *sp)
{
	if (!sp)
		return;
	stop(sp);
	if (!dying_gone(sp, 1000)) {
		krun_print(sp->r, "BISECT_SPECULATE: waiting for the checkout in %s to end (a work tree is added whole once)\n",
			   sp->src);
		while (waitpid(sp->dying, NULL, 0) < 0 && errno == EINTR)
			;
		sp->dying = 0;
	}
	free(sp->build_type);
	free(sp->src);
	free(sp->out);
	free(sp->log);
	free(sp);
}
