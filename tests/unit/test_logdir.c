// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the log directory: creation, whole-file commits, names, quota, events.jsonl. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/logdir.h"

#define BIG_QUOTA (1024 * 1024)

struct fixture {
	char base[64];		/* a mkdtemp directory, removed whole at teardown */
	char path[PATH_MAX];	/* scratch for paths under base */
	char path2[PATH_MAX];
	mode_t old_umask;
	struct jw_logdir *d;
	struct jw_logfile lf;
	char err[512];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->base, sizeof(fx->base), "/tmp/jw-logdir-XXXXXX");
	if (!mkdtemp(fx->base)) {
		free(fx);
		return -1;
	}
	/* The modes asserted below are what a usual umask leaves of 0750 and 0640. */
	fx->old_umask = umask(022);
	*state = fx;
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->lf.f)
		fclose(fx->lf.f);
	jw_logdir__free(fx->d);
	nftw(fx->base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	umask(fx->old_umask);
	free(fx);
	return 0;
}

/* "<base>/<rel>" in the fixture's scratch buffer. */
static const char *at(struct fixture *fx, const char *rel)
{
	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->base, rel);
	return fx->path;
}

static const char *at2(struct fixture *fx, const char *rel)
{
	snprintf(fx->path2, sizeof(fx->path2), "%s/%s", fx->base, rel);
	return fx->path2;
}

static struct jw_logdir *open_logs(struct fixture *fx, const char *rel, uint64_t quota)
{
	fx->err[0] = '\0';
	fx->d = jw_logdir__open(at(fx, rel), quota, fx->err, sizeof(fx->err));
	if (!fx->d)
		fail_msg("jw_logdir__open %s: %s", fx->path, fx->err);
	return fx->d;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The whole content of @path into @buf (NUL-terminated); returns its length. */
static size_t read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* The names in directory @path, sorted and joined with spaces ("" when empty). */
static const char *listing(const char *path, char *buf, size_t len)
{
	struct dirent **names;
	size_t off = 0;
	int n, i;

	n = scandir(path, &names, NULL, alphasort);
	assert_true(n >= 0);
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "",
					names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return buf;
}

static void assert_listing(const char *dir, const char *want)
{
	char buf[1024];

	assert_string_equal(listing(dir, buf, sizeof(buf)), want);
}

/* Creates @name, writes @len bytes of 'x' into it, and commits it; returns the result. */
static int write_report(struct fixture *fx, const char *name, size_t len, char *path,
			size_t pathlen)
{
	size_t i;
	int ret;

	/* Past the quota, nothing is even started. */
	ret = jw_logdir__create(fx->d, name, &fx->lf);
	if (ret)
		return ret;
	assert_non_null(fx->lf.f);
	for (i = 0; i < len; i++)
		assert_int_equal(fputc('x', fx->lf.f), 'x');
	return jw_logdir__commit(fx->d, &fx->lf, path, pathlen);
}

static void test_open_creates_parents(void **state)
{
	struct fixture *fx = *state;

	open_logs(fx, "a/b/c", BIG_QUOTA);
	assert_string_equal(jw_logdir__path(fx->d), at(fx, "a/b/c"));
	assert_false(jw_logdir__over_quota(fx->d));
	assert_true(S_ISDIR(mode_of(at(fx, "a"))));
	assert_int_equal(mode_of(at(fx, "a")) & 07777, 0750);
	assert_int_equal(mode_of(at(fx, "a/b")) & 07777, 0750);
	assert_int_equal(mode_of(at(fx, "a/b/c")) & 07777, 0750);
	assert_listing(at(fx, "a/b/c"), "");

	/* Opening an existing directory is fine, and leaves its mode alone. */
	jw_logdir__free(fx->d);
	fx->d = NULL;
	assert_int_equal(chmod(at(fx, "a/b/c"), 0700), 0);
	open_logs(fx, "a/b/c", BIG_QUOTA);
	assert_int_equal(mode_of(at(fx, "a/b/c")) & 07777, 0700);
	jw_logdir__free(fx->d);
	fx->d = NULL;
	/* A trailing slash is the same directory. */
	open_logs(fx, "a/b/c/", BIG_QUOTA);
	jw_logdir__free(NULL);
}

static void test_create_write_commit(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], buf[256];

	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__create(fx->d, "stack-1.log", &fx->lf), 0);
	assert_non_null(fx->lf.f);
	/* Written under a temporary name: the final name appears only whole. */
	assert_listing(at(fx, "logs"), ".stack-1.log.tmp");
	assert_true(fprintf(fx->lf.f, "hello\nworld\n") > 0);
	assert_int_equal(jw_logdir__commit(fx->d, &fx->lf, path, sizeof(path)), 0);
	assert_null(fx->lf.f);
	assert_string_equal(path, at(fx, "logs/stack-1.log"));
	assert_string_equal(fx->lf.name, "stack-1.log");
	assert_listing(at(fx, "logs"), "stack-1.log");
	assert_int_equal(read_file(path, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "hello\nworld\n");
	assert_true(S_ISREG(mode_of(path)));
	assert_int_equal(mode_of(path) & 07777, 0640);
	assert_false(jw_logdir__over_quota(fx->d));
}

