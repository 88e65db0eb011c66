// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Wayland server and its client for the integration tests, one binary with two roles.
 *
 * jw_wl --server [--socket NAME] [--ms MS] [--count N]: a libwayland-server display on the socket
 * NAME (default "jw-wayland-0") in $XDG_RUNTIME_DIR (when unset, a mkdtemp() directory, printed
 * on stderr), with a wl_compositor global (version 4). A surface's commit request, handled by
 * surface_commit(), is the slow task when the surface was damaged (damage or damage_buffer)
 * since its last commit: it spins in busy_work() for --ms and prints
 * "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC), like jw_glib; a plain commit is a
 * light tick, "tick <n> <ns>", <ns> being when it ran. Every other request does nothing. It
 * quits after --count tasks when given, or on SIGTERM or SIGINT.
 *
 * jw_wl --client [--socket NAME] [--every MS] [--light MS] [--count N]: connects to the server,
 * binds wl_compositor, creates a surface, then commits it every --light ms and damages and
 * commits it every --every ms, flushing after each and sleeping between; it stops after --count
 * damaged commits when given, on SIGTERM or SIGINT, or when the server goes away. It prints
 * nothing on stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include <wayland-server.h>

#include "busy.h"

#define DEFAULT_SOCKET	   "jw-wayland-0"
#define COMPOSITOR_VERSION 4

static struct timer_args args;

/* ---- server ---- */

static struct wl_display *server_display;
static unsigned int n, ticks;

/* A surface's state: whether damage was requested since its last commit. */
struct surface {
	bool damaged;
};

static void surface_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

static void surface_attach(struct wl_client *client, struct wl_resource *resource,
			   struct wl_resource *buffer, int32_t x, int32_t y)
{
	(void)client;
	(void)resource;
	(void)buffer;
	(void)x;
	(void)y;
}

static void surface_damage(struct wl_client *client, struct wl_resource *resource, int32_t x,
			   int32_t y, int32_t width, int32_t height)
{
	struct surface *surface = wl_resource_get_user_data(resource);

	(void)client;
	(void)x;
	(void)y;
	(void)width;
	(void)height;
	surface->damaged = true;
}

/* The callback's id is the client's to use: create it and say "done" at once. */
static void surface_frame(struct wl_client *client, struct wl_resource *resource, uint32_t callback)
{
	struct wl_resource *done;

	done = wl_resource_create(client, &wl_callback_interface, 1, callback);
	if (!done) {
		wl_resource_post_no_memory(resource);
		return;
	}
	wl_callback_send_done(done, 0);
	wl_resource_destroy(done);
}

static void surface_set_region(struct wl_client *client, struct wl_resource *resource,
			       struct wl_resource *region)
{
	(void)client;
	(void)resource;
	(void)region;
}

__attribute__((noinline)) void surface_commit(struct wl_client *client,
					      struct wl_resource *resource)
{
	struct surface *surface = wl_resource_get_user_data(resource);
	unsigned long long begin = now_ns();

	(void)client;
	if (!surface->damaged) {
		printf("tick %u %llu\n", ++ticks, begin);
		return;
	}
	surface->damaged = false;
	busy_work(args.ms);
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (args.count && n >= args.count)
		wl_display_terminate(server_display);
}

static void surface_set_int(struct wl_client *client, struct wl_resource *resource, int32_t value)
{
	(void)client;
	(void)resource;
	(void)value;
}

static void surface_offset(struct wl_client *client, struct wl_resource *resource, int32_t x,
			   int32_t y)
{
	(void)client;
	(void)resource;
	(void)x;
	(void)y;
}

static const struct wl_surface_interface surface_impl = {
	.destroy = surface_destroy,
	.attach = surface_attach,
	.damage = surface_damage,
	.frame = surface_frame,
	.set_opaque_region = surface_set_region,
	.set_input_region = surface_set_region,
	.commit = surface_commit,
	.set_buffer_transform = surface_set_int,
	.set_buffer_scale = surface_set_int,
	.damage_buffer = surface_damage,
	.offset = surface_offset,
};

static void surface_free(struct wl_resource *resource)
{
	free(wl_resource_get_user_data(resource));
}

static void region_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

