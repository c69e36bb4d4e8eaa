// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest [CONFIG]: run the tests, in config order, as ktest.pl does (its
 * prologue, banners, times and summary), with a journal and a JSON report
 * in the state directory so that a rerun resumes an unfinished run.
 *
 * Exit status: 0 every test passed, 1 a test failed, 2 a usage or config
 * error, 3 the lab gave out. (ktest.pl exits 0 after failed tests when
 * DIE_ON_FAILURE=0, and with Perl's die status otherwise.)
 *
 * Test types whose runner has not landed yet stop the run with exit 2 and
 * say so, never a fake success.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "console/console.h"
#include "ktest/cmd.h"
#include "ktest/leftover.h"
#include "ktest/mail.h"
#include "ktest/pool.h"
#include "ktest/run.h"
#include "ktest/vcs.h"

/* How many SIGINTs came (3 at most); main_pid: ktest's own process */
static volatile sig_atomic_t got_sigint;
static pid_t main_pid;

static void say(const char *s, size_t len)
{
	ssize_t n = write(STDOUT_FILENO, s, len);

	(void)n;	/* nothing to do from a signal handler */
}

/*
 * The first SIGINT lets the commands in flight end (a build runs to its
 * end) and stops the run at the next step; a second one stops them now
 * (SIGTERM to their groups), a third kills them. A box's process (a fork
 * of ktest, in its process group) gets each SIGINT too and stops its own
 * command; ktest's own process says what happens.
 */
static void on_sigint(int sig)
{
	static const char first[] =
		"\nktest: interrupted: stopping after the step in flight (its build or test runs to its end; Ctrl-C again stops it now)\n";
	static const char again[] =
		"\nktest: interrupted again: stopping the command in flight (the rerun runs its step again)\n";
	int saved = errno;

	(void)sig;
	if (got_sigint < 3)
		got_sigint++;
	if (got_sigint >= 2)
		kcmd_signal_running(got_sigint == 2 ? SIGTERM : SIGKILL);
	if (getpid() == main_pid) {
		if (got_sigint == 1)
			say(first, sizeof(first) - 1);
		else if (got_sigint == 2)
			say(again, sizeof(again) - 1);
	}
	errno = saved;
}

bool krun_interrupted(struct krun *r)
{
	if (got_sigint)
		r->interrupted = true;
	return r->interrupted;
}

bool krun_stopped_hard(void)
{
	return got_sigint >= 2;
}

/* ---- output ---- */

/* fmt formatted, with the secrets of command lines masked (kcmd_redact) */
static char *redacted(const char *fmt, va_list ap)
{
	char *s, *r;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	r = kcmd_redact(s);
	free(s);
	return r;
}

void krun_print(struct krun *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = redacted(fmt, ap);
	va_end(ap);
	if (!s)
		return;
	/* a box's lines are marked at their start only */
	if (r->prefix && *s && *s != '\n' && !r->mid_line) {
		char *t = xasprintf("%s%s", r->prefix, s);

		free(s);
		s = t;
	}
	if (*s)
		r->mid_line = s[strlen(s) - 1] != '\n';
	fputs(s, stdout);
	/* a box shares stdout and LOG_FILE with the other boxes: its lines
	 * go out whole, each in one write, or another's would cut them */
	if (!r->prefix || !r->mid_line)
		fflush(stdout);
	if (r->log) {
		fputs(s, r->log);
		if (!r->prefix || !r->mid_line)
			fflush(r->log);
	}
	free(s);
}

void krun_log(struct krun *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!r->log)
		return;
	va_start(ap, fmt);
	s = redacted(fmt, ap);
	va_end(ap);
	if (!s)
		return;
	if (r->prefix && *s && !r->log_mid_line)
		fputs(r->prefix, r->log);
	if (*s)
		r->log_mid_line = s[strlen(s) - 1] != '\n';
	fputs(s, r->log);
	if (r->prefix && !r->log_mid_line)
		fflush(r->log);	/* whole lines, as krun_print's */
	free(s);
}

/* ---- options of the current test ---- */

void krun_forget(struct krun *r)
{
	for (int k = 0; k < KOPT__COUNT; k++) {
		if (r->opts[k]) {
			r->stale = xrealloc(r->stale, (r->nstale + 1) * sizeof(char *));
			r->stale[r->nstale++] = r->opts[k];
		}
		r->opts[k] = NULL;
		r->have[k] = false;
	}
}

/* Between tests: nothing handed out is in use any more. */
static void forget_all(struct krun *r)
{
	krun_forget(r);
	memset(r->masked, 0, sizeof(r->masked));
	for (size_t k = 0; k < r->nstale; k++)
		free(r->stale[k]);
	free(r->stale);
	r->stale = NULL;
	r->nstale = 0;
}

void krun_mask(struct krun *r, enum kopt_id id)
{
	r->masked[id] = true;
}

const char *krun_opt(struct krun *r, enum kopt_id id)
{
	if (r->masked[id])
		return NULL;
	if (!r->have[id]) {
		char *v = NULL;

		if (kconfig_get(r->c, id, r->i, &v, NULL)) {
			krun_print(r, "ktest: %s does not resolve for test %d: stopping\n",
				   kconfig_opt_name(r->c, id), r->i);
			r->die = true;
			return NULL;
		}
		r->opts[id] = v;
		r->have[id] = true;
	}
	return r->opts[id];
}

bool krun_bool(struct krun *r, enum kopt_id id)
{
	const char *v = krun_opt(r, id);

	return v && *v && strtol(v, NULL, 0) != 0;
}

long krun_int(struct krun *r, enum kopt_id id, long fallback)
{
	const char *v = krun_opt(r, id);
	char *end;
	long n;

	if (!v || !*v)
		return fallback;
	n = strtol(v, &end, 0);
	return *end ? fallback : n;
}

char **krun_words(const char *s, size_t *n)
{
	char **v = NULL, *copy, *save = NULL, *w;

	*n = 0;
	if (!s)
		return NULL;
	copy = xstrdup(s);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		v = xrealloc(v, (*n + 2) * sizeof(*v));
		v[(*n)++] = xstrdup(w);
		v[*n] = NULL;
	}
	free(copy);
	return v;
}

