// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bisect at scale, ours beside the git program, on two generated
 * repositories:
 *
 *   linear   1,000,000 commits in one line
 *   merges     100,002 commits: 20,000 rounds of a mainline commit and a
 *            four-commit topic branch forked from it, merged back two
 *            rounds later (20,000 merges, topics overlapping)
 *
 * Both are written by "git fast-import" fed from here, given a commit-graph
 * ("git commit-graph write --reachable", as gc does; git and vcs.c both
 * read it) and cached under /var/tmp/ktest-bench (KTEST_BENCH_DIR) by
 * recipe version, so only the first run pays for them.
 *
 * For each repository, bad = the tip and good = the root, and an oracle
 * that knows the first bad commit (in the middle; every commit's subject
 * says where it sits, so the oracle needs no walk):
 *
 *   first candidate  ours: kvcs_open, kvcs_bisect_graph, kbisect_new,
 *                    kbisect_next; git: "git bisect start --no-checkout
 *                    BAD GOOD", wall time
 *   per step         the mean over the whole bisect: ours kbisect_mark +
 *                    kbisect_next; git one "git bisect good|bad" each
 *   peak RSS         every measurement runs in a child of its own (fork):
 *                    ours getrusage(RUSAGE_SELF), git
 *                    getrusage(RUSAGE_CHILDREN) after waiting, i.e. the
 *                    largest git process it ran
 *
 * Both must name the same first bad commit. Progress goes to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/bisect.h"
#include "ktest/vcs.h"

#define RECIPE "v1"
#define BASE_TIME 1600000000
#define LINEAR_N 1000000
#define ROUNDS 20000
#define MAX_STEPS 64

extern char **environ;

enum shape { LINEAR, MERGES };

struct repo {
	enum shape shape;
	const char *name;
	char *dir;
	char bad[KB_ID_LEN], good[KB_ID_LEN];
	long commits;
	long culprit;		/* linear: m <culprit>; merges: t <culprit> 1 */
};

