/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The state every part shares: the watched threads' states and how each program finds its
 * thread's, the maps user space sizes and reads, the ring buffer, the drop counters.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_STATE_H
#define JW_BPF_STATE_H

/* The scheduler's own functions: the blocking function is the first frame outside them. */
extern const void __sched_text_start __ksym;
extern const void __sched_text_end __ksym;



/* The frame a wait's return opens in syscall mode: above every other, so dispatches nest in it. */
#define WAIT_FRAME_SP (~0ULL)

/* The watched threads' states, by slot; sized and written at each new watch by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jw_task_state);
} thread_state SEC(".maps");

/*
 * A watched thread's slot + 1 by its tid modulo JW_TID_BUCKETS (0: none), written by user space
 * when it starts watching the thread: how the programs without a cookie (the scheduler's, the
 * system call tracepoints) find its state with an array index, no helper call. A thread whose
 * bucket another watched thread holds is found through its task storage instead; tid_unindexed
 * counts those, so that while it is 0 a thread missing from the index is known not watched.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JW_TID_BUCKETS);
	__type(key, __u32);
	__type(value, __u32);
} tid_index SEC(".maps");

__u32 tid_unindexed;

/*
 * A watched thread's slot, in its task storage: how the programs without a cookie find it. In
 * the compatible build, a hash by tid instead, whose entry goes when the thread exits.
 */
#if JW_COMPAT
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct jw_thread_link);
} thread_link SEC(".maps");
#else
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct jw_thread_link);
} thread_link SEC(".maps");
#endif

/*
 * The compatible build on a kernel without attach cookies: a probe's cookie by its process and
 * address (see probe_cookie()). Sized by user space; unused, at one entry, in the full build.
 * Preallocated: before 6.1 tracing programs may not use a hash that allocates as it goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct jw_probe_addr);
	__type(value, __u64);
} probe_cookies SEC(".maps");

/* By slot, the code of the library a watched thread's callback sites are in; sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jw_code_range);
} site_ranges SEC(".maps");

/* Threads user space asked to watch, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct jw_watch);
} watched SEC(".maps");

/* By probe id: how a naming dispatch's argument leads to its handler. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JW_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct jw_arg_chain);
} arg_chains SEC(".maps");

/* --exe: the executables whose new processes user space wants to hear of. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct jw_exe_key);
	__type(value, __u32);
} watched_exes SEC(".maps");

/* --name: the kernel names whose processes user space wants to hear of (process/names.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JW_MAX_NAME_KEYS);
	__type(key, struct jw_name_key);
	__type(value, __u32);
} watched_names SEC(".maps");

/* The statistics, sized by user space (stats_max_entries); a full map sends rows to overflow. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1500);
	__type(key, struct jw_stats_key);
	__type(value, struct jw_stats_val);
} stats SEC(".maps");

/* The outermost tasks' rows, by slot * JW_MAX_PROBES + probe id; sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JW_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct jw_stats_val);
} stats_outer SEC(".maps");

/* A zeroed row, never written: what a new row starts as (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jw_stats_val);
} stats_zero SEC(".maps");

/* The tasks of rows that found the map full: the OVERFLOW row. */
struct jw_stats_val stats_overflow;


/* Outermost tasks ended, every thread's, by CPU: the status line's rate. */
__u64 task_count[JW_MAX_CPUS];

/*
 * The processes whose scheduler events and task slices user space wants for a trace log (a
 * window is open, or the flight recorder runs), by tgid; trace_on counts them, so that with
 * none a context switch does not look.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} trace_pids SEC(".maps");

__u32 trace_on;

#define CHUNK 4096	/* the stack copy's slow path reads page-aligned chunks of this size */
#define SAMPLE_ROOM (sizeof(struct jw_sample_rec) + JW_MAX_STACK_BYTES + CHUNK)

/*
 * Per watched thread (by stats slot), the stack where it went to sleep, sent when it wakes with
 * the periods it slept as weight. Too big for task storage; sized by user space.
 */
struct sample_room {
	__u8 bytes[SAMPLE_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_room);
} blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

__u64 drops[JW_DROP_MAX];

/*
 * Watched threads switched out inside a task, or woken in a wait whose task begins where they run
 * (JW_OFF_WAKING, on the switches alone). While it is 0, a context switch needs to look up only
 * the thread leaving the CPU: the one arriving cannot be one of them.
 */
__u64 off_cpu_watched;

/*
 * Which of the two ways of seeing the waits counts (JW_WAIT_BY_* bits), set by user space as it
 * chooses and switches (session_waits.c): the other's programs, still attached or not yet
 * detached, return at once. Both while a switch to the uprobes settles: a thread that entered
 * its wrapper just before they counted is seen entering the system call. None outside syscall
 * mode (--probe's dispatches bound the tasks).
 */
__u32 wait_hooks;
/* The tracepoints' way is fexit on the wait system calls' functions (wait_fexit_*): set once. */
bool wait_fexit;

