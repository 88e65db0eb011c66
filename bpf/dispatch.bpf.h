/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dispatch probes: a dispatch's entry and exit (or return), nesting by the stack pointer,
 * the handler each names (its arguments' chains, a site's callee), a site that is a task of its
 * own.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_DISPATCH_H
#define JW_BPF_DISPATCH_H

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
	on_cpu_again(task, s);
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
	on_cpu_again(task, s);
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
