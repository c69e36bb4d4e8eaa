// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the native (libconfuse) reader, then everything a run
 * does with what it read (defaults, value checks, mandatory options, the
 * unused-option check, and resolving every option for every test).
 *
 * Nothing may escape the process: ${shell ...} and include() are refused, and
 * diagnostics are counted, not printed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "conf/native.h"
#include "conf/model.h"
#include "load_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kdiag d;
	struct kconfig c;

	kdiag_init(&d);
	d.quiet = true;
	kconfig_init(&c, &d);
	c.allow_shell = false;
	c.no_includes = true;
	if (knative_read_buf(&c, "fuzz.ktest", (const char *)data, size) == 0)
		load_path(&c);
	kconfig_free(&c);
	return 0;
}
