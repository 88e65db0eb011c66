/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stack samples merged into the seed's tree: repeated frames merged, children sorted by count,
 * the heaviest stack, and folded lines for flame graphs.
 */
#ifndef JW_STACKTREE_H
#define JW_STACKTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/frame.h"
#include "report/frameline.h"

struct jw_stacktree;

/* Returns a new empty tree, or NULL with errno set. */
struct jw_stacktree *jw_stacktree__new(void);

/* NULL-safe. */
void jw_stacktree__free(struct jw_stacktree *t);

/*
 * Adds one stack. @frames[0] is the outermost caller, @frames[n - 1] the leaf. @complete says
 * whether the stack reaches the thread's first frame; when it does not, the stack hangs under a
 * "[truncated]" root. @weight is the number of samples it stands for (1 for an on-CPU sample);
 * @asleep, that it is where the thread slept (counted apart too, for the flame graph). Frames are
 * merged when kind, module and rel_pc (pc for frames in no module) are equal.
 * Returns 0 or -ENOMEM.
 */
int jw_stacktree__add(struct jw_stacktree *t, const struct jw_frame *frames, size_t n,
		      bool complete, uint32_t weight, bool asleep);

/* Sum of the weights added. */
uint64_t jw_stacktree__total(const struct jw_stacktree *t);

/* One node of the tree as jw_stacktree__each() shows it. */
struct jw_stacktree_node {
	const struct jw_frame *fr;	/* NULL: the "[truncated]" root of stacks cut short */
	const char *name;		/* jw_frame_name()'s, or "[truncated]" */
	const char *line;		/* its stack log line, unindented (for the call only) */
	unsigned int depth;		/* 0: a root */
	uint64_t count;			/* the weight of the stacks through it */
	uint64_t asleep;		/* of which asleep */
};

typedef int (*jw_stacktree_each_fn)(const struct jw_stacktree_node *n, void *ctx);

/*
 * Calls @fn for every node in the stack log's order (depth first, siblings by count): what a
 * flame graph draws. Stops at the first non-zero return of @fn and returns it; 0 or -ENOMEM.
 */
int jw_stacktree__each(const struct jw_stacktree *t, jw_stacktree_each_fn fn, void *ctx);

/*
 * Writes the tree in SPEC's stack log format, one frame a line, children indented four spaces
 * per depth, siblings by count (highest first; equal counts in the order first seen).
 * Returns 0 or -errno of the write.
 */
int jw_stacktree__write_tree(const struct jw_stacktree *t, FILE *f);

/* Writes one "root;...;leaf N" line per distinct path, frames named as jw_frame_name(). */
int jw_stacktree__write_folded(const struct jw_stacktree *t, FILE *f);

/*
 * The stack seen the most times, leaf to root, frames named by jw_frame_name() and joined by
 * "<-"; stacks are compared by those names, not by address; a tie goes to the stack added most
 * recently. Returns a malloc'd string ("" for an empty tree), or NULL with errno set.
 */
char *jw_stacktree__heaviest(const struct jw_stacktree *t);

/*
 * The group key of the tree (SPEC F13): in the heaviest stack, the two innermost frames of the
 * application's own (jw_frame_is_system()), named as jw_frame_name() does, "inner<-outer"; one
 * name when only one is; "" when none (or the tree is empty). A malloc'd string, or NULL with
 * errno set.
 */
char *jw_stacktree__group(const struct jw_stacktree *t);

/*
 * Both of the above from one walk of the tree: malloc'd strings into @heaviest and @group.
 * Returns 0, or -ENOMEM (both NULL).
 */
int jw_stacktree__heaviest_and_group(const struct jw_stacktree *t, char **heaviest,
				     char **group);

#endif
