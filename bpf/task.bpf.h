/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tasks: a dispatch's entry and exit (or return), nesting, the task's end sent to user space
 * when slow, its statistics row, and its trace slice.
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
 * stolen time in a VM.) The task is
 * flagged; a sleep seen beginning sends its stack for the time hidden, one unseen has none, and
 * its waker is not known. Read here, not at every task's end: one under the threshold leaves an
 * open off-CPU time to the thread's next switch out, which counts it. (The compatible build has no room for it in 5.10's 512-byte stack of the probes' calls.)
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

/* The value path @rp leads to from registers @regs, into @out; false when a load fails. */
static __always_inline bool follow_path(const __u64 *regs, const struct jw_reg_path *rp, __u64 *out)
{
	__u32 reg = rp->reg;
	__u64 p;

	if (reg >= JW_UREG_MAX)
		return false;
	p = regs[reg];
	if (rp->n_offsets > 0 &&
	    bpf_probe_read_user(&p, sizeof(p), (void *)(p + (__s64)rp->offsets[0])))
		return false;
	if (rp->n_offsets > 1 &&
	    (!p || bpf_probe_read_user(&p, sizeof(p), (void *)(p + (__s64)rp->offsets[1]))))
		return false;
	if (rp->n_offsets > 2 &&
	    (!p || bpf_probe_read_user(&p, sizeof(p), (void *)(p + (__s64)rp->offsets[2]))))
		return false;
	*out = p;
	return true;
}

/* The double of @bits, seconds, in ns; 0 when it is no positive number of seconds below 2^52. */
static __always_inline __u64 seconds_to_ns(__u64 bits)
{
	__s32 e = (__s32)((bits >> 52) & 0x7ff) - 1075;	/* value = mant * 2^e */
	__u64 mant = (bits & ((1ULL << 52) - 1)) | (1ULL << 52), sec, frac;
	__u32 sh, keep;

	if ((bits >> 63) || !((bits >> 52) & 0x7ff) || e >= 0 || e < -63)
		return 0;
	sh = -e;
	sec = mant >> sh;
	frac = mant & ((1ULL << sh) - 1);
	/* The fraction's top 30 bits: times 1e9 it stays in 64 bits. */
	keep = sh > 30 ? 30 : sh;
	frac >>= sh - keep;
	return sec * 1000000000ULL + ((frac * 1000000000ULL) >> keep);
}

/*
 * An asyncio timer's due time (ns), when the handle whose method runs in CPython frame @caller
 * (the caller of the callback's frame) is a TimerHandle (chain @c says where to look); else 0.
 */
static __noinline __u64 py_timer_due(const struct jw_arg_chain *c, struct jw_task_state *s,
				     __u64 caller)
{
	__u64 p = 0, type = 0, when = 0, bits = 0;
	struct {
		__u64 name;
		__u64 size;	/* tp_basicsize follows tp_name: both in one read */
	} tp = {};
	char tn[12] = {};

	if (!caller || bpf_probe_read_user(&p, sizeof(p), (void *)(caller + c->py_frame_local0)))
		return 0;
	p &= ~(__u64)c->py_ref_tag;
	if (!p || bpf_probe_read_user(&type, sizeof(type), (void *)(p + c->py_ob_type)) || !type ||
	    bpf_probe_read_user(&tp, sizeof(tp), (void *)(type + c->py_tp_name)) || !tp.name)
		return 0;
	/* The type seen named TimerHandle once is known by its address after. */
	if (type != s->py_timer_type) {
		if (bpf_probe_read_user(tn, sizeof(tn), (void *)tp.name))
			return 0;
		if (tn[0] != 'T' || tn[1] != 'i' || tn[2] != 'm' || tn[3] != 'e' || tn[4] != 'r' ||
		    tn[5] != 'H' || tn[6] != 'a' || tn[7] != 'n' || tn[8] != 'd' || tn[9] != 'l' ||
		    tn[10] != 'e' || tn[11] != 0)
			return 0;
		s->py_timer_type = type;
	}
	if (tp.size < 24 || tp.size > 4096 ||
	    bpf_probe_read_user(&when, sizeof(when), (void *)(p + tp.size - 8)) || !when ||
	    bpf_probe_read_user(&bits, sizeof(bits), (void *)(when + c->py_float_value)))
		return 0;
	return seconds_to_ns(bits);
}

/*
 * A naming dispatch's probe (@c) stopped at @ctx at @now: the handler it runs, and for a timer
 * with a due time, how late it ran as its delay. A call of its own: the registers' copy is the
 * largest thing on the stack, and the programs' frames share 512 bytes.
 */
