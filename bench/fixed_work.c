// SPDX-License-Identifier: GPL-2.0-only
/*
 * A fixed amount of work on demand, for the observer effect (bench/observer.sh): each line on
 * stdin ("go") runs dispatch(), a loop of ITERS multiply-adds with no memory traffic and no
 * system call, the same work each time; it then prints "done <wall_ns> <cpu_ns>" of that call,
 * CLOCK_MONOTONIC and CLOCK_THREAD_CPUTIME_ID. Waits in read(), as an event loop waits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void dispatch(uint64_t iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL, i;

	for (i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 0, w, c;
	char line[64];

	if (!iters) {
		fprintf(stderr, "usage: jw_fixed_work ITERS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		w = ns(CLOCK_MONOTONIC);
		c = ns(CLOCK_THREAD_CPUTIME_ID);
		dispatch(iters);
		c = ns(CLOCK_THREAD_CPUTIME_ID) - c;
		w = ns(CLOCK_MONOTONIC) - w;
		printf("done %llu %llu\n", (unsigned long long)w, (unsigned long long)c);
	}
	return 0;
}
