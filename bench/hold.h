/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the bench's two floors share: libbpf's warnings said under the floor's name, and holding
 * the attached programs until SIGINT or SIGTERM.
 */
#ifndef JW_BENCH_HOLD_H
#define JW_BENCH_HOLD_H

/* Names libbpf's messages after @name and catches SIGINT and SIGTERM. Returns 0 or -errno. */
int hold_init(const char *name);

/* Waits for SIGINT or SIGTERM. */
void hold(void);

/* Waits @ms, or less if SIGINT or SIGTERM comes; whether one came (now or before). */
int hold_ms(unsigned int ms);

#endif
