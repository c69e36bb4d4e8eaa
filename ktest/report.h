/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine-readable result of a run: every test, and every step of it
 * (a build, install, boot and test of one commit), with its verdict, why,
 * crash title and durations. Written as JSON after every step (temp file,
 * then rename), so a run killed at any moment leaves a whole report.
 *
 * The "kcidb" member holds the same facts as KernelCI KCIDB v4 objects:
 * one checkout per commit, one build per step that built, one test per
 * boot and per test run (doc/report.md).
 */
#ifndef KTEST_REPORT_H
#define KTEST_REPORT_H

#include <stdbool.h>
#include <stddef.h>

enum kverdict { KV_NONE, KV_GOOD, KV_BAD, KV_SKIP, KV_INFRA };

const char *kverdict_name(enum kverdict v);
enum kverdict kverdict_parse(const char *s);

/* Phases of a step, for their durations. */
enum kphase { KPH_BUILD, KPH_INSTALL, KPH_BOOT, KPH_TEST, KPH__COUNT };

struct kstep_report {
	int n;			/* 1, 2, ... within its test */
	char *kind;		/* "build", "bisect", "patchcheck", ... */
	char *commit;		/* full id, or NULL (no git) */
	char *subject;
	char *config;		/* the .config used */
	enum kverdict verdict;
	char *why;		/* "build failed: exit 2", "boot: Kernel panic" */
	char *title;		/* crash title, or NULL */
	char *failed_phase;	/* "build", "boot", ... or NULL */
	long ms[KPH__COUNT];	/* -1: the phase did not run */
	bool resumed;		/* taken from the journal, not run again */
	char *started;		/* ISO 8601 UTC: when the step began */
};

struct ktest_report {
	int index;
	char *name, *type, *subtype;
	enum kverdict verdict;
	char *why;
	char *result_commit;	/* bisect: the first bad commit */
	char *result_subject;
	char *result_options;	/* config_bisect: the culprit options,
				 * space-separated */
	bool flaky;		/* a flaky bisect: the two below are set */
	double confidence;	/* its confidence in the answer, 0 to 1 */
	long runs;		/* its runs of commits, in all */
	struct kstep_report *steps;
	size_t nsteps;
	/* KCIDB facts, NULL when unknown */
	char *git_url;		/* BUILD_DIR's origin remote (https:// or git://) */
	char *git_branch;	/* the branch checked out when the test began */
	char *head;		/* HEAD then: the commit of steps that have none */
	char *arch;		/* ARCH= of MAKE_CMD/BUILD_OPTIONS, or arch/X/ of BUILD_TARGET */
	char *config_name;	/* BUILD_TYPE */
	char *log_url;		/* file:// of LOG_FILE */
};

struct kresults {
	char *config;
	char *origin;			/* KCIDB origin (KCIDB_ORIGIN), NULL: ktest */
	char *started, *finished;	/* ISO 8601 UTC */
	/* KCIDB ids' run part: the start, the pid and its microseconds */
	char *run;
	struct ktest_report *tests;
	size_t ntests;
};

void kresults_init(struct kresults *r, const char *config);
void kresults_free(struct kresults *r);
/* Adds a test; the pointer is valid until the next kresults_test(). */
struct ktest_report *kresults_test(struct kresults *r, int index,
				  const char *name, const char *type,
				  const char *subtype);
/* Adds a step to t with every duration unset. */
struct kstep_report *kresults_step(struct ktest_report *t, const char *kind,
				  const char *commit, const char *subject);
void kresults_set(char **field, const char *value);
/* Marks the run finished (sets finished to now). */
void kresults_finish(struct kresults *r);

/* Writes the JSON to path (path.tmp, fsync, rename). 0 or -1 with errno. */
int kresults_write(const struct kresults *r, const char *path);

/*
 * Writes the KCIDB v4 document alone (version, checkouts, builds, tests) to
 * path, the same way. 0 or -1 with errno.
 */
int kresults_write_kcidb(const struct kresults *r, const char *path);

/* Is s a KCIDB origin ([a-z0-9_]+)? */
bool kcidb_origin_ok(const char *s);

/* ISO 8601 UTC of now, malloc'd. */
char *kresults_now(void);

#endif
