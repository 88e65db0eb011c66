// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Qt event loop (QtCore only) for the integration tests, built against Qt 5 and Qt 6: every
 * --every ms a QTimer's timeout runs the slot Catalog::reindex() through a pointer-to-member
 * connection, which spins in busy_work() for --ms; it quits after --count tasks when given. With
 * --light MS a second QTimer runs Catalog::tick() every MS ms, which returns at once: a loop that
 * is never idle for long. --mode picks how the task reaches the loop:
 *   timer   (default) the QTimer connection above;
 *   queued  no timer of its own: tick() posts reindex() every --every ms, right after its tick,
 *           with QMetaObject::invokeMethod(Qt::QueuedConnection), so it runs as a QMetaCallEvent
 *           (--light defaults to 50 here; --posted 1 is the same as this mode);
 *   event   Catalog::timerEvent() of its own startTimer(), with no signal or slot in between;
 *   lambda  the QTimer is connected to a lambda that calls reindex().
 * --nested: each task first adds and deletes a child QObject (ChildAdded and ChildRemoved are
 * sent to the Catalog through QCoreApplication::notifyInternal2, nested in the dispatch) and
 * sends itself a QEvent::User. Timers are Qt::PreciseTimer, as GLib's timeouts are to the ms.
 * It prints what it measured itself, like jw_target: "task <n> busy <begin_ns> <duration_ns>"
 * (CLOCK_MONOTONIC), and a line "tick <n> <ns>" per light tick (when it ran); nothing else on stdout.
 */
#include <QCoreApplication>
#include <QEvent>
#include <QMetaObject>
#include <QObject>
#include <QTimer>
#include <QTimerEvent>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* busy.h is C: its parse_timer_args() leaves a member to the designated initializer's zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "busy.h"
#pragma GCC diagnostic pop

enum class Mode { timer, queued, event, lambda };

class Catalog : public QObject {
	Q_OBJECT

public:
	unsigned int ms = 300;
	unsigned int count = 0;		 /* --count: quit after this many tasks (0: never) */
	unsigned int ticks_per_task = 0; /* queued: tick() posts reindex() every this many ticks */
	bool nested = false;
	int timer_id = 0;		 /* event: startTimer()'s id */

public slots:
	void reindex();
	void tick();

protected:
	void timerEvent(QTimerEvent *event) override;

private:
	unsigned int n = 0, ticks = 0;

	void nest();
	void done(unsigned long long begin);
};

/* Events dispatched inside the task's own dispatch: a child's ChildAdded/Removed, a User event. */
__attribute__((noinline)) void Catalog::nest()
{
	QEvent user(QEvent::User);

	delete new QObject(this);
	QCoreApplication::sendEvent(this, &user);
}

/* Prints the task that began at @begin and quits after --count of them. */
void Catalog::done(unsigned long long begin)
{
	printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
	if (count && n >= count)
		QCoreApplication::quit();
}

__attribute__((noinline)) void Catalog::reindex()
{
	unsigned long long begin = now_ns();

	if (nested)
		nest();
	busy_work(ms);
	done(begin);
}

__attribute__((noinline)) void Catalog::tick()
{
	++ticks;
	printf("tick %u %llu\n", ticks, now_ns());
	if (ticks_per_task && ticks % ticks_per_task == 0)
		QMetaObject::invokeMethod(this, &Catalog::reindex, Qt::QueuedConnection);
}

/* The same task as reindex(), run by the timer event itself. */
__attribute__((noinline)) void Catalog::timerEvent(QTimerEvent *event)
{
	unsigned long long begin;

	if (event->timerId() != timer_id) {
		QObject::timerEvent(event);
		return;
	}
	begin = now_ns();
	if (nested)
		nest();
	busy_work(ms);
	done(begin);
}

struct qt_args {
	unsigned int ms, every, count, light, posted;
	const char *mode;
	bool nested;
};

/* Options that take a value, and where it goes (--mode is parsed apart: it is a word). */
static const struct {
	const char *name;
	unsigned int qt_args::*dst;
} number_opts[] = {
	{ "--ms", &qt_args::ms },
	{ "--every", &qt_args::every },
	{ "--count", &qt_args::count },
	{ "--light", &qt_args::light },
	{ "--posted", &qt_args::posted },
};

[[noreturn]] static void usage_error(const char *what, const char *arg)
{
	fprintf(stderr,
		"jw_qt: %s '%s' (--ms N --every N --count N --light N --posted 0|1 "
		"--mode timer|queued|event|lambda --nested)\n",
		what, arg);
	exit(2);
}

/* Parses argv into @a; an unknown option or a bad value ends the program with status 2. */
static void parse_args(int argc, char **argv, struct qt_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i];
		unsigned int qt_args::*dst = nullptr;
		char *end;

		if (!strcmp(opt, "--nested")) {
			a->nested = true;
			continue;
		}
		for (const auto &o : number_opts)
			if (!strcmp(opt, o.name))
				dst = o.dst;
		if (!dst && strcmp(opt, "--mode"))
			usage_error("unknown option", opt);
		if (++i >= argc)
			usage_error("missing value for", opt);
		if (!dst) {
			a->mode = argv[i];
			continue;
		}
		a->*dst = strtoul(argv[i], &end, 10);
		if (!*argv[i] || *end)
			usage_error("not a number", argv[i]);
	}
}

int main(int argc, char **argv)
{
	struct qt_args args = { .ms = 300, .every = 700, .count = 0, .light = 0, .posted = 0,
				.mode = "timer", .nested = false };
	Mode mode;

	parse_args(argc, argv, &args);
	if (!strcmp(args.mode, "timer"))
		mode = args.posted ? Mode::queued : Mode::timer;
	else if (!strcmp(args.mode, "queued"))
		mode = Mode::queued;
	else if (!strcmp(args.mode, "event"))
		mode = Mode::event;
	else if (!strcmp(args.mode, "lambda"))
		mode = Mode::lambda;
	else
		usage_error("unknown mode", args.mode);
	if (mode == Mode::queued && !args.light)
		args.light = 50;
	setvbuf(stdout, NULL, _IOLBF, 0);

	QCoreApplication app(argc, argv);
	Catalog catalog;
	QTimer timer, light;

	catalog.ms = args.ms;
	catalog.count = args.count;
	catalog.nested = args.nested;
	timer.setTimerType(Qt::PreciseTimer);
	light.setTimerType(Qt::PreciseTimer);
	switch (mode) {
	case Mode::timer:
		QObject::connect(&timer, &QTimer::timeout, &catalog, &Catalog::reindex);
		timer.start(args.every);
		break;
	case Mode::lambda:
		QObject::connect(&timer, &QTimer::timeout, [&] { catalog.reindex(); });
		timer.start(args.every);
		break;
	case Mode::event:
		catalog.timer_id = catalog.startTimer(args.every, Qt::PreciseTimer);
		break;
	case Mode::queued:
		catalog.ticks_per_task = args.every / args.light ? args.every / args.light : 1;
		break;
	}
	if (args.light) {
		QObject::connect(&light, &QTimer::timeout, &catalog, &Catalog::tick);
		light.start(args.light);
	}
	return app.exec();
}

#include "jw_qt.moc"
