// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tasks still running: looked at every sample_interval from their thread's task state, for
 * a hang to report now or a trace window to open.
 */
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "policy/policy.h"
#include "report/hang.h"
#include "session/session_tasks.h"

/*
 * A task still running past the trace threshold opens its trace window now, so that the trace
 * shows the jank as it goes on (the seed's trace starts at the crossing too).
 */
static void check_trace(struct session *s, struct jw_watched *w, const struct jw_task_state *st,
			uint64_t now)
{
	uint64_t from = jw_policy__trace_from_ns(&s->cfg->params);
	struct jw_task_facts facts;

	if (!s->tracer || !st->depth || st->start_ns > now || now - st->start_ns < from ||
	    w->trace_seq == st->seq + 1)
		return;
	w->trace_seq = st->seq + 1;
	facts = (struct jw_task_facts){
		.pid = w->proc.target.pid,
		.uid = w->proc.target.uid,
		.begin_boot_ns = st->start_ns + jw_clocks_boottime_at(&s->clocks, st->start_ns),
		.proc_start_boot_ns = w->proc.start_boot_ns,
		.now_s = (now + s->clocks.realtime_ns) / 1000000000ULL,
	};
	if (!jw_policy__trace_possible(s->policy, &facts))
		return;
	session_read_records(s, true);
	jw_tracer__open(s->tracer, &w->proc, w->proc.target.tid, st->seq, st->start_ns, now,
			w->samples.seq == st->seq ? w->samples.items : NULL,
			w->samples.seq == st->seq ? w->samples.n : 0);
}

/*
 * Every watched thread whose task has run past hang_ms gets a MAIN_THREAD_HANG event now, with
 * the samples so far; the task's own event follows when it ends. Read from the thread's task
 * state (one map lookup per thread), every sample_interval; one past the trace threshold opens
 * its trace window.
 */
void session_check_running(struct session *s, uint64_t now)
{
	uint64_t hang_ns = (uint64_t)s->cfg->params.v[JW_P_HANG_MS] * 1000000;
	uint64_t period_ns = (uint64_t)s->cfg->params.v[JW_P_SAMPLE_PERIOD_MS] * 1000000;
	size_t i;

	for (i = 0; i < s->n_slots; i++) {
		struct jw_watched *w = s->watched[i];
		struct jw_sample_rec *block = NULL;
		struct jw_task_state st;
		struct jw_task_rec rec;
		void *const *items = NULL;
		void **all = NULL;
		size_t n = 0;
		int ret;

		if (!w || !w->attached ||
		    jw_attach__task_state(s->attach, i, w->proc.target.tid, &st))
			continue;
		check_trace(s, w, &st, now);
		jw_watched__guard_sites(w, &s->how, &st, now);
		if (!jw_hang_due(&st, now, hang_ns, w->hang_seq))
			continue;
		w->hang_seq = st.seq + 1;
		/* What the kernel sent of this task so far. */
		session_read_records(s, true);
		if (w->samples.seq == st.seq) {
			items = w->samples.items;
			n = w->samples.n;
		}
		jw_hang_record(&st, w->proc.target.tid, now, &rec);
		/* Asleep now: where, from the stack it went to sleep with, for the time so far. */
		if (st.off_ns && st.block_ready && st.off_state != JW_OFF_RUNQ &&
		    (block = jw_attach__block_sample(s->attach, i))) {
			all = calloc(n + 1, sizeof(*all));
			if (all) {
				if (n)
					memcpy(all, items, n * sizeof(*all));
				block->weight = (now - st.off_ns) / period_ns;
				block->weight += !block->weight;
				block->block_ns = now - st.off_ns;
				all[n++] = block;
				items = all;
			}
		}
		jw_log(JW_LOG_INFO, "pid %d: a task has been running for %.1f s", rec.hdr.pid,
		       (rec.end_ns - rec.start_ns) / 1e9);
		ret = jw_reporter__hang(s->reporter, &w->proc, &rec, items, n);
		if (ret)
			jw_log(JW_LOG_WARN, "cannot report a hang of pid %d: %s", rec.hdr.pid,
			       strerror(-ret));
		free(all);
		free(block);
	}
}
