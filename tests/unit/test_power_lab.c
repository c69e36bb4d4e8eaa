// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lab power drivers, each against a stand-in that records what it was
 * asked (tests/cli/test_power_lab.sh runs them against the real pdudaemon
 * and ipmi_sim):
 * - pdudaemon: an HTTP server on 127.0.0.1 in a thread, answering as
 *   pdudaemon does (200, 500 "Invalid request", or never): the request's
 *   path and query (escaped, delay only for reboot, no double '/'), each
 *   failure's message (URL, PDU, port, what was answered, a URL's password
 *   masked), a server that never answers is given up at timeout_ms;
 * - ipmi: a fake ipmitool (a script) that records its argv and whether
 *   IPMI_PASSWORD was in its environment: -E or -f, never the password as
 *   an argument; cycle of an off chassis is "on", of an on one "cycle";
 *   state from "Chassis Power is on/off"; a failure names the BMC and the
 *   user and not the password.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "power/power.h"

static void contains(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("'%s' does not contain '%s'", s, want);
}

static void lacks(const char *s, const char *unwanted)
{
	if (strstr(s, unwanted))
		fail_msg("'%s' contains '%s'", s, unwanted);
}

/* ---- a one-request-at-a-time HTTP server ---- */

struct http {
	int fd;
	int port;
	int status;		/* 0: never answer (hold the connection) */
	const char *body;
	char last[512];		/* the last request line */
	int requests;
	pthread_t th;
};

static void *serve(void *arg)
{
	struct http *h = arg;
	char buf[2048], reply[512];
	int c;

	while ((c = accept(h->fd, NULL, NULL)) >= 0) {
		ssize_t n = read(c, buf, sizeof(buf) - 1);
		char *eol;

		if (n <= 0) {
			close(c);
			continue;
		}
		buf[n] = '\0';
		eol = strstr(buf, "\r\n");
		if (eol)
			*eol = '\0';
		snprintf(h->last, sizeof(h->last), "%.511s", buf);
		h->requests++;
		if (!h->status) {	/* hold it until the client gives up */
			while (read(c, buf, sizeof(buf)) > 0)
				;
			close(c);
			continue;
		}
		snprintf(reply, sizeof(reply),
			 "HTTP/1.1 %d X\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 h->status, strlen(h->body), h->body);
		if (write(c, reply, strlen(reply)) < 0)
			h->requests = -1000;
		close(c);
	}
	return NULL;
}

static void http_start(struct http *h, int status, const char *body)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	memset(h, 0, sizeof(*h));
	h->status = status;
	h->body = body;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(h->fd >= 0);
	assert_int_equal(bind(h->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(h->fd, 4), 0);
	assert_int_equal(getsockname(h->fd, (struct sockaddr *)&a, &len), 0);
	h->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&h->th, NULL, serve, h), 0);
}

static void http_stop(struct http *h)
{
	shutdown(h->fd, SHUT_RDWR);
	close(h->fd);
	pthread_join(h->th, NULL);
}

static struct kpower *pdud(const char *url, const char *pdu, const char *port,
			   long delay, long timeout_ms)
{
	struct kpdud_opts o = {
		.url = url, .pdu = pdu, .port = port, .delay_s = delay,
		.timeout_ms = timeout_ms,
	};

	return kpower_pdudaemon_new(&o);
}

static void test_pdud_requests(void **state)
{
	struct http h;
	struct kpower *p;
	char url[64];

	(void)state;
	http_start(&h, 200, "OK - accepted request\n");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", h.port);
	p = pdud(url, "lab pdu&1", "3", 7, 5000);
	assert_int_equal(kpower_on(p), 0);
	assert_string_equal(h.last,
		"GET /power/control/on?hostname=lab%20pdu%261&port=3 HTTP/1.1");
	assert_int_equal(kpower_off(p), 0);
	assert_string_equal(h.last,
		"GET /power/control/off?hostname=lab%20pdu%261&port=3 HTTP/1.1");
	assert_int_equal(kpower_cycle(p), 0);
	assert_string_equal(h.last,
		"GET /power/control/reboot?hostname=lab%20pdu%261&port=3&delay=7 HTTP/1.1");
	assert_int_equal(kpower_state(p), KPOWER_UNKNOWN);
	assert_string_equal(p->err, "");
	kpower_free(p);

	/* no delay: pdudaemon's own */
	p = pdud(url, "pdu", "4", -1, 5000);
	assert_int_equal(kpower_cycle(p), 0);
	assert_string_equal(h.last,
		"GET /power/control/reboot?hostname=pdu&port=4 HTTP/1.1");
	kpower_free(p);
	assert_int_equal(h.requests, 4);
	http_stop(&h);
}

