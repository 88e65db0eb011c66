// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/text.h"
#include "report/defaults_said.h"
#include "report/flamegraph.h"
#include "report/handler.h"
#include "report/report.h"
#include "report/report_event.h"
#include "report/report_hold.h"
#include "report/report_pprof.h"
#include "report/report_raw.h"
#include "report/report_stack.h"
#include "report/stacktree.h"
#include "report/trace.h"
#include "report/waker.h"
#include "stacks/debuginfo.h"
#include "stacks/stacks.h"

#define NS_PER_MS 1000000ULL

struct jw_reporter {
	struct jw_reporter_opts opts;
	const struct jw_clocks *clocks;	/* opts' or own */
	struct jw_clocks own_clocks;
	struct jw_buf line;
	struct jw_buf waker_stack;	/* the current report's waker stack */
	uint32_t unwound;		/* samples unwound for the current report */
	struct jw_handler_tally handlers;	/* the current report's, from its stacks */
	char handler_text[JW_HANDLER_NAME_LEN + JW_HANDLER_FILE_LEN + 16];	/* a Python one */
	char class_text[256];						/* a Qt one */
	bool raw_failed;		/* a raw capture write failed (said once) */
	bool budgets_failed;		/* saving the budgets failed (said once) */
	struct jw_report_counts counts;
	struct jw_defaults_said said;
	struct jw_tracer *tracer;	/* keeps the trace windows of TRACE verdicts; or NULL */
	struct jw_hold held;		/* reports waiting for debug files */
	char boot_id[40];		/* this boot's, in each event's jank_id */
	char jank_id[17];		/* the current event's */
};

/* How long a report may wait for the debug files its stacks need (then written without). */
#define HOLD_NS (5 * 1000000000ULL)

/* The kernel's id of this boot ("" when unreadable). */
static void read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = 0;
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/*
 * An event's id, 16 hex digits: FNV-1a of the boot, the thread, the task's start and the kind,
 * so that the same event sent twice (a shipper's retry) has the same one, and a hang and the
 * jank its task later becomes differ.
 */
static void make_jank_id(const char *boot_id, const struct jw_task_rec *t, char *out, size_t len)
{
	char key[160];
	uint64_t h = 0xcbf29ce484222325ULL;
	int n, i;

	n = snprintf(key, sizeof(key), "%s/%u/%u/%llu/%c", boot_id, t->hdr.pid, t->hdr.tid,
		     (unsigned long long)t->start_ns, t->hdr.flags & JW_TASK_HANG ? 'h' : 'j');
	for (i = 0; i < n && i < (int)sizeof(key); i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ULL;
	}
	snprintf(out, len, "%016llx", (unsigned long long)h);
}

struct jw_reporter *jw_reporter__new(const struct jw_reporter_opts *opts)
{
	struct jw_reporter *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->opts = *opts;
	r->clocks = opts->clocks;
	if (!r->clocks) {
		jw_clocks_init(&r->own_clocks);
		r->clocks = &r->own_clocks;
	}
	jw_buf_init(&r->line);
	jw_buf_init(&r->waker_stack);
	read_boot_id(r->boot_id, sizeof(r->boot_id));
	return r;
}

void jw_reporter__free(struct jw_reporter *r)
{
	if (!r)
		return;
	/* Written before now, by jw_reporter__flush(all); any left are dropped with their copies. */
	while (r->held.n) {
		struct jw_held h;

		jw_hold_take(&r->held, 0, &h);
		jw_held_free(&h);
	}
	jw_buf_free(&r->line);
	jw_buf_free(&r->waker_stack);
	free(r);
}

const struct jw_report_counts *jw_reporter__counts(const struct jw_reporter *r)
{
	return &r->counts;
}

/*
 * Merges the samples into @tree, and into @profile unless NULL: sample_count sampling periods
 * evenly spaced over the task, a blocked sample standing for the periods it slept. @counts (n
 * entries) receives the periods kept of each sample; @kept their sum, @total all periods'.
 */
