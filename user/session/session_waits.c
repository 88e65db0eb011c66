// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/waitcost.h"
#include "attach/waitmode.h"
#include "base/clocks.h"
#include "base/log.h"
#include "loops/placement.h"
#include "session/session_waits.h"

#define NS_PER_S 1000000000ULL
/* How often the watched threads' rate of waits is looked at. */
#define RATE_EVERY_NS NS_PER_S
/*
 * A switch to the uprobes counts both kinds this long first: a thread that had entered its
 * wrapper, past the entry probe attached just then, is still seen entering the system call.
 */
#define SETTLE_NS (NS_PER_S / 2)

struct session_waits {
	bool live;		/* wait_tracepoints=2: chosen again as the rates move */
	enum jw_wait_tp_kind tp_kind;	/* which the kernel's hooks are, while in force */
	bool unit_known;	/* costs.tp_ns and up_ns were measured */
	bool unsure;		/* the uprobes kept, the tracepoints' reads across the choice */
	bool reads_failed;	/* a trial more made no round: none tried again */
	struct jw_wait_costs costs;	/* the last measurement */
	char why[512];		/* what the kind in force was chosen by */
	double chosen_rate;	/* watched waits a second at the last choice; < 0: none yet */
	uint64_t chosen_ns;	/* when it was made */
	uint64_t since_ns;	/* when the kind in force began */
	uint64_t tp_total_ns;	/* time on the tracepoints before since_ns */
	uint64_t start_ns;
	unsigned int switches;
	uint64_t settle_ns;	/* a switch to the uprobes: both kinds count until then */
	struct jw_wait_count count;	/* the machine's rates, while they are counted */
	uint64_t count_ns;
	/* The watched threads' waits a second, from their task numbers (a task per wait). */
	uint64_t rate_ns;
	double rate;
	pid_t tid[JW_MAX_PIDS];
	uint64_t seq[JW_MAX_PIDS];
};

/*
 * Puts the watched threads into @tids and returns how many; @emulated: every wait function's
 * probe sits on an instruction the kernel emulates.
 */
static size_t watched_waits(const struct session *s, pid_t *tids, bool *emulated)
{
	size_t i, n = 0;
	int k;

	*emulated = true;
	for (i = 0; i < s->n_slots && n < JW_MAX_RATE_TIDS; i++) {
		const struct jw_watched *w = s->watched[i];

		if (!w)
			continue;
		tids[n++] = w->proc.target.tid;
		for (k = 0; k < w->n_waits; k++) {
			const struct jw_wait_func *f = &w->waits[k];
			struct jw_placement place;

			jw_probe_place_file(f->path, f->offset, false, &place);
			*emulated = *emulated && place.emulated;
		}
	}
	return n;
}

/* The kind in force, said as a clause. */
static const char *kind_said(const struct session *s)
{
	if (s->how.wait_switches)
		return "the scheduler's switches alone (a task from the thread's switch back in "
		       "after sleeping in a wait to its next sleep in one)";
	if (!s->how.wait_tracepoints)
		return "uprobes on the C library's wait functions";
	switch (s->waits->tp_kind) {
	case JW_WAIT_TP_FEXIT:
		return "fexit on the wait system calls' functions";
	case JW_WAIT_TP_OWN:
		return "the wait system calls' own exit tracepoints";
	default:
		return "raw_syscalls' sys_exit tracepoint";
	}
}

