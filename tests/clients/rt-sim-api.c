/*
 * rt-sim-api - exercises the simulated runtime, one area per subcommand:
 *
 *   rt-sim-api basic|host|pitch|arrays|async|pools|entry|copy|devices|
 *              threads|fork|ipc|info|nodriver
 *
 * Each prints one line per call, "<what> <cudaError_t>" plus values that
 * are the same on every run; the tests compare these lines and the
 * simulated driver's call log.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The per-thread-default-stream entry points (cuda_runtime_api.h declares
 * them only for code built with --default-stream per-thread). */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);

#define MIB (1ull << 20)

static void say(const char *what, cudaError_t err)
{
	printf("%s %d\n", what, err);
}

static int basic(void)
{
	void *p = NULL, *q = (void *)1;
	say("cudaFree(NULL)", cudaFree(NULL));
	say("cudaMalloc(1MiB)", cudaMalloc(&p, MIB));
	say("cudaFree", cudaFree(p));
	say("cudaFree(again)", cudaFree(p));
	say("cudaGetLastError", cudaGetLastError());
	say("cudaGetLastError", cudaGetLastError());
	say("cudaMalloc(0)", cudaMalloc(&q, 0));
	printf("pointer %s\n", q ? "set" : "NULL");
	say("cudaMalloc(1TiB)", cudaMalloc(&p, 1ull << 40));
	say("cudaPeekAtLastError", cudaPeekAtLastError());
	say("cudaGetLastError", cudaGetLastError());
	say("cudaFree(unknown)", cudaFree((void *)0x1000));
	cudaGetLastError();
	say("cudaMallocManaged(3MiB)", cudaMallocManaged(&p, 3 * MIB, cudaMemAttachGlobal));
	say("cudaFree", cudaFree(p));
	say("cudaMallocManaged(bad flags)", cudaMallocManaged(&p, MIB, 7));
	say("cudaDeviceSynchronize", cudaDeviceSynchronize());
	return 0;
}

static int host(void)
{
	void *a = NULL, *b = NULL;
	say("cudaMallocHost(4096)", cudaMallocHost(&a, 4096));
	memset(a, 1, 4096); /* pinned host memory is real memory */
	say("cudaHostAlloc(8192, mapped)", cudaHostAlloc(&b, 8192, cudaHostAllocMapped | cudaHostAllocPortable));
	say("cudaFreeHost", cudaFreeHost(a));
	say("cudaFreeHost", cudaFreeHost(b));
	say("cudaFreeHost(NULL)", cudaFreeHost(NULL));
	void *buf = aligned_alloc(4096, 65536);
	say("cudaHostRegister(64KiB)", cudaHostRegister(buf, 65536, cudaHostRegisterDefault));
	say("cudaHostUnregister", cudaHostUnregister(buf));
	free(buf);
	return 0;
}

static int pitch(void)
{
	void *p = NULL;
	size_t pitch = 0;
	say("cudaMallocPitch(1000x10)", cudaMallocPitch(&p, &pitch, 1000, 10));
	printf("pitch %zu\n", pitch);
	say("cudaFree", cudaFree(p));
	struct cudaPitchedPtr pp;
	say("cudaMalloc3D(100x10x5)", cudaMalloc3D(&pp, (struct cudaExtent){ 100, 10, 5 }));
	printf("pitch %zu xsize %zu ysize %zu\n", pp.pitch, pp.xsize, pp.ysize);
	say("cudaFree", cudaFree(pp.ptr));
	return 0;
}

static int arrays(void)
{
	cudaArray_t a = NULL, b = NULL;
	cudaMipmappedArray_t m = NULL;
	struct cudaChannelFormatDesc f32 = { 32, 0, 0, 0, cudaChannelFormatKindFloat };
	struct cudaChannelFormatDesc u8x4 = { 8, 8, 8, 8, cudaChannelFormatKindUnsigned };
	struct cudaChannelFormatDesc bad = { 8, 16, 0, 0, cudaChannelFormatKindUnsigned };
	say("cudaMallocArray(float 64x64)", cudaMallocArray(&a, &f32, 64, 64, 0));
	say("cudaMalloc3DArray(uchar4 32x32x4)", cudaMalloc3DArray(&b, &u8x4, (struct cudaExtent){ 32, 32, 4 }, 0));
	say("cudaMallocMipmappedArray(float 64x64, 3 levels)",
	    cudaMallocMipmappedArray(&m, &f32, (struct cudaExtent){ 64, 64, 0 }, 3, 0));
	say("cudaMallocArray(bad format)", cudaMallocArray(&a, &bad, 64, 64, 0));
	say("cudaFreeArray", cudaFreeArray(a));
	say("cudaFreeArray", cudaFreeArray(b));
	say("cudaFreeMipmappedArray", cudaFreeMipmappedArray(m));
	return 0;
}

