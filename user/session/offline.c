// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config/cli.h"
#include "session/offline.h"
#include "config/options.h"
#include "loops/presets.h"
#include "output/rawfile.h"
#include "report/report.h"

struct replay {
	const char *raw_path;
	const char *debug_dir;
	const char *log_dir;
	struct jw_config cfg;
	struct jw_logdir *logdir;
	uint64_t reports;
	uint64_t bad_records;	/* records a damaged or foreign capture made unusable */
	uint32_t version;	/* the capture's format version */
	bool format_given;	/* --format: else the capture's stack log format alone */
};

/* Returns 0, 1 after --help, or -EINVAL with the message printed. */
static int parse_args(struct replay *rp, int argc, char **argv)
{
	struct option opts[16];
	char shorts[16], err[256];
	int c, verbosity = 0;

	if (jw_cli_getopt(jw_cli_cmd("symbolize"), ":", opts, 16, shorts, sizeof(shorts)))
		return -ENOSPC;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			rp->debug_dir = optarg;
			break;
		case 'l':
			rp->log_dir = optarg;
			break;
		case 'f':
			if (jw_options_format(&rp->cfg, optarg, err, sizeof(err))) {
				fprintf(stderr, "jankwatch: symbolize: %s\n", err);
				return -EINVAL;
			}
			rp->format_given = true;
			break;
		case 'v':
			verbosity++;
			break;
		case 'q':
			verbosity = -1;
			break;
		case 'h':
			jw_cli_help(jw_cli_cmd("symbolize"), stdout);
			return 1;
		default:
			fprintf(stderr, "jankwatch: symbolize: bad option '%s' (--help for usage)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "jankwatch: symbolize: give one raw capture (--help for usage)\n");
		return -EINVAL;
	}
	rp->raw_path = argv[optind];
	jw_log_set_level(verbosity < 0 ? JW_LOG_ERROR : verbosity ? JW_LOG_DEBUG : JW_LOG_INFO);
	return 0;
}

/*
 * Registers a version 1 capture's samples carried: x86-64's 17, and no trampoline address after
 * them. Such a sample is copied into today's layout; NULL with errno set when it cannot be.
 */
#define V1_UREGS 17
#define V1_GROWTH ((JW_UREG_MAX - V1_UREGS) * sizeof(uint64_t) + sizeof(uint64_t))

static void *upgrade_v1_sample(const void *data, size_t size, size_t *new_size)
{
	size_t cut = offsetof(struct jw_sample_rec, regs) + V1_UREGS * sizeof(uint64_t);
	struct jw_sample_rec *s;
	uint8_t *p;

	if (size < sizeof(struct jw_sample_rec) - V1_GROWTH) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, size + V1_GROWTH);
	if (!p)
		return NULL;
	memcpy(p, data, cut);
	memcpy(p + cut + V1_GROWTH, (const uint8_t *)data + cut, size - cut);
	s = (struct jw_sample_rec *)p;
	s->hdr.size += V1_GROWTH;
	*new_size = size + V1_GROWTH;
	return p;
}

/* Whether a recorded sample can be used as it is: its counts within the arrays it carries. */
static bool sample_ok(const void *data, size_t size)
{
	const struct jw_sample_rec *s = data;

	return size >= sizeof(*s) && s->hdr.type == JW_REC_SAMPLE && s->hdr.size <= size &&
	       s->n_kernel <= JW_MAX_KERNEL_FRAMES && s->n_user <= JW_MAX_USER_FRAMES &&
	       s->n_rets <= JW_MAX_NEST && s->mode <= JW_UNWIND_DWARF &&
	       s->stack_size <= JW_MAX_STACK_BYTES && s->stack_below <= JW_MAX_RED_ZONE &&
	       (!s->stack_below || s->stack_below < s->stack_size) &&
	       s->hdr.size >= sizeof(*s) + s->stack_size;
}

/*
 * The recorded task @data of @size bytes into @t, when it is sound. A capture made before the
 * delay field existed ends before it: the delay is then unknown.
 */
