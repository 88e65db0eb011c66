// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
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

static bool has_cfi(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_CFI *cfis[2];
	Dwarf_Frame *frame;
	Dwarf_Addr bias[2];
	size_t i;

	if (!mod)
		return false;
	cfis[0] = dwfl_module_eh_cfi(mod, &bias[0]);
	cfis[1] = dwfl_module_dwarf_cfi(mod, &bias[1]);
	for (i = 0; i < 2; i++) {
		if (cfis[i] && dwarf_cfi_addrframe(cfis[i], pc - bias[i], &frame) == 0) {
			free(frame);
			return true;
		}
	}
	return false;
}

/* Whether @a and @b are in one function, as far as the symbol tables tell. */
static bool same_function(Dwfl *dwfl, Dwarf_Addr a, Dwarf_Addr b)
{
	Dwfl_Module *ma = dwfl_addrmodule(dwfl, a), *mb = dwfl_addrmodule(dwfl, b);
	GElf_Sym sa, sb;
	GElf_Off oa, ob;
	const char *na, *nb;

	if (!ma || ma != mb)
		return false;
	na = dwfl_module_addrinfo(ma, a, &oa, &sa, NULL, NULL, NULL);
	nb = dwfl_module_addrinfo(mb, b, &ob, &sb, NULL, NULL, NULL);
	return na && nb && a - oa == b - ob;
}

/* The link register when the leaf is a function without CFI that saved nothing; else 0. */
static uint64_t frameless_leaf_caller(Dwfl *dwfl, const struct jw_unwind_input *in)
{
	const struct jw_ureg_layout *l = in->layout;
	uint64_t lr, fp, saved;

	if (!l || l->lr < 0 || (size_t)l->lr >= in->n_regs || l->fp >= in->n_regs ||
	    l->sp >= in->n_regs)
		return 0;
	lr = in->regs[l->lr];
	fp = in->regs[l->fp];
	if (!lr || has_cfi(dwfl, in->pc) || !has_cfi(dwfl, lr) || same_function(dwfl, in->pc, lr))
		return 0;
	/* Its frame record saved at the frame pointer: it is not frameless. */
	if (fp >= in->regs[l->sp] && fp >= in->base && fp - in->base < in->stack_size &&
	    in->stack_size - (fp - in->base) >= 2 * sizeof(saved)) {
		memcpy(&saved, in->stack + (fp - in->base) + sizeof(saved), sizeof(saved));
		if (saved == lr)
			return 0;
	}
	return lr;
}

static size_t unwind_from(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
			  uint64_t *pcs, bool *activation, size_t max)
{
	struct frames f = { .pcs = pcs, .activation = activation, .max = max };

	u->in = in;
	/* Ends with an error where the copy or the CFI runs out; the frames so far stand. */
	dwfl_getthread_frames(dwfl, in->tid, on_frame, &f);
	u->in = NULL;
	return f.n;
}

size_t jw_unwind(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
		 uint64_t *pcs, bool *activation, size_t max)
{
	struct jw_unwind_input from_caller;
	uint64_t caller;
	size_t n;

	if (!u->attached || !max)
		return 0;
	caller = max > 1 ? frameless_leaf_caller(dwfl, in) : 0;
	if (!caller)
		return unwind_from(u, dwfl, in, pcs, activation, max);
	pcs[0] = in->pc;
	activation[0] = true;
	from_caller = *in;
	from_caller.pc = caller;
	n = unwind_from(u, dwfl, &from_caller, pcs + 1, activation + 1, max - 1);
	if (n)
		activation[1] = false;	/* a return address, though libdwfl began there */
	return n + 1;
}
