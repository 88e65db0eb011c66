/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python: CPython's evaluation loop, in the executable or in a shared libpython. The iteration is
 * bounded by the waits; since 3.11 a Python-to-Python call stays in one evaluation loop, so the
 * evaluations directly under the waits are the callbacks and coroutine steps the loop runs, and
 * the code object of the frame each evaluates names it (read by the kernel: see interp.bpf.h).
 * The same probe gives the thread's state, from which every sample reads the thread's Python
 * frames. The layout comes from the binary (pyruntime.h).
 */
#ifndef JW_PRESET_PYTHON_H
#define JW_PRESET_PYTHON_H

#include "loops/preset.h"
#include "loops/pyruntime.h"

/*
 * How _PyEval_EvalFrameDefault of a CPython laid out as @l leads to the code object it runs,
 * the thread's frames and an asyncio timer's due time.
 */
void jw_python_chain(const struct jw_py_layout *l, struct jw_arg_chain *chain);

/* Hooks _PyEval_EvalFrameDefault in @out->where, its layout read from that file. */
bool jw_python_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why it is python, for the log line: the version, or why its frames are not read. */
void jw_python_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
