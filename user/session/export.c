// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/when.h"
#include "config/cli.h"
#include "output/pprof.h"
#include "session/export.h"
#include "session/logargs.h"

/* A profile file past this size is not read (pprof's own are far smaller). */
#define MAX_FILE_BYTES (64 << 20)

struct export {
	const char *dir;
	const char *out;
	struct jw_range range;
	size_t merged, out_of_range, damaged;
};

static int parse_args(struct export *x, int argc, char **argv)
{
	struct option opts[16];
	char shorts[16];
	int64_t now = jw_clock_ns(CLOCK_REALTIME);
	bool format = false;
	int c, ret;

	if (jw_cli_getopt(jw_cli_cmd("export"), ":", opts, 16, shorts, sizeof(shorts)))
		return -ENOSPC;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "pprof")) {
				fprintf(stderr, "jankwatch: export: --format %s: unknown format, "
					"allowed pprof\n", optarg);
				return -EINVAL;
			}
			format = true;
			break;
		case 'o':
			x->out = optarg;
			break;
		case 's':
		case 'u':
		case 'p':
			ret = jw_range_option(&x->range, "export", c, optarg, now);
			if (ret)
				return ret;
			break;
		case 'h':
			jw_cli_help(jw_cli_cmd("export"), stdout);
			return 1;
		default:
			return jw_logargs_bad_option("export", c, argv);
		}
	}
	ret = jw_logargs_finish(&x->range, "export", argc, argv, &x->dir);
	if (ret)
		return ret;
	if (!format || !x->out) {
		fprintf(stderr, "jankwatch: export: give --format pprof and -o FILE (--help for "
			"usage)\n");
		return -EINVAL;
	}
	return 0;
}

/* Whether @name is a profile jankwatch wrote ("profile-<pid>-...pb.gz"), of @pid (0: any). */
static bool is_profile(const char *name, long pid)
{
	size_t len = strlen(name);
	char *end;
	long p;

	if (strncmp(name, "profile-", 8) || len < 14 || strcmp(name + len - 6, ".pb.gz"))
		return false;
	p = strtol(name + 8, &end, 10);
	return *end == '-' && (!pid || p == pid);
}

/* Reads file @name of directory @dirfd whole. 0 or -errno. */
static int read_file(int dirfd, const char *name, void **data, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t n;
	size_t got = 0;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_BYTES) {
		close(fd);
		return S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, st.st_size - got)) > 0)
		got += n;
	close(fd);
	*data = buf;
	*len = got;
	return 0;
}

/* Merges every profile of the directory into @all. 0 or -errno (with the reason printed). */
static int merge_dir(struct export *x, struct jw_pprof *all)
{
	DIR *d = opendir(x->dir);
	struct dirent *de;
	char err[256];
	size_t len = 0;
	void *data = NULL;
	int ret = 0;

	if (!d) {
		ret = -errno;
		fprintf(stderr, "jankwatch: export: cannot open %s: %s\n", x->dir, strerror(errno));
		return ret;
	}
	while ((de = readdir(d)) && ret != -ENOMEM) {
		if (!is_profile(de->d_name, x->range.pid))
			continue;
		ret = read_file(dirfd(d), de->d_name, &data, &len);
		if (ret) {
			fprintf(stderr, "jankwatch: export: skipped %s/%s: %s\n", x->dir, de->d_name,
				strerror(-ret));
			x->damaged++;
			continue;
		}
		ret = jw_pprof__merge(all, data, len, x->range.since_ns, x->range.until_ns, err,
				      sizeof(err));
		free(data);
		if (ret == 1) {
			x->merged++;
		} else if (ret == 0) {
			x->out_of_range++;
		} else if (ret != -ENOMEM) {
			fprintf(stderr, "jankwatch: export: skipped %s/%s: %s\n", x->dir, de->d_name,
				err);
			x->damaged++;
		}
	}
	closedir(d);
	if (ret == -ENOMEM)
		fprintf(stderr, "jankwatch: export: out of memory\n");
	return ret == -ENOMEM ? ret : 0;
}

/* Writes @p to x->out, replacing it whole or not at all. 0 or -errno (printed). */
static int write_out(const struct export *x, const struct jw_pprof *p)
{
	char tmp[4096];
	FILE *f;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-%d", x->out, (int)getpid()) >= (int)sizeof(tmp)) {
		fprintf(stderr, "jankwatch: export: %s: name too long\n", x->out);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "jankwatch: export: cannot write %s: %s\n", x->out, strerror(-ret));
		return ret;
	}
	ret = jw_pprof__write(p, f);
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, x->out))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		fprintf(stderr, "jankwatch: export: cannot write %s: %s\n", x->out, strerror(-ret));
	}
	return ret;
}

int jw_export_main(int argc, char **argv)
{
	struct export x = { 0 };
	struct jw_pprof *all;
	char comment[512];
	int ret;

	ret = parse_args(&x, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	all = jw_pprof__new(0);
	if (!all) {
		fprintf(stderr, "jankwatch: export: out of memory\n");
		return 1;
	}
	ret = merge_dir(&x, all);
	if (!ret && !x.merged) {
		if (x.out_of_range)
			fprintf(stderr, "jankwatch: export: no profile in %s in that time range (%zu "
				"outside it)\n", x.dir, x.out_of_range);
		else
			fprintf(stderr, "jankwatch: export: no profile in %s%s (jankwatch writes them "
				"with --format pprof)\n", x.dir,
				x.range.pid ? " of that process" : "");
		ret = -ENOENT;
	}
	if (!ret) {
		snprintf(comment, sizeof(comment), "jankwatch export: %zu jank profiles of %s merged",
			 x.merged, x.dir);
		ret = jw_pprof__comment(all, comment);
		if (!ret)
			ret = write_out(&x, all);
	}
	if (!ret)
		fprintf(stderr, "jankwatch: export: %zu profiles merged into %s (%zu samples)%s\n",
			x.merged, x.out, jw_pprof__samples(all),
			x.damaged ? "; some files were skipped, see above" : "");
	jw_pprof__free(all);
	return ret ? 1 : 0;
}
