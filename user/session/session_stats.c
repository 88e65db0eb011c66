// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session's statistics: the kernel's rows named (thread, hooked function, handler), served
 * on the stats socket, written at exit. A row outlives its process; its names are kept when the
 * process is forgotten, so a dump still names it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/hindex.h"
#include "base/log.h"
#include "report/handler.h"
#include "report/report.h"
#include "report/report_stats.h"
#include "session/session_stats.h"
#include "session/session_samplers.h"
#include "session/session_waits.h"
#include "session/statsock.h"
#include "base/text.h"

#define STATS_FILE "stats.csv"

/* The names found for one row. */
struct stats_name {
	struct jw_stats_key key;
	char *process;		/* the process's name, as events give it (bundle_name) */
	char *handler_class;
	char *message_name;
};

static bool same_key(const struct jw_stats_key *a, const struct jw_stats_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->probe_id == b->probe_id &&
	       a->inner == b->inner && a->handler == b->handler && a->klass == b->klass &&
	       a->detail == b->detail;
}

static uint64_t key_hash(const struct jw_stats_key *key)
{
	return jw_hash_bytes(0, key, sizeof(*key));
}

/* Row @key's names, by their index (a pass names up to every row: no linear search). */
static struct stats_name *cached(struct session *s, const struct jw_stats_key *key)
{
	uint32_t *at = jw_hindex_get(&s->names_at, key_hash(key));
	size_t i;

	if (at && *at < s->n_names && same_key(&s->names[*at].key, key))
		return &s->names[*at];
	if (!at)
		return NULL;
	/* Two keys of one hash: the other one's names were indexed. */
	for (i = 0; i < s->n_names; i++)
		if (same_key(&s->names[i].key, key))
			return &s->names[i];
	return NULL;
}

static const struct jw_proc *proc_of(const struct session *s, uint32_t pid)
{
	int i = session_slot_of(s, pid);

	return i >= 0 ? &s->watched[i]->proc : NULL;
}

/* Names row @key of live process @p: the hooked function, and its handler (handler.h). */
static void name_row(const struct jw_proc *p, const struct jw_stats_key *key,
		     const struct jw_stats_val *v, char *cls, size_t cls_len, char *msg, size_t len)
{
	struct jw_handler_facts f = {
		.probe_id = key->probe_id,
		.inner_probe = key->inner ? key->probe_id + 1 : 0,
		.handler_addr = key->handler,
		.name = v->handler_name,
		.name_len = sizeof(v->handler_name),
		.file = v->handler_file,
		.file_len = sizeof(v->handler_file),
		.line = v->handler_line,
		.klass = key->klass,
		.detail = key->detail,
	};

	char buf[JW_HANDLER_NAME_LEN + JW_HANDLER_FILE_LEN + 16];

	snprintf(cls, cls_len, "%s", jw_handler_class(p, &f, buf, sizeof(buf)));
	snprintf(msg, len, "%s", jw_handler_name(p, &f, buf, sizeof(buf)));
}

