// SPDX-License-Identifier: GPL-2.0-only
/*
 * --dry-run: what a watch would do up to its first hook, printed, with nothing attached. The
 * targets are resolved as a watch resolves them (watched.c), each hook planned as
 * jw_attach__dispatch() and jw_attach__wait() plan theirs (hookplan.h), the kernel's plan as the
 * object's open makes it (kernel.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach/hookplan.h"
#include "attach/kernel.h"
#include "base/clocks.h"
#include "base/log.h"
#include "session/dryrun.h"
#include "session/session_follow.h"
#include "session/session_procs.h"

/* The hooks of one dispatch probe, each a line as -v's "attached ..." says it. */
static void print_hooks(FILE *f, const char *what, const struct jw_hook *hooks, size_t n,
			pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "  %-13s would attach %s%s to %s:%s at file offset 0x%llx (pid %d): %s\n",
			what, jw_hook_kind_name(hooks[i].kind),
			hooks[i].kind == JW_HOOK_SESSION ? " (entry and return)" : "", hooks[i].path,
			hooks[i].name, (unsigned long long)hooks[i].offset, pid, hooks[i].why);
}

static void print_dispatch(FILE *f, const char *what, const struct jw_kernel_plan *plan,
			   const struct jw_dispatch_probe *dp)
{
	struct jw_hook hooks[JW_HOOKS_MAX];

	print_hooks(f, what, hooks, jw_hookplan_dispatch(plan->session, dp, hooks), dp->pid);
}

/* When process @w started, against its start-up window. */
static void print_window(FILE *f, const struct session *s, const struct jw_watched *w)
{
	int64_t window = s->cfg->params.v[JW_P_IGNORE_STARTUP_TIME];
	double age = (double)(jw_clock_ns(CLOCK_BOOTTIME) - (int64_t)w->proc.start_boot_ns) / 1e9;

	if (age >= (double)window)
		fprintf(f, "  start-up      began %.0f s ago: past its start-up window "
			"(ignore_startup_time=%lld)\n", age, (long long)window);
	else
		fprintf(f, "  start-up      began %.1f s ago: its tasks are not reported for %.1f s "
			"more (ignore_startup_time=%lld)\n", age, (double)window - age,
			(long long)window);
}

/* sched_hooks=1, where the build of the programs takes it. */
static bool thread_switches(const struct jw_config *cfg, const struct jw_kernel_plan *plan)
{
	return jw_kernel_plan_thread_switches(plan, jw_params_thread_switches(&cfg->params));
}

static void print_process(FILE *f, const struct session *s, const struct jw_kernel_plan *plan,
			  const struct jw_watched *w)
{
	const struct jw_config *cfg = s->cfg;
	const struct jw_target *t = &w->proc.target;
	const struct jw_preset *pr = &w->preset;
	bool wait_uprobes = s->how.syscall_mode && cfg->params.v[JW_P_WAIT_TRACEPOINTS] != 1 &&
			    cfg->params.v[JW_P_WAIT_TRACEPOINTS] != 3;
	size_t k;

	fprintf(f, "\npid %d (%s), thread %d: %s\n", t->pid, t->comm, t->tid, t->exe);
	if (s->how.syscall_mode)
		fprintf(f, "  loop          %s (%s): a task is the time between the thread's waits\n",
			w->proc.loop, w->loop_why);
	else
		fprintf(f, "  loop          probe: a task is a call of --probe's function\n");
	for (k = 0; k < cfg->n_probes; k++)
		print_dispatch(f, "--probe", plan, &w->probes[k].dp);
	for (k = 0; s->how.syscall_mode && k < pr->n_probes; k++)
		if (!w->preset_probes[k].dp.site)
			print_dispatch(f, "preset", plan, &w->preset_probes[k].dp);
	for (k = 0; s->how.syscall_mode && k < pr->n_probes; k++)
		if (w->preset_probes[k].dp.site)
			print_dispatch(f, "handler site", plan, &w->preset_probes[k].dp);
	for (k = 0; s->how.syscall_mode && k < pr->n_callbacks; k++) {
		struct jw_dispatch_probe dp;

		jw_watched__callback_probe(w, &s->how, k, &dp);
		print_dispatch(f, "handler site", plan, &dp);
	}
	for (k = 0; wait_uprobes && (int)k < w->n_waits; k++) {
		const struct jw_wait_func *fn = &w->waits[k];
		struct jw_hook hooks[JW_HOOKS_MAX];

		print_hooks(f, "wait", hooks,
			    jw_hookplan_wait(plan->session, fn->path, fn->name, fn->offset, hooks),
			    t->pid);
	}
	if (thread_switches(cfg, plan))
		fprintf(f, "  switches      a context-switch perf event on thread %d: its switches "
			"out run a program (sched_hooks=1)\n", t->tid);
	if (cfg->params.v[JW_P_SAMPLERS] != 1)
		fprintf(f, "  sampler       a cpu-clock timer on thread %d, every %lld ms of its CPU "
			"time while a task runs\n", t->tid,
			(long long)cfg->params.v[JW_P_SAMPLE_PERIOD_MS]);
	print_window(f, s, w);
}

