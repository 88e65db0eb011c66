// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_BUDGET_PIDS 1024
#define MAX_GROUPS 4096

/*
 * Reports spent by one process (stack logs, hangs: @id the pid, @start its start time) or one
 * uid (traces: @start 0) in the current window.
 */
struct budget {
	uint32_t id;
	uint64_t start;
	uint32_t used;
	uint64_t window_start_s;
};

/* How many janks of one group one process had, for the Fibonacci back-off. */
struct group_count {
	uint32_t pid;
	uint64_t start;
	uint64_t hash;		/* of the group key */
	uint64_t count;
	uint64_t last;		/* when last seen, in jank order: the oldest is reused first */
};

enum budget_kind { BUDGET_STACK = 0, BUDGET_TRACE, BUDGET_HANG, BUDGET_KINDS };

/* The end times of one process's recent tasks over the burst's T ms, a ring of N. */
struct burst_ring {
	uint32_t pid;
	uint64_t start;
	uint64_t *ends;
	uint32_t head;		/* the oldest */
	uint32_t n;
	uint64_t last;		/* when last used, in task order: the oldest is reused first */
};

#define MAX_BURST_PROCS 64

static const char *const budget_names[BUDGET_KINDS] = { "stack", "trace", "hang" };

struct budget_list {
	struct budget v[MAX_BUDGET_PIDS];
	size_t n;
};

struct jw_policy {
	struct jw_params params;
	bool all;
	uint64_t window_s;		/* a day, or an hour in developer mode */
	struct budget_list budgets[BUDGET_KINDS];
	struct group_count groups[MAX_GROUPS];
	size_t n_groups;
	uint64_t janks;
	bool changed;			/* budgets spent since the last jw_policy__save() */
	struct burst_ring bursts[MAX_BURST_PROCS];
	uint32_t burst_cap;		/* N the rings were made for */
	uint64_t tasks;
};

struct jw_policy *jw_policy__new(const struct jw_params *params, bool all, bool dev)
{
	struct jw_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->params = *params;
	p->all = all;
	p->window_s = dev ? 3600 : 86400;
	return p;
}

void jw_policy__set_params(struct jw_policy *p, const struct jw_params *params)
{
	p->params = *params;
}

void jw_policy__free(struct jw_policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < MAX_BURST_PROCS; i++)
		free(p->bursts[i].ends);
	free(p);
}

/* The jank threshold: sample_interval under log_type 1, threshold_ms otherwise. */
static uint64_t jank_threshold_ns(const struct jw_params *params)
{
	int64_t ms = params->v[JW_P_LOG_TYPE] == 1 ? params->v[JW_P_SAMPLE_INTERVAL] :
						    params->v[JW_P_THRESHOLD_MS];

	return (uint64_t)ms * 1000000;
}

uint64_t jw_policy__min_threshold_ns(const struct jw_params *params)
{
	uint64_t min = jank_threshold_ns(params);

	if (params->burst.on && (uint64_t)params->burst.over_ms * 1000000 < min)
		min = (uint64_t)params->burst.over_ms * 1000000;
	return min;
}

static struct budget *budget_of(struct budget_list *l, uint32_t id, uint64_t start)
{
	size_t i, oldest = 0;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].id == id && l->v[i].start == start)
			return &l->v[i];
		if (l->v[i].window_start_s < l->v[oldest].window_start_s)
			oldest = i;
	}
	/* Full: reuse the slot whose window started longest ago. */
	i = l->n < MAX_BUDGET_PIDS ? l->n++ : oldest;
	l->v[i] = (struct budget){ .id = id, .start = start };
	return &l->v[i];
}

/* FNV-1a: the group key's hash. */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Whether @n is a Fibonacci number: the occurrences that write files (1, 2, 3, 5, 8, ...). */
static bool is_fibonacci(uint64_t n)
{
	uint64_t a = 1, b = 2, c;

	while (a < n) {
		c = a + b;
		a = b;
		b = c;
	}
	return a == n;
}

