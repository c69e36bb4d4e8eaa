/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config model: what both readers fill and everything else reads.
 *
 * It keeps ktest.pl's key space, because its run-time semantics are defined
 * on it: a default option is stored as "NAME", a per-test one as "NAME[n]"
 * (n counts from 1), ITERATE blocks as (first test, count). Each stored value
 * remembers the file:line it came from. Values are stored after read-time
 * expansion (config variables, ${shell ...}); run-time expansion (${OPTION},
 * KERNEL_VERSION, =~ edits) happens when a test asks for a value, through
 * kconfig_resolve() and the typed getters below. Nothing reads the stored
 * strings behind that API's back.
 */
#ifndef KTEST_MODEL_H
#define KTEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "options.h"
#include "strmap.h"

struct kval {
	char *value;
	struct korigin origin;
};

struct keval {			/* one "NAME =~ s/a/b/" line */
	char *expr;
	struct korigin origin;
};

struct kevals {
	struct keval *v;
	size_t n;
};

struct krepeat {		/* TEST_START ITERATE count */
	int first;
	int count;
};

/* Asked for ${KERNEL_VERSION} at run time; returns 0 and a malloc'd string. */
typedef int (*kconfig_version_fn)(void *ctx, char **out);

struct kconfig {
	struct strmap opts;	/* key -> struct kval * */
	struct strmap evals;	/* key -> struct kevals * */
	struct strmap vars;	/* config variable (:=) -> char * (read time) */
	struct strmap locked;	/* variables set by -D VAR:=, file can't change */
	struct strmap used;	/* names met as ${NAME} while reading */
	struct strmap files;	/* interned file names for origins */
	struct krepeat *repeats;
	size_t nrepeats;
	int num_tests;		/* after reading: tests to run */
	bool test_case;		/* a TEST_START or DEFAULTS header was seen */
	bool allow_shell;	/* ${shell CMD} runs CMD (default true) */
	bool no_includes;	/* refuse INCLUDE / include() (fuzzing) */
	bool native;		/* read from the native format: name options
				 * in messages the way it writes them */
	const char *main_file;	/* the config named on the command line */

	kconfig_version_fn kernel_version;
	void *kernel_version_ctx;

	struct kdiag *diag;
};

void kconfig_init(struct kconfig *c, struct kdiag *d);
void kconfig_free(struct kconfig *c);

/* A file name that lives as long as the config (for origins). */
const char *kconfig_intern(struct kconfig *c, const char *file);

/* ---- storing (the readers) ---- */

struct kval *kconfig_lookup(const struct kconfig *c, const char *key);
/* Stores (replacing) key = value. */
void kconfig_store(struct kconfig *c, const char *key, const char *value,
		   const struct korigin *o);
void kconfig_add_eval(struct kconfig *c, const char *key, const char *expr,
		      const struct korigin *o);
void kconfig_add_repeat(struct kconfig *c, int first, int count);
/* The first test of the ITERATE block holding test i, or 0. */
int kconfig_repeat_parent(const struct kconfig *c, int i);
/* ITERATE count if test i starts a block, else 1. */
int kconfig_repeat_count(const struct kconfig *c, int i);

/* Config variables (:=). An empty value deletes, as in ktest.pl. */
void kconfig_set_var(struct kconfig *c, const char *name, const char *value);
const char *kconfig_get_var(const struct kconfig *c, const char *name);

/* Splits "NAME[3]" into "NAME" and 3; *test = 0 for a plain name. */
void kconfig_split_key(const char *key, char *name, size_t namelen, int *test);

/*
 * Read-time expansion (ktest.pl's process_variables, with the upstream 6.9
 * nesting and 6.2 ${shell CMD}): config variables are substituted, innermost
 * first; unknown names stay as they are and are remembered as used (or become
 * 0 when remove_undef, for IF expressions). Returns a malloc'd string, or
 * NULL after reporting an error at o.
 */
char *kconfig_expand_vars(struct kconfig *c, const char *value,
			  bool remove_undef, const struct korigin *o);

/* After reading: fill in ktest.pl's defaults for options left unset. */
void kconfig_apply_defaults(struct kconfig *c);

/* ---- reading values (everyone else) ---- */

/*
 * The value test i uses for option name, exactly as ktest.pl's
 * set_test_option(): NAME[i], else NAME[first test of i's ITERATE block],
 * else NAME; blank means undefined; then ${...} expanded until stable (at
 * most 100 rounds), then the =~ edits. *out is NULL when undefined.
 * i = -1 reads the default only (LOG_FILE). Returns 0, or -1 after
 * reporting an error (recursion, a bad =~ edit) with the value's origin.
 */
int kconfig_resolve(struct kconfig *c, const char *name, int i, char **out);

/* The same for a known option; *origin (may be NULL) gets where it was set. */
int kconfig_get(struct kconfig *c, enum kopt_id id, int i, char **out,
		struct korigin *origin);
/* Typed: a missing value gives the fallback; a bad one is an error (-1). */
int kconfig_get_int(struct kconfig *c, enum kopt_id id, int i, long fallback,
		    long *out);
int kconfig_get_bool(struct kconfig *c, enum kopt_id id, int i, bool *out);

/* An option's name as the config's format writes it (for messages). */
const char *kconfig_opt_name(const struct kconfig *c, enum kopt_id id);

/* The =~ edits test i applies to option name, or NULL. */
const struct kevals *kconfig_evals(const struct kconfig *c, const char *name,
				   int i);

/* The stored (unexpanded) value test i would start from, or NULL. */
const struct kval *kconfig_raw(const struct kconfig *c, const char *name, int i);

/* ---- checks (ktest check, and before every run) ---- */

/*
 * Unknown option names that nothing references (ktest.pl's "could be a
 * typo" list), each reported with its file:line and the nearest known name.
 * IGNORE_UNUSED = 1 skips it. Returns how many there are.
 */
int kconfig_check_unused(struct kconfig *c);

/*
 * Every option of every test resolves, and fits its type. Reports every
 * problem; returns how many.
 */
int kconfig_check_values(struct kconfig *c);

/* How much of the lab a test needs (what ktest.pl calls buildonly). */
enum klevel {
	KLEVEL_BUILD = 1,	/* build only */
	KLEVEL_INSTALL = 2,	/* build and install over ssh */
	KLEVEL_BOOT = 0,	/* everything: power, console, reboot */
};
enum klevel kconfig_test_level(struct kconfig *c, int i);

/*
 * Mandatory options missing for some test. Asks on a tty (when ask is
 * non-NULL and says so); otherwise lists every missing one. Returns the
 * number still missing.
 */
typedef char *(*kconfig_ask_fn)(void *ctx, const char *name, const char *help);
int kconfig_check_mandatory(struct kconfig *c, kconfig_ask_fn ask, void *ctx);

#endif
