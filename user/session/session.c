// SPDX-License-Identifier: GPL-2.0-only
/*
 * jankwatch's own loop: the ring buffer drained (tasks to the reporter, samples held for their
 * task, scheduler events to the tracer, processes coming and going to session_follow.c),
 * signals, SIGHUP's reload, the status line, --duration, the summary.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/localzone.h"
#include "base/log.h"
#include "base/places.h"
#include "base/thp.h"
#include "output/rawfile.h"
#include "policy/policy.h"
#include "session/session.h"
#include "stacks/debuginfo.h"
#include "session/session_fleet.h"
#include "session/session_samplers.h"
#include "session/session_waits.h"
#include "session/session_follow.h"
#include "session/session_setup.h"
#include "session/session_stats.h"
#include "session/session_top.h"
#include "session/session_tasks.h"
#include "session/state.h"

#define POLL_MS 100
#define ALIVE_CHECK_NS 500000000ULL
#define AGING_EVERY_NS (3600 * 1000000000ULL)
/*
 * How often the statistics rows made since are named: names read from a process's memory (Qt's
 * classes and slots, sd-event's descriptions) are read while it runs, not after it exited.
 */
#define NAMING_EVERY_NS (5 * 1000000000ULL)
#define STATUS_EVERY_NS 1000000000ULL

static volatile sig_atomic_t stop_requests;
static volatile sig_atomic_t stop_signal;	/* the first one's */
static volatile sig_atomic_t reload_requests;

static void on_reload_signal(int sig)
{
	(void)sig;
	reload_requests = 1;
}

static void on_stop_signal(int sig)
{
	/* A second Ctrl-C exits at once. */
	if (++stop_requests > 1)
		_exit(130);
	stop_signal = sig;
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	sa.sa_handler = on_reload_signal;
	if (sigaction(SIGHUP, &sa, NULL))
		return -errno;
	/* A closed stdout pipe must not kill jankwatch before it flushes its files. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int on_task(struct session *s, const struct jw_task_rec *t)
{
	struct jw_watched *w = session_thread(s, t->hdr.tid);
	void *const *items = NULL;
	size_t n = 0;
	int ret;

	if (!w)
		return 0;
	jw_watched__settle(w, &s->how);
	if (w->samples.seq == t->seq) {
		items = w->samples.items;
		n = w->samples.n;
	}
	if (t->hdr.flags & JW_TASK_EXITED && t->hdr.tid != t->hdr.pid)
		jw_log(JW_LOG_INFO, "pid %d: thread %d exited %.0f ms into a task", t->hdr.pid,
		       t->hdr.tid, (t->end_ns - t->start_ns) / 1e6);
	else if (t->hdr.flags & JW_TASK_EXITED)
		jw_log(JW_LOG_INFO, "pid %d exited %.0f ms into a task", t->hdr.pid,
		       (t->end_ns - t->start_ns) / 1e6);
	ret = jw_reporter__task(s->reporter, &w->proc, t, items, n);
	jw_tracer__settle(s->tracer, t->hdr.pid, t->seq);
	jw_samplebuf_clear(&w->samples);
	if (ret)
		jw_log(JW_LOG_WARN, "cannot report a task of pid %d: %s", t->hdr.pid,
		       strerror(-ret));
	return 0;
}

static int handle_record(struct session *s, void *data, size_t size)
{
	const struct jw_rec_hdr *h = data;
	struct jw_watched *w;

	if (size < sizeof(*h) || h->size > size)
		return 0;
	switch (h->type) {
	case JW_REC_TASK:
		if (h->size < sizeof(struct jw_task_rec))
			break;
		return on_task(s, data);
	case JW_REC_FORK:
	case JW_REC_EXEC:
	case JW_REC_EXIT:
	case JW_REC_RENAME:
		if (h->size < sizeof(struct jw_proc_rec))
			break;
		session_on_proc(s, data);
		return 0;
	case JW_REC_SCHED:
		if (h->size < sizeof(struct jw_sched_rec))
			break;
		jw_tracer__sched(s->tracer, data);
		return 0;
	case JW_REC_SLICE:
		if (h->size < sizeof(struct jw_slice_rec))
			break;
		jw_tracer__slice(s->tracer, data);
		return 0;
	case JW_REC_SAMPLE:
		w = session_thread(s, h->tid);
		if (!w || h->size < sizeof(struct jw_sample_rec))
			break;
		jw_tracer__sample(s->tracer, data);
		if (jw_samplebuf_add(&w->samples, ((const struct jw_sample_rec *)data)->seq, data,
				     h->size))
			s->lost_samples++;
		return 0;
	}
	/* A thread no longer watched (its records still in the buffer), or a type unknown. */
	return 0;
}

