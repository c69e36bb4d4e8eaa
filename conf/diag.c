// SPDX-License-Identifier: GPL-2.0-only
#include "diag.h"

#include <string.h>

void kdiag_init(struct kdiag *d)
{
	memset(d, 0, sizeof(*d));
}

static FILE *dout(struct kdiag *d)
{
	return d->out ? d->out : stderr;
}

static void emit(struct kdiag *d, const char *level,
		 const struct korigin *o, const char *fmt, va_list ap)
{
	char msg[sizeof(d->last)];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!strcmp(level, "error"))
		memcpy(d->last, msg, sizeof(msg));
	d->mute_note = false;
	if (d->quiet)
		return;
	if (o && o->file && o->line > 0)
		fprintf(dout(d), "%s:%d: %s: %s\n", o->file, o->line, level, msg);
	else if (o && o->file)
		fprintf(dout(d), "%s: %s: %s\n", o->file, level, msg);
	else
		fprintf(dout(d), "ktest: %s: %s\n", level, msg);
}

void kdiag_verror(struct kdiag *d, const struct korigin *o, const char *fmt,
		  va_list ap)
{
	d->nerrors++;
	emit(d, "error", o, fmt, ap);
}

void kdiag_error(struct kdiag *d, const struct korigin *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kdiag_verror(d, o, fmt, ap);
	va_end(ap);
}

void kdiag_warn(struct kdiag *d, const struct korigin *o, const char *fmt, ...)
{
	va_list ap;

	d->nwarnings++;
	if (d->no_warnings) {
		d->mute_note = true;
		return;
	}
	va_start(ap, fmt);
	emit(d, "warning", o, fmt, ap);
	va_end(ap);
}

void kdiag_note(struct kdiag *d, const char *fmt, ...)
{
	va_list ap;

	if (d->quiet || d->mute_note)
		return;
	va_start(ap, fmt);
	fputs("  ", dout(d));
	vfprintf(dout(d), fmt, ap);
	fputc('\n', dout(d));
	va_end(ap);
}
