// SPDX-License-Identifier: GPL-2.0-only
/* The capabilities a monitor runs with (see caps.h). */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/caps.h"
#include "base/log.h"

int jw_caps_own(struct jw_capset *out)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	FILE *f;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	out->effective = (uint64_t)data[1].effective << 32 | data[0].effective;
	out->last_cap = JW_CAP_BPF;
	f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f) {
		if (fscanf(f, "%d", &out->last_cap) != 1)
			out->last_cap = JW_CAP_BPF;
		fclose(f);
	}
	return 0;
}

bool jw_caps_enough(const struct jw_capset *c, bool uprobes_allowed, char *err, size_t errlen)
{
	bool admin = jw_caps_has(c, JW_CAP_SYS_ADMIN);
	const char *missing[3];
	size_t n = 0;

	/* Before 5.8 the kernel had neither CAP_BPF nor CAP_PERFMON: CAP_SYS_ADMIN held both. */
	if (c->last_cap < JW_CAP_BPF && !admin) {
		jw_set_err(err, errlen, "needs root or CAP_SYS_ADMIN (this kernel has no CAP_BPF "
			   "nor CAP_PERFMON)");
		return false;
	}
	if (!admin && !jw_caps_has(c, JW_CAP_BPF))
		missing[n++] = "CAP_BPF";
	if (!admin && !jw_caps_has(c, JW_CAP_PERFMON))
		missing[n++] = "CAP_PERFMON";
	if (!admin && !uprobes_allowed)
		missing[n++] = "CAP_SYS_ADMIN";
	if (!n)
		return true;
	jw_set_err(err, errlen, "needs root or the capabilities CAP_BPF and CAP_PERFMON%s; "
		   "missing: %s%s%s%s%s", uprobes_allowed ? "" :
		   ", and CAP_SYS_ADMIN for this kernel's uprobes", missing[0],
		   n > 1 ? ", " : "", n > 1 ? missing[1] : "", n > 2 ? ", " : "",
		   n > 2 ? missing[2] : "");
	return false;
}

void jw_caps_for_other_user(const struct jw_capset *c, char *out, size_t len)
{
	bool ptrace = jw_caps_has(c, JW_CAP_SYS_PTRACE);
	bool dac = jw_caps_has(c, JW_CAP_DAC_READ_SEARCH) || jw_caps_has(c, JW_CAP_DAC_OVERRIDE);

	snprintf(out, len, "%s%s%s", ptrace ? "" : "CAP_SYS_PTRACE", !ptrace && !dac ? ", " : "",
		 dac ? "" : "CAP_DAC_READ_SEARCH");
}
