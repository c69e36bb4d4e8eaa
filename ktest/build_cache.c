// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-commit build cache of a bisect (see build_cache.h). An entry is
 * a directory STATE_DIR/build-cache/COMMIT-DIGEST holding "image",
 * "config" and "release", and for a kernel with modules either their
 * tarball (KINSTALL_MODS_TARBALL) or "no-modules"; it is written under a
 * temporary name and renamed into place, so a kill leaves no half entry
 * that looks whole.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "conf/strmap.h"
#include "ktest/build_cache.h"
#include "ktest/cmd.h"
#include "ktest/install.h"

static void fnv(uint64_t *h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*h ^= (unsigned char)s[i];
		*h *= 0x100000001b3ull;
	}
	*h ^= 0xff;		/* a separator no string has */
	*h *= 0x100000001b3ull;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct sbuf b;
	char buf[65536];
	size_t n;

	if (!f)
		return NULL;
	sbuf_init(&b);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	if (ferror(f)) {
		fclose(f);
		sbuf_free(&b);
		return NULL;
	}
	fclose(f);
	*len = b.len;
	return sbuf_detach(&b);
}

static char *entry_dir(const struct kbc_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *f[] = { k->build_type, k->make_cmd, k->build_options,
			    k->localversion, k->build_target };
	char *mc = NULL;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		fnv(&h, f[i] ? f[i] : "", f[i] ? strlen(f[i]) : 0);
	if (k->min_config && *k->min_config)
		mc = slurp(k->min_config, &n);
	fnv(&h, mc ? mc : "", mc ? n : 0);
	free(mc);
	return xasprintf("%s/build-cache/%s-%016llx", k->state_dir, k->commit,
			 (unsigned long long)h);
}

static int copy_file(const char *from, const char *to, char *why, size_t len)
{
	if (!kcmd_copy_file(from, to))
		return 0;
	snprintf(why, len, "cannot copy %s to %s: %s", from, to, strerror(errno));
	return -1;
}

#define NO_MODULES "no-modules"

static void remove_entry(const char *dir)
{
	static const char *const files[] = { "image", "config", "release",
					     KINSTALL_MODS_TARBALL, NO_MODULES };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = xasprintf("%s/%s", dir, files[i]);

		unlink(p);
		free(p);
	}
	rmdir(dir);
}

