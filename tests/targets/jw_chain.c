// SPDX-License-Identifier: GPL-2.0-only
/*
 * An event loop built WITHOUT frame pointers, for the DWARF unwinding test: it waits in poll(),
 * then dispatches one task through dispatch(), which calls level1() -> level2() -> level3() ->
 * level4() -> level5(). Every --every ms (default 1000) level5() spins for --ms (default 300).
 * For each slow task it prints what it measured itself: "task <n> busy <begin_ns> <duration_ns>"
 * (CLOCK_MONOTONIC), as jw_target does.
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
	level2(ms);
	__asm__ volatile("" ::: "memory");
	sink += 1;
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
		unsigned long long now = now_ns(), begin;
		int timeout = next_slow > now ? (int)((next_slow - now + 999999) / 1000000) : 0;

		poll(NULL, 0, timeout);
		if (now_ns() < next_slow)
			continue;
		begin = now_ns();
		dispatch(ms);
		printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
		next_slow = now_ns() + every * 1000000ULL;
		if (count && n >= count)
			return 0;
	}
}
