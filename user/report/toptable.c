// SPDX-License-Identifier: GPL-2.0-only
/* jankwatch top's table (toptable.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/grow.h"
#include "report/toptable.h"

#define LAST_JANKS 8

struct top_row {
	uint32_t pid;
	char *process, *handler_class, *handler;
	struct jw_stats_val v;
	uint64_t janks;
	double share;
};

/* Janks counted by row key, kept across frames. */
struct jank_count {
	uint32_t pid;
	char *handler_class, *handler;
	uint64_t n;
};

struct jw_top {
	struct top_row *rows;
	size_t n_rows, cap_rows;
	struct jank_count *counts;
	size_t n_counts, cap_counts;
	struct jw_top_jank last[LAST_JANKS];	/* a ring, its strings owned */
	size_t n_last, next_last;
	uint64_t janks;
};

struct jw_top *jw_top__new(void)
{
	return calloc(1, sizeof(struct jw_top));
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static void free_jank(struct jw_top_jank *j)
{
	free((char *)j->handler_class);
	free((char *)j->handler);
	free((char *)j->cause);
}

void jw_top__clear(struct jw_top *t)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++) {
		free(t->rows[i].process);
		free(t->rows[i].handler_class);
		free(t->rows[i].handler);
	}
	t->n_rows = 0;
}