/*
 * The user stack pointer at the probe. Read before anything else and kept opaque to the
 * compiler, which otherwise may turn the load into ctx + offset arithmetic the verifier refuses.
 */
static __always_inline __u64 ctx_sp(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx);

	barrier_var(sp);
	return sp;
}

static __always_inline void count_drop(enum jw_drop what)
{
	__sync_fetch_and_add(&drops[what], 1);
}

/*
 * A context switch of @s's thread inside its task reached no program (a kernel may keep some
 * switches from tracing; seen: one hiding a system agent's threads, and with their switch out
 * the switch in of the thread that ran next): its off-CPU split is short, the event says so.
 */
static __always_inline void switch_unseen(struct jw_task_state *s)
{
	s->flags |= JW_TASK_SWITCH_UNSEEN;
	count_drop(JW_DROP_SWITCH);
}

/*
 * The thread wakes after sleeping @d ns (at its switch in, or at its task's end when that switch
 * reached no program): remember the longest block, and send the stack where it slept, kept as it
 * went to sleep (sched.bpf.h), weighted with the sampling periods the sleep spans (a remainder
 * carries over, so many short sleeps still add up).
 */
static void block_ends(struct jw_task_state *s, __u64 d)
{
	__u32 slot = s->slot, weight;
	struct jw_sample_rec *rec;
	__u64 size;

	/* No wakeup reached a program (a run skipped, or one the kernel kept): waker unknown. */
	if (!s->waker.flags) {
		s->waker.flags = JW_WAKER_UNSEEN;
		count_drop(JW_DROP_WAKING);
	}
	if (d > s->longest_ns) {
		s->longest_ns = d;
		s->longest_wchan = s->block_wchan;
		s->longest_waker = s->waker;
	}
	if (!s->block_ready || !sample_period_ns)
		return;
	s->block_ready = 0;
	s->carry_ns += d;
	weight = s->carry_ns / sample_period_ns;
	if (!weight)
		return;
	s->carry_ns -= (__u64)weight * sample_period_ns;
	rec = bpf_map_lookup_elem(&blocks, &slot);
	if (!rec)
		return;
	rec->weight = weight;
	rec->block_ns = d;
	size = rec->hdr.size;
	if (size > SAMPLE_ROOM)
		return;
	if (bpf_ringbuf_output(&events, rec, size, BPF_RB_NO_WAKEUP)) {
		s->sample_drops++;
		count_drop(JW_DROP_SAMPLE);
		return;
	}
	s->samples++;
}

#if JW_COMPAT
/*
 * A uprobe's cookie: the kernel's attach cookie where it has them (5.15), else the one user
 * space wrote for the probe's address in this process; 0 for a probe it does not know (a return
 * probe is at no address of its own: its programs do not ask).
 */
static __always_inline __u64 probe_cookie(struct pt_regs *ctx, struct task_struct *task)
{
	struct jw_probe_addr key = { .pid = bpf_get_current_pid_tgid() >> 32 };
	__u64 *cookie;

	(void)task;
	if (has_attach_cookie)
		return bpf_get_attach_cookie(ctx);
	/* The kernel sets the ip to the probed address before it runs the handlers (handle_swbp). */
	key.addr = PT_REGS_IP(ctx);
	cookie = bpf_map_lookup_elem(&probe_cookies, &key);
	return cookie ? *cookie : 0;
}
#else
/*
 * A probe's cookie, read from the run context the kernel set up for it (what
 * bpf_get_attach_cookie() reads) when the kernel lets a program cast that pointer
 * (bpf_rdonly_cast, 6.2): a few loads instead of a helper call, ~20 ns on every edge of every
 * task here. User space sets cookie_in_run_ctx only when the kernel has both the kfunc
 * (bpf_rdonly_cast, weak: older kernels load the programs) and the run context's layout.
 */
static __always_inline __u64 probe_cookie(struct pt_regs *ctx, struct task_struct *task)
{
	struct bpf_trace_run_ctx *run_ctx;

	if (!cookie_in_run_ctx || bpf_core_field_offset(struct bpf_trace_run_ctx, run_ctx) != 0)
		return bpf_get_attach_cookie(ctx);
	run_ctx = bpf_rdonly_cast(task->bpf_ctx, bpf_core_type_id_kernel(struct bpf_trace_run_ctx));
	return run_ctx->bpf_cookie;
}
#endif

#if !JW_COMPAT
/* The run context of a uprobe session's program (6.13), as much as is read of it. */
struct bpf_session_run_ctx___jw {
	struct bpf_run_ctx run_ctx;
	bool is_return;
} __attribute__((preserve_access_index));

struct bpf_uprobe___jw {
	__u64 cookie;
} __attribute__((preserve_access_index));

struct bpf_uprobe_multi_run_ctx___jw {
	struct bpf_session_run_ctx___jw session_ctx;
	struct bpf_uprobe___jw *uprobe;
} __attribute__((preserve_access_index));

/*
 * A uprobe session's cookie (its probe's), read from its run context as probe_cookie() reads a
 * uprobe's; in @is_return whether the function is returning (else entered).
 */
