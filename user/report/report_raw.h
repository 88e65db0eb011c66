/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A report appended to the raw capture (--raw): the task, the samples kept (each weighted with
 * the periods it was kept for, so that replaying them keeps exactly these), the process's
 * modules and the kernel symbols its addresses need.
 */
#ifndef JW_REPORT_RAW_H
#define JW_REPORT_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jankwatch/abi.h"
#include "policy/policy.h"
#include "report/proc.h"
#include "stacks/ksyms.h"

struct jw_report_capture {
	FILE *raw;			/* the capture, its header written */
	const struct jw_ksyms *ksyms;	/* may be NULL: no kernel symbol recorded */
	struct jw_proc *proc;
	const struct jw_task_rec *t;
	void *const *samples;		/* all the task's; their weights are set to @counts */
	const uint32_t *counts;		/* periods kept of each sample; 0: not kept */
	size_t n;
	enum jw_verdict verdict;
	uint64_t time_ms;
};

/* Appends @c's report to the capture. 0 or -errno. */
int jw_report_capture(const struct jw_report_capture *c);

#endif
