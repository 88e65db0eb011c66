/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stack samples of a watched thread: the cpu-clock sampler, the user stack copy, the pending
 * return probes' addresses.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_SAMPLE_H
#define JW_BPF_SAMPLE_H

/* A copy of the user stack page by page: what copy_stack_pages() was asked, and how far it came. */
struct stack_copy {
	struct jw_sample_rec *rec;
	__u64 base, size;
	__u64 off;	/* the bytes copied */
};

/*
 * Copies page @i's part of [@c->base, @c->base + @c->size) (page 0 from base to its page's end,
 * then whole pages) to the record's copy; 1 past the end or at a page that cannot be read. Where
 * a page begins comes from @i alone, not from how far the copy came: under bpf_loop, the
 * verifier then finds the callback's state the same at its second look, where a running offset
 * would widen by a page at each look (past a million instructions at --stack-bytes 65536).
 */
static __always_inline long stack_copy_step(__u32 i, struct stack_copy *c)
{
	__u64 first = CHUNK - (c->base & (CHUNK - 1)), k = i, o = 0, chunk = first;

	if (k) {
		o = first + (k - 1) * CHUNK;
		chunk = CHUNK;
	}
	if (o >= c->size)
		return 1;
	if (chunk > c->size - o)
		chunk = c->size - o;
	barrier_var(o);
	barrier_var(chunk);
	/* The reservation has CHUNK bytes of slack past stack_bytes for the verifier. */
	if (o > stack_bytes || chunk > CHUNK)
		return 1;
	if (bpf_probe_read_user(c->rec->stack + o, chunk, (void *)(c->base + o)))
		return 1;
	c->off = o + chunk;
	return 0;
}

/*
 * Copies [@base, @base + @size) of the user stack page by page, up to the first page that cannot
 * be read: one never touched (the random gap the kernel leaves above a new process's initial
 * stack), or past the mapping's end. The frames all lie below. Returns the bytes copied, 0 when
 * none at or above sp (rec->stack_below bytes above @base) were. A bpf_loop where the kernel has
 * it, so that the verifier looks at one page, not at each (as long to verify as the rest of the
 * program); the compatible build walks a bounded loop.
 */
static __always_inline __u32 copy_stack_pages(struct jw_sample_rec *rec, __u64 base, __u64 size)
{
	struct stack_copy c = { .rec = rec, .base = base, .size = size };
	__u64 off;

#if JW_COMPAT
	for (int i = 0; i < JW_MAX_STACK_BYTES / CHUNK + 1; i++)
		if (stack_copy_step(i, &c))
			break;
#else
	bpf_loop(JW_MAX_STACK_BYTES / CHUNK + 1, stack_copy_step, &c, 0);
#endif
	off = c.off & ~7ULL;
	/* Nothing at or above sp: no stack at all. */
	if (off <= rec->stack_below) {
		rec->stack_below = 0;
		return 0;
	}
	return off;
}

#if !JW_COMPAT
struct stack_vma {
	__u64 start;
	__u64 end;
};

static long stack_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct stack_vma *)data)->start = vma->vm_start;
	((struct stack_vma *)data)->end = vma->vm_end;
	return 0;
}

/*
 * Copies the top of the user stack for DWARF unwinding, from JW_RED_ZONE bytes below sp when
 * the stack's mapping has them, to its end at most: a read that crosses it would fail whole.
 * The red zone is there for the CFI of an epilogue that has popped the callee-saved registers
 * but still says they are saved (gcc's, at a `ret`): their values are still below sp. Sets
 * rec->stack_below and returns the bytes copied.
 */
static __u32 copy_user_stack(struct task_struct *task, struct jw_sample_rec *rec)
{
	__u64 sp = rec->regs[JW_UREG_SP], base = sp;
	struct stack_vma vma = {};
	__u64 size = stack_bytes;

	rec->stack_below = 0;
	/*
	 * bpf_find_vma() fails with EBUSY while another BPF program's deferred mmap unlock is
	 * pending on this CPU (a second jankwatch sampling the same thread in the same tick): then
	 * the copy starts at sp and the page-by-page copy finds the end of the mapping itself.
	 */
	if (!bpf_find_vma(task, sp, stack_vma_cb, &vma, 0)) {
		if (vma.end <= sp)
			return 0;
		if (sp - vma.start >= JW_RED_ZONE)
			base = sp - JW_RED_ZONE;
		if (vma.end - base < size)
			size = vma.end - base;
	}
	size &= ~7ULL;
	barrier_var(size);
	if (size > stack_bytes || size <= sp - base)
		return 0;
	rec->stack_below = sp - base;
	if (!bpf_probe_read_user(rec->stack, size, (void *)base))
		return size;
	return copy_stack_pages(rec, base, size);
}
#else
/*
 * The same without bpf_find_vma (the compatible build): the red zone when it is on sp's page or
 * can be read, then page by page from there (a read of the whole range would mostly cross the
 * mapping's end, which is not known here, and fail).
 */
static __u32 copy_user_stack(struct task_struct *task, struct jw_sample_rec *rec)
{
	__u64 sp = rec->regs[JW_UREG_SP], base = sp;
	__u64 size = stack_bytes & ~7ULL;

	(void)task;
	rec->stack_below = 0;
	if (((sp - JW_RED_ZONE) & ~(CHUNK - 1ULL)) == (sp & ~(CHUNK - 1ULL)) ||
	    !bpf_probe_read_user(rec->stack, JW_RED_ZONE, (void *)(sp - JW_RED_ZONE)))
		base = sp - JW_RED_ZONE;
	barrier_var(size);
	if (size > stack_bytes || size <= sp - base)
		return 0;
	rec->stack_below = sp - base;
	return copy_stack_pages(rec, base, size);
}
#endif

