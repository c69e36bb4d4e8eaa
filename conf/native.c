// SPDX-License-Identifier: GPL-2.0-only
/*
 * The native config format (doc/ktest-native.5), read with libconfuse into
 * the same model as ktest.conf.
 *
 * libconfuse 3.3 has habits we must not pass on to our users (measured, see
 * shared/libraries.md): its lexer expands ${VAR} from the environment, it
 * counts a comment line two or three times, it accepts a section left open
 * at the end of the file, and it silently keeps the last of two equal
 * options. So every file first goes through our own pass over the text
 * (scan_text), which
 *   - refuses what is not text (NUL bytes, bare CRs, huge lines),
 *   - blanks the comments out, keeping the newlines, so the line numbers
 *     libconfuse reports are the real ones,
 *   - escapes every ${ the lexer would expand (and quotes bare words that
 *     hold one), so ${...} reaches us as written,
 *   - matches the braces, and
 *   - notes an outline of the file: the line of every option and section.
 * libconfuse then parses the cleaned text, and its cfg_t is walked together
 * with the outline, which gives every value its real file:line.
 *
 * libconfuse keeps its parser state in globals: one file is parsed at a
 * time, converted and freed before its include()s are read.
 */
#include "native.h"
#include "text.h"

#include <confuse.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define NATIVE_MAX_LINE (64 * 1024)
#define NATIVE_MAX_FILE (16 * 1024 * 1024)
#define NATIVE_MAX_DEPTH 32
#define NATIVE_MAX_ITERATE 100000
#define NATIVE_MAX_TESTS 1000000

/*
 * At the top level, the option TEST (the test command) and the test
 * sections have one name, and libconfuse refuses two options of one name.
 * The scan renames the option, in "test = ..." at the top level only, to
 * this. No file can spell it: raw control characters are refused.
 */
#define TEST_ALIAS "test\001"

/*
 * "\${" in double quotes is a ${ we keep exactly as written (no ${env:...},
 * no upper-casing). The scan hands it to libconfuse as "$\001{", so that
 * we can tell it from a plain ${ in the parsed string.
 */
#define KEEP_MARK '\001'

/* ---- the outline of a file, noted by the scan ---- */

struct okey {			/* one "name = value" */
	char *name;
	int line;
	bool append;		/* += */
};

struct osec {			/* one section, or the file itself */
	char *name;
	char *title;		/* as written, or NULL */
	int line;
	struct osec *up;
	struct okey *keys;
	size_t nkeys;
	struct osec **kids;
	size_t nkids;
	int *calls;		/* the lines of its function calls */
	size_t ncalls;
};

/* ---- what the files say, before it goes into the model ---- */

struct nval {
	char *key;		/* upper-case option name, or a variable */
	char *value;
	struct korigin at;
};

struct nvals {
	struct nval *v;
	size_t n;
};

struct nbox {
	char *title;
	struct korigin at;
	struct nvals opts;
};

struct ntest {
	char *title;		/* as written, for messages */
	char *name;		/* the title as a TEST_NAME value */
	struct korigin at;
	struct nvals opts;
	struct nvals vars;
	struct nvals edits;	/* key: option or variable; value: expr */
	char *box;
	struct korigin box_at;
	int iterate;		/* 0: not given */
	bool named;		/* sets test_name itself */
};

struct nreader {		/* shared by a file and those it includes */
	struct kconfig *c;
	struct kdiag *d;
	struct ntest **tests;	/* every file's, in reading order */
	size_t ntests;
	struct nbox **boxes;
	size_t nboxes;
	char *default_box;
	struct korigin default_box_at;
	struct strmap titles;	/* test title -> its struct ntest */
	struct strmap stack;	/* real paths of the files being read */
	int depth;
};

struct ninclude {		/* an include() met while parsing */
	char *file;
	int line;
	size_t pos;		/* how many tests of the file come before it */
};

struct nfile {			/* one file being read */
	struct nreader *r;
	const char *name;	/* as shown in messages (interned) */
	const char *path;	/* its include()s are relative to this */
	struct osec *outline;
	struct ninclude *incs;
	size_t nincs;
	size_t ncalls;		/* function calls met by libconfuse so far */
	struct ntest **tests;	/* its own tests, in file order */
	size_t ntests;
};

/* libconfuse's callbacks have no context pointer; its parser is global too */
static struct nfile *parsing;

/* ---- small helpers ---- */

static struct korigin at_line(const struct nfile *f, int line)
{
	return (struct korigin){ f->name, line };
}

static void nvals_add(struct nvals *vs, const char *key, char *value,
		      const struct korigin *at)
{
	vs->v = xrealloc(vs->v, (vs->n + 1) * sizeof(*vs->v));
	vs->v[vs->n].key = xstrdup(key);
	vs->v[vs->n].value = value;
	vs->v[vs->n].at = *at;
	vs->n++;
}

static const struct nval *nvals_find(const struct nvals *vs, const char *key)
{
	for (size_t i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].key, key))
			return &vs->v[i];
	return NULL;
}

static void nvals_free(struct nvals *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->v[i].key);
		free(vs->v[i].value);
	}
	free(vs->v);
}

static void ntest_free(struct ntest *t)
{
	if (!t)
		return;
	free(t->title);
	free(t->name);
	nvals_free(&t->opts);
	nvals_free(&t->vars);
	nvals_free(&t->edits);
	free(t->box);
	free(t);
}

static void nbox_free(struct nbox *b)
{
	free(b->title);
	nvals_free(&b->opts);
	free(b);
}

/* The option a native (lower-case) name stands for, or NULL. */
static const struct kopt_desc *option_of(const char *lname)
{
	const struct kopt_desc *d = kopt_find_any_case(lname);

	return d && !strcmp(kopt_lname(d), lname) ? d : NULL;
}

/* ---- the text: what is not text is refused before anything else ---- */

/* A NUL-terminated copy with LF line ends, or NULL after an error. */
static char *clean_text(struct nfile *f, const char *buf, size_t len)
{
	struct kdiag *d = f->r->d;
	struct korigin o = at_line(f, 1);
	struct sbuf b;
	size_t col = 0;

	sbuf_init(&b);
	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (ch == '\0') {
			kdiag_error(d, &o, "NUL byte in the line: this is not a text file");
			goto fail;
		}
		if (ch == '\r') {
			if (i + 1 < len && buf[i + 1] == '\n')
				continue;	/* CRLF */
			kdiag_error(d, &o,
				    "carriage return inside the line (old Mac line endings?)");
			kdiag_note(d, "convert the file to Unix line endings");
			goto fail;
		}
		if (ch == '\n') {
			o.line++;
			col = 0;
		} else if (++col > NATIVE_MAX_LINE) {
			kdiag_error(d, &o, "line longer than %d bytes",
				    NATIVE_MAX_LINE);
			kdiag_note(d, "is this really a ktest config file?");
			goto fail;
		}
		sbuf_addc(&b, ch);
	}
	return sbuf_detach(&b);
fail:
	sbuf_free(&b);
	return NULL;
}

/* ---- the scan: comments out, ${ escaped, braces matched, outline ---- */

enum tok { T_WORD, T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN, T_EQ, T_PLUSEQ,
	   T_COMMA };

/* where the scan is in libconfuse's grammar */
enum sstate {
	S_STMT,		/* expects an option name or '}' */
	S_NAME,		/* after a name: '=', '+=', a title, '{' or '(' */
	S_VALUE,	/* after '=': a value or a list */
	S_LIST,		/* inside { ... } after '=' */
	S_TITLE,	/* after a section title: '{' */
	S_FUNC,		/* after a function's '(' */
	S_ARG,		/* after an argument */
	S_COMMA,	/* after a ',' between arguments */
};

