// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rebooting the test box (see reboot.h).
 *
 * GRUB_MENU is text, not a regex. ktest.pl builds a regex around it but
 * passes GRUB_MENU through quotemeta() first, so "6.1.0+ (test)" matches
 * those characters and nothing else, and "6\.1.*" matches only a line that
 * has a backslash and a star in it. We keep that: configs were written
 * against it, and a title full of dots, pluses and parentheses is the
 * common case, not the exception.
 *
 * Where ktest.pl gets the grub2 index wrong, we do not: it reset its count
 * at every "submenu" line and answered "<number of submenus>><count>",
 * which is right only for an entry in the first submenu with nothing but
 * menuentries before it. Here the menu is read as grub reads it: every
 * menuentry and submenu of a menu takes the next number in it, "{" and "}"
 * open and close bodies, and an entry inside a submenu is "N>M" (N the
 * submenu's number, M the entry's within it), to any depth.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/strmap.h"
#include "ktest/reboot.h"

/* What the box's commands may take, and how long sync may take. */
#define SYNC_MS		10000
#define REBOOT_MS	60000	/* the default REBOOT without RUN_TIMEOUT */
#define FLUSH_MS	1000
/* how often the box is asked over ssh whether it is up, while it boots */
#define UP_PROBE_MS	2000
/* the kernel's last words before a restart: a clean shutdown is over */
#define RESTARTING	"reboot: Restarting system"
/* and before it halts or powers the machine off (kernel/reboot.c) */
#define HALTED		"reboot: (System halted|Power down)"

static const char *const type_names[] = {
	[KREBOOT_GRUB] = "grub",
	[KREBOOT_GRUB2] = "grub2",
	[KREBOOT_GRUB2BLS] = "grub2bls",
	[KREBOOT_SYSLINUX] = "syslinux",
	[KREBOOT_SCRIPT] = "script",
};

int kreboot_type_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (s && !strcmp(s, type_names[i]))
			return (int)i;
	return -1;
}

const char *kreboot_type_name(enum kreboot_type t)
{
	return type_names[t];
}

/* ---- menus ---- */

static void add_entry(struct kgrub_menu *m, char *index, char *title,
		      char *line)
{
	struct kgrub_entry *e;

	m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	e = &m->v[m->n++];
	e->index = index;
	e->title = title;
	e->line = line;
}

void kgrub_menu_free(struct kgrub_menu *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].index);
		free(m->v[i].title);
		free(m->v[i].line);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* p..end without the blanks around it, as a new string */
static char *trimmed(const char *p, const char *end)
{
	while (p < end && (is_space(*p) || *p == '\n'))
		p++;
	while (end > p && (is_space(end[-1]) || end[-1] == '\n'))
		end--;
	return xstrndup(p, end - p);
}

/* The lines of a text, one by one: *line, *end. */
static bool next_line(const char **pos, const char *text_end,
		      const char **line, const char **end)
{
	const char *nl;

	if (*pos >= text_end)
		return false;
	*line = *pos;
	nl = memchr(*pos, '\n', text_end - *pos);
	*end = nl ? nl : text_end;
	*pos = nl ? nl + 1 : text_end;
	return true;
}

/*
 * menu.lst: "title NAME" lines, counted from 0. ktest.pl: an entry is
 * /^\s*title\s/, and GRUB_MENU must be all of it (/^\s*title\s+MENU\s*$/).
 */
static void parse_menu_lst(const char *text, size_t len, struct kgrub_menu *m)
{
	const char *pos = text, *end = text + len, *l, *le, *p;
	int n = 0;

	while (next_line(&pos, end, &l, &le)) {
		for (p = l; p < le && is_space(*p); p++)
			;
		if (le - p < 5 || memcmp(p, "title", 5))
			continue;
		p += 5;
		if (p < le && !is_space(*p))
			continue;
		add_entry(m, xasprintf("%d", n++), trimmed(p, le),
			  trimmed(p, le));
	}
}

/*
 * grubby --info=ALL: blocks of key=value lines, each starting with
 * "index=N". An entry is a "title=" line (ktest.pl: /^title=/); its index
 * is the block's index= when there is one, which stays right when grubby
 * lists an entry it cannot read ("non linux entry", no title), and the
 * count of titles before it when there is none, as ktest.pl counted.
 */
