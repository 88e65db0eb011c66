// SPDX-License-Identifier: GPL-2.0-only
/* The raw capture written: a header, then one chunk a report (rawformat.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "jankwatch/abi.h"
#include "output/rawfile.h"
#include "output/rawformat.h"

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
	       array_ok(r->ksyms, r->n_ksyms) && array_ok(r->jits, r->n_jits) &&
	       array_ok(r->py_eval, r->n_py_eval) && array_ok(r->py_names, r->n_py_names);
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

/* A report with Python frames (CHUNK_REPORT_PY): what names them. */
static void put_python(struct wbuf *b, const struct jw_raw_report *r)
{
	size_t i;

	wb_str(b, r->py_module);
	wb_u32(b, r->py_entry_own);
	wb_u32(b, r->n_py_eval);
	for (i = 0; i < r->n_py_eval; i++) {
		wb_u64(b, r->py_eval[i].lo);
		wb_u64(b, r->py_eval[i].hi);
	}
	wb_u32(b, r->n_py_names);
	for (i = 0; i < r->n_py_names; i++) {
		wb_u64(b, r->py_names[i].code);
		wb_u64(b, r->py_names[i].instr);
		wb_str(b, r->py_names[i].name);
		wb_str(b, r->py_names[i].file);
		wb_u32(b, r->py_names[i].line);
	}
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
	wb_u32(&b, h->machine ? h->machine : JW_MACHINE);
	err = b.err ?: write_all(f, b.p, b.len);
	free(b.p);
	return err;
}

int jw_raw_write_report(FILE *f, const struct jw_raw_report *r)
{
	/* A report without Python frames stays readable by a jankwatch that knows none. */
	uint32_t hdr[2] = {r->py_module ? CHUNK_REPORT_PY : CHUNK_REPORT_LOOP, 0};
	struct wbuf b = {};
	int err;

	if (!report_arrays_ok(r))
		return -EINVAL;
	wb_put(&b, hdr, sizeof(hdr)); /* the size is filled in once known */
	put_process(&b, r);
	put_records(&b, r);
	put_symbols(&b, r);
	if (r->py_module)
		put_python(&b, r);
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


int jw_raw_write_clocks(FILE *f, uint64_t mono_ns, int64_t realtime_off_ns,
			int64_t boottime_off_ns)
{
	struct wbuf b = {};
	int err;

	wb_u32(&b, CHUNK_CLOCKS);
	wb_u32(&b, CHUNK_CLOCKS_SIZE);
	wb_u64(&b, mono_ns);
	wb_u64(&b, (uint64_t)realtime_off_ns);
	wb_u64(&b, (uint64_t)boottime_off_ns);
	err = b.err ?: write_all(f, b.p, b.len);
	free(b.p);
	return err;
}
