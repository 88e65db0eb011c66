// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/gzip.h"

/* zlib's windowBits: 15 for the largest window, +16 to write a gzip header, +32 to detect one. */
#define GZIP_WRITE (15 + 16)
#define GZIP_READ (15 + 32)

bool jw_is_gzip(const void *data, size_t len)
{
	const unsigned char *b = data;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Room for @need more bytes past @used in *@buf of *@cap; 0 or -ENOMEM (-EFBIG past @max). */
static int grow(unsigned char **buf, size_t *cap, size_t used, size_t need, size_t max)
{
	size_t want = *cap ? *cap : 4096;
	unsigned char *nb;

	if (used + need > max)
		return -EFBIG;
	while (want < used + need)
		want *= 2;
	if (want > max)
		want = max;
	if (want <= *cap)
		return 0;
	nb = realloc(*buf, want + 1);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = want;
	return 0;
}

int jw_gzip(const void *data, size_t len, void **out, size_t *out_len)
{
	z_stream zs = { 0 };
	unsigned char *buf;
	uLong bound;
	int ret;

	if (len > UINT_MAX)
		return -EFBIG;
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WRITE, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* deflateBound does not count the gzip header and trailer. */
	bound = deflateBound(&zs, (uLong)len) + 32;
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	ret = deflate(&zs, Z_FINISH);
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*out_len = zs.total_out;
	return 0;
}

int jw_gunzip(const void *data, size_t len, size_t max, void **out, size_t *out_len)
{
	z_stream zs = { 0 };
	unsigned char *buf = NULL;
	size_t cap = 0, used = 0;
	int ret = 0, zret;

	if (!jw_is_gzip(data, len))
		return -EINVAL;
	if (len > UINT_MAX)
		return -EFBIG;
	if (inflateInit2(&zs, GZIP_READ) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	for (;;) {
		ret = grow(&buf, &cap, used, 1, max);
		if (ret)
			break;
		zs.next_out = buf + used;
		zs.avail_out = (uInt)(cap - used < UINT_MAX ? cap - used : UINT_MAX);
		zret = inflate(&zs, Z_NO_FLUSH);
		used = (size_t)(zs.next_out - buf);
		if (zret == Z_STREAM_END) {
			/* Another member may follow (concatenated gzip files are one stream). */
			if (!zs.avail_in)
				break;
			if (!jw_is_gzip(zs.next_in, zs.avail_in)) {
				ret = -EINVAL;
				break;
			}
			inflateReset(&zs);
			continue;
		}
		if (zret == Z_BUF_ERROR && !zs.avail_in) {
			ret = -EINVAL;	/* cut short */
			break;
		}
		if (zret != Z_OK && zret != Z_BUF_ERROR) {
			ret = zret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
	}
	inflateEnd(&zs);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[used] = '\0';
	*out = buf;
	*out_len = used;
	return 0;
}
