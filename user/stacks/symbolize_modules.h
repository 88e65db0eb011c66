/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's modules reported to libdwfl, live or recorded: the symbolizer's Dwfl made. */
#ifndef JW_SYMBOLIZE_MODULES_H
#define JW_SYMBOLIZE_MODULES_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <sys/types.h>

#include "output/rawfile.h"

/* A Dwfl of process @pid's mappings, each module's file opened now. NULL with errno set. */
Dwfl *jw_dwfl_report_process(pid_t pid);

/*
 * A Dwfl of @n recorded modules (they must outlive it): a file at its recorded path when its
 * build-id matches, else by build-id in @debug_dir (may be NULL), /usr/lib/debug and debuginfod
 * (DEBUGINFOD_URLS); the vdso this process's own when it is the same. NULL with errno set.
 */
Dwfl *jw_dwfl_report_recorded(const struct jw_raw_module *mods, size_t n, const char *debug_dir);

#endif
