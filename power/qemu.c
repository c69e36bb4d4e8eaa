// SPDX-License-Identifier: GPL-2.0-only
/*
 * The qemu power driver: the built-in test box. on() starts
 * qemu-system-x86_64 on the installed kernel, off() stops it, state() asks
 * whether it still runs. See power.h for what the box looks like from
 * outside; this comment is about how.
 *
 * The serial line. The box opens a pseudo-terminal when it is made and
 * keeps it until it is freed: qemu gets the master as its stdin and stdout
 * (-chardev stdio), the console reads the slave ("pty:/dev/pts/N"). qemu
 * never owns the line, so a power cycle is no hang-up: the console stays
 * open and reads the next boot after the last lines of the previous one,
 * like a serial cable. qemu's own "-chardev pty" would not do: its pty
 * dies with qemu, and qemu throws output away while nobody has the slave
 * open, which loses the start of a boot. The box also keeps the slave open
 * itself (keeper): with no slave open a master reads EIO, and qemu stops
 * reading the console's input for good. Both ends are raw: an echoing
 * slave would send the guest's output back to it as input.
 *
 * KVM. /dev/kvm opening and creating a VM is not enough: a cloud VM may
 * offer a paravirtual /dev/kvm (kvm-pvm) that runs only guests built for
 * it, where qemu's PC guest never prints a line. qemu's KVM needs the CPU's
 * virtualisation extensions, so the box wants the vmx or svm flag as well,
 * and says why it falls back to software emulation when it does.
 *
 * Starting. qemu says nothing when it started well. Its command-line and
 * accelerator errors come within ~50 ms of exec (measured), so on() waits
 * up to SETTLE_MS for qemu to die and reports its stderr if it does; a
 * later exit is the box stopping (a reboot, a panic with panic=-1), which
 * state() sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "power/power.h"

#define DEFAULT_QEMU	"qemu-system-x86_64"
#define DEFAULT_MEMORY	256
#define DEFAULT_STOP_MS	3000
/* How long on() watches for qemu dying of a bad command line. */
#define SETTLE_MS	250
/* how often qemu's end is looked for without a pidfd */
#define EXIT_TICK_MS	20
/* How much of qemu's stderr goes into a message. */
#define STDERR_KEEP	300
#define INSTALL_HINT	"install qemu-system-x86 (apt-get install qemu-system-x86)"

struct qemu_box {
	char *kernel, *initrd, *append, *qemu;
	char **extra;
	int memory_mb, cpus;
	long stop_ms;
	FILE *notes;

	bool kvm;		/* decided once, at kpower_qemu_new() */
	char no_kvm[256];	/* why not, when KVM was wanted */
	bool noted;

	int master, keeper;	/* the serial line, see the top */
	char console[PATH_MAX + 8];	/* "pty:/dev/pts/N" */

	pid_t pid;		/* 0 while off */
	int pidfd;		/* -1 while off */
	int errfd;		/* qemu's stderr (a memfd) */
	bool stopping;		/* we sent the signal that ends it */
};

static const struct kpower_driver qemu_driver;

static struct qemu_box *box_of(const struct kpower *p)
{
	return p && p->drv == &qemu_driver ? p->priv : NULL;
}

/* ---- KVM ------------------------------------------------------------------ */

/* The CPU's flags have vmx (Intel VT-x) or svm (AMD-V). */
static bool cpu_virt_flag(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		found = strstr(line, " vmx") || strstr(line, " svm");
		break;
	}
	free(line);
	fclose(f);
	return found;
}

