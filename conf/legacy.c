// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ktest.conf reader, a port of ktest.pl's __read_config(): the same
 * line forms tried in the same order, the same section state machine, the
 * same errors (with file:line), and warnings where ktest.pl's quirks
 * silently change what a line probably means.
 */
#include "legacy.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ifexpr.h"
#include "text.h"

struct lsrc {			/* where lines come from: a FILE or a buffer */
	FILE *f;
	const char *buf;
	size_t len, pos;
	struct sbuf line;
};

struct lreader {		/* shared by a file and the files it includes */
	struct kconfig *c;
	struct kdiag *d;
	int test_num;
	int depth;
	struct strmap stack;	/* real paths of the files being read */
};

struct lfile {			/* __read_config()'s locals */
	struct lreader *r;
	const char *name;	/* as shown in messages */
	const char *path;	/* as given, for INCLUDE lookups */
	struct korigin at;	/* the current line */
	bool is_default;
	int repeat;
	bool num_tests_set;
	bool skip;
	bool test_case;
	bool in_if;		/* ktest.pl's $if */
	bool if_set;		/* ktest.pl's $if_set */
	bool override;
	struct strmap overrides;
	struct strmap fresh;	/* keys first set in this OVERRIDE section */
	/* for the quirk warnings */
	bool chain_taken;	/* a branch of the current IF chain was taken */
	int taken_at;		/* the line whose IF made ktest.pl's if_set */
	bool rolled_back;	/* the last header was a skipped TEST_START IF */
};

#define ELSE_QUIRK \
	"this ELSE is skipped because the IF at line %d was true: ktest.pl does not forget that at a later false IF"

/* ---- Perl's \s, \d, \w and \b, on bytes ---- */

static bool sp(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
	       ch == '\f' || ch == '\v';
}

static bool word(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

static bool name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '[' || ch == ']';
}

static const char *skip_sp(const char *s)
{
	while (sp(*s))
		s++;
	return s;
}

/* s starts with kw followed by a word boundary */
static bool keyword(const char *s, const char *kw)
{
	size_t n = strlen(kw);

	return !strncmp(s, kw, n) && !word(s[n]);
}

/* trims Perl-\s from both ends, in place */
static char *trim(char *s)
{
	char *e;

	s = (char *)skip_sp(s);
	e = s + strlen(s);
	while (e > s && sp(e[-1]))
		*--e = '\0';
	return s;
}

/* ---- reading lines, refusing what is not text ---- */

static int read_line(struct lsrc *src, struct lfile *lf, bool *eof)
{
	struct kdiag *d = lf->r->d;
	bool nul = false;
	int ch;

	sbuf_reset(&src->line);
	*eof = false;
	for (;;) {
		if (src->f) {
			ch = getc(src->f);
			if (ch == EOF && ferror(src->f)) {
				kdiag_error(d, &lf->at, "read error: %s", strerror(errno));
				return -1;
			}
		} else {
			ch = src->pos < src->len ?
				(unsigned char)src->buf[src->pos++] : EOF;
		}
		if (ch == EOF) {
			if (!src->line.len) {
				*eof = true;
				return 0;
			}
			break;
		}
		if (ch == '\n')
			break;
		if (ch == '\0')
			nul = true;
		if (src->line.len >= KLEGACY_MAX_LINE) {
			lf->at.line++;
			kdiag_error(d, &lf->at, "line longer than %d bytes",
				    KLEGACY_MAX_LINE);
			kdiag_note(d, "is this really a ktest config file?");
			return -1;
		}
		sbuf_addc(&src->line, (char)ch);
	}
	lf->at.line++;
	sbuf_addn(&src->line, "", 0);	/* an empty line is "" too */
	if (nul) {
		kdiag_error(d, &lf->at, "NUL byte in the line: this is not a text file");
		return -1;
	}
	/* CRLF: Perl's \s eats the CR where it matters; drop it */
	if (src->line.len && src->line.buf[src->line.len - 1] == '\r')
		src->line.buf[--src->line.len] = '\0';
	return 0;
}

