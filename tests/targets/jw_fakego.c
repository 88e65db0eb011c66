// SPDX-License-Identifier: GPL-2.0-only
/*
 * Looks like a Go program to jankwatch (it has the section Go's linker writes its build id to),
 * for the test that Go programs are refused.
 */
#include <unistd.h>

__attribute__((used, section(".note.go.buildid"))) static const char go_build_id[] = "jw-test";

int main(void)
{
	for (;;)
		pause();
}