static int build_tree(struct jw_reporter *r, struct jw_proc *proc, void *const *samples,
		      size_t n, struct jw_stacktree *tree, struct jw_pprof *profile,
		      uint32_t *counts, uint32_t *kept, uint64_t *total)
{
	size_t want = r->opts.params->v[JW_P_SAMPLE_COUNT];
	int64_t period_ns = (int64_t)r->opts.params->v[JW_P_SAMPLE_PERIOD_MS] * (int64_t)NS_PER_MS;
	int64_t values[JW_PPROF_VALUES];
	struct jw_frame *frames;
	uint32_t *weights;
	size_t i;
	int ret = 0;

	weights = calloc(n + 1, sizeof(*weights));
	frames = calloc(JW_MAX_FRAMES, sizeof(*frames));
	if (!weights || !frames) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct jw_sample_rec *s = samples[i];

		weights[i] = s->weight ? s->weight : 1;
		*total += weights[i];
	}
	*kept = jw_pick_weighted(weights, n, want, counts);
	for (i = 0; i < n && !ret; i++) {
		const struct jw_sample_rec *s = samples[i];
		bool complete, asleep = s->kind != JW_SAMPLE_ONCPU;
		size_t nf;

		if (!counts[i])
			continue;
		r->unwound++;
		nf = jw_stacks__frames(r->opts.stacks, proc->sym, s, frames);
		complete = jw_stacks_complete(frames, nf);
		if (proc->handler_rule)
			jw_handler_tally_add(&r->handlers, proc->handler_rule, frames, nf, counts[i]);
		ret = jw_stacktree__add(tree, frames, nf, complete, counts[i], asleep);
		if (!ret && profile) {
			/*
			 * Asleep, the profile's stack ends at the blocking function: the
			 * scheduler's own frames are left out, as /proc/PID/wchan leaves them.
			 */
			while (asleep && nf > 1 && frames[nf - 1].kind == JW_FRAME_KERNEL &&
			       jw_ksyms__in_sched(r->opts.ksyms, frames[nf - 1].pc))
				nf--;
			jw_report_pprof_values(s, counts[i], *kept, *total, period_ns, values);
			ret = jw_pprof__add(profile, frames, nf, values, NULL, 0);
		}
	}
out:
	free(frames);
	free(weights);
	return ret;
}

/*
 * The process's name as its users know it: the --name it was watched by (an Android app's
 * package); else the kernel's name for it (the name it was started by: redis-server, not the
 * redis-check-rdb its symlink points to), or the executable's base name when that only lengthens
 * a name the kernel cut at 15 characters.
 */
const char *jw_report_bundle_name(const struct jw_proc *proc)
{
	const char *slash = strrchr(proc->target.exe, '/');
	const char *base = slash ? slash + 1 : proc->target.exe;
	size_t n = strlen(proc->target.comm);

	if (proc->target.name[0])
		return proc->target.name;
	if (!n || (n >= 15 && strncmp(base, proc->target.comm, n) == 0))
		return base;
	return proc->target.comm;
}

/* Writes the stack log; on success sets @path. 0, -EDQUOT (over the quota) or -errno. */
static int write_stack_log(struct jw_reporter *r, const struct jw_stack_report *sr,
			   uint64_t time_ms, char *path, size_t len)
{
	struct jw_logfile lf;
	char name[128];
	int ret;

	jw_stack_report_name(sr->pid, time_ms, name, sizeof(name));
	ret = jw_logdir__create(r->opts.logdir, name, &lf);
	if (ret)
		return ret;
	ret = jw_stack_report_write(sr, lf.f);
	if (ret) {
		jw_logdir__abort(r->opts.logdir, &lf);
		return ret;
	}
	return jw_logdir__commit(r->opts.logdir, &lf, path, len);
}

