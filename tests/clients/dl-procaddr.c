/*
 * dl-procaddr.c - the CUDA runtime's own path, done by hand: one dlsym of
 * cuGetProcAddress_v2, then everything through it, with versions and the
 * per-thread-default-stream flag, including nested look-ups of
 * cuGetProcAddress itself at 11030 (4 arguments) and 12000 (5 arguments).
 * Expected events (api): cuMemAlloc 4096 B (v1, asked at 2000),
 * cuMemAlloc_v2 1 MiB (3020), cuMemAllocAsync 2 MiB (flags 0),
 * cuMemAllocAsync_ptsz 3 MiB (flags 2, through the 4-argument resolver),
 * cuMemFreeAsync_ptsz and cuMemFreeAsync of those, cuMemFree and
 * cuMemFree_v2 of the first two. A look-up of an unknown name and one at a
 * too-low version must fail exactly as without memtrace.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include "check.h"

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);

static void *get2(gpa2_fn gpa, const char *name, int version, cuuint64_t flags)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	CK(gpa(name, &p, version, flags, &st));
	if (!p || st != CU_GET_PROC_ADDRESS_SUCCESS) {
		fprintf(stderr, "look-up of %s failed\n", name);
		exit(1);
	}
	return p;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return 1;
	gpa2_fn first = (gpa2_fn)dlsym(h, "cuGetProcAddress_v2");
	gpa2_fn gpa2 = (gpa2_fn)get2(first, "cuGetProcAddress", 12000, 0);
	gpa1_fn gpa1 = (gpa1_fn)get2(first, "cuGetProcAddress", 11030, 0);
	void *p = (void *)1;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;

	EXPECT(gpa2("cuNoSuchFunction", &p, 12000, 0, &st), CUDA_ERROR_NOT_FOUND);
	if (p != NULL || st != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
		return fprintf(stderr, "unknown name: p=%p status=%d\n", p, (int)st), 1;
	EXPECT(gpa2("cuMemAllocAsync", &p, 11000, 0, &st), CUDA_ERROR_NOT_FOUND);
	if (p != NULL || st != CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
		return fprintf(stderr, "low version: p=%p status=%d\n", p, (int)st), 1;

	CUresult (*init)(unsigned int) = get2(gpa2, "cuInit", 2000, 0);
	CUresult (*dev_get)(CUdevice *, int) = get2(gpa2, "cuDeviceGet", 2000, 0);
	CUresult (*retain)(CUcontext *, CUdevice) = get2(gpa2, "cuDevicePrimaryCtxRetain", 7000, 0);
	CUresult (*set)(CUcontext) = get2(gpa2, "cuCtxSetCurrent", 4000, 0);
	CUresult (*alloc1)(CUdeviceptr_v1 *, unsigned int) = get2(gpa2, "cuMemAlloc", 2000, 0);
	CUresult (*alloc2)(CUdeviceptr *, size_t) = get2(gpa2, "cuMemAlloc", 3020, 0);
	CUresult (*free1)(CUdeviceptr_v1) = get2(gpa2, "cuMemFree", 2000, 0);
	CUresult (*free2)(CUdeviceptr) = get2(gpa2, "cuMemFree", 3020, 0);
	CUresult (*aasync)(CUdeviceptr *, size_t, CUstream) = get2(gpa2, "cuMemAllocAsync", 11020, 0);
	CUresult (*fasync)(CUdeviceptr, CUstream) = get2(gpa2, "cuMemFreeAsync", 11020, 0);
	CUresult (*aasync_pt)(CUdeviceptr *, size_t, CUstream) = NULL;
	CUresult (*fasync_pt)(CUdeviceptr, CUstream) = NULL;
	CK(gpa1("cuMemAllocAsync", (void **)&aasync_pt, 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
	CK(gpa1("cuMemFreeAsync", (void **)&fasync_pt, 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
	CUresult (*sync)(CUstream) = get2(gpa2, "cuStreamSynchronize", 2000, 0);

	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr_v1 a;
	CUdeviceptr b, c, d;
	CK(init(0));
	CK(dev_get(&dev, 0));
	CK(retain(&ctx, dev));
	CK(set(ctx));
	CK(alloc1(&a, 4096));
	CK(alloc2(&b, 1 << 20));
	CK(aasync(&c, 2 << 20, NULL));
	CK(aasync_pt(&d, 3 << 20, CU_STREAM_PER_THREAD));
	CK(fasync_pt(d, CU_STREAM_PER_THREAD));
	CK(fasync(c, NULL));
	CK(sync(NULL));
	CK(free1(a));
	CK(free2(b));
	printf("ok\n");
	return 0;
}
