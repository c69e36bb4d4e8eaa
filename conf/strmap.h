/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An insertion-ordered string-keyed hash map, and a growable string buffer.
 * Iteration order is the order keys were first inserted, so everything
 * built on it (dumps, conversions) is deterministic.
 */
#ifndef KTEST_STRMAP_H
#define KTEST_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct strmap_entry {
	char *key;
	void *value;
	bool live;
};

struct strmap {
	struct strmap_entry *entries;	/* in insertion order */
	size_t nentries, cap;
	size_t *index;			/* open addressing: entry number + 1 */
	size_t nindex;
	size_t live;
};

void strmap_init(struct strmap *m);
/* free_value may be NULL */
void strmap_free(struct strmap *m, void (*free_value)(void *));

void *strmap_get(const struct strmap *m, const char *key);
bool strmap_has(const struct strmap *m, const char *key);
/* Inserts or replaces; returns the previous value (or NULL). Aborts on ENOMEM. */
void *strmap_put(struct strmap *m, const char *key, void *value);
/* Removes; returns the value that was there (or NULL). */
void *strmap_del(struct strmap *m, const char *key);
size_t strmap_size(const struct strmap *m);

/* for (i = 0; strmap_next(m, &i, &k, &v); ) */
bool strmap_next(const struct strmap *m, size_t *iter, const char **key,
		 void **value);

struct sbuf {
	char *buf;
	size_t len, cap;
};

void sbuf_init(struct sbuf *b);
void sbuf_free(struct sbuf *b);
void sbuf_addn(struct sbuf *b, const char *s, size_t n);
void sbuf_adds(struct sbuf *b, const char *s);
void sbuf_addc(struct sbuf *b, char c);
void sbuf_addf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_reset(struct sbuf *b);
/* Hands the string over to the caller (never NULL); the buffer is empty. */
char *sbuf_detach(struct sbuf *b);
/* Always a valid C string */
const char *sbuf_str(const struct sbuf *b);

/* Allocation helpers that abort with a message on ENOMEM. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
