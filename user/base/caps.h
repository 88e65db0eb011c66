/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capabilities a monitor runs with: root, or a user given CAP_BPF and CAP_PERFMON (to load
 * tracing programs and open perf events on other threads) and CAP_SYS_ADMIN where the kernel
 * keeps uprobes to it (Linux 6.5 on, and the stable kernels before); CAP_SYS_PTRACE for another
 * user's processes, CAP_SYSLOG for the kernel's symbols.
 */
#ifndef JW_CAPS_H
#define JW_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The capability numbers of <linux/capability.h> jankwatch asks for. */
enum jw_cap {
	JW_CAP_DAC_OVERRIDE = 1,
	JW_CAP_DAC_READ_SEARCH = 2,
	JW_CAP_SYS_PTRACE = 19,
	JW_CAP_SYS_ADMIN = 21,
	JW_CAP_SYSLOG = 34,
	JW_CAP_PERFMON = 38,
	JW_CAP_BPF = 39,
};

/* A set of capabilities, bit N for capability N; and the highest the kernel knows. */
struct jw_capset {
	uint64_t effective;
	int last_cap;
};

/* This process's effective set, and /proc/sys/kernel/cap_last_cap. 0 or -errno. */
int jw_caps_own(struct jw_capset *out);

static inline bool jw_caps_has(const struct jw_capset *c, enum jw_cap cap)
{
	return c->effective >> cap & 1;
}

/*
 * Whether @c may run a monitor: CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN stands for both, and
 * is the only one a kernel older than 5.8 knows), and CAP_SYS_ADMIN too unless @uprobes_allowed
 * (jw_kernel_uprobes_allowed()). When not, @err names what is missing, in one line.
 */
bool jw_caps_enough(const struct jw_capset *c, bool uprobes_allowed, char *err, size_t errlen);

/*
 * What reading another user's process takes that @c lacks (ptrace's read access, and its
 * owner-only /proc files: auxv, mem): "" when nothing, else the names, ", "-joined, in @out.
 */
void jw_caps_for_other_user(const struct jw_capset *c, char *out, size_t len);

#endif