/* The names of row @key: found once while its process is watched, kept after. */
static struct stats_name *names_of(struct session *s, const struct jw_stats_key *key,
				   const struct jw_stats_val *v)
{
	const struct jw_proc *p = proc_of(s, key->pid);
	char cls[256], msg[512];
	struct stats_name *n = cached(s, key);

	if (n || !p)
		return n;
	if (s->n_names == s->cap_names) {
		size_t cap = s->cap_names ? s->cap_names * 2 : 64;
		struct stats_name *bigger = realloc(s->names, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		s->names = bigger;
		s->cap_names = cap;
	}
	name_row(p, key, v, cls, sizeof(cls), msg, sizeof(msg));
	n = &s->names[s->n_names];
	n->key = *key;
	n->process = strdup(jw_report_bundle_name(p));
	n->handler_class = strdup(cls);
	n->message_name = strdup(msg);
	if (!n->process || !n->handler_class || !n->message_name) {
		free(n->process);
		free(n->handler_class);
		free(n->message_name);
		return NULL;
	}
	s->n_names++;
	/* Another key of this hash keeps the index (cached() searches then); out of memory leaves
	 * the names unindexed, made again at the next pass. */
	if (!jw_hindex_get(&s->names_at, key_hash(key)))
		jw_hindex_put(&s->names_at, key_hash(key), (uint32_t)(s->n_names - 1));
	return n;
}

/* Forgets the names of the rows of @pid (every row's when 0): they were reset. */
static void forget_names(struct session *s, pid_t pid)
{
	size_t i, kept = 0;

	for (i = 0; i < s->n_names; i++) {
		if (!pid || s->names[i].key.pid == (uint32_t)pid) {
			free(s->names[i].process);
			free(s->names[i].handler_class);
			free(s->names[i].message_name);
			continue;
		}
		s->names[kept++] = s->names[i];
	}
	s->n_names = kept;
	jw_hindex_free(&s->names_at);
	for (i = 0; i < s->n_names; i++)
		if (!jw_hindex_get(&s->names_at, key_hash(&s->names[i].key)))
			jw_hindex_put(&s->names_at, key_hash(&s->names[i].key), (uint32_t)i);
}

/* A row as written: its names, and the counts of every key that has them, summed. */
struct merged_row {
	uint32_t pid, tid;
	const char *process;		/* the names cache's: stable while the session lives */
	const char *handler_class;
	const char *message_name;
	struct jw_stats_val val;
};

struct stats_walk {
	struct session *s;
	pid_t pid;		/* only this process's rows; 0: all */
	bool name_only;		/* only find the names (a process is about to be forgotten) */
	struct merged_row *rows;
	size_t n, cap;
	struct jw_hindex at;		/* (pid, tid, names) -> rows[] */
	struct jw_stats_val overflow;	/* its copy: the walk's own is gone after it */
	uint64_t outer_tasks;		/* the outermost rows' tasks: every task, counted once */
	bool has_overflow;
	bool failed;		/* out of memory: rows left out */
};

/* @v's counts added to @into's (the same handler, reached by two keys). */
static void merge_val(struct jw_stats_val *into, const struct jw_stats_val *v)
{
	size_t i;

	into->count += v->count;
	into->recorded += v->recorded;
	into->total_ns += v->total_ns;
	into->max_ns = into->max_ns > v->max_ns ? into->max_ns : v->max_ns;
	into->total_cpu_ns += v->total_cpu_ns;
	into->max_cpu_ns = into->max_cpu_ns > v->max_cpu_ns ? into->max_cpu_ns : v->max_cpu_ns;
	into->exceptions += v->exceptions;
	into->delay_count += v->delay_count;
	into->total_delay_ns += v->total_delay_ns;
	into->max_delay_ns = into->max_delay_ns > v->max_delay_ns ? into->max_delay_ns :
								    v->max_delay_ns;
	for (i = 0; i < JW_HIST_SLOTS; i++)
		into->hist[i] += v->hist[i];
}

/*
 * Row @key: kept, or summed into the row of the same thread with the same names. Two keys can
 * name one handler: a callback reached through two of the loop's sites (Qt's slot called inside
 * and outside an event), or a handler whose address changed but not its name.
 */
static bool same_row(const struct merged_row *r, const struct jw_stats_key *key, const char *cls,
		     const char *msg)
{
	return r->pid == key->pid && r->tid == key->tid && !strcmp(r->handler_class, cls) &&
	       !strcmp(r->message_name, msg);
}

static void on_row(const struct jw_stats_key *key, const struct jw_stats_val *v, void *ctx)
{
	struct stats_walk *w = ctx;
	struct stats_name *n;
	const char *cls, *msg, *proc;
	struct jw_stats_val scaled;
	uint32_t *at;
	uint64_t h, extra;
	size_t i;

	/* OVERFLOW cannot say whose tasks it holds: it comes with every process's rows. */
	if (!key) {
		w->overflow = *v;
		w->has_overflow = true;
		return;
	}
	if (w->pid && key->pid != (uint32_t)w->pid)
		return;
	if (!key->inner)
		w->outer_tasks += v->count;
	/* A handler site's row while its sites are hooked in windows: its count scaled. */
	extra = key->inner ? jw_row_extras_get(&w->s->extras, key) : 0;
	if (extra) {
		scaled = *v;
		scaled.count += extra;
		v = &scaled;
	}
	n = names_of(w->s, key, v);
	if (w->name_only)
		return;
	proc = n ? n->process : "unknown";
	cls = n ? n->handler_class : "unknown";
	msg = n ? n->message_name : "unknown";
	h = jw_hash_str(jw_hash_str(jw_hash_bytes(jw_hash_bytes(0, &key->pid, sizeof(key->pid)),
						  &key->tid, sizeof(key->tid)), cls), msg);
	at = jw_hindex_get(&w->at, h);
	if (at && same_row(&w->rows[*at], key, cls, msg)) {
		merge_val(&w->rows[*at].val, v);
		return;
	}
	/* Another row of this hash: every row is looked at. */
	for (i = 0; at && i < w->n; i++) {
		if (same_row(&w->rows[i], key, cls, msg)) {
			merge_val(&w->rows[i].val, v);
			return;
		}
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct merged_row *bigger = realloc(w->rows, cap * sizeof(*bigger));

		if (!bigger) {
			w->failed = true;
			return;
		}
		w->rows = bigger;
		w->cap = cap;
	}
	if (!at && jw_hindex_put(&w->at, h, (uint32_t)w->n)) {
		w->failed = true;
		return;
	}
	w->rows[w->n++] = (struct merged_row){ .pid = key->pid, .tid = key->tid, .process = proc,
					       .handler_class = cls, .message_name = msg,
					       .val = *v };
}

/* The walk's rows and index, freed (not the walk). */
static void walk_free(struct stats_walk *w)
{
	free(w->rows);
	jw_hindex_free(&w->at);
}

/*
 * Calls @fn with each row of @pid (0: all), named and merged, the OVERFLOW row last: the rows
 * read at the run's end once frozen, else the kernel's now. Returns the rows.
 */
static size_t each_row(struct session *s, pid_t pid,
		       void (*fn)(void *ctx, const struct jw_stats_row *r), void *ctx)
{
	struct stats_walk live = { .s = s, .pid = pid }, *w = s->final_rows;
	char thread[JW_COMM_LEN + 1];
	size_t i, rows = 0;

	if (!w) {
		w = &live;
		jw_attach__stats_each(s->attach, on_row, w);
	}
	for (i = 0; i < w->n; i++) {
		const struct merged_row *r = &w->rows[i];

		if (pid && r->pid != (uint32_t)pid)
			continue;
		jw_printable_copy(thread, sizeof(thread), r->val.comm, sizeof(r->val.comm));
		fn(ctx, &(struct jw_stats_row){
			.val = &r->val, .pid = r->pid, .tid = r->tid, .thread_name = thread,
			.process = r->process, .handler_class = r->handler_class,
			.message_name = r->message_name });
		rows++;
	}
	if (w->has_overflow) {
		fn(ctx, &(struct jw_stats_row){ .val = &w->overflow, .thread_name = "",
					       .process = "", .handler_class = "",
					       .message_name = "OVERFLOW" });
		rows++;
	}
	if (w == &live) {
		if (w->failed)
			jw_log(JW_LOG_WARN, "statistics: out of memory, rows left out");
		walk_free(w);
	}
	return rows;
}

void session_tally(const struct session *s, struct session_tally *t)
{
	if (s->frozen) {
		*t = s->final;
		return;
	}
	memset(t, 0, sizeof(*t));
	if (s->attach) {
		t->tasks = jw_attach__tasks(s->attach);
		jw_attach__drops(s->attach, t->lost.drops);
		jw_attach__misses(s->attach, &t->lost.misses);
	}
	t->lost.trace_lost = jw_tracer__lost(s->tracer);
	t->lost.lost_samples = s->lost_samples;
	t->lost.write_errors = s->reporter ? jw_reporter__counts(s->reporter)->write_errors : 0;
}

/* The rows of @pid (0: every process) were reset: nothing is added to them any more. */
static void forget_scaling(struct session *s, pid_t pid)
{
	size_t i;

	jw_row_extras_forget(&s->extras, pid);
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && (!pid || s->watched[i]->proc.target.pid == pid))
			jw_sitescale_reset(&s->watched[i]->scale);
}

