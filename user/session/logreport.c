// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/jsonread.h"
#include "base/when.h"
#include "config/cli.h"
#include "config/params.h"
#include "report/summary.h"
#include "session/logargs.h"
#include "session/logpage.h"
#include "session/logreport.h"

#define DEFAULT_TOP 10

struct logreport {
	const char *dir;
	struct jw_range range;
	long top;
	bool json;
	const char *html;		/* --html FILE */
	char range_text[512];		/* what --since, --until and -p kept, in words */
	size_t events, files_read;
	struct jw_summary *sum;
	struct jw_logpage *page;	/* with --html */
};

/* Adds option @c's @arg to what the page says the range is. */
static void range_said(struct logreport *lr, int c, const char *arg)
{
	size_t n = strlen(lr->range_text);

	snprintf(lr->range_text + n, sizeof(lr->range_text) - n, "%s%s %s", n ? ", " : "",
		 c == 's' ? "since" : c == 'u' ? "until" : "pid", arg);
}

static int parse_args(struct logreport *lr, int argc, char **argv)
{
	struct option opts[16];
	char shorts[16];
	int64_t now = jw_clock_ns(CLOCK_REALTIME);
	char *end;
	int c, ret;

	if (jw_cli_getopt(jw_cli_cmd("report"), ":", opts, 16, shorts, sizeof(shorts)))
		return -ENOSPC;
	optind = 0;
	opterr = 0;
	lr->top = DEFAULT_TOP;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'u':
		case 'p':
			ret = jw_range_option(&lr->range, "report", c, optarg, now);
			if (ret)
				return ret;
			range_said(lr, c, optarg);
			break;
		case 'H':
			if (!*optarg) {
				fprintf(stderr, "jankwatch: report: --html needs a file name\n");
				return -EINVAL;
			}
			lr->html = optarg;
			break;
		case 't':
			errno = 0;
			lr->top = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || lr->top < 0) {
				fprintf(stderr, "jankwatch: report: --top %s: not a count\n", optarg);
				return -EINVAL;
			}
			break;
		case 'j':
			lr->json = true;
			break;
		case 'h':
			jw_cli_help(jw_cli_cmd("report"), stdout);
			return 1;
		default:
			return jw_logargs_bad_option("report", c, argv);
		}
	}
	return jw_logargs_finish(&lr->range, "report", argc, argv, &lr->dir);
}

/* An event line's fields, as the summary takes them. */
struct line {
	struct jw_summary_event e;
	bool is_event;
	char *strs[6];
	char *files;		/* external_log's paths one after the other (with --html) */
	size_t n_files;
};

/* Keeps external_log's paths. 0 or -ENOMEM. */
static int keep_files(struct line *l, const struct jw_json_field *f)
{
	const char *p = f->items;
	size_t i;

	free(l->files);
	l->files = NULL;
	l->n_files = 0;
	if (!p)
		return 0;
	for (i = 0; i < f->n_items; i++)
		p += strlen(p) + 1;
	l->files = malloc((size_t)(p - f->items));
	if (!l->files)
		return -ENOMEM;
	memcpy(l->files, f->items, (size_t)(p - f->items));
	l->n_files = f->n_items;
	return 0;
}

static int keep_str(struct line *l, int i, const char **dst, const struct jw_json_field *f)
{
	if (f->type != JW_JSON_STR)
		return 0;
	free(l->strs[i]);
	l->strs[i] = strdup(f->str);
	if (!l->strs[i])
		return -ENOMEM;
	*dst = l->strs[i];
	return 0;
}

static int field(void *ctx, const struct jw_json_field *f)
{
	struct line *l = ctx;
	struct jw_summary_event *e = &l->e;

	if (!strcmp(f->key, "event") && f->type == JW_JSON_STR) {
		l->is_event = !strcmp(f->str, "MAIN_THREAD_JANK") ||
			      !strcmp(f->str, "MAIN_THREAD_HANG");
		e->hang = !strcmp(f->str, "MAIN_THREAD_HANG");
	} else if (!strcmp(f->key, "begin_time") && f->type == JW_JSON_NUM) {
		e->begin_ms = f->num > 0 ? (uint64_t)f->num : 0;
	} else if (!strcmp(f->key, "pid") && f->type == JW_JSON_NUM) {
		e->pid = f->num > 0 ? (uint32_t)f->num : 0;
	} else if (!strcmp(f->key, "wall_ms") && f->type == JW_JSON_NUM) {
		e->wall_ms = f->num;
	} else if (!strcmp(f->key, "cpu_ms") && f->type == JW_JSON_NUM) {
		e->cpu_ms = f->num;
	} else if (!strcmp(f->key, "runq_ms") && f->type == JW_JSON_NUM) {
		e->runq_ms = f->num;
	} else if (!strcmp(f->key, "blocked_ms") && f->type == JW_JSON_NUM) {
		e->blocked_ms = f->num;
	} else if (!strcmp(f->key, "io_ms") && f->type == JW_JSON_NUM) {
		e->io_ms = f->num;
	} else if (!strcmp(f->key, "external_log") && f->type == JW_JSON_ARRAY) {
		e->files = f->n_items;
		return keep_files(l, f);
	} else if (!strcmp(f->key, "log_over_limit") && f->type == JW_JSON_BOOL) {
		e->over_limit = f->b;
	} else if (!strcmp(f->key, "bundle_name")) {
		return keep_str(l, 0, &e->process, f);
	} else if (!strcmp(f->key, "handler")) {
		return keep_str(l, 1, &e->handler, f);
	} else if (!strcmp(f->key, "group")) {
		return keep_str(l, 2, &e->group, f);
	} else if (!strcmp(f->key, "heaviest_stack")) {
		return keep_str(l, 3, &e->heaviest_stack, f);
	} else if (!strcmp(f->key, "cause")) {
		return keep_str(l, 4, &e->cause, f);
	} else if (!strcmp(f->key, "withheld")) {
		return keep_str(l, 5, &e->withheld, f);
	}
	return 0;
}

