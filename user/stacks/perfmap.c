// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacks/perfmap.h"

#define READ_CHUNK (8 * JW_PERFMAP_LINE_MAX)
/* Lines merged at a time: bounds the scratch memory of reading a large map. */
#define BATCH_MAX 65536
#define ANONYMOUS "(anonymous)"

struct jw_perfmap {
	char *path;
	size_t max_entries;
	int fd;				/* -1 until the file is found */
	dev_t dev;			/* which file fd is, to notice a re-created one */
	ino_t ino;
	uint64_t offset;		/* bytes of complete lines consumed */
	bool skipping;			/* inside an over-long line: drop up to its newline */
	struct jw_perfmap_entry *entries;	/* sorted by start, never overlapping */
	size_t n;
	uint64_t bad_lines;
	uint64_t dropped;
	char *buf;			/* READ_CHUNK bytes */
};

/* Lines read by one refresh, in file order: a later one replaces what it overlaps. */
struct batch {
	struct jw_perfmap_entry *e;
	size_t n, cap;
};

/* One batch entry by address, with its place in the batch (its seq, from 1). */
struct span {
	uint64_t start, end;
	uint32_t seq;
};

/* ---- the map ---- */

struct jw_perfmap *jw_perfmap__open_file(const char *path, size_t max_entries)
{
	struct jw_perfmap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->fd = -1;
	map->max_entries = max_entries;
	map->path = strdup(path);
	map->buf = malloc(READ_CHUNK);
	if (!map->path || !map->buf) {
		jw_perfmap__free(map);
		errno = ENOMEM;
		return NULL;
	}
	return map;
}

static int read_nspid(pid_t pid, pid_t *nspid)
{
	char path[64], status[4096];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, status, sizeof(status) - 1);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	status[n] = '\0';
	return jw_perfmap_parse_nspid(status, nspid);
}

struct jw_perfmap *jw_perfmap__open(pid_t pid)
{
	char path[96];
	pid_t nspid;
	int ret;

	ret = read_nspid(pid, &nspid);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", pid, nspid);
	return jw_perfmap__open_file(path, JW_PERFMAP_MAX_ENTRIES);
}

static void free_entries(struct jw_perfmap_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free((char *)e[i].name);
}

/* Forgets every entry and starts over at the file's beginning. */
static void reset(struct jw_perfmap *map)
{
	free_entries(map->entries, map->n);
	free(map->entries);
	map->entries = NULL;
	map->n = 0;
	map->offset = 0;
	map->skipping = false;
}

void jw_perfmap__free(struct jw_perfmap *map)
{
	if (!map)
		return;
	reset(map);
	if (map->fd >= 0)
		close(map->fd);
	free(map->buf);
	free(map->path);
	free(map);
}

/*
 * Opens the file when it appears or was replaced (a new process with the same pid, a tool that
 * rewrote it); keeps reading the open one when the path is gone (the process exited). Returns
 * 0 with a readable fd, -ENOENT when there is no file yet, or -errno.
 */
static int open_current(struct jw_perfmap *map)
{
	struct stat st;
	int fd;

	if (lstat(map->path, &st))
		return map->fd >= 0 ? 0 : -errno;
	if (map->fd >= 0 && st.st_dev == map->dev && st.st_ino == map->ino)
		return 0;
	/* The target owns its /tmp: follow no link at the end, and never block on a FIFO. */
	fd = open(map->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return map->fd >= 0 ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return map->fd >= 0 ? 0 : -EINVAL;
	}
	if (map->fd >= 0)
		close(map->fd);
	map->fd = fd;
	map->dev = st.st_dev;
	map->ino = st.st_ino;
	reset(map);
	return 0;
}

/* Fills @e from line @l, its strings in one new block "name\0func\0src\0". 0 or -ENOMEM. */
static int make_entry(const struct jw_perfmap_line *l, struct jw_perfmap_entry *e)
{
	struct jw_perfmap_name nm;
	char *block;

	jw_perfmap_split_name(l->name, l->name_len, &nm);
	/* No function name: V8's anonymous function when it names a source, else the raw name. */
	if (!nm.func_len) {
		nm.func = nm.src ? ANONYMOUS : l->name;
		nm.func_len = nm.src ? strlen(ANONYMOUS) : l->name_len;
	}
	block = malloc(l->name_len + nm.func_len + nm.src_len + 3);
	if (!block)
		return -ENOMEM;
	*e = (struct jw_perfmap_entry){ .start = l->start, .size = l->size, .name = block };
	memcpy(block, l->name, l->name_len);
	block += l->name_len;
	*block++ = '\0';
	e->func = block;
	memcpy(block, nm.func, nm.func_len);
	block += nm.func_len;
	*block++ = '\0';
	if (nm.src) {
		e->src = block;
		memcpy(block, nm.src, nm.src_len);
		block += nm.src_len;
	}
	*block = '\0';
	return 0;
}

