// SPDX-License-Identifier: GPL-2.0-only
/*
 * A kernel tree's Kconfig, streamed file by file (getline) into a symbol
 * dependency graph; nothing but the graph stays in memory.
 *
 * The reader follows scripts/kconfig's lexer where it matters for the
 * graph: a logical line is physical lines joined at "\" + newline; '#'
 * outside quotes starts a comment; a help block (after "help" or
 * "---help---") is every following line indented at least as much as its
 * first non-blank line (tabs to multiples of 8), blank lines included, and
 * a line that is not indented always ends it; "NAME := value" (and = +=)
 * defines a macro, not a statement. Blocks (if, menu, choice) nest across
 * files, as the grammar lets them.
 */
#include "conf/kconfig_tree.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/strmap.h"

#define PREFIX		"CONFIG_"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)
#define MAX_DEPTH	64

struct ksym;

struct kdeps {
	struct ksym **v;
	size_t n, cap;
};

struct ksym {
	char *name;
	size_t idx;			/* in kctree.v */
	bool defined;
	struct kdeps deps;
	const char **names;		/* deps' names, in kctree.pool */
};

struct kctree {
	struct strmap syms;		/* name -> struct ksym * */
	struct ksym **v;
	size_t n, cap;
	size_t defined;
	size_t files;
	const char **pool;
};

enum kblock_type { KB_IF, KB_MENU, KB_CHOICE };

static const char *const block_name[] = { "if", "menu", "choice" };

struct kblock {
	enum kblock_type type;
	struct kdeps deps;		/* the symbols of its conditions */
	struct ksym *choice;		/* a named choice's symbol */
	char *file;			/* where it was opened */
	unsigned int line;
};

/* What "depends on" and friends apply to. */
enum kentry { KE_NONE, KE_SYM, KE_MENU, KE_CHOICE, KE_COMMENT };

struct kfile {
	const struct kfile *parent;	/* the file that sourced it */
	const char *rel;		/* relative to srctree */
	unsigned int line;		/* of the logical line being parsed */
	unsigned int depth;
	bool help;			/* inside a help block */
	unsigned int help_ts;		/* its indentation; 0: not known yet */
};

struct kparse {
	struct kctree *t;
	const char *srctree;
	char *arch;
	struct kblock *blk;
	size_t nblk, capblk;
	enum kentry entry;
	struct ksym *sym;		/* the entry's symbol, if it has one */
	struct sbuf scratch;
	char *why;
	size_t whylen;
};

static int perr(struct kparse *p, const struct kfile *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct kparse *p, const struct kfile *f, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!p->why || !p->whylen)
		return -1;
	if (f)
		n = snprintf(p->why, p->whylen, "%s:%u: ", f->rel, f->line);
	if (n < 0 || (size_t)n >= p->whylen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->why + n, p->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the graph ---- */

static const char *bare(const char *name)
{
	return strncmp(name, PREFIX, PREFIX_LEN) ? name : name + PREFIX_LEN;
}

static struct ksym *lookup(const struct kctree *t, const char *name)
{
	return strmap_get(&t->syms, bare(name));
}

static struct ksym *intern(struct kparse *p, const char *s, size_t len)
{
	struct kctree *t = p->t;
	struct ksym *sym;

	sbuf_reset(&p->scratch);
	sbuf_addn(&p->scratch, s, len);
	sym = strmap_get(&t->syms, sbuf_str(&p->scratch));
	if (sym)
		return sym;
	sym = xcalloc(1, sizeof(*sym));
	sym->name = xstrdup(sbuf_str(&p->scratch));
	sym->idx = t->n;
	strmap_put(&t->syms, sym->name, sym);
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n++] = sym;
	return sym;
}

static void deps_add(struct kdeps *d, struct ksym *sym)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i] == sym)
			return;
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = sym;
}

static void sym_add(struct ksym *sym, struct ksym *dep)
{
	if (sym != dep)
		deps_add(&sym->deps, dep);
}

/* ---- tokens ---- */

enum ktok { KT_END, KT_WORD, KT_STR, KT_OP };

struct ktoken {
	enum ktok type;
	const char *s;
	size_t len;
};

static bool word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Past the $(...) at s, nested parentheses included. */
static const char *skip_macro(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')' && --depth == 0)
			return s + 1;
	}
	return s;
}

