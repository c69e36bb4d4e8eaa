// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest.pl's build(), step for step, with "$make" = "MAKE_CMD O=OUTPUT_DIR"
 * run in BUILD_DIR:
 *
 *   PRE_BUILD
 *   useconfig:FILE	cp FILE .config, then as oldconfig
 *   oldconfig		touch .config; unless BUILD_NOCLEAN: .config aside,
 *			make mrproper, .config back; then olddefconfig
 *   any other target	unless BUILD_NOCLEAN: rm .config, make mrproper;
 *			then make TARGET
 *   OUTPUT_DIR/localversion = LOCALVERSION
 *   MIN_CONFIG (after the ADD_CONFIG files) forced onto .config
 *   make olddefconfig || make oldnoconfig || yes '' | make oldconfig
 *   make BUILD_OPTIONS
 *   kernelrelease, POST_BUILD
 *
 * Where it differs, and why:
 * - The forced settings go in a fixed order (ADD_CONFIG files in order, then
 *   MIN_CONFIG; a name keeps its first place and takes its last value).
 *   ktest.pl wrote them in Perl hash order, different on every run.
 * - Every command's output goes to the build log and to on_line, not only
 *   the final make's, so the log explains a failed config step too. Each
 *   command is framed by "<command> ..." and "[N seconds] SUCCESS" lines,
 *   as in ktest.pl's LOG_FILE. Warnings are counted over the commands'
 *   output (not our frames), so the count is what a reader of the log finds.
 * - Nothing dies: each way of ending is a status. A make that ran and failed
 *   is the tree's fault (KBUILD_FAILED, or KBUILD_CONFIG_FAILED for the
 *   config steps). A make that could not run (exit 126/127), was killed by
 *   a signal, ran out of disk or memory, or ran past RUN_TIMEOUT is the
 *   host's (KBUILD_ERROR): a bisect must not blame a commit for those.
 *   A build that hangs could be either; it is never *reliably* the commit's,
 *   and a wrong "bad" silently sends a bisect down the wrong half, while an
 *   INFRA verdict is retried and, if it keeps happening, stops the run with
 *   the reason. So a timeout is INFRA.
 * - POST_BUILD with POST_BUILD_DIE decides the status even after a failed
 *   build (ktest.pl died in it before looking at the build).
 * - kernelrelease never runs allnoconfig (ktest.pl's get_version did, and
 *   clobbered the .config when the tree was not built yet).
 * - MAKEFLAGS from a make that runs ktest is not passed on (make_env()).
 */
#include "ktest/build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/kconfig.h"
#include "conf/strmap.h"
#include "conf/text.h"

/* One kbuild_run() call. */
struct kbuild {
	const struct kbuild_opts *o;
	struct kbuild_result *r;
	FILE *log;
	char *outdir;		/* OUTPUT_DIR, as make and we both use it */
	char *config;		/* OUTPUT_DIR/.config */
	char *make;		/* "MAKE_CMD O=OUTPUT_DIR" */
	bool frame;		/* the line is ours, not the command's */
	char *host_trouble;	/* the first line that blames the host */
	char *first_error;	/* the first error line of the current command */
	char *last_line;	/* its last line ("sh: 1: make: not found") */
};

/*
 * Output that means the host gave out, not the tree: the disk or memory ran
 * out (gcc: "Killed signal terminated program cc1" is the OOM killer), fork
 * failed, the file system broke, a distributed compile found no helper.
 */
static const char *const host_trouble[] = {
	"No space left on device",
	"Disk quota exceeded",
	"Cannot allocate memory",
	"virtual memory exhausted",
	"out of memory allocating",
	"Killed signal terminated program",
	"Resource temporarily unavailable",
	"Read-only file system",
	"Input/output error",
	/* distcc (DISTCC_FALLBACK=0) could not reach a helper: the lab's */
	"failed to distribute and fallbacks are disabled",
};

/*
 * The kernel's make is a top-level make. Under a make (ktest started from a
 * Makefile, "make check"), the inherited MAKEFLAGS would hand it that make's
 * -j, -w and command-line variables, and a jobserver whose descriptors
 * kcmd does not pass on ("jobserver unavailable": a warning line in every
 * log). A bare NAME unsets it (kcmd_opts.env).
 */
static const char *const sub_make_env[] = {
	"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", NULL
};

static const char *const *make_env(void)
{
	return getenv("MAKELEVEL") ? sub_make_env : NULL;
}