static void test_taken_name_gets_suffix(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(write_report(fx, "stack-1.log", 3, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/stack-1.log"));
	assert_int_equal(write_report(fx, "stack-1.log", 4, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/stack-1-1.log"));
	assert_string_equal(fx->lf.name, "stack-1-1.log");
	assert_int_equal(write_report(fx, "stack-1.log", 5, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/stack-1-2.log"));
	/* Without an extension the suffix goes at the end; with two, before both (".pb.gz"). */
	assert_int_equal(write_report(fx, "trace", 1, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "trace", 1, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/trace-1"));
	assert_int_equal(write_report(fx, "a.tar.gz", 1, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "a.tar.gz", 1, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/a-1.tar.gz"));
	assert_listing(at(fx, "logs"),
		       "a-1.tar.gz a.tar.gz stack-1-1.log stack-1-2.log stack-1.log trace trace-1");
	/* The first file was not replaced. */
	assert_int_equal(mode_of(at(fx, "logs/stack-1.log")) & 07777, 0640);
	{
		char buf[16];

		assert_int_equal(read_file(at(fx, "logs/stack-1.log"), buf, sizeof(buf)), 3);
		assert_int_equal(read_file(at(fx, "logs/stack-1-1.log"), buf, sizeof(buf)), 4);
	}
}

static void test_abort_removes_temp(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__create(fx->d, "trace-9.txt", &fx->lf), 0);
	assert_true(fprintf(fx->lf.f, "partial") > 0);
	jw_logdir__abort(fx->d, &fx->lf);
	assert_null(fx->lf.f);
	assert_listing(at(fx, "logs"), "");
	/* The name is free again. */
	assert_int_equal(write_report(fx, "trace-9.txt", 2, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/trace-9.txt"));
	assert_listing(at(fx, "logs"), "trace-9.txt");
}

static void test_quota_commit(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX] = "untouched";

	open_logs(fx, "logs", 100);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_int_equal(write_report(fx, "stack-big.txt", 200, path, sizeof(path)), -EDQUOT);
	assert_null(fx->lf.f);
	assert_string_equal(path, "untouched");
	/* Removed, temporary file included. */
	assert_listing(at(fx, "logs"), "");
	assert_true(jw_logdir__over_quota(fx->d));
	/* From now on nothing is written, however small. */
	assert_int_equal(jw_logdir__create(fx->d, "stack-small.txt", &fx->lf), -EDQUOT);
	assert_null(fx->lf.f);
	/* Event lines go on: events.jsonl is outside the quota. */
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), 0);
	assert_listing(at(fx, "logs"), "events.jsonl");
}

static void test_quota_adds_up(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	open_logs(fx, "logs", 100);
	assert_int_equal(write_report(fx, "stack-a.txt", 60, path, sizeof(path)), 0);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_int_equal(write_report(fx, "stack-b.txt", 41, path, sizeof(path)), -EDQUOT);
	assert_true(jw_logdir__over_quota(fx->d));
	assert_listing(at(fx, "logs"), "stack-a.txt");
}

/* Up to the quota exactly is allowed; a byte more is not. */
static void test_quota_exact(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	open_logs(fx, "logs", 100);
	assert_int_equal(write_report(fx, "stack-a.txt", 60, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "stack-b.txt", 40, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "stack-c.txt", 1, path, sizeof(path)), -EDQUOT);
	assert_true(jw_logdir__over_quota(fx->d));
	assert_listing(at(fx, "logs"), "stack-a.txt stack-b.txt");
}

static void test_append_event(void **state)
{
	struct fixture *fx = *state;
	static const char l1[] = "{\"event\":\"MAIN_THREAD_JANK\",\"n\":1}\n";
	static const char l2[] = "{\"event\":\"MAIN_THREAD_JANK\",\"n\":2}\n";
	char buf[256], want[256];

	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__append_event(fx->d, l1, strlen(l1)), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, l2, strlen(l2)), 0);
	assert_listing(at(fx, "logs"), "events.jsonl");
	snprintf(want, sizeof(want), "%s%s", l1, l2);
	assert_int_equal(read_file(at(fx, "logs/events.jsonl"), buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
	assert_true(S_ISREG(mode_of(at(fx, "logs/events.jsonl"))));
	assert_int_equal(mode_of(at(fx, "logs/events.jsonl")) & 07777, 0640);

	/* A new handle on the same directory appends, never truncates. */
	jw_logdir__free(fx->d);
	fx->d = NULL;
	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__append_event(fx->d, l1, strlen(l1)), 0);
	snprintf(want, sizeof(want), "%s%s%s", l1, l2, l1);
	read_file(at(fx, "logs/events.jsonl"), buf, sizeof(buf));
	assert_string_equal(buf, want);
}

/* events.jsonl is outside the quota: past it, reports stop and event lines go on. */
static void test_append_event_outside_quota(void **state)
{
	struct fixture *fx = *state;
	char buf[64], path[PATH_MAX];

	open_logs(fx, "logs", 20);
	assert_int_equal(write_report(fx, "stack-x.txt", 20, path, sizeof(path)), 0);
	assert_true(jw_logdir__over_quota(fx->d));
	assert_int_equal(jw_logdir__append_event(fx->d, "123456789\n", 10), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, "abcdefghi\n", 10), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, "\n", 1), 0);
	assert_int_equal(read_file(at(fx, "logs/events.jsonl"), buf, sizeof(buf)), 21);
	assert_int_equal(jw_logdir__create(fx->d, "stack-y.txt", &fx->lf), -EDQUOT);

	/* Nor does it count at open. */
	jw_logdir__free(fx->d);
	fx->d = NULL;
	assert_int_equal(unlink(at(fx, "logs/stack-x.txt")), 0);
	open_logs(fx, "logs", 20);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_int_equal(write_report(fx, "stack-y.txt", 20, path, sizeof(path)), 0);
	assert_listing(at(fx, "logs"), "events.jsonl stack-y.txt");
}

/* events.jsonl rotates at 1 MiB into events.jsonl.1, which replaces the previous one. */
static void test_events_rotate(void **state)
{
	struct fixture *fx = *state;
	static char line[1000];
	char buf[64];
	struct stat st;
	int i;

	memset(line, 'e', sizeof(line) - 1);
	line[sizeof(line) - 2] = '\n';
	open_logs(fx, "logs", 100);
	/* 1049 lines of 999 bytes stay under 1 MiB; the next would pass it. */
	for (i = 0; i < 1049; i++)
		assert_int_equal(jw_logdir__append_event(fx->d, line, 999), 0);
	assert_listing(at(fx, "logs"), "events.jsonl");
	assert_int_equal(jw_logdir__append_event(fx->d, "first\n", 6), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, line, 999), 0);
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1");
	assert_int_equal(stat(at(fx, "logs/events.jsonl.1"), &st), 0);
	assert_int_equal(st.st_size, 1049 * 999 + 6);
	assert_int_equal(stat(at(fx, "logs/events.jsonl"), &st), 0);
	assert_int_equal(st.st_size, 999);
	assert_int_equal(mode_of(at(fx, "logs/events.jsonl")) & 07777, 0640);

	/* A reopened directory knows the size: the second rotation drops the oldest lines. */
	jw_logdir__free(fx->d);
	fx->d = NULL;
	open_logs(fx, "logs", 100);
	for (i = 0; i < 1049; i++)
		assert_int_equal(jw_logdir__append_event(fx->d, line, 999), 0);
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1");
	assert_int_equal(stat(at(fx, "logs/events.jsonl"), &st), 0);
	assert_int_equal(st.st_size, 999);
	read_file(at(fx, "logs/events.jsonl.1"), buf, sizeof(buf));
	assert_int_equal(buf[0], 'e');
	/* The new .1 is the file rotated now: the old one, with "first", is gone. */
	assert_int_equal(stat(at(fx, "logs/events.jsonl.1"), &st), 0);
	assert_int_equal(st.st_size, 1049 * 999);
}

/* Appends a line of almost 1 MiB of @tag: the file before it, if any, is rotated first. */
static void big_line(struct fixture *fx, char tag)
{
	static char line[1024 * 1024 - 100];

	memset(line, tag, sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	assert_int_equal(jw_logdir__append_event(fx->d, line, sizeof(line)), 0);
}

static char first_byte(struct fixture *fx, const char *name)
{
	char buf[8] = "";

	assert_true(read_file(at(fx, name), buf, sizeof(buf)) > 0);
	return buf[0];
}

/*
 * events_keep=3: each rotation renames the files one number up (the newest is .1) and drops the
 * one past .3; a smaller events_keep later drops the one its rotation passes.
 */
static void test_events_keep(void **state)
{
	struct fixture *fx = *state;

	open_logs(fx, "logs", 100);
	jw_logdir__set_events_keep(fx->d, 3);
	big_line(fx, 'a');
	big_line(fx, 'b');
	big_line(fx, 'c');
	big_line(fx, 'd');
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1 events.jsonl.2 events.jsonl.3");
	assert_int_equal(first_byte(fx, "logs/events.jsonl.3"), 'a');
	assert_int_equal(first_byte(fx, "logs/events.jsonl.2"), 'b');
	assert_int_equal(first_byte(fx, "logs/events.jsonl.1"), 'c');
	assert_int_equal(first_byte(fx, "logs/events.jsonl"), 'd');
	big_line(fx, 'e');
	/* The a-file is gone, every other moved up. */
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1 events.jsonl.2 events.jsonl.3");
	assert_int_equal(first_byte(fx, "logs/events.jsonl.3"), 'b');
	assert_int_equal(first_byte(fx, "logs/events.jsonl.2"), 'c');
	assert_int_equal(first_byte(fx, "logs/events.jsonl.1"), 'd');
	assert_int_equal(first_byte(fx, "logs/events.jsonl"), 'e');

	/* Kept down to 2: the next rotation drops .3 (past .2) and moves the rest up. */
	jw_logdir__set_events_keep(fx->d, 2);
	big_line(fx, 'f');
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1 events.jsonl.2");
	assert_int_equal(first_byte(fx, "logs/events.jsonl.2"), 'd');
	assert_int_equal(first_byte(fx, "logs/events.jsonl.1"), 'e');

	/* Out of range: 0 counts as 1, a huge value as the most. */
	jw_logdir__set_events_keep(fx->d, 0);
	big_line(fx, 'g');
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1");
	assert_int_equal(first_byte(fx, "logs/events.jsonl.1"), 'f');
	jw_logdir__set_events_keep(fx->d, 1000000);
	big_line(fx, 'h');
	assert_listing(at(fx, "logs"), "events.jsonl events.jsonl.1 events.jsonl.2");
	assert_int_equal(first_byte(fx, "logs/events.jsonl.2"), 'f');
}

/* A link planted as events.jsonl.1 is replaced by the rotation, its target untouched. */
static void test_events_rotate_over_link(void **state)
{
	struct fixture *fx = *state;
	static char line[1024 * 1024];
	char buf[64];

	memset(line, 'e', sizeof(line));
	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "victim"), "untouched\n", 10);
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/events.jsonl.1")), 0);
	open_logs(fx, "logs", 100);
	assert_int_equal(jw_logdir__append_event(fx->d, line, sizeof(line)), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, "x\n", 2), 0);
	assert_true(S_ISREG(mode_of(at(fx, "logs/events.jsonl.1"))));
	read_file(at(fx, "victim"), buf, sizeof(buf));
	assert_string_equal(buf, "untouched\n");
}

/*
 * Aging removes jankwatch's own report files older than the limit, and nothing else; the space
 * they held is free again.
 */
static void test_remove_old_reports(void **state)
{
	struct fixture *fx = *state;
	struct timespec old[2] = { { 1000000, 0 }, { 1000000, 0 } };
	char path[PATH_MAX];
	time_t now = 1000000 + 8 * 86400;

	open_logs(fx, "logs", 100);
	assert_int_equal(write_report(fx, "stack-old.txt", 60, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "trace-old.ftrace", 20, path, sizeof(path)), 0);
	assert_int_equal(write_report(fx, "stack-new.txt", 20, path, sizeof(path)), 0);
	assert_true(jw_logdir__over_quota(fx->d));
	write_file(at(fx, "logs/notes-old.txt"), "mine\n", 5);
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), 0);
	assert_int_equal(utimensat(AT_FDCWD, at(fx, "logs/stack-old.txt"), old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, at(fx, "logs/trace-old.ftrace"), old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, at(fx, "logs/notes-old.txt"), old, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, at(fx, "logs/events.jsonl"), old, 0), 0);
	/* Seven days: both old reports go (eight days old); a report of now stays. */
	assert_int_equal(jw_logdir__remove_older(fx->d, 7 * 86400, now), 2);
	assert_listing(at(fx, "logs"), "events.jsonl notes-old.txt stack-new.txt");
	assert_false(jw_logdir__over_quota(fx->d));
	assert_int_equal(write_report(fx, "stack-more.txt", 80, path, sizeof(path)), 0);
	/* Nine days: nothing is that old. */
	assert_int_equal(jw_logdir__remove_older(fx->d, 9 * 86400, now), 0);
}

