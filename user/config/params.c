// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy parameters: every one in one table (name, default, range, help) so that parsing,
 * range messages, the config file and the usage text cannot disagree.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config/cli.h"
#include "config/params.h"

#define JW_MSG_MAX 512

/* The seed's budget: sample_count can never exceed 2500 / sample_interval - 4. */
#define JW_SAMPLE_BUDGET_MS 2500
#define JW_SAMPLE_COUNT_DEFAULT 10

enum param_flags {
	PF_AT_LEAST = 1 << 0,		/* the range reads ">= min"; max only guards overflow */
	PF_DERIVED_MAX = 1 << 1,	/* the real maximum depends on sample_interval */
};

struct param_def {
	enum jw_param param;
	const char *name;
	int64_t def;
	int64_t min;
	int64_t max;
	int64_t step;		/* 0 or 1: any value; else the value must be a multiple of it */
	unsigned int flags;
	const char *help;
};

static const struct param_def params_table[] = {
	[JW_P_LOG_TYPE] = { JW_P_LOG_TYPE, "log_type", 0, 0, 2, 0, 0,
		"0: stack report, trace over trace_threshold_ms; 1: stack only; 2: trace only" },
	[JW_P_SAMPLE_INTERVAL] = { JW_P_SAMPLE_INTERVAL, "sample_interval", 150, 50, 500, 0, 0,
		"detection interval, ms (the jank threshold under log_type 1)" },
	[JW_P_IGNORE_STARTUP_TIME] = { JW_P_IGNORE_STARTUP_TIME, "ignore_startup_time",
		10, 3, 86400 * 365, 0, PF_AT_LEAST,
		"seconds after the process started with no detection" },
	/* 46 is the maximum at the smallest sample_interval; jw_params_finish() narrows it. */
	[JW_P_SAMPLE_COUNT] = { JW_P_SAMPLE_COUNT, "sample_count",
		JW_SAMPLE_COUNT_DEFAULT, 1, JW_SAMPLE_BUDGET_MS / 50 - 4, 0, PF_DERIVED_MAX,
		"stack samples kept per report, evenly spaced over the task" },
	[JW_P_REPORT_TIMES_PER_APP] = { JW_P_REPORT_TIMES_PER_APP, "report_times_per_app",
		1, 1, 3, 0, 0, "stack reports per process per day (per hour with --dev)" },
	[JW_P_THRESHOLD_MS] = { JW_P_THRESHOLD_MS, "threshold_ms", 150, 1, 3600000, 0, 0,
		"a task longer than this is a jank (log_type 0 and 2)" },
	[JW_P_TRACE_THRESHOLD_MS] = { JW_P_TRACE_THRESHOLD_MS, "trace_threshold_ms",
		450, 1, 3600000, 0, 0, "a task longer than this gets a trace log" },
	[JW_P_HANG_MS] = { JW_P_HANG_MS, "hang_ms", 6000, 100, 3600000, 0, 0,
		"a task still running after this is reported as a hang" },
	[JW_P_SAMPLE_PERIOD_MS] = { JW_P_SAMPLE_PERIOD_MS, "sample_period_ms", 10, 1, 1000, 0, 0,
		"stack sampling period while a task runs, ms" },
	/* The BPF side copies the stack in 8-byte words. */
	[JW_P_STACK_BYTES] = { JW_P_STACK_BYTES, "stack_bytes", 16384, 512, 65536, 8, 0,
		"bytes of user stack copied for DWARF unwinding" },
	[JW_P_LOG_QUOTA_BYTES] = { JW_P_LOG_QUOTA_BYTES, "log_quota_bytes",
		10485760, 0, 1099511627776LL, 0, 0, "log directory quota, bytes" },
	[JW_P_LOG_MAX_AGE_DAYS] = { JW_P_LOG_MAX_AGE_DAYS, "log_max_age_days", 7, 1, 3650, 0, 0,
		"log files older than this are removed" },
	[JW_P_FLIGHT_RECORDER_S] = { JW_P_FLIGHT_RECORDER_S, "flight_recorder_s", 0, 0, 60, 0, 0,
		"seconds of trace kept before a jank (0: off)" },
	[JW_P_STATS_SAMPLING_INTERVAL] = { JW_P_STATS_SAMPLING_INTERVAL,
		"stats_sampling_interval", 1, 1, 1000000, 0, 0,
		"record 1 task in N in the statistics" },
	[JW_P_STATS_MAX_ENTRIES] = { JW_P_STATS_MAX_ENTRIES, "stats_max_entries", 1500, 1,
		1000000, 0, 0, "statistics rows kept; more go to the OVERFLOW row" },
	[JW_P_WAIT_TRACEPOINTS] = { JW_P_WAIT_TRACEPOINTS, "wait_tracepoints", 2, 0, 3, 0, 0,
		"syscall mode: 0 uprobes on the C library's wait functions (cost the watched loop "
		"only); 1 the wait system calls' returns in the kernel: fexit on their functions "
		"where the kernel has BPF trampolines (a program on the machine's waits alone), "
		"else their own exit tracepoints (cheaper per wait, but every system call of the "
		"machine takes the tracing path; raw_syscalls' on a kernel without them); 2 fexit "
		"where the kernel has it, else whichever of 0 and 1 costs the machine less, "
		"measured at start and again as the loop's pace moves; 3 no hook on the waits: a task from the "
		"thread's switch back in after sleeping in a wait to its next sleep in one (a wait "
		"that returns without sleeping does not split its tasks)" },
	[JW_P_HANDLER_SITES] = { JW_P_HANDLER_SITES, "handler_sites", 100, 0, 1000000, 0, 0,
		"probes where the loop calls its callbacks (a preset's handler sites) name every "
		"callback's statistics row and a timer's lateness, while a process makes at most "
		"this many such calls a second (past it: hooked one N-th of the time, a second in N "
		"or past N = 60 a shorter window each minute, the rows' counts scaled; two probe "
		"hits a call); 0: none" },
	[JW_P_EVENTS_KEEP] = { JW_P_EVENTS_KEEP, "events_keep", 1, 1, JW_EVENTS_KEEP_MAX, 0, 0,
		"rotated events.jsonl files kept (events.jsonl.1 .. .N), 1 MiB each" },
	[JW_P_EVENTS_LINE_MAX] = { JW_P_EVENTS_LINE_MAX, "events_line_max", JW_EVENTS_LINE_DEFAULT,
		JW_EVENTS_LINE_MIN, 1048576, 0, 0,
		"bytes an event line may take: past it heaviest_stack keeps its innermost frames "
		"(the stack log keeps all)" },
	[JW_P_JOURNAL] = { JW_P_JOURNAL, "journal", 0, 0, 1, 0, 0,
		"1: each event also into the systemd journal" },
	[JW_P_METRICS_INTERVAL_S] = { JW_P_METRICS_INTERVAL_S, "metrics_interval_s", 15, 1, 3600,
		0, 0, "seconds between two writes of metrics_textfile" },
	[JW_P_METRICS_MAX_HANDLERS] = { JW_P_METRICS_MAX_HANDLERS, "metrics_max_handlers", 100, 1,
		10000, 0, 0,
		"handlers with series of their own in the metrics (the busiest first seen); the "
		"others are summed in one handler=\"other\" series per process" },
	[JW_P_SAMPLERS] = { JW_P_SAMPLERS, "samplers", 2, 0, 2, 0, 0,
		"the stacks' cpu-clock timers: 0 one per watched thread (the kernel starts and "
		"stops it at each of the thread's context switches); 1 one per CPU (running "
		"whoever is there: no cost per switch, a wakeup of each CPU every "
		"sample_period_ms); 2 whichever costs less as the watched threads' switches a "
		"second move" },
	[JW_P_SCHED_HOOKS] = { JW_P_SCHED_HOOKS, "sched_hooks", 1, 0, 1, 0, 0,
		"where the watched threads' context switches are seen: 0 sched_switch, a program "
		"on every switch of the machine; 1 each watched thread's own switch-out event, "
		"nothing on other threads' switches (its switch back in taken where a program next "
		"runs on it; kernels with BTF, 5.17 and later: sched_switch on the others)" },
};

