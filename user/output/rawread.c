// SPDX-License-Identifier: GPL-2.0-only
/* The raw capture read back, every length and count checked (rawformat.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "jankwatch/abi.h"
#include "output/rawfile.h"
#include "output/rawformat.h"

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
	struct jw_clocks clocks;	/* the header's offsets, then the steps read */
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

/* The Python part of a CHUNK_REPORT_PY report. */
static void get_python(struct cursor *c, struct jw_raw_report *r)
{
	struct jw_raw_pyname *names;
	struct jw_raw_range *eval;
	size_t i, n;

	r->py_module = get_str(c);
	r->py_entry_own = get_u32(c) != 0;
	n = get_count(c, 2 * sizeof(uint64_t));
	eval = get_array(c, n, sizeof(*eval));
	for (i = 0; i < n && !c->err; i++) {
		eval[i].lo = get_u64(c);
		eval[i].hi = get_u64(c);
	}
	r->py_eval = eval;
	r->n_py_eval = n;
	n = get_count(c, 2 * sizeof(uint64_t) + 3 * sizeof(uint32_t));
	names = get_array(c, n, sizeof(*names));
	for (i = 0; i < n && !c->err; i++) {
		names[i].code = get_u64(c);
		names[i].instr = get_u64(c);
		names[i].name = get_str(c);
		names[i].file = get_str(c);
		names[i].line = get_u32(c);
	}
	r->py_names = names;
	r->n_py_names = n;
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
	if (type == CHUNK_REPORT_LOOP || type == CHUNK_REPORT_PY)
		r->loop = get_str(&c);
	if (type == CHUNK_REPORT_PY)
		get_python(&c, r);
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

/* Notes the step in rd->buf (@size bytes, from file offset @at). 1 or -EPROTO. */
static int decode_clocks(struct jw_raw_reader *rd, size_t size, uint64_t at, char *err,
			 size_t errlen)
{
	struct cursor c = {rd->buf, rd->buf, size, NULL, 0, 0};
	uint64_t mono = get_u64(&c);
	int64_t real = (int64_t)get_u64(&c), boot = (int64_t)get_u64(&c);

	/* A later revision may append fields: the ones known must be there. */
	if (c.err) {
		jw_set_err(err, errlen, "%s: corrupt clock step in the chunk at byte %" PRIu64,
			   rd->path, at);
		return -EPROTO;
	}
	jw_clocks_note(&rd->clocks, mono, real, boot);
	return 1;
}

const struct jw_clocks *jw_raw_clocks(const struct jw_raw_reader *rd)
{
	return &rd->clocks;
}

int jw_raw_next(struct jw_raw_reader *rd, struct jw_raw_report *r, char *err, size_t errlen)
{
	uint32_t type = 0, size = 0;
	uint64_t at;
	int ret;

	memset(r, 0, sizeof(*r));
	arena_free(&rd->arena);
	if (rd->err) {
		jw_set_err(err, errlen, "%s: no reports past the damage reported before", rd->path);
		return rd->err;
	}
	do {
		ret = read_chunk(rd, &type, &size, &at, err, errlen);
		if (ret == 1 && type == CHUNK_CLOCKS)
			ret = decode_clocks(rd, size, at, err, errlen);
	} while (ret == 1 && type != CHUNK_REPORT && type != CHUNK_REPORT_LOOP &&
		 type != CHUNK_REPORT_PY);
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
	if (!version || fields < (version == 1 ? HEADER_FIELDS_SIZE_V1 : HEADER_FIELDS_SIZE) ||
	    fields > MAX_HEADER_FIELDS) {
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
	h->machine = version == 1 ? JW_X86_64_MACHINE : get_u32(&c);
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
	rd->clocks.realtime_ns = h->realtime_off_ns;
	rd->clocks.boottime_ns = h->boottime_off_ns;
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
