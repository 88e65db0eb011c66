// SPDX-License-Identifier: GPL-2.0-only
/*
 * An event loop built WITHOUT frame pointers, for the DWARF unwinding test: it waits in poll(),
 * then dispatches one task through dispatch(), which calls level1() -> level2() -> level3() ->
 * level4() -> level5(). Every --every ms (default 1000) level5() spins for --ms (default 300).
 * For each slow task it prints what it measured itself: "task <n> busy <begin_ns> <duration_ns>
 * <waited_ns> <cpu_ns> body=<body_ns>" (CLOCK_MONOTONIC), as jw_target does, and body_ns, the
 * part of the call spent inside dispatch()'s body (level1() timed from within): a probe on
 * dispatch() times an interval between the two, and what lies between them (the probes' traps;
 * under emulation, a vCPU stopped meanwhile) is measured, not guessed.
 *
 * Every function of the chain is noinline and noclone, and does work after its call, so each call
 * stays a real call (no tail jump, no clone such as level3.constprop.0): only DWARF CFI can walk
 * from level5() back to main().
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "busy.h"

#define CHAIN_FN __attribute__((noinline, noclone))

/* When level1() began and ended: the body of dispatch(), whose own prologue stays untouched. */
static unsigned long long body_begin, body_end;


CHAIN_FN void level5(unsigned int ms)
{
	unsigned long long end = now_ns() + ms * 1000000ULL;

	while (now_ns() < end)
		sink++;
	__asm__ volatile("" ::: "memory");
	sink += 5;
}

CHAIN_FN void level4(unsigned int ms)
{
	level5(ms);
	__asm__ volatile("" ::: "memory");
	sink += 4;
}

CHAIN_FN void level3(unsigned int ms)
{
	level4(ms);
	__asm__ volatile("" ::: "memory");
	sink += 3;
}

CHAIN_FN void level2(unsigned int ms)
{
	level3(ms);
	__asm__ volatile("" ::: "memory");
	sink += 2;
}

CHAIN_FN void level1(unsigned int ms)
{
	body_begin = now_ns();
	level2(ms);
	__asm__ volatile("" ::: "memory");
	sink += 1;
	body_end = now_ns();
}

/* The dispatch function jankwatch hooks. */
CHAIN_FN void dispatch(unsigned int ms)
{
	level1(ms);
	__asm__ volatile("" ::: "memory");
	sink++;
}

static void usage(void)
{
	fprintf(stderr, "usage: jw_chain [--ms MS] [--every MS] [--count N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int ms = 300, every = 1000, count = 0, n = 0;
	unsigned long long next_slow;
	int i;

	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--ms"))
			ms = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--every"))
			every = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--count"))
			count = atoi(argv[++i]);
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	next_slow = now_ns() + every * 1000000ULL;
	for (;;) {
		unsigned long long now = now_ns(), begin, waited, cpu;
		int timeout = next_slow > now ? (int)((next_slow - now + 999999) / 1000000) : 0;

		poll(NULL, 0, timeout);
		if (now_ns() < next_slow)
			continue;
		waited = run_delay_ns();
		cpu = thread_cpu_ns();
		begin = now_ns();
		dispatch(ms);
		now = now_ns();
		cpu = thread_cpu_ns() - cpu;
		waited = run_delay_ns() - waited;
		printf("task %u busy %llu %llu %llu %llu body=%llu\n", ++n, begin, now - begin,
		       waited, cpu, body_end - body_begin);
		next_slow = now_ns() + every * 1000000ULL;
		if (count && n >= count)
			return 0;
	}
}
