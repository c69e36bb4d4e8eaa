// SPDX-License-Identifier: GPL-2.0-only
/*
 * The test box over ssh, with libssh 0.10 (see ssh.h).
 *
 * Connecting: the ssh config (o->config, else ~/.ssh/config and
 * /etc/ssh/ssh_config) is read first, so a Host alias works, then what the
 * caller gave explicitly (port, user, identity, known_hosts) wins over it,
 * as on the ssh command line. Host keys are checked here, not by libssh:
 * a StrictHostKeyChecking=no in the user's config would make libssh answer
 * "known" for any key, so it is switched back on after the config is read
 * and o->hostkeys alone decides.
 *
 * Timeouts: libssh's SSH_OPTIONS_TIMEOUT bounds every blocking wait, and a
 * wait that runs out looks like EOF. It is CONNECT_TIMEOUT while connecting
 * and authenticating, and KSSH_STALL_MS afterwards: a box that says nothing
 * for that long during an SFTP request or a channel open is gone. Commands
 * are not run through blocking reads at all: kssh_exec polls the session
 * itself with its own deadline.
 *
 * One struct kssh is used by one thread at a time; nothing here is global
 * except libssh's own initialisation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh/libssh.h>
#include <libssh/callbacks.h>
#include <libssh/sftp.h>

#include "conf/strmap.h"
#include "ktest/ssh.h"

/* OpenSSH's sftp-server drops the session on a message over 256 KiB. */
#define KSSH_CHUNK		(255 * 1024)
#define KSSH_CONNECT_MS		25000	/* ktest.pl's CONNECT_TIMEOUT */
#define KSSH_STALL_MS		60000
/* A line longer than this is handed over in pieces. */
#define KSSH_LINE_MAX		(64 * 1024)

struct kssh {
	ssh_session ss;
	sftp_session sftp;	/* opened by the first upload */
	char *name;		/* user@host:port, for messages */
	char err[2048];
};

static pthread_once_t kssh_once = PTHREAD_ONCE_INIT;
static int kssh_init_rc;

static void kssh_init_lib(void)
{
	kssh_init_rc = ssh_init();
}

static void seterr(struct kssh *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void seterr(struct kssh *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

const char *kssh_error(const struct kssh *s)
{
	return s ? s->err : "no ssh session";
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void set_timeout(ssh_session ss, long ms)
{
	long sec = ms / 1000, usec = (ms % 1000) * 1000;

	ssh_options_set(ss, SSH_OPTIONS_TIMEOUT, &sec);
	ssh_options_set(ss, SSH_OPTIONS_TIMEOUT_USEC, &usec);
}

/* ~ as OpenSSH and libssh resolve it: the passwd entry, not $HOME. */
static char *home_dir(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res &&
	    res->pw_dir)
		return xstrdup(res->pw_dir);
	return xstrdup(getenv("HOME") ? getenv("HOME") : "~");
}

/* "[host]:port", or "host" on port 22: how known_hosts names the box. */
static char *known_hosts_name(const char *host, unsigned int port)
{
	if (port == 22)
		return xstrdup(host);
	return xasprintf("[%s]:%u", host, port);
}

static char *known_hosts_path(ssh_session ss, const struct kssh_opts *o)
{
	char *p = NULL, *home;

	if (o->known_hosts)
		return xstrdup(o->known_hosts);
	if (ssh_options_get(ss, SSH_OPTIONS_KNOWNHOSTS, &p) == SSH_OK && p) {
		char *r = xstrdup(p);

		ssh_string_free_char(p);
		return r;
	}
	home = home_dir();
	p = xasprintf("%s/.ssh/known_hosts", home);
	free(home);
	return p;
}

/* The server's key as "ssh-ed25519 SHA256:..." pieces, or "?" */
static void server_key(ssh_session ss, char *type, size_t tlen, char *fp,
		       size_t flen)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *f;

	snprintf(type, tlen, "?");
	snprintf(fp, flen, "?");
	if (ssh_get_server_publickey(ss, &key) != SSH_OK)
		return;
	snprintf(type, tlen, "%s", ssh_key_type_to_char(ssh_key_type(key)));
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
				   &hlen) == 0) {
		f = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash,
					     hlen);
		if (f) {
			snprintf(fp, flen, "%s", f);
			ssh_string_free_char(f);
		}
		ssh_clean_pubkey_hash(&hash);
	}
	ssh_key_free(key);
}

/* ssh-keyscan's -t name for a key type: "ssh-ed25519" -> "ed25519" */
static const char *keyscan_type(const char *type)
{
	if (!strncmp(type, "ssh-", 4))
		return type + 4;
	if (!strncmp(type, "ecdsa-", 6))
		return "ecdsa";
	return NULL;
}

