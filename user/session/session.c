// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "report/hang.h"
#include "base/log.h"
#include "target/placement.h"
#include "policy/policy.h"
#include "output/rawfile.h"
#include "session/session.h"
#include "session/session_priv.h"
#include "attach/waitcost.h"

#define POLL_MS 100
#define TRACE_WINDOW_NS 3000000000ULL	/* the seed's: a trace covers 3 s */
#define ALIVE_CHECK_NS 500000000ULL
#define AGING_EVERY_NS (3600 * 1000000000ULL)
#define STATUS_EVERY_NS 1000000000ULL

static volatile sig_atomic_t stop_requests;
static volatile sig_atomic_t reload_requests;

static void on_reload_signal(int sig)
{
	(void)sig;
	reload_requests = 1;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	/* A second Ctrl-C exits at once. */
	if (++stop_requests > 1)
		_exit(130);
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static struct thread_slot *find_thread(struct session *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid && s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

/*
 * A process caught at its exec (or started by us) mapped no library when it was resolved: once
 * it runs, a preset that names handlers from the stacks alone (glib, libuv, libevent) can still
 * be recognized. Presets that need probes of their own are not added late.
 */
static void redetect_preset(struct session *s, struct thread_slot *th)
{
	struct jw_proc *p = th->proc;
	struct jw_preset preset;
	char why[512];

	th->redetect = false;
	if (jw_preset_detect(p->target.pid, p->target.exe, s->cfg->loop, &preset, why,
			     sizeof(why))) {
		jw_log(JW_LOG_WARN, "pid %d (%s): %s; its tasks are timed wait to wait (syscall)",
		       p->target.pid, p->target.comm, why);
		return;
	}
	if (!preset.handler_rule || preset.n_probes)
		return;
	p->loop = preset.name;
	p->handler_rule = preset.handler_rule;
	jw_log(JW_LOG_INFO, "pid %d (%s): loop %s (%s)", p->target.pid, p->target.comm, p->loop,
	       why);
}

static int on_task(struct session *s, const struct jw_task_rec *t)
{
	struct thread_slot *th = find_thread(s, t->hdr.tid);
	void *const *items = NULL;
	size_t n = 0;
	int ret;

	if (!th) {
		s->unknown++;
		return 0;
	}
	if (th->redetect)
		redetect_preset(s, th);
	/* Its mappings could not be read when it was watched (it was exec'ing): once more now. */
	if (!th->proc->sym)
		th->proc->sym = jw_symbolizer__new(t->hdr.pid);
	if (th->samples.seq == t->seq) {
		items = th->samples.items;
		n = th->samples.n;
	}
	if (t->hdr.flags & JW_TASK_EXITED && t->hdr.tid != t->hdr.pid)
		jw_log(JW_LOG_INFO, "pid %d: thread %d exited %.0f ms into a task", t->hdr.pid,
		       t->hdr.tid, (t->end_ns - t->start_ns) / 1e6);
	else if (t->hdr.flags & JW_TASK_EXITED)
		jw_log(JW_LOG_INFO, "pid %d exited %.0f ms into a task", t->hdr.pid,
		       (t->end_ns - t->start_ns) / 1e6);
	ret = jw_reporter__task(s->reporter, th->proc, t, items, n);
	jw_tracer__settle(s->tracer, t->hdr.pid, t->seq);
	jw_samplebuf_clear(&th->samples);
	if (ret)
		jw_log(JW_LOG_WARN, "cannot report a task of pid %d: %s", t->hdr.pid,
		       strerror(-ret));
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct jw_rec_hdr *h = data;
	struct session *s = ctx;
	struct thread_slot *th;

	s->records++;
	if (size < sizeof(*h) || h->size > size) {
		s->unknown++;
		return 0;
	}
	switch (h->type) {
	case JW_REC_TASK:
		if (h->size < sizeof(struct jw_task_rec))
			break;
		return on_task(s, data);
	case JW_REC_FORK:
	case JW_REC_EXEC:
	case JW_REC_EXIT:
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
		th = find_thread(s, h->tid);
		if (!th || h->size < sizeof(struct jw_sample_rec))
			break;
		jw_tracer__sample(s->tracer, data);
		if (jw_samplebuf_add(&th->samples, ((const struct jw_sample_rec *)data)->seq, data,
				     h->size))
			s->lost_samples++;
		return 0;
	}
	s->unknown++;
	return 0;
}

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
	struct jw_proc *p = &s->procs[0];
	struct jw_target t;
	char err[512];
	int ret;

	ret = jw_child_release(&s->child, err, sizeof(err));
	s->holding = false;
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
static void age_logs(struct session *s)
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
 * -p PID: resolves it into the next slot. The master process of nginx runs no loop: its workers
 * are watched instead (@expand). One that cannot be watched is said so (by what failed) and
 * left out. Returns 0 or -errno.
 */
static int add_target(struct session *s, pid_t pid, bool expand)
{
	pid_t workers[JW_MAX_PIDS];
	size_t i = s->n_procs, k;
	char list[256] = "";
	int n, ret;

	if (session_watching(s, pid))
		return 0;	/* -p MASTER,WORKER: the worker came with its master */
	if (i == JW_MAX_PIDS) {
		jw_log(JW_LOG_ERROR, "pid %d: already watching %d processes", pid, JW_MAX_PIDS);
		return -ENOSPC;
	}
	ret = session_resolve_proc(s, pid, i);
	if (ret) {
		session_drop_proc(s, i);
		return ret;
	}
	s->n_procs++;
	if (!expand || strcmp(s->procs[i].loop, "nginx"))
		return 0;
	n = jw_nginx_workers(pid, workers, JW_MAX_PIDS);
	if (n <= 0)
		return 0;
	for (k = 0; k < (size_t)n; k++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", k ? "," : "",
			 workers[k]);
	jw_log(JW_LOG_INFO, "pid %d is nginx's master process, which runs no event loop: watching "
	       "its workers %s, and those it starts later", pid, list);
	session_drop_proc(s, i);
	s->masters[s->n_masters++] = pid;
	s->n_procs--;
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
	for (i = 0; i < s->n_procs; i++) {
		if (!s->procs[i].target.pid)
			continue;
		ret = session_follow(s, s->procs[i].target.pid, children, JW_PWHY_FOUND);
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

	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid)
			return true;
	return false;
}

/*
 * The trace windows, unless log_type 1 (no traces): with the flight recorder on, every watched
 * process's events are kept from now on.
 */
static int start_tracer(struct session *s)
{
	const struct jw_params *p = &s->cfg->params;
	struct jw_tracer_opts topts = {
		.window_ns = TRACE_WINDOW_NS,
		.flight_ns = (uint64_t)p->v[JW_P_FLIGHT_RECORDER_S] * 1000000000ULL,
		.logdir = s->logdir,
		.attach = s->attach,
		.reporter = s->reporter,
		.clocks = &s->clocks,
	};
	size_t i;

	if (!jw_policy__trace_from_ns(p))
		return 0;
	s->tracer = jw_tracer__new(&topts);
	if (!s->tracer)
		return -ENOMEM;
	jw_reporter__set_tracer(s->reporter, s->tracer);
	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid)
			jw_tracer__watch(s->tracer, &s->procs[i]);
	return 0;
}

/* Adds @fd to what the loop waits for. */
static void watch_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		jw_log(JW_LOG_WARN, "cannot wait for fd %d: %s", fd, strerror(errno));
}