static __noinline void name_inner(struct pt_regs *ctx, struct jw_task_state *s,
				  const struct jw_arg_chain *c, __u64 now)
{
	__u64 regs[JW_UREG_MAX] = {}, p = 0, due;
	/* The register itself, bounded as it indexes (0 wraps to none). */
	__u32 other = c->handler_else - 1;

	copy_user_regs(ctx, regs);
	if ((!follow_path(regs, &c->handler, &p) || !p) && other < JW_UREG_MAX)
		p = regs[other];
	if (c->kind == JW_HANDLER_PY_CODE)
		p &= ~(__u64)c->py_ref_tag;	/* 3.14: the frame's code is a tagged reference */
	if (c->handler_bits && c->handler_bits < 64)
		p &= (1ULL << c->handler_bits) - 1;
	s->cur_handler = p;
	s->cur_class = 0;
	s->cur_detail = 0;
	if ((c->flags & JW_CHAIN_CLASS) && follow_path(regs, &c->klass, &due))
		s->cur_class = due;
	if ((c->flags & JW_CHAIN_DETAIL) && follow_path(regs, &c->detail, &due))
		s->cur_detail = c->detail_bits && c->detail_bits < 64 ?
					due & ((1ULL << c->detail_bits) - 1) : due;
	if (c->kind == JW_HANDLER_PY_CODE && c->py_tp_basicsize) {
		/* The caller's frame, from the thread state: the new frame's link is not set yet. */
		due = py_timer_due(c, s, py_current_frame(c, s->py_tstate));
		if (due)
			s->cur_delay_ns = now > due ? now - due : 0;
		return;
	}
	if (!c->due_unit_ns || !follow_path(regs, &c->due, &due) || (__s64)due <= 0)
		return;
	due *= c->due_unit_ns;
	s->cur_delay_ns = now > due ? now - due : 0;
}

/* The function a callback site (@cookie: JW_COOKIE_CALLEE) is about to call; 0 if unread. */
static __noinline __u64 site_callee(struct pt_regs *ctx, __u64 cookie)
{
	__u32 reg = ((cookie >> JW_CALLEE_REG_SHIFT) & 63) - 1;
	__u64 regs[JW_UREG_MAX] = {}, p;

	if (reg >= JW_UREG_MAX)
		return 0;
	copy_user_regs(ctx, regs);
	p = regs[reg];
	if ((cookie & JW_CALLEE_MEM) &&
	    bpf_probe_read_user(&p, sizeof(p),
				(void *)(p + (__s16)(cookie >> JW_CALLEE_DISP_SHIFT))))
		return 0;
	return p;
}

/*
 * A callback site (@cookie) opening, or inside, the naming dispatch of thread state @s: a callee
 * of the program's names it (nested: libuv's I/O function called the handle's callback); one of
 * the library's own (its I/O function; a call the program's callback made into the library)
 * does not.
 */
static __noinline void rename_inner(struct pt_regs *ctx, struct jw_task_state *s, __u64 cookie)
{
	__u64 callee = site_callee(ctx, cookie);
	__u32 slot = s->slot;
	struct jw_code_range *lib = bpf_map_lookup_elem(&site_ranges, &slot);

	if (callee && (!lib || callee < lib->lo || callee >= lib->hi)) {
		s->cur_handler = callee;
		s->cur_class = 0;
		s->cur_detail = 0;
	}
}

/*
 * A callback site (@cookie) nested in the naming dispatch of thread state @s at @now: its callee
 * renames it (rename_inner), or a site with a chain of its own (JW_COOKIE_NAME_ARG) reads the
 * handler by it, the first such site only when the chain says JW_CHAIN_FIRST.
 */
static __noinline void rename_nested(struct pt_regs *ctx, struct jw_task_state *s, __u64 cookie,
				     __u64 now)
{
	__u32 id = (__u32)cookie & (JW_MAX_PROBES - 1);
	__u64 handler = s->cur_handler, klass = s->cur_class, detail = s->cur_detail;
	__u64 delay = s->cur_delay_ns;
	struct jw_arg_chain *c;

	if (!(cookie & JW_COOKIE_NAME_ARG)) {
		rename_inner(ctx, s, cookie);
		return;
	}
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c || ((c->flags & JW_CHAIN_FIRST) && s->cur_named))
		return;
	/*
	 * Its exit (close_nested) renames the dispatch if it ran longest. Noted in @s before the
	 * call: nothing more lives across it on the stack, which 5.10 holds to 512 bytes in all.
	 */
	if (c->flags & JW_CHAIN_LONGEST) {
		s->nest_reading = 1;
		s->nest_start = now;
		s->nest_depth = s->depth;
	}
	name_inner(ctx, s, c, now);
	if (s->nest_reading) {
		s->nest_reading = 0;
		s->nest_val = s->cur_handler;
		s->cur_handler = 0;	/* as it was, below */
	}
	if (!s->cur_handler) {
		/* Its chain led nowhere (a queued call by method index, no slot object), or it names
		 * at its exit: as it was. */
		s->cur_handler = handler;
		s->cur_class = klass;
		s->cur_detail = detail;
		s->cur_delay_ns = delay;
		return;
	}
	s->cur_named = 1;
}

