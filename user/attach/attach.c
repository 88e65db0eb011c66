// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/hookplan.h"
#include "attach/kernel.h"
#include "attach/object.h"
#include "jankwatch.skel.h"
#include "base/log.h"
#include "config/options.h"
#include "loops/placement.h"
#include "attach/reaper.h"

/*
 * Probes registered by address (compatible build, no attach cookies): 64 processes with 256
 * each (a preset's handler sites are most of them), preallocated: ~2 MiB.
 */
#define JW_MAX_PROBE_ADDRS 16384
/* The records' layout is a contract with the BPF object: catch any drift at compile time. */
_Static_assert(sizeof(struct jw_rec_hdr) == 24, "jw_rec_hdr layout");
_Static_assert(sizeof(struct jw_task_rec) == 696 && JW_TASK_REC_SIZE_V1 == 672 &&
	       JW_TASK_REC_SIZE_V2 == 680, "jw_task_rec layout");
_Static_assert(sizeof(struct jw_sample_rec) == 2120, "jw_sample_rec layout");
_Static_assert(sizeof(struct jw_stats_key) == 40, "jw_stats_key layout");
_Static_assert(sizeof(struct jw_stats_val) == 624, "jw_stats_val layout");
_Static_assert(sizeof(struct jw_watch) == 8, "jw_watch layout");
_Static_assert(sizeof(struct jw_proc_rec) == 56, "jw_proc_rec layout");
_Static_assert(sizeof(struct jw_sched_rec) == 88, "jw_sched_rec layout");
_Static_assert(sizeof(struct jw_slice_rec) == 80, "jw_slice_rec layout");
_Static_assert(sizeof(struct jw_arg_chain) == 156, "jw_arg_chain layout");
_Static_assert(sizeof(struct jw_py_frame) == 16, "jw_py_frame layout");
_Static_assert((int)JW_UNWIND_MODE_AUTO == (int)JW_UNWIND_AUTO &&
		       (int)JW_UNWIND_MODE_FP == (int)JW_UNWIND_FP &&
		       (int)JW_UNWIND_MODE_DWARF == (int)JW_UNWIND_DWARF,
	       "--unwind choices are the ABI's modes");

/*
 * Whether a refused map may be the memory-lock limit's doing: a kernel before 5.11 (no memory
 * cgroup accounting for BPF) and a limit short of unlimited, which libbpf could not raise.
 */
static bool memlock_counts(void)
{
	struct rlimit rl;
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2 ||
	    getrlimit(RLIMIT_MEMLOCK, &rl))
		return false;
	return (major < 5 || (major == 5 && minor < 11)) && rl.rlim_cur != RLIM_INFINITY;
}

/* libbpf's messages (the verifier's log among them) are shown with -v, as libbpf writes them. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (jw_log_level() < JW_LOG_DEBUG || level == LIBBPF_DEBUG)
		return 0;
	fputs("jankwatch: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

int jw_attach_keep_link(struct jw_attach *a, struct jw_link link, pid_t pid, bool at_once,
			enum jw_link_role role)
{
	if (a->n_links == a->cap_links) {
		size_t cap = a->cap_links ? 2 * a->cap_links : 16;
		struct owned_link *links = realloc(a->links, cap * sizeof(*links));

		if (!links) {
			jw_link_destroy(link);
			return -ENOMEM;
		}
		a->links = links;
		a->cap_links = cap;
	}
	a->links[a->n_links++] = (struct owned_link){ link, pid, at_once, role };
	return 0;
}

/* Slot @slot's state becomes thread @tid's of process @pid (0: nobody's), with no task open. */
static int reset_state(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot, bool first_wait)
{
	struct jw_task_state st = { .tid = tid, .pid = pid, .slot = slot, .first_wait = first_wait };
	struct jw_code_range none = { 0 };
	__u32 not_ready = 0;

	if (bpf_map__update_elem(a->skel->maps.probes_ready, &slot, sizeof(slot), &not_ready,
				 sizeof(not_ready), 0) ||
	    bpf_map__update_elem(a->skel->maps.site_ranges, &slot, sizeof(slot), &none,
				 sizeof(none), 0))
		return -errno;

	if (bpf_map__update_elem(a->skel->maps.thread_state, &slot, sizeof(slot), &st, sizeof(st),
				 0))
		return -errno;
	return 0;
}