static void test_pdud_refused_request(void **state)
{
	struct http h;
	struct kpower *p;
	char url[64];

	(void)state;
	http_start(&h, 500, "Invalid request\n");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", h.port);
	p = pdud(url, "nosuch", "9", -1, 5000);
	assert_int_equal(kpower_cycle(p), -1);
	contains(p->err, url);
	contains(p->err, "reboot of PDU 'nosuch' port 9: refused: Invalid request (");
	kpower_free(p);
	http_stop(&h);

	http_start(&h, 404, "Not Found");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", h.port);
	p = pdud(url, "pdu", "1", -1, 5000);
	assert_int_equal(kpower_off(p), -1);
	contains(p->err, "off of PDU 'pdu' port 1: answered HTTP 404: Not Found");
	kpower_free(p);
	http_stop(&h);
}

static void test_pdud_down(void **state)
{
	struct http h;
	struct kpower *p;
	char url[96];

	(void)state;
	/* a port that was free a moment ago: nothing listens there now */
	http_start(&h, 200, "");
	http_stop(&h);
	snprintf(url, sizeof(url), "http://admin:hunter2@127.0.0.1:%d", h.port);
	p = pdud(url, "pdu", "1", -1, 5000);
	assert_int_equal(kpower_on(p), -1);
	contains(p->err, "pdudaemon at http://admin:***@127.0.0.1:");
	contains(p->err, "is pdudaemon running");
	lacks(p->err, "hunter2");
	kpower_free(p);
}

