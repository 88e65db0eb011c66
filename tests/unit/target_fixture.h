/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixture test_target.c and test_target_maps.c share. */
#ifndef JW_TEST_TARGET_FIXTURE_H
#define JW_TEST_TARGET_FIXTURE_H
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

static inline int setup(void **state)
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

static inline int teardown(void **state)
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

static inline void *worker_main(void *arg)
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
static inline pid_t start_worker(struct fixture *fx, const char *name)
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
static inline void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	assert_non_null(fgets(buf, len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Field 22 of /proc/PID/stat, parsed independently of the code under test. */
static inline uint64_t start_time_of(pid_t pid)
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
static inline void stat_line(char *buf, size_t len, const char *comm, const char *start)
{
	snprintf(buf, len,
		 "1234 (%s) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 %s 23 24 25 26\n",
		 comm, start);
}

/* The pid that no process can have: pid_max itself (pids are below it). */
static inline pid_t missing_pid(void)
{
	char buf[32];

	read_line("/proc/sys/kernel/pid_max", buf, sizeof(buf));
	return atoi(buf);
}

#endif
