/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The session's state, shared by the files of session/ (session.c: the loop; session_setup.c:
 * what is watched from the start; session_procs.c: the slots of the watched processes;
 * session_follow.c: the processes followed; session_tasks.c: tasks still running, hangs and
 * trace windows; session_stats.c: the statistics; session_waits.c: syscall mode's wait hooks),
 * and the lookups over its slots. Private to session/.
 */
#ifndef JW_SESSION_STATE_H
#define JW_SESSION_STATE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <bpf/libbpf.h>

#include "attach/attach.h"
#include "base/hindex.h"
#include "report/lost.h"
#include "report/report.h"
#include "report/trace.h"
#include "session/watched.h"
#include "process/launch.h"
#include "process/proctree.h"

/* An executable --exe watches. */
struct watched_exe {
	const char *path;
	dev_t dev;
	ino_t ino;
};

/* What the kernel (and jankwatch beside it) counted of the run. */
struct session_tally {
	uint64_t tasks;			/* outermost tasks, every thread's */
	struct jw_lost lost;
};

struct stats_walk;
struct session_samplers;
struct session_top;
struct session_waits;

struct session {
	struct jw_config *cfg;		/* its params change on SIGHUP */
	struct jw_watch_how how;	/* how processes are hooked (cfg, attach, tracer, modes) */
	uint64_t status_ns;		/* the status line's last update, and the tasks then */
	uint64_t status_tasks;
	struct jw_watched *watched[JW_MAX_PIDS];	/* by slot; NULL: free */
	size_t n_slots;			/* slots in use or used: the highest + 1 */
	struct watched_exe exes[JW_MAX_EXES];
	size_t n_exes;
	struct jw_child child;		/* -- CMD: the program started, in slot 0 */
	bool launched;
	bool child_running;		/* released and exec'd */
	bool child_exec_seen;		/* its exec into CMD was seen: a later one is a new program */
	int child_status;		/* once it exited: its status as a shell gives it */
	bool child_done;
	pid_t masters[JW_MAX_PIDS];	/* -p nginx's master: not watched, its workers are */
	size_t n_masters;
	struct jw_proctree *tree;	/* the processes followed: watched, or until they run a loop */
	uint64_t next_look_ns;		/* when a followed process is next looked at */
	uint64_t chatter_s;		/* -v's lines of processes that came and went: this second's */
	unsigned int chatter_n;		/* ... lines printed in it, */
	uint64_t chatter_hidden;	/* ... and left out */
	struct jw_attach *attach;
	struct jw_policy *policy;
	struct jw_logdir *logdir;
	struct jw_ksyms *ksyms;
	struct jw_debuginfo *debuginfo;	/* debug files of stripped binaries (debuginfo.h) */
	struct jw_stacks *stacks;	/* names samples, for the reporter and the tracer */
	struct jw_reporter *reporter;
	struct jw_tracer *tracer;	/* trace windows; NULL when traces are off (how.tracer) */
	struct jw_clocks clocks;
	FILE *raw;		/* --raw capture, or NULL */
	struct ring_buffer *rb;
	uint64_t read_until;		/* the records' read in progress stops then (0: at none) */
	bool behind;			/* the last read stopped at its time: more records wait */
	int epoll_fd;			/* what the loop waits for, or -1 */
	int stats_fd;			/* the stats socket (statsock.h), or -1 */
	char stats_path[108];
	struct stats_name *names;	/* the names of statistics rows, kept past their process */
	size_t n_names, cap_names;
	struct jw_hindex names_at;	/* a row key's hash -> names[] */
	uint64_t lost_samples;	/* samples user space could not keep (out of memory) */
	struct jw_fleet *fleet;	/* the journal and the metrics (session_fleet.h) */
	struct session_waits *waits;	/* syscall mode's choice of wait hooks (session_waits.h) */
	struct session_samplers *samplers;	/* the stacks' samplers' kind (session_samplers.h) */
	struct session_top *top;	/* jankwatch top's table and screen (session_top.h) */
	/*
	 * The run's end (session_stats_freeze()): the kernel's counts and statistics rows read once;
	 * every output written at exit comes from them.
	 */
	bool frozen;
	uint64_t frozen_count;		/* the kernel's task count then: the programs changed none since */
	struct session_tally final;
	uint64_t tasks_reset;		/* tasks of the rows `jankwatch stats --reset` emptied */
	struct stats_walk *final_rows;
	struct jw_row_extras extras;	/* how.extras: sampled handler sites' rows, scaled */
};

/*
 * Handles the records the kernel sent: all of them, or (@bounded) for up to READ_BUDGET_MS, or
 * until a stop is asked, so that a backlog that grows as fast as it is read (janks that cost
 * more to report than the time between them) holds up neither the run's end nor a Ctrl-C.
 * Returns >= 0 (1: it stopped with records left), or -errno when the ring buffer cannot be read.
 */
int session_read_records(struct session *s, bool bounded);

/* The slot of process @pid, or -1. */
int session_slot_of(const struct session *s, pid_t pid);

/* The watched process whose thread is @tid, or NULL. */
struct jw_watched *session_thread(const struct session *s, pid_t tid);

/* Whether process @pid, as it is now (not a new process of a reused pid), is watched. */
bool session_watching(const struct session *s, pid_t pid);

/* Whether processes may come to be watched later: --exe's files, --name's names. */
static inline bool session_finds_later(const struct session *s)
{
	return s->n_exes || s->cfg->n_names;
}

#endif
