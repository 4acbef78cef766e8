/*
 * bench/standin/libcuda.c - a driver stand-in for the recorder's scaling
 * bench (bench/run.sh builds it as libcuda.so.1): the few driver calls
 * bench/alloc-loop.c makes, with no lock and no shared state on the
 * allocation path, so 8 or 16 threads measure memtrace rather than the
 * simulator's global lock. Each thread hands out addresses from its own
 * range; a free only checks its argument. Not a simulator: bench only.
 */
#include <stdint.h>
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

#define EXPORT __attribute__((visibility("default")))

static _Atomic unsigned long long next_range = 1;
static __thread unsigned long long base, used;
static __thread CUcontext current;
static struct CUctx_st { int dev; } ctx0;

EXPORT CUresult cuInit(unsigned flags) { (void)flags; return 0; }
EXPORT CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = &ctx0; return 0; }
EXPORT CUresult cuCtxSetCurrent(CUcontext c) { current = c; return 0; }
EXPORT CUresult cuCtxGetDevice(CUdevice *d) { if (!current) return 201; *d = current->dev; return 0; }
EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b) { *free_b = 1ull << 34; *total_b = 1ull << 34; return 0; }

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (!current)
		return 201;
	if (!base)
		base = (next_range++) << 36;
	*p = base + used;
	used = (used + ((n + 4095) & ~(size_t)4095)) & ((1ull << 36) - 1);
	return 0;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) { return p ? 0 : 1; }
