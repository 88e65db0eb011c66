// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of syscall mode in scripts/bench.sh: programs on the raw sys_enter and sys_exit
 * tracepoints that do nothing. They run for every syscall of the machine; the bench loop makes
 * only epoll_wait(), so what they cost it is what a monitor timing the wait syscall with the two
 * tracepoints pays before its first instruction of logic.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("raw_tp/sys_enter")
int tp_floor_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}

SEC("raw_tp/sys_exit")
int tp_floor_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return 0;
}
