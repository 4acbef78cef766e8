/*
 * hooks-runtime.c - wrappers of the CUDA runtime's allocation functions, for
 * programs linked against a shared libcudart (PyTorch wheels, -lcudart).
 *
 * They label, they do not count: the outermost runtime call sets the
 * thread's label, and the driver wrappers reached inside record the bytes
 * under that name, so a cudaMalloc is one event called cudaMalloc. When the
 * call returns and no driver event was recorded inside it (the runtime
 * reached the driver by a path memtrace could not wrap), or it failed after
 * a driver call inside failed (the recorder leaves that one to us), the
 * event is recorded here, at the runtime level, with the cudaError_t result
 * (MT_KIND_RUNTIME): the code the program got. Nested runtime calls keep
 * the outer label.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "mt.h"

#define CALL(v, ...) ({ __typeof__(&v) real_ = (__typeof__(&v))mt_real_get(MT_V_##v); \
	real_ ? real_(__VA_ARGS__) : cudaErrorInitializationError; })

/* Per-thread-default-stream entry points the headers only declare through
   macros. */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

/* Start a runtime call: returns 1 when this call owns the label. */
static int label_begin(struct mt_thread *t, int api)
{
	if (!t || t->label)
		return 0;
	t->label = (uint16_t)api;
	t->label_events = 0;
	t->label_failed = 0;
	return 1;
}

/* End it: 1 when the event must be recorded here (nothing was inside, or
   the call failed as a driver call inside did). */
static int label_end(struct mt_thread *t, int owner, int failed)
{
	if (!owner)
		return 0;
	t->label = 0;
	return t->label_events == 0 || (failed && t->label_failed);
}

#define RT_ALLOC(v, kind, device_expr, addr_expr, bytes_expr, ...) do { \
	struct mt_thread *t = mt_thread(); \
	int owner = label_begin(t, MT_API_##v); \
	cudaError_t r = CALL(v, __VA_ARGS__); \
	if (label_end(t, owner, r != cudaSuccess)) \
		mt_event(t, MT_REC_ALLOC, (kind) | MT_KIND_RUNTIME, device_expr, MT_API_##v, mt_now(), \
			 r == cudaSuccess ? (uint64_t)(uintptr_t)(addr_expr) : 0, (uint64_t)(bytes_expr), r, NULL); \
	return r; \
} while (0)

#define RT_FREE(v, kind, addr_expr, ...) do { \
	struct mt_thread *t = mt_thread(); \
	int owner = label_begin(t, MT_API_##v); \
	uint64_t t0 = t ? mt_now() : 0; \
	cudaError_t r = CALL(v, __VA_ARGS__); \
	if (label_end(t, owner, r != cudaSuccess) && (addr_expr)) \
		mt_event(t, MT_REC_FREE, (kind) | MT_KIND_RUNTIME, -1, MT_API_##v, t0, \
			 (uint64_t)(uintptr_t)(addr_expr), 0, r, NULL); \
	return r; \
} while (0)

/* Calls after which pools may give memory back (trim, synchronize): they
   change no bytes by themselves, only the label for the pool records. */
#define RT_LABEL(v, ...) do { \
	struct mt_thread *t = mt_thread(); \
	int owner = label_begin(t, MT_API_##v); \
	cudaError_t r = CALL(v, __VA_ARGS__); \
	label_end(t, owner, 0); \
	return r; \
} while (0)

/*
 * The device of a runtime allocation recorded here: the one the runtime
 * uses for this thread, cudaGetDevice's answer. It is the current
 * context's device when there is one, and it is known without one: the
 * device cudaSetDevice chose, or 0, when the context could not be created
 * (cuCtxGetDevice would say -1 then).
 */
static int runtime_device(void)
{
	static cudaError_t (*get)(int *);
	int d;

	if (!get && !(get = (cudaError_t (*)(int *))mt_runtime_sym("cudaGetDevice")))
		return mt_current_device();
	return get(&d) == cudaSuccess ? d : -1;
}

#define DEV runtime_device()

MT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{ RT_ALLOC(cudaMalloc, MT_KIND_DEVICE, DEV, *devPtr, size, devPtr, size); }

MT_EXPORT cudaError_t cudaFree(void *devPtr)
{ RT_FREE(cudaFree, MT_KIND_DEVICE, devPtr, devPtr); }

MT_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{ RT_ALLOC(cudaMallocAsync, MT_KIND_ASYNC, mt_stream_device(hStream), *devPtr, size, devPtr, size, hStream); }

MT_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{ RT_ALLOC(cudaMallocAsync_ptsz, MT_KIND_ASYNC, mt_stream_device(hStream), *devPtr, size, devPtr, size, hStream); }

MT_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{ RT_FREE(cudaFreeAsync, MT_KIND_ASYNC, devPtr, devPtr, hStream); }

