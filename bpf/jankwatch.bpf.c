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
#include "jankwatch/stats_add.h"
#include "jankwatch/task_rec.h"
#include "uregs.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0

/* Set by user space before load. */
/* The lowest threshold in force; in .data, since a reload (SIGHUP) may change it. */
__u64 report_min_ns = 150 * 1000000ULL;
const volatile __u32 unwind_mode = JW_UNWIND_AUTO;
const volatile __u32 stack_bytes = 16384;	/* 0 in FP mode; at most JW_MAX_STACK_BYTES */
const volatile __u64 sample_period_ns = 10 * 1000000ULL;	/* a block counts one sample per period */

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

/* A watched thread's slot, in its task storage: how the programs without a cookie find it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct jw_thread_link);
} thread_link SEC(".maps");

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

/* Record (time) one task in this many in each row; every task is counted. Reloadable. */
__u32 stats_every = 1;

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
 * Watched threads switched out inside a task. While it is 0, a context switch needs to look up
 * only the thread leaving the CPU: the one arriving cannot be one of them.
 */
__u64 off_cpu_watched;

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

/* A first argument at a function's entry, kept opaque to the compiler as in ctx_sp(). */
static __always_inline __u64 ctx_arg(struct pt_regs *ctx, int i)
{
	__u64 arg = i == 0 ? PT_REGS_PARM1(ctx) : i == 1 ? PT_REGS_PARM2(ctx) : PT_REGS_PARM3(ctx);

	barrier_var(arg);
	return arg;
}

static __always_inline void count_drop(enum jw_drop what)
{
	__sync_fetch_and_add(&drops[what], 1);
}

/*
 * A probe's cookie, read from the run context the kernel set up for it (what
 * bpf_get_attach_cookie() reads) when the kernel lets a program cast that pointer
 * (bpf_rdonly_cast, 6.2): a few loads instead of a helper call, ~20 ns on every edge of every
 * task here. Weak, so that older kernels load the programs; user space sets cookie_in_run_ctx
 * only when the kernel has both the kfunc and the run context's layout.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
const volatile bool cookie_in_run_ctx = false;

static __always_inline __u64 probe_cookie(struct pt_regs *ctx, struct task_struct *task)
{
	struct bpf_trace_run_ctx *run_ctx;

	if (!cookie_in_run_ctx || bpf_core_field_offset(struct bpf_trace_run_ctx, run_ctx) != 0)
		return bpf_get_attach_cookie(ctx);
	run_ctx = bpf_rdonly_cast(task->bpf_ctx, bpf_core_type_id_kernel(struct bpf_trace_run_ctx));
	return run_ctx->bpf_cookie;
}

/* The state in slot @slot, when it is thread @tid's. */
static __always_inline struct jw_task_state *slot_state(__u32 slot, __u32 tid)
{
	struct jw_task_state *s = bpf_map_lookup_elem(&thread_state, &slot);

	return s && s->tid == tid ? s : NULL;
}

/*
 * The state of thread @task: through the tid index, or its task storage when some watched thread
 * is not in the index. NULL, for a thread not watched, after an array index and a comparison.
 */
static __always_inline struct jw_task_state *task_state_of(struct task_struct *task)
{
	__u32 tid = task->pid, bucket = jw_tid_bucket(tid);
	__u32 *slot = bpf_map_lookup_elem(&tid_index, &bucket);
	struct jw_thread_link *l;

	if (slot && *slot) {
		struct jw_task_state *s = slot_state(*slot - 1, tid);

		if (s)
			return s;
	}
	if (!tid_unindexed)
		return NULL;
	l = bpf_task_storage_get(&thread_link, task, 0, 0);
	return l ? slot_state(l->slot, tid) : NULL;
}

/*
 * Thread @task's state @s in slot @slot is used for the first time: its task storage learns the
 * slot, for the scheduler's programs. Once; a failure is counted once.
 */
static void link_state(struct task_struct *task, struct jw_task_state *s, __u32 slot)
{
	struct jw_thread_link *l;

	s->linked = 1;
	l = bpf_task_storage_get(&thread_link, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!l) {
		count_drop(JW_DROP_STATE);
		return;
	}
	l->slot = slot;
}

