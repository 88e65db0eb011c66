/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Handler sites hooked in windows (handler_sites: a loop past that many calls a second has its
 * sites on one second in N): what the statistics rows would count with them on throughout.
 *
 * A window's calls per iteration of the loop (a task of its waits: one per wait returned), row by
 * row, times the loop's iterations in the gap after it, less what the row counted in the gap
 * itself (the probes still coming off, or going in again), is added to the row's count: by
 * iterations, not seconds, so that a loop the probes slow while on, or a slow task in the gap,
 * does not move the estimate. Kept apart from the kernel's counts (struct jw_row_extras) and
 * added where the rows are read; the timings (recorded_message_count and the rest) stay the
 * window's own.
 */
#ifndef JW_SITESCALE_H
#define JW_SITESCALE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/attach.h"
#include "base/hindex.h"
#include "jankwatch/abi.h"

/*
 * How a thread's handler sites sample once past handler_sites: on for @window_ns in every
 * @period_ns, one @every-th of the time.
 */
struct jw_sites_plan {
	uint64_t window_ns, period_ns;
	uint64_t every;
};

/* A window's length while the period fits a minute, and the first window's. */
#define JW_SITES_WINDOW_NS 1000000000ULL
/* The longest period of a second's window: the windows sample each minute while they can. */
#define JW_SITES_MAX_EVERY 60
/* The shortest window; and the longest period of any (beyond it, the limit is not kept). */
#define JW_SITES_MIN_WINDOW_NS 250000000ULL
#define JW_SITES_MAX_PERIOD_NS 600000000000ULL

/*
 * The windows that keep sites making @rate calls a second while on (measured in a window) at
 * most @most a second over time (@rate > @most > 0): N, the rate over the limit rounded up; a
 * second in every N seconds up to JW_SITES_MAX_EVERY; past it a window of JW_SITES_MAX_EVERY / N
 * seconds each minute (the share hooked keeps falling as the rate rises), at least
 * JW_SITES_MIN_WINDOW_NS, in a period of N of them, at most JW_SITES_MAX_PERIOD_NS.
 */
struct jw_sites_plan jw_sites_plan(double rate, double most);

/* What is added to statistics rows' counts, by row. */
struct jw_row_extras {
	struct jw_row_extra {
		struct jw_stats_key key;
		uint64_t add;
	} *rows;
	size_t n, cap;
	struct jw_hindex at;
};

/* What row @key gets added (0: nothing). */
uint64_t jw_row_extras_get(const struct jw_row_extras *x, const struct jw_stats_key *key);

/* Adds @add to row @key. 0 or -ENOMEM. */
int jw_row_extras_add(struct jw_row_extras *x, const struct jw_stats_key *key, uint64_t add);

/* Forgets what the rows of process @pid (0: every process) get: they were reset. */
void jw_row_extras_forget(struct jw_row_extras *x, pid_t pid);

void jw_row_extras_free(struct jw_row_extras *x);

/* One thread's windows. */
struct jw_sitescale {
	/* The window open: its rows' counts and the loop's iterations at its begin. */
	struct jw_row_count *begin;
	size_t n_begin;
	uint64_t iters_begin;
	bool open;
	/* The last window closed, and what its gap has been given so far. */
	struct jw_scaled_row {
		struct jw_stats_key key;
		uint64_t in_window;	/* the calls the window counted */
		uint64_t at_end;	/* the row's count at the window's end */
		uint64_t given;		/* added for the gap after it */
	} *rows;
	size_t n;
	uint64_t iters_window;		/* the loop's iterations in the window */
	uint64_t iters_end;		/* ... at its end */
};

/*
 * A window opens: the gap after the last one is settled from @now (the thread's site rows, @n
 * of them) and @iters (the loop's iterations so far) into @x, and the window's begin is taken.
 * 0 or -ENOMEM (then no window is open).
 */
int jw_sitescale_open(struct jw_sitescale *sc, const struct jw_row_count *now, size_t n,
		      uint64_t iters, struct jw_row_extras *x);

/*
 * The open window closes (the sites come off next), with the thread's site rows @now (@n) and
 * the loop's iterations @iters: from here on jw_sitescale_gap() adds for its gap. 0, or -ENOMEM
 * (then it adds nothing). Nothing open: 0, nothing done.
 */
int jw_sitescale_close(struct jw_sitescale *sc, const struct jw_row_count *now, size_t n,
		       uint64_t iters);

/*
 * The gap after the last window, so far: @counts[i] is the count now of @sc->rows[i] (read by the
 * caller), @iters the loop's iterations; what each row gets grows to the estimate (never
 * shrinks: a counter read meanwhile stays one). Counts that went back (a reset) end the window:
 * nothing more is added for it.
 */
void jw_sitescale_gap(struct jw_sitescale *sc, const uint64_t *counts, uint64_t iters,
		      struct jw_row_extras *x);

/* Forgets the windows, open and closed (the rows were reset); @sc stays usable. */
void jw_sitescale_reset(struct jw_sitescale *sc);

void jw_sitescale_free(struct jw_sitescale *sc);

#endif
