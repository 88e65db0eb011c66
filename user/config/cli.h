/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command line's one table: every command (the watch, top, stats, symbolize, export,
 * report), its synopsis and its options. The parsers' getopt tables and every --help are made
 * from it, and a test holds the man page, the completion and usage.md to it
 * (tests/lists/lists.py).
 */
#ifndef JW_CLI_H
#define JW_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* The watch's options without a letter: what getopt_long returns for each. */
enum jw_watch_opt {
	JW_OPT_PROBE = 256,
	JW_OPT_THREAD,
	JW_OPT_SET,
	JW_OPT_CONFIG,
	JW_OPT_ALL,
	JW_OPT_DEV,
	JW_OPT_LOG_DIR,
	JW_OPT_FORMAT,
	JW_OPT_DURATION,
	JW_OPT_UNWIND,
	JW_OPT_STACK_BYTES,
	JW_OPT_RAW,
	JW_OPT_DEBUG_DIR,
	JW_OPT_BTF,
	JW_OPT_LOOP,
	JW_OPT_USER,
	JW_OPT_EXE,
	JW_OPT_NAME,
	JW_OPT_FOLLOW,
	JW_OPT_VERSION,
	JW_OPT_DRY_RUN,
};

struct jw_cli_opt {
	const char *name;	/* the long name without "--"; NULL: a letter alone */
	char letter;		/* its short form; 0: none */
	const char *arg;	/* the value's name ("PID[,PID...]"); NULL: it takes none */
	int val;		/* what getopt_long returns for it (the letter, if it has one) */
	const char *help;	/* what --help says of it (wrapped when printed) */
};

#define JW_CLI_SYNOPSES 4

struct jw_cli_cmd {
	const char *name;	/* "report"; "" for the watch itself */
	/* Its usage lines, each after "jankwatch NAME ". */
	const char *synopsis[JW_CLI_SYNOPSES];
	const char *about;	/* what it does, for the overview under its synopsis */
	const char *text;	/* its own --help's paragraph before the options; NULL: none */
	const char *after;	/* after the options; NULL: nothing */
	const struct jw_cli_opt *opts;	/* ends with a NULL name and no letter */
};

/* The commands, the watch first; @n their count. */
const struct jw_cli_cmd *jw_cli_cmds(size_t *n);

/* The command named @name ("" or NULL: the watch), or NULL when there is none. */
const struct jw_cli_cmd *jw_cli_cmd(const char *name);

/*
 * getopt_long's tables for @cmd: @longs (ending in a zeroed entry) of at most @max entries, and
 * @shorts of @len bytes beginning with @prefix ("+:" or ":"). 0, or -ENOSPC.
 */
int jw_cli_getopt(const struct jw_cli_cmd *cmd, const char *prefix, struct option *longs,
		  size_t max, char *shorts, size_t len);

/* The long name of @cmd's option @val ("?" when none has it), for a message. */
const char *jw_cli_long_name(const struct jw_cli_cmd *cmd, int val);

/* An option as the usage writes it: "-p PID[,PID...]", "-o, --output FILE", "--json". */
void jw_cli_opt_form(const struct jw_cli_opt *o, char *buf, size_t len);

/* "Usage: jankwatch NAME SYNOPSIS" lines of @cmd (@first: "Usage:" before the first). */
void jw_cli_synopsis(const struct jw_cli_cmd *cmd, FILE *f, int first);

/* @cmd's options, one entry each: the form, then its help wrapped to 78 columns. */
void jw_cli_options_help(const struct jw_cli_cmd *cmd, FILE *f);

/* A subcommand's whole --help: synopsis, text, options, after. */
void jw_cli_help(const struct jw_cli_cmd *cmd, FILE *f);

/*
 * @text from column @col on, words wrapped at @width onto lines indented by @indent; ends the
 * last line.
 */
void jw_cli_wrap(FILE *f, const char *text, int col, int indent, int width);

#endif
