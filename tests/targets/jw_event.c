// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libevent loop for the integration tests: every --every ms a timer callback, on_timer(),
 * spins in busy_work() for --ms. It prints what it measured itself, like jw_target:
 * "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC). With --light MS a second timer,
 * on_light(), ticks every MS ms and returns at once; with --posted 1 it is the ticker that
 * activates the busy task, on_posted(), every --every ms, right after its tick.
 */
#include <event2/event.h>
#include <stdio.h>
#include <time.h>

#include "busy.h"

static struct timer_args args;
static struct event *posted;
static unsigned int n, ticks;

static void busy_task(void)
{
	unsigned long long begin = now_ns();

	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
}

__attribute__((noinline)) void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	busy_task();
}

__attribute__((noinline)) void on_posted(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	busy_task();
}

__attribute__((noinline)) void on_light(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	ticks++;
	if (args.posted && ticks % (args.every / args.light) == 0)
		event_active(posted, 0, 0);
}

static struct timeval ms_tv(unsigned int ms)
{
	return (struct timeval){ ms / 1000, ms % 1000 * 1000 };
}

int main(int argc, char **argv)
{
	struct event_base *base;
	struct event *timer = NULL, *light = NULL;
	struct timeval every, tick;

	args = parse_timer_args(argc, argv);
	every = ms_tv(args.every);
	tick = ms_tv(args.light);
	setvbuf(stdout, NULL, _IOLBF, 0);
	base = event_base_new();
	if (args.posted && args.light) {
		posted = event_new(base, -1, 0, on_posted, NULL);
	} else {
		timer = event_new(base, -1, EV_PERSIST, on_timer, NULL);
		event_add(timer, &every);
	}
	if (args.light) {
		light = event_new(base, -1, EV_PERSIST, on_light, NULL);
		event_add(light, &tick);
	}
	event_base_dispatch(base);
	if (timer)
		event_free(timer);
	if (light)
		event_free(light);
	if (posted)
		event_free(posted);
	event_base_free(base);
	return 0;
}
