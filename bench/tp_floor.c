// SPDX-License-Identifier: GPL-2.0-only
/*
 * jw_bench_tp_floor: attaches tp_floor.bpf.c's empty programs, says "ready" on stderr, and holds
 * them until SIGINT or SIGTERM. Without arguments, to the raw sys_enter and sys_exit tracepoints
 * (tracefs need not be mounted), with --clock reading the clock once each; with --syscall NAME,
 * to syscalls:sys_enter_NAME and syscalls:sys_exit_NAME (tracefs must be mounted: libbpf reads
 * the tracepoints' ids there). With --machine, to what jankwatch's default hooks on every thread
 * of the machine (sched_switch, sched_waking, the exits of the wait system calls the kernel
 * has, a cpu-clock sampler every 10 ms on each CPU; tracefs mounted), or with --parts LIST the
 * ones named (switch, waking, waits, samplers, comma-separated; and thread, with --tid TID:
 * thread TID's own switch event, as --thread has it, which jankwatch's default puts on each
 * watched thread, not on the machine); with --toggle MS as well,
 * on for MS and off for MS in turns, printing "on <begin> <end>" and "off <begin> <end>" on
 * stdout: when the attaching (detaching) began and when it was done, in ns of CLOCK_MONOTONIC.
 * With --thread TID, to thread TID's switches alone: a software event counting its switches
 * out, every one an overflow that runs the program, where --machine's switch runs on every
 * thread's.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hold.h"
#include "tp_floor.skel.h"

/* jankwatch's wait system calls (user/attach/sysevents.c); the kernel has some of them. */
static const char *const waits[] = { "poll", "select", "epoll_wait", "pselect6", "ppoll",
				     "epoll_pwait", "epoll_pwait2" };

#define MAX_CPUS 256
#define MAX_LINKS (3 + sizeof(waits) / sizeof(waits[0]) + MAX_CPUS)
#define SAMPLE_PERIOD_NS 10000000ULL	/* jankwatch's sample_period_ms */

struct held {
	struct bpf_link *link[MAX_LINKS];
	size_t n;
};

static void drop_all(struct held *h)
{
	while (h->n)
		bpf_link__destroy(h->link[--h->n]);
}

/* Keeps @link in @h; -errno when it is NULL. */
static int keep(struct held *h, struct bpf_link *link)
{
	if (!link)
		return -errno;
	h->link[h->n++] = link;
	return 0;
}

/* Attaches @prog to syscalls:sys_@edge_@name. Returns 0 or -errno, said unless @quiet_enoent. */
static int attach_syscall(struct held *h, struct bpf_program *prog, const char *edge,
			  const char *name, bool quiet_enoent)
{
	char tp[128];
	int err;

	snprintf(tp, sizeof(tp), "sys_%s_%s", edge, name);
	err = keep(h, bpf_program__attach_tracepoint(prog, "syscalls", tp));
	if (err && !(quiet_enoent && err == -ENOENT))
		fprintf(stderr, "jw_bench_tp_floor: cannot attach to syscalls:%s: %s%s\n", tp,
			strerror(-err), err == -ENOENT ? " (is tracefs mounted?)" : "");
	return err;
}

/* A cpu-clock event firing every SAMPLE_PERIOD_NS on each CPU, running @prog. */
static int attach_samplers(struct held *h, struct bpf_program *prog)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK,
					.sample_period = SAMPLE_PERIOD_NS };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int fd, err;

	for (long cpu = 0; cpu < cpus && cpu < MAX_CPUS; cpu++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return -errno;
		err = keep(h, bpf_program__attach_perf_event(prog, fd));
		if (err) {
			close(fd);
			return err;
		}
	}
	return 0;
}

/*
 * --thread TID: @prog on every context switch of thread @tid alone (a software event counting
 * its switches out, each one an overflow), where --machine's switch runs on every thread's.
 * 0 or -errno, said.
 */
