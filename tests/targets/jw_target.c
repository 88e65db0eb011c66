// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plain C event loop for the integration tests: it waits in poll(), then dispatches one task
 * through dispatch(). Every --every ms the task is slow (it spins in busy_work() or sleeps in
 * sleep_work() for --ms, or waits --ms for the jw-waker thread through a pipe, or with --mixed
 * sleeps the first third of --ms in sleep_work() and spins the rest in busy_work()); every --fast ms
 * a trivial task runs in between. For each slow task it
 * prints what it measured itself: "task <n> <kind> <begin_ns> <duration_ns> <waited_ns>
 * <cpu_ns>" (CLOCK_MONOTONIC), waited_ns being how long the thread waited for a CPU meanwhile
 * (schedstat's run_delay: it may have waited after the task ended, which no monitor counts in
 * the task) and cpu_ns how long it ran (CLOCK_THREAD_CPUTIME_ID); then "body=<body_ns>", the
 * part of it inside the outermost dispatch()'s body, timed from within (what a probe on
 * dispatch() can see of it; none when a longjmp left it).
 * after_dispatch() runs right after each dispatch (an exit symbol for --probe BIN:ENTRY:EXIT);
 * with --longjmp a slow task leaves dispatch() by longjmp, so its return never comes; with
 * --queue slow tasks go through run_queued(), which starts by checking its argument; with --spin
 * the loop never sleeps: every poll() returns at once (a loop that polls for work); with --hold
 * it says "hold" and waits in poll() for SIGUSR1 before it counts down to its first task (a
 * test releases it once the monitor is ready, however slow the machine).
 * With --fed N the work comes from elsewhere: every --every ms the "jw-feeder" thread posts N
 * items at once through a pipe, each stamped with the time it was posted; the loop sleeps in
 * poll() on the pipe and dispatches the items one after the other, a slow task each. The line
 * of each then ends with an 8th field, <queued_ns>: how long the item waited, from its post to
 * its task's begin (behind the items before it, for all but the first).
 * With --epoll the loop waits in epoll_wait() instead of poll() (--fed's loop still polls).
 * With --naps N a slow task sleeps its --ms in N naps, each inside a dispatch() nested in the
 * task's (a probe's program runs on the thread right after each of its switches back in).
 * With --format a busy task spins formatting text (format_work(): snprintf, the C library's own
 * code, which in musl's libc.so has neither a symbol nor CFI for most of it).
 * Once the wait after a slow task of the main loop has returned, it prints "around <n>
 * <head_ns> <tail_ns>": the time from the wait before the task returning to the task's begin,
 * and from its end to the call of the next wait (what a monitor that bounds tasks by the loop's
 * waits counts besides the program's own figure: its checks, a fast task, its printing, and
 * under emulation a vCPU stopped meanwhile).
 * With --twin a second thread, "jw-twin", calls dispatch() with trivial tasks without pause, both
 * threads on one CPU, so that they take turns on it all the time; after each slow task the loop
 * prints "dispatched <n>", how many dispatch() calls it made itself so far.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "busy.h"

enum kind { FAST, BUSY, SLEEP, PIPE, MIXED, NAPS, NAP };

static const char *const kind_names[] = { "fast", "busy", "sleep", "pipe", "mixed", "naps",
					  "nap" };

/* --naps N: a slow task sleeps its --ms in N naps, each in a dispatch() of its own inside it. */
static unsigned int naps;

/* --pipe: the task waits on a pipe that the "jw-waker" thread writes --ms later. */
static int go_pipe[2], done_pipe[2];

/* --fed: the items the "jw-feeder" thread posts, @fed_items every @fed_every_ms. */
#define MAX_FED 16
static int feed_pipe[2];
static unsigned int fed_items, fed_every_ms;

static jmp_buf escape;
static int use_longjmp, use_format;
static volatile sig_atomic_t released;

static void on_release(int sig)
{
	(void)sig;
	released = 1;
}

/* --epoll: the loop waits in epoll_wait() on this (empty) epoll instance instead of poll(). */
static int epoll_fd = -1;

/*
 * Around a slow task of the main loop: when the wait before it returned, and the task's number,
 * the time from that return to its begin and its end, until the next wait says them ("around").
 */
static unsigned long long wait_returned;
static unsigned int around_n;
static unsigned long long around_head, around_end;

/* The loop's wait, up to @timeout_ms; after a slow task, its "around" line once it returns. */
static void loop_wait(int timeout_ms)
{
	unsigned long long called = now_ns();
	struct epoll_event ev;

	if (epoll_fd >= 0)
		epoll_wait(epoll_fd, &ev, 1, timeout_ms);
	else
		poll(NULL, 0, timeout_ms);
	wait_returned = now_ns();
	if (around_n) {
		printf("around %u %llu %llu\n", around_n, around_head, called - around_end);
		around_n = 0;
	}
}

/* --hold: waits in the loop's own wait until SIGUSR1 comes. */
static void hold(void)
{
	struct sigaction sa = { .sa_handler = on_release };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		exit(1);
	printf("hold\n");
	while (!released)
		loop_wait(-1);
}

__attribute__((noinline)) void sleep_work(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *waker_thread(void *arg)
{
	unsigned int ms;

	(void)arg;
	while (read(go_pipe[0], &ms, sizeof(ms)) == sizeof(ms)) {
		sleep_work(ms);
		if (write(done_pipe[1], &ms, sizeof(ms)) != sizeof(ms))
			break;
	}
	return NULL;
}

__attribute__((noinline)) void pipe_work(unsigned int ms)
{
	unsigned int got;

	if (write(go_pipe[1], &ms, sizeof(ms)) != sizeof(ms) ||
	    read(done_pipe[0], &got, sizeof(got)) != sizeof(got))
		exit(1);
}

static void *feeder_thread(void *arg)
{
	unsigned long long posted[MAX_FED];
	unsigned int i;

	(void)arg;
	for (;;) {
		sleep_work(fed_every_ms);
		for (i = 0; i < fed_items; i++)
			posted[i] = now_ns();
		if (write(feed_pipe[1], posted, fed_items * sizeof(posted[0])) < 0)
			break;
	}
	return NULL;
}

static void start_feeder(void)
{
	pthread_t t;

	if (pipe(feed_pipe) || pthread_create(&t, NULL, feeder_thread, NULL))
		exit(1);
	pthread_setname_np(t, "jw-feeder");
}

static void start_waker(void)
{
	pthread_t t;

	if (pipe(go_pipe) || pipe(done_pipe) || pthread_create(&t, NULL, waker_thread, NULL))
		exit(1);
	pthread_setname_np(t, "jw-waker");
}

/* --mixed: a task that sleeps, then runs on the CPU (IO, then the work on what it read). */
__attribute__((noinline)) void mixed_work(unsigned int ms)
{
	sleep_work(ms / 3);
	busy_work(ms - ms / 3);
}

__attribute__((noinline)) void fast_work(void)
{
	sink++;
}

__attribute__((noinline)) void after_dispatch(void)
{
	__asm__ volatile("" ::: "memory");
	sink++;
}

/*
 * The dispatch function jankwatch hooks; @depth > 0 dispatches a nested task first. A busy
 * task's time is split: the nested one spins for half of @ms, this one for the rest once it
 * has returned, so that every level has work after its inner dispatch's return.
 */
/*
 * The outermost dispatch()'s body, timed from within (as jw_chain times its own): what of the
 * program's own figure a probe on dispatch() can see. Per thread (--twin dispatches too).
 */
/* --format: spins @ms milliseconds formatting text, mostly inside the C library's printf. */
static __attribute__((noinline)) void format_work(unsigned int ms)
{
	unsigned long long end = now_ns() + ms * 1000000ULL;
	char text[64];
	int i;

	while (now_ns() < end)
		for (i = 0; i < 20; i++)
			sink += snprintf(text, sizeof(text), "%d %llu %x %s", i, end,
					 (unsigned int)sink, "jank");
}

/* A busy task's work: the clock spun on, or with --format text formatted. */
static void spin_work(unsigned int ms)
{
	if (use_format)
		format_work(ms);
	else
		busy_work(ms);
}

static __thread unsigned long long body_begin, body_end;
static __thread int dispatch_depth;

__attribute__((noinline)) void dispatch(enum kind kind, unsigned int ms, int depth);

/* --naps: @ms slept in @naps naps, each in a nested dispatch() (NAP: its @ms in microseconds). */
static __attribute__((noinline)) void nap_work(unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < naps; i++)
		dispatch(NAP, ms * 1000 / naps, 0);
}

__attribute__((noinline)) void dispatch(enum kind kind, unsigned int ms, int depth)
{
	if (!dispatch_depth++)
		body_begin = now_ns();
	if (depth > 0) {
		dispatch(kind, kind == BUSY ? ms / 2 : ms, depth - 1);
		if (kind == BUSY)
			spin_work(ms - ms / 2);
	} else if (kind == BUSY) {
		spin_work(ms);
	}
	if (kind == BUSY && use_longjmp)
		longjmp(escape, 1);
	else if (kind == SLEEP)
		sleep_work(ms);
	else if (kind == PIPE)
		pipe_work(ms);
	else if (kind == MIXED)
		mixed_work(ms);
	else if (kind == NAPS)
		nap_work(ms);
	else if (kind == NAP)
		usleep(ms);
	else
		fast_work();
	/* Work after the calls keeps them real calls, not tail jumps. */
	__asm__ volatile("" ::: "memory");
	sink++;
	if (!--dispatch_depth)
		body_end = now_ns();
}

/* --twin: dispatches trivial tasks as fast as it can. */
static void *twin_thread(void *arg)
{
	(void)arg;
	for (;;)
		dispatch(FAST, 0, 0);
	return NULL;
}

/* Starts the twin, both threads held to the CPU the loop runs on. */
static void start_twin(void)
{
	cpu_set_t one;
	pthread_t t;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) || pthread_create(&t, NULL, twin_thread, NULL))
		exit(1);
	pthread_setname_np(t, "jw-twin");
}

