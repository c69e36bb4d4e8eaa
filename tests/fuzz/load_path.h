/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the fuzz targets do with a config once a reader accepted it: the load
 * path of ktest/load.c without the prompts, then resolving every option of
 * every test and every name the config set.
 */
#ifndef KTEST_FUZZ_LOAD_PATH_H
#define KTEST_FUZZ_LOAD_PATH_H

#include <stdlib.h>

#include "conf/model.h"

/* ktest.pl's eval loop makes resolving cost tests x options x rounds */
#define FUZZ_MAX_TESTS 1000

static void resolve(struct kconfig *c, const char *name, int i)
{
	char *v = NULL;

	if (kconfig_resolve(c, name, i, &v) == 0)
		free(v);
}

/* The load path of ktest/load.c, without the prompts. */
static void load_path(struct kconfig *c)
{
	const struct kval *nt;
	size_t it = 0;
	const char *key;
	long n;

	kconfig_apply_defaults(c);
	nt = kconfig_lookup(c, "NUM_TESTS");
	if (nt && kopt_parse_int(nt->value, &n) && n >= 0 &&
	    n < FUZZ_MAX_TESTS)
		c->num_tests = (int)n;

	kconfig_check_values(c);
	kconfig_check_mandatory(c, NULL, NULL);
	kconfig_check_unused(c);

	for (int i = -1; i <= c->num_tests; i++) {
		if (i == 0)
			continue;
		for (size_t k = 0; k < KOPT__COUNT; k++)
			resolve(c, kopt_table[k].name, i);
	}
	/* and the names only the config knows, where it set them */
	while (strmap_next(&c->opts, &it, &key, NULL)) {
		char name[256];
		int test;

		kconfig_split_key(key, name, sizeof(name), &test);
		if (!kopt_find(name))
			resolve(c, name, test > 0 ? test : -1);
	}
}
#endif
