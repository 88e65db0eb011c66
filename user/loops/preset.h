/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a loop preset gives: the probes it hooks inside the wait-to-wait envelope, how it names a
 * task's handler, and the process it was recognized in. The table of presets is presets.c; each
 * preset with code of its own has its file (preset_redis.c, preset_python.c, preset_nginx.c).
 */
#ifndef JW_PRESET_H
#define JW_PRESET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "jankwatch/abi.h"

/* --loop's names that are no preset: pick one (the default), or none. */
#define JW_LOOP_AUTO "auto"
#define JW_LOOP_SYSCALL "syscall"	/* also the preset of a program no preset recognized */

#define JW_MAX_PRESET_PROBES 12

/*
 * A dispatch a preset hooks inside the wait-to-wait envelope, to name the handler: a function
 * (from its entry to its return), or a handler site (sites.h: from a call to its return site).
 */
struct jw_preset_probe {
	char path[PATH_MAX];
	const char *entry;		/* the function, or the function a site is in */
	uint64_t offset;
	uint64_t exit_offset;		/* a site's return site; 0: a return probe */
	bool exact;			/* a site: hooked where it is, never moved past */
	/*
	 * a function the preset hooks that runs per callback as a site does (Qt's
	 * notifyInternal2): hooked, counted and dropped with the sites (handler_sites)
	 */
	bool per_callback;
	/* a site whose dispatch is a task of its own (JW_COOKIE_TASK: android's messages) */
	bool own_task;
	bool name_arg;			/* its registers lead to the handler: */
	struct jw_arg_chain chain;
	/*
	 * A site nested in a naming dispatch that renames it (JW_COOKIE_CALLEE and where its callee
	 * is); 0: none
	 */
	uint64_t callee;
};

/*
 * How a preset reads a task's handler from its stacks: the first named function below the loop's
 * dispatch function, in another module than the dispatch's (GLib: the source's callback), or,
 * for a loop whose handlers live in its own executable, any module; either way past the loop's
 * own plumbing, the functions whose names begin with one of @skip.
 */
struct jw_stack_rule {
	const char *dispatch;
	bool same_module;
	const char *const *skip;	/* NULL-terminated prefixes, or NULL */
	/*
	 * node: the name it gives (a JS function) beats a handler site's (node's C++ around it),
	 * and code in no module (JS its perf map does not name) ends the search: below it are the
	 * JS function's own calls, not the handler
	 */
	bool jit;
};

/* At most this many callback sites (sites.h) per preset. */
#define JW_MAX_CALLBACK_SITES 128

/* A call whose callee is the handler, in the preset's file (sites.h). */
struct jw_callback_site {
	uint64_t call;			/* the call's file offset */
	uint64_t ret;			/* its return site's */
	uint64_t callee;		/* where the callee is, as its cookie says (JW_COOKIE_CALLEE) */
};

/* How the values a preset's chains read are named (report/handler.h). */
enum jw_handler_names {
	JW_NAMES_CODE = 0,	/* the handler is code, symbolized (or a CPython code object) */
	JW_NAMES_QT,		/* Qt's: the class from its RTTI, the event's type or the slot */
	JW_NAMES_EV,		/* libev's: the callback, and the events (detail) it ran for */
	JW_NAMES_SDEVENT,	/* sd-event's: the class the source's description (klass) */
	JW_NAMES_WAYLAND,	/* Wayland's: the interface (klass) and its implementation (detail) */
	JW_NAMES_LOOPER,	/* android's: the handler's class (klass), the what or events (detail) */
};

#define JW_MAX_CODE_NAMES 8

/*
 * Functions a preset found in a stripped file by their code and names itself (GTK's frame clock
 * phases): frames in them, and a handler its probes read there, are named so.
 */
struct jw_code_names {
	char file[PATH_MAX];				/* as the process maps it */
	struct jw_code_name names[JW_MAX_CODE_NAMES];	/* ELF addresses */
	size_t n;
};

struct jw_preset {
	const char *name;		/* "redis"; JW_LOOP_SYSCALL when none matched */
	const struct jw_stack_rule *handler_rule;	/* names handlers from the stacks; or NULL */
	char where[PATH_MAX];		/* the file that made it recognizable */
	struct jw_preset_probe probes[JW_MAX_PRESET_PROBES];
	size_t n_probes;
	struct jw_callback_site callbacks[JW_MAX_CALLBACK_SITES];	/* in @where */
	size_t n_callbacks;
	const char *callbacks_named;	/* what their statistics rows are ("uv callback") */
	bool own_handlers;		/* @where has the handlers too: no callee is the loop's own */
	int version;			/* python: 311 for 3.11; qt: 5 or 6; -1 unknown */
	char detail[160];		/* python: why its frames cannot be read, when they cannot */
	bool handler_addr_is_data;	/* its probes' handler address is no code (python) */
	enum jw_handler_names names;
	struct jw_code_names code_names;
	/*
	 * A master process that runs no loop: its workers, which do (at most @max into @out; how
	 * many, 0 when @pid is no master, or -errno). NULL for most.
	 */
	int (*workers)(pid_t pid, pid_t *out, size_t max);
};

#endif