/*
 * Thread @tid in slot @slot goes into the tid index, or, when another watched thread holds its
 * bucket, is counted among those the BPF programs must look for in task storage.
 */
static int index_thread(struct jw_attach *a, pid_t tid, uint32_t slot)
{
	uint32_t bucket = jw_tid_bucket((uint32_t)tid), value = slot + 1;

	if (a->bucket_tid[bucket]) {
		a->unindexed[slot] = 1;
		a->skel->bss->tid_unindexed++;
		return 0;
	}
	if (bpf_map__update_elem(a->skel->maps.tid_index, &bucket, sizeof(bucket), &value,
				 sizeof(value), 0))
		return -errno;
	a->bucket_tid[bucket] = tid;
	return 0;
}

/* Thread @tid of slot @slot leaves the tid index (or the count of those outside it). */
static void unindex_thread(struct jw_attach *a, pid_t tid, uint32_t slot)
{
	uint32_t bucket = jw_tid_bucket((uint32_t)tid), zero = 0;

	if (a->unindexed[slot]) {
		a->unindexed[slot] = 0;
		a->skel->bss->tid_unindexed--;
	} else if (a->bucket_tid[bucket] == tid) {
		bpf_map__update_elem(a->skel->maps.tid_index, &bucket, sizeof(bucket), &zero,
				     sizeof(zero), 0);
		a->bucket_tid[bucket] = 0;
	}
}

void jw_attach__forget(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot)
{
	__u32 key = tid;
	size_t i, kept = 0;

	/* Its probes and sampler go in the background; the slot waits for them (reaper.h). */
	for (i = 0; i < a->n_links; i++) {
		if (a->links[i].pid != pid)
			a->links[kept++] = a->links[i];
		else if (a->links[i].at_once)
			jw_link_destroy(a->links[i].link);
		else
			jw_reaper__add(a->reaper, a->links[i].link, slot);
	}
	jw_log(JW_LOG_DEBUG, "pid %d: %zu probes and samplers to detach", pid, a->n_links - kept);
	a->n_links = kept;
	jw_object_forget_cookies(a, pid, slot);
	bpf_map__delete_elem(a->skel->maps.watched, &key, sizeof(key), 0);
	/* Its switch event, held by the map too. */
	if (a->thread_switches && slot < a->n_slots)
		bpf_map__delete_elem(a->skel->maps.switch_events, &slot, sizeof(slot), 0);
	if (slot < a->n_slots)
		unindex_thread(a, tid, slot);
	/* A task it has open would never end (its probes are gone): dropped with the state. */
	reset_state(a, 0, 0, slot, false);
}

struct jw_attach *jw_attach__open(const struct jw_attach_opts *opts)
{
	uint32_t threads = opts->max_threads ? opts->max_threads : 1;
	struct jw_kernel_facts facts;
	struct jw_kernel_plan plan;
	char why[384], btf_path[PATH_MAX];
	struct jw_attach *a;
	int err, btf = 0;
	size_t i;

