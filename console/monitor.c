// SPDX-License-Identifier: GPL-2.0-only
/*
 * The console monitor: ktest.pl's monitor() loop turned inside out. Perl
 * waits in wait_for_input() with a timeout chosen by the state, then looks
 * at the line it got; here the caller waits (poll until
 * kmonitor_deadline()) and hands over either a line or the news that the
 * deadline passed. The checks on a line run in monitor()'s order, because
 * the order decides: the line that trips STOP_AFTER_SUCCESS is not looked
 * at for a call trace, a panic on the line that trips STOP_AFTER_FAILURE
 * does not restart the failure timer, and so on.
 *
 * Beside ktest.pl's two detections the monitor cuts every crash report out
 * of the stream (titles.c) and titles it; which classes fail the boot is
 * kmon_config.fail_classes.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "conf/strmap.h"
#include "console/monitor.h"
#include "console/titles.h"

#define RING		4	/* lines kept for a bare call trace's "CPU:" */
#define TAIL_MAX	60	/* lines after a report a panic may follow in */
#define SAVED_MAX	512

/* What ended the watch (ktest.pl prints a line for each). */
enum kstop {
	STOP_NONE,
	STOP_TIMEOUT,		/* TIMEOUT of silence before the boot */
	STOP_BOOTED,		/* BOOTED_TIMEOUT of silence after it */
	STOP_FAILURE,		/* STOP_AFTER_FAILURE after a bug */
	STOP_SUCCESS,		/* STOP_AFTER_SUCCESS after the last success */
	STOP_TEST_AFTER,	/* STOP_TEST_AFTER with neither */
	STOP_TRIPLE,		/* another kernel's banner after ours */
	STOP_EOF,		/* the console ended */
};

struct saved_line {
	char text[SAVED_MAX];
	size_t len;
	char ctx[16];
	bool kernel;
};

struct kmonitor {
	struct kmon_config c;
	char *success_line;
	char *version;		/* ours: expected, or the first banner's */
	char *other;		/* the banner that made it a triple fault */
	pcre2_code *success;
	pcre2_match_data *md;
	struct krecog *rec;
	struct sbuf subject;	/* the line with its '\n', as Perl sees it */

	/* monitor()'s variables */
	int64_t start;		/* $monitor_start */
	int64_t last;		/* when the running wait_for_input() began */
	int64_t success_start, failure_start;
	bool booted, bug, bug_ignored, skip_call_trace, version_found;

	bool done;
	enum kstop stop;
	enum kmon_verdict verdict;
	char *reason;

	/* crash reports, in the order their first lines came */
	struct kmon_crash *crashes;
	struct kreport **reps;
	size_t ncrashes, cap;
	long open;		/* the report still collecting lines, or -1 */
	long tail;		/* the report a panic may still join, or -1 */
	struct saved_line tail_lines[TAIL_MAX];
	size_t ntail;
	struct saved_line ring[RING];
	size_t nring;
};

/* ---- crash reports ---- */

static void save(struct saved_line *s, const struct kline *l)
{
	s->len = l->len < SAVED_MAX ? l->len : SAVED_MAX;
	memcpy(s->text, l->text, s->len);
	memcpy(s->ctx, l->ctx, sizeof(s->ctx));
	s->kernel = l->kernel;
}

static struct kline saved(const struct saved_line *s)
{
	struct kline l;

	memset(&l, 0, sizeof(l));
	l.text = s->text;
	l.len = s->len;
	memcpy(l.ctx, s->ctx, sizeof(l.ctx));
	l.kernel = s->kernel;
	return l;
}

static void sync_crash(struct kmonitor *m, long i)
{
	m->crashes[i].title = (char *)kreport_title(m->reps[i]);
	m->crashes[i].report = (char *)kreport_text(m->reps[i]);
}

/* Ends the open report; a panic may still join it when with_tail. */
static void close_open(struct kmonitor *m, bool with_tail)
{
	if (m->open >= 0)
		sync_crash(m, m->open);
	m->tail = with_tail ? m->open : -1;
	m->ntail = 0;
	m->open = -1;
	m->nring = 0;
}

static long new_crash(struct kmonitor *m, enum krep_kind k,
		      const struct kline *l)
{
	long i;

	if (m->ncrashes == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->crashes = xrealloc(m->crashes, m->cap * sizeof(*m->crashes));
		m->reps = xrealloc(m->reps, m->cap * sizeof(*m->reps));
	}
	i = (long)m->ncrashes++;
	m->reps[i] = kreport_new(m->rec, k, l);
	memset(&m->crashes[i], 0, sizeof(m->crashes[i]));
	m->crashes[i].cls = krep_class(k);
	return i;
}

