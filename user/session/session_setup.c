// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a session watches from the start: the command line's targets resolved before anything
 * touches the kernel, then the BPF object, the hooks, the log directory, the reporter and the
 * tracer, and the program -- CMD started last.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "output/rawfile.h"
#include "policy/policy.h"
#include "session/session_fleet.h"
#include "session/session_follow.h"
#include "session/session_procs.h"
#include "session/dryrun.h"
#include "session/session_setup.h"
#include "stacks/debuginfo.h"
#include "session/session_stats.h"
#include "session/session_top.h"
#include "session/session_samplers.h"
#include "session/session_waits.h"

#define TRACE_WINDOW_NS 3000000000ULL	/* the seed's: a trace covers 3 s */

/* Creates the --raw capture (never through a link) and writes its header. */
static int open_raw(struct session *s)
{
	const struct jw_config *cfg = s->cfg;
	struct jw_raw_header h = {
		.version = JW_RAW_VERSION,
		.sample_count = cfg->params.v[JW_P_SAMPLE_COUNT],
		.format = cfg->format,
		.sample_period_ms = cfg->params.v[JW_P_SAMPLE_PERIOD_MS],
		.realtime_off_ns = s->clocks.realtime_ns,
		.boottime_off_ns = s->clocks.boottime_ns,
	};
	int fd, ret;

	fd = open(cfg->raw_file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd >= 0)
		s->raw = fdopen(fd, "w");
	if (!s->raw) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		jw_log(JW_LOG_ERROR, "cannot create --raw %s: %s", cfg->raw_file, strerror(-ret));
		return ret;
	}
	ret = jw_raw_write_header(s->raw, &h);
	if (ret)
		jw_log(JW_LOG_ERROR, "cannot write --raw %s: %s", cfg->raw_file, strerror(-ret));
	return ret;
}

/*
 * Everything is attached: let the program exec, then learn what it became (its name, its
 * modules) once its executable is in place.
 */
static int start_child(struct session *s)
{
	struct jw_proc *p = &s->watched[0]->proc;
	struct jw_target t;
	char err[512];
	int ret;

	ret = jw_child_release(&s->child, err, sizeof(err));
	s->how.holding = false;
	if (ret) {
		jw_log(JW_LOG_ERROR, "%s", err);
		s->child_status = 127;
		s->child_done = jw_child_exited(&s->child, 1000, &s->child_status);
		return ret;
	}
	s->child_running = true;
	/* The error pipe closes in exec after the new image is in place: read what it is. */
	if (jw_target_open(p->target.pid, NULL, &t, err, sizeof(err)) == 0) {
		memcpy(p->target.comm, t.comm, sizeof(t.comm));
		memcpy(p->target.exe, t.exe, sizeof(t.exe));
		p->target.uid = t.uid;
	}
	/* It may exec again or exit at once (a wrapper): named later, when a task needs it. */
	p->sym = jw_symbolizer__new(p->target.pid);
	if (!p->sym)
		jw_log(JW_LOG_DEBUG, "cannot read the mappings of pid %d yet: %s", p->target.pid,
		       strerror(errno));
	if (s->child.output[0])
		jw_log(JW_LOG_INFO, "started %s as pid %d, its output to %s (top has the terminal)",
		       s->cfg->cmd[0], p->target.pid, s->child.output);
	else
		jw_log(JW_LOG_INFO, "started %s as pid %d", s->cfg->cmd[0], p->target.pid);
	return 0;
}

/* The report budgets an earlier jankwatch spent, kept in the log directory. */
static void load_budgets(struct session *s)
{
	static char buf[256 * 1024];
	ssize_t n = jw_logdir__read(s->logdir, JW_LOGDIR_BUDGETS, buf, sizeof(buf) - 1);
	int k;

	if (n <= 0)
		return;
	buf[n] = '\0';
	k = jw_policy__load(s->policy, buf);
	jw_log(JW_LOG_DEBUG, "%s/%s: %d report budgets from an earlier run",
	       jw_logdir__path(s->logdir), JW_LOGDIR_BUDGETS, k);
}

