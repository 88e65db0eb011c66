/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The offsets from CLOCK_MONOTONIC (BPF's clock) to the clocks reports are written in, with the
 * offsets they had before their last steps: the wall clock is stepped (NTP's first answer, a
 * phone's network time, a virtual machine restored from a snapshot) and the boot clock runs on
 * through a suspend, while the monotonic clock does neither. A time converts with the offset of
 * its own moment, as the wall clock read then would have said it.
 */
#ifndef JW_CLOCKS_H
#define JW_CLOCKS_H

#include <stdint.h>
#include <time.h>

#define JW_CLOCKS_STEPS 8

/* The offsets in force until monotonic time @until_ns, when a reading found them moved. */
struct jw_clocks_was {
	uint64_t until_ns;
	int64_t realtime_ns;
	int64_t boottime_ns;
};

struct jw_clocks {
	int64_t realtime_ns;	/* the offsets at the last reading */
	int64_t boottime_ns;
	struct jw_clocks_was was[JW_CLOCKS_STEPS];	/* the last steps', oldest first */
	unsigned int n_was;
	uint64_t steps;		/* seen since the first reading; the last at was[n_was - 1] */
};

/* Clock @id now, in ns. */
int64_t jw_clock_ns(clockid_t id);

/* Reads the offsets, each bracketed between two monotonic readings; no steps before them. */
void jw_clocks_init(struct jw_clocks *c);

/*
 * Reads the offsets again. A move of either by 1 ms or more is a step: the offsets before it are
 * kept for the times before this reading (the last JW_CLOCKS_STEPS of them). Returns how far the
 * wall clock stepped against the monotonic one, in ns; 0 when it did not.
 */
int64_t jw_clocks_update(struct jw_clocks *c);

/* jw_clocks_update()'s logic, with the offsets read at monotonic time @mono_ns given. */
int64_t jw_clocks_note(struct jw_clocks *c, uint64_t mono_ns, int64_t realtime_ns,
		       int64_t boottime_ns);

/* The offsets in force at monotonic time @mono_ns (a step is placed at the reading that saw it). */
int64_t jw_clocks_realtime_at(const struct jw_clocks *c, uint64_t mono_ns);
int64_t jw_clocks_boottime_at(const struct jw_clocks *c, uint64_t mono_ns);

/* A monotonic time as milliseconds since the epoch, by the wall clock of that moment. */
static inline uint64_t jw_clocks_epoch_ms(const struct jw_clocks *c, uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + jw_clocks_realtime_at(c, mono_ns)) / 1000000ULL;
}

#endif
