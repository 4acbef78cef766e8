/*
 * host.c - page-locked host memory: cuMemAllocHost, cuMemHostAlloc,
 * cuMemFreeHost, cuMemHostRegister / cuMemHostUnregister and their
 * queries.
 *
 * Pinned allocations are real host memory (mmap), so programs can touch
 * them; they charge no device (dev=-1 in the call log, kind=host).
 * Registering pins existing memory: no new bytes (kind=host_register); a
 * range overlapping anything already known is
 * CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, unregistering an unknown
 * pointer CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED. Both need a current
 * context, as in the real driver. The device pointer of host memory is the
 * host pointer (unified addressing).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "sim.h"

static CUresult host_alloc(const char *fn, void **pp, size_t size, unsigned flags)
{
	struct sim_alloc *a = NULL;
	void *p = MAP_FAILED;
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_current_device(&dev);
	if (r == CUDA_SUCCESS && (!pp || size == 0 ||
	    (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && (!(a = calloc(1, sizeof(*a))) ||
	    (p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		a->node.key = (uint64_t)(uintptr_t)p;
		a->kind = SIM_K_HOST;
		a->dev = -1;
		a->size = a->rsize = size;
		a->flags = flags;
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
		*pp = p;
	} else {
		free(a);
		p = NULL;
	}
	sim_log("alloc", fn, "host", -1, (uint64_t)(uintptr_t)p, size, 0, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
	return host_alloc("cuMemAllocHost_v2", pp, size, 0);
}

SIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int size)
{
	return host_alloc("cuMemAllocHost", pp, size, 0);
}

SIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
	return host_alloc("cuMemHostAlloc", pp, size, flags);
}

SIM_EXPORT CUresult cuMemFreeHost(void *p)
{
	struct sim_alloc *a;
	uint64_t addr = (uint64_t)(uintptr_t)p;

	SIM_NEED_INIT();
	sim_lock();
	a = sim_alloc_find(addr);
	if (!a || a->kind != SIM_K_HOST) {
		sim_log("free", "cuMemFreeHost", "host", -1, addr, 0, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	sim_alloc_remove(a);
	munmap(p, a->size);
	sim_log("free", "cuMemFreeHost", "host", -1, addr, a->size, 0, CUDA_SUCCESS);
	sim_unlock();
	free(a);
	return CUDA_SUCCESS;
}

static CUresult host_register(const char *fn, void *p, size_t size, unsigned flags)
{
	struct sim_alloc *a = NULL;
	uint64_t addr = (uint64_t)(uintptr_t)p;
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_current_device(&dev);
	if (r == CUDA_SUCCESS && (!p || size == 0 || addr + size < addr ||
	    (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
				 CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY))))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && sim_alloc_overlaps(addr, size))
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	if (r == CUDA_SUCCESS && !(a = calloc(1, sizeof(*a))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		a->node.key = addr;
		a->kind = SIM_K_HOST_REGISTER;
		a->dev = -1;
		a->size = a->rsize = size;
		a->flags = flags;
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
	}
	sim_log("alloc", fn, "host_register", -1, r == CUDA_SUCCESS ? addr : 0, size, 0, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
	return host_register("cuMemHostRegister_v2", p, size, flags);
}

SIM_EXPORT CUresult cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
	return host_register("cuMemHostRegister", p, size, flags);
}

SIM_EXPORT CUresult cuMemHostUnregister(void *p)
{
	struct sim_alloc *a;
	uint64_t addr = (uint64_t)(uintptr_t)p;

	SIM_NEED_INIT();
	sim_lock();
	a = sim_alloc_find(addr);
	if (!a || a->kind != SIM_K_HOST_REGISTER) {
		sim_log("free", "cuMemHostUnregister", "host_register", -1, addr, 0, 0,
			CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
		sim_unlock();
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	}
	sim_alloc_remove(a);
	sim_log("free", "cuMemHostUnregister", "host_register", -1, addr, a->size, 0, CUDA_SUCCESS);
	sim_unlock();
	free(a);
	return CUDA_SUCCESS;
}

/* Host, registered and managed memory share their host address with the device. */
static CUresult host_lookup(void *p, struct sim_alloc *out)
{
	struct sim_alloc *a;

	SIM_NEED_INIT();
	sim_lock();
	a = sim_alloc_containing((uint64_t)(uintptr_t)p);
	if (a && a->kind != SIM_K_HOST && a->kind != SIM_K_HOST_REGISTER && a->kind != SIM_K_MANAGED)
		a = NULL;
	if (a)
		*out = *a;
	sim_unlock();
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags)
{
	struct sim_alloc a;
	CUresult r;

	if (!pdptr || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = host_lookup(p, &a)) == CUDA_SUCCESS)
		*pdptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

/* The 32-bit form works only where the host address fits. */
SIM_EXPORT CUresult cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int flags)
{
	struct sim_alloc a;
	CUresult r;

	if (!pdptr || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = host_lookup(p, &a)) != CUDA_SUCCESS)
		return r;
	if ((uintptr_t)p > 0xffffffffu)
		return CUDA_ERROR_NOT_SUPPORTED;
	*pdptr = (CUdeviceptr_v1)(uintptr_t)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
	struct sim_alloc a;
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = host_lookup(p, &a)) == CUDA_SUCCESS)
		*flags = a.flags;
	return r;
}
