// SPDX-License-Identifier: GPL-2.0-only
/*
 * Installing a kernel on the test box (see install.h).
 *
 * ktest.pl's install(), step by step, and where this one differs:
 * - PRE_INSTALL, then "echo testing connection" on the box. ktest.pl
 *   rebooted the box to the good kernel when that failed; here it is an
 *   INFRA failure, and the caller, which owns power and console, decides.
 * - The image goes to TARGET_IMAGE under a temporary name and is renamed:
 *   the box never sees half a kernel (scp wrote it in place).
 * - Modules when the .config has CONFIG_MODULES=y, through a staging
 *   directory made fresh under TMP_DIR and always removed (ktest.pl staged
 *   straight into TMP_DIR and never cleaned it), packed with gzip rather
 *   than bzip2 (faster, and every busybox tar reads it), owned by root in
 *   the archive (ktest.pl's kept the building user's uid).
 * - The old /lib/modules/VERSION is removed after the new tarball is on
 *   the box, not before it was made, so a failed copy leaves the box with
 *   its old modules.
 * - The kernel version goes into rm -rf on the box: it must be a plain
 *   word. ktest.pl ran "rm -rf /lib/modules/" when it was empty.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/install.h"

#define MODS_TARBALL	KINSTALL_MODS_TARBALL
/* how often a box that refuses ssh is asked again before the install */
#define PROBE_AGAIN_MS	500

/* ---- the config ---- */

int kinstall_opts_read(struct kconfig *c, int i, struct kinstall_opts *o)
{
	long secs;

	memset(o, 0, sizeof(*o));
	if (kconfig_get_bool(c, KOPT_NO_INSTALL, i, &o->no_install) ||
	    kstrs_get(c, KOPT_PRE_INSTALL, i, &o->keep, &o->pre_install) ||
	    kstrs_get(c, KOPT_POST_INSTALL, i, &o->keep, &o->post_install) ||
	    kstrs_get(c, KOPT_MAKE_CMD, i, &o->keep, &o->make_cmd) ||
	    kstrs_get(c, KOPT_BUILD_DIR, i, &o->keep, &o->build_dir) ||
	    kstrs_get(c, KOPT_OUTPUT_DIR, i, &o->keep, &o->output_dir) ||
	    kstrs_get(c, KOPT_BUILD_TARGET, i, &o->keep, &o->build_target) ||
	    kstrs_get(c, KOPT_TARGET_IMAGE, i, &o->keep, &o->target_image) ||
	    kstrs_get(c, KOPT_TMP_DIR, i, &o->keep, &o->tmp_dir) ||
	    kconfig_get_int(c, KOPT_RUN_TIMEOUT, i, 0, &secs)) {
		kinstall_opts_release(o);
		return -1;
	}
	o->timeout_ms = secs > 0 ? secs * 1000 : 0;
	return 0;
}

void kinstall_opts_release(struct kinstall_opts *o)
{
	kstrs_free(&o->keep);
}

/* ---- the plan (pure) ---- */

bool kinstall_config_has_modules(const char *config, size_t len)
{
	static const char want[] = "CONFIG_MODULES=y";
	const char *p = config, *end = config + len, *nl;
	size_t n;

	/*
	 * ktest.pl: the first line matching /CONFIG_MODULES(=y)?/ with the
	 * "=y" decides. Kconfig writes the symbol at the start of its line,
	 * so that is "CONFIG_MODULES=y" as a whole line.
	 */
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		n = nl - p;
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' ||
			     p[n - 1] == '\t'))
			n--;
		if (n == sizeof(want) - 1 && !memcmp(p, want, n))
			return true;
	}
	return false;
}

char *kinstall_output_dir(const struct kinstall_opts *o)
{
	if (!o->output_dir || !*o->output_dir)
		return NULL;
	if (o->output_dir[0] == '/' || !o->build_dir || !*o->build_dir)
		return xstrdup(o->output_dir);
	return xasprintf("%s/%s", o->build_dir, o->output_dir);
}

