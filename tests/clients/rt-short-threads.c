/*
 * rt-short-threads.c THREADS [WAVE [hold]] - starts THREADS short-lived
 * threads, WAVE at a time (default 1: each is joined before the next
 * starts); thread i makes one cudaMalloc of 4096 * (i + 1) bytes and frees
 * it, and main prints "thread I tid TID" for each once all are done. With
 * "hold" the threads of a wave wait for each other (a barrier) between
 * their malloc and their free, so all WAVE of them are alive, each with an
 * event written, at once. For the trace size of many short threads and for
 * records of reused or shared slabs keeping their thread.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"

static long tids[100000];
static int hold;
static pthread_barrier_t wave_met;

static void *work(void *arg)
{
	long i = (long)arg;
	void *p;

	tids[i] = syscall(SYS_gettid);
	CK(cudaMalloc(&p, (size_t)4096 * (size_t)(i + 1)));
	if (hold)
		pthread_barrier_wait(&wave_met);
	CK(cudaFree(p));
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long wave = argc > 2 ? atol(argv[2]) : 1;
	pthread_t t[64];

	hold = argc > 3 && strcmp(argv[3], "hold") == 0;
	if (n < 1 || n > 100000 || wave < 1 || wave > 64)
		return 2;
	CK(cudaSetDevice(0));
	for (long i = 0; i < n; i += wave) {
		long k = n - i < wave ? n - i : wave;

		if (hold && pthread_barrier_init(&wave_met, NULL, (unsigned)k))
			return 1;
		for (long j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, work, (void *)(i + j)))
				return 1;
		for (long j = 0; j < k; j++)
			pthread_join(t[j], NULL);
		if (hold)
			pthread_barrier_destroy(&wave_met);
	}
	for (long i = 0; i < n; i++)
		printf("thread %ld tid %ld\n", i, tids[i]);
	return 0;
}
