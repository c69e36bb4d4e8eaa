// SPDX-License-Identifier: GPL-2.0-only
/* ktest check CONFIG: everything a run would check before touching the lab */
#include <stdio.h>

#include "cli.h"

int cmd_check(struct kcli *cli)
{
	struct kconfig c;
	int ret;

	cli->interactive = false;
	ret = kload(cli, &c, KLOAD_CHECKED);
	if (!ret)
		printf("%s: ok: %d test%s%s\n", cli->config, c.num_tests,
		       c.num_tests == 1 ? "" : "s",
		       cli->diag.nwarnings ? " (see the warnings above)" : "");
	kconfig_free(&c);
	return ret;
}
