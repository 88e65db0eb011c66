// SPDX-License-Identifier: GPL-2.0-only
/* The command line's one table (cli.h): the commands, their synopses and options, printed. */
#include <errno.h>
#include <string.h>

#include "base/when.h"
#include "config/cli.h"

#define END { NULL, 0, NULL, 0, NULL }
#define WIDTH 78
#define HELP_COL 21	/* where an option's help begins */

static const struct jw_cli_opt watch_opts[] = {
	{ NULL, 'p', "PID[,PID...]", 'p',
	  "the processes to watch (may repeat, up to 64), as they exec new programs too" },
	{ "follow", 0, NULL, JW_OPT_FOLLOW,
	  "with -p: also the processes they start later, once each runs a loop of its own "
	  "(strace's -f)" },
	{ "exe", 0, "PATH", JW_OPT_EXE,
	  "every process of this executable, now and later, forked workers included (may "
	  "repeat)" },
	{ "name", 0, "NAME", JW_OPT_NAME,
	  "every process named NAME (its comm; past 15 bytes, its argv[0]), now and later: "
	  "renamed after a fork without exec (zygote's apps), its forks too; its events' "
	  "bundle_name (may repeat, up to 16)" },
	{ "user", 0, "USER[:GROUP]", JW_OPT_USER,
	  "with -- CMD: run the program as USER (a name or uid; GROUP a name or gid), its groups "
	  "included" },
	{ "loop", 0, "NAME", JW_OPT_LOOP,
	  "how tasks are found without --probe. syscall: a task is the time between the loop's "
	  "wait (epoll_wait, poll, select, ...) returning and its next wait; needs no symbols, "
	  "fits any loop. auto (default): the same, with the preset that recognizes the program "
	  "naming the handlers. Or a preset by its name (below)" },
	{ "probe", 0, "BIN:ENTRY[:EXIT]", JW_OPT_PROBE,
	  "hook any dispatch function (EXIT: a symbol whose entry ends the task; without it a "
	  "return probe is used; may repeat: the outermost call is the task)" },
	{ "thread", 0, "TID|NAME", JW_OPT_THREAD,
	  "the loop thread, when it is not the main thread" },
	{ "set", 0, "KEY=VALUE", JW_OPT_SET, "a parameter (below); overrides --config" },
	{ "config", 0, "FILE", JW_OPT_CONFIG,
	  "the same parameters, one KEY=VALUE a line, # comments" },
	{ "all", 0, NULL, JW_OPT_ALL,
	  "lift the report budgets and the back-off: every jank gets its files" },
	{ "dev", 0, NULL, JW_OPT_DEV, "developer mode: budgets per hour instead of per day" },
	{ "log-dir", 0, "DIR", JW_OPT_LOG_DIR,
	  "where the files go; default /var/log/jankwatch, or where there is no /var/log to "
	  "write in /data/local/tmp/jankwatch, $TMPDIR/jankwatch or /tmp/jankwatch (the start "
	  "says which)" },
	{ "format", 0, "tree|folded[,svg][,pprof]", JW_OPT_FORMAT,
	  "the stack logs' body: the seed's tree (default) or folded 'a;b;c N' lines; svg adds "
	  "a flame graph beside each (a page a browser opens), pprof a profile beside each stack "
	  "log or trace" },
	{ "duration", 0, "SEC", JW_OPT_DURATION, "stop after SEC seconds (fractions allowed)" },
	{ "unwind", 0, "auto|fp|dwarf", JW_OPT_UNWIND,
	  "user stacks: DWARF CFI from a stack copy, continued by frame pointers where it stops "
	  "(auto, the default); frame pointers only; DWARF only" },
	{ "stack-bytes", 0, "N", JW_OPT_STACK_BYTES,
	  "user stack copied per sample for DWARF (--set stack_bytes=N)" },
	{ "raw", 0, "FILE", JW_OPT_RAW,
	  "also save what naming the reported stacks needs, for `jankwatch symbolize FILE` on "
	  "another machine" },
	{ "debug-dir", 0, "DIR", JW_OPT_DEBUG_DIR,
	  "debug files of stripped binaries by build-id (DIR/.build-id/xx/rest.debug), looked "
	  "for before /usr/lib/debug; with DEBUGINFOD_URLS set, also fetched from debuginfod (in "
	  "the background; the cache is kept under 1 GiB)" },
	{ "btf", 0, "FILE|DIR", JW_OPT_BTF,
	  "the kernel's BTF, for a kernel without its own: a file, or a directory searched for "
	  "<release>.btf (BTFHub's layout); default /var/lib/jankwatch/btf (scripts/make-btf.sh "
	  "makes one)" },
	{ "dry-run", 0, NULL, JW_OPT_DRY_RUN,
	  "attach nothing: print what the watch would hook (each process and thread, its loop, "
	  "every probe where it would go, the kernel's plan, the log directory and the budgets) "
	  "and exit 0, or 1 with the reason the watch would fail" },
	{ NULL, 'v', NULL, 'v', "more on stderr (libbpf's messages and the verifier's too)" },
	{ NULL, 'q', NULL, 'q', "less on stderr: errors only" },
	{ "help", 'h', NULL, 'h', "this text" },
	{ "version", 0, NULL, JW_OPT_VERSION, "the version, and this binary's build-id" },
	END,
};

