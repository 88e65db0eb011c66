/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The records and maps shared by the BPF programs and user space.
 * Fixed-width fields and explicit padding only: no bool, long or pointers.
 */
#ifndef JANKWATCH_ABI_H
#define JANKWATCH_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JW_MAX_NEST 16		/* nested dispatches tracked per thread */
#define JW_MAX_PROBES 32	/* probe ids carried in attach cookies */
#define JW_TID_BUCKETS 4096	/* tid_index: a watched thread's slot, by tid modulo this */
#define JW_MAX_USER_FRAMES 127
#define JW_MAX_KERNEL_FRAMES 64
#define JW_MAX_STACK_BYTES 65536	/* the largest user stack copy */
/*
 * CPython frames read with a sample, innermost first (a deeper stack keeps its innermost ones),
 * and the bytes of one interpreter frame read at a time (every field the walk uses lies within).
 */
#define JW_MAX_PY_FRAMES 64
#define JW_PY_FRAME_WINDOW 80
#define JW_PY_STACK_READ 8192	/* bytes of the thread's data stack read at once, below its frame */
/*
 * The architecture's part of the records: the user registers a sample carries, in DWARF
 * numbering (bpf/arch/<arch>.h's copy_user_regs() fills them), how many of them the unwinder
 * takes by number, where the stack pointer, instruction pointer and link register are among
 * them, the red zone below the stack pointer a function may use, and the ELF machine. Every
 * architecture's block is here, so that a capture taken on one is unwound on another
 * (jankwatch symbolize); the build's own is JW_UREG_*. The register array is as long as the
 * largest set, so that a record has one layout everywhere. A second architecture adds its
 * block here, beside user/arch/<arch>.c and bpf/arch/<arch>.h.
 */
#define JW_UREG_MAX 33

/* x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, then rip, the return address column (16). */
#define JW_X86_64_MACHINE 62	/* EM_X86_64 */
#define JW_X86_64_UREG_COUNT 17
#define JW_X86_64_UREG_SP 7
#define JW_X86_64_UREG_IP 16
#define JW_X86_64_UREG_FP 6	/* rbp */
#define JW_X86_64_UREG_LR (-1)	/* none: a call pushes the return address */
#define JW_X86_64_RED_ZONE 128
#define JW_X86_64_RA_MASK (~0ULL)	/* a return address is all address */

/* arm64: x0-x30 (x29 the frame pointer, x30 the link register), sp (31); pc kept at 32. */
#define JW_ARM64_MACHINE 183	/* EM_AARCH64 */
#define JW_ARM64_UREG_COUNT 32
#define JW_ARM64_UREG_SP 31
#define JW_ARM64_UREG_IP 32
#define JW_ARM64_UREG_FP 29
#define JW_ARM64_UREG_LR 30
#define JW_ARM64_RED_ZONE 0
/*
 * A return address signed with pointer authentication (paciasp: the 6.1 kernel's vdso signs even
 * its leaves, and code built with -mbranch-protection) carries its code above the user address
 * space of 48 bits; the kernel strips it from the frame records it walks, not from x30.
 */
#define JW_ARM64_RA_MASK ((1ULL << 48) - 1)

#if defined(__x86_64__) || defined(__TARGET_ARCH_x86)
#define JW_MACHINE JW_X86_64_MACHINE
#define JW_UREG_COUNT JW_X86_64_UREG_COUNT
#define JW_UREG_SP JW_X86_64_UREG_SP
#define JW_UREG_IP JW_X86_64_UREG_IP
#define JW_RED_ZONE JW_X86_64_RED_ZONE
#elif defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define JW_MACHINE JW_ARM64_MACHINE
#define JW_UREG_COUNT JW_ARM64_UREG_COUNT
#define JW_UREG_SP JW_ARM64_UREG_SP
#define JW_UREG_IP JW_ARM64_UREG_IP
#define JW_RED_ZONE JW_ARM64_RED_ZONE
#else
#error "jankwatch: no register layout in include/jankwatch/abi.h for this architecture yet"
#endif
#define JW_MAX_RED_ZONE 128	/* the largest of them */

/* Every block above, as initializers of struct jw_ureg_layout (user/stacks/regs.h). */
#define JW_UREG_LAYOUTS                                                                        \
	{ JW_X86_64_MACHINE, JW_X86_64_UREG_COUNT, JW_X86_64_UREG_SP, JW_X86_64_UREG_IP,        \
	  JW_X86_64_UREG_FP, JW_X86_64_UREG_LR, JW_X86_64_RED_ZONE, JW_X86_64_RA_MASK },        \
	{ JW_ARM64_MACHINE, JW_ARM64_UREG_COUNT, JW_ARM64_UREG_SP, JW_ARM64_UREG_IP,            \
	  JW_ARM64_UREG_FP, JW_ARM64_UREG_LR, JW_ARM64_RED_ZONE, JW_ARM64_RA_MASK }