/* Counts one more jank of @t's group; whether this occurrence may write files. */
static bool group_allows(struct jw_policy *p, const struct jw_task_facts *t)
{
	uint64_t h = hash_of(t->group);
	struct group_count *g = NULL;
	size_t i, oldest = 0;

	p->janks++;
	for (i = 0; i < p->n_groups && !g; i++) {
		if (p->groups[i].pid == t->pid && p->groups[i].start == t->proc_start_boot_ns &&
		    p->groups[i].hash == h)
			g = &p->groups[i];
		else if (p->groups[i].last < p->groups[oldest].last)
			oldest = i;
	}
	if (!g) {
		g = &p->groups[p->n_groups < MAX_GROUPS ? p->n_groups++ : oldest];
		*g = (struct group_count){ .pid = t->pid, .start = t->proc_start_boot_ns, .hash = h };
	}
	g->last = p->janks;
	return is_fibonacci(++g->count);
}

/* Whether @b has a report left of @limit in its window, which starts anew when it is over. */
static bool available(struct budget *b, uint64_t limit, uint64_t window_s, uint64_t now_s)
{
	/* A clock stepped back (now before the window's start) starts a new window too. */
	if (!b->window_start_s || now_s >= b->window_start_s + window_s ||
	    now_s < b->window_start_s) {
		b->window_start_s = now_s ? now_s : 1;
		b->used = 0;
	}
	return b->used < limit;
}

/* The budget a file of kind @kind for @t spends: by process, or by uid for traces. */
static struct budget *budget_for(struct jw_policy *p, enum budget_kind kind,
				 const struct jw_task_facts *t)
{
	if (kind == BUDGET_TRACE)
		return budget_of(&p->budgets[BUDGET_TRACE], t->uid, 0);
	return budget_of(&p->budgets[kind], t->pid, t->proc_start_boot_ns);
}

enum jw_verdict jw_policy__decide(struct jw_policy *p, struct jw_task_facts *t)
{
	uint64_t trace_ns = (uint64_t)p->params.v[JW_P_TRACE_THRESHOLD_MS] * 1000000;
	int64_t log_type = p->params.v[JW_P_LOG_TYPE];
	enum budget_kind kind;
	enum jw_verdict want;
	struct budget *b;
	uint64_t limit;

	if (!jw_policy__triage(p, t))
		return JW_VERDICT_NONE;
	if (!t->jank)
		want = JW_VERDICT_STACK;	/* a burst of short tasks: their stacks */
	else if (log_type == 1)
		want = JW_VERDICT_STACK;
	else if (log_type == 2)
		want = JW_VERDICT_TRACE;
	else
		want = t->wall_ns <= trace_ns ? JW_VERDICT_STACK : JW_VERDICT_TRACE;
	if (p->all)
		return want;
	/* Repeats of one group write files at its 1st, 2nd, 3rd, 5th, 8th, ... occurrence. */
	if (t->group && *t->group && !group_allows(p, t)) {
		t->withheld = JW_WITHHELD_BACK_OFF;
		return JW_VERDICT_EVENT;
	}
	/* Stack logs: report_times_per_app per process; traces: one per uid. */
	kind = want == JW_VERDICT_STACK ? BUDGET_STACK : BUDGET_TRACE;
	b = budget_for(p, kind, t);
	limit = want == JW_VERDICT_STACK ? p->params.v[JW_P_REPORT_TIMES_PER_APP] : 1;
	if (!b || !available(b, limit, p->window_s, t->now_s)) {
		t->withheld = JW_WITHHELD_BUDGET;
		return JW_VERDICT_EVENT;
	}
	t->budget = kind + 1;
	return want;
}

const char *jw_withheld_name(enum jw_withheld w)
{
	switch (w) {
	case JW_WITHHELD_BACK_OFF:
		return "back_off";
	case JW_WITHHELD_BUDGET:
		return "budget";
	case JW_WITHHELD_QUOTA:
		return "quota";
	case JW_WITHHELD_TRACE_WINDOW:
		return "trace_window";
	default:
		return NULL;
	}
}

void jw_policy__written(struct jw_policy *p, struct jw_task_facts *t)
{
	struct budget *b;

	if (!t->budget || t->budget > BUDGET_KINDS)
		return;
	b = budget_for(p, (enum budget_kind)(t->budget - 1), t);
	t->budget = 0;
	if (!b)
		return;
	b->used++;
	p->changed = true;
}