/*
 * A dispatch directly under the waits begins at @now: note it, and the handler its probe
 * leads to when it names handlers (redis: c->cmd->proc; CPython: frame->f_code; a loop's call
 * of a callback: the callback, and how late its timer ran).
 */
static __always_inline void open_inner(struct pt_regs *ctx, struct jw_task_state *s, __u64 cookie,
				       __u64 now)
{
	__u32 id = (__u32)cookie & (JW_MAX_PROBES - 1);
	struct jw_arg_chain *c;

	s->cur_probe = id + 1;
	s->cur_start = now;
	s->cur_off = s->runq_ns + s->blocked_ns;
	s->cur_handler = 0;
	s->cur_class = 0;
	s->cur_detail = 0;
	s->cur_named = 0;
	s->nest_start = 0;
	s->nest_best = 0;
	s->cur_delay_ns = queue_delay(s, now);
	if (cookie & JW_COOKIE_CALLEE)
		rename_inner(ctx, s, cookie);
	if (!(cookie & JW_COOKIE_NAME_ARG))
		return;
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c)
		return;
	/* Read only here: a probe that names no handler does not pay for them. */
	name_inner(ctx, s, c, now);
}

/*
 * A site that is a task of its own (JW_COOKIE_TASK) is entered at @now, the loop's own work
 * before it ended: its task begins, in the waits' frame with the site as its naming dispatch;
 * its delay is how late the message ran where the site reads its due time. Not inlined: one
 * call, in both programs that enter, and its frame small (5.10 holds a program's frames and
 * name_inner()'s under it to 512 bytes).
 */
static __noinline void begin_own_task(struct pt_regs *ctx, struct jw_task_state *s,
				      struct task_struct *task, __u64 cookie, __u64 now)
{
	begin_task(s, task, now, cookie);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
	open_inner(ctx, s, cookie, now);
	s->delay_ns = s->cur_delay_ns;
}

/*
 * The exit of a site that is a task of its own: its dispatch closes, its task ends at @now, and
 * the loop's work after it is a task of the waits again (to the next wait, or the next site).
 */
static __noinline void end_own_task(struct jw_task_state *s, struct task_struct *task, __u64 now)
{
	__u32 tid = current_tid(task);

	close_inner(s, tid, now, false);
	s->depth = 0;
	finish_task(s, tid, now);
	begin_task(s, task, now, wait_probe_id);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
}

/* A dispatch's entry, probe @cookie, by the current thread @task (probe_task()'s). */
static __always_inline int enter_dispatch(struct pt_regs *ctx, struct task_struct *task,
					  __u64 cookie)
{
	__u64 sp = ctx_sp(ctx), now;
	struct jw_task_state *s;
	__u32 tid, depth;

	if (stopped)
		return 0;
	s = probe_state(task, cookie, true);
	if (!s)
		return 0;
	/* CPython's evaluation: the thread's state, from which samples read its Python frames. */
	if (cookie & JW_COOKIE_PY_TSTATE) {
		s->py_tstate = PT_REGS_PARM1(ctx);
		s->py_probe = ((__u32)cookie & (JW_MAX_PROBES - 1)) + 1;
	}
	/*
	 * A preset's dispatch only names and splits the work between two waits; outside them (the
	 * loop's wait was already under way when the probes were attached) it is not a task.
	 */
	if ((cookie & JW_COOKIE_INNER) && s->depth == 0 && !(cookie & JW_COOKIE_TASK))
		return 0;
	now = bpf_ktime_get_ns();
	tid = current_tid(task);
	/*
	 * An open dispatch whose entry sp is at or below this one's cannot still be running: its
	 * exit was lost (longjmp, exception). Close it so it cannot wedge the thread.
	 */
	if (s->depth && close_frames(s, sp)) {
		if (s->depth == 1)
			close_inner(s, tid, now, true);
		if (s->depth == 0) {
			s->flags |= JW_TASK_NO_EXIT;
			finish_task(s, tid, now);
		}
	}
	if (cookie & JW_COOKIE_TASK) {
		/*
		 * The loop's own work since its wait (or the last such site) ends as a task of the
		 * waits. Nested in another dispatch (a handler polling the loop itself): part of it.
		 */
		if (s->depth == 1 && s->sp[0] == WAIT_FRAME_SP) {
			s->depth = 0;
			finish_task(s, tid, now);
		}
		if (s->depth == 0)
			begin_own_task(ctx, s, task, cookie, now);
	} else if (s->depth == 0)
		begin_task(s, task, now, cookie);
	else if (s->depth == 1 && s->sp[0] == WAIT_FRAME_SP)
		open_inner(ctx, s, cookie, now);
	else if ((cookie & JW_COOKIE_CALLEE) && s->cur_probe)
		rename_nested(ctx, s, cookie, now);
	depth = s->depth;
	if (depth >= JW_MAX_NEST) {
		s->flags |= JW_TASK_NEST_OVERFLOW;
		count_drop(JW_DROP_NEST);
		return 0;
	}
	/* Masked again after the check: the verifier must see the index bounded. */
	barrier_var(depth);
	depth &= JW_MAX_NEST - 1;
	s->sp[depth] = sp;
	s->depth = depth + 1;
	return 0;
}

