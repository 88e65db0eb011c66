// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sorted symbol tables answer as libdwfl's dwfl_module_addrinfo() does, address for
 * address: every byte of a fixture that has each shape of symbol the rules tell apart (nested,
 * aliases of each binding and size, sizeless labels in and out of sized ones, an absolute
 * symbol, data), the same stripped to its dynamic symbols, and around every symbol (sampled) of
 * this test's own program and of the C library.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stacks/modsyms.h"

#define FIXTURE(name) JW_FIXTURES "/" name
/* The addresses checked around the symbols of a big module, at most. */
#define MAX_CHECKS 4000

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct checked {
	size_t addresses, named;
};

/* One address: the same name, offset and symbol from both. */
static void check_one(struct jw_modsyms *m, Dwfl_Module *mod, GElf_Addr a, struct checked *c)
{
	GElf_Off off_jw = 0, off_dw = 0;
	GElf_Sym sym_jw, sym_dw;
	const char *jw = jw_modsyms_addrinfo(m, mod, a, &off_jw, &sym_jw);
	const char *dw = dwfl_module_addrinfo(mod, a, &off_dw, &sym_dw, NULL, NULL, NULL);

	c->addresses++;
	if (!dw) {
		if (jw)
			fail_msg("%#llx: libdwfl names nothing, we name %s", (unsigned long long)a, jw);
		return;
	}
	if (!jw || strcmp(jw, dw))
		fail_msg("%#llx: libdwfl names %s, we name %s", (unsigned long long)a, dw,
			 jw ? jw : "nothing");
	assert_int_equal(off_jw, off_dw);
	assert_int_equal(sym_jw.st_value, sym_dw.st_value);
	assert_int_equal(sym_jw.st_size, sym_dw.st_size);
	assert_int_equal(sym_jw.st_info, sym_dw.st_info);
	c->named++;
}

static Dwfl *report(const char *path, Dwfl_Module **mod)
{
	Dwfl *dwfl = dwfl_begin(&offline);

	assert_non_null(dwfl);
	*mod = dwfl_report_offline(dwfl, path, path, -1);
	if (!*mod)
		fail_msg("%s: %s", path, dwfl_errmsg(-1));
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	return dwfl;
}

/* Every address of @path's module and 64 bytes either side. */
static struct checked check_every_address(const char *path)
{
	struct jw_modsyms *m = jw_modsyms_new();
	struct checked c = { 0 };
	Dwarf_Addr low, high, a;
	Dwfl_Module *mod;
	Dwfl *dwfl = report(path, &mod);

	assert_non_null(m);
	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
	for (a = low > 64 ? low - 64 : 0; a < high + 64; a++)
		check_one(m, mod, a, &c);
	jw_modsyms_free(m);
	dwfl_end(dwfl);
	return c;
}

/* Around every symbol of @path's module (one in a stride, MAX_CHECKS at most). */
static struct checked check_around_symbols(const char *path)
{
	struct jw_modsyms *m = jw_modsyms_new();
	struct checked c = { 0 };
	Dwfl_Module *mod;
	Dwfl *dwfl = report(path, &mod);
	int n = dwfl_module_getsymtab(mod), stride, i;

	assert_non_null(m);
	assert_true(n > 1);
	stride = n * 6 / MAX_CHECKS + 1;
	for (i = 1; i < n; i += stride) {
		GElf_Addr v, probes[6];
		GElf_Word shndx;
		Dwarf_Addr bias;
		GElf_Sym sym;
		Elf *elf;
		size_t k;

		if (!dwfl_module_getsym_info(mod, i, &sym, &v, &shndx, &elf, &bias))
			continue;
		probes[0] = v - 1;
		probes[1] = v;
		probes[2] = v + 1;
		probes[3] = v + sym.st_size / 2;
		probes[4] = v + sym.st_size - (sym.st_size > 0);
		probes[5] = v + sym.st_size;
		for (k = 0; k < 6; k++)
			check_one(m, mod, probes[k], &c);
	}
	jw_modsyms_free(m);
	dwfl_end(dwfl);
	return c;
}

static void fixture_every_address(void **state)
{
	struct checked c = check_every_address(FIXTURE("symshapes.so"));

	(void)state;
	/* Its code and data are named, its gap is not: both kinds of answer were compared. */
	assert_true(c.named > 1000);
	assert_true(c.addresses > c.named + 64);
}

static void stripped_fixture_every_address(void **state)
{
	struct checked c = check_every_address(FIXTURE("symshapes_stripped.so"));

	(void)state;
	assert_true(c.named > 500);
}

