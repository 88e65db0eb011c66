// SPDX-License-Identifier: GPL-2.0-only
/* Trace windows: gathering the events of a long jank, and writing its trace log. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "report/handler.h"
#include "report/report_trace.h"
#include "base/strpool.h"
#include "config/options.h"
#include "report/trace.h"

#define NS_PER_MS 1000000ULL
#define MAX_EVENTS (1U << 18)	/* per process: 256 Ki lines, about 30 MB at most */
#define MAX_SAMPLES 2048	/* per window: 20 s of samples at 10 ms */
#define MAX_NAMED 32		/* janks of one window named after their events */

enum window_state { WINDOW_NONE = 0, WINDOW_OPEN, WINDOW_CLOSED };
enum window_verdict { VERDICT_UNKNOWN = 0, VERDICT_KEEP, VERDICT_DROP };

/* A line of the trace log, with its arrival order to keep equal timestamps in order. */
struct line {
	struct jw_trace_event ev;
	uint64_t order;
};

/* A traced process: its events, and its window. */
struct traced {
	pid_t pid;
	struct jw_proc *proc;
	bool kernel_on;			/* in the kernel's trace_pids */
	struct line *lines;		/* kept events, in arrival order */
	size_t n_lines, cap_lines;
	enum window_state state;
	enum window_verdict verdict;
	uint64_t from_ns, until_ns;	/* what the window covers */
	uint32_t tid;			/* the task's thread, its number, start and end (0: running) */
	uint64_t seq, task_start, task_end;
	const char *task_name;		/* the handler its event named */
	struct {			/* the janks in the window, named as their events */
		uint32_t tid;
		uint64_t start;
		const char *name;
	} named[MAX_NAMED];
	size_t n_named;
	uint64_t time_ms;		/* when the window opened, for the files' names */
	void **samples;
	size_t n_samples;
};

struct jw_tracer {
	struct jw_tracer_opts opts;
	struct traced procs[JW_MAX_PIDS];
	struct jw_strpool *names;
	uint64_t order;
	uint64_t written;
	uint64_t lost;
	struct jw_frame frames[JW_MAX_FRAMES];
};

struct jw_tracer *jw_tracer__new(const struct jw_tracer_opts *opts)
{
	struct jw_tracer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->opts = *opts;
	t->names = jw_strpool__new();
	if (!t->names) {
		free(t);
		return NULL;
	}
	return t;
}

static struct traced *find(struct jw_tracer *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < JW_MAX_PIDS; i++)
		if (t->procs[i].pid == pid && pid)
			return &t->procs[i];
	return NULL;
}

static struct traced *find_or_add(struct jw_tracer *t, struct jw_proc *proc)
{
	struct traced *tp = find(t, proc->target.pid);
	size_t i;

	for (i = 0; !tp && i < JW_MAX_PIDS; i++) {
		if (!t->procs[i].pid) {
			tp = &t->procs[i];
			tp->pid = proc->target.pid;
		}
	}
	if (tp)
		tp->proc = proc;
	return tp;
}

/* The kernel sends @tp's events while its window is open, or always with the flight recorder. */
static void kernel_events(struct jw_tracer *t, struct traced *tp, bool on)
{
	int ret;

	if (tp->kernel_on == on || !t->opts.kernel_events)
		return;
	ret = t->opts.kernel_events(t->opts.ctx, tp->pid, on);
	if (ret) {
		jw_log(JW_LOG_WARN, "pid %d: cannot %s its trace events: %s", tp->pid,
		       on ? "start" : "stop", strerror(-ret));
		return;
	}
	tp->kernel_on = on;
}

static void add_line(struct jw_tracer *t, struct traced *tp, const struct jw_trace_event *ev)
{
	if (tp->n_lines == tp->cap_lines) {
		size_t cap = tp->cap_lines ? tp->cap_lines * 2 : 1024;
		struct line *bigger;

		if (cap > MAX_EVENTS || !(bigger = realloc(tp->lines, cap * sizeof(*bigger)))) {
			t->lost++;
			return;
		}
		tp->lines = bigger;
		tp->cap_lines = cap;
	}
	tp->lines[tp->n_lines].ev = *ev;
	tp->lines[tp->n_lines++].order = t->order++;
}

