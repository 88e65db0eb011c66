/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The session's state, shared by session.c (the loop: records, signals, the program started,
 * the summary), session_procs.c (the watched processes: resolving, attaching, forgetting),
 * session_follow.c (the processes followed: forks, execs, exits, when each is watched) and
 * session_stats.c (the statistics). Private to those files.
 */
#ifndef JW_SESSION_PRIV_H
#define JW_SESSION_PRIV_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "attach/attach.h"
#include "target/launch.h"
#include "target/presets.h"
#include "target/proctree.h"
#include "report/report.h"
#include "stacks/samplebuf.h"
#include "report/trace.h"

/* Samples held per thread for the task in flight: evenly thinned beyond this. */
#define SAMPLES_HELD 512

/* A watched thread and the samples of its task in flight. */
struct thread_slot {
	pid_t tid;
	bool redetect;		/* caught at exec or started by us: look for a preset once it runs */
	struct jw_proc *proc;
	struct jw_samplebuf samples;
	int pidfd;		/* the thread, to unlink it from its slot; valid when has_pidfd */
	bool has_pidfd;
	uint64_t hang_seq;	/* the last task reported as a hang, + 1 */
	uint64_t trace_seq;	/* the last task that opened a trace window, + 1 */
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
	struct jw_config *cfg;		/* its params change on SIGHUP */
	uint64_t status_ns;		/* the status line's last update, and the tasks then */
	uint64_t status_tasks;
	/* Slot i: procs[i], its hooks and its watched thread; a slot with pid 0 is free. */
	struct jw_proc procs[JW_MAX_PIDS];
	struct proc_hooks *hooks[JW_MAX_PIDS];
	struct thread_slot threads[JW_MAX_PIDS];
	size_t n_procs;			/* slots in use or used: the highest + 1 */
	struct watched_exe exes[JW_MAX_EXES];
	size_t n_exes;
	struct jw_child child;		/* -- CMD: the program started, procs[0] */
	bool launched;
	bool holding;			/* ... and held before its exec: nothing of it mapped yet */
	bool child_running;		/* released and exec'd */
	bool child_exec_seen;		/* its exec into CMD was seen: a later one is a new program */
	int child_status;		/* once it exited: its status as a shell gives it */
	bool child_done;
	bool syscall_mode;		/* tasks bounded by the wait calls */
	bool wait_tracepoints;		/* ... seen on the sys_enter/sys_exit tracepoints */
	pid_t masters[JW_MAX_PIDS];	/* -p nginx's master: not watched, its workers are */
	size_t n_masters;
	struct jw_proctree *tree;	/* the processes followed: watched, or until they run a loop */
	uint64_t next_look_ns;		/* when a followed process is next looked at */
	uint64_t chatter_s;		/* -v's lines of processes that came and went: this second's */
	unsigned int chatter_n;		/* ... lines printed in it, */
	uint64_t chatter_hidden;	/* ... and left out */
	char handler_names[JW_MAX_PROBE_SPECS + 1][256];	/* the last: "syscall" */
	struct jw_attach *attach;
	struct jw_policy *policy;
	struct jw_logdir *logdir;
	struct jw_ksyms *ksyms;
	struct jw_reporter *reporter;
	struct jw_tracer *tracer;	/* trace windows; NULL when traces are off */
	struct jw_clocks clocks;
	FILE *raw;		/* --raw capture, or NULL */
	struct ring_buffer *rb;
	int epoll_fd;			/* what the loop waits for, or -1 */
	int stats_fd;			/* the stats socket (statsock.h), or -1 */
	char stats_path[108];
	struct stats_name *names;	/* the names of statistics rows, kept past their process */
	size_t n_names, cap_names;
	uint64_t records;
	uint64_t lost_samples;	/* samples user space could not keep (out of memory) */
	uint64_t unknown;	/* records of a thread or type this session does not know */
	int failed;
};

/* Reads process @pid into slot @i and resolves its hooks; nothing is attached yet. */
int session_resolve_proc(struct session *s, pid_t pid, size_t i);

/* Attaches the hooks and the sampler of the process in slot @i, and starts naming its code. */
int session_attach_proc(struct session *s, size_t i);

/* Detaches and forgets the process in slot @i. */
void session_drop_proc(struct session *s, size_t i);

/* Whether process @pid, as it is now, is watched already. */
bool session_watching(const struct session *s, pid_t pid);

/*
 * Watches process @pid in a free slot (resolve, then attach). 0 or -errno; -EBUSY: no slot is
 * free yet, one is being emptied.
 */
int session_add_proc(struct session *s, pid_t pid);

/* Listens for `jankwatch stats`, and says which targets another jankwatch watches too. */
void session_stats_start(struct session *s);

/* Answers the `jankwatch stats` clients waiting. */
void session_stats_serve(struct session *s);

/* Names the statistics rows of @pid while it is still watched: it is about to be forgotten. */
void session_stats_keep_names(struct session *s, pid_t pid);

/* Stops listening and writes the statistics into the log directory (stats.csv). */
void session_stats_finish(struct session *s);

/* The slot of process @pid, or -1. */
int session_slot_of(const struct session *s, pid_t pid);

/*
 * Follows process @pid, watched already or to be watched once it runs a loop (@why): its execs,
 * its exit and (@flags, enum jw_follow_flags) its children. 0 or -errno.
 */
int session_follow(struct session *s, pid_t pid, uint32_t flags, enum jw_pwhy why);

/* Process @pid is followed no longer: its hooks, if watched, and its entry go (@exited: counted). */
void session_forget(struct session *s, pid_t pid, bool exited);

/*
 * Watched process @pid runs another program than the one it was read as (an exec seen by no
 * record: it came before the process was followed): it is watched again once it runs a loop.
 */
void session_check_exec(struct session *s, pid_t pid);

/* A FORK, EXEC or EXIT record. */
void session_on_proc(struct session *s, const struct jw_proc_rec *r);

/*
 * Looks at the followed processes due for it: watches those that run a loop now. Returns when
 * the next is due (CLOCK_MONOTONIC ns; UINT64_MAX: none).
 */
uint64_t session_look(struct session *s, uint64_t now);

/* Forgets followed processes that are gone without a word from the kernel (a record lost). */
void session_follow_prune(struct session *s);

/* The summary's line of the processes that came and went. */
void session_follow_summary(struct session *s);

/* --exe: checks the files before anything is attached. 0 or -errno. */
int session_resolve_exes(struct session *s);

/* --exe: hooks their execs and watches the processes already running them. 0 or -errno. */
int session_watch_exes(struct session *s);

#endif
