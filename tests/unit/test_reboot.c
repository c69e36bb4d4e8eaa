// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rebooting the test box: the boot menus (real grub.cfg, menu.lst and
 * grubby listings from tests/data/grub) turned into the index the one-shot
 * command takes, the commands, the options from a config; then every
 * strategy against a real OpenSSH sshd on 127.0.0.1 (tests/lab/sshd.sh)
 * whose box commands are fakes in the lab directory: reboot and halt hang
 * up on the session as a real box does, grub2-reboot, extlinux and grubby
 * write down what they were asked. POWER_CYCLE and POWER_OFF are host
 * commands that do the same.
 *
 * The box is this machine: every test names the fake reboot and halt by
 * their full path (box_reboot, box_halt), never the real ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/legacy.h"
#include "conf/model.h"
#include "ktest/reboot.h"
#include "sshlab.h"

static struct sshlab lab;

/* ---- helpers ---- */

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

static void write_file(const char *p, const char *text, int mode)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static char *data_file(const char *name)
{
	const char *src = getenv("KTEST_SRC");
	char *p = xasprintf("%s/tests/data/grub/%s", src ? src : ".", name);
	char *text = read_file(p);

	if (!text)
		fail_msg("%s: %s (run from the top of the tree or set "
			 "KTEST_SRC)", p, strerror(errno));
	free(p);
	return text;
}

/* ---- the menus (pure) ---- */

struct menu_case {
	const char *file;
	enum kreboot_type type;
	const char *menu;
	const char *index;	/* NULL: not found */
};

/*
 * What each GRUB_MENU selects. Where ktest.pl 6.1 answered something
 * else, its answer is in the comment: it reset its count at a submenu.
 */
static const struct menu_case menu_cases[] = {
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "Debian GNU/Linux", "0" },
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "6.1.0-13-amd64", "1>0" },
	{ "debian12-efi.cfg", KREBOOT_GRUB2,
	  "Debian GNU/Linux, with Linux 6.1.0-13-amd64 (recovery mode)", "1>1" },
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "6.1.0-ktest+", "1>2" },
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "'Debian GNU/Linux, with Linux 6.1.0-ktest+ (recovery mode)'",
	  "1>3" },
	/* the id part of the line counts too, as in ktest.pl */
	{ "debian12-efi.cfg", KREBOOT_GRUB2,
	  "gnulinux-6.1.0-13-amd64-recovery", "1>1" },
	/* ktest.pl: "1>4" */
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "UEFI Firmware Settings", "2" },
	/* ktest.pl: "1>5" */
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "Test Kernel (ktest)", "3" },
	/* a submenu is not a kernel */
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "Advanced options", NULL },
	/* the whole line, as ktest.pl: "$menuentry_id_option" is in it */
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "menuentry_id_option", "0" },
	{ "debian12-efi.cfg", KREBOOT_GRUB2, "5.10.0", NULL },

	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2, "'Ubuntu'", "0" },
	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2, "6.1.0-rc3-ktest", "1>0" },
	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2,
	  "5.15.0-91-generic (recovery mode)", "1>3" },
	/* ktest.pl: "1>4", "1>5", "1>6" */
	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2, "Memory test (memtest86+.bin", "2" },
	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2, "serial console", "3" },
	{ "ubuntu2204-bios.cfg", KREBOOT_GRUB2, "Windows Boot Manager", "4" },

	{ "hand-written.cfg", KREBOOT_GRUB2, "one-liner", "0" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "braces {in} the title", "1" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "say \\\"hi\\\"", "2" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel A", "3>0" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel 5.10", "3>1>0" },
	/* ktest.pl: "2>1" */
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel 4.19", "3>1>1" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel B", "3>2" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "Test Kernel", "4" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "'Test Kernel (ktest)'", "5" },
	/* regex metacharacters are only characters */
	{ "hand-written.cfg", KREBOOT_GRUB2, "6.1.0+ [x86_64] $5 ^a|b", "6" },
	{ "hand-written.cfg", KREBOOT_GRUB2, "ktest: 6\\.1\\.0\\+", NULL },
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel 4.1.", NULL },
	{ "hand-written.cfg", KREBOOT_GRUB2, "kernel [AB]", NULL },
	{ "hand-written.cfg", KREBOOT_GRUB2, "^menuentry", NULL },
	{ "hand-written.cfg", KREBOOT_GRUB2, ".*", NULL },
	/* not entries: commented out, or made only when a function runs */
	{ "hand-written.cfg", KREBOOT_GRUB2, "commented out", NULL },
	{ "hand-written.cfg", KREBOOT_GRUB2, "made when called", NULL },

	/* grub legacy: the whole title, blanks around it do not count */
	{ "debian6.menu.lst", KREBOOT_GRUB, "Debian GNU/Linux, kernel 2.6.32-5-amd64", "0" },
	{ "debian6.menu.lst", KREBOOT_GRUB,
	  "Debian GNU/Linux, kernel 2.6.32-5-amd64 (single-user mode)", "1" },
	{ "debian6.menu.lst", KREBOOT_GRUB, "Test Kernel (ktest)", "2" },
	{ "debian6.menu.lst", KREBOOT_GRUB, "Test Kernel", "3" },
	{ "debian6.menu.lst", KREBOOT_GRUB, "Debian GNU/Linux", NULL },
	{ "debian6.menu.lst", KREBOOT_GRUB, "Commented Title", NULL },
	{ "debian6.menu.lst", KREBOOT_GRUB, "Test Kernel (.*)", NULL },

	/* grubby: the block's index=, past a "non linux entry" */
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "6.1.0-ktest+", "0" },
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "(6.2.9-300.fc38.x86_64)", "1" },
	/* ktest.pl counted titles: "2" */
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "0-rescue", "3" },
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "\"Fedora Linux (6.2", "1" },
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "vmlinuz", NULL },
	{ "fedora38.grubby", KREBOOT_GRUB2BLS, "Fedora.*rescue", NULL },
};

