// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the raw capture: reports written and read back field for field, the chunks and header fields a reader skips, the writer's limits and errors. */
#include "rawfile_fixture.h"

static void test_round_trip(void **state)
{
	const struct jw_raw_report *want[] = {&report_full, &report_empty, &report_big,
					      &report_small, &report_full};
	struct fixture *fx = *state;
	size_t i;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(jw_raw_write_report(fx->f, want[i]), 0);

	reopen(fx, fx->path);
	assert_non_null(fx->rd);
	assert_int_equal(fx->h.version, JW_RAW_VERSION);
	assert_int_equal(fx->h.sample_count, header.sample_count);
	assert_int_equal(fx->h.format, header.format);
	assert_int_equal(fx->h.sample_period_ms, header.sample_period_ms);
	assert_true(fx->h.realtime_off_ns == header.realtime_off_ns);
	assert_true(fx->h.boottime_off_ns == header.boottime_off_ns);
	assert_int_equal(fx->h.machine, JW_MACHINE);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(next(fx), 1);
		assert_same_report(want[i], &fx->r);
	}
	assert_int_equal(next(fx), 0);
	assert_int_equal(next(fx), 0);
}

/* The layout is the contract with files already written: pin the header bytes. */
static void test_header_bytes(void **state)
{
	static const unsigned char magic[8] = {0x89, 'J', 'W', 'R', 'A', 'W', '\r', '\n'};
	struct fixture *fx = *state;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_empty), 0);
	slurp(fx);
	assert_memory_equal(fx->bytes, magic, sizeof(magic));
	assert_int_equal(u32_at(fx->bytes + 8), JW_RAW_VERSION);
	assert_int_equal(u32_at(fx->bytes + 12), HEADER_SIZE - 16);
	/* Chunk type 2: a report with the loop field. */
	assert_int_equal(u32_at(fx->bytes + HEADER_SIZE), 2);
	assert_int_equal(fx->size, HEADER_SIZE + CHUNK_HDR + u32_at(fx->bytes + HEADER_SIZE + 4));
}

/*
 * The loop a report was hooked by comes back; a report written before that field (chunk type
 * 1, without it) still reads, with loop NULL.
 */
static void test_loop_field_and_older_chunks(void **state)
{
	static const struct jw_raw_report with_loop = {.comm = "redis-server", .loop = "redis"};
	struct fixture *fx = *state;
	struct jw_raw_report r;
	unsigned char *old;
	size_t n;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &with_loop), 0);
	slurp(fx);
	write_copy(fx, fx->bytes, fx->size);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 1);
	assert_string_equal(r.loop, "redis");
	assert_string_equal(r.comm, "redis-server");
	/* The same report as a type 1 chunk: no loop string (4 + 5 bytes) at the end. */
	n = fx->size - 9;
	old = malloc(n);
	assert_non_null(old);
	memcpy(old, fx->bytes, n);
	put_u32(old + HEADER_SIZE, 1);
	put_u32(old + HEADER_SIZE + 4, u32_at(fx->bytes + HEADER_SIZE + 4) - 9);
	write_copy(fx, old, n);
	free(old);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 1);
	assert_null(r.loop);
	assert_string_equal(r.comm, "redis-server");
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 0);
}

/* A report with Python frames (chunk type 3): what names them comes back whole. */
static void test_python_part(void **state)
{
	static const struct jw_raw_range eval[] = { { 0x598b80, 0x599020 }, { 0x43fb58, 0x45451f } };
	static const struct jw_raw_pyname names[] = {
		{ 0x7f0010, 0x7f00c6, "busy_work", "/jw/asyncio_busy.py", 28 },
		{ 0x7f2010, 0x7f2100, "Handle._run", "/usr/lib/python3.14/asyncio/events.py", 89 },
	};
	static const struct jw_raw_report py = {
		.comm = "python3.14", .loop = "python", .py_module = "/usr/bin/python3.14",
		.py_entry_own = true, .py_eval = eval, .n_py_eval = 2, .py_names = names,
		.n_py_names = 2,
	};
	static const struct jw_raw_report plain = { .comm = "redis-server", .loop = "redis" };
	struct fixture *fx = *state;
	struct jw_raw_report r;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &py), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &plain), 0);
	slurp(fx);
	assert_int_equal(u32_at(fx->bytes + HEADER_SIZE), 3);
	write_copy(fx, fx->bytes, fx->size);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 1);
	assert_string_equal(r.loop, "python");
	assert_string_equal(r.py_module, "/usr/bin/python3.14");
	assert_true(r.py_entry_own);
	assert_int_equal(r.n_py_eval, 2);
	assert_int_equal(r.py_eval[1].lo, 0x43fb58);
	assert_int_equal(r.py_eval[1].hi, 0x45451f);
	assert_int_equal(r.n_py_names, 2);
	assert_int_equal(r.py_names[0].instr, 0x7f00c6);
	assert_string_equal(r.py_names[1].name, "Handle._run");
	assert_string_equal(r.py_names[1].file, "/usr/lib/python3.14/asyncio/events.py");
	assert_int_equal(r.py_names[1].line, 89);
	/* A report without them is the type 2 chunk it always was. */
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 1);
	assert_null(r.py_module);
	assert_int_equal(r.n_py_names, 0);
	assert_string_equal(r.loop, "redis");
	assert_int_equal(jw_raw_next(fx->rd, &r, fx->err, sizeof(fx->err)), 0);
}

