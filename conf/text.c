// SPDX-License-Identifier: GPL-2.0-only
#include "text.h"

#include <ctype.h>

bool ktext_blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
	       *s == '\f' || *s == '\v')
		s++;
	return !*s;
}

bool ktext_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* the length of the sequence a lead byte starts, and its payload bits */
static int lead(unsigned char b, unsigned int *cp)
{
	if ((b & 0xe0) == 0xc0) {
		*cp = b & 0x1f;
		return 1;
	}
	if ((b & 0xf0) == 0xe0) {
		*cp = b & 0x0f;
		return 2;
	}
	if ((b & 0xf8) == 0xf0) {
		*cp = b & 0x07;
		return 3;
	}
	return -1;
}

bool ktext_utf8(const char *str)
{
	static const unsigned int min[] = { 0, 0x80, 0x800, 0x10000 };
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		unsigned int cp;
		int n;

		if (*s < 0x80) {
			s++;
			continue;
		}
		n = lead(*s++, &cp);
		if (n < 0)
			return false;
		for (int i = 0; i < n; i++, s++) {
			if ((*s & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (*s & 0x3f);
		}
		if (cp < min[n] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}
