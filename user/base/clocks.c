// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/clocks.h"

#define STEP_NS 1000000		/* a move of an offset by this much is a step */
#define TIGHT_NS 2000		/* a bracket this narrow is not tried again */
#define LOOSE_NS 100000		/* one wider might hide a step's size */

int64_t jw_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Brackets each reading between two monotonic ones, the tightest of a few tries (a thread
 * preempted inside one would put the offset off by half the time it waited), so the offset is
 * off by tens of ns only; @mono_ns: the middle of the bracket. Returns the bracket's width.
 */
static int64_t offset_from_monotonic(clockid_t id, int64_t *offset_ns, int64_t *mono_ns)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 4 && best > TIGHT_NS; i++) {
		int64_t before = jw_clock_ns(CLOCK_MONOTONIC);
		int64_t other = jw_clock_ns(id);
		int64_t after = jw_clock_ns(CLOCK_MONOTONIC);

		if (after - before >= best)
			continue;
		best = after - before;
		*mono_ns = before + best / 2;
		*offset_ns = other - *mono_ns;
	}
	return best;
}

void jw_clocks_init(struct jw_clocks *c)
{
	int64_t mono;

	memset(c, 0, sizeof(*c));
	offset_from_monotonic(CLOCK_REALTIME, &c->realtime_ns, &mono);
	offset_from_monotonic(CLOCK_BOOTTIME, &c->boottime_ns, &mono);
}

static int64_t distance(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}

int64_t jw_clocks_note(struct jw_clocks *c, uint64_t mono_ns, int64_t realtime_ns,
		       int64_t boottime_ns)
{
	bool wall = distance(realtime_ns, c->realtime_ns) >= STEP_NS;
	bool boot = distance(boottime_ns, c->boottime_ns) >= STEP_NS;
	int64_t moved = wall ? realtime_ns - c->realtime_ns : 0;

	/*
	 * Tens of ns of reading noise are not kept: the offsets stay those of the last step; and a
	 * clock that did not step keeps its own where the other did, so that a time converts the
	 * same before and after a step of the other clock, however many of them came since.
	 */
	if (!wall && !boot)
		return 0;
	if (c->n_was == JW_CLOCKS_STEPS) {
		memmove(c->was, c->was + 1, sizeof(c->was) - sizeof(c->was[0]));
		c->n_was--;
	}
	c->was[c->n_was++] = (struct jw_clocks_was){
		.until_ns = mono_ns,
		.realtime_ns = c->realtime_ns,
		.boottime_ns = c->boottime_ns,
	};
	if (wall)
		c->realtime_ns = realtime_ns;
	if (boot)
		c->boottime_ns = boottime_ns;
	c->steps++;
	return moved;
}

int64_t jw_clocks_update(struct jw_clocks *c)
{
	int64_t mono, real, boot;

	/* Preempted in every try: a step cannot be told from the wait; the next reading will. */
	if (offset_from_monotonic(CLOCK_REALTIME, &real, &mono) > LOOSE_NS ||
	    offset_from_monotonic(CLOCK_BOOTTIME, &boot, &mono) > LOOSE_NS)
		return 0;
	return jw_clocks_note(c, (uint64_t)mono, real, boot);
}

/* The offsets of the first step still ahead of @mono_ns, or NULL: the present ones. */
static const struct jw_clocks_was *in_force(const struct jw_clocks *c, uint64_t mono_ns)
{
	unsigned int i;

	for (i = 0; i < c->n_was; i++)
		if (mono_ns < c->was[i].until_ns)
			return &c->was[i];
	return NULL;
}

int64_t jw_clocks_realtime_at(const struct jw_clocks *c, uint64_t mono_ns)
{
	const struct jw_clocks_was *w = in_force(c, mono_ns);

	return w ? w->realtime_ns : c->realtime_ns;
}

int64_t jw_clocks_boottime_at(const struct jw_clocks *c, uint64_t mono_ns)
{
	const struct jw_clocks_was *w = in_force(c, mono_ns);

	return w ? w->boottime_ns : c->boottime_ns;
}