static int async(void)
{
	cudaStream_t s;
	void *p = NULL, *q = NULL, *r = NULL;
	say("cudaStreamCreate", cudaStreamCreate(&s));
	say("cudaMallocAsync(1MiB)", cudaMallocAsync(&p, MIB, s));
	say("cudaFreeAsync", cudaFreeAsync(p, s));
	say("cudaMallocAsync_ptsz(2MiB)", cudaMallocAsync_ptsz(&q, 2 * MIB, cudaStreamPerThread));
	say("cudaFreeAsync_ptsz", cudaFreeAsync_ptsz(q, cudaStreamPerThread));
	say("cudaStreamSynchronize_ptsz", cudaStreamSynchronize_ptsz(cudaStreamPerThread));
	say("cudaMallocAsync(3MiB, legacy)", cudaMallocAsync(&r, 3 * MIB, cudaStreamLegacy));
	say("cudaFree(async pointer)", cudaFree(r));
	say("cudaStreamSynchronize", cudaStreamSynchronize(s));
	cudaEvent_t e;
	say("cudaEventCreate", cudaEventCreate(&e));
	say("cudaEventRecord", cudaEventRecord(e, s));
	say("cudaEventSynchronize", cudaEventSynchronize(e));
	say("cudaEventDestroy", cudaEventDestroy(e));
	say("cudaStreamDestroy", cudaStreamDestroy(s));
	return 0;
}

