// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of options.c: argv, its config file's targets, reload, the usage text. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/options.h"
#include "options_fixture.h"

static void test_parse_defaults(void **state)
{
	struct fixture *fx = *state;
	struct jw_params defaults;
	size_t i;

	parse_ok(fx, PARSE(fx, "-p", "42"));
	assert_int_equal(fx->cfg.n_pids, 1);
	assert_int_equal(fx->cfg.pids[0], 42);
	assert_string_equal(fx->cfg.log_dir, "/var/log/jankwatch");
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	assert_int_equal(fx->cfg.n_probes, 0);
	assert_null(fx->cfg.thread);
	assert_false(fx->cfg.follow);
	assert_null(fx->cfg.config_file);
	assert_true(fx->cfg.duration_s == 0);
	assert_false(fx->cfg.all);
	assert_false(fx->cfg.dev);
	assert_false(fx->cfg.help);
	assert_int_equal(fx->cfg.verbosity, 0);
	/* Every parameter at its default (test_params.c checks what those are). */
	jw_params_defaults(&defaults);
	for (i = 0; i < JW_P_COUNT; i++)
		assert_int_equal(fx->cfg.params.v[i], defaults.v[i]);
}

static void test_parse_pid_list(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1,22,333"));
	assert_int_equal(fx->cfg.n_pids, 3);
	assert_int_equal(fx->cfg.pids[0], 1);
	assert_int_equal(fx->cfg.pids[1], 22);
	assert_int_equal(fx->cfg.pids[2], 333);

	parse_ok(fx, PARSE(fx, "-p", "7", "--all", "-p", "8,9", "-p10"));
	assert_int_equal(fx->cfg.n_pids, 4);
	assert_int_equal(fx->cfg.pids[0], 7);
	assert_int_equal(fx->cfg.pids[3], 10);

	/* A PID given twice is watched once. */
	parse_ok(fx, PARSE(fx, "-p", "5", "-p", "5,6"));
	assert_int_equal(fx->cfg.n_pids, 2);

	parse_ok(fx, PARSE(fx, "-p", "4194304"));
	assert_int_equal(fx->cfg.pids[0], 4194304);
}

static void test_parse_bad_pid(void **state)
{
	static const char *const bad[] = {
		"abc", "0", "-1", "1,", ",1", "1,,2", "12x", "+5", " 5", "", "4194305",
		"99999999999999999999",
	};
	struct fixture *fx = *state;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "-p %s: bad PID", bad[i]);
		parse_fails(fx, PARSE(fx, "-p", bad[i]), want);
		assert_contains(fx->err, "allowed 1..4194304");
		/* A failed parse leaves nothing allocated. */
		assert_null(fx->cfg.log_dir);
	}
	parse_fails(fx, PARSE(fx, "-p", "1,x,3"), "-p 1,x,3: bad PID 'x'");
}

static void test_parse_too_many_pids(void **state)
{
	struct fixture *fx = *state;
	char list[JW_MAX_PIDS * 4 + 8];
	size_t off = 0;
	int i;

	for (i = 1; i <= JW_MAX_PIDS; i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%d", i > 1 ? "," : "", i);
	parse_ok(fx, PARSE(fx, "-p", list));
	assert_int_equal(fx->cfg.n_pids, JW_MAX_PIDS);
	parse_fails(fx, PARSE(fx, "-p", list, "-p", "999"), "too many PIDs, at most 64");
}

static void test_parse_probe(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--probe", "/usr/bin/app:dispatch"));
	assert_int_equal(fx->cfg.n_probes, 1);
	assert_string_equal(fx->cfg.probes[0].bin, "/usr/bin/app");
	assert_string_equal(fx->cfg.probes[0].entry, "dispatch");
	assert_null(fx->cfg.probes[0].exit);

	parse_ok(fx, PARSE(fx, "--probe", "/lib/libx.so:begin_task:end_task", "-p", "1",
			   "--probe=/bin/y:run"));
	assert_int_equal(fx->cfg.n_probes, 2);
	assert_string_equal(fx->cfg.probes[0].bin, "/lib/libx.so");
	assert_string_equal(fx->cfg.probes[0].entry, "begin_task");
	assert_string_equal(fx->cfg.probes[0].exit, "end_task");
	assert_string_equal(fx->cfg.probes[1].bin, "/bin/y");
	assert_null(fx->cfg.probes[1].exit);
}

static void test_parse_probe_malformed(void **state)
{
	static const char *const bad[] = {
		"/bin/x", ":entry", "/bin/x:", "/bin/x::exit", "/bin/x:entry:", "/bin/x:a:b:c", ":",
		"", "::",
	};
	struct fixture *fx = *state;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "--probe %s: expected BIN:ENTRY[:EXIT]", bad[i]);
		parse_fails(fx, PARSE(fx, "-p", "1", "--probe", bad[i]), want);
	}
}