static int emit_event(struct jw_reporter *r, const struct jw_event *ev)
{
	int ret;

	jw_buf_reset(&r->line);
	jw_event_format_bounded(ev, &r->line, (size_t)r->opts.params->v[JW_P_EVENTS_LINE_MAX]);
	if (r->line.err)
		return r->line.err;
	if (r->opts.out && (fwrite(r->line.data, 1, r->line.len, r->opts.out) != r->line.len ||
			    fflush(r->opts.out)))
		jw_log(JW_LOG_WARN, "cannot write an event to stdout: %s", strerror(errno));
	ret = jw_logdir__append_event(r->opts.logdir, r->line.data, r->line.len);
	if (ret && ret != -EDQUOT) {
		r->counts.write_errors++;
		jw_log(JW_LOG_WARN, "cannot append to %s/events.jsonl: %s",
		       jw_logdir__path(r->opts.logdir), strerror(-ret));
	}
	if (r->opts.on_event)
		r->opts.on_event(r->opts.on_event_ctx, ev, r->line.data, r->line.len);
	return 0;
}

/* The event's fields that come from the task and the process. */
static void fill_event(struct jw_reporter *r, const struct jw_proc *proc,
		       const struct jw_task_rec *t, uint64_t time_ms, struct jw_event *ev)
{
	uint64_t wall = t->end_ns - t->start_ns, off = t->runq_ns + t->blocked_ns;

	ev->event = t->hdr.flags & JW_TASK_HANG ? "MAIN_THREAD_HANG" : "MAIN_THREAD_JANK";
	ev->time_ms = time_ms;
	ev->bundle_name = jw_report_bundle_name(proc);
	ev->bundle_version = jw_symbolizer__exe_build_id(proc->sym);
	ev->pid = t->hdr.pid;
	ev->uid = proc->target.uid;
	ev->tid = t->hdr.tid;
	ev->begin_time_ms = jw_clocks_epoch_ms(r->clocks, t->start_ns);
	ev->end_time_ms = jw_clocks_epoch_ms(r->clocks, t->end_ns);
	ev->app_start_jiffies_time = proc->target.start_jiffies;
	ev->loop = proc->loop;
	/*
	 * The dispatch the preset saw ran less than half the task (a wait inside a dispatch ended
	 * the task before: the rest of it ran here without one open, GTK's X11 round trips): the
	 * stacks say what the time went to, when the preset reads them.
	 */
	const char *from_stacks = proc->handler_rule ? jw_handler_tally_top(&r->handlers) : NULL;
	bool outside = from_stacks && t->inner_probe && t->inner_ns < wall / 2;
	struct jw_handler_facts f = {
		.probe_id = t->probe_id,
		.inner_probe = outside ? 0 : t->inner_probe,
		.handler_addr = outside ? 0 : t->handler_addr,
		.name = t->handler_name,
		.name_len = sizeof(t->handler_name),
		.file = t->handler_file,
		.file_len = sizeof(t->handler_file),
		.line = t->handler_line,
		.from_stacks = from_stacks,
		.klass = outside ? 0 : t->handler_class,
		.detail = outside ? 0 : t->handler_detail,
	};

	ev->handler = jw_handler_name(proc, &f, r->handler_text, sizeof(r->handler_text));
	ev->handler_class = jw_handler_class(proc, &f, r->class_text, sizeof(r->class_text));
	ev->wall_ms = (double)wall / NS_PER_MS;
	ev->cpu_ms = (double)(wall > off ? wall - off : 0) / NS_PER_MS;
	ev->runq_ms = (double)t->runq_ns / NS_PER_MS;
	ev->blocked_ms = (double)t->blocked_ns / NS_PER_MS;
	ev->io_ms = (double)t->io_ns / NS_PER_MS;
	ev->has_offcpu = true;
	ev->offcpu_partial = t->hdr.flags & JW_TASK_SWITCH_UNSEEN;
	ev->has_delay = t->delay_ns != JW_DELAY_UNKNOWN;
	ev->delay_ms = ev->has_delay ? (double)t->delay_ns / NS_PER_MS : 0;
	ev->cause = jw_event_cause(ev->cpu_ms, ev->runq_ms, ev->blocked_ms, ev->io_ms);
	ev->dropped = t->sample_drops;
	make_jank_id(r->boot_id, t, r->jank_id, sizeof(r->jank_id));
	ev->jank_id = r->jank_id;
}