/* Does a known_hosts host field ("a,[b]:2222,c") name this box? */
static bool names_box(char *field, const char *khname)
{
	char *save = NULL, *pat;

	for (pat = strtok_r(field, ",", &save); pat;
	     pat = strtok_r(NULL, ",", &save))
		if (!strcasecmp(pat, khname))
			return true;
	return false;
}

/*
 * The line numbers of known_hosts entries for this box ("2" or "2, 7"),
 * for the "host key changed" message: libssh 0.10 only hands out the
 * entry that matched, and here none did. Hashed names (|1|...) are not
 * matched; ssh-keygen -R, which the message also gives, finds those.
 */
static void known_hosts_lines(const char *path, const char *khname,
			      char *out, size_t len)
{
	char *line = NULL, *field;
	size_t cap = 0, used = 0;
	int lineno = 0;
	FILE *f;

	out[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		field = line + strspn(line, " \t");
		if (*field == '#' || *field == '@' || *field == '\n' || !*field)
			continue;
		field[strcspn(field, " \t\r\n")] = '\0';
		if (!names_box(field, khname) || used >= len)
			continue;
		used += snprintf(out + used, len - used, "%s%d",
				 used ? ", " : "", lineno);
	}
	fclose(f);
	free(line);
}

/* What a host key refusal tells the user: the box, the key, the fix. */
struct key_msg {
	const char *host;	/* as known_hosts and ssh-keyscan name it */
	unsigned int port;
	char *khname;		/* "[host]:port" */
	char *kh;		/* the known_hosts file */
	char type[64];		/* "ssh-ed25519" */
	char fp[128];		/* "SHA256:..." */
};

static void unknown_key_msg(const struct key_msg *m, char *why, size_t len)
{
	const char *kt = keyscan_type(m->type);
	char t[80] = "";

	if (kt)
		snprintf(t, sizeof(t), " -t %.60s", kt);
	snprintf(why, len,
		 "%s: host key not known (%s %s). If that is the box's "
		 "key (on the box: ssh-keygen -lf "
		 "/etc/ssh/ssh_host_%s_key.pub), accept it with: "
		 "ssh-keyscan -p %u%s %s >> %s",
		 m->khname, m->type, m->fp, kt ? kt : "*", m->port, t,
		 m->host, m->kh);
}

static void changed_key_msg(const struct key_msg *m, char *why, size_t len)
{
	char lines[64], at[80] = "";

	known_hosts_lines(m->kh, m->khname, lines, sizeof(lines));
	if (lines[0])
		snprintf(at, sizeof(at), " (line %s)", lines);
	snprintf(why, len,
		 "%s: HOST KEY CHANGED: the box now shows %s %s, which is "
		 "not the key %s holds for it%s. If the box was "
		 "reinstalled, remove the old key with: "
		 "ssh-keygen -R '%s' -f %s, then accept the new one "
		 "(ssh-keyscan -p %u %s >> %s, after checking its "
		 "fingerprint); otherwise someone may be in the middle",
		 m->khname, m->type, m->fp, m->kh, at, m->khname, m->kh,
		 m->port, m->host, m->kh);
}

/*
 * Decides on the server's host key by o->hostkeys. UNKNOWN and NOT_FOUND
 * (no known_hosts file yet) are the same thing to the user; so are
 * CHANGED and OTHER (known_hosts has only a key of another type).
 */
static enum kssh_fail check_host_key(ssh_session ss,
				     const struct kssh_opts *o,
				     const char *host, unsigned int port,
				     char *why, size_t whylen)
{
	enum ssh_known_hosts_e st = ssh_session_is_known_server(ss);
	enum kssh_fail ret = KSSH_OTHER;
	struct key_msg m = { .host = host, .port = port };

	if (st == SSH_KNOWN_HOSTS_OK)
		return KSSH_OK;

	server_key(ss, m.type, sizeof(m.type), m.fp, sizeof(m.fp));
	m.kh = known_hosts_path(ss, o);
	m.khname = known_hosts_name(host, port);

	switch (st) {
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (o->hostkeys != KSSH_ACCEPT_NEW) {
			unknown_key_msg(&m, why, whylen);
			ret = KSSH_HOSTKEY_UNKNOWN;
		} else if (ssh_session_update_known_hosts(ss) == SSH_OK) {
			ret = KSSH_OK;
		} else {
			snprintf(why, whylen,
				 "%s: cannot add host key (%s %s) to %s: %s",
				 m.khname, m.type, m.fp, m.kh,
				 ssh_get_error(ss));
		}
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		changed_key_msg(&m, why, whylen);
		ret = KSSH_HOSTKEY_CHANGED;
		break;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		snprintf(why, whylen, "%s: cannot check the host key in %s: %s",
			 m.khname, m.kh, ssh_get_error(ss));
		break;
	}
	free(m.kh);
	free(m.khname);
	return ret;
}

