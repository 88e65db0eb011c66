// SPDX-License-Identifier: GPL-2.0-only
/*
 * A busy event loop at a fixed rate, for bench/rate.sh: each iteration is one epoll_wait() on
 * an eventfd that stays readable (it returns at once, as a busy proxy's does) and one task,
 * dispatch(), which works until the iteration's deadline, RATE deadlines a second. Whatever a
 * monitor adds to an iteration (its probes on dispatch(), on the wait, on the system call) is
 * time the task does not spend working: the loop keeps its rate while that time is short of
 * the period, and prints once a window
 *
 *	window <n> <outside_ns_per_iteration> <iterations> <iterations_per_s>
 *
 * where outside is everything in an iteration but the task's work: the wait, the call, the
 * probes. Runs until killed.
 * Usage: jw_bench_rate RATE [WINDOW_MS]   (RATE from 1000 to 1000000 a second)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>

#include "window.h"

static uint64_t working_ns;	/* the tasks' own work, this window */

/* The task: works (reads the clock) until @deadline. Its time there is the task's own. */
__attribute__((noinline)) void dispatch(uint64_t deadline);
__attribute__((noinline)) void dispatch(uint64_t deadline)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), t = start;

	while (t < deadline)
		t = clock_ns(CLOCK_MONOTONIC);
	working_ns += t - start;
	asm volatile("" ::: "memory");
}

static int run(int ep, uint64_t period_ns, uint64_t window_ns)
{
	uint64_t n = 0, iterations = 0, start, deadline, t;
	struct epoll_event ev;

	start = clock_ns(CLOCK_MONOTONIC);
	deadline = start;
	for (;;) {
		if (epoll_wait(ep, &ev, 1, 0) != 1) {
			perror("jw_bench_rate: epoll_wait");
			return 1;
		}
		deadline += period_ns;
		dispatch(deadline);
		iterations++;
		t = clock_ns(CLOCK_MONOTONIC);
		/* Fallen behind by more than a period: the rate is what it could do. */
		if (t > deadline + period_ns)
			deadline = t;
		if (t - start < window_ns)
			continue;
		printf("window %llu %.1f %llu %.0f\n", (unsigned long long)n++,
		       (double)(t - start - working_ns) / (double)iterations,
		       (unsigned long long)iterations, 1e9 * (double)iterations / (double)(t - start));
		iterations = 0;
		working_ns = 0;
		start = t;
	}
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t window_ns = 500 * 1000000ULL;
	long rate = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	int ep, efd;

	if (rate < 1000 || rate > 1000000 ||
	    (argc == 3 && !(window_ns = parse_window_ms(argv[2]))) || argc > 3) {
		fprintf(stderr, "usage: %s RATE [WINDOW_MS]   (RATE: 1000 to 1000000 a second; "
			"WINDOW_MS: 10 to 60000, default 500)\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(1, EFD_CLOEXEC);
	if (ep < 0 || efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev)) {
		perror("jw_bench_rate: epoll/eventfd");
		return 1;
	}
	return run(ep, 1000000000ULL / (uint64_t)rate, window_ns);
}
