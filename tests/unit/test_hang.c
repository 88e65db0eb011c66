// SPDX-License-Identifier: GPL-2.0-only
/* A task still running, as the hang event reports it: when it is due, and its record so far. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/hang.h"

#define MS 1000000ULL

static struct jw_task_state running(void)
{
	struct jw_task_state st;

	memset(&st, 0, sizeof(st));
	st.seq = 41;
	st.start_ns = 1000 * MS;
	st.depth = 1;
	st.pid = 7;
	st.probe_id = 2;
	return st;
}

static void test_due(void **state)
{
	struct jw_task_state st = running();

	(void)state;
	assert_false(jw_hang_due(&st, 6999 * MS, 6000 * MS, 0));
	assert_true(jw_hang_due(&st, 7000 * MS, 6000 * MS, 0));
	/* Once per task: reported carries seq + 1. */
	assert_false(jw_hang_due(&st, 9000 * MS, 6000 * MS, 42));
	assert_true(jw_hang_due(&st, 9000 * MS, 6000 * MS, 41));
	/* No task open, or a clock read before its start: nothing. */
	st.depth = 0;
	assert_false(jw_hang_due(&st, 9000 * MS, 6000 * MS, 0));
	st = running();
	assert_false(jw_hang_due(&st, 500 * MS, 6000 * MS, 0));
}

/* On the CPU: wall so far, the times the kernel counted, the longest block it saw. */
static void test_record_on_cpu(void **state)
{
	struct jw_task_state st = running();
	struct jw_task_rec rec;

	(void)state;
	st.runq_ns = 5 * MS;
	st.blocked_ns = 300 * MS;
	st.longest_ns = 200 * MS;
	st.longest_wchan = 0xffffffff81000000ULL;
	st.longest_waker.tid = 99;
	st.longest_waker.n_ips = 500;	/* garbage from a torn read: bounded */
	jw_hang_record(&st, 8, 7000 * MS, &rec);
	assert_int_equal(rec.hdr.type, JW_REC_TASK);
	assert_true(rec.hdr.flags & JW_TASK_HANG);
	assert_int_equal(rec.hdr.pid, 7);
	assert_int_equal(rec.hdr.tid, 8);
	assert_int_equal(rec.seq, 41);
	assert_int_equal(rec.end_ns - rec.start_ns, 6000 * MS);
	assert_int_equal(rec.runq_ns, 5 * MS);
	assert_int_equal(rec.blocked_ns, 300 * MS);
	assert_int_equal(rec.longest_block_ns, 200 * MS);
	assert_int_equal(rec.waker_tid, 99);
	assert_int_equal(rec.n_waker_ips, JW_MAX_WAKER_FRAMES);
	assert_int_equal(rec.probe_id, 2);
}

/* Asleep since 1.5 s in: that stretch is blocked (and IO) time and the longest block, unwoken. */
static void test_record_blocked_now(void **state)
{
	struct jw_task_state st = running();
	struct jw_task_rec rec;

	(void)state;
	st.blocked_ns = 100 * MS;
	st.longest_ns = 100 * MS;
	st.longest_waker.tid = 99;
	st.off_ns = 2500 * MS;
	st.off_state = JW_OFF_IO;
	st.block_wchan = 0xffffffff82000000ULL;
	jw_hang_record(&st, 7, 7000 * MS, &rec);
	assert_int_equal(rec.blocked_ns, 4600 * MS);
	assert_int_equal(rec.io_ns, 4500 * MS);
	assert_int_equal(rec.runq_ns, 0);
	assert_int_equal(rec.longest_block_ns, 4500 * MS);
	assert_int_equal(rec.wchan_ip, 0xffffffff82000000ULL);
	assert_int_equal(rec.waker_tid, 0);

	/* Waiting for a CPU: run queue time, not a block. */
	st.off_state = JW_OFF_RUNQ;
	jw_hang_record(&st, 7, 7000 * MS, &rec);
	assert_int_equal(rec.runq_ns, 4500 * MS);
	assert_int_equal(rec.blocked_ns, 100 * MS);
	assert_int_equal(rec.longest_block_ns, 100 * MS);
}

/* The dispatch under the waits still running names the task when it is the longest. */
static void test_record_handler_in_progress(void **state)
{
	struct jw_task_state st = running();
	struct jw_task_rec rec;

	(void)state;
	st.inner_probe = 3;
	st.inner_ns = 50 * MS;
	st.handler_addr = 0x1000;
	st.cur_probe = 3;
	st.cur_start = 1100 * MS;
	st.cur_handler = 0x2000;
	jw_hang_record(&st, 7, 7000 * MS, &rec);
	assert_int_equal(rec.handler_addr, 0x2000);
	assert_int_equal(rec.inner_ns, 5900 * MS);
	st.cur_start = 6990 * MS;
	jw_hang_record(&st, 7, 7000 * MS, &rec);
	assert_int_equal(rec.handler_addr, 0x1000);
	assert_int_equal(rec.inner_ns, 50 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_record_on_cpu),
		cmocka_unit_test(test_record_blocked_now),
		cmocka_unit_test(test_record_handler_in_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
