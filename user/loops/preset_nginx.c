// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loops/preset_nginx.h"

/* The parent of process @pid, from /proc/PID/stat; 0 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024], *close_paren;
	pid_t ppid = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, so read after its last ')' */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

int jw_nginx_workers(pid_t pid, pid_t *out, size_t max)
{
	char path[64], title[64] = "";
	struct stat exe, child;
	struct dirent *de;
	size_t n = 0;
	ssize_t len;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, title, sizeof(title) - 1);
	close(fd);
	/* nginx retitles its master "nginx: master process <its command line>" */
	if (len <= 0 || strncmp(title, "nginx: master process", 21))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &exe))
		return -errno;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max) {
		pid_t c = atoi(de->d_name);

		if (c <= 0 || parent_of(c) != pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", c);
		/* Its workers run the same file; a helper it started (a CGI, a logger) does not. */
		if (!stat(path, &child) && child.st_dev == exe.st_dev && child.st_ino == exe.st_ino)
			out[n++] = c;
	}
	closedir(dir);
	return n;
}
