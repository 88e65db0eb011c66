/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the bench loops share (bench_loop.c, epoll_loop.c, site_loop.c): a clock in ns, and the
 * window their one argument sets.
 */
#ifndef JW_BENCH_WINDOW_H
#define JW_BENCH_WINDOW_H

#include <errno.h>
#include <stdint.h>
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

#endif
