// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsim, the simulated Kconfig universe the config bisect tests and the
 * benchmark stand on: small universes whose olddefconfig is worked out by
 * hand with kconfig's rules (an option whose depends fail has no line; a
 * select forces y over failed depends and is written; an option the input
 * does not mention takes its default; values settle over several rounds),
 * the parser's errors, and the seeded generator's promises checked over a
 * thousand seeds (KTEST_SEED=n runs one).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/kcsim.h"

static void parse(struct kdotconfig *c, const char *text)
{
	kdotconfig_parse(c, text, strlen(text));
}

/* olddefconfig of input text in universe text: the output's text */
static char *odc(const char *universe, const char *input)
{
	struct kdotconfig in, out;
	struct kcsim *u = kcsim_parse(universe);
	char *s;

	assert_non_null(u);
	kdotconfig_init(&in);
	kdotconfig_init(&out);
	kdotconfig_parse(&in, input, strlen(input));
	kcsim_olddefconfig(u, &in, &out);
	s = kdotconfig_format(&out);
	kdotconfig_free(&in);
	kdotconfig_free(&out);
	kcsim_free(u);
	return s;
}

static void check_odc(const char *universe, const char *input,
		      const char *want)
{
	char *s = odc(universe, input);

	assert_string_equal(s, want);
	free(s);
}

static void test_invisible_dropped(void **state)
{
	const char *u = "config A\nconfig B depends A\nconfig C depends on B\n";

	/* A n: B and C invisible, no line, even when the input sets them */
	check_odc(u, "CONFIG_B=y\nCONFIG_C=y\n", "# CONFIG_A is not set\n");
	check_odc(u, "# CONFIG_B is not set\n", "# CONFIG_A is not set\n");
	/* A y: B visible; C follows B */
	check_odc(u, "CONFIG_A=y\nCONFIG_C=y\n",
		  "CONFIG_A=y\n# CONFIG_B is not set\n");
	check_odc(u, "CONFIG_C=y\nCONFIG_B=y\nCONFIG_A=y\n",
		  "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\n");
	/* dropped means forgotten: back on, B takes its default (n) */
	check_odc(u, "CONFIG_A=y\n", "CONFIG_A=y\n# CONFIG_B is not set\n");
}

static void test_defaults(void **state)
{
	const char *u = "config A default y\n"
			"config B depends A default y\n"
			"config C depends A\n"
			"config D default n\n";

	check_odc(u, "", "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n"
		  "# CONFIG_D is not set\n");
	/* the input wins over the default; m is y; =n and other values n */
	check_odc(u, "# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_D=n\n",
		  "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n"
		  "# CONFIG_D is not set\n");
	check_odc(u, "CONFIG_D=\"y\"\n# CONFIG_A is not set\n",
		  "# CONFIG_A is not set\n# CONFIG_D is not set\n");
	/* names the universe does not declare are dropped, comments too */
	check_odc(u, "# hello\nCONFIG_NOPE=y\n# CONFIG_ALSO is not set\n",
		  "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n"
		  "# CONFIG_D is not set\n");
}

static void test_select_overrides_depends(void **state)
{
	const char *u = "config A\n"
			"config B depends A\n"
			"config S select B\n";

	/* A n, yet B is y and written: selected */
	check_odc(u, "CONFIG_S=y\n",
		  "# CONFIG_A is not set\nCONFIG_B=y\nCONFIG_S=y\n");
	/* an input n does not hold against a select */
	check_odc(u, "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_S=y\n",
		  "CONFIG_A=y\nCONFIG_B=y\nCONFIG_S=y\n");
	/* S off: B is invisible again */
	check_odc(u, "CONFIG_B=y\n", "# CONFIG_A is not set\n"
		  "# CONFIG_S is not set\n");
	/* a selector that is itself invisible selects nothing */
	check_odc("config A\nconfig S depends A select B\nconfig B\n",
		  "CONFIG_S=y\n", "# CONFIG_A is not set\n"
		  "# CONFIG_B is not set\n");
}

