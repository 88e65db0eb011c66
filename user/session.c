// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach.h"
#include "elfsym.h"
#include "log.h"
#include "policy.h"
#include "launch.h"
#include "presets.h"
#include "report.h"
#include "rawfile.h"
#include "samplebuf.h"
#include "session.h"

#define POLL_MS 100
#define ALIVE_CHECK_NS 500000000ULL
/* Samples held per thread for the task in flight: evenly thinned beyond this. */
#define SAMPLES_HELD 512

/* A watched thread and the samples of its task in flight. */
struct thread_slot {
	pid_t tid;
	struct jw_proc *proc;
	struct jw_samplebuf samples;
};

/* A --probe resolved in one process. */
struct resolved_probe {
	struct jw_dispatch_probe dp;
	char path[PATH_MAX];
};

/* The wait functions hooked in one process (syscall mode). */
struct proc_waits {
	struct jw_wait_func f[JW_MAX_WAIT_FUNCS];
	int n;
};

/* What was resolved to hook one process. */
struct proc_hooks {
	struct resolved_probe probes[JW_MAX_PROBE_SPECS];
	struct proc_waits waits;
	struct jw_preset preset;	/* syscall mode: what names the handlers inside the waits */
	struct resolved_probe preset_probes[JW_MAX_PRESET_PROBES];
};

/* An executable --exe watches. */
struct watched_exe {
	const char *path;
	dev_t dev;
	ino_t ino;
};

struct session {
	const struct jw_config *cfg;
	/* Slot i: procs[i], its hooks and its watched thread; a slot with pid 0 is free. */
	struct jw_proc procs[JW_MAX_PIDS];
	struct proc_hooks *hooks[JW_MAX_PIDS];
	struct thread_slot threads[JW_MAX_PIDS];
	size_t n_procs;			/* slots in use or used: the highest + 1 */
	struct watched_exe exes[JW_MAX_EXES];
	size_t n_exes;
	struct jw_child child;		/* -- CMD: the program started, procs[0] */
	bool launched;
	bool child_running;		/* released and exec'd */
	int child_status;		/* once it exited: its status as a shell gives it */
	bool child_done;
	bool syscall_mode;		/* tasks bounded by the wait calls */
	bool just_exec;			/* resolving a process caught at exec: nothing mapped yet */
	char handler_names[JW_MAX_PROBE_SPECS + 1][256];	/* the last: "syscall" */
	struct jw_attach *attach;
	struct jw_policy *policy;
	struct jw_logdir *logdir;
	struct jw_ksyms *ksyms;
	struct jw_reporter *reporter;
	struct jw_clocks clocks;
	FILE *raw;		/* --raw capture, or NULL */
	struct ring_buffer *rb;
	uint64_t records;
	uint64_t lost_samples;	/* samples user space could not keep (out of memory) */
	uint64_t unknown;	/* records of a thread or type this session does not know */
	int failed;
};

static volatile sig_atomic_t stop_requests;

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
	if (th->samples.seq == t->seq) {
		items = th->samples.items;
		n = th->samples.n;
	}
	if (t->hdr.flags & JW_TASK_EXITED)
		jw_log(JW_LOG_INFO, "pid %d exited %.0f ms into a task", t->hdr.pid,
		       (t->end_ns - t->start_ns) / 1e6);
	ret = jw_reporter__task(s->reporter, th->proc, t, items, n);
	jw_samplebuf_clear(&th->samples);
	if (ret)
		jw_log(JW_LOG_WARN, "cannot report a task of pid %d: %s", t->hdr.pid,
		       strerror(-ret));
	return 0;
}

