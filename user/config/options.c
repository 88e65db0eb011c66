// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watch command line and the policy parameters. Every parameter lives in one table (name,
 * default, range, help) so that parsing, range messages and the usage text cannot disagree.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config/options.h"

#define JW_DEFAULT_LOG_DIR "/var/log/jankwatch"
#define JW_MAX_DURATION_S 31536000.0	/* one year */
#define JW_PID_MAX 4194304		/* PID_MAX_LIMIT: no kernel hands out a larger PID */
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
	[JW_P_WAIT_TRACEPOINTS] = { JW_P_WAIT_TRACEPOINTS, "wait_tracepoints", 2, 0, 2, 0, 0,
		"syscall mode: 0 uprobes on the C library's wait functions (cost the watched loop "
		"only); 1 the system call tracepoints (cheaper per wait, but every system call of "
		"the machine pays); 2 whichever costs the machine less, measured at start" },
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

static bool given(const struct jw_params *params, enum jw_param p)
{
	return params->given & (1u << p);
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
		if (!given(params, four[i]))
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

	if (!given(params, JW_P_SAMPLE_COUNT)) {
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

/* One config file line; whitespace around the key, '=' and value is allowed. */
static int set_string(char **dst, const char *opt, const char *val, char *err, size_t errlen);

/* One more executable to watch: --exe PATH, or a config file's exe=PATH (@how: "--exe ", "exe="). */
static int add_exe(struct jw_config *cfg, const char *how, const char *path, char *err,
		   size_t errlen)
{
	if (cfg->n_exes == JW_MAX_EXES) {
		jw_set_err(err, errlen, "%s%s: at most %d executables", how, path, JW_MAX_EXES);
		return -EINVAL;
	}
	cfg->exes[cfg->n_exes] = strdup(path);
	if (!cfg->exes[cfg->n_exes])
		return -ENOMEM;
	cfg->n_exes++;
	return 0;
}

/*
 * One line of a config file: a parameter, or a target (exe=PATH, log_dir=PATH) that only a
 * @cfg being parsed takes (a reload, or jw_params_load_file(), passes over them).
 */
static int load_line(struct jw_params *params, struct jw_config *cfg, char *line, char *err,
		     size_t errlen)
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
	if (!strcmp(key, "exe")) {
		if (!cfg)
			return 0;
		if (!*value) {
			jw_set_err(err, errlen, "exe='': empty value");
			return -EINVAL;
		}
		return add_exe(cfg, "exe=", value, err, errlen);
	}
	if (!strcmp(key, "log_dir")) {
		if (!cfg || cfg->log_dir_given)
			return 0;	/* --log-dir wins */
		return set_string(&cfg->log_dir, "log_dir", value, err, errlen);
	}
	return set_kv(params, key, value, err, errlen);
}

static int load_file(struct jw_params *params, struct jw_config *cfg, const char *path,
		     char *err, size_t errlen)
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
		ret = load_line(params, cfg, line, msg, sizeof(msg));
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
	return load_file(params, NULL, path, err, errlen);
}

void jw_config_free(struct jw_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->n_probes; i++) {
		free(cfg->probes[i].bin);
		free(cfg->probes[i].entry);
		free(cfg->probes[i].exit);
	}
	memset(cfg->probes, 0, sizeof(cfg->probes));
	cfg->n_probes = 0;
	free(cfg->thread);
	free(cfg->config_file);
	free(cfg->log_dir);
	free(cfg->raw_file);
	free(cfg->user);
	for (i = 0; i < cfg->n_exes; i++) {
		free(cfg->exes[i]);
		cfg->exes[i] = NULL;
	}
	cfg->n_exes = 0;
	/* Cleared so that a second free, or a free after a failed parse, is harmless. */
	cfg->thread = NULL;
	cfg->config_file = NULL;
	cfg->log_dir = NULL;
	cfg->raw_file = NULL;
	cfg->user = NULL;
	cfg->cmd = NULL;
}

