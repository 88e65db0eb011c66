/* SPDX-License-Identifier: GPL-2.0-only */
/* What the fuzz harnesses share: the input as a C string, or as a file to open. */
#ifndef JW_FUZZ_COMMON_H
#define JW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A NUL-terminated copy of the input (free() it); NULL when out of memory. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/*
 * The input as a file: a memfd, its path "/proc/self/fd/N" in @path. Returns the fd (close()
 * it), or -1.
 */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