uint64_t jw_policy__trace_from_ns(const struct jw_params *params)
{
	switch (params->v[JW_P_LOG_TYPE]) {
	case 0:
		return (uint64_t)params->v[JW_P_TRACE_THRESHOLD_MS] * 1000000;
	case 2:
		return (uint64_t)params->v[JW_P_THRESHOLD_MS] * 1000000;
	default:
		return 0;
	}
}

bool jw_policy__trace_possible(const struct jw_policy *p, const struct jw_task_facts *t)
{
	uint64_t startup_ns = (uint64_t)p->params.v[JW_P_IGNORE_STARTUP_TIME] * 1000000000;
	const struct budget_list *l = &p->budgets[BUDGET_TRACE];
	size_t i;

	if (!jw_policy__trace_from_ns(&p->params) ||
	    t->begin_boot_ns < t->proc_start_boot_ns + startup_ns)
		return false;
	if (p->all)
		return true;
	for (i = 0; i < l->n; i++) {
		const struct budget *b = &l->v[i];

		if (b->id == t->uid && b->window_start_s && t->now_s >= b->window_start_s &&
		    t->now_s < b->window_start_s + p->window_s && b->used >= 1)
			return false;
	}
	return true;
}

enum jw_verdict jw_policy__decide_hang(struct jw_policy *p, struct jw_task_facts *t)
{
	uint64_t startup_ns = (uint64_t)p->params.v[JW_P_IGNORE_STARTUP_TIME] * 1000000000;
	struct budget *b;

	if (t->wall_ns < (uint64_t)p->params.v[JW_P_HANG_MS] * 1000000)
		return JW_VERDICT_NONE;
	if (t->begin_boot_ns < t->proc_start_boot_ns + startup_ns)
		return JW_VERDICT_NONE;
	if (p->all)
		return JW_VERDICT_STACK;
	b = budget_for(p, BUDGET_HANG, t);
	if (!b || !available(b, p->params.v[JW_P_REPORT_TIMES_PER_APP], p->window_s, t->now_s)) {
		t->withheld = JW_WITHHELD_BUDGET;
		return JW_VERDICT_EVENT;
	}
	t->budget = BUDGET_HANG + 1;
	return JW_VERDICT_STACK;
}

/* The burst ring of @t's process, made for N entries; NULL when out of memory. */
static struct burst_ring *burst_of(struct jw_policy *p, const struct jw_task_facts *t)
{
	uint32_t n = p->params.burst.count;
	struct burst_ring *r = NULL;
	size_t i, oldest = 0;

	/* A reload changed N: every ring starts again at the new size. */
	if (p->burst_cap != n) {
		for (i = 0; i < MAX_BURST_PROCS; i++) {
			free(p->bursts[i].ends);
			memset(&p->bursts[i], 0, sizeof(p->bursts[i]));
		}
		p->burst_cap = n;
	}
	for (i = 0; i < MAX_BURST_PROCS && !r; i++) {
		if (p->bursts[i].ends && p->bursts[i].pid == t->pid &&
		    p->bursts[i].start == t->proc_start_boot_ns)
			r = &p->bursts[i];
		else if (p->bursts[i].last < p->bursts[oldest].last)
			oldest = i;
	}
	if (!r) {
		r = &p->bursts[oldest];
		free(r->ends);
		*r = (struct burst_ring){ .pid = t->pid, .start = t->proc_start_boot_ns };
		r->ends = calloc(n, sizeof(*r->ends));
		if (!r->ends)
			return NULL;
	}
	r->last = ++p->tasks;
	return r;
}

