// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the pprof profiles: what a written profile holds, read back with protobuf-c
 * itself (pprof's schema, not jankwatch's reader); merging; damaged input refused; a jank's
 * sample values; gzip round trips.
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

#include "profile.pb-c.h"

#include "output/gzip.h"
#include "output/pprof.h"
#include "report/report_pprof.h"

#define PERIOD_NS 10000000LL

/* The stack main -> run_loop -> on_timer -> busy (outermost first), as the symbolizer names it. */
static const struct jw_frame busy_stack[] = {
	{ .kind = JW_FRAME_NATIVE, .pc = 0x555500001100, .rel_pc = 0x1100, .module = "/usr/bin/app",
	  .build_id = "abcdef01", .symbol = "main", .src = "app.c:10" },
	{ .kind = JW_FRAME_NATIVE, .pc = 0x555500001200, .rel_pc = 0x1200, .module = "/usr/bin/app",
	  .build_id = "abcdef01", .symbol = "run_loop", .src = "loop.c:42:7" },
	{ .kind = JW_FRAME_NATIVE, .pc = 0x7f0000027a4f, .rel_pc = 0x27a4f,
	  .module = "/lib/libuv.so.1", .build_id = "1234" },
	{ .kind = JW_FRAME_NATIVE, .pc = 0x555500001300, .rel_pc = 0x1300, .module = "/usr/bin/app",
	  .build_id = "abcdef01", .symbol = "busy", .src = "app.c:77" },
};

/* The same thread asleep: ... -> run_loop -> poll, then the kernel. */
static const struct jw_frame sleep_stack[] = {
	{ .kind = JW_FRAME_NATIVE, .pc = 0x555500001100, .rel_pc = 0x1100, .module = "/usr/bin/app",
	  .build_id = "abcdef01", .symbol = "main", .src = "app.c:10" },
	{ .kind = JW_FRAME_NATIVE, .pc = 0x7f0000090000, .rel_pc = 0x90000,
	  .module = "/lib/libc.so.6", .build_id = "c0ffee", .symbol = "poll" },
	{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000000, .symbol = "do_sys_poll" },
};

/* The profile in @f (gzipped), unpacked by protobuf-c. */
static Perftools__Profiles__Profile *unpack_file(FILE *f)
{
	Perftools__Profiles__Profile *p;
	void *gz, *raw;
	size_t len, raw_len;
	long size;

	fseek(f, 0, SEEK_END);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	gz = malloc(size);
	assert_non_null(gz);
	assert_int_equal(fread(gz, 1, size, f), size);
	len = size;
	assert_true(jw_is_gzip(gz, len));
	assert_int_equal(jw_gunzip(gz, len, 1 << 20, &raw, &raw_len), 0);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	free(raw);
	free(gz);
	return p;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *location(const Perftools__Profiles__Profile *p,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %lu", (unsigned long)id);
	return NULL;
}

static const Perftools__Profiles__Function *function(const Perftools__Profiles__Profile *p,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %lu", (unsigned long)id);
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const Perftools__Profiles__Profile *p,
						   uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	fail_msg("no mapping %lu", (unsigned long)id);
	return NULL;
}

/* The name of the function of the location at depth @k (0: leaf) of sample @s. */
static const char *frame_at(const Perftools__Profiles__Profile *p,
			    const Perftools__Profiles__Sample *s, size_t k)
{
	const Perftools__Profiles__Location *l;

	assert_true(k < s->n_location_id);
	l = location(p, s->location_id[k]);
	assert_int_equal(l->n_line, 1);
	return str(p, function(p, l->line[0]->function_id)->name);
}

/* The string value of label @key of sample @s, or NULL. */
static const char *label_str(const Perftools__Profiles__Profile *p,
			     const Perftools__Profiles__Sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return str(p, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const Perftools__Profiles__Profile *p,
			 const Perftools__Profiles__Sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(p, s->label[i]->key), key))
			return s->label[i]->num;
	fail_msg("no label %s", key);
	return -1;
}

static const struct jw_pprof_label jank_labels[] = {
	{ .key = "jank", .str = "42-20261125010203-456" },
	{ .key = "cause", .str = "cpu" },
	{ .key = "pid", .num = 42 },
};

/* A profile of three busy samples and one sleep of 25 ms, labelled as one jank. */
static struct jw_pprof *one_jank(void)
{
	struct jw_pprof *p = jw_pprof__new(PERIOD_NS);
	const int64_t busy[JW_PPROF_VALUES] = { 1, 0, PERIOD_NS };
	const int64_t asleep[JW_PPROF_VALUES] = { 0, 25000000, 25000000 };
	int i;

