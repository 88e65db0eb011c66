// SPDX-License-Identifier: GPL-2.0-only
/*
 * The raw capture file. Integers are in host byte order: the records it carries are raw BPF
 * records in that order anyway, so it is read back on a machine of the same byte order.
 *
 *   header   u8  magic[8]       "\x89JWRAW\r\n": the high byte catches 7-bit transfers, the
 *                               CR LF catches text-mode newline conversion
 *            u32 version        JW_RAW_VERSION
 *            u32 header_size    bytes of header fields that follow (28 in version 1); a later
 *                               minor revision may append fields, which older readers skip
 *            u32 sample_count, u32 format, u32 sample_period_ms,
 *            s64 realtime_off_ns, s64 boottime_off_ns
 *   chunks   u32 type, u32 size, u8 payload[size]    size <= 64 MiB; unknown types are skipped
 *
 * A report chunk (type 1) is a sequence of fields:
 *   u32 verdict, u64 time_ms, u32 pid, u32 tid, u32 uid, u64 start_jiffies, u64 start_boot_ns,
 *   str comm, str exe,
 *   u32 n_handlers, str handler[n_handlers],
 *   u32 n_modules, { str path, str build_id, u64 start, u64 end }[n_modules],
 *   blob task,
 *   u32 n_samples, blob sample[n_samples],
 *   u32 n_ksyms, { u64 addr, str name }[n_ksyms],
 *   u32 n_jits, { u64 start, u64 size, str name }[n_jits]
 * A report chunk of type 2 ends with one more field, str loop (how the loop was hooked); a
 * type 1 chunk, written before that field existed, is read with loop NULL.
 * where a str is a u32 length and its bytes without a NUL (length 0xffffffff: NULL), and a blob
 * is a u32 length and its bytes. A report fills its chunk exactly: a report that grows gets a
 * new chunk type, which older readers skip rather than misread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "output/rawfile.h"

#define CHUNK_REPORT	   1
#define CHUNK_REPORT_LOOP  2		/* a report with the loop field */
#define CHUNK_HDR_SIZE	   8
#define PREAMBLE_SIZE	   16	       /* magic, version, header_size */
#define HEADER_FIELDS_SIZE 28	       /* the version 1 fields after header_size */
#define MAX_HEADER_FIELDS  4096	       /* room to grow; anything larger is damage */
#define MAX_PAYLOAD	   (64u << 20) /* a report is KiBs; one near this is damage */
#define MAX_COUNT	   1000000u    /* entries of each array in a report */
#define NULL_STR	   UINT32_MAX
#define READ_STEP	   (64u << 10)
#define ARENA_BLOCK	   (64u << 10)
#define ARRAY_ALIGN	   _Alignof(max_align_t)

static const unsigned char raw_magic[8] = {0x89, 'J', 'W', 'R', 'A', 'W', '\r', '\n'};


/* ---- Writing ---- */

/* A chunk being built in memory; the first error sticks, so callers check once at the end. */
struct wbuf {
	unsigned char *p;
	size_t len;
	size_t cap;
	int err;
};

