// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the JSON report writer. ktest only writes the report
 * (nothing reads it back), so the input fills a report, any bytes in every
 * string field, and the file written must be JSON (RFC 8259, UTF-8): a
 * small strict checker below aborts when it is not.
 *
 * The input: NUL-separated strings and single bytes, taken in order (see
 * take()); it runs out into empty strings and zeros.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/strmap.h"
#include "ktest/report.h"
#include "tmpdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const char *p, *end;
	char buf[4][4096];	/* the last four strings taken */
	unsigned int next;
};

static unsigned int byte(struct in *in)
{
	return in->p < in->end ? (unsigned char)*in->p++ : 0;
}

/* The next string; an empty one is NULL (a field left unset). */
static const char *take(struct in *in)
{
	char *buf = in->buf[in->next++ % 4];
	size_t n = 0;

	while (in->p < in->end && *in->p && n < sizeof(in->buf[0]) - 1)
		buf[n++] = *in->p++;
	if (in->p < in->end)
		in->p++;
	buf[n] = '\0';
	return n ? buf : NULL;
}

/* ---- a strict JSON checker ---- */

struct js {
	const unsigned char *p, *end;
	int depth;
};

static void ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct js *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
		return false;
	j->p += n;
	return true;
}

/* One UTF-8 character, shortest form, no surrogates. */
static bool utf8(struct js *j)
{
	unsigned int c = *j->p, n, cp, min;

	if (c < 0x80) {
		j->p++;
		return true;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3, cp = c & 0x07, min = 0x10000;
	} else {
		return false;
	}
	if ((size_t)(j->end - j->p) <= n)
		return false;
	for (unsigned int i = 1; i <= n; i++) {
		if ((j->p[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (j->p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	j->p += n + 1;
	return true;
}

static bool string(struct js *j)
{
	if (!lit(j, "\""))
		return false;
	while (j->p < j->end && *j->p != '"') {
		if (*j->p < 0x20)
			return false;
		if (*j->p != '\\') {
			if (!utf8(j))
				return false;
			continue;
		}
		j->p++;
		if (j->p == j->end)
			return false;
		if (*j->p == 'u') {
			if (j->end - j->p < 5)
				return false;
			for (int i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", j->p[i]) ||
				    !j->p[i])
					return false;
			j->p += 5;
		} else if (strchr("\"\\/bfnrt", *j->p) && *j->p) {
			j->p++;
		} else {
			return false;
		}
	}
	return lit(j, "\"");
}

static bool digits(struct js *j)
{
	const unsigned char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool number(struct js *j)
{
	lit(j, "-");
	if (lit(j, "0")) {
		if (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			return false;
	} else if (!digits(j)) {
		return false;
	}
	if (lit(j, ".") && !digits(j))
		return false;
	if (lit(j, "e") || lit(j, "E")) {
		if (!lit(j, "+"))
			lit(j, "-");
		if (!digits(j))
			return false;
	}
	return true;
}

static bool value(struct js *j);

static bool members(struct js *j, char close, bool keys)
{
	ws(j);
	if (lit(j, close == '}' ? "}" : "]"))
		return true;
	for (;;) {
		ws(j);
		if (keys) {
			if (!string(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (lit(j, ","))
			continue;
		return lit(j, close == '}' ? "}" : "]");
	}
}

static bool value(struct js *j)
{
	bool ok, obj;

	ws(j);
	if (j->p == j->end)
		return false;
	switch (*j->p) {
	case '{':
	case '[':
		obj = *j->p++ == '{';
		if (++j->depth > 64)
			return false;
		ok = members(j, obj ? '}' : ']', obj);
		j->depth--;
		return ok;
	case '"':
		return string(j);
	case 't':
		return lit(j, "true");
	case 'f':
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default:
		return number(j);
	}
}

static bool json_ok(const char *s, size_t n)
{
	struct js j = { (const unsigned char *)s, (const unsigned char *)s + n, 0 };

	if (!value(&j))
		return false;
	ws(&j);
	return j.p == j.end;
}

/* ---- the target ---- */

static const char *const phases[] = { NULL, "build", "install", "boot", "test" };

static long ms(struct in *in)
{
	unsigned int b = byte(in);

	return b == 0xff ? -1 : (long)b * 997 + byte(in);
}

static void fill(struct kresults *r, struct in *in)
{
	size_t ntests = byte(in) % 4;

	for (size_t i = 0; i < ntests; i++) {
		struct ktest_report *t;
		const char *name, *type, *subtype;
		size_t nsteps;
		int index = (int)byte(in) - 128;

		name = take(in);
		type = take(in);
		subtype = take(in);
		t = kresults_test(r, index, name, type, subtype);
		t->verdict = byte(in) % 5;
		kresults_set(&t->why, take(in));
		kresults_set(&t->result_commit, take(in));
		kresults_set(&t->result_subject, take(in));
		kresults_set(&t->result_options, take(in));
		nsteps = byte(in) % 5;
		for (size_t k = 0; k < nsteps; k++) {
			struct kstep_report *s;
			const char *kind, *commit, *subject;
			unsigned int b;

			kind = take(in);
			commit = take(in);
			subject = take(in);
			s = kresults_step(t, kind, commit, subject);
			kresults_set(&s->config, take(in));
			kresults_set(&s->why, take(in));
			kresults_set(&s->title, take(in));
			b = byte(in);
			s->verdict = b % 5;
			s->resumed = b & 0x80;
			b = (b >> 3) % 6;
			kresults_set(&s->failed_phase,
				     b < 5 ? phases[b] : take(in));
			for (int p = 0; p < KPH__COUNT; p++)
				s->ms[p] = ms(in);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[4200];
	struct in in = { .p = (const char *)data,
			 .end = (const char *)data + size };
	struct kresults r;
	struct sbuf b;
	char chunk[65536];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/report.json", fuzz_tmpdir());
	kresults_init(&r, take(&in));
	fill(&r, &in);
	if (byte(&in) & 1)
		kresults_finish(&r);
	if (kresults_write(&r, path))
		abort();
	kresults_free(&r);

	f = fopen(path, "re");
	if (!f)
		abort();
	sbuf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_addn(&b, chunk, n);
	fclose(f);
	if (!json_ok(b.buf, b.len)) {
		fwrite(b.buf, 1, b.len, stderr);
		abort();
	}
	sbuf_free(&b);
	return 0;
}
