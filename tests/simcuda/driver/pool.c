/*
 * pool.c - stream-ordered allocation: memory pools, cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync.
 *
 * Rules (exact, tests depend on them):
 *  - Each device has a default pool, also its initial current pool.
 *    Created pools (cuMemPoolCreate) must be located on a device; host and
 *    NUMA pools are CUDA_ERROR_NOT_SUPPORTED.
 *  - A pool reserves memory in chunks of max(SIMCUDA_POOL_CHUNK, request
 *    rounded up to 2 MiB), each charged to the pool's device when it is
 *    created (call log: kind=pool_grow, addr = pool handle, size = charged =
 *    the chunk). A chunk that cannot be charged fails the allocation with
 *    CUDA_ERROR_OUT_OF_MEMORY.
 *  - Blocks are rounded up to 512 B and placed first-fit, chunks tried in
 *    address order. used = sum of rounded live blocks; reserved = sum of
 *    chunks; the HIGH attributes are their maxima (writing 0 resets them to
 *    the current value).
 *  - cuMemFreeAsync, and cuMemFree on a pool pointer, give the block back to
 *    its pool at once: used drops, reserved does not.
 *  - A synchronize (cuStreamSynchronize, cuEventSynchronize,
 *    cuCtxSynchronize) releases completely unused chunks of every pool of
 *    that device, highest address first, as long as the pool keeps at least
 *    its release threshold (default 0) reserved; cuMemPoolTrimTo(pool, n)
 *    does the same with n. So with threshold 0 every empty chunk goes.
 *    (Call log: kind=pool_shrink, fn = the synchronizing call.)
 *  - cuMemPoolDestroy of a pool with live blocks returns success, as the
 *    real one does; its empty chunks go at once, every other chunk when its
 *    last block is freed. The default pool cannot be destroyed.
 *  - During stream capture cuMemAllocAsync stands for a graph allocation
 *    node: it returns an address from a range of its own
 *    (0x6c0000000000...) without charging or logging anything, and
 *    cuMemFreeAsync of such an address is a silent no-op.
 */
#include <stdlib.h>

#include "sim.h"

struct sim_chunk {
	struct sim_chunk *next;
	uint64_t addr, size, used;
	struct sim_arena blocks;
};

struct sim_pool {
	struct sim_obj obj;
	struct sim_pool *next; /* pools of the same device */
	int dev;
	int is_default, destroyed;
	struct sim_chunk *chunks; /* by address */
	uint64_t reserved, used, reserved_high, used_high, threshold;
	int reuse[3];
};

static struct sim_pool *pools[SIM_MAX_DEVICES];

#define CAPTURE_BASE 0x6c0000000000ull
static uint64_t capture_next = CAPTURE_BASE;

static struct sim_pool *pool_new(int dev)
{
	struct sim_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->dev = dev;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
	p->next = pools[dev];
	pools[dev] = p;
	sim_obj_add(&p->obj, SIM_POOL);
	return p;
}

int sim_pool_default_init(int dev)
{
	struct sim_pool *p = pool_new(dev);

	if (!p)
		return -1;
	p->is_default = 1;
	sim_dev[dev].default_pool = sim_dev[dev].current_pool = p;
	return 0;
}