/* The keys ssh_userauth_publickey_auto offers, for the AUTH message. */
static void keys_tried(const struct kssh_opts *o, ssh_session ss,
		       struct sbuf *b)
{
	static const char *const defaults[] = {
		"id_ed25519", "id_ecdsa", "id_rsa",
	};
	char *def[sizeof(defaults) / sizeof(defaults[0])];
	const char *sep = "";
	char *first = NULL, *home = home_dir();
	size_t i, n = sizeof(def) / sizeof(def[0]);
	bool dup = false;

	for (i = 0; i < n; i++)
		def[i] = xasprintf("%s/.ssh/%s", home, defaults[i]);
	free(home);
	if (getenv("SSH_AUTH_SOCK")) {
		sbuf_adds(b, "the ssh agent");
		sep = ", ";
	}
	/* o->identity, else the config's first IdentityFile, if any */
	if (o->identity) {
		sbuf_addf(b, "%s%s", sep, o->identity);
		sep = ", ";
	} else if (ssh_options_get(ss, SSH_OPTIONS_IDENTITY, &first) ==
		   SSH_OK && first) {
		for (i = 0; i < n; i++)
			dup |= !strcmp(first, def[i]);
		if (!dup && access(first, R_OK) == 0) {
			sbuf_addf(b, "%s%s", sep, first);
			sep = ", ";
		}
		ssh_string_free_char(first);
	}
	for (i = 0; i < n; i++) {
		if (access(def[i], R_OK) == 0) {
			sbuf_addf(b, "%s%s", sep, def[i]);
			sep = ", ";
		}
		free(def[i]);
	}
	if (!*sep)
		sbuf_adds(b, "nothing: no agent, no identity file");
}

static int set_options(ssh_session ss, const struct kssh_opts *o,
		       char *why, size_t whylen)
{
	int yes = 1, no = 0;

	if (ssh_options_set(ss, SSH_OPTIONS_HOST, o->host) < 0)
		goto bad;
	/* We read the config now, so that explicit values below win. */
	ssh_options_set(ss, SSH_OPTIONS_PROCESS_CONFIG, &no);
	if (o->config && access(o->config, R_OK) != 0) {
		snprintf(why, whylen, "ssh config %s: %s", o->config,
			 strerror(errno));
		return -1;
	}
	if (ssh_options_parse_config(ss, o->config) < 0) {
		snprintf(why, whylen, "ssh config %s: %s",
			 o->config ? o->config : "~/.ssh/config",
			 ssh_get_error(ss));
		return -1;
	}
	if (o->port > 0 &&
	    ssh_options_set(ss, SSH_OPTIONS_PORT, &o->port) < 0)
		goto bad;
	if (o->user && ssh_options_set(ss, SSH_OPTIONS_USER, o->user) < 0)
		goto bad;
	if (o->identity) {
		if (access(o->identity, R_OK) != 0) {
			snprintf(why, whylen, "identity %s: %s", o->identity,
				 strerror(errno));
			return -1;
		}
		if (ssh_options_set(ss, SSH_OPTIONS_IDENTITY, o->identity) < 0)
			goto bad;
	}
	if (o->known_hosts &&
	    ssh_options_set(ss, SSH_OPTIONS_KNOWNHOSTS, o->known_hosts) < 0)
		goto bad;
	/* Whatever the config said: we check host keys ourselves. */
	ssh_options_set(ss, SSH_OPTIONS_STRICTHOSTKEYCHECK, &yes);
	/*
	 * Nagle's algorithm and delayed ACKs stall request/reply traffic:
	 * 20 MiB in 32 KiB SFTP writes took 19 s without this, 0.3 s with.
	 */
	ssh_options_set(ss, SSH_OPTIONS_NODELAY, &yes);
	set_timeout(ss, o->connect_timeout_ms > 0 ? o->connect_timeout_ms :
		    KSSH_CONNECT_MS);
	return 0;
bad:
	snprintf(why, whylen, "ssh options for %s: %s", o->host,
		 ssh_get_error(ss));
	return -1;
}

/*
 * ssh_connect failed. No banner: we never spoke to an sshd (refused, no
 * route, timed out, name not found, or it hung up at once). With a banner
 * the failure is in the protocol (no common cipher, say).
 */
