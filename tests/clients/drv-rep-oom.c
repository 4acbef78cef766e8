/*
 * drv-rep-oom.c - a driver allocation that fails (tests/t225-report-errors.sh):
 * cuMemAlloc_v2 of 1 PiB returns CUDA_ERROR_OUT_OF_MEMORY, which the report
 * names with the driver's name, not the runtime's.
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
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	EXPECT(cuMemAlloc_v2(&p, (size_t)1 << 50), CUDA_ERROR_OUT_OF_MEMORY);
	CK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
