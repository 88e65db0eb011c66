// SPDX-License-Identifier: GPL-2.0-only
/*
 * A libev loop for the integration tests: every --every ms a repeating ev_timer, on_slow(), spins
 * in busy_work() for --ms, then writes one byte to a pipe whose read end an ev_io watcher,
 * on_pipe(), reads (so an EV_READ callback runs too); it quits after --count tasks when given.
 * With --light MS a second ev_timer, on_tick(), runs every MS ms and returns at once. It prints
 * what it measured itself, like jw_glib: "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC)
 * per slow task, "tick <n> <ns>" per light tick and "io <n> <ns>" per on_pipe() run, <ns> being
 * when the callback ran.
 */
#include <ev.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "busy.h"

static struct timer_args args;
static unsigned int n, ticks, ios;
static int pipe_fds[2];

__attribute__((noinline)) void on_slow(struct ev_loop *loop, ev_timer *w, int revents)
{
	unsigned long long begin = now_ns();
	char byte = 1;

	(void)w;
	(void)revents;
	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (write(pipe_fds[1], &byte, 1) != 1)
		perror("jw_ev: cannot write to the pipe");
	if (args.count && n >= args.count)
		ev_break(loop, EVBREAK_ALL);
}

__attribute__((noinline)) void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	printf("tick %u %llu\n", ++ticks, now_ns());
}

__attribute__((noinline)) void on_pipe(struct ev_loop *loop, ev_io *w, int revents)
{
	char byte;

	(void)loop;
	(void)revents;
	if (read(w->fd, &byte, 1) == 1)
		printf("io %u %llu\n", ++ios, now_ns());
}

int main(int argc, char **argv)
{
	struct ev_loop *loop;
	ev_timer slow, tick;
	ev_io pipe_in;

	args = parse_timer_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipe_fds)) {
		perror("jw_ev: cannot create a pipe");
		return 1;
	}
	loop = ev_default_loop(0);
	if (!loop) {
		fprintf(stderr, "jw_ev: cannot create the default loop\n");
		return 1;
	}
	ev_timer_init(&slow, on_slow, args.every / 1000.0, args.every / 1000.0);
	ev_timer_start(loop, &slow);
	if (args.light) {
		ev_timer_init(&tick, on_tick, args.light / 1000.0, args.light / 1000.0);
		ev_timer_start(loop, &tick);
	}
	ev_io_init(&pipe_in, on_pipe, pipe_fds[0], EV_READ);
	ev_io_start(loop, &pipe_in);
	ev_run(loop, 0);
	ev_loop_destroy(loop);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	return 0;
}