	libbpf_set_print(libbpf_print);
	err = jw_kernel_plan_here(opts->btf_path, &facts, &plan, btf_path, sizeof(btf_path), why,
				  sizeof(why));
	btf = btf_path[0] != '\0';
	if (err) {
		jw_log(JW_LOG_ERROR, "%s", why);
		errno = -err;
		return NULL;
	}
	if (plan.compat)
		jw_log(JW_LOG_INFO, "this kernel (%s) lacks %s: jankwatch runs its compatible "
		       "programs%s", facts.release, plan.lacks,
		       plan.cookies ? "" : ", its probes' cookies found by address");
	if (btf > 0)
		jw_log(JW_LOG_INFO, "BTF of this kernel from %s%s", btf_path,
		       facts.has[JW_KF_BTF] ? "" : " (it has none of its own)");
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->plan = plan;
	/* No link yet: a zeroed one would name file descriptor 0. */
	for (i = 0; i < JW_WAIT_TP_LINKS; i++)
		a->trial[i] = a->wait_tp[i] = jw_link_of(NULL);
	a->n_slots = threads;
	a->unindexed = calloc(threads, 1);
	/* A tag per slot, and one for the session's own links (syscall mode's tracepoints). */
	a->reaper = jw_reaper__new(threads + 1);
	if (!a->unindexed || !a->reaper) {
		jw_reaper__free(a->reaper);
		free(a->unindexed);
		free(a);
		return NULL;
	}
	a->skel = jw_object_open(&plan, btf > 0 ? btf_path : NULL);
	if (!a->skel) {
		err = -errno;
		jw_log(JW_LOG_ERROR, "cannot open the BPF object: %s", strerror(-err));
		goto err_free;
	}
	/*
	 * The statistics rows; per watched thread its state, its outermost rows and one block
	 * stack.
	 */
	err = bpf_map__set_max_entries(a->skel->maps.stats,
				       opts->stats_entries ? opts->stats_entries : 1);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.stats_outer, threads * JW_MAX_PROBES);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.blocks, threads);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.thread_state, threads);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.probes_ready, threads);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.site_ranges, threads);
	if (!err)
		err = bpf_map__set_max_entries(a->skel->maps.switch_events, threads);
	if (!err && plan.compat && !plan.cookies)
		err = bpf_map__set_max_entries(a->skel->maps.probe_cookies, JW_MAX_PROBE_ADDRS);
	if (err) {
		jw_log(JW_LOG_ERROR, "cannot size the per-thread maps: %s", strerror(-err));
		goto err_destroy;
	}
	a->skel->rodata->sample_period_ns = opts->sample_period_ns;
	a->skel->data->report_min_ns = opts->report_min_ns;
	a->skel->data->stats_every = opts->stats_every ? opts->stats_every : 1;
	a->skel->rodata->wait_probe_id = opts->wait_probe_id;
	a->skel->rodata->unwind_mode = opts->unwind_mode;
	a->skel->rodata->stack_bytes = opts->unwind_mode == JW_UNWIND_FP ? 0 : opts->stack_bytes;
	a->skel->rodata->has_attach_cookie = plan.cookies;
	a->thread_switches = jw_kernel_plan_thread_switches(&plan, opts->thread_switches);
	if (opts->thread_switches && opts->thread_switches_given && !a->thread_switches)
		jw_log(JW_LOG_WARN, "sched_hooks=1: the compatible programs keep the watched "
		       "threads' switches on sched_switch");
	a->skel->rodata->thread_switches = a->thread_switches;
	/* Return probes run it only where the kernel has no attach cookies. */
	bpf_program__set_autoload(a->skel->progs.dispatch_return, !plan.cookies);
	if (!plan.compat) {
		bpf_program__set_expected_attach_type(a->skel->progs.dispatch_session,
						      JW_UPROBE_SESSION);
		bpf_program__set_expected_attach_type(a->skel->progs.wait_session,
						      JW_UPROBE_SESSION);
	}
	bpf_program__set_autoload(a->skel->progs.dispatch_session, plan.session);
	bpf_program__set_autoload(a->skel->progs.wait_session, plan.session);
	jw_wait_tp_prepare(a);
	if (plan.compat)
		a->skel->rodata->thread_size = jw_kernel_thread_size();
	a->skel->rodata->cookie_in_run_ctx = plan.run_ctx_cookie;
	/* The probes keep their task in task_cache only where that costs less than the helper. */
	a->skel->rodata->task_cache_kept = a->skel->rodata->cookie_in_run_ctx &&
					   jw_kernel_inlines_percpu_lookup();
	jw_log(JW_LOG_DEBUG, "probes read their cookie %s, their task %s; a function's entry and "
	       "return %s", !plan.cookies ? "from probe_cookies, by their address" :
	       a->skel->rodata->cookie_in_run_ctx ? "from the kernel's run context" :
						    "with bpf_get_attach_cookie()",
	       a->skel->rodata->task_cache_kept ? "from task_cache" : "from a helper",
	       plan.session ? "are one uprobe session" : "a uprobe and a return probe");
	err = jankwatch_bpf__load(a->skel);
	if (err) {
		jw_log(JW_LOG_ERROR, "cannot load the %sBPF programs: %s%s",
		       plan.compat ? "compatible " : "", strerror(-err),
		       err != -EPERM ? " (-v for details)" :
		       memlock_counts() ? " (kernels before 5.11 count BPF maps against the "
					  "memory-lock limit: ulimit -l unlimited, or "
					  "LimitMEMLOCK=infinity in a unit)" :
					  " (needs root: CAP_BPF and CAP_PERFMON)");
		goto err_destroy;
	}
	return a;

err_destroy:
	jankwatch_bpf__destroy(a->skel);
err_free:
	jw_reaper__free(a->reaper);
	free(a->unindexed);
	free(a);
	errno = -err;
	return NULL;
}