static void test_parse_too_many_probes(void **state)
{
	struct fixture *fx = *state;
	const char *args[2 * JW_MAX_PROBE_SPECS + 8];
	int n = 0, i, ret;

	args[n++] = "jankwatch";
	args[n++] = "-p";
	args[n++] = "1";
	for (i = 0; i <= JW_MAX_PROBE_SPECS; i++) {
		args[n++] = "--probe";
		args[n++] = "/bin/x:f";
	}
	args[n] = NULL;
	ret = jw_options_parse(&fx->cfg, n, (char **)args, fx->err, sizeof(fx->err));
	parse_fails(fx, ret, "too many probes, at most 16");
	ret = jw_options_parse(&fx->cfg, n - 2, (char **)args, fx->err, sizeof(fx->err));
	parse_ok(fx, ret);
	assert_int_equal(fx->cfg.n_probes, JW_MAX_PROBE_SPECS);
}

static void test_parse_duration(void **state)
{
	static const char *const bad_syntax[] = { "abc", "", "1e3", "-1", "1.2.3", ".", "5s",
						  "inf", " 5", "0x10" };
	struct fixture *fx = *state;
	size_t i;

	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "0.5"));
	assert_true(fx->cfg.duration_s == 0.5);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "10"));
	assert_true(fx->cfg.duration_s == 10.0);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", ".25"));
	assert_true(fx->cfg.duration_s == 0.25);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "31536000"));
	assert_true(fx->cfg.duration_s == 31536000.0);

	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "31536000.5"),
		    "--duration 31536000.5: out of range, allowed > 0 up to 31536000");
	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "0"), "--duration 0: out of range");
	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "0.000"), "out of range");
	for (i = 0; i < sizeof(bad_syntax) / sizeof(bad_syntax[0]); i++)
		parse_fails(fx, PARSE(fx, "-p", "1", "--duration", bad_syntax[i]),
			    "not a number of seconds");
}

static void test_parse_format(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "folded"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_FOLDED);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format=tree"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	assert_false(fx->cfg.pprof);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "pprof"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	assert_true(fx->cfg.pprof);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "pprof,folded"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_FOLDED);
	assert_true(fx->cfg.pprof);
	assert_false(fx->cfg.svg);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "tree,svg"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	assert_true(fx->cfg.svg);
	assert_false(fx->cfg.pprof);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "svg,folded,pprof"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_FOLDED);
	assert_true(fx->cfg.svg && fx->cfg.pprof);
	/* The last --format is the one. */
	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "pprof,svg", "--format", "tree"));
	assert_false(fx->cfg.pprof);
	assert_false(fx->cfg.svg);
	parse_fails(fx, PARSE(fx, "-p", "1", "--format", "json"),
		    "--format json: unknown format 'json', allowed tree, folded, svg and pprof");
	parse_fails(fx, PARSE(fx, "-p", "1", "--format", "tree,folded"),
		    "--format tree,folded: tree and folded are both stack log formats; give one");
	parse_fails(fx, PARSE(fx, "-p", "1", "--format", ""),
		    "--format '': give tree, folded, svg or pprof (comma-separated)");
}

