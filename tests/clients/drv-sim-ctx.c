/*
 * drv-sim-ctx.c - devices and contexts on the simulated driver (run with
 * SIMCUDA_DEVICES=2 SIMCUDA_MEM=1G): calls before cuInit, device queries,
 * the per-thread context stack, primary context reference counts, context
 * overheads per device, allocations landing on the current context's
 * device, streams' devices. Prints one line per step for tests/t015.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>

#define DEV0 0x500000000000ull
#define DEV1 0x510000000000ull

static CUcontext ctx1;

static long long freemem(void)
{
	size_t f = 0, t = 0;
	CUresult r = cuMemGetInfo(&f, &t);
	return r ? -(long long)r : (long long)f;
}

static void *worker(void *arg)
{
	CUcontext c = (CUcontext)1;
	CUdevice d = -1;
	CUdeviceptr p = 0;
	CUresult r1, r2;

	(void)arg;
	r1 = cuCtxGetCurrent(&c);
	r2 = cuCtxGetDevice(&d);
	printf("thread: current %d %s, device %d\n", (int)r1, c ? "set" : "NULL", (int)r2);
	cuCtxSetCurrent(ctx1);
	r1 = cuMemAlloc(&p, 1);
	printf("thread: alloc on ctx1 %d at dev1+0x%llx\n", (int)r1, (unsigned long long)(p - DEV1));
	cuMemFree(p);
	return NULL;
}

int main(void)
{
	CUcontext prim, prim2, cur, ctx0b, extra[3];
	CUdevice dev;
	CUdeviceptr p;
	CUstream s;
	char name[64];
	const char *str;
	int n, v, major, minor, active;
	unsigned int flags;
	size_t total;
	pthread_t t;
	CUresult r;

	printf("preinit current %d\n", (int)cuCtxGetCurrent(&cur));
	cuDriverGetVersion(&v);
	cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &str);
	printf("version %d, error 2 is '%s'\n", v, str);
	cuGetErrorName(CUDA_ERROR_INVALID_CONTEXT, &str);
	printf("error 201 is %s\n", str);
	printf("init bad flags %d\n", (int)cuInit(1));
	printf("init %d\n", (int)cuInit(0));

	cuDeviceGetCount(&n);
	cuDeviceGetName(name, sizeof(name), 1);
	cuDeviceTotalMem(&total, 1);
	cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1);
	cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1);
	printf("devices %d '%s' total %zu cc %d.%d, device 2: %d\n", n, name, total, major, minor,
	       (int)cuDeviceGet(&dev, 2));
	printf("no context: meminfo %lld\n", freemem());

	cuDevicePrimaryCtxRetain(&prim, 0);
	cuCtxSetCurrent(prim);
	printf("primary 0 current: free %lld\n", freemem());
	r = cuCtxCreate(&ctx1, NULL, 0, 1);
	cuCtxGetDevice(&dev);
	printf("create on 1: %d, device %d, free %lld\n", (int)r, dev, freemem());
	r = cuMemAlloc(&p, 4 << 20);
	printf("alloc 4M: %d at dev1+0x%llx, free %lld\n", (int)r, (unsigned long long)(p - DEV1), freemem());
	r = cuCtxPopCurrent(&cur);
	cuCtxGetDevice(&dev);
	printf("pop %d (%s), device %d, free %lld\n", (int)r, cur == ctx1 ? "ctx1" : "other", dev, freemem());
	cuCtxGetDevice_v2(&dev, ctx1);
	printf("cuCtxGetDevice_v2(ctx1) %d, sync_v2 %d\n", dev, (int)cuCtxSynchronize_v2(ctx1));

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	cuCtxGetCurrent(&cur);
	printf("main still on primary: %s\n", cur == prim ? "yes" : "no");

	/* Primary context references: charged once, given back at the last release. */
	cuCtxCreate(&ctx0b, NULL, 0, 0);
	printf("second context on 0: free %lld\n", freemem());
	cuDevicePrimaryCtxRetain(&prim2, 0);
	printf("retain again: same %s, free %lld\n", prim2 == prim ? "yes" : "no", freemem());
	cuDevicePrimaryCtxRelease(0);
	cuDevicePrimaryCtxGetState(0, &flags, &active);
	printf("release 1: active %d free %lld\n", active, freemem());
	cuDevicePrimaryCtxRelease(0);
	cuDevicePrimaryCtxGetState(0, &flags, &active);
	printf("release 2: active %d free %lld\n", active, freemem());
	printf("release 3: %d\n", (int)cuDevicePrimaryCtxRelease(0));
	cuCtxDestroy(ctx0b);
	printf("destroyed ctx0b, stack top is the dead primary: meminfo %lld\n", freemem());
	printf("pop %d\n", (int)cuCtxPopCurrent(&cur));
	printf("pop empty %d\n", (int)cuCtxPopCurrent(&cur));

	/* Destroying ctx1 gives its overhead back; its allocation stays. */
	printf("destroy ctx1 %d\n", (int)cuCtxDestroy(ctx1));
	printf("destroy again %d\n", (int)cuCtxDestroy(ctx1));
	printf("push destroyed %d\n", (int)cuCtxPushCurrent(ctx1));
	r = cuCtxCreate(&ctx1, NULL, 0, 1);
	printf("new ctx on 1: %d free %lld\n", (int)r, freemem());
	cuStreamCreate(&s, 0);
	cuStreamGetDevice(s, &dev);
	cuStreamGetCtx(s, &cur);
	printf("stream device %d ctx %s\n", dev, cur == ctx1 ? "ctx1" : "other");
	for (int i = 0; i < 3; i++) {
		r = cuCtxCreate(&extra[i], NULL, 0, 1);
		printf("extra context %d: %d free %lld\n", i, (int)r, freemem());
	}
	return 0;
}
