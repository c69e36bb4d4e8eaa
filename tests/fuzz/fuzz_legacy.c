// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the ktest.conf reader, then everything a run does with
 * what it read (defaults, value checks, mandatory options, the unused-option
 * check, and resolving every option for every test).
 *
 * Nothing may escape the process: ${shell ...} and INCLUDE are refused, and
 * diagnostics are counted, not printed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "conf/legacy.h"
#include "conf/model.h"

/* ktest.pl's eval loop makes resolving cost tests x options x rounds */
#define FUZZ_MAX_TESTS 1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kdiag d;
	struct kconfig c;

	kdiag_init(&d);
	d.quiet = true;
	kconfig_init(&c, &d);
	c.allow_shell = false;
	c.no_includes = true;
	if (klegacy_read_buf(&c, "fuzz.conf", (const char *)data, size) == 0)
		load_path(&c);
	kconfig_free(&c);
	return 0;
}