static void test_menus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(menu_cases) / sizeof(menu_cases[0]); i++) {
		const struct menu_case *c = &menu_cases[i];
		char *text = data_file(c->file);
		const struct kgrub_entry *e;
		struct kgrub_menu m;

		kgrub_parse(c->type, text, strlen(text), &m);
		e = kgrub_find(c->type, &m, c->menu);
		if (!c->index && e)
			fail_msg("%s: '%s' found %s ('%s'), wanted nothing",
				 c->file, c->menu, e->index, e->title);
		if (c->index && !e)
			fail_msg("%s: '%s' not found, wanted %s", c->file,
				 c->menu, c->index);
		if (c->index && strcmp(e->index, c->index))
			fail_msg("%s: '%s' is %s ('%s'), wanted %s", c->file,
				 c->menu, e->index, e->title, c->index);
		kgrub_menu_free(&m);
		free(text);
	}
}

/* Every entry of the hand-written menu, with the title grub shows. */
static void test_menu_entries(void **state)
{
	static const char *const want[][2] = {
		{ "0", "one-liner" },
		{ "1", "braces {in} the title" },
		{ "2", "say \"hi\" $HOME" },
		{ "3>0", "kernel A" },
		{ "3>1>0", "kernel 5.10" },
		{ "3>1>1", "kernel 4.19" },
		{ "3>2", "kernel B" },
		{ "4", "Test Kernel" },
		{ "5", "Test Kernel (ktest)" },
		{ "6", "ktest: 6.1.0+ [x86_64] $5 ^a|b" },
	};
	char *text = data_file("hand-written.cfg");
	struct kgrub_menu m;
	size_t i;

	(void)state;
	kgrub_parse(KREBOOT_GRUB2, text, strlen(text), &m);
	assert_int_equal(m.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < m.n; i++) {
		assert_string_equal(m.v[i].index, want[i][0]);
		assert_string_equal(m.v[i].title, want[i][1]);
	}
	kgrub_menu_free(&m);
	free(text);

	text = data_file("debian6.menu.lst");
	kgrub_parse(KREBOOT_GRUB, text, strlen(text), &m);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.v[2].title, "Test Kernel (ktest)");
	kgrub_menu_free(&m);
	free(text);

	text = data_file("fedora38.grubby");
	kgrub_parse(KREBOOT_GRUB2BLS, text, strlen(text), &m);
	assert_int_equal(m.n, 3);
	assert_string_equal(m.v[0].title,
			    "Fedora Linux (6.1.0-ktest+) 38 (Workstation Edition)");
	assert_string_equal(m.v[2].index, "3");
	kgrub_menu_free(&m);
	free(text);
}