/* What a line must be before we parse it; comments may hold anything. */
static int check_text(struct lfile *lf, const char *line)
{
	struct kdiag *d = lf->r->d;

	for (const char *p = line; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			kdiag_error(d, &lf->at, "control character 0x%02x in the line",
				    (unsigned char)*p);
			return -1;
		}
	}
	if (!ktext_utf8(line)) {
		kdiag_error(d, &lf->at, "the line is not valid UTF-8");
		kdiag_note(d, "re-save the file as UTF-8");
		return -1;
	}
	return 0;
}

/* ---- IF expressions ---- */

static bool defined_cb(void *ctx, const char *name)
{
	struct kconfig *c = ctx;

	return kconfig_get_var(c, name) || kconfig_lookup(c, name);
}

/* ${NAME} of an option (not a variable) in an IF reads as 0: say so */
static void warn_options_in_if(struct lfile *lf, const char *expr)
{
	struct kconfig *c = lf->r->c;
	const char *p = expr;

	while ((p = strstr(p, "${"))) {
		const char *e = strchr(p + 2, '}');
		char name[256];

		if (!e)
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(e - p - 2), p + 2);
		if (!kconfig_get_var(c, name) &&
		    (kconfig_lookup(c, name) || kopt_find(name))) {
			kdiag_warn(lf->r->d, &lf->at,
				   "${%s} in an IF is 0: %s is an option, and IF only sees config variables (:=)",
				   name, name);
			kdiag_note(lf->r->d, "set it with '%s := value', or test 'DEFINED %s'",
				   name, name);
		}
		p = e + 1;
	}
}

static int process_if(struct lfile *lf, const char *expr, bool *res)
{
	struct kconfig *c = lf->r->c;
	struct kif_ops ops = { .defined = defined_cb, .ctx = c };
	char *val;
	int ret;

	warn_options_in_if(lf, expr);
	val = kconfig_expand_vars(c, expr, true, &lf->at);
	if (!val)
		return -1;
	ret = kif_eval(val, &ops, res, lf->r->d, &lf->at);
	if (ret && strstr(expr, "ITERATE"))
		kdiag_note(lf->r->d, "ITERATE must come before IF on a TEST_START line");
	free(val);
	return ret;
}

/* Evaluates an IF (freeing expr) and records the outcome as ktest.pl does. */
static int take_if(struct lfile *lf, char *expr)
{
	bool res;
	int ret = process_if(lf, expr, &res);

	free(expr);
	if (ret)
		return -1;
	if (res) {
		lf->if_set = true;
		lf->chain_taken = true;
		lf->taken_at = lf->at.line;
	} else {
		lf->skip = true;
	}
	return 0;
}

/* ---- the header forms, as Perl substitutions on the rest of the line ---- */

/* s/\s+KW\b// : removes the first match; true if there was one */
static bool cut_spaced_kw(char *rest, const char *kw, bool one_space,
			  size_t *where)
{
	size_t n = strlen(kw);

	for (char *p = rest; *p; p++) {
		char *q = p;

		if (!sp(*p))
			continue;
		if (one_space)
			q = p + 1;
		else
			while (sp(*q))
				q++;
		if (!strncmp(q, kw, n) && !word(q[n])) {
			if (where)
				*where = (size_t)(p - rest);
			memmove(p, q + n, strlen(q + n) + 1);
			return true;
		}
		if (!one_space)
			p = q - 1;	/* the run is done with */
	}
	return false;
}

/* where /\sIF\s/ matches, or NULL */
static char *find_if(char *rest)
{
	for (char *p = rest; *p; p++)
		if (sp(p[0]) && p[1] == 'I' && p[2] == 'F' && sp(p[3]))
			return p;
	return NULL;
}

/* s/\sIF\s+(.*)// : the expression goes to *expr (malloc'd) */
static bool cut_if(char *rest, char **expr)
{
	char *p = find_if(rest);

	if (!p)
		return false;
	*expr = xstrdup(skip_sp(p + 3));
	*p = '\0';
	return true;
}

