// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracer through its seams: the kernel's trace events switched through a callback (recorded
 * here), scheduler records and task slices fed as the ring buffer would, a window opened at the
 * crossing, kept by the verdict, closed by the clock, and its two files written; a window whose
 * task was not kept leaves nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "report/trace.h"

#define MS 1000000ULL
#define T0 (50 * 1000 * MS)
#define PID 4242

struct fixture {
	char dir[64];
	struct jw_logdir *logdir;
	struct jw_stacks *stacks;
	struct jw_tracer *t;
	struct jw_clocks clocks;
	struct jw_proc proc;
	int on_calls, off_calls;	/* what the tracer asked of the kernel, and it did */
	int tried_on, tried_off;	/* what it asked, done or refused */
	pid_t last_pid;
	bool fail;			/* the kernel refuses */
};

static int kernel_events(void *ctx, pid_t pid, bool on)
{
	struct fixture *fx = ctx;

	if (on)
		fx->tried_on++;
	else
		fx->tried_off++;
	if (fx->fail)
		return -EPERM;
	fx->last_pid = pid;
	if (on)
		fx->on_calls++;
	else
		fx->off_calls++;
	return 0;
}

static int setup_with(void **state, uint64_t flight_ns)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[256];

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/jw-test-trace-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->logdir = jw_logdir__open(fx->dir, 1 << 20, err, sizeof(err));
	fx->stacks = jw_stacks__new(NULL);
	if (!fx->logdir || !fx->stacks)
		return -1;
	fx->t = jw_tracer__new(&(struct jw_tracer_opts){
		.window_ns = 3000 * MS,
		.flight_ns = flight_ns,
		.logdir = fx->logdir,
		.kernel_events = kernel_events,
		.ctx = fx,
		.stacks = fx->stacks,
		.clocks = &fx->clocks,
	});
	if (!fx->t)
		return -1;
	fx->proc.target.pid = fx->proc.target.tid = PID;
	snprintf(fx->proc.target.comm, sizeof(fx->proc.target.comm), "jw_glib");
	fx->proc.handlers[0] = "syscall";
	fx->proc.loop = "glib";
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 0);
}

static int setup_flight(void **state)
{
	return setup_with(state, 2000 * MS);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_tracer__free(fx->t);
	jw_stacks__free(fx->stacks);
	jw_logdir__free(fx->logdir);
	tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

static size_t count_files(const struct fixture *fx, const char *suffix)
{
	return tmpdir_count(fx->dir, "", suffix);
}

static char *read_file(const struct fixture *fx, const char *suffix)
{
	char *text = tmpdir_read(fx->dir, "", suffix);

	assert_non_null(text);
	return text;
}

static size_t occurrences(const char *text, const char *what)
{
	size_t n = 0;

	for (; (text = strstr(text, what)); text++)
		n++;
	return n;
}

static struct jw_slice_rec slice(uint64_t seq, uint64_t start, uint64_t end)
{
	return (struct jw_slice_rec){
		.hdr = { .type = JW_REC_SLICE, .size = sizeof(struct jw_slice_rec), .pid = PID,
			 .tid = PID, .ts_ns = end },
		.seq = seq,
		.start_ns = start,
		.probe_id = 0,
	};
}

static struct jw_sched_rec switch_out(uint64_t ts)
{
	struct jw_sched_rec r = {
		.hdr = { .type = JW_REC_SCHED, .size = sizeof(r), .pid = PID, .tid = PID,
			 .ts_ns = ts },
		.kind = JW_SCHED_SWITCH,
		.prio = 120,
		.other_pid = 0,
		.other_tid = 0,
		.other_prio = 120,
	};

	snprintf(r.comm, sizeof(r.comm), "jw_glib");
	snprintf(r.other_comm, sizeof(r.other_comm), "swapper/0");
	return r;
}

static struct jw_task_rec task(uint64_t seq, uint64_t start, uint64_t end)
{
	return (struct jw_task_rec){
		.hdr = { .type = JW_REC_TASK, .size = sizeof(struct jw_task_rec), .pid = PID,
			 .tid = PID, .ts_ns = end },
		.seq = seq,
		.start_ns = start,
		.end_ns = end,
	};
}

/*
 * A task crosses the threshold: the kernel's events go on, the window keeps what comes, the
 * verdict keeps it, and at its close both files are written and the events go off.
 */
static void test_window_kept(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_rec t = task(7, T0, T0 + 700 * MS);
	struct jw_slice_rec light = slice(8, T0 + 800 * MS, T0 + 801 * MS);
	struct jw_sched_rec sw = switch_out(T0 + 600 * MS);
	char paths[2][PATH_MAX];
	char *ftrace;

	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 7, T0, T0 + 450 * MS, NULL, 0), 0);
	assert_int_equal(fx->on_calls, 1);
	assert_int_equal(fx->last_pid, PID);
	jw_tracer__sched(fx->t, &sw);
	assert_int_equal(jw_tracer__keep(fx->t, &fx->proc, &t, "on_tick", NULL, 0, paths), 2);
	assert_non_null(strstr(paths[0], fx->dir));
	jw_tracer__slice(fx->t, &light);
	/* Still open: nothing written yet. */
	jw_tracer__tick(fx->t, T0 + 1000 * MS);
	assert_int_equal(count_files(fx, ".ftrace"), 0);
	jw_tracer__tick(fx->t, T0 + 3500 * MS);
	assert_int_equal(fx->off_calls, 1);
	assert_int_equal(count_files(fx, ".ftrace"), 1);
	assert_int_equal(count_files(fx, ".perf.txt"), 1);
	assert_int_equal(jw_tracer__written(fx->t), 2);
	ftrace = read_file(fx, ".ftrace");
	/* The jank's slice at its true start, named by its event; the light task by what hooks. */
	assert_non_null(strstr(ftrace, "tracing_mark_write: B|4242|H:on_tick\n"));
	assert_non_null(strstr(ftrace, "tracing_mark_write: B|4242|H:syscall\n"));
	assert_non_null(strstr(ftrace, "sched_switch: prev_comm=jw_glib prev_pid=4242"));
	free(ftrace);
}

