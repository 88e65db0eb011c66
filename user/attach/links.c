// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/links.h"

/*
 * BPF_LINK_CREATE's attributes for a uprobe_multi link (6.6), which Debian 12's linux/bpf.h
 * predates: the command's common head, then its uprobe_multi member, at the kernel's offsets.
 */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16, "uprobe_multi.path");
_Static_assert(offsetof(struct uprobe_multi_attr, pid) == 56, "uprobe_multi.pid");

void jw_link_destroy(struct jw_link link)
{
	if (link.bpf)
		bpf_link__destroy(link.bpf);
	else if (link.fd >= 0)
		close(link.fd);
}

static void *destroy_one(void *link)
{
	jw_link_destroy(*(struct jw_link *)link);
	return NULL;
}

/* Whether @link holds something. */
static bool link_held(const struct jw_link *link)
{
	return link->bpf || link->fd >= 0;
}

void jw_links_destroy_together(struct jw_link *links, size_t n)
{
	pthread_t threads[JW_LINKS_TOGETHER];
	bool started[JW_LINKS_TOGETHER] = { false };
	size_t i, held = 0;

	for (i = 0; i < n; i++)
		held += link_held(&links[i]);
	for (i = 0; i < n; i++) {
		if (!link_held(&links[i]))
			continue;
		/* A thread each, where there are several and one can be had; else here. */
		if (i < JW_LINKS_TOGETHER && held > 1)
			started[i] = !pthread_create(&threads[i], NULL, destroy_one, &links[i]);
		if (i >= JW_LINKS_TOGETHER || !started[i])
			jw_link_destroy(links[i]);
	}
	for (i = 0; i < n && i < JW_LINKS_TOGETHER; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	for (i = 0; i < n; i++)
		links[i] = (struct jw_link){ .bpf = NULL, .fd = -1 };
}

int jw_link_uprobe_session(int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			   pid_t pid)
{
	unsigned long off = offset;
	__u64 cookies[1] = { cookie };
	struct uprobe_multi_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = JW_UPROBE_SESSION;
	attr.path = (__u64)(uintptr_t)path;
	attr.offsets = (__u64)(uintptr_t)&off;
	attr.cookies = (__u64)(uintptr_t)cookies;
	attr.cnt = 1;
	attr.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