/* What a broken or odd menu gives: never a crash, never a wrong number. */
static void test_menu_odd(void **state)
{
	static const struct {
		const char *text;
		const char *menu;
		const char *index;
	} cases[] = {
		{ "", "x", NULL },
		{ "menuentry", "x", NULL },
		/* CRLF line endings */
		{ "menuentry 'a' {\r\n}\r\nmenuentry 'b' {\r\n}\r\n", "'b'", "1" },
		/* an unterminated quote swallows the rest, as in grub */
		{ "menuentry 'a {\n}\nmenuentry 'b' {\n}\n", "'b'", NULL },
		/* one } too many does not leave the top menu */
		{ "}\n}\nmenuentry 'a' {\n}\nmenuentry 'b' {\n}\n", "'b'", "1" },
		/* a submenu never closed */
		{ "submenu 's' {\nmenuentry 'a' {\n}\nmenuentry 'b' {\n}\n",
		  "'b'", "0>1" },
		/* menuentry as an argument is not an entry */
		{ "echo menuentry 'a'\nmenuentry 'b' {\n}\n", "'b'", "0" },
		/* after a redirection, a ;, && and || */
		{ "echo x > menuentry\ntrue && menuentry 'a' {\n}\n"
		  "false || menuentry 'b' {\n}\n", "'b'", "1" },
		/* tabs and an empty submenu */
		{ "\tsubmenu 'e' {\n\t}\n\tmenuentry\t'a'\t{\n\t}\n", "'a'", "1" },
		/* ${...} with a brace inside a word */
		{ "set x=${a}}\nmenuentry 'a' {\n}\n", "'a'", "0" },
		/* an escaped newline keeps the command going */
		{ "menuentry 'a' \\\n  --class x {\n}\nmenuentry 'b' {}\n",
		  "'b'", "1" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kgrub_menu m;
		const struct kgrub_entry *e;

		kgrub_parse(KREBOOT_GRUB2, cases[i].text,
			    strlen(cases[i].text), &m);
		e = kgrub_find(KREBOOT_GRUB2, &m, cases[i].menu);
		if (!cases[i].index ? e != NULL :
		    !e || strcmp(e->index, cases[i].index))
			fail_msg("case %zu: got %s, wanted %s", i,
				 e ? e->index : "nothing",
				 cases[i].index ? cases[i].index : "nothing");
		kgrub_menu_free(&m);
	}
	/* an empty GRUB_MENU selects nothing */
	{
		struct kgrub_menu m;

		kgrub_parse(KREBOOT_GRUB2, "menuentry 'a' {}\n", 17, &m);
		assert_null(kgrub_find(KREBOOT_GRUB2, &m, ""));
		assert_null(kgrub_find(KREBOOT_GRUB2, &m, NULL));
		kgrub_menu_free(&m);
	}
}

static void test_commands(void **state)
{
	struct kreboot_opts o = { .type = KREBOOT_GRUB };
	char *c;

	(void)state;
	c = kreboot_listing_cmd(&o);
	assert_string_equal(c, "cat /boot/grub/menu.lst");
	free(c);
	c = kreboot_select_cmd(&o, "3");
	assert_string_equal(c, "echo \"savedefault --default=3 --once\" | "
			    "grub --batch");
	free(c);
	assert_null(kreboot_select_cmd(&o, "1>2"));

	o.type = KREBOOT_GRUB2;
	o.grub_file = "/boot/grub 2/grub.cfg";
	c = kreboot_listing_cmd(&o);
	assert_string_equal(c, "cat '/boot/grub 2/grub.cfg'");
	free(c);
	c = kreboot_select_cmd(&o, "1>2");
	assert_string_equal(c, "grub2-reboot '1>2'");
	free(c);
	o.grub_reboot = "grub-reboot";
	c = kreboot_select_cmd(&o, "4");
	assert_string_equal(c, "grub-reboot 4");
	free(c);

	o.type = KREBOOT_GRUB2BLS;
	c = kreboot_listing_cmd(&o);
	assert_string_equal(c, "grubby --info=ALL");
	free(c);
	o.grub_bls_get = "grubby --info=ALL --bls";
	c = kreboot_listing_cmd(&o);
	assert_string_equal(c, "grubby --info=ALL --bls");
	free(c);

	o.type = KREBOOT_SYSLINUX;
	o.syslinux_label = "test kernel";
	c = kreboot_select_cmd(&o, NULL);
	assert_string_equal(c, "extlinux --once 'test kernel' /boot/extlinux");
	free(c);
	assert_null(kreboot_listing_cmd(&o));

	o.type = KREBOOT_SCRIPT;
	assert_null(kreboot_select_cmd(&o, NULL));
	assert_null(kreboot_listing_cmd(&o));

	assert_int_equal(kreboot_type_parse("grub2bls"), KREBOOT_GRUB2BLS);
	assert_int_equal(kreboot_type_parse("grub3"), -1);
}

/* ---- the options, from a config ---- */

struct conf {
	struct kdiag d;
	struct kconfig c;
	char *msgs;
	size_t len;
	FILE *mem;
};

static void conf_read(struct conf *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	kdiag_init(&f->d);
	f->mem = open_memstream(&f->msgs, &f->len);
	f->d.out = f->mem;
	kconfig_init(&f->c, &f->d);
	assert_int_equal(klegacy_read_buf(&f->c, "t.conf", text,
					  strlen(text)), 0);
	kconfig_apply_defaults(&f->c);
	f->c.num_tests = 3;
}

static const char *conf_msgs(struct conf *f)
{
	fflush(f->mem);
	return f->msgs ? f->msgs : "";
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
		"MACHINE = box\n"
		"GRUB_MENU = Test Kernel\n"
		"\n"
		"TEST_START\n"
		"TEST_TYPE = boot\n"
		"\n"
		"TEST_START\n"
		"TEST_TYPE = boot\n"
		"REBOOT_TYPE = grub2\n"
		"GRUB_FILE = /boot/grub/grub.cfg\n"
		"REBOOT = ipmitool -H ${MACHINE}-bmc power reset\n"
		"POWERCYCLE_AFTER_REBOOT = 0\n"
		"POWEROFF_AFTER_HALT = 20\n"
		"\n"
		"TEST_START\n"
		"TEST_TYPE = boot\n"
		"REBOOT_TYPE = syslinux\n";
	struct conf f;
	struct kreboot_opts o;

	(void)state;
	conf_read(&f, text);
	assert_int_equal(kreboot_opts_read(&f.c, 1, &o), 0);
	assert_int_equal(o.type, KREBOOT_GRUB);
	assert_string_equal(o.grub_menu, "Test Kernel");
	assert_string_equal(o.grub_reboot, "grub2-reboot");
	assert_string_equal(o.grub_bls_get, "grubby --info=ALL");
	assert_string_equal(o.syslinux, "extlinux");
	assert_string_equal(o.syslinux_path, "/boot/extlinux");
	/* ktest.pl's default REBOOT: the box's reboot, over libssh */
	assert_null(o.reboot);
	assert_int_equal(o.reboot_return_code, 255);
	assert_int_equal(o.powercycle_after_reboot_ms, -1);
	assert_int_equal(o.poweroff_after_halt_ms, -1);
	assert_int_equal(o.timeout_ms, 0);
	kreboot_opts_release(&o);

	assert_int_equal(kreboot_opts_read(&f.c, 2, &o), 0);
	assert_int_equal(o.type, KREBOOT_GRUB2);
	assert_string_equal(o.grub_file, "/boot/grub/grub.cfg");
	assert_string_equal(o.reboot, "ipmitool -H box-bmc power reset");
	/* 0 is set: power cycle right after the reboot */
	assert_int_equal(o.powercycle_after_reboot_ms, 0);
	assert_int_equal(o.poweroff_after_halt_ms, 20000);
	kreboot_opts_release(&o);

	/* what a type needs and does not have: named, with its line */
	assert_int_equal(kreboot_opts_read(&f.c, 3, &o), -1);
	if (!strstr(conf_msgs(&f), "SYSLINUX_LABEL") ||
	    !strstr(conf_msgs(&f), "t.conf:17"))
		fail_msg("messages: %s", conf_msgs(&f));
	conf_free(&f);

	conf_read(&f, "REBOOT_TYPE = grub2\nGRUB_MENU = x\n"
		  "TEST_START\nTEST_TYPE = boot\n");
	assert_int_equal(kreboot_opts_read(&f.c, 1, &o), -1);
	if (!strstr(conf_msgs(&f), "GRUB_FILE"))
		fail_msg("messages: %s", conf_msgs(&f));
	conf_free(&f);
}

/* ---- against the lab ---- */

static char *labp(const char *name)
{
	return sshlab_path(&lab, name);
}

/*
 * The box's reboot and halt: written down, then the session that asked
 * is hung up on (its sshd process, never the listener), as a box going
 * down does.
 */
static const char fake_down[] =
	"#!/bin/sh\n"
	"dir=$(dirname \"$0\")/..\n"
	"echo \"${0##*/} $*\" >> \"$dir/events\"\n"
	"listener=$(cat \"$dir/sshd.pid\")\n"
	"p=$PPID\n"
	"while [ \"$p\" -gt 1 ]; do\n"
	"\tif [ \"$(cat /proc/$p/comm)\" = sshd ] && "
	"[ \"$p\" != \"$listener\" ]; then\n"
	"\t\tkill \"$p\"\n"
	"\t\texit 0\n"
	"\tfi\n"
	"\tp=$(cut -d' ' -f4 /proc/$p/stat)\n"
	"done\n";

/* Writes down its arguments, one per line after its name. */
static const char fake_record[] =
	"#!/bin/sh\n"
	"dir=$(dirname \"$0\")/..\n"
	"{ echo \"${0##*/}\"; for a; do echo \"[$a]\"; done; } "
	">> \"$dir/events\"\n"
	"exit $(cat \"$dir/exit-${0##*/}\" 2>/dev/null || echo 0)\n";

/* grubby: the Fedora listing */
static const char fake_grubby[] =
	"#!/bin/sh\n"
	"cat \"$(dirname \"$0\")/../fedora38.grubby\"\n";

static int lab_setup(void **state)
{
	static const char *const files[][2] = {
		{ "bin/reboot", fake_down },
		{ "bin/halt", fake_down },
		{ "bin/grub2-reboot", fake_record },
		{ "bin/extlinux", fake_record },
		{ "bin/say", fake_record },
		{ "bin/grubby", fake_grubby },
	};
	static const char *const data[] = {
		"debian12-efi.cfg", "debian6.menu.lst", "fedora38.grubby",
	};
	char *p;

	(void)state;
	if (sshlab_start(&lab, "test_reboot") < 0)
		return -1;
	p = labp("bin");
	if (mkdir(p, 0755) < 0)
		return -1;
	free(p);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = labp(files[i][0]);
		write_file(p, files[i][1], 0755);
		free(p);
	}
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
		char *text = data_file(data[i]);

		p = labp(data[i]);
		write_file(p, text, 0644);
		free(p);
		free(text);
	}
	return 0;
}