static enum kssh_fail connect_failed(ssh_session ss, const char *host,
				     unsigned int port, long took,
				     long timeout, char *why, size_t whylen)
{
	char late[64] = "";

	if (ssh_get_serverbanner(ss)) {
		snprintf(why, whylen, "ssh to %s port %u failed: %s", host,
			 port, ssh_get_error(ss));
		return KSSH_OTHER;
	}
	if (took >= timeout * 9 / 10)
		snprintf(late, sizeof(late), " (no answer in %ld ms)",
			 timeout);
	snprintf(why, whylen, "cannot reach %s port %u%s: %s", host, port,
		 late, ssh_get_error(ss));
	return KSSH_UNREACHABLE;
}

static enum kssh_fail authenticate(ssh_session ss, const struct kssh_opts *o,
				   const char *who, char *why, size_t whylen)
{
	struct sbuf keys;
	int rc = ssh_userauth_publickey_auto(ss, NULL, NULL);

	if (rc == SSH_AUTH_SUCCESS)
		return KSSH_OK;
	if (rc == SSH_AUTH_ERROR) {
		snprintf(why, whylen, "%s: authentication: %s", who,
			 ssh_get_error(ss));
		return ssh_is_connected(ss) ? KSSH_OTHER : KSSH_UNREACHABLE;
	}
	sbuf_init(&keys);
	keys_tried(o, ss, &keys);
	snprintf(why, whylen, "%s: %s (tried: %s)", who,
		 rc == SSH_AUTH_PARTIAL ?
		 "a key was accepted, but the box wants more than a key" :
		 "no key was accepted", sbuf_str(&keys));
	sbuf_free(&keys);
	return KSSH_AUTH;
}

struct kssh *kssh_connect(const struct kssh_opts *o, enum kssh_fail *fail,
			  char *why, size_t whylen)
{
	enum kssh_fail f = KSSH_OTHER;
	struct kssh *s = NULL;
	ssh_session ss = NULL;
	char *host = NULL, *user = NULL, *who = NULL;
	unsigned int port = 22;
	long t0, timeout;
	char dummy[1];

	if (!why || !whylen) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	why[0] = '\0';
	if (!o || !o->host || !*o->host) {
		snprintf(why, whylen, "ssh: no host (MACHINE) given");
		goto out;
	}
	pthread_once(&kssh_once, kssh_init_lib);
	if (kssh_init_rc != SSH_OK) {
		snprintf(why, whylen, "ssh: libssh failed to initialise");
		goto out;
	}
	ss = ssh_new();
	if (!ss) {
		snprintf(why, whylen, "ssh: out of memory");
		goto out;
	}
	if (set_options(ss, o, why, whylen) < 0)
		goto out;
	/* after the config: an alias's HostName and Port */
	if (ssh_options_get(ss, SSH_OPTIONS_HOST, &host) != SSH_OK)
		host = NULL;
	if (ssh_options_get_port(ss, &port) < 0 || !port)
		port = 22;

	timeout = o->connect_timeout_ms > 0 ? o->connect_timeout_ms :
		  KSSH_CONNECT_MS;
	t0 = now_ms();
	if (ssh_connect(ss) != SSH_OK) {
		f = connect_failed(ss, host ? host : o->host, port,
				   now_ms() - t0, timeout, why, whylen);
		goto out;
	}
	f = check_host_key(ss, o, host ? host : o->host, port, why, whylen);
	if (f != KSSH_OK)
		goto out;

	if (ssh_options_get(ss, SSH_OPTIONS_USER, &user) != SSH_OK)
		user = NULL;
	who = xasprintf("%s@%s port %u", user ? user : "?",
			host ? host : o->host, port);
	f = authenticate(ss, o, who, why, whylen);
	if (f != KSSH_OK)
		goto out;

	/* From now on, waits we do not bound ourselves get the stall limit. */
	set_timeout(ss, KSSH_STALL_MS);
	s = xcalloc(1, sizeof(*s));
	s->ss = ss;
	s->name = xasprintf("%s@%s:%u", user ? user : "?",
			    host ? host : o->host, port);
	ss = NULL;
out:
	if (ss) {
		ssh_disconnect(ss);
		ssh_free(ss);
	}
	ssh_string_free_char(host);
	ssh_string_free_char(user);
	free(who);
	if (fail)
		*fail = f;
	return s;
}

void kssh_close(struct kssh *s)
{
	if (!s)
		return;
	if (s->sftp)
		sftp_free(s->sftp);
	ssh_disconnect(s->ss);
	ssh_free(s->ss);
	free(s->name);
	free(s);
}

