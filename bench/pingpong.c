// SPDX-License-Identifier: GPL-2.0-only
/*
 * Context switches as fast as two processes can make them: a byte sent back and forth over two
 * pipes N times (default 100000). Prints the microseconds one round trip took, on average.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, a[2], b[2], i;
	struct timespec t0, t1;
	char c = 0;

	if (pipe(a) || pipe(b))
		return 1;
	if (!fork()) {
		for (i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				return 1;
		return 0;
	}
	/* Started, not timed yet: a watcher may attach while the child waits. */
	if (argc > 2)
		sleep(atoi(argv[2]));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	wait(NULL);
	printf("%.3f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n / 1000.0);
	return 0;
}
