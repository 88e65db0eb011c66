/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One sample's stacks as named frames: the user stack by frame pointers or by DWARF CFI (the
 * copy patched where pending return probes replaced return addresses with the trampoline), or
 * in auto mode the better of the two, continued where they meet; then the kernel stack without
 * jankwatch's own frames above the scheduler. The reporter and the tracer name samples with it.
 */
#ifndef JW_STACKS_H
#define JW_STACKS_H

#include <stddef.h>

#include "jankwatch/abi.h"
#include "base/frame.h"
#include "stacks/ksyms.h"
#include "stacks/symbolize.h"

/* Room jw_stacks__frames() needs: the user frames with Python's, then the kernel frames. */
#define JW_MAX_FRAMES (JW_MAX_USER_FRAMES + JW_MAX_PY_FRAMES + JW_MAX_KERNEL_FRAMES)

struct jw_stacks;

/* @ks may be NULL (kernel frames by address). NULL with errno set on failure. */
struct jw_stacks *jw_stacks__new(const struct jw_ksyms *ks);
void jw_stacks__free(struct jw_stacks *st);	/* NULL-safe */

/*
 * Reads samples as taken on ELF machine @machine (a capture from another architecture) from
 * now on; this build's own until then. 0, or -ENOTSUP for a machine jankwatch does not know.
 */
int jw_stacks__set_machine(struct jw_stacks *st, unsigned int machine);

/* Names kernel frames with @ks from now on (NULL: by address). */
void jw_stacks__set_ksyms(struct jw_stacks *st, const struct jw_ksyms *ks);

/*
 * Names the frames of sample @s of the process @sym names (NULL: by address) into @frames (room
 * for JW_MAX_FRAMES), outermost first: the user stack from its root to the leaf, then the kernel
 * stack from the system call's entry to the leaf. Each call of CPython's evaluation function in
 * the user stack gives way to the Python frames it runs, when the sample carries them and they
 * can be named (jw_stacks_splice_python()). Returns how many.
 */
size_t jw_stacks__frames(struct jw_stacks *st, struct jw_symbolizer *sym,
			 const struct jw_sample_rec *s, struct jw_frame *frames);

/* The Python frames sample @s carries after its stack copy, innermost first: how many. */
size_t jw_sample_py_frames(const struct jw_sample_rec *s, struct jw_py_frame *out);

/* How the Python frames of a sample are named and put in place. */
struct jw_py_splice {
	bool entry_own;		/* 3.12 on: a call's entry is a frame of its own, no code */
	/* Whether native frame @fr is a call of the evaluation function. */
	bool (*is_eval)(void *ctx, const struct jw_frame *fr);
	/* Names Python frame @f into @out; false when it cannot. */
	bool (*name)(void *ctx, const struct jw_py_frame *f, struct jw_frame *out);
	void *ctx;
};

/*
 * Splices Python frames @py (@n_py, innermost first, as a sample carries them) into user frames
 * @fr (@n, outermost first; room for @n + @n_py): the k-th call of the evaluation function from
 * the leaf gives way to the frames of the k-th call the Python frames mark, outermost first, as
 * @how names them (a frame it cannot name is left out; a call none of whose frames it names
 * keeps its native frame). Returns the new count.
 */
size_t jw_stacks_splice_python(struct jw_frame *fr, size_t n, const struct jw_py_frame *py,
			       size_t n_py, const struct jw_py_splice *how);

/* Whether @symbol is where a thread's stack begins (_start, main's libc callers, start_thread). */
bool jw_symbol_is_thread_root(const char *symbol);

/* Whether @frames (@n, outermost first, as jw_stacks__frames() gives them) reach the root. */
bool jw_stacks_complete(const struct jw_frame *frames, size_t n);

#endif
