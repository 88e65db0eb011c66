// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/when.h"
#include "report/summary.h"

#define MAX_PIDS 8

static const char *const causes[] = { "cpu", "runqueue", "blocked", "io" };
#define N_CAUSES 4

/* What withheld a jank's files, as the events say it; the last is any other reason. */
static const char *const withheld_keys[] = { "back_off", "budget", "quota", "trace_window",
					     "other" };
static const char *const withheld_text[] = { "back-off", "budget", "quota", "trace window",
					     "other" };
#define N_WITHHELD 5

/* The strings seen for a field of a group, how often, and the longest jank of each. */
struct tally {
	struct {
		char *s;
		uint64_t n;
		double longest_ms;
	} *v;
	size_t n, cap;
};

struct group {
	size_t id;		/* the order it was made in */
	char *process;
	char *key;		/* the group key, or the handler when the events have none */
	bool by_handler;
	double *walls;		/* the janks' (not the hangs') */
	size_t n_walls, cap_walls;
	double total_ms;
	uint64_t hangs;
	uint64_t cause[N_CAUSES];
	double split_ms[N_CAUSES];	/* the janks' cpu, runq, blocked less io, io */
	uint64_t written;
	uint64_t withheld[N_WITHHELD];
	struct tally handlers, stacks;
	uint32_t pids[MAX_PIDS];
	size_t n_pids;
	bool more_pids;
	uint64_t first_ms, last_ms;
};

struct jw_summary {
	struct group *groups;
	size_t n, cap;
	uint64_t janks, hangs, written, bad_lines;
	uint64_t withheld[N_WITHHELD];
	uint64_t first_ms, last_ms;
	bool sorted;
	size_t *rank;		/* by id, once sorted */
};

struct jw_summary *jw_summary__new(void)
{
	return calloc(1, sizeof(struct jw_summary));
}

static void tally_free(struct tally *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
}

void jw_summary__free(struct jw_summary *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->groups[i].process);
		free(s->groups[i].key);
		free(s->groups[i].walls);
		tally_free(&s->groups[i].handlers);
		tally_free(&s->groups[i].stacks);
	}
	free(s->groups);
	free(s->rank);
	free(s);
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Counts @str (NULL: nothing) seen with a jank of @wall_ms. 0 or -ENOMEM. */
static int tally_add(struct tally *t, const char *str, double wall_ms)
{
	size_t i;

	if (!str || !*str)
		return 0;
	for (i = 0; i < t->n && strcmp(t->v[i].s, str); i++)
		;
	if (i == t->n) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 4;
			void *v = realloc(t->v, cap * sizeof(*t->v));

			if (!v)
				return -ENOMEM;
			t->v = v;
			t->cap = cap;
		}
		t->v[i].s = strdup(str);
		if (!t->v[i].s)
			return -ENOMEM;
		t->v[i].n = 0;
		t->v[i].longest_ms = 0;
		t->n++;
	}
	t->v[i].n++;
	if (wall_ms > t->v[i].longest_ms)
		t->v[i].longest_ms = wall_ms;
	return 0;
}

/* The string seen most often; a tie goes to the one seen with the longest jank. NULL: none. */
static const char *tally_top(const struct tally *t)
{
	size_t i, best = 0;

	for (i = 1; i < t->n; i++)
		if (t->v[i].n > t->v[best].n ||
		    (t->v[i].n == t->v[best].n && t->v[i].longest_ms > t->v[best].longest_ms))
			best = i;
	return t->n ? t->v[best].s : NULL;
}

/* The group of @e, made when new; NULL on ENOMEM. */
static struct group *group_of(struct jw_summary *s, const struct jw_summary_event *e)
{
	bool by_handler = !e->group || !*e->group;
	const char *key = by_handler ? e->handler : e->group;
	struct group *g;
	size_t i;

	for (i = 0; i < s->n; i++) {
		g = &s->groups[i];
		if (g->by_handler == by_handler && same(g->process, e->process) &&
		    same(g->key, key))
			return g;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		void *v = realloc(s->groups, cap * sizeof(*s->groups));

		if (!v)
			return NULL;
		s->groups = v;
		s->cap = cap;
	}
	g = &s->groups[s->n];
	memset(g, 0, sizeof(*g));
	g->id = s->n;
	g->by_handler = by_handler;
	g->process = strdup(e->process ? e->process : "");
	g->key = strdup(key ? key : "");
	if (!g->process || !g->key) {
		free(g->process);
		free(g->key);
		return NULL;
	}
	s->n++;
	return g;
}