/* Can qemu's KVM run a PC guest here? When not, why into why. */
static bool kvm_usable(char *why, size_t len)
{
	int fd, vm, v;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "/dev/kvm: %s", strerror(errno));
		return false;
	}
	v = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION) {
		snprintf(why, len, "/dev/kvm: API version %d, not %d", v,
			 KVM_API_VERSION);
		close(fd);
		return false;
	}
	vm = ioctl(fd, KVM_CREATE_VM, 0);
	if (vm < 0) {
		snprintf(why, len, "/dev/kvm: cannot create a VM: %s",
			 strerror(errno));
		close(fd);
		return false;
	}
	close(vm);
	close(fd);
	if (!cpu_virt_flag()) {
		snprintf(why, len,
			 "/dev/kvm works but the CPU has no vmx/svm flag: %s",
			 access("/sys/module/kvm_pvm", F_OK) ?
			 "not a KVM that runs PC guests" :
			 "it is kvm-pvm, which runs only PVM guests");
		return false;
	}
	return true;
}

/* ---- the serial line ---------------------------------------------------------- */

static int make_raw(int fd)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return -1;
	cfmakeraw(&t);
	cfsetspeed(&t, B115200);
	return tcsetattr(fd, TCSANOW, &t);
}

static int open_line(struct qemu_box *b, char *err, size_t len)
{
	char name[PATH_MAX];

	b->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (b->master < 0) {
		snprintf(err, len, "qemu box: cannot open a pseudo-terminal for the serial line: %s",
			 strerror(errno));
		return -1;
	}
	if (grantpt(b->master) < 0 || unlockpt(b->master) < 0 ||
	    ptsname_r(b->master, name, sizeof(name))) {
		snprintf(err, len, "qemu box: cannot set the serial pty up: %s",
			 strerror(errno));
		return -1;
	}
	b->keeper = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (b->keeper < 0) {
		snprintf(err, len, "qemu box: cannot open the serial pty %s: %s",
			 name, strerror(errno));
		return -1;
	}
	if (make_raw(b->keeper) < 0 || make_raw(b->master) < 0) {
		snprintf(err, len, "qemu box: cannot make the serial pty %s raw: %s",
			 name, strerror(errno));
		return -1;
	}
	snprintf(b->console, sizeof(b->console), "pty:%s", name);
	return 0;
}

/* ---- finding qemu ----------------------------------------------------------- */

/* Is name (a path, or a command looked up in PATH) an executable? */
static bool find_exec(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *dir ? dir : ".", name);

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

/* ---- qemu's stderr ------------------------------------------------------------ */

