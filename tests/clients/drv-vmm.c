/*
 * drv-vmm.c - the virtual memory API as PyTorch's expandable segments use
 * it: reserve 64 MiB of address space, create two 2 MiB physical chunks,
 * map both, release one handle while it is still mapped (its memory must
 * stay until the unmap), retain a handle from an address, then unmap, free
 * the reservation. Expected: 2 cuMemCreate of 2 MiB on device 0, 1
 * reservation of 64 MiB, 2 maps, 1 retain, 3 releases, 2 unmaps, 1 free.
 */
#include <cuda.h>
#include <stdio.h>
#include "check.h"

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmemAllocationProp prop = { 0 };
	CUmemGenericAllocationHandle h1, h2, h3;
	CUdeviceptr va;
	size_t gran;
	const size_t chunk = 2 << 20;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	if (gran != chunk)
		return fprintf(stderr, "granularity %zu\n", gran), 1;
	CK(cuMemAddressReserve(&va, 64 << 20, 0, 0, 0));
	CK(cuMemCreate(&h1, chunk, &prop, 0));
	CK(cuMemCreate(&h2, chunk, &prop, 0));
	CK(cuMemMap(va, chunk, 0, h1, 0));
	CK(cuMemMap(va + chunk, chunk, 0, h2, 0));
	CK(cuMemRelease(h1));            /* still mapped: memory stays */
	CK(cuMemRetainAllocationHandle(&h3, (void *)(va + chunk)));
	CK(cuMemRelease(h3));
	CK(cuMemUnmap(va, chunk));       /* h1's memory goes now */
	CK(cuMemUnmap(va + chunk, chunk));
	CK(cuMemRelease(h2));            /* h2's memory goes now */
	CK(cuMemAddressFree(va, 64 << 20));
	printf("ok\n");
	return 0;
}
