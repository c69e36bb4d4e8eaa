/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixture of the config unit tests: a model whose diagnostics are
 * captured in memory (msgs()), and a scratch directory removed afterwards.
 */
#ifndef KTEST_TEST_FIXTURE_H
#define KTEST_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "conf/model.h"

struct fx {
	struct kdiag d;
	struct kconfig c;
	char *msgs;		/* everything the reader printed */
	size_t msgs_len;
	FILE *out;
	char dir[64];		/* a scratch directory, when a test makes one */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	kdiag_init(&f->d);
	f->out = open_memstream(&f->msgs, &f->msgs_len);
	f->d.out = f->out;
	kconfig_init(&f->c, &f->d);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	kconfig_free(&f->c);
	fclose(f->out);
	free(f->msgs);
	if (f->dir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(f);
	return 0;
}

static const char *msgs(struct fx *f)
{
	fflush(f->out);
	return f->msgs ? f->msgs : "";
}
#endif
