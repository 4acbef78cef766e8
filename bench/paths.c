/*
 * paths.c THREADS PAIRS PATHS [ORDER] [PAD] [malloc] - the per-event cost
 * on varied call paths (bench/alloc-loop.c repeats one). Each thread makes
 * PAIRS cuMemAlloc_v2/cuMemFree_v2 pairs of 4 KiB (with "malloc": malloc
 * and free, for heaptrack), each pair from one of PATHS call paths: the
 * path number's bits pick node0() or node1() at each of log2(PATHS) levels,
 * so paths differ in their return addresses, not only in depth. ORDER is
 * "seq" (path i % PATHS) or "rand" (an LCG per thread); PATHS "rec" instead
 * recurses to a random depth of 1-64 for every pair. PAD frames of
 * recursion sit between the path's levels and the pair (the "padding": a
 * deep common tail). Prints the mean CPU ns per pair over all threads, like
 * alloc-loop: run with and without the recorder, halve the difference.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define KEEP() __asm__ volatile("" ::: "memory")

static long pairs;
static int levels, pad, use_malloc, rand_order, recursive;
static unsigned npaths;
static volatile int which;  /* node0 and node1 differ: not folded into one */

static uint64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static __attribute__((noinline)) void pair(void)
{
	if (use_malloc) {
		void *p = malloc(4096);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	} else {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS || cuMemFree_v2(p) != CUDA_SUCCESS)
			exit(1);
	}
	KEEP();
}

static __attribute__((noinline)) void padding(int n)
{
	if (n > 0) {
		padding(n - 1);
		KEEP();
		return;
	}
	pair();
	KEEP();
}

static void node0(int level, unsigned path);
static void node1(int level, unsigned path);
static void (*const nodes[2])(int, unsigned) = { node0, node1 };

static __attribute__((noinline)) void node0(int level, unsigned path)
{
	which = 0;
	if (level == levels)
		padding(pad);
	else
		nodes[(path >> level) & 1](level + 1, path);
	KEEP();
}

static __attribute__((noinline)) void node1(int level, unsigned path)
{
	which = 1;
	if (level == levels)
		padding(pad);
	else
		nodes[(path >> level) & 1](level + 1, path);
	KEEP();
}

static void *work(void *ctx)
{
	unsigned seed = 12345u + (unsigned)(uintptr_t)pthread_self();

	if (ctx)
		cuCtxSetCurrent((CUcontext)ctx);
	for (long i = 0; i < pairs; i++) {
		unsigned r = (unsigned)i;
		if (rand_order || recursive) {
			seed = seed * 1103515245u + 12345u;
			r = seed >> 8;
		}
		if (recursive)
			padding((int)(r % 64));     /* 1-64 frames with pair() */
		else
			node0(0, r % npaths);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	CUdevice dev;
	CUcontext ctx = NULL;

	pairs = argc > 2 ? atol(argv[2]) : 100000;
	recursive = argc > 3 && strcmp(argv[3], "rec") == 0;
	npaths = argc > 3 && !recursive ? (unsigned)atoi(argv[3]) : 1;
	rand_order = argc > 4 && strcmp(argv[4], "rand") == 0;
	pad = argc > 5 ? atoi(argv[5]) : 0;
	use_malloc = argc > 6 && strcmp(argv[6], "malloc") == 0;
	if (n < 1 || n > 64 || npaths < 1 || (npaths & (npaths - 1)) || pad < 0 || pad > 200)
		return 1;
	while ((1u << levels) < npaths)
		levels++;
	if (!use_malloc && (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev)))
		return 1;
	uint64_t t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, ctx);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%.1f\n", (double)(cpu_ns() - t0) / (double)(pairs * n));
	return 0;
}