static int add_proc(struct session *s, pid_t pid);
static bool watching(const struct session *s, pid_t pid);

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
	case JW_REC_EXEC:
		/* --exe: a new process of a watched executable (a pid reused is a new one too). */
		if (watching(s, h->pid))
			return 0;
		s->just_exec = true;
		if (add_proc(s, h->pid) == 0)
			jw_log(JW_LOG_INFO, "pid %d started: watching it", h->pid);
		s->just_exec = false;
		return 0;
	case JW_REC_SAMPLE:
		th = find_thread(s, h->tid);
		if (!th || h->size < sizeof(struct jw_sample_rec))
			break;
		if (jw_samplebuf_add(&th->samples, ((const struct jw_sample_rec *)data)->seq, data,
				     h->size))
			s->lost_samples++;
		return 0;
	}
	s->unknown++;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The file --probe BIN designates: a path; the executable @exe by its name; or a file process
 * @pid maps by that name (for a program not started yet, jankwatch's own libraries stand for
 * the system's).
 */
static int resolve_probe(const struct jw_probe_spec *spec, pid_t pid, const char *exe,
			 char *path, size_t len, uint64_t *entry, uint64_t *exit)
{
	char err[1024];
	uint64_t size;
	int ret;

	if (strchr(spec->bin, '/')) {
		if (!realpath(spec->bin, path)) {
			ret = -errno;
			jw_log(JW_LOG_ERROR, "--probe %s: %s", spec->bin, strerror(errno));
			return ret;
		}
	} else if (exe && !strcmp(spec->bin, basename_of(exe))) {
		snprintf(path, len, "%s", exe);
	} else if (jw_target_find_mapping(pid, spec->bin, path, len)) {
		jw_log(JW_LOG_ERROR, "--probe %s: pid %d maps no file of that name", spec->bin, pid);
		return -ENOENT;
	}
	ret = jw_elf_func_offset(path, spec->entry, entry, &size, err, sizeof(err));
	if (!ret && spec->exit)
		ret = jw_elf_func_offset(path, spec->exit, exit, &size, err, sizeof(err));
	else
		*exit = 0;
	if (ret)
		jw_log(JW_LOG_ERROR, "%s", err);
	return ret;
}

/*
 * The program -- CMD started, held before its exec: what it will be. Its start time is the
 * fork's, which exec keeps; its name and executable are the program's.
 */
static int launched_target(struct session *s, struct jw_target *t)
{
	char path[64], buf[4096], comm[64];
	FILE *f;
	size_t n;

	memset(t, 0, sizeof(*t));
	t->pid = t->tid = s->child.pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (jw_proc_stat_parse(buf, comm, sizeof(comm), &t->start_jiffies))
		return -EINVAL;
	snprintf(t->exe, sizeof(t->exe), "%s", s->child.exe);
	/* The kernel keeps 15 characters of a program's name. */
	snprintf(t->comm, 16, "%.15s", basename_of(s->child.exe));
	t->uid = getuid();
	return 0;
}

/* Syscall mode: finds the wait functions of @p, and says how its loop is hooked. */
static int resolve_waits(struct session *s, struct jw_proc *p, struct proc_waits *w)
{
	uint32_t id = s->cfg->n_probes;
	char err[512];

	/*
	 * A program not started yet, or caught at its exec, maps no C library yet: the one its
	 * loader will map is the system's, which is jankwatch's.
	 */
	w->n = jw_find_wait_funcs(s->launched || s->just_exec ? getpid() : p->target.pid,
				  p->target.exe, w->f, JW_MAX_WAIT_FUNCS, err, sizeof(err));
	if (w->n < 0) {
		jw_log(JW_LOG_ERROR, "%s", err);
		return w->n;
	}
	p->handlers[id] = s->handler_names[id];
	return 0;
}

/*
 * Syscall mode: the preset for @p (auto), whose probes inside the wait envelope name the
 * handlers. Says which loop is used and why.
 */
static void resolve_preset(struct session *s, struct jw_proc *p, struct proc_hooks *h)
{
	uint32_t base = s->cfg->n_probes + 1;
	char why[512];
	size_t k;

	jw_preset_detect(p->target.pid, p->target.exe, s->cfg->loop, &h->preset, why, sizeof(why));
	p->loop = h->preset.name;
	p->handler_below = h->preset.handler_below;
	for (k = 0; k < h->preset.n_probes; k++) {
		struct jw_preset_probe *pp = &h->preset.probes[k];
		struct resolved_probe *rp = &h->preset_probes[k];

		snprintf(rp->path, sizeof(rp->path), "%s", pp->path);
		rp->dp = (struct jw_dispatch_probe){
			.pid = p->target.pid,
			.path = rp->path,
			.entry_name = pp->entry,
			.entry_offset = pp->offset,
			.probe_id = base + k,
			.name_chain = pp->name_arg ? &pp->chain : NULL,
		};
		p->handlers[base + k] = pp->entry;
	}
	jw_log(JW_LOG_INFO, "pid %d (%s): loop %s (%s): a task is the time between the "
	       "thread's waits (%d wait functions in %s)", p->target.pid, p->target.comm,
	       p->loop, why, h->waits.n, h->waits.f[0].path);
}

/* Reads process @pid into slot @i and resolves every --probe in it; nothing is attached yet. */
static int resolve_proc(struct session *s, pid_t pid, size_t i)
{
	struct jw_proc *p = &s->procs[i];
	long ticks = sysconf(_SC_CLK_TCK);
	struct proc_hooks *h;
	char err[512];
	size_t k;
	int ret;

	h = s->hooks[i] = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (s->launched) {
		ret = launched_target(s, &p->target);
	} else {
		ret = jw_target_open(pid, s->cfg->thread, &p->target, err, sizeof(err));
		if (ret)
			jw_log(JW_LOG_ERROR, "%s", err);
	}
	if (ret)
		return ret;
	if (jw_elf_is_go(p->target.exe)) {
		jw_log(JW_LOG_ERROR, "pid %d (%s) is a Go program: jankwatch does not watch Go "
		       "(return probes break the stacks goroutines switch between)", pid,
		       p->target.comm);
		return -ENOTSUP;
	}
	p->start_boot_ns = p->target.start_jiffies * (1000000000ULL / (ticks > 0 ? ticks : 100));
	for (k = 0; k < s->cfg->n_probes; k++) {
		const struct jw_probe_spec *spec = &s->cfg->probes[k];
		struct resolved_probe *rp = &h->probes[k];

		ret = resolve_probe(spec, s->launched || s->just_exec ? getpid() : pid,
				    s->launched || s->n_exes ? p->target.exe : NULL, rp->path,
				    sizeof(rp->path), &rp->dp.entry_offset, &rp->dp.exit_offset);
		if (ret)
			return ret;
		rp->dp.pid = pid;
		rp->dp.path = rp->path;
		rp->dp.entry_name = spec->entry;
		rp->dp.exit_name = spec->exit;
		rp->dp.probe_id = k;
		p->handlers[k] = s->handler_names[k];
	}
	if (!s->syscall_mode) {
		p->loop = "probe";
		return 0;
	}
	ret = resolve_waits(s, p, &h->waits);
	if (!ret)
		resolve_preset(s, p, h);
	return ret;
}

/* Attaches the probes and the sampler of the process in slot @i, and starts naming its code. */
static int attach_proc(struct session *s, size_t i)
{
	struct jw_proc *p = &s->procs[i];
	struct thread_slot *th = &s->threads[i];
	struct proc_hooks *h = s->hooks[i];
	size_t k;
	int ret;

	for (k = 0; k < s->cfg->n_probes; k++) {
		ret = jw_attach__dispatch(s->attach, &h->probes[k].dp);
		if (ret)
			return ret;
	}
	for (k = 0; s->syscall_mode && k < h->preset.n_probes; k++) {
		ret = jw_attach__dispatch(s->attach, &h->preset_probes[k].dp);
		if (ret)
			return ret;
	}
	for (k = 0; s->syscall_mode && (int)k < h->waits.n; k++) {
		const struct jw_wait_func *f = &h->waits.f[k];

		ret = jw_attach__wait(s->attach, p->target.pid, f->path, f->name, f->offset,
				      s->cfg->n_probes);
		if (ret)
			return ret;
	}
	ret = jw_attach__watch_thread(s->attach, p->target.pid, p->target.tid, i);
	if (ret) {
		jw_log(JW_LOG_ERROR, "cannot watch thread %d: %s", p->target.tid, strerror(-ret));
		return ret;
	}
	ret = jw_attach__sampler(s->attach, p->target.pid, p->target.tid,
				 s->cfg->params.v[JW_P_SAMPLE_PERIOD_MS]);
	if (ret)
		return ret;
	/* A program not started yet is named once it has exec'd. */
	p->sym = s->launched ? NULL : jw_symbolizer__new(p->target.pid);
	if (!p->sym && !s->launched) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot read the mappings of pid %d: %s", p->target.pid,
		       strerror(errno));
		return ret;
	}
	th->tid = p->target.tid;
	th->proc = p;
	ret = jw_samplebuf_init(&th->samples, SAMPLES_HELD);
	if (ret)
		return ret;
	jw_log(JW_LOG_INFO, "watching pid %d (%s), thread %d", p->target.pid, p->target.comm,
	       p->target.tid);
	return 0;
}

