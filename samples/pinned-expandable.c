/*
 * pinned-expandable.c - pinned host buffers, and an expandable segment:
 * device memory that grows and shrinks inside one reserved address range,
 * the way PyTorch's allocator works with expandable_segments:True.
 *
 * Pinned host memory (cudaMallocHost, cudaHostAlloc) is page-locked host
 * RAM for fast copies: it costs the host, not the GPU. The segment uses the
 * driver's virtual memory API, reached as PyTorch reaches it, through
 * cudaGetDriverEntryPointByVersion: cuMemAddressReserve reserves address
 * space only; each growth step creates one 20 MiB physical page
 * (cuMemCreate), maps it at the end of the segment (cuMemMap) and makes it
 * accessible (cuMemSetAccess); shrinking unmaps and releases pages from the
 * end (what torch.cuda.empty_cache() does to an expandable segment).
 *
 * Expected, with the simulator's 2 MiB granularity (see samples/README.md):
 *   pinned host: 8 MiB (cudaMallocHost) + 4 MiB (cudaHostAlloc), no device
 *     memory
 *   address space reserved: 160 MiB (8 pages), no memory
 *   the segment grows to 3 pages: 3 x cuMemCreate(20 MiB) = 60 MiB (the
 *     device peak), shrinks to 1 page (20 MiB), and is released at exit
 *   device memory in use at the peak 360 MiB (300 MiB context + 60 MiB)
 */
#include "sample.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <string.h>

#define PAGES 8

static PFN_cuMemGetAllocationGranularity_v10020 get_granularity;
static PFN_cuMemAddressReserve_v10020 address_reserve;
static PFN_cuMemAddressFree_v10020 address_free;
static PFN_cuMemCreate_v10020 mem_create;
static PFN_cuMemRelease_v10020 mem_release;
static PFN_cuMemMap_v10020 mem_map;
static PFN_cuMemUnmap_v10020 mem_unmap;
static PFN_cuMemSetAccess_v10020 set_access;

#define CU(call) do { \
	CUresult cu_err_ = (call); \
	if (cu_err_ != CUDA_SUCCESS) \
		DIE("%s:%d: %s failed: CUresult %d", __FILE__, __LINE__, #call, (int)cu_err_); \
} while (0)

static void *entry_point(const char *name)
{
	enum cudaDriverEntryPointQueryResult found;
	void *fn = NULL;

	CK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
	if (found != cudaDriverEntryPointSuccess || !fn)
		DIE("the driver has no %s", name);
	return fn;
}

static CUmemAllocationProp prop;
static CUmemGenericAllocationHandle handle[PAGES];
static CUdeviceptr base;
static size_t page;
static int mapped;

static void grow(void)
{
	CUmemAccessDesc access = { 0 };
	CUdeviceptr at = base + mapped * page;

	CU(mem_create(&handle[mapped], page, &prop, 0));
	CU(mem_map(at, page, 0, handle[mapped], 0));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CU(set_access(at, page, &access, 1));
	mapped++;
}

static void shrink(void)
{
	mapped--;
	CU(mem_unmap(base + mapped * page, page));
	CU(mem_release(handle[mapped]));
}

int main(void)
{
	void *staging, *portable;
	size_t gran;

	CK(cudaSetDevice(0));
	CK(cudaMallocHost(&staging, 8 * MiB));
	CK(cudaHostAlloc(&portable, 4 * MiB, cudaHostAllocPortable));
	memset(staging, 0, 8 * MiB); /* host memory: the program may touch it */

	get_granularity = (PFN_cuMemGetAllocationGranularity_v10020)entry_point("cuMemGetAllocationGranularity");
	address_reserve = (PFN_cuMemAddressReserve_v10020)entry_point("cuMemAddressReserve");
	address_free = (PFN_cuMemAddressFree_v10020)entry_point("cuMemAddressFree");
	mem_create = (PFN_cuMemCreate_v10020)entry_point("cuMemCreate");
	mem_release = (PFN_cuMemRelease_v10020)entry_point("cuMemRelease");
	mem_map = (PFN_cuMemMap_v10020)entry_point("cuMemMap");
	mem_unmap = (PFN_cuMemUnmap_v10020)entry_point("cuMemUnmap");
	set_access = (PFN_cuMemSetAccess_v10020)entry_point("cuMemSetAccess");

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CU(get_granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	page = (20 * MiB + gran - 1) / gran * gran;
	CU(address_reserve(&base, PAGES * page, 0, 0, 0));

	printf("pinned-expandable: pinned host 12 MiB; segment pages of %.0f MiB\n", mib(page));
	for (int i = 0; i < 3; i++) {
		grow();
		printf("  grown to %d page%s %3.0f MiB of device memory\n", mapped, mapped == 1 ? ": " : "s:", mib(mapped * page));
	}
	while (mapped > 1)
		shrink();
	printf("  shrunk to %d page:  %3.0f MiB of device memory\n", mapped, mib(mapped * page));
	while (mapped > 0)
		shrink();
	CU(address_free(base, PAGES * page));
	CK(cudaFreeHost(portable));
	CK(cudaFreeHost(staging));
	return 0;
}
