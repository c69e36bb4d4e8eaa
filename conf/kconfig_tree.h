/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A kernel source tree's whole Kconfig, read for one thing: the dependency
 * graph between its symbols, to order option changes (config bisect,
 * make_min_config) so that what an option needs comes before it.
 *
 * Reading starts at SRCTREE/Kconfig and follows every source, osource,
 * rsource and orsource (glob patterns allowed, $(SRCARCH), $(ARCH) and
 * $(HEADER_ARCH) expanded to the arch), as scripts/kconfig does.
 * ktest.pl started at arch/ARCH/Kconfig and missed most of the tree.
 *
 * The graph is coarse on purpose: the direct dependencies of X, deps(X),
 * are every symbol named in
 *
 *	- X's "depends on" expressions,
 *	- the conditions of the "if" blocks around X,
 *	- the "depends on" and "visible if" of the menus around X,
 *	- the "depends on" of the choice around X (and the choice itself,
 *	  when it has a name),
 *
 * plus every symbol X selects or implies: while A selects B, B cannot be
 * turned off, so for ordering A needs B. Conditions on defaults, prompts
 * and selects ("select B if C") are not dependencies. A symbol defined in
 * several places has the union of its definitions' dependencies.
 *
 * Names are kept without the CONFIG_ prefix; every call takes "CONFIG_X"
 * or "X". The prefix is kctree_.
 */
#ifndef KTEST_KCONFIG_TREE_H
#define KTEST_KCONFIG_TREE_H

#include <stdbool.h>
#include <stddef.h>

struct kctree;

/*
 * Reads the Kconfig of the tree at srctree for srcarch (e.g. "x86";
 * "x86_64" and "i386" are taken as "x86", and trailing digits are dropped
 * when there is no arch/SRCARCH directory, as ktest.pl does). NULL
 * srcarch: from the environment's SRCARCH, else ARCH, else "x86".
 * NULL on error, with why set to "file:line: what" (the file relative to
 * srctree), e.g. a missing file named by source, a keyword kconfig does
 * not know, or an endmenu that closes no menu. The 6.1 tree for x86
 * (1491 files, 16476 symbols) loads in about 80 ms.
 */
struct kctree *kctree_load(const char *srctree, const char *srcarch,
			   char *why, size_t whylen);
void kctree_free(struct kctree *t);

/* How many symbols the tree defines (config, menuconfig, named choice). */
size_t kctree_count(const struct kctree *t);
/* How many Kconfig files were read (a file sourced twice counts twice). */
size_t kctree_files(const struct kctree *t);
/* Does the tree define name? */
bool kctree_has(const struct kctree *t, const char *name);

/*
 * The direct dependencies of name (see above), without CONFIG_, in the
 * order the Kconfig files name them; *deps is valid until kctree_free().
 * 0 (and *deps NULL) when the tree does not define name.
 */
size_t kctree_deps(const struct kctree *t, const char *name,
		   const char *const **deps);

/*
 * Sorts names[0..n) in place so that each comes after everything it
 * depends on, directly or through symbols that are not in the list (A
 * needs B needs C: C comes before A). Stable: a name moves only earlier,
 * to just before the first name that needs it, and names that move
 * together keep their relative order; names no Kconfig file mentions
 * stay in their order among the rest. The graph has cycles (PNP depends on
 * ACPI, which selects PNP): they are broken the same way every time, by
 * list order. A name given twice (CONFIG_X and X) keeps both, together.
 * Names are not changed, only reordered. O(list x reachable graph) at
 * worst; the whole 6.1 x86 tree (17000 names) orders in a few ms.
 */
void kctree_order(const struct kctree *t, char **names, size_t n);

/*
 * The arch directory of a .config, from its header comment
 * "# Linux/x86 6.1.0 Kernel Configuration": i386 and x86_64 give x86,
 * sparc64 sparc, parisc64 parisc; another name that is no arch directory
 * (of 6.1 or earlier; arm64 and s390 are) loses its trailing digits, as
 * ktest.pl does when there is no such directory. NULL when there is no
 * such line; else a malloc'd string.
 */
char *kctree_arch_from_config(const char *config_text);

#endif
