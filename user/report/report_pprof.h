/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A jank's profile (--format pprof): its kept samples as pprof samples, valued so that they add
 * up to the task's time, labelled with the jank, and written beside its stack log as
 * "profile-<pid>-<YYYYmmddHHMMSS>-<ms>.pb.gz".
 */
#ifndef JW_REPORT_PPROF_H
#define JW_REPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"
#include "jankwatch/abi.h"
#include "output/logdir.h"
#include "output/pprof.h"
#include "report/report_event.h"

/*
 * The values of sample @s, kept for @count of its periods, in a task whose samples stood for
 * @total periods of which @kept were kept, sampled every @period_ns: on-CPU, @count samples and
 * their periods as wall time; asleep, the share of its sleep @count stands for; both scaled by
 * @total / @kept so that the profile adds up to the task's time.
 */
void jw_report_pprof_values(const struct jw_sample_rec *s, uint32_t count, uint64_t kept,
			    uint64_t total, int64_t period_ns, int64_t values[JW_PPROF_VALUES]);

/* What a jank's profile says of it: its labels and comment. */
struct jw_pprof_jank {
	const struct jw_event *ev;	/* the event (handler, cause, group, pid, tid, times) */
	const char *id;			/* the jank's id: "<pid>-<YYYYmmddHHMMSS>-<ms>" */
	int64_t begin_ns;		/* the task's start and length, ns since the epoch */
	int64_t wall_ns;
	uint64_t kept, total;		/* sampling periods kept of the task's */
};

/*
 * Labels every sample of @p with the jank's id, event, handler, cause, group, process, pid and
 * tid, sets the time it covers and a comment, and writes it into @logdir. On success @path
 * receives its path. 0, -EDQUOT (over the quota) or -errno.
 */
int jw_report_pprof_write(struct jw_pprof *p, const struct jw_pprof_jank *j,
			  struct jw_logdir *logdir, char *path, size_t len);

#endif
