/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Building a kernel as ktest.pl does, with the tree's own kbuild:
 * "MAKE_CMD O=OUTPUT_DIR", every BUILD_TYPE, BUILD_NOCLEAN and mrproper,
 * MIN_CONFIG and ADD_CONFIG forced onto the .config (in a fixed order),
 * LOCALVERSION, PRE_BUILD and POST_BUILD, output streamed line by line to
 * the build log, warnings counted, kernelrelease read without touching the
 * .config.
 */
#ifndef KTEST_BUILD_H
#define KTEST_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "ktest/cmd.h"

struct kbuild_opts {
	const char *make_cmd;		/* MAKE_CMD ("make") */
	const char *build_dir;		/* BUILD_DIR: the source tree */
	const char *output_dir;		/* OUTPUT_DIR: O= */
	const char *build_type;		/* BUILD_TYPE */
	const char *build_options;	/* BUILD_OPTIONS */
	const char *build_target;	/* BUILD_TARGET (relative to O=) */
	const char *localversion;	/* LOCALVERSION */
	const char *min_config;		/* MIN_CONFIG: forced last */
	const char *add_config;		/* ADD_CONFIG: files, before MIN_CONFIG */
	bool noclean;			/* BUILD_NOCLEAN */
	const char *pre_build;		/* PRE_BUILD */
	const char *post_build;		/* POST_BUILD */
	bool pre_build_die, post_build_die;
	long timeout_ms;		/* RUN_TIMEOUT for each command */
	const char *log;		/* the build log file (truncated) */
	kcmd_line_fn on_line;		/* also every line here (may be NULL) */
	void *ctx;
};

enum kbuild_status {
	KBUILD_OK,
	KBUILD_FAILED,		/* make failed: the commit's fault */
	KBUILD_CONFIG_FAILED,	/* the config step failed */
	KBUILD_HOOK_FAILED,	/* PRE_BUILD/POST_BUILD with _DIE */
	KBUILD_ERROR,		/* ktest's or the host's fault (INFRA) */
};

struct kbuild_result {
	enum kbuild_status status;
	int warnings;		/* warning lines in the log */
	long elapsed_ms;
	char why[512];
	/* kernelrelease of what was built, read before POST_BUILD (which may
	 * change it) as ktest.pl did; empty if the build failed */
	char release[256];
};

/* 0 when r->status is KBUILD_OK, else -1. BUILD_TYPE nobuild does nothing. */
int kbuild_run(const struct kbuild_opts *o, struct kbuild_result *r);

/*
 * "make -s kernelrelease" in O=; ktest.pl ran allnoconfig when that was
 * empty, clobbering the .config: this never writes the .config. Returns a
 * malloc'd string, or NULL with why.
 */
char *kbuild_kernelrelease(const struct kbuild_opts *o, char *why,
			   size_t whylen);

struct kdotconfig;

/*
 * What the tree's kconfig makes of a config: in is written to
 * scratch_dir/.config and "MAKE_CMD O=scratch_dir olddefconfig" runs in
 * BUILD_DIR (only make_cmd, build_dir and timeout_ms of o are used); out
 * (initialised by the caller) receives the result. scratch_dir is not
 * OUTPUT_DIR, so the build there is left alone. Returns 0, or -1 with why;
 * *host is set when the host, not the config, is to blame (INFRA).
 */
int kbuild_normalise(const struct kbuild_opts *o, const char *scratch_dir,
		     const struct kdotconfig *in, struct kdotconfig *out,
		     bool *host, char *why, size_t whylen);

/*
 * "MAKE_CMD O=scratch_dir target" (allnoconfig, defconfig, ...) in
 * BUILD_DIR, its .config read into out (initialised by the caller); the
 * rest as kbuild_normalise().
 */
int kbuild_scratch_config(const struct kbuild_opts *o, const char *scratch_dir,
			  const char *target, struct kdotconfig *out,
			  bool *host, char *why, size_t whylen);

/* Counts and extracts warning lines as ktest.pl does (for the log). */
bool kbuild_is_warning(const char *line);

#endif
