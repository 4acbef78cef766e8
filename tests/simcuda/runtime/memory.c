/*
 * memory.c - synchronous allocation (device, managed, pinned host, pitched,
 * arrays), host registration, copies and sets, IPC.
 *
 * Each runtime function is one driver call of the variant the real runtime
 * uses (cudaMalloc -> cuMemAlloc_v2, cudaMallocHost and cudaHostAlloc ->
 * cuMemHostAlloc, ...), after making sure the thread has a current
 * context. The driver keeps all the state; the runtime only translates
 * arguments and result codes. Runtime flag values that equal the driver's
 * (host alloc/register, array and IPC flags) are passed through.
 */
#include <string.h>

#include "simrt.h"

/* The element size the runtime passes to cuMemAllocPitch (the real one is
 * undocumented; 4 is the smallest the driver takes). */
#define PITCH_ELEMENT_SIZE 4

SIMRT_API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!devPtr)
		return simrt_ret(cudaErrorInvalidValue);
	*devPtr = NULL;
	if (size == 0) /* success without an allocation, as the real runtime */
		return cudaSuccess;
	CUdeviceptr dptr = 0;
	CUresult res = simrt_drv.MemAlloc(&dptr, size);
	if (res == CUDA_SUCCESS)
		*devPtr = (void *)dptr;
	return simrt_ret_cu(res);
}

/* Also frees cudaMallocAsync memory (the driver's cuMemFree takes pool
 * pointers, synchronously). */
SIMRT_API cudaError_t cudaFree(void *devPtr)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess || !devPtr)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemFree((CUdeviceptr)devPtr));
}

SIMRT_API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!devPtr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
		return simrt_ret(cudaErrorInvalidValue);
	CUdeviceptr dptr = 0;
	CUresult res = simrt_drv.MemAllocManaged(&dptr, size, flags);
	*devPtr = res == CUDA_SUCCESS ? (void *)dptr : NULL;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!pHost)
		return simrt_ret(cudaErrorInvalidValue);
	*pHost = NULL;
	return simrt_ret_cu(simrt_drv.MemHostAlloc(pHost, size, flags));
}

SIMRT_API cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

SIMRT_API cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess || !ptr)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemFreeHost(ptr));
}

SIMRT_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemHostRegister(ptr, size, flags));
}

SIMRT_API cudaError_t cudaHostUnregister(void *ptr)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemHostUnregister(ptr));
}

static cudaError_t alloc_pitch(void **devPtr, size_t *pitch, size_t width, size_t rows)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return err;
	if (!devPtr || !pitch)
		return cudaErrorInvalidValue;
	CUdeviceptr dptr = 0;
	CUresult res = simrt_drv.MemAllocPitch(&dptr, pitch, width, rows, PITCH_ELEMENT_SIZE);
	*devPtr = res == CUDA_SUCCESS ? (void *)dptr : NULL;
	return (cudaError_t)res;
}

SIMRT_API cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	return simrt_ret(alloc_pitch(devPtr, pitch, width, height));
}

/* A pitched allocation of height * depth rows. */
SIMRT_API cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
	if (!pitchedDevPtr)
		return simrt_ret(cudaErrorInvalidValue);
	void *ptr = NULL;
	size_t pitch = 0;
	cudaError_t err = alloc_pitch(&ptr, &pitch, extent.width, extent.height * extent.depth);
	if (err == cudaSuccess)
		*pitchedDevPtr = (struct cudaPitchedPtr){ ptr, pitch, extent.width, extent.height };
	return simrt_ret(err);
}

/* The driver's format and channel count of a channel descriptor. */
static cudaError_t array_format(const struct cudaChannelFormatDesc *desc, CUarray_format *format,
				unsigned int *channels)
{
	if (!desc)
		return cudaErrorInvalidValue;
	*channels = (desc->x > 0) + (desc->y > 0) + (desc->z > 0) + (desc->w > 0);
	if (*channels == 0 || (desc->y && desc->y != desc->x) || (desc->z && desc->z != desc->x) ||
	    (desc->w && desc->w != desc->x))
		return cudaErrorInvalidChannelDescriptor;
	switch (desc->f) {
	case cudaChannelFormatKindSigned:
		*format = desc->x == 8 ? CU_AD_FORMAT_SIGNED_INT8 :
			  desc->x == 16 ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_SIGNED_INT32;
		break;
	case cudaChannelFormatKindUnsigned:
		*format = desc->x == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 :
			  desc->x == 16 ? CU_AD_FORMAT_UNSIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT32;
		break;
	case cudaChannelFormatKindFloat:
		if (desc->x != 16 && desc->x != 32)
			return cudaErrorInvalidChannelDescriptor;
		*format = desc->x == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
		return cudaSuccess;
	default:
		return cudaErrorInvalidChannelDescriptor;
	}
	return desc->x == 8 || desc->x == 16 || desc->x == 32 ? cudaSuccess : cudaErrorInvalidChannelDescriptor;
}

static cudaError_t array_descriptor(CUDA_ARRAY3D_DESCRIPTOR *d, const struct cudaChannelFormatDesc *desc,
				    struct cudaExtent extent, unsigned int flags)
{
	memset(d, 0, sizeof(*d));
	d->Width = extent.width;
	d->Height = extent.height;
	d->Depth = extent.depth;
	d->Flags = flags;
	return array_format(desc, &d->Format, &d->NumChannels);
}

/* Without flags a 1D/2D array is cuArrayCreate's; with flags (layered,
 * surface, gather) it needs cuArray3DCreate with depth 0. */
