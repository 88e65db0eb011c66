/* SPDX-License-Identifier: GPL-2.0-only */
/* A process from /proc: its executable, start time, uid, name, and the thread to watch. */
#ifndef JW_TARGET_H
#define JW_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jw_target {
	pid_t pid;
	pid_t tid;			/* the watched thread */
	uid_t uid;			/* real uid */
	uint64_t start_jiffies;		/* field 22 of /proc/PID/stat: start since boot, ticks */
	char comm[64];			/* the process's name */
	char exe[PATH_MAX];		/* the executable's path as the process sees it */
	char name[256];			/* --name: the name it was watched by, or "" */
};

/*
 * Reads process @pid from /proc and picks the thread to watch: the main thread, or @thread (a
 * tid of the process or a thread name) when not NULL. Returns 0, or -errno / -EINVAL with a
 * one-line message in @err.
 */
int jw_target_open(pid_t pid, const char *thread, struct jw_target *t, char *err, size_t errlen);

/* Whether @t is still the same process (alive, and its start time unchanged: no pid reuse). */
bool jw_target_alive(const struct jw_target *t);

/* Whether the watched thread (the process's main thread: the process) still runs. */
bool jw_target_thread_alive(const struct jw_target *t);

/*
 * Parses the content of /proc/PID/stat: the name (between the first '(' and the last ')') and
 * field 22, the start time. Returns 0 or -EINVAL.
 */
int jw_proc_stat_parse(const char *stat, char *comm, size_t commlen, uint64_t *start_jiffies);

/*
 * One line of /proc/PID/maps: whether it maps file @name (as jw_target_find_mapping() matches
 * it), and then the path to open it by (the file, or /proc/PID/map_files/RANGE when the file
 * was deleted or replaced) in @path. 0, or -ENOENT.
 */
int jw_maps_line_match(pid_t pid, const char *line, const char *name, char *path, size_t len);

/*
 * Finds the file mapped by process @pid that @name designates: an absolute path as is, else a
 * mapped file whose base name is @name or starts with "@name." (libglib-2.0.so -> .so.0), or,
 * when @name ends in "*", starts with what comes before it (libpython3.*).
 * Returns 0 with the path in @path, -ENOENT when none matches.
 */
int jw_target_find_mapping(pid_t pid, const char *name, char *path, size_t len);

/*
 * Calls @fn with the path (as jw_maps_line_match() gives it) of each file process @pid maps
 * executable, once per run of its mappings, until it returns true. 0, or -errno.
 */
int jw_target_each_code_file(pid_t pid, bool (*fn)(const char *path, void *ctx), void *ctx);

/* Whether process @pid maps file @path executable (the same file: device and inode). */
bool jw_target_maps_file(pid_t pid, const char *path);

/*
 * The addresses process @pid runs @file's code at: from the start of its lowest executable
 * mapping of the file to the end of its highest (the file told by its device and inode, so that
 * a /proc/PID/map_files path works too). 0, or -ENOENT when it maps none, or -errno.
 */
int jw_target_code_range(pid_t pid, const char *file, uint64_t *lo, uint64_t *hi);

/*
 * The address at which process @pid runs the code at file offset @offset of @file (told by its
 * device and inode): in the executable mapping of the file that covers the offset. 0, or
 * -ENOENT when none does, or -errno.
 */
int jw_target_file_vaddr(pid_t pid, const char *file, uint64_t offset, uint64_t *vaddr);

/*
 * Whether the content of /proc/PID/task/TID/syscall says the thread is blocked in a wait system
 * call an event loop makes (epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll, select,
 * pselect6): "NR ARGS... SP PC" with NR one of them; "running" or any other call is not.
 */
bool jw_syscall_is_wait(const char *content);

/*
 * Whether process @pid runs a loop: its main thread (or its thread named @thread, when not
 * NULL) is blocked in a wait system call now. 1 or 0, or -errno when it cannot be read (the
 * process is gone, or /proc/PID/syscall is not there or not allowed).
 */
int jw_target_in_wait(pid_t pid, const char *thread);

/* Reads @len bytes at @addr of process @pid's memory into @buf: 0, -EFAULT (short), or -errno. */
int jw_target_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * The NUL-terminated string at @addr of process @pid into @buf (@len): read up to the end of its
 * page at most, so that one near the end of a mapping reads. 0, or -errno (-EFAULT unreadable,
 * -ENAMETOOLONG longer than @len - 1).
 */
int jw_target_read_string(pid_t pid, uint64_t addr, char *buf, size_t len);

/* Whether @addr is in an executable mapping of process @pid (a function, not data). */
bool jw_target_is_code(pid_t pid, uint64_t addr);

/*
 * Process @pid's names: its comm (@comm, at least 17 bytes: its line) and its first argument in
 * /proc/PID/cmdline (@argv0; "" for a kernel thread or a zombie), each cut to its buffer.
 * 0 or -errno (gone).
 */
int jw_target_names(pid_t pid, char *comm, size_t commlen, char *argv0, size_t argv0len);

/* Process @pid's start (field 22 of /proc/PID/stat) in ns of CLOCK_BOOTTIME, or 0. */
uint64_t jw_target_start_boot_ns(pid_t pid);

#endif