int jw_attach__watch_thread(struct jw_attach *a, pid_t pid, pid_t tid, uint32_t slot,
			    bool first_wait)
{
	struct jw_watch w = { .pid = pid, .slot = slot };
	__u32 key = tid;
	int err;

	if (slot >= a->n_slots)
		return -EINVAL;
	jw_attach_retire_outer_rows(a, slot);
	err = reset_state(a, pid, tid, slot, first_wait);
	if (err)
		return err;
	if (bpf_map__update_elem(a->skel->maps.watched, &key, sizeof(key), &w, sizeof(w), 0))
		return -errno;
	return index_thread(a, tid, slot);
}

/* Hook @h (a uprobe or a return probe, placed: hookplan.h) running @prog in process @pid. */
static int attach_uprobe(struct jw_attach *a, struct bpf_program *prog, pid_t pid,
			 const struct jw_hook *h, enum jw_link_role role, uint64_t cookie)
{
	bool retprobe = h->kind == JW_HOOK_RETURN;
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie);
	const char *kind = jw_hook_kind_name(h->kind);
	struct bpf_link *link;
	int err;

	jw_log(JW_LOG_DEBUG, "%s on %s:%s: %s", kind, h->path, h->name, h->why);
	if (!a->plan.cookies) {
		opts.bpf_cookie = 0;
		err = jw_object_cookie_by_address(a, &prog, pid, h->path, h->offset, retprobe,
						  cookie);
		if (err)
			return err;
	}
	link = bpf_program__attach_uprobe_opts(prog, pid, h->path, h->offset, &opts);
	if (!link) {
		err = -errno;
		jw_log(JW_LOG_ERROR, "cannot attach %s to %s:%s (pid %d): %s", kind, h->path,
		       h->name, pid, strerror(-err));
		return err;
	}
	jw_log(JW_LOG_DEBUG, "attached %s to %s:%s at file offset 0x%llx (pid %d)", kind, h->path,
	       h->name, (unsigned long long)h->offset, pid);
	return jw_attach_keep_link(a, jw_link_of(link), pid, false, role);
}

/*
 * Program @prog (dispatch_session, wait_session) on session hook @h in process @pid, with
 * @cookie. 0, or -errno when the kernel would not have it (the pair goes on instead).
 */
static int attach_session(struct jw_attach *a, struct bpf_program *prog, pid_t pid,
			  const struct jw_hook *h, enum jw_link_role role, uint64_t cookie)
{
	int fd = jw_link_uprobe_session(bpf_program__fd(prog), h->path, h->offset, cookie, pid);

	if (fd < 0) {
		jw_log(JW_LOG_DEBUG, "no uprobe session on %s:%s (pid %d): %s; a uprobe and a "
		       "return probe instead", h->path, h->name, pid, strerror(-fd));
		return fd;
	}
	jw_log(JW_LOG_DEBUG, "uprobe session on %s:%s: %s", h->path, h->name, h->why);
	jw_log(JW_LOG_DEBUG, "attached uprobe session (entry and return) to %s:%s at file offset "
	       "0x%llx (pid %d)", h->path, h->name, (unsigned long long)h->offset, pid);
	return jw_attach_keep_link(a, jw_link_fd(fd), pid, false, role);
}

int jw_attach__dispatch(struct jw_attach *a, const struct jw_dispatch_probe *p, uint32_t slot)
{
	uint64_t cookie = jw_probe_cookie(p->probe_id, slot) | (p->own_task ? JW_COOKIE_TASK : 0),
		 entry_cookie;
	enum jw_link_role role = p->site ? JW_LINK_SITE : JW_LINK_TASK;
	struct jw_hook hooks[JW_HOOKS_MAX];
	size_t i, n;
	int err;

	entry_cookie = cookie | p->callee | (p->name_chain ? JW_COOKIE_NAME_ARG : 0) |
		       (p->name_chain && p->name_chain->kind == JW_HANDLER_PY_CODE ?
				JW_COOKIE_PY_TSTATE : 0) | (p->inner ? JW_COOKIE_INNER : 0);
	if (p->name_chain) {
		__u32 key = p->probe_id;

		if (bpf_map__update_elem(a->skel->maps.arg_chains, &key, sizeof(key),
					 p->name_chain, sizeof(*p->name_chain), 0))
			return -errno;
	}
	n = jw_hookplan_dispatch(a->plan.session, p, hooks);
	if (hooks[0].kind == JW_HOOK_SESSION) {
		if (!attach_session(a, a->skel->progs.dispatch_session, p->pid, &hooks[0], role,
				    entry_cookie))
			return 0;
		n = jw_hookplan_dispatch(false, p, hooks);
	}
	for (i = 0; i < n; i++) {
		bool entry = hooks[i].kind == JW_HOOK_ENTRY;

		err = attach_uprobe(a, entry ? a->skel->progs.dispatch_enter :
					       a->skel->progs.dispatch_exit, p->pid, &hooks[i], role,
				    entry ? entry_cookie :
					    cookie | (p->site ? JW_COOKIE_SITE_EXIT : 0) |
						    (hooks[i].kind == JW_HOOK_RETURN ?
							     JW_COOKIE_RETPROBE : 0));
		if (err)
			return err;
	}
	return 0;
}

