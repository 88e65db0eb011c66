// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "elfsym.h"
#include "presets.h"
#include "target.h"

/* The wait calls of an event loop, by their C library names. */
static const char *const wait_funcs[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect",
};

/* Resolves every wait function in @path; aliases (poll and __poll) are kept once. */
static int waits_in(const char *path, struct jw_wait_func *out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < sizeof(wait_funcs) / sizeof(wait_funcs[0]) && n < max; i++) {
		char msg[512];
		uint64_t off, size;
		bool seen = false;

		if (jw_elf_func_offset(path, wait_funcs[i], &off, &size, msg, sizeof(msg)))
			continue;
		for (j = 0; j < n; j++)
			seen |= out[j].offset == off;
		if (seen)
			continue;
		snprintf(out[n].path, sizeof(out[n].path), "%s", path);
		out[n].name = wait_funcs[i];
		out[n++].offset = off;
	}
	return n;
}

int jw_find_wait_funcs(pid_t pid, const char *exe, struct jw_wait_func *out, size_t max,
		       char *err, size_t errlen)
{
	char libc[PATH_MAX];
	int n = 0;

	if (jw_target_find_mapping(pid, "libc.so.6", libc, sizeof(libc)) == 0)
		n = waits_in(libc, out, max);
	/* A static executable carries its own. */
	if (n == 0)
		n = waits_in(exe, out, max);
	if (n == 0) {
		snprintf(err, errlen, "pid %d: no wait function (epoll_wait, poll, select, ...) in "
			 "its C library or %s: give --probe BIN:ENTRY[:EXIT]", pid, exe);
		return -ENOENT;
	}
	return n;
}

/* x86-64: the callee-saved registers a function keeps its argument in, as ModRM reg numbers. */
static int saved_reg_of_rdi(const uint8_t *c)
{
	/* mov %rdi,%REG: 48/49 89 (11 111 rrr) */
	if ((c[0] == 0x48 || c[0] == 0x49) && c[1] == 0x89 && (c[2] & 0xf8) == 0xf8)
		return (c[2] & 7) | (c[0] == 0x49 ? 8 : 0);
	return -1;
}

int jw_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain)
{
	size_t i, j;
	int reg = -1;

	for (i = 0; i + 3 <= len && i < 96 && reg < 0; i++)
		reg = saved_reg_of_rdi(code + i);
	if (reg < 0 || (reg & 7) == 4)	/* rsp/r12 need a SIB byte: not this pattern */
		return -ENOENT;
	for (j = i; j + 4 <= len; j++) {
		const uint8_t *c = code + j;
		size_t k;

		/* mov D1(%REG),%rax: 48/49 8b (01 000 rrr) D1 */
		if (c[0] != (reg & 8 ? 0x49 : 0x48) || c[1] != 0x8b || c[2] != (0x40 | (reg & 7)))
			continue;
		/* then, within a few instructions, call *D2(%rax): ff 50 D2 */
		for (k = j + 4; k + 3 <= len && k < j + 4 + 32; k++) {
			if (code[k] == 0xff && code[k + 1] == 0x50) {
				chain->first = c[3];
				chain->second = code[k + 2];
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Reads @len bytes of @path at file offset @off. */
static int read_code(const char *path, uint64_t off, uint8_t *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, off);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* Whether @path has every function of @names. */
static bool has_functions(const char *path, const char *const *names)
{
	uint64_t off, size;
	char err[512];

	for (; *names; names++)
		if (jw_elf_func_offset(path, *names, &off, &size, err, sizeof(err)))
			return false;
	return true;
}

/*
 * redis: call(c) runs each command; the wait calls bound the iteration, so time spent in
 * serverCron or beforeSleep is caught too, and the command's function names the handler.
 */
static bool detect_redis(const char *exe, struct jw_preset *out)
{
	static const char *const names[] = { "aeMain", "processCommand", "call", NULL };
	struct jw_preset_probe *p = &out->probes[0];
	uint8_t code[512];
	uint64_t size;
	char err[512];

	if (!has_functions(exe, names))
		return false;
	out->name = "redis";
	snprintf(p->path, sizeof(p->path), "%s", exe);
	p->entry = "call";
	if (jw_elf_func_offset(exe, "call", &p->offset, &size, err, sizeof(err)))
		return false;
	p->name_arg = read_code(exe, p->offset, code, sizeof(code)) == 0 &&
		      jw_derive_call_chain(code, sizeof(code), &p->chain) == 0;
	out->n_probes = 1;
	return true;
}

/*
 * The presets that name a task's handler from its stacks: the loop's dispatch function, and
 * the library that has it (NULL: the executable). The handler is the first function of another
 * module below the dispatch function: the program's callback, past the library's own steps.
 */
static const struct stack_preset {
	const char *name;
	const char *library;
	const char *dispatch;
	const char *const *also;	/* more functions the file must have to be this loop */
} stack_presets[] = {
	/* GTK, and Qt's default dispatcher. */
	{ "glib", "libglib-2.0.so", "g_main_context_dispatch", NULL },
	/* node links libuv in; its handlers are JS (named from its perf map). */
	{ "node", NULL, "uv_run", (const char *const[]){ "uv__run_timers", "uv__io_poll", NULL } },
	{ "libuv", "libuv.so", "uv_run", NULL },
	{ "libevent", "libevent-2.1.so", "event_base_loop", NULL },
};

const char *jw_preset_handler_below(const char *loop)
{
	size_t i;

	for (i = 0; loop && i < sizeof(stack_presets) / sizeof(stack_presets[0]); i++)
		if (!strcmp(loop, stack_presets[i].name))
			return stack_presets[i].dispatch;
	return NULL;
}

/* Whether process @pid runs loop @sp: the file that should have its functions has them. */
static bool detect_stack_preset(pid_t pid, const char *exe, const struct stack_preset *sp,
				struct jw_preset *out)
{
	const char *need[2] = { sp->dispatch, NULL };

	if (sp->library) {
		if (jw_target_find_mapping(pid, sp->library, out->where, sizeof(out->where)))
			return false;
	} else {
		snprintf(out->where, sizeof(out->where), "%s", exe);
	}
	if (!has_functions(out->where, need) || (sp->also && !has_functions(out->where, sp->also)))
		return false;
	out->name = sp->name;
	out->handler_below = sp->dispatch;
	return true;
}

int jw_preset_detect(pid_t pid, const char *exe, enum jw_loop loop, struct jw_preset *out,
		     char *why, size_t len)
{
	size_t i;

	for (i = 0; loop == JW_LOOP_AUTO && i < sizeof(stack_presets) / sizeof(stack_presets[0]);
	     i++) {
		memset(out, 0, sizeof(*out));
		if (detect_stack_preset(pid, exe, &stack_presets[i], out)) {
			snprintf(why, len, "auto: %s has %s; the handler is the program's function it "
				 "calls", out->where, out->handler_below);
			return 0;
		}
	}
	memset(out, 0, sizeof(*out));
	out->name = "syscall";
	if (loop == JW_LOOP_AUTO && detect_redis(exe, out)) {
		snprintf(why, len, "auto: %s exports aeMain, processCommand and call%s", exe,
			 out->probes[0].name_arg ? "; handlers named from c->cmd->proc" :
						   "; call's code not understood: handler 'call'");
		return 0;
	}
	snprintf(why, len, "%s", loop == JW_LOOP_AUTO ? "auto: no preset for this program" :
							 "as asked");
	return 0;
}
