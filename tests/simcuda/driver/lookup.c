/*
 * lookup.c - cuGetProcAddress and cuGetProcAddress_v2, the way the real
 * runtime reaches every driver function (dlsym is used only for
 * cuGetProcAddress_v2 itself).
 *
 * The table lists, per base name, the variants with the CUDA version that
 * introduced them (from the PFN_<name>_v<version> typedefs of
 * cudaTypedefs.h) and, where one exists, the per-thread-default-stream
 * variant (_ptsz/_ptds) valid from that version. A look-up picks the
 * highest variant whose version <= cudaVersion; flag
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM picks its per-thread form
 * where there is one; flags 0 and CU_GET_PROC_ADDRESS_LEGACY_STREAM the
 * normal one. Only base names are known: "cuMemAlloc_v2" is not found, as
 * with the real driver. A known name asked for below its first version is
 * CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT. Every exported function is in
 * the table (tests check it against dlsym).
 *
 * SIMCUDA_LOOKUP_LOG, if set, gets one line per look-up:
 *   lookup <name> <cudaVersion> <flags> <found|not_found|version_not_sufficient> <variant|->
 * (an empty name is written as ""). Both entry points work before cuInit.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

struct variant {
	const char *base;
	int version;
	void *fn;
	const char *name;
	void *pt;          /* per-thread default stream form, or NULL */
	const char *ptname;
};

#define V(base, ver, fn) { #base, ver, (void *)fn, #fn, NULL, NULL }
#define VP(base, ver, fn, pt) { #base, ver, (void *)fn, #fn, (void *)pt, #pt }

