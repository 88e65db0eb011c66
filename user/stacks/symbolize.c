// SPDX-License-Identifier: GPL-2.0-only
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "process/elfsym.h"
#include "jankwatch/abi.h"
#include "base/log.h"
#include "stacks/modsyms.h"
#include "stacks/perfmap.h"
#include "stacks/pycode.h"
#include "base/demangle.h"
#include "base/strpool.h"
#include "stacks/symbolize.h"
#include "stacks/symbolize_modules.h"
#include "stacks/unwind.h"
#include "output/rawfile.h"
#include "stacks/debuginfo.h"

/* How often an unknown address may trigger a re-read of the mappings or of the perf map. */
#define REFRESH_MIN_NS (200 * 1000000ULL)
#define DEMANGLED_SLOTS 256	/* C++ names kept demangled, so that a frame costs one lookup */
#define MAX_SYMBOL 1024		/* longer demangled names (templates) are cut */
#define NAMED_SLOTS 1024	/* module frames kept named, by address: a jank's samples repeat */

struct jw_symbolizer {
	pid_t pid;
	Dwfl *dwfl;
	struct jw_strpool *strings;	/* every string a frame points to */
	const char *exe_build_id;
	uint64_t last_refresh_ns;
	uint64_t maps_hash;		/* of /proc/PID/maps when the Dwfl was made */
	uint64_t debug_generation;	/* of the debug file store, when the Dwfl was made */
	struct jw_unwinder unwinder;	/* attached to dwfl */
	struct jw_modsyms *syms;	/* dwfl's modules' symbols by address; NULL: libdwfl's */
	struct jw_perfmap *perfmap;	/* JIT names; opened for the first address no ELF has */
	uint64_t perfmap_refresh_ns;	/* 0: never opened nor read */
	bool offline;			/* built from a raw capture: no /proc to read */
	struct jw_pycode *py;		/* names CPython code objects; made at the first need */
	bool py_tried;			/* py was tried (live), or given (offline) */
	const char *code_file;		/* a preset's names for its functions (name_code) */
	const struct jw_code_name *code_names;
	size_t n_code_names;
	struct {
		const char *mangled;	/* interned */
		const char *name;	/* interned: what it demangles to */
	} demangled[DEMANGLED_SLOTS];	/* the last C++ names seen, by the mangled one's address */
	/*
	 * The last module frames named, by the address looked up (a return address's minus one):
	 * a frame's symbol, source line and build-id cost lookups in several tables, and a loop's
	 * samples name the same few hundred addresses over and over. Made at the first frame;
	 * emptied with each new Dwfl and each new set of preset names.
	 */
	struct named_slot {
		uint64_t lookup;	/* 0: empty */
		struct jw_frame frame;	/* as named for a pc of this lookup address */
	} *named;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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

/* A symbolizer for @pid with its string pool, and no Dwfl yet. NULL with errno set. */
static struct jw_symbolizer *symbolizer_alloc(pid_t pid)
{
	struct jw_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	s->syms = jw_modsyms_new();
	s->unwinder.syms = s->syms;
	s->strings = jw_strpool__new();
	if (!s->strings) {
		jw_modsyms_free(s->syms);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Whether /proc/PID/maps line @line maps code from a file: what a Dwfl's modules are made of. */
static bool code_mapping(const char *line)
{
	const char *perms = strchr(line, ' ');

	/* "start-end perms offset dev inode path": no '/' before the path. */
	return perms && strlen(perms) > 4 && perms[3] == 'x' && strchr(perms, '/');
}

/*
 * A hash (FNV-1a) of the code mappings of /proc/PID/maps, which changes when a library is
 * loaded or unloaded, and not with the anonymous memory a program maps all the time (heap, JIT
 * code, which the perf map names); 0 when it cannot be read. Reading it costs tens of
 * microseconds, making a Dwfl anew milliseconds, and libdwfl 0.188 keeps some of what an ended
 * Dwfl mapped (its debug files): a Dwfl is made anew only for new code.
 */
static uint64_t maps_hash(pid_t pid)
{
	uint64_t h = 14695981039346656037ULL;
	char path[64], line[PATH_MAX + 256];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!code_mapping(line))
			continue;
		for (i = 0; line[i]; i++)
			h = (h ^ (unsigned char)line[i]) * 1099511628211ULL;
	}
	fclose(f);
	return h;
}

struct jw_symbolizer *jw_symbolizer__new(pid_t pid)
{
	struct jw_symbolizer *s = symbolizer_alloc(pid);
	int err;

