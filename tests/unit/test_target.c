// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of target.c: /proc/PID/stat, opening a process and its loop thread, liveness. */
#include "target_fixture.h"

static void test_stat_parse_plain(void **state)
{
	char buf[512], comm[64];
	uint64_t start = 0;

	(void)state;
	stat_line(buf, sizeof(buf), "bash", "567890");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "bash");
	assert_int_equal(start, 567890);
}

/* A real line from a kernel, with every field as the kernel prints it. */
static void test_stat_parse_real_line(void **state)
{
	static const char line[] =
		"1 (systemd) S 0 1 1 0 -1 4194560 61345 3011458 135 1542 153 241 12409 3897 "
		"20 0 1 0 28 171999232 3243 18446744073709551615 1 1 0 0 0 0 671173123 4096 "
		"1260 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	char comm[64];
	uint64_t start = 0;

	(void)state;
	assert_int_equal(jw_proc_stat_parse(line, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "systemd");
	assert_int_equal(start, 28);
}

/* The name runs from the first '(' to the LAST ')': it may hold spaces and parentheses. */
static void test_stat_parse_tricky_names(void **state)
{
	char buf[512], comm[64];
	uint64_t start = 0;

	(void)state;
	assert_int_equal(jw_proc_stat_parse("1234 (a) b)) S 1 5 6 7 8 9 10 11 12 13 14 15 16 17 "
					    "18 19 20 21 777 23\n", comm, sizeof(comm), &start),
			 0);
	assert_string_equal(comm, "a) b)");
	assert_int_equal(start, 777);

	stat_line(buf, sizeof(buf), "Web Content", "42");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "Web Content");
	assert_int_equal(start, 42);

	stat_line(buf, sizeof(buf), "(sd-pam)", "43");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "(sd-pam)");
	assert_int_equal(start, 43);

	/* A name that looks like fields: ") S 1 2 3" must not shift the count. */
	stat_line(buf, sizeof(buf), "x) S 1 2 3 4 5", "44");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "x) S 1 2 3 4 5");
	assert_int_equal(start, 44);

	stat_line(buf, sizeof(buf), "", "45");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "");
	assert_int_equal(start, 45);
}

static void test_stat_parse_field_22(void **state)
{
	char buf[512], comm[64];
	uint64_t start = 0;

	(void)state;
	stat_line(buf, sizeof(buf), "x", "0");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_int_equal(start, 0);
	stat_line(buf, sizeof(buf), "x", "18446744073709551615");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_true(start == UINT64_MAX);
	/* Field 22 is the last one. */
	assert_int_equal(jw_proc_stat_parse("9 (x) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
					    "20 21 99", comm, sizeof(comm), &start), 0);
	assert_int_equal(start, 99);
}

static void test_stat_parse_truncates_comm(void **state)
{
	char buf[512], comm[8];
	uint64_t start = 0;

	(void)state;
	memset(comm, 'Z', sizeof(comm));
	stat_line(buf, sizeof(buf), "abcdefghijklmnop", "46");
	assert_int_equal(jw_proc_stat_parse(buf, comm, 5, &start), 0);
	assert_string_equal(comm, "abcd");
	/* Nothing is written past commlen. */
	assert_int_equal(comm[5], 'Z');
	assert_int_equal(start, 46);

	assert_int_equal(jw_proc_stat_parse(buf, comm, 1, &start), 0);
	assert_string_equal(comm, "");

	/* Exactly commlen - 1 characters fit whole. */
	stat_line(buf, sizeof(buf), "abcdefg", "47");
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, "abcdefg");
}

static void test_stat_parse_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"1234",
		"1234 (bash",
		"1234 bash) S 1",
		"1234 )bash( S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22",
		"1234 (bash) S 4 5 6",
		"1234 (bash) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21",
		"1234 (bash) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 ",
		"1234 (bash) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 x",
		"1234 (bash) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 -3",
	};
	char comm[64];
	uint64_t start = 12345;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (jw_proc_stat_parse(bad[i], comm, sizeof(comm), &start) != -EINVAL)
			fail_msg("not refused: \"%s\"", bad[i]);
		assert_int_equal(start, 12345);
	}
}

static void test_stat_parse_self(void **state)
{
	char buf[4096], comm[64], want[64];
	uint64_t start = 0;

	(void)state;
	read_line("/proc/self/stat", buf, sizeof(buf));
	read_line("/proc/self/comm", want, sizeof(want));
	assert_int_equal(jw_proc_stat_parse(buf, comm, sizeof(comm), &start), 0);
	assert_string_equal(comm, want);
	assert_int_equal(start, start_time_of(getpid()));
	assert_true(start > 0);
}