/* s/\s+ITERATE\s+(\d+)// */
static bool cut_iterate(char *rest, long *count, bool *toobig)
{
	*toobig = false;
	for (char *p = rest; *p; p++) {
		char *q = p, *r, *e;

		if (!sp(*p))
			continue;
		while (sp(*q))
			q++;
		if (strncmp(q, "ITERATE", 7) || !sp(q[7])) {
			p = q - 1;
			continue;
		}
		r = (char *)skip_sp(q + 7);
		if (!isdigit((unsigned char)*r)) {
			p = q - 1;
			continue;
		}
		errno = 0;
		*count = strtol(r, &e, 10);
		if (errno || *count > 100000)
			*toobig = true;
		memmove(p, e, strlen(e) + 1);
		return true;
	}
	return false;
}

/* TEST_START / DEFAULTS [SKIP] [ELSE] [ITERATE n] [OVERRIDE] [IF expr] */
static int header(struct lfile *lf, const char *type, char *rest)
{
	struct lreader *r = lf->r;
	bool test = !strcmp(type, "TEST_START");
	int old_test_num = 0, old_repeat = 0;
	size_t skip_at = 0;
	char *expr = NULL, *if_at;

	lf->override = false;
	if (test) {
		if (lf->num_tests_set) {
			kdiag_error(r->d, &lf->at,
				    "Can not specify both NUM_TESTS and TEST_START");
			return -1;
		}
		old_test_num = r->test_num;
		old_repeat = lf->repeat;
		r->test_num += lf->repeat;
		lf->is_default = false;
		lf->repeat = 1;
	} else {
		lf->is_default = true;
	}

	/* SKIP anywhere on the line skips the section */
	if_at = find_if(rest);
	if (cut_spaced_kw(rest, "SKIP", false, &skip_at)) {
		lf->skip = true;
		if (if_at && skip_at > (size_t)(if_at - rest))
			kdiag_warn(r->d, &lf->at,
				   "the word SKIP inside the IF expression skips the whole section");
	} else {
		lf->test_case = true;
		lf->skip = false;
	}

	if (cut_spaced_kw(rest, "ELSE", true, NULL)) {
		if (!lf->in_if) {
			kdiag_error(r->d, &lf->at,
				    "ELSE found with out matching IF section");
			kdiag_note(r->d, "an ELSE must follow a section with IF");
			return -1;
		}
		lf->in_if = false;
		if (lf->if_set && !lf->chain_taken)
			kdiag_warn(r->d, &lf->at,
				   ELSE_QUIRK, lf->taken_at);
		lf->skip = lf->if_set;
	} else if (cut_if(rest, &expr)) {
		/* a new chain (for the quirk warning: ktest.pl keeps if_set) */
		lf->chain_taken = false;
	}

	if (expr || cut_if(rest, &expr)) {
		if (take_if(lf, expr))
			return -1;
		lf->in_if = true;
	} else {
		lf->in_if = false;
		lf->if_set = false;
		lf->chain_taken = false;
	}

	if (!lf->skip) {
		if (test) {
			long count;
			bool toobig;

			if (cut_iterate(rest, &count, &toobig)) {
				if (toobig || count < 1) {
					kdiag_error(r->d, &lf->at,
						    "ITERATE %ld: give a count from 1 to 100000",
						    count);
					return -1;
				}
				lf->repeat = (int)count;
				kconfig_add_repeat(r->c, r->test_num, lf->repeat);
			}
		} else if (cut_spaced_kw(rest, "OVERRIDE", true, NULL)) {
			lf->override = true;
			strmap_free(&lf->overrides, NULL);
			strmap_free(&lf->fresh, NULL);
		}
	}

	if (!lf->skip && !ktext_blank(rest)) {
		kdiag_error(r->d, &lf->at, "Garbage found after %s: '%s'", type,
			    trim(rest));
		kdiag_note(r->d, "a %s line takes%s SKIP, ELSE, IF expr%s", type,
			   test ? " ITERATE n," : " OVERRIDE,",
			   test ? " (ITERATE before IF)" : "");
		return -1;
	}

	lf->rolled_back = false;
	if (lf->skip && test) {
		r->test_num = old_test_num;
		lf->repeat = old_repeat;
		lf->rolled_back = true;
	}
	if (r->test_num > 1000000) {
		kdiag_error(r->d, &lf->at, "more than 1000000 tests");
		return -1;
	}
	return 0;
}

