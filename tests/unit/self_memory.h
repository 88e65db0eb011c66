/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the tests that lay a program's data out in their own memory and read it back as another
 * process's (jw_target_read on their own pid): whether that works here. Under qemu's user-mode
 * emulation (the arm64 unit tests) it does not; such a test is skipped there.
 */
#ifndef JW_TEST_SELF_MEMORY_H
#define JW_TEST_SELF_MEMORY_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "process/target.h"

static inline bool reads_itself(void)
{
	uint64_t x = 42, y = 0;

	return jw_target_read(getpid(), (uintptr_t)&x, &y, sizeof(y)) == 0 && y == 42;
}

#endif