#define JW_MAX_WAKER_FRAMES 16	/* kernel frames of the context that woke a thread */
#define JW_COMM_LEN 16
#define JW_HANDLER_NAME_LEN 128
#define JW_HANDLER_FILE_LEN 256
#define JW_MAX_CPUS 256		/* per-CPU counters in .bss (a power of two) */
#define JW_MAX_FOLLOWED 16384	/* processes followed at once (forks, execs, exits seen) */

/* Thread @tid's bucket in tid_index: written by user space, read by the BPF programs. */
static inline __u32 jw_tid_bucket(__u32 tid)
{
	return tid & (JW_TID_BUCKETS - 1);
}

/* Attach cookie of a dispatch probe: the probe id in the low bits, its role above. */
#define JW_COOKIE_RETPROBE (1ULL << 33)	/* the exit is a return probe: sp is one slot higher */
#define JW_COOKIE_NAME_ARG (1ULL << 34)	/* the entry names the task's handler: see jw_arg_chain */
#define JW_COOKIE_INNER (1ULL << 35)	/* a preset's dispatch: only inside the waits' envelope */
/*
 * A callback site (sites.h): the callee names the handler, read from the register + 1 in bits
 * 8-13 (DWARF numbering), or with JW_CALLEE_MEM from memory at that register plus the signed
 * 16-bit displacement in bits 16-31. Under the waits it opens a naming dispatch; nested in one,
 * it renames it (the last callback a task's dispatch ran is its handler).
 */
#define JW_COOKIE_CALLEE (1ULL << 36)
/*
 * A handler site's return site: it closes only the dispatch its call opened (a jump may reach
 * the instruction after a call it skipped), never the innermost one as an exit symbol does.
 */
#define JW_COOKIE_SITE_EXIT (1ULL << 37)
/*
 * CPython's _PyEval_EvalFrameDefault(tstate, ...): the first argument is the thread's
 * PyThreadState, kept so that samples read the thread's Python frames (jw_arg_chain's py_*).
 */
#define JW_COOKIE_PY_TSTATE (1ULL << 38)
/*
 * A preset's site whose dispatch is a task of its own (android's Looper: each message and fd
 * callback), on its entry and its exit: the loop's own work since the wait (or the last such
 * dispatch) ends at its entry, and the work after its exit is a task again, to the next wait.
 */
#define JW_COOKIE_TASK (1ULL << 39)
#define JW_CALLEE_REG_SHIFT 8
#define JW_CALLEE_MEM (1ULL << 14)
#define JW_CALLEE_DISP_SHIFT 16
/*
 * Bits 40 and up: the slot + 1 of the process's watched thread (0: look it up), so that the
 * probes find its state by array index, without a task storage lookup.
 */
#define JW_COOKIE_SLOT_SHIFT 40

enum jw_rec_type {
	JW_REC_TASK = 1,	/* a task over the lowest threshold ended */
	JW_REC_SAMPLE = 2,	/* a stack sample taken inside a task */
	JW_REC_EXEC = 3,	/* a followed process exec'd, or a process exec'd an --exe file */
	JW_REC_SCHED = 4,	/* a context switch or wakeup touching a traced process */
	JW_REC_SLICE = 5,	/* a task of a traced process's watched thread ended */
	JW_REC_FORK = 6,	/* a followed process forked a new process, followed too */
	JW_REC_EXIT = 7,	/* a followed process exited (its last thread) */
	JW_REC_RENAME = 8,	/* a process took a --name name, or one followed by it another */
};

/*
 * How a process is followed (map followed, by tgid): what its forks and execs mean. A forked
 * child is followed as its parent is, from the kernel, before it runs.
 */
enum jw_follow_flags {
	JW_FOLLOW_CHILDREN = 1 << 0,	/* its new processes are followed too (FORK records) */
	JW_FOLLOW_EXE = 1 << 1,		/* followed while it runs an --exe file, no longer after */
	JW_FOLLOW_NAME = 1 << 2,	/* followed while its name is a --name one, no longer after */
};

/* Flags of an EXEC record. */
enum jw_exec_flags {
	JW_EXEC_WATCHED_EXE = 1 << 0,	/* the new program is an --exe file */
	JW_EXEC_LEFT = 1 << 1,		/* a JW_FOLLOW_EXE process exec'd another file: unfollowed */
};

/* Flags of a RENAME record, whose comm is the new name. */
enum jw_rename_flags {
	JW_RENAME_NAMED = 1 << 0,	/* the process took a --name name: followed from here */
	JW_RENAME_LEFT = 1 << 1,	/* a JW_FOLLOW_NAME process took another: unfollowed */
	JW_RENAME_BY_NAME = 1 << 2,	/* NAMED: followed for the name (JW_FOLLOW_NAME), not for good */
	JW_RENAME_KEPT = 1 << 3,	/* LEFT: followed still, for the --exe file it runs */
};