/* a bare ELSE [IF expr] line */
static int else_line(struct lfile *lf, char *rest)
{
	struct lreader *r = lf->r;
	char *expr;

	if (!lf->in_if) {
		kdiag_error(r->d, &lf->at, "ELSE found with out matching IF section");
		kdiag_note(r->d, "an ELSE must follow a section with IF");
		return -1;
	}
	if (lf->if_set) {
		if (!lf->chain_taken)
			kdiag_warn(r->d, &lf->at,
				   ELSE_QUIRK, lf->taken_at);
		lf->skip = true;
		rest[0] = '\0';
	} else {
		lf->skip = false;
		if (lf->rolled_back && !lf->is_default)
			kdiag_warn(r->d, &lf->at,
				   "options after this ELSE go to test %d, the test before the skipped TEST_START (as in ktest.pl)",
				   r->test_num);
		if (cut_if(rest, &expr)) {
			if (take_if(lf, expr))
				return -1;
			rest[0] = '\0';
		} else {
			lf->in_if = false;
		}
	}
	if (!ktext_blank(rest)) {
		kdiag_error(r->d, &lf->at, "Garbage found after ELSE: '%s'", trim(rest));
		return -1;
	}
	return 0;
}

static int read_file(struct lreader *r, const char *path, const char *display,
		     struct lsrc *src, bool *test_case);

static int include_line(struct lfile *lf, const char *arg)
{
	struct lreader *r = lf->r;
	char *file, *tmp, *real;
	const char *slash;
	struct lsrc src;
	struct stat st;
	bool tc = false;
	int ret;

	if (!lf->is_default) {
		kdiag_error(r->d, &lf->at, "INCLUDE can only be done in default sections");
		kdiag_note(r->d, "put a DEFAULTS line before the INCLUDE");
		return -1;
	}
	if (r->c->no_includes) {
		kdiag_error(r->d, &lf->at, "INCLUDE is disabled here");
		return -1;
	}
	file = kconfig_expand_vars(r->c, arg, false, &lf->at);
	if (!file)
		return -1;
	/* relative: the including file's directory first, then the cwd */
	slash = strrchr(lf->path, '/');
	if (file[0] != '/' && slash) {
		tmp = xasprintf("%.*s/%s", (int)(slash - lf->path), lf->path, file);
		if (access(tmp, F_OK) == 0) {
			free(file);
			file = tmp;
		} else {
			free(tmp);
		}
	}
	if (access(file, R_OK) || stat(file, &st)) {
		kdiag_error(r->d, &lf->at, "Can't read file %s: %s", file,
			    strerror(errno));
		free(file);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		kdiag_error(r->d, &lf->at, "Can't read file %s: not a regular file",
			    file);
		free(file);
		return -1;
	}
	real = realpath(file, NULL);
	if (!real) {
		kdiag_error(r->d, &lf->at, "Can't read file %s: %s", file,
			    strerror(errno));
		free(file);
		return -1;
	}
	if (strmap_has(&r->stack, real)) {
		kdiag_error(r->d, &lf->at, "INCLUDE loop: %s is already being read",
			    file);
		free(real);
		free(file);
		return -1;
	}
	if (r->depth >= KLEGACY_MAX_DEPTH) {
		kdiag_error(r->d, &lf->at, "INCLUDEs nested more than %d deep",
			    KLEGACY_MAX_DEPTH);
		free(real);
		free(file);
		return -1;
	}
	memset(&src, 0, sizeof(src));
	src.f = fopen(file, "r");
	if (!src.f) {
		kdiag_error(r->d, &lf->at, "Can't read file %s: %s", file,
			    strerror(errno));
		free(real);
		free(file);
		return -1;
	}
	strmap_put(&r->stack, real, NULL);
	r->depth++;
	ret = read_file(r, file, kconfig_intern(r->c, file), &src, &tc);
	r->depth--;
	strmap_del(&r->stack, real);
	fclose(src.f);
	sbuf_free(&src.line);
	free(real);
	free(file);
	if (!ret && tc)
		lf->test_case = true;
	return ret;
}

