// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP consoles: tcp:HOST:PORT (tcp:[::1]:PORT for IPv6 literals), a raw
 * console server such as ser2net's raw mode ("accepter: tcp,..."), and
 * telnet:HOST:PORT, the same with telnet's commands taken out of the
 * stream and its negotiation answered (telnet.c): ser2net's telnet mode
 * ("accepter: telnet,tcp,...", with or without rfc2217), conmux, terminal
 * servers.
 *
 * ser2net drops its client when the USB serial behind it vanishes (a box
 * powered off) and takes clients again when it is back; console.c reconnects
 * on EOF until the caller's deadline, at most every 100 ms, so a refused
 * connection does not spin. Keepalive notices a console server that died
 * without closing (a host that lost power) within about half a minute.
 * Names are resolved with getaddrinfo() at every connect, which may block
 * on DNS: lab consoles are usually numeric or in /etc/hosts.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "console/console_int.h"

struct tcp {
	char *host;
	char *port;
	char name[300];		/* "host:port", "[::1]:port": for messages */
	bool telnet;
	struct kcon_telnet tn;	/* this connection's telnet state */
	bool iac_owed;		/* the second 255 of a doubled one is due */
};

static int tcp_parse(struct kconsole *c, const char *target, char *err,
		     size_t len)
{
	struct tcp *t = xcalloc(1, sizeof(*t));
	const char *colon;

	c->priv = t;
	t->telnet = c->ops == &kcon_telnet_ops;
	if (target[0] == '[') {
		const char *rb = strchr(target, ']');

		if (!rb || rb[1] != ':') {
			kcon_errf(err, len, "expected %s:[ADDRESS]:PORT",
				  c->ops->name);
			return -1;
		}
		t->host = xstrndup(target + 1, (size_t)(rb - target - 1));
		colon = rb + 1;
	} else {
		colon = strrchr(target, ':');
		if (!colon || colon == target) {
			kcon_errf(err, len, "expected %s:HOST:PORT",
				  c->ops->name);
			return -1;
		}
		t->host = xstrndup(target, (size_t)(colon - target));
	}
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    atol(colon + 1) < 1 || atol(colon + 1) > 65535) {
		kcon_errf(err, len, "bad port '%s' (1-65535)", colon + 1);
		return -1;
	}
	t->port = xstrdup(colon + 1);
	snprintf(t->name, sizeof(t->name), strchr(t->host, ':') ? "[%s]:%s" :
		 "%s:%s", t->host, t->port);
	return 0;
}

static void tune(int fd)
{
	int on = 1, idle = 10, intvl = 5, cnt = 3;

	/* our writes are keystrokes: send them now */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* One address: a connected non-blocking socket, or -1 with errno. */
static int connect_one(const struct addrinfo *ai, int64_t deadline_ms)
{
	int fd, e = 0;
	socklen_t elen = sizeof(e);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	if (kcon_poll_one(fd, POLLOUT, deadline_ms) <= 0) {
		errno = ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		goto fail;
	if (e) {
		errno = e;
		goto fail;
	}
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int tcp_open(struct kconsole *c, int64_t deadline_ms, char *err,
		    size_t len)
{
	struct tcp *t = c->priv;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	}, *res, *ai;
	int r, fd = -1, e = 0;

	r = getaddrinfo(t->host, t->port, &hints, &res);
	if (r) {
		kcon_errf(err, len, "%s console %s: %s", c->ops->name, t->name,
			  r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = connect_one(ai, deadline_ms);
		if (fd < 0)
			e = errno;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		kcon_errf(err, len, "%s console %s: connect: %s",
			  c->ops->name, t->name, strerror(e));
		return -1;
	}
	tune(fd);
	c->fd = fd;
	kcon_telnet_reset(&t->tn);
	t->iac_owed = false;
	return 0;
}

static void tcp_close(struct kconsole *c)
{
	close(c->fd);
	c->fd = -1;
}

/* send(), not write(): a peer that closed gives EPIPE, not SIGPIPE. */
static ssize_t tcp_write(struct kconsole *c, const void *buf, size_t n)
{
	return send(c->fd, buf, n, MSG_NOSIGNAL);
}

/*
 * Telnet in: the data bytes of what came, the negotiation answered at once
 * (a few bytes; should the socket take none, the read after says why).
 * Only commands: "nothing yet", as console.c takes EAGAIN.
 */
static ssize_t telnet_read(struct kconsole *c, void *buf, size_t n)
{
	struct tcp *t = c->priv;
	struct sbuf reply;
	ssize_t r = read(c->fd, buf, n);
	size_t k;

	if (r <= 0)
		return r;
	sbuf_init(&reply);
	k = kcon_telnet_filter(&t->tn, buf, (size_t)r, &reply);
	/* a dead peer shows at the next read: no error here */
	if (reply.len)
		(void)!send(c->fd, reply.buf, reply.len,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
	sbuf_free(&reply);
	if (!k) {
		errno = EAGAIN;
		return -1;
	}
	return (ssize_t)k;
}

/*
 * Telnet out: a 255 goes twice. Returns how many of buf's bytes went; a
 * doubled 255 whose second half did not fit is owed and goes first next
 * time.
 */
static ssize_t telnet_write(struct kconsole *c, const void *buf, size_t n)
{
	static const char iac2[2] = { (char)0xff, (char)0xff };
	struct tcp *t = c->priv;
	const char *p = buf, *ff;
	ssize_t w;

	if (t->iac_owed) {
		w = send(c->fd, iac2, 1, MSG_NOSIGNAL);
		if (w <= 0)
			return w;
		t->iac_owed = false;
	}
	ff = memchr(p, 0xff, n);
	if (ff != p)
		return send(c->fd, p, ff ? (size_t)(ff - p) : n, MSG_NOSIGNAL);
	w = send(c->fd, iac2, 2, MSG_NOSIGNAL);
	if (w == 1)
		t->iac_owed = true;
	return w <= 0 ? w : 1;
}

static void tcp_free(struct kconsole *c)
{
	struct tcp *t = c->priv;

	if (!t)
		return;
	free(t->host);
	free(t->port);
	free(t);
	c->priv = NULL;
}

const struct kcon_ops kcon_tcp_ops = {
	.name = "tcp",
	.parse = tcp_parse,
	.open = tcp_open,
	.close = tcp_close,
	.write = tcp_write,
	.free = tcp_free,
	.min_reopen_ms = KCON_RETRY_MS,
};

const struct kcon_ops kcon_telnet_ops = {
	.name = "telnet",
	.parse = tcp_parse,
	.open = tcp_open,
	.close = tcp_close,
	.read = telnet_read,
	.write = telnet_write,
	.free = tcp_free,
	.min_reopen_ms = KCON_RETRY_MS,
};