/* Says the kind chosen at start and what it costs whom. */
static void say_first(const struct session *s)
{
	const struct session_waits *sw = s->waits;
	const char *again = sw->live ? "; chosen again as the rates move" : "";

	if (s->how.wait_switches)
		jw_log(JW_LOG_INFO, "syscall mode on %s (%s): no program runs at the waits; a wait "
		       "that returns without sleeping does not split the tasks around it",
		       kind_said(s), sw->why);
	else if (!s->how.wait_tracepoints)
		jw_log(JW_LOG_INFO, "syscall mode on %s (%s%s)", kind_said(s), sw->why, again);
	else if (sw->tp_kind == JW_WAIT_TP_FEXIT)
		jw_log(JW_LOG_INFO, "syscall mode on %s (%s%s): only the machine's waits run a "
		       "program, no other system call pays", kind_said(s), sw->why, again);
	else if (sw->tp_kind == JW_WAIT_TP_OWN)
		jw_log(JW_LOG_INFO, "syscall mode on %s (%s%s): every system call of the machine "
		       "takes the tracing path, only a wait's return runs a program", kind_said(s),
		       sw->why, again);
	else
		jw_log(JW_LOG_INFO, "syscall mode on %s (%s%s): every system call of the machine "
		       "runs a program", kind_said(s), sw->why, again);
}

/*
 * After a choice: whether the uprobes were kept by a median the tracepoints' reads spread across
 * (waitmode.h), so that the next choice comes sooner, with a trial more.
 */
static void note_unsure(struct session *s)
{
	struct session_waits *sw = s->waits;

	sw->unsure = !s->how.wait_tracepoints && !sw->reads_failed &&
		     jw_wait_tp_unsure(&sw->costs);
	if (sw->unsure)
		jw_log(JW_LOG_DEBUG, "wait hooks: the tracepoints' %u reads (median %.0f ns) spread "
		       "across the choice: read again in %d s", sw->costs.n_tp_reads,
		       sw->costs.tp_ns, JW_WAIT_UNSURE_S);
}

int session_waits_choose(struct session *s)
{
	int64_t asked = s->cfg->params.v[JW_P_WAIT_TRACEPOINTS];
	pid_t tids[JW_MAX_RATE_TIDS];
	struct session_waits *sw;
	char detail[448];
	bool emulated, attached = false;
	size_t n;
	int err;

	sw = s->waits = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	sw->live = asked == 2;
	sw->chosen_rate = -1;
	sw->start_ns = sw->since_ns = sw->chosen_ns = sw->rate_ns = jw_clock_ns(CLOCK_MONOTONIC);
	if (asked != 2) {
		s->how.wait_tracepoints = asked == 1;
		s->how.wait_switches = asked == 3;
		snprintf(sw->why, sizeof(sw->why), "wait_tracepoints=%lld", (long long)asked);
	} else if (jw_attach__wait_fexit(s->attach) && !jw_attach__wait_fexit_attach(s->attach)) {
		/* A program on the machine's waits alone: less than either of the others. */
		sw->live = false;
		s->how.wait_tracepoints = attached = true;
		sw->tp_kind = JW_WAIT_TP_FEXIT;
		s->how.wait_fexit = true;
		snprintf(sw->why, sizeof(sw->why), "wait_tracepoints=2: the kernel has BPF "
			 "trampolines; kept");
	} else if (s->how.holding || !(n = watched_waits(s, tids, &emulated))) {
		/* Nothing waits yet: the way that costs nothing outside the watched processes. */
		s->how.wait_tracepoints = false;
		snprintf(sw->why, sizeof(sw->why), "wait_tracepoints=2: no program runs yet to "
			 "measure");
	} else {
		jw_wait_costs_measure(s->attach, tids, n, emulated, &sw->costs);
		sw->unit_known = true;
		if (sw->costs.window_s > 0)
			sw->chosen_rate = sw->costs.waits / sw->costs.window_s;
		s->how.wait_tracepoints = jw_wait_choose_tracepoints(&sw->costs, detail,
								     sizeof(detail));
		snprintf(sw->why, sizeof(sw->why), "wait_tracepoints=2: %s", detail);
		note_unsure(s);
	}
	jw_attach__set_wait_hooks(s->attach, s->how.wait_switches     ? JW_WAIT_BY_SWITCHES :
					     s->how.wait_tracepoints ? JW_WAIT_BY_TRACEPOINTS :
								       JW_WAIT_BY_UPROBES);
	if (s->how.wait_tracepoints && !attached) {
		err = jw_attach__wait_tracepoints(s->attach, &sw->tp_kind);
		if (err)
			return err;
		s->how.wait_fexit = sw->tp_kind == JW_WAIT_TP_FEXIT;
	}
	say_first(s);
	return 0;
}