static void region_rect(struct wl_client *client, struct wl_resource *resource, int32_t x,
			int32_t y, int32_t width, int32_t height)
{
	(void)client;
	(void)resource;
	(void)x;
	(void)y;
	(void)width;
	(void)height;
}

static const struct wl_region_interface region_impl = {
	.destroy = region_destroy,
	.add = region_rect,
	.subtract = region_rect,
};

static void compositor_create_surface(struct wl_client *client, struct wl_resource *resource,
				      uint32_t id)
{
	struct surface *surface = calloc(1, sizeof(*surface));
	struct wl_resource *res;

	if (!surface)
		goto err_no_memory;
	res = wl_resource_create(client, &wl_surface_interface, wl_resource_get_version(resource),
				 id);
	if (!res)
		goto err_free_surface;
	wl_resource_set_implementation(res, &surface_impl, surface, surface_free);
	return;

err_free_surface:
	free(surface);
err_no_memory:
	wl_resource_post_no_memory(resource);
}

static void compositor_create_region(struct wl_client *client, struct wl_resource *resource,
				     uint32_t id)
{
	struct wl_resource *res;

	res = wl_resource_create(client, &wl_region_interface, 1, id);
	if (!res) {
		wl_resource_post_no_memory(resource);
		return;
	}
	wl_resource_set_implementation(res, &region_impl, NULL, NULL);
}

static const struct wl_compositor_interface compositor_impl = {
	.create_surface = compositor_create_surface,
	.create_region = compositor_create_region,
};

static void compositor_bind(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *res;

	(void)data;
	res = wl_resource_create(client, &wl_compositor_interface, version, id);
	if (!res) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(res, &compositor_impl, NULL, NULL);
}

static int on_signal(int signal_number, void *data)
{
	(void)signal_number;
	wl_display_terminate(data);
	return 0;
}

static int run_server(const char *socket_name)
{
	static char tmpdir[] = "/tmp/jw-wayland-XXXXXX";
	struct wl_event_source *sigterm = NULL, *sigint = NULL;
	bool made_dir = false;
	int err = 1;

	if (!getenv("XDG_RUNTIME_DIR")) {
		if (!mkdtemp(tmpdir)) {
			fprintf(stderr, "jw_wl: cannot create %s: %s\n", tmpdir, strerror(errno));
			return 1;
		}
		made_dir = true;
		setenv("XDG_RUNTIME_DIR", tmpdir, 1);
		fprintf(stderr, "jw_wl: XDG_RUNTIME_DIR=%s\n", tmpdir);
	}
	server_display = wl_display_create();
	if (!server_display) {
		fprintf(stderr, "jw_wl: cannot create a display\n");
		goto err_rmdir;
	}
	if (wl_display_add_socket(server_display, socket_name)) {
		fprintf(stderr, "jw_wl: cannot add socket %s/%s: %s\n", getenv("XDG_RUNTIME_DIR"),
			socket_name, strerror(errno));
		goto err_destroy_display;
	}
	if (!wl_global_create(server_display, &wl_compositor_interface, COMPOSITOR_VERSION, NULL,
			      compositor_bind)) {
		fprintf(stderr, "jw_wl: cannot create the wl_compositor global\n");
		goto err_destroy_display;
	}
	/* Signal sources block the signals and read them from a signalfd in the loop. */
	sigterm = wl_event_loop_add_signal(wl_display_get_event_loop(server_display), SIGTERM,
					   on_signal, server_display);
	sigint = wl_event_loop_add_signal(wl_display_get_event_loop(server_display), SIGINT,
					  on_signal, server_display);
	if (!sigterm || !sigint) {
		fprintf(stderr, "jw_wl: cannot add the signal sources\n");
		goto err_remove_signals;
	}
	wl_display_run(server_display);
	err = 0;

err_remove_signals:
	if (sigint)
		wl_event_source_remove(sigint);
	if (sigterm)
		wl_event_source_remove(sigterm);
	wl_display_destroy_clients(server_display);
err_destroy_display:
	wl_display_destroy(server_display);
err_rmdir:
	if (made_dir)
		rmdir(tmpdir);
	return err;
}

/* ---- client ---- */