/*
 * Puts the watched threads into @tids and returns how many; @emulated: every wait function's
 * probe sits on an instruction the kernel emulates.
 */
static size_t watched_waits(struct session *s, pid_t *tids, bool *emulated)
{
	size_t i, n = 0;
	int k;

	*emulated = true;
	for (i = 0; i < s->n_procs && n < JW_MAX_RATE_TIDS; i++) {
		if (!s->procs[i].target.pid)
			continue;
		tids[n++] = s->procs[i].target.tid;
		for (k = 0; k < s->hooks[i]->waits.n; k++) {
			const struct jw_wait_func *f = &s->hooks[i]->waits.f[k];
			struct jw_placement place;

			jw_probe_place_file(f->path, f->offset, &place);
			*emulated = *emulated && place.emulated;
		}
	}
	return n;
}

/*
 * Syscall mode: whether the waits are seen on the system call tracepoints or by uprobes on the
 * wait functions; with wait_tracepoints=2, whichever costs the machine less, measured now,
 * before any thread is watched (waitcost.h). Attaches the tracepoints if they win and says
 * which it is and why.
 */
static int choose_wait_hooks(struct session *s)
{
	int64_t asked = s->cfg->params.v[JW_P_WAIT_TRACEPOINTS];
	pid_t tids[JW_MAX_RATE_TIDS];
	struct jw_wait_costs costs;
	char why[512], detail[448];
	bool emulated;
	size_t n;

	if (asked != 2) {
		s->wait_tracepoints = asked == 1;
		snprintf(why, sizeof(why), "wait_tracepoints=%lld", (long long)asked);
	} else if (s->holding || !(n = watched_waits(s, tids, &emulated))) {
		/* Nothing waits yet: the way that costs nothing outside the watched processes. */
		s->wait_tracepoints = false;
		snprintf(why, sizeof(why), "wait_tracepoints=2: no program runs yet to measure");
	} else {
		jw_wait_costs_measure(s->attach, tids, n, emulated, &costs);
		s->wait_tracepoints = jw_wait_choose_tracepoints(&costs, detail, sizeof(detail));
		snprintf(why, sizeof(why), "wait_tracepoints=2: %s", detail);
	}
	if (!s->wait_tracepoints) {
		jw_log(JW_LOG_INFO, "syscall mode on uprobes on the C library's wait functions (%s)",
		       why);
		return 0;
	}
	jw_log(JW_LOG_INFO, "syscall mode on the sys_enter and sys_exit tracepoints (%s): every "
	       "system call of the machine takes the tracing path", why);
	return jw_attach__wait_tracepoints(s->attach);
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

/*
 * Waits up to POLL_MS (less when a followed process is due for a look at @next_look_ns) for
 * records or a stats client, then handles both. Returns >= 0, or -errno when the ring buffer
 * cannot be read.
 */
static int poll_once(struct session *s, uint64_t now, uint64_t next_look_ns)
{
	int n, i, ret, timeout = POLL_MS;
	struct epoll_event ev[2];

	if (next_look_ns < now + POLL_MS * 1000000ULL)
		timeout = next_look_ns <= now ? 0 : (int)((next_look_ns - now) / 1000000) + 1;
	n = epoll_wait(s->epoll_fd, ev, 2, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	ret = ring_buffer__consume(s->rb);
	if (ret < 0 && ret != -EINTR)
		return ret;
	for (i = 0; i < n; i++)
		if (ev[i].data.fd == s->stats_fd)
			session_stats_serve(s);
	return 0;
}

/*
 * Resolves everything the command line names before touching the kernel or the log directory,
 * so that a bad target or symbol leaves nothing behind.
 */
static int setup(struct session *s)
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
	};
	struct jw_reporter_opts ropts = { .cfg = cfg, .out = stdout };
	char err[512];
	size_t i;
	int ret;

	for (i = 0; i < cfg->n_probes; i++)
		snprintf(s->handler_names[i], sizeof(s->handler_names[i]), "%s",
			 cfg->probes[i].entry);
	snprintf(s->handler_names[cfg->n_probes], sizeof(s->handler_names[0]), "syscall");
	/* With no --probe, auto has only the syscall envelope to offer so far. */
	s->syscall_mode = cfg->n_probes == 0 || (cfg->loop_given && cfg->loop == JW_LOOP_SYSCALL);
	ret = session_resolve_exes(s);
	if (ret)
		return ret;
	if (cfg->cmd) {
		ret = jw_child_spawn(cfg->cmd, cfg->user, &s->child, err, sizeof(err));
		if (ret) {
			jw_log(JW_LOG_ERROR, "%s", err);
			return ret;
		}
		s->launched = s->holding = true;
	}
	/*
	 * The program started must resolve; of -p's processes, one that cannot be watched is said
	 * so and the others are watched.
	 */
	if (s->launched) {
		ret = session_resolve_proc(s, s->child.pid, s->n_procs++);
		if (ret)
			return ret;
	}
	for (i = 0; i < cfg->n_pids; i++) {
		int err = add_target(s, cfg->pids[i], true);

		ret = ret ? ret : err;
	}
	if (!s->n_procs && !s->n_exes)
		return ret;
	ret = 0;
	/*
	 * Processes may come: every slot. Else twice the processes given: one that execs is watched
	 * again while its old probes are still being detached from its first slot.
	 */
	aopts.max_threads = s->n_exes || s->launched || cfg->follow || s->n_masters ?
				    JW_MAX_PIDS : 2 * s->n_procs;
	s->policy = jw_policy__new(&cfg->params, cfg->all, cfg->dev);
	if (!s->policy)
		return -ENOMEM;
	s->ksyms = jw_ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		jw_log(JW_LOG_WARN, "kernel frames will not be named: /proc/kallsyms: %s",
		       strerror(errno));
	s->attach = jw_attach__open(&aopts);
	if (!s->attach)
		return -errno;
	ret = jw_attach__sched(s->attach);
	if (!ret && s->syscall_mode)
		ret = choose_wait_hooks(s);
	if (ret)
		return ret;
	/* Followed first: an exec from here on is reported, however soon it comes. */
	ret = follow_targets(s);
	if (ret)
		return ret;
	for (i = 0; i < s->n_procs; i++) {
		ret = session_attach_proc(s, i);
		if (!ret)
			continue;
		if (s->launched)
			return ret;
		if (!jw_target_alive(&s->procs[i].target))
			jw_log(JW_LOG_WARN, "pid %d (%s) exited while being attached",
			       s->procs[i].target.pid, s->procs[i].target.comm);
		session_forget(s, s->procs[i].target.pid, false);
		ret = 0;
	}
	if (!watching_any(s) && !s->n_exes && !s->n_masters) {
		jw_log(JW_LOG_ERROR, "no process left to watch");
		return -ESRCH;
	}
	/* One that exec'd between being read and being followed: watched again as its program. */
	for (i = 0; i < s->n_procs && !s->holding; i++)
		if (s->procs[i].target.pid)
			session_check_exec(s, s->procs[i].target.pid);
	ret = session_watch_exes(s);
	if (ret)
		return ret;
	s->logdir = jw_logdir__open(cfg->log_dir, cfg->params.v[JW_P_LOG_QUOTA_BYTES], err,
				    sizeof(err));
	/* Without it the events still go to stdout, with log_over_limit: true. */
	if (!s->logdir)
		jw_log(JW_LOG_ERROR, "%s: events go to stdout only", err);
	else
		age_logs(s);
	load_budgets(s);
	jw_clocks_init(&s->clocks);
	if (cfg->raw_file) {
		ret = open_raw(s);
		if (ret)
			return ret;
	}
	ropts.policy = s->policy;
	ropts.logdir = s->logdir;
	ropts.ksyms = s->ksyms;
	ropts.raw = s->raw;
	ropts.clocks = &s->clocks;
	s->reporter = jw_reporter__new(&ropts);
	if (!s->reporter)
		return -ENOMEM;
	ret = start_tracer(s);
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
	return s->launched ? start_child(s) : 0;
}