/* Writes the stack log of @ev and records the outcome in it; @path receives the file's path. */
static void add_stack_log(struct jw_reporter *r, const struct jw_proc *proc,
			  const struct jw_task_rec *t, const struct jw_stacktree *tree,
			  struct jw_event *ev, char *path, size_t len)
{
	struct jw_frame wchan;
	struct jw_stack_report sr = {
		.pid = ev->pid,
		.tid = ev->tid,
		.exe = proc->target.exe,
		.build_id = ev->bundle_version,
		.begin_time_ms = ev->begin_time_ms,
		.end_time_ms = ev->end_time_ms,
		.wall_ms = ev->wall_ms,
		.cpu_ms = ev->cpu_ms,
		.runq_ms = ev->runq_ms,
		.blocked_ms = ev->blocked_ms,
		.delay_ms = ev->delay_ms,
		.has_delay = ev->has_delay,
		.samples = ev->samples,
		.heaviest_stack = ev->heaviest_stack,
		.waker = ev->waker,
		.waker_stack = r->waker_stack.len ? r->waker_stack.data : NULL,
		.tree = tree,
		.format = r->opts.format,
		.debug_pending = jw_debuginfo__pending(jw_debuginfo_global()),
	};
	int ret;

	/* With no stack at all, the blocking kernel function recorded as the thread blocked. */
	jw_ksyms__frame(r->opts.ksyms, t->wchan_ip, &wchan);
	sr.wchan = t->wchan_ip ? wchan.symbol : NULL;
	ret = write_stack_log(r, &sr, ev->time_ms, path, len);

	if (ret == 0) {
		ev->n_external_log = 1;
		r->counts.stack_logs++;
	} else if (ret == -EDQUOT) {
		ev->log_over_limit = true;
		r->counts.withheld++;
	} else {
		r->counts.write_errors++;
		jw_log(JW_LOG_WARN, "cannot write a stack log in %s: %s",
		       jw_logdir__path(r->opts.logdir), strerror(-ret));
	}
}

/* Whether task @t, ended, may be decided for a trace (whose window is its own moment). */
static bool may_trace(const struct jw_reporter *r, const struct jw_task_rec *t,
		      const struct jw_task_facts *facts)
{
	uint64_t from = jw_policy__trace_from_ns(r->opts.params);

	return from && t->end_ns - t->start_ns >= from &&
	       jw_policy__trace_possible(r->opts.policy, facts);
}

/*
 * The outcome @ret of writing @what beside a jank's stack log or trace: listed in @ev and counted
 * in @count when written, the event said over the quota when the quota withheld it, else said.
 */
static void beside_written(struct jw_reporter *r, struct jw_event *ev, int ret, uint64_t *count,
			   const char *what)
{
	if (ret == 0) {
		ev->n_external_log++;
		(*count)++;
	} else if (ret == -EDQUOT) {
		ev->log_over_limit = true;
	} else {
		r->counts.write_errors++;
		jw_log(JW_LOG_WARN, "cannot write %s in %s: %s", what,
		       jw_logdir__path(r->opts.logdir), strerror(-ret));
	}
}