static int batch_push(struct batch *b, const struct jw_perfmap_line *l)
{
	int ret;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		void *e = realloc(b->e, cap * sizeof(*b->e));

		if (!e)
			return -ENOMEM;
		b->e = e;
		b->cap = cap;
	}
	ret = make_entry(l, &b->e[b->n]);
	if (!ret)
		b->n++;
	return ret;
}

/* One complete line (without its newline). Returns 0 or -ENOMEM. */
static int take_line(struct jw_perfmap *map, struct batch *b, const char *line, size_t len)
{
	struct jw_perfmap_line l;

	/* A NUL never comes from a JIT: a hole in the file, or not a perf map at all. */
	if (len > JW_PERFMAP_LINE_MAX || memchr(line, '\0', len) ||
	    jw_perfmap_parse_line(line, len, &l)) {
		map->bad_lines++;
		return 0;
	}
	if (map->n + b->n >= map->max_entries) {
		map->dropped++;
		return 0;
	}
	return batch_push(b, &l);
}

/*
 * Takes the complete lines of @len bytes at @buf. Returns the bytes consumed (a partial last
 * line is left for later) or -ENOMEM.
 */
static ssize_t take_lines(struct jw_perfmap *map, struct batch *b, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	int ret;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl) {
			/* A partial line can only grow: once too long, it is broken for good. */
			if (!map->skipping && end - p > JW_PERFMAP_LINE_MAX) {
				map->bad_lines++;
				map->skipping = true;
			}
			if (map->skipping)
				p = end;
			break;
		}
		if (!map->skipping) {
			ret = take_line(map, b, p, nl - p);
			if (ret)
				return ret;
		}
		map->skipping = false;
		p = nl + 1;
	}
	return p - buf;
}

/*
 * Reads from the consumed offset into @b, to the end of the file or until @b holds BATCH_MAX
 * lines. Returns 0 at the end, 1 when there is more, or -errno.
 */
