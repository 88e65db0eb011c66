// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the raw capture: round trips of every field, skipped unknown chunks, and files
 * cut or damaged anywhere, which must yield the whole reports before the damage and an error.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/rawfile.h"

#define HEADER_SIZE 44 /* magic 8, version 4, header_size 4, fields 28 */
#define CHUNK_HDR   8
#define FLIP_ROUNDS 500
#define MAX_REPORTS 8

struct fixture {
	char path[32]; /* the capture, written through f */
	char copy[32]; /* cut or damaged copies of it */
	FILE *f;
	struct jw_raw_reader *rd;
	struct jw_raw_header h;
	struct jw_raw_report r;
	unsigned char *bytes; /* the capture read back whole */
	size_t size;
	char err[512];
};

/* ---- Reports with every kind of field ---- */

static unsigned char task_rec[96];
static unsigned char sample_small[24];
static unsigned char sample_mid[512];
static unsigned char sample_big[20 * 1024 + 3];

static const struct jw_raw_header header = {
	.version = JW_RAW_VERSION,
	.sample_count = 7,
	.format = 2,
	.sample_period_ms = 10,
	.realtime_off_ns = 1700000000123456789LL,
	.boottime_off_ns = -5,
};

static const char *const handlers_full[] = {"aeProcessEvents", NULL, ""};
static const char *const handlers_null[] = {NULL};

static const struct jw_raw_module modules_full[] = {
	{"/usr/bin/redis-server", "0123456789abcdef", 0x555555554000, 0x5555555a0000},
	{"/lib/x86_64-linux-gnu/libc.so.6", NULL, 0x7ffff7d80000, 0x7ffff7f95000},
	{"", "", 1, UINT64_MAX},
};

static const void *const samples_full[] = {sample_small, sample_mid, NULL, sample_big, task_rec};
static const size_t sizes_full[] = {sizeof(sample_small), sizeof(sample_mid), 0, sizeof(sample_big),
				    1};
static const void *const samples_small[] = {sample_mid, sample_small};
static const size_t sizes_small[] = {sizeof(sample_mid), sizeof(sample_small)};
static const void *const samples_big[] = {sample_big};
static const size_t sizes_big[] = {sizeof(sample_big)};

static const struct jw_raw_ksym ksyms_full[] = {
	{0xffffffff81000000, "schedule"},
	{0xffffffff81001000, NULL},
};

static const struct jw_raw_jit jits_full[] = {
	{0x3a2b00001000, 0x40, "JS:*busyWork /a.js:3:1"},
	{0x3a2b00002000, 0, ""},
};

/* Every field set, NULL and empty strings among them, samples of many sizes. */
static const struct jw_raw_report report_full = {
	.verdict = 2,
	.time_ms = 1700000000123,
	.pid = 4242,
	.tid = 4243,
	.uid = 1000,
	.start_jiffies = 123456789,
	.start_boot_ns = 987654321012,
	.comm = "redis-server",
	.exe = "/usr/bin/redis-server",
	.handlers = handlers_full,
	.n_handlers = 3,
	.modules = modules_full,
	.n_modules = 3,
	.task = task_rec,
	.task_size = sizeof(task_rec),
	.samples = samples_full,
	.sample_sizes = sizes_full,
	.n_samples = 5,
	.ksyms = ksyms_full,
	.n_ksyms = 2,
	.jits = jits_full,
	.n_jits = 2,
};

/* Nothing at all: empty and NULL strings, no arrays, no task. */
static const struct jw_raw_report report_empty = {
	.comm = "",
};

/* Extremes, no modules, one big sample. */
static const struct jw_raw_report report_big = {
	.verdict = UINT32_MAX,
	.time_ms = UINT64_MAX,
	.pid = 1,
	.tid = UINT32_MAX,
	.uid = 0,
	.start_jiffies = UINT64_MAX,
	.exe = "",
	.handlers = handlers_null,
	.n_handlers = 1,
	.task = task_rec,
	.task_size = 1,
	.samples = samples_big,
	.sample_sizes = sizes_big,
	.n_samples = 1,
	.jits = jits_full,
	.n_jits = 1,
};

/* Like report_full but small, for the tests that go over every byte. */
static const struct jw_raw_report report_small = {
	.verdict = 1,
	.time_ms = 77,
	.pid = 10,
	.tid = 11,
	.uid = 12,
	.start_jiffies = 13,
	.start_boot_ns = 14,
	.comm = "node",
	.exe = NULL,
	.handlers = handlers_full,
	.n_handlers = 3,
	.modules = modules_full,
	.n_modules = 2,
	.task = task_rec,
	.task_size = 40,
	.samples = samples_small,
	.sample_sizes = sizes_small,
	.n_samples = 2,
	.ksyms = ksyms_full,
	.n_ksyms = 2,
	.jits = jits_full,
	.n_jits = 2,
};

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

