// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "session/watched.h"
#include "stacks/debuginfo.h"
#include "stacks/symbolize.h"
#include "process/elfsym.h"
#include "process/target.h"
#include "config/options.h"

/* Probe ids: the --probe ones, the waits', the preset's, its callback sites': all in a cookie's. */
_Static_assert(JW_MAX_PROBE_SPECS + 1 + JW_MAX_PRESET_PROBES + 1 <= JW_MAX_PROBES,
	       "probe ids fit in an attach cookie");

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* How long a --probe's function may wait for its file's debug file from debuginfod. */
#define DEBUG_WAIT_MS 30000

/*
 * Function @name's offset in @path; for a stripped file, from its debug file (debuginfo.h),
 * waited for here, before anything is attached. 0 or -errno with the reason in @err.
 */
static int probe_offset(const char *path, const char *name, uint64_t *off, char *err,
			size_t len)
{
	char id[129], dbg[PATH_MAX], why[512];
	uint64_t size;
	size_t used;
	int ret = jw_elf_func_offset(path, name, off, &size, err, len);

	if (ret != -ENOENT)
		return ret;
	if (jw_elf_build_id(path, id, sizeof(id)))
		id[0] = '\0';
	if (jw_debuginfo__wait(jw_debuginfo_global(), *id ? id : NULL, path, DEBUG_WAIT_MS, dbg,
			       sizeof(dbg), why, sizeof(why)) != JW_DEBUG_FOUND) {
		used = strlen(err);
		snprintf(err + used, len - used, " (nor in a debug file: %s)", why);
		return ret;
	}
	jw_log(JW_LOG_INFO, "%s: its symbols from the debug file %s", path, dbg);
	return jw_elf_func_offset_debug(path, dbg, name, off, &size, err, len);
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
	ret = probe_offset(path, spec->entry, entry, err, sizeof(err));
	if (!ret && spec->exit)
		ret = probe_offset(path, spec->exit, exit, err, sizeof(err));
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
static int launched_target(const struct jw_child *child, struct jw_target *t)
{
	char path[64], buf[4096], comm[64];
	FILE *f;
	size_t n;

	memset(t, 0, sizeof(*t));
	t->pid = t->tid = child->pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (jw_proc_stat_parse(buf, comm, sizeof(comm), &t->start_jiffies))
		return -EINVAL;
	snprintf(t->exe, sizeof(t->exe), "%s", child->exe);
	/* The kernel keeps 15 characters of a program's name. */
	snprintf(t->comm, 16, "%.15s", basename_of(child->exe));
	t->uid = getuid();
	return 0;
}

/*
 * The loop thread --thread names in process @pid: a name, in every process; a tid, in the
 * process given with -p only (the processes followed later use their main thread).
 */
static const char *thread_of(const struct jw_config *cfg, pid_t pid)
{
	size_t i;

	if (!cfg->thread || !isdigit((unsigned char)cfg->thread[0]))
		return cfg->thread;
	for (i = 0; i < cfg->n_pids; i++)
		if (cfg->pids[i] == pid)
			return cfg->thread;
	return NULL;
}

/* The loop @preset hooks, as the writers name its tasks. */
/* The functions @preset named in a stripped file, for @p's symbolizer (when it has one yet). */
static void name_code(struct jw_proc *p, const struct jw_preset *preset)
{
	const struct jw_code_names *cn = &preset->code_names;

	if (cn->n)
		jw_symbolizer__name_code(p->sym, cn->file, cn->names, cn->n);
}

static void set_loop(struct jw_proc *p, const struct jw_preset *preset)
{
	p->loop = preset->name;
	p->handler_rule = preset->handler_rule;
	p->handler_addr_is_data = preset->handler_addr_is_data;
	p->names = preset->names;
	name_code(p, preset);
}

/* Syscall mode: finds the wait functions of @w. */
static int resolve_waits(struct jw_watched *w, const struct jw_watch_how *how)
{
	struct jw_proc *p = &w->proc;
	char err[512];

	/*
	 * A program not started yet, or caught before its loader ran, maps no C library yet: its
	 * interpreter says which it will.
	 */
	w->n_waits = jw_find_wait_funcs(how->holding ? 0 : p->target.pid, NULL, p->target.exe,
					w->waits, JW_MAX_WAIT_FUNCS, err, sizeof(err));
	if (w->n_waits < 0) {
		jw_log(JW_LOG_ERROR, "%s", err);
		return w->n_waits;
	}
	p->handlers[how->cfg->n_probes] = JW_WAIT_HANDLER;
	/* Found before it maps them (held, or caught just after its exec): checked once it does. */
	w->check_waits = how->holding || (w->n_waits > 0 &&
					  !jw_target_maps_file(p->target.pid, w->waits[0].path));
	return 0;
}

/* @w's preset's probes as dispatch probes, their ids after the --probe ones' and the waits'. */
static void preset_dispatches(struct jw_watched *w, const struct jw_watch_how *how)
{
	uint32_t base = how->cfg->n_probes + 1;
	struct jw_proc *p = &w->proc;
	size_t k;

	for (k = 0; k < w->preset.n_probes; k++) {
		struct jw_preset_probe *pp = &w->preset.probes[k];
		struct jw_resolved_probe *rp = &w->preset_probes[k];

		snprintf(rp->path, sizeof(rp->path), "%s", pp->path);
		rp->dp = (struct jw_dispatch_probe){
			.pid = p->target.pid,
			.path = rp->path,
			.entry_name = pp->entry,
			.exit_name = pp->exit_offset ? pp->entry : NULL,
			.entry_offset = pp->offset,
			.exit_offset = pp->exit_offset,
			.probe_id = base + k,
			.name_chain = pp->name_arg ? &pp->chain : NULL,
			.inner = true,
			.exact = pp->exact,
			.own_task = pp->own_task,
			.site = pp->exact || pp->per_callback,
			.callee = pp->callee,
		};
		p->handlers[base + k] = pp->entry;
	}
	if (w->preset.n_callbacks)
		p->handlers[base + k] = w->preset.callbacks_named;
}

void jw_watched__callback_probe(const struct jw_watched *w, const struct jw_watch_how *how,
				size_t k, struct jw_dispatch_probe *dp)
{
	const struct jw_preset *pr = &w->preset;
	const struct jw_callback_site *cb = &pr->callbacks[k];

	*dp = (struct jw_dispatch_probe){
		.pid = w->proc.target.pid,
		.path = pr->where,
		.entry_name = pr->callbacks_named,
		.exit_name = pr->callbacks_named,
		.entry_offset = cb->call,
		.exit_offset = cb->ret,
		.probe_id = how->cfg->n_probes + 1 + (uint32_t)pr->n_probes,
		.inner = true,
		.exact = true,
		.site = true,
		.callee = cb->callee,
	};
}

void jw_watched__attach_sites(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_preset *pr = &w->preset;
	const struct jw_target *t = &w->proc.target;
	size_t k, failed = 0;

	for (k = 0; k < pr->n_probes; k++)
		if (w->preset_probes[k].dp.site)
			failed += jw_attach__dispatch(how->attach, &w->preset_probes[k].dp,
						      w->slot) != 0;
	if (pr->n_callbacks) {
		uint64_t lo, hi;

		/* A holding (not yet started) program's libraries are not mapped: it has none. */
		if (!pr->own_handlers && !jw_target_code_range(t->pid, pr->where, &lo, &hi))
			jw_attach__site_range(how->attach, w->slot, lo, hi);
	}
	for (k = 0; k < pr->n_callbacks; k++) {
		struct jw_dispatch_probe dp;

		jw_watched__callback_probe(w, how, k, &dp);
		failed += jw_attach__dispatch(how->attach, &dp, w->slot) != 0;
	}
	if (failed)
		jw_log(JW_LOG_WARN, "pid %d (%s): %zu handler sites of %s not hooked: their handlers "
		       "are named from the stacks", t->pid, t->comm, failed, pr->where);
}

/* @w's preset's probes on the kernel's side, then its handler sites. */
static int attach_preset(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_preset *pr = &w->preset;
	size_t k;
	int ret;

	for (k = 0; k < pr->n_probes; k++) {
		if (w->preset_probes[k].dp.site)
			continue;
		ret = jw_attach__dispatch(how->attach, &w->preset_probes[k].dp, w->slot);
		if (ret)
			return ret;
	}
	jw_watched__attach_sites(w, how);
	return 0;
}

/*
 * Syscall mode: the preset for @p (auto), whose probes inside the wait envelope name the
 * handlers. Says which loop is used and why.
 */
static int resolve_preset(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_config *cfg = how->cfg;
	struct jw_proc *p = &w->proc;
	bool early = how->holding;
	char why[512];
	int ret;

	ret = jw_preset_detect(p->target.pid, p->target.exe, cfg->loop,
			       cfg->params.v[JW_P_HANDLER_SITES], &w->preset, why, sizeof(why));
	if (ret && !early) {
		jw_log(JW_LOG_ERROR, "%s", why);
		return ret;
	}
	if (early && jw_loop_is_syscall(w->preset.name) && !jw_loop_is_syscall(cfg->loop))
		snprintf(why, sizeof(why), "%s: no libraries mapped yet; looked at again once it "
			 "runs", cfg->loop);
	set_loop(p, &w->preset);
	preset_dispatches(w, how);
	snprintf(w->loop_why, sizeof(w->loop_why), "%s", why);
	jw_log(JW_LOG_INFO, "pid %d (%s): loop %s (%s): a task is the time between the "
	       "thread's waits (%d wait functions in %s)", p->target.pid, p->target.comm,
	       p->loop, why, w->n_waits, w->waits[0].path);
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* Linux 6.9: a pidfd for a thread that is not the leader */
#endif

/* A pidfd for thread @tid of process @pid, or -1 with errno set. */
static int open_thread_pidfd(pid_t pid, pid_t tid)
{
	return syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
}

/* Reads the target and resolves every --probe in it, then syscall mode's waits and preset. */
static int resolve(struct jw_watched *w, pid_t pid, const struct jw_watch_how *how)
{
	const struct jw_config *cfg = how->cfg;
	struct jw_proc *p = &w->proc;
	long ticks = sysconf(_SC_CLK_TCK);
	char err[512];
	size_t k;
	int ret;

	if (how->holding) {
		ret = launched_target(how->child, &p->target);
	} else {
		ret = jw_target_open(pid, thread_of(cfg, pid), &p->target, err, sizeof(err));
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
	for (k = 0; k < cfg->n_probes; k++) {
		const struct jw_probe_spec *spec = &cfg->probes[k];
		struct jw_resolved_probe *rp = &w->probes[k];

		ret = resolve_probe(spec, how->holding ? getpid() : pid,
				    how->holding || how->by_exe ? p->target.exe : NULL, rp->path,
				    sizeof(rp->path), &rp->dp.entry_offset, &rp->dp.exit_offset);
		if (ret)
			return ret;
		rp->dp.pid = pid;
		rp->dp.path = rp->path;
		rp->dp.entry_name = spec->entry;
		rp->dp.exit_name = spec->exit;
		rp->dp.probe_id = k;
		p->handlers[k] = spec->entry;
	}
	if (!how->syscall_mode) {
		p->loop = "probe";
		return 0;
	}
	ret = resolve_waits(w, how);
	if (!ret)
		ret = resolve_preset(w, how);
	return ret;
}

struct jw_watched *jw_watched__new(pid_t pid, uint32_t slot, const struct jw_watch_how *how)
{
	struct jw_watched *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return NULL;
	w->slot = slot;
	w->pidfd = -1;
	ret = resolve(w, pid, how);
	if (ret) {
		jw_watched__free(w, how);
		errno = -ret;
		return NULL;
	}
	return w;
}

/* The kernel's side: the thread's state, the dispatch probes, the waits, the sampler. */
static int attach_hooks(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_target *t = &w->proc.target;
	bool wait_probes = how->syscall_mode && !how->wait_tracepoints && !how->wait_switches;
	/* Its waits' returns seen only from the next one on: uprobes, or fexit (wait_tp.h). */
	bool first_wait = wait_probes || (how->syscall_mode && how->wait_fexit);
	size_t k;
	int ret;

	/*
	 * Its state first: the probes write to it from their first hit. A running program's wait
	 * in progress began before its probes: its wakeup is seen instead (first_wait).
	 */
	ret = jw_attach__watch_thread(how->attach, t->pid, t->tid, w->slot,
				      first_wait && !how->holding);
	if (ret) {
		jw_log(JW_LOG_ERROR, "cannot watch thread %d: %s", t->tid, strerror(-ret));
		return ret;
	}
	/* sched_hooks=1: its switches seen from here. */
	ret = jw_attach__thread_switches(how->attach, t->pid, t->tid, w->slot);
	if (ret)
		return ret;
	for (k = 0; k < how->cfg->n_probes; k++) {
		ret = jw_attach__dispatch(how->attach, &w->probes[k].dp, w->slot);
		if (ret)
			return ret;
	}
	if (how->syscall_mode) {
		ret = attach_preset(w, how);
		if (ret)
			return ret;
	}
	/* On the system call tracepoints, attached once, the waits need nothing per process. */
	for (k = 0; wait_probes && (int)k < w->n_waits; k++) {
		const struct jw_wait_func *f = &w->waits[k];

		ret = jw_attach__wait(how->attach, t->pid, f->path, f->name, f->offset,
				      how->cfg->n_probes, w->slot);
		if (ret)
			return ret;
	}
	/* Waits on the tracepoints are seen from now, dispatches from here: tasks may begin. */
	if (how->syscall_mode) {
		ret = jw_attach__probes_ready(how->attach, w->slot);
		if (ret)
			return ret;
	}
	/* The session's samplers, one per CPU, sample it too (session_samplers.h). */
	if (how->cpu_samplers)
		return 0;
	return jw_attach__sampler(how->attach, t->pid, t->tid,
				  how->cfg->params.v[JW_P_SAMPLE_PERIOD_MS]);
}

int jw_watched__attach(struct jw_watched *w, const struct jw_watch_how *how)
{
	struct jw_proc *p = &w->proc;
	int ret;

	w->attached = true;
	ret = attach_hooks(w, how);
	if (ret)
		return ret;
	/* A program not started yet is named once it has exec'd. */
	p->sym = how->holding ? NULL : jw_symbolizer__new(p->target.pid);
	name_code(p, &w->preset);
	if (!p->sym && !how->holding) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot read the mappings of pid %d: %s", p->target.pid,
		       strerror(errno));
		return ret;
	}
	/* To unlink the thread from its slot when it is forgotten; a nicety, not a need. */
	w->pidfd = open_thread_pidfd(p->target.pid, p->target.tid);
	/* Its libraries were not mapped when it was resolved: the presets that need none yet. */
	w->redetect = how->syscall_mode && how->holding && jw_loop_is_syscall(p->loop) &&
		      !jw_loop_is_syscall(how->cfg->loop);
	ret = jw_samplebuf_init(&w->samples, JW_SAMPLES_HELD);
	if (ret)
		return ret;
	jw_tracer__watch(how->tracer, p);
	jw_log(JW_LOG_INFO, "watching pid %d (%s), thread %d", p->target.pid, p->target.comm,
	       p->target.tid);
	return 0;
}

/*
 * A process caught at its exec (or started by us) mapped no library when it was resolved: once
 * it runs, a preset that names handlers from the stacks (glib, libuv, libevent) can still be
 * recognized, its handler sites hooked then. Presets that need probes of their own to be one
 * (redis, python) are not added late.
 */
static void redetect_preset(struct jw_watched *w, const struct jw_watch_how *how)
{
	struct jw_proc *p = &w->proc;
	struct jw_preset preset;
	char why[512];

	w->redetect = false;
	if (jw_preset_detect(p->target.pid, p->target.exe, how->cfg->loop,
			     how->cfg->params.v[JW_P_HANDLER_SITES], &preset, why, sizeof(why))) {
		jw_log(JW_LOG_WARN, "pid %d (%s): %s; its tasks are timed wait to wait (syscall)",
		       p->target.pid, p->target.comm, why);
		return;
	}
	if (!preset.handler_rule)
		return;
	w->preset = preset;
	set_loop(p, &w->preset);
	preset_dispatches(w, how);
	snprintf(w->loop_why, sizeof(w->loop_why), "%s", why);
	attach_preset(w, how);
	jw_log(JW_LOG_INFO, "pid %d (%s): loop %s (%s)", p->target.pid, p->target.comm, p->loop,
	       why);
}

/*
 * Tries of jw_watched__check_waits() (every half second) before a program that maps no C
 * library at all is said to have no waits hooked: its loader maps one before its first line.
 */
#define WAITS_CHECK_TRIES 10

void jw_watched__check_waits(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_target *t = &w->proc.target;
	struct jw_wait_func found[JW_MAX_WAIT_FUNCS];
	char libc[PATH_MAX], err[512];
	int n, k, ret = 0;

	if (!w->check_waits || how->holding)
		return;
	if (!how->syscall_mode || how->wait_tracepoints || how->wait_switches || w->n_waits <= 0 ||
	    jw_target_maps_file(t->pid, w->waits[0].path)) {
		w->check_waits = false;
		return;
	}
	if (jw_waits_mapped_libc(t->pid, libc, sizeof(libc))) {
		if (++w->waits_checks < WAITS_CHECK_TRIES)
			return;
		w->check_waits = false;
		jw_log(JW_LOG_WARN, "pid %d (%s) maps neither %s, whose wait functions were hooked, "
		       "nor another C library: its tasks are not seen (give --probe "
		       "BIN:ENTRY[:EXIT], or --set wait_tracepoints=1)", t->pid, t->comm,
		       w->waits[0].path);
		return;
	}
	w->check_waits = false;
	n = jw_find_wait_funcs(t->pid, NULL, t->exe, found, JW_MAX_WAIT_FUNCS, err, sizeof(err));
	for (k = 0; k < n && !ret; k++)
		ret = jw_attach__wait(how->attach, t->pid, found[k].path, found[k].name,
				      found[k].offset, how->cfg->n_probes, w->slot);
	if (n <= 0 || ret) {
		jw_log(JW_LOG_WARN, "pid %d (%s) maps %s, not %s whose wait functions were hooked: "
		       "its tasks are not seen (%s)", t->pid, t->comm, libc, w->waits[0].path,
		       n <= 0 ? err : strerror(-ret));
		return;
	}
	jw_log(JW_LOG_INFO, "pid %d (%s) maps %s, not %s that its interpreter names: its wait "
	       "functions are hooked there", t->pid, t->comm, found[0].path, w->waits[0].path);
	memcpy(w->waits, found, n * sizeof(found[0]));
	w->n_waits = n;
}

void jw_watched__settle(struct jw_watched *w, const struct jw_watch_how *how)
{
	if (w->redetect)
		redetect_preset(w, how);
	/* Its mappings could not be read when it was watched (it was exec'ing): once more now. */
	if (!w->proc.sym) {
		w->proc.sym = jw_symbolizer__new(w->proc.target.pid);
		name_code(&w->proc, &w->preset);
	}
}

void jw_watched__free(struct jw_watched *w, const struct jw_watch_how *how)
{
	const struct jw_target *t;

	if (!w)
		return;
	t = &w->proc.target;
	if (w->attached && how->attach) {
		jw_attach__forget(how->attach, t->pid, t->tid, w->slot);
		jw_tracer__forget(how->tracer, t->pid);
	}
	jw_symbolizer__free(w->proc.sym);
	jw_samplebuf_free(&w->samples);
	jw_sitescale_free(&w->scale);
	if (w->pidfd >= 0) {
		if (how->attach)
			jw_attach__drop_link(how->attach, w->pidfd, t->tid);
		close(w->pidfd);
	}
	free(w);
}
