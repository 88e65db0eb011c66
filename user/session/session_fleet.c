// SPDX-License-Identifier: GPL-2.0-only
/* The journal and the metrics: what leaves the machine. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/log.h"
#include "output/httpserve.h"
#include "output/journal.h"
#include "report/metrics.h"
#include "report/report.h"
#include "report/report_journal.h"
#include "session/session_fleet.h"
#include "session/session_stats.h"

#define JOURNAL_RETRY_NS (60 * 1000000000ULL)	/* a missing journal is looked for again */
#define RENDER_CACHE_NS 1000000000ULL		/* scrapes within a second share one text */

struct jw_fleet {
	struct jw_journal *journal;
	uint64_t journal_retry_ns;	/* when to look for a missing journal again */
	bool journal_missing_said;
	uint64_t journal_dropped;	/* entries the journal's full queue refused */
	struct jw_metrics *metrics;	/* NULL: no metrics asked for */
	struct jw_http *http;
	uint64_t next_write_ns;		/* of metrics_textfile */
	bool write_failed;		/* said once, until a write succeeds */
	struct jw_buf text;		/* the last rendering, */
	uint64_t text_ns;		/* ... made then (0: none yet) */
	double start_s;
};

/* Connects to the journal unless it was looked for less than a minute ago. */
static void journal_connect(struct session *s, struct jw_fleet *f, uint64_t now)
{
	char err[256];

	if (f->journal || now < f->journal_retry_ns)
		return;
	f->journal = jw_journal__open(NULL, err, sizeof(err));
	if (f->journal) {
		if (f->journal_missing_said)
			jw_log(JW_LOG_INFO, "journal=1: the journal is there now");
		f->journal_missing_said = false;
		return;
	}
	f->journal_retry_ns = now + JOURNAL_RETRY_NS;
	if (!f->journal_missing_said)
		jw_log(JW_LOG_WARN, "journal=1: %s; events go to %s/events.jsonl only (looked for "
		       "again each minute)", err,
		       s->logdir ? jw_logdir__path(s->logdir) : "stdout");
	f->journal_missing_said = true;
}

static void send_journal(struct session *s, struct jw_fleet *f, const struct jw_event *e,
			 const char *line, size_t len)
{
	struct jw_journal_field fields[JW_JOURNAL_FIELDS];
	struct jw_journal_text text;
	uint64_t now = jw_clock_ns(CLOCK_MONOTONIC);
	size_t n;
	int ret;

	journal_connect(s, f, now);
	if (!f->journal)
		return;
	n = jw_event_journal_fields(e, line, len, fields, &text);
	ret = jw_journal__send(f->journal, fields, n);
	if (ret == -EAGAIN) {
		if (!f->journal_dropped++)
			jw_log(JW_LOG_WARN, "journal=1: the journal's queue is full: an event went to "
			       "events.jsonl only (jankwatch does not wait for it)");
		return;
	}
	if (ret) {
		/* journald restarted, or went: the next event connects again. */
		jw_journal__free(f->journal);
		f->journal = NULL;
		journal_connect(s, f, now);
		if (f->journal && !jw_journal__send(f->journal, fields, n))
			return;
		jw_log(JW_LOG_WARN, "journal=1: an event could not be sent: %s", strerror(-ret));
	}
}

void session_fleet_event(void *ctx, const struct jw_event *e, const char *line, size_t len)
{
	struct session *s = ctx;
	struct jw_fleet *f = s->fleet;

	if (!f)
		return;
	if (f->metrics && jw_metrics__event(f->metrics, e))
		jw_log(JW_LOG_WARN, "metrics: out of memory, an event left uncounted");
	if (s->cfg->params.v[JW_P_JOURNAL])
		send_journal(s, f, e, line, len);
}

static void count_row(void *ctx, const struct jw_stats_row *r)
{
	struct jw_metrics *m = ctx;

	jw_metrics__row(m, &(struct jw_metrics_row){
		.pid = r->pid, .tid = r->tid, .process = r->process,
		.handler_class = r->handler_class, .handler = r->message_name, .val = r->val });
}

/* The metrics as they are now, into f->text (made again at most once a second). */
static const struct jw_buf *render(struct session *s, struct jw_fleet *f, uint64_t now)
{
	struct jw_metrics_info info = {
		.version = JW_VERSION,
		.bpf = !s->attach ? "" : jw_attach__plan(s->attach)->compat ? "compat" : "core",
		.start_time_s = f->start_s,
	};
	struct session_tally t;
	size_t i;

	if (f->text_ns && now - f->text_ns < RENDER_CACHE_NS && !f->text.err)
		return &f->text;
	/* The same counts as the summary's and stats.csv's: at exit, the run's one last read. */
	session_tally(s, &t);
	memcpy(info.drops, t.lost.drops, sizeof(info.drops));
	info.lost_samples = t.lost.lost_samples;
	info.write_errors = t.lost.write_errors;
	info.misses = &t.lost.misses;
	jw_metrics__set_max_handlers(f->metrics, (size_t)s->cfg->params.v[JW_P_METRICS_MAX_HANDLERS]);
	jw_metrics__rows_begin(f->metrics);
	session_stats_each(s, count_row, f->metrics);
	if (jw_metrics__rows_end(f->metrics))
		jw_log(JW_LOG_WARN, "metrics: out of memory, rows left uncounted");
	for (i = 0; i < s->n_slots; i++)
		info.watched += s->watched[i] != NULL;
	jw_buf_reset(&f->text);
	jw_metrics__render(f->metrics, &info, &f->text);
	f->text_ns = now;
	return &f->text;
}