static int group_setup(void **state)
{
	(void)state;
	fill(task_rec, sizeof(task_rec), 1);
	fill(sample_small, sizeof(sample_small), 2);
	fill(sample_mid, sizeof(sample_mid), 3);
	fill(sample_big, sizeof(sample_big), 4);
	return 0;
}

/* ---- Fixture ---- */

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	int fd;

	if (!fx)
		return -1;
	snprintf(fx->path, sizeof(fx->path), "/tmp/jw-raw-XXXXXX");
	snprintf(fx->copy, sizeof(fx->copy), "/tmp/jw-raw-XXXXXX");
	fd = mkstemp(fx->path);
	if (fd < 0)
		goto err_free;
	fx->f = fdopen(fd, "w+b");
	if (!fx->f) {
		close(fd);
		goto err_unlink;
	}
	fd = mkstemp(fx->copy);
	if (fd < 0)
		goto err_fclose;
	close(fd);
	*state = fx;
	return 0;

err_fclose:
	fclose(fx->f);
err_unlink:
	unlink(fx->path);
err_free:
	free(fx);
	return -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_raw_close(fx->rd);
	fclose(fx->f);
	unlink(fx->path);
	unlink(fx->copy);
	free(fx->bytes);
	free(fx);
	return 0;
}

/* ---- Helpers ---- */

static void write_chunk(struct fixture *fx, uint32_t type, const void *data, uint32_t size)
{
	assert_int_equal(fwrite(&type, sizeof(type), 1, fx->f), 1);
	assert_int_equal(fwrite(&size, sizeof(size), 1, fx->f), 1);
	if (size)
		assert_int_equal(fwrite(data, size, 1, fx->f), 1);
	assert_int_equal(fflush(fx->f), 0);
}

/* Reads the capture back whole into fx->bytes. */
static void slurp(struct fixture *fx)
{
	long size;

	assert_int_equal(fflush(fx->f), 0);
	assert_int_equal(fseek(fx->f, 0, SEEK_END), 0);
	size = ftell(fx->f);
	assert_true(size >= 0);
	free(fx->bytes);
	fx->size = size;
	fx->bytes = malloc(size ? size : 1);
	assert_non_null(fx->bytes);
	rewind(fx->f);
	assert_int_equal(fread(fx->bytes, 1, size, fx->f), (size_t)size);
}

