// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/frame.h"
#include "report/waker.h"

/* Whether any of the waker's kernel frames is named one of @names. */
static bool waker_has(const struct jw_ksyms *ks, const struct jw_task_rec *t,
		      const char *const *names)
{
	struct jw_frame fr;
	uint32_t i;
	size_t j;

	for (i = 0; i < t->n_waker_ips && i < JW_MAX_WAKER_FRAMES; i++) {
		jw_ksyms__frame(ks, t->waker_ips[i], &fr);
		for (j = 0; fr.symbol && names[j]; j++)
			if (strcmp(fr.symbol, names[j]) == 0)
				return true;
	}
	return false;
}

const char *jw_waker_describe(const struct jw_ksyms *ks, const struct jw_task_rec *t, char *buf,
			      size_t len)
{
	static const char *const timer[] = { "hrtimer_wakeup", "process_timeout",
					     "hrtimer_interrupt", "__hrtimer_run_queues",
					     "run_timer_softirq", "call_timer_fn", NULL };
	static const char *const irq[] = { "common_interrupt", "__common_interrupt",
					   "handle_irq_event", "irq_exit_rcu", "handle_softirqs",
					   "__do_softirq", "do_softirq", "__sysvec_call_function_single",
					   NULL };
	char comm[JW_COMM_LEN + 1];

	if (!(t->waker_flags & JW_WAKER_KNOWN))
		return NULL;
	if (waker_has(ks, t, timer))
		return "timer";
	if (waker_has(ks, t, irq) || t->waker_tid == 0)
		return "irq";
	memcpy(comm, t->waker_comm, JW_COMM_LEN);
	comm[JW_COMM_LEN] = '\0';
	snprintf(buf, len, "%s:%u", comm, t->waker_tid);
	return buf;
}

void jw_waker_stack(const struct jw_ksyms *ks, const struct jw_task_rec *t, struct jw_buf *b)
{
	struct jw_frame fr;
	char name[256];
	bool first = true;
	uint32_t i;

	for (i = 0; i < t->n_waker_ips && i < JW_MAX_WAKER_FRAMES; i++) {
		jw_ksyms__frame(ks, t->waker_ips[i], &fr);
		/* The leaf frames are the tracepoint's and the BPF program's: not the waker's. */
		if (first && (!fr.symbol || !strncmp(fr.symbol, "bpf_trace_run", 13) ||
			      !strncmp(fr.symbol, "__bpf_trace_", 12) ||
			      !strncmp(fr.symbol, "__traceiter_", 12)))
			continue;
		jw_buf_puts(b, first ? "" : "<-");
		jw_buf_puts(b, jw_frame_name(&fr, name, sizeof(name)));
		first = false;
	}
}
