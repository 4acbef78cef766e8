/*
 * rt-closefds.c N - allocates, then closes every descriptor from 3 up and
 * opens files so they take the freed numbers (as daemons and some launchers
 * do), then makes N more cudaMalloc/cudaFree pairs. Prints the number of
 * pairs made after the close.
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	void *p;

	CK(cudaMalloc(&p, 1 << 20));
	CK(cudaFree(p));
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < 8; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			return 1;
	for (long i = 0; i < n; i++) {
		CK(cudaMalloc(&p, 4096));
		CK(cudaFree(p));
	}
	printf("%ld pairs after closing every descriptor\n", n);
	return 0;
}
