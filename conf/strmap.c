// SPDX-License-Identifier: GPL-2.0-only
#include "strmap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
	fputs("ktest: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* FNV-1a: short keys, no adversary worth a keyed hash here */
static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

void strmap_init(struct strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void strmap_free(struct strmap *m, void (*free_value)(void *))
{
	for (size_t i = 0; i < m->nentries; i++) {
		free(m->entries[i].key);
		if (free_value && m->entries[i].live && m->entries[i].value)
			free_value(m->entries[i].value);
	}
	free(m->entries);
	free(m->index);
	strmap_init(m);
}

/* Slot of key in the index, or of the empty slot where it would go. */
static size_t find_slot(const struct strmap *m, const char *key)
{
	size_t mask = m->nindex - 1;
	size_t i = hash(key) & mask;

	for (;;) {
		size_t e = m->index[i];

		if (!e || !strcmp(m->entries[e - 1].key, key))
			return i;
		i = (i + 1) & mask;
	}
}

static void rehash(struct strmap *m)
{
	size_t n = m->nindex ? m->nindex * 2 : 16;

	free(m->index);
	m->nindex = n;
	m->index = xcalloc(n, sizeof(*m->index));
	for (size_t e = 0; e < m->nentries; e++)
		m->index[find_slot(m, m->entries[e].key)] = e + 1;
}

static struct strmap_entry *lookup(const struct strmap *m, const char *key)
{
	size_t e;

	if (!m->nindex)
		return NULL;
	e = m->index[find_slot(m, key)];
	return e ? &m->entries[e - 1] : NULL;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_entry *e = lookup(m, key);

	return e && e->live ? e->value : NULL;
}

bool strmap_has(const struct strmap *m, const char *key)
{
	struct strmap_entry *e = lookup(m, key);

	return e && e->live;
}

void *strmap_put(struct strmap *m, const char *key, void *value)
{
	struct strmap_entry *e = lookup(m, key);
	void *old;

	if (e) {
		old = e->live ? e->value : NULL;
		if (!e->live)
			m->live++;
		e->value = value;
		e->live = true;
		return old;
	}
	if ((m->nentries + 1) * 2 > m->nindex)
		rehash(m);
	if (m->nentries == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->entries = xrealloc(m->entries, m->cap * sizeof(*m->entries));
	}
	e = &m->entries[m->nentries++];
	e->key = xstrdup(key);
	e->value = value;
	e->live = true;
	m->index[find_slot(m, key)] = m->nentries;
	m->live++;
	return NULL;
}

/* Deleted entries keep their slot (tombstone) so the probe chains stay whole. */
void *strmap_del(struct strmap *m, const char *key)
{
	struct strmap_entry *e = lookup(m, key);
	void *old;

	if (!e || !e->live)
		return NULL;
	old = e->value;
	e->value = NULL;
	e->live = false;
	m->live--;
	return old;
}

size_t strmap_size(const struct strmap *m)
{
	return m->live;
}

bool strmap_next(const struct strmap *m, size_t *iter, const char **key,
		 void **value)
{
	while (*iter < m->nentries) {
		const struct strmap_entry *e = &m->entries[(*iter)++];

		if (!e->live)
			continue;
		if (key)
			*key = e->key;
		if (value)
			*value = e->value;
		return true;
	}
	return false;
}

void sbuf_init(struct sbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void sbuf_free(struct sbuf *b)
{
	free(b->buf);
	sbuf_init(b);
}

static void grow(struct sbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	while (b->len + extra + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 64;
	b->buf = xrealloc(b->buf, b->cap);
}

void sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
	grow(b, n);
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void sbuf_adds(struct sbuf *b, const char *s)
{
	sbuf_addn(b, s, strlen(s));
}

void sbuf_addc(struct sbuf *b, char c)
{
	sbuf_addn(b, &c, 1);
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

char *sbuf_detach(struct sbuf *b)
{
	char *s = b->buf ? b->buf : xstrdup("");

	sbuf_init(b);
	return s;
}

const char *sbuf_str(const struct sbuf *b)
{
	return b->buf ? b->buf : "";
}