/* Flags of a TASK record. */
enum jw_task_flags {
	JW_TASK_NO_EXIT = 1 << 0,	/* closed because a later entry showed its frame was gone */
	JW_TASK_NEST_OVERFLOW = 1 << 1,	/* nesting went deeper than JW_MAX_NEST */
	JW_TASK_EXITED = 1 << 2,	/* the thread exited inside the task: it ends there */
	JW_TASK_HANG = 1 << 3,		/* user space: the task is still running past hang_ms */
	/*
	 * a context switch of the thread inside the task reached no program (its switch back in:
	 * seen switched out twice, or running at its end while seen off the CPU; or, in a jank,
	 * more time off the CPU than seen, by the kernel's count of its time on one): a jank's
	 * split then takes the time hidden from that count, its sleep's stack and waker unknown
	 */
	JW_TASK_SWITCH_UNSEEN = 1 << 4,
	/* the thread was woken while the programs saw it on the CPU (a race, or a switch unseen) */
	JW_TASK_WOKEN_ON_CPU = 1 << 5,
};

/* What a sample carries; user space unwinds the copy with DWARF CFI. */
enum jw_unwind_mode {
	JW_UNWIND_AUTO = 0,	/* frame-pointer ips and a stack copy: DWARF, FP where it stops */
	JW_UNWIND_FP = 1,	/* frame-pointer ips only */
	JW_UNWIND_DWARF = 2,	/* a stack copy only, unwound with DWARF CFI */
};

enum jw_sample_kind {
	JW_SAMPLE_ONCPU = 0,	/* a cpu-clock tick while the thread ran; weight: periods since */
	JW_SAMPLE_BLOCKED = 1,	/* where the thread went to sleep; weight: the periods it slept */
	JW_SAMPLE_IO = 2,	/* the same, asleep with in_iowait set */
};

/* What woke a thread (jw_task_rec.waker_flags). */
enum jw_waker_flags {
	JW_WAKER_KNOWN = 1 << 0,	/* a wakeup was seen: waker_* describe its context */
	JW_WAKER_UNSEEN = 1 << 1,	/* the sleep ended with no wakeup seen (summary: counted) */
};

/* Failed ring buffer reservations and other losses, counted by the kernel side. */
enum jw_drop {
	JW_DROP_TASK = 0,	/* a TASK record could not be reserved */
	JW_DROP_SAMPLE,		/* a SAMPLE record could not be reserved */
	JW_DROP_NEST,		/* a nested entry beyond JW_MAX_NEST */
	JW_DROP_STATE,		/* no per-thread state could be created */
	JW_DROP_TRACE,		/* a SCHED or SLICE record could not be reserved */
	JW_DROP_PROC,		/* a FORK, EXEC or EXIT record lost, or the followed map full */
	JW_DROP_SWITCH,		/* a watched thread's switch inside a task that no program saw */
	JW_DROP_WAKING,		/* a watched thread's sleep inside a task ended with no wakeup seen */
	JW_DROP_MAX,
};

/* wait_tracepoints=2's counters (map syscall_rates), and the threads whose waits count. */
enum jw_rate {
	JW_RATE_SYSCALLS = 0,	/* every system call of the machine */
	JW_RATE_WAITS,		/* wait system calls of the threads in rate_tids */
	JW_RATE_MACHINE_WAITS,	/* wait system calls of the whole machine */
	JW_RATE_COUNT,
};

#define JW_MAX_RATE_TIDS 64

/*
 * Syscall mode: which of the two ways of seeing the waits counts (the BPF object's wait_hooks,
 * its bits). Both while a switch from the tracepoints to the uprobes settles (wait.bpf.h).
 */
#define JW_WAIT_BY_UPROBES (1u << 0)
#define JW_WAIT_BY_TRACEPOINTS (1u << 1)
/*
 * No hook on the waits at all: a task ends where the thread goes to sleep in a wait system call
 * and begins where it is switched back in from that sleep (a wait that returns without sleeping
 * does not split the tasks around it). Alone, never with the others.
 */
#define JW_WAIT_BY_SWITCHES (1u << 2)

struct jw_rec_hdr {
	__u16 type;		/* enum jw_rec_type */
	__u16 flags;
	__u32 size;		/* of the whole record, header included */
	__u32 pid;
	__u32 tid;
	__u64 ts_ns;		/* CLOCK_MONOTONIC */
};

