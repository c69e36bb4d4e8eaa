// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON report of a run (see report.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "report.h"

static const char *const verdict_names[] = {
	[KV_NONE] = "NONE", [KV_GOOD] = "GOOD", [KV_BAD] = "BAD",
	[KV_SKIP] = "SKIP", [KV_INFRA] = "INFRA",
};

static const char *const phase_names[KPH__COUNT] = {
	[KPH_BUILD] = "build", [KPH_INSTALL] = "install",
	[KPH_BOOT] = "boot", [KPH_TEST] = "test",
};

const char *kverdict_name(enum kverdict v)
{
	return verdict_names[v];
}

enum kverdict kverdict_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(verdict_names) / sizeof(*verdict_names); i++)
		if (!strcmp(s, verdict_names[i]))
			return (enum kverdict)i;
	return KV_NONE;
}

static char *started_at(time_t t)
{
	char buf[64];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

char *kresults_now(void)
{
	return started_at(time(NULL));
}

/*
 * The start, and the run part of its KCIDB ids: two runs started in the
 * same second (a build test takes less) must not share one, so it holds
 * the pid and the microseconds too.
 */
void kresults_init(struct kresults *r, const char *config)
{
	struct timespec ts;
	char second[32];
	struct tm tm;

	memset(r, 0, sizeof(*r));
	r->config = xstrdup(config ? config : "");
	clock_gettime(CLOCK_REALTIME, &ts);
	r->started = started_at(ts.tv_sec);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(second, sizeof(second), "%Y%m%dT%H%M%SZ", &tm);
	r->run = xasprintf("%s-%ld-%06ld", second, (long)getpid(),
			   ts.tv_nsec / 1000);
}

static void step_free(struct kstep_report *s)
{
	free(s->kind);
	free(s->commit);
	free(s->subject);
	free(s->config);
	free(s->why);
	free(s->title);
	free(s->failed_phase);
	free(s->started);
}

void kresults_free(struct kresults *r)
{
	for (size_t i = 0; i < r->ntests; i++) {
		struct ktest_report *t = &r->tests[i];

		for (size_t k = 0; k < t->nsteps; k++)
			step_free(&t->steps[k]);
		free(t->steps);
		free(t->name);
		free(t->type);
		free(t->subtype);
		free(t->why);
		free(t->result_commit);
		free(t->result_subject);
		free(t->result_options);
		free(t->git_url);
		free(t->git_branch);
		free(t->head);
		free(t->arch);
		free(t->config_name);
		free(t->log_url);
	}
	free(r->tests);
	free(r->config);
	free(r->origin);
	free(r->started);
	free(r->run);
	free(r->finished);
	memset(r, 0, sizeof(*r));
}

void kresults_set(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

struct ktest_report *kresults_test(struct kresults *r, int index,
				  const char *name, const char *type,
				  const char *subtype)
{
	struct ktest_report *t;

	r->tests = xrealloc(r->tests, (r->ntests + 1) * sizeof(*r->tests));
	t = &r->tests[r->ntests++];
	memset(t, 0, sizeof(*t));
	t->index = index;
	kresults_set(&t->name, name);
	kresults_set(&t->type, type);
	kresults_set(&t->subtype, subtype);
	return t;
}

struct kstep_report *kresults_step(struct ktest_report *t, const char *kind,
				  const char *commit, const char *subject)
{
	struct kstep_report *s;

	t->steps = xrealloc(t->steps, (t->nsteps + 1) * sizeof(*t->steps));
	s = &t->steps[t->nsteps++];
	memset(s, 0, sizeof(*s));
	s->n = (int)t->nsteps;
	kresults_set(&s->kind, kind);
	kresults_set(&s->commit, commit);
	kresults_set(&s->subject, subject);
	for (int p = 0; p < KPH__COUNT; p++)
		s->ms[p] = -1;
	s->started = kresults_now();
	return s;
}

void kresults_finish(struct kresults *r)
{
	free(r->finished);
	r->finished = kresults_now();
}

/* ---- JSON ---- */

/*
 * The length of the UTF-8 character at p (shortest form, no surrogates,
 * at most U+10FFFF), or 0 when p holds no valid one.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned int cp, min;
	size_t n;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A JSON string, or null. JSON is UTF-8: a byte that starts no valid
 * UTF-8 character (a console's line noise, a Latin-1 commit subject)
 * becomes U+FFFD.
 */
static void jstr(struct sbuf *b, const char *s)
{
	if (!s) {
		sbuf_adds(b, "null");
		return;
	}
	sbuf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			size_t n = utf8_len(p);

			if (!n) {
				sbuf_adds(b, "\\ufffd");
				continue;
			}
			sbuf_addn(b, (const char *)p, n);
			p += n - 1;
		} else if (*p == '"' || *p == '\\') {
			sbuf_addc(b, '\\');
			sbuf_addc(b, *p);
		} else if (*p == '\n') {
			sbuf_adds(b, "\\n");
		} else if (*p == '\t') {
			sbuf_adds(b, "\\t");
		} else if (*p < 0x20 || *p == 0x7f) {
			sbuf_addf(b, "\\u%04x", *p);
		} else {
			sbuf_addc(b, *p);
		}
	}
	sbuf_addc(b, '"');
}

