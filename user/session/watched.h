/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A watched process: everything jankwatch holds for one, in one handle. Its target (read from
 * /proc), what hooks it (--probe dispatch functions, the wait functions, the preset and its
 * probes), its slot in the kernel's per-thread state, its symbolizer, the samples of its task
 * in flight, and a pidfd of its thread. Made by jw_watched__new() (read and resolved, nothing
 * attached), hooked by jw_watched__attach(), and undone whole by jw_watched__free().
 */
#ifndef JW_WATCHED_H
#define JW_WATCHED_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/attach.h"
#include "config/options.h"
#include "report/proc.h"
#include "report/trace.h"
#include "stacks/samplebuf.h"
#include "process/launch.h"
#include "loops/presets.h"
#include "loops/waits.h"
#include "session/sitescale.h"

/* How the session hooks its processes; it owns this and keeps it current. */
struct jw_watch_how {
	const struct jw_config *cfg;
	struct jw_attach *attach;	/* NULL until the BPF object is loaded */
	struct jw_tracer *tracer;	/* NULL when traces are off */
	const struct jw_child *child;	/* -- CMD: the program started */
	bool syscall_mode;		/* tasks bounded by the wait calls */
	bool wait_tracepoints;		/* ... seen on the sys_enter/sys_exit tracepoints */
	bool wait_fexit;		/* ... which are fexit on the wait system calls */
	bool wait_switches;		/* ... by the thread's sleeps in them alone */
	bool holding;			/* the program is held before its exec: nothing mapped yet */
	bool cpu_samplers;		/* stacks from one sampler per CPU, none per thread */
	bool by_exe;			/* --exe: a --probe BIN may name the executable */
	struct jw_row_extras *extras;	/* what sampled handler sites add to their rows' counts */
};

/* A --probe resolved in one process. */
struct jw_resolved_probe {
	struct jw_dispatch_probe dp;
	char path[PATH_MAX];
};

struct jw_watched {
	struct jw_proc proc;		/* what the writers see of it */
	uint32_t slot;			/* its thread's row in the kernel's per-thread maps */
	struct jw_resolved_probe probes[JW_MAX_PROBE_SPECS];
	struct jw_wait_func waits[JW_MAX_WAIT_FUNCS];	/* syscall mode on uprobes */
	int n_waits;
	struct jw_preset preset;	/* syscall mode: what names the handlers inside the waits */
	char loop_why[512];		/* which preset, and why (as said at start) */
	struct jw_resolved_probe preset_probes[JW_MAX_PRESET_PROBES];
	struct jw_samplebuf samples;	/* of its thread's task in flight */
	bool redetect;		/* caught at exec or started by us: look for a preset once it runs */
	bool check_waits;	/* its waits found before it mapped them: check once it runs */
	uint32_t waits_checks;	/* how many times they were checked */
	bool attached;		/* jw_watched__attach() began: there is something to undo */
	int pidfd;		/* its thread, to unlink it from its slot; -1: none */
	uint64_t hang_seq;	/* the last task reported as a hang, + 1 */
	uint64_t trace_seq;	/* the last task that opened a trace window, + 1 */
	/* Its handler sites' cost guard: the count and time last looked at; removed already. */
	uint32_t site_calls_seen;
	uint64_t site_seen_ns;
	uint64_t sites_off_until;	/* its sites are off until then (CLOCK_MONOTONIC); 0: on */
	uint64_t site_window_ns;	/* how long they stay on, a window (0: a second) */
	uint32_t sites_windowed;	/* how many times they were taken off */
	struct jw_sitescale scale;	/* its rows' counts while they are */
};

/* The samples held per thread for the task in flight: evenly thinned beyond this. */
#define JW_SAMPLES_HELD 512

/*
 * Reads process @pid (with @how->holding: the program held, @how->child) and resolves its hooks
 * for slot @slot; nothing is attached. NULL with errno set, after a message naming the reason.
 */
struct jw_watched *jw_watched__new(pid_t pid, uint32_t slot, const struct jw_watch_how *how);

/* Attaches its hooks and its sampler, and starts naming its code. 0 or -errno, said. */
int jw_watched__attach(struct jw_watched *w, const struct jw_watch_how *how);

/*
 * A program started by us had its wait functions found before it ran, in the C library its
 * interpreter names. Once it runs (called every half second until settled): the file hooked is
 * the one it maps, or its waits are hooked again in the C library it does map (a bundled one,
 * LD_LIBRARY_PATH), said in one line; where they can be found nowhere, that is said: never
 * watched silently.
 */
void jw_watched__check_waits(struct jw_watched *w, const struct jw_watch_how *how);

/* The dispatch probe of @w's preset's callback site @k (< preset.n_callbacks), into @dp. */
void jw_watched__callback_probe(const struct jw_watched *w, const struct jw_watch_how *how,
				size_t k, struct jw_dispatch_probe *dp);

/*
 * @w's handler sites on the kernel's side: the preset's probes that are sites, then its callback
 * sites (one probe id for all). A handler site that cannot be hooked is said and left: the
 * stacks still name its handlers.
 */
void jw_watched__attach_sites(struct jw_watched *w, const struct jw_watch_how *how);

/* Its handler sites' cost guard (siteguard.c): */

/*
 * Its handler sites' cost, from its thread's state @st read at @now: at the end of each window
 * (a second to begin with), when they ran more calls a second than handler_sites allows, they
 * are taken off for long enough that over time they make at most that many (said the first
 * time), then hooked again for a window, and so on: its handler rows' timings are a sample of
 * one second in every N (jw_sites_plan(): past a minute, a shorter window), their counts scaled
 * to the loop's iterations (sitescale.h). The first time over, they stay on a second
 * more, the first window.
 */
void jw_watched__guard_sites(struct jw_watched *w, const struct jw_watch_how *how,
			     const struct jw_task_state *st, uint64_t now);

/*
 * While its handler sites are off: what their rows get added for the loop's iterations since
 * their last window (sitescale.h), read now. Also before the run's last read.
 */
void jw_watched__scale_sites(struct jw_watched *w, const struct jw_watch_how *how);

/*
 * Once it runs: the preset it was resolved without (caught at exec, or held before it: nothing
 * mapped yet) when only its stacks name handlers; its symbolizer, if its mappings could not be
 * read before.
 */
void jw_watched__settle(struct jw_watched *w, const struct jw_watch_how *how);

/* Detaches everything (in the background: see reaper.h) and frees. NULL-safe. */
void jw_watched__free(struct jw_watched *w, const struct jw_watch_how *how);

#endif