/* Whether any target still runs; says which ones left. */
static bool any_alive(struct session *s)
{
	bool alive = false;
	size_t i;

	for (i = 0; i < s->n_procs; i++) {
		struct jw_proc *p = &s->procs[i];

		if (!p->target.pid)
			continue;
		if (jw_target_thread_alive(&p->target)) {
			alive = true;
			continue;
		}
		/* Its last task, ended by the exit, may still be in the ring buffer; its exit too. */
		ring_buffer__consume(s->rb);
		if (!p->target.pid)
			continue;
		if (p->target.tid != p->target.pid && jw_target_alive(&p->target))
			jw_log(JW_LOG_INFO, "pid %d (%s): its watched thread %d exited; the process is "
			       "no longer watched", p->target.pid, p->target.comm, p->target.tid);
		else	/* its exit record was lost (a full ring buffer) */
			jw_log(JW_LOG_INFO, "pid %d (%s) exited", p->target.pid, p->target.comm);
		session_forget(s, p->target.pid, !jw_target_alive(&p->target));
	}
	session_follow_prune(s);
	/* With --exe, processes started later are awaited; followed ones may still run a loop. */
	return alive || s->n_exes || (s->tree && jw_proctree__size(s->tree));
}

/*
 * Every watched thread whose task has run past hang_ms gets a MAIN_THREAD_HANG event now, with
 * the samples so far; the task's own event follows when it ends. Read from the thread's task
 * state (one map lookup per thread), every sample_interval.
 */
