/*
 * memory.c - device memory (cuMemAlloc, pitch, managed), the registry of
 * every allocation that has an address, and pointer queries.
 *
 * The memory model, which tests of the tracer rely on exactly:
 *
 *  - Device d owns the address range [0x500000000000 + d TiB, +1 TiB); the
 *    32-bit v1 entry points (cuMemAlloc, cuMemAllocPitch) allocate from the
 *    window [0x80000000 + d * 128 MiB, +128 MiB) so their addresses fit a
 *    CUdeviceptr_v1. Addresses are handed out first-fit (lowest address that
 *    fits), so a freed address is reused, as on real GPUs. Device memory is
 *    never backed by host memory.
 *  - Charging: a request of at most 1 MiB is rounded up to 512 B and packed
 *    first-fit into a 2 MiB small page (pages tried in address order); a
 *    page is charged (2 MiB) when it is created and given back when its last
 *    block is freed. A larger request is rounded up to a multiple of 2 MiB
 *    and charged that. Pitch allocations (pitch = width rounded up to 512,
 *    bytes = pitch * height) and arrays (array.c) follow the same rules.
 *  - A request that does not fit (charged + new charge > SIMCUDA_MEM, where
 *    charged includes context overheads, pool chunks and VMM physical
 *    memory) fails with CUDA_ERROR_OUT_OF_MEMORY and changes nothing;
 *    size 0 is CUDA_ERROR_INVALID_VALUE.
 *  - cuMemGetInfo: total = SIMCUDA_MEM, free = total - charged, for the
 *    current context's device.
 *  - cuMemFree(0) succeeds; an unknown or already-freed pointer is
 *    CUDA_ERROR_INVALID_VALUE; a stream-ordered pointer goes back to its
 *    pool (as cuMemFreeAsync, see pool.c); managed memory is unmapped.
 *  - Managed memory (cuMemAllocManaged) is real host memory (mmap), never
 *    charged to a device, recorded with the current device.
 *
 * Call log (SIMCUDA_LOG), one line per memory-changing operation:
 *   <op> fn=<function> kind=<kind> dev=<d|-1> addr=0x<hex> size=<n>
 *   charged=<n> result=<CUresult> pid=<pid>
 * op is alloc or free; fn the exported variant that was called (e.g.
 * cuMemAlloc_v2, cuMemAllocAsync_ptsz); size the requested size (pitch *
 * height for pitch, for frees the allocation's requested size); charged the
 * bytes this operation charged to the device (alloc) or gave back to it
 * (free), 0 if none. A failed alloc has addr=0x0, charged=0 and result != 0.
 * Kinds: device managed host host_register async vmm_phys vmm_retain
 * vmm_reserve vmm_map array foreign pool pool_grow pool_shrink (see the file
 * that implements each). Context overheads are not logged.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim.h"

/* Every allocation with an address, whatever its kind; never overlapping. */
static struct sim_tree allocs;

struct sim_page {
	struct sim_page *next;
	uint64_t addr;
	struct sim_arena blocks; /* 512 B granules */
};

struct sim_alloc *sim_alloc_find(uint64_t addr)
{
	return (struct sim_alloc *)sim_tree_find(&allocs, addr);
}

struct sim_alloc *sim_alloc_containing(uint64_t addr)
{
	struct sim_node *n = sim_tree_floor(&allocs, addr);

	return n && addr - n->key < n->len ? (struct sim_alloc *)n : NULL;
}

int sim_alloc_overlaps(uint64_t addr, uint64_t size)
{
	struct sim_node *n = sim_tree_floor(&allocs, addr + size - 1);

	return n && n->key + n->len > addr;
}

void sim_alloc_insert(struct sim_alloc *a)
{
	a->node.len = a->rsize ? a->rsize : 1;
	sim_tree_insert(&allocs, &a->node);
}

void sim_alloc_remove(struct sim_alloc *a)
{
	sim_tree_remove(&allocs, &a->node);
}

/* --- placement and charging -------------------------------------------------- */

