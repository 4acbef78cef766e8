/*
 * alloc-loop.c THREADS PAIRS DEPTH [malloc] - the per-event cost benchmark:
 * each thread makes PAIRS cuMemAlloc_v2/cuMemFree_v2 pairs of 4 KiB on the
 * (simulated, or bench/standin) driver, from a call stack DEPTH frames deep
 * (the same stack every time: "a repeated stack"). Prints the mean ns per
 * pair over all threads' CPU time (user + system, so the figure does not
 * depend on how many cores the machine has). Run with and without
 * libmemtrace.so preloaded; the difference divided by 2 is the cost per
 * event. With "malloc" the pairs are malloc/free of 4 KiB instead, the
 * same loop for heaptrack (which traces the C heap, not CUDA).
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long pairs;
static int depth, use_malloc;
static void *volatile sink;

static uint64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static __attribute__((noinline)) void loop(int level)
{
	if (level > 0) {
		loop(level - 1);
		__asm__ volatile("" ::: "memory");   /* keep the frame */
		return;
	}
	if (use_malloc) {
		for (long i = 0; i < pairs; i++) {
			sink = malloc(4096);
			free(sink);
		}
		return;
	}
	for (long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS || cuMemFree_v2(p) != CUDA_SUCCESS)
			exit(1);
	}
}

static void *work(void *ctx)
{
	if (ctx)
		cuCtxSetCurrent((CUcontext)ctx);
	loop(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	CUdevice dev;
	CUcontext ctx;

	pairs = argc > 2 ? atol(argv[2]) : 100000;
	depth = argc > 3 ? atoi(argv[3]) : 0;
	use_malloc = argc > 4 && strcmp(argv[4], "malloc") == 0;
	if (n < 1 || n > 64)
		return 1;
	if (use_malloc)
		ctx = NULL;
	else if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev))
		return 1;
	uint64_t t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, ctx);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%.1f\n", (double)(cpu_ns() - t0) / (double)(pairs * n));
	return 0;
}