static void parse_bls(const char *text, size_t len, struct kgrub_menu *m)
{
	const char *pos = text, *end = text + len, *l, *le, *v;
	long index = -1;
	int n = 0;

	while (next_line(&pos, end, &l, &le)) {
		if (le - l > 6 && !memcmp(l, "index=", 6)) {
			char *s = xstrndup(l + 6, le - l - 6), *e;

			index = strtol(s, &e, 10);
			if (e == s || (*e && *e != '\r') || index < 0)
				index = -1;
			free(s);
			continue;
		}
		if (le - l < 6 || memcmp(l, "title=", 6))
			continue;
		v = l + 6;
		{
			char *title = trimmed(v, le);
			size_t tl = strlen(title);

			if (tl >= 2 && (title[0] == '"' || title[0] == '\'') &&
			    title[tl - 1] == title[0]) {
				memmove(title, title + 1, tl - 2);
				title[tl - 2] = '\0';
			}
			add_entry(m, xasprintf("%ld", index >= 0 ? index :
					       (long)n), title,
				  xstrndup(v, le - v));
		}
		n++;
		index = -1;
	}
}

/*
 * grub.cfg is grub's shell script. The lexer knows what matters for
 * counting entries: quotes ('...', "..." with \ escapes, \x outside),
 * comments (# at the start of a word), ${var} inside words, "{" and "}"
 * (tokens even when glued to a word, as in grub's own lexer), and what
 * ends a command (newline, ';', '&&', '||', '|').
 */
enum tok { T_EOF, T_WORD, T_SEP, T_LBRACE, T_RBRACE };

struct lexer {
	const char *p, *end;
	struct sbuf word;	/* T_WORD: the word, unquoted */
	const char *start;	/* where the token began */
};

static bool word_end(char c)
{
	return is_space(c) || c == '\n' || c == ';' || c == '{' ||
	       c == '}' || c == '|' || c == '&' || c == '<' || c == '>';
}

static void lex_word(struct lexer *lx)
{
	const char *p = lx->p, *end = lx->end;

	sbuf_reset(&lx->word);
	while (p < end && !word_end(*p)) {
		if (*p == '\'') {
			for (p++; p < end && *p != '\''; p++)
				sbuf_addc(&lx->word, *p);
			if (p < end)
				p++;
		} else if (*p == '"') {
			for (p++; p < end && *p != '"'; p++) {
				if (*p == '\\' && p + 1 < end &&
				    strchr("\\\"$\n", p[1]))
					p++;
				sbuf_addc(&lx->word, *p);
			}
			if (p < end)
				p++;
		} else if (*p == '\\' && p + 1 < end) {
			if (p[1] != '\n')
				sbuf_addc(&lx->word, p[1]);
			p += 2;
		} else if (*p == '$' && p + 1 < end && p[1] == '{') {
			const char *close = memchr(p, '}', end - p);
			const char *stop = close ? close + 1 : end;

			sbuf_addn(&lx->word, p, stop - p);
			p = stop;
		} else {
			sbuf_addc(&lx->word, *p++);
		}
	}
	lx->p = p;
}

static enum tok lex(struct lexer *lx)
{
	const char *p;

	for (;;) {
		p = lx->p;
		while (p < lx->end && (is_space(*p) ||
				       (*p == '\\' && p + 1 < lx->end &&
					p[1] == '\n'))) {
			p += *p == '\\' ? 2 : 1;
		}
		lx->p = p;
		lx->start = p;
		if (p >= lx->end)
			return T_EOF;
		if (*p == '#') {
			const char *nl = memchr(p, '\n', lx->end - p);

			lx->p = nl ? nl : lx->end;
			continue;
		}
		/* a redirection is neither a word nor the end of a command */
		if (*p == '<' || *p == '>') {
			lx->p = p + 1;
			continue;
		}
		break;
	}
	switch (*p) {
	case '\n':
	case ';':
		lx->p = p + 1;
		return T_SEP;
	case '|':
	case '&':
		lx->p = p + 1 + (p + 1 < lx->end && p[1] == *p);
		return T_SEP;
	case '{':
		lx->p = p + 1;
		return T_LBRACE;
	case '}':
		lx->p = p + 1;
		return T_RBRACE;
	}
	lex_word(lx);
	return T_WORD;
}

/* A body in braces: a submenu's (a menu), an entry's, or another. */
enum frame_kind { F_MENU, F_ENTRY, F_OTHER };

struct frame {
	enum frame_kind kind;
	int index;		/* F_MENU: the submenu's number in its menu */
	int count;		/* F_MENU: entries numbered in it so far */
};

struct grub2 {
	struct frame *stack;
	size_t depth, cap;
	struct sbuf path;
};

static void push(struct grub2 *g, enum frame_kind kind, int index)
{
	if (g->depth == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->stack = xrealloc(g->stack, g->cap * sizeof(*g->stack));
	}
	g->stack[g->depth].kind = kind;
	g->stack[g->depth].index = index;
	g->stack[g->depth].count = 0;
	g->depth++;
}

