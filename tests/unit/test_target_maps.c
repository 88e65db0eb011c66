// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of target.c: what a process maps, and whether its thread sits in a wait. */
#include <dlfcn.h>

#include "target_fixture.h"

#define MAPPED_TEXT "jankwatch mapped file\n"

/* /proc/PID/syscall's content: a wait call's number first, or not. */
static void test_syscall_is_wait(void **state)
{
	(void)state;
#if defined(__x86_64__)
	assert_true(jw_syscall_is_wait("232 0x4 0x7ffd 0x400 0x64 0x0 0x0 0x7ffd0 0x7f12\n"));
	assert_true(jw_syscall_is_wait("7 0x1 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x7ff 0x7f\n"));
	assert_true(jw_syscall_is_wait("281 0x4"));
	assert_false(jw_syscall_is_wait("0 0x3 0x7ffd 0x1000 0x0 0x0 0x0 0x7ffd0 0x7f12\n"));
	assert_false(jw_syscall_is_wait("61 0xffffffffffffffff 0x7ffd 0x0 0x0 0x0 0x0 0x7f 0x7f\n"));
	assert_false(jw_syscall_is_wait("2320 0x4\n"));
#elif defined(__aarch64__)
	assert_true(jw_syscall_is_wait("22 0x4 0xffff 0x400 0x64 0x0 0x0 0xffff0 0xffff1\n"));
	assert_false(jw_syscall_is_wait("63 0x3 0xffff 0x1000 0x0 0x0 0x0 0xffff0 0xffff1\n"));
#endif
	assert_false(jw_syscall_is_wait("running\n"));
	assert_false(jw_syscall_is_wait("-1 0x7ffd0 0x7f12\n"));
	assert_false(jw_syscall_is_wait(""));
	assert_false(jw_syscall_is_wait("232x"));
}

