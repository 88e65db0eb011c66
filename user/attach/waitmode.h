/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's choice between its two ways of seeing the waits, by what each costs the machine
 * (wait_tracepoints=2). Uprobes on the C library's wait functions cost only the watched loop, a
 * trap pair per wait; the sys_enter/sys_exit tracepoints cost a watched wait a fraction of that,
 * but put every system call of every thread on the kernel's tracing path. Which is cheaper
 * depends on the rates: the machine's system calls against the watched threads' waits, and
 * those move: the choice is made again as they do (session_waits.c). Pure arithmetic on
 * measured figures; waitcost.c measures them.
 */
#ifndef JW_WAITMODE_H
#define JW_WAITMODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The tracepoints' cost is read round by round (waitcost.c: calls without them, then with them);
 * a round's read moves by tens of ns around the 10-30 they add to a call of ~1 us on this
 * development VM, and the rounds of one trial move together (the medians of five rounds at ten
 * starts: 0 to 56 ns), so that one trial can keep a loop on the costlier uprobes for good. The
 * reads of every trial are kept, up to JW_WAIT_TP_READS, tp_ns their median; while the uprobes
 * are in force by that median but the reads' lower quartile would take the tracepoints
 * (jw_wait_tp_unsure()), the choice is made again JW_WAIT_UNSURE_S later with a trial more.
 */
#define JW_WAIT_TP_READS 30
#define JW_WAIT_UNSURE_S 10

struct jw_wait_costs {
	double window_s;	/* how long the rates were counted */
	uint64_t syscalls;	/* system calls of the whole machine in the window */
	uint64_t machine_waits;	/* of them, wait system calls (any thread's) */
	uint64_t waits;		/* of those, the watched threads' */
	double tp_ns;		/* added to each other system call by the tracepoints; < 0: unknown */
	double tpw_ns;		/* added by them to each wait: its exit program runs */
	double up_ns;		/* added to each wait by the uprobe pair; < 0: unknown */
	/* Every trial's rounds (jw_wait_tp_read()): a system call's, a wait's. */
	double tp_reads[JW_WAIT_TP_READS], tpw_reads[JW_WAIT_TP_READS];
	unsigned int n_tp_reads;
};

/*
 * The tracepoints cost every system call of the machine the tracing path (tp_ns), and every wait
 * of the machine, any process's, its exit program too (tpw_ns: the watched threads' as well,
 * whose uprobes cost up_ns instead). Their cost grows with the whole machine's load, the
 * uprobes' stays with the watched loop: they are chosen only when, at the rates measured, they
 * cost the machine less than
 * 1/JW_WAIT_TP_FACTOR of what the uprobes would, and save at least JW_WAIT_TP_SAVING_MS of CPU
 * per second. The figures are waitcost.c's trials, a call made alone; in a busy server, caches
 * cold, each way costs about four times its trial (nginx under 50 clients: 40-50 ns a system
 * call against getppid()'s 10, 30-45 us a wait against 7-10), so the ratio holds and the saving
 * is about four times what the trials say: 2 ms/s of them, about 1% of a core in place.
 */
#define JW_WAIT_TP_FACTOR 2
#define JW_WAIT_TP_SAVING_MS 2.0
/* Chosen, they stay while they save this much (jw_wait_keep_tracepoints()). */
#define JW_WAIT_TP_KEEP_MS 1.0

/*
 * True when the tracepoints are the cheaper way by the margins above; an empty window or an
 * unknown cost keeps the uprobes, which cost nothing outside the watched processes. @why (at
 * least 256 bytes to be whole) gets the figures behind the choice, as one clause.
 */
bool jw_wait_choose_tracepoints(const struct jw_wait_costs *c, char *why, size_t len);

/*
 * On the tracepoints already (a choice made earlier), whether they stay: while they save the
 * machine JW_WAIT_TP_KEEP_MS of CPU per second, so that rates between that and the margins that
 * chose them do not switch back and forth; below it the uprobes, which cost nothing outside the
 * watched processes, and whose cost does not grow unseen with the rest of the machine's load.
 * Unknown costs or an empty window keep them. @why as above.
 */
bool jw_wait_keep_tracepoints(const struct jw_wait_costs *c, char *why, size_t len);

/*
 * Adds a round's reads, @call_ns on a system call and @wait_ns on a wait, to @c's while there is
 * room; tp_ns and tpw_ns become their medians (>= 0).
 */
void jw_wait_tp_read(struct jw_wait_costs *c, double call_ns, double wait_ns);

/*
 * Whether @c, which does not choose the tracepoints (jw_wait_choose_tracepoints()), would at the
 * lower quartile of its reads, and has room for more: a trial more may change the choice.
 */
bool jw_wait_tp_unsure(const struct jw_wait_costs *c);

/*
 * Syscall mode chooses again (wait_tracepoints=2) when the watched threads' waits a second moved
 * JW_WAIT_RATE_MOVE times from the rate of the last choice, either way, rates under
 * JW_WAIT_RATE_FLOOR counting as that (an idle loop's 1 or 10 a second cost nothing either way);
 * and every JW_WAIT_RECHOOSE_S anyway, the machine's own rate having moved unseen. Not sooner
 * than JW_WAIT_SWITCH_GAP_S after a switch.
 */
#define JW_WAIT_RATE_MOVE 4
#define JW_WAIT_RATE_FLOOR 100.0
#define JW_WAIT_RECHOOSE_S 60
#define JW_WAIT_SWITCH_GAP_S 5

/* Whether waits a second @now moved far enough from @chosen to choose again. */
bool jw_wait_rate_moved(double chosen, double now);

/* The median of @v[0..@n) (@n > 0), which it sorts. */
double jw_median(double *v, size_t n);

/* The value @pct percent of @v[0..@n) (@n > 0) are at or below (the nearest rank), sorting it. */
double jw_percentile(double *v, size_t n, unsigned int pct);

#endif
