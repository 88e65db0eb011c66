// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the kallsyms reader, on fake kallsyms files. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stacks/ksyms.h"

#define MANY_SYMS 200000
#define MANY_BASE 0xffffffff90000000ULL

struct fixture {
	char path[64];		/* the fake kallsyms, removed at teardown when set */
	struct jw_ksyms *ks;
	struct jw_frame fr;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	int fd;

	if (!fx)
		return -1;
	snprintf(fx->path, sizeof(fx->path), "/tmp/jw-kallsyms-XXXXXX");
	fd = mkstemp(fx->path);
	if (fd < 0) {
		free(fx);
		return -1;
	}
	close(fd);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_ksyms__free(fx->ks);
	unlink(fx->path);
	free(fx);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Unsorted, with data symbols, a zero address, module symbols and weak ones. */
static const char fake_kallsyms[] =
	"ffffffff81002000 t helper_b\n"
	"ffffffff81001000 T func_a\n"
	"0000000000000000 T zero_addr_sym\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff82001000 b bss_thing\n"
	"ffffffff81000800 r rodata_thing\n"
	"ffffffff81000400 d data_thing\n"
	"ffffffff81003000 W weak_fn\n"
	"ffffffff81004000 R ro_after\n"
	"ffffffffc0001000 t mod_fn\t[ext4]\n"
	"ffffffff81005000 w weak_lower\n";

static void load_fake(struct fixture *fx)
{
	write_file(fx->path, fake_kallsyms);
	fx->ks = jw_ksyms__load(fx->path);
	assert_non_null(fx->ks);
}

/* Names @pc and checks the frame is a kernel frame of [kernel] at @pc. */
static const struct jw_frame *frame(struct fixture *fx, uint64_t pc)
{
	memset(&fx->fr, 0xa5, sizeof(fx->fr));
	jw_ksyms__frame(fx->ks, pc, &fx->fr);
	assert_int_equal(fx->fr.kind, JW_FRAME_KERNEL);
	assert_true(fx->fr.pc == pc);
	assert_true(fx->fr.rel_pc == pc);
	assert_non_null(fx->fr.module);
	assert_string_equal(fx->fr.module, "[kernel]");
	assert_null(fx->fr.build_id);
	assert_null(fx->fr.src);
	return &fx->fr;
}

static void assert_sym(struct fixture *fx, uint64_t pc, const char *name, uint64_t off)
{
	const struct jw_frame *fr = frame(fx, pc);

	if (!fr->symbol)
		fail_msg("0x%" PRIx64 ": no symbol, want %s+0x%" PRIx64, pc, name, off);
	assert_string_equal(fr->symbol, name);
	assert_true(fr->sym_off == off);
}

static void assert_no_sym(struct fixture *fx, uint64_t pc)
{
	const struct jw_frame *fr = frame(fx, pc);

	assert_null(fr->symbol);
	assert_int_equal(fr->sym_off, 0);
}

static void test_exact_address(void **state)
{
	struct fixture *fx = *state;

	load_fake(fx);
	assert_sym(fx, 0xffffffff81000000ULL, "_stext", 0);
	assert_sym(fx, 0xffffffff81001000ULL, "func_a", 0);
	assert_sym(fx, 0xffffffff81002000ULL, "helper_b", 0);
	assert_sym(fx, 0xffffffff81003000ULL, "weak_fn", 0);
	assert_sym(fx, 0xffffffff81005000ULL, "weak_lower", 0);
}

static void test_inside(void **state)
{
	struct fixture *fx = *state;

	load_fake(fx);
	assert_sym(fx, 0xffffffff81000001ULL, "_stext", 1);
	assert_sym(fx, 0xffffffff81001234ULL, "func_a", 0x234);
	assert_sym(fx, 0xffffffff81001fffULL, "func_a", 0xfff);
	assert_sym(fx, 0xffffffff81002abcULL, "helper_b", 0xabc);
	assert_sym(fx, 0xffffffffc0001010ULL, "mod_fn", 0x10);
	/* Past the last symbol: still the last one. */
	assert_sym(fx, 0xffffffffc0002000ULL, "mod_fn", 0x1000);
}

/* Data, read-only and bss symbols are never frames: text below them is named instead. */
static void test_data_symbols_ignored(void **state)
{
	struct fixture *fx = *state;

	load_fake(fx);
	assert_sym(fx, 0xffffffff81000400ULL, "_stext", 0x400);
	assert_sym(fx, 0xffffffff81000800ULL, "_stext", 0x800);
	assert_sym(fx, 0xffffffff81004000ULL, "weak_fn", 0x1000);
	assert_sym(fx, 0xffffffff81006010ULL, "weak_lower", 0x1010);
}

/*
 * An address 1 MiB or more past the nearest symbol is not in that function (BPF programs,
 * code kallsyms does not list): it stays unnamed rather than named wrongly.
 */
static void test_far_from_any_symbol(void **state)
{
	struct fixture *fx = *state;

	load_fake(fx);
	assert_sym(fx, 0xffffffff81005000ULL + 0xfffff, "weak_lower", 0xfffff);
	assert_no_sym(fx, 0xffffffff81005000ULL + 0x100000);
	assert_no_sym(fx, 0xffffffff82000010ULL);
}

static void test_before_first(void **state)
{
	struct fixture *fx = *state;

	load_fake(fx);
	assert_no_sym(fx, 0xffffffff80ffffffULL);
	assert_no_sym(fx, 0x1000);
	/* The zero address of zero_addr_sym was ignored. */
	assert_no_sym(fx, 0);
}

static void test_null_ksyms(void **state)
{
	struct fixture *fx = *state;

	assert_null(fx->ks);
	assert_no_sym(fx, 0xffffffff81000000ULL);
	assert_no_sym(fx, 0);
	jw_ksyms__free(NULL);
}

/* kptr_restrict shows every address as zero: nothing can be named. */
static void test_all_zero_is_eperm(void **state)
{
	struct fixture *fx = *state;

	write_file(fx->path, "0000000000000000 T _stext\n"
			     "0000000000000000 t helper\n"
			     "0000000000000000 D data\n"
			     "0000000000000000 t mod_fn\t[ext4]\n");
	errno = 0;
	fx->ks = jw_ksyms__load(fx->path);
	assert_null(fx->ks);
	assert_int_equal(errno, EPERM);
}

static void test_missing_file(void **state)
{
	struct fixture *fx = *state;

	errno = 0;
	fx->ks = jw_ksyms__load("/nonexistent/jw/kallsyms");
	assert_null(fx->ks);
	assert_int_equal(errno, ENOENT);
}

/* Malformed lines are skipped, the good ones kept. */
static void test_malformed_lines(void **state)
{
	struct fixture *fx = *state;

	write_file(fx->path, "\n"
			     "garbage\n"
			     "ffffffff81000000\n"
			     "ffffffff81000100 T\n"
			     "zzzz T not_hex\n"
			     "ffffffff81001000 T good\n");
	fx->ks = jw_ksyms__load(fx->path);
	assert_non_null(fx->ks);
	assert_no_sym(fx, 0xffffffff81000100ULL);
	assert_sym(fx, 0xffffffff81001004ULL, "good", 4);
}

/* Enough symbols, in reverse order, to grow both arrays and the name blob several times. */
static void test_many_symbols(void **state)
{
	struct fixture *fx = *state;
	char name[64];
	FILE *f;
	long i;

	f = fopen(fx->path, "we");
	assert_non_null(f);
	for (i = MANY_SYMS - 1; i >= 0; i--)
		fprintf(f, "%" PRIx64 " %c a_rather_long_kernel_function_name_%ld\n",
			(uint64_t)(MANY_BASE + 0x10 * i), i % 2 ? 't' : 'T', i);
	assert_int_equal(fclose(f), 0);
	fx->ks = jw_ksyms__load(fx->path);
	assert_non_null(fx->ks);
	for (i = 0; i < MANY_SYMS; i += 997) {
		snprintf(name, sizeof(name), "a_rather_long_kernel_function_name_%ld", i);
		assert_sym(fx, MANY_BASE + 0x10 * i + 7, name, 7);
	}
	assert_sym(fx, MANY_BASE, "a_rather_long_kernel_function_name_0", 0);
	snprintf(name, sizeof(name), "a_rather_long_kernel_function_name_%d", MANY_SYMS - 1);
	assert_sym(fx, MANY_BASE + 0x10 * (MANY_SYMS - 1) + 0xf, name, 0xf);
	assert_no_sym(fx, MANY_BASE - 1);
}

/* The real file: readable and named, or hidden by kptr_restrict (EPERM) without root. */
static void test_real_kallsyms(void **state)
{
	struct fixture *fx = *state;

	errno = 0;
	fx->ks = jw_ksyms__load("/proc/kallsyms");
	if (!fx->ks)
		assert_true(errno == EPERM || errno == ENOENT);
}

/*
 * The scheduler's text, from its kallsyms markers (type T, unsorted here): start inclusive, end
 * exclusive, and carried as they are; none when a marker is missing or the table is NULL.
 */
static void test_sched_text(void **state)
{
	struct fixture *fx = *state;
	uint64_t start = 1, end = 1;

	write_file(fx->path, "ffffffff81004000 T __sched_text_end\n"
			     "ffffffff81003000 T __schedule\n"
			     "ffffffff81001000 T before_sched\n"
			     "ffffffff81002000 T __sched_text_start\n"
			     "ffffffff81005000 T after_sched\n");
	fx->ks = jw_ksyms__load(fx->path);
	assert_non_null(fx->ks);
	jw_ksyms__sched_text(fx->ks, &start, &end);
	assert_true(start == 0xffffffff81002000ULL);
	assert_true(end == 0xffffffff81004000ULL);
	assert_false(jw_ksyms__in_sched(fx->ks, 0xffffffff81001fffULL));
	assert_true(jw_ksyms__in_sched(fx->ks, 0xffffffff81002000ULL));
	assert_true(jw_ksyms__in_sched(fx->ks, 0xffffffff81003010ULL));
	assert_true(jw_ksyms__in_sched(fx->ks, 0xffffffff81003fffULL));
	assert_false(jw_ksyms__in_sched(fx->ks, 0xffffffff81004000ULL));
	assert_false(jw_ksyms__in_sched(fx->ks, 0));
	assert_sym(fx, 0xffffffff81003010ULL, "__schedule", 0x10);

	assert_false(jw_ksyms__in_sched(NULL, 0xffffffff81003010ULL));
	jw_ksyms__sched_text(NULL, &start, &end);
	assert_true(start == 0 && end == 0);

	/* No markers (the fake file above has none): no scheduler text. */
	jw_ksyms__free(fx->ks);
	load_fake(fx);
	start = end = 1;
	jw_ksyms__sched_text(fx->ks, &start, &end);
	assert_true(start == 0 && end == 0);
	assert_false(jw_ksyms__in_sched(fx->ks, 0xffffffff81001000ULL));
}

/*
 * A table from a raw capture's list: unsorted, its names copied (the caller's buffers may go),
 * naming and scheduler bounds as from kallsyms.
 */
static void test_from_list(void **state)
{
	static const uint64_t addrs[] = { 0x4000, 0x2000, 0x1000, 0x3000, 0x2100 };
	static const char *const src[] = { "do_epoll_wait", "__sched_text_start", "bpf_trace_run",
					   "__sched_text_end", "__schedule" };
	struct fixture *fx = *state;
	char names[5][32];
	const char *ptrs[5];
	uint64_t start, end;
	size_t i;

	for (i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", src[i]);
		ptrs[i] = names[i];
	}
	fx->ks = jw_ksyms__from_list(addrs, ptrs, 5);
	assert_non_null(fx->ks);
	memset(names, 'x', sizeof(names));
	assert_sym(fx, 0x1010, "bpf_trace_run", 0x10);
	assert_sym(fx, 0x2110, "__schedule", 0x10);
	assert_sym(fx, 0x4000, "do_epoll_wait", 0);
	assert_no_sym(fx, 0xfff);
	jw_ksyms__sched_text(fx->ks, &start, &end);
	assert_true(start == 0x2000 && end == 0x3000);
	assert_true(jw_ksyms__in_sched(fx->ks, 0x2110));
	assert_false(jw_ksyms__in_sched(fx->ks, 0x3000));

	/* An empty list: a table that names nothing. */
	jw_ksyms__free(fx->ks);
	fx->ks = jw_ksyms__from_list(NULL, NULL, 0);
	assert_non_null(fx->ks);
	assert_no_sym(fx, 0x1000);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_exact_address),
		T(test_inside),
		T(test_data_symbols_ignored),
		T(test_far_from_any_symbol),
		T(test_before_first),
		T(test_null_ksyms),
		T(test_all_zero_is_eperm),
		T(test_missing_file),
		T(test_malformed_lines),
		T(test_many_symbols),
		T(test_real_kallsyms),
		T(test_sched_text),
		T(test_from_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
