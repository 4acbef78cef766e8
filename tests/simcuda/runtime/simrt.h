/*
 * simrt.h - what the files of the simulated CUDA runtime share.
 *
 * The simulated libcudart.so.13 is a test oracle for memtrace: it reaches
 * the (simulated or real) driver exactly as the real runtime does, through
 * one dlsym of cuGetProcAddress_v2 and then look-ups at the versions and
 * flags the real runtime uses (loader.c), and never touches a GPU.
 *
 * Files: loader.c (dlopen, look-ups, driver entry points), device.c
 * (current device and primary contexts per thread, fork), memory.c
 * (synchronous allocation, copies, IPC), stream.c (streams, events,
 * stream-ordered allocation, pools), error.c (error codes, strings, the
 * per-thread last error).
 */
#ifndef SIMRT_H
#define SIMRT_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#define SIMRT_API __attribute__((visibility("default")))

/* cudaRuntimeGetVersion, and the default cudaVersion of cudaGetDriverEntryPoint */
#define SIMRT_VERSION 13000

/* Copies and sets, one set per default-stream mode (the _ptds/_ptsz
 * variants have the same types). */
struct simrt_copy {
	PFN_cuMemcpy_v4000 Memcpy;
	PFN_cuMemcpyAsync_v4000 MemcpyAsync;
	PFN_cuMemcpyHtoD_v3020 MemcpyHtoD;
	PFN_cuMemcpyHtoDAsync_v3020 MemcpyHtoDAsync;
	PFN_cuMemcpyDtoH_v3020 MemcpyDtoH;
	PFN_cuMemcpyDtoHAsync_v3020 MemcpyDtoHAsync;
	PFN_cuMemcpyDtoD_v3020 MemcpyDtoD;
	PFN_cuMemcpyDtoDAsync_v3020 MemcpyDtoDAsync;
	PFN_cuMemsetD8_v3020 MemsetD8;
	PFN_cuMemsetD8Async_v3020 MemsetD8Async;
};

/*
 * The driver functions the runtime calls, as cuGetProcAddress_v2 returned
 * them. Members are named after the driver function without "cu" (cuda.h
 * turns names like cuMemAlloc into macros); _ptsz members and copy[1]
 * are the per-thread-default-stream variants (look-up flag 2).
 */
