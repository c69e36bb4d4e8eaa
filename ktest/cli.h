/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command line: one table of commands (main.c), each in its own file,
 * sharing the config loading in load.c.
 */
#ifndef KTEST_CLI_H
#define KTEST_CLI_H

#include <stdbool.h>

#include "conf/diag.h"
#include "conf/model.h"

/* Exit codes, the same for every command (doc/ktest.1). */
enum {
	KEXIT_OK = 0,		/* every test passed */
	KEXIT_FAIL = 1,		/* a test failed */
	KEXIT_USAGE = 2,	/* usage or config error */
	KEXIT_INFRA = 3,	/* the lab (box, ssh, power, console) gave out */
};

enum kformat { KFORMAT_AUTO, KFORMAT_LEGACY, KFORMAT_NATIVE };

struct kdefine {		/* one -D */
	char *name;		/* NAME, NAME[n] or VAR */
	char *value;
	bool variable;		/* VAR:=VALUE */
};

struct kcli {
	const char *config;	/* the config file */
	const char *operand;	/* a second operand (ktest monitor CONFIG LOG) */
	enum kformat format;
	struct kdefine *defines;
	int ndefines;
	bool dry_run;
	bool restart;		/* --restart: ignore the journal */
	const char *json;	/* --json FILE */
	const char *kcidb;	/* --kcidb FILE */
	bool interactive;	/* stdin is a tty: prompts allowed */
	struct kdiag diag;
};

enum kload_mode {
	KLOAD_RAW,		/* as read: no defaults, no checks (convert) */
	KLOAD_CHECKED,		/* defaults applied, every check run */
};

/*
 * Reads cli->config into c and, for KLOAD_CHECKED, fills in the defaults and
 * runs every check (prompting only when cli->interactive). Returns 0, or an
 * exit code (KEXIT_USAGE) after reporting why.
 */
int kload(struct kcli *cli, struct kconfig *c, enum kload_mode mode);

int cmd_run(struct kcli *cli);
int cmd_check(struct kcli *cli);
int cmd_dump(struct kcli *cli);
int cmd_convert(struct kcli *cli);
int cmd_options(struct kcli *cli);
int cmd_monitor(struct kcli *cli);

#endif