size_t jw_attach_drop_links(struct jw_attach *a, pid_t pid, enum jw_link_role role, bool at_once,
			    uint32_t slot)
{
	size_t i, kept = 0;

	for (i = 0; i < a->n_links; i++) {
		if (a->links[i].pid != pid || a->links[i].role != role)
			a->links[kept++] = a->links[i];
		else if (at_once)
			jw_link_destroy(a->links[i].link);
		else
			jw_reaper__add(a->reaper, a->links[i].link, slot);
	}
	i = a->n_links - kept;
	a->n_links = kept;
	return i;
}

size_t jw_attach__drop_sites(struct jw_attach *a, pid_t pid, uint32_t slot)
{
	return jw_attach_drop_links(a, pid, JW_LINK_SITE, false, slot);
}

bool jw_attach__links_going(struct jw_attach *a, uint32_t slot)
{
	return slot < a->n_slots && jw_reaper__busy(a->reaper, slot);
}

int jw_attach__site_range(struct jw_attach *a, uint32_t slot, uint64_t lo, uint64_t hi)
{
	struct jw_code_range r = { .lo = lo, .hi = hi };

	if (bpf_map__update_elem(a->skel->maps.site_ranges, &slot, sizeof(slot), &r, sizeof(r), 0))
		return -errno;
	return 0;
}

static int attach_tracepoint(struct jw_attach *a, struct bpf_program *prog, const char *name)
{
	struct bpf_link *link = bpf_program__attach(prog);
	int err;

	if (!link) {
		err = -errno;
		jw_log(JW_LOG_ERROR, "cannot attach to the %s tracepoint: %s", name, strerror(-err));
		return err;
	}
	return jw_attach_keep_link(a, jw_link_of(link), 0, false, JW_LINK_TASK);
}

int jw_attach__wait(struct jw_attach *a, pid_t pid, const char *path, const char *name,
		    uint64_t offset, uint32_t probe_id, uint32_t slot)
{
	uint64_t cookie = jw_probe_cookie(probe_id, slot);
	struct jw_hook hooks[JW_HOOKS_MAX];
	size_t i, n;
	int err;

	n = jw_hookplan_wait(a->plan.session, path, name, offset, hooks);
	if (hooks[0].kind == JW_HOOK_SESSION) {
		if (!attach_session(a, a->skel->progs.wait_session, pid, &hooks[0], JW_LINK_WAIT,
				    cookie))
			return 0;
		n = jw_hookplan_wait(false, path, name, offset, hooks);
	}
	for (i = 0; i < n; i++) {
		err = attach_uprobe(a, hooks[i].kind == JW_HOOK_ENTRY ? a->skel->progs.wait_enter :
									a->skel->progs.wait_return,
				    pid, &hooks[i], JW_LINK_WAIT, cookie);
		if (err)
			return err;
	}
	return 0;
}

int jw_attach__exe(struct jw_attach *a, uint64_t dev, uint64_t ino)
{
	struct jw_exe_key key = { .dev = dev, .ino = ino };
	__u32 one = 1;
	if (bpf_map__update_elem(a->skel->maps.watched_exes, &key, sizeof(key), &one, sizeof(one),
				 0))
		return -errno;
	return 0;
}