/*
 * The watched threads' waits a second since the last look (their tasks: one per wait); < 0 when
 * no thread was looked at before (a first look, after start or once all are new): a baseline.
 */
static double waits_rate(struct session *s, uint64_t now)
{
	struct session_waits *sw = s->waits;
	uint64_t waits = 0;
	bool known = false;
	size_t i;

	for (i = 0; i < s->n_slots && i < JW_MAX_PIDS; i++) {
		const struct jw_watched *w = s->watched[i];
		struct jw_task_state st;

		if (!w || !w->attached ||
		    jw_attach__task_state(s->attach, (uint32_t)i, w->proc.target.tid, &st)) {
			sw->tid[i] = 0;
			continue;
		}
		if (sw->tid[i] == w->proc.target.tid && st.seq >= sw->seq[i]) {
			waits += st.seq - sw->seq[i];
			known = true;
		}
		sw->tid[i] = w->proc.target.tid;
		sw->seq[i] = st.seq;
	}
	return known ? waits * 1e9 / (double)(now - sw->rate_ns) : -1;
}

/* The time spent on the tracepoints so far, with the kind in force's share. */
static uint64_t tracepoints_ns(const struct session *s, uint64_t now)
{
	return s->waits->tp_total_ns + (s->how.wait_tracepoints ? now - s->waits->since_ns : 0);
}

/* The kind in force changes now (it is set already): said, with @why. */
static void switched(struct session *s, uint64_t now, bool was_tracepoints, const char *why)
{
	struct session_waits *sw = s->waits;

	if (was_tracepoints)
		sw->tp_total_ns += now - sw->since_ns;
	sw->since_ns = now;
	sw->switches++;
	snprintf(sw->why, sizeof(sw->why), "%s", why);
	jw_log(JW_LOG_INFO, "syscall mode's waits now on %s (%s)", kind_said(s), why);
}

/*
 * Whether the hooks a switch took off are all gone: the same kind attached again before would
 * see each wait twice. A switch waits for the next choice meanwhile.
 */
static bool old_hooks_gone(struct session *s)
{
	size_t i;

	if (jw_attach__wait_tracepoints_going(s->attach))
		return false;
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && !jw_attach__slot_free(s->attach, (uint32_t)i))
			return false;
	return true;
}

static void to_tracepoints(struct session *s, uint64_t now, const char *why)
{
	struct session_waits *sw = s->waits;
	size_t i, links = 0;
	int err;

	/* Attached while the uprobes count: until the switch their programs return at once. */
	err = jw_attach__wait_tracepoints(s->attach, &sw->tp_kind);
	if (err) {
		jw_log(JW_LOG_WARN, "the waits stay on uprobes: the tracepoints cannot be attached "
		       "(%s)", strerror(-err));
		return;
	}
	jw_attach__set_wait_hooks(s->attach, JW_WAIT_BY_TRACEPOINTS);
	s->how.wait_tracepoints = true;
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && s->watched[i]->attached)
			links += jw_attach__drop_waits(s->attach, s->watched[i]->proc.target.pid,
						       (uint32_t)i);
	jw_log(JW_LOG_DEBUG, "wait hooks: %zu wait uprobes to detach", links);
	switched(s, now, false, why);
}

/* Hooks watched process @w's wait functions; 0 or -errno. */
static int hook_waits(struct session *s, struct jw_watched *w)
{
	int k, err = 0;

	for (k = 0; k < w->n_waits && !err; k++)
		err = jw_attach__wait(s->attach, w->proc.target.pid, w->waits[k].path,
				      w->waits[k].name, w->waits[k].offset, s->cfg->n_probes,
				      w->slot);
	return err;
}

