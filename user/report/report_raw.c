// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "base/frame.h"
#include "output/rawfile.h"
#include "report/report_raw.h"

#define KSYMS_PER_REPORT 2048

struct ksym_list {
	struct jw_raw_ksym v[KSYMS_PER_REPORT];
	size_t n;
};

/* Adds the kernel symbol @pc falls in to @b, unless it is there already. */
static void add_ksym(const struct jw_ksyms *ks, uint64_t pc, struct ksym_list *b)
{
	struct jw_frame fr;
	uint64_t start;
	size_t i;

	jw_ksyms__frame(ks, pc, &fr);
	if (!fr.symbol)
		return;
	start = pc - fr.sym_off;
	for (i = 0; i < b->n; i++)
		if (b->v[i].addr == start)
			return;
	if (b->n < KSYMS_PER_REPORT)
		b->v[b->n++] = (struct jw_raw_ksym){ .addr = start, .name = fr.symbol };
}

/* The kernel symbols the report's addresses need, and the scheduler text's bounds. */
static void collect_ksyms(const struct jw_report_capture *c, struct ksym_list *b)
{
	const struct jw_task_rec *t = c->t;
	uint64_t lo, hi;
	size_t i, j;

	b->n = 0;
	jw_ksyms__sched_text(c->ksyms, &lo, &hi);
	if (lo && hi) {
		b->v[b->n++] = (struct jw_raw_ksym){ .addr = lo, .name = "__sched_text_start" };
		b->v[b->n++] = (struct jw_raw_ksym){ .addr = hi, .name = "__sched_text_end" };
	}
	for (i = 0; i < c->n; i++) {
		const struct jw_sample_rec *s = c->samples[i];

		for (j = 0; c->counts[i] && j < s->n_kernel && j < JW_MAX_KERNEL_FRAMES; j++)
			add_ksym(c->ksyms, s->kernel_ips[j], b);
	}
	for (j = 0; j < t->n_waker_ips && j < JW_MAX_WAKER_FRAMES; j++)
		add_ksym(c->ksyms, t->waker_ips[j], b);
	if (t->wchan_ip)
		add_ksym(c->ksyms, t->wchan_ip, b);
}

int jw_report_capture(const struct jw_report_capture *c)
{
	const struct jw_proc *proc = c->proc;
	struct jw_raw_report raw = {
		.verdict = c->verdict,
		.time_ms = c->time_ms,
		.pid = proc->target.pid,
		.tid = proc->target.tid,
		.uid = proc->target.uid,
		.start_jiffies = proc->target.start_jiffies,
		.start_boot_ns = proc->start_boot_ns,
		.comm = proc->target.comm,
		.exe = proc->target.exe,
		.handlers = proc->handlers,
		.n_handlers = JW_MAX_PROBES,
		.task = c->t,
		.task_size = sizeof(*c->t),
		.loop = proc->loop,
	};
	struct jw_raw_module *mods = NULL;
	struct ksym_list *ksyms = malloc(sizeof(*ksyms));
	const void **kept = calloc(c->n + 1, sizeof(*kept));
	size_t *sizes = calloc(c->n + 1, sizeof(*sizes)), i;
	int ret = -ENOMEM;

	if (!ksyms || !kept || !sizes)
		goto out;
	for (i = 0; i < c->n; i++) {
		struct jw_sample_rec *s = c->samples[i];

		if (!c->counts[i])
			continue;
		s->weight = c->counts[i];
		kept[raw.n_samples] = s;
		sizes[raw.n_samples++] = s->hdr.size;
	}
	collect_ksyms(c, ksyms);
	raw.ksyms = ksyms->v;
	raw.n_ksyms = ksyms->n;
	raw.samples = kept;
	raw.sample_sizes = sizes;
	ret = jw_symbolizer__modules(proc->sym, &mods, &raw.n_modules);
	if (ret)
		goto out;
	raw.modules = mods;
	ret = jw_raw_write_report(c->raw, &raw);
out:
	free(mods);
	free(sizes);
	free(kept);
	free(ksyms);
	return ret;
}
