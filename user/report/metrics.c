// SPDX-License-Identifier: GPL-2.0-only
/* The statistics rows and the events as Prometheus metrics. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hindex.h"
#include "report/metrics.h"

#define MAX_PROCS 1000		/* process names with counters of their own; then "other" */
#define N_CAUSES 4
#define N_WITHHELD 4
#define N_FILES 4

static const char *const causes[N_CAUSES] = { "cpu", "runqueue", "blocked", "io" };
static const char *const withheld_names[N_WITHHELD] = { "back_off", "budget", "quota",
							"trace_window" };
static const char *const file_kinds[N_FILES] = { "stack_log", "trace", "profile", "other" };

/* What a row, or a series, counted. */
struct counts {
	uint64_t tasks, recorded, total_ns, cpu_ns, delay_count, delay_ns, exceptions;
	uint64_t hist[JW_HIST_SLOTS];
};

struct series {
	char *process, *cls, *handler;
	char *labels;		/* process="...",handler_class="...",handler="..." escaped */
	struct counts retired;	/* left by rows that went or started again */
	struct counts live;	/* the rows of the last pass */
};

/* A row of the last pass: which series it counts in, and what it had counted then. */
struct row {
	uint64_t key;
	uint32_t series;
	bool seen;
	struct counts last;
};

/* A row whose key has no series yet: admitted (or folded) at the pass's end, busiest first. */
struct pending {
	uint64_t key;
	char *process, *cls, *handler;
	struct counts c;
};

struct proc_counts {
	char *process;
	uint64_t janks[N_CAUSES], hangs[N_CAUSES], withheld[N_WITHHELD], files[N_FILES];
};

struct jw_metrics {
	size_t max_handlers, handlers, folded;
	struct series *series;
	size_t n_series, cap_series;
	struct jw_hindex by_key;	/* series key -> series */
	struct row *rows;
	size_t n_rows, cap_rows;
	struct jw_hindex row_at;	/* row key -> rows[] */
	struct pending *pending;
	size_t n_pending, cap_pending;
	struct proc_counts *procs;
	size_t n_procs, cap_procs;
};

static uint64_t series_key(const char *process, const char *cls, const char *handler)
{
	return jw_hash_str(jw_hash_str(jw_hash_str(0, process), cls), handler);
}

static uint64_t row_key(uint64_t series, uint32_t pid, uint32_t tid)
{
	return jw_hash_bytes(jw_hash_bytes(series, &pid, sizeof(pid)), &tid, sizeof(tid));
}

struct jw_metrics *jw_metrics__new(size_t max_handlers)
{
	struct jw_metrics *m = calloc(1, sizeof(*m));

	if (m)
		m->max_handlers = max_handlers;
	return m;
}

static void free_pending(struct jw_metrics *m)
{
	size_t i;

	for (i = 0; i < m->n_pending; i++) {
		free(m->pending[i].process);
		free(m->pending[i].cls);
		free(m->pending[i].handler);
	}
	m->n_pending = 0;
}

void jw_metrics__free(struct jw_metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n_series; i++) {
		free(m->series[i].process);
		free(m->series[i].cls);
		free(m->series[i].handler);
		free(m->series[i].labels);
	}
	for (i = 0; i < m->n_procs; i++)
		free(m->procs[i].process);
	free_pending(m);
	free(m->pending);
	free(m->series);
	free(m->rows);
	free(m->procs);
	jw_hindex_free(&m->by_key);
	jw_hindex_free(&m->row_at);
	free(m);
}

void jw_metrics__set_max_handlers(struct jw_metrics *m, size_t max_handlers)
{
	m->max_handlers = max_handlers;
}

size_t jw_metrics__handlers(const struct jw_metrics *m)
{
	return m->handlers;
}

size_t jw_metrics__folded(const struct jw_metrics *m)
{
	return m->folded;
}

/* The counters of process @name, made on first use; past MAX_PROCS, "other"'s. */
static struct proc_counts *proc_of(struct jw_metrics *m, const char *name)
{
	struct proc_counts *p;
	size_t i;

