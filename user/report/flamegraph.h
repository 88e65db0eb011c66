/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flame graph of a jank (--format ...,svg): the stack log's tree as boxes, one per frame, each
 * as wide as its samples, the program's own frames coloured apart from the C library's, the
 * kernel's, the interpreter's (jw_frame_owner()), the samples where the thread slept marked
 * apart; written as a self-contained SVG (hover, click to zoom, search) beside the stack log.
 */
#ifndef JW_FLAMEGRAPH_H
#define JW_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/stacktree.h"

/* One box: a node of the tree. */
struct jw_flame_node {
	char *name;		/* what the box says: jw_frame_name()'s */
	char *line;		/* what hovering it says: the stack log's line of the frame */
	enum jw_frame_owner owner;	/* JW_OWNER_COUNT: the "[truncated]" root */
	unsigned int depth;	/* 0: a root, at the bottom */
	uint64_t count;		/* samples through it */
	uint64_t asleep;	/* of which asleep */
};

/* The boxes in the stack log's order (depth first, siblings by count). */
struct jw_flame {
	struct jw_flame_node *nodes;
	size_t n, cap;
	uint64_t total;		/* the roots' samples */
	unsigned int levels;	/* the deepest node's depth + 1 */
};

/* Fills @fl (zeroed by the caller) from @t. 0 or -ENOMEM (@fl then freed). */
int jw_flame__from_tree(struct jw_flame *fl, const struct jw_stacktree *t);

/*
 * Appends a node after the last one, as a child of the last node of depth @depth - 1 (a root
 * for 0). Its strings are copied. 0, -EINVAL (@depth deeper than one past the last node's) or
 * -ENOMEM.
 */
int jw_flame__push(struct jw_flame *fl, const char *name, const char *line,
		   enum jw_frame_owner owner, unsigned int depth, uint64_t count, uint64_t asleep);

/* NULL-safe; leaves @fl zeroed. */
void jw_flame__free(struct jw_flame *fl);

/* What the graph's head says: the jank, and its time split. */
struct jw_flame_head {
	const char *title;	/* e.g. "redis-server (pid 812) getCommand: a 312.5 ms jank" */
	const char *detail;	/* e.g. "cause cpu: cpu 300.1 ms, runq 2.0, blocked 10.4, io 0.0" */
};

/* The width of the SVG, in its user units (px). */
#define JW_FLAME_WIDTH 1200

/*
 * Writes @fl as a self-contained SVG to @f: no script, style or font from elsewhere, its
 * script inline. Each box is a <g class="f"> with data-n (samples), data-asleep, data-depth,
 * data-x (the samples before it on its row) and data-owner, a <title> (its stack log line, its
 * samples and share), a <rect> and a <text>. Returns 0 or -errno of the write.
 */
int jw_flame_svg_write(const struct jw_flame *fl, const struct jw_flame_head *head, FILE *f);

/*
 * The same as an <svg> element of a page that holds several (class "flame", id @id): no XML
 * declaration, no style and no script of its own (the page gives jw_flame_style and runs
 * jw_flame_script's jwFlame(svg) on it), its ids made its own from @id. 0 or -errno.
 */
int jw_flame_svg_embed(const struct jw_flame *fl, const struct jw_flame_head *head,
		       const char *id, FILE *f);

/* The graphs' style sheet, and their script: jwFlame(svg) makes the graph under svg live. */
extern const char jw_flame_style[];
extern const char jw_flame_script[];

/* The name data-owner gives @o ("program", "python", ... "truncated" for JW_OWNER_COUNT). */
const char *jw_flame_owner_name(enum jw_frame_owner o);

#endif
