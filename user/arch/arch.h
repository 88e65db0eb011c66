/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What user space knows of the CPU, behind one interface: one file per architecture
 * (user/arch/<arch>.c, picked by the build), with its kernel side in bpf/arch/<arch>.h. A second
 * architecture is those two files and its register layout in include/jankwatch/abi.h.
 */
#ifndef JW_ARCH_H
#define JW_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jankwatch/abi.h"

/*
 * The numbers of the wait system calls an event loop blocks in (/proc/PID/task/TID/syscall), and
 * their names in the same order (the kernel's: "pselect6"), which this architecture's table has.
 */
extern const long jw_arch_wait_syscalls[];
extern const char *const jw_arch_wait_syscall_names[];
extern const size_t jw_arch_n_wait_syscalls;

/*
 * Derives how redis's call(client *c) reaches the command's function, from its code (@code, the
 * start of the function): on x86-64 "mov %rdi,%REG ... mov D1(%REG),%rax ... call *D2(%rax)"
 * gives c->cmd at D1, cmd->proc at D2. Returns 0, or -ENOENT when the pattern is not there.
 */
int jw_arch_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain);

/*
 * Whether the function at @code (@len bytes of its start) loads a pointer from field F of its
 * first argument and then calls or jumps through the pointer at @call_disp of what that points
 * to: Qt's QMetaCallEvent::placeMetaCall(), "mov F(%rdi),%R ... mov 8(%R),%rax ... jmp *%rax"
 * (arm64: "ldr xR, [x0, #F] ... ldr xA, [xR, #8]"), the slot object at F. F into @field; 0, or
 * -ENOENT when the pattern is not there.
 */
int jw_arch_derive_member_call(const uint8_t *code, size_t len, int32_t call_disp, int32_t *field);

/*
 * The field of its first argument that the function at @code (@len bytes of its start) loads
 * first, before it changes that register: a getter's field (sd-event's
 * sd_event_source_get_description(s, ret): "mov 0x20(%rdi),%rax", arm64 "ldr x?, [x0, #0x20]").
 * Into @field; 0, or -ENOENT.
 */
int jw_arch_first_field_load(const uint8_t *code, size_t len, int32_t *field);

/*
 * Whether the function at @code (@len bytes of its start) tail-calls through a field of its first
 * argument in a straight line from its entry: PipeWire's wrappers of an I/O or idle source's
 * callback, "mov 0x48(%rdi),%rax; ...; jmp *%rax" (arm64: "ldr xR, [x0, #0x48]; ...; br xR"),
 * the register loaded while the argument was still there. The field into @field; 0, or -ENOENT.
 */
int jw_arch_tail_call_field(const uint8_t *code, size_t len, int32_t *field);

/*
 * Whether the function at @code (@len bytes, at address @addr) emits a GObject signal by a fixed
 * id: it loads its second argument from a fixed address (x86-64 "mov slot(%rip),%esi"; arm64
 * "adrp xN, page; ldr w1, [xN, #off]") and calls or jumps to the function at @stub (the
 * g_signal_emit PLT stub's address) with it, as GTK's frame clock emits a phase's signal from
 * its class's table of signal ids. The slot's address into @slot (in @addr's space: file
 * offsets give file-offset-like addresses, comparable between functions of one segment); 0, or
 * -ENOENT.
 */
int jw_arch_signal_emitter(const uint8_t *code, size_t len, uint64_t addr, uint64_t stub,
			   uint64_t *slot);

/* The register (DWARF numbering, JW_UREG_*) of a function's argument @i (0 to 3) at its entry. */
unsigned int jw_arch_arg_reg(unsigned int i);