void jw_top__free(struct jw_top *t)
{
	size_t i;

	if (!t)
		return;
	jw_top__clear(t);
	free(t->rows);
	for (i = 0; i < t->n_counts; i++) {
		free(t->counts[i].handler_class);
		free(t->counts[i].handler);
	}
	free(t->counts);
	for (i = 0; i < t->n_last; i++)
		free_jank(&t->last[i]);
	free(t);
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static struct jank_count *count_of(struct jw_top *t, uint32_t pid, const char *cls,
				   const char *handler)
{
	size_t i;

	for (i = 0; i < t->n_counts; i++)
		if (t->counts[i].pid == pid && same(t->counts[i].handler_class, cls) &&
		    same(t->counts[i].handler, handler))
			return &t->counts[i];
	return NULL;
}

int jw_top__row(struct jw_top *t, const struct jw_stats_row *r)
{
	const struct jank_count *c = count_of(t, r->pid, r->handler_class, r->message_name);
	struct top_row *row;

	if (jw_grow((void **)&t->rows, &t->cap_rows, t->n_rows, sizeof(*t->rows), 64))
		return -ENOMEM;
	row = &t->rows[t->n_rows];
	*row = (struct top_row){ .pid = r->pid, .v = *r->val, .janks = c ? c->n : 0 };
	row->process = dup_or_empty(r->process);
	row->handler_class = dup_or_empty(r->handler_class);
	row->handler = dup_or_empty(r->message_name);
	if (!row->process || !row->handler_class || !row->handler) {
		free(row->process);
		free(row->handler_class);
		free(row->handler);
		return -ENOMEM;
	}
	t->n_rows++;
	return 0;
}

int jw_top__jank(struct jw_top *t, const struct jw_top_jank *j)
{
	struct jank_count *c = count_of(t, j->pid, j->handler_class, j->handler);
	struct jw_top_jank *slot = &t->last[t->next_last];

	if (!c) {
		if (jw_grow((void **)&t->counts, &t->cap_counts, t->n_counts, sizeof(*t->counts),
			    32))
			return -ENOMEM;
		c = &t->counts[t->n_counts];
		*c = (struct jank_count){ .pid = j->pid, .handler_class = dup_or_empty(
							  j->handler_class),
					  .handler = dup_or_empty(j->handler) };
		if (!c->handler_class || !c->handler) {
			free(c->handler_class);
			free(c->handler);
			return -ENOMEM;
		}
		t->n_counts++;
	}
	/* A hang's task ends later as a jank: counted once, as the jank. */
	if (!j->hang) {
		c->n++;
		t->janks++;
	}
	if (t->n_last == LAST_JANKS)
		free_jank(slot);
	else
		t->n_last++;
	*slot = *j;
	slot->handler_class = dup_or_empty(j->handler_class);
	slot->handler = dup_or_empty(j->handler);
	slot->cause = dup_or_empty(j->cause);
	t->next_last = (t->next_last + 1) % LAST_JANKS;
	return 0;
}

double jw_top_p99_ms(const struct jw_stats_val *v)
{
	uint64_t total = 0, seen = 0;
	double bound;
	int i;

	for (i = 0; i < JW_HIST_SLOTS; i++)
		total += v->hist[i];
	if (!total)
		return 0;
	for (i = 0; i < JW_HIST_SLOTS; i++) {
		seen += v->hist[i];
		/* The first slot that holds 99 of every 100 recorded (rounded up). */
		if (seen * 100 >= total * 99)
			break;
	}
	bound = (double)(1ULL << (i + 1)) / 1000.0;	/* slot i: [2^i, 2^(i+1)) us */
	return bound < (double)v->max_ns / 1e6 ? bound : (double)v->max_ns / 1e6;
}

/* The wait-to-wait envelope's row ("syscall"), which holds the named handlers' tasks. */
static bool envelope(const struct top_row *r)
{
	return !strcmp(r->handler, "syscall") && !strcmp(r->handler_class, "syscall");
}

/* The handlers by their share, each loop's envelope (its iterations) after them. */
static int by_share(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (envelope(x) != envelope(y))
		return envelope(x) ? 1 : -1;
	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* "handler (class)", or the handler alone when it has no class of its own. */
static void handler_text(const char *handler, const char *cls, char *buf, size_t len)
{
	if (cls[0] && strcmp(cls, handler))
		snprintf(buf, len, "%s (%s)", handler, cls);
	else
		snprintf(buf, len, "%s", handler);
}

/* A row's handler_text(); a loop's envelope said as its iterations. */
static void row_name(const struct top_row *r, char *buf, size_t len)
{
	if (envelope(r))
		snprintf(buf, len, "syscall (the loop's iterations, wait to wait)");
	else
		handler_text(r->handler, r->handler_class, buf, len);
}

/* @s cut to @width columns (bytes: names are ASCII but for a few). */
static void put_cut(FILE *f, const char *s, int width)
{
	int n = (int)strlen(s);

	if (width <= 0)
		width = n;
	fprintf(f, "%.*s\n", n < width ? n : width, s);
}

void jw_top__render(struct jw_top *t, FILE *f, const struct jw_top_view *view)
{
	double secs = (double)view->elapsed_ns / 1e9;
	uint64_t tasks = 0;
	size_t i, rows, lasts;
	char line[1024], name[512];
	int n;

	for (i = 0; i < t->n_rows; i++) {
		struct top_row *r = &t->rows[i];
		/* A row times 1 task in stats_sampling_interval: its time scaled to all of them. */
		double total = r->v.recorded ? (double)r->v.total_ns * (double)r->v.count /
							 (double)r->v.recorded : 0;

		r->share = view->elapsed_ns ? total / (double)view->elapsed_ns : 0;
		tasks += r->v.count;
	}
	qsort(t->rows, t->n_rows, sizeof(t->rows[0]), by_share);
	snprintf(line, sizeof(line), "%s, %.0f s, %llu tasks (%.0f/s), %llu janks", view->title,
		 secs, (unsigned long long)tasks, secs > 0 ? (double)tasks / secs : 0.0,
		 (unsigned long long)t->janks);
	if (view->height)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "   q: quit");
	put_cut(f, line, view->width);
	put_cut(f, "  SHARE    TASKS      /S   MEAN ms    P99 ms    MAX ms    CPU ms  DELAY ms  JANKS"
		   "      PID  HANDLER (CLASS)", view->width);
	lasts = t->n_last;
	rows = t->n_rows;
	if (view->height) {
		/* Title, header, and the janks' blank line and title: the rest is shared. */
		int room = view->height - 4;

		if (lasts > (size_t)(room > 0 ? room / 3 : 0))
			lasts = (size_t)(room > 0 ? room / 3 : 0);
		room -= (int)lasts;
		rows = room < 0 ? 0 : (size_t)room < rows ? (size_t)room : rows;
	}
	for (i = 0; i < rows; i++) {
		const struct top_row *r = &t->rows[i];
		const struct jw_stats_val *v = &r->v;

		row_name(r, name, sizeof(name));
		n = snprintf(line, sizeof(line), "%6.1f%% %8llu %7.1f %9.3f %9.3f %9.3f %9.3f ",
			     100.0 * r->share, (unsigned long long)v->count,
			     secs > 0 ? (double)v->count / secs : 0.0,
			     v->recorded ? (double)v->total_ns / (double)v->recorded / 1e6 : 0.0,
			     jw_top_p99_ms(v), (double)v->max_ns / 1e6,
			     v->recorded ? (double)v->total_cpu_ns / (double)v->recorded / 1e6 : 0.0);
		if (v->delay_count)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%9.3f ",
				      (double)v->total_delay_ns / (double)v->delay_count / 1e6);
		else
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%9s ", "-");
		snprintf(line + n, sizeof(line) - (size_t)n, "%6llu %8u  %s",
			 (unsigned long long)r->janks, r->pid, name);
		put_cut(f, line, view->width);
	}
	if (!lasts)
		return;
	fputc('\n', f);
	put_cut(f, "last janks:", view->width);
	/* Newest first. */
	for (i = 0; i < lasts; i++) {
		const struct jw_top_jank *j =
			&t->last[(t->next_last + LAST_JANKS - 1 - i) % LAST_JANKS];
		time_t when = (time_t)(j->end_ms / 1000);
		struct tm tm;
		char at[16] = "?";

		if (localtime_r(&when, &tm))
			strftime(at, sizeof(at), "%H:%M:%S", &tm);
		handler_text(j->handler, j->handler_class, name, sizeof(name));
		snprintf(line, sizeof(line), "  %s %s %9.1f ms  %-9s %8u  %s", at,
			 j->hang ? "hang" : "jank", j->wall_ms, j->cause, j->pid, name);
		put_cut(f, line, view->width);
	}
}