static const char *lex_string(const char *s, struct ktoken *tk)
{
	char q = *s++;

	tk->type = KT_STR;
	tk->s = s;
	while (*s && *s != q && *s != '\n') {
		if (*s == '\\' && s[1])
			s += 2;
		else if (*s == '$' && s[1] == '(')
			s = skip_macro(s);
		else
			s++;
	}
	tk->len = (size_t)(s - tk->s);
	return *s == q ? s + 1 : s;
}

static const char *lex_word(const char *s, struct ktoken *tk)
{
	tk->type = KT_WORD;
	tk->s = s;
	while (*s) {
		if (*s == '$' && s[1] == '(')
			s = skip_macro(s);
		else if (*s == '$' || word_char(*s))
			s++;
		else
			break;
	}
	tk->len = (size_t)(s - tk->s);
	return s;
}

static const char *const ops[] = {
	"&&", "||", "!=", "<=", ">=", ":=", "+=",
	"!", "=", "<", ">", "(", ")",
};

static bool lex_op(const char **pp, struct ktoken *tk)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t len = strlen(ops[i]);

		if (!strncmp(*pp, ops[i], len)) {
			tk->type = KT_OP;
			tk->s = *pp;
			tk->len = len;
			*pp += len;
			return true;
		}
	}
	return false;
}

/* The next token of the line at *pp; false at its end or a comment. */
static bool next_token(const char **pp, struct ktoken *tk)
{
	const char *p = *pp;

	for (;;) {
		p += strspn(p, " \t\r\n\f\v");
		if (!*p || *p == '#') {
			tk->type = KT_END;
			*pp = p;
			return false;
		}
		if (*p == '"' || *p == '\'') {
			p = lex_string(p, tk);
			break;
		}
		if (lex_op(&p, tk))
			break;
		if (*p == '$' || word_char(*p)) {
			p = lex_word(p, tk);
			break;
		}
		p++;	/* kconfig ignores it, with a warning */
	}
	*pp = p;
	return true;
}

static bool tok_is(const struct ktoken *tk, const char *s)
{
	return tk->type != KT_END && tk->len == strlen(s) &&
	       !memcmp(tk->s, s, tk->len);
}

/* A decimal, negative or hexadecimal number. */
static bool tok_number(const struct ktoken *tk)
{
	bool hex = tk->len > 2 && tk->s[0] == '0' &&
		   (tk->s[1] == 'x' || tk->s[1] == 'X');
	size_t i = hex ? 2 : tk->len > 1 && tk->s[0] == '-';

	for (; i < tk->len; i++)
		if (!isdigit((unsigned char)tk->s[i]) &&
		    !(hex && isxdigit((unsigned char)tk->s[i])))
			return false;
	return true;
}

/* A symbol name: letters, digits, '_'; not y/m/n, not a number. */
static bool tok_symbol(const struct ktoken *tk)
{
	if (tk->type != KT_WORD || !tk->len)
		return false;
	for (size_t i = 0; i < tk->len; i++)
		if (!isalnum((unsigned char)tk->s[i]) && tk->s[i] != '_')
			return false;
	if (tk->len == 1 && strchr("ymn", tk->s[0]))
		return false;
	return !tok_number(tk);
}

/* Every symbol the expression at c names, into d. */
static void add_expr(struct kparse *p, const char *c, struct kdeps *d)
{
	struct ktoken tk;

	while (next_token(&c, &tk))
		if (tok_symbol(&tk))
			deps_add(d, intern(p, tk.s, tk.len));
}

/* ---- blocks: if, menu, choice ---- */

static struct kblock *push_block(struct kparse *p, const struct kfile *f,
				 enum kblock_type type)
{
	struct kblock *b;

	if (p->nblk == p->capblk) {
		p->capblk = p->capblk ? p->capblk * 2 : 16;
		p->blk = xrealloc(p->blk, p->capblk * sizeof(*p->blk));
	}
	b = &p->blk[p->nblk++];
	memset(b, 0, sizeof(*b));
	b->type = type;
	b->file = xstrdup(f->rel);
	b->line = f->line;
	return b;
}

static void block_free(struct kblock *b)
{
	free(b->deps.v);
	free(b->file);
}

static int pop_block(struct kparse *p, const struct kfile *f,
		     enum kblock_type type)
{
	const char *what = block_name[type];
	struct kblock *b;

