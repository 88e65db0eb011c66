/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The symbol tables of one Dwfl's modules sorted by address, so that naming an address costs a
 * binary search: libdwfl's dwfl_module_addrinfo() reads the module's whole table at every call,
 * milliseconds a frame in a big program (node: 227,000 symbols), and a jank's report names
 * hundreds of frames. A table is made the first time its module is asked (one pass over its
 * symbols); the answers are libdwfl's own, rule for rule (modsyms.c says them), which the unit
 * test holds against libdwfl over every symbol of the modules it has.
 */
#ifndef JW_MODSYMS_H
#define JW_MODSYMS_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

struct jw_modsyms;

/* NULL: no memory (jw_modsyms_addrinfo then asks libdwfl). */
struct jw_modsyms *jw_modsyms_new(void);
void jw_modsyms_free(struct jw_modsyms *m);

/* Forgets every table: call it before the Dwfl whose modules they are ends. */
void jw_modsyms_clear(struct jw_modsyms *m);

/*
 * What dwfl_module_addrinfo(@mod, @addr, @off, @sym, NULL, NULL, NULL) answers: the name of the
 * symbol for @addr (NULL: none), its offset in *@off and the symbol in *@sym. @m NULL, or a
 * table that could not be made, or a rare shape of table (dozens of symbols over one address):
 * libdwfl answers.
 */
const char *jw_modsyms_addrinfo(struct jw_modsyms *m, Dwfl_Module *mod, GElf_Addr addr,
				GElf_Off *off, GElf_Sym *sym);

/*
 * For an address no symbol names: the entry of the function that may hold it, the highest
 * target of @mod's direct calls at most @addr (entries.h; read at the first ask), into *@entry.
 * false when there is none. Not libdwfl's: a guess the prologue sweep checks (entries.h).
 */
bool jw_modsyms_unnamed_entry(struct jw_modsyms *m, Dwfl_Module *mod, GElf_Addr addr,
			      GElf_Addr *entry);

#endif