static void print_kernel(FILE *f, const struct jw_kernel_facts *facts,
			 const struct jw_kernel_plan *plan, const char *btf_path,
			 bool own_switches)
{
	fprintf(f, "kernel        %s: the %s programs%s%s; a dispatch's entry and return %s; "
		"probes' cookies %s\n", facts->release, plan->compat ? "compatible" : "full",
		plan->compat ? ", standing in for " : "", plan->compat ? plan->lacks : "",
		plan->session ? "as one uprobe session" : "a uprobe and a return probe",
		!plan->cookies ? "found by address" :
		plan->run_ctx_cookie ? "from the run context" : "from bpf_get_attach_cookie()");
	if (btf_path[0])
		fprintf(f, "BTF           %s%s\n", btf_path,
			facts->has[JW_KF_BTF] ? "" : " (the kernel has none of its own)");
	fprintf(f, "scheduler     tracepoints %ssched_waking, sched_process_fork, "
		"sched_process_exec, sched_process_exit (every thread of the machine; one map "
		"lookup for a thread not watched)%s\n", own_switches ? "" : "sched_switch, ",
		own_switches ? "; the watched threads' switches on their own switch events "
			       "(sched_hooks=1, below)" : "");
}

static void print_waits(FILE *f, const struct session *s, const struct jw_kernel_plan *plan)
{
	int64_t wt = s->cfg->params.v[JW_P_WAIT_TRACEPOINTS];
	const char *tps = plan->syscall_events ?
				  "the wait system calls' own exit tracepoints "
				  "(syscalls:sys_exit_epoll_wait and the others)" :
				  "raw_syscalls' sys_exit (this kernel has no tracepoints "
				  "of its own for the wait system calls)";

	if (!s->how.syscall_mode) {
		fprintf(f, "waits         none: --probe's function bounds the tasks\n");
		return;
	}
	if (plan->fexit && (wt == 1 || wt == 2)) {
		fprintf(f, "waits         wait_tracepoints=%lld: fexit on the wait system calls' "
			"functions (the kernel has BPF trampolines): a program on the machine's waits "
			"alone, nothing per process; should the kernel refuse to attach them, %s%s\n",
			(long long)wt, tps, wt == 2 ? " or uprobes on each process's wait functions "
			"(below), whichever costs the machine less" : "");
		return;
	}
	if (wt == 0)
		fprintf(f, "waits         wait_tracepoints=0: uprobes on each process's wait "
			"functions (below)\n");
	else if (wt == 1)
		fprintf(f, "waits         wait_tracepoints=1: %s, nothing per process\n", tps);
	else if (wt == 3)
		fprintf(f, "waits         wait_tracepoints=3: no hook, the scheduler's switches "
			"alone: a task ends where the thread sleeps in a wait system call, begins "
			"where it runs again; nothing per process\n");
	else
		fprintf(f, "waits         wait_tracepoints=2: uprobes on each process's wait functions "
			"(below) or %s, whichever costs the machine less: measured as a watch starts "
			"(with a trial hook, not made in a dry run) and again as the loops' pace "
			"moves\n", tps);
}