	if (!p->nblk)
		return perr(p, f, "end%s without %s", what, what);
	b = &p->blk[p->nblk - 1];
	if (b->type != type)
		return perr(p, f, "end%s in the %s opened at %s:%u", what,
			    block_name[b->type], b->file, b->line);
	block_free(b);
	p->nblk--;
	p->entry = KE_NONE;
	p->sym = NULL;
	return 0;
}

/* What the blocks around it give a symbol being defined. */
static void add_block_deps(struct kparse *p, struct ksym *sym)
{
	for (size_t i = 0; i < p->nblk; i++) {
		const struct kblock *b = &p->blk[i];

		for (size_t j = 0; j < b->deps.n; j++)
			sym_add(sym, b->deps.v[j]);
		if (b->choice)
			sym_add(sym, b->choice);
	}
}

/* ---- statements ---- */

static struct ksym *define(struct kparse *p, const struct ktoken *tk)
{
	struct ksym *sym = intern(p, tk->s, tk->len);

	if (!sym->defined) {
		sym->defined = true;
		p->t->defined++;
	}
	add_block_deps(p, sym);
	return sym;
}

static int st_config(struct kparse *p, struct kfile *f, const char *c)
{
	struct ktoken tk;

	if (!next_token(&c, &tk) || !tok_symbol(&tk))
		return perr(p, f, "config needs a symbol name");
	p->sym = define(p, &tk);
	p->entry = KE_SYM;
	return 0;
}

static int st_choice(struct kparse *p, struct kfile *f, const char *c)
{
	struct ksym *sym = NULL;
	struct ktoken tk;

	if (next_token(&c, &tk)) {
		if (!tok_symbol(&tk))
			return perr(p, f, "invalid choice name");
		sym = define(p, &tk);
	}
	push_block(p, f, KB_CHOICE)->choice = sym;
	p->entry = KE_CHOICE;
	p->sym = sym;
	return 0;
}

static int st_menu(struct kparse *p, struct kfile *f, const char *c)
{
	push_block(p, f, KB_MENU);
	p->entry = KE_MENU;
	p->sym = NULL;
	return 0;
}

static int st_if(struct kparse *p, struct kfile *f, const char *c)
{
	const char *e = c;
	struct ktoken tk;

	if (!next_token(&e, &tk))
		return perr(p, f, "if needs an expression");
	add_expr(p, c, &push_block(p, f, KB_IF)->deps);
	p->entry = KE_NONE;
	p->sym = NULL;
	return 0;
}

static int st_endif(struct kparse *p, struct kfile *f, const char *c)
{
	return pop_block(p, f, KB_IF);
}

static int st_endmenu(struct kparse *p, struct kfile *f, const char *c)
{
	return pop_block(p, f, KB_MENU);
}

static int st_endchoice(struct kparse *p, struct kfile *f, const char *c)
{
	return pop_block(p, f, KB_CHOICE);
}

static int st_comment(struct kparse *p, struct kfile *f, const char *c)
{
	p->entry = KE_COMMENT;
	p->sym = NULL;
	return 0;
}

static int st_mainmenu(struct kparse *p, struct kfile *f, const char *c)
{
	p->entry = KE_NONE;
	p->sym = NULL;
	return 0;
}

/* A condition on the current entry: its symbol, or its menu or choice. */
static int entry_condition(struct kparse *p, struct kfile *f, const char *c,
			   const char *what)
{
	struct kdeps d = { 0 };

	if (p->entry == KE_NONE)
		return perr(p, f, "%s outside of an entry", what);
	if (p->entry == KE_MENU || p->entry == KE_CHOICE)
		add_expr(p, c, &p->blk[p->nblk - 1].deps);
	if (!p->sym)
		return 0;
	/* a config's, or a named choice's own dependencies */
	add_expr(p, c, &d);
	for (size_t i = 0; i < d.n; i++)
		sym_add(p->sym, d.v[i]);
	free(d.v);
	return 0;
}

static int st_depends(struct kparse *p, struct kfile *f, const char *c)
{
	struct ktoken tk;

	if (!next_token(&c, &tk) || !tok_is(&tk, "on"))
		return perr(p, f, "depends needs \"on\"");
	return entry_condition(p, f, c, "depends on");
}

static int st_visible(struct kparse *p, struct kfile *f, const char *c)
{
	struct ktoken tk;

	if (!next_token(&c, &tk))
		return 0;
	if (!tok_is(&tk, "if"))
		return perr(p, f, "visible needs \"if\"");
	if (p->entry != KE_MENU)
		return 0;
	return entry_condition(p, f, c, "visible if");
}

