// SPDX-License-Identifier: GPL-2.0-only
/*
 * The handler sites' target of scripts/bench.sh: a GLib main loop (or, built with JW_BENCH_UV, a
 * libuv loop; JW_BENCH_EV libev's; JW_BENCH_SD sd-event's) whose every iteration dispatches one
 * callback that returns at once: an idle source (an idle handle, an idle watcher; for sd-event,
 * whose loop skips its wait while a source is pending, an always readable eventfd), so the loop
 * polls without sleeping and dispatches again. Like bench_loop.c it prints, once per window,
 *
 *	window <n> <ns_per_callback> <callbacks> <on_cpu_pct>
 *
 * so what a monitor adds to an iteration (the waits' probes, a handler site's two) shows up as
 * added ns per callback. Runs until killed.
 * Usage: jw_bench_glib [WINDOW_MS]   (default 500; jw_bench_uv alike)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(JW_BENCH_UV)
#include <uv.h>
#elif defined(JW_BENCH_EV)
#include <ev.h>
#elif defined(JW_BENCH_SD)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <systemd/sd-event.h>
#else
#include <glib.h>
#endif

#include "window.h"

static struct callback_window win = { .window_ns = 500 * 1000000ULL };

static void count_call(void)
{
	callback_window_count(&win);
}

#if defined(JW_BENCH_EV)
__attribute__((noinline)) void on_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	count_call();
}

static int run(void)
{
	struct ev_loop *loop = ev_default_loop(0);
	ev_idle idle;

	ev_idle_init(&idle, on_idle);
	ev_idle_start(loop, &idle);
	ev_run(loop, 0);
	return 1;
}
#elif defined(JW_BENCH_SD)
__attribute__((noinline)) int on_ready(sd_event_source *s, int fd, uint32_t revents, void *data)
{
	(void)s;
	(void)fd;
	(void)revents;
	(void)data;
	count_call();
	return 0;
}

static int run(void)
{
	int fd = eventfd(1, EFD_CLOEXEC);	/* never read: readable at every wait */
	sd_event *e = NULL;

	if (fd < 0 || sd_event_default(&e) < 0 ||
	    sd_event_add_io(e, NULL, fd, EPOLLIN, on_ready, NULL) < 0)
		return 1;
	return sd_event_loop(e) < 0;
}
#elif defined(JW_BENCH_UV)
__attribute__((noinline)) void on_idle(uv_idle_t *idle)
{
	(void)idle;
	count_call();
}

static int run(void)
{
	uv_async_t wake;
	uv_idle_t idle;

	/* A watcher, so that each iteration polls: libuv skips epoll_wait() with none. */
	uv_async_init(uv_default_loop(), &wake, NULL);
	uv_idle_init(uv_default_loop(), &idle);
	uv_idle_start(&idle, on_idle);
	return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
#else
__attribute__((noinline)) gboolean on_idle(gpointer data)
{
	(void)data;
	count_call();
	return G_SOURCE_CONTINUE;
}

static int run(void)
{
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);

	g_idle_add(on_idle, NULL);
	g_main_loop_run(loop);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	if (!window_from_args(argc, argv, &win.window_ns))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	callback_window_start(&win);
	return run();
}
