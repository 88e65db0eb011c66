// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/pycode.h"
#include "stacks/regs.h"
#include "stacks/returns.h"
#include "stacks/stacks.h"
#include "stacks/unwind.h"

/* Leaf-first user pcs of one sample, and which of them are not return addresses. */
struct user_stack {
	uint64_t pcs[JW_MAX_USER_FRAMES];
	bool activation[JW_MAX_USER_FRAMES];
	size_t n;
};

struct jw_stacks {
	const struct jw_ksyms *ksyms;	/* may be NULL */
	const struct jw_ureg_layout *regs;	/* the samples' architecture */
	uint64_t uregs[JW_UREG_MAX];	/* scratch: a sample's registers, patched */
	uint8_t *stack;			/* scratch: a sample's stack copy, patched */
	struct user_stack fp;		/* scratch: the frame-pointer stack of a sample */
	struct user_stack dw;		/* scratch: the DWARF stack of a sample */
};

struct jw_stacks *jw_stacks__new(const struct jw_ksyms *ks)
{
	struct jw_stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->stack = malloc(JW_MAX_STACK_BYTES);
	if (!st->stack) {
		free(st);
		errno = ENOMEM;
		return NULL;
	}
	st->ksyms = ks;
	st->regs = jw_ureg_layout(JW_MACHINE);
	return st;
}

int jw_stacks__set_machine(struct jw_stacks *st, unsigned int machine)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(machine);

	if (!l)
		return -ENOTSUP;
	st->regs = l;
	return 0;
}

void jw_stacks__free(struct jw_stacks *st)
{
	if (!st)
		return;
	free(st->stack);
	free(st);
}

void jw_stacks__set_ksyms(struct jw_stacks *st, const struct jw_ksyms *ks)
{
	st->ksyms = ks;
}

/*
 * The caller of a sample's leaf that a frame-pointer walk misses, or 0. Where calls leave the
 * return address in a link register (arm64), the kernel's walk starts with the pc and then
 * follows the frame records from the frame pointer: a leaf function that saves no record, or a
 * function still in its prologue or already past its epilogue, leaves its caller only in the
 * link register. That register is the missing caller unless the walk has it next already, or it
 * points into the leaf's own function (the leaf called something that returned).
 */
static uint64_t missed_leaf_caller(const struct jw_stacks *st, struct jw_symbolizer *sym,
				   const struct jw_sample_rec *s)
{
	struct jw_frame leaf, caller;
	uint64_t lr;

	if (st->regs->lr < 0 || !s->n_user || !sym)
		return 0;
	lr = s->regs[st->regs->lr] & st->regs->ra_mask;
	if (!lr || (s->n_user > 1 && s->user_ips[1] == lr))
		return 0;
	jw_symbolizer__frame(sym, s->user_ips[0], false, &leaf);
	jw_symbolizer__frame(sym, lr, true, &caller);
	if (!leaf.symbol || !caller.symbol || !caller.module)
		return 0;
	if (!strcmp(leaf.symbol, caller.symbol) && leaf.module == caller.module)
		return 0;
	return lr;
}

static void fp_stack(const struct jw_stacks *st, struct jw_symbolizer *sym,
		     const struct jw_sample_rec *s, struct user_stack *out)
{
	uint64_t caller = missed_leaf_caller(st, sym, s);
	size_t i, n = s->n_user < JW_MAX_USER_FRAMES ? s->n_user : JW_MAX_USER_FRAMES;
	size_t k = 0, rets = s->n_rets < JW_MAX_NEST ? s->n_rets : JW_MAX_NEST;

	out->n = 0;
	for (i = 0; i < n && out->n < JW_MAX_USER_FRAMES; i++) {
		out->pcs[out->n] = s->user_ips[i];
		/*
		 * The uprobes trampoline stands for the k-th pending return (both innermost first)
		 * where the kernel's programs could not put it back themselves (no bpf_loop there).
		 */
		if (s->tramp && s->user_ips[i] == s->tramp && k < rets)
			out->pcs[out->n] = s->ret_addr[k++];
		out->activation[out->n++] = i == 0;
		if (i == 0 && caller && out->n < JW_MAX_USER_FRAMES) {
			out->pcs[out->n] = caller;
			out->activation[out->n++] = false;
		}
	}
}

/*
 * Unwinds the sample's stack copy with DWARF CFI, after putting back the return addresses that
 * pending return probes replaced with the uprobes trampoline.
 */