/* A jank whose files the budgets or the back-off withheld: counted, and said once at a terminal. */
static void count_withheld(struct jw_reporter *r, const struct jw_proc *proc,
			   const struct jw_task_facts *facts)
{
	if (facts->withheld == JW_WITHHELD_BUDGET)
		r->counts.withheld_budget++;
	else if (facts->withheld == JW_WITHHELD_BACK_OFF)
		r->counts.withheld_back_off++;
	if (r->opts.say_defaults)
		jw_say_withheld(&r->said, r->opts.params, facts->withheld,
				jw_policy__window_s(r->opts.policy), jw_report_bundle_name(proc),
				facts->pid, facts->group);
}

/* Writes the jank's @profile beside its other files, @path listed after them in @ev. */
static void add_profile(struct jw_reporter *r, struct jw_pprof *profile, struct jw_event *ev,
			const struct jw_task_rec *t, uint64_t periods, char *path, size_t len)
{
	char id[128];
	int ret;

	jw_report_file_name(NULL, ev->pid, ev->time_ms, NULL, id, sizeof(id));
	ret = jw_report_pprof_write(profile, &(struct jw_pprof_jank){
		.ev = ev,
		.id = id,
		.begin_ns = (int64_t)t->start_ns + jw_clocks_realtime_at(r->clocks, t->start_ns),
		.wall_ns = (int64_t)(t->end_ns - t->start_ns),
		.kept = ev->samples,
		.total = periods,
	}, r->opts.logdir, path, len);
	beside_written(r, ev, ret, &r->counts.profiles, "a profile");
}

/* The flame graph's head: the jank (or hang) and where its time went. */
static void flame_head(const struct jw_event *ev, char *title, size_t tlen, char *detail,
		       size_t dlen)
{
	bool hang = !strcmp(ev->event, "MAIN_THREAD_HANG");

	snprintf(title, tlen, "%s (pid %u, thread %u) %s: %s %.1f ms %s", ev->bundle_name, ev->pid,
		 ev->tid, ev->handler ? ev->handler : "a task", hang ? "still running after" : "a",
		 ev->wall_ms, hang ? "(a hang)" : "jank");
	snprintf(detail, dlen, "cause %s: cpu %.1f ms, runq %.1f, blocked %.1f (io %.1f); %u "
		 "sample%s%s%s", ev->cause ? ev->cause : "unknown", ev->cpu_ms, ev->runq_ms,
		 ev->blocked_ms, ev->io_ms, ev->samples, ev->samples == 1 ? "" : "s",
		 ev->group ? "; group " : "", ev->group ? ev->group : "");
}

/*
 * Writes the flame graph of @tree beside the stack log of @ev, @path listed after the files
 * before it in @ev. A failure to write is said; the quota withholds it as it does the others.
 */
static void add_flamegraph(struct jw_reporter *r, const struct jw_stacktree *tree,
			   struct jw_event *ev, char *path, size_t len)
{
	struct jw_flame fl = { 0 };
	char name[128], title[512], detail[512];
	struct jw_logfile lf;
	int ret;

	flame_head(ev, title, sizeof(title), detail, sizeof(detail));
	jw_report_file_name("flame", ev->pid, ev->time_ms, ".svg", name, sizeof(name));
	ret = jw_flame__from_tree(&fl, tree);
	if (!ret)
		ret = jw_logdir__create(r->opts.logdir, name, &lf);
	if (!ret) {
		ret = jw_flame_svg_write(&fl, &(struct jw_flame_head){ title, detail }, lf.f);
		if (ret)
			jw_logdir__abort(r->opts.logdir, &lf);
		else
			ret = jw_logdir__commit(r->opts.logdir, &lf, path, len);
	}
	jw_flame__free(&fl);
	beside_written(r, ev, ret, &r->counts.flamegraphs, "a flame graph");
}

/* Appends the report to the raw capture; a failure is said once. */
static void capture(struct jw_reporter *r, const struct jw_report_capture *c)
{
	int ret = jw_report_capture(c);

	if (ret && !r->raw_failed) {
		r->raw_failed = true;
		jw_log(JW_LOG_WARN, "cannot write the raw capture: %s", strerror(-ret));
	}
}

