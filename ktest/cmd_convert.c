// SPDX-License-Identifier: GPL-2.0-only
/* ktest convert CONFIG: ktest.conf in, the native format out */
#include <stdio.h>

#include "cli.h"
#include "conf/convert.h"

int cmd_convert(struct kcli *cli)
{
	struct kconfig c;
	int ret;

	cli->interactive = false;
	ret = kload(cli, &c, KLOAD_RAW);
	if (!ret && kconvert_native(&c, stdout))
		ret = KEXIT_USAGE;
	if (fflush(stdout) && !ret)
		ret = KEXIT_USAGE;
	kconfig_free(&c);
	return ret;
}