	if (!name)
		name = "";
	for (i = 0; i < m->n_procs; i++)
		if (!strcmp(m->procs[i].process, name))
			return &m->procs[i];
	if (m->n_procs >= MAX_PROCS)
		return strcmp(name, JW_METRICS_OTHER) ? proc_of(m, JW_METRICS_OTHER) : NULL;
	if (jw_grow((void **)&m->procs, &m->cap_procs, m->n_procs, sizeof(*m->procs), 16))
		return NULL;
	p = &m->procs[m->n_procs];
	memset(p, 0, sizeof(*p));
	p->process = strdup(name);
	if (!p->process)
		return NULL;
	m->n_procs++;
	return p;
}

static int name_at(const char *name, const char *const *names, int n)
{
	int i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* Which kind of file @path is, by jankwatch's file names. */
static int file_kind(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path ? path : "";
	if (!strncmp(base, "stack-", 6))
		return 0;
	if (!strncmp(base, "trace-", 6))
		return 1;
	if (!strncmp(base, "profile-", 8))
		return 2;
	return 3;
}

int jw_metrics__event(struct jw_metrics *m, const struct jw_event *e)
{
	struct proc_counts *p = proc_of(m, e->bundle_name);
	int c = name_at(e->cause, causes, N_CAUSES), w;
	size_t i;

	if (!p)
		return -ENOMEM;
	if (c < 0)
		c = 0;
	if (e->event && !strcmp(e->event, "MAIN_THREAD_HANG"))
		p->hangs[c]++;
	else
		p->janks[c]++;
	w = name_at(e->withheld, withheld_names, N_WITHHELD);
	if (w >= 0)
		p->withheld[w]++;
	for (i = 0; e->external_log && i < e->n_external_log; i++)
		if (e->external_log[i])
			p->files[file_kind(e->external_log[i])]++;
	return 0;
}

static void counts_of(struct counts *c, const struct jw_stats_val *v)
{
	size_t i;

	c->tasks = v->count;
	c->recorded = v->recorded;
	c->total_ns = v->total_ns;
	c->cpu_ns = v->total_cpu_ns;
	c->delay_count = v->delay_count;
	c->delay_ns = v->total_delay_ns;
	c->exceptions = v->exceptions;
	for (i = 0; i < JW_HIST_SLOTS; i++)
		c->hist[i] = v->hist[i];
}

static void counts_add(struct counts *to, const struct counts *c)
{
	size_t i;

	to->tasks += c->tasks;
	to->recorded += c->recorded;
	to->total_ns += c->total_ns;
	to->cpu_ns += c->cpu_ns;
	to->delay_count += c->delay_count;
	to->delay_ns += c->delay_ns;
	to->exceptions += c->exceptions;
	for (i = 0; i < JW_HIST_SLOTS; i++)
		to->hist[i] += c->hist[i];
}

void jw_metrics__rows_begin(struct jw_metrics *m)
{
	size_t i;

	for (i = 0; i < m->n_series; i++)
		memset(&m->series[i].live, 0, sizeof(m->series[i].live));
	for (i = 0; i < m->n_rows; i++)
		m->rows[i].seen = false;
	free_pending(m);
	m->folded = 0;
}

/*
 * Row @key counted @c in series @s this pass: a row that counts less than before started again,
 * and what it had counted stays in the series.
 */
static int count_row(struct jw_metrics *m, uint64_t key, uint32_t s, const struct counts *c)
{
	uint32_t *at = jw_hindex_get(&m->row_at, key);
	struct row *r;

	if (at) {
		r = &m->rows[*at];
		if (c->tasks < r->last.tasks || c->recorded < r->last.recorded)
			counts_add(&m->series[r->series].retired, &r->last);
	} else {
		if (jw_grow((void **)&m->rows, &m->cap_rows, m->n_rows, sizeof(*m->rows), 16) ||
		    jw_hindex_put(&m->row_at, key, (uint32_t)m->n_rows))
			return -ENOMEM;
		r = &m->rows[m->n_rows++];
		r->key = key;
	}
	r->series = s;
	r->seen = true;
	r->last = *c;
	counts_add(&m->series[s].live, c);
	return 0;
}

int jw_metrics__row(struct jw_metrics *m, const struct jw_metrics_row *r)
{
	const char *process = r->process ? r->process : "", *cls = r->handler_class ?
		r->handler_class : "", *handler = r->handler ? r->handler : "";
	uint64_t skey = series_key(process, cls, handler);
	uint64_t key = row_key(skey, r->pid, r->tid);
	uint32_t *s = jw_hindex_get(&m->by_key, skey), *row = jw_hindex_get(&m->row_at, key);
	struct counts c;
	struct pending *p;

	counts_of(&c, r->val);
	/* A row seen before keeps its series, "other" included. */
	if (row)
		return count_row(m, key, m->rows[*row].series, &c);
	if (s)
		return count_row(m, key, *s, &c);
	if (jw_grow((void **)&m->pending, &m->cap_pending, m->n_pending, sizeof(*m->pending), 16))
		return -ENOMEM;
	p = &m->pending[m->n_pending];
	p->key = key;
	p->c = c;
	p->process = strdup(process);
	p->cls = strdup(cls);
	p->handler = strdup(handler);
	m->n_pending++;
	return p->process && p->cls && p->handler ? 0 : -ENOMEM;
}

static void label_value(struct jw_buf *b, const char *s);

/* The series of @process, @cls, @handler, made when missing; -1 on ENOMEM. */
static int64_t series_of(struct jw_metrics *m, const char *process, const char *cls,
			 const char *handler)
{
	uint64_t key = series_key(process, cls, handler);
	uint32_t *at = jw_hindex_get(&m->by_key, key);
	struct jw_buf labels;
	struct series *s;

	if (at)
		return *at;
	if (jw_grow((void **)&m->series, &m->cap_series, m->n_series, sizeof(*m->series), 16) ||
	    jw_hindex_put(&m->by_key, key, (uint32_t)m->n_series))
		return -1;
	s = &m->series[m->n_series];
	memset(s, 0, sizeof(*s));
	s->process = strdup(process);
	s->cls = strdup(cls);
	s->handler = strdup(handler);
	/* Escaped once: every rendering writes them a few dozen times. */
	jw_buf_init(&labels);
	jw_buf_puts(&labels, "process=\"");
	label_value(&labels, process);
	jw_buf_puts(&labels, "\",handler_class=\"");
	label_value(&labels, cls);
	jw_buf_puts(&labels, "\",handler=\"");
	label_value(&labels, handler);
	jw_buf_putc(&labels, '"');
	s->labels = labels.err ? NULL : labels.data;
	if (!s->labels)
		jw_buf_free(&labels);
	m->n_series++;
	if (!s->process || !s->cls || !s->handler || !s->labels)
		return -1;
	return (int64_t)m->n_series - 1;
}

static int by_tasks_desc(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->c.tasks < y->c.tasks ? 1 : x->c.tasks > y->c.tasks ? -1 : 0;
}

int jw_metrics__rows_end(struct jw_metrics *m)
{
	size_t i, kept = 0;
	int ret = 0;

	/* New keys, busiest first: a series of their own while there is room, else "other". */
	if (m->n_pending)
		qsort(m->pending, m->n_pending, sizeof(*m->pending), by_tasks_desc);
	for (i = 0; i < m->n_pending && !ret; i++) {
		struct pending *p = &m->pending[i];
		bool known = jw_hindex_get(&m->by_key, series_key(p->process, p->cls, p->handler));
		bool own = known || m->handlers < m->max_handlers;
		int64_t s;

		if (own && !known)
			m->handlers++;
		s = own ? series_of(m, p->process, p->cls, p->handler) :
			  series_of(m, p->process, JW_METRICS_OTHER, JW_METRICS_OTHER);
		ret = s < 0 ? -ENOMEM : count_row(m, p->key, (uint32_t)s, &p->c);
	}
	free_pending(m);
	/* A row not seen this pass went: what it counted stays in its series. */
	for (i = 0; i < m->n_rows; i++) {
		if (!m->rows[i].seen) {
			counts_add(&m->series[m->rows[i].series].retired, &m->rows[i].last);
			continue;
		}
		m->rows[kept++] = m->rows[i];
	}
	if (kept != m->n_rows) {
		m->n_rows = kept;
		jw_hindex_free(&m->row_at);
		for (i = 0; i < m->n_rows && !ret; i++)
			ret = jw_hindex_put(&m->row_at, m->rows[i].key, (uint32_t)i);
	}
	for (i = 0; i < m->n_rows; i++)
		m->folded += !strcmp(m->series[m->rows[i].series].handler, JW_METRICS_OTHER) &&
			     !strcmp(m->series[m->rows[i].series].cls, JW_METRICS_OTHER);
	return ret;
}

/* A label value: backslash, quote and newline escaped, bytes that are not UTF-8 as '?'. */
static void label_value(struct jw_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		n = jw_utf8_seq_len(p);
		if (!n) {
			jw_buf_putc(b, '?');
			p++;
			continue;
		}
		if (*p == '\n') {
			jw_buf_puts(b, "\\n");
			p++;
			continue;
		}
		if (*p == '\\' || *p == '"')
			jw_buf_putc(b, '\\');
		while (n--)
			jw_buf_putc(b, (char)*p++);
	}
}