static int st_select(struct kparse *p, struct kfile *f, const char *c)
{
	struct ktoken tk;

	if (!next_token(&c, &tk) || !tok_symbol(&tk))
		return perr(p, f, "select and imply need a symbol name");
	if (p->entry != KE_SYM)
		return perr(p, f, "select or imply outside of a config entry");
	sym_add(p->sym, intern(p, tk.s, tk.len));
	return 0;	/* "if EXPR" after it: not a dependency */
}

static int st_help(struct kparse *p, struct kfile *f, const char *c)
{
	f->help = true;
	f->help_ts = 0;
	return 0;
}

/* Types, defaults, prompts, ranges, options: nothing for the graph. */
static int st_ignore(struct kparse *p, struct kfile *f, const char *c)
{
	return 0;
}

static int parse_file(struct kparse *p, const struct kfile *parent,
		      const char *rel, FILE *fp);

static int st_source_file(struct kparse *p, struct kfile *f, const char *rel,
			  bool optional)
{
	char *path = xasprintf("%s/%s", p->srctree, rel);
	FILE *fp = fopen(path, "r");
	int ret = 0;

	if (!fp && !(optional && errno == ENOENT))
		ret = perr(p, f, "can't open file \"%s\": %s", rel,
			   strerror(errno));
	else if (fp)
		ret = parse_file(p, f, rel, fp);
	free(path);
	return ret;
}

static char *glob_escape(const char *s)
{
	struct sbuf b;

	sbuf_init(&b);
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			sbuf_addc(&b, '\\');
		sbuf_addc(&b, *s);
	}
	return sbuf_detach(&b);
}

static int st_source_glob(struct kparse *p, struct kfile *f, const char *rel,
			  bool optional)
{
	char *top = glob_escape(p->srctree);
	char *pattern = xasprintf("%s/%s", top, rel);
	size_t skip = strlen(p->srctree) + 1;
	glob_t g;
	int ret = glob(pattern, 0, NULL, &g);

	free(top);
	free(pattern);
	if (ret == GLOB_NOMATCH)
		return optional ? 0 : perr(p, f, "no file matches \"%s\"", rel);
	if (ret)
		return perr(p, f, "can't expand \"%s\": %s", rel,
			    ret == GLOB_NOSPACE ? "out of memory" :
			    "read error");
	for (size_t i = 0; !ret && i < g.gl_pathc; i++)
		ret = st_source_file(p, f, g.gl_pathv[i] + skip, optional);
	globfree(&g);
	return ret;
}

/* A source file name with its $(VAR) expanded. */
static char *expand(struct kparse *p, const char *s, size_t len)
{
	const char *end = s + len;
	struct sbuf b;

	sbuf_init(&b);
	while (s < end) {
		const char *m = s[0] == '$' && s + 1 < end && s[1] == '(' ?
				skip_macro(s) : NULL;
		char *name, *val;

		if (!m || m > end || m[-1] != ')') {
			sbuf_addc(&b, *s++);
			continue;
		}
		name = xstrndup(s + 2, (size_t)(m - s - 3));
		if (!strcmp(name, "SRCARCH") || !strcmp(name, "ARCH") ||
		    !strcmp(name, "HEADER_ARCH"))
			val = p->arch;
		else
			val = getenv(name);
		if (val)
			sbuf_adds(&b, val);
		free(name);
		s = m;
	}
	return sbuf_detach(&b);
}

/* The file name of an rsource: next to the current file. */
static char *relative(const struct kfile *f, const char *name)
{
	const char *slash = strrchr(f->rel, '/');

	if (!slash)
		return xstrdup(name);
	return xasprintf("%.*s/%s", (int)(slash - f->rel), f->rel, name);
}

static int source(struct kparse *p, struct kfile *f, const char *c,
		  bool optional, bool rel)
{
	struct ktoken tk;
	char *name, *path;
	int ret;

	if (!next_token(&c, &tk) || (tk.type != KT_STR && tk.type != KT_WORD))
		return perr(p, f, "source needs a file name");
	name = expand(p, tk.s, tk.len);
	path = rel ? relative(f, name) : xstrdup(name);
	if (strpbrk(path, "*?["))
		ret = st_source_glob(p, f, path, optional);
	else
		ret = st_source_file(p, f, path, optional);
	free(name);
	free(path);
	p->entry = KE_NONE;
	p->sym = NULL;
	return ret;
}