SEC("uprobe")
int dispatch_enter(struct pt_regs *ctx)
{
	struct task_struct *task = probe_task(ctx);
	__u64 cookie = probe_cookie(ctx, task);

#if JW_COMPAT
	if (!cookie)
		return 0;	/* a probe whose address user space did not register */
#endif
	return enter_dispatch(ctx, task, cookie);
}

/* A dispatch's exit (probe @cookie) with stack pointer @sp: the dispatches it ends close. */
static __always_inline int exit_dispatch(__u64 sp, struct task_struct *task, __u64 cookie)
{
	struct jw_task_state *s;
	__u64 limit;

	if (stopped)
		return 0;
	s = probe_state(task, cookie, false);
	if (!s)
		return 0;
	if (cookie & JW_COOKIE_SITE_EXIT)
		s->site_calls++;
	if (s->depth == 0)
		return 0;
	limit = (cookie & JW_COOKIE_RETPROBE) ? arch_entry_sp_after_return(sp) : sp;
	if (!close_frames_fast(s, limit) &&
	    !(cookie & (JW_COOKIE_RETPROBE | JW_COOKIE_SITE_EXIT))) {
		/* An exit symbol called deeper than its entry still ends the innermost dispatch. */
		s->depth--;
	}
	if (s->nest_start && s->depth <= s->nest_depth)
		close_nested(s, bpf_ktime_get_ns());
	if (s->depth == 1 && s->cur_probe) {
		if (cookie & JW_COOKIE_TASK)
			end_own_task(s, task, bpf_ktime_get_ns());
		else
			close_inner(s, current_tid(task), bpf_ktime_get_ns(), false);
	} else if (s->depth == 0)
		finish_task(s, current_tid(task), bpf_ktime_get_ns());
	return 0;
}

SEC("uprobe")
int dispatch_exit(struct pt_regs *ctx)
{
	__u64 sp = ctx_sp(ctx), cookie;
	struct task_struct *task = probe_task(ctx);

	cookie = probe_cookie(ctx, task);
#if JW_COMPAT
	if (!cookie)
		return 0;
#endif
	return exit_dispatch(sp, task, cookie);
}

/*
 * A dispatch's return probe where the kernel has no attach cookies (the compatible build): a
 * return probe is at no address of its own to find its cookie by, and a return needs none but
 * its kind; the thread's state is found by its tid.
 */
SEC("uprobe")
int dispatch_return(struct pt_regs *ctx)
{
	__u64 sp = ctx_sp(ctx);

	return exit_dispatch(sp, probe_task(ctx), JW_COOKIE_RETPROBE);
}

/*
 * A dispatch's entry and its return as one uprobe session (BPF_TRACE_UPROBE_SESSION, 6.13; the
 * attach type user space gives it): one consumer of the kernel's breakpoint instead of a uprobe's
 * and a uretprobe's, ~40 ns less a task here. The entry returns 0: the return is then run. In
 * the compatible build too, for the skeleton's layout, never loaded there.
 */
SEC("uprobe")
int dispatch_session(struct pt_regs *ctx)
{
#if JW_COMPAT
	return 0;
#else
	struct task_struct *task = probe_task(ctx);
	bool is_return;
	__u64 cookie = session_cookie(task, &is_return);

	if (is_return)
		return exit_dispatch(ctx_sp(ctx), task, cookie | JW_COOKIE_RETPROBE);
	return enter_dispatch(ctx, task, cookie);
#endif
}

#endif
