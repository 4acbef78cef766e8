/*
 * drv-sim-pool.c - stream-ordered allocation on the simulated driver:
 * chunked reservation, used vs reserved, release on synchronize (stream,
 * event, context), the release threshold, cuMemPoolTrimTo, the HIGH
 * attributes, created and destroyed pools, current pools, the _ptsz
 * variants and stream capture. Run with SIMCUDA_MEM=1G; prints one line per
 * step for tests/t013.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#define DEV0 0x500000000000ull
#define CAPTURE 0x6c0000000000ull

static CUmemoryPool cur;

static unsigned long long attr(CUmemoryPool p, CUmemPool_attribute a)
{
	cuuint64_t v = 0;
	cuMemPoolGetAttribute(p, a, &v);
	return v;
}

static unsigned long long freemem(void)
{
	size_t f = 0, t = 0;
	cuMemGetInfo(&f, &t);
	return f;
}

/* Prints a step's result and the state of pool cur after it. */
static void step(const char *what, CUresult r)
{
	printf("%s %d reserved=%llu used=%llu free=%llu\n", what, (int)r,
	       attr(cur, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), attr(cur, CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
	       freemem());
}

static void addr(const char *what, CUdeviceptr p)
{
	printf("%s +0x%llx\n", what, (unsigned long long)(p - DEV0));
}

int main(void)
{
	CUcontext ctx;
	CUmemoryPool def, p, p2, got;
	CUdeviceptr a, b, c, d, e, k;
	CUstream s;
	CUevent ev;
	CUgraph graph = NULL;
	CUstreamCaptureStatus cs;
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	cuuint64_t v;
	CUresult r;
	CUresult (*alloc_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*free_ptsz)(CUdeviceptr, CUstream);
	CUresult (*sync_ptsz)(CUstream);

	if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 2;
	cuDeviceGetDefaultMemPool(&def, 0);
	cuDeviceGetMemPool(&got, 0);
	printf("current is default: %s\n", got == def ? "yes" : "no");
	cur = def;
	step("start", CUDA_SUCCESS);

	/* Chunks of max(32 MiB, request); blocks of 512 B multiples, first fit. */
	step("a 1000", cuMemAllocAsync(&a, 1000, 0));
	addr("a", a);
	step("b 40M", cuMemAllocAsync(&b, 40 << 20, 0));
	addr("b", b);
	step("c 1M", cuMemAllocAsync(&c, 1 << 20, 0));
	addr("c", c);
	step("free b", cuMemFreeAsync(b, 0));
	step("sync", cuStreamSynchronize(0));
	step("free a", cuMemFreeAsync(a, 0));
	step("free c", cuMemFree(c));
	printf("high reserved=%llu used=%llu\n", attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH),
	       attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH));

	/* A threshold keeps at least that much reserved across synchronizes. */
	v = 64ull << 20;
	step("threshold 64M", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	step("d 40M", cuMemAllocAsync(&d, 40 << 20, 0));
	step("free d", cuMemFreeAsync(d, 0));
	step("ctx sync", cuCtxSynchronize());
	step("trim 40M", cuMemPoolTrimTo(def, 40 << 20));
	step("trim 0", cuMemPoolTrimTo(def, 0));
	v = 0;
	cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v);
	v = 1;
	printf("high set 1: %d\n", (int)cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	v = 0;
	cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v);
	cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &v);
	printf("high reset reserved=%llu used=%llu\n", attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH),
	       attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH));

	/* Event synchronize releases too. */
	cuEventCreate(&ev, 0);
	step("e 1M", cuMemAllocAsync(&e, 1 << 20, 0));
	step("free e", cuMemFreeAsync(e, 0));
	cuEventRecord(ev, 0);
	step("event sync", cuEventSynchronize(ev));

	/* A created pool; destroying it with a live block defers the release. */
	step("create", cuMemPoolCreate(&p, &props));
	cur = p;
	step("from pool 5M", cuMemAllocFromPoolAsync(&a, 5 << 20, p, 0));
	cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a);
	printf("pointer pool: %s\n", got == p ? "same" : "other");
	step("destroy live", cuMemPoolDestroy(p));
	printf("free after destroy %llu\n", freemem());
	r = cuMemFreeAsync(a, 0);
	printf("free block %d free=%llu\n", (int)r, freemem());
	printf("destroy again %d, default %d\n", (int)cuMemPoolDestroy(p), (int)cuMemPoolDestroy(def));

	/* cuDeviceSetMemPool redirects cuMemAllocAsync; destroying resets it. */
	cuMemPoolCreate(&p2, &props);
	cur = p2;
	printf("set %d\n", (int)cuDeviceSetMemPool(0, p2));
	step("async into p2", cuMemAllocAsync(&a, 4096, 0));
	cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a);
	printf("pointer pool: %s\n", got == p2 ? "p2" : "other");
	step("free", cuMemFreeAsync(a, 0));
	printf("destroy p2 %d\n", (int)cuMemPoolDestroy(p2));
	cuDeviceGetMemPool(&got, 0);
	printf("current is default: %s\n", got == def ? "yes" : "no");
	cur = def;
	cuMemGetDefaultMemPool(&got, &loc, CU_MEM_ALLOCATION_TYPE_PINNED);
	printf("cuMemGetDefaultMemPool: %s\n", got == def ? "default" : "other");
	loc.type = CU_MEM_LOCATION_TYPE_HOST;
	printf("host location %d\n", (int)cuMemGetDefaultMemPool(&got, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));

	/* Out of memory: the chunk cannot be charged. */
	step("2G", cuMemAllocAsync(&a, 2ull << 30, 0));

	/* The _ptsz variants. */
	*(void **)&alloc_ptsz = dlsym(RTLD_DEFAULT, "cuMemAllocAsync_ptsz");
	*(void **)&free_ptsz = dlsym(RTLD_DEFAULT, "cuMemFreeAsync_ptsz");
	*(void **)&sync_ptsz = dlsym(RTLD_DEFAULT, "cuStreamSynchronize_ptsz");
	if (!alloc_ptsz || !free_ptsz || !sync_ptsz)
		return 2;
	step("ptsz alloc", alloc_ptsz(&a, 100, 0));
	step("ptsz free", free_ptsz(a, 0));
	step("ptsz sync", sync_ptsz(0));

	/* Capture: a graph node, nothing charged or reserved. */
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	step("begin capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	step("captured alloc", cuMemAllocAsync(&k, 1 << 20, s));
	printf("captured at capture+0x%llx\n", (unsigned long long)(k - CAPTURE));
	cuStreamIsCapturing(s, &cs);
	printf("capturing %d\n", (int)cs);
	step("captured free", cuMemFreeAsync(k, s));
	r = cuStreamEndCapture(s, &graph);
	printf("end capture %d graph %s\n", (int)r, graph ? "set" : "NULL");
	cuStreamIsCapturing(s, &cs);
	printf("capturing %d\n", (int)cs);
	printf("legacy capture %d\n", (int)cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL));
	step("stream alloc", cuMemAllocAsync(&k, 1 << 20, s));
	step("stream free", cuMemFreeAsync(k, s));
	step("stream sync", cuStreamSynchronize(s));
	r = cuStreamDestroy(s);
	printf("destroy stream %d, then alloc on it %d\n", (int)r, (int)cuMemAllocAsync(&k, 1, s));
	return 0;
}