/* "1>2" for entry 2 of the submenu that is entry 1 of the top menu */
static char *entry_path(struct grub2 *g, int index)
{
	sbuf_reset(&g->path);
	for (size_t i = 1; i < g->depth; i++)
		sbuf_addf(&g->path, "%d>", g->stack[i].index);
	sbuf_addf(&g->path, "%d", index);
	return xstrdup(sbuf_str(&g->path));
}

static void parse_grub2(const char *text, size_t len, struct kgrub_menu *m)
{
	struct lexer lx = { .p = text, .end = text + len };
	struct grub2 g = { NULL, 0, 0, { NULL, 0, 0 } };
	enum { C_NONE, C_ENTRY, C_SUBMENU, C_OTHER } cmd = C_NONE;
	bool at_start = true, want_title = false;
	struct kgrub_entry *pending = NULL;
	int number = -1;	/* of the submenu being opened */
	enum tok t;

	sbuf_init(&lx.word);
	push(&g, F_MENU, 0);
	while ((t = lex(&lx)) != T_EOF) {
		struct frame *top = &g.stack[g.depth - 1];

		switch (t) {
		case T_SEP:
			at_start = true;
			cmd = C_NONE;
			want_title = false;
			break;
		case T_LBRACE:
			if (cmd == C_SUBMENU && number >= 0)
				push(&g, F_MENU, number);
			else
				push(&g, cmd == C_ENTRY ? F_ENTRY : F_OTHER, 0);
			at_start = true;
			cmd = C_NONE;
			want_title = false;
			break;
		case T_RBRACE:
			if (g.depth > 1)
				g.depth--;
			at_start = true;
			cmd = C_NONE;
			want_title = false;
			break;
		case T_WORD:
			if (want_title) {
				free(pending->title);
				pending->title = xstrdup(sbuf_str(&lx.word));
				want_title = false;
				break;
			}
			if (!at_start)
				break;
			if (!strcmp(lx.word.buf, "then") ||
			    !strcmp(lx.word.buf, "do") ||
			    !strcmp(lx.word.buf, "else"))
				break;
			at_start = false;
			number = -1;
			cmd = C_OTHER;
			if (!strcmp(lx.word.buf, "menuentry"))
				cmd = C_ENTRY;
			else if (!strcmp(lx.word.buf, "submenu"))
				cmd = C_SUBMENU;
			if (cmd == C_OTHER || top->kind != F_MENU)
				break;
			number = top->count++;
			if (cmd == C_ENTRY) {
				const char *nl = memchr(lx.p, '\n',
							lx.end - lx.p);

				/* what ktest.pl matched: the rest of the line */
				add_entry(m, entry_path(&g, number),
					  xstrdup(""),
					  xstrndup(lx.p, (nl ? nl : lx.end) -
						   lx.p));
				pending = &m->v[m->n - 1];
				want_title = true;
			}
			break;
		case T_EOF:
			break;
		}
	}
	sbuf_free(&lx.word);
	sbuf_free(&g.path);
	free(g.stack);
}

void kgrub_parse(enum kreboot_type t, const char *text, size_t len,
		 struct kgrub_menu *m)
{
	memset(m, 0, sizeof(*m));
	switch (t) {
	case KREBOOT_GRUB:
		parse_menu_lst(text, len, m);
		break;
	case KREBOOT_GRUB2:
		parse_grub2(text, len, m);
		break;
	case KREBOOT_GRUB2BLS:
		parse_bls(text, len, m);
		break;
	case KREBOOT_SYSLINUX:
	case KREBOOT_SCRIPT:
		break;
	}
}

const struct kgrub_entry *kgrub_find(enum kreboot_type t,
				     const struct kgrub_menu *m,
				     const char *menu)
{
	if (!menu || !*menu)
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		const struct kgrub_entry *e = &m->v[i];

		if (t == KREBOOT_GRUB ? !strcmp(e->line, menu) :
		    strstr(e->line, menu) != NULL)
			return e;
	}
	return NULL;
}

/* ---- the options ---- */

/* seconds -> ms; -1 when not set (POWERCYCLE_AFTER_REBOOT = 0 is set) */
static int get_secs(struct kconfig *c, enum kopt_id id, int i, long *ms)
{
	long v;

	if (kconfig_get_int(c, id, i, -1, &v))
		return -1;
	*ms = v < 0 ? -1 : v * 1000;
	return 0;
}

