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

/*
 * Whether @v's high half is not zero, 1 or 0, for @v < 2^(2 * @w): with no branch.
 */
#define JW_HIGH_HALF(v, w) ((((v) >> (w)) + ((1ULL << (w)) - 1)) >> (w))

/*
 * floor(log2(@v)) for @v > 0; 0 for 0. A binary search without a branch: in the BPF programs
 * each branch's side was a known value of its own, which the verifier followed through the rest
 * of the program, not one range (most of a dispatch probe's verification).
 */
static inline __u32 jw_log2(__u64 v)
{
	__u64 r, s;

	r = JW_HIGH_HALF(v, 32) << 5;
	v >>= r;
	s = JW_HIGH_HALF(v, 16) << 4;
	v >>= s;
	r |= s;
	s = JW_HIGH_HALF(v, 8) << 3;
	v >>= s;
	r |= s;
	s = JW_HIGH_HALF(v, 4) << 2;
	v >>= s;
	r |= s;
	s = JW_HIGH_HALF(v, 2) << 1;
	v >>= s;
	r |= s;
	return (__u32)(r | (v >> 1));
}

/* The log2 histogram slot of @us: i for [2^i, 2^(i+1)), 0 for under 2 us. */
static inline __u32 jw_stats_slot(__u64 us)
{
	__u32 r = jw_log2(us);

	return r < JW_HIST_SLOTS ? r : JW_HIST_SLOTS - 1;
}

/*
 * jw_stats_slot(@ns / 1000) without a division, which the BPF programs would pay on every task,
 * and without a branch past the first (jw_log2()): with L = floor(log2(ns)), 1000 << (L - 9) is
 * in (2^L, 2^(L+1)) as ns is in [2^L, 2^(L+1)), so the slot is L - 9 where ns is at least that,
 * else L - 10; the sign bit of their difference, less than 2^63 either way, says which. (1000 <<
 * 54 still fits in 64 bits.) A slot past the last (L - 9 is 54 at most) is the last.
 */
static inline __u32 jw_stats_slot_ns(__u64 ns)
{
	__u64 l, r, over;

	if (ns < 2000)
		return 0;
	l = jw_log2(ns);
	r = l - 9 - ((ns - (1000ULL << (l - 9))) >> 63);
	over = (JW_HIST_SLOTS - 1 - r) >> 63;
	return (__u32)(r - over * (r - (JW_HIST_SLOTS - 1)));
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
