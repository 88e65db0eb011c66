/* SPDX-License-Identifier: GPL-2.0-only */
/* jankwatch's own memory kept out of transparent huge pages; a program it starts, not. */
#ifndef JW_BASE_THP_H
#define JW_BASE_THP_H

/*
 * Transparent huge pages off for this process (PR_SET_THP_DISABLE): khugepaged, which collapses
 * a process's pages into huge ones with its memory map locked for writing, runs at nice 19, and
 * beside a watched thread spinning on the same CPU it held jankwatch's map for 1-2 s while
 * jankwatch's own brk() waited on it (a one-CPU VM): a hang seen that late. What this process
 * inherited is remembered for jw_thp_restore(). Kernels without the flag: nothing.
 */
void jw_thp_keep_out(void);

/* In a child about to exec a program: the setting jankwatch inherited, back. */
void jw_thp_restore(void);

#endif