static const struct jw_cli_opt stats_opts[] = {
	{ "reset", 0, NULL, 'r', "print the rows, then empty them" },
	{ "hist", 0, NULL, 'H', "print each row's log2 latency histogram instead of CSV" },
	{ "pid", 'p', "PID", 'p', "only the rows of target process PID" },
	{ "help", 'h', NULL, 'h', "this text" },
	END,
};

static const struct jw_cli_opt symbolize_opts[] = {
	{ "debug-dir", 0, "DIR", 'd', "where to look for the recorded binaries and their debug "
	  "files" },
	{ "log-dir", 0, "DIR", 'l', "where the logs go (default: the current directory)" },
	{ "format", 0, "tree|folded[,svg][,pprof]", 'f',
	  "the stack logs' body, and svg's flame graph and pprof's profile beside each, as the "
	  "watch's --format (default: the capture's stack log format, nothing beside)" },
	{ NULL, 'v', NULL, 'v', "more on stderr" },
	{ NULL, 'q', NULL, 'q', "less on stderr: errors only" },
	{ "help", 'h', NULL, 'h', "this text" },
	END,
};

/* The range of janks report and export take (session/logargs.h: 's', 'u', 'p'). */
#define RANGE_OPTS                                                                        \
	{ "since", 0, "WHEN", 's', "only janks that began at WHEN or later" },            \
	{ "until", 0, "WHEN", 'u', "only janks that began before WHEN" },                 \
	{ "pid", 'p', "PID", 'p', "only the janks of process PID" }

static const struct jw_cli_opt export_opts[] = {
	{ "format", 0, "pprof", 'f', "the output's format (pprof is the one there is)" },
	{ "output", 'o', "FILE", 'o', "where the merged profile goes (gzipped profile.proto)" },
	RANGE_OPTS,
	{ "help", 'h', NULL, 'h', "this text" },
	END,
};

static const struct jw_cli_opt report_opts[] = {
	RANGE_OPTS,
	{ "top", 0, "N", 't', "the N groups that took the most time (default 10; 0: all)" },
	{ "json", 0, NULL, 'j', "one JSON object instead of text" },
	{ "html", 0, "FILE", 'H',
	  "write one self-contained page to FILE: a timeline of the janks, each group with its "
	  "merged flame graph, stats.csv as a table" },
	{ "help", 'h', NULL, 'h', "this text" },
	END,
};

static const struct jw_cli_cmd cmds[] = {
	{ .name = "",
	  .synopsis = { "[OPTIONS] -p PID[,PID...]", "[OPTIONS] --exe PATH", "[OPTIONS] --name NAME",
			"[OPTIONS] -- CMD [ARGS...]" },
	  .about = "watch running processes (-p), every process of a binary or a name, now and "
		   "later (--exe, --name: an Android app), or a program it starts (-- CMD, as "
		   "--user USER; exits with its status)",
	  .opts = watch_opts },
	{ .name = "top",
	  .synopsis = { "[OPTIONS] -p PID[,PID...] | --exe PATH | --name NAME | -- CMD [ARGS...]" },
	  .about = "a watch, shown as a live table of the loops' handlers (q quits)",
	  .text = "Watches as jankwatch does (the same options; janks still go to the log "
		  "directory), and shows on the terminal a table of the loops' handlers by their "
		  "share of the loop thread's time, redrawn every second: tasks, tasks a second, "
		  "mean, p99 (the bound of the log2 histogram's slot it falls in) and max wall "
		  "time, mean CPU time and delay, janks; the last janks under it. q quits. Printed "
		  "once at the end when standard output is not a terminal.",
	  .opts = watch_opts },
	{ .name = "stats",
	  .synopsis = { "[--reset] [--hist] [-p PID]" },
	  .about = "the statistics of the running jankwatch instances (CSV)",
	  .text = "Prints the statistics (LooperStats CSV) of every running jankwatch, and on "
		  "stderr what each has lost so far (records, samples, skipped program runs).",
	  .opts = stats_opts },
	{ .name = "symbolize",
	  .synopsis = { "RAW [--debug-dir DIR] [--log-dir DIR] [--format tree|folded[,svg][,pprof]] "
			"[-v|-q]" },
	  .about = "re-symbolize a raw capture offline",
	  .text = "Writes the stack logs and events of a raw capture (jankwatch --raw FILE) "
		  "again, on this machine: modules are found at their recorded paths when their "
		  "build-ids match, else by build-id under DIR/.build-id and "
		  "/usr/lib/debug/.build-id, or from debuginfod when DEBUGINFOD_URLS is set.",
	  .opts = symbolize_opts },
	{ .name = "export",
	  .synopsis = { "--format pprof LOGDIR -o FILE [--since WHEN] [--until WHEN] [-p PID]" },
	  .about = "merge a log directory's profiles",
	  .text = "Merges the profiles of a log directory (jankwatch --format pprof writes one "
		  "beside each jank's stack log or trace) into one pprof profile. Every sample "
		  "keeps its jank's labels (jank, event, handler, cause, group, process, pid, "
		  "tid): pprof's -tagfocus and -tagignore pick janks out of it.",
	  .after = JW_WHEN_HELP,
	  .opts = export_opts },
	{ .name = "report",
	  .synopsis = { "LOGDIR [--since WHEN] [--until WHEN] [-p PID] [--top N] [--json] "
			"[--html FILE]" },
	  .about = "the jank groups of a log directory; --html: one page (timeline, flame "
		   "graphs, statistics)",
	  .text = "Summarizes the jank events of a log directory (events.jsonl and its rotated "
		  "files events.jsonl.1, .2, ...): the jank groups that took the most time, each "
		  "with its count, p50/p95/max wall time, the cause split, the usual handler and "
		  "heaviest stack, the files written and what the back-off, the budgets and the "
		  "quota withheld.",
	  .after = JW_WHEN_HELP,
	  .opts = report_opts },
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

const struct jw_cli_cmd *jw_cli_cmds(size_t *n)
{
	*n = N_CMDS;
	return cmds;
}

const struct jw_cli_cmd *jw_cli_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(cmds[i].name, name ? name : ""))
			return &cmds[i];
	return NULL;
}

