// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "report/loopnames.h"

/* ev.h's event bits (libev 4). */
static const struct {
	uint32_t bit;
	const char *name;
} ev_bits[] = {
	{ 0x01, "EV_READ" },	    { 0x02, "EV_WRITE" },     { 0x100, "EV_TIMER" },
	{ 0x200, "EV_PERIODIC" },   { 0x400, "EV_SIGNAL" },   { 0x800, "EV_CHILD" },
	{ 0x1000, "EV_STAT" },	    { 0x2000, "EV_IDLE" },    { 0x4000, "EV_PREPARE" },
	{ 0x8000, "EV_CHECK" },	    { 0x10000, "EV_EMBED" },  { 0x20000, "EV_FORK" },
	{ 0x40000, "EV_CLEANUP" },  { 0x80000, "EV_ASYNC" },  { 0x1000000, "EV_CUSTOM" },
	{ 0x80000000u, "EV_ERROR" },
};

const char *jw_ev_mask_name(uint32_t revents, char *buf, size_t len)
{
	size_t n = 0, k;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (k = 0; k < sizeof(ev_bits) / sizeof(ev_bits[0]); k++) {
		if (!(revents & ev_bits[k].bit))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "|" : "", ev_bits[k].name);
		revents &= ~ev_bits[k].bit;
	}
	if (revents)
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%#x", n ? "|" : "", revents);
	if (!n)
		snprintf(buf, len, "0");
	return buf;
}