static size_t withheld_index(const char *w)
{
	size_t i;

	for (i = 0; w && i < N_WITHHELD - 1; i++)
		if (!strcmp(w, withheld_keys[i]))
			return i;
	return N_WITHHELD - 1;
}

static void span(uint64_t *first, uint64_t *last, uint64_t t)
{
	if (!*first || t < *first)
		*first = t;
	if (t > *last)
		*last = t;
}

int jw_summary__add(struct jw_summary *s, const struct jw_summary_event *e, size_t *id)
{
	struct group *g = group_of(s, e);
	size_t i;

	if (!g)
		return -ENOMEM;
	if (id)
		*id = g->id;
	s->sorted = false;
	span(&s->first_ms, &s->last_ms, e->begin_ms);
	span(&g->first_ms, &g->last_ms, e->begin_ms);
	for (i = 0; i < g->n_pids && g->pids[i] != e->pid; i++)
		;
	if (i == g->n_pids) {
		if (g->n_pids < MAX_PIDS)
			g->pids[g->n_pids++] = e->pid;
		else
			g->more_pids = true;
	}
	if (e->files) {
		g->written++;
		s->written++;
	} else {
		/* A file the quota refused says so in log_over_limit, with or without a reason. */
		i = e->over_limit && !e->withheld ? withheld_index("quota") :
						    withheld_index(e->withheld);
		g->withheld[i]++;
		s->withheld[i]++;
	}
	if (e->hang) {
		g->hangs++;
		s->hangs++;
		return 0;
	}
	s->janks++;
	if (g->n_walls == g->cap_walls) {
		size_t cap = g->cap_walls ? 2 * g->cap_walls : 16;
		double *v = realloc(g->walls, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->walls = v;
		g->cap_walls = cap;
	}
	g->walls[g->n_walls++] = e->wall_ms;
	g->total_ms += e->wall_ms;
	g->split_ms[0] += e->cpu_ms;
	g->split_ms[1] += e->runq_ms;
	g->split_ms[2] += e->blocked_ms > e->io_ms ? e->blocked_ms - e->io_ms : 0;
	g->split_ms[3] += e->io_ms;
	for (i = 0; i < N_CAUSES; i++)
		if (e->cause && !strcmp(e->cause, causes[i]))
			g->cause[i]++;
	if (tally_add(&g->handlers, e->handler, e->wall_ms) ||
	    tally_add(&g->stacks, e->heaviest_stack, e->wall_ms))
		return -ENOMEM;
	return 0;
}

void jw_summary__bad_line(struct jw_summary *s)
{
	s->bad_lines++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Largest total time first; then the most hangs; then by name, so the order is stable. */
static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c;

	if (x->total_ms != y->total_ms)
		return x->total_ms > y->total_ms ? -1 : 1;
	if (x->hangs != y->hangs)
		return x->hangs > y->hangs ? -1 : 1;
	c = strcmp(x->process, y->process);
	return c ? c : strcmp(x->key, y->key);
}

static void sort(struct jw_summary *s)
{
	size_t i;

	if (s->sorted)
		return;
	for (i = 0; i < s->n; i++)
		if (s->groups[i].n_walls)
			qsort(s->groups[i].walls, s->groups[i].n_walls, sizeof(double), cmp_double);
	if (s->n)
		qsort(s->groups, s->n, sizeof(*s->groups), cmp_group);
	free(s->rank);
	s->rank = malloc((s->n ? s->n : 1) * sizeof(*s->rank));
	for (i = 0; s->rank && i < s->n; i++)
		s->rank[s->groups[i].id] = i;
	s->sorted = true;
}

/* The nearest-rank quantile @permille / 1000 of @g's sorted walls; 0 with none. */
static double quantile(const struct group *g, size_t permille)
{
	size_t k;

	if (!g->n_walls)
		return 0;
	k = (g->n_walls * permille + 999) / 1000;
	return g->walls[k ? k - 1 : 0];
}

void jw_summary__totals(const struct jw_summary *s, struct jw_summary_totals *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->janks = s->janks;
	t->hangs = s->hangs;
	t->groups = s->n;
	t->written = s->written;
	for (i = 0; i < N_WITHHELD; i++)
		t->withheld += s->withheld[i];
	t->bad_lines = s->bad_lines;
	t->first_ms = s->first_ms;
	t->last_ms = s->last_ms;
}

size_t jw_summary__groups(struct jw_summary *s)
{
	sort(s);
	return s->n;
}

void jw_summary__group(struct jw_summary *s, size_t rank, struct jw_summary_group *out)
{
	const struct group *g;
	size_t i;

	sort(s);
	g = &s->groups[rank];
	memset(out, 0, sizeof(*out));
	out->process = g->process;
	out->key = g->key;
	out->by_handler = g->by_handler;
	out->handler = tally_top(&g->handlers);
	out->heaviest_stack = tally_top(&g->stacks);
	out->janks = g->n_walls;
	out->hangs = g->hangs;
	out->p50_ms = quantile(g, 500);
	out->p95_ms = quantile(g, 950);
	out->max_ms = quantile(g, 1000);
	out->total_ms = g->total_ms;
	memcpy(out->cause, g->cause, sizeof(out->cause));
	memcpy(out->split_ms, g->split_ms, sizeof(out->split_ms));
	out->written = g->written;
	for (i = 0; i < N_WITHHELD; i++)
		out->withheld += g->withheld[i];
	out->pids = g->pids;
	out->n_pids = g->n_pids;
	out->more_pids = g->more_pids;
	out->first_ms = g->first_ms;
	out->last_ms = g->last_ms;
}

size_t jw_summary__rank(struct jw_summary *s, size_t id)
{
	sort(s);
	return s->rank && id < s->n ? s->rank[id] : id;
}

static size_t shown(const struct jw_summary *s, size_t top)
{
	return top && top < s->n ? top : s->n;
}

/* ", back-off 110, budget 7" for the non-zero counts of @w. */
static void withheld_line(const uint64_t *w, FILE *f)
{
	size_t i;

	for (i = 0; i < N_WITHHELD; i++)
		if (w[i])
			fprintf(f, ", %s %" PRIu64, withheld_text[i], w[i]);
}

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		t += v[i];
	return t;
}

