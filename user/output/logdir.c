// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/params.h"
#include "output/logdir.h"

#define FILE_MODE 0640
#define DIR_MODE 0750
#define EVENTS_NAME "events.jsonl"
#define EVENTS_MAX (1024 * 1024)	/* events.jsonl rotates past this */

struct jw_logdir {
	char *path;
	int dirfd;
	int events_fd;
	uint64_t events_size;	/* of events.jsonl, once open */
	unsigned int events_keep;	/* rotated files kept: events.jsonl.1 (newest) .. .N */
	uint64_t quota;
	uint64_t used;
	bool over;
};

/* Whether @name is one of jankwatch's report files: what the quota counts and aging removes. */
static bool is_report(const char *name)
{
	return !strncmp(name, "stack-", 6) || !strncmp(name, "trace-", 6) ||
	       !strncmp(name, "profile-", 8);
}

/* mkdir -p, each missing component created DIR_MODE. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, DIR_MODE) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return 0;
}

/* Whether @name is a temporary file of ours: ".<name>.tmp". */
static bool is_leftover(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '.' && n > 5 && strcmp(name + n - 4, ".tmp") == 0;
}

/*
 * Removes the temporary files a killed jankwatch left, and returns the bytes held by the
 * report files (regular files) directly in the directory.
 */
static uint64_t sweep_and_measure(int dirfd)
{
	uint64_t total = 0;
	struct dirent *de;
	DIR *dir;
	int fd;

	fd = dup(dirfd);
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		struct stat st;

		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (is_leftover(de->d_name) && unlinkat(dirfd, de->d_name, 0) == 0)
			continue;
		if (is_report(de->d_name))
			total += st.st_size;
	}
	closedir(dir);
	return total;
}

/*
 * Opens directory @path, not through a symlink another user could have planted there: one of
 * root's is followed (systemd's LogsDirectory= of a DynamicUser= service, /var/log/jankwatch ->
 * private/jankwatch). A descriptor, or -1 with errno set.
 */
static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = errno;
	struct stat st;

	if (fd >= 0 || (err != ELOOP && err != ENOTDIR))
		return fd;
	if (lstat(path, &st) || !S_ISLNK(st.st_mode)) {
		errno = err;
		return -1;
	}
	if (st.st_uid != 0) {
		errno = ELOOP;
		return -1;
	}
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct jw_logdir *jw_logdir__open(const char *path, uint64_t quota_bytes, char *err,
				  size_t errlen)
{
	struct jw_logdir *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return NULL;
	d->dirfd = -1;
	d->events_fd = -1;
	d->events_keep = 1;
	d->quota = quota_bytes;
	d->path = strdup(path);
	if (!d->path) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = make_dirs(path);
	if (ret) {
		/* Under jankwatch.service every path but its own directories is read-only. */
		snprintf(err, errlen, "cannot create log directory %s: %s%s", path, strerror(-ret),
			 ret == -EROFS ? " (a service writes only where its unit lets it: "
					 "ReadWritePaths=)" : "");
		goto err_free;
	}
	d->dirfd = open_dir(path);
	if (d->dirfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open log directory %s: %s", path,
			 ret == -ELOOP ? "a symlink not root's (only root's are followed)" :
					 strerror(-ret));
		goto err_free;
	}
	d->used = sweep_and_measure(d->dirfd);
	d->over = d->used >= d->quota;
	return d;

err_free:
	jw_logdir__free(d);
	errno = -ret;
	return NULL;
}

void jw_logdir__free(struct jw_logdir *d)
{
	if (!d)
		return;
	if (d->events_fd >= 0)
		close(d->events_fd);
	if (d->dirfd >= 0)
		close(d->dirfd);
	free(d->path);
	free(d);
}

const char *jw_logdir__path(const struct jw_logdir *d)
{
	return d ? d->path : "(no log directory)";
}

void jw_logdir__set_quota(struct jw_logdir *d, uint64_t quota_bytes)
{
	if (!d)
		return;
	d->quota = quota_bytes;
	d->over = d->used >= d->quota;
}

