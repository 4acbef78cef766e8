/*
 * fragmentation.c - a caching allocator like PyTorch's runs out of memory
 * although enough memory is free in total, because the free memory is in
 * pieces; emptying the cache and retrying then succeeds.
 *
 * The cache below follows PyTorch's rules (CUDACachingAllocator.cpp):
 * requests are rounded up to 512 B; up to 1 MiB they come from 2 MiB
 * segments, from 1 to 10 MiB from 20 MiB segments, larger ones get a
 * segment of their own rounded up to 2 MiB. A request takes the smallest
 * free block that fits (lowest address on a tie) and splits it when more
 * than 1 MiB is left (512 B for small blocks); freed blocks merge with free
 * neighbours of the same segment. cudaFree is called only to empty the
 * cache (torch.cuda.empty_cache()) and when cudaMalloc fails: then every
 * wholly free segment is given back and cudaMalloc is tried once more.
 *
 * The cache announces itself with NVTX's memory extension (nvToolsExtMem.h,
 * header-only: without a tool attached each call returns at once): each
 * segment is a heap of domain "frag", each allocated block a region, so
 * memtrace sees the blocks inside the segments and the holes between them.
 *
 * The sample wants 100 MiB of device memory for its cache. On the
 * simulated GPU run it with SIMCUDA_MEM=400M (300 MiB context + 100 MiB).
 * When more than 104 MiB is free (a real GPU), one "ballast" cudaMalloc
 * first takes all but 104 MiB (rounded to 2 MiB), so the OOM happens there
 * too; the figures below then differ by that ballast and the 4 MiB spare.
 *
 * Expected, with SIMCUDA_MEM=400M (see samples/README.md):
 *   forward: 25 activations of 4 MiB fill five 20 MiB segments:
 *     cudaMalloc(20 MiB) x 5, reserved 100 MiB (the peak), device full
 *   backward frees 13 of them: all 5 of the last segment and 2 in each of
 *     the others: allocated 48 MiB, cached 52 MiB (20 + 8 x 4 MiB)
 *   a 30 MiB request: no cached block fits; cudaMalloc(30 MiB) fails
 *     (0 B free); the whole free segment is given back (cudaFree 20 MiB);
 *     cudaMalloc(30 MiB) fails again (20 MiB free): out of memory, with
 *     20 MiB free on the device + 32 MiB free in the cache = 52 MiB
 *   the step is dropped: its 12 tensors freed, the cache emptied
 *     (cudaFree(20 MiB) x 4), cudaMalloc(30 MiB) succeeds
 *   totals: 8 cudaMalloc (2 failed), 6 cudaFree, nothing live at exit;
 *     device memory in use at the peak 400 MiB, 300 MiB of it untraced
 *   the pool 'frag' as NVTX announced it: at the first failure 5 heaps,
 *     100 MiB: 48 MiB in 12 regions, 52 MiB free in 9 holes, largest 20 MiB;
 *     at the second 4 heaps, 80 MiB: 48 MiB in 12 regions, 32 MiB free in
 *     8 holes, largest 4 MiB; 6 heaps and 26 regions registered in all
 */
#include "sample.h"

#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <string.h>

#define BUDGET (100 * MiB)
#define SPARE (4 * MiB)

/* PyTorch's constants. */
#define MIN_BLOCK 512ull
#define SMALL_SIZE (1 * MiB)
#define SMALL_BUFFER (2 * MiB)
#define LARGE_BUFFER (20 * MiB)
#define MIN_LARGE_ALLOC (10 * MiB)
#define ROUND_LARGE (2 * MiB)

struct segment;

struct block {
	struct block *prev, *next; /* neighbours in the segment, by address */
	struct segment *seg;
	uintptr_t addr;
	uint64_t size;
	int allocated;
};

struct segment {
	struct segment *next;
	void *ptr;
	uint64_t size;
	int small;
	struct block *first;
	nvtxMemHeapHandle_t heap;  /* the segment announced to NVTX */
};

static struct segment *segments;
static uint64_t reserved, allocated;
static nvtxDomainHandle_t domain;  /* "frag": the pool's NVTX domain */

/* The pool's announcements (nvToolsExtMem.h): a segment is a heap, an
 * allocated block a region of it. */