/* A state file is replaced whole, outside the quota, never through a planted link. */
static void test_replace_and_read(void **state)
{
	struct fixture *fx = *state;
	char buf[64];

	open_logs(fx, "logs", 10);
	assert_int_equal(jw_logdir__read(fx->d, JW_LOGDIR_BUDGETS, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(jw_logdir__replace(fx->d, JW_LOGDIR_BUDGETS, "stack 1 2 3 4\n", 14), 0);
	assert_int_equal(jw_logdir__replace(fx->d, JW_LOGDIR_BUDGETS, "hang 1 2 3 4\n", 13), 0);
	assert_int_equal(jw_logdir__read(fx->d, JW_LOGDIR_BUDGETS, buf, sizeof(buf)), 13);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_listing(at(fx, "logs"), "budgets");
	assert_int_equal(mode_of(at(fx, "logs/budgets")) & 07777, 0640);
	write_file(at(fx, "victim"), "untouched\n", 10);
	assert_int_equal(unlink(at(fx, "logs/budgets")), 0);
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/budgets")), 0);
	assert_true(jw_logdir__read(fx->d, JW_LOGDIR_BUDGETS, buf, sizeof(buf)) < 0);
	assert_int_equal(jw_logdir__replace(fx->d, JW_LOGDIR_BUDGETS, "x\n", 2), 0);
	assert_true(S_ISREG(mode_of(at(fx, "logs/budgets"))));
	read_file(at(fx, "victim"), buf, sizeof(buf));
	assert_string_equal(buf, "untouched\n");
	/* No directory: nothing read or written. */
	assert_int_equal(jw_logdir__replace(NULL, JW_LOGDIR_BUDGETS, "x\n", 2), -ENOENT);
	assert_true(jw_logdir__over_quota(NULL));
	assert_int_equal(jw_logdir__append_event(NULL, "{}\n", 3), -EDQUOT);
}

/* A link planted as events.jsonl is not followed: its target stays as it was. */
static void test_append_event_symlink_not_followed(void **state)
{
	struct fixture *fx = *state;
	char buf[64];

	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "victim"), "untouched\n", 10);
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/events.jsonl")), 0);
	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), -ELOOP);
	assert_int_equal(read_file(at(fx, "victim"), buf, sizeof(buf)), 10);
	assert_string_equal(buf, "untouched\n");
	assert_true(S_ISLNK(mode_of(at(fx, "logs/events.jsonl"))));

	/* A dangling link would have created its target: it must not either. */
	assert_int_equal(unlink(at(fx, "logs/events.jsonl")), 0);
	assert_int_equal(symlink(at2(fx, "created"), at(fx, "logs/events.jsonl")), 0);
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), -ELOOP);
	assert_int_equal(access(at(fx, "created"), F_OK), -1);
}

