/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The uprobes one dispatch probe or one wait function takes, each where it goes (the placement
 * past what the kernel would single-step, loops/placement.h): what jw_attach__dispatch() and
 * jw_attach__wait() attach, in that order, and what --dry-run prints.
 */
#ifndef JW_HOOKPLAN_H
#define JW_HOOKPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/attach.h"

enum jw_hook_kind {
	JW_HOOK_SESSION,	/* the entry and the return as one uprobe session */
	JW_HOOK_EXIT,		/* a uprobe on the exit symbol's entry: the task ends there */
	JW_HOOK_RETURN,		/* a return probe: the task ends as the function returns */
	JW_HOOK_ENTRY,		/* a uprobe on the entry */
};

struct jw_hook {
	enum jw_hook_kind kind;
	const char *path;
	const char *name;	/* the function's, for messages */
	uint64_t offset;	/* in the file, placed */
	char why[192];		/* where it went and why, for -v */
};

#define JW_HOOKS_MAX 2

/* "uprobe session", "uprobe", "return probe": what -v and --dry-run call @kind. */
const char *jw_hook_kind_name(enum jw_hook_kind kind);

/*
 * The hooks of dispatch probe @p into @out (at most JW_HOOKS_MAX), the exit's first: a uprobe
 * session where @session and the probe is neither a handler site nor ends at an exit symbol,
 * else its exit (a uprobe there, or a return probe) and its entry. Returns how many.
 */
size_t jw_hookplan_dispatch(bool session, const struct jw_dispatch_probe *p, struct jw_hook *out);

/*
 * The hooks of wait function @name at @offset of @path: one session where @session, else its
 * entry (which ends a task) and its return (which begins one). Returns how many.
 */
size_t jw_hookplan_wait(bool session, const char *path, const char *name, uint64_t offset,
			struct jw_hook *out);

#endif