static void jkey(struct sbuf *b, const char *indent, const char *key,
		 bool *first)
{
	sbuf_adds(b, *first ? "\n" : ",\n");
	*first = false;
	sbuf_adds(b, indent);
	jstr(b, key);
	sbuf_adds(b, ": ");
}

static void jkv(struct sbuf *b, const char *indent, const char *key,
		const char *val, bool *first)
{
	jkey(b, indent, key, first);
	jstr(b, val);
}

static void jsecs(struct sbuf *b, long ms)
{
	sbuf_addf(b, "%ld.%03ld", ms / 1000, ms % 1000);
}

static void step_json(struct sbuf *b, const struct kstep_report *s)
{
	const char *in = "        ";
	bool first = true, f2 = true;

	sbuf_adds(b, "      {");
	jkey(b, in, "n", &first);
	sbuf_addf(b, "%d", s->n);
	jkv(b, in, "kind", s->kind, &first);
	jkv(b, in, "commit", s->commit, &first);
	jkv(b, in, "subject", s->subject, &first);
	jkv(b, in, "config", s->config, &first);
	jkv(b, in, "verdict", kverdict_name(s->verdict), &first);
	jkv(b, in, "why", s->why, &first);
	jkv(b, in, "failed_phase", s->failed_phase, &first);
	jkv(b, in, "crash_title", s->title, &first);
	jkey(b, in, "resumed", &first);
	sbuf_adds(b, s->resumed ? "true" : "false");
	jkey(b, in, "durations", &first);
	sbuf_adds(b, "{");
	for (int p = 0; p < KPH__COUNT; p++) {
		if (s->ms[p] < 0)
			continue;
		jkey(b, "          ", phase_names[p], &f2);
		jsecs(b, s->ms[p]);
	}
	sbuf_adds(b, f2 ? "}" : "\n        }");
	sbuf_adds(b, "\n      }");
}

static void test_json(struct sbuf *b, const struct ktest_report *t)
{
	const char *in = "    ";
	bool first = true;

	sbuf_adds(b, "  {");
	jkey(b, in, "index", &first);
	sbuf_addf(b, "%d", t->index);
	jkv(b, in, "name", t->name, &first);
	jkv(b, in, "type", t->type, &first);
	jkv(b, in, "subtype", t->subtype, &first);
	jkv(b, in, "verdict", kverdict_name(t->verdict), &first);
	jkv(b, in, "why", t->why, &first);
	jkv(b, in, "first_bad_commit", t->result_commit, &first);
	jkv(b, in, "first_bad_subject", t->result_subject, &first);
	if (t->flaky) {
		jkey(b, in, "confidence", &first);
		sbuf_addf(b, "%.4f", t->confidence);
		jkey(b, in, "runs", &first);
		sbuf_addf(b, "%ld", t->runs);
	}
	if (t->result_options) {
		char *copy = xstrdup(t->result_options), *save = NULL, *w;
		bool f2 = true;

		jkey(b, in, "culprit_options", &first);
		sbuf_adds(b, "[");
		for (w = strtok_r(copy, " ", &save); w;
		     w = strtok_r(NULL, " ", &save)) {
			sbuf_adds(b, f2 ? "" : ", ");
			jstr(b, w);
			f2 = false;
		}
		sbuf_adds(b, "]");
		free(copy);
	}
	jkey(b, in, "steps", &first);
	sbuf_adds(b, "[");
	for (size_t k = 0; k < t->nsteps; k++) {
		sbuf_adds(b, k ? ",\n" : "\n");
		step_json(b, &t->steps[k]);
	}
	sbuf_adds(b, t->nsteps ? "\n    ]" : "]");
	sbuf_adds(b, "\n  }");
}