static void wb_put(struct wbuf *b, const void *src, size_t n)
{
	unsigned char *p;
	size_t cap;

	if (b->err || !n)
		return;
	/* A chunk the reader would refuse as damaged is not written at all. */
	if (n > CHUNK_HDR_SIZE + MAX_PAYLOAD - b->len) {
		b->err = -EINVAL;
		return;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void wb_u32(struct wbuf *b, uint32_t v)
{
	wb_put(b, &v, sizeof(v));
}

static void wb_u64(struct wbuf *b, uint64_t v)
{
	wb_put(b, &v, sizeof(v));
}

static void wb_str(struct wbuf *b, const char *s)
{
	size_t n;

	if (!s) {
		wb_u32(b, NULL_STR);
		return;
	}
	n = strlen(s);
	if (n > MAX_PAYLOAD) {
		b->err = b->err ?: -EINVAL;
		return;
	}
	wb_u32(b, n);
	wb_put(b, s, n);
}

static void wb_blob(struct wbuf *b, const void *p, size_t n)
{
	if (n > MAX_PAYLOAD || (n && !p)) {
		b->err = b->err ?: -EINVAL;
		return;
	}
	wb_u32(b, n);
	wb_put(b, p, n);
}

/* Whether an array is within the limit and present when it has entries. */
static bool array_ok(const void *p, size_t n)
{
	return n <= MAX_COUNT && (p || !n);
}

static bool report_arrays_ok(const struct jw_raw_report *r)
{
	return array_ok(r->handlers, r->n_handlers) && array_ok(r->modules, r->n_modules) &&
	       array_ok(r->samples, r->n_samples) && array_ok(r->sample_sizes, r->n_samples) &&
	       array_ok(r->ksyms, r->n_ksyms) && array_ok(r->jits, r->n_jits);
}

static void put_process(struct wbuf *b, const struct jw_raw_report *r)
{
	size_t i;

	wb_u32(b, r->verdict);
	wb_u64(b, r->time_ms);
	wb_u32(b, r->pid);
	wb_u32(b, r->tid);
	wb_u32(b, r->uid);
	wb_u64(b, r->start_jiffies);
	wb_u64(b, r->start_boot_ns);
	wb_str(b, r->comm);
	wb_str(b, r->exe);
	wb_u32(b, r->n_handlers);
	for (i = 0; i < r->n_handlers; i++)
		wb_str(b, r->handlers[i]);
	wb_u32(b, r->n_modules);
	for (i = 0; i < r->n_modules; i++) {
		wb_str(b, r->modules[i].path);
		wb_str(b, r->modules[i].build_id);
		wb_u64(b, r->modules[i].start);
		wb_u64(b, r->modules[i].end);
	}
}

static void put_records(struct wbuf *b, const struct jw_raw_report *r)
{
	size_t i;

	wb_blob(b, r->task, r->task_size);
	wb_u32(b, r->n_samples);
	for (i = 0; i < r->n_samples; i++)
		wb_blob(b, r->samples[i], r->sample_sizes[i]);
}

static void put_symbols(struct wbuf *b, const struct jw_raw_report *r)
{
	size_t i;

	wb_u32(b, r->n_ksyms);
	for (i = 0; i < r->n_ksyms; i++) {
		wb_u64(b, r->ksyms[i].addr);
		wb_str(b, r->ksyms[i].name);
	}
	wb_u32(b, r->n_jits);
	for (i = 0; i < r->n_jits; i++) {
		wb_u64(b, r->jits[i].start);
		wb_u64(b, r->jits[i].size);
		wb_str(b, r->jits[i].name);
	}
	wb_str(b, r->loop);
}

/* One fwrite and a flush, so a report reaches the file whole or the caller hears why not. */
static int write_all(FILE *f, const void *p, size_t n)
{
	errno = 0;
	if (fwrite(p, 1, n, f) != n)
		return errno ? -errno : -EIO;
	if (fflush(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* Always writes JW_RAW_VERSION: what follows is this version's layout, whatever h->version. */
int jw_raw_write_header(FILE *f, const struct jw_raw_header *h)
{
	struct wbuf b = {};
	int err;

	wb_put(&b, raw_magic, sizeof(raw_magic));
	wb_u32(&b, JW_RAW_VERSION);
	wb_u32(&b, HEADER_FIELDS_SIZE);
	wb_u32(&b, h->sample_count);
	wb_u32(&b, h->format);
	wb_u32(&b, h->sample_period_ms);
	wb_u64(&b, (uint64_t)h->realtime_off_ns);
	wb_u64(&b, (uint64_t)h->boottime_off_ns);
	err = b.err ?: write_all(f, b.p, b.len);
	free(b.p);
	return err;
}

int jw_raw_write_report(FILE *f, const struct jw_raw_report *r)
{
	uint32_t hdr[2] = {CHUNK_REPORT_LOOP, 0};
	struct wbuf b = {};
	int err;

	if (!report_arrays_ok(r))
		return -EINVAL;
	wb_put(&b, hdr, sizeof(hdr)); /* the size is filled in once known */
	put_process(&b, r);
	put_records(&b, r);
	put_symbols(&b, r);
	if (b.err) {
		err = b.err;
		goto out_free;
	}
	hdr[1] = b.len - CHUNK_HDR_SIZE;
	memcpy(b.p, hdr, sizeof(hdr));
	err = write_all(f, b.p, b.len);
out_free:
	free(b.p);
	return err;
}

/* ---- Reading ---- */

/* Memory of one decoded report, freed whole before the next is read. */
struct arena_block {
	struct arena_block *next;
	size_t cap;
	size_t used;
	max_align_t data[];
};

struct jw_raw_reader {
	FILE *f;
	char *path;
	uint64_t off;	    /* bytes consumed from the file */
	unsigned char *buf; /* the current chunk's payload */
	size_t cap;
	struct arena_block *arena;
	int err; /* once a chunk is bad, the stream is lost: it sticks */
};

/* @align is a power of two. NULL when out of memory. */
static void *arena_alloc(struct arena_block **head, size_t n, size_t align)
{
	struct arena_block *b = *head;
	size_t off, cap;

	if (b) {
		off = (b->used + align - 1) & ~(align - 1);
		if (off <= b->cap && n <= b->cap - off) {
			b->used = off + n;
			return (unsigned char *)b->data + off;
		}
	}
	cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
	b = malloc(sizeof(*b) + cap);
	if (!b)
		return NULL;
	b->next = *head;
	b->cap = cap;
	b->used = n;
	*head = b;
	return b->data;
}

static void arena_free(struct arena_block **head)
{
	struct arena_block *b, *next;

	for (b = *head; b; b = next) {
		next = b->next;
		free(b);
	}
	*head = NULL;
}

/*
 * Bounds-checked reading of one payload. The first error sticks and later reads yield zeroes
 * and NULLs, so decoders check once at the end; counts read after an error are 0, so nothing
 * is allocated from a garbage count.
 */
struct cursor {
	const unsigned char *start;
	const unsigned char *p;
	size_t left;
	struct arena_block **arena;
	int err;    /* -EPROTO: damaged; -ENOMEM */
	size_t bad; /* offset in the payload of the field that failed */
};

static void fail(struct cursor *c, int err)
{
	if (c->err)
		return;
	c->err = err;
	c->bad = c->p - c->start;
}

static void get(struct cursor *c, void *dst, size_t n)
{
	if (c->err || n > c->left) {
		fail(c, -EPROTO);
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
}

static uint32_t get_u32(struct cursor *c)
{
	uint32_t v;

	get(c, &v, sizeof(v));
	return v;
}

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v;

	get(c, &v, sizeof(v));
	return v;
}

/*
 * A count of entries that each take at least @min_size bytes: one the rest of the payload
 * cannot hold is damage, caught before anything is allocated for it.
 */
static size_t get_count(struct cursor *c, size_t min_size)
{
	uint32_t n = get_u32(c);

	if (c->err)
		return 0;
	if (n > MAX_COUNT || n > c->left / min_size) {
		fail(c, -EPROTO);
		return 0;
	}
	return n;
}

/* Room for @n entries of @size bytes; n <= MAX_COUNT and size is small, so no overflow. */
static void *get_array(struct cursor *c, size_t n, size_t size)
{
	void *p;

	if (c->err || !n)
		return NULL;
	p = arena_alloc(c->arena, n * size, ARRAY_ALIGN);
	if (!p)
		fail(c, -ENOMEM);
	return p;
}

/* A NUL-terminated copy: the payload's strings are not terminated. */
static const char *get_str(struct cursor *c)
{
	uint32_t n = get_u32(c);
	char *s;

	if (c->err || n == NULL_STR)
		return NULL;
	/* A NUL inside would silently cut the name short: damage. */
	if (n > c->left || memchr(c->p, '\0', n)) {
		fail(c, -EPROTO);
		return NULL;
	}
	s = arena_alloc(c->arena, (size_t)n + 1, 1);
	if (!s) {
		fail(c, -ENOMEM);
		return NULL;
	}
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	c->left -= n;
	return s;
}

/* An aligned copy, since the caller reads the record through its struct; NULL when empty. */
static const void *get_blob(struct cursor *c, size_t *size)
{
	uint32_t n = get_u32(c);
	void *p;

	*size = 0;
	if (c->err || !n)
		return NULL;
	if (n > c->left) {
		fail(c, -EPROTO);
		return NULL;
	}
	p = arena_alloc(c->arena, n, ARRAY_ALIGN);
	if (!p) {
		fail(c, -ENOMEM);
		return NULL;
	}
	memcpy(p, c->p, n);
	c->p += n;
	c->left -= n;
	*size = n;
	return p;
}

static void get_process(struct cursor *c, struct jw_raw_report *r)
{
	const char **handlers;
	size_t i, n;

	r->verdict = get_u32(c);
	r->time_ms = get_u64(c);
	r->pid = get_u32(c);
	r->tid = get_u32(c);
	r->uid = get_u32(c);
	r->start_jiffies = get_u64(c);
	r->start_boot_ns = get_u64(c);
	r->comm = get_str(c);
	r->exe = get_str(c);
	n = get_count(c, sizeof(uint32_t));
	handlers = get_array(c, n, sizeof(*handlers));
	for (i = 0; i < n && !c->err; i++)
		handlers[i] = get_str(c);
	r->handlers = handlers;
	r->n_handlers = n;
}

static void get_modules(struct cursor *c, struct jw_raw_report *r)
{
	struct jw_raw_module *mods;
	size_t i, n;

	n = get_count(c, 2 * sizeof(uint32_t) + 2 * sizeof(uint64_t));
	mods = get_array(c, n, sizeof(*mods));
	for (i = 0; i < n && !c->err; i++) {
		mods[i].path = get_str(c);
		mods[i].build_id = get_str(c);
		mods[i].start = get_u64(c);
		mods[i].end = get_u64(c);
	}
	r->modules = mods;
	r->n_modules = n;
}

static void get_records(struct cursor *c, struct jw_raw_report *r)
{
	const void **samples;
	size_t *sizes;
	size_t i, n;

	r->task = get_blob(c, &r->task_size);
	n = get_count(c, sizeof(uint32_t));
	samples = get_array(c, n, sizeof(*samples));
	sizes = get_array(c, n, sizeof(*sizes));
	for (i = 0; i < n && !c->err; i++)
		samples[i] = get_blob(c, &sizes[i]);
	r->samples = samples;
	r->sample_sizes = sizes;
	r->n_samples = n;
}

static void get_symbols(struct cursor *c, struct jw_raw_report *r)
{
	struct jw_raw_ksym *ksyms;
	struct jw_raw_jit *jits;
	size_t i, n;

	n = get_count(c, sizeof(uint64_t) + sizeof(uint32_t));
	ksyms = get_array(c, n, sizeof(*ksyms));
	for (i = 0; i < n && !c->err; i++) {
		ksyms[i].addr = get_u64(c);
		ksyms[i].name = get_str(c);
	}
	r->ksyms = ksyms;
	r->n_ksyms = n;

	n = get_count(c, 2 * sizeof(uint64_t) + sizeof(uint32_t));
	jits = get_array(c, n, sizeof(*jits));
	for (i = 0; i < n && !c->err; i++) {
		jits[i].start = get_u64(c);
		jits[i].size = get_u64(c);
		jits[i].name = get_str(c);
	}
	r->jits = jits;
	r->n_jits = n;
}

/* Decodes the report in rd->buf (@size bytes, from file offset @at). 1 or -errno. */
static int decode_report(struct jw_raw_reader *rd, uint32_t type, size_t size, uint64_t at,
			 struct jw_raw_report *r, char *err, size_t errlen)
{
	struct cursor c = {rd->buf, rd->buf, size, &rd->arena, 0, 0};

	get_process(&c, r);
	get_modules(&c, r);
	get_records(&c, r);
	get_symbols(&c, r);
	if (type == CHUNK_REPORT_LOOP)
		r->loop = get_str(&c);
	if (!c.err && c.left)
		fail(&c, -EPROTO);
	if (!c.err)
		return 1;
	memset(r, 0, sizeof(*r));
	if (c.err == -EPROTO)
		jw_set_err(err, errlen,
			"%s: corrupt report in the chunk at byte %" PRIu64 ", at byte %" PRIu64,
			rd->path, at, at + CHUNK_HDR_SIZE + c.bad);
	else
		jw_set_err(err, errlen, "%s: %s", rd->path, strerror(-c.err));
	return c.err;
}

/* Reads up to @n bytes; *got short of @n means end of file. 0 or -errno. */
static int read_bytes(struct jw_raw_reader *rd, void *dst, size_t n, size_t *got)
{
	errno = 0;
	*got = fread(dst, 1, n, rd->f);
	rd->off += *got;
	if (*got < n && ferror(rd->f))
		return errno ? -errno : -EIO;
	return 0;
}

static int reserve(struct jw_raw_reader *rd, size_t n)
{
	unsigned char *p;
	size_t cap;

	if (n <= rd->cap)
		return 0;
	cap = rd->cap * 2 > n ? rd->cap * 2 : n;
	p = realloc(rd->buf, cap);
	if (!p)
		return -ENOMEM;
	rd->buf = p;
	rd->cap = cap;
	return 0;
}

/*
 * Reads @size bytes into rd->buf, growing it as the data arrives so that a damaged size costs
 * no more memory than the file holds. 0, -EPROTO at end of file, or -errno.
 */
static int read_payload(struct jw_raw_reader *rd, size_t size)
{
	size_t have = 0, want, got;
	int ret;

	while (have < size) {
		want = size - have < READ_STEP ? size - have : READ_STEP;
		ret = reserve(rd, have + want);
		if (ret)
			return ret;
		ret = read_bytes(rd, rd->buf + have, want, &got);
		if (ret)
			return ret;
		have += got;
		if (got < want)
			return -EPROTO;
	}
	return 0;
}

/* The message for a failed read of the thing at file offset @at. Returns @ret. */
static int read_failed(struct jw_raw_reader *rd, int ret, const char *what, uint64_t at, char *err,
		       size_t errlen)
{
	if (ret == -EPROTO)
		jw_set_err(err, errlen,
			"%s: truncated %s at byte %" PRIu64 ": the file ends at byte %" PRIu64,
			rd->path, what, at, rd->off);
	else
		jw_set_err(err, errlen, "%s: cannot read the %s at byte %" PRIu64 ": %s", rd->path,
			what, at, strerror(-ret));
	return ret;
}

/* Reads one chunk into rd->buf. 1, 0 at a clean end of file, or -errno. */
static int read_chunk(struct jw_raw_reader *rd, uint32_t *type, uint32_t *size, uint64_t *at,
		      char *err, size_t errlen)
{
	unsigned char hdr[CHUNK_HDR_SIZE];
	size_t got;
	int ret;

	*at = rd->off;
	ret = read_bytes(rd, hdr, sizeof(hdr), &got);
	if (!ret && !got)
		return 0;
	if (!ret && got < sizeof(hdr))
		ret = -EPROTO;
	if (ret)
		return read_failed(rd, ret, "chunk", *at, err, errlen);
	memcpy(type, hdr, sizeof(*type));
	memcpy(size, hdr + sizeof(*type), sizeof(*size));
	if (*size > MAX_PAYLOAD) {
		jw_set_err(err, errlen,
			"%s: corrupt chunk at byte %" PRIu64 ": %" PRIu32 " bytes long", rd->path,
			*at, *size);
		return -EPROTO;
	}
	ret = read_payload(rd, *size);
	if (ret)
		return read_failed(rd, ret, "chunk", *at, err, errlen);
	return 1;
}

int jw_raw_next(struct jw_raw_reader *rd, struct jw_raw_report *r, char *err, size_t errlen)
{
	uint32_t type, size;
	uint64_t at;
	int ret;

	memset(r, 0, sizeof(*r));
	arena_free(&rd->arena);
	if (rd->err) {
		jw_set_err(err, errlen, "%s: no reports past the damage reported before", rd->path);
		return rd->err;
	}
	do
		ret = read_chunk(rd, &type, &size, &at, err, errlen);
	while (ret == 1 && type != CHUNK_REPORT && type != CHUNK_REPORT_LOOP);
	if (ret == 1)
		ret = decode_report(rd, type, size, at, r, err, errlen);
	if (ret < 0)
		rd->err = ret;
	return ret;
}

/* Checks the magic, version and header size, then decodes the fields this version knows. */
static int read_header(struct jw_raw_reader *rd, struct jw_raw_header *h, char *err, size_t errlen)
{
	unsigned char pre[PREAMBLE_SIZE];
	uint32_t version, fields;
	struct cursor c;
	size_t got;
	int ret;

	ret = read_bytes(rd, pre, sizeof(pre), &got);
	if (ret)
		return read_failed(rd, ret, "header", 0, err, errlen);
	if (memcmp(pre, raw_magic, got < sizeof(raw_magic) ? got : sizeof(raw_magic))) {
		jw_set_err(err, errlen, "%s: not a jankwatch raw capture", rd->path);
		return -EPROTO;
	}
	if (got < sizeof(pre))
		return read_failed(rd, -EPROTO, "header", 0, err, errlen);
	memcpy(&version, pre + 8, sizeof(version));
	memcpy(&fields, pre + 12, sizeof(fields));
	if (version > JW_RAW_VERSION && __builtin_bswap32(version) <= JW_RAW_VERSION) {
		jw_set_err(err, errlen, "%s: raw capture of the other byte order", rd->path);
		return -EPROTO;
	}
	if (version > JW_RAW_VERSION) {
		jw_set_err(err, errlen,
			"%s: raw capture version %" PRIu32 ", this jankwatch reads up to %d",
			rd->path, version, JW_RAW_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (!version || fields < HEADER_FIELDS_SIZE || fields > MAX_HEADER_FIELDS) {
		jw_set_err(err, errlen,
			"%s: corrupt raw capture header (version %" PRIu32 ", %" PRIu32 " bytes)",
			rd->path, version, fields);
		return -EPROTO;
	}
	ret = read_payload(rd, fields);
	if (ret)
		return read_failed(rd, ret, "header", 0, err, errlen);
	c = (struct cursor){rd->buf, rd->buf, fields, NULL, 0, 0};
	h->version = version;
	h->sample_count = get_u32(&c);
	h->format = get_u32(&c);
	h->sample_period_ms = get_u32(&c);
	h->realtime_off_ns = (int64_t)get_u64(&c);
	h->boottime_off_ns = (int64_t)get_u64(&c);
	return 0;
}

struct jw_raw_reader *jw_raw_open(const char *path, struct jw_raw_header *h, char *err,
				  size_t errlen)
{
	struct jw_raw_reader *rd;
	int ret;

	rd = calloc(1, sizeof(*rd));
	if (!rd || !(rd->path = strdup(path))) {
		ret = -ENOMEM;
		jw_set_err(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto err_close;
	}
	rd->f = fopen(path, "rb");
	if (!rd->f) {
		ret = -errno;
		jw_set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto err_close;
	}
	ret = read_header(rd, h, err, errlen);
	if (ret)
		goto err_close;
	return rd;

err_close:
	jw_raw_close(rd);
	errno = -ret;
	return NULL;
}

void jw_raw_close(struct jw_raw_reader *rd)
{
	if (!rd)
		return;
	if (rd->f)
		fclose(rd->f);
	arena_free(&rd->arena);
	free(rd->buf);
	free(rd->path);
	free(rd);
}