/* --loop: auto, syscall, or one preset by name; a preset and --probe do not mix. */
static void test_parse_loop(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1"));
	assert_string_equal(fx->cfg.loop, "auto");
	assert_false(fx->cfg.loop_given);
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop", "nginx"));
	assert_string_equal(fx->cfg.loop, "nginx");
	assert_true(fx->cfg.loop_given);
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop=python"));
	assert_string_equal(fx->cfg.loop, "python");
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop", "syscall", "--probe", "a:f"));
	assert_string_equal(fx->cfg.loop, "syscall");
	/* The names come from the preset table, in its order. */
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop", "qt"));
	assert_string_equal(fx->cfg.loop, "qt");
	parse_fails(fx, PARSE(fx, "-p", "1", "--loop", "gtk3"),
		    "--loop gtk3: unknown loop, allowed auto, syscall, qt, android, wayland, pipewire, "
		    "gtk, glib, node, libuv, sd-event, libev, libevent, nginx, redis or python");
	parse_fails(fx, PARSE(fx, "-p", "1", "--loop", "glib", "--probe", "a:f"),
		    "--loop glib and --probe: give one way to hook the loop");
}

static void test_parse_flags_and_strings(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "--all", "--dev", "-p", "1", "--log-dir", "/tmp/a", "--log-dir",
			   "/tmp/b", "--thread", "worker", "-v", "-vv"));
	assert_true(fx->cfg.all);
	assert_true(fx->cfg.dev);
	assert_string_equal(fx->cfg.log_dir, "/tmp/b");
	assert_string_equal(fx->cfg.thread, "worker");
	assert_int_equal(fx->cfg.verbosity, 3);
	/* The strings are copies, not pointers into argv. */
	assert_ptr_not_equal(fx->cfg.thread, fx->argv[10]);

	parse_ok(fx, PARSE(fx, "-p", "1", "-q", "--thread", "1234"));
	assert_int_equal(fx->cfg.verbosity, -1);
	assert_string_equal(fx->cfg.thread, "1234");

	parse_fails(fx, PARSE(fx, "-p", "1", "--thread", "0"), "--thread 0: bad TID");
	parse_fails(fx, PARSE(fx, "-p", "1", "--thread", ""), "--thread '': empty value");
	parse_fails(fx, PARSE(fx, "-p", "1", "--log-dir", ""), "--log-dir '': empty value");
}

static void test_parse_unknown_option(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "--bogus"), "unknown or ambiguous option --bogus");
	parse_fails(fx, PARSE(fx, "-p", "1", "-x"), "unknown option -x");
	parse_fails(fx, PARSE(fx, "-p", "1", "-vx"), "unknown option -x");
	parse_fails(fx, PARSE(fx, "-p", "1", "--all=yes"), "option --all takes no argument");
	parse_fails(fx, PARSE(fx, "-p"), "option -p needs an argument");
	parse_fails(fx, PARSE(fx, "-p", "1", "--probe"), "option --probe needs an argument");
	parse_fails(fx, PARSE(fx, "-p", "1", "--d"), "--d");

	/* Stopped inside "-xq": the next parse must start afresh, not resume at the 'q'. */
	parse_fails(fx, PARSE(fx, "-p", "1", "-xq"), "unknown option -x");
	parse_ok(fx, PARSE(fx, "-p", "2"));
	assert_int_equal(fx->cfg.verbosity, 0);
	assert_int_equal(fx->cfg.pids[0], 2);
}

static void test_parse_positional_refused(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "extra"), "unexpected argument 'extra'");
	parse_fails(fx, PARSE(fx, "extra", "-p", "1"), "unexpected argument 'extra'");
	parse_fails(fx, PARSE(fx, "-p", "1", "--", "sleep", "1"), "give -p PID or -- CMD, not both");
	parse_fails(fx, PARSE(fx, "-p", "1", "--user", "nobody"), "--user nobody: only for");
	parse_fails(fx, PARSE(fx, "--follow", "--", "sleep", "1"), "--follow: only with -p PID");
	parse_fails(fx, PARSE(fx, "--follow", "--exe", "/bin/sh"), "--follow: only with -p PID");
	parse_fails(fx, PARSE(fx, "--follow", "--name", "nginx"), "--follow: only with -p PID");
}