/* Removes the report files older than log_max_age_days: at start, then hourly. */
void session_age_logs(struct session *s)
{
	uint64_t max_age_s = (uint64_t)s->cfg->params.v[JW_P_LOG_MAX_AGE_DAYS] * 86400;
	int n = jw_logdir__remove_older(s->logdir, max_age_s, time(NULL));

	if (n > 0)
		jw_log(JW_LOG_INFO, "%s: removed %d report files older than %lld days",
		       jw_logdir__path(s->logdir), n,
		       (long long)s->cfg->params.v[JW_P_LOG_MAX_AGE_DAYS]);
	else if (n < 0)
		jw_log(JW_LOG_WARN, "%s: cannot remove old report files: %s",
		       jw_logdir__path(s->logdir), strerror(-n));
}

/*
 * -p PID: resolves it into the next slot. A master process (nginx's) runs no loop: its workers
 * are watched instead (@expand). One that cannot be watched is said so (by what failed) and
 * left out. Returns 0 or -errno.
 */
static int add_target(struct session *s, pid_t pid, bool expand)
{
	const struct jw_preset *preset;
	pid_t workers[JW_MAX_PIDS];
	char list[256] = "";
	int i, n, ret;
	size_t k;

	if (session_watching(s, pid))
		return 0;	/* -p MASTER,WORKER: the worker came with its master */
	ret = session_add_proc(s, pid);
	if (ret)
		return ret;
	i = session_slot_of(s, pid);
	preset = &s->watched[i]->preset;
	if (!expand || !preset->workers)
		return 0;
	n = preset->workers(pid, workers, JW_MAX_PIDS);
	if (n <= 0)
		return 0;
	for (k = 0; k < (size_t)n; k++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", k ? "," : "",
			 workers[k]);
	jw_log(JW_LOG_INFO, "pid %d is %s's master process, which runs no event loop: watching "
	       "its workers %s, and those it starts later", pid, preset->name, list);
	session_drop_proc(s, i);
	if ((size_t)i + 1 == s->n_slots)
		s->n_slots--;	/* the master's slot, the last, is the first worker's */
	s->masters[s->n_masters++] = pid;
	ret = 0;
	for (k = 0; k < (size_t)n; k++)
		if (!session_watching(s, workers[k])) {
			int err = add_target(s, workers[k], false);

			ret = ret ? ret : err;
		}
	return ret;
}

/*
 * The processes watched from the start are followed as they exec; -- CMD's tree, -p's with
 * --follow and nginx's master (whose workers come and go) as they fork too.
 */
static int follow_targets(struct session *s)
{
	uint32_t children = s->launched || s->cfg->follow ? JW_FOLLOW_CHILDREN : 0;
	size_t i;
	int ret;

	s->tree = jw_proctree__new(JW_MAX_FOLLOWED);
	if (!s->tree)
		return -ENOMEM;
	for (i = 0; i < s->n_slots; i++) {
		if (!s->watched[i])
			continue;
		ret = session_follow(s, s->watched[i]->proc.target.pid, children, JW_PWHY_FOUND);
		if (ret)
			return ret;
	}
	for (i = 0; i < s->n_masters; i++) {
		ret = session_follow(s, s->masters[i], JW_FOLLOW_CHILDREN, JW_PWHY_FOLLOWED);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether some slot holds a process. */
static bool watching_any(const struct session *s)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i])
			return true;
	return false;
}

/* The tracer's switch of a process's trace events in the kernel. */
static int trace_events(void *attach, pid_t pid, bool on)
{
	return jw_attach__trace(attach, pid, on);
}

int session_tracer_start(struct session *s)
{
	const struct jw_params *p = &s->cfg->params;
	struct jw_tracer_opts topts = {
		.window_ns = TRACE_WINDOW_NS,
		.flight_ns = (uint64_t)p->v[JW_P_FLIGHT_RECORDER_S] * 1000000000ULL,
		.logdir = s->logdir,
		.kernel_events = trace_events,
		.ctx = s->attach,
		.stacks = s->stacks,
		.clocks = &s->clocks,
	};
	size_t i;

	if (!jw_policy__trace_from_ns(p) || s->tracer)
		return 0;
	s->tracer = s->how.tracer = jw_tracer__new(&topts);
	if (!s->tracer)
		return -ENOMEM;
	jw_reporter__set_tracer(s->reporter, s->tracer);
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i])
			jw_tracer__watch(s->tracer, &s->watched[i]->proc);
	return 0;
}

/* Adds @fd to what the loop waits for. */
static void watch_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		jw_log(JW_LOG_WARN, "cannot wait for fd %d: %s", fd, strerror(errno));
}

