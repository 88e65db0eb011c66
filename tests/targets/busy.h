/* SPDX-License-Identifier: GPL-2.0-only */
/* What every test target shares: a monotonic clock in ns, and busy_work() that spins on it. */
#ifndef JW_TARGETS_BUSY_H
#define JW_TARGETS_BUSY_H

#include <time.h>

static volatile unsigned long sink;

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Spins @ms milliseconds on the clock: a task that keeps the CPU, named in the stacks. */
static __attribute__((noinline, used)) void busy_work(unsigned int ms)
{
	unsigned long long end = now_ns() + ms * 1000000ULL;

	while (now_ns() < end)
		sink++;
}

#endif