/*
 * Thread @task, outside the tid index and not found through its task storage: its state when it
 * is in the watched map, linked. A call, made only while some watched thread is outside the index.
 */
static struct jw_task_state *watched_new_state(struct task_struct *task)
{
	__u32 tid = task->pid;
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
 * The state of the current thread @task when it is watched, found without a cookie: through the
 * tid index, or (@create) through the watched map, linking it. User space puts every thread it
 * watches in the index, or counts it in tid_unindexed: while that is 0, a thread the index does
 * not hold is not watched, and the watched map is not looked at (syscall mode's tracepoints come
 * here for every wait of the machine). Inlined: a call and its return cost ~10 ns on this kernel.
 */
static __always_inline struct jw_task_state *watched_state(struct task_struct *task, bool create)
{
	struct jw_task_state *s = task_state_of(task);

	if (s || !create || !tid_unindexed)
		return s;
	return watched_new_state(task);
}

/*
 * The state of the current thread @task at a probe with cookie @cookie: by the slot the cookie
 * carries (an array index and a comparison), linked on first use (@create).
 */
static __always_inline struct jw_task_state *probe_state(struct task_struct *task, __u64 cookie,
							  bool create)
{
	__u32 slot = cookie >> JW_COOKIE_SLOT_SHIFT;
	struct jw_task_state *s;

	if (!slot)
		return watched_state(task, create);
	slot--;
	s = slot_state(slot, task->pid);
	if (s && create && !s->linked)
		link_state(task, s, slot);
	return s;
}

/* Reads CPython str @str into @dst: a compact one's characters, else its UTF-8 copy. */
static void read_py_str(const struct jw_arg_chain *c, __u64 str, char *dst, __u32 len)
{
	__u32 state = 0;
	__u64 utf8 = 0;

	if (!str || bpf_probe_read_user(&state, sizeof(state), (void *)(str + c->py_str_state)))
		return;
	/* state: interned:2, kind:3, compact:1, ascii:1, ready:1 */
	if (!(state & (1 << 5)))
		return;
	if (state & (1 << 6)) {
		bpf_probe_read_user_str(dst, len, (void *)(str + c->py_str_ascii_data));
		return;
	}
	if (!bpf_probe_read_user(&utf8, sizeof(utf8), (void *)(str + c->py_str_utf8)) && utf8)
		bpf_probe_read_user_str(dst, len, (void *)utf8);
}

/*
 * The qualified name, file and first line of CPython code object @code, as probe @inner_probe
 * (its id + 1) finds handlers; nothing when that probe's handlers are not code objects. A few
 * reads, done only for reported tasks and new statistics rows, while the object surely lives.
 */
static void name_py_code(__u32 inner_probe, __u64 code, char *name, char *file, __u32 *line)
{
	__u32 id = inner_probe - 1;
	struct jw_arg_chain *c;
	__u64 str = 0;

	if (!inner_probe || !code)
		return;
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c || c->kind != JW_HANDLER_PY_CODE)
		return;
	if (!bpf_probe_read_user(&str, sizeof(str), (void *)(code + c->py_qualname)))
		read_py_str(c, str, name, JW_HANDLER_NAME_LEN);
	str = 0;
	if (!bpf_probe_read_user(&str, sizeof(str), (void *)(code + c->py_filename)))
		read_py_str(c, str, file, JW_HANDLER_FILE_LEN);
	bpf_probe_read_user(line, sizeof(*line), (void *)(code + c->py_firstlineno));
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
	};
	struct jw_stats_val *v = bpf_map_lookup_elem(&stats, &key);
	__u32 zero = 0;

	if (v)
		return v;
	v = bpf_map_lookup_elem(&stats_zero, &zero);
	if (!v)
		return NULL;
	/* Fails with E2BIG when full; EEXIST cannot happen, only this thread makes its rows. */
	bpf_map_update_elem(&stats, &key, v, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&stats, &key);
	if (!v)
		return &stats_overflow;
	v->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(v->comm, sizeof(v->comm));
	if (inner)
		name_py_code(probe + 1, handler, v->handler_name, v->handler_file, &v->handler_line);
	return v;
}

