// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/arch.h"
#include "attach/object.h"
#include "attach/wait_tp.h"
#include "base/log.h"

/* The fexit program of wait system call @i (jw_sysevents_name()'s order). */
static struct bpf_program *fexit_prog(const struct jw_attach *a, size_t i)
{
	struct bpf_program *const progs[JW_WAIT_SYSCALLS] = {
		a->skel->progs.wait_fexit_0, a->skel->progs.wait_fexit_1,
		a->skel->progs.wait_fexit_2, a->skel->progs.wait_fexit_3,
		a->skel->progs.wait_fexit_4, a->skel->progs.wait_fexit_5,
		a->skel->progs.wait_fexit_6,
	};

	return progs[i];
}

void jw_wait_tp_prepare(struct jw_attach *a)
{
	char name[64];
	size_t i, n = 0;

	for (i = 0; i < JW_WAIT_SYSCALLS; i++) {
		struct bpf_program *prog = fexit_prog(a, i);

		a->fexit[i] = NULL;
		snprintf(name, sizeof(name), "%s%s", jw_arch_syscall_prefix(),
			 jw_sysevents_name(i));
		/* This architecture's, where the kernel's BTF has the function. */
		if (a->plan.fexit && jw_sysevents_on_arch(i) &&
		    !bpf_program__set_attach_target(prog, 0, name)) {
			a->fexit[i] = prog;
			n++;
		}
		bpf_program__set_autoload(prog, a->fexit[i] != NULL);
	}
	if (a->plan.fexit)
		jw_log(JW_LOG_DEBUG, "syscall mode's kernel hooks: fexit on %zu wait system calls' "
		       "functions (%s...)", n, jw_arch_syscall_prefix());
}

bool jw_wait_tp_fexit(const struct jw_attach *a)
{
	size_t i;

	for (i = 0; i < JW_WAIT_SYSCALLS && !a->fexit_failed; i++)
		if (a->fexit[i])
			return true;
	return false;
}

/*
 * One the kernel refuses (a kernel that loads them and has no trampolines to attach them with)
 * is said at -v, and the tracepoints are taken from then on.
 */
int jw_wait_tp_attach_fexit(struct jw_attach *a, struct jw_link *out, size_t *n)
{
	struct bpf_link *link;
	size_t i;
	int err;

	*n = 0;
	for (i = 0; i < JW_WAIT_SYSCALLS; i++) {
		if (!a->fexit[i])
			continue;
		link = bpf_program__attach_trace(a->fexit[i]);
		if (!link)
			goto fail;
		out[(*n)++] = jw_link_of(link);
	}
	a->skel->bss->wait_fexit = true;
	return 0;
fail:
	err = -errno;
	/* 524: the kernel's ENOTSUPP, which has no name in user space. */
	jw_log(JW_LOG_INFO, "syscall mode's kernel hooks: not fexit, which the kernel cannot attach "
	       "(%s%s: %s): the tracepoints where they are taken", jw_arch_syscall_prefix(),
	       jw_sysevents_name(i), err == -524 ? "no BPF trampolines here" : strerror(-err));
	a->fexit_failed = true;
	jw_links_destroy_together(out, *n);
	*n = 0;
	return err;
}

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
 * The one event a trial of the cost attaches: epoll_pwait's, the wait it times (waitcost.c),
 * every architecture's; else the first.
 */
static size_t trial_event(const struct jw_sysevents *ev)
{
	size_t i;

	for (i = 0; i < ev->n; i++)
		if (!strcmp(ev->ev[i].name, "epoll_pwait"))
			return i;
	return 0;
}

/*
 * The wait system calls' own exit events into @out (@cost_only: one, trial_event()'s); 0 or
 * -errno with none. Their entries have no program: a wait that sleeps ends its task at the
 * switch.
 */
static int attach_own(struct jw_attach *a, struct jw_link *out, size_t *n, bool cost_only)
{
	const struct jw_sysevents *ev = &a->sysevents;
	size_t i;
	int err;

	*n = 0;
	for (i = cost_only ? trial_event(ev) : 0; i < ev->n; i++) {
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

int jw_wait_tp_attach(struct jw_attach *a, struct jw_link *out, size_t *n,
		      enum jw_wait_tp_kind *kind, bool cost_only)
{
	struct bpf_link *link;

	*kind = JW_WAIT_TP_FEXIT;
	if (!cost_only && jw_wait_tp_fexit(a) && !jw_wait_tp_attach_fexit(a, out, n))
		return 0;
	*kind = JW_WAIT_TP_OWN;
	if (!own_events(a) && !attach_own(a, out, n, cost_only))
		return 0;
	*kind = JW_WAIT_TP_RAW;
	*n = 0;
	link = bpf_program__attach(a->skel->progs.on_sys_exit);
	if (!link)
		return -errno;
	out[(*n)++] = jw_link_of(link);
	return 0;
}
