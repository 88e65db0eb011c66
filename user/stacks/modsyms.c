// SPDX-License-Identifier: GPL-2.0-only
/*
 * libdwfl's rules (elfutils' dwfl_module_addrsym.c, 0.188), which these tables answer by:
 *
 * - A symbol counts for address A when it has a name, a section (not SHN_UNDEF), is no section,
 *   file or TLS symbol, and its value is at most A. The globals (from the table's first global
 *   on) are read first, in table order; the locals only when no sized global holds A, and not
 *   when a sizeless global sits at A itself.
 * - Of the sized symbols that hold A (value <= A < value + size), read in that order, one takes
 *   the place of the one kept when that is none, or lies lower, or binds less (global 3, weak
 *   2, local 1); or, at the same value, is smaller and binds no less, or is no larger and binds
 *   more.
 * - With none, a sizeless symbol: the last read whose value is at least every counted symbol's
 *   end read before it, in A's section; it stands when its value is at least every counted
 *   symbol's end. So it is the last, in reading order, of those at the highest end M of the
 *   symbols read, in A's section (an absolute symbol: at A itself).
 *
 * A table holds a pass's symbols (globals, locals) sorted by value, each with the highest end
 * of those up to it: the symbols that hold A are found walking down from A until that end is
 * at most A, and M is the end at A.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/hindex.h"
#include "stacks/entries.h"
#include "stacks/modsyms.h"

/* The walk down and the symbols holding one address, past which libdwfl answers. */
#define WALK_MAX 256
#define HOLDING_MAX 16

struct rec {
	GElf_Addr value;
	GElf_Xword size;
	GElf_Addr max_end;	/* the highest end (value + size) of this record and those before */
	uint32_t ndx;		/* in the module's symbol table: the order libdwfl reads */
	uint8_t bind;		/* 3 global, 2 weak, 1 local, 0 other */
};

struct pass {
	struct rec *r;
	size_t n;
};

struct table {
	Dwfl_Module *mod;
	bool made;		/* false: no memory for it, libdwfl answers */
	bool locals;		/* a locals pass exists (the first global is past index 1) */
	struct pass glob, loc;
	/* The entries of its unnamed functions (entries.h): read at the first ask, ELF addresses. */
	bool entries_read;
	GElf_Addr *entries;
	size_t n_entries;
};

struct jw_modsyms {
	struct jw_hindex by_mod;	/* Dwfl_Module * -> index in tables */
	struct table **tables;
	size_t n, cap;
};

static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int by_value(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static GElf_Addr end_of(const struct rec *r)
{
	return r->value + r->size < r->value ? UINT64_MAX : r->value + r->size;
}

static void sort_pass(struct pass *p)
{
	GElf_Addr top = 0;
	size_t i;

	if (!p->n)
		return;
	qsort(p->r, p->n, sizeof(*p->r), by_value);
	for (i = 0; i < p->n; i++) {
		if (end_of(&p->r[i]) > top)
			top = end_of(&p->r[i]);
		p->r[i].max_end = top;
	}
}

static void free_table(struct table *t)
{
	if (!t)
		return;
	free(t->glob.r);
	free(t->loc.r);
	free(t->entries);
	free(t);
}

/* One pass over @mod's symbols. A module without a table gets an empty one (no names). */
static struct table *make_table(Dwfl_Module *mod)
{
	struct table *t = calloc(1, sizeof(*t));
	int n, first_global, from, i;

	if (!t)
		return NULL;
	t->mod = mod;
	t->made = true;
	n = dwfl_module_getsymtab(mod);
	first_global = n < 0 ? -1 : dwfl_module_getsymtab_first_global(mod);
	if (first_global < 0)
		return t;
	from = first_global == 0 ? 1 : first_global;
	t->locals = first_global > 1;
	t->glob.r = malloc((size_t)n * sizeof(*t->glob.r));
	t->loc.r = t->locals ? malloc((size_t)first_global * sizeof(*t->loc.r)) : NULL;
	if (!t->glob.r || (t->locals && !t->loc.r)) {
		t->made = false;
		return t;
	}
	for (i = 1; i < n; i++) {
		struct pass *p = i >= from ? &t->glob : &t->loc;
		GElf_Word shndx;
		GElf_Addr value;
		Dwarf_Addr bias;
		const char *name;
		GElf_Sym sym;
		Elf *elf;

		name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
		    GELF_ST_TYPE(sym.st_info) == STT_FILE || GELF_ST_TYPE(sym.st_info) == STT_TLS)
			continue;
		p->r[p->n++] = (struct rec){ .value = value, .size = sym.st_size, .ndx = (uint32_t)i,
					     .bind = (uint8_t)binding_value(&sym) };
	}
	sort_pass(&t->glob);
	sort_pass(&t->loc);
	return t;
}