/*
 * The dispatch directly under the waits ended at @now (its exit lost, if @exception): counted in
 * its own statistics row, and it names the task if it is the longest.
 */
static void end_inner(struct jw_task_state *s, __u32 tid, __u64 now, bool exception)
{
	__u64 ran = now - s->cur_start, off = s->runq_ns + s->blocked_ns - s->cur_off;
	struct jw_stats_val *v;

	if (ran >= s->inner_ns) {
		s->inner_ns = ran;
		s->inner_probe = s->cur_probe;
		s->handler_addr = s->cur_handler;
	}
	v = stats_row(s, tid, (s->cur_probe - 1) & (JW_MAX_PROBES - 1), 1, s->cur_handler);
	if (v)
		jw_stats_add(v, ran, ran > off ? ran - off : 0, exception, stats_every,
			     v == &stats_overflow);
	s->cur_probe = 0;
}

/* The same, when one runs: inlined, so that a task with none makes no call. */
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

/*
 * The outermost dispatch ended at @now: account it, and report it when it may be a jank.
 * Inlined: a task that ends under the threshold, most of them, then makes no call but the clock.
 */
static __always_inline void finish_task(struct jw_task_state *s, __u32 tid, __u64 now)
{
	__u64 wall = now - s->start_ns;
	__u64 off = s->runq_ns + s->blocked_ns;
	__u64 cpu = wall > off ? wall - off : 0;
	struct jw_stats_val *v;
	__u32 key;

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
		jw_stats_add(v, wall, cpu, s->flags & JW_TASK_NO_EXIT, stats_every, false);
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

/* The outermost dispatch begins at @now: a new task. */
static void begin_task(struct jw_task_state *s, __u64 now, __u64 cookie)
{
	s->seq++;
	s->start_ns = now;
	s->probe_id = (__u32)cookie & (JW_MAX_PROBES - 1);
	s->flags = 0;
	s->samples = 0;
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
	s->inner_ns = 0;
	s->inner_probe = 0;
	s->cur_probe = 0;
}

/*
 * A dispatch directly under the waits begins at @now: note it, and the handler its argument
 * leads to when its probe names handlers (redis: c->cmd->proc; CPython: frame->f_code).
 */
static __always_inline void open_inner(struct pt_regs *ctx, struct jw_task_state *s, __u64 cookie,
				       __u64 now)
{
	__u32 id = (__u32)cookie & (JW_MAX_PROBES - 1);
	struct jw_arg_chain *c;
	__u64 args[4] = {}, p;

	s->cur_probe = id + 1;
	s->cur_start = now;
	s->cur_off = s->runq_ns + s->blocked_ns;
	s->cur_handler = 0;
	if (!(cookie & JW_COOKIE_NAME_ARG))
		return;
	/* Read only here: a probe that names no handler does not pay for them. */
	args[0] = ctx_arg(ctx, 0);
	args[1] = ctx_arg(ctx, 1);
	args[2] = ctx_arg(ctx, 2);
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c || c->arg > 2)
		return;
	p = args[c->arg & 3];
	if (bpf_probe_read_user(&p, sizeof(p), (void *)(p + c->offsets[0])) || !p)
		return;
	if (c->n_offsets > 1 && bpf_probe_read_user(&p, sizeof(p), (void *)(p + c->offsets[1])))
		return;
	s->cur_handler = p;
}