static int st_source(struct kparse *p, struct kfile *f, const char *c)
{
	return source(p, f, c, false, false);
}

static int st_osource(struct kparse *p, struct kfile *f, const char *c)
{
	return source(p, f, c, true, false);
}

static int st_rsource(struct kparse *p, struct kfile *f, const char *c)
{
	return source(p, f, c, false, true);
}

static int st_orsource(struct kparse *p, struct kfile *f, const char *c)
{
	return source(p, f, c, true, true);
}

static const struct {
	const char *kw;
	int (*fn)(struct kparse *p, struct kfile *f, const char *rest);
} statements[] = {
	{ "config", st_config },	{ "menuconfig", st_config },
	{ "choice", st_choice },	{ "endchoice", st_endchoice },
	{ "menu", st_menu },		{ "endmenu", st_endmenu },
	{ "if", st_if },		{ "endif", st_endif },
	{ "comment", st_comment },	{ "mainmenu", st_mainmenu },
	{ "source", st_source },	{ "osource", st_osource },
	{ "rsource", st_rsource },	{ "orsource", st_orsource },
	{ "depends", st_depends },	{ "visible", st_visible },
	{ "select", st_select },	{ "imply", st_select },
	{ "help", st_help },		{ "---help---", st_help },
	{ "bool", st_ignore },		{ "boolean", st_ignore },
	{ "tristate", st_ignore },	{ "string", st_ignore },
	{ "hex", st_ignore },		{ "int", st_ignore },
	{ "def_bool", st_ignore },	{ "def_tristate", st_ignore },
	{ "default", st_ignore },	{ "prompt", st_ignore },
	{ "range", st_ignore },		{ "option", st_ignore },
	{ "modules", st_ignore },	{ "optional", st_ignore },
	{ "transitional", st_ignore },
};

static bool is_assign(const struct ktoken *tk)
{
	return tok_is(tk, "=") || tok_is(tk, ":=") || tok_is(tk, "+=");
}

static int parse_line(struct kparse *p, struct kfile *f, const char *line)
{
	const char *c = line, *rest;
	struct ktoken kw, tk;

	if (!next_token(&c, &kw))
		return 0;
	rest = c;
	if (kw.type == KT_WORD && next_token(&c, &tk) && is_assign(&tk))
		return 0;	/* a macro: NAME := value */
	if (kw.type == KT_WORD && memchr(kw.s, '$', kw.len))
		return 0;	/* a macro call: $(error-if,...) */
	for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
		if (tok_is(&kw, statements[i].kw))
			return statements[i].fn(p, f, rest);
	return perr(p, f, "unknown statement \"%.*s\"", (int)kw.len, kw.s);
}

/* ---- files ---- */

/* Is the physical line s part of the help block f is in? */
static bool in_help(struct kfile *f, const char *s)
{
	unsigned int ts = 0;

	for (; *s == ' ' || *s == '\t'; s++)
		ts = *s == '\t' ? (ts & ~7u) + 8 : ts + 1;
	if (!*s || *s == '\n' || (*s == '\r' && s[1] == '\n'))
		return true;
	if (!ts || (f->help_ts && ts < f->help_ts)) {
		f->help = false;
		return false;
	}
	if (!f->help_ts)
		f->help_ts = ts;
	return true;
}

/* Does the line end in "\" + newline? Then drops both. */
static bool continued(struct sbuf *b)
{
	size_t n = b->len;

	if (n && b->buf[n - 1] == '\n')
		n--;
	if (n && b->buf[n - 1] == '\r')
		n--;
	if (!n || b->buf[n - 1] != '\\')
		return false;
	b->len = n - 1;
	b->buf[b->len] = '\0';
	sbuf_addc(b, ' ');
	return true;
}

static int check_recursion(struct kparse *p, const struct kfile *parent,
			   const char *rel)
{
	const struct kfile *g;

	if (parent && parent->depth >= MAX_DEPTH)
		return perr(p, parent, "sources nested too deep");
	for (g = parent; g; g = g->parent)
		if (!strcmp(g->rel, rel))
			return perr(p, parent, "recursive inclusion of \"%s\"",
				    rel);
	return 0;
}

