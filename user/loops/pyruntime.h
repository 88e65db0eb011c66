/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython's layout as its binary says it: the version from Py_Version; from 3.13 the offsets
 * from _Py_DebugOffsets at the start of _PyRuntime (what the interpreter publishes for
 * out-of-process readers); for 3.11 and 3.12, which publish none, a table per version checked
 * against what the binary does say (PyCode_Type's size and its member table). What the kernel
 * needs to walk a thread's frames and name a handler, and what user space needs to name a code
 * object: its name, file and line table.
 */
#ifndef JW_PYRUNTIME_H
#define JW_PYRUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jankwatch/abi.h"
#include "process/elfparts.h"

#define JW_PY_EVAL_PARTS 8

struct jw_py_layout {
	uint32_t hexversion;		/* PY_VERSION_HEX: 0x030b07f0 for 3.11.7 */
	unsigned int minor;		/* 11 for 3.11 */
	/* The thread's current frame: *(tstate + tstate_frame), then *(that + cframe_frame). */
	uint16_t tstate_frame;
	uint16_t cframe_frame;		/* JW_PY_NONE from 3.13 */
	uint16_t tstate_chunk;		/* the thread's data stack chunk (its frames) */
	/* _PyInterpreterFrame */
	uint16_t frame_code;
	uint16_t frame_previous;
	uint16_t frame_instr;
	uint16_t frame_localsplus;
	uint16_t frame_entry;		/* a call's entry byte (see jw_arg_chain) */
	uint16_t entry_value;
	bool entry_is_own_frame;	/* 3.12 on: the entry frame is the call's own, no code */
	uint64_t ref_tag;		/* 3.14: the tag bits of a stack reference */
	/* PyCodeObject */
	uint32_t code_filename;
	uint32_t code_name;
	uint32_t code_qualname;
	uint32_t code_firstlineno;
	uint32_t code_linetable;
	uint32_t code_adaptive;		/* where its instructions begin */
	/* objects: str (compact), bytes, float, type */
	uint32_t ob_type;
	uint32_t tp_name;
	uint32_t tp_basicsize;
	uint32_t str_length;
	uint32_t str_state;
	uint32_t str_ascii_size;	/* sizeof(PyASCIIObject): a compact ASCII str's characters */
	uint32_t str_compact_size;	/* sizeof(PyCompactUnicodeObject): a compact str's others */
	uint32_t str_utf8;		/* PyCompactUnicodeObject.utf8 */
	uint32_t bytes_size;
	uint32_t bytes_data;
	uint32_t float_value;
	/*
	 * The code of _PyEval_EvalFrameDefault, as ELF addresses: the function's own, then the
	 * parts the compiler split off it (a PGO build's cold part, where Debian's 3.14 keeps most
	 * of its instructions), whose return addresses are its frames' as much as its own are.
	 */
	struct jw_elf_range eval[JW_PY_EVAL_PARTS];
	size_t n_eval;
};

/*
 * Reads the layout of the CPython in ELF file @path (the file with _PyEval_EvalFrameDefault).
 * 0; -ENOTSUP when it is a version or build jankwatch cannot read (a free-threaded one, one
 * before 3.11, one whose layout is not what its version's table says), -ENOENT when it is no
 * CPython, -errno when it cannot be read; then @why says so in a phrase ("Python 3.13t is
 * free-threaded").
 */
int jw_py_layout_read(const char *path, struct jw_py_layout *out, char *why, size_t len);

/* Bytes of _Py_DebugOffsets read: past every part jankwatch uses. */
#define JW_PY_DEBUG_READ 512

/*
 * The layout of CPython 3.@l->minor (@l->hexversion set) from @d, the first JW_PY_DEBUG_READ
 * bytes of its _Py_DebugOffsets. 0, or -ENOTSUP with @why said, as jw_py_layout_read().
 */
int jw_py_layout_from_debug(const uint8_t *d, struct jw_py_layout *l, char *why, size_t len);

/* Whether ELF address @addr of the file @l was read from is in one of its eval[] ranges. */
bool jw_py_in_eval(const struct jw_py_layout *l, uint64_t addr);

/* The kernel's part of @l into a naming chain for _PyEval_EvalFrameDefault's entry. */
void jw_py_layout_chain(const struct jw_py_layout *l, struct jw_arg_chain *chain);

#endif
