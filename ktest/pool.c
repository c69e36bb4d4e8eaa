// SPDX-License-Identifier: GPL-2.0-only
/*
 * A pool of boxes (see pool.h). The child of a box is a fork of ktest
 * that runs one step as ktest would (krun_step_retry) with the box's
 * options: ${BOX} set, BUILD_DIR and OUTPUT_DIR its own, its own lab
 * (power, console, qemu) and repository handle, no journal. It sends its
 * result up a pipe and ends with _exit. SIGINT reaches it with ktest
 * (same process group) and stops its step as it stops ktest's; ktest gone
 * (PDEATHSIG) or SIGTERM stops its make with it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "ktest/pool.h"
#include "ktest/report.h"
#include "ktest/run.h"
#include "ktest/vcs.h"

#define MAX_TRIES 8

/* One run of the step that the lab failed (INFRA), retried after it */
struct try {
	char kind[64];
	struct kstep_result res;
};

struct msg {
	int ret;
	bool infra, unhealthy, config_error, die;
	struct kstep_result res;
	/* the INFRA runs before res, for the report and the journal as on
	 * one box (the last is res's own when the step gave up) */
	size_t ntries;
	struct try tries[MAX_TRIES];
};

/* The child's record of each INFRA run of its step */
static void record_try(void *ctx, const struct kstep_opts *o,
		       const struct kstep_result *res)
{
	struct msg *m = ctx;

	if (res->verdict != KV_INFRA || m->ntries == MAX_TRIES)
		return;
	snprintf(m->tries[m->ntries].kind, sizeof(m->tries[0].kind), "%s",
		 o->kind);
	m->tries[m->ntries++].res = *res;
}

static bool good_name(const char *s)
{
	if (!*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr("_.-", *s)))
			return false;
	return true;
}

/* NAME[i] = v for the current test, and the resolved values forgotten */
static void store(struct krun *r, const char *name, const char *v)
{
	char key[64];

	snprintf(key, sizeof(key), "%s[%d]", name, r->i);
	kconfig_store(r->c, key, v, NULL);
	krun_forget(r);
}

struct kpool *kpool_new(struct krun *r, bool one, char *why, size_t len)
{
	struct kpool *p;
	char **w;
	size_t n;

	why[0] = '\0';
	w = krun_words(krun_opt(r, KOPT_BOXES), &n);
	if (one && !n) {
		krun_words_free(w, n);
		w = krun_words("1", &n);
	}
	if (n < 2 && !one) {	/* no pool; one box still gives ${BOX} */
		if (n == 1 && !good_name(w[0]))
			snprintf(why, len, "BOXES: '%s' is no box name: give each box a name of letters, digits, '_', '.' or '-', once",
				 w[0]);
		else if (n == 1)
			store(r, "BOX", w[0]);
		krun_words_free(w, n);
		return NULL;
	}
	if (n > KPOOL_MAX) {
		snprintf(why, len, "BOXES names %zu boxes; at most %d", n,
			 KPOOL_MAX);
		krun_words_free(w, n);
		return NULL;
	}
	for (size_t k = 0; k < n; k++) {
		bool dup = false;

		for (size_t j = 0; j < k; j++)
			dup |= !strcmp(w[j], w[k]);
		if (!good_name(w[k]) || dup) {
			snprintf(why, len, "BOXES: '%s' is %s: give each box a name of letters, digits, '_', '.' or '-', once",
				 w[k], dup ? "named twice" : "no box name");
			krun_words_free(w, n);
			return NULL;
		}
	}
	p = xcalloc(1, sizeof(*p));
	p->r = r;
	p->n = n;
	for (size_t k = 0; k < n; k++) {
		p->names[k] = xstrdup(w[k]);
		p->prefix[k] = xasprintf("[box %s] ", w[k]);
	}
	krun_words_free(w, n);
	store(r, "BOX", p->names[0]);
	return p;
}

/*
 * Box k's BUILD_DIR and OUTPUT_DIR: the config's when ${BOX} makes them
 * its own, else a work tree and an output directory under STATE_DIR
 * (*wt: the work tree). malloc'd.
 */
