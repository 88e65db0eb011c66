/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User addresses of one process named with elfutils: module path, GNU build-id, the module's
 * ELF address, function+offset. One Dwfl per process, refreshed when an address falls in no
 * module it knows (the process mapped something new, or exec'd). Addresses in no ELF segment
 * are looked up in the process's perf map (JIT code, see perfmap.h).
 */
#ifndef JW_SYMBOLIZE_H
#define JW_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"

struct jw_unwind_input;
struct jw_raw_module;
struct jw_raw_pyname;
struct jw_raw_range;
struct jw_pycode;

struct jw_symbolizer;

/*
 * Reads process @pid's mappings and opens every mapped ELF file now, so that addresses can
 * still be named after the process exits. NULL with errno set on failure.
 */
struct jw_symbolizer *jw_symbolizer__new(pid_t pid);

/* NULL-safe. */
void jw_symbolizer__free(struct jw_symbolizer *s);

/*
 * Every function below takes a NULL @s (a process whose mappings could not be read, or not yet):
 * frames then carry their address only, unwinding gives none, the modules are none.
 */

/*
 * Names the functions @names (@n of them, living as long as @s) of the file whose base name is
 * @file's where its symbols do not: a preset's names for a stripped library's code.
 */
void jw_symbolizer__name_code(struct jw_symbolizer *s, const char *file,
			      const struct jw_code_name *names, size_t n);

/*
 * Names user address @pc. @return_address: @pc is a caller's return address, so the call
 * instruction is looked up (pc - 1). Never fails: an unknown module leaves fr->module NULL, an
 * unknown function fr->symbol NULL. JIT code the perf map names is a JW_FRAME_JIT frame with
 * no module, its function in fr->symbol and its source in fr->src. The strings live as long
 * as @s.
 */
void jw_symbolizer__frame(struct jw_symbolizer *s, uint64_t pc, bool return_address,
			  struct jw_frame *fr);

/*
 * Makes the process's Dwfl anew when the debug file store (debuginfo.h) fetched a file since
 * it was made: what libdwfl found missing it remembers as missing. NULL-safe.
 */
void jw_symbolizer__debug_refresh(struct jw_symbolizer *s);

/*
 * How many times naming a frame found its module's debug file still being fetched, so far (all
 * symbolizers): a report whose naming moved it may be better written once the fetch is done.
 */
uint64_t jw_symbolizer_debug_asks(void);

/*
 * The namer of the process's CPython code objects, whose interpreter is the module return
 * address @pc is in: made at the first call from that file's layout (pyruntime.h); NULL when
 * there is none. A raw capture's symbolizer has the names it recorded instead.
 */
struct jw_pycode *jw_symbolizer__python(struct jw_symbolizer *s, uint64_t pc);

/*
 * An offline symbolizer's Python names, from its capture (as jw_pycode__new_names() takes
 * them). 0 or -ENOMEM.
 */
int jw_symbolizer__set_python_names(struct jw_symbolizer *s, const struct jw_raw_pyname *names,
				    size_t n, const char *module, bool entry_own,
				    const struct jw_raw_range *eval, size_t n_eval);

/* The process's namer of CPython code objects if one was made (no new one). */
struct jw_pycode *jw_symbolizer__python_made(struct jw_symbolizer *s);

/* The build-id of the process's main executable as hex, or NULL. Lives as long as @s. */
const char *jw_symbolizer__exe_build_id(struct jw_symbolizer *s);

/*
 * Unwinds a copied user stack with DWARF CFI (see unwind.h) into @pcs, leaf first; @activation
 * says which pcs are not return addresses. Returns the number of frames (0 when it cannot).
 */
size_t jw_symbolizer__unwind(struct jw_symbolizer *s, const struct jw_unwind_input *in,
			     uint64_t *pcs, bool *activation, size_t max);

/*
 * The process's mapped modules (path, build-id, address range) as @s knows them, for a raw
 * capture: a malloc'd array in @mods whose strings live as long as @s. 0 or -ENOMEM.
 */
int jw_symbolizer__modules(struct jw_symbolizer *s, struct jw_raw_module **mods, size_t *n);

/*
 * A symbolizer for process @pid as a raw capture recorded it: @n modules, the executable's path
 * @exe; files are found at their recorded paths when their build-ids match, else by build-id
 * under @debug_dir (may be NULL) and /usr/lib/debug, or from debuginfod. @mods must outlive the
 * symbolizer. NULL with errno set.
 */
struct jw_symbolizer *jw_symbolizer__new_offline(pid_t pid, const struct jw_raw_module *mods,
						 size_t n, const char *exe,
						 const char *debug_dir);

#endif
