/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Links destroyed off jankwatch's loop. Destroying a uprobe link waits for the kernel's grace
 * periods (~100 ms each here): a process's fifteen probes would stall the loop for a second and
 * a half, every time a worker exits or a program execs. A thread destroys them instead; each link
 * carries a tag (the slot of the thread it timed), busy until its links are gone, so that a slot
 * is not reused while probes that name it may still fire.
 */
#ifndef JW_REAPER_H
#define JW_REAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/links.h"

struct jw_reaper;

/* A reaper for tags 0 .. @n_tags - 1. NULL with errno set. */
struct jw_reaper *jw_reaper__new(uint32_t n_tags);

/*
 * Hands @link over, tagged @tag: it is destroyed soon, in the background (at once, here, if the
 * thread cannot be had).
 */
void jw_reaper__add(struct jw_reaper *r, struct jw_link link, uint32_t tag);

/* Whether links tagged @tag are still waiting to be destroyed. */
bool jw_reaper__busy(struct jw_reaper *r, uint32_t tag);

/* Links destroyed so far, and in how long, all told (for -v). */
void jw_reaper__stats(struct jw_reaper *r, uint64_t *links, uint64_t *ns);

/* Destroys what is left, waits for the thread, frees. NULL-safe. */
void jw_reaper__free(struct jw_reaper *r);

#endif