/* ktest.pl's startup check: what each REBOOT_TYPE needs */
static int check_needs(struct kconfig *c, int i, const struct kreboot_opts *o)
{
	const char *missing = NULL, *what = "";
	struct korigin at;
	char *v = NULL;

	if (kconfig_get(c, KOPT_REBOOT_TYPE, i, &v, &at))
		return -1;
	free(v);
	switch (o->type) {
	case KREBOOT_GRUB:
	case KREBOOT_GRUB2BLS:
		if (!o->grub_menu) {
			missing = "GRUB_MENU";
			what = "a part of the test kernel's menu title";
		}
		break;
	case KREBOOT_GRUB2:
		if (!o->grub_menu) {
			missing = "GRUB_MENU";
			what = "a part of the test kernel's menuentry line";
		} else if (!o->grub_file) {
			missing = "GRUB_FILE";
			what = "the box's grub.cfg, e.g. /boot/grub/grub.cfg";
		}
		break;
	case KREBOOT_SYSLINUX:
		if (!o->syslinux_label) {
			missing = "SYSLINUX_LABEL";
			what = "the label of the test kernel";
		}
		break;
	case KREBOOT_SCRIPT:
		break;
	}
	if (!missing)
		return 0;
	kdiag_error(c->diag, at.file ? &at : NULL,
		    "REBOOT_TYPE %s needs %s (test %d): set it to %s",
		    kreboot_type_name(o->type), missing, i, what);
	return -1;
}

int kreboot_opts_read(struct kconfig *c, int i, struct kreboot_opts *o)
{
	const char *type, *reboot;
	struct korigin at;
	int t;

	memset(o, 0, sizeof(*o));
	if (kstrs_get(c, KOPT_REBOOT_TYPE, i, &o->keep, &type) ||
	    kstrs_get(c, KOPT_GRUB_MENU, i, &o->keep, &o->grub_menu) ||
	    kstrs_get(c, KOPT_GRUB_FILE, i, &o->keep, &o->grub_file) ||
	    kstrs_get(c, KOPT_GRUB_REBOOT, i, &o->keep, &o->grub_reboot) ||
	    kstrs_get(c, KOPT_GRUB_BLS_GET, i, &o->keep, &o->grub_bls_get) ||
	    kstrs_get(c, KOPT_SYSLINUX, i, &o->keep, &o->syslinux) ||
	    kstrs_get(c, KOPT_SYSLINUX_PATH, i, &o->keep, &o->syslinux_path) ||
	    kstrs_get(c, KOPT_SYSLINUX_LABEL, i, &o->keep, &o->syslinux_label) ||
	    kstrs_get(c, KOPT_REBOOT_SCRIPT, i, &o->keep, &o->reboot_script) ||
	    kstrs_get(c, KOPT_REBOOT, i, &o->keep, &reboot) ||
	    kstrs_get(c, KOPT_SWITCH_TO_TEST, i, &o->keep, &o->switch_to_test) ||
	    kstrs_get(c, KOPT_SWITCH_TO_GOOD, i, &o->keep, &o->switch_to_good) ||
	    kstrs_get(c, KOPT_REBOOT_SUCCESS_LINE, i, &o->keep,
		    &o->reboot_success_line) ||
	    kconfig_get_int(c, KOPT_REBOOT_RETURN_CODE, i, 255,
			    &o->reboot_return_code) ||
	    get_secs(c, KOPT_POWERCYCLE_AFTER_REBOOT, i,
		     &o->powercycle_after_reboot_ms) ||
	    get_secs(c, KOPT_POWEROFF_AFTER_HALT, i,
		     &o->poweroff_after_halt_ms) ||
	    get_secs(c, KOPT_RUN_TIMEOUT, i, &o->timeout_ms) ||
	    get_secs(c, KOPT_MAX_MONITOR_WAIT, i, &o->max_wait_ms))
		goto fail;
	if (o->max_wait_ms <= 0)
		o->max_wait_ms = 1800000;
	if (o->timeout_ms < 0)
		o->timeout_ms = 0;
	t = kreboot_type_parse(type ? type : "grub");
	if (t < 0) {
		const struct kval *raw = kconfig_raw(c, "REBOOT_TYPE", i);

		at = raw ? raw->origin : KORIGIN_NONE;
		kdiag_error(c->diag, at.file ? &at : NULL,
			    "REBOOT_TYPE '%s' (test %d) is not one of grub, "
			    "grub2, grub2bls, syslinux, script", type, i);
		goto fail;
	}
	o->type = (enum kreboot_type)t;
	/* ktest.pl's default REBOOT is "reboot" over ssh: the box does it */
	o->reboot = reboot && strcmp(reboot, kopt_table[KOPT_REBOOT].def) ?
		    reboot : NULL;
	if (check_needs(c, i, o))
		goto fail;
	return 0;
fail:
	kreboot_opts_release(o);
	return -1;
}

void kreboot_opts_release(struct kreboot_opts *o)
{
	kstrs_free(&o->keep);
}

