// SPDX-License-Identifier: GPL-2.0-only
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "base/buildid.h"

struct found {
	const uint8_t *id;
	size_t len;
};

/* The build-id note in one PT_NOTE segment of @size bytes at @p, or NULL. */
static const uint8_t *note_build_id(const uint8_t *p, size_t size, size_t *len)
{
	size_t off = 0;

	while (size - off >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *n = (const void *)(p + off);
		size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
		const char *nm = (const char *)(n + 1);

		if (name > size - off - sizeof(*n) || desc > size - off - sizeof(*n) - name)
			return NULL;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(nm, "GNU", 4)) {
			*len = n->n_descsz;
			return (const uint8_t *)nm + name;
		}
		off += sizeof(*n) + name + desc;
	}
	return NULL;
}

/* The first object dl_iterate_phdr() gives is the executable. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && !f->id; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			f->id = note_build_id((const uint8_t *)(info->dlpi_addr +
								info->dlpi_phdr[i].p_vaddr),
					      info->dlpi_phdr[i].p_memsz, &f->len);
	return 1;
}

int jw_own_build_id(char *hex, size_t len)
{
	struct found f = { 0 };
	size_t i;

	dl_iterate_phdr(first_object, &f);
	if (!f.id || !f.len)
		return -ENOENT;
	if (len < 2 * f.len + 1)
		return -ENOSPC;
	for (i = 0; i < f.len; i++)
		snprintf(hex + 2 * i, 3, "%02x", f.id[i]);
	return 0;
}
