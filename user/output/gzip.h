/* SPDX-License-Identifier: GPL-2.0-only */
/* Whole buffers gzipped and gunzipped with zlib (profile.proto files are gzipped on disk). */
#ifndef JW_GZIP_H
#define JW_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/* Whether @data (@len bytes) begins with gzip's magic bytes. */
bool jw_is_gzip(const void *data, size_t len);

/* @data (@len bytes) gzipped into a malloc'd @out of @out_len bytes. 0 or -ENOMEM. */
int jw_gzip(const void *data, size_t len, void **out, size_t *out_len);

/*
 * Gzipped @data (@len bytes, one member or several) inflated into a malloc'd @out of @out_len
 * bytes, NUL-terminated past the end. 0; -EFBIG when it would exceed @max bytes; -EINVAL when
 * it is not gzip or is damaged; -ENOMEM.
 */
int jw_gunzip(const void *data, size_t len, size_t max, void **out, size_t *out_len);

#endif
