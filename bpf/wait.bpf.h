/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode: tasks bounded by the wait calls, on uprobes of the C library's wrappers or on
 * the system call tracepoints; the first task of a thread watched while it waits; the system
 * call rates that choose between the two.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_WAIT_H
#define JW_BPF_WAIT_H

/* Whether thread @p is in a wait system call: the number its user registers were saved with. */
static __always_inline bool in_wait_syscall(struct task_struct *p)
{
	const struct pt_regs *regs = task_user_regs(p);

	return regs && is_wait_syscall(syscall_nr(regs));
}

/* Whether thread @p, leaving the CPU, goes to sleep inside a wait system call. */
static __noinline bool asleep_in_wait(struct task_struct *p)
{
	return task_state(p) != TASK_RUNNING && in_wait_syscall(p);
}


/*
 * By slot: 1 once every probe of the slot's process is attached, the waits' last (user space
 * sets it after them, clears it when the slot is watched anew). Until then a wait the thread
 * enters may go unseen, and with it the end of a task its wakeup would begin; and a task begun
 * would miss the dispatches whose probes are not in yet: python's evaluation of a coroutine
 * step, not seen, would leave the step's first nested evaluation to name the handler.
 * Sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} probes_ready SEC(".maps");

/*
 * Thread @p, watched while blocked in a wait it entered before its probes were attached (see
 * jw_task_state.first_wait), is woken: if it is in a wait system call and its process's wait
 * probes are all in, the return begins a task now, which the return probe cannot see. Until
 * the thread runs it waits for a CPU: its switch-in counts that as the task's run-queue time.
 */
static __noinline void first_wakeup(struct task_struct *p, struct jw_task_state *s)
{
	__u32 slot = s->slot, *ready;
	__u64 now;

	if (s->depth) {
		s->first_wait = 0;
		return;
	}
	ready = bpf_map_lookup_elem(&probes_ready, &slot);
	if (!ready || !*ready)
		return;
	if (!in_wait_syscall(p))
		return;	/* asleep elsewhere (a lock, a read): still armed */
	/* Tentative: a wakeup that finds nothing ready puts it back to sleep in the same wait. */
	s->first_wait = 2;
	now = bpf_ktime_get_ns();
	begin_task(s, p, now, wait_probe_id);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
	s->off_ns = now;
	s->off_state = JW_OFF_RUNQ;
	__sync_fetch_and_add(&off_cpu_watched, 1);
}


/*
 * Syscall mode on the tracepoints, which have no program at a wait's entry: thread @p, with a task
 * open and switched out (@preempt: involuntarily), goes to sleep in a wait system call; its task
 * ends now. Whether that is so costs only the watched threads' switches out inside a task.
 */
static __always_inline bool wait_slept(struct task_struct *p, struct jw_task_state *s,
				       bool preempt)
{
	if (!(wait_hooks & (JW_WAIT_BY_TRACEPOINTS | JW_WAIT_BY_SWITCHES)) || preempt ||
	    !asleep_in_wait(p))
		return false;
	s->first_wait = 0;
	s->wait_by = wait_hooks & JW_WAIT_BY_TRACEPOINTS ? JW_WAIT_BY_TRACEPOINTS :
							   JW_WAIT_BY_SWITCHES;
	s->depth = 0;
	finish_task(s, current_tid(p), bpf_ktime_get_ns());
	return true;
}

/* Whether the probes of @s's process are all attached (probes_ready), remembered once seen. */
static __always_inline bool probes_in(struct jw_task_state *s)
{
	__u32 slot = s->slot, *ready;

	if (s->probes_in)
		return true;
	ready = bpf_map_lookup_elem(&probes_ready, &slot);
	if (!ready || !*ready)
		return false;
	s->probes_in = 1;
	return true;
}

/*
 * On the switches alone (JW_WAIT_BY_SWITCHES): thread @p, outside a task, is woken at @now.
 * Asleep in a wait (after the sleep that ended its last task, wait_slept(); the first time, a
 * thread watched while it slept there, found in a wait system call by its saved registers once
 * its process's probes are all in), its task begins where it runs next (JW_OFF_WAKING: the switch
 * in counts nothing more), the run-queue time before it being the task's delay, as a wait's
 * return would have it. Asleep elsewhere (a lock, a read outside the loop's wait): nothing.
 */
