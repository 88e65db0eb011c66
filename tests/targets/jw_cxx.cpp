// SPDX-License-Identifier: GPL-2.0-only
/*
 * A C++ event loop for the demangling test: it waits in poll(), and every --every ms runs a task
 * through app::Loop<app::Job>::dispatch(), which spins --ms in app::Job::run() const. For each
 * task it prints "task <n> busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC), as jw_target does.
 * With --depth N the dispatch reaches run() through N calls of a method of a class template over
 * standard containers, whose demangled name is long: a deep C++ stack, as a UI toolkit's is.
 */
#include <map>
#include <string>
#include <vector>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace app {

volatile unsigned long sink;

unsigned long long now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct Job {
	unsigned int ms;

	__attribute__((noinline)) void run() const
	{
		unsigned long long end = now_ns() + ms * 1000000ULL;

		while (now_ns() < end)
			sink = sink + 1;
	}
};

template <typename K, typename V> struct Layer {
	__attribute__((noinline)) static void descend(unsigned int n, const Job &job)
	{
		if (n > 1)
			descend(n - 1, job);
		else
			job.run();
		/* Work after the call keeps it a real call, not a tail jump. */
		__asm__ volatile("" ::: "memory");
		sink = sink + 1;
	}
};

typedef Layer<std::map<std::string, std::vector<int>>, std::vector<std::string>> Deep;

template <typename T> struct Loop {
	unsigned int depth;

	__attribute__((noipa)) void dispatch(const T &job)
	{
		if (depth)
			Deep::descend(depth, job);
		else
			job.run();
		/* Work after the call keeps it a real call, not a tail jump. */
		__asm__ volatile("" ::: "memory");
		sink = sink + 1;
	}
};

} // namespace app

int main(int argc, char **argv)
{
	unsigned int ms = 300, every = 1000, n = 0;
	app::Loop<app::Job> loop = { 0 };

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--ms"))
			ms = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--every"))
			every = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--depth"))
			loop.depth = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: jw_cxx [--ms MS] [--every MS] [--depth N]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		poll(NULL, 0, every);
		unsigned long long begin = app::now_ns();
		loop.dispatch(app::Job{ ms });
		printf("task %u busy %llu %llu\n", ++n, begin, app::now_ns() - begin);
	}
}
