// SPDX-License-Identifier: GPL-2.0-only
/*
 * The processes a session follows as they fork, exec, exit and rename themselves, --exe's
 * executables and --name's names among them. The kernel follows them (map followed) and sends a
 * record of each fork, exec, exit and rename to or from a watched name; a new process (forked,
 * exec'd a new program, or named) is watched once it runs a loop of its own: its loop thread is
 * seen blocked in a wait system call, which also says its program is mapped whole (a stable
 * point: the loader and the program's start-up are done; a zygote child has its name). Until
 * then it costs a look at /proc now and then, less and less often; one that exits first costs
 * its records only.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "process/names.h"
#include "session/session_follow.h"
#include "session/session_procs.h"

#define LOOKS_PER_TICK 64	/* processes looked at per pass; the rest at the next */
#define MAX_FAILURES 5		/* a process that runs a loop but cannot be watched: tries */
#define CHATTER_PER_S 20	/* -v: lines of processes that came and went, per second */

static const char *const why_names[] = {
	[JW_PWHY_FORKED] = "forked",
	[JW_PWHY_EXECED] = "exec'd a new program",
	[JW_PWHY_FOUND] = "runs an --exe file",
	[JW_PWHY_FOLLOWED] = "followed for its children",
	[JW_PWHY_NAMED] = "took a --name name",
	[JW_PWHY_NAME_FOUND] = "has a --name name",
};

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The name of process @pid, for messages ("?" once it is gone). */
static const char *comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return buf;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return buf;
}

/*
 * -v: one line about a process that came or went without being watched. At most CHATTER_PER_S
 * a second (a shell loop starts thousands): the rest are counted and said once a second later.
 */