struct brace {
	int line;
	struct osec *sec;	/* the section it opens; NULL for a list */
};

struct scan {
	struct nfile *f;
	const char *p;
	int line;
	struct sbuf out;	/* what libconfuse reads */
	struct osec *cur;
	enum sstate st;
	char *word;		/* the last word's text */
	int word_line;
	size_t word_end;	/* where its text ends in out */
	char *name;		/* the pending option or section name */
	int name_line;
	size_t name_end;
	struct brace *braces;
	size_t nbraces;
};

static void scan_error(struct scan *s, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void scan_error(struct scan *s, int line, const char *fmt, ...)
{
	struct korigin o = at_line(s->f, line);
	va_list ap;

	va_start(ap, fmt);
	kdiag_verror(s->f->r->d, &o, fmt, ap);
	va_end(ap);
}

static struct osec *osec_new(struct osec *up, const char *name, int line)
{
	struct osec *sec = xcalloc(1, sizeof(*sec));

	sec->name = xstrdup(name);
	sec->line = line;
	sec->up = up;
	if (up) {
		up->kids = xrealloc(up->kids, (up->nkids + 1) * sizeof(*up->kids));
		up->kids[up->nkids++] = sec;
	}
	return sec;
}

static void osec_free(struct osec *sec)
{
	if (!sec)
		return;
	for (size_t i = 0; i < sec->nkeys; i++)
		free(sec->keys[i].name);
	free(sec->keys);
	for (size_t i = 0; i < sec->nkids; i++)
		osec_free(sec->kids[i]);
	free(sec->kids);
	free(sec->calls);
	free(sec->name);
	free(sec->title);
	free(sec);
}

static void osec_add_key(struct osec *sec, const char *name, int line,
			 bool append)
{
	sec->keys = xrealloc(sec->keys, (sec->nkeys + 1) * sizeof(*sec->keys));
	sec->keys[sec->nkeys].name = xstrdup(name);
	sec->keys[sec->nkeys].line = line;
	sec->keys[sec->nkeys].append = append;
	sec->nkeys++;
}

static void osec_add_call(struct osec *sec, int line)
{
	sec->calls = xrealloc(sec->calls, (sec->ncalls + 1) * sizeof(*sec->calls));
	sec->calls[sec->ncalls++] = line;
}

/* Inserts ch into the output at pos (a word already written). */
static void out_insert(struct sbuf *b, size_t pos, char ch)
{
	sbuf_addc(b, ch);
	memmove(b->buf + pos + 1, b->buf + pos, b->len - pos - 1);
	b->buf[pos] = ch;
}

static int open_brace(struct scan *s, int line)
{
	struct osec *sec = NULL;

	if (s->st == S_NAME || s->st == S_TITLE) {
		sec = osec_new(s->cur, s->name, s->name_line);
		if (s->st == S_TITLE)
			sec->title = xstrdup(s->word);
		s->cur = sec;
		s->st = S_STMT;
	} else {
		s->st = s->st == S_VALUE ? S_LIST : S_STMT;
	}
	s->braces = xrealloc(s->braces, (s->nbraces + 1) * sizeof(*s->braces));
	s->braces[s->nbraces].line = line;
	s->braces[s->nbraces].sec = sec;
	s->nbraces++;
	return 0;
}

static int close_brace(struct scan *s, int line)
{
	struct brace *b;

	if (!s->nbraces) {
		scan_error(s, line, "'}' without a section or list to close");
		return -1;
	}
	b = &s->braces[--s->nbraces];
	if (b->sec)
		s->cur = b->sec->up;
	s->st = S_STMT;
	return 0;
}

static void set_name(struct scan *s)
{
	free(s->name);
	s->name = xstrdup(s->word);
	s->name_line = s->word_line;
	s->name_end = s->word_end;
}

/*
 * A function call must be well formed before libconfuse sees it: 3.3 leaks
 * the arguments it collected when a call has a syntax error.
 */
static int call_token(struct scan *s, enum tok t, int line)
{
	if (t == T_RPAREN && s->st != S_COMMA) {
		s->st = S_STMT;
		return 0;
	}
	if (t == T_WORD && s->st != S_ARG) {
		s->st = S_ARG;
		return 0;
	}
	if (t == T_COMMA && s->st == S_ARG) {
		s->st = S_COMMA;
		return 0;
	}
	scan_error(s, line, "syntax error in %s(): write %s(\"file\")", s->name,
		   s->name);
	return -1;
}

/* One token, through libconfuse's grammar, as far as the outline needs it. */
static int on_token(struct scan *s, enum tok t, int line)
{
	if (s->st == S_FUNC || s->st == S_ARG || s->st == S_COMMA)
		return call_token(s, t, line);
	if (t == T_LBRACE)
		return open_brace(s, line);
	if (t == T_RBRACE)
		return close_brace(s, line);
	switch (s->st) {
	case S_STMT:
		if (t == T_WORD) {
			set_name(s);
			s->st = S_NAME;
		}
		break;
	case S_NAME:
		if (t == T_EQ || t == T_PLUSEQ) {
			osec_add_key(s->cur, s->name, s->name_line,
				     t == T_PLUSEQ);
			/* the option TEST at the top level: see TEST_ALIAS */
			if (!s->cur->up && !strcmp(s->name, "test"))
				out_insert(&s->out, s->name_end, '\001');
			s->st = S_VALUE;
		} else if (t == T_WORD) {
			s->st = S_TITLE;
		} else if (t == T_LPAREN) {
			osec_add_call(s->cur, s->name_line);
			s->st = S_FUNC;
		} else {
			s->st = S_STMT;
		}
		break;
	case S_VALUE:
	case S_TITLE:
		s->st = S_STMT;
		break;
	default:
		break;
	}
	return 0;
}

static void set_word(struct scan *s, const char *text, size_t n, int line)
{
	free(s->word);
	s->word = xstrndup(text, n);
	s->word_line = line;
}

/* "\0", "\00", "\x0": libconfuse would end the string there, silently */
static bool nul_escape(const char *p)
{
	unsigned int v = 0;
	int n = 0;

	if (p[1] == 'x') {
		for (p += 2; n < 2 && isxdigit((unsigned char)*p); p++, n++)
			v = v * 16 + (unsigned int)(isdigit((unsigned char)*p) ?
				*p - '0' : tolower((unsigned char)*p) - 'a' + 10);
		return n && !v;
	}
	for (p++; n < 3 && *p >= '0' && *p <= '7'; p++, n++)
		v = v * 8 + (unsigned int)(*p - '0');
	return n && !v;
}

static int check_char(struct scan *s, char ch)
{
	if ((unsigned char)ch < 0x20 && ch != '\t' && ch != '\n') {
		scan_error(s, s->line, "control character 0x%02x in the file",
			   (unsigned char)ch);
		return -1;
	}
	return 0;
}

/* "...": a ${ gets a backslash, so that the lexer leaves it to us */
static int scan_dq(struct scan *s)
{
	const char *p = s->p + 1, *start = p;
	int line = s->line;

	sbuf_addc(&s->out, '"');
	for (;;) {
		if (!*p) {
			scan_error(s, line, "string not closed: '\"' missing");
			return -1;
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			if (!p[1]) {
				p++;
				continue;
			}
			if (nul_escape(p)) {
				scan_error(s, s->line, "NUL character in a string");
				return -1;
			}
			if (p[1] == '$' && p[2] == '{') {
				sbuf_adds(&s->out, "\\$\001");
				p += 2;
				continue;
			}
			if (p[1] == '\n')
				s->line++;
			else if (check_char(s, p[1]))
				return -1;
			sbuf_addn(&s->out, p, 2);
			p += 2;
			continue;
		}
		if (*p == '$' && p[1] == '{')
			sbuf_addc(&s->out, '\\');
		if (*p == '\n')
			s->line++;
		else if (check_char(s, *p))
			return -1;
		sbuf_addc(&s->out, *p++);
	}
	set_word(s, start, (size_t)(p - start), line);
	s->word_end = s->out.len;
	sbuf_addc(&s->out, '"');
	s->p = p + 1;
	return on_token(s, T_WORD, line);
}

/* '...': the lexer expands nothing here; only \\ and \' are escapes */
static int scan_sq(struct scan *s)
{
	const char *p = s->p + 1, *start = p;
	int line = s->line;

	for (;;) {
		if (!*p) {
			scan_error(s, line, "string not closed: \"'\" missing");
			return -1;
		}
		if (*p == '\'')
			break;
		if (*p == '\\' && (p[1] == '\\' || p[1] == '\'')) {
			p += 2;
			continue;
		}
		if (*p == '\n')
			s->line++;
		else if (check_char(s, *p))
			return -1;
		p++;
	}
	sbuf_addn(&s->out, s->p, (size_t)(p - s->p));
	set_word(s, start, (size_t)(p - start), line);
	s->word_end = s->out.len;
	sbuf_addc(&s->out, '\'');
	s->p = p + 1;
	return on_token(s, T_WORD, line);
}

/* a character of an unquoted word, as libconfuse's lexer has it */
static bool bare_char(const char *p)
{
	if ((unsigned char)*p <= ' ' || strchr("#\"'={}()+,*", *p))
		return false;
	return !(p[0] == '/' && p[1] == '*');
}

/*
 * An unquoted word. libconfuse would end it at a ${ and expand that from
 * the environment: a word holding a ${...} goes out in double quotes.
 */
static int scan_bare(struct scan *s)
{
	const char *p = s->p, *q;
	bool quote = false;

	while (*p) {
		if (p[0] == '$' && p[1] == '{') {
			for (q = p + 2; *q && *q != '}' && *q != '\n'; q++)
				;
			if (*q != '}') {
				scan_error(s, s->line, "'${' without a closing '}'");
				return -1;
			}
			p = q + 1;
			quote = true;
			continue;
		}
		if (!bare_char(p))
			break;
		p++;
	}
	set_word(s, s->p, (size_t)(p - s->p), s->line);
	if (quote) {
		sbuf_addc(&s->out, '"');
		for (q = s->p; q < p; q++) {
			if (*q == '\\' || *q == '"' || (q[0] == '$' && q[1] == '{'))
				sbuf_addc(&s->out, '\\');
			sbuf_addc(&s->out, *q);
		}
		s->word_end = s->out.len;
		sbuf_addc(&s->out, '"');
	} else {
		sbuf_addn(&s->out, s->p, (size_t)(p - s->p));
		s->word_end = s->out.len;
	}
	s->p = p;
	return on_token(s, T_WORD, s->line);
}

/* / * ... * /: blanked, newlines kept */
static int scan_block_comment(struct scan *s)
{
	const char *p = s->p + 2;
	int line = s->line;

	while (*p && !(p[0] == '*' && p[1] == '/')) {
		if (*p == '\n') {
			s->line++;
			sbuf_addc(&s->out, '\n');
		}
		p++;
	}
	if (!*p) {
		scan_error(s, line, "comment not closed: '*/' missing");
		return -1;
	}
	s->p = p + 2;
	return 0;
}

static int scan_punct(struct scan *s)
{
	static const char chars[] = "{}()=,";
	static const enum tok toks[] = { T_LBRACE, T_RBRACE, T_LPAREN,
					 T_RPAREN, T_EQ, T_COMMA };
	const char *c = strchr(chars, *s->p);

	if (*s->p == '+') {
		if (s->p[1] != '=') {
			scan_error(s, s->line, "unexpected '+': put the value in quotes");
			return -1;
		}
		sbuf_adds(&s->out, "+=");
		s->p += 2;
		return on_token(s, T_PLUSEQ, s->line);
	}
	sbuf_addc(&s->out, *s->p++);
	return on_token(s, toks[c - chars], s->line);
}

static int scan_one(struct scan *s)
{
	const char *p = s->p;

	if (*p == '\n') {
		s->line++;
		sbuf_addc(&s->out, '\n');
		s->p++;
		return 0;
	}
	if (*p == ' ' || *p == '\t') {
		sbuf_addc(&s->out, *s->p++);
		return 0;
	}
	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		s->p += strcspn(p, "\n");
		return 0;
	}
	if (p[0] == '/' && p[1] == '*')
		return scan_block_comment(s);
	if (strchr("{}()=,+", *p))
		return scan_punct(s);
	if (*p == '"')
		return scan_dq(s);
	if (*p == '\'')
		return scan_sq(s);
	if (*p == '*') {
		scan_error(s, s->line, "unexpected '*': put the value in quotes");
		return -1;
	}
	if (check_char(s, *p))
		return -1;
	return scan_bare(s);
}