struct jw_task_rec {
	struct jw_rec_hdr hdr;	/* ts_ns: the task's end */
	__u64 seq;		/* per-thread task number; samples carry it too */
	__u64 start_ns;
	__u64 end_ns;
	__u64 runq_ns;		/* runnable, waiting for a CPU */
	__u64 blocked_ns;	/* asleep, IO included */
	__u64 io_ns;		/* asleep with in_iowait set */
	__u32 probe_id;
	__u32 samples;		/* in-task samples sent */
	__u32 sample_drops;	/* in-task samples lost to a full ring buffer */
	__u32 switches;		/* times the thread left the CPU during the task */
	/* The longest block of the task: how long, where in the kernel, and what ended it. */
	__u64 longest_block_ns;
	__u64 wchan_ip;		/* first kernel frame outside the scheduler */
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 waker_flags;	/* enum jw_waker_flags */
	__u32 n_waker_ips;
	char waker_comm[JW_COMM_LEN];
	__u64 waker_ips[JW_MAX_WAKER_FRAMES];	/* kernel stack of the waking context, leaf first */
	/*
	 * Inside a wait-bounded task, the longest of the dispatches the preset hooks directly under
	 * the waits: its probe id + 1 (0: none ran), how long it ran, and the handler it found.
	 */
	__u64 handler_addr;
	__u64 inner_ns;
	__u32 inner_probe;
	__u32 handler_line;	/* JW_HANDLER_PY_CODE: the code's first line, its name and file */
	char handler_name[JW_HANDLER_NAME_LEN];
	char handler_file[JW_HANDLER_FILE_LEN];
	/*
	 * The task's queueing delay (JW_DELAY_UNKNOWN: not known). Last: a record of raw captures
	 * written before it existed ends just before it (JW_TASK_REC_SIZE_V1).
	 */
	__u64 delay_ns;
	/*
	 * What the handler's chain read besides (jw_arg_chain: a Qt receiver's class). Captures
	 * written before they existed end before them (JW_TASK_REC_SIZE_V2): none read.
	 */
	__u64 handler_class;
	__u64 handler_detail;
};

#define JW_TASK_REC_SIZE_V1 __builtin_offsetof(struct jw_task_rec, delay_ns)
#define JW_TASK_REC_SIZE_V2 __builtin_offsetof(struct jw_task_rec, handler_class)

struct jw_sample_rec {
	struct jw_rec_hdr hdr;	/* ts_ns: when the sample was taken; size covers stack_size */
	__u64 seq;		/* the task it belongs to */
	__u16 mode;		/* enum jw_unwind_mode */
	__u16 kind;		/* enum jw_sample_kind */
	__u16 n_kernel;		/* kernel_ips used, leaf first */
	__u16 n_user;		/* user_ips used (frame pointers), leaf first */
	__u32 weight;		/* sampling periods this sample stands for */
	__u32 stack_size;	/* bytes of user stack copied, from regs[JW_UREG_SP] - stack_below */
	__u32 n_rets;		/* pending return probes below */
	__u32 stack_below;	/* of stack_size, the bytes below regs[JW_UREG_SP]: its red zone */
	__u64 block_ns;		/* BLOCKED and IO samples: how long the thread slept */
	__u64 regs[JW_UREG_MAX];	/* user registers, DWARF numbering (JW_UREG_*) */
	/*
	 * Return probes replace a hooked function's return address with the uprobes trampoline,
	 * at address tramp. ret_sp[i] is the stack pointer at the entry of the function whose real
	 * return address is ret_addr[i]: on x86-64 the slot it was in, on arm64 the top of the frame
	 * where the function saves its link register. Innermost first. Frame-pointer ips come with
	 * them put back already.
	 */
	__u64 tramp;
	__u64 ret_sp[JW_MAX_NEST];
	__u64 ret_addr[JW_MAX_NEST];
	__u64 kernel_ips[JW_MAX_KERNEL_FRAMES];
	__u64 user_ips[JW_MAX_USER_FRAMES];
	/*
	 * stack_size bytes, then to the record's end (hdr.size) the thread's CPython frames, struct
	 * jw_py_frame each, innermost first: a record of a thread that runs no Python, or of a raw
	 * capture written before they were read, ends with the stack.
	 */
	__u8 stack[];
};

/*
 * A CPython frame of a sample: its code object, and the instruction it runs (the one it called
 * from, for a frame that called). JW_PY_FRAME_ENTRY in @code: its entry byte matched (see
 * jw_arg_chain's py_frame_entry), so a call of _PyEval_EvalFrameDefault begins there; user
 * space splices the frames of each call into the native stack at that call's frame.
 */
struct jw_py_frame {
	__u64 code;
	__u64 instr;
};

#define JW_PY_FRAME_ENTRY 1ULL	/* code objects are aligned: their address's low bits are free */

/* What a SCHED record is: a line of the trace log. */
enum jw_sched_kind { JW_SCHED_SWITCH = 0, JW_SCHED_WAKING = 1 };

