// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/csvread.h"
#include "base/strpool.h"
#include "base/when.h"
#include "report/flamemerge.h"
#include "report/reportpage.h"
#include "report/stacklog.h"
#include "session/logpage.h"

#define STATS_MAX_BYTES (64u << 20)	/* a stats.csv larger than this is not read */

/* An event kept for the page. */
struct ev {
	uint64_t begin_ms;
	double wall_ms;
	uint32_t pid;
	const char *process;		/* interned */
	enum jw_page_cause cause;
	bool hang;
	size_t id;			/* its group's, as the summary gave it */
	size_t file0, n_files;		/* its files in lp->files */
	unsigned int lane;
};

struct jw_logpage {
	const char *dir;
	struct jw_strpool *pool;
	struct ev *evs;
	size_t n, cap;
	const char **files;		/* base names, interned */
	size_t n_files, cap_files;
};

struct jw_logpage *jw_logpage__new(const char *dir)
{
	struct jw_logpage *lp = calloc(1, sizeof(*lp));

	if (!lp)
		return NULL;
	lp->dir = dir;
	lp->pool = jw_strpool__new();
	if (!lp->pool) {
		free(lp);
		return NULL;
	}
	return lp;
}

void jw_logpage__free(struct jw_logpage *lp)
{
	if (!lp)
		return;
	jw_strpool__free(lp->pool);
	free(lp->evs);
	free(lp->files);
	free(lp);
}

int jw_logpage__add(struct jw_logpage *lp, const struct jw_summary_event *e, size_t id,
		    const char *files, size_t n_files)
{
	struct ev *ev;
	const char *base;
	size_t i;

	if (jw_grow((void **)&lp->evs, &lp->cap, lp->n, sizeof(*lp->evs), 256))
		return -ENOMEM;
	ev = &lp->evs[lp->n];
	memset(ev, 0, sizeof(*ev));
	ev->begin_ms = e->begin_ms;
	ev->wall_ms = e->wall_ms;
	ev->pid = e->pid;
	ev->process = jw_strpool__intern(lp->pool, e->process ? e->process : "");
	ev->cause = jw_page_cause(e->cause);
	ev->hang = e->hang;
	ev->id = id;
	ev->file0 = lp->n_files;
	if (!ev->process)
		return -ENOMEM;
	for (i = 0; files && i < n_files; i++, files += strlen(files) + 1) {
		/* The files are looked for in the directory read, wherever it was written. */
		base = strrchr(files, '/');
		base = base ? base + 1 : files;
		if (jw_grow((void **)&lp->files, &lp->cap_files, lp->n_files, sizeof(*lp->files), 256))
			return -ENOMEM;
		lp->files[lp->n_files] = jw_strpool__intern(lp->pool, base);
		if (!lp->files[lp->n_files])
			return -ENOMEM;
		lp->n_files++;
		ev->n_files++;
	}
	lp->n++;
	return 0;
}

/* What the page is made of, and what must be freed after it is written. */
struct build {
	struct jw_logpage *lp;
	struct jw_page page;
	struct jw_page_lane *lanes;
	struct jw_page_event *events;
	struct jw_page_group *groups;
	const char **keys;
	char **key_texts;
	size_t n_keys;
	struct jw_flamemerge **merges;
	struct jw_page_stats stats;
	char **stat_cells;		/* header then rows, each strdup'd */
	size_t n_cells, cap_cells;
	long pid;
	int dirfd;
};