static int scan_text(struct scan *s)
{
	while (*s->p)
		if (scan_one(s))
			return -1;
	if (s->st == S_FUNC || s->st == S_ARG || s->st == S_COMMA) {
		scan_error(s, s->name_line, "%s( is not closed: ')' missing",
			   s->name);
		return -1;
	}
	if (s->nbraces) {
		const struct brace *b = &s->braces[s->nbraces - 1];

		if (b->sec)
			scan_error(s, b->line, "section '%s' is not closed: '}' missing",
				   b->sec->name);
		else
			scan_error(s, b->line, "'{' is not closed: '}' missing");
		return -1;
	}
	return 0;
}

/* ---- the same option twice in one section ---- */

static void dup_keys(struct nfile *f, const struct osec *sec,
		     struct strmap *seen)
{
	for (size_t i = 0; i < sec->nkeys; i++) {
		const struct okey *k = &sec->keys[i];
		void *first = strmap_get(seen, k->name);
		struct korigin o = at_line(f, k->line);

		if (!first) {
			strmap_put(seen, k->name, (void *)(uintptr_t)k->line);
		} else if (!k->append) {
			/* libconfuse would silently keep this one */
			kdiag_error(f->r->d, &o,
				    "'%s' is set twice in this section (first at line %d)",
				    k->name, (int)(uintptr_t)first);
		}
	}
}

static void check_dups(struct nfile *f, const struct osec *sec)
{
	struct strmap seen, vars;

	strmap_init(&seen);
	strmap_init(&vars);
	dup_keys(f, sec, &seen);
	for (size_t i = 0; i < sec->nkids; i++) {
		/* libconfuse merges the vars blocks of a section */
		if (!strcmp(sec->kids[i]->name, "vars"))
			dup_keys(f, sec->kids[i], &vars);
		else
			check_dups(f, sec->kids[i]);
	}
	strmap_free(&seen, NULL);
	strmap_free(&vars, NULL);
}

/* ---- libconfuse: schema, callbacks, messages ---- */

static cfg_opt_t *opts_new(size_t extra, bool root)
{
	cfg_opt_t *o = xcalloc(KOPT__COUNT + extra + 1, sizeof(*o));

	for (size_t k = 0; k < KOPT__COUNT; k++) {
		const char *name = root && k == KOPT_TEST ? TEST_ALIAS :
				   kopt_lname(&kopt_table[k]);
		cfg_opt_t opt = CFG_STR(name, NULL, CFGF_NODEFAULT);

		o[k] = opt;
	}
	return o;
}

static void opts_end(cfg_opt_t *o, size_t n)
{
	cfg_opt_t end = CFG_END();

	o[n] = end;
}

static int on_include(cfg_t *cfg, cfg_opt_t *opt, int argc, const char **argv);

