// SPDX-License-Identifier: GPL-2.0-only
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elfsym.h"
#include "jankwatch/abi.h"
#include "log.h"
#include "strpool.h"
#include "symbolize.h"
#include "unwind.h"

/* How often an unknown address may trigger a re-read of the process's mappings. */
#define REFRESH_MIN_NS (200 * 1000000ULL)

struct jw_symbolizer {
	pid_t pid;
	Dwfl *dwfl;
	struct jw_strpool *strings;	/* every string a frame points to */
	const char *exe_build_id;
	uint64_t last_refresh_ns;
	struct jw_unwinder unwinder;	/* attached to dwfl */
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Opens each module's ELF file now, while the process and its files are surely there. */
static int warm_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	GElf_Addr bias;

	(void)userdata;
	(void)start;
	(void)arg;
	if (!dwfl_module_getelf(mod, &bias))
		jw_log(JW_LOG_DEBUG, "no ELF for %s: %s", name, dwfl_errmsg(-1));
	else
		dwfl_module_getsymtab(mod);
	return DWARF_CB_OK;
}

static Dwfl *report_process(pid_t pid)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	int ret;

	if (!dwfl) {
		jw_log(JW_LOG_DEBUG, "dwfl_begin: %s", dwfl_errmsg(-1));
		errno = ENOMEM;
		return NULL;
	}
	dwfl_report_begin(dwfl);
	ret = dwfl_linux_proc_report(dwfl, pid);
	if (dwfl_report_end(dwfl, NULL, NULL) || ret) {
		jw_log(JW_LOG_DEBUG, "cannot read the mappings of pid %d: %s", pid,
		       ret > 0 ? strerror(ret) : dwfl_errmsg(-1));
		dwfl_end(dwfl);
		errno = ret > 0 ? ret : ESRCH;
		return NULL;
	}
	dwfl_getmodules(dwfl, warm_module, NULL, 0);
	return dwfl;
}

static const char *module_build_id(struct jw_symbolizer *s, Dwfl_Module *mod)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char hex[129];
	int n;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0)
		return NULL;
	jw_hex(bits, n, hex, sizeof(hex));
	return jw_strpool__intern(s->strings, hex);
}

/* The build-id of the file /proc/PID/exe names: the event's bundle_version. */
static void find_exe_build_id(struct jw_symbolizer *s)
{
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", s->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return;
	exe[n] = '\0';
	if (jw_elf_build_id(exe, path, sizeof(path)) == 0)
		s->exe_build_id = jw_strpool__intern(s->strings, path);
}

struct jw_symbolizer *jw_symbolizer__new(pid_t pid)
{
	struct jw_symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->pid = pid;
	s->strings = jw_strpool__new();
	if (!s->strings) {
		err = ENOMEM;
		goto err_free;
	}
	s->dwfl = report_process(pid);
	if (!s->dwfl) {
		err = errno;
		goto err_free;
	}
	s->last_refresh_ns = now_ns();
	jw_unwind_attach(&s->unwinder, s->dwfl, pid);
	find_exe_build_id(s);
	return s;

err_free:
	jw_strpool__free(s->strings);
	free(s);
	errno = err;
	return NULL;
}

void jw_symbolizer__free(struct jw_symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	jw_strpool__free(s->strings);
	free(s);
}

const char *jw_symbolizer__exe_build_id(struct jw_symbolizer *s)
{
	return s->exe_build_id;
}

/* Re-reads the mappings, at most every REFRESH_MIN_NS; keeps the old Dwfl if that fails. */
static void refresh(struct jw_symbolizer *s)
{
	uint64_t now = now_ns();
	Dwfl *dwfl;

	if (now - s->last_refresh_ns < REFRESH_MIN_NS)
		return;
	s->last_refresh_ns = now;
	dwfl = report_process(s->pid);
	if (!dwfl)
		return;
	dwfl_end(s->dwfl);
	s->dwfl = dwfl;
	jw_unwind_attach(&s->unwinder, s->dwfl, s->pid);
}

/* Interns a symbol name without its version suffix ("clock_gettime@@GLIBC_2.17"). */
static const char *intern_symbol(struct jw_symbolizer *s, const char *name)
{
	const char *at = strchr(name, '@');
	char buf[512];

	if (!at || at == name || (size_t)(at - name) >= sizeof(buf))
		return jw_strpool__intern(s->strings, name);
	memcpy(buf, name, at - name);
	buf[at - name] = '\0';
	return jw_strpool__intern(s->strings, buf);
}

void jw_symbolizer__frame(struct jw_symbolizer *s, uint64_t pc, bool return_address,
			  struct jw_frame *fr)
{
	uint64_t lookup = return_address && pc ? pc - 1 : pc;
	Dwfl_Module *mod;
	const char *name;
	GElf_Addr bias;
	GElf_Off off;
	GElf_Sym sym;

	memset(fr, 0, sizeof(*fr));
	fr->kind = JW_FRAME_NATIVE;
	fr->pc = pc;
	fr->rel_pc = pc;
	mod = dwfl_addrmodule(s->dwfl, lookup);
	if (!mod) {
		refresh(s);
		mod = dwfl_addrmodule(s->dwfl, lookup);
		if (!mod)
			return;
	}
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* libdwfl names the vdso "[vdso: PID]"; the same vdso in every process is "[vdso]". */
	fr->module = jw_strpool__intern(s->strings,
					name && strncmp(name, "[vdso", 5) == 0 ? "[vdso]" : name);
	fr->build_id = module_build_id(s, mod);
	if (dwfl_module_getelf(mod, &bias))
		fr->rel_pc = pc - bias;
	name = dwfl_module_addrinfo(mod, lookup, &off, &sym, NULL, NULL, NULL);
	if (name) {
		fr->symbol = intern_symbol(s, name);
		fr->sym_off = off + (pc - lookup);
	}
}

size_t jw_symbolizer__unwind(struct jw_symbolizer *s, const struct jw_unwind_input *in,
			     uint64_t *pcs, bool *activation, size_t max)
{
	size_t n = jw_unwind(&s->unwinder, s->dwfl, in, pcs, activation, max);

	/* A leaf in a module mapped since the last refresh: look again once. */
	if (n <= 1 && in->n_regs > JW_UREG_IP && !dwfl_addrmodule(s->dwfl, in->regs[JW_UREG_IP])) {
		refresh(s);
		n = jw_unwind(&s->unwinder, s->dwfl, in, pcs, activation, max);
	}
	return n;
}