int jw_attach__names(struct jw_attach *a, const char (*comms)[JW_COMM_LEN], size_t n)
{
	__u32 one = 1;
	size_t i;

	if (n > JW_MAX_NAME_KEYS)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		struct jw_name_key key;

		memcpy(key.comm, comms[i], sizeof(key.comm));
		if (bpf_map__update_elem(a->skel->maps.watched_names, &key, sizeof(key), &one,
					 sizeof(one), 0)) {
			int err = -errno;

			jw_log(JW_LOG_ERROR, "cannot watch the name %.*s: %s", JW_COMM_LEN,
			       comms[i], strerror(-err));
			return err;
		}
	}
	return attach_tracepoint(a, a->skel->progs.on_rename, "task_rename");
}

int jw_attach__follow(struct jw_attach *a, pid_t pid, uint32_t flags)
{
	__u32 key = pid, on = 1;

	if (bpf_map__update_elem(a->skel->maps.followed, &key, sizeof(key), &flags, sizeof(flags),
				 0))
		return -errno;
	a->skel->bss->follow_on = on;
	return 0;
}

void jw_attach__unfollow(struct jw_attach *a, pid_t pid)
{
	__u32 key = pid;

	bpf_map__delete_elem(a->skel->maps.followed, &key, sizeof(key), 0);
}

int jw_attach__wait_tracepoints(struct jw_attach *a, enum jw_wait_tp_kind *kind)
{
	int err;

	jw_attach__drop_wait_tracepoints(a);
	err = jw_wait_tp_attach(a, a->wait_tp, &a->n_wait_tp, kind, false);
	if (err) {
		a->n_wait_tp = 0;
		jw_log(JW_LOG_ERROR, "cannot attach to the system call tracepoints: %s",
		       strerror(-err));
	}
	return err;
}

bool jw_attach__wait_fexit(const struct jw_attach *a)
{
	return jw_wait_tp_fexit(a);
}

int jw_attach__wait_fexit_attach(struct jw_attach *a)
{
	int err;

	jw_attach__drop_wait_tracepoints(a);
	err = jw_wait_tp_attach_fexit(a, a->wait_tp, &a->n_wait_tp);
	if (err)
		a->n_wait_tp = 0;
	return err;
}

void jw_attach__drop_wait_tracepoints(struct jw_attach *a)
{
	size_t i;

	for (i = 0; i < a->n_wait_tp; i++) {
		jw_reaper__add(a->reaper, a->wait_tp[i], a->n_slots);
		a->wait_tp[i] = jw_link_of(NULL);
	}
	a->n_wait_tp = 0;
}

bool jw_attach__wait_tracepoints_going(struct jw_attach *a)
{
	return jw_reaper__busy(a->reaper, a->n_slots);
}

size_t jw_attach__drop_waits(struct jw_attach *a, pid_t pid, uint32_t slot)
{
	return jw_attach_drop_links(a, pid, JW_LINK_WAIT, false, slot);
}

void jw_attach__set_wait_hooks(struct jw_attach *a, uint32_t hooks)
{
	__atomic_store_n(&a->skel->bss->wait_hooks, hooks, __ATOMIC_SEQ_CST);
}

/* sched_switch's program: every switch of the machine, for the watched threads or the traced. */
static int attach_sched_switch(struct jw_attach *a)
{
	int err;

	if (a->sched_switch_on)
		return 0;
	err = attach_tracepoint(a, a->skel->progs.on_sched_switch, "sched_switch");
	a->sched_switch_on = !err;
	return err;
}

int jw_attach__sched(struct jw_attach *a)
{
	int err = a->thread_switches ? 0 : attach_sched_switch(a);

	if (a->thread_switches)
		jw_log(JW_LOG_INFO, "context switches: each watched thread's own (sched_hooks=1: a "
		       "context-switch perf event per thread), no program on the machine's other "
		       "switches");
	else
		jw_log(JW_LOG_INFO, "context switches: sched_switch, a program on every switch of "
		       "the machine (%s)", a->plan.compat ? "the compatible programs" :
		       "sched_hooks=0");

	if (!err)
		err = attach_tracepoint(a, a->skel->progs.on_sched_waking, "sched_waking");
	/* Every fork and exec: a followed process's new ones and programs, --exe's processes. */
	if (!err)
		err = attach_tracepoint(a, a->skel->progs.on_fork, "sched_process_fork");
	if (!err)
		err = attach_tracepoint(a, a->skel->progs.on_exec, "sched_process_exec");
	return err ? err : attach_tracepoint(a, a->skel->progs.on_exit, "sched_process_exit");
}

