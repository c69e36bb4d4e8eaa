/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Power: switching a test box on and off. One small interface, drivers
 * behind it: "command" (POWER_CYCLE / POWER_OFF as ktest.pl runs them),
 * "qemu" (the built-in box: qemu-system-x86_64 booting the installed kernel),
 * and the lab-standard ones POWER_TYPE picks: "pdudaemon" (an outlet through
 * pdudaemon's HTTP API) and "ipmi" (the box's BMC through ipmitool).
 * state() may answer unknown: most power switches cannot be asked.
 */
#ifndef KTEST_POWER_H
#define KTEST_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/*
 * The built-in qemu box: qemu-system-x86_64 booting the installed kernel
 * (-kernel, read again at every power-on, so installing is replacing that
 * file) with an initramfs, its serial line on a pseudo-terminal that the
 * box owns from kpower_qemu_new() to kpower_free(): the console
 * (kpower_qemu_console()) sees every boot as one stream, as on a real
 * serial line, and never a hang-up. qemu runs with -no-reboot and
 * "panic=-1": a reboot or a panic stops the box (state() says off) until
 * the next on() or cycle().
 *
 * KVM is used when /dev/kvm can run a PC guest; otherwise qemu emulates the
 * CPU (TCG: slower, as correct) and a one-line note says so. off() sends
 * SIGTERM, then SIGKILL after stop_ms; free() stops qemu too, and qemu gets
 * SIGKILL if the thread that called on() dies first (PR_SET_PDEATHSIG): a
 * box never outlives its owner, so call on() from a thread that lives as
 * long as the box.
 */
struct kqemu_opts {
	const char *kernel;	/* the installed image (the box's "disk") */
	const char *initrd;	/* initramfs, or NULL */
	const char *append;	/* kernel command line, after the box's own
				 * "console=ttyS0 panic=-1" */
	const char *qemu;	/* default qemu-system-x86_64 from PATH */
	int memory_mb;		/* default 256 */
	int cpus;		/* default 1 */
	bool kvm;		/* use KVM when usable (a note says when not) */
	const char *const *extra;	/* more qemu arguments, NULL-terminated */
	long stop_ms;		/* off(): SIGTERM, then SIGKILL; default 3000 */
	FILE *notes;		/* where notes go ("no KVM: ..."); NULL: stderr */
};
struct kpower *kpower_qemu_new(const struct kqemu_opts *o, char *err,
			       size_t errlen);
/*
 * Starts switching the box off and returns at once: SIGTERM, no wait.
 * The next on(), off(), state() or free() reaps qemu (on() and off() wait
 * for it, up to stop_ms, then SIGKILL). For the run's steps: the box is
 * off while the next kernel builds, and nobody waits for qemu's exit.
 */
void kpower_qemu_stop(struct kpower *p);
/* The command line after "console=ttyS0 panic=-1", from the next on(). */
void kpower_qemu_set_append(struct kpower *p, const char *append);
/* The console spec of the box's serial line: "pty:/dev/pts/N". */
const char *kpower_qemu_console(const struct kpower *p);
/* Whether the box runs under KVM (false: software emulation). */
bool kpower_qemu_kvm(const struct kpower *p);
/* qemu's pid while the box is on, else 0 (for tests and diagnostics). */
int kpower_qemu_pid(const struct kpower *p);

/*
 * pdudaemon (POWER_TYPE = pdudaemon): one outlet of a PDU that a pdudaemon
 * serves, switched through its HTTP listener: GET
 * URL/power/control/{on,off,reboot}?hostname=PDU&port=PORT[&delay=D].
 * cycle() is pdudaemon's "reboot": off, delay seconds (pdudaemon's own
 * default 5 when delay < 0), on. Debian 12's pdudaemon answers once the
 * job ran (off, the delay, on), so a 200 means the cycle is done; an older
 * one that queues answers at once and the outlet switches just after.
 * Either way pdudaemon answers 200 even when its PDU driver failed (it
 * only logs it): a box that does not come back is seen by the boot watch.
 * state() is unknown: pdudaemon cannot be asked.
 */
struct kpdud_opts {
	const char *url;	/* "http://HOST:PORT"; NULL: http://localhost:16421 */
	const char *pdu;	/* the PDU's name in pdudaemon's config */
	const char *port;	/* the outlet */
	long delay_s;		/* reboot's off time; < 0: pdudaemon's */
	long timeout_ms;	/* one request, the reboot's delay included */
};
struct kpower *kpower_pdudaemon_new(const struct kpdud_opts *o);

/*
 * IPMI (POWER_TYPE = ipmi): ipmitool -I lanplus chassis power on, off,
 * cycle and status. The password goes to ipmitool in its environment
 * (IPMI_PASSWORD, -E) or as a file (-f), never on its command line, and
 * never into a message. cycle() of a chassis that is off is "power on"
 * (a BMC refuses to cycle a chassis that is off). ipmitool returns when
 * the BMC took the request: the boot watch sees the box come up.
 */
struct kipmi_opts {
	const char *host;
	int port;		/* 0: 623 */
	const char *user;	/* NULL: the BMC's anonymous user */
	const char *password;	/* NULL: none (or password_file) */
	const char *password_file;
	int cipher;		/* -C; < 0: ipmitool's default */
	const char *ipmitool;	/* NULL: "ipmitool" from PATH */
	long timeout_ms;	/* each ipmitool run */
};
struct kpower *kpower_ipmi_new(const struct kipmi_opts *o);

#endif
