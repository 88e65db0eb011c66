/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How one task is counted in a statistics row: shared by the BPF programs, which count every
 * task, and the unit tests, which feed it streams of tasks.
 */
#ifndef JANKWATCH_STATS_ADD_H
#define JANKWATCH_STATS_ADD_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif

#include "jankwatch/abi.h"

/* floor(log2(@v)) for @v > 0; 0 for 0. */
static inline __u32 jw_log2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	return r + (__u32)(v >> 1);
}

/* The log2 histogram slot of @us: i for [2^i, 2^(i+1)), 0 for under 2 us. */
static inline __u32 jw_stats_slot(__u64 us)
{
	__u32 r = jw_log2(us);

	return r < JW_HIST_SLOTS ? r : JW_HIST_SLOTS - 1;
}

/*
 * jw_stats_slot(@ns / 1000) without a division, which the BPF programs would pay on every task:
 * with L = floor(log2(ns)), 1000 << (L - 10) <= 2^L <= ns always, and 1000 << (L - 9) may be too,
 * so the slot is L - 9 or L - 10. (1000 << 54 still fits in 64 bits.)
 */
static inline __u32 jw_stats_slot_ns(__u64 ns)
{
	__u32 l, r;

	if (ns < 2000)
		return 0;
	l = jw_log2(ns);
	r = ns >= (1000ULL << (l - 9)) ? l - 9 : l - 10;
	return r < JW_HIST_SLOTS ? r : JW_HIST_SLOTS - 1;
}

/*
 * Counts a task of @wall ns (@cpu of them on the CPU, after a queueing delay of @delay ns or
 * JW_DELAY_UNKNOWN) in row @v, and times it when it is the row's 1 in @every (the first, then
 * every @every-th). A thread's own rows are written by it alone: plain adds. The OVERFLOW row
 * (@shared) is every thread's: atomic adds (its maxima may race; a lost maximum is the price of
 * not locking). Inlined: BPF calls take five arguments.
 */
static inline __attribute__((always_inline)) void
jw_stats_add(struct jw_stats_val *v, __u64 wall, __u64 cpu, __u64 delay, bool exception,
	     __u32 every, bool shared)
{
	__u64 n;
	__u32 slot;

	if (shared) {
#if defined(JW_COMPAT) && JW_COMPAT
		/*
		 * Before 5.12 an atomic add returns nothing (the compatible BPF build): the count is
		 * read after it, racy only in which task of the shared row is the one timed.
		 */
		__sync_fetch_and_add(&v->count, 1);
		n = v->count - 1;
#else
		n = __sync_fetch_and_add(&v->count, 1);
#endif
		if (exception)
			__sync_fetch_and_add(&v->exceptions, 1);
	} else {
		n = v->count++;
		v->exceptions += exception;
	}
	if (every > 1 && n % every)
		return;
	slot = jw_stats_slot_ns(wall);
	/* Opaque to the compiler, so that the mask stays for the BPF verifier to see. */
	__asm__ volatile("" : "+r"(slot));
	slot &= JW_HIST_SLOTS - 1;
	if (shared) {
		__sync_fetch_and_add(&v->recorded, 1);
		__sync_fetch_and_add(&v->total_ns, wall);
		__sync_fetch_and_add(&v->total_cpu_ns, cpu);
		__sync_fetch_and_add(&v->hist[slot], 1);
	} else {
		v->recorded++;
		v->total_ns += wall;
		v->total_cpu_ns += cpu;
		v->hist[slot]++;
	}
	if (wall > v->max_ns)
		v->max_ns = wall;
	if (cpu > v->max_cpu_ns)
		v->max_cpu_ns = cpu;
	if (delay == JW_DELAY_UNKNOWN)
		return;
	if (shared) {
		__sync_fetch_and_add(&v->delay_count, 1);
		__sync_fetch_and_add(&v->total_delay_ns, delay);
	} else {
		v->delay_count++;
		v->total_delay_ns += delay;
	}
	if (delay > v->max_delay_ns)
		v->max_delay_ns = delay;
}

#endif
