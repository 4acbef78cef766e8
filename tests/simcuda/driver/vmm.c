/*
 * vmm.c - the virtual memory management API: physical allocations
 * (cuMemCreate / cuMemRelease / cuMemRetainAllocationHandle), address
 * reservations (cuMemAddressReserve / cuMemAddressFree) and mappings
 * (cuMemMap / cuMemUnmap).
 *
 * Rules:
 *  - Granularity is 2 MiB (minimum and recommended); cuMemCreate sizes,
 *    reservation sizes, map sizes and offsets must be multiples of it.
 *  - cuMemCreate charges its size to prop->location.id for a device
 *    location; host and host-NUMA locations charge no device (dev=-1).
 *  - A handle holds one reference from cuMemCreate plus one per
 *    cuMemRetainAllocationHandle; each cuMemRelease drops one. Physical
 *    memory is given back (uncharged, logged kind=vmm_phys) only when no
 *    reference and no mapping is left, by whichever of cuMemRelease and
 *    cuMemUnmap comes last. A release that leaves the memory alive logs
 *    kind=vmm_retain (a reference dropped), as a retain does on alloc.
 *  - Reservations come from [0x600000000000, +8 TiB), shared by all
 *    devices; the addr hint is ignored. A mapping must lie inside one
 *    reservation, inside the handle (offset + size), and not overlap
 *    another. cuMemUnmap must cover whole mappings. cuMemAddressFree must
 *    name a whole reservation with nothing mapped in it.
 *  - Call log: vmm_phys (addr = handle), vmm_retain (addr = handle),
 *    vmm_reserve and vmm_map (addr = virtual address); only vmm_phys
 *    carries charged bytes.
 */
#include <stdlib.h>

#include "sim.h"

struct sim_vmm {
	struct sim_obj obj;
	int dev; /* -1: host memory */
	uint64_t size;
	int refs, maps;
	CUmemAllocationProp prop;
};

struct resv {
	struct sim_node node; /* key = address, len = size */
	int mapped;           /* mappings inside */
};

#define VA_BASE 0x600000000000ull
#define VA_SIZE 0x80000000000ull

static struct sim_arena va;
static struct sim_tree resvs;

void sim_vmm_init(void)
{
	sim_arena_init(&va, VA_BASE, VA_SIZE, SIM_PAGE);
}

static uint64_t handle_of(const struct sim_vmm *m)
{
	return (uint64_t)(uintptr_t)m;
}

static struct sim_vmm *vmm_get(CUmemGenericAllocationHandle h)
{
	return sim_obj_get((const void *)(uintptr_t)h, SIM_VMM);
}

static struct resv *resv_containing(uint64_t addr, uint64_t size)
{
	struct resv *r = (struct resv *)sim_tree_floor(&resvs, addr);

	if (r && addr - r->node.key < r->node.len && size <= r->node.len - (addr - r->node.key))
		return r;
	return NULL;
}

/* Gives the physical memory back once nothing holds it; under the lock. */
static void vmm_maybe_free(struct sim_vmm *m, const char *fn)
{
	if (m->refs || m->maps)
		return;
	if (m->dev >= 0)
		sim_uncharge(m->dev, m->size);
	sim_log("free", fn, "vmm_phys", m->dev, handle_of(m), m->size, m->dev >= 0 ? m->size : 0, CUDA_SUCCESS);
	sim_obj_del(&m->obj);
	free(m);
}