/*
 * A FIFO planted as the event log (with no reader: an open for writing would wait for one
 * forever) or as a report's names is never opened: refused at once, nothing written through it.
 */
static void test_fifo_not_opened(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	assert_int_equal(mkfifo(at(fx, "logs/events.jsonl"), 0666), 0);
	assert_int_equal(mkfifo(at(fx, "logs/.s.log.tmp"), 0666), 0);
	assert_int_equal(mkfifo(at(fx, "logs/t.log"), 0666), 0);
	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), -ENXIO);
	assert_true(S_ISFIFO(mode_of(at(fx, "logs/events.jsonl"))));
	assert_int_equal(jw_logdir__create(fx->d, "s.log", &fx->lf), -EEXIST);
	assert_null(fx->lf.f);
	assert_int_equal(write_report(fx, "t.log", 5, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/t-1.log"));
	assert_true(S_ISFIFO(mode_of(at(fx, "logs/t.log"))));
}

/* Links planted as a report's temporary or final name are not followed either. */
static void test_report_symlink_not_followed(void **state)
{
	struct fixture *fx = *state;
	char buf[64], path[PATH_MAX];

	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "victim"), "untouched\n", 10);
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/.s.log.tmp")), 0);
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/t.log")), 0);
	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(jw_logdir__create(fx->d, "s.log", &fx->lf), -EEXIST);
	assert_null(fx->lf.f);
	/* A taken final name, even by a link, is never replaced nor written through. */
	assert_int_equal(write_report(fx, "t.log", 5, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/t-1.log"));
	assert_true(S_ISLNK(mode_of(at(fx, "logs/t.log"))));
	assert_int_equal(read_file(at(fx, "victim"), buf, sizeof(buf)), 10);
	assert_string_equal(buf, "untouched\n");
}

/* What the directory already holds counts toward the quota from the start. */
static void test_existing_files_count(void **state)
{
	struct fixture *fx = *state;
	char big[150], path[PATH_MAX];

	memset(big, 'e', sizeof(big));
	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "logs/stack-old.txt"), big, sizeof(big));
	open_logs(fx, "logs", 100);
	assert_true(jw_logdir__over_quota(fx->d));
	assert_int_equal(jw_logdir__create(fx->d, "stack-new.txt", &fx->lf), -EDQUOT);
	assert_int_equal(jw_logdir__append_event(fx->d, "{}\n", 3), 0);
	assert_int_equal(unlink(at(fx, "logs/events.jsonl")), 0);
	jw_logdir__free(fx->d);
	fx->d = NULL;

	open_logs(fx, "logs", 1000);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_int_equal(write_report(fx, "stack-a.txt", 851, path, sizeof(path)), -EDQUOT);
	jw_logdir__free(fx->d);
	fx->d = NULL;

	open_logs(fx, "logs", 1000);
	assert_int_equal(write_report(fx, "stack-a.txt", 850, path, sizeof(path)), 0);
	assert_listing(at(fx, "logs"), "stack-a.txt stack-old.txt");
}