static __always_inline __u64 session_cookie(struct task_struct *task, bool *is_return)
{
	struct bpf_uprobe_multi_run_ctx___jw *run_ctx;

	run_ctx = bpf_rdonly_cast(task->bpf_ctx,
				  bpf_core_type_id_kernel(struct bpf_uprobe_multi_run_ctx___jw));
	*is_return = run_ctx->session_ctx.is_return;
	return run_ctx->uprobe->cookie;
}
#endif

/* The state in slot @slot, when it is thread @tid's. */
static __always_inline struct jw_task_state *slot_state(__u32 slot, __u32 tid)
{
	struct jw_task_state *s = bpf_map_lookup_elem(&thread_state, &slot);

	return s && s->tid == tid ? s : NULL;
}

/* The state of watched thread @tid by the tid index; NULL when the index does not hold it. */
static __always_inline struct jw_task_state *indexed_state(__u32 tid)
{
	__u32 bucket = jw_tid_bucket(tid);
	__u32 *slot = bpf_map_lookup_elem(&tid_index, &bucket);

	return slot && *slot ? slot_state(*slot - 1, tid) : NULL;
}

/* The state of thread @task (@tid) by its task storage: a watched thread outside the index. */
static __always_inline struct jw_task_state *linked_state(struct task_struct *task, __u32 tid)
{
	struct jw_thread_link *l;

#if JW_COMPAT
	(void)task;
	l = bpf_map_lookup_elem(&thread_link, &tid);
#else
	l = bpf_task_storage_get(&thread_link, task, 0, 0);
#endif
	return l ? slot_state(l->slot, tid) : NULL;
}

/*
 * The state of thread @task: through the tid index, or its task storage when some watched thread
 * is not in the index. NULL, for a thread not watched, after an array index and a comparison.
 */
static __always_inline struct jw_task_state *task_state_of(struct task_struct *task)
{
	__u32 tid = KREAD(task, pid);
	struct jw_task_state *s = indexed_state(tid);

	if (s || !tid_unindexed)
		return s;
	return linked_state(task, tid);
}

/*
 * Thread @task's state @s in slot @slot is used for the first time: its task storage learns the
 * slot, for the scheduler's programs. Once; a failure is counted once.
 */
static void link_state(struct task_struct *task, struct jw_task_state *s, __u32 slot)
{
#if JW_COMPAT
	struct jw_thread_link link = { .slot = slot };
	__u32 tid = current_tid(task);

	s->linked = 1;
	if (bpf_map_update_elem(&thread_link, &tid, &link, BPF_ANY))
		count_drop(JW_DROP_STATE);
#else
	struct jw_thread_link *l;

	s->linked = 1;
	l = bpf_task_storage_get(&thread_link, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!l) {
		count_drop(JW_DROP_STATE);
		return;
	}
	l->slot = slot;
#endif
}

/*
 * Thread @task, outside the tid index and not found through its task storage: its state when it
 * is in the watched map, linked. A call, made only while some watched thread is outside the index.
 */
static struct jw_task_state *watched_new_state(struct task_struct *task)
{
	__u32 tid = current_tid(task);
	struct jw_task_state *s;
	struct jw_watch *w;

	w = bpf_map_lookup_elem(&watched, &tid);
	if (!w)
		return NULL;
	s = slot_state(w->slot, tid);
	if (s && !s->linked)
		link_state(task, s, w->slot);
	return s;
}

/*
 * The state of the current thread @task (probe_task()'s) when it is watched, found without a
 * cookie: through the tid index, or (@create) through the watched map, linking it. User space
 * puts every thread it watches in the index, or counts it in tid_unindexed: while that is 0, a
 * thread the index does not hold is not watched, and the watched map is not looked at (syscall
 * mode's tracepoints come here for every wait of the machine). Inlined: a call and its return
 * cost ~10 ns on this kernel.
 */
static __always_inline struct jw_task_state *watched_state(struct task_struct *task, bool create)
{
	struct jw_task_state *s = indexed_state(current_tid(task));

	if (s || !tid_unindexed)
		return s;
	/* Helpers take the task: probe_task()'s may be task_cache's read-only pointer. */
	task = helper_task(task);
	s = linked_state(task, current_tid(task));
	if (s || !create)
		return s;
	return watched_new_state(task);
}

/*
 * The state of the current thread @task (probe_task()'s) at a probe with cookie @cookie: by the
 * slot the cookie carries (an array index and a comparison), linked on first use (@create).
 */
static __always_inline struct jw_task_state *probe_state(struct task_struct *task, __u64 cookie,
							  bool create)
{
	__u32 slot = cookie >> JW_COOKIE_SLOT_SHIFT;
	struct jw_task_state *s;

	if (!slot)
		return watched_state(task, create);
	slot--;
	s = slot_state(slot, current_tid(task));
	if (s && create && !s->linked)
		link_state(helper_task(task), s, slot);
	return s;
}

#endif