/* ktest.pl: /.*:.*(warning|error|Error):.* / */
bool kbuild_is_warning(const char *line)
{
	const char *colon = strchr(line, ':');

	if (!colon)
		return false;
	colon++;
	return strstr(colon, "warning:") || strstr(colon, "error:") ||
	       strstr(colon, "Error:");
}

/* ktest.pl's "not defined": NULL, empty or only blanks. */
static bool unset(const char *s)
{
	return !s || ktext_blank(s);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_host_trouble(const char *line)
{
	for (size_t i = 0; i < sizeof(host_trouble) / sizeof(*host_trouble); i++)
		if (strstr(line, host_trouble[i]))
			return true;
	return false;
}

/* Every line: the log, the counters, the caller. */
static void on_line(void *ctx, const char *line, size_t len)
{
	struct kbuild *b = ctx;

	if (b->log) {
		fwrite(line, 1, len, b->log);
		fputc('\n', b->log);
	}
	if (!b->frame) {
		if (kbuild_is_warning(line)) {
			b->r->warnings++;
			if (!b->first_error && !strstr(line, "warning:"))
				b->first_error = xstrdup(line);
		}
		if (!b->host_trouble && is_host_trouble(line))
			b->host_trouble = xstrdup(line);
		free(b->last_line);
		b->last_line = xstrdup(line);
	}
	if (b->o->on_line)
		b->o->on_line(b->o->ctx, line, len);
}

static void say(struct kbuild *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line of our own in the log and to the caller. */
static void say(struct kbuild *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	b->frame = true;
	{
		char *r = kcmd_redact(s);	/* the hooks it names */

		on_line(b, r, strlen(r));
		free(r);
	}
	b->frame = false;
	free(s);
}

static int fail(struct kbuild *b, enum kbuild_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records the first failure; returns -1 for "return fail(...)". */
static int fail(struct kbuild *b, enum kbuild_status st, const char *fmt, ...)
{
	va_list ap;

	if (b->r->status != KBUILD_OK)
		return -1;
	b->r->status = st;
	va_start(ap, fmt);
	vsnprintf(b->r->why, sizeof(b->r->why), fmt, ap);
	va_end(ap);
	say(b, "ktest: %s", b->r->why);
	return -1;
}

/*
 * Runs cmd in BUILD_DIR, framed in the log. Returns 0 for success, 1 for a
 * failure (see res), -1 when it could not be started (errno).
 */
static int run(struct kbuild *b, const char *cmd, struct kcmd_result *res)
{
	struct kcmd_opts ko = {
		.cwd = b->o->build_dir,
		.env = make_env(),
		.timeout_ms = b->o->timeout_ms,
		.on_line = on_line,
		.ctx = b,
		.stdin_null = true,
	};
	char how[64];
	long secs;

	free(b->first_error);
	b->first_error = NULL;
	free(b->host_trouble);
	b->host_trouble = NULL;
	free(b->last_line);
	b->last_line = NULL;
	say(b, "%s ...", cmd);
	if (kcmd_run(cmd, &ko, res) < 0) {
		int err = errno;

		say(b, "could not run %s: %s", cmd, strerror(err));
		errno = err;
		return -1;
	}
	secs = res->elapsed_ms / 1000;
	if (res->status == 0 && !res->timed_out) {
		say(b, "[%ld second%s] SUCCESS", secs, secs == 1 ? "" : "s");
		return 0;
	}
	say(b, "[%ld second%s] FAILED! (%s)", secs, secs == 1 ? "" : "s",
	    kcmd_describe(res, how, sizeof(how)));
	return 1;
}

/* Was a failure of the last command the host's doing rather than the tree's? */
static bool host_fault(const struct kbuild *b, const struct kcmd_result *res)
{
	return res->timed_out || res->signal || res->status == 126 ||
	       res->status == 127 || res->status < 0 || b->host_trouble;
}

/*
 * Runs a make step; on failure records who is to blame (tree_fault when it
 * is the tree's) and returns -1.
 */
static int make_step(struct kbuild *b, const char *what, const char *cmd,
		     enum kbuild_status tree_fault)
{
	struct kcmd_result res;
	char how[64];
	int ret = run(b, cmd, &res);

	if (ret == 0)
		return 0;
	if (ret < 0)
		return fail(b, KBUILD_ERROR, "cannot run %s: %s", cmd,
			    strerror(errno));
	kcmd_describe(&res, how, sizeof(how));
	if (res.timed_out)
		return fail(b, KBUILD_ERROR, "%s %s (RUN_TIMEOUT)", what, how);
	if (host_fault(b, &res)) {
		const char *line = b->host_trouble ? b->host_trouble : b->last_line;

		return fail(b, KBUILD_ERROR, "%s failed on the host (%s)%s%s",
			    what, how, line ? ": " : "", line ? line : "");
	}
	return fail(b, tree_fault, "%s failed (%s)%s%s", what, how,
		    b->first_error ? ": " : "",
		    b->first_error ? b->first_error : "");
}

/* A hook: its failure counts only with its _DIE option. */
static int hook(struct kbuild *b, const char *name, const char *cmd, bool die)
{
	struct kcmd_result res;
	char how[64];
	int ret;

	if (unset(cmd))
		return 0;
	ret = run(b, cmd, &res);
	if (ret == 0 || !die)
		return 0;
	if (ret < 0)
		return fail(b, KBUILD_HOOK_FAILED, "cannot run %s: %s", name,
			    strerror(errno));
	return fail(b, KBUILD_HOOK_FAILED, "%s failed (%s)", name,
		    kcmd_describe(&res, how, sizeof(how)));
}

static char *make_cmd(const struct kbuild *b, const char *args)
{
	return xasprintf("%s %s", b->make, args);
}

/* Paths in the config are relative to BUILD_DIR, where ktest.pl chdir'ed. */
static char *in_build_dir(const struct kbuild_opts *o, const char *path)
{
	if (path[0] == '/' || unset(o->build_dir))
		return xstrdup(path);
	return xasprintf("%s/%s", o->build_dir, path);
}

static int write_file(const char *path, const char *text, size_t len, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	int err;

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		text += n;
		len -= (size_t)n;
	}
	return close(fd);
}

static int copy_file(const char *from, const char *to)
{
	struct sbuf s;
	char chunk[65536];
	ssize_t n;
	int fd, ret, err = 0;

	fd = open(from, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	sbuf_init(&s);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		sbuf_addn(&s, chunk, (size_t)n);
	}
	close(fd);
	ret = err ? -1 : write_file(to, s.buf ? s.buf : "", s.len, O_TRUNC);
	if (err)
		errno = err;
	sbuf_free(&s);
	return ret;
}

/* touch(1): create if missing, bring the time up to now. */
static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	int ret;

	if (fd < 0)
		return -1;
	ret = futimens(fd, NULL);
	close(fd);
	return ret;
}

/* Log file, OUTPUT_DIR, the make command. */
static int setup(struct kbuild *b)
{
	const struct kbuild_opts *o = b->o;
	struct stat so, sb;
	char *q;

	if (o->log) {
		b->log = kcmd_fopen_private(o->log, "w");
		if (!b->log)
			return fail(b, KBUILD_ERROR, "cannot create the build log %s: %s",
				    o->log, strerror(errno));
		setvbuf(b->log, NULL, _IOLBF, 0);
	}
	if (unset(o->output_dir))
		return fail(b, KBUILD_ERROR, "OUTPUT_DIR is not set");
	b->outdir = in_build_dir(o, o->output_dir);
	b->config = xasprintf("%s/.config", b->outdir);
	if (kcmd_mkdirs(b->outdir) < 0)
		return fail(b, KBUILD_ERROR, "cannot create OUTPUT_DIR %s: %s",
			    b->outdir, strerror(errno));
	if (!unset(o->build_dir) && !stat(b->outdir, &so) &&
	    !stat(o->build_dir, &sb) && so.st_dev == sb.st_dev &&
	    so.st_ino == sb.st_ino)
		return fail(b, KBUILD_ERROR, "OUTPUT_DIR %s is BUILD_DIR: it must differ",
			    b->outdir);
	q = kcmd_quote(b->outdir);
	b->make = xasprintf("%s O=%s",
			    unset(o->make_cmd) ? "make" : o->make_cmd, q);
	free(q);
	return 0;
}

/* useconfig:FILE: FILE becomes the .config, then it goes as oldconfig. */
/* (to: where the .config is made, b->config or the memo's next.) */
static int use_config(struct kbuild *b, const char *file, const char *to)
{
	char *path;
	int ret = 0;

	if (unset(file))
		return fail(b, KBUILD_ERROR, "BUILD_TYPE useconfig: names no file");
	path = in_build_dir(b->o, file);
	say(b, "cp %s %s", path, to);
	if (copy_file(path, to) < 0)
		ret = fail(b, KBUILD_ERROR, "could not copy %s to %s: %s", path,
			   to, strerror(errno));
	free(path);
	return ret;
}

static int mrproper(struct kbuild *b)
{
	char *cmd = make_cmd(b, "mrproper");
	int ret = make_step(b, "make mrproper", cmd, KBUILD_CONFIG_FAILED);

	free(cmd);
	return ret;
}

/* oldconfig keeps the .config across make mrproper (it would delete it). */
static int clean_keeping_config(struct kbuild *b)
{
	char *aside = xasprintf("%s/config_temp", b->outdir);
	int ret = -1;

	if (touch(b->config) < 0) {
		fail(b, KBUILD_ERROR, "cannot touch %s: %s", b->config,
		     strerror(errno));
		goto out;
	}
	if (b->o->noclean) {
		ret = 0;
		goto out;
	}
	if (rename(b->config, aside) < 0) {
		fail(b, KBUILD_ERROR, "cannot move %s to %s: %s", b->config,
		     aside, strerror(errno));
		goto out;
	}
	ret = mrproper(b);
	/* back even when mrproper failed: the user's config is not ours to lose */
	if (rename(aside, b->config) < 0)
		ret = fail(b, KBUILD_ERROR, "cannot move %s back to %s: %s",
			   aside, b->config, strerror(errno));
out:
	free(aside);
	return ret;
}

static int clean(struct kbuild *b)
{
	if (b->o->noclean)
		return 0;
	if (unlink(b->config) < 0 && errno != ENOENT)
		return fail(b, KBUILD_ERROR, "cannot remove %s: %s", b->config,
			    strerror(errno));
	return mrproper(b);
}

static int write_localversion(struct kbuild *b)
{
	char *path = xasprintf("%s/localversion", b->outdir);
	char *text = xasprintf("%s\n", b->o->localversion ? b->o->localversion : "");
	int ret = 0;

	if (write_file(path, text, strlen(text), O_TRUNC) < 0)
		ret = fail(b, KBUILD_ERROR, "cannot write %s: %s", path,
			   strerror(errno));
	free(path);
	free(text);
	return ret;
}

static int load_fragment(struct kbuild *b, const char *what, const char *file,
			 struct kdotconfig *force)
{
	char *path = in_build_dir(b->o, file);
	struct kdotconfig frag;
	int ret = 0;

	kdotconfig_init(&frag);
	say(b, "Loading force configs from %s", path);
	if (kdotconfig_read(&frag, path) < 0) {
		ret = fail(b, KBUILD_ERROR, "cannot read %s %s: %s", what, path,
			   strerror(errno));
		goto out;
	}
	if (frag.bad)
		say(b, "ktest: %s:%u: not a config setting (%u such line%s ignored)",
		    path, frag.first_bad, frag.bad, frag.bad == 1 ? "" : "s");
	kdotconfig_merge(force, &frag);
out:
	kdotconfig_free(&frag);
	free(path);
	return ret;
}

/* ADD_CONFIG's files in order, then MIN_CONFIG: the last word wins. */
static int load_force(struct kbuild *b, struct kdotconfig *force)
{
	const struct kbuild_opts *o = b->o;
	char *files, *save = NULL;
	int ret = 0;

	if (!unset(o->add_config)) {
		files = xstrdup(o->add_config);
		for (char *f = strtok_r(files, " \t\n", &save); f && !ret;
		     f = strtok_r(NULL, " \t\n", &save))
			ret = load_fragment(b, "ADD_CONFIG", f, force);
		free(files);
	}
	if (!ret && !unset(o->min_config))
		ret = load_fragment(b, "MIN_CONFIG", o->min_config, force);
	return ret;
}

/* ktest.pl's apply_min_config: the forced settings replace config's. */
static int apply_force(struct kbuild *b, const struct kdotconfig *force,
		       const char *config)
{
	struct kdotconfig c;
	int ret = 0;

	kdotconfig_init(&c);
	say(b, "Applying minimum configurations into %s (%zu settings)",
	    config, kdotconfig_count(force));
	if (kdotconfig_read(&c, config) < 0 && errno != ENOENT) {
		ret = fail(b, KBUILD_ERROR, "cannot read %s: %s", config,
			   strerror(errno));
		goto out;
	}
	kdotconfig_force(&c, force);
	if (kdotconfig_write(&c, config) < 0)
		ret = fail(b, KBUILD_ERROR, "cannot write %s: %s", config,
			   strerror(errno));
out:
	kdotconfig_free(&c);
	return ret;
}

/*
 * olddefconfig, or on kernels that lack it oldnoconfig, or the answers
 * defaulted with yes ''. A fallback is tried only when the previous one
 * failed in the tree; a host failure would only repeat.
 */
static int make_oldconfig(struct kbuild *b)
{
	static const char *const steps[][2] = {
		{ "", "olddefconfig" },
		{ "", "oldnoconfig" },
		{ "yes '' | ", "oldconfig" },
	};
	int ret = -1;

	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		char *cmd = xasprintf("%s%s %s", steps[i][0], b->make,
				      steps[i][1]);
		char *what = xasprintf("make %s", steps[i][1]);

		ret = make_step(b, what, cmd, KBUILD_CONFIG_FAILED);
		free(cmd);
		free(what);
		if (!ret || b->r->status == KBUILD_ERROR)
			break;
		if (i + 1 < sizeof(steps) / sizeof(*steps)) {
			/* not the last: the next one gets its chance */
			say(b, "%s failed, trying the next way", steps[i][1]);
			b->r->status = KBUILD_OK;
			b->r->why[0] = '\0';
		}
	}
	return ret;
}