static __always_inline void switch_wakeup(struct task_struct *p, struct jw_task_state *s, __u64 now)
{
	if (s->depth || s->off_ns)
		return;
	if (s->wait_by != JW_WAIT_BY_SWITCHES && (!probes_in(s) || !in_wait_syscall(p)))
		return;
	s->first_wait = 0;	/* its wait's end is seen this way too */
	s->off_ns = now;
	s->off_state = JW_OFF_WAKING;
	__sync_fetch_and_add(&off_cpu_watched, 1);
}

/*
 * Syscall mode: a task is the time between the loop's wait returning and its next wait. The
 * return of a wait function (a return probe on the libc wrapper, or the system call's exit)
 * opens a task whose frame sits above every other, so dispatch probes inside it nest; the next
 * wait's entry (or its sleep, on the tracepoints) closes everything.
 */
/*
 * Whether a wait's return seen by hooks @by counts. While both kinds count, one wait is seen
 * twice: its return counts from the uprobes when their entry probe saw it begin (wait_by is then
 * theirs alone), else from the tracepoints (a wait entered before the uprobes were in, whose
 * sleep or return ended the task), and the other's is the same wait's.
 */
static __always_inline bool return_counts(const struct jw_task_state *s, __u32 by)
{
	if (wait_hooks != (JW_WAIT_BY_UPROBES | JW_WAIT_BY_TRACEPOINTS) || !s->wait_by)
		return true;
	return by == s->wait_by;
}

/*
 * Thread @s, asleep outside a task, entered its wait where only the tracepoints counted, and the
 * uprobes count now: no return probe is on the wrapper it will return through, so its wakeup
 * begins the task instead (first_wakeup()), as for a thread watched in its wait.
 */
static __always_inline bool wait_end_unseen(const struct jw_task_state *s)
{
	return !s->depth && (s->wait_by & (JW_WAIT_BY_TRACEPOINTS | JW_WAIT_BY_SWITCHES)) &&
	       wait_hooks == JW_WAIT_BY_UPROBES;
}

/*
 * A wait returned on thread @task, seen by hooks @by: a task begins (probe id @cookie's). On the
 * tracepoints, a task still open here is the normal end of one whose wait returned at once
 * (wait_slept() ends it where the wait sleeps).
 */
static __always_inline void wait_returned(struct task_struct *task, __u64 cookie, __u32 by)
{
	struct jw_task_state *s;
	__u64 now;

	if (stopped || !(wait_hooks & by))
		return;
	s = probe_state(task, cookie, true);
	on_cpu_again(task, s);
	if (!s || !probes_in(s) || !return_counts(s, by))
		return;
	if (s->first_wait == 2 && s->depth) {
		/*
		 * The wakeup that began a task (first_wakeup()) was from a wait whose return is seen
		 * after all (fexit: entered after they were attached, by a thread watched later): that
		 * task is undone, and this return begins one, the wakeup its delay.
		 */
		s->depth = 0;
		s->wake_ns = s->start_ns;
	}
	s->first_wait = 0;	/* the probes see this thread's waits from here */
	now = bpf_ktime_get_ns();
	if (s->depth) {
		s->depth = 0;
		if (by == JW_WAIT_BY_TRACEPOINTS)
			s->wait_by = JW_WAIT_BY_TRACEPOINTS;
		else
			s->flags |= JW_TASK_NO_EXIT;	/* the wrapper's entry was not seen */
		finish_task(s, current_tid(task), now);
	}
	/* A wait that returned without sleeping found its work ready: the run begins now. */
	if (!s->wake_ns)
		s->ready_ns = now;
	begin_task(s, task, now, cookie);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
}

/* Thread @task enters a wait, seen by the uprobes: its task ends. */
static __always_inline void wait_entered(struct task_struct *task, __u64 cookie)
{
	const __u32 by = JW_WAIT_BY_UPROBES;
	struct jw_task_state *s;

	if (stopped || !(wait_hooks & by))
		return;
	s = probe_state(task, cookie, false);
	on_cpu_again(task, s);
	if (!s)
		return;
	if (s->first_wait)
		s->first_wait = 0;	/* the probes see this thread's waits from here */
	s->wait_by = by;
	if (s->depth == 0)
		return;		/* outside a task: its first wait seen, or a return not counted */
	s->depth = 0;
	finish_task(s, current_tid(task), bpf_ktime_get_ns());
}

/*
 * A wait probe's cookie; where the kernel has no attach cookies (the compatible build), the
 * waits' probe id, the thread found by its tid: every wait probe is the same but for its slot.
 */
static __always_inline __u64 wait_cookie(struct pt_regs *ctx, struct task_struct *task)
{
#if JW_COMPAT
	if (!has_attach_cookie)
		return wait_probe_id;
#endif
	return probe_cookie(ctx, task);
}

