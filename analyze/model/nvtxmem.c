/*
 * nvtxmem.c - pools announced through NVTX's memory extension (nvtxmem.h,
 * docs/units.md "Pools announced by NVTX"): the heaps and regions of the
 * MT_REC_NVTX_MEM records, replayed in time order.
 *
 * Each heap keeps its registered regions in an array sorted by address, so
 * a region is found by binary search (unregister and resize name it by
 * its address; an unregister by handle looks for the address first, then
 * for a region registered under that handle) and the holes are a walk of
 * the array: the gaps between the heap's start, its regions and its end.
 * A heap is found by its handle among its process's open heaps, a region
 * of an unregister by the open heap of its process that contains it.
 * Misuse is counted and the record left out, never applied halfway.
 *
 * Holes are counted at the moments the report shows: at a pool's peak of
 * live bytes (lazily, before the pool's next change, so the count is of
 * the peak's state, once per peak however long the rise), at each failed
 * allocation of its process, and at the end. The walks share a budget of
 * NM_WALK_BUDGET region visits; past it the holes are not counted (and the
 * report says so) rather than the pass slowing without bound.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "model/nvtxmem.h"

struct region {
	uint64_t addr, size, handle;
	uint32_t site;                  /* index in its pool's sites */
};

struct heap {
	int proc;
	uint32_t pool;
	uint64_t handle, addr, size;
	int open;
	struct region *reg;             /* sorted by addr */
	uint32_t nreg, cap;
};

struct priv {
	struct heap *heaps;
	uint32_t nheaps, cap_heaps;
	uint32_t cap_pools;
	uint64_t budget;
};

#define P(m) ((struct priv *)(m)->priv)

static struct nm_model *model(struct analysis *a)
{
	struct nm_model *m = a->nvmem;

	if (m)
		return m;
	if (!(m = calloc(1, sizeof *m)) || !(m->priv = calloc(1, sizeof(struct priv)))) {
		free(m);
		return NULL;
	}
	P(m)->budget = NM_WALK_BUDGET;
	a->nvmem = m;
	return m;
}

const char *nvmem_pool_name(const struct nm_pool *p)
{
	return p->name ? p->name : p->domain ? p->domain : "heap";
}

static void misuse(struct nm_model *m, enum nm_misuse k, int proc, uint64_t t, uint64_t addr,
		   uint64_t size)
{
	if (!m->misuse[k]++) {
		m->first[k].proc = proc;
		m->first[k].t = t;
		m->first[k].addr = addr;
		m->first[k].size = size;
	}
}