void session_stats_freeze(struct session *s)
{
	struct stats_walk *w;
	size_t i;
	int err;

	if (!s->attach || s->frozen)
		return;
	/*
	 * The programs stopped (the probes stay on until teardown: taking them off takes seconds),
	 * what they sent till then reported (events count in the metrics), then the read, of maps
	 * nothing changes any more: nothing is reported after it.
	 */
	err = jw_attach__stop(s->attach);
	if (err)
		jw_log(JW_LOG_WARN, "cannot wait for jankwatch's programs to stop (%s): the last "
		       "statistics may miss a task that was ending", strerror(-err));
	session_read_records(s, false);
	jw_reporter__flush(s->reporter, NULL, true);
	/* The trace windows decided for a trace are written now, even unfinished. */
	jw_tracer__flush(s->tracer);
	session_tally(s, &s->final);
	s->frozen_count = s->final.tasks;
	/* Sampled handler sites off now: their rows scaled to the loop's last iterations. */
	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i])
			jw_watched__scale_sites(s->watched[i], &s->how);
	w = calloc(1, sizeof(*w));
	if (w) {
		w->s = s;
		jw_attach__stats_each(s->attach, on_row, w);
		if (w->failed)
			jw_log(JW_LOG_WARN, "statistics: out of memory, rows left out");
		/* The tasks: the rows' (each counted once, in its outermost row), a reset's. */
		s->final.tasks = w->outer_tasks + s->tasks_reset;
	}
	s->final_rows = w;
	s->frozen = true;
}

