// SPDX-License-Identifier: GPL-2.0-only
/*
 * kssh against a real OpenSSH sshd on 127.0.0.1 (tests/lab/sshd.sh): the
 * group setup starts it in a scratch directory with its own keys, and the
 * teardown stops it by pid. A watchdog child stops it too if this program
 * dies before its teardown (a crash, an abort, a kill), so no sshd is left.
 *
 * Nothing here reads ~/.ssh: every test passes its own config (empty, or a
 * Host alias), known_hosts and identity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/ssh.h"

#define BIG_SIZE	(20 << 20)

struct lab {
	char dir[PATH_MAX];
	char script[PATH_MAX];
	int port;
	pid_t watchdog;
	int guard;		/* write end of the watchdog's pipe */
	const char *user;
};

static struct lab lab;

static char *path(const char *name)
{
	return xasprintf("%s/%s", lab.dir, name);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *p)
{
	struct sbuf b;
	char buf[4096];
	size_t n;
	FILE *f = fopen(p, "r");

	if (!f)
		return NULL;
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return sbuf_detach(&b);
}

/* The first line a shell command prints (for sha256sum, ssh-keygen -l). */
static char *shell_line(const char *cmd)
{
	char buf[1024] = "";
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	if (!fgets(buf, sizeof(buf), p))
		buf[0] = '\0';
	pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

static char *sha256(const char *file)
{
	char *cmd = xasprintf("sha256sum '%s'", file);
	char *line = shell_line(cmd);

	free(cmd);
	line[strcspn(line, " ")] = '\0';
	return line;
}

/* Leftover temp files ("*.ktest-XXXXXX") in a directory. */
static int temp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".ktest-"))
			n++;
	closedir(d);
	return n;
}

/* ---- the lab ---- */

