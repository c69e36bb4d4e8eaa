// SPDX-License-Identifier: GPL-2.0-only
/*
 * .config files: an ordered list of lines with an index by name.
 *
 * The parser accepts what scripts/kconfig/confdata.c accepts, slightly
 * stricter: "CONFIG_X=value" with nothing between the name and '=', and
 * "# CONFIG_X is not set" (trailing blanks allowed). A line that starts
 * with CONFIG but is neither ("CONFIG_X y", "CONFIG_X = y") is counted as
 * bad and kept as text: kconfig ignores such a line too, so a fragment
 * with a typo silently forces nothing, and the caller can say so.
 */
#include "conf/kconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX		"CONFIG_"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)
#define NOT_SET		" is not set"

void kdotconfig_init(struct kdotconfig *c)
{
	memset(c, 0, sizeof(*c));
	strmap_init(&c->names);
}

void kdotconfig_free(struct kdotconfig *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].value);
	}
	free(c->v);
	strmap_free(&c->names, NULL);
	kdotconfig_init(c);
}

static bool name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

/* Length of the name at s ("CONFIG_" and at least one more), or 0. */
static size_t name_len(const char *s, size_t len)
{
	size_t i = PREFIX_LEN;

	if (len <= PREFIX_LEN || memcmp(s, PREFIX, PREFIX_LEN))
		return 0;
	while (i < len && name_char(s[i]))
		i++;
	return i > PREFIX_LEN ? i : 0;
}

bool kdotconfig_name_ok(const char *name)
{
	size_t len = strlen(name);

	return len && name_len(name, len) == len;
}

static size_t pos_of(const struct kdotconfig *c, const char *name)
{
	return (size_t)(uintptr_t)strmap_get(&c->names, name);
}

static struct kdotconfig_entry *append(struct kdotconfig *c)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	return &c->v[c->n++];
}

/* name and value are taken over. */
static void put(struct kdotconfig *c, char *name, char *value,
		unsigned int line)
{
	size_t pos = pos_of(c, name);
	struct kdotconfig_entry *e;

	if (pos) {
		e = &c->v[pos - 1];
		free(e->value);
		e->value = value;
		free(name);
		return;
	}
	e = append(c);
	e->name = name;
	e->value = value;
	e->line = line;
	strmap_put(&c->names, name, (void *)(uintptr_t)c->n);
}

/* "# CONFIG_X is not set": the length of the name, or 0. */
static size_t not_set_len(const char *s, size_t len)
{
	size_t n, rest;

	if (len < 2 || memcmp(s, "# ", 2))
		return 0;
	n = name_len(s + 2, len - 2);
	rest = len - 2 - n;
	if (!n || rest < strlen(NOT_SET) ||
	    memcmp(s + 2 + n, NOT_SET, strlen(NOT_SET)))
		return 0;
	for (size_t i = 2 + n + strlen(NOT_SET); i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return n;
}

static void parse_line(struct kdotconfig *c, const char *s, size_t len,
		       unsigned int line)
{
	struct kdotconfig_entry *e;
	size_t n;

	n = name_len(s, len);
	if (n && n < len && s[n] == '=') {
		put(c, xstrndup(s, n), xstrndup(s + n + 1, len - n - 1), line);
		return;
	}
	n = not_set_len(s, len);
	if (n) {
		put(c, xstrndup(s + 2, n), NULL, line);
		return;
	}
	if (len >= 6 && !memcmp(s, "CONFIG", 6) && !c->bad++)
		c->first_bad = line;
	e = append(c);
	e->value = xstrndup(s, len);
	e->line = line;
}

void kdotconfig_parse(struct kdotconfig *c, const char *text, size_t len)
{
	unsigned int line = 0;
	size_t start = 0;

	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t l = end - start;

		if (l && text[end - 1] == '\r')
			l--;
		parse_line(c, text + start, l, ++line);
		start = end + 1;
	}
}

int kdotconfig_read(struct kdotconfig *c, const char *path)
{
	struct sbuf b;
	char chunk[65536];
	size_t n;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return -1;
	sbuf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_addn(&b, chunk, n);
	err = ferror(f) ? EIO : 0;
	fclose(f);
	if (!err)
		kdotconfig_parse(c, sbuf_str(&b), b.len);
	sbuf_free(&b);
	errno = err;
	return err ? -1 : 0;
}