/* Grouped by base name, versions ascending within a group. */
static const struct variant table[] = {
	V(cuArray3DCreate, 2000, cuArray3DCreate),
	V(cuArray3DCreate, 3020, cuArray3DCreate_v2),
	V(cuArray3DGetDescriptor, 2000, cuArray3DGetDescriptor),
	V(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor_v2),
	V(cuArrayCreate, 2000, cuArrayCreate),
	V(cuArrayCreate, 3020, cuArrayCreate_v2),
	V(cuArrayDestroy, 2000, cuArrayDestroy),
	V(cuArrayGetDescriptor, 2000, cuArrayGetDescriptor),
	V(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor_v2),
	V(cuCtxCreate, 2000, cuCtxCreate),
	V(cuCtxCreate, 3020, cuCtxCreate_v2),
	V(cuCtxCreate, 11040, cuCtxCreate_v3),
	V(cuCtxCreate, 12050, cuCtxCreate_v4),
	V(cuCtxDestroy, 2000, cuCtxDestroy),
	V(cuCtxDestroy, 4000, cuCtxDestroy_v2),
	V(cuCtxGetApiVersion, 3020, cuCtxGetApiVersion),
	V(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
	V(cuCtxGetDevice, 2000, cuCtxGetDevice),
	V(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
	V(cuCtxGetFlags, 7000, cuCtxGetFlags),
	V(cuCtxGetLimit, 3010, cuCtxGetLimit),
	V(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange),
	V(cuCtxPopCurrent, 2000, cuCtxPopCurrent),
	V(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
	V(cuCtxPushCurrent, 2000, cuCtxPushCurrent),
	V(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
	V(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
	V(cuCtxSetLimit, 3010, cuCtxSetLimit),
	V(cuCtxSynchronize, 2000, cuCtxSynchronize),
	V(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
	V(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer),
	V(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability),
	V(cuDeviceGet, 2000, cuDeviceGet),
	V(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
	V(cuDeviceGetCount, 2000, cuDeviceGetCount),
	V(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool),
	V(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool),
	V(cuDeviceGetName, 2000, cuDeviceGetName),
	V(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId),
	V(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
	V(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
	V(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
	V(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease),
	V(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
	V(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset),
	V(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
	V(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
	V(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags),
	V(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2),
	V(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool),
	V(cuDeviceTotalMem, 2000, cuDeviceTotalMem),
	V(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
	V(cuDriverGetVersion, 2020, cuDriverGetVersion),
	V(cuEventCreate, 2000, cuEventCreate),
	V(cuEventDestroy, 2000, cuEventDestroy),
	V(cuEventDestroy, 4000, cuEventDestroy_v2),
	V(cuEventElapsedTime, 2000, cuEventElapsedTime),
	V(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),
	V(cuEventQuery, 2000, cuEventQuery),
	V(cuEventRecord, 2000, cuEventRecord),
	VP(cuEventRecord, 7000, cuEventRecord, cuEventRecord_ptsz),
	VP(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz),
	V(cuEventSynchronize, 2000, cuEventSynchronize),
	V(cuGetErrorName, 6000, cuGetErrorName),
	V(cuGetErrorString, 6000, cuGetErrorString),
	V(cuGetExportTable, 3000, cuGetExportTable),
	V(cuGetProcAddress, 11030, cuGetProcAddress),
	V(cuGetProcAddress, 12000, cuGetProcAddress_v2),
	V(cuInit, 2000, cuInit),
	V(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle),
	V(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle),
	V(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle),
	V(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2),
	VP(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
	VP(cuLaunchHostFunc, 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
	V(cuLaunchKernel, 4000, cuLaunchKernel),
	VP(cuLaunchKernel, 7000, cuLaunchKernel, cuLaunchKernel_ptsz),
	VP(cuLaunchKernelEx, 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
	V(cuMemAddressFree, 10020, cuMemAddressFree),
	V(cuMemAddressReserve, 10020, cuMemAddressReserve),
	V(cuMemAdvise, 8000, cuMemAdvise),
	V(cuMemAdvise, 12020, cuMemAdvise_v2),
	V(cuMemAlloc, 2000, cuMemAlloc),
	V(cuMemAlloc, 3020, cuMemAlloc_v2),
	VP(cuMemAllocAsync, 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz),
	VP(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz),
	V(cuMemAllocHost, 2000, cuMemAllocHost),
	V(cuMemAllocHost, 3020, cuMemAllocHost_v2),
	V(cuMemAllocManaged, 6000, cuMemAllocManaged),
	V(cuMemAllocPitch, 2000, cuMemAllocPitch),
	V(cuMemAllocPitch, 3020, cuMemAllocPitch_v2),
	V(cuMemCreate, 10020, cuMemCreate),
	V(cuMemFree, 2000, cuMemFree),
	V(cuMemFree, 3020, cuMemFree_v2),
	VP(cuMemFreeAsync, 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz),
	V(cuMemFreeHost, 2000, cuMemFreeHost),
	V(cuMemGetAccess, 10020, cuMemGetAccess),
	V(cuMemGetAddressRange, 2000, cuMemGetAddressRange),
	V(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2),
	V(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
	V(cuMemGetAllocationPropertiesFromHandle, 10020, cuMemGetAllocationPropertiesFromHandle),
	V(cuMemGetDefaultMemPool, 13000, cuMemGetDefaultMemPool),
	V(cuMemGetInfo, 2000, cuMemGetInfo),
	V(cuMemGetInfo, 3020, cuMemGetInfo_v2),
	V(cuMemGetMemPool, 13000, cuMemGetMemPool),
	V(cuMemHostAlloc, 2020, cuMemHostAlloc),
	V(cuMemHostGetDevicePointer, 2020, cuMemHostGetDevicePointer),
	V(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2),
	V(cuMemHostGetFlags, 2030, cuMemHostGetFlags),
	V(cuMemHostRegister, 4000, cuMemHostRegister),
	V(cuMemHostRegister, 6050, cuMemHostRegister_v2),
	V(cuMemHostUnregister, 4000, cuMemHostUnregister),
	V(cuMemMap, 10020, cuMemMap),
	V(cuMemPoolCreate, 11020, cuMemPoolCreate),
	V(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
	V(cuMemPoolGetAccess, 11020, cuMemPoolGetAccess),
	V(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute),
	V(cuMemPoolSetAccess, 11020, cuMemPoolSetAccess),
	V(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute),
	V(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
	VP(cuMemPrefetchAsync, 8000, cuMemPrefetchAsync, cuMemPrefetchAsync_ptsz),
	VP(cuMemPrefetchAsync, 12020, cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz),
	V(cuMemRelease, 10020, cuMemRelease),
	V(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle),
	V(cuMemSetAccess, 10020, cuMemSetAccess),
	V(cuMemSetMemPool, 13000, cuMemSetMemPool),
	V(cuMemUnmap, 10020, cuMemUnmap),
	V(cuMemcpy, 4000, cuMemcpy),
	VP(cuMemcpy, 7000, cuMemcpy, cuMemcpy_ptds),
	V(cuMemcpyAsync, 4000, cuMemcpyAsync),
	VP(cuMemcpyAsync, 7000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
	V(cuMemcpyDtoD, 2000, cuMemcpyDtoD),
	V(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2),
	VP(cuMemcpyDtoD, 7000, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
	V(cuMemcpyDtoDAsync, 3000, cuMemcpyDtoDAsync),
	V(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2),
	VP(cuMemcpyDtoDAsync, 7000, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
	V(cuMemcpyDtoH, 2000, cuMemcpyDtoH),
	V(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
	VP(cuMemcpyDtoH, 7000, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
	V(cuMemcpyDtoHAsync, 2000, cuMemcpyDtoHAsync),
	V(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
	VP(cuMemcpyDtoHAsync, 7000, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
	V(cuMemcpyHtoD, 2000, cuMemcpyHtoD),
	V(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
	VP(cuMemcpyHtoD, 7000, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
	V(cuMemcpyHtoDAsync, 2000, cuMemcpyHtoDAsync),
	V(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
	VP(cuMemcpyHtoDAsync, 7000, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
	V(cuMemcpyPeer, 4000, cuMemcpyPeer),
	VP(cuMemcpyPeer, 7000, cuMemcpyPeer, cuMemcpyPeer_ptds),
	V(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync),
	VP(cuMemcpyPeerAsync, 7000, cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz),
	V(cuMemsetD16, 2000, cuMemsetD16),
	V(cuMemsetD16, 3020, cuMemsetD16_v2),
	VP(cuMemsetD16, 7000, cuMemsetD16_v2, cuMemsetD16_v2_ptds),
	V(cuMemsetD16Async, 3020, cuMemsetD16Async),
	VP(cuMemsetD16Async, 7000, cuMemsetD16Async, cuMemsetD16Async_ptsz),
	V(cuMemsetD2D16, 2000, cuMemsetD2D16),
	V(cuMemsetD2D16, 3020, cuMemsetD2D16_v2),
	VP(cuMemsetD2D16, 7000, cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds),
	V(cuMemsetD2D16Async, 3020, cuMemsetD2D16Async),
	VP(cuMemsetD2D16Async, 7000, cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz),
	V(cuMemsetD2D32, 2000, cuMemsetD2D32),
	V(cuMemsetD2D32, 3020, cuMemsetD2D32_v2),
	VP(cuMemsetD2D32, 7000, cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds),
	V(cuMemsetD2D32Async, 3020, cuMemsetD2D32Async),
	VP(cuMemsetD2D32Async, 7000, cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz),
	V(cuMemsetD2D8, 2000, cuMemsetD2D8),
	V(cuMemsetD2D8, 3020, cuMemsetD2D8_v2),
	VP(cuMemsetD2D8, 7000, cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds),
	V(cuMemsetD2D8Async, 3020, cuMemsetD2D8Async),
	VP(cuMemsetD2D8Async, 7000, cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz),
	V(cuMemsetD32, 2000, cuMemsetD32),
	V(cuMemsetD32, 3020, cuMemsetD32_v2),
	VP(cuMemsetD32, 7000, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
	V(cuMemsetD32Async, 3020, cuMemsetD32Async),
	VP(cuMemsetD32Async, 7000, cuMemsetD32Async, cuMemsetD32Async_ptsz),
	V(cuMemsetD8, 2000, cuMemsetD8),
	V(cuMemsetD8, 3020, cuMemsetD8_v2),
	VP(cuMemsetD8, 7000, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
	V(cuMemsetD8Async, 3020, cuMemsetD8Async),
	VP(cuMemsetD8Async, 7000, cuMemsetD8Async, cuMemsetD8Async_ptsz),
	V(cuMipmappedArrayCreate, 5000, cuMipmappedArrayCreate),
	V(cuMipmappedArrayDestroy, 5000, cuMipmappedArrayDestroy),
	V(cuModuleGetFunction, 2000, cuModuleGetFunction),
	V(cuModuleGetGlobal, 2000, cuModuleGetGlobal),
	V(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2),
	V(cuModuleLoad, 2000, cuModuleLoad),
	V(cuModuleLoadData, 2000, cuModuleLoadData),
	V(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx),
	V(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary),
	V(cuModuleUnload, 2000, cuModuleUnload),
	V(cuPointerGetAttribute, 4000, cuPointerGetAttribute),
	V(cuPointerGetAttributes, 7000, cuPointerGetAttributes),
	V(cuStreamAddCallback, 5000, cuStreamAddCallback),
	VP(cuStreamAddCallback, 7000, cuStreamAddCallback, cuStreamAddCallback_ptsz),
	VP(cuStreamBeginCapture, 10000, cuStreamBeginCapture, cuStreamBeginCapture_ptsz),
	VP(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz),
	V(cuStreamCreate, 2000, cuStreamCreate),
	V(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
	V(cuStreamDestroy, 2000, cuStreamDestroy),
	V(cuStreamDestroy, 4000, cuStreamDestroy_v2),
	VP(cuStreamEndCapture, 10000, cuStreamEndCapture, cuStreamEndCapture_ptsz),
	VP(cuStreamGetCtx, 9020, cuStreamGetCtx, cuStreamGetCtx_ptsz),
	VP(cuStreamGetCtx, 12050, cuStreamGetCtx_v2, cuStreamGetCtx_v2_ptsz),
	VP(cuStreamGetDevice, 12080, cuStreamGetDevice, cuStreamGetDevice_ptsz),
	V(cuStreamGetFlags, 5050, cuStreamGetFlags),
	VP(cuStreamGetFlags, 7000, cuStreamGetFlags, cuStreamGetFlags_ptsz),
	VP(cuStreamGetId, 12000, cuStreamGetId, cuStreamGetId_ptsz),
	V(cuStreamGetPriority, 5050, cuStreamGetPriority),
	VP(cuStreamGetPriority, 7000, cuStreamGetPriority, cuStreamGetPriority_ptsz),
	VP(cuStreamIsCapturing, 10000, cuStreamIsCapturing, cuStreamIsCapturing_ptsz),
	V(cuStreamQuery, 2000, cuStreamQuery),
	VP(cuStreamQuery, 7000, cuStreamQuery, cuStreamQuery_ptsz),
	V(cuStreamSynchronize, 2000, cuStreamSynchronize),
	VP(cuStreamSynchronize, 7000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
	V(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
	VP(cuStreamWaitEvent, 7000, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
};

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
/* SIMCUDA_LOOKUP_LOG, opened at the first look-up; -1 when unset. */
static int log_fd = -1;

static void log_open(void)
{
	const char *path = getenv("SIMCUDA_LOOKUP_LOG");

	if (path && *path)
		log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void log_lookup(const char *name, int version, cuuint64_t flags, const char *status, const char *variant)
{
	char line[512];
	int n;

	pthread_once(&log_once, log_open);
	if (log_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "lookup %s %d %" PRIu64 " %s %s\n",
		     *name ? name : "\"\"", version, (uint64_t)flags, status, variant ? variant : "-");
	if (n > 0 && n < (int)sizeof(line) && write(log_fd, line, (size_t)n) < 0) {
		/* a test aid only */
	}
}

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status)
{
	const struct variant *best = NULL;
	int known = 0;
	void *fn = NULL;
	const char *name = NULL;

	if (!symbol || !pfn || flags > CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].base, symbol) != 0)
			continue;
		known = 1;
		if (table[i].version <= version)
			best = &table[i];
	}
	if (best) {
		int pt = flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM && best->pt;
		fn = pt ? best->pt : best->fn;
		name = pt ? best->ptname : best->name;
	}
	*pfn = fn;
	if (status)
		*status = best ? CU_GET_PROC_ADDRESS_SUCCESS :
			  known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	log_lookup(symbol, version, flags, best ? "found" : known ? "version_not_sufficient" : "not_found", name);
	return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

SIM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
					CUdriverProcAddressQueryResult *status)
{
	return lookup(symbol, pfn, version, flags, status);
}

SIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return lookup(symbol, pfn, version, flags, NULL);
}
