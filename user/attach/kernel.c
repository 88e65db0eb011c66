// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "arch/arch.h"
#include "attach/kernel.h"
#include "attach/links.h"
#include "attach/sysevents.h"
#include "base/log.h"

/* A facility, and how to tell whether the running kernel has it. */
struct fact {
	const char *key;	/* JW_KERNEL_HIDE's name */
	const char *name;
	const char *since;
	/* @vmlinux: the kernel's BTF, loaded once for every probe (NULL where it has none) */
	int (*probe)(const struct btf *vmlinux, int id);
	int id;			/* the probe's argument: a helper or map type */
};

static int has_helper(const struct btf *vmlinux, int id)
{
	(void)vmlinux;
	/* kprobe programs have every tracing helper the object's programs call. */
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, id, NULL);
}

static int has_map(const struct btf *vmlinux, int id)
{
	(void)vmlinux;
	return libbpf_probe_bpf_map_type(id, NULL);
}

static int has_btf(const struct btf *vmlinux, int id)
{
	(void)vmlinux;
	(void)id;
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

/*
 * Uprobe sessions: the attach type BPF_TRACE_UPROBE_SESSION (JW_UPROBE_SESSION) and the run
 * context dispatch_session reads (its cookie, whether it is the return), in the kernel's BTF.
 */
static int has_uprobe_session(const struct btf *btf, int id)
{
	const struct btf_enum *e;
	const struct btf_type *t;
	int found = 0;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	e = t ? btf_enum(t) : NULL;
	for (int i = 0; t && i < btf_vlen(t) && !found; i++, e++)
		found = !strcmp(btf__name_by_offset(btf, e->name_off),
				"BPF_TRACE_UPROBE_SESSION") && e->val == JW_UPROBE_SESSION;
	return found && btf__find_by_name_kind(btf, "bpf_uprobe_multi_run_ctx",
					       BTF_KIND_STRUCT) > 0 &&
		btf__find_by_name_kind(btf, "bpf_session_run_ctx", BTF_KIND_STRUCT) > 0;
}

/*
 * A probe's cookie read from the run context the kernel sets up for it (probe_cookie() in the
 * BPF object): the kernel's BTF has the kfunc bpf_rdonly_cast (6.2) and a bpf_trace_run_ctx with
 * a bpf_cookie. Without it the probes call bpf_get_attach_cookie().
 */
static int has_run_ctx_cookie(const struct btf *btf, int id)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int found = 0;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, "bpf_trace_run_ctx", BTF_KIND_STRUCT);
	if (id <= 0 || btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) <= 0)
		return 0;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t) && !found; i++, m++)
		found = !strcmp(btf__name_by_offset(btf, m->name_off), "bpf_cookie");
	return found;
}

/*
 * The system calls' own tracepoints (syscalls:sys_enter_NAME, CONFIG_FTRACE_SYSCALLS): the
 * kernel's BTF has their metadata, or the function that runs a program on them. Otherwise
 * unknown, never missing: a BTF of older pahole leaves out kernel/trace/'s functions (5.10's),
 * and tracefs says for sure when they are read (attach/sysevents.h); JW_KERNEL_HIDE hides them.
 */
static int has_syscall_events(const struct btf *btf, int id)
{
	(void)id;
	if (btf && (btf__find_by_name_kind(btf, "syscall_metadata", BTF_KIND_STRUCT) > 0 ||
		    btf__find_by_name_kind(btf, "perf_syscall_enter", BTF_KIND_FUNC) > 0))
		return 1;
	return -ENOENT;
}

/*
 * BPF trampolines: an fexit program on one of the wait system calls' functions (the first of
 * this architecture's the kernel's BTF has) loads. Not attached: that costs the kernel an RCU
 * grace period to undo at every start; a kernel that loads one and cannot attach it (no
 * trampolines on its architecture) is found where syscall mode attaches them, which then takes
 * the tracepoints (attach/wait_tp.h). This machine's kind of refusal (EPERM) is at the load.
 */