static void box_dirs(struct kpool *p, size_t k, char **bd, char **od, bool *wt)
{
	struct krun *r = p->r;
	char *bd0 = xstrdup(krun_opt(r, KOPT_BUILD_DIR) ? krun_opt(r, KOPT_BUILD_DIR) : ".");
	char *od0 = xstrdup(krun_opt(r, KOPT_OUTPUT_DIR) ? krun_opt(r, KOPT_OUTPUT_DIR) : "");
	const char *v;

	store(r, "BOX", p->names[k]);
	v = krun_opt(r, KOPT_BUILD_DIR);
	*wt = !v || !strcmp(v, bd0);
	*bd = *wt ? xasprintf("%s/box-%s/src", r->state_dir, p->names[k]) :
		xstrdup(v);
	v = krun_opt(r, KOPT_OUTPUT_DIR);
	*od = !v || !strcmp(v, od0) ?
		xasprintf("%s/box-%s/out", r->state_dir, p->names[k]) :
		xstrdup(v);
	store(r, "BOX", p->names[0]);
	free(bd0);
	free(od0);
}

/*
 * Box k's work tree, added the first time, and again when the one kept is
 * another repository's (in ktest's process: one at a time).
 */
static int prepare(struct kpool *p, size_t k, const char *bd, const char *id)
{
	struct krun *r = p->r;
	char *git = xasprintf("%s/.git", bd);
	char *base = xasprintf("ktest-box-%s", p->names[k]);
	char *name = kvcs_worktree_name(base, bd);	/* one per STATE_DIR and box */
	char *dir = xasprintf("%s/box-%s", r->state_dir, p->names[k]);
	struct kvcs *v = krun_vcs(r);
	int ret = 0;

	if (!v) {
		ret = -1;
		goto out;
	}
	ret = kvcs_worktree_reclaim(v, bd);
	if (ret == KVCS_RECLAIMED_OTHER)
		krun_print(r, "Box %s: %s was a work tree of another repository (BUILD_DIR changed since): it is added again\n",
			   p->names[k], bd);
	else if (ret == KVCS_RECLAIMED_HALF)
		krun_print(r, "Box %s: %s was left half made (ktest was killed while it added it): it is added again\n",
			   p->names[k], bd);
	if (ret < 0) {
		krun_print(r, "ktest: box %s: %s\n", p->names[k], kvcs_error(v));
		goto out;
	}
	ret = 0;
	if (access(git, F_OK) == 0)
		goto out;
	krun_print(r, "Box %s: a work tree of BUILD_DIR at %s (its first build, if it builds, is a whole one)\n",
		   p->names[k], bd);
	if (kcmd_mkdirs_private(dir) || kvcs_worktree_add(v, name, bd, id)) {
		krun_print(r, "ktest: box %s: cannot add the work tree %s: %s\n",
			   p->names[k], bd, kvcs_error(v));
		ret = -1;
	}
out:
	free(git);
	free(base);
	free(name);
	free(dir);
	return ret;
}

