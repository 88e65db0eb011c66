// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "process/target.h"
#include "loops/waits.h"

/* The wait calls of an event loop, by their C library names (glibc's, musl's and bionic's). */
static const char *const wait_funcs[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect",
};

/*
 * A running process's C library, by the name of the file it maps: glibc's libc.so.6; musl's
 * libc.so (its loader, ld-musl-<arch>.so.1, is the same file, and maps under either name);
 * bionic's libc.so.
 */
static const char *const libc_mapped[] = { "libc.so.6", "libc.so", "ld-musl-*" };

/*
 * A program not started yet: its C library, found from its interpreter's real path. glibc's
 * is beside its loader (ld-linux-*); bionic's linker64 is in the runtime APEX's bin/, its libc
 * in lib64/bionic/ (before Android 10: /system/bin and /system/lib64); musl's loader is its C
 * library.
 */
static const char *const libc_beside_loader[] = { "libc.so.6", "libc.so" };
static const char *const libc_beside_linker64[] = { "../lib64/bionic/libc.so", "../lib64/libc.so" };
static const char *const libc_beside_linker[] = { "../lib/bionic/libc.so", "../lib/libc.so" };

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The longest wait function taken for a thunk: musl's and bionic's epoll_wait (a register set,
 * then a jump to epoll_pwait) are 8 bytes; a longer function could jump there on one path only.
 */
#define THUNK_MAX 16

struct thunk_ctx {
	const struct jw_wait_func *waits;
	const uint64_t *plt;	/* the PLT stub through which the library calls each; 0: none */
	size_t n, self;
	uint64_t from;		/* the function's own file offset */
	bool into_another;
};

static int jumps_into_wait(int64_t target, void *arg)
{
	struct thunk_ctx *c = arg;
	uint64_t at = c->from + target;
	size_t j;

	for (j = 0; j < c->n; j++)
		if (j != c->self && (at == c->waits[j].offset || (c->plt[j] && at == c->plt[j])))
			c->into_another = true;
	return c->into_another;
}

/*
 * Drops from @w the wait functions that are a jump into another of them (musl's epoll_wait is
 * "jmp epoll_pwait", bionic's calls it too): the other's probe sees that wait, and a probe on
 * both would see one wait entered twice and returned twice, the second return taken for a task.
 * @size: each one's size. Returns how many are left.
 */
static size_t drop_thunks(const char *path, struct jw_wait_func *w, const uint64_t *size, size_t n)
{
	uint64_t plt[JW_MAX_WAIT_FUNCS] = { 0 };
	bool thunk[JW_MAX_WAIT_FUNCS] = { false };
	uint8_t code[THUNK_MAX];
	size_t i, kept = 0;

	for (i = 0; i < n; i++)
		if (jw_elf_plt_stub(path, w[i].name, &plt[i]))
			plt[i] = 0;
	for (i = 0; i < n; i++) {
		struct thunk_ctx c = { .waits = w, .plt = plt, .n = n, .self = i,
				       .from = w[i].offset };

		if (!size[i] || size[i] > THUNK_MAX ||
		    jw_file_read_at(path, w[i].offset, code, size[i]))
			continue;
		jw_arch_scan_jumps(code, size[i], jumps_into_wait, &c);
		thunk[i] = c.into_another;
	}
	for (i = 0; i < n; i++)
		if (!thunk[i])
			w[kept++] = w[i];
	return kept;
}

/*
 * Resolves every wait function in @path; aliases (poll and __poll) are kept once, and one that
 * only jumps into another is left to the other's probe.
 */
static int waits_in(const char *path, struct jw_wait_func *out, size_t max)
{
	uint64_t sizes[JW_MAX_WAIT_FUNCS];
	size_t i, j, n = 0;

	if (max > JW_MAX_WAIT_FUNCS)
		max = JW_MAX_WAIT_FUNCS;
	for (i = 0; i < ARRAY_LEN(wait_funcs) && n < max; i++) {
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
		sizes[n] = size;
		out[n++].offset = off;
	}
	return drop_thunks(path, out, sizes, n);
}

/* The first of @names (paths relative to directory @dir) that holds wait functions. */
static int waits_beside(const char *dir, const char *const *names, size_t n_names,
			struct jw_wait_func *out, size_t max)
{
	char path[PATH_MAX], real[PATH_MAX];
	size_t i;
	int n = 0;

	for (i = 0; i < n_names && n == 0; i++)
		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) < (int)sizeof(path) &&
		    realpath(path, real))
			n = waits_in(real, out, max);
	return n;
}

