// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/caps.h"
#include "process/target.h"

/* Reads a small /proc file whole into @buf. Returns its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		int err = -errno;

		fclose(f);
		return err ? err : -EIO;
	}
	fclose(f);
	buf[n] = '\0';
	return n;
}

/*
 * Whether the /proc/PID/stat content @stat is a zombie's (or a dead task's): its threads are
 * gone, only its parent has not reaped it yet.
 */
static bool zombie(const char *stat)
{
	const char *close = strrchr(stat, ')');

	return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

int jw_proc_stat_parse(const char *stat, char *comm, size_t commlen, uint64_t *start_jiffies)
{
	const char *open = strchr(stat, '('), *close = strrchr(stat, ')');
	const char *p;
	size_t n;
	int field;

	if (!open || !close || close < open || !commlen)
		return -EINVAL;
	n = close - open - 1;
	if (n >= commlen)
		n = commlen - 1;
	memcpy(comm, open + 1, n);
	comm[n] = '\0';
	/* After the name come fields 3, 4, ...: skip 19 of them to reach field 22. */
	p = close + 1;
	for (field = 3; field < 22; field++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	*start_jiffies = strtoull(p, NULL, 10);
	return 0;
}

/* Reads the real uid and the thread group id from /proc/PID/status. */
static int read_status(pid_t pid, uid_t *uid, pid_t *tgid)
{
	char path[64], buf[4096], *line;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -errno;
	line = strstr(buf, "\nUid:");
	if (!line)
		return -EINVAL;
	*uid = strtoul(line + 5, NULL, 10);
	line = strstr(buf, "\nTgid:");
	if (!line)
		return -EINVAL;
	*tgid = strtol(line + 6, NULL, 10);
	return 0;
}

/*
 * Whether process @pid (@comm), of user @uid, can be read: another user's takes CAP_SYS_PTRACE
 * and CAP_DAC_READ_SEARCH; when one is missing, says which. 0 or -EPERM.
 */
static int other_user(pid_t pid, const char *comm, uid_t uid, char *err, size_t errlen)
{
	char missing[64] = "";
	struct jw_capset caps;

	if (uid == geteuid() || jw_caps_own(&caps))
		return 0;	/* the reads that follow will say what is wrong */
	jw_caps_for_other_user(&caps, missing, sizeof(missing));
	if (!*missing)
		return 0;
	snprintf(err, errlen, "pid %d (%s): another user's process (uid %u) needs CAP_SYS_PTRACE "
		 "and CAP_DAC_READ_SEARCH; missing: %s", pid, comm, (unsigned int)uid, missing);
	return -EPERM;
}

static bool thread_exists(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return access(path, F_OK) == 0;
}

/* Finds the thread of @pid named @name; it must be the only one so named. */
static int find_thread_by_name(pid_t pid, const char *name, pid_t *tid, char *err, size_t errlen)
{
	char path[64], comm[64];
	struct dirent *de;
	int found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(err, errlen, "cannot list threads of pid %d: %s", pid, strerror(errno));
		return -errno;
	}
	while ((de = readdir(dir))) {
		char cpath[320];
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/comm", pid, de->d_name);
		n = read_small(cpath, comm, sizeof(comm));
		if (n <= 0)
			continue;
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		if (strcmp(comm, name) == 0) {
			*tid = atoi(de->d_name);
			found++;
		}
	}
	closedir(dir);
	if (found == 1)
		return 0;
	if (found == 0)
		snprintf(err, errlen, "--thread %s: no thread of pid %d has that name", name, pid);
	else
		snprintf(err, errlen, "--thread %s: %d threads of pid %d have that name; give a tid",
			 name, found, pid);
	return -ESRCH;
}

static int pick_thread(struct jw_target *t, const char *thread, char *err, size_t errlen)
{
	char *end;
	long tid;

	t->tid = t->pid;
	if (!thread)
		return 0;
	tid = strtol(thread, &end, 10);
	if (*thread && !*end) {
		if (tid <= 0 || !thread_exists(t->pid, tid)) {
			snprintf(err, errlen, "--thread %s: no such thread in pid %d", thread, t->pid);
			return -ESRCH;
		}
		t->tid = tid;
		return 0;
	}
	return find_thread_by_name(t->pid, thread, &t->tid, err, errlen);
}

int jw_target_open(pid_t pid, const char *thread, struct jw_target *t, char *err, size_t errlen)
{
	char path[64], buf[4096];
	pid_t tgid = 0;
	ssize_t n;
	int ret, status;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0) {
		snprintf(err, errlen, "pid %d: %s", pid,
			 n == -ENOENT ? "no such process" : strerror(-n));
		return n == -ENOENT ? -ESRCH : n;
	}
	if (jw_proc_stat_parse(buf, t->comm, sizeof(t->comm), &t->start_jiffies)) {
		snprintf(err, errlen, "pid %d: cannot parse %s", pid, path);
		return -EINVAL;
	}
	/* Read once; a failure is said after the executable's, as a vanished process's is. */
	status = read_status(pid, &t->uid, &tgid);
	ret = status ? 0 : other_user(pid, t->comm, t->uid, err, errlen);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n < 0) {
		ret = -errno;
		/* A zombie has lost its executable already; kernel threads never had one. */
		if (zombie(buf))
			snprintf(err, errlen, "pid %d (%s): has exited", pid, t->comm);
		else if (ret == -EACCES || ret == -EPERM)
			snprintf(err, errlen, "pid %d (%s): cannot read its executable: %s (a process "
				 "that is not dumpable needs CAP_SYS_PTRACE)", pid, t->comm,
				 strerror(-ret));
		else
			snprintf(err, errlen, "pid %d (%s): no executable to watch (a kernel "
				 "thread?): %s", pid, t->comm, strerror(-ret));
		return ret == -ENOENT ? -ESRCH : ret;
	}
	t->exe[n] = '\0';
	if (status) {
		snprintf(err, errlen, "pid %d: cannot read /proc/%d/status: %s", pid, pid,
			 strerror(-status));
		return status;
	}
	/* /proc/TID exists for every thread: a thread's id is not its process's. */
	if (tgid != pid) {
		snprintf(err, errlen, "%d is a thread of process %d: give -p %d --thread %d", pid,
			 tgid, tgid, pid);
		return -ESRCH;
	}
	return pick_thread(t, thread, err, errlen);
}

