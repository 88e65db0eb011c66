/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stack log read back (docs/outputs.md, "Events, stack logs and trace logs"): its tree lines,
 * or its folded lines, as frames named and owned as the writer named them, for a report that
 * merges the stack logs of several janks.
 */
#ifndef JW_STACKLOG_H
#define JW_STACKLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/stacktree.h"

/* One frame of a stack log, read back. */
struct jw_stacklog_frame {
	unsigned int depth;		/* 0: a root */
	uint64_t count;			/* its samples (the tree's inclusive count; a folded
					 * line's N) */
	const char *name;		/* as jw_frame_name() names it ("[truncated]" for that
					 * root) */
	const char *where;		/* its module's path, "[kernel]", the Python/JS file (the
					 * src without its :line[:col]), "" when in no module */
	enum jw_frame_owner owner;	/* JW_OWNER_COUNT: the "[truncated]" root; a folded line's
					 * frames: JW_OWNER_UNKNOWN (folded lines name frames only),
					 * but a folded "[truncated]" root's: JW_OWNER_COUNT */
};

typedef int (*jw_stacklog_fn)(const struct jw_stacklog_frame *fr, void *ctx);

/* Bytes of @buf that jw_stacklog_parse_line() needs at most for a line of @line_len bytes. */
#define JW_STACKLOG_BUF(line_len) (3 * (size_t)(line_len) + 64)

/*
 * Parses one tree line, e.g. "9 #02 pc 000090a9 /system/bin/appspawn(main+396)(55679d09...)",
 * with or without its indentation (and its line end), into @fr; its strings are kept in @buf
 * (@len bytes; JW_STACKLOG_BUF(strlen(@line)) always suffice). Returns 0; -EINVAL when @line is
 * not a frame line; -ERANGE when @buf is too small.
 */
int jw_stacklog_parse_line(const char *line, struct jw_stacklog_frame *fr, char *buf, size_t len);

/*
 * Reads the stack log @f: calls @fn for each tree line in order (depth first, as written); for
 * folded lines, for each frame of each line (depth 0 .. n-1, each with the line's N as count).
 * The header (the lines up to the first blank one; a file may have none) and a "wchan:" line
 * are skipped. Stops at @fn's first non-zero return and returns it; 0; -EINVAL for a line that
 * is neither, tree and folded lines mixed, or a depth that jumps (damaged: the caller skips the
 * file); -ENOMEM; -errno of the read. Also returns, through @samples (may be NULL), the sum of
 * the roots' counts read (so far, when it fails).
 */
int jw_stacklog_read(FILE *f, jw_stacklog_fn fn, void *ctx, uint64_t *samples);

#endif
