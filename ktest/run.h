/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktest run: the test loop and what the runners of the test types share.
 *
 * One struct krun lives for the whole run. For the test being run it holds
 * the resolved options (a cache, dropped when the kernel version changes),
 * the per-test files, and the report entry. Every step goes through
 * krun_step(): it is journalled before and after, so a rerun of the same
 * config resumes where the last one stopped.
 */
#ifndef KTEST_RUN_H
#define KTEST_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "conf/model.h"
#include "ktest/cmd.h"
#include "ktest/journal.h"
#include "ktest/report.h"

struct kvcs;
struct kp_seen;
struct krun_lab;

struct kstep_opts;
struct kstep_result;

struct krun {
	struct kconfig *c;
	const char *config_path;
	FILE *log;			/* LOG_FILE, or NULL */
	char *log_path;
	char *state_dir;
	struct kjournal j;
	struct kresults report;
	char *report_path;
	const char *json_path;		/* --json FILE (also written) */
	const char *kcidb_path;		/* --kcidb FILE (also written) */
	int successes;
	int failures;
	bool infra;			/* the lab gave out */
	int infra_seen;			/* INFRA steps so far (health check) */
	bool unhealthy;			/* the box failed its health check */
	bool config_error;		/* an option is missing or wrong (exit 2) */
	bool die;			/* DIE_ON_FAILURE hit: stop the run */
	bool interrupted;
	bool reboot_success;		/* a test had REBOOT_ON_SUCCESS */
	char start_time[64];		/* for the mails, as ktest.pl's */
	long log_start;			/* LOG_FILE's size when the test began */

	/* the current test */
	int i;
	struct ktest_report *t;
	char *opts[KOPT__COUNT];	/* resolved values (NULL: unset) */
	bool have[KOPT__COUNT];
	bool masked[KOPT__COUNT];	/* unset for this test (krun_mask) */
	char **stale;			/* forgotten values, freed after the test */
	size_t nstale;
	char *buildlog, *testlog, *dmesg;	/* TMP_DIR/<name>-MACHINE */
	struct kvcs *vcs;		/* BUILD_DIR's repository, on demand */
	struct krun_lab *lab;		/* the box, power and console (run_box.c) */
	long ms[4];			/* print_times: build, install, boot, test */
	bool tty;			/* stdout is a terminal: progress lines */
	long run_t0;			/* CLOCK_MONOTONIC ms at the start */
	long steps_done;		/* steps run (not replayed) and their time */
	long steps_ms;
	/* the step's after_build when it waits for the box to have the
	 * kernel (kstep_opts.after_build_when_up): called by the boot on
	 * its first console line, once */
	void (*kernel_up)(void *ctx);
	void *kernel_up_ctx;
	/* the step's after_boot: called by the boot once SUCCESS_LINE is
	 * seen (before BOOTED_TIMEOUT's quiet time ends it), once */
	void (*kernel_booted)(void *ctx);
	void *kernel_booted_ctx;
	/* each run of a step, as it ends (a box of the pool hands its
	 * INFRA attempts up with it) */
	void (*step_done)(void *ctx, const struct kstep_opts *o,
			  const struct kstep_result *res);
	void *step_done_ctx;
	/* a box of the pool (pool.h): its lines start with prefix, and its
	 * steps go to the journal through the main process */
	const char *prefix;
	bool mid_line;		/* the last print did not end its line */
	bool log_mid_line;	/* the same, of krun_log */
	bool no_journal;
	/*
	 * Set while a step runs (by a kcmd watch's ready(), with the step's
	 * command stopped by kcmd_stop_running): its outcome is not needed;
	 * krun_step keeps nothing of it and returns 1
	 */
	bool cancel_step;
};

/* SIGINT came: stop at the next step boundary (the journal has the rest). */
bool krun_interrupted(struct krun *r);

/*
 * A second SIGINT came: the commands in flight were stopped, so the step
 * in flight has no outcome (krun_step makes it INFRA: run again).
 */
bool krun_stopped_hard(void);