static void write_copy(struct fixture *fx, const void *data, size_t size)
{
	FILE *f = fopen(fx->copy, "wb");

	assert_non_null(f);
	if (size)
		assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

static void reopen(struct fixture *fx, const char *path)
{
	jw_raw_close(fx->rd);
	fx->err[0] = '\0';
	fx->rd = jw_raw_open(path, &fx->h, fx->err, sizeof(fx->err));
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void assert_same_str(const char *want, const char *got)
{
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(want, got);
}

static void assert_same_blob(const void *want, size_t want_size, const void *got, size_t size)
{
	assert_int_equal(size, want_size);
	if (!size)
		return;
	assert_non_null(got);
	/* Records are read through their structs: the copies must be aligned for that. */
	assert_int_equal((uintptr_t)got % 8, 0);
	assert_memory_equal(want, got, size);
}

static void assert_same_process(const struct jw_raw_report *w, const struct jw_raw_report *g)
{
	size_t i;

	assert_int_equal(g->verdict, w->verdict);
	assert_true(g->time_ms == w->time_ms);
	assert_int_equal(g->pid, w->pid);
	assert_int_equal(g->tid, w->tid);
	assert_int_equal(g->uid, w->uid);
	assert_true(g->start_jiffies == w->start_jiffies);
	assert_true(g->start_boot_ns == w->start_boot_ns);
	assert_same_str(w->comm, g->comm);
	assert_same_str(w->exe, g->exe);
	assert_int_equal(g->n_handlers, w->n_handlers);
	for (i = 0; i < w->n_handlers; i++)
		assert_same_str(w->handlers[i], g->handlers[i]);
	assert_int_equal(g->n_modules, w->n_modules);
	for (i = 0; i < w->n_modules; i++) {
		assert_same_str(w->modules[i].path, g->modules[i].path);
		assert_same_str(w->modules[i].build_id, g->modules[i].build_id);
		assert_true(g->modules[i].start == w->modules[i].start);
		assert_true(g->modules[i].end == w->modules[i].end);
	}
}

static void assert_same_report(const struct jw_raw_report *w, const struct jw_raw_report *g)
{
	size_t i;

	assert_same_process(w, g);
	assert_same_blob(w->task, w->task_size, g->task, g->task_size);
	assert_int_equal(g->n_samples, w->n_samples);
	for (i = 0; i < w->n_samples; i++)
		assert_same_blob(w->samples[i], w->sample_sizes[i], g->samples[i],
				 g->sample_sizes[i]);
	assert_int_equal(g->n_ksyms, w->n_ksyms);
	for (i = 0; i < w->n_ksyms; i++) {
		assert_true(g->ksyms[i].addr == w->ksyms[i].addr);
		assert_same_str(w->ksyms[i].name, g->ksyms[i].name);
	}
	assert_int_equal(g->n_jits, w->n_jits);
	for (i = 0; i < w->n_jits; i++) {
		assert_true(g->jits[i].start == w->jits[i].start);
		assert_true(g->jits[i].size == w->jits[i].size);
		assert_same_str(w->jits[i].name, g->jits[i].name);
	}
}

static int next(struct fixture *fx)
{
	fx->err[0] = '\0';
	return jw_raw_next(fx->rd, &fx->r, fx->err, sizeof(fx->err));
}

/* Reads every byte a report points to, so ASan sees any pointer past its memory. */
static unsigned int touch_report(const struct jw_raw_report *r)
{
	unsigned int sum = 0;
	size_t i, j;

	sum += r->comm ? strlen(r->comm) : 0;
	sum += r->exe ? strlen(r->exe) : 0;
	for (i = 0; i < r->n_handlers; i++)
		sum += r->handlers[i] ? strlen(r->handlers[i]) : 0;
	for (i = 0; i < r->n_modules; i++) {
		sum += r->modules[i].path ? strlen(r->modules[i].path) : 0;
		sum += r->modules[i].build_id ? strlen(r->modules[i].build_id) : 0;
	}
	for (i = 0; i < r->task_size; i++)
		sum += ((const unsigned char *)r->task)[i];
	for (i = 0; i < r->n_samples; i++)
		for (j = 0; j < r->sample_sizes[i]; j++)
			sum += ((const unsigned char *)r->samples[i])[j];
	for (i = 0; i < r->n_ksyms; i++)
		sum += r->ksyms[i].name ? strlen(r->ksyms[i].name) : 0;
	for (i = 0; i < r->n_jits; i++)
		sum += r->jits[i].name ? strlen(r->jits[i].name) : 0;
	return sum;
}

/* ---- Round trips ---- */

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

/*
 * Every prefix of a capture: the reports that end before the cut come back whole, then the
 * end is clean exactly when the cut falls between chunks.
 */
static void test_truncated_at_every_byte(void **state)
{
	const struct jw_raw_report *want[] = {&report_empty, &report_small, &report_small};
	struct fixture *fx = *state;
	size_t ends[MAX_REPORTS], unknown_end, k, i;
	bool boundary;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, want[0]), 0);
	ends[0] = ftell(fx->f);
	write_chunk(fx, 42, "abc", 3);
	unknown_end = ftell(fx->f);
	for (i = 1; i < 3; i++) {
		assert_int_equal(jw_raw_write_report(fx->f, want[i]), 0);
		ends[i] = ftell(fx->f);
	}
	slurp(fx);
	assert_int_equal(fx->size, ends[2]);

	for (k = 0; k <= fx->size; k++) {
		write_copy(fx, fx->bytes, k);
		reopen(fx, fx->copy);
		if (k < HEADER_SIZE) {
			assert_null(fx->rd);
			assert_int_equal(errno, EPROTO);
			assert_non_null(strstr(fx->err, "truncated"));
			continue;
		}
		assert_non_null(fx->rd);
		for (i = 0; i < 3 && ends[i] <= k; i++) {
			assert_int_equal(next(fx), 1);
			assert_same_report(want[i], &fx->r);
		}
		boundary = k == HEADER_SIZE || k == unknown_end || (i > 0 && k == ends[i - 1]);
		if (boundary) {
			assert_int_equal(next(fx), 0);
		} else {
			assert_int_equal(next(fx), -EPROTO);
			assert_non_null(strstr(fx->err, "truncated chunk at byte"));
			/* The stream is lost past the damage: the error sticks. */
			assert_int_equal(next(fx), -EPROTO);
		}
	}
}

