/* SPDX-License-Identifier: GPL-2.0-only */
/* Command line and config file -> struct jw_config, with every range check of SPEC's policy. */
#ifndef JW_OPTIONS_H
#define JW_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JW_MAX_PIDS 64
#define JW_MAX_PROBE_SPECS 16
#define JW_MAX_EXES 8

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

enum jw_format { JW_FORMAT_TREE = 0, JW_FORMAT_FOLDED };

/* --loop: how a loop is hooked when no --probe says so (see presets.h). */
enum jw_loop {
	JW_LOOP_AUTO = 0,
	JW_LOOP_SYSCALL,
	JW_LOOP_GLIB,
	JW_LOOP_LIBUV,		/* node too: it links libuv in */
	JW_LOOP_NODE,
	JW_LOOP_LIBEVENT,
	JW_LOOP_REDIS,
	JW_LOOP_NGINX,
	JW_LOOP_PYTHON,
	JW_LOOP_COUNT
};

/* The name --loop gives @loop: "auto", "glib", ... */
const char *jw_loop_name(enum jw_loop loop);

/* How user stacks are unwound; the same values as enum jw_unwind_mode in the ABI. */
enum jw_unwind_choice { JW_UNWIND_MODE_AUTO = 0, JW_UNWIND_MODE_FP, JW_UNWIND_MODE_DWARF };

/* A --probe BIN:ENTRY[:EXIT]; exit is NULL when a return probe ends the task. */
struct jw_probe_spec {
	char *bin;
	char *entry;
	char *exit;
};

struct jw_config {
	pid_t pids[JW_MAX_PIDS];
	size_t n_pids;
	struct jw_probe_spec probes[JW_MAX_PROBE_SPECS];
	size_t n_probes;
	char *thread;		/* --thread TID|NAME, NULL: the main thread */
	char *config_file;
	char *log_dir;		/* never NULL after parsing */
	bool log_dir_given;	/* --log-dir was on the command line (a config's log_dir= yields) */
	char *raw_file;		/* --raw FILE, or NULL */
	char **cmd;		/* -- CMD [ARGS...]: points into argv, NULL-terminated; or NULL */
	char *exes[JW_MAX_EXES];	/* --exe PATH: every process of these, now and later */
	size_t n_exes;
	char *user;		/* --user USER for CMD, or NULL */
	struct jw_params params;
	enum jw_format format;
	enum jw_unwind_choice unwind;
	enum jw_loop loop;
	bool loop_given;	/* --loop was on the command line */
	double duration_s;	/* 0: until Ctrl-C */
	bool follow;		/* --follow: -p's processes' children, started later, too */
	bool all;		/* --all: lift the report budgets */
	bool dev;		/* --dev: budgets per hour */
	int verbosity;		/* -1 quiet, 0 normal, 1+ verbose */
	bool help;		/* --help was given and printed */
	int argc;		/* the command line, for jw_options_reload() */
	char **argv;
};

/*
 * The parameters @cfg's command line gives now: its --config file read again, its --set on top,
 * checked as at start. Returns 0 with them in @out, or -errno with a message in @err (@out is
 * then untouched).
 */
int jw_options_reload(const struct jw_config *cfg, struct jw_params *out, char *err,
		      size_t errlen);

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
 * Reads KEY=VALUE lines (# comments, blank lines) from @path into @params; the target lines a
 * command line's config may hold (exe=PATH, log_dir=PATH) are passed over. 0 or -errno/-EINVAL.
 */
int jw_params_load_file(struct jw_params *params, const char *path, char *err, size_t errlen);

/*
 * Parses the watch command line into @cfg (zeroed by the caller is not required).
 * Returns 0 on success, -EINVAL on bad usage with a one-line message in @err; on --help
 * prints the usage to stdout, sets cfg->help and returns 0.
 */
int jw_options_parse(struct jw_config *cfg, int argc, char **argv, char *err, size_t errlen);

/* Frees what jw_options_parse() allocated. NULL-safe. */
void jw_config_free(struct jw_config *cfg);

/* Prints the usage text to @f. */
void jw_options_usage(void *f);

#endif
