// SPDX-License-Identifier: GPL-2.0-only
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "process/elfsym.h"

#define MAX_SUGGESTIONS 5

struct elf_file {
	int fd;
	Elf *elf;
};

static int elf_file_open(const char *path, struct elf_file *ef)
{
	static bool version_set;

	if (!version_set) {
		elf_version(EV_CURRENT);
		version_set = true;
	}
	ef->elf = NULL;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		if (ef->elf)
			elf_end(ef->elf);
		close(ef->fd);
		return -ENOEXEC;
	}
	return 0;
}

static void elf_file_close(struct elf_file *ef)
{
	elf_end(ef->elf);
	close(ef->fd);
}

/* File offset of virtual address @vaddr, from the executable load segment that holds it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *offset)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int jw_elf_code_vaddr(const char *path, uint64_t offset, uint64_t *vaddr)
{
	struct elf_file ef;
	size_t n, i;
	int ret = elf_file_open(path, &ef);

	if (ret)
		return ret;
	ret = elf_getphdrnum(ef.elf, &n) ? -ENOEXEC : -ENOENT;
	for (i = 0; ret == -ENOENT && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef.elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    offset < ph.p_offset || offset >= ph.p_offset + ph.p_filesz)
			continue;
		*vaddr = offset - ph.p_offset + ph.p_vaddr;
		ret = 0;
	}
	elf_file_close(&ef);
	return ret;
}

/* Whether symbol name @sym is @name, allowing a "@VERSION" or "@@VERSION" suffix. */
static bool name_matches(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return strncmp(sym, name, n) == 0 && (sym[n] == '\0' || sym[n] == '@');
}

struct suggestions {
	const char *name;
	char *best[MAX_SUGGESTIONS];
	unsigned int score[MAX_SUGGESTIONS];
	size_t n;
};

/* Keeps the closest names: substring matches and small edit distances. */
static void suggest(struct suggestions *sg, const char *sym)
{
	unsigned int cap = strlen(sg->name) / 3 + 1, d;
	bool contains = strstr(sym, sg->name) != NULL;
	size_t i, worst = 0;

	/* A name that contains the one asked for is a match however long; rank by distance. */
	d = jw_edit_distance(sym, sg->name, contains ? 1024 : cap);
	if (!contains && d > cap)
		return;
	for (i = 0; i < sg->n; i++)
		if (strcmp(sg->best[i], sym) == 0)
			return;
	if (sg->n < MAX_SUGGESTIONS) {
		char *copy = strdup(sym);

		if (!copy)
			return;
		sg->best[sg->n] = copy;
		sg->score[sg->n++] = d;
		return;
	}
	for (i = 1; i < sg->n; i++)
		if (sg->score[i] > sg->score[worst])
			worst = i;
	if (d < sg->score[worst]) {
		char *copy = strdup(sym);

		if (!copy)
			return;
		free(sg->best[worst]);
		sg->best[worst] = copy;
		sg->score[worst] = d;
	}
}

/* Looks @name up in one symbol table; feeds near misses to @sg. */
static int scan_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, const char *name, GElf_Sym *found,
		       struct suggestions *sg)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!s || !*s)
			continue;
		if (name_matches(s, name)) {
			*found = sym;
			return 0;
		}
		suggest(sg, s);
	}
	return -ENOENT;
}

static int find_symbol(Elf *elf, const char *name, GElf_Sym *found, struct suggestions *sg)
{
	const Elf64_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t k;

	for (k = 0; k < 2; k++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != order[k])
				continue;
			if (scan_symtab(elf, scn, &sh, name, found, sg) == 0)
				return 0;
		}
	}
	return -ENOENT;
}

/* Closest first; equally close ones by name. */
static void sort_suggestions(struct suggestions *sg)
{
	size_t i, j;

	for (i = 1; i < sg->n; i++) {
		for (j = i; j > 0; j--) {
			char *name = sg->best[j];
			unsigned int score = sg->score[j];

			if (sg->score[j - 1] < score ||
			    (sg->score[j - 1] == score && strcmp(sg->best[j - 1], name) <= 0))
				break;
			sg->best[j] = sg->best[j - 1];
			sg->score[j] = sg->score[j - 1];
			sg->best[j - 1] = name;
			sg->score[j - 1] = score;
		}
	}
}