static int lab_teardown(void **state)
{
	(void)state;
	return sshlab_stop(&lab);
}

/* What happened on the box and the host, in order; then forgotten. */
static char *events(void)
{
	char *p = labp("events"), *text = read_file(p);

	unlink(p);
	free(p);
	return text ? text : xstrdup("");
}

static void expect_events(const char *want)
{
	char *got = events();

	if (strcmp(got, want))
		fail_msg("events:\n%s\nwanted:\n%s", got, want);
	free(got);
}

/* The console, scripted: what it is asked, and what it answers. */
struct console {
	struct sbuf asked;
	int answers[8];
	int n;
};

static int fake_watch(void *ctx, const char *stop, long quiet_ms,
		      long max_ms)
{
	struct console *c = ctx;

	sbuf_addf(&c->asked, "%s/%ld", stop ? stop : "-", quiet_ms);
	if (max_ms != quiet_ms)
		sbuf_addf(&c->asked, "<%ld", max_ms);
	sbuf_addc(&c->asked, '\n');
	return c->n < 8 ? c->answers[c->n++] : 0;
}

struct rig {
	struct kbox_opts b;
	struct kreboot_opts o;
	struct kpower *power;
	struct kbox *box;
	struct kreboot *r;
	struct console con;
	struct sbuf out;
	struct kstrs keep;
};

