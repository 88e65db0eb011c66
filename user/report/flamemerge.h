/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One flame graph from several stack logs (a jank group's): their frames merged by name along
 * the path, as Brendan Gregg's FlameGraph merges them, not by address: "busy_work+95" and
 * "busy_work+107" under the same caller are one box "busy_work".
 */
#ifndef JW_FLAMEMERGE_H
#define JW_FLAMEMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "report/flamegraph.h"
#include "report/stacklog.h"

struct jw_flamemerge;

/* Returns a new empty graph, or NULL with errno set. */
struct jw_flamemerge *jw_flamemerge__new(void);

/* NULL-safe. */
void jw_flamemerge__free(struct jw_flamemerge *m);

/*
 * Adds one frame (as jw_stacklog_read() gives it), a child of the last frame added at
 * @fr->depth - 1 (a root at 0), merged with its sibling of the same name, owner and where: its
 * count grows by @fr->count (the roots' counts make the total). Its strings are copied.
 * Returns 0, -EINVAL (@fr->depth deeper than one past the last frame added, or no name) or
 * -ENOMEM (the graph is then as it was). Call jw_flamemerge__next() between two stack logs.
 */
int jw_flamemerge__add(struct jw_flamemerge *m, const struct jw_stacklog_frame *fr);

/* Ends one stack log: the next frame added is a root. Counts the stack logs. */
void jw_flamemerge__next(struct jw_flamemerge *m);

/* The roots' counts. */
uint64_t jw_flamemerge__total(const struct jw_flamemerge *m);

/* How many times jw_flamemerge__next() was called: the stack logs merged. */
uint64_t jw_flamemerge__logs(const struct jw_flamemerge *m);

/*
 * Fills @fl (zeroed by the caller) with jw_flame__push(), depth first, siblings by count
 * (highest first; equal counts in the order first seen); a box's line is "<name> in <where>"
 * ("<name>" when where is ""), asleep 0. A box is kept by its width's lower bound on its path
 * (its count, or a caller's when smaller): boxes narrower than @min_permille / 1000 of the
 * total (0: keep all; over 1000 taken as 1000) are left out with their callees, and then, when
 * more than @max_boxes (0: no limit) are left, the cut is raised until at most that many are.
 * Roots are never cut (so fl->total is jw_flamemerge__total(), and more than @max_boxes roots
 * are all kept). *@cut (may be NULL) gets how many boxes were left out.
 * Returns 0 or -ENOMEM (@fl then freed).
 */
int jw_flamemerge__flame(const struct jw_flamemerge *m, unsigned int min_permille,
			 size_t max_boxes, struct jw_flame *fl, size_t *cut);

#endif
