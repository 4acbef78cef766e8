/*
 * sim.h - private contract between the files of the simulated CUDA driver
 * (build/simcuda/driver/libcuda.so.1). Nothing here is seen by programs.
 *
 * The simulator never touches a GPU: device memory is bookkeeping only
 * (addresses from reserved-looking ranges, bytes charged against a
 * configured capacity); only managed and pinned host memory is real host
 * memory. All shared state is guarded by one mutex (sim_lock); the current
 * context stack is per thread and needs no lock.
 */
#ifndef SIMCUDA_DRIVER_SIM_H
#define SIMCUDA_DRIVER_SIM_H

/* Declares the v1 (32-bit) names and the _ptsz/_ptds ones beside the _v2 ones. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <stdint.h>

#define SIM_EXPORT __attribute__((visibility("default")))

#define SIM_MIB (1ull << 20)
#define SIM_PAGE (2 * SIM_MIB)     /* charging granule, small page size */
#define SIM_SMALL_MAX SIM_MIB      /* larger requests get whole pages */
#define SIM_SMALL_ALIGN 512ull     /* rounding of small and pool blocks */
#define SIM_MAX_DEVICES 16

static inline uint64_t sim_roundup(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

/* --- tree.c: treap keyed by address, with the largest len per subtree --- */
struct sim_node {
	uint64_t key, len, maxlen;
	uint32_t prio;
	struct sim_node *l, *r;
};
struct sim_tree { struct sim_node *root; };

void sim_tree_insert(struct sim_tree *t, struct sim_node *n);
void sim_tree_remove(struct sim_tree *t, struct sim_node *n);
struct sim_node *sim_tree_find(const struct sim_tree *t, uint64_t key);
struct sim_node *sim_tree_floor(const struct sim_tree *t, uint64_t key);
struct sim_node *sim_tree_first_fit(const struct sim_tree *t, uint64_t need);

/* First-fit allocator of [base, base+size) in multiples of gran; 0 = full. */
struct sim_arena {
	struct sim_tree spans; /* free spans: key = start, len = length */
	uint64_t base, size, gran;
};
int sim_arena_init(struct sim_arena *a, uint64_t base, uint64_t size, uint64_t gran);
uint64_t sim_arena_alloc(struct sim_arena *a, uint64_t size, uint64_t align);
void sim_arena_free(struct sim_arena *a, uint64_t addr, uint64_t size);
int sim_arena_fits(const struct sim_arena *a, uint64_t size);
int sim_arena_empty(const struct sim_arena *a);
void sim_arena_destroy(struct sim_arena *a);

/* --- core.c: configuration, lock, call log -------------------------------- */
struct sim_config {
	int devices;           /* SIMCUDA_DEVICES */
	uint64_t mem;          /* SIMCUDA_MEM, per device */
	uint64_t ctx_overhead; /* SIMCUDA_CTX_OVERHEAD */
	uint64_t pool_chunk;   /* SIMCUDA_POOL_CHUNK */
};
extern struct sim_config sim_cfg;
extern int sim_initialized;

#define SIM_NEED_INIT() do { \
	if (!__atomic_load_n(&sim_initialized, __ATOMIC_ACQUIRE)) \
		return CUDA_ERROR_NOT_INITIALIZED; \
} while (0)

void sim_lock(void);
void sim_unlock(void);
/* One call-log line (no-op without SIMCUDA_LOG); op is "alloc" or "free". */
void sim_log(const char *op, const char *fn, const char *kind, int dev,
	     uint64_t addr, uint64_t size, uint64_t charged, CUresult r);

/* --- objects.c: registry of opaque handles, so bad handles are rejected --- */
enum sim_type {
	SIM_CTX = 1, SIM_STREAM, SIM_EVENT, SIM_POOL, SIM_ARRAY, SIM_MIPMAP,
	SIM_VMM, SIM_MODULE, SIM_FUNC,
};
struct sim_obj { struct sim_node node; int type; };
void sim_obj_add(struct sim_obj *o, int type);
void sim_obj_del(struct sim_obj *o);
void *sim_obj_get(const void *handle, int type);

