// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the ELF helpers: function offsets (checked against memory), build-ids, hex. */
#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/elfsym.h"

#define SELF "/proc/self/exe"

int main(void);

struct fixture {
	char tmp[64];		/* a temporary file to remove, or "" */
	char err[1024];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->tmp[0])
		unlink(fx->tmp);
	free(fx);
	return 0;
}

/* A function of this file, kept as a symbol of its own. */
__attribute__((noinline, used)) int jw_test_marker_fn(int x);
__attribute__((noinline, used)) int jw_test_marker_fn(int x)
{
	return x * 7 + 3;
}

/* Writes @len bytes of @data to a new temporary file, the fixture's to remove. */
static const char *temp_file(struct fixture *fx, const void *data, size_t len)
{
	int fd;

	snprintf(fx->tmp, sizeof(fx->tmp), "/tmp/jw-elfsym-XXXXXX");
	fd = mkstemp(fx->tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return fx->tmp;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/*
 * Checks that the @len bytes at @offset in @path are the code at @fn in memory: the offset is
 * where the function really is in the file (code is not relocated).
 */
static void assert_code_at(const char *path, uint64_t offset, const void *fn, size_t len)
{
	unsigned char buf[32];
	int fd;

	assert_true(len <= sizeof(buf));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, offset), (ssize_t)len);
	close(fd);
	assert_memory_equal(buf, fn, len);
}

static size_t min_size(uint64_t a, size_t b)
{
	return a < b ? a : b;
}

static void test_edit_distance(void **state)
{
	(void)state;
	assert_int_equal(jw_edit_distance("main", "main", 3), 0);
	assert_int_equal(jw_edit_distance("", "", 3), 0);
	/* One substitution, insertion or deletion. */
	assert_int_equal(jw_edit_distance("main", "mein", 3), 1);
	assert_int_equal(jw_edit_distance("main", "mainx", 3), 1);
	assert_int_equal(jw_edit_distance("main", "man", 3), 1);
	assert_int_equal(jw_edit_distance("main", "ain", 3), 1);
	/* A transposition is two edits. */
	assert_int_equal(jw_edit_distance("main", "mian", 3), 2);
	assert_int_equal(jw_edit_distance("ab", "ba", 3), 2);
	assert_int_equal(jw_edit_distance("kitten", "sitting", 5), 3);
	assert_int_equal(jw_edit_distance("", "abc", 5), 3);
	assert_int_equal(jw_edit_distance("abc", "", 5), 3);
	/* Symmetric. */
	assert_int_equal(jw_edit_distance("sitting", "kitten", 5), 3);
}

static void test_edit_distance_cap(void **state)
{
	char a[300], b[300];

	(void)state;
	/* Past the cap, the answer is cap + 1, whatever the real distance. */
	assert_int_equal(jw_edit_distance("kitten", "sitting", 3), 3);
	assert_int_equal(jw_edit_distance("kitten", "sitting", 2), 3);
	assert_int_equal(jw_edit_distance("kitten", "sitting", 1), 2);
	assert_int_equal(jw_edit_distance("kitten", "sitting", 0), 1);
	assert_int_equal(jw_edit_distance("abcdef", "uvwxyz", 2), 3);
	assert_int_equal(jw_edit_distance("main", "mian", 1), 2);
	assert_int_equal(jw_edit_distance("same", "same", 0), 0);
	/* Lengths alone further apart than the cap. */
	assert_int_equal(jw_edit_distance("a", "abcdef", 2), 3);
	assert_int_equal(jw_edit_distance("abcdef", "a", 2), 3);
	assert_int_equal(jw_edit_distance("a", "abcdef", 5), 5);
	/* Names of 256 characters or more are never close, even when equal. */
	memset(a, 'a', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	assert_int_equal(jw_edit_distance(a, b, 4), 5);
	a[255] = '\0';
	b[255] = '\0';
	assert_int_equal(jw_edit_distance(a, b, 4), 0);
	b[254] = 'b';
	assert_int_equal(jw_edit_distance(a, b, 4), 1);
}

static void test_func_offset_main(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;

	assert_int_equal(jw_elf_func_offset(SELF, "main", &offset, &size, fx->err,
					    sizeof(fx->err)), 0);
	assert_true(offset > 0);
	assert_true(offset < file_size(SELF));
	assert_true(size > 0);
	assert_true(offset + size <= file_size(SELF));
	assert_code_at(SELF, offset, (const void *)main, min_size(size, 16));
}

static void test_func_offset_own_function(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0, main_offset = 0, main_size = 0;

	assert_int_equal(jw_test_marker_fn(1), 10);
	assert_int_equal(jw_elf_func_offset(SELF, "jw_test_marker_fn", &offset, &size, fx->err,
					    sizeof(fx->err)), 0);
	assert_true(offset < file_size(SELF));
	assert_true(size > 0);
	assert_code_at(SELF, offset, (const void *)jw_test_marker_fn, min_size(size, 16));
	assert_int_equal(jw_elf_func_offset(SELF, "main", &main_offset, &main_size, fx->err,
					    sizeof(fx->err)), 0);
	assert_int_not_equal(offset, main_offset);
}

/* The path of the file mapped in this process that holds @addr. */
static void path_of(const void *addr, char *path, size_t len)
{
	Dl_info info;

	assert_int_not_equal(dladdr(addr, &info), 0);
	assert_non_null(info.dli_fname);
	assert_true(info.dli_fname[0] == '/');
	snprintf(path, len, "%s", info.dli_fname);
}

/* A shared library without .symtab (Debian strips libc): the symbol comes from .dynsym. */
static void test_func_offset_libc(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;
	char libc[4096];
	void *fn;

	fn = dlsym(RTLD_DEFAULT, "getpid");
	assert_non_null(fn);
	path_of(fn, libc, sizeof(libc));
	assert_int_equal(jw_elf_func_offset(libc, "getpid", &offset, &size, fx->err,
					    sizeof(fx->err)), 0);
	assert_true(offset < file_size(libc));
	assert_true(size > 0);
	assert_code_at(libc, offset, fn, min_size(size, 16));
}

/* Whether @name is one of the names of @list, "a, b, c". */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; p; p = strstr(p, ", ") ? strstr(p, ", ") + 2 : NULL) {
		if (strncmp(p, name, n) == 0 && (p[n] == '\0' || p[n] == ','))
			return true;
	}
	return false;
}

