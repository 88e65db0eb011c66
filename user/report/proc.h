/* SPDX-License-Identifier: GPL-2.0-only */
/* A watched process as the writers see it: what naming its code and its tasks needs. */
#ifndef JW_PROC_H
#define JW_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "jankwatch/abi.h"
#include "stacks/symbolize.h"
#include "process/target.h"

struct jw_stack_rule;

/* The hooked "function" of the tasks bounded by the waits (syscall mode): a loop iteration. */
#define JW_WAIT_HANDLER "syscall"

struct jw_proc {
	struct jw_target target;
	struct jw_symbolizer *sym;		/* may be NULL: frames by address */
	uint64_t start_boot_ns;			/* the process's start, CLOCK_BOOTTIME */
	const char *handlers[JW_MAX_PROBES];	/* by probe id: the hooked function */
	const char *loop;			/* how it is hooked: a preset, "syscall", "probe" */
	const struct jw_stack_rule *handler_rule;	/* the preset's: see struct jw_preset */
	bool handler_addr_is_data;	/* the kernel's handler address is no code (a code object) */
	int names;			/* enum jw_handler_names: how its chains' values are named */
};

#endif
