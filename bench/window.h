/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the bench loops share (bench_loop.c, epoll_loop.c, site_loop.c): a clock in ns, and the
 * window their one argument sets.
 */
#ifndef JW_BENCH_WINDOW_H
#define JW_BENCH_WINDOW_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Returns the window in ns, or 0 when @arg is not a number of ms from 10 to 60000. */
static inline uint64_t parse_window_ms(const char *arg)
{
	char *end;
	long ms;

	errno = 0;
	ms = strtol(arg, &end, 10);
	if (errno || end == arg || *end || ms < 10 || ms > 60000)
		return 0;
	return (uint64_t)ms * 1000000ULL;
}

/*
 * The window the bench loops take as their one argument, into @window_ns (left as it is when
 * none is given); false, with the usage on stderr, when the arguments are not that.
 */
static inline int window_from_args(int argc, char **argv, uint64_t *window_ns)
{
	if (argc > 2 || (argc == 2 && !(*window_ns = parse_window_ms(argv[1])))) {
		fprintf(stderr, "usage: %s [WINDOW_MS]   (from 10 to 60000, default 500)\n",
			argv[0]);
		return 0;
	}
	return 1;
}

/* Callbacks between two clock reads. */
#define WINDOW_CALLS_PER_BATCH 64

/* The callbacks of a loop that calls one per iteration (site_loop.c, qt_loop.cpp). */
struct callback_window {
	uint64_t window_ns;
	uint64_t calls, n, start, cpu_start;
};

static inline void callback_window_start(struct callback_window *w)
{
	w->calls = 0;
	w->start = clock_ns(CLOCK_MONOTONIC);
	w->cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * One callback: counted, and once a window is over, "window <n> <ns_per_callback> <callbacks>
 * <on_cpu_pct>" printed and the next begun.
 */
static inline void callback_window_count(struct callback_window *w)
{
	uint64_t t;

	if (++w->calls % WINDOW_CALLS_PER_BATCH)
		return;
	t = clock_ns(CLOCK_MONOTONIC);
	if (t - w->start < w->window_ns)
		return;
	printf("window %llu %.2f %llu %.1f\n", (unsigned long long)w->n++,
	       (double)(t - w->start) / (double)w->calls, (unsigned long long)w->calls,
	       100.0 * (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - w->cpu_start) /
		       (double)(t - w->start));
	callback_window_start(w);
}

#endif