/* libbpf's callback: -EAGAIN stops the read (this record is read) once its time is up. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	handle_record(s, data, size);
	if (s->read_until &&
	    (stop_requests || (uint64_t)jw_clock_ns(CLOCK_MONOTONIC) >= s->read_until))
		return -EAGAIN;
	return 0;
}

/*
 * Waits up to POLL_MS (less when a followed process is due for a look at @next_look_ns) for
 * records or a stats client, then handles both. Returns >= 0, or -errno when the ring buffer
 * cannot be read.
 */
static int poll_once(struct session *s, uint64_t now, uint64_t next_look_ns)
{
	int n, i, ret, timeout = POLL_MS;
	struct epoll_event ev[8];

	if (next_look_ns < now + POLL_MS * 1000000ULL)
		timeout = next_look_ns <= now ? 0 : (int)((next_look_ns - now) / 1000000) + 1;
	if (s->behind)
		timeout = 0;
	n = epoll_wait(s->epoll_fd, ev, sizeof(ev) / sizeof(ev[0]), timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	ret = session_read_records(s, true);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		if (ev[i].data.fd == s->stats_fd)
			session_stats_serve(s);
		else
			session_fleet_on_fd(s, ev[i].data.fd, ev[i].events);
	}
	return 0;
}

/* Whether any target still runs; says which ones left. */
static bool any_alive(struct session *s)
{
	bool alive = false;
	size_t i;

	for (i = 0; i < s->n_slots; i++) {
		struct jw_proc *p;

		if (!s->watched[i])
			continue;
		p = &s->watched[i]->proc;
		if (jw_target_thread_alive(&p->target)) {
			alive = true;
			continue;
		}
		/* Its last task, ended by the exit, may still be in the ring buffer; its exit too. */
		session_read_records(s, true);
		if (!s->watched[i])
			continue;
		if (p->target.tid != p->target.pid && jw_target_alive(&p->target))
			jw_log(JW_LOG_INFO, "pid %d (%s): its watched thread %d exited; the process is "
			       "no longer watched", p->target.pid, p->target.comm, p->target.tid);
		else	/* its exit record was lost (a full ring buffer) */
			jw_log(JW_LOG_INFO, "pid %d (%s) exited", p->target.pid, p->target.comm);
		session_forget(s, p->target.pid, !jw_target_alive(&p->target));
	}
	session_follow_prune(s);
	/* With --exe or --name, processes started later are awaited; followed ones may still run a
	 * loop. */
	return alive || session_finds_later(s) || (s->tree && jw_proctree__size(s->tree));
}

/* Every drop jankwatch knows of: the kernel's (its skipped program runs too) and its own. */
static uint64_t drops_so_far(const struct session *s)
{
	struct session_tally t;
	uint64_t total;
	size_t i;

	session_tally(s, &t);
	total = t.lost.lost_samples + t.lost.write_errors + t.lost.misses.total;
	for (i = 0; i < JW_DROP_MAX; i++)
		total += t.lost.drops[i];
	return total;
}

