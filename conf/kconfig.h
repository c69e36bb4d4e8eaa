/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel .config files and config fragments (MIN_CONFIG, ADD_CONFIG, a
 * config bisect's good and bad configs): the settings
 *
 *	CONFIG_X=y | m | "string" | 123 | 0x1f
 *	# CONFIG_X is not set
 *
 * in file order, every other line (comments, blanks) kept where it was, so
 * a file read and written back is unchanged. Names are kept whole
 * ("CONFIG_X"), as ktest.pl keyed them.
 *
 * The prefix is kdotconfig_: kconfig_ is the ktest config model's.
 */
#ifndef KTEST_KDOTCONFIG_H
#define KTEST_KDOTCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/strmap.h"

struct kdotconfig_entry {
	char *name;		/* "CONFIG_X"; NULL for any other line */
	char *value;		/* "y", "\"text\"", ...; NULL for "is not set";
				 * the line itself when name is NULL */
	unsigned int line;	/* where it was read; 0 when set by a call */
};

struct kdotconfig {
	struct kdotconfig_entry *v;	/* file order; removed entries leave
					 * holes (name and value NULL) */
	size_t n, cap;
	size_t holes;
	struct strmap names;		/* name -> position in v + 1 */
	unsigned int bad;		/* lines starting "CONFIG" that are no
					 * setting ("CONFIG_X y"), kept as text */
	unsigned int first_bad;		/* the line number of the first one */
};

void kdotconfig_init(struct kdotconfig *c);
void kdotconfig_free(struct kdotconfig *c);

/*
 * Adds the lines of text to c. A name seen twice keeps its first place and
 * takes the later value (kconfig's own rule: the last assignment wins).
 */
void kdotconfig_parse(struct kdotconfig *c, const char *text, size_t len);
/* kdotconfig_parse() of a file. 0, or -1 with errno. */
int kdotconfig_read(struct kdotconfig *c, const char *path);

/* The file's text; a malloc'd string. */
char *kdotconfig_format(const struct kdotconfig *c);
/* Writes path through path.new and rename(). 0, or -1 with errno. */
int kdotconfig_write(const struct kdotconfig *c, const char *path);

/* The setting of name, or NULL when the file does not mention it. */
const struct kdotconfig_entry *kdotconfig_get(const struct kdotconfig *c,
					      const char *name);
/* Is name set to y or m? */
bool kdotconfig_enabled(const struct kdotconfig *c, const char *name);
/*
 * Sets name to value (NULL: "# name is not set") in its place, or at the
 * end when it is new. name must satisfy kdotconfig_name_ok().
 */
void kdotconfig_set(struct kdotconfig *c, const char *name, const char *value);
/* Drops the setting of name; false if there was none. */
bool kdotconfig_remove(struct kdotconfig *c, const char *name);

/*
 * ktest.pl's apply_min_config: every setting of force, in force's order,
 * is removed from c and appended at its end.
 */
void kdotconfig_force(struct kdotconfig *c, const struct kdotconfig *force);
/* Every setting of src set into dst with kdotconfig_set(): src wins. */
void kdotconfig_merge(struct kdotconfig *dst, const struct kdotconfig *src);

/* The settings in order: for (i = 0; (e = kdotconfig_next(c, &i)); ) */
const struct kdotconfig_entry *kdotconfig_next(const struct kdotconfig *c,
					       size_t *iter);
/* How many settings. */
size_t kdotconfig_count(const struct kdotconfig *c);

/*
 * One setting that differs between two configs. A name one side does not
 * mention differs only when the other side enables or sets it: absent and
 * "is not set" both mean n. Values point into the configs.
 */
struct kdotconfig_change {
	const char *name;
	const char *a, *b;	/* the values; NULL: not set or absent */
	bool in_a, in_b;	/* mentioned at all */
};

/*
 * The settings that differ between a and b: in b's order, then the names
 * only a mentions in a's order. *out is malloc'd (free() it). Returns how
 * many.
 */
size_t kdotconfig_diff(const struct kdotconfig *a, const struct kdotconfig *b,
		       struct kdotconfig_change **out);

/* Does c hold value v (NULL: not set or absent) for name? */
bool kdotconfig_has_value(const struct kdotconfig *c, const char *name,
			  const char *v);

/* "CONFIG_" followed by letters, digits and underscores. */
bool kdotconfig_name_ok(const char *name);

#endif