/* Tiny deterministic generator, so a failing round can be replayed. */
static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Reads a damaged copy to its end. Returns the last result. */
static int read_all(struct fixture *fx)
{
	int ret, n;

	for (n = 0; n < MAX_REPORTS; n++) {
		ret = next(fx);
		if (ret <= 0)
			return ret;
		touch_report(&fx->r);
	}
	fail_msg("more reports than were written");
	return 0;
}

static void test_random_flips(void **state)
{
	struct fixture *fx = *state;
	unsigned char *damaged;
	uint32_t seed = 0x5eed1234;
	int round, flips, ret, n_proto = 0;
	size_t at;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_empty), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_small), 0);
	slurp(fx);
	damaged = malloc(fx->size);
	assert_non_null(damaged);

	for (round = 0; round < FLIP_ROUNDS; round++) {
		memcpy(damaged, fx->bytes, fx->size);
		for (flips = 1 + xorshift(&seed) % 4; flips > 0; flips--) {
			at = HEADER_SIZE + xorshift(&seed) % (fx->size - HEADER_SIZE);
			damaged[at] ^= 1 + xorshift(&seed) % 255;
		}
		write_copy(fx, damaged, fx->size);
		reopen(fx, fx->copy);
		assert_non_null(fx->rd);
		ret = read_all(fx);
		if (ret != 0 && ret != -EPROTO)
			fail_msg("round %d: %d (%s)", round, ret, fx->err);
		n_proto += ret == -EPROTO;
	}
	free(damaged);
	/* Most flips land in structure: the reader must notice a good share of them. */
	assert_true(n_proto > FLIP_ROUNDS / 10);
}

/*
 * A report with no arrays, comm "x" and exe "y": its counts sit at fixed payload offsets.
 * verdict..start_boot_ns take 40 bytes, then comm 5, exe 5, n_handlers, n_modules, task blob
 * length, n_samples, n_ksyms, n_jits, and the loop string (NULL: 4 bytes).
 */
static const struct jw_raw_report report_counts = {.comm = "x", .exe = "y"};
static const size_t count_offsets[] = {50, 54, 62, 66, 70};
#define COUNTS_PAYLOAD 78
#define PAYLOAD_AT     (HEADER_SIZE + CHUNK_HDR)

static void write_counts_file(struct fixture *fx)
{
	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	assert_int_equal(jw_raw_write_report(fx->f, &report_counts), 0);
	slurp(fx);
	assert_int_equal(u32_at(fx->bytes + HEADER_SIZE + 4), COUNTS_PAYLOAD);
}

/*
 * Reads the copy in fx->copy: refused as corrupt, without allocating for the damaged count.
 * The memory is measured while the reader still holds it (until its next call); glibc's count,
 * so the check bites in the plain build and passes trivially under ASan.
 */
static void expect_corrupt_copy(struct fixture *fx)
{
	size_t before;

	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	before = mallinfo2().uordblks;
	assert_int_equal(next(fx), -EPROTO);
	assert_non_null(strstr(fx->err, "corrupt"));
	assert_true(mallinfo2().uordblks < before + (1 << 20));
}

/* Patches a u32 of a copy of the capture; fx->bytes stays as written for the next patch. */
static void expect_corrupt(struct fixture *fx, size_t at, uint32_t v)
{
	uint32_t old = u32_at(fx->bytes + at);

	put_u32(fx->bytes + at, v);
	write_copy(fx, fx->bytes, fx->size);
	put_u32(fx->bytes + at, old);
	expect_corrupt_copy(fx);
}