	if (!s)
		return NULL;
	/* Read first: a change made while the Dwfl is made shows at the next refresh. */
	s->maps_hash = maps_hash(pid);
	s->debug_generation = jw_debuginfo__generation(jw_debuginfo_global());
	s->dwfl = jw_dwfl_report_process(pid);
	if (!s->dwfl) {
		err = errno;
		goto err_free;
	}
	s->last_refresh_ns = now_ns();
	jw_unwind_attach(&s->unwinder, s->dwfl, pid);
	find_exe_build_id(s);
	return s;

err_free:
	jw_modsyms_free(s->syms);
	jw_strpool__free(s->strings);
	free(s);
	errno = err;
	return NULL;
}

/* Never silent: the perf map lines that could not be used. */
static void log_perfmap_losses(const struct jw_perfmap *map)
{
	uint64_t bad = jw_perfmap__bad_lines(map), full = jw_perfmap__dropped(map);

	if (bad || full)
		jw_log(JW_LOG_WARN, "%s: %" PRIu64 " broken lines, %" PRIu64 " over the entry cap",
		       jw_perfmap__path(map), bad, full);
}

void jw_symbolizer__free(struct jw_symbolizer *s)
{
	if (!s)
		return;
	jw_modsyms_free(s->syms);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->perfmap)
		log_perfmap_losses(s->perfmap);
	jw_perfmap__free(s->perfmap);
	jw_pycode__free(s->py);
	jw_strpool__free(s->strings);
	free(s->named);
	free(s);
}

const char *jw_symbolizer__exe_build_id(struct jw_symbolizer *s)
{
	return s ? s->exe_build_id : NULL;
}

/* A new Dwfl for the process, with the debug files found since; keeps the old on failure. */
static void forget_named(struct jw_symbolizer *s)
{
	if (s->named)
		memset(s->named, 0, NAMED_SLOTS * sizeof(*s->named));
}

static void remake(struct jw_symbolizer *s)
{
	uint64_t gen = jw_debuginfo__generation(jw_debuginfo_global());
	Dwfl *dwfl = jw_dwfl_report_process(s->pid);

	if (!dwfl)
		return;
	jw_modsyms_clear(s->syms);
	dwfl_end(s->dwfl);
	s->dwfl = dwfl;
	s->debug_generation = gen;
	forget_named(s);
	jw_unwind_attach(&s->unwinder, s->dwfl, s->pid);
}

/*
 * Re-reads the mappings, at most every REFRESH_MIN_NS, and makes a new Dwfl only when they
 * changed (an address in no module is as often garbage from a broken frame chain as a library
 * mapped since); keeps the old Dwfl if that fails.
 */
static void refresh(struct jw_symbolizer *s)
{
	uint64_t now = now_ns(), hash;

	if (s->offline || now - s->last_refresh_ns < REFRESH_MIN_NS)
		return;
	s->last_refresh_ns = now;
	hash = maps_hash(s->pid);
	if (hash && hash == s->maps_hash)
		return;
	s->maps_hash = hash;
	remake(s);
}

void jw_symbolizer__debug_refresh(struct jw_symbolizer *s)
{
	uint64_t gen;

	if (!s || s->offline)
		return;
	gen = jw_debuginfo__generation(jw_debuginfo_global());
	if (gen != s->debug_generation)
		remake(s);
}

/* The demangled form of interned C++ name @mangled, interned; @mangled itself if it has none. */
static const char *demangled(struct jw_symbolizer *s, const char *mangled)
{
	size_t slot = ((uintptr_t)mangled >> 3) % DEMANGLED_SLOTS;
	char buf[MAX_SYMBOL];
	const char *name;

	if (s->demangled[slot].mangled == mangled)
		return s->demangled[slot].name;
	name = jw_demangle(mangled, buf, sizeof(buf)) ? jw_strpool__intern(s->strings, buf) : NULL;
	if (!name)
		name = mangled;
	s->demangled[slot].mangled = mangled;
	s->demangled[slot].name = name;
	return name;
}

/*
 * Interns a symbol name without its version suffix ("clock_gettime@@GLIBC_2.17"), C++ names
 * demangled.
 */
