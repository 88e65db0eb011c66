// SPDX-License-Identifier: GPL-2.0-only
#include <time.h>

#include "base/clocks.h"

int64_t jw_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Brackets each reading between two monotonic ones, so the offset is off by tens of ns only. */
static int64_t offset_from_monotonic(clockid_t id)
{
	int64_t before = jw_clock_ns(CLOCK_MONOTONIC);
	int64_t other = jw_clock_ns(id);
	int64_t after = jw_clock_ns(CLOCK_MONOTONIC);

	return other - (before + (after - before) / 2);
}

void jw_clocks_init(struct jw_clocks *c)
{
	c->realtime_ns = offset_from_monotonic(CLOCK_REALTIME);
	c->boottime_ns = offset_from_monotonic(CLOCK_BOOTTIME);
}
