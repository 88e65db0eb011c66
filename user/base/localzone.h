/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local time of stack logs' headers and of file names: in the zone the machine names (TZ,
 * else /etc/localtime), or UTC where it names none, as on Android (whose zone is a system
 * property and its own tzdata, which a C library other than bionic does not read) or on a board
 * with no /etc/localtime. Then jankwatch says its times are UTC.
 */
#ifndef JW_LOCALZONE_H
#define JW_LOCALZONE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether local time is in a zone named here; when not, @why says why in a few words ("no TZ and
 * no /etc/localtime"). @root: where /etc/localtime and the zone files are looked for (NULL: /).
 */
bool jw_local_zone_known(const char *root, char *why, size_t len);

#endif