/*
 * The return addresses that pending return probes (ours or anyone's) replaced with the uprobes
 * trampoline, from the kernel's own list, innermost first, and the trampoline's address.
 */
static void copy_pending_returns(struct task_struct *task, struct jw_sample_rec *rec)
{
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 n = 0;

	rec->tramp = 0;
	if (!ri)
		goto out;
	rec->tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	for (int i = 0; i < JW_MAX_NEST && ri; i++) {
		rec->ret_sp[i] = BPF_CORE_READ(ri, stack);
		rec->ret_addr[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
		n++;
	}
out:
	rec->n_rets = n;
}

#if !JW_COMPAT
/* The compatible build has no bpf_loop: user space puts them back (stacks.c's fp_stack()). */
struct fp_returns {
	struct jw_sample_rec *rec;
	__u32 k;	/* the pending returns put back so far */
};

static long put_back_fp_return(__u32 i, struct fp_returns *c)
{
	struct jw_sample_rec *rec = c->rec;
	__u64 j = i, k = c->k;

	/* Opaque, so that the compiler indexes with the values checked here. */
	barrier_var(j);
	barrier_var(k);
	if (j >= JW_MAX_USER_FRAMES || k >= JW_MAX_NEST)
		return 1;
	if (j >= rec->n_user || k >= rec->n_rets)
		return 1;
	if (rec->user_ips[j] == rec->tramp) {
		rec->user_ips[j] = rec->ret_addr[k];
		c->k = k + 1;
	}
	return 0;
}

/*
 * Puts the real return addresses back into the frame-pointer ips, where the trampoline's stands
 * for them: kernels before 6.11 leave it there. Frames and pending returns are both innermost
 * first, so the k-th trampoline is the k-th pending return. A bpf_loop, so that the verifier
 * looks at one frame, not at every way the frames and returns can pair up.
 */
static void put_back_fp_returns(struct jw_sample_rec *rec)
{
	struct fp_returns c = { .rec = rec };

	if (rec->n_rets && rec->tramp && rec->n_user)
		bpf_loop(JW_MAX_USER_FRAMES, put_back_fp_return, &c, 0);
}
#endif

/*
 * Fills @rec with the current thread's stacks: kernel and frame-pointer user ips, and in DWARF
 * modes the user registers, the top of the user stack and the pending return addresses.
 * Inlined: @ctx is a perf_event context in one caller, a tracepoint's in the other.
 */
static __always_inline void fill_sample(void *ctx, struct task_struct *task, struct jw_task_state *s,
					struct jw_sample_rec *rec, __u16 kind, __u64 now)
{
	long n;

	rec->hdr.type = JW_REC_SAMPLE;
	rec->hdr.flags = 0;
	rec->hdr.pid = s->pid;
	rec->hdr.tid = current_tid(task);
	rec->hdr.ts_ns = now;
	rec->seq = s->seq;
	rec->mode = unwind_mode;
	rec->kind = kind;
	rec->weight = 1;
	rec->block_ns = 0;
	n = bpf_get_stack(ctx, rec->kernel_ips, sizeof(rec->kernel_ips), 0);
	rec->n_kernel = n > 0 ? n / sizeof(__u64) : 0;
	rec->n_user = 0;
	if (unwind_mode != JW_UNWIND_DWARF) {
		n = bpf_get_stack(ctx, rec->user_ips, sizeof(rec->user_ips), BPF_F_USER_STACK);
		rec->n_user = n > 0 ? n / sizeof(__u64) : 0;
	}
	rec->stack_size = 0;
	copy_pending_returns(task, rec);
#if JW_COMPAT
	{
		const struct pt_regs *regs = task_user_regs(task);

		if (regs)
			copy_user_regs(regs, rec->regs);
		else
			__builtin_memset(rec->regs, 0, sizeof(rec->regs));
	}
#else
	put_back_fp_returns(rec);
	/*
	 * The user registers, also when the thread is inside a system call: for DWARF, and for a
	 * frame-pointer walk the link register (arm64), which holds a leaf's caller.
	 */
	copy_user_regs(task_user_regs(task), rec->regs);
#endif
	if (unwind_mode != JW_UNWIND_FP)
		rec->stack_size = copy_user_stack(task, rec);
	rec->hdr.size = sizeof(*rec) + rec->stack_size;
	if (s->py_probe)
		rec->hdr.size += read_py_frames(s, rec, kind != JW_SAMPLE_ONCPU) *
				 sizeof(struct jw_py_frame);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = current_task();
	struct jw_task_state *s;
	struct jw_sample_rec *rec;
	__u64 now;

	if (stopped)
		return 0;
	s = watched_state(task, false);
	on_cpu_again(task, s);
	if (!s || s->depth == 0)
		return 0;
	now = bpf_ktime_get_ns();
	if (jw_sample_skip_young(s, now, sample_period_ns, report_min_ns))
		return 0;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec) + (stack_bytes ? stack_bytes + CHUNK : PY_ROOM),
				  0);
	if (!rec) {
		s->sample_drops++;
		count_drop(JW_DROP_SAMPLE);
		return 0;
	}
	fill_sample(ctx, task, s, rec, JW_SAMPLE_ONCPU, now);
	rec->weight = jw_sample_periods(s, now, sample_period_ns);
	/* Samples of fast tasks are thrown away: wake user space only for TASK records. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	s->samples++;
	return 0;
}

#endif
