// SPDX-License-Identifier: GPL-2.0-only
/*
 * The followed processes: a dense array (walked whole by due() and each(), as long as the
 * processes followed now, however many came and went) and an open-addressing index by pid
 * (linear probing, deletion by shifting the slots after back: no tombstones, so a storm of short
 * processes never degrades it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "process/proctree.h"

/*
 * A pending process is looked at every 50 ms for its first 5 s (a loop that starts late or waits
 * briefly is still caught before the start-up window, at least 3 s, is over), every 250 ms up
 * to 30 s, then once a second (a shell, nginx's master: they may never run a loop).
 */
#define YOUNG_NS 5000000000ULL
#define YOUNG_LOOK_NS 50000000ULL
#define SETTLED_NS 30000000000ULL
#define SETTLED_LOOK_NS 250000000ULL
#define OLD_LOOK_NS 1000000000ULL

struct jw_proctree {
	struct jw_pentry *items;	/* the entries, dense: due() and each() walk n of them */
	uint32_t *index;		/* open addressing by pid: item + 1, 0 free */
	size_t mask;			/* index slots - 1, a power of two - 1 */
	size_t n, cap;
	struct jw_proctree_counts counts;
};

struct jw_proctree *jw_proctree__new(size_t cap)
{
	struct jw_proctree *t = calloc(1, sizeof(*t));
	size_t size = 8;

	if (!t)
		return NULL;
	while (size < 2 * cap)
		size *= 2;
	t->items = calloc(cap ? cap : 1, sizeof(*t->items));
	t->index = calloc(size, sizeof(*t->index));
	if (!t->items || !t->index) {
		jw_proctree__free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->mask = size - 1;
	t->cap = cap;
	return t;
}

void jw_proctree__free(struct jw_proctree *t)
{
	if (!t)
		return;
	free(t->items);
	free(t->index);
	free(t);
}

static size_t home(const struct jw_proctree *t, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & t->mask;
}

/* The index slot holding @pid, or the free slot where it would go. */
static size_t find(const struct jw_proctree *t, pid_t pid)
{
	size_t i = home(t, pid);

	while (t->index[i] && t->items[t->index[i] - 1].pid != pid)
		i = (i + 1) & t->mask;
	return i;
}

struct jw_pentry *jw_proctree__get(struct jw_proctree *t, pid_t pid)
{
	size_t i;

	if (pid <= 0)
		return NULL;
	i = find(t, pid);
	return t->index[i] ? &t->items[t->index[i] - 1] : NULL;
}

uint64_t jw_proctree_look_delay_ns(uint64_t age_ns)
{
	if (age_ns < YOUNG_NS)
		return YOUNG_LOOK_NS;
	return age_ns < SETTLED_NS ? SETTLED_LOOK_NS : OLD_LOOK_NS;
}

struct jw_pentry *jw_proctree__add(struct jw_proctree *t, pid_t pid, uint64_t start_boot_ns,
				   enum jw_pwhy why, pid_t parent, uint64_t now)
{
	struct jw_pentry *e;
	size_t i;

	if (pid <= 0)
		return NULL;
	i = find(t, pid);
	if (!t->index[i]) {
		if (t->n == t->cap) {
			t->counts.full++;
			return NULL;
		}
		t->index[i] = ++t->n;
	}
	e = &t->items[t->index[i] - 1];
	*e = (struct jw_pentry){
		.pid = pid,
		.parent = parent,
		.start_boot_ns = start_boot_ns,
		.since_ns = now,
		.next_ns = now,
		.why = why,
	};
	t->counts.forked += why == JW_PWHY_FORKED;
	t->counts.execs += why == JW_PWHY_EXECED;
	t->counts.named += why == JW_PWHY_NAMED;
	return e;
}

void jw_proctree__named(struct jw_proctree *t, struct jw_pentry *e, uint64_t now)
{
	t->counts.named++;
	if (e->watched)
		return;
	e->why = JW_PWHY_NAMED;
	e->since_ns = e->next_ns = now;
	e->looks = e->failures = 0;
}

void jw_proctree__exec(struct jw_proctree *t, struct jw_pentry *e, uint64_t now)
{
	t->counts.execs++;
	if (!e)
		return;
	e->watched = false;
	e->why = JW_PWHY_EXECED;
	e->since_ns = e->next_ns = now;
	e->looks = e->failures = 0;
}

void jw_proctree__later(struct jw_proctree *t, struct jw_pentry *e, bool failed, uint64_t now)
{
	(void)t;
	e->failures += failed;
	e->looks++;
	e->next_ns = now + jw_proctree_look_delay_ns(now > e->since_ns ? now - e->since_ns : 0);
}

void jw_proctree__watched(struct jw_proctree *t, struct jw_pentry *e)
{
	t->counts.watched++;
	e->watched = e->counted = true;
	e->next_ns = UINT64_MAX;
}

void jw_proctree__parked(struct jw_proctree *t, struct jw_pentry *e)
{
	(void)t;
	e->watched = false;
	e->why = JW_PWHY_FOLLOWED;
	e->next_ns = UINT64_MAX;
}

void jw_proctree__remove(struct jw_proctree *t, pid_t pid, bool exited)
{
	size_t i, j, item;

	if (pid <= 0)
		return;
	i = find(t, pid);
	if (!t->index[i])
		return;
	item = t->index[i] - 1;
	if (exited) {
		t->counts.exited++;
		t->counts.exited_unwatched += !t->items[item].counted;
	}
	/* Shift back every index slot after it whose home is not between the hole and itself. */
	for (j = (i + 1) & t->mask; t->index[j]; j = (j + 1) & t->mask) {
		size_t h = home(t, t->items[t->index[j] - 1].pid);

		if (((j - h) & t->mask) >= ((j - i) & t->mask)) {
			t->index[i] = t->index[j];
			i = j;
		}
	}
	t->index[i] = 0;
	/* Then the last entry fills its place in the dense array. */
	if (item != t->n - 1) {
		t->items[item] = t->items[t->n - 1];
		t->index[find(t, t->items[item].pid)] = item + 1;
	}
	t->n--;
}

size_t jw_proctree__due(const struct jw_proctree *t, uint64_t now, pid_t *pids, size_t max,
			uint64_t *next_ns)
{
	size_t i, n = 0;

	*next_ns = UINT64_MAX;
	for (i = 0; i < t->n; i++) {
		const struct jw_pentry *e = &t->items[i];

		if (e->next_ns == UINT64_MAX)
			continue;
		if (e->next_ns <= now && n < max)
			pids[n++] = e->pid;
		else if (e->next_ns < *next_ns)
			*next_ns = e->next_ns;
	}
	return n;
}

size_t jw_proctree__size(const struct jw_proctree *t)
{
	return t->n;
}

void jw_proctree__each(struct jw_proctree *t, void (*fn)(struct jw_pentry *e, void *ctx),
		       void *ctx)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		fn(&t->items[i], ctx);
}

const struct jw_proctree_counts *jw_proctree__counts(const struct jw_proctree *t)
{
	return &t->counts;
}