static void collect(void *ctx, const char *line, size_t len)
{
	struct sbuf *b = ctx;

	sbuf_addn(b, line, len);
	sbuf_addc(b, '\n');
}

static const char *keep(struct rig *g, char *s)
{
	return kstrs_keep(&g->keep, s);
}

/* The lab box, rebooted by the fakes; POWER_CYCLE/POWER_OFF say so. */
static void rig_init(struct rig *g)
{
	char *cycle, *off;

	memset(g, 0, sizeof(*g));
	sbuf_init(&g->out);
	sbuf_init(&g->con.asked);
	free(events());
	g->b.ssh = sshlab_opts(&lab);
	g->b.ssh.connect_timeout_ms = 5000;
	g->b.machine = "127.0.0.1";
	g->b.ssh_user = lab.user;
	g->b.on_line = collect;
	g->b.ctx = &g->out;
	g->o.type = KREBOOT_SCRIPT;
	g->o.grub_reboot = keep(g, labp("bin/grub2-reboot"));
	g->o.syslinux = keep(g, labp("bin/extlinux"));
	g->o.box_reboot = keep(g, labp("bin/reboot"));
	g->o.box_halt = keep(g, labp("bin/halt"));
	g->o.reboot_return_code = 255;
	g->o.powercycle_after_reboot_ms = -1;
	g->o.poweroff_after_halt_ms = -1;
	g->o.timeout_ms = 20000;
	g->o.max_wait_ms = 1800000;
	/* $MACHINE as ktest.pl's run_command fills it in */
	cycle = xasprintf("echo cycle $MACHINE >> %s/events", lab.dir);
	off = xasprintf("echo off >> %s/events", lab.dir);
	{
		char *c = kbox_subst(&g->b, cycle), *o = kbox_subst(&g->b, off);

		g->power = kpower_command_new(c, o, 10000);
		free(c);
		free(o);
	}
	free(cycle);
	free(off);
}

static struct kreboot *rig_start(struct rig *g, bool with_console)
{
	g->box = kbox_new(&g->b);
	g->r = kreboot_new(g->box, &g->o, g->power,
			   with_console ? fake_watch : NULL, &g->con);
	return g->r;
}

static void rig_free(struct rig *g)
{
	kreboot_free(g->r);
	kbox_free(g->box);
	kpower_free(g->power);
	sbuf_free(&g->out);
	sbuf_free(&g->con.asked);
	kstrs_free(&g->keep);
}

/* The box answers again after a reboot: a new session. */
static void expect_box_back(struct rig *g)
{
	int status = -1;

	if (kbox_exec(g->box, "true", 10000, NULL, NULL, &status) < 0)
		fail_msg("box: %s", kbox_error(g->box));
	assert_int_equal(status, 0);
}

static void test_grub2_to_test(void **state)
{
	struct rig g;
	struct kreboot_result res;
	const char *index;
	char why[1024], *cfg;

	(void)state;
	rig_init(&g);
	g.o.type = KREBOOT_GRUB2;
	cfg = labp("changes.cfg");
	{
		char *text = data_file("debian12-efi.cfg");

		write_file(cfg, text, 0644);
		free(text);
	}
	g.o.grub_file = keep(&g, cfg);
	g.o.grub_menu = "Test Kernel (ktest)";
	g.o.switch_to_test = keep(&g, xasprintf(
		"echo switch to test $MACHINE $SSH_USER >> %s/events",
		lab.dir));
	rig_start(&g, false);
	if (kreboot_to_test(g.r, &res))
		fail_msg("to test: %s\n%s", res.why, sbuf_str(&g.out));
	assert_true(res.answered);
	assert_true(res.graceful);
	assert_int_equal(res.power_cycles, 0);
	{
		char *want = xasprintf("switch to test 127.0.0.1 %s\n"
				       "grub2-reboot\n[3]\nreboot \n",
				       lab.user);

		expect_events(want);
		free(want);
	}
	assert_non_null(strstr(sbuf_str(&g.out), "Find grub2 menu ... 3"));
	expect_box_back(&g);

	/* the index is asked once per menu: a changed file is not read */
	assert_int_equal(truncate(cfg, 0), 0);
	assert_int_equal(kreboot_grub_index(g.r, &index, why, sizeof(why)), 0);
	assert_string_equal(index, "3");
	rig_free(&g);
}

