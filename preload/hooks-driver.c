/*
 * hooks-driver.c - one wrapper per driver variant of variants.h. Each is
 * exported under the variant's own name (for programs linked with -lcuda)
 * and handed out by resolve.c for dlsym and cuGetProcAddress look-ups.
 *
 * Every wrapper: enter (NULL: not traced or nested, just forward), take the
 * time first for frees, call the real function, record, return the real
 * result unchanged. Bytes are counted here, at the driver layer; runtime
 * wrappers only label (recorder.c).
 */
#define __CUDA_API_VERSION_INTERNAL   /* declares v1 and _ptsz variants */
#include <cuda.h>
#include <stddef.h>
#include "mt.h"

#define REAL(v) ((__typeof__(&v))mt_real_get(MT_V_##v))
#define CALL(v, ...) ({ __typeof__(&v) real_ = REAL(v); real_ ? real_(__VA_ARGS__) : CUDA_ERROR_NOT_INITIALIZED; })

static void alloc_event(struct mt_thread *t, int kind, int device, int api, CUresult r,
			uint64_t addr, uint64_t bytes, const uint64_t *x)
{
	mt_event(t, MT_REC_ALLOC, kind, device, api, mt_now(), r == CUDA_SUCCESS ? addr : 0, bytes, r, x);
}

static void free_event(struct mt_thread *t, int kind, int api, uint64_t t0, CUresult r,
		       uint64_t addr, uint64_t bytes, const uint64_t *x)
{
	mt_event(t, MT_REC_FREE, kind, -1, api, t0, addr, bytes, r, x);
}

/* Synchronous device-side allocation: device of the current context. */
#define DEVICE_ALLOC(v, kind, ptr_expr, bytes_expr, ...) do { \
	struct mt_thread *t = mt_driver_enter(); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		alloc_event(t, kind, mt_current_device(), MT_API_##v, r, \
			    r == CUDA_SUCCESS ? (uint64_t)(ptr_expr) : 0, (uint64_t)(bytes_expr), NULL); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

