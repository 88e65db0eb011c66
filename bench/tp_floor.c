// SPDX-License-Identifier: GPL-2.0-only
/*
 * jw_bench_tp_floor: attaches tp_floor.bpf.c's empty programs to the raw sys_enter and sys_exit
 * tracepoints (tracefs need not be mounted), says "ready" on stderr, and holds them until
 * SIGINT or SIGTERM.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hold.h"
#include "tp_floor.skel.h"

int main(int argc, char **argv)
{
	struct tp_floor_bpf *skel;
	int err;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: jw_bench_tp_floor\n");
		return 2;
	}
	err = hold_init("jw_bench_tp_floor");
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot install signal handlers: %s\n",
			strerror(-err));
		return 1;
	}
	skel = tp_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "jw_bench_tp_floor: cannot load tp_floor.bpf.o: %s\n",
			strerror(errno));
		return 1;
	}
	err = tp_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot attach to sys_enter/sys_exit: %s\n",
			strerror(-err));
		goto out;
	}
	fprintf(stderr, "jw_bench_tp_floor: attached to raw_tp sys_enter and sys_exit; ready\n");
	hold();
out:
	tp_floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
