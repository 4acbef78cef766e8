/*
 * live.c - the live set of the analysis: every allocation live now, and
 * the memory pools, for the pass (account.c) and for what looks at a
 * moment of it (peak.c, frag.c).
 *
 * How it works: live allocations are the records of the one hash table
 * (htab.h), keyed by (process, name space, address), so memory grows with
 * what is live at once, never with the number of events, and a lookup
 * touches the allocation it finds and little else. A pointer to one is
 * good until the next live_put() or live_del(). Pools are a small table
 * searched from the newest.
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

	for (struct an_live *e = htab_find(&p->tab, live_hash(proc, ns, addr), &pr); e;
	     e = htab_more(&p->tab, &pr))
		if (e->addr == addr && e->proc == proc && e->ns == ns)
			return e;
	return NULL;
}

/* A new entry (an existing one at the same key is replaced: its free was
   lost). Returns NULL when out of memory. */
struct an_live *live_put(struct live_set *p, int proc, int ns, uint64_t addr, int *replaced)
{
	struct an_live *e = live_find(p, proc, ns, addr);

	*replaced = e != NULL;
	if (e)
		return e;
	if (!(e = htab_add(&p->tab, live_hash(proc, ns, addr))))
		return NULL;
	e->addr = addr;
	e->proc = (uint16_t)proc;
	e->ns = (uint8_t)ns & 15;
	e->site = UINT32_MAX;
	e->pdev = -1;
	return e;
}

void live_del(struct live_set *p, struct an_live *e)
{
	htab_del(&p->tab, e);
}

void live_each(const struct live_set *p, an_live_fn fn, void *ctx)
{
	for (uint32_t i = 0; p->tab.rec && i <= p->tab.mask; i++) {
		const struct an_live *e = htab_at(&p->tab, i);
		struct an_live_view v;

		if (!e->hash || p->released[e->proc])
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
	htab_clear(&p->tab);
	p->npools = 0;
}

void live_free(struct live_set *p)
{
	htab_free(&p->tab);
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
