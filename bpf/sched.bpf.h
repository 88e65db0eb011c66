/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scheduler's events: a watched thread's off-CPU time split (runnable, blocked, IO), the
 * stack it sleeps with, who wakes it, and the trace events of traced processes.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_SCHED_H
#define JW_BPF_SCHED_H

/* The first kernel frame outside the scheduler (after the tracing frames above it). */
static __u64 blocking_function(const struct jw_sample_rec *rec)
{
	__u64 lo = (__u64)&__sched_text_start, hi = (__u64)&__sched_text_end;
	bool in_sched = false;

	for (int i = 0; i < JW_MAX_KERNEL_FRAMES; i++) {
		__u64 ip;

		if (i >= rec->n_kernel)
			break;
		ip = rec->kernel_ips[i];
		if (ip >= lo && ip < hi)
			in_sched = true;
		else if (in_sched)
			return ip;
	}
	return 0;
}

/* A watched thread inside a task goes to sleep: keep where, to send it when it wakes. */
static void block_begins(void *ctx, struct task_struct *prev, struct jw_task_state *s, __u64 now)
{
	__u32 slot = s->slot;
	struct jw_sample_rec *rec;

	s->block_ready = 0;
	s->block_wchan = 0;
	s->waker.flags = 0;
	rec = bpf_map_lookup_elem(&blocks, &slot);
	if (!rec)
		return;
	fill_sample(ctx, prev, s, rec, s->off_state == JW_OFF_IO ? JW_SAMPLE_IO : JW_SAMPLE_BLOCKED,
		    now);
	s->block_wchan = blocking_function(rec);
	s->block_ready = 1;
}

/* The state sched_switch's prev_state shows: its highest TASK_REPORT bit, as the kernel's. */
static __u32 report_state(struct task_struct *p, bool preempt)
{
	__u32 state = task_state(p), bits;

	if (preempt)
		return JW_STATE_PREEMPTED;
	if (state == (0x0002 | 0x0400))	/* TASK_IDLE: TASK_REPORT_IDLE */
		return 0x80;
	if (state & 0x1000)		/* TASK_RTLOCK_WAIT shows as uninterruptible */
		return 0x02;
	bits = (state | KREAD(p, exit_state)) & 0x7f;
	for (int i = 6; i >= 0; i--)
		if (bits & (1U << i))
			return 1U << i;
	return 0;
}

/* A context switch where a traced process's thread leaves or takes the CPU. */
static void trace_switch(bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 a = KREAD(prev, tgid), b = KREAD(next, tgid);
	struct jw_sched_rec *rec;

	if (!bpf_map_lookup_elem(&trace_pids, &a) && !bpf_map_lookup_elem(&trace_pids, &b))
		return;
	rec = trace_reserve(sizeof(*rec), JW_REC_SCHED, a, KREAD(prev, pid), bpf_ktime_get_ns());
	if (!rec)
		return;
	rec->kind = JW_SCHED_SWITCH;
	rec->cpu = bpf_get_smp_processor_id();
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), prev->comm);
	rec->prio = KREAD(prev, prio);
	rec->prev_state = report_state(prev, preempt);
	rec->other_pid = b;
	rec->other_tid = KREAD(next, pid);
	bpf_probe_read_kernel_str(rec->other_comm, sizeof(rec->other_comm), next->comm);
	rec->other_prio = KREAD(next, prio);
	rec->target_cpu = 0;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* A traced process's thread @p is woken, by the thread running now (or an interrupt). */
static void trace_waking(struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct jw_sched_rec *rec;
	__u32 pid = KREAD(p, tgid);

	if (!bpf_map_lookup_elem(&trace_pids, &pid))
		return;
	rec = trace_reserve(sizeof(*rec), JW_REC_SCHED, id >> 32, (__u32)id, bpf_ktime_get_ns());
	if (!rec)
		return;
	rec->kind = JW_SCHED_WAKING;
	rec->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->prio = KREAD(p, prio);
	rec->prev_state = 0;
	rec->other_pid = pid;
	rec->other_tid = KREAD(p, pid);
	bpf_probe_read_kernel_str(rec->other_comm, sizeof(rec->other_comm), p->comm);
	rec->other_prio = rec->prio;
	rec->target_cpu = task_cpu(p);
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}