/* A free of addr (0: nothing to free, nothing recorded). */
#define FREE(v, kind, addr_expr, bytes_expr, ...) do { \
	uint64_t t0; \
	struct mt_thread *t = mt_free_enter(&t0); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		if ((addr_expr) != 0) \
			free_event(t, kind, MT_API_##v, t0, r, (uint64_t)(addr_expr), (uint64_t)(bytes_expr), NULL); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

/* --- device, pitch, managed ------------------------------------------------ */

MT_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{ DEVICE_ALLOC(cuMemAlloc, MT_KIND_DEVICE, *dptr, bytesize, dptr, bytesize); }

MT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{ DEVICE_ALLOC(cuMemAlloc_v2, MT_KIND_DEVICE, *dptr, bytesize, dptr, bytesize); }

/* A failed pitch allocation keeps the requested size, width x height. */
static void pitch_event(struct mt_thread *t, int api, CUresult r, uint64_t ptr, uint64_t pitch,
			uint64_t width, uint64_t height)
{
	alloc_event(t, MT_KIND_DEVICE, mt_current_device(), api, r, ptr,
		    (r == CUDA_SUCCESS ? pitch : width) * height, NULL);
}

MT_EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
				   unsigned int Height, unsigned int ElementSizeBytes)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemAllocPitch, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
	if (t) {
		pitch_event(t, MT_API_cuMemAllocPitch, r, r == CUDA_SUCCESS ? *dptr : 0,
			    r == CUDA_SUCCESS ? *pPitch : 0, WidthInBytes, Height);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				      size_t Height, unsigned int ElementSizeBytes)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemAllocPitch_v2, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
	if (t) {
		pitch_event(t, MT_API_cuMemAllocPitch_v2, r, r == CUDA_SUCCESS ? *dptr : 0,
			    r == CUDA_SUCCESS ? *pPitch : 0, WidthInBytes, Height);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{ DEVICE_ALLOC(cuMemAllocManaged, MT_KIND_MANAGED, *dptr, bytesize, dptr, bytesize, flags); }

MT_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{ FREE(cuMemFree, MT_KIND_DEVICE, dptr, 0, dptr); }

MT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{ FREE(cuMemFree_v2, MT_KIND_DEVICE, dptr, 0, dptr); }

/* --- stream-ordered ---------------------------------------------------------- */

static int stream_capturing(CUstream s)
{
	static CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUstreamCaptureStatus st;
	if (!is_capturing && !(is_capturing = (CUresult (*)(CUstream, CUstreamCaptureStatus *))
			       mt_driver_sym("cuStreamIsCapturing")))
		return 0;
	return is_capturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/*
 * pool == 0: the current pool of the stream's device. During stream capture
 * nothing is allocated (the call adds a graph node), so nothing is recorded.
 */
static void async_alloc_event(struct mt_thread *t, int api, CUresult r, CUdeviceptr *dptr,
			      size_t bytes, CUstream stream, uint64_t pool)
{
	if (r == CUDA_SUCCESS && stream_capturing(stream))
		return;
	int device = mt_stream_device(stream);
	if (!pool)
		pool = mt_device_pool(device);
	else
		mt_pool_known(pool, -1);
	uint64_t x[2] = { (uint64_t)(uintptr_t)stream, pool };
	alloc_event(t, MT_KIND_ASYNC, device, api, r, r == CUDA_SUCCESS ? *dptr : 0, bytes, x);
	if (pool)
		mt_pool_sample(t, pool, api);
	if (r != CUDA_SUCCESS)
		mt_pools_sample_all(t, api);
}

#define ASYNC_ALLOC(v, pool, ...) do { \
	struct mt_thread *t = mt_driver_enter(); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		async_alloc_event(t, MT_API_##v, r, dptr, bytesize, hStream, pool); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

MT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{ ASYNC_ALLOC(cuMemAllocAsync, 0, dptr, bytesize, hStream); }

MT_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{ ASYNC_ALLOC(cuMemAllocAsync_ptsz, 0, dptr, bytesize, hStream); }

MT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{ ASYNC_ALLOC(cuMemAllocFromPoolAsync, (uint64_t)(uintptr_t)pool, dptr, bytesize, pool, hStream); }

MT_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{ ASYNC_ALLOC(cuMemAllocFromPoolAsync_ptsz, (uint64_t)(uintptr_t)pool, dptr, bytesize, pool, hStream); }

#define ASYNC_FREE(v) do { \
	uint64_t t0; \
	struct mt_thread *t = mt_free_enter(&t0); \
	CUresult r = CALL(v, dptr, hStream); \
	if (t) { \
		if (dptr && !(r == CUDA_SUCCESS && stream_capturing(hStream))) { \
			uint64_t x[2] = { (uint64_t)(uintptr_t)hStream, 0 }; \
			free_event(t, MT_KIND_ASYNC, MT_API_##v, t0, r, dptr, 0, x); \
		} \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

MT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{ ASYNC_FREE(cuMemFreeAsync); }

MT_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{ ASYNC_FREE(cuMemFreeAsync_ptsz); }

/* --- pools and the calls after which a pool may give memory back ----------- */

MT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemPoolCreate, pool, poolProps);
	if (t) {
		int device = poolProps && poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE
			? poolProps->location.id : -1;
		uint64_t p = r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pool : 0;
		if (p)
			mt_pool_known(p, device);
		alloc_event(t, MT_KIND_POOL, device, MT_API_cuMemPoolCreate, r, p, 0, NULL);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	uint64_t t0;
	struct mt_thread *t = mt_free_enter(&t0);
	CUresult r = CALL(cuMemPoolDestroy, pool);
	if (t) {
		free_event(t, MT_KIND_POOL, MT_API_cuMemPoolDestroy, t0, r, (uint64_t)(uintptr_t)pool, 0, NULL);
		if (r == CUDA_SUCCESS)
			mt_pool_forget(t, (uint64_t)(uintptr_t)pool, MT_API_cuMemPoolDestroy);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemPoolTrimTo, pool, minBytesToKeep);
	if (t) {
		mt_pool_sample(t, (uint64_t)(uintptr_t)pool, MT_API_cuMemPoolTrimTo);
		mt_driver_leave(t);
	}
	return r;
}

#define SYNC(v, ...) do { \
	struct mt_thread *t = mt_driver_enter(); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		mt_pools_sample_all(t, MT_API_##v); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

MT_EXPORT CUresult cuStreamSynchronize(CUstream hStream) { SYNC(cuStreamSynchronize, hStream); }
MT_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream) { SYNC(cuStreamSynchronize_ptsz, hStream); }
MT_EXPORT CUresult cuCtxSynchronize(void) { SYNC(cuCtxSynchronize); }
MT_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) { SYNC(cuCtxSynchronize_v2, ctx); }
MT_EXPORT CUresult cuEventSynchronize(CUevent hEvent) { SYNC(cuEventSynchronize, hEvent); }

/* --- pinned host ------------------------------------------------------------- */

#define HOST_ALLOC(v, kind, ptr_expr, bytes_expr, ...) do { \
	struct mt_thread *t = mt_driver_enter(); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		alloc_event(t, kind, -1, MT_API_##v, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)(ptr_expr) : 0, \
			    (uint64_t)(bytes_expr), NULL); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

MT_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{ HOST_ALLOC(cuMemAllocHost, MT_KIND_HOST, *pp, bytesize, pp, bytesize); }

MT_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{ HOST_ALLOC(cuMemAllocHost_v2, MT_KIND_HOST, *pp, bytesize, pp, bytesize); }

MT_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{ HOST_ALLOC(cuMemHostAlloc, MT_KIND_HOST, *pp, bytesize, pp, bytesize, Flags); }

MT_EXPORT CUresult cuMemFreeHost(void *p)
{ FREE(cuMemFreeHost, MT_KIND_HOST, (uint64_t)(uintptr_t)p, 0, p); }

MT_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{ HOST_ALLOC(cuMemHostRegister, MT_KIND_HOST_REGISTER, p, bytesize, p, bytesize, Flags); }

MT_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{ HOST_ALLOC(cuMemHostRegister_v2, MT_KIND_HOST_REGISTER, p, bytesize, p, bytesize, Flags); }

MT_EXPORT CUresult cuMemHostUnregister(void *p)
{ FREE(cuMemHostUnregister, MT_KIND_HOST_REGISTER, (uint64_t)(uintptr_t)p, 0, p); }

/* --- virtual memory ------------------------------------------------------------
 * Physical memory is counted at cuMemCreate / cuMemRelease (addr = handle);
 * reservations and mappings are address space, recorded as their own kinds.
 * The lifetime rule (physical memory goes when every reference is released
 * and every mapping unmapped) is applied by the analyzer from these events.
 */

MT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			       const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemCreate, handle, size, prop, flags);
	if (t) {
		uint64_t x[2] = { prop ? (uint64_t)prop->location.type : 0, prop ? (uint64_t)prop->location.id : 0 };
		int device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
		alloc_event(t, MT_KIND_VMM_PHYS, device, MT_API_cuMemCreate, r,
			    r == CUDA_SUCCESS ? *handle : 0, size, x);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{ FREE(cuMemRelease, MT_KIND_VMM_PHYS, handle, 0, handle); }

MT_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{ HOST_ALLOC(cuMemRetainAllocationHandle, MT_KIND_VMM_RETAIN, *handle, 0, handle, addr); }

MT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				       CUdeviceptr addr, unsigned long long flags)
{ HOST_ALLOC(cuMemAddressReserve, MT_KIND_VMM_RESERVE, *ptr, size, ptr, size, alignment, addr, flags); }

MT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{ FREE(cuMemAddressFree, MT_KIND_VMM_RESERVE, ptr, size, ptr, size); }

MT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct mt_thread *t = mt_driver_enter();
	CUresult r = CALL(cuMemMap, ptr, size, offset, handle, flags);
	if (t) {
		uint64_t x[2] = { handle, offset };
		mt_event(t, MT_REC_ALLOC, MT_KIND_VMM_MAP, -1, MT_API_cuMemMap, mt_now(), ptr, size, r, x);
		mt_driver_leave(t);
	}
	return r;
}

MT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{ FREE(cuMemUnmap, MT_KIND_VMM_MAP, ptr, size, ptr, size); }

/* --- arrays: their size is an estimate (the driver pads and tiles) ---------- */

static uint64_t format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
	default: return 4;
	}
}