/* The live status line (a terminal only): what was watched, how fast, what came of it. */
static void show_status(struct session *s, uint64_t now)
{
	const struct jw_report_counts *c = jw_reporter__counts(s->reporter);
	uint64_t tasks = jw_attach__tasks(s->attach);
	double rate = 0;
	char line[256];
	size_t i, n = 0;

	for (i = 0; i < s->n_slots; i++)
		n += s->watched[i] != NULL;
	if (s->status_ns && now > s->status_ns)
		rate = (tasks - s->status_tasks) * 1e9 / (now - s->status_ns);
	s->status_ns = now;
	s->status_tasks = tasks;
	snprintf(line, sizeof(line), "%zu process%s, %llu tasks (%.0f/s), %llu janks, %llu hangs, "
		 "%llu reports, %llu dropped", n, n == 1 ? "" : "es", (unsigned long long)tasks,
		 rate, (unsigned long long)c->janks, (unsigned long long)c->hangs,
		 (unsigned long long)c->stack_logs, (unsigned long long)drops_so_far(s));
	jw_log_status(line);
}

/*
 * A reload's trace parameters: log_type 1 has no tracer (the one running writes what it decided
 * and goes), 0 and 2 have one (made now if there was none); flight_recorder_s applies to it.
 */
static void reload_tracer(struct session *s, const struct jw_params *np)
{
	if (!jw_policy__trace_from_ns(np) && s->tracer) {
		jw_tracer__free(s->tracer);
		s->tracer = s->how.tracer = NULL;
		jw_reporter__set_tracer(s->reporter, NULL);
		jw_log(JW_LOG_INFO, "SIGHUP: log_type=1: no more traces");
		return;
	}
	if (!jw_policy__trace_from_ns(np))
		return;
	if (s->tracer) {
		size_t i;

		jw_tracer__set_flight(s->tracer,
				      (uint64_t)np->v[JW_P_FLIGHT_RECORDER_S] * 1000000000ULL);
		/* Turned on: every watched process's events are kept from now on. */
		for (i = 0; i < s->n_slots; i++)
			if (s->watched[i])
				jw_tracer__watch(s->tracer, &s->watched[i]->proc);
		return;
	}
	if (session_tracer_start(s))
		jw_log(JW_LOG_ERROR, "SIGHUP: log_type=%lld: cannot start the traces: %s",
		       (long long)np->v[JW_P_LOG_TYPE], strerror(ENOMEM));
	else
		jw_log(JW_LOG_INFO, "SIGHUP: log_type=%lld: traces from now on",
		       (long long)np->v[JW_P_LOG_TYPE]);
}

/*
 * SIGHUP: the parameters again from --config and --set. A bad configuration keeps the one in
 * force; what the loaded programs and probes fixed (sample_period_ms, stack_bytes,
 * stats_max_entries, wait_tracepoints, handler_sites, samplers, sched_hooks) waits for a
 * restart, and the reload says so.
 */
static void reload(struct session *s)
{
	static const enum jw_param fixed[] = { JW_P_SAMPLE_PERIOD_MS, JW_P_STACK_BYTES,
					       JW_P_STATS_MAX_ENTRIES, JW_P_WAIT_TRACEPOINTS,
					       JW_P_HANDLER_SITES, JW_P_SAMPLERS, JW_P_SCHED_HOOKS };
	struct jw_params *old = &s->cfg->params, np;
	char err[512];
	size_t i;

	if (jw_options_reload(s->cfg, &np, err, sizeof(err))) {
		jw_log(JW_LOG_ERROR, "SIGHUP: %s; the configuration in force is kept", err);
		return;
	}
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (np.v[fixed[i]] == old->v[fixed[i]])
			continue;
		jw_log(JW_LOG_WARN, "SIGHUP: %s=%lld takes effect at the next start (%lld until then)",
		       jw_param_name(fixed[i]), (long long)np.v[fixed[i]],
		       (long long)old->v[fixed[i]]);
		np.v[fixed[i]] = old->v[fixed[i]];
	}
	*old = np;
	reload_tracer(s, &np);
	jw_policy__set_params(s->policy, &np);
	jw_attach__set_report_min(s->attach, jw_policy__min_threshold_ns(&np));
	jw_attach__set_stats_every(s->attach, np.v[JW_P_STATS_SAMPLING_INTERVAL]);
	jw_logdir__set_quota(s->logdir, np.v[JW_P_LOG_QUOTA_BYTES]);
	jw_logdir__set_events_keep(s->logdir, (unsigned int)np.v[JW_P_EVENTS_KEEP]);
	jw_log(JW_LOG_INFO, "SIGHUP: parameters reloaded%s%s", s->cfg->config_file ? " from " : "",
	       s->cfg->config_file ? s->cfg->config_file : "");
}

