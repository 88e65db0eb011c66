/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF object's handle, shared by attach.c (its lifecycle, the hooks), wait_tp.c (syscall
 * mode's tracepoints), trial.c and waitcost.c (the wait modes' measurements) and stats_rows.c, and opened by object.c in the build the kernel
 * takes.
 */
#ifndef JW_ATTACH_OBJECT_H
#define JW_ATTACH_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/kernel.h"
#include "attach/links.h"
#include "attach/sysevents.h"
#include "attach/wait_tp.h"
#include "jankwatch/abi.h"
/* After abi.h: the skeleton names its types. */
#include "jankwatch.skel.h"

/* What a link is for: the ones taken off while their process is still watched are told apart. */
enum jw_link_role {
	JW_LINK_TASK = 0,	/* the task's own: dispatch probes, a sampler, the whole session's */
	JW_LINK_SITE,		/* a handler site's: jw_attach__drop_sites() removes it */
	JW_LINK_WAIT,		/* syscall mode's wait uprobes: jw_attach__drop_waits() */
	JW_LINK_SAMPLER,	/* a cpu-clock sampler, a thread's or a CPU's (samplers.c) */
};

/*
 * A link, and the process it was made for (0: the whole session's). A sampler's is destroyed at
 * once when its process is forgotten (a perf event of the thread, which an exec keeps: left to
 * the reaper, it would sample the thread's next program twice); a uprobe's in the background.
 */
struct owned_link {
	struct jw_link link;
	pid_t pid;
	bool at_once;
	enum jw_link_role role;
};

struct jw_attach {
	struct jankwatch_bpf *skel;	/* the full build's skeleton, whichever build is loaded */
	struct jw_kernel_plan plan;	/* which build, and how its probes find their cookies */
	struct owned_link *links;
	size_t n_links;
	size_t cap_links;
	uint32_t n_traced;	/* processes in trace_pids */
	bool thread_switches;	/* the watched threads' own switch events, not sched_switch */
	bool sched_switch_on;	/* sched_switch's program attached */
	uint32_t n_slots;
	/* The tid index (tid_index in the BPF object): each bucket's thread, 0 for none. */
	pid_t bucket_tid[JW_TID_BUCKETS];
	uint8_t *unindexed;	/* by slot: its thread found no free bucket */
	/* wait_tracepoints=2's measurements, while one runs */
	struct jw_link trial[JW_WAIT_TP_LINKS];
	/* Syscall mode's tracepoints, while attached (wait_tp.c) */
	struct jw_link wait_tp[JW_WAIT_TP_LINKS];
	size_t n_wait_tp;
	/* The wait system calls' own tracepoints (wait_tp.c), once read */
	struct jw_sysevents sysevents;
	int sysevents_err;
	bool sysevents_read;
	/* The fexit programs loaded, by wait system call (wait_tp.c); NULL where none is */
	struct bpf_program *fexit[JW_WAIT_SYSCALLS];
	bool fexit_failed;	/* they would not attach: the tracepoints from then on */
	struct jw_reaper *reaper;	/* destroys a forgotten process's links, off the loop */
};

/* A probe's cookie: probe id and role @bits, and the slot of the thread it times. */
static inline uint64_t jw_probe_cookie(uint64_t bits, uint32_t slot)
{
	return bits | (uint64_t)(slot + 1) << JW_COOKIE_SLOT_SHIFT;
}

/*
 * Keeps @link for process @pid (0: the whole session's), destroyed when it is forgotten: at once
 * (@at_once) or in the background. 0, or -ENOMEM with the link destroyed.
 */
int jw_attach_keep_link(struct jw_attach *a, struct jw_link link, pid_t pid, bool at_once,
			enum jw_link_role role);

/*
 * Takes off process @pid's links of role @role (0: the session's): at once (@at_once), or in the
 * background, slot @slot waiting for them (reaper.h). Returns how many.
 */
size_t jw_attach_drop_links(struct jw_attach *a, pid_t pid, enum jw_link_role role, bool at_once,
			    uint32_t slot);

/* Ends wait_tracepoints=2's measurement running, if one is (trial.c). */
void jw_attach_trial_stop(struct jw_attach *a);

/*
 * Opens the build of the BPF object @plan names, through the full build's skeleton; CO-RE
 * relocates against @btf_path when given, else the kernel's own BTF. NULL with errno set.
 */
struct jankwatch_bpf *jw_object_open(const struct jw_kernel_plan *plan, const char *btf_path);

/*
 * A kernel without attach cookies: the probe @*prog is about to attach at @offset of @path in
 * process @pid is found by its address there (map probe_cookies: @cookie); a dispatch's return
 * probe becomes dispatch_return, which needs none. 0, or -errno after a line saying why.
 */
int jw_object_cookie_by_address(struct jw_attach *a, struct bpf_program **prog, pid_t pid,
				const char *path, uint64_t offset, bool retprobe, uint64_t cookie);

/* Process @pid's probes found by address, for its thread in slot @slot, go with it. */
void jw_object_forget_cookies(struct jw_attach *a, pid_t pid, uint32_t slot);

/*
 * Slot @slot goes to another thread: the rows its last thread left in the array move to the
 * hash, under their own key (to OVERFLOW when it is full), so that they outlive the slot.
 */
void jw_attach_retire_outer_rows(struct jw_attach *a, uint32_t slot);

#endif
