// SPDX-License-Identifier: GPL-2.0-only
#include "base/text.h"

size_t jw_printable_copy(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t i;

	if (!dstlen)
		return 0;
	for (i = 0; i < srclen && i + 1 < dstlen && src[i]; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	dst[i] = '\0';
	return i;
}

int jw_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