/* Events by process, then pid: the lanes' order. */
static int cmp_ev_lane(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;
	int c = strcmp(x->process, y->process);

	return c ? c : x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_lane_count(const void *a, const void *b)
{
	const struct jw_page_lane *x = a, *y = b;

	return x->events > y->events ? -1 : x->events < y->events;
}

static int cmp_lane_name(const void *a, const void *b)
{
	const struct jw_page_lane *x = a, *y = b;
	int c;

	if (!x->pid != !y->pid)
		return x->pid ? -1 : 1;		/* the other processes last */
	c = strcmp(x->process, y->process);
	return c ? c : x->pid < y->pid ? -1 : x->pid > y->pid;
}

static bool same_lane(const struct jw_page_lane *l, const struct ev *e)
{
	return l->pid == e->pid && l->process == e->process;
}

/*
 * A lane per process (pid and name), the JW_PAGE_LANES_MAX - 1 with the most events when there
 * are more, the rest in one; each event's lane set.
 */
static int make_lanes(struct build *b)
{
	struct jw_logpage *lp = b->lp;
	struct ev **order;
	size_t i, j, n = 0, kept;

	order = malloc((lp->n ? lp->n : 1) * sizeof(*order));
	b->lanes = calloc(lp->n + 1, sizeof(*b->lanes));
	if (!order || !b->lanes) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < lp->n; i++)
		order[i] = &lp->evs[i];
	qsort(order, lp->n, sizeof(*order), cmp_ev_lane);
	for (i = 0; i < lp->n; i++) {
		if (!n || !same_lane(&b->lanes[n - 1], order[i])) {
			b->lanes[n].process = order[i]->process;
			b->lanes[n].pid = order[i]->pid;
			n++;
		}
		b->lanes[n - 1].events++;
	}
	kept = n;
	if (n > JW_PAGE_LANES_MAX) {
		qsort(b->lanes, n, sizeof(*b->lanes), cmp_lane_count);
		kept = JW_PAGE_LANES_MAX - 1;
		for (i = kept + 1; i < n; i++)
			b->lanes[kept].events += b->lanes[i].events;
		b->lanes[kept].process = "other processes";
		b->lanes[kept].pid = 0;
		kept++;
	}
	qsort(b->lanes, kept, sizeof(*b->lanes), cmp_lane_name);
	for (i = 0; i < lp->n; i++) {
		for (j = 0; j < kept && !same_lane(&b->lanes[j], &lp->evs[i]); j++)
			;
		lp->evs[i].lane = (unsigned int)(j < kept ? j : kept - 1);
	}
	b->page.lanes = b->lanes;
	b->page.n_lanes = kept;
	free(order);
	return 0;
}

static int cmp_ev_longest(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;

	if (x->wall_ms != y->wall_ms)
		return x->wall_ms > y->wall_ms ? -1 : 1;
	return x->begin_ms < y->begin_ms ? -1 : x->begin_ms > y->begin_ms;
}

static int cmp_ev_begin(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;

	return x->begin_ms < y->begin_ms ? -1 : x->begin_ms > y->begin_ms;
}

/* The events drawn: all, or the longest JW_PAGE_EVENTS_MAX; in time order. */
static int make_events(struct build *b, struct jw_summary *sum)
{
	struct jw_logpage *lp = b->lp;
	size_t i, n = lp->n < JW_PAGE_EVENTS_MAX ? lp->n : JW_PAGE_EVENTS_MAX;
	struct ev **order;

	order = malloc((lp->n ? lp->n : 1) * sizeof(*order));
	b->events = calloc(n ? n : 1, sizeof(*b->events));
	if (!order || !b->events) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < lp->n; i++)
		order[i] = &lp->evs[i];
	if (n < lp->n)
		qsort(order, lp->n, sizeof(*order), cmp_ev_longest);
	qsort(order, n, sizeof(*order), cmp_ev_begin);
	for (i = 0; i < n; i++) {
		b->events[i].begin_ms = order[i]->begin_ms;
		b->events[i].wall_ms = order[i]->wall_ms;
		b->events[i].lane = order[i]->lane;
		b->events[i].cause = order[i]->cause;
		b->events[i].hang = order[i]->hang;
		b->events[i].rank = jw_summary__rank(sum, order[i]->id);
	}
	b->page.events = b->events;
	b->page.n_events = n;
	b->page.events_cut = lp->n - n;
	free(order);
	return 0;
}

static bool is_stack_log(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "stack-", 6) && n > 10 && !strcmp(name + n - 4, ".txt");
}

static int merge_frame(const struct jw_stacklog_frame *fr, void *ctx)
{
	return jw_flamemerge__add(ctx, fr);
}

static int check_frame(const struct jw_stacklog_frame *fr, void *ctx)
{
	(void)fr;
	(void)ctx;
	return 0;
}

/*
 * Merges stack log @name of the directory into @m: read once to check it whole, then merged, so
 * that a damaged one adds nothing. 0; 1 when it is missing or damaged; -ENOMEM.
 */
