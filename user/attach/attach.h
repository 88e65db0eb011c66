/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF object's lifecycle: open, configure, load, attach dispatch probes, the scheduler
 * tracepoint and per-thread samplers; detach everything on free.
 */
#ifndef JW_ATTACH_H
#define JW_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/kernel.h"
#include "attach/wait_tp.h"
#include "jankwatch/abi.h"

struct jw_attach;
struct ring_buffer;

struct jw_attach_opts {
	uint64_t report_min_ns;		/* tasks shorter than this never reach user space */
	enum jw_unwind_mode unwind_mode;
	uint32_t stack_bytes;		/* user stack copied per sample, unless unwind_mode is FP */
	uint32_t max_threads;		/* watched threads: rows of the per-thread maps */
	uint64_t sample_period_ns;	/* a block counts one sample per period it lasts */
	uint32_t stats_entries;		/* statistics rows before OVERFLOW */
	uint32_t stats_every;		/* record 1 task in this many in the statistics */
	uint32_t wait_probe_id;		/* the probe id of tasks bounded by the waits */
	const char *btf_path;		/* the kernel's BTF, where it has none of its own; or NULL */
	/*
	 * sched_hooks=1: the watched threads' switches seen by each one's own switch event
	 * (jw_attach__thread_switches()), not sched_switch; the full build only (the compatible
	 * one says it keeps sched_switch where the user gave sched_hooks=1: _given)
	 */
	bool thread_switches;
	bool thread_switches_given;
};

/* One dispatch hook in one process. exit_offset 0: a return probe ends the task. */
struct jw_dispatch_probe {
	pid_t pid;
	const char *path;		/* the ELF file, as the process maps it */
	const char *entry_name;		/* for messages */
	const char *exit_name;		/* for messages; NULL with a return probe */
	uint64_t entry_offset;
	uint64_t exit_offset;
	uint32_t probe_id;		/* < JW_MAX_PROBES */
	const struct jw_arg_chain *name_chain;	/* the entry names the handler this way; or NULL */
	bool inner;			/* a preset's: counts only inside the waits' envelope */
	bool exact;			/* hooked at its offsets, never moved past (a handler site) */
	bool own_task;			/* a site whose dispatch is a task (JW_COOKIE_TASK) */
	/*
	 * a handler site, or a preset's probe that runs per callback as one does (Qt's
	 * notifyInternal2): its calls counted (JW_COOKIE_SITE_EXIT), and its links dropped by
	 * jw_attach__drop_sites() (the handler_sites guard)
	 */
	bool site;
	uint64_t callee;		/* a callback site: where its callee is (JW_COOKIE_CALLEE...) */
};

/*
 * Opens and loads the BPF object. Returns NULL with errno set, after a one-line message on
 * stderr naming the reason.
 */
struct jw_attach *jw_attach__open(const struct jw_attach_opts *opts);

/*
 * Marks thread @tid of process @pid as watched in slot @slot (its state, its totals, its block
 * stack), with a fresh state. Before its process's probes are attached. @first_wait (syscall mode
 * on uprobes): the wakeup from a wait the thread is blocked in now, which its return probe cannot
 * see, begins its first task. 0 or -errno.
 */
int jw_attach__watch_thread(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot,
			    bool first_wait);

/*
 * Removes process @pid's handler sites (its probes hooked exact), in the background like a
 * forgotten process's (reaper.h: a uprobe's detach can wait seconds for the kernel's grace
 * periods on a loaded machine), tagged with its thread's slot @slot; returns how many links.
 * They may still fire until jw_attach__links_going() says no more.
 */
size_t jw_attach__drop_sites(struct jw_attach *a, pid_t pid, uint32_t slot);

/* Whether links slot @slot's process dropped are still being detached. */
bool jw_attach__links_going(struct jw_attach *a, uint32_t slot);

/*
 * The code of the library whose callback sites slot @slot's thread has, at [@lo, @hi) in its
 * process: a callee there does not rename the task's handler (bpf/task.bpf.h). 0 or -errno.
 */
int jw_attach__site_range(struct jw_attach *a, uint32_t slot, uint64_t lo, uint64_t hi);

/*
 * Attaches the exit (return probe or exit symbol) first, then the entry, timing the thread in
 * slot @slot. 0 or -errno.
 */
int jw_attach__dispatch(struct jw_attach *a, const struct jw_dispatch_probe *p, uint32_t slot);

/*
 * Hooks wait function @name at @offset of @path in process @pid for syscall mode: its return
 * begins a task, its next entry ends it. 0 or -errno.
 */
int jw_attach__wait(struct jw_attach *a, pid_t pid, const char *path, const char *name,
		    uint64_t offset, uint32_t probe_id, uint32_t slot);

/*
 * Syscall mode on the kernel's side of the waits: every watched thread's wait system calls bound
 * its tasks, whatever code makes them; fexit on their functions where the kernel allows it,
 * else their own exit tracepoints where it has them, else raw_syscalls' (wait_tp.h): which, in
 * @kind. 0 or -errno.
 */