/* The programs started by us: their waits hooked where they really are (watched.h). */
static void check_waits(struct session *s)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && s->watched[i]->check_waits)
			jw_watched__check_waits(s->watched[i], &s->how);
}

/*
 * The clocks' offsets read again at each turn: a step of the wall clock is placed here, the times
 * before it converted with the offset they had (base/clocks.h), said, and kept in the raw
 * capture for the reports after it.
 */
static void read_clocks(struct session *s)
{
	uint64_t steps = s->clocks.steps;
	int64_t moved = jw_clocks_update(&s->clocks);
	int ret;

	if (moved)
		jw_log(JW_LOG_INFO, "the wall clock was stepped by %+.1f ms: the times of tasks after "
		       "it are by the new one", moved / 1e6);
	else if (s->clocks.steps != steps)
		jw_log(JW_LOG_INFO, "the boot clock moved by %+.1f ms against the monotonic one (a "
		       "suspend, or the machine paused): boot times after it are by the new offset",
		       (double)(s->clocks.boottime_ns -
				s->clocks.was[s->clocks.n_was - 1].boottime_ns) / 1e6);
	if (s->raw && s->clocks.steps != steps &&
	    (ret = jw_raw_write_clocks(s->raw, s->clocks.was[s->clocks.n_was - 1].until_ns,
				       s->clocks.realtime_ns, s->clocks.boottime_ns)))
		jw_log(JW_LOG_WARN, "%s: %s", s->cfg->raw_file, strerror(-ret));
}

static int run_loop(struct session *s)
{
	uint64_t start = jw_clock_ns(CLOCK_MONOTONIC), last_check = start, last_hang_check = start;
	uint64_t last_aging = start, last_naming = start;
	uint64_t hang_every = (uint64_t)s->cfg->params.v[JW_P_SAMPLE_INTERVAL] * 1000000;
	uint64_t limit = s->cfg->duration_s > 0 ? (uint64_t)(s->cfg->duration_s * 1e9) : 0;
	uint64_t next_look = 0, now = start;

	while (!stop_requests) {
		int ret = poll_once(s, now, next_look);

		if (ret < 0) {
			jw_log(JW_LOG_ERROR, "reading the ring buffer: %s", strerror(-ret));
			return ret;
		}
		now = jw_clock_ns(CLOCK_MONOTONIC);
		if (limit && now - start >= limit)
			break;
		read_clocks(s);
		if (s->child_running && !s->child_done &&
		    (s->child_done = jw_child_exited(&s->child, 0, &s->child_status))) {
			jw_log(JW_LOG_INFO, "%s (pid %d) exited with status %d", s->cfg->cmd[0],
			       s->child.pid, s->child_status);
			/* The processes it started and left running are watched until they exit. */
			session_read_records(s, true);
			if (!any_alive(s))
				break;
			jw_log(JW_LOG_INFO, "%zu of the processes it started still run: following them "
			       "until they exit (Ctrl-C to stop)", jw_proctree__size(s->tree));
		}
		if (reload_requests) {
			reload_requests = 0;
			reload(s);
			hang_every = (uint64_t)s->cfg->params.v[JW_P_SAMPLE_INTERVAL] * 1000000;
		}
		jw_tracer__tick(s->tracer, now);
		session_fleet_tick(s, now);
		session_waits_tick(s, now);
		session_samplers_tick(s, now);
		/* Reports that waited for debug files: written once they came, or after 5 s. */
		jw_reporter__flush(s->reporter, NULL, false);
		if (session_top_tick(s, now))
			break;
		if (!s->top && now - s->status_ns >= STATUS_EVERY_NS)
			show_status(s, now);
		if (now - last_aging >= AGING_EVERY_NS) {
			last_aging = now;
			session_age_logs(s);
		}
		if (now - last_naming >= NAMING_EVERY_NS) {
			last_naming = now;
			session_stats_keep_names(s, 0);
		}
		if (now - last_hang_check >= hang_every) {
			last_hang_check = now;
			session_check_running(s, now);
		}
		next_look = session_look(s, now);
		if (now - last_check >= ALIVE_CHECK_NS) {
			last_check = now;
			if (!any_alive(s))
				break;
			check_waits(s);
		}
	}
	/*
	 * What the kernel sent is reported once its programs stopped sending
	 * (session_stats_freeze()): a read before that need not end.
	 */
	return 0;
}

