/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-commit build cache of a bisect: what a step built (the image,
 * the .config, the release) kept in the state directory under the commit
 * and a digest of what decides the build (build type, MIN_CONFIG's text,
 * MAKE_CMD, BUILD_OPTIONS, LOCALVERSION, BUILD_TARGET), so that a commit
 * built once is not built again: by the verification, by a rerun after a
 * kill during the boot. A kernel with modules is not cached (they live in
 * the build tree). At most KBC_KEEP entries; the oldest go.
 */
#ifndef KTEST_BUILD_CACHE_H
#define KTEST_BUILD_CACHE_H

#include <stddef.h>

#define KBC_KEEP 8

struct kbc_key {
	const char *state_dir;
	const char *commit;
	const char *build_type, *min_config, *make_cmd, *build_options,
		   *localversion, *build_target;
};

/*
 * After a good build: OUTPUT_DIR's image and .config into the cache.
 * Returns 0, 1 when not cached (modules, no image), -1 on an I/O error
 * (printed by the caller from why; the build stands).
 */
int kbc_store(const struct kbc_key *k, const char *output_dir,
	      const char *release, char *why, size_t len);

/* Is the build of k in the cache? */
int kbc_has(const struct kbc_key *k);

/*
 * Before a build: the cached image and .config back into OUTPUT_DIR, the
 * release into release. Returns 0 (restored), 1 (not in the cache), -1
 * with why (the cache entry is broken: build instead).
 */
int kbc_restore(const struct kbc_key *k, const char *output_dir,
		char *release, size_t rlen, char *why, size_t len);

#endif