uint64_t sim_space_get(int dev, uint64_t size)
{
	return sim_arena_alloc(&sim_dev[dev].space[0].arena, size, 0);
}

void sim_space_put(int dev, uint64_t addr, uint64_t size)
{
	sim_arena_free(&sim_dev[dev].space[0].arena, addr, size);
}

static struct sim_page *page_new(int dev, struct sim_space *s)
{
	struct sim_page *p, **pp;
	uint64_t addr = sim_arena_alloc(&s->arena, SIM_PAGE, 0);

	if (!addr)
		return NULL;
	if (!(p = malloc(sizeof(*p))) || sim_charge(dev, SIM_PAGE) != CUDA_SUCCESS) {
		free(p);
		sim_arena_free(&s->arena, addr, SIM_PAGE);
		return NULL;
	}
	p->addr = addr;
	if (sim_arena_init(&p->blocks, addr, SIM_PAGE, SIM_SMALL_ALIGN) < 0) {
		sim_uncharge(dev, SIM_PAGE);
		sim_arena_free(&s->arena, addr, SIM_PAGE);
		free(p);
		return NULL;
	}
	for (pp = &s->pages; *pp && (*pp)->addr < addr; pp = &(*pp)->next)
		;
	p->next = *pp;
	*pp = p;
	return p;
}

CUresult sim_devmem_get(int dev, int low, uint64_t size, uint64_t *addr,
			uint64_t *rsize, struct sim_page **page, uint64_t *charged)
{
	struct sim_space *s = &sim_dev[dev].space[low];
	struct sim_page *p;

	if (size <= SIM_SMALL_MAX) {
		*rsize = sim_roundup(size, SIM_SMALL_ALIGN);
		*charged = 0;
		for (p = s->pages; p && !sim_arena_fits(&p->blocks, *rsize); p = p->next)
			;
		if (!p) {
			if (!(p = page_new(dev, s)))
				return CUDA_ERROR_OUT_OF_MEMORY;
			*charged = SIM_PAGE;
		}
		*addr = sim_arena_alloc(&p->blocks, *rsize, 0);
		*page = p;
		return *addr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	*rsize = sim_roundup(size, SIM_PAGE);
	*page = NULL;
	if (*rsize < size || sim_charge(dev, *rsize) != CUDA_SUCCESS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!(*addr = sim_arena_alloc(&s->arena, *rsize, 0))) {
		sim_uncharge(dev, *rsize);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*charged = *rsize;
	return CUDA_SUCCESS;
}

/* Gives the bytes back; returns what was uncharged. */
uint64_t sim_devmem_put(int dev, int low, uint64_t addr, uint64_t rsize, struct sim_page *page)
{
	struct sim_space *s = &sim_dev[dev].space[low];
	struct sim_page **pp;

	if (!page) {
		sim_arena_free(&s->arena, addr, rsize);
		sim_uncharge(dev, rsize);
		return rsize;
	}
	sim_arena_free(&page->blocks, addr, rsize);
	if (!sim_arena_empty(&page->blocks))
		return 0;
	for (pp = &s->pages; *pp != page; pp = &(*pp)->next)
		;
	*pp = page->next;
	sim_arena_destroy(&page->blocks);
	sim_arena_free(&s->arena, page->addr, SIM_PAGE);
	sim_uncharge(dev, SIM_PAGE);
	free(page);
	return SIM_PAGE;
}

/* --- cuMemAlloc, pitch, managed ------------------------------------------------ */

static CUresult mem_alloc(const char *fn, int low, uint64_t *out, uint64_t size)
{
	struct sim_alloc *a = NULL;
	uint64_t addr = 0, charged = 0;
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
		r = sim_devmem_get(dev, low, size, &addr, &a->rsize, &a->page, &charged);
	if (r == CUDA_SUCCESS) {
		a->node.key = addr;
		a->kind = SIM_K_DEVICE;
		a->dev = dev;
		a->size = size;
		a->low = low;
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
		*out = addr;
	} else {
		free(a);
		addr = 0;
	}
	sim_log("alloc", fn, "device", dev, addr, size, charged, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	return mem_alloc("cuMemAlloc_v2", 0, (uint64_t *)dptr, size);
}

SIM_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int size)
{
	uint64_t addr = 0;
	CUresult r = mem_alloc("cuMemAlloc", 1, dptr ? &addr : NULL, size);

	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr_v1)addr;
	return r;
}

static CUresult mem_alloc_pitch(const char *fn, int low, uint64_t *out, uint64_t *pitch,
				uint64_t width, uint64_t height, unsigned elem)
{
	uint64_t p = sim_roundup(width, 512);

	if ((elem != 4 && elem != 8 && elem != 16) || !pitch || width == 0 || height == 0 ||
	    p * height / height != p)
		return mem_alloc(fn, low, out, 0);
	*pitch = p;
	return mem_alloc(fn, low, out, p * height);
}

SIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
				       size_t height, unsigned int elem)
{
	uint64_t p = 0;
	CUresult r = mem_alloc_pitch("cuMemAllocPitch_v2", 0, (uint64_t *)dptr,
				     pitch ? &p : NULL, width, height, elem);

	if (r == CUDA_SUCCESS)
		*pitch = p;
	return r;
}

