/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86-64 for the kernel side (see arch.h): user registers in DWARF numbering, the wait system
 * calls' numbers, and where a function's entry left the stack pointer once it has returned.
 */
#ifndef JW_BPF_ARCH_X86_H
#define JW_BPF_ARCH_X86_H

/* x86-64 DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
static __always_inline void copy_user_regs(const struct pt_regs *r, __u64 *out)
{
	out[0] = r->ax;
	out[1] = r->dx;
	out[2] = r->cx;
	out[3] = r->bx;
	out[4] = r->si;
	out[5] = r->di;
	out[6] = r->bp;
	out[7] = r->sp;
	out[8] = r->r8;
	out[9] = r->r9;
	out[10] = r->r10;
	out[11] = r->r11;
	out[12] = r->r12;
	out[13] = r->r13;
	out[14] = r->r14;
	out[15] = r->r15;
	out[16] = r->ip;
}

/* The wait system calls an event loop blocks in: poll, select, epoll_wait, pselect6, ppoll,
 * epoll_pwait, epoll_pwait2 (x86-64 numbers). */
static __always_inline bool is_wait_syscall(long nr)
{
	return nr == 7 || nr == 23 || nr == 232 || nr == 270 || nr == 271 || nr == 281 ||
	       nr == 441;
}

/* The number of the system call a sys_exit event ends. */
static __always_inline long syscall_nr(const struct pt_regs *r)
{
	return KREAD(r, orig_ax);
}

/*
 * A return probe sees the stack pointer after the return, which popped the return address the
 * call pushed: the entry's stack pointer is one slot lower.
 */
static __always_inline __u64 arch_entry_sp_after_return(__u64 sp)
{
	return sp - sizeof(__u64);
}


#endif