static void test_fixpoint(void **state)
{
	/*
	 * X comes first but depends on Y, which a later S selects: the
	 * first round sees Y n, the second turns X on (its default).
	 */
	const char *u = "config X depends Y default y\n"
			"config S select Y\n"
			"config Y depends Q\n"
			"config Q\n"
			"config W depends X !Q\n";
	struct kdotconfig in;
	struct kcsim *k = kcsim_parse(u);
	bool val[5], wr[5];

	check_odc(u, "CONFIG_S=y\nCONFIG_W=y\n",
		  "CONFIG_X=y\nCONFIG_S=y\nCONFIG_Y=y\n"
		  "# CONFIG_Q is not set\nCONFIG_W=y\n");
	/* Q on turns W off (!Q); Y is still selected */
	check_odc(u, "CONFIG_S=y\nCONFIG_W=y\nCONFIG_Q=y\n",
		  "CONFIG_X=y\nCONFIG_S=y\nCONFIG_Y=y\nCONFIG_Q=y\n");
	/* neither: Y by Q's depends fails, so X and W go */
	check_odc(u, "CONFIG_X=y\nCONFIG_W=y\n",
		  "# CONFIG_S is not set\n# CONFIG_Q is not set\n");

	kdotconfig_init(&in);
	kdotconfig_set(&in, "CONFIG_S", "y");
	assert_true(kcsim_values(k, &in, val, wr) >= 3);
	assert_true(val[0] && val[1] && val[2] && !val[3] && !val[4]);
	assert_true(wr[0] && wr[1] && wr[2] && wr[3] && wr[4]);
	kdotconfig_free(&in);
	kcsim_free(k);
}

static void test_negated_depends(void **state)
{
	const char *u = "config A default y\nconfig B depends !A default y\n";

	check_odc(u, "", "CONFIG_A=y\n");
	check_odc(u, "# CONFIG_A is not set\n",
		  "# CONFIG_A is not set\nCONFIG_B=y\n");
	check_odc(u, "# CONFIG_A is not set\n# CONFIG_B is not set\n",
		  "# CONFIG_A is not set\n# CONFIG_B is not set\n");
}

static void test_idempotent_and_prefixes(void **state)
{
	/* names with CONFIG_ in the universe, "depends on", comments */
	const char *u = "# a comment\n"
			"config CONFIG_A default y   # trailing\n"
			"\n"
			"config B depends on CONFIG_A select C\n"
			"config C depends D\n"
			"config D\n";
	char *once = odc(u, "CONFIG_B=y\n");
	char *twice = odc(u, once);

	assert_string_equal(once, "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\n"
			    "# CONFIG_D is not set\n");
	assert_string_equal(once, twice);
	free(once);
	free(twice);
}

static void test_bad(void **state)
{
	struct kcsim *u = kcsim_parse("config A\nconfig B\nconfig C\n"
				      "culprit A B\nculprit !A C\n");
	const char *cases[][2] = {
		{ "", "0" },
		{ "CONFIG_A=y\n", "0" },
		{ "CONFIG_A=y\nCONFIG_B=y\n", "1" },
		{ "CONFIG_A=y\nCONFIG_C=y\n", "0" },
		{ "CONFIG_C=y\n", "1" },
		{ "# CONFIG_A is not set\nCONFIG_C=m\n", "1" },
	};

	assert_non_null(u);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kdotconfig in, out;

		kdotconfig_init(&in);
		kdotconfig_init(&out);
		kdotconfig_parse(&in, cases[i][0], strlen(cases[i][0]));
		kcsim_olddefconfig(u, &in, &out);
		if (kcsim_bad(u, &out) != (cases[i][1][0] == '1'))
			fail_msg("case %zu: %s", i, cases[i][0]);
		kdotconfig_free(&in);
		kdotconfig_free(&out);
	}
	kcsim_free(u);
}

static void check_err(const char *text, const char *want)
{
	char err[256];
	struct kcsim *u = kcsim_parse_err(text, err, sizeof(err));

	if (u)
		fail_msg("parsed: %s", text);
	assert_string_equal(err, want);
}

