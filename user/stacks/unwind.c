// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "base/log.h"
#include "stacks/modsyms.h"
#include "stacks/unwind.h"

/* Registers a frame's state is read into, by DWARF number (arm64 has 33 for the unwinder). */
#define MAX_REGS 64
/* The longest stretch of a function's code (entry to the frame's pc) read for its prologue. */
#define MAX_PROLOGUE_CODE 65536
/* The frames guessed, at most, where no branch leads to a frame's pc (arch.h). */
#define JW_GUESSES 4

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

/* One word of @in's stack copy at @addr into @v; false outside it. */
static bool stack_word(const struct jw_unwind_input *in, uint64_t addr, uint64_t *v)
{
	if (addr < in->base || addr - in->base > in->stack_size ||
	    in->stack_size - (addr - in->base) < sizeof(*v))
		return false;
	memcpy(v, in->stack + (addr - in->base), sizeof(*v));
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct jw_unwind_input *in = ((struct jw_unwinder *)arg)->in;

	(void)dwfl;
	return in && stack_word(in, addr, result);
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
	Dwfl *dwfl;
	struct jw_modsyms *syms;
	const struct jw_unwind_input *in;
	uint64_t *pcs;
	bool *activation;
	size_t n;
	size_t max;
	bool first_returns;	/* the first frame is a return address (libdwfl takes it for a pc) */
	/* The last frame was in code without CFI whose prologue gave its caller: from there. */
	bool stepped;
	struct jw_unwind_input next;
	uint64_t next_regs[MAX_REGS];
};

static bool has_cfi(Dwfl *dwfl, Dwarf_Addr pc);
static bool prologue_step(Dwfl *dwfl, struct jw_modsyms *syms,
			  const struct jw_unwind_input *in, const uint64_t *regs, uint64_t pc,
			  bool activation, struct jw_unwind_input *next, uint64_t *next_regs);

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	uint64_t regs[MAX_REGS] = { 0 };
	bool activation;
	Dwarf_Addr pc;
	size_t r;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (f->n == 0 && f->first_returns)
		activation = false;
	f->pcs[f->n] = pc;
	f->activation[f->n] = activation;
	/* The bound: a corrupt stack may loop. */
	if (++f->n >= f->max)
		return DWARF_CB_ABORT;
	/*
	 * Code without CFI: libdwfl's fallback would follow the frame pointer, which such code
	 * may use for anything else (musl's clock_gettime keeps its argument there). Its frame
	 * is read from its prologue instead, from the registers it has here; where the prologue
	 * cannot say (JIT code, which no module holds), the fallback goes on.
	 */
	if (has_cfi(f->dwfl, activation ? pc : pc - 1) || f->in->n_regs > MAX_REGS)
		return DWARF_CB_OK;
	memcpy(regs, f->in->regs, f->in->n_regs * sizeof(*regs));
	for (r = 0; r < f->in->n_regs; r++) {
		Dwarf_Word v;

		if (dwfl_frame_reg(state, r, &v) == 0)
			regs[r] = v;
	}
	f->stepped = prologue_step(f->dwfl, f->syms, f->in, regs, pc, activation, &f->next,
				   f->next_regs);
	return f->stepped ? DWARF_CB_ABORT : DWARF_CB_OK;
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

/*
 * The entry of the function @a is in, into *@entry, and its module: its symbol's start, or with
 * no symbol the call target below it (entries.h); false when neither is known.
 */
static bool entry_of(Dwfl *dwfl, struct jw_modsyms *syms, Dwarf_Addr a, Dwfl_Module **mod,
		     GElf_Addr *entry)
{
	GElf_Sym sym;
	GElf_Off off;

	*mod = dwfl_addrmodule(dwfl, a);
	if (!*mod)
		return false;
	if (jw_modsyms_addrinfo(syms, *mod, a, &off, &sym)) {
		*entry = a - off;
		return true;
	}
	return jw_modsyms_unnamed_entry(syms, *mod, a, entry);
}

/* Whether @a and @b are in one function, as far as the symbols and the calls tell. */
static bool same_function(Dwfl *dwfl, struct jw_modsyms *syms, Dwarf_Addr a, Dwarf_Addr b)
{
	Dwfl_Module *ma, *mb;
	GElf_Addr ea, eb;

	return entry_of(dwfl, syms, a, &ma, &ea) && entry_of(dwfl, syms, b, &mb, &eb) &&
	       ma == mb && ea == eb;
}

/*
 * Where @len bytes of code at @addr (the ELF's own addresses) are in @elf's image: in the
 * executable section that holds them, or, in an ELF without section headers (the vdso, read
 * from the process's memory), in the executable segment; NULL when neither holds them.
 */
static const uint8_t *code_bytes(Elf *elf, GElf_Addr addr, size_t len)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || sh.sh_size - (addr - sh.sh_addr) < len)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size != sh.sh_size)
			return NULL;
		return (const uint8_t *)data->d_buf + (addr - sh.sh_addr);
	}
	if (elf_getphdrnum(elf, &n))
		return NULL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz ||
		    ph.p_filesz - (addr - ph.p_vaddr) < len)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset + (addr - ph.p_vaddr), len ? len : 1,
					    ELF_T_BYTE);
		return data ? data->d_buf : NULL;
	}
	return NULL;
}

