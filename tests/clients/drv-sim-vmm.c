/*
 * drv-sim-vmm.c - the virtual memory management API on the simulated
 * driver: granularity, cuMemCreate charging, reservations, mappings, and
 * the lifetime rule (physical memory goes when every reference is released
 * and every mapping unmapped, in either order, retains included). Run with
 * SIMCUDA_MEM=1G; prints one line per step for tests/t014.
 */
#include <cuda.h>
#include <stdio.h>

#define VA 0x600000000000ull
#define MB (1ull << 20)

static unsigned long long freemem(void)
{
	size_t f = 0, t = 0;
	cuMemGetInfo(&f, &t);
	return f;
}

static void step(const char *what, CUresult r)
{
	printf("%s %d free=%llu\n", what, (int)r, freemem());
}

int main(void)
{
	CUcontext ctx;
	CUmemGenericAllocationHandle h, h2, h3, back;
	CUdeviceptr va, base;
	size_t gran, size;
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemAccessDesc access = { .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
				   .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUresult r;

	if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 2;
	cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	printf("granularity %zu\n", gran);
	step("start", CUDA_SUCCESS);
	step("create 3M", cuMemCreate(&h, 3 * MB, &prop, 0));
	step("create 4M", cuMemCreate(&h, 4 * MB, &prop, 0));
	r = cuMemAddressReserve(&va, 8 * MB, 0, 0, 0);
	printf("reserve %d at va+0x%llx\n", (int)r, (unsigned long long)(va - VA));
	step("map", cuMemMap(va, 4 * MB, 0, h, 0));
	step("map overlap", cuMemMap(va + 2 * MB, 2 * MB, 0, h, 0));
	step("map past handle", cuMemMap(va + 4 * MB, 4 * MB, 2 * MB, h, 0));
	step("map outside", cuMemMap(va + 6 * MB, 4 * MB, 0, h, 0));
	step("set access", cuMemSetAccess(va, 4 * MB, &access, 1));
	cuMemGetAddressRange(&base, &size, va + 12345);
	printf("range va+0x%llx size=%zu\n", (unsigned long long)(base - VA), size);

	/* Release first, then unmap: the unmap gives the memory back. */
	step("release mapped", cuMemRelease(h));
	step("release again", cuMemRelease(h));
	step("address free while mapped", cuMemAddressFree(va, 8 * MB));
	step("unmap", cuMemUnmap(va, 4 * MB));

	/* Unmap first, then release. */
	step("create 2M", cuMemCreate(&h2, 2 * MB, &prop, 0));
	step("map 2M", cuMemMap(va + 4 * MB, 2 * MB, 0, h2, 0));
	step("unmap partial", cuMemUnmap(va + 4 * MB, 1 * MB));
	step("unmap", cuMemUnmap(va + 4 * MB, 2 * MB));
	step("release", cuMemRelease(h2));

	/* A retained reference keeps it alive past the creator's release and the unmap. */
	step("create 4M", cuMemCreate(&h3, 4 * MB, &prop, 0));
	step("map", cuMemMap(va, 4 * MB, 0, h3, 0));
	r = cuMemRetainAllocationHandle(&back, (void *)(uintptr_t)(va + 100));
	printf("retain %d same=%s\n", (int)r, back == h3 ? "yes" : "no");
	step("release", cuMemRelease(h3));
	step("unmap", cuMemUnmap(va, 4 * MB));
	step("release retained", cuMemRelease(back));

	/* Two mappings of one handle: both must go. */
	step("create 4M", cuMemCreate(&h, 4 * MB, &prop, 0));
	step("map low half", cuMemMap(va, 2 * MB, 0, h, 0));
	step("map high half", cuMemMap(va + 2 * MB, 2 * MB, 2 * MB, h, 0));
	step("release", cuMemRelease(h));
	step("unmap both", cuMemUnmap(va, 4 * MB));

	/* Host memory charges no device; too big a device allocation fails. */
	prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
	prop.location.id = 0;
	step("create host 2M", cuMemCreate(&h, 2 * MB, &prop, 0));
	step("release host", cuMemRelease(h));
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	step("create 1G", cuMemCreate(&h, 1024 * MB, &prop, 0));
	step("address free", cuMemAddressFree(va, 8 * MB));
	step("address free again", cuMemAddressFree(va, 8 * MB));
	return 0;
}
