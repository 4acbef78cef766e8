/*
 * rt-nvtxmem.c - a pool allocator that announces its heaps and regions
 * with NVTX's memory extension (the toolkit's header-only
 * nvtx3/nvToolsExtMem.h) and knows nothing of memtrace; tests/t650-t653
 * run it. MiB offsets from each heap's start:
 *
 *   rt-nvtxmem pool    domain "pools", heap "arena" 64 MiB (a cudaMalloc):
 *                        reg_batch: [0, 8) and [8, 16) in one call
 *                        reg_one:   [24, 32), then [40, 56)
 *                        resize [24, 32) to [24, 36): 44 MiB live (the
 *                          peak: holes [16,24) [36,40) [56,64))
 *                        unregister [8, 16) by pointer
 *                        name [40, 56) "weights" (a chained tool's only)
 *                      domain "scratch-dom", heap "scratch" 16 MiB:
 *                        reg_batch: [0, 4) and [8, 12), handles asked for
 *                        unregister [0, 4) by its handle
 *                      a cudaMalloc of 24 MiB that fails when the device
 *                      has only 8 MiB left (SIMCUDA_MEM=388M: 300 context
 *                      + 64 + 16), then: a reset of "scratch", [0, 16)
 *                      registered in it, "scratch" unregistered and freed;
 *                      "arena" keeps its 3 regions (36 MiB) to the end
 *   rt-nvtxmem misuse  heap "m" 8 MiB in domain "bad": a region past its
 *                      end, an unregister of no region, an overlap, a
 *                      region in a heap never registered, a resize past
 *                      the end, an unregister of an unknown heap
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

#define MiB (1u << 20)

static nvtxMemHeapHandle_t heap(nvtxDomainHandle_t d, const char *name, void *base, size_t size)
{
	nvtxMemVirtualRangeDesc_t range = { size, base };
	nvtxMemHeapDesc_t desc;

	memset(&desc, 0, sizeof desc);
	desc.extCompatID = NVTX_EXT_COMPATID_MEM;
	desc.structSize = sizeof desc;
	desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
	desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	desc.typeSpecificDescSize = sizeof range;
	desc.typeSpecificDesc = &range;
	desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
	desc.message.ascii = name;
	return nvtxMemHeapRegister(d, &desc);
}

static void regions(nvtxDomainHandle_t d, nvtxMemHeapHandle_t h, const nvtxMemVirtualRangeDesc_t *r,
		    size_t n, nvtxMemRegionHandle_t *out)
{
	nvtxMemRegionsRegisterBatch_t b;

	memset(&b, 0, sizeof b);
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof b;
	b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	b.heap = h;
	b.regionCount = n;
	b.regionDescElementSize = sizeof *r;
	b.regionDescElements = r;
	b.regionHandleElementsOut = out;
	nvtxMemRegionsRegister(d, &b);
}

/* Two call paths, so the report has two sites. */
static __attribute__((noinline, noclone)) void reg_batch(nvtxDomainHandle_t d, nvtxMemHeapHandle_t h,
						char *base, size_t a, size_t b, size_t size,
						nvtxMemRegionHandle_t *out)
{
	nvtxMemVirtualRangeDesc_t r[2] = { { size, base + a }, { size, base + b } };

	regions(d, h, r, 2, out);
}

static __attribute__((noinline, noclone)) void reg_one(nvtxDomainHandle_t d, nvtxMemHeapHandle_t h,
					      char *at, size_t size)
{
	nvtxMemVirtualRangeDesc_t r = { size, at };

	regions(d, h, &r, 1, NULL);
}

static void resize(nvtxDomainHandle_t d, char *at, size_t size)
{
	nvtxMemVirtualRangeDesc_t r = { size, at };
	nvtxMemRegionsResizeBatch_t b;

	memset(&b, 0, sizeof b);
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof b;
	b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	b.regionDescCount = 1;
	b.regionDescElementSize = sizeof r;
	b.regionDescElements = &r;
	nvtxMemRegionsResize(d, &b);
}