static void to_uprobes(struct session *s, uint64_t now, const char *why)
{
	size_t i, j;
	int err = 0;

	/* Attached while the tracepoints count: until the switch their programs return at once. */
	for (i = 0; i < s->n_slots && !err; i++)
		if (s->watched[i] && s->watched[i]->attached && !s->how.holding)
			err = hook_waits(s, s->watched[i]);
	if (err) {
		for (j = 0; j < i; j++)
			if (s->watched[j] && s->watched[j]->attached)
				jw_attach__drop_waits(s->attach, s->watched[j]->proc.target.pid,
						      (uint32_t)j);
		jw_log(JW_LOG_WARN, "the waits stay on the tracepoints: the wait functions cannot "
		       "be hooked (%s)", strerror(-err));
		return;
	}
	/* Both count a moment (SETTLE_NS); then the uprobes alone, and the tracepoints go. */
	jw_attach__set_wait_hooks(s->attach, JW_WAIT_BY_UPROBES | JW_WAIT_BY_TRACEPOINTS);
	s->waits->settle_ns = now + SETTLE_NS;
	s->how.wait_tracepoints = false;
	switched(s, now, true, why);
}

/* The end of a switch to the uprobes: they alone count, the tracepoints go. */
static void settled(struct session *s)
{
	jw_attach__set_wait_hooks(s->attach, JW_WAIT_BY_UPROBES);
	jw_attach__drop_wait_tracepoints(s->attach);
	s->waits->settle_ns = 0;
}

/* Counts the machine's rates from now, the costs per call measured first if never yet. */
static void start_count(struct session *s, uint64_t now)
{
	struct session_waits *sw = s->waits;
	pid_t tids[JW_MAX_RATE_TIDS];
	bool emulated;
	size_t n = watched_waits(s, tids, &emulated);

	/* Measured with the tracepoints off (they are while the uprobes are in force). */
	if (!sw->unit_known && !s->how.wait_tracepoints) {
		jw_wait_unit_costs(s->attach, emulated, &sw->costs);
		sw->unit_known = true;
		now = jw_clock_ns(CLOCK_MONOTONIC);
	} else if (sw->unsure && !s->how.wait_tracepoints &&
		   !jw_attach__wait_tracepoints_going(s->attach)) {
		unsigned int reads = sw->costs.n_tp_reads;

		/* Not while the last switch's tracepoints go: "without" would be with them. */
		jw_wait_tp_again(s->attach, &sw->costs);
		/* No round could be made: not again every 10 s, the choice stands as it was. */
		if (sw->costs.n_tp_reads == reads)
			sw->reads_failed = true;
		now = jw_clock_ns(CLOCK_MONOTONIC);
	}
	if (jw_wait_count_start(s->attach, tids, n, &sw->count)) {
		sw->chosen_ns = now;	/* tried: again at the next due time */
		return;
	}
	sw->count_ns = now;
}

/* The count is done: the choice, made again at these rates. */
static void choose_again(struct session *s, uint64_t now)
{
	struct session_waits *sw = s->waits;
	char detail[448], why[512];
	bool tracepoints;

	jw_wait_count_end(s->attach, &sw->count, &sw->costs);
	sw->chosen_ns = now;
	if (sw->costs.window_s <= 0)
		return;
	if (s->how.wait_tracepoints)
		tracepoints = jw_wait_keep_tracepoints(&sw->costs, detail, sizeof(detail));
	else
		tracepoints = jw_wait_choose_tracepoints(&sw->costs, detail, sizeof(detail));
	snprintf(why, sizeof(why), "wait_tracepoints=2: %s", detail);
	if (tracepoints != s->how.wait_tracepoints && !old_hooks_gone(s)) {
		/* The rate of the last choice kept: chosen again at the next look. */
		jw_log(JW_LOG_DEBUG, "wait hooks: the last switch's are still being taken off: "
		       "chosen again in a second");
		return;
	}
	sw->chosen_rate = sw->costs.waits / sw->costs.window_s;
	if (tracepoints == s->how.wait_tracepoints)
		jw_log(JW_LOG_DEBUG, "wait hooks: staying on %s (%s)", kind_said(s), why);
	else if (tracepoints)
		to_tracepoints(s, now, why);
	else
		to_uprobes(s, now, why);
	note_unsure(s);
}