static int merge_log(struct build *b, const char *name, struct jw_flamemerge *m)
{
	int fd = openat(b->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	int ret;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	ret = jw_stacklog_read(f, check_frame, NULL, NULL);
	if (!ret) {
		rewind(f);
		ret = jw_stacklog_read(f, merge_frame, m, NULL);
		jw_flamemerge__next(m);
	}
	fclose(f);
	if (ret == -ENOMEM)
		return ret;
	return ret ? 1 : 0;
}

/* The groups shown: their figures, files and merged flame graphs. */
static int make_groups(struct build *b, struct jw_summary *sum, size_t shown)
{
	struct jw_logpage *lp = b->lp;
	struct jw_page_group *pg;
	size_t i, k, rank;
	int ret;

	b->groups = calloc(shown ? shown : 1, sizeof(*b->groups));
	b->merges = calloc(shown ? shown : 1, sizeof(*b->merges));
	if (!b->groups || !b->merges)
		return -ENOMEM;
	for (rank = 0; rank < shown; rank++) {
		jw_summary__group(sum, rank, &b->groups[rank].g);
		b->groups[rank].files = calloc(JW_PAGE_FILES_MAX, sizeof(char *));
		b->merges[rank] = jw_flamemerge__new();
		if (!b->groups[rank].files || !b->merges[rank])
			return -ENOMEM;
	}
	b->page.groups = b->groups;
	b->page.n_groups = shown;
	for (i = 0; i < lp->n; i++) {
		rank = jw_summary__rank(sum, lp->evs[i].id);
		if (rank >= shown)
			continue;
		/* Past the graphs' bound, the files are named, not read. */
		pg = &b->groups[rank];
		for (k = 0; k < lp->evs[i].n_files; k++) {
			const char *name = lp->files[lp->evs[i].file0 + k];

			if (pg->n_files < JW_PAGE_FILES_MAX)
				((const char **)pg->files)[pg->n_files++] = name;
			else
				pg->more_files++;
			if (!is_stack_log(name) || rank >= JW_PAGE_GRAPHS_MAX)
				continue;
			ret = merge_log(b, name, b->merges[rank]);
			if (ret < 0)
				return ret;
			if (ret)
				pg->logs_unread++;
			else
				pg->logs++;
		}
	}
	for (rank = 0; rank < shown; rank++) {
		ret = jw_flamemerge__flame(b->merges[rank], JW_PAGE_BOX_PERMILLE, JW_PAGE_BOXES_MAX,
					   &b->groups[rank].flame, &b->groups[rank].boxes_cut);
		if (ret)
			return ret;
	}
	return 0;
}

/* Every group's "process: key", for what hovering an event says. */
static int make_keys(struct build *b, struct jw_summary *sum)
{
	struct jw_summary_group g;
	size_t n = jw_summary__groups(sum), i;

	b->keys = calloc(n ? n : 1, sizeof(*b->keys));
	b->key_texts = calloc(n ? n : 1, sizeof(*b->key_texts));
	if (!b->keys || !b->key_texts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		jw_summary__group(sum, i, &g);
		if (asprintf(&b->key_texts[i], "%s: %s%s", g.process[0] ? g.process : "?",
			     g.key[0] ? g.key : "(no stack, no handler)",
			     g.by_handler ? " (handler)" : "") < 0) {
			b->key_texts[i] = NULL;
			return -ENOMEM;
		}
		b->keys[i] = b->key_texts[i];
		b->n_keys++;
	}
	b->page.group_keys = b->keys;
	b->page.n_group_keys = n;
	return 0;
}

struct csv_ctx {
	struct build *b;
	size_t pid_col;		/* the header's "pid" column; SIZE_MAX: none */
	int err;
};

static int keep_cells(struct build *b, char **fields, size_t n, size_t cols)
{
	size_t i;

	for (i = 0; i < cols; i++) {
		if (jw_grow((void **)&b->stat_cells, &b->cap_cells, b->n_cells, sizeof(char *), 256))
			return -ENOMEM;
		b->stat_cells[b->n_cells] = strdup(i < n ? fields[i] : "");
		if (!b->stat_cells[b->n_cells])
			return -ENOMEM;
		b->n_cells++;
	}
	return 0;
}

static int stats_record(void *ctx, char **fields, size_t n)
{
	struct csv_ctx *c = ctx;
	struct build *b = c->b;
	size_t i;

	if (!b->stats.cols) {
		b->stats.cols = n;
		c->pid_col = SIZE_MAX;
		for (i = 0; i < n; i++)
			if (!strcmp(fields[i], "pid"))
				c->pid_col = i;
		return keep_cells(b, fields, n, n);
	}
	if (b->pid && (c->pid_col >= n || strtol(fields[c->pid_col], NULL, 10) != b->pid))
		return 0;
	if (b->stats.rows >= JW_PAGE_STATS_ROWS_MAX) {
		b->stats.rows_cut++;
		return 0;
	}
	b->stats.rows++;
	return keep_cells(b, fields, n, b->stats.cols);
}

/* stats.csv, when the directory has one (of process b->pid only, unless 0). */
static int read_stats(struct build *b, char *written, size_t written_len)
{
	int fd = openat(b->dirfd, "stats.csv", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct csv_ctx c = { .b = b };
	struct stat st;
	char *text = NULL;
	ssize_t got;
	size_t len = 0;
	int ret = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > STATS_MAX_BYTES)
		goto out;
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	ret = jw_csv_records(text, len, stats_record, &c);
	if (ret == -ENOMEM)
		goto out;
	if (ret || !b->stats.cols) {
		fprintf(stderr, "jankwatch: report: %s/stats.csv is not the statistics' CSV: "
			"left out\n", b->lp->dir);
		ret = 0;
		goto out;
	}
	b->stats.header = (const char *const *)b->stat_cells;
	b->stats.cells = (const char *const *)b->stat_cells + b->stats.cols;
	jw_when_text((uint64_t)st.st_mtime * 1000, written, written_len);
	b->stats.written = written;
	b->page.stats = &b->stats;
out:
	free(text);
	close(fd);
	return ret;
}

static void build_free(struct build *b)
{
	size_t i;

	for (i = 0; b->groups && i < b->page.n_groups; i++) {
		jw_flame__free(&b->groups[i].flame);
		free((void *)b->groups[i].files);
		jw_flamemerge__free(b->merges ? b->merges[i] : NULL);
	}
	for (i = 0; i < b->n_keys; i++)
		free(b->key_texts[i]);
	for (i = 0; i < b->n_cells; i++)
		free(b->stat_cells[i]);
	free(b->stat_cells);
	free(b->key_texts);
	free(b->keys);
	free(b->groups);
	free(b->merges);
	free(b->events);
	free(b->lanes);
	if (b->dirfd >= 0)
		close(b->dirfd);
}

/* Writes the page to a new file beside @path, then renames it to @path. 0 or -errno. */
static int write_whole(const struct jw_page *page, const char *path)
{
	struct stat st;
	char tmp[4096];
	FILE *f;
	int fd, ret;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = jw_page_write(page, f);
	if (fchmod(fd, 0644) && !ret)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = errno ? -errno : -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int jw_logpage__write(struct jw_logpage *lp, struct jw_summary *sum, size_t top, long pid,
		      const char *range, const char *path)
{
	struct build b = { .lp = lp, .pid = pid, .dirfd = -1 };
	size_t groups = jw_summary__groups(sum);
	char made[40] = "-", written[40] = "-";
	int ret;

	b.dirfd = open(lp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b.dirfd < 0) {
		ret = -errno;
		fprintf(stderr, "jankwatch: report: cannot read %s: %s\n", lp->dir, strerror(-ret));
		return ret;
	}
	jw_when_text((uint64_t)time(NULL) * 1000, made, sizeof(made));
	b.page.dir = lp->dir;
	b.page.range = range;
	b.page.made = made;
	jw_summary__totals(sum, &b.page.totals);
	ret = make_lanes(&b);
	if (!ret)
		ret = make_events(&b, sum);
	if (!ret)
		ret = make_keys(&b, sum);
	if (!ret)
		ret = make_groups(&b, sum, top && top < groups ? top : groups);
	if (!ret)
		ret = read_stats(&b, written, sizeof(written));
	if (ret) {
		fprintf(stderr, "jankwatch: report: %s\n", strerror(-ret));
	} else {
		ret = write_whole(&b.page, path);
		if (ret)
			fprintf(stderr, "jankwatch: report: cannot write %s: %s\n", path,
				strerror(-ret));
	}
	build_free(&b);
	return ret;
}
