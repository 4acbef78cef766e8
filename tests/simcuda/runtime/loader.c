/*
 * loader.c - loading the driver the way the real libcudart.so.13 does, and
 * cudaGetDriverEntryPoint*.
 *
 * On the first runtime call (pthread_once, so any thread may be first):
 * dlopen("libcuda.so.1"), exactly one dlsym, of "cuGetProcAddress_v2", and
 * every other driver function through it, at the version and with the
 * flags the real runtime asks for (observed by running the real runtime
 * over a logging stand-in driver, see tests/t040-real-cudart-lookups.sh),
 * in the real runtime's order; then cuInit(0). Pointers are cached in
 * simrt_drv. Some look-ups only imitate the real runtime (a tracer must
 * cope with them) and keep no pointer: the empty name at version 0,
 * cuGetProcAddress at 11030, the CUDA 13 variants of cuCtxGetDevice and
 * cuCtxSynchronize, and the old cuIpcOpenMemHandle.
 *
 * No driver, or one without a function the runtime uses: every call that
 * needs the driver returns cudaErrorInsufficientDriver. A failing cuInit:
 * every such call returns its error.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "simrt.h"

struct simrt_driver simrt_drv;

#define NO_SLOT ((size_t)-1)
#define PTSZ CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

static const struct lookup {
	const char *name;
	int version;
	cuuint64_t flags;
	size_t slot; /* offset in simrt_drv, or NO_SLOT */
} lookups[] = {
#define L(name, version, flags, member) { name, version, flags, offsetof(struct simrt_driver, member) }
#define IMITATE(name, version, flags) { name, version, flags, NO_SLOT }
	IMITATE("", 0, 0),
	L("cuInit", 2000, 0, Init),
	IMITATE("cuGetProcAddress", 11030, 0),
	L("cuGetProcAddress", 12000, 0, GetProcAddress),
	L("cuDeviceGet", 2000, 0, DeviceGet),
	L("cuDeviceGetCount", 2000, 0, DeviceGetCount),
	L("cuDeviceGetName", 2000, 0, DeviceGetName),
	L("cuDeviceTotalMem", 3020, 0, DeviceTotalMem),
	L("cuDeviceGetAttribute", 2000, 0, DeviceGetAttribute),
	L("cuDriverGetVersion", 2020, 0, DriverGetVersion),
	L("cuDeviceGetDefaultMemPool", 11020, 0, DeviceGetDefaultMemPool),
	L("cuDeviceSetMemPool", 11020, 0, DeviceSetMemPool),
	L("cuDeviceGetMemPool", 11020, 0, DeviceGetMemPool),
	L("cuDevicePrimaryCtxRetain", 7000, 0, DevicePrimaryCtxRetain),
	L("cuDevicePrimaryCtxRelease", 7000, 0, DevicePrimaryCtxRelease),
	L("cuCtxSetCurrent", 4000, 0, CtxSetCurrent),
	L("cuCtxGetCurrent", 4000, 0, CtxGetCurrent),
	L("cuCtxGetDevice", 2000, 0, CtxGetDevice),
	IMITATE("cuCtxGetDevice", 13000, 0),
	L("cuCtxSynchronize", 2000, 0, CtxSynchronize),
	IMITATE("cuCtxSynchronize", 13000, 0),
	L("cuMemGetInfo", 3020, 0, MemGetInfo),
	L("cuMemAllocManaged", 6000, 0, MemAllocManaged),
	L("cuMemAlloc", 3020, 0, MemAlloc),
	L("cuMemAllocPitch", 3020, 0, MemAllocPitch),
	L("cuMemFree", 3020, 0, MemFree),
	L("cuMemFreeHost", 2000, 0, MemFreeHost),
	L("cuMemHostAlloc", 2020, 0, MemHostAlloc),
	L("cuMemHostRegister", 6050, 0, MemHostRegister),
	L("cuMemHostUnregister", 4000, 0, MemHostUnregister),
	L("cuMemAllocAsync", 11020, 0, MemAllocAsync),
	L("cuMemAllocAsync", 11020, PTSZ, MemAllocAsync_ptsz),
	L("cuMemAllocFromPoolAsync", 11020, 0, MemAllocFromPoolAsync),
	L("cuMemAllocFromPoolAsync", 11020, PTSZ, MemAllocFromPoolAsync_ptsz),
	L("cuMemFreeAsync", 11020, 0, MemFreeAsync),
	L("cuMemFreeAsync", 11020, PTSZ, MemFreeAsync_ptsz),
	L("cuMemPoolTrimTo", 11020, 0, MemPoolTrimTo),
	L("cuMemPoolSetAttribute", 11020, 0, MemPoolSetAttribute),
	L("cuMemPoolGetAttribute", 11020, 0, MemPoolGetAttribute),
	L("cuMemPoolCreate", 11020, 0, MemPoolCreate),
	L("cuMemPoolDestroy", 11020, 0, MemPoolDestroy),
	L("cuMemcpy", 4000, 0, copy[0].Memcpy),
	L("cuMemcpy", 7000, PTSZ, copy[1].Memcpy),
	L("cuMemcpyAsync", 4000, 0, copy[0].MemcpyAsync),
	L("cuMemcpyAsync", 7000, PTSZ, copy[1].MemcpyAsync),
	L("cuMemcpyHtoD", 3020, 0, copy[0].MemcpyHtoD),
	L("cuMemcpyHtoD", 7000, PTSZ, copy[1].MemcpyHtoD),
	L("cuMemcpyHtoDAsync", 3020, 0, copy[0].MemcpyHtoDAsync),
	L("cuMemcpyHtoDAsync", 7000, PTSZ, copy[1].MemcpyHtoDAsync),
	L("cuMemcpyDtoH", 3020, 0, copy[0].MemcpyDtoH),
	L("cuMemcpyDtoH", 7000, PTSZ, copy[1].MemcpyDtoH),
	L("cuMemcpyDtoHAsync", 3020, 0, copy[0].MemcpyDtoHAsync),
	L("cuMemcpyDtoHAsync", 7000, PTSZ, copy[1].MemcpyDtoHAsync),
	L("cuMemcpyDtoD", 3020, 0, copy[0].MemcpyDtoD),
	L("cuMemcpyDtoD", 7000, PTSZ, copy[1].MemcpyDtoD),
	L("cuMemcpyDtoDAsync", 3020, 0, copy[0].MemcpyDtoDAsync),
	L("cuMemcpyDtoDAsync", 7000, PTSZ, copy[1].MemcpyDtoDAsync),
	L("cuMemsetD8", 3020, 0, copy[0].MemsetD8),
	L("cuMemsetD8", 7000, PTSZ, copy[1].MemsetD8),
	L("cuMemsetD8Async", 3020, 0, copy[0].MemsetD8Async),
	L("cuMemsetD8Async", 7000, PTSZ, copy[1].MemsetD8Async),
	L("cuArrayCreate", 3020, 0, ArrayCreate),
	L("cuArray3DCreate", 3020, 0, Array3DCreate),
	L("cuArrayDestroy", 2000, 0, ArrayDestroy),
	L("cuMipmappedArrayCreate", 5000, 0, MipmappedArrayCreate),
	L("cuMipmappedArrayDestroy", 5000, 0, MipmappedArrayDestroy),
	L("cuEventCreate", 2000, 0, EventCreate),
	L("cuEventRecord", 2000, 0, EventRecord),
	L("cuEventRecord", 7000, PTSZ, EventRecord_ptsz),
	L("cuEventSynchronize", 2000, 0, EventSynchronize),
	L("cuEventDestroy", 4000, 0, EventDestroy),
	L("cuStreamCreate", 2000, 0, StreamCreate),
	L("cuStreamCreateWithPriority", 5050, 0, StreamCreateWithPriority),
	L("cuStreamGetDevice", 12080, 0, StreamGetDevice),
	L("cuStreamGetDevice", 12080, PTSZ, StreamGetDevice_ptsz),
	L("cuStreamDestroy", 4000, 0, StreamDestroy),
	L("cuStreamSynchronize", 2000, 0, StreamSynchronize),
	L("cuStreamSynchronize", 7000, PTSZ, StreamSynchronize_ptsz),
	L("cuIpcGetMemHandle", 4010, 0, IpcGetMemHandle),
	IMITATE("cuIpcOpenMemHandle", 4010, 0),
	L("cuIpcOpenMemHandle", 11000, 0, IpcOpenMemHandle),
	L("cuIpcCloseMemHandle", 4010, 0, IpcCloseMemHandle),
#undef L
#undef IMITATE
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cudaError_t load_error;

static void load(void)
{
	void *handle = dlopen("libcuda.so.1", RTLD_NOW);
	if (!handle) {
		load_error = cudaErrorInsufficientDriver;
		return;
	}
	PFN_cuGetProcAddress_v12000 get_proc = (PFN_cuGetProcAddress_v12000)dlsym(handle, "cuGetProcAddress_v2");
	if (!get_proc) {
		load_error = cudaErrorInsufficientDriver;
		return;
	}

	struct simrt_driver drv;
	memset(&drv, 0, sizeof(drv));
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		const struct lookup *l = &lookups[i];
		void *fn = NULL;
		CUdriverProcAddressQueryResult found;
		CUresult res = get_proc(l->name, &fn, l->version, l->flags, &found);
		if (l->slot == NO_SLOT)
			continue;
		if (res != CUDA_SUCCESS || !fn) {
			fprintf(stderr, "simcuda runtime: the driver has no %s at version %d, flags %llu\n",
				l->name, l->version, (unsigned long long)l->flags);
			load_error = cudaErrorInsufficientDriver;
			return;
		}
		memcpy((char *)&drv + l->slot, &fn, sizeof(fn));
	}
	simrt_drv = drv;

	CUresult res = simrt_drv.Init(0);
	if (res != CUDA_SUCCESS) {
		load_error = (cudaError_t)res;
		return;
	}
	pthread_atfork(simrt_fork_prepare, simrt_fork_parent, simrt_fork_child);
}