/* The end of what qemu printed, lines joined by " | ", into buf. */
static const char *stderr_tail(struct qemu_box *b, char *buf, size_t len)
{
	char raw[STDERR_KEEP + 1];
	struct stat st;
	off_t from = 0;
	ssize_t n;
	size_t o = 0;

	buf[0] = '\0';
	if (b->errfd < 0 || fstat(b->errfd, &st) < 0 || !st.st_size)
		return buf;
	if (st.st_size > STDERR_KEEP)
		from = st.st_size - STDERR_KEEP;
	n = pread(b->errfd, raw, STDERR_KEEP, from);
	if (n <= 0)
		return buf;
	while (n > 0 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		n--;
	for (ssize_t i = 0; i < n && o + 4 < len; i++) {
		if (raw[i] == '\n') {
			memcpy(buf + o, " | ", 3);
			o += 3;
		} else if (raw[i] != '\r') {
			buf[o++] = raw[i];
		}
	}
	buf[o] = '\0';
	return buf;
}

/* ---- the process --------------------------------------------------------------- */

struct argv {
	char **v;
	size_t n, cap;
};

static void arg(struct argv *a, char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? 2 * a->cap : 32;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void build_argv(struct qemu_box *b, struct argv *a)
{
	arg(a, xstrdup(b->qemu));
	arg(a, xstrdup("-nodefaults"));
	arg(a, xstrdup("-no-user-config"));
	arg(a, xstrdup("-display"));
	arg(a, xstrdup("none"));
	arg(a, xstrdup("-chardev"));
	arg(a, xstrdup("stdio,id=s0,signal=off"));
	arg(a, xstrdup("-serial"));
	arg(a, xstrdup("chardev:s0"));
	arg(a, xstrdup("-no-reboot"));
	arg(a, xstrdup("-accel"));
	if (b->kvm) {
		arg(a, xstrdup("kvm"));
		arg(a, xstrdup("-cpu"));
		arg(a, xstrdup("host"));
	} else {
		arg(a, xstrdup("tcg"));
	}
	arg(a, xstrdup("-m"));
	arg(a, xasprintf("%d", b->memory_mb));
	arg(a, xstrdup("-smp"));
	arg(a, xasprintf("%d", b->cpus));
	arg(a, xstrdup("-kernel"));
	arg(a, xstrdup(b->kernel));
	if (b->initrd) {
		arg(a, xstrdup("-initrd"));
		arg(a, xstrdup(b->initrd));
	}
	arg(a, xstrdup("-append"));
	arg(a, xasprintf("console=ttyS0 panic=-1%s%s", b->append ? " " : "",
			 b->append ? b->append : ""));
	for (char **e = b->extra; e && *e; e++)
		arg(a, xstrdup(*e));
}

/* In the child: never returns. Reports a failed exec on report_fd. */
static void exec_qemu(struct qemu_box *b, char **argv, pid_t parent,
		      int report_fd)
{
	sigset_t none;
	int e;

	/* the box dies with its owner, whatever happens to the owner */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (dup2(b->master, 0) < 0 || dup2(b->master, 1) < 0 ||
	    dup2(b->errfd, 2) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(report_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* qemu ended (status from waitpid): forget the process. */
static void reaped(struct kpower *p, int status)
{
	struct qemu_box *b = p->priv;
	char tail[400], how[64];

	if (!b->stopping && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		if (WIFSIGNALED(status))
			snprintf(how, sizeof(how), "was killed by signal %d",
				 WTERMSIG(status));
		else
			snprintf(how, sizeof(how), "exited with status %d",
				 WEXITSTATUS(status));
		stderr_tail(b, tail, sizeof(tail));
		snprintf(p->err, sizeof(p->err), "qemu box: %s %s%s%s", b->qemu,
			 how, tail[0] ? ": " : "", tail);
	}
	if (b->pidfd >= 0)
		close(b->pidfd);
	b->pidfd = -1;
	b->pid = 0;
	b->stopping = false;
}

/*
 * Waits for qemu to end: up to ms (0: only a look, < 0: as long as it
 * takes). True when it ended (and was reaped).
 */
static bool wait_exit(struct kpower *p, long ms)
{
	struct qemu_box *b = p->priv;
	struct pollfd pfd = { .fd = b->pidfd, .events = POLLIN };
	int status, r;

	if (b->pidfd >= 0 && ms > 0) {
		do {
			r = poll(&pfd, 1, (int)ms);
		} while (r < 0 && errno == EINTR);
	} else if (ms > 0) {
		/*
		 * no pidfd (a kernel before 5.3): look every EXIT_TICK_MS,
		 * not once after ms (doc/waits.md)
		 */
		struct timespec ts = { 0, EXIT_TICK_MS * 1000000L };

		for (long t = 0; t < ms; t += EXIT_TICK_MS) {
			r = waitpid(b->pid, &status, WNOHANG);
			if (r == b->pid) {
				reaped(p, status);
				return true;
			}
			if (r < 0 && errno != EINTR)
				break;
			nanosleep(&ts, NULL);
		}
	}
	do {
		r = waitpid(b->pid, &status, ms < 0 ? 0 : WNOHANG);
	} while (r < 0 && errno == EINTR);
	if (r == b->pid) {
		reaped(p, status);
		return true;
	}
	if (r < 0 && errno == ECHILD) {
		/* someone else reaped it (SIGCHLD ignored): it is gone */
		reaped(p, 0);
		return true;
	}
	return false;
}

static void note(struct qemu_box *b)
{
	if (b->noted || !b->no_kvm[0])
		return;
	b->noted = true;
	fprintf(b->notes ? b->notes : stderr,
		"qemu box: no KVM: software emulation (%s)\n", b->no_kvm);
	fflush(b->notes ? b->notes : stderr);
}

static int check_file(struct kpower *p, const char *what, const char *path,
		      const char *hint)
{
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(p->err, sizeof(p->err), "qemu box: the %s %s: %s (%s)", what,
		 path, strerror(errno), hint);
	return -1;
}

static int qemu_off(struct kpower *p);

static int qemu_on(struct kpower *p)
{
	struct qemu_box *b = p->priv;
	struct argv a = { 0 };
	char tail[400];
	int report[2], e = 0, status;
	pid_t parent = getpid();
	ssize_t n;

	p->err[0] = '\0';
	if (b->pid && b->stopping && qemu_off(p) < 0)
		return -1;	/* kpower_qemu_stop() asked it to end: wait */
	if (b->pid && !wait_exit(p, 0))
		return 0;	/* already on */
	if (check_file(p, "kernel image", b->kernel, "install a kernel first") ||
	    (b->initrd && check_file(p, "initramfs", b->initrd,
				     "see tests/lab/initramfs.sh")))
		return -1;
	note(b);
	if (b->errfd >= 0)
		close(b->errfd);
	b->errfd = memfd_create("qemu-stderr", MFD_CLOEXEC);
	if (b->errfd < 0 || pipe2(report, O_CLOEXEC) < 0) {
		snprintf(p->err, sizeof(p->err), "qemu box: cannot start %s: %s",
			 b->qemu, strerror(errno));
		return -1;
	}
	build_argv(b, &a);
	b->pid = fork();
	if (b->pid == 0)
		exec_qemu(b, a.v, parent, report[1]);
	close(report[1]);
	argv_free(&a);
	if (b->pid < 0) {
		snprintf(p->err, sizeof(p->err), "qemu box: cannot start %s: fork: %s",
			 b->qemu, strerror(errno));
		b->pid = 0;
		close(report[0]);
		return -1;
	}
	do {
		n = read(report[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == sizeof(e)) {
		waitpid(b->pid, &status, 0);
		b->pid = 0;
		snprintf(p->err, sizeof(p->err), "qemu box: cannot run %s: %s: %s",
			 b->qemu, strerror(e), INSTALL_HINT);
		return -1;
	}
	b->pidfd = pidfd_open(b->pid, 0);
	if (wait_exit(p, SETTLE_MS)) {
		if (!p->err[0])
			snprintf(p->err, sizeof(p->err),
				 "qemu box: %s stopped at once: %s", b->qemu,
				 stderr_tail(b, tail, sizeof(tail)));
		return -1;
	}
	return 0;
}

static int qemu_off(struct kpower *p)
{
	struct qemu_box *b = p->priv;

	if (!b->pid || wait_exit(p, 0))
		return 0;
	b->stopping = true;
	if (kill(b->pid, SIGTERM) < 0 && errno != ESRCH)
		goto fail;
	if (wait_exit(p, b->stop_ms))
		return 0;
	if (kill(b->pid, SIGKILL) < 0 && errno != ESRCH)
		goto fail;
	if (wait_exit(p, -1))
		return 0;
fail:
	snprintf(p->err, sizeof(p->err), "qemu box: cannot stop %s (pid %d): %s",
		 b->qemu, (int)b->pid, strerror(errno));
	return -1;
}

void kpower_qemu_stop(struct kpower *p)
{
	struct qemu_box *b = box_of(p);

	if (!b || !b->pid || wait_exit(p, 0))
		return;
	/* reaped by the next on(), off(), state() or free() */
	if (kill(b->pid, SIGTERM) == 0 || errno == ESRCH)
		b->stopping = true;
}

static int qemu_cycle(struct kpower *p)
{
	if (qemu_off(p) < 0)
		return -1;
	return qemu_on(p);
}

static enum kpower_state qemu_state(struct kpower *p)
{
	struct qemu_box *b = p->priv;

	if (!b->pid || wait_exit(p, 0))
		return KPOWER_OFF;
	return KPOWER_ON;
}

static void qemu_free(struct kpower *p)
{
	struct qemu_box *b = p->priv;

	if (!b)
		return;
	if (b->pid && qemu_off(p) < 0) {
		/* still there: never leave it behind */
		kill(b->pid, SIGKILL);
		waitpid(b->pid, NULL, 0);
	}
	if (b->pidfd >= 0)
		close(b->pidfd);
	if (b->errfd >= 0)
		close(b->errfd);
	if (b->keeper >= 0)
		close(b->keeper);
	if (b->master >= 0)
		close(b->master);
	free(b->kernel);
	free(b->initrd);
	free(b->append);
	free(b->qemu);
	for (char **e = b->extra; e && *e; e++)
		free(*e);
	free(b->extra);
	free(b);
	p->priv = NULL;
}

static const struct kpower_driver qemu_driver = {
	.name = "qemu",
	.on = qemu_on,
	.off = qemu_off,
	.cycle = qemu_cycle,
	.state = qemu_state,
	.free = qemu_free,
};

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

struct kpower *kpower_qemu_new(const struct kqemu_opts *o, char *err,
			       size_t errlen)
{
	struct kpower *p;
	struct qemu_box *b;
	size_t n = 0;

	if (!o->kernel || !*o->kernel) {
		snprintf(err, errlen, "qemu box: no kernel image given");
		return NULL;
	}
	if (o->memory_mb < 0 || o->cpus < 0) {
		snprintf(err, errlen, "qemu box: bad %s %d",
			 o->memory_mb < 0 ? "memory size" : "CPU count",
			 o->memory_mb < 0 ? o->memory_mb : o->cpus);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	b = xcalloc(1, sizeof(*b));
	p->drv = &qemu_driver;
	p->priv = b;
	b->master = b->keeper = b->pidfd = b->errfd = -1;
	b->kernel = xstrdup(o->kernel);
	b->initrd = dup_or_null(o->initrd);
	b->append = dup_or_null(o->append);
	b->qemu = xstrdup(o->qemu && *o->qemu ? o->qemu : DEFAULT_QEMU);
	b->memory_mb = o->memory_mb ? o->memory_mb : DEFAULT_MEMORY;
	b->cpus = o->cpus ? o->cpus : 1;
	b->stop_ms = o->stop_ms > 0 ? o->stop_ms : DEFAULT_STOP_MS;
	b->notes = o->notes;
	while (o->extra && o->extra[n])
		n++;
	b->extra = xcalloc(n + 1, sizeof(*b->extra));
	for (size_t i = 0; i < n; i++)
		b->extra[i] = xstrdup(o->extra[i]);

	if (!find_exec(b->qemu)) {
		snprintf(err, errlen, "qemu box: %s: %s: %s", b->qemu,
			 strchr(b->qemu, '/') ? strerror(errno) : "not found in PATH",
			 INSTALL_HINT);
		goto fail;
	}
	if (open_line(b, err, errlen) < 0)
		goto fail;
	b->kvm = o->kvm && kvm_usable(b->no_kvm, sizeof(b->no_kvm));
	return p;
fail:
	kpower_free(p);
	return NULL;
}

void kpower_qemu_set_append(struct kpower *p, const char *append)
{
	struct qemu_box *b = box_of(p);

	if (!b)
		return;
	free(b->append);
	b->append = dup_or_null(append);
}

const char *kpower_qemu_console(const struct kpower *p)
{
	struct qemu_box *b = box_of(p);

	return b ? b->console : NULL;
}

bool kpower_qemu_kvm(const struct kpower *p)
{
	struct qemu_box *b = box_of(p);

	return b && b->kvm;
}

int kpower_qemu_pid(const struct kpower *p)
{
	struct qemu_box *b = box_of(p);

	return b ? (int)b->pid : 0;
}
