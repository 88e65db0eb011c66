// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "process/elfdata.h"
#include "process/elfparts.h"
#include "process/elfsym.h"

#define MAX_PART_BYTES (4u << 20)	/* a function part larger than this is not read */

/* Jumps of a part, as file offsets: into the function's interior, and out of it. */
struct jumps {
	uint64_t base;			/* the scanned code's file offset */
	uint64_t lo, hi;		/* the function's own part */
	bool inward;			/* one lands inside [lo, hi), past lo */
	uint64_t *out;			/* targets outside it */
	size_t n_out, cap_out;
};

static int note_jump(int64_t target, void *ctx)
{
	struct jumps *j = ctx;
	uint64_t t = j->base + target, *grown;

	if (t > j->lo && t < j->hi) {
		j->inward = true;
		return 0;
	}
	if (t == j->lo || j->n_out == 4096)
		return 0;
	if (j->n_out == j->cap_out) {
		j->cap_out = j->cap_out ? 2 * j->cap_out : 64;
		grown = realloc(j->out, j->cap_out * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		j->out = grown;
	}
	j->out[j->n_out++] = t;
	return 0;
}

/* The address of symbol @name of @path. 0 or -errno. */
static int symbol_address(const char *path, const char *name, uint64_t *addr)
{
	struct jw_elf_data *e = jw_elf_data__open(path);
	uint64_t size;
	int err;

	if (!e)
		return -errno;
	err = jw_elf_data__symbol(e, name, addr, &size);
	jw_elf_data__close(e);
	return err;
}

/* Scans the code of @path at file offsets [lo, hi) for jumps into @j. 0 or -errno. */
static int scan_part(const char *path, uint64_t lo, uint64_t hi, struct jumps *j)
{
	uint8_t *code;
	int err;

	if (hi <= lo || hi - lo > MAX_PART_BYTES)
		return -E2BIG;
	code = malloc(hi - lo);
	if (!code)
		return -ENOMEM;
	err = jw_file_read_at(path, lo, code, hi - lo);
	j->base = lo;
	if (!err)
		err = jw_arch_scan_jumps(code, hi - lo, note_jump, j);
	free(code);
	return err;
}

size_t jw_elf_function_parts(const char *path, const char *name, struct jw_elf_range *out,
			     size_t max)
{
	struct jumps own = { 0 }, part = { 0 };
	uint64_t off, size, lo, hi, addr;
	size_t n = 0, i, k;
	char err[256];
	int64_t bias;

	if (!max || jw_elf_func_offset(path, name, &off, &size, err, sizeof(err)) || !size ||
	    symbol_address(path, name, &addr))
		return 0;
	bias = (int64_t)(addr - off);	/* file offset to address, in the function's segment */
	out[n++] = (struct jw_elf_range){ off + bias, off + size + bias };
	own.lo = part.lo = off;
	own.hi = part.hi = off + size;
	if (scan_part(path, off, off + size, &own))
		goto out;
	for (i = 0; i < own.n_out && n < max; i++) {
		bool inward_from_own = false, seen = false;

		for (k = 1; k < n; k++)
			seen |= own.out[i] + bias >= out[k].lo && own.out[i] + bias < out[k].hi;
		if (seen || jw_elf_function_bounds(path, own.out[i], &lo, &hi))
			continue;
		/* A jump into its middle, not to its start (a tail call's), or one back. */
		for (k = 0; k < own.n_out; k++)
			inward_from_own |= own.out[k] > lo && own.out[k] < hi;
		part.inward = false;
		part.n_out = 0;
		if (!inward_from_own && (scan_part(path, lo, hi, &part) || !part.inward))
			continue;
		out[n++] = (struct jw_elf_range){ lo + bias, hi + bias };
	}
out:
	free(own.out);
	free(part.out);
	return n;
}
