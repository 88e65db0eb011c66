// SPDX-License-Identifier: GPL-2.0-only
/* What jankwatch says of itself: --version and --help's text (the parameters' from params.c). */
#include <stdio.h>
#include <string.h>

#include "base/buildid.h"
#include "config/options.h"
#include "config/params.h"
#include "loops/presets.h"

void jw_options_version(void *out)
{
	char id[2 * 64 + 1];

	if (jw_own_build_id(id, sizeof(id)))
		snprintf(id, sizeof(id), "none");
	fprintf(out, "jankwatch %s (build-id %s, %s%s)\n", JW_VERSION, id, JW_ARCH_NAME,
		JW_STATIC ? ", static" : "");
}

/* --loop's names, from the preset table, wrapped under the options' text. */
static void loop_names(FILE *f)
{
	char names[512], *word, *save = NULL;
	size_t col = 0;

	jw_loop_names(names, sizeof(names));
	for (word = strtok_r(names, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
		if (col && col + 1 + strlen(word) > 78) {
			fputc('\n', f);
			col = 0;
		}
		col += col ? (size_t)fprintf(f, " %s", word) : (size_t)fprintf(f, "%21s%s", "", word);
	}
	fputc('\n', f);
}

void jw_options_usage(void *out)
{
	FILE *f = out;

	fputs("Usage: jankwatch [OPTIONS] -p PID[,PID...]     watch running processes\n"
	      "       jankwatch [OPTIONS] --exe PATH          watch every process of a binary, now\n"
	      "                                              and later\n"
	      "       jankwatch [OPTIONS] --name NAME         watch every process of that name,\n"
	      "                                              now and later (an Android app)\n"
	      "       jankwatch [OPTIONS] -- CMD [ARGS...]    start a program (as --user USER)\n"
	      "                                              and watch the processes it starts;\n"
	      "                                              exits with its status\n"
	      "       jankwatch stats [--reset] [--hist] [-p PID]\n"
	      "                                              the statistics of the running\n"
	      "                                              jankwatch instances (CSV)\n"
	      "       jankwatch symbolize RAW [--debug-dir DIR] [--log-dir DIR]\n"
	      "                                              re-symbolize a raw capture offline\n"
	      "       jankwatch export --format pprof LOGDIR -o FILE [--since WHEN] [--until WHEN]\n"
	      "                                              merge a log directory's profiles\n"
	      "       jankwatch report LOGDIR [--since WHEN] [--until WHEN] [-p PID] [--top N]\n"
	      "                        [--json] [--html FILE]\n"
	      "                                              the jank groups of a log directory;\n"
	      "                                              --html: one page (timeline, flame\n"
	      "                                              graphs, statistics)\n"
	      "\n"
	      "  -p PID[,PID...]    the processes to watch (may repeat, up to 64), as they exec\n"
	      "                     new programs too\n"
	      "  --follow           with -p: also the processes they start later, once each runs\n"
	      "                     a loop of its own (strace's -f)\n"
	      "  --exe PATH         every process of this executable, now and later, forked\n"
	      "                     workers included (may repeat)\n"
	      "  --name NAME        every process named NAME (its comm; past 15 bytes, its\n"
	      "                     argv[0]), now and later: renamed after a fork without exec\n"
	      "                     (zygote's apps), its forks too; its events' bundle_name\n"
	      "                     (may repeat)\n"
	      "  --loop NAME        syscall: a task is the time between the loop's wait\n"
	      "                     (epoll_wait, poll, select, ...) returning and its next wait;\n"
	      "                     needs no symbols, fits any loop. auto (default): the same,\n"
	      "                     with the preset that recognizes the program naming the\n"
	      "                     handlers. NAME is one of:\n", f);
	loop_names(f);
	fputs("  --probe BIN:ENTRY[:EXIT]   hook any dispatch function (EXIT: a symbol whose\n"
	      "                     entry ends the task; without it a return probe is used)\n"
	      "  --thread TID|NAME  the loop thread, when it is not the main thread\n"
	      "  --user USER[:GROUP] with -- CMD: run the program as USER (name or uid)\n"
	      "  --set KEY=VALUE    a policy parameter (below); overrides --config\n"
	      "  --config FILE      the same parameters, one KEY=VALUE a line, # comments\n"
	      "  --all              lift the report budgets (every jank gets its files)\n"
	      "  --dev              developer mode: budgets per hour instead of per day\n"
	      "  --log-dir DIR      default /var/log/jankwatch; where there is no /var/log to\n"
	      "                     write in, /data/local/tmp/jankwatch, $TMPDIR/jankwatch or\n"
	      "                     /tmp/jankwatch (the start says which)\n"
	      "  --format FMT       tree (default) or folded, for stack logs; svg adds a flame\n"
	      "                     graph beside each (a page a browser opens), pprof a profile\n"
	      "                     (comma-separated: tree,svg or folded,svg,pprof)\n"
	      "  --duration SEC     stop after SEC seconds (fractions allowed)\n"
	      "  --unwind MODE      auto (default: DWARF CFI, frame pointers where it stops),\n"
	      "                     fp or dwarf\n"
	      "  --stack-bytes N    user stack copied per sample for DWARF (--set stack_bytes)\n"
	      "  --raw FILE         also save what naming the reported stacks needs, for\n"
	      "                     `jankwatch symbolize FILE` on another machine\n"
	      "  --debug-dir DIR    debug files of stripped binaries, by build-id\n"
	      "                     (DIR/.build-id/xx/...), besides /usr/lib/debug; with\n"
	      "                     DEBUGINFOD_URLS set, also fetched from debuginfod (in the\n"
	      "                     background; the cache is kept under 1 GiB)\n"
	      "  --btf FILE|DIR     the kernel's BTF, for a kernel without its own: a file, or a\n"
	      "                     directory searched for <release>.btf (BTFHub's layout);\n"
	      "                     default /var/lib/jankwatch/btf (scripts/make-btf.sh makes one)\n"
	      "  -v, -q             more or less on stderr\n"
	      "  -h, --help         this text\n"
	      "  --version          the version, and this binary's build-id\n"
	      "\n"
	      "Parameters (--set KEY=VALUE, or one a line in --config FILE):\n", f);
	jw_params_usage(f);
}

