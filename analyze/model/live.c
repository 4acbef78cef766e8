/*
 * live.c - the live set of the analysis: every allocation live now, and
 * the memory pools, for the pass (account.c) and for what looks at a
 * moment of it (peak.c, frag.c).
 *
 * How it works: live allocations sit in an array, indexed by the one hash
 * table (htab.h) on (process, name space, address); a freed entry's place
 * goes on a free list for the next allocation, so memory grows with what
 * is live at once, never with the number of events, and an entry never
 * moves while it is live (only when the array grows). Pools are a small
 * table searched from the newest.
 */
#include <stdlib.h>
#include <string.h>

#include "model/live.h"

static uint64_t live_hash(int proc, int ns, uint64_t addr)
{
	return hash_mix(addr ^ ((uint64_t)proc << 48) ^ ((uint64_t)ns << 44));
}

struct an_live *live_find(struct live_set *p, int proc, int ns, uint64_t addr)
{
	struct htab_probe pr;

	for (uint32_t i = htab_find(&p->index, live_hash(proc, ns, addr), &pr); i != HTAB_NONE;
	     i = htab_more(&p->index, &pr)) {
		struct an_live *e = &p->tab[i];

		if (e->addr == addr && e->proc == proc && e->ns == ns)
			return e;
	}
	return NULL;
}

/* Room for one more entry at the end of tab. */
int live_grow(struct live_set *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024;
	void *n;

	if (p->top < p->cap)
		return 0;
	if (cap > UINT32_MAX || !(n = realloc(p->tab, cap * sizeof(*p->tab))))
		return -1;
	p->tab = n;
	p->cap = cap;
	return 0;
}

/* A new entry (an existing one at the same key is replaced: its free was
   lost). Returns NULL when out of memory. */
struct an_live *live_put(struct live_set *p, int proc, int ns, uint64_t addr, int *replaced)
{
	uint64_t h = live_hash(proc, ns, addr);
	struct an_live *e = live_find(p, proc, ns, addr);
	uint32_t i;

	*replaced = e != NULL;
	if (e)
		return e;
	if (p->free_head != 0) {
		i = p->free_head - 1;
		p->free_head = (uint32_t)p->tab[i].addr;
	} else {
		if (live_grow(p))
			return NULL;
		i = (uint32_t)p->top;
	}
	if (htab_add(&p->index, h, i)) {
		if (i == p->top)
			return NULL;
		p->tab[i].addr = p->free_head;
		p->free_head = i + 1;
		return NULL;
	}
	if (i == p->top)
		p->top++;
	e = &p->tab[i];
	memset(e, 0, sizeof(*e));
	e->used = 1;
	e->addr = addr;
	e->proc = (uint16_t)proc;
	e->ns = (uint8_t)ns;
	e->site = UINT32_MAX;
	e->pdev = -1;
	p->n++;
	return e;
}

/* The entry leaves the index and its place goes on the free list: no
   other entry moves, so pointers to them stay good. */
void live_del(struct live_set *p, struct an_live *e)
{
	uint32_t i = (uint32_t)(e - p->tab);

	htab_del(&p->index, live_hash(e->proc, e->ns, e->addr), i);
	e->used = 0;
	e->addr = p->free_head;
	p->free_head = i + 1;
	p->n--;
}

void live_each(const struct live_set *p, an_live_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->top; i++) {
		const struct an_live *e = &p->tab[i];
		struct an_live_view v;

		if (!e->used || p->released[e->proc])
			continue;
		v.proc = e->proc;
		v.kind = e->kind;
		v.dev = e->pdev;
		v.addr = e->addr;
		v.bytes = e->bytes;
		v.site = e->site;
		v.x1 = e->x1;
		fn(ctx, &v);
	}
}

void live_each_pool(const struct live_set *p, an_pool_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->npools; i++) {
		const struct an_pool *q = &p->pools[i];
		struct an_pool_view v = { q->proc, q->pdev, q->handle, q->reserved, q->used,
					  q->has_record };

		if (!q->destroyed && q->pdev >= 0 && !p->released[q->proc])
			fn(ctx, &v);
	}
}

void live_reset(struct live_set *p)
{
	htab_clear(&p->index);
	p->top = 0;
	p->free_head = 0;
	p->n = 0;
	p->npools = 0;
}

void live_free(struct live_set *p)
{
	free(p->tab);
	htab_free(&p->index);
	free(p->pools);
	free(p->released);
	memset(p, 0, sizeof(*p));
}

struct an_pool *pool_get(struct live_set *p, int proc, uint64_t handle, int pdev)
{
	for (size_t i = p->npools; i-- > 0;)
		if (p->pools[i].handle == handle && p->pools[i].proc == proc &&
		    (handle || p->pools[i].pdev == pdev))
			return &p->pools[i];
	if (p->npools == p->cap_pools) {
		size_t c = p->cap_pools ? p->cap_pools * 2 : 16;
		void *n = realloc(p->pools, c * sizeof(*p->pools));

		if (!n)
			return NULL;
		p->pools = n;
		p->cap_pools = c;
	}
	struct an_pool *q = &p->pools[p->npools++];

	memset(q, 0, sizeof(*q));
	q->handle = handle;
	q->proc = proc;
	q->pdev = pdev;
	return q;
}