/* A call instruction, as the handler sites (loops/sites.h) need to know it. */
struct jw_arch_call {
	size_t at;		/* where it is, from the code's start */
	size_t len;
	bool indirect;
	int64_t target;		/* direct: where it calls, from the code's start */
	/*
	 * indirect: the register it calls (DWARF numbering), or through memory (@mem) the base
	 * register of the address, + @disp; -1 when the address is no base + displacement
	 */
	int reg;
	bool mem;
	int32_t disp;
	/*
	 * indirect: the function, or the address it is read from, comes from a fixed place in the
	 * code's data (x86-64: a RIP-relative load or lea; arm64: adrp, then at most two loads),
	 * as far as reading the instructions before it in a straight line tells: a call through a
	 * global table of functions (libevent's lock callbacks), no object's callback
	 */
	bool via_global;
	/*
	 * What the first JW_ARCH_CALL_ARGS argument registers hold at the call, as far as reading
	 * the instructions before it in a straight line tells: a copy of register @arg_copy[i]
	 * (DWARF numbering; that register unchanged since), or (@arg_known[i]) the constant
	 * @arg_imm[i]; -1 and false when not known. A Qt slot object's call: its which argument 1,
	 * the slot object itself the register the call reads the function through.
	 */
	int arg_copy[4];
	bool arg_known[4];
	int64_t arg_imm[4];
	/*
	 * indirect: where the function was read from, base register + displacement: the call's own
	 * memory operand (x86-64), or the load of the register it calls (arm64: "ldr xT, [xB,
	 * #D]; ... blr xT", xB unchanged since); @via_reg -1 when not known
	 */
	int via_reg;
	int32_t via_disp;
};

#define JW_ARCH_CALL_ARGS 4

/*
 * Decodes @len bytes of code at @code, from an instruction's start, one instruction after another
 * (a linear sweep: the code of one function, or a section of compiled code), and calls @fn on
 * every call instruction; @fn returns non-zero to stop. An instruction it cannot decode is
 * stepped over byte by byte (and forgets what it knew of the registers). Returns what the last @fn returned, or 0.
 */
int jw_arch_scan_calls(const uint8_t *code, size_t len,
		       int (*fn)(const struct jw_arch_call *call, void *ctx), void *ctx);

/*
 * Calls @fn with every address @len bytes of code at @code (at address @addr) call directly or
 * take as a function's, found by a linear sweep as jw_arch_scan_calls() finds calls: x86-64's
 * call rel32 and lea rel32(%rip); arm64's bl, and adrp followed by an add to the same register
 * (not adr: a jump table's base in the function itself). @fn returns non-zero to stop. Returns
 * what the last @fn returned, or 0. Where functions begin that no symbol names (entries.h).
 */
int jw_arch_scan_entries(const uint8_t *code, size_t len, uint64_t addr,
			 int (*fn)(uint64_t entry, void *ctx), void *ctx);

/*
 * Calls @fn with the target (from the code's start) of every direct jump, conditional or not, in
 * @len bytes of code at @code, found by a linear sweep as jw_arch_scan_calls() finds calls; @fn
 * returns non-zero to stop. Returns what the last @fn returned, or 0. For the parts a compiler
 * split a function into (a hot and a cold one), which only its jumps lead to.
 */
int jw_arch_scan_jumps(const uint8_t *code, size_t len, int (*fn)(int64_t target, void *ctx),
		       void *ctx);

/*
 * The GOT slot (its address, into @slot) the PLT stub at @stub (@len bytes there, at address
 * @addr) jumps through: x86-64 "[endbr64] [bnd] jmp *rel(%rip)", arm64 "adrp x16; ldr x17, [x16,
 * #lo]". 0, or -ENOENT when it is no such stub.
 */
int jw_arch_plt_slot(const uint8_t *stub, size_t len, uint64_t addr, uint64_t *slot);

/*
 * The length of the instruction at @p (@len bytes there), or 0 when it is not decoded (x86-64:
 * a length decoder for the general-purpose, x87, SSE, VEX and EVEX encodings; arm64: 4).
 */
size_t jw_arch_insn_len(const uint8_t *p, size_t len);

/*
 * Whether the kernel refuses a uprobe on the instruction at @p (@len bytes there): x86-64 a
 * locked or segment-prefixed one; arm64 none is known here.
 */
bool jw_arch_unprobeable(const uint8_t *p, size_t len);

/*
 * An instruction at a function's entry, as probe placement (placement.h) needs to know it: what
 * the kernel does with a uprobe on it, and whether it may be passed.
 */