SIMRT_API cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
				      size_t height, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUDA_ARRAY3D_DESCRIPTOR d;
	err = array_descriptor(&d, desc, (struct cudaExtent){ width, height, 0 }, flags);
	if (err == cudaSuccess && !array)
		err = cudaErrorInvalidValue;
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUarray handle = NULL;
	CUresult res;
	if (flags == 0) {
		CUDA_ARRAY_DESCRIPTOR d2 = { .Width = d.Width, .Height = d.Height, .Format = d.Format,
					     .NumChannels = d.NumChannels };
		res = simrt_drv.ArrayCreate(&handle, &d2);
	} else {
		res = simrt_drv.Array3DCreate(&handle, &d);
	}
	*array = (cudaArray_t)handle;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
					struct cudaExtent extent, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUDA_ARRAY3D_DESCRIPTOR d;
	err = array_descriptor(&d, desc, extent, flags);
	if (err == cudaSuccess && !array)
		err = cudaErrorInvalidValue;
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUarray handle = NULL;
	CUresult res = simrt_drv.Array3DCreate(&handle, &d);
	*array = (cudaArray_t)handle;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaFreeArray(cudaArray_t array)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess || !array)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.ArrayDestroy((CUarray)array));
}

SIMRT_API cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
					       const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
					       unsigned int numLevels, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUDA_ARRAY3D_DESCRIPTOR d;
	err = array_descriptor(&d, desc, extent, flags);
	if (err == cudaSuccess && !mipmappedArray)
		err = cudaErrorInvalidValue;
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUmipmappedArray handle = NULL;
	CUresult res = simrt_drv.MipmappedArrayCreate(&handle, &d, numLevels);
	*mipmappedArray = (cudaMipmappedArray_t)handle;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess || !mipmappedArray)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MipmappedArrayDestroy((CUmipmappedArray)mipmappedArray));
}

/*
 * Copies and sets: the per-thread entry points (_ptds/_ptsz) use copy[1],
 * the driver's per-thread variants. A copy of a known direction goes to
 * the driver function of that direction (which takes pageable host
 * memory), cudaMemcpyDefault to the unified-addressing cuMemcpy; host to
 * host needs no device.
 */
static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, int async,
			cudaStream_t stream, const struct simrt_copy *fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUdeviceptr d = (CUdeviceptr)dst, s = (CUdeviceptr)src;
	CUstream st = (CUstream)stream;
	CUresult res;
	switch (kind) {
	case cudaMemcpyHostToHost:
		memmove(dst, src, count);
		return cudaSuccess;
	case cudaMemcpyHostToDevice:
		res = async ? fn->MemcpyHtoDAsync(d, src, count, st) : fn->MemcpyHtoD(d, src, count);
		break;
	case cudaMemcpyDeviceToHost:
		res = async ? fn->MemcpyDtoHAsync(dst, s, count, st) : fn->MemcpyDtoH(dst, s, count);
		break;
	case cudaMemcpyDeviceToDevice:
		res = async ? fn->MemcpyDtoDAsync(d, s, count, st) : fn->MemcpyDtoD(d, s, count);
		break;
	case cudaMemcpyDefault:
		res = async ? fn->MemcpyAsync(d, s, count, st) : fn->Memcpy(d, s, count);
		break;
	default:
		return simrt_ret(cudaErrorInvalidMemcpyDirection);
	}
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind, 0, NULL, &simrt_drv.copy[0]);
}

SIMRT_API cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind, 0, NULL, &simrt_drv.copy[1]);
}

SIMRT_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				      cudaStream_t stream)
{
	return copy(dst, src, count, kind, 1, stream, &simrt_drv.copy[0]);
}

SIMRT_API cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
					   cudaStream_t stream)
{
	return copy(dst, src, count, kind, 1, stream, &simrt_drv.copy[1]);
}

static cudaError_t set(void *devPtr, int value, size_t count, int async, cudaStream_t stream,
		       const struct simrt_copy *fn)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	CUdeviceptr d = (CUdeviceptr)devPtr;
	return simrt_ret_cu(async ? fn->MemsetD8Async(d, (unsigned char)value, count, (CUstream)stream) :
				    fn->MemsetD8(d, (unsigned char)value, count));
}

SIMRT_API cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return set(devPtr, value, count, 0, NULL, &simrt_drv.copy[0]);
}

SIMRT_API cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return set(devPtr, value, count, 0, NULL, &simrt_drv.copy[1]);
}

SIMRT_API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return set(devPtr, value, count, 1, stream, &simrt_drv.copy[0]);
}

SIMRT_API cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return set(devPtr, value, count, 1, stream, &simrt_drv.copy[1]);
}

SIMRT_API cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!handle)
		return simrt_ret(cudaErrorInvalidValue);
	return simrt_ret_cu(simrt_drv.IpcGetMemHandle((CUipcMemHandle *)handle, (CUdeviceptr)devPtr));
}

SIMRT_API cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (!devPtr)
		return simrt_ret(cudaErrorInvalidValue);
	CUipcMemHandle h;
	memcpy(&h, &handle, sizeof(h));
	CUdeviceptr dptr = 0;
	CUresult res = simrt_drv.IpcOpenMemHandle(&dptr, h, flags);
	*devPtr = res == CUDA_SUCCESS ? (void *)dptr : NULL;
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.IpcCloseMemHandle((CUdeviceptr)devPtr));
}
