// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_hold.h"

int jw_hold_add(struct jw_hold *h, struct jw_proc *proc, const struct jw_task_rec *t,
		void *const *samples, size_t n, const struct jw_task_facts *facts,
		uint64_t time_ms, uint64_t deadline_ns)
{
	struct jw_held held = {
		.proc = proc,
		.task = *t,
		.facts = *facts,
		.time_ms = time_ms,
		.deadline_ns = deadline_ns,
	};
	size_t i;

	if (h->n == JW_HOLD_MAX)
		return -ENOSPC;
	held.samples = calloc(n + 1, sizeof(*held.samples));
	if (!held.samples)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jw_sample_rec *s = samples[i];

		held.samples[i] = malloc(s->hdr.size);
		if (!held.samples[i]) {
			held.n = i;
			jw_held_free(&held);
			return -ENOMEM;
		}
		memcpy(held.samples[i], s, s->hdr.size);
	}
	held.n = n;
	/* Its group is named again when it is written. */
	held.facts.group = NULL;
	h->v[h->n++] = held;
	return 0;
}

void jw_hold_take(struct jw_hold *h, size_t i, struct jw_held *out)
{
	*out = h->v[i];
	memmove(&h->v[i], &h->v[i + 1], (h->n - i - 1) * sizeof(h->v[0]));
	h->n--;
}

void jw_held_free(struct jw_held *held)
{
	size_t i;

	for (i = 0; i < held->n; i++)
		free(held->samples[i]);
	free(held->samples);
	held->samples = NULL;
	held->n = 0;
}