_Static_assert(sizeof(params_table) / sizeof(params_table[0]) == JW_P_COUNT,
	       "params_table needs one row per enum jw_param");

/* burst=N/T/W: the three numbers, table-driven like the parameters. */
struct burst_part {
	const char *what;
	int64_t min;
	int64_t max;
};

static const struct burst_part burst_parts[3] = {
	{ "N", 2, 1000 },
	{ "T", 1, 3600000 },
	{ "W", 1, 86400 },
};

#define BURST_HELP "N janks (2..1000), each over T ms (1..3600000), within W s (1..86400)"
#define BURST_RANGE "off or N/T/W: " BURST_HELP


const char *jw_param_name(enum jw_param p)
{
	if ((unsigned int)p >= JW_P_COUNT)
		return NULL;
	return params_table[p].name;
}

void jw_params_defaults(struct jw_params *params)
{
	int i;

	memset(params, 0, sizeof(*params));
	for (i = 0; i < JW_P_COUNT; i++)
		params->v[i] = params_table[i].def;
}

static const struct param_def *find_param(const char *name)
{
	int i;

	for (i = 0; i < JW_P_COUNT; i++)
		if (!strcmp(params_table[i].name, name))
			return &params_table[i];
	return NULL;
}

/* The allowed range as the user should read it, e.g. "50..500" or ">= 3 (at most 31536000)". */
static void format_range(const struct param_def *d, char *buf, size_t len)
{
	if (d->flags & PF_AT_LEAST)
		snprintf(buf, len, ">= %lld (at most %lld)", (long long)d->min, (long long)d->max);
	else if (d->flags & PF_DERIVED_MAX)
		snprintf(buf, len, "%lld..(%d/sample_interval - 4), at most %lld (with "
			 "sample_interval=%lld)", (long long)d->min, JW_SAMPLE_BUDGET_MS,
			 (long long)d->max, (long long)params_table[JW_P_SAMPLE_INTERVAL].min);
	else if (d->step > 1)
		snprintf(buf, len, "%lld..%lld in multiples of %lld", (long long)d->min,
			 (long long)d->max, (long long)d->step);
	else
		snprintf(buf, len, "%lld..%lld", (long long)d->min, (long long)d->max);
}

