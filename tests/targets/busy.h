/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every test target shares: a monotonic clock in ns, busy_work() that spins on it, the
 * thread's run-queue wait, and the timer loops' options.
 */
#ifndef JW_TARGETS_BUSY_H
#define JW_TARGETS_BUSY_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The CPU time this thread has used, in ns. */
static inline unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * How long this thread has waited for a CPU, in ns (schedstat's run_delay); 0 if unknown. Taken
 * before and after a task, it says how much of the task's own figure the thread spent waiting
 * for a CPU: around a monitor's interval as well as inside it.
 */
static inline unsigned long long run_delay_ns(void)
{
	static int fd = -2;
	unsigned long long on_cpu, waited;
	char buf[128];
	ssize_t n;

	if (fd == -2)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%llu %llu", &on_cpu, &waited) == 2 ? waited : 0;
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
