/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entries for the systemd journal, in its native protocol (systemd's "Native Journal Protocol"):
 * one datagram of fields to /run/systemd/journal/socket, or a sealed memfd passed over it when
 * the entry is larger than a datagram may be. Without libsystemd, whose sd_journal_send() drops
 * an entry silently when no journald listens: here the caller learns it.
 */
#ifndef JW_JOURNAL_H
#define JW_JOURNAL_H

#include <stddef.h>

#include "base/jsonbuf.h"

#define JW_JOURNAL_SOCKET "/run/systemd/journal/socket"

/* One field: NAME (A-Z, 0-9, _, not starting with _) and its value, any bytes. */
struct jw_journal_field {
	const char *name;
	const char *value;
	size_t len;
};

/*
 * Appends the @n fields to @b as the protocol has them: NAME=value\n, or for a value with a
 * newline NAME\n, its length as 64-bit little-endian, the value, \n.
 */
void jw_journal_encode(struct jw_buf *b, const struct jw_journal_field *f, size_t n);

struct jw_journal;

/*
 * Connects to the journal's socket at @path (NULL: JW_JOURNAL_SOCKET), non-blocking. NULL with
 * the reason in @err when no journal listens there (or -ENOMEM).
 */
struct jw_journal *jw_journal__open(const char *path, char *err, size_t errlen);
void jw_journal__free(struct jw_journal *j);	/* NULL-safe */

/*
 * Sends one entry of @n fields: 0, -EAGAIN when the journal's queue is full (the entry is
 * dropped: jankwatch never waits for the journal), or -errno (the journal went away: the caller
 * may open it again).
 */
int jw_journal__send(struct jw_journal *j, const struct jw_journal_field *f, size_t n);

#endif