SEC("uprobe")
int dispatch_enter(struct pt_regs *ctx)
{
	__u64 sp = ctx_sp(ctx), now, cookie;
	struct task_struct *task = bpf_get_current_task_btf();
	struct jw_task_state *s;
	__u32 tid, depth;

	cookie = probe_cookie(ctx, task);
	s = probe_state(task, cookie, true);
	if (!s)
		return 0;
	/*
	 * A preset's dispatch only names and splits the work between two waits; outside them (the
	 * loop's wait was already under way when the probes were attached) it is not a task.
	 */
	if ((cookie & JW_COOKIE_INNER) && s->depth == 0)
		return 0;
	now = bpf_ktime_get_ns();
	tid = task->pid;
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
	if (s->depth == 0)
		begin_task(s, now, cookie);
	else if (s->depth == 1 && s->sp[0] == WAIT_FRAME_SP)
		open_inner(ctx, s, cookie, now);
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
int dispatch_exit(struct pt_regs *ctx)
{
	__u64 sp = ctx_sp(ctx), cookie, limit;
	struct task_struct *task = bpf_get_current_task_btf();
	struct jw_task_state *s;

	cookie = probe_cookie(ctx, task);
	s = probe_state(task, cookie, false);
	if (!s || s->depth == 0)
		return 0;
	/* After a return the return address is popped: the entry's sp is one slot lower. */
	limit = (cookie & JW_COOKIE_RETPROBE) ? sp - sizeof(__u64) : sp;
	if (!close_frames(s, limit) && !(cookie & JW_COOKIE_RETPROBE)) {
		/* An exit symbol called deeper than its entry still ends the innermost dispatch. */
		s->depth--;
	}
	if (s->depth == 1 && s->cur_probe)
		close_inner(s, task->pid, bpf_ktime_get_ns(), false);
	else if (s->depth == 0)
		finish_task(s, task->pid, bpf_ktime_get_ns());
	return 0;
}

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
	__u64 sp = rec->regs[JW_UREG_SP], base = sp, off = 0;
	struct stack_vma vma = {};
	__u64 size = stack_bytes;

	rec->stack_below = 0;
	/*
	 * bpf_find_vma() fails with EBUSY while another BPF program's deferred mmap unlock is
	 * pending on this CPU (a second jankwatch sampling the same thread in the same tick): then
	 * the copy starts at sp and the page-by-page copy below finds the end of the mapping itself.
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
	/*
	 * A page of the range was never touched (the random gap the kernel leaves above a new
	 * process's initial stack), or the range passes the mapping's end: copy page by page up
	 * to it. The frames all lie below.
	 */
	for (int i = 0; i < JW_MAX_STACK_BYTES / CHUNK + 1; i++) {
		__u64 chunk = CHUNK - ((base + off) & (CHUNK - 1));

		if (off >= size)
			break;
		if (chunk > size - off)
			chunk = size - off;
		barrier_var(off);
		barrier_var(chunk);
		/* The reservation has CHUNK bytes of slack past stack_bytes for the verifier. */
		if (off > stack_bytes || chunk > CHUNK)
			break;
		if (bpf_probe_read_user(rec->stack + off, chunk, (void *)(base + off)))
			break;
		off += chunk;
	}
	off &= ~7ULL;
	/* Nothing at or above sp: no stack at all. */
	if (off <= rec->stack_below) {
		rec->stack_below = 0;
		return 0;
	}
	return off;
}

/*
 * The return addresses that pending return probes (ours or anyone's) replaced with the uprobes
 * trampoline, from the kernel's own list, for the unwinder to put back.
 */
