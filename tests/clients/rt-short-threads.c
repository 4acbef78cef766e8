/*
 * rt-short-threads.c THREADS [WAVE] - starts THREADS short-lived threads, WAVE
 * at a time (default 1: each is joined before the next starts); thread i
 * makes one cudaMalloc of 4096 * (i + 1) bytes and frees it, and main prints
 * "thread I tid TID" for each once all are done. For the trace size of many
 * short threads and for records of reused slabs keeping their thread.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"

static long tids[100000];

static void *work(void *arg)
{
	long i = (long)arg;
	void *p;

	tids[i] = syscall(SYS_gettid);
	CK(cudaMalloc(&p, (size_t)4096 * (size_t)(i + 1)));
	CK(cudaFree(p));
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long wave = argc > 2 ? atol(argv[2]) : 1;
	pthread_t t[64];

	if (n < 1 || n > 100000 || wave < 1 || wave > 64)
		return 2;
	CK(cudaSetDevice(0));
	for (long i = 0; i < n; i += wave) {
		long k = n - i < wave ? n - i : wave;

		for (long j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, work, (void *)(i + j)))
				return 1;
		for (long j = 0; j < k; j++)
			pthread_join(t[j], NULL);
	}
	for (long i = 0; i < n; i++)
		printf("thread %ld tid %ld\n", i, tids[i]);
	return 0;
}
