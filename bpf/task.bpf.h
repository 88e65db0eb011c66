/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tasks: one's begin and end, the end sent to user space when slow, its statistics row, and its
 * trace slice; the dispatches under it closed.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_TASK_H
#define JW_BPF_TASK_H

/*
 * The row of @key, new: made from stats_zero, named (its uid, comm and, for an inner probe
 * @probe's handler @handler, its Python code). A call of its own, once a row: its locals do not
 * weigh on the stack of the probes that end tasks, which 5.10 holds to 512 bytes in all.
 */
static __noinline struct jw_stats_val *new_stats_row(struct jw_stats_key *key, __u32 probe,
						     __u32 inner, __u64 handler)
{
	struct jw_stats_val *v;
	__u32 zero = 0;

	v = bpf_map_lookup_elem(&stats_zero, &zero);
	if (!v)
		return NULL;
	/* Fails with E2BIG when full; EEXIST cannot happen, only this thread makes its rows. */
	bpf_map_update_elem(&stats, key, v, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&stats, key);
	if (!v)
		return &stats_overflow;
	v->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(v->comm, sizeof(v->comm));
	if (inner)
		name_py_code(probe + 1, handler, v->handler_name, v->handler_file, &v->handler_line);
	return v;
}

/*
 * The statistics row of what the current thread @tid just ran: probe @probe, outermost or
 * directly under the waits (@inner), with @handler. Made on first use (named then: the thread,
 * the uid, a CPython handler); the OVERFLOW row when the map is full.
 */
static struct jw_stats_val *stats_row(struct jw_task_state *s, __u32 tid, __u32 probe, __u32 inner,
				      __u64 handler)
{
	struct jw_stats_key key = {
		.pid = s->pid, .tid = tid, .probe_id = probe, .inner = inner, .handler = handler,
		.klass = s->cur_class, .detail = s->cur_detail,
	};
	struct jw_stats_val *v = bpf_map_lookup_elem(&stats, &key);

	return v ? v : new_stats_row(&key, probe, inner, handler);
}

/*
 * A nested site with JW_CHAIN_LONGEST (rename_nested) ends at @now, or the dispatch it runs in
 * does (a wait inside it ends the task): it names the dispatch if it ran longest of such sites.
 */
static __always_inline void close_nested(struct jw_task_state *s, __u64 now)
{
	__u64 took = now - s->nest_start;

	s->nest_start = 0;
	if (!s->cur_probe || !s->nest_val || took < s->nest_best)
		return;
	s->nest_best = took;
	s->cur_handler = s->nest_val;
	s->cur_class = 0;
	s->cur_detail = 0;
}

/*
 * The dispatch directly under the waits ended at @now (its exit lost, if @exception): counted in
 * its own statistics row, and it names the task if it is the longest.
 */
static void end_inner(struct jw_task_state *s, __u32 tid, __u64 now, bool exception)
{
	__u64 ran = now - s->cur_start, off = s->runq_ns + s->blocked_ns - s->cur_off;
	struct jw_stats_val *v;

	/* Here, not inlined in its callers: dispatch_enter's frame is at 5.10's 512 bytes in all. */
	if (s->nest_start)
		close_nested(s, now);
	if (ran >= s->inner_ns) {
		s->inner_ns = ran;
		s->inner_probe = s->cur_probe;
		s->handler_addr = s->cur_handler;
		s->handler_class = s->cur_class;
		s->handler_detail = s->cur_detail;
	}
	v = stats_row(s, tid, (s->cur_probe - 1) & (JW_MAX_PROBES - 1), 1, s->cur_handler);
	if (v)
		jw_stats_add(v, ran, ran > off ? ran - off : 0, s->cur_delay_ns, exception,
			     stats_every, v == &stats_overflow);
	s->cur_probe = 0;
}

/* end_inner(), when one runs: inlined, so that a task with none makes no call. */
static __always_inline void close_inner(struct jw_task_state *s, __u32 tid, __u64 now,
					bool exception)
{
	if (s->cur_probe)
		end_inner(s, tid, now, exception);
}

/*
 * Reserves a trace log record of @size with its header filled: @type, the thread on the CPU
 * (@pid, @tid), now. NULL, counted, when the ring buffer is full.
 */
