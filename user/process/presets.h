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

#include "base/frame.h"
#include "jankwatch/abi.h"
#include "config/options.h"

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
};

struct jw_preset {
	const char *name;		/* "redis"; "syscall" when none matched */
	const struct jw_stack_rule *handler_rule;	/* names handlers from the stacks; or NULL */
	char where[PATH_MAX];		/* the file that made it recognizable */
	struct jw_preset_probe probes[JW_MAX_PRESET_PROBES];
	size_t n_probes;
	int version;			/* python: 311 for 3.11; -1 unknown */
	bool handler_addr_is_data;	/* its probes' handler address is no code (python) */
	/*
	 * A master process that runs no loop: its workers, which do (at most @max into @out; how
	 * many, 0 when @pid is no master, or -errno). NULL for most.
	 */
	int (*workers)(pid_t pid, pid_t *out, size_t max);
};

/*
 * Picks how process @pid (executable @exe) is hooked: under --loop auto the most specific preset
 * whose symbols resolve, else syscall; a preset @loop names, when the program has what it
 * needs. @why says which and why. Returns 0, or -ENOENT when the program is not the loop
 * --loop named (@why says what it lacks; @out is syscall).
 */
int jw_preset_detect(pid_t pid, const char *exe, enum jw_loop loop, struct jw_preset *out,
		     char *why, size_t len);

/* The stack rule of the preset named @loop (as a raw capture records it), or NULL. */
const struct jw_stack_rule *jw_preset_stack_rule(const char *loop);

/* Whether the handler address the probes of the preset named @loop read is no code address. */
bool jw_preset_handler_addr_is_data(const char *loop);

/*
 * The handler one stack (@frames, @n of them, outermost first) shows under @rule: the index of
 * its frame, or -1 when the stack does not run through the rule's dispatch function.
 */
int jw_stack_rule_handler(const struct jw_stack_rule *rule, const struct jw_frame *frames,
			  size_t n);

/*
 * Derives how redis's call(client *c) reaches the command's function, from its code:
 * "mov %rdi,%REG ... mov D1(%REG),%rax ... call *D2(%rax)" gives c->cmd at D1, cmd->proc at D2.
 * @code is the start of the function. Returns 0, or -ENOENT when the pattern is not there.
 */
int jw_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain);

/*
 * The worker processes of nginx master process @pid: its children that run the same file; the
 * master runs no event loop. Returns how many (at most @max), 0 when @pid is not an nginx master,
 * or -errno.
 */
int jw_nginx_workers(pid_t pid, pid_t *out, size_t max);

/* The CPython version a file's name says (python3.11, libpython3.11.so.1.0): 311; or -1. */
int jw_python_version(const char *path);

/*
 * How CPython @version's _PyEval_EvalFrameDefault leads to the code object it runs, and where
 * that keeps its names. 0, or -ENOTSUP for a version whose layout is not known (only 3.11 is).
 */
int jw_python_chain(int version, struct jw_arg_chain *chain);

/*
 * Finds the wait functions of process @pid: in the C library it maps, else in its executable
 * @exe. Aliases at one address are found once. Returns the number found (> 0), or -ENOENT with
 * a message in @err.
 */
int jw_find_wait_funcs(pid_t pid, const char *exe, struct jw_wait_func *out, size_t max,
		       char *err, size_t errlen);

#endif
