// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/ksyms.h"

struct ksym {
	uint64_t addr;
	const char *name;	/* into names */
};

/* No kernel function is this long: a farther nearest symbol is not the function. */
#define MAX_FUNC_SIZE (1ULL << 20)

struct jw_ksyms {
	struct ksym *syms;
	size_t n;
	char *names;		/* every name, NUL-separated */
	uint64_t sched_start;	/* __sched_text_start, or 0 */
	uint64_t sched_end;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Reads every text symbol; names are kept as offsets into the name blob until it stops growing. */
static int read_kallsyms(FILE *f, struct jw_ksyms *k, size_t **offsets)
{
	size_t cap = 0, ncap = 0, nlen = 0;
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t addr;
		size_t len;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		len = strlen(name) + 1;
		if (k->n == cap) {
			struct ksym *syms;
			size_t *offs;

			cap = cap ? 2 * cap : 65536;
			syms = realloc(k->syms, cap * sizeof(*syms));
			if (!syms)
				return -ENOMEM;
			k->syms = syms;
			offs = realloc(*offsets, cap * sizeof(*offs));
			if (!offs)
				return -ENOMEM;
			*offsets = offs;
		}
		if (nlen + len > ncap) {
			char *names;

			ncap = ncap ? 2 * ncap : 1 << 20;
			names = realloc(k->names, ncap);
			if (!names)
				return -ENOMEM;
			k->names = names;
		}
		memcpy(k->names + nlen, name, len);
		k->syms[k->n].addr = addr;
		(*offsets)[k->n++] = nlen;
		nlen += len;
	}
	return 0;
}

/* Sorts the symbols by address and finds the scheduler's text among them. */
static void index_syms(struct jw_ksyms *k)
{
	size_t i;

	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	for (i = 0; i < k->n; i++) {
		if (!strcmp(k->syms[i].name, "__sched_text_start"))
			k->sched_start = k->syms[i].addr;
		else if (!strcmp(k->syms[i].name, "__sched_text_end"))
			k->sched_end = k->syms[i].addr;
	}
}

struct jw_ksyms *jw_ksyms__load(const char *path)
{
	struct jw_ksyms *k = calloc(1, sizeof(*k));
	size_t *offsets = NULL, i;
	FILE *f;
	int err;

	if (!k)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		goto err_free;
	}
	err = read_kallsyms(f, k, &offsets);
	fclose(f);
	if (err)
		goto err_free;
	if (!k->n) {
		/* kptr_restrict hides every address. */
		err = -EPERM;
		goto err_free;
	}
	for (i = 0; i < k->n; i++)
		k->syms[i].name = k->names + offsets[i];
	free(offsets);
	index_syms(k);
	return k;

err_free:
	free(offsets);
	jw_ksyms__free(k);
	errno = -err;
	return NULL;
}

/* Names are laid out in one blob, as kallsyms loads them; then sorted and indexed. */
struct jw_ksyms *jw_ksyms__from_list(const uint64_t *addrs, const char *const *names, size_t n)
{
	struct jw_ksyms *k = calloc(1, sizeof(*k));
	size_t i, len = 0, at = 0;

	if (!k)
		return NULL;
	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	k->syms = calloc(n ? n : 1, sizeof(*k->syms));
	k->names = malloc(len ? len : 1);
	if (!k->syms || !k->names) {
		jw_ksyms__free(k);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		size_t l = strlen(names[i]) + 1;

		memcpy(k->names + at, names[i], l);
		k->syms[i].addr = addrs[i];
		k->syms[i].name = k->names + at;
		at += l;
	}
	k->n = n;
	index_syms(k);
	return k;
}

void jw_ksyms__free(struct jw_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

void jw_ksyms__frame(const struct jw_ksyms *ks, uint64_t pc, struct jw_frame *fr)
{
	size_t lo = 0, hi;

	memset(fr, 0, sizeof(*fr));
	fr->kind = JW_FRAME_KERNEL;
	fr->pc = pc;
	fr->rel_pc = pc;
	fr->module = "[kernel]";
	if (!ks || !ks->n || pc < ks->syms[0].addr)
		return;
	hi = ks->n;
	/* The last symbol at or below pc. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (pc - ks->syms[lo].addr >= MAX_FUNC_SIZE)
		return;
	fr->symbol = ks->syms[lo].name;
	fr->sym_off = pc - ks->syms[lo].addr;
}

bool jw_ksyms__in_sched(const struct jw_ksyms *ks, uint64_t pc)
{
	return ks && pc >= ks->sched_start && pc < ks->sched_end;
}

void jw_ksyms__sched_text(const struct jw_ksyms *ks, uint64_t *start, uint64_t *end)
{
	*start = ks ? ks->sched_start : 0;
	*end = ks ? ks->sched_end : 0;
}