char *kreboot_listing_cmd(const struct kreboot_opts *o)
{
	char *q, *cmd;

	switch (o->type) {
	case KREBOOT_GRUB:
		q = kcmd_quote(o->menu_lst ? o->menu_lst :
			       "/boot/grub/menu.lst");
		break;
	case KREBOOT_GRUB2:
		q = kcmd_quote(o->grub_file ? o->grub_file : "");
		break;
	case KREBOOT_GRUB2BLS:
		return xstrdup(o->grub_bls_get ? o->grub_bls_get :
			       "grubby --info=ALL");
	default:
		return NULL;
	}
	cmd = xasprintf("cat %s", q);
	free(q);
	return cmd;
}

char *kreboot_select_cmd(const struct kreboot_opts *o, const char *index)
{
	char *q, *q2, *cmd;

	switch (o->type) {
	case KREBOOT_GRUB:
		/* grub legacy's index is a plain number (no submenus) */
		if (!index || index[strspn(index, "0123456789")] || !*index)
			return NULL;
		return xasprintf("echo \"savedefault --default=%s --once\" | "
				 "grub --batch", index);
	case KREBOOT_GRUB2:
	case KREBOOT_GRUB2BLS:
		if (!index)
			return NULL;
		q = kcmd_quote(index);
		cmd = xasprintf("%s %s", o->grub_reboot ? o->grub_reboot :
				"grub2-reboot", q);
		free(q);
		return cmd;
	case KREBOOT_SYSLINUX:
		q = kcmd_quote(o->syslinux_label ? o->syslinux_label : "");
		q2 = kcmd_quote(o->syslinux_path ? o->syslinux_path :
				"/boot/extlinux");
		cmd = xasprintf("%s --once %s %s", o->syslinux ? o->syslinux :
				"extlinux", q, q2);
		free(q);
		free(q2);
		return cmd;
	case KREBOOT_SCRIPT:
		break;
	}
	return NULL;
}

/* ---- doing it ---- */

struct kreboot {
	struct kbox *box;
	const struct kreboot_opts *o;
	struct kpower *power;
	kreboot_watch_fn watch;
	void *watch_ctx;
	char *index;		/* get_grub_index's answer, for this menu */
	char *index_menu;
};

struct kreboot *kreboot_new(struct kbox *box, const struct kreboot_opts *o,
			    struct kpower *power, kreboot_watch_fn watch,
			    void *watch_ctx)
{
	struct kreboot *r = xcalloc(1, sizeof(*r));

	r->box = box;
	r->o = o;
	r->power = power;
	r->watch = watch;
	r->watch_ctx = watch_ctx;
	return r;
}

void kreboot_free(struct kreboot *r)
{
	if (!r)
		return;
	free(r->index);
	free(r->index_menu);
	free(r);
}

static const struct kbox_opts *bopts(const struct kreboot *r)
{
	return kbox_opts(r->box);
}

static void say(const struct kreboot *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct kreboot *r, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kbox_say(bopts(r), "%s", buf);
}