static int start_watchdog(void)
{
	int fds[2];
	pid_t pid;

	/* close-on-exec: no other child (sshd above all) may hold it open */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		ssize_t n;

		close(fds[1]);
		/* EOF: the test program is gone, however it ended */
		do
			n = read(fds[0], &c, 1);
		while (n > 0 || (n < 0 && errno == EINTR));
		execl("/bin/sh", "sh", "-c",
		      "sh \"$0\" stop \"$1\" && rm -rf \"$1\"",
		      lab.script, lab.dir, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	lab.watchdog = pid;
	lab.guard = fds[1];
	return 0;
}

static int lab_setup(void **state)
{
	const char *src = getenv("KTEST_SRC");
	char *rel, *cmd, *line;
	struct passwd *pw = getpwuid(getuid());

	(void)state;
	rel = xasprintf("%s/tests/lab/sshd.sh", src ? src : ".");
	if (!realpath(rel, lab.script)) {
		fprintf(stderr, "test_ssh: %s: %s (run from the top of "
			"the tree or set KTEST_SRC)\n", rel, strerror(errno));
		free(rel);
		return -1;
	}
	free(rel);
	snprintf(lab.dir, sizeof(lab.dir), "%s/ktest-ssh.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(lab.dir) || !pw) {
		fprintf(stderr, "test_ssh: %s: %s\n", lab.dir, strerror(errno));
		return -1;
	}
	lab.user = xstrdup(pw->pw_name);
	/* The watchdog first: it also cleans up after a failed start. */
	if (start_watchdog() < 0)
		return -1;
	cmd = xasprintf("sh '%s' start '%s'", lab.script, lab.dir);
	line = shell_line(cmd);
	free(cmd);
	lab.port = atoi(line);
	free(line);
	if (lab.port <= 0) {
		fprintf(stderr, "test_ssh: the lab sshd did not start "
			"(is openssh-server installed? make deps)\n");
		return -1;
	}
	/* No agent: what is tried must be exactly what the test gives. */
	unsetenv("SSH_AUTH_SOCK");
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int lab_teardown(void **state)
{
	char *cmd = xasprintf("sh '%s' stop '%s'", lab.script, lab.dir);
	int rc = system(cmd);

	(void)state;
	free(cmd);
	close(lab.guard);	/* the watchdog removes the directory */
	waitpid(lab.watchdog, NULL, 0);
	free((char *)lab.user);
	return rc == 0 ? 0 : -1;
}

/* Options that reach the lab with the good key and known host. */
static struct kssh_opts good_opts(void)
{
	static char id[PATH_MAX + 16], config[PATH_MAX + 16], kh[PATH_MAX + 16];
	struct kssh_opts o = {
		.host = "127.0.0.1",
		.port = lab.port,
		.user = lab.user,
		.identity = id,
		.config = config,
		.known_hosts = kh,
		.hostkeys = KSSH_STRICT,
		.connect_timeout_ms = 10000,
	};

	snprintf(id, sizeof(id), "%s/id_ed25519", lab.dir);
	snprintf(config, sizeof(config), "%s/ssh_config", lab.dir);
	snprintf(kh, sizeof(kh), "%s/known_hosts", lab.dir);
	return o;
}

static struct kssh *connect_ok(const struct kssh_opts *o)
{
	enum kssh_fail fail = KSSH_OTHER;
	char why[2048];
	struct kssh *s = kssh_connect(o, &fail, why, sizeof(why));

	if (!s)
		fail_msg("connect: %s", why);
	assert_int_equal(fail, KSSH_OK);
	return s;
}

static void connect_fails(const struct kssh_opts *o, enum kssh_fail want,
			  char *why, size_t len)
{
	enum kssh_fail fail = KSSH_OK;
	struct kssh *s = kssh_connect(o, &fail, why, len);

	if (s) {
		kssh_close(s);
		fail_msg("connected, wanted failure %d", want);
	}
	if (fail != want)
		fail_msg("failure %d, wanted %d: %s", fail, want, why);
}

/* ---- commands ---- */

struct lines {
	struct sbuf all;	/* every line, each ended by '\n' */
	int n;
};

static void collect(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	sbuf_addn(&l->all, line, len);
	sbuf_addc(&l->all, '\n');
	l->n++;
}

static void test_exec_lines_and_status(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	struct lines l = { .n = 0 };
	int status = 99;

	(void)state;
	sbuf_init(&l.all);
	assert_int_equal(kssh_exec(s, "echo hi; echo err >&2; exit 3", 10000,
				   collect, &l, &status), 0);
	assert_int_equal(status, 3);
	assert_int_equal(l.n, 2);
	/* the two streams may come in either order */
	assert_non_null(strstr(sbuf_str(&l.all), "hi\n"));
	assert_non_null(strstr(sbuf_str(&l.all), "err\n"));

	/* the same session runs the next command; 0 is 0 */
	sbuf_reset(&l.all);
	l.n = 0;
	assert_int_equal(kssh_exec(s, "printf 'a\\nb'; true", 10000, collect,
				   &l, &status), 0);
	assert_int_equal(status, 0);
	assert_string_equal(sbuf_str(&l.all), "a\nb\n");

	/* stdin is at EOF: a command that reads it does not hang */
	sbuf_reset(&l.all);
	assert_int_equal(kssh_exec(s, "cat; echo read all", 5000, collect,
				   &l, &status), 0);
	assert_int_equal(status, 0);
	assert_string_equal(sbuf_str(&l.all), "read all\n");
	sbuf_free(&l.all);
	kssh_close(s);
}

static void test_exec_much_output(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	struct lines l = { .n = 0 };
	int status = 99;
	const char *end;

	(void)state;
	sbuf_init(&l.all);
	/* ~1.3 MB: far more than one channel window */
	assert_int_equal(kssh_exec(s, "seq 1 200000; seq 1 1000 >&2", 30000,
				   collect, &l, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(l.n, 201000);
	end = sbuf_str(&l.all) + l.all.len - strlen("200000\n");
	assert_true(strstr(sbuf_str(&l.all), "199999\n200000\n") != NULL ||
		    !strcmp(end, "200000\n"));
	/* no output consumer at all is fine too */
	assert_int_equal(kssh_exec(s, "seq 1 1000", 10000, NULL, NULL,
				   &status), 0);
	assert_int_equal(status, 0);
	sbuf_free(&l.all);
	kssh_close(s);
}

static void test_exec_signal(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	int status = 99;

	(void)state;
	assert_int_equal(kssh_exec(s, "kill -9 $$", 10000, NULL, NULL,
				   &status), 0);
	assert_int_equal(status, -1);
	if (!strstr(kssh_error(s), "killed by SIGKILL"))
		fail_msg("error: %s", kssh_error(s));
	/* and an ordinary exit afterwards is not mistaken for one */
	assert_int_equal(kssh_exec(s, "exit 0", 10000, NULL, NULL, &status), 0);
	assert_int_equal(status, 0);
	kssh_close(s);
}

/* Is a process whose command line holds marker running here? (kill it) */
static bool process_with(const char *marker, bool kill_it)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		char p[300], buf[4096];
		ssize_t n, i;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/cmdline", e->d_name);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = '\0';
		found = strstr(buf, marker) != NULL;
		if (found && kill_it) {
			kill(atoi(e->d_name), SIGKILL);
			found = false;
		}
	}
	closedir(d);
	return found;
}

static void test_exec_timeout(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	struct lines l = { .n = 0 };
	int status = 99, i;
	long t0;
	char marker[64], *cmd;

	(void)state;
	snprintf(marker, sizeof(marker), "ktest-timeout-%d", (int)getpid());
	cmd = xasprintf("echo started; sleep 100; : %s", marker);

	/*
	 * 3 s: on a loaded machine (make check runs kernel builds beside
	 * this), sshd took over 1 s to start the command, and the timeout
	 * came before "started"
	 */
	sbuf_init(&l.all);
	t0 = now_ms();
	assert_int_equal(kssh_exec(s, cmd, 3000, collect, &l, &status), -1);
	assert_true(now_ms() - t0 < 6000);
	assert_int_equal(status, -1);
	assert_string_equal(sbuf_str(&l.all), "started\n");
	if (!strstr(kssh_error(s), "timed out after 3000 ms"))
		fail_msg("error: %s", kssh_error(s));

	/* the session goes on: no reconnect needed */
	sbuf_reset(&l.all);
	assert_int_equal(kssh_exec(s, "echo ok", 10000, collect, &l,
				   &status), 0);
	assert_int_equal(status, 0);
	assert_string_equal(sbuf_str(&l.all), "ok\n");

	/*
	 * The box was asked to kill it. OpenSSH refuses that for root
	 * logins (no privilege separation after auth): then the command is
	 * still there, and the test cleans up its own box.
	 */
	if (getuid() != 0) {
		for (i = 0; i < 100 && process_with(marker, false); i++)
			usleep(20000);
		assert_false(process_with(marker, false));
	}
	process_with(marker, true);
	free(cmd);
	sbuf_free(&l.all);
	kssh_close(s);
}

static void test_exec_connection_lost(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	int status = 99;
	long t0 = now_ms();

	(void)state;
	/* the command's parent is the sshd process of this connection */
	assert_int_equal(kssh_exec(s, "kill -9 $PPID; sleep 30", 20000, NULL,
				   NULL, &status), -1);
	/* at once, not at the 20 s timeout (room for a loaded machine) */
	assert_true(now_ms() - t0 < 10000);
	assert_int_equal(status, -1);
	if (!strstr(kssh_error(s), "connection lost"))
		fail_msg("error: %s", kssh_error(s));
	assert_int_equal(kssh_exec(s, "true", 1000, NULL, NULL, &status), -1);
	if (!strstr(kssh_error(s), "connect again"))
		fail_msg("error: %s", kssh_error(s));
	kssh_close(s);
}

/* ---- connecting ---- */

static void test_host_alias(void **state)
{
	struct kssh_opts o = good_opts();
	char *cfg = path("alias_config");
	char *text = xasprintf("Host box\n HostName 127.0.0.1\n Port %d\n"
			       " User %s\n", lab.port, lab.user);
	struct lines l = { .n = 0 };
	struct kssh *s;
	int status = 99;

	(void)state;
	write_file(cfg, text);
	o.host = "box";
	o.port = 0;
	o.user = NULL;
	o.config = cfg;
	s = connect_ok(&o);
	sbuf_init(&l.all);
	assert_int_equal(kssh_exec(s, "echo alias", 10000, collect, &l,
				   &status), 0);
	assert_string_equal(sbuf_str(&l.all), "alias\n");
	sbuf_free(&l.all);
	kssh_close(s);
	free(text);
	free(cfg);
}

static void test_hostkey_unknown(void **state)
{
	struct kssh_opts o = good_opts();
	char *kh = path("kh_empty");
	char *cmd = xasprintf("ssh-keygen -lf '%s/host_ed25519.pub'", lab.dir);
	char *fp_line = shell_line(cmd);
	char why[2048], want[128], *fp;

	(void)state;
	/* ssh-keygen -l says "256 SHA256:... comment (ED25519)" */
	fp = strchr(fp_line, ' ');
	assert_non_null(fp);
	fp++;
	fp[strcspn(fp, " ")] = '\0';
	assert_true(!strncmp(fp, "SHA256:", 7));

	write_file(kh, "");
	o.known_hosts = kh;
	connect_fails(&o, KSSH_HOSTKEY_UNKNOWN, why, sizeof(why));
	if (!strstr(why, fp))
		fail_msg("no fingerprint %s in: %s", fp, why);
	snprintf(want, sizeof(want),
		 "ssh-keyscan -p %d -t ed25519 127.0.0.1 >> ", lab.port);
	if (!strstr(why, want) || !strstr(why, kh))
		fail_msg("no way to accept it in: %s", why);
	/* nothing was added */
	free(cmd);
	cmd = read_file(kh);
	assert_string_equal(cmd, "");

	/* a known_hosts file that does not exist: the same answer */
	free(kh);
	kh = path("kh_missing");
	o.known_hosts = kh;
	connect_fails(&o, KSSH_HOSTKEY_UNKNOWN, why, sizeof(why));
	assert_int_equal(access(kh, F_OK), -1);
	free(kh);
	free(cmd);
	free(fp_line);
}

/* A user's "StrictHostKeyChecking no" does not make an unknown key good. */
static void test_hostkey_unknown_despite_config(void **state)
{
	struct kssh_opts o = good_opts();
	char *kh = path("kh_empty2");
	char *cfg = path("nostrict_config");
	char why[2048];

	(void)state;
	write_file(kh, "");
	write_file(cfg, "Host *\n StrictHostKeyChecking no\n");
	o.known_hosts = kh;
	o.config = cfg;
	connect_fails(&o, KSSH_HOSTKEY_UNKNOWN, why, sizeof(why));
	free(kh);
	free(cfg);
}

static void test_hostkey_changed(void **state)
{
	struct kssh_opts o = good_opts();
	char *kh = path("kh_changed");
	char *other = path("other_host.pub");
	char *key = read_file(other);
	char *text, *key2, why[2048], want[128];

	(void)state;
	assert_non_null(key);
	key[strcspn(key, "\n")] = '\0';
	/* "type base64 comment": keep type and key */
	*strchr(strchr(key, ' ') + 1, ' ') = '\0';
	text = xasprintf("# a comment\n[127.0.0.1]:%d %s\n", lab.port, key);
	write_file(kh, text);
	o.known_hosts = kh;
	connect_fails(&o, KSSH_HOSTKEY_CHANGED, why, sizeof(why));
	if (!strstr(why, "SHA256:") || !strstr(why, "(line 2)"))
		fail_msg("why: %s", why);
	snprintf(want, sizeof(want), "ssh-keygen -R '[127.0.0.1]:%d' -f %s",
		 lab.port, kh);
	if (!strstr(why, want))
		fail_msg("no way to remove the old key in: %s", why);

	/* accept-new does not accept a changed key */
	o.hostkeys = KSSH_ACCEPT_NEW;
	connect_fails(&o, KSSH_HOSTKEY_CHANGED, why, sizeof(why));
	key2 = read_file(kh);
	assert_string_equal(key2, text);	/* nothing added */
	free(key2);
	free(text);
	free(key);
	free(other);
	free(kh);
}

static void test_hostkey_accept_new(void **state)
{
	struct kssh_opts o = good_opts();
	char *kh = path("kh_new");
	char *text, want[64];
	struct kssh *s;
	int status = 99;

	(void)state;
	unlink(kh);
	o.known_hosts = kh;
	o.hostkeys = KSSH_ACCEPT_NEW;
	s = connect_ok(&o);
	assert_int_equal(kssh_exec(s, "true", 10000, NULL, NULL, &status), 0);
	kssh_close(s);
	text = read_file(kh);
	assert_non_null(text);
	snprintf(want, sizeof(want), "[127.0.0.1]:%d ssh-ed25519 ", lab.port);
	if (!strstr(text, want))
		fail_msg("known_hosts: %s", text);
	free(text);

	/* and from now on it is simply known */
	o.hostkeys = KSSH_STRICT;
	s = connect_ok(&o);
	kssh_close(s);
	free(kh);
}

static void test_refused(void **state)
{
	struct kssh_opts o = good_opts();
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char why[2048], want[64];
	long t0;
	int fd;

	(void)state;
	/* a port that was free a moment ago: nothing listens on it */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	o.port = ntohs(a.sin_port);
	t0 = now_ms();
	connect_fails(&o, KSSH_UNREACHABLE, why, sizeof(why));
	assert_true(now_ms() - t0 < 2000);
	snprintf(want, sizeof(want), "127.0.0.1 port %d", o.port);
	if (!strstr(why, want))
		fail_msg("why: %s", why);
}

/* A port that takes the connection and says nothing: CONNECT_TIMEOUT. */
static void test_silent(void **state)
{
	struct kssh_opts o = good_opts();
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char why[2048];
	long t0, took;
	int fd;

	(void)state;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);	/* the kernel accepts */
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	o.port = ntohs(a.sin_port);
	o.connect_timeout_ms = 500;
	t0 = now_ms();
	connect_fails(&o, KSSH_UNREACHABLE, why, sizeof(why));
	took = now_ms() - t0;
	close(fd);
	if (took < 400 || took > 3000)
		fail_msg("took %ld ms: %s", took, why);
	if (!strstr(why, "no answer in 500 ms"))
		fail_msg("why: %s", why);
}

static void test_auth_wrong_user(void **state)
{
	struct kssh_opts o = good_opts();
	char why[2048];

	(void)state;
	o.user = "nosuchuser";
	connect_fails(&o, KSSH_AUTH, why, sizeof(why));
	if (!strstr(why, "nosuchuser@127.0.0.1") || !strstr(why, o.identity))
		fail_msg("why: %s", why);
}

static void test_auth_wrong_key(void **state)
{
	struct kssh_opts o = good_opts();
	char *wrong = path("wrong_ed25519");
	char why[2048], want[128];

	(void)state;
	o.identity = wrong;
	connect_fails(&o, KSSH_AUTH, why, sizeof(why));
	snprintf(want, sizeof(want), "%s@127.0.0.1", lab.user);
	if (!strstr(why, want) || !strstr(why, wrong))
		fail_msg("why: %s", why);
	free(wrong);
}

/* ---- uploads ---- */

/*
 * Watches the target from this side while an upload runs: whenever it
 * exists, it must be the old file or the whole new one, never a part.
 */
struct watch {
	const char *dir, *target;
	off_t old_size, new_size;
	volatile bool stop;
	bool saw_temp, saw_partial;
	long looks;
};

static void *watcher(void *arg)
{
	struct watch *w = arg;
	struct stat st;

	while (!w->stop) {
		if (stat(w->target, &st) == 0 && st.st_size != w->old_size &&
		    st.st_size != w->new_size)
			w->saw_partial = true;
		if (!w->saw_temp && temp_files(w->dir))
			w->saw_temp = true;
		w->looks++;
		usleep(500);
	}
	return NULL;
}

static void make_random(const char *p, size_t size)
{
	char *cmd = xasprintf("head -c %zu /dev/urandom > '%s'", size, p);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void upload_watched(struct kssh *s, const char *local,
			   const char *dir, const char *target, off_t old_size,
			   off_t new_size, double *secs)
{
	struct watch w = {
		.dir = dir, .target = target,
		.old_size = old_size, .new_size = new_size,
	};
	pthread_t t;
	long t0;

	assert_int_equal(pthread_create(&t, NULL, watcher, &w), 0);
	t0 = now_ms();
	if (kssh_upload(s, local, target, 0644) != 0)
		fail_msg("upload: %s", kssh_error(s));
	*secs = (now_ms() - t0) / 1000.0;
	w.stop = true;
	pthread_join(t, NULL);
	assert_false(w.saw_partial);
	assert_true(w.saw_temp);
}

static void test_upload_big(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	char *local = path("big.local");
	char *dir = path("up");
	char *target = path("up/big.img");
	char *a, *b;
	struct stat st;
	double secs;

	(void)state;
	make_random(local, BIG_SIZE);
	assert_int_equal(mkdir(dir, 0755), 0);
	upload_watched(s, local, dir, target, -1, BIG_SIZE, &secs);
	print_message("upload of 20 MiB over loopback: %.2f s, %.0f MiB/s\n",
		      secs, 20 / (secs > 0 ? secs : 0.001));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, BIG_SIZE);
	assert_int_equal(st.st_mode & 07777, 0644);
	a = sha256(local);
	b = sha256(target);
	assert_int_equal(strlen(a), 64);
	assert_string_equal(a, b);
	assert_int_equal(temp_files(dir), 0);
	free(a);
	free(b);
	free(local);
	free(dir);
	free(target);
	kssh_close(s);
}

static void test_upload_replaces(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	char *local = path("new.local");
	char *dir = path("up2");
	char *target = path("up2/image");
	char *text, *want;
	double secs;
	int i;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(target, "old contents\n");
	make_random(local, 3 << 20);
	upload_watched(s, local, dir, target, strlen("old contents\n"),
		       3 << 20, &secs);
	text = sha256(target);
	want = sha256(local);
	assert_string_equal(text, want);
	free(text);
	free(want);
	free(local);

	/* again and again over itself, small files this time */
	local = path("small.local");
	for (i = 0; i < 3; i++) {
		want = xasprintf("version %d\n", i);

		write_file(local, want);
		if (kssh_upload(s, local, target, 0644) != 0)
			fail_msg("upload: %s", kssh_error(s));
		text = read_file(target);
		assert_string_equal(text, want);
		free(text);
		free(want);
	}
	assert_int_equal(temp_files(dir), 0);
	free(local);
	free(dir);
	free(target);
	kssh_close(s);
}

static void test_upload_mode(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	char *local = path("script.local");
	char *target = path("script");
	struct stat st;

	(void)state;
	/* sshd's umask (022) would turn 0777 into 0755 if the mode were
	 * given at open time only */
	write_file(local, "#!/bin/sh\necho ran\n");
	assert_int_equal(kssh_upload(s, local, target, 0755), 0);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(kssh_upload(s, local, target, 0600), 0);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(kssh_upload(s, local, target, 0777), 0);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0777);
	free(local);
	free(target);
	kssh_close(s);
}