cudaError_t simrt_init(void)
{
	pthread_once(&load_once, load);
	return load_error;
}

SIMRT_API cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return simrt_ret(cudaErrorInvalidValue);
	simrt_init();
	if (!simrt_drv.DriverGetVersion) { /* no driver: version 0, as documented */
		*driverVersion = 0;
		return cudaSuccess;
	}
	return simrt_ret_cu(simrt_drv.DriverGetVersion(driverVersion));
}

SIMRT_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return simrt_ret(cudaErrorInvalidValue);
	*runtimeVersion = SIMRT_VERSION;
	return cudaSuccess;
}

/*
 * Through the cuGetProcAddress the runtime looked up at 12000, as the real
 * runtime does (so a tracer that wraps that pointer sees the look-up). A
 * symbol the driver lacks is not an error: *funcPtr is NULL and
 * driverStatus says why. The _ptsz entry points turn cudaEnableDefault
 * into the per-thread default stream.
 */
static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
			       unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus,
			       int per_thread)
{
	if (!symbol || !funcPtr ||
	    flags & ~(unsigned long long)(cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream))
		return simrt_ret(cudaErrorInvalidValue);
	cudaError_t err = simrt_init();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (per_thread && flags == cudaEnableDefault)
		flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

	CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*funcPtr = NULL;
	CUresult res = simrt_drv.GetProcAddress(symbol, funcPtr, (int)cudaVersion, flags, &found);
	if (driverStatus)
		*driverStatus = (enum cudaDriverEntryPointQueryResult)found;
	if (res == CUDA_ERROR_NOT_FOUND) {
		*funcPtr = NULL;
		return cudaSuccess;
	}
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
					      enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, SIMRT_VERSION, flags, driverStatus, 0);
}

SIMRT_API cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
						   enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, SIMRT_VERSION, flags, driverStatus, 1);
}

SIMRT_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
						       unsigned long long flags,
						       enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, 0);
}

SIMRT_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
							    unsigned int cudaVersion, unsigned long long flags,
							    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, 1);
}