/* sched_switch's prev_state bit for a thread switched out while runnable (TASK_REPORT_MAX). */
#define JW_STATE_PREEMPTED 0x100

/*
 * A context switch or a wakeup where a traced process's thread is one side, as the kernel's
 * sched_switch and sched_waking events describe them.
 */
struct jw_sched_rec {
	struct jw_rec_hdr hdr;	/* pid, tid: the thread on the CPU (switch: prev; waking: the waker) */
	__u32 kind;		/* enum jw_sched_kind */
	__u32 cpu;
	char comm[JW_COMM_LEN];	/* of the thread on the CPU */
	__s32 prio;		/* switch: prev's; waking: the woken thread's */
	__u32 prev_state;	/* switch: the TASK_REPORT bit of prev's state, or JW_STATE_PREEMPTED */
	__u32 other_pid;	/* switch: next's process; waking: the woken thread's */
	__u32 other_tid;
	char other_comm[JW_COMM_LEN];
	__s32 other_prio;	/* switch: next's */
	__u32 target_cpu;	/* waking: the CPU the woken thread last ran on */
};

/* A task of a traced process's watched thread: a slice of the trace log. */
struct jw_slice_rec {
	struct jw_rec_hdr hdr;	/* ts_ns: the task's end */
	__u64 seq;
	__u64 start_ns;
	__u64 handler_addr;	/* as in jw_task_rec */
	__u32 probe_id;
	__u32 inner_probe;
	__u32 cpu;		/* where it ended */
	__u32 pad;
	__u64 handler_class;	/* as in jw_task_rec */
	__u64 handler_detail;
};

#define JW_HIST_SLOTS 32	/* log2 latency histogram: slot i counts [2^i, 2^(i+1)) us */

/*
 * The statistics (LooperStats) of every task, slow or not, one row per (process, thread, what
 * ran): an outermost task (inner 0: a --probe dispatch, or the wait-to-wait envelope) or a
 * dispatch a preset hooks directly under the waits (inner 1), with the handler it named. The
 * outermost rows of a watched thread live in an array (row slot * JW_MAX_PROBES + probe id: no
 * hashing on the path every task takes); user space moves them to the hash, keyed so, when the
 * slot goes to another thread. The others live in the hash.
 */
struct jw_stats_key {
	__u32 pid;
	__u32 tid;
	__u32 probe_id;
	__u32 inner;
	__u64 handler;		/* the handler's address (code, or a CPython code object); 0: none */
	/* What the handler's chain read besides (jw_arg_chain's klass and detail); 0: none. */
	__u64 klass;
	__u64 detail;
};

struct jw_stats_val {
	__u64 count;		/* every task */
	__u64 recorded;		/* of them, the ones timed: 1 in stats_sampling_interval */
	__u64 total_ns;		/* wall time of the recorded ones */
	__u64 max_ns;
	__u64 total_cpu_ns;
	__u64 max_cpu_ns;
	__u64 exceptions;	/* tasks closed without their exit (longjmp, exception) */
	/* Of the recorded ones, those whose queueing delay is known: how many, its sum, its max. */
	__u64 delay_count;
	__u64 total_delay_ns;
	__u64 max_delay_ns;
	__u32 uid;		/* the process's real uid, when the row was made */
	__u32 handler_line;	/* a CPython handler: its first line, name and file */
	__u32 pid;		/* an array row: whose it is (0: unused) */
	__u32 tid;
	char comm[JW_COMM_LEN];	/* the thread's name when the row was made */
	__u32 hist[JW_HIST_SLOTS];	/* recorded tasks by log2 of their wall time in us */
	char handler_name[JW_HANDLER_NAME_LEN];
	char handler_file[JW_HANDLER_FILE_LEN];
};

/* The context that woke a sleeping thread, as sched_waking saw it. */
struct jw_waker {
	__u32 pid;
	__u32 tid;
	__u32 flags;		/* enum jw_waker_flags; 0: none seen */
	__u32 n_ips;
	char comm[JW_COMM_LEN];
	__u64 ips[JW_MAX_WAKER_FRAMES];
};

/*
 * Per-thread state of a watched thread, in the thread_state array at its slot: written whole by
 * user space (tid and pid set, the rest zero) when the slot goes to the thread, before any probe
 * of its process is attached; then by the BPF programs. The probes reach it through their
 * cookie's slot, the scheduler's programs through the thread's task storage, which holds the
 * slot; both check the tid. User space reads it to see a task that is still running: a hang.
 */
