/*
 * rt-threads.c THREADS PAIRS - every thread makes PAIRS cudaMalloc/cudaFree
 * pairs of sizes that cycle through 256 B .. 1 MiB, then prints one line with
 * its count. Used for "no event lost or doubled" under contention.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include "check.h"

static long pairs;

static void *work(void *arg)
{
	long id = (long)arg;
	CK(cudaSetDevice(0));
	for (long i = 0; i < pairs; i++) {
		void *p;
		CK(cudaMalloc(&p, (size_t)256 << ((i + id) % 13)));
		CK(cudaFree(p));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pairs = argc > 2 ? atol(argv[2]) : 1000;
	pthread_t t[256];

	if (n < 1 || n > 256)
		return 2;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads x %ld pairs\n", n, pairs);
	return 0;
}