bool jw_logdir__over_quota(const struct jw_logdir *d)
{
	return !d || d->over;
}

/* Counts @bytes written; reaching the quota exactly is reaching it, as at open. */
static void account(struct jw_logdir *d, uint64_t bytes)
{
	d->used += bytes;
	if (d->used >= d->quota)
		d->over = true;
}

int jw_logdir__create(struct jw_logdir *d, const char *name, struct jw_logfile *lf)
{
	int fd, ret;

	memset(lf, 0, sizeof(*lf));
	if (!d || d->over)
		return -EDQUOT;
	snprintf(lf->name, sizeof(lf->name), "%s", name);
	snprintf(lf->tmp, sizeof(lf->tmp), ".%s.tmp", name);
	fd = openat(d->dirfd, lf->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    FILE_MODE);
	if (fd < 0)
		return -errno;
	lf->f = fdopen(fd, "w");
	if (!lf->f) {
		ret = -errno;
		close(fd);
		unlinkat(d->dirfd, lf->tmp, 0);
		return ret;
	}
	return 0;
}

void jw_logdir__abort(struct jw_logdir *d, struct jw_logfile *lf)
{
	if (lf->f)
		fclose(lf->f);
	lf->f = NULL;
	unlinkat(d->dirfd, lf->tmp, 0);
}

/*
 * Renames the temporary file to @name, or "<stem>-N<ext>" when @name is taken; the extension
 * begins at the first dot (".pb.gz", ".perf.txt").
 */