/* The loop waits for the ring buffer (its own epoll fd) and the stats socket at once. */
static int open_poll(struct session *s)
{
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0) {
		jw_log(JW_LOG_ERROR, "epoll_create1: %s", strerror(errno));
		return -errno;
	}
	watch_fd(s, ring_buffer__epoll_fd(s->rb));
	return 0;
}

/* Why kernel frames go unnamed, once: kptr_restrict=2 (Android's default) hides the addresses. */
static void say_no_ksyms(int err)
{
	char line[16] = "";
	FILE *f = err == EPERM ? fopen("/proc/sys/kernel/kptr_restrict", "re") : NULL;

	if (f && fgets(line, sizeof(line), f) && atoi(line) == 2)
		jw_log(JW_LOG_WARN, "kernel frames will not be named: kptr_restrict=2 hides "
		       "/proc/kallsyms's addresses from everyone (1 shows them to root); each run "
		       "of them is one [kernel] frame in the event's stack");
	else
		jw_log(JW_LOG_WARN, "kernel frames will not be named: /proc/kallsyms: %s%s",
		       strerror(err), err == EPERM ? " (its addresses show to CAP_SYSLOG)" : "");
	if (f)
		fclose(f);
}

/* An event reported: to the journal and the metrics, and to top's table. */
static void on_event(void *ctx, const struct jw_event *e, const char *line, size_t len)
{
	session_fleet_event(ctx, e, line, len);
	session_top_event(ctx, e);
}

