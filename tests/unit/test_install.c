// SPDX-License-Identifier: GPL-2.0-only
/*
 * Installing a kernel: the plan (which steps, which commands) without any
 * I/O, the options as a config gives them, and the install itself against
 * a real OpenSSH sshd on 127.0.0.1 (tests/lab/sshd.sh) whose "box" is a
 * scratch directory: /boot, / (for /lib/modules) and /tmp live in it.
 *
 * The kernel tree is a fake with the real interface: a BUILD_DIR whose
 * Makefile has modules_install (INSTALL_MOD_PATH, INSTALL_MOD_STRIP, the
 * version from O=/include/config/kernel.release), an OUTPUT_DIR with a
 * .config and a 20 MiB bzImage.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/legacy.h"
#include "conf/model.h"
#include "ktest/install.h"
#include "sshlab.h"

#define VERSION		"6.1.0-ktest"
#define IMAGE_SIZE	(20 << 20)

static struct sshlab lab;

/* ---- helpers ---- */

struct lines {
	struct sbuf all;	/* every line, each ended by '\n' */
};

static struct lines out;

static void collect(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	sbuf_addn(&l->all, line, len);
	sbuf_addc(&l->all, '\n');
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *p)
{
	struct sbuf b;
	char buf[4096];
	size_t n;
	FILE *f = fopen(p, "r");

	if (!f)
		return NULL;
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return sbuf_detach(&b);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("'%s' failed (%d)", cmd, rc);
	free(cmd);
}

static char *shell_line(const char *cmd)
{
	char buf[1024] = "";
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	if (!fgets(buf, sizeof(buf), p))
		buf[0] = '\0';
	pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

static char *sha256(const char *file)
{
	char *cmd = xasprintf("sha256sum '%s'", file);
	char *line = shell_line(cmd);

	free(cmd);
	line[strcspn(line, " ")] = '\0';
	return line;
}

/* Files in a directory (not . and ..) */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static bool exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* ---- the pure plan ---- */

static const struct kinstall_step *step(const struct kinstall_plan *p,
					size_t i,
					enum kinstall_step_kind kind)
{
	assert_true(i < p->n);
	assert_int_equal(p->steps[i].kind, kind);
	return &p->steps[i];
}

static struct kinstall_opts plan_opts(void)
{
	struct kinstall_opts o = {
		.make_cmd = "make ARCH=x86_64",
		.build_dir = "/src/linux",
		.output_dir = "/build/out",
		.build_target = "arch/x86/boot/bzImage",
		.target_image = "/boot/vmlinuz-$KERNEL_VERSION",
		.tmp_dir = "/tmp/ktest/box",
		.kernel_version = VERSION,
	};

	return o;
}

static struct kbox_opts plan_box(void)
{
	struct kbox_opts b = {
		.machine = "box1",
		.ssh_user = "root",
		.ssh = { .host = "box1", .user = "root" },
	};

	return b;
}

static void test_plan_image_only(void **state)
{
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	const struct kinstall_step *s;
	char why[512];

	(void)state;
	o.pre_install = "ssh $SSH_USER@$MACHINE rm -f /boot/initrd-$KERNEL_VERSION";
	o.post_install = "/usr/local/bin/mkinitrd $MACHINE $KERNEL_VERSION";
	assert_int_equal(kinstall_plan(&o, &b, false, NULL, &p, why,
				       sizeof(why)), 0);
	assert_int_equal(p.n, 4);
	s = step(&p, 0, KI_PRE_INSTALL);
	assert_string_equal(s->cmd,
			    "ssh root@box1 rm -f /boot/initrd-" VERSION);
	s = step(&p, 1, KI_PROBE);
	assert_string_equal(s->cmd, "echo testing connection");
	assert_null(s->legacy);
	s = step(&p, 2, KI_IMAGE);
	assert_string_equal(s->src, "/build/out/arch/x86/boot/bzImage");
	assert_string_equal(s->dst, "/boot/vmlinuz-" VERSION);
	assert_int_equal(s->mode, 0644);
	assert_null(s->legacy);
	s = step(&p, 3, KI_POST_INSTALL);
	assert_string_equal(s->cmd, "/usr/local/bin/mkinitrd box1 " VERSION);
	kinstall_plan_free(&p);
}

static void test_plan_modules(void **state)
{
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	const struct kinstall_step *s;
	const char *const tar[] = {
		"tar", "--owner=0", "--group=0", "--numeric-owner", "-C",
		"/tmp/ktest/box/ktest-mods.abc", "-czf",
		"/tmp/ktest/box/ktest-mods.abc/ktest-mods.tar.gz",
		"lib/modules/" VERSION, NULL,
	};
	char why[512];
	size_t i;

	(void)state;
	/* OUTPUT_DIR relative: to BUILD_DIR, as ktest.pl's chdir made it */
	o.output_dir = "../out dir";
	assert_int_equal(kinstall_plan(&o, &b, true,
				       "/tmp/ktest/box/ktest-mods.abc", &p,
				       why, sizeof(why)), 0);
	assert_int_equal(p.n, 8);
	step(&p, 0, KI_PROBE);
	s = step(&p, 1, KI_IMAGE);
	assert_string_equal(s->src,
			    "/src/linux/../out dir/arch/x86/boot/bzImage");
	s = step(&p, 2, KI_MODULES_BUILD);
	assert_string_equal(s->cmd,
			    "make ARCH=x86_64 O='/src/linux/../out dir' "
			    "INSTALL_MOD_STRIP=1 "
			    "INSTALL_MOD_PATH=/tmp/ktest/box/ktest-mods.abc "
			    "modules_install");
	s = step(&p, 3, KI_MODULES_PACK);
	for (i = 0; tar[i]; i++)
		assert_string_equal(s->argv[i], tar[i]);
	assert_null(s->argv[i]);
	s = step(&p, 4, KI_MODULES_COPY);
	assert_string_equal(s->src,
			    "/tmp/ktest/box/ktest-mods.abc/ktest-mods.tar.gz");
	assert_string_equal(s->dst, "/tmp/ktest-mods.tar.gz");
	assert_null(s->legacy);
	s = step(&p, 5, KI_MODULES_REMOVE);
	assert_string_equal(s->cmd, "rm -rf /lib/modules/" VERSION);
	s = step(&p, 6, KI_MODULES_UNPACK);
	assert_string_equal(s->cmd, "cd / && tar -xzf /tmp/ktest-mods.tar.gz");
	s = step(&p, 7, KI_MODULES_CLEAN);
	assert_string_equal(s->cmd, "rm -f /tmp/ktest-mods.tar.gz");
	kinstall_plan_free(&p);

	/* where the box keeps its modules and scratch files, quoted */
	o.mod_root = "/srv/nfs root/";
	o.remote_tmp = "/var/tmp/it's";
	assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
				       sizeof(why)), 0);
	assert_string_equal(p.steps[4].dst, "/var/tmp/it's/ktest-mods.tar.gz");
	assert_string_equal(p.steps[5].cmd,
			    "rm -rf '/srv/nfs root/lib/modules/" VERSION "'");
	assert_string_equal(p.steps[6].cmd,
			    "cd '/srv/nfs root/' && tar -xzf "
			    "'/var/tmp/it'\\''s/ktest-mods.tar.gz'");
	kinstall_plan_free(&p);
}

