// SPDX-License-Identifier: GPL-2.0-only
/*
 * A PipeWire main loop for the integration tests, with no PipeWire daemon (it never connects a
 * context): every --every ms a timer source of pw_main_loop_get_loop(), on_reindex(), spins in
 * busy_work() for --ms; it quits after --count tasks when given. With --light MS a second timer,
 * on_tick(), runs every MS ms and returns at once. Both are timerfds with an interval, armed by
 * pw_loop_update_timer(). It prints what it measured itself, like jw_glib:
 * "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC) per slow task and "tick <n> <ns>"
 * per light tick, <ns> being when it ran.
 */
#include <pipewire/pipewire.h>
#include <stdio.h>
#include <time.h>

#include "busy.h"

static struct timer_args args;
static unsigned int n, ticks;
static struct pw_main_loop *main_loop;

__attribute__((noinline)) void on_reindex(void *data, uint64_t expirations)
{
	unsigned long long begin = now_ns();

	(void)data;
	(void)expirations;
	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (args.count && n >= args.count)
		pw_main_loop_quit(main_loop);
}

__attribute__((noinline)) void on_tick(void *data, uint64_t expirations)
{
	(void)data;
	(void)expirations;
	printf("tick %u %llu\n", ++ticks, now_ns());
}

static struct timespec ms_ts(unsigned int ms)
{
	return (struct timespec){ ms / 1000, ms % 1000 * 1000000L };
}

/* Adds a timer source calling @func every @ms ms. Returns 0 or -errno. */
static int add_timer(struct pw_loop *loop, unsigned int ms, spa_source_timer_func_t func)
{
	struct timespec every = ms_ts(ms);
	struct spa_source *timer;

	timer = pw_loop_add_timer(loop, func, NULL);
	if (!timer)
		return -errno;
	return pw_loop_update_timer(loop, timer, &every, &every, false);
}

int main(int argc, char **argv)
{
	struct pw_loop *loop;
	int err;

	args = parse_timer_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pw_init(&argc, &argv);
	main_loop = pw_main_loop_new(NULL);
	if (!main_loop) {
		fprintf(stderr, "jw_pw: cannot create the main loop: %s\n", strerror(errno));
		pw_deinit();
		return 1;
	}
	loop = pw_main_loop_get_loop(main_loop);
	err = add_timer(loop, args.every, on_reindex);
	if (!err && args.light)
		err = add_timer(loop, args.light, on_tick);
	if (!err)
		err = pw_main_loop_run(main_loop);
	if (err < 0)
		fprintf(stderr, "jw_pw: main loop failed: %s\n", strerror(-err));
	/* Destroying the loop destroys its sources too. */
	pw_main_loop_destroy(main_loop);
	pw_deinit();
	return err < 0 ? 1 : 0;
}
