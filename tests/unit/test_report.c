// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reporter through its seams: a task record and its samples in, the policy's verdict, the
 * event line on its stream and in events.jsonl, the stack log in the log directory. No kernel:
 * the process has no symbolizer (frames by address), the kernel frames come from a made-up
 * symbol table.
 */
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

#include "report/report.h"

#define MS 1000000ULL
#define BOOT (100 * 1000 * MS)	/* the tasks run 100 s into the process's life */

struct fixture {
	char dir[64];
	struct jw_params params;
	struct jw_policy *policy;
	struct jw_logdir *logdir;
	struct jw_stacks *stacks;
	struct jw_ksyms *ks;
	struct jw_reporter *r;
	struct jw_clocks clocks;
	FILE *out;
	char *out_text;
	size_t out_len;
	struct jw_proc proc;
};

static int setup(void **state)
{
	static const uint64_t addrs[] = { 0xffff1000, 0xffff2000 };
	static const char *const names[] = { "do_sys_poll", "schedule" };
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[256];

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/jw-test-report-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	jw_params_defaults(&fx->params);
	fx->params.v[JW_P_LOG_TYPE] = 1;	/* stack logs, no traces */
	fx->params.v[JW_P_THRESHOLD_MS] = 200;
	fx->params.v[JW_P_SAMPLE_COUNT] = 4;
	fx->policy = jw_policy__new(&fx->params, true, false);
	fx->logdir = jw_logdir__open(fx->dir, 1 << 20, err, sizeof(err));
	fx->ks = jw_ksyms__from_list(addrs, names, 2);
	fx->stacks = jw_stacks__new(fx->ks);
	fx->out = open_memstream(&fx->out_text, &fx->out_len);
	if (!fx->policy || !fx->logdir || !fx->ks || !fx->stacks || !fx->out)
		return -1;
	fx->r = jw_reporter__new(&(struct jw_reporter_opts){
		.params = &fx->params,
		.format = JW_FORMAT_TREE,
		.policy = fx->policy,
		.logdir = fx->logdir,
		.ksyms = fx->ks,
		.stacks = fx->stacks,
		.out = fx->out,
		.clocks = &fx->clocks,
	});
	if (!fx->r)
		return -1;
	fx->proc.target.pid = fx->proc.target.tid = 4242;
	fx->proc.target.uid = 1000;
	snprintf(fx->proc.target.comm, sizeof(fx->proc.target.comm), "jw_target");
	snprintf(fx->proc.target.exe, sizeof(fx->proc.target.exe), "/usr/bin/jw_target");
	fx->proc.handlers[0] = "dispatch";
	fx->proc.loop = "probe";
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_reporter__free(fx->r);
	jw_stacks__free(fx->stacks);
	jw_ksyms__free(fx->ks);
	jw_logdir__free(fx->logdir);
	jw_policy__free(fx->policy);
	if (fx->out)
		fclose(fx->out);
	free(fx->out_text);
	tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

static struct jw_task_rec task(uint64_t seq, uint64_t wall_ms, uint64_t blocked_ms)
{
	struct jw_task_rec t = {
		.hdr = { .type = JW_REC_TASK, .size = sizeof(t), .pid = 4242, .tid = 4242 },
		.seq = seq,
		.start_ns = BOOT + seq * 1000 * MS,
		.probe_id = 0,
	};

	t.end_ns = t.start_ns + wall_ms * MS;
	t.hdr.ts_ns = t.end_ns;
	t.blocked_ns = blocked_ms * MS;
	return t;
}

/* An on-CPU sample whose frame-pointer stack is @user (leaf first). */
static struct jw_sample_rec *sample(uint64_t seq, const uint64_t *user, size_t n)
{
	struct jw_sample_rec *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->hdr.type = JW_REC_SAMPLE;
	s->hdr.size = sizeof(*s);
	s->hdr.pid = s->hdr.tid = 4242;
	s->seq = seq;
	s->mode = JW_UNWIND_FP;
	s->kind = JW_SAMPLE_ONCPU;
	s->weight = 1;
	s->n_user = n;
	memcpy(s->user_ips, user, n * sizeof(*user));
	return s;
}

/* The whole text of the file of the log directory whose name begins with @prefix. */
static char *read_log(const struct fixture *fx, const char *prefix)
{
	char *text = tmpdir_read(fx->dir, prefix, "");

	assert_non_null(text);
	return text;
}

/* A slow task: its event line (stdout and events.jsonl alike) and its stack log. */
static void test_slow_task(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t busy[] = { 0x401100, 0x401200, 0x401300 };
	static const uint64_t idle[] = { 0x401400, 0x401300 };
	struct jw_task_rec t = task(1, 300, 0);
	void *samples[3] = { sample(1, busy, 3), sample(1, busy, 3), sample(1, idle, 2) };
	char *events, *log;

	assert_int_equal(jw_reporter__task(fx->r, &fx->proc, &t, samples, 3), 0);
	fflush(fx->out);
	assert_non_null(strstr(fx->out_text, "\"event\":\"MAIN_THREAD_JANK\""));
	assert_non_null(strstr(fx->out_text, "\"handler\":\"dispatch\""));
	assert_non_null(strstr(fx->out_text, "\"pid\":4242"));
	assert_non_null(strstr(fx->out_text, "\"cause\":\"cpu\""));
	assert_int_equal(jw_reporter__counts(fx->r)->janks, 1);
	assert_int_equal(jw_reporter__counts(fx->r)->stack_logs, 1);
	events = read_log(fx, "events.jsonl");
	assert_string_equal(events, fx->out_text);
	/* The tree, frames by address: the busy stack in two samples of three, the other in one. */
	log = read_log(fx, "stack-");
	assert_non_null(strstr(log, "wall_ms: 300.000\n"));
	assert_non_null(strstr(log, "heaviest_stack: 0x401100<-0x401200<-0x401300\n"));
	assert_non_null(strstr(log, "    3 #01 pc 00401300 [unknown]\n"));
	assert_non_null(strstr(log, "            2 #03 pc 00401100 [unknown]\n"));
	assert_non_null(strstr(log, "        1 #02 pc 00401400 [unknown]\n"));
	free(events);
	free(log);
	free(samples[0]);
	free(samples[1]);
	free(samples[2]);
}

/* Below the threshold: nothing written, nothing counted. */
static void test_fast_task(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_rec t = task(1, 50, 0);

	assert_int_equal(jw_reporter__task(fx->r, &fx->proc, &t, NULL, 0), 0);
	fflush(fx->out);
	assert_int_equal(fx->out_len, 0);
	assert_int_equal(jw_reporter__counts(fx->r)->janks, 0);
}

/* The handler a preset's probe read from the target names the event, made printable. */
static void test_handler_from_target(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_rec t = task(1, 300, 250);

	fx->proc.handlers[1] = "_PyEval_EvalFrameDefault";
	fx->proc.loop = "python";
	fx->proc.handler_addr_is_data = true;
	t.inner_probe = 2;
	t.handler_addr = 0x7f0012345678;	/* a code object: never symbolized */
	memcpy(t.handler_name, "on_tick\x01", 8);
	snprintf(t.handler_file, sizeof(t.handler_file), "app.py");
	t.handler_line = 12;
	assert_int_equal(jw_reporter__task(fx->r, &fx->proc, &t, NULL, 0), 0);
	fflush(fx->out);
	assert_non_null(strstr(fx->out_text, "\"handler\":\"on_tick? app.py:12\""));
	assert_non_null(strstr(fx->out_text, "\"loop\":\"python\""));
	assert_non_null(strstr(fx->out_text, "\"cause\":\"blocked\""));
}

/* A task still running past hang_ms: a MAIN_THREAD_HANG event, not counted as a jank. */
static void test_hang(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_rec t = task(1, fx->params.v[JW_P_HANG_MS] + 500, 0);

	t.hdr.flags |= JW_TASK_HANG;
	assert_int_equal(jw_reporter__hang(fx->r, &fx->proc, &t, NULL, 0), 0);
	fflush(fx->out);
	assert_non_null(strstr(fx->out_text, "\"event\":\"MAIN_THREAD_HANG\""));
	assert_int_equal(jw_reporter__counts(fx->r)->hangs, 1);
	assert_int_equal(jw_reporter__counts(fx->r)->janks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_slow_task, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_task, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handler_from_target, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hang, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
