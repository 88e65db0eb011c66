// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

double jw_percentile(double *v, size_t n, unsigned int pct)
{
	size_t rank = (n * (pct < 100 ? pct : 100) + 99) / 100;

	qsort(v, n, sizeof(*v), cmp_double);
	return v[rank ? rank - 1 : 0];
}

/* Whether @c's costs are known, else false with @why saying which is not. */
static bool costs_known(const struct jw_wait_costs *c, char *why, size_t len)
{
	if (c->tp_ns >= 0 && c->up_ns >= 0)
		return true;
	snprintf(why, len, "what the %s cost could not be measured",
		 c->tp_ns < 0 ? "tracepoints" : "uprobes");
	return false;
}

/*
 * CPU time per second of each way at @c's rates, in ms (counts/s x ns / 1e6), and the figures
 * behind them in @why, followed by @tail.
 */
static void cost_ms(const struct jw_wait_costs *c, double *tp_ms, double *up_ms, const char *tail,
		    char *why, size_t len)
{
	double waits_s = c->waits / c->window_s;
	/* Counted apart, at slightly different moments: the machine's hold the watched ones. */
	uint64_t mwaits = c->machine_waits > c->waits ? c->machine_waits : c->waits;
	uint64_t others = c->syscalls > mwaits ? c->syscalls - mwaits : 0;
	double mwaits_s = mwaits / c->window_s, others_s = others / c->window_s;

	*tp_ms = (others_s * c->tp_ns + mwaits_s * c->tpw_ns) / 1e6;
	*up_ms = waits_s * c->up_ns / 1e6;
	snprintf(why, len, "%.0f system calls/s on the machine, %.0f of them waits: %.0f x %.0f ns "
		 "+ %.0f x %.0f ns with the tracepoints = %.2f ms/s; %.0f watched waits/s x %.0f ns "
		 "with uprobes = %.2f ms/s%s", others_s + mwaits_s, mwaits_s, others_s, c->tp_ns,
		 mwaits_s, c->tpw_ns, *tp_ms, waits_s, c->up_ns, *up_ms, tail);
}

bool jw_wait_choose_tracepoints(const struct jw_wait_costs *c, char *why, size_t len)
{
	double tp_ms, up_ms;
	bool tracepoints;

	if (!costs_known(c, why, len))
		return false;
	if (c->window_s <= 0 || !c->waits) {
		snprintf(why, len, "the watched threads made no wait system call in %.1f s",
			 c->window_s > 0 ? c->window_s : 0);
		return false;
	}
	cost_ms(c, &tp_ms, &up_ms, "", why, len);
	tracepoints = tp_ms * JW_WAIT_TP_FACTOR < up_ms && up_ms - tp_ms >= JW_WAIT_TP_SAVING_MS;
	if (!tracepoints && tp_ms < up_ms)
		cost_ms(c, &tp_ms, &up_ms, ": not enough saved to put the machine on the tracing path",
			why, len);
	return tracepoints;
}

bool jw_wait_keep_tracepoints(const struct jw_wait_costs *c, char *why, size_t len)
{
	double tp_ms, up_ms;
	bool keep;

	if (!costs_known(c, why, len))
		return true;
	if (c->window_s <= 0) {
		snprintf(why, len, "the machine's system calls could not be counted");
		return true;
	}
	cost_ms(c, &tp_ms, &up_ms, "", why, len);
	keep = up_ms - tp_ms >= JW_WAIT_TP_KEEP_MS;
	if (keep && (tp_ms * JW_WAIT_TP_FACTOR >= up_ms || up_ms - tp_ms < JW_WAIT_TP_SAVING_MS))
		cost_ms(c, &tp_ms, &up_ms, ": the tracepoints stay while they save 1 ms/s", why, len);
	return keep;
}

/* The median of @reads[0..@n) (@n > 0), at least 0, leaving them in their order. */
static double median_of_reads(const double *reads, unsigned int n)
{
	double v[JW_WAIT_TP_READS], m;

	memcpy(v, reads, n * sizeof(*v));
	m = jw_median(v, n);
	return m > 0 ? m : 0;
}

void jw_wait_tp_read(struct jw_wait_costs *c, double call_ns, double wait_ns)
{
	if (c->n_tp_reads < JW_WAIT_TP_READS) {
		c->tp_reads[c->n_tp_reads] = call_ns;
		c->tpw_reads[c->n_tp_reads++] = wait_ns;
	}
	c->tp_ns = median_of_reads(c->tp_reads, c->n_tp_reads);
	c->tpw_ns = median_of_reads(c->tpw_reads, c->n_tp_reads);
}

bool jw_wait_tp_unsure(const struct jw_wait_costs *c)
{
	struct jw_wait_costs low = *c;
	char why[8];

	if (!c->n_tp_reads || c->n_tp_reads >= JW_WAIT_TP_READS || c->up_ns < 0 ||
	    jw_wait_choose_tracepoints(c, why, sizeof(why)))
		return false;
	low.tp_ns = jw_percentile(low.tp_reads, low.n_tp_reads, 25);
	low.tpw_ns = jw_percentile(low.tpw_reads, low.n_tp_reads, 25);
	low.tp_ns = low.tp_ns > 0 ? low.tp_ns : 0;
	low.tpw_ns = low.tpw_ns > 0 ? low.tpw_ns : 0;
	return jw_wait_choose_tracepoints(&low, why, sizeof(why));
}

bool jw_wait_rate_moved(double chosen, double now)
{
	double a = chosen > JW_WAIT_RATE_FLOOR ? chosen : JW_WAIT_RATE_FLOOR;
	double b = now > JW_WAIT_RATE_FLOOR ? now : JW_WAIT_RATE_FLOOR;

	return b >= a * JW_WAIT_RATE_MOVE || a >= b * JW_WAIT_RATE_MOVE;
}
