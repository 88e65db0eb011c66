// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>

#include "report/report_pprof.h"
#include "report/report_stack.h"

void jw_report_pprof_values(const struct jw_sample_rec *s, uint32_t count, uint64_t kept,
			    uint64_t total, int64_t period_ns, int64_t values[JW_PPROF_VALUES])
{
	double scale = kept ? (double)total / (double)kept : 1.0;
	uint32_t weight = s->weight ? s->weight : 1;

	values[JW_PPROF_SAMPLES] = 0;
	values[JW_PPROF_OFFCPU_NS] = 0;
	if (s->kind == JW_SAMPLE_ONCPU) {
		values[JW_PPROF_SAMPLES] = count;
		values[JW_PPROF_WALL_NS] = (int64_t)((double)count * (double)period_ns * scale);
		return;
	}
	values[JW_PPROF_OFFCPU_NS] =
		(int64_t)((double)s->block_ns * (double)count / (double)weight * scale);
	values[JW_PPROF_WALL_NS] = values[JW_PPROF_OFFCPU_NS];
}

int jw_report_pprof_write(struct jw_pprof *p, const struct jw_pprof_jank *j,
			  struct jw_logdir *logdir, char *path, size_t len)
{
	const struct jw_event *ev = j->ev;
	const struct jw_pprof_label labels[] = {
		{ .key = "jank", .str = j->id },
		{ .key = "event", .str = ev->event },
		{ .key = "handler", .str = ev->handler ? ev->handler : "" },
		{ .key = "cause", .str = ev->cause ? ev->cause : "" },
		{ .key = "group", .str = ev->group ? ev->group : "" },
		{ .key = "process", .str = ev->bundle_name ? ev->bundle_name : "" },
		{ .key = "pid", .num = ev->pid },
		{ .key = "tid", .num = ev->tid },
	};
	struct jw_logfile lf;
	char text[1024], name[128];
	int ret;

	ret = jw_pprof__label_samples(p, labels, sizeof(labels) / sizeof(labels[0]));
	if (ret)
		return ret;
	jw_pprof__cover(p, j->begin_ns, j->wall_ns);
	snprintf(text, sizeof(text),
		 "%s %s: pid %u (%s) thread %u, handler %s: wall %.3f ms (cpu %.3f, runqueue "
		 "%.3f, blocked %.3f, io %.3f), cause %s; %llu of %llu sampling periods kept",
		 ev->event, j->id, ev->pid, ev->bundle_name ? ev->bundle_name : "?", ev->tid,
		 ev->handler ? ev->handler : "?", ev->wall_ms, ev->cpu_ms, ev->runq_ms,
		 ev->blocked_ms, ev->io_ms, ev->cause ? ev->cause : "?",
		 (unsigned long long)j->kept, (unsigned long long)j->total);
	ret = jw_pprof__comment(p, text);
	if (ret)
		return ret;
	jw_report_file_name("profile", ev->pid, ev->time_ms, ".pb.gz", name, sizeof(name));
	ret = jw_logdir__create(logdir, name, &lf);
	if (ret)
		return ret;
	ret = jw_pprof__write(p, lf.f);
	if (ret) {
		jw_logdir__abort(logdir, &lf);
		return ret;
	}
	return jw_logdir__commit(logdir, &lf, path, len);
}