/* Detaches and forgets the process in slot @i: it exited, or could not be watched. */
static void drop_proc(struct session *s, size_t i)
{
	struct jw_proc *p = &s->procs[i];

	if (s->attach && p->target.pid)
		jw_attach__forget(s->attach, p->target.pid, p->target.tid);
	jw_symbolizer__free(p->sym);
	jw_samplebuf_free(&s->threads[i].samples);
	free(s->hooks[i]);
	s->hooks[i] = NULL;
	memset(p, 0, sizeof(*p));
	memset(&s->threads[i], 0, sizeof(s->threads[i]));
}

/* Whether process @pid, as it is now, is watched already. */
static bool watching(const struct session *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid == pid && jw_target_alive(&s->procs[i].target))
			return true;
	return false;
}

/*
 * Watches process @pid in a free slot: resolve, then attach. A process that cannot be watched
 * is forgotten again. Returns 0 or -errno.
 */
static int add_proc(struct session *s, pid_t pid)
{
	size_t i;
	int ret;

	for (i = 0; i < s->n_procs && s->procs[i].target.pid; i++)
		;
	if (i == JW_MAX_PIDS) {
		jw_log(JW_LOG_WARN, "pid %d: already watching %d processes", pid, JW_MAX_PIDS);
		return -ENOSPC;
	}
	if (i == s->n_procs)
		s->n_procs++;
	ret = resolve_proc(s, pid, i);
	if (!ret && s->attach)
		ret = attach_proc(s, i);
	if (ret)
		drop_proc(s, i);
	return ret;
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

/* --exe: the files' identities, checked before anything is attached. */
static int resolve_exes(struct session *s)
{
	size_t i;

	for (i = 0; i < s->cfg->n_exes; i++) {
		const char *path = s->cfg->exes[i];
		struct stat st;

		if (stat(path, &st)) {
			jw_log(JW_LOG_ERROR, "--exe %s: %s", path, strerror(errno));
			return -errno;
		}
		if (!S_ISREG(st.st_mode) || access(path, X_OK)) {
			jw_log(JW_LOG_ERROR, "--exe %s: not an executable file", path);
			return -EINVAL;
		}
		s->exes[s->n_exes++] = (struct watched_exe){ path, st.st_dev, st.st_ino };
	}
	return 0;
}

/* Whether process @pid runs one of the --exe files. */
static bool runs_watched_exe(const struct session *s, pid_t pid)
{
	char path[64];
	struct stat st;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return false;
	for (i = 0; i < s->n_exes; i++)
		if (s->exes[i].dev == st.st_dev && s->exes[i].ino == st.st_ino)
			return true;
	return false;
}

/*
 * --exe: from now on the kernel reports every exec of the files; the processes already running
 * them are found in /proc. One that cannot be watched is said so; the others are watched.
 */
static int watch_exes(struct session *s)
{
	struct dirent *de;
	size_t i;
	DIR *dir;
	int ret;

	for (i = 0; i < s->n_exes; i++) {
		/* The kernel's dev_t packs major and minor its own way. */
		uint64_t kdev = ((uint64_t)major(s->exes[i].dev) << 20) | minor(s->exes[i].dev);

		ret = jw_attach__exe(s->attach, kdev, s->exes[i].ino);
		if (ret) {
			jw_log(JW_LOG_ERROR, "--exe %s: cannot hook exec: %s", s->exes[i].path,
			       strerror(-ret));
			return ret;
		}
	}
	if (!s->n_exes)
		return 0;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = atoi(de->d_name);

		if (pid > 0 && pid != getpid() && runs_watched_exe(s, pid) && !watching(s, pid))
			add_proc(s, pid);
	}
	closedir(dir);
	for (i = 0; i < s->n_exes; i++)
		jw_log(JW_LOG_INFO, "--exe %s: watching its processes, now and later",
		       s->exes[i].path);
	return 0;
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
	p->sym = jw_symbolizer__new(p->target.pid);
	if (!p->sym) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot read the mappings of pid %d: %s", p->target.pid,
		       strerror(-ret));
		return ret;
	}
	jw_log(JW_LOG_INFO, "started %s as pid %d", s->cfg->cmd[0], p->target.pid);
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
		/* With --exe, room for as many processes as jankwatch watches. */
		.max_threads = cfg->n_exes ? JW_MAX_PIDS : cfg->n_pids + (cfg->cmd != NULL),
		.sample_period_ns = cfg->params.v[JW_P_SAMPLE_PERIOD_MS] * 1000000ULL,
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
	ret = resolve_exes(s);
	if (ret)
		return ret;
	if (cfg->cmd) {
		ret = jw_child_spawn(cfg->cmd, cfg->user, &s->child, err, sizeof(err));
		if (ret) {
			jw_log(JW_LOG_ERROR, "%s", err);
			return ret;
		}
		s->launched = true;
	}
	/* -p PIDs and the program started: every one must resolve, or nothing is attached. */
	if (s->launched)
		ret = resolve_proc(s, s->child.pid, s->n_procs++);
	for (i = 0; !ret && i < cfg->n_pids; i++)
		ret = resolve_proc(s, cfg->pids[i], s->n_procs++);
	if (ret)
		return ret;
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
	if (ret)
		return ret;
	for (i = 0; i < s->n_procs; i++) {
		ret = attach_proc(s, i);
		if (ret)
			return ret;
	}
	ret = watch_exes(s);
	if (ret)
		return ret;
	s->logdir = jw_logdir__open(cfg->log_dir, cfg->params.v[JW_P_LOG_QUOTA_BYTES], err,
				    sizeof(err));
	if (!s->logdir) {
		jw_log(JW_LOG_ERROR, "%s", err);
		return -errno;
	}
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
	s->rb = ring_buffer__new(jw_attach__events_fd(s->attach), on_record, s, NULL);
	if (!s->rb) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot open the ring buffer: %s", strerror(-ret));
		return ret;
	}
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
		if (jw_target_alive(&p->target)) {
			alive = true;
			continue;
		}
		/* Its last task, ended by the exit, may still be in the ring buffer. */
		ring_buffer__consume(s->rb);
		jw_log(JW_LOG_INFO, "pid %d (%s) exited", p->target.pid, p->target.comm);
		drop_proc(s, i);
	}
	/* With --exe, processes started later are awaited. */
	return alive || s->n_exes;
}