/* The same bytes in a new buffer (at least one byte long), or NULL. */
static uint8_t *code_at(Elf *elf, GElf_Addr addr, size_t len)
{
	const uint8_t *bytes = code_bytes(elf, addr, len);
	uint8_t *code;

	if (!bytes)
		return NULL;
	code = malloc(len ? len : 1);
	if (code)
		memcpy(code, bytes, len);
	return code;
}

/*
 * The code of the function @pc is in, from its entry (entry_of()) up to @pc, into a new buffer
 * (*@len bytes); NULL when its entry or its bytes are not there.
 */
static uint8_t *code_to(Dwfl *dwfl, struct jw_modsyms *syms, uint64_t pc, bool activation,
		        size_t *len)
{
	uint64_t at = activation ? pc : pc - 1;
	Dwfl_Module *mod;
	GElf_Addr bias, entry;
	uint8_t *code;
	size_t off;
	Elf *elf;

	if (!entry_of(dwfl, syms, at, &mod, &entry))
		return NULL;
	off = (size_t)(pc - entry);	/* from the entry to pc itself */
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || off > MAX_PROLOGUE_CODE)
		return NULL;
	code = code_at(elf, pc - off - bias, off);
	if (code)
		*len = off;
	return code;
}

/* Whether the return address @ra follows a call instruction in a module's code. */
static bool follows_call(Dwfl *dwfl, uint64_t ra)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, ra);
	static const size_t lens[] = { 8, 4 };
	const uint8_t *bytes;
	GElf_Addr bias;
	Elf *elf;
	size_t i;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)))
		return false;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		bytes = ra - bias >= lens[i] ? code_bytes(elf, ra - bias - lens[i], lens[i]) : NULL;
		if (bytes)
			return jw_arch_after_call(bytes, lens[i]);
	}
	return false;
}

/*
 * The frame at @pc in code without CFI, from its function's code (arch.h); -ENOENT: not known,
 * -EAGAIN: in a block no branch before it reaches (guessed_frame()).
 */
static int frame_at(Dwfl *dwfl, struct jw_modsyms *syms, uint64_t pc, bool activation,
		    struct jw_arch_frame *fr)
{
	size_t len = 0;
	uint8_t *code = code_to(dwfl, syms, pc, activation, &len);
	int ret;

	if (!code)
		return -ENOENT;
	ret = jw_arch_prologue_frame(code, len, fr);
	free(code);
	return ret;
}

static size_t unwind_from(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
			  struct frames *f)
{
	u->in = in;
	/* Ends with an error where the copy or the CFI runs out; the frames so far stand. */
	dwfl_getthread_frames(dwfl, in->tid, on_frame, f);
	u->in = NULL;
	return f->n;
}

/* The return address frame @fr gives, into *@ra; false when it cannot be read or is 0. */
static bool return_of(const struct jw_unwind_input *in, const struct jw_ureg_layout *l,
		      const uint64_t *regs, bool activation, const struct jw_arch_frame *fr,
		      uint64_t *ra)
{
	/* A return address still in its register: only where the frame is the leaf's. */
	if (fr->ra_reg >= 0 ? !activation || (size_t)fr->ra_reg >= in->n_regs :
			      !stack_word(in, regs[l->sp] + fr->ra_at, ra))
		return false;
	if (fr->ra_reg >= 0)
		*ra = regs[fr->ra_reg];
	if (l->lr >= 0)
		*ra &= l->ra_mask;	/* arm64: the bits pointer authentication signed it with */
	return *ra != 0;
}

/*
 * The frame at @pc where no branch before it leads (arch.h: a loop's body, a jump table's
 * case): of the frames its code had before, the most recent whose return address follows a
 * call instruction in another function, into @fr and *@ra; false when none does.
 */
static bool guessed_frame(Dwfl *dwfl, struct jw_modsyms *syms, const struct jw_unwind_input *in,
			  const struct jw_ureg_layout *l, const uint64_t *regs, uint64_t pc,
			  bool activation, struct jw_arch_frame *fr, uint64_t *ra)
{
	struct jw_arch_frame guesses[JW_GUESSES];
	size_t len = 0, n, i;
	uint8_t *code = code_to(dwfl, syms, pc, activation, &len);

	if (!code)
		return false;
	n = jw_arch_prologue_guesses(code, len, guesses, JW_GUESSES);
	free(code);
	for (i = 0; i < n; i++) {
		if (!return_of(in, l, regs, activation, &guesses[i], ra) ||
		    same_function(dwfl, syms, activation ? pc : pc - 1, *ra - 1) ||
		    !follows_call(dwfl, *ra))
			continue;
		*fr = guesses[i];
		return true;
	}
	return false;
}

/*
 * The link register when the leaf is a function without CFI that saved nothing yet; else 0.
 * Its prologue says so where its code can be read; where it cannot (code no module holds), a
 * frame record at the frame pointer that holds the link register says it saved one.
 */
