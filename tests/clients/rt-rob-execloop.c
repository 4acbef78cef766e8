/*
 * rt-rob-execloop.c N - a program that execs itself N times. Image k (the
 * one started with N = k) allocates (k + 1) MiB and frees it, allocates
 * (k + 1) * 4 KiB and keeps it, then execs itself with N - 1; the image
 * with N = 0 prints "done" instead. So under memtrace: N + 1 images of one
 * pid, N + 1 traces, each with exactly its own two allocations and one free.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	char next[16];
	void *p, *keep;

	CK(cudaMalloc(&p, (size_t)(n + 1) << 20));
	CK(cudaFree(p));
	CK(cudaMalloc(&keep, (size_t)(n + 1) * 4096));
	if (n <= 0) {
		printf("done\n");
		return 0;
	}
	snprintf(next, sizeof next, "%d", n - 1);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], next, (char *)NULL);
	perror("execl");
	return 127;
}