enum jw_arch_insn_kind {
	JW_INSN_UNKNOWN = 0,	/* not decoded: single-stepped, and nothing past it is known */
	JW_INSN_SKIPPABLE,	/* leaves the stack pointer and memory alone (see writes_arg) */
	JW_INSN_EMULATED,	/* the kernel emulates it at a probe */
	JW_INSN_STORES,		/* writes memory, and no register: passed only at a return site */
};

struct jw_arch_insn {
	enum jw_arch_insn_kind kind;
	bool writes_arg;	/* skippable only where no probe reads the arguments */
	size_t len;
	char text[32];		/* for -v: "push %rbp", or its first bytes */
	bool jumps;		/* a jump: @rel is its displacement from its end */
	int32_t rel;
};

/*
 * The frame of a function that has no CFI (musl's libc.so has it for its few assembly
 * functions only), read from its code: @code holds the function from its entry up to the
 * instruction a frame stands at (@len bytes: a sample's pc, or a call's return address), swept
 * in a line, a block after a return taking the frame of the branches that lead to it (sweep.h).
 * What its prologue pushed and reserved tells where the return address is
 * (sp + @ra_at, or register @ra_reg in a leaf that has not saved it), where the caller's stack
 * pointer is (sp + @cfa_at) and where it saved the callee-saved registers (sp + saved[].at, by
 * DWARF number).
 */
#define JW_ARCH_MAX_SAVED 16
struct jw_arch_frame {
	int ra_reg;		/* the return address is still in this register (arm64's x30); -1 */
	uint64_t ra_at;
	uint64_t cfa_at;
	unsigned int n_saved;
	struct {
		unsigned int dwarf_reg;
		uint64_t at;
	} saved[JW_ARCH_MAX_SAVED];
};

/*
 * 0 (an epilogue's pops and loads followed too); -ENOENT in code not decoded; -EAGAIN where the
 * sweep cannot know for sure: in a block no branch before it leads to (a loop's body its test
 * below jumps back to, a jump table's case), after an alloca, leave or a stack pointer from a
 * register it does not follow, where two branches disagree: jw_arch_prologue_guesses() then.
 */
int jw_arch_prologue_frame(const uint8_t *code, size_t len, struct jw_arch_frame *frame);

/*
 * Where jw_arch_prologue_frame() answers -EAGAIN: the frames the code had at its branches
 * before the point (its body's, not a prologue's or an epilogue's), the most recent first, into @frames (at most @max); their count (0: none). Guesses, for a
 * caller that keeps one only where the return address it gives follows a call
 * (jw_arch_after_call()) in another function.
 */
size_t jw_arch_prologue_guesses(const uint8_t *code, size_t len, struct jw_arch_frame *frames,
				size_t max);

/* Whether the @len bytes of code that end at a return address end with a call instruction. */
bool jw_arch_after_call(const uint8_t *code, size_t len);

/* Decodes the one instruction at @p (@len bytes there, 0: none): only what placement needs. */
void jw_arch_decode_entry(const uint8_t *p, size_t len, struct jw_arch_insn *in);

/*
 * Two functions whose first instruction is known, for waitcost.h to time a uprobe pair on: one
 * the kernel emulates at a probe (a push on x86-64), one it single-steps out of line.
 */
void jw_arch_cost_emulated(void);
void jw_arch_cost_stepped(void);

/*
 * The size of a task's kernel stack (THREAD_SIZE), at whose top the kernel keeps the user
 * registers (task_pt_regs()), for a kernel with pages of @page_size bytes, doubled by KASAN
 * (@kasan): where the compatible BPF build finds a task's user registers.
 */
uint32_t jw_arch_thread_size(long page_size, bool kasan);

/*
 * The prefix of the kernel's functions of the system calls (CONFIG_ARCH_HAS_SYSCALL_WRAPPER):
 * "__x64_sys_" makes __x64_sys_epoll_wait, the function syscall mode's fexit programs take.
 */
const char *jw_arch_syscall_prefix(void);

#endif