bool jw_target_alive(const struct jw_target *t)
{
	char path[64], buf[4096], comm[64];
	uint64_t start;

	snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	if (jw_proc_stat_parse(buf, comm, sizeof(comm), &start) || start != t->start_jiffies)
		return false;
	return !zombie(buf);
}

bool jw_target_thread_alive(const struct jw_target *t)
{
	char path[64], buf[4096];

	if (t->tid == t->pid)
		return jw_target_alive(t);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", t->pid, t->tid);
	return read_small(path, buf, sizeof(buf)) >= 0 && !zombie(buf);
}

#define DELETED_SUFFIX " (deleted)"

/* Whether the mapped file @path is what @name designates (see the header). */
static bool mapping_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	if (strcmp(base, name) == 0)
		return true;
	/* "libpython3.*": any name that begins so */
	if (n && name[n - 1] == '*')
		return strncmp(base, name, n - 1) == 0;
	return strncmp(base, name, n) == 0 && base[n] == '.';
}

/* Whether @path is the file of inode @ino (the maps line's; 0: not said, taken as it). */
static bool is_inode(const char *path, unsigned long ino)
{
	struct stat st;

	return !stat(path, &st) && (!ino || st.st_ino == ino);
}

/*
 * A path that opens the file a maps line names: the path itself when it is that file here;
 * else, the process being in another root (a container, or jankwatch in a chroot of its own),
 * the path under its root (/proc/PID/root/...); else, for a file deleted or replaced since it
 * was mapped, the mapping's /proc/PID/map_files entry.
 */
