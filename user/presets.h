/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How a loop is hooked when no --probe says so. For now one preset, `syscall`: a task is the time
 * between the watched thread's wait (epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll, select,
 * pselect) returning and its next wait, hooked on the C library's wrappers of those calls. It
 * needs no symbols of the program and fits any loop.
 */
#ifndef JW_PRESETS_H
#define JW_PRESETS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jankwatch/abi.h"
#include "options.h"

#define JW_MAX_WAIT_FUNCS 8

/* A wait function found in a process's C library (or its executable, when static). */
struct jw_wait_func {
	char path[PATH_MAX];
	const char *name;
	uint64_t offset;
};

#define JW_MAX_PRESET_PROBES 2

/* A dispatch function a preset hooks inside the wait-to-wait envelope, to name the handler. */
struct jw_preset_probe {
	char path[PATH_MAX];
	const char *entry;
	uint64_t offset;
	bool name_arg;			/* its first argument leads to the handler: */
	struct jw_arg_chain chain;
};

struct jw_preset {
	const char *name;		/* "redis"; "syscall" when none matched */
	/*
	 * The handler of a task is the first function of another module that this dispatch
	 * function calls, read from the task's stacks (GLib: the source's callback); or NULL.
	 */
	const char *handler_below;
	char where[PATH_MAX];		/* the file that made it recognizable */
	struct jw_preset_probe probes[JW_MAX_PRESET_PROBES];
	size_t n_probes;
};

/*
 * Picks how process @pid (executable @exe) is hooked: under --loop auto the most specific preset
 * whose symbols resolve, else syscall; @why says which and why. Returns 0.
 */
int jw_preset_detect(pid_t pid, const char *exe, enum jw_loop loop, struct jw_preset *out,
		     char *why, size_t len);

/* The handler_below of the preset named @loop (as a raw capture records it), or NULL. */
const char *jw_preset_handler_below(const char *loop);

/*
 * Derives how redis's call(client *c) reaches the command's function, from its code:
 * "mov %rdi,%REG ... mov D1(%REG),%rax ... call *D2(%rax)" gives c->cmd at D1, cmd->proc at D2.
 * @code is the start of the function. Returns 0, or -ENOENT when the pattern is not there.
 */
int jw_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain);

/*
 * Finds the wait functions of process @pid: in the C library it maps, else in its executable
 * @exe. Aliases at one address are found once. Returns the number found (> 0), or -ENOENT with
 * a message in @err.
 */
int jw_find_wait_funcs(pid_t pid, const char *exe, struct jw_wait_func *out, size_t max,
		       char *err, size_t errlen);

#endif
