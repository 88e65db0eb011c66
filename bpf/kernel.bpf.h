/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the programs take from the kernel, in the two builds of this object:
 *   the full one (JW_COMPAT 0): Linux 5.17 and newer with BTF, the programs as they always were:
 *     BTF pointers read directly (tp_btf, bpf_get_current_task_btf), bpf_task_pt_regs, task
 *     storage, attach cookies, bpf_find_vma and bpf_loop;
 *   the compatible one (JW_COMPAT 1): from 5.8 (the ring buffer), with or without the kernel's own
 *     BTF (CO-RE then relocates against a BTF file given to libbpf): raw tracepoints, every kernel
 *     field read with bpf_probe_read_kernel through CO-RE, the current task from
 *     bpf_get_current_task, a task's user registers at the top of its kernel stack, a hash by tid
 *     for task storage, cookies by probe address where the kernel has none (probe_cookie()), no
 *     callbacks (bpf_loop, bpf_find_vma: refused at load before 5.13 even where never called).
 * User space (user/attach/kernel.c) probes the kernel and loads the one it can take.
 * Part of jankwatch.bpf.c, the one BPF source: included there, after its settings.
 */
#ifndef JW_BPF_KERNEL_H
#define JW_BPF_KERNEL_H

#ifndef JW_COMPAT
#define JW_COMPAT 0
#endif

/*
 * Room for a copy of the kernel's struct pt_regs (x86-64: 168 bytes; arm64: 336 in 6.x): the
 * compatible build's task_user_regs(). In both builds, which have the same maps.
 */
#define REGS_ROOM 512

struct regs_room {
	__u8 bytes[REGS_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct regs_room);
} regs_copy SEC(".maps");

/*
 * The task a probe last found on each CPU (probe_task()), as a number: one word, which a probe
 * preempted on that CPU by another leaves whole. An entry is the current task when the user
 * registers the probe was given are at the top of its kernel stack (task_pt_regs(), regs_offset
 * above task->stack): no two live tasks share a stack, and the kernel clears a dead task's
 * `stack` before it frees the stack for a new task (release_task_stack()). In both builds; the
 * full one alone keeps it, where the kernel inlines this map's lookup (6.10, x86-64 and arm64).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} task_cache SEC(".maps");

/* Set by user space: the kernel inlines task_cache's lookup and has bpf_rdonly_cast. */
const volatile bool task_cache_kept = false;
/* Where a task's user registers are above its task->stack: learnt by the first probe; 0 before. */
__u64 regs_offset;

#if JW_COMPAT

/* A tracepoint program: the raw tracepoint's arguments, kernel pointers read with CO-RE. */
#define JW_TRACEPOINT(name) SEC("raw_tp/" #name)
/* Field @f of kernel object @p. */
#define KREAD(p, f) BPF_CORE_READ(p, f)

/* The current task, read with CO-RE only. */
static __always_inline struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/* Without bpf_rdonly_cast task_cache is not kept: a probe asks the helper. */
static __always_inline struct task_struct *probe_task(const void *regs)
{
	(void)regs;
	return current_task();
}

static __always_inline struct task_struct *helper_task(struct task_struct *task)
{
	return task;
}

/* The current thread's id. */
static __always_inline __u32 current_tid(struct task_struct *task)
{
	(void)task;
	return (__u32)bpf_get_current_pid_tgid();
}

/* The current thread's process id. */
static __always_inline __u32 current_tgid(struct task_struct *task)
{
	(void)task;
	return bpf_get_current_pid_tgid() >> 32;
}

/* Before 5.14 the task's state was `state`, a long. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* Before 5.16 a task's CPU was in the task itself (CONFIG_THREAD_INFO_IN_TASK). */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___pre514 *)p, state);
}

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return BPF_CORE_READ(p, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre516 *)p, cpu);
}

/*
 * Task @task's user registers, as the kernel saved them at its entry from user space: a copy
 * (this CPU's) of the struct pt_regs at the top of its kernel stack, where bpf_task_pt_regs()
 * finds it (task_pt_regs(): thread_size above the stack's base, less the struct's size, which
 * CO-RE gives). NULL when it cannot be read.
 */
static __always_inline const struct pt_regs *task_user_regs(struct task_struct *task)
{
	__u64 stack = (__u64)BPF_CORE_READ(task, stack);
	__u32 size = bpf_core_type_size(struct pt_regs), zero = 0;
	struct regs_room *room = bpf_map_lookup_elem(&regs_copy, &zero);

	if (!room || !stack || !size || size > REGS_ROOM || size > thread_size)
		return NULL;
	if (bpf_probe_read_kernel(room, size, (void *)(stack + thread_size - size)))
		return NULL;
	return (const struct pt_regs *)room;
}

#else

#define JW_TRACEPOINT(name) SEC("tp_btf/" #name)
#define KREAD(p, f) ((p)->f)

static __always_inline struct task_struct *current_task(void)
{
	return bpf_get_current_task_btf();
}

/* Casts a kernel address to a read-only pointer of a type (6.2); weak: older kernels load. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * The current task, for a probe given the user registers @regs (its ctx, or a system call
 * tracepoint's regs: task_pt_regs(current)): task_cache's when @regs are at the top of its stack,
 * a read-only pointer then (its fields read, never handed to a helper); else the helper's,
 * noted in task_cache. Without a helper call, ~7 ns less on each edge of every task here.
 */
static __always_inline struct task_struct *probe_task(const void *regs)
{
	struct task_struct *task;
	__u32 zero = 0;
	__u64 *c, at;

	if (!task_cache_kept)
		return bpf_get_current_task_btf();
	c = bpf_map_lookup_elem(&task_cache, &zero);
	if (!c)
		return bpf_get_current_task_btf();
	at = *(volatile __u64 *)c;
	if (at && regs_offset) {
		task = bpf_rdonly_cast((void *)at, bpf_core_type_id_kernel(struct task_struct));
		if ((__u64)task->stack + regs_offset == (__u64)regs)
			return task;
	}
	task = bpf_get_current_task_btf();
	*(volatile __u64 *)c = (__u64)task;
	if (!regs_offset) {
		/* Through the map: before 6.14 the verifier refuses a pointer minus a number. */
		*(volatile __u64 *)&regs_offset = (__u64)bpf_task_pt_regs(task);
		regs_offset = *(volatile __u64 *)&regs_offset - (__u64)task->stack;
	}
	return task;
}

/*
 * probe_task()'s @task as a helper takes it (task storage): the current task again from the
 * helper when it may be task_cache's read-only pointer. Only off the common path.
 */
static __always_inline struct task_struct *helper_task(struct task_struct *task)
{
	return task_cache_kept ? bpf_get_current_task_btf() : task;
}

static __always_inline __u32 current_tid(struct task_struct *task)
{
	return task->pid;
}

static __always_inline __u32 current_tgid(struct task_struct *task)
{
	return task->tgid;
}

static __always_inline __u32 task_state(struct task_struct *p)
{
	return p->__state;
}

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	return BPF_CORE_READ(p, thread_info.cpu);
}

static __always_inline const struct pt_regs *task_user_regs(struct task_struct *task)
{
	return (const struct pt_regs *)bpf_task_pt_regs(task);
}

#endif

#endif
