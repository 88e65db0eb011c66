// SPDX-License-Identifier: GPL-2.0-only
/*
 * The target of scripts/bench.sh: an event loop that dispatches a cheap task as fast as it can,
 * through two functions with the same code, dispatch() and dispatch_ref(), in alternate batches.
 * The tool under test goes on dispatch(); the floor (an empty uprobe and uretprobe) stays on
 * dispatch_ref() the whole run, so that every window measures the two side by side: whatever
 * slows the machine down for a while (another guest, the host) slows both, and their ratio
 * holds. Once per window it prints the mean wall time per call of each (CLOCK_MONOTONIC), the
 * number of dispatch() calls, and the share of the window the thread was on a CPU:
 *
 *	window <n> <ns_per_dispatch> <dispatch_calls> <on_cpu_pct> <ns_per_dispatch_ref>
 *
 * Whatever a probe costs shows up as added ns per call; an on-CPU share well below 100 says
 * other work took the CPU and the window is not to be trusted. Runs until killed.
 * Usage: jw_bench_loop [WINDOW_MS]   (default 500)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "window.h"

/* Calls between two clock reads: a read costs tens of ns, spread here over 64 dispatches. */
#define CALLS_PER_BATCH 64

/* The work of a task: a few ns the compiler must keep. noipa: dispatch() cannot see inside. */
__attribute__((noipa)) uint64_t mix(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	asm volatile("" ::: "memory");
	return x;
}

/*
 * The dispatch function the probes go on: not static, never inlined or cloned, so the symbol is
 * the code that runs and a uprobe on it sees every call. It keeps a value across a call, so its
 * prologue saves registers like a real dispatcher's: `push %rbp` first with frame pointers,
 * `endbr64; push %rbp` with -fcf-protection.
 *
 * Built with JW_BENCH_QUEUE (the no-frame-pointer build), it is a queue's dispatcher instead: it
 * first checks whether the task was cancelled, and the compiler shrink-wraps it, so that it
 * starts with a load and a test of its argument, which a uprobe single-steps, and saves its
 * registers only after the branch of the early return.
 */
struct task {
#ifdef JW_BENCH_QUEUE
	int cancelled;
#endif
	uint64_t state;
};

/* One definition, two symbols: dispatch() and dispatch_ref() compile to the same code. */
#if defined(JW_BENCH_NARROW) && defined(__x86_64__)
/*
 * JW_BENCH_NARROW: a dispatcher that narrows its int argument before it calls the task's code,
 * without frame pointers: `movslq %edi,%r8; mov %r8d,%edi; call`. The two moves write argument
 * registers and are single-stepped at a uprobe; the call three instructions in is emulated. In
 * assembly, so that no compiler turns the call into a tail jump or adds a prologue. The task's
 * state is narrow_task()'s own: what reaches it is the low half of the task's address.
 */
void narrow_task(int kind);

__attribute__((noinline)) void narrow_task(int kind)
{
	static uint64_t state;
	uint64_t x = state + (uint64_t)(uint32_t)kind;

	state = mix(x) + x;
	asm volatile("" ::: "memory");
}

#define DEFINE_DISPATCH(name)                                                                    \
	void name(struct task *t);                                                               \
	asm(".text\n.globl " #name "\n.type " #name ", @function\n" #name ":\n"                  \
	    "\tmovslq %edi, %r8\n\tmov %r8d, %edi\n\tcall narrow_task\n\tret\n"                 \
	    ".size " #name ", .-" #name "\n");
#else
#ifdef JW_BENCH_QUEUE
#define CANCELLED(t) ((t)->cancelled)
#else
#define CANCELLED(t) 0
#endif
#define DEFINE_DISPATCH(name)                                                                    \
	__attribute__((noinline, noclone)) void name(struct task *t)                             \
	{                                                                                        \
		uint64_t x;                                                                      \
                                                                                                 \
		if (CANCELLED(t))                                                                \
			return;                                                                  \
		x = t->state;                                                                    \
		t->state = mix(x) + x;                                                           \
		asm volatile("" ::: "memory");                                                   \
	}
#endif

DEFINE_DISPATCH(dispatch)
DEFINE_DISPATCH(dispatch_ref)

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The time this thread ran, kernel time (where probes run) included. Once a window: a syscall. */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Calls @fn CALLS_PER_BATCH times; returns the ns they took. */
static uint64_t batch(void (*fn)(struct task *), struct task *task)
{
	uint64_t t = now_ns();

	for (int i = 0; i < CALLS_PER_BATCH; i++)
		fn(task);
	return now_ns() - t;
}

static void run(uint64_t window_ns)
{
	struct task task = { .state = 0x9e3779b97f4a7c15ULL };
	uint64_t calls = 0, n = 0, spent = 0, spent_ref = 0;
	uint64_t start = now_ns(), cpu_start = cpu_ns(), t;

	for (;;) {
		spent += batch(dispatch, &task);
		spent_ref += batch(dispatch_ref, &task);
		calls += CALLS_PER_BATCH;
		t = now_ns();
		if (t - start < window_ns)
			continue;
		printf("window %llu %.2f %llu %.1f %.2f\n", (unsigned long long)n++,
		       (double)spent / (double)calls, (unsigned long long)calls,
		       100.0 * (double)(cpu_ns() - cpu_start) / (double)(t - start),
		       (double)spent_ref / (double)calls);
		calls = spent = spent_ref = 0;
		start = now_ns();
		cpu_start = cpu_ns();
	}
}

int main(int argc, char **argv)
{
	uint64_t window_ns = 500 * 1000000ULL;

	if (!window_from_args(argc, argv, &window_ns))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	run(window_ns);
	return 0;
}