/* The oldest entries go when there are more than KBC_KEEP. */
static void prune(const char *top)
{
	DIR *d = opendir(top);
	struct dirent *e;
	char *names[64];
	time_t when[64];
	size_t n = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && n < 64) {
		struct stat st;
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", top, e->d_name);
		if (stat(p, &st) || !S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		names[n] = p;
		when[n++] = st.st_mtime;
	}
	closedir(d);
	while (n > KBC_KEEP) {
		size_t old = 0;

		for (size_t i = 1; i < n; i++)
			if (when[i] < when[old])
				old = i;
		remove_entry(names[old]);
		free(names[old]);
		names[old] = names[--n];
		when[old] = when[n];
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

bool kbc_needs_modules(const struct kbc_key *k, const char *output_dir)
{
	char *cfg, *text;
	size_t n = 0;
	bool yes;

	if (!k->modules)
		return false;
	cfg = xasprintf("%s/.config", output_dir);
	text = slurp(cfg, &n);
	yes = text && kinstall_config_has_modules(text, n);
	free(text);
	free(cfg);
	return yes;
}

/* The modules into the new entry tmp: their tarball, or the mark. */
static int store_modules(const char *tmp, const char *modules, char *why,
			 size_t len)
{
	char *p = xasprintf("%s/%s", tmp, modules ? KINSTALL_MODS_TARBALL :
			    NO_MODULES);
	FILE *f;
	int ret = 0;

	if (!modules) {
		f = fopen(p, "w");
		if (!f || fclose(f)) {
			snprintf(why, len, "cannot write %s: %s", p,
				 strerror(errno));
			ret = -1;
		}
	} else if (rename(modules, p) == 0) {
		ret = 0;
	} else if (errno == EXDEV) {
		ret = copy_file(modules, p, why, len);
	} else {
		snprintf(why, len, "cannot move %s to %s: %s", modules, p,
			 strerror(errno));
		ret = -1;
	}
	free(p);
	return ret;
}

int kbc_store(const struct kbc_key *k, const char *output_dir,
	      const char *release, const char *modules, char *why, size_t len)
{
	char *cfg = xasprintf("%s/.config", output_dir);
	char *img = xasprintf("%s/%s", output_dir, k->build_target);
	char *dir = entry_dir(k), *tmp = xasprintf("%s.tmp%ld", dir, (long)getpid());
	char *top = xasprintf("%s/build-cache", k->state_dir);
	char *p = NULL, *text;
	size_t n = 0;
	FILE *f;
	int ret = 1;

	text = slurp(cfg, &n);
	if (!text || access(img, R_OK))
		goto out;
	ret = -1;
	remove_entry(tmp);
	if (kcmd_mkdirs_private(top) || mkdir(tmp, 0700)) {
		snprintf(why, len, "cannot make %s: %s", tmp, strerror(errno));
		goto out;
	}
	p = xasprintf("%s/image", tmp);
	if (copy_file(img, p, why, len))
		goto out_tmp;
	free(p);
	p = xasprintf("%s/config", tmp);
	if (copy_file(cfg, p, why, len))
		goto out_tmp;
	free(p);
	p = xasprintf("%s/release", tmp);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%s\n", release) < 0 || fclose(f)) {
		snprintf(why, len, "cannot write %s: %s", p, strerror(errno));
		goto out_tmp;
	}
	if (kinstall_config_has_modules(text, n) &&
	    store_modules(tmp, modules, why, len))
		goto out_tmp;
	remove_entry(dir);	/* an older entry of the same build */
	if (rename(tmp, dir)) {
		snprintf(why, len, "cannot rename %s: %s", tmp, strerror(errno));
		goto out_tmp;
	}
	ret = 0;
	prune(top);
	goto out;
out_tmp:
	remove_entry(tmp);
out:
	free(text);
	free(p);
	free(cfg);
	free(img);
	free(dir);
	free(tmp);
	free(top);
	return ret;
}

/* An entry without its modules serves no install. */
static bool serves(const struct kbc_key *k, const char *dir)
{
	char *p;
	bool ok;

	if (!k->modules)
		return true;
	p = xasprintf("%s/%s", dir, NO_MODULES);
	ok = access(p, F_OK) != 0;
	free(p);
	return ok;
}

int kbc_restore(const struct kbc_key *k, const char *output_dir,
		char *release, size_t rlen, char *why, size_t len)
{
	char *dir = entry_dir(k);
	char *p = xasprintf("%s/release", dir), *img = NULL, *slash;
	char *rel = NULL;
	size_t n = 0;
	int ret = 1;

	rel = slurp(p, &n);
	if (!rel || !serves(k, dir))
		goto out;	/* not cached */
	while (n && (rel[n - 1] == '\n' || rel[n - 1] == '\r'))
		rel[--n] = '\0';
	ret = -1;
	free(p);
	p = xasprintf("%s/config", dir);
	img = xasprintf("%s/.config", output_dir);
	/*
	 * What OUTPUT_DIR already holds (a build ahead made in place) is
	 * left alone: a newer .config would make kbuild sync the config
	 * again, and the next build would take longer
	 */
	if (kcmd_mkdirs(output_dir) ||
	    (!kcmd_same_file(p, img) && copy_file(p, img, why, len)))
		goto out;
	free(p);
	free(img);
	p = xasprintf("%s/image", dir);
	img = xasprintf("%s/%s", output_dir, k->build_target);
	slash = strrchr(img, '/');
	if (slash) {
		*slash = '\0';
		if (kcmd_mkdirs(img)) {
			snprintf(why, len, "cannot make %s: %s", img,
				 strerror(errno));
			goto out;
		}
		*slash = '/';
	}
	if (!kcmd_same_file(p, img) && copy_file(p, img, why, len))
		goto out;
	snprintf(release, rlen, "%s", rel);
	utimes(dir, NULL);	/* recently used: pruned last */
	ret = 0;
out:
	free(rel);
	free(p);
	free(img);
	free(dir);
	return ret;
}

int kbc_has(const struct kbc_key *k)
{
	char *dir = entry_dir(k);
	char *p = xasprintf("%s/release", dir);
	int has = access(p, R_OK) == 0 && serves(k, dir);

	free(p);
	free(dir);
	return has;
}

char *kbc_modules(const struct kbc_key *k)
{
	char *dir = entry_dir(k);
	char *p = xasprintf("%s/%s", dir, KINSTALL_MODS_TARBALL);

	free(dir);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}
