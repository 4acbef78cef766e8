/*
 * array.c - CUDA arrays and mipmapped arrays. An array's size is
 * width * max(height, 1) * max(depth, 1) * NumChannels * bytes per channel
 * of its format (a mipmapped array: the sum over its levels, each dimension
 * halved per level, at least 1), placed and charged like cuMemAlloc device
 * memory (memory.c). The call log names the array by its handle
 * (kind=array, addr = CUarray or CUmipmappedArray). Block-compressed and
 * YUV formats are CUDA_ERROR_INVALID_VALUE here.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim_array {
	struct sim_obj obj;
	int dev;
	uint64_t addr, size, rsize;
	struct sim_page *page;
	CUDA_ARRAY3D_DESCRIPTOR desc;
};

static unsigned format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
	case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_UNORM_INT8X4:
	case CU_AD_FORMAT_SNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X4:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
	case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_UNORM_INT16X4:
	case CU_AD_FORMAT_SNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X4:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 0;
	}
}

static uint64_t dim(uint64_t d, unsigned level)
{
	d >>= level;
	return d ? d : 1;
}

/* Bytes of all levels, or 0 for an invalid descriptor. */
static uint64_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
	uint64_t total = 0, elem = (uint64_t)format_bytes(d->Format) * d->NumChannels;

	if (!elem || d->NumChannels > 4 || d->Width == 0 || levels == 0 || levels > 32)
		return 0;
	for (unsigned l = 0; l < levels; l++)
		total += dim(d->Width, l) * dim(d->Height, l) * dim(d->Depth, l) * elem;
	return total;
}

static CUresult array_create(const char *fn, int type, void **out,
			     const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels)
{
	struct sim_array *a = NULL;
	uint64_t charged = 0, size = desc ? array_bytes(desc, levels) : 0;
	int dev = -1;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS)
		dev = -1;
	else if (!out || size == 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(a = calloc(1, sizeof(*a))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		r = sim_devmem_get(dev, 0, size, &a->addr, &a->rsize, &a->page, &charged);
	if (r == CUDA_SUCCESS) {
		a->dev = dev;
		a->size = size;
		a->desc = *desc;
		sim_obj_add(&a->obj, type);
		*out = a;
	} else {
		free(a);
		a = NULL;
	}
	sim_log("alloc", fn, "array", dev, (uint64_t)(uintptr_t)a, size, charged, r);
	sim_unlock();
	return r;
}

static CUresult array_destroy(const char *fn, int type, void *h)
{
	struct sim_array *a;
	uint64_t uncharged;

	SIM_NEED_INIT();
	sim_lock();
	if (!(a = sim_obj_get(h, type))) {
		sim_log("free", fn, "array", -1, (uint64_t)(uintptr_t)h, 0, 0, CUDA_ERROR_INVALID_HANDLE);
		sim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	sim_obj_del(&a->obj);
	uncharged = sim_devmem_put(a->dev, 0, a->addr, a->rsize, a->page);
	sim_log("free", fn, "array", a->dev, (uint64_t)(uintptr_t)h, a->size, uncharged, CUDA_SUCCESS);
	sim_unlock();
	free(a);
	return CUDA_SUCCESS;
}

static CUDA_ARRAY3D_DESCRIPTOR from2d(size_t w, size_t h, CUarray_format f, unsigned ch)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	memset(&d, 0, sizeof(d));
	d.Width = w;
	d.Height = h;
	d.Format = f;
	d.NumChannels = ch;
	return d;
}

SIM_EXPORT CUresult cuArrayCreate_v2(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *desc)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	if (!desc)
		return array_create("cuArrayCreate_v2", SIM_ARRAY, (void **)h, NULL, 1);
	d = from2d(desc->Width, desc->Height, desc->Format, desc->NumChannels);
	return array_create("cuArrayCreate_v2", SIM_ARRAY, (void **)h, &d, 1);
}

SIM_EXPORT CUresult cuArrayCreate(CUarray *h, const CUDA_ARRAY_DESCRIPTOR_v1 *desc)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	if (!desc)
		return array_create("cuArrayCreate", SIM_ARRAY, (void **)h, NULL, 1);
	d = from2d(desc->Width, desc->Height, desc->Format, desc->NumChannels);
	return array_create("cuArrayCreate", SIM_ARRAY, (void **)h, &d, 1);
}

SIM_EXPORT CUresult cuArray3DCreate_v2(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	return array_create("cuArray3DCreate_v2", SIM_ARRAY, (void **)h, desc, 1);
}

SIM_EXPORT CUresult cuArray3DCreate(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR_v1 *desc)
{
	CUDA_ARRAY3D_DESCRIPTOR d;

	if (!desc)
		return array_create("cuArray3DCreate", SIM_ARRAY, (void **)h, NULL, 1);
	d = from2d(desc->Width, desc->Height, desc->Format, desc->NumChannels);
	d.Depth = desc->Depth;
	d.Flags = desc->Flags;
	return array_create("cuArray3DCreate", SIM_ARRAY, (void **)h, &d, 1);
}

SIM_EXPORT CUresult cuArrayDestroy(CUarray h)
{
	return array_destroy("cuArrayDestroy", SIM_ARRAY, h);
}

SIM_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *desc,
					   unsigned int levels)
{
	return array_create("cuMipmappedArrayCreate", SIM_MIPMAP, (void **)h, desc, levels);
}

SIM_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray h)
{
	return array_destroy("cuMipmappedArrayDestroy", SIM_MIPMAP, h);
}

static CUresult descriptor(CUarray h, CUDA_ARRAY3D_DESCRIPTOR *out)
{
	struct sim_array *a;

	SIM_NEED_INIT();
	sim_lock();
	if ((a = sim_obj_get(h, SIM_ARRAY)))
		*out = a->desc;
	sim_unlock();
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *desc, CUarray h)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult r;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = descriptor(h, &d)) == CUDA_SUCCESS) {
		desc->Width = d.Width;
		desc->Height = d.Height;
		desc->Format = d.Format;
		desc->NumChannels = d.NumChannels;
	}
	return r;
}

SIM_EXPORT CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR_v1 *desc, CUarray h)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult r;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = descriptor(h, &d)) == CUDA_SUCCESS) {
		desc->Width = (unsigned int)d.Width;
		desc->Height = (unsigned int)d.Height;
		desc->Format = d.Format;
		desc->NumChannels = d.NumChannels;
	}
	return r;
}

SIM_EXPORT CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *desc, CUarray h)
{
	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	return descriptor(h, desc);
}

SIM_EXPORT CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR_v1 *desc, CUarray h)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult r;

	if (!desc)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = descriptor(h, &d)) == CUDA_SUCCESS) {
		desc->Width = (unsigned int)d.Width;
		desc->Height = (unsigned int)d.Height;
		desc->Depth = (unsigned int)d.Depth;
		desc->Format = d.Format;
		desc->NumChannels = d.NumChannels;
		desc->Flags = d.Flags;
	}
	return r;
}
