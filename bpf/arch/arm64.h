/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arm64 for the kernel side (see arch.h): user registers in DWARF numbering, the wait system
 * calls' numbers, and where a function's entry left the stack pointer once it has returned.
 */
#ifndef JW_BPF_ARCH_ARM64_H
#define JW_BPF_ARCH_ARM64_H

/* x0-x30, sp (DWARF 0..31), then pc in slot 32 (JW_ARM64_UREG_IP). */
static __always_inline void copy_user_regs(const struct pt_regs *r, __u64 *out)
{
#pragma unroll
	for (int i = 0; i < 31; i++)
		out[i] = r->regs[i];
	out[31] = r->sp;
	out[32] = r->pc;
}

/*
 * The wait system calls an event loop blocks in: epoll_pwait, pselect6, ppoll, epoll_pwait2
 * (arm64 has no epoll_wait, poll or select: the C library calls these).
 */
static __always_inline bool is_wait_syscall(long nr)
{
	return nr == 22 || nr == 72 || nr == 73 || nr == 441;
}

/* The number of the system call a sys_exit event ends. */
static __always_inline long syscall_nr(const struct pt_regs *r)
{
	return KREAD(r, syscallno);
}

/*
 * A call leaves the return address in the link register and the stack pointer alone: at the
 * return the stack pointer is the entry's.
 */
static __always_inline __u64 arch_entry_sp_after_return(__u64 sp)
{
	return sp;
}


#endif