static void format_missing(const char *path, const char *name, struct suggestions *sg, char *err,
			   size_t errlen)
{
	size_t used, i;

	sort_suggestions(sg);
	used = snprintf(err, errlen, "%s: no function '%s'", path, name);
	for (i = 0; i < sg->n && used < errlen; i++)
		used += snprintf(err + used, errlen - used, "%s%s", i ? ", " : "; close matches: ",
				 sg->best[i]);
}

static int open_or_say(const char *path, struct elf_file *ef, char *err, size_t errlen)
{
	int ret = elf_file_open(path, ef);

	if (ret == -ENOEXEC)
		snprintf(err, errlen, "%s: not an ELF file", path);
	else if (ret)
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-ret));
	return ret;
}

int jw_elf_func_offset(const char *path, const char *name, uint64_t *offset, uint64_t *size,
		       char *err, size_t errlen)
{
	return jw_elf_func_offset_debug(path, NULL, name, offset, size, err, errlen);
}

int jw_elf_func_offset_debug(const char *path, const char *debug_path, const char *name,
			     uint64_t *offset, uint64_t *size, char *err, size_t errlen)
{
	struct suggestions sg = { .name = name };
	struct elf_file ef, dbg = { .fd = -1 };
	GElf_Sym sym;
	size_t i;
	int ret;

	ret = open_or_say(path, &ef, err, errlen);
	if (ret)
		return ret;
	if (debug_path) {
		ret = open_or_say(debug_path, &dbg, err, errlen);
		if (ret) {
			elf_file_close(&ef);
			return ret;
		}
	}
	/* The debug file's symbols have the file's addresses; its segments make them offsets. */
	ret = find_symbol(debug_path ? dbg.elf : ef.elf, name, &sym, &sg);
	if (ret) {
		format_missing(debug_path ? debug_path : path, name, &sg, err, errlen);
		goto out;
	}
	ret = vaddr_to_offset(ef.elf, sym.st_value, offset);
	if (ret) {
		snprintf(err, errlen, "%s: function '%s' at 0x%llx is in no executable segment", path,
			 name, (unsigned long long)sym.st_value);
		goto out;
	}
	*size = sym.st_size;
out:
	for (i = 0; i < sg.n; i++)
		free(sg.best[i]);
	if (debug_path)
		elf_file_close(&dbg);
	elf_file_close(&ef);
	return ret;
}

bool jw_elf_file_is(const char *path, const char *hex)
{
	char found[129];
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	return !hex || (jw_elf_build_id(path, found, sizeof(found)) == 0 && !strcmp(found, hex));
}

void jw_hex(const uint8_t *id, size_t n, char *hex, size_t len)
{
	size_t i;

	if (!len)
		return;
	hex[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
}

int jw_elf_interpreter(const char *path, char *interp, size_t len)
{
	struct elf_file ef;
	size_t n, i, size;
	int ret = elf_file_open(path, &ef);
	const char *raw;

	if (ret)
		return ret;
	ret = elf_getphdrnum(ef.elf, &n) ? -ENOEXEC : -ENOENT;
	raw = elf_rawfile(ef.elf, &size);
	for (i = 0; ret == -ENOENT && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef.elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		/* A path within the file, NUL-terminated within its segment. */
		if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset ||
		    ph.p_filesz < 2 || raw[ph.p_offset + ph.p_filesz - 1] ||
		    ph.p_filesz > len) {
			ret = -ENOEXEC;
			break;
		}
		memcpy(interp, raw + ph.p_offset, ph.p_filesz);
		ret = 0;
	}
	elf_file_close(&ef);
	return ret;
}

