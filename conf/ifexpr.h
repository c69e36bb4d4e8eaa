/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IF / ELSE IF expressions of ktest.conf, evaluated as ktest.pl's
 * process_expression() does, without running Perl.
 */
#ifndef KTEST_IFEXPR_H
#define KTEST_IFEXPR_H

#include <stdbool.h>

#include "diag.h"

struct kif_ops {
	/* DEFINED NAME: true for a config variable or a default option */
	bool (*defined)(void *ctx, const char *name);
	void *ctx;
};

/*
 * expr has had its ${VAR}s expanded already (unknown ones became 0).
 * Returns 0 with *result set, or -1 after reporting an error at o (what
 * ktest.pl dies on: "Undefined content ... in if statement", "Unable to
 * process comparison", a bad regex). Warns at o where one of ktest.pl's
 * quirks silently changes what the expression probably means (&& and ||
 * mixed without parentheses, NOT in front of a comparison).
 */
int kif_eval(const char *expr, const struct kif_ops *ops, bool *result,
	     struct kdiag *d, const struct korigin *o);

#endif