static uint64_t frameless_leaf_caller(Dwfl *dwfl, struct jw_modsyms *syms,
				      const struct jw_unwind_input *in)
{
	const struct jw_ureg_layout *l = in->layout;
	struct jw_arch_frame fr;
	uint64_t lr, fp, saved, ra;
	int ret;

	if (!l || l->lr < 0 || (size_t)l->lr >= in->n_regs || l->fp >= in->n_regs ||
	    l->sp >= in->n_regs)
		return 0;
	lr = in->regs[l->lr];
	fp = in->regs[l->fp];
	if (!lr || has_cfi(dwfl, in->pc) || same_function(dwfl, syms, in->pc, lr))
		return 0;
	ret = frame_at(dwfl, syms, in->pc, true, &fr);
	if (ret == -EAGAIN && guessed_frame(dwfl, syms, in, l, in->regs, in->pc, true, &fr, &ra))
		ret = 0;	/* a frame the code had at its branches, its return borne out */
	if (!ret)
		return fr.ra_reg == l->lr && fr.cfa_at == 0 ? lr : 0;
	if (fp >= in->regs[l->sp] && fp >= in->base && stack_word(in, fp + sizeof(saved), &saved) &&
	    saved == lr)
		return 0;
	return lr;
}

/*
 * The caller of a frame in code without CFI, at @pc with registers @regs (by DWARF number): the
 * function's prologue says where it put the return address and the registers it saved. Fills
 * @next (its registers in @next_regs) and returns true; false where its code cannot say.
 */
static bool prologue_step(Dwfl *dwfl, struct jw_modsyms *syms,
			  const struct jw_unwind_input *in, const uint64_t *regs, uint64_t pc,
			  bool activation, struct jw_unwind_input *next, uint64_t *next_regs)
{
	/* A sample's layout; or, not said, this build's (the unit tests' own captures). */
	const struct jw_ureg_layout *l = in->layout ? in->layout : jw_ureg_layout(JW_MACHINE);
	struct jw_arch_frame fr;
	uint64_t sp, ra, v;
	unsigned int i;
	int ret;

	if (!l || l->sp >= in->n_regs || in->n_regs > MAX_REGS)
		return false;
	ret = frame_at(dwfl, syms, pc, activation, &fr);
	if (ret == -EAGAIN) {
		if (!guessed_frame(dwfl, syms, in, l, regs, pc, activation, &fr, &ra))
			return false;
	} else if (ret || !return_of(in, l, regs, activation, &fr, &ra)) {
		return false;
	}
	sp = regs[l->sp];
	memcpy(next_regs, regs, in->n_regs * sizeof(*regs));
	for (i = 0; i < fr.n_saved; i++)
		if (fr.saved[i].dwarf_reg < in->n_regs && stack_word(in, sp + fr.saved[i].at, &v))
			next_regs[fr.saved[i].dwarf_reg] = v;
	next_regs[l->sp] = sp + fr.cfa_at;
	if (l->ip < in->n_regs)
		next_regs[l->ip] = ra;
	*next = *in;
	next->regs = next_regs;
	next->pc = ra;
	return true;
}

/*
 * Unwinds @in into @pcs (at most @max): with libdwfl where there is CFI, and through each frame
 * in code without it by its prologue; @first_returns: @in's pc is a return address.
 */
static size_t unwind_all(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
			 uint64_t *pcs, bool *activation, size_t max, bool first_returns)
{
	struct jw_unwind_input from_regs[2];
	uint64_t regs[2][MAX_REGS];
	const struct jw_unwind_input *from = in;
	size_t n = 0;
	int k = 0;

	while (n < max) {
		struct frames f = { .dwfl = dwfl, .syms = u->syms, .in = from, .pcs = pcs + n,
				    .activation = activation + n, .max = max - n,
				    .first_returns = first_returns };
		size_t got = unwind_from(u, dwfl, from, &f);

		n += got;
		if (!got || !f.stepped)
			break;
		/* The next run reads the registers from here: the frames struct goes away. */
		memcpy(regs[k], f.next_regs, from->n_regs * sizeof(regs[k][0]));
		from_regs[k] = f.next;
		from_regs[k].regs = regs[k];
		from = &from_regs[k];
		k ^= 1;
		first_returns = true;
	}
	return n;
}

size_t jw_unwind(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
		 uint64_t *pcs, bool *activation, size_t max)
{
	struct jw_unwind_input from_caller;
	uint64_t caller;

	if (!u->attached || !max)
		return 0;
	caller = max > 1 ? frameless_leaf_caller(dwfl, u->syms, in) : 0;
	if (!caller)
		return unwind_all(u, dwfl, in, pcs, activation, max, false);
	pcs[0] = in->pc;
	activation[0] = true;
	from_caller = *in;
	from_caller.pc = caller;
	/* A return address, though libdwfl begins there. */
	return unwind_all(u, dwfl, &from_caller, pcs + 1, activation + 1, max - 1, true) + 1;
}