static void expect_upload_error(struct kssh *s, const char *local,
				const char *target, const char *what)
{
	assert_int_equal(kssh_upload(s, local, target, 0644), -1);
	if (!strstr(kssh_error(s), local) || !strstr(kssh_error(s), target) ||
	    !strstr(kssh_error(s), what))
		fail_msg("error: %s", kssh_error(s));
}

static void test_upload_failures(void **state)
{
	struct kssh_opts o = good_opts();
	struct kssh *s = connect_ok(&o);
	char *local = path("f.local");
	char *nodir = path("nodir/x");
	char *adir = path("adir");
	char *inside = path("adir/keep");
	char *missing = path("missing.local");
	char *target = path("f.target");
	int status = 99;

	(void)state;
	write_file(local, "data\n");

	/* the remote directory does not exist */
	expect_upload_error(s, local, nodir, "no such file");

	/* the target is a directory: written, then the rename fails */
	assert_int_equal(mkdir(adir, 0755), 0);
	write_file(inside, "x");
	expect_upload_error(s, local, adir, "is a directory");
	assert_int_equal(temp_files(lab.dir), 0);

	/* the local file cannot be read after the temp file was made */
	expect_upload_error(s, adir, target, "read");
	assert_int_equal(temp_files(lab.dir), 0);
	assert_int_equal(access(target, F_OK), -1);

	/* there is no local file */
	expect_upload_error(s, missing, target, "No such file");

	/* the session is fine after all that */
	assert_int_equal(kssh_upload(s, local, target, 0644), 0);
	assert_int_equal(kssh_exec(s, "true", 10000, NULL, NULL, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(temp_files(lab.dir), 0);
	free(local);
	free(nodir);
	free(adir);
	free(inside);
	free(missing);
	free(target);
	kssh_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_lines_and_status),
		cmocka_unit_test(test_exec_much_output),
		cmocka_unit_test(test_exec_signal),
		cmocka_unit_test(test_exec_timeout),
		cmocka_unit_test(test_exec_connection_lost),
		cmocka_unit_test(test_host_alias),
		cmocka_unit_test(test_hostkey_unknown),
		cmocka_unit_test(test_hostkey_unknown_despite_config),
		cmocka_unit_test(test_hostkey_changed),
		cmocka_unit_test(test_hostkey_accept_new),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_silent),
		cmocka_unit_test(test_auth_wrong_user),
		cmocka_unit_test(test_auth_wrong_key),
		cmocka_unit_test(test_upload_big),
		cmocka_unit_test(test_upload_replaces),
		cmocka_unit_test(test_upload_mode),
		cmocka_unit_test(test_upload_failures),
	};

	return cmocka_run_group_tests(tests, lab_setup, lab_teardown);
}
