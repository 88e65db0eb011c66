// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the /proc target: stat parsing, opening this process and its threads, maps. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/target.h"

#define MAX_THREADS 2

/* A thread of this process, named, parked until the fixture lets it go. */
struct worker {
	pthread_t thread;
	const char *name;
	int ready_fd;		/* where it reports that it is named */
	int release_fd;		/* it returns when this reaches EOF */
	pid_t tid;
};

struct fixture {
	struct worker workers[MAX_THREADS];
	size_t n_workers;
	int ready[2];
	int release[2];
	pid_t child;		/* a forked process to reap, or 0 */
	char mapped[64];	/* a temporary file to remove, or "" */
	void *map;		/* its mapping, or NULL */
	struct jw_target t;
	char err[512];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	if (pipe2(fx->ready, O_CLOEXEC))
		goto err_free;
	if (pipe2(fx->release, O_CLOEXEC))
		goto err_close_ready;
	*state = fx;
	return 0;

err_close_ready:
	close(fx->ready[0]);
	close(fx->ready[1]);
err_free:
	free(fx);
	return -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	size_t i;

	/* EOF on the release pipe lets every worker return. */
	close(fx->release[1]);
	for (i = 0; i < fx->n_workers; i++)
		pthread_join(fx->workers[i].thread, NULL);
	close(fx->release[0]);
	close(fx->ready[0]);
	close(fx->ready[1]);
	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, NULL, 0);
	}
	if (fx->map)
		munmap(fx->map, 4096);
	if (fx->mapped[0])
		unlink(fx->mapped);
	free(fx);
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char c = 1;

	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	w->tid = gettid();
	if (write(w->ready_fd, &c, 1) != 1)
		return NULL;
	while (read(w->release_fd, &c, 1) > 0)
		;
	return NULL;
}

/* Starts a worker thread named @name and waits until it is named; returns its tid. */
static pid_t start_worker(struct fixture *fx, const char *name)
{
	struct worker *w;
	char c;

	assert_true(fx->n_workers < MAX_THREADS);
	w = &fx->workers[fx->n_workers];
	w->name = name;
	w->ready_fd = fx->ready[1];
	w->release_fd = fx->release[0];
	assert_int_equal(pthread_create(&w->thread, NULL, worker_main, w), 0);
	fx->n_workers++;
	assert_int_equal(read(fx->ready[0], &c, 1), 1);
	assert_true(w->tid > 0);
	assert_int_not_equal(w->tid, getpid());
	return w->tid;
}

/* Reads the first line of a small file into @buf, without its newline. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	assert_non_null(fgets(buf, len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Field 22 of /proc/PID/stat, parsed independently of the code under test. */
static uint64_t start_time_of(pid_t pid)
{
	char path[64], buf[4096];
	unsigned long long v;
	const char *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	read_line(path, buf, sizeof(buf));
	p = strrchr(buf, ')');
	assert_non_null(p);
	p += 2;
	/* p is at field 3; field 22 is 19 fields on. */
	for (field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		assert_non_null(p);
		p++;
	}
	assert_int_equal(sscanf(p, "%llu", &v), 1);
	return v;
}

/* A stat line with name @comm, fields 4..21 numbered as themselves and @start as field 22. */
static void stat_line(char *buf, size_t len, const char *comm, const char *start)
{
	snprintf(buf, len,
		 "1234 (%s) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 %s 23 24 25 26\n",
		 comm, start);
}

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