static void test_unknown_chunks_skipped(void **state)
{
	static const char junk[10] = "0123456789";
	struct fixture *fx = *state;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	write_chunk(fx, 99, junk, sizeof(junk));
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	write_chunk(fx, 7, NULL, 0);
	write_chunk(fx, 0, junk, 3);
	assert_int_equal(jw_raw_write_report(fx->f, &report_big), 0);
	write_chunk(fx, UINT32_MAX, junk, 5);

	reopen(fx, fx->path);
	assert_non_null(fx->rd);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_small, &fx->r);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_big, &fx->r);
	assert_int_equal(next(fx), 0);
}

/*
 * A step of the clocks between reports (type 4): the reports before it convert with the header's
 * offsets, those after it, for their times after it, with the new ones; a reader that does not
 * know the chunk skips it. A step chunk cut short is damage.
 */
static void test_clock_steps(void **state)
{
	static const unsigned char cut[16];
	struct fixture *fx = *state;
	const struct jw_clocks *c;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	assert_int_equal(jw_raw_write_clocks(fx->f, 20000000000ULL, header.realtime_off_ns + 40000000,
					     header.boottime_off_ns), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_big), 0);
	write_chunk(fx, 4, cut, sizeof(cut));
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);

	reopen(fx, fx->path);
	assert_non_null(fx->rd);
	c = jw_raw_clocks(fx->rd);
	assert_true(c->realtime_ns == header.realtime_off_ns);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_small, &fx->r);
	assert_int_equal(c->n_was, 0);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_big, &fx->r);
	assert_int_equal(c->n_was, 1);
	assert_true(jw_clocks_realtime_at(c, 19000000000ULL) == header.realtime_off_ns);
	assert_true(jw_clocks_realtime_at(c, 21000000000ULL) == header.realtime_off_ns + 40000000);
	assert_true(jw_clocks_boottime_at(c, 21000000000ULL) == header.boottime_off_ns);
	assert_int_equal(next(fx), -EPROTO);
	assert_non_null(strstr(fx->err, "corrupt clock step"));
}

/*
 * A version 1 capture (x86-64's, before the header named the machine: 28 bytes of fields)
 * still reads, as x86-64's; a capture of another machine says which.
 */
static void test_version_1_and_machine(void **state)
{
	struct jw_raw_header arm64 = header;
	struct fixture *fx = *state;
	unsigned char *old;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	slurp(fx);
	old = malloc(fx->size);
	assert_non_null(old);
	memcpy(old, fx->bytes, HEADER_SIZE - 4);
	memcpy(old + HEADER_SIZE - 4, fx->bytes + HEADER_SIZE, fx->size - HEADER_SIZE);
	put_u32(old + 8, 1);
	put_u32(old + 12, HEADER_SIZE - 16 - 4);
	write_copy(fx, old, fx->size - 4);
	free(old);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(fx->h.version, 1);
	assert_int_equal(fx->h.machine, JW_X86_64_MACHINE);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_small, &fx->r);
	assert_int_equal(next(fx), 0);

	arm64.machine = JW_ARM64_MACHINE;
	rewind(fx->f);
	assert_int_equal(ftruncate(fileno(fx->f), 0), 0);
	assert_int_equal(jw_raw_write_header(fx->f, &arm64), 0);
	reopen(fx, fx->path);
	assert_non_null(fx->rd);
	assert_int_equal(fx->h.machine, JW_ARM64_MACHINE);
}

/* A newer minor header appends fields: this reader skips them and reads on. */
static void test_longer_header_skipped(void **state)
{
	struct fixture *fx = *state;
	unsigned char *grown;
	size_t extra = 12;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	slurp(fx);
	grown = calloc(1, fx->size + extra);
	assert_non_null(grown);
	memcpy(grown, fx->bytes, HEADER_SIZE);
	put_u32(grown + 12, HEADER_SIZE - 16 + extra);
	memcpy(grown + HEADER_SIZE + extra, fx->bytes + HEADER_SIZE, fx->size - HEADER_SIZE);
	write_copy(fx, grown, fx->size + extra);
	free(grown);

	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_true(fx->h.realtime_off_ns == header.realtime_off_ns);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_small, &fx->r);
	assert_int_equal(next(fx), 0);
}

/* ---- Damaged files ---- */

static void test_write_limits(void **state)
{
	static const void *const null_sample[] = {NULL};
	static const size_t null_sample_size[] = {8};
	struct fixture *fx = *state;
	struct jw_raw_report r = report_small;

	r.n_samples = 1000001;
	assert_int_equal(jw_raw_write_report(fx->f, &r), -EINVAL);
	r = report_small;
	r.handlers = NULL;
	assert_int_equal(jw_raw_write_report(fx->f, &r), -EINVAL);
	r = report_small;
	r.samples = null_sample;
	r.sample_sizes = null_sample_size;
	r.n_samples = 1;
	assert_int_equal(jw_raw_write_report(fx->f, &r), -EINVAL);
	r = report_small;
	r.task = NULL;
	assert_int_equal(jw_raw_write_report(fx->f, &r), -EINVAL);
	/* A refused report leaves nothing behind. */
	assert_int_equal(fseek(fx->f, 0, SEEK_END), 0);
	assert_int_equal(ftell(fx->f), 0);
}

/* A full disk shows at the flush: the writer must report it, not lose reports silently. */
static void test_write_enospc(void **state)
{
	FILE *full = fopen("/dev/full", "wb");

	(void)state;
	if (!full)
		skip();
	assert_int_equal(jw_raw_write_header(full, &header), -ENOSPC);
	clearerr(full);
	assert_int_equal(jw_raw_write_report(full, &report_full), -ENOSPC);
	fclose(full);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_round_trip),
		T(test_header_bytes),
		T(test_loop_field_and_older_chunks),
		T(test_python_part),
		T(test_unknown_chunks_skipped),
		T(test_clock_steps),
		T(test_version_1_and_machine),
		T(test_longer_header_skipped),
		T(test_write_limits),
		T(test_write_enospc),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
