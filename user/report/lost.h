/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a run lost, counted, and said: records the kernel had no room for, runs of its programs
 * the kernel skipped, samples and files jankwatch itself could not keep. The summary at exit and
 * `jankwatch stats` say it in the same lines; nothing lost is never said.
 */
#ifndef JW_LOST_H
#define JW_LOST_H

#include <stddef.h>
#include <stdint.h>

#include "attach/attach.h"
#include "base/jsonbuf.h"
#include "jankwatch/abi.h"

struct jw_lost {
	uint64_t drops[JW_DROP_MAX];	/* the kernel's, by enum jw_drop */
	uint64_t trace_lost;		/* scheduler events the trace windows had no room for */
	uint64_t lost_samples;		/* samples jankwatch's buffers had no room for */
	uint64_t write_errors;		/* files that could not be written */
	struct jw_prog_misses misses;	/* runs the kernel skipped, by program */
};

/*
 * Appends to @b one line (each ending in a newline) per kind of loss in @l that is not zero:
 * the trace logs', the reports' (records, samples, thread states, files) and the programs' runs
 * the kernel skipped, each with what it means. Returns how many lines.
 */
size_t jw_lost_lines(const struct jw_lost *l, struct jw_buf *b);

#endif