static void test_open_self(void **state)
{
	struct fixture *fx = *state;
	char exe[PATH_MAX], comm[64];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	read_line("/proc/self/comm", comm, sizeof(comm));

	assert_int_equal(jw_target_open(getpid(), NULL, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->t.pid, getpid());
	assert_int_equal(fx->t.tid, getpid());
	assert_int_equal(fx->t.uid, getuid());
	assert_string_equal(fx->t.exe, exe);
	assert_string_equal(fx->t.comm, comm);
	assert_int_equal(fx->t.start_jiffies, start_time_of(getpid()));
}

static void test_open_missing_pid(void **state)
{
	struct fixture *fx = *state;
	pid_t pids[] = { missing_pid(), INT_MAX };
	char want[64];
	size_t i;

	for (i = 0; i < 2; i++) {
		fx->err[0] = '\0';
		assert_int_equal(jw_target_open(pids[i], NULL, &fx->t, fx->err, sizeof(fx->err)),
				 -ESRCH);
		snprintf(want, sizeof(want), "pid %d: no such process", pids[i]);
		assert_string_equal(fx->err, want);
	}
}

static void test_open_thread_by_tid(void **state)
{
	struct fixture *fx = *state;
	char arg[32];
	pid_t tid;

	tid = start_worker(fx, "jw-by-tid");
	snprintf(arg, sizeof(arg), "%d", tid);
	assert_int_equal(jw_target_open(getpid(), arg, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->t.pid, getpid());
	assert_int_equal(fx->t.tid, tid);
	/* The process's own name, not the thread's. */
	assert_string_not_equal(fx->t.comm, "jw-by-tid");

	/* The main thread's tid is the pid. */
	snprintf(arg, sizeof(arg), "%d", getpid());
	assert_int_equal(jw_target_open(getpid(), arg, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->t.tid, getpid());
}

static void expect_no_such_thread(struct fixture *fx, const char *arg)
{
	char want[128];

	fx->err[0] = '\0';
	assert_int_equal(jw_target_open(getpid(), arg, &fx->t, fx->err, sizeof(fx->err)), -ESRCH);
	snprintf(want, sizeof(want), "--thread %s: no such thread in pid %d", arg, getpid());
	assert_string_equal(fx->err, want);
}

static void test_open_missing_tid(void **state)
{
	struct fixture *fx = *state;
	char arg[32];

	snprintf(arg, sizeof(arg), "%d", missing_pid());
	expect_no_such_thread(fx, arg);
	expect_no_such_thread(fx, "0");
	expect_no_such_thread(fx, "-5");
	/* A thread that exists, but in another process. */
	snprintf(arg, sizeof(arg), "%d", getppid());
	expect_no_such_thread(fx, arg);
}

static void test_open_thread_by_name(void **state)
{
	struct fixture *fx = *state;
	char comm[64];
	pid_t tid;

	tid = start_worker(fx, "jw-worker");
	assert_int_equal(jw_target_open(getpid(), "jw-worker", &fx->t, fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(fx->t.pid, getpid());
	assert_int_equal(fx->t.tid, tid);

	/* The main thread by its name (the process's comm). */
	read_line("/proc/self/comm", comm, sizeof(comm));
	assert_int_equal(jw_target_open(getpid(), comm, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->t.tid, getpid());
}

static void test_open_thread_name_missing(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	assert_int_equal(jw_target_open(getpid(), "no-such-thread", &fx->t, fx->err,
					sizeof(fx->err)), -ESRCH);
	snprintf(want, sizeof(want), "--thread no-such-thread: no thread of pid %d has that name",
		 getpid());
	assert_string_equal(fx->err, want);
}

/* Two threads of one name: the name does not say which one, a tid must. */
static void test_open_thread_name_ambiguous(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	start_worker(fx, "jw-twin");
	start_worker(fx, "jw-twin");
	assert_int_equal(jw_target_open(getpid(), "jw-twin", &fx->t, fx->err, sizeof(fx->err)),
			 -ESRCH);
	snprintf(want, sizeof(want),
		 "--thread jw-twin: 2 threads of pid %d have that name; give a tid", getpid());
	assert_string_equal(fx->err, want);
}

static void test_alive_self(void **state)
{
	struct fixture *fx = *state;
	struct jw_target other;

	assert_int_equal(jw_target_open(getpid(), NULL, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_true(jw_target_alive(&fx->t));
	/* Same pid, another start time: a reused pid is another process. */
	other = fx->t;
	other.start_jiffies++;
	assert_false(jw_target_alive(&other));
	other = fx->t;
	other.pid = missing_pid();
	assert_false(jw_target_alive(&other));
}

/* A child that exits is not alive, already as a zombie, before it is reaped. */
static void test_alive_child_exits(void **state)
{
	struct fixture *fx = *state;
	int go[2];
	siginfo_t si;
	char c = 0;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	fx->child = fork();
	assert_true(fx->child >= 0);
	if (fx->child == 0) {
		close(go[1]);
		/* Waits for the parent, then exits without running any of cmocka's handlers. */
		if (read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	assert_int_equal(jw_target_open(fx->child, NULL, &fx->t, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->t.pid, fx->child);
	assert_true(jw_target_alive(&fx->t));

	close(go[1]);
	/* Waits until it is a zombie, and leaves it one. */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, fx->child, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_pid, fx->child);
	assert_false(jw_target_alive(&fx->t));

	assert_int_equal(waitpid(fx->child, NULL, 0), fx->child);
	fx->child = 0;
	assert_false(jw_target_alive(&fx->t));
}

/*
 * A tid that is not its process's main thread is no pid: /proc/TID/stat exists, but a target
 * opened from it would be a thread taken for a process. It must be refused, naming the process.
 */
static void test_open_tid_as_pid_refused(void **state)
{
	struct fixture *fx = *state;
	char pid[32];
	pid_t tid;

	tid = start_worker(fx, "jw-not-a-pid");
	assert_int_equal(jw_target_open(tid, NULL, &fx->t, fx->err, sizeof(fx->err)), -ESRCH);
	snprintf(pid, sizeof(pid), "%d", getpid());
	assert_non_null(strstr(fx->err, pid));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_stat_parse_plain),
		T(test_stat_parse_real_line),
		T(test_stat_parse_tricky_names),
		T(test_stat_parse_field_22),
		T(test_stat_parse_truncates_comm),
		T(test_stat_parse_malformed),
		T(test_stat_parse_self),
		T(test_open_self),
		T(test_open_missing_pid),
		T(test_open_thread_by_tid),
		T(test_open_missing_tid),
		T(test_open_thread_by_name),
		T(test_open_thread_name_missing),
		T(test_open_thread_name_ambiguous),
		T(test_alive_self),
		T(test_alive_child_exits),
		T(test_open_tid_as_pid_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
