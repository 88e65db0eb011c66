// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "stacks/unwind.h"

/* Our one "thread": the sample's. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct jw_unwinder *u = arg;

	(void)dwfl;
	/* Called with *thread_argp NULL first; the second call ends the list. */
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->in ? u->in->tid : 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct jw_unwinder *u = arg;

	(void)dwfl;
	if (!u->in || u->in->tid != tid)
		return false;
	*thread_argp = u;
	return true;
}

/* Reads one word of the copied stack; addresses outside it are unknown. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct jw_unwind_input *in = ((struct jw_unwinder *)arg)->in;

	(void)dwfl;
	if (!in || addr < in->base || addr - in->base > in->stack_size ||
	    in->stack_size - (addr - in->base) < sizeof(*result))
		return false;
	memcpy(result, in->stack + (addr - in->base), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct jw_unwind_input *in = ((struct jw_unwinder *)arg)->in;

	if (!in || !dwfl_thread_state_registers(thread, 0, in->n_regs, in->regs))
		return false;
	/* Given apart: on arm64 it has no DWARF number the registers above could carry. */
	dwfl_thread_state_register_pc(thread, in->pc);
	return true;
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

int jw_unwind_attach(struct jw_unwinder *u, Dwfl *dwfl, pid_t pid)
{
	u->in = NULL;
	u->attached = dwfl_attach_state(dwfl, NULL, pid, &callbacks, u);
	if (!u->attached) {
		jw_log(JW_LOG_DEBUG, "no DWARF unwinding for pid %d: %s", pid, dwfl_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

struct frames {
	uint64_t *pcs;
	bool *activation;
	size_t n;
	size_t max;
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	bool activation;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	f->pcs[f->n] = pc;
	f->activation[f->n] = activation;
	/* The bound: a corrupt stack may loop. */
	return ++f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t jw_unwind(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
		 uint64_t *pcs, bool *activation, size_t max)
{
	struct frames f = { .pcs = pcs, .activation = activation, .max = max };

	if (!u->attached || !max)
		return 0;
	u->in = in;
	/* Ends with an error where the copy or the CFI runs out; the frames so far stand. */
	dwfl_getthread_frames(dwfl, in->tid, on_frame, &f);
	u->in = NULL;
	return f.n;
}