/* Keeps the budgets in the log directory when a report spent one: a restart keeps them. */
static void save_budgets(struct jw_reporter *r)
{
	size_t len;
	char *buf;
	int ret;

	if (!r->opts.logdir || !jw_policy__changed(r->opts.policy))
		return;
	len = jw_policy__save(r->opts.policy, NULL, 0);
	buf = malloc(len + 1);
	if (!buf)
		return;
	len = jw_policy__save(r->opts.policy, buf, len + 1);
	ret = jw_logdir__replace(r->opts.logdir, JW_LOGDIR_BUDGETS, buf, len);
	free(buf);
	if (ret && !r->budgets_failed) {
		r->budgets_failed = true;
		jw_log(JW_LOG_WARN, "cannot keep the report budgets in %s/%s: %s",
		       jw_logdir__path(r->opts.logdir), JW_LOGDIR_BUDGETS, strerror(-ret));
	}
}

/*
 * Writes a jank's files and event: @verdict as recorded (replay) or decided (a hang), or
 * (JW_VERDICT_NONE) decided by the policy once the group is known. With @facts, live, a file
 * written spends its budget.
 */
static int report(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
		  void *const *samples, size_t n, enum jw_verdict verdict, uint64_t time_ms,
		  struct jw_task_facts *facts, bool may_hold)
{
	uint64_t asks = jw_symbolizer_debug_asks();
	char path[4096], waker[JW_COMM_LEN + 16], *heaviest = NULL, *group = NULL;
	char trace_paths[2][PATH_MAX], profile_path[PATH_MAX], svg_path[PATH_MAX];
	/* The stack log and its flame graph, or the trace's two files; then the profile. */
	const char *logs[3] = { path, svg_path }, *trace_logs[3] = { trace_paths[0], trace_paths[1] };
	struct jw_event ev = { .external_log = logs };
	uint32_t *counts = calloc(n + 1, sizeof(*counts));
	struct jw_stacktree *tree = jw_stacktree__new();
	struct jw_pprof *profile = NULL;
	int64_t t0 = jw_clock_ns(CLOCK_MONOTONIC);
	uint64_t periods = 0;
	int ret;

