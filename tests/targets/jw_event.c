// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libevent loop for the integration tests: every --every ms a timer callback, on_timer(),
 * spins in busy_work() for --ms. It prints what it measured itself, like jw_target:
 * "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC).
 */
#include <event2/event.h>
#include <stdio.h>
#include <time.h>

#include "busy.h"

static unsigned int ms = 300;
static unsigned int n;

__attribute__((noinline)) void on_timer(evutil_socket_t fd, short what, void *arg)
{
	unsigned long long begin = now_ns();

	(void)fd;
	(void)what;
	(void)arg;
	busy_work(ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
}

int main(int argc, char **argv)
{
	struct timer_args args = parse_timer_args(argc, argv);
	struct timeval every = { args.every / 1000, args.every % 1000 * 1000 };
	struct event_base *base;
	struct event *timer;

	ms = args.ms;
	setvbuf(stdout, NULL, _IOLBF, 0);
	base = event_base_new();
	timer = event_new(base, -1, EV_PERSIST, on_timer, NULL);
	event_add(timer, &every);
	event_base_dispatch(base);
	event_free(timer);
	event_base_free(base);
	return 0;
}
