// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libuv loop (the shared libuv.so.1) for the integration tests: every --every ms a timer
 * callback, on_timer(), spins in busy_work() for --ms. With --light MS a second timer, on_light(),
 * ticks every MS ms and returns at once; with --posted 1 it is the ticker that posts the busy task
 * every --every ms, through an async handle, right after its tick. It prints what it measured
 * itself, like jw_target: "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC), and for each
 * tick after the first how late it ran: "tick <n> late <ns>" (from the due time libuv set it).
 */
#include <stdio.h>
#include <time.h>
#include <uv.h>

#include "busy.h"

static struct timer_args args;
static unsigned int n, ticks;
static unsigned long long next_due_ms;	/* the ticker's next due time, in the loop's ms */
static uv_async_t post;

static void busy_task(void)
{
	unsigned long long begin = now_ns();

	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
}

__attribute__((noinline)) void on_timer(uv_timer_t *timer)
{
	(void)timer;
	busy_task();
}

__attribute__((noinline)) void on_posted(uv_async_t *async)
{
	(void)async;
	busy_task();
}

__attribute__((noinline)) void on_light(uv_timer_t *timer)
{
	unsigned long long now = now_ns();

	ticks++;
	/* libuv's loop clock is CLOCK_MONOTONIC in ms, as now_ns() is in ns. */
	if (next_due_ms)
		printf("tick %u late %lld\n", ticks,
		       now > next_due_ms * 1000000ULL ? (long long)(now - next_due_ms * 1000000ULL) : 0);
	next_due_ms = uv_now(timer->loop) + uv_timer_get_due_in(timer);
	if (args.posted && ticks % (args.every / args.light) == 0)
		uv_async_send(&post);
}

int main(int argc, char **argv)
{
	uv_timer_t timer, light;

	args = parse_timer_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (args.posted && args.light) {
		uv_async_init(uv_default_loop(), &post, on_posted);
	} else {
		uv_timer_init(uv_default_loop(), &timer);
		uv_timer_start(&timer, on_timer, args.every, args.every);
	}
	if (args.light) {
		uv_timer_init(uv_default_loop(), &light);
		uv_timer_start(&light, on_light, args.light, args.light);
	}
	return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
