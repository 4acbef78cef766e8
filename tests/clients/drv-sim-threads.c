/*
 * drv-sim-threads.c - many threads allocating at once on the simulated
 * driver: THREADS threads each do PAIRS cuMemAlloc_v2/cuMemFree_v2 pairs of
 * varied sizes, with a few allocations kept live across the loop; then a
 * fork whose child allocates too (the driver's lock must survive fork).
 * Prints the free memory before and after, which must match.
 *   drv-sim-threads THREADS PAIRS
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static CUcontext ctx;
static long pairs;
static int failures;

static unsigned long long freemem(void)
{
	size_t f = 0, t = 0;
	cuMemGetInfo(&f, &t);
	return f;
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	CUdeviceptr keep[8] = { 0 };

	cuCtxSetCurrent(ctx);
	for (long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		size_t size = 1 + rand_r(&seed) % (3 << 20);
		int slot = i % 8;

		if (cuMemAlloc(&p, size) != CUDA_SUCCESS) {
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (keep[slot]) {
			if (cuMemFree(keep[slot]) != CUDA_SUCCESS)
				__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		}
		keep[slot] = p;
	}
	for (int s = 0; s < 8; s++)
		if (keep[s] && cuMemFree(keep[s]) != CUDA_SUCCESS)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 16;
	pthread_t t[256];
	unsigned long long before;
	CUdeviceptr p;
	pid_t pid;
	int status;

	pairs = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > 256 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 2;
	before = freemem();
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("failures %d, free before %llu after %llu\n", failures, before, freemem());

	pid = fork();
	if (pid == 0) {
		CUresult r1 = cuMemAlloc(&p, 1000), r2 = r1 ? r1 : cuMemFree(p);
		_exit(r1 || r2);
	}
	waitpid(pid, &status, 0);
	printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
