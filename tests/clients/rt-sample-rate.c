/*
 * rt-sample-rate.c N MIB GAP_US - device memory samples at new highs
 * (tests/t123): N cudaMalloc of MIB MiB each, GAP_US microseconds apart
 * (0: back to back), all kept; then 3 ms of "compute" and every block
 * freed. Each allocation is a new high of the device.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <time.h>
#include "check.h"

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (us > 0 && nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[1]);
	size_t bytes = (size_t)atol(argv[2]) << 20;
	long gap = atol(argv[3]);
	void **p = calloc((size_t)n, sizeof *p);

	if (!p)
		return 1;
	CK(cudaSetDevice(0));
	for (int i = 0; i < n; i++) {
		CK(cudaMalloc(&p[i], bytes));
		pause_us(gap);
	}
	pause_us(3000);
	for (int i = 0; i < n; i++)
		CK(cudaFree(p[i]));
	free(p);
	return 0;
}