struct simrt_driver {
	PFN_cuInit_v2000 Init;
	PFN_cuGetProcAddress_v12000 GetProcAddress;
	PFN_cuDeviceGet_v2000 DeviceGet;
	PFN_cuDeviceGetCount_v2000 DeviceGetCount;
	PFN_cuDeviceGetName_v2000 DeviceGetName;
	PFN_cuDeviceTotalMem_v3020 DeviceTotalMem;
	PFN_cuDeviceGetAttribute_v2000 DeviceGetAttribute;
	PFN_cuDriverGetVersion_v2020 DriverGetVersion;
	PFN_cuDeviceGetDefaultMemPool_v11020 DeviceGetDefaultMemPool;
	PFN_cuDeviceSetMemPool_v11020 DeviceSetMemPool;
	PFN_cuDeviceGetMemPool_v11020 DeviceGetMemPool;
	PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
	PFN_cuDevicePrimaryCtxRelease_v11000 DevicePrimaryCtxRelease; /* looked up at 7000, same type */
	PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
	PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
	PFN_cuCtxGetDevice_v2000 CtxGetDevice;
	PFN_cuCtxSynchronize_v2000 CtxSynchronize;
	PFN_cuMemGetInfo_v3020 MemGetInfo;
	PFN_cuMemAllocManaged_v6000 MemAllocManaged;
	PFN_cuMemAlloc_v3020 MemAlloc;
	PFN_cuMemAllocPitch_v3020 MemAllocPitch;
	PFN_cuMemFree_v3020 MemFree;
	PFN_cuMemFreeHost_v2000 MemFreeHost;
	PFN_cuMemHostAlloc_v2020 MemHostAlloc;
	PFN_cuMemHostRegister_v6050 MemHostRegister;
	PFN_cuMemHostUnregister_v4000 MemHostUnregister;
	PFN_cuMemAllocAsync_v11020 MemAllocAsync;
	PFN_cuMemAllocAsync_v11020_ptsz MemAllocAsync_ptsz;
	PFN_cuMemAllocFromPoolAsync_v11020 MemAllocFromPoolAsync;
	PFN_cuMemAllocFromPoolAsync_v11020_ptsz MemAllocFromPoolAsync_ptsz;
	PFN_cuMemFreeAsync_v11020 MemFreeAsync;
	PFN_cuMemFreeAsync_v11020_ptsz MemFreeAsync_ptsz;
	PFN_cuMemPoolTrimTo_v11020 MemPoolTrimTo;
	PFN_cuMemPoolSetAttribute_v11020 MemPoolSetAttribute;
	PFN_cuMemPoolGetAttribute_v11020 MemPoolGetAttribute;
	PFN_cuMemPoolCreate_v11020 MemPoolCreate;
	PFN_cuMemPoolDestroy_v11020 MemPoolDestroy;
	struct simrt_copy copy[2]; /* [0] legacy default stream, [1] per-thread (_ptds/_ptsz) */
	PFN_cuArrayCreate_v3020 ArrayCreate;
	PFN_cuArray3DCreate_v3020 Array3DCreate;
	PFN_cuArrayDestroy_v2000 ArrayDestroy;
	PFN_cuMipmappedArrayCreate_v5000 MipmappedArrayCreate;
	PFN_cuMipmappedArrayDestroy_v5000 MipmappedArrayDestroy;
	PFN_cuEventCreate_v2000 EventCreate;
	PFN_cuEventRecord_v2000 EventRecord;
	PFN_cuEventRecord_v7000_ptsz EventRecord_ptsz;
	PFN_cuEventSynchronize_v2000 EventSynchronize;
	PFN_cuEventDestroy_v4000 EventDestroy;
	PFN_cuStreamCreate_v2000 StreamCreate;
	PFN_cuStreamCreateWithPriority_v5050 StreamCreateWithPriority;
	PFN_cuStreamGetDevice_v12080 StreamGetDevice;
	PFN_cuStreamGetDevice_v12080_ptsz StreamGetDevice_ptsz;
	PFN_cuStreamDestroy_v4000 StreamDestroy;
	PFN_cuStreamSynchronize_v2000 StreamSynchronize;
	PFN_cuStreamSynchronize_v7000_ptsz StreamSynchronize_ptsz;
	PFN_cuIpcGetMemHandle_v4010 IpcGetMemHandle;
	PFN_cuIpcOpenMemHandle_v11000 IpcOpenMemHandle;
	PFN_cuIpcCloseMemHandle_v4010 IpcCloseMemHandle;
};

/* Filled once by simrt_init(); read-only afterwards. */
extern struct simrt_driver simrt_drv;

/* loader.c: loads the driver on the first call (any thread, once) and
 * returns cudaSuccess, or the error every call returns from then on. */
cudaError_t simrt_init(void);

/* device.c: simrt_init(), then make sure the calling thread has a current
 * device whose context is current in the driver (device 0's primary
 * context when the thread chose none). */
cudaError_t simrt_ctx(void);
void simrt_fork_prepare(void);
void simrt_fork_parent(void);
void simrt_fork_child(void);

/* error.c: record err as the thread's last error when it is one; return it. */
cudaError_t simrt_ret(cudaError_t err);
/* The runtime error of a driver result, recorded like simrt_ret(). */
cudaError_t simrt_ret_cu(CUresult res);

/*
 * The per-thread-default-stream entry points the real runtime exports;
 * cuda_runtime_api.h declares them only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, where it renames the plain ones.
 */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t stream, int *device);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
					 enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
						  unsigned long long flags,
						  enum cudaDriverEntryPointQueryResult *driverStatus);

#endif