static int pools(void)
{
	cudaMemPool_t pool, dflt, cur;
	struct cudaMemPoolProps props;
	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	say("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&dflt, 0));
	say("cudaMemPoolCreate", cudaMemPoolCreate(&pool, &props));
	say("cudaDeviceSetMemPool", cudaDeviceSetMemPool(0, pool));
	say("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&cur, 0));
	printf("current pool is %s\n", cur == pool ? "created" : cur == dflt ? "default" : "other");
	void *p = NULL, *q = NULL;
	say("cudaMallocFromPoolAsync(1MiB)", cudaMallocFromPoolAsync(&p, MIB, pool, 0));
	say("cudaMallocFromPoolAsync_ptsz(1MiB)", cudaMallocFromPoolAsync_ptsz(&q, MIB, pool, cudaStreamPerThread));
	cuuint64_t used = 0, reserved = 0, threshold = 0;
	say("cudaMemPoolGetAttribute(used)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
	printf("used %llu\n", (unsigned long long)used);
	say("cudaFreeAsync", cudaFreeAsync(p, 0));
	say("cudaFreeAsync_ptsz", cudaFreeAsync_ptsz(q, cudaStreamPerThread));
	say("cudaMemPoolSetAttribute(threshold)",
	    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &(cuuint64_t){ 64 * MIB }));
	say("cudaMemPoolGetAttribute(threshold)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
	printf("threshold %llu\n", (unsigned long long)threshold);
	say("cudaDeviceSynchronize", cudaDeviceSynchronize());
	say("cudaMemPoolGetAttribute(reserved)",
	    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
	printf("reserved %s\n", reserved > 0 ? "kept" : "0");
	say("cudaMemPoolTrimTo(0)", cudaMemPoolTrimTo(pool, 0));
	say("cudaMemPoolGetAttribute(reserved)",
	    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
	printf("reserved %llu\n", (unsigned long long)reserved);
	say("cudaDeviceSetMemPool(default)", cudaDeviceSetMemPool(0, dflt));
	say("cudaMemPoolDestroy", cudaMemPoolDestroy(pool));
	return 0;
}

/* cuMemCreate and cuMemAlloc_v2 reached through the runtime's entry points. */
static int entry(void)
{
	enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
	PFN_cuMemCreate_v10020 mem_create = NULL;
	PFN_cuMemRelease_v10020 mem_release = NULL;
	PFN_cuMemAlloc_v3020 mem_alloc = NULL;
	PFN_cuMemFree_v3020 mem_free = NULL;
	say("cudaFree(NULL)", cudaFree(NULL));
	say("cudaGetDriverEntryPoint(cuMemCreate)",
	    cudaGetDriverEntryPoint("cuMemCreate", (void **)&mem_create, cudaEnableDefault, &found));
	printf("found %d\n", found);
	say("cudaGetDriverEntryPoint(cuMemRelease)",
	    cudaGetDriverEntryPoint("cuMemRelease", (void **)&mem_release, cudaEnableDefault, NULL));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CUmemGenericAllocationHandle h;
	printf("cuMemCreate(2MiB) %d\n", mem_create(&h, 2 * MIB, &prop, 0));
	printf("cuMemRelease %d\n", mem_release(h));
	say("cudaGetDriverEntryPointByVersion(cuMemAlloc, 3020)",
	    cudaGetDriverEntryPointByVersion("cuMemAlloc", (void **)&mem_alloc, 3020, cudaEnableDefault, &found));
	say("cudaGetDriverEntryPointByVersion(cuMemFree, 3020)",
	    cudaGetDriverEntryPointByVersion("cuMemFree", (void **)&mem_free, 3020, cudaEnableDefault, &found));
	CUdeviceptr d = 0;
	printf("cuMemAlloc_v2(1MiB) %d\n", mem_alloc(&d, MIB));
	printf("cuMemFree_v2 %d\n", mem_free(d));
	void *fn = (void *)1;
	say("cudaGetDriverEntryPoint(cuNoSuchFunction)",
	    cudaGetDriverEntryPoint("cuNoSuchFunction", &fn, cudaEnableDefault, &found));
	printf("found %d, %s\n", found, fn ? "pointer" : "NULL");
	PFN_cuMemAllocAsync_v11020_ptsz alloc_async = NULL;
	say("cudaGetDriverEntryPoint(cuMemAllocAsync, per-thread)",
	    cudaGetDriverEntryPoint("cuMemAllocAsync", (void **)&alloc_async, cudaEnablePerThreadDefaultStream, &found));
	printf("cuMemAllocAsync_ptsz(1MiB) %d\n", alloc_async(&d, MIB, CU_STREAM_PER_THREAD));
	say("cudaFree", cudaFree((void *)d));
	say("cudaGetDriverEntryPoint(bad flags)", cudaGetDriverEntryPoint("cuMemCreate", &fn, 8, &found));
	return 0;
}

static int copy(void)
{
	void *d = NULL;
	char h[4096];
	memset(h, 7, sizeof(h));
	say("cudaMalloc(4096)", cudaMalloc(&d, sizeof(h)));
	say("cudaMemcpy(HtoD)", cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	say("cudaMemcpy_ptds(DtoH)", cudaMemcpy_ptds(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	say("cudaMemcpy(bad kind)", cudaMemcpy(h, d, sizeof(h), (enum cudaMemcpyKind)9));
	say("cudaMemcpyAsync(DtoD)", cudaMemcpyAsync(d, d, sizeof(h), cudaMemcpyDeviceToDevice, 0));
	say("cudaMemset", cudaMemset(d, 0, sizeof(h)));
	say("cudaMemsetAsync_ptsz", cudaMemsetAsync_ptsz(d, 1, sizeof(h), cudaStreamPerThread));
	say("cudaFree", cudaFree(d));
	/* managed memory is real host memory in the simulator: data arrives */
	char *m = NULL;
	say("cudaMallocManaged(4096)", cudaMallocManaged((void **)&m, sizeof(h), cudaMemAttachGlobal));
	say("cudaMemcpy(HtoD)", cudaMemcpy(m, h, sizeof(h), cudaMemcpyHostToDevice));
	say("cudaMemset_ptds", cudaMemset_ptds(m + 10, 3, 1));
	printf("managed bytes %d %d %d\n", m[0], m[10], m[4095]);
	say("cudaFree", cudaFree(m));
	return 0;
}

struct on_device {
	int device;
	size_t size;
	cudaError_t set, alloc, free;
	int seen;
};

static void *alloc_on(void *arg)
{
	struct on_device *o = arg;
	void *p = NULL;
	o->set = cudaSetDevice(o->device);
	o->alloc = cudaMalloc(&p, o->size);
	cudaGetDevice(&o->seen);
	o->free = cudaFree(p);
	return NULL;
}

/* Two threads, two devices; the main thread stays on device 0. */
static int devices(void)
{
	int count = 0, dev = -1;
	say("cudaGetDeviceCount", cudaGetDeviceCount(&count));
	printf("count %d\n", count);
	say("cudaGetDevice", cudaGetDevice(&dev));
	printf("device %d\n", dev);
	say("cudaSetDevice(count)", cudaSetDevice(count));
	struct on_device one = { .device = 1, .size = 3 * MIB }, zero = { .device = 0, .size = 5 * MIB };
	pthread_t t1, t0;
	pthread_create(&t1, NULL, alloc_on, &one);
	pthread_join(t1, NULL);
	pthread_create(&t0, NULL, alloc_on, &zero);
	pthread_join(t0, NULL);
	printf("thread on 1: set %d alloc %d free %d device %d\n", one.set, one.alloc, one.free, one.seen);
	printf("thread on 0: set %d alloc %d free %d device %d\n", zero.set, zero.alloc, zero.free, zero.seen);
	void *p = NULL;
	say("cudaMalloc(7MiB)", cudaMalloc(&p, 7 * MIB));
	say("cudaGetDevice", cudaGetDevice(&dev));
	printf("device %d\n", dev);
	say("cudaFree", cudaFree(p));
	say("cudaSetDevice(1)", cudaSetDevice(1));
	say("cudaMalloc(9MiB)", cudaMalloc(&p, 9 * MIB));
	say("cudaFree", cudaFree(p));
	say("cudaDeviceReset", cudaDeviceReset());
	say("cudaMalloc(11MiB)", cudaMalloc(&p, 11 * MIB));
	say("cudaFree", cudaFree(p));
	return 0;
}

#define THREADS 8
#define ROUNDS 200

static void *churn(void *arg)
{
	long failures = 0;
	for (int i = 0; i < ROUNDS; i++) {
		void *p = NULL;
		if (cudaMalloc(&p, (size_t)(i % 7 + 1) * 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
			failures++;
	}
	*(long *)arg = failures;
	return NULL;
}

static int threads(void)
{
	pthread_t t[THREADS];
	long failures[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, &failures[i]);
	long total = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		total += failures[i];
	}
	printf("%d threads x %d cudaMalloc/cudaFree: %ld failed\n", THREADS, ROUNDS, total);
	return 0;
}

static int fork_child(void)
{
	void *p = NULL, *q = NULL;
	say("parent cudaMalloc(1MiB)", cudaMalloc(&p, MIB));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		say("child cudaMalloc(2MiB)", cudaMalloc(&q, 2 * MIB));
		say("child cudaFree", cudaFree(q));
		fflush(stdout);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	say("parent cudaFree", cudaFree(p));
	return 0;
}

/* The handle travels to a forked child, which opens it. */
static int ipc(void)
{
	void *p = NULL;
	cudaIpcMemHandle_t handle;
	say("cudaMalloc(4MiB)", cudaMalloc(&p, 4 * MIB));
	say("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, p));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		void *q = NULL;
		say("child cudaIpcOpenMemHandle", cudaIpcOpenMemHandle(&q, handle, cudaIpcMemLazyEnablePeerAccess));
		say("child cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(q));
		fflush(stdout);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	say("cudaFree", cudaFree(p));
	return 0;
}

static int info(void)
{
	int v = 0;
	say("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&v));
	printf("runtime %d\n", v);
	say("cudaDriverGetVersion", cudaDriverGetVersion(&v));
	printf("driver %d\n", v);
	struct cudaDeviceProp prop;
	say("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, 0));
	printf("name '%s' totalGlobalMem %zu cc %d.%d\n", prop.name, prop.totalGlobalMem, prop.major, prop.minor);
	size_t free0, total, free1;
	void *p = NULL;
	say("cudaMemGetInfo", cudaMemGetInfo(&free0, &total));
	say("cudaMalloc(64MiB)", cudaMalloc(&p, 64 * MIB));
	say("cudaMemGetInfo", cudaMemGetInfo(&free1, &total));
	printf("free went down by %zu MiB, total %zu\n", (free0 - free1) >> 20, total);
	say("cudaFree", cudaFree(p));
	int codes[] = { 0, 1, 2, 35, 101, 999, 12345 };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		printf("%d %s: %s\n", codes[i], cudaGetErrorName(codes[i]), cudaGetErrorString(codes[i]));
	return 0;
}

/* Run without a driver. */
static int nodriver(void)
{
	void *p = NULL;
	int v = -1, count = -1;
	say("cudaMalloc", cudaMalloc(&p, MIB));
	say("cudaGetDeviceCount", cudaGetDeviceCount(&count));
	printf("count %d\n", count);
	say("cudaDriverGetVersion", cudaDriverGetVersion(&v));
	printf("driver %d\n", v);
	say("cudaGetLastError", cudaGetLastError());
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "basic", basic }, { "host", host }, { "pitch", pitch }, { "arrays", arrays },
	{ "async", async }, { "pools", pools }, { "entry", entry }, { "copy", copy },
	{ "devices", devices }, { "threads", threads }, { "fork", fork_child }, { "ipc", ipc },
	{ "info", info }, { "nodriver", nodriver },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(argv[1], cases[i].name) == 0)
			return cases[i].fn();
	fprintf(stderr, "usage: rt-sim-api basic|host|pitch|arrays|async|pools|entry|copy|devices|threads|fork|ipc|info|nodriver\n");
	return 2;
}
