// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/object.h"
#include "attach/wait_tp.h"
#include "base/log.h"

/* Program @prog on tracepoint @id (perf's PERF_TYPE_TRACEPOINT): it runs on every CPU. */
static struct jw_link on_tracepoint_id(struct bpf_program *prog, int id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (__u64)id,
	};
	struct bpf_link *link;
	int fd, err;

	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return jw_link_of(NULL);
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
	}
	return jw_link_of(link);
}

/* The wait system calls' own events, read once. 0, or -errno (said at -v, the first time). */
static int own_events(struct jw_attach *a)
{
	char err[512];

	if (!a->sysevents_read) {
		a->sysevents_read = true;
		if (!a->plan.syscall_events) {
			a->sysevents_err = -EOPNOTSUPP;
			jw_log(JW_LOG_INFO, "syscall mode's tracepoints: raw_syscalls' (the kernel "
			       "has no program on one system call's tracepoints)");
			return a->sysevents_err;
		}
		a->sysevents_err = jw_sysevents_read(&a->sysevents, err, sizeof(err));
		if (a->sysevents_err)
			jw_log(JW_LOG_INFO, "syscall mode's tracepoints: raw_syscalls' (%s)", err);
	}
	return a->sysevents_err;
}

/*
 * The wait system calls' own exit events into @out (@cost_only: one); 0 or -errno with none.
 * Their entries have no program: a wait that sleeps ends its task at the switch.
 */
static int attach_own(struct jw_attach *a, struct jw_link *out, size_t *n, bool cost_only)
{
	const struct jw_sysevents *ev = &a->sysevents;
	size_t i;
	int err;

	*n = 0;
	for (i = 0; i < ev->n; i++) {
		out[*n] = on_tracepoint_id(a->skel->progs.wait_sys_exit, ev->ev[i].exit);
		if (!out[*n].bpf)
			goto fail;
		++*n;
		if (cost_only)
			return 0;
	}
	return 0;
fail:
	err = -errno;
	jw_log(JW_LOG_INFO, "cannot attach to the exit tracepoint of %s: %s", ev->ev[i].name,
	       strerror(-err));
	jw_links_destroy_together(out, *n);
	*n = 0;
	return err;
}

int jw_wait_tp_attach(struct jw_attach *a, struct jw_link *out, size_t *n, bool *own,
		      bool cost_only)
{
	struct bpf_link *link;

	*own = !own_events(a) && !attach_own(a, out, n, cost_only);
	if (*own)
		return 0;
	*n = 0;
	link = bpf_program__attach(a->skel->progs.on_sys_exit);
	if (!link)
		return -errno;
	out[(*n)++] = jw_link_of(link);
	return 0;
}
