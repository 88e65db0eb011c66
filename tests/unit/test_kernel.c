// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which build of the BPF object a kernel takes, from the facilities it has: the full one with
 * them all, the compatible one (attach cookies where there are) for the kernels devices and LTS
 * servers run, and a refusal naming what is missing where neither loads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "attach/kernel.h"

/* A kernel with every facility of @release's and none of those after. */
static struct jw_kernel_facts kernel(const char *release, int major, int minor)
{
	struct jw_kernel_facts f = { .has = { 0 } };
	int v = major * 100 + minor;

	snprintf(f.release, sizeof(f.release), "%s", release);
	for (int k = 0; k < JW_KF_COUNT; k++) {
		const char *since = jw_kernel_fact_since(k);
		int s = atoi(since) * 100 + atoi(strchr(since, '.') + 1);

		f.has[k] = v >= s;
	}
	return f;
}

/* Today's kernels: the full build, the programs as they always were. */
static void test_full_where_all_there(void **state)
{
	struct jw_kernel_facts f = kernel("6.1.0-28-amd64", 6, 1);
	struct jw_kernel_plan p;
	char err[256] = "";

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.compat);
	assert_true(p.cookies);
	assert_false(p.btf_file);
	assert_string_equal(p.lacks, "");
	f = kernel("5.17.0", 5, 17);
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.compat);
}

/* Debian 11, Android 12 GKI, OpenHarmony: 5.10 takes the compatible build, cookies by address. */
static void test_compat_on_5_10(void **state)
{
	struct jw_kernel_facts f = kernel("5.10.0-32-amd64", 5, 10);
	struct jw_kernel_plan p;
	char err[256] = "";

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_false(p.cookies);
	assert_non_null(strstr(p.lacks, "BPF task storage for tracing programs (5.11)"));
	assert_non_null(strstr(p.lacks, "bpf_get_attach_cookie (5.15)"));
	assert_non_null(strstr(p.lacks, "bpf_loop (5.17)"));
}

/* Ubuntu 22.04, Android 14: 5.15 has attach cookies but no bpf_find_vma, bpf_loop. */
static void test_compat_with_cookies_on_5_15(void **state)
{
	struct jw_kernel_facts f = kernel("5.15.0-91-generic", 5, 15);
	struct jw_kernel_plan p;
	char err[256] = "";

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_true(p.cookies);
	assert_string_equal(p.lacks, "BPF helper bpf_find_vma (5.17), BPF helper bpf_loop (5.17)");
}

/* One facility missing on a new kernel is enough for the compatible build; unknown is there. */
static void test_each_fallback_chosen(void **state)
{
	(void)state;
	for (int k = 0; k < JW_KF_COUNT; k++) {
		struct jw_kernel_facts f = kernel("6.12.0", 6, 12);
		struct jw_kernel_plan p;
		char err[256];

		if (k == JW_KF_RINGBUF || k == JW_KF_BTF || k == JW_KF_RUN_CTX_COOKIE ||
		    k == JW_KF_UPROBE_SESSION || k == JW_KF_SYSCALL_EVENTS || k == JW_KF_FEXIT)
			continue;
		f.has[k] = 0;
		assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
		assert_true(p.compat);
		assert_int_equal(p.cookies, k != JW_KF_ATTACH_COOKIE);
		assert_non_null(strstr(p.lacks, jw_kernel_fact_name(k)));
		f.has[k] = -EPERM;
		assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
		assert_false(p.compat);
	}
}

/*
 * The system calls' own tracepoints: either build hooks them where the kernel has them or could
 * not tell (tracefs then says); a kernel without them (JW_KERNEL_HIDE=syscall_events too) keeps
 * raw_syscalls, and lacks nothing either build needs.
 */
static void test_syscall_events(void **state)
{
	struct jw_kernel_facts f = kernel("6.12.0", 6, 12);
	struct jw_kernel_plan p;
	char err[256];

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.syscall_events);
	f.has[JW_KF_SYSCALL_EVENTS] = -ENOENT;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.syscall_events);
	f.has[JW_KF_SYSCALL_EVENTS] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.syscall_events);
	assert_false(p.compat);
	assert_string_equal(p.lacks, "");
	f.has[JW_KF_LOOP] = 0;
	f.has[JW_KF_SYSCALL_EVENTS] = 1;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_true(p.syscall_events);
}

/*
 * fexit on the wait system calls: in either build (5.10's, the compatible one, has trampolines
 * on x86-64), where one loaded, against the kernel's own BTF; not where the load was refused or
 * could not be tried, nor with a BTF file (a kernel without BTF of its own has no function to
 * attach one to); never needed.
 */
static void test_fexit(void **state)
{
	struct jw_kernel_facts f = kernel("6.12.0", 6, 12);
	struct jw_kernel_plan p;
	char err[256];

	(void)state;
	f.has[JW_KF_FEXIT] = 1;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.fexit);
	assert_int_equal(jw_kernel_plan_for(&f, true, &p, err, sizeof(err)), 0);
	assert_false(p.fexit);
	f.has[JW_KF_LOOP] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_true(p.fexit);
	assert_int_equal(jw_kernel_plan_for(&f, true, &p, err, sizeof(err)), 0);
	assert_false(p.fexit);
	f.has[JW_KF_LOOP] = 1;
	f.has[JW_KF_FEXIT] = -EPERM;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.fexit);
	f.has[JW_KF_FEXIT] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.fexit);
	assert_false(p.compat);
	assert_string_equal(p.lacks, "");
}

