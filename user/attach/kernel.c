// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "attach/kernel.h"
#include "base/log.h"

static int has_helper(const struct jw_kernel_feature *f)
{
	/* kprobe programs have every tracing helper the object's programs call. */
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, f->id, NULL);
}

static int has_map(const struct jw_kernel_feature *f)
{
	return libbpf_probe_bpf_map_type(f->id, NULL);
}

static int has_btf(const struct jw_kernel_feature *f)
{
	(void)f;
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

/* In the order a kernel gained them: the first missing names the oldest release to move to. */
static const struct jw_kernel_feature needed[] = {
	{ "BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)", "5.5", has_btf, 0 },
	{ "BPF ring buffer maps", "5.8", has_map, BPF_MAP_TYPE_RINGBUF },
	{ "BPF task storage maps", "5.11", has_map, BPF_MAP_TYPE_TASK_STORAGE },
	{ "BPF helper bpf_get_current_task_btf", "5.11", has_helper,
	  BPF_FUNC_get_current_task_btf },
	{ "BPF helper bpf_task_pt_regs", "5.15", has_helper, BPF_FUNC_task_pt_regs },
	{ "BPF helper bpf_get_attach_cookie", "5.15", has_helper, BPF_FUNC_get_attach_cookie },
	{ "BPF helper bpf_find_vma", "5.17", has_helper, BPF_FUNC_find_vma },
	{ "BPF helper bpf_loop", "5.17", has_helper, BPF_FUNC_loop },
};

int jw_kernel_check_table(const struct jw_kernel_feature *table, size_t n, const char *release,
			  char *err, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (table[i].probe(&table[i]) == 0) {
			jw_set_err(err, len, "this kernel (%s) lacks %s, which jankwatch needs: "
				   "Linux %s or newer has it", release, table[i].what, table[i].since);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

int jw_kernel_check(char *err, size_t len)
{
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	return jw_kernel_check_table(needed, sizeof(needed) / sizeof(needed[0]), u.release, err,
				     len);
}

bool jw_kernel_has_run_ctx_cookie(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *m;
	const struct btf_type *t;
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "bpf_trace_run_ctx", BTF_KIND_STRUCT);
	if (id > 0 && btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t) && !found; i++, m++)
			found = !strcmp(btf__name_by_offset(btf, m->name_off), "bpf_cookie");
	}
	btf__free(btf);
	return found;
}

bool jw_kernel_uprobes_allowed(void)
{
	static const char self[] = "/proc/self/exe";
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type = -1, fd;
	FILE *f;

	f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (!f)
		return true;	/* no uprobe PMU: the attach says what is wrong */
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	if (type < 0)
		return true;
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)self;
	attr.config2 = 0;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno != EACCES && errno != EPERM;
}
