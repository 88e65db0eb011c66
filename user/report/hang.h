/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A task still running: its record so far, built from the thread's task state as the kernel
 * keeps it, for the hang event.
 */
#ifndef JW_HANG_H
#define JW_HANG_H

#include <stdbool.h>
#include <stdint.h>

#include "jankwatch/abi.h"

/*
 * Whether thread state @st shows a task running for @hang_ns or more at @now_ns (CLOCK_MONOTONIC)
 * that was not reported yet: @reported is the last reported task's seq + 1 (0: none).
 */
bool jw_hang_due(const struct jw_task_state *st, uint64_t now_ns, uint64_t hang_ns,
		 uint64_t reported);

/*
 * Fills @rec (flags JW_TASK_HANG) with task @st of thread @tid as it stands at @now_ns: its wall
 * time so far, the off-CPU stretch in progress counted in, the longest block and the longest
 * dispatch under the waits so far, the one in progress included.
 */
void jw_hang_record(const struct jw_task_state *st, uint32_t tid, uint64_t now_ns,
		    struct jw_task_rec *rec);

#endif