/*
 * What make olddefconfig made of what, the last time in OUTPUT_DIR: the
 * .config before it (.ktest-olddefconfig.in) and after it (.out), and the
 * tree and make command it ran with (.how). With BUILD_NOCLEAN, a build
 * whose .config would be that input again, with the same tree and make,
 * in an OUTPUT_DIR whose .config is still that output, does not run it: the
 * .config is left as it is, mtime and all. If a Kconfig file changed
 * since, kbuild's own syncconfig (part of every make, which notices) does
 * what olddefconfig would: new symbols get their defaults (make runs with
 * stdin at /dev/null). ktest.pl ran olddefconfig before every build, and
 * the make after it synced again: ~4 s of each bisect step on tinyconfig.
 */
struct memo {
	char *in, *out, *next;
	char *how, *how_text;	/* .ktest-olddefconfig.how: the tree and make */
};

static void memo_init(struct kbuild *b, struct memo *m)
{
	m->in = xasprintf("%s/.ktest-olddefconfig.in", b->outdir);
	m->out = xasprintf("%s/.ktest-olddefconfig.out", b->outdir);
	m->next = xasprintf("%s/.ktest-olddefconfig.next", b->outdir);
	m->how = xasprintf("%s/.ktest-olddefconfig.how", b->outdir);
	m->how_text = xasprintf("BUILD_DIR=%s\nMAKE=%s\n",
				b->o->build_dir ? b->o->build_dir : "", b->make);
}

