/*
 * ctor-lib.c - a shared library (linked with -lcuda) that allocates in its
 * constructor and frees in its destructor, so its calls run before and
 * after the preloaded recorder's own constructor and destructor. Built by
 * t117 with ctor-main.c. Sizes, in order:
 *   constructor  alloc a 16 MiB, alloc b 16 MiB
 *   ctor_phase   alloc c 24 MiB (peak 56 MiB), free a, free c,
 *                alloc d 8 MiB, alloc e 8 MiB
 *   destructor   free d
 * 5 allocations, 3 frees; b and e are never freed (24 MiB at exit).
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include "../check.h"

static CUdeviceptr a, b, c, d, e;

__attribute__((constructor)) static void lib_start(void)
{
	CUdevice dev;
	CUcontext ctx;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc_v2(&a, 16 << 20));
	CK(cuMemAlloc_v2(&b, 16 << 20));
}

__attribute__((visibility("default"))) void ctor_phase(void)
{
	CK(cuMemAlloc_v2(&c, 24 << 20));
	CK(cuMemFree_v2(a));
	CK(cuMemFree_v2(c));
	CK(cuMemAlloc_v2(&d, 8 << 20));
	CK(cuMemAlloc_v2(&e, 8 << 20));
}

__attribute__((destructor)) static void lib_stop(void)
{
	CK(cuMemFree_v2(d));
}