/*
 * Watched thread @prev (@s) leaves the CPU (@preempt: involuntarily): inside a task, its off-CPU
 * time begins (runnable, asleep, asleep in IO; the stack where it sleeps taken), or the task ends
 * where it sleeps in a wait. Returns the time taken, 0 when none was.
 */
static __always_inline __u64 switched_out(void *ctx, struct task_struct *prev,
					  struct jw_task_state *s, bool preempt)
{
	__u64 now;
	__u32 state;

	if (!s->depth) {
		/*
		 * On fexit (wait_fexit), attached before any thread was watched: a wait the thread
		 * sleeps in after it was watched returns through them, and its return, not its
		 * wakeup, begins the task (first_wait is for a wait entered before).
		 */
		if (s->first_wait == 1 && wait_fexit && !preempt && asleep_in_wait(prev))
			s->first_wait = 0;
		return 0;
	}
	if (s->first_wait == 2 && !preempt && asleep_in_wait(prev)) {
		/*
		 * The wakeup that began its first task found nothing ready (another worker took the
		 * connection): it sleeps on in the same wait, whose end is still to come.
		 */
		s->depth = 0;
		s->first_wait = 1;
		return 0;
	}
	if (wait_slept(prev, s, preempt))
		return 0;
	now = bpf_ktime_get_ns();
	/* Switched out again: its switch back in reached no program. */
	if (!s->off_ns)
		__sync_fetch_and_add(&off_cpu_watched, 1);
	else if (s->off_ns >= s->start_ns)
		switch_unseen(s);
	else
		count_drop(JW_DROP_SWITCH);	/* in a task already ended */
	s->off_ns = now;
	s->switches++;
	state = task_state(prev);
	/*
	 * Runnable; or woken already (TASK_WAKING: the wakeup came after the scheduler took it off
	 * the run queue, before this program ran): its wait is for the CPU.
	 */
	if (preempt || state == TASK_RUNNING || state == TASK_WAKING)
		s->off_state = JW_OFF_RUNQ;
	else if (BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		s->off_state = JW_OFF_IO;
	else
		s->off_state = JW_OFF_BLOCKED;
	if (s->off_state != JW_OFF_RUNQ)
		block_begins(ctx, prev, s, now);
	return now;
}

/*
 * Splits a watched thread's off-CPU time inside a task (runnable but preempted, asleep, asleep in
 * IO) and takes the stack where it sleeps. Runs on every context switch of the machine: for
 * threads that are not watched, one task storage lookup that finds nothing, and a second one
 * only while some watched thread is off the CPU inside a task. Not attached with the threads'
 * own switch events (thread_switches) unless trace events are on, then for them alone.
 */
JW_TRACEPOINT(sched_switch)
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct jw_task_state *s;
	__u64 now = 0;

	if (stopped)
		return 0;
	if (trace_on)
		trace_switch(preempt, prev, next);
	if (thread_switches)
		return 0;
	s = task_state_of(prev);
	if (s)
		now = switched_out(ctx, prev, s, preempt);
	if (!off_cpu_watched)
		return 0;
	s = task_state_of(next);
	if (s && s->off_ns) {
		__u64 off = s->off_ns;

		s->off_ns = 0;
		switched_in(next, s, off, now ? now : bpf_ktime_get_ns());
	}
	return 0;
}

#if !JW_COMPAT
/* 6.12's delayed dequeue: a sleeping task may stay on its run queue, marked so. */
struct sched_entity___delayed {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));
#endif

