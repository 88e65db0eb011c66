/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The policy parameters (SPEC's policy table and jankwatch's own): their values, defaults and
 * ranges, set one KEY=VALUE at a time (--set, a config file), checked together at the end.
 */
#ifndef JW_PARAMS_H
#define JW_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* events_line_max's range and default: rsyslog's default line limit is 8 KiB. */
#define JW_EVENTS_LINE_MIN 2048
#define JW_EVENTS_LINE_DEFAULT 4096
#define JW_EVENTS_KEEP_MAX 100		/* rotated events.jsonl files */

/* The policy parameters, by the seed's names and jankwatch's own. */
enum jw_param {
	JW_P_LOG_TYPE,
	JW_P_SAMPLE_INTERVAL,
	JW_P_IGNORE_STARTUP_TIME,
	JW_P_SAMPLE_COUNT,
	JW_P_REPORT_TIMES_PER_APP,
	JW_P_THRESHOLD_MS,
	JW_P_TRACE_THRESHOLD_MS,
	JW_P_HANG_MS,
	JW_P_SAMPLE_PERIOD_MS,
	JW_P_STACK_BYTES,
	JW_P_LOG_QUOTA_BYTES,
	JW_P_LOG_MAX_AGE_DAYS,
	JW_P_FLIGHT_RECORDER_S,
	JW_P_STATS_SAMPLING_INTERVAL,
	JW_P_STATS_MAX_ENTRIES,
	JW_P_WAIT_TRACEPOINTS,
	JW_P_HANDLER_SITES,
	JW_P_EVENTS_KEEP,
	JW_P_EVENTS_LINE_MAX,
	JW_P_JOURNAL,
	JW_P_METRICS_INTERVAL_S,
	JW_P_METRICS_MAX_HANDLERS,
	JW_P_SAMPLERS,
	JW_P_SCHED_HOOKS,
	JW_P_COUNT,
};

struct jw_burst {
	bool on;
	uint32_t count;		/* N janks */
	uint32_t over_ms;	/* each over T ms */
	uint32_t within_s;	/* within W seconds */
};

struct jw_params {
	int64_t v[JW_P_COUNT];	/* indexed by enum jw_param */
	uint32_t given;		/* bit (1 << param) set when the user gave it */
	struct jw_burst burst;
};

/* Name, as the user writes it, of @p (e.g. "sample_interval"). */
const char *jw_param_name(enum jw_param p);

/* Fills @params with the defaults. */
void jw_params_defaults(struct jw_params *params);

/*
 * Sets one KEY=VALUE (as --set and the config file give it) in @params.
 * Returns 0, or -EINVAL with a one-line message naming the key, the value and the allowed
 * range in @err.
 */
int jw_params_set(struct jw_params *params, const char *key_value, char *err, size_t errlen);

/*
 * Checks the parameters that depend on each other (log_type 1 needs the four seed parameters,
 * sample_count against sample_interval, threshold against trace threshold) and fills derived
 * defaults (sample_count). Returns 0 or -EINVAL with a message in @err.
 */
int jw_params_finish(struct jw_params *params, char *err, size_t errlen);

/*
 * A config file's target line (exe=PATH, name=NAME, log_dir=PATH), which is no parameter: 0
 * or -errno with a message in @err.
 */
typedef int (*jw_params_other_fn)(void *ctx, const char *key, const char *value, char *err,
				  size_t errlen);

/*
 * Reads KEY=VALUE lines (# comments, blank lines) from @path into @params; its target lines go
 * to @other (NULL: passed over). 0, or -errno/-EINVAL with "PATH:LINE: ..." in @err.
 */
int jw_params_read_file(struct jw_params *params, const char *path, jw_params_other_fn other,
			void *ctx, char *err, size_t errlen);

/* jw_params_read_file() passing the target lines over. */
int jw_params_load_file(struct jw_params *params, const char *path, char *err, size_t errlen);

/* A parameter as --help, the man page and usage.md show it. */
struct jw_param_doc {
	const char *name;
	char range[128];	/* "0..2", ">= 3 (at most 31536000)", "off or N/T/W" */
	char def[32];		/* "150", "min(10, max)", "none" */
	const char *help;
};

/*
 * The @i-th parameter's (the table's in enum order, then burst, metrics_textfile and
 * metrics_listen) into @out; false past the last.
 */
bool jw_param_doc(size_t i, struct jw_param_doc *out);

/* Whether the user gave @p (--set or the config file), not its default. */
bool jw_params_given(const struct jw_params *params, enum jw_param p);

/* sched_hooks=1: the watched threads' switches by each one's own event, where the build can. */
bool jw_params_thread_switches(const struct jw_params *params);

/* Prints the parameters' part of the usage text to @f. */
void jw_params_usage(FILE *f);

#endif
