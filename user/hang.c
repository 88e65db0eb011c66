// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "hang.h"

bool jw_hang_due(const struct jw_task_state *st, uint64_t now_ns, uint64_t hang_ns,
		 uint64_t reported)
{
	return st->depth && st->start_ns && now_ns >= st->start_ns &&
	       now_ns - st->start_ns >= hang_ns && st->seq + 1 != reported;
}

void jw_hang_record(const struct jw_task_state *st, uint32_t tid, uint64_t now_ns,
		    struct jw_task_rec *rec)
{
	uint64_t off = st->off_ns && now_ns > st->off_ns ? now_ns - st->off_ns : 0;

	memset(rec, 0, sizeof(*rec));
	rec->hdr.type = JW_REC_TASK;
	rec->hdr.flags = st->flags | JW_TASK_HANG;
	rec->hdr.size = sizeof(*rec);
	rec->hdr.pid = st->pid;
	rec->hdr.tid = tid;
	rec->hdr.ts_ns = now_ns;
	rec->seq = st->seq;
	rec->start_ns = st->start_ns;
	rec->end_ns = now_ns;
	rec->probe_id = st->probe_id;
	rec->samples = st->samples;
	rec->sample_drops = st->sample_drops;
	rec->switches = st->switches;
	rec->runq_ns = st->runq_ns;
	rec->blocked_ns = st->blocked_ns;
	rec->io_ns = st->io_ns;
	rec->longest_block_ns = st->longest_ns;
	rec->wchan_ip = st->longest_wchan;
	rec->waker_pid = st->longest_waker.pid;
	rec->waker_tid = st->longest_waker.tid;
	rec->waker_flags = st->longest_waker.flags;
	rec->n_waker_ips = st->longest_waker.n_ips < JW_MAX_WAKER_FRAMES ?
				   st->longest_waker.n_ips : JW_MAX_WAKER_FRAMES;
	memcpy(rec->waker_comm, st->longest_waker.comm, sizeof(rec->waker_comm));
	memcpy(rec->waker_ips, st->longest_waker.ips, sizeof(rec->waker_ips));
	/* Off the CPU now: that stretch counts, and may be the longest block (no waker yet). */
	if (off && st->off_state == JW_OFF_RUNQ) {
		rec->runq_ns += off;
	} else if (off) {
		rec->blocked_ns += off;
		if (st->off_state == JW_OFF_IO)
			rec->io_ns += off;
		if (off > rec->longest_block_ns) {
			rec->longest_block_ns = off;
			rec->wchan_ip = st->block_wchan;
			rec->waker_pid = rec->waker_tid = rec->waker_flags = 0;
			rec->n_waker_ips = 0;
			memset(rec->waker_comm, 0, sizeof(rec->waker_comm));
		}
	}
	rec->handler_addr = st->handler_addr;
	rec->inner_ns = st->inner_ns;
	rec->inner_probe = st->inner_probe;
	/* The dispatch under the waits still running may be the longest. */
	if (st->cur_probe && now_ns > st->cur_start && now_ns - st->cur_start >= st->inner_ns) {
		rec->handler_addr = st->cur_handler;
		rec->inner_ns = now_ns - st->cur_start;
		rec->inner_probe = st->cur_probe;
	}
}
