// SPDX-License-Identifier: GPL-2.0-only
/* The running binary's own build-id (--version), against what libelf reads from its file. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buildid.h"

/* The NT_GNU_BUILD_ID note of the file /proc/self/exe names, as hex, read with libelf. */
static void file_build_id(char *hex, size_t len)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	Elf *elf;

	hex[0] = '\0';
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) && !hex[0]) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name, desc, i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name, "GNU", 4))
				continue;
			assert_true(2 * nh.n_descsz < len);
			for (i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", ((unsigned char *)d->d_buf)[desc + i]);
			break;
		}
	}
	elf_end(elf);
	close(fd);
}

static void test_own_build_id(void **state)
{
	char mine[129], file[129];

	(void)state;
	file_build_id(file, sizeof(file));
	assert_true(strlen(file) >= 16);	/* the linker's --build-id: 20 bytes of SHA-1 */
	assert_int_equal(jw_own_build_id(mine, sizeof(mine)), 0);
	assert_string_equal(mine, file);
	/* Too small for the hex and its terminator. */
	assert_int_equal(jw_own_build_id(mine, strlen(file)), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_build_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
