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

static struct callback_window win = { 500 * 1000000ULL, 0, 0, 0, 0 };

class Counter : public QObject {
public:
	__attribute__((noinline)) void on_timeout() { callback_window_count(&win); }
};

int main(int argc, char **argv)
{
	if (!window_from_args(argc, argv, &win.window_ns))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	QCoreApplication app(argc, argv);
	Counter counter;
	QTimer timer;

	QObject::connect(&timer, &QTimer::timeout, &counter, &Counter::on_timeout);
	timer.start(0);
	callback_window_start(&win);
	return app.exec();
}