int jw_attach__wait_tracepoints(struct jw_attach *a, enum jw_wait_tp_kind *kind);

/* Whether jw_attach__wait_tracepoints() would take fexit: loaded, never refused. */
bool jw_attach__wait_fexit(const struct jw_attach *a);

/* jw_attach__wait_tracepoints() on fexit alone: 0, or -errno with nothing attached. */
int jw_attach__wait_fexit_attach(struct jw_attach *a);

/*
 * Which of syscall mode's two ways of seeing the waits counts from now (JW_WAIT_BY_* bits): the
 * other's programs return at once, attached or not.
 */
void jw_attach__set_wait_hooks(struct jw_attach *a, uint32_t hooks);

/*
 * Takes syscall mode's tracepoints off, or process @pid's wait uprobes (timing slot @slot's
 * thread, which waits for them as for a forgotten process's): in the background (reaper.h), each
 * taking a grace period to go. The latter returns how many links.
 */
void jw_attach__drop_wait_tracepoints(struct jw_attach *a);
size_t jw_attach__drop_waits(struct jw_attach *a, pid_t pid, uint32_t slot);

/*
 * Whether the tracepoints taken off are still going: attached again meanwhile, a wait would
 * be seen twice. (A slot's uprobes: !jw_attach__slot_free().)
 */
bool jw_attach__wait_tracepoints_going(struct jw_attach *a);

/*
 * wait_tracepoints=2's measurements, one at a time; each call ends the one running, and @on
 * false only ends it. The first two with syscall mode's tracepoints off, so that they cost what
 * they measure:
 * - trial_tracepoints: syscall mode's tracepoints, as jw_attach__wait_tracepoints() would attach;
 * - trial_uprobes: its uprobe and return probe at file offset @offset of @path, in this process;
 * - count_rates: counts the machine's system calls and the wait system calls of threads @tids
 *   (at most JW_MAX_RATE_TIDS), read with read_rates (totals since the object was loaded).
 * 0 or -errno, said on stderr.
 */
int jw_attach__trial_tracepoints(struct jw_attach *a, bool on);
int jw_attach__trial_uprobes(struct jw_attach *a, const char *path, uint64_t offset, bool on);
int jw_attach__count_rates(struct jw_attach *a, const pid_t *tids, size_t n, bool on);
int jw_attach__read_rates(struct jw_attach *a, uint64_t out[JW_RATE_COUNT]);

/*
 * Every probe of the process of the thread in slot @slot is attached, its waits' last: from now
 * on a wait's return begins a task, and the wakeup from a wait it entered before them may begin
 * its first (jw_attach__watch_thread's @first_wait). 0 or -errno.
 */
int jw_attach__probes_ready(struct jw_attach *a, uint32_t slot);

/* Attaches the scheduler tracepoints: off-CPU time, blocked stacks, wakers. 0 or -errno. */
int jw_attach__sched(struct jw_attach *a);

/*
 * With the threads' own switch events (jw_attach_opts.thread_switches), thread @tid of process
 * @pid's, watched in slot @slot: its switches out run a program, no other thread's do. 0
 * (nothing to do without them), or -errno, said.
 */
int jw_attach__thread_switches(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot);

/* Starts a cpu-clock sampler on thread @tid of process @pid every @period_ms. 0 or -errno. */
int jw_attach__sampler(struct jw_attach *a, pid_t pid, pid_t tid, unsigned int period_ms);

/*
 * A cpu-clock sampler on each CPU instead, for the whole session (its program samples a watched
 * thread alone; session_samplers.h says when). A CPU offline now is left out, said. 0, or -errno, said,
 * with none attached.
 */
int jw_attach__cpu_samplers(struct jw_attach *a, unsigned int period_ms);

/*
 * Takes off at once the samplers of process @pid (0: the ones on each CPU); returns how many.
 * Its probes stay.
 */
size_t jw_attach__drop_samplers(struct jw_attach *a, pid_t pid);

/*
 * --exe: reports (JW_REC_EXEC) every process that execs the file with inode @ino on device
 * @dev, from now on. 0 or -errno.
 */
int jw_attach__exe(struct jw_attach *a, uint64_t dev, uint64_t ino);

/*
 * --name: reports (JW_REC_RENAME) and follows every process whose main thread takes one of the
 * kernel names @comms (@n of them, NUL-padded to JW_COMM_LEN), and reports one followed by its
 * name that takes another, from now on (the task_rename tracepoint). 0 or -errno, said.
 */
int jw_attach__names(struct jw_attach *a, const char (*comms)[JW_COMM_LEN], size_t n);

/*
 * Follows process @pid (enum jw_follow_flags): its execs and its exit are reported (EXEC, EXIT
 * records) and, with JW_FOLLOW_CHILDREN, the processes it forks, followed the same way from
 * their start (FORK). 0 or -errno.
 */
int jw_attach__follow(struct jw_attach *a, pid_t pid, uint32_t flags);

