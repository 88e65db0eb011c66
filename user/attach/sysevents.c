// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "attach/sysevents.h"

/* bpf/arch/: x86-64's seven; arm64 has the last four only. */
static const char *const wait_syscalls[JW_WAIT_SYSCALLS] = {
	"poll", "select", "epoll_wait", "pselect6", "ppoll", "epoll_pwait", "epoll_pwait2",
};

/* Where the system mounts tracefs, newest first. */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* Directories a mount point of jankwatch's own may be made in (a device has no /tmp). */
static const char *const scratch_dirs[] = { "/run", "/tmp", "/data/local/tmp", "/dev" };

const char *jw_sysevents_name(size_t i)
{
	return i < JW_WAIT_SYSCALLS ? wait_syscalls[i] : NULL;
}

bool jw_sysevents_on_arch(size_t i)
{
	for (size_t k = 0; i < JW_WAIT_SYSCALLS && k < jw_arch_n_wait_syscalls; k++)
		if (!strcmp(jw_arch_wait_syscall_names[k], wait_syscalls[i]))
			return true;
	return false;
}

/* The id in file @events/syscalls/sys_@which_@name/id; -errno when there is none. */
static int read_id(const char *events, const char *which, const char *name)
{
	char path[PATH_MAX];
	FILE *f;
	int id, n;

	if ((size_t)snprintf(path, sizeof(path), "%s/syscalls/sys_%s_%s/id", events, which, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%d", &id);
	fclose(f);
	return n == 1 && id > 0 ? id : -EINVAL;
}

int jw_sysevents_read_dir(const char *events, struct jw_sysevents *out)
{
	size_t i;

	out->n = 0;
	for (i = 0; i < JW_WAIT_SYSCALLS; i++) {
		int enter = read_id(events, "enter", wait_syscalls[i]);
		int exit = read_id(events, "exit", wait_syscalls[i]);

		if (enter < 0 || exit < 0)
			continue;	/* not a system call of this architecture, or not traced */
		out->ev[out->n++] = (struct jw_sysevent){ wait_syscalls[i], enter, exit };
	}
	return out->n ? 0 : -ENOENT;
}

/* Whether @dir is a tracefs with events (mounted, not an empty mount point). */
static bool has_events(const char *dir, char *events, size_t len)
{
	struct stat st;

	snprintf(events, len, "%s/events", dir);
	return !stat(events, &st) && S_ISDIR(st.st_mode);
}

/* Mounts a tracefs of its own on a new directory, into @dir; 0 or -errno. */
static int mount_own(char *dir, size_t len)
{
	int err = -ENOENT;
	size_t i;

	for (i = 0; i < sizeof(scratch_dirs) / sizeof(*scratch_dirs); i++) {
		snprintf(dir, len, "%s/jankwatch-tracefs.XXXXXX", scratch_dirs[i]);
		if (!mkdtemp(dir)) {
			err = -errno;
			continue;
		}
		if (!mount("nodev", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
			return 0;
		err = -errno;
		rmdir(dir);
		if (err == -ENODEV || err == -EPERM)
			break;	/* no tracefs in this kernel, or no right to mount: the same anywhere */
	}
	return err;
}

int jw_sysevents_read(struct jw_sysevents *out, char *err, size_t len)
{
	char dir[PATH_MAX], events[PATH_MAX + 16];
	int ret;
	size_t i;

	out->n = 0;
	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(*tracefs_dirs); i++) {
		if (!has_events(tracefs_dirs[i], events, sizeof(events)))
			continue;
		ret = jw_sysevents_read_dir(events, out);
		if (ret)
			snprintf(err, len, "%s has no events of the wait system calls (a kernel "
				 "without CONFIG_FTRACE_SYSCALLS)", events);
		return ret;
	}
	ret = mount_own(dir, sizeof(dir));
	if (ret) {
		snprintf(err, len, "tracefs is not mounted and cannot be: %s", strerror(-ret));
		return ret;
	}
	ret = has_events(dir, events, sizeof(events)) ? jw_sysevents_read_dir(events, out)
						       : -ENOENT;
	if (ret)
		snprintf(err, len, "tracefs has no events of the wait system calls (a kernel "
			 "without CONFIG_FTRACE_SYSCALLS)");
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	return ret;
}