/* Counts one line of events.jsonl. 0 or -ENOMEM. */
static int add_line(struct logreport *lr, const char *text, size_t len)
{
	struct line l = { 0 };
	int64_t begin_ns;
	size_t i, id;
	int ret;

	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (!len)
		return 0;
	ret = jw_json_fields(text, len, field, &l);
	if (ret == -EINVAL || (!ret && !l.is_event)) {
		jw_summary__bad_line(lr->sum);
		ret = 0;
	} else if (!ret) {
		begin_ns = (int64_t)l.e.begin_ms * 1000000;
		if (jw_range_has(&lr->range, begin_ns, (long)l.e.pid)) {
			ret = jw_summary__add(lr->sum, &l.e, &id);
			if (!ret && lr->page)
				ret = jw_logpage__add(lr->page, &l.e, id, l.files, l.n_files);
			lr->events++;
		}
	}
	for (i = 0; i < sizeof(l.strs) / sizeof(l.strs[0]); i++)
		free(l.strs[i]);
	free(l.files);
	return ret;
}

/* Counts the events of @name in the directory; a missing file is none. 0 or -errno (printed). */
static int read_events(struct logreport *lr, const char *name)
{
	char path[4096];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", lr->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return 0;
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "jankwatch: report: cannot read %s: %s\n", path, strerror(-ret));
		return ret;
	}
	lr->files_read++;
	while (!ret && (n = getline(&line, &cap, f)) > 0)
		ret = add_line(lr, line, (size_t)n);
	if (!ret && ferror(f))
		ret = -EIO;
	if (ret)
		fprintf(stderr, "jankwatch: report: cannot read %s: %s\n", path, strerror(-ret));
	free(line);
	fclose(f);
	return ret;
}

int jw_report_main(int argc, char **argv)
{
	struct logreport lr = { 0 };
	char name[32];
	struct jw_buf b;
	int ret, i;

	ret = parse_args(&lr, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (access(lr.dir, R_OK | X_OK)) {
		fprintf(stderr, "jankwatch: report: cannot read %s: %s\n", lr.dir, strerror(errno));
		return 1;
	}
	lr.sum = jw_summary__new();
	if (lr.html && lr.sum)
		lr.page = jw_logpage__new(lr.dir);
	if (!lr.sum || (lr.html && !lr.page)) {
		fprintf(stderr, "jankwatch: report: out of memory\n");
		jw_summary__free(lr.sum);
		return 1;
	}
	/* The rotated files hold the older events, the highest number the oldest. */
	for (i = JW_EVENTS_KEEP_MAX; !ret && i >= 1; i--) {
		snprintf(name, sizeof(name), "events.jsonl.%d", i);
		ret = read_events(&lr, name);
	}
	if (!ret)
		ret = read_events(&lr, "events.jsonl");
	if (!ret && !lr.files_read) {
		fprintf(stderr, "jankwatch: report: no events.jsonl in %s (is it jankwatch's log "
			"directory?)\n", lr.dir);
		ret = -ENOENT;
	}
	if (!ret && lr.html) {
		ret = jw_logpage__write(lr.page, lr.sum, (size_t)lr.top, lr.range.pid,
					lr.range_text[0] ? lr.range_text : NULL, lr.html);
		if (ret)
			goto out;
		if (!lr.json) {
			printf("%s: %zu events of %s\n", lr.html, lr.events, lr.dir);
			ret = fflush(stdout) ? -errno : 0;
			goto out;
		}
	}
	if (!ret && lr.json) {
		jw_buf_init(&b);
		jw_summary__write_json(lr.sum, lr.dir, (size_t)lr.top, &b);
		ret = b.err;
		if (!ret && (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout)))
			ret = -errno;
		jw_buf_free(&b);
	} else if (!ret) {
		ret = jw_summary__write_text(lr.sum, lr.dir, (size_t)lr.top, stdout);
	}
out:
	jw_logpage__free(lr.page);
	jw_summary__free(lr.sum);
	return ret ? 1 : 0;
}