/* An entry in a submenu, and a GRUB_MENU that is not there. */
static void test_grub2_submenu_and_not_found(void **state)
{
	struct rig g;
	struct kreboot_result res;
	char *text;

	(void)state;
	rig_init(&g);
	text = data_file("debian12-efi.cfg");
	{
		char *p = labp("grub.cfg");

		write_file(p, text, 0644);
		g.o.grub_file = keep(&g, p);
	}
	free(text);
	g.o.type = KREBOOT_GRUB2;
	g.o.grub_menu = "6.1.0-ktest+ (recovery mode)";
	rig_start(&g, false);
	if (kreboot_to_test(g.r, &res))
		fail_msg("to test: %s", res.why);
	expect_events("grub2-reboot\n[1>3]\nreboot \n");
	kreboot_free(g.r);

	/* as a regex it would be found; as text it is not */
	g.o.grub_menu = "6\\.1\\.0-ktest.*recovery";
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	assert_int_equal(kreboot_to_test(g.r, &res), -1);
	if (!strstr(res.why, "Could not find '6\\.1\\.0-ktest.*recovery'") ||
	    !strstr(res.why, "on 127.0.0.1") ||
	    !strstr(res.why, "'Debian GNU/Linux, with Linux 6.1.0-13-amd64'") ||
	    !strstr(res.why, "plain text"))
		fail_msg("why: %s", res.why);
	expect_events("");	/* nothing selected, nothing rebooted */

	/* no such GRUB_FILE: the box's words */
	kreboot_free(g.r);
	g.o.grub_file = "/no/such/grub.cfg";
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	assert_int_equal(kreboot_to_test(g.r, &res), -1);
	if (!strstr(res.why, "/no/such/grub.cfg") ||
	    !strstr(res.why, "No such file"))
		fail_msg("why: %s", res.why);
	rig_free(&g);
}

/* grub legacy: the menu is read; the box has no grub to select with. */
static void test_grub_legacy(void **state)
{
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	g.o.type = KREBOOT_GRUB;
	g.o.menu_lst = keep(&g, labp("debian6.menu.lst"));
	g.o.grub_menu = "Test Kernel";
	rig_start(&g, false);
	assert_int_equal(kreboot_to_test(g.r, &res), -1);
	if (!strstr(res.why, "echo \"savedefault --default=3 --once\" | "
		    "grub --batch") || !strstr(res.why, "selecting"))
		fail_msg("why: %s", res.why);
	expect_events("");
	rig_free(&g);
}

static void test_grub2bls_syslinux_script(void **state)
{
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	g.o.type = KREBOOT_GRUB2BLS;
	g.o.grub_bls_get = keep(&g, xasprintf("%s/bin/grubby --info=ALL",
					      lab.dir));
	g.o.grub_menu = "0-rescue";
	rig_start(&g, false);
	if (kreboot_to_test(g.r, &res))
		fail_msg("grub2bls: %s", res.why);
	expect_events("grub2-reboot\n[3]\nreboot \n");
	kreboot_free(g.r);

	g.o.type = KREBOOT_SYSLINUX;
	g.o.syslinux_label = "test kernel";
	g.o.syslinux_path = "/boot/my extlinux";
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	if (kreboot_to_test(g.r, &res))
		fail_msg("syslinux: %s", res.why);
	expect_events("extlinux\n[--once]\n[test kernel]\n[/boot/my extlinux]\n"
		      "reboot \n");
	kreboot_free(g.r);

	g.o.type = KREBOOT_SCRIPT;
	g.o.reboot_script = keep(&g, xasprintf(
		"echo script $MACHINE >> %s/events", lab.dir));
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	if (kreboot_to_test(g.r, &res))
		fail_msg("script: %s", res.why);
	expect_events("script 127.0.0.1\nreboot \n");
	kreboot_free(g.r);

	/* a failing REBOOT_SCRIPT: no reboot into the wrong kernel */
	g.o.reboot_script = "echo no tftp server; exit 4";
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	assert_int_equal(kreboot_to_test(g.r, &res), -1);
	if (!strstr(res.why, "REBOOT_SCRIPT") || !strstr(res.why, "exit 4") ||
	    !strstr(res.why, "no tftp server"))
		fail_msg("why: %s", res.why);
	expect_events("");
	rig_free(&g);
}

/* REBOOT_RETURN_CODE for the box's reboot; an explicit REBOOT's exit. */
static void test_reboot_return_code(void **state)
{
	struct rig g;
	struct kreboot_result res;
	char *code = labp("exit-say");

	(void)state;
	rig_init(&g);
	g.o.box_reboot = keep(&g, labp("bin/say"));
	rig_start(&g, false);

	/* 255 without hanging up: what ssh says when it loses the box */
	write_file(code, "255\n", 0644);
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_true(res.graceful);
	assert_int_equal(res.power_cycles, 0);
	expect_events("say\n");

	/* anything else fails: POWER_CYCLE */
	write_file(code, "1\n", 0644);
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_false(res.graceful);
	assert_int_equal(res.power_cycles, 1);
	expect_events("say\ncycle 127.0.0.1\n");

	/* unless it is the configured code */
	g.o.reboot_return_code = 1;
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_true(res.graceful);
	expect_events("say\n");

	/* an explicit REBOOT on the host: only 0 is success */
	g.o.reboot = keep(&g, xasprintf(
		"echo host reboot $MACHINE >> %s/events; exit 255", lab.dir));
	g.o.reboot_return_code = 255;
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_false(res.graceful);
	assert_int_equal(res.power_cycles, 1);
	expect_events("host reboot 127.0.0.1\ncycle 127.0.0.1\n");

	/* POWERCYCLE_AFTER_REBOOT: a cycle after a good reboot too */
	g.o.reboot = keep(&g, xasprintf(
		"echo host reboot >> %s/events", lab.dir));
	g.o.powercycle_after_reboot_ms = 50;
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_true(res.graceful);
	assert_int_equal(res.power_cycles, 1);
	expect_events("host reboot\ncycle 127.0.0.1\n");
	free(code);
	rig_free(&g);
}

