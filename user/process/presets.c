// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "process/elfsym.h"
#include "process/presets.h"
#include "process/target.h"

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
				memset(chain, 0, sizeof(*chain));
				chain->arg = 0;
				chain->n_offsets = 2;
				chain->offsets[0] = c[3];
				chain->offsets[1] = code[k + 2];
				chain->kind = JW_HANDLER_CODE;
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

int jw_python_version(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int major, minor;

	base = base ? base + 1 : path;
	/* python3.11, libpython3.11.so.1.0; not python3 alone */
	for (p = strstr(base, "python"); p; p = strstr(p + 1, "python"))
		if (sscanf(p, "python%u.%u", &major, &minor) == 2 && major < 10 && minor < 100)
			return major * 100 + minor;
	return -1;
}

int jw_python_chain(int version, struct jw_arg_chain *chain)
{
	memset(chain, 0, sizeof(*chain));
	if (version != 311)
		return -ENOTSUP;
	/* _PyEval_EvalFrameDefault(PyThreadState *, _PyInterpreterFrame *frame, int) */
	chain->arg = 1;
	chain->n_offsets = 1;
	chain->offsets[0] = 0x20;		/* frame->f_code */
	chain->kind = JW_HANDLER_PY_CODE;
	chain->py_filename = 112;		/* PyCodeObject */
	chain->py_qualname = 128;
	chain->py_firstlineno = 72;
	chain->py_str_state = 32;		/* PyASCIIObject */
	chain->py_str_ascii_data = 48;		/* sizeof(PyASCIIObject) */
	chain->py_str_utf8 = 56;		/* PyCompactUnicodeObject.utf8 */
	return 0;
}

/*
 * python: CPython's evaluation loop, in the executable or in a shared libpython. The iteration is
 * bounded by the waits; since 3.11 a Python-to-Python call stays in one evaluation loop, so the
 * evaluations directly under the waits are the callbacks and coroutine steps the loop runs, and
 * the code object of the frame each evaluates names it.
 */
static bool detect_python(pid_t pid, const char *exe, struct jw_preset *out)
{
	static const char *const names[] = { "_PyEval_EvalFrameDefault", NULL };
	struct jw_preset_probe *p = &out->probes[0];
	char err[512];
	uint64_t size;
	int version;

	if (jw_target_find_mapping(pid, "libpython3.*", out->where, sizeof(out->where)) ||
	    !has_functions(out->where, names)) {
		snprintf(out->where, sizeof(out->where), "%s", exe);
		if (!has_functions(exe, names))
			return false;
	}
	out->name = "python";
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = names[0];
	if (jw_elf_func_offset(p->path, p->entry, &p->offset, &size, err, sizeof(err)))
		return false;
	version = jw_python_version(out->where);
	if (version < 0)
		version = jw_python_version(exe);
	p->name_arg = jw_python_chain(version, &p->chain) == 0;
	out->version = version;
	out->n_probes = 1;
	out->handler_addr_is_data = true;	/* a code object */
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
	const char *const *also;	/* more functions the file must have to be this loop */
	struct jw_stack_rule rule;
} stack_presets[] = {
	/* GTK, and Qt's default dispatcher. */
	{ "glib", "libglib-2.0.so", NULL, { "g_main_context_dispatch", false, NULL } },
	/* node links libuv in; its handlers are JS (named from its perf map). */
	{ "node", NULL, (const char *const[]){ "uv__run_timers", "uv__io_poll", NULL },
	  { "uv_run", false, NULL } },
	{ "libuv", "libuv.so", NULL, { "uv_run", false, NULL } },
	{ "libevent", "libevent-2.1.so", NULL, { "event_base_loop", false, NULL } },
	/*
	 * An nginx worker: ngx_process_events_and_timers holds the wait, so the waits bound the
	 * task; the handler is the first named function past the event and HTTP core plumbing
	 * (a module's handler, an output filter), in nginx or one of its modules.
	 */
	{ "nginx", NULL, (const char *const[]){ "ngx_event_process_posted", "ngx_http_core_run_phases",
						NULL },
	  { "ngx_process_events_and_timers", true,
	    (const char *const[]){ "ngx_event_", "ngx_http_core_", "ngx_http_handler",
				   "ngx_http_process_request", "ngx_http_run_posted_requests",
				   "ngx_http_request_handler", "ngx_http_read_client_request_body",
				   NULL } } },
};

const struct jw_stack_rule *jw_preset_stack_rule(const char *loop)
{
	size_t i;

	for (i = 0; loop && i < sizeof(stack_presets) / sizeof(stack_presets[0]); i++)
		if (!strcmp(loop, stack_presets[i].name))
			return &stack_presets[i].rule;
	return NULL;
}

bool jw_preset_handler_addr_is_data(const char *loop)
{
	return loop && !strcmp(loop, "python");
}

static bool skipped(const struct jw_stack_rule *rule, const char *symbol)
{
	const char *const *p;

	for (p = rule->skip; p && *p; p++)
		if (!strncmp(symbol, *p, strlen(*p)))
			return true;
	return false;
}

int jw_stack_rule_handler(const struct jw_stack_rule *rule, const struct jw_frame *frames,
			  size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		if (frames[i].symbol && !strcmp(frames[i].symbol, rule->dispatch))
			break;
	for (j = i + 1; j < n; j++) {
		const struct jw_frame *f = &frames[j];

		if (f->kind == JW_FRAME_KERNEL)
			return -1;
		/* node's own JS (its timers, its streams) is not the program's handler. */
		if (f->kind == JW_FRAME_JIT && f->src && !strncmp(f->src, "node:", 5))
			continue;
		if (!f->symbol || (!rule->same_module && f->module == frames[i].module) ||
		    skipped(rule, f->symbol))
			continue;
		return j;
	}
	return -1;
}

