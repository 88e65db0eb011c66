// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "attach/samplermode.h"
#include "base/clocks.h"
#include "base/log.h"
#include "session/session_samplers.h"

#define NS_PER_S 1000000000ULL
/* How often the watched threads' switches are counted. */
#define RATE_EVERY_NS NS_PER_S

struct session_samplers {
	bool live;		/* samplers=2: chosen again as the rate moves */
	char why[256];		/* what the kind in force was chosen by */
	uint64_t start_ns;
	uint64_t since_ns;	/* when the kind in force began */
	uint64_t cpu_total_ns;	/* time with one per CPU before since_ns */
	unsigned int switches;	/* changes of kind */
	uint64_t rate_ns;	/* the last count */
	double rate;		/* the watched threads' switches a second then */
	/* Each slot's thread and its switches at the last count. */
	pid_t tid[JW_MAX_PIDS];
	uint64_t seen[JW_MAX_PIDS];
};

/* The kind in force, said as a noun. */
static const char *kind_said(const struct session *s)
{
	return s->how.cpu_samplers ? "one sampler per CPU" : "one sampler per watched thread";
}

/* The time with one sampler per CPU so far, the kind in force's share included. */
static uint64_t cpu_samplers_ns(const struct session *s, uint64_t now)
{
	return s->samplers->cpu_total_ns + (s->how.cpu_samplers ? now - s->samplers->since_ns : 0);
}

/* Thread @tid of process @pid's context switches so far, both kinds; false when unknown. */
static bool thread_switches(pid_t pid, pid_t tid, uint64_t *n)
{
	char path[64], line[128];
	unsigned long long v;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	*n = 0;
	while (found < 2 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			*n += v;
			found++;
		}
	}
	fclose(f);
	return found == 2;
}

/* The watched threads' switches a second since the last count. */
static double switch_rate(struct session *s, uint64_t now)
{
	struct session_samplers *ss = s->samplers;
	uint64_t sum = 0, n;
	size_t i;

	for (i = 0; i < s->n_slots && i < JW_MAX_PIDS; i++) {
		const struct jw_watched *w = s->watched[i];

		if (!w || !w->attached ||
		    !thread_switches(w->proc.target.pid, w->proc.target.tid, &n)) {
			ss->tid[i] = 0;
			continue;
		}
		if (ss->tid[i] == w->proc.target.tid && n >= ss->seen[i])
			sum += n - ss->seen[i];
		ss->tid[i] = w->proc.target.tid;
		ss->seen[i] = n;
	}
	return sum * 1e9 / (double)(now - ss->rate_ns);
}

static unsigned int period_ms(const struct session *s)
{
	return (unsigned int)s->cfg->params.v[JW_P_SAMPLE_PERIOD_MS];
}

/* One sampler on each watched thread. 0, or the first -errno (said). */
static int attach_per_thread(struct session *s)
{
	size_t i;
	int err;

	for (i = 0; i < s->n_slots; i++) {
		const struct jw_watched *w = s->watched[i];

		if (!w || !w->attached)
			continue;
		err = jw_attach__sampler(s->attach, w->proc.target.pid, w->proc.target.tid,
					 period_ms(s));
		if (err)
			return err;
	}
	return 0;
}

/* The watched threads' own samplers off; how many. */
static size_t drop_per_thread(struct session *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && s->watched[i]->attached)
			n += jw_attach__drop_samplers(s->attach, s->watched[i]->proc.target.pid);
	return n;
}