static bool task_ok(const void *data, size_t size, struct jw_task_rec *t)
{
	if (!data || size < JW_TASK_REC_SIZE_V1)
		return false;
	memset(t, 0, sizeof(*t));
	memcpy(t, data, size < sizeof(*t) ? size : sizeof(*t));
	if (size < sizeof(*t))
		t->delay_ns = JW_DELAY_UNKNOWN;
	return t->hdr.type == JW_REC_TASK && t->n_waker_ips <= JW_MAX_WAKER_FRAMES &&
	       t->end_ns >= t->start_ns;
}

static struct jw_ksyms *recorded_ksyms(const struct jw_raw_report *r)
{
	uint64_t *addrs = calloc(r->n_ksyms + 1, sizeof(*addrs));
	const char **names = calloc(r->n_ksyms + 1, sizeof(*names));
	struct jw_ksyms *ks = NULL;
	size_t i, n = 0;

	if (addrs && names) {
		for (i = 0; i < r->n_ksyms; i++) {
			if (!r->ksyms[i].name)
				continue;
			addrs[n] = r->ksyms[i].addr;
			names[n++] = r->ksyms[i].name;
		}
		ks = jw_ksyms__from_list(addrs, names, n);
	}
	free(names);
	free(addrs);
	return ks;
}

/* The process as the capture describes it. */
static void recorded_proc(const struct jw_raw_report *r, struct jw_proc *p)
{
	struct jw_preset preset;
	size_t i;

	memset(p, 0, sizeof(*p));
	p->target.pid = r->pid;
	p->target.tid = r->tid;
	p->target.uid = r->uid;
	p->target.start_jiffies = r->start_jiffies;
	snprintf(p->target.comm, sizeof(p->target.comm), "%s", r->comm ? r->comm : "");
	snprintf(p->target.exe, sizeof(p->target.exe), "%s", r->exe ? r->exe : "");
	p->start_boot_ns = r->start_boot_ns;
	p->loop = r->loop;
	/* A preset's name: its stack rule and flags (no process to look at: nothing else). */
	if (r->loop && !jw_preset_by_name(r->loop, &preset)) {
		p->handler_rule = preset.handler_rule;	/* the table's, static */
		p->handler_addr_is_data = preset.handler_addr_is_data;
	}
	for (i = 0; i < r->n_handlers && i < JW_MAX_PROBES; i++)
		p->handlers[i] = r->handlers[i];
}

/* Writes one recorded report again. */
static int replay_one(struct replay *rp, struct jw_reporter *rep, const struct jw_raw_report *r)
{
	void **samples = calloc(r->n_samples + 1, sizeof(*samples));
	void **upgraded = calloc(r->n_samples + 1, sizeof(*upgraded));
	struct jw_ksyms *ks = recorded_ksyms(r);
	struct jw_task_rec task;
	struct jw_proc proc;
	size_t i, n = 0, size;
	int ret = -ENOMEM;
	const void *data;

	if (!samples || !upgraded || !ks)
		goto out;
	if (!task_ok(r->task, r->task_size, &task) || r->verdict > JW_VERDICT_TRACE) {
		rp->bad_records++;
		ret = 0;
		goto out;
	}
	for (i = 0; i < r->n_samples; i++) {
		data = r->samples[i];
		size = r->sample_sizes[i];
		if (rp->version == 1) {
			data = upgraded[i] = upgrade_v1_sample(data, size, &size);
			if (!data && errno == ENOMEM)
				goto out;
		}
		if (data && sample_ok(data, size))
			samples[n++] = (void *)data;
		else
			rp->bad_records++;
	}
	recorded_proc(r, &proc);
	proc.sym = jw_symbolizer__new_offline(r->pid, r->modules, r->n_modules, r->exe,
					      rp->debug_dir);
	if (!proc.sym)
		goto out;
	if (r->py_module &&
	    jw_symbolizer__set_python_names(proc.sym, r->py_names, r->n_py_names, r->py_module,
					    r->py_entry_own, r->py_eval, r->n_py_eval)) {
		jw_symbolizer__free(proc.sym);
		goto out;
	}
	jw_reporter__set_ksyms(rep, ks);
	ret = jw_reporter__replay(rep, &proc, &task, samples, n, r->verdict, r->time_ms);
	jw_reporter__set_ksyms(rep, NULL);
	jw_symbolizer__free(proc.sym);
	rp->reports++;
out:
	jw_ksyms__free(ks);
	for (i = 0; upgraded && i < r->n_samples; i++)
		free(upgraded[i]);
	free(upgraded);
	free(samples);
	return ret;
}