char *kdotconfig_format(const struct kdotconfig *c)
{
	struct sbuf b;

	sbuf_init(&b);
	for (size_t i = 0; i < c->n; i++) {
		const struct kdotconfig_entry *e = &c->v[i];

		if (!e->name && !e->value)
			continue;
		if (!e->name)
			sbuf_addf(&b, "%s\n", e->value);
		else if (e->value)
			sbuf_addf(&b, "%s=%s\n", e->name, e->value);
		else
			sbuf_addf(&b, "# %s is not set\n", e->name);
	}
	return sbuf_detach(&b);
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int kdotconfig_write(const struct kdotconfig *c, const char *path)
{
	char *tmp = xasprintf("%s.new", path);
	char *text = kdotconfig_format(c);
	int fd, ret = -1, err;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto out;
	if (write_all(fd, text, strlen(text)) < 0) {
		err = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		err = errno;
		goto fail;
	}
	ret = 0;
	goto out;
fail:
	unlink(tmp);
	errno = err;
out:
	free(tmp);
	free(text);
	return ret;
}

const struct kdotconfig_entry *kdotconfig_get(const struct kdotconfig *c,
					      const char *name)
{
	size_t pos = pos_of(c, name);

	return pos ? &c->v[pos - 1] : NULL;
}

bool kdotconfig_enabled(const struct kdotconfig *c, const char *name)
{
	const struct kdotconfig_entry *e = kdotconfig_get(c, name);

	return e && e->value &&
	       (!strcmp(e->value, "y") || !strcmp(e->value, "m"));
}

void kdotconfig_set(struct kdotconfig *c, const char *name, const char *value)
{
	put(c, xstrdup(name), value ? xstrdup(value) : NULL, 0);
}

/* Closes the holes once they are the larger part, so removal stays cheap. */
static void compact(struct kdotconfig *c)
{
	size_t k = 0;

	if (c->holes < 64 || c->holes * 2 < c->n)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (!c->v[i].name && !c->v[i].value)
			continue;
		c->v[k] = c->v[i];
		if (c->v[k].name)
			strmap_put(&c->names, c->v[k].name,
				   (void *)(uintptr_t)(k + 1));
		k++;
	}
	c->n = k;
	c->holes = 0;
}

bool kdotconfig_remove(struct kdotconfig *c, const char *name)
{
	size_t pos = pos_of(c, name);
	struct kdotconfig_entry *e;

	if (!pos)
		return false;
	strmap_del(&c->names, name);
	e = &c->v[pos - 1];
	free(e->name);
	free(e->value);
	e->name = NULL;
	e->value = NULL;
	c->holes++;
	compact(c);
	return true;
}

void kdotconfig_force(struct kdotconfig *c, const struct kdotconfig *force)
{
	const struct kdotconfig_entry *e;
	size_t i = 0;

	while ((e = kdotconfig_next(force, &i))) {
		kdotconfig_remove(c, e->name);
		kdotconfig_set(c, e->name, e->value);
	}
}

void kdotconfig_merge(struct kdotconfig *dst, const struct kdotconfig *src)
{
	const struct kdotconfig_entry *e;
	size_t i = 0;

	while ((e = kdotconfig_next(src, &i)))
		kdotconfig_set(dst, e->name, e->value);
}

const struct kdotconfig_entry *kdotconfig_next(const struct kdotconfig *c,
					       size_t *iter)
{
	while (*iter < c->n) {
		const struct kdotconfig_entry *e = &c->v[(*iter)++];

		if (e->name)
			return e;
	}
	return NULL;
}

size_t kdotconfig_count(const struct kdotconfig *c)
{
	return strmap_size(&c->names);
}

static const char *value_of(const struct kdotconfig *c, const char *name,
			    bool *present)
{
	const struct kdotconfig_entry *e = kdotconfig_get(c, name);

	*present = e != NULL;
	return e ? e->value : NULL;
}

static bool same_value(const char *x, const char *y)
{
	if (!x || !y)
		return x == y;
	return !strcmp(x, y);
}

bool kdotconfig_has_value(const struct kdotconfig *c, const char *name,
			  const char *v)
{
	bool present;

	return same_value(value_of(c, name, &present), v);
}

static void add_change(struct kdotconfig_change **v, size_t *n, size_t *cap,
		       const struct kdotconfig_change *ch)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = *ch;
}

size_t kdotconfig_diff(const struct kdotconfig *a, const struct kdotconfig *b,
		       struct kdotconfig_change **out)
{
	const struct kdotconfig_entry *e;
	struct kdotconfig_change ch;
	size_t n = 0, cap = 0, i;

	*out = NULL;
	for (i = 0; (e = kdotconfig_next(b, &i)); ) {
		ch.name = e->name;
		ch.b = e->value;
		ch.in_b = true;
		ch.a = value_of(a, e->name, &ch.in_a);
		if (!same_value(ch.a, ch.b))
			add_change(out, &n, &cap, &ch);
	}
	for (i = 0; (e = kdotconfig_next(a, &i)); ) {
		if (kdotconfig_get(b, e->name) || !e->value)
			continue;
		ch.name = e->name;
		ch.a = e->value;
		ch.in_a = true;
		ch.b = NULL;
		ch.in_b = false;
		add_change(out, &n, &cap, &ch);
	}
	return n;
}