static void memo_free(struct memo *m)
{
	free(m->in);
	free(m->out);
	free(m->next);
	free(m->how);
	free(m->how_text);
}

/* Forgotten (before olddefconfig runs, and when it fails). */
static void memo_forget(const struct memo *m)
{
	unlink(m->in);
	unlink(m->out);
	unlink(m->next);
	unlink(m->how);
}

/* The same tree and make command as when the memo was made? */
static bool memo_same_how(const struct memo *m)
{
	size_t len = strlen(m->how_text);
	char *buf = xcalloc(1, len + 2);
	FILE *f = fopen(m->how, "re");
	bool same = false;

	if (f) {
		same = fread(buf, 1, len + 1, f) == len &&
		       !memcmp(buf, m->how_text, len);
		fclose(f);
	}
	free(buf);
	return same;
}

/*
 * make olddefconfig (or its fallbacks) on the .config, remembered when it
 * succeeds. The memo is only a shortcut: when it cannot be written, it is
 * forgotten and the next build runs olddefconfig again.
 */
static int oldconfig_remembered(struct kbuild *b, const struct memo *m)
{
	int ret;

	memo_forget(m);
	if (copy_file(b->config, m->next) < 0) {
		unlink(m->next);
		return make_oldconfig(b);
	}
	ret = make_oldconfig(b);
	if (ret || rename(m->next, m->in) < 0 ||
	    copy_file(b->config, m->out) < 0 ||
	    write_file(m->how, m->how_text, strlen(m->how_text), O_TRUNC) < 0)
		memo_forget(m);
	return ret;
}