/*
 * sched_hooks=1: a watched thread's own switch out (a software perf event counting them, one per
 * watched thread, every one an overflow): the program runs on that thread alone, as it leaves the
 * CPU, and nowhere else. The switch back in since its last one is taken first (caught_up()).
 * Whether it was preempted: the event does not say; a thread still on its run queue was (a
 * sleeping one is taken off it, or kept there as delayed, 6.12's sched_delayed).
 * In both builds' object; the compatible one keeps every switch on sched_switch.
 */
SEC("perf_event")
int on_thread_switch(struct bpf_perf_event_data *ctx)
{
#if JW_COMPAT
	(void)ctx;
	return 0;
#else
	struct task_struct *prev = bpf_get_current_task_btf();
	struct bpf_perf_event_value v;
	struct jw_task_state *s;
	bool preempt;

	if (stopped || !thread_switches)
		return 0;
	s = task_state_of(prev);
	if (!s)
		return 0;
	if (s->off_ns)
		caught_up(prev, s);
	/*
	 * Both read as bitfields, which take a field whatever its size or width (a plain load of
	 * on_rq fails to relocate on 7.2: its type is not 6.x's int there); loaded directly, as
	 * the current task's BTF pointer allows, not through a helper call.
	 */
	preempt = BPF_CORE_READ_BITFIELD(prev, on_rq);
	if (preempt) {
		struct sched_entity___delayed *se = (void *)&prev->se;

		if (bpf_core_field_exists(se->sched_delayed))
			preempt = !BPF_CORE_READ_BITFIELD(se, sched_delayed);
	}
	switched_out(ctx, prev, s, preempt);
	/*
	 * Where caught_up() counts its time on a CPU from, whenever it next comes back: the
	 * kernel's count always (one load), the event's (~100-250 ns here) only where a program
	 * may take the switch back in, not where the loop's wait ends the task it sleeps in.
	 */
	s->exec_off = prev->se.sum_exec_runtime;
	s->run_off = JW_RUN_UNREAD;
	if (switch_in_wanted(s) && !bpf_perf_prog_read_value(ctx, &v, sizeof(v)))
		s->run_off = v.running;
	return 0;
#endif
}


/*
 * Who wakes a sleeping watched thread: runs in the waker's context (sched_wakeup may run on the
 * wakee's CPU, in someone else's). One task storage lookup for every other wakeup.
 */
JW_TRACEPOINT(sched_waking)
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	struct jw_task_state *s;
	struct task_struct *cur;
	long n;

	if (stopped)
		return 0;
	s = task_state_of(p);
	if (trace_on)
		trace_waking(p);
	if (!s)
		return 0;
	/* Woken outside a task, in the loop's wait: the work the next task runs is ready. */
	if (!s->depth) {
		s->wake_ns = bpf_ktime_get_ns();
		if (wait_hooks == JW_WAIT_BY_SWITCHES)
			switch_wakeup(p, s, s->wake_ns);
	}
	if (wait_hooks != JW_WAIT_BY_SWITCHES &&
	    (s->first_wait == 1 || wait_end_unseen(s)))
		first_wakeup(p, s);
	if (!s->off_ns) {
		/* Seen on the CPU: about to sleep, or asleep after a switch no program saw. */
		if (s->depth)
			s->flags |= JW_TASK_WOKEN_ON_CPU;
		return 0;
	}
	/* Runnable already, or woken in its wait on the switches alone: no task's block ends. */
	if (s->off_state == JW_OFF_RUNQ || s->off_state == JW_OFF_WAKING)
		return 0;
	cur = current_task();
	s->waker.pid = current_tgid(cur);
	s->waker.tid = current_tid(cur);
	/* Interrupt or timer context shows in the kernel stack; user space tells them apart. */
	s->waker.flags = JW_WAKER_KNOWN;
	bpf_get_current_comm(s->waker.comm, sizeof(s->waker.comm));
	n = bpf_get_stack(ctx, s->waker.ips, sizeof(s->waker.ips), 0);
	s->waker.n_ips = n > 0 ? n / sizeof(__u64) : 0;
	return 0;
}

#endif