/* Modules packed already (the build cache's): copied, not made again. */
static void test_plan_packed(void **state)
{
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	const struct kinstall_step *s;
	char why[512];

	(void)state;
	o.modules_tarball = "/state/build-cache/ab12-99/ktest-mods.tar.gz";
	assert_int_equal(kinstall_plan(&o, &b, true, NULL, &p, why,
				       sizeof(why)), 0);
	assert_int_equal(p.n, 6);
	step(&p, 0, KI_PROBE);
	step(&p, 1, KI_IMAGE);
	s = step(&p, 2, KI_MODULES_COPY);
	assert_string_equal(s->src, o.modules_tarball);
	assert_string_equal(s->dst, "/tmp/ktest-mods.tar.gz");
	step(&p, 3, KI_MODULES_REMOVE);
	s = step(&p, 4, KI_MODULES_UNPACK);
	assert_string_equal(s->cmd, "cd / && tar -xzf /tmp/ktest-mods.tar.gz");
	step(&p, 5, KI_MODULES_CLEAN);
	kinstall_plan_free(&p);

	/* without it, a kernel with modules needs a staging directory */
	o.modules_tarball = NULL;
	assert_int_equal(kinstall_plan(&o, &b, true, NULL, &p, why,
				       sizeof(why)), -1);
	assert_non_null(strstr(why, "staging"));
}

/* SSH_EXEC and SCP_TO_TARGET as a legacy config writes them */
static void test_plan_legacy(void **state)
{
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	char why[512];

	(void)state;
	b.ssh_exec = "ssh -p 2222 $SSH_USER@$MACHINE $SSH_COMMAND";
	b.scp_to_target = "scp -P 2222 $SRC_FILE $SSH_USER@$MACHINE:$DST_FILE";
	b.scp_to_target_install = "cp $SRC_FILE /tftpboot/$MACHINE-image";
	assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
				       sizeof(why)), 0);
	assert_int_equal(p.n, 8);
	assert_string_equal(p.steps[0].legacy,
			    "ssh -p 2222 root@box1 'echo testing connection'");
	assert_string_equal(p.steps[1].legacy,
			    "cp /build/out/arch/x86/boot/bzImage "
			    "/tftpboot/box1-image");
	/* the tarball goes to the directory, as ktest.pl's "/tmp" */
	assert_string_equal(p.steps[4].legacy,
			    "scp -P 2222 /st/ktest-mods.tar.gz root@box1:/tmp");
	assert_string_equal(p.steps[5].legacy,
			    "ssh -p 2222 root@box1 'rm -rf /lib/modules/"
			    VERSION "'");
	assert_string_equal(p.steps[6].legacy,
			    "ssh -p 2222 root@box1 'cd / && tar -xzf "
			    "/tmp/ktest-mods.tar.gz'");
	/* host steps have no legacy form: they are host commands already */
	assert_null(p.steps[2].legacy);
	kinstall_plan_free(&p);

	/* a command with quotes of its own survives the two shells */
	{
		char *line = kbox_exec_line(&b, "echo 'a b' \"$HOME\"");

		assert_string_equal(line, "ssh -p 2222 root@box1 "
				    "'echo '\\''a b'\\'' \"$HOME\"'");
		free(line);
	}
}

