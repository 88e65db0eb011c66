/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the running kernel offers the BPF object, found before it is loaded: each facility
 * probed (not the release read), and from them which of the object's two builds it takes: the
 * full one where it has them all, else the compatible one (bpf/kernel.bpf.h), with attach
 * cookies where it has them. A kernel that can take neither is refused in one line naming what
 * it lacks and the release that has it, rather than with a verifier log.
 */
#ifndef JW_KERNEL_H
#define JW_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the BPF object may take from a kernel, each found by a probe of the running one. */
enum jw_kernel_fact {
	JW_KF_RINGBUF,		/* BPF ring buffer maps (5.8): both builds need them */
	JW_KF_BTF,		/* the kernel's own BTF, /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF) */
	JW_KF_TASK_STORAGE,	/* task storage for tracing programs (5.11) */
	JW_KF_TASK_BTF,		/* bpf_get_current_task_btf (5.11) */
	JW_KF_TASK_PT_REGS,	/* bpf_task_pt_regs (5.15) */
	JW_KF_ATTACH_COOKIE,	/* bpf_get_attach_cookie and perf links (5.15) */
	JW_KF_FIND_VMA,		/* bpf_find_vma (5.17) */
	JW_KF_LOOP,		/* bpf_loop (5.17) */
	JW_KF_RUN_CTX_COOKIE,	/* a probe's cookie read from its run context (6.2): optional */
	JW_KF_UPROBE_SESSION,	/* uprobe sessions (6.13): optional, neither build needs them */
	JW_KF_SYSCALL_EVENTS,	/* a BPF program on one system call's tracepoints: optional */
	JW_KF_FEXIT,		/* BPF trampolines, fexit on the wait system calls (5.5): optional */
	JW_KF_COUNT,
};

/* 1: the kernel has it, 0: it has not, < 0: could not tell (taken as there: the load says). */
struct jw_kernel_facts {
	int has[JW_KF_COUNT];
	char release[65];
};

/* Which build of the BPF object to load, and how. */
struct jw_kernel_plan {
	bool compat;		/* the compatible build (bpf/kernel.bpf.h) */
	bool cookies;		/* probes carry attach cookies; else probe_cookies by address */
	bool btf_file;		/* CO-RE relocates against the BTF file given, not the kernel's */
	bool session;		/* a dispatch's entry and return as one uprobe session (full build) */
	bool run_ctx_cookie;	/* probes read their cookie from their run context (full build) */
	bool syscall_events;	/* syscall mode may hook the wait system calls' own tracepoints */
	bool fexit;		/* syscall mode may hook the wait system calls' returns by fexit */
	char lacks[256];	/* what the compatible build stands in for, named; "" for none */
};

/*
 * Whether the watched threads' switches are seen by each one's own switch event, @asked
 * (sched_hooks=1): in the full build; the compatible one keeps them on sched_switch.
 */
static inline bool jw_kernel_plan_thread_switches(const struct jw_kernel_plan *plan, bool asked)
{
	return asked && !plan->compat;
}

/* A fact's name: the facility, as a user would look it up ("BPF helper bpf_loop"). */
const char *jw_kernel_fact_name(enum jw_kernel_fact fact);

/* A fact's short name, as JW_KERNEL_HIDE takes it ("loop"). */
const char *jw_kernel_fact_key(enum jw_kernel_fact fact);

/* The first Linux release that has the fact ("5.17"). */
const char *jw_kernel_fact_since(enum jw_kernel_fact fact);

/*
 * Probes the running kernel. The facts named in @hide (JW_KERNEL_HIDE's comma-separated short
 * names; NULL for none) are taken as missing: how the tests run the compatible build on a
 * kernel that would not need it. -EINVAL, with @err, for a name it does not know.
 */
int jw_kernel_probe(struct jw_kernel_facts *facts, const char *hide, char *err, size_t len);

/*
 * The plan for a kernel with @facts, @btf_file true when a BTF file for it was given (--btf).
 * Returns 0, or -EOPNOTSUPP with @err naming what is missing and how to get it.
 */
int jw_kernel_plan_for(const struct jw_kernel_facts *facts, bool btf_file,
		       struct jw_kernel_plan *plan, char *err, size_t len);

/* Where a kernel without BTF of its own finds its BTF file when no --btf is given. */
#define JW_BTF_DIR "/var/lib/jankwatch/btf"

/*
 * The BTF file CO-RE relocates against: @given (--btf: a file, or a directory searched for
 * <release>.btf at any depth, as BTFHub lays them out by distribution, version and
 * architecture); with none given, on a kernel without BTF of its own (@facts), JW_BTF_DIR
 * searched the same way. Returns 1 with the file in @out (checked to be BTF), 0 when there is
 * none to use, or -errno with @err.
 */
int jw_kernel_btf_file(const char *given, const struct jw_kernel_facts *facts, char *out,
		       size_t len, char *err, size_t errlen);

/*
 * The plan for the running kernel: its facts probed (JW_KERNEL_HIDE's taken as missing), its
 * BTF file found (@btf_given: --btf, or NULL), the build it takes. 0 with @facts, @plan and the
 * BTF file in @btf_path ("" for the kernel's own), or -errno with @err naming why not.
 */
int jw_kernel_plan_here(const char *btf_given, struct jw_kernel_facts *facts,
			struct jw_kernel_plan *plan, char *btf_path, size_t len, char *err,
			size_t errlen);

/* The kernel's stack size (THREAD_SIZE): the compatible build's way to a task's registers. */
uint32_t jw_kernel_thread_size(void);

/*
 * Whether the kernel turns a lookup in a per-CPU array into a few inline instructions (6.10, on
 * x86-64 and arm64) rather than a helper call: loads a program that makes one and reads back the
 * instructions the kernel made of it. False when it cannot tell.
 */
bool jw_kernel_inlines_percpu_lookup(void);

/*
 * Whether this process may make uprobes: opens one on its own executable (at file offset 0,
 * which no code maps, so it never fires) and closes it. False only when the kernel refuses it
 * for lack of privilege: since Linux 6.5, and in the stable kernels before it, uprobes through
 * perf events take CAP_SYS_ADMIN, where CAP_PERFMON was enough.
 */
bool jw_kernel_uprobes_allowed(void);

#endif