/* A window whose task the policy did not keep is dropped at its close. */
static void test_window_settled(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 7, T0, T0 + 450 * MS, NULL, 0), 0);
	jw_tracer__settle(fx->t, PID, 7);
	jw_tracer__tick(fx->t, T0 + 3500 * MS);
	assert_int_equal(count_files(fx, ".ftrace"), 0);
	assert_int_equal(jw_tracer__written(fx->t), 0);
	assert_int_equal(fx->off_calls, 1);
}

/* The flight recorder: events kept from the watch on; the window reaches back before it. */
static void test_flight_recorder(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_rec t = task(7, T0, T0 + 700 * MS);
	struct jw_slice_rec early = slice(3, T0 - 1500 * MS, T0 - 1400 * MS);
	struct jw_slice_rec too_early = slice(2, T0 - 5000 * MS, T0 - 4900 * MS);
	char paths[2][PATH_MAX];
	char *ftrace;

	jw_tracer__watch(fx->t, &fx->proc);
	assert_int_equal(fx->on_calls, 1);
	jw_tracer__slice(fx->t, &too_early);
	jw_tracer__slice(fx->t, &early);
	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 7, T0, T0 + 450 * MS, NULL, 0), 0);
	assert_int_equal(jw_tracer__keep(fx->t, &fx->proc, &t, "on_tick", NULL, 0, paths), 2);
	jw_tracer__tick(fx->t, T0 + 3500 * MS);
	ftrace = read_file(fx, ".ftrace");
	assert_non_null(strstr(ftrace, "H:on_tick"));
	/* 1.5 s before the task: inside the 2 s kept; 5 s before: not. */
	assert_int_equal(occurrences(ftrace, "B|4242|H:syscall\n"), 1);
	/* The events stay on: the recorder keeps recording. */
	assert_int_equal(fx->off_calls, 0);
	free(ftrace);
}

/*
 * The kernel refuses the events: the window still opens (asking once); what was never switched
 * on is not switched off when it ends; the next window asks again, and once the kernel agrees
 * its events are switched off at the end.
 */
static void test_kernel_refuses(void **state)
{
	struct fixture *fx = *state;

	fx->fail = true;
	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 7, T0, T0 + 450 * MS, NULL, 0), 0);
	assert_int_equal(fx->tried_on, 1);
	assert_int_equal(fx->on_calls, 0);
	jw_tracer__settle(fx->t, PID, 7);
	jw_tracer__tick(fx->t, T0 + 3500 * MS);
	assert_int_equal(fx->tried_off, 0);
	fx->fail = false;
	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 8, T0 + 4000 * MS,
					 T0 + 4450 * MS, NULL, 0), 0);
	assert_int_equal(fx->tried_on, 2);
	assert_int_equal(fx->on_calls, 1);
	jw_tracer__settle(fx->t, PID, 8);
	jw_tracer__tick(fx->t, T0 + 7500 * MS);
	assert_int_equal(fx->tried_off, 1);
	assert_int_equal(fx->off_calls, 1);
}

/*
 * A reload's flight_recorder_s: turned on, the processes the tracer knows have their events
 * switched on at once; off, switched off (no window is open); the same value again asks nothing.
 */
static void test_set_flight(void **state)
{
	struct fixture *fx = *state;

	/* The tracer knows the process from a window, over since. */
	assert_int_equal(jw_tracer__open(fx->t, &fx->proc, PID, 7, T0, T0 + 450 * MS, NULL, 0), 0);
	jw_tracer__settle(fx->t, PID, 7);
	jw_tracer__tick(fx->t, T0 + 3500 * MS);
	assert_int_equal(fx->on_calls, 1);
	assert_int_equal(fx->off_calls, 1);
	jw_tracer__set_flight(fx->t, 2000 * MS);
	assert_int_equal(fx->on_calls, 2);
	jw_tracer__set_flight(fx->t, 3000 * MS);
	assert_int_equal(fx->tried_on + fx->tried_off, 3);
	jw_tracer__set_flight(fx->t, 0);
	assert_int_equal(fx->off_calls, 2);
	jw_tracer__set_flight(fx->t, 0);
	assert_int_equal(fx->tried_on + fx->tried_off, 4);
	jw_tracer__set_flight(NULL, 0);
}

/* Traces off (log_type 1): a NULL tracer takes every call and keeps nothing. */
static void test_null_tracer(void **state)
{
	struct jw_task_rec t = task(7, T0, T0 + 700 * MS);
	struct jw_proc proc = { .target = { .pid = PID } };
	char paths[2][PATH_MAX];

	(void)state;
	jw_tracer__watch(NULL, &proc);
	assert_int_equal(jw_tracer__keep(NULL, &proc, &t, "x", NULL, 0, paths), 0);
	jw_tracer__tick(NULL, T0);
	jw_tracer__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_window_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flight_recorder, setup_flight, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_flight, setup, teardown),
		cmocka_unit_test(test_null_tracer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
