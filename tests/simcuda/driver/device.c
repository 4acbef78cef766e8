/*
 * device.c - devices, primary and created contexts, the per-thread context
 * stack, and charging bytes to a device.
 *
 * Every live context charges SIMCUDA_CTX_OVERHEAD to its device: a primary
 * context from its first retain to its last release, a created one from
 * cuCtxCreate to cuCtxDestroy. A context that cannot be charged is not
 * created (CUDA_ERROR_OUT_OF_MEMORY). Allocations belong to the device, not
 * to a context: destroying a context frees none of them (the real driver
 * does), and a destroyed context stays readable so that other threads whose
 * stacks still name it see it as dead (CUDA_ERROR_INVALID_CONTEXT) rather
 * than freed memory.
 *
 * The current context is the top of a per-thread stack (TLS); a new thread
 * has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim_device sim_dev[SIM_MAX_DEVICES];

#define STACK_MAX 64
static __thread struct sim_ctx *stack[STACK_MAX];
static __thread int depth;

/*
 * Address ranges, chosen away from where Linux puts mappings: device d owns
 * [0x500000000000 + d TiB, +1 TiB); its 32-bit window for the v1 API is
 * [0x80000000 + d * 128 MiB, +128 MiB).
 */
#define DEV_BASE 0x500000000000ull
#define DEV_SPAN 0x10000000000ull
#define LOW_BASE 0x80000000ull
#define LOW_SPAN 0x8000000ull

/* Returns 0, or -1 when out of host memory. */
int sim_device_init(int dev)
{
	struct sim_device *d = &sim_dev[dev];

	if (sim_arena_init(&d->space[0].arena, DEV_BASE + (uint64_t)dev * DEV_SPAN, DEV_SPAN, SIM_PAGE) < 0 ||
	    sim_arena_init(&d->space[1].arena, LOW_BASE + (uint64_t)dev * LOW_SPAN, LOW_SPAN, SIM_PAGE) < 0)
		return -1;
	d->primary.dev = dev;
	d->primary.primary = 1;
	sim_obj_add(&d->primary.obj, SIM_CTX);
	return 0;
}

CUresult sim_charge(int dev, uint64_t bytes)
{
	struct sim_device *d = &sim_dev[dev];

	if (bytes > sim_cfg.mem - d->charged)
		return CUDA_ERROR_OUT_OF_MEMORY;
	d->charged += bytes;
	return CUDA_SUCCESS;
}

void sim_uncharge(int dev, uint64_t bytes)
{
	sim_dev[dev].charged -= bytes;
}

struct sim_ctx *sim_ctx_current(void)
{
	return depth ? stack[depth - 1] : NULL;
}

CUresult sim_current_device(int *dev)
{
	struct sim_ctx *c = sim_ctx_current();

	if (!c || !c->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = c->dev;
	return CUDA_SUCCESS;
}

static int valid_dev(CUdevice dev)
{
	return dev >= 0 && dev < sim_cfg.devices;
}

/* --- devices --------------------------------------------------------------- */

SIM_EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	SIM_NEED_INIT();
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetCount(int *count)
{
	SIM_NEED_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_cfg.devices;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Simulated GPU (memtrace simcuda)");
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = sim_cfg.mem;
	return CUDA_SUCCESS;
}

/* The 32-bit form clamps to 4 GiB - 1. */
SIM_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	size_t v;
	CUresult r;

	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuDeviceTotalMem_v2(&v, dev);
	if (r == CUDA_SUCCESS)
		*bytes = v > 0xffffffffu ? 0xffffffffu : (unsigned int)v;
	return r;
}

static int attribute(CUdevice_attribute a, CUdevice dev)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return dev + 1;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
		return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	default:
		return 0;
	}
}

SIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!pi || a < 1 || a >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pi = attribute(a, dev);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*major = 9;
	*minor = 0;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	memset(uuid->bytes, 0, sizeof(uuid->bytes));
	memcpy(uuid->bytes, "simcuda", 7);
	uuid->bytes[15] = (char)dev;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

SIM_EXPORT CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev)
{
	SIM_NEED_INIT();
	if (!id || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(id, (size_t)len, "0000:%02x:00.0", dev + 1);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
	SIM_NEED_INIT();
	if (!can)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev) || !valid_dev(peer))
		return CUDA_ERROR_INVALID_DEVICE;
	*can = dev != peer;
	return CUDA_SUCCESS;
}

/* --- primary contexts --------------------------------------------------------- */

SIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	struct sim_device *d;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	d = &sim_dev[dev];
	sim_lock();
	if (d->primary_refs == 0)
		r = sim_charge(dev, sim_cfg.ctx_overhead);
	if (r == CUDA_SUCCESS) {
		d->primary_refs++;
		d->primary.alive = 1;
		d->primary.flags = d->primary_flags;
		*pctx = (CUcontext)&d->primary;
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct sim_device *d;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	d = &sim_dev[dev];
	sim_lock();
	if (d->primary_refs == 0) {
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else if (--d->primary_refs == 0) {
		d->primary.alive = 0;
		sim_uncharge(dev, sim_cfg.ctx_overhead);
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return cuDevicePrimaryCtxRelease_v2(dev);
}

SIM_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	SIM_NEED_INIT();
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	*flags = sim_dev[dev].primary_flags;
	*active = sim_dev[dev].primary_refs > 0;
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	SIM_NEED_INIT();
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	sim_dev[dev].primary_flags = flags;
	sim_dev[dev].primary.flags = flags;
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

/* Drops every reference at once; allocations survive (see the top comment). */
SIM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	struct sim_device *d;

	SIM_NEED_INIT();
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	d = &sim_dev[dev];
	sim_lock();
	if (d->primary_refs > 0) {
		d->primary_refs = 0;
		d->primary.alive = 0;
		sim_uncharge(dev, sim_cfg.ctx_overhead);
	}
	d->primary_flags = 0;
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	return cuDevicePrimaryCtxReset_v2(dev);
}

/* --- created contexts and the stack -------------------------------------------- */

static CUresult push(struct sim_ctx *c)
{
	if (depth == STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stack[depth++] = c;
	return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct sim_ctx *c;
	CUresult r;

	SIM_NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (depth == STACK_MAX || !(c = calloc(1, sizeof(*c))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	r = sim_charge(dev, sim_cfg.ctx_overhead);
	if (r == CUDA_SUCCESS) {
		c->dev = dev;
		c->alive = 1;
		c->flags = flags;
		sim_obj_add(&c->obj, SIM_CTX);
	}
	sim_unlock();
	if (r != CUDA_SUCCESS) {
		free(c);
		return r;
	}
	push(c);
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
	(void)params;
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n, unsigned int flags, CUdevice dev)
{
	(void)params; (void)n;
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct sim_ctx *c;

	SIM_NEED_INIT();
	sim_lock();
	c = sim_obj_get(ctx, SIM_CTX);
	if (!c || c->primary || !c->alive) {
		sim_unlock();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	c->alive = 0;
	sim_obj_del(&c->obj);
	sim_uncharge(c->dev, sim_cfg.ctx_overhead);
	sim_unlock();
	if (depth && stack[depth - 1] == c)
		depth--;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
	return cuCtxDestroy_v2(ctx);
}

static CUresult lookup_ctx(CUcontext ctx, struct sim_ctx **out)
{
	sim_lock();
	*out = sim_obj_get(ctx, SIM_CTX);
	sim_unlock();
	return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

SIM_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	struct sim_ctx *c;

	SIM_NEED_INIT();
	if (!ctx) {
		if (depth)
			depth--;
		return CUDA_SUCCESS;
	}
	if (lookup_ctx(ctx, &c) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth)
		stack[depth - 1] = c;
	else
		push(c);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	SIM_NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)sim_ctx_current();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	struct sim_ctx *c;

	SIM_NEED_INIT();
	if (lookup_ctx(ctx, &c) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	return push(c);
}

SIM_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
	return cuCtxPushCurrent_v2(ctx);
}

SIM_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	SIM_NEED_INIT();
	if (!depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	depth--;
	if (pctx)
		*pctx = (CUcontext)stack[depth];
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	return cuCtxPopCurrent_v2(pctx);
}

/* The context's device; ctx NULL means the current one. */
static CUresult ctx_device(CUcontext ctx, int *dev)
{
	struct sim_ctx *c;

	if (!ctx)
		return sim_current_device(dev);
	if (lookup_ctx(ctx, &c) != CUDA_SUCCESS || !c->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = c->dev;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
	SIM_NEED_INIT();
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_current_device(dev);
}

SIM_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
	SIM_NEED_INIT();
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	return ctx_device(ctx, dev);
}

static CUresult ctx_sync(CUcontext ctx, const char *fn)
{
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	r = ctx_device(ctx, &dev);
	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	sim_pool_release_device(dev, fn);
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSynchronize(void)
{
	return ctx_sync(NULL, "cuCtxSynchronize");
}

SIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	return ctx_sync(ctx, "cuCtxSynchronize_v2");
}

SIM_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
	struct sim_ctx *c = sim_ctx_current();

	SIM_NEED_INIT();
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c || !c->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	*flags = c->flags;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	int dev;

	SIM_NEED_INIT();
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx_device(ctx, &dev) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	*version = 13000;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	int dev;

	SIM_NEED_INIT();
	if (sim_current_device(&dev) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}

/* Limits are remembered, charge nothing (the real heaps are invisible too). */
static __thread size_t limits[CU_LIMIT_MAX];

SIM_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	int dev;

	SIM_NEED_INIT();
	if ((unsigned)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_current_device(&dev) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	limits[limit] = value;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetLimit(size_t *value, CUlimit limit)
{
	int dev;

	SIM_NEED_INIT();
	if (!value || (unsigned)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_current_device(&dev) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	*value = limits[limit];
	return CUDA_SUCCESS;
}