/*
 * Every option is allowed everywhere as far as libconfuse is concerned, so
 * that we can say where a misplaced one belongs instead of "no such option".
 * cfg_init copies the whole tree.
 */
static cfg_t *new_cfg(void)
{
	cfg_opt_t *vars = xcalloc(1, sizeof(*vars));
	cfg_opt_t *edit = xcalloc(2, sizeof(*edit));
	cfg_opt_t *box = opts_new(0, false);
	cfg_opt_t *test = opts_new(4, false);
	cfg_opt_t *root = opts_new(6, true);
	size_t n = KOPT__COUNT;
	cfg_opt_t expr = CFG_STR_LIST("expr", NULL, CFGF_NODEFAULT);
	cfg_opt_t s_vars = CFG_SEC("vars", vars, CFGF_KEYSTRVAL);
	cfg_opt_t s_edit = CFG_SEC("edit", edit, CFGF_MULTI | CFGF_TITLE |
				   CFGF_NO_TITLE_DUPES);
	cfg_opt_t s_box = CFG_SEC("box", box, CFGF_MULTI | CFGF_TITLE |
				  CFGF_NO_TITLE_DUPES);
	cfg_opt_t s_test = CFG_SEC("test", test, CFGF_MULTI | CFGF_TITLE |
				   CFGF_NO_TITLE_DUPES);
	cfg_opt_t o_box = CFG_STR("box", NULL, CFGF_NODEFAULT);
	cfg_opt_t o_iter = CFG_STR("iterate", NULL, CFGF_NODEFAULT);
	cfg_opt_t o_dbox = CFG_STR("default_box", NULL, CFGF_NODEFAULT);
	cfg_opt_t f_inc = CFG_FUNC("include", on_include);
	cfg_t *cfg;

	opts_end(vars, 0);
	edit[0] = expr;
	opts_end(edit, 1);
	opts_end(box, n);
	test[n] = o_box;
	test[n + 1] = o_iter;
	test[n + 2] = s_vars;
	test[n + 3] = s_edit;
	opts_end(test, n + 4);
	root[n] = o_dbox;
	root[n + 1] = s_vars;
	root[n + 2] = s_edit;
	root[n + 3] = s_box;
	root[n + 4] = s_test;
	root[n + 5] = f_inc;
	opts_end(root, n + 6);
	cfg = cfg_init(root, CFGF_NONE);
	free(vars);
	free(edit);
	free(box);
	free(test);
	free(root);
	return cfg;
}

static const char *where_name(const char *section)
{
	if (!strcmp(section, "test"))
		return "a test section";
	if (!strcmp(section, "box"))
		return "a box section";
	if (!strcmp(section, "edit"))
		return "an edit section";
	return "the top level";
}

/* what to say about an unknown name: where it belongs, or what was meant */
static void unknown_note(struct kdiag *d, const char *section, const char *name)
{
	static const struct { const char *name, *where; } places[] = {
		{ "include", "include(\"file\") is only allowed at the top level" },
		{ "default_box", "default_box is set at the top level" },
		{ "box", "box sections are at the top level; a test names its box with box = \"name\"" },
		{ "test", "test sections are at the top level" },
		{ "iterate", "iterate = N goes in a test section" },
		{ "vars", "vars { } goes at the top level or in a test section" },
		{ "edit", "edit \"option\" { } goes at the top level or in a test section" },
		{ "expr", "expr goes in an edit \"option\" { } section" },
	};
	char upper[256];
	const struct kopt_desc *k;
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		if (!strcmp(name, places[i].name)) {
			kdiag_note(d, "%s", places[i].where);
			return;
		}
	}
	if (strchr(name, '[')) {
		kdiag_note(d, "a value for one test goes in that test's section");
		return;
	}
	k = kopt_find_any_case(name);
	if (k) {
		kdiag_note(d, "option names are lower case: did you mean '%s'?",
			   kopt_lname(k));
		return;
	}
	for (i = 0; name[i] && i < sizeof(upper) - 1; i++)
		upper[i] = (char)toupper((unsigned char)name[i]);
	upper[i] = '\0';
	s = kopt_suggest(upper);
	if (s) {
		kdiag_note(d, "did you mean '%s'?", kopt_lname(kopt_find(s)));
		return;
	}
	if (strcmp(section, "box") && strcmp(section, "edit"))
		kdiag_note(d, "a value of your own (for ${%s}) goes in a vars { } block",
			   name);
}

/* drops the TEST_ALIAS marker from a message */
static void unalias(char *msg)
{
	char *p;

	while ((p = strchr(msg, '\001')))
		memmove(p, p + 1, strlen(p));
}

/* another option set on the line where name is (a value cut short?) */
static const struct okey *key_before(const struct osec *sec, int line,
				     const char *name)
{
	for (size_t i = 0; i < sec->nkeys; i++)
		if (sec->keys[i].line == line && strcmp(sec->keys[i].name, name))
			return &sec->keys[i];
	for (size_t i = 0; i < sec->nkids; i++) {
		const struct okey *k = key_before(sec->kids[i], line, name);

		if (k)
			return k;
	}
	return NULL;
}

/* the first section of that title before the line (titles as written) */
static const struct osec *find_title(const struct osec *sec, const char *title,
				     int line)
{
	for (size_t i = 0; i < sec->nkids; i++) {
		const struct osec *k = sec->kids[i], *found;

		if (k->line < line && k->title && !strcmp(k->title, title))
			return k;
		found = find_title(k, title, line);
		if (found)
			return found;
	}
	return NULL;
}

static void duplicate_title(struct nfile *f, cfg_t *cfg, const char *title)
{
	struct korigin o = at_line(f, cfg->line);
	const struct osec *first = find_title(f->outline, title, cfg->line);

	if (first) {
		kdiag_error(f->r->d, &o, "%s '%s' is defined twice (first at line %d)",
			    first->name, title, first->line);
	} else {
		kdiag_error(f->r->d, &o, "'%s' is defined twice", title);
		kdiag_note(f->r->d, "test, box and edit titles must be unique");
	}
}

static void on_cfg_error(cfg_t *cfg, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void on_cfg_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	struct nfile *f = parsing;
	struct kdiag *d = f->r->d;
	const char *section = cfg && cfg->name ? cfg->name : "root";
	struct korigin o = at_line(f, cfg ? cfg->line : 0);
	char msg[512], arg[256] = "";
	va_list aq;

	/* every message we treat specially has one string argument */
	if (strstr(fmt, "'%s'")) {
		va_copy(aq, ap);
		snprintf(arg, sizeof(arg), "%s", va_arg(aq, const char *));
		va_end(aq);
		unalias(arg);
	}
	if (!strcmp(fmt, "no such option '%s'")) {
		const struct okey *before;

		/* a vars block creates each key after failing to find it */
		if (!strcmp(section, "vars"))
			return;
		if (strcmp(section, "root"))
			kdiag_error(d, &o, "unknown option '%s' in %s", arg,
				    where_name(section));
		else
			kdiag_error(d, &o, "unknown option '%s'", arg);
		/* "build_options = -j8 V=1": the value was cut at the blank */
		before = key_before(f->outline, o.line, arg);
		if (before)
			kdiag_note(d, "a value with blanks needs quotes: %s = \"... %s...\"",
				   before->name, arg);
		else
			unknown_note(d, section, arg);
		return;
	}
	if (!strcmp(fmt, "found duplicate title '%s'")) {
		duplicate_title(f, cfg, arg);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	unalias(msg);
	kdiag_error(d, &o, "%s", msg);
	if (!strcmp(fmt, "missing title for section '%s'"))
		kdiag_note(d, "write %s \"name\" { ... }%s", arg,
			   strcmp(arg, "box") ? "" :
			   "; a test picks its box with box = \"name\"");
	else if (!strncmp(fmt, "unexpected token", 16))
		kdiag_note(d, "a line is name = \"value\", a section name \"title\" { ... }, or include(\"file\")");
}

static int on_include(cfg_t *cfg, cfg_opt_t *opt, int argc, const char **argv)
{
	struct nfile *f = parsing;
	struct korigin o = at_line(f, cfg->line);
	struct ninclude *inc;

	/* the scan saw the same calls, in the same order, with their lines */
	if (f->ncalls < f->outline->ncalls)
		o.line = f->outline->calls[f->ncalls];
	f->ncalls++;
	if (argc != 1 || !argv[0][0]) {
		kdiag_error(f->r->d, &o, "include() takes one file name");
		return 1;
	}
	f->incs = xrealloc(f->incs, (f->nincs + 1) * sizeof(*f->incs));
	inc = &f->incs[f->nincs++];
	inc->file = xstrdup(argv[0]);
	inc->line = o.line;
	/* included tests go where the include() is */
	inc->pos = cfg_size(cfg, "test");
	return 0;
}

/* ---- values ---- */

static bool check_string(struct nreader *r, const char *s,
			 const struct korigin *o, const char *what)
{
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n' &&
		    !(*p == KEEP_MARK && p > s && p[-1] == '$' && p[1] == '{')) {
			kdiag_error(r->d, o, "%s: control character 0x%02x",
				    what, (unsigned char)*p);
			return false;
		}
	}
	if (!ktext_utf8(s)) {
		kdiag_error(r->d, o, "%s: not valid UTF-8", what);
		kdiag_note(r->d, "re-save the file as UTF-8");
		return false;
	}
	return true;
}

