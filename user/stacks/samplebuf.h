/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The samples of one thread's current task, kept until the task's end says whether it was slow.
 * Bounded: past @max_kept samples it keeps every other one and doubles its stride, so what it
 * holds stays evenly spaced over the whole task however long it runs.
 */
#ifndef JW_SAMPLEBUF_H
#define JW_SAMPLEBUF_H

#include <stddef.h>
#include <stdint.h>

struct jw_samplebuf {
	uint64_t seq;		/* the task the samples belong to */
	void **items;		/* malloc'd copies, oldest first */
	size_t n;
	size_t max_kept;	/* even, >= 2 */
	uint64_t offered;	/* samples offered for this task */
	uint64_t stride;	/* keep one offered sample in stride */
};

/* @max_kept is rounded up to an even number of at least 2. 0 or -ENOMEM. */
int jw_samplebuf_init(struct jw_samplebuf *b, size_t max_kept);
void jw_samplebuf_free(struct jw_samplebuf *b);

/* Forgets every sample; the next task starts afresh. */
void jw_samplebuf_clear(struct jw_samplebuf *b);

/*
 * Offers a copy of @size bytes at @data, a sample of task @seq. A sample of another task than
 * the one held clears the buffer first. Returns 0 or -ENOMEM.
 */
int jw_samplebuf_add(struct jw_samplebuf *b, uint64_t seq, const void *data, size_t size);

#endif
