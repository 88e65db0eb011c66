// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/object.h"
#include "base/log.h"

/*
 * A cpu-clock sampler every @period_ms of thread @tid on any CPU, or (@tid -1) of whoever runs on
 * CPU @cpu, its link kept for process @pid (0: the session's). 0, or -errno, said, but for
 * -ENODEV on a CPU (offline: the caller counts them).
 */
static int attach_sampler(struct jw_attach *a, pid_t tid, int cpu, unsigned int period_ms,
			  pid_t pid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = (uint64_t)period_ms * 1000000,
	};
	struct bpf_link *link;
	char what[32];
	int fd, err;

	snprintf(what, sizeof(what), tid >= 0 ? "thread %d" : "CPU %d", tid >= 0 ? tid : cpu);
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (tid >= 0 || err != -ENODEV)
			jw_log(JW_LOG_ERROR, "cannot open a cpu-clock perf event on %s: %s", what,
			       strerror(-err));
		return err;
	}
	link = bpf_program__attach_perf_event(a->skel->progs.on_sample, fd);
	if (!link) {
		err = -errno;
		close(fd);
		jw_log(JW_LOG_ERROR, "cannot attach the sampler to %s: %s", what, strerror(-err));
		return err;
	}
	/*
	 * From here the link owns the perf event's fd and closes it, at once when it goes: a
	 * thread's perf event outlives an exec, and left to the reaper it would sample the next
	 * program twice; a sampler taken off for the other kind must not sample beside it.
	 */
	return jw_attach_keep_link(a, jw_link_of(link), pid, true, JW_LINK_SAMPLER);
}

int jw_attach__thread_switches(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		.sample_period = 1,
	};
	struct bpf_link *link;
	int fd, err;

	if (!a->thread_switches)
		return 0;
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		jw_log(JW_LOG_ERROR, "cannot open a context-switch perf event on thread %d: %s",
		       (int)tid, strerror(-err));
		return err;
	}
	/* Its time on a CPU is read there by the programs that run on it (switch_events). */
	if (bpf_map__update_elem(a->skel->maps.switch_events, &slot, sizeof(slot), &fd,
				 sizeof(fd), BPF_ANY)) {
		err = -errno;
		close(fd);
		jw_log(JW_LOG_ERROR, "cannot keep thread %d's switch event: %s", (int)tid,
		       strerror(-err));
		return err;
	}
	link = bpf_program__attach_perf_event(a->skel->progs.on_thread_switch, fd);
	if (!link) {
		err = -errno;
		close(fd);
		bpf_map__delete_elem(a->skel->maps.switch_events, &slot, sizeof(slot), 0);
		jw_log(JW_LOG_ERROR, "cannot attach to thread %d's switches: %s", (int)tid,
		       strerror(-err));
		return err;
	}
	/* At once when it goes, as a thread's sampler (above). */
	return jw_attach_keep_link(a, jw_link_of(link), pid, true, JW_LINK_TASK);
}

int jw_attach__cpu_samplers(struct jw_attach *a, unsigned int period_ms)
{
	int n = libbpf_num_possible_cpus(), cpu, err, offline = 0;

	if (n < 0) {
		jw_log(JW_LOG_ERROR, "cannot count the CPUs: %s", strerror(-n));
		return n;
	}
	for (cpu = 0; cpu < n; cpu++) {
		err = attach_sampler(a, -1, cpu, period_ms, 0);
		if (err == -ENODEV) {
			offline++;
		} else if (err) {
			jw_attach__drop_samplers(a, 0);
			return err;
		}
	}
	if (offline)
		jw_log(JW_LOG_WARN, "samplers on each CPU: %d of %d CPUs offline have no sampler: a "
		       "watched thread on one brought online later has no stacks", offline, n);
	return 0;
}

int jw_attach__sampler(struct jw_attach *a, pid_t pid, pid_t tid, unsigned int period_ms)
{
	return attach_sampler(a, tid, -1, period_ms, pid);
}

size_t jw_attach__drop_samplers(struct jw_attach *a, pid_t pid)
{
	return jw_attach_drop_links(a, pid, JW_LINK_SAMPLER, true, 0);
}