static __always_inline void *trace_reserve(__u32 size, __u16 type, __u32 pid, __u32 tid, __u64 now)
{
	struct jw_rec_hdr *h = bpf_ringbuf_reserve(&events, size, 0);

	if (!h) {
		count_drop(JW_DROP_TRACE);
		return NULL;
	}
	h->type = type;
	h->flags = 0;
	h->size = size;
	h->pid = pid;
	h->tid = tid;
	h->ts_ns = now;
	return h;
}

/* A task of a traced process ended at @now: its slice for the trace log. */
static void trace_slice(const struct jw_task_state *s, __u32 tid, __u64 now)
{
	struct jw_slice_rec *rec;
	__u32 pid = s->pid;

	if (!bpf_map_lookup_elem(&trace_pids, &pid))
		return;
	rec = trace_reserve(sizeof(*rec), JW_REC_SLICE, pid, tid, now);
	if (!rec)
		return;
	rec->hdr.flags = s->flags;
	rec->seq = s->seq;
	rec->start_ns = s->start_ns;
	rec->handler_addr = s->handler_addr;
	rec->probe_id = s->probe_id;
	rec->inner_probe = s->inner_probe;
	rec->cpu = bpf_get_smp_processor_id();
	rec->pad = 0;
	rec->handler_class = s->handler_class;
	rec->handler_detail = s->handler_detail;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* A task that ended at @now over the lowest threshold: its record for user space. */
static void report_task(struct jw_task_state *s, __u32 tid, __u64 now)
{
	struct jw_task_rec *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(JW_DROP_TASK);
		return;
	}
	jw_task_rec_fill(rec, s, tid, now);
	rec->handler_line = 0;
	rec->handler_name[0] = 0;
	rec->handler_file[0] = 0;
	name_py_code(s->inner_probe, s->handler_addr, rec->handler_name, rec->handler_file,
		     &rec->handler_line);
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

#if !JW_COMPAT
/*
 * The longest a thread's time on a CPU by the kernel's count (se.sum_exec_runtime) may lag what
 * it ran: the count is brought up to date at every scheduler tick (HZ 100 and up) and switch.
 */
#define EXEC_LAG_NS 10000000ULL

/*
 * A task of @wall ns that may be a jank, ending on its thread (every caller is the thread
 * itself): time off the CPU that reached no program (a kernel may keep some switches from
 * tracing; seen: one hiding a system agent's threads, and with their switch out the switch in
 * of the thread that ran next). An off-CPU time still open means the switch back in was
 * unseen: the time hidden (the wall time less what the programs saw off the CPU and the
 * kernel's count of what the thread ran) goes where that switch put the thread. A thread
 * woken while seen on the CPU, or with more voluntary switches by the kernel's count (nvcsw)
 * than the programs saw switches (its wakeup may be kept from them too), with more time hidden
 * than that count may lag, slept after a switch out that was unseen: the time goes to blocked.
 * (Not on the time alone: the count also lags where the tick stops, nohz_full, and leaves out
 * stolen time in a VM.) The task is flagged; a sleep seen beginning sends its stack for the
 * time hidden, one unseen has none, and its waker is not known. Read here, not at every task's
 * end: one under the threshold leaves an open off-CPU time to the thread's next switch out,
 * which counts it. (The compatible build has no room for it in 5.10's 512-byte stack of the
 * probes' calls.)
 */
static __noinline void count_unseen(struct jw_task_state *s, __u64 wall)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ran = task->se.sum_exec_runtime - s->exec0, seen = s->runq_ns + s->blocked_ns;
	__u64 hidden = wall > seen + ran ? wall - seen - ran : 0;
	__u32 state = s->off_state;
	__u64 off = s->off_ns;

	if (off) {
		s->off_ns = 0;
		__sync_fetch_and_add(&off_cpu_watched, -1);
	} else if (hidden > EXEC_LAG_NS && ((s->flags & JW_TASK_WOKEN_ON_CPU) ||
					    task->nvcsw - s->nvcsw0 > s->switches)) {
		state = JW_OFF_BLOCKED;
	} else {
		return;
	}
	switch_unseen(s);
	if (state == JW_OFF_RUNQ) {
		s->runq_ns += hidden;
		return;
	}
	s->blocked_ns += hidden;
	if (state == JW_OFF_IO)
		s->io_ns += hidden;
	/* Seen going to sleep in this task: where it slept is known, and stands for the time hidden. */
	if (off >= s->start_ns && s->block_ready)
		block_ends(s, hidden);
}
#endif