/*
 * A task still running past the trace threshold opens its trace window now, so that the trace
 * shows the jank as it goes on (the seed's trace starts at the crossing too).
 */
static void check_trace(struct session *s, struct thread_slot *th, const struct jw_task_state *st,
			uint64_t now)
{
	uint64_t from = jw_policy__trace_from_ns(&s->cfg->params);
	struct jw_task_facts facts;

	if (!s->tracer || !st->depth || st->start_ns > now || now - st->start_ns < from ||
	    th->trace_seq == st->seq + 1)
		return;
	th->trace_seq = st->seq + 1;
	facts = (struct jw_task_facts){
		.pid = th->proc->target.pid,
		.uid = th->proc->target.uid,
		.begin_boot_ns = st->start_ns + s->clocks.boottime_ns,
		.proc_start_boot_ns = th->proc->start_boot_ns,
		.now_s = (now + s->clocks.realtime_ns) / 1000000000ULL,
	};
	if (!jw_policy__trace_possible(s->policy, &facts))
		return;
	ring_buffer__consume(s->rb);
	jw_tracer__open(s->tracer, th->proc, th->tid, st->seq, st->start_ns, now,
			th->samples.seq == st->seq ? th->samples.items : NULL,
			th->samples.seq == st->seq ? th->samples.n : 0);
}

