/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics: the statistics rows and the events as Prometheus counters and histograms, in its
 * text exposition format (0.0.4), which node_exporter's textfile collector, Prometheus, Grafana
 * Alloy, VictoriaMetrics and the OpenTelemetry Collector read.
 *
 * A series is keyed by the process's name, the handler's class and the handler, never by pid
 * (pids churn). At most max_handlers keys have series of their own: the busiest of the new ones
 * at each pass, kept for good; the others are summed per process in one series
 * handler_class="other",handler="other". Counters never go back: a row that goes (its process
 * forgotten) or starts again (`jankwatch stats --reset`) leaves what it counted in its series.
 */
#ifndef JW_METRICS_H
#define JW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "attach/attach.h"
#include "base/jsonbuf.h"
#include "jankwatch/abi.h"
#include "report/report_event.h"

#define JW_METRICS_OTHER "other"

/* One statistics row as the session names it. */
struct jw_metrics_row {
	uint32_t pid, tid;
	const char *process;		/* the process's name (bundle_name) */
	const char *handler_class;
	const char *handler;
	const struct jw_stats_val *val;
};

/* What the metrics say of jankwatch itself. */
struct jw_metrics_info {
	const char *version;
	const char *bpf;		/* which object is loaded: "core" or "compat" */
	uint64_t drops[JW_DROP_MAX];	/* the kernel's, by enum jw_drop */
	uint64_t lost_samples;		/* samples jankwatch's buffers had no room for */
	uint64_t write_errors;
	const struct jw_prog_misses *misses;	/* runs the kernel skipped; NULL: none read */
	uint64_t watched;		/* processes watched now */
	double start_time_s;		/* when jankwatch started, seconds since the epoch */
};

struct jw_metrics;

struct jw_metrics *jw_metrics__new(size_t max_handlers);	/* NULL on ENOMEM */
void jw_metrics__free(struct jw_metrics *m);			/* NULL-safe */

/* The bound for keys admitted from now on (those admitted stay). */
void jw_metrics__set_max_handlers(struct jw_metrics *m, size_t max_handlers);

/* Counts event @e: a jank or a hang by process and cause, its files, why they were withheld. */
int jw_metrics__event(struct jw_metrics *m, const struct jw_event *e);

/* A pass over every statistics row: begin, each row, end. 0 or -ENOMEM. */
void jw_metrics__rows_begin(struct jw_metrics *m);
int jw_metrics__row(struct jw_metrics *m, const struct jw_metrics_row *r);
int jw_metrics__rows_end(struct jw_metrics *m);

/* Series with handlers of their own, and rows summed into "other" at the last pass. */
size_t jw_metrics__handlers(const struct jw_metrics *m);
size_t jw_metrics__folded(const struct jw_metrics *m);

/* Appends every metric to @b, in Prometheus' text format. */
void jw_metrics__render(const struct jw_metrics *m, const struct jw_metrics_info *info,
			struct jw_buf *b);

#endif
