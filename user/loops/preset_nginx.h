/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nginx: a worker's ngx_process_events_and_timers holds the wait, so the waits bound the task and
 * the stacks name its handler (presets.c's table); its master runs no loop: its workers do.
 */
#ifndef JW_PRESET_NGINX_H
#define JW_PRESET_NGINX_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The worker processes of nginx master process @pid: its children that run the same file; the
 * master runs no event loop. Returns how many (at most @max), 0 when @pid is not an nginx master,
 * or -errno.
 */
int jw_nginx_workers(pid_t pid, pid_t *out, size_t max);

#endif