static void check_hangs(struct session *s, uint64_t now)
{
	uint64_t hang_ns = (uint64_t)s->cfg->params.v[JW_P_HANG_MS] * 1000000;
	uint64_t period_ns = (uint64_t)s->cfg->params.v[JW_P_SAMPLE_PERIOD_MS] * 1000000;
	size_t i;

	for (i = 0; i < s->n_procs; i++) {
		struct thread_slot *th = &s->threads[i];
		struct jw_sample_rec *block = NULL;
		struct jw_task_state st;
		struct jw_task_rec rec;
		void *const *items = NULL;
		void **all = NULL;
		size_t n = 0;
		int ret;

		if (!s->procs[i].target.pid || !th->proc ||
		    jw_attach__task_state(s->attach, i, th->tid, &st))
			continue;
		check_trace(s, th, &st, now);
		if (!jw_hang_due(&st, now, hang_ns, th->hang_seq))
			continue;
		th->hang_seq = st.seq + 1;
		/* What the kernel sent of this task so far. */
		ring_buffer__consume(s->rb);
		if (th->samples.seq == st.seq) {
			items = th->samples.items;
			n = th->samples.n;
		}
		jw_hang_record(&st, th->tid, now, &rec);
		/* Asleep now: where, from the stack it went to sleep with, for the time so far. */
		if (st.off_ns && st.block_ready && st.off_state != JW_OFF_RUNQ &&
		    (block = jw_attach__block_sample(s->attach, i))) {
			all = calloc(n + 1, sizeof(*all));
			if (all) {
				if (n)
					memcpy(all, items, n * sizeof(*all));
				block->weight = (now - st.off_ns) / period_ns;
				block->weight += !block->weight;
				block->block_ns = now - st.off_ns;
				all[n++] = block;
				items = all;
			}
		}
		jw_log(JW_LOG_INFO, "pid %d: a task has been running for %.1f s", rec.hdr.pid,
		       (rec.end_ns - rec.start_ns) / 1e9);
		ret = jw_reporter__hang(s->reporter, th->proc, &rec, items, n);
		if (ret)
			jw_log(JW_LOG_WARN, "cannot report a hang of pid %d: %s", rec.hdr.pid,
			       strerror(-ret));
		free(all);
		free(block);
	}
}