/*
 * KCIDB v4.3 (kcidb-io's kcidb_io/schema/v04_03.py): every id is
 * "<origin>:...", no member is null (an unknown one is left out), URLs are
 * URIs. Checkouts are "<origin>:<commit>"; builds and tests carry the run's
 * start ("<origin>:<YYYYmmddTHHMMSSZ>.<test>.<step>[.boot|.test]") so two
 * runs never reuse an id.
 */
bool kcidb_origin_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

static const char *kcidb_status(enum kverdict v)
{
	switch (v) {
	case KV_GOOD:
		return "PASS";
	case KV_BAD:
		return "FAIL";
	case KV_SKIP:
		return "SKIP";
	default:
		return "ERROR";	/* INFRA: the lab, not the code */
	}
}

static bool is_sha1(const char *s)
{
	size_t n = 0;

	for (; s && ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')); s++)
		n++;
	return s && !*s && n == 40;
}

struct kcidb_ctx {
	struct sbuf *b;
	const char *origin;
	const char *run;	/* kresults' run */
	bool first;
};

/* ", "key": "val"" when val is known */
static void kopt_str(struct kcidb_ctx *k, const char *key, const char *val)
{
	if (!val)
		return;
	sbuf_addf(k->b, ", \"%s\": ", key);
	jstr(k->b, val);
}

static void kopt_url(struct kcidb_ctx *k, const char *key, const char *path)
{
	char *url;

	if (!path)
		return;
	url = path[0] == '/' ? xasprintf("file://%s", path) : xstrdup(path);
	kopt_str(k, key, url);
	free(url);
}

static void kobj_start(struct kcidb_ctx *k)
{
	sbuf_adds(k->b, k->first ? "\n      {" : ",\n      {");
	k->first = false;
}

static void kid(struct kcidb_ctx *k, const char *key, const char *rest)
{
	char *id = xasprintf("%s:%s", k->origin, rest);

	sbuf_addf(k->b, "\"%s\": ", key);
	jstr(k->b, id);
	free(id);
}

static void kstep_id(struct kcidb_ctx *k, const char *key,
		     const struct ktest_report *t, const struct kstep_report *s,
		     const char *suffix)
{
	char *rest = xasprintf("%s.%d.%d%s", k->run, t->index, s->n, suffix);

	kid(k, key, rest);
	free(rest);
}

static bool phase_failed(const struct kstep_report *s, const char *phase)
{
	return s->failed_phase && !strcmp(s->failed_phase, phase);
}

/*
 * The checkout of a step: its commit, else HEAD when the test began (a
 * build or boot test builds the tree as it is), else "<run>.<test>".
 */
static char *checkout_rest(const struct kcidb_ctx *k,
			   const struct ktest_report *t,
			   const struct kstep_report *s)
{
	if (s->commit)
		return xstrdup(s->commit);
	if (t->head)
		return xstrdup(t->head);
	return xasprintf("%s.%d", k->run, t->index);
}

static void kcidb_checkout(struct kcidb_ctx *k, const struct ktest_report *t,
			   const struct kstep_report *s, const char *rest)
{
	const char *commit = s->commit ? s->commit : t->head;

	kobj_start(k);
	kid(k, "id", rest);
	kopt_str(k, "origin", k->origin);
	if (t->git_url && (!strncmp(t->git_url, "https://", 8) ||
			   !strncmp(t->git_url, "git://", 6)))
		kopt_str(k, "git_repository_url", t->git_url);
	if (is_sha1(commit))
		kopt_str(k, "git_commit_hash", commit);
	kopt_str(k, "git_repository_branch", t->git_branch);
	kopt_str(k, "comment", s->subject);
	kopt_str(k, "start_time", s->started);
	sbuf_adds(k->b, ", \"patchset_hash\": \"\", \"valid\": true}");
}

static void kcidb_build(struct kcidb_ctx *k, const struct ktest_report *t,
			const struct kstep_report *s)
{
	char *rest;

	kobj_start(k);
	kstep_id(k, "id", t, s, "");
	kopt_str(k, "origin", k->origin);
	sbuf_adds(k->b, ", ");
	rest = checkout_rest(k, t, s);
	kid(k, "checkout_id", rest);
	free(rest);
	kopt_str(k, "start_time", s->started);
	sbuf_adds(k->b, ", \"duration\": ");
	jsecs(k->b, s->ms[KPH_BUILD]);
	kopt_str(k, "architecture", t->arch);
	kopt_str(k, "config_name", t->config_name);
	kopt_url(k, "config_url", s->config);
	kopt_url(k, "log_url", t->log_url);
	sbuf_addf(k->b, ", \"valid\": %s",
		  phase_failed(s, "build") ? "false" : "true");
	if (phase_failed(s, "build") && s->why) {
		sbuf_adds(k->b, ", \"misc\": {\"why\": ");
		jstr(k->b, s->why);
		sbuf_adds(k->b, "}");
	}
	sbuf_adds(k->b, "}");
}

/* The step's start plus the phases before p: when p began. NULL: unknown */
static char *phase_start(const struct kstep_report *s, enum kphase p)
{
	struct tm tm;
	char buf[64];
	time_t t;
	long ms = 0;

	memset(&tm, 0, sizeof(tm));
	if (!s->started || !strptime(s->started, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	for (int q = 0; q < (int)p; q++)
		if (s->ms[q] > 0)
			ms += s->ms[q];
	t = timegm(&tm) + ms / 1000;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

static void kcidb_test(struct kcidb_ctx *k, const struct ktest_report *t,
		       const struct kstep_report *s, const char *path,
		       enum kphase p)
{
	enum kverdict v = phase_failed(s, path) ? s->verdict : KV_GOOD;
	char *suffix, *start;

	if (s->failed_phase && !phase_failed(s, path) &&
	    (!strcmp(s->failed_phase, "build") ||
	     !strcmp(s->failed_phase, "install") ||
	     (p == KPH_TEST && !strcmp(s->failed_phase, "boot"))))
		return;		/* it never ran */
	suffix = xasprintf(".%s", path);
	kobj_start(k);
	kstep_id(k, "id", t, s, suffix);
	free(suffix);
	kopt_str(k, "origin", k->origin);
	sbuf_adds(k->b, ", ");
	kstep_id(k, "build_id", t, s, "");
	sbuf_addf(k->b, ", \"path\": \"%s\", \"status\": \"%s\", \"duration\": ",
		  path, kcidb_status(v));
	jsecs(k->b, s->ms[p]);
	start = phase_start(s, p);
	kopt_str(k, "start_time", start);
	free(start);
	kopt_str(k, "comment", t->name);
	kopt_url(k, "log_url", t->log_url);
	if (v != KV_GOOD) {
		sbuf_adds(k->b, ", \"misc\": {\"verdict\": ");
		jstr(k->b, kverdict_name(v));
		if (s->why) {
			sbuf_adds(k->b, ", \"why\": ");
			jstr(k->b, s->why);
		}
		if (s->title) {
			sbuf_adds(k->b, ", \"crash_title\": ");
			jstr(k->b, s->title);
		}
		sbuf_adds(k->b, "}");
	}
	sbuf_adds(k->b, "}");
}

static void kcidb_json(struct sbuf *b, const struct kresults *r)
{
	struct kcidb_ctx k = { .b = b, .first = true, .run = r->run };
	struct strmap seen;

	k.origin = kcidb_origin_ok(r->origin) ? r->origin : "ktest";
	strmap_init(&seen);
	sbuf_adds(b, "{\n    \"version\": {\"major\": 4, \"minor\": 3},\n"
		  "    \"checkouts\": [");
	for (size_t i = 0; i < r->ntests; i++) {
		for (size_t j = 0; j < r->tests[i].nsteps; j++) {
			const struct kstep_report *s = &r->tests[i].steps[j];
			char *rest;

			rest = checkout_rest(&k, &r->tests[i], s);
			if (!strmap_has(&seen, rest)) {
				strmap_put(&seen, rest, NULL);
				kcidb_checkout(&k, &r->tests[i], s, rest);
			}
			free(rest);
		}
	}
	strmap_free(&seen, NULL);
	sbuf_adds(b, k.first ? "],\n    \"builds\": [" : "\n    ],\n    \"builds\": [");
	k.first = true;
	for (size_t i = 0; i < r->ntests; i++)
		for (size_t j = 0; j < r->tests[i].nsteps; j++)
			if (r->tests[i].steps[j].ms[KPH_BUILD] >= 0)
				kcidb_build(&k, &r->tests[i], &r->tests[i].steps[j]);
	sbuf_adds(b, k.first ? "],\n    \"tests\": [" : "\n    ],\n    \"tests\": [");
	k.first = true;
	for (size_t i = 0; i < r->ntests; i++) {
		for (size_t j = 0; j < r->tests[i].nsteps; j++) {
			const struct kstep_report *s = &r->tests[i].steps[j];

			if (s->ms[KPH_BUILD] < 0)
				continue;	/* no build to hang it on */
			if (s->ms[KPH_BOOT] >= 0)
				kcidb_test(&k, &r->tests[i], s, "boot", KPH_BOOT);
			if (s->ms[KPH_TEST] >= 0)
				kcidb_test(&k, &r->tests[i], s, "test", KPH_TEST);
		}
	}
	sbuf_adds(b, k.first ? "]\n  }" : "\n    ]\n  }");
}

static void report_json(struct sbuf *b, const struct kresults *r)
{
	bool first = true;

	sbuf_adds(b, "{");
	jkv(b, "  ", "ktest_version", KTEST_VERSION, &first);
	jkv(b, "  ", "config", r->config, &first);
	jkv(b, "  ", "started", r->started, &first);
	jkv(b, "  ", "finished", r->finished, &first);
	jkey(b, "  ", "tests", &first);
	sbuf_adds(b, "[");
	for (size_t i = 0; i < r->ntests; i++) {
		sbuf_adds(b, i ? ",\n" : "\n");
		test_json(b, &r->tests[i]);
	}
	sbuf_adds(b, r->ntests ? "\n  ]" : "]");
	jkey(b, "  ", "kcidb", &first);
	kcidb_json(b, r);
	sbuf_adds(b, "\n}\n");
}

/* b's text to path: path.tmp, fsync, rename; frees b */
static int write_atomic(struct sbuf *b, const char *path)
{
	char *tmp = xasprintf("%s.tmp", path);
	int fd, ret = -1, saved;
	size_t off = 0;

	fd = kcmd_open_private(tmp, O_WRONLY | O_CREAT | O_TRUNC);
	if (fd < 0)
		goto out;
	while (off < b->len) {
		ssize_t w = write(fd, b->buf + off, b->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			close(fd);
			goto out;
		}
		off += w;
	}
	if (fsync(fd) || close(fd))
		goto out;
	ret = rename(tmp, path);
out:
	saved = errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	sbuf_free(b);
	errno = saved;
	return ret;
}

int kresults_write(const struct kresults *r, const char *path)
{
	struct sbuf b;

	sbuf_init(&b);
	report_json(&b, r);
	return write_atomic(&b, path);
}

int kresults_write_kcidb(const struct kresults *r, const char *path)
{
	struct sbuf b;

	sbuf_init(&b);
	kcidb_json(&b, r);
	/* kcidb_json() indents for its place inside report.json */
	sbuf_adds(&b, "\n");
	return write_atomic(&b, path);
}
