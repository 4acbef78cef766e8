/*
 * lib-pyhelper.c - a shared library the Python test clients load with
 * ctypes (tests/clients/py-*.py): allocations made from C, so a test can
 * tell native frames from Python ones.
 *
 *   pyh_thread_alloc(bytes)  cudaMalloc + cudaFree on a new pthread, which
 *                            has no Python thread state at all; returns 0
 *   pyh_loop(n, bytes)       n cudaMalloc/cudaFree pairs from the calling
 *                            thread (the benchmark's inner loop); returns 0
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>

__attribute__((visibility("default"))) int pyh_loop(long n, size_t bytes);
__attribute__((visibility("default"))) int pyh_thread_alloc(size_t bytes);

int pyh_loop(long n, size_t bytes)
{
	for (long i = 0; i < n; i++) {
		void *p;
		if (cudaMalloc(&p, bytes) != cudaSuccess || cudaFree(p) != cudaSuccess)
			return -1;
	}
	return 0;
}

static void *thread_main(void *arg)
{
	return (void *)(long)pyh_loop(1, *(size_t *)arg);
}

int pyh_thread_alloc(size_t bytes)
{
	pthread_t t;
	void *rc;

	if (pthread_create(&t, NULL, thread_main, &bytes) != 0 || pthread_join(t, &rc) != 0)
		return -1;
	return (int)(long)rc;
}