static void copy_pending_returns(struct task_struct *task, struct jw_sample_rec *rec)
{
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 n = 0;

	for (int i = 0; i < JW_MAX_NEST && ri; i++) {
		rec->ret_sp[i] = BPF_CORE_READ(ri, stack);
		rec->ret_addr[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
		n++;
	}
	rec->n_rets = n;
}

/*
 * Fills @rec with the current thread's stacks: kernel and frame-pointer user ips, and in DWARF
 * modes the user registers, the top of the user stack and the pending return addresses.
 * Inlined: @ctx is a perf_event context in one caller, a tp_btf one in the other.
 */
static __always_inline void fill_sample(void *ctx, struct task_struct *task, struct jw_task_state *s,
					struct jw_sample_rec *rec, __u16 kind, __u64 now)
{
	long n;

	rec->hdr.type = JW_REC_SAMPLE;
	rec->hdr.flags = 0;
	rec->hdr.pid = s->pid;
	rec->hdr.tid = task->pid;
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
	rec->n_rets = 0;
	if (unwind_mode != JW_UNWIND_FP) {
		/* The user registers, also when the thread is inside a system call. */
		copy_user_regs((const struct pt_regs *)bpf_task_pt_regs(task), rec->regs);
		rec->stack_size = copy_user_stack(task, rec);
		copy_pending_returns(task, rec);
	}
	rec->hdr.size = sizeof(*rec) + rec->stack_size;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct jw_task_state *s = watched_state(task, false);
	struct jw_sample_rec *rec;

	if (!s || s->depth == 0)
		return 0;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec) + (stack_bytes ? stack_bytes + CHUNK : 0), 0);
	if (!rec) {
		s->sample_drops++;
		count_drop(JW_DROP_SAMPLE);
		return 0;
	}
	fill_sample(ctx, task, s, rec, JW_SAMPLE_ONCPU, bpf_ktime_get_ns());
	/* Samples of fast tasks are thrown away: wake user space only for TASK records. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	s->samples++;
	return 0;
}

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

/*
 * The thread wakes after sleeping @d ns: remember the longest block, and send the stack where it
 * slept, weighted with the sampling periods the sleep spans (a remainder carries over, so many
 * short sleeps still add up).
 */
static void block_ends(struct jw_task_state *s, __u64 d)
{
	__u32 slot = s->slot, weight;
	struct jw_sample_rec *rec;
	__u64 size;

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

/* The state sched_switch's prev_state shows: its highest TASK_REPORT bit, as the kernel's. */
static __u32 report_state(struct task_struct *p, bool preempt)
{
	__u32 state = p->__state, bits;

	if (preempt)
		return JW_STATE_PREEMPTED;
	if (state == (0x0002 | 0x0400))	/* TASK_IDLE: TASK_REPORT_IDLE */
		return 0x80;
	if (state & 0x1000)		/* TASK_RTLOCK_WAIT shows as uninterruptible */
		return 0x02;
	bits = (state | p->exit_state) & 0x7f;
	for (int i = 6; i >= 0; i--)
		if (bits & (1U << i))
			return 1U << i;
	return 0;
}

/* A context switch where a traced process's thread leaves or takes the CPU. */
static void trace_switch(bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 a = prev->tgid, b = next->tgid;
	struct jw_sched_rec *rec;

	if (!bpf_map_lookup_elem(&trace_pids, &a) && !bpf_map_lookup_elem(&trace_pids, &b))
		return;
	rec = trace_reserve(sizeof(*rec), JW_REC_SCHED, a, prev->pid, bpf_ktime_get_ns());
	if (!rec)
		return;
	rec->kind = JW_SCHED_SWITCH;
	rec->cpu = bpf_get_smp_processor_id();
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), prev->comm);
	rec->prio = prev->prio;
	rec->prev_state = report_state(prev, preempt);
	rec->other_pid = b;
	rec->other_tid = next->pid;
	bpf_probe_read_kernel_str(rec->other_comm, sizeof(rec->other_comm), next->comm);
	rec->other_prio = next->prio;
	rec->target_cpu = 0;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* A traced process's thread @p is woken, by the thread running now (or an interrupt). */
