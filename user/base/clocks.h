/* SPDX-License-Identifier: GPL-2.0-only */
/* The offsets from CLOCK_MONOTONIC (BPF's clock) to the clocks reports are written in. */
#ifndef JW_CLOCKS_H
#define JW_CLOCKS_H

#include <stdint.h>
#include <time.h>

struct jw_clocks {
	int64_t realtime_ns;
	int64_t boottime_ns;
};

/* Clock @id now, in ns. */
int64_t jw_clock_ns(clockid_t id);

/* Reads the offsets once, each bracketed between two monotonic readings. */
void jw_clocks_init(struct jw_clocks *c);

/* A monotonic time as milliseconds since the epoch. */
static inline uint64_t jw_clocks_epoch_ms(const struct jw_clocks *c, uint64_t mono_ns)
{
	return (mono_ns + c->realtime_ns) / 1000000ULL;
}

#endif
