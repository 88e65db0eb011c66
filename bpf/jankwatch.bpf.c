// SPDX-License-Identifier: GPL-2.0-only
/*
 * jankwatch's kernel side: times every task a watched thread's event loop dispatches, splits its
 * off-CPU time, samples its stacks while it runs, and sends user space only the slow tasks.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "jankwatch/abi.h"
#include "jankwatch/sample_weight.h"
#include "jankwatch/stats_add.h"
#include "jankwatch/task_rec.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define TASK_WAKING 0x0200
#define PF_KTHREAD 0x00200000	/* task_struct.flags: a kernel thread */

/*
 * The settings, all in one place. Set by user space between open and load (rodata), except the
 * two a reload (SIGHUP) may change, which it writes in .data while the programs run.
 */
const volatile __u32 unwind_mode = JW_UNWIND_AUTO;
const volatile __u32 stack_bytes = 16384;	/* 0 in FP mode; at most JW_MAX_STACK_BYTES */
const volatile __u64 sample_period_ns = 10 * 1000000ULL;	/* a block counts one sample per period */
/* The probe id of the tasks the waits bound, where no cookie carries it. */
const volatile __u32 wait_probe_id;
/* The kernel lets a program read its cookie from the run context: see probe_cookie(). */
const volatile bool cookie_in_run_ctx = false;
/* The compatible build (kernel.bpf.h): the kernel has attach cookies, else probe_cookies. */
const volatile bool has_attach_cookie = true;
/* The compatible build: the size of a task's kernel stack (THREAD_SIZE), for task_user_regs(). */
const volatile __u32 thread_size = 16384;
/*
 * Where the watched threads' context switches are seen (sched_hooks=1): each one's own switches
 * out (on_thread_switch, a software perf event per thread), its switches back in taken where a
 * program next runs on it (caught_up()); else every switch of the machine (on_sched_switch).
 */
const volatile bool thread_switches = false;
/* The lowest threshold in force. Reloadable. */
__u64 report_min_ns = 150 * 1000000ULL;
/* Record (time) one task in this many in each statistics row; every task is counted. Reloadable. */
__u32 stats_every = 1;
/*
 * Set by user space at the run's end (jw_attach__stop()): every program returns at once, so that
 * the last read of the maps is of maps nothing changes any more. Taking the probes off instead
 * would take seconds: a uprobe's detach waits for the kernel's grace periods, one after the other.
 */
__u32 stopped;

/* What the programs take from the kernel, and the CPU, in this build of the object. */
#include "kernel.bpf.h"
#include "arch/arch.h"

/*
 * The parts, each using only those before it: the state and its lookups, the interpreter reads,
 * the tasks and their statistics, a thread back on the CPU, the dispatch probes, the stack
 * samples, syscall mode's waits, the scheduler's events (off-CPU time, wakers, trace events),
 * the processes followed.
 */
#include "state.bpf.h"
#include "interp.bpf.h"
#include "task.bpf.h"
#include "offcpu.bpf.h"
#include "dispatch.bpf.h"
#include "sample.bpf.h"
#include "wait.bpf.h"
#include "sched.bpf.h"
#include "proc.bpf.h"