static void group_text(const struct group *g, size_t rank, FILE *f)
{
	const char *stack = tally_top(&g->stacks), *handler = tally_top(&g->handlers);
	size_t i;

	fprintf(f, "#%zu %s: %s%s\n", rank, g->process[0] ? g->process : "?",
		g->key[0] ? g->key : "(no stack, no handler)", g->by_handler ? " (handler)" : "");
	fprintf(f, "    janks %zu, hangs %" PRIu64, g->n_walls, g->hangs);
	if (g->n_walls)
		fprintf(f, "; wall p50 %.1f ms, p95 %.1f ms, max %.1f ms, total %.1f s",
			quantile(g, 500), quantile(g, 950), quantile(g, 1000), g->total_ms / 1000);
	fputc('\n', f);
	if (g->n_walls)
		fprintf(f, "    cause cpu %" PRIu64 ", runqueue %" PRIu64 ", blocked %" PRIu64
			", io %" PRIu64 "\n", g->cause[0], g->cause[1], g->cause[2], g->cause[3]);
	if (handler)
		fprintf(f, "    handler %s\n", handler);
	fprintf(f, "    files written %" PRIu64 ", withheld %" PRIu64, g->written,
		sum(g->withheld, N_WITHHELD));
	withheld_line(g->withheld, f);
	fprintf(f, "\n    pid");
	for (i = 0; i < g->n_pids; i++)
		fprintf(f, "%s%u", i ? ", " : " ", g->pids[i]);
	fprintf(f, "%s\n", g->more_pids ? ", ..." : "");
	if (stack)
		fprintf(f, "    heaviest %s\n", stack);
}