struct jw_task_state {
	/*
	 * First, within 64 bytes: what sched_waking's program reads and writes. It runs in the
	 * waker's context, on another CPU than the thread's own programs, which keep these lines
	 * dirty: each line it touches is a miss there.
	 */
	__u32 tid;		/* the thread the slot is for */
	__u32 depth;		/* open dispatches recorded in sp[] */
	__u32 flags;		/* enum jw_task_flags of the current task */
	__u32 off_state;	/* why the thread left the CPU: enum jw_off_state */
	__u64 off_ns;		/* when it left the CPU inside a task; 0 while on CPU */
	/* The thread was woken outside a task (in the loop's wait) then, not yet taken by a task. */
	__u64 wake_ns;
	/*
	 * Syscall mode on uprobes: the thread may be blocked in a wait it entered before its probes
	 * were attached (a new program is watched once it is seen so): no return probe will see
	 * that wait end, so its wakeup begins the task instead, once the probes are all in (map
	 * probes_ready). 1: armed; 2: a task begun at such a wakeup, undone if the thread
	 * sleeps on in the same wait (the wakeup found nothing ready). Cleared at the first wait
	 * edge the probes see.
	 */
	__u16 first_wait;
	/*
	 * Syscall mode: which hooks (one JW_WAIT_BY_* bit) saw the thread's last wait begin: the
	 * uprobes at its entry, or the tracepoints where it slept or returned (bpf/wait.bpf.h).
	 */
	__u16 wait_by;
	__u32 slot;		/* the thread's row in the blocks array */
	__u64 seq;		/* number of the current (or last) task */
	__u64 start_ns;		/* start of the outermost open dispatch */
	__u32 probe_id;		/* probe of the outermost dispatch */
	__u32 pid;
	__u64 sp[JW_MAX_NEST];	/* stack pointer at each open dispatch entry, outermost first */
	__u32 samples;
	__u32 sample_drops;
	__u32 switches;
	__u32 pad0;
	__u64 runq_ns;
	__u64 blocked_ns;
	__u64 io_ns;
	__u64 carry_ns;		/* blocked time not yet counted in a sample */
	__u32 block_ready;	/* the blocks slot holds the stack of the block in progress */
	__u32 linked;		/* the thread's task storage holds this slot */
	__u64 block_wchan;	/* blocking function of the block in progress */
	struct jw_waker waker;	/* what woke the block in progress */
	__u64 longest_ns;	/* the longest block so far, its blocking function and waker */
	__u64 longest_wchan;
	struct jw_waker longest_waker;
	/*
	 * Inside a wait-bounded task, the dispatches directly under the waits: the longest so far
	 * (its probe id + 1, time, handler) and the one running (cur_probe 0: none).
	 */
	__u64 handler_addr;
	__u64 inner_ns;
	__u32 inner_probe;
	__u32 cur_probe;
	__u64 cur_start;
	__u64 cur_handler;
	__u64 cur_off;		/* runq_ns + blocked_ns when the one running began */
	/*
	 * Syscall mode: 1 once the probes of the thread's process were seen all attached (map
	 * probes_ready); until then no wait's return begins a task, which would miss the
	 * dispatches and presets' probes not yet in (on the system call tracepoints the waits are
	 * seen from the moment the thread is watched).
	 */
	__u16 probes_in;
	__u32 site_calls;	/* handler sites' return sites passed: user space's cost guard */
	/*
	 * CPython: the thread's PyThreadState, as _PyEval_EvalFrameDefault was last given it, and
	 * the id + 1 of the probe whose chain (arg_chains) says how to read its frames; 0: none.
	 */
	__u64 py_tstate;
	__u32 py_probe;
	__u64 py_timer_type;	/* asyncio's TimerHandle type, once a timer's was seen; 0: not yet */
	/*
	 * Queueing delay (and wake_ns, above). ready_ns: when the work of the current run was
	 * ready, the run being the tasks since that wakeup (syscall mode: since the wait's return,
	 * when it did not sleep); 0: unknown. delay_ns: the outermost task's delay, cur_delay_ns
	 * the running inner dispatch's; JW_DELAY_UNKNOWN when not known.
	 */
	__u64 ready_ns;
	__u64 delay_ns;
	__u64 cur_delay_ns;
	/*
	 * What the chains of the longest dispatch under the waits, and of the one running, read
	 * besides the handler (jw_arg_chain's klass and detail); cur_named: a nested site with
	 * JW_CHAIN_FIRST named the running one, no later one renames it.
	 */
	__u64 handler_class;
	__u64 handler_detail;
	__u64 cur_class;
	__u64 cur_detail;
	__u32 cur_named;
	/*
	 * The nested site with JW_CHAIN_LONGEST running (from @nest_start, 0: none, its frame at
	 * @nest_depth) and what it read; the longest such site so far in the running dispatch
	 * (@nest_best ns) named it.
	 */
	__u32 nest_depth;
	__u32 nest_reading;	/* its chain is being read (rename_nested) */
	__u32 nest_pad;
	__u64 nest_start;
	__u64 nest_val;
	__u64 nest_best;
	/*
	 * The thread's time on a CPU by the kernel's count (se.sum_exec_runtime) at its task's
	 * start: off-CPU time that reached no program shows against it (count_unseen()); and its
	 * voluntary switches by the kernel's count (nvcsw) then: one that reached no program shows
	 * against the switches seen.
	 */
	__u64 exec0;
	__u64 nvcsw0;
	/*
	 * The last on-CPU sample: when (0: none yet in this task), after how many of its task's
	 * switches. The next one in the same task with no switch between stands for the periods
	 * passed since (sample_weight.h), and for the @sample_young ones not taken in the task's
	 * first period.
	 */
	__u64 sample_ns;
	__u32 sample_switches;
	__u32 sample_young;
	/*
	 * sched_hooks=1: the thread's time on a CPU when it last left the CPU, by its switch
	 * event's running time (~0: not read then, switch_in_wanted()) and by the kernel's count
	 * (se.sum_exec_runtime); both stay put
	 * while it is off: what they count more where a program next runs on the thread is the
	 * time it has run since its switch back in (caught_up()).
	 */
	__u64 run_off;
	__u64 exec_off;
};

