/*
 * drv-direct.c - a program linked with -lcuda calling exported driver
 * symbols, v1 (32-bit) and _v2 forms. Expected events, in order:
 *   cuMemAlloc (v1) 4096 B, cuMemAlloc_v2 8 MiB, cuMemAllocPitch_v2 1000x10
 *   (pitch 1024 -> 10240 B), cuMemAllocManaged 1 MiB, cuMemAllocHost_v2
 *   64 KiB, cuMemHostAlloc 128 KiB, cuMemHostRegister_v2 of 16 KiB,
 *   cuArrayCreate_v2 256x256 float4 (1 MiB estimated), and a free of each.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr_v1 small;
	CUdeviceptr big, pitched, managed;
	size_t pitch;
	void *host, *host2, *registered;
	CUarray array;
	CUDA_ARRAY_DESCRIPTOR desc = { 256, 256, CU_AD_FORMAT_FLOAT, 4 };

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc(&small, 4096));
	CK(cuMemAlloc_v2(&big, 8 << 20));
	CK(cuMemAllocPitch_v2(&pitched, &pitch, 1000, 10, 4));
	CK(cuMemAllocManaged(&managed, 1 << 20, CU_MEM_ATTACH_GLOBAL));
	CK(cuMemAllocHost_v2(&host, 64 << 10));
	CK(cuMemHostAlloc(&host2, 128 << 10, 0));
	registered = aligned_alloc(4096, 16 << 10);
	CK(cuMemHostRegister_v2(registered, 16 << 10, 0));
	CK(cuArrayCreate_v2(&array, &desc));
	/* managed memory is host memory: its address varies from run to run */
	printf("small=%#x big=%#llx pitch=%zu managed=%s\n", small, (unsigned long long)big, pitch,
	       managed ? "yes" : "no");
	CK(cuArrayDestroy(array));
	CK(cuMemHostUnregister(registered));
	CK(cuMemFreeHost(host2));
	CK(cuMemFreeHost(host));
	CK(cuMemFree_v2(managed));
	CK(cuMemFree_v2(pitched));
	CK(cuMemFree_v2(big));
	CK(cuMemFree(small));
	free(registered);
	return 0;
}
