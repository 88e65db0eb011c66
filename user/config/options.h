/* SPDX-License-Identifier: GPL-2.0-only */
/* The watch command line -> struct jw_config; the policy parameters in it are params.h's. */
#ifndef JW_OPTIONS_H
#define JW_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/params.h"

#define JW_MAX_PIDS 64
#define JW_MAX_PROBE_SPECS 16
#define JW_MAX_EXES 8
#define JW_MAX_NAMES 16

enum jw_format { JW_FORMAT_TREE = 0, JW_FORMAT_FOLDED };

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
	char *debug_dir;	/* --debug-dir DIR: debug files by build-id, or NULL */
	char *btf;		/* --btf FILE|DIR: the kernel's BTF where it has none, or NULL */
	char **cmd;		/* -- CMD [ARGS...]: points into argv, NULL-terminated; or NULL */
	char *exes[JW_MAX_EXES];	/* --exe PATH: every process of these, now and later */
	size_t n_exes;
	char *names[JW_MAX_NAMES];	/* --name NAME: every process of that name, now and later */
	size_t n_names;
	char *user;		/* --user USER for CMD, or NULL */
	char *metrics_textfile;	/* metrics_textfile=PATH, or NULL */
	char *metrics_listen;	/* metrics_listen=ADDR:PORT, or NULL */
	struct jw_params params;
	enum jw_format format;
	bool pprof;		/* --format ...,pprof: a pprof profile beside each stack log */
	bool svg;		/* --format ...,svg: a flame graph beside each stack log */
	enum jw_unwind_choice unwind;
	const char *loop;	/* --loop: "auto", "syscall" or a preset's name (presets.h) */
	bool loop_given;	/* --loop was on the command line */
	double duration_s;	/* 0: until Ctrl-C */
	bool follow;		/* --follow: -p's processes' children, started later, too */
	bool dry_run;		/* --dry-run: print what would be hooked, hook nothing */
	bool top;		/* jankwatch top: the table on the terminal, no event lines */
	bool all;		/* --all: lift the report budgets */
	bool dev;		/* --dev: budgets per hour */
	int verbosity;		/* -1 quiet, 0 normal, 1+ verbose */
	bool help;		/* --help or --version was given and printed */
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

/*
 * Parses the watch command line into @cfg (zeroed by the caller is not required).
 * Returns 0 on success, -EINVAL on bad usage with a one-line message in @err; on --help
 * prints the usage to stdout, sets cfg->help and returns 0.
 */
int jw_options_parse(struct jw_config *cfg, int argc, char **argv, char *err, size_t errlen);

/*
 * --format LIST into @cfg's format, pprof and svg: tree or folded, svg, pprof, comma-separated.
 * 0, or -EINVAL with a one-line message in @err.
 */
int jw_options_format(struct jw_config *cfg, const char *arg, char *err, size_t errlen);

/* Frees what jw_options_parse() allocated. NULL-safe. */
void jw_config_free(struct jw_config *cfg);

/* Prints the usage text to @f. */
void jw_options_usage(void *f);

/* Prints "jankwatch VERSION (build-id HEX, ARCH)" to @f (a FILE *). */
void jw_options_version(void *f);

#endif