static void print_samplers(FILE *f, const struct session *s)
{
	int64_t kind = s->cfg->params.v[JW_P_SAMPLERS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	fprintf(f, "samplers      samplers=%lld: %s\n", (long long)kind,
		kind == 0 ? "a cpu-clock timer per watched thread" :
		kind == 1 ? "a cpu-clock timer per CPU for the whole run" :
			    "a cpu-clock timer per watched thread, one per CPU while the watched "
			    "threads switch more than twice as often as those would fire");
	if (kind != 0)
		fprintf(f, "              %ld CPUs online\n", cpus);
}

static void print_outputs(FILE *f, const struct session *s)
{
	const struct jw_config *cfg = s->cfg;
	const struct jw_params *p = &cfg->params;
	struct stat st;

	if (!stat(cfg->log_dir, &st))
		fprintf(f, "\nlog directory %s (there; log_quota_bytes=%lld)\n", cfg->log_dir,
			(long long)p->v[JW_P_LOG_QUOTA_BYTES]);
	else
		fprintf(f, "\nlog directory %s (not there yet: a watch creates it; "
			"log_quota_bytes=%lld)\n", cfg->log_dir,
			(long long)p->v[JW_P_LOG_QUOTA_BYTES]);
	fprintf(f, "jank          a task over %lld ms; a hang at %lld ms; log_type=%lld\n",
		(long long)p->v[JW_P_THRESHOLD_MS], (long long)p->v[JW_P_HANG_MS],
		(long long)p->v[JW_P_LOG_TYPE]);
	if (cfg->all)
		fprintf(f, "budgets       none (--all): every jank gets its files\n");
	else
		fprintf(f, "budgets       %lld stack log%s per process, 1 trace per uid a %s "
			"(report_times_per_app, --dev); a group's repeats at its 1st, 2nd, 3rd, 5th, "
			"8th, ... (--all lifts both)\n",
			(long long)p->v[JW_P_REPORT_TIMES_PER_APP],
			p->v[JW_P_REPORT_TIMES_PER_APP] == 1 ? "" : "s", cfg->dev ? "hour" : "day");
}

int session_dry_run(struct session *s)
{
	const struct jw_config *cfg = s->cfg;
	struct jw_kernel_facts facts;
	struct jw_kernel_plan plan;
	char why[384], btf_path[4096];
	pid_t found[JW_MAX_PIDS];
	size_t i, n;
	int ret;

	ret = jw_kernel_plan_here(cfg->btf, &facts, &plan, btf_path, sizeof(btf_path), why,
				  sizeof(why));
	if (ret) {
		jw_log(JW_LOG_ERROR, "%s", why);
		return ret;
	}
	/* --exe's and --name's processes as the watch's start finds them. */
	n = session_found_now(s, found, JW_MAX_PIDS);
	for (i = 0; i < n && s->n_slots < JW_MAX_PIDS; i++)
		session_add_proc(s, found[i]);
	printf("jankwatch --dry-run: nothing attached\n");
	print_kernel(stdout, &facts, &plan, btf_path, thread_switches(cfg, &plan));
	print_waits(stdout, s, &plan);
	print_samplers(stdout, s);
	if (cfg->cmd)
		printf("\nprogram       %s: not started by a dry run (a watch starts it held before "
		       "its exec, then finds its hooks)\n", cfg->cmd[0]);
	for (i = 0; i < s->n_exes; i++)
		printf("\n--exe         %s: its processes now (below), and those that exec it "
		       "later\n", s->exes[i].path);
	for (i = 0; i < cfg->n_names; i++)
		printf("\n--name        %s: its processes now (below), and those that take the "
		       "name later\n", cfg->names[i]);
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i])
			print_process(stdout, s, &plan, s->watched[i]);
	for (i = 0; i < s->n_masters; i++)
		printf("\npid %d: a master process, not watched: its workers are (above), and "
		       "those it starts later\n", s->masters[i]);
	print_outputs(stdout, s);
	fflush(stdout);
	for (i = 0, n = 0; i < s->n_slots; i++)
		n += s->watched[i] != NULL;
	if (!n && !cfg->cmd && !session_finds_later(s)) {
		jw_log(JW_LOG_ERROR, "no process to watch");
		return -ESRCH;
	}
	return 0;
}
