// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics rows in the kernel: the watched threads' outermost rows in an array (by slot
 * and probe, no hashing on the task path), every other row in the hash; walked, reset, and
 * moved to the hash when a slot changes hands.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "attach/object.h"

/* Adds the counts of row @v to row @to (the OVERFLOW row, or a hash row met twice). */
static void merge_row(struct jw_stats_val *to, const struct jw_stats_val *v)
{
	size_t i;

	to->count += v->count;
	to->recorded += v->recorded;
	to->total_ns += v->total_ns;
	to->total_cpu_ns += v->total_cpu_ns;
	to->exceptions += v->exceptions;
	to->delay_count += v->delay_count;
	to->total_delay_ns += v->total_delay_ns;
	if (v->max_delay_ns > to->max_delay_ns)
		to->max_delay_ns = v->max_delay_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
	if (v->max_cpu_ns > to->max_cpu_ns)
		to->max_cpu_ns = v->max_cpu_ns;
	for (i = 0; i < JW_HIST_SLOTS; i++)
		to->hist[i] += v->hist[i];
}

void jw_attach_retire_outer_rows(struct jw_attach *a, uint32_t slot)
{
	const struct bpf_map *outer = a->skel->maps.stats_outer, *hash = a->skel->maps.stats;
	static const struct jw_stats_val zero;
	struct jw_stats_val v, old;
	uint32_t probe;

	for (probe = 0; probe < JW_MAX_PROBES; probe++) {
		__u32 idx = slot * JW_MAX_PROBES + probe;
		struct jw_stats_key key = { 0 };

		if (bpf_map__lookup_elem(outer, &idx, sizeof(idx), &v, sizeof(v), 0) || !v.count)
			continue;
		key.pid = v.pid;
		key.tid = v.tid;
		key.probe_id = probe;
		if (!bpf_map__lookup_elem(hash, &key, sizeof(key), &old, sizeof(old), 0)) {
			merge_row(&old, &v);
			v = old;
		}
		if (bpf_map__update_elem(hash, &key, sizeof(key), &v, sizeof(v), 0))
			merge_row((struct jw_stats_val *)&a->skel->bss->stats_overflow, &v);
		bpf_map__update_elem(outer, &idx, sizeof(idx), &zero, sizeof(zero), 0);
	}
}

int jw_attach__stats_each(const struct jw_attach *a, jw_stats_fn fn, void *ctx)
{
	const struct bpf_map *map = a->skel->maps.stats, *outer = a->skel->maps.stats_outer;
	struct jw_stats_key key, next;
	struct jw_stats_val v;
	void *prev = NULL;
	__u32 idx;
	int n = 0;

	/* The watched threads' outermost rows, keyed as they will be in the hash. */
	for (idx = 0; idx < bpf_map__max_entries(outer); idx++) {
		if (bpf_map__lookup_elem(outer, &idx, sizeof(idx), &v, sizeof(v), 0) || !v.count)
			continue;
		key = (struct jw_stats_key){ .pid = v.pid, .tid = v.tid,
					     .probe_id = idx % JW_MAX_PROBES };
		fn(&key, &v, ctx);
		n++;
	}
	/* A row deleted under the walk (a reset) restarts it; the map bounds the walk. */
	while (n < (int)(bpf_map__max_entries(map) + bpf_map__max_entries(outer)) &&
	       !bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0))
			continue;
		fn(&key, &v, ctx);
		n++;
	}
	memcpy(&v, (const void *)&a->skel->bss->stats_overflow, sizeof(v));
	if (v.count)
		fn(NULL, &v, ctx);
	return n;
}

uint64_t jw_attach__row_count(const struct jw_attach *a, const struct jw_stats_key *key)
{
	struct jw_stats_val v;

	if (bpf_map__lookup_elem(a->skel->maps.stats, key, sizeof(*key), &v, sizeof(v), 0))
		return 0;
	return v.count;
}

uint64_t jw_attach__outer_count(const struct jw_attach *a, uint32_t slot, uint32_t probe)
{
	__u32 idx = slot * JW_MAX_PROBES + (probe & (JW_MAX_PROBES - 1));
	struct jw_stats_val v;

	if (bpf_map__lookup_elem(a->skel->maps.stats_outer, &idx, sizeof(idx), &v, sizeof(v), 0))
		return 0;
	return v.count;
}

/* Zeroes the array rows of @pid (every one when 0); a thread starts its row anew at its next task. */
static void reset_outer_rows(struct jw_attach *a, pid_t pid)
{
	const struct bpf_map *outer = a->skel->maps.stats_outer;
	static const struct jw_stats_val zero;
	struct jw_stats_val v;
	__u32 idx;

	for (idx = 0; idx < bpf_map__max_entries(outer); idx++)
		if (!bpf_map__lookup_elem(outer, &idx, sizeof(idx), &v, sizeof(v), 0) && v.count &&
		    (!pid || v.pid == (uint32_t)pid))
			bpf_map__update_elem(outer, &idx, sizeof(idx), &zero, sizeof(zero), 0);
}

void jw_attach__stats_reset(struct jw_attach *a, pid_t pid)
{
	const struct bpf_map *map = a->skel->maps.stats;
	uint32_t n = 0, max = bpf_map__max_entries(map), i;
	struct jw_stats_key *keys = calloc(max, sizeof(*keys)), cur, last;
	void *prev = NULL;

	/* The keys first: deleting under a walk would restart it. */
	while (keys && n < max && !bpf_map__get_next_key(map, prev, &cur, sizeof(cur))) {
		if (!pid || cur.pid == (uint32_t)pid)
			keys[n++] = cur;
		last = cur;
		prev = &last;
	}
	for (i = 0; i < n; i++)
		bpf_map__delete_elem(map, &keys[i], sizeof(keys[i]), 0);
	free(keys);
	reset_outer_rows(a, pid);
	if (!pid)
		memset((void *)&a->skel->bss->stats_overflow, 0,
		       sizeof(a->skel->bss->stats_overflow));
}