MT_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{ RT_FREE(cudaFreeAsync_ptsz, MT_KIND_ASYNC, devPtr, devPtr, hStream); }

MT_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{ RT_ALLOC(cudaMallocFromPoolAsync, MT_KIND_ASYNC, mt_stream_device(stream), *ptr, size, ptr, size, memPool, stream); }

MT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{ RT_ALLOC(cudaMallocFromPoolAsync_ptsz, MT_KIND_ASYNC, mt_stream_device(stream), *ptr, size, ptr, size, memPool, stream); }

MT_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{ RT_ALLOC(cudaMallocManaged, MT_KIND_MANAGED, DEV, *devPtr, size, devPtr, size, flags); }

MT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{ RT_ALLOC(cudaMallocHost, MT_KIND_HOST, -1, *ptr, size, ptr, size); }

MT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{ RT_ALLOC(cudaHostAlloc, MT_KIND_HOST, -1, *pHost, size, pHost, size, flags); }

MT_EXPORT cudaError_t cudaFreeHost(void *ptr)
{ RT_FREE(cudaFreeHost, MT_KIND_HOST, ptr, ptr); }

MT_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{ RT_ALLOC(cudaHostRegister, MT_KIND_HOST_REGISTER, -1, ptr, size, ptr, size, flags); }

MT_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{ RT_FREE(cudaHostUnregister, MT_KIND_HOST_REGISTER, ptr, ptr); }

MT_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{ RT_ALLOC(cudaMallocPitch, MT_KIND_DEVICE, DEV, *devPtr, r == cudaSuccess ? *pitch * height : width * height,
	   devPtr, pitch, width, height); }

MT_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *p, struct cudaExtent e)
{ RT_ALLOC(cudaMalloc3D, MT_KIND_DEVICE, DEV, p->ptr,
	   (r == cudaSuccess ? p->pitch : e.width) * (e.height ? e.height : 1) * (e.depth ? e.depth : 1), p, e); }

static uint64_t channel_bytes(const struct cudaChannelFormatDesc *d)
{
	return d ? (uint64_t)(d->x + d->y + d->z + d->w) / 8 : 0;
}

#define ARRAY_KIND (MT_KIND_ARRAY | MT_KIND_ESTIMATED)
#define OR1(n) ((n) ? (uint64_t)(n) : 1)

MT_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
				      size_t width, size_t height, unsigned int flags)
{ RT_ALLOC(cudaMallocArray, ARRAY_KIND, DEV, *array, channel_bytes(desc) * width * OR1(height),
	   array, desc, width, height, flags); }

MT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
					struct cudaExtent e, unsigned int flags)
{ RT_ALLOC(cudaMalloc3DArray, ARRAY_KIND, DEV, *array, channel_bytes(desc) * e.width * OR1(e.height) * OR1(e.depth),
	   array, desc, e, flags); }

MT_EXPORT cudaError_t cudaFreeArray(cudaArray_t array)
{ RT_FREE(cudaFreeArray, ARRAY_KIND, array, array); }

MT_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *a, const struct cudaChannelFormatDesc *desc,
					       struct cudaExtent e, unsigned int numLevels, unsigned int flags)
{ RT_ALLOC(cudaMallocMipmappedArray, ARRAY_KIND, DEV, *a,
	   channel_bytes(desc) * e.width * OR1(e.height) * OR1(e.depth), a, desc, e, numLevels, flags); }

MT_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t a)
{ RT_FREE(cudaFreeMipmappedArray, ARRAY_KIND, a, a); }

MT_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *props)
{ RT_ALLOC(cudaMemPoolCreate, MT_KIND_POOL,
	   props && props->location.type == cudaMemLocationTypeDevice ? props->location.id : -1,
	   *memPool, 0, memPool, props); }

MT_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{ RT_FREE(cudaMemPoolDestroy, MT_KIND_POOL, memPool, memPool); }

MT_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{ RT_LABEL(cudaMemPoolTrimTo, memPool, minBytesToKeep); }

MT_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{ RT_ALLOC(cudaIpcOpenMemHandle, MT_KIND_FOREIGN, DEV, *devPtr, 0, devPtr, handle, flags); }

MT_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{ RT_FREE(cudaIpcCloseMemHandle, MT_KIND_FOREIGN, devPtr, devPtr); }

MT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{ RT_LABEL(cudaStreamSynchronize, stream); }

MT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{ RT_LABEL(cudaStreamSynchronize_ptsz, stream); }

MT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{ RT_LABEL(cudaDeviceSynchronize); }

void *const mt_runtime_wrappers[] = {
#define MT_RUNTIME_ADDR(name) (void *)&name,
	MT_RUNTIME_FUNCTIONS(MT_RUNTIME_ADDR)
#undef MT_RUNTIME_ADDR
};
