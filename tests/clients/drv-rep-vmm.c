/*
 * drv-rep-vmm.c - virtual memory for the report (tests/t213): a 64 MiB
 * reservation; h1 (2 MiB) mapped at offset 0, h2 at 6 MiB, then h3 is
 * created: the peak, reserved 6 MiB (three handles), allocated 4 MiB (two
 * mapped), cached 2 MiB; the reservation's free extents then are 4 MiB
 * (2..6) and 56 MiB (8..64): 60 MiB free, the largest 56 MiB. h3 is mapped
 * at 2 MiB; h1 is released while mapped (its memory stays until the
 * unmap); h2 is unmapped and released; h3 stays mapped at exit: live at
 * exit 2 MiB.
 */
#include <cuda.h>
#include "check.h"

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmemAllocationProp prop = { 0 };
	CUmemGenericAllocationHandle h1, h2, h3;
	CUdeviceptr va;
	const size_t mb = 1 << 20, chunk = 2 << 20;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CK(cuMemAddressReserve(&va, 64 * mb, 0, 0, 0));
	CK(cuMemCreate(&h1, chunk, &prop, 0));
	CK(cuMemMap(va, chunk, 0, h1, 0));
	CK(cuMemCreate(&h2, chunk, &prop, 0));
	CK(cuMemMap(va + 6 * mb, chunk, 0, h2, 0));
	CK(cuMemCreate(&h3, chunk, &prop, 0));     /* the peak */
	CK(cuMemMap(va + 2 * mb, chunk, 0, h3, 0));
	CK(cuMemRelease(h1));            /* mapped: stays */
	CK(cuMemUnmap(va, chunk));       /* h1 goes now */
	CK(cuMemUnmap(va + 6 * mb, chunk));
	CK(cuMemRelease(h2));
	printf("ok\n");
	return 0;
}
