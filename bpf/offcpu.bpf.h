/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A watched thread back on the CPU after time off it: the time goes where its switch out put it,
 * or its task begins (woken in its wait, on the switches alone). With sched_hooks=1 no program
 * sees the switch in: the first one to run on the thread after takes it (on_cpu_again()).
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_OFFCPU_H
#define JW_BPF_OFFCPU_H

/*
 * sched_hooks=1: each watched thread's switch event (on_thread_switch), at its slot, for the
 * thread's time on a CPU as perf counts it (caught_up()). Sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} switch_events SEC(".maps");

/*
 * On the switches alone (wait_tracepoints=3): thread @task, woken in its wait (switch_wakeup()),
 * runs at @now: its task begins.
 */
static __noinline void switch_begins(struct task_struct *task, struct jw_task_state *s, __u64 now)
{
	if (s->depth || wait_hooks != JW_WAIT_BY_SWITCHES)
		return;
	s->wait_by = JW_WAIT_BY_SWITCHES;
	begin_task(s, task, now, wait_probe_id);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
}

/*
 * Watched thread @task (@s), off the CPU since @off (s->off_ns, taken by the caller), runs again
 * from @now: the time goes where its switch out put it, or (woken in its wait on the switches
 * alone) its task begins.
 */
static __always_inline void switched_in(struct task_struct *task, struct jw_task_state *s,
					__u64 off, __u64 now)
{
	__u64 d = now - off;

	__sync_fetch_and_add(&off_cpu_watched, -1);
	if (s->off_state == JW_OFF_WAKING) {
		switch_begins(task, s, now);
		return;
	}
	if (s->off_state == JW_OFF_RUNQ) {
		s->runq_ns += d;
		return;
	}
	s->blocked_ns += d;
	if (s->off_state == JW_OFF_IO)
		s->io_ns += d;
	block_ends(s, d);
}

#if !JW_COMPAT
/* jw_task_state.run_off not read at the thread's last switch out (switch_in_wanted()). */
#define JW_RUN_UNREAD (~0ULL)

/*
 * Whether a program may take the switch in of watched thread @s, leaving the CPU now, before its
 * next switch out (caught_up()): it is off inside a task, or a wakeup in its wait may begin one
 * (first_wakeup(), switch_wakeup()). A wakeup that begins one after the waits' hooks changed
 * from the tracepoints to the uprobes while it slept (wait_end_unseen()) is not foreseen: its
 * switch in is dated by the kernel's count instead.
 */
static __always_inline bool switch_in_wanted(const struct jw_task_state *s)
{
	return s->off_ns || s->first_wait || (wait_hooks & JW_WAIT_BY_SWITCHES);
}

/*
 * The threads' own switch events (sched_hooks=1): watched thread @task (@s) runs, off the CPU
 * since s->off_ns (a switch out inside a task, or a wakeup in its wait on the switches alone)
 * with no program run on it since: it came back as long ago as it has run since, which its switch
 * event counts (perf's running time: the thread's time on a CPU, to the nanosecond, read now; at
 * its last switch out in s->run_off). Where that event cannot be read, or was not at the switch
 * out, the kernel's own count (se.sum_exec_runtime), which lags up to a tick.
 */
static __noinline void caught_up(struct task_struct *task, struct jw_task_state *s)
{
	__u64 now = bpf_ktime_get_ns(), off = s->off_ns, ran = 0, on_cpu, at;
	struct bpf_perf_event_value v;

	if (!off)
		return;
	/* Each read kept apart: the verifier refuses one load from either pointer. */
	if (s->run_off != JW_RUN_UNREAD &&
	    !bpf_perf_event_read_value(&switch_events, s->slot, &v, sizeof(v))) {
		on_cpu = v.running;
		barrier_var(on_cpu);
		if (on_cpu >= s->run_off)
			ran = on_cpu - s->run_off;
	} else if (s->exec_off) {
		on_cpu = task->se.sum_exec_runtime;
		barrier_var(on_cpu);
		ran = on_cpu - s->exec_off;
	}
	at = now > ran ? now - ran : now;
	/*
	 * Taken before it is counted, and only if no other program took it first: the sampler's
	 * (on_sample(), from its timer's interrupt) may run inside a program of the same thread and
	 * catch up itself. A uprobe's programs run with interrupts on and, since 6.0, outside the
	 * count (bpf_prog_active) that keeps a perf event's program from running inside another's;
	 * raw tracepoints' never were in it. Read again after such a catch-up, the time off was
	 * 0 and the run-queue time took the whole clock (seen: 150 s in a 300 ms task).
	 */
	if (__sync_val_compare_and_swap(&s->off_ns, off, 0) != off)
		return;
	switched_in(task, s, off, at > off ? at : off);
}

#endif

/*
 * sched_hooks=1: a program runs on watched thread @task (@s), which may have come back to the CPU
 * since its last switch out; no program saw that (caught_up()). Every program that runs on a
 * watched thread and reads its task calls it first.
 */
static __always_inline void on_cpu_again(struct task_struct *task, struct jw_task_state *s)
{
#if !JW_COMPAT
	if (thread_switches && s && s->off_ns)
		caught_up(task, s);
#endif
}

#endif