/* the key an option line in the current section sets */
static char *section_key(struct lfile *lf, const char *name)
{
	size_t n = strlen(name);
	bool indexed = n >= 3 && name[n - 1] == ']' &&
		       isdigit((unsigned char)name[n - 2]);

	if (indexed) {
		/* /\[\d+\]$/ */
		const char *p = name + n - 2;

		while (p > name && isdigit((unsigned char)*p))
			p--;
		indexed = *p == '[';
	}
	if (lf->is_default || indexed)
		return xstrdup(name);
	return xasprintf("%s[%d]", name, lf->r->test_num);
}

/* ktest.pl's set_value(): duplicates die, OVERRIDE sections may replace */
static int set_value(struct lfile *lf, const char *key, const char *rvalue)
{
	struct lreader *r = lf->r;
	const struct kval *old = kconfig_lookup(r->c, key);
	char *val;

	val = kconfig_expand_vars(r->c, rvalue, false, &lf->at);
	if (!val)
		return -1;
	if (old) {
		if (!lf->override || strmap_has(&lf->overrides, key)) {
			kdiag_error(r->d, &lf->at, "Option %s defined more than once!%s",
				    key, lf->override ?
				    " (In the same override section!)" : "");
			if (old->origin.file)
				kdiag_note(r->d, "%s:%d: first defined here",
					   old->origin.file, old->origin.line);
			if (!lf->override)
				kdiag_note(r->d, "use a DEFAULTS OVERRIDE section to replace a default");
			free(val);
			return -1;
		}
		if (strmap_has(&lf->fresh, key)) {
			kdiag_warn(r->d, &lf->at,
				   "%s is set twice in the same OVERRIDE section; ktest.pl allows this once for an option new in the section (this value wins)",
				   key);
		}
		strmap_put(&lf->overrides, key, NULL);
	} else if (lf->override) {
		strmap_put(&lf->fresh, key, NULL);
	}
	kconfig_store(r->c, key, val, &lf->at);
	free(val);
	return 0;
}

/* NAME := value: config variables ignore sections; -D VAR:= wins */
static int set_variable(struct lfile *lf, const char *name, const char *value)
{
	struct kconfig *c = lf->r->c;
	char *v;

	if (strmap_has(&c->locked, name))
		return 0;
	v = kconfig_expand_vars(c, value, false, &lf->at);
	if (!v)
		return -1;
	kconfig_set_var(c, name, ktext_blank(value) ? NULL : v);
	free(v);
	return 0;
}

/* NAME =~ expr: stored as written, applied when a test uses NAME */
static int set_eval(struct lfile *lf, const char *name, const char *value)
{
	struct kconfig *c = lf->r->c;
	char *key;

	/* ${NAME}s here count as uses, as ktest.pl's process_variables does */
	for (const char *p = value; (p = strstr(p, "${")); p += 2) {
		const char *e = strchr(p + 2, '}');
		char *n;

		if (!e)
			break;
		n = xstrndup(p + 2, (size_t)(e - p - 2));
		if (!strmap_has(&c->used, n))
			strmap_put(&c->used, n, NULL);
		free(n);
	}
	key = section_key(lf, name);
	kconfig_add_eval(c, key, value, &lf->at);
	free(key);
	return 0;
}