static void serve(void *ctx, struct jw_buf *b)
{
	struct session *s = ctx;
	const struct jw_buf *t = render(s, s->fleet, jw_clock_ns(CLOCK_MONOTONIC));

	if (t->len)
		jw_buf_puts(b, t->data);
}

/*
 * Writes @t whole to metrics_textfile: a temporary file beside it renamed over it (the textfile
 * collector never reads half a file), 0644 so that node_exporter's own user reads it.
 */
static int write_textfile(const char *path, const struct jw_buf *t)
{
	char tmp[4096];
	ssize_t n;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* 0644 whatever the umask (the unit's is 0027). */
	if (fchmod(fd, 0644))
		ret = -errno;
	n = ret ? 0 : write(fd, t->data, t->len);
	if (!ret && n != (ssize_t)t->len)
		ret = n < 0 ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* Writes metrics_textfile now; says a failure once (until a write succeeds). 0 or -errno. */
static int write_now(struct session *s, struct jw_fleet *f, uint64_t now)
{
	int ret = write_textfile(s->cfg->metrics_textfile, render(s, f, now));

	if (ret && !f->write_failed)
		jw_log(JW_LOG_WARN, "metrics_textfile=%s: cannot write it: %s (tried again every "
		       "metrics_interval_s)", s->cfg->metrics_textfile, strerror(-ret));
	else if (!ret && f->write_failed)
		jw_log(JW_LOG_INFO, "metrics_textfile=%s: written again", s->cfg->metrics_textfile);
	f->write_failed = ret != 0;
	return ret;
}

void session_fleet_tick(struct session *s, uint64_t now)
{
	struct jw_fleet *f = s->fleet;

	if (!f || !f->metrics)
		return;
	jw_http__expire(f->http, now);
	if (!s->cfg->metrics_textfile || now < f->next_write_ns)
		return;
	f->next_write_ns = now + (uint64_t)s->cfg->params.v[JW_P_METRICS_INTERVAL_S] * 1000000000ULL;
	write_now(s, f, now);
}

bool session_fleet_on_fd(struct session *s, int fd, uint32_t events)
{
	return s->fleet && jw_http__on_fd(s->fleet->http, fd, events);
}

int session_fleet_open(struct session *s)
{
	const struct jw_config *cfg = s->cfg;
	uint64_t now = jw_clock_ns(CLOCK_MONOTONIC);
	struct jw_fleet *f = calloc(1, sizeof(*f));
	char err[512];
	int ret;

	if (!f)
		return -ENOMEM;
	s->fleet = f;
	jw_buf_init(&f->text);
	f->start_s = (double)jw_clock_ns(CLOCK_REALTIME) / 1e9;
	if (!cfg->metrics_textfile && !cfg->metrics_listen)
		return 0;
	f->metrics = jw_metrics__new((size_t)cfg->params.v[JW_P_METRICS_MAX_HANDLERS]);
	if (!f->metrics)
		return -ENOMEM;
	if (cfg->metrics_listen) {
		f->http = jw_http__listen(cfg->metrics_listen, "/metrics", serve, s, err,
					  sizeof(err));
		if (!f->http) {
			jw_log(JW_LOG_ERROR, "%s", err);
			return -EINVAL;
		}
	}
	if (cfg->metrics_textfile) {
		/* Said now, before anything is attached, not first at the interval's end. */
		ret = write_textfile(cfg->metrics_textfile, render(s, f, now));
		if (ret) {
			jw_log(JW_LOG_ERROR, "metrics_textfile=%s: cannot write it: %s%s",
			       cfg->metrics_textfile, strerror(-ret), ret == -EROFS ?
			       " (a service writes only where its unit lets it: ReadWritePaths=)" :
			       "");
			return ret;
		}
		f->text_ns = 0;		/* rendered before the programs were loaded */
		f->next_write_ns = now + (uint64_t)cfg->params.v[JW_P_METRICS_INTERVAL_S] *
					 1000000000ULL;
	}
	return 0;
}

int session_fleet_start(struct session *s)
{
	struct jw_fleet *f = s->fleet;
	int ret;

	if (!f)
		return 0;
	if (s->cfg->params.v[JW_P_JOURNAL])
		journal_connect(s, f, jw_clock_ns(CLOCK_MONOTONIC));
	if (!f->http)
		return 0;
	ret = jw_http__watch(f->http, s->epoll_fd);
	if (ret) {
		jw_log(JW_LOG_ERROR, "metrics_listen: %s", strerror(-ret));
		return ret;
	}
	jw_log(JW_LOG_INFO, "metrics on http://%s/metrics", jw_http__where(f->http));
	return 0;
}

void session_fleet_finish(struct session *s)
{
	struct jw_fleet *f = s->fleet;

	if (!f)
		return;
	/* The last counts: the file keeps them after jankwatch stopped. */
	if (f->metrics && s->cfg->metrics_textfile && s->attach) {
		f->text_ns = 0;
		write_now(s, f, jw_clock_ns(CLOCK_MONOTONIC));
	}
	if (f->journal_dropped)
		jw_log(JW_LOG_WARN, "journal=1: %llu events found the journal's queue full and went "
		       "to events.jsonl only", (unsigned long long)f->journal_dropped);
	jw_http__free(f->http);
	jw_journal__free(f->journal);
	jw_metrics__free(f->metrics);
	jw_buf_free(&f->text);
	free(f);
	s->fleet = NULL;
}