static uint64_t array_bytes(uint64_t w, uint64_t h, uint64_t d, uint64_t channels, CUarray_format f)
{
	return w * (h ? h : 1) * (d ? d : 1) * (channels ? channels : 1) * format_bytes(f);
}

#define ARRAY_KIND (MT_KIND_ARRAY | MT_KIND_ESTIMATED)

MT_EXPORT CUresult cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{ DEVICE_ALLOC(cuArrayCreate, ARRAY_KIND, (uintptr_t)*pHandle,
	       d ? array_bytes(d->Width, d->Height, 0, d->NumChannels, d->Format) : 0, pHandle, d); }

MT_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{ DEVICE_ALLOC(cuArrayCreate_v2, ARRAY_KIND, (uintptr_t)*pHandle,
	       d ? array_bytes(d->Width, d->Height, 0, d->NumChannels, d->Format) : 0, pHandle, d); }

MT_EXPORT CUresult cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *d)
{ DEVICE_ALLOC(cuArray3DCreate, ARRAY_KIND, (uintptr_t)*pHandle,
	       d ? array_bytes(d->Width, d->Height, d->Depth, d->NumChannels, d->Format) : 0, pHandle, d); }

MT_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{ DEVICE_ALLOC(cuArray3DCreate_v2, ARRAY_KIND, (uintptr_t)*pHandle,
	       d ? array_bytes(d->Width, d->Height, d->Depth, d->NumChannels, d->Format) : 0, pHandle, d); }