static int parse_lines(struct kparse *p, struct kfile *f, FILE *fp)
{
	struct sbuf line;
	char *buf = NULL;
	size_t cap = 0;
	unsigned int phys = 0;
	int ret = 0;

	sbuf_init(&line);
	while (!ret && getline(&buf, &cap, fp) >= 0) {
		phys++;
		if (f->help && in_help(f, buf))
			continue;
		f->line = phys;
		sbuf_reset(&line);
		sbuf_adds(&line, buf);
		while (continued(&line) && getline(&buf, &cap, fp) >= 0) {
			phys++;
			sbuf_adds(&line, buf);
		}
		ret = parse_line(p, f, sbuf_str(&line));
	}
	if (!ret && ferror(fp)) {
		f->line = phys;
		ret = perr(p, f, "read error: %s", strerror(errno));
	}
	free(buf);
	sbuf_free(&line);
	return ret;
}

/* Reads the open file fp, named rel, and closes it. */
static int parse_file(struct kparse *p, const struct kfile *parent,
		      const char *rel, FILE *fp)
{
	struct kfile f = {
		.parent = parent,
		.rel = rel,
		.depth = parent ? parent->depth + 1 : 0,
	};
	int ret = check_recursion(p, parent, rel);

	if (!ret) {
		p->t->files++;
		ret = parse_lines(p, &f, fp);
	}
	if (fclose(fp) && !ret)
		ret = perr(p, parent, "%s: %s", rel, strerror(errno));
	return ret;
}

/* ---- loading ---- */

/* The arch directory a kernel ARCH builds from (the top Makefile's rule). */
static const char *arch_alias(const char *arch)
{
	if (!strcmp(arch, "i386") || !strcmp(arch, "x86_64"))
		return "x86";
	if (!strcmp(arch, "sparc32") || !strcmp(arch, "sparc64"))
		return "sparc";
	if (!strcmp(arch, "parisc64"))
		return "parisc";
	return arch;
}

static bool arch_dir(const char *srctree, const char *arch, size_t len)
{
	char *path = xasprintf("%s/arch/%.*s", srctree, (int)len, arch);
	struct stat st;
	bool ok = !stat(path, &st) && S_ISDIR(st.st_mode);

	free(path);
	return ok;
}

static char *resolve_arch(const char *srctree, const char *srcarch)
{
	const char *a = srcarch;
	size_t len;

	if (!a || !*a)
		a = getenv("SRCARCH");
	if (!a || !*a)
		a = getenv("ARCH");
	if (!a || !*a)
		a = "x86";
	a = arch_alias(a);
	len = strlen(a);
	if (arch_dir(srctree, a, len))
		return xstrdup(a);
	while (len && a[len - 1] >= '0' && a[len - 1] <= '9')
		len--;
	if (len && len < strlen(a) && arch_dir(srctree, a, len))
		return xstrndup(a, len);
	return xstrdup(a);
}

/* Every symbol's dependency names, in one array. */
static void build_names(struct kctree *t)
{
	size_t total = 0, k = 0;

	for (size_t i = 0; i < t->n; i++)
		total += t->v[i]->deps.n;
	t->pool = xcalloc(total ? total : 1, sizeof(*t->pool));
	for (size_t i = 0; i < t->n; i++) {
		struct ksym *sym = t->v[i];

		sym->names = t->pool + k;
		for (size_t j = 0; j < sym->deps.n; j++)
			t->pool[k++] = sym->deps.v[j]->name;
	}
}

static int load_root(struct kparse *p)
{
	char *path = xasprintf("%s/Kconfig", p->srctree);
	FILE *fp = fopen(path, "r");
	int ret;

	if (!fp)
		ret = perr(p, NULL, "%s: %s", path, strerror(errno));
	else
		ret = parse_file(p, NULL, "Kconfig", fp);
	free(path);
	if (!ret && p->nblk) {
		const struct kblock *b = &p->blk[p->nblk - 1];

		ret = perr(p, NULL, "%s:%u: %s without end%s", b->file,
			   b->line, block_name[b->type], block_name[b->type]);
	}
	return ret;
}

struct kctree *kctree_load(const char *srctree, const char *srcarch,
			   char *why, size_t whylen)
{
	struct kctree *t = xcalloc(1, sizeof(*t));
	struct kparse p = {
		.t = t,
		.srctree = srctree,
		.arch = resolve_arch(srctree, srcarch),
		.why = why,
		.whylen = whylen,
	};
	int ret;

	strmap_init(&t->syms);
	sbuf_init(&p.scratch);
	ret = load_root(&p);
	for (size_t i = 0; i < p.nblk; i++)
		block_free(&p.blk[i]);
	free(p.blk);
	free(p.arch);
	sbuf_free(&p.scratch);
	if (ret) {
		kctree_free(t);
		return NULL;
	}
	build_names(t);
	return t;
}

