/*
 * rt-rep-pool.c - pools, a caching allocator and its out-of-memory retry
 * (tests/t212), run with SIMCUDA_MEM=1G SIMCUDA_POOL_CHUNK=32M (and the
 * default 300 MiB context):
 *   a 20 MiB segment from a function named like PyTorch's caching
 *   allocator (reserved and cached, not allocated; kept to the end: cache,
 *   not a leak); two 4 MiB cudaMallocAsync (pool reserved 32 MiB, used
 *   8 MiB); a 600 MiB cudaMalloc: peak reserved 652 MiB, allocated 608 MiB,
 *   cached 44 MiB; the pool has 24 MiB free in one extent.
 *   Then a 200 MiB request fails (952 MiB used of 1 GiB), the 600 MiB
 *   buffer is freed and the 200 MiB retry succeeds: the OOM signature
 *   (requested 200 MiB, 1 free of 600 MiB, retry succeeded).
 *   Everything else is freed, the stream synchronized (pool back to 0):
 *   live at exit 20 MiB, all of it the caching allocator's.
 */
#include <cuda_runtime_api.h>
#include <unistd.h>
#include "check.h"

/* c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc() */
__attribute__((noinline)) void *caching_malloc(size_t n)
	__asm__("_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEm");
__attribute__((noinline)) void *caching_malloc(size_t n)
{
	void *p;
	CK(cudaMalloc(&p, n));
	return p;
}

int main(void)
{
	cudaStream_t s;
	void *seg, *x, *y, *big, *retry;

	CK(cudaStreamCreate(&s));
	seg = caching_malloc(20 << 20);
	CK(cudaMallocAsync(&x, 4 << 20, s));
	CK(cudaMallocAsync(&y, 4 << 20, s));
	CK(cudaMalloc(&big, (size_t)600 << 20));
	usleep(1000);
	EXPECT(cudaMalloc(&retry, (size_t)200 << 20), cudaErrorMemoryAllocation);
	(void)cudaGetLastError();
	CK(cudaFree(big));
	CK(cudaMalloc(&retry, (size_t)200 << 20));
	CK(cudaFree(retry));
	CK(cudaFreeAsync(x, s));
	CK(cudaFreeAsync(y, s));
	CK(cudaStreamSynchronize(s));
	(void)seg;
	return 0;
}