/*
 * BUILD_NOCLEAN with oldconfig (or useconfig:FILE): the .config to build
 * (FILE's or the one there, the forced settings applied) is made aside
 * first; it goes in, and olddefconfig runs, unless the memo says that
 * would give the .config already there.
 */
static int configure_noclean(struct kbuild *b, const char *file,
			     const struct kdotconfig *force)
{
	struct memo m;
	int ret = 0;

	memo_init(b, &m);
	if (file) {
		ret = use_config(b, file, m.next);
	} else if (copy_file(b->config, m.next) < 0) {
		/* ktest.pl's touch: no .config is an empty one */
		if (errno != ENOENT || write_file(m.next, "", 0, O_TRUNC) < 0)
			ret = fail(b, KBUILD_ERROR, "cannot copy %s to %s: %s",
				   b->config, m.next, strerror(errno));
	}
	if (!ret && kdotconfig_count(force))
		ret = apply_force(b, force, m.next);
	if (ret)
		goto out;
	if (kcmd_same_file(m.next, m.in) && kcmd_same_file(b->config, m.out) &&
	    memo_same_how(&m)) {
		say(b, "ktest: %s is what make olddefconfig made of this .config last time: not run again (make syncs it if a Kconfig file changed)",
		    b->config);
		unlink(m.next);
		goto out;
	}
	say(b, "mv %s %s", m.next, b->config);
	if (rename(m.next, b->config) < 0) {
		ret = fail(b, KBUILD_ERROR, "cannot move %s to %s: %s", m.next,
			   b->config, strerror(errno));
		goto out;
	}
	ret = oldconfig_remembered(b, &m);
out:
	if (ret)
		memo_forget(&m);
	memo_free(&m);
	return ret;
}

