/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every test target shares: a monotonic clock in ns, busy_work() that spins on it, and the
 * timer loops' options.
 */
#ifndef JW_TARGETS_BUSY_H
#define JW_TARGETS_BUSY_H

#include <stdlib.h>
#include <string.h>
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

/*
 * A timer loop's options: --ms (the busy task), --every (ms between), --count (0: forever),
 * --light (ms between the no-op ticks of a loop that has them, 0: none), and --posted 1: the busy
 * task is no timer of its own but posted by the light ticker every --every ms, right after its
 * tick (the loop's own way to run work soon: an idle source, an async handle).
 */
struct timer_args {
	unsigned int ms;
	unsigned int every;
	unsigned int count;
	unsigned int light;
	unsigned int posted;
};

static inline struct timer_args parse_timer_args(int argc, char **argv)
{
	struct timer_args a = { .ms = 300, .every = 700, .count = 0, .light = 0 };
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--ms"))
			a.ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--every"))
			a.every = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			a.count = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--light"))
			a.light = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--posted"))
			a.posted = atoi(argv[i + 1]);
	}
	return a;
}

#endif