static void pool_unlink(struct sim_pool *p)
{
	struct sim_pool **pp;

	for (pp = &pools[p->dev]; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	free(p);
}

static void chunk_release(struct sim_pool *p, struct sim_chunk *c, const char *fn)
{
	struct sim_chunk **cp;

	for (cp = &p->chunks; *cp != c; cp = &(*cp)->next)
		;
	*cp = c->next;
	sim_arena_destroy(&c->blocks);
	sim_space_put(p->dev, c->addr, c->size);
	sim_uncharge(p->dev, c->size);
	p->reserved -= c->size;
	sim_log("free", fn, "pool_shrink", p->dev, (uint64_t)(uintptr_t)p, c->size, c->size, CUDA_SUCCESS);
	free(c);
}

/* Releases empty chunks, highest address first, keeping at least keep reserved. */
static void trim(struct sim_pool *p, uint64_t keep, const char *fn)
{
	for (;;) {
		struct sim_chunk *c, *last = NULL;

		for (c = p->chunks; c; c = c->next)
			if (c->used == 0 && p->reserved - c->size >= keep)
				last = c;
		if (!last)
			return;
		chunk_release(p, last, fn);
	}
}

void sim_pool_release_device(int dev, const char *fn)
{
	for (struct sim_pool *p = pools[dev]; p; p = p->next)
		trim(p, p->threshold, fn);
}

static struct sim_chunk *chunk_new(struct sim_pool *p, uint64_t size, const char *fn)
{
	struct sim_chunk *c, **cp;
	uint64_t csize = sim_roundup(size, SIM_PAGE);

	if (csize < sim_cfg.pool_chunk)
		csize = sim_cfg.pool_chunk;
	if (csize < size || !(c = calloc(1, sizeof(*c))))
		return NULL;
	if (sim_charge(p->dev, csize) != CUDA_SUCCESS) {
		free(c);
		return NULL;
	}
	if (!(c->addr = sim_space_get(p->dev, csize)) ||
	    sim_arena_init(&c->blocks, c->addr, csize, SIM_SMALL_ALIGN) < 0) {
		if (c->addr)
			sim_space_put(p->dev, c->addr, csize);
		sim_uncharge(p->dev, csize);
		free(c);
		return NULL;
	}
	c->size = csize;
	for (cp = &p->chunks; *cp && (*cp)->addr < c->addr; cp = &(*cp)->next)
		;
	c->next = *cp;
	*cp = c;
	p->reserved += csize;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
	sim_log("alloc", fn, "pool_grow", p->dev, (uint64_t)(uintptr_t)p, csize, csize, CUDA_SUCCESS);
	return c;
}

/* One block from p, under the lock; logs it. */
static CUresult pool_alloc(struct sim_pool *p, uint64_t size, uint64_t *out, const char *fn)
{
	struct sim_alloc *a;
	struct sim_chunk *c;
	uint64_t rsize = sim_roundup(size, SIM_SMALL_ALIGN);

	if (rsize < size || !(a = calloc(1, sizeof(*a)))) {
		sim_log("alloc", fn, "async", p->dev, 0, size, 0, CUDA_ERROR_OUT_OF_MEMORY);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (c = p->chunks; c && !sim_arena_fits(&c->blocks, rsize); c = c->next)
		;
	if (!c && !(c = chunk_new(p, size, fn))) {
		free(a);
		sim_log("alloc", fn, "async", p->dev, 0, size, 0, CUDA_ERROR_OUT_OF_MEMORY);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->node.key = sim_arena_alloc(&c->blocks, rsize, 0);
	a->kind = SIM_K_ASYNC;
	a->dev = p->dev;
	a->size = size;
	a->rsize = rsize;
	a->pool = p;
	a->chunk = c;
	a->ctx = sim_ctx_current();
	sim_alloc_insert(a);
	c->used += rsize;
	p->used += rsize;
	if (p->used > p->used_high)
		p->used_high = p->used;
	*out = a->node.key;
	sim_log("alloc", fn, "async", p->dev, *out, size, 0, CUDA_SUCCESS);
	return CUDA_SUCCESS;
}

void sim_pool_free(struct sim_alloc *a, const char *fn)
{
	struct sim_pool *p = a->pool;
	struct sim_chunk *c = a->chunk;

	sim_alloc_remove(a);
	sim_arena_free(&c->blocks, a->node.key, a->rsize);
	c->used -= a->rsize;
	p->used -= a->rsize;
	sim_log("free", fn, "async", p->dev, a->node.key, a->size, 0, CUDA_SUCCESS);
	free(a);
	if (p->destroyed) {
		if (c->used == 0)
			chunk_release(p, c, fn);
		if (!p->chunks)
			pool_unlink(p);
	}
}

/* --- cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemFreeAsync ------------------------ */

static CUresult alloc_async(const char *fn, CUdeviceptr *dptr, size_t size, CUmemoryPool hpool,
			    int from_pool, CUstream s, int ptsz)
{
	struct sim_pool *p = NULL;
	int dev = -1, capturing = 0;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	if (r == CUDA_SUCCESS && (!dptr || size == 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && from_pool && !(p = sim_obj_get(hpool, SIM_POOL)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && capturing) {
		*dptr = capture_next;
		capture_next += sim_roundup(size, SIM_SMALL_ALIGN);
		sim_unlock();
		return CUDA_SUCCESS;
	}
	if (r != CUDA_SUCCESS) {
		sim_log("alloc", fn, "async", r == CUDA_ERROR_INVALID_VALUE ? dev : -1, 0, size, 0, r);
		sim_unlock();
		return r;
	}
	if (!p)
		p = sim_dev[dev].current_pool;
	r = pool_alloc(p, size, (uint64_t *)dptr, fn);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
	return alloc_async("cuMemAllocAsync", dptr, size, NULL, 0, s, 0);
}

SIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream s)
{
	return alloc_async("cuMemAllocAsync_ptsz", dptr, size, NULL, 0, s, 1);
}

SIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
	return alloc_async("cuMemAllocFromPoolAsync", dptr, size, pool, 1, s, 0);
}

SIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
	return alloc_async("cuMemAllocFromPoolAsync_ptsz", dptr, size, pool, 1, s, 1);
}

static CUresult free_async(const char *fn, CUdeviceptr dptr, CUstream s, int ptsz)
{
	struct sim_alloc *a;
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	if (r == CUDA_SUCCESS && (dptr == 0 || (dptr >= CAPTURE_BASE && dptr < capture_next))) {
		sim_unlock();
		return CUDA_SUCCESS;
	}
	a = r == CUDA_SUCCESS ? sim_alloc_find(dptr) : NULL;
	if (a && a->kind == SIM_K_ASYNC) {
		sim_pool_free(a, fn);
	} else {
		if (r == CUDA_SUCCESS)
			r = CUDA_ERROR_INVALID_VALUE;
		sim_log("free", fn, "async", -1, dptr, 0, 0, r);
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	return free_async("cuMemFreeAsync", dptr, s, 0);
}

SIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
	return free_async("cuMemFreeAsync_ptsz", dptr, s, 1);
}

/* --- pools ---------------------------------------------------------------------------- */

static int valid_dev(int dev)
{
	return dev >= 0 && dev < sim_cfg.devices;
}

SIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *out, const CUmemPoolProps *props)
{
	struct sim_pool *p = NULL;
	int dev = -1;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!out || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		r = CUDA_ERROR_NOT_SUPPORTED;
	else if (!valid_dev(dev = props->location.id))
		r = CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	if (r == CUDA_SUCCESS && !(p = pool_new(dev)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS)
		*out = (CUmemoryPool)p;
	sim_log("alloc", "cuMemPoolCreate", "pool", valid_dev(dev) ? dev : -1,
		(uint64_t)(uintptr_t)p, 0, 0, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct sim_pool *p;
	int dev;

	SIM_NEED_INIT();
	sim_lock();
	p = sim_obj_get(pool, SIM_POOL);
	if (!p || p->is_default) {
		sim_log("free", "cuMemPoolDestroy", "pool", p ? p->dev : -1, (uint64_t)(uintptr_t)pool,
			0, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	dev = p->dev;
	if (sim_dev[dev].current_pool == p)
		sim_dev[dev].current_pool = sim_dev[dev].default_pool;
	sim_obj_del(&p->obj);
	p->destroyed = 1;
	trim(p, 0, "cuMemPoolDestroy");
	sim_log("free", "cuMemPoolDestroy", "pool", dev, (uint64_t)(uintptr_t)pool, 0, 0, CUDA_SUCCESS);
	if (!p->chunks)
		pool_unlink(p);
	sim_unlock();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	struct sim_pool *p;

	SIM_NEED_INIT();
	sim_lock();
	if ((p = sim_obj_get(pool, SIM_POOL)))
		trim(p, keep, "cuMemPoolTrimTo");
	sim_unlock();
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	struct sim_pool *p;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!(p = sim_obj_get(pool, SIM_POOL))) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
			*(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
			break;
		case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = p->reserved; break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
		case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
		case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
		default: r = CUDA_ERROR_INVALID_VALUE;
		}
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	struct sim_pool *p;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!(p = sim_obj_get(pool, SIM_POOL))) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
			p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value;
			break;
		case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(cuuint64_t *)value; break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
			if (*(cuuint64_t *)value) r = CUDA_ERROR_INVALID_VALUE;
			else p->reserved_high = p->reserved;
			break;
		case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
			if (*(cuuint64_t *)value) r = CUDA_ERROR_INVALID_VALUE;
			else p->used_high = p->used;
			break;
		default: r = CUDA_ERROR_INVALID_VALUE;
		}
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (count && !map)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim_obj_get(pool, SIM_POOL))
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *location)
{
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!flags || !location)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim_obj_get(pool, SIM_POOL))
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	*flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	return r;
}