/* BUILD_NOCLEAN with oldconfig: localversion, the forced settings, the memo. */
static int configure_noclean_type(struct kbuild *b, const char *file)
{
	struct kdotconfig force;
	int ret;

	if (write_localversion(b) < 0)
		return -1;
	kdotconfig_init(&force);
	ret = load_force(b, &force);
	if (!ret)
		ret = configure_noclean(b, file, &force);
	kdotconfig_free(&force);
	return ret;
}

static int configure(struct kbuild *b)
{
	const char *type = b->o->build_type;
	struct kdotconfig force;
	struct memo m;
	int ret;

	if (unset(type))
		type = "oldconfig";
	if (b->o->noclean && !strcmp(type, "oldconfig"))
		return configure_noclean_type(b, NULL);
	if (b->o->noclean && !strncmp(type, "useconfig:", 10))
		return configure_noclean_type(b, type + 10);
	if (!strncmp(type, "useconfig:", 10)) {
		if (use_config(b, type + 10, b->config) < 0)
			return -1;
		type = "oldconfig";
	}
	if (!strcmp(type, "oldconfig"))
		ret = clean_keeping_config(b);
	else
		ret = clean(b);
	if (ret < 0 || write_localversion(b) < 0)
		return -1;

	kdotconfig_init(&force);
	ret = load_force(b, &force);
	if (!ret && strcmp(type, "oldconfig")) {
		char *cmd = make_cmd(b, type);
		char *what = xasprintf("make %s", type);

		ret = make_step(b, what, cmd, KBUILD_CONFIG_FAILED);
		free(cmd);
		free(what);
	}
	if (!ret && kdotconfig_count(&force))
		ret = apply_force(b, &force, b->config);
	kdotconfig_free(&force);
	if (ret)
		return ret;
	memo_init(b, &m);
	ret = oldconfig_remembered(b, &m);
	memo_free(&m);
	return ret;
}

/*
 * The release kbuild wrote to OUTPUT_DIR's include/config/kernel.release
 * in the make that just built: what the image's uname -r says. NULL when
 * there is none (a make that is not kbuild's).
 */
static char *built_release(const struct kbuild *b)
{
	char *path = xasprintf("%s/include/config/kernel.release", b->outdir);
	FILE *f = fopen(path, "re");
	char line[256], *rel = NULL;
	size_t len;

	free(path);
	if (!f)
		return NULL;
	if (fgets(line, sizeof(line), f)) {
		len = strcspn(line, "\r\n");
		/* a line that did not fit is not a release */
		if (len && len < sizeof(line) - 1)
			rel = xstrndup(line, len);
	}
	fclose(f);
	return rel;
}

/*
 * kernelrelease of what was just built, before POST_BUILD may change it:
 * the file kbuild wrote, else "make -s kernelrelease", which computes the
 * same again (0.25 s a build on tinyconfig, more on a bigger tree).
 */
