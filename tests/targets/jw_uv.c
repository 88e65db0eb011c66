// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libuv loop (the shared libuv.so.1) for the integration tests: every --every ms a timer
 * callback, on_timer(), spins in busy_work() for --ms. It prints what it measured itself, like
 * jw_target: "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC).
 */
#include <stdio.h>
#include <time.h>
#include <uv.h>

#include "busy.h"

static unsigned int ms = 300;
static unsigned int n;

__attribute__((noinline)) void on_timer(uv_timer_t *timer)
{
	unsigned long long begin = now_ns();

	(void)timer;
	busy_work(ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
}

int main(int argc, char **argv)
{
	struct timer_args args = parse_timer_args(argc, argv);
	uv_timer_t timer;

	ms = args.ms;
	setvbuf(stdout, NULL, _IOLBF, 0);
	uv_timer_init(uv_default_loop(), &timer);
	uv_timer_start(&timer, on_timer, args.every, args.every);
	return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