static void own_program(void **state)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	struct checked c;

	(void)state;
	assert_true(n > 0);
	path[n] = '\0';
	c = check_around_symbols(path);
	assert_true(c.named > 100);
}

static void c_library(void **state)
{
	Dl_info info;
	struct checked c;

	(void)state;
	assert_true(dladdr((void *)fopen, &info) && info.dli_fname);
	c = check_around_symbols(info.dli_fname);
	assert_true(c.named > 100);
}

/* The address of @mod's symbol @name. */
static GElf_Addr symbol_value(Dwfl_Module *mod, const char *name)
{
	int n = dwfl_module_getsymtab(mod), i;

	for (i = 1; i < n; i++) {
		const char *got;
		GElf_Word shndx;
		Dwarf_Addr bias;
		GElf_Addr v;
		GElf_Sym sym;
		Elf *elf;

		got = dwfl_module_getsym_info(mod, i, &sym, &v, &shndx, &elf, &bias);
		if (got && !strcmp(got, name))
			return v;
	}
	fail_msg("no symbol %s", name);
	return 0;
}

/* The table of a module is made once, and asked again gives the same. */
static void asked_twice(void **state)
{
	struct jw_modsyms *m = jw_modsyms_new();
	GElf_Off off1, off2;
	GElf_Sym s1, s2;
	Dwfl_Module *mod;
	Dwfl *dwfl = report(FIXTURE("symshapes.so"), &mod);
	GElf_Addr in_inner = symbol_value(mod, "outer") + 0x50;
	const char *a, *b;

	(void)state;
	a = jw_modsyms_addrinfo(m, mod, in_inner, &off1, &s1);
	jw_modsyms_clear(m);
	b = jw_modsyms_addrinfo(m, mod, in_inner, &off2, &s2);
	/* outer, global, over inner, local, and inner_weak, weak: the binding first. */
	assert_non_null(a);
	assert_string_equal(a, "outer");
	assert_string_equal(a, b);
	assert_int_equal(off1, 0x50);
	assert_int_equal(off1, off2);
	/* No table (no memory for one): libdwfl's own answer. */
	b = jw_modsyms_addrinfo(NULL, mod, in_inner, &off2, &s2);
	assert_string_equal(a, b);
	jw_modsyms_free(m);
	dwfl_end(dwfl);
}

/*
 * A stripped library's static functions (unnamed.c, no CFI): no name for any of their bytes,
 * and the entry of each is the call target below it, read off the library's calls; above
 * every byte of the code below the first target, none.
 */
static void unnamed_entries(void **state)
{
	struct jw_modsyms *m = jw_modsyms_new();
	Dwfl_Module *full_mod, *mod;
	Dwfl *full = report(FIXTURE("unnamed.so"), &full_mod);
	Dwfl *dwfl = report(FIXTURE("unnamed_stripped.so"), &mod);
	GElf_Addr lowest = UINT64_MAX, entry;
	int n = dwfl_module_getsymtab(full_mod), i, checked = 0;

	(void)state;
	for (i = 1; i < n; i++) {
		GElf_Sym sym, s2;
		GElf_Addr value, a;
		GElf_Off off;
		const char *name = dwfl_module_getsym_info(full_mod, i, &sym, &value, NULL, NULL,
							   NULL);

		if (!name || strncmp(name, "unnamed_", 8) || !strcmp(name, "unnamed_entry") ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		for (a = value; a < value + sym.st_size; a++) {
			assert_null(jw_modsyms_addrinfo(m, mod, a, &off, &s2));
			if (!jw_modsyms_unnamed_entry(m, mod, a, &entry))
				fail_msg("%s+%#llx: no entry", name, (unsigned long long)(a - value));
			if (entry != value)
				fail_msg("%s+%#llx: entry %#llx, not %#llx", name,
					 (unsigned long long)(a - value), (unsigned long long)entry,
					 (unsigned long long)value);
		}
		if (value < lowest)
			lowest = value;
		checked++;
	}
	assert_int_equal(checked, 2);
	assert_false(jw_modsyms_unnamed_entry(m, mod, lowest - 1, &entry));
	jw_modsyms_free(m);
	dwfl_end(dwfl);
	dwfl_end(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixture_every_address),
		cmocka_unit_test(stripped_fixture_every_address),
		cmocka_unit_test(own_program),
		cmocka_unit_test(c_library),
		cmocka_unit_test(asked_twice),
		cmocka_unit_test(unnamed_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
