// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/clocks.h"
#include "base/log.h"
#include "attach/object.h"
#include "attach/waitcost.h"

#define BATCHES 7
/* The tracepoints' cost: rounds of calls without them and with them, each call timed. */
#define TP_ROUNDS 5
#define TP_CALLS 400
/*
 * A wait's probes are hit as the thread comes back from sleeping, where a uprobe costs more than
 * in a hot loop (its trap's path and the BPF program cold: 2.0x after 50 us asleep, 2.6x after
 * 500 us, here): each call timed is made right after a sleep of this long, a server's pause
 * between requests at some thousands a second.
 */
#define COLD_SLEEP_NS 100000
#define COLD_PER_BATCH 60


static double now_ns(void)
{
	return (double)jw_clock_ns(CLOCK_MONOTONIC);
}

static void call_getppid(unsigned int n)
{
	while (n--)
		syscall(SYS_getppid);
}

/* An empty epoll set of this process's, for call_wait(): a wait that returns at once. */
static int wait_fd = -1;

static void call_wait(unsigned int n)
{
	struct epoll_event ev;

	while (n--)
		syscall(SYS_epoll_pwait, wait_fd, &ev, 1, 0, NULL, (size_t)8);
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

/* The median ns of one call of @fn made right after a sleep (COLD_SLEEP_NS), over BATCHES. */
static double ns_per_cold_call(void (*fn)(unsigned int))
{
	struct timespec pause = { 0, COLD_SLEEP_NS };
	double v[BATCHES];
	int b, i;

	for (b = 0; b < BATCHES; b++) {
		double sum = 0;

		for (i = 0; i < COLD_PER_BATCH; i++) {
			double t0;

			nanosleep(&pause, NULL);
			t0 = now_ns();
			fn(1);
			sum += now_ns() - t0;
		}
		v[b] = sum / COLD_PER_BATCH;
	}
	return jw_median(v, BATCHES);
}

/*
 * A call's own cost, read through what shares the CPU with it: the 10th percentile of
 * TP_CALLS calls of @fn timed one by one (a call that was preempted, or met an interrupt or the
 * host's steal, reads more, never less).
 */
static double low_ns_per_call(void (*fn)(unsigned int))
{
	double v[TP_CALLS];
	int i;

	for (i = 0; i < TP_CALLS; i++) {
		double t0 = now_ns();

		fn(1);
		v[i] = now_ns() - t0;
	}
	return jw_percentile(v, TP_CALLS, 10);
}

/*
 * What the tracepoints add to a system call of a thread they do not watch, and to a wait of one
 * (its exit program runs; a wait that returns at once): @rounds rounds, each its calls with them
 * less its calls without them just before, into @out's reads (waitmode.h), whose medians are its
 * tp_ns and tpw_ns; tp_ns < 0 when no round could be made. Batches of calls timed as a whole
 * read the CPU's sharers too: beside a loaded redis whose client shared jankwatch's CPU, the
 * least of 7 batches with the tracepoints read 1.9-2.1 us against 1.0-1.2 without in two
 * starts of six, and 0-80 ns more in the others.
 */
static void tracepoint_rounds(struct jw_attach *a, int rounds, struct jw_wait_costs *out)
{
	double without = 0, with = 0, wait_without, d, dw;
	char each[TP_ROUNDS * 24] = "";
	size_t used = 0;
	int r;

	wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (wait_fd < 0)
		jw_log(JW_LOG_WARN, "cannot time a wait with the tracepoints: epoll_create1: %s",
		       strerror(errno));
	for (r = 0; r < rounds && wait_fd >= 0; r++) {
		without = low_ns_per_call(call_getppid);
		wait_without = low_ns_per_call(call_wait);
		if (jw_attach__trial_tracepoints(a, true))
			break;
		with = low_ns_per_call(call_getppid);
		dw = low_ns_per_call(call_wait) - wait_without;
		jw_attach__trial_tracepoints(a, false);
		d = with - without;
		jw_wait_tp_read(out, d, dw);
		if (used < sizeof(each))
			used += (size_t)snprintf(each + used, sizeof(each) - used, " %.0f/%.0f", d,
						 dw);
	}
	if (wait_fd >= 0)
		close(wait_fd);
	wait_fd = -1;
	if (!out->n_tp_reads) {
		out->tp_ns = -1;
		return;
	}
	if (r)
		jw_log(JW_LOG_DEBUG, "wait_tracepoints=2: getppid() %.0f ns, %.0f ns with the "
		       "tracepoints (the last of %d rounds; the rounds' differences on it and on a "
		       "wait%s ns; the medians of all %u rounds %.0f and %.0f ns)", without, with, r,
		       each, out->n_tp_reads, out->tp_ns, out->tpw_ns);
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
	without = ns_per_cold_call(calls);
	if (jw_attach__trial_uprobes(a, path, offset, true))
		return -1;
	with = ns_per_cold_call(calls);
	jw_attach__trial_uprobes(a, path, offset, false);
	jw_log(JW_LOG_DEBUG, "wait_tracepoints=2: a call after a sleep %.0f ns, %.0f ns with a "
	       "uprobe %s on its %s first instruction", without, with,
	       a->plan.session ? "session" : "pair", emulated ? "emulated" : "single-stepped");
	return with > without ? with - without : 0;
}

int jw_wait_count_start(struct jw_attach *a, const pid_t *tids, size_t n,
			struct jw_wait_count *wc)
{
	int err;

	memset(wc, 0, sizeof(*wc));
	wc->n_tids = n < JW_MAX_RATE_TIDS ? n : JW_MAX_RATE_TIDS;
	memcpy(wc->tids, tids, wc->n_tids * sizeof(*tids));
	err = jw_attach__count_rates(a, tids, n, true);
	if (!err)
		err = jw_attach__read_rates(a, wc->before);
	if (err) {
		jw_attach__count_rates(a, tids, n, false);
		return err;
	}
	wc->t0_ns = now_ns();
	wc->on = true;
	return 0;
}

void jw_wait_count_end(struct jw_attach *a, struct jw_wait_count *wc, struct jw_wait_costs *out)
{
	uint64_t after[JW_RATE_COUNT];

	out->window_s = 0;
	if (!wc->on)
		return;
	if (!jw_attach__read_rates(a, after)) {
		out->window_s = (now_ns() - wc->t0_ns) / 1e9;
		out->syscalls = after[JW_RATE_SYSCALLS] - wc->before[JW_RATE_SYSCALLS];
		out->machine_waits = after[JW_RATE_MACHINE_WAITS] -
				     wc->before[JW_RATE_MACHINE_WAITS];
		out->waits = after[JW_RATE_WAITS] - wc->before[JW_RATE_WAITS];
	}
	jw_attach__count_rates(a, wc->tids, wc->n_tids, false);
	wc->on = false;
	jw_log(JW_LOG_DEBUG, "wait hooks: %" PRIu64 " system calls, %" PRIu64 " of them waits, %"
	       PRIu64 " the watched threads', in %.3f s", out->syscalls, out->machine_waits,
	       out->waits, out->window_s);
}

void jw_wait_unit_costs(struct jw_attach *a, bool emulated, struct jw_wait_costs *out)
{
	tracepoint_rounds(a, TP_ROUNDS, out);
	out->up_ns = uprobes_ns(a, emulated);
}

void jw_wait_tp_again(struct jw_attach *a, struct jw_wait_costs *out)
{
	tracepoint_rounds(a, TP_ROUNDS, out);
}

int jw_wait_costs_measure(struct jw_attach *a, const pid_t *tids, size_t n, bool emulated,
			  struct jw_wait_costs *out)
{
	struct timespec pause = { 0, JW_WAIT_RATE_MS * 1000000L };
	struct jw_wait_count wc;

	memset(out, 0, sizeof(*out));
	jw_wait_unit_costs(a, emulated, out);
	if (jw_wait_count_start(a, tids, n, &wc))
		return 0;	/* an empty window */
	while (nanosleep(&pause, &pause) && errno == EINTR)
		;
	jw_wait_count_end(a, &wc, out);
	return 0;
}
