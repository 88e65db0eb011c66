/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What jankwatch needs of the running kernel, checked before the BPF object is loaded: each
 * feature with the first Linux release that has it, so that an older kernel is refused in one
 * line naming the feature and that release rather than with a verifier log. Features with a
 * fallback are looked up here too.
 */
#ifndef JW_KERNEL_H
#define JW_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

struct jw_kernel_feature {
	const char *what;	/* "BPF helper bpf_find_vma" */
	const char *since;	/* "5.17": the first release that has it */
	/* 1: present, 0: absent, < 0: could not tell (taken as present: the load will say) */
	int (*probe)(const struct jw_kernel_feature *f);
	int id;			/* the probe's argument: a helper or map type */
};

/*
 * Checks @n features of @table in order. Returns 0, or -EOPNOTSUPP with @err (the running
 * kernel's release in @release) naming the first one missing.
 */
int jw_kernel_check_table(const struct jw_kernel_feature *table, size_t n, const char *release,
			  char *err, size_t len);

/* jw_kernel_check_table() on everything the BPF object uses, on this kernel. */
int jw_kernel_check(char *err, size_t len);

/*
 * Whether the probes can read their cookie from the run context the kernel sets up for them
 * (probe_cookie() in the BPF object): the kernel's BTF has the kfunc bpf_rdonly_cast (6.2) and
 * a bpf_trace_run_ctx with a bpf_cookie. Otherwise they call bpf_get_attach_cookie().
 */
bool jw_kernel_has_run_ctx_cookie(void);

/*
 * Whether this process may make uprobes: opens one on its own executable (at file offset 0,
 * which no code maps, so it never fires) and closes it. False only when the kernel refuses it
 * for lack of privilege: since Linux 6.5, and in the stable kernels before it, uprobes through
 * perf events take CAP_SYS_ADMIN, where CAP_PERFMON was enough.
 */
bool jw_kernel_uprobes_allowed(void);

#endif