static const char *intern_symbol(struct jw_symbolizer *s, const char *name)
{
	const char *at = strchr(name, '@');
	const char *interned;
	char buf[MAX_SYMBOL];

	if (!at || at == name || (size_t)(at - name) >= sizeof(buf)) {
		interned = jw_strpool__intern(s->strings, name);
	} else {
		memcpy(buf, name, at - name);
		buf[at - name] = '\0';
		interned = jw_strpool__intern(s->strings, buf);
	}
	return interned && interned[0] == '_' && interned[1] == 'Z' ? demangled(s, interned) :
								       interned;
}

/*
 * The perf map entry holding @addr. With @may_read, a miss opens the perf map or reads what the
 * JIT appended, at most every REFRESH_MIN_NS (code is named when it is made, so a miss can be
 * new code; a miss can as well be code no JIT names, seen in every sample).
 */
static const struct jw_perfmap_entry *jit_entry(struct jw_symbolizer *s, uint64_t addr,
						bool may_read)
{
	const struct jw_perfmap_entry *e = s->perfmap ? jw_perfmap__lookup(s->perfmap, addr) : NULL;
	uint64_t now;
	int ret;

	if (e || !may_read || s->offline)
		return e;
	now = now_ns();
	if (s->perfmap_refresh_ns && now - s->perfmap_refresh_ns < REFRESH_MIN_NS)
		return NULL;
	s->perfmap_refresh_ns = now;
	if (!s->perfmap) {
		s->perfmap = jw_perfmap__open(s->pid);
		if (!s->perfmap) {
			jw_log(JW_LOG_DEBUG, "no perf map for pid %d: %s", s->pid, strerror(errno));
			return NULL;
		}
	}
	ret = jw_perfmap__refresh(s->perfmap);
	if (ret)
		jw_log(JW_LOG_DEBUG, "cannot read %s: %s", jw_perfmap__path(s->perfmap),
		       strerror(-ret));
	return jw_perfmap__lookup(s->perfmap, addr);
}

/* Names @pc as JIT code when the perf map has it. Returns whether it did. */
static bool jit_frame(struct jw_symbolizer *s, uint64_t pc, uint64_t lookup, bool may_read,
		      struct jw_frame *fr)
{
	const struct jw_perfmap_entry *e = jit_entry(s, lookup, may_read);

	if (!e)
		return false;
	fr->kind = JW_FRAME_JIT;
	/* The map's strings go with its next refresh; the pool's live as long as @s. */
	fr->symbol = jw_strpool__intern(s->strings, e->func);
	fr->src = e->src ? jw_strpool__intern(s->strings, e->src) : NULL;
	fr->sym_off = pc - e->start;
	return true;
}

/*
 * "file:line" of the code at @addr when the module has line tables (its own DWARF, or debug info
 * found by build-id or debuglink under /usr/lib/debug, or from debuginfod); else NULL.
 */
static const char *source_line(struct jw_symbolizer *s, Dwfl_Module *mod, uint64_t addr)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	const char *file;
	char buf[4096];
	int lineno = 0;

	if (!line)
		return NULL;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file || lineno <= 0)
		return NULL;
	snprintf(buf, sizeof(buf), "%s:%d", file, lineno);
	return jw_strpool__intern(s->strings, buf);
}

/* Names @pc in ELF module @mod: path, build-id, ELF address, function+offset, file:line. */
/* Frame @fr, in a module without a symbol at ELF address @addr: the preset's name, if any. */
static void preset_named(struct jw_symbolizer *s, struct jw_frame *fr, uint64_t addr)
{
	const char *base;
	size_t k;

	if (!s->code_file || !fr->module)
		return;
	base = strrchr(fr->module, '/');
	if (strcmp(base ? base + 1 : fr->module, s->code_file))
		return;
	for (k = 0; k < s->n_code_names; k++) {
		if (addr < s->code_names[k].lo || addr >= s->code_names[k].hi)
			continue;
		fr->symbol = s->code_names[k].name;
		fr->sym_off = fr->rel_pc - s->code_names[k].lo;
		return;
	}
}

/*
 * An arm64 (or arm) mapping symbol, "$x", "$d", "$x.12": it marks where code or data begins, and
 * names no function (the nearest symbol to a PLT stub is one).
 */
static bool mapping_symbol(const char *name)
{
	return name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
	       (!name[2] || name[2] == '.');
}

