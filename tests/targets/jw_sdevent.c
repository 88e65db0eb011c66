// SPDX-License-Identifier: GPL-2.0-only
/*
 * A systemd sd-event loop for the integration tests: every --every ms a CLOCK_MONOTONIC timer
 * source described as "catalog-reindex", on_reindex(), spins in busy_work() for --ms; it quits
 * after --count tasks when given. With --light MS a second timer source, "light-tick", on_tick(),
 * runs every MS ms and returns at once. Both stay SD_EVENT_ON and re-arm themselves in their
 * callback, --every or --light ms after the loop iteration woke up. It prints what it measured
 * itself, like jw_glib: "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC) per slow task
 * and "tick <n> <ns>" per light tick, <ns> being when it ran.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "busy.h"

/* sd-event's default accuracy (0) lets a timer slip by up to 250 ms: ask for 1 us. */
#define TIMER_ACCURACY_US 1

static struct timer_args args;
static unsigned int n, ticks;

__attribute__((noinline)) int on_reindex(sd_event_source *s, uint64_t usec, void *userdata)
{
	unsigned long long begin = now_ns();

	(void)usec;
	(void)userdata;
	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (args.count && n >= args.count)
		return sd_event_exit(sd_event_source_get_event(s), 0);
	return sd_event_source_set_time_relative(s, args.every * 1000ULL);
}

__attribute__((noinline)) int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)usec;
	(void)userdata;
	printf("tick %u %llu\n", ++ticks, now_ns());
	return sd_event_source_set_time_relative(s, args.light * 1000ULL);
}

/* Adds a repeating timer every @ms ms named @description. Returns 0 or -errno. */
static int add_timer(sd_event *e, sd_event_source **src, unsigned int ms, const char *description,
		     sd_event_time_handler_t callback)
{
	int err;

	err = sd_event_add_time_relative(e, src, CLOCK_MONOTONIC, ms * 1000ULL, TIMER_ACCURACY_US,
					 callback, NULL);
	if (err < 0)
		return err;
	err = sd_event_source_set_description(*src, description);
	if (err < 0)
		return err;
	return sd_event_source_set_enabled(*src, SD_EVENT_ON);
}

int main(int argc, char **argv)
{
	sd_event_source *reindex = NULL, *tick = NULL;
	sd_event *e = NULL;
	int err;

	args = parse_timer_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = sd_event_default(&e);
	if (err < 0) {
		fprintf(stderr, "jw_sdevent: cannot get the default event loop: %s\n",
			strerror(-err));
		return 1;
	}
	err = add_timer(e, &reindex, args.every, "catalog-reindex", on_reindex);
	if (!err && args.light)
		err = add_timer(e, &tick, args.light, "light-tick", on_tick);
	if (!err)
		err = sd_event_loop(e);
	if (err < 0)
		fprintf(stderr, "jw_sdevent: event loop failed: %s\n", strerror(-err));
	sd_event_source_unref(tick);
	sd_event_source_unref(reindex);
	sd_event_unref(e);
	return err < 0 ? 1 : 0;
}
