// SPDX-License-Identifier: GPL-2.0-only
/* Handler sites hooked in windows: the rows' counts scaled to the loop's iterations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/sitescale.h"

static uint64_t key_hash(const struct jw_stats_key *key)
{
	return jw_hash_bytes(0, key, sizeof(*key));
}

static bool same_key(const struct jw_stats_key *a, const struct jw_stats_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The index of row @key in @x, or -1. */
static long extras_find(const struct jw_row_extras *x, const struct jw_stats_key *key)
{
	uint32_t *at = jw_hindex_get(&x->at, key_hash(key));
	size_t i;

	if (!at)
		return -1;
	if (same_key(&x->rows[*at].key, key))
		return *at;
	/* Another row of this hash: every row is looked at. */
	for (i = 0; i < x->n; i++)
		if (same_key(&x->rows[i].key, key))
			return (long)i;
	return -1;
}

uint64_t jw_row_extras_get(const struct jw_row_extras *x, const struct jw_stats_key *key)
{
	long i = x->n ? extras_find(x, key) : -1;

	return i < 0 ? 0 : x->rows[i].add;
}

int jw_row_extras_add(struct jw_row_extras *x, const struct jw_stats_key *key, uint64_t add)
{
	long i = extras_find(x, key);
	uint64_t h = key_hash(key);

	if (i >= 0) {
		x->rows[i].add += add;
		return 0;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct jw_row_extra *bigger = realloc(x->rows, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		x->rows = bigger;
		x->cap = cap;
	}
	/* A hash already taken keeps its first row: the others are found by the search. */
	if (!jw_hindex_get(&x->at, h) && jw_hindex_put(&x->at, h, (uint32_t)x->n))
		return -ENOMEM;
	x->rows[x->n++] = (struct jw_row_extra){ .key = *key, .add = add };
	return 0;
}

void jw_row_extras_forget(struct jw_row_extras *x, pid_t pid)
{
	size_t i, kept = 0;

	for (i = 0; i < x->n; i++)
		if (pid && x->rows[i].key.pid != (uint32_t)pid)
			x->rows[kept++] = x->rows[i];
	x->n = kept;
	/* The index again, of the rows kept. */
	jw_hindex_free(&x->at);
	for (i = 0; i < x->n; i++) {
		uint64_t h = key_hash(&x->rows[i].key);

		if (!jw_hindex_get(&x->at, h) && jw_hindex_put(&x->at, h, (uint32_t)i)) {
			/* Out of memory: what is added goes, rather than be added to the wrong row. */
			x->n = 0;
			jw_hindex_free(&x->at);
			return;
		}
	}
}

void jw_row_extras_free(struct jw_row_extras *x)
{
	free(x->rows);
	jw_hindex_free(&x->at);
	memset(x, 0, sizeof(*x));
}

/* Row @key's count in @rows (@n), or @none when it is not there. */
static uint64_t count_of(const struct jw_row_count *rows, size_t n, const struct jw_stats_key *key,
			 uint64_t none)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (same_key(&rows[i].key, key))
			return rows[i].count;
	return none;
}

int jw_sitescale_open(struct jw_sitescale *sc, const struct jw_row_count *now, size_t n,
		      uint64_t iters, struct jw_row_extras *x)
{
	struct jw_row_count *begin;

	if (sc->n) {
		uint64_t *counts = malloc(sc->n * sizeof(*counts));
		size_t i;

		/* Settled on the counts now; without memory, where the last update left it. */
		if (counts) {
			for (i = 0; i < sc->n; i++)
				counts[i] = count_of(now, n, &sc->rows[i].key, sc->rows[i].at_end);
			jw_sitescale_gap(sc, counts, iters, x);
			free(counts);
		}
		sc->n = 0;
	}
	sc->open = false;
	begin = realloc(sc->begin, (n ? n : 1) * sizeof(*begin));
	if (!begin)
		return -ENOMEM;
	if (n)
		memcpy(begin, now, n * sizeof(*begin));
	sc->begin = begin;
	sc->n_begin = n;
	sc->iters_begin = iters;
	sc->open = true;
	return 0;
}

int jw_sitescale_close(struct jw_sitescale *sc, const struct jw_row_count *now, size_t n,
		       uint64_t iters)
{
	struct jw_scaled_row *rows;
	size_t i, kept = 0;

	if (!sc->open)
		return 0;
	sc->open = false;
	sc->n = 0;
	/* Counts that went back, or no iteration: the rows were reset, or nothing to scale by. */
	if (iters <= sc->iters_begin)
		return 0;
	rows = realloc(sc->rows, (n ? n : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	sc->rows = rows;
	for (i = 0; i < n; i++) {
		uint64_t before = count_of(sc->begin, sc->n_begin, &now[i].key, 0);

		if (now[i].count < before)
			return 0;
		if (now[i].count == before)
			continue;
		rows[kept++] = (struct jw_scaled_row){ .key = now[i].key,
						       .in_window = now[i].count - before,
						       .at_end = now[i].count };
	}
	sc->n = kept;
	sc->iters_window = iters - sc->iters_begin;
	sc->iters_end = iters;
	return 0;
}

void jw_sitescale_gap(struct jw_sitescale *sc, const uint64_t *counts, uint64_t iters,
		      struct jw_row_extras *x)
{
	size_t i;

	if (!sc->n)
		return;
	if (iters < sc->iters_end) {
		sc->n = 0;
		return;
	}
	for (i = 0; i < sc->n; i++) {
		struct jw_scaled_row *r = &sc->rows[i];
		double est = (double)r->in_window * (double)(iters - sc->iters_end) /
			     (double)sc->iters_window;
		uint64_t counted, want;

		if (counts[i] < r->at_end) {
			sc->n = 0;
			return;
		}
		counted = counts[i] - r->at_end;
		want = est > (double)counted ? (uint64_t)(est - (double)counted) : 0;
		if (want > r->given && !jw_row_extras_add(x, &r->key, want - r->given))
			r->given = want;
	}
}

void jw_sitescale_reset(struct jw_sitescale *sc)
{
	sc->open = false;
	sc->n = 0;
	sc->n_begin = 0;
}

void jw_sitescale_free(struct jw_sitescale *sc)
{
	free(sc->begin);
	free(sc->rows);
	memset(sc, 0, sizeof(*sc));
}

struct jw_sites_plan jw_sites_plan(double rate, double most)
{
	struct jw_sites_plan p = { .window_ns = JW_SITES_WINDOW_NS };
	double every = (double)(uint64_t)(rate / most), max_every;

	every += every * most < rate;	/* rounded up */
	max_every = (double)(JW_SITES_MAX_PERIOD_NS / JW_SITES_MIN_WINDOW_NS);
	p.every = every > max_every ? (uint64_t)max_every : (uint64_t)every;
	if (p.every <= JW_SITES_MAX_EVERY) {
		p.period_ns = p.every * p.window_ns;
		return p;
	}
	p.window_ns = JW_SITES_MAX_EVERY * p.window_ns / p.every;
	if (p.window_ns < JW_SITES_MIN_WINDOW_NS)
		p.window_ns = JW_SITES_MIN_WINDOW_NS;
	p.period_ns = p.window_ns * p.every;
	return p;
}
