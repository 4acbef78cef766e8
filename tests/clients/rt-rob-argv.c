/*
 * rt-rob-argv.c [reexec] - a command line and an executable path full of
 * bytes that must be escaped. With "reexec" it executes itself (through
 * /proc/self/exe, so under whatever odd file name it was started) with
 *   argv = { "we\"ird\\0\n\xff\t", "a b", "", "\xc3\xa9", "\x01" }
 * and that image makes one cudaMalloc/cudaFree pair of 1 MiB and prints the
 * number of its arguments.
 */
#include <cuda_runtime_api.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv)
{
	void *p;

	if (argc == 2 && strcmp(argv[1], "reexec") == 0) {
		char *args[] = { "we\"ird\\0\n\xff\t", "a b", "", "\xc3\xa9", "\x01", NULL };
		execv("/proc/self/exe", args);
		perror("execv");
		return 127;
	}
	CK(cudaMalloc(&p, 1 << 20));
	CK(cudaFree(p));
	printf("%d args\n", argc);
	return 0;
}
