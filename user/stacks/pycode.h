/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython code objects of one process named: the qualified name, the file, and the line of the
 * instruction a frame runs, from the code object's line table (read from the process's memory,
 * once per code object, checked again at each use since a freed one's address may be reused),
 * or, for a raw capture, from the names it recorded.
 */
#ifndef JW_PYCODE_H
#define JW_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "output/rawfile.h"
#include "loops/pyruntime.h"

/* CPython's evaluation function: its frames in a native stack run the Python frames. */
#define JW_PY_EVAL_FUNCTION "_PyEval_EvalFrameDefault"

struct jw_pycode;


/*
 * For process @pid, whose interpreter is module @module (its path as frames name it), laid out
 * as @l. NULL with errno set.
 */
struct jw_pycode *jw_pycode__new(pid_t pid, const char *module, const struct jw_py_layout *l);

/*
 * For a raw capture's @n names (copied), of a CPython in @module whose calls' entries are frames
 * of their own (@entry_own: 3.12 on), its evaluation function's code in @eval (@n_eval ranges).
 * NULL with errno set.
 */
struct jw_pycode *jw_pycode__new_names(const struct jw_raw_pyname *names, size_t n,
				       const char *module, bool entry_own,
				       const struct jw_raw_range *eval, size_t n_eval);

/*
 * Whether native frame @fr is a call of the evaluation function: by its name, or where the
 * binary has none for it, by its address in the function's parts.
 */
bool jw_pycode__is_eval(const struct jw_pycode *p, const struct jw_frame *fr);

/* What a raw capture records of the interpreter: its module, entries, evaluation code. */
const char *jw_pycode__module(const struct jw_pycode *p);
const struct jw_elf_range *jw_pycode__eval(const struct jw_pycode *p, size_t *n);

/* Whether a call's entry is a frame of its own (3.12 on), not its first Python frame. */
bool jw_pycode__entry_own(const struct jw_pycode *p);

void jw_pycode__free(struct jw_pycode *p);	/* NULL-safe */

/*
 * Names the frame running instruction @instr of code object @code: a JW_FRAME_PYTHON frame
 * (symbol the qualified name, module the file, src "file:line", pc the code object, rel_pc the
 * line) whose strings live as long as @p. false when @code is no code object it can read.
 */
bool jw_pycode__frame(struct jw_pycode *p, uint64_t code, uint64_t instr, struct jw_frame *fr);

/*
 * The line of code unit @index in CPython 3.11+'s location table @table (@len bytes; see
 * Objects/locations.md), counting from @first (co_firstlineno): the line of the entry that
 * covers it, or @first when none does.
 */
uint32_t jw_py_line(const uint8_t *table, size_t len, uint32_t first, uint64_t index);

#endif