static void dwarf_stack(struct jw_stacks *st, struct jw_symbolizer *sym,
			const struct jw_sample_rec *s, struct user_stack *out)
{
	const struct jw_ureg_layout *l = st->regs;
	uint64_t base = s->regs[l->sp] - s->stack_below;
	struct jw_unwind_input in = {
		.tid = s->hdr.tid,
		.regs = st->uregs,
		.n_regs = l->count,
		.layout = l,
		.base = base,
		.stack = st->stack,
		.stack_size = s->stack_size,
	};

	out->n = 0;
	if (!s->stack_size || s->stack_size > JW_MAX_STACK_BYTES || s->stack_below > l->red_zone ||
	    s->stack_below >= s->stack_size || s->hdr.size < sizeof(*s) + s->stack_size)
		return;
	memcpy(st->stack, s->stack, s->stack_size);
	memcpy(st->uregs, s->regs, sizeof(st->uregs));
	if (l->lr >= 0)
		st->uregs[l->lr] &= l->ra_mask;
	jw_put_back_returns(l, s, base, st->stack, st->uregs);
	in.pc = st->uregs[l->ip];
	out->n = jw_symbolizer__unwind(sym, &in, out->pcs, out->activation,
				       JW_MAX_USER_FRAMES);
}

static bool reaches_root(struct jw_symbolizer *sym, const struct user_stack *st)
{
	struct jw_frame fr;

	if (!st->n)
		return false;
	jw_symbolizer__frame(sym, st->pcs[st->n - 1], !st->activation[st->n - 1], &fr);
	return jw_symbol_is_thread_root(fr.symbol);
}

/*
 * The user stack of a sample in auto mode: the DWARF one where it reaches the thread's root;
 * else the DWARF one continued by the frame-pointer chain from where they meet (code without
 * CFI, a copy too short); else whichever reaches the root; else the DWARF one.
 */
static const struct user_stack *pick_stack(struct jw_symbolizer *sym, struct user_stack *dw,
					   const struct user_stack *fp)
{
	size_t j, k;

	if (!dw->n)
		return fp;
	if (!fp->n || reaches_root(sym, dw))
		return dw;
	for (j = 1; j < fp->n; j++) {
		if (fp->pcs[j] != dw->pcs[dw->n - 1])
			continue;
		for (k = j + 1; k < fp->n && dw->n < JW_MAX_USER_FRAMES; k++) {
			dw->pcs[dw->n] = fp->pcs[k];
			dw->activation[dw->n++] = false;
		}
		return dw;
	}
	return reaches_root(sym, fp) ? fp : dw;
}

/*
 * The index of a sample's innermost kernel frame worth showing. A blocked thread's stack was
 * taken by the sched_switch tracepoint: the frames above the scheduler (the tracepoint and the
 * BPF program) are jankwatch's own and are dropped.
 */
static int kernel_leaf(const struct jw_stacks *st, const struct jw_sample_rec *s)
{
	int i, n = s->n_kernel < JW_MAX_KERNEL_FRAMES ? s->n_kernel : JW_MAX_KERNEL_FRAMES;

	if (s->kind == JW_SAMPLE_ONCPU)
		return 0;
	for (i = 0; i < n; i++)
		if (jw_ksyms__in_sched(st->ksyms, s->kernel_ips[i]))
			return i;
	return 0;
}

size_t jw_sample_py_frames(const struct jw_sample_rec *s, struct jw_py_frame *out)
{
	size_t n;

	if (s->stack_size > JW_MAX_STACK_BYTES || s->hdr.size <= sizeof(*s) + s->stack_size)
		return 0;
	n = (s->hdr.size - sizeof(*s) - s->stack_size) / sizeof(*out);
	if (n > JW_MAX_PY_FRAMES)
		n = JW_MAX_PY_FRAMES;
	memcpy(out, s->stack + s->stack_size, n * sizeof(*out));
	return n;
}

/* One call of the evaluation function's Python frames: @py[start, start + len), innermost first. */
struct py_call {
	size_t start;
	size_t len;
};

/* The calls @py (@n) marks, innermost first, into @calls (room for @n + 1): how many. */
static size_t py_calls(const struct jw_py_frame *py, size_t n, bool entry_own, struct py_call *calls)
{
	size_t i = 0, k = 0;

	while (i < n) {
		calls[k].start = i;
		while (i < n && !(py[i].code & JW_PY_FRAME_ENTRY))
			i++;
		/* 3.11: the marked frame is the call's first; 3.12 on, the call's own, no code. */
		if (i < n && !entry_own)
			i++;
		calls[k].len = i - calls[k].start;
		if (i < n && entry_own)
			i++;
		k++;
	}
	return k;
}