/* Adds l to report i; false when that ended it. */
static bool add_line(struct kmonitor *m, long i, const struct kline *l)
{
	enum kreport_add a = kreport_add(m->reps[i], l);

	sync_crash(m, i);
	return a == KREPORT_MORE || a == KREPORT_OTHER;
}

static long start_crash(struct kmonitor *m, enum krep_kind k,
			const struct kline *l)
{
	long i = new_crash(m, k, l);
	size_t from = m->nring;

	/* a bare call trace: from its "CPU: 0 PID: 1 Comm:" line on */
	if (k == KREP_CALL_TRACE) {
		for (size_t j = m->nring; j-- > 0;) {
			struct kline r = saved(&m->ring[j]);

			if (!strcmp(r.ctx, l->ctx) && krecog_cpu_line(m->rec, &r)) {
				from = j;
				break;
			}
		}
	}
	m->open = i;
	for (size_t j = from; j < m->nring; j++) {
		struct kline r = saved(&m->ring[j]);

		add_line(m, i, &r);
	}
	m->nring = 0;
	if (!add_line(m, i, l))
		close_open(m, true);
	return i;
}

static void ring_push(struct kmonitor *m, const struct kline *l)
{
	if (m->nring == RING) {
		memmove(&m->ring[0], &m->ring[1], (RING - 1) * sizeof(m->ring[0]));
		m->nring--;
	}
	save(&m->ring[m->nring++], l);
}

/*
 * Files line l under the crash report it belongs to. Returns that report's
 * index (or -1), and in *started the class of a report it begins.
 */
static long crash_line(struct kmonitor *m, const struct kline *l,
		       bool boundary, unsigned int *started)
{
	enum krep_kind k = krecog_header(m->rec, l);
	long i;

	*started = 0;
	/* ktest.pl's exemption for the kernel's backtrace self-test */
	if (k == KREP_CALL_TRACE && m->skip_call_trace)
		k = KREP_NONE;
	if (boundary) {
		/* a prompt, SUCCESS_LINE or a kernel banner ends any report */
		close_open(m, false);
		return -1;
	}
	if (m->open >= 0) {
		i = m->open;
		if (k && !krep_continues(k)) {
			close_open(m, false);
		} else {
			enum kreport_add a = kreport_add(m->reps[i], l);

			sync_crash(m, i);
			if (a == KREPORT_MORE)
				return i;
			if (a == KREPORT_END_WITH) {
				close_open(m, true);
				return i;
			}
			if (a == KREPORT_OTHER && !k)
				return -1;
			close_open(m, a == KREPORT_END_BEFORE);
		}
	}
	if (m->tail >= 0) {
		if (k == KREP_PANIC) {
			/* "Kernel panic - not syncing: Fatal exception" and
			 * the like: the end of the report before, not a new one */
			i = m->tail;
			kreport_reopen(m->reps[i]);
			m->open = i;
			m->tail = -1;
			for (size_t j = 0; j < m->ntail; j++) {
				struct kline t = saved(&m->tail_lines[j]);

				add_line(m, i, &t);
			}
			m->ntail = 0;
			if (!add_line(m, i, l))
				close_open(m, true);
			return i;
		}
		if (k || m->ntail == TAIL_MAX) {
			m->tail = -1;
		} else {
			save(&m->tail_lines[m->ntail++], l);
		}
	}
	if (!k) {
		ring_push(m, l);
		return -1;
	}
	*started = krep_class(k);
	return start_crash(m, k, l);
}

/* ---- the verdict ---- */

static void add_secs(struct sbuf *b, long ms, bool plural)
{
	if (ms % 1000 == 0)
		sbuf_addf(b, "%ld second%s", ms / 1000,
			  plural || ms != 1000 ? "s" : "");
	else
		sbuf_addf(b, "%s%ld.%03ld seconds", ms < 0 ? "-" : "",
			  labs(ms / 1000), labs(ms % 1000));
}

