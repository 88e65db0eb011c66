// SPDX-License-Identifier: GPL-2.0-only
/*
 * jw_bench_floor [--clock] PID BINARY SYMBOL: attaches floor.bpf.c's empty uprobe and uretprobe
 * (with --clock, each reading the clock once) to BINARY:SYMBOL in process PID, says "ready" on
 * stderr, and holds them until SIGINT or SIGTERM.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "floor.skel.h"
#include "hold.h"

static int parse_pid(const char *arg, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

/* Returns 0 on success, -errno on failure; on success *link holds the new link. */
static int attach_one(struct bpf_program *prog, pid_t pid, const char *bin, const char *sym,
		      bool retprobe, struct bpf_link **link)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = sym, .retprobe = retprobe);
	int err;

	*link = bpf_program__attach_uprobe_opts(prog, pid, bin, 0, &opts);
	if (*link)
		return 0;
	err = -errno;
	fprintf(stderr, "jw_bench_floor: cannot attach %s to %s:%s (pid %d): %s\n",
		retprobe ? "uretprobe" : "uprobe", bin, sym, pid, strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	bool clock = argc == 5 && !strcmp(argv[1], "--clock");
	pid_t pid;
	int err;

	if (clock) {
		argv++;
		argc--;
	}
	if (argc != 4 || parse_pid(argv[1], &pid)) {
		fprintf(stderr, "usage: %s [--clock] PID BINARY SYMBOL\n", argv[0]);
		return 2;
	}
	err = hold_init("jw_bench_floor");
	if (err) {
		fprintf(stderr, "jw_bench_floor: cannot install signal handlers: %s\n",
			strerror(-err));
		return 1;
	}
	skel = floor_bpf__open();
	if (skel) {
		skel->rodata->read_clock = clock;
		if (floor_bpf__load(skel)) {
			floor_bpf__destroy(skel);
			skel = NULL;
		}
	}
	if (!skel) {
		fprintf(stderr, "jw_bench_floor: cannot load floor.bpf.o: %s\n", strerror(errno));
		return 1;
	}
	err = attach_one(skel->progs.floor_enter, pid, argv[2], argv[3], false,
			 &skel->links.floor_enter);
	if (!err)
		err = attach_one(skel->progs.floor_exit, pid, argv[2], argv[3], true,
				 &skel->links.floor_exit);
	if (err)
		goto out;
	fprintf(stderr, "jw_bench_floor: attached to %s:%s (pid %d); ready\n", argv[2], argv[3],
		pid);
	hold();
out:
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