/* A box that does not answer is power cycled; without POWER_CYCLE, said. */
static void test_box_down(void **state)
{
	struct rig g;
	struct kreboot_result res;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd;

	(void)state;
	rig_init(&g);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	close(fd);
	g.b.ssh.port = ntohs(a.sin_port);
	rig_start(&g, true);
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_false(res.answered);
	assert_int_equal(res.power_cycles, 1);
	expect_events("cycle 127.0.0.1\n");
	/* a reboot that went on is not silent about why it cycled */
	if (!strstr(sbuf_str(&g.out), "the box does not answer (") ||
	    !strstr(sbuf_str(&g.out), "127.0.0.1 port"))
		fail_msg("output: %s", sbuf_str(&g.out));
	/*
	 * Nothing waited for, so nothing flushed: a flush comes before the
	 * cycle (after it, it would swallow the new boot's banner, as
	 * ktest.pl's did; tests/cli/test_run_faults.sh shows the whole).
	 */
	assert_string_equal(sbuf_str(&g.con.asked), "");

	kreboot_free(g.r);
	g.r = kreboot_new(g.box, &g.o, NULL, NULL, NULL);
	assert_int_equal(kreboot_reboot(g.r, 0, &res), -1);
	if (!strstr(res.why, "does not answer") ||
	    !strstr(res.why, "POWER_CYCLE") ||
	    !strstr(res.why, "127.0.0.1 port"))
		fail_msg("why: %s", res.why);

	/* up, with a host key we do not know: no power cycle, the fix */
	kreboot_free(g.r);
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	g.b.ssh.port = lab.port;
	g.b.ssh.known_hosts = "/dev/null";
	assert_int_equal(kreboot_reboot(g.r, 0, &res), -1);
	assert_int_equal(res.power_cycles, 0);
	if (!strstr(res.why, "host key not known") ||
	    !strstr(res.why, "ssh-keyscan"))
		fail_msg("why: %s", res.why);
	expect_events("");
	rig_free(&g);
}

/* reboot_to_good with a console: the waits ktest.pl's reboot(time) does */
static void test_to_good_wait(void **state)
{
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	g.o.switch_to_good = "echo cannot switch; exit 1";
	g.o.reboot_success_line = "login:";
	rig_start(&g, true);
	/* flush: -, "Linux version": not seen, success line: seen */
	g.con.answers[0] = 0;
	g.con.answers[1] = 0;
	g.con.answers[2] = 1;
	assert_int_equal(kreboot_to_good(g.r, 3000, &res), 0);
	assert_true(res.graceful);
	assert_true(res.stuck);
	assert_int_equal(res.power_cycles, 1);
	expect_events("reboot \ncycle 127.0.0.1\n");
	/* the success line is waited for UP_PROBE_MS at a time */
	assert_string_equal(sbuf_str(&g.con.asked),
			    "-/1000<1800000\nLinux version/3000<1800000\n"
			    "login:/2000\n");
	/* SWITCH_TO_GOOD failed: said, and the reboot went on */
	if (!strstr(sbuf_str(&g.out), "warning: SWITCH_TO_GOOD") ||
	    !strstr(sbuf_str(&g.out), "Reboot did not finish"))
		fail_msg("output: %s", sbuf_str(&g.out));
	expect_box_back(&g);
	rig_free(&g);
}

/*
 * doc/waits.md: the good kernel is up when the box answers ssh, its
 * console quiet or not; POWERCYCLE_AFTER_REBOOT ends on the kernel's
 * "reboot: Restarting system".
 */
static void test_waits_end_on_events(void **state)
{
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	g.o.reboot_success_line = "login:";
	rig_start(&g, true);
	/* flush, "Linux version" seen, no login: but 2 s of quiet */
	g.con.answers[1] = 1;
	assert_int_equal(kreboot_to_good(g.r, 60000, &res), 0);
	assert_true(res.up);
	assert_true(res.up_ssh);
	assert_false(res.stuck);
	assert_string_equal(sbuf_str(&g.con.asked),
			    "-/1000<1800000\nLinux version/60000<1800000\n"
			    "login:/2000\n");
	expect_events("reboot \n");
	expect_box_back(&g);
	rig_free(&g);

	rig_init(&g);
	g.o.powercycle_after_reboot_ms = 30000;
	rig_start(&g, true);
	g.con.answers[0] = 1;	/* no flush without a wait: the last line */
	assert_int_equal(kreboot_reboot(g.r, 0, &res), 0);
	assert_true(res.graceful);
	assert_int_equal(res.power_cycles, 1);
	assert_string_equal(sbuf_str(&g.con.asked),
			    "reboot: Restarting system/30000\n");
	expect_events("reboot \ncycle 127.0.0.1\n");
	expect_box_back(&g);
	rig_free(&g);
}

