// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal: append-only records, fsync'd, a torn tail ignored.
 * See journal.h for the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/cmd.h"
#include "journal.h"

#define MAGIC "K1 "
#define MAX_FIELDS 64

unsigned long kjournal_crc32(const void *buf, size_t len)
{
	static unsigned long table[256];
	const unsigned char *p = buf;
	unsigned long crc = 0xffffffffUL;

	if (!table[1]) {
		for (unsigned long i = 0; i < 256; i++) {
			unsigned long c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320UL ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffUL;
}

static void rec_free(struct kjrec *r)
{
	for (size_t i = 0; i < r->nfields; i++) {
		free(r->names[i]);
		free(r->values[i]);
	}
	free(r->names);
	free(r->values);
}

static void escape(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			sbuf_adds(b, "\\\\");
		else if (*s == '\t')
			sbuf_adds(b, "\\t");
		else if (*s == '\n')
			sbuf_adds(b, "\\n");
		else
			sbuf_addc(b, *s);
	}
}

static char *unescape(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;
			*o++ = s[i] == 't' ? '\t' : s[i] == 'n' ? '\n' : s[i];
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* Splits a checked payload into fields; -1 when a field has no '='. */
static int parse_payload(const char *p, size_t len, struct kjrec *r)
{
	const char *end = p + len;

	memset(r, 0, sizeof(*r));
	while (p < end) {
		const char *tab = memchr(p, '\t', end - p);
		const char *fend = tab ? tab : end;
		const char *eq = memchr(p, '=', fend - p);

		if (!eq || eq == p || r->nfields == MAX_FIELDS) {
			rec_free(r);
			return -1;
		}
		r->names = xrealloc(r->names, (r->nfields + 1) * sizeof(char *));
		r->values = xrealloc(r->values, (r->nfields + 1) * sizeof(char *));
		r->names[r->nfields] = xstrndup(p, eq - p);
		r->values[r->nfields] = unescape(eq + 1, fend - eq - 1);
		r->nfields++;
		p = tab ? tab + 1 : end;
	}
	return 0;
}

/*
 * Checks one line (without its '\n') and parses it. Returns 0 or -1.
 */
static int parse_line(const char *line, size_t len, struct kjrec *r)
{
	char head[64];
	unsigned long plen, crc;
	size_t hlen;
	const char *sp1, *sp2;

	if (len < 3 || memcmp(line, MAGIC, 3))
		return -1;
	sp1 = memchr(line + 3, ' ', len - 3);
	if (!sp1)
		return -1;
	sp2 = memchr(sp1 + 1, ' ', len - (sp1 + 1 - line));
	if (!sp2)
		return -1;
	hlen = sp2 - line;
	if (hlen >= sizeof(head))
		return -1;
	memcpy(head, line, hlen);
	head[hlen] = '\0';
	if (sscanf(head, "K1 %lu %lx", &plen, &crc) != 2)
		return -1;
	if (plen != len - hlen - 1)
		return -1;
	if (kjournal_crc32(sp2 + 1, plen) != crc)
		return -1;
	return parse_payload(sp2 + 1, plen, r);
}

static void push(struct kjournal *j, struct kjrec *r)
{
	if (j->nrecs == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 64;
		j->recs = xrealloc(j->recs, j->cap * sizeof(*j->recs));
	}
	j->recs[j->nrecs++] = *r;
}

/* Reads the whole journal (it holds steps, not logs: small). */
static int load(struct kjournal *j, char *err, size_t errlen)
{
	struct sbuf b;
	char buf[65536];
	ssize_t n;
	size_t pos = 0, good_end = 0;
	int lineno = 0, bad_line = 0;

	sbuf_init(&b);
	while ((n = read(j->fd, buf, sizeof(buf))) > 0)
		sbuf_addn(&b, buf, n);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", j->path, strerror(errno));
		sbuf_free(&b);
		return -1;
	}
	while (pos < b.len) {
		char *nl = memchr(b.buf + pos, '\n', b.len - pos);
		size_t len = nl ? (size_t)(nl - (b.buf + pos)) : b.len - pos;
		struct kjrec r;

		lineno++;
		if (!nl || parse_line(b.buf + pos, len, &r)) {
			if (!bad_line)
				bad_line = lineno;
			pos += len + (nl ? 1 : 0);
			continue;
		}
		if (bad_line) {
			snprintf(err, errlen,
				 "%s:%d: damaged record in the middle of the journal; "
				 "move the file away to start the run afresh",
				 j->path, bad_line);
			rec_free(&r);
			sbuf_free(&b);
			return -1;
		}
		r.line = lineno;
		push(j, &r);
		pos += len + 1;
		good_end = pos;
	}
	sbuf_free(&b);
	if (good_end < pos) {
		j->torn = true;
		if (ftruncate(j->fd, good_end)) {
			snprintf(err, errlen, "%s: cannot cut the torn record: %s",
				 j->path, strerror(errno));
			return -1;
		}
	}
	if (lseek(j->fd, 0, SEEK_END) < 0) {
		snprintf(err, errlen, "%s: %s", j->path, strerror(errno));
		return -1;
	}
	return 0;
}

int kjournal_open(struct kjournal *j, const char *dir, char *err,
		  size_t errlen)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if (kcmd_mkdirs_private(dir)) {
		snprintf(err, errlen, "cannot create the state directory %s: %s",
			 dir, strerror(errno));
		return -1;
	}
	j->path = xasprintf("%s/journal", dir);
	j->fd = kcmd_open_private(j->path, O_RDWR | O_CREAT);
	if (j->fd < 0) {
		snprintf(err, errlen, "cannot open the journal %s: %s",
			 j->path, strerror(errno));
		kjournal_close(j);
		return -1;
	}
	if (load(j, err, errlen)) {
		kjournal_close(j);
		return -1;
	}
	return 0;
}

