// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs a command the way jankwatch.service runs jankwatch, for test_service.py (on the machine
 * and in the VMs, whose busybox has no setpriv --reuid): in a mount namespace of its own where
 * every file system is read-only but /proc, /sys, /dev and the directories given (ProtectSystem=
 * strict with ReadWritePaths=), as user UID:GID without supplementary groups (User=), with no
 * capability but CAPS in its bounding, permitted, inheritable, effective and ambient sets
 * (CapabilityBoundingSet= and AmbientCapabilities=), no new privileges (NoNewPrivileges=), umask
 * 027 (UMask=) and an unlimited memory-lock limit (LimitMEMLOCK=infinity) where it may be raised.
 *
 * Usage: jw_service_box UID:GID CAP[,CAP...]|none [--rw DIR]... -- COMMAND [ARGS...]
 * CAP: a capability's number or its name without CAP_, lower case (bpf, perfmon, sys_admin, ...).
 * Exits 125 with one line on stderr when it cannot set the command up; else it is the command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_RW 8
#define FAIL 125

static const char *const cap_names[] = {
	[0] = "chown", [1] = "dac_override", [2] = "dac_read_search", [3] = "fowner", [5] = "kill",
	[6] = "setgid", [7] = "setuid", [8] = "setpcap", [10] = "net_bind_service",
	[12] = "net_admin", [14] = "ipc_lock", [18] = "sys_chroot", [19] = "sys_ptrace",
	[21] = "sys_admin", [24] = "sys_resource", [34] = "syslog", [38] = "perfmon", [39] = "bpf",
	[40] = "checkpoint_restore",
};

static void die(const char *what)
{
	fprintf(stderr, "jw_service_box: %s: %s\n", what, strerror(errno));
	exit(FAIL);
}

static int cap_number(const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);
	size_t i;

	if (end != name && !*end && n >= 0 && n < 64)
		return (int)n;
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (cap_names[i] && !strcmp(cap_names[i], name))
			return (int)i;
	return -1;
}

/* The capabilities of comma-separated list @list ("none": none) as a mask. */
static uint64_t parse_caps(const char *list)
{
	char buf[512], *tok, *save;
	uint64_t mask = 0;
	int n;

	if (!strcmp(list, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		n = cap_number(tok);
		if (n < 0) {
			fprintf(stderr, "jw_service_box: unknown capability %s\n", tok);
			exit(FAIL);
		}
		mask |= 1ULL << n;
	}
	return mask;
}

/* Every mount read-only but the kernel's API file systems, then @rw (n) bound writable. */
static void read_only_system(char **rw, int n)
{
	char line[4096], dev[256], dir[4096], type[64];
	FILE *f;
	int i;

	if (unshare(CLONE_NEWNS))
		die("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("making / private");
	/* Bound first: the remount below leaves them writable, as mounts of their own. */
	for (i = 0; i < n; i++)
		if (mount(rw[i], rw[i], NULL, MS_BIND, NULL))
			die(rw[i]);
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		die("/proc/self/mounts");
	while (fgets(line, sizeof(line), f)) {
		bool writable = false;

		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) != 3)
			continue;
		if (!strcmp(type, "proc") || !strcmp(type, "sysfs") || !strcmp(type, "devtmpfs") ||
		    !strcmp(type, "devpts") || !strcmp(type, "mqueue") || !strcmp(type, "tracefs") ||
		    !strcmp(type, "debugfs") || !strcmp(type, "bpf") || !strncmp(type, "cgroup", 6) ||
		    !strcmp(type, "securityfs") || !strcmp(type, "pstore") || !strcmp(type, "hugetlbfs"))
			continue;
		for (i = 0; i < n; i++)
			writable |= !strcmp(dir, rw[i]);
		if (writable)
			continue;
		/* A mount hidden under another, or gone: its remount fails, and nothing reaches it. */
		if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) &&
		    errno != ENOENT && errno != EINVAL)
			die(dir);
	}
	fclose(f);
}

/* The bounding set cut to @caps: while still root (it takes CAP_SETPCAP). */
static void bound_caps(uint64_t caps)
{
	int c;

	for (c = 0; c < 64; c++) {
		if (caps >> c & 1)
			continue;
		/* Past the kernel's last capability the bound is already empty. */
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			die("PR_CAPBSET_DROP");
	}
}

/* @caps permitted, effective, inheritable and ambient: after the change of user. */
static void set_caps(uint64_t caps)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	int c;

	data[0].effective = data[0].permitted = data[0].inheritable = (uint32_t)caps;
	data[1].effective = data[1].permitted = data[1].inheritable = (uint32_t)(caps >> 32);
	if (syscall(SYS_capset, &hdr, data))
		die("capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		die("PR_CAP_AMBIENT_CLEAR_ALL");
	for (c = 0; c < 64; c++)
		if ((caps >> c & 1) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0))
			die("PR_CAP_AMBIENT_RAISE");
}

int main(int argc, char **argv)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char *rw[MAX_RW];
	unsigned int uid, gid;
	int n_rw = 0, i = 3;
	uint64_t caps;

	if (argc < 5 || sscanf(argv[1], "%u:%u", &uid, &gid) != 2) {
		fprintf(stderr, "usage: jw_service_box UID:GID CAP[,CAP...]|none [--rw DIR]... -- "
			"COMMAND [ARGS...]\n");
		return FAIL;
	}
	caps = parse_caps(argv[2]);
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (strcmp(argv[i], "--rw") || i + 1 >= argc || n_rw == MAX_RW) {
			fprintf(stderr, "jw_service_box: bad argument %s\n", argv[i]);
			return FAIL;
		}
		rw[n_rw++] = argv[++i];
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "jw_service_box: no command after --\n");
		return FAIL;
	}
	/* Where even root may not raise it (no CAP_SYS_RESOURCE: a container), as high as it goes. */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited) &&
	    (getrlimit(RLIMIT_MEMLOCK, &unlimited) ||
	     (unlimited.rlim_cur = unlimited.rlim_max, setrlimit(RLIMIT_MEMLOCK, &unlimited))))
		die("RLIMIT_MEMLOCK");
	read_only_system(rw, n_rw);
	bound_caps(caps);
	/* Keeps the permitted set across the change of user; the rest is set after it. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		die("changing user");
	set_caps(caps);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("PR_SET_NO_NEW_PRIVS");
	umask(027);
	execvp(argv[i + 1], argv + i + 1);
	die(argv[i + 1]);
	return FAIL;
}
