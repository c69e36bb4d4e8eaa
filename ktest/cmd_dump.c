// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest dump CONFIG: for each test in run order, every option it resolves,
 * expanded as the run would use it (${KERNEL_VERSION} stays as written: it
 * exists only once a kernel is built).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(kopt_table[*(const int *)a].name,
		      kopt_table[*(const int *)b].name);
}

/* IPMI_PASSWORD: a dump may be pasted into a bug report (doc/security.md) */
static bool secret(const char *name)
{
	size_t n = strlen(name);

	return n >= 8 && !strcmp(name + n - 8, "PASSWORD");
}

static int dump_test(struct kconfig *c, int i, const int *order)
{
	char *name = NULL, *type = NULL;

	if (kconfig_get(c, KOPT_TEST_NAME, i, &name, NULL) ||
	    kconfig_get(c, KOPT_TEST_TYPE, i, &type, NULL)) {
		free(name);
		return -1;
	}
	printf("TEST %d%s%s%s %s\n", i, name ? " (" : "", name ? name : "",
	       name ? ")" : "", type ? type : "");
	free(name);
	free(type);
	for (size_t k = 0; k < KOPT__COUNT; k++) {
		enum kopt_id id = (enum kopt_id)order[k];
		char *v;

		if (kconfig_get(c, id, i, &v, NULL))
			return -1;
		if (v)
			printf("%s = %s\n", kopt_table[id].name,
			       secret(kopt_table[id].name) ? "***" : v);
		free(v);
	}
	printf("\n");
	return 0;
}

int cmd_dump(struct kcli *cli)
{
	struct kconfig c;
	int order[KOPT__COUNT];
	int ret;

	cli->interactive = false;
	ret = kload(cli, &c, KLOAD_CHECKED);
	if (ret) {
		kconfig_free(&c);
		return ret;
	}
	for (size_t k = 0; k < KOPT__COUNT; k++)
		order[k] = (int)k;
	qsort(order, KOPT__COUNT, sizeof(order[0]), cmp_names);
	for (int i = 1; i <= c.num_tests && !ret; i++)
		if (dump_test(&c, i, order))
			ret = KEXIT_USAGE;
	kconfig_free(&c);
	if (fflush(stdout) && !ret)
		ret = KEXIT_USAGE;
	return ret;
}