/* ---- commands ---- */

struct exec_state {
	kcmd_line_fn on_line;
	void *ctx;
	struct sbuf part[2];	/* stdout, stderr: the unfinished line */
	bool eof, closed, got_status;
	char signal[32];	/* the signal it died of, or "" */
	bool core;
};

static void emit(struct exec_state *x, const char *p, size_t n)
{
	if (x->on_line)
		x->on_line(x->ctx, p, n);
}

/* Splits one stream's bytes into lines; the rest waits for more. */
static void take_bytes(struct exec_state *x, struct sbuf *part,
		       const char *p, size_t n)
{
	const char *nl;

	while (n) {
		nl = memchr(p, '\n', n);
		if (!nl) {
			sbuf_addn(part, p, n);
			if (part->len >= KSSH_LINE_MAX) {
				emit(x, part->buf, part->len);
				sbuf_reset(part);
			}
			return;
		}
		if (part->len) {
			sbuf_addn(part, p, nl - p);
			emit(x, part->buf, part->len);
			sbuf_reset(part);
		} else {
			emit(x, p, nl - p);
		}
		n -= nl + 1 - p;
		p = nl + 1;
	}
}

static int on_data(ssh_session ss, ssh_channel ch, void *data, uint32_t len,
		   int is_stderr, void *ud)
{
	struct exec_state *x = ud;

	(void)ss;
	(void)ch;
	take_bytes(x, &x->part[is_stderr ? 1 : 0], data, len);
	return len;
}

static void on_eof(ssh_session ss, ssh_channel ch, void *ud)
{
	(void)ss;
	(void)ch;
	((struct exec_state *)ud)->eof = true;
}

static void on_close(ssh_session ss, ssh_channel ch, void *ud)
{
	(void)ss;
	(void)ch;
	((struct exec_state *)ud)->closed = true;
}

static void on_exit_status(ssh_session ss, ssh_channel ch, int status,
			   void *ud)
{
	(void)ss;
	(void)ch;
	(void)status;
	((struct exec_state *)ud)->got_status = true;
}

/* libssh 0.10 has no ssh_channel_get_exit_signal: this callback is it. */
static void on_exit_signal(ssh_session ss, ssh_channel ch, const char *sig,
			   int core, const char *msg, const char *lang,
			   void *ud)
{
	struct exec_state *x = ud;

	(void)ss;
	(void)ch;
	(void)msg;
	(void)lang;
	snprintf(x->signal, sizeof(x->signal), "%s", sig && *sig ? sig : "?");
	x->core = core;
}

static bool session_alive(ssh_session ss)
{
	return ssh_is_connected(ss) &&
	       !(ssh_get_status(ss) & (SSH_CLOSED | SSH_CLOSED_ERROR));
}

/*
 * Waits until the command is over (its channel closed, or EOF and an exit
 * status or signal), the deadline passes, or the session breaks.
 * Returns 0, or -1 on timeout, -2 on a broken session.
 */
static int exec_wait(ssh_session ss, ssh_channel ch, struct exec_state *x,
		     long deadline)
{
	ssh_event ev = ssh_event_new();
	int ret = 0, rc, wait;
	long left;

	if (!ev || ssh_event_add_session(ev, ss) != SSH_OK) {
		ssh_event_free(ev);
		return -2;
	}
	for (;;) {
		if (x->closed || ssh_channel_is_closed(ch) ||
		    (x->eof && (x->got_status || x->signal[0])))
			break;
		wait = -1;
		if (deadline) {
			left = deadline - now_ms();
			if (left <= 0) {
				ret = -1;
				break;
			}
			wait = left > INT_MAX ? INT_MAX : (int)left;
		}
		errno = 0;
		rc = ssh_event_dopoll(ev, wait);
		if ((rc == SSH_ERROR && errno != EINTR) || !session_alive(ss)) {
			ret = -2;
			break;
		}
	}
	ssh_event_remove_session(ev, ss);
	ssh_event_free(ev);
	return ret;
}

bool kssh_alive(const struct kssh *s)
{
	return s && session_alive(s->ss);
}