void krun_words_free(char **v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

enum kstep_level krun_level(struct krun *r, enum kopt_id subtype)
{
	const char *type = krun_opt(r, subtype);
	const char *test = krun_opt(r, KOPT_TEST);

	if (!type || !strcmp(type, "build"))
		return KSTEP_BUILD;
	if (!strcmp(type, "boot") || !test || !*test)
		return KSTEP_BOOT;
	return KSTEP_TEST;
}

/* BUILD_DIR's repository, opened once; quiet: no error printed */
static struct kvcs *open_vcs(struct krun *r, bool quiet)
{
	char err[1024];
	const char *dir;

	if (r->vcs)
		return r->vcs;
	dir = krun_opt(r, KOPT_BUILD_DIR);
	r->vcs = kvcs_open(dir ? dir : ".", err, sizeof(err));
	if (!r->vcs && !quiet)
		krun_print(r, "ktest: %s\n", err);
	return r->vcs;
}

struct kvcs *krun_vcs(struct krun *r)
{
	return open_vcs(r, false);
}

int krun_check_tree(struct krun *r, struct kvcs *v)
{
	const char *dir = krun_opt(r, KOPT_BUILD_DIR);
	const char *type = krun_opt(r, KOPT_TEST_TYPE);
	char idx[16];
	int ret;

	snprintf(idx, sizeof(idx), "%d", r->i);
	if (kvcs_synced(v) ||
	    kjournal_find(&r->j, "ev", "step", "test", idx, NULL))
		return 0;
	ret = kvcs_check_clean(v);
	if (ret)
		krun_print(r, "ktest: test %d: BUILD_DIR %s\n", r->i, kvcs_error(v));
	if (ret > 0) {
		krun_print(r, "ktest: a %s checks each commit out with force and would lose them: commit or stash them (git -C %s stash), then run ktest again\n",
			   type ? type : "bisect", dir ? dir : ".");
		r->config_error = true;
	}
	return ret ? -1 : 0;
}

/* ---- times and banners ---- */

static void print_time(struct krun *r, const char *what, long ms)
{
	long s = ms / 1000, h = s / 3600, m = (s % 3600) / 60;

	if (ms <= 0)
		return;
	s %= 60;
	krun_print(r, "%s", what);
	if (h)
		krun_print(r, "%ld hour%s ", h, h == 1 ? "" : "s");
	if (h || m)
		krun_print(r, "%ld minute%s ", m, m == 1 ? "" : "s");
	krun_print(r, "%ld second%s\n", s, s == 1 ? "" : "s");
}

void krun_print_times(struct krun *r)
{
	static const char *const names[] = {
		"Build time:   ", "Install time: ", "Reboot time:  ",
		"Test time:    ",
	};

	if (!r->ms[0] && !r->ms[1] && !r->ms[2] && !r->ms[3])
		return;
	krun_print(r, "\n");
	for (int k = 0; k < 4; k++)
		print_time(r, names[k], r->ms[k]);
	krun_print(r, "\n");
	memset(r->ms, 0, sizeof(r->ms));
}

static void test_label(struct krun *r, char *buf, size_t len)
{
	const char *name = krun_opt(r, KOPT_TEST_NAME);

	if (name && *name)
		snprintf(buf, len, "TEST %d (%s)", r->i, name);
	else
		snprintf(buf, len, "TEST %d", r->i);
}

static void run_hook(struct krun *r, enum kopt_id id, bool must)
{
	const char *cmd = krun_opt(r, id);
	struct kcmd_opts o = { .timeout_ms = 0, .stdin_null = true };
	struct kcmd_result res;
	char how[128];

	if (!cmd || !*cmd)
		return;
	krun_print(r, "Running %s: %s\n", kconfig_opt_name(r->c, id), cmd);
	o.on_line = NULL;
	if (kcmd_run(cmd, &o, &res) || res.status != 0) {
		krun_print(r, "%s failed: %s\n", kconfig_opt_name(r->c, id),
			   kcmd_describe(&res, how, sizeof(how)));
		if (must) {
			krun_print(r, "CRITICAL FAILURE... [TEST %d] failed: %s\n",
				   r->i, kconfig_opt_name(r->c, id));
			r->die = true;
		}
	}
}

/* STORE_FAILURES / STORE_SUCCESSES: a dated directory of the test's files */
static void store_files(struct krun *r, enum kopt_id id, const char *what)
{
	const char *dir = krun_opt(r, id);
	const char *bt = krun_opt(r, KOPT_BUILD_TYPE);
	const char *machine = krun_opt(r, KOPT_MACHINE);
	const char *out = krun_opt(r, KOPT_OUTPUT_DIR);
	char stamp[32], *dest, *cfg;
	time_t now = time(NULL);
	struct tm tm;

	if (!dir || !*dir)
		return;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	if (bt && !strncmp(bt, "useconfig", 9))
		bt = "useconfig";
	dest = xasprintf("%s/%s-%s-%s-%s-%s", dir, machine ? machine : "box",
			 krun_opt(r, KOPT_TEST_TYPE), bt ? bt : "", what, stamp);
	cfg = xasprintf("%s/.config", out ? out : ".");
	if (kcmd_mkdirs_private(dest)) {
		krun_print(r, "ktest: cannot create %s (%s): %s\n", dest,
			   kconfig_opt_name(r->c, id), strerror(errno));
		goto out;
	}
	{
		const char *files[][2] = {
			{ cfg, "config" }, { r->buildlog, "buildlog" },
			{ r->dmesg, "dmesg" }, { r->testlog, "testlog" },
		};

		for (size_t k = 0; k < 4; k++) {
			char *to;

			if (!files[k][0] || access(files[k][0], R_OK))
				continue;
			to = xasprintf("%s/%s", dest, files[k][1]);
			{
				const char *const argv[] = { "cp", files[k][0], to, NULL };
				struct kcmd_opts o = { .stdin_null = true };
				struct kcmd_result res;

				if (kcmd_runv(argv, &o, &res) || res.status)
					krun_print(r, "ktest: cannot copy %s to %s\n",
						   files[k][0], to);
			}
			free(to);
		}
	}
	krun_print(r, "Stored %s files in %s\n", what, dest);
out:
	free(dest);
	free(cfg);
}

/* ---- mail ---- */

static void mail_line(void *ctx, const char *line, size_t len)
{
	krun_log(ctx, "%.*s\n", (int)len, line);
}

static void mail_opts(struct krun *r, struct kmail_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mailto = krun_opt(r, KOPT_MAILTO);
	o->mailer = krun_opt(r, KOPT_MAILER);
	o->mail_path = krun_opt(r, KOPT_MAIL_PATH);
	o->command = krun_opt(r, KOPT_MAIL_COMMAND);
	o->tmp_dir = krun_opt(r, KOPT_TMP_DIR);
	o->timeout_ms = krun_int(r, KOPT_RUN_TIMEOUT, 0) * 1000;
	o->on_line = mail_line;
	o->ctx = r;
}

/* ktest.pl's send_email: nothing without MAILTO; a failure is reported */
static void send_mail(struct krun *r, const char *subject,
		      const char *message, const char *body_file)
{
	struct kmail_opts o;
	char why[1024], *subj, *msg;

	mail_opts(r, &o);
	if (!o.mailto || !*o.mailto)
		return;
	if (o.tmp_dir && *o.tmp_dir && kcmd_mkdirs_private(o.tmp_dir))
		krun_print(r, "ktest: cannot create TMP_DIR %s: %s\n", o.tmp_dir,
			   strerror(errno));
	krun_log(r, "Mailing %s: %s\n", o.mailto, subject);
	/* the mail leaves the machine: no secret of a command line in it */
	subj = kcmd_redact(subject);
	msg = kcmd_redact(message);
	if (kmail_send(&o, subj, msg, body_file, why, sizeof(why)))
		krun_print(r, "ktest: no mail sent: %s\n", why);
	free(subj);
	free(msg);
}

/* ktest.pl's get_test_name: TEST_NAME:TEST_TYPE, or TEST_TYPE */
static char *mail_name(struct krun *r)
{
	const char *name = krun_opt(r, KOPT_TEST_NAME);
	const char *type = krun_opt(r, KOPT_TEST_TYPE);

	if (name && *name)
		return xasprintf("%s:%s", name, type ? type : "");
	return xstrdup(type ? type : "");
}

/* The subject is before, "[<name>]", after. */
static void mail_event(struct krun *r, const char *before, const char *after,
		       const char *message, const char *body_file)
{
	char *name = mail_name(r);
	char *subject = xasprintf("%s[%s]%s", before, name, after);

	send_mail(r, subject, message, body_file);
	free(subject);
	free(name);
}

static long log_size(struct krun *r)
{
	struct stat st;

	if (!r->log)
		return 0;
	fflush(r->log);
	if (fstat(fileno(r->log), &st))
		return 0;
	return (long)st.st_size;
}

/*
 * The LOG_FILE portion since the test started, capped at MAIL_MAX_SIZE
 * (its last bytes), staged in TMP_DIR/log. NULL when there is no log.
 */
static char *stage_log(struct krun *r)
{
	const char *tmp = krun_opt(r, KOPT_TMP_DIR);
	char *path, buf[65536];
	long off, len;
	FILE *in, *out;

	if (!r->log_path || !r->log)
		return NULL;
	kmail_log_span(r->log_start, log_size(r),
		       krun_int(r, KOPT_MAIL_MAX_SIZE, 0), &off, &len);
	path = xasprintf("%s/log", tmp && *tmp ? tmp : "/tmp");
	in = fopen(r->log_path, "r");
	out = kcmd_fopen_private(path, "w");
	if (!in || !out || fseek(in, off, SEEK_SET)) {
		krun_print(r, "ktest: cannot stage the log for mail in %s\n", path);
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		free(path);
		return NULL;
	}
	while (len > 0) {
		size_t n = fread(buf, 1, len < (long)sizeof(buf) ?
				 (size_t)len : sizeof(buf), in);

		if (!n)
			break;
		fwrite(buf, 1, n, out);
		len -= (long)n;
	}
	fclose(in);
	if (fclose(out)) {
		free(path);
		return NULL;
	}
	return path;
}

int krun_fail(struct krun *r, const char *fmt, ...)
{
	char why[2048], label[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	kcmd_redact_buf(why, sizeof(why));	/* to the report and the mail */
	r->failures++;
	r->t->verdict = KV_BAD;
	kresults_set(&r->t->why, why);
	test_label(r, label, sizeof(label));
	if (krun_bool(r, KOPT_DIE_ON_FAILURE))
		r->die = true;
	krun_print(r, "FAILED\n");
	krun_print_times(r);
	krun_print(r, "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n"
		      "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n");
	krun_print(r, "KTEST RESULT: %s Failed: %s\n", label, why);
	krun_print(r, "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n"
		      "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n");
	if (!r->die)
		store_files(r, KOPT_STORE_FAILURES, "fail");
	return 1;
}

int krun_success(struct krun *r)
{
	char label[256];

	r->successes++;
	r->t->verdict = KV_GOOD;
	test_label(r, label, sizeof(label));
	krun_print_times(r);
	krun_print(r, "\n\n*******************************************\n"
		      "*******************************************\n");
	krun_print(r, "KTEST RESULT: %s SUCCESS!!!!   **\n", label);
	krun_print(r, "*******************************************\n"
		      "*******************************************\n");
	store_files(r, KOPT_STORE_SUCCESSES, "success");
	return 0;
}

/* ---- state directory and journal ---- */

static unsigned long file_crc(const char *path)
{
	char buf[65536];
	unsigned long crc = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	/* a chained CRC of the blocks: equal files give equal values */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = kjournal_crc32(buf, n) ^ (crc * 31);
	close(fd);
	return crc;
}

/* What identifies a run: the config file's path and content, and -D. */
static char *run_identity(struct kcli *cli, const char *abs)
{
	struct sbuf b;
	char *id;

	sbuf_init(&b);
	sbuf_addf(&b, "%s %08lx", abs, file_crc(cli->config));
	for (int k = 0; k < cli->ndefines; k++)
		sbuf_addf(&b, " -D%s%s%s", cli->defines[k].name,
			  cli->defines[k].variable ? ":=" : "=",
			  cli->defines[k].value ? cli->defines[k].value : "");
	id = xasprintf("%08lx", kjournal_crc32(b.buf, b.len));
	sbuf_free(&b);
	return id;
}

static char *default_state_dir(const char *abs)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	const char *base = strrchr(abs, '/');
	char *root, *dir;

	base = base ? base + 1 : abs;
	if (xdg && *xdg)
		root = xasprintf("%s/ktest", xdg);
	else
		root = xasprintf("%s/.local/state/ktest", home && *home ? home : "/tmp");
	dir = xasprintf("%s/%s-%08lx", root, base,
			kjournal_crc32(abs, strlen(abs)));
	free(root);
	return dir;
}

static void say_leftover(void *ctx, pid_t pgid, const char *cmd)
{
	krun_print(ctx, "ktest: a killed run left a command running (process group %ld: %s): stopping it before this run builds\n",
		   (long)pgid, cmd);
}

/*
 * With STATE_DIR locked, no other run uses it: a command noted in its
 * "running" directory that still runs is a killed run's. From here on,
 * this run's commands are noted there.
 */
static int stop_leftovers(struct krun *r, char *err, size_t len)
{
	char *dir = xasprintf("%s/running", r->state_dir);
	int ret = 0;

	kleft_stop(dir, say_leftover, r);
	if (kleft_set_dir(dir)) {
		snprintf(err, len, "cannot create %s: %s", dir, strerror(errno));
		ret = -1;
	}
	free(dir);
	return ret;
}

static int open_state(struct krun *r, struct kcli *cli)
{
	char err[1024], *abs = realpath(cli->config, NULL);
	const char *sd;
	char *id;
	const struct kjrec *first;
	int ret = 0;

	r->i = -1;
	sd = krun_opt(r, KOPT_STATE_DIR);
	r->state_dir = sd && *sd ? xstrdup(sd) :
		default_state_dir(abs ? abs : cli->config);
	if (kjournal_lock(r->state_dir, err, sizeof(err)) ||
	    stop_leftovers(r, err, sizeof(err)) ||
	    kjournal_open(&r->j, r->state_dir, err, sizeof(err))) {
		krun_print(r, "ktest: %s\n", err);
		free(abs);
		return -1;
	}
	if (r->j.torn)
		krun_print(r, "The journal's last record was cut short (ktest was killed while writing it): ignored\n");
	id = run_identity(cli, abs ? abs : cli->config);
	first = r->j.nrecs ? &r->j.recs[0] : NULL;
	if (first && (cli->restart || kjournal_find(&r->j, "ev", "end", NULL) ||
		      !kjrec_get(first, "id") || strcmp(kjrec_get(first, "id"), id))) {
		const char *why = cli->restart ? "--restart" :
			kjournal_find(&r->j, "ev", "end", NULL) ?
			"the last run finished" : "the config changed";

		krun_print(r, "Starting afresh (%s); the old journal is kept as %s.N\n",
			   why, r->j.path);
		if (kjournal_restart(&r->j, err, sizeof(err))) {
			krun_print(r, "ktest: %s\n", err);
			ret = -1;
		}
		first = NULL;
	} else if (first) {
		krun_print(r, "Resuming the unfinished run in %s (--restart starts afresh)\n",
			   r->state_dir);
	}
	if (!ret && !first && kjournal_append(&r->j, "ev", "run", "id", id,
					      "config", abs ? abs : cli->config,
					      NULL)) {
		krun_print(r, "ktest: cannot write %s: %s\n", r->j.path,
			   strerror(errno));
		ret = -1;
	}
	r->report_path = xasprintf("%s/report.json", r->state_dir);
	free(id);
	free(abs);
	return ret;
}

static void write_report(struct krun *r)
{
	if (kresults_write(&r->report, r->report_path))
		krun_print(r, "ktest: cannot write %s: %s\n", r->report_path,
			   strerror(errno));
	if (r->json_path && kresults_write(&r->report, r->json_path))
		krun_print(r, "ktest: cannot write %s (--json): %s\n",
			   r->json_path, strerror(errno));
	if (r->kcidb_path && kresults_write_kcidb(&r->report, r->kcidb_path))
		krun_print(r, "ktest: cannot write %s (--kcidb): %s\n",
			   r->kcidb_path, strerror(errno));
}

/* "ARCH=arm64" in s: its value, if it is a KCIDB architecture ([a-z0-9_]+) */
static char *arch_from(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	size_t n;

	if (!p)
		return NULL;
	p += strlen(key);
	n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (!n || (p[n] && p[n] != ' ' && p[n] != '/' && p[n] != '\t'))
		return NULL;
	return xstrndup(p, n);
}

/*
 * What KCIDB wants to know of a test's build: BUILD_DIR's origin remote,
 * branch and HEAD (the commit of steps that build the tree as it is, after
 * CHECKOUT), the architecture (ARCH= of MAKE_CMD or BUILD_OPTIONS, else the
 * arch/X/ of BUILD_TARGET), BUILD_TYPE and LOG_FILE. Unknown ones stay NULL.
 */
static void kcidb_facts(struct krun *r)
{
	const char *dir = krun_opt(r, KOPT_BUILD_DIR);
	const char *log = r->log_path;
	char err[256];
	struct kvcs *v = r->vcs;
	char *arch;

	if (!v && dir && *dir)
		v = kvcs_open(dir, err, sizeof(err));	/* quiet: git is optional */
	if (v) {
		struct kvcs_commit head;

		r->t->git_url = kvcs_remote_url(v, "origin");
		r->t->git_branch = kvcs_branch(v);
		if (!kvcs_head(v, &head)) {
			kresults_set(&r->t->head, head.id);
			kvcs_commit_clear(&head);
		}
		if (v != r->vcs)
			kvcs_close(v);
	}
	arch = arch_from(krun_opt(r, KOPT_MAKE_CMD), "ARCH=");
	if (!arch)
		arch = arch_from(krun_opt(r, KOPT_BUILD_OPTIONS), "ARCH=");
	if (!arch)
		arch = arch_from(krun_opt(r, KOPT_BUILD_TARGET), "arch/");
	r->t->arch = arch;
	kresults_set(&r->t->config_name, krun_opt(r, KOPT_BUILD_TYPE));
	if (log && *log) {
		char *abs = realpath(log, NULL);

		r->t->log_url = abs ? abs : xstrdup(log);
	}
}

/* ---- the log ---- */

static int open_log(struct krun *r)
{
	const char *path;
	char *dir, *slash;

	r->i = -1;
	path = krun_opt(r, KOPT_LOG_FILE);
	if (!path || !*path)
		return 0;
	r->log_path = xstrdup(path);
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (access(dir, F_OK)) {
			if (kcmd_mkdirs_private(dir)) {
				fprintf(stderr, "ktest: cannot create the log directory %s (LOG_FILE): %s\n",
					dir, strerror(errno));
				free(dir);
				return -1;
			}
			printf("The log directory %s did not exist, so it was created.\n",
			       dir);
		}
	}
	free(dir);
	r->i = -1;
	r->log = kcmd_fopen_private(path, krun_bool(r, KOPT_CLEAR_LOG) ? "w" : "a");
	if (!r->log) {
		fprintf(stderr, "ktest: cannot open LOG_FILE %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- one test ---- */

static char *subtype(struct kconfig *c, int i, const char *type)
{
	enum kopt_id id = KOPT_BUILD_TYPE;
	char *v = NULL;

	if (!strcmp(type, "patchcheck"))
		id = KOPT_PATCHCHECK_TYPE;
	else if (!strcmp(type, "bisect"))
		id = KOPT_BISECT_TYPE;
	else if (!strcmp(type, "config_bisect"))
		id = KOPT_CONFIG_BISECT_TYPE;
	else if (!strcmp(type, "make_min_config") ||
		 !strcmp(type, "make_warnings_file"))
		return xstrdup("");
	if (kconfig_get(c, id, i, &v, NULL) || !v)
		return xstrdup("ERROR");
	return v;
}

/*
 * ktest.pl's do_not_reboot: the test never boots the box. (ktest.pl saw a
 * subtype only when the test itself set it; here DEFAULTS count too.)
 */
static bool build_only(struct krun *r)
{
	const char *type = krun_opt(r, KOPT_TEST_TYPE);
	char *sub;
	bool ret;

	if (!type)
		return true;
	if (!strcmp(type, "build") || !strcmp(type, "make_warnings_file"))
		return true;
	if (strcmp(type, "patchcheck") && strcmp(type, "bisect") &&
	    strcmp(type, "config_bisect"))
		return false;
	sub = subtype(r->c, r->i, type);
	ret = !strcmp(sub, "build");
	free(sub);
	return ret;
}

static char *per_test_file(struct krun *r, const char *what)
{
	const char *tmp = krun_opt(r, KOPT_TMP_DIR);
	const char *machine = krun_opt(r, KOPT_MACHINE);

	return xasprintf("%s/%s-%s", tmp ? tmp : "/tmp/ktest", what,
			 machine ? machine : "box");
}

static int mkdir_p(struct krun *r, const char *dir, enum kopt_id id)
{
	/* TMP_DIR holds the logs: only its owner may read them */
	if (id == KOPT_TMP_DIR ? kcmd_mkdirs_private(dir) : kcmd_mkdirs(dir)) {
		krun_print(r, "ktest: cannot create %s (%s): %s\n", dir,
			   kconfig_opt_name(r->c, id), strerror(errno));
		return -1;
	}
	return 0;
}

static int prologue(struct krun *r)
{
	const char *dir;

	dir = krun_opt(r, KOPT_OUTPUT_DIR);
	if (dir && *dir && mkdir_p(r, dir, KOPT_OUTPUT_DIR))
		return -1;
	dir = krun_opt(r, KOPT_TMP_DIR);
	if (dir && *dir && mkdir_p(r, dir, KOPT_TMP_DIR))
		return -1;
	dir = krun_opt(r, KOPT_BUILD_DIR);
	if (dir && *dir && chdir(dir)) {
		krun_print(r, "ktest: cannot enter BUILD_DIR %s: %s\n", dir,
			   strerror(errno));
		return -1;
	}
	free(r->buildlog);
	free(r->testlog);
	free(r->dmesg);
	r->buildlog = per_test_file(r, "buildlog");
	r->testlog = per_test_file(r, "testlog");
	r->dmesg = per_test_file(r, "dmesg");
	if (krun_opt(r, KOPT_MACHINE))
		setenv("MACHINE", krun_opt(r, KOPT_MACHINE), 1);
	if (krun_opt(r, KOPT_SSH_USER))
		setenv("SSH_USER", krun_opt(r, KOPT_SSH_USER), 1);
	if (r->i == 1) {
		run_hook(r, KOPT_PRE_KTEST, krun_bool(r, KOPT_PRE_KTEST_DIE));
		if (!r->die && krun_bool(r, KOPT_EMAIL_WHEN_STARTED)) {
			char *msg = xasprintf("Your test was started on %s",
					      r->start_time);

			mail_event(r, "KTEST: Your ", " test was started",
				   msg, NULL);
			free(msg);
		}
	}
	return r->die ? -1 : 0;
}

static int checkout(struct krun *r)
{
	const char *rev = krun_opt(r, KOPT_CHECKOUT);
	struct kvcs *v;
	struct kvcs_commit cm;
	const char *note;

	if (!rev || !*rev)
		return 0;
	v = krun_vcs(r);
	if (!v)
		return -1;
	if (kvcs_resolve(v, rev, &cm) || kvcs_checkout(v, cm.id, false)) {
		krun_print(r, "ktest: CHECKOUT %s: %s\n", rev, kvcs_error(v));
		return -1;
	}
	if ((note = kvcs_note(v)))
		krun_print(r, "ktest: %s\n", note);
	krun_print(r, "Checked out %s (%.12s %s)\n", rev, cm.id, cm.subject);
	kvcs_commit_clear(&cm);
	return 0;
}

/* build, install, boot and test: one step at the level the type names */
static int run_build(struct krun *r, enum kstep_level level)
{
	struct kstep_opts o = { .kind = "build", .level = level,
				.left = -1, .steps_left = -1,
				.check_warnings = true, .settle_ms = -1 };
	struct kstep_result res;
	const char *test = krun_opt(r, KOPT_TEST);

	if (level == KSTEP_TEST && (!test || !*test))
		o.level = KSTEP_BOOT;	/* ktest.pl: test without TEST is boot */
	o.kind = level == KSTEP_BUILD ? "build" : level == KSTEP_INSTALL ?
		"install" : level == KSTEP_BOOT ? "boot" : "test";

	/* INFRA retried (INFRA_RETRIES); once they are spent, the test fails */
	if (krun_step_retry(r, &o, o.kind, &res)) {
		int ret;

		if (!r->infra || res.verdict != KV_INFRA)
			return -1;
		ret = krun_fail(r, "%s", res.why);
		r->t->verdict = KV_INFRA;	/* not journalled: a rerun retries */
		return ret;
	}
	/*
	 * ktest.pl's fail() and success(): the box back to its good kernel
	 * after a failure the run goes on from, and before the next test.
	 */
	if (o.level >= KSTEP_BOOT && !res.resumed &&
	    (res.verdict != KV_GOOD ? !krun_bool(r, KOPT_DIE_ON_FAILURE) :
	     r->i < r->c->num_tests))
		krun_lab_settle(r, krun_int(r, KOPT_SLEEP_TIME, 60) * 1000);
	if (res.verdict == KV_GOOD)
		return krun_success(r);
	return krun_fail(r, "%s", res.why);
}

static int run_warnings_file(struct krun *r)
{
	const char *wf = krun_opt(r, KOPT_WARNINGS_FILE);
	const char *bt = krun_opt(r, KOPT_BUILD_TYPE);
	struct kstep_opts o = { .kind = "make_warnings_file",
				.left = -1, .steps_left = -1,
				.level = KSTEP_BUILD, .settle_ms = -1 };
	struct kstep_result res;

	if (!wf || !*wf) {
		krun_print(r, "ktest: make_warnings_file needs WARNINGS_FILE (test %d)\n",
			   r->i);
		r->die = true;
		return -1;
	}
	if (bt && !strcmp(bt, "nobuild")) {
		krun_print(r, "ktest: make_warnings_file needs a build: BUILD_TYPE is nobuild (test %d)\n",
			   r->i);
		r->die = true;
		return -1;
	}
	if (krun_step(r, &o, &res))
		return -1;
	if (res.verdict != KV_GOOD)
		return krun_fail(r, "%s", res.why);
	if (krun_write_warnings(r, wf))
		return krun_fail(r, "cannot write WARNINGS_FILE %s", wf);
	krun_print(r, "Wrote the build's warnings to %s\n", wf);
	return krun_success(r);
}

static int run_install(struct krun *r) { return run_build(r, KSTEP_INSTALL); }
static int run_boot(struct krun *r) { return run_build(r, KSTEP_BOOT); }
static int run_testtype(struct krun *r) { return run_build(r, KSTEP_TEST); }
static int run_buildtype(struct krun *r) { return run_build(r, KSTEP_BUILD); }

/* Every test type (the config reader accepts no other). */
static const struct {
	const char *type;
	int (*run)(struct krun *r);
} runners[] = {
	{ "build", run_buildtype }, { "install", run_install },
	{ "boot", run_boot }, { "test", run_testtype },
	{ "make_warnings_file", run_warnings_file },
	{ "bisect", krun_bisect }, { "patchcheck", krun_patchcheck },
	{ "config_bisect", krun_config_bisect },
	{ "make_min_config", krun_min_config },
};

static int (*runner_of(const char *type))(struct krun *r)
{
	for (size_t k = 0; k < sizeof(runners) / sizeof(*runners); k++)
		if (!strcmp(type, runners[k].type))
			return runners[k].run;
	return NULL;
}

/* a flaky bisect's confidence and runs, as the journal kept them */
static void flaky_of(struct ktest_report *t, const struct kjrec *done)
{
	const char *c = kjrec_get(done, "confidence");
	const char *n = kjrec_get(done, "runs");
	char *end1 = NULL, *end2 = NULL;
	double conf;
	long runs;

	if (!c || !n)
		return;
	conf = strtod(c, &end1);
	runs = strtol(n, &end2, 10);
	if (*end1 || *end2 || !(conf >= 0 && conf <= 1) || runs < 0)
		return;
	t->flaky = true;
	t->confidence = conf;
	t->runs = runs;
}

static int run_test(struct krun *r, bool dry)
{
	char *sub, label[256];
	const char *type, *name;
	const struct kjrec *done;
	int (*run)(struct krun *r);
	char idx[16], conf[32], runs[32];
	int ret;

	forget_all(r);
	type = krun_opt(r, KOPT_TEST_TYPE);
	name = krun_opt(r, KOPT_TEST_NAME);
	if (!type)
		return -1;
	sub = subtype(r->c, r->i, type);
	test_label(r, label, sizeof(label));
	r->log_start = log_size(r);
	krun_print(r, "\n\n%s TEST %d of %d%s%s%s with option %s %s\n\n",
		   dry ? "WOULD RUN" : "RUNNING", r->i, r->c->num_tests,
		   name ? " (" : "", name ? name : "", name ? ")" : "", type, sub);
	if (dry) {
		free(sub);
		return 0;
	}
	r->t = kresults_test(&r->report, r->i, name, type, sub);
	free(sub);
	snprintf(idx, sizeof(idx), "%d", r->i);
	done = kjournal_find(&r->j, "ev", "test", "test", idx, NULL);
	if (done) {
		r->t->verdict = kverdict_parse(kjrec_get(done, "verdict"));
		kresults_set(&r->t->why, kjrec_get(done, "why"));
		kresults_set(&r->t->result_commit, kjrec_get(done, "commit"));
		kresults_set(&r->t->result_subject, kjrec_get(done, "subject"));
		kresults_set(&r->t->result_options, kjrec_get(done, "options"));
		flaky_of(r->t, done);
		krun_print(r, "%s finished in the earlier run: %s%s%s\n", label,
			   kverdict_name(r->t->verdict), r->t->why ? ": " : "",
			   r->t->why ? r->t->why : "");
		if (r->t->verdict == KV_GOOD)
			r->successes++;
		else
			r->failures++;
		return 0;
	}
	run = runner_of(type);
	if (!run) {
		/* the config reader accepts only the types of the table */
		fprintf(stderr, "ktest: internal error: no runner for TEST_TYPE %s\n",
			type);
		return -2;
	}
	if (prologue(r))
		return -1;
	run_hook(r, KOPT_PRE_TEST, krun_bool(r, KOPT_PRE_TEST_DIE));
	if (r->die || checkout(r))
		return -1;
	kcidb_facts(r);
	if (krun_bool(r, KOPT_REBOOT_ON_SUCCESS))
		r->reboot_success = true;
	ret = run(r);
	krun_lab_close(r);
	run_hook(r, KOPT_POST_TEST, false);
	write_report(r);
	if (ret < 0 || r->interrupted)
		return -1;
	/* the lab failed it: the run stops, and its rerun runs it again */
	if (r->t->verdict == KV_INFRA)
		return 0;
	if (r->t->flaky) {
		snprintf(conf, sizeof(conf), "%.6f", r->t->confidence);
		snprintf(runs, sizeof(runs), "%ld", r->t->runs);
	}
	if (kjournal_append(&r->j, "ev", "test", "test", idx,
			    "verdict", kverdict_name(r->t->verdict),
			    "why", r->t->why, "commit", r->t->result_commit,
			    "subject", r->t->result_subject,
			    "options", r->t->result_options,
			    "confidence", r->t->flaky ? conf : NULL,
			    "runs", r->t->flaky ? runs : NULL, NULL)) {
		krun_print(r, "ktest: cannot write %s: %s\n", r->j.path,
			   strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The first bisect or patchcheck of the run, when it is not test 1, would
 * refuse BUILD_DIR's local changes when it starts (krun_check_tree): they
 * are refused before the tests ahead of it take the night. Not on a
 * resumed run: its tree is where its steps left it.
 */
static int check_trees_early(struct krun *r)
{
	int ret = 0;

	if (kjournal_find(&r->j, "ev", "step", NULL))
		return 0;
	for (r->i = 1; r->i <= r->c->num_tests; r->i++) {
		const char *type;

		forget_all(r);	/* options are resolved per test */
		type = krun_opt(r, KOPT_TEST_TYPE);
		if (!type || (strcmp(type, "bisect") && strcmp(type, "patchcheck")))
			continue;
		if (r->i == 1)
			break;		/* its own check comes at once */
		/* quiet: a BUILD_DIR that cannot be opened fails the test */
		if (open_vcs(r, true))
			ret = krun_check_tree(r, r->vcs);
		if (ret)
			krun_print(r, "ktest: checked before test 1: nothing has run\n");
		break;
	}
	forget_all(r);
	r->i = -1;
	return ret;
}

/*
 * ktest.pl's dodie, after the test: the box rebooted to good or powered
 * off, and the failure mailed with the test's part of LOG_FILE.
 */
static void critical_box(struct krun *r, const char *box, void *ctx)
{
	const char *po = krun_opt(r, KOPT_POWER_OFF);

	(void)ctx;
	if (krun_bool(r, KOPT_REBOOT_ON_ERROR) && !build_only(r)) {
		krun_print(r, box ? "REBOOTING box %s\n" : "REBOOTING\n", box);
		krun_lab_power(r, KRUN_TO_GOOD);
	} else if (krun_bool(r, KOPT_POWEROFF_ON_ERROR) && po && *po) {
		krun_print(r, box ? "POWERING OFF box %s\n" : "POWERING OFF\n",
			   box);
		krun_lab_power(r, KRUN_POWER_OFF);
	}
}

static void critical(struct krun *r)
{
	kpool_each_box(r, critical_box, NULL);	/* BOXES: each box */
	if (r->log_path)
		krun_print(r, " See %s for more info.\n", r->log_path);
	if (krun_bool(r, KOPT_EMAIL_ON_ERROR)) {
		const char *why = r->t && r->t->why ? r->t->why :
			"the run could not go on";
		char *log = stage_log(r);
		char *msg = xasprintf("Your test started at %s has failed with:\n%s\n",
				      r->start_time, why);
		char *subject = xasprintf("KTEST: critical failure for test %d ",
					  r->i);

		mail_event(r, subject, "", msg, log);
		free(subject);
		free(msg);
		free(log);
	}
}

/* ktest.pl's cancel_test (SIGINT) */
static void cancelled(struct krun *r)
{
	char *msg;

	if (r->i < 1 || r->i > r->c->num_tests ||
	    !krun_bool(r, KOPT_EMAIL_WHEN_CANCELED))
		return;
	msg = xasprintf("Your test started at %s was cancelled: sig int",
			r->start_time);
	mail_event(r, "KTEST: Your ", " test was cancelled", msg, NULL);
	free(msg);
}

/*
 * After the last test: the box halted, or back to its good kernel (with
 * BOXES, each box).
 */
static void end_box(struct krun *r, const char *box, void *ctx)
{
	const char *stg = krun_opt(r, KOPT_SWITCH_TO_GOOD);

	(void)ctx;
	if (krun_bool(r, KOPT_POWEROFF_ON_SUCCESS)) {
		if (box)
			krun_print(r, "Halting box %s (POWEROFF_ON_SUCCESS)\n", box);
		else
			krun_print(r, "Halting the box (POWEROFF_ON_SUCCESS)\n");
		krun_lab_power(r, KRUN_HALT);
	} else if (krun_bool(r, KOPT_REBOOT_ON_SUCCESS) && !build_only(r) &&
		   r->reboot_success) {
		if (box)
			krun_print(r, "Box %s back to its good kernel (REBOOT_ON_SUCCESS)\n",
				   box);
		krun_lab_power(r, KRUN_TO_GOOD);
	} else if (stg && *stg) {
		run_hook(r, KOPT_SWITCH_TO_GOOD, false);
	}
}

static void end_action(struct krun *r)
{
	kpool_each_box(r, end_box, NULL);
}

/* all_done: every test ran, none stopped the run */
static void finish(struct krun *r, bool completed, bool all_done)
{
	r->i = r->c->num_tests;
	forget_all(r);
	run_hook(r, KOPT_POST_KTEST, false);
	if (all_done)
		end_action(r);
	kresults_finish(&r->report);
	write_report(r);
	if (completed && kjournal_append(&r->j, "ev", "end", NULL))
		krun_print(r, "ktest: cannot write %s: %s\n", r->j.path,
			   strerror(errno));
	krun_print(r, "\n    %d of %d tests were successful\n\n", r->successes,
		   r->c->num_tests);
	if (all_done && krun_bool(r, KOPT_EMAIL_WHEN_FINISHED)) {
		char *msg = xasprintf("%d of %d tests started at %s were successful!",
				      r->successes, r->c->num_tests,
				      r->start_time);

		send_mail(r, "KTEST: Your test has finished!", msg, NULL);
		free(msg);
	}
	krun_print(r, "The report is in %s\n", r->report_path);
	if (r->log_path)
		krun_print(r, "See %s for the record of results.\n\n", r->log_path);
}

static void krun_free(struct krun *r)
{
	krun_lab_close(r);
	forget_all(r);
	if (r->vcs)
		kvcs_close(r->vcs);
	kjournal_close(&r->j);
	kresults_free(&r->report);
	if (r->log)
		fclose(r->log);
	free(r->log_path);
	free(r->state_dir);
	free(r->report_path);
	free(r->buildlog);
	free(r->testlog);
	free(r->dmesg);
}

/*
 * With MAILTO set, the mailer must be there before anything runs, not
 * found missing when the first mail is due (ktest.pl died then).
 */
static int check_mail(struct krun *r)
{
	struct kmail_opts o;
	char why[1024];
	int ret = 0;

	r->i = 1;
	mail_opts(r, &o);
	if (o.mailto && *o.mailto && kmail_check(&o, NULL, why, sizeof(why))) {
		krun_print(r, "ktest: %s\n", why);
		ret = -1;
	}
	forget_all(r);
	r->i = -1;
	return ret;
}

static int run_config(struct kcli *cli)
{
	struct kconfig c;
	struct krun r;
	int ret = kload(cli, &c, KLOAD_CHECKED);
	const char *origin;
	char *abs;

	if (ret) {
		kconfig_free(&c);
		return ret;
	}
	memset(&r, 0, sizeof(r));
	r.c = &c;
	r.config_path = cli->config;
	r.json_path = cli->json;
	r.kcidb_path = cli->kcidb;
	r.tty = isatty(STDOUT_FILENO);
	r.run_t0 = kclock_ms();
	r.j.fd = -1;
	if (cli->dry_run) {
		printf("\n\nSTARTING AUTOMATED TESTS (dry run)\n\n");
		for (r.i = 1; r.i <= c.num_tests && !ret; r.i++)
			ret = run_test(&r, true) ? KEXIT_USAGE : 0;
		if (!ret)
			printf("\n%d test%s would run; nothing was touched.\n",
			       c.num_tests, c.num_tests == 1 ? "" : "s");
		krun_free(&r);
		kconfig_free(&c);
		return ret;
	}
	abs = realpath(cli->config, NULL);
	kresults_init(&r.report, abs ? abs : cli->config);
	free(abs);
	r.i = -1;
	/* no stored default: ktest dump stays ktest.pl's */
	origin = krun_opt(&r, KOPT_KCIDB_ORIGIN);
	if (!origin)
		origin = "ktest";
	if (!kcidb_origin_ok(origin)) {
		fprintf(stderr, "ktest: %s: KCIDB_ORIGIN = '%s' is no KCIDB origin: use lower-case letters, digits and _ only (ids are ORIGIN:...)\n",
			cli->config, origin ? origin : "");
		krun_free(&r);
		kconfig_free(&c);
		return KEXIT_USAGE;
	}
	r.report.origin = xstrdup(origin);
	if (open_log(&r) || (ret = check_mail(&r)) || open_state(&r, cli)) {
		krun_free(&r);
		kconfig_free(&c);
		return ret ? KEXIT_USAGE : KEXIT_INFRA;
	}
	{
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(r.start_time, sizeof(r.start_time),
			 "%a %b %e %H:%M:%S %Y", &tm);
	}
	main_pid = getpid();
	signal(SIGINT, on_sigint);
	krun_print(&r, "\n\nSTARTING AUTOMATED TESTS\n\n");
	krun_print(&r, "State directory: %s\n", r.state_dir);
	ret = check_trees_early(&r) ? -2 : 0;
	for (r.i = 1; !ret && r.i <= c.num_tests; r.i++) {
		ret = run_test(&r, false);
		if (got_sigint)
			r.interrupted = true;
		/* the lab gave out: the next tests would meet the same box */
		if (ret || r.die || r.interrupted || r.infra)
			break;
	}
	if (ret == -2) {
		finish(&r, false, false);
		ret = KEXIT_USAGE;
	} else if (r.interrupted) {
		krun_print(&r, "\nInterrupted: rerun the same command to resume.\n");
		cancelled(&r);
		finish(&r, false, false);
		ret = KEXIT_INFRA;
	} else {
		if (ret || r.die)
			critical(&r);
		finish(&r, ret == 0, !ret && !r.die);
		if (r.infra)
			ret = KEXIT_INFRA;
		else if (ret < 0 && r.config_error)
			ret = KEXIT_USAGE;
		else if (ret < 0)
			ret = r.failures ? KEXIT_FAIL : KEXIT_INFRA;
		else
			ret = r.failures ? KEXIT_FAIL : KEXIT_OK;
	}
	signal(SIGINT, SIG_DFL);
	krun_free(&r);
	kconfig_free(&c);
	return ret;
}

/* A relative path made absolute: the run chdirs to BUILD_DIR. */
static char *abs_arg(const char *path)
{
	char cwd[PATH_MAX];

	if (!path || path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return path ? xstrdup(path) : NULL;
	return xasprintf("%s/%s", cwd, path);
}

int cmd_run(struct kcli *cli)
{
	const char *json = cli->json, *kcidb = cli->kcidb;
	char *json_abs = abs_arg(json), *kcidb_abs = abs_arg(kcidb);
	int ret;

	/* --json and --kcidb name files relative to where ktest was started */
	cli->json = json_abs;
	cli->kcidb = kcidb_abs;
	ret = run_config(cli);
	cli->json = json;
	cli->kcidb = kcidb;
	free(json_abs);
	free(kcidb_abs);
	return ret;
}