void session_stats_each(struct session *s, void (*fn)(void *ctx, const struct jw_stats_row *r),
			void *ctx)
{
	if (s->attach)
		each_row(s, 0, fn, ctx);
}

static void csv_row(void *ctx, const struct jw_stats_row *r)
{
	jw_stats_csv_row(ctx, r);
}

static void hist_row(void *ctx, const struct jw_stats_row *r)
{
	jw_stats_hist(ctx, r);
}

/* Writes the rows of @pid (0: all) to @f, as CSV lines or histograms. Returns the rows. */
static size_t write_rows(struct session *s, FILE *f, pid_t pid, bool hist)
{
	return each_row(s, pid, hist ? hist_row : csv_row, f);
}

void session_stats_keep_names(struct session *s, pid_t pid)
{
	struct stats_walk w = { .s = s, .pid = pid, .name_only = true };

	if (s->attach)
		jw_attach__stats_each(s->attach, on_row, &w);
	jw_hindex_free(&w.at);
}

/* The tasks of @pid's (0: every) outermost rows now. */
static uint64_t outer_tasks(struct session *s, pid_t pid)
{
	struct stats_walk w = { .s = s, .pid = pid, .name_only = true };

	jw_attach__stats_each(s->attach, on_row, &w);
	walk_free(&w);
	return w.outer_tasks;
}

/* What the run lost so far, in the summary's lines. */
static void say_lost(const struct session *s, FILE *f)
{
	struct session_tally t;
	struct jw_buf b;

	session_tally(s, &t);
	jw_buf_init(&b);
	if (jw_lost_lines(&t.lost, &b))
		fputs(b.data, f);
	jw_buf_free(&b);
}