/* Prints to stdout and LOG_FILE (ktest.pl's doprint). */
void krun_print(struct krun *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* To LOG_FILE only (command output). */
void krun_log(struct krun *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The value of option id for the current test (run-time expanded), or NULL
 * when unset. A value that does not resolve stops the run (config error).
 */
const char *krun_opt(struct krun *r, enum kopt_id id);
bool krun_bool(struct krun *r, enum kopt_id id);
long krun_int(struct krun *r, enum kopt_id id, long fallback);
/* Option id reads as unset until the test ends (config_bisect: MIN_CONFIG). */
void krun_mask(struct krun *r, enum kopt_id id);
/*
 * Forget resolved values (the kernel version changed). Strings handed out
 * stay valid until the test ends.
 */
void krun_forget(struct krun *r);

enum kstep_level { KSTEP_BUILD, KSTEP_INSTALL, KSTEP_BOOT, KSTEP_TEST };

/*
 * What a bisect or patchcheck step does, by its subtype option (BISECT_TYPE,
 * PATCHCHECK_TYPE): build, boot, or test (boot when TEST is not set).
 */
enum kstep_level krun_level(struct krun *r, enum kopt_id subtype);

/* The space-separated words of s, NULL-terminated (NULL for NULL). */
char **krun_words(const char *s, size_t *n);
void krun_words_free(char **v, size_t n);

/* The repository at BUILD_DIR (opened once); NULL after printing why. */
struct kvcs *krun_vcs(struct krun *r);
/*
 * Before a bisect or patchcheck, which check commits out in BUILD_DIR
 * with force: 0 when nothing would be lost, else -1 after naming the
 * files (a config error: commit or stash them). Local changes are ktest's
 * own, and left alone, once a checkout of this run has been made or when
 * the journal has a step of this test (a resumed run).
 */
int krun_check_tree(struct krun *r, struct kvcs *v);

/* ---- one step: checkout, build, (install, boot, test) ---- */


struct kstep_opts {
	const char *kind;	/* "build", "bisect", "patchcheck", ... */
	const char *commit;	/* check this out first (NULL: the tree as is) */
	const char *revert;	/* ...with this commit reverted on top */
	const char *key;	/* the step's name in the journal when it is
				 * not the commit (a config's digest) */
	const char *subject;
	enum kstep_level level;
	const char *build_type;	/* NULL: BUILD_TYPE */
	bool noclean;		/* override BUILD_NOCLEAN */
	bool check_warnings;	/* WARNINGS_FILE / check_buildlog */
	/* patchcheck: new warnings in these files fail the build */
	const char *const *touched;
	size_t ntouched;
	struct kp_seen *seen;
	bool force_checkout;	/* checkout even with local changes */
	bool checkout_only;	/* nothing else: the user tests it by hand
				 * (BISECT_MANUAL with BISECT_TRIES = 0) */
	bool digest_image;	/* res->image: the built image's digest */
	bool cache_build;	/* the per-commit build cache (build_cache.h) */
	bool built_before;	/* a later run of the commit: OUTPUT_DIR holds
				 * its build (build_type "nobuild") */
	const char *first_type;	/* built_before: the build type its first
				 * run cached it as (its packed modules) */
	bool cache_store;	/* into the cache, never from it (a build
				 * whose warnings are checked) */
	/* called once the build is good, before the box part; with
	 * after_build_when_up, only once the box has the kernel: at the
	 * boot's first console line (the built image, BUILD_DIR and
	 * OUTPUT_DIR are not read again by the step), and not at all when
	 * no boot shows a line */
	void (*after_build)(void *ctx);
	void *after_build_ctx;
	bool after_build_when_up;
	/* called once the boot has seen SUCCESS_LINE (the verdict can still
	 * change: a crash in BOOTED_TIMEOUT, the test), with after_build's
	 * ctx; not at all when no boot gets that far */
	void (*after_boot)(void *ctx);
	/* called before every attempt checks out or builds (a retried one
	 * too): what builds in BUILD_DIR and OUTPUT_DIR in the background
	 * stops */
	void (*before_tree)(void *ctx);
	void *before_tree_ctx;
	long settle_ms;		/* >= 0: reboot to good after, waiting this */
	/* for the progress line: commits left after this one, and about
	 * how many more steps (bisect: git's estimate); -1: unknown */
	long left;
	int steps_left;
};

struct kstep_result {
	enum kverdict verdict;
	char why[8192];
	char phase[16];		/* "build", "boot", ... that decided it */
	char title[256];	/* crash title */
	char release[256];	/* kernelrelease of what was built */
	char image[17];		/* FNV-1a 64 of the built image, hex ("": none) */
	int test_status;	/* TEST's exit status (-1: a signal) */
	bool resumed;		/* from the journal: nothing ran */
	long ms[KPH__COUNT];	/* the phases' durations (-1: not run) */
};

/*
 * Runs (or, when the journal has its outcome, replays) one step and adds it
 * to the report. Returns 0, or -1 when the run must stop (the journal
 * cannot be written, SIGINT), or 1 when r->cancel_step was set while it
 * ran (nothing of it reported or journalled as done: a rerun runs it).
 */
int krun_step(struct krun *r, const struct kstep_opts *o,
	      struct kstep_result *res);

/*
 * krun_step, and a step the lab failed (INFRA) run again as a new step
 * ("<kind>-retry1", "-retry2"): INFRA_RETRIES times (unset: 2), after
 * INFRA_RETRY_DELAY seconds doubled each time, after the box booted its
 * good kernel (INFRA_HEALTH_CHECK); then the run stops (r->infra) naming
 * the box and why. what names the step in messages. Prints the times
 * after. Returns 0 with res (not INFRA), or -1; 1 as krun_step.
 */
int krun_step_retry(struct krun *r, const struct kstep_opts *o,
		    const char *what, struct kstep_result *res);

/*
 * A step that another process ran (a box of the pool, pool.h) with
 * no_journal: into the report and the journal as krun_step would have.
 */
int krun_step_adopt(struct krun *r, const struct kstep_opts *o,
		    const struct kstep_result *res);

struct kbc_key;
/* The build cache's key of commit built as build_type with this test's options. */
void krun_build_key(struct krun *r, const char *commit,
		    const char *build_type, struct kbc_key *k);
/*
 * A good build in build_dir and output_dir into the build cache as k; a
 * kernel with modules that the test installs (k->modules) has them packed
 * first (kinstall_pack_modules, its lines to on_line). Returns kbc_store's
 * value, or -1 with why (not cached: the install packs them itself).
 */
int krun_cache_store(struct krun *r, const struct kbc_key *k,
		     const char *build_dir, const char *output_dir,
		     const char *release, kcmd_line_fn on_line, void *ctx,
		     char *why, size_t len);

/* MACHINE, or "the qemu box" / "the box": the box in messages. */
const char *krun_box_name(struct krun *r);
/*
 * INFRA_HEALTH_CHECK done before what (a retry, blaming a commit): 0 when
 * the box booted its good kernel (or there is nothing to check), -1 after
 * printing why it is not healthy, also left in why (r->unhealthy,
 * r->infra: stop the run).
 */
int krun_health_check(struct krun *r, const char *before, char *why,
		      size_t len);

/*
 * BISECT_MANUAL: the user's verdict on what just ran, asked on stdin with
 * question ("good", "bad", "skip", or p, f, s, pass, fail) and kept in the
 * journal under key, so that a rerun does not ask again. Returns 0 with
 * *v KV_GOOD, KV_BAD or KV_SKIP; -1 at the end of input or when the
 * journal cannot be written.
 */
int krun_ask_verdict(struct krun *r, const char *key, const char *question,
		     enum kverdict *v);

/*
 * Did the step fail in a phase before the one a bisect judges (a build
 * failure while a boot is bisected)? Such a step cannot be told good or bad.
 */
bool krun_failed_before(enum kstep_level level, const struct kstep_result *res);

struct kbuild_opts;
struct kdotconfig;
/* A make in a scratch O= (olddefconfig, allnoconfig): MAKE_CMD, BUILD_DIR, RUN_TIMEOUT. */
void krun_scratch_opts(struct krun *r, struct kbuild_opts *b);
/*
 * c written as dir/cand-<digest>.config, key set to the digest (the step's
 * name in the journal). The path (malloc'd), or NULL after printing why.
 */
char *krun_save_config(struct krun *r, const char *dir,
		       const struct kdotconfig *c, char *key, size_t keylen);

/*
 * The box part of a step (run_box.c): install the kernel just built, boot
 * it, run TEST, as level says; modules: its modules already packed (the
 * build cache's), or NULL. Fills res and the phase durations (ms, indexed
 * by enum kphase). Returns 0 when all of it passed.
 */
int krun_lab_step(struct krun *r, enum kstep_level level, const char *release,
		  const char *modules, struct kstep_result *res, long *ms);
/* After a step: the box back to its good kernel (qemu: off). */
void krun_lab_settle(struct krun *r, long sleep_ms);
/*
 * INFRA_HEALTH_CHECK: the box rebooted to its good kernel, which must show
 * its banner and REBOOT_SUCCESS_LINE within TIMEOUT. Returns 0 (healthy),
 * 1 when there is nothing to check (the qemu box boots only the kernel
 * under test), -1 with why (the box is not healthy).
 */
int krun_lab_health(struct krun *r, char *why, size_t len);
/* The end of a test: the console closed, the qemu box stopped. */
void krun_lab_close(struct krun *r);

enum krun_power {
	KRUN_TO_GOOD,		/* reboot to the good kernel, no wait */
	KRUN_POWER_OFF,		/* POWER_OFF */
	KRUN_HALT,		/* halt, POWER_OFF behind it */
};
/*
 * The box of test r->i to its good kernel, off or halted, at the end of
 * the run or after a critical failure: the lab of the test when it is
 * still open, else one opened for this alone (no console). The qemu box
 * is off once its lab is closed; to good or halted, it is powered off.
 * Returns 0, or -1 after printing why.
 */
int krun_lab_power(struct krun *r, enum krun_power what);

/* The last build log's warnings, normalised, into path (make_warnings_file). */
int krun_write_warnings(struct krun *r, const char *path);

/* The total durations of the test so far, as ktest.pl's print_times. */
void krun_print_times(struct krun *r);

/* ---- runners: 0 the test passed, 1 it failed; -1 stop the run ---- */
int krun_bisect(struct krun *r);
int krun_patchcheck(struct krun *r);
int krun_config_bisect(struct krun *r);
int krun_min_config(struct krun *r);

/* Sets r->t's verdict and why and prints ktest.pl's banner. */
int krun_fail(struct krun *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int krun_success(struct krun *r);

#endif