/* Forgets the lines older than @before_ns. */
static void prune(struct traced *tp, uint64_t before_ns)
{
	size_t i, kept = 0;

	for (i = 0; i < tp->n_lines; i++)
		if (tp->lines[i].ev.ts_ns >= before_ns)
			tp->lines[kept++] = tp->lines[i];
	tp->n_lines = kept;
}

static void free_samples(struct traced *tp)
{
	size_t i;

	for (i = 0; i < tp->n_samples; i++)
		free(tp->samples[i]);
	free(tp->samples);
	tp->samples = NULL;
	tp->n_samples = 0;
}

static void keep_sample(struct jw_tracer *t, struct traced *tp, const void *rec)
{
	const struct jw_rec_hdr *h = rec;
	void **bigger;
	void *copy;

	if (tp->n_samples >= MAX_SAMPLES) {
		t->lost++;
		return;
	}
	if (!(tp->n_samples & (tp->n_samples - 1))) {
		bigger = realloc(tp->samples, (tp->n_samples ? tp->n_samples * 2 : 16) *
				 sizeof(*bigger));
		if (!bigger) {
			t->lost++;
			return;
		}
		tp->samples = bigger;
	}
	copy = malloc(h->size);
	if (!copy) {
		t->lost++;
		return;
	}
	memcpy(copy, rec, h->size);
	tp->samples[tp->n_samples++] = copy;
}

/* The window is done with: its events are kept only for the flight recorder. */
static void end_window(struct jw_tracer *t, struct traced *tp)
{
	free_samples(tp);
	tp->state = WINDOW_NONE;
	tp->verdict = VERDICT_UNKNOWN;
	tp->task_name = NULL;
	tp->n_named = 0;
	if (!t->opts.flight_ns) {
		tp->n_lines = 0;
		kernel_events(t, tp, false);
	}
}

void jw_tracer__set_flight(struct jw_tracer *t, uint64_t flight_ns)
{
	size_t i;

	if (!t || t->opts.flight_ns == flight_ns)
		return;
	t->opts.flight_ns = flight_ns;
	for (i = 0; i < JW_MAX_PIDS; i++) {
		struct traced *tp = &t->procs[i];

		if (!tp->pid)
			continue;
		if (flight_ns)
			kernel_events(t, tp, true);
		else if (tp->state == WINDOW_NONE)
			end_window(t, tp);	/* outside a window: nothing more to keep */
	}
}

void jw_tracer__watch(struct jw_tracer *t, struct jw_proc *proc)
{
	struct traced *tp;

	if (!t || !t->opts.flight_ns || !(tp = find_or_add(t, proc)))
		return;
	kernel_events(t, tp, true);
}

/*
 * What a slice is called (handler.h's rule). A task's name read by the kernel comes only with
 * its report; its stacks are read only then too.
 */
static const char *slice_name(struct jw_tracer *t, struct jw_proc *p,
			      const struct jw_slice_rec *rec)
{
	struct jw_handler_facts f = { .probe_id = rec->probe_id, .inner_probe = rec->inner_probe,
				      .handler_addr = rec->handler_addr,
				      .klass = rec->handler_class,
				      .detail = rec->handler_detail };
	char buf[512];

	return jw_strpool__intern(t->names, jw_handler_name(p, &f, buf, sizeof(buf)));
}

static void fill_thread(struct jw_trace_event *ev, const struct traced *tp, uint32_t tid)
{
	ev->tid = tid;
	ev->tgid = tp->pid;
	memcpy(ev->comm, tp->proc->target.comm, sizeof(ev->comm));
}

/* A task's slice: B at its start, E and its wall time (a counter) at its end (0: none). */
static void add_slice(struct jw_tracer *t, struct traced *tp, uint32_t tid, uint32_t cpu,
		      uint64_t start, uint64_t end, const char *name)
{
	struct jw_trace_event ev = {
		.kind = JW_TRACE_BEGIN, .ts_ns = start, .cpu = cpu, .name = name,
	};

	fill_thread(&ev, tp, tid);
	add_line(t, tp, &ev);
	if (!end)
		return;
	ev.kind = JW_TRACE_END;
	ev.ts_ns = end;
	add_line(t, tp, &ev);
	ev.kind = JW_TRACE_COUNTER;
	ev.name = "task_ms";
	ev.value = (int64_t)((end - start) / NS_PER_MS);
	add_line(t, tp, &ev);
}