static int attach_thread(struct held *h, struct bpf_program *prog, int tid)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
					.sample_period = 1 };
	int fd, err;

	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	err = fd < 0 ? -errno : keep(h, bpf_program__attach_perf_event(prog, fd));
	if (err && fd >= 0)
		close(fd);
	if (err)
		fprintf(stderr, "jw_bench_tp_floor: cannot attach to thread %d's switches: %s\n", tid,
			strerror(-err));
	return err;
}

/*
 * --machine's parts (--parts), all but thread by default; thread: --tid TID's own switch event,
 * what jankwatch's sched_hooks=1 puts on each watched thread (the hook, not on the machine).
 */
enum { PART_SWITCH = 1, PART_WAKING = 2, PART_WAITS = 4, PART_SAMPLERS = 8, PART_ALL = 15,
       PART_THREAD = 16 };
static const char *const part_names[] = { "switch", "waking", "waits", "samplers", "thread" };

/* The parts named in comma-separated @list; 0 when one is not a part. */
static unsigned int parse_parts(const char *list)
{
	unsigned int parts = 0, i;
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(part_names) / sizeof(part_names[0]); i++)
			if (!strcmp(tok, part_names[i]))
				break;
		if (i == sizeof(part_names) / sizeof(part_names[0]))
			return 0;
		parts |= 1U << i;
	}
	return parts;
}

/* --machine: its @parts (thread: thread @tid's), all or nothing (-errno, said). */
static int attach_machine(struct held *h, struct tp_floor_bpf *skel, unsigned int parts, long tid)
{
	size_t i, n_waits = 0;
	int err = 0;

	if (parts & PART_SWITCH)
		err = keep(h, bpf_program__attach(skel->progs.machine_switch));
	if (!err && (parts & PART_WAKING))
		err = keep(h, bpf_program__attach(skel->progs.machine_waking));
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot attach to the scheduler's tracepoints: "
			"%s\n", strerror(-err));
		goto fail;
	}
	for (i = 0; (parts & PART_WAITS) && i < sizeof(waits) / sizeof(waits[0]); i++) {
		err = attach_syscall(h, skel->progs.sys_floor_exit, "exit", waits[i], true);
		if (!err)
			n_waits++;
		else if (err != -ENOENT)
			goto fail;
	}
	if ((parts & PART_WAITS) && !n_waits) {
		fprintf(stderr, "jw_bench_tp_floor: no wait system call's exit tracepoint (is "
			"tracefs mounted?)\n");
		err = -ENOENT;
		goto fail;
	}
	if (parts & PART_SAMPLERS)
		err = attach_samplers(h, skel->progs.machine_sample);
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot attach a sampler on each CPU: %s\n",
			strerror(-err));
		goto fail;
	}
	if (parts & PART_THREAD)
		err = attach_thread(h, skel->progs.machine_sample, (int)tid);
	if (err)
		goto fail;
	return 0;
fail:
	drop_all(h);
	return err;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* --machine --toggle MS: on and off in turns until a signal. 0 or -errno. */
