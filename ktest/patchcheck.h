/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The patchcheck state machine: is a series bisectable? Every commit from
 * PATCHCHECK_START to PATCHCHECK_END, oldest first, must build (without new
 * warnings in the files it touches, and none beyond WARNINGS_FILE), and boot
 * and pass TEST as PATCHCHECK_TYPE asks. Pure: the runner does the work and
 * reports back.
 *
 * By default every commit is checked and every failure reported (knowing
 * each commit that breaks the series is the point); stop_at_first keeps
 * ktest.pl's behaviour of stopping at the first one.
 */
#ifndef KTEST_PATCHCHECK_H
#define KTEST_PATCHCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "ktest/bisect.h"	/* KB_ID_LEN */

enum kp_type { KP_BUILD, KP_BOOT, KP_TEST };

struct kp_options {
	enum kp_type type;		/* PATCHCHECK_TYPE */
	bool noclean;			/* BUILD_NOCLEAN */
	bool stop_at_first;		/* PATCHCHECK_STOP_AT_FIRST */
	bool warnings_file;		/* WARNINGS_FILE is set */
	const char *const *skip;	/* PATCHCHECK_SKIP, full ids */
	size_t nskip;
	const char *const *ignore_warnings;	/* IGNORE_WARNINGS, full or abbreviated */
	size_t nignore;
};

/* What to do for one commit. */
struct kp_step {
	bool done;		/* no more commits: see kpatchcheck_failures() */
	size_t index;		/* position in the series, from 0 */
	const char *id;
	bool clean;		/* build from clean (mrproper): first and last */
	bool check_touched;	/* fail on warnings in the files it touches */
	bool check_warnings_file;	/* fail on warnings not in WARNINGS_FILE */
	bool boot;		/* install and boot it */
	bool test;		/* run TEST on it */
};

enum kp_stage { KP_OK, KP_FAIL_BUILD, KP_FAIL_WARNING, KP_FAIL_BOOT,
		KP_FAIL_TEST };

struct kp_failure {
	const char *id;
	enum kp_stage stage;
	char *why;		/* "drivers/foo.c built with warnings", ... */
};

struct kpatchcheck;

/*
 * ids: the series, oldest first (from kvcs_range or kvcs_cherry). Commits
 * in o->skip are left out (and listed by kpatchcheck_skipped()).
 */
struct kpatchcheck *kpatchcheck_new(const char *const *ids, size_t n,
				    const struct kp_options *o);
void kpatchcheck_free(struct kpatchcheck *p);

void kpatchcheck_next(struct kpatchcheck *p, struct kp_step *step);
/* The outcome of the step last handed out; why may be NULL for KP_OK. */
void kpatchcheck_report(struct kpatchcheck *p, enum kp_stage stage,
			const char *why);

/*
 * A failure of an earlier commit found after its step was reported (its
 * boot on a box of a pool, once its build had passed): kept in series
 * order. With stop_at_first, only the series' first failure stays, and
 * nothing more is handed out. An id not in the series is ignored.
 */
void kpatchcheck_late_failure(struct kpatchcheck *p, const char *id,
			      enum kp_stage stage, const char *why);

/* id's place in the series (0 is the oldest), or the series' length. */
size_t kpatchcheck_index(const struct kpatchcheck *p, const char *id);

size_t kpatchcheck_failures(const struct kpatchcheck *p,
			    const struct kp_failure **f);
size_t kpatchcheck_skipped(const struct kpatchcheck *p, const char ***ids);
size_t kpatchcheck_total(const struct kpatchcheck *p);

/* ---- warnings (pure; the runner feeds the build log line by line) ---- */

/*
 * ktest.pl's warning regex .*:.*(warning|error|Error):.* normalised by
 * dropping the column of "file:line:col:", turning U+2018/U+2019 quotes
 * into ', and dropping srcdir/ (and leading ../ or ./) from the path, so a
 * warnings file made from another build directory still matches. Returns a
 * malloc'd string, or NULL when the line is no warning.
 */
char *kp_warning_normalize(const char *line, const char *srcdir);

/*
 * The file a compiler diagnostic line names (the part before the first
 * ':'), as a path relative to the source tree; NULL if the line is none.
 */
char *kp_warning_file(const char *line, const char *srcdir);

/*
 * Does a warning line blame one of the files the commit touches? Returns
 * the touched path it names, or NULL.
 */
const char *kp_warning_in_touched(const char *line, const char *srcdir,
				  const char *const *touched, size_t ntouched);

/*
 * The warnings each file had when it was last built, so that a commit is
 * blamed for the warnings it brings into the files it touches and not for
 * ones they already had (ktest.pl blames both: touching a file rebuilds it
 * and its old warnings come back). A warning is its file and its text
 * without the line number, which an edit above it moves. The runner hands
 * every line of a build log to kp_seen_line() and closes the build with
 * kp_seen_build_done(). A file not built yet has no past: all its warnings
 * are new, as in ktest.pl.
 */
struct kp_seen;

struct kp_seen *kp_seen_new(void);
void kp_seen_free(struct kp_seen *s);
/* Records a log line; true if it is a warning its file did not have. */
bool kp_seen_line(struct kp_seen *s, const char *line, const char *srcdir);
/*
 * This build's warnings become their files' past. touched: the commit's
 * files if the build succeeded (those that said nothing have no warnings
 * now); NULL after a failed build, which may not have got to them.
 */
void kp_seen_build_done(struct kp_seen *s, const char *const *touched,
			size_t ntouched);

/* Is id in the IGNORE_WARNINGS list (full or abbreviated ids, >= 4 hex)? */
bool kp_ignored(const struct kp_options *o, const char *id);

#endif
