/*
 * live.c - the live set of the analysis: every allocation live now, and
 * the memory pools, for the pass (account.c) and for what looks at a
 * moment of it (peak.c, frag.c).
 *
 * How it works: live allocations sit in one open-addressing hash keyed by
 * (process, name space, address), so memory grows with what is live at
 * once, never with the number of events; deletion shifts entries back, so
 * there are no tombstones and lookups stay short. Pools are a small table
 * searched from the newest.
 */
#include <stdlib.h>
#include <string.h>

#include "model/live.h"

static size_t live_slot(const struct live_set *p, int proc, int ns, uint64_t addr)
{
	return hash_mix(addr ^ ((uint64_t)proc << 48) ^ ((uint64_t)ns << 44)) & (p->cap - 1);
}

struct an_live *live_find(struct live_set *p, int proc, int ns, uint64_t addr)
{
	for (size_t i = live_slot(p, proc, ns, addr);; i = (i + 1) & (p->cap - 1)) {
		struct an_live *e = &p->tab[i];

		if (!e->used)
			return NULL;
		if (e->addr == addr && e->proc == proc && e->ns == ns)
			return e;
	}
}

int live_grow(struct live_set *p)
{
	struct an_live *old = p->tab;
	size_t oldcap = p->cap;

	p->cap = oldcap ? oldcap * 2 : 1024;
	p->tab = calloc(p->cap, sizeof(*p->tab));
	if (!p->tab)
		return -1;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		size_t j = live_slot(p, old[i].proc, old[i].ns, old[i].addr);

		while (p->tab[j].used)
			j = (j + 1) & (p->cap - 1);
		p->tab[j] = old[i];
	}
	free(old);
	return 0;
}

/* A new entry (an existing one at the same key is replaced: its free was
   lost). Returns NULL when out of memory. */
struct an_live *live_put(struct live_set *p, int proc, int ns, uint64_t addr, int *replaced)
{
	size_t i;

	*replaced = 0;
	if ((p->n + 1) * 4 > p->cap * 3 && live_grow(p))
		return NULL;
	for (i = live_slot(p, proc, ns, addr); p->tab[i].used; i = (i + 1) & (p->cap - 1)) {
		if (p->tab[i].addr == addr && p->tab[i].proc == proc && p->tab[i].ns == ns) {
			*replaced = 1;
			return &p->tab[i];
		}
	}
	memset(&p->tab[i], 0, sizeof(p->tab[i]));
	p->tab[i].used = 1;
	p->tab[i].addr = addr;
	p->tab[i].proc = (uint16_t)proc;
	p->tab[i].ns = (uint8_t)ns;
	p->tab[i].site = UINT32_MAX;
	p->tab[i].pdev = -1;
	p->n++;
	return &p->tab[i];
}

/* Backward-shift deletion: no tombstones, so lookups stay short. */
void live_del(struct live_set *p, struct an_live *e)
{
	size_t i = (size_t)(e - p->tab), j = i;

	for (;;) {
		j = (j + 1) & (p->cap - 1);
		if (!p->tab[j].used)
			break;
		size_t k = live_slot(p, p->tab[j].proc, p->tab[j].ns, p->tab[j].addr);

		/* move j to i when its home k is not in (i, j] (cyclically) */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			p->tab[i] = p->tab[j];
			i = j;
		}
	}
	p->tab[i].used = 0;
	p->n--;
}

void live_each(const struct live_set *p, an_live_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->cap; i++) {
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
	memset(p->tab, 0, p->cap * sizeof(*p->tab));
	p->n = 0;
	p->npools = 0;
}

void live_free(struct live_set *p)
{
	free(p->tab);
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
