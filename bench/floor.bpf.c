// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of scripts/bench.sh: a uprobe and a uretprobe that do nothing. What they cost is
 * what any monitor built on the same two probes pays before its first instruction of logic.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int floor_enter(struct pt_regs *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_exit(struct pt_regs *ctx)
{
	return 0;
}
