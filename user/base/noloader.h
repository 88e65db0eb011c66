/* SPDX-License-Identifier: GPL-2.0-only */
/* The static build's stand-ins for the dynamic loader (base/noloader.c): they load nothing. */
#ifndef JW_NOLOADER_H
#define JW_NOLOADER_H

#if JW_STATIC
void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlsym(void *handle, const char *name);
int __wrap_dlclose(void *handle);
#endif

#endif
