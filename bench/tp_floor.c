// SPDX-License-Identifier: GPL-2.0-only
/*
 * jw_bench_tp_floor: attaches tp_floor.bpf.c's empty programs, says "ready" on stderr, and holds
 * them until SIGINT or SIGTERM. Without arguments, to the raw sys_enter and sys_exit tracepoints
 * (tracefs need not be mounted), with --clock reading the clock once each; with --syscall NAME,
 * to syscalls:sys_enter_NAME and syscalls:sys_exit_NAME (tracefs must be mounted: libbpf reads
 * the tracepoints' ids there).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hold.h"
#include "tp_floor.skel.h"

/* Attaches @prog to syscalls:sys_@edge_@name, kept in @link. Returns 0 or -errno, said. */
static int attach_syscall(struct bpf_program *prog, const char *edge, const char *name,
			  struct bpf_link **link)
{
	char tp[128];
	int err;

	snprintf(tp, sizeof(tp), "sys_%s_%s", edge, name);
	*link = bpf_program__attach_tracepoint(prog, "syscalls", tp);
	if (*link)
		return 0;
	err = -errno;
	fprintf(stderr, "jw_bench_tp_floor: cannot attach to syscalls:%s: %s%s\n", tp,
		strerror(-err), err == -ENOENT ? " (is tracefs mounted?)" : "");
	return err;
}

int main(int argc, char **argv)
{
	const char *syscall = argc == 3 && !strcmp(argv[1], "--syscall") ? argv[2] : NULL;
	bool clock = argc == 2 && !strcmp(argv[1], "--clock");
	struct bpf_link *enter = NULL, *exit_ = NULL;
	struct tp_floor_bpf *skel;
	int err;

	if (argc != 1 && !syscall && !clock) {
		fprintf(stderr, "usage: jw_bench_tp_floor [--clock | --syscall NAME]\n");
		return 2;
	}
	err = hold_init("jw_bench_tp_floor");
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot install signal handlers: %s\n",
			strerror(-err));
		return 1;
	}
	skel = tp_floor_bpf__open();
	if (skel) {
		skel->rodata->read_clock = clock;
		err = tp_floor_bpf__load(skel);
		if (err) {
			tp_floor_bpf__destroy(skel);
			skel = NULL;
			errno = -err;
		}
	}
	if (!skel) {
		fprintf(stderr, "jw_bench_tp_floor: cannot load tp_floor.bpf.o: %s\n",
			strerror(errno));
		return 1;
	}
	if (syscall) {
		err = attach_syscall(skel->progs.sys_floor_enter, "enter", syscall, &enter);
		if (!err)
			err = attach_syscall(skel->progs.sys_floor_exit, "exit", syscall, &exit_);
	} else {
		err = tp_floor_bpf__attach(skel);
		if (err)
			fprintf(stderr, "jw_bench_tp_floor: cannot attach to sys_enter/sys_exit: %s\n",
				strerror(-err));
	}
	if (err)
		goto out;
	if (syscall)
		fprintf(stderr, "jw_bench_tp_floor: attached to syscalls:sys_enter_%s and "
			"sys_exit_%s; ready\n", syscall, syscall);
	else
		fprintf(stderr, "jw_bench_tp_floor: attached to raw_tp sys_enter and sys_exit; "
			"ready\n");
	hold();
out:
	bpf_link__destroy(exit_);
	bpf_link__destroy(enter);
	tp_floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
