// SPDX-License-Identifier: GPL-2.0-only
/*
 * A loop whose slow task runs in code it generated itself, named by a perf map it writes, as a
 * JIT does: every --every ms (a poll() timeout) it spins --ms in a counting loop placed in an
 * anonymous executable mapping. The perf map it writes (/tmp/perf-PID.map) names that code with
 * a name chosen to be hostile (--name, default: quotes, a backslash, a tab, an escape sequence
 * and a carriage return), followed by a line that looks like a forged event. It prints
 * "task <n> busy <begin_ns> <duration_ns>" like the other targets, after "jit <address>".
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "busy.h"

/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const uint8_t spin_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

int main(int argc, char **argv)
{
	struct timer_args args = parse_timer_args(argc, argv);
	const char *name = "JIT:spin \"quoted\" back\\slash\ttab \x1b[31mred\x1b[0m cr\r end";
	unsigned long (*spin)(unsigned long);
	char path[64];
	unsigned int n = 0;
	uint8_t *code;
	FILE *map;
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--name"))
			name = argv[i + 1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, spin_code, sizeof(spin_code));
	spin = (unsigned long (*)(unsigned long))(void *)code;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)code, sizeof(spin_code), name);
	fprintf(map, "{\"event\":\"MAIN_THREAD_JANK\",\"forged\":true}\n");
	fclose(map);
	printf("jit %lx\n", (unsigned long)(uintptr_t)code);
	for (;;) {
		unsigned long long begin, end;

		poll(NULL, 0, (int)args.every);
		begin = now_ns();
		end = begin + args.ms * 1000000ULL;
		while (now_ns() < end)
			sink += spin(200000);
		printf("task %u busy %llu %llu\n", ++n, begin, now_ns() - begin);
		if (args.count && n >= args.count)
			break;
	}
	unlink(path);
	return 0;
}