SEC("uprobe")
int wait_return(struct pt_regs *ctx)
{
	struct task_struct *task = probe_task(ctx);

	wait_returned(task, wait_cookie(ctx, task), JW_WAIT_BY_UPROBES);
	return 0;
}

SEC("uprobe")
int wait_enter(struct pt_regs *ctx)
{
	struct task_struct *task = probe_task(ctx);

	wait_entered(task, wait_cookie(ctx, task));
	return 0;
}

/* A wait's entry and return as one uprobe session (dispatch_session's way). */
SEC("uprobe")
int wait_session(struct pt_regs *ctx)
{
#if !JW_COMPAT
	struct task_struct *task = probe_task(ctx);
	bool is_return;
	__u64 cookie = session_cookie(task, &is_return);

	if (is_return)
		wait_returned(task, cookie, JW_WAIT_BY_UPROBES);
	else
		wait_entered(task, cookie);
#endif
	return 0;
}

/*
 * Syscall mode on the system call tracepoints (wait_tracepoints=1) instead of the C library's
 * wrappers: a call where the loop pays a trap, but every system call of the machine goes through
 * the tracing path. Only the exit has a program: a wait that sleeps ends its task at the switch
 * (wait_slept()), one that returns at once at its exit, so no wait of the machine, the watched
 * loop's or any other process's, runs a program on its way in. For any other call, one
 * comparison.
 */

JW_TRACEPOINT(sys_exit)
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	if (is_wait_syscall(syscall_nr(regs)))
		wait_returned(probe_task(regs), wait_probe_id, JW_WAIT_BY_TRACEPOINTS);
	return 0;
}

/*
 * The same on the wait system calls' own exit events (syscalls:sys_exit_epoll_wait and the others
 * of is_wait_syscall(), attached by user space as perf events by their ids): only a wait's
 * return runs a program; the machine's other system calls take the tracing path and a bitmap
 * test. The record is not read: the current task is all it needs.
 */
SEC("tracepoint")
int wait_sys_exit(void *ctx)
{
	(void)ctx;
	wait_returned(current_task(), wait_probe_id, JW_WAIT_BY_TRACEPOINTS);
	return 0;
}

/*
 * The same as fexit programs on the wait system calls' functions (__x64_sys_epoll_wait and the
 * others of is_wait_syscall()), where the kernel has BPF trampolines: only the machine's waits
 * run a program, and no other system call takes the tracing path. A tracing program is loaded
 * for one function: one each, user space setting their targets (or leaving them unloaded where
 * the kernel has no trampolines, or no BTF of its own to name the functions by). In both builds:
 * 5.10 has trampolines on x86-64. A wait entered before they were attached returns unseen: a
 * thread watched while in one has its wakeup begin the task (first_wait, as on the uprobes).
 */
#define WAIT_FEXIT(i)                                                                 \
	SEC("fexit")                                                                  \
	int wait_fexit_##i(void *ctx)                                                 \
	{                                                                             \
		(void)ctx;                                                            \
		wait_returned(current_task(), wait_probe_id, JW_WAIT_BY_TRACEPOINTS); \
		return 0;                                                             \
	}
WAIT_FEXIT(0)
WAIT_FEXIT(1)
WAIT_FEXIT(2)
WAIT_FEXIT(3)
WAIT_FEXIT(4)
WAIT_FEXIT(5)
WAIT_FEXIT(6)

/*
 * wait_tracepoints=2: for a moment at start, how many system calls the whole machine makes
 * (JW_RATE_SYSCALLS), how many of them are waits (JW_RATE_MACHINE_WAITS: each would run the
 * waits' exit program) and how many waits of the threads about to be watched (JW_RATE_WAITS),
 * which decides which of the two ways to hook the waits costs the machine less.
 * Detached once counted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JW_RATE_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} syscall_rates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JW_MAX_RATE_TIDS);
	__type(key, __u32);
	__type(value, __u8);
} rate_tids SEC(".maps");

static __always_inline void count_rate(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&syscall_rates, &which);

	if (n)
		(*n)++;
}

JW_TRACEPOINT(sys_enter)
int BPF_PROG(count_syscalls, struct pt_regs *regs, long id)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (stopped)
		return 0;
	count_rate(JW_RATE_SYSCALLS);
	if (!is_wait_syscall(id))
		return 0;
	count_rate(JW_RATE_MACHINE_WAITS);
	if (bpf_map_lookup_elem(&rate_tids, &tid))
		count_rate(JW_RATE_WAITS);
	return 0;
}

#endif
