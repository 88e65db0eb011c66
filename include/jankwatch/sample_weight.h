/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How many sampling periods an on-CPU sample stands for: shared by the BPF programs, which weigh
 * every sample, and the unit tests, which play tasks' samples and switches through it.
 */
#ifndef JANKWATCH_SAMPLE_WEIGHT_H
#define JANKWATCH_SAMPLE_WEIGHT_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif

#include "jankwatch/abi.h"

/*
 * Task @s begins: it has no on-CPU sample yet. Its sample count cannot say so: it counts the
 * records of its sleeps too, which come before its first on-CPU sample when it sleeps first.
 */
static inline void jw_sample_task_begins(struct jw_task_state *s)
{
	s->sample_ns = 0;
	s->sample_young = 0;
}

/*
 * Whether the on-CPU sample at @now comes in the first sampling period (@period_ns) of task @s,
 * and is not taken: at a server's pace nearly every task is that young (tens of us) and ends far
 * under the lowest threshold @report_min_ns, and copying their stacks (10 us and more with a
 * DWARF copy) was most of the sampler's cost. A task that lives on to be reported runs past its
 * first period, where its next on-CPU sample stands for the one skipped too. Where the
 * threshold is not above the period, a task that short may be reported: every sample is taken.
 */
static inline bool jw_sample_skip_young(struct jw_task_state *s, __u64 now, __u64 period_ns,
					__u64 report_min_ns)
{
	if (period_ns >= report_min_ns || now < s->start_ns || now - s->start_ns >= period_ns)
		return false;
	s->sample_young++;
	return true;
}

/*
 * The sampling periods (@period_ns each) the on-CPU sample at @now of task @s stands for: one,
 * but more where the sampler's timer fired late while the thread ran throughout (the same task,
 * no switch since its last on-CPU sample). In a VM the host may stop the vCPU while the thread
 * runs: the guest's timer expires meanwhile, the kernel takes one sample when the vCPU runs again
 * and skips the periods it missed, all spent where the thread stood, at this sample's stack.
 */
static inline __u32 jw_sample_periods(struct jw_task_state *s, __u64 now, __u64 period_ns)
{
	__u64 last = s->sample_ns, n;
	__u32 young = s->sample_young;

	s->sample_ns = now;
	s->sample_young = 0;
	/* The task's first on-CPU sample, or a switch since the last. */
	if (!last || s->sample_switches != s->switches) {
		s->sample_switches = s->switches;
		return 1 + young;
	}
	if (now <= last || !period_ns)
		return 1 + young;
	n = (now - last + period_ns / 2) / period_ns;
	return (n > 1 ? (__u32)n : 1) + young;
}

#endif
