/* SPDX-License-Identifier: GPL-2.0-only */
/* A test's scratch directory of files: what is in it, read back, and removed whole. */
#ifndef JW_TEST_TMPDIR_H
#define JW_TEST_TMPDIR_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether @name begins with @prefix and ends with @suffix. */
static inline int tmpdir_name_is(const char *name, const char *prefix, const char *suffix)
{
	size_t len = strlen(name), sl = strlen(suffix);

	return !strncmp(name, prefix, strlen(prefix)) && len >= sl &&
	       !strcmp(name + len - sl, suffix) && name[0] != '.';
}

/* How many files of @dir are named @prefix...@suffix. */
static inline size_t tmpdir_count(const char *dir, const char *prefix, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += tmpdir_name_is(de->d_name, prefix, suffix);
	if (d)
		closedir(d);
	return n;
}

/* The text of the first file of @dir named @prefix...@suffix (malloc'd), or NULL. */
static inline char *tmpdir_read(const char *dir, const char *prefix, const char *suffix)
{
	char path[PATH_MAX], *text = NULL;
	DIR *d = opendir(dir);
	struct dirent *de;
	FILE *f = NULL;
	size_t n;

	while (d && (de = readdir(d)) && !tmpdir_name_is(de->d_name, prefix, suffix))
		;
	if (d && de) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "re");
	}
	if (d)
		closedir(d);
	if (f && (text = calloc(1, 1 << 16))) {
		n = fread(text, 1, (1 << 16) - 1, f);
		text[n] = '\0';
	}
	if (f)
		fclose(f);
	return text;
}

/* Removes the files of @dir, then @dir. */
static inline void tmpdir_remove(const char *dir)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

#endif