static void mark_used(struct kconfig *c, const char *name, size_t n)
{
	char *key = xstrndup(name, n);

	if (!strmap_has(&c->used, key))
		strmap_put(&c->used, key, NULL);
	free(key);
}

/* ${env:NAME} or ${env:NAME:-default} */
static int env_value(struct nreader *r, const char *ref, size_t n,
		     struct sbuf *out, const struct korigin *o)
{
	char *spec = xstrndup(ref + 4, n - 4);
	char *def = strstr(spec, ":-");
	const char *v;

	if (def) {
		*def = '\0';
		def += 2;
	}
	if (!ktext_word(spec)) {
		kdiag_error(r->d, o, "${%.*s}: '%s' is not an environment variable name",
			    (int)n, ref, spec);
		free(spec);
		return -1;
	}
	v = getenv(spec);
	if (!v && !def) {
		kdiag_error(r->d, o, "environment variable %s is not set", spec);
		kdiag_note(r->d, "write ${env:%s:-default} to give a default", spec);
		free(spec);
		return -1;
	}
	if (v) {
		char *what = xasprintf("environment variable %s", spec);
		bool good = check_string(r, v, o, what);

		free(what);
		if (!good) {
			free(spec);
			return -1;
		}
	}
	sbuf_adds(out, v ? v : def);
	free(spec);
	return 0;
}

/*
 * Every "$\001{" (a \${ of the file) back to "${", wherever it ended up:
 * inside a reference kept as written too, or in an env default.
 */
static char *unmark(struct sbuf *b)
{
	char *s = sbuf_detach(b), *w = s;

	for (const char *p = s; *p; p++) {
		*w++ = *p;
		if (p[0] == '$' && p[1] == KEEP_MARK && p[2] == '{')
			p++;
	}
	*w = '\0';
	return s;
}

/*
 * A value as the model stores it: ${env:...} resolved, ${lower_case_option}
 * upper-cased, the rest as written (the model expands it at run time). As in
 * ktest.pl, a ${ after a backslash is not a reference. NULL after an error.
 */
static char *rewrite(struct nreader *r, const char *raw,
		     const struct korigin *o, bool refs)
{
	struct sbuf b;
	const char *p = raw;

	sbuf_init(&b);
	while (*p) {
		const char *close;
		const struct kopt_desc *d;
		size_t n;

		if (!refs || p[0] != '$' || p[1] != '{' ||
		    (p > raw && p[-1] == '\\') || !(close = strchr(p + 2, '}'))) {
			sbuf_addc(&b, *p++);
			continue;
		}
		n = (size_t)(close - p - 2);
		if (!strncmp(p + 2, "env:", 4)) {
			if (env_value(r, p + 2, n, &b, o)) {
				sbuf_free(&b);
				return NULL;
			}
			p = close + 1;
			continue;
		}
		sbuf_adds(&b, "${");
		d = NULL;
		if (n < 64) {
			char name[64];

			memcpy(name, p + 2, n);
			name[n] = '\0';
			d = option_of(name);
		}
		if (d) {
			sbuf_adds(&b, d->name);
			mark_used(r->c, d->name, strlen(d->name));
		} else {
			sbuf_addn(&b, p + 2, n);
			mark_used(r->c, p + 2, n);
		}
		sbuf_addc(&b, '}');
		p = close + 1;
	}
	return unmark(&b);
}

/* A string value from the file: checked, then rewritten. */
static char *value_of(struct nreader *r, const char *raw,
		      const struct korigin *o, const char *what)
{
	if (!raw)
		raw = "";
	if (!check_string(r, raw, o, what))
		return NULL;
	return rewrite(r, raw, o, true);
}

/* true/yes/on and false/no/off as the model's 1 and 0 */
static char *bool_value(struct nreader *r, const struct kopt_desc *d, char *v,
			const struct korigin *o)
{
	static const char *const words[] = { "true", "yes", "on",
					     "false", "no", "off" };
	long n;

	if (ktext_blank(v) || strstr(v, "${") || kopt_parse_int(v, &n))
		return v;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!strcasecmp(v, words[i])) {
			free(v);
			return xstrdup(i < 3 ? "1" : "0");
		}
	}
	kdiag_error(r->d, o, "%s = '%s' is not a boolean", kopt_lname(d), v);
	kdiag_note(r->d, "write true or false (or yes/no, on/off, 1/0)");
	free(v);
	return NULL;
}

static char *option_value(struct nreader *r, const struct kopt_desc *d,
			  const char *raw, const struct korigin *o)
{
	char *v = value_of(r, raw, o, kopt_lname(d));

	if (v && d->type == KT_BOOL)
		v = bool_value(r, d, v, o);
	return v;
}

/* A default ("NAME") from any file: once only, as in ktest.conf. */
static void store_global(struct nreader *r, const char *key, const char *shown,
			 const char *value, const struct korigin *o)
{
	const struct kval *old = kconfig_lookup(r->c, key);

	if (old) {
		kdiag_error(r->d, o, "'%s' is set twice", shown);
		if (old->origin.file == o->file && old->origin.line == o->line)
			kdiag_note(r->d, "%s is included twice", o->file);
		else if (old->origin.file)
			kdiag_note(r->d, "%s:%d: first set here", old->origin.file,
				   old->origin.line);
		return;
	}
	kconfig_store(r->c, key, value, o);
}

/* ---- walking the parsed file with its outline ---- */

static const struct okey *find_key(const struct osec *sec, const char *name)
{
	for (size_t i = sec->nkeys; i-- > 0; )
		if (!strcmp(sec->keys[i].name, name))
			return &sec->keys[i];
	return NULL;
}

/* the line a variable was set on (libconfuse merged the vars blocks) */
static int var_line(const struct osec *sec, const char *name)
{
	int line = sec->line;

	for (size_t i = 0; i < sec->nkids; i++) {
		const struct okey *k;

		if (strcmp(sec->kids[i]->name, "vars"))
			continue;
		k = find_key(sec->kids[i], name);
		line = k ? k->line : sec->kids[i]->line;
		if (k)
			break;
	}
	return line;
}

