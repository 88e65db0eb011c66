// SPDX-License-Identifier: GPL-2.0-only
/* The sweep of a function's code that both architectures' frame readers run (see sweep.h). */
#include <errno.h>
#include <string.h>

#include "arch/sweep.h"

/* Forward branches not yet reached, each with the state it carries there. */
#define MAX_PENDING 32

struct pending {
	int64_t target;
	bool known;		/* taken where the state was known */
	struct jw_sweep state;
};

/* The state at a point: known; not known there (its effect lost); or reached by no fallthrough. */
enum reach { KNOWN, LOST, UNREACHED };

void jw_sweep_save(struct jw_sweep *w, unsigned int reg, int64_t at)
{
	unsigned int i;

	if (w->n_saved >= JW_ARCH_MAX_SAVED)
		return;
	for (i = 0; i < w->n_saved; i++)
		if (w->saved[i].reg == reg)
			return;
	w->saved[w->n_saved].reg = reg;
	w->saved[w->n_saved++].at = at;
}

void jw_sweep_restore(struct jw_sweep *w, unsigned int reg, int64_t at)
{
	unsigned int i;

	for (i = 0; i < w->n_saved; i++) {
		if (w->saved[i].reg != reg || w->saved[i].at != at)
			continue;
		/* In order: two paths' frames are compared slot by slot. */
		for (w->n_saved--; i < w->n_saved; i++)
			w->saved[i] = w->saved[i + 1];
		return;
	}
}

/* Whether two paths' frames agree: the stack pointer and every saved register's slot. */
static bool same_frame(const struct jw_sweep *a, const struct jw_sweep *b)
{
	unsigned int i;

	if (a->sp != b->sp || a->n_saved != b->n_saved)
		return false;
	for (i = 0; i < a->n_saved; i++)
		if (a->saved[i].reg != b->saved[i].reg || a->saved[i].at != b->saved[i].at)
			return false;
	return true;
}

/* Keeps @w's frame for a branch to @target, in a slot whose target the sweep has passed. */
static void note_branch(struct pending *p, size_t *n, bool *full, int64_t at, int64_t target,
			bool known, const struct jw_sweep *w)
{
	size_t i;

	for (i = 0; i < *n && p[i].target > at; i++)
		;
	if (i == *n) {
		if (*n == MAX_PENDING) {
			*full = true;
			return;
		}
		(*n)++;
	}
	p[i].target = target;
	p[i].known = known;
	p[i].state = *w;
}

/*
 * The state at @at, where the branches noted lead too: reached by the fallthrough (@reach KNOWN
 * or LOST), a branch that disagrees makes it lost; reached by branches only, it is theirs when
 * all were taken with the same known frame (a frame pointer that differs is not known).
 */
static enum reach arrive(const struct pending *p, size_t n, bool full, int64_t at,
			 enum reach reach, struct jw_sweep *w)
{
	bool found = false, unknown = full;
	struct jw_sweep merged;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i].target != at)
			continue;
		if (!p[i].known) {
			unknown = true;
		} else if (!found) {
			merged = p[i].state;
			found = true;
		} else if (!same_frame(&merged, &p[i].state)) {
			unknown = true;
		} else if (!p[i].state.fp_known || p[i].state.fp != merged.fp) {
			merged.fp_known = false;
		}
	}
	if (reach == KNOWN) {
		if (!found)
			return KNOWN;
		if (!same_frame(w, &merged))
			return LOST;
		if (!merged.fp_known || !w->fp_known || merged.fp != w->fp)
			w->fp_known = false;
		return KNOWN;
	}
	if (reach == LOST || !found)
		return reach;
	if (unknown)
		return LOST;
	*w = merged;
	return KNOWN;
}

/* @w, known at a branch, to the front of @seen (once: an equal frame seen before moves up). */
static void note_seen(struct jw_sweep_seen *seen, const struct jw_sweep *w)
{
	size_t i;

	for (i = 0; i < seen->n && !same_frame(&seen->s[i], w); i++)
		;
	if (i == seen->n && seen->n < JW_SWEEP_SEEN)
		seen->n++;
	else if (i == seen->n)
		i = seen->n - 1;	/* full: the oldest goes */
	memmove(&seen->s[1], &seen->s[0], i * sizeof(seen->s[0]));
	seen->s[0] = *w;
}

int jw_sweep_code(const uint8_t *code, size_t len, jw_sweep_step_fn step, struct jw_sweep *w,
		  struct jw_sweep_seen *seen)
{
	struct pending pending[MAX_PENDING];
	enum reach reach = KNOWN;
	bool full = false;
	size_t n = 0, at = 0;

	memset(w, 0, sizeof(*w));
	if (seen)
		seen->n = 0;
	while (at < len) {
		struct jw_sweep_insn in = { 0 };

		reach = arrive(pending, n, full, (int64_t)at, reach, w);
		if (!step(w, code, at, len, &in) || !in.len || in.len > len - at)
			return -ENOENT;
		if (in.branches && in.target > (int64_t)at)
			note_branch(pending, &n, &full, (int64_t)at, in.target, reach == KNOWN, w);
		/* The body's frame is the one its branches are taken with (not an epilogue's). */
		if (seen && in.branches && reach == KNOWN)
			note_seen(seen, w);
		if (in.flow == JW_SWEEP_END)
			reach = UNREACHED;
		else if (in.flow == JW_SWEEP_LOST && reach == KNOWN)
			reach = LOST;
		at += in.len;
	}
	/* The point itself may be where branches lead (a sample at a block's first instruction). */
	reach = arrive(pending, n, full, (int64_t)at, reach, w);
	return reach == KNOWN ? 0 : -EAGAIN;
}

size_t jw_sweep_guesses(const uint8_t *code, size_t len, jw_sweep_step_fn step,
			jw_sweep_frame_fn to_frame, struct jw_arch_frame *frames, size_t max)
{
	struct jw_sweep_seen seen;
	struct jw_sweep w;
	size_t i, n = 0;

	if (jw_sweep_code(code, len, step, &w, &seen) != -EAGAIN)
		return 0;
	for (i = 0; i < seen.n && n < max; i++)
		if (!to_frame(&seen.s[i], &frames[n]))
			n++;
	return n;
}
