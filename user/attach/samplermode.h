/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stacks' cpu-clock samplers, one per watched thread or one per CPU, by what each costs at
 * the rate the watched threads switch (samplers=2). A thread's own sampler is a perf event the
 * kernel schedules with the thread: its timer is started at each of the thread's switches in
 * and stopped at each switch out, a cost per switch; a loop that blocks and wakes thousands of
 * times a second pays it thousands of times (redis serving one client: 9.2 us a request in a
 * VM, more than the rest of jankwatch). A CPU's sampler runs whoever is there: no cost per
 * switch, one timer firing per CPU every sample_period_ms (and an idle CPU woken for it), each
 * costing about what a switch's start and stop do. So: one per CPU while the watched threads
 * switch more often than those samplers fire, one per thread, which leaves idle CPUs asleep,
 * while they switch less. Pure arithmetic; session_samplers.c counts and switches.
 */
#ifndef JW_SAMPLERMODE_H
#define JW_SAMPLERMODE_H

#include <stdbool.h>
#include <stddef.h>

/* What the choice looks at. */
struct jw_sampler_rates {
	double switches;	/* the watched threads' context switches a second, all together */
	unsigned int cpus;	/* the CPUs online */
	unsigned int period_ms;	/* sample_period_ms */
};

/*
 * Margins either way, so that a rate near the line does not switch back and forth: one per CPU
 * once the switches are JW_SAMPLERS_TO_CPU times the CPUs' firings, one per thread again once
 * they are under 1/JW_SAMPLERS_TO_THREAD of them; not sooner than JW_SAMPLERS_GAP_S after a
 * switch.
 */
#define JW_SAMPLERS_TO_CPU 2
#define JW_SAMPLERS_TO_THREAD 2
#define JW_SAMPLERS_GAP_S 5

/* The firings a second of one sampler on each CPU. */
double jw_samplers_cpu_firings(const struct jw_sampler_rates *r);

/*
 * Whether one sampler per CPU is the one to run at rates @r, given which runs now (@per_cpu_now),
 * by the margins above. @why (at least 160 bytes to be whole) gets the figures, as one clause.
 */
bool jw_samplers_per_cpu(const struct jw_sampler_rates *r, bool per_cpu_now, char *why,
			 size_t len);

#endif
