// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/clocks.h"
#include "base/log.h"
#include "attach/object.h"
#include "attach/waitcost.h"

#define BATCHES 7
#define SYSCALLS_PER_BATCH 2000
#define EMULATED_PER_BATCH 1000
#define STEPPED_PER_BATCH 200


static double now_ns(void)
{
	return (double)jw_clock_ns(CLOCK_MONOTONIC);
}

static void call_getppid(unsigned int n)
{
	while (n--)
		syscall(SYS_getppid);
}

static void call_emulated(unsigned int n)
{
	while (n--)
		jw_arch_cost_emulated();
}

static void call_stepped(unsigned int n)
{
	while (n--)
		jw_arch_cost_stepped();
}

/* The median ns per call of @fn(@n) over BATCHES batches. */
static double ns_per_call(void (*fn)(unsigned int), unsigned int n)
{
	double v[BATCHES];
	int b;

	for (b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		fn(n);
		v[b] = (now_ns() - t0) / n;
	}
	return jw_median(v, BATCHES);
}

/* What the tracepoints add to a system call of a thread they do not watch; < 0: unknown. */
static double tracepoints_ns(struct jw_attach *a)
{
	double without = ns_per_call(call_getppid, SYSCALLS_PER_BATCH), with;

	if (jw_attach__trial_tracepoints(a, true))
		return -1;
	with = ns_per_call(call_getppid, SYSCALLS_PER_BATCH);
	jw_attach__trial_tracepoints(a, false);
	jw_log(JW_LOG_DEBUG, "wait_tracepoints=2: getppid() %.0f ns, %.0f ns with the tracepoints",
	       without, with);
	return with > without ? with - without : 0;
}

/* The file and file offset of this process's code at @addr. 0 or -errno. */
static int own_code_at(const void *addr, char *path, size_t len, uint64_t *offset)
{
	unsigned long long start, end, pgoff;
	uintptr_t at = (uintptr_t)addr;
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT, n;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &pgoff, &n) != 3 ||
		    at < start || at >= end || line[n] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, len, "%s", line + n);
		*offset = at - start + pgoff;
		ret = 0;
	}
	fclose(f);
	return ret;
}

/*
 * What the waits' uprobes (a pair, or one session where the kernel has them) add to a call, on
 * an emulated or a single-stepped first instruction.
 */
static double uprobes_ns(struct jw_attach *a, bool emulated)
{
	void (*calls)(unsigned int) = emulated ? call_emulated : call_stepped;
	unsigned int n = emulated ? EMULATED_PER_BATCH : STEPPED_PER_BATCH;
	double without, with;
	char path[PATH_MAX];
	uint64_t offset = 0;
	int err;

	err = own_code_at((const void *)(emulated ? jw_arch_cost_emulated : jw_arch_cost_stepped),
			  path, sizeof(path), &offset);
	if (err) {
		jw_log(JW_LOG_WARN, "cannot find jankwatch's own code to measure a uprobe on: %s",
		       strerror(-err));
		return -1;
	}
	without = ns_per_call(calls, n);
	if (jw_attach__trial_uprobes(a, path, offset, true))
		return -1;
	with = ns_per_call(calls, n);
	jw_attach__trial_uprobes(a, path, offset, false);
	jw_log(JW_LOG_DEBUG, "wait_tracepoints=2: a call %.0f ns, %.0f ns with a uprobe %s on its "
	       "%s first instruction", without, with, a->plan.session ? "session" : "pair",
	       emulated ? "emulated" : "single-stepped");
	return with > without ? with - without : 0;
}

/* Counts the rates for JW_WAIT_RATE_MS into @out; an empty window when they cannot be. */
static void count_rates(struct jw_attach *a, const pid_t *tids, size_t n,
			struct jw_wait_costs *out)
{
	uint64_t before[JW_RATE_COUNT], after[JW_RATE_COUNT];
	struct timespec pause = { 0, JW_WAIT_RATE_MS * 1000000L };
	double t0, t1;

	out->window_s = 0;
	if (jw_attach__count_rates(a, tids, n, true))
		return;
	if (jw_attach__read_rates(a, before))
		goto out;
	t0 = now_ns();
	while (nanosleep(&pause, &pause) && errno == EINTR)
		;
	if (jw_attach__read_rates(a, after))
		goto out;
	t1 = now_ns();
	out->window_s = (t1 - t0) / 1e9;
	out->syscalls = after[JW_RATE_SYSCALLS] - before[JW_RATE_SYSCALLS];
	out->waits = after[JW_RATE_WAITS] - before[JW_RATE_WAITS];
out:
	jw_attach__count_rates(a, tids, n, false);
}

int jw_wait_costs_measure(struct jw_attach *a, const pid_t *tids, size_t n, bool emulated,
			  struct jw_wait_costs *out)
{
	memset(out, 0, sizeof(*out));
	out->tp_ns = tracepoints_ns(a);
	out->up_ns = uprobes_ns(a, emulated);
	count_rates(a, tids, n, out);
	jw_log(JW_LOG_DEBUG, "wait_tracepoints=2: %" PRIu64 " system calls, %" PRIu64 " of them "
	       "watched waits, in %.3f s", out->syscalls, out->waits, out->window_s);
	return 0;
}