static void test_plan_no_install(void **state)
{
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	char why[512];

	(void)state;
	o.no_install = true;
	o.pre_install = "false";
	assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
				       sizeof(why)), 0);
	assert_int_equal(p.n, 0);
	kinstall_plan_free(&p);
}

/* The version goes into rm -rf on the box: only plain words. */
static void test_plan_bad_version(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "6.1 test", "a/b", "../..", "$(reboot)",
		"6.1;rm", "6.1\n", "v`id`",
	};
	struct kinstall_opts o = plan_opts();
	struct kbox_opts b = plan_box();
	struct kinstall_plan p;
	char why[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.kernel_version = bad[i];
		assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
					       sizeof(why)), -1);
		if (!strstr(why, "kernel version") ||
		    !strstr(why, "LOCALVERSION"))
			fail_msg("why: %s", why);
		assert_int_equal(p.n, 0);
	}
	o.kernel_version = NULL;
	assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
				       sizeof(why)), -1);
	/* no modules, no $KERNEL_VERSION anywhere: not needed */
	o.target_image = "/boot/vmlinuz-test";
	assert_int_equal(kinstall_plan(&o, &b, false, NULL, &p, why,
				       sizeof(why)), 0);
	kinstall_plan_free(&p);
	/* the odd but plain ones pass */
	o.kernel_version = "6.1.0-rc1+_x~2";
	assert_int_equal(kinstall_plan(&o, &b, true, "/st", &p, why,
				       sizeof(why)), 0);
	kinstall_plan_free(&p);

	/* and the missing options say which */
	o.build_target = NULL;
	assert_int_equal(kinstall_plan(&o, &b, false, NULL, &p, why,
				       sizeof(why)), -1);
	assert_non_null(strstr(why, "BUILD_TARGET"));
	o.build_target = "x";
	o.output_dir = NULL;
	assert_int_equal(kinstall_plan(&o, &b, false, NULL, &p, why,
				       sizeof(why)), -1);
	assert_non_null(strstr(why, "OUTPUT_DIR"));
}