int kjournal_lock(const char *dir, char *err, size_t errlen)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *path;
	int fd, e;

	if (kcmd_mkdirs_private(dir)) {
		snprintf(err, errlen, "cannot create the state directory %s: %s",
			 dir, strerror(errno));
		return -1;
	}
	path = xasprintf("%s/lock", dir);
	/* never closed: closing any descriptor of the file would unlock it */
	fd = kcmd_open_private(path, O_RDWR | O_CREAT);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	if (fcntl(fd, F_SETLK, &fl) == 0) {
		free(path);
		return 0;
	}
	e = errno;
	if ((e == EACCES || e == EAGAIN) && !fcntl(fd, F_GETLK, &fl) &&
	    fl.l_type != F_UNLCK && fl.l_pid > 0)
		snprintf(err, errlen, "the state directory %s is in use by another ktest run (pid %ld): wait for it to end, or give this run its own STATE_DIR",
			 dir, (long)fl.l_pid);
	else if (e == EACCES || e == EAGAIN)
		snprintf(err, errlen, "the state directory %s is in use by another ktest run: wait for it to end, or give this run its own STATE_DIR",
			 dir);
	else
		snprintf(err, errlen, "cannot lock %s: %s", path, strerror(e));
	close(fd);
	free(path);
	return -1;
}

void kjournal_close(struct kjournal *j)
{
	for (size_t i = 0; i < j->nrecs; i++)
		rec_free(&j->recs[i]);
	free(j->recs);
	if (j->fd >= 0)
		close(j->fd);
	free(j->path);
	memset(j, 0, sizeof(*j));
	j->fd = -1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= w;
	}
	return 0;
}

int kjournal_appendv(struct kjournal *j, const char *const *names,
		     const char *const *values, size_t n)
{
	struct sbuf payload, line;
	struct kjrec r;
	int ret = 0;

	sbuf_init(&payload);
	for (size_t i = 0; i < n; i++) {
		if (!values[i])
			continue;
		if (payload.len)
			sbuf_addc(&payload, '\t');
		sbuf_adds(&payload, names[i]);
		sbuf_addc(&payload, '=');
		escape(&payload, values[i]);
	}
	sbuf_init(&line);
	sbuf_addf(&line, MAGIC "%zu %08lx ", payload.len,
		  kjournal_crc32(payload.buf ? payload.buf : "", payload.len));
	sbuf_addn(&line, sbuf_str(&payload), payload.len);
	sbuf_addc(&line, '\n');
	if (write_all(j->fd, line.buf, line.len) ||
	    (!j->nosync && fdatasync(j->fd)))
		ret = -1;
	if (!ret && !parse_payload(sbuf_str(&payload), payload.len, &r)) {
		r.line = j->nrecs ? j->recs[j->nrecs - 1].line + 1 : 1;
		push(j, &r);
	}
	sbuf_free(&payload);
	sbuf_free(&line);
	return ret;
}

int kjournal_append(struct kjournal *j, ...)
{
	const char *names[MAX_FIELDS], *values[MAX_FIELDS];
	size_t n = 0;
	const char *name;
	va_list ap;

	va_start(ap, j);
	while ((name = va_arg(ap, const char *)) && n < MAX_FIELDS) {
		names[n] = name;
		values[n] = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	return kjournal_appendv(j, names, values, n);
}

const char *kjrec_get(const struct kjrec *r, const char *name)
{
	for (size_t i = 0; i < r->nfields; i++)
		if (!strcmp(r->names[i], name))
			return r->values[i];
	return NULL;
}

const struct kjrec *kjournal_find(const struct kjournal *j, ...)
{
	const char *names[MAX_FIELDS], *values[MAX_FIELDS];
	size_t n = 0;
	const char *name;
	va_list ap;

	va_start(ap, j);
	while ((name = va_arg(ap, const char *)) && n < MAX_FIELDS) {
		names[n] = name;
		values[n] = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	for (size_t i = j->nrecs; i-- > 0;) {
		size_t k;

		for (k = 0; k < n; k++) {
			const char *v = kjrec_get(&j->recs[i], names[k]);

			if (!v || !values[k] || strcmp(v, values[k]))
				break;
		}
		if (k == n)
			return &j->recs[i];
	}
	return NULL;
}

int kjournal_restart(struct kjournal *j, char *err, size_t errlen)
{
	char *dir = xstrdup(j->path), *slash = strrchr(dir, '/');
	bool nosync = j->nosync;
	int ret;

	*slash = '\0';
	for (int i = 1; i < 10000; i++) {
		char *old = xasprintf("%s.%d", j->path, i);
		struct stat st;

		if (stat(old, &st) && errno == ENOENT) {
			if (rename(j->path, old)) {
				snprintf(err, errlen, "cannot move %s to %s: %s",
					 j->path, old, strerror(errno));
				free(old);
				free(dir);
				return -1;
			}
			free(old);
			break;
		}
		free(old);
	}
	kjournal_close(j);
	ret = kjournal_open(j, dir, err, errlen);
	j->nosync = nosync;
	free(dir);
	return ret;
}