/* The loop's side of --longjmp: a slow task may come back here instead of returning. */
static __attribute__((noinline)) void run_slow_task(enum kind kind, unsigned int ms, int nest)
{
	if (!setjmp(escape))
		dispatch(kind, ms, nest);
	else
		dispatch_depth = 0;	/* left by longjmp: its body has no end */
}

/*
 * --queue: slow tasks go through a queue's dispatcher, which first checks whether the task was
 * cancelled, as queue-based loops do. Built as compilers build such a function (shrink-wrapped),
 * it starts with a load and a test of its argument, before saving any register.
 */
struct queued {
	int cancelled;
	enum kind kind;
	unsigned int ms;
	int nest;
};

__attribute__((noinline)) void run_queued(const struct queued *q)
{
	if (q->cancelled)
		return;
	run_slow_task(q->kind, q->ms, q->nest);
	__asm__ volatile("" ::: "memory");
	sink++;
}

/* The slow task of one dispatch; what the program measured itself, printed. */
static void timed_task(unsigned int n, enum kind kind, unsigned int ms, int nest, int queue,
		       unsigned long long posted)
{
	unsigned long long begin, end, waited, cpu;
	char body[32];

	waited = run_delay_ns();
	cpu = thread_cpu_ns();
	begin = now_ns();
	if (queue) {
		struct queued q = { .kind = kind, .ms = ms, .nest = nest };

		run_queued(&q);
	} else {
		run_slow_task(kind, ms, nest);
	}
	after_dispatch();
	end = now_ns();
	cpu = thread_cpu_ns() - cpu;
	waited = run_delay_ns() - waited;
	if (body_begin < begin || body_end < body_begin || body_end > end)
		body[0] = '\0';	/* a longjmp left dispatch(): no end of its body */
	else
		snprintf(body, sizeof(body), " body=%llu", body_end - body_begin);
	if (posted) {
		printf("task %u %s %llu %llu %llu %llu %llu%s\n", n, kind_names[kind], begin,
		       end - begin, waited, cpu, begin - posted, body);
		return;
	}
	printf("task %u %s %llu %llu %llu %llu%s\n", n, kind_names[kind], begin, end - begin,
	       waited, cpu, body);
	around_n = n;
	around_head = begin - wait_returned;
	around_end = end;
}