/* One measurement, from a child to the parent. */
struct result {
	int ok;
	char err[256];
	double first_ms;	/* to the first candidate */
	double step_ms;		/* mean per step */
	int steps;
	long rss_kb;
	char found[KB_ID_LEN];
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((format(printf, 2, 3)))
static int failed(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->ok = 0;
	return -1;
}

/*
 * Runs argv (git from PATH), stdin from in_fd unless -1, stdout into out
 * (NULL: /dev/null), stderr to ours. Returns the exit status, or -1.
 */
static int run(char *const *argv, int in_fd, struct sbuf *out)
{
	posix_spawn_file_actions_t fa;
	int fd[2] = { -1, -1 }, rc, status;
	char buf[8192];
	ssize_t n;
	pid_t pid;

	if (out && pipe2(fd, O_CLOEXEC))
		return -1;
	if (posix_spawn_file_actions_init(&fa))
		goto fail;
	rc = 0;
	if (in_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	if (!rc && out)
		rc = posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	else if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
						      O_WRONLY, 0);
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		goto fail;
	if (out) {
		close(fd[1]);
		sbuf_reset(out);
		for (;;) {
			n = read(fd[0], buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			sbuf_addn(out, buf, (size_t)n);
		}
		close(fd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
fail:
	if (out) {
		close(fd[0]);
		close(fd[1]);
	}
	return -1;
}

/* git -C dir args..., NULL-terminated; its stdout (trimmed) into out. */
static int git(struct sbuf *out, const char *dir, ...)
{
	char *argv[16];
	size_t n = 0;
	va_list ap;
	int rc;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)dir;
	va_start(ap, dir);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	rc = run(argv, -1, out);
	if (out)
		while (out->len && (out->buf[out->len - 1] == '\n'))
			out->buf[--out->len] = '\0';
	return rc;
}

static int rm_rf(const char *path)
{
	char *argv[] = { "rm", "-rf", (char *)path, NULL };

	return run(argv, -1, NULL);
}

/* ---- the repositories ---- */

static void commit_header(FILE *f, const char *ref, long mark, long when)
{
	fprintf(f, "commit %s\nmark :%ld\ncommitter B <b@example.com> %ld +0000\n",
		ref, mark, when);
}

static void message(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void message(FILE *f, const char *fmt, ...)
{
	char msg[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(f, "data %d\n%s\n", n, msg);
}

/*
 * linear: "m <i>", i = 0..N-1, one file that never changes after the
 * root. fast-import continues a branch from its tip, so no "from".
 */
static void stream_linear(FILE *f)
{
	long i;

	for (i = 0; i < LINEAR_N; i++) {
		commit_header(f, "refs/heads/main", i + 1, BASE_TIME + i);
		message(f, "m %ld\n", i);
		if (!i)
			fputs("M 100644 inline f\ndata 6\nhello\n", f);
		fputc('\n', f);
		if (i && i % 100000 == 0)
			fprintf(stderr, "bench_bisect: linear: %ld commits\n",
				i);
	}
}

/*
 * merges: round r is "m <r>" on main (a merge of topic r-2's tip from
 * r = 2 on) and the topic "t <r> 0..3" forked from it. Marks: m r is
 * 5r+1, t r k is 5r+2+k. Two last mainline commits merge the last two
 * topics.
 */
static void stream_merges(FILE *f)
{
	long r, k, when = BASE_TIME;

	for (r = 0; r < ROUNDS + 2; r++) {
		commit_header(f, "refs/heads/main", 5 * r + 1, when++);
		message(f, "m %ld\n", r);
		if (!r)
			fputs("M 100644 inline f\ndata 6\nhello\n", f);
		if (r >= 2)
			fprintf(f, "merge :%ld\n", 5 * (r - 2) + 5);
		fputc('\n', f);
		for (k = 0; r < ROUNDS && k < 4; k++) {
			commit_header(f, "refs/heads/topic", 5 * r + 2 + k,
				      when++);
			message(f, "t %ld %ld\n", r, k);
			if (!k)
				fprintf(f, "from :%ld\n", 5 * r + 1);
			fputc('\n', f);
		}
	}
}

/* Writes the repository into dir with git fast-import. 0 or -1. */
static int generate(const struct repo *rp, const char *dir)
{
	char *argv[] = { "git", "-C", (char *)dir, "fast-import", "--quiet",
			 "--done", NULL };
	int fd[2], rc;
	pid_t pid;
	FILE *f;

	if (git(NULL, "/", "init", "-q", "-b", "main", dir, NULL))
		return -1;
	if (pipe2(fd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(fd[1]);
		_exit(run(argv, fd[0], NULL) ? 1 : 0);
	}
	close(fd[0]);
	f = fdopen(fd[1], "w");
	if (!f)
		return -1;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	if (rp->shape == LINEAR)
		stream_linear(f);
	else
		stream_merges(f);
	fputs("done\n", f);
	rc = fclose(f) ? -1 : 0;
	while (waitpid(pid, &fd[0], 0) < 0)
		if (errno != EINTR)
			return -1;
	if (rc || !WIFEXITED(fd[0]) || WEXITSTATUS(fd[0]))
		return -1;
	fprintf(stderr, "bench_bisect: %s: commit-graph\n", rp->name);
	if (git(NULL, dir, "commit-graph", "write", "--reachable", NULL) ||
	    git(NULL, dir, "read-tree", "-m", "-u", "HEAD", NULL))
		return -1;
	return 0;
}

/* The cached repository, made first if need be; its bad and good ids. */
static int prepare(struct repo *rp, const char *cache)
{
	char *ok = xasprintf("%s/.git/ktest-bench-recipe", rp->dir);
	char *xtmp = xasprintf("%s.tmp%d/.git/ktest-bench-recipe", rp->dir,
			       (int)getpid());
	char *tmp = xasprintf("%s.tmp%d", rp->dir, (int)getpid());
	struct sbuf out;
	int ret = -1;
	FILE *f;

	sbuf_init(&out);
	if (access(ok, F_OK)) {
		double t0 = now_ms();

		fprintf(stderr, "bench_bisect: generating %s in %s (once)\n",
			rp->name, rp->dir);
		if ((mkdir(cache, 0755) && errno != EEXIST) || rm_rf(rp->dir))
			goto out;
		/* written aside, then renamed: never half made in place */
		if (generate(rp, tmp))
			goto out;
		f = fopen(xtmp, "w");
		if (!f || fprintf(f, "%s\n", RECIPE) < 0 || fclose(f))
			goto out;
		if (rename(tmp, rp->dir)) {
			/* another run was faster: take its copy */
			if (errno != EEXIST && errno != ENOTEMPTY)
				goto out;
			if (rm_rf(tmp))
				goto out;
		}
		fprintf(stderr, "bench_bisect: %s made in %.0f s\n", rp->name,
			(now_ms() - t0) / 1e3);
	}
	if (git(&out, rp->dir, "rev-parse", "main", NULL) || out.len != 40)
		goto out;
	memcpy(rp->bad, out.buf, KB_ID_LEN);
	if (git(&out, rp->dir, "rev-list", "--max-parents=0", "main", NULL) ||
	    out.len != 40)
		goto out;
	memcpy(rp->good, out.buf, KB_ID_LEN);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "bench_bisect: cannot make %s in %s\n",
			rp->name, rp->dir);
	sbuf_free(&out);
	free(ok);
	free(xtmp);
	free(tmp);
	return ret;
}

/*
 * The oracle, from the subject: linear "m i" is bad from the culprit on;
 * merges: topic c's commits from "t c 1" on, and from round c+2 (which
 * merges topic c) on every mainline commit and every topic forked later.
 * 1 bad, 0 good, -1 unknown.
 */
static int is_bad(const struct repo *rp, struct kvcs *v, const char *id)
{
	struct kvcs_commit c;
	long r, k;
	int ret = -1;

	if (kvcs_resolve(v, id, &c))
		return -1;
	if (sscanf(c.subject, "m %ld", &r) == 1)
		ret = rp->shape == LINEAR ? r >= rp->culprit :
		      r >= rp->culprit + 2;
	else if (rp->shape == MERGES &&
		 sscanf(c.subject, "t %ld %ld", &r, &k) == 2)
		ret = (r == rp->culprit && k >= 1) || r >= rp->culprit + 2;
	kvcs_commit_clear(&c);
	return ret;
}

/* The subject the first bad commit must have. */
static char *culprit_subject(const struct repo *rp)
{
	return rp->shape == LINEAR ? xasprintf("m %ld", rp->culprit) :
	       xasprintf("t %ld 1", rp->culprit);
}

static int check_found(const struct repo *rp, struct kvcs *v,
		       struct result *r)
{
	struct kvcs_commit c;
	char *want = culprit_subject(rp);
	int ret = 0;

	if (kvcs_resolve(v, r->found, &c))
		ret = failed(r, "%s", kvcs_error(v));
	else if (strcmp(c.subject, want))
		ret = failed(r, "found '%s', not '%s'", c.subject, want);
	if (!ret)
		kvcs_commit_clear(&c);
	free(want);
	return ret;
}

/* ---- the measurements, each in a child ---- */

static int measure_ours(const struct repo *rp, struct result *r)
{
	const char *goods[1] = { rp->good };
	struct kb_graph g;
	struct kb_step step;
	struct kbisect *b;
	struct kvcs *v;
	char why[256];
	double t0, spent = 0;
	size_t n;
	int bad;

	t0 = now_ms();
	v = kvcs_open(rp->dir, why, sizeof(why));
	if (!v)
		return failed(r, "%s", why);
	if (kvcs_bisect_graph(v, rp->bad, goods, 1, NULL, 0, false, &g, NULL,
			      NULL))
		return failed(r, "%s", kvcs_error(v));
	b = kbisect_new(&g, goods, 1, NULL, why, sizeof(why));
	if (!b)
		return failed(r, "%s", why);
	kbisect_next(b, &step, 1, &n);
	r->first_ms = now_ms() - t0;
	while (n == 1 && step.kind == KB_TEST && r->steps < MAX_STEPS) {
		bad = is_bad(rp, v, step.id);
		if (bad < 0)
			return failed(r, "oracle: %s", kvcs_error(v));
		t0 = now_ms();
		if (kbisect_mark(b, step.id, bad ? KB_BAD : KB_GOOD, why,
				 sizeof(why)))
			return failed(r, "%s", why);
		kbisect_next(b, &step, 1, &n);
		spent += now_ms() - t0;
		r->steps++;
	}
	if (n != 1 || step.kind != KB_FOUND)
		return failed(r, "ours ended without a first bad commit");
	snprintf(r->found, KB_ID_LEN, "%s", step.id);
	r->step_ms = r->steps ? spent / r->steps : 0;
	if (check_found(rp, v, r))
		return -1;
	kbisect_free(b);
	kvcs_graph_free(&g);
	kvcs_close(v);
	return 0;
}

static int read_head(const struct repo *rp, char *id)
{
	char *path = xasprintf("%s/.git/BISECT_HEAD", rp->dir);
	FILE *f = fopen(path, "r");
	int ret = f && fscanf(f, "%40s", id) == 1 && strlen(id) == 40 ? 0 : -1;

	if (f)
		fclose(f);
	free(path);
	return ret;
}

/* "<id> is the first bad commit" */
static bool found_in(const struct sbuf *out, char *id)
{
	const char *p = strstr(sbuf_str(out), " is the first bad commit");

	if (!p || p - out->buf < 40)
		return false;
	snprintf(id, KB_ID_LEN, "%.40s", p - 40);
	return true;
}

static int measure_git(const struct repo *rp, struct result *r)
{
	struct sbuf out;
	struct kvcs *v;
	char why[256], id[KB_ID_LEN];
	double t0, spent = 0;
	int bad, ret = -1;

	sbuf_init(&out);
	v = kvcs_open(rp->dir, why, sizeof(why));
	if (!v)
		return failed(r, "%s", why);
	t0 = now_ms();
	if (git(&out, rp->dir, "bisect", "start", "--no-checkout", rp->bad,
		rp->good, NULL)) {
		failed(r, "git bisect start failed");
		goto out;
	}
	r->first_ms = now_ms() - t0;
	while (!found_in(&out, r->found)) {
		if (r->steps >= MAX_STEPS || read_head(rp, id)) {
			failed(r, "git bisect does not end");
			goto out;
		}
		bad = is_bad(rp, v, id);
		if (bad < 0) {
			failed(r, "oracle: %s", kvcs_error(v));
			goto out;
		}
		t0 = now_ms();
		if (git(&out, rp->dir, "bisect", bad ? "bad" : "good", NULL)) {
			failed(r, "git bisect %s failed", bad ? "bad" : "good");
			goto out;
		}
		spent += now_ms() - t0;
		r->steps++;
	}
	r->step_ms = r->steps ? spent / r->steps : 0;
	ret = check_found(rp, v, r);
out:
	kvcs_close(v);
	sbuf_free(&out);
	return ret;
}

/* Runs one measurement in a fresh child; its result comes back here. */
static void measure(const struct repo *rp, bool ours, struct result *r)
{
	struct rusage ru;
	int fd[2], status;
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(fd)) {
		failed(r, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		failed(r, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (!pid) {
		close(fd[0]);
		r->ok = 1;
		if (!(ours ? measure_ours(rp, r) : measure_git(rp, r))) {
			if (getrusage(ours ? RUSAGE_SELF : RUSAGE_CHILDREN,
				      &ru))
				failed(r, "getrusage: %s", strerror(errno));
			else
				r->rss_kb = ru.ru_maxrss;
		}
		_exit(write(fd[1], r, sizeof(*r)) == sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	do
		n = read(fd[0], r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(*r))
		failed(r, "the measuring child died");
}

/* ---- the table ---- */

static const char *ms(char *buf, size_t len, double v)
{
	if (v >= 1000)
		snprintf(buf, len, "%.2f s", v / 1000);
	else if (v >= 1)
		snprintf(buf, len, "%.1f ms", v);
	else
		snprintf(buf, len, "%.1f us", v * 1000);
	return buf;
}

static void row(const char *repo, const char *who, const struct result *r)
{
	char a[32], b[32], c[32];

	if (!r->ok) {
		printf("%-28s %-5s failed: %s\n", repo, who, r->err);
		return;
	}
	snprintf(c, sizeof(c), "%.1f MiB", r->rss_kb / 1024.0);
	printf("%-28s %-5s %14s %12s %6d %12s\n", repo, who,
	       ms(a, sizeof(a), r->first_ms), ms(b, sizeof(b), r->step_ms),
	       r->steps, c);
}

int main(void)
{
	const char *cache = getenv("KTEST_BENCH_DIR");
	struct repo repos[] = {
		{ .shape = LINEAR, .name = "linear",
		  .commits = LINEAR_N, .culprit = LINEAR_N / 2 + 1234 },
		{ .shape = MERGES, .name = "merges",
		  .commits = 5L * ROUNDS + 2, .culprit = ROUNDS / 2 + 7 },
	};
	struct result res[2][2];
	struct sbuf ver;
	int ret = 0;
	size_t i;

	if (!cache || !*cache)
		cache = "/var/tmp/ktest-bench";
	signal(SIGPIPE, SIG_IGN);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("LC_ALL", "C", 1);
	sbuf_init(&ver);
	if (git(&ver, "/", "version", NULL)) {
		fprintf(stderr, "bench_bisect: no git program\n");
		return 1;
	}
	for (i = 0; i < 2; i++)
		repos[i].dir = xasprintf("%s/bisect-%s-%s", cache, RECIPE,
					 repos[i].name);
	for (i = 0; i < 2; i++)
		if (prepare(&repos[i], cache))
			return 1;

	for (i = 0; i < 2; i++) {
		fprintf(stderr, "bench_bisect: %s: ours\n", repos[i].name);
		measure(&repos[i], true, &res[i][0]);
		fprintf(stderr, "bench_bisect: %s: git\n", repos[i].name);
		measure(&repos[i], false, &res[i][1]);
		/* leave the cached repository as it was (not measured) */
		if (git(NULL, repos[i].dir, "bisect", "reset", NULL))
			fprintf(stderr, "bench_bisect: git bisect reset failed in %s\n",
				repos[i].dir);
	}

	printf("\nbisect, ktest vs %s: bad = tip, good = root, first bad commit mid-way\n",
	       sbuf_str(&ver));
	printf("%-28s %-5s %14s %12s %6s %12s\n", "repository", "",
	       "1st candidate", "per step", "steps", "peak RSS");
	for (i = 0; i < 2; i++) {
		const struct result *ours = &res[i][0], *theirs = &res[i][1];
		char label[64];

		snprintf(label, sizeof(label), "%s, %ld commits",
			 repos[i].name, repos[i].commits);
		row(label, "ours", ours);
		row("", "git", theirs);
		if (!ours->ok || !theirs->ok) {
			ret = 1;
		} else if (strcmp(ours->found, theirs->found)) {
			printf("%-28s ours found %.12s, git %.12s\n", "",
			       ours->found, theirs->found);
			ret = 1;
		}
		free(repos[i].dir);
	}
	printf("(git: one \"git bisect good|bad\" process per step, as a user runs it, start-up included)\n");
	sbuf_free(&ver);
	return ret;
}