void jw_tracer__sched(struct jw_tracer *t, const struct jw_sched_rec *rec)
{
	struct jw_trace_event ev = {
		.ts_ns = rec->hdr.ts_ns,
		.kind = rec->kind == JW_SCHED_WAKING ? JW_TRACE_WAKING : JW_TRACE_SWITCH,
		.cpu = rec->cpu,
		.tid = rec->hdr.tid,
		.tgid = rec->hdr.pid,
		.prio = rec->prio,
		.prev_state = rec->prev_state,
		.other_tid = rec->other_tid,
		.other_prio = rec->other_prio,
		.target_cpu = rec->target_cpu,
	};
	struct traced *a, *b;

	if (!t)
		return;
	a = find(t, rec->hdr.pid);
	b = find(t, rec->other_pid);
	memcpy(ev.comm, rec->comm, sizeof(ev.comm));
	memcpy(ev.other_comm, rec->other_comm, sizeof(ev.other_comm));
	/* A waking line is the woken process's; a switch, either side's. */
	if (a && rec->kind == JW_SCHED_SWITCH && a->kernel_on)
		add_line(t, a, &ev);
	if (b && b != a && b->kernel_on)
		add_line(t, b, &ev);
}

void jw_tracer__slice(struct jw_tracer *t, const struct jw_slice_rec *rec)
{
	struct traced *tp = t ? find(t, rec->hdr.pid) : NULL;

	if (!tp || !tp->kernel_on || !tp->proc)
		return;
	add_slice(t, tp, rec->hdr.tid, rec->cpu, rec->start_ns, rec->hdr.ts_ns,
		  slice_name(t, tp->proc, rec));
	if (tp->state != WINDOW_NONE && rec->seq == tp->seq && rec->hdr.tid == tp->tid)
		tp->task_end = rec->hdr.ts_ns;
}

void jw_tracer__sample(struct jw_tracer *t, const struct jw_sample_rec *rec)
{
	struct traced *tp = t ? find(t, rec->hdr.pid) : NULL;

	if (tp && tp->state == WINDOW_OPEN && rec->hdr.ts_ns >= tp->from_ns &&
	    rec->hdr.ts_ns <= tp->until_ns)
		keep_sample(t, tp, rec);
}

static void start_window(struct jw_tracer *t, struct traced *tp, uint32_t tid, uint64_t seq,
			 uint64_t start_ns, uint64_t now_ns)
{
	tp->state = WINDOW_OPEN;
	tp->verdict = VERDICT_UNKNOWN;
	tp->from_ns = now_ns > t->opts.flight_ns ? now_ns - t->opts.flight_ns : 0;
	tp->until_ns = now_ns + t->opts.window_ns;
	tp->tid = tid;
	tp->seq = seq;
	tp->task_start = start_ns;
	tp->task_end = 0;
	tp->time_ms = jw_clocks_epoch_ms(t->opts.clocks, now_ns);
	kernel_events(t, tp, true);
}

int jw_tracer__open(struct jw_tracer *t, struct jw_proc *proc, uint32_t tid, uint64_t seq,
		    uint64_t start_ns, uint64_t now_ns, void *const *held, size_t n)
{
	struct traced *tp;
	size_t i;

	if (!t || !(tp = find_or_add(t, proc)))
		return -ENOSPC;
	if (tp->state != WINDOW_NONE)
		return 0;
	start_window(t, tp, tid, seq, start_ns, now_ns);
	/* The task's slice starts at its true start, and its samples with it. */
	for (i = 0; i < n; i++)
		keep_sample(t, tp, held[i]);
	jw_log(JW_LOG_DEBUG, "pid %d: a task past the trace threshold: trace window open for %.1f s",
	       tp->pid, t->opts.window_ns / 1e9);
	return 0;
}

static void file_names(const struct traced *tp, char names[2][NAME_MAX + 1])
{
	jw_trace_name(tp->pid, tp->time_ms, JW_TRACE_FTRACE_SUFFIX, names[0], NAME_MAX + 1);
	jw_trace_name(tp->pid, tp->time_ms, JW_TRACE_PERF_SUFFIX, names[1], NAME_MAX + 1);
}