static void test_func_offset_missing_symbol(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0xdead, size = 0xbeef;
	const char *list;

	assert_int_equal(jw_elf_func_offset(SELF, "mian", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	assert_int_equal(offset, 0xdead);
	assert_int_equal(size, 0xbeef);
	assert_true(strncmp(fx->err, SELF ": no function 'mian'; close matches: ",
			    strlen(SELF ": no function 'mian'; close matches: ")) == 0);
	list = fx->err + strlen(SELF ": no function 'mian'; close matches: ");
	if (!list_has(list, "main"))
		fail_msg("\"main\" not among the close matches: %s", fx->err);
	assert_null(strchr(fx->err, '\n'));
}

/* No near name at all: the message says so and lists nothing. */
static void test_func_offset_missing_no_matches(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;

	assert_int_equal(jw_elf_func_offset(SELF, "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
					    &offset, &size, fx->err, sizeof(fx->err)), -ENOENT);
	assert_string_equal(fx->err,
			    SELF ": no function 'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq'");
}

/* Data symbols are not functions. */
static int jw_test_data_symbol[4] __attribute__((used));

static void test_func_offset_not_a_function(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;

	jw_test_data_symbol[0] = 1;
	assert_int_equal(jw_elf_func_offset(SELF, "jw_test_data_symbol", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	assert_non_null(strstr(fx->err, "no function 'jw_test_data_symbol'"));
}

static void test_func_offset_not_elf(void **state)
{
	static const char script[] = "#!/bin/sh\necho not ELF\n";
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;
	const char *path;
	char want[128];

	path = temp_file(fx, script, strlen(script));
	assert_int_equal(jw_elf_func_offset(path, "main", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOEXEC);
	snprintf(want, sizeof(want), "%s: not an ELF file", path);
	assert_string_equal(fx->err, want);
	assert_int_equal(jw_elf_build_id(path, want, sizeof(want)), -ENOEXEC);
}

static void test_func_offset_empty_file(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;
	const char *path;
	char want[128];

	path = temp_file(fx, "", 0);
	assert_int_equal(jw_elf_func_offset(path, "main", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOEXEC);
	snprintf(want, sizeof(want), "%s: not an ELF file", path);
	assert_string_equal(fx->err, want);
}

static void test_func_offset_missing_file(void **state)
{
	struct fixture *fx = *state;
	uint64_t offset = 0, size = 0;
	char hex[64];

	assert_int_equal(jw_elf_func_offset("/nonexistent/jw/bin", "main", &offset, &size,
					    fx->err, sizeof(fx->err)), -ENOENT);
	assert_string_equal(fx->err, "cannot open /nonexistent/jw/bin: No such file or directory");
	assert_int_equal(jw_elf_build_id("/nonexistent/jw/bin", hex, sizeof(hex)), -ENOENT);
}

/*
 * A hand-made ELF file whose code segment is not loaded at its file offset (as in a non-PIE
 * executable): .text at 0x401000 is at file offset 0x1000, so offsets need the conversion.
 */
#define CRAFT_SIZE 0x4000
#define CRAFT_TEXT_OFF 0x1000
#define CRAFT_TEXT_ADDR 0x401000
#define CRAFT_RO_OFF 0x2000
#define CRAFT_RO_ADDR 0x602000

struct craft {
	unsigned char *buf;
	size_t len;
};

/* Appends @n bytes (aligned to @align) and returns their offset. */
static size_t craft_put(struct craft *c, const void *data, size_t n, size_t align)
{
	size_t off = (c->len + align - 1) & ~(align - 1);

	assert_true(off + n <= CRAFT_SIZE);
	memcpy(c->buf + off, data, n);
	c->len = off + n;
	return off;
}

/* A string table of the NUL-separated, double-NUL-ended @names; @idx gets each name's index. */
static size_t craft_strtab(struct craft *c, const char *names, size_t *idx, size_t *size)
{
	size_t start = craft_put(c, "", 1, 1);	/* index 0: the empty name */
	const char *p;

	for (p = names; *p; p += strlen(p) + 1)
		*idx++ = 1 + (p - names);
	craft_put(c, names, p - names, 1);
	*size = c->len - start;
	return start;
}

static Elf64_Sym craft_sym(size_t name, int bind, int type, int shndx, uint64_t value,
			   uint64_t size)
{
	Elf64_Sym sym = {
		.st_name = name,
		.st_info = ELF64_ST_INFO(bind, type),
		.st_shndx = shndx,
		.st_value = value,
		.st_size = size,
	};

	return sym;
}

static const char *craft_elf(struct fixture *fx)
{
	static const char sym_names[] = "crafted_local\0crafted_fn\0versioned_fn@@VER_1\0data_obj\0"
					"undef_fn\0not_exec_fn\0zero_fn\0";
	static const char dyn_names[] = "dyn_only_fn\0";
	static const char sh_names[] = ".text\0.symtab\0.strtab\0.dynsym\0.dynstr\0.shstrtab\0";
	unsigned char *buf = calloc(1, CRAFT_SIZE);
	struct craft c = { .buf = buf, .len = CRAFT_RO_OFF + 0x100 };
	size_t sn[7], dn[1], hn[6], strtab, strtab_size, symtab, dynstr, dynstr_size, dynsym;
	size_t shstrtab, shstrtab_size, shoff;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	Elf64_Sym syms[8], dsyms[2];
	Elf64_Shdr sh[7];
	const char *path;

	assert_non_null(buf);
	memset(buf + CRAFT_TEXT_OFF, 0xcc, 0x1000);
	strtab = craft_strtab(&c, sym_names, sn, &strtab_size);
	syms[0] = craft_sym(0, 0, 0, SHN_UNDEF, 0, 0);
	syms[1] = craft_sym(sn[0], STB_LOCAL, STT_FUNC, 1, CRAFT_TEXT_ADDR + 0x500, 4);
	syms[2] = craft_sym(sn[1], STB_GLOBAL, STT_FUNC, 1, CRAFT_TEXT_ADDR + 0x234, 0x20);
	syms[3] = craft_sym(sn[2], STB_GLOBAL, STT_FUNC, 1, CRAFT_TEXT_ADDR + 0x300, 8);
	syms[4] = craft_sym(sn[3], STB_GLOBAL, STT_OBJECT, 1, CRAFT_TEXT_ADDR + 0x600, 8);
	syms[5] = craft_sym(sn[4], STB_GLOBAL, STT_FUNC, SHN_UNDEF, 0, 0);
	syms[6] = craft_sym(sn[5], STB_GLOBAL, STT_FUNC, 1, CRAFT_RO_ADDR + 0x40, 4);
	syms[7] = craft_sym(sn[6], STB_GLOBAL, STT_FUNC, 1, 0, 4);
	symtab = craft_put(&c, syms, sizeof(syms), 8);
	dynstr = craft_strtab(&c, dyn_names, dn, &dynstr_size);
	dsyms[0] = craft_sym(0, 0, 0, SHN_UNDEF, 0, 0);
	dsyms[1] = craft_sym(dn[0], STB_GLOBAL, STT_FUNC, 1, CRAFT_TEXT_ADDR + 0x400, 4);
	dynsym = craft_put(&c, dsyms, sizeof(dsyms), 8);
	shstrtab = craft_strtab(&c, sh_names, hn, &shstrtab_size);

	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){ .sh_name = hn[0], .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = CRAFT_TEXT_ADDR,
			      .sh_offset = CRAFT_TEXT_OFF, .sh_size = 0x1000, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = hn[1], .sh_type = SHT_SYMTAB, .sh_offset = symtab,
			      .sh_size = sizeof(syms), .sh_link = 3, .sh_info = 2,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = hn[2], .sh_type = SHT_STRTAB, .sh_offset = strtab,
			      .sh_size = strtab_size, .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = hn[3], .sh_type = SHT_DYNSYM, .sh_offset = dynsym,
			      .sh_size = sizeof(dsyms), .sh_link = 5, .sh_info = 1,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[5] = (Elf64_Shdr){ .sh_name = hn[4], .sh_type = SHT_STRTAB, .sh_offset = dynstr,
			      .sh_size = dynstr_size, .sh_addralign = 1 };
	sh[6] = (Elf64_Shdr){ .sh_name = hn[5], .sh_type = SHT_STRTAB, .sh_offset = shstrtab,
			      .sh_size = shstrtab_size, .sh_addralign = 1 };
	shoff = craft_put(&c, sh, sizeof(sh), 8);

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = CRAFT_TEXT_ADDR;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 2;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 7;
	eh->e_shstrndx = 6;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			      .p_offset = CRAFT_TEXT_OFF, .p_vaddr = CRAFT_TEXT_ADDR,
			      .p_paddr = CRAFT_TEXT_ADDR, .p_filesz = 0x1000, .p_memsz = 0x1000,
			      .p_align = 0x1000 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = CRAFT_RO_OFF,
			      .p_vaddr = CRAFT_RO_ADDR, .p_paddr = CRAFT_RO_ADDR,
			      .p_filesz = 0x100, .p_memsz = 0x100, .p_align = 0x1000 };
	path = temp_file(fx, buf, c.len);
	free(buf);
	return path;
}

static void expect_offset(struct fixture *fx, const char *path, const char *name, uint64_t want,
			  uint64_t want_size)
{
	uint64_t offset = 0, size = 0;

	fx->err[0] = '\0';
	if (jw_elf_func_offset(path, name, &offset, &size, fx->err, sizeof(fx->err)))
		fail_msg("%s: %s", name, fx->err);
	assert_int_equal(offset, want);
	assert_int_equal(size, want_size);
}

static void test_crafted_offsets(void **state)
{
	struct fixture *fx = *state;
	const char *path = craft_elf(fx);

	/* File offset = vaddr - p_vaddr + p_offset, not the vaddr. */
	expect_offset(fx, path, "crafted_fn", 0x1234, 0x20);
	expect_offset(fx, path, "crafted_local", 0x1500, 4);
	/* "name@@VERSION" in the table matches "name". */
	expect_offset(fx, path, "versioned_fn", 0x1300, 8);
	/* Not in .symtab: found in .dynsym. */
	expect_offset(fx, path, "dyn_only_fn", 0x1400, 4);
}

static void test_crafted_not_found(void **state)
{
	struct fixture *fx = *state;
	const char *path = craft_elf(fx);
	uint64_t offset = 0, size = 0;
	char want[256];

	/* Data, undefined and zero-address symbols are no functions to probe. */
	assert_int_equal(jw_elf_func_offset(path, "data_obj", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	assert_int_equal(jw_elf_func_offset(path, "undef_fn", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	assert_int_equal(jw_elf_func_offset(path, "zero_fn", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	/* A prefix of a name is not the name. */
	assert_int_equal(jw_elf_func_offset(path, "crafted", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: no function 'crafted'; close matches: ", path);
	assert_true(strncmp(fx->err, want, strlen(want)) == 0);
	assert_true(list_has(fx->err + strlen(want), "crafted_fn"));
	assert_true(list_has(fx->err + strlen(want), "crafted_local"));
	/* A function outside every executable segment has no file offset to probe. */
	assert_int_equal(jw_elf_func_offset(path, "not_exec_fn", &offset, &size, fx->err,
					    sizeof(fx->err)), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s: function 'not_exec_fn' at 0x%x is in no executable segment", path,
		 CRAFT_RO_ADDR + 0x40);
	assert_string_equal(fx->err, want);
}

static void test_crafted_no_build_id(void **state)
{
	struct fixture *fx = *state;
	const char *path = craft_elf(fx);
	char hex[64] = "untouched";

	assert_int_equal(jw_elf_build_id(path, hex, sizeof(hex)), -ENOENT);
	assert_string_equal(hex, "untouched");
}

/* Reads the GNU build-id note of the main program from its loaded headers. */
static int main_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	char *hex = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *desc;
			size_t namesz = (nh->n_namesz + 3) & ~3u, k;

			desc = (const unsigned char *)(p + sizeof(*nh) + namesz);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0) {
				for (k = 0; k < nh->n_descsz; k++)
					sprintf(hex + 2 * k, "%02x", desc[k]);
				return 1;
			}
			p += sizeof(*nh) + namesz + ((nh->n_descsz + 3) & ~3u);
		}
	}
	/* Only the first object, the main program. */
	return 1;
}

static void test_build_id_self(void **state)
{
	char hex[128], want[128] = "";
	size_t i;

	(void)state;
	memset(hex, 'Z', sizeof(hex));
	assert_int_equal(jw_elf_build_id(SELF, hex, sizeof(hex)), 0);
	assert_int_equal(strlen(hex), 40);
	for (i = 0; i < 40; i++)
		assert_true(isdigit((unsigned char)hex[i]) || (hex[i] >= 'a' && hex[i] <= 'f'));
	dl_iterate_phdr(main_build_id, want);
	assert_string_equal(hex, want);
}

static void test_build_id_truncated(void **state)
{
	char full[64], hex[16];

	(void)state;
	assert_int_equal(jw_elf_build_id(SELF, full, sizeof(full)), 0);
	memset(hex, 'Z', sizeof(hex));
	assert_int_equal(jw_elf_build_id(SELF, hex, 9), 0);
	assert_int_equal(strlen(hex), 8);
	assert_memory_equal(hex, full, 8);
	assert_int_equal(hex[9], 'Z');
}

static void test_hex(void **state)
{
	static const uint8_t id[] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x0f, 0xf0 };
	char hex[32];

	(void)state;
	jw_hex(id, sizeof(id), hex, sizeof(hex));
	assert_string_equal(hex, "deadbeef000ff0");
	jw_hex(id, 4, hex, 9);
	assert_string_equal(hex, "deadbeef");
	/* Only whole bytes: a buffer one short holds one byte less. */
	memset(hex, 'Z', sizeof(hex));
	jw_hex(id, 4, hex, 8);
	assert_string_equal(hex, "deadbe");
	assert_int_equal(hex[7], 'Z');
	jw_hex(id, 4, hex, 3);
	assert_string_equal(hex, "de");
	jw_hex(id, 4, hex, 2);
	assert_string_equal(hex, "");
	jw_hex(id, 4, hex, 1);
	assert_string_equal(hex, "");
	jw_hex(id, 0, hex, sizeof(hex));
	assert_string_equal(hex, "");
	/* A zero-length buffer is not written at all. */
	hex[0] = 'Z';
	jw_hex(id, 4, hex, 0);
	assert_int_equal(hex[0], 'Z');
}

/* What a file calls from another (its undefined dynamic symbols), not what it defines. */
static void test_imports(void **state)
{
	(void)state;
	assert_true(jw_elf_imports_any(SELF, (const char *const[]){ "_cmocka_run_group_tests",
								   NULL }));
	assert_true(jw_elf_imports_any(SELF, (const char *const[]){ "no_such_function",
								   "_cmocka_run_group_tests",
								   NULL }));
	/* defined here (the core is linked in), or nowhere */
	assert_false(jw_elf_imports_any(SELF, (const char *const[]){ "jw_elf_imports_any",
								    "no_such_function", NULL }));
	assert_false(jw_elf_imports_any("/nonexistent", (const char *const[]){ "malloc", NULL }));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_edit_distance),
		T(test_edit_distance_cap),
		T(test_func_offset_main),
		T(test_func_offset_own_function),
		T(test_func_offset_libc),
		T(test_func_offset_missing_symbol),
		T(test_func_offset_missing_no_matches),
		T(test_func_offset_not_a_function),
		T(test_func_offset_not_elf),
		T(test_func_offset_empty_file),
		T(test_func_offset_missing_file),
		T(test_crafted_offsets),
		T(test_crafted_not_found),
		T(test_crafted_no_build_id),
		T(test_build_id_self),
		T(test_build_id_truncated),
		T(test_hex),
		T(test_imports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
