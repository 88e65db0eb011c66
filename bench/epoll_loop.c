// SPDX-License-Identifier: GPL-2.0-only
/*
 * The syscall-mode target of scripts/bench.sh: an event loop whose every task is one
 * epoll_wait() on an eventfd that stays readable (level-triggered, never read), so the call
 * returns at once with one event. Like bench_loop.c it prints, once per window,
 *
 *	window <n> <ns_per_call> <calls> <on_cpu_pct>
 *
 * so whatever a monitor adds to a wait (a tracepoint, a uprobe on libc's epoll_wait) shows up
 * as added ns per call. Runs until killed.
 * Usage: jw_bench_epoll [WINDOW_MS]   (default 500)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>

#include "window.h"

/* Calls between two clock reads: a wait costs hundreds of ns, a clock read tens. */
#define CALLS_PER_BATCH 64

/* Returns an epoll instance with a readable eventfd in it, or -1 with a message. */
static int ready_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep, efd;

	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(1, EFD_CLOEXEC);
	if (ep < 0 || efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev)) {
		perror("jw_bench_epoll: epoll/eventfd");
		return -1;
	}
	return ep;
}

static int run(int ep, uint64_t window_ns)
{
	uint64_t calls = 0, n = 0, start, cpu_start, t;
	struct epoll_event ev;

	start = clock_ns(CLOCK_MONOTONIC);
	cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		for (int i = 0; i < CALLS_PER_BATCH; i++) {
			if (epoll_wait(ep, &ev, 1, 0) != 1) {
				perror("jw_bench_epoll: epoll_wait");
				return 1;
			}
		}
		calls += CALLS_PER_BATCH;
		t = clock_ns(CLOCK_MONOTONIC);
		if (t - start < window_ns)
			continue;
		printf("window %llu %.2f %llu %.1f\n", (unsigned long long)n++,
		       (double)(t - start) / (double)calls, (unsigned long long)calls,
		       100.0 * (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) /
			       (double)(t - start));
		calls = 0;
		start = clock_ns(CLOCK_MONOTONIC);
		cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
}

int main(int argc, char **argv)
{
	uint64_t window_ns = 500 * 1000000ULL;
	int ep;

	if (!window_from_args(argc, argv, &window_ns))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ep = ready_epoll();
	if (ep < 0)
		return 1;
	return run(ep, window_ns);
}