static int has_fexit(const struct btf *btf, int id)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	char name[64];
	int fd;

	id = -1;
	for (size_t i = 0; btf && i < JW_WAIT_SYSCALLS && id <= 0; i++) {
		if (!jw_sysevents_on_arch(i))
			continue;
		snprintf(name, sizeof(name), "%s%s", jw_arch_syscall_prefix(),
			 jw_sysevents_name(i));
		id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	}
	if (id <= 0)
		return 0;
	opts.attach_btf_id = (__u32)id;
	/* No name: with one, libbpf asks the kernel whether it takes names, by a bpf() call
	 * sized to the command that valgrind's model reads past. */
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static const struct fact facts[JW_KF_COUNT] = {
	[JW_KF_RINGBUF] = { "ringbuf", "BPF ring buffer maps", "5.8", has_map, BPF_MAP_TYPE_RINGBUF },
	[JW_KF_BTF] = { "btf", "BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)", "5.5", has_btf, 0 },
	[JW_KF_TASK_STORAGE] = { "task_storage", "BPF task storage for tracing programs", "5.11",
				 has_helper, BPF_FUNC_task_storage_get },
	[JW_KF_TASK_BTF] = { "task_btf", "BPF helper bpf_get_current_task_btf", "5.11", has_helper,
			     BPF_FUNC_get_current_task_btf },
	[JW_KF_TASK_PT_REGS] = { "task_pt_regs", "BPF helper bpf_task_pt_regs", "5.15", has_helper,
				 BPF_FUNC_task_pt_regs },
	[JW_KF_ATTACH_COOKIE] = { "attach_cookie", "BPF helper bpf_get_attach_cookie", "5.15",
				  has_helper, BPF_FUNC_get_attach_cookie },
	[JW_KF_FIND_VMA] = { "find_vma", "BPF helper bpf_find_vma", "5.17", has_helper,
			     BPF_FUNC_find_vma },
	[JW_KF_LOOP] = { "loop", "BPF helper bpf_loop", "5.17", has_helper, BPF_FUNC_loop },
	[JW_KF_RUN_CTX_COOKIE] = { "run_ctx_cookie", "a probe's cookie in its run context "
				   "(bpf_rdonly_cast)", "6.2", has_run_ctx_cookie, 0 },
	[JW_KF_UPROBE_SESSION] = { "uprobe_session", "uprobe sessions (BPF_TRACE_UPROBE_SESSION)",
				   "6.13", has_uprobe_session, 0 },
	[JW_KF_SYSCALL_EVENTS] = { "syscall_events", "a program on one system call's tracepoints "
				   "(CONFIG_FTRACE_SYSCALLS)", "4.14", has_syscall_events, 0 },
	[JW_KF_FEXIT] = { "fexit", "BPF trampolines (fexit programs on kernel functions)", "5.5",
			  has_fexit, 0 },
};

const char *jw_kernel_fact_name(enum jw_kernel_fact fact)
{
	return fact < JW_KF_COUNT ? facts[fact].name : "?";
}

const char *jw_kernel_fact_key(enum jw_kernel_fact fact)
{
	return fact < JW_KF_COUNT ? facts[fact].key : "?";
}

const char *jw_kernel_fact_since(enum jw_kernel_fact fact)
{
	return fact < JW_KF_COUNT ? facts[fact].since : "?";
}

