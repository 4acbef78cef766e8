/*
 * drv-sim-mem.c - exercises the simulated driver's memory model through the
 * exported driver API (linked -lcuda): rounding and charging, first-fit
 * reuse, exact OOM, frees, pitch, the v1 entry points, managed, pinned and
 * registered host memory, IPC, arrays and pointer attributes. Run with
 * SIMCUDA_MEM=1G; prints one line per step, device addresses as offsets
 * from device 0's base, for tests/t011 and t012 to compare.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEV0 0x500000000000ull
#define FOREIGN 0x680000000000ull

/* The 32-bit forms, which cuda.h renames to _v2 for programs: by dlsym. */
static CUresult (*alloc_v1)(unsigned int *dptr, unsigned int size);
static CUresult (*free_v1)(unsigned int dptr);
static CUresult (*range_v1)(unsigned int *base, unsigned int *size, unsigned int dptr);

static unsigned long long freemem(void)
{
	size_t f = 0, t = 0;
	cuMemGetInfo(&f, &t);
	return f;
}

static CUdeviceptr alloc(const char *what, size_t size)
{
	CUdeviceptr p = 0;
	CUresult r = cuMemAlloc(&p, size);

	printf("%s alloc(%zu) %d +0x%llx free %llu\n", what, size, (int)r,
	       r ? 0ull : (unsigned long long)(p - DEV0), freemem());
	return p;
}

static void release(const char *what, CUdeviceptr p)
{
	CUresult r = cuMemFree(p);
	printf("%s free %d free %llu\n", what, (int)r, freemem());
}

/* Prints a step's result, then the free memory after it. */
static void step(const char *what, CUresult r)
{
	printf("%s %d free %llu\n", what, (int)r, freemem());
}

static void *no_context(void *arg)
{
	CUdeviceptr p;
	(void)arg;
	printf("thread alloc %d\n", (int)cuMemAlloc(&p, 1));
	return NULL;
}