int kssh_exec(struct kssh *s, const char *cmd, long timeout_ms,
	      kcmd_line_fn on_line, void *ctx, int *status)
{
	struct exec_state x = { .on_line = on_line, .ctx = ctx };
	struct ssh_channel_callbacks_struct cb = {
		.userdata = &x,
		.channel_data_function = on_data,
		.channel_eof_function = on_eof,
		.channel_close_function = on_close,
		.channel_exit_status_function = on_exit_status,
		.channel_exit_signal_function = on_exit_signal,
	};
	long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	ssh_channel ch;
	int ret = -1, rc, st = -1;

	if (status)
		*status = -1;
	s->err[0] = '\0';
	if (!session_alive(s->ss)) {
		seterr(s, "%s: the ssh session is closed (connect again)",
		       s->name);
		return -1;
	}
	ch = ssh_channel_new(s->ss);
	if (!ch) {
		seterr(s, "%s: %s", s->name, ssh_get_error(s->ss));
		return -1;
	}
	sbuf_init(&x.part[0]);
	sbuf_init(&x.part[1]);
	ssh_callbacks_init(&cb);
	ssh_set_channel_callbacks(ch, &cb);
	/* Opening the channel and starting the command wait in libssh. */
	if (timeout_ms > 0 && timeout_ms < KSSH_STALL_MS)
		set_timeout(s->ss, timeout_ms);
	rc = ssh_channel_open_session(ch);
	if (rc == SSH_OK)
		rc = ssh_channel_request_exec(ch, cmd);
	/* Nothing to say on its stdin: a command that reads it ends. */
	if (rc == SSH_OK)
		rc = ssh_channel_send_eof(ch);
	set_timeout(s->ss, KSSH_STALL_MS);
	if (rc != SSH_OK) {
		seterr(s, "%s: cannot run '%s': %s", s->name, cmd,
		       ssh_get_error(s->ss));
		goto out;
	}

	rc = exec_wait(s->ss, ch, &x, deadline);
	if (x.part[0].len)
		emit(&x, x.part[0].buf, x.part[0].len);
	if (x.part[1].len)
		emit(&x, x.part[1].buf, x.part[1].len);

	if (rc == -1) {
		/*
		 * Ask the box to kill it, then close the channel. OpenSSH
		 * honours the signal (killpg) only for logins that run under
		 * privilege separation, not for root: as with ktest.pl's ssh,
		 * a command may then run on until it ends by itself, with no
		 * one listening.
		 */
		ssh_channel_request_send_signal(ch, "KILL");
		seterr(s, "%s: '%s' timed out after %ld ms", s->name, cmd,
		       timeout_ms);
		goto out;
	}
	if (rc == -2) {
		seterr(s, "%s: connection lost while running '%s': %s",
		       s->name, cmd, ssh_get_error(s->ss));
		goto out;
	}
	ret = 0;
	/* get_exit_status returns at once: the channel is closed or the
	 * status is in. A signal death reads -1 there, as an error does. */
	if (x.signal[0])
		seterr(s, "%s: '%s' was killed by SIG%s%s", s->name, cmd,
		       x.signal, x.core ? " (core dumped)" : "");
	else if ((st = ssh_channel_get_exit_status(ch)) < 0)
		seterr(s, "%s: '%s' ended without an exit status", s->name,
		       cmd);
	if (status)
		*status = st;
out:
	/* The channel may outlive this frame inside libssh: unhook first. */
	ssh_remove_channel_callbacks(ch, &cb);
	if (session_alive(s->ss) && !ssh_channel_is_closed(ch))
		ssh_channel_close(ch);
	ssh_channel_free(ch);
	sbuf_free(&x.part[0]);
	sbuf_free(&x.part[1]);
	return ret;
}

/* ---- uploads ---- */

static const char *sftp_errstr(struct kssh *s)
{
	switch (s->sftp ? sftp_get_error(s->sftp) : SSH_FX_OK) {
	case SSH_FX_NO_SUCH_FILE:
	case SSH_FX_NO_SUCH_PATH:
		return "no such file or directory";
	case SSH_FX_PERMISSION_DENIED:
		return "permission denied";
	case SSH_FX_FILE_ALREADY_EXISTS:
		return "file exists";
	case SSH_FX_WRITE_PROTECT:
		return "read-only file system";
	case SSH_FX_OP_UNSUPPORTED:
		return "operation not supported by the server";
	default:
		/* FAILURE and the rest: the server's or the session's text */
		return ssh_get_error(s->ss);
	}
}

static sftp_session open_sftp(struct kssh *s)
{
	sftp_session sftp;

	if (s->sftp)
		return s->sftp;
	sftp = sftp_new(s->ss);
	if (!sftp)
		return NULL;
	if (sftp_init(sftp) != SSH_OK) {
		sftp_free(sftp);
		return NULL;
	}
	s->sftp = sftp;
	return sftp;
}

