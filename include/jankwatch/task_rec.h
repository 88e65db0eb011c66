/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A TASK record made from a thread's state: by the BPF programs at a task's end, and by user
 * space for a task that has run past hang_ms (which then adds what it finds since).
 */
#ifndef JANKWATCH_TASK_REC_H
#define JANKWATCH_TASK_REC_H

#include "jankwatch/abi.h"

/* Fills every field of @rec but the CPython handler's name, file and line. */
static inline void jw_task_rec_fill(struct jw_task_rec *rec, const struct jw_task_state *s,
				    __u32 tid, __u64 now_ns)
{
	rec->hdr.type = JW_REC_TASK;
	rec->hdr.flags = s->flags;
	rec->hdr.size = sizeof(*rec);
	rec->hdr.pid = s->pid;
	rec->hdr.tid = tid;
	rec->hdr.ts_ns = now_ns;
	rec->seq = s->seq;
	rec->start_ns = s->start_ns;
	rec->end_ns = now_ns;
	rec->runq_ns = s->runq_ns;
	rec->blocked_ns = s->blocked_ns;
	rec->io_ns = s->io_ns;
	rec->probe_id = s->probe_id;
	rec->samples = s->samples;
	rec->sample_drops = s->sample_drops;
	rec->switches = s->switches;
	rec->longest_block_ns = s->longest_ns;
	rec->wchan_ip = s->longest_wchan;
	rec->waker_pid = s->longest_waker.pid;
	rec->waker_tid = s->longest_waker.tid;
	rec->waker_flags = s->longest_waker.flags;
	rec->n_waker_ips = s->longest_waker.n_ips < JW_MAX_WAKER_FRAMES ?
				   s->longest_waker.n_ips : JW_MAX_WAKER_FRAMES;
	__builtin_memcpy(rec->waker_comm, s->longest_waker.comm, sizeof(rec->waker_comm));
	__builtin_memcpy(rec->waker_ips, s->longest_waker.ips, sizeof(rec->waker_ips));
	rec->handler_addr = s->handler_addr;
	rec->inner_ns = s->inner_ns;
	rec->inner_probe = s->inner_probe;
	rec->delay_ns = s->delay_ns;
	rec->handler_class = s->handler_class;
	rec->handler_detail = s->handler_detail;
}

#endif