static void test_pdud_never_answers(void **state)
{
	struct http h;
	struct kpower *p;
	char url[64];

	(void)state;
	http_start(&h, 0, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", h.port);
	p = pdud(url, "pdu", "1", -1, 300);
	assert_int_equal(kpower_cycle(p), -1);
	contains(p->err, "imed out");
	kpower_free(p);
	http_stop(&h);
}

/* ---- ipmi with a fake ipmitool ---- */

struct fake {
	char dir[64];
	char tool[96];
	char rec[96];
	char power[96];
};

static void fake_ipmitool(struct fake *f, const char *fail_msg_text)
{
	FILE *s;

	snprintf(f->dir, sizeof(f->dir), "/tmp/ktest-ipmi.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->tool, sizeof(f->tool), "%s/ipmitool", f->dir);
	snprintf(f->rec, sizeof(f->rec), "%s/rec", f->dir);
	snprintf(f->power, sizeof(f->power), "%s/power", f->dir);
	s = fopen(f->tool, "we");
	assert_non_null(s);
	fprintf(s, "#!/bin/sh\n"
		"echo \"argv: $*\" >> %s\n"
		"echo \"env: ${IPMI_PASSWORD-unset}\" >> %s\n", f->rec, f->rec);
	if (fail_msg_text)
		fprintf(s, "echo '%s' >&2\nexit 1\n", fail_msg_text);
	fprintf(s, "for a; do last=$a; done\n"
		"case $last in\n"
		"status) echo \"Chassis Power is $(cat %s)\" ;;\n"
		"on) echo on > %s; echo 'Chassis Power Control: Up/On' ;;\n"
		"off) echo off > %s ;;\n"
		"cycle) echo on > %s ;;\n"
		"esac\n", f->power, f->power, f->power, f->power);
	fclose(s);
	assert_int_equal(chmod(f->tool, 0700), 0);
	s = fopen(f->power, "we");
	assert_non_null(s);
	fputs("off\n", s);
	fclose(s);
}

static void fake_done(struct fake *f)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
}

static const char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_ipmi_env_password(void **state)
{
	struct fake f;
	struct kpower *p;
	struct kipmi_opts o = {
		.host = "bmc1", .port = 6230, .user = "admin",
		.password = "pw-XYZ", .cipher = 3,
	};
	const char *rec;

	(void)state;
	fake_ipmitool(&f, NULL);
	o.ipmitool = f.tool;
	p = kpower_ipmi_new(&o);
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	assert_int_equal(kpower_cycle(p), 0);	/* off: "on" */
	assert_int_equal(kpower_state(p), KPOWER_ON);
	assert_int_equal(kpower_cycle(p), 0);	/* on: "cycle" */
	assert_int_equal(kpower_off(p), 0);
	assert_int_equal(kpower_state(p), KPOWER_OFF);
	kpower_free(p);
	rec = slurp(f.rec);
	contains(rec, "argv: -I lanplus -H bmc1 -p 6230 -U admin -C 3 -E chassis power status\n");
	contains(rec, "argv: -I lanplus -H bmc1 -p 6230 -U admin -C 3 -E chassis power on\n");
	contains(rec, "argv: -I lanplus -H bmc1 -p 6230 -U admin -C 3 -E chassis power cycle\n");
	contains(rec, "argv: -I lanplus -H bmc1 -p 6230 -U admin -C 3 -E chassis power off\n");
	contains(rec, "env: pw-XYZ\n");
	lacks(rec, "env: unset");	/* every run had it */
	lacks(rec, "pw-XYZ chassis");	/* never as an argument */
	fake_done(&f);
}

static void test_ipmi_password_file(void **state)
{
	struct fake f;
	struct kpower *p;
	struct kipmi_opts o = {
		.host = "bmc2", .password_file = "/etc/bmc.pw",
		.password = "ignored", .cipher = -1,
	};
	const char *rec;

	(void)state;
	setenv("IPMI_PASSWORD", "from-ktests-own-env", 1);
	fake_ipmitool(&f, NULL);
	o.ipmitool = f.tool;
	p = kpower_ipmi_new(&o);
	assert_int_equal(kpower_on(p), 0);
	kpower_free(p);
	unsetenv("IPMI_PASSWORD");
	rec = slurp(f.rec);
	/* default port, no user, no -C, -f and no -E; no password in env */
	assert_string_equal(rec, "argv: -I lanplus -H bmc2 -p 623 -f /etc/bmc.pw chassis power on\n"
			    "env: unset\n");
	fake_done(&f);
}

static void test_ipmi_failure(void **state)
{
	struct fake f;
	struct kpower *p;
	struct kipmi_opts o = {
		.host = "bmc3", .port = 7000, .user = "lab",
		.password = "s3cret-77", .cipher = -1,
	};

	(void)state;
	fake_ipmitool(&f, "Error: Unable to establish IPMI v2 / RMCP+ session");
	o.ipmitool = f.tool;
	p = kpower_ipmi_new(&o);
	assert_int_equal(kpower_cycle(p), -1);
	contains(p->err, "BMC bmc3 port 7000, user 'lab'");
	contains(p->err, "exit 1");
	contains(p->err, "Unable to establish IPMI v2 / RMCP+ session");
	contains(p->err, "check IPMI_USER and the password");
	lacks(p->err, "s3cret");
	assert_int_equal(kpower_state(p), KPOWER_UNKNOWN);
	kpower_free(p);
	fake_done(&f);

	o.ipmitool = "/nonexistent/ipmitool";
	p = kpower_ipmi_new(&o);
	assert_int_equal(kpower_off(p), -1);
	/* posix_spawn's error, or exit 127 where it cannot tell (valgrind) */
	contains(p->err, "cannot run /nonexistent/ipmitool");
	contains(p->err, "is ipmitool installed?");
	kpower_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pdud_requests),
		cmocka_unit_test(test_pdud_refused_request),
		cmocka_unit_test(test_pdud_down),
		cmocka_unit_test(test_pdud_never_answers),
		cmocka_unit_test(test_ipmi_env_password),
		cmocka_unit_test(test_ipmi_password_file),
		cmocka_unit_test(test_ipmi_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