/* Answers the request on connection @fd. */
static void answer(struct session *s, int fd, const struct jw_stats_req *req)
{
	FILE *f = fdopen(fd, "w");
	size_t i;

	if (!f) {
		close(fd);
		return;
	}
	switch (req->cmd) {
	case JW_STATS_TARGETS:
		for (i = 0; i < s->n_slots; i++)
			if (s->watched[i])
				fprintf(f, "%d\n", (int)s->watched[i]->proc.target.pid);
		break;
	case JW_STATS_HIST:
		write_rows(s, f, req->pid, true);
		break;
	case JW_STATS_RESET:
		s->tasks_reset += outer_tasks(s, req->pid);
		write_rows(s, f, req->pid, false);
		jw_attach__stats_reset(s->attach, req->pid);
		forget_names(s, req->pid);
		forget_scaling(s, req->pid);
		jw_log(JW_LOG_INFO, "statistics %s%.0d reset by `jankwatch stats --reset`",
		       req->pid ? "of pid " : "", (int)req->pid);
		break;
	case JW_STATS_DUMP:
		write_rows(s, f, req->pid, false);
		break;
	case JW_STATS_LOST:
		say_lost(s, f);
		break;
	case JW_STATS_HOOKS:
		session_waits_say(s, f, jw_clock_ns(CLOCK_MONOTONIC));
		session_samplers_say(s, f, jw_clock_ns(CLOCK_MONOTONIC));
		break;
	}
	fclose(f);
}

void session_stats_serve(struct session *s)
{
	struct jw_stats_req req;
	int i, fd;

	/* A few clients per wake-up: the loop's own work comes first. */
	for (i = 0; i < 8 && s->stats_fd >= 0; i++) {
		fd = jw_statsock_accept(s->stats_fd, &req);
		if (fd == -EAGAIN)
			return;
		if (fd >= 0)
			answer(s, fd, &req);
	}
}

static void on_other(pid_t jankwatch, pid_t target, void *ctx)
{
	struct session *s = ctx;

	if (session_watching(s, target))
		jw_log(JW_LOG_WARN, "pid %d is also watched by jankwatch pid %d: each runs its own "
		       "probes (the target pays twice) and keeps its own reports and statistics",
		       (int)target, (int)jankwatch);
}

void session_stats_start(struct session *s)
{
	char err[256];

	s->stats_fd = jw_statsock_listen(s->stats_path, sizeof(s->stats_path), err, sizeof(err));
	if (s->stats_fd < 0)
		jw_log(JW_LOG_WARN, "%s: `jankwatch stats` cannot reach this instance", err);
	jw_statsock_each_target(on_other, s);
}

void session_stats_finish(struct session *s)
{
	char *buf = NULL;
	size_t len = 0, rows;
	uint64_t late;
	FILE *f;

	if (s->stats_fd >= 0) {
		close(s->stats_fd);
		unlink(s->stats_path);
		s->stats_fd = -1;
	}
	f = s->attach && s->logdir ? open_memstream(&buf, &len) : NULL;
	if (f) {
		jw_stats_csv_header(f);
		rows = write_rows(s, f, 0, false);
		if (!fclose(f) && rows) {
			if (jw_logdir__replace(s->logdir, STATS_FILE, buf, len))
				jw_log(JW_LOG_WARN, "cannot write %s/%s", jw_logdir__path(s->logdir),
				       STATS_FILE);
			else
				jw_log(JW_LOG_INFO, "statistics of %zu rows in %s/%s", rows,
				       jw_logdir__path(s->logdir), STATS_FILE);
		}
		free(buf);
	}
	/* Stopped programs count nothing: had one gone on, the outputs above would be a read late. */
	late = s->frozen && s->attach ? jw_attach__tasks(s->attach) - s->frozen_count : 0;
	if (late)
		jw_log(JW_LOG_WARN, "jankwatch's programs counted %" PRIu64 " task%s after they were "
		       "stopped for the last read", late, late == 1 ? "" : "s");
	if (s->final_rows) {
		walk_free(s->final_rows);
		free(s->final_rows);
		s->final_rows = NULL;
	}
	forget_names(s, 0);
	jw_hindex_free(&s->names_at);
	free(s->names);
	s->names = NULL;
	s->cap_names = 0;
}