/* The count of @p's records whose value is at most @a. */
static size_t upto(const struct pass *p, GElf_Addr a)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->r[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether @c takes the place of @best (NULL: none yet) for an address both hold. */
static bool better(const struct rec *best, const struct rec *c)
{
	if (!best || best->value < c->value || best->bind < c->bind)
		return true;
	return best->value == c->value &&
	       ((best->size > c->size && best->bind <= c->bind) ||
		(best->size >= c->size && best->bind < c->bind));
}

static int by_ndx(const void *a, const void *b)
{
	const struct rec *x = *(const struct rec *const *)a, *y = *(const struct rec *const *)b;

	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/*
 * The sized symbol of @p that libdwfl keeps for @a (the first @n records have values at most
 * @a), into *@best (NULL: none). -E2BIG: too many to walk, libdwfl answers.
 */
static int holding(const struct pass *p, size_t n, GElf_Addr a, const struct rec **best)
{
	const struct rec *held[HOLDING_MAX];
	size_t k = 0, walked = 0, i;

	*best = NULL;
	while (n > 0 && p->r[n - 1].max_end > a) {
		const struct rec *r = &p->r[--n];

		if (++walked > WALK_MAX)
			return -E2BIG;
		if (r->size == 0 || a - r->value >= r->size)
			continue;
		if (k == HOLDING_MAX)
			return -E2BIG;
		held[k++] = r;
	}
	qsort(held, k, sizeof(held[0]), by_ndx);
	for (i = 0; i < k; i++)
		if (better(*best, held[i]))
			*best = held[i];
	return 0;
}

/* The section index libdwfl finds @a in (SHN_UNDEF: none). */
static GElf_Word section_of(Dwfl_Module *mod, GElf_Addr a)
{
	Dwarf_Addr bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &a, &bias);

	return scn ? (GElf_Word)elf_ndxscn(scn) : SHN_UNDEF;
}

/*
 * The sizeless symbol of @p at value @m that libdwfl falls back to for @a: the last in table
 * order in @a's section (@a_sec, found at the first need); NULL: none.
 */
static const struct rec *sizeless_at(Dwfl_Module *mod, const struct pass *p, GElf_Addr m,
				     GElf_Addr a, GElf_Word *a_sec, bool *a_sec_known)
{
	const struct rec *last = NULL;
	size_t i = upto(p, m);

	while (i > 0 && p->r[i - 1].value == m) {
		const struct rec *r = &p->r[--i];
		GElf_Word shndx;
		GElf_Addr value;
		Dwarf_Addr bias;
		GElf_Sym sym;
		Elf *elf;
		bool same;

		if (r->size || (last && last->ndx > r->ndx))
			continue;
		if (!dwfl_module_getsym_info(mod, (int)r->ndx, &sym, &value, &shndx, &elf, &bias))
			continue;
		if (shndx >= SHN_LORESERVE) {
			same = value == a;
		} else {
			if (!*a_sec_known) {
				*a_sec = section_of(mod, a);
				*a_sec_known = true;
			}
			same = section_of(mod, value) == *a_sec;
		}
		if (same)
			last = r;
	}
	return last;
}

/* Whether a sizeless symbol of @p sits at @a itself (the first @n records are at most @a). */
static bool sizeless_at_addr(const struct pass *p, size_t n, GElf_Addr a)
{
	while (n > 0 && p->r[n - 1].value == a)
		if (p->r[--n].size == 0)
			return true;
	return false;
}

/* libdwfl's answer from @t; -E2BIG: ask libdwfl. */
static int lookup(const struct table *t, GElf_Addr a, const struct rec **found)
{
	size_t ng = upto(&t->glob, a), nl = 0;
	GElf_Word a_sec = SHN_UNDEF;
	bool a_sec_known = false, locals;
	GElf_Addr m = 0;
	int ret;

	ret = holding(&t->glob, ng, a, found);
	if (ret || *found)
		return ret;
	locals = t->locals && !sizeless_at_addr(&t->glob, ng, a);
	if (locals) {
		nl = upto(&t->loc, a);
		ret = holding(&t->loc, nl, a, found);
		if (ret || *found)
			return ret;
	}
	/* No symbol read holds @a: every end is at most @a, and M is the highest. */
	if (ng)
		m = t->glob.r[ng - 1].max_end;
	if (nl && t->loc.r[nl - 1].max_end > m)
		m = t->loc.r[nl - 1].max_end;
	if (locals)
		*found = sizeless_at(t->mod, &t->loc, m, a, &a_sec, &a_sec_known);
	if (!*found)
		*found = sizeless_at(t->mod, &t->glob, m, a, &a_sec, &a_sec_known);
	return 0;
}

struct jw_modsyms *jw_modsyms_new(void)
{
	return calloc(1, sizeof(struct jw_modsyms));
}

void jw_modsyms_clear(struct jw_modsyms *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free_table(m->tables[i]);
	m->n = 0;
	jw_hindex_free(&m->by_mod);
}

void jw_modsyms_free(struct jw_modsyms *m)
{
	if (!m)
		return;
	jw_modsyms_clear(m);
	free(m->tables);
	free(m);
}

/* @mod's table, made at the first call; NULL: no memory. */
static struct table *table_of(struct jw_modsyms *m, Dwfl_Module *mod)
{
	uint64_t key = (uint64_t)(uintptr_t)mod;
	uint32_t *at = jw_hindex_get(&m->by_mod, key);
	struct table *t;

	if (at)
		return m->tables[*at];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct table **tables = realloc(m->tables, cap * sizeof(*tables));

		if (!tables)
			return NULL;
		m->tables = tables;
		m->cap = cap;
	}
	t = make_table(mod);
	if (!t)
		return NULL;
	if (jw_hindex_put(&m->by_mod, key, (uint32_t)m->n)) {
		free_table(t);
		return NULL;
	}
	m->tables[m->n++] = t;
	return t;
}

