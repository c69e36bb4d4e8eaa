// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every power driver shares. A driver allocates its struct kpower
 * with malloc (or xcalloc) and keeps its own state behind priv; its free()
 * releases priv and what hangs on it, and kpower_free() then frees the
 * struct itself, so callers never need to know which driver they hold.
 */
#include <stdlib.h>

#include "power/power.h"

void kpower_free(struct kpower *p)
{
	if (!p)
		return;
	if (p->drv && p->drv->free)
		p->drv->free(p);
	free(p);
}