/* --name NAME: a target alone, with the others, up to JW_MAX_NAMES; what no process can be. */
static void test_parse_name(void **state)
{
	struct fixture *fx = *state;
	char err[128];
	int i;

	parse_ok(fx, PARSE(fx, "--name", "com.example.app"));
	assert_int_equal(fx->cfg.n_names, 1);
	assert_string_equal(fx->cfg.names[0], "com.example.app");
	parse_ok(fx, PARSE(fx, "--name", "nginx", "--exe", "/bin/sh", "--name",
			   "org.jankwatch.zygote.looper"));
	assert_int_equal(fx->cfg.n_names, 2);
	assert_string_equal(fx->cfg.names[1], "org.jankwatch.zygote.looper");
	assert_int_equal(fx->cfg.n_exes, 1);
	parse_fails(fx, PARSE(fx, "--name", ""), "--name: an empty name");
	assert_int_equal(fx->cfg.n_names, 0);
	parse_fails(fx, PARSE(fx, "--name", "a\nb"), "--name: a control character in the name");
	parse_fails(fx, PARSE(fx, "--name"), "--name");
	/* One more than JW_MAX_NAMES. */
	jw_config_free(&fx->cfg);
	fx->argc = 0;
	fx->argv[fx->argc++] = "jankwatch";
	for (i = 0; i <= JW_MAX_NAMES; i++) {
		fx->argv[fx->argc++] = "--name";
		fx->argv[fx->argc++] = "n";
	}
	fx->argv[fx->argc] = NULL;
	snprintf(err, sizeof(err), "--name n: at most %d names", JW_MAX_NAMES);
	parse_fails(fx, jw_options_parse(&fx->cfg, fx->argc, fx->argv, fx->err, sizeof(fx->err)),
		    err);
}

/* --follow: -p's processes' children too; off unless given. */
static void test_parse_follow(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--follow", "--exe", "/bin/sh"));
	assert_true(fx->cfg.follow);
	assert_int_equal(fx->cfg.n_pids, 1);
}

/* "--" ends the options: what follows is the program to start, kept as given. */
static void test_parse_command(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(PARSE(fx, "--set", "ignore_startup_time=3", "--user", "nobody", "--",
			       "python3", "-u", "app.py", "--all"), 0);
	assert_non_null(fx->cfg.cmd);
	assert_string_equal(fx->cfg.cmd[0], "python3");
	assert_string_equal(fx->cfg.cmd[1], "-u");
	assert_string_equal(fx->cfg.cmd[2], "app.py");
	/* An option after the command is the command's. */
	assert_string_equal(fx->cfg.cmd[3], "--all");
	assert_null(fx->cfg.cmd[4]);
	assert_false(fx->cfg.all);
	assert_string_equal(fx->cfg.user, "nobody");
	assert_int_equal(fx->cfg.n_pids, 0);
}

static void test_parse_needs_target(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "--all"), "no target: give -p PID");
	assert_string_equal(fx->err, "no target: give -p PID, --exe PATH, --name NAME, or -- CMD "
			    "[ARGS...]");
	parse_fails(fx, parse(fx, (const char *)NULL), "no target: give -p PID");
}

static void test_parse_set(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=200", "--set=hang_ms=9000",
			   "--set", "burst=2/100/5"));
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 200);
	assert_int_equal(fx->cfg.params.v[JW_P_HANG_MS], 9000);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_COUNT], 8);	/* derived */
	assert_true(fx->cfg.params.burst.on);

	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=40"), "--set");
	assert_string_equal(fx->err, "--set sample_interval=40: out of range, allowed 50..500");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "nope=1"), "--set nope=1: unknown parameter");
}

