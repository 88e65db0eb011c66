// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floors of syscall mode in scripts/bench.sh, programs that do nothing:
 * - on the raw sys_enter and sys_exit tracepoints, which every system call of the machine goes
 *   through once any program is on them;
 * - on one system call's own two tracepoints (syscalls:sys_enter_<name>, sys_exit_<name>), what
 *   DESIGN.md's budget calls the wait syscall's tracepoints; they run only for that call.
 * The bench loop makes only epoll_wait(), so what either pair costs it is what a monitor timing
 * the wait with those tracepoints pays before its first instruction of logic. With read_clock
 * (jw_bench_tp_floor --clock) the raw pair reads the clock once each: the least that times a
 * wait on them.
 * - (jw_bench_tp_floor --machine) what jankwatch's default hooks on every thread of the machine,
 *   empty: the scheduler's switch and wakeup, the wait system calls' exits, a cpu-clock sampler
 *   on each CPU. What they cost a request of a server nobody watches is the floor of what
 *   watching one server costs the others (bench/side_by_side.sh).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile bool read_clock;
__u64 last_ns;

SEC("raw_tp/sys_enter")
int tp_floor_enter(struct bpf_raw_tracepoint_args *ctx)
{
	if (read_clock)
		last_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/sys_exit")
int tp_floor_exit(struct bpf_raw_tracepoint_args *ctx)
{
	if (read_clock)
		last_ns = bpf_ktime_get_ns() - last_ns;
	return 0;
}

/* Attached by jw_bench_tp_floor --syscall NAME, to the call's own tracepoints. */
SEC("tracepoint")
int sys_floor_enter(void *ctx)
{
	return 0;
}

SEC("tracepoint")
int sys_floor_exit(void *ctx)
{
	return 0;
}

/* --machine: the scheduler's two tracepoints and a sampler on each CPU, empty. */
SEC("tp_btf/sched_switch")
int machine_switch(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int machine_waking(void *ctx)
{
	return 0;
}

SEC("perf_event")
int machine_sample(void *ctx)
{
	return 0;
}