/* NAME = value */
static int set_option(struct lfile *lf, const char *name, const char *value)
{
	struct lreader *r = lf->r;
	const struct kopt_desc *d = kopt_find(name);
	char *key;
	int ret;

	if (!lf->is_default && d && (d->flags & KF_DEFAULTS_ONLY)) {
		kdiag_error(r->d, &lf->at, "%s must be set in DEFAULTS section", name);
		return -1;
	}
	if (!strcmp(name, "NUM_TESTS")) {
		if (r->test_num) {
			kdiag_error(r->d, &lf->at,
				    "Can not specify both NUM_TESTS and TEST_START");
			return -1;
		}
		lf->num_tests_set = true;
	}
	key = section_key(lf, name);
	ret = set_value(lf, key, value);
	free(key);
	return ret;
}

/* NAME op value, with op one of =~ = := (tried in that order) */
static int option_line(struct lfile *lf, char *line)
{
	char *p = (char *)skip_sp(line), *n = p, *v;
	char name[512];
	const char *op;

	while (name_char(*p))
		p++;
	if (p == n)
		return 1;
	snprintf(name, sizeof(name), "%.*s", (int)(p - n), n);
	p = (char *)skip_sp(p);
	if (p[0] == '=' && p[1] == '~')
		op = "=~";
	else if (p[0] == '=')
		op = "=";
	else if (p[0] == ':' && p[1] == '=')
		op = ":=";
	else
		return 1;
	v = trim(p + strlen(op));
	if (strlen(name) >= sizeof(name) - 1) {
		kdiag_error(lf->r->d, &lf->at, "option name too long");
		return -1;
	}
	if (lf->skip)
		return 0;
	if (!strcmp(op, ":="))
		return set_variable(lf, name, v);
	if (!strcmp(op, "=~"))
		return set_eval(lf, name, v);
	return set_option(lf, name, v);
}

static void garbage(struct lfile *lf, const char *line)
{
	struct kdiag *d = lf->r->d;
	const char *s = skip_sp(line);
	char word_[64];
	size_t n = 0;
	const char *sugg;

	kdiag_error(d, &lf->at, "Garbage found in config: '%s'", s);
	while (s[n] && (word(s[n])) && n < sizeof(word_) - 1) {
		word_[n] = s[n];
		n++;
	}
	word_[n] = '\0';
	if (keyword(s, "DEFAULT"))
		kdiag_note(d, "the section keyword is DEFAULTS");
	else if (n && islower((unsigned char)word_[0]) &&
		 (sugg = kopt_suggest(word_)))
		kdiag_note(d, "option names are upper case: did you mean %s?", sugg);
	else if (n && (sugg = kopt_suggest(word_)) && strcmp(sugg, word_))
		kdiag_note(d, "did you mean %s?", sugg);
	else
		kdiag_note(d, "a line is NAME = value, NAME := value, NAME =~ s/a/b/, "
			   "TEST_START, DEFAULTS, ELSE or INCLUDE file");
}