int main(void)
{
	CUcontext ctx;
	CUdevice dev;
	CUdeviceptr a, b, c, d, e, f, g, h, x, y, z, q, o, base;
	size_t size, pitch, total;
	unsigned int v1, v1base, v1size;
	void *host;
	pthread_t t;

	printf("preinit %d\n", (int)cuMemAlloc(&a, 1));
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		return 2;
	cuMemGetInfo(&size, &total);
	printf("info %zu %zu\n", size, total);

	/* Small requests share 2 MiB pages; large ones take whole 2 MiB units. */
	a = alloc("a", 1);
	b = alloc("b", 512);
	c = alloc("c", 1048576);
	d = alloc("d", 1048577);
	e = alloc("e", 1048576);
	release("a", a);
	release("b", b);
	release("c", c);
	f = alloc("f", 100);
	g = alloc("g", 4 << 20);
	h = alloc("h", 2 << 20);
	release("d", d);
	release("e", e);
	release("f", f);
	release("g", g);
	release("h", h);

	/* Exactly the free memory fits; one byte more does not, and changes nothing. */
	x = alloc("x", freemem());
	alloc("one", 1);
	release("x", x);
	alloc("over", freemem() + 1);
	alloc("zero", 0);
	printf("free-unknown %d\n", (int)cuMemFree(DEV0 + 0x1000));
	printf("free-null %d\n", (int)cuMemFree(0));
	y = alloc("y", 1);
	release("y", y);
	release("y-again", y);

	/* Pitch: width rounded up to 512, element sizes 4, 8, 16 only. */
	printf("pitch %d", (int)cuMemAllocPitch(&a, &pitch, 1000, 3, 4));
	cuMemGetAddressRange(&base, &size, a + 10);
	printf(" pitch=%zu size=%zu base=+0x%llx free %llu\n", pitch, size,
	       (unsigned long long)(base - DEV0), freemem());
	release("pitch", a);
	printf("pitch-elem3 %d\n", (int)cuMemAllocPitch(&a, &pitch, 1000, 3, 3));

	/* The 32-bit entry points get 32-bit addresses. */
	*(void **)&alloc_v1 = dlsym(RTLD_DEFAULT, "cuMemAlloc");
	*(void **)&free_v1 = dlsym(RTLD_DEFAULT, "cuMemFree");
	*(void **)&range_v1 = dlsym(RTLD_DEFAULT, "cuMemGetAddressRange");
	if (!alloc_v1 || !free_v1 || !range_v1)
		return 2;
	printf("v1 %d", (int)alloc_v1(&v1, 4096));
	range_v1(&v1base, &v1size, v1 + 1);
	printf(" addr=0x%x base=0x%x size=%u free %llu\n", v1, v1base, v1size, freemem());
	step("v1 free", free_v1(v1));

	/* Interior pointers resolve to their allocation. */
	z = alloc("z", 10000);
	cuMemGetAddressRange(&base, &size, z + 100);
	printf("range base=+0x%llx size=%zu\n", (unsigned long long)(base - DEV0), size);

	/* Pointer attributes of device memory. */
	{
		int ordinal = -1;
		unsigned int type = 0;
		CUdeviceptr start = 0;
		size_t rsize = 0;
		CUmemoryPool pool = (CUmemoryPool)1;
		CUcontext pctx = NULL;
		cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, z + 5);
		cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, z + 5);
		cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, z + 5);
		cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, z + 5);
		cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, z + 5);
		cuPointerGetAttribute(&pctx, CU_POINTER_ATTRIBUTE_CONTEXT, z + 5);
		printf("attrs ordinal=%d type=%u start=+0x%llx size=%zu pool=%p ctx=%s unknown=%d\n",
		       ordinal, type, (unsigned long long)(start - DEV0), rsize, (void *)pool,
		       pctx == ctx ? "same" : "other",
		       (int)cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, DEV0 + (1ull << 30)));
	}
	release("z", z);

	/* Managed: real host memory, charged to nobody. */
	{
		CUdeviceptr m;
		unsigned char managed = 0;
		printf("managed %d", (int)cuMemAllocManaged(&m, 8192, CU_MEM_ATTACH_GLOBAL));
		memset((void *)(uintptr_t)m, 7, 8192);
		cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m);
		printf(" is_managed=%d free %llu\n", managed, freemem());
		release("managed", m);
	}

	/* Pinned host memory. */
	{
		CUdeviceptr dp = 0;
		printf("hostalloc %d", (int)cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
		memset(host, 1, 4096);
		cuMemHostGetDevicePointer(&dp, host, 0);
		printf(" devptr=%s free %llu\n", dp == (CUdeviceptr)(uintptr_t)host ? "same" : "other", freemem());
		printf("freehost %d\n", (int)cuMemFreeHost(host));
		printf("freehost-again %d\n", (int)cuMemFreeHost(host));
		printf("allochost %d", (int)cuMemAllocHost(&host, 100));
		printf(" %d\n", (int)cuMemFreeHost(host));
	}

	/* Registration pins, adds no bytes; overlaps and unknown pointers fail. */
	{
		char *buf = aligned_alloc(4096, 65536);
		printf("register %d", (int)cuMemHostRegister(buf, 65536, 0));
		printf(" overlap %d", (int)cuMemHostRegister(buf + 4096, 4096, 0));
		printf(" unregister %d", (int)cuMemHostUnregister(buf));
		printf(" again %d free %llu\n", (int)cuMemHostUnregister(buf), freemem());
		free(buf);
	}

	/* IPC: opening maps at a new address and charges nothing. */
	{
		CUipcMemHandle ih;
		q = alloc("q", 3 << 20);
		printf("ipc get %d", (int)cuIpcGetMemHandle(&ih, q));
		printf(" open %d", (int)cuIpcOpenMemHandle(&o, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
		cuMemGetAddressRange(&base, &size, o);
		printf(" addr=foreign+0x%llx size=%zu free %llu", (unsigned long long)(o - FOREIGN), size, freemem());
		printf("\n");
		step("ipc close", cuIpcCloseMemHandle(o));
		step("ipc close-again", cuIpcCloseMemHandle(o));
		release("q", q);
	}

	/* Arrays are charged like device memory. */
	{
		CUarray arr, arr3;
		CUmipmappedArray mip;
		CUDA_ARRAY_DESCRIPTOR ad = { .Width = 1024, .Height = 1024, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
		CUDA_ARRAY3D_DESCRIPTOR a3 = { .Width = 64, .Height = 64, .Depth = 64, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
		CUDA_ARRAY3D_DESCRIPTOR am = { .Width = 256, .Height = 256, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
		CUDA_ARRAY_DESCRIPTOR back;
		step("array", cuArrayCreate(&arr, &ad));
		cuArrayGetDescriptor(&back, arr);
		printf("array desc %zux%zu ch=%u\n", back.Width, back.Height, back.NumChannels);
		step("array3d", cuArray3DCreate(&arr3, &a3));
		step("mipmap", cuMipmappedArrayCreate(&mip, &am, 3));
		step("array destroy", cuArrayDestroy(arr));
		step("array3d destroy", cuArrayDestroy(arr3));
		step("mipmap destroy", cuMipmappedArrayDestroy(mip));
		step("array destroy-again", cuArrayDestroy(arr));
	}

	pthread_create(&t, NULL, no_context, NULL);
	pthread_join(t, NULL);
	printf("end free %llu\n", freemem());
	return 0;
}