static void test_config_has_modules(void **state)
{
	static const struct {
		const char *text;
		bool want;
	} cases[] = {
		{ "CONFIG_MODULES=y\n", true },
		{ "CONFIG_A=y\nCONFIG_MODULES=y\nCONFIG_B=m\n", true },
		{ "CONFIG_MODULES=y", true },		/* no newline */
		{ "CONFIG_MODULES=y\r\n", true },
		{ "# CONFIG_MODULES is not set\n", false },
		{ "CONFIG_MODULES_USE_ELF_RELA=y\n", false },
		{ "CONFIG_MODULES=n\n", false },
		{ "XCONFIG_MODULES=y\n", false },
		{ "CONFIG_MODULES=yes\n", false },
		{ "", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (kinstall_config_has_modules(cases[i].text,
						strlen(cases[i].text)) !=
		    cases[i].want)
			fail_msg("case %zu: '%s'", i, cases[i].text);
}

/* ---- the options, from a config ---- */

struct conf {
	struct kdiag d;
	struct kconfig c;
	char *msgs;
	size_t len;
	FILE *mem;
};

static void conf_read(struct conf *f, const char *text, int want)
{
	memset(f, 0, sizeof(*f));
	kdiag_init(&f->d);
	f->mem = open_memstream(&f->msgs, &f->len);
	f->d.out = f->mem;
	kconfig_init(&f->c, &f->d);
	assert_int_equal(klegacy_read_buf(&f->c, "t.conf", text,
					  strlen(text)), want);
	kconfig_apply_defaults(&f->c);
	f->c.num_tests = 2;
}

static void conf_free(struct conf *f)
{
	kconfig_free(&f->c);
	fclose(f->mem);
	free(f->msgs);
}

static void test_opts_from_config(void **state)
{
	static const char text[] =
		"MACHINE = box7\n"
		"OUTPUT_DIR = /build/${MACHINE}\n"
		"BUILD_DIR = /src\n"
		"RUN_TIMEOUT = 30\n"
		"CONNECT_TIMEOUT = 5\n"
		"PRE_INSTALL = echo $KERNEL_VERSION\n"
		"\n"
		"TEST_START\n"
		"TEST_TYPE = install\n"
		"\n"
		"TEST_START\n"
		"TEST_TYPE = install\n"
		"NO_INSTALL = 1\n"
		"SSH_EXEC = ssh -p 2222 $SSH_USER@$MACHINE $SSH_COMMAND\n"
		"SCP_TO_TARGET = scp -P 2222 $SRC_FILE $SSH_USER@$MACHINE:$DST_FILE\n";
	struct conf f;
	struct kinstall_opts o;
	struct kbox_opts b;

	(void)state;
	conf_read(&f, text, 0);
	assert_int_equal(kinstall_opts_read(&f.c, 1, &o), 0);
	assert_false(o.no_install);
	assert_string_equal(o.output_dir, "/build/box7");
	assert_string_equal(o.build_target, "arch/x86/boot/bzImage");
	assert_string_equal(o.target_image, "/boot/vmlinuz-test");
	assert_string_equal(o.tmp_dir, "/tmp/ktest/box7");
	assert_string_equal(o.make_cmd, "make");
	assert_string_equal(o.pre_install, "echo $KERNEL_VERSION");
	assert_null(o.post_install);
	assert_int_equal(o.timeout_ms, 30000);
	kinstall_opts_release(&o);

	/* ktest.pl's default commands: libssh does their job */
	assert_int_equal(kbox_opts_read(&f.c, 1, &b), 0);
	assert_string_equal(b.machine, "box7");
	assert_string_equal(b.ssh.host, "box7");
	assert_string_equal(b.ssh_user, "root");
	assert_int_equal(b.ssh.connect_timeout_ms, 5000);
	assert_int_equal(b.timeout_ms, 30000);
	assert_null(b.ssh_exec);
	assert_null(b.scp_to_target);
	assert_null(b.scp_to_target_install);
	kbox_opts_release(&b);

	/* set: run as written; SCP_TO_TARGET_INSTALL follows SCP_TO_TARGET */
	assert_int_equal(kinstall_opts_read(&f.c, 2, &o), 0);
	assert_true(o.no_install);
	kinstall_opts_release(&o);
	assert_int_equal(kbox_opts_read(&f.c, 2, &b), 0);
	assert_string_equal(b.ssh_exec,
			    "ssh -p 2222 $SSH_USER@$MACHINE $SSH_COMMAND");
	assert_string_equal(b.scp_to_target,
			    "scp -P 2222 $SRC_FILE $SSH_USER@$MACHINE:$DST_FILE");
	assert_string_equal(b.scp_to_target_install, b.scp_to_target);
	kbox_opts_release(&b);
	conf_free(&f);

	/* only the image copy set; a bad number is an error */
	conf_read(&f, "MACHINE = b\n"
		  "SCP_TO_TARGET_INSTALL = cp $SRC_FILE /tftp/$MACHINE\n"
		  "TEST_START\nTEST_TYPE = install\n"
		  "TEST_START\nTEST_TYPE = install\nCONNECT_TIMEOUT = soon\n",
		  0);
	assert_int_equal(kbox_opts_read(&f.c, 1, &b), 0);
	assert_null(b.scp_to_target);
	assert_string_equal(b.scp_to_target_install,
			    "cp $SRC_FILE /tftp/$MACHINE");
	kbox_opts_release(&b);
	assert_int_equal(kbox_opts_read(&f.c, 2, &b), -1);
	fflush(f.mem);
	assert_non_null(strstr(f.msgs, "CONNECT_TIMEOUT"));
	conf_free(&f);
}

/* ---- against the lab ---- */

static char *labp(const char *name)
{
	return sshlab_path(&lab, name);
}

/* A fake kernel tree with a real modules_install interface. */
static const char makefile[] =
	"# modules_install as kbuild does it, as far as ktest can tell\n"
	"KVER := $(shell cat $(O)/include/config/kernel.release)\n"
	"MODLIB := $(INSTALL_MOD_PATH)/lib/modules/$(KVER)\n"
	"modules_install:\n"
	"\t@test -n '$(INSTALL_MOD_PATH)' || { echo no INSTALL_MOD_PATH; exit 1; }\n"
	"\t@test '$(INSTALL_MOD_STRIP)' = 1 || { echo no INSTALL_MOD_STRIP; exit 1; }\n"
	"\tmkdir -p $(MODLIB)/kernel/drivers/ktest\n"
	"\techo 'module of $(KVER)' > $(MODLIB)/kernel/drivers/ktest/lab.ko\n"
	"\techo 'kernel/drivers/ktest/lab.ko:' > $(MODLIB)/modules.dep\n"
	"\tln -sfn $(CURDIR) $(MODLIB)/build\n";

static const char broken_makefile[] =
	"modules_install:\n"
	"\t@echo 'depmod: ERROR: could not open modules.order' >&2; exit 2\n";

static int lab_setup(void **state)
{
	int fd, rnd;
	char buf[65536];
	size_t left = IMAGE_SIZE;

	(void)state;
	if (sshlab_start(&lab, "test_install") < 0)
		return -1;
	sh("cd '%s' && mkdir -p src broken out/include/config "
	   "out/arch/x86/boot box/boot box/root box/tmp hosttmp",
	   lab.dir);
	{
		char *p = labp("src/Makefile");

		write_file(p, makefile);
		free(p);
		p = labp("broken/Makefile");
		write_file(p, broken_makefile);
		free(p);
		p = labp("out/include/config/kernel.release");
		write_file(p, VERSION "\n");
		free(p);
		p = labp("out/.config");
		write_file(p, "CONFIG_64BIT=y\nCONFIG_MODULES=y\n");
		free(p);
		p = labp("out/arch/x86/boot/bzImage");
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		free(p);
		rnd = open("/dev/urandom", O_RDONLY);
		if (fd < 0 || rnd < 0)
			return -1;
		while (left) {
			size_t n = left < sizeof(buf) ? left : sizeof(buf);

			if (read(rnd, buf, n) != (ssize_t)n ||
			    write(fd, buf, n) != (ssize_t)n)
				return -1;
			left -= n;
		}
		close(rnd);
		if (close(fd) < 0)
			return -1;
	}
	return 0;
}

static int lab_teardown(void **state)
{
	(void)state;
	return sshlab_stop(&lab);
}

struct setup {
	struct kbox_opts b;
	struct kinstall_opts o;
	struct kstrs keep;
};

static const char *keep(struct setup *s, char *str)
{
	return kstrs_keep(&s->keep, str);
}

/* The lab's box and tree, as a test starts from them (again). */
static void lab_opts(struct setup *s)
{
	kstrs_free(&s->keep);
	memset(s, 0, sizeof(*s));
	sbuf_reset(&out.all);
	s->b.ssh = sshlab_opts(&lab);
	s->b.machine = "127.0.0.1";
	s->b.ssh_user = lab.user;
	s->b.on_line = collect;
	s->b.ctx = &out;
	s->o.make_cmd = "make -s";
	s->o.build_dir = keep(s, labp("src"));
	s->o.output_dir = keep(s, labp("out"));
	s->o.build_target = "arch/x86/boot/bzImage";
	s->o.target_image = keep(s, labp("box/boot/vmlinuz-$KERNEL_VERSION"));
	s->o.tmp_dir = keep(s, labp("hosttmp"));
	s->o.kernel_version = VERSION;
	s->o.mod_root = keep(s, labp("box/root"));
	s->o.remote_tmp = keep(s, labp("box/tmp"));
	s->o.timeout_ms = 60000;
	s->o.on_line = collect;
	s->o.ctx = &out;
	sh("cd '%s' && rm -rf box/boot/* box/root/* box/tmp/* hosttmp/* "
	   "*.out && printf 'CONFIG_64BIT=y\\nCONFIG_MODULES=y\\n' "
	   "> out/.config", lab.dir);
}

static int install(struct setup *s, struct kinstall_result *r)
{
	struct kbox *box = kbox_new(&s->b);
	int ret = kinstall_run(box, &s->o, r);

	kbox_free(box);
	return ret;
}

static void done(struct setup *s)
{
	kstrs_free(&s->keep);
}

static void expect_installed(bool modules)
{
	char *img = labp("out/arch/x86/boot/bzImage");
	char *dst = labp("box/boot/vmlinuz-" VERSION);
	char *ko = labp("box/root/lib/modules/" VERSION
			"/kernel/drivers/ktest/lab.ko");
	char *a = sha256(img), *b = sha256(dst), *text;
	char *boot = labp("box/boot"), *tmp = labp("box/tmp");
	char *host = labp("hosttmp");
	struct stat st;

	assert_string_equal(a, b);
	assert_int_equal(stat(dst, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* nothing half-written beside it, nothing left behind */
	assert_int_equal(entries(boot), 1);
	assert_int_equal(entries(tmp), 0);
	assert_int_equal(entries(host), 0);
	if (modules) {
		text = read_file(ko);
		assert_non_null(text);
		assert_string_equal(text, "module of " VERSION "\n");
		free(text);
	} else {
		assert_false(exists(ko));
	}
	free(a);
	free(b);
	free(img);
	free(dst);
	free(ko);
	free(boot);
	free(tmp);
	free(host);
}

static void test_install_all(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *stale, *pre, *post, *text, *old;

	(void)state;
	lab_opts(&s);
	/* modules of an earlier build of this version: they must go */
	sh("mkdir -p '%s/box/root/lib/modules/%s/kernel' && "
	   "touch '%s/box/root/lib/modules/%s/kernel/stale.ko'",
	   lab.dir, VERSION, lab.dir, VERSION);
	stale = labp("box/root/lib/modules/" VERSION "/kernel/stale.ko");
	old = labp("box/root/lib/modules/5.10.0/kernel");
	sh("mkdir -p '%s'", old);
	pre = labp("pre.out");
	post = labp("post.out");
	s.o.pre_install = keep(&s, xasprintf(
		"echo \"$KERNEL_VERSION $MACHINE $SSH_USER\" > %s; "
		"printenv MACHINE >> %s; test ! -e %s/box/boot/vmlinuz-%s",
		pre, pre, lab.dir, VERSION));
	s.o.post_install = keep(&s, xasprintf(
		"test -e %s/box/root/lib/modules/%s/modules.dep && "
		"echo \"done $KERNEL_VERSION\" > %s", lab.dir, VERSION,
		post));

	if (install(&s, &r))
		fail_msg("install: %s\noutput:\n%s", r.why,
			 sbuf_str(&out.all));
	assert_int_equal(r.status, KINSTALL_OK);
	assert_true(r.modules);
	expect_installed(true);
	assert_false(exists(stale));
	assert_true(exists(old));	/* other versions are left alone */
	text = read_file(pre);
	assert_non_null(text);
	{
		char *want = xasprintf(VERSION " 127.0.0.1 %s\n127.0.0.1\n",
				       lab.user);

		assert_string_equal(text, want);
		free(want);
	}
	free(text);
	text = read_file(post);
	assert_non_null(text);
	assert_string_equal(text, "done " VERSION "\n");
	free(text);
	/* the modules belong to root on the box, and the symlink stays one */
	{
		char *ko = labp("box/root/lib/modules/" VERSION
				"/kernel/drivers/ktest/lab.ko");
		char *link = labp("box/root/lib/modules/" VERSION "/build");
		struct stat st;

		assert_int_equal(stat(ko, &st), 0);
		assert_int_equal(st.st_uid, 0);
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		free(ko);
		free(link);
	}
	/* the progress said what it did */
	assert_non_null(strstr(sbuf_str(&out.all), "modules_install"));

	/* again: the same result over the old one */
	s.o.pre_install = NULL;
	if (install(&s, &r))
		fail_msg("install again: %s", r.why);
	expect_installed(true);
	free(stale);
	free(old);
	free(pre);
	free(post);
	done(&s);
}

static void test_install_no_modules(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;

	(void)state;
	lab_opts(&s);
	sh("printf '# CONFIG_MODULES is not set\\n' > '%s/out/.config'",
	   lab.dir);
	/* make must not even run */
	s.o.build_dir = keep(&s, labp("broken"));
	if (install(&s, &r))
		fail_msg("install: %s", r.why);
	assert_false(r.modules);
	expect_installed(false);
	assert_non_null(strstr(sbuf_str(&out.all), "No modules needed"));
	done(&s);
}

/*
 * The build cache's way: the modules packed once after the build
 * (kinstall_pack_modules), then installed from that tarball without a
 * make (BUILD_DIR's Makefile is broken); a modules_install that fails
 * leaves no tarball and no staging
 */
static void test_install_packed(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *cache = labp("cache"), *tarball = labp("cache/ktest-mods.tar.gz");
	char *host = labp("hosttmp"), *list;

	(void)state;
	lab_opts(&s);
	sh("rm -rf '%s' && mkdir -p '%s'", cache, cache);
	if (kinstall_pack_modules(&s.o, tarball, &r))
		fail_msg("pack: %s\noutput:\n%s", r.why, sbuf_str(&out.all));
	assert_int_equal(r.status, KINSTALL_OK);
	assert_int_equal(entries(host), 0);
	list = labp("packed.out");
	sh("tar -tzvf '%s' > '%s'", tarball, list);
	{
		char *text = read_file(list);

		assert_non_null(text);
		assert_non_null(strstr(text, "lib/modules/" VERSION
				       "/kernel/drivers/ktest/lab.ko"));
		assert_non_null(strstr(text, " 0/0 "));
		free(text);
	}

	s.o.build_dir = keep(&s, labp("broken"));	/* no make */
	s.o.modules_tarball = tarball;
	sbuf_reset(&out.all);
	if (install(&s, &r))
		fail_msg("install: %s\noutput:\n%s", r.why, sbuf_str(&out.all));
	assert_true(r.modules);
	expect_installed(true);
	assert_null(strstr(sbuf_str(&out.all), "modules_install"));
	assert_non_null(strstr(sbuf_str(&out.all), "packed by the build"));
	assert_true(exists(tarball));	/* the cache keeps it */

	/* gone from the cache: the install says which file */
	sh("rm -f '%s'", tarball);
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_HOST);
	assert_non_null(strstr(r.why, tarball));

	/* packing with a broken modules_install */
	s.o.modules_tarball = NULL;
	assert_int_equal(kinstall_pack_modules(&s.o, tarball, &r), -1);
	assert_int_equal(r.status, KINSTALL_MODULES);
	assert_non_null(strstr(r.why, "depmod: ERROR"));
	assert_false(exists(tarball));
	assert_int_equal(entries(host), 0);
	free(cache);
	free(tarball);
	free(host);
	free(list);
	done(&s);
}

/* SSH_EXEC and SCP_TO_TARGET set: ssh(1) and scp(1) do it, not libssh. */
static void test_install_legacy_commands(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *ssh_args = sshlab_ssh_args(&lab, false);
	char *scp_args = sshlab_ssh_args(&lab, true);
	char *log = labp("scp.out");

	(void)state;
	lab_opts(&s);
	s.b.ssh.port = 1;	/* libssh would fail: nothing listens there */
	s.b.ssh_exec = keep(&s, xasprintf("ssh %s $SSH_USER@$MACHINE "
					  "$SSH_COMMAND", ssh_args));
	s.b.scp_to_target = keep(&s, xasprintf(
		"echo \"$DST_FILE\" >> %s; scp -q %s $SRC_FILE "
		"$SSH_USER@$MACHINE:$DST_FILE", log, scp_args));
	s.b.scp_to_target_install = s.b.scp_to_target;
	if (install(&s, &r))
		fail_msg("install: %s\noutput:\n%s", r.why,
			 sbuf_str(&out.all));
	expect_installed(true);
	{
		char *text = read_file(log);
		char *want = xasprintf("%s/box/boot/vmlinuz-%s\n%s/box/tmp\n",
				       lab.dir, VERSION, lab.dir);

		assert_non_null(text);
		assert_string_equal(text, want);
		free(text);
		free(want);
	}
	/* the commands ran as written: the log shows the ssh lines */
	assert_non_null(strstr(sbuf_str(&out.all), "'echo testing connection'"));

	/* a failing SSH_EXEC is named, with how it ended */
	s.b.ssh_exec = "exit 255; $SSH_COMMAND";
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_BOX);
	assert_int_equal(r.step, KI_PROBE);
	if (!strstr(r.why, "SSH_EXEC") || !strstr(r.why, "exit 255"))
		fail_msg("why: %s", r.why);
	free(ssh_args);
	free(scp_args);
	free(log);
	done(&s);
}

static void test_install_no_install(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *boot = labp("box/boot");

	(void)state;
	lab_opts(&s);
	s.o.no_install = true;
	s.o.pre_install = "exit 1";
	s.b.ssh.port = 1;
	assert_int_equal(install(&s, &r), 0);
	assert_int_equal(r.status, KINSTALL_SKIPPED);
	assert_int_equal(entries(boot), 0);
	free(boot);
	done(&s);
}

static void test_install_hooks_fail(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *boot = labp("box/boot");

	(void)state;
	lab_opts(&s);
	s.o.pre_install = "echo cannot prepare $KERNEL_VERSION; exit 3";
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_HOOK);
	assert_int_equal(r.step, KI_PRE_INSTALL);
	if (!strstr(r.why, "PRE_INSTALL") || !strstr(r.why, "exit 3") ||
	    !strstr(r.why, "cannot prepare " VERSION))
		fail_msg("why: %s", r.why);
	assert_int_equal(entries(boot), 0);	/* nothing was copied */

	lab_opts(&s);
	s.o.post_install = "dracut-does-not-exist $KERNEL_VERSION";
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_HOOK);
	assert_int_equal(r.step, KI_POST_INSTALL);
	if (!strstr(r.why, "POST_INSTALL") ||
	    !strstr(r.why, "dracut-does-not-exist " VERSION))
		fail_msg("why: %s", r.why);
	expect_installed(true);		/* it came after the install */
	free(boot);
	done(&s);
}