SIM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
						  CUmemAllocationGranularity_flags option)
{
	(void)option;
	SIM_NEED_INIT();
	if (!gran || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*gran = SIM_PAGE;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct sim_vmm *m = NULL;
	int dev = -1;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!handle || !prop || size == 0 || size % SIM_PAGE || flags ||
	    prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		dev = prop->location.id;
	else if (prop->location.type != CU_MEM_LOCATION_TYPE_HOST &&
		 prop->location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA &&
		 prop->location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	    (dev < 0 || dev >= sim_cfg.devices)) {
		r = CUDA_ERROR_INVALID_DEVICE;
		dev = -1;
	}
	if (r == CUDA_SUCCESS && !(m = calloc(1, sizeof(*m))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if (r == CUDA_SUCCESS && dev >= 0)
		r = sim_charge(dev, size);
	if (r == CUDA_SUCCESS) {
		m->dev = dev;
		m->size = size;
		m->refs = 1;
		m->prop = *prop;
		sim_obj_add(&m->obj, SIM_VMM);
		*handle = handle_of(m);
	}
	sim_log("alloc", "cuMemCreate", "vmm_phys", dev, r == CUDA_SUCCESS ? handle_of(m) : 0, size,
		r == CUDA_SUCCESS && dev >= 0 ? size : 0, r);
	sim_unlock();
	if (r != CUDA_SUCCESS)
		free(m);
	return r;
}

SIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct sim_vmm *m;

	SIM_NEED_INIT();
	sim_lock();
	m = vmm_get(handle);
	if (!m || m->refs == 0) {
		sim_log("free", "cuMemRelease", "vmm_phys", -1, handle, 0, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (--m->refs || m->maps)
		sim_log("free", "cuMemRelease", "vmm_retain", m->dev, handle, m->size, 0, CUDA_SUCCESS);
	else
		vmm_maybe_free(m, "cuMemRelease");
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct sim_alloc *a;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = sim_alloc_containing((uint64_t)(uintptr_t)addr);
	if (!a || a->kind != SIM_K_VMM_MAP) {
		r = CUDA_ERROR_INVALID_VALUE;
		sim_log("alloc", "cuMemRetainAllocationHandle", "vmm_retain", -1, 0, 0, 0, r);
	} else {
		a->vmm->refs++;
		*handle = handle_of(a->vmm);
		sim_log("alloc", "cuMemRetainAllocationHandle", "vmm_retain", a->vmm->dev,
			handle_of(a->vmm), a->vmm->size, 0, r);
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							   CUmemGenericAllocationHandle handle)
{
	struct sim_vmm *m;

	SIM_NEED_INIT();
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((m = vmm_get(handle)))
		*prop = m->prop;
	sim_unlock();
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* --- reservations ----------------------------------------------------------------------- */

SIM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
					CUdeviceptr addr, unsigned long long flags)
{
	struct resv *rv = NULL;
	uint64_t base = 0;
	CUresult r = CUDA_SUCCESS;

	(void)addr;
	SIM_NEED_INIT();
	if (!ptr || size == 0 || size % SIM_PAGE || flags || (alignment & (alignment - 1)))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(rv = calloc(1, sizeof(*rv))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if (r == CUDA_SUCCESS && !(base = sim_arena_alloc(&va, size, alignment)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		rv->node.key = base;
		rv->node.len = size;
		sim_tree_insert(&resvs, &rv->node);
		*ptr = base;
	}
	sim_log("alloc", "cuMemAddressReserve", "vmm_reserve", -1, base, size, 0, r);
	sim_unlock();
	if (r != CUDA_SUCCESS)
		free(rv);
	return r;
}

SIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct resv *rv;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	sim_lock();
	rv = (struct resv *)sim_tree_find(&resvs, ptr);
	if (!rv || rv->node.len != size || rv->mapped)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		sim_tree_remove(&resvs, &rv->node);
		sim_arena_free(&va, ptr, size);
	}
	sim_log("free", "cuMemAddressFree", "vmm_reserve", -1, ptr, size, 0, r);
	sim_unlock();
	if (r == CUDA_SUCCESS)
		free(rv);
	return r;
}

/* --- mappings ------------------------------------------------------------------------------ */

SIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			     CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct sim_vmm *m;
	struct sim_alloc *a = NULL;
	struct resv *rv = NULL;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	sim_lock();
	m = vmm_get(handle);
	if (!m || m->refs == 0 || flags || size == 0 || size % SIM_PAGE || offset % SIM_PAGE ||
	    offset > m->size || size > m->size - offset || !(rv = resv_containing(ptr, size)) ||
	    sim_alloc_overlaps(ptr, size))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(a = calloc(1, sizeof(*a))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		a->node.key = ptr;
		a->kind = SIM_K_VMM_MAP;
		a->dev = m->dev;
		a->size = a->rsize = size;
		a->vmm = m;
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
		m->maps++;
		rv->mapped++;
	}
	sim_log("alloc", "cuMemMap", "vmm_map", m ? m->dev : -1, ptr, size, 0, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct sim_alloc *a;
	uint64_t at, end = ptr + size;

	SIM_NEED_INIT();
	sim_lock();
	for (at = ptr; at < end; at += a->size) {
		a = sim_alloc_find(at);
		if (!a || a->kind != SIM_K_VMM_MAP || a->size > end - at || size == 0)
			break;
	}
	if (at != end || size == 0) {
		sim_log("free", "cuMemUnmap", "vmm_map", -1, ptr, size, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (at = ptr; at < end;) {
		struct sim_vmm *m;
		uint64_t len;

		a = sim_alloc_find(at);
		m = a->vmm;
		len = a->size;
		sim_alloc_remove(a);
		resv_containing(at, len)->mapped--;
		m->maps--;
		sim_log("free", "cuMemUnmap", "vmm_map", m->dev, at, len, 0, CUDA_SUCCESS);
		vmm_maybe_free(m, "cuMemUnmap");
		free(a);
		at += len;
	}
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!desc || count == 0 || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
		    (desc[i].location.id < 0 || desc[i].location.id >= sim_cfg.devices))
			return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	if (!resv_containing(ptr, size))
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
	struct sim_alloc *a;

	SIM_NEED_INIT();
	if (!flags || !location)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = sim_alloc_containing(ptr);
	sim_unlock();
	if (!a || a->kind != SIM_K_VMM_MAP)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	return CUDA_SUCCESS;
}