/* Only regular files count: not links (to what they point at), nor subdirectories. */
static void test_existing_links_do_not_count(void **state)
{
	struct fixture *fx = *state;
	char big[4096];

	memset(big, 'e', sizeof(big));
	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "outside"), big, sizeof(big));
	assert_int_equal(symlink(at2(fx, "outside"), at(fx, "logs/link")), 0);
	open_logs(fx, "logs", 100);
	assert_false(jw_logdir__over_quota(fx->d));
}

/* Temporary files a killed jankwatch left are removed at open and do not count. */
static void test_open_sweeps_leftovers(void **state)
{
	struct fixture *fx = *state;
	char big[500], path[PATH_MAX], buf[600];

	memset(big, 'l', sizeof(big));
	assert_int_equal(mkdir(at(fx, "logs"), 0750), 0);
	write_file(at(fx, "logs/.stack-1.log.tmp"), big, sizeof(big));
	write_file(at(fx, "logs/.a.tmp"), big, 10);
	/* Not ours: no leading dot, or nothing before ".tmp". */
	write_file(at(fx, "logs/keep.tmp"), "k", 1);
	write_file(at(fx, "logs/.tmp"), "k", 1);
	/* A link is never removed, nor is what it points at. */
	write_file(at(fx, "victim"), big, sizeof(big));
	assert_int_equal(symlink(at2(fx, "victim"), at(fx, "logs/.link.log.tmp")), 0);
	open_logs(fx, "logs", 100);
	assert_false(jw_logdir__over_quota(fx->d));
	assert_listing(at(fx, "logs"), ".link.log.tmp .tmp keep.tmp");
	assert_int_equal(read_file(at(fx, "victim"), buf, sizeof(buf)), sizeof(big));
	/* The name the leftover blocked is free; files that are not reports do not count. */
	assert_int_equal(write_report(fx, "stack-1.log", 100, path, sizeof(path)), 0);
	assert_string_equal(path, at(fx, "logs/stack-1.log"));
	assert_int_equal(write_report(fx, "stack-more.txt", 1, path, sizeof(path)), -EDQUOT);
}