static void family(struct jw_buf *b, const char *name, const char *type, const char *help)
{
	jw_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{process="...",handler_class="...",handler="..." (the caller closes it) */
static void series_labels(struct jw_buf *b, const char *name, const struct series *s)
{
	jw_buf_puts(b, name);
	jw_buf_putc(b, '{');
	jw_buf_puts(b, s->labels ? s->labels : "");
}

/* @v in decimal, without printf: a rendering writes thousands. */
static void put_u64(struct jw_buf *b, uint64_t v)
{
	char d[24];
	int i = (int)sizeof(d) - 1;

	d[i] = 0;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	jw_buf_puts(b, d + i);
}

/* Nanoseconds as seconds, exactly: 1500000 -> 0.001500000. */
static void seconds(struct jw_buf *b, uint64_t ns)
{
	char frac[11];
	uint64_t f = ns % 1000000000ULL;
	int i;

	put_u64(b, ns / 1000000000ULL);
	frac[0] = '.';
	for (i = 9; i >= 1; i--) {
		frac[i] = (char)('0' + f % 10);
		f /= 10;
	}
	frac[10] = 0;
	jw_buf_puts(b, frac);
}

enum field { F_TASKS, F_CPU, F_DELAY, F_DELAYED, F_EXCEPTIONS };

static void counter_lines(struct jw_buf *b, const struct jw_metrics *m, const char *name,
			  enum field f)
{
	size_t i;

	for (i = 0; i < m->n_series; i++) {
		const struct series *s = &m->series[i];
		struct counts c = s->retired;

		counts_add(&c, &s->live);
		series_labels(b, name, s);
		jw_buf_puts(b, "} ");
		switch (f) {
		case F_TASKS:
			put_u64(b, c.tasks);
			break;
		case F_CPU:
			seconds(b, c.cpu_ns);
			break;
		case F_DELAY:
			seconds(b, c.delay_ns);
			break;
		case F_DELAYED:
			put_u64(b, c.delay_count);
			break;
		case F_EXCEPTIONS:
			put_u64(b, c.exceptions);
			break;
		}
		jw_buf_putc(b, '\n');
	}
}

/*
 * The kernel's log2 buckets as a histogram: slot i holds [2^i, 2^(i+1)) us, so its upper bound
 * le is 2^(i+1) us; cumulative, then +Inf, the sum and the count of the recorded tasks.
 */
static void histogram_lines(struct jw_buf *b, const struct jw_metrics *m, const char *name)
{
	char n_bucket[96], n_sum[96], n_count[96], le[JW_HIST_SLOTS][40];
	size_t i, k;

	snprintf(n_bucket, sizeof(n_bucket), "%s_bucket", name);
	snprintf(n_sum, sizeof(n_sum), "%s_sum", name);
	snprintf(n_count, sizeof(n_count), "%s_count", name);
	for (k = 0; k < JW_HIST_SLOTS; k++) {
		uint64_t le_us = 2ULL << k;

		snprintf(le[k], sizeof(le[k]), ",le=\"%" PRIu64 ".%06" PRIu64 "\"} ",
			 le_us / 1000000, le_us % 1000000);
	}
	for (i = 0; i < m->n_series; i++) {
		const struct series *s = &m->series[i];
		struct counts c = s->retired;
		uint64_t cum = 0;

		counts_add(&c, &s->live);
		for (k = 0; k < JW_HIST_SLOTS; k++) {
			cum += c.hist[k];
			series_labels(b, n_bucket, s);
			jw_buf_puts(b, le[k]);
			put_u64(b, cum);
			jw_buf_putc(b, '\n');
		}
		/* The recorded tasks: the slots hold them all (the last one clamps). */
		cum = c.recorded > cum ? c.recorded : cum;
		series_labels(b, n_bucket, s);
		jw_buf_puts(b, ",le=\"+Inf\"} ");
		put_u64(b, cum);
		jw_buf_putc(b, '\n');
		series_labels(b, n_sum, s);
		jw_buf_puts(b, "} ");
		seconds(b, c.total_ns);
		jw_buf_putc(b, '\n');
		series_labels(b, n_count, s);
		jw_buf_puts(b, "} ");
		put_u64(b, cum);
		jw_buf_putc(b, '\n');
	}
}

/* One counter per process and name of @names (@per: the process's array at @off). */
static void proc_lines(struct jw_buf *b, const struct jw_metrics *m, const char *name,
		       const char *label, const char *const *names, size_t n, size_t off)
{
	size_t i, k;

	for (i = 0; i < m->n_procs; i++) {
		const uint64_t *v = (const uint64_t *)((const char *)&m->procs[i] + off);

		for (k = 0; k < n; k++) {
			jw_buf_printf(b, "%s{process=\"", name);
			label_value(b, m->procs[i].process);
			jw_buf_printf(b, "\",%s=\"%s\"} %" PRIu64 "\n", label, names[k], v[k]);
		}
	}
}

void jw_metrics__render(const struct jw_metrics *m, const struct jw_metrics_info *info,
			struct jw_buf *b)
{
	static const char *const drops[JW_DROP_MAX] = {
		[JW_DROP_TASK] = "task", [JW_DROP_SAMPLE] = "sample", [JW_DROP_NEST] = "nest",
		[JW_DROP_STATE] = "thread_state", [JW_DROP_TRACE] = "trace", [JW_DROP_PROC] = "process",
		[JW_DROP_SWITCH] = "switch_unseen", [JW_DROP_WAKING] = "waking_unseen",
	};
	size_t i;

	family(b, "jankwatch_build_info", "gauge", "jankwatch's version and BPF object, always 1.");
	jw_buf_puts(b, "jankwatch_build_info{version=\"");
	label_value(b, info->version ? info->version : "");
	jw_buf_puts(b, "\",bpf=\"");
	label_value(b, info->bpf ? info->bpf : "");
	jw_buf_puts(b, "\"} 1\n");
	family(b, "jankwatch_start_time_seconds", "gauge",
	       "When jankwatch started, seconds since the epoch.");
	jw_buf_printf(b, "jankwatch_start_time_seconds %.3f\n", info->start_time_s);
	family(b, "jankwatch_watched_processes", "gauge", "Processes watched now.");
	jw_buf_printf(b, "jankwatch_watched_processes %" PRIu64 "\n", info->watched);

	family(b, "jankwatch_tasks_total", "counter",
	       "Tasks the watched event loops dispatched, by process, handler class and handler.");
	counter_lines(b, m, "jankwatch_tasks_total", F_TASKS);
	family(b, "jankwatch_task_duration_seconds", "histogram",
	       "Wall time of the recorded tasks (1 in stats_sampling_interval), log2 buckets.");
	histogram_lines(b, m, "jankwatch_task_duration_seconds");
	family(b, "jankwatch_task_cpu_seconds_total", "counter",
	       "CPU time of the recorded tasks.");
	counter_lines(b, m, "jankwatch_task_cpu_seconds_total", F_CPU);
	family(b, "jankwatch_task_delay_seconds_total", "counter",
	       "How long the recorded tasks' work waited past its due time, where it is known.");
	counter_lines(b, m, "jankwatch_task_delay_seconds_total", F_DELAY);
	family(b, "jankwatch_task_delays_total", "counter",
	       "Recorded tasks whose delay is known.");
	counter_lines(b, m, "jankwatch_task_delays_total", F_DELAYED);
	family(b, "jankwatch_task_exceptions_total", "counter",
	       "Tasks closed without their exit (an exception, a longjmp).");
	counter_lines(b, m, "jankwatch_task_exceptions_total", F_EXCEPTIONS);

	family(b, "jankwatch_janks_total", "counter", "Jank events, by process and cause.");
	proc_lines(b, m, "jankwatch_janks_total", "cause", causes, N_CAUSES,
		   offsetof(struct proc_counts, janks));
	family(b, "jankwatch_hangs_total", "counter", "Hang events, by process and cause.");
	proc_lines(b, m, "jankwatch_hangs_total", "cause", causes, N_CAUSES,
		   offsetof(struct proc_counts, hangs));
	family(b, "jankwatch_files_written_total", "counter",
	       "Files written for the events, by process and kind.");
	proc_lines(b, m, "jankwatch_files_written_total", "kind", file_kinds, N_FILES,
		   offsetof(struct proc_counts, files));
	family(b, "jankwatch_reports_withheld_total", "counter",
	       "Events whose files were not written, by process and reason.");
	proc_lines(b, m, "jankwatch_reports_withheld_total", "reason", withheld_names, N_WITHHELD,
		   offsetof(struct proc_counts, withheld));

	family(b, "jankwatch_drops_total", "counter",
	       "Records lost: the kernel's by what, and jankwatch's own.");
	for (i = 0; i < JW_DROP_MAX; i++)
		jw_buf_printf(b, "jankwatch_drops_total{what=\"%s\"} %" PRIu64 "\n",
			      drops[i] ? drops[i] : "unknown", info->drops[i]);
	jw_buf_printf(b, "jankwatch_drops_total{what=\"sample_buffer\"} %" PRIu64 "\n",
		      info->lost_samples);
	jw_buf_printf(b, "jankwatch_drops_total{what=\"write_error\"} %" PRIu64 "\n",
		      info->write_errors);
	if (info->misses && info->misses->counted) {
		family(b, "jankwatch_bpf_missed_runs_total", "counter",
		       "Runs of jankwatch's BPF programs the kernel skipped, one being already "
		       "running on that CPU (recursion_misses), by program.");
		for (i = 0; i < info->misses->n; i++) {
			jw_buf_puts(b, "jankwatch_bpf_missed_runs_total{program=\"");
			label_value(b, info->misses->prog[i].name);
			jw_buf_printf(b, "\"} %" PRIu64 "\n", info->misses->prog[i].runs);
		}
	}
	family(b, "jankwatch_metrics_handlers", "gauge",
	       "Handlers with series of their own (at most metrics_max_handlers).");
	jw_buf_printf(b, "jankwatch_metrics_handlers %zu\n", m->handlers);
	family(b, "jankwatch_metrics_folded_rows", "gauge",
	       "Statistics rows summed into handler=\"other\" at the last pass.");
	jw_buf_printf(b, "jankwatch_metrics_folded_rows %zu\n", m->folded);
}