/* Marks the facts named in comma-separated @hide missing. */
static int hide_facts(struct jw_kernel_facts *f, const char *hide, char *err, size_t len)
{
	const char *p = hide;

	while (p && *p) {
		size_t n = strcspn(p, ","), k;

		for (k = 0; k < JW_KF_COUNT; k++)
			if (strlen(facts[k].key) == n && !strncmp(p, facts[k].key, n))
				break;
		if (n && k == JW_KF_COUNT) {
			jw_set_err(err, len, "JW_KERNEL_HIDE: no kernel facility '%.*s'", (int)n, p);
			return -EINVAL;
		}
		if (n)
			f->has[k] = 0;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

int jw_kernel_probe(struct jw_kernel_facts *f, const char *hide, char *err, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct utsname u;
	size_t k;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	snprintf(f->release, sizeof(f->release), "%s", u.release);
	for (k = 0; k < JW_KF_COUNT; k++)
		f->has[k] = facts[k].probe(vmlinux, facts[k].id);
	btf__free(vmlinux);
	return hide_facts(f, hide, err, len);
}

/* What the full build needs that the compatible one stands in for. */
static const enum jw_kernel_fact full_only[] = {
	JW_KF_BTF, JW_KF_TASK_STORAGE, JW_KF_TASK_BTF, JW_KF_TASK_PT_REGS,
	JW_KF_ATTACH_COOKIE, JW_KF_FIND_VMA, JW_KF_LOOP,
};

int jw_kernel_plan_for(const struct jw_kernel_facts *f, bool btf_file,
		       struct jw_kernel_plan *plan, char *err, size_t len)
{
	size_t k, used = 0;

	memset(plan, 0, sizeof(*plan));
	if (!f->has[JW_KF_RINGBUF]) {
		jw_set_err(err, len, "this kernel (%s) lacks %s, which jankwatch needs: Linux %s or "
			   "newer has it", f->release, facts[JW_KF_RINGBUF].name,
			   facts[JW_KF_RINGBUF].since);
		return -EOPNOTSUPP;
	}
	if (!f->has[JW_KF_BTF] && !btf_file) {
		jw_set_err(err, len, "this kernel (%s) has no BTF of its own (CONFIG_DEBUG_INFO_BTF): "
			   "give jankwatch one with --btf FILE (scripts/make-btf.sh makes it)",
			   f->release);
		return -EOPNOTSUPP;
	}
	plan->btf_file = btf_file;
	plan->cookies = f->has[JW_KF_ATTACH_COOKIE] != 0;
	for (k = 0; k < sizeof(full_only) / sizeof(full_only[0]); k++) {
		enum jw_kernel_fact which = full_only[k];

		if (f->has[which])
			continue;
		plan->compat = true;
		/* Not a release's: the kernel's own BTF is its configuration's. */
		used += snprintf(plan->lacks + used, used < sizeof(plan->lacks) ?
				 sizeof(plan->lacks) - used : 0, which == JW_KF_BTF ? "%s%s" :
				 "%s%s (%s)", used ? ", " : "", facts[which].name, facts[which].since);
		if (used >= sizeof(plan->lacks))
			used = sizeof(plan->lacks);
	}
	/* Only where it is known: a session that failed to attach would leave no probe. */
	plan->session = !plan->compat && plan->cookies && f->has[JW_KF_UPROBE_SESSION] > 0;
	/* The compatible build reads no run context; an unknown answer takes the helper. */
	plan->run_ctx_cookie = !plan->compat && plan->cookies && f->has[JW_KF_RUN_CTX_COOKIE] > 0;
	/* Either build; an unknown answer tries them, and raw_syscalls when tracefs has none. */
	plan->syscall_events = f->has[JW_KF_SYSCALL_EVENTS] != 0;
	/* The wait system calls' returns on fexit, where one loads: either build, the kernel's BTF. */
	plan->fexit = !btf_file && f->has[JW_KF_FEXIT] > 0;
	return 0;
}

/* What a directory search is after, and what it found: nftw() takes no argument of its own. */
static struct {
	const char *name;	/* "<release>.btf" */
	const char *arch;	/* "/x86_64/" */
	char *out;
	size_t len;
	int found;		/* 1: a file of another architecture's directory, 2: of this one's */
} search;

static int search_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int score;

	(void)st;
	if (type != FTW_F || ftw->level > 6 || strcmp(path + ftw->base, search.name))
		return 0;
	score = strstr(path, search.arch) ? 2 : 1;
	if (score > search.found) {
		snprintf(search.out, search.len, "%s", path);
		search.found = score;
	}
	return score == 2;	/* this architecture's: done */
}

/* Searches @dir for the BTF file of kernel @release; 1 with it in @out, 0 if none. */
static int search_dir(const char *dir, const char *release, char *out, size_t len)
{
	char name[96];
	struct utsname u;

	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "unknown");
	snprintf(name, sizeof(name), "%s.btf", release);
	search.name = name;
	/* BTFHub names arm64 so, as Debian does; the kernel says aarch64. */
	search.arch = !strcmp(u.machine, "aarch64") ? "/arm64/" : !strcmp(u.machine, "x86_64") ?
		      "/x86_64/" : "/?/";
	search.out = out;
	search.len = len;
	search.found = 0;
	nftw(dir, search_visit, 16, FTW_PHYS);
	return search.found ? 1 : 0;
}