void kctree_free(struct kctree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i]->deps.v);
		free(t->v[i]->name);
		free(t->v[i]);
	}
	free(t->v);
	free(t->pool);
	strmap_free(&t->syms, NULL);
	free(t);
}

size_t kctree_count(const struct kctree *t)
{
	return t->defined;
}

size_t kctree_files(const struct kctree *t)
{
	return t->files;
}

bool kctree_has(const struct kctree *t, const char *name)
{
	const struct ksym *sym = lookup(t, name);

	return sym && sym->defined;
}

size_t kctree_deps(const struct kctree *t, const char *name,
		   const char *const **deps)
{
	const struct ksym *sym = lookup(t, name);

	if (!sym || !sym->defined) {
		*deps = NULL;
		return 0;
	}
	*deps = sym->names;
	return sym->deps.n;
}

/* ---- ordering ---- */

/*
 * The list's own graph: a node per symbol in the list (at its first
 * place), an edge to every list symbol it reaches through symbols that
 * are not in the list, the edges of a node sorted by place. A depth-first
 * walk of it, roots and edges in list order, emits each node after what
 * it reaches: a name moves only earlier, just before the first one that
 * needs it, and names that move together keep their order.
 */
struct kframe {
	size_t node;		/* a place */
	size_t edge;		/* the next of its edges to follow */
};

struct korder {
	const struct kctree *t;
	char **names, **out;
	size_t n, k;
	const struct ksym **of;	/* per place: its symbol, or NULL */
	size_t *head;		/* per symbol: its first place + 1 */
	size_t *next;		/* per place: its symbol's next place + 1 */
	size_t *mark;		/* per symbol: the last walk that met it */
	const struct ksym **todo;	/* per symbol: a walk's stack */
	size_t *edge_at;	/* per place: where its edges start in edges */
	size_t *edges;		/* places */
	size_t nedges, capedges;
	unsigned char *state;	/* per place */
};

enum { UNSEEN, ON_STACK, DONE };

static void add_edge(struct korder *o, size_t to)
{
	if (o->nedges == o->capedges) {
		o->capedges = o->capedges ? o->capedges * 2 : 256;
		o->edges = xrealloc(o->edges, o->capedges * sizeof(*o->edges));
	}
	o->edges[o->nedges++] = to;
}