static void test_install_refused(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char want[64];
	int fd;

	(void)state;
	lab_opts(&s);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	s.b.ssh.port = ntohs(a.sin_port);
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_BOX);
	assert_int_equal(r.step, KI_PROBE);
	assert_int_equal(r.ssh_fail, KSSH_UNREACHABLE);
	snprintf(want, sizeof(want), "127.0.0.1 port %d", s.b.ssh.port);
	if (!strstr(r.why, want) || !strstr(r.why, "MACHINE"))
		fail_msg("why: %s", r.why);
	done(&s);
}

/* A free port on 127.0.0.1 that nothing listens on (refused). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Copies between a and b until either closes. */
static void relay(int a, int b)
{
	struct pollfd p[2] = { { .fd = a, .events = POLLIN },
			       { .fd = b, .events = POLLIN } };
	char buf[16384];
	ssize_t n;

	while (poll(p, 2, 20000) > 0) {
		for (int i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n <= 0 || write(p[!i].fd, buf, n) != n)
				return;
		}
	}
}

/*
 * sshd coming up late on port: after delay_ms, a listener there that
 * hands each connection to the lab sshd. Returns its pid.
 */
static pid_t late_sshd(int port, long delay_ms)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET };

		close(lab.guard);	/* the lab's watchdog is not ours */
		struct timespec ts = { delay_ms / 1000,
				       (delay_ms % 1000) * 1000000L };
		int one = 1, l, c, up;

		alarm(120);		/* never outlives the test */
		nanosleep(&ts, NULL);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons(port);
		l = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(l, 8))
			_exit(1);
		while ((c = accept(l, NULL, NULL)) >= 0) {
			a.sin_port = htons(lab.port);
			up = socket(AF_INET, SOCK_STREAM, 0);
			if (up < 0 ||
			    connect(up, (struct sockaddr *)&a, sizeof(a)))
				_exit(1);
			if (fork() == 0) {
				alarm(120);
				close(l);
				relay(c, up);
				_exit(0);
			}
			close(c);
			close(up);
		}
		_exit(0);
	}
	return pid;
}

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * doc/waits.md: a box whose sshd comes up after its login prompt is
 * waited for; its answer ends the wait, CONNECT_TIMEOUT only bounds it.
 */