/* ktest.pl's line for what ended the watch */
static void stop_message(const struct kmonitor *m, struct sbuf *b)
{
	switch (m->stop) {
	case STOP_TIMEOUT:
		sbuf_adds(b, "Timed out after ");
		add_secs(b, m->c.timeout_ms, false);
		break;
	case STOP_BOOTED:
		sbuf_adds(b, "Successful boot found: break after ");
		add_secs(b, m->c.booted_timeout_ms, false);
		break;
	case STOP_FAILURE:
		/* ktest.pl 6.1 first prints "bug timed out after
		 * <BOOTED_TIMEOUT> seconds": the wrong number, not repeated */
		sbuf_adds(b, "Test forced to stop after ");
		add_secs(b, m->c.stop_after_failure_ms, true);
		sbuf_adds(b, " after failure");
		break;
	case STOP_SUCCESS:
		sbuf_adds(b, "Test forced to stop after ");
		add_secs(b, m->c.stop_after_success_ms, true);
		sbuf_adds(b, " after success");
		break;
	case STOP_TEST_AFTER:
		sbuf_adds(b, "STOP_TEST_AFTER (");
		add_secs(b, m->c.stop_test_after_ms, true);
		sbuf_adds(b, ") timed out");
		break;
	case STOP_TRIPLE:
		sbuf_addf(b, "then Linux kernel %s booted instead of %s",
			  m->other, m->version);
		break;
	case STOP_EOF:
		sbuf_adds(b, "the console ended");
		break;
	case STOP_NONE:
		break;
	}
}

static const char *first_failing_title(const struct kmonitor *m)
{
	for (size_t i = 0; i < m->ncrashes; i++)
		if (m->crashes[i].fails)
			return m->crashes[i].title;
	return NULL;
}

static void finish(struct kmonitor *m, enum kstop why)
{
	struct sbuf b;
	const char *t;

	m->done = true;
	m->stop = why;
	close_open(m, false);
	m->tail = -1;
	sbuf_init(&b);
	/*
	 * ktest.pl decides on $bug, then on $booted; a triple fault after the
	 * login prompt falls through to success (bug 10 of the parity list).
	 * Here it is its own verdict, unless a crash came first: then the
	 * crash explains the reboot.
	 */
	if (m->bug) {
		m->verdict = KMON_CRASHED;
		sbuf_adds(&b, "failed - got a bug report");
		t = first_failing_title(m);
		if (t)
			sbuf_addf(&b, ": %s", t);
		sbuf_adds(&b, " (");
		stop_message(m, &b);
		sbuf_adds(&b, ")");
	} else if (why == STOP_TRIPLE) {
		m->verdict = KMON_TRIPLE_FAULT;
		sbuf_addf(&b, "Already booted in Linux kernel %s, but now we booted into Linux kernel %s: assuming a triple fault (set DETECT_TRIPLE_FAULT = 0 to disable); ",
			  m->version, m->other);
		sbuf_adds(&b, m->booted ?
			  "it came after the boot prompt, which ktest.pl 6.1 counts as a success" :
			  "it came before the boot prompt");
	} else if (!m->booted) {
		m->verdict = KMON_TIMED_OUT;
		sbuf_adds(&b, "failed - never got a boot prompt. (");
		stop_message(m, &b);
		sbuf_adds(&b, ")");
	} else {
		m->verdict = KMON_BOOTED;
		if (why == STOP_EOF)
			sbuf_adds(&b, "Successful boot found: ");
		stop_message(m, &b);
		if (m->bug_ignored)
			sbuf_adds(&b, "; WARNING: Call Trace detected but ignored due to IGNORE_ERRORS=1");
	}
	free(m->reason);
	m->reason = sbuf_detach(&b);
}

/* ---- ktest.pl's loop ---- */

int64_t kmonitor_deadline(const struct kmonitor *m)
{
	long t;

	if (m->done)
		return INT64_MAX;
	/* the three branches at the top of monitor()'s loop */
	if (m->bug && m->c.stop_after_failure_ms >= 0)
		return m->failure_start + m->c.stop_after_failure_ms;
	t = m->booted ? m->c.booted_timeout_ms : m->c.timeout_ms;
	if (t < 0)		/* wait_for_input(): negative waits forever */
		return INT64_MAX;
	return m->last + t;
}

/* wait_for_input() came back empty: the branch that waited decides */
static void timed_out(struct kmonitor *m)
{
	if (m->bug && m->c.stop_after_failure_ms >= 0)
		finish(m, STOP_FAILURE);
	else if (m->booted)
		finish(m, STOP_BOOTED);
	else
		finish(m, STOP_TIMEOUT);
}

void kmonitor_tick(struct kmonitor *m, int64_t now_ms)
{
	if (!m->done && now_ms >= kmonitor_deadline(m))
		timed_out(m);
}

