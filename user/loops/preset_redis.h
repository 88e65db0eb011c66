/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * redis: call(c) runs each command; the wait calls bound the iteration, so time spent in
 * serverCron or beforeSleep is caught too, and the command's function (c->cmd->proc, a chain
 * derived from call's code) names the handler.
 */
#ifndef JW_PRESET_REDIS_H
#define JW_PRESET_REDIS_H

#include <stddef.h>

#include "loops/preset.h"

/* Hooks call() in @out->where, naming handlers when its code shows the chain. */
bool jw_redis_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why it is redis, for the log line. */
void jw_redis_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