/* The first index whose region starts at or after addr. */
static uint32_t lower(const struct heap *h, uint64_t addr)
{
	uint32_t lo = 0, hi = h->nreg;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->reg[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int inside(const struct heap *h, uint64_t addr, uint64_t size)
{
	return addr >= h->addr && size <= h->size && addr - h->addr <= h->size - size;
}

/* The open heap of proc registered under handle (the latest), or NULL. */
static struct heap *heap_by_handle(struct nm_model *m, int proc, uint64_t handle)
{
	for (uint32_t i = P(m)->nheaps; i-- > 0;) {
		struct heap *h = &P(m)->heaps[i];

		if (h->open && h->proc == proc && h->handle == handle)
			return h;
	}
	return NULL;
}

/* The region of proc at addr: its heap and index, or NULL. */
static struct heap *region_at(struct nm_model *m, int proc, uint64_t addr, uint32_t *at)
{
	for (uint32_t i = P(m)->nheaps; i-- > 0;) {
		struct heap *h = &P(m)->heaps[i];

		if (!h->open || h->proc != proc || !inside(h, addr, 0))
			continue;
		uint32_t k = lower(h, addr);
		if (k < h->nreg && h->reg[k].addr == addr) {
			*at = k;
			return h;
		}
	}
	return NULL;
}

static struct heap *region_by_handle(struct nm_model *m, int proc, uint64_t handle, uint32_t *at)
{
	struct heap *h = region_at(m, proc, handle, at);

	for (uint32_t i = P(m)->nheaps; !h && i-- > 0;) {
		struct heap *g = &P(m)->heaps[i];

		for (uint32_t k = 0; g->open && g->proc == proc && k < g->nreg; k++)
			if (g->reg[k].handle == handle) {
				*at = k;
				return g;
			}
	}
	return h;
}

/* Counts the holes of pool p now into s (heaps, size, live, regions are
   the pool's own figures). */
static void count_holes(struct nm_model *m, uint32_t p, struct nm_state *s)
{
	uint64_t largest = 0;
	uint32_t holes = 0;
	uint64_t visits = 0;

	for (uint32_t i = 0; i < P(m)->nheaps; i++) {
		const struct heap *h = &P(m)->heaps[i];

		if (h->open && h->pool == p)
			visits += h->nreg + 1;
	}
	s->counted = P(m)->budget >= visits;
	s->holes = 0;
	s->largest = 0;
	if (!s->counted)
		return;
	P(m)->budget -= visits;
	for (uint32_t i = 0; i < P(m)->nheaps; i++) {
		const struct heap *h = &P(m)->heaps[i];
		uint64_t at = h->addr;

		if (!h->open || h->pool != p)
			continue;
		for (uint32_t k = 0; k <= h->nreg; k++) {
			uint64_t next = k < h->nreg ? h->reg[k].addr : h->addr + h->size;

			if (next > at) {
				holes++;
				if (next - at > largest)
					largest = next - at;
			}
			if (k < h->nreg && h->reg[k].addr + h->reg[k].size > at)
				at = h->reg[k].addr + h->reg[k].size;
		}
	}
	s->holes = holes;
	s->largest = largest;
}

/* Before pool p changes: a peak still to count is counted now. */
static void settle(struct nm_model *m, uint32_t p)
{
	struct nm_pool *q = &m->pools[p];

	if (q->pending) {
		count_holes(m, p, &q->peak);
		q->pending = 0;
	}
}

/* After pool p changed at time t. */
static void changed(struct nm_model *m, uint32_t p, uint64_t t)
{
	struct nm_pool *q = &m->pools[p];

	q->now.t = t;
	if (q->now.live > q->peak.live || !q->peak.size) {
		q->peak = q->now;
		q->pending = 1;
	}
}

static int site_add(struct nm_pool *q, uint32_t stack, uint32_t *out)
{
	uint32_t i;

	for (i = 0; i < q->nsites && q->sites[i].stack != stack; i++)
		;
	if (i == q->nsites) {
		struct nm_site *v = realloc(q->sites, (q->nsites + 1) * sizeof *v);

		if (!v)
			return -1;
		q->sites = v;
		memset(&v[i], 0, sizeof v[i]);
		v[i].stack = stack;
		q->nsites++;
	}
	*out = i;
	return 0;
}

static void site_live(struct nm_pool *q, uint32_t i, int64_t bytes, int count)
{
	struct nm_site *s = &q->sites[i];

	s->live += (uint64_t)bytes;
	s->count += (uint64_t)(int64_t)count;
	if (s->live > s->max)
		s->max = s->live;
}

static int pool_for(struct nm_model *m, int proc, const char *domain, size_t dl,
		    const char *name, size_t nl, uint32_t *out)
{
	for (uint32_t i = 0; i < m->npools; i++) {
		const struct nm_pool *q = &m->pools[i];

		if (q->proc == proc && (q->domain ? strlen(q->domain) == dl &&
					!memcmp(q->domain, domain, dl) : !dl) &&
		    (q->name ? strlen(q->name) == nl && !memcmp(q->name, name, nl) : !nl)) {
			*out = i;
			return 0;
		}
	}
	if (m->npools == P(m)->cap_pools) {
		uint32_t n = P(m)->cap_pools ? 2 * P(m)->cap_pools : 8;
		struct nm_pool *v = realloc(m->pools, n * sizeof *v);

		if (!v)
			return -1;
		m->pools = v;
		P(m)->cap_pools = n;
	}
	struct nm_pool *q = &m->pools[m->npools];
	memset(q, 0, sizeof *q);
	q->proc = proc;
	if ((dl && !(q->domain = strndup(domain, dl))) || (nl && !(q->name = strndup(name, nl)))) {
		free(q->domain);
		return -1;
	}
	*out = m->npools++;
	return 0;
}

static int heap_register(struct nm_model *m, const struct srec *r, const struct mt_nvtx_mem *g)
{
	const char *names = (const char *)(g + 1);
	uint32_t p;

	if (g->type != 1 || !g->size) {
		m->other_type++;
		return 0;
	}
	if (pool_for(m, r->proc, names, g->domain_len, names + g->domain_len, g->name_len, &p))
		return -1;
	if (P(m)->nheaps == P(m)->cap_heaps) {
		uint32_t n = P(m)->cap_heaps ? 2 * P(m)->cap_heaps : 8;
		struct heap *v = realloc(P(m)->heaps, n * sizeof *v);

		if (!v)
			return -1;
		P(m)->heaps = v;
		P(m)->cap_heaps = n;
	}
	struct nm_pool *q = &m->pools[p];
	settle(m, p);
	P(m)->heaps[P(m)->nheaps++] = (struct heap){ .proc = r->proc, .pool = p, .handle = g->heap,
						      .addr = g->addr, .size = g->size, .open = 1 };
	if (!q->heaps_registered)
		q->addr = g->addr;
	q->heaps_registered++;
	q->heaps_open++;
	q->now.heaps++;
	q->now.size += g->size;
	changed(m, p, r->t);
	return 0;
}

/* Drops every region of heap h (an unregister or a reset of the heap). */
static void drop_regions(struct nm_model *m, struct heap *h)
{
	struct nm_pool *q = &m->pools[h->pool];

	for (uint32_t k = 0; k < h->nreg; k++) {
		site_live(q, h->reg[k].site, -(int64_t)h->reg[k].size, -1);
		q->now.live -= h->reg[k].size;
	}
	q->now.regions -= h->nreg;
	h->nreg = 0;
}

static void heap_gone(struct nm_model *m, const struct srec *r, const struct mt_nvtx_mem *g,
		      int reset)
{
	struct heap *h;

	if (reset && !g->heap)
		return;     /* the process-wide heap: its regions are not followed */
	if (!(h = heap_by_handle(m, r->proc, g->heap))) {
		misuse(m, NM_UNKNOWN_HEAP, r->proc, r->t, g->heap, 0);
		return;
	}
	struct nm_pool *q = &m->pools[h->pool];
	settle(m, h->pool);
	drop_regions(m, h);
	if (reset) {
		q->resets++;
	} else {
		h->open = 0;
		free(h->reg);
		h->reg = NULL;
		h->cap = 0;
		q->heaps_open--;
		q->now.heaps--;
		q->now.size -= h->size;
	}
	changed(m, h->pool, r->t);
}

static int region_register(struct nm_model *m, const struct srec *r, const struct mt_nvtx_mem *g)
{
	struct heap *h;

	if (!g->heap) {
		m->process_wide++;
		return 0;
	}
	if (g->type != 1) {
		m->other_type++;
		return 0;
	}
	if (!(h = heap_by_handle(m, r->proc, g->heap))) {
		misuse(m, NM_UNKNOWN_HEAP, r->proc, r->t, g->heap, 0);
		return 0;
	}
	if (!inside(h, g->addr, g->size)) {
		misuse(m, NM_OUTSIDE_HEAP, r->proc, r->t, g->addr, g->size);
		return 0;
	}
	uint32_t k = lower(h, g->addr);
	if ((k < h->nreg && (h->reg[k].addr == g->addr || h->reg[k].addr - g->addr < g->size)) ||
	    (k > 0 && h->reg[k - 1].addr + h->reg[k - 1].size > g->addr)) {
		misuse(m, NM_OVERLAP, r->proc, r->t, g->addr, g->size);
		return 0;
	}
	if (h->nreg == h->cap) {
		uint32_t n = h->cap ? 2 * h->cap : 16;
		struct region *v = realloc(h->reg, n * sizeof *v);

		if (!v)
			return -1;
		h->reg = v;
		h->cap = n;
	}
	struct nm_pool *q = &m->pools[h->pool];
	uint32_t site;
	if (site_add(q, g->stack_id, &site))
		return -1;
	settle(m, h->pool);
	memmove(h->reg + k + 1, h->reg + k, (h->nreg - k) * sizeof *h->reg);
	h->reg[k] = (struct region){ g->addr, g->size, g->handle, site };
	h->nreg++;
	q->regions_registered++;
	q->sites[site].registered++;
	site_live(q, site, (int64_t)g->size, 1);
	q->now.regions++;
	q->now.live += g->size;
	changed(m, h->pool, r->t);
	return 0;
}

static void region_resize(struct nm_model *m, const struct srec *r, const struct mt_nvtx_mem *g)
{
	uint32_t k;
	struct heap *h;

	if (g->type != 1) {
		m->other_type++;
		return;
	}
	if (!(h = region_at(m, r->proc, g->addr, &k))) {
		misuse(m, NM_UNKNOWN_REGION, r->proc, r->t, g->addr, g->size);
		return;
	}
	if (!inside(h, g->addr, g->size)) {
		misuse(m, NM_OUTSIDE_HEAP, r->proc, r->t, g->addr, g->size);
		return;
	}
	if (k + 1 < h->nreg && h->reg[k + 1].addr - g->addr < g->size) {
		misuse(m, NM_OVERLAP, r->proc, r->t, g->addr, g->size);
		return;
	}
	struct nm_pool *q = &m->pools[h->pool];
	struct region *x = &h->reg[k];
	settle(m, h->pool);
	site_live(q, x->site, (int64_t)g->size - (int64_t)x->size, 0);
	q->now.live = q->now.live - x->size + g->size;
	x->size = g->size;
	changed(m, h->pool, r->t);
}

static void region_unregister(struct nm_model *m, const struct srec *r, const struct mt_nvtx_mem *g)
{
	uint32_t k;
	int by_handle = g->usage == 2;
	uint64_t ref = by_handle ? g->handle : g->addr;
	struct heap *h = by_handle ? region_by_handle(m, r->proc, ref, &k) : region_at(m, r->proc, ref, &k);

	if (!h) {
		/* process-wide regions are not followed: their unregisters
		   cannot be told from a misuse, and are not counted as one */
		if (!m->process_wide)
			misuse(m, NM_UNKNOWN_REGION, r->proc, r->t, ref, 0);
		return;
	}
	struct nm_pool *q = &m->pools[h->pool];
	settle(m, h->pool);
	site_live(q, h->reg[k].site, -(int64_t)h->reg[k].size, -1);
	q->now.live -= h->reg[k].size;
	q->now.regions--;
	memmove(h->reg + k, h->reg + k + 1, (h->nreg - k - 1) * sizeof *h->reg);
	h->nreg--;
	changed(m, h->pool, r->t);
}

int nvmem_record(struct analysis *a, const struct srec *r)
{
	struct nm_model *m = model(a);
	const struct mt_nvtx_mem *g = r->rec.p;

	if (!m)
		return -1;
	m->records++;
	switch (g->lh.h.a) {
	case MT_NVMEM_HEAP_REGISTER:
		return heap_register(m, r, g);
	case MT_NVMEM_HEAP_UNREGISTER:
		heap_gone(m, r, g, 0);
		return 0;
	case MT_NVMEM_HEAP_RESET:
		heap_gone(m, r, g, 1);
		return 0;
	case MT_NVMEM_REGION_REGISTER:
		return region_register(m, r, g);
	case MT_NVMEM_REGION_RESIZE:
		region_resize(m, r, g);
		return 0;
	case MT_NVMEM_REGION_UNREGISTER:
		region_unregister(m, r, g);
		return 0;
	}
	m->unknown_ops++;     /* an op of a later format: skipped */
	return 0;
}

void nvmem_failure(struct analysis *a, int proc, uint64_t t)
{
	struct nm_model *m = a->nvmem;

	for (uint32_t p = 0; m && p < m->npools; p++) {
		struct nm_pool *q = &m->pools[p];

		if (q->proc != proc || !q->heaps_open)
			continue;
		if (q->nfail < NM_FAILURES) {
			settle(m, p);
			q->fail[q->nfail] = q->now;
			q->fail[q->nfail].t = t;
			count_holes(m, p, &q->fail[q->nfail]);
		}
		q->nfail++;
	}
}

int nvmem_end(struct analysis *a)
{
	struct nm_model *m = a->nvmem;

	for (uint32_t p = 0; m && p < m->npools; p++) {
		settle(m, p);
		count_holes(m, p, &m->pools[p].now);
	}
	return 0;
}

void nvmem_free(struct nm_model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->npools; i++) {
		free(m->pools[i].domain);
		free(m->pools[i].name);
		free(m->pools[i].sites);
	}
	for (uint32_t i = 0; m->priv && i < P(m)->nheaps; i++)
		free(P(m)->heaps[i].reg);
	if (m->priv)
		free(P(m)->heaps);
	free(m->priv);
	free(m->pools);
	free(m);
}