	assert_non_null(p);
	for (i = 0; i < 3; i++)
		assert_int_equal(jw_pprof__add(p, busy_stack, 4, busy, NULL, 0), 0);
	assert_int_equal(jw_pprof__add(p, sleep_stack, 3, asleep, NULL, 0), 0);
	assert_int_equal(jw_pprof__label_samples(p, jank_labels, 3), 0);
	jw_pprof__cover(p, 1764032523456000000LL, 55000000);
	assert_int_equal(jw_pprof__comment(p, "MAIN_THREAD_JANK 42-20261125010203-456"), 0);
	return p;
}

static Perftools__Profiles__Profile *written(const struct jw_pprof *p)
{
	Perftools__Profiles__Profile *out;
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(jw_pprof__write(p, f), 0);
	out = unpack_file(f);
	fclose(f);
	return out;
}

/* What pprof needs: "" first, the types, the default, leaf-first stacks, names, lines, labels. */
static void test_written_profile(void **state)
{
	struct jw_pprof *p = one_jank();
	Perftools__Profiles__Profile *out;
	const Perftools__Profiles__Sample *busy = NULL, *asleep = NULL;
	const Perftools__Profiles__Location *leaf;
	const Perftools__Profiles__Function *f;
	size_t i;

	(void)state;
	/* Same stack, same labels: one sample. */
	assert_int_equal(jw_pprof__samples(p), 2);
	out = written(p);
	assert_string_equal(out->string_table[0], "");
	assert_int_equal(out->n_sample_type, 3);
	assert_string_equal(str(out, out->sample_type[0]->type), "samples");
	assert_string_equal(str(out, out->sample_type[0]->unit), "count");
	assert_string_equal(str(out, out->sample_type[1]->type), "off_cpu");
	assert_string_equal(str(out, out->sample_type[2]->type), "wall");
	assert_string_equal(str(out, out->sample_type[2]->unit), "nanoseconds");
	assert_string_equal(str(out, out->default_sample_type), "wall");
	assert_string_equal(str(out, out->period_type->type), "cpu");
	assert_int_equal(out->period, PERIOD_NS);
	assert_int_equal(out->time_nanos, 1764032523456000000LL);
	assert_int_equal(out->duration_nanos, 55000000);
	assert_int_equal(out->n_comment, 1);
	assert_string_equal(str(out, out->comment[0]), "MAIN_THREAD_JANK 42-20261125010203-456");
	assert_int_equal(out->n_sample, 2);
	for (i = 0; i < out->n_sample; i++) {
		if (out->sample[i]->n_location_id == 4)
			busy = out->sample[i];
		else
			asleep = out->sample[i];
	}
	assert_non_null(busy);
	assert_non_null(asleep);
	assert_int_equal(busy->n_value, 3);
	assert_int_equal(busy->value[0], 3);
	assert_int_equal(busy->value[1], 0);
	assert_int_equal(busy->value[2], 3 * PERIOD_NS);
	assert_int_equal(asleep->value[0], 0);
	assert_int_equal(asleep->value[1], 25000000);
	/* Leaf first; an unnamed frame by module and ELF address, as in the stack log. */
	assert_string_equal(frame_at(out, busy, 0), "busy");
	assert_string_equal(frame_at(out, busy, 1), "libuv.so.1+0x27a4f");
	assert_string_equal(frame_at(out, busy, 2), "run_loop");
	assert_string_equal(frame_at(out, busy, 3), "main");
	assert_string_equal(frame_at(out, asleep, 0), "do_sys_poll");
	/* Shared frames are one location. */
	assert_int_equal(busy->location_id[3], asleep->location_id[2]);
	leaf = location(out, busy->location_id[0]);
	assert_int_equal(leaf->address, 0x555500001300);
	assert_int_equal(leaf->line[0]->line, 77);
	f = function(out, leaf->line[0]->function_id);
	assert_string_equal(str(out, f->filename), "app.c");
	assert_string_equal(str(out, f->system_name), "busy");
	/* "file:line:col" keeps the line. */
	assert_int_equal(location(out, busy->location_id[2])->line[0]->line, 42);
	assert_string_equal(str(out, mapping(out, leaf->mapping_id)->filename), "/usr/bin/app");
	assert_string_equal(str(out, mapping(out, leaf->mapping_id)->build_id), "abcdef01");
	assert_true(mapping(out, leaf->mapping_id)->has_functions);
	assert_int_equal(mapping(out, leaf->mapping_id)->memory_start, 0x555500000000);
	assert_true(leaf->address < mapping(out, leaf->mapping_id)->memory_limit);
	assert_string_equal(str(out, mapping(out, location(out, asleep->location_id[0])->mapping_id)
					    ->filename),
			    "[kernel.kallsyms]");
	/* Every sample carries the jank's labels. */
	assert_string_equal(label_str(out, busy, "jank"), "42-20261125010203-456");
	assert_string_equal(label_str(out, asleep, "cause"), "cpu");
	assert_int_equal(label_num(out, asleep, "pid"), 42);
	perftools__profiles__profile__free_unpacked(out, NULL);
	jw_pprof__free(p);
}