/* "a" + "b" with one '/' between */
static char *join(const char *a, const char *b)
{
	size_t n = strlen(a);

	while (n > 1 && a[n - 1] == '/')
		n--;
	while (*b == '/')
		b++;
	if (n == 1 && a[0] == '/')
		return xasprintf("/%s", b);
	return xasprintf("%.*s/%s", (int)n, a, b);
}

/*
 * A kernel version goes into paths on the box and into rm -rf: letters,
 * digits and . _ + - ~ only, and not "." or "..". Kernel releases are
 * made of those (setlocalversion, LOCALVERSION as people write it).
 */
static bool plain_version(const char *v)
{
	const char *p;

	if (!v || !*v || !strcmp(v, ".") || !strcmp(v, ".."))
		return false;
	for (p = v; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._+-~", *p))
			return false;
	return true;
}

static bool uses_version(const char *s)
{
	return s && strstr(s, "$KERNEL_VERSION");
}

/* cmd with $KERNEL_VERSION, $SSH_USER and $MACHINE filled in */
static char *hook_line(const struct kinstall_opts *o,
		       const struct kbox_opts *box, const char *cmd)
{
	static const char *const names[] = {
		"KERNEL_VERSION", "SSH_USER", "MACHINE",
	};
	const char *values[] = {
		o->kernel_version, box->ssh_user, box->machine,
	};

	return kcmd_subst(cmd, names, values, 3);
}

static struct kinstall_step *add(struct kinstall_plan *p,
				 enum kinstall_step_kind kind,
				 const char *what)
{
	struct kinstall_step *s;

	p->steps = xrealloc(p->steps, (p->n + 1) * sizeof(*p->steps));
	s = &p->steps[p->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->what = xstrdup(what);
	return s;
}

static void add_box(struct kinstall_plan *p, const struct kbox_opts *box,
		    enum kinstall_step_kind kind, const char *what, char *cmd)
{
	struct kinstall_step *s = add(p, kind, what);

	s->cmd = cmd;
	s->legacy = kbox_exec_line(box, cmd);
}

static void add_copy(struct kinstall_plan *p, const struct kbox_opts *box,
		     enum kinstall_step_kind kind, const char *what,
		     bool install, char *src, char *dst, int mode)
{
	struct kinstall_step *s = add(p, kind, what);

	s->src = src;
	s->dst = dst;
	s->mode = mode;
	s->legacy = kbox_copy_line(box, install, src, dst);
}

static char **tar_argv(const char *staging, const char *tarball,
		       const char *version)
{
	char **argv = xcalloc(12, sizeof(*argv));
	size_t n = 0;

	argv[n++] = xstrdup("tar");
	/* root's files on the box, whoever built them */
	argv[n++] = xstrdup("--owner=0");
	argv[n++] = xstrdup("--group=0");
	argv[n++] = xstrdup("--numeric-owner");
	argv[n++] = xstrdup("-C");
	argv[n++] = xstrdup(staging);
	argv[n++] = xstrdup("-czf");
	argv[n++] = xstrdup(tarball);
	argv[n++] = xasprintf("lib/modules/%s", version);
	argv[n] = NULL;
	return argv;
}

/* make modules_install into staging, then tar: the tarball's path */
static char *plan_pack(const struct kinstall_opts *o, const char *outdir,
		       const char *staging, struct kinstall_plan *p)
{
	char *qout = kcmd_quote(outdir), *qstage = kcmd_quote(staging);
	char *tarball = join(staging, MODS_TARBALL);
	struct kinstall_step *s;

	s = add(p, KI_MODULES_BUILD, "make modules_install");
	s->cmd = xasprintf("%s O=%s INSTALL_MOD_STRIP=1 INSTALL_MOD_PATH=%s "
			   "modules_install",
			   o->make_cmd ? o->make_cmd : "make", qout, qstage);
	s = add(p, KI_MODULES_PACK, "pack the modules");
	s->argv = tar_argv(staging, tarball, o->kernel_version);
	s->src = xstrdup(tarball);
	free(qout);
	free(qstage);
	return tarball;
}

static void plan_modules(const struct kinstall_opts *o,
			 const struct kbox_opts *box, const char *outdir,
			 const char *staging, struct kinstall_plan *p)
{
	const char *ver = o->kernel_version;
	const char *root = o->mod_root ? o->mod_root : "/";
	const char *rtmp = o->remote_tmp ? o->remote_tmp : "/tmp";
	char *tarball;
	char *remote_tar = join(rtmp, MODS_TARBALL);
	char *moddir, *sub = xasprintf("lib/modules/%s", ver);
	char *q1, *q2;

	if (o->modules_tarball && *o->modules_tarball)
		tarball = xstrdup(o->modules_tarball);
	else
		tarball = plan_pack(o, outdir, staging, p);
	/* SCP_TO_TARGET gets the directory, as ktest.pl gave it "/tmp" */
	add_copy(p, box, KI_MODULES_COPY, "copy the modules", false, tarball,
		 box->scp_to_target ? xstrdup(rtmp) : xstrdup(remote_tar),
		 0600);

	moddir = join(root, sub);
	q1 = kcmd_quote(moddir);
	add_box(p, box, KI_MODULES_REMOVE, "remove the old modules",
		xasprintf("rm -rf %s", q1));
	free(q1);
	q1 = kcmd_quote(root);
	q2 = kcmd_quote(remote_tar);
	add_box(p, box, KI_MODULES_UNPACK, "unpack the modules",
		xasprintf("cd %s && tar -xzf %s", q1, q2));
	add_box(p, box, KI_MODULES_CLEAN, "remove the modules tarball",
		xasprintf("rm -f %s", q2));
	free(q1);
	free(q2);
	free(moddir);
	free(sub);
	free(remote_tar);
}

int kinstall_plan(const struct kinstall_opts *o, const struct kbox_opts *box,
		  bool modules, const char *staging, struct kinstall_plan *p,
		  char *why, size_t whylen)
{
	char *outdir = NULL;
	struct kinstall_step *s;

	memset(p, 0, sizeof(*p));
	if (o->no_install)
		return 0;
	outdir = kinstall_output_dir(o);
	if (!outdir) {
		snprintf(why, whylen, "OUTPUT_DIR is not set: ktest does not "
			 "know where the built kernel is");
		return -1;
	}
	if (!o->build_target || !*o->build_target || !o->target_image ||
	    !*o->target_image) {
		snprintf(why, whylen, "%s is not set: set it to %s",
			 !o->build_target || !*o->build_target ?
			 "BUILD_TARGET" : "TARGET_IMAGE",
			 !o->build_target || !*o->build_target ?
			 "the image's path in OUTPUT_DIR (arch/x86/boot/bzImage)" :
			 "where the box boots the test kernel from (/boot/vmlinuz-test)");
		goto fail;
	}
	if ((modules || uses_version(o->pre_install) ||
	     uses_version(o->post_install) || uses_version(o->target_image)) &&
	    !plain_version(o->kernel_version)) {
		snprintf(why, whylen, "kernel version '%s' cannot be used in "
			 "paths and commands on the box: only letters, digits "
			 "and . _ + - ~ (check LOCALVERSION and the .config's "
			 "CONFIG_LOCALVERSION)",
			 o->kernel_version ? o->kernel_version : "");
		goto fail;
	}
	if (modules && (!staging || !*staging) &&
	    (!o->modules_tarball || !*o->modules_tarball)) {
		snprintf(why, whylen, "no staging directory for the modules");
		goto fail;
	}

	if (o->pre_install) {
		s = add(p, KI_PRE_INSTALL, "PRE_INSTALL");
		s->cmd = hook_line(o, box, o->pre_install);
	}
	add_box(p, box, KI_PROBE, "reach the box",
		xstrdup("echo testing connection"));
	{
		static const char *const names[] = { "KERNEL_VERSION" };
		const char *values[] = { o->kernel_version };

		add_copy(p, box, KI_IMAGE, "copy the kernel image", true,
			 join(outdir, o->build_target),
			 kcmd_subst(o->target_image, names, values, 1), 0644);
	}
	if (modules)
		plan_modules(o, box, outdir, staging, p);
	if (o->post_install) {
		s = add(p, KI_POST_INSTALL, "POST_INSTALL");
		s->cmd = hook_line(o, box, o->post_install);
	}
	free(outdir);
	return 0;
fail:
	free(outdir);
	kinstall_plan_free(p);
	return -1;
}

void kinstall_plan_free(struct kinstall_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct kinstall_step *s = &p->steps[i];

		free(s->what);
		free(s->cmd);
		free(s->legacy);
		free(s->src);
		free(s->dst);
		if (s->argv) {
			for (char **a = s->argv; *a; a++)
				free(*a);
			free(s->argv);
		}
	}
	free(p->steps);
	memset(p, 0, sizeof(*p));
}

/* ---- doing it ---- */

/* Output goes on to the caller; the last line is kept for the message. */
struct tee {
	const struct kinstall_opts *o;
	char last[512];
};

static void tee_line(void *ctx, const char *line, size_t len)
{
	struct tee *t = ctx;

	if (t->o->on_line)
		t->o->on_line(t->o->ctx, line, len);
	/* make's "make: *** [Makefile:2: x] Error 2" says less than the
	 * line before it */
	if (len && !(t->last[0] && len > 4 && !memcmp(line, "make", 4) &&
		     memmem(line, len, ": *** ", 6))) {
		if (len >= sizeof(t->last))
			len = sizeof(t->last) - 1;
		memcpy(t->last, line, len);
		t->last[len] = '\0';
	}
}

struct run {
	struct kbox *box;
	const struct kinstall_opts *o;
	struct kinstall_result *r;
	const char *staging;
	const char *version;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int fail(struct run *x, enum kinstall_status st,
		enum kinstall_step_kind step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct run *x, enum kinstall_status st,
		enum kinstall_step_kind step, const char *fmt, ...)
{
	va_list ap;

	x->r->status = st;
	x->r->step = step;
	va_start(ap, fmt);
	vsnprintf(x->r->why, sizeof(x->r->why), fmt, ap);
	va_end(ap);
	return -1;
}

static void say(const struct kinstall_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct kinstall_opts *o, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	if (!o->on_line)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->on_line(o->ctx, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		   sizeof(buf) - 1);
}

static const char *const sub_make_env[] = {
	"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", NULL
};

/* A host command; the hooks get SSH_USER and MACHINE in their env. */
static int run_host(struct run *x, const struct kinstall_step *s,
		    enum kinstall_status st, const char *opt)
{
	const struct kinstall_opts *o = x->o;
	struct tee t = { .o = o };
	struct kbox_env env;
	struct kcmd_opts ko = {
		.timeout_ms = o->timeout_ms,
		.on_line = tee_line,
		.ctx = &t,
		.stdin_null = true,
	};
	struct kcmd_result res;
	char how[64];
	int ret = -1;

	memset(&env, 0, sizeof(env));
	if (s->kind == KI_MODULES_BUILD) {
		/* not the jobserver of a make that runs ktest */
		ko.cwd = o->build_dir;
		ko.env = getenv("MAKELEVEL") ? sub_make_env : NULL;
	} else {
		kbox_env_init(&env, kbox_opts(x->box));
		ko.env = (const char *const *)env.entries;
	}
	say(o, "%s", s->cmd);
	if (kcmd_run(s->cmd, &ko, &res) < 0)
		fail(x, st, s->kind, "%s: cannot run '%s': %s", opt, s->cmd,
		     strerror(errno));
	else if (res.status || res.signal || res.timed_out)
		fail(x, st, s->kind, "%s '%s' failed (%s)%s%s", opt, s->cmd,
		     kcmd_describe(&res, how, sizeof(how)),
		     t.last[0] ? ": " : "", t.last);
	else
		ret = 0;
	kbox_env_free(&env);
	return ret;
}

/* A command on the box, through libssh or SSH_EXEC. */
static int run_box(struct run *x, const struct kinstall_step *s,
		   long timeout_ms)
{
	int status;

	if (kbox_exec(x->box, s->cmd, timeout_ms, NULL, NULL, &status) < 0) {
		x->r->ssh_fail = kbox_ssh_fail(x->box);
		return fail(x, KINSTALL_BOX, s->kind, "%s: %s", s->what,
			    kbox_error(x->box));
	}
	if (status)
		return fail(x, KINSTALL_BOX, s->kind, "%s: %s", s->what,
			    kbox_error(x->box));
	return 0;
}

static int copy(struct run *x, const struct kinstall_step *s)
{
	if (kbox_copy(x->box, s->kind == KI_IMAGE, s->src, s->dst,
		      s->mode) == 0)
		return 0;
	x->r->ssh_fail = kbox_ssh_fail(x->box);
	return fail(x, KINSTALL_BOX, s->kind, "%s: %s", s->what,
		    kbox_error(x->box));
}

/* What modules_install left in staging/lib/modules, for the message. */
static void staged_versions(const char *staging, char *out, size_t len)
{
	char *dir = xasprintf("%s/lib/modules", staging);
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t used = 0;

	snprintf(out, len, "nothing");
	free(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && used < len) {
		if (e->d_name[0] == '.')
			continue;
		used += snprintf(out + used, len - used, "%s%s",
				 used ? ", " : "", e->d_name);
	}
	closedir(d);
}

static int modules_built(struct run *x, const struct kinstall_step *s)
{
	char *dir = xasprintf("%s/lib/modules/%s", x->staging, x->version);
	char found[512];
	struct stat st;
	int ret = 0;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		staged_versions(x->staging, found, sizeof(found));
		ret = fail(x, KINSTALL_MODULES, s->kind,
			   "make modules_install made no %s (it made %s): "
			   "is %s the kernel that was built?", dir, found,
			   x->version);
	}
	free(dir);
	return ret;
}

static int pack(struct run *x, const struct kinstall_step *s)
{
	struct tee t = { .o = x->o };
	struct kcmd_opts ko = {
		.timeout_ms = x->o->timeout_ms,
		.on_line = tee_line,
		.ctx = &t,
		.stdin_null = true,
	};
	struct kcmd_result res;
	char how[64];

	say(x->o, "tar -C %s -czf %s lib/modules/%s", x->staging, s->src,
	    x->version);
	if (kcmd_runv((const char *const *)s->argv, &ko, &res) < 0)
		return fail(x, KINSTALL_HOST, s->kind,
			    "cannot run tar to pack the modules: %s "
			    "(install GNU tar)", strerror(errno));
	if (res.status || res.signal || res.timed_out)
		return fail(x, KINSTALL_HOST, s->kind,
			    "tar could not pack the modules in %s (%s)%s%s",
			    x->staging, kcmd_describe(&res, how, sizeof(how)),
			    t.last[0] ? ": " : "", t.last);
	return 0;
}

/*
 * The box before an install. A box just back on its good kernel shows
 * its login prompt (which ended the reboot's wait) before sshd may
 * listen: a refused connection is asked again, every PROBE_AGAIN_MS,
 * until the box answers or CONNECT_TIMEOUT has passed (doc/waits.md).
 */
static int probe(struct run *x, const struct kinstall_step *s, long probe_ms)
{
	long end = now_ms() + probe_ms;
	struct timespec ts = { 0, PROBE_AGAIN_MS * 1000000L };

	for (;;) {
		x->r->ssh_fail = KSSH_OK;
		if (run_box(x, s, probe_ms) == 0)
			return 0;
		if (x->r->ssh_fail != KSSH_UNREACHABLE ||
		    end - now_ms() <= PROBE_AGAIN_MS)
			return -1;
		kbox_disconnect(x->box);
		nanosleep(&ts, NULL);
	}
}

static int run_step(struct run *x, const struct kinstall_step *s)
{
	const struct kbox_opts *bo = kbox_opts(x->box);
	long probe_ms = bo->ssh.connect_timeout_ms > 0 ?
			bo->ssh.connect_timeout_ms : 25000;

	switch (s->kind) {
	case KI_PRE_INSTALL:
		return run_host(x, s, KINSTALL_HOOK, "PRE_INSTALL");
	case KI_POST_INSTALL:
		return run_host(x, s, KINSTALL_HOOK, "POST_INSTALL");
	case KI_PROBE:
		if (probe(x, s, probe_ms) == 0)
			return 0;
		snprintf(x->r->why + strlen(x->r->why),
			 sizeof(x->r->why) - strlen(x->r->why),
			 " (the box must be up and reachable before a kernel "
			 "can be installed on it)");
		return -1;
	case KI_IMAGE:
	case KI_MODULES_COPY:
		return copy(x, s);
	case KI_MODULES_BUILD:
		if (run_host(x, s, KINSTALL_MODULES, "make modules_install"))
			return -1;
		return modules_built(x, s);
	case KI_MODULES_PACK:
		return pack(x, s);
	case KI_MODULES_REMOVE:
	case KI_MODULES_UNPACK:
		return run_box(x, s, 0);
	case KI_MODULES_CLEAN:
		/* as ktest.pl: a tarball left in /tmp fails nothing */
		if (run_box(x, s, 0))
			say(x->o, "warning: %s", x->r->why);
		x->r->why[0] = '\0';
		x->r->status = KINSTALL_OK;
		x->r->ssh_fail = KSSH_OK;
		return 0;
	}
	return 0;
}

/* After step failed: the tarball does not stay on the box if it got there. */
static void remove_tarball(struct run *x, const struct kinstall_plan *p,
			   size_t failed)
{
	int status;

	if (p->steps[failed].kind != KI_MODULES_REMOVE &&
	    p->steps[failed].kind != KI_MODULES_UNPACK)
		return;
	for (size_t i = failed + 1; i < p->n; i++)
		if (p->steps[i].kind == KI_MODULES_CLEAN)
			kbox_exec(x->box, p->steps[i].cmd, 0, NULL, NULL,
				  &status);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

static int rm_rf(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The .config decides about modules; NULL-safe *modules. */
static int read_modules(struct run *x, const char *outdir, bool *modules)
{
	char *path = xasprintf("%s/.config", outdir);
	struct sbuf b;
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0) {
		ret = fail(x, KINSTALL_HOST, KI_MODULES_BUILD,
			   "cannot read %s: %s (the build's .config: it says "
			   "whether there are modules to install)", path,
			   strerror(errno));
		free(path);
		return ret;
	}
	sbuf_init(&b);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = fail(x, KINSTALL_HOST, KI_MODULES_BUILD,
				   "cannot read %s: %s", path,
				   strerror(errno));
			break;
		}
		sbuf_addn(&b, buf, (size_t)n);
	}
	close(fd);
	*modules = kinstall_config_has_modules(sbuf_str(&b), b.len);
	sbuf_free(&b);
	free(path);
	return ret;
}