/*
 * Uprobe sessions (6.13): a dispatch's entry and return as one, in the full build with cookies
 * alone; a kernel without them, or one that could not tell, keeps the pair; neither build needs
 * them.
 */
static void test_uprobe_session(void **state)
{
	struct jw_kernel_facts f = kernel("6.13.0", 6, 13);
	struct jw_kernel_plan p;
	char err[256];

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.compat);
	assert_true(p.session);
	f.has[JW_KF_UPROBE_SESSION] = -EPERM;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.session);
	f.has[JW_KF_UPROBE_SESSION] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.compat);
	assert_false(p.session);
	assert_string_equal(p.lacks, "");
	f = kernel("6.13.0", 6, 13);
	f.has[JW_KF_LOOP] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_false(p.session);
	f = kernel("6.12.0", 6, 12);
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.session);
}

/*
 * The cookie from the probe's run context (bpf_rdonly_cast, 6.2): only in the full build, and
 * only where the kernel is known to have it; else bpf_get_attach_cookie().
 */
static void test_run_ctx_cookie(void **state)
{
	struct jw_kernel_facts f = kernel("6.2.0", 6, 2);
	struct jw_kernel_plan p;
	char err[256];

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.run_ctx_cookie);
	f.has[JW_KF_RUN_CTX_COOKIE] = -EPERM;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.run_ctx_cookie);
	assert_false(p.compat);
	f = kernel("6.1.0-28-amd64", 6, 1);
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_false(p.compat);
	assert_false(p.run_ctx_cookie);
	f = kernel("6.13.0", 6, 13);
	f.has[JW_KF_FIND_VMA] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_false(p.run_ctx_cookie);
}

/* No BTF of its own: the compatible build with a BTF file, else a refusal saying how. */
static void test_no_btf(void **state)
{
	struct jw_kernel_facts f = kernel("5.10.205-android12-9", 5, 10);
	struct jw_kernel_plan p;
	char err[256] = "";

	(void)state;
	f.has[JW_KF_BTF] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, false, &p, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "this kernel (5.10.205-android12-9) has no BTF of its own "
			    "(CONFIG_DEBUG_INFO_BTF): give jankwatch one with --btf FILE "
			    "(scripts/make-btf.sh makes it)");
	assert_int_equal(jw_kernel_plan_for(&f, true, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
	assert_true(p.btf_file);
	/* A new kernel without BTF: the full build needs the kernel's own (kfuncs, tp_btf). */
	f = kernel("6.6.0", 6, 6);
	f.has[JW_KF_BTF] = 0;
	assert_int_equal(jw_kernel_plan_for(&f, true, &p, err, sizeof(err)), 0);
	assert_true(p.compat);
}

/* Before the ring buffer (5.8) neither build loads: refused, naming it and the release. */
static void test_refused_before_5_8(void **state)
{
	struct jw_kernel_facts f = kernel("5.4.0-150-generic", 5, 4);
	struct jw_kernel_plan p;
	char err[256];

	(void)state;
	assert_int_equal(jw_kernel_plan_for(&f, true, &p, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "this kernel (5.4.0-150-generic) lacks BPF ring buffer maps, "
			    "which jankwatch needs: Linux 5.8 or newer has it");
}

/* JW_KERNEL_HIDE: the tests' way to the compatible build on a kernel that has everything. */
static void test_hide(void **state)
{
	struct jw_kernel_facts f;
	char err[256] = "";

	(void)state;
	assert_int_equal(jw_kernel_probe(&f, "attach_cookie,loop", err, sizeof(err)), 0);
	assert_int_equal(f.has[JW_KF_ATTACH_COOKIE], 0);
	assert_int_equal(f.has[JW_KF_LOOP], 0);
	assert_int_equal(jw_kernel_probe(&f, "loop,nonsense", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "JW_KERNEL_HIDE: no kernel facility 'nonsense'");
	for (int k = 0; k < JW_KF_COUNT; k++)
		assert_int_equal(jw_kernel_probe(&f, jw_kernel_fact_key(k), err, sizeof(err)), 0);
}

/* THREAD_SIZE: 16 KiB, doubled by KASAN; on arm64 a 64 KiB page's. */
static void test_thread_size(void **state)
{
	(void)state;
	assert_int_equal(jw_arch_thread_size(4096, false), 16384);
	assert_int_equal(jw_arch_thread_size(4096, true), 32768);
#if defined(__aarch64__)
	assert_int_equal(jw_arch_thread_size(65536, false), 65536);
#else
	assert_int_equal(jw_arch_thread_size(65536, false), 16384);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_where_all_there),
		cmocka_unit_test(test_compat_on_5_10),
		cmocka_unit_test(test_compat_with_cookies_on_5_15),
		cmocka_unit_test(test_each_fallback_chosen),
		cmocka_unit_test(test_uprobe_session),
		cmocka_unit_test(test_syscall_events),
		cmocka_unit_test(test_fexit),
		cmocka_unit_test(test_run_ctx_cookie),
		cmocka_unit_test(test_no_btf),
		cmocka_unit_test(test_refused_before_5_8),
		cmocka_unit_test(test_hide),
		cmocka_unit_test(test_thread_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