int session_setup(struct session *s, ring_buffer_sample_fn on_record)
{
	const struct jw_config *cfg = s->cfg;
	struct jw_attach_opts aopts = {
		.report_min_ns = jw_policy__min_threshold_ns(&cfg->params),
		.unwind_mode = (enum jw_unwind_mode)cfg->unwind,
		.stack_bytes = cfg->params.v[JW_P_STACK_BYTES],
		.sample_period_ns = cfg->params.v[JW_P_SAMPLE_PERIOD_MS] * 1000000ULL,
		.stats_entries = cfg->params.v[JW_P_STATS_MAX_ENTRIES],
		.stats_every = cfg->params.v[JW_P_STATS_SAMPLING_INTERVAL],
		.wait_probe_id = cfg->n_probes,
		.btf_path = cfg->btf,
		.thread_switches = jw_params_thread_switches(&cfg->params),
		.thread_switches_given = jw_params_given(&cfg->params, JW_P_SCHED_HOOKS),
	};
	struct jw_reporter_opts ropts = { .params = &cfg->params, .format = cfg->format,
					  .pprof = cfg->pprof, .svg = cfg->svg,
					  .say_defaults = isatty(STDERR_FILENO),
					  .out = cfg->top ? NULL : stdout,
					  .on_event = on_event, .on_event_ctx = s };
	char err[512];
	size_t i;
	int ret;

	/* A metrics setting that cannot work stops the start before anything is hooked. */
	ret = session_fleet_open(s);
	if (ret)
		return ret;
	/* Before anything is resolved: a --probe in a stripped binary needs its debug file. */
	s->debuginfo = jw_debuginfo__new(cfg->debug_dir, JW_DEBUGINFOD_CACHE_BYTES);
	if (!s->debuginfo)
		return -ENOMEM;
	jw_debuginfo_set_global(s->debuginfo);
	s->how.cfg = cfg;
	s->how.child = &s->child;
	s->how.extras = &s->extras;
	s->how.by_exe = cfg->n_exes > 0 || cfg->n_names > 0;
	/* With no --probe, auto has only the syscall envelope to offer so far. */
	s->how.syscall_mode = cfg->n_probes == 0 ||
			      (cfg->loop_given && jw_loop_is_syscall(cfg->loop));
	ret = session_resolve_exes(s);
	if (ret)
		return ret;
	if (cfg->cmd && !cfg->dry_run) {
		char output[PATH_MAX];

		ret = jw_child_spawn(cfg->cmd, cfg->user,
				     session_top_screen(cfg, output, sizeof(output)) ? output : NULL,
				     &s->child, err, sizeof(err));
		if (ret) {
			jw_log(JW_LOG_ERROR, "%s", err);
			return ret;
		}
		s->launched = s->how.holding = true;
	}
	/*
	 * The program started must resolve; of -p's processes, one that cannot be watched is said
	 * so and the others are watched.
	 */
	if (s->launched) {
		ret = session_add_proc(s, s->child.pid);
		if (ret)
			return ret;
	}
	for (i = 0; i < cfg->n_pids; i++) {
		int err = add_target(s, cfg->pids[i], true);

		ret = ret ? ret : err;
	}
	/* The targets resolved, nothing hooked yet: a dry run says what would be, and stops. */
	if (cfg->dry_run)
		return !s->n_slots && !session_finds_later(s) && !cfg->cmd && ret ? ret :
										    session_dry_run(s);
	if (!s->n_slots && !session_finds_later(s))
		return ret;
	ret = 0;
	/*
	 * Processes may come: every slot. Else twice the processes given: one that execs is watched
	 * again while its old probes are still being detached from its first slot.
	 */
	aopts.max_threads = session_finds_later(s) || s->launched || cfg->follow || s->n_masters ?
				    JW_MAX_PIDS : 2 * s->n_slots;
	s->policy = jw_policy__new(&cfg->params, cfg->all, cfg->dev);
	if (!s->policy)
		return -ENOMEM;
	s->ksyms = jw_ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		say_no_ksyms(errno);
	s->attach = s->how.attach = jw_attach__open(&aopts);
	if (!s->attach)
		return -errno;
	ret = jw_attach__sched(s->attach);
	if (!ret)
		ret = session_samplers_start(s);
	if (!ret && s->how.syscall_mode)
		ret = session_waits_choose(s);
	if (ret)
		return ret;
	/* Followed first: an exec from here on is reported, however soon it comes. */
	ret = follow_targets(s);
	if (ret)
		return ret;
	for (i = 0; i < s->n_slots; i++) {
		const struct jw_target *t;

		if (!s->watched[i])
			continue;
		t = &s->watched[i]->proc.target;
		ret = jw_watched__attach(s->watched[i], &s->how);
		if (!ret)
			continue;
		if (s->launched)
			return ret;
		if (!jw_target_alive(t))
			jw_log(JW_LOG_WARN, "pid %d (%s) exited while being attached", t->pid,
			       t->comm);
		session_forget(s, t->pid, false);
		ret = 0;
	}
	if (!watching_any(s) && !session_finds_later(s) && !s->n_masters) {
		jw_log(JW_LOG_ERROR, "no process left to watch");
		return -ESRCH;
	}
	/* One that exec'd between being read and being followed: watched again as its program. */
	for (i = 0; i < s->n_slots && !s->how.holding; i++)
		if (s->watched[i])
			session_check_exec(s, s->watched[i]->proc.target.pid);
	ret = session_watch_found(s);
	if (ret)
		return ret;
	s->logdir = jw_logdir__open(cfg->log_dir, cfg->params.v[JW_P_LOG_QUOTA_BYTES], err,
				    sizeof(err));
	/* Without it the events still go to stdout, with log_over_limit: true. */
	if (!s->logdir)
		jw_log(JW_LOG_ERROR, "%s: events go to stdout only", err);
	else
		session_age_logs(s);
	jw_logdir__set_events_keep(s->logdir, (unsigned int)cfg->params.v[JW_P_EVENTS_KEEP]);
	load_budgets(s);
	jw_clocks_init(&s->clocks);
	if (cfg->raw_file) {
		ret = open_raw(s);
		if (ret)
			return ret;
	}
	s->stacks = jw_stacks__new(s->ksyms);
	if (!s->stacks)
		return -ENOMEM;
	ropts.stacks = s->stacks;
	ropts.policy = s->policy;
	ropts.logdir = s->logdir;
	ropts.ksyms = s->ksyms;
	ropts.raw = s->raw;
	ropts.clocks = &s->clocks;
	s->reporter = jw_reporter__new(&ropts);
	if (!s->reporter)
		return -ENOMEM;
	ret = session_tracer_start(s);
	if (ret)
		return ret;
	s->rb = ring_buffer__new(jw_attach__events_fd(s->attach), on_record, s, NULL);
	if (!s->rb) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot open the ring buffer: %s", strerror(-ret));
		return ret;
	}
	ret = open_poll(s);
	if (ret)
		return ret;
	session_stats_start(s);
	if (s->stats_fd >= 0)
		watch_fd(s, s->stats_fd);
	ret = session_fleet_start(s);
	if (ret)
		return ret;
	return s->launched ? start_child(s) : 0;
}
