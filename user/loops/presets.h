/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How a loop is hooked when no --probe says so: the presets (glib, node, libuv, libevent, nginx,
 * redis, python), recognized from what a process maps, or none ("syscall": the wait-to-wait
 * envelope alone, waits.h). The table is presets.c.
 */
#ifndef JW_PRESETS_H
#define JW_PRESETS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/frame.h"
#include "loops/preset.h"

/*
 * Picks how process @pid (executable @exe) is hooked: under --loop auto the most specific preset
 * whose functions are there, else syscall; the preset @loop names, when the program has what it
 * needs; with @sites, the handler sites of a preset that has them (sites.h). @why says which
 * and why. Returns 0, or -ENOENT when the program is not the loop --loop named (@why says what
 * it lacks; @out is syscall).
 */
int jw_preset_detect(pid_t pid, const char *exe, const char *loop, bool sites,
		     struct jw_preset *out, char *why, size_t len);

/*
 * What the preset named @name (as a raw capture records it) says without a process: its stack
 * rule, its flags. 0, or -ENOENT (none: @out names it, and has nothing else).
 */
int jw_preset_by_name(const char *name, struct jw_preset *out);

/* Whether --loop @name is known: auto, syscall or a preset. */
bool jw_loop_known(const char *name);

/* The names --loop takes, "auto, syscall, glib, ... or python", into @buf. */
void jw_loop_names(char *buf, size_t len);

/* The presets handler_sites applies to, "qt, android, ... and redis", into @buf. */
void jw_presets_with_sites(char *buf, size_t len);

/* Whether --loop @loop asks for the wait-to-wait envelope alone. */
static inline bool jw_loop_is_syscall(const char *loop)
{
	return loop && !__builtin_strcmp(loop, JW_LOOP_SYSCALL);
}

/*
 * The handler one stack (@frames, @n of them, outermost first) shows under @rule: the index of
 * its frame, or -1 when the stack does not run through the rule's dispatch function.
 */
int jw_stack_rule_handler(const struct jw_stack_rule *rule, const struct jw_frame *frames,
			  size_t n);

#endif