_Static_assert(__builtin_offsetof(struct jw_task_state, pid) == 60,
	       "the fields sched_waking's program touches fit in 64 bytes");

/* A delay that is not known: the thread was not seen waking before the run began. */
#define JW_DELAY_UNKNOWN (~0ULL)

/* Why a watched thread inside a task is off the CPU. */
/* JW_OFF_WAKING: woken in a wait on the switches alone, its task begins where it runs. */
enum jw_off_state { JW_OFF_RUNQ = 0, JW_OFF_BLOCKED, JW_OFF_IO, JW_OFF_WAKING };

/* What the handler a naming dispatch finds is. */
enum jw_handler_kind {
	JW_HANDLER_CODE = 0,	/* a code address, named by symbolization (redis: c->cmd->proc) */
	JW_HANDLER_PY_CODE = 1,	/* a CPython code object: its name and file are read from it */
};

/* jw_arg_chain's flags. */
enum jw_chain_flags {
	JW_CHAIN_CLASS = 1,	/* @klass is read: what the handler belongs to (a Qt receiver's vtable) */
	JW_CHAIN_DETAIL = 2,	/* @detail is read: more of the handler (a Qt slot object's function) */
	/*
	 * A site nested in a naming dispatch names it only if no nested site did before: Qt's
	 * first slot an event runs is its handler, not the slots that slot's signals run
	 */
	JW_CHAIN_FIRST = 4,
	/*
	 * A site nested in a naming dispatch names it if it ran longest of those that did: GTK's
	 * frame clock phases (layout, paint), each a site, name the frame by the one that took the
	 * time. Its exit decides.
	 */
	JW_CHAIN_LONGEST = 8,
};

/*
 * A value a probe reads from the user registers it stopped with: register @reg (DWARF numbering,
 * JW_UREG_*), then @n_offsets (0..3) loads, *(p + offsets[i]).
 */
struct jw_reg_path {
	__u32 reg;
	__u32 n_offsets;
	__s32 offsets[3];
};

/*
 * How a naming dispatch's probe finds the handler it runs, and when it was due.
 * - At a function's entry, from an argument's register: redis's call(c): the first argument,
 *   c->cmd (0x70) then cmd->proc (0x50); CPython 3.11's _PyEval_EvalFrameDefault(tstate, frame,
 *   throwflag): the second, frame->f_code (0x20).
 * - At a loop's call of a callback (a handler site): the callback's own register or a field of
 *   its argument, else (@handler_else) the callee's register; and the due time of the timer it
 *   runs, when the loop keeps one (@due, in units of @due_unit_ns on CLOCK_MONOTONIC; a negative
 *   value is none), so that the delay is how late the timer ran.
 */