static void test_halt(void **state)
{
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	rig_start(&g, false);
	/* halted; POWEROFF_AFTER_HALT not set: that is all */
	assert_int_equal(kreboot_halt(g.r, &res), 0);
	assert_true(res.graceful);
	assert_false(res.powered_off);
	expect_events("halt \n");

	/* POWEROFF_AFTER_HALT: then the power goes off */
	g.o.poweroff_after_halt_ms = 50;
	assert_int_equal(kreboot_halt(g.r, &res), 0);
	assert_true(res.powered_off);
	expect_events("halt \noff\n");

	/* halt fails: the power goes off at once */
	g.o.box_halt = "false";
	assert_int_equal(kreboot_halt(g.r, &res), 0);
	assert_false(res.graceful);
	assert_true(res.powered_off);
	expect_events("off\n");

	/* and without POWER_OFF that is an error that says so */
	kreboot_free(g.r);
	kpower_free(g.power);
	g.power = kpower_command_new("true", NULL, 10000);
	g.r = kreboot_new(g.box, &g.o, g.power, NULL, NULL);
	assert_int_equal(kreboot_halt(g.r, &res), -1);
	if (!strstr(res.why, "halt ('false' on the box) failed") ||
	    !strstr(res.why, "POWER_OFF is not set"))
		fail_msg("why: %s", res.why);
	rig_free(&g);
}

/*
 * doc/waits.md: with a console, POWEROFF_AFTER_HALT ends on the kernel's
 * last line ("reboot: System halted", "reboot: Power down"); a console
 * that says nothing gets the whole delay, then the power goes off.
 */
static void test_halt_ends_on_the_last_line(void **state)
{
	const char *halted = "reboot: (System halted|Power down)/300\n";
	struct rig g;
	struct kreboot_result res;

	(void)state;
	rig_init(&g);
	g.o.poweroff_after_halt_ms = 30000;
	rig_start(&g, true);
	g.con.answers[0] = 1;	/* the line, at once: asked once */
	assert_int_equal(kreboot_halt(g.r, &res), 0);
	assert_true(res.graceful);
	assert_true(res.powered_off);
	assert_string_equal(sbuf_str(&g.con.asked),
			    "reboot: (System halted|Power down)/30000\n");
	if (!strstr(sbuf_str(&g.out), "the box is down: power off now"))
		fail_msg("output: %s", sbuf_str(&g.out));
	expect_events("halt \noff\n");
	rig_free(&g);

	/* the console quiet all along: the whole delay, asked again */
	rig_init(&g);
	g.o.poweroff_after_halt_ms = 300;
	rig_start(&g, true);
	g.con.answers[0] = 0;
	assert_int_equal(kreboot_halt(g.r, &res), 0);
	assert_true(res.powered_off);
	if (strncmp(sbuf_str(&g.con.asked), halted, strlen(halted)))
		fail_msg("asked: %s", sbuf_str(&g.con.asked));
	if (strstr(sbuf_str(&g.out), "the box is down"))
		fail_msg("output: %s", sbuf_str(&g.out));
	expect_events("halt \noff\n");
	rig_free(&g);
}

/* SSH_EXEC set: the menu, the selection and the reboot go through ssh(1). */
static void test_legacy_ssh_exec(void **state)
{
	struct rig g;
	struct kreboot_result res;
	char *args = sshlab_ssh_args(&lab, false);

	(void)state;
	rig_init(&g);
	g.b.ssh.port = 1;	/* libssh would fail: nothing listens there */
	g.b.ssh_exec = keep(&g, xasprintf("ssh %s $SSH_USER@$MACHINE "
					  "$SSH_COMMAND", args));
	g.o.type = KREBOOT_GRUB2;
	g.o.grub_file = keep(&g, labp("debian12-efi.cfg"));
	g.o.grub_menu = "'Debian GNU/Linux, with Linux 6.1.0-ktest+'";
	rig_start(&g, false);
	if (kreboot_to_test(g.r, &res))
		fail_msg("to test: %s\n%s", res.why, sbuf_str(&g.out));
	/* ssh says 255 when the box hangs up: REBOOT_RETURN_CODE */
	assert_true(res.graceful);
	assert_int_equal(res.power_cycles, 0);
	expect_events("grub2-reboot\n[1>2]\nreboot \n");
	assert_non_null(strstr(sbuf_str(&g.out), "'echo check machine status'"));
	free(args);
	rig_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* the menus, commands and options: no I/O */
		cmocka_unit_test(test_menus),
		cmocka_unit_test(test_menu_entries),
		cmocka_unit_test(test_menu_odd),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_opts_from_config),
		/* on the lab's box */
		cmocka_unit_test(test_grub2_to_test),
		cmocka_unit_test(test_grub2_submenu_and_not_found),
		cmocka_unit_test(test_grub_legacy),
		cmocka_unit_test(test_grub2bls_syslinux_script),
		cmocka_unit_test(test_reboot_return_code),
		cmocka_unit_test(test_box_down),
		cmocka_unit_test(test_to_good_wait),
		cmocka_unit_test(test_waits_end_on_events),
		cmocka_unit_test(test_halt),
		cmocka_unit_test(test_halt_ends_on_the_last_line),
		cmocka_unit_test(test_legacy_ssh_exec),
	};

	return cmocka_run_group_tests(tests, lab_setup, lab_teardown);
}