static void chatter(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void chatter(struct session *s, const char *fmt, ...)
{
	uint64_t sec = mono_now() / 1000000000ULL;
	char line[512];
	va_list ap;

	if (jw_log_level() < JW_LOG_DEBUG)
		return;
	if (sec != s->chatter_s) {
		if (s->chatter_hidden)
			jw_log(JW_LOG_DEBUG, "... and %llu more processes came and went",
			       (unsigned long long)s->chatter_hidden);
		s->chatter_s = sec;
		s->chatter_n = 0;
		s->chatter_hidden = 0;
	}
	if (s->chatter_n++ >= CHATTER_PER_S) {
		s->chatter_hidden++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	jw_log(JW_LOG_DEBUG, "%s", line);
}

int session_follow(struct session *s, pid_t pid, uint32_t flags, enum jw_pwhy why)
{
	struct jw_pentry *e;
	int ret;

	ret = jw_attach__follow(s->attach, pid, flags);
	if (ret) {
		jw_log(JW_LOG_WARN, "pid %d: cannot follow its execs and children: %s", pid,
		       strerror(-ret));
		return ret;
	}
	e = jw_proctree__add(s->tree, pid, jw_target_start_boot_ns(pid), why, 0, mono_now());
	if (!e)
		return -ENOSPC;
	if (session_slot_of(s, pid) >= 0)
		jw_proctree__watched(s->tree, e);
	else if (why == JW_PWHY_FOLLOWED)
		jw_proctree__parked(s->tree, e);
	s->next_look_ns = 0;
	return 0;
}

void session_forget(struct session *s, pid_t pid, bool exited)
{
	int i = session_slot_of(s, pid);

	if (i >= 0)
		session_drop_proc(s, i);
	jw_attach__unfollow(s->attach, pid);
	jw_proctree__remove(s->tree, pid, exited);
}

void session_check_exec(struct session *s, pid_t pid)
{
	struct jw_pentry *e = jw_proctree__get(s->tree, pid);
	int i = session_slot_of(s, pid);
	char path[64], exe[PATH_MAX];
	const char *name;
	ssize_t n;

	if (i < 0 || !e)
		return;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return;	/* gone: its exit record says so */
	exe[n] = '\0';
	if (!strcmp(exe, s->watched[i]->proc.target.exe))
		return;
	/* Named as an exec record names it, by the file's name, then where the file is. */
	name = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	jw_log(JW_LOG_INFO, "pid %d (%s) exec'd %s (%s) while being attached: watched again once "
	       "it runs a loop", pid, s->watched[i]->proc.target.comm, name, exe);
	session_drop_proc(s, i);
	jw_proctree__exec(s->tree, e, mono_now());
	s->next_look_ns = 0;
}

/* The name a record carries, made printable (a name may hold anything). */
static const char *rec_comm(const struct jw_proc_rec *r, char *buf)
{
	size_t i;

	for (i = 0; i < JW_COMM_LEN - 1 && r->comm[i]; i++)
		buf[i] = r->comm[i] >= 0x20 && r->comm[i] < 0x7f ? r->comm[i] : '?';
	buf[i] = '\0';
	return buf;
}

/*
 * Process @r->hdr.pid, unfollowed by the kernel already, @did (exec'd, took the name) @comm, no
 * longer a target (@not: "an --exe file"): forgotten, said.
 */
static void let_go(struct session *s, const struct jw_proc_rec *r, const char *did,
		   const char *comm, const char *not)
{
	int i = session_slot_of(s, r->hdr.pid);

	if (i >= 0)
		jw_log(JW_LOG_INFO, "pid %d (%s) %s %s, not %s: no longer watched", r->hdr.pid,
		       s->watched[i]->proc.target.comm, did, comm, not);
	else
		chatter(s, "pid %d %s %s, not %s: no longer followed", r->hdr.pid, did, comm, not);
	session_forget(s, r->hdr.pid, false);
}

static void on_fork_rec(struct session *s, const struct jw_proc_rec *r)
{
	const struct jw_pentry *parent = jw_proctree__get(s->tree, r->parent);
	bool by_name = parent && parent->by_name;
	struct jw_pentry *e;
	char comm[JW_COMM_LEN];

	e = jw_proctree__add(s->tree, r->hdr.pid, r->start_boot_ns, JW_PWHY_FORKED, r->parent,
			     r->hdr.ts_ns);
	if (!e) {
		jw_attach__unfollow(s->attach, r->hdr.pid);
		return;
	}
	/* Its name is its parent's until it takes another (a RENAME record then). */
	e->by_name = by_name;
	s->next_look_ns = 0;
	chatter(s, "pid %d (%s) forked by pid %d: watched once it runs a loop", r->hdr.pid,
		rec_comm(r, comm), r->parent);
}

static void on_exec_rec(struct session *s, const struct jw_proc_rec *r)
{
	struct jw_pentry *e = jw_proctree__get(s->tree, r->hdr.pid);
	int i = session_slot_of(s, r->hdr.pid);
	char comm[JW_COMM_LEN];

	/* The program -- CMD started execs once: into CMD, which is what was hooked. */
	if (s->launched && (pid_t)r->hdr.pid == s->child.pid && !s->child_exec_seen) {
		s->child_exec_seen = true;
		return;
	}
	rec_comm(r, comm);
	if (r->hdr.flags & JW_EXEC_LEFT) {
		let_go(s, r, "exec'd", comm, "an --exe file");
		return;
	}
	if (!e && i < 0 && !(r->hdr.flags & JW_EXEC_WATCHED_EXE)) {
		/* Forgotten already: /proc showed it gone before its records came. */
		jw_proctree__exec(s->tree, NULL, r->hdr.ts_ns);
		return;
	}
	if (i >= 0) {
		jw_log(JW_LOG_INFO, "pid %d (%s) exec'd %s: watched again once it runs a loop",
		       r->hdr.pid, s->watched[i]->proc.target.comm, comm);
		session_drop_proc(s, i);
	} else {
		chatter(s, "pid %d exec'd %s: watched once it runs a loop", r->hdr.pid, comm);
	}
	if (e) {
		jw_proctree__exec(s->tree, e, r->hdr.ts_ns);
		e->start_boot_ns = r->start_boot_ns;
	} else if (!jw_proctree__add(s->tree, r->hdr.pid, r->start_boot_ns, JW_PWHY_EXECED, 0,
				     r->hdr.ts_ns)) {
		jw_attach__unfollow(s->attach, r->hdr.pid);
	}
	s->next_look_ns = 0;
}

static void on_exit_rec(struct session *s, const struct jw_proc_rec *r)
{
	struct jw_pentry *e = jw_proctree__get(s->tree, r->hdr.pid);
	int i = session_slot_of(s, r->hdr.pid);

	char comm[JW_COMM_LEN];

	if (i >= 0)
		jw_log(JW_LOG_INFO, "pid %d (%s) exited", r->hdr.pid, s->watched[i]->proc.target.comm);
	else if (e && !e->counted)
		chatter(s, "pid %d (%s) exited; it ran no loop of its own (%s %.1f ms before)",
			r->hdr.pid, rec_comm(r, comm), why_names[e->why],
			(r->hdr.ts_ns - (r->hdr.ts_ns < e->since_ns ? r->hdr.ts_ns : e->since_ns)) /
				1e6);
	if (i >= 0 || e)
		session_forget(s, r->hdr.pid, true);
}

/*
 * --name: a process took a watched name (now followed by the kernel), or one followed by its name
 * took another (unfollowed by the kernel already).
 */
static void on_rename_rec(struct session *s, const struct jw_proc_rec *r)
{
	struct jw_pentry *e = jw_proctree__get(s->tree, r->hdr.pid);
	int i = session_slot_of(s, r->hdr.pid);
	char comm[JW_COMM_LEN];

	rec_comm(r, comm);
	if ((r->hdr.flags & JW_RENAME_LEFT) && (r->hdr.flags & JW_RENAME_KEPT)) {
		/* Followed still, for the --exe file it runs: no longer checked for a name. */
		if (e)
			e->by_name = false;
		return;
	}
	if (r->hdr.flags & JW_RENAME_LEFT) {
		let_go(s, r, "took the name", comm, "a --name name");
		return;
	}
	if (!e) {
		e = jw_proctree__add(s->tree, r->hdr.pid, r->start_boot_ns, JW_PWHY_NAMED, 0,
				     r->hdr.ts_ns);
		if (!e) {
			jw_attach__unfollow(s->attach, r->hdr.pid);
			return;
		}
	} else {
		jw_proctree__named(s->tree, e, r->hdr.ts_ns);
	}
	/* Followed for good already (-p, -- CMD): its name is never checked. */
	e->by_name = r->hdr.flags & JW_RENAME_BY_NAME;
	if (i < 0)
		chatter(s, "pid %d took the name %s: watched once it runs a loop", r->hdr.pid, comm);
	s->next_look_ns = 0;
}

void session_on_proc(struct session *s, const struct jw_proc_rec *r)
{
	switch (r->hdr.type) {
	case JW_REC_FORK:
		on_fork_rec(s, r);
		break;
	case JW_REC_EXEC:
		on_exec_rec(s, r);
		break;
	case JW_REC_EXIT:
		on_exit_rec(s, r);
		break;
	case JW_REC_RENAME:
		on_rename_rec(s, r);
		break;
	}
}

/* Whether @e's process is still the one followed: alive, its pid not reused. */
static bool still_there(const struct jw_pentry *e)
{
	uint64_t start = jw_target_start_boot_ns(e->pid);
	long ticks = sysconf(_SC_CLK_TCK);
	uint64_t tick = 1000000000ULL / (ticks > 0 ? ticks : 100);

	if (!start)
		return false;
	/* /proc counts ticks; the kernel's record has nanoseconds. */
	return !e->start_boot_ns || (start <= e->start_boot_ns && e->start_boot_ns - start < tick);
}

/* Looks at followed process @e once: watches it if it runs a loop now. */
static void look_at(struct session *s, struct jw_pentry *e, uint64_t now)
{
	const char *name = NULL;
	pid_t pid = e->pid;
	char comm[64];
	int ret;

	/* One small read per look: the thread's system call. */
	ret = jw_target_in_wait(pid, s->cfg->thread);
	if (ret == 0) {
		jw_proctree__later(s->tree, e, false, now);
		return;
	}
	/* Not allowed to tell (a ptrace policy): after a first look, as if it ran one. */
	if ((ret == -EACCES || ret == -EPERM) && e->looks > 0)
		ret = 1;
	/* Gone, or its pid another process's by now; or looked at again later. */
	if (!still_there(e)) {
		session_forget(s, pid, true);
		return;
	}
	if (ret < 0) {
		jw_proctree__later(s->tree, e, false, now);
		return;
	}
	/* Its first argument, rewritten after its comm maybe, is read once it runs its loop. */
	if (e->by_name && !(name = session_name_of(s, pid))) {
		chatter(s, "pid %d (%s) runs a loop, but its first argument is not a --name name: "
			"not watched", pid, comm_of(pid, comm, sizeof(comm)));
		session_forget(s, pid, false);
		return;
	}
	ret = session_add_proc(s, pid);
	if (ret == -EBUSY) {
		jw_proctree__later(s->tree, e, false, now);
		return;
	}
	if (!ret) {
		if (name)
			jw_log(JW_LOG_INFO, "pid %d (%s): named %s, runs a loop: watched", pid,
			       comm_of(pid, comm, sizeof(comm)), name);
		else
			jw_log(JW_LOG_INFO, "pid %d (%s): %s%s, runs a loop: watched", pid,
			       comm_of(pid, comm, sizeof(comm)), why_names[e->why],
			       e->why == JW_PWHY_FORKED ? " by a followed process" : "");
		jw_proctree__watched(s->tree, e);
		return;
	}
	if (!still_there(e)) {
		session_forget(s, pid, true);
		return;
	}
	jw_proctree__later(s->tree, e, true, now);
	/* Not for this program (Go, no slot left), or failing every time: followed, not watched. */
	if (ret == -ENOTSUP || ret == -ENOSPC || e->failures >= MAX_FAILURES) {
		jw_log(JW_LOG_WARN, "pid %d (%s): runs a loop but cannot be watched (%s); its "
		       "children are still followed", pid, comm_of(pid, comm, sizeof(comm)),
		       strerror(-ret));
		jw_proctree__parked(s->tree, e);
	}
}

uint64_t session_look(struct session *s, uint64_t now)
{
	pid_t pids[LOOKS_PER_TICK];
	uint64_t next;
	size_t i, n;

	if (!s->tree || now < s->next_look_ns)
		return s->next_look_ns;
	n = jw_proctree__due(s->tree, now, pids, LOOKS_PER_TICK, &next);
	for (i = 0; i < n; i++) {
		struct jw_pentry *e = jw_proctree__get(s->tree, pids[i]);

		if (e && !e->watched)
			look_at(s, e, now);
	}
	/* Those watched meanwhile or forgotten have no look due; the rest are in next. */
	if (n)
		jw_proctree__due(s->tree, mono_now(), pids, 0, &next);
	s->next_look_ns = next;
	return next;
}

struct prune_ctx {
	pid_t gone[64];
	size_t n;
};

static void find_gone(struct jw_pentry *e, void *arg)
{
	struct prune_ctx *c = arg;

	if (!e->watched && c->n < sizeof(c->gone) / sizeof(c->gone[0]) && !still_there(e))
		c->gone[c->n++] = e->pid;
}

void session_follow_prune(struct session *s)
{
	struct prune_ctx c = { .n = 0 };
	size_t i;

	if (!s->tree)
		return;
	jw_proctree__each(s->tree, find_gone, &c);
	for (i = 0; i < c.n; i++) {
		jw_attach__unfollow(s->attach, c.gone[i]);
		jw_proctree__remove(s->tree, c.gone[i], true);
	}
}

void session_follow_summary(struct session *s)
{
	const struct jw_proctree_counts *c;
	uint64_t drops[JW_DROP_MAX];

	if (!s->tree)
		return;
	c = jw_proctree__counts(s->tree);
	jw_attach__drops(s->attach, drops);
	if (!c->forked && !c->execs && !c->named && !c->exited && !c->full && !drops[JW_DROP_PROC])
		return;
	if (s->cfg->n_names)
		jw_log(JW_LOG_INFO, "processes: %llu took a --name name", (unsigned long long)c->named);
	jw_log(JW_LOG_INFO, "processes: %llu forked and %llu execs seen, %llu watched, %llu exited "
	       "(%llu of them never ran a loop), %zu followed now",
	       (unsigned long long)c->forked, (unsigned long long)c->execs,
	       (unsigned long long)c->watched, (unsigned long long)c->exited,
	       (unsigned long long)c->exited_unwatched, jw_proctree__size(s->tree));
	if (c->full || drops[JW_DROP_PROC])
		jw_log(JW_LOG_WARN, "processes might have been missed: %llu not followed (more than "
		       "%d at once), %llu forks, execs or exits lost (ring buffer or followed map "
		       "full)", (unsigned long long)c->full, JW_MAX_FOLLOWED,
		       (unsigned long long)drops[JW_DROP_PROC]);
}

/* --exe: the files' identities, checked before anything is attached. */
int session_resolve_exes(struct session *s)
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

/* --name: from now on the kernel reports and follows every process that takes one of them. */
static int hook_names(struct session *s)
{
	char comms[JW_MAX_NAMES * JW_NAME_COMMS][JW_NAME_COMM_LEN];
	size_t i, n = 0;

	for (i = 0; i < s->cfg->n_names; i++)
		n += jw_name_comms(s->cfg->names[i], &comms[n]);
	return jw_attach__names(s->attach, (const char (*)[JW_COMM_LEN])comms, n);
}

/* --exe: from now on the kernel reports every exec of the files and follows those processes. */
static int hook_exes(struct session *s)
{
	size_t i;
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
	return 0;
}

size_t session_found_now(const struct session *s, pid_t *out, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dir = opendir("/proc");

	while (dir && n < max && (de = readdir(dir))) {
		pid_t pid = atoi(de->d_name);

		if (pid > 0 && pid != getpid() && session_slot_of(s, pid) < 0 &&
		    (runs_watched_exe(s, pid) || session_name_of(s, pid)))
			out[n++] = pid;
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Follows process @pid, found running an --exe file or having a --name name. */
static void follow_found(struct session *s, pid_t pid)
{
	struct jw_pentry *e;

	if (runs_watched_exe(s, pid)) {
		session_follow(s, pid, JW_FOLLOW_CHILDREN | JW_FOLLOW_EXE, JW_PWHY_FOUND);
		return;
	}
	if (!session_name_of(s, pid) ||
	    session_follow(s, pid, JW_FOLLOW_CHILDREN | JW_FOLLOW_NAME, JW_PWHY_NAME_FOUND))
		return;
	e = jw_proctree__get(s->tree, pid);
	if (e)
		e->by_name = true;
}

int session_watch_found(struct session *s)
{
	struct dirent *de;
	size_t i;
	DIR *dir;
	int ret;

	if (!s->n_exes && !s->cfg->n_names)
		return 0;
	/* Hooked first: a process that starts or renames itself during the look is not missed. */
	ret = hook_exes(s);
	if (!ret && s->cfg->n_names)
		ret = hook_names(s);
	if (ret)
		return ret;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = atoi(de->d_name);

		if (pid > 0 && pid != getpid() && session_slot_of(s, pid) < 0 &&
		    !jw_proctree__get(s->tree, pid))
			follow_found(s, pid);
	}
	closedir(dir);
	for (i = 0; i < s->n_exes; i++)
		jw_log(JW_LOG_INFO, "--exe %s: watching its processes, now and later",
		       s->exes[i].path);
	for (i = 0; i < s->cfg->n_names; i++)
		jw_log(JW_LOG_INFO, "--name %s: watching the processes of that name, now and later",
		       s->cfg->names[i]);
	return 0;
}