void kmonitor_eof(struct kmonitor *m, int64_t now_ms)
{
	if (m->done)
		return;
	/* Perl's wait_for_input() returns undef for both */
	if (now_ms >= kmonitor_deadline(m))
		timed_out(m);
	else
		finish(m, STOP_EOF);
}

static bool success_match(struct kmonitor *m)
{
	if (!m->success)
		return false;
	return pcre2_match(m->success, (PCRE2_SPTR)m->subject.buf,
			   m->subject.len, 0, 0, m->md, NULL) > 0;
}

/* Perl's /\bLinux version (\S+).*\n/: the version, or NULL */
static char *banner_version(const char *s, size_t n)
{
	static const char key[] = "Linux version ";
	const size_t k = sizeof(key) - 1;
	const char *p = s, *end = s + n;

	while ((p = memmem(p, (size_t)(end - p), key, k))) {
		const char *v = p + k, *e = v;
		bool word = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');

		p++;
		if (word)
			continue;
		while (e < end && !isspace((unsigned char)*e))
			e++;
		if (e > v)
			return xstrndup(v, (size_t)(e - v));
	}
	return NULL;
}

static bool has_ci(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what);

	for (size_t i = 0; i + w <= n; i++)
		if (!strncasecmp(s + i, what, w))
			return true;
	return false;
}

static bool has(const char *s, size_t n, const char *what)
{
	return memmem(s, n, what, strlen(what)) != NULL;
}

/* A failing event on this line: bug=1 unless one is already in */
static void bug_event(struct kmonitor *m, int64_t now, bool *fails)
{
	if (m->c.ignore_errors) {
		if (!m->bug)
			m->bug_ignored = true;
		return;
	}
	if (!m->bug) {
		m->bug = true;
		m->failure_start = now;
	}
	*fails = true;
}

void kmonitor_line(struct kmonitor *m, const char *line, size_t len,
		   int64_t now_ms)
{
	unsigned int started, fail = m->c.fail_classes;
	bool ct, pn, succ, fails = false;
	const char *s;
	struct kline l;
	char *v;
	long idx;

	if (len && line[len - 1] == '\r')
		len--;
	if (m->done)
		return;
	/* the wait for this line ran out before it came */
	if (now_ms >= kmonitor_deadline(m)) {
		timed_out(m);
		return;
	}
	m->last = now_ms;
	sbuf_reset(&m->subject);
	sbuf_addn(&m->subject, line, len);
	sbuf_addc(&m->subject, '\n');
	s = m->subject.buf;
	krecog_strip(line, len, &l);

	succ = success_match(m);
	if (succ) {
		m->booted = true;
		m->success_start = now_ms;
	}
	if (m->booted && m->c.stop_after_success_ms >= 0 &&
	    now_ms - m->success_start >= m->c.stop_after_success_ms) {
		finish(m, STOP_SUCCESS);
		return;
	}
	if (has(s, len, "[ backtrace testing ]"))
		m->skip_call_trace = true;

	ct = has_ci(s, len, "call trace:") && !m->skip_call_trace;
	pn = has(s, len, "Kernel panic -");
	idx = crash_line(m, &l, succ || krecog_prompt(m->rec, &l) ||
			 has(s, len, "Linux version "), &started);

	/* /call trace:/i outside the markers: ktest.pl's first bug */
	if (ct && (fail & KMON_CALL_TRACE))
		bug_event(m, now_ms, &fails);
	/* the classes ktest.pl does not know, when they fail */
	started &= ~(unsigned int)(KMON_CALL_TRACE | KMON_PANIC);
	if (started & fail)
		bug_event(m, now_ms, &fails);
	if (fails && idx >= 0)
		m->crashes[idx].fails = true;
	if (m->bug && m->c.stop_after_failure_ms >= 0 &&
	    now_ms - m->failure_start >= m->c.stop_after_failure_ms) {
		finish(m, STOP_FAILURE);
		return;
	}
	if (has(s, len, "[ end of backtrace testing ]"))
		m->skip_call_trace = false;
	/* "Kernel panic -": always a bug, IGNORE_ERRORS or not; every one
	 * restarts the failure timer */
	if (pn && (fail & KMON_PANIC)) {
		m->failure_start = now_ms;
		m->bug = true;
		if (idx >= 0)
			m->crashes[idx].fails = true;
	}

	v = banner_version(s, len);
	if (v) {
		if (!m->version) {
			/* nothing expected: the first banner is ours */
			m->version = v;
			m->version_found = true;
			v = NULL;
		} else if (!strcmp(v, m->version)) {
			m->version_found = true;
		} else if (m->version_found && m->c.detect_triple_fault) {
			m->other = v;
			finish(m, STOP_TRIPLE);
			return;
		}
		free(v);
	}

	if (m->c.stop_test_after_ms > 0 && !m->booted && !m->bug &&
	    now_ms - m->start > m->c.stop_test_after_ms)
		finish(m, STOP_TEST_AFTER);
}