/* Counts @t toward its process's burst; the burst's size when @t completes one, else 0. */
static uint32_t count_burst(struct jw_policy *p, const struct jw_task_facts *t)
{
	const struct jw_burst *b = &p->params.burst;
	uint64_t end = t->begin_boot_ns + t->wall_ns, window = (uint64_t)b->within_s * 1000000000;
	struct burst_ring *r;
	uint32_t n;

	if (!b->on || b->count < 2 || t->wall_ns <= (uint64_t)b->over_ms * 1000000)
		return 0;
	r = burst_of(p, t);
	if (!r)
		return 0;
	/* Drop what fell out of the window, then add this one (the ring holds N at most). */
	while (r->n && r->ends[r->head] + window < end) {
		r->head = (r->head + 1) % b->count;
		r->n--;
	}
	r->ends[(r->head + r->n) % b->count] = end;
	if (++r->n < b->count)
		return 0;
	n = r->n;
	r->n = 0;
	r->head = 0;
	return n;
}

bool jw_policy__triage(struct jw_policy *p, struct jw_task_facts *t)
{
	uint64_t startup_ns = (uint64_t)p->params.v[JW_P_IGNORE_STARTUP_TIME] * 1000000000;

	if (t->triaged)
		return t->jank || t->burst;
	t->triaged = true;
	t->jank = false;
	t->early = false;
	t->burst = 0;
	if (t->begin_boot_ns < t->proc_start_boot_ns + startup_ns) {
		t->early = t->wall_ns > jank_threshold_ns(&p->params);
		return false;
	}
	t->jank = t->wall_ns > jank_threshold_ns(&p->params);
	t->burst = count_burst(p, t);
	return t->jank || t->burst;
}

uint64_t jw_policy__window_s(const struct jw_policy *p)
{
	return p->window_s;
}

bool jw_policy__changed(const struct jw_policy *p)
{
	return p->changed;
}

size_t jw_policy__save(struct jw_policy *p, char *buf, size_t len)
{
	size_t k, i, n = 0;

	if (len)
		buf[0] = '\0';
	for (k = 0; k < BUDGET_KINDS; k++) {
		const struct budget_list *l = &p->budgets[k];

		for (i = 0; i < l->n; i++) {
			int w;

			if (!l->v[i].used)
				continue;
			w = snprintf(buf + n, n < len ? len - n : 0, "%s %u %llu %u %llu\n",
				     budget_names[k], l->v[i].id, (unsigned long long)l->v[i].start,
				     l->v[i].used, (unsigned long long)l->v[i].window_start_s);
			if (w > 0)
				n += w;
		}
	}
	p->changed = false;
	return n;
}

int jw_policy__load(struct jw_policy *p, const char *text)
{
	int loaded = 0;

	while (text && *text) {
		const char *eol = strchr(text, '\n');
		char kind[16], line[128];
		unsigned long long start, window;
		unsigned int id, used;
		size_t k, n = eol ? (size_t)(eol - text) : strlen(text);

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : 0), text);
		text += n + (eol != NULL);
		if (sscanf(line, "%15s %u %llu %u %llu", kind, &id, &start, &used, &window) != 5 ||
		    !used || !window)
			continue;
		for (k = 0; k < BUDGET_KINDS && strcmp(kind, budget_names[k]); k++)
			;
		if (k == BUDGET_KINDS)
			continue;
		*budget_of(&p->budgets[k], id, start) = (struct budget){
			.id = id, .start = start, .used = used, .window_start_s = window,
		};
		loaded++;
	}
	return loaded;
}

size_t jw_pick_evenly(size_t n, size_t k, size_t *idx)
{
	size_t i;

	if (k >= n) {
		for (i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	for (i = 0; i < k; i++)
		idx[i] = (2 * i + 1) * n / (2 * k);
	return k;
}

uint64_t jw_pick_weighted(const uint32_t *weights, size_t n, size_t k, uint32_t *counts)
{
	uint64_t total = 0, below = 0;
	size_t i, j;

	for (i = 0; i < n; i++)
		total += weights[i];
	if (total <= k) {
		for (i = 0; i < n; i++)
			counts[i] = weights[i];
		return total;
	}
	for (i = 0; i < n; i++)
		counts[i] = 0;
	/* The middle of each of k equal spans; i walks forward to the sample holding it. */
	for (i = 0, j = 0; j < k; j++) {
		uint64_t at = ((2 * (uint64_t)j + 1) * total) / (2 * k);

		while (i < n && below + weights[i] <= at)
			below += weights[i++];
		if (i < n)
			counts[i]++;
	}
	return k;
}
