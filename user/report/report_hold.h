/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reports held back while debuginfod fetches the debug files their stacks need: the task, a copy
 * of its samples and the policy's facts, until the files came or the wait is over.
 */
#ifndef JW_REPORT_HOLD_H
#define JW_REPORT_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include "jankwatch/abi.h"
#include "policy/policy.h"
#include "report/proc.h"

#define JW_HOLD_MAX 32		/* reports held at once; past them, one is written at once */

struct jw_held {
	struct jw_proc *proc;
	struct jw_task_rec task;
	void **samples;		/* copies, each its record's hdr.size */
	size_t n;
	struct jw_task_facts facts;
	uint64_t time_ms;	/* when the jank was raised */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC: written by then, fetched or not */
};

struct jw_hold {
	struct jw_held v[JW_HOLD_MAX];
	size_t n;
};

/* Holds a report: copies of @t and its @n samples. 0, -ENOSPC when full, -ENOMEM. */
int jw_hold_add(struct jw_hold *h, struct jw_proc *proc, const struct jw_task_rec *t,
		void *const *samples, size_t n, const struct jw_task_facts *facts,
		uint64_t time_ms, uint64_t deadline_ns);

/* Takes held report @i out into @out (the caller reports it, then jw_held_free()s it). */
void jw_hold_take(struct jw_hold *h, size_t i, struct jw_held *out);

void jw_held_free(struct jw_held *held);

#endif