static void test_huge_counts(void **state)
{
	struct fixture *fx = *state;
	unsigned char *longer;
	size_t i;

	write_counts_file(fx);
	for (i = 0; i < sizeof(count_offsets) / sizeof(count_offsets[0]); i++) {
		assert_int_equal(u32_at(fx->bytes + PAYLOAD_AT + count_offsets[i]), 0);
		/* Far too many, and few enough to pass a plain limit but not the bytes left. */
		expect_corrupt(fx, PAYLOAD_AT + count_offsets[i], 0xfffffff0);
		expect_corrupt(fx, PAYLOAD_AT + count_offsets[i], 999999);
	}
	/* A string and a blob longer than the chunk. */
	expect_corrupt(fx, PAYLOAD_AT + 40, 0x7fffffff);
	expect_corrupt(fx, PAYLOAD_AT + 58, 80);
	/* A NUL inside a string would silently shorten a name. */
	fx->bytes[PAYLOAD_AT + 44] = '\0';
	write_copy(fx, fx->bytes, fx->size);
	fx->bytes[PAYLOAD_AT + 44] = 'x';
	expect_corrupt_copy(fx);
	/* The chunk size: over the limit, and shorter than its report (bytes left over). */
	expect_corrupt(fx, HEADER_SIZE + 4, UINT32_MAX);
	expect_corrupt(fx, HEADER_SIZE + 4, COUNTS_PAYLOAD - 1);
	/* Longer than its report: the bytes left over are damage too, not a newer field. */
	longer = calloc(1, fx->size + 1);
	assert_non_null(longer);
	memcpy(longer, fx->bytes, fx->size);
	put_u32(longer + HEADER_SIZE + 4, COUNTS_PAYLOAD + 1);
	write_copy(fx, longer, fx->size + 1);
	free(longer);
	expect_corrupt_copy(fx);

	/* The sanity of the patching itself: the file as written reads back. */
	write_copy(fx, fx->bytes, fx->size);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(next(fx), 1);
	assert_same_report(&report_counts, &fx->r);
}

/* A size within the limit but past the end of the file is a truncation, not an allocation. */
static void test_chunk_size_past_end(void **state)
{
	struct fixture *fx = *state;

	write_counts_file(fx);
	put_u32(fx->bytes + HEADER_SIZE + 4, 64u << 20);
	write_copy(fx, fx->bytes, fx->size);
	reopen(fx, fx->copy);
	assert_non_null(fx->rd);
	assert_int_equal(next(fx), -EPROTO);
	assert_non_null(strstr(fx->err, "truncated chunk at byte 44"));
}

/* ---- Headers that are not ours ---- */

static void write_header_with_version(struct fixture *fx, uint32_t version)
{
	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	slurp(fx);
	put_u32(fx->bytes + 8, version);
	write_copy(fx, fx->bytes, fx->size);
	reopen(fx, fx->copy);
}

static void test_newer_version(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	write_header_with_version(fx, 2);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTONOSUPPORT);
	snprintf(want, sizeof(want), "%s: raw capture version 2, this jankwatch reads up to 1",
		 fx->copy);
	assert_string_equal(fx->err, want);
}

static void test_bad_versions(void **state)
{
	struct fixture *fx = *state;

	write_header_with_version(fx, 0);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
	/* Written on a machine of the other byte order: say so, not "version 16777216". */
	write_header_with_version(fx, __builtin_bswap32(JW_RAW_VERSION));
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
	assert_non_null(strstr(fx->err, "byte order"));
}

static void test_bad_magic(void **state)
{
	static const char text[] = "hello, this is a text file and not a capture\n";
	struct fixture *fx = *state;
	char want[128];

	snprintf(want, sizeof(want), "%s: not a jankwatch raw capture", fx->copy);
	write_copy(fx, text, sizeof(text) - 1);
	reopen(fx, fx->copy);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
	assert_string_equal(fx->err, want);

	/* Mangled by a text-mode transfer: CR LF became LF. */
	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	slurp(fx);
	memmove(fx->bytes + 6, fx->bytes + 7, fx->size - 7);
	write_copy(fx, fx->bytes, fx->size - 1);
	reopen(fx, fx->copy);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
	assert_string_equal(fx->err, want);
}

static void test_short_header(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(jw_raw_write_header(fx->f, &header), 0);
	slurp(fx);
	write_copy(fx, fx->bytes, 12);
	reopen(fx, fx->copy);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
	assert_non_null(strstr(fx->err, "truncated header"));

	write_copy(fx, NULL, 0);
	reopen(fx, fx->copy);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTO);
}

static void test_missing_file(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->copy);
	reopen(fx, fx->copy);
	assert_null(fx->rd);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(fx->err, fx->copy));
	assert_non_null(strstr(fx->err, strerror(ENOENT)));

	/* A read error is passed on as such, not as damage. */
	reopen(fx, "/tmp");
	assert_null(fx->rd);
	assert_int_equal(errno, EISDIR);

	jw_raw_close(NULL);
}

/* ---- Writing ---- */

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
		T(test_unknown_chunks_skipped),
		T(test_longer_header_skipped),
		T(test_truncated_at_every_byte),
		T(test_random_flips),
		T(test_huge_counts),
		T(test_chunk_size_past_end),
		T(test_newer_version),
		T(test_bad_versions),
		T(test_bad_magic),
		T(test_short_header),
		T(test_missing_file),
		T(test_write_limits),
		T(test_write_enospc),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