/*
 * A strict decimal integer: optional '-', digits, nothing else (no spaces, '+', hex or units).
 * Returns 0, -EINVAL when @s is not one, -ERANGE when it does not fit in 64 bits.
 */
static int parse_int64(const char *s, int64_t *out)
{
	const char *digits = *s == '-' ? s + 1 : s;
	long long v;
	char *end;

	if (!isdigit((unsigned char)*digits))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int set_number(struct jw_params *params, const struct param_def *d, const char *value,
		      char *err, size_t errlen)
{
	char range[96];
	int64_t v = 0;
	int ret;

	format_range(d, range, sizeof(range));
	if (!*value) {
		jw_set_err(err, errlen, "%s=: empty value, allowed %s", d->name, range);
		return -EINVAL;
	}
	ret = parse_int64(value, &v);
	if (ret == -EINVAL) {
		jw_set_err(err, errlen, "%s=%s: not a decimal integer, allowed %s", d->name, value,
			range);
		return -EINVAL;
	}
	if (ret == -ERANGE || v < d->min || v > d->max) {
		jw_set_err(err, errlen, "%s=%s: out of range, allowed %s", d->name, value, range);
		return -EINVAL;
	}
	if (d->step > 1 && v % d->step) {
		jw_set_err(err, errlen, "%s=%s: not a multiple of %lld, allowed %s", d->name, value,
			(long long)d->step, range);
		return -EINVAL;
	}
	params->v[d->param] = v;
	params->given |= 1u << d->param;
	return 0;
}

/* One N, T or W of burst=N/T/W. */
static bool burst_part_ok(const struct burst_part *bp, const char *s, uint32_t *out)
{
	int64_t v;

	if (parse_int64(s, &v) || v < bp->min || v > bp->max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int set_burst(struct jw_params *params, const char *value, char *err, size_t errlen)
{
	struct jw_burst b = { .on = true };
	uint32_t *dst[3] = { &b.count, &b.over_ms, &b.within_s };
	char buf[64], *rest = buf, *part;
	size_t len = strlen(value);
	int i;

	if (!strcmp(value, "off")) {
		memset(&params->burst, 0, sizeof(params->burst));
		return 0;
	}
	/* Longer than any valid N/T/W ("1000/3600000/86400" is 18 characters). */
	if (len >= sizeof(buf) || !strchr(value, '/'))
		goto err_syntax;
	memcpy(buf, value, len + 1);
	for (i = 0; i < 3; i++) {
		part = strsep(&rest, "/");
		if (!part)
			goto err_syntax;
		if (!burst_part_ok(&burst_parts[i], part, dst[i])) {
			jw_set_err(err, errlen, "burst=%s: bad %s, allowed %s", value,
				burst_parts[i].what, BURST_RANGE);
			return -EINVAL;
		}
	}
	if (rest)
		goto err_syntax;
	params->burst = b;
	return 0;

err_syntax:
	jw_set_err(err, errlen, "burst=%s: not off or N/T/W, allowed %s", value, BURST_RANGE);
	return -EINVAL;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/*
 * Edit distance counting a swap of two neighbours as one edit ("brust" is one typo away from
 * "burst"), for "did you mean". Keys of 64 characters or more get no suggestion.
 */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t rows[3][64], *pp, *prev, *cur;

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		rows[0][j] = j;
	for (i = 1; i <= la; i++) {
		pp = rows[(i + 1) % 3];
		prev = rows[(i + 2) % 3];
		cur = rows[i % 3];
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			cur[j] = min3(prev[j - 1] + (a[i - 1] != b[j - 1]), prev[j] + 1,
				      cur[j - 1] + 1);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
		}
	}
	return rows[la % 3][lb];
}

/* The parameter @key was most likely meant as, or NULL when none is close enough. */
static const char *closest_param(const char *key)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX, d;
	int i;

	for (i = 0; i <= JW_P_COUNT; i++) {
		const char *name = i < JW_P_COUNT ? params_table[i].name : "burst";

		d = edit_distance(key, name);
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	/* A typo changes a few letters; beyond a third of the name it is another word. */
	if (best && best_d <= 3 && best_d * 3 <= strlen(best))
		return best;
	return NULL;
}

static void unknown_param(const char *key, const char *value, char *err, size_t errlen)
{
	const char *guess = closest_param(key);
	char list[JW_MSG_MAX];
	size_t off = 0;
	int i;

	if (guess) {
		jw_set_err(err, errlen, "%s=%s: unknown parameter, did you mean %s?", key, value,
			guess);
		return;
	}
	for (i = 0; i < JW_P_COUNT && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s, ", params_table[i].name);
	jw_set_err(err, errlen, "%s=%s: unknown parameter, valid: %sburst", key, value, list);
}

/* Sets @key to @value, both already split and trimmed. */
static int set_kv(struct jw_params *params, const char *key, const char *value, char *err,
		  size_t errlen)
{
	const struct param_def *d;

	if (!*key) {
		jw_set_err(err, errlen, "=%s: missing parameter name, expected KEY=VALUE", value);
		return -EINVAL;
	}
	if (!strcmp(key, "burst"))
		return set_burst(params, value, err, errlen);
	d = find_param(key);
	if (!d) {
		unknown_param(key, value, err, errlen);
		return -EINVAL;
	}
	return set_number(params, d, value, err, errlen);
}

int jw_params_set(struct jw_params *params, const char *key_value, char *err, size_t errlen)
{
	const char *eq = key_value ? strchr(key_value, '=') : NULL;
	char key[128];
	size_t klen;

	if (!eq) {
		jw_set_err(err, errlen, "%s: missing '=', expected KEY=VALUE",
			key_value ? key_value : "(null)");
		return -EINVAL;
	}
	klen = eq - key_value;
	if (klen >= sizeof(key)) {
		jw_set_err(err, errlen, "%.*s...: unknown parameter", 32, key_value);
		return -EINVAL;
	}
	memcpy(key, key_value, klen);
	key[klen] = '\0';
	return set_kv(params, key, eq + 1, err, errlen);
}

bool jw_params_given(const struct jw_params *params, enum jw_param p)
{
	return params->given & (1u << p);
}

bool jw_params_thread_switches(const struct jw_params *params)
{
	return params->v[JW_P_SCHED_HOOKS] == 1;
}

/* The seed: "with log_type 1 the four seed parameters must all be given". */
static int check_seed_four(const struct jw_params *params, char *err, size_t errlen)
{
	static const enum jw_param four[] = {
		JW_P_SAMPLE_INTERVAL, JW_P_IGNORE_STARTUP_TIME, JW_P_SAMPLE_COUNT,
		JW_P_REPORT_TIMES_PER_APP,
	};
	char missing[128] = "";
	size_t off = 0, i;

	for (i = 0; i < sizeof(four) / sizeof(four[0]); i++)
		if (!jw_params_given(params, four[i]))
			off += snprintf(missing + off, sizeof(missing) - off, "%s%s",
					off ? ", " : "", jw_param_name(four[i]));
	if (!off)
		return 0;
	jw_set_err(err, errlen, "log_type=1 needs sample_interval, ignore_startup_time, sample_count "
		"and report_times_per_app all given; missing: %s", missing);
	return -EINVAL;
}

static int check_sample_count(struct jw_params *params, char *err, size_t errlen)
{
	int64_t interval = params->v[JW_P_SAMPLE_INTERVAL];
	int64_t max = JW_SAMPLE_BUDGET_MS / interval - 4;
	int64_t count = params->v[JW_P_SAMPLE_COUNT];

	if (!jw_params_given(params, JW_P_SAMPLE_COUNT)) {
		params->v[JW_P_SAMPLE_COUNT] = max < JW_SAMPLE_COUNT_DEFAULT ?
					       max : JW_SAMPLE_COUNT_DEFAULT;
		return 0;
	}
	if (count >= 1 && count <= max)
		return 0;
	jw_set_err(err, errlen, "sample_count=%lld: out of range, allowed 1..%lld "
		"(%d/sample_interval - 4, depends on sample_interval=%lld)", (long long)count,
		(long long)max, JW_SAMPLE_BUDGET_MS, (long long)interval);
	return -EINVAL;
}

int jw_params_finish(struct jw_params *params, char *err, size_t errlen)
{
	int64_t type = params->v[JW_P_LOG_TYPE];
	int ret;

	if (type == 1) {
		ret = check_seed_four(params, err, errlen);
		if (ret)
			return ret;
	}
	ret = check_sample_count(params, err, errlen);
	if (ret)
		return ret;
	/* Under log_type 0 stack reports cover threshold..trace threshold: it must not be empty. */
	if (type == 0 && params->v[JW_P_THRESHOLD_MS] >= params->v[JW_P_TRACE_THRESHOLD_MS]) {
		jw_set_err(err, errlen, "threshold_ms=%lld: must be below trace_threshold_ms=%lld "
			"under log_type 0", (long long)params->v[JW_P_THRESHOLD_MS],
			(long long)params->v[JW_P_TRACE_THRESHOLD_MS]);
		return -EINVAL;
	}
	return 0;
}

/* Trims @s in place and returns its first non-space character. */
static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* A '#' starts a comment at the start of a line or after whitespace; "a#b" stays a value. */
static void strip_comment(char *line)
{
	char *p;

	for (p = line; *p; p++) {
		if (*p == '#' && (p == line || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

/*
 * One line of a config file: a parameter, or one of text (exe=PATH, name=NAME, log_dir=PATH,
 * metrics_textfile=PATH, metrics_listen=ADDR:PORT) for
 * @other, which a reload and jw_params_load_file() do not pass (NULL: passed over).
 */
static int load_line(struct jw_params *params, jw_params_other_fn other, void *ctx, char *line,
		     char *err, size_t errlen)
{
	char *eq, *key, *value;

	strip_comment(line);
	line = trim(line);
	if (!*line)
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		jw_set_err(err, errlen, "%s: missing '=', expected KEY=VALUE", line);
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!strcmp(key, "exe") || !strcmp(key, "name") || !strcmp(key, "log_dir") ||
	    !strcmp(key, "metrics_textfile") || !strcmp(key, "metrics_listen"))
		return other ? other(ctx, key, value, err, errlen) : 0;
	return set_kv(params, key, value, err, errlen);
}

int jw_params_read_file(struct jw_params *params, const char *path, jw_params_other_fn other,
			void *ctx, char *err, size_t errlen)
{
	char msg[JW_MSG_MAX], *line = NULL;
	unsigned int lineno = 0;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		jw_set_err(err, errlen, "cannot open config file %s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		errno = 0;
		if (getline(&line, &cap, f) < 0)
			break;
		lineno++;
		ret = load_line(params, other, ctx, line, msg, sizeof(msg));
		if (ret) {
			jw_set_err(err, errlen, "%s:%u: %s", path, lineno, msg);
			goto out;
		}
	}
	/* getline() says -1 both at the end and on errors such as EISDIR. */
	if (ferror(f)) {
		ret = errno ? -errno : -EIO;
		jw_set_err(err, errlen, "cannot read config file %s: %s", path, strerror(-ret));
	}
out:
	free(line);
	fclose(f);
	return ret;
}

int jw_params_load_file(struct jw_params *params, const char *path, char *err, size_t errlen)
{
	return jw_params_read_file(params, path, NULL, NULL, err, errlen);
}


/* The parameters that are not numbers in the table: after it, in this order. */
static const struct jw_param_doc other_docs[] = {
	{ "burst", "off or N/T/W", "off", BURST_HELP ": the Nth such task of a process is "
	  "reported even under the jank threshold" },
	{ "metrics_textfile", "PATH", "none",
	  "the metrics in Prometheus' text format, written whole every metrics_interval_s "
	  "(node_exporter's textfile collector reads them)" },
	{ "metrics_listen", "ADDR:PORT or PORT", "none",
	  "the metrics served on http://ADDR:PORT/metrics (a PORT alone: 127.0.0.1)" },
};

bool jw_param_doc(size_t i, struct jw_param_doc *out)
{
	const struct param_def *d;

	if (i >= JW_P_COUNT) {
		i -= JW_P_COUNT;
		if (i >= sizeof(other_docs) / sizeof(other_docs[0]))
			return false;
		*out = other_docs[i];
		return true;
	}
	d = &params_table[i];
	out->name = d->name;
	out->help = d->help;
	format_range(d, out->range, sizeof(out->range));
	if (d->flags & PF_DERIVED_MAX)
		snprintf(out->def, sizeof(out->def), "min(%d, max)", JW_SAMPLE_COUNT_DEFAULT);
	else
		snprintf(out->def, sizeof(out->def), "%lld", (long long)d->def);
	return true;
}

void jw_params_usage(FILE *f)
{
	struct jw_param_doc doc;
	size_t i;

	for (i = 0; jw_param_doc(i, &doc); i++) {
		fprintf(f, "  %-24s %s; default %s\n", doc.name, doc.range, doc.def);
		jw_cli_wrap(f, doc.help, 0, 8, 78);
	}
	fputs("\nWith log_type 1, sample_interval, ignore_startup_time, sample_count and\n"
	      "report_times_per_app must all be given.\n", f);
}
