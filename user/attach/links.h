/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The links that hold jankwatch's programs on: libbpf's, and the uprobe sessions libbpf 1.1
 * cannot make (BPF_TRACE_UPROBE_SESSION, 6.13: a function's entry and return run one program,
 * as one consumer of the kernel's breakpoint), made here with the bpf() system call itself.
 */
#ifndef JW_LINKS_H
#define JW_LINKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The attach type of a uprobe session: the kernel's ABI, which no header here names yet. */
#define JW_UPROBE_SESSION 57

struct bpf_link;

/* A link: libbpf's (@bpf), else a link's file descriptor (@fd), or neither (both NULL / -1). */
struct jw_link {
	struct bpf_link *bpf;
	int fd;
};

/* libbpf's link @link as a jw_link. */
static inline struct jw_link jw_link_of(struct bpf_link *link)
{
	return (struct jw_link){ .bpf = link, .fd = -1 };
}

/* A link's file descriptor @fd (jw_link_uprobe_session()'s) as a jw_link. */
static inline struct jw_link jw_link_fd(int fd)
{
	return (struct jw_link){ .bpf = NULL, .fd = fd };
}

/* Detaches and frees @link (both kinds; neither is nothing). */
void jw_link_destroy(struct jw_link link);

/* The most links jw_links_destroy_together() detaches at once. */
#define JW_LINKS_TOGETHER 16

/*
 * Detaches and frees @links[0..@n) at once, a thread each, and empties them: a tracepoint's
 * link waits for an RCU grace period as it goes (~70 ms in a VM), which links going together
 * share. Returns when all are gone.
 */
void jw_links_destroy_together(struct jw_link *links, size_t n);

/*
 * Program @prog_fd, loaded with the attach type JW_UPROBE_SESSION, on @path at file offset
 * @offset in process @pid alone, run at the function's entry and its return with @cookie as its
 * attach cookie. The link's file descriptor, or -errno.
 */
int jw_link_uprobe_session(int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			   pid_t pid);

#endif