static void mapped_path(pid_t pid, const char *line, char *file, char *path, size_t len)
{
	size_t n = strlen(file), sl = strlen(DELETED_SUFFIX);
	int range = strcspn(line, " ");
	unsigned long ino = 0;

	if (sscanf(line, "%*s %*s %*s %*s %lu", &ino) != 1)
		ino = 0;
	if (n > sl && strcmp(file + n - sl, DELETED_SUFFIX) == 0) {
		snprintf(path, len, "/proc/%d/map_files/%.*s", pid, range, line);
		return;
	}
	snprintf(path, len, "%s", file);
	if (is_inode(path, ino))
		return;
	snprintf(path, len, "/proc/%d/root%s", pid, file);
	if (is_inode(path, ino))
		return;
	snprintf(path, len, "/proc/%d/map_files/%.*s", pid, range, line);
}

int jw_maps_line_match(pid_t pid, const char *line, const char *name, char *path, size_t len)
{
	char copy[PATH_MAX + 256], name_only[PATH_MAX], *file;
	size_t n;

	snprintf(copy, sizeof(copy), "%s", line);
	file = strchr(copy, '/');
	if (!file)
		return -ENOENT;
	file[strcspn(file, "\n")] = '\0';
	/* Match on the name without the " (deleted)" the kernel appends. */
	n = strlen(file);
	if (n > strlen(DELETED_SUFFIX) &&
	    strcmp(file + n - strlen(DELETED_SUFFIX), DELETED_SUFFIX) == 0)
		n -= strlen(DELETED_SUFFIX);
	snprintf(name_only, sizeof(name_only), "%.*s", (int)n, file);
	if (!mapping_matches(name_only, name))
		return -ENOENT;
	mapped_path(pid, copy, file, path, len);
	return 0;
}

int jw_target_find_mapping(pid_t pid, const char *name, char *path, size_t len)
{
	char mpath[64], line[PATH_MAX + 256];
	int ret = -ENOENT;
	FILE *f;

	if (name[0] == '/') {
		snprintf(path, len, "%s", name);
		return 0;
	}
	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f))
		ret = jw_maps_line_match(pid, line, name, path, len);
	fclose(f);
	return ret;
}

int jw_target_each_code_file(pid_t pid, bool (*fn)(const char *path, void *ctx), void *ctx)
{
	char mpath[64], line[PATH_MAX + 256], path[PATH_MAX], last[PATH_MAX] = "", perms[8];
	FILE *f;

	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*x-%*x %7s", perms) != 1 || perms[2] != 'x' ||
		    jw_maps_line_match(pid, line, "*", path, sizeof(path)) || !strcmp(path, last))
			continue;
		snprintf(last, sizeof(last), "%s", path);
		if (fn(path, ctx))
			break;
	}
	fclose(f);
	return 0;
}

/* An executable mapping of a file: its addresses and the file offset mapped at the first. */
struct code_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
};

/*
 * Calls @visit with each executable mapping of @file (told by its device and inode, so that a
 * /proc/PID/map_files path works too) in process @pid, until it returns true. 0, or -errno.
 */
static int each_code_mapping(pid_t pid, const char *file,
			     bool (*visit)(const struct code_mapping *m, void *ctx), void *ctx)
{
	char mpath[64], line[PATH_MAX + 256], perms[8];
	unsigned long long start, end, pgoff, inode;
	unsigned int major, minor;
	struct code_mapping m;
	struct stat st;
	FILE *f;

	if (stat(file, &st))
		return -errno;
	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &pgoff, &major,
			   &minor, &inode) != 7 || perms[2] != 'x' ||
		    inode != (unsigned long long)st.st_ino || makedev(major, minor) != st.st_dev)
			continue;
		m = (struct code_mapping){ .start = start, .end = end, .pgoff = pgoff };
		if (visit(&m, ctx))
			break;
	}
	fclose(f);
	return 0;
}

struct code_range {
	uint64_t lo;
	uint64_t hi;
};

static bool widen_range(const struct code_mapping *m, void *ctx)
{
	struct code_range *r = ctx;

	r->lo = m->start < r->lo ? m->start : r->lo;
	r->hi = m->end > r->hi ? m->end : r->hi;
	return false;
}

