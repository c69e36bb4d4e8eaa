// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest [CONFIG]: run the tests, in config order.
 *
 * The runners for the test types land one by one; a type without its runner
 * stops the run with exit 2 and says so, never a fake success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The subtype ktest.pl prints after the test type */
static char *subtype(struct kconfig *c, int i, const char *type)
{
	enum kopt_id id = KOPT_BUILD_TYPE;
	char *v = NULL;

	if (!strcmp(type, "patchcheck"))
		id = KOPT_PATCHCHECK_TYPE;
	else if (!strcmp(type, "bisect"))
		id = KOPT_BISECT_TYPE;
	else if (!strcmp(type, "config_bisect"))
		id = KOPT_CONFIG_BISECT_TYPE;
	else if (!strcmp(type, "make_min_config") ||
		 !strcmp(type, "make_warnings_file"))
		return xstrdup("");
	if (kconfig_get(c, id, i, &v, NULL) || !v)
		return xstrdup("ERROR");
	return v;
}

static int describe(struct kconfig *c, int i, bool dry)
{
	char *name = NULL, *type = NULL, *sub;

	if (kconfig_get(c, KOPT_TEST_NAME, i, &name, NULL) ||
	    kconfig_get(c, KOPT_TEST_TYPE, i, &type, NULL)) {
		free(name);
		return -1;
	}
	sub = subtype(c, i, type);
	printf("%s TEST %d of %d%s%s%s with option %s %s\n",
	       dry ? "WOULD RUN" : "RUNNING", i, c->num_tests,
	       name ? " (" : "", name ? name : "", name ? ")" : "", type, sub);
	if (!dry) {
		fprintf(stderr, "ktest: not implemented yet: TEST_TYPE %s\n", type);
		free(name);
		free(type);
		free(sub);
		return -1;
	}
	free(name);
	free(type);
	free(sub);
	return 0;
}

int cmd_run(struct kcli *cli)
{
	struct kconfig c;
	int ret = kload(cli, &c, KLOAD_CHECKED);

	if (ret) {
		kconfig_free(&c);
		return ret;
	}
	printf("\n\nSTARTING AUTOMATED TESTS%s\n\n", cli->dry_run ? " (dry run)" : "");
	for (int i = 1; i <= c.num_tests; i++) {
		if (describe(&c, i, cli->dry_run)) {
			ret = KEXIT_USAGE;
			break;
		}
	}
	if (!ret && cli->dry_run)
		printf("\n%d test%s would run; nothing was touched.\n", c.num_tests,
		       c.num_tests == 1 ? "" : "s");
	kconfig_free(&c);
	return ret;
}
