/* SPDX-License-Identifier: GPL-2.0-only */
/* An array that doubles as it fills. */
#ifndef JW_GROW_H
#define JW_GROW_H

#include <stddef.h>

/*
 * Makes room for one more item of @size in *@arr, which holds @n of its @cap (@first when it is
 * still empty). 0, or -ENOMEM with *@arr as it was.
 */
int jw_grow(void **arr, size_t *cap, size_t n, size_t size, size_t first);

#endif