/* --- device.c: devices, contexts, charging -------------------------------- */
struct sim_ctx {
	struct sim_obj obj;
	int dev;
	int primary;
	int alive;
	unsigned flags;
};

struct sim_page;
struct sim_pool;
/* A device address space: the normal one, and a 32-bit window for the v1 API. */
struct sim_space {
	struct sim_arena arena;
	struct sim_page *pages; /* small pages, by address */
};
struct sim_device {
	uint64_t charged;          /* everything, context overheads included */
	struct sim_space space[2]; /* [0] normal, [1] 32-bit window */
	struct sim_pool *default_pool, *current_pool;
	struct sim_ctx primary;
	int primary_refs;
	unsigned primary_flags;
};
extern struct sim_device sim_dev[SIM_MAX_DEVICES];

int sim_device_init(int dev);
struct sim_ctx *sim_ctx_current(void);
/* Device of the current context, or CUDA_ERROR_INVALID_CONTEXT. */
CUresult sim_current_device(int *dev);
CUresult sim_charge(int dev, uint64_t bytes);
void sim_uncharge(int dev, uint64_t bytes);

/* --- memory.c: device memory, allocation registry ------------------------- */
enum sim_kind {
	SIM_K_DEVICE, SIM_K_MANAGED, SIM_K_HOST, SIM_K_HOST_REGISTER,
	SIM_K_ASYNC, SIM_K_VMM_MAP, SIM_K_FOREIGN,
};
struct sim_chunk;
struct sim_vmm;
struct sim_alloc {
	struct sim_node node;   /* key = address, len = extent (rsize) */
	enum sim_kind kind;
	int dev;                /* -1 for host memory */
	uint64_t size;          /* requested */
	uint64_t rsize;         /* rounded: what it occupies */
	unsigned flags;         /* host alloc / register flags */
	int low;                /* device memory in the 32-bit window */
	struct sim_page *page;  /* small device allocation */
	struct sim_pool *pool;  /* async */
	struct sim_chunk *chunk;
	struct sim_vmm *vmm;    /* mapping */
	struct sim_ctx *ctx;    /* current when it was made */
};
struct sim_alloc *sim_alloc_find(uint64_t addr);
struct sim_alloc *sim_alloc_containing(uint64_t addr);
void sim_alloc_insert(struct sim_alloc *a);
void sim_alloc_remove(struct sim_alloc *a);
/* Whether [addr, addr+size) overlaps a registered allocation. */
int sim_alloc_overlaps(uint64_t addr, uint64_t size);
/* Device bytes for size under the charging rules: placed, charged. */
CUresult sim_devmem_get(int dev, int low, uint64_t size, uint64_t *addr,
			uint64_t *rsize, struct sim_page **page, uint64_t *charged);
uint64_t sim_devmem_put(int dev, int low, uint64_t addr, uint64_t rsize, struct sim_page *page);
/* Address space only, whole pages of the device's normal range. */
uint64_t sim_space_get(int dev, uint64_t size);
void sim_space_put(int dev, uint64_t addr, uint64_t size);

/* --- pool.c ------------------------------------------------------------- */
int sim_pool_default_init(int dev);
void sim_pool_release_device(int dev, const char *fn);
void sim_pool_free(struct sim_alloc *a, const char *fn);

/* --- stream.c ------------------------------------------------------------ */
/*
 * Resolves a stream handle (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * created stream) to its device and whether it is capturing; ptsz says the
 * caller was a _ptsz variant, for which 0 is the per-thread stream.
 */
CUresult sim_stream_device(CUstream s, int ptsz, int *dev, int *capturing);

/* --- vmm.c / host.c ------------------------------------------------------ */
void sim_vmm_init(void);
void sim_ipc_init(void);

#endif