static void trace_waking(struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct jw_sched_rec *rec;
	__u32 pid = p->tgid;

	if (!bpf_map_lookup_elem(&trace_pids, &pid))
		return;
	rec = trace_reserve(sizeof(*rec), JW_REC_SCHED, id >> 32, (__u32)id, bpf_ktime_get_ns());
	if (!rec)
		return;
	rec->kind = JW_SCHED_WAKING;
	rec->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->prio = p->prio;
	rec->prev_state = 0;
	rec->other_pid = pid;
	rec->other_tid = p->pid;
	bpf_probe_read_kernel_str(rec->other_comm, sizeof(rec->other_comm), p->comm);
	rec->other_prio = p->prio;
	rec->target_cpu = BPF_CORE_READ(p, thread_info.cpu);
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* Whether thread @p, leaving the CPU, goes to sleep inside a wait system call. */
static __noinline bool asleep_in_wait(struct task_struct *p)
{
	const struct pt_regs *regs;

	if (p->__state == TASK_RUNNING)
		return false;
	regs = (const struct pt_regs *)bpf_task_pt_regs(p);
	return regs && is_wait_syscall(syscall_nr(regs));
}

/*
 * Splits a watched thread's off-CPU time inside a task (runnable but preempted, asleep, asleep in
 * IO) and takes the stack where it sleeps. Runs on every context switch of the machine: for
 * threads that are not watched, one task storage lookup that finds nothing, and a second one
 * only while some watched thread is off the CPU inside a task.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct jw_task_state *s;
	__u64 now = 0;

	if (trace_on)
		trace_switch(preempt, prev, next);
	s = task_state_of(prev);
	if (s && s->depth && s->first_wait == 2 && !preempt && asleep_in_wait(prev)) {
		/*
		 * The wakeup that began its first task found nothing ready (another worker took the
		 * connection): it sleeps on in the same wait, whose end is still to come.
		 */
		s->depth = 0;
		s->first_wait = 1;
	} else if (s && s->depth) {
		now = bpf_ktime_get_ns();
		if (!s->off_ns)
			__sync_fetch_and_add(&off_cpu_watched, 1);
		s->off_ns = now;
		s->switches++;
		if (preempt || prev->__state == TASK_RUNNING)
			s->off_state = JW_OFF_RUNQ;
		else if (BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
			s->off_state = JW_OFF_IO;
		else
			s->off_state = JW_OFF_BLOCKED;
		if (s->off_state != JW_OFF_RUNQ)
			block_begins(ctx, prev, s, now);
	}
	if (!off_cpu_watched)
		return 0;
	s = task_state_of(next);
	if (s && s->off_ns) {
		__u64 d;

		if (!now)
			now = bpf_ktime_get_ns();
		d = now - s->off_ns;
		s->off_ns = 0;
		__sync_fetch_and_add(&off_cpu_watched, -1);
		if (s->off_state == JW_OFF_RUNQ) {
			s->runq_ns += d;
			return 0;
		}
		s->blocked_ns += d;
		if (s->off_state == JW_OFF_IO)
			s->io_ns += d;
		block_ends(s, d);
	}
	return 0;
}

/* The probe id of the tasks the waits bound, where no cookie carries it: set by user space. */
const volatile __u32 wait_probe_id;

/*
 * By slot: 1 once every wait probe of the slot's process is attached (user space sets it after
 * them, clears it when the slot is watched anew). Until then a wait the thread enters may go
 * unseen, and with it the end of a task its wakeup would begin. Sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} wait_probes_ready SEC(".maps");

/*
 * Thread @p, watched while blocked in a wait it entered before its probes were attached (see
 * jw_task_state.first_wait), is woken: if it is in a wait system call and its process's wait
 * probes are all in, the return begins a task now, which the return probe cannot see. Until
 * the thread runs it waits for a CPU: its switch-in counts that as the task's run-queue time.
 */
static __noinline void first_wakeup(struct task_struct *p, struct jw_task_state *s)
{
	const struct pt_regs *regs;
	__u32 slot = s->slot, *ready;
	__u64 now;

	if (s->depth) {
		s->first_wait = 0;
		return;
	}
	ready = bpf_map_lookup_elem(&wait_probes_ready, &slot);
	if (!ready || !*ready)
		return;
	regs = (const struct pt_regs *)bpf_task_pt_regs(p);
	if (!regs || !is_wait_syscall(syscall_nr(regs)))
		return;	/* asleep elsewhere (a lock, a read): still armed */
	/* Tentative: a wakeup that finds nothing ready puts it back to sleep in the same wait. */
	s->first_wait = 2;
	now = bpf_ktime_get_ns();
	begin_task(s, now, wait_probe_id);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
	s->off_ns = now;
	s->off_state = JW_OFF_RUNQ;
	__sync_fetch_and_add(&off_cpu_watched, 1);
}

