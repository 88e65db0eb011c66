// SPDX-License-Identifier: GPL-2.0-only
/*
 * A static jankwatch (cmake/static.cmake) has no dynamic loader to call: a dlopen() in a static
 * glibc program loads the shared libraries of the glibc it was linked with, which a device does
 * not have. The static link wraps dlopen, dlsym and dlclose (-Wl,--wrap) to these, which load
 * nothing: libdw's debuginfod client then finds no libdebuginfod, as on a machine without it.
 * jankwatch's own client (stacks/debuginfo.c) does not call them in a static build.
 */
#include <stddef.h>

#include "base/noloader.h"

#if JW_STATIC
void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

void *__wrap_dlsym(void *handle, const char *name)
{
	(void)handle;
	(void)name;
	return NULL;
}

int __wrap_dlclose(void *handle)
{
	(void)handle;
	return -1;
}
#endif