int jw_target_code_range(pid_t pid, const char *file, uint64_t *lo, uint64_t *hi)
{
	struct code_range r = { .lo = UINT64_MAX, .hi = 0 };
	int err = each_code_mapping(pid, file, widen_range, &r);

	if (err)
		return err;
	*lo = r.lo;
	*hi = r.hi;
	return r.hi ? 0 : -ENOENT;
}

struct file_offset {
	uint64_t offset;
	uint64_t vaddr;
	bool found;
};

static bool find_offset(const struct code_mapping *m, void *ctx)
{
	struct file_offset *o = ctx;

	if (o->offset < m->pgoff || o->offset - m->pgoff >= m->end - m->start)
		return false;
	o->vaddr = m->start + (o->offset - m->pgoff);
	o->found = true;
	return true;
}

int jw_target_file_vaddr(pid_t pid, const char *file, uint64_t offset, uint64_t *vaddr)
{
	struct file_offset o = { .offset = offset };
	int err = each_code_mapping(pid, file, find_offset, &o);

	if (err)
		return err;
	if (!o.found)
		return -ENOENT;
	*vaddr = o.vaddr;
	return 0;
}

bool jw_syscall_is_wait(const char *content)
{
	char *end;
	long nr;
	size_t i;

	if (!isdigit((unsigned char)content[0]))
		return false;	/* "running", or "-1 ..." outside a system call */
	nr = strtol(content, &end, 10);
	if (*end != ' ' && *end != '\n' && *end)
		return false;
	for (i = 0; i < jw_arch_n_wait_syscalls; i++)
		if (nr == jw_arch_wait_syscalls[i])
			return true;
	return false;
}

int jw_target_in_wait(pid_t pid, const char *thread)
{
	char path[96], buf[256], err[256];
	pid_t tid = pid;
	ssize_t n;

	/* A named thread; a tid names a thread of the process given, not of its children. */
	if (thread && !isdigit((unsigned char)thread[0]) &&
	    find_thread_by_name(pid, thread, &tid, err, sizeof(err)))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return jw_syscall_is_wait(buf);
}

int jw_target_names(pid_t pid, char *comm, size_t commlen, char *argv0, size_t argv0len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = read_small(path, comm, commlen);
	if (n < 0)
		return n;
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	/* Arguments are NUL-separated: the buffer's first string is the first, cut. */
	n = read_small(path, argv0, argv0len);
	return n < 0 ? n : 0;
}

uint64_t jw_target_start_boot_ns(pid_t pid)
{
	char path[64], buf[4096], comm[64];
	long ticks = sysconf(_SC_CLK_TCK);
	uint64_t start;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) < 0 ||
	    jw_proc_stat_parse(buf, comm, sizeof(comm), &start))
		return 0;
	return start * (1000000000ULL / (ticks > 0 ? ticks : 100));
}

int jw_target_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

bool jw_target_is_code(pid_t pid, uint64_t addr)
{
	unsigned long long start, end;
	char path[64], line[PATH_MAX + 256], perms[8];
	bool code = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!code && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) == 3 && addr >= start &&
		    addr < end)
			code = perms[2] == 'x';
	fclose(f);
	return code;
}

int jw_target_read_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0, n;
	int err;

	if (!addr || len < 2)
		return -EFAULT;
	while (got < len - 1) {
		n = 4096 - ((addr + got) & 4095);
		if (n > len - 1 - got)
			n = len - 1 - got;
		err = jw_target_read(pid, addr + got, buf + got, n);
		if (err)
			return err;
		buf[got + n] = '\0';
		if (memchr(buf + got, '\0', n))
			return 0;
		got += n;
	}
	return -ENAMETOOLONG;
}

struct same_file {
	struct stat want;
	bool found;
};

static bool is_same_file(const char *path, void *ctx)
{
	struct same_file *sf = ctx;
	struct stat st;

	sf->found = !stat(path, &st) && st.st_dev == sf->want.st_dev &&
		    st.st_ino == sf->want.st_ino;
	return sf->found;
}

bool jw_target_maps_file(pid_t pid, const char *path)
{
	struct same_file sf = { .found = false };

	if (stat(path, &sf.want))
		return false;
	jw_target_each_code_file(pid, is_same_file, &sf);
	return sf.found;
}
