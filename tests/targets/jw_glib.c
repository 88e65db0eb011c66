// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GLib main loop for the integration tests: every --every ms a timeout callback, on_tick(),
 * spins in busy_work() for --ms; it quits after --count ticks when given. With --light MS a
 * second timeout, on_light(), runs every MS ms and returns at once: a loop that is never idle
 * for long, so that the seconds before a jank hold tasks and switches; with --posted 1 it is
 * on_light() that posts on_tick() every --every ms, as an idle source, right after its tick. It
 * prints what it measured itself, like jw_target: "task <n> busy <begin_ns> <duration_ns>"
 * (CLOCK_MONOTONIC), and how late each light tick ran: "tick <n> late <ns>" (from the ready
 * time GLib gave its source).
 */
#include <glib.h>
#include <stdio.h>
#include <time.h>

#include "busy.h"

static unsigned int ms = 300;
static unsigned int count;	/* --count: quit after this many ticks (0: never) */
static unsigned int n, ticks, posted, ticks_per_task;
static GMainLoop *loop;

__attribute__((noinline)) gboolean on_tick(gpointer data)
{
	unsigned long long begin = now_ns();

	(void)data;
	busy_work(ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (count && n >= count)
		g_main_loop_quit(loop);
	return posted ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

__attribute__((noinline)) gboolean on_light(gpointer data)
{
	gint64 due = g_source_get_ready_time(g_main_current_source());
	gint64 now = g_get_monotonic_time();

	(void)data;
	ticks++;
	if (due > 0)
		printf("tick %u late %lld\n", ticks, now > due ? (long long)(now - due) * 1000 : 0LL);
	if (posted && ticks % ticks_per_task == 0)
		g_idle_add(on_tick, NULL);
	return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
	struct timer_args args = parse_timer_args(argc, argv);

	ms = args.ms;
	count = args.count;
	posted = args.posted && args.light;
	ticks_per_task = posted ? args.every / args.light : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	loop = g_main_loop_new(NULL, FALSE);
	if (!posted)
		g_timeout_add(args.every, on_tick, NULL);
	if (args.light)
		g_timeout_add(args.light, on_light, NULL);
	g_main_loop_run(loop);
	g_main_loop_unref(loop);
	return 0;
}