int jw_summary__write_text(struct jw_summary *s, const char *dir, size_t top, FILE *f)
{
	char first[32], last[32];
	size_t i, n;

	sort(s);
	n = shown(s, top);
	jw_when_text(s->first_ms, first, sizeof(first));
	jw_when_text(s->last_ms, last, sizeof(last));
	fprintf(f, "%s: %" PRIu64 " janks, %" PRIu64 " hangs in %zu groups, from %s to %s\n", dir,
		s->janks, s->hangs, s->n, first, last);
	fprintf(f, "files written for %" PRIu64 ", withheld for %" PRIu64, s->written,
		sum(s->withheld, N_WITHHELD));
	withheld_line(s->withheld, f);
	fputc('\n', f);
	if (s->bad_lines)
		fprintf(f, "%" PRIu64 " lines were not events (damaged or cut short)\n",
			s->bad_lines);
	if (n < s->n)
		fprintf(f, "the %zu groups that took the most time:\n", n);
	for (i = 0; i < n; i++) {
		fputc('\n', f);
		group_text(&s->groups[i], i + 1, f);
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

static void json_withheld(struct jw_buf *b, const uint64_t *w)
{
	size_t i;

	jw_json_key(b, "withheld", false);
	jw_buf_putc(b, '{');
	for (i = 0; i < N_WITHHELD; i++) {
		jw_json_key(b, withheld_keys[i], i == 0);
		jw_buf_printf(b, "%" PRIu64, w[i]);
	}
	jw_buf_putc(b, '}');
}

static void group_json(const struct group *g, struct jw_buf *b)
{
	size_t i;

	jw_buf_putc(b, '{');
	jw_json_key(b, "process", true);
	jw_json_str(b, g->process);
	jw_json_key(b, g->by_handler ? "handler_key" : "group", false);
	jw_json_str(b, g->key);
	jw_json_key(b, "handler", false);
	jw_json_str(b, tally_top(&g->handlers));
	jw_json_u64_field(b, "janks", g->n_walls);
	jw_json_u64_field(b, "hangs", g->hangs);
	jw_json_key(b, "wall_ms", false);
	jw_buf_putc(b, '{');
	jw_json_key(b, "p50", true);
	jw_json_num(b, quantile(g, 500), 3);
	jw_json_key(b, "p95", false);
	jw_json_num(b, quantile(g, 950), 3);
	jw_json_key(b, "max", false);
	jw_json_num(b, quantile(g, 1000), 3);
	jw_json_key(b, "total", false);
	jw_json_num(b, g->total_ms, 3);
	jw_buf_putc(b, '}');
	jw_json_key(b, "cause", false);
	jw_buf_putc(b, '{');
	for (i = 0; i < N_CAUSES; i++) {
		jw_json_key(b, causes[i], i == 0);
		jw_buf_printf(b, "%" PRIu64, g->cause[i]);
	}
	jw_buf_putc(b, '}');
	jw_json_u64_field(b, "files_written", g->written);
	json_withheld(b, g->withheld);
	jw_json_key(b, "pids", false);
	jw_buf_putc(b, '[');
	for (i = 0; i < g->n_pids; i++)
		jw_buf_printf(b, "%s%u", i ? "," : "", g->pids[i]);
	jw_buf_putc(b, ']');
	jw_json_u64_field(b, "first_time", g->first_ms);
	jw_json_u64_field(b, "last_time", g->last_ms);
	jw_json_key(b, "heaviest_stack", false);
	jw_json_str(b, tally_top(&g->stacks));
	jw_buf_putc(b, '}');
}

void jw_summary__write_json(struct jw_summary *s, const char *dir, size_t top, struct jw_buf *b)
{
	size_t i, n;

	sort(s);
	n = shown(s, top);
	jw_buf_putc(b, '{');
	jw_json_key(b, "log_dir", true);
	jw_json_str(b, dir);
	jw_json_u64_field(b, "janks", s->janks);
	jw_json_u64_field(b, "hangs", s->hangs);
	jw_json_u64_field(b, "groups_total", s->n);
	jw_json_u64_field(b, "first_time", s->first_ms);
	jw_json_u64_field(b, "last_time", s->last_ms);
	jw_json_u64_field(b, "files_written", s->written);
	json_withheld(b, s->withheld);
	jw_json_u64_field(b, "bad_lines", s->bad_lines);
	jw_json_key(b, "groups", false);
	jw_buf_putc(b, '[');
	for (i = 0; i < n; i++) {
		if (i)
			jw_buf_putc(b, ',');
		group_json(&s->groups[i], b);
	}
	jw_buf_puts(b, "]}\n");
}