static void read_release(struct kbuild *b)
{
	char why[256];
	char *rel = built_release(b);

	if (!rel)
		rel = kbuild_kernelrelease(b->o, why, sizeof(why));
	if (!rel) {
		say(b, "ktest: %s", why);
		return;
	}
	snprintf(b->r->release, sizeof(b->r->release), "%s", rel);
	say(b, "kernelrelease: %s", rel);
	free(rel);
}

static int check_target(struct kbuild *b)
{
	char *path;
	int ret = 0;

	if (unset(b->o->build_target))
		return 0;
	path = xasprintf("%s/%s", b->outdir, b->o->build_target);
	if (access(path, F_OK) < 0)
		ret = fail(b, KBUILD_ERROR,
			   "make succeeded but BUILD_TARGET %s is missing",
			   path);
	free(path);
	return ret;
}

/*
 * POST_BUILD runs after a failed build too, and with POST_BUILD_DIE its
 * failure is what the build ends with: ktest.pl died there before it
 * looked at the build.
 */
static void post_build(struct kbuild *b)
{
	struct kbuild_result *r = b->r;
	enum kbuild_status st = r->status;
	char why[sizeof(r->why)];

	if (unset(b->o->post_build))
		return;
	memcpy(why, r->why, sizeof(why));
	r->status = KBUILD_OK;
	if (hook(b, "POST_BUILD", b->o->post_build, b->o->post_build_die) < 0)
		return;
	r->status = st;
	memcpy(r->why, why, sizeof(why));
}

static void build(struct kbuild *b)
{
	const struct kbuild_opts *o = b->o;
	char *cmd;
	int built;

	if (hook(b, "PRE_BUILD", o->pre_build, o->pre_build_die) < 0 ||
	    configure(b) < 0)
		return;
	cmd = make_cmd(b, unset(o->build_options) ? "" : o->build_options);
	built = make_step(b, "build", cmd, KBUILD_FAILED);
	free(cmd);
	if (!built)
		read_release(b);
	post_build(b);
	if (!built && b->r->status == KBUILD_OK)
		check_target(b);
}

int kbuild_run(const struct kbuild_opts *o, struct kbuild_result *r)
{
	struct kbuild b = { .o = o, .r = r };
	long start = now_ms();

	memset(r, 0, sizeof(*r));
	r->status = KBUILD_OK;
	if (o->build_type && !strcmp(o->build_type, "nobuild")) {
		char *rel, why[256];

		/*
		 * What is already built is what boots: ktest.pl's
		 * get_version asks the tree all the same, and the release
		 * is what tells our kernel's banner from another's (a
		 * triple fault). No tree, or nothing built: none is known.
		 */
		rel = kbuild_kernelrelease(o, why, sizeof(why));
		if (rel)
			snprintf(r->release, sizeof(r->release), "%s", rel);
		free(rel);
		snprintf(r->why, sizeof(r->why), "BUILD_TYPE is nobuild");
		return 0;
	}
	if (setup(&b) == 0)
		build(&b);
	if (r->status == KBUILD_OK)
		say(&b, "ktest: build done in %ld s, %d warning%s",
		    (now_ms() - start) / 1000, r->warnings,
		    r->warnings == 1 ? "" : "s");
	if (b.log)
		fclose(b.log);
	free(b.outdir);
	free(b.config);
	free(b.make);
	free(b.host_trouble);
	free(b.first_error);
	free(b.last_line);
	r->elapsed_ms = now_ms() - start;
	return r->status == KBUILD_OK ? 0 : -1;
}

struct release_ctx {
	char *first;		/* the first non-empty line: an error's reason */
	char *last;		/* the last: the release (ktest.pl: tail -1) */
};

static void release_line(void *ctx, const char *line, size_t len)
{
	struct release_ctx *rc = ctx;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
		       line[len - 1] == '\r'))
		len--;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (!len)
		return;
	if (!rc->first)
		rc->first = xstrndup(line, len);
	free(rc->last);
	rc->last = xstrndup(line, len);
}

