// SPDX-License-Identifier: GPL-2.0-only
/*
 * AOSP's native Looper (Debian's android-libutils) for the integration tests, shaped like
 * SurfaceFlinger's main thread: its loop is pollOnce(-1), and on it
 *   - TickHandler's message (what 1) every --tick ms (16), which returns at once and posts the
 *     next for its due time plus --tick (or 1 ms from now, once it is late by more);
 *   - SlowHandler's message (what 7) every --every ms (1000), which spins --ms (300);
 *   - PipeCallback, a LooperCallback on a pipe that a feeder thread writes once, --fd-at ms
 *     (1500) after the start, or with --fd-at usr1 once SIGUSR1 comes (a test sends it when its
 *     monitor is ready, however slow the machine), which spins --fd-ms (200);
 *   - a plain function (addFd with a Looper_callbackFunc: a SimpleLooperCallback) on an eventfd
 *     that the feeder writes every 100 ms, which reads it and returns.
 * --mode java: the thread also keeps a queue of its own, as Java's MessageQueue does: between
 * calls of pollOnce (with the time to the next item as its timeout, 0 once one is due) it takes
 * one due item and runs it: one every --every ms spinning --ms; SlowHandler sends nothing then.
 * --count N: exit after N slow tasks (0: never). --life MS: exit after MS ms (0: never).
 * --zygote: shaped like Android's zygote instead: the process runs no loop; it reads requests on
 * stdin, "fork NAME [OPTIONS...]", and for each forks a child (no exec) that renames itself NAME
 * as an app does (AndroidRuntime::setArgv0: its main thread's comm NAME, or NAME's last 15 bytes
 * past 15, then its argv rewritten to NAME) and runs the loop above with OPTIONS (--out FILE: its
 * lines go there, not to the zygote's stdout). It prints "child <pid> <name>" per child;
 * children are reaped as they exit. "quit" (or stdin's end) ends it, its children left running.
 * It prints what it measured, CLOCK_MONOTONIC ns, and nothing else on stdout:
 *   "task <n> <kind> <begin_ns> <duration_ns> <waited_ns> <cpu_ns>" per slow task (kind: message,
 *   fd or work), as jw_target does; "tick <n> <begin_ns>" and "late <n> <ns>" per tick (how late
 *   it ran after its message's due time); "simple <n> <begin_ns>" per call of the plain
 *   function.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <utils/Looper.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "busy.h"
#pragma GCC diagnostic pop

using android::Looper;
using android::Message;
using android::sp;

static unsigned int opt_ms = 300, opt_every = 1000, opt_tick = 16, opt_fd_ms = 200,
		    opt_fd_at = 1500, opt_count, opt_life;
static const char *opt_out;
static bool java_mode;
/* --fd-at usr1: the pipe is written once SIGUSR1 came. */
static bool fd_on_usr1;
static volatile sig_atomic_t usr1_came;
static unsigned int slow_tasks;
static sp<Looper> looper;

/* One slow task's line, as jw_target prints it. */
static void report(const char *kind, unsigned long long begin, unsigned long long waited0,
		   unsigned long long cpu0)
{
	unsigned long long end = now_ns();

	printf("task %u %s %llu %llu %llu %llu\n", ++slow_tasks, kind, begin, end - begin,
	       run_delay_ns() - waited0, thread_cpu_ns() - cpu0);
	fflush(stdout);
	if (opt_count && slow_tasks >= opt_count)
		exit(0);
}

/* A busy task of @ms, reported as @kind. */
static void slow_task(const char *kind, unsigned int ms)
{
	unsigned long long begin = now_ns(), waited0 = run_delay_ns(), cpu0 = thread_cpu_ns();

	busy_work(ms);
	report(kind, begin, waited0, cpu0);
}

class TickHandler : public android::MessageHandler {
public:
	nsecs_t due = 0;
	unsigned int n = 0;

	void handleMessage(const Message &message) override
	{
		nsecs_t begin = (nsecs_t)now_ns();

		n++;
		printf("tick %u %lld\nlate %u %lld\n", n, (long long)begin, n,
		       (long long)(begin - due));
		fflush(stdout);
		due += opt_tick * 1000000LL;
		if (due < begin)
			due = begin + 1000000LL;
		looper->sendMessageAtTime(due, this, message);
	}
};

class SlowHandler : public android::MessageHandler {
public:
	nsecs_t due = 0;

	void handleMessage(const Message &message) override
	{
		due += opt_every * 1000000LL;
		looper->sendMessageAtTime(due, this, message);
		slow_task("message", opt_ms);
	}
};

class PipeCallback : public android::LooperCallback {
public:
	int handleEvent(int fd, int events, void *data) override
	{
		char c;

		(void)events;
		(void)data;
		if (read(fd, &c, 1) != 1)
			return 0;
		slow_task("fd", opt_fd_ms);
		return 1;
	}
};

static unsigned int simple_calls;

/* The plain function's callback: Looper wraps it in a SimpleLooperCallback. */
static int on_eventfd(int fd, int events, void *data)
{
	uint64_t v;

	(void)events;
	(void)data;
	if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
		printf("simple %u %llu\n", ++simple_calls, now_ns());
		fflush(stdout);
	}
	return 1;
}

static int pipe_w = -1, event_fd = -1;

static void on_usr1(int)
{
	usr1_came = 1;
}

/*
 * Writes the eventfd every 100 ms, and the pipe once, --fd-at ms after the start (or once
 * SIGUSR1 came); ends the process --life ms after it.
 */
