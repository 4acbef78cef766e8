/*
 * deepbind-plugin.c - a plugin linked with -lcuda, which deepbind-main.c
 * loads with dlopen(RTLD_DEEPBIND): its own dependencies (libcuda) come
 * before the global scope, so its cuMemAlloc_v2 binds to the driver, not to
 * the preloaded recorder. plugin_run(): alloc 4 MiB, alloc 12 MiB, free the
 * 4 MiB block (2 allocations, 1 free; 12 MiB left).
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include "../check.h"

__attribute__((visibility("default"))) int plugin_run(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr a, b;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc_v2(&a, 4 << 20));
	CK(cuMemAlloc_v2(&b, 12 << 20));
	CK(cuMemFree_v2(a));
	return 0;
}