char *kbuild_kernelrelease(const struct kbuild_opts *o, char *why,
			   size_t whylen)
{
	struct release_ctx rc = { NULL, NULL };
	struct kcmd_opts ko = {
		.cwd = o->build_dir,
		.env = make_env(),
		.timeout_ms = o->timeout_ms,
		.on_line = release_line,
		.ctx = &rc,
		.stdin_null = true,
	};
	struct kcmd_result res;
	char *outdir, *q, *cmd, how[64];

	if (unset(o->output_dir)) {
		snprintf(why, whylen, "OUTPUT_DIR is not set");
		return NULL;
	}
	outdir = in_build_dir(o, o->output_dir);
	q = kcmd_quote(outdir);
	cmd = xasprintf("%s O=%s -s kernelrelease",
			unset(o->make_cmd) ? "make" : o->make_cmd, q);
	free(outdir);
	free(q);
	if (kcmd_run(cmd, &ko, &res) < 0) {
		snprintf(why, whylen, "cannot run %s: %s", cmd, strerror(errno));
	} else if (res.status != 0 || res.timed_out) {
		snprintf(why, whylen, "%s failed (%s)%s%s", cmd,
			 kcmd_describe(&res, how, sizeof(how)),
			 rc.first ? ": " : "", rc.first ? rc.first : "");
	} else if (!rc.last) {
		snprintf(why, whylen, "%s printed nothing", cmd);
	} else {
		free(cmd);
		free(rc.first);
		return rc.last;
	}
	free(cmd);
	free(rc.first);
	free(rc.last);
	return NULL;
}

struct norm_ctx {
	char *first_error;	/* the first error line: the reason */
	char *last;		/* else the last line */
	bool host;
};

static void norm_line(void *ctx, const char *line, size_t len)
{
	struct norm_ctx *nc = ctx;
	char *s = xstrndup(line, len);

	if (is_host_trouble(s))
		nc->host = true;
	if (!nc->first_error && (strstr(s, "rror") || strstr(s, "***"))) {
		nc->first_error = s;
		return;
	}
	free(nc->last);
	nc->last = s;
}

/* "MAKE_CMD O=scratch_dir target" in BUILD_DIR, in written first if not NULL */
static int scratch_make(const struct kbuild_opts *o, const char *scratch_dir,
			const char *target, const struct kdotconfig *in,
			struct kdotconfig *out, bool *host, char *why,
			size_t whylen)
{
	struct norm_ctx nc = { NULL, NULL, false };
	struct kcmd_opts ko = {
		.cwd = o->build_dir,
		.env = make_env(),
		.timeout_ms = o->timeout_ms,
		.on_line = norm_line,
		.ctx = &nc,
		.stdin_null = true,
	};
	struct kcmd_result res;
	char *dir = in_build_dir(o, scratch_dir);
	char *cfg = xasprintf("%s/.config", dir);
	char *q = kcmd_quote(dir), *cmd = NULL, how[64];
	int ret = -1;

	*host = true;
	if (kcmd_mkdirs(dir) < 0 || (in && kdotconfig_write(in, cfg) < 0)) {
		snprintf(why, whylen, "cannot write %s: %s", cfg, strerror(errno));
		goto out;
	}
	cmd = xasprintf("%s O=%s %s",
			unset(o->make_cmd) ? "make" : o->make_cmd, q, target);
	if (kcmd_run(cmd, &ko, &res) < 0) {
		snprintf(why, whylen, "cannot run %s: %s", cmd, strerror(errno));
		goto out;
	}
	if (res.status != 0 || res.timed_out) {
		*host = nc.host || res.timed_out || res.signal ||
			res.status == 126 || res.status == 127;
		snprintf(why, whylen, "%s failed (%s)%s%s", cmd,
			 kcmd_describe(&res, how, sizeof(how)),
			 nc.first_error || nc.last ? ": " : "",
			 nc.first_error ? nc.first_error : nc.last ? nc.last : "");
		goto out;
	}
	if (kdotconfig_read(out, cfg) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", cfg, strerror(errno));
		goto out;
	}
	*host = false;
	ret = 0;
out:
	free(nc.first_error);
	free(nc.last);
	free(cmd);
	free(q);
	free(cfg);
	free(dir);
	return ret;
}

int kbuild_normalise(const struct kbuild_opts *o, const char *scratch_dir,
		     const struct kdotconfig *in, struct kdotconfig *out,
		     bool *host, char *why, size_t whylen)
{
	return scratch_make(o, scratch_dir, "olddefconfig", in, out, host, why,
			    whylen);
}

int kbuild_scratch_config(const struct kbuild_opts *o, const char *scratch_dir,
			  const char *target, struct kdotconfig *out,
			  bool *host, char *why, size_t whylen)
{
	return scratch_make(o, scratch_dir, target, NULL, out, host, why,
			    whylen);
}
