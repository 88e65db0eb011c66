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
