/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-commit build cache of a bisect: what a step built (the image,
 * the .config, the release) kept in the state directory under the commit
 * and a digest of what decides the build (build type, MIN_CONFIG's text,
 * MAKE_CMD, BUILD_OPTIONS, LOCALVERSION, BUILD_TARGET), so that a commit
 * built once is not built again: by the verification, by a rerun after a
 * kill during the boot. A kernel with modules is cached with its modules
 * packed as an install sends them (install.h), when the bisect installs
 * it (modules in the key); the install then copies that tarball instead
 * of running modules_install in an OUTPUT_DIR that may hold another
 * build by then. At most KBC_KEEP entries; the oldest go.
 */
#ifndef KTEST_BUILD_CACHE_H
#define KTEST_BUILD_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#define KBC_KEEP 8

struct kbc_key {
	const char *state_dir;
	const char *commit;
	const char *build_type, *min_config, *make_cmd, *build_options,
		   *localversion, *build_target;
	/*
	 * The kernel is installed: an entry of a kernel with modules serves
	 * only when it holds them packed. Not part of the entry's name.
	 */
	bool modules;
};

/*
 * After a good build: OUTPUT_DIR's image and .config into the cache, and
 * modules, the tarball of kinstall_pack_modules() (moved into the entry),
 * or NULL (a kernel with modules is then kept only for steps that do not
 * install it). Returns 0, 1 when not cached (no image), -1 on an I/O error
 * (printed by the caller from why; the build stands).
 */
int kbc_store(const struct kbc_key *k, const char *output_dir,
	      const char *release, const char *modules, char *why, size_t len);

/*
 * Does a store of k from output_dir want the modules packed (k->modules,
 * and the .config sets CONFIG_MODULES=y)?
 */
bool kbc_needs_modules(const struct kbc_key *k, const char *output_dir);

/* Is the build of k in the cache (with its modules when k->modules)? */
int kbc_has(const struct kbc_key *k);

/* The entry's packed modules (free()), or NULL when it has none. */
char *kbc_modules(const struct kbc_key *k);

/*
 * Before a build: the cached image and .config back into OUTPUT_DIR, the
 * release into release. Returns 0 (restored), 1 (not in the cache), -1
 * with why (the cache entry is broken: build instead).
 */
int kbc_restore(const struct kbc_key *k, const char *output_dir,
		char *release, size_t rlen, char *why, size_t len);

#endif