size_t jw_tracer__keep(struct jw_tracer *t, struct jw_proc *proc, const struct jw_task_rec *task,
		       const char *handler, void *const *samples, size_t n,
		       char paths[2][PATH_MAX])
{
	char names[2][NAME_MAX + 1];
	struct traced *tp;
	size_t i;

	if (!t || !t->opts.logdir || jw_logdir__over_quota(t->opts.logdir) ||
	    !(tp = find_or_add(t, proc)))
		return 0;
	if (tp->state == WINDOW_NONE) {
		/* The crossing was not seen while the task ran: the window starts at its end. */
		start_window(t, tp, task->hdr.tid, task->seq, task->start_ns, task->end_ns);
		tp->task_end = task->end_ns;
		if (!t->opts.flight_ns)
			add_slice(t, tp, task->hdr.tid, 0, task->start_ns, task->end_ns, "task");
		for (i = 0; i < n; i++)
			keep_sample(t, tp, samples[i]);
	} else if (tp->seq != task->seq || tp->tid != task->hdr.tid) {
		/* Another task's window: it holds this one too if this one ran inside it. */
		if (task->start_ns < tp->from_ns || task->end_ns > tp->until_ns ||
		    tp->n_named == MAX_NAMED)
			return 0;
	} else {
		tp->task_end = task->end_ns;
		tp->task_name = jw_strpool__intern(t->names, handler && *handler ? handler : "task");
	}
	tp->verdict = VERDICT_KEEP;
	if (tp->n_named < MAX_NAMED) {
		tp->named[tp->n_named].tid = task->hdr.tid;
		tp->named[tp->n_named].start = task->start_ns;
		tp->named[tp->n_named++].name = jw_strpool__intern(t->names, handler && *handler ?
								   handler : "task");
	}
	file_names(tp, names);
	for (i = 0; i < 2; i++)
		snprintf(paths[i], PATH_MAX, "%s/%s", jw_logdir__path(t->opts.logdir), names[i]);
	return 2;
}

void jw_tracer__settle(struct jw_tracer *t, pid_t pid, uint64_t seq)
{
	struct traced *tp = t ? find(t, pid) : NULL;

	if (!tp || tp->state == WINDOW_NONE || tp->seq != seq || tp->verdict != VERDICT_UNKNOWN)
		return;
	tp->verdict = VERDICT_DROP;
	if (tp->state == WINDOW_CLOSED)
		end_window(t, tp);
}

static int by_time(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The window's lines, in time order, its task's slice named after its event. */
static int write_ftrace(struct jw_tracer *t, struct traced *tp, FILE *f)
{
	struct jw_trace_event *evs = calloc(tp->n_lines + 1, sizeof(*evs));
	bool begun = false;
	size_t i, n = 0;
	int ret;

	(void)t;	/* the shape write_file() takes */
	if (!evs)
		return -ENOMEM;
	qsort(tp->lines, tp->n_lines, sizeof(*tp->lines), by_time);
	for (i = 0; i < tp->n_lines; i++) {
		struct jw_trace_event *ev = &tp->lines[i].ev;
		bool task = ev->tid == tp->tid && ev->ts_ns == tp->task_start;
		size_t k;

		if (task && ev->kind == JW_TRACE_BEGIN)
			begun = true;
		for (k = 0; ev->kind == JW_TRACE_BEGIN && k < tp->n_named; k++)
			if (ev->tid == tp->named[k].tid && ev->ts_ns == tp->named[k].start)
				ev->name = tp->named[k].name;
		/* Only lines in the window; the task's slice whole. */
		if ((ev->ts_ns < tp->from_ns && !task) || ev->ts_ns > tp->until_ns)
			continue;
		evs[n++] = *ev;
	}
	/* A task still running has no slice from the kernel yet: it begins, and goes on. */
	if (!begun) {
		memmove(evs + 1, evs, n * sizeof(*evs));
		memset(evs, 0, sizeof(*evs));
		evs[0].kind = JW_TRACE_BEGIN;
		evs[0].ts_ns = tp->task_start;
		evs[0].name = tp->task_name ? tp->task_name : "task";
		fill_thread(&evs[0], tp, tp->tid);
		n++;
	}
	ret = jw_trace_write_ftrace(f, evs, n);
	free(evs);
	return ret;
}

static int write_samples(struct jw_tracer *t, struct traced *tp, FILE *f)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < tp->n_samples && !ret; i++) {
		const struct jw_sample_rec *s = tp->samples[i];
		size_t n = jw_stacks__frames(t->opts.stacks, tp->proc->sym, s, t->frames);

		/* Named outermost first; perf script lists the leaf first. */
		for (j = 0; j < n / 2; j++) {
			struct jw_frame tmp = t->frames[j];

			t->frames[j] = t->frames[n - 1 - j];
			t->frames[n - 1 - j] = tmp;
		}
		ret = jw_trace_write_perf_sample(f, tp->proc->target.comm, tp->pid, s->hdr.tid,
						 s->hdr.ts_ns, t->frames, n);
	}
	return ret;
}