static int is_end(const struct jw_cli_opt *o)
{
	return !o->name && !o->letter;
}

int jw_cli_getopt(const struct jw_cli_cmd *cmd, const char *prefix, struct option *longs,
		  size_t max, char *shorts, size_t len)
{
	const struct jw_cli_opt *o;
	size_t n = 0, k = strlen(prefix);

	if (k >= len)
		return -ENOSPC;
	memcpy(shorts, prefix, k);
	for (o = cmd->opts; !is_end(o); o++) {
		if (o->name) {
			if (n + 1 >= max)
				return -ENOSPC;
			longs[n++] = (struct option){ o->name, o->arg ? required_argument :
									no_argument, NULL, o->val };
		}
		if (o->letter) {
			if (k + 3 > len)
				return -ENOSPC;
			shorts[k++] = o->letter;
			if (o->arg)
				shorts[k++] = ':';
		}
	}
	shorts[k] = '\0';
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

const char *jw_cli_long_name(const struct jw_cli_cmd *cmd, int val)
{
	const struct jw_cli_opt *o;

	for (o = cmd->opts; !is_end(o); o++)
		if (o->val == val && o->name)
			return o->name;
	return "?";
}

void jw_cli_opt_form(const struct jw_cli_opt *o, char *buf, size_t len)
{
	char letter[8] = "";

	if (o->letter)
		snprintf(letter, sizeof(letter), "-%c%s", o->letter, o->name ? ", " : "");
	snprintf(buf, len, "%s%s%s%s%s", letter, o->name ? "--" : "", o->name ? o->name : "",
		 o->arg ? " " : "", o->arg ? o->arg : "");
}

void jw_cli_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;

	while (*p) {
		size_t word;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		/* A bracketed group of a synopsis ("[--top N]") is kept on one line. */
		word = *p == '[' && strchr(p, ']') ? (size_t)(strchr(p, ']') - p) + 1 : 0;
		word += strcspn(p + word, " ");
		if (col > indent && col + 1 + (int)word > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		} else if (col < indent) {
			fprintf(f, "%*s", indent - col, "");
			col = indent;
		}
		fwrite(p, 1, word, f);
		col += (int)word;
		p += word;
	}
	fputc('\n', f);
}

void jw_cli_synopsis(const struct jw_cli_cmd *cmd, FILE *f, int first)
{
	char head[64];
	size_t i;

	for (i = 0; i < JW_CLI_SYNOPSES && cmd->synopsis[i]; i++) {
		int col = snprintf(head, sizeof(head), "%s jankwatch%s%s",
				   first && !i ? "Usage:" : "      ", cmd->name[0] ? " " : "",
				   cmd->name);

		fputs(head, f);
		/* Continued under the first word after the command. */
		jw_cli_wrap(f, cmd->synopsis[i], col, col + 1, WIDTH);
	}
}

void jw_cli_options_help(const struct jw_cli_cmd *cmd, FILE *f)
{
	const struct jw_cli_opt *o;
	char form[96];

	for (o = cmd->opts; !is_end(o); o++) {
		int col;

		jw_cli_opt_form(o, form, sizeof(form));
		col = fprintf(f, "  %s", form);
		if (col + 1 >= HELP_COL) {
			fputc('\n', f);
			col = 0;
		}
		jw_cli_wrap(f, o->help, col, HELP_COL, WIDTH);
	}
}

void jw_cli_help(const struct jw_cli_cmd *cmd, FILE *f)
{
	jw_cli_synopsis(cmd, f, 1);
	if (cmd->text) {
		fputc('\n', f);
		jw_cli_wrap(f, cmd->text, 0, 0, WIDTH);
	}
	fputc('\n', f);
	jw_cli_options_help(cmd, f);
	if (cmd->after) {
		fputc('\n', f);
		fputs(cmd->after, f);
	}
}