static void test_install_sshd_late(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	long t0, took;
	char *kh;
	pid_t pid;
	int rc;

	(void)state;
	lab_opts(&s);
	s.b.ssh.port = free_port();
	/*
	 * The bound is far above what an install takes under ASan on a
	 * loaded host (16 s seen): only a wait for it takes 60 s
	 */
	s.b.ssh.connect_timeout_ms = 60000;
	/* the lab's host key, known on this port too */
	kh = labp("kh_late");
	sh("sed 's/^\\[127.0.0.1\\]:%d /[127.0.0.1]:%d /' '%s' > '%s'",
	   lab.port, s.b.ssh.port, lab.kh, kh);
	s.b.ssh.known_hosts = kh;
	pid = late_sshd(s.b.ssh.port, 1500);
	t0 = mono_ms();
	rc = install(&s, &r);
	took = mono_ms() - t0;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	if (rc)
		fail_msg("install: %s", r.why);
	assert_int_equal(r.status, KINSTALL_OK);
	if (took < 1500 || took > 45000)
		fail_msg("the install took %ld ms: not on sshd's answer", took);
	free(kh);
	done(&s);
}

static void test_install_unknown_host_key(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *kh = labp("empty_known_hosts");
	char *boot = labp("box/boot");

	(void)state;
	lab_opts(&s);
	write_file(kh, "");
	s.b.ssh.known_hosts = kh;
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_BOX);
	assert_int_equal(r.ssh_fail, KSSH_HOSTKEY_UNKNOWN);
	if (!strstr(r.why, "host key not known") ||
	    !strstr(r.why, "ssh-keyscan") || !strstr(r.why, kh))
		fail_msg("why: %s", r.why);
	assert_int_equal(entries(boot), 0);
	free(kh);
	free(boot);
	done(&s);
}