static volatile sig_atomic_t stop;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop = 1;
}

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
			    const char *interface, uint32_t version)
{
	struct wl_compositor **compositor = data;

	if (strcmp(interface, wl_compositor_interface.name) || *compositor)
		return;
	if (version > COMPOSITOR_VERSION)
		version = COMPOSITOR_VERSION;
	*compositor = wl_registry_bind(registry, name, &wl_compositor_interface, version);
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
	(void)data;
	(void)registry;
	(void)name;
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

/*
 * Commits @surface every --light ms and damages and commits it every --every ms until told to
 * stop. Returns 0 when stopped or when the server went away, -errno on another failure.
 */
static int commit_loop(struct wl_display *display, struct wl_surface *surface)
{
	unsigned long long now = now_ns(), next_light, next_every, next;
	unsigned long long light = args.light * 1000000ULL, every = args.every * 1000000ULL;
	unsigned int damaged = 0;
	struct timespec ts;

	next_light = now + light;
	next_every = now + every;
	while (!stop) {
		now = now_ns();
		if (light && now >= next_light) {
			wl_surface_commit(surface);
			while (next_light <= now)
				next_light += light;
		}
		if (now >= next_every) {
			wl_surface_damage(surface, 0, 0, 1, 1);
			wl_surface_commit(surface);
			while (next_every <= now)
				next_every += every;
			damaged++;
		}
		if (wl_display_flush(display) < 0 && errno != EAGAIN) {
			if (errno == EPIPE || errno == ECONNRESET)
				return 0; /* the server went away */
			return -errno;
		}
		if (args.count && damaged >= args.count)
			break;
		next = light && next_light < next_every ? next_light : next_every;
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		/* EINTR: a signal, which the loop's condition sees. */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return 0;
}

static int run_client(const char *socket_name)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct wl_compositor *compositor = NULL;
	struct wl_registry *registry;
	struct wl_display *display;
	struct wl_surface *surface;
	int err = 1;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	display = wl_display_connect(socket_name);
	if (!display) {
		fprintf(stderr, "jw_wl: cannot connect to %s: %s\n", socket_name, strerror(errno));
		return 1;
	}
	registry = wl_display_get_registry(display);
	if (!registry) {
		fprintf(stderr, "jw_wl: cannot get the registry of %s\n", socket_name);
		goto err_disconnect;
	}
	wl_registry_add_listener(registry, &registry_listener, &compositor);
	if (wl_display_roundtrip(display) < 0) {
		fprintf(stderr, "jw_wl: roundtrip to %s failed: %s\n", socket_name,
			strerror(errno));
		goto err_destroy_registry;
	}
	if (!compositor) {
		fprintf(stderr, "jw_wl: %s offers no wl_compositor\n", socket_name);
		goto err_destroy_registry;
	}
	surface = wl_compositor_create_surface(compositor);
	if (!surface) {
		fprintf(stderr, "jw_wl: cannot create a surface on %s\n", socket_name);
		goto err_destroy_compositor;
	}
	err = commit_loop(display, surface);
	if (err)
		fprintf(stderr, "jw_wl: cannot send to %s: %s\n", socket_name, strerror(-err));
	err = err ? 1 : 0;
	wl_surface_destroy(surface);
	wl_display_flush(display);
err_destroy_compositor:
	wl_compositor_destroy(compositor);
err_destroy_registry:
	wl_registry_destroy(registry);
err_disconnect:
	wl_display_disconnect(display);
	return err;
}

/*
 * Takes the role and --socket out of argv and leaves the timer options, in order, for
 * parse_timer_args(), which reads its arguments in pairs.
 */
int main(int argc, char **argv)
{
	const char *socket_name = DEFAULT_SOCKET;
	int i, timer_argc = 1, role = 0;
	char **timer_argv;

	timer_argv = calloc(argc + 1, sizeof(*timer_argv));
	if (!timer_argv)
		return 1;
	timer_argv[0] = argv[0];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--server"))
			role = 's';
		else if (!strcmp(argv[i], "--client"))
			role = 'c';
		else if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			socket_name = argv[++i];
		else
			timer_argv[timer_argc++] = argv[i];
	}
	args = parse_timer_args(timer_argc, timer_argv);
	free(timer_argv);
	if (!role || !args.every) {
		fprintf(stderr, "usage: jw_wl --server [--socket NAME] [--ms MS] [--count N]\n"
				"       jw_wl --client [--socket NAME] [--every MS] [--light MS] "
				"[--count N]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return role == 's' ? run_server(socket_name) : run_client(socket_name);
}
