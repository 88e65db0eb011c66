// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the raw capture's reader on files that are not what it wrote: truncated at every byte, bytes flipped, counts and sizes past the end, other versions and magics. */
#include "rawfile_fixture.h"

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
	assert_non_null(strstr(fx->err, "truncated chunk at byte 48"));
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

	write_header_with_version(fx, JW_RAW_VERSION + 1);
	assert_null(fx->rd);
	assert_int_equal(errno, EPROTONOSUPPORT);
	snprintf(want, sizeof(want), "%s: raw capture version %d, this jankwatch reads up to %d",
		 fx->copy, JW_RAW_VERSION + 1, JW_RAW_VERSION);
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

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_truncated_at_every_byte),
		T(test_random_flips),
		T(test_huge_counts),
		T(test_chunk_size_past_end),
		T(test_newer_version),
		T(test_bad_versions),
		T(test_bad_magic),
		T(test_short_header),
		T(test_missing_file),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