/* Whether @interp (a PT_INTERP path) is musl's loader, ld-musl-<arch>.so.1. */
static bool loader_is_musl(const char *interp)
{
	const char *base = strrchr(interp, '/');

	base = base ? base + 1 : interp;
	return !strncmp(base, "ld-musl-", 8);
}

/* How many "#!" interpreters deep a script's program is looked for (the kernel allows 4). */
#define SCRIPT_DEPTH 4

/*
 * The program a script names on its "#!" line, read under @root into @prog; false when @path
 * is no script.
 */
static bool script_interpreter(const char *root, const char *path, char *prog, size_t len)
{
	char line[PATH_MAX + 3], *p, *end;
	bool ok = false;
	FILE *f = fopen(path, "re");

	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2)) {
		for (p = line + 2; *p == ' ' || *p == '\t'; p++)
			;
		end = p + strcspn(p, " \t\n");
		*end = '\0';
		ok = *p == '/' && snprintf(prog, len, "%s%s", root ? root : "", p) < (int)len;
	}
	if (f)
		fclose(f);
	return ok;
}

/*
 * The wait functions of @exe's C library, before it runs: by its interpreter (@root prefixed);
 * a script's, by the program its "#!" line names.
 */
static int waits_of_program(const char *root, const char *exe, struct jw_wait_func *out,
			    size_t max)
{
	char interp[PATH_MAX], at[PATH_MAX], real[PATH_MAX], prog[PATH_MAX], *slash;
	const char *base;
	int depth = 0, ret;

	snprintf(prog, sizeof(prog), "%s", exe);
	while ((ret = jw_elf_interpreter(prog, interp, sizeof(interp)))) {
		if (ret == -ENOENT)
			return waits_in(prog, out, max);	/* static: it carries its own */
		if (++depth > SCRIPT_DEPTH || !script_interpreter(root, prog, at, sizeof(at)))
			return 0;
		snprintf(prog, sizeof(prog), "%s", at);
	}
	if (snprintf(at, sizeof(at), "%s%s", root ? root : "", interp) >= (int)sizeof(at) ||
	    !realpath(at, real))
		return 0;
	if (loader_is_musl(interp))
		return waits_in(real, out, max);
	slash = strrchr(real, '/');
	base = slash + 1;
	*slash = '\0';
	if (!strcmp(base, "linker64"))
		return waits_beside(real, libc_beside_linker64, ARRAY_LEN(libc_beside_linker64),
				    out, max);
	if (!strcmp(base, "linker"))
		return waits_beside(real, libc_beside_linker, ARRAY_LEN(libc_beside_linker), out,
				    max);
	return waits_beside(real, libc_beside_loader, ARRAY_LEN(libc_beside_loader), out, max);
}

int jw_waits_mapped_libc(pid_t pid, char *path, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(libc_mapped); i++)
		if (jw_target_find_mapping(pid, libc_mapped[i], path, len) == 0)
			return 0;
	return -ENOENT;
}

int jw_find_wait_funcs(pid_t pid, const char *root, const char *exe, struct jw_wait_func *out,
		       size_t max, char *err, size_t errlen)
{
	char libc[PATH_MAX], proc_root[32];
	bool mapped = false;
	size_t i;
	int n = 0;

	if (pid > 0) {
		/* glibc's libc.so.6 first: "libc.so" would match it too. */
		for (i = 0; i < ARRAY_LEN(libc_mapped) && n == 0; i++) {
			if (jw_target_find_mapping(pid, libc_mapped[i], libc, sizeof(libc)))
				continue;
			mapped = true;
			n = waits_in(libc, out, max);
		}
		/*
		 * None mapped: a process caught between its exec and its loader's mapping of the
		 * C library (watched.c checks the one it maps then), or a static one.
		 */
		snprintf(proc_root, sizeof(proc_root), "/proc/%d/root", (int)pid);
		if (!mapped)
			n = waits_of_program(proc_root, exe, out, max);
	} else {
		n = waits_of_program(root, exe, out, max);
	}
	/* A static executable carries its own. */
	if (n == 0)
		n = waits_in(exe, out, max);
	if (n > 0)
		return n;
	if (pid > 0)
		snprintf(err, errlen, "pid %d: no wait function (epoll_wait, poll, select, ...) in "
			 "its C library or %s: give --probe BIN:ENTRY[:EXIT]", pid, exe);
	else
		snprintf(err, errlen, "%s: no wait function (epoll_wait, poll, select, ...) in its C "
			 "library or itself: give --probe BIN:ENTRY[:EXIT]", exe);
	return -ENOENT;
}
