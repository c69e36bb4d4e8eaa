/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Installing a built kernel on the test box, as ktest.pl's install() does:
 * NO_INSTALL, PRE_INSTALL, the image to TARGET_IMAGE, the modules when the
 * .config has CONFIG_MODULES=y, POST_INSTALL. Over libssh by default (see
 * ktest/box.h for the SSH_EXEC / SCP_TO_TARGET path).
 *
 * What happens is decided first, without I/O, as a plan: a list of steps
 * with the exact commands and paths (kinstall_plan); kinstall_run() then
 * carries it out, and stops at the first step that fails.
 */
#ifndef KTEST_INSTALL_H
#define KTEST_INSTALL_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/model.h"
#include "ktest/box.h"

/* the modules' tarball: on the host, and in the box's /tmp */
#define KINSTALL_MODS_TARBALL	"ktest-mods.tar.gz"

struct kinstall_opts {
	bool no_install;		/* NO_INSTALL */
	const char *pre_install;	/* PRE_INSTALL ($KERNEL_VERSION) */
	const char *post_install;	/* POST_INSTALL ($KERNEL_VERSION) */
	const char *make_cmd;		/* MAKE_CMD ("make") */
	const char *build_dir;		/* BUILD_DIR: make runs there */
	const char *output_dir;		/* OUTPUT_DIR (O=), from BUILD_DIR */
	const char *build_target;	/* BUILD_TARGET, relative to OUTPUT_DIR */
	const char *target_image;	/* TARGET_IMAGE ($KERNEL_VERSION) */
	const char *tmp_dir;		/* TMP_DIR: modules staged here */
	const char *kernel_version;	/* of what was built (kernelrelease) */
	/*
	 * lib/modules/VERSION already packed (the build cache keeps it,
	 * build_cache.h): copied to the box as it is, no modules_install.
	 * Named KINSTALL_MODS_TARBALL: SCP_TO_TARGET is given a directory.
	 */
	const char *modules_tarball;
	long timeout_ms;		/* RUN_TIMEOUT (0: none) */
	/*
	 * Where the box keeps /lib/modules ("/") and its scratch files
	 * ("/tmp"). ktest.pl has no options for these; the tests, whose
	 * "box" is this machine, point them into a scratch directory.
	 */
	const char *mod_root;
	const char *remote_tmp;
	kcmd_line_fn on_line;		/* output and progress; may be NULL */
	void *ctx;
	struct kstrs keep;
};

/*
 * The install options of test i (kernel_version, on_line and ctx are the
 * caller's to fill). Returns 0, or -1 after reporting.
 */
int kinstall_opts_read(struct kconfig *c, int i, struct kinstall_opts *o);
void kinstall_opts_release(struct kinstall_opts *o);

enum kinstall_step_kind {
	KI_PRE_INSTALL,		/* host: PRE_INSTALL */
	KI_PROBE,		/* box: is it there? */
	KI_IMAGE,		/* copy: the image to TARGET_IMAGE */
	KI_MODULES_BUILD,	/* host: make modules_install into staging */
	KI_MODULES_PACK,	/* host: tar them up */
	KI_MODULES_COPY,	/* copy: the tarball to the box */
	KI_MODULES_REMOVE,	/* box: rm -rf /lib/modules/VERSION */
	KI_MODULES_UNPACK,	/* box: unpack the tarball */
	KI_MODULES_CLEAN,	/* box: rm the tarball (a failure is ignored) */
	KI_POST_INSTALL,	/* host: POST_INSTALL */
};

struct kinstall_step {
	enum kinstall_step_kind kind;
	char *what;		/* "copy the image", for messages */
	char *cmd;		/* host: the command line; box: the box's command */
	char *legacy;		/* box and copy steps: the SSH_EXEC / SCP line
				 * that does it, or NULL for libssh */
	char **argv;		/* PACK: tar's argv */
	char *src, *dst;	/* copies */
	int mode;		/* copies over SFTP */
};

struct kinstall_plan {
	struct kinstall_step *steps;
	size_t n;
};

/*
 * The steps for o on box, pure: modules says whether the .config has
 * CONFIG_MODULES=y, staging is the empty host directory they go through
 * (NULL when !modules or o->modules_tarball). NO_INSTALL gives no steps.
 * Returns 0, or -1 with why (a value that cannot be used, such as an empty
 * kernel version).
 */
int kinstall_plan(const struct kinstall_opts *o, const struct kbox_opts *box,
		  bool modules, const char *staging, struct kinstall_plan *p,
		  char *why, size_t whylen);
void kinstall_plan_free(struct kinstall_plan *p);

/* Does this .config text set CONFIG_MODULES=y? (ktest.pl's test) */
bool kinstall_config_has_modules(const char *config, size_t len);

/* OUTPUT_DIR, made absolute against BUILD_DIR as ktest.pl's chdir did. */
char *kinstall_output_dir(const struct kinstall_opts *o);

enum kinstall_status {
	KINSTALL_OK,
	KINSTALL_SKIPPED,	/* NO_INSTALL */
	KINSTALL_HOOK,		/* PRE_INSTALL or POST_INSTALL failed */
	KINSTALL_BOX,		/* ssh, a copy, a box command (INFRA) */
	KINSTALL_MODULES,	/* make modules_install failed */
	KINSTALL_HOST,		/* no image or .config, tar, disk (INFRA) */
	KINSTALL_CONFIG,	/* a value that cannot be used */
};

struct kinstall_result {
	enum kinstall_status status;
	enum kinstall_step_kind step;	/* the step that failed */
	enum kssh_fail ssh_fail;	/* KINSTALL_BOX: why ssh failed */
	bool modules;			/* modules were installed */
	long elapsed_ms;
	char why[4096];
};

/* Installs; 0 when r->status is KINSTALL_OK or KINSTALL_SKIPPED, else -1. */
int kinstall_run(struct kbox *box, const struct kinstall_opts *o,
		 struct kinstall_result *r);

/*
 * What an install of a kernel with modules does on the host, for the build
 * cache: make modules_install of OUTPUT_DIR into a staging directory in
 * TMP_DIR, packed into tarball (lib/modules/VERSION, root's files).
 * Returns 0, or -1 with r->status (KINSTALL_MODULES, KINSTALL_HOST,
 * KINSTALL_CONFIG) and r->why.
 */
int kinstall_pack_modules(const struct kinstall_opts *o, const char *tarball,
			  struct kinstall_result *r);

#endif