/* Stops following process @pid (its forks, execs and exit are no longer reported). */
void jw_attach__unfollow(struct jw_attach *a, pid_t pid);

/*
 * Detaches everything made for process @pid and stops watching its thread @tid in slot @slot:
 * the slot's state is cleared, a task still open with it. The links go in the background; until
 * they are gone, jw_attach__slot_free() says the slot is not free.
 */
void jw_attach__forget(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot);

/*
 * Whether slot @slot can watch a thread: it exists, and no probe of a thread forgotten there is
 * still being detached (in the background: see reaper.h).
 */
bool jw_attach__slot_free(struct jw_attach *a, uint32_t slot);

/* The ring buffer's map fd, for ring_buffer__new(). */
int jw_attach__events_fd(const struct jw_attach *a);

/* Copies the kernel side's loss counters (enum jw_drop). */
void jw_attach__drops(const struct jw_attach *a, uint64_t drops[JW_DROP_MAX]);

/* The programs of the object, at most. */
#define JW_MAX_PROGS 48

/*
 * The runs of jankwatch's programs the kernel skipped because one was already running on that
 * CPU (bpf_prog_info's recursion_misses). The kernel counts them from Linux 5.12 for tracepoint
 * programs, from 6.7 for uprobe ones, never for perf_event ones (samples a busy CPU skipped go
 * uncounted). jankwatch's scheduler programs run with interrupts off and do not nest.
 */
struct jw_prog_misses {
	bool counted;			/* this kernel counts them */
	uint64_t total;
	size_t n;			/* the programs loaded, each with its count */
	struct {
		char name[24];
		uint64_t runs;
	} prog[JW_MAX_PROGS];
};

/* Reads the kernel's counts of skipped runs, every loaded program's. */
void jw_attach__misses(const struct jw_attach *a, struct jw_prog_misses *out);

/*
 * Starts (@on) or stops sending the scheduler events and task slices of process @pid, for a
 * trace log. 0 or -errno.
 */
int jw_attach__trace(struct jw_attach *a, pid_t pid, bool on);

/*
 * Stops every program at once, the probes left attached (taking them off takes seconds), and
 * returns once no run of them is still under way: from then on nothing changes the maps, and
 * nothing more is sent. For the run's last read. 0, or -errno when the wait could not be had
 * (the programs are stopped all the same; one may still be finishing its run).
 */
int jw_attach__stop(struct jw_attach *a);

/* Tasks the kernel counted so far, every thread's: outermost ones, slow or not. */
uint64_t jw_attach__tasks(const struct jw_attach *a);

/* A statistics row; @key NULL: the OVERFLOW row (what found the map full). */
typedef void (*jw_stats_fn)(const struct jw_stats_key *key, const struct jw_stats_val *val,
			    void *ctx);

/* Calls @fn for every statistics row, then for OVERFLOW if it counted any. Returns the rows. */
int jw_attach__stats_each(const struct jw_attach *a, jw_stats_fn fn, void *ctx);

/* A statistics row's count at a moment. */
struct jw_row_count {
	struct jw_stats_key key;
	uint64_t count;
};

/* Row @key's count now (0 when it is gone). */
uint64_t jw_attach__row_count(const struct jw_attach *a, const struct jw_stats_key *key);

/* The outermost row of probe @probe in slot @slot: its count now (0 when empty). */
uint64_t jw_attach__outer_count(const struct jw_attach *a, uint32_t slot, uint32_t probe);

/* Empties the statistics of target @pid, or all of them (OVERFLOW too) when @pid is 0. */
void jw_attach__stats_reset(struct jw_attach *a, pid_t pid);

/* Records (times) 1 task in @n from now on (a reload changed stats_sampling_interval). */
void jw_attach__set_stats_every(struct jw_attach *a, uint32_t n);

/* Tasks shorter than @ns no longer reach user space (a reload changed the thresholds). */
void jw_attach__set_report_min(struct jw_attach *a, uint64_t ns);

/*
 * Reads the task state of thread @tid, watched in slot @slot: its task in progress, if any. 0,
 * or -ENOENT when the slot is not (or no longer) that thread's.
 */
int jw_attach__task_state(const struct jw_attach *a, uint32_t slot, pid_t tid,
			  struct jw_task_state *out);

/*
 * Removes the link from thread @tid (@pidfd refers to it) to its slot (its task storage, or the
 * compatible build's hash): a thread no longer watched costs the scheduler's programs nothing.
 */
void jw_attach__drop_link(struct jw_attach *a, int pidfd, pid_t tid);

/* Which build of the BPF object runs, and how (attach/kernel.h). */
const struct jw_kernel_plan *jw_attach__plan(const struct jw_attach *a);

/*
 * A copy of the stack the thread in stats slot @slot went to sleep with (a jw_sample_rec), as
 * the kernel keeps it until the thread wakes; free() it. NULL when there is none.
 */
void *jw_attach__block_sample(const struct jw_attach *a, uint32_t slot);

/* Detaches and frees everything. NULL-safe. */
void jw_attach__free(struct jw_attach *a);

#endif
