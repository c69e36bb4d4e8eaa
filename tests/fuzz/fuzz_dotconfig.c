// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the .config reader and writer (conf/kconfig.h), and
 * what config bisect and make_min_config do with two configs: diff, merge,
 * force, remove.
 *
 * Checked, aborting when broken:
 *  - the round trip kconfig.h promises: a file read and written back is
 *    unchanged. It holds for a file as kconfig writes one: lines ending in
 *    '\n', no '\r' or NUL byte, no name set twice, no blanks after "is not
 *    set" (those are read and written in their canonical form);
 *  - for any input without '\r' or NUL: writing what was read is a fixed
 *    point (read and written again, it does not change);
 *  - diff lists exactly the names whose values differ; after a merge or a
 *    force, the target holds every setting of the source.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/kconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file as kconfig writes it: the round trip must be exact. */
static bool canonical(const char *s, size_t n, const struct kdotconfig *c)
{
	size_t lines = 0;

	if (n && s[n - 1] != '\n')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r' || s[i] == '\0')
			return false;
		if (s[i] == '\n') {
			if (i && (s[i - 1] == ' ' || s[i - 1] == '\t'))
				return false;
			lines++;
		}
	}
	/* every line has an entry of its own: no name was set twice */
	return c->n == lines;
}

static char *reformat(const char *text)
{
	struct kdotconfig c;
	char *out;

	kdotconfig_init(&c);
	kdotconfig_parse(&c, text, strlen(text));
	out = kdotconfig_format(&c);
	kdotconfig_free(&c);
	return out;
}

static void check_diff(const struct kdotconfig *a, const struct kdotconfig *b)
{
	struct kdotconfig_change *ch;
	size_t n = kdotconfig_diff(a, b, &ch);

	for (size_t i = 0; i < n; i++) {
		if (!kdotconfig_name_ok(ch[i].name))
			abort();
		if (!kdotconfig_has_value(a, ch[i].name, ch[i].a) ||
		    !kdotconfig_has_value(b, ch[i].name, ch[i].b))
			abort();
		if (kdotconfig_has_value(a, ch[i].name, ch[i].b))
			abort();
	}
	free(ch);
}

static void check_holds(const struct kdotconfig *c,
			const struct kdotconfig *src)
{
	const struct kdotconfig_entry *e;
	struct kdotconfig_change *ch;
	size_t i = 0;

	while ((e = kdotconfig_next(src, &i)))
		if (!kdotconfig_has_value(c, e->name, e->value))
			abort();
	/* then nothing of src differs, except names src leaves unset */
	i = kdotconfig_diff(c, src, &ch);
	while (i--)
		if (ch[i].in_b)
			abort();
	free(ch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	bool plain = !memchr(s, '\r', size) && !memchr(s, '\0', size);
	struct kdotconfig a, b;
	const struct kdotconfig_entry *e;
	char *out, *again;
	size_t i = 0, half = size / 2, removed = 0, count;

	kdotconfig_init(&a);
	kdotconfig_parse(&a, s, size);
	out = kdotconfig_format(&a);
	if (canonical(s, size, &a) &&
	    (strlen(out) != size || memcmp(out, s, size)))
		abort();
	if (plain) {
		again = reformat(out);
		if (strcmp(out, again))
			abort();
		free(again);
	}
	free(out);

	/* the second half of the input as the other config */
	while (half && half < size && s[half - 1] != '\n')
		half++;
	kdotconfig_init(&b);
	kdotconfig_parse(&b, s + half, size - half);
	check_diff(&a, &b);
	check_diff(&b, &a);

	kdotconfig_merge(&a, &b);
	check_holds(&a, &b);
	kdotconfig_force(&b, &a);
	check_holds(&b, &a);

	/* drop every other setting; what is left is written and read back */
	count = kdotconfig_count(&b);
	for (i = 0; (e = kdotconfig_next(&a, &i)); )
		if (i % 2 && kdotconfig_remove(&b, e->name))
			removed++;
	if (kdotconfig_count(&b) != count - removed)
		abort();
	out = kdotconfig_format(&b);
	kdotconfig_free(&a);
	kdotconfig_init(&a);
	kdotconfig_parse(&a, out, strlen(out));
	if (plain && kdotconfig_count(&a) != kdotconfig_count(&b))
		abort();
	free(out);

	kdotconfig_free(&a);
	kdotconfig_free(&b);
	return 0;
}
