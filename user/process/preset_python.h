/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python: CPython's evaluation loop, in the executable or in a shared libpython. The iteration is
 * bounded by the waits; since 3.11 a Python-to-Python call stays in one evaluation loop, so the
 * evaluations directly under the waits are the callbacks and coroutine steps the loop runs, and
 * the code object of the frame each evaluates names it (read by the kernel: see interp.bpf.h).
 */
#ifndef JW_PRESET_PYTHON_H
#define JW_PRESET_PYTHON_H

#include "process/preset.h"

/* The CPython version a file's name says (python3.11, libpython3.11.so.1.0): 311; or -1. */
int jw_python_version(const char *path);

/*
 * How CPython @version's _PyEval_EvalFrameDefault leads to the code object it runs, and where
 * that keeps its names. 0, or -ENOTSUP for a version whose layout is not known (only 3.11 is).
 */
int jw_python_chain(int version, struct jw_arg_chain *chain);

/* Hooks _PyEval_EvalFrameDefault in @out->where, its version read from the file names. */
bool jw_python_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why it is python, for the log line. */
void jw_python_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