static void test_open_under_regular_file(void **state)
{
	struct fixture *fx = *state;
	char want[PATH_MAX + 128];

	write_file(at(fx, "file"), "x", 1);
	fx->err[0] = '\0';
	errno = 0;
	fx->d = jw_logdir__open(at(fx, "file/logs"), BIG_QUOTA, fx->err, sizeof(fx->err));
	assert_null(fx->d);
	assert_int_equal(errno, ENOTDIR);
	snprintf(want, sizeof(want), "cannot create log directory %s: Not a directory",
		 at(fx, "file/logs"));
	assert_string_equal(fx->err, want);

	/* The path itself a regular file. */
	fx->err[0] = '\0';
	errno = 0;
	fx->d = jw_logdir__open(at(fx, "file"), BIG_QUOTA, fx->err, sizeof(fx->err));
	assert_null(fx->d);
	assert_int_equal(errno, ENOTDIR);
	assert_non_null(strstr(fx->err, at(fx, "file")));
	assert_non_null(strstr(fx->err, "Not a directory"));
	assert_null(strchr(fx->err, '\n'));
}

/*
 * A log directory reached through a symlink: root's is followed (systemd's LogsDirectory= of a
 * DynamicUser= service is one), another user's is not (it could lead anywhere).
 */
static void test_open_through_symlink(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	if (geteuid() != 0)
		skip();
	assert_int_equal(mkdir(at(fx, "private"), 0700), 0);
	assert_int_equal(symlink("private", at(fx, "logs")), 0);
	open_logs(fx, "logs", BIG_QUOTA);
	assert_int_equal(write_report(fx, "stack-1.log", 10, path, sizeof(path)), 0);
	assert_int_equal(access(at(fx, "private/stack-1.log"), F_OK), 0);
	jw_logdir__free(fx->d);

	assert_int_equal(lchown(at(fx, "logs"), 65534, 65534), 0);
	errno = 0;
	fx->d = jw_logdir__open(at(fx, "logs"), BIG_QUOTA, fx->err, sizeof(fx->err));
	assert_null(fx->d);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(fx->err, "cannot open log directory"));
}

