// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GLib main loop for the integration tests: every --every ms a timeout callback, on_tick(),
 * spins in busy_work() for --ms; it quits after --count ticks when given. With --light MS a
 * second timeout, on_light(), runs every MS ms and returns at once: a loop that is never idle
 * for long, so that the seconds before a jank hold tasks and switches. It prints what it
 * measured itself, like jw_target: "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC).
 */
#include <glib.h>
#include <stdio.h>
#include <time.h>

#include "busy.h"

static unsigned int ms = 300;
static unsigned int count;	/* --count: quit after this many ticks (0: never) */
static unsigned int n;
static GMainLoop *loop;

__attribute__((noinline)) gboolean on_tick(gpointer data)
{
	unsigned long long begin = now_ns();

	(void)data;
	busy_work(ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (count && n >= count)
		g_main_loop_quit(loop);
	return G_SOURCE_CONTINUE;
}

__attribute__((noinline)) gboolean on_light(gpointer data)
{
	(void)data;
	sink++;
	return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
	struct timer_args args = parse_timer_args(argc, argv);

	ms = args.ms;
	count = args.count;
	setvbuf(stdout, NULL, _IOLBF, 0);
	loop = g_main_loop_new(NULL, FALSE);
	g_timeout_add(args.every, on_tick, NULL);
	if (args.light)
		g_timeout_add(args.light, on_light, NULL);
	g_main_loop_run(loop);
	g_main_loop_unref(loop);
	return 0;
}
