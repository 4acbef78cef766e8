/*
 * stream.c - streams, events, stream-ordered allocation and memory pools.
 *
 * cudaStream_t, cudaEvent_t and cudaMemPool_t are the driver's CUstream,
 * CUevent and CUmemoryPool values, and cudaStreamLegacy/cudaStreamPerThread
 * equal CU_STREAM_LEGACY/CU_STREAM_PER_THREAD, so handles pass through.
 * The _ptsz entry points (what code built with --default-stream per-thread
 * calls) use the driver's _ptsz variants, looked up with flag 2.
 */
#include <string.h>

#include "simrt.h"

SIMRT_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!pStream)
		return simrt_ret(cudaErrorInvalidValue);
	return simrt_ret_cu(simrt_drv.StreamCreateWithPriority((CUstream *)pStream, flags, priority));
}

SIMRT_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!pStream)
		return simrt_ret(cudaErrorInvalidValue);
	return simrt_ret_cu(simrt_drv.StreamCreate((CUstream *)pStream, flags));
}

SIMRT_API cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

SIMRT_API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.StreamDestroy((CUstream)stream));
}

static cudaError_t stream_sync(cudaStream_t stream, PFN_cuStreamSynchronize_v2000 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(fn((CUstream)stream));
}

SIMRT_API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return stream_sync(stream, simrt_drv.StreamSynchronize);
}

SIMRT_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return stream_sync(stream, simrt_drv.StreamSynchronize_ptsz);
}

static cudaError_t stream_device(cudaStream_t stream, int *device, PFN_cuStreamGetDevice_v12080 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!device)
		return simrt_ret(cudaErrorInvalidValue);
	CUdevice dev;
	CUresult res = fn((CUstream)stream, &dev);
	if (res == CUDA_SUCCESS)
		*device = dev;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaStreamGetDevice(cudaStream_t stream, int *device)
{
	return stream_device(stream, device, simrt_drv.StreamGetDevice);
}

SIMRT_API cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t stream, int *device)
{
	return stream_device(stream, device, simrt_drv.StreamGetDevice_ptsz);
}

SIMRT_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!event)
		return simrt_ret(cudaErrorInvalidValue);
	return simrt_ret_cu(simrt_drv.EventCreate((CUevent *)event, flags));
}

SIMRT_API cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream, PFN_cuEventRecord_v2000 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(fn((CUevent)event, (CUstream)stream));
}

SIMRT_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	return event_record(event, stream, simrt_drv.EventRecord);
}

SIMRT_API cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	return event_record(event, stream, simrt_drv.EventRecord_ptsz);
}

SIMRT_API cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.EventSynchronize((CUevent)event));
}

SIMRT_API cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.EventDestroy((CUevent)event));
}

static cudaError_t malloc_async(void **devPtr, size_t size, cudaStream_t stream, PFN_cuMemAllocAsync_v11020 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!devPtr)
		return simrt_ret(cudaErrorInvalidValue);
	CUdeviceptr dptr = 0;
	CUresult res = fn(&dptr, size, (CUstream)stream);
	*devPtr = res == CUDA_SUCCESS ? (void *)dptr : NULL;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
	return malloc_async(devPtr, size, stream, simrt_drv.MemAllocAsync);
}

SIMRT_API cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream)
{
	return malloc_async(devPtr, size, stream, simrt_drv.MemAllocAsync_ptsz);
}

static cudaError_t malloc_from_pool(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
				    PFN_cuMemAllocFromPoolAsync_v11020 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!ptr)
		return simrt_ret(cudaErrorInvalidValue);
	CUdeviceptr dptr = 0;
	CUresult res = fn(&dptr, size, (CUmemoryPool)pool, (CUstream)stream);
	*ptr = res == CUDA_SUCCESS ? (void *)dptr : NULL;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
	return malloc_from_pool(ptr, size, pool, stream, simrt_drv.MemAllocFromPoolAsync);
}

SIMRT_API cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
						   cudaStream_t stream)
{
	return malloc_from_pool(ptr, size, pool, stream, simrt_drv.MemAllocFromPoolAsync_ptsz);
}

static cudaError_t free_async(void *devPtr, cudaStream_t stream, PFN_cuMemFreeAsync_v11020 fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(fn((CUdeviceptr)devPtr, (CUstream)stream));
}

SIMRT_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
	return free_async(devPtr, stream, simrt_drv.MemFreeAsync);
}

SIMRT_API cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
	return free_async(devPtr, stream, simrt_drv.MemFreeAsync_ptsz);
}

SIMRT_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!memPool || !poolProps)
		return simrt_ret(cudaErrorInvalidValue);
	CUmemPoolProps props;
	memset(&props, 0, sizeof(props));
	props.allocType = (CUmemAllocationType)poolProps->allocType;
	props.handleTypes = (CUmemAllocationHandleType)poolProps->handleTypes;
	props.location.type = (CUmemLocationType)poolProps->location.type;
	props.location.id = poolProps->location.id;
	props.win32SecurityAttributes = poolProps->win32SecurityAttributes;
	props.maxSize = poolProps->maxSize;
	props.usage = poolProps->usage;
	return simrt_ret_cu(simrt_drv.MemPoolCreate((CUmemoryPool *)memPool, &props));
}

SIMRT_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemPoolDestroy((CUmemoryPool)memPool));
}

SIMRT_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemPoolTrimTo((CUmemoryPool)memPool, minBytesToKeep));
}

/* cudaMemPoolAttr values equal CUmemPool_attribute's. */
SIMRT_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemPoolSetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

SIMRT_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemPoolGetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

/* The pool calls of a device: the driver's, on the device's CUdevice. */
static cudaError_t device_handle(int device, CUdevice *dev)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return err;
	return (cudaError_t)simrt_drv.DeviceGet(dev, device);
}

SIMRT_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	CUdevice dev;
	cudaError_t err = device_handle(device, &dev);
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.DeviceGetDefaultMemPool((CUmemoryPool *)memPool, dev));
}

SIMRT_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
	CUdevice dev;
	cudaError_t err = device_handle(device, &dev);
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.DeviceGetMemPool((CUmemoryPool *)memPool, dev));
}

SIMRT_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
	CUdevice dev;
	cudaError_t err = device_handle(device, &dev);
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.DeviceSetMemPool(dev, (CUmemoryPool)memPool));
}
