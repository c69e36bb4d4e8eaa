// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pdudaemon power driver: one outlet of a PDU that pdudaemon serves,
 * switched through pdudaemon's HTTP listener with libcurl:
 *
 *	GET URL/power/control/on?hostname=PDU&port=PORT
 *	GET URL/power/control/off?hostname=PDU&port=PORT
 *	GET URL/power/control/reboot?hostname=PDU&port=PORT[&delay=D]
 *
 * pdudaemon answers 200 "OK - accepted request" or 500 "Invalid request"
 * (a PDU it does not know, a bad port). Debian 12's pdudaemon (aiohttp)
 * answers after the job ran: a reboot's 200 comes after off, the delay
 * and on, so cycle() returning is the cycle done. pdudaemon versions that
 * queue jobs answer at once; then the outlet switches just after, which
 * the boot watch's TIMEOUT covers. pdudaemon answers 200 even when its
 * own PDU driver failed (it logs it and retries): a dead PDU shows as a
 * box that does not boot, and the run says so then. Each request is
 * bounded by timeout_ms (the reboot's delay and pdudaemon's retries
 * included) and a 10 s connect timeout.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "power/power.h"

#define DEFAULT_URL "http://localhost:16421"
#define CONNECT_MS 10000L
#define BODY_KEEP 200

struct pdud {
	char *url;		/* no trailing '/' */
	char *pdu;
	char *port;
	long delay_s;
	long timeout_ms;
};

/* CURLOPT_WRITEFUNCTION: keeps the first BODY_KEEP bytes of the answer */
static size_t keep_body(char *data, size_t size, size_t n, void *ctx)
{
	struct sbuf *b = ctx;
	size_t len = size * n;

	if (b->len < BODY_KEEP)
		sbuf_addn(b, data, len < BODY_KEEP - b->len ?
			  len : BODY_KEEP - b->len);
	return len;
}

/* "OK - accepted request\n" -> "OK - accepted request" */
static void chomp(struct sbuf *b)
{
	while (b->len && strchr("\r\n \t", b->buf[b->len - 1]))
		b->buf[--b->len] = '\0';
}

/* url/power/control/what?hostname=PDU&port=PORT[&delay=D], escaped */
static char *request_url(CURL *c, const struct pdud *d, const char *what)
{
	char *pdu = curl_easy_escape(c, d->pdu, 0);
	char *port = curl_easy_escape(c, d->port, 0);
	struct sbuf u;

	sbuf_init(&u);
	if (pdu && port) {
		sbuf_addf(&u, "%s/power/control/%s?hostname=%s&port=%s",
			  d->url, what, pdu, port);
		if (!strcmp(what, "reboot") && d->delay_s >= 0)
			sbuf_addf(&u, "&delay=%ld", d->delay_s);
	}
	curl_free(pdu);
	curl_free(port);
	return u.len ? sbuf_detach(&u) : NULL;
}

/* p->err = "pdudaemon at URL: WHAT of PDU 'P' port N: " + why */
static int say(struct kpower *p, const char *what, const char *why)
{
	struct pdud *d = p->priv;

	snprintf(p->err, sizeof(p->err),
		 "pdudaemon at %s: %s of PDU '%s' port %s: %s", d->url, what,
		 d->pdu, d->port, why);
	kcmd_redact_buf(p->err, sizeof(p->err));	/* a URL's password */
	return -1;
}

static int set_opts(CURL *c, const struct pdud *d, const char *url,
		    struct sbuf *body, char *cerr)
{
	return curl_easy_setopt(c, CURLOPT_URL, url) ||
	       curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) ||
	       curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) ||
	       curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_MS) ||
	       curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, d->timeout_ms) ||
	       curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr) ||
	       curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body) ||
	       curl_easy_setopt(c, CURLOPT_WRITEDATA, body) ||
	       curl_easy_setopt(c, CURLOPT_USERAGENT, "ktest/" KTEST_VERSION);
}

static int request(struct kpower *p, const char *what)
{
	struct pdud *d = p->priv;
	char cerr[CURL_ERROR_SIZE] = "", why[400];
	struct sbuf body;
	CURL *c = curl_easy_init();
	char *url = NULL;
	CURLcode rc;
	long status = 0;
	int ret = -1;

	sbuf_init(&body);
	if (!c)
		return say(p, what, "libcurl cannot start a request");
	url = request_url(c, d, what);
	if (!url || set_opts(c, d, url, &body, cerr)) {
		say(p, what, "libcurl refused the request's options");
		goto out;
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(why, sizeof(why), "%s (is pdudaemon running, with its HTTP listener there?)",
			 cerr[0] ? cerr : curl_easy_strerror(rc));
		say(p, what, why);
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	chomp(&body);
	if (status == 500) {
		snprintf(why, sizeof(why), "refused: %s (does pdudaemon's config name that PDU, with that port?)",
			 body.len ? sbuf_str(&body) : "HTTP 500");
		say(p, what, why);
		goto out;
	}
	if (status != 200) {
		snprintf(why, sizeof(why), "answered HTTP %ld: %s", status,
			 body.len ? sbuf_str(&body) : "(no text)");
		say(p, what, why);
		goto out;
	}
	p->err[0] = '\0';
	ret = 0;
out:
	free(url);
	sbuf_free(&body);
	curl_easy_cleanup(c);
	return ret;
}

static int pdud_on(struct kpower *p)
{
	return request(p, "on");
}

static int pdud_off(struct kpower *p)
{
	return request(p, "off");
}

static int pdud_cycle(struct kpower *p)
{
	return request(p, "reboot");
}

static enum kpower_state pdud_state(struct kpower *p)
{
	(void)p;
	return KPOWER_UNKNOWN;
}

static void pdud_free(struct kpower *p)
{
	struct pdud *d = p->priv;

	if (!d)
		return;
	free(d->url);
	free(d->pdu);
	free(d->port);
	free(d);
	p->priv = NULL;
}

static const struct kpower_driver pdudaemon_driver = {
	.name = "pdudaemon",
	.on = pdud_on,
	.off = pdud_off,
	.cycle = pdud_cycle,
	.state = pdud_state,
	.free = pdud_free,
};

struct kpower *kpower_pdudaemon_new(const struct kpdud_opts *o)
{
	struct kpower *p = xcalloc(1, sizeof(*p));
	struct pdud *d = xcalloc(1, sizeof(*d));
	size_t n;

	/* thread-safe in Debian 12's libcurl (7.84 and later); idempotent */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	d->url = xstrdup(o->url && *o->url ? o->url : DEFAULT_URL);
	n = strlen(d->url);
	while (n > 1 && d->url[n - 1] == '/')
		d->url[--n] = '\0';
	d->pdu = xstrdup(o->pdu ? o->pdu : "");
	d->port = xstrdup(o->port ? o->port : "");
	d->delay_s = o->delay_s;
	d->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 300000;
	p->drv = &pdudaemon_driver;
	p->priv = d;
	return p;
}
