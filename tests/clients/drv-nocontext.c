/*
 * drv-nocontext.c - driver allocations with no current context: cuInit, then
 * cuMemAlloc_v2 of 1 MiB, which fails with CUDA_ERROR_INVALID_CONTEXT; then
 * with device 1's primary context current (SIMCUDA_DEVICES=2) a cuMemAlloc_v2
 * of 1 PiB, which fails with CUDA_ERROR_OUT_OF_MEMORY on device 1.
 */
#include <cuda.h>
#include <stddef.h>
#include "check.h"

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	CK(cuInit(0));
	EXPECT(cuMemAlloc_v2(&p, 1 << 20), CUDA_ERROR_INVALID_CONTEXT);
	CK(cuDeviceGet(&dev, 1));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	EXPECT(cuMemAlloc_v2(&p, (size_t)1 << 50), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuCtxSetCurrent(NULL));
	CK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
