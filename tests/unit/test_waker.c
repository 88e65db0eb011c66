// SPDX-License-Identifier: GPL-2.0-only
/* What ended a task's longest block (waker.h): the event's waker and the waker stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/waker.h"

/* A kernel: each function 0x100 bytes from 0x1000 on. */
static const char *const kernel[] = { "bpf_trace_run2", "__traceiter_sched_wakeup",
				      "try_to_wake_up", "hrtimer_wakeup", "__hrtimer_run_queues",
				      "pipe_write", "vfs_write", "handle_softirqs",
				      "__wake_up_common" };
#define N_KERNEL (sizeof(kernel) / sizeof(kernel[0]))

static uint64_t at(const char *name)
{
	size_t i;

	for (i = 0; i < N_KERNEL && strcmp(kernel[i], name); i++)
		;
	assert_true(i < N_KERNEL);
	return 0x1000 + 0x100 * i + 0x10;
}

static int setup(void **state)
{
	uint64_t addrs[N_KERNEL];
	size_t i;

	for (i = 0; i < N_KERNEL; i++)
		addrs[i] = 0x1000 + 0x100 * i;
	*state = jw_ksyms__from_list(addrs, kernel, N_KERNEL);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	jw_ksyms__free(*state);
	return 0;
}

/* A task woken from the kernel stack @names (leaf first) by @comm:@tid. */
static struct jw_task_rec woken(const char *comm, uint32_t tid, const char *const *names)
{
	struct jw_task_rec t = { .waker_flags = JW_WAKER_KNOWN, .waker_tid = tid };

	uint32_t i;

	memcpy(t.waker_comm, comm, strnlen(comm, sizeof(t.waker_comm)));
	for (i = 0; names[i]; i++)
		t.waker_ips[i] = at(names[i]);
	t.n_waker_ips = i;
	return t;
}

/* A thread's write woke it: "name:tid", and the stack without the tracepoint's frames. */
static void test_thread(void **state)
{
	static const char *const s[] = { "bpf_trace_run2", "__traceiter_sched_wakeup",
					 "try_to_wake_up", "__wake_up_common", "pipe_write",
					 "vfs_write", NULL };
	struct jw_task_rec t = woken("writer-thread-1", 4242, s);
	struct jw_buf b;
	char buf[64];

	jw_buf_init(&b);
	assert_string_equal(jw_waker_describe(*state, &t, buf, sizeof(buf)),
			    "writer-thread-1:4242");
	jw_waker_stack(*state, &t, &b);
	assert_int_equal(b.err, 0);
	assert_string_equal(b.data, "try_to_wake_up<-__wake_up_common<-pipe_write<-vfs_write");
	jw_buf_free(&b);
}

/* A timer's expiry ends the block: "timer", whoever's context it ran in. */
static void test_timer(void **state)
{
	static const char *const s[] = { "try_to_wake_up", "hrtimer_wakeup",
					 "__hrtimer_run_queues", NULL };
	struct jw_task_rec t = woken("busy", 77, s);
	char buf[64];

	assert_string_equal(jw_waker_describe(*state, &t, buf, sizeof(buf)), "timer");
}

/* An interrupt's softirq, or the idle task (tid 0): "irq". */
static void test_irq(void **state)
{
	static const char *const softirq[] = { "try_to_wake_up", "handle_softirqs", NULL };
	static const char *const plain[] = { "try_to_wake_up", NULL };
	struct jw_task_rec t = woken("ksoftirqd/0", 15, softirq);
	char buf[64];

	assert_string_equal(jw_waker_describe(*state, &t, buf, sizeof(buf)), "irq");
	t = woken("swapper/1", 0, plain);
	assert_string_equal(jw_waker_describe(*state, &t, buf, sizeof(buf)), "irq");
	/* With no kernel symbols, only the idle task is told apart. */
	t = woken("swapper/1", 0, softirq);
	assert_string_equal(jw_waker_describe(NULL, &t, buf, sizeof(buf)), "irq");
	t = woken("ksoftirqd/0", 15, softirq);
	assert_string_equal(jw_waker_describe(NULL, &t, buf, sizeof(buf)), "ksoftirqd/0:15");
}

/* Never slept: no waker, no stack; a full 16-byte name is cut cleanly; a small buffer too. */
static void test_none_and_bounds(void **state)
{
	static const char *const s[] = { "try_to_wake_up", NULL };
	struct jw_task_rec t = { 0 };
	struct jw_buf b;
	char buf[64], tiny[8];

	jw_buf_init(&b);
	assert_null(jw_waker_describe(*state, &t, buf, sizeof(buf)));
	t = woken("0123456789abcdef", 9, s);
	assert_string_equal(jw_waker_describe(*state, &t, buf, sizeof(buf)),
			    "0123456789abcdef:9");
	assert_string_equal(jw_waker_describe(*state, &t, tiny, sizeof(tiny)), "0123456");
	/* A count past the array is bounded by it. */
	t.n_waker_ips = 1000;
	jw_waker_stack(*state, &t, &b);
	assert_int_equal(b.err, 0);
	jw_buf_free(&b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_thread),
		T(test_timer),
		T(test_irq),
		T(test_none_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