struct jw_arg_chain {
	struct jw_reg_path handler;
	__u32 kind;		/* enum jw_handler_kind */
	/* JW_HANDLER_PY_CODE: where a code object keeps its qualified name, file and first line */
	__u32 py_qualname;
	__u32 py_filename;
	__u32 py_firstlineno;
	/* where a str keeps its state bits, and the characters of a compact ASCII one */
	__u32 py_str_state;
	__u32 py_str_ascii_data;
	__u32 py_str_utf8;	/* a compact non-ASCII str: its UTF-8 copy's pointer, if made */
	__u32 handler_else;	/* register + 1 whose value is the handler when @handler gives 0; 0: none */
	struct jw_reg_path due;
	__u32 due_unit_ns;	/* 0: no due time */
	/*
	 * JW_HANDLER_PY_CODE: an asyncio timer's due time, from the handle whose method calls the
	 * callback: the caller's frame (the thread's current frame at the entry, see below), its
	 * first local (@py_frame_local0), an object whose type (at @py_ob_type) is named
	 * "TimerHandle" (tp_name at @py_tp_name); its _when, the last of its sorted __slots__, is
	 * at the type's size (tp_basicsize, at @py_tp_basicsize: right after tp_name, read with it)
	 * less 8: a float (its double at @py_float_value), seconds of CLOCK_MONOTONIC (the loop's
	 * time()). @py_tp_basicsize 0: no due times.
	 */
	__u16 py_frame_previous;
	__u16 py_frame_local0;
	__u16 py_ob_type;
	__u16 py_tp_name;
	__u16 py_tp_basicsize;
	__u16 py_float_value;
	/*
	 * JW_HANDLER_PY_CODE: the thread's Python frames (JW_COOKIE_PY_TSTATE). Its current frame:
	 * *(tstate + @py_tstate_frame), then where @py_cframe_frame is not JW_PY_NONE (3.11, 3.12:
	 * that was the C frame record) *(that + @py_cframe_frame); at _PyEval_EvalFrameDefault's
	 * entry it is the caller's frame (the frame the call is given does not point to it yet).
	 * Per frame, at these offsets, all below JW_PY_FRAME_WINDOW: its code object
	 * (@py_frame_code; from 3.14 a tagged reference, the tag in the bits of @py_ref_tag), its
	 * instruction (@py_frame_instr), its caller (@py_frame_previous), and a byte (@py_frame_entry)
	 * equal to @py_entry_value in the frames that begin a call of _PyEval_EvalFrameDefault
	 * (3.11: is_entry of the call's first frame; 3.12 on: the owner of a frame the call pushes
	 * for itself, no Python code). The frames of calls lie one after the other in the thread's
	 * data stack: its chunk, *(tstate + @py_tstate_chunk) (JW_PY_NONE: not known), holds its
	 * size at 8 and its frames from 24, so that most frames come from one read of it.
	 */
	__u16 py_tstate_frame;
	__u16 py_cframe_frame;
	__u16 py_frame_code;
	__u16 py_frame_instr;
	__u16 py_frame_entry;
	__u16 py_entry_value;
	__u16 py_ref_tag;
	__u16 py_tstate_chunk;
	/*
	 * Besides the handler (@flags, enum jw_chain_flags): what it belongs to (@klass) and more of
	 * it (@detail), read as @handler is; @handler_bits: how many low bits of what @handler's
	 * path read are the handler (a Qt event's 16-bit type); 0: all; @detail_bits the same for
	 * @detail (a Looper message's 32-bit what).
	 */
	struct jw_reg_path klass;
	struct jw_reg_path detail;
	__u32 flags;
	__u32 handler_bits;
	__u32 detail_bits;
};

#define JW_PY_NONE 0xffff	/* a py_* offset the version has no such field for */

/*
 * Where a watched process runs the code of the library its callback sites are in: a callee
 * there is the library's own (an I/O watcher's function), one outside it the program's.
 */
struct jw_code_range {
	__u64 lo;
	__u64 hi;		/* 0: none known */
};

/* An executable --exe watches, by its file's identity. */
struct jw_exe_key {
	__u64 dev;		/* the kernel's dev_t of the file's filesystem */
	__u64 ino;
};

/* --name: a kernel name (comm, NUL-padded) a process of a watched name may take. */
struct jw_name_key {
	char comm[JW_COMM_LEN];
};
#define JW_MAX_NAME_KEYS 64

/*
 * A FORK, EXEC or EXIT record: hdr.pid is the process, hdr.flags its enum jw_exec_flags (EXEC),
 * start_boot_ns its start (what /proc/PID/stat's field 22 counts in ticks), so that a pid reused
 * is told apart.
 */
struct jw_proc_rec {
	struct jw_rec_hdr hdr;
	__u64 start_boot_ns;
	__u32 parent;		/* FORK: the process that forked it */
	__u32 pad;
	char comm[JW_COMM_LEN];	/* its name: a FORK's is its parent's, an EXEC's the new one */
};

/* A thread user space asked to watch. */
struct jw_watch {
	__u32 pid;
	__u32 slot;		/* the thread's row in thread_state, blocks and stats_outer */
};

/*
 * A watched thread's task storage (or, on kernels without task storage for tracing programs,
 * its entry in a hash by tid): where its state is, for programs that have no cookie.
 */
struct jw_thread_link {
	__u32 slot;
};

/*
 * On kernels without attach cookies (before 5.15): a probe's cookie is found by the process and
 * the address the probe is at (map probe_cookies, written by user space as it attaches).
 */
struct jw_probe_addr {
	__u32 pid;		/* the process (tgid) */
	__u32 pad;
	__u64 addr;		/* the probed instruction's address in it */
};

#endif /* JANKWATCH_ABI_H */