static int run_loop(struct session *s)
{
	uint64_t start = mono_ns(), last_check = start;
	uint64_t limit = s->cfg->duration_s > 0 ? (uint64_t)(s->cfg->duration_s * 1e9) : 0;

	while (!stop_requests) {
		uint64_t now;
		int ret = ring_buffer__poll(s->rb, POLL_MS);

		if (ret < 0 && ret != -EINTR) {
			jw_log(JW_LOG_ERROR, "reading the ring buffer: %s", strerror(-ret));
			return ret;
		}
		now = mono_ns();
		if (limit && now - start >= limit)
			break;
		if (s->child_running &&
		    (s->child_done = jw_child_exited(&s->child, 0, &s->child_status))) {
			jw_log(JW_LOG_INFO, "%s (pid %d) exited with status %d", s->cfg->cmd[0],
			       s->child.pid, s->child_status);
			break;
		}
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

	jw_attach__drops(s->attach, drops);
	jw_log(JW_LOG_INFO, "%llu janks, %llu stack logs written, %llu withheld (budget or quota)",
	       (unsigned long long)c->janks, (unsigned long long)c->stack_logs,
	       (unsigned long long)c->withheld);
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
	if (drops[JW_DROP_NEST])
		jw_log(JW_LOG_WARN, "%llu dispatches nested deeper than %d were not tracked",
		       (unsigned long long)drops[JW_DROP_NEST], JW_MAX_NEST);
}

static void teardown(struct session *s)
{
	size_t i;

	ring_buffer__free(s->rb);
	jw_attach__free(s->attach);
	jw_reporter__free(s->reporter);
	for (i = 0; i < s->n_procs; i++) {
		jw_symbolizer__free(s->procs[i].sym);
		jw_samplebuf_free(&s->threads[i].samples);
		free(s->hooks[i]);
	}
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

int jw_session_run(const struct jw_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));
	int status = 1;

	if (!s) {
		jw_log(JW_LOG_ERROR, "out of memory");
		return 1;
	}
	s->cfg = cfg;
	if (install_signals() || setup(s))
		goto out;
	jw_log(JW_LOG_INFO, "ready; Ctrl-C to stop");
	if (run_loop(s) == 0)
		status = 0;
	print_summary(s);
out:
	if (s->launched)
		status = child_status(s);
	teardown(s);
	free(s);
	return status;
}
