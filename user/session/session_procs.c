// SPDX-License-Identifier: GPL-2.0-only
/*
 * The processes a session watches: each in a slot, resolved (target, probes, waits, preset),
 * attached, and forgotten when it exits or execs.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target/elfsym.h"
#include "base/log.h"
#include "session/session_priv.h"
#include "stacks/symbolize.h"

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

/* Syscall mode: finds the wait functions of @p, and says how its loop is hooked. */
static int resolve_waits(struct session *s, struct jw_proc *p, struct proc_waits *w)
{
	uint32_t id = s->cfg->n_probes;
	char err[512];

	/*
	 * A program not started yet maps no C library yet: the one its loader will map is the
	 * system's, which is jankwatch's.
	 */
	w->n = jw_find_wait_funcs(s->holding ? getpid() : p->target.pid,
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
static int resolve_preset(struct session *s, struct jw_proc *p, struct proc_hooks *h)
{
	uint32_t base = s->cfg->n_probes + 1;
	bool early = s->holding;
	char why[512];
	size_t k;
	int ret;

	ret = jw_preset_detect(p->target.pid, p->target.exe, s->cfg->loop, &h->preset, why,
			       sizeof(why));
	if (ret && !early) {
		jw_log(JW_LOG_ERROR, "%s", why);
		return ret;
	}
	if (early && !strcmp(h->preset.name, "syscall") && s->cfg->loop != JW_LOOP_SYSCALL)
		snprintf(why, sizeof(why), "%s: no libraries mapped yet; looked at again once it "
			 "runs", jw_loop_name(s->cfg->loop));
	p->loop = h->preset.name;
	p->handler_rule = h->preset.handler_rule;
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
			.inner = true,
		};
		p->handlers[base + k] = pp->entry;
	}
	jw_log(JW_LOG_INFO, "pid %d (%s): loop %s (%s): a task is the time between the "
	       "thread's waits (%d wait functions in %s)", p->target.pid, p->target.comm,
	       p->loop, why, h->waits.n, h->waits.f[0].path);
	return 0;
}