static int read_new_lines(struct jw_perfmap *map, struct batch *b)
{
	ssize_t n, used;

	while (b->n < BATCH_MAX) {
		n = pread(map->fd, map->buf, READ_CHUNK, map->offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		used = take_lines(map, b, map->buf, n);
		if (used < 0)
			return used;
		map->offset += used;
		if (n < READ_CHUNK && used < n)
			return 0;	/* a partial line at the end: wait for the rest */
	}
	return 1;
}

/* ---- merging a batch: a later line replaces every earlier one it overlaps ---- */

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The first of @n spans (sorted by start) whose start is >= @addr. */
static size_t first_at_or_after(const struct span *s, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Iterative segment trees over n leaves at t[n .. 2n). Raises every leaf of [l, r) to v. */
static void seg_raise(uint32_t *t, size_t n, size_t l, size_t r, uint32_t v)
{
	for (l += n, r += n; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			t[l] = max_u32(t[l], v);
			l++;
		}
		if (r & 1) {
			r--;
			t[r] = max_u32(t[r], v);
		}
	}
}

/* The highest value raised onto leaf @i. */
static uint32_t seg_leaf(const uint32_t *t, size_t n, size_t i)
{
	uint32_t m = 0;

	for (i += n; i; i >>= 1)
		m = max_u32(m, t[i]);
	return m;
}

/* The highest leaf of [l, r) in a tree whose inner nodes hold their children's max. */
static uint32_t seg_max(const uint32_t *t, size_t n, size_t l, size_t r)
{
	uint32_t m = 0;

	for (l += n, r += n; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			m = max_u32(m, t[l++]);
		if (r & 1)
			m = max_u32(m, t[--r]);
	}
	return m;
}

/*
 * Marks in @dead the spans (sorted by start) that a later span overlaps. A span at i overlaps
 * those before it whose end is past its start, and those after it up to the first that starts
 * at or past its end: the first kind by raising ranges, the second by a range max, so that the
 * whole batch costs O(n log n) however the lines overlap.
 */
static int find_replaced(const struct span *s, size_t n, bool *dead)
{
	uint32_t *raised = calloc(2 * n, sizeof(*raised));
	uint32_t *seqs = calloc(2 * n, sizeof(*seqs));
	size_t i, *until = malloc(n * sizeof(*until));
	int ret = -ENOMEM;

	if (!raised || !seqs || !until)
		goto out;
	for (i = 0; i < n; i++) {
		until[i] = first_at_or_after(s, n, s[i].end);
		seg_raise(raised, n, i + 1, until[i], s[i].seq);
		seqs[n + i] = s[i].seq;
	}
	for (i = n - 1; i > 0; i--)
		seqs[i] = max_u32(seqs[2 * i], seqs[2 * i + 1]);
	for (i = 0; i < n; i++) {
		uint32_t later = max_u32(seg_leaf(raised, n, i), seg_max(seqs, n, i + 1, until[i]));

		dead[i] = later > s[i].seq;
	}
	ret = 0;
out:
	free(until);
	free(seqs);
	free(raised);
	return ret;
}

/* Merges the batch's spans (sorted) into their union, in place. Returns the union's count. */
static size_t span_union(struct span *s, size_t n)
{
	size_t i, u = 0;

	for (i = 0; i < n; i++) {
		if (u && s[i].start < s[u - 1].end) {
			if (s[i].end > s[u - 1].end)
				s[u - 1].end = s[i].end;
			continue;
		}
		s[u++] = s[i];
	}
	return u;
}

/* Whether [start, end) meets the union @u (sorted, disjoint). */
static bool meets_union(const struct span *u, size_t n, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = n;

	/* The first union span that ends past start. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && u[lo].start < end;
}

/*
 * Keeps the old entries no batch line overlaps (those it overlaps were freed by the JIT, even
 * when the line itself was replaced later in the batch) and the batch's survivors @keep
 * (sorted); both sets are disjoint, so a merge by start gives the new sorted array.
 */
static int merge_entries(struct jw_perfmap *map, struct batch *b, const struct span *keep,
			 size_t n_keep, const struct span *u, size_t n_u)
{
	size_t i = 0, j = 0, n = 0;
	struct jw_perfmap_entry *out;

	out = malloc((map->n + n_keep + 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < map->n || j < n_keep) {
		struct jw_perfmap_entry *old = i < map->n ? &map->entries[i] : NULL;

		if (old && meets_union(u, n_u, old->start, old->start + old->size)) {
			free((char *)old->name);
			i++;
		} else if (old && (j == n_keep || old->start < keep[j].start)) {
			out[n++] = *old;
			i++;
		} else {
			out[n++] = b->e[keep[j++].seq - 1];
		}
	}
	free(map->entries);
	map->entries = out;
	map->n = n;
	return 0;
}

/* Applies a batch to the map; the batch's entries end up in the map or freed. */
static int apply_batch(struct jw_perfmap *map, struct batch *b)
{
	struct span *s = malloc(b->n * sizeof(*s)), *keep = NULL;
	bool *dead = calloc(b->n, sizeof(*dead));
	size_t i, k = 0;
	int ret = -ENOMEM;

	if (!s || !dead)
		goto out;
	for (i = 0; i < b->n; i++) {
		s[i].start = b->e[i].start;
		s[i].end = b->e[i].start + b->e[i].size;
		s[i].seq = i + 1;
	}
	qsort(s, b->n, sizeof(*s), cmp_span);
	ret = find_replaced(s, b->n, dead);
	keep = malloc(b->n * sizeof(*keep));
	if (ret || !keep)
		goto out;
	for (i = 0; i < b->n; i++) {
		if (dead[i])
			free((char *)b->e[s[i].seq - 1].name);
		else
			keep[k++] = s[i];
	}
	ret = merge_entries(map, b, keep, k, s, span_union(s, b->n));
	if (ret)	/* the survivors were not taken: free them with the batch */
		for (i = 0; i < k; i++)
			free((char *)b->e[keep[i].seq - 1].name);
	b->n = 0;
out:
	free(keep);
	free(dead);
	free(s);
	return ret;
}

int jw_perfmap__refresh(struct jw_perfmap *map)
{
	struct batch b = { 0 };
	struct stat st;
	int ret, more;

	ret = open_current(map);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	/* Shorter than what was read: truncated and rewritten in place. */
	if (!fstat(map->fd, &st) && (uint64_t)st.st_size < map->offset)
		reset(map);
	do {
		more = read_new_lines(map, &b);
		ret = b.n ? apply_batch(map, &b) : 0;
	} while (more == 1 && !ret);
	free_entries(b.e, b.n);
	free(b.e);
	return more < 0 ? more : ret;
}

const struct jw_perfmap_entry *jw_perfmap__lookup(const struct jw_perfmap *map, uint64_t addr)
{
	size_t lo = 0, hi = map->n;
	const struct jw_perfmap_entry *e;

	/* The last entry that starts at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &map->entries[lo - 1];
	return addr - e->start < e->size ? e : NULL;
}

size_t jw_perfmap__count(const struct jw_perfmap *map)
{
	return map->n;
}

uint64_t jw_perfmap__bad_lines(const struct jw_perfmap *map)
{
	return map->bad_lines;
}

uint64_t jw_perfmap__dropped(const struct jw_perfmap *map)
{
	return map->dropped;
}

const char *jw_perfmap__path(const struct jw_perfmap *map)
{
	return map->path;
}
