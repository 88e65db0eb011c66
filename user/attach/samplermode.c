// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "attach/samplermode.h"

double jw_samplers_cpu_firings(const struct jw_sampler_rates *r)
{
	return r->period_ms ? r->cpus * 1000.0 / r->period_ms : 0;
}

bool jw_samplers_per_cpu(const struct jw_sampler_rates *r, bool per_cpu_now, char *why,
			 size_t len)
{
	double firings = jw_samplers_cpu_firings(r);
	bool per_cpu;

	if (per_cpu_now)
		per_cpu = r->switches * JW_SAMPLERS_TO_THREAD >= firings;
	else
		per_cpu = firings > 0 && r->switches >= firings * JW_SAMPLERS_TO_CPU;
	snprintf(why, len, "%.0f switches a second of the watched threads against %.0f firings of "
		 "one sampler per CPU (%u CPUs, every %u ms)", r->switches, firings, r->cpus,
		 r->period_ms);
	return per_cpu;
}