/* vars { NAME = "value" }: into the test, or as defaults */
static void walk_vars(struct nfile *f, cfg_t *sec, const struct osec *o,
		      struct ntest *t)
{
	struct nreader *r = f->r;
	cfg_t *vars = cfg_getsec(sec, "vars");
	unsigned int n = vars ? cfg_num(vars) : 0;

	for (unsigned int i = 0; i < n; i++) {
		cfg_opt_t *opt = cfg_getnopt(vars, i);
		const char *name = cfg_opt_name(opt);
		struct korigin at = at_line(f, var_line(o, name));
		char *v;

		if (!ktext_word(name)) {
			kdiag_error(r->d, &at, "'%s' is not a valid variable name", name);
			kdiag_note(r->d, "use letters, digits and _");
			continue;
		}
		if (kopt_find_any_case(name)) {
			kdiag_error(r->d, &at, "'%s' is a ktest option, not a variable",
				    name);
			kdiag_note(r->d, "set it directly: %s = \"...\"",
				   kopt_lname(kopt_find_any_case(name)));
			continue;
		}
		v = value_of(r, cfg_opt_getnstr(opt, 0), &at, name);
		if (!v)
			continue;
		/* other values refer to it as ${NAME}: never "unused" */
		mark_used(r->c, name, strlen(name));
		if (t) {
			nvals_add(&t->vars, name, v, &at);
		} else {
			store_global(r, name, name, v, &at);
			free(v);
		}
	}
}

/* edit "option" { expr = "s/a/b/" }: ktest.conf's OPTION =~ s/a/b/ */
static void walk_edit(struct nfile *f, cfg_t *e, const struct osec *o,
		      struct ntest *t)
{
	struct nreader *r = f->r;
	const char *title = cfg_title(e);
	const struct kopt_desc *d = kopt_find_any_case(title);
	const struct okey *k = find_key(o, "expr");
	struct korigin at = at_line(f, k ? k->line : o->line);
	unsigned int n = cfg_size(e, "expr");

	if (!d && !ktext_word(title)) {
		kdiag_error(r->d, &at, "edit \"%s\": not an option or variable name",
			    title);
		return;
	}
	if (!n) {
		kdiag_error(r->d, &at, "edit \"%s\" has no expr", title);
		kdiag_note(r->d, "write expr = \"s/from/to/\"");
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		const char *raw = cfg_getnstr(e, "expr", i);
		char *expr;

		if (!check_string(r, raw, &at, "expr"))
			continue;
		/* a Perl substitution: its ${1} is a capture group, not ours */
		expr = rewrite(r, raw, &at, false);
		for (const char *p = expr; (p = strstr(p, "${")); p += 2) {
			const char *e2 = strchr(p + 2, '}');

			if (e2)
				mark_used(r->c, p + 2, (size_t)(e2 - p - 2));
		}
		if (t)
			nvals_add(&t->edits, d ? d->name : title, expr, &at);
		else {
			kconfig_add_eval(r->c, d ? d->name : title, expr, &at);
			free(expr);
		}
	}
}

static void walk_edits(struct nfile *f, cfg_t *sec, const struct osec *o,
		       struct ntest *t)
{
	unsigned int n = 0;

	for (size_t i = 0; i < o->nkids; i++) {
		cfg_t *e;

		if (strcmp(o->kids[i]->name, "edit"))
			continue;
		e = cfg_getnsec(sec, "edit", n++);
		if (e)
			walk_edit(f, e, o->kids[i], t);
	}
}

static struct nbox *find_box(struct nreader *r, const char *title)
{
	for (size_t i = 0; i < r->nboxes; i++)
		if (!strcmp(r->boxes[i]->title, title))
			return r->boxes[i];
	return NULL;
}

static void walk_box(struct nfile *f, cfg_t *b, const struct osec *o)
{
	struct nreader *r = f->r;
	struct korigin at = at_line(f, o->line);
	struct nbox *box, *old;
	char *title;

	if (!check_string(r, cfg_title(b), &at, "box title"))
		return;
	/* a name, not a value: nothing in it is resolved */
	title = rewrite(r, cfg_title(b), &at, false);
	old = find_box(r, title);
	if (old) {
		kdiag_error(r->d, &at, "box '%s' is defined twice", title);
		kdiag_note(r->d, "%s:%d: first defined here", old->at.file,
			   old->at.line);
		free(title);
		return;
	}
	box = xcalloc(1, sizeof(*box));
	box->title = title;
	box->at = at;
	r->boxes = xrealloc(r->boxes, (r->nboxes + 1) * sizeof(*r->boxes));
	r->boxes[r->nboxes++] = box;
	for (size_t i = 0; i < o->nkeys; i++) {
		const struct kopt_desc *d = option_of(o->keys[i].name);
		struct korigin kat = at_line(f, o->keys[i].line);
		char *v;

		if (!d)
			continue;
		if (!(d->flags & KF_BOX)) {
			kdiag_error(r->d, &kat, "'%s' does not describe a box",
				    o->keys[i].name);
			kdiag_note(r->d, "set it at the top level or in a test section");
			continue;
		}
		v = option_value(r, d, cfg_getstr(b, kopt_lname(d)), &kat);
		if (v)
			nvals_add(&box->opts, d->name, v, &kat);
	}
}

static void test_iterate(struct nreader *r, struct ntest *t, const char *raw,
			 const struct korigin *at)
{
	char *v = value_of(r, raw, at, "iterate");
	long n;

	if (!v)
		return;
	if (!kopt_parse_int(v, &n) || n < 1 || n > NATIVE_MAX_ITERATE) {
		kdiag_error(r->d, at, "iterate = '%s': give a count from 1 to %d",
			    v, NATIVE_MAX_ITERATE);
	} else {
		t->iterate = (int)n;
	}
	free(v);
}

static void test_key(struct nfile *f, struct ntest *t, cfg_t *sec,
		     const struct okey *k)
{
	struct nreader *r = f->r;
	struct korigin at = at_line(f, k->line);
	const struct kopt_desc *d;
	char *v;

	if (!strcmp(k->name, "box")) {
		v = value_of(r, cfg_getstr(sec, "box"), &at, "box");
		if (v) {
			t->box = v;
			t->box_at = at;
		}
		return;
	}
	if (!strcmp(k->name, "iterate")) {
		test_iterate(r, t, cfg_getstr(sec, "iterate"), &at);
		return;
	}
	d = option_of(k->name);
	if (!d)
		return;
	if (d->flags & (KF_DEFAULTS_ONLY | KF_GLOBAL)) {
		kdiag_error(r->d, &at, "'%s' applies to the whole run, not to one test",
			    k->name);
		kdiag_note(r->d, "set it at the top level");
		return;
	}
	v = option_value(r, d, cfg_getstr(sec, k->name), &at);
	if (!v)
		return;
	if (kopt_id_of(d) == KOPT_TEST_NAME)
		t->named = true;
	nvals_add(&t->opts, d->name, v, &at);
}

static void walk_test(struct nfile *f, cfg_t *sec, const struct osec *o)
{
	struct nreader *r = f->r;
	struct ntest *t = xcalloc(1, sizeof(*t)), *old;
	const char *title = cfg_title(sec);

	t->at = at_line(f, o->line);
	f->tests = xrealloc(f->tests, (f->ntests + 1) * sizeof(*f->tests));
	f->tests[f->ntests++] = t;
	if (!check_string(r, title, &t->at, "test title"))
		return;
	t->title = rewrite(r, title, &t->at, false);
	old = strmap_get(&r->titles, t->title);
	if (old) {
		/* titles name the tests, in messages and as TEST_NAME */
		kdiag_error(r->d, &t->at, "test '%s' is defined twice", t->title);
		kdiag_note(r->d, "%s:%d: first defined here", old->at.file,
			   old->at.line);
	} else {
		strmap_put(&r->titles, t->title, t);
	}
	t->name = rewrite(r, title, &t->at, true);
	for (size_t i = 0; i < o->nkeys; i++)
		test_key(f, t, sec, &o->keys[i]);
	walk_vars(f, sec, o, t);
	walk_edits(f, sec, o, t);
}