static int failed(struct kreboot_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int failed(struct kreboot_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct capture {
	struct sbuf text;
};

static void capture_line(void *ctx, const char *line, size_t len)
{
	struct capture *c = ctx;

	sbuf_addn(&c->text, line, len);
	sbuf_addc(&c->text, '\n');
}

/* What a failed listing said last (stderr comes with stdout). */
static const char *last_line(struct sbuf *b)
{
	char *nl;

	if (!b->len)
		return "";
	if (b->buf[b->len - 1] == '\n')
		b->buf[--b->len] = '\0';
	nl = strrchr(b->buf, '\n');
	return nl ? nl + 1 : b->buf;
}

/* "'a', 'b', 'c'" for the not-found message, shortened */
static void list_titles(const struct kgrub_menu *m, char *out, size_t len)
{
	size_t used = 0, i;

	out[0] = '\0';
	for (i = 0; i < m->n && used + 8 < len; i++)
		used += snprintf(out + used, len - used, "%s'%s'",
				 i ? ", " : "", m->v[i].title);
	if (i < m->n && len > 4)
		snprintf(out + (used < len - 4 ? used : len - 5), 5, " ...");
}

int kreboot_grub_index(struct kreboot *r, const char **index, char *why,
		       size_t whylen)
{
	const struct kreboot_opts *o = r->o;
	struct capture cap;
	struct kgrub_menu m;
	const struct kgrub_entry *e;
	char *cmd, titles[1024];
	int status, ret = -1;

	*index = NULL;
	why[0] = '\0';
	if (o->type != KREBOOT_GRUB && o->type != KREBOOT_GRUB2 &&
	    o->type != KREBOOT_GRUB2BLS)
		return 0;
	if (r->index && r->index_menu && o->grub_menu &&
	    !strcmp(r->index_menu, o->grub_menu)) {
		*index = r->index;
		return 0;
	}
	if (!o->grub_menu) {
		snprintf(why, whylen, "GRUB_MENU is not set (REBOOT_TYPE %s)",
			 kreboot_type_name(o->type));
		return -1;
	}
	cmd = kreboot_listing_cmd(o);
	sbuf_init(&cap.text);
	say(r, "Find %s menu ...", kreboot_type_name(o->type));
	if (kbox_exec(r->box, cmd, 0, capture_line, &cap, &status) < 0 ||
	    status) {
		snprintf(why, whylen, "cannot read the %s menu with '%s' on "
			 "%s: %s%s%.300s", kreboot_type_name(o->type), cmd,
			 bopts(r)->machine ? bopts(r)->machine : "the box",
			 kbox_error(r->box), cap.text.len ? ": " : "",
			 last_line(&cap.text));
		goto out;
	}
	kgrub_parse(o->type, cap.text.buf ? cap.text.buf : "", cap.text.len,
		    &m);
	e = kgrub_find(o->type, &m, o->grub_menu);
	if (!e) {
		list_titles(&m, titles, sizeof(titles));
		snprintf(why, whylen, "Could not find '%s' through %s on %s: "
			 "%s%s (GRUB_MENU is plain text, %s)",
			 o->grub_menu, cmd,
			 bopts(r)->machine ? bopts(r)->machine : "the box",
			 m.n ? "the entries are " : "no menu entries there",
			 titles,
			 o->type == KREBOOT_GRUB ? "the whole title" :
			 o->type == KREBOOT_GRUB2 ?
			 "a part of the menuentry line" :
			 "a part of the title");
	} else {
		free(r->index);
		free(r->index_menu);
		r->index = xstrdup(e->index);
		r->index_menu = xstrdup(o->grub_menu);
		*index = r->index;
		say(r, "Find %s menu ... %s", kreboot_type_name(o->type),
		    r->index);
		ret = 0;
	}
	kgrub_menu_free(&m);
out:
	sbuf_free(&cap.text);
	free(cmd);
	return ret;
}

static int power_cycle(struct kreboot *r, struct kreboot_result *res,
		       const char *because)
{
	say(r, "power cycle");
	if (!r->power)
		return failed(res, "%s, and there is no POWER_CYCLE to reset "
			      "the box with: set POWER_CYCLE", because);
	res->power_cycles++;
	if (kpower_cycle(r->power) < 0)
		return failed(res, "%s, and the power cycle failed: %s",
			      because, r->power->err);
	return 0;
}

static void watch(struct kreboot *r, const char *stop, long quiet_ms,
		  int *seen)
{
	int rc = 0;

	if (r->watch)
		rc = r->watch(r->watch_ctx, stop, quiet_ms, r->o->max_wait_ms);
	if (seen)
		*seen = rc;
}

/* Whether the box answers ssh now (the probe ktest.pl's reboot made). */
static bool answers(struct kreboot *r)
{
	const struct kbox_opts *bo = bopts(r);
	long probe_ms = bo->ssh.connect_timeout_ms > 0 ?
			bo->ssh.connect_timeout_ms : 25000;
	int status;

	if (kbox_exec(r->box, "echo check machine status", probe_ms, NULL,
		      NULL, &status) == 0 && status == 0)
		return true;
	kbox_disconnect(r->box);
	return false;
}

/*
 * After "Linux version": the good kernel is up when line shows on the
 * console or the box answers ssh (asked every UP_PROBE_MS); wait_ms of
 * console quiet is only the bound, as ktest.pl's wait_for_monitor, and
 * MAX_MONITOR_WAIT the cap. Returns 1 (up), 0 (not seen), -1 (console).
 */
static int wait_up(struct kreboot *r, const char *line,
		   struct kreboot_result *res, long wait_ms)
{
	int64_t t0 = mono_ms(), t;
	long quiet = 0, step;
	int rc;

	while (quiet < wait_ms) {
		step = wait_ms - quiet < UP_PROBE_MS ? wait_ms - quiet :
		       UP_PROBE_MS;
		t = mono_ms();
		rc = r->watch(r->watch_ctx, line, step, step);
		if (rc == 1 || rc < 0)
			return rc;
		/*
		 * 0: no line since t, so quiet since the last probe began
		 * (lines it held back would have made this 2); 2: the
		 * console talked
		 */
		quiet = rc == 0 ? quiet + (long)(mono_ms() - t) : 0;
		if (mono_ms() - t0 >= r->o->max_wait_ms) {
			say(r, "MAX_MONITOR_WAIT (%ld s) reached waiting for "
			    "the good kernel", r->o->max_wait_ms / 1000);
			return 0;
		}
		if (quiet >= wait_ms)
			break;
		t = mono_ms();
		if (answers(r)) {
			say(r, "the box answers ssh: its good kernel is up");
			res->up_ssh = true;
			return 1;
		}
		quiet += (long)(mono_ms() - t);
	}
	return 0;
}

/*
 * POWERCYCLE_AFTER_REBOOT, POWEROFF_AFTER_HALT: the time a clean shutdown
 * gets before the power is cycled or cut. The kernel's last line (last,
 * "reboot: Restarting system" or "reboot: System halted") says the
 * shutdown is over, so the power goes then (now, said); without a
 * console, the whole delay.
 */
static void wait_shutdown(struct kreboot *r, const char *last, long ms,
			  const char *now)
{
	int64_t end = mono_ms() + ms;
	long left;

	if (!r->watch) {
		sleep_ms(ms);
		return;
	}
	while ((left = (long)(end - mono_ms())) > 0) {
		int rc = r->watch(r->watch_ctx, last, left, left);

		if (rc == 1) {
			say(r, "%s", now);
			return;
		}
		if (rc < 0) {		/* no console any more: the whole delay */
			sleep_ms((long)(end - mono_ms()));
			return;
		}
	}
}

static bool not_power_trouble(enum kssh_fail f)
{
	return f == KSSH_HOSTKEY_UNKNOWN || f == KSSH_HOSTKEY_CHANGED ||
	       f == KSSH_AUTH;
}

/* REBOOT: 0 when it counts as done */
static int run_reboot(struct kreboot *r, char *why, size_t whylen)
{
	const struct kreboot_opts *o = r->o;
	const char *cmd = o->box_reboot ? o->box_reboot : "reboot";
	int status;

	if (o->reboot)
		return kbox_run_host(bopts(r), "REBOOT", o->reboot,
				     o->timeout_ms, why, whylen);
	/*
	 * ktest.pl's default "ssh $SSH_USER@$MACHINE reboot" counted exit
	 * REBOOT_RETURN_CODE (255: ssh lost the box) as done; the box
	 * hanging up on us reads as 255 here too.
	 */
	if (kbox_exec(r->box, cmd, o->timeout_ms > 0 ? o->timeout_ms :
		      REBOOT_MS, NULL, NULL, &status) < 0) {
		snprintf(why, whylen, "REBOOT ('%s' on the box): %s", cmd,
			 kbox_error(r->box));
		return -1;
	}
	if (status == 0 || status == o->reboot_return_code)
		return 0;
	snprintf(why, whylen, "REBOOT ('%s' on the box) failed: %s", cmd,
		 kbox_error(r->box));
	return -1;
}

int kreboot_reboot(struct kreboot *r, long wait_ms, struct kreboot_result *res)
{
	const struct kreboot_opts *o = r->o;
	const struct kbox_opts *bo = bopts(r);
	long probe_ms = bo->ssh.connect_timeout_ms > 0 ?
			bo->ssh.connect_timeout_ms : 25000;
	char why[2048], because[2300];
	int status, seen;

	memset(res, 0, sizeof(*res));
	if (kbox_exec(r->box, "echo check machine status", probe_ms, NULL,
		      NULL, &status) < 0 || status) {
		/*
		 * A box that answers with a key we do not trust, or takes
		 * none of ours, is up: power cycling it fixes nothing, and
		 * would be done again at every step.
		 */
		if (not_power_trouble(kbox_ssh_fail(r->box)))
			return failed(res, "%s", kbox_error(r->box));
		snprintf(because, sizeof(because),
			 "the box does not answer (%s)", kbox_error(r->box));
		kbox_disconnect(r->box);
		/* why the box is cycled, and which: the log says it */
		say(r, "%s", because);
		/*
		 * Old output goes before the power cycle, not after:
		 * ktest.pl flushed after it and swallowed the new boot's
		 * banner, then power-cycled a healthy box again.
		 */
		if (wait_ms > 0)
			watch(r, NULL, FLUSH_MS, NULL);
		if (power_cycle(r, res, because))
			return -1;
	} else {
		res->answered = true;
		/* what is on the box's disks gets there */
		if (kbox_exec(r->box, "sync", SYNC_MS, NULL, NULL, &status) < 0 ||
		    status)
			say(r, "warning: sync on the box: %s",
			    kbox_error(r->box));
		if (wait_ms > 0)
			watch(r, NULL, FLUSH_MS, NULL);
		if (run_reboot(r, why, sizeof(why)) == 0) {
			res->graceful = true;
			kbox_disconnect(r->box);
			if (o->powercycle_after_reboot_ms >= 0) {
				wait_shutdown(r, RESTARTING,
					      o->powercycle_after_reboot_ms,
					      "the box restarts: power cycle now");
				if (power_cycle(r, res, "POWERCYCLE_AFTER_REBOOT"))
					return -1;
			}
		} else {
			kbox_disconnect(r->box);
			snprintf(because, sizeof(because), "%s", why);
			say(r, "%s", why);
			if (power_cycle(r, res, because))
				return -1;
		}
	}
	if (wait_ms <= 0 || !r->watch)
		return 0;

	/* the good kernel's banner; a box stuck on the way gets a reset */
	watch(r, "Linux version", wait_ms, &seen);
	if (seen != 1) {
		say(r, "Reboot did not finish. Forcing power cycle");
		res->stuck = true;
		if (power_cycle(r, res, "the box did not reboot (no "
				"\"Linux version\" on the console)"))
			return -1;
	}
	res->up = wait_up(r, o->reboot_success_line, res, wait_ms) == 1;
	return 0;
}

int kreboot_to_test(struct kreboot *r, struct kreboot_result *res)
{
	const struct kreboot_opts *o = r->o;
	const char *index = NULL;
	char why[2048];
	char *cmd;
	int status;

	memset(res, 0, sizeof(*res));
	if (o->switch_to_test &&
	    kbox_run_host(bopts(r), "SWITCH_TO_TEST", o->switch_to_test,
			  o->timeout_ms, why, sizeof(why)))
		return failed(res, "%s (the box would boot the wrong kernel)",
			      why);
	if (kreboot_grub_index(r, &index, why, sizeof(why)))
		return failed(res, "%s", why);
	cmd = kreboot_select_cmd(o, index);
	if (cmd) {
		if (kbox_exec(r->box, cmd, 0, NULL, NULL, &status) < 0 ||
		    status) {
			failed(res, "selecting the test kernel with '%s' on "
			       "%s failed: %s", cmd,
			       bopts(r)->machine ? bopts(r)->machine : "the box",
			       kbox_error(r->box));
			free(cmd);
			return -1;
		}
		free(cmd);
	} else if (o->type == KREBOOT_GRUB) {
		return failed(res, "grub legacy cannot boot entry '%s' once",
			      index ? index : "");
	} else if (o->reboot_script &&
		   kbox_run_host(bopts(r), "REBOOT_SCRIPT", o->reboot_script,
				 o->timeout_ms, why, sizeof(why))) {
		return failed(res, "%s (the box would boot the wrong kernel)",
			      why);
	}
	return kreboot_reboot(r, 0, res);
}

int kreboot_to_good(struct kreboot *r, long wait_ms,
		    struct kreboot_result *res)
{
	const struct kreboot_opts *o = r->o;
	char why[2048];

	/* ktest.pl went on when it failed; the reboot may still help */
	if (o->switch_to_good &&
	    kbox_run_host(bopts(r), "SWITCH_TO_GOOD", o->switch_to_good,
			  o->timeout_ms, why, sizeof(why)))
		say(r, "warning: %s", why);
	return kreboot_reboot(r, wait_ms, res);
}

int kreboot_halt(struct kreboot *r, struct kreboot_result *res)
{
	const struct kreboot_opts *o = r->o;
	const char *cmd = o->box_halt ? o->box_halt : "halt";
	char because[2300];
	int status;
	bool halted;

	memset(res, 0, sizeof(*res));
	halted = kbox_exec(r->box, cmd, o->timeout_ms > 0 ? o->timeout_ms :
			   REBOOT_MS, NULL, NULL, &status) == 0 &&
		 (status == 0 || status == 255);
	snprintf(because, sizeof(because), "halt ('%s' on the box) failed: %s",
		 cmd, kbox_error(r->box));
	kbox_disconnect(r->box);
	if (halted) {
		res->graceful = true;
		/* POWEROFF_AFTER_HALT: power goes off that long after */
		if (o->poweroff_after_halt_ms < 0)
			return 0;
		wait_shutdown(r, HALTED, o->poweroff_after_halt_ms,
			      "the box is down: power off now");
	} else {
		say(r, "%s", because);
	}
	if (!r->power)
		return halted ? 0 : failed(res, "%s, and POWER_OFF is not set",
					   because);
	say(r, "power off");
	if (kpower_off(r->power) < 0) {
		if (halted)
			return failed(res, "the box halted, but POWER_OFF "
				      "failed: %s", r->power->err);
		return failed(res, "%s, and power off failed: %s", because,
			      r->power->err);
	}
	res->powered_off = true;
	return 0;
}
