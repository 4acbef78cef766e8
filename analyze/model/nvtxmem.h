/*
 * nvtxmem.h - pools that announce themselves through NVTX's memory
 * extension (nvToolsExtMem.h, recorded as MT_REC_NVTX_MEM: docs/units.md,
 * "Pools announced by NVTX"). A pool is the heaps one process registered
 * under one domain and one name; its regions (sub-allocations) are its
 * buffers, the space of its heaps no region holds is its free space (the
 * pool's cache), cut into holes: the largest hole is the biggest request
 * the pool could serve without more memory.
 *
 * The pass (account.c) hands every NVTX_MEM record to nvmem_record() in
 * time order, says each failed allocation (nvmem_failure()) and calls
 * nvmem_end() after the last record; the figures then sit in
 * analysis.nvmem (NULL when the run has no NVTX_MEM record). Functions
 * return -1 when out of memory.
 */
#ifndef MEMTRACE_NVTXMEM_H
#define MEMTRACE_NVTXMEM_H

#include <stdint.h>

#include "model/analysis.h"

#define NM_FAILURES 4               /* pool states kept at failures, per pool */
#define NM_WALK_BUDGET 50000000u    /* region visits spent counting holes */

/* A pool at one moment. holes and largest are 0 with counted 0 when the
   walk budget was spent. */
struct nm_state {
	uint64_t t;
	uint64_t size;                  /* of its heaps registered then */
	uint64_t live;                  /* in its regions */
	uint64_t largest;               /* the largest hole */
	uint32_t heaps, regions, holes;
	int counted;                    /* holes and largest are known */
};

/* The regions one call path registered in a pool. */
struct nm_site {
	uint32_t stack;
	uint64_t live, count;           /* now (at the end: left registered) */
	uint64_t max;                   /* highest live */
	uint64_t registered;            /* regions registered in all */
};

struct nm_pool {
	int proc;
	char *domain;                   /* NULL: NVTX's default domain */
	char *name;                     /* the heaps' message, NULL none */
	uint32_t heaps_registered, heaps_open;
	uint64_t addr;                  /* its first heap's address */
	uint64_t regions_registered, resets;
	struct nm_state now;
	struct nm_state peak;           /* the most live in regions (first) */
	struct nm_state most_free;      /* the most free space (first) */
	struct nm_state fail[NM_FAILURES];  /* at the process's first failures */
	uint32_t nfail;                 /* failures while it had a heap */
	struct nm_site *sites;
	uint32_t nsites;
	int pending;                    /* private: peak's holes still to count */
};

/* The program's misuse, counted with its first instance. */
enum nm_misuse {
	NM_OUTSIDE_HEAP,                /* a region (or its resize) not inside its heap */
	NM_UNKNOWN_HEAP,                /* a heap handle never registered, or gone */
	NM_UNKNOWN_REGION,              /* an unregister or resize of no region */
	NM_OVERLAP,                     /* a region over one still registered */
	NM_NMISUSE
};

struct nm_model {
	struct nm_pool *pools;
	uint32_t npools;
	uint64_t records, unknown_ops;
	uint64_t process_wide;          /* regions of NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE
	                                   (no pool: left out) */
	uint64_t other_type;            /* heaps or regions not virtual addresses */
	uint64_t misuse[NM_NMISUSE];
	struct { int proc; uint64_t t, addr, size; } first[NM_NMISUSE];
	void *priv;
};

int nvmem_record(struct analysis *a, const struct srec *r);
void nvmem_failure(struct analysis *a, int proc, uint64_t t);
int nvmem_end(struct analysis *a);
void nvmem_free(struct nm_model *m);
/* "pool 'name'" words: the name, else the domain, else "heap". */
const char *nvmem_pool_name(const struct nm_pool *p);

#endif