static int toggle(struct held *h, struct tp_floor_bpf *skel, unsigned int parts, long tid,
		  unsigned int ms)
{
	int err;

	fprintf(stderr, "jw_bench_tp_floor: the machine's hooks on and off every %u ms; ready\n",
		ms);
	for (;;) {
		unsigned long long begin = mono_ns();

		err = attach_machine(h, skel, parts, tid);
		if (err)
			return err;
		printf("on %llu %llu\n", begin, mono_ns());
		fflush(stdout);
		if (hold_ms(ms))
			break;
		begin = mono_ns();
		drop_all(h);
		printf("off %llu %llu\n", begin, mono_ns());
		fflush(stdout);
		if (hold_ms(ms))
			break;
	}
	drop_all(h);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: jw_bench_tp_floor [--clock | --syscall NAME | --thread TID | "
		"--machine [--parts switch,waking,waits,samplers,thread] [--tid TID] "
		"[--toggle MS]]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *syscall_name = argc == 3 && !strcmp(argv[1], "--syscall") ? argv[2] : NULL;
	bool thread = argc == 3 && !strcmp(argv[1], "--thread");
	bool clock = argc == 2 && !strcmp(argv[1], "--clock");
	bool machine = argc >= 2 && !strcmp(argv[1], "--machine");
	unsigned int parts = PART_ALL;
	struct held h = { .n = 0 };
	struct tp_floor_bpf *skel;
	long toggle_ms = 0, tid = 0;
	char *end;
	int err, i;

	if (thread) {
		tid = strtol(argv[2], &end, 10);
		if (*end || tid <= 0 || tid > 1L << 30)
			return usage();
	}
	for (i = 2; machine && i < argc; i += 2) {
		if (i + 1 == argc)
			return usage();
		if (!strcmp(argv[i], "--toggle")) {
			toggle_ms = strtol(argv[i + 1], &end, 10);
			if (*end || toggle_ms < 10 || toggle_ms > 60000)
				return usage();
		} else if (!strcmp(argv[i], "--parts")) {
			parts = parse_parts(argv[i + 1]);
			if (!parts)
				return usage();
		} else if (!strcmp(argv[i], "--tid")) {
			tid = strtol(argv[i + 1], &end, 10);
			if (*end || tid <= 0 || tid > 1L << 30)
				return usage();
		} else {
			return usage();
		}
	}
	if (argc != 1 && !syscall_name && !clock && !machine && !thread)
		return usage();
	if (machine && !(parts & PART_THREAD) != !tid)
		return usage();	/* the thread part and its --tid go together */
	err = hold_init("jw_bench_tp_floor");
	if (err) {
		fprintf(stderr, "jw_bench_tp_floor: cannot install signal handlers: %s\n",
			strerror(-err));
		return 1;
	}
	skel = tp_floor_bpf__open();
	if (skel) {
		skel->rodata->read_clock = clock;
		err = tp_floor_bpf__load(skel);
		if (err) {
			tp_floor_bpf__destroy(skel);
			skel = NULL;
			errno = -err;
		}
	}
	if (!skel) {
		fprintf(stderr, "jw_bench_tp_floor: cannot load tp_floor.bpf.o: %s\n",
			strerror(errno));
		return 1;
	}
	if (toggle_ms) {
		err = toggle(&h, skel, parts, tid, (unsigned int)toggle_ms);
		goto out;
	}
	if (thread) {
		err = attach_thread(&h, skel->progs.machine_sample, (int)tid);
	} else if (machine) {
		err = attach_machine(&h, skel, parts, tid);
	} else if (syscall_name) {
		err = attach_syscall(&h, skel->progs.sys_floor_enter, "enter", syscall_name, false);
		if (!err)
			err = attach_syscall(&h, skel->progs.sys_floor_exit, "exit", syscall_name,
					     false);
	} else {
		err = keep(&h, bpf_program__attach(skel->progs.tp_floor_enter));
		if (!err)
			err = keep(&h, bpf_program__attach(skel->progs.tp_floor_exit));
		if (err)
			fprintf(stderr, "jw_bench_tp_floor: cannot attach to sys_enter/sys_exit: %s\n",
				strerror(-err));
	}
	if (err)
		goto out;
	if (thread)
		fprintf(stderr, "jw_bench_tp_floor: attached to thread %ld's switches; ready\n", tid);
	else if (machine)
		fprintf(stderr, "jw_bench_tp_floor: attached to sched_switch, sched_waking, the wait "
			"system calls' exits and a sampler on each CPU; ready\n");
	else if (syscall_name)
		fprintf(stderr, "jw_bench_tp_floor: attached to syscalls:sys_enter_%s and "
			"sys_exit_%s; ready\n", syscall_name, syscall_name);
	else
		fprintf(stderr, "jw_bench_tp_floor: attached to raw_tp sys_enter and sys_exit; "
			"ready\n");
	hold();
out:
	drop_all(&h);
	tp_floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