/* ---- the rest of the API ---- */

struct kmonitor *kmonitor_new(const struct kmon_config *c, int64_t now_ms,
			      char *why, size_t whylen)
{
	struct kmonitor *m = xcalloc(1, sizeof(*m));
	char err[256];

	m->c = *c;
	m->open = m->tail = -1;
	m->start = m->last = now_ms;
	sbuf_init(&m->subject);
	if (c->success_line) {
		PCRE2_UCHAR msg[160];
		PCRE2_SIZE off;
		int e;

		m->success_line = xstrdup(c->success_line);
		m->success = pcre2_compile((PCRE2_SPTR)m->success_line,
					   PCRE2_ZERO_TERMINATED, 0, &e, &off, NULL);
		if (!m->success) {
			pcre2_get_error_message(e, msg, sizeof(msg));
			snprintf(why, whylen, "SUCCESS_LINE '%s': %s at offset %zu",
				 c->success_line, (char *)msg, (size_t)off);
			goto fail;
		}
		pcre2_jit_compile(m->success, PCRE2_JIT_COMPLETE);
		m->md = pcre2_match_data_create_from_pattern(m->success, NULL);
		if (!m->md) {
			snprintf(why, whylen, "out of memory");
			goto fail;
		}
	}
	m->c.success_line = m->success_line;
	if (c->expected_version)
		m->version = xstrdup(c->expected_version);
	m->c.expected_version = NULL;
	m->rec = krecog_new(err, sizeof(err));
	if (!m->rec) {
		snprintf(why, whylen, "crash patterns: %s", err);
		goto fail;
	}
	return m;
fail:
	kmonitor_free(m);
	return NULL;
}

void kmonitor_free(struct kmonitor *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ncrashes; i++)
		kreport_free(m->reps[i]);
	free(m->reps);
	free(m->crashes);
	krecog_free(m->rec);
	pcre2_match_data_free(m->md);
	pcre2_code_free(m->success);
	sbuf_free(&m->subject);
	free(m->success_line);
	free(m->version);
	free(m->other);
	free(m->reason);
	free(m);
}

enum kmon_verdict kmonitor_verdict(const struct kmonitor *m)
{
	return m->done ? m->verdict : KMON_RUNNING;
}

const char *kmonitor_reason(const struct kmonitor *m)
{
	return m->reason ? m->reason : "";
}

size_t kmonitor_crashes(const struct kmonitor *m, const struct kmon_crash **c)
{
	*c = m->crashes;
	return m->ncrashes;
}

bool kmonitor_booted(const struct kmonitor *m)
{
	return m->booted;
}

int kmon_parse_classes(const char *s, unsigned int *out)
{
	static const struct {
		const char *name;
		unsigned int bits;
	} names[] = {
		{ "call_trace", KMON_CALL_TRACE },
		{ "panic", KMON_PANIC },
		{ "bug", KMON_BUG },
		{ "warning", KMON_WARNING },
		{ "oops", KMON_OOPS },
		{ "sanitizer", KMON_SANITIZER },
		{ "hang", KMON_HANG },
		{ "all", KMON_ALL },
		{ "ktest", KMON_DEFAULT_FAIL },
		{ "none", 0 },
	};
	unsigned int bits = 0;

	while (*s) {
		char word[32];
		size_t n = 0;
		bool found = false;

		while (*s == ' ' || *s == '\t' || *s == ',' || *s == '|')
			s++;
		if (!*s)
			break;
		while (*s && !strchr(" \t,|", *s)) {
			if (n == sizeof(word) - 1)
				return -1;
			word[n++] = *s == '-' ? '_' : *s;
			s++;
		}
		word[n] = '\0';
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (!strcasecmp(word, names[i].name)) {
				bits |= names[i].bits;
				found = true;
			}
		}
		if (!found)
			return -1;
	}
	*out = bits;
	return 0;
}