static void unregister(nvtxDomainHandle_t d, uint32_t type, nvtxMemRegionRef_t ref)
{
	nvtxMemRegionsUnregisterBatch_t b;

	memset(&b, 0, sizeof b);
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof b;
	b.refType = type;
	b.refCount = 1;
	b.refElementSize = sizeof ref;
	b.refElements = &ref;
	nvtxMemRegionsUnregister(d, &b);
}

static void by_pointer(nvtxDomainHandle_t d, const void *p)
{
	nvtxMemRegionRef_t ref;

	ref.pointer = p;
	unregister(d, NVTX_MEM_REGION_REF_TYPE_POINTER, ref);
}

static void name(nvtxDomainHandle_t d, const void *p, const char *text)
{
	nvtxMemRegionNameDesc_t n;
	nvtxMemRegionsNameBatch_t b;

	memset(&n, 0, sizeof n);
	n.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
	n.nameType = NVTX_MESSAGE_TYPE_ASCII;
	n.region.pointer = p;
	n.name.ascii = text;
	memset(&b, 0, sizeof b);
	b.extCompatID = NVTX_EXT_COMPATID_MEM;
	b.structSize = sizeof b;
	b.regionCount = 1;
	b.regionElementSize = sizeof n;
	b.regionElements = &n;
	nvtxMemRegionsName(d, &b);
}

static int pool(void)
{
	nvtxDomainHandle_t pools = nvtxDomainCreateA("pools"), sd = nvtxDomainCreateA("scratch-dom");
	char *arena, *scratch;
	void *big;
	nvtxMemRegionHandle_t handles[2];

	CK(cudaMalloc((void **)&arena, 64 * MiB));
	nvtxMemHeapHandle_t ha = heap(pools, "arena", arena, 64 * MiB);
	reg_batch(pools, ha, arena, 0, 8 * MiB, 8 * MiB, NULL);
	reg_one(pools, ha, arena + 24 * MiB, 8 * MiB);
	reg_one(pools, ha, arena + 40 * MiB, 16 * MiB);
	resize(pools, arena + 24 * MiB, 12 * MiB);
	by_pointer(pools, arena + 8 * MiB);
	name(pools, arena + 40 * MiB, "weights");

	CK(cudaMalloc((void **)&scratch, 16 * MiB));
	nvtxMemHeapHandle_t hs = heap(sd, "scratch", scratch, 16 * MiB);
	reg_batch(sd, hs, scratch, 0, 8 * MiB, 4 * MiB, handles);
	nvtxMemRegionRef_t ref;
	ref.handle = handles[0];
	unregister(sd, NVTX_MEM_REGION_REF_TYPE_HANDLE, ref);

	EXPECT(cudaMalloc(&big, 24 * MiB), cudaErrorMemoryAllocation);
	cudaGetLastError();
	nvtxMemHeapReset(sd, hs);
	reg_one(sd, hs, scratch, 16 * MiB);
	nvtxMemHeapUnregister(sd, hs);
	CK(cudaFree(scratch));
	return 0;
}

static int misuse(void)
{
	nvtxDomainHandle_t d = nvtxDomainCreateA("bad");
	char *m;

	CK(cudaMalloc((void **)&m, 8 * MiB));
	nvtxMemHeapHandle_t h = heap(d, "m", m, 8 * MiB);
	reg_one(d, h, m + 6 * MiB, 4 * MiB);                       /* past its end */
	by_pointer(d, m + 1 * MiB);                                 /* no region */
	reg_one(d, h, m, 2 * MiB);
	reg_one(d, h, m + 1 * MiB, 2 * MiB);                       /* over [0, 2) */
	reg_one(d, (nvtxMemHeapHandle_t)(uintptr_t)0x1234, m + 4 * MiB, 1 * MiB);
	resize(d, m, 16 * MiB);                                     /* past its end */
	nvtxMemHeapUnregister(d, (nvtxMemHeapHandle_t)(uintptr_t)0x5678);
	CK(cudaFree(m));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	CK(cudaSetDevice(0));
	if (!strcmp(mode, "pool"))
		return pool();
	if (!strcmp(mode, "misuse"))
		return misuse();
	fprintf(stderr, "usage: rt-nvtxmem pool|misuse\n");
	return 2;
}
