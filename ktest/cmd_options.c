// SPDX-License-Identifier: GPL-2.0-only
/* ktest options: the option table, for people and for shell completion */
#include <stdio.h>

#include "cli.h"

int cmd_options(struct kcli *cli)
{
	(void)cli;
	for (size_t k = 0; k < KOPT__COUNT; k++) {
		const struct kopt_desc *d = &kopt_table[k];

		printf("%-24s %-20s %s", d->name,
		       d->type == KT_ENUM ? d->choices : kopt_type_name(d->type),
		       d->help);
		if (d->def)
			printf(" [default: '%s']", d->def);
		printf("\n");
	}
	return KEXIT_OK;
}