/* The start's line: where the files go (a device's place is said as one), and how to stop. */
static void say_ready(struct session *s)
{
	const char *dir = s->cfg->log_dir;
	char taken[PATH_MAX];

	if (jw_place_is_usual(JW_PLACE_LOG, dir) ||
	    jw_place_default(JW_PLACE_LOG, NULL, taken, sizeof(taken)) || strcmp(dir, taken))
		jw_log(JW_LOG_INFO, "ready, writing to %s; Ctrl-C to stop", dir);
	else
		jw_log(JW_LOG_INFO, "ready, writing to %s (no /var/log to write in here: --log-dir "
		       "DIR to choose); Ctrl-C to stop", dir);
}

/* Where local time has no zone (a device): the times in file names and stack logs are UTC. */
static void say_time_zone(void)
{
	char why[PATH_MAX + 64];

	if (!jw_local_zone_known(NULL, why, sizeof(why)))
		jw_log(JW_LOG_INFO, "times in file names and stack logs are UTC: %s (TZ sets a zone, "
		       "e.g. TZ=CST-8)", why);
}

static void print_summary(struct session *s)
{
	const struct jw_report_counts *c = jw_reporter__counts(s->reporter);
	struct session_tally t;
	struct jw_buf lost;
	char *line, *end;

	jw_log_status(NULL);
	session_tally(s, &t);
	jw_log(JW_LOG_INFO, "%llu tasks, %llu janks (cpu %llu, runqueue %llu, blocked %llu, io %llu), "
	       "%llu hangs, %llu stack logs written, %llu trace reports decided (%llu trace files "
	       "written), %llu withheld (budget %llu, back-off %llu, quota or other %llu)",
	       (unsigned long long)t.tasks,
	       (unsigned long long)c->janks, (unsigned long long)c->by_cause[0],
	       (unsigned long long)c->by_cause[1], (unsigned long long)c->by_cause[2],
	       (unsigned long long)c->by_cause[3], (unsigned long long)c->hangs,
	       (unsigned long long)c->stack_logs, (unsigned long long)c->traces,
	       (unsigned long long)jw_tracer__written(s->tracer), (unsigned long long)c->withheld,
	       (unsigned long long)c->withheld_budget, (unsigned long long)c->withheld_back_off,
	       (unsigned long long)(c->withheld - c->withheld_budget - c->withheld_back_off));
	if (c->early)
		jw_log(JW_LOG_INFO, "%llu tasks over the threshold were in their process's start-up "
		       "window, not reported (ignore_startup_time=%lld)",
		       (unsigned long long)c->early,
		       (long long)s->cfg->params.v[JW_P_IGNORE_STARTUP_TIME]);
	jw_buf_init(&lost);
	jw_lost_lines(&t.lost, &lost);
	for (line = lost.data; line && *line; line = end + 1) {
		end = strchr(line, '\n');
		*end = 0;
		jw_log(JW_LOG_WARN, "%s", line);
	}
	jw_buf_free(&lost);
	session_follow_summary(s);
	say_time_zone();
	if (jw_attach__plan(s->attach)->compat)
		jw_log(JW_LOG_INFO, "ran the compatible BPF programs: this kernel lacks %s",
		       jw_attach__plan(s->attach)->lacks);
	if (t.lost.drops[JW_DROP_NEST])
		jw_log(JW_LOG_WARN, "%llu dispatches nested deeper than %d were not tracked",
		       (unsigned long long)t.lost.drops[JW_DROP_NEST], JW_MAX_NEST);
}