static nvtxMemHeapHandle_t announce_heap(void *ptr, uint64_t size)
{
	nvtxMemVirtualRangeDesc_t range = { size, ptr };
	nvtxMemHeapDesc_t desc;

	memset(&desc, 0, sizeof(desc));
	desc.extCompatID = NVTX_EXT_COMPATID_MEM;
	desc.structSize = sizeof(desc);
	desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
	desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	desc.typeSpecificDescSize = sizeof(range);
	desc.typeSpecificDesc = &range;
	return nvtxMemHeapRegister(domain, &desc);
}

static void announce_block(struct block *b)
{
	nvtxMemVirtualRangeDesc_t range = { b->size, (void *)b->addr };
	nvtxMemRegionsRegisterBatch_t batch;

	memset(&batch, 0, sizeof(batch));
	batch.extCompatID = NVTX_EXT_COMPATID_MEM;
	batch.structSize = sizeof(batch);
	batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
	batch.heap = b->seg->heap;
	batch.regionCount = 1;
	batch.regionDescElementSize = sizeof(range);
	batch.regionDescElements = &range;
	nvtxMemRegionsRegister(domain, &batch);
}

static void announce_free(struct block *b)
{
	nvtxMemRegionRef_t ref;
	nvtxMemRegionsUnregisterBatch_t batch;

	ref.pointer = (void *)b->addr;
	memset(&batch, 0, sizeof(batch));
	batch.extCompatID = NVTX_EXT_COMPATID_MEM;
	batch.structSize = sizeof(batch);
	batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
	batch.refCount = 1;
	batch.refElementSize = sizeof(ref);
	batch.refElements = &ref;
	nvtxMemRegionsUnregister(domain, &batch);
}

