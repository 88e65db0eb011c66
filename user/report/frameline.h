/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One frame as the stack log writes it (its tree line), and whose code it is (the rule of the
 * group key, and a flame graph's colours); the stack log's reader takes them from here too.
 */
#ifndef JW_FRAMELINE_H
#define JW_FRAMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

/*
 * Whether @fr is the system's, not the application's: the kernel, libc, ld.so, the vdso, code in
 * no module, CPython's interpreter (python3.X, libpython3.X.so: the program is its Python code),
 * and the distribution's shared libraries (a .so under /lib, /usr/lib and their 32/64 kin: GLib,
 * Qt, libuv, a Python extension of the standard library). JIT and Python frames are the
 * program's.
 */
bool jw_frame_is_system(const struct jw_frame *fr);

/* Whose code a frame is: jw_frame_is_system()'s rule, told apart for a flame graph's colours. */
enum jw_frame_owner {
	JW_OWNER_PROGRAM,	/* the program's executable and its own libraries */
	JW_OWNER_PYTHON,	/* a Python function */
	JW_OWNER_JIT,		/* JIT code named by a perf map */
	JW_OWNER_INTERPRETER,	/* CPython's interpreter */
	JW_OWNER_LIBC,		/* the C library, the dynamic loader, the vdso */
	JW_OWNER_LIBRARY,	/* the distribution's shared libraries */
	JW_OWNER_KERNEL,
	JW_OWNER_UNKNOWN,	/* code in no module */
	JW_OWNER_COUNT
};

enum jw_frame_owner jw_frame_owner(const struct jw_frame *fr);

/*
 * Writes one frame line of the tree, without indentation or newline, e.g.
 * "9 #02 pc 000090a9 /system/bin/appspawn(main+396)(55679d09...)". Returns @buf.
 */
char *jw_frame_line(const struct jw_frame *fr, uint64_t count, unsigned int depth, char *buf,
		    size_t len);

/* The same, as snprintf() does: the line's whole length, what fit written into @buf. */
size_t jw_frame_line_n(const struct jw_frame *fr, uint64_t count, unsigned int depth, char *buf,
		       size_t len);

#endif
