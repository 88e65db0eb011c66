/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kernel side knows of the CPU, one header per architecture, picked by the target the
 * object is built for (-D__TARGET_ARCH_<arch>). Each defines:
 *   copy_user_regs(regs, out)        the user registers, in DWARF numbering (JW_UREG_*)
 *   is_wait_syscall(nr)              the wait system calls an event loop blocks in
 *   syscall_nr(regs)                 the number of the system call a sys_exit event ends
 *   arch_entry_sp_after_return(sp)   a function's entry stack pointer, seen at its return
 * A second architecture is one new file here, bpf/arch/<arch>.h, one in user/arch/, and its
 * register layout in include/jankwatch/abi.h.
 */
#ifndef JW_BPF_ARCH_H
#define JW_BPF_ARCH_H

#if defined(__TARGET_ARCH_x86)
#include "x86.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arm64.h"
#else
#error "jankwatch: no bpf/arch/<arch>.h for this architecture yet (x86.h is the model)"
#endif

#endif