/* The written file, as bytes in memory. */
static void *file_bytes(const struct jw_pprof *p, size_t *len)
{
	FILE *f = tmpfile();
	void *buf;
	long size;

	assert_non_null(f);
	assert_int_equal(jw_pprof__write(p, f), 0);
	size = ftell(f);
	rewind(f);
	buf = malloc(size);
	assert_int_equal(fread(buf, 1, size, f), size);
	fclose(f);
	*len = size;
	return buf;
}

/* Two janks merged: the same stack with different labels stays apart, values kept. */
static void test_merge(void **state)
{
	struct jw_pprof *a = one_jank(), *b = jw_pprof__new(PERIOD_NS), *all = jw_pprof__new(0);
	const struct jw_pprof_label other[] = { { .key = "jank", .str = "43-x" } };
	const int64_t busy[JW_PPROF_VALUES] = { 2, 0, 2 * PERIOD_NS };
	Perftools__Profiles__Profile *out;
	void *da, *db;
	size_t la, lb, i;
	int64_t sum[JW_PPROF_VALUES] = { 0 };
	char err[256];

	(void)state;
	assert_non_null(b);
	assert_non_null(all);
	assert_int_equal(jw_pprof__add(b, busy_stack, 4, busy, other, 1), 0);
	jw_pprof__cover(b, 1764032600000000000LL, 20000000);
	da = file_bytes(a, &la);
	db = file_bytes(b, &lb);
	assert_int_equal(jw_pprof__merge(all, da, la, 0, 0, err, sizeof(err)), 1);
	assert_int_equal(jw_pprof__merge(all, db, lb, 0, 0, err, sizeof(err)), 1);
	/* Out of a time range: skipped. */
	assert_int_equal(jw_pprof__merge(all, db, lb, 1764032700000000000LL, 0, err, sizeof(err)),
			 0);
	assert_int_equal(jw_pprof__merge(all, da, la, 0, 1764032523456000000LL, err, sizeof(err)),
			 0);
	assert_int_equal(jw_pprof__samples(all), 3);
	out = written(all);
	assert_int_equal(out->n_sample, 3);
	for (i = 0; i < out->n_sample; i++) {
		sum[0] += out->sample[i]->value[0];
		sum[1] += out->sample[i]->value[1];
		sum[2] += out->sample[i]->value[2];
	}
	assert_int_equal(sum[0], 5);
	assert_int_equal(sum[1], 25000000);
	assert_int_equal(sum[2], 5 * PERIOD_NS + 25000000);
	/* The period of the first merged; the two janks' span. */
	assert_int_equal(out->period, PERIOD_NS);
	assert_int_equal(out->time_nanos, 1764032523456000000LL);
	assert_int_equal(out->duration_nanos,
			 1764032600000000000LL + 20000000 - 1764032523456000000LL);
	/* One mapping per module, one function per name. */
	assert_int_equal(out->n_mapping, 4);
	assert_int_equal(out->n_function, 6);
	perftools__profiles__profile__free_unpacked(out, NULL);
	/* Merging the merged profile again doubles it, stack for stack. */
	free(da);
	da = file_bytes(all, &la);
	assert_int_equal(jw_pprof__merge(all, da, la, 0, 0, err, sizeof(err)), 1);
	assert_int_equal(jw_pprof__samples(all), 3);
	free(da);
	free(db);
	jw_pprof__free(a);
	jw_pprof__free(b);
	jw_pprof__free(all);
}

