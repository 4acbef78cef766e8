/*
 * variants.h - every CUDA function libmemtrace.so wraps, as X-macro tables.
 *
 * A driver function has one base name ("cuMemAlloc") and one or more ABI
 * variants, each an exported symbol of libcuda.so.1 with its own signature:
 * "cuMemAlloc" (CUDA 2.0, 32-bit sizes) and "cuMemAlloc_v2" (3.2, size_t);
 * "cuMemAllocAsync" and its per-thread-default-stream twin
 * "cuMemAllocAsync_ptsz". cuGetProcAddress takes the base name, a CUDA
 * version and flags, and returns one variant; the resolver (resolve.c) must
 * hand back the wrapper of exactly that variant, never guess by base name.
 *
 * MT_DRIVER_VARIANTS(X): X(variant, base, version, ptsz)
 *   version: the CUDA version that introduced the variant (cudaTypedefs.h)
 *   ptsz:    1 for the per-thread-default-stream form
 * Every variant has an MT_API_<variant> id in trace-format.h and a wrapper
 * of the same name in hooks-driver.c.
 *
 * MT_RUNTIME_FUNCTIONS(X): X(name) for the runtime functions wrapped in
 * hooks-runtime.c, each with an MT_API_<name> id.
 */
#ifndef MEMTRACE_VARIANTS_H
#define MEMTRACE_VARIANTS_H

#define MT_DRIVER_VARIANTS(X) \
	X(cuMemAlloc, cuMemAlloc, 2000, 0) \
	X(cuMemAlloc_v2, cuMemAlloc, 3020, 0) \
	X(cuMemAllocPitch, cuMemAllocPitch, 2000, 0) \
	X(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, 0) \
	X(cuMemAllocManaged, cuMemAllocManaged, 6000, 0) \
	X(cuMemFree, cuMemFree, 2000, 0) \
	X(cuMemFree_v2, cuMemFree, 3020, 0) \
	X(cuMemAllocAsync, cuMemAllocAsync, 11020, 0) \
	X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, 1) \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, 0) \
	X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 11020, 1) \
	X(cuMemFreeAsync, cuMemFreeAsync, 11020, 0) \
	X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, 1) \
	X(cuMemPoolCreate, cuMemPoolCreate, 11020, 0) \
	X(cuMemPoolDestroy, cuMemPoolDestroy, 11020, 0) \
	X(cuMemPoolTrimTo, cuMemPoolTrimTo, 11020, 0) \
	X(cuMemPoolImportPointer, cuMemPoolImportPointer, 11020, 0) \
	X(cuMemAllocHost, cuMemAllocHost, 2000, 0) \
	X(cuMemAllocHost_v2, cuMemAllocHost, 3020, 0) \
	X(cuMemHostAlloc, cuMemHostAlloc, 2020, 0) \
	X(cuMemFreeHost, cuMemFreeHost, 2000, 0) \
	X(cuMemHostRegister, cuMemHostRegister, 4000, 0) \
	X(cuMemHostRegister_v2, cuMemHostRegister, 6050, 0) \
	X(cuMemHostUnregister, cuMemHostUnregister, 4000, 0) \
	X(cuMemCreate, cuMemCreate, 10020, 0) \
	X(cuMemRelease, cuMemRelease, 10020, 0) \
	X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, 11000, 0) \
	X(cuMemAddressReserve, cuMemAddressReserve, 10020, 0) \
	X(cuMemAddressFree, cuMemAddressFree, 10020, 0) \
	X(cuMemMap, cuMemMap, 10020, 0) \
	X(cuMemUnmap, cuMemUnmap, 10020, 0) \
	X(cuArrayCreate, cuArrayCreate, 2000, 0) \
	X(cuArrayCreate_v2, cuArrayCreate, 3020, 0) \
	X(cuArray3DCreate, cuArray3DCreate, 2000, 0) \
	X(cuArray3DCreate_v2, cuArray3DCreate, 3020, 0) \
	X(cuArrayDestroy, cuArrayDestroy, 2000, 0) \
	X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, 0) \
	X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, 0) \
	X(cuIpcOpenMemHandle, cuIpcOpenMemHandle, 4010, 0) \
	X(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle, 11000, 0) \
	X(cuIpcCloseMemHandle, cuIpcCloseMemHandle, 4010, 0) \
	X(cuExternalMemoryGetMappedBuffer, cuExternalMemoryGetMappedBuffer, 10000, 0) \
	X(cuStreamSynchronize, cuStreamSynchronize, 2000, 0) \
	X(cuStreamSynchronize_ptsz, cuStreamSynchronize, 7000, 1) \
	X(cuCtxSynchronize, cuCtxSynchronize, 2000, 0) \
	X(cuCtxSynchronize_v2, cuCtxSynchronize, 13000, 0) \
	X(cuEventSynchronize, cuEventSynchronize, 2000, 0) \
	X(cuGetProcAddress, cuGetProcAddress, 11030, 0) \
	X(cuGetProcAddress_v2, cuGetProcAddress, 12000, 0)

#define MT_RUNTIME_FUNCTIONS(X) \
	X(cudaMalloc) X(cudaFree) X(cudaMallocAsync) X(cudaMallocAsync_ptsz) \
	X(cudaFreeAsync) X(cudaFreeAsync_ptsz) X(cudaMallocFromPoolAsync) \
	X(cudaMallocFromPoolAsync_ptsz) X(cudaMallocManaged) X(cudaMallocHost) \
	X(cudaHostAlloc) X(cudaFreeHost) X(cudaMallocPitch) X(cudaMalloc3D) \
	X(cudaMallocArray) X(cudaMalloc3DArray) X(cudaFreeArray) \
	X(cudaMallocMipmappedArray) X(cudaFreeMipmappedArray) \
	X(cudaHostRegister) X(cudaHostUnregister) X(cudaMemPoolCreate) \
	X(cudaMemPoolDestroy) X(cudaMemPoolTrimTo) X(cudaIpcOpenMemHandle) \
	X(cudaIpcCloseMemHandle) X(cudaStreamSynchronize) \
	X(cudaStreamSynchronize_ptsz) X(cudaDeviceSynchronize)

enum mt_variant {
#define MT_VARIANT_ENUM(v, base, version, ptsz) MT_V_##v,
	MT_DRIVER_VARIANTS(MT_VARIANT_ENUM)
#undef MT_VARIANT_ENUM
#define MT_RUNTIME_ENUM(name) MT_V_##name,
	MT_RUNTIME_FUNCTIONS(MT_RUNTIME_ENUM)
#undef MT_RUNTIME_ENUM
	MT_V_COUNT
};

#endif
