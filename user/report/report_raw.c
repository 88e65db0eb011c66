// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "base/frame.h"
#include "output/rawfile.h"
#include "report/report_raw.h"
#include "stacks/pycode.h"
#include "stacks/stacks.h"

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

/* The Python part of a capture: the names of the frames its kept samples carry. */
struct py_part {
	struct jw_raw_pyname *names;
	size_t n, cap;
	struct jw_raw_range eval[JW_PY_EVAL_PARTS];
};

/* Names the Python frames of @s into @p (each code object and instruction once). 0 or -ENOMEM. */
static int add_py_names(struct jw_pycode *pyc, const struct jw_sample_rec *s, struct py_part *p)
{
	struct jw_py_frame py[JW_MAX_PY_FRAMES];
	size_t n = jw_sample_py_frames(s, py), i, k;
	struct jw_raw_pyname *grown;
	struct jw_frame fr;

	for (i = 0; i < n; i++) {
		uint64_t code = py[i].code & ~JW_PY_FRAME_ENTRY;

		for (k = 0; k < p->n; k++)
			if (p->names[k].code == code && p->names[k].instr == py[i].instr)
				break;
		if (k < p->n || !jw_pycode__frame(pyc, code, py[i].instr, &fr))
			continue;
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			grown = realloc(p->names, p->cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			p->names = grown;
		}
		p->names[p->n++] = (struct jw_raw_pyname){
			.code = code, .instr = py[i].instr, .name = fr.symbol, .file = fr.module,
			.line = (uint32_t)fr.rel_pc,
		};
	}
	return 0;
}

/* Fills @raw's Python fields from the process's namer, when its samples were named with one. */
static int capture_python(struct jw_pycode *pyc, struct jw_raw_report *raw, struct py_part *p)
{
	const struct jw_elf_range *eval;
	size_t i, n;
	int err;

	if (!pyc)
		return 0;
	for (i = 0; i < raw->n_samples; i++) {
		err = add_py_names(pyc, raw->samples[i], p);
		if (err)
			return err;
	}
	eval = jw_pycode__eval(pyc, &n);
	for (i = 0; i < n && i < JW_PY_EVAL_PARTS; i++)
		p->eval[i] = (struct jw_raw_range){ eval[i].lo, eval[i].hi };
	raw->py_module = jw_pycode__module(pyc);
	raw->py_entry_own = jw_pycode__entry_own(pyc);
	raw->py_eval = p->eval;
	raw->n_py_eval = i;
	raw->py_names = p->names;
	raw->n_py_names = p->n;
	return 0;
}

int jw_report_capture(const struct jw_report_capture *c)
{
	struct py_part py = { 0 };
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
	ret = capture_python(jw_symbolizer__python_made(proc->sym), &raw, &py);
	if (!ret)
		ret = jw_raw_write_report(c->raw, &raw);
out:
	free(py.names);
	free(mods);
	free(sizes);
	free(kept);
	free(ksyms);
	return ret;
}