/* The rate looked at now: false for a first look, which only takes the threads' counts. */
static bool look_at_rate(struct session *s, uint64_t now)
{
	struct session_waits *sw = s->waits;
	double rate = waits_rate(s, now);

	sw->rate_ns = now;
	if (rate < 0)
		return false;
	sw->rate = rate;
	return true;
}

void session_waits_tick(struct session *s, uint64_t now)
{
	struct session_waits *sw = s->waits;
	bool due;

	if (!sw)
		return;
	if (!sw->live) {
		/* The rate alone, for jankwatch stats. */
		if (now - sw->rate_ns >= RATE_EVERY_NS)
			look_at_rate(s, now);
		return;
	}
	if (sw->settle_ns && now >= sw->settle_ns)
		settled(s);
	if (sw->count.on) {
		if (now - sw->count_ns >= JW_WAIT_RATE_MS * 1000000ULL)
			choose_again(s, now);
		return;
	}
	if (now - sw->rate_ns < RATE_EVERY_NS || !look_at_rate(s, now))
		return;
	if (sw->settle_ns || s->how.holding ||
	    (sw->switches && now - sw->since_ns < JW_WAIT_SWITCH_GAP_S * NS_PER_S))
		return;
	if (sw->chosen_rate < 0)
		due = sw->rate > 0;	/* nothing ran at start: once something waits */
	else
		due = jw_wait_rate_moved(sw->chosen_rate, sw->rate) ||
		      now - sw->chosen_ns >= (sw->unsure ? JW_WAIT_UNSURE_S : JW_WAIT_RECHOOSE_S) *
						     NS_PER_S;
	if (due) {
		jw_log(JW_LOG_DEBUG, "wait hooks: %.0f watched waits/s (%.0f at the last choice): "
		       "counting the machine's system calls", sw->rate, sw->chosen_rate);
		start_count(s, now);
	}
}

void session_waits_say(const struct session *s, FILE *f, uint64_t now)
{
	const struct session_waits *sw = s->waits;

	if (!sw)
		return;
	fprintf(f, "syscall mode's waits on %s for %.0f s, %.0f watched waits/s (%s)\n",
		kind_said(s), (now - sw->since_ns) / 1e9, sw->rate, sw->why);
	if (sw->switches)
		fprintf(f, "syscall mode's waits switched %u time%s; on the tracepoints %.0f s of "
			"%.0f\n", sw->switches, sw->switches == 1 ? "" : "s",
			tracepoints_ns(s, now) / 1e9, (now - sw->start_ns) / 1e9);
}

void session_waits_finish(struct session *s)
{
	struct session_waits *sw = s->waits;
	uint64_t now = jw_clock_ns(CLOCK_MONOTONIC);

	if (!sw)
		return;
	if (sw->switches)
		jw_log(JW_LOG_INFO, "syscall mode's waits switched %u time%s, between uprobes and "
		       "tracepoints as the rates moved; on the tracepoints %.0f s of %.0f",
		       sw->switches, sw->switches == 1 ? "" : "s", tracepoints_ns(s, now) / 1e9,
		       (now - sw->start_ns) / 1e9);
	if (sw->count.on)
		jw_wait_count_end(s->attach, &sw->count, &sw->costs);
	free(sw);
	s->waits = NULL;
}