enum {
	OPT_PROBE = 256,
	OPT_THREAD,
	OPT_SET,
	OPT_CONFIG,
	OPT_ALL,
	OPT_DEV,
	OPT_LOG_DIR,
	OPT_FORMAT,
	OPT_DURATION,
	OPT_UNWIND,
	OPT_STACK_BYTES,
	OPT_RAW,
	OPT_LOOP,
	OPT_USER,
	OPT_EXE,
	OPT_FOLLOW,
};

static const struct option long_opts[] = {
	{ "probe", required_argument, NULL, OPT_PROBE },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "set", required_argument, NULL, OPT_SET },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "dev", no_argument, NULL, OPT_DEV },
	{ "log-dir", required_argument, NULL, OPT_LOG_DIR },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
	{ "raw", required_argument, NULL, OPT_RAW },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "user", required_argument, NULL, OPT_USER },
	{ "exe", required_argument, NULL, OPT_EXE },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* '+': stop at the first non-option so it can be refused; ':': getopt prints nothing. */
static const char short_opts[] = "+:p:vqh";

/* The --set values, applied after --config whatever the argument order. */
struct pending_sets {
	const char **kv;
	size_t n;
	char **owned;		/* "stack_bytes=N" strings made from --stack-bytes */
	size_t n_owned;
};

static int add_pid(struct jw_config *cfg, pid_t pid)
{
	size_t i;

	for (i = 0; i < cfg->n_pids; i++)
		if (cfg->pids[i] == pid)
			return 0;
	if (cfg->n_pids == JW_MAX_PIDS)
		return -ENOSPC;
	cfg->pids[cfg->n_pids++] = pid;
	return 0;
}