/* Damaged and foreign input: refused with a reason, the profile merged into left whole. */
static void test_merge_refuses(void **state)
{
	struct jw_pprof *a = one_jank(), *all = jw_pprof__new(0);
	Perftools__Profiles__Profile bad = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *types[] = { &vt };
	char *strings[] = { "", "alloc_space", "bytes" };
	uint8_t packed[256];
	size_t len, n;
	void *data;
	char err[256];

	(void)state;
	data = file_bytes(a, &len);
	/* Cut short. */
	assert_int_equal(jw_pprof__merge(all, data, len / 2, 0, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "damaged gzip data");
	/* Not a profile at all. */
	assert_int_equal(jw_pprof__merge(all, "hello\n", 6, 0, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "not a profile.proto message");
	/* A heap profile: no sample type in common. */
	vt.type = 1;
	vt.unit = 2;
	bad.n_sample_type = 1;
	bad.sample_type = types;
	bad.n_string_table = 3;
	bad.string_table = strings;
	n = perftools__profiles__profile__pack(&bad, packed);
	assert_int_equal(jw_pprof__merge(all, packed, n, 0, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "none of its sample types is samples, off_cpu or wall");
	/* A string index past the table. */
	vt.unit = 7;
	n = perftools__profiles__profile__pack(&bad, packed);
	assert_int_equal(jw_pprof__merge(all, packed, n, 0, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a string index (7) past the string table");
	assert_int_equal(jw_pprof__samples(all), 0);
	/* The real one still merges after all that. */
	assert_int_equal(jw_pprof__merge(all, data, len, 0, 0, err, sizeof(err)), 1);
	assert_int_equal(jw_pprof__samples(all), 2);
	free(data);
	jw_pprof__free(a);
	jw_pprof__free(all);
}

/* A jank's sample values add up to its time, thinned or not. */
static void test_jank_values(void **state)
{
	struct jw_sample_rec cpu = { .kind = JW_SAMPLE_ONCPU, .weight = 1 };
	struct jw_sample_rec sleep = { .kind = JW_SAMPLE_BLOCKED, .weight = 20,
				       .block_ns = 200000000 };
	int64_t v[JW_PPROF_VALUES];

	(void)state;
	/* All kept: one period, and the whole sleep. */
	jw_report_pprof_values(&cpu, 1, 30, 30, PERIOD_NS, v);
	assert_int_equal(v[JW_PPROF_SAMPLES], 1);
	assert_int_equal(v[JW_PPROF_OFFCPU_NS], 0);
	assert_int_equal(v[JW_PPROF_WALL_NS], PERIOD_NS);
	jw_report_pprof_values(&sleep, 20, 30, 30, PERIOD_NS, v);
	assert_int_equal(v[JW_PPROF_SAMPLES], 0);
	assert_int_equal(v[JW_PPROF_OFFCPU_NS], 200000000);
	assert_int_equal(v[JW_PPROF_WALL_NS], 200000000);
	/* 10 kept of 30: each kept period stands for three. */
	jw_report_pprof_values(&cpu, 1, 10, 30, PERIOD_NS, v);
	assert_int_equal(v[JW_PPROF_SAMPLES], 1);
	assert_int_equal(v[JW_PPROF_WALL_NS], 3 * PERIOD_NS);
	jw_report_pprof_values(&sleep, 5, 10, 30, PERIOD_NS, v);
	assert_int_equal(v[JW_PPROF_OFFCPU_NS], 150000000);
}

/* gzip both ways, several members, and a bound on what inflates. */
static void test_gzip(void **state)
{
	static const char text[] = "jankwatch jankwatch jankwatch jankwatch";
	void *gz, *gz2, *out, *both;
	size_t gz_len, gz2_len, out_len;

	(void)state;
	assert_int_equal(jw_gzip(text, sizeof(text), &gz, &gz_len), 0);
	assert_true(jw_is_gzip(gz, gz_len));
	assert_int_equal(jw_gunzip(gz, gz_len, 1024, &out, &out_len), 0);
	assert_int_equal(out_len, sizeof(text));
	assert_memory_equal(out, text, sizeof(text));
	free(out);
	assert_int_equal(jw_gunzip(gz, gz_len, 8, &out, &out_len), -EFBIG);
	assert_int_equal(jw_gunzip(gz, gz_len - 3, 1024, &out, &out_len), -EINVAL);
	assert_int_equal(jw_gunzip(text, sizeof(text), 1024, &out, &out_len), -EINVAL);
	/* Two members: one stream (what `cat a.gz b.gz` makes). */
	assert_int_equal(jw_gzip("more", 4, &gz2, &gz2_len), 0);
	both = malloc(gz_len + gz2_len);
	memcpy(both, gz, gz_len);
	memcpy((char *)both + gz_len, gz2, gz2_len);
	assert_int_equal(jw_gunzip(both, gz_len + gz2_len, 1024, &out, &out_len), 0);
	assert_int_equal(out_len, sizeof(text) + 4);
	assert_memory_equal((char *)out + sizeof(text), "more", 4);
	free(out);
	free(both);
	free(gz2);
	free(gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_written_profile),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_refuses),
		cmocka_unit_test(test_jank_values),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