/*
 * A directory filled to exactly its quota: whether the quota is "reached" must not depend on
 * whether the bytes were written by this handle or found at open (open says used >= quota).
 */
static void test_quota_reached_exactly_is_over(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	bool live;

	open_logs(fx, "logs", 100);
	assert_int_equal(write_report(fx, "stack-a.txt", 100, path, sizeof(path)), 0);
	live = jw_logdir__over_quota(fx->d);
	jw_logdir__free(fx->d);
	fx->d = NULL;
	open_logs(fx, "logs", 100);
	assert_true(jw_logdir__over_quota(fx->d));
	assert_int_equal(live, jw_logdir__over_quota(fx->d));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_creates_parents),
		T(test_create_write_commit),
		T(test_taken_name_gets_suffix),
		T(test_abort_removes_temp),
		T(test_quota_commit),
		T(test_quota_adds_up),
		T(test_quota_exact),
		T(test_append_event),
		T(test_append_event_outside_quota),
		T(test_events_rotate),
		T(test_events_keep),
		T(test_events_rotate_over_link),
		T(test_remove_old_reports),
		T(test_replace_and_read),
		T(test_append_event_symlink_not_followed),
		T(test_report_symlink_not_followed),
		T(test_fifo_not_opened),
		T(test_existing_files_count),
		T(test_existing_links_do_not_count),
		T(test_open_sweeps_leftovers),
		T(test_open_under_regular_file),
		T(test_open_through_symlink),
		T(test_quota_reached_exactly_is_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