/* -p PID[,PID...]; a PID given twice is watched once. */
static int add_pids(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *p = arg;
	char *end;
	long v;

	for (;;) {
		errno = 0;
		v = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : 0;
		if (!isdigit((unsigned char)*p) || errno || v < 1 || v > JW_PID_MAX ||
		    (*end && *end != ',')) {
			jw_set_err(err, errlen, "-p %s: bad PID '%.*s', allowed 1..%d", arg,
				(int)strcspn(p, ","), p, JW_PID_MAX);
			return -EINVAL;
		}
		if (add_pid(cfg, (pid_t)v)) {
			jw_set_err(err, errlen, "-p %s: too many PIDs, at most %d", arg, JW_MAX_PIDS);
			return -EINVAL;
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* --probe BIN:ENTRY[:EXIT]; BIN cannot hold a ':' since the first one ends it. */
static int add_probe(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *c1 = strchr(arg, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct jw_probe_spec *ps;

	if (!c1 || c1 == arg || !c1[1] || c2 == c1 + 1 || (c2 && (!c2[1] || strchr(c2 + 1, ':')))) {
		jw_set_err(err, errlen, "--probe %s: expected BIN:ENTRY[:EXIT] with no empty part",
			arg);
		return -EINVAL;
	}
	if (cfg->n_probes == JW_MAX_PROBE_SPECS) {
		jw_set_err(err, errlen, "--probe %s: too many probes, at most %d", arg,
			JW_MAX_PROBE_SPECS);
		return -EINVAL;
	}
	ps = &cfg->probes[cfg->n_probes];
	ps->bin = strndup(arg, c1 - arg);
	ps->entry = c2 ? strndup(c1 + 1, c2 - c1 - 1) : strdup(c1 + 1);
	ps->exit = c2 ? strdup(c2 + 1) : NULL;
	if (!ps->bin || !ps->entry || (c2 && !ps->exit))
		goto err_free;
	cfg->n_probes++;
	return 0;

err_free:
	free(ps->bin);
	free(ps->entry);
	free(ps->exit);
	memset(ps, 0, sizeof(*ps));
	jw_set_err(err, errlen, "--probe %s: out of memory", arg);
	return -ENOMEM;
}

/* Replaces *@dst with a copy of a non-empty @val; a repeated option takes the last value. */
static int set_string(char **dst, const char *opt, const char *val, char *err, size_t errlen)
{
	char *copy;

	if (!*val) {
		jw_set_err(err, errlen, "%s '': empty value", opt);
		return -EINVAL;
	}
	copy = strdup(val);
	if (!copy) {
		jw_set_err(err, errlen, "%s %s: out of memory", opt, val);
		return -ENOMEM;
	}
	free(*dst);
	*dst = copy;
	return 0;
}

static int set_format(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "tree")) {
		cfg->format = JW_FORMAT_TREE;
	} else if (!strcmp(arg, "folded")) {
		cfg->format = JW_FORMAT_FOLDED;
	} else {
		jw_set_err(err, errlen, "--format %s: unknown format, allowed tree or folded", arg);
		return -EINVAL;
	}
	return 0;
}

static const char *const loop_names[JW_LOOP_COUNT] = {
	[JW_LOOP_AUTO] = "auto",	[JW_LOOP_SYSCALL] = "syscall", [JW_LOOP_GLIB] = "glib",
	[JW_LOOP_LIBUV] = "libuv",	[JW_LOOP_NODE] = "node",	[JW_LOOP_LIBEVENT] = "libevent",
	[JW_LOOP_REDIS] = "redis",	[JW_LOOP_NGINX] = "nginx",	[JW_LOOP_PYTHON] = "python",
};

const char *jw_loop_name(enum jw_loop loop)
{
	return (unsigned int)loop < JW_LOOP_COUNT ? loop_names[loop] : "?";
}

static int set_loop(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < JW_LOOP_COUNT && strcmp(arg, loop_names[i]); i++)
		;
	if (i == JW_LOOP_COUNT) {
		jw_set_err(err, errlen, "--loop %s: unknown loop, allowed auto, syscall, glib, libuv, "
			   "node, libevent, redis, nginx or python", arg);
		return -EINVAL;
	}
	cfg->loop = i;
	cfg->loop_given = true;
	return 0;
}

static int set_unwind(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = {
		[JW_UNWIND_MODE_AUTO] = "auto",
		[JW_UNWIND_MODE_FP] = "fp",
		[JW_UNWIND_MODE_DWARF] = "dwarf",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			cfg->unwind = i;
			return 0;
		}
	}
	jw_set_err(err, errlen, "--unwind %s: unknown mode, allowed auto, fp or dwarf", arg);
	return -EINVAL;
}

/*
 * Digits with at most one '.': no "inf", "1e3", "0x10" or spaces. Computed by hand since
 * strtod() follows LC_NUMERIC, and "0.5" must mean half a second in every locale.
 * Returns a negative value when @s is not such a number.
 */
static double parse_decimal(const char *s)
{
	double v = 0, scale = 1;
	bool digits = false, dot = false;

	for (; *s; s++) {
		if (*s == '.' && !dot) {
			dot = true;
		} else if (isdigit((unsigned char)*s)) {
			digits = true;
			if (dot) {
				scale /= 10;
				v += (*s - '0') * scale;
			} else {
				v = v * 10 + (*s - '0');
			}
		} else {
			return -1;
		}
	}
	return digits ? v : -1;
}

static int set_duration(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	double v = parse_decimal(arg);

	if (v < 0) {
		jw_set_err(err, errlen,
			"--duration %s: not a number of seconds, allowed > 0 up to %.0f", arg,
			JW_MAX_DURATION_S);
		return -EINVAL;
	}
	if (v == 0 || v > JW_MAX_DURATION_S) {
		jw_set_err(err, errlen, "--duration %s: out of range, allowed > 0 up to %.0f", arg,
			JW_MAX_DURATION_S);
		return -EINVAL;
	}
	cfg->duration_s = v;
	return 0;
}