static void module_frame(struct jw_symbolizer *s, Dwfl_Module *mod, uint64_t pc, uint64_t lookup,
			 struct jw_frame *fr)
{
	const char *name;
	GElf_Addr bias;
	GElf_Off off;
	GElf_Sym sym;

	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* libdwfl names the vdso "[vdso: PID]"; the same vdso in every process is "[vdso]". */
	fr->module = jw_strpool__intern(s->strings,
					name && strncmp(name, "[vdso", 5) == 0 ? "[vdso]" : name);
	fr->build_id = module_build_id(s, mod);
	if (dwfl_module_getelf(mod, &bias))
		fr->rel_pc = pc - bias;
	name = jw_modsyms_addrinfo(s->syms, mod, lookup, &off, &sym);
	if (name && !mapping_symbol(name)) {
		fr->symbol = intern_symbol(s, name);
		fr->sym_off = off + (pc - lookup);
	} else {
		preset_named(s, fr, lookup - (pc - fr->rel_pc));
	}
	fr->src = source_line(s, mod, lookup);
}

static size_t named_slot(uint64_t lookup)
{
	return (size_t)((lookup * 0x9e3779b97f4a7c15ULL) >> 54) % NAMED_SLOTS;
}

/*
 * module_frame(), from the named frames when the address was named since the last new Dwfl.
 * A frame's names depend on the address looked up alone; the pc is the caller's.
 */
static void module_frame_named(struct jw_symbolizer *s, Dwfl_Module *mod, uint64_t pc,
			       uint64_t lookup, struct jw_frame *fr)
{
	struct named_slot *slot;

	if (!s->named)
		s->named = calloc(NAMED_SLOTS, sizeof(*s->named));
	slot = s->named ? &s->named[named_slot(lookup)] : NULL;
	if (slot && slot->lookup == lookup && lookup) {
		*fr = slot->frame;
		if (fr->symbol)
			fr->sym_off += pc - slot->frame.pc;
		fr->rel_pc += pc - slot->frame.pc;
		fr->pc = pc;
		return;
	}
	module_frame(s, mod, pc, lookup, fr);
	if (slot && lookup) {
		slot->lookup = lookup;
		slot->frame = *fr;
	}
}

void jw_symbolizer__name_code(struct jw_symbolizer *s, const char *file,
			      const struct jw_code_name *names, size_t n)
{
	const char *base = strrchr(file, '/');

	if (!s)
		return;
	s->code_file = jw_strpool__intern(s->strings, base ? base + 1 : file);
	s->code_names = names;
	s->n_code_names = n;
	forget_named(s);
}

/*
 * Whether @addr lies in one of @mod's loaded segments. libdwfl spans a module from its file's
 * first mapping to its last, and node maps code between them: its JIT code, and a copy of its
 * builtins made near that code.
 */
static bool in_module_segments(Dwfl_Module *mod, uint64_t addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Phdr ph;
	size_t i, n;

	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
		    addr - bias - ph.p_vaddr < ph.p_memsz)
			return true;
	return false;
}

void jw_symbolizer__frame(struct jw_symbolizer *s, uint64_t pc, bool return_address,
			  struct jw_frame *fr)
{
	uint64_t lookup = return_address && pc ? pc - 1 : pc;
	Dwfl_Module *mod;

	memset(fr, 0, sizeof(*fr));
	fr->kind = JW_FRAME_NATIVE;
	fr->pc = pc;
	fr->rel_pc = pc;
	if (!s)
		return;
	mod = dwfl_addrmodule(s->dwfl, lookup);
	if (!mod) {
		/* Known JIT code: no module will ever hold it, no use re-reading the mappings. */
		if (jit_frame(s, pc, lookup, false, fr))
			return;
		refresh(s);
		mod = dwfl_addrmodule(s->dwfl, lookup);
	}
	/* Anonymous memory, a file with no ELF in it (a JIT's memfd), a gap between segments. */
	if ((!mod || !in_module_segments(mod, lookup)) && jit_frame(s, pc, lookup, true, fr))
		return;
	if (mod)
		module_frame_named(s, mod, pc, lookup, fr);
}

struct jw_pycode *jw_symbolizer__python(struct jw_symbolizer *s, uint64_t pc)
{
	char path[PATH_MAX + 32], why[256];
	const char *file = NULL, *name = NULL;
	struct jw_py_layout l;
	Dwfl_Module *mod;

