/*
 * rt-pools.c - stream-ordered allocations. With SIMCUDA_POOL_CHUNK=32M:
 * three cudaMallocAsync of 4 MiB from the default pool (reserved 32 MiB,
 * used 12 MiB), cudaFreeAsync of all three (used 0, reserved still 32 MiB),
 * cudaStreamSynchronize (reserved 0); then a created pool with a 64 MiB
 * release threshold: cudaMallocFromPoolAsync of 40 MiB (reserved 40 MiB),
 * free, synchronize (kept: under the threshold), cudaMemPoolTrimTo(0)
 * (reserved 0), destroy. The per-thread variant cudaMallocAsync_ptsz is
 * called once too (1 MiB).
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "check.h"

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);

static unsigned long long reserved(cudaMemPool_t pool)
{
	uint64_t v = 0;
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &v));
	return (unsigned long long)v;
}

int main(void)
{
	cudaStream_t s;
	cudaMemPool_t def, mine;
	void *a, *b, *c, *d, *e;
	struct cudaMemPoolProps props = { 0 };
	uint64_t threshold = 64 << 20;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreate(&s));
	CK(cudaDeviceGetDefaultMemPool(&def, 0));
	CK(cudaMallocAsync(&a, 4 << 20, s));
	CK(cudaMallocAsync(&b, 4 << 20, s));
	CK(cudaMallocAsync(&c, 4 << 20, s));
	printf("reserved after 3 x 4 MiB: %llu\n", reserved(def));
	CK(cudaFreeAsync(a, s));
	CK(cudaFreeAsync(b, s));
	CK(cudaFreeAsync(c, s));
	printf("reserved after frees: %llu\n", reserved(def));
	CK(cudaStreamSynchronize(s));
	printf("reserved after sync: %llu\n", reserved(def));

	CK(cudaMallocAsync_ptsz(&e, 1 << 20, cudaStreamPerThread));
	CK(cudaFreeAsync_ptsz(e, cudaStreamPerThread));
	CK(cudaStreamSynchronize(cudaStreamPerThread));

	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	CK(cudaMemPoolCreate(&mine, &props));
	CK(cudaMemPoolSetAttribute(mine, cudaMemPoolAttrReleaseThreshold, &threshold));
	CK(cudaMallocFromPoolAsync(&d, 40 << 20, mine, s));
	CK(cudaFreeAsync(d, s));
	CK(cudaStreamSynchronize(s));
	printf("created pool after sync: %llu\n", reserved(mine));
	CK(cudaMemPoolTrimTo(mine, 0));
	printf("created pool after trim: %llu\n", reserved(mine));
	CK(cudaMemPoolDestroy(mine));
	CK(cudaStreamDestroy(s));
	return 0;
}
