/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The native config format, read with libconfuse into the same model as
 * ktest.conf. See doc/ktest-native.5 for the format.
 */
#ifndef KTEST_NATIVE_H
#define KTEST_NATIVE_H

#include <stddef.h>

#include "model.h"

/*
 * Reads path into c (which may hold -D variables already). Returns 0, or -1
 * after reporting errors with their real file:line.
 */
int knative_read(struct kconfig *c, const char *path);
/* The same from a buffer (fuzzing, tests); name is used in messages. */
int knative_read_buf(struct kconfig *c, const char *name, const char *buf,
		     size_t len);

#endif
