// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: reading a journal back (a resume), torn tail included.
 * The input is the journal file, written to a temporary directory.
 *
 * Checked, aborting when broken: a journal that opens takes the next
 * record, and opened again it holds the same records plus that one, with
 * no torn tail (journal.h: a torn last record is cut off before the next
 * append, and a run killed at any moment resumes from the journal).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest/journal.h"
#include "tmpdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_rec(const struct kjrec *a, const struct kjrec *b)
{
	if (a->nfields != b->nfields || a->line != b->line)
		return false;
	for (size_t i = 0; i < a->nfields; i++)
		if (strcmp(a->names[i], b->names[i]) ||
		    strcmp(a->values[i], b->values[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[4200];
	const char *dir = fuzz_tmpdir();
	struct kjournal j, k;
	const struct kjrec *r;
	char err[512];

	snprintf(path, sizeof(path), "%s/journal", dir);
	fuzz_write(path, data, size);
	if (kjournal_open(&j, dir, err, sizeof(err))) {
		if (!err[0])
			abort();
		return 0;
	}
	j.nosync = true;
	if (kjournal_append(&j, "STEP", "7", "WHAT", "a\tb\\n\nc", NULL))
		abort();
	if (kjournal_open(&k, dir, err, sizeof(err)))
		abort();
	if (k.torn || k.nrecs != j.nrecs)
		abort();
	for (size_t i = 0; i < j.nrecs; i++)
		if (!same_rec(&j.recs[i], &k.recs[i]))
			abort();
	r = kjournal_find(&k, "STEP", "7", NULL);
	if (!r || strcmp(kjrec_get(r, "WHAT"), "a\tb\\n\nc"))
		abort();
	kjournal_close(&k);
	kjournal_close(&j);
	return 0;
}