static uint64_t round_up(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

static uint64_t segment_size(uint64_t size)
{
	if (size <= SMALL_SIZE)
		return SMALL_BUFFER;
	if (size < MIN_LARGE_ALLOC)
		return LARGE_BUFFER;
	return round_up(size, ROUND_LARGE);
}

/* The smallest free block of the pool that fits, lowest address first. */
static struct block *best_fit(int small, uint64_t size)
{
	struct block *best = NULL;

	for (struct segment *s = segments; s; s = s->next) {
		if (s->small != small)
			continue;
		for (struct block *b = s->first; b; b = b->next)
			if (!b->allocated && b->size >= size &&
			    (!best || b->size < best->size ||
			     (b->size == best->size && b->addr < best->addr)))
				best = b;
	}
	return best;
}

/* A new segment from cudaMalloc, or NULL when the device is out of memory. */
static SITE struct segment *segment_new(uint64_t size, int small)
{
	struct segment *s = calloc(1, sizeof(*s));
	struct block *b = calloc(1, sizeof(*b));
	cudaError_t err;

	if (!s || !b)
		DIE("out of host memory");
	err = cudaMalloc(&s->ptr, size);
	if (err == cudaErrorMemoryAllocation) {
		cudaGetLastError(); /* as PyTorch: the error is handled */
		free(s);
		free(b);
		return NULL;
	}
	CK(err);
	s->size = size;
	s->small = small;
	s->first = b;
	s->heap = announce_heap(s->ptr, size);
	s->next = segments;
	segments = s;
	b->seg = s;
	b->addr = (uintptr_t)s->ptr;
	b->size = size;
	reserved += size;
	return s;
}

/* torch.cuda.empty_cache(): gives every wholly free segment back. */
static int empty_cache(void)
{
	struct segment **sp = &segments;
	int n = 0;

	CK(cudaDeviceSynchronize());
	while (*sp) {
		struct segment *s = *sp;

		if (s->first->allocated || s->first->next) {
			sp = &s->next;
			continue;
		}
		nvtxMemHeapUnregister(domain, s->heap);
		CK(cudaFree(s->ptr));
		reserved -= s->size;
		*sp = s->next;
		free(s->first);
		free(s);
		n++;
	}
	return n;
}

/* Returns NULL when out of memory, after the cache was emptied and
 * cudaMalloc tried again, as PyTorch does before raising its OOM error. */
static struct block *cache_alloc(uint64_t request)
{
	uint64_t size = request < MIN_BLOCK ? MIN_BLOCK : round_up(request, MIN_BLOCK);
	int small = size <= SMALL_SIZE;
	struct block *b = best_fit(small, size);

	if (!b) {
		struct segment *s = segment_new(segment_size(size), small);

		if (!s) {
			empty_cache();
			s = segment_new(segment_size(size), small);
		}
		if (!s)
			return NULL;
		b = s->first;
	}
	uint64_t rest = b->size - size;
	if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {
		struct block *r = calloc(1, sizeof(*r));

		if (!r)
			DIE("out of host memory");
		r->seg = b->seg;
		r->addr = b->addr + size;
		r->size = rest;
		r->prev = b;
		r->next = b->next;
		if (b->next)
			b->next->prev = r;
		b->next = r;
		b->size = size;
	}
	b->allocated = 1;
	allocated += b->size;
	announce_block(b);
	return b;
}

static void merge_next(struct block *b)
{
	struct block *n = b->next;

	b->size += n->size;
	b->next = n->next;
	if (n->next)
		n->next->prev = b;
	free(n);
}

static void cache_free(struct block *b)
{
	announce_free(b);
	b->allocated = 0;
	allocated -= b->size;
	if (b->next && !b->next->allocated)
		merge_next(b);
	if (b->prev && !b->prev->allocated)
		merge_next(b->prev);
}

static uint64_t largest_free_block(void)
{
	uint64_t largest = 0;

	for (struct segment *s = segments; s; s = s->next)
		for (struct block *b = s->first; b; b = b->next)
			if (!b->allocated && b->size > largest)
				largest = b->size;
	return largest;
}

static void show(const char *when)
{
	compute(5);
	printf("  %-28s reserved %3.0f MiB, allocated %3.0f MiB, cached %3.0f MiB\n",
	       when, mib(reserved), mib(allocated), mib(reserved - allocated));
}

int main(void)
{
	struct block *act[25], *big;
	void *ballast = NULL;
	size_t free_b, total_b;
	const uint64_t request = 30 * MiB;

	CK(cudaSetDevice(0));
	domain = nvtxDomainCreateA("frag");
	/* NVTX's memory extension loads its tool at its first call: make it
	 * here, before the timed part (a reset of the process-wide heap, which
	 * holds nothing yet), not inside the forward pass */
	nvtxMemHeapReset(domain, NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE);
	CK(cudaMemGetInfo(&free_b, &total_b));
	if (free_b > BUDGET + SPARE) {
		uint64_t take = (free_b - BUDGET - SPARE) / (2 * MiB) * (2 * MiB);

		CK(cudaMalloc(&ballast, take));
		printf("fragmentation: %.0f MiB free; a ballast of %.0f MiB leaves about %.0f MiB\n",
		       mib(free_b), mib(take), mib(free_b - take));
	} else {
		printf("fragmentation: %.0f MiB free on device 0\n", mib(free_b));
	}

	/* Forward: 25 activations of 4 MiB, five to a 20 MiB segment. */
	for (int i = 0; i < 25; i++)
		if (!(act[i] = cache_alloc(4 * MiB)))
			DIE("out of memory in the forward pass (activation %d): this sample needs %.0f MiB free",
			    i, mib(BUDGET));
	show("after the forward pass:");

	/* Backward frees all of the last segment and two blocks in each of the
	 * others, which are not neighbours and so do not merge. */
	for (int i = 20; i < 25; i++)
		cache_free(act[i]);
	for (int s = 0; s < 4; s++) {
		cache_free(act[5 * s + 1]);
		cache_free(act[5 * s + 3]);
	}
	show("after the backward pass:");

	big = cache_alloc(request);
	if (big)
		DIE("expected the %.0f MiB request to run out of memory; is SIMCUDA_MEM=400M set?", mib(request));
	CK(cudaMemGetInfo(&free_b, &total_b));
	printf("  CUDA out of memory. Tried to allocate %.2f MiB. GPU 0 has %.2f MiB free. Of the\n"
	       "  %.2f MiB reserved by the cache, %.2f MiB is allocated and %.2f MiB is reserved but\n"
	       "  unallocated (largest free block %.2f MiB).\n",
	       mib(request), mib(free_b), mib(reserved), mib(allocated), mib(reserved - allocated),
	       mib(largest_free_block()));
	printf("  %.0f MiB is free in total, but in pieces: the cache is fragmented\n",
	       mib(free_b + reserved - allocated));

	/* What a training loop does on OOM: drop the step, empty the cache, retry. */
	for (int s = 0; s < 4; s++) {
		cache_free(act[5 * s]);
		cache_free(act[5 * s + 2]);
		cache_free(act[5 * s + 4]);
	}
	int emptied = empty_cache();
	printf("  step dropped, cache emptied (%d segments given back); retrying\n", emptied);
	if (!(big = cache_alloc(request)))
		DIE("the retry after emptying the cache ran out of memory too");
	show("after the retry:");
	cache_free(big);
	empty_cache();
	if (ballast)
		CK(cudaFree(ballast));
	return 0;
}
