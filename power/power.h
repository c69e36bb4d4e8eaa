/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Power: switching a test box on and off. One small interface, drivers
 * behind it: "command" (POWER_CYCLE / POWER_OFF as ktest.pl runs them) and
 * "qemu" (the built-in box: qemu-system-x86_64 booting the installed kernel).
 * state() may answer unknown: most power switches cannot be asked.
 */
#ifndef KTEST_POWER_H
#define KTEST_POWER_H

#include <stdbool.h>
#include <stddef.h>

enum kpower_state { KPOWER_UNKNOWN, KPOWER_ON, KPOWER_OFF };

struct kpower;

struct kpower_driver {
	const char *name;
	int (*on)(struct kpower *p);
	int (*off)(struct kpower *p);
	int (*cycle)(struct kpower *p);
	enum kpower_state (*state)(struct kpower *p);
	void (*free)(struct kpower *p);
};

struct kpower {
	const struct kpower_driver *drv;
	char err[512];		/* the last failure, naming the command/box */
	void *priv;
};

static inline int kpower_on(struct kpower *p) { return p->drv->on(p); }
static inline int kpower_off(struct kpower *p) { return p->drv->off(p); }
static inline int kpower_cycle(struct kpower *p) { return p->drv->cycle(p); }
static inline enum kpower_state kpower_state(struct kpower *p)
{
	return p->drv->state ? p->drv->state(p) : KPOWER_UNKNOWN;
}
void kpower_free(struct kpower *p);

/* POWER_CYCLE and POWER_OFF (either may be NULL), run with a timeout. */
struct kpower *kpower_command_new(const char *cycle_cmd, const char *off_cmd,
				  long timeout_ms);

/* The built-in qemu box. */
struct kqemu_opts {
	const char *kernel;	/* the installed image (the box's "disk") */
	const char *initrd;	/* initramfs */
	const char *append;	/* kernel command line; console=ttyS0 added */
	const char *serial_sock;	/* unix socket the serial connects to */
	const char *qemu;	/* default qemu-system-x86_64 */
	int memory_mb;		/* default 256 */
	int cpus;		/* default 1 */
	bool kvm;		/* use /dev/kvm when present (it says when not) */
	const char *extra;	/* more qemu arguments, shell-split */
};
struct kpower *kpower_qemu_new(const struct kqemu_opts *o, char *err,
			       size_t errlen);

#endif