/*
 * Who wakes a sleeping watched thread: runs in the waker's context (sched_wakeup may run on the
 * wakee's CPU, in someone else's). One task storage lookup for every other wakeup.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	struct jw_task_state *s = task_state_of(p);
	struct task_struct *cur;
	long n;

	if (trace_on)
		trace_waking(p);
	if (!s)
		return 0;
	if (s->first_wait == 1)
		first_wakeup(p, s);
	if (!s->off_ns || s->off_state == JW_OFF_RUNQ)
		return 0;
	cur = bpf_get_current_task_btf();
	s->waker.pid = cur->tgid;
	s->waker.tid = cur->pid;
	/* Interrupt or timer context shows in the kernel stack; user space tells them apart. */
	s->waker.flags = JW_WAKER_KNOWN;
	bpf_get_current_comm(s->waker.comm, sizeof(s->waker.comm));
	n = bpf_get_stack(ctx, s->waker.ips, sizeof(s->waker.ips), 0);
	s->waker.n_ips = n > 0 ? n / sizeof(__u64) : 0;
	return 0;
}

/*
 * Syscall mode: a task is the time between the loop's wait returning and its next wait. The
 * return of a wait function (a return probe on the libc wrapper) opens a task whose frame sits
 * above every other, so dispatch probes inside it nest; the next wait's entry closes everything.
 */
/* A wait returned on thread @task: a task begins (probe id @cookie's). */
static __always_inline void wait_returned(struct task_struct *task, __u64 cookie)
{
	struct jw_task_state *s = probe_state(task, cookie, true);
	__u64 now;

	if (!s)
		return;
	s->first_wait = 0;	/* the probes see this thread's waits from here */
	now = bpf_ktime_get_ns();
	if (s->depth) {
		/* A task still open when a wait returns lost its end: close it there. */
		s->depth = 0;
		s->flags |= JW_TASK_NO_EXIT;
		finish_task(s, task->pid, now);
	}
	begin_task(s, now, cookie);
	s->sp[0] = WAIT_FRAME_SP;
	s->depth = 1;
}

/* Thread @task enters a wait: its task ends. */
static __always_inline void wait_entered(struct task_struct *task, __u64 cookie)
{
	struct jw_task_state *s = probe_state(task, cookie, false);

	if (!s)
		return;
	if (s->first_wait)
		s->first_wait = 0;	/* the probes see this thread's waits from here */
	if (s->depth == 0)
		return;
	s->depth = 0;
	finish_task(s, task->pid, bpf_ktime_get_ns());
}

SEC("uprobe")
int wait_return(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	wait_returned(task, probe_cookie(ctx, task));
	return 0;
}

SEC("uprobe")
int wait_enter(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	wait_entered(task, probe_cookie(ctx, task));
	return 0;
}

/*
 * Syscall mode on the system call tracepoints (wait_tracepoints=1) instead of the C library's
 * wrappers: a call where the loop pays a trap, but every system call of the machine goes through
 * the tracing path. For any other call, one comparison.
 */

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	if (is_wait_syscall(id))
		wait_entered(bpf_get_current_task_btf(), 0);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	if (is_wait_syscall(syscall_nr(regs)))
		wait_returned(bpf_get_current_task_btf(), wait_probe_id);
	return 0;
}

