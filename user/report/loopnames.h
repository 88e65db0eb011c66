/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names the loops' own data gives a handler besides its function: libev's event masks (the
 * revents a callback ran for).
 */
#ifndef JW_LOOPNAMES_H
#define JW_LOOPNAMES_H

#include <stddef.h>
#include <stdint.h>

/* libev's @revents as "EV_READ|EV_WRITE" (unknown bits as hex); "0" for none. */
const char *jw_ev_mask_name(uint32_t revents, char *buf, size_t len);

#endif
