// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>

#include "attach/waitmode.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double jw_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool jw_wait_choose_tracepoints(const struct jw_wait_costs *c, char *why, size_t len)
{
	double syscalls_s, waits_s, tp_ms, up_ms;
	bool tracepoints;

	if (c->tp_ns < 0 || c->up_ns < 0) {
		snprintf(why, len, "what the %s cost could not be measured",
			 c->tp_ns < 0 ? "tracepoints" : "uprobes");
		return false;
	}
	if (c->window_s <= 0 || !c->waits) {
		snprintf(why, len, "the watched threads made no wait system call in %.1f s",
			 c->window_s > 0 ? c->window_s : 0);
		return false;
	}
	syscalls_s = c->syscalls / c->window_s;
	waits_s = c->waits / c->window_s;
	/* CPU time per second of each way at these rates, in ms: counts/s x ns / 1e6. */
	tp_ms = syscalls_s * c->tp_ns / 1e6;
	up_ms = waits_s * c->up_ns / 1e6;
	tracepoints = tp_ms * JW_WAIT_TP_FACTOR < up_ms && up_ms - tp_ms >= JW_WAIT_TP_SAVING_MS;
	snprintf(why, len, "%.0f system calls/s on the machine x %.0f ns with the tracepoints = "
		 "%.2f ms/s; %.0f watched waits/s x %.0f ns with uprobes = %.2f ms/s%s", syscalls_s,
		 c->tp_ns, tp_ms, waits_s, c->up_ns, up_ms,
		 tracepoints || tp_ms >= up_ms ? "" : ": not enough saved to put the machine on "
		 "the tracing path");
	return tracepoints;
}