/*
 * The outermost dispatch ended at @now: account it, and report it when it may be a jank.
 * Inlined: a task that ends under the threshold, most of them, then makes no call but the clock.
 */
static __always_inline void finish_task(struct jw_task_state *s, __u32 tid, __u64 now)
{
	__u64 wall = now - s->start_ns, off, cpu;
	struct jw_stats_val *v;
	__u32 key;

#if !JW_COMPAT
	if (wall >= report_min_ns)
		count_unseen(s, wall);
#endif
	off = s->runq_ns + s->blocked_ns;
	cpu = wall > off ? wall - off : 0;
	/* A dispatch still open under the waits when they end the task never returned. */
	close_inner(s, tid, now, true);
	/* Per CPU, unlocked: a count for the status line, not worth a locked add per task. */
	task_count[bpf_get_smp_processor_id() & (JW_MAX_CPUS - 1)]++;
	key = s->slot * JW_MAX_PROBES + s->probe_id;
	v = bpf_map_lookup_elem(&stats_outer, &key);
	if (v) {
		if (!v->count) {
			v->pid = s->pid;
			v->tid = tid;
			v->uid = (__u32)bpf_get_current_uid_gid();
			bpf_get_current_comm(v->comm, sizeof(v->comm));
		}
		jw_stats_add(v, wall, cpu, s->delay_ns, s->flags & JW_TASK_NO_EXIT, stats_every,
			     false);
	}
	if (trace_on)
		trace_slice(s, tid, now);
	if (wall >= report_min_ns)
		report_task(s, tid, now);
}

/*
 * Closes every open dispatch whose entry stack pointer is at or below @limit: their frames are
 * gone. Returns how many were closed; the task ends when none is left open.
 */
static __u32 close_frames(struct jw_task_state *s, __u64 limit)
{
	__u32 closed = 0;

	for (int i = 0; i < JW_MAX_NEST; i++) {
		__u32 top = s->depth;

		if (top == 0 || top > JW_MAX_NEST)
			break;
		if (s->sp[(top - 1) & (JW_MAX_NEST - 1)] > limit)
			break;
		s->depth = top - 1;
		closed++;
	}
	return closed;
}

/*
 * close_frames(), its common case without the call (~10 ns here): a task's one open dispatch
 * returning.
 */
static __always_inline __u32 close_frames_fast(struct jw_task_state *s, __u64 limit)
{
	if (s->depth == 1 && s->sp[0] <= limit) {
		s->depth = 0;
		return 1;
	}
	return close_frames(s, limit);
}

/*
 * How long the work of a task beginning at @now waited: since the wakeup that began its run (the
 * thread's last wakeup outside a task, taken here if it is new), or unknown.
 */
static __always_inline __u64 queue_delay(struct jw_task_state *s, __u64 now)
{
	if (s->wake_ns) {
		s->ready_ns = s->wake_ns;
		s->wake_ns = 0;
	}
	return s->ready_ns && now >= s->ready_ns ? now - s->ready_ns : JW_DELAY_UNKNOWN;
}

/*
 * The outermost dispatch of thread @task begins at @now: a new task. Inlined: it has no locals
 * of its own.
 */
static __always_inline void begin_task(struct jw_task_state *s, struct task_struct *task, __u64 now,
				       __u64 cookie)
{
#if JW_COMPAT
	(void)task;
#else
	s->exec0 = task->se.sum_exec_runtime;
	s->nvcsw0 = task->nvcsw;
#endif
	s->seq++;
	s->delay_ns = queue_delay(s, now);
	s->start_ns = now;
	s->probe_id = (__u32)cookie & (JW_MAX_PROBES - 1);
	s->flags = 0;
	s->samples = 0;
	jw_sample_task_begins(s);
	s->sample_drops = 0;
	s->switches = 0;
	s->runq_ns = 0;
	s->blocked_ns = 0;
	s->io_ns = 0;
	s->carry_ns = 0;
	s->longest_ns = 0;
	s->longest_wchan = 0;
	s->longest_waker.flags = 0;
	s->longest_waker.n_ips = 0;
	s->longest_waker.pid = 0;
	s->longest_waker.tid = 0;
	s->longest_waker.comm[0] = 0;
	s->handler_addr = 0;
	s->handler_class = 0;
	s->handler_detail = 0;
	s->inner_ns = 0;
	s->inner_probe = 0;
	s->cur_probe = 0;
}

#endif