static int replay_all(struct replay *rp, struct jw_raw_reader *rd, const struct jw_raw_header *h)
{
	struct jw_reporter_opts ropts = {
		.params = &rp->cfg.params,
		.format = rp->cfg.format,
		.svg = rp->cfg.svg,
		.pprof = rp->cfg.pprof,
		.logdir = rp->logdir,
		.out = stdout,
		.clocks = jw_raw_clocks(rd),	/* with the steps read so far */
	};
	struct jw_stacks *stacks = jw_stacks__new(NULL);
	struct jw_reporter *rep;
	struct jw_raw_report r;
	char err[512];
	int ret;

	if (!stacks)
		return -ENOMEM;
	ret = jw_stacks__set_machine(stacks, h->machine);
	if (ret) {
		jw_log(JW_LOG_ERROR, "%s: recorded on ELF machine %u, whose registers jankwatch does "
		       "not know", rp->raw_path, h->machine);
		jw_stacks__free(stacks);
		return ret;
	}
	rp->version = h->version;
	ropts.stacks = stacks;
	rep = jw_reporter__new(&ropts);
	if (!rep) {
		jw_stacks__free(stacks);
		return -ENOMEM;
	}
	while ((ret = jw_raw_next(rd, &r, err, sizeof(err))) == 1) {
		ret = replay_one(rp, rep, &r);
		if (ret) {
			jw_log(JW_LOG_ERROR, "%s: %s", rp->raw_path, strerror(-ret));
			break;
		}
	}
	if (ret < 0 && ret != -ENOMEM)
		jw_log(JW_LOG_ERROR, "%s", err);
	jw_reporter__free(rep);
	jw_stacks__free(stacks);
	return ret;
}

int jw_symbolize_main(int argc, char **argv)
{
	struct replay rp = { .log_dir = "." };
	struct jw_raw_reader *rd;
	struct jw_raw_header h;
	char err[512];
	int ret;

	ret = parse_args(&rp, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	rd = jw_raw_open(rp.raw_path, &h, err, sizeof(err));
	if (!rd) {
		jw_log(JW_LOG_ERROR, "%s", err);
		return 1;
	}
	/* The recording's settings that shape the logs. */
	jw_params_defaults(&rp.cfg.params);
	rp.cfg.params.v[JW_P_SAMPLE_COUNT] = h.sample_count;
	rp.cfg.params.v[JW_P_SAMPLE_PERIOD_MS] = h.sample_period_ms;
	if (!rp.format_given)
		rp.cfg.format = h.format == JW_FORMAT_FOLDED ? JW_FORMAT_FOLDED : JW_FORMAT_TREE;
	rp.logdir = jw_logdir__open(rp.log_dir, rp.cfg.params.v[JW_P_LOG_QUOTA_BYTES], err,
				    sizeof(err));
	if (!rp.logdir) {
		jw_log(JW_LOG_ERROR, "%s", err);
		jw_raw_close(rd);
		return 1;
	}
	ret = replay_all(&rp, rd, &h);
	jw_log(JW_LOG_INFO, "%llu reports written again from %s", (unsigned long long)rp.reports,
	       rp.raw_path);
	if (rp.bad_records)
		jw_log(JW_LOG_WARN, "%llu damaged records were skipped",
		       (unsigned long long)rp.bad_records);
	jw_logdir__free(rp.logdir);
	jw_raw_close(rd);
	return ret < 0 ? 1 : 0;
}