int jw_attach__probes_ready(struct jw_attach *a, uint32_t slot)
{
	__u32 ready = 1;

	if (bpf_map__update_elem(a->skel->maps.probes_ready, &slot, sizeof(slot), &ready,
				 sizeof(ready), 0))
		return -errno;
	return 0;
}

bool jw_attach__slot_free(struct jw_attach *a, uint32_t slot)
{
	return slot < a->n_slots && !jw_reaper__busy(a->reaper, slot);
}

int jw_attach__events_fd(const struct jw_attach *a)
{
	return bpf_map__fd(a->skel->maps.events);
}

void jw_attach__drops(const struct jw_attach *a, uint64_t drops[JW_DROP_MAX])
{
	memcpy(drops, (const void *)a->skel->bss->drops, sizeof(a->skel->bss->drops));
}

void jw_attach__set_report_min(struct jw_attach *a, uint64_t ns)
{
	/* The skeleton maps .data: the programs see the new value at their next run. */
	a->skel->data->report_min_ns = ns;
}

void jw_attach__set_stats_every(struct jw_attach *a, uint32_t n)
{
	a->skel->data->stats_every = n ? n : 1;
}

int jw_attach__trace(struct jw_attach *a, pid_t pid, bool on)
{
	const struct bpf_map *map = a->skel->maps.trace_pids;
	__u32 key = pid, one = 1;
	int ret;

	if (on) {
		/* With the threads' own switch events, sched_switch is hooked for the trace. */
		ret = attach_sched_switch(a);
		if (ret)
			return ret;
		ret = bpf_map__update_elem(map, &key, sizeof(key), &one, sizeof(one), BPF_NOEXIST);
		if (ret == -EEXIST)
			return 0;
	} else {
		ret = bpf_map__delete_elem(map, &key, sizeof(key), 0);
		if (ret == -ENOENT)
			return 0;
	}
	if (ret)
		return ret;
	a->n_traced += on ? 1 : -1;
	a->skel->bss->trace_on = a->n_traced;
	return 0;
}

uint64_t jw_attach__tasks(const struct jw_attach *a)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < JW_MAX_CPUS; i++)
		total += __atomic_load_n(&a->skel->bss->task_count[i], __ATOMIC_RELAXED);
	return total;
}

int jw_attach__task_state(const struct jw_attach *a, uint32_t slot, pid_t tid,
			  struct jw_task_state *out)
{
	if (bpf_map__lookup_elem(a->skel->maps.thread_state, &slot, sizeof(slot), out,
				 sizeof(*out), 0))
		return -errno;
	return out->tid == (uint32_t)tid ? 0 : -ENOENT;
}

void jw_attach__drop_link(struct jw_attach *a, int pidfd, pid_t tid)
{
	__u32 key = tid;

	/* Task storage by the thread's pidfd; the compatible build's hash by its tid. */
	if (a->plan.compat)
		bpf_map__delete_elem(a->skel->maps.thread_link, &key, sizeof(key), 0);
	else
		bpf_map__delete_elem(a->skel->maps.thread_link, &pidfd, sizeof(pidfd), 0);
}

const struct jw_kernel_plan *jw_attach__plan(const struct jw_attach *a)
{
	return &a->plan;
}

void *jw_attach__block_sample(const struct jw_attach *a, uint32_t slot)
{
	const struct bpf_map *map = a->skel->maps.blocks;
	size_t size = bpf_map__value_size(map);
	struct jw_sample_rec *rec = malloc(size);

	if (!rec)
		return NULL;
	if (bpf_map__lookup_elem(map, &slot, sizeof(slot), rec, size, 0) ||
	    rec->hdr.type != JW_REC_SAMPLE || rec->hdr.size < sizeof(*rec) || rec->hdr.size > size) {
		free(rec);
		return NULL;
	}
	return rec;
}

void jw_attach__free(struct jw_attach *a)
{
	size_t i;

	if (!a)
		return;
	jw_attach_trial_stop(a);
	jw_reaper__free(a->reaper);
	/* Each waits for a grace period: together, so that they wait for one. */
	jw_links_destroy_together(a->wait_tp, a->n_wait_tp);
	for (i = a->n_links; i > 0; i--)
		jw_link_destroy(a->links[i - 1].link);
	free(a->links);
	jankwatch_bpf__destroy(a->skel);
	free(a->unindexed);
	free(a);
}