const char *jw_modsyms_addrinfo(struct jw_modsyms *m, Dwfl_Module *mod, GElf_Addr addr,
				GElf_Off *off, GElf_Sym *sym)
{
	struct table *t = m && mod ? table_of(m, mod) : NULL;
	const struct rec *found = NULL;
	GElf_Word shndx;
	GElf_Addr value;
	Dwarf_Addr bias;
	const char *name;
	Elf *elf;

	if (!t || !t->made || lookup(t, addr, &found))
		return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
	if (!found)
		return NULL;
	name = dwfl_module_getsym_info(mod, (int)found->ndx, sym, &value, &shndx, &elf, &bias);
	*off = addr - found->value;
	return name;
}

bool jw_modsyms_unnamed_entry(struct jw_modsyms *m, Dwfl_Module *mod, GElf_Addr addr,
			      GElf_Addr *entry)
{
	struct table *t = m && mod ? table_of(m, mod) : NULL;
	Dwarf_Addr bias;
	GElf_Addr at;
	Elf *elf;

	if (!t || !(elf = dwfl_module_getelf(mod, &bias)))
		return false;
	if (!t->entries_read) {
		t->entries_read = true;
		jw_entries_scan(elf, &t->entries, &t->n_entries);
	}
	if (addr < bias || !jw_entries_below(t->entries, t->n_entries, addr - bias, &at))
		return false;
	*entry = at + bias;
	return true;
}