static void test_parse_runs_finish(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "log_type=1"), "log_type=1 needs");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "threshold_ms=500"),
		    "must be below trace_threshold_ms=450");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=500", "--set",
			      "sample_count=2"), "allowed 1..1");
	parse_ok(fx, PARSE(fx, "-p", "1", "--set", "log_type=1", "--set", "sample_interval=100",
			   "--set", "ignore_startup_time=3", "--set", "sample_count=21", "--set",
			   "report_times_per_app=3"));
	assert_int_equal(fx->cfg.params.v[JW_P_LOG_TYPE], 1);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_COUNT], 21);
}

static void test_parse_set_overrides_config(void **state)
{
	struct fixture *fx = *state;

	write_config(fx, "sample_interval=200\nthreshold_ms=100\n");
	/* --set before --config on the command line still wins. */
	parse_ok(fx, PARSE(fx, "--set", "sample_interval=300", "--config", fx->path, "-p", "1"));
	assert_string_equal(fx->cfg.config_file, fx->path);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 300);
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 100);

	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1", "--set", "threshold_ms=160"));
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 200);
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 160);
}

/* A reload reads the config file again with the command line's --set on top; a bad one is refused. */
static void test_reload(void **state)
{
	struct fixture *fx = *state;
	struct jw_params p;

	write_config(fx, "threshold_ms=200\nhang_ms=7000\n");
	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1", "--set", "hang_ms=8000"));
	write_config(fx, "threshold_ms=300\nhang_ms=7000\nlog_quota_bytes=1000\n");
	assert_int_equal(jw_options_reload(&fx->cfg, &p, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 300);
	assert_int_equal(p.v[JW_P_HANG_MS], 8000);
	assert_int_equal(p.v[JW_P_LOG_QUOTA_BYTES], 1000);
	/* What was parsed at start is untouched by the reload itself. */
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 200);

	write_config(fx, "threshold_ms=abc\n");
	p.v[JW_P_THRESHOLD_MS] = 12345;
	assert_int_equal(jw_options_reload(&fx->cfg, &p, fx->err, sizeof(fx->err)), -EINVAL);
	assert_contains(fx->err, "threshold_ms=abc");
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 12345);
}

/*
 * A config file can name the targets: exe= lines add executables as --exe does, log_dir= sets
 * the log directory unless --log-dir was given; a config with no target at all is refused.
 */
static void test_config_targets(void **state)
{
	struct fixture *fx = *state;
	struct jw_params p;

	write_config(fx, "# always on\nexe=/usr/bin/redis-check-rdb\nexe = /usr/sbin/nginx\n"
			 "log_dir=/var/log/jw-test\nthreshold_ms=200\n");
	parse_ok(fx, PARSE(fx, "--config", fx->path));
	assert_int_equal(fx->cfg.n_exes, 2);
	assert_string_equal(fx->cfg.exes[0], "/usr/bin/redis-check-rdb");
	assert_string_equal(fx->cfg.exes[1], "/usr/sbin/nginx");
	assert_string_equal(fx->cfg.log_dir, "/var/log/jw-test");
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 200);
	/* The command line's --exe come first; --log-dir wins over log_dir=. */
	parse_ok(fx, PARSE(fx, "--exe", "/bin/true", "--log-dir", "/tmp/x", "--config", fx->path));
	assert_int_equal(fx->cfg.n_exes, 3);
	assert_string_equal(fx->cfg.exes[0], "/bin/true");
	assert_string_equal(fx->cfg.log_dir, "/tmp/x");
	/* Parameters alone read such a file as a parameter file. */
	jw_params_defaults(&p);
	assert_int_equal(jw_params_load_file(&p, fx->path, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 200);

	write_config(fx, "threshold_ms=200\n");
	parse_fails(fx, PARSE(fx, "--config", fx->path), "or exe=PATH or name=NAME lines in");
	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1"));
	write_config(fx, "exe=\n");
	parse_fails(fx, PARSE(fx, "--config", fx->path), "exe='': empty value");
	/* name= lines: names as --name gives them. */
	write_config(fx, "name=com.example.app\nname = surfaceflinger\n");
	parse_ok(fx, PARSE(fx, "--config", fx->path));
	assert_int_equal(fx->cfg.n_names, 2);
	assert_string_equal(fx->cfg.names[1], "surfaceflinger");
	write_config(fx, "name=\n");
	parse_fails(fx, PARSE(fx, "--config", fx->path), "name= line: an empty name");
}