/* --thread TID|NAME: all digits is a TID and must be one; any other text is a thread name. */
static int set_thread(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	long tid;

	if (arg[0] && arg[strspn(arg, "0123456789")] == '\0') {
		errno = 0;
		tid = strtol(arg, NULL, 10);
		if (errno || tid < 1 || tid > JW_PID_MAX) {
			jw_set_err(err, errlen, "--thread %s: bad TID, allowed 1..%d or a thread name",
				arg, JW_PID_MAX);
			return -EINVAL;
		}
	}
	return set_string(&cfg->thread, "--thread", arg, err, errlen);
}

static const char *long_name(int val)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

/* getopt's '?' and ':' turned into one line naming the option. */
static int bad_option(int c, char **argv, char *err, size_t errlen)
{
	const char *arg = argv[optind - 1];

	if (c == ':' && optopt > 0 && optopt < 256)
		jw_set_err(err, errlen, "option -%c needs an argument", optopt);
	else if (c == ':')
		jw_set_err(err, errlen, "option --%s needs an argument", long_name(optopt));
	else if (optopt && !strncmp(arg, "--", 2))
		jw_set_err(err, errlen, "option %.*s takes no argument", (int)strcspn(arg, "="), arg);
	else if (optopt > 0)
		jw_set_err(err, errlen, "unknown option -%c", optopt);
	else
		jw_set_err(err, errlen, "unknown or ambiguous option %s", arg);
	return -EINVAL;
}

static int handle_option(struct jw_config *cfg, struct pending_sets *sets, int c, char **argv,
			 char *err, size_t errlen)
{
	switch (c) {
	case 'p':
		return add_pids(cfg, optarg, err, errlen);
	case OPT_PROBE:
		return add_probe(cfg, optarg, err, errlen);
	case OPT_THREAD:
		return set_thread(cfg, optarg, err, errlen);
	case OPT_SET:
		sets->kv[sets->n++] = optarg;
		return 0;
	case OPT_CONFIG:
		return set_string(&cfg->config_file, "--config", optarg, err, errlen);
	case OPT_ALL:
		cfg->all = true;
		return 0;
	case OPT_DEV:
		cfg->dev = true;
		return 0;
	case OPT_LOG_DIR:
		cfg->log_dir_given = true;
		return set_string(&cfg->log_dir, "--log-dir", optarg, err, errlen);
	case OPT_FORMAT:
		return set_format(cfg, optarg, err, errlen);
	case OPT_DURATION:
		return set_duration(cfg, optarg, err, errlen);
	case OPT_UNWIND:
		return set_unwind(cfg, optarg, err, errlen);
	case OPT_RAW:
		return set_string(&cfg->raw_file, "--raw", optarg, err, errlen);
	case OPT_LOOP:
		return set_loop(cfg, optarg, err, errlen);
	case OPT_USER:
		return set_string(&cfg->user, "--user", optarg, err, errlen);
	case OPT_EXE:
		return add_exe(cfg, "--exe ", optarg, err, errlen);
	case OPT_FOLLOW:
		cfg->follow = true;
		return 0;
	case OPT_STACK_BYTES:
		/* The same parameter as --set stack_bytes=N, queued with the --set values. */
		if (asprintf(&sets->owned[sets->n_owned], "stack_bytes=%s", optarg) < 0)
			return -ENOMEM;
		sets->kv[sets->n++] = sets->owned[sets->n_owned++];
		return 0;
	case 'v':
		cfg->verbosity++;
		return 0;
	case 'q':
		cfg->verbosity = -1;
		return 0;
	case 'h':
		jw_options_usage(stdout);
		cfg->help = true;
		return 0;
	default:
		return bad_option(c, argv, err, errlen);
	}
}