/* --fed: sleeps on the feeder's pipe, then runs each item it posted. */
static int fed_loop(enum kind kind, unsigned int ms, int nest, unsigned int count)
{
	unsigned long long posted[MAX_FED];
	struct pollfd pfd = { .fd = feed_pipe[0], .events = POLLIN };
	unsigned int n = 0;
	ssize_t got, k;

	for (;;) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return 1;
		got = read(feed_pipe[0], posted, sizeof(posted));
		if (got <= 0)
			return 1;
		for (k = 0; k < got / (ssize_t)sizeof(posted[0]); k++)
			timed_task(++n, kind, ms, nest, 0, posted[k]);
		if (count && n >= count) {
			loop_wait(0);
			return 0;
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: jw_target [--busy|--sleep|--pipe|--mixed] [--ms MS] [--every MS] [--fast MS] "
			"[--nest DEPTH] [--count N] [--longjmp] [--queue] [--spin] [--hold] "
			"[--fed N] [--twin] [--epoll] [--format] [--naps N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int ms = 300, every = 1000, fast = 0, count = 0, nest = 0, n = 0;
	unsigned long long next_slow, next_fast;
	enum kind kind = BUSY;
	unsigned long long dispatched = 0;
	int i, queue = 0, spin = 0, held = 0, twin = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--busy"))
			kind = BUSY;
		else if (!strcmp(argv[i], "--sleep"))
			kind = SLEEP;
		else if (!strcmp(argv[i], "--pipe"))
			kind = PIPE;
		else if (!strcmp(argv[i], "--mixed"))
			kind = MIXED;
		else if (i + 1 < argc && !strcmp(argv[i], "--ms"))
			ms = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--every"))
			every = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--fast"))
			fast = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--nest"))
			nest = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--count"))
			count = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--longjmp"))
			use_longjmp = 1;
		else if (!strcmp(argv[i], "--format"))
			use_format = 1;
		else if (!strcmp(argv[i], "--queue"))
			queue = 1;
		else if (!strcmp(argv[i], "--spin"))
			spin = 1;
		else if (!strcmp(argv[i], "--hold"))
			held = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--fed"))
			fed_items = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--twin"))
			twin = 1;
		else if (!strcmp(argv[i], "--epoll"))
			epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		else if (i + 1 < argc && !strcmp(argv[i], "--naps") && atoi(argv[i + 1]) > 0)
			kind = NAPS, naps = atoi(argv[++i]);
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (kind == PIPE)
		start_waker();
	if (fed_items > MAX_FED)
		usage();
	if (held)
		hold();
	if (twin)
		start_twin();
	if (fed_items) {
		fed_every_ms = every;
		start_feeder();
		return fed_loop(kind, ms, nest, count);
	}
	next_slow = now_ns() + every * 1000000ULL;
	next_fast = fast ? now_ns() + fast * 1000000ULL : ~0ULL;
	for (;;) {
		unsigned long long now = now_ns(), due = next_slow < next_fast ? next_slow : next_fast;
		int timeout = due > now && !spin ? (int)((due - now + 999999) / 1000000) : 0;

		loop_wait(timeout);
		now = now_ns();
		if (now >= next_fast) {
			dispatch(FAST, 0, 0);
			after_dispatch();
			dispatched++;
			next_fast += fast * 1000000ULL;
		}
		if (now < next_slow)
			continue;
		timed_task(++n, kind, ms, nest, queue, 0);
		dispatched += nest + 1;
		if (twin)
			printf("dispatched %llu\n", dispatched);
		next_slow = now_ns() + every * 1000000ULL;
		if (count && n >= count) {
			/* The last task ends at a wait too, not at the exit: printf's write and the
			 * exit's teardown are no part of it (syscall mode bounds it by the waits). */
			loop_wait(0);
			return 0;
		}
	}
}