/* Every drop jankwatch knows of: the kernel's and its own. */
static uint64_t drops_so_far(const struct session *s)
{
	const struct jw_report_counts *c = jw_reporter__counts(s->reporter);
	uint64_t drops[JW_DROP_MAX], total = s->lost_samples + c->write_errors;
	size_t i;

	jw_attach__drops(s->attach, drops);
	for (i = 0; i < JW_DROP_MAX; i++)
		total += drops[i];
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

	for (i = 0; i < s->n_procs; i++)
		n += s->procs[i].target.pid != 0;
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
 * SIGHUP: the parameters again from --config and --set. A bad configuration keeps the one in
 * force; what the loaded programs fixed (sample_period_ms, stack_bytes, stats_max_entries)
 * waits for a restart.
 */
static void reload(struct session *s)
{
	static const enum jw_param fixed[] = { JW_P_SAMPLE_PERIOD_MS, JW_P_STACK_BYTES,
					       JW_P_STATS_MAX_ENTRIES, JW_P_WAIT_TRACEPOINTS };
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
	jw_policy__set_params(s->policy, &np);
	jw_attach__set_report_min(s->attach, jw_policy__min_threshold_ns(&np));
	jw_attach__set_stats_every(s->attach, np.v[JW_P_STATS_SAMPLING_INTERVAL]);
	jw_logdir__set_quota(s->logdir, np.v[JW_P_LOG_QUOTA_BYTES]);
	jw_log(JW_LOG_INFO, "SIGHUP: parameters reloaded%s%s", s->cfg->config_file ? " from " : "",
	       s->cfg->config_file ? s->cfg->config_file : "");
}

static int run_loop(struct session *s)
{
	uint64_t start = mono_ns(), last_check = start, last_hang_check = start, last_aging = start;
	uint64_t hang_every = (uint64_t)s->cfg->params.v[JW_P_SAMPLE_INTERVAL] * 1000000;
	uint64_t limit = s->cfg->duration_s > 0 ? (uint64_t)(s->cfg->duration_s * 1e9) : 0;
	uint64_t next_look = 0, now = start;

	while (!stop_requests) {
		int ret = poll_once(s, now, next_look);

		if (ret < 0) {
			jw_log(JW_LOG_ERROR, "reading the ring buffer: %s", strerror(-ret));
			return ret;
		}
		now = mono_ns();
		if (limit && now - start >= limit)
			break;
		if (s->child_running && !s->child_done &&
		    (s->child_done = jw_child_exited(&s->child, 0, &s->child_status))) {
			jw_log(JW_LOG_INFO, "%s (pid %d) exited with status %d", s->cfg->cmd[0],
			       s->child.pid, s->child_status);
			/* The processes it started and left running are watched until they exit. */
			ring_buffer__consume(s->rb);
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
		if (now - s->status_ns >= STATUS_EVERY_NS)
			show_status(s, now);
		if (now - last_aging >= AGING_EVERY_NS) {
			last_aging = now;
			age_logs(s);
		}
		if (now - last_hang_check >= hang_every) {
			last_hang_check = now;
			check_hangs(s, now);
		}
		next_look = session_look(s, now);
		if (now - last_check >= ALIVE_CHECK_NS) {
			last_check = now;
			if (!any_alive(s))
				break;
		}
	}
	/* What the kernel already sent is reported before leaving. */
	ring_buffer__consume(s->rb);
	return 0;
}

static void print_summary(struct session *s)
{
	const struct jw_report_counts *c = jw_reporter__counts(s->reporter);
	uint64_t drops[JW_DROP_MAX];

	jw_log_status(NULL);
	jw_attach__drops(s->attach, drops);
	jw_log(JW_LOG_INFO, "%llu tasks, %llu janks (cpu %llu, runqueue %llu, blocked %llu, io %llu), "
	       "%llu hangs, %llu stack logs written, %llu trace reports decided (%llu trace files "
	       "written), %llu withheld (budget, back-off or quota)",
	       (unsigned long long)jw_attach__tasks(s->attach),
	       (unsigned long long)c->janks, (unsigned long long)c->by_cause[0],
	       (unsigned long long)c->by_cause[1], (unsigned long long)c->by_cause[2],
	       (unsigned long long)c->by_cause[3], (unsigned long long)c->hangs,
	       (unsigned long long)c->stack_logs, (unsigned long long)c->traces,
	       (unsigned long long)jw_tracer__written(s->tracer), (unsigned long long)c->withheld);
	if (drops[JW_DROP_TRACE] || jw_tracer__lost(s->tracer))
		jw_log(JW_LOG_WARN, "trace logs might be incomplete: lost %llu scheduler events "
		       "(ring buffer full), %llu (trace buffers full)",
		       (unsigned long long)drops[JW_DROP_TRACE],
		       (unsigned long long)jw_tracer__lost(s->tracer));
	if (drops[JW_DROP_TASK] || drops[JW_DROP_SAMPLE] || drops[JW_DROP_STATE] ||
	    s->lost_samples || c->write_errors)
		jw_log(JW_LOG_WARN,
		       "output might be incomplete: lost %llu task records, %llu samples "
		       "(ring buffer full), %llu thread states, %llu samples (memory), "
		       "%llu file writes",
		       (unsigned long long)drops[JW_DROP_TASK],
		       (unsigned long long)drops[JW_DROP_SAMPLE],
		       (unsigned long long)drops[JW_DROP_STATE],
		       (unsigned long long)s->lost_samples, (unsigned long long)c->write_errors);
	session_follow_summary(s);
	if (drops[JW_DROP_NEST])
		jw_log(JW_LOG_WARN, "%llu dispatches nested deeper than %d were not tracked",
		       (unsigned long long)drops[JW_DROP_NEST], JW_MAX_NEST);
}

static void teardown(struct session *s)
{
	size_t i;

	session_stats_finish(s);
	/* A trace window decided for a trace is written now, even unfinished. */
	jw_tracer__free(s->tracer);
	s->tracer = NULL;
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	ring_buffer__free(s->rb);
	jw_attach__free(s->attach);
	jw_reporter__free(s->reporter);
	for (i = 0; i < s->n_procs; i++) {
		jw_symbolizer__free(s->procs[i].sym);
		jw_samplebuf_free(&s->threads[i].samples);
		free(s->hooks[i]);
	}
	jw_proctree__free(s->tree);
	jw_ksyms__free(s->ksyms);
	jw_logdir__free(s->logdir);
	jw_policy__free(s->policy);
	if (s->raw && fclose(s->raw))
		jw_log(JW_LOG_WARN, "cannot finish --raw %s: %s", s->cfg->raw_file, strerror(errno));
}

/*
 * With -- CMD, jankwatch exits with the program's status once it has started: a program still
 * running when jankwatch stops (Ctrl-C reaches it too; --duration does not) is given a moment,
 * then left running and jankwatch exits 0. A program that never started: 127, as a shell says.
 */
static int child_status(struct session *s)
{
	if (!s->child_running) {
		if (!s->child_done)
			jw_child_abort(&s->child);
		return s->child_done ? s->child_status : 127;
	}
	if (!s->child_done)
		s->child_done = jw_child_exited(&s->child, stop_requests ? 2000 : 0,
						&s->child_status);
	return s->child_done ? s->child_status : 0;
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
	if (install_signals() || setup(s))
		goto out;
	jw_log(JW_LOG_INFO, "ready; Ctrl-C to stop");
	if (run_loop(s) == 0)
		status = 0;
	/* Ctrl-C: the trace windows decided for a trace are written now, even unfinished. */
	jw_tracer__flush(s->tracer);
	print_summary(s);
out:
	if (s->launched)
		status = child_status(s);
	teardown(s);
	free(s);
	return status;
}