static int parse_argv(struct jw_config *cfg, struct pending_sets *sets, int argc, char **argv,
		      char *err, size_t errlen)
{
	int c, ret;

	/* 0, not 1: glibc then starts afresh, so the parser can run more than once. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		ret = handle_option(cfg, sets, c, argv, err, errlen);
		if (ret || cfg->help)
			return ret;
	}
	/* "--" ends the options: what follows is a program to start and watch. */
	if (optind < argc && optind > 0 && !strcmp(argv[optind - 1], "--")) {
		cfg->cmd = &argv[optind];
		optind = argc;
	}
	if (optind < argc) {
		jw_set_err(err, errlen, "unexpected argument '%s' (give processes with -p PID, or "
			"a program after --)", argv[optind]);
		return -EINVAL;
	}
	if (!cfg->n_pids && !cfg->cmd && !cfg->n_exes && !cfg->config_file) {
		jw_set_err(err, errlen, "no target: give -p PID, --exe PATH, or -- CMD [ARGS...]");
		return -EINVAL;
	}
	if (cfg->n_pids && cfg->cmd) {
		jw_set_err(err, errlen, "give -p PID or -- CMD, not both");
		return -EINVAL;
	}
	if (cfg->follow && !cfg->n_pids) {
		jw_set_err(err, errlen, "--follow: only with -p PID (-- CMD and --exe follow "
			   "their processes' children already)");
		return -EINVAL;
	}
	if (cfg->user && !cfg->cmd) {
		jw_set_err(err, errlen, "--user %s: only for a program started with -- CMD",
			cfg->user);
		return -EINVAL;
	}
	if (cfg->n_probes && cfg->loop != JW_LOOP_AUTO && cfg->loop != JW_LOOP_SYSCALL) {
		jw_set_err(err, errlen, "--loop %s and --probe: give one way to hook the loop",
			   jw_loop_name(cfg->loop));
		return -EINVAL;
	}
	return 0;
}

/* The config file first, then every --set on top of it, then the cross-parameter checks. */
static int apply_params(struct jw_config *cfg, const struct pending_sets *sets, char *err,
			size_t errlen)
{
	char msg[JW_MSG_MAX];
	size_t i;
	int ret;

	if (cfg->config_file) {
		ret = load_file(&cfg->params, cfg, cfg->config_file, err, errlen);
		if (ret)
			return ret == -ENOMEM ? ret : -EINVAL;
		if (!cfg->n_pids && !cfg->cmd && !cfg->n_exes) {
			jw_set_err(err, errlen, "no target: give -p PID, --exe PATH, or -- CMD "
				   "[ARGS...], or exe=PATH lines in %s", cfg->config_file);
			return -EINVAL;
		}
	}
	for (i = 0; i < sets->n; i++) {
		ret = jw_params_set(&cfg->params, sets->kv[i], msg, sizeof(msg));
		if (ret) {
			jw_set_err(err, errlen, "--set %s", msg);
			return ret;
		}
	}
	return jw_params_finish(&cfg->params, err, errlen);
}