static int give_name(struct jw_logdir *d, struct jw_logfile *lf)
{
	char stem[NAME_MAX + 1], alt[NAME_MAX + 16];
	const char *ext = strchr(lf->name, '.');
	int i;

	if (!ext)
		ext = "";
	snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(lf->name) - strlen(ext)), lf->name);
	for (i = 0; i < 100; i++) {
		if (i)
			snprintf(alt, sizeof(alt), "%.200s-%d%.40s", stem, i, ext);
		else
			snprintf(alt, sizeof(alt), "%s", lf->name);
		/* link() never replaces: a taken name fails with EEXIST. */
		if (linkat(d->dirfd, lf->tmp, d->dirfd, alt, 0) == 0) {
			unlinkat(d->dirfd, lf->tmp, 0);
			snprintf(lf->name, sizeof(lf->name), "%.255s", alt);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int jw_logdir__commit(struct jw_logdir *d, struct jw_logfile *lf, char *path, size_t len)
{
	long size;
	int ret;

	if (fflush(lf->f) || ferror(lf->f)) {
		ret = -(errno ? errno : EIO);
		goto err_abort;
	}
	size = ftell(lf->f);
	if (size < 0) {
		ret = -errno;
		goto err_abort;
	}
	if (d->used + size > d->quota) {
		d->over = true;
		ret = -EDQUOT;
		goto err_abort;
	}
	if (fclose(lf->f)) {
		lf->f = NULL;
		ret = -errno;
		goto err_abort;
	}
	lf->f = NULL;
	ret = give_name(d, lf);
	if (ret)
		goto err_abort;
	account(d, size);
	snprintf(path, len, "%s/%s", d->path, lf->name);
	return 0;

err_abort:
	jw_logdir__abort(d, lf);
	return ret;
}

/* Opens events.jsonl for appending, created 0640 if missing, never through a link. */
static int open_events(struct jw_logdir *d)
{
	struct stat st;

	/*
	 * Not O_EXCL: the file is appended to across runs. O_NONBLOCK and O_NOCTTY, so that
	 * something planted under the name (a FIFO with no reader, a terminal) can neither hold
	 * jankwatch in open() nor become its terminal; anything but a regular file is refused.
	 */
	d->events_fd = openat(d->dirfd, EVENTS_NAME,
			      O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
				      O_CLOEXEC, FILE_MODE);
	if (d->events_fd < 0)
		return -errno;
	if (fstat(d->events_fd, &st) || !S_ISREG(st.st_mode)) {
		close(d->events_fd);
		d->events_fd = -1;
		return -EINVAL;
	}
	d->events_size = st.st_size;
	return 0;
}

void jw_logdir__set_events_keep(struct jw_logdir *d, unsigned int keep)
{
	if (d)
		d->events_keep = keep < 1 ? 1 : keep > JW_EVENTS_KEEP_MAX ? JW_EVENTS_KEEP_MAX : keep;
}

/*
 * events.jsonl becomes events.jsonl.1, each older one moves up a number, the one past
 * events_keep goes: renames only, so a shipper following the file by its inode reads on to its
 * end before it takes the new one. rename() replaces the name and never follows a link.
 */
static int rotate_events(struct jw_logdir *d)
{
	char from[32], to[32];
	unsigned int i;

	snprintf(to, sizeof(to), "%s.%u", EVENTS_NAME, d->events_keep + 1);
	unlinkat(d->dirfd, to, 0);	/* left by a larger events_keep before */
	for (i = d->events_keep; i > 1; i--) {
		snprintf(from, sizeof(from), "%s.%u", EVENTS_NAME, i - 1);
		snprintf(to, sizeof(to), "%s.%u", EVENTS_NAME, i);
		if (renameat(d->dirfd, from, d->dirfd, to) && errno != ENOENT)
			return -errno;
	}
	snprintf(to, sizeof(to), "%s.1", EVENTS_NAME);
	return renameat(d->dirfd, EVENTS_NAME, d->dirfd, to) ? -errno : 0;
}

int jw_logdir__append_event(struct jw_logdir *d, const char *line, size_t len)
{
	ssize_t n;
	int ret;

	if (!d)
		return -EDQUOT;
	if (d->events_fd < 0 && (ret = open_events(d)))
		return ret;
	/* Past 1 MiB the file is rotated and a new one begun. */
	if (d->events_size && d->events_size + len > EVENTS_MAX) {
		close(d->events_fd);
		d->events_fd = -1;
		ret = rotate_events(d);
		if (ret)
			return ret;
		ret = open_events(d);
		if (ret)
			return ret;
	}
	/* One write per line: O_APPEND keeps concurrent writers' lines whole. */
	n = write(d->events_fd, line, len);
	if (n < 0)
		return -errno;
	d->events_size += n;
	return n == (ssize_t)len ? 0 : -EIO;
}

int jw_logdir__remove_older(struct jw_logdir *d, uint64_t max_age_s, time_t now)
{
	struct dirent *de;
	int fd, removed = 0;
	DIR *dir;

	if (!d)
		return 0;
	fd = dup(d->dirfd);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	/* The dup shares the directory's read position with every earlier scan. */
	rewinddir(dir);
	while ((de = readdir(dir))) {
		struct stat st;

		if (!is_report(de->d_name) ||
		    fstatat(d->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (st.st_mtime > now || (uint64_t)(now - st.st_mtime) <= max_age_s)
			continue;
		if (unlinkat(d->dirfd, de->d_name, 0))
			continue;
		removed++;
		d->used = d->used > (uint64_t)st.st_size ? d->used - st.st_size : 0;
	}
	closedir(dir);
	d->over = d->used >= d->quota;
	return removed;
}

int jw_logdir__replace(struct jw_logdir *d, const char *name, const char *data, size_t len)
{
	char tmp[NAME_MAX + 1];
	ssize_t n;
	int fd, ret = 0;

	if (!d)
		return -ENOENT;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(d->dirfd, tmp, 0);
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (n != (ssize_t)len)
		ret = n < 0 ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	/* rename() replaces the name itself: a link planted there is dropped, never followed. */
	if (!ret && renameat(d->dirfd, tmp, d->dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(d->dirfd, tmp, 0);
	return ret;
}

ssize_t jw_logdir__read(struct jw_logdir *d, const char *name, char *buf, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (!d)
		return -ENOENT;
	fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = read(fd, buf, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}