static void *feeder(void *)
{
	unsigned long long start = now_ns();
	bool piped = false;
	uint64_t one = 1;

	for (;;) {
		struct timespec t = { 0, 100 * 1000000L };

		nanosleep(&t, NULL);
		if (opt_life && now_ns() - start >= opt_life * 1000000ULL) {
			fflush(stdout);
			_exit(0);
		}
		if (write(event_fd, &one, sizeof(one)) < 0)
			return NULL;
		if (!piped && (fd_on_usr1 ? usr1_came : now_ns() - start >= opt_fd_at * 1000000ULL)) {
			piped = true;
			if (write(pipe_w, "x", 1) < 0)
				return NULL;
		}
	}
}

/* Java's way: one item of its own queue between calls of pollOnce, at most one per call. */
static void java_loop()
{
	unsigned long long next = now_ns() + opt_every * 1000000ULL;

	for (;;) {
		unsigned long long now = now_ns();
		int timeout = now >= next ? 0 : (int)((next - now + 999999) / 1000000);

		looper->pollOnce(timeout);
		if (now_ns() >= next) {
			next += opt_every * 1000000ULL;
			slow_task("work", opt_ms);
		}
	}
}

/* The options of a loop, from @argv[@from] on; others are passed over. */
static void parse_options(int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--mode"))
			java_mode = !strcmp(v, "java");
		else if (!strcmp(argv[i], "--ms"))
			opt_ms = atoi(v);
		else if (!strcmp(argv[i], "--every"))
			opt_every = atoi(v);
		else if (!strcmp(argv[i], "--tick"))
			opt_tick = atoi(v);
		else if (!strcmp(argv[i], "--fd-ms"))
			opt_fd_ms = atoi(v);
		else if (!strcmp(argv[i], "--fd-at"))
			fd_on_usr1 = !strcmp(v, "usr1"), opt_fd_at = atoi(v);
		else if (!strcmp(argv[i], "--count"))
			opt_count = atoi(v);
		else if (!strcmp(argv[i], "--life"))
			opt_life = atoi(v);
		else if (!strcmp(argv[i], "--out"))
			opt_out = v;
		else
			continue;
		i++;
	}
}

/* The loop: SurfaceFlinger's, or Java's (--mode java). */
static int run_loop()
{
	sp<TickHandler> ticker = new TickHandler();
	sp<SlowHandler> slow = new SlowHandler();
	sp<PipeCallback> piped = new PipeCallback();
	pthread_t t;
	int fds[2];

	looper = Looper::prepare(0);
	if (pipe2(fds, O_CLOEXEC) || (event_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
		perror("jw_looper");
		return 1;
	}
	pipe_w = fds[1];
	if (fd_on_usr1)
		signal(SIGUSR1, on_usr1);
	looper->addFd(fds[0], 0, Looper::EVENT_INPUT, piped, NULL);
	looper->addFd(event_fd, 0, Looper::EVENT_INPUT, on_eventfd, NULL);
	ticker->due = (nsecs_t)now_ns() + opt_tick * 1000000LL;
	looper->sendMessageAtTime(ticker->due, ticker, Message(1));
	if (!java_mode) {
		slow->due = (nsecs_t)now_ns() + opt_every * 1000000LL;
		looper->sendMessageAtTime(slow->due, slow, Message(7));
	}
	if (pthread_create(&t, NULL, feeder, NULL)) {
		fprintf(stderr, "jw_looper: cannot start the feeder\n");
		return 1;
	}
	/* SIGUSR1 goes to the feeder, which the mask it was created with lets take it. */
	if (fd_on_usr1) {
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	}
	if (java_mode)
		java_loop();
	for (;;)
		looper->pollOnce(-1);
}

/*
 * What an app does first after zygote forks it (AndroidRuntime::setArgv0): its main thread's
 * name, as much of @name as fits counted from its end, then its arguments' memory rewritten.
 */
static void take_name(const char *name, char *arg_start, size_t arg_len)
{
	size_t n = strlen(name);

	prctl(PR_SET_NAME, n < 15 ? name : name + n - 15, 0, 0, 0);
	memset(arg_start, 0, arg_len);
	snprintf(arg_start, arg_len, "%s", name);
}

/* --zygote: forks a child per request; each renames itself and runs the loop. */
static int zygote(int argc, char **argv)
{
	char *arg_start = argv[0];
	size_t arg_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - arg_start);
	char line[1024];

	signal(SIGCHLD, SIG_IGN);	/* children reaped by the kernel */
	while (fgets(line, sizeof(line), stdin)) {
		char *words[64], *save = NULL, *w;
		int n = 0;
		pid_t pid;

		for (w = strtok_r(line, " \t\n", &save); w && n < 63; w = strtok_r(NULL, " \t\n", &save))
			words[n++] = w;
		words[n] = NULL;
		if (n && !strcmp(words[0], "quit"))
			break;
		if (n < 2 || strcmp(words[0], "fork"))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("jw_looper: fork");
			continue;
		}
		if (!pid) {
			signal(SIGCHLD, SIG_DFL);
			take_name(words[1], arg_start, arg_len);
			parse_options(n, words, 2);
			if (opt_out && !freopen(opt_out, "w", stdout)) {
				perror(opt_out);
				_exit(1);
			}
			return run_loop();
		}
		printf("child %d %s\n", (int)pid, words[1]);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--zygote"))
		return zygote(argc, argv);
	parse_options(argc, argv, 1);
	return run_loop();
}
