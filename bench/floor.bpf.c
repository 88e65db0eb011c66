// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of scripts/bench.sh: a uprobe and a uretprobe that do nothing. What they cost is
 * what any monitor built on the same two probes pays before its first instruction of logic.
 * With read_clock (jw_bench_floor --clock) each reads the clock once, as anything that times a
 * call must: the least a timing tool can add to the floor.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile bool read_clock;
__u64 last_ns;

SEC("uprobe")
int floor_enter(struct pt_regs *ctx)
{
	if (read_clock)
		last_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("uretprobe")
int floor_exit(struct pt_regs *ctx)
{
	if (read_clock)
		last_ns = bpf_ktime_get_ns() - last_ns;
	return 0;
}
