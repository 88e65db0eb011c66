// SPDX-License-Identifier: GPL-2.0-only
/*
 * A watched process's handler sites' cost guard (handler_sites): measured once a second, hooked
 * in windows past the limit, and their rows' counts scaled meanwhile (sitescale.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "session/watched.h"

/* Whether @w's preset hooks handler sites. */
static bool has_sites(const struct jw_watched *w)
{
	size_t k;

	for (k = 0; k < w->preset.n_probes; k++)
		if (w->preset_probes[k].dp.site)
			return true;
	return w->preset.n_callbacks > 0;
}

/* The probe ids of @w's handler sites (bit i: id i). */
static uint32_t site_probes(const struct jw_watched *w, const struct jw_watch_how *how)
{
	uint32_t base = how->cfg->n_probes + 1, mask = 0;
	size_t k;

	for (k = 0; k < w->preset.n_probes; k++)
		if (w->preset_probes[k].dp.site && base + k < JW_MAX_PROBES)
			mask |= 1U << (base + k);
	if (w->preset.n_callbacks && base + w->preset.n_probes < JW_MAX_PROBES)
		mask |= 1U << (base + w->preset.n_probes);
	return mask;
}

/* The loop's iterations so far: the tasks of its waits' row. */
static uint64_t loop_iters(const struct jw_watched *w, const struct jw_watch_how *how)
{
	return jw_attach__outer_count(how->attach, w->slot, how->cfg->n_probes);
}

/* The site rows of one thread, gathered from a walk of every row. */
struct site_rows {
	uint32_t pid, tid, probes;	/* whose, and its sites' probe ids (bit i: id i) */
	struct jw_row_count *rows;
	size_t n, cap;
	bool failed;
};

static void gather_row(const struct jw_stats_key *key, const struct jw_stats_val *v, void *ctx)
{
	struct site_rows *g = ctx;
	struct jw_row_count *bigger;

	if (!key || key->pid != g->pid || key->tid != g->tid || !key->inner ||
	    key->probe_id >= JW_MAX_PROBES || !(g->probes >> key->probe_id & 1) || g->failed)
		return;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		bigger = realloc(g->rows, g->cap * sizeof(*bigger));
		if (!bigger) {
			g->failed = true;
			return;
		}
		g->rows = bigger;
	}
	g->rows[g->n++] = (struct jw_row_count){ .key = *key, .count = v->count };
}

/*
 * A window of @w's handler sites opens (@open: they were just hooked, or stay so a second more)
 * or closes (they come off next), on their rows' counts now. Without them, nothing is scaled.
 */
static void scale_window(struct jw_watched *w, const struct jw_watch_how *how, bool open)
{
	const struct jw_target *t = &w->proc.target;
	struct site_rows g = { .pid = (uint32_t)t->pid, .tid = (uint32_t)t->tid,
			       .probes = site_probes(w, how) };
	uint64_t iters = loop_iters(w, how), calls = 0;
	size_t i;
	int ret;

	jw_attach__stats_each(how->attach, gather_row, &g);
	if (g.failed)
		ret = -ENOMEM;
	else if (open)
		ret = jw_sitescale_open(&w->scale, g.rows, g.n, iters, how->extras);
	else
		ret = jw_sitescale_close(&w->scale, g.rows, g.n, iters);
	free(g.rows);
	if (ret) {
		jw_sitescale_reset(&w->scale);
		jw_log(JW_LOG_WARN, "pid %d (%s): cannot read its handler sites' rows (%s): their "
		       "counts are not scaled for this window", t->pid, t->comm, strerror(-ret));
		return;
	}
	if (open)
		return;
	for (i = 0; i < w->scale.n; i++)
		calls += w->scale.rows[i].in_window;
	jw_log(JW_LOG_DEBUG, "pid %d (%s): handler sites off; their window counted %llu calls in "
	       "%llu iterations of the loop, in %zu rows, scaled by the iterations while off",
	       t->pid, t->comm, (unsigned long long)calls,
	       (unsigned long long)w->scale.iters_window, w->scale.n);
}

