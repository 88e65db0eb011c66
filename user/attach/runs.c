// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runs of jankwatch's programs as the kernel keeps them: those it skipped, counted per
 * program, and at the run's end every program stopped and its runs under way waited for.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/object.h"

void jw_attach__misses(const struct jw_attach *a, struct jw_prog_misses *out)
{
	const size_t need = offsetof(struct bpf_prog_info, recursion_misses) +
			    sizeof(((struct bpf_prog_info *)0)->recursion_misses);
	struct bpf_program *prog;

	memset(out, 0, sizeof(*out));
	bpf_object__for_each_program(prog, a->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || out->n == JW_MAX_PROGS)
			continue;
		memset(&info, 0, sizeof(info));
		/* The kernel fills as much of the info as it knows: 5.10's ends before the count. */
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || len < need)
			continue;
		out->counted = true;
		snprintf(out->prog[out->n].name, sizeof(out->prog[0].name), "%s",
			 bpf_program__name(prog));
		out->prog[out->n].runs = info.recursion_misses;
		out->total += info.recursion_misses;
		out->n++;
	}
}

/*
 * Waits for every run of a BPF program under way to end. The kernel waits so before it returns
 * from an update of a map of maps (an RCU grace period: a program that does not sleep runs
 * inside a read side of one), so that user space knows no program still sees the old value:
 * one made for it, with one slot, updated once. 0 or -errno.
 */
static int wait_running_programs(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, outer = -1, key = 0, err;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "jw_sync_inner", 4, 4, 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "jw_sync", 4, 4, 1, &opts);
	err = outer < 0 || bpf_map_update_elem(outer, &key, &inner, BPF_ANY) ? -errno : 0;
	if (outer >= 0)
		close(outer);
	close(inner);
	return err;
}

int jw_attach__stop(struct jw_attach *a)
{
	/* Each program reads it first (in .bss, which the skeleton maps). */
	a->skel->bss->stopped = 1;
	return wait_running_programs();
}