/* The kind in force becomes the other, taken off first, then attached; false when it failed. */
static bool switch_kind(struct session *s, uint64_t now, const char *why)
{
	struct session_samplers *ss = s->samplers;
	size_t off;
	int err;

	if (s->how.cpu_samplers) {
		off = jw_attach__drop_samplers(s->attach, 0);
		s->how.cpu_samplers = false;
		err = attach_per_thread(s);
		if (err) {
			/* Back to the CPUs' (a thread's own that failed is said already). */
			drop_per_thread(s);
			s->how.cpu_samplers = !jw_attach__cpu_samplers(s->attach, period_ms(s));
			ss->live = false;
			jw_log(JW_LOG_WARN, "samplers: staying on %s from now (%s)", kind_said(s),
			       "a watched thread's own sampler could not be attached");
			return false;
		}
		ss->cpu_total_ns += now - ss->since_ns;
	} else {
		off = drop_per_thread(s);
		err = jw_attach__cpu_samplers(s->attach, period_ms(s));
		if (err) {
			err = attach_per_thread(s);
			ss->live = false;
			jw_log(JW_LOG_WARN, "samplers: staying on %s from now (samplers on the CPUs "
			       "cannot be attached)%s", kind_said(s),
			       err ? ": some watched threads have no stacks" : "");
			return false;
		}
		s->how.cpu_samplers = true;
	}
	ss->since_ns = now;
	ss->switches++;
	snprintf(ss->why, sizeof(ss->why), "%s", why);
	jw_log(JW_LOG_INFO, "samplers: %s from now, %zu taken off (%s)", kind_said(s), off, why);
	return true;
}

int session_samplers_start(struct session *s)
{
	int64_t asked = s->cfg->params.v[JW_P_SAMPLERS];
	struct session_samplers *ss;
	int err;

	ss = s->samplers = calloc(1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	ss->live = asked == 2;
	ss->start_ns = ss->since_ns = ss->rate_ns = jw_clock_ns(CLOCK_MONOTONIC);
	s->how.cpu_samplers = asked == 1;
	if (asked == 2)
		snprintf(ss->why, sizeof(ss->why), "samplers=2: nothing counted yet");
	else
		snprintf(ss->why, sizeof(ss->why), "samplers=%lld", (long long)asked);
	if (s->how.cpu_samplers) {
		err = jw_attach__cpu_samplers(s->attach, period_ms(s));
		if (err)
			return err;
	}
	jw_log(JW_LOG_DEBUG, "samplers: %s (%s%s)", kind_said(s), ss->why,
	       ss->live ? "; chosen again as the watched threads' switches a second move" : "");
	return 0;
}

void session_samplers_tick(struct session *s, uint64_t now)
{
	struct session_samplers *ss = s->samplers;
	struct jw_sampler_rates r;
	char detail[192], why[224];
	long cpus;
	bool per_cpu;

	if (!ss || !ss->live || now - ss->rate_ns < RATE_EVERY_NS)
		return;
	ss->rate = switch_rate(s, now);
	ss->rate_ns = now;
	if (s->how.holding || (ss->switches && now - ss->since_ns < JW_SAMPLERS_GAP_S * NS_PER_S))
		return;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	r = (struct jw_sampler_rates){ .switches = ss->rate, .cpus = cpus > 0 ? (unsigned)cpus : 1,
				       .period_ms = period_ms(s) };
	per_cpu = jw_samplers_per_cpu(&r, s->how.cpu_samplers, detail, sizeof(detail));
	snprintf(why, sizeof(why), "samplers=2: %s", detail);
	if (per_cpu != s->how.cpu_samplers)
		switch_kind(s, now, why);
}

void session_samplers_say(const struct session *s, FILE *f, uint64_t now)
{
	const struct session_samplers *ss = s->samplers;

	if (!ss)
		return;
	fprintf(f, "samplers: %s for %.0f s, the watched threads switching %.0f times a second "
		"(%s)\n", kind_said(s), (now - ss->since_ns) / 1e9, ss->rate, ss->why);
	if (ss->switches)
		fprintf(f, "samplers: switched %u time%s; one per CPU %.0f s of %.0f\n",
			ss->switches, ss->switches == 1 ? "" : "s", cpu_samplers_ns(s, now) / 1e9,
			(now - ss->start_ns) / 1e9);
}

void session_samplers_finish(struct session *s)
{
	struct session_samplers *ss = s->samplers;
	uint64_t now = jw_clock_ns(CLOCK_MONOTONIC);

	if (!ss)
		return;
	if (ss->switches)
		jw_log(JW_LOG_INFO, "samplers switched %u time%s, between one per watched thread "
		       "and one per CPU as the watched threads' switches a second moved; one per "
		       "CPU %.0f s of %.0f", ss->switches,
		       ss->switches == 1 ? "" : "s", cpu_samplers_ns(s, now) / 1e9,
		       (now - ss->start_ns) / 1e9);
	free(ss);
	s->samplers = NULL;
}