static int by_place(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The edges of the node at place i, whose symbol is sym. */
static void node_edges(struct korder *o, size_t i, const struct ksym *sym)
{
	size_t top = 0;

	o->edge_at[i] = o->nedges;
	o->mark[sym->idx] = i + 1;
	o->todo[top++] = sym;
	while (top) {
		const struct ksym *x = o->todo[--top];

		for (size_t j = 0; j < x->deps.n; j++) {
			const struct ksym *d = x->deps.v[j];

			if (o->mark[d->idx] == i + 1)
				continue;
			o->mark[d->idx] = i + 1;
			if (o->head[d->idx])
				add_edge(o, o->head[d->idx] - 1);
			else
				o->todo[top++] = d;
		}
	}
	if (o->nedges - o->edge_at[i] > 1)
		qsort(o->edges + o->edge_at[i], o->nedges - o->edge_at[i],
		      sizeof(*o->edges), by_place);
}

static void emit(struct korder *o, size_t i)
{
	for (size_t pos = i + 1; pos; pos = o->next[pos - 1])
		o->out[o->k++] = o->names[pos - 1];
}

/* Depth first from the node at place i, each node after its edges. */
static void visit(struct korder *o, size_t i, struct kframe *stack)
{
	size_t top = 0;

	o->state[i] = ON_STACK;
	stack[top++] = (struct kframe){ i, o->edge_at[i] };
	while (top) {
		struct kframe *fr = &stack[top - 1];
		size_t d;

		if (fr->edge == o->edge_at[fr->node + 1]) {
			o->state[fr->node] = DONE;
			emit(o, fr->node);
			top--;
			continue;
		}
		d = o->edges[fr->edge++];
		if (o->state[d] != UNSEEN)
			continue;	/* done, or a cycle: broken here */
		o->state[d] = ON_STACK;
		stack[top++] = (struct kframe){ d, o->edge_at[d] };
	}
}

static void order_init(struct korder *o, const struct kctree *t,
		       char **names, size_t n)
{
	size_t ns = t->n ? t->n : 1;

	*o = (struct korder){ .t = t, .names = names, .n = n };
	o->of = xcalloc(n, sizeof(*o->of));
	o->out = xcalloc(n, sizeof(*o->out));
	o->next = xcalloc(n, sizeof(*o->next));
	o->edge_at = xcalloc(n + 1, sizeof(*o->edge_at));
	o->state = xcalloc(n, sizeof(*o->state));
	o->head = xcalloc(ns, sizeof(*o->head));
	o->mark = xcalloc(ns, sizeof(*o->mark));
	o->todo = xcalloc(ns, sizeof(*o->todo));
	for (size_t i = n; i-- > 0; ) {
		o->of[i] = lookup(t, names[i]);
		if (o->of[i]) {
			o->next[i] = o->head[o->of[i]->idx];
			o->head[o->of[i]->idx] = i + 1;
		}
	}
}

static void order_free(struct korder *o)
{
	free(o->of);
	free(o->out);
	free(o->next);
	free(o->edge_at);
	free(o->state);
	free(o->head);
	free(o->mark);
	free(o->todo);
	free(o->edges);
}

/* The first place of a symbol in the list: a node of the list's graph. */
static bool node(const struct korder *o, size_t i)
{
	return o->of[i] && o->head[o->of[i]->idx] == i + 1;
}

void kctree_order(const struct kctree *t, char **names, size_t n)
{
	struct kframe *stack;
	struct korder o;

	if (!n)
		return;
	order_init(&o, t, names, n);
	for (size_t i = 0; i < n; i++) {
		if (node(&o, i))
			node_edges(&o, i, o.of[i]);
		else
			o.edge_at[i] = o.nedges;
	}
	o.edge_at[n] = o.nedges;
	stack = xcalloc(n, sizeof(*stack));
	for (size_t i = 0; i < n; i++) {
		if (!o.of[i])
			o.out[o.k++] = names[i];
		else if (node(&o, i) && o.state[i] == UNSEEN)
			visit(&o, i, stack);
	}
	memcpy(names, o.out, n * sizeof(*names));
	free(stack);
	order_free(&o);
}

/* ---- the arch of a .config ---- */

static size_t span(const char *s, bool space)
{
	size_t i = 0;

	while (s[i] && s[i] != '\n' &&
	       (strchr(" \t\r\f\v", s[i]) != NULL) == space)
		i++;
	return i;
}

/* "Linux/ARCH VERSION Kernel Configuration" at s: ARCH's length, or 0. */
static size_t header_arch(const char *s)
{
	static const bool blank[] = { true, false, true };
	size_t alen = span(s, false), i = alen;

	if (!alen)
		return 0;
	for (size_t k = 0; k < sizeof(blank) / sizeof(blank[0]); k++) {
		size_t n = span(s + i, blank[k]);

		if (!n)
			return 0;
		i += n;
	}
	return strncmp(s + i, "Kernel Configuration", 20) ? 0 : alen;
}

/* Arch directories, of 6.1 and before: their names are kept whole. */
static const char *const arch_dirs[] = {
	"alpha", "arc", "arm", "arm64", "avr32", "blackfin", "c6x", "cris",
	"csky", "frv", "h8300", "hexagon", "ia64", "loongarch", "m32r",
	"m68k", "metag", "microblaze", "mips", "mn10300", "nds32", "nios2",
	"openrisc", "parisc", "powerpc", "riscv", "s390", "score", "sh",
	"sparc", "tile", "um", "unicore32", "x86", "xtensa",
};

char *kctree_arch_from_config(const char *config_text)
{
	const char *s = config_text;
	size_t len = 0;
	char *arch;

	while ((s = strstr(s, "Linux/"))) {
		s += 6;
		len = header_arch(s);
		if (len)
			break;
	}
	if (!s)
		return NULL;
	arch = xstrndup(s, len);
	if (strcmp(arch_alias(arch), arch)) {
		char *a = xstrdup(arch_alias(arch));

		free(arch);
		return a;
	}
	for (size_t i = 0; i < sizeof(arch_dirs) / sizeof(arch_dirs[0]); i++)
		if (!strcmp(arch, arch_dirs[i]))
			return arch;
	while (len > 1 && arch[len - 1] >= '0' && arch[len - 1] <= '9')
		arch[--len] = '\0';
	return arch;
}
