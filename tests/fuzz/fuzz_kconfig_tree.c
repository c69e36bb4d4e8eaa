// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the Kconfig tree reader (kctree_load reads files, it
 * has no entry point for a buffer), then kctree_order on the words of the
 * input and kctree_arch_from_config on the input.
 *
 * The input is up to three Kconfig files separated by a line "#---":
 * SRCTREE/Kconfig, SRCTREE/arch/x86/Kconfig and SRCTREE/sub/Kconfig, in
 * one temporary directory reused for every run. An input naming a file
 * outside it ("..") is not read, and the environment is emptied first, so
 * $(VAR) expands to nothing but the arch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/kconfig_tree.h"
#include "tmpdir.h"

#define SEP "\n#---\n"
#define MAX_WORDS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
	"Kconfig", "arch/x86/Kconfig", "sub/Kconfig",
};

static void setup(const char *dir)
{
	static bool done;
	char path[4200];

	if (done)
		return;
	done = true;
	clearenv();
	snprintf(path, sizeof(path), "%s/arch", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/arch/x86", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sub", dir);
	mkdir(path, 0755);
}

static bool word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* Orders the words of the input as config bisect orders option names. */
static void order(const struct kctree *t, const char *s, size_t n)
{
	char *names[MAX_WORDS];
	size_t k = 0, i = 0;

	while (i < n && k < MAX_WORDS) {
		size_t start;

		while (i < n && !word_char(s[i]))
			i++;
		start = i;
		while (i < n && word_char(s[i]))
			i++;
		if (i > start)
			names[k++] = strndup(s + start, i - start);
	}
	for (i = 0; i < k; i++) {
		const char *const *deps;
		size_t nd = kctree_deps(t, names[i], &deps);

		for (size_t d = 0; d < nd; d++)
			if (!deps[d])
				abort();
		(void)kctree_has(t, names[i]);
	}
	kctree_order(t, names, k);
	for (i = 0; i < k; i++)
		free(names[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_tmpdir();
	const char *s = (const char *)data, *end = s + size;
	char *text, *arch;
	struct kctree *t;
	char why[512];

	if (memmem(data, size, "..", 2))
		return -1;
	setup(dir);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *sep = s ? memmem(s, end - s, SEP, strlen(SEP)) : NULL;
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (!s) {
			unlink(path);
			continue;
		}
		fuzz_write(path, s, sep ? (size_t)(sep - s) + 1 : (size_t)(end - s));
		s = sep ? sep + strlen(SEP) : NULL;
	}
	t = kctree_load(dir, "x86", why, sizeof(why));
	if (t) {
		order(t, (const char *)data, size);
		kctree_free(t);
	} else if (!why[0]) {
		abort();
	}

	text = strndup((const char *)data, size);
	arch = kctree_arch_from_config(text);
	free(arch);
	free(text);
	return 0;
}
