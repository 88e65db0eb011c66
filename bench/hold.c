// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "hold.h"

static volatile sig_atomic_t stop;
static const char *prefix;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* libbpf's warnings and errors only: its debug chatter is of no use here. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fprintf(stderr, "%s: ", prefix);
	return vfprintf(stderr, fmt, ap);
}

int hold_init(const char *name)
{
	struct sigaction sa = { .sa_handler = on_signal };

	prefix = name;
	libbpf_set_print(libbpf_print);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}

void hold(void)
{
	while (!stop)
		pause();
}

int hold_ms(unsigned int ms)
{
	struct timespec left = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (!stop && nanosleep(&left, &left) && errno == EINTR)
		;
	return stop;
}
