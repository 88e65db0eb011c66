// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "report/hang.h"
#include "jankwatch/task_rec.h"

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
	jw_task_rec_fill(rec, st, tid, now_ns);
	rec->hdr.flags |= JW_TASK_HANG;
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
	/* The dispatch under the waits still running may be the longest. */
	if (st->cur_probe && now_ns > st->cur_start && now_ns - st->cur_start >= st->inner_ns) {
		rec->handler_addr = st->cur_handler;
		rec->handler_class = st->cur_class;
		rec->handler_detail = st->cur_detail;
		rec->inner_ns = now_ns - st->cur_start;
		rec->inner_probe = st->cur_probe;
	}
}