static void test_parse_errors(void **state)
{
	struct kcsim *u;

	check_err("config A\nconfig B depends X\n",
		  "line 2: unknown option CONFIG_X");
	check_err("config A\n\nconfig A\n", "line 3: CONFIG_A declared twice");
	check_err("config A\nmenu B\n", "line 2: unknown keyword 'menu'");
	check_err("config A default m\n", "line 1: default takes y or n");
	check_err("config A default\n", "line 1: default takes y or n");
	check_err("config\n", "line 1: config needs a name");
	check_err("config A-B\n", "line 1: config needs a name");
	check_err("config A B\n", "line 1: unexpected 'B'");
	check_err("config A select !B\nconfig B\n",
		  "line 1: '!' only in depends and culprit");
	check_err("config A\nculprit\n", "line 2: culprit names no option");
	check_err("config A\nculprit A Q\n", "line 2: unknown option CONFIG_Q");
	check_err("config A depends A\n",
		  "line 1: recursive dependency involving CONFIG_A");
	/* A needs B, B needs C (C selects it), C needs A */
	check_err("config A depends B\nconfig B\nconfig C depends A select B\n",
		  "line 1: recursive dependency involving CONFIG_A");
	/* B depends on A and A selects B: no loop for kconfig either */
	u = kcsim_parse("config A select B\nconfig B depends A\n");
	assert_non_null(u);
	kcsim_free(u);
}

/* apply[k] for the changes named in the first alternative of expect */
static void mark_expect(const char *expect, const struct kdotconfig_change *ch,
			size_t n, bool *apply)
{
	char *copy = xstrdup(expect), *save = NULL;

	memset(apply, 0, n * sizeof(bool));
	for (char *w = strtok_r(copy, " ", &save); w && *w != '|';
	     w = strtok_r(NULL, " ", &save)) {
		char *full = xasprintf("CONFIG_%s", w);
		bool found = false;

		for (size_t k = 0; k < n; k++)
			if (!strcmp(ch[k].name, full))
				apply[k] = found = true;
		if (!found)
			fail_msg("%s is no change", full);
		free(full);
	}
	free(copy);
}

static void check_seed(uint64_t seed, size_t nopts, size_t nharm,
		       size_t ncul)
{
	struct kcsim_case c, d;
	struct kdotconfig_change *ch;
	struct kdotconfig out;
	size_t n, m;
	bool *apply, *core;

	kcsim_random(seed, nopts, nharm, ncul, &c);
	kdotconfig_init(&out);

	/* deterministic */
	kcsim_random(seed, nopts, nharm, ncul, &d);
	assert_string_equal(c.text, d.text);
	assert_true(kcsim_same(&c.good, &d.good) && kcsim_same(&c.bad, &d.bad));
	kcsim_case_free(&d);

	/* both normalised: olddefconfig leaves them as they are */
	kcsim_olddefconfig(c.u, &c.good, &out);
	assert_true(kcsim_same(&out, &c.good));
	kcsim_olddefconfig(c.u, &c.bad, &out);
	assert_true(kcsim_same(&out, &c.bad));
	assert_false(kcsim_bad(c.u, &c.good));
	assert_true(kcsim_bad(c.u, &c.bad));

	n = kcsim_changes(c.u, &c.good, &c.bad, &ch);
	assert_true(n >= 1);
	apply = xcalloc(n, sizeof(bool));
	core = xcalloc(n, sizeof(bool));

	/* every change applied to good: bad */
	for (size_t k = 0; k < n; k++)
		apply[k] = true;
	assert_true(kcsim_try(c.u, &c.good, ch, n, apply, &out));
	assert_true(kcsim_same(&out, &c.bad));

	/* the expected answer fails alone, is its own core, and is minimal */
	mark_expect(c.expect, ch, n, apply);
	if (!kcsim_try(c.u, &c.good, ch, n, apply, &out))
		fail_msg("seed %llu: expected %s passes\n%s",
			 (unsigned long long)seed, c.expect, c.text);
	m = kcsim_core(c.u, &c.good, ch, n, apply, core);
	assert_int_equal(memcmp(core, apply, n * sizeof(bool)), 0);
	assert_true(kcsim_expect_match(c.expect, ch, n, core));
	assert_true(m >= c.nculprit);
	for (size_t k = 0; k < n; k++) {
		if (!apply[k])
			continue;
		apply[k] = false;
		if (kcsim_try(c.u, &c.good, ch, n, apply, &out))
			fail_msg("seed %llu: %s without %s still fails",
				 (unsigned long long)seed, c.expect, ch[k].name);
		apply[k] = true;
	}
	/* the harmless changes alone never fail */
	for (size_t k = 0; k < n; k++)
		apply[k] = !apply[k] && ch[k].name[7] == 'N';
	assert_false(kcsim_try(c.u, &c.good, ch, n, apply, &out));

	free(apply);
	free(core);
	free(ch);
	kdotconfig_free(&out);
	kcsim_case_free(&c);
}