/* An empty directory in TMP_DIR for modules_install. */
static int make_staging(struct run *x, char **staging)
{
	const struct kinstall_opts *o = x->o;
	char *base;
	int ret = 0;

	base = xstrdup(o->tmp_dir && *o->tmp_dir ? o->tmp_dir :
		       getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (kcmd_mkdirs(base) < 0) {
		ret = fail(x, KINSTALL_HOST, KI_MODULES_BUILD,
			   "cannot make TMP_DIR %s: %s", base,
			   strerror(errno));
		free(base);
		return ret;
	}
	*staging = xasprintf("%s/ktest-mods.XXXXXX", base);
	free(base);
	if (!mkdtemp(*staging)) {
		ret = fail(x, KINSTALL_HOST, KI_MODULES_BUILD,
			   "cannot make a staging directory %s in TMP_DIR: "
			   "%s", *staging, strerror(errno));
		free(*staging);
		*staging = NULL;
	}
	return ret;
}

static int prepare(struct run *x, const char *outdir, bool *modules,
		   char **staging)
{
	const struct kinstall_opts *o = x->o;
	char *image;
	struct stat st;
	int ret = 0;

	if (!o->build_target || !*o->build_target)
		return 0;	/* the plan says what is missing */
	image = xasprintf("%s/%s", outdir, o->build_target);
	if (stat(image, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fail(x, KINSTALL_HOST, KI_IMAGE,
			   "the kernel image %s (OUTPUT_DIR/BUILD_TARGET) %s: "
			   "did the build finish, and is BUILD_TARGET right "
			   "for this architecture?", image,
			   access(image, F_OK) < 0 ? strerror(errno) :
			   "is not a regular file");
		free(image);
		return ret;
	}
	free(image);
	if (read_modules(x, outdir, modules))
		return -1;
	if (!*modules)
		return 0;
	if (o->modules_tarball && *o->modules_tarball) {
		if (access(o->modules_tarball, R_OK) == 0) {
			say(o, "The modules: packed by the build, %s",
			    o->modules_tarball);
			return 0;
		}
		return fail(x, KINSTALL_HOST, KI_MODULES_COPY,
			    "cannot read the packed modules %s: %s",
			    o->modules_tarball, strerror(errno));
	}
	return make_staging(x, staging);
}

int kinstall_run(struct kbox *box, const struct kinstall_opts *o,
		 struct kinstall_result *r)
{
	struct run x = { .box = box, .o = o, .r = r,
			 .version = o->kernel_version };
	struct kinstall_plan p = { NULL, 0 };
	char *outdir = NULL, *staging = NULL;
	bool modules = false;
	long t0 = now_ms();
	size_t i;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (o->no_install) {
		r->status = KINSTALL_SKIPPED;
		say(o, "NO_INSTALL is set: the box boots what it has");
		return 0;
	}
	outdir = kinstall_output_dir(o);
	if (!outdir) {
		fail(&x, KINSTALL_CONFIG, KI_IMAGE, "OUTPUT_DIR is not set: "
		     "ktest does not know where the built kernel is");
		goto out;
	}
	if (prepare(&x, outdir, &modules, &staging))
		goto out;
	x.staging = staging;
	if (kinstall_plan(o, kbox_opts(box), modules, staging, &p, r->why,
			  sizeof(r->why))) {
		r->status = KINSTALL_CONFIG;
		goto out;
	}
	for (i = 0; i < p.n; i++) {
		if (run_step(&x, &p.steps[i])) {
			remove_tarball(&x, &p, i);
			goto out;
		}
	}
	if (!modules)
		say(o, "No modules needed");
	r->modules = modules;
	r->status = KINSTALL_OK;
	ret = 0;
out:
	if (staging && rm_rf(staging) < 0 && ret == 0) {
		/* installed, but TMP_DIR keeps the staging: say so */
		say(o, "warning: cannot remove the staging directory %s: %s",
		    staging, strerror(errno));
	}
	kinstall_plan_free(&p);
	free(staging);
	free(outdir);
	r->elapsed_ms = now_ms() - t0;
	return ret;
}

int kinstall_pack_modules(const struct kinstall_opts *o, const char *tarball,
			  struct kinstall_result *r)
{
	struct run x = { .o = o, .r = r, .version = o->kernel_version };
	struct kinstall_plan p = { NULL, 0 };
	char *outdir = kinstall_output_dir(o), *staging = NULL, *packed = NULL;
	long t0 = now_ms();
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!outdir) {
		fail(&x, KINSTALL_CONFIG, KI_MODULES_BUILD,
		     "OUTPUT_DIR is not set: ktest does not know where the "
		     "built kernel is");
		goto out;
	}
	if (!plain_version(o->kernel_version)) {
		fail(&x, KINSTALL_CONFIG, KI_MODULES_BUILD,
		     "kernel version '%s' cannot name lib/modules/VERSION",
		     o->kernel_version ? o->kernel_version : "");
		goto out;
	}
	if (make_staging(&x, &staging))
		goto out;
	x.staging = staging;
	packed = plan_pack(o, outdir, staging, &p);
	/* no box: the two host steps by hand */
	if (run_host(&x, &p.steps[0], KINSTALL_MODULES, "make modules_install") ||
	    modules_built(&x, &p.steps[0]) || pack(&x, &p.steps[1]))
		goto out;
	if (rename(packed, tarball) && (errno != EXDEV ||
					kcmd_copy_file(packed, tarball))) {
		fail(&x, KINSTALL_HOST, KI_MODULES_PACK, "cannot move %s to "
		     "%s: %s", packed, tarball, strerror(errno));
		goto out;
	}
	r->modules = true;
	r->status = KINSTALL_OK;
	ret = 0;
out:
	if (staging && rm_rf(staging) < 0 && ret == 0)
		say(o, "warning: cannot remove the staging directory %s: %s",
		    staging, strerror(errno));
	kinstall_plan_free(&p);
	free(packed);
	free(staging);
	free(outdir);
	r->elapsed_ms = now_ms() - t0;
	return ret;
}
