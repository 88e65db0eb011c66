// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"

/* libsupc++'s, declared by <cxxabi.h> for C++ only. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

bool jw_demangle(const char *name, char *buf, size_t size)
{
	char *full;
	size_t n;
	int status = -1;

	/* _Z: a mangled function or variable; the demangler also takes bare types ("i" is int). */
	if (!name || strncmp(name, "_Z", 2) != 0 || !size)
		return false;
	full = __cxa_demangle(name, NULL, NULL, &status);
	if (!full || status != 0) {
		free(full);
		return false;
	}
	n = strlen(full);
	if (n >= size)
		n = size - 1;
	memcpy(buf, full, n);
	buf[n] = '\0';
	free(full);
	return true;
}
