// SPDX-License-Identifier: GPL-2.0-only
/*
 * wait_tracepoints=2's measurements, on the BPF object (attach.h): the waits' probes each way
 * attached for a moment in jankwatch itself, and the watched threads' system calls counted.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/object.h"
#include "base/log.h"

void jw_attach_trial_stop(struct jw_attach *a)
{
	jw_links_destroy_together(a->trial, JW_WAIT_TP_LINKS);
}

/* Keeps libbpf's link @link as trial @i: 0, or -errno when there is none. */
static int trial_kept(struct jw_attach *a, int i, struct bpf_link *link)
{
	a->trial[i] = jw_link_of(link);
	return link ? 0 : -errno;
}

static int trial_failed(struct jw_attach *a, const char *what)
{
	int err = -errno;

	jw_attach_trial_stop(a);
	jw_log(JW_LOG_WARN, "cannot attach %s to measure it: %s", what, strerror(-err));
	return err;
}

int jw_attach__trial_tracepoints(struct jw_attach *a, bool on)
{
	enum jw_wait_tp_kind kind;
	size_t n;
	int err;

	jw_attach_trial_stop(a);
	if (!on)
		return 0;
	/* As the waits would be hooked: their own tracepoints where the kernel has them. */
	err = jw_wait_tp_attach(a, a->trial, &n, &kind, true);
	if (err) {
		errno = -err;
		return trial_failed(a, "the system call tracepoints");
	}
	return 0;
}

int jw_attach__trial_uprobes(struct jw_attach *a, const char *path, uint64_t offset, bool on)
{
	/*
	 * Slot 0's state belongs to no thread yet: the programs find none and return, as for an
	 * unwatched thread.
	 */
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = jw_probe_cookie(0, 0));
	int fd;

	if (!a->plan.cookies)
		opts.bpf_cookie = 0;
	jw_attach_trial_stop(a);
	if (!on)
		return 0;
	/* As the waits will be hooked: one uprobe session where the kernel has them. */
	if (a->plan.session) {
		fd = jw_link_uprobe_session(bpf_program__fd(a->skel->progs.wait_session), path,
					    offset, opts.bpf_cookie, getpid());
		if (fd >= 0) {
			a->trial[0] = jw_link_fd(fd);
			return 0;
		}
	}
	if (trial_kept(a, 0, bpf_program__attach_uprobe_opts(a->skel->progs.wait_enter, getpid(),
							      path, offset, &opts)))
		return trial_failed(a, "a uprobe");
	opts.retprobe = true;
	if (trial_kept(a, 1, bpf_program__attach_uprobe_opts(a->skel->progs.wait_return, getpid(),
							      path, offset, &opts)))
		return trial_failed(a, "a return probe");
	return 0;
}

int jw_attach__count_rates(struct jw_attach *a, const pid_t *tids, size_t n, bool on)
{
	int fd = bpf_map__fd(a->skel->maps.rate_tids);
	__u8 one = 1;
	size_t i;

	jw_attach_trial_stop(a);
	for (i = 0; i < n && i < JW_MAX_RATE_TIDS; i++) {
		__u32 tid = tids[i];

		if (on)
			bpf_map_update_elem(fd, &tid, &one, BPF_ANY);
		else
			bpf_map_delete_elem(fd, &tid);
	}
	if (!on)
		return 0;
	if (trial_kept(a, 0, bpf_program__attach(a->skel->progs.count_syscalls)))
		return trial_failed(a, "the sys_enter tracepoint");
	return 0;
}

int jw_attach__read_rates(struct jw_attach *a, uint64_t out[JW_RATE_COUNT])
{
	int fd = bpf_map__fd(a->skel->maps.syscall_rates);
	int ncpu = libbpf_num_possible_cpus();
	__u64 *per_cpu;
	__u32 k;
	int i;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	per_cpu = calloc(ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	for (k = 0; k < JW_RATE_COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, per_cpu)) {
			i = -errno;
			free(per_cpu);
			return i;
		}
		for (i = 0; i < ncpu; i++)
			out[k] += per_cpu[i];
	}
	free(per_cpu);
	return 0;
}
