/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rebooting the test box as ktest.pl does: into the test kernel once
 * (REBOOT_TYPE grub, grub2, grub2bls, syslinux or script), back to the good
 * one (SWITCH_TO_GOOD), a graceful REBOOT with POWER_CYCLE behind it, and
 * halt with POWER_OFF.
 *
 * The boot loader's menu is read from the box and turned into the index
 * its one-shot command takes by a pure parser (kgrub_parse, kgrub_find),
 * tested on real menus. Commands on the box go through ktest/box.h (libssh,
 * or the config's SSH_EXEC); power through power/power.h; the console, when
 * the caller gives one, through a small watch callback.
 */
#ifndef KTEST_REBOOT_H
#define KTEST_REBOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/model.h"
#include "ktest/box.h"
#include "power/power.h"

enum kreboot_type {
	KREBOOT_GRUB,		/* grub legacy: /boot/grub/menu.lst */
	KREBOOT_GRUB2,		/* GRUB_FILE, GRUB_REBOOT */
	KREBOOT_GRUB2BLS,	/* GRUB_BLS_GET, GRUB_REBOOT */
	KREBOOT_SYSLINUX,	/* SYSLINUX --once SYSLINUX_LABEL */
	KREBOOT_SCRIPT,		/* REBOOT_SCRIPT on the host */
};

/* "grub2" -> KREBOOT_GRUB2; -1 if unknown. */
int kreboot_type_parse(const char *s);
const char *kreboot_type_name(enum kreboot_type t);

/* ---- the boot menu (pure) ---- */

struct kgrub_entry {
	char *index;	/* what the one-shot command takes: "3", "1>2" */
	char *title;	/* as the menu shows it */
	char *line;	/* the text GRUB_MENU is looked for in */
};

struct kgrub_menu {
	struct kgrub_entry *v;
	size_t n;
};

/*
 * The bootable entries of a menu.lst (grub), grub.cfg (grub2) or grubby
 * --info=ALL listing (grub2bls), in order, with their indexes.
 */
void kgrub_parse(enum kreboot_type t, const char *text, size_t len,
		 struct kgrub_menu *m);
void kgrub_menu_free(struct kgrub_menu *m);

/*
 * The first entry GRUB_MENU names, as ktest.pl looks for it: grub, the
 * whole title; grub2, a part of the menuentry line; grub2bls, a part of
 * the title. Literal text, never a regex. NULL if none.
 */
const struct kgrub_entry *kgrub_find(enum kreboot_type t,
				     const struct kgrub_menu *m,
				     const char *menu);

/* ---- the options ---- */

/*
 * Reads the console until a line holds stop (NULL: none; a Perl regex,
 * as REBOOT_SUCCESS_LINE is), it has been quiet for quiet_ms, or max_ms
 * have passed since the call. Returns 1 when stop was seen, 0 after
 * quiet_ms of quiet, 2 at max_ms with the console still talking (quiet
 * won when both came together), -1 on a console error. Call traces seen
 * meanwhile are not failures. doc/waits.md lists every wait.
 */
typedef int (*kreboot_watch_fn)(void *ctx, const char *stop, long quiet_ms,
				long max_ms);

struct kreboot_opts {
	enum kreboot_type type;		/* REBOOT_TYPE */
	const char *grub_menu;		/* GRUB_MENU */
	const char *grub_file;		/* GRUB_FILE */
	const char *grub_reboot;	/* GRUB_REBOOT ("grub2-reboot") */
	const char *grub_bls_get;	/* GRUB_BLS_GET ("grubby --info=ALL") */
	const char *syslinux;		/* SYSLINUX ("extlinux") */
	const char *syslinux_path;	/* SYSLINUX_PATH ("/boot/extlinux") */
	const char *syslinux_label;	/* SYSLINUX_LABEL */
	const char *reboot_script;	/* REBOOT_SCRIPT */
	/* REBOOT when it is not ktest.pl's default, run on the host as
	 * written; NULL: box_reboot is run on the box */
	const char *reboot;
	long reboot_return_code;	/* REBOOT_RETURN_CODE (255) */
	const char *switch_to_test;	/* SWITCH_TO_TEST */
	const char *switch_to_good;	/* SWITCH_TO_GOOD */
	long powercycle_after_reboot_ms;	/* -1: not set */
	long poweroff_after_halt_ms;	/* -1: not set */
	const char *reboot_success_line;	/* REBOOT_SUCCESS_LINE */
	long max_wait_ms;		/* MAX_MONITOR_WAIT: a console wait's cap */
	long timeout_ms;		/* RUN_TIMEOUT (0: none) */
	/*
	 * What ktest.pl ran over ssh, fixed there: the menu.lst it reads
	 * ("/boot/grub/menu.lst"), the box's reboot ("reboot") and halt
	 * ("halt") commands. The tests, whose box is this machine, point
	 * them at fakes.
	 */
	const char *menu_lst;
	const char *box_reboot;
	const char *box_halt;
	struct kstrs keep;
};

/*
 * The reboot options of test i. Checks what REBOOT_TYPE needs (GRUB_MENU,
 * GRUB_FILE, SYSLINUX_LABEL) as ktest.pl did at startup. Returns 0, or -1
 * after reporting.
 */
int kreboot_opts_read(struct kconfig *c, int i, struct kreboot_opts *o);
void kreboot_opts_release(struct kreboot_opts *o);

/* The box command that lists the menu (NULL: no grub type). Pure. */
char *kreboot_listing_cmd(const struct kreboot_opts *o);
/*
 * The box command that boots entry index (grub types) or SYSLINUX_LABEL
 * once; NULL for script (REBOOT_SCRIPT runs on the host). Pure.
 */
char *kreboot_select_cmd(const struct kreboot_opts *o, const char *index);

/* ---- doing it ---- */

struct kreboot_result {
	bool answered;		/* the box answered before the reboot */
	bool graceful;		/* REBOOT (or halt) did it */
	int power_cycles;	/* POWER_CYCLE runs */
	bool powered_off;	/* POWER_OFF ran */
	bool stuck;		/* no "Linux version": cycled again */
	bool up;		/* waited for: REBOOT_SUCCESS_LINE came, or ssh answered */
	bool up_ssh;		/* up because the box answered ssh */
	char why[4096];		/* the failure, or what went wrong on the way */
};

struct kreboot;

/*
 * box, power (POWER_CYCLE / POWER_OFF; may be NULL) and o must outlive it.
 * watch may be NULL: no console, so nothing is waited for.
 */
struct kreboot *kreboot_new(struct kbox *box, const struct kreboot_opts *o,
			    struct kpower *power, kreboot_watch_fn watch,
			    void *watch_ctx);
void kreboot_free(struct kreboot *r);

/*
 * ktest.pl's get_grub_index: the index of GRUB_MENU in the box's menu,
 * asked once per box and menu. *index is NULL for syslinux and script.
 * Returns 0, or -1 with why (not found: the titles the menu has).
 */
int kreboot_grub_index(struct kreboot *r, const char **index, char *why,
		       size_t whylen);

/*
 * reboot_to: SWITCH_TO_TEST, the test kernel selected for one boot, then
 * kreboot_reboot() without waiting (the boot monitor watches the boot).
 */
int kreboot_to_test(struct kreboot *r, struct kreboot_result *res);

/* reboot_to_good: SWITCH_TO_GOOD, then kreboot_reboot(). */
int kreboot_to_good(struct kreboot *r, long wait_ms,
		    struct kreboot_result *res);

/*
 * reboot: if the box answers within CONNECT_TIMEOUT, sync and REBOOT
 * (REBOOT_RETURN_CODE counts as success for the default REBOOT), then
 * POWERCYCLE_AFTER_REBOOT (cut short by the kernel's "reboot: Restarting
 * system"); if it does not answer, or REBOOT fails, POWER_CYCLE. With
 * wait_ms and a console: wait for "Linux version" (power cycle if it does
 * not come), then REBOOT_SUCCESS_LINE, the box answering ssh, or wait_ms
 * of quiet, whichever comes first (MAX_MONITOR_WAIT in all). Returns 0 when the box was made to reboot, -1 (INFRA) with
 * res->why when it could not be.
 */
int kreboot_reboot(struct kreboot *r, long wait_ms,
		   struct kreboot_result *res);

/*
 * halt (POWEROFF_ON_SUCCESS): halt on the box, then POWER_OFF after
 * POWEROFF_AFTER_HALT when that is set; POWER_OFF at once when halt
 * failed. Returns -1 when the box could be neither halted nor powered off.
 */
int kreboot_halt(struct kreboot *r, struct kreboot_result *res);

#endif