static void root_key(struct nfile *f, cfg_t *cfg, const struct okey *k)
{
	struct nreader *r = f->r;
	struct korigin at = at_line(f, k->line);
	const struct kopt_desc *d;
	char *v;

	if (!strcmp(k->name, "default_box")) {
		v = value_of(r, cfg_getstr(cfg, "default_box"), &at, "default_box");
		if (!v)
			return;
		if (r->default_box) {
			kdiag_error(r->d, &at, "'default_box' is set twice");
			kdiag_note(r->d, "%s:%d: first set here",
				   r->default_box_at.file, r->default_box_at.line);
			free(v);
			return;
		}
		r->default_box = v;
		r->default_box_at = at;
		return;
	}
	d = option_of(k->name);
	if (!d)
		return;
	v = option_value(r, d, cfg_getstr(cfg, kopt_id_of(d) == KOPT_TEST ?
					  TEST_ALIAS : k->name), &at);
	if (v)
		store_global(r, d->name, k->name, v, &at);
	free(v);
}

static void walk_root(struct nfile *f, cfg_t *cfg)
{
	const struct osec *o = f->outline;
	unsigned int nbox = 0, ntest = 0;

	for (size_t i = 0; i < o->nkeys; i++)
		root_key(f, cfg, &o->keys[i]);
	walk_vars(f, cfg, o, NULL);
	walk_edits(f, cfg, o, NULL);
	/* the i-th section of a name in the outline is libconfuse's i-th */
	for (size_t i = 0; i < o->nkids; i++) {
		const struct osec *k = o->kids[i];
		cfg_t *sec;

		if (!strcmp(k->name, "box")) {
			sec = cfg_getnsec(cfg, "box", nbox++);
			if (sec)
				walk_box(f, sec, k);
		} else if (!strcmp(k->name, "test")) {
			sec = cfg_getnsec(cfg, "test", ntest++);
			if (sec)
				walk_test(f, sec, k);
		}
	}
}

/* ---- one file ---- */

static int read_text(struct nreader *r, const char *name, const char *path,
		     const char *buf, size_t len);

static void add_test(struct nreader *r, struct ntest *t)
{
	r->tests = xrealloc(r->tests, (r->ntests + 1) * sizeof(*r->tests));
	r->tests[r->ntests++] = t;
}