static void write_file(struct jw_tracer *t, struct traced *tp, const char *name,
		       int (*fn)(struct jw_tracer *, struct traced *, FILE *))
{
	struct jw_logfile lf;
	char path[PATH_MAX];
	int ret;

	ret = jw_logdir__create(t->opts.logdir, name, &lf);
	if (!ret) {
		ret = fn(t, tp, lf.f);
		if (ret)
			jw_logdir__abort(t->opts.logdir, &lf);
		else
			ret = jw_logdir__commit(t->opts.logdir, &lf, path, sizeof(path));
	}
	if (ret) {
		jw_log(JW_LOG_WARN, "cannot write %s/%s: %s", jw_logdir__path(t->opts.logdir), name,
		       ret == -EDQUOT ? "the log directory's quota is reached" : strerror(-ret));
		return;
	}
	t->written++;
	jw_log(JW_LOG_INFO, "trace log %s written", path);
}

static void write_window(struct jw_tracer *t, struct traced *tp)
{
	char names[2][NAME_MAX + 1];

	file_names(tp, names);
	write_file(t, tp, names[0], write_ftrace);
	write_file(t, tp, names[1], write_samples);
}

void jw_tracer__tick(struct jw_tracer *t, uint64_t now_ns)
{
	size_t i;

	for (i = 0; t && i < JW_MAX_PIDS; i++) {
		struct traced *tp = &t->procs[i];

		if (!tp->pid)
			continue;
		if (tp->state == WINDOW_NONE) {
			if (t->opts.flight_ns && now_ns > t->opts.flight_ns && tp->n_lines &&
			    tp->lines[0].ev.ts_ns < now_ns - t->opts.flight_ns - NS_PER_MS * 100)
				prune(tp, now_ns - t->opts.flight_ns);
			continue;
		}
		if (tp->state == WINDOW_OPEN && now_ns >= tp->until_ns) {
			tp->state = WINDOW_CLOSED;
			if (!t->opts.flight_ns)
				kernel_events(t, tp, false);
		}
		if (tp->state != WINDOW_CLOSED || tp->verdict == VERDICT_UNKNOWN)
			continue;
		if (tp->verdict == VERDICT_KEEP)
			write_window(t, tp);
		end_window(t, tp);
	}
}

/* Writes @tp's window when it was kept, whether or not it closed, and forgets @tp. */
static void finish(struct jw_tracer *t, struct traced *tp)
{
	if (tp->state != WINDOW_NONE && tp->verdict == VERDICT_KEEP) {
		if (tp->until_ns > tp->from_ns && tp->state == WINDOW_OPEN)
			jw_log(JW_LOG_INFO, "pid %d: trace window cut short", tp->pid);
		write_window(t, tp);
	}
	free_samples(tp);
	kernel_events(t, tp, false);
	free(tp->lines);
	memset(tp, 0, sizeof(*tp));
}

void jw_tracer__forget(struct jw_tracer *t, pid_t pid)
{
	struct traced *tp = t ? find(t, pid) : NULL;

	if (tp)
		finish(t, tp);
}

uint64_t jw_tracer__written(const struct jw_tracer *t)
{
	return t ? t->written : 0;
}

uint64_t jw_tracer__lost(const struct jw_tracer *t)
{
	return t ? t->lost : 0;
}

void jw_tracer__flush(struct jw_tracer *t)
{
	size_t i;

	for (i = 0; t && i < JW_MAX_PIDS; i++)
		if (t->procs[i].pid)
			finish(t, &t->procs[i]);
}

void jw_tracer__free(struct jw_tracer *t)
{
	if (!t)
		return;
	jw_tracer__flush(t);
	jw_strpool__free(t->names);
	free(t);
}
