/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where jankwatch keeps its files when it is not told: the log directory and the run directory
 * (the stats sockets), each under the first of a list of parents that is a directory this
 * process can write in. A server has /var/log and /run; an Android device has neither, but
 * /data/local/tmp; a board with a read-only root may have only /tmp.
 */
#ifndef JW_PLACES_H
#define JW_PLACES_H

#include <stdbool.h>
#include <stddef.h>

enum jw_place {
	JW_PLACE_LOG,	/* /var/log/jankwatch, else /data/local/tmp/jankwatch, $TMPDIR/..., /tmp/... */
	JW_PLACE_RUN,	/* /run/jankwatch, else /data/local/tmp/jankwatch-run, $TMPDIR/..., /tmp/... */
};

/*
 * The default directory of @what in @buf, the parents looked for under @root (NULL: the real
 * root; a test's tree otherwise, without the root in @buf). Returns 0, or -ENOENT when no parent
 * is there to write in (@buf then names the first, the usual place), -ENAMETOOLONG.
 */
int jw_place_default(enum jw_place what, const char *root, char *buf, size_t len);

/* Whether @dir is the usual default of @what (as on a server), not one taken for a device. */
bool jw_place_is_usual(enum jw_place what, const char *dir);

#endif