MT_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{ FREE(cuArrayDestroy, ARRAY_KIND, (uint64_t)(uintptr_t)hArray, 0, hArray); }

static uint64_t mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels)
{
	uint64_t total = 0, w = d->Width, h = d->Height, z = d->Depth;
	for (unsigned int i = 0; i < levels && w; i++) {
		total += array_bytes(w, h, z, d->NumChannels, d->Format);
		w = w > 1 ? w / 2 : 1;
		h = h > 1 ? h / 2 : h;
		z = z > 1 ? z / 2 : z;
	}
	return total;
}

MT_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
					  unsigned int numMipmapLevels)
{ DEVICE_ALLOC(cuMipmappedArrayCreate, ARRAY_KIND, (uintptr_t)*pHandle,
	       d ? mipmap_bytes(d, numMipmapLevels) : 0, pHandle, d, numMipmapLevels); }

MT_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{ FREE(cuMipmappedArrayDestroy, ARRAY_KIND, (uint64_t)(uintptr_t)hMipmappedArray, 0, hMipmappedArray); }

/* --- memory of another process or API: recorded, not this process's bytes -- */

static uint64_t range_size(CUdeviceptr p)
{
	static CUresult (*get)(CUdeviceptr *, size_t *, CUdeviceptr);
	CUdeviceptr base;
	size_t size;
	if (!get && !(get = (CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr))mt_driver_sym("cuMemGetAddressRange_v2")))
		return 0;
	return get(&base, &size, p) == CUDA_SUCCESS ? size : 0;
}

#define FOREIGN(v, ...) do { \
	struct mt_thread *t = mt_driver_enter(); \
	CUresult r = CALL(v, __VA_ARGS__); \
	if (t) { \
		uint64_t p = r == CUDA_SUCCESS ? *pdptr : 0; \
		alloc_event(t, MT_KIND_FOREIGN, mt_current_device(), MT_API_##v, r, p, p ? range_size(p) : 0, NULL); \
		mt_driver_leave(t); \
	} \
	return r; \
} while (0)

MT_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{ FOREIGN(cuIpcOpenMemHandle, pdptr, handle, Flags); }

MT_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{ FOREIGN(cuIpcOpenMemHandle_v2, pdptr, handle, Flags); }

MT_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *pdptr, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{ FOREIGN(cuMemPoolImportPointer, pdptr, pool, shareData); }

MT_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{ FREE(cuIpcCloseMemHandle, MT_KIND_FOREIGN, dptr, 0, dptr); }

MT_EXPORT CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
						   const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc)
{ DEVICE_ALLOC(cuExternalMemoryGetMappedBuffer, MT_KIND_FOREIGN, *devPtr, bufferDesc ? bufferDesc->size : 0,
	       devPtr, extMem, bufferDesc); }

/* --- the table resolve.c hands out ------------------------------------------ */

void *const mt_driver_wrappers[] = {
#define MT_WRAPPER_ADDR(v, base, version, ptsz) [MT_V_##v] = (void *)&v,
	MT_DRIVER_VARIANTS(MT_WRAPPER_ADDR)
#undef MT_WRAPPER_ADDR
};
