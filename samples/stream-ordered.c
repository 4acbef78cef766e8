/*
 * stream-ordered.c - stream-ordered allocation (cudaMallocAsync): the
 * pool's reserved memory against what is in use, and what a synchronize
 * and cudaMemPoolTrimTo give back.
 *
 * Part 1, the default pool as CUDA leaves it (release threshold 0): four
 * 8 MiB blocks fill one 32 MiB chunk, a 12 MiB block needs a second chunk.
 * Freeing them lowers "used" but not "reserved"; the next synchronize gives
 * every empty chunk back.
 * Part 2, the pool as PyTorch's cudaMallocAsync backend sets it (release
 * threshold UINT64_MAX: keep everything): three 24 MiB blocks take a chunk
 * each. After the frees and a synchronize the pool still holds them all;
 * only cudaMemPoolTrimTo(pool, 0) (torch.cuda.empty_cache()) gives them back.
 *
 * Expected on the simulated GPU, whose pools grow by chunks of
 * max(32 MiB, request rounded up to 2 MiB) (see samples/README.md):
 *                                    reserved    used
 *   part 1 after 4 x 8 MiB           32 MiB      32 MiB
 *          after 12 MiB              64 MiB      44 MiB
 *          after the frees           64 MiB       0
 *          after the synchronize      0           0
 *   part 2 after 3 x 24 MiB          96 MiB      72 MiB   (the peak)
 *          after frees + synchronize 96 MiB       0
 *          after cudaMemPoolTrimTo    0           0
 *   cudaMallocAsync 8, cudaFreeAsync 8, nothing live at exit; device
 *   memory in use at the peak 396 MiB (300 MiB context + 96 MiB)
 */
#include "sample.h"

#include <stdint.h>

static cudaMemPool_t pool;

static void show(const char *when)
{
	uint64_t reserved = 0, used = 0;

	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
	compute(5);
	printf("  %-34s reserved %3.0f MiB, used %3.0f MiB\n", when, mib(reserved), mib(used));
}

int main(void)
{
	void *p[5];
	cudaStream_t s;
	uint64_t keep_all = UINT64_MAX;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreate(&s));
	CK(cudaDeviceGetDefaultMemPool(&pool, 0));

	printf("stream-ordered: part 1, release threshold 0 (CUDA's default)\n");
	for (int i = 0; i < 4; i++)
		CK(cudaMallocAsync(&p[i], 8 * MiB, s));
	show("after 4 x 8 MiB:");
	CK(cudaMallocAsync(&p[4], 12 * MiB, s));
	show("after 12 MiB more:");
	for (int i = 0; i < 5; i++)
		CK(cudaFreeAsync(p[i], s));
	show("after freeing them all:");
	CK(cudaStreamSynchronize(s));
	show("after cudaStreamSynchronize:");

	printf("stream-ordered: part 2, release threshold UINT64_MAX (as PyTorch sets it)\n");
	CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
	for (int i = 0; i < 3; i++)
		CK(cudaMallocAsync(&p[i], 24 * MiB, s));
	show("after 3 x 24 MiB:");
	for (int i = 0; i < 3; i++)
		CK(cudaFreeAsync(p[i], s));
	CK(cudaStreamSynchronize(s));
	show("after the frees and a synchronize:");
	CK(cudaMemPoolTrimTo(pool, 0));
	show("after cudaMemPoolTrimTo(pool, 0):");
	CK(cudaStreamDestroy(s));
	return 0;
}