bool jw_elf_is_go(const char *path)
{
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool go = false;

	if (elf_file_open(path, &ef))
		return false;
	if (elf_getshdrstrndx(ef.elf, &shstrndx) == 0) {
		while (!go && (scn = elf_nextscn(ef.elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(ef.elf, shstrndx, sh.sh_name);
			go = name && (!strcmp(name, ".go.buildinfo") ||
				      !strcmp(name, ".note.go.buildid"));
		}
	}
	elf_file_close(&ef);
	return go;
}

int jw_elf_build_id(const char *path, char *hex, size_t len)
{
	struct elf_file ef;
	const void *id;
	ssize_t n;
	int ret;

	ret = elf_file_open(path, &ef);
	if (ret)
		return ret;
	n = dwelf_elf_gnu_build_id(ef.elf, &id);
	if (n > 0)
		jw_hex(id, n, hex, len);
	elf_file_close(&ef);
	return n > 0 ? 0 : -ENOENT;
}

unsigned int jw_edit_distance(const char *a, const char *b, unsigned int cap)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	unsigned int row[256], best;

	/* cap + 1 must not wrap. */
	if (cap > 1024)
		cap = 1024;
	/* Names this long are never "close": don't spend time on them. */
	if (lb >= sizeof(row) / sizeof(row[0]) || (la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		unsigned int diag = row[0];

		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			unsigned int up = row[j];
			unsigned int v = diag + (a[i - 1] != b[j - 1]);

			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (up + 1 < v)
				v = up + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

int jw_file_read_at(const char *path, uint64_t off, uint8_t *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, off);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

bool jw_elf_has_functions(const char *path, const char *const *names)
{
	uint64_t off, size;
	char err[512];

	for (; *names; names++)
		if (jw_elf_func_offset(path, *names, &off, &size, err, sizeof(err)))
			return false;
	return true;
}

bool jw_elf_imports_any(const char *path, const char *const *names)
{
	const char *const *n;
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	bool found = false;

	if (elf_file_open(path, &ef))
		return false;
	while (!found && (scn = elf_nextscn(ef.elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx != SHN_UNDEF)
				continue;
			s = elf_strptr(ef.elf, sh.sh_link, sym.st_name);
			for (n = names; s && *n && !found; n++)
				found = name_matches(s, *n);
		}
	}
	elf_file_close(&ef);
	return found;
}

/* The section of @ef named @name, with its header in @sh; NULL when there is none. */
static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, sh))
			continue;
		s = elf_strptr(elf, shstrndx, sh->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

int jw_elf_section(const char *path, const char *name, uint64_t *offset, uint64_t *size)
{
	struct elf_file ef;
	GElf_Shdr sh;
	int ret = elf_file_open(path, &ef);

	if (ret)
		return ret;
	if (section_named(ef.elf, name, &sh) && sh.sh_type == SHT_PROGBITS) {
		*offset = sh.sh_offset;
		*size = sh.sh_size;
	} else {
		ret = -ENOENT;
	}
	elf_file_close(&ef);
	return ret;
}

/* The address of the GOT slot the PLT fills for function @name, from .rela.plt. */
static int plt_slot_of(Elf *elf, const char *name, uint64_t *slot)
{
	GElf_Shdr sh, symsh;
	Elf_Scn *scn = section_named(elf, ".rela.plt", &sh), *symscn;
	Elf_Data *data, *syms;
	size_t i;

	if (!scn || sh.sh_type != SHT_RELA || !sh.sh_entsize)
		return -ENOENT;
	symscn = elf_getscn(elf, sh.sh_link);
	data = elf_getdata(scn, NULL);
	syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!data || !syms || !gelf_getshdr(symscn, &symsh))
		return -ENOENT;
	for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *s;

		if (!gelf_getrela(data, i, &r) || !gelf_getsym(syms, GELF_R_SYM(r.r_info), &sym))
			continue;
		s = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (s && name_matches(s, name)) {
			*slot = r.r_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int jw_elf_plt_stub(const char *path, const char *name, uint64_t *offset)
{
	static const char *const plts[] = { ".plt.sec", ".plt" };
	struct elf_file ef;
	uint64_t slot, at;
	int ret = elf_file_open(path, &ef);
	size_t k;

	if (ret)
		return ret;
	ret = plt_slot_of(ef.elf, name, &slot);
	for (k = 0; !ret && k < 2; k++) {
		GElf_Shdr sh;
		Elf_Scn *scn = section_named(ef.elf, plts[k], &sh);
		Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;

		if (!data || !data->d_buf || data->d_size != sh.sh_size)
			continue;
		/* Stubs are 16 bytes on both architectures (.plt's first one is its resolver). */
		for (at = 0; at + 16 <= sh.sh_size; at += 16) {
			uint64_t to;

			if (jw_arch_plt_slot((const uint8_t *)data->d_buf + at, 16, sh.sh_addr + at,
					     &to) || to != slot)
				continue;
			*offset = sh.sh_offset + at;
			elf_file_close(&ef);
			return 0;
		}
	}
	elf_file_close(&ef);
	return -ENOENT;
}

/* A 32-bit little- or big-endian field of the ELF file @elf at @p. */
static uint32_t elf_u32(Elf *elf, const uint8_t *p)
{
	const unsigned char *id = (const unsigned char *)elf_getident(elf, NULL);

	if (id && id[EI_DATA] == ELFDATA2MSB)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* .eh_frame_hdr's encodings (DWARF's DW_EH_PE_*) the linkers write. */
#define EH_PE_UDATA4 0x03
#define EH_PE_SDATA4 0x0b
#define EH_PE_DATAREL_SDATA4 0x3b

/*
 * Calls @fn with the file offset where each function of @path's unwind table begins (its
 * .eh_frame_hdr's sorted table: a stripped library's static functions too), in the table's
 * order, until it returns nonzero. 0, or -ENOENT when the file has no such table.
 */
static int each_function_start(const char *path, bool (*fn)(uint64_t off, void *ctx), void *ctx)
{
	struct elf_file ef;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	const uint8_t *h;
	uint64_t count, i, off;
	int ret = elf_file_open(path, &ef);

	if (ret)
		return ret;
	ret = -ENOENT;
	scn = section_named(ef.elf, ".eh_frame_hdr", &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	h = d ? d->d_buf : NULL;
	/* version 1; eh_frame_ptr in 4 bytes; a count in 4; a sorted table of 4-byte pairs */
	if (!h || d->d_size < 12 || h[0] != 1 || (h[1] & 0x0f) != EH_PE_SDATA4 ||
	    (h[2] != EH_PE_UDATA4 && h[2] != EH_PE_SDATA4) || h[3] != EH_PE_DATAREL_SDATA4)
		goto out;
	count = elf_u32(ef.elf, h + 8);
	if (count > (d->d_size - 12) / 8)
		goto out;
	ret = 0;
	/* Each pair: where a function begins, from the section's address; then its FDE. */
	for (i = 0; i < count; i++) {
		int32_t rel = (int32_t)elf_u32(ef.elf, h + 12 + 8 * i);

		if (!vaddr_to_offset(ef.elf, sh.sh_addr + (int64_t)rel, &off) && fn(off, ctx))
			break;
	}
out:
	elf_file_close(&ef);
	return ret;
}

struct bounds {
	uint64_t at, first, next;
	bool found;
};

static bool bound(uint64_t off, void *ctx)
{
	struct bounds *b = ctx;

	if (off <= b->at && (!b->found || off > b->first)) {
		b->first = off;
		b->found = true;
	} else if (off > b->at && off < b->next) {
		b->next = off;
	}
	return false;
}

int jw_elf_function_bounds(const char *path, uint64_t at, uint64_t *start, uint64_t *end)
{
	struct bounds b = { .at = at, .next = UINT64_MAX };
	int ret = each_function_start(path, bound, &b);

	if (ret)
		return ret;
	if (!b.found || b.next == UINT64_MAX)
		return -ENOENT;
	*start = b.first;
	*end = b.next;
	return 0;
}

struct starts {
	uint64_t *out;
	size_t max, n;
};

static bool add_start(uint64_t off, void *ctx)
{
	struct starts *s = ctx;

	if (s->n < s->max)
		s->out[s->n] = off;
	s->n++;
	return false;
}

int jw_elf_function_starts(const char *path, uint64_t *out, size_t max, size_t *n)
{
	struct starts s = { .out = out, .max = max };
	int ret = each_function_start(path, add_start, &s);

	*n = s.n < max ? s.n : max;
	return ret ? ret : s.n > max ? -E2BIG : 0;
}
