// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the "git bisect log" reader (BISECT_REPLAY).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest/bisect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct kb_replay *r)
{
	for (size_t i = 0; i < r->ngoods; i++)
		if (!r->goods[i])
			abort();
	for (size_t i = 0; i < r->npaths; i++)
		if (!r->paths[i])
			abort();
	for (size_t i = 0; i < r->nmarks; i++) {
		if (!r->marks[i].rev)
			abort();
		if (r->marks[i].verdict != KB_GOOD &&
		    r->marks[i].verdict != KB_BAD &&
		    r->marks[i].verdict != KB_SKIP)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct kb_replay r;
	char why[256];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (kbisect_parse_log(text, &r, why, sizeof(why)) == 0) {
		check(&r);
		kbisect_replay_free(&r);
	} else if (!why[0] || r.goods || r.marks || r.paths || r.bad) {
		/* an error says why and leaves nothing behind */
		abort();
	}
	free(text);
	return 0;
}