static void test_install_host_errors(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *host = labp("hosttmp");

	(void)state;
	/* no image: the path and the option are named */
	lab_opts(&s);
	s.o.build_target = "arch/arm64/boot/Image";
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_HOST);
	if (!strstr(r.why, "arch/arm64/boot/Image") ||
	    !strstr(r.why, "BUILD_TARGET"))
		fail_msg("why: %s", r.why);

	/* no .config */
	lab_opts(&s);
	sh("rm '%s/out/.config'", lab.dir);
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_HOST);
	if (!strstr(r.why, "out/.config"))
		fail_msg("why: %s", r.why);

	/* modules_install fails: its message, and the staging is gone */
	lab_opts(&s);
	s.o.build_dir = keep(&s, labp("broken"));
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_MODULES);
	assert_int_equal(r.step, KI_MODULES_BUILD);
	if (!strstr(r.why, "could not open modules.order") ||
	    !strstr(r.why, "exit 2"))
		fail_msg("why: %s", r.why);
	assert_int_equal(entries(host), 0);

	/* the version is not what was built: said so, with what there is */
	lab_opts(&s);
	s.o.kernel_version = "6.1.0-other";
	s.o.target_image = keep(&s, labp("box/boot/vmlinuz"));
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_MODULES);
	if (!strstr(r.why, "6.1.0-other") || !strstr(r.why, VERSION))
		fail_msg("why: %s", r.why);
	assert_int_equal(entries(host), 0);
	free(host);
	done(&s);
}