/* --- default and current pools ------------------------------------------------------------ */

/* which: 0 default, 1 current. */
static CUresult get_pool(CUmemoryPool *out, int dev, int which)
{
	SIM_NEED_INIT();
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	*out = (CUmemoryPool)(which ? sim_dev[dev].current_pool : sim_dev[dev].default_pool);
	sim_unlock();
	return CUDA_SUCCESS;
}

static CUresult set_pool(int dev, CUmemoryPool pool)
{
	struct sim_pool *p;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!valid_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	p = sim_obj_get(pool, SIM_POOL);
	if (!p || p->dev != dev)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		sim_dev[dev].current_pool = p;
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice dev) { return get_pool(out, dev, 0); }
SIM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *out, CUdevice dev) { return get_pool(out, dev, 1); }
SIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) { return set_pool(dev, pool); }

/* CUDA 13's location-based forms: only device locations are simulated. */
static CUresult location_dev(const CUmemLocation *loc, CUmemAllocationType type, int *dev)
{
	if (!loc || type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	*dev = loc->id;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *out, CUmemLocation *loc, CUmemAllocationType type)
{
	int dev;
	CUresult r = location_dev(loc, type, &dev);

	return r == CUDA_SUCCESS ? get_pool(out, dev, 0) : r;
}

SIM_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *out, CUmemLocation *loc, CUmemAllocationType type)
{
	int dev;
	CUresult r = location_dev(loc, type, &dev);

	return r == CUDA_SUCCESS ? get_pool(out, dev, 1) : r;
}

SIM_EXPORT CUresult cuMemSetMemPool(CUmemLocation *loc, CUmemAllocationType type, CUmemoryPool pool)
{
	int dev;
	CUresult r = location_dev(loc, type, &dev);

	return r == CUDA_SUCCESS ? set_pool(dev, pool) : r;
}