static void on_term(int sig)
{
	(void)sig;
	kcmd_stop_running();
	_exit(1);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len) {
		ssize_t w = write(fd, b, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

static size_t read_all(int fd, void *buf, size_t len)
{
	char *b = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, b + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static char *per_box(const char *path, const char *name)
{
	return path ? xasprintf("%s-box-%s", path, name) : NULL;
}

static void __attribute__((noreturn))
child(struct kpool *p, size_t k, const char *bd, const char *od,
      const struct kstep_opts *o, const char *what, int fd, pid_t parent)
{
	struct krun *r = p->r;
	struct msg *m = xcalloc(1, sizeof(*m));
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t term;

	/* forked while ktest ran a command (a patchcheck's build): that one
	 * is not this process's to stop, nor its watch this one's */
	kcmd_after_fork();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	store(r, "BOX", p->names[k]);
	r->lab = NULL;		/* ktest's: its own is opened on demand */
	r->no_journal = true;
	r->prefix = p->prefix[k];
	if (k || p->box0_own_tree) {	/* else where one box builds */
		store(r, "BUILD_DIR", bd);
		store(r, "OUTPUT_DIR", od);
		r->vcs = NULL;	/* BUILD_DIR's, opened at the work tree */
		r->buildlog = per_box(r->buildlog, p->names[k]);
		r->testlog = per_box(r->testlog, p->names[k]);
		r->dmesg = per_box(r->dmesg, p->names[k]);
	}
	unsetenv("KTEST_CONSOLE");
	r->step_done = record_try;
	r->step_done_ctx = m;
	m->ret = *od && kcmd_mkdirs(od) ? -1 :
		 krun_step_retry(r, o, what, &m->res);
	if (m->ret && !m->res.why[0])
		snprintf(m->res.why, sizeof(m->res.why), "the step stopped");
	krun_lab_close(r);
	m->infra = r->infra;
	m->unhealthy = r->unhealthy;
	m->config_error = r->config_error;
	m->die = r->die;
	if (r->log)
		fflush(r->log);
	fflush(stdout);
	_exit(write_all(fd, m, sizeof(*m)) ? 1 : 0);
}

/* Child k's result; -1 when it has none (it printed why, or it died). */
static int collect(struct kpool *p, size_t k, pid_t pid, int fd,
		   struct msg *m)
{
	struct krun *r = p->r;
	size_t got = read_all(fd, m, sizeof(*m));
	int st = 0;

	close(fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(*m)) {
		memset(m, 0, sizeof(*m));	/* nothing of it is taken */
		krun_print(r, "ktest: box %s: its process ended without a result (%s %d)\n",
			   p->names[k], WIFSIGNALED(st) ? "signal" : "exit status",
			   WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return -1;
	}
	r->infra |= m->infra;
	r->unhealthy |= m->unhealthy;
	r->config_error |= m->config_error;
	r->die |= m->die;
	return m->ret;
}

/*
 * Box k's process for step o: 0 with *pid and *fd (its result's pipe), or
 * -1 (printed). Box 0 builds in BUILD_DIR and OUTPUT_DIR as configured.
 */
static int spawn(struct kpool *p, size_t k, const struct kstep_opts *o,
		 const char *what, pid_t *pid, int *fd)
{
	struct krun *r = p->r;
	char *bd, *od;
	bool wt = false;
	int pfd[2];

	if (k || p->box0_own_tree) {
		box_dirs(p, k, &bd, &od, &wt);
	} else {
		bd = xstrdup(krun_opt(r, KOPT_BUILD_DIR) ? krun_opt(r, KOPT_BUILD_DIR) : ".");
		od = xstrdup(krun_opt(r, KOPT_OUTPUT_DIR) ? krun_opt(r, KOPT_OUTPUT_DIR) : "");
	}
	if ((wt && prepare(p, k, bd, o->commit)) || pipe(pfd)) {
		free(bd);
		free(od);
		return -1;
	}
	fflush(NULL);	/* nothing of ours is written twice */
	*pid = fork();
	if (!*pid) {
		close(pfd[0]);
		child(p, k, bd, od, o, what, pfd[1], getppid());
	}
	close(pfd[1]);
	free(bd);
	free(od);
	if (*pid < 0) {
		krun_print(r, "ktest: box %s: fork: %s\n", p->names[k],
			   strerror(errno));
		close(pfd[0]);
		*pid = 0;
		return -1;
	}
	*fd = pfd[0];
	return 0;
}

int kpool_start(struct kpool *p, size_t k, const struct kstep_opts *o,
		const char *what)
{
	if (k >= p->n || p->pid[k])
		return -1;
	if (!k)
		krun_lab_close(p->r);	/* box 0's process opens its own */
	if (spawn(p, k, o, what, &p->pid[k], &p->fd[k]))
		return -1;
	p->o[k] = o;
	return 0;
}

bool kpool_busy(const struct kpool *p, size_t k)
{
	return k < p->n && p->pid[k] > 0;
}

bool kpool_any_busy(const struct kpool *p)
{
	for (size_t k = 0; k < p->n; k++)
		if (kpool_busy(p, k))
			return true;
	return false;
}

int kpool_pollfds(const struct kpool *p, struct pollfd *pf, int max)
{
	int n = 0;

	for (size_t k = 0; k < p->n && n < max; k++)
		if (kpool_busy(p, k))
			pf[n++] = (struct pollfd){ .fd = p->fd[k], .events = POLLIN };
	return n;
}

int kpool_wait(struct kpool *p, int timeout_ms, size_t *k,
	       struct kstep_result *res)
{
	struct pollfd pf[KPOOL_MAX];
	size_t box[KPOOL_MAX], n = 0, i;
	struct msg *m;
	int ret;

	for (i = 0; i < p->n; i++) {
		if (!kpool_busy(p, i))
			continue;
		pf[n].fd = p->fd[i];
		pf[n].events = POLLIN;
		box[n++] = i;
	}
	if (!n)
		return -1;
	for (;;) {
		int got = poll(pf, n, timeout_ms);

		if (got > 0)
			break;
		if (!got)
			return 1;
		if (errno != EINTR) {
			krun_print(p->r, "ktest: waiting for the boxes: %s\n",
				   strerror(errno));
			return -1;
		}
	}
	for (i = 0; !pf[i].revents; i++)
		;
	*k = box[i];
	m = xcalloc(1, sizeof(*m));
	ret = collect(p, *k, p->pid[*k], p->fd[*k], m);
	p->pid[*k] = 0;
	/* the lab's failed runs first, as one box reports them */
	for (size_t j = 0; j < m->ntries && j < MAX_TRIES; j++) {
		struct kstep_opts t = *p->o[*k];

		t.kind = m->tries[j].kind;
		if (krun_step_adopt(p->r, &t, &m->tries[j].res))
			ret = -1;
	}
	if (!ret) {
		*res = m->res;
		ret = krun_step_adopt(p->r, p->o[*k], res);
	}
	p->o[*k] = NULL;
	free(m);
	return ret ? -1 : 0;
}

void kpool_stop(struct kpool *p, size_t k)
{
	if (!kpool_busy(p, k))
		return;
	kill(p->pid[k], SIGTERM);
	close(p->fd[k]);
	while (waitpid(p->pid[k], NULL, 0) < 0 && errno == EINTR)
		;
	p->pid[k] = 0;
	p->o[k] = NULL;
}

void kpool_stop_all(struct kpool *p)
{
	for (size_t k = 0; k < p->n; k++)
		kpool_stop(p, k);
}

/* The busy boxes' names, "a, b and c" (at most len bytes): how many */
static size_t busy_names(const struct kpool *p, char *buf, size_t len)
{
	size_t k, n = 0, i = 0, at = 0;

	for (k = 0; k < p->n; k++)
		n += kpool_busy(p, k);
	buf[0] = '\0';
	for (k = 0; k < p->n && at < len; k++) {
		if (!kpool_busy(p, k))
			continue;
		i++;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i == 1 ? "" : i == n ? " and " : ", ",
				       p->names[k]);
	}
	return n;
}

void kpool_finish(struct kpool *p)
{
	const struct kstep_opts *o[KPOOL_MAX];
	char names[KPOOL_MAX * 40];

	if (!kpool_any_busy(p))
		return;
	if (krun_stopped_hard()) {
		kpool_stop_all(p);
		return;
	}
	memcpy(o, p->o, sizeof(o));
	if (busy_names(p, names, sizeof(names)) == 1)
		krun_print(p->r, "The run stops once the step in flight on box %s ends; its outcome is kept for the rerun (Ctrl-C twice stops it now)\n",
			   names);
	else
		krun_print(p->r, "The run stops once the steps in flight on boxes %s end; their outcomes are kept for the rerun (Ctrl-C twice stops them now)\n",
			   names);
	while (kpool_any_busy(p)) {
		struct kstep_result res;
		size_t k = p->n;
		int got = kpool_wait(p, 200, &k, &res);

		if (got > 0) {
			if (krun_stopped_hard())
				kpool_stop_all(p);
			continue;
		}
		if (k == p->n) {	/* not a box's end: poll failed */
			kpool_stop_all(p);
			break;
		}
		if (!got)
			krun_print(p->r, "%.12s (box %s): %s, kept for the rerun\n",
				   o[k]->commit ? o[k]->commit : "the tree",
				   p->names[k], kverdict_name(res.verdict));
	}
}

void kpool_free(struct kpool *p)
{
	if (!p)
		return;
	kpool_stop_all(p);
	for (size_t k = 0; k < p->n; k++) {
		free(p->names[k]);
		free(p->prefix[k]);
	}
	free(p);
}

void kpool_each_box(struct krun *r,
		    void (*fn)(struct krun *r, const char *box, void *ctx),
		    void *ctx)
{
	char why[256];
	struct kpool *p = kpool_new(r, false, why, sizeof(why));

	if (!p) {
		fn(r, NULL, ctx);
		return;
	}
	for (size_t k = 0; k < p->n; k++) {
		store(r, "BOX", p->names[k]);
		krun_lab_close(r);
		fn(r, p->names[k], ctx);
		krun_lab_close(r);
	}
	store(r, "BOX", p->names[0]);
	kpool_free(p);
}
