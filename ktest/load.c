// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading a config for any command: pick the reader, apply -D, fill in the
 * defaults, and run the checks ktest.pl runs (and a few it does not).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "conf/legacy.h"
#include "conf/native.h"

static int read_config(struct kcli *cli, struct kconfig *c)
{
	enum kformat f = cli->format;
	int legacy;

	if (access(cli->config, R_OK)) {
		kdiag_error(&cli->diag, NULL, "can't read config file %s: %s",
			    cli->config, strerror(errno));
		if (errno == ENOENT)
			kdiag_note(&cli->diag,
				   "name a config file (see examples/ and ktest.conf(5))");
		return -1;
	}
	if (f == KFORMAT_AUTO) {
		size_t n = strlen(cli->config);

		/* *.ktest is native; otherwise the first line tells */
		if (n > 6 && !strcmp(cli->config + n - 6, ".ktest"))
			legacy = 0;
		else
			legacy = klegacy_sniff(cli->config);
		f = legacy ? KFORMAT_LEGACY : KFORMAT_NATIVE;
	}
	if (f == KFORMAT_NATIVE) {
		c->native = true;
		for (int i = 0; i < cli->ndefines; i++)
			if (cli->defines[i].variable)
				kdiag_warn(&cli->diag, NULL,
					   "-D %s:= has no effect on a native config (it has no := variables); use -D %s=VALUE",
					   cli->defines[i].name, cli->defines[i].name);
		return knative_read(c, cli->config);
	}
	return klegacy_read(c, cli->config);
}

static void apply_variables(struct kcli *cli, struct kconfig *c)
{
	char *cwd = getcwd(NULL, 0);

	/* ktest.pl's one predefined variable: where it was started */
	if (cwd)
		kconfig_set_var(c, "PWD", cwd);
	free(cwd);
	for (int i = 0; i < cli->ndefines; i++) {
		const struct kdefine *d = &cli->defines[i];

		if (!d->variable)
			continue;
		kconfig_set_var(c, d->name, d->value);
		strmap_put(&c->locked, d->name, NULL);
	}
}

/* -D NAME=VALUE: applied after reading, as a DEFAULTS OVERRIDE would be */
static int apply_options(struct kcli *cli, struct kconfig *c)
{
	static const struct korigin cmdline = { "(command line -D)", 0 };

	for (int i = 0; i < cli->ndefines; i++) {
		const struct kdefine *d = &cli->defines[i];
		char name[256];
		const struct kopt_desc *k;
		int test;
		char *v, *key;

		if (d->variable)
			continue;
		kconfig_split_key(d->name, name, sizeof(name), &test);
		/* the native format's lower-case names work here too */
		k = kopt_find_any_case(name);
		if (test < 0) {
			kdiag_error(&cli->diag, &cmdline,
				    "-D %s: write NAME=VALUE or NAME[n]=VALUE", d->name);
			return -1;
		}
		v = kconfig_expand_vars(c, d->value, false, &cmdline);
		if (!v)
			return -1;
		if (test)
			key = xasprintf("%s[%d]", k ? k->name : name, test);
		else
			key = xstrdup(k ? k->name : name);
		kconfig_store(c, key, v, &cmdline);
		free(key);
		free(v);
	}
	return 0;
}

static char *ask(void *ctx, const char *name, const char *help)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	(void)ctx;
	printf("\n %s\n%s = ", help, name);
	fflush(stdout);
	n = getline(&line, &cap, stdin);
	if (n <= 0) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

static bool yes(const char *prompt)
{
	char line[64];

	printf("%s [Y/n] ", prompt);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return true;
	return line[0] != 'n' && line[0] != 'N';
}

static int set_num_tests(struct kcli *cli, struct kconfig *c)
{
	const struct kval *v = kconfig_lookup(c, "NUM_TESTS");
	long n = 1;

	if (v && !kopt_parse_int(v->value, &n)) {
		kdiag_error(&cli->diag, &v->origin, "NUM_TESTS: '%s' is not a whole number",
			    v->value);
		return -1;
	}
	if (n < 0 || n > 1000000) {
		kdiag_error(&cli->diag, v ? &v->origin : NULL,
			    "NUM_TESTS: %ld is out of range (0 to 1000000)", n);
		return -1;
	}
	c->num_tests = (int)n;
	return 0;
}

static int no_test_case(struct kcli *cli, struct kconfig *c)
{
	struct korigin o = { cli->config, 0 };
	char *type;

	if (cli->interactive) {
		printf("No test case specified.\n");
		type = ask(NULL, "TEST_TYPE",
			   "What test case would you like to run? (build, install or boot)");
		if (type && *type) {
			kconfig_store(c, "TEST_TYPE", type,
				      &(struct korigin){ "(answered at the prompt)", 0 });
			free(type);
			return 0;
		}
		free(type);
	}
	kdiag_error(&cli->diag, &o, "No test case specified");
	kdiag_note(&cli->diag, c->native ?
		   "add a test \"name\" { } section (or options, to run the defaults once)" :
		   "add a TEST_START section (or a DEFAULTS line to run the defaults)");
	return -1;
}

int kload(struct kcli *cli, struct kconfig *c, enum kload_mode mode)
{
	int bad;

	kconfig_init(c, &cli->diag);
	apply_variables(cli, c);
	if (read_config(cli, c) || apply_options(cli, c))
		return KEXIT_USAGE;
	if (mode == KLOAD_RAW)
		return 0;
	if (!c->test_case && no_test_case(cli, c))
		return KEXIT_USAGE;
	kconfig_apply_defaults(c);
	if (set_num_tests(cli, c))
		return KEXIT_USAGE;

	bad = kconfig_check_values(c);
	if (bad)
		return KEXIT_USAGE;
	bad = kconfig_check_mandatory(c, cli->interactive ? ask : NULL, NULL);
	if (bad)
		return KEXIT_USAGE;
	bad = kconfig_check_unused(c);
	if (bad && !(cli->interactive && yes("Do you want to continue?")))
		return KEXIT_USAGE;
	return 0;
}