/* The pid that no process can have: pid_max itself (pids are below it). */
static pid_t missing_pid(void)
{
	char buf[32];

	read_line("/proc/sys/kernel/pid_max", buf, sizeof(buf));
	return atoi(buf);
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

/* /proc/PID/syscall's content: a wait call's number first, or not. */
static void test_syscall_is_wait(void **state)
{
	(void)state;
#if defined(__x86_64__)
	assert_true(jw_syscall_is_wait("232 0x4 0x7ffd 0x400 0x64 0x0 0x0 0x7ffd0 0x7f12\n"));
	assert_true(jw_syscall_is_wait("7 0x1 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x7ff 0x7f\n"));
	assert_true(jw_syscall_is_wait("281 0x4"));
	assert_false(jw_syscall_is_wait("0 0x3 0x7ffd 0x1000 0x0 0x0 0x0 0x7ffd0 0x7f12\n"));
	assert_false(jw_syscall_is_wait("61 0xffffffffffffffff 0x7ffd 0x0 0x0 0x0 0x0 0x7f 0x7f\n"));
	assert_false(jw_syscall_is_wait("2320 0x4\n"));
#elif defined(__aarch64__)
	assert_true(jw_syscall_is_wait("22 0x4 0xffff 0x400 0x64 0x0 0x0 0xffff0 0xffff1\n"));
	assert_false(jw_syscall_is_wait("63 0x3 0xffff 0x1000 0x0 0x0 0x0 0xffff0 0xffff1\n"));
#endif
	assert_false(jw_syscall_is_wait("running\n"));
	assert_false(jw_syscall_is_wait("-1 0x7ffd0 0x7f12\n"));
	assert_false(jw_syscall_is_wait(""));
	assert_false(jw_syscall_is_wait("232x"));
}

/* Forks a child that blocks in poll() (@wait) or in read(), once it has said it is there. */
static pid_t blocked_child(bool wait, int *release)
{
	int go[2], ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pollfd pfd = { .fd = go[0], .events = POLLIN };

		close(go[1]);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		if (wait)
			poll(&pfd, 1, -1);
		else if (read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*release = go[1];
	return pid;
}

/* A process blocked in poll() runs a loop; one blocked in read() does not; a missing one: error. */
static void test_in_wait(void **state)
{
	struct fixture *fx = *state;
	int release, ret = 0, tries;
	bool wait;

	for (wait = false; ; wait = true) {
		fx->child = blocked_child(wait, &release);
		/* Until it sleeps in its call: then the answer must be what it waits in. */
		for (tries = 0; tries < 200; tries++) {
			ret = jw_target_in_wait(fx->child, NULL);
			if (ret == (int)wait)
				break;
			usleep(10000);
		}
		assert_int_equal(ret, wait);
		/* Still so, a moment later: nothing else made it true. */
		usleep(50000);
		assert_int_equal(jw_target_in_wait(fx->child, NULL), wait);
		assert_true(jw_target_start_boot_ns(fx->child) > 0);
		close(release);
		assert_int_equal(waitpid(fx->child, NULL, 0), fx->child);
		fx->child = 0;
		if (wait)
			break;
	}
	assert_int_equal(jw_target_in_wait(missing_pid(), NULL), -ENOENT);
	assert_int_equal(jw_target_start_boot_ns(missing_pid()), 0);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_find_mapping_libc(void **state)
{
	char path[PATH_MAX], again[PATH_MAX];

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6", path, sizeof(path)), 0);
	assert_true(path[0] == '/');
	assert_true(ends_with(path, "/libc.so.6"));
	assert_int_equal(access(path, R_OK), 0);

	/* A prefix followed by '.' designates the same file. */
	assert_int_equal(jw_target_find_mapping(getpid(), "libc", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	/* A trailing '*' asks for any name that begins so. */
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.s*", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	assert_int_equal(jw_target_find_mapping(getpid(), "libcx*", again, sizeof(again)),
			 -ENOENT);
}

static void test_find_mapping_exe(void **state)
{
	char exe[PATH_MAX], path[PATH_MAX];
	const char *base;
	ssize_t n;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	base = strrchr(exe, '/') + 1;
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_string_equal(path, exe);
}

static void test_find_mapping_absolute(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "/opt/not/mapped/libx.so.1", path,
						sizeof(path)), 0);
	assert_string_equal(path, "/opt/not/mapped/libx.so.1");
}

static void test_find_mapping_missing(void **state)
{
	char path[PATH_MAX];

	(void)state;
	strcpy(path, "untouched");
	assert_int_equal(jw_target_find_mapping(getpid(), "libjw-not-mapped.so", path,
						sizeof(path)), -ENOENT);
	/* Neither a middle part nor a prefix without a '.' after it matches. */
	assert_int_equal(jw_target_find_mapping(getpid(), "ibc.so.6", path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6.1", path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(jw_target_find_mapping(getpid(), "lib", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");
	assert_int_equal(jw_target_find_mapping(missing_pid(), "libc.so.6", path, sizeof(path)),
			 -ENOENT);
}

#define MAPPED_TEXT "jankwatch mapped file\n"

/*
 * Creates /tmp/libjwmap-XXXXXX.so.1 and maps it into this process; returns its base name.
 * The file is the fixture's to remove, the mapping its to undo.
 */
static const char *map_temp_lib(struct fixture *fx)
{
	int fd;

	snprintf(fx->mapped, sizeof(fx->mapped), "/tmp/libjwmap-XXXXXX.so.1");
	fd = mkstemps(fx->mapped, strlen(".so.1"));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, MAPPED_TEXT, strlen(MAPPED_TEXT)), strlen(MAPPED_TEXT));
	fx->map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(fx->map != MAP_FAILED);
	return strrchr(fx->mapped, '/') + 1;
}

/* Any mapped file is found, by its base name or the part before ".so". */
static void test_find_mapping_mapped_file(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], prefix[64];
	const char *base;

	base = map_temp_lib(fx);
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_string_equal(path, fx->mapped);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(base) - strlen(".so.1")), base);
	assert_int_equal(jw_target_find_mapping(getpid(), prefix, path, sizeof(path)), 0);
	assert_string_equal(path, fx->mapped);
}

/* Reads the first bytes of @path, which must hold MAPPED_TEXT. */
static void assert_mapped_text(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, MAPPED_TEXT);
}

/*
 * A mapped file deleted (or replaced, as a package upgrade does) since it was mapped: maps
 * shows "<path> (deleted)". Both ways of naming it must agree, and the path given must be one
 * that opens the mapped file (SPEC F6: through /proc/PID/map_files), never "<path> (deleted)".
 */
static void test_find_mapping_deleted_file(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], prefix[64];
	const char *base;

	base = map_temp_lib(fx);
	assert_int_equal(unlink(fx->mapped), 0);
	fx->mapped[0] = '\0';
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_null(strstr(path, " (deleted)"));
	assert_mapped_text(path);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(base) - strlen(".so.1")), base);
	assert_int_equal(jw_target_find_mapping(getpid(), prefix, path, sizeof(path)), 0);
	assert_null(strstr(path, " (deleted)"));
	assert_mapped_text(path);
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
		T(test_find_mapping_libc),
		T(test_find_mapping_exe),
		T(test_find_mapping_absolute),
		T(test_find_mapping_missing),
		T(test_find_mapping_mapped_file),
		T(test_find_mapping_deleted_file),
		T(test_open_tid_as_pid_refused),
		T(test_syscall_is_wait),
		T(test_in_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
