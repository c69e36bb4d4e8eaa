/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The journal: the truth about a run. Every step started and finished is
 * appended, one record per line, and fsync'd before the step goes on, so a
 * run killed at any moment resumes from it, repeating at most the step that
 * was in flight.
 *
 * A record is a set of NAME=VALUE fields. On disk:
 *
 *	K1 <payload length> <crc32 of payload, hex> <payload>\n
 *
 * where the payload is the fields joined by tabs, with '\\', '\t' and '\n'
 * escaped in values. A last record that is cut short (no newline, a wrong
 * length or checksum) is a torn write: it is ignored and cut off before the
 * next append. A bad record followed by good ones is corruption: an error
 * naming the file and line.
 */
#ifndef KTEST_JOURNAL_H
#define KTEST_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

struct kjrec {
	size_t nfields;
	char **names;
	char **values;
	int line;		/* line number in the journal */
};

struct kjournal {
	char *path;
	int fd;
	struct kjrec *recs;
	size_t nrecs, cap;
	bool torn;		/* a torn last record was dropped on open */
	bool nosync;		/* tests and benches: skip fsync */
};

/*
 * Opens (creating) DIR/journal, making DIR and its parents as needed, and
 * reads every record in it. Returns 0, or -1 with why in err.
 */
int kjournal_open(struct kjournal *j, const char *dir, char *err,
		  size_t errlen);
void kjournal_close(struct kjournal *j);

/*
 * Appends a record from NULL-terminated NAME, VALUE pairs (a NULL value
 * leaves that field out) and makes it durable. Returns 0, or -1 with errno.
 */
int kjournal_append(struct kjournal *j, ...);
/* The same from arrays. */
int kjournal_appendv(struct kjournal *j, const char *const *names,
		     const char *const *values, size_t n);

/* The value of field name in r, or NULL. */
const char *kjrec_get(const struct kjrec *r, const char *name);

/*
 * The last record whose fields match every NULL-terminated NAME, VALUE pair
 * given, searching back from the end; NULL when there is none.
 */
const struct kjrec *kjournal_find(const struct kjournal *j, ...);

/*
 * Takes DIR/lock (making DIR as needed) for this process, so that one run
 * at a time uses DIR: another run on it resumes, truncates and appends to
 * the same journal, and builds in the same trees. The lock is a POSIX
 * record lock: held until this process exits (SIGKILL too), not passed to
 * forked children. Returns 0, or -1 with why in err (naming the run that
 * holds it).
 */
int kjournal_lock(const char *dir, char *err, size_t errlen);

/* Moves DIR/journal aside (to journal.N) and starts an empty one. */
int kjournal_restart(struct kjournal *j, char *err, size_t errlen);

/* CRC-32 (IEEE 802.3), as zlib's crc32(0, buf, len). */
unsigned long kjournal_crc32(const void *buf, size_t len);

#endif
