// SPDX-License-Identifier: GPL-2.0-only
/* Function entries from a module's direct calls (see entries.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "stacks/entries.h"

struct found {
	GElf_Addr *a;
	size_t n, cap;
	GElf_Addr base;		/* the address of the code swept */
	size_t len;
	int err;
};

static int on_entry(uint64_t entry, void *arg)
{
	struct found *f = arg;

	if (entry < f->base || entry - f->base >= f->len)
		return 0;	/* out of this code (a PLT's is elsewhere), or data */
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		GElf_Addr *a = realloc(f->a, cap * sizeof(*a));

		if (!a) {
			f->err = -ENOMEM;
			return 1;
		}
		f->a = a;
		f->cap = cap;
	}
	f->a[f->n++] = entry;
	return 0;
}

/* Sweeps @len bytes of code at @code, at address @addr (@f->err says an error). */
static void sweep(struct found *f, const void *code, size_t len, GElf_Addr addr)
{
	if (!code || !len || f->err)
		return;
	f->base = addr;
	f->len = len;
	jw_arch_scan_entries(code, len, addr, on_entry, f);
}

/*
 * The executable sections, swept when @f (else their size summed into *@total); false when there
 * are none (no section headers: the vdso's image).
 */
static bool sweep_sections(Elf *elf, struct found *f, size_t *total)
{
	Elf_Scn *scn = NULL;
	bool any = false;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		any = true;
		if (!f) {
			*total += sh.sh_size;
			continue;
		}
		data = elf_getdata(scn, NULL);
		if (data && data->d_size == sh.sh_size)
			sweep(f, data->d_buf, data->d_size, sh.sh_addr);
	}
	return any;
}

/* The executable segments, as sweep_sections() the sections. */
static void sweep_segments(Elf *elf, struct found *f, size_t *total)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++) {
		Elf_Data *data;
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_filesz)
			continue;
		if (!f) {
			*total += ph.p_filesz;
			continue;
		}
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (data)
			sweep(f, data->d_buf, data->d_size, ph.p_vaddr);
	}
}

static int by_addr(const void *a, const void *b)
{
	GElf_Addr x = *(const GElf_Addr *)a, y = *(const GElf_Addr *)b;

	return x < y ? -1 : x > y;
}

int jw_entries_scan(Elf *elf, GElf_Addr **entries, size_t *n)
{
	struct found f = { 0 };
	size_t total = 0, i, k = 0;

	*entries = NULL;
	*n = 0;
	/* The size first: a browser's code is not read at all. */
	if (!sweep_sections(elf, NULL, &total))
		sweep_segments(elf, NULL, &total);
	if (total > JW_ENTRIES_MAX_CODE)
		return -E2BIG;
	if (!sweep_sections(elf, &f, &total))
		sweep_segments(elf, &f, &total);
	if (f.err) {
		free(f.a);
		return f.err;
	}
	if (!f.n) {
		free(f.a);
		return 0;
	}
	qsort(f.a, f.n, sizeof(*f.a), by_addr);
	for (i = 0; i < f.n; i++)
		if (!k || f.a[i] != f.a[k - 1])
			f.a[k++] = f.a[i];
	*entries = f.a;
	*n = k;
	return 0;
}

bool jw_entries_below(const GElf_Addr *entries, size_t n, GElf_Addr addr, GElf_Addr *entry)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (entries[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*entry = entries[lo - 1];
	return true;
}
