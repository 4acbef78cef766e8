/*
 * live.h - the live set of the analysis (live.c): allocations live now
 * and memory pools, kept by the pass (account.c) and looked at by the
 * metrics that need a moment of it (peak.c, frag.c).
 */
#ifndef MEMTRACE_LIVE_H
#define MEMTRACE_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/htab.h"

/* Name spaces: what may share a number without being the same thing. */
enum ns { NS_PTR, NS_HOSTREG, NS_ARRAY, NS_FOREIGN, NS_PHYS, NS_RESERVE, NS_MAP };

struct an_live {
	uint32_t hash;              /* the table's (htab.h) */
	uint32_t site;              /* UINT32_MAX: none */
	uint64_t addr;
	uint64_t bytes;
	uint64_t x1;                /* map: handle; async: pool */
	uint64_t seq;               /* the allocation's event number */
	int32_t pdev;               /* index in a->devs, -1 none */
	uint32_t refs, maps;        /* VMM handles */
	uint16_t proc;
	uint8_t kind;
	uint8_t ns : 4, caching : 1;/* enum ns; bits: 56 bytes a record */
};

struct an_pool {
	uint64_t handle;
	int proc, pdev;
	int has_record, destroyed;
	uint64_t reserved, used, async_live;
	uint64_t part;              /* what it adds to pool_part now */
};

struct live_set {
	struct htab tab;            /* of struct an_live: the allocations live */
	struct an_pool *pools;
	size_t npools, cap_pools;
	uint8_t *released;          /* per proc: its exit gave its memory back,
	                               so its entries are no longer anyone's */
};

/* Functions that can fail return -1 / NULL when out of memory. A pointer
   to an allocation is good until the next live_put() or live_del(). */
struct an_live *live_find(struct live_set *p, int proc, int ns, uint64_t addr);
/* A new entry; an existing one at the same key is returned with *replaced
   set (its free was lost). */
struct an_live *live_put(struct live_set *p, int proc, int ns, uint64_t addr, int *replaced);
void live_del(struct live_set *p, struct an_live *e);
/* The pool of (proc, handle), added when new; handle 0 is the device's
   default pool, one per pdev. */
struct an_pool *pool_get(struct live_set *p, int proc, uint64_t handle, int pdev);
/* Forgets every allocation and pool (for the replay). */
void live_reset(struct live_set *p);
void live_free(struct live_set *p);

/* What the metrics see of a live allocation; dev is the pdev index. */
struct an_live_view {
	int proc;
	uint8_t kind;               /* MT_KIND_* */
	int dev;
	uint64_t addr, bytes;
	uint32_t site;              /* UINT32_MAX: none */
	uint64_t x1;                /* map: handle; async: pool */
};
typedef void (*an_live_fn)(void *ctx, const struct an_live_view *v);
/* Every allocation live now, but those of released processes. */
void live_each(const struct live_set *p, an_live_fn fn, void *ctx);

/* A pool of a process on a device: reserved/used by handle. */
struct an_pool_view { int proc; int dev; uint64_t pool, reserved, used; int has_record; };
typedef void (*an_pool_fn)(void *ctx, const struct an_pool_view *v);
void live_each_pool(const struct live_set *p, an_pool_fn fn, void *ctx);

#endif