/*
 * posix-rename@openssh.com, which libssh 0.10 cannot send: plain SFTP
 * rename (v3) refuses to replace an existing file, and OpenSSH implements
 * it with link()+unlink(), so overwriting needs the extension. We speak
 * the few SFTP v3 packets it takes on a channel of our own.
 */
static void put_u32(struct sbuf *b, uint32_t v)
{
	unsigned char c[4] = { v >> 24, v >> 16, v >> 8, v };

	sbuf_addn(b, (const char *)c, 4);
}

static void put_str(struct sbuf *b, const char *str)
{
	put_u32(b, strlen(str));
	sbuf_adds(b, str);
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int raw_send(ssh_channel ch, struct sbuf *payload)
{
	struct sbuf pkt;
	int rc, want;

	sbuf_init(&pkt);
	put_u32(&pkt, payload->len);
	sbuf_addn(&pkt, payload->buf, payload->len);
	want = pkt.len;
	rc = ssh_channel_write(ch, pkt.buf, pkt.len);
	sbuf_free(&pkt);
	sbuf_reset(payload);
	return rc == want ? 0 : -1;
}

static int raw_read_full(ssh_channel ch, void *buf, size_t n, long deadline)
{
	char *p = buf;
	long left;
	int rc;

	while (n) {
		left = deadline - now_ms();
		if (left <= 0)
			return -1;
		rc = ssh_channel_read_timeout(ch, p, n, 0,
					      left > INT_MAX ? INT_MAX : left);
		if (rc < 0 || (rc == 0 && ssh_channel_is_eof(ch)))
			return -1;
		p += rc;
		n -= rc;
	}
	return 0;
}

/* Reads one SFTP packet; returns its type, the payload in *body. */
static int raw_recv(ssh_channel ch, unsigned char **body, uint32_t *len,
		    long deadline)
{
	unsigned char hdr[4];

	if (raw_read_full(ch, hdr, 4, deadline) < 0)
		return -1;
	*len = get_u32(hdr);
	if (*len < 1 || *len > 256 * 1024)
		return -1;
	*body = xmalloc(*len);
	if (raw_read_full(ch, *body, *len, deadline) < 0) {
		free(*body);
		return -1;
	}
	return (*body)[0];
}

#define FXP_INIT	1
#define FXP_VERSION	2
#define FXP_STATUS	101
#define FXP_EXTENDED	200

static int posix_rename(struct kssh *s, const char *from, const char *to)
{
	long deadline = now_ms() + KSSH_STALL_MS;
	ssh_channel ch = ssh_channel_new(s->ss);
	unsigned char *body = NULL;
	struct sbuf b;
	uint32_t len, code;
	int ret = -1;

	sbuf_init(&b);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_subsystem(ch, "sftp") != SSH_OK) {
		seterr(s, "sftp channel: %s", ssh_get_error(s->ss));
		goto out;
	}
	sbuf_addc(&b, FXP_INIT);
	put_u32(&b, 3);
	if (raw_send(ch, &b) < 0 ||
	    raw_recv(ch, &body, &len, deadline) != FXP_VERSION) {
		seterr(s, "sftp handshake failed: %s", ssh_get_error(s->ss));
		goto out;
	}
	free(body);
	body = NULL;
	sbuf_addc(&b, (char)FXP_EXTENDED);
	put_u32(&b, 1);
	put_str(&b, "posix-rename@openssh.com");
	put_str(&b, from);
	put_str(&b, to);
	if (raw_send(ch, &b) < 0 ||
	    raw_recv(ch, &body, &len, deadline) != FXP_STATUS || len < 9) {
		seterr(s, "posix-rename: no answer: %s", ssh_get_error(s->ss));
		goto out;
	}
	code = get_u32(body + 5);
	if (code != SSH_FX_OK) {
		uint32_t mlen = len >= 13 ? get_u32(body + 9) : 0;

		if (mlen > len - 13)
			mlen = 0;
		seterr(s, "%.*s (SFTP status %u)", (int)mlen,
		       mlen ? (const char *)body + 13 : "", code);
		goto out;
	}
	ret = 0;
out:
	free(body);
	sbuf_free(&b);
	if (ch) {
		if (ssh_channel_is_open(ch))
			ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	return ret;
}

/* "path.ktest-XXXXXX": beside the target, so the rename stays on its fs. */
static char *temp_name(const char *path)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];
	char sfx[7];
	size_t i;

	if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
		long t = now_ms() ^ getpid();

		memcpy(r, &t, sizeof(r) < sizeof(t) ? sizeof(r) : sizeof(t));
	}
	for (i = 0; i < sizeof(r); i++)
		sfx[i] = set[r[i] % (sizeof(set) - 1)];
	sfx[6] = '\0';
	return xasprintf("%s.ktest-%s", path, sfx);
}