/* Forks a child that blocks in poll() (@wait) or in read(), once it has said it is there. */
static pid_t blocked_child(bool wait, int *release)
{
	int go[2], ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pollfd pfd = { .fd = go[0], .events = POLLIN };

		close(go[1]);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		if (wait)
			poll(&pfd, 1, -1);
		else if (read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*release = go[1];
	return pid;
}

/* A process blocked in poll() runs a loop; one blocked in read() does not; a missing one: error. */
static void test_in_wait(void **state)
{
	struct fixture *fx = *state;
	int release, ret = 0, tries;
	bool wait;

	for (wait = false; ; wait = true) {
		fx->child = blocked_child(wait, &release);
		/* Until it sleeps in its call: then the answer must be what it waits in. */
		for (tries = 0; tries < 200; tries++) {
			ret = jw_target_in_wait(fx->child, NULL);
			if (ret == (int)wait)
				break;
			usleep(10000);
		}
		assert_int_equal(ret, wait);
		/* Still so, a moment later: nothing else made it true. */
		usleep(50000);
		assert_int_equal(jw_target_in_wait(fx->child, NULL), wait);
		assert_true(jw_target_start_boot_ns(fx->child) > 0);
		close(release);
		assert_int_equal(waitpid(fx->child, NULL, 0), fx->child);
		fx->child = 0;
		if (wait)
			break;
	}
	assert_int_equal(jw_target_in_wait(missing_pid(), NULL), -ENOENT);
	assert_int_equal(jw_target_start_boot_ns(missing_pid()), 0);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_find_mapping_libc(void **state)
{
	char path[PATH_MAX], again[PATH_MAX];

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6", path, sizeof(path)), 0);
	assert_true(path[0] == '/');
	assert_true(ends_with(path, "/libc.so.6"));
	assert_int_equal(access(path, R_OK), 0);

	/* A prefix followed by '.' designates the same file. */
	assert_int_equal(jw_target_find_mapping(getpid(), "libc", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	/* A trailing '*' asks for any name that begins so. */
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.s*", again, sizeof(again)), 0);
	assert_string_equal(again, path);
	assert_int_equal(jw_target_find_mapping(getpid(), "libcx*", again, sizeof(again)),
			 -ENOENT);
}

struct code_files {
	char seen[64][PATH_MAX];
	size_t n;
	size_t stop_at;		/* stop after this many; 0: never */
};

static bool keep_file(const char *path, void *ctx)
{
	struct code_files *cf = ctx;

	if (cf->n < 64)
		snprintf(cf->seen[cf->n], PATH_MAX, "%s", path);
	cf->n++;
	return cf->stop_at && cf->n == cf->stop_at;
}

/* Each file this process runs code of, once: the executable and the C library among them. */
static void test_each_code_file(void **state)
{
	struct code_files *cf = calloc(1, sizeof(*cf));
	char exe[PATH_MAX], libc[PATH_MAX];
	bool has_exe = false, has_libc = false;
	size_t i, j;
	ssize_t n;

	(void)state;
	assert_non_null(cf);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6", libc, sizeof(libc)), 0);
	assert_int_equal(jw_target_each_code_file(getpid(), keep_file, cf), 0);
	assert_true(cf->n >= 2 && cf->n <= 64);
	for (i = 0; i < cf->n; i++) {
		has_exe |= !strcmp(cf->seen[i], exe);
		has_libc |= !strcmp(cf->seen[i], libc);
		for (j = 0; j < i; j++)
			assert_string_not_equal(cf->seen[i], cf->seen[j]);
	}
	assert_true(has_exe && has_libc);
	/* The visit ends when it says so. */
	memset(cf, 0, sizeof(*cf));
	cf->stop_at = 1;
	assert_int_equal(jw_target_each_code_file(getpid(), keep_file, cf), 0);
	assert_int_equal(cf->n, 1);
	assert_int_equal(jw_target_each_code_file(999999999, keep_file, cf), -ENOENT);
	free(cf);
}

static void test_find_mapping_exe(void **state)
{
	char exe[PATH_MAX], path[PATH_MAX];
	const char *base;
	ssize_t n;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	base = strrchr(exe, '/') + 1;
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_string_equal(path, exe);
}

/* Where this process runs libc's code and its own: the functions of each, and nothing else. */
static void test_code_range(void **state)
{
	char libc[PATH_MAX];
	uint64_t lo, hi, exe_lo, exe_hi;

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6", libc, sizeof(libc)), 0);
	assert_int_equal(jw_target_code_range(getpid(), libc, &lo, &hi), 0);
	assert_true((uintptr_t)&getpid >= lo && (uintptr_t)&getpid < hi);
	assert_int_equal(jw_target_code_range(getpid(), "/proc/self/exe", &exe_lo, &exe_hi), 0);
	assert_true((uintptr_t)&test_code_range >= exe_lo && (uintptr_t)&test_code_range < exe_hi);
	assert_false((uintptr_t)&getpid >= exe_lo && (uintptr_t)&getpid < exe_hi);
	/* A file it does not map as code, and one that is not there. */
	assert_int_equal(jw_target_code_range(getpid(), "/etc/passwd", &lo, &hi), -ENOENT);
	assert_int_equal(jw_target_code_range(getpid(), "/nonexistent/lib.so", &lo, &hi), -ENOENT);
}

/*
 * The address a file offset runs at: libc's getpid from its offset in the file (its code
 * segment's file offsets are its addresses, as the ELF loader's dladdr base gives them).
 */
static void test_file_vaddr(void **state)
{
	char libc[PATH_MAX];
	uint64_t vaddr = 0;
	Dl_info info;

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6", libc, sizeof(libc)), 0);
	assert_true(dladdr((void *)&getpid, &info) != 0);
	assert_int_equal(jw_target_file_vaddr(getpid(), libc,
					      (uintptr_t)&getpid - (uintptr_t)info.dli_fbase,
					      &vaddr), 0);
	assert_int_equal(vaddr, (uintptr_t)&getpid);
	/* Past the end of its code, in a file not mapped as code, a file not there. */
	assert_int_equal(jw_target_file_vaddr(getpid(), libc, 1ULL << 40, &vaddr), -ENOENT);
	assert_int_equal(jw_target_file_vaddr(getpid(), "/etc/passwd", 0, &vaddr), -ENOENT);
	assert_int_equal(jw_target_file_vaddr(getpid(), "/nonexistent/lib.so", 0, &vaddr), -ENOENT);
}

static void test_find_mapping_absolute(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(jw_target_find_mapping(getpid(), "/opt/not/mapped/libx.so.1", path,
						sizeof(path)), 0);
	assert_string_equal(path, "/opt/not/mapped/libx.so.1");
}

static void test_find_mapping_missing(void **state)
{
	char path[PATH_MAX];

	(void)state;
	strcpy(path, "untouched");
	assert_int_equal(jw_target_find_mapping(getpid(), "libjw-not-mapped.so", path,
						sizeof(path)), -ENOENT);
	/* Neither a middle part nor a prefix without a '.' after it matches. */
	assert_int_equal(jw_target_find_mapping(getpid(), "ibc.so.6", path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(jw_target_find_mapping(getpid(), "libc.so.6.1", path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(jw_target_find_mapping(getpid(), "lib", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");
	assert_int_equal(jw_target_find_mapping(missing_pid(), "libc.so.6", path, sizeof(path)),
			 -ENOENT);
}

/*
 * Creates /tmp/libjwmap-XXXXXX.so.1 and maps it into this process; returns its base name.
 * The file is the fixture's to remove, the mapping its to undo.
 */
static const char *map_temp_lib(struct fixture *fx)
{
	int fd;

	snprintf(fx->mapped, sizeof(fx->mapped), "/tmp/libjwmap-XXXXXX.so.1");
	fd = mkstemps(fx->mapped, strlen(".so.1"));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, MAPPED_TEXT, strlen(MAPPED_TEXT)), strlen(MAPPED_TEXT));
	fx->map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(fx->map != MAP_FAILED);
	return strrchr(fx->mapped, '/') + 1;
}

/* Any mapped file is found, by its base name or the part before ".so". */
static void test_find_mapping_mapped_file(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], prefix[64];
	const char *base;

	base = map_temp_lib(fx);
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_string_equal(path, fx->mapped);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(base) - strlen(".so.1")), base);
	assert_int_equal(jw_target_find_mapping(getpid(), prefix, path, sizeof(path)), 0);
	assert_string_equal(path, fx->mapped);
}

/* Reads the first bytes of @path, which must hold MAPPED_TEXT. */
static void assert_mapped_text(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, MAPPED_TEXT);
}

/*
 * A mapped file deleted (or replaced, as a package upgrade does) since it was mapped: maps
 * shows "<path> (deleted)". Both ways of naming it must agree, and the path given must be one
 * that opens the mapped file (SPEC F6: through /proc/PID/map_files), never "<path> (deleted)".
 */
static void test_find_mapping_deleted_file(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], prefix[64];
	const char *base;

	base = map_temp_lib(fx);
	assert_int_equal(unlink(fx->mapped), 0);
	fx->mapped[0] = '\0';
	assert_int_equal(jw_target_find_mapping(getpid(), base, path, sizeof(path)), 0);
	assert_null(strstr(path, " (deleted)"));
	assert_mapped_text(path);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(base) - strlen(".so.1")), base);
	assert_int_equal(jw_target_find_mapping(getpid(), prefix, path, sizeof(path)), 0);
	assert_null(strstr(path, " (deleted)"));
	assert_mapped_text(path);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_find_mapping_libc),
		T(test_find_mapping_exe),
		T(test_each_code_file),
		T(test_code_range),
		T(test_file_vaddr),
		T(test_find_mapping_absolute),
		T(test_find_mapping_missing),
		T(test_find_mapping_mapped_file),
		T(test_find_mapping_deleted_file),
		T(test_syscall_is_wait),
		T(test_in_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
