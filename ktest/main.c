// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktest: build, boot and bisect Linux kernels on test boxes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "conf/strmap.h"

struct kcmd {
	const char *name;
	const char *usage;
	const char *what;
	int (*fn)(struct kcli *cli);
	bool needs_config;
};

static const struct kcmd commands[] = {
	{ "run", "[CONFIG]", "run the tests in CONFIG (the default command)",
	  cmd_run, false },
	{ "check", "CONFIG", "check CONFIG: exit 0 if ktest can run it, 2 if not",
	  cmd_check, true },
	{ "dump", "CONFIG", "print each test's options as ktest would use them",
	  cmd_dump, true },
	{ "convert", "CONFIG", "print a ktest.conf file in the native format",
	  cmd_convert, true },
	{ "options", "", "list every option with its type and default",
	  cmd_options, false },
	{ "monitor", "[CONFIG] LOGFILE",
	  "what the boot watch decides on a console log, and its crash titles",
	  cmd_monitor, true },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ktest [OPTIONS] [CONFIG]\n");
	for (size_t i = 1; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "       ktest %s [OPTIONS] %s\n", commands[i].name,
			commands[i].usage);
	fprintf(f, "\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
	fprintf(f,
		"\nOptions:\n"
		"  -D NAME=VALUE     set option NAME, as a DEFAULTS OVERRIDE would\n"
		"  -D NAME[n]=VALUE  set option NAME for test n only\n"
		"  -D VAR:=VALUE     set config variable VAR; the file cannot change it\n"
		"  --format=FORMAT   legacy (ktest.conf) or native; guessed by default\n"
		"  --dry-run         print what would run and touch nothing\n"
		"  --json FILE       also write the run's JSON report to FILE\n"
		"  --kcidb FILE      also write the run's KCIDB v4 JSON to FILE\n"
		"  --restart         start afresh: ignore an unfinished run's journal\n"
		"  -h, --help        this help\n"
		"  --version         print the version\n"
		"\nCONFIG defaults to ./ktest.conf. Exit status: 0 all tests passed,\n"
		"1 a test failed, 2 usage or config error, 3 the lab gave out.\n"
		"See ktest(1) and ktest.conf(5).\n");
}

#ifndef KTEST_GIT
#define KTEST_GIT ""
#endif

/* "ktest 0.1.0", and the build's git describe when it was built from git */
static void print_version(void)
{
	if (KTEST_GIT[0])
		printf("ktest %s (git %s)\n", KTEST_VERSION, KTEST_GIT);
	else
		printf("ktest %s\n", KTEST_VERSION);
}

static int parse_define(struct kcli *cli, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct kdefine *d;
	size_t n;

	if (!eq || eq == arg) {
		fprintf(stderr, "ktest: -D %s: expected NAME=VALUE, NAME[n]=VALUE or VAR:=VALUE\n",
			arg);
		return -1;
	}
	cli->defines = xrealloc(cli->defines,
				(size_t)(cli->ndefines + 1) * sizeof(*cli->defines));
	d = &cli->defines[cli->ndefines++];
	n = (size_t)(eq - arg);
	d->variable = eq[-1] == ':';
	if (d->variable)
		n--;
	if (!n) {
		cli->ndefines--;
		fprintf(stderr, "ktest: -D %s: the name is empty\n", arg);
		return -1;
	}
	d->name = xstrndup(arg, n);
	d->value = xstrdup(eq + 1);
	return 0;
}

static void free_cli(struct kcli *cli)
{
	for (int i = 0; i < cli->ndefines; i++) {
		free(cli->defines[i].name);
		free(cli->defines[i].value);
	}
	free(cli->defines);
}

static const struct kcmd *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* Returns 0 to go on, or exit code + 1 */
static int parse_args(struct kcli *cli, int argc, char **argv,
		      const struct kcmd **cmd)
{
	int nargs = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return KEXIT_OK + 1;
		} else if (!strcmp(a, "--version")) {
			print_version();
			return KEXIT_OK + 1;
		} else if (!strcmp(a, "--dry-run")) {
			cli->dry_run = true;
		} else if (!strcmp(a, "--restart")) {
			cli->restart = true;
		} else if (!strcmp(a, "--json") || !strncmp(a, "--json=", 7)) {
			if (a[6] == '=') {
				cli->json = a + 7;
			} else if (++i < argc) {
				cli->json = argv[i];
			} else {
				fprintf(stderr, "ktest: --json needs a FILE\n");
				return KEXIT_USAGE + 1;
			}
		} else if (!strcmp(a, "--kcidb") || !strncmp(a, "--kcidb=", 8)) {
			if (a[7] == '=') {
				cli->kcidb = a + 8;
			} else if (++i < argc) {
				cli->kcidb = argv[i];
			} else {
				fprintf(stderr, "ktest: --kcidb needs a FILE\n");
				return KEXIT_USAGE + 1;
			}
		} else if (!strcmp(a, "-D")) {
			if (++i >= argc) {
				fprintf(stderr, "ktest: -D needs NAME=VALUE\n");
				return KEXIT_USAGE + 1;
			}
			if (parse_define(cli, argv[i]))
				return KEXIT_USAGE + 1;
		} else if (!strncmp(a, "-D", 2)) {
			if (parse_define(cli, a + 2))
				return KEXIT_USAGE + 1;
		} else if (!strncmp(a, "--format=", 9)) {
			if (!strcmp(a + 9, "legacy"))
				cli->format = KFORMAT_LEGACY;
			else if (!strcmp(a + 9, "native"))
				cli->format = KFORMAT_NATIVE;
			else {
				fprintf(stderr, "ktest: --format takes legacy or native, not '%s'\n",
					a + 9);
				return KEXIT_USAGE + 1;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ktest: unknown option '%s' (see ktest --help)\n", a);
			return KEXIT_USAGE + 1;
		} else if (nargs == 0 && !*cmd && find_command(a) &&
			   access(a, F_OK) != 0) {
			*cmd = find_command(a);
			nargs++;
		} else if (!cli->config) {
			cli->config = a;
			nargs++;
		} else if (*cmd && (*cmd)->fn == cmd_monitor && !cli->operand) {
			cli->operand = a;	/* ktest monitor CONFIG LOGFILE */
			nargs++;
		} else {
			fprintf(stderr, "ktest: too many arguments: '%s' (see ktest --help)\n",
				a);
			return KEXIT_USAGE + 1;
		}
	}
	if (!*cmd)
		*cmd = &commands[0];
	if ((*cmd)->needs_config && !cli->config) {
		fprintf(stderr, "usage: ktest %s [OPTIONS] %s\n", (*cmd)->name,
			(*cmd)->usage);
		return KEXIT_USAGE + 1;
	}
	if (!cli->config)
		cli->config = "ktest.conf";
	return 0;
}

int main(int argc, char **argv)
{
	const struct kcmd *cmd = NULL;
	struct kcli cli;
	int ret;

	memset(&cli, 0, sizeof(cli));
	kdiag_init(&cli.diag);
	cli.interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	ret = parse_args(&cli, argc, argv, &cmd);
	if (ret) {
		free_cli(&cli);
		return ret - 1;
	}
	ret = cmd->fn(&cli);
	free_cli(&cli);
	return ret;
}
