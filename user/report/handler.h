/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one rule that names a task's handler, for its jank event, its trace slice and its
 * statistics row alike. The most specific name known wins:
 *   1. the name the kernel read from the target (a CPython code object: "name file:line");
 *   2. the code address the preset's dispatch called, symbolized (a redis command, a libuv
 *      callback); "0x..." when it has no name and the stacks show none either;
 *   3. the function the stacks show called below the loop's dispatch (a stack preset: GLib's
 *      callback), for a reported task whose stacks were read;
 *   4. the function hooked: a --probe's, the preset's dispatch function, or for a loop
 *      iteration bounded by the waits "syscall" (the event's loop field names the loop).
 */
#ifndef JW_HANDLER_H
#define JW_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"
#include "report/proc.h"

#define JW_HANDLER_TALLY_MAX 16

/* The functions a task's stacks show as its handler, and in how many periods each. */
struct jw_handler_tally {
	const char *name[JW_HANDLER_TALLY_MAX];
	uint64_t count[JW_HANDLER_TALLY_MAX];
	size_t n;
};

/* What the kernel recorded of a task (or a statistics row) that may name its handler. */
struct jw_handler_facts {
	uint32_t probe_id;		/* the task's outermost probe */
	uint32_t inner_probe;		/* the preset probe it ran inside, + 1; 0: none */
	uint64_t handler_addr;		/* what the dispatch called; 0: not read */
	const char *name;		/* read from the target: not NUL-terminated, bounded by */
	size_t name_len;		/* name_len; empty: none */
	const char *file;		/* the same, for its file, */
	size_t file_len;
	uint32_t line;			/* and line */
	const char *from_stacks;	/* the handler the task's stacks show most; or NULL */
	uint64_t klass;			/* what the chain read besides (jw_arg_chain): 0: none */
	uint64_t detail;
};

/*
 * The function hooked that the task ran in (statistics' handler_class): the preset's dispatch
 * function it ran inside, else its outermost probe's; a C++ name demangled into @buf (@len).
 * "unknown" for an id out of range.
 */
const char *jw_handler_hooked(const struct jw_proc *p, uint32_t probe_id, uint32_t inner_probe,
			      char *buf, size_t len);

/*
 * What the handler belongs to (statistics' handler_class, the event's): for a preset that reads
 * it (Qt: the receiver's class, named from its RTTI; unnamed, its vtable as module+offset), else
 * the function hooked (jw_handler_hooked). Never NULL.
 */
const char *jw_handler_class(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			     size_t len);

/*
 * The handler of a task of @p by the rule above; a Qt task's: the slot it called, else its
 * event's type; a Looper's: its message's what ("0x2a"), or the fd callback's function and the
 * events it ran for. A name read from the target is made printable
 * into @buf (@len); other names are the process's or its symbolizer's. Never NULL.
 */
const char *jw_handler_name(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			    size_t len);

/*
 * Counts @count periods for the handler one stack (@frames, @n, outermost first) shows under
 * the preset's @rule; a stack showing none, or a 17th name, is not counted.
 */
void jw_handler_tally_add(struct jw_handler_tally *t, const struct jw_stack_rule *rule,
			  const struct jw_frame *frames, size_t n, uint32_t count);

/* The handler seen in the most periods (the first seen of equals), or NULL. */
const char *jw_handler_tally_top(const struct jw_handler_tally *t);

#endif