static void test_parse_config_errors(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	parse_fails(fx, PARSE(fx, "-p", "1", "--config", "/nonexistent/jw.conf"),
		    "cannot open config file /nonexistent/jw.conf: No such file or directory");

	write_config(fx, "log_type=7\n");
	snprintf(want, sizeof(want), "%s:1: log_type=7: out of range, allowed 0..2", fx->path);
	parse_fails(fx, PARSE(fx, "-p", "1", "--config", fx->path), want);
}

/* Runs the parser with stdout sent to a file, and returns what it printed. */
static char *parse_capturing_stdout(struct fixture *fx, const char *arg, int *ret)
{
	char path[] = "/tmp/jw_test_stdout_XXXXXX", *out = calloc(1, 16384);
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);

	assert_non_null(out);
	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	*ret = PARSE(fx, arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(pread(fd, out, 16383, 0) > 0);
	close(fd);
	unlink(path);
	return out;
}

static void test_parse_help(void **state)
{
	struct fixture *fx = *state;
	const char *const opts[] = { "--help", "-h" };
	size_t i;
	char *out;
	int ret;

	for (i = 0; i < 2; i++) {
		out = parse_capturing_stdout(fx, opts[i], &ret);
		assert_int_equal(ret, 0);	/* no -p needed for --help */
		assert_true(fx->cfg.help);
		assert_contains(out, "Usage: jankwatch");
		free(out);
	}
}

static void test_usage(void **state)
{
	static const char *const want[] = {
		"-p PID[,PID...]", "--probe BIN:ENTRY[:EXIT]", "--thread TID|NAME",
		"--set KEY=VALUE", "--config FILE", "--all", "--dev", "--log-dir DIR",
		"default /var/log/jankwatch", "--format tree|folded[,svg][,pprof]",
		"the seed's tree (default)", "--duration SEC", "  -v ", "  -q ", "-h, --help",
		"Loops (--loop NAME):", "pipewire, gtk", "Usage: jankwatch [OPTIONS] -p PID",
		"       jankwatch report LOGDIR",
		"sample_interval", "50..500; default 150", ">= 3 (at most 31536000); default 10",
		"default min(10, max)", "512..65536 in multiples of 8; default 16384",
		"0..1099511627776; default 10485760", "burst", "default off",
	};
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	jw_options_usage(f);
	assert_int_equal(fclose(f), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_contains(text, want[i]);
	for (i = 0; i < JW_P_COUNT; i++)
		assert_contains(text, jw_param_name(i));
	free(text);
}

static void test_config_free_is_safe(void **state)
{
	struct fixture *fx = *state;

	jw_config_free(NULL);
	parse_ok(fx, PARSE(fx, "-p", "1", "--probe", "/bin/x:a:b", "--thread", "t"));
	jw_config_free(&fx->cfg);
	assert_null(fx->cfg.log_dir);
	assert_int_equal(fx->cfg.n_probes, 0);
	jw_config_free(&fx->cfg);	/* twice is harmless; teardown frees a third time */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_parse_defaults),
		T(test_parse_pid_list),
		T(test_parse_bad_pid),
		T(test_parse_too_many_pids),
		T(test_parse_probe),
		T(test_parse_probe_malformed),
		T(test_parse_too_many_probes),
		T(test_parse_duration),
		T(test_parse_format),
		T(test_parse_loop),
		T(test_parse_flags_and_strings),
		T(test_parse_unknown_option),
		T(test_parse_positional_refused),
		T(test_parse_follow),
		T(test_parse_name),
		T(test_parse_command),
		T(test_parse_needs_target),
		T(test_parse_set),
		T(test_parse_runs_finish),
		T(test_parse_set_overrides_config),
		T(test_reload),
		T(test_config_targets),
		T(test_parse_config_errors),
		T(test_parse_help),
		T(test_usage),
		T(test_config_free_is_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