void jw_watched__scale_sites(struct jw_watched *w, const struct jw_watch_how *how)
{
	uint64_t *counts;
	size_t i;

	if (!w->scale.n || !how->attach)
		return;
	counts = malloc(w->scale.n * sizeof(*counts));
	if (!counts)
		return;
	for (i = 0; i < w->scale.n; i++)
		counts[i] = jw_attach__row_count(how->attach, &w->scale.rows[i].key);
	jw_sitescale_gap(&w->scale, counts, loop_iters(w, how), how->extras);
	free(counts);
}

/* Said once, the first time @w's sites go off: how they sample from now on. */
static void say_windows(const struct jw_watched *w, double rate, int64_t most,
			const struct jw_sites_plan *plan)
{
	char how[96];

	if (plan->window_ns == JW_SITES_WINDOW_NS)
		snprintf(how, sizeof(how), "one second in every %llu",
			 (unsigned long long)plan->every);
	else
		snprintf(how, sizeof(how), "%.2f s in every %.0f s, one %llu-th of the time",
			 plan->window_ns / 1e9, plan->period_ns / 1e9,
			 (unsigned long long)plan->every);
	jw_log(JW_LOG_WARN, "pid %d (%s): %.0f callbacks/s through its handler sites, over "
	       "handler_sites=%lld: from now on they are hooked %s (a sample, its rows' counts "
	       "scaled to the loop's iterations; the stacks name its janks' handlers meanwhile)",
	       w->proc.target.pid, w->proc.target.comm, rate, (long long)most, how);
}

void jw_watched__guard_sites(struct jw_watched *w, const struct jw_watch_how *how,
			     const struct jw_task_state *st, uint64_t now)
{
	int64_t most = how->cfg->params.v[JW_P_HANDLER_SITES];
	uint32_t calls = st->site_calls - w->site_calls_seen;
	uint64_t window = w->site_window_ns ? w->site_window_ns : JW_SITES_WINDOW_NS;
	struct jw_sites_plan plan;
	double rate;

	if (!how->syscall_mode || !has_sites(w))
		return;
	if (w->sites_off_until) {
		/* Not hooked again while the last window's links are still coming off. */
		if (now < w->sites_off_until || jw_attach__links_going(how->attach, w->slot)) {
			jw_watched__scale_sites(w, how);
			return;
		}
		/* The next window: hooked again, its rate measured again from now. */
		jw_watched__attach_sites(w, how);
		scale_window(w, how, true);
		w->sites_off_until = 0;
		w->site_calls_seen = st->site_calls;
		w->site_seen_ns = now;
		return;
	}
	if (w->site_seen_ns && now - w->site_seen_ns < window)
		return;
	if (w->site_seen_ns) {
		rate = calls * 1e9 / (double)(now - w->site_seen_ns);
		if (rate > (double)most && !w->scale.open) {
			/* The first window: the sites stay on a second more, counted from now. */
			scale_window(w, how, true);
		} else if (rate > (double)most) {
			/* Off long enough that over time it makes at most @most calls a second. */
			plan = jw_sites_plan(rate, (double)most);
			scale_window(w, how, false);
			jw_attach__drop_sites(how->attach, w->proc.target.pid, w->slot);
			/*
			 * Off N - 1 times as long as this window was on (to the first look past
			 * its length), so that the share hooked is one N-th.
			 */
			w->sites_off_until = now + (now - w->site_seen_ns) * (plan.every - 1);
			w->site_window_ns = plan.window_ns;
			if (!w->sites_windowed++)
				say_windows(w, rate, most, &plan);
		} else {
			/* Under the limit: hooked from now on, every call counted. */
			jw_sitescale_reset(&w->scale);
			w->site_window_ns = 0;
		}
	}
	w->site_calls_seen = st->site_calls;
	w->site_seen_ns = now;
}
