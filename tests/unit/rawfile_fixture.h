/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixture test_rawfile.c and test_rawread.c share: reports with every kind of field, a file to write and read. */
#ifndef JW_TEST_RAWFILE_FIXTURE_H
#define JW_TEST_RAWFILE_FIXTURE_H
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

#include "jankwatch/abi.h"
#include "output/rawfile.h"

#define HEADER_SIZE 48 /* magic 8, version 4, header_size 4, fields 32 */
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

static __attribute__((unused)) unsigned char task_rec[96];
static __attribute__((unused)) unsigned char sample_small[24];
static __attribute__((unused)) unsigned char sample_mid[512];
static __attribute__((unused)) unsigned char sample_big[20 * 1024 + 3];

static __attribute__((unused)) const struct jw_raw_header header = {
	.version = JW_RAW_VERSION,
	.sample_count = 7,
	.format = 2,
	.sample_period_ms = 10,
	.realtime_off_ns = 1700000000123456789LL,
	.boottime_off_ns = -5,
};

static __attribute__((unused)) const char *const handlers_full[] = {"aeProcessEvents", NULL, ""};
static __attribute__((unused)) const char *const handlers_null[] = {NULL};

static __attribute__((unused)) const struct jw_raw_module modules_full[] = {
	{"/usr/bin/redis-server", "0123456789abcdef", 0x555555554000, 0x5555555a0000},
	{"/lib/x86_64-linux-gnu/libc.so.6", NULL, 0x7ffff7d80000, 0x7ffff7f95000},
	{"", "", 1, UINT64_MAX},
};

static __attribute__((unused)) const void *const samples_full[] = {sample_small, sample_mid, NULL, sample_big, task_rec};
static __attribute__((unused)) const size_t sizes_full[] = {sizeof(sample_small), sizeof(sample_mid), 0, sizeof(sample_big),
				    1};
static __attribute__((unused)) const void *const samples_small[] = {sample_mid, sample_small};
static __attribute__((unused)) const size_t sizes_small[] = {sizeof(sample_mid), sizeof(sample_small)};
static __attribute__((unused)) const void *const samples_big[] = {sample_big};
static __attribute__((unused)) const size_t sizes_big[] = {sizeof(sample_big)};

static __attribute__((unused)) const struct jw_raw_ksym ksyms_full[] = {
	{0xffffffff81000000, "schedule"},
	{0xffffffff81001000, NULL},
};

static __attribute__((unused)) const struct jw_raw_jit jits_full[] = {
	{0x3a2b00001000, 0x40, "JS:*busyWork /a.js:3:1"},
	{0x3a2b00002000, 0, ""},
};

/* Every field set, NULL and empty strings among them, samples of many sizes. */
static __attribute__((unused)) const struct jw_raw_report report_full = {
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
static __attribute__((unused)) const struct jw_raw_report report_empty = {
	.comm = "",
};

/* Extremes, no modules, one big sample. */
static __attribute__((unused)) const struct jw_raw_report report_big = {
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
static __attribute__((unused)) const struct jw_raw_report report_small = {
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

static inline void fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

static inline int group_setup(void **state)
{
	(void)state;
	fill(task_rec, sizeof(task_rec), 1);
	fill(sample_small, sizeof(sample_small), 2);
	fill(sample_mid, sizeof(sample_mid), 3);
	fill(sample_big, sizeof(sample_big), 4);
	return 0;
}

/* ---- Fixture ---- */

static inline int setup(void **state)
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

static inline int teardown(void **state)
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

static inline void write_chunk(struct fixture *fx, uint32_t type, const void *data, uint32_t size)
{
	assert_int_equal(fwrite(&type, sizeof(type), 1, fx->f), 1);
	assert_int_equal(fwrite(&size, sizeof(size), 1, fx->f), 1);
	if (size && data)
		assert_int_equal(fwrite(data, size, 1, fx->f), 1);
	assert_int_equal(fflush(fx->f), 0);
}

/* Reads the capture back whole into fx->bytes. */
static inline void slurp(struct fixture *fx)
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

static inline void write_copy(struct fixture *fx, const void *data, size_t size)
{
	FILE *f = fopen(fx->copy, "wb");

	assert_non_null(f);
	if (size)
		assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

static inline void reopen(struct fixture *fx, const char *path)
{
	jw_raw_close(fx->rd);
	fx->err[0] = '\0';
	fx->rd = jw_raw_open(path, &fx->h, fx->err, sizeof(fx->err));
}

static inline void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void assert_same_str(const char *want, const char *got)
{
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(want, got);
}

static inline void assert_same_blob(const void *want, size_t want_size, const void *got, size_t size)
{
	assert_int_equal(size, want_size);
	if (!size)
		return;
	assert_non_null(got);
	/* Records are read through their structs: the copies must be aligned for that. */
	assert_int_equal((uintptr_t)got % 8, 0);
	assert_memory_equal(want, got, size);
}

static inline void assert_same_process(const struct jw_raw_report *w, const struct jw_raw_report *g)
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

static inline void assert_same_report(const struct jw_raw_report *w, const struct jw_raw_report *g)
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

static inline int next(struct fixture *fx)
{
	fx->err[0] = '\0';
	return jw_raw_next(fx->rd, &fx->r, fx->err, sizeof(fx->err));
}

/* Reads every byte a report points to, so ASan sees any pointer past its memory. */
static inline unsigned int touch_report(const struct jw_raw_report *r)
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

#endif