int jw_kernel_btf_file(const char *given, const struct jw_kernel_facts *facts, char *out,
		       size_t len, char *err, size_t errlen)
{
	const char *dir = given;
	struct stat st;
	struct btf *btf;
	int err_no;

	if (!given) {
		if (facts->has[JW_KF_BTF] || stat(JW_BTF_DIR, &st))
			return 0;
		dir = JW_BTF_DIR;
	} else if (stat(given, &st)) {
		err_no = errno;
		jw_set_err(err, errlen, "--btf %s: %s", given, strerror(err_no));
		return -err_no;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!search_dir(dir, facts->release, out, len)) {
			if (!given)
				return 0;
			jw_set_err(err, errlen, "--btf %s: no %s.btf in it (scripts/make-btf.sh "
				   "makes one)", given, facts->release);
			return -ENOENT;
		}
	} else {
		snprintf(out, len, "%s", given);
	}
	btf = btf__parse(out, NULL);
	err_no = libbpf_get_error(btf);
	if (err_no) {
		char why[128];

		libbpf_strerror(err_no, why, sizeof(why));
		jw_set_err(err, errlen, "--btf: %s is not a BTF file or an ELF file with BTF: %s", out,
			   why);
		return -EINVAL;
	}
	btf__free(btf);
	return 1;
}

uint32_t jw_kernel_thread_size(void)
{
	char line[256];
	bool kasan = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	while (f && !kasan && fgets(line, sizeof(line), f)) {
		const char *name = strrchr(line, ' ');

		kasan = name && !strcmp(name, " kasan_report\n");
	}
	if (f)
		fclose(f);
	return jw_arch_thread_size(sysconf(_SC_PAGESIZE), kasan);
}

/* The instructions of a program that looks up key 0 of map @fd and returns 0. */
static void lookup_prog(struct bpf_insn insn[8], int fd)
{
	const struct bpf_insn prog[8] = {
		/* r1 = the map */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = fd },
		{ 0 },
		/* *(u32 *)(r10 - 4) = 0; r2 = r10 - 4 */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	memcpy(insn, prog, sizeof(prog));
}

/* Whether program @fd, as the kernel rewrote it, still calls a helper; -1 if it does not say. */
static int still_calls(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), n;
	struct bpf_insn *insn;
	int calls = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.xlated_prog_len)
		return -1;
	n = info.xlated_prog_len / sizeof(*insn);
	insn = calloc(n, sizeof(*insn));
	if (!insn)
		return -1;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*insn);
	info.xlated_prog_insns = (__u64)(uintptr_t)insn;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		free(insn);
		return -1;
	}
	for (__u32 i = 0; i < n; i++)
		calls |= insn[i].code == (BPF_JMP | BPF_CALL);
	free(insn);
	return calls;
}

bool jw_kernel_inlines_percpu_lookup(void)
{
	struct bpf_insn insn[8];
	int map, prog, calls;

	map = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, sizeof(__u32), sizeof(__u64), 1,
			     NULL);
	if (map < 0)
		return false;
	lookup_prog(insn, map);
	prog = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insn, 8, NULL);
	calls = prog < 0 ? -1 : still_calls(prog);
	if (prog >= 0)
		close(prog);
	close(map);
	return calls == 0;
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

int jw_kernel_plan_here(const char *btf_given, struct jw_kernel_facts *facts,
			struct jw_kernel_plan *plan, char *btf_path, size_t len, char *err,
			size_t errlen)
{
	int ret, btf;

	btf_path[0] = '\0';
	ret = jw_kernel_probe(facts, getenv("JW_KERNEL_HIDE"), err, errlen);
	if (ret)
		return ret;
	btf = jw_kernel_btf_file(btf_given, facts, btf_path, len, err, errlen);
	if (btf < 0)
		return btf;
	if (!btf)
		btf_path[0] = '\0';
	return jw_kernel_plan_for(facts, btf > 0, plan, err, errlen);
}
