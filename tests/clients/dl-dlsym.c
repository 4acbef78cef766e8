/*
 * dl-dlsym.c - the XLA / ctypes path: dlopen("libcuda.so.1") and dlsym of
 * versioned names, never linking against the driver. Also checks that an
 * RTLD_NEXT look-up keeps its meaning under memtrace's dlsym: from this
 * program, the next "write" after the executable is libc's.
 * Expected: cuMemAlloc_v2 of 2 MiB and 5 MiB, cuMemFree_v2 of both.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*dev_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	init_fn init = (init_fn)dlsym(h, "cuInit");
	dev_fn get = (dev_fn)dlsym(h, "cuDeviceGet");
	retain_fn retain = (retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
	set_fn set = (set_fn)dlsym(h, "cuCtxSetCurrent");
	alloc_fn alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
	free_fn release = (free_fn)dlsym(h, "cuMemFree_v2");
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr a, b;

	if (dlsym(h, "cuNoSuchFunction") != NULL || dlerror() == NULL) {
		fprintf(stderr, "unknown name did not fail\n");
		return 1;
	}
	void *next_write = dlsym(RTLD_NEXT, "write");
	Dl_info info;
	if (!next_write || !dladdr(next_write, &info) || !strstr(info.dli_fname, "libc.so")) {
		fprintf(stderr, "RTLD_NEXT write resolved to %s\n", next_write && dladdr(next_write, &info) ? info.dli_fname : "nothing");
		return 1;
	}
	CK(init(0));
	CK(get(&dev, 0));
	CK(retain(&ctx, dev));
	CK(set(ctx));
	CK(alloc(&a, 2 << 20));
	CK(alloc(&b, 5 << 20));
	printf("a=%#llx b=%#llx\n", (unsigned long long)a, (unsigned long long)b);
	CK(release(b));
	CK(release(a));
	return 0;
}