	if (r->opts.pprof) {
		profile = jw_pprof__new((int64_t)r->opts.params->v[JW_P_SAMPLE_PERIOD_MS] *
					(int64_t)NS_PER_MS);
		if (!profile || jw_pprof__main_binary(profile, proc->target.exe,
						      jw_symbolizer__exe_build_id(proc->sym))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (!tree || !counts) {
		ret = -ENOMEM;
		goto out;
	}
	r->unwound = 0;
	r->handlers.n = 0;
	jw_symbolizer__debug_refresh(proc->sym);
	ret = build_tree(r, proc, samples, n, tree, profile, counts, &ev.samples, &periods);
	jw_log(JW_LOG_DEBUG, "pid %u: %zu samples held, %u unwound and named in %lld us", t->hdr.pid,
	       n, r->unwound, (long long)(jw_clock_ns(CLOCK_MONOTONIC) - t0) / 1000);
	/*
	 * Naming its stacks asked debuginfod for a file not there yet: nothing is written, the
	 * caller holds it (not a possible trace: its window is the task's own moment).
	 */
	if (!ret && may_hold && jw_symbolizer_debug_asks() != asks && !may_trace(r, t, facts)) {
		ret = -EINPROGRESS;
		goto out;
	}
	if (!ret)
		ret = jw_stacktree__heaviest_and_group(tree, &heaviest, &group);
	if (ret)
		goto out;
	/* Live, the policy decides now that the group is known (the back-off needs it). */
	if (facts && verdict == JW_VERDICT_NONE) {
		facts->group = group;
		verdict = jw_policy__decide(r->opts.policy, facts);
	}
	if (r->opts.raw)
		capture(r, &(struct jw_report_capture){
			.raw = r->opts.raw,
			.ksyms = r->opts.ksyms,
			.proc = proc,
			.t = t,
			.samples = samples,
			.counts = counts,
			.n = n,
			.verdict = verdict,
			.time_ms = time_ms,
		});
	fill_event(r, proc, t, time_ms, &ev);
	/* No stack at all: null, as the stack log's "none". */
	ev.heaviest_stack = *heaviest ? heaviest : NULL;
	ev.group = *group ? group : NULL;
	ev.burst = facts ? facts->burst : 0;
	ev.waker = jw_waker_describe(r->opts.ksyms, t, waker, sizeof(waker));
	jw_buf_reset(&r->waker_stack);
	if (ev.waker)
		jw_waker_stack(r->opts.ksyms, t, &r->waker_stack);
	if (verdict == JW_VERDICT_STACK) {
		add_stack_log(r, proc, t, tree, &ev, path, sizeof(path));
		if (r->opts.svg && ev.n_external_log)
			add_flamegraph(r, tree, &ev, svg_path, sizeof(svg_path));
		if (ev.log_over_limit)
			ev.withheld = jw_withheld_name(JW_WITHHELD_QUOTA);
	} else if (verdict == JW_VERDICT_TRACE) {
		r->counts.traces++;
		ev.n_external_log = jw_tracer__keep(r->tracer, proc, t, ev.handler, samples, n,
						    trace_paths);
		ev.external_log = trace_logs;
		if (!ev.n_external_log) {
			bool quota = jw_logdir__over_quota(r->opts.logdir);

			jw_log(JW_LOG_INFO, "pid %u: a %.0f ms task decided for a trace gets no trace "
			       "log (%s)", t->hdr.pid, (t->end_ns - t->start_ns) / 1e6,
			       !r->tracer ? "a raw capture holds none" :
			       quota ? "log quota reached" : "another window is open");
			if (r->tracer)
				ev.withheld = jw_withheld_name(quota ? JW_WITHHELD_QUOTA :
								       JW_WITHHELD_TRACE_WINDOW);
		}
	} else {
		r->counts.withheld++;
		ev.withheld = facts ? jw_withheld_name(facts->withheld) : NULL;
		if (facts)
			count_withheld(r, proc, facts);
	}
	if (profile && ev.n_external_log) {
		if (ev.external_log == trace_logs)
			trace_logs[ev.n_external_log] = profile_path;
		else
			logs[ev.n_external_log] = profile_path;
		add_profile(r, profile, &ev, t, periods, profile_path, sizeof(profile_path));
	}
	ev.log_over_limit = ev.log_over_limit || jw_logdir__over_quota(r->opts.logdir);
	/* Only a file written spends a budget; a restart finds the budgets as they are. */
	if (facts && ev.n_external_log) {
		jw_policy__written(r->opts.policy, facts);
		save_budgets(r);
	}
	ret = emit_event(r, &ev);
	if (!ret && !(t->hdr.flags & JW_TASK_HANG)) {
		static const char *const causes[] = { "cpu", "runqueue", "blocked", "io" };
		size_t c;

		r->counts.janks++;
		for (c = 0; c < 4; c++)
			if (ev.cause && !strcmp(ev.cause, causes[c]))
				r->counts.by_cause[c]++;
	}
out:
	free(heaviest);
	free(group);
	free(counts);
	jw_stacktree__free(tree);
	jw_pprof__free(profile);
	return ret;
}

/* The policy's facts of task @t of @proc, at wall clock @now_real (ns). */
static struct jw_task_facts facts_of(const struct jw_reporter *r, const struct jw_proc *proc,
				     const struct jw_task_rec *t, uint64_t now_real)
{
	return (struct jw_task_facts){
		.pid = t->hdr.pid,
		.uid = proc->target.uid,
		.wall_ns = t->end_ns - t->start_ns,
		.begin_boot_ns = t->start_ns + jw_clocks_boottime_at(r->clocks, t->start_ns),
		.proc_start_boot_ns = proc->start_boot_ns,
		.now_s = now_real / 1000000000ULL,
	};
}

int jw_reporter__hang(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
		      void *const *samples, size_t n)
{
	uint64_t now_real = jw_clock_ns(CLOCK_REALTIME);
	struct jw_task_facts facts = facts_of(r, proc, t, now_real);
	enum jw_verdict verdict = jw_policy__decide_hang(r->opts.policy, &facts);
	int ret;

	if (verdict == JW_VERDICT_NONE)
		return 0;
	ret = report(r, proc, t, samples, n, verdict, now_real / NS_PER_MS, &facts, false);
	if (!ret)
		r->counts.hangs++;
	return ret;
}

int jw_reporter__task(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
		      void *const *samples, size_t n)
{
	uint64_t now_real = jw_clock_ns(CLOCK_REALTIME);
	struct jw_task_facts facts = facts_of(r, proc, t, now_real);

	int ret;

	if (!jw_policy__triage(r->opts.policy, &facts)) {
		if (facts.early) {
			r->counts.early++;
			if (r->opts.say_defaults)
				jw_say_early(&r->said, r->opts.params, jw_report_bundle_name(proc),
					     facts.pid, facts.wall_ns / 1e6,
					     (double)(facts.begin_boot_ns - facts.proc_start_boot_ns) /
						     1e9);
		}
		return 0;
	}
	ret = report(r, proc, t, samples, n, JW_VERDICT_NONE, now_real / NS_PER_MS, &facts,
		     r->held.n < JW_HOLD_MAX);
	if (ret != -EINPROGRESS)
		return ret;
	ret = jw_hold_add(&r->held, proc, t, samples, n, &facts, now_real / NS_PER_MS,
			  (uint64_t)jw_clock_ns(CLOCK_MONOTONIC) + HOLD_NS);
	if (!ret)
		jw_log(JW_LOG_DEBUG, "pid %u: a jank's report waits for debug files", t->hdr.pid);
	else	/* no room to wait: written as it is */
		ret = report(r, proc, t, samples, n, JW_VERDICT_NONE, now_real / NS_PER_MS, &facts,
			     false);
	return ret;
}

void jw_reporter__flush(struct jw_reporter *r, const struct jw_proc *proc, bool all)
{
	bool fetched;
	uint64_t now;
	struct jw_held h;
	size_t i = 0;
	int ret;

	if (!r->held.n)
		return;
	fetched = !jw_debuginfo__pending(jw_debuginfo_global());
	now = (uint64_t)jw_clock_ns(CLOCK_MONOTONIC);
	while (i < r->held.n) {
		const struct jw_held *d = &r->held.v[i];

		if (!all && !(proc && d->proc == proc) && !fetched && now < d->deadline_ns) {
			i++;
			continue;
		}
		jw_hold_take(&r->held, i, &h);
		ret = report(r, h.proc, &h.task, h.samples, h.n, JW_VERDICT_NONE, h.time_ms,
			     &h.facts, false);
		if (ret)
			jw_log(JW_LOG_WARN, "cannot report a task of pid %u: %s", h.task.hdr.pid,
			       strerror(-ret));
		jw_held_free(&h);
	}
}

void jw_reporter__set_tracer(struct jw_reporter *r, struct jw_tracer *t)
{
	r->tracer = t;
}

void jw_reporter__set_ksyms(struct jw_reporter *r, const struct jw_ksyms *ks)
{
	r->opts.ksyms = ks;
	jw_stacks__set_ksyms(r->opts.stacks, ks);
}

int jw_reporter__replay(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
			void *const *samples, size_t n, enum jw_verdict verdict, uint64_t time_ms)
{
	return report(r, proc, t, samples, n, verdict, time_ms, NULL, false);
}
