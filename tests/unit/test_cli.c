// SPDX-License-Identifier: GPL-2.0-only
/* The command line's table: getopt's tables made from it, the forms, the wrapping, and every
 * option of the watch's table taken by its parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/cli.h"
#include "config/options.h"

static char *printed(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void test_getopt_tables(void **state)
{
	struct option longs[64];
	char shorts[32];

	(void)state;
	assert_int_equal(jw_cli_getopt(jw_cli_cmd(""), "+:", longs, 64, shorts, sizeof(shorts)), 0);
	assert_string_equal(shorts, "+:p:vqh");
	assert_string_equal(longs[0].name, "follow");
	assert_int_equal(longs[0].has_arg, no_argument);
	assert_int_equal(jw_cli_getopt(jw_cli_cmd("export"), ":", longs, 64, shorts,
				       sizeof(shorts)), 0);
	assert_string_equal(shorts, ":o:p:h");
	assert_string_equal(longs[0].name, "format");
	assert_int_equal(longs[0].has_arg, required_argument);
	/* Too small a table is refused, not overrun. */
	assert_int_equal(jw_cli_getopt(jw_cli_cmd(""), "+:", longs, 4, shorts, sizeof(shorts)),
			 -ENOSPC);
	assert_int_equal(jw_cli_getopt(jw_cli_cmd(""), "+:", longs, 64, shorts, 4), -ENOSPC);
	assert_null(jw_cli_cmd("nosuch"));
	assert_string_equal(jw_cli_long_name(jw_cli_cmd("report"), 'H'), "html");
	assert_string_equal(jw_cli_long_name(jw_cli_cmd("report"), 'Z'), "?");
}

/* Within one command no two options share a name, a letter or a value. */
static void test_options_distinct(void **state)
{
	const struct jw_cli_cmd *cmds;
	size_t n, i;

	(void)state;
	cmds = jw_cli_cmds(&n);
	assert_string_equal(cmds[0].name, "");
	for (i = 0; i < n; i++) {
		const struct jw_cli_opt *a, *b;

		assert_non_null(cmds[i].synopsis[0]);
		assert_non_null(cmds[i].about);
		for (a = cmds[i].opts; a->name || a->letter; a++) {
			assert_non_null(a->help);
			for (b = a + 1; b->name || b->letter; b++) {
				assert_int_not_equal(a->val, b->val);
				assert_false(a->letter && a->letter == b->letter);
				assert_false(a->name && b->name && !strcmp(a->name, b->name));
			}
		}
	}
}

static void test_forms(void **state)
{
	const struct jw_cli_opt *o;
	char form[96];
	int seen = 0;

	(void)state;
	for (o = jw_cli_cmd("export")->opts; o->name || o->letter; o++) {
		jw_cli_opt_form(o, form, sizeof(form));
		if (o->letter == 'o')
			seen += !strcmp(form, "-o, --output FILE");
		if (o->val == 'f')
			seen += !strcmp(form, "--format pprof");
	}
	for (o = jw_cli_cmd("")->opts; o->name || o->letter; o++) {
		jw_cli_opt_form(o, form, sizeof(form));
		if (o->letter == 'p')
			seen += !strcmp(form, "-p PID[,PID...]");
		if (o->val == JW_OPT_ALL)
			seen += !strcmp(form, "--all");
	}
	assert_int_equal(seen, 4);
}

static void wrap_it(FILE *f, const void *arg)
{
	jw_cli_wrap(f, arg, 4, 6, 30);
}

/* Words wrap under the indent; a synopsis' bracketed group stays on one line. */
static void test_wrap(void **state)
{
	char *text;

	(void)state;
	text = printed(wrap_it, "aaaa bbbb cccc dddd eeee ffff gggg [--top N] [--json]");
	assert_string_equal(text, "  aaaa bbbb cccc dddd eeee\n"
				  "      ffff gggg [--top N]\n"
				  "      [--json]\n");
	free(text);
	text = printed(wrap_it, "");
	assert_string_equal(text, "\n");
	free(text);
}

static void help_of(FILE *f, const void *arg)
{
	jw_cli_help(arg, f);
}

/* Every option of a subcommand in its --help, with its synopsis. */
static void test_subcommand_help(void **state)
{
	const struct jw_cli_cmd *cmds;
	size_t n, i;

	(void)state;
	cmds = jw_cli_cmds(&n);
	for (i = 1; i < n; i++) {
		const struct jw_cli_opt *o;
		char *text = printed(help_of, &cmds[i]), form[96];

		assert_non_null(strstr(text, "Usage: jankwatch "));
		assert_non_null(strstr(text, cmds[i].name));
		for (o = cmds[i].opts; o->name || o->letter; o++) {
			jw_cli_opt_form(o, form, sizeof(form));
			assert_non_null(strstr(text, form));
		}
		free(text);
	}
}

/* Each option of the watch's table is one its parser takes (never "unknown option"). */
static void test_watch_parser_takes_every_option(void **state)
{
	const struct jw_cli_opt *o;

	(void)state;
	for (o = jw_cli_cmd("")->opts; o->name || o->letter; o++) {
		struct jw_config cfg;
		char opt[64], err[512] = "";
		char *argv[8];
		int argc = 0;
		FILE *saved = stdout;

		if (o->letter)
			snprintf(opt, sizeof(opt), "-%c", o->letter);
		else
			snprintf(opt, sizeof(opt), "--%s", o->name);
		argv[argc++] = "jankwatch";
		argv[argc++] = opt;
		if (o->arg)
			argv[argc++] = "1";
		argv[argc++] = "-p";
		argv[argc++] = "1";
		argv[argc] = NULL;
		stdout = fopen("/dev/null", "w");	/* --help, --version */
		assert_non_null(stdout);
		memset(&cfg, 0, sizeof(cfg));
		jw_options_parse(&cfg, argc, argv, err, sizeof(err));
		fclose(stdout);
		stdout = saved;
		jw_config_free(&cfg);
		if (strstr(err, "unknown option") || strstr(err, "ambiguous option") ||
		    strstr(err, "takes no argument") ||
		    strstr(err, "needs an argument"))
			fail_msg("%s: %s", opt, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getopt_tables),
		cmocka_unit_test(test_options_distinct),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_subcommand_help),
		cmocka_unit_test(test_watch_parser_takes_every_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
