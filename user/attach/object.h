/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF object's handle, shared by attach.c (its lifecycle, the hooks) and stats_rows.c. */
#ifndef JW_ATTACH_OBJECT_H
#define JW_ATTACH_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jankwatch.skel.h"
#include "jankwatch/abi.h"

/*
 * A link, and the process it was made for (0: the whole session's). A sampler's is destroyed at
 * once when its process is forgotten (a perf event of the thread, which an exec keeps: left to
 * the reaper, it would sample the thread's next program twice); a uprobe's in the background.
 */
struct owned_link {
	struct bpf_link *link;
	pid_t pid;
	bool at_once;
	bool site;		/* a handler site's: jw_attach__drop_sites() removes it */
};

struct jw_attach {
	struct jankwatch_bpf *skel;
	struct owned_link *links;
	size_t n_links;
	size_t cap_links;
	uint32_t n_traced;	/* processes in trace_pids */
	uint32_t n_slots;
	/* The tid index (tid_index in the BPF object): each bucket's thread, 0 for none. */
	pid_t bucket_tid[JW_TID_BUCKETS];
	uint8_t *unindexed;	/* by slot: its thread found no free bucket */
	struct bpf_link *trial[2];	/* wait_tracepoints=2's measurements, while one runs */
	struct jw_reaper *reaper;	/* destroys a forgotten process's links, off the loop */
};

/*
 * Slot @slot goes to another thread: the rows its last thread left in the array move to the
 * hash, under their own key (to OVERFLOW when it is full), so that they outlive the slot.
 */
void jw_attach_retire_outer_rows(struct jw_attach *a, uint32_t slot);

#endif