/* Moves tmp over path; replaces an existing file atomically if it can. */
static int install_over(struct kssh *s, const char *tmp, const char *path)
{
	sftp_attributes a;

	if (sftp_rename(s->sftp, tmp, path) == 0)
		return 0;
	seterr(s, "%s", sftp_errstr(s));
	a = sftp_lstat(s->sftp, path);
	if (!a)		/* nothing in the way: it failed for its own reason */
		return -1;
	if (a->type == SSH_FILEXFER_TYPE_DIRECTORY) {
		sftp_attributes_free(a);
		seterr(s, "%s is a directory", path);
		return -1;
	}
	sftp_attributes_free(a);
	if (sftp_extension_supported(s->sftp, "posix-rename@openssh.com", "1"))
		return posix_rename(s, tmp, path);
	/*
	 * A server without posix-rename: the old file goes first. The box
	 * may briefly have no file there, but never half of one.
	 */
	if (sftp_unlink(s->sftp, path) < 0 ||
	    sftp_rename(s->sftp, tmp, path) < 0) {
		seterr(s, "%s", sftp_errstr(s));
		return -1;
	}
	return 0;
}

/* The local file into the open temp file, in chunks, and onto the disk. */
static int copy_data(struct kssh *s, int fd, sftp_file f, const char *tmp,
		     char *what, size_t len)
{
	char *buf = xmalloc(KSSH_CHUNK);
	int ret = -1;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, KSSH_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(what, len, "read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (sftp_write(f, buf, n) != n) {
			snprintf(what, len, "write %s: %s", tmp,
				 sftp_errstr(s));
			goto out;
		}
	}
	if (sftp_extension_supported(s->sftp, "fsync@openssh.com", "1") &&
	    sftp_fsync(f) < 0) {
		snprintf(what, len, "fsync %s: %s", tmp, sftp_errstr(s));
		goto out;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

int kssh_upload(struct kssh *s, const char *local, const char *path,
		int mode)
{
	sftp_file f = NULL;
	char *tmp = NULL;
	bool created = false;
	char what[2560];
	int fd, tries, ret = -1;

	s->err[0] = '\0';
	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		seterr(s, "upload %s to %s:%s: %s", local, s->name, path,
		       strerror(errno));
		return -1;
	}
	if (!session_alive(s->ss)) {
		snprintf(what, sizeof(what), "the ssh session is closed");
		goto fail;
	}
	if (!open_sftp(s)) {
		snprintf(what, sizeof(what), "sftp: %s", ssh_get_error(s->ss));
		goto fail;
	}

	for (tries = 0; tries < 3 && !f; tries++) {
		free(tmp);
		tmp = temp_name(path);
		f = sftp_open(s->sftp, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (!f && sftp_get_error(s->sftp) != SSH_FX_FAILURE &&
		    sftp_get_error(s->sftp) != SSH_FX_FILE_ALREADY_EXISTS)
			break;
	}
	if (!f) {
		snprintf(what, sizeof(what), "create %s: %s", tmp,
			 sftp_errstr(s));
		goto fail;
	}
	created = true;

	if (copy_data(s, fd, f, tmp, what, sizeof(what)) < 0)
		goto fail;
	if (sftp_close(f) < 0) {
		f = NULL;
		snprintf(what, sizeof(what), "close %s: %s", tmp,
			 sftp_errstr(s));
		goto fail;
	}
	f = NULL;
	/* Not at open: the server's umask would apply there. */
	if (sftp_chmod(s->sftp, tmp, mode & 07777) < 0) {
		snprintf(what, sizeof(what), "chmod %s %o: %s", tmp,
			 (unsigned int)mode & 07777, sftp_errstr(s));
		goto fail;
	}
	if (install_over(s, tmp, path) < 0) {
		snprintf(what, sizeof(what), "rename %s to %s: %s", tmp, path,
			 s->err);
		goto fail;
	}
	ret = 0;
	goto out;
fail:
	if (f)
		sftp_close(f);
	/* A broken SFTP channel (not the session) is opened afresh. */
	if (s->sftp && (!session_alive(s->ss) ||
			ssh_channel_is_closed(s->sftp->channel))) {
		sftp_free(s->sftp);
		s->sftp = NULL;
	}
	if (created && session_alive(s->ss) && open_sftp(s))
		sftp_unlink(s->sftp, tmp);
	seterr(s, "upload %s to %s:%s: %s", local, s->name, path, what);
out:
	close(fd);
	free(tmp);
	return ret;
}