	if (!s || s->py_tried)
		return s ? s->py : NULL;
	s->py_tried = true;
	mod = dwfl_addrmodule(s->dwfl, pc - 1);
	if (mod)
		name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	/*
	 * The file as the process sees it, as find_proc_elf() opened it; else by the name the
	 * maps gave it (a chroot's files, which the maps name from jankwatch's root).
	 */
	if (file)
		snprintf(path, sizeof(path), "/proc/%d/root%s", s->pid, file);
	if (file && access(path, R_OK))
		snprintf(path, sizeof(path), "%s", file);
	if (!file || jw_py_layout_read(path, &l, why, sizeof(why))) {
		jw_log(JW_LOG_DEBUG, "pid %d: Python frames unnamed: %s", s->pid,
		       file ? why : "its interpreter's file is not known");
		return NULL;
	}
	/* Named as frames name it (module_frame()). */
	s->py = jw_pycode__new(s->pid, jw_strpool__intern(s->strings, name), &l);
	return s->py;
}

struct jw_pycode *jw_symbolizer__python_made(struct jw_symbolizer *s)
{
	return s ? s->py : NULL;
}

int jw_symbolizer__set_python_names(struct jw_symbolizer *s, const struct jw_raw_pyname *names,
				    size_t n, const char *module, bool entry_own,
				    const struct jw_raw_range *eval, size_t n_eval)
{
	struct jw_pycode *py = jw_pycode__new_names(names, n, module, entry_own, eval, n_eval);

	if (!py)
		return -errno;
	jw_pycode__free(s->py);
	s->py = py;
	s->py_tried = true;
	return 0;
}

size_t jw_symbolizer__unwind(struct jw_symbolizer *s, const struct jw_unwind_input *in,
			     uint64_t *pcs, bool *activation, size_t max)
{
	size_t n;

	if (!s)
		return 0;
	n = jw_unwind(&s->unwinder, s->dwfl, in, pcs, activation, max);

	/* A leaf in a module mapped since the last refresh (not in JIT code): look again once. */
	if (n <= 1 && !dwfl_addrmodule(s->dwfl, in->pc) && !jit_entry(s, in->pc, false)) {
		refresh(s);
		n = jw_unwind(&s->unwinder, s->dwfl, in, pcs, activation, max);
	}
	return n;
}

struct module_list {
	struct jw_symbolizer *s;
	struct jw_raw_module *v;
	size_t n;
	size_t cap;
	int err;
};

static int add_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		      void *arg)
{
	struct module_list *l = arg;
	Dwarf_Addr low, high;

	(void)userdata;
	(void)start;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct jw_raw_module *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->err = -ENOMEM;
			return DWARF_CB_ABORT;
		}
		l->v = v;
		l->cap = cap;
	}
	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
	l->v[l->n++] = (struct jw_raw_module){
		.path = jw_strpool__intern(l->s->strings,
					   strncmp(name, "[vdso", 5) == 0 ? "[vdso]" : name),
		.build_id = module_build_id(l->s, mod),
		.start = low,
		.end = high,
	};
	return DWARF_CB_OK;
}

int jw_symbolizer__modules(struct jw_symbolizer *s, struct jw_raw_module **mods, size_t *n)
{
	struct module_list l = { .s = s };

	if (!s) {
		*mods = NULL;
		*n = 0;
		return 0;
	}
	dwfl_getmodules(s->dwfl, add_module, &l, 0);
	if (l.err) {
		free(l.v);
		return l.err;
	}
	*mods = l.v;
	*n = l.n;
	return 0;
}

struct jw_symbolizer *jw_symbolizer__new_offline(pid_t pid, const struct jw_raw_module *mods,
						 size_t n, const char *exe,
						 const char *debug_dir)
{
	struct jw_symbolizer *s = symbolizer_alloc(pid);
	size_t i;
	int err;

	if (!s)
		return NULL;
	s->offline = true;
	s->dwfl = jw_dwfl_report_recorded(mods, n, debug_dir);
	if (!s->dwfl) {
		err = errno;
		goto err_free;
	}
	jw_unwind_attach(&s->unwinder, s->dwfl, pid);
	for (i = 0; i < n; i++)
		if (exe && mods[i].build_id && !strcmp(mods[i].path, exe))
			s->exe_build_id = jw_strpool__intern(s->strings, mods[i].build_id);
	return s;

err_free:
	jw_modsyms_free(s->syms);
	jw_strpool__free(s->strings);
	free(s);
	errno = err;
	return NULL;
}
