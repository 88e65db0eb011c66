// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process/elfdata.h"

/* A relocation that leaves a known value at an address (RELA: the value is not in the file). */
struct reloc {
	uint64_t at;
	uint64_t val;
};

struct jw_elf_data {
	int fd;
	Elf *elf;
	struct reloc *relocs;	/* sorted by address; made at the first pointer read */
	size_t n_relocs;
	bool relocs_read;
};

struct jw_elf_data *jw_elf_data__open(const char *path)
{
	struct jw_elf_data *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	elf_version(EV_CURRENT);
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		err = errno;
		goto err_free;
	}
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF || gelf_getclass(d->elf) != ELFCLASS64) {
		err = ENOEXEC;
		goto err_close;
	}
	return d;
err_close:
	if (d->elf)
		elf_end(d->elf);
	close(d->fd);
err_free:
	free(d);
	errno = err;
	return NULL;
}

void jw_elf_data__close(struct jw_elf_data *d)
{
	if (!d)
		return;
	elf_end(d->elf);
	close(d->fd);
	free(d->relocs);
	free(d);
}

/* Symbol @name in the symbol table of section @scn; 0 or -ENOENT. */
static int scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			GElf_Sym *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *s;
		int type;

		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*out = sym;
			return 0;
		}
	}
	return -ENOENT;
}

int jw_elf_data__symbol(struct jw_elf_data *d, const char *name, uint64_t *addr, uint64_t *size)
{
	const Elf64_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t k;

	for (k = 0; k < 2; k++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;
		GElf_Sym sym;

		while ((scn = elf_nextscn(d->elf, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != order[k] ||
			    scan_symbols(d->elf, scn, &sh, name, &sym))
				continue;
			*addr = sym.st_value;
			*size = sym.st_size;
			return 0;
		}
	}
	return -ENOENT;
}

int jw_elf_data__section(struct jw_elf_data *d, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(d->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(d->elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(d->elf, shstrndx, sh.sh_name);
		if (s && !strcmp(s, name)) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return 0;
		}
	}
	return -ENOENT;
}

int jw_elf_data__read(struct jw_elf_data *d, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	size_t n, i;

	if (elf_getphdrnum(d->elf, &n))
		return -EFAULT;
	while (len) {
		GElf_Phdr ph;
		uint64_t in, take, from_file;
		ssize_t got;

		for (i = 0; i < n; i++)
			if (gelf_getphdr(d->elf, i, &ph) && ph.p_type == PT_LOAD &&
			    addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_memsz)
				break;
		if (i == n)
			return -EFAULT;
		in = addr - ph.p_vaddr;
		take = ph.p_memsz - in < len ? ph.p_memsz - in : len;
		from_file = in < ph.p_filesz ? ph.p_filesz - in : 0;
		if (from_file > take)
			from_file = take;
		if (from_file) {
			got = pread(d->fd, out, from_file, ph.p_offset + in);
			if (got < 0)
				return -errno;
			if ((uint64_t)got != from_file)
				return -EIO;
		}
		memset(out + from_file, 0, take - from_file);
		out += take;
		addr += take;
		len -= take;
	}
	return 0;
}

/* Relocation types whose value is an addend, or a symbol's address plus one. */
static bool reloc_relative(uint16_t machine, uint32_t type)
{
	return (machine == EM_X86_64 && type == R_X86_64_RELATIVE) ||
	       (machine == EM_AARCH64 && type == R_AARCH64_RELATIVE);
}

static bool reloc_absolute(uint16_t machine, uint32_t type)
{
	return (machine == EM_X86_64 && (type == R_X86_64_64 || type == R_X86_64_GLOB_DAT)) ||
	       (machine == EM_AARCH64 && (type == R_AARCH64_ABS64 || type == R_AARCH64_GLOB_DAT));
}

static int reloc_cmp(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* The value relocation @r of a RELA section whose symbols are in @symscn leaves; false if none. */
static bool reloc_value(uint16_t machine, const GElf_Rela *r, Elf_Scn *symscn, uint64_t *val)
{
	uint32_t type = GELF_R_TYPE(r->r_info);
	Elf_Data *syms;
	GElf_Sym sym;

	if (reloc_relative(machine, type)) {
		*val = r->r_addend;
		return true;
	}
	if (!reloc_absolute(machine, type) || !symscn)
		return false;
	syms = elf_getdata(symscn, NULL);
	if (!syms || !gelf_getsym(syms, GELF_R_SYM(r->r_info), &sym) ||
	    sym.st_shndx == SHN_UNDEF)
		return false;
	*val = sym.st_value + r->r_addend;
	return true;
}

/* Gathers the dynamic RELA relocations whose value is known from the file alone. */
static int read_relocs(struct jw_elf_data *d)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	d->relocs_read = true;
	if (!gelf_getehdr(d->elf, &eh))
		return -ENOEXEC;
	while ((scn = elf_nextscn(d->elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		count = sh.sh_size / sh.sh_entsize;
		for (i = 0; data && i < count; i++) {
			struct reloc *grown;
			GElf_Rela r;
			uint64_t val;

			if (!gelf_getrela(data, i, &r) ||
			    !reloc_value(eh.e_machine, &r, elf_getscn(d->elf, sh.sh_link), &val))
				continue;
			if (d->n_relocs == cap) {
				cap = cap ? cap * 2 : 1024;
				grown = realloc(d->relocs, cap * sizeof(*grown));
				if (!grown)
					return -ENOMEM;
				d->relocs = grown;
			}
			d->relocs[d->n_relocs++] = (struct reloc){ .at = r.r_offset, .val = val };
		}
	}
	if (d->n_relocs)
		qsort(d->relocs, d->n_relocs, sizeof(*d->relocs), reloc_cmp);
	return 0;
}

int jw_elf_data__pointer(struct jw_elf_data *d, uint64_t addr, uint64_t *val)
{
	struct reloc key = { .at = addr }, *hit;
	int err;

	if (!d->relocs_read) {
		err = read_relocs(d);
		if (err)
			return err;
	}
	hit = d->n_relocs ? bsearch(&key, d->relocs, d->n_relocs, sizeof(key), reloc_cmp) : NULL;
	if (hit) {
		*val = hit->val;
		return 0;
	}
	/* Not relocated (a fixed address), or in place (REL, RELR): the file's bytes. */
	return jw_elf_data__read(d, addr, val, sizeof(*val));
}

int jw_elf_data__string(struct jw_elf_data *d, uint64_t addr, char *buf, size_t len)
{
	size_t i;
	int err;

	if (!len)
		return 0;
	for (i = 0; i + 1 < len; i++) {
		err = jw_elf_data__read(d, addr + i, &buf[i], 1);
		if (err)
			return err;
		if (!buf[i])
			return 0;
	}
	buf[i] = '\0';
	return 0;
}
