// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/object.h"
#include "base/log.h"
#include "process/target.h"

/*
 * The compatible build's skeleton is included for its object's bytes alone: it is opened
 * through the full build's skeleton, whose layout it shares (scripts/skel-same.sh checks it).
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "jankwatch_compat.skel.h"
#pragma GCC diagnostic pop

struct jankwatch_bpf *jw_object_open(const struct jw_kernel_plan *plan, const char *btf_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	struct jankwatch_bpf *skel = calloc(1, sizeof(*skel));
	int err;

	if (!skel)
		return NULL;
	err = jankwatch_bpf__create_skeleton(skel);
	if (!err && plan->compat)
		skel->skeleton->data = (void *)jankwatch_compat_bpf__elf_bytes(&skel->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(skel->skeleton, &opts);
	if (err) {
		jankwatch_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/*
 * A kernel without attach cookies: the dispatch probe at @offset of @path in process @pid gets
 * @cookie by its address there (probe_cookies); a return probe, at no address of its own, runs
 * dispatch_return, which needs none. The wait probes need none either (wait_cookie()).
 */
int jw_object_cookie_by_address(struct jw_attach *a, struct bpf_program **prog, pid_t pid,
				const char *path, uint64_t offset, bool retprobe, uint64_t cookie)
{
	struct jw_probe_addr key = { .pid = (__u32)pid };
	uint64_t addr = 0;
	int err;

	if (*prog == a->skel->progs.dispatch_exit && retprobe)
		*prog = a->skel->progs.dispatch_return;
	if (*prog != a->skel->progs.dispatch_enter && *prog != a->skel->progs.dispatch_exit)
		return 0;
	err = jw_target_file_vaddr(pid, path, offset, &addr);
	key.addr = addr;
	if (err) {
		jw_log(JW_LOG_ERROR, "cannot find where process %d runs %s at offset 0x%llx: %s",
		       pid, path, (unsigned long long)offset, strerror(-err));
		return err;
	}
	if (bpf_map__update_elem(a->skel->maps.probe_cookies, &key, sizeof(key), &cookie,
				 sizeof(cookie), 0)) {
		err = -errno;
		jw_log(JW_LOG_ERROR, "cannot register the probe at 0x%llx of process %d: %s",
		       (unsigned long long)key.addr, pid, strerror(-err));
		return err;
	}
	return 0;
}

void jw_object_forget_cookies(struct jw_attach *a, pid_t pid, uint32_t slot)
{
	struct jw_probe_addr key, next, *prev = NULL;
	int fd = bpf_map__fd(a->skel->maps.probe_cookies);
	uint64_t cookie;

	if (a->plan.cookies || !a->plan.compat)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		/* Not those of the program it execs, watched in another slot already. */
		if (next.pid == (__u32)pid && !bpf_map_lookup_elem(fd, &next, &cookie) &&
		    cookie >> JW_COOKIE_SLOT_SHIFT == slot + 1) {
			/* Deleted: the walk goes on from the key before it (or from the start). */
			bpf_map_delete_elem(fd, &next);
			continue;
		}
		key = next;
		prev = &key;
	}
}