/* A file's whole text, or NULL after an error at o (NULL: no origin). */
static char *load_file(struct nreader *r, const char *path,
		       const struct korigin *o, size_t *len)
{
	FILE *fp = fopen(path, "r");
	struct sbuf b;
	char chunk[65536];
	size_t n;

	if (!fp) {
		kdiag_error(r->d, o, "can't read %s: %s", path, strerror(errno));
		return NULL;
	}
	sbuf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
		if (b.len + n > NATIVE_MAX_FILE) {
			kdiag_error(r->d, o, "%s: larger than %d bytes", path,
				    NATIVE_MAX_FILE);
			goto fail;
		}
		sbuf_addn(&b, chunk, n);
	}
	if (ferror(fp)) {
		kdiag_error(r->d, o, "can't read %s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(fp);
	*len = b.len;
	return sbuf_detach(&b);
fail:
	fclose(fp);
	sbuf_free(&b);
	return NULL;
}

/* the file an include() names: relative to the including file */
static char *include_path(const struct nfile *f, const char *file)
{
	const char *slash = strrchr(f->path, '/');

	if (file[0] == '/' || !slash)
		return xstrdup(file);
	return xasprintf("%.*s/%s", (int)(slash - f->path), f->path, file);
}

static int do_include(struct nfile *f, const struct ninclude *inc)
{
	struct nreader *r = f->r;
	struct korigin at = at_line(f, inc->line);
	char *file, *path = NULL, *real = NULL, *text = NULL;
	size_t len;
	int ret = -1;

	if (r->c->no_includes) {
		kdiag_error(r->d, &at, "include() is disabled here");
		return -1;
	}
	file = value_of(r, inc->file, &at, "include()");
	if (!file)
		return -1;
	if (strstr(file, "${")) {
		kdiag_error(r->d, &at, "include(\"%s\"): only ${env:NAME} can be used in a file name",
			    file);
		goto out;
	}
	path = include_path(f, file);
	if (r->depth >= NATIVE_MAX_DEPTH) {
		kdiag_error(r->d, &at, "include()s nested more than %d deep",
			    NATIVE_MAX_DEPTH);
		goto out;
	}
	real = realpath(path, NULL);
	if (!real) {
		kdiag_error(r->d, &at, "can't include %s: %s", path, strerror(errno));
		goto out;
	}
	if (strmap_has(&r->stack, real)) {
		kdiag_error(r->d, &at, "include() loop: %s is already being read",
			    path);
		goto out;
	}
	text = load_file(r, path, &at, &len);
	if (!text)
		goto out;
	strmap_put(&r->stack, real, NULL);
	r->depth++;
	ret = read_text(r, kconfig_intern(r->c, path), path, text, len);
	r->depth--;
	strmap_del(&r->stack, real);
out:
	free(text);
	free(real);
	free(path);
	free(file);
	return ret;
}

/* The file's tests, with those of its include()s where they were. */
static int place_tests(struct nfile *f)
{
	size_t next = 0;
	int ret = 0;

	for (size_t i = 0; i < f->nincs; i++) {
		while (next < f->incs[i].pos && next < f->ntests)
			add_test(f->r, f->tests[next++]);
		if (do_include(f, &f->incs[i]))
			ret = -1;
	}
	while (next < f->ntests)
		add_test(f->r, f->tests[next++]);
	f->ntests = 0;
	return ret;
}

static int parse(struct nfile *f, const char *text)
{
	struct kdiag *d = f->r->d;
	struct scan s;
	cfg_t *cfg = NULL;
	int before = d->nerrors, ret = -1;

	memset(&s, 0, sizeof(s));
	s.f = f;
	s.p = text;
	s.line = 1;
	sbuf_init(&s.out);
	s.cur = f->outline = osec_new(NULL, "root", 1);
	if (scan_text(&s))
		goto out;

	cfg = new_cfg();
	cfg_set_error_function(cfg, on_cfg_error);
	parsing = f;
	ret = cfg_parse_buf(cfg, sbuf_str(&s.out));
	parsing = NULL;
	if (ret != CFG_SUCCESS) {
		if (d->nerrors == before)
			kdiag_error(d, &(struct korigin){ f->name, 0 },
				    "libconfuse could not parse the file");
		ret = -1;
		goto out;
	}
	check_dups(f, f->outline);
	if (d->nerrors == before)
		walk_root(f, cfg);
	ret = d->nerrors == before ? 0 : -1;
out:
	if (cfg)
		cfg_free(cfg);
	free(s.braces);
	free(s.word);
	free(s.name);
	sbuf_free(&s.out);
	return ret;
}

static int read_text(struct nreader *r, const char *name, const char *path,
		     const char *buf, size_t len)
{
	struct nfile f;
	char *text;
	int ret = -1;

	memset(&f, 0, sizeof(f));
	f.r = r;
	f.name = name;
	f.path = path;
	text = clean_text(&f, buf, len);
	if (text && !parse(&f, text))
		ret = place_tests(&f);
	/* the reader's title map points at them: it owns them, errors or not */
	for (size_t i = 0; i < f.ntests; i++)
		add_test(r, f.tests[i]);
	free(f.tests);
	for (size_t i = 0; i < f.nincs; i++)
		free(f.incs[i].file);
	free(f.incs);
	osec_free(f.outline);
	free(text);
	return ret;
}

/* ---- after every file: tests numbered, boxes applied ---- */

static void no_such_box(struct nreader *r, const char *name,
			const struct korigin *at)
{
	size_t limit = strlen(name) / 3 ? strlen(name) / 3 : 1;
	size_t best = limit + 1;
	const char *pick = NULL;

	kdiag_error(r->d, at, "no box named '%s'", name);
	for (size_t i = 0; i < r->nboxes; i++) {
		size_t dist = kopt_edit_distance(name, r->boxes[i]->title,
						 limit);

		if (dist < best) {
			best = dist;
			pick = r->boxes[i]->title;
		}
	}
	if (pick)
		kdiag_note(r->d, "did you mean '%s'?", pick);
	else if (!r->nboxes)
		kdiag_note(r->d, "define it: box \"%s\" { machine = \"...\" }",
			   name);
	else
		kdiag_note(r->d, "the boxes are defined with box \"name\" { ... }");
}

/* The box test t (NULL: no test section) runs on, or NULL. */
static struct nbox *box_of(struct nreader *r, const struct ntest *t)
{
	struct nbox *b;

	if (t && t->box) {
		b = find_box(r, t->box);
		if (!b)
			no_such_box(r, t->box, &t->box_at);
		return b;
	}
	if (r->default_box)
		return find_box(r, r->default_box);
	return r->nboxes == 1 ? r->boxes[0] : NULL;
}

static void store_test_key(struct kconfig *c, const char *name, int n,
			   const char *value, const struct korigin *at)
{
	char *key = xasprintf("%s[%d]", name, n);

	kconfig_store(c, key, value, at);
	free(key);
}

static void store_test(struct nreader *r, const struct ntest *t,
		       const struct nbox *box, int n)
{
	struct kconfig *c = r->c;

	for (size_t i = 0; i < t->opts.n; i++)
		store_test_key(c, t->opts.v[i].key, n, t->opts.v[i].value,
			       &t->opts.v[i].at);
	/* the box fills in what the test does not set itself */
	for (size_t i = 0; box && i < box->opts.n; i++)
		if (!nvals_find(&t->opts, box->opts.v[i].key))
			store_test_key(c, box->opts.v[i].key, n,
				       box->opts.v[i].value, &box->opts.v[i].at);
	if (box && !nvals_find(&t->opts, "MACHINE") &&
	    !nvals_find(&box->opts, "MACHINE"))
		store_test_key(c, "MACHINE", n, box->title, &box->at);
	if (!t->named && !kconfig_lookup(c, "TEST_NAME") && t->name)
		store_test_key(c, "TEST_NAME", n, t->name, &t->at);
	for (size_t i = 0; i < t->vars.n; i++)
		store_test_key(c, t->vars.v[i].key, n, t->vars.v[i].value,
			       &t->vars.v[i].at);
	for (size_t i = 0; i < t->edits.n; i++) {
		char *key = xasprintf("%s[%d]", t->edits.v[i].key, n);

		kconfig_add_eval(c, key, t->edits.v[i].value, &t->edits.v[i].at);
		free(key);
	}
}

/* Without test sections, a box fills in the defaults instead. */
static void store_box_defaults(struct nreader *r, const struct nbox *box)
{
	for (size_t i = 0; i < box->opts.n; i++)
		if (!kconfig_lookup(r->c, box->opts.v[i].key))
			kconfig_store(r->c, box->opts.v[i].key,
				      box->opts.v[i].value, &box->opts.v[i].at);
	if (!kconfig_lookup(r->c, "MACHINE"))
		kconfig_store(r->c, "MACHINE", box->title, &box->at);
}

static bool defined_anywhere(struct nreader *r, const char *name)
{
	if (kopt_find(name) || kconfig_lookup(r->c, name))
		return true;
	for (size_t i = 0; i < r->ntests; i++)
		if (nvals_find(&r->tests[i]->vars, name))
			return true;
	return false;
}

/* an edit of a name nothing sets is most likely a typo */
static void check_edit_names(struct nreader *r)
{
	size_t it = 0;
	const char *key;
	void *val;

	while (strmap_next(&r->c->evals, &it, &key, &val)) {
		const struct kevals *e = val;
		char name[256];
		int n;

		kconfig_split_key(key, name, sizeof(name), &n);
		if (defined_anywhere(r, name) || !e->n)
			continue;
		kdiag_warn(r->d, &e->v[0].origin,
			   "edit \"%s\": no option or variable of that name is set",
			   name);
	}
}

static int finalize(struct nreader *r, const char *main_name)
{
	struct kconfig *c = r->c;
	const struct kval *num = kconfig_lookup(c, "NUM_TESTS");
	struct korigin end = { main_name, 0 };
	int before = r->d->nerrors, n = 1;

	if (r->default_box && !find_box(r, r->default_box))
		no_such_box(r, r->default_box, &r->default_box_at);
	if (r->ntests && num) {
		kdiag_error(r->d, &num->origin,
			    "num_tests can't be used with test sections: they are counted");
		return -1;
	}
	for (size_t i = 0; i < r->ntests; i++) {
		struct ntest *t = r->tests[i];
		int count = t->iterate ? t->iterate : 1;

		if (n > NATIVE_MAX_TESTS - count) {
			kdiag_error(r->d, &t->at, "more than %d tests",
				    NATIVE_MAX_TESTS);
			return -1;
		}
		if (t->iterate)
			kconfig_add_repeat(c, n, t->iterate);
		store_test(r, t, box_of(r, t), n);
		n += count;
	}
	if (r->ntests) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%d", n - 1);
		kconfig_store(c, "NUM_TESTS", buf, &end);
	} else if (box_of(r, NULL)) {
		store_box_defaults(r, box_of(r, NULL));
	}
	check_edit_names(r);
	/* an empty file says nothing to run; top-level options alone run once */
	c->test_case = r->ntests > 0 || strmap_size(&c->opts) > 0;
	return r->d->nerrors == before ? 0 : -1;
}

static int read_top(struct kconfig *c, const char *name, const char *buf,
		    size_t len)
{
	struct nreader r;
	const char *shown = kconfig_intern(c, name);
	char *real = realpath(name, NULL);
	int before = c->diag->nerrors;
	int ret;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.d = c->diag;
	strmap_init(&r.titles);
	strmap_init(&r.stack);
	if (real)
		strmap_put(&r.stack, real, NULL);
	free(real);
	if (!c->main_file)
		c->main_file = shown;
	ret = read_text(&r, shown, name, buf, len);
	if (!ret && c->diag->nerrors == before)
		ret = finalize(&r, shown);
	for (size_t i = 0; i < r.ntests; i++)
		ntest_free(r.tests[i]);
	free(r.tests);
	for (size_t i = 0; i < r.nboxes; i++)
		nbox_free(r.boxes[i]);
	free(r.boxes);
	free(r.default_box);
	strmap_free(&r.titles, NULL);
	strmap_free(&r.stack, NULL);
	return ret || c->diag->nerrors != before ? -1 : 0;
}

int knative_read(struct kconfig *c, const char *path)
{
	struct nreader r;
	size_t len;
	char *buf;
	int ret;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.d = c->diag;
	buf = load_file(&r, path, NULL, &len);
	if (!buf)
		return -1;
	ret = read_top(c, path, buf, len);
	free(buf);
	return ret;
}

int knative_read_buf(struct kconfig *c, const char *name, const char *buf,
		     size_t len)
{
	return read_top(c, name, buf, len);
}
