// SPDX-License-Identifier: GPL-2.0-only
/*
 * The handler sites' target of scripts/bench.sh on Qt 5: a QCoreApplication whose zero-interval
 * QTimer fires at every iteration, its timeout connected to a slot that returns at once: per
 * iteration one event through QCoreApplication::notifyInternal2 and one slot object call, the
 * two places the qt preset hooks. Prints, once per window, as site_loop.c does,
 *
 *	window <n> <ns_per_callback> <callbacks> <on_cpu_pct>
 *
 * Runs until killed.
 * Usage: jw_bench_qt [WINDOW_MS]   (default 500)
 */
#include <QCoreApplication>
#include <QTimer>
#include <cstdio>

#include "window.h"

/* Callbacks between two clock reads. */
#define CALLS_PER_BATCH 64

static uint64_t window_ns = 500 * 1000000ULL;
static uint64_t calls, n, start, cpu_start;

class Counter : public QObject {
public:
	__attribute__((noinline)) void on_timeout();
};

void Counter::on_timeout()
{
	uint64_t t;

	if (++calls % CALLS_PER_BATCH)
		return;
	t = clock_ns(CLOCK_MONOTONIC);
	if (t - start < window_ns)
		return;
	printf("window %llu %.2f %llu %.1f\n", (unsigned long long)n++,
	       (double)(t - start) / (double)calls, (unsigned long long)calls,
	       100.0 * (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / (double)(t - start));
	calls = 0;
	start = clock_ns(CLOCK_MONOTONIC);
	cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && !(window_ns = parse_window_ms(argv[1])))) {
		fprintf(stderr, "usage: %s [WINDOW_MS]   (from 10 to 60000, default 500)\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	QCoreApplication app(argc, argv);
	Counter counter;
	QTimer timer;

	QObject::connect(&timer, &QTimer::timeout, &counter, &Counter::on_timeout);
	timer.start(0);
	start = clock_ns(CLOCK_MONOTONIC);
	cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return app.exec();
}