static void test_random(void **state)
{
	const char *one = getenv("KTEST_SEED");

	if (one) {
		check_seed(strtoull(one, NULL, 10), 200, 30, 0);
		return;
	}
	for (uint64_t seed = 1; seed <= 1000; seed++)
		check_seed(seed, 20 + seed % 300, seed % 41, seed % 4 == 0 ? 2 : 0);
}

static void test_random_shapes(void **state)
{
	bool seen[KCSIM_NSHAPES] = { false };
	size_t two = 0;

	/* every shape comes up, and culprits of 1 and 2 options */
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct kcsim_case c;

		kcsim_random(seed, 50, 10, 0, &c);
		seen[c.shape[0]] = true;
		two += c.nculprit == 2;
		kcsim_case_free(&c);
	}
	for (int i = 0; i < KCSIM_NSHAPES; i++)
		assert_true(seen[i]);
	assert_true(two > 50 && two < 150);
}

static void test_core_and_match(void **state)
{
	/* S selects C: C's change is fallout of S */
	struct kcsim *u = kcsim_parse("config Z\nconfig C depends Z\n"
				      "config S select C\nconfig H\n"
				      "culprit C\n");
	struct kdotconfig good, bad, out;
	struct kdotconfig_change *ch;
	bool apply[8], core[8];
	size_t n;

	kdotconfig_init(&good);
	kdotconfig_init(&bad);
	kdotconfig_init(&out);
	parse(&good, "# CONFIG_Z is not set\n# CONFIG_S is not set\n"
	      "# CONFIG_H is not set\n");
	parse(&bad, "# CONFIG_Z is not set\nCONFIG_C=y\nCONFIG_S=y\n"
	      "CONFIG_H=y\n");
	n = kcsim_changes(u, &good, &bad, &ch);
	assert_int_equal(n, 3);
	assert_string_equal(ch[0].name, "CONFIG_C");
	assert_string_equal(ch[1].name, "CONFIG_S");
	assert_string_equal(ch[2].name, "CONFIG_H");
	assert_false(ch[0].in_a);

	apply[0] = true, apply[1] = false, apply[2] = false;
	assert_false(kcsim_try(u, &good, ch, n, apply, &out));
	apply[0] = true, apply[1] = true, apply[2] = false;
	assert_true(kcsim_try(u, &good, ch, n, apply, &out));
	assert_int_equal(kcsim_core(u, &good, ch, n, apply, core), 1);
	assert_false(core[0]);
	assert_true(core[1]);
	assert_true(kcsim_expect_match("S", ch, n, core));
	assert_true(kcsim_expect_match("C | S", ch, n, core));
	assert_true(kcsim_expect_match("CONFIG_S|C H", ch, n, core));
	assert_false(kcsim_expect_match("C", ch, n, core));
	assert_false(kcsim_expect_match("S H", ch, n, core));
	kcsim_holds(&out, ch, n, core);
	assert_true(core[0] && core[1] && !core[2]);

	free(ch);
	kdotconfig_free(&good);
	kdotconfig_free(&bad);
	kdotconfig_free(&out);
	kcsim_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invisible_dropped),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_select_overrides_depends),
		cmocka_unit_test(test_fixpoint),
		cmocka_unit_test(test_negated_depends),
		cmocka_unit_test(test_idempotent_and_prefixes),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_core_and_match),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
