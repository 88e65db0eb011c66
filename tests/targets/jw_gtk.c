// SPDX-License-Identifier: GPL-2.0-only
/*
 * A GTK 4 window for the integration tests (run on a headless X server): every --every ms a
 * GLib timeout marks the next frame slow and queues a redraw; the frame clock's phase named by
 * --in (paint: the drawing area's draw function; update: a tick callback; layout: the drawing
 * area's resize handler, the window resized to force one) spins in busy_work() for --ms. With
 * --light MS a second timeout queues a plain redraw every MS ms. It quits after --count slow
 * frames when given. Like jw_glib it prints "task <n> busy <begin_ns> <duration_ns>"
 * (CLOCK_MONOTONIC) per slow frame, and "frame <n> <ns>" per frame it drew.
 */
#include <gtk/gtk.h>
#include <stdio.h>

#include "busy.h"

enum phase { IN_PAINT, IN_UPDATE, IN_LAYOUT };

static struct timer_args args;
static enum phase in = IN_PAINT;
static unsigned int n, frames;
static gboolean slow, done;
static GtkWidget *window, *area;

static void spin(void)
{
	unsigned long long begin = now_ns();

	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	slow = FALSE;
	if (args.count && n >= args.count)
		done = TRUE;
}

__attribute__((noinline)) static void draw_catalog(GtkDrawingArea *a, cairo_t *cr, int w, int h,
						    gpointer data)
{
	(void)a;
	(void)data;
	cairo_set_source_rgb(cr, 0.2, 0.4, n % 2 ? 0.6 : 0.8);
	cairo_rectangle(cr, 0, 0, w, h);
	cairo_fill(cr);
	printf("frame %u %llu\n", ++frames, now_ns());
	if (slow && in == IN_PAINT)
		spin();
}

__attribute__((noinline)) static gboolean on_frame_tick(GtkWidget *w, GdkFrameClock *clock,
							 gpointer data)
{
	(void)w;
	(void)clock;
	(void)data;
	if (slow && in == IN_UPDATE)
		spin();
	return G_SOURCE_CONTINUE;
}

__attribute__((noinline)) static void on_resize(GtkDrawingArea *a, int w, int h, gpointer data)
{
	(void)a;
	(void)w;
	(void)h;
	(void)data;
	if (slow && in == IN_LAYOUT)
		spin();
}

static gboolean mark_slow(gpointer data)
{
	static int grow;

	(void)data;
	slow = TRUE;
	if (in == IN_LAYOUT) /* a new size: the next frame lays the area out again */
		gtk_widget_set_size_request(area, 200 + (grow ^= 1), 150);
	gtk_widget_queue_draw(area);
	return G_SOURCE_CONTINUE;
}

static gboolean light(gpointer data)
{
	(void)data;
	gtk_widget_queue_draw(area);
	return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
	int i;

	args = parse_timer_args(argc, argv);
	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--in"))
			in = !strcmp(argv[i + 1], "update") ? IN_UPDATE :
			     !strcmp(argv[i + 1], "layout") ? IN_LAYOUT : IN_PAINT;
	setvbuf(stdout, NULL, _IOLBF, 0);
	gtk_init();
	window = gtk_window_new();
	area = gtk_drawing_area_new();
	gtk_widget_set_size_request(area, 200, 150);
	gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw_catalog, NULL, NULL);
	g_signal_connect(area, "resize", G_CALLBACK(on_resize), NULL);
	gtk_widget_add_tick_callback(area, on_frame_tick, NULL, NULL);
	gtk_window_set_child(GTK_WINDOW(window), area);
	gtk_window_present(GTK_WINDOW(window));
	g_timeout_add(args.every, mark_slow, NULL);
	if (args.light)
		g_timeout_add(args.light, light, NULL);
	while (!done && g_list_model_get_n_items(gtk_window_get_toplevels()) > 0)
		g_main_context_iteration(NULL, TRUE);
	return 0;
}
