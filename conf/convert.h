/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktest convert: a model read from ktest.conf, written in the native format,
 * such that reading the result gives the same tests with the same values.
 */
#ifndef KTEST_CONVERT_H
#define KTEST_CONVERT_H

#include <stdio.h>

#include "model.h"

/*
 * c must be as the reader left it (before kconfig_apply_defaults). Returns 0,
 * or -1 after reporting what cannot be expressed.
 */
int kconvert_native(struct kconfig *c, FILE *out);

#endif
