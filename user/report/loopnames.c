// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "process/target.h"
#include "report/loopnames.h"

struct bit_name {
	uint32_t bit;
	const char *name;
};

/* ev.h's event bits (libev 4). */
static const struct bit_name ev_bits[] = {
	{ 0x01, "EV_READ" },	    { 0x02, "EV_WRITE" },     { 0x100, "EV_TIMER" },
	{ 0x200, "EV_PERIODIC" },   { 0x400, "EV_SIGNAL" },   { 0x800, "EV_CHILD" },
	{ 0x1000, "EV_STAT" },	    { 0x2000, "EV_IDLE" },    { 0x4000, "EV_PREPARE" },
	{ 0x8000, "EV_CHECK" },	    { 0x10000, "EV_EMBED" },  { 0x20000, "EV_FORK" },
	{ 0x40000, "EV_CLEANUP" },  { 0x80000, "EV_ASYNC" },  { 0x1000000, "EV_CUSTOM" },
	{ 0x80000000u, "EV_ERROR" },
};

/* android::Looper's event bits (utils/Looper.h). */
static const struct bit_name looper_bits[] = {
	{ 0x01, "EVENT_INPUT" }, { 0x02, "EVENT_OUTPUT" }, { 0x04, "EVENT_ERROR" },
	{ 0x08, "EVENT_HANGUP" }, { 0x10, "EVENT_INVALID" },
};

/* @mask by the @n names of @bits, "A|B" (unknown bits as hex); "0" for none. */
static const char *mask_name(const struct bit_name *bits, size_t n_bits, uint32_t mask, char *buf,
			     size_t len)
{
	size_t n = 0, k;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (k = 0; k < n_bits; k++) {
		if (!(mask & bits[k].bit))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "|" : "", bits[k].name);
		mask &= ~bits[k].bit;
	}
	if (mask)
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%#x", n ? "|" : "", mask);
	if (!n)
		snprintf(buf, len, "0");
	return buf;
}

const char *jw_ev_mask_name(uint32_t revents, char *buf, size_t len)
{
	return mask_name(ev_bits, sizeof(ev_bits) / sizeof(ev_bits[0]), revents, buf, len);
}

const char *jw_looper_events_name(uint32_t events, char *buf, size_t len)
{
	return mask_name(looper_bits, sizeof(looper_bits) / sizeof(looper_bits[0]), events, buf,
			 len);
}

/* struct wl_interface (wayland-util.h): name, version, method_count, methods, ... */
#define WL_IFACE_METHOD_COUNT 12
#define WL_IFACE_METHODS 16
#define WL_MESSAGE_SIZE 24	/* struct wl_message: name, signature, types */
#define WL_MAX_METHODS 256

bool jw_wl_interface_name(pid_t pid, uint64_t iface, char *buf, size_t len)
{
	uint64_t name;

	return iface && !jw_target_read(pid, iface, &name, sizeof(name)) &&
	       !jw_target_read_string(pid, name, buf, len) && buf[0];
}

bool jw_wl_request_name(pid_t pid, uint64_t iface, uint64_t impl, uint64_t fn, char *buf,
			size_t len)
{
	uint64_t fns[WL_MAX_METHODS], methods, name;
	char iname[128], rname[128];
	int32_t count;
	int i;

	if (!impl || !jw_wl_interface_name(pid, iface, iname, sizeof(iname)) ||
	    jw_target_read(pid, iface + WL_IFACE_METHOD_COUNT, &count, sizeof(count)) ||
	    count <= 0 || count > WL_MAX_METHODS ||
	    jw_target_read(pid, iface + WL_IFACE_METHODS, &methods, sizeof(methods)) ||
	    jw_target_read(pid, impl, fns, (size_t)count * sizeof(fns[0])))
		return false;
	for (i = 0; i < count; i++) {
		if (fns[i] != fn)
			continue;
		if (jw_target_read(pid, methods + (uint64_t)i * WL_MESSAGE_SIZE, &name,
				   sizeof(name)) ||
		    jw_target_read_string(pid, name, rname, sizeof(rname)))
			return false;
		snprintf(buf, len, "%s.%s", iname, rname);
		return true;
	}
	return false;
}
