/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a sample's user registers are, for the architecture it was taken on: this build's, or
 * another's when a capture from another machine is symbolized (include/jankwatch/abi.h has
 * every architecture's block).
 */
#ifndef JW_REGS_H
#define JW_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "jankwatch/abi.h"

struct jw_ureg_layout {
	uint16_t machine;	/* ELF e_machine */
	uint8_t count;		/* registers 0..count-1 go to the unwinder by DWARF number */
	uint8_t sp;
	uint8_t ip;
	uint8_t fp;		/* the frame pointer */
	int8_t lr;		/* the link register, or -1 */
	uint16_t red_zone;	/* bytes below sp a function may use */
	uint64_t ra_mask;	/* the address bits of a return address in the link register */
};

/* The layout of ELF machine @machine (JW_MACHINE: this build's); NULL when none is known. */
static inline const struct jw_ureg_layout *jw_ureg_layout(unsigned int machine)
{
	static const struct jw_ureg_layout layouts[] = { JW_UREG_LAYOUTS };
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].machine == machine)
			return &layouts[i];
	return NULL;
}

#endif
