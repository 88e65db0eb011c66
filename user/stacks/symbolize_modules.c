// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process's modules for libdwfl: a live one's (its mappings; files through /proc/PID/root and
 * map_files, debug files from the store, never a network wait) and a raw capture's (recorded
 * modules, files found by build-id).
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/log.h"
#include "process/elfsym.h"
#include "stacks/debuginfo.h"
#include "stacks/symbolize.h"
#include "stacks/symbolize_modules.h"

static char *debuginfo_path;

static int find_proc_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp);
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name);

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_proc_elf,
	.find_debuginfo = find_debug_file,
	.debuginfo_path = &debuginfo_path,
};

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

/*
 * The mapping of @path in process @pid as /proc/PID/map_files names it: the way to a file that
 * was deleted or replaced since it was mapped. Returns an fd, or -1.
 */
static int open_map_file(pid_t pid, const char *path)
{
	char maps[64], line[PATH_MAX + 256], file[PATH_MAX + 64];
	size_t n = strlen(path);
	int fd = -1;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p || strncmp(p, path, n) || (p[n] != '\n' && p[n] != ' '))
			continue;
		snprintf(file, sizeof(file), "/proc/%d/map_files/%.*s", pid,
			 (int)strcspn(line, " "), line);
		fd = open(file, O_RDONLY | O_CLOEXEC);
	}
	fclose(f);
	return fd;
}

/*
 * Opens a module's file as the process sees it: through /proc/PID/root, so that a process in
 * another mount namespace (a container) gets its own files, and through /proc/PID/map_files
 * when the file was deleted or replaced since. The vdso is libdwfl's to read from memory.
 */
static int find_proc_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	pid_t pid = (pid_t)(intptr_t)*userdata;
	char path[PATH_MAX + 32];
	int fd;

	if (!pid || name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open_map_file(pid, name);
	if (fd < 0)
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	*file_name = strdup(name);
	return fd;
}

/*
 * Set while a new Dwfl opens its modules (warm_module): a module's debug file is fetched only
 * once a report needs its lines (libdwfl asks again then), not for every library mapped.
 */
static bool warming;

/* Lookups that found their debug file still being fetched (jw_symbolizer_debug_asks()). */
static uint64_t debug_asks;

uint64_t jw_symbolizer_debug_asks(void)
{
	return debug_asks;
}

/*
 * A module's debug file, from the store (debuginfo.h): on disk by build-id or debuglink, or
 * fetched by the store's own thread. Never a network wait here, in jankwatch's loop (libdwfl's
 * own search would ask debuginfod and wait). -1: none, or not yet: libdwfl then takes what the
 * file itself has (its own .symtab and DWARF, else .dynsym).
 */
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	char hex[129], path[PATH_MAX];
	GElf_Addr vaddr;
	int n, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)debuglink_crc;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0)
		jw_hex(bits, n, hex, sizeof(hex));
	switch (jw_debuginfo__lookup(jw_debuginfo_global(), n > 0 ? hex : NULL, file_name,
				     debuglink_file, !warming, path, sizeof(path))) {
	case JW_DEBUG_FOUND:
		break;
	case JW_DEBUG_PENDING:
		debug_asks++;
		return -1;
	default:
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debuginfo_file_name = strdup(path);
	return fd;
}

/* Tells each module's find_elf which process it belongs to. */
static int set_module_pid(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	*userdata = arg;
	return DWARF_CB_OK;
}

Dwfl *jw_dwfl_report_process(pid_t pid)
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
	dwfl_getmodules(dwfl, set_module_pid, (void *)(intptr_t)pid, 0);
	warming = true;
	dwfl_getmodules(dwfl, warm_module, NULL, 0);
	warming = false;
	return dwfl;
}

/* The size of this process's vdso mapping starting at @start, from /proc/self/maps; or 0. */
static size_t own_vdso_size(uintptr_t start)
{
	unsigned long lo, hi;
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!size && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == start && strstr(line, "[vdso]"))
			size = hi - lo;
	fclose(f);
	return size;
}

/*
 * This process's own vdso, when it is the recorded one (same build-id): the vdso is not a
 * file, but a machine running the same kernel has the same one.
 */
static int own_vdso(const struct jw_raw_module *m, Elf **elfp)
{
	void *image = (void *)getauxval(AT_SYSINFO_EHDR);
	size_t size = own_vdso_size((uintptr_t)image);
	const void *id;
	char hex[129];
	ssize_t n;
	Elf *elf;

	if (!image || !size || !m->build_id)
		return -1;
	elf = elf_memory(image, size);
	if (!elf)
		return -1;
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n <= 0 || (jw_hex(id, n, hex, sizeof(hex)), strcmp(hex, m->build_id))) {
		elf_end(elf);
		return -1;
	}
	*elfp = elf;
	return -1;
}

/*
 * Finds a recorded module's file: at its recorded path when the build-id matches, else by
 * build-id in the debug directories (--debug-dir, /usr/lib/debug) and from debuginfod when
 * DEBUGINFOD_URLS is set.
 */
static int find_recorded_elf(Dwfl_Module *mod, void **userdata, const char *name,
			     Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct jw_raw_module *m = *userdata;
	int fd;

	if (m && !strcmp(m->path, "[vdso]"))
		return own_vdso(m, elfp);
	if (m && m->path[0] == '/' && jw_elf_file_is(m->path, m->build_id)) {
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*file_name = strdup(m->path);
			return fd;
		}
	}
	return dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
}

static char *offline_debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = find_recorded_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &offline_debuginfo_path,
};

Dwfl *jw_dwfl_report_recorded(const struct jw_raw_module *mods, size_t n, const char *debug_dir)
{
	Dwfl *dwfl;
	size_t i;

	/* Where libdwfl looks for files by build-id: the given directory, then the system's. */
	free(offline_debuginfo_path);
	if (asprintf(&offline_debuginfo_path, ":.debug:%s%s/usr/lib/debug",
		     debug_dir ? debug_dir : "", debug_dir ? ":" : "") < 0) {
		offline_debuginfo_path = NULL;
		errno = ENOMEM;
		return NULL;
	}
	dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl) {
		errno = ENOMEM;
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (i = 0; i < n; i++) {
		Dwfl_Module *mod = dwfl_report_module(dwfl, mods[i].path, mods[i].start, mods[i].end);
		uint8_t id[64];
		size_t len = 0;
		void **userdata;

		if (!mod) {
			jw_log(JW_LOG_WARN, "cannot use recorded module %s: %s", mods[i].path,
			       dwfl_errmsg(-1));
			continue;
		}
		dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		*userdata = (void *)&mods[i];
		while (mods[i].build_id && len < sizeof(id) &&
		       sscanf(mods[i].build_id + 2 * len, "%2hhx", &id[len]) == 1)
			len++;
		if (len)
			dwfl_module_report_build_id(mod, id, len, 0);
	}
	dwfl_report_end(dwfl, NULL, NULL);
	dwfl_getmodules(dwfl, warm_module, NULL, 0);
	return dwfl;
}