SIM_EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch, unsigned int width,
				    unsigned int height, unsigned int elem)
{
	uint64_t addr = 0, p = 0;
	CUresult r = mem_alloc_pitch("cuMemAllocPitch", 1, dptr ? &addr : NULL,
				     pitch ? &p : NULL, width, height, elem);

	if (r == CUDA_SUCCESS) {
		*dptr = (CUdeviceptr_v1)addr;
		*pitch = (unsigned int)p;
	}
	return r;
}

SIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
	struct sim_alloc *a = NULL;
	void *p = MAP_FAILED;
	int dev = -1;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS)
		dev = -1;
	else if (!dptr || size == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(a = calloc(1, sizeof(*a))) ||
		 (p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		a->node.key = (uint64_t)(uintptr_t)p;
		a->kind = SIM_K_MANAGED;
		a->dev = dev;
		a->size = a->rsize = size;
		a->flags = flags;
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
		*dptr = (CUdeviceptr)(uintptr_t)p;
	} else {
		free(a);
		p = NULL;
	}
	sim_log("alloc", "cuMemAllocManaged", "managed", dev, (uint64_t)(uintptr_t)p, size, 0, r);
	sim_unlock();
	return r;
}

/* --- cuMemFree ------------------------------------------------------------------ */

static CUresult mem_free(const char *fn, uint64_t addr)
{
	struct sim_alloc *a;
	int dev;
	uint64_t uncharged = 0;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS) {
		sim_log("free", fn, "device", -1, addr, 0, 0, r);
		sim_unlock();
		return r;
	}
	if (addr == 0) {
		sim_unlock();
		return CUDA_SUCCESS;
	}
	a = sim_alloc_find(addr);
	if (a && a->kind == SIM_K_ASYNC) {
		sim_pool_free(a, fn);
		sim_unlock();
		return r;
	}
	if (!a || (a->kind != SIM_K_DEVICE && a->kind != SIM_K_MANAGED)) {
		sim_log("free", fn, "device", -1, addr, 0, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	sim_alloc_remove(a);
	if (a->kind == SIM_K_MANAGED)
		munmap((void *)(uintptr_t)addr, a->size);
	else
		uncharged = sim_devmem_put(a->dev, a->low, addr, a->rsize, a->page);
	sim_log("free", fn, a->kind == SIM_K_MANAGED ? "managed" : "device", a->dev, addr,
		a->size, uncharged, CUDA_SUCCESS);
	sim_unlock();
	free(a);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return mem_free("cuMemFree_v2", dptr);
}

SIM_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	return mem_free("cuMemFree", dptr);
}

/* --- queries -------------------------------------------------------------------- */