int jw_options_parse(struct jw_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	struct pending_sets sets = { 0 };
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	jw_params_defaults(&cfg->params);
	cfg->log_dir = strdup(JW_DEFAULT_LOG_DIR);
	/* At most one --set per argument. */
	sets.kv = calloc(argc > 0 ? argc : 1, sizeof(*sets.kv));
	sets.owned = calloc(argc > 0 ? argc : 1, sizeof(*sets.owned));
	if (!cfg->log_dir || !sets.kv || !sets.owned) {
		jw_set_err(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = parse_argv(cfg, &sets, argc, argv, err, errlen);
	if (ret || cfg->help)
		goto out;
	ret = apply_params(cfg, &sets, err, errlen);
	cfg->argc = argc;
	cfg->argv = argv;
out:
	while (sets.n_owned)
		free(sets.owned[--sets.n_owned]);
	free(sets.owned);
	free(sets.kv);
	if (ret)
		jw_config_free(cfg);
	return ret;
}

int jw_options_reload(const struct jw_config *cfg, struct jw_params *out, char *err,
		      size_t errlen)
{
	struct jw_config again;
	int ret;

	/* getopt keeps its place between calls: the parse starts it afresh itself. */
	ret = jw_options_parse(&again, cfg->argc, cfg->argv, err, errlen);
	if (ret)
		return ret;
	*out = again.params;
	jw_config_free(&again);
	return 0;
}

static void usage_param(FILE *f, const struct param_def *d)
{
	char range[96], def[32];

	format_range(d, range, sizeof(range));
	if (d->flags & PF_DERIVED_MAX)
		snprintf(def, sizeof(def), "min(%d, max)", JW_SAMPLE_COUNT_DEFAULT);
	else
		snprintf(def, sizeof(def), "%lld", (long long)d->def);
	fprintf(f, "  %-24s %s; default %s\n        %s\n", d->name, range, def, d->help);
}

void jw_options_usage(void *out)
{
	FILE *f = out;
	int i;

	fputs("Usage: jankwatch [OPTIONS] -p PID[,PID...]     watch running processes\n"
	      "       jankwatch [OPTIONS] --exe PATH          watch every process of a binary, now\n"
	      "                                              and later\n"
	      "       jankwatch [OPTIONS] -- CMD [ARGS...]    start a program (as --user USER)\n"
	      "                                              and watch the processes it starts;\n"
	      "                                              exits with its status\n"
	      "       jankwatch stats [--reset] [--hist] [-p PID]\n"
	      "                                              the statistics of the running\n"
	      "                                              jankwatch instances (CSV)\n"
	      "       jankwatch symbolize RAW [--debug-dir DIR] [--log-dir DIR]\n"
	      "                                              re-symbolize a raw capture offline\n"
	      "\n"
	      "  -p PID[,PID...]    the processes to watch (may repeat, up to 64), as they exec\n"
	      "                     new programs too\n"
	      "  --follow           with -p: also the processes they start later, once each runs\n"
	      "                     a loop of its own (strace's -f)\n"
	      "  --exe PATH         every process of this executable, now and later, forked\n"
	      "                     workers included (may repeat)\n"
	      "  --loop NAME        syscall: a task is the time between the loop's wait\n"
	      "                     (epoll_wait, poll, select, ...) returning and its next wait;\n"
	      "                     needs no symbols, fits any loop. auto (default): the same,\n"
	      "                     with the preset that recognizes the program naming the\n"
	      "                     handlers; or one preset by name: glib, libuv, node,\n"
	      "                     libevent, redis, nginx, python\n"
	      "  --probe BIN:ENTRY[:EXIT]   hook any dispatch function (EXIT: a symbol whose\n"
	      "                     entry ends the task; without it a return probe is used)\n"
	      "  --thread TID|NAME  the loop thread, when it is not the main thread\n"
	      "  --user USER        with -- CMD: run the program as USER (name or uid)\n"
	      "  --set KEY=VALUE    a policy parameter (below); overrides --config\n"
	      "  --config FILE      the same parameters, one KEY=VALUE a line, # comments\n"
	      "  --all              lift the report budgets (every jank gets its files)\n"
	      "  --dev              developer mode: budgets per hour instead of per day\n"
	      "  --log-dir DIR      default " JW_DEFAULT_LOG_DIR "\n"
	      "  --format FMT       tree (default) or folded, for stack logs\n"
	      "  --duration SEC     stop after SEC seconds (fractions allowed)\n"
	      "  --unwind MODE      auto (default: DWARF CFI, frame pointers where it stops),\n"
	      "                     fp or dwarf\n"
	      "  --stack-bytes N    user stack copied per sample for DWARF (--set stack_bytes)\n"
	      "  --raw FILE         also save what naming the reported stacks needs, for\n"
	      "                     `jankwatch symbolize FILE` on another machine\n"
	      "  -v, -q             more or less on stderr\n"
	      "  -h, --help         this text\n"
	      "\n"
	      "Parameters (--set KEY=VALUE, or one a line in --config FILE):\n", f);
	for (i = 0; i < JW_P_COUNT; i++)
		usage_param(f, &params_table[i]);
	fprintf(f, "  %-24s off or N/T/W; default off\n        %s\n", "burst", BURST_HELP);
	fputs("\nWith log_type 1, sample_interval, ignore_startup_time, sample_count and\n"
	      "report_times_per_app must all be given.\n", f);
}