/* Whether process @pid runs loop @sp: the file that should have its functions has them. */
static bool detect_stack_preset(pid_t pid, const char *exe, const struct stack_preset *sp,
				struct jw_preset *out)
{
	const char *need[2] = { sp->rule.dispatch, NULL };

	if (sp->library) {
		if (jw_target_find_mapping(pid, sp->library, out->where, sizeof(out->where)))
			return false;
	} else {
		snprintf(out->where, sizeof(out->where), "%s", exe);
	}
	if (!has_functions(out->where, need) || (sp->also && !has_functions(out->where, sp->also)))
		return false;
	out->name = sp->name;
	out->handler_rule = &sp->rule;
	if (!strcmp(sp->name, "nginx"))
		out->workers = jw_nginx_workers;
	return true;
}

/* The parent of process @pid, from /proc/PID/stat; 0 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024], *close_paren;
	pid_t ppid = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, so read after its last ')' */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

int jw_nginx_workers(pid_t pid, pid_t *out, size_t max)
{
	char path[64], title[64] = "";
	struct stat exe, child;
	struct dirent *de;
	size_t n = 0;
	ssize_t len;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, title, sizeof(title) - 1);
	close(fd);
	/* nginx retitles its master "nginx: master process <its command line>" */
	if (len <= 0 || strncmp(title, "nginx: master process", 21))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &exe))
		return -errno;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max) {
		pid_t c = atoi(de->d_name);

		if (c <= 0 || parent_of(c) != pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", c);
		/* Its workers run the same file; a helper it started (a CGI, a logger) does not. */
		if (!stat(path, &child) && child.st_dev == exe.st_dev && child.st_ino == exe.st_ino)
			out[n++] = c;
	}
	closedir(dir);
	return n;
}

/* Whether @sp is the preset --loop @name asks for: libuv covers node, which links it in. */
static bool stack_preset_named(const struct stack_preset *sp, const char *name)
{
	return !strcmp(sp->name, name) || (!strcmp(name, "libuv") && !strcmp(sp->name, "node"));
}

/*
 * Tries the preset called @name (a --loop name) on process @pid; says why in @why, prefixed with
 * @how ("auto", "as asked"). False when the program is not that loop.
 */
static bool detect_named(pid_t pid, const char *exe, const char *name, const char *how,
			 struct jw_preset *out, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(stack_presets) / sizeof(stack_presets[0]); i++) {
		memset(out, 0, sizeof(*out));
		if (stack_preset_named(&stack_presets[i], name) &&
		    detect_stack_preset(pid, exe, &stack_presets[i], out)) {
			snprintf(why, len, "%s: %s has %s; the handler is the program's function it "
				 "calls", how, out->where, out->handler_rule->dispatch);
			return true;
		}
	}
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "redis") && detect_redis(exe, out)) {
		snprintf(why, len, "%s: %s exports aeMain, processCommand and call%s", how, exe,
			 out->probes[0].name_arg ? "; handlers named from c->cmd->proc" :
						   "; call's code not understood: handler 'call'");
		return true;
	}
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "python") && detect_python(pid, exe, out)) {
		if (out->probes[0].name_arg)
			snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault (Python %d.%d); "
				 "handlers named from their code objects", how, out->where,
				 out->version / 100, out->version % 100);
		else
			snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault, but the code objects "
				 "of this Python are not known: handlers unnamed", how, out->where);
		return true;
	}
	memset(out, 0, sizeof(*out));
	return false;
}

/* What process @pid lacks to be loop @name, for the message of a --loop that does not fit. */
static void describe_missing(pid_t pid, const char *exe, const char *name, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(stack_presets) / sizeof(stack_presets[0]); i++) {
		const struct stack_preset *sp = &stack_presets[i];

		if (strcmp(sp->name, name))
			continue;
		if (sp->library)
			snprintf(why, len, "--loop %s: pid %d maps no %s with %s", name, pid,
				 sp->library, sp->rule.dispatch);
		else
			snprintf(why, len, "--loop %s: %s has no %s", name, exe, sp->rule.dispatch);
		return;
	}
	if (!strcmp(name, "redis"))
		snprintf(why, len, "--loop redis: %s does not export aeMain, processCommand and call",
			 exe);
	else
		snprintf(why, len, "--loop python: neither %s nor a libpython3 that pid %d maps has "
			 "_PyEval_EvalFrameDefault", exe, pid);
}

/* The presets --loop auto tries, most specific first. */
static const char *const auto_order[] = { "glib", "node", "libuv", "libevent", "nginx", "redis",
					  "python" };

int jw_preset_detect(pid_t pid, const char *exe, enum jw_loop loop, struct jw_preset *out,
		     char *why, size_t len)
{
	size_t i;

	if (loop == JW_LOOP_AUTO) {
		for (i = 0; i < sizeof(auto_order) / sizeof(auto_order[0]); i++)
			if (detect_named(pid, exe, auto_order[i], "auto", out, why, len))
				return 0;
	} else if (loop != JW_LOOP_SYSCALL) {
		if (detect_named(pid, exe, jw_loop_name(loop), "as asked", out, why, len))
			return 0;
		describe_missing(pid, exe, jw_loop_name(loop), why, len);
		memset(out, 0, sizeof(*out));
		out->name = "syscall";
		return -ENOENT;
	}
	memset(out, 0, sizeof(*out));
	out->name = "syscall";
	snprintf(why, len, "%s", loop == JW_LOOP_AUTO ? "auto: no preset for this program" :
							 "as asked");
	return 0;
}