static CUresult mem_info(uint64_t *freep, uint64_t *total)
{
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_current_device(&dev);
	if (r == CUDA_SUCCESS) {
		*freep = sim_cfg.mem - sim_dev[dev].charged;
		*total = sim_cfg.mem;
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemGetInfo_v2(size_t *freep, size_t *total)
{
	uint64_t f, t;
	CUresult r = mem_info(&f, &t);

	if (r == CUDA_SUCCESS) {
		if (freep) *freep = f;
		if (total) *total = t;
	}
	return r;
}

/* The 32-bit form clamps to 4 GiB - 1. */
SIM_EXPORT CUresult cuMemGetInfo(unsigned int *freep, unsigned int *total)
{
	uint64_t f, t;
	CUresult r = mem_info(&f, &t);

	if (r == CUDA_SUCCESS) {
		if (freep) *freep = f > 0xffffffffu ? 0xffffffffu : (unsigned int)f;
		if (total) *total = t > 0xffffffffu ? 0xffffffffu : (unsigned int)t;
	}
	return r;
}

static CUresult address_range(uint64_t *base, uint64_t *size, uint64_t ptr)
{
	struct sim_alloc *a;

	SIM_NEED_INIT();
	sim_lock();
	a = sim_alloc_containing(ptr);
	if (a) {
		*base = a->node.key;
		*size = a->size;
	}
	sim_unlock();
	return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

SIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	uint64_t b, s;
	CUresult r = address_range(&b, &s, dptr);

	if (r == CUDA_SUCCESS) {
		if (pbase) *pbase = b;
		if (psize) *psize = s;
	}
	return r;
}

SIM_EXPORT CUresult cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr)
{
	uint64_t b, s;
	CUresult r = address_range(&b, &s, dptr);

	if (r == CUDA_SUCCESS) {
		if (pbase) *pbase = (CUdeviceptr_v1)b;
		if (psize) *psize = (unsigned int)s;
	}
	return r;
}

static int is_host(const struct sim_alloc *a)
{
	return a->kind == SIM_K_HOST || a->kind == SIM_K_HOST_REGISTER;
}

/*
 * One attribute of a known allocation into data; CUDA_ERROR_INVALID_VALUE
 * for attributes this simulator does not know or that do not apply.
 */
static CUresult attribute(const struct sim_alloc *a, CUpointer_attribute attr, void *data, uint64_t ptr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = (CUcontext)a->ctx;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = is_host(a) ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!is_host(a) && a->kind != SIM_K_MANAGED)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)ptr;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = a->node.key;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(bool *)data = a->kind == SIM_K_MANAGED;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(bool *)data = true;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = a->dev >= 0 ? a->dev : (a->ctx ? a->ctx->dev : 0);
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = a->node.key;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = a->size;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(CUmemoryPool *)data = (CUmemoryPool)a->pool;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	struct sim_alloc *a;
	CUresult r;

	SIM_NEED_INIT();
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = sim_alloc_containing(ptr);
	r = a ? attribute(a, attr, data, ptr) : CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/* Size of each attribute's value, to clear it for unknown pointers. */
static size_t attribute_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT: return sizeof(CUcontext);
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return sizeof(unsigned int);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_HOST_POINTER: return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID: return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_IS_MANAGED: return sizeof(bool);
	case CU_POINTER_ATTRIBUTE_MAPPED: return sizeof(bool);
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return sizeof(int);
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return sizeof(size_t);
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return sizeof(CUmemoryPool);
	default: return 0;
	}
}

/* Like the real one: an unknown pointer is not an error, its values are 0 (-2 ordinal). */
SIM_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
	struct sim_alloc *a;

	SIM_NEED_INIT();
	if (!attrs || !data)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = sim_alloc_containing(ptr);
	for (unsigned int i = 0; i < n; i++) {
		if (!data[i])
			continue;
		if (!a || attribute(a, attrs[i], data[i], ptr) != CUDA_SUCCESS) {
			memset(data[i], 0, attribute_size(attrs[i]));
			if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
				*(int *)data[i] = -2;
		}
	}
	sim_unlock();
	return CUDA_SUCCESS;
}