/* The box cannot unpack: the step and the box's words are in the error. */
static void test_install_box_errors(void **state)
{
	struct setup s = { .keep = { NULL, 0 } };
	struct kinstall_result r;
	char *tmp = labp("box/tmp");

	(void)state;
	lab_opts(&s);
	s.o.mod_root = keep(&s, labp("box/no-such-root"));
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_BOX);
	assert_int_equal(r.step, KI_MODULES_UNPACK);
	if (!strstr(r.why, "unpack the modules") ||
	    !strstr(r.why, "no-such-root"))
		fail_msg("why: %s", r.why);
	/* the tarball does not stay on the box */
	assert_int_equal(entries(tmp), 0);

	/* TARGET_IMAGE in a directory the box does not have */
	lab_opts(&s);
	s.o.target_image = keep(&s, labp("box/nodir/vmlinuz"));
	assert_int_equal(install(&s, &r), -1);
	assert_int_equal(r.status, KINSTALL_BOX);
	assert_int_equal(r.step, KI_IMAGE);
	if (!strstr(r.why, "box/nodir/vmlinuz") ||
	    !strstr(r.why, "no such file"))
		fail_msg("why: %s", r.why);
	free(tmp);
	done(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* the plan and the options: no I/O */
		cmocka_unit_test(test_plan_image_only),
		cmocka_unit_test(test_plan_modules),
		cmocka_unit_test(test_plan_packed),
		cmocka_unit_test(test_plan_legacy),
		cmocka_unit_test(test_plan_no_install),
		cmocka_unit_test(test_plan_bad_version),
		cmocka_unit_test(test_config_has_modules),
		cmocka_unit_test(test_opts_from_config),
		/* on the lab's box */
		cmocka_unit_test(test_install_all),
		cmocka_unit_test(test_install_no_modules),
		cmocka_unit_test(test_install_packed),
		cmocka_unit_test(test_install_legacy_commands),
		cmocka_unit_test(test_install_no_install),
		cmocka_unit_test(test_install_hooks_fail),
		cmocka_unit_test(test_install_refused),
		cmocka_unit_test(test_install_sshd_late),
		cmocka_unit_test(test_install_unknown_host_key),
		cmocka_unit_test(test_install_host_errors),
		cmocka_unit_test(test_install_box_errors),
	};
	int failed;

	sbuf_init(&out.all);
	failed = cmocka_run_group_tests(tests, lab_setup, lab_teardown);
	sbuf_free(&out.all);
	return failed;
}
