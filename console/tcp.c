// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP consoles: tcp:HOST:PORT (tcp:[::1]:PORT for IPv6 literals), a raw
 * console server such as ser2net (raw mode) or conmux. No telnet
 * negotiation: point ser2net's raw port at it.
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
};

static int tcp_parse(struct kconsole *c, const char *target, char *err,
		     size_t len)
{
	struct tcp *t = xcalloc(1, sizeof(*t));
	const char *colon;

	c->priv = t;
	if (target[0] == '[') {
		const char *rb = strchr(target, ']');

		if (!rb || rb[1] != ':') {
			kcon_errf(err, len, "expected tcp:[ADDRESS]:PORT");
			return -1;
		}
		t->host = xstrndup(target + 1, (size_t)(rb - target - 1));
		colon = rb + 1;
	} else {
		colon = strrchr(target, ':');
		if (!colon || colon == target) {
			kcon_errf(err, len, "expected tcp:HOST:PORT");
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
		kcon_errf(err, len, "tcp console %s: %s", t->name,
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
		kcon_errf(err, len, "tcp console %s: connect: %s", t->name,
			  strerror(e));
		return -1;
	}
	tune(fd);
	c->fd = fd;
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