/*
 * wait_tracepoints=2: for a moment at start, how many system calls the whole machine makes
 * (JW_RATE_SYSCALLS) and how many of them are waits of the threads about to be watched
 * (JW_RATE_WAITS), which decides which of the two ways to hook the waits costs the machine less.
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

SEC("tp_btf/sys_enter")
int BPF_PROG(count_syscalls, struct pt_regs *regs, long id)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	count_rate(JW_RATE_SYSCALLS);
	if (is_wait_syscall(id) && bpf_map_lookup_elem(&rate_tids, &tid))
		count_rate(JW_RATE_WAITS);
	return 0;
}

/*
 * The processes user space follows, by tgid (enum jw_follow_flags): their forks, execs and exits
 * are sent to it. follow_on is set once one is, so that until then a fork or exit does not look.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JW_MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

__u32 follow_on;

/* Sends a FORK, EXEC or EXIT record of process @p. */
static void send_proc(struct task_struct *p, __u16 type, __u16 flags, __u32 parent)
{
	struct jw_proc_rec *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		count_drop(JW_DROP_PROC);
		return;
	}
	rec->hdr.type = type;
	rec->hdr.flags = flags;
	rec->hdr.size = sizeof(*rec);
	rec->hdr.pid = p->tgid;
	rec->hdr.tid = p->pid;
	rec->hdr.ts_ns = bpf_ktime_get_ns();
	rec->start_boot_ns = p->start_boottime;
	rec->parent = parent;
	rec->pad = 0;
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
	/* Read within user space's poll period: a storm of processes must not wake it for each. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/*
 * A new process of a followed one that follows its children is followed as its parent is, here,
 * before it runs: it cannot fork or exec unseen. New threads return at the first comparison.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, tgid = child->tgid, *flags, inherited;

	if (!follow_on || child->pid != tgid)
		return 0;
	ptgid = parent->tgid;
	flags = bpf_map_lookup_elem(&followed, &ptgid);
	if (!flags || !(*flags & JW_FOLLOW_CHILDREN))
		return 0;
	inherited = *flags;
	if (bpf_map_update_elem(&followed, &tgid, &inherited, BPF_ANY)) {
		count_drop(JW_DROP_PROC);
		return 0;
	}
	send_proc(child, JW_REC_FORK, 0, ptgid);
	return 0;
}

/*
 * A process execs: a watched one's task in flight ends there (the program that ran it is gone).
 * User space hears of every exec of a followed process, to hook the new program, and of every
 * process that execs an --exe file, which is followed from here. A process followed only while
 * it runs an --exe file (JW_FOLLOW_EXE) that execs another is followed no longer.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct inode *inode = bprm->file->f_inode;
	struct jw_exe_key key = { .dev = inode->i_sb->s_dev, .ino = inode->i_ino };
	struct jw_task_state *s = task_state_of(p);
	__u32 tgid = p->tgid, *flags, add;
	__u16 rec_flags = 0;

	if (s && s->depth) {
		s->depth = 0;
		s->flags |= JW_TASK_EXITED;
		finish_task(s, p->pid, bpf_ktime_get_ns());
	}
	flags = follow_on ? bpf_map_lookup_elem(&followed, &tgid) : NULL;
	if (bpf_map_lookup_elem(&watched_exes, &key)) {
		rec_flags = JW_EXEC_WATCHED_EXE;
		/* Its forks are processes of the file too; one followed for itself stays so. */
		if (!flags)
			add = JW_FOLLOW_CHILDREN | JW_FOLLOW_EXE;
		else
			add = *flags | JW_FOLLOW_CHILDREN;
		if (bpf_map_update_elem(&followed, &tgid, &add, BPF_ANY))
			count_drop(JW_DROP_PROC);
		else
			follow_on = 1;
	} else if (!flags) {
		return 0;
	} else if (*flags & JW_FOLLOW_EXE) {
		rec_flags = JW_EXEC_LEFT;
		bpf_map_delete_elem(&followed, &tgid);
	}
	send_proc(p, JW_REC_EXEC, rec_flags, 0);
	return 0;
}

/*
 * A watched thread that exits inside a task (the process crashed or was killed mid-jank): the
 * task ends there and is reported like any other. A followed process whose last thread exits is
 * unfollowed, and user space hears of it. One task storage lookup per thread exit, and a hash
 * lookup for a process's last one while some process is followed.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct jw_task_state *s = task_state_of(p);
	__u32 tgid;

	if (s && s->depth) {
		s->depth = 0;
		s->flags |= JW_TASK_EXITED;
		finish_task(s, p->pid, bpf_ktime_get_ns());
	}
	/* The group's last thread: the others exited (or an exec in a thread removed them). */
	if (!follow_on || BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = p->tgid;
	if (bpf_map_delete_elem(&followed, &tgid))
		return 0;
	send_proc(p, JW_REC_EXIT, 0, 0);
	return 0;
}