static int parse_line(struct lfile *lf, char *line)
{
	const char *s = skip_sp(line);
	const char *type = NULL;
	int ret;

	/* a CR that does not end the line: the file is not line-based text */
	if (strchr(line, '\r')) {
		kdiag_error(lf->r->d, &lf->at,
			    "carriage return inside the line (old Mac line endings?)");
		kdiag_note(lf->r->d, "convert the file to Unix line endings");
		return -1;
	}
	/* ktest.pl: next if (/^\s*$/ || /\s*\#/) */
	if (!*s)
		return 0;
	if (strchr(line, '#')) {
		if (*s != '#')
			kdiag_warn(lf->r->d, &lf->at,
				   "the whole line is ignored: ktest.pl treats any line containing '#' as a comment");
		return 0;
	}
	if (check_text(lf, line))
		return -1;

	if (keyword(s, "TEST_START"))
		type = "TEST_START";
	else if (keyword(s, "DEFAULTS"))
		type = "DEFAULTS";
	if (type) {
		char *rest = xstrdup(s + strlen(type));

		ret = header(lf, type, rest);
		free(rest);
		return ret;
	}
	if (keyword(s, "ELSE")) {
		char *rest = xstrdup(s + 4);

		ret = else_line(lf, rest);
		free(rest);
		return ret;
	}
	if (!strncmp(s, "INCLUDE", 7) && sp(s[7]) && *skip_sp(s + 7)) {
		const char *a = skip_sp(s + 7);
		size_t n = 0;
		char *arg;

		if (lf->skip)
			return 0;
		while (a[n] && !sp(a[n]))
			n++;
		if (!ktext_blank(a + n))
			kdiag_warn(lf->r->d, &lf->at,
				   "text after the INCLUDE file name is ignored: '%s'",
				   skip_sp(a + n));
		arg = xstrndup(a, n);
		ret = include_line(lf, arg);
		free(arg);
		return ret;
	}
	ret = option_line(lf, line);
	if (ret <= 0)
		return ret;
	garbage(lf, line);
	return -1;
}

static int read_file(struct lreader *r, const char *path, const char *display,
		     struct lsrc *src, bool *test_case)
{
	struct lfile lf;
	bool eof;
	int ret = 0;

	memset(&lf, 0, sizeof(lf));
	lf.r = r;
	lf.name = display;
	lf.path = path;
	lf.at.file = display;
	lf.is_default = true;
	lf.repeat = 1;
	strmap_init(&lf.overrides);
	strmap_init(&lf.fresh);

	for (;;) {
		ret = read_line(src, &lf, &eof);
		if (ret || eof)
			break;
		ret = parse_line(&lf, src->line.buf);
		if (ret)
			break;
	}
	if (!ret && r->test_num) {
		char num[32];
		struct korigin end = { display, 0 };

		r->test_num += lf.repeat - 1;
		snprintf(num, sizeof(num), "%d", r->test_num);
		kconfig_store(r->c, "NUM_TESTS", num, &end);
	}
	strmap_free(&lf.overrides, NULL);
	strmap_free(&lf.fresh, NULL);
	*test_case = lf.test_case;
	return ret;
}

static int read_top(struct kconfig *c, const char *path, struct lsrc *src)
{
	struct lreader r;
	bool tc = false;
	char *real = realpath(path, NULL);
	const char *display = kconfig_intern(c, path);
	int ret;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.d = c->diag;
	strmap_init(&r.stack);
	if (real)
		strmap_put(&r.stack, real, NULL);
	free(real);
	if (!c->main_file)
		c->main_file = display;
	ret = read_file(&r, path, display, src, &tc);
	strmap_free(&r.stack, NULL);
	if (ret)
		return -1;
	c->test_case = c->test_case || tc;
	return 0;
}

int klegacy_read(struct kconfig *c, const char *path)
{
	struct lsrc src;
	int ret;

	memset(&src, 0, sizeof(src));
	src.f = fopen(path, "r");
	if (!src.f) {
		kdiag_error(c->diag, NULL, "can't read config file %s: %s", path,
			    strerror(errno));
		return -1;
	}
	ret = read_top(c, path, &src);
	fclose(src.f);
	sbuf_free(&src.line);
	return ret;
}

int klegacy_read_buf(struct kconfig *c, const char *name, const char *buf,
		     size_t len)
{
	struct lsrc src;
	int ret;

	memset(&src, 0, sizeof(src));
	src.buf = buf;
	src.len = len;
	ret = read_top(c, name, &src);
	sbuf_free(&src.line);
	return ret;
}

int klegacy_sniff(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int legacy = 1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *s = skip_sp(line);

		if (!*s || strchr(line, '#') || !strncmp(s, "//", 2) ||
		    !strncmp(s, "/*", 2))
			continue;
		/* native names are lower case; ktest.conf's are upper case */
		legacy = !islower((unsigned char)*s);
		break;
	}
	fclose(f);
	return legacy;
}