/* Reads process @pid into slot @i and resolves every --probe in it; nothing is attached yet. */
int session_resolve_proc(struct session *s, pid_t pid, size_t i)
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
	if (s->holding) {
		ret = launched_target(s, &p->target);
	} else {
		ret = jw_target_open(pid, thread_of(s->cfg, pid), &p->target, err, sizeof(err));
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

		ret = resolve_probe(spec, s->holding ? getpid() : pid,
				    s->holding || s->n_exes ? p->target.exe : NULL, rp->path,
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
		ret = resolve_preset(s, p, h);
	return ret;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* Linux 6.9: a pidfd for a thread that is not the leader */
#endif

/* A pidfd for thread @tid of process @pid, or -1 with errno set. */
static int open_thread_pidfd(pid_t pid, pid_t tid)
{
	return syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
}

/* Attaches the probes and the sampler of the process in slot @i, and starts naming its code. */
int session_attach_proc(struct session *s, size_t i)
{
	struct jw_proc *p = &s->procs[i];
	struct thread_slot *th = &s->threads[i];
	struct proc_hooks *h = s->hooks[i];
	size_t k;
	int ret;

	/*
	 * Its state first: the probes write to it from their first hit. A running program's wait
	 * in progress began before its probes: its wakeup is seen instead (first_wait).
	 */
	ret = jw_attach__watch_thread(s->attach, p->target.pid, p->target.tid, i,
				      s->syscall_mode && !s->wait_tracepoints && !s->holding);
	if (ret) {
		jw_log(JW_LOG_ERROR, "cannot watch thread %d: %s", p->target.tid, strerror(-ret));
		return ret;
	}
	for (k = 0; k < s->cfg->n_probes; k++) {
		ret = jw_attach__dispatch(s->attach, &h->probes[k].dp, i);
		if (ret)
			return ret;
	}
	for (k = 0; s->syscall_mode && k < h->preset.n_probes; k++) {
		ret = jw_attach__dispatch(s->attach, &h->preset_probes[k].dp, i);
		if (ret)
			return ret;
	}
	/* On the system call tracepoints, attached once, the waits need nothing per process. */
	for (k = 0; s->syscall_mode && !s->wait_tracepoints &&
		    (int)k < h->waits.n; k++) {
		const struct jw_wait_func *f = &h->waits.f[k];

		ret = jw_attach__wait(s->attach, p->target.pid, f->path, f->name, f->offset,
				      s->cfg->n_probes, i);
		if (ret)
			return ret;
	}
	if (s->syscall_mode && !s->wait_tracepoints && !s->holding) {
		ret = jw_attach__wait_probes_ready(s->attach, i);
		if (ret)
			return ret;
	}
	ret = jw_attach__sampler(s->attach, p->target.pid, p->target.tid,
				 s->cfg->params.v[JW_P_SAMPLE_PERIOD_MS]);
	if (ret)
		return ret;
	/* A program not started yet is named once it has exec'd. */
	p->sym = s->holding ? NULL : jw_symbolizer__new(p->target.pid);
	if (!p->sym && !s->holding) {
		ret = -errno;
		jw_log(JW_LOG_ERROR, "cannot read the mappings of pid %d: %s", p->target.pid,
		       strerror(errno));
		return ret;
	}
	th->tid = p->target.tid;
	/* To unlink the thread from its slot when it is forgotten; a nicety, not a need. */
	th->pidfd = open_thread_pidfd(p->target.pid, p->target.tid);
	th->has_pidfd = th->pidfd >= 0;
	th->proc = p;
	/* Its libraries were not mapped when it was resolved: the presets that need none yet. */
	th->redetect = s->syscall_mode && s->holding &&
		       !strcmp(p->loop, "syscall") && s->cfg->loop != JW_LOOP_SYSCALL;
	ret = jw_samplebuf_init(&th->samples, SAMPLES_HELD);
	if (ret)
		return ret;
	jw_tracer__watch(s->tracer, p);
	jw_log(JW_LOG_INFO, "watching pid %d (%s), thread %d", p->target.pid, p->target.comm,
	       p->target.tid);
	return 0;
}

/* Detaches and forgets the process in slot @i: it exited, or could not be watched. */
void session_drop_proc(struct session *s, size_t i)
{
	struct jw_proc *p = &s->procs[i];

	if (s->attach && p->target.pid) {
		jw_attach__forget(s->attach, p->target.pid, p->target.tid, i);
		session_stats_keep_names(s, p->target.pid);
		jw_tracer__forget(s->tracer, p->target.pid);
	}
	jw_symbolizer__free(p->sym);
	jw_samplebuf_free(&s->threads[i].samples);
	if (s->threads[i].has_pidfd) {
		if (s->attach)
			jw_attach__drop_link(s->attach, s->threads[i].pidfd);
		close(s->threads[i].pidfd);
	}
	free(s->hooks[i]);
	s->hooks[i] = NULL;
	memset(p, 0, sizeof(*p));
	memset(&s->threads[i], 0, sizeof(s->threads[i]));
}

/* Whether process @pid, as it is now, is watched already. */
bool session_watching(const struct session *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid == pid && jw_target_alive(&s->procs[i].target))
			return true;
	return false;
}

/*
 * Watches process @pid in a free slot: resolve, then attach. A process that cannot be watched
 * is forgotten again. Returns 0 or -errno: -EBUSY when the only free slots are still detaching
 * their last process's probes (try again soon), -ENOSPC when every slot is in use.
 */
int session_add_proc(struct session *s, pid_t pid)
{
	size_t i;
	int ret;

	/* A free slot whose last thread's probes are all detached: none may still fire there. */
	for (i = 0; i < s->n_procs && (s->procs[i].target.pid ||
				      (s->attach && !jw_attach__slot_free(s->attach, i))); i++)
		;
	if (i == s->n_procs && s->attach && !jw_attach__slot_free(s->attach, i)) {
		for (i = 0; i < s->n_procs && s->procs[i].target.pid; i++)
			;
		if (i < s->n_procs)
			return -EBUSY;	/* a slot is being emptied: soon */
	}
	if (i == JW_MAX_PIDS) {
		jw_log(JW_LOG_WARN, "pid %d: already watching %d processes", pid, JW_MAX_PIDS);
		return -ENOSPC;
	}
	if (i == s->n_procs)
		s->n_procs++;
	ret = session_resolve_proc(s, pid, i);
	if (!ret && s->attach)
		ret = session_attach_proc(s, i);
	if (ret)
		session_drop_proc(s, i);
	return ret;
}

int session_slot_of(const struct session *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n_procs; i++)
		if (s->procs[i].target.pid == pid)
			return i;
	return -1;
}