size_t jw_stacks_splice_python(struct jw_frame *fr, size_t n, const struct jw_py_frame *py,
			       size_t n_py, const struct jw_py_splice *how)
{
	struct py_call calls[JW_MAX_PY_FRAMES + 1];
	struct jw_frame named[JW_MAX_PY_FRAMES];
	size_t n_calls, k = 0, i, j, m, total = n;

	if (n_py > JW_MAX_PY_FRAMES)
		n_py = JW_MAX_PY_FRAMES;
	n_calls = py_calls(py, n_py, how->entry_own, calls);
	/* From the leaf: the k-th evaluation frame runs the k-th call. */
	for (i = n; i-- > 0 && k < n_calls;) {
		if (!how->is_eval(how->ctx, &fr[i]))
			continue;
		m = 0;
		for (j = calls[k].start + calls[k].len; j-- > calls[k].start;) {
			struct jw_py_frame f = { py[j].code & ~JW_PY_FRAME_ENTRY, py[j].instr };

			if (how->name(how->ctx, &f, &named[m]))
				m++;
		}
		k++;
		if (!m)
			continue;
		memmove(&fr[i + m], &fr[i + 1], (total - i - 1) * sizeof(*fr));
		memcpy(&fr[i], named, m * sizeof(*fr));
		total += m - 1;
	}
	return total;
}

static bool name_py(void *ctx, const struct jw_py_frame *f, struct jw_frame *out)
{
	return jw_pycode__frame(ctx, f->code, f->instr, out);
}

static bool is_eval(void *ctx, const struct jw_frame *fr)
{
	return jw_pycode__is_eval(ctx, fr);
}

/*
 * Puts sample @s's Python frames, if any, into its user frames @frames (@n): the interpreter's
 * module is the one of a frame of CPython's own API ("Py..."), whose namer the symbolizer has.
 */
static size_t splice_sample(struct jw_symbolizer *sym, const struct jw_sample_rec *s,
			    struct jw_frame *frames, size_t n)
{
	struct jw_py_frame py[JW_MAX_PY_FRAMES];
	struct jw_py_splice how = { .is_eval = is_eval, .name = name_py };
	size_t n_py = jw_sample_py_frames(s, py), k;
	struct jw_pycode *pyc = NULL;

	for (k = n; n_py && !pyc && k-- > 0;)
		if (frames[k].kind == JW_FRAME_NATIVE && frames[k].symbol && frames[k].module &&
		    (!strncmp(frames[k].symbol, "Py", 2) || !strncmp(frames[k].symbol, "_Py", 3)))
			pyc = jw_symbolizer__python(sym, frames[k].pc);
	if (!pyc)
		return n;
	how.entry_own = jw_pycode__entry_own(pyc);
	how.ctx = pyc;
	return jw_stacks_splice_python(frames, n, py, n_py, &how);
}

size_t jw_stacks__frames(struct jw_stacks *st, struct jw_symbolizer *sym,
			 const struct jw_sample_rec *s, struct jw_frame *frames)
{
	const struct user_stack *us = &st->fp;
	size_t n = 0;
	int i;

	fp_stack(st, sym, s, &st->fp);
	st->dw.n = 0;
	if (s->mode != JW_UNWIND_FP)
		dwarf_stack(st, sym, s, &st->dw);
	if (s->mode == JW_UNWIND_DWARF)
		us = &st->dw;
	else if (s->mode == JW_UNWIND_AUTO)
		us = pick_stack(sym, &st->dw, &st->fp);
	for (i = (int)us->n - 1; i >= 0; i--)
		jw_symbolizer__frame(sym, us->pcs[i], !us->activation[i], &frames[n++]);
	n = splice_sample(sym, s, frames, n);
	/* Bounded as kernel_leaf() bounds it: a record's count is not trusted past its array. */
	i = s->n_kernel < JW_MAX_KERNEL_FRAMES ? (int)s->n_kernel : JW_MAX_KERNEL_FRAMES;
	for (i--; i >= kernel_leaf(st, s); i--)
		jw_ksyms__frame(st->ksyms, s->kernel_ips[i], &frames[n++]);
	return n;
}

bool jw_symbol_is_thread_root(const char *symbol)
{
	/*
	 * The first frames of the main thread and of every other thread: glibc's; musl's (the
	 * program's crt1 calls _start_c; its threads start in its libc.so's static functions, named
	 * only in a static program's symbols); bionic's (__libc_init under _start, __start_thread
	 * and __pthread_start under clone).
	 */
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
		"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
		"thread_start", "_start_c", "__libc_init", "__start_thread", "__pthread_start",
	};
	size_t i;

	if (!symbol)
		return false;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(symbol, roots[i]))
			return true;
	return false;
}

bool jw_stacks_complete(const struct jw_frame *frames, size_t n)
{
	return n && frames[0].kind != JW_FRAME_KERNEL && jw_symbol_is_thread_root(frames[0].symbol);
}