static void teardown(struct session *s)
{
	size_t i;

	session_top_free(s);
	session_fleet_finish(s);
	session_stats_finish(s);
	session_waits_finish(s);
	session_samplers_finish(s);
	/* A trace window decided for a trace is written now, even unfinished. */
	jw_tracer__free(s->tracer);
	s->tracer = s->how.tracer = NULL;
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	ring_buffer__free(s->rb);
	/* Every link goes with the object: the handles have nothing left to undo in the kernel. */
	jw_attach__free(s->attach);
	s->attach = s->how.attach = NULL;
	jw_reporter__free(s->reporter);
	jw_stacks__free(s->stacks);
	for (i = 0; i < s->n_slots; i++)
		jw_watched__free(s->watched[i], &s->how);
	jw_proctree__free(s->tree);
	jw_row_extras_free(&s->extras);
	jw_ksyms__free(s->ksyms);
	jw_debuginfo__free(s->debuginfo);
	s->debuginfo = NULL;
	jw_logdir__free(s->logdir);
	jw_policy__free(s->policy);
	if (s->raw && fclose(s->raw))
		jw_log(JW_LOG_WARN, "cannot finish --raw %s: %s", s->cfg->raw_file, strerror(errno));
}

/*
 * With -- CMD, the program lives no longer than jankwatch's watch of it. One that exited by
 * itself (a terminal's Ctrl-C reaches it too: it is given 2 s) gives jankwatch its status.
 * One still running when jankwatch stops (--duration, SIGTERM to jankwatch, a failure) is
 * ended, SIGTERM and SIGKILL 2 s later, said in one line, and jankwatch exits with its own
 * status (@own). The processes it started and left running are left so. Should jankwatch
 * die abruptly, the parent-death signal ends the program (launch.c). Never started: 127.
 */
static int child_status(struct session *s, int own)
{
	int sig;

	if (!s->child_running) {
		if (!s->child_done)
			jw_child_abort(&s->child);
		return s->child_done ? s->child_status : 127;
	}
	if (!s->child_done)
		s->child_done = jw_child_exited(&s->child, stop_signal == SIGINT ? 2000 : 0,
						&s->child_status);
	if (s->child_done)
		return s->child_status;
	sig = jw_child_end(&s->child, 2000, &s->child_status);
	s->child_done = sig >= 0;
	if (sig == SIGTERM)
		jw_log(JW_LOG_INFO, "%s (pid %d) still ran: ended it (SIGTERM)", s->cfg->cmd[0],
		       s->child.pid);
	else
		jw_log(JW_LOG_WARN, "%s (pid %d) still ran: %s", s->cfg->cmd[0], s->child.pid,
		       sig == SIGKILL ? "ended it (SIGKILL: SIGTERM left it running 2 s)"
				      : "SIGKILL did not end it within 1 s");
	return own;
}

int jw_session_run(struct jw_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));
	int status = 1;

	if (!s) {
		jw_log(JW_LOG_ERROR, "out of memory");
		return 1;
	}
	s->cfg = cfg;
	s->stats_fd = -1;
	s->epoll_fd = -1;
	jw_thp_keep_out();
	if (install_signals() || session_setup(s, on_record))
		goto out;
	if (cfg->dry_run) {
		status = 0;
		goto out;
	}
	say_ready(s);
	if (session_top_start(s))
		goto out;
	if (run_loop(s) == 0)
		status = 0;
	/* Everything written from here on comes from one read of the kernel's counts. */
	session_stats_freeze(s);
	session_top_finish(s);
	print_summary(s);
out:
	if (s->launched)
		status = child_status(s, status);
	teardown(s);
	free(s);
	return status;
}

