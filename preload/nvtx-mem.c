/*
 * nvtx-mem.c - NVTX's memory extension (nvToolsExtMem.h): the heaps a pool
 * allocator announces and the regions (sub-allocations) it registers in
 * them become MT_REC_NVTX_MEM records, with the stack of each call, so the
 * analyzer sees the pool's buffers and its free space (model/nvtxmem.c).
 *
 * How the extension finds us. An NVTX extension is header-only too, with
 * its own array of function slots per copy (nvtxExtImplMem_v1.h: slot
 * CBID + 1 of nvtxExtMemSlots; the first entry is the module's state).
 * The first call of a copy initializes NVTX's core (nvtx.c, through
 * InitializeInjectionNvtx2), then loads the library named by
 * NVTX_INJECTION64_PATH (libmemtrace.so: this very instance) and calls its
 * InitializeInjectionNvtxExtension with a module description
 * (nvtxExtTypes.h: module id, compatibility id, segments of slots). The
 * tool writes its functions into the slots it implements; the copy then
 * disables the rest. memtrace implements, for the memory module (id 1,
 * compatibility 0x0102), nvtxMemHeapRegister, Unregister, Reset and
 * nvtxMemRegionsRegister, Resize, Unregister; it leaves names and
 * permissions to a chained tool.
 *
 * Chaining. When MEMTRACE_NVTX_CHAIN names a library (nvtx.c loads it, once)
 * that has InitializeInjectionNvtxExtension too, memtrace calls it for
 * every module with the description it got, except that for the memory
 * module the slots it hands out are memtrace's shadow slots: memtrace's
 * functions call the tool's first, then record its answer; the slots
 * memtrace does not implement get the tool's functions directly. Heap and
 * region handles are the tool's when it gives them (recorded as given, so
 * the program's later calls name the same handles); without a tool, a
 * virtual-address heap's handle is its address (as nvToolsExtMem.h says)
 * and a region's its address. The calls memtrace does not record (region
 * names, permissions, nvToolsExtMemCudaRt.h's) that the tool implements
 * reach it through a pass-through that hands it its own domain handle;
 * slots after those NVTX may add later go to it directly. A tool whose
 * init returns 0 for the memory module is said once; memtrace goes on
 * alone.
 *
 * Misuse (a region outside its heap, an unknown heap or region) is recorded
 * as it happened and left to the analyzer to say: the recorder keeps no
 * table of heaps. The types below are nvToolsExtMem.h's ABI, copied as
 * nvtx.c does, so the recorder builds without the nvtx3 headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "nvtx.h"
#include "mt.h"

/* --- nvToolsExtMem.h's ABI ----------------------------------------------- */

enum { MODULE_MEM = 1, COMPAT_MEM = 0x0102 };
enum { SLOT_FRESH = 0, SLOT_LAST_STATE = 4 };   /* NVTX_EXTENSION_*: not functions */
enum {
	CB_HeapRegister = 0, CB_HeapUnregister, CB_HeapReset, CB_RegionsRegister,
	CB_RegionsResize, CB_RegionsUnregister, CB_MEM_OWN,   /* those memtrace records */
	CB_RegionsName = CB_MEM_OWN, CB_PermissionsAssign, CB_PermissionsCreate,
	CB_PermissionsDestroy, CB_PermissionsReset, CB_PermissionsBind, CB_PermissionsUnbind,
	CB_CudaGetProcessWidePermissions, CB_CudaGetDeviceWidePermissions, CB_CudaSetPeerAccess,
	CB_CudaMarkInitialized, CB_MEM_KNOWN                  /* nvToolsExtMem{,CudaRt}.h's */
};
enum { TYPE_VIRTUAL_ADDRESS = 1, REF_POINTER = 1, REF_HANDLE = 2 };
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };
#define HANDLE_NO_TOOL ((void *)(intptr_t)-1)

struct ext_segment {
	size_t id;
	size_t slot_count;
	intptr_t *slots;
};

struct ext_module_info {
	uint16_t nvtx_ver;
	uint16_t struct_size;
	uint16_t module_id;
	uint16_t compat_id;
	size_t nsegments;
	struct ext_segment *segments;
	void *get_export_function;
	const void *ext_info;
};

typedef int (*ext_init_fn)(struct ext_module_info *info);

struct vrange {                         /* nvtxMemVirtualRangeDesc_v1 */
	size_t size;
	const void *ptr;
};

struct heap_desc {                      /* nvtxMemHeapDesc_v1 */
	uint16_t compat;
	uint16_t struct_size;
	uint32_t reserved0;
	uint32_t usage;
	uint32_t type;
	size_t type_desc_size;
	const void *type_desc;
	uint32_t category;
	uint32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};

struct regions_register {               /* nvtxMemRegionsRegisterBatch_v1 */
	uint16_t compat;
	uint16_t struct_size;
	uint32_t type;
	void *heap;
	size_t count;
	size_t elem_size;
	const void *elems;                  /* struct vrange for virtual addresses */
	void **handles_out;
};

struct regions_resize {                 /* nvtxMemRegionsResizeBatch_v1 */
	uint16_t compat;
	uint16_t struct_size;
	uint32_t type;
	size_t count;
	size_t elem_size;
	const void *elems;
};

struct regions_unregister {             /* nvtxMemRegionsUnregisterBatch_v1 */
	uint16_t compat;
	uint16_t struct_size;
	uint32_t ref_type;
	size_t count;
	size_t elem_size;
	const void *elems;                  /* nvtxMemRegionRef_t: a pointer */
};

/* --- the chained tool ---------------------------------------------------- */

#define SHADOW_SLOTS 256
static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;
static intptr_t shadow[SHADOW_SLOTS];
static int warned_chain;

/* The tool's function in a shadow slot, NULL when it has none. */
static void *chained(int cb)
{
	intptr_t v = __atomic_load_n(&shadow[cb], __ATOMIC_ACQUIRE);
	return v > SLOT_LAST_STATE ? (void *)v : NULL;
}

/* The calls memtrace passes to the tool unrecorded, with its domain. */
static void pass_name(const void *d, const void *b)
{
	void (*f)(void *, const void *) = chained(CB_RegionsName);
	if (f)
		f(mt_nvtx_chained(d), b);
}

static void pass_assign(const void *d, const void *b)
{
	void (*f)(void *, const void *) = chained(CB_PermissionsAssign);
	if (f)
		f(mt_nvtx_chained(d), b);
}

static void *pass_create(const void *d, int32_t flags)
{
	void *(*f)(void *, int32_t) = chained(CB_PermissionsCreate);
	return f ? f(mt_nvtx_chained(d), flags) : NULL;
}

static void pass_destroy(const void *d, void *perm)
{
	void (*f)(void *, void *) = chained(CB_PermissionsDestroy);
	if (f)
		f(mt_nvtx_chained(d), perm);
}

static void pass_reset(const void *d, void *perm)
{
	void (*f)(void *, void *) = chained(CB_PermissionsReset);
	if (f)
		f(mt_nvtx_chained(d), perm);
}

static void pass_bind(const void *d, void *perm, uint32_t scope, uint32_t flags)
{
	void (*f)(void *, void *, uint32_t, uint32_t) = chained(CB_PermissionsBind);
	if (f)
		f(mt_nvtx_chained(d), perm, scope, flags);
}

static void pass_unbind(const void *d, uint32_t scope)
{
	void (*f)(void *, uint32_t) = chained(CB_PermissionsUnbind);
	if (f)
		f(mt_nvtx_chained(d), scope);
}

static void *pass_process_wide(const void *d)
{
	void *(*f)(void *) = chained(CB_CudaGetProcessWidePermissions);
	return f ? f(mt_nvtx_chained(d)) : NULL;
}

static void *pass_device_wide(const void *d, int device)
{
	void *(*f)(void *, int) = chained(CB_CudaGetDeviceWidePermissions);
	return f ? f(mt_nvtx_chained(d), device) : NULL;
}

static void pass_peer_access(const void *d, void *perm, int peer, uint32_t flags)
{
	void (*f)(void *, void *, int, uint32_t) = chained(CB_CudaSetPeerAccess);
	if (f)
		f(mt_nvtx_chained(d), perm, peer, flags);
}

static void pass_mark_initialized(const void *d, void *stream, uint8_t per_thread, const void *b)
{
	void (*f)(void *, void *, uint8_t, const void *) = chained(CB_CudaMarkInitialized);
	if (f)
		f(mt_nvtx_chained(d), stream, per_thread, b);
}

static void *const pass_fns[CB_MEM_KNOWN] = {
	[CB_RegionsName] = (void *)pass_name,
	[CB_PermissionsAssign] = (void *)pass_assign,
	[CB_PermissionsCreate] = (void *)pass_create,
	[CB_PermissionsDestroy] = (void *)pass_destroy,
	[CB_PermissionsReset] = (void *)pass_reset,
	[CB_PermissionsBind] = (void *)pass_bind,
	[CB_PermissionsUnbind] = (void *)pass_unbind,
	[CB_CudaGetProcessWidePermissions] = (void *)pass_process_wide,
	[CB_CudaGetDeviceWidePermissions] = (void *)pass_device_wide,
	[CB_CudaSetPeerAccess] = (void *)pass_peer_access,
	[CB_CudaMarkInitialized] = (void *)pass_mark_initialized,
};

/* Hands this module to the chained tool, if it has an extension entry.
   Returns 0 when the tool's init failed for a module memtrace does not
   implement (its answer is then the module's), else 1. */
static int chain(struct ext_module_info *info, int mem)
{
	void *lib = mt_nvtx_chain_lib();
	ext_init_fn init = lib ? (ext_init_fn)dlsym(lib, "InitializeInjectionNvtxExtension") : NULL;

	if (!init)
		return 1;
	if (!mem)
		return init(info);
	struct ext_segment seg[8];
	struct ext_module_info mine = *info;
	size_t n = info->nsegments < 8 ? info->nsegments : 8;

	pthread_mutex_lock(&chain_lock);
	memcpy(seg, info->segments, n * sizeof *seg);
	if (n) {
		seg[0].slots = shadow;
		if (seg[0].slot_count > SHADOW_SLOTS)
			seg[0].slot_count = SHADOW_SLOTS;
	}
	mine.segments = seg;
	mine.nsegments = n;
	if (!init(&mine)) {
		mt_warn_once(&warned_chain, "the NVTX injection library '%s' failed to initialize "
			     "NVTX's memory extension; memtrace records it alone",
			     getenv("MEMTRACE_NVTX_CHAIN"));
		memset(shadow, 0, sizeof shadow);
	} else if (n) {
		/* what memtrace does not record goes to the tool: through a
		   pass-through where the domain handle is known to be first */
		for (size_t i = CB_MEM_OWN; i < seg[0].slot_count && i < info->segments[0].slot_count; i++)
			if (shadow[i] > SLOT_LAST_STATE)
				info->segments[0].slots[i] = i < CB_MEM_KNOWN ? (intptr_t)pass_fns[i] : shadow[i];
	}
	pthread_mutex_unlock(&chain_lock);
	return 1;
}

/* --- recording ----------------------------------------------------------- */

struct call {
	struct mt_thread *t;
	uint64_t now;
	uint32_t stack;
	uint64_t domain;
};

/* The calling thread, the time and the stack of the call; t NULL when
   nothing is recorded. */
static struct call enter(const void *domain)
{
	struct call c = { mt_thread(), 0, 0, (uint64_t)(uintptr_t)domain };

	if (c.t) {
		c.now = mt_now();
		if (mt_writer_ready(c.t, c.now))
			c.stack = mt_stack_capture(c.t);
		else
			c.t = NULL;
	}
	return c;
}

static size_t cut(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > MT_STRING_MAX) {
		n = MT_STRING_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;    /* not in the middle of a UTF-8 sequence */
	}
	return n;
}

static void record(const struct call *c, int op, uint64_t heap, uint64_t addr, uint64_t size,
		   uint64_t handle, uint32_t usage, uint32_t type, const char *dname, const char *name)
{
	size_t dl = cut(dname), nl = cut(name);
	size_t bytes = (sizeof(struct mt_nvtx_mem) + dl + nl + 7) & ~(size_t)7;
	uint32_t delta;
	struct mt_nvtx_mem *r;

	if (!c->t || !(r = mt_writer_reserve(c->t, bytes, c->now, &delta)))
		return;
	memset((char *)r + bytes - 8, 0, 8);    /* the names' padding */
	r->lh.size = (uint32_t)bytes;
	r->time_delta = delta;
	r->stack_id = c->stack;
	r->domain = c->domain;
	r->heap = heap;
	r->addr = addr;
	r->size = size;
	r->handle = handle;
	r->usage = usage;
	r->type = type;
	r->domain_len = (uint16_t)dl;
	r->name_len = (uint16_t)nl;
	r->pad = 0;
	if (dl)
		memcpy(r + 1, dname, dl);
	if (nl)
		memcpy((char *)(r + 1) + dl, name, nl);
	mt_writer_commit(r, (struct mt_head){ MT_REC_NVTX_MEM, 0, (uint8_t)op, 0 });
}

/* The i-th virtual range of a batch, or 0, 0 when its elements are not
   virtual ranges (another type, or too small to be one). */
static struct vrange range_at(uint32_t type, const void *elems, size_t elem_size, size_t i)
{
	if (type != TYPE_VIRTUAL_ADDRESS || !elems || elem_size < sizeof(struct vrange))
		return (struct vrange){ 0, NULL };
	return *(const struct vrange *)((const char *)elems + i * elem_size);
}

static void *heap_register(const void *domain, const struct heap_desc *d)
{
	struct call c = enter(domain);
	void *(*f)(void *, const void *) = chained(CB_HeapRegister);
	struct heap_desc copy;
	void *h = NULL;

	if (d && d->message_type == MSG_REGISTERED) {
		copy = *d;
		copy.message.registered = mt_nvtx_chained(d->message.registered);
	}
	if (f)
		h = f(mt_nvtx_chained(domain), d && d->message_type == MSG_REGISTERED ? &copy : d);
	if (!d)
		return h ? h : HANDLE_NO_TOOL;
	struct vrange v = d->type_desc_size >= sizeof(struct vrange) ?
			  range_at(d->type, d->type_desc, sizeof(struct vrange), 0) :
			  (struct vrange){ 0, NULL };
	if (!h || h == HANDLE_NO_TOOL)
		h = v.ptr ? (void *)v.ptr : HANDLE_NO_TOOL;
	if (c.t) {
		char *wide = d->message_type == MSG_UNICODE && d->message.unicode ?
			     mt_nvtx_wide_utf8(d->message.unicode) : NULL;
		const char *name = d->message_type == MSG_ASCII ? d->message.ascii :
				   d->message_type == MSG_REGISTERED ? mt_nvtx_text(d->message.registered) :
				   wide;
		record(&c, MT_NVMEM_HEAP_REGISTER, (uint64_t)(uintptr_t)h, (uint64_t)(uintptr_t)v.ptr,
		       v.size, 0, d->usage, d->type, mt_nvtx_text(domain), name);
		free(wide);
	}
	return h;
}

static void heap_op(int op, int cb, const void *domain, void *heap)
{
	struct call c = enter(domain);
	void (*f)(void *, void *) = chained(cb);

	if (f)
		f(mt_nvtx_chained(domain), heap);
	record(&c, op, (uint64_t)(uintptr_t)heap, 0, 0, 0, 0, 0, NULL, NULL);
}

static void heap_unregister(const void *domain, void *heap)
{
	heap_op(MT_NVMEM_HEAP_UNREGISTER, CB_HeapUnregister, domain, heap);
}

static void heap_reset(const void *domain, void *heap)
{
	heap_op(MT_NVMEM_HEAP_RESET, CB_HeapReset, domain, heap);
}

static void regions_register(const void *domain, const struct regions_register *b)
{
	struct call c = enter(domain);
	void (*f)(void *, const void *) = chained(CB_RegionsRegister);

	/* the default handles first: the tool may give its own */
	for (size_t i = 0; b && b->handles_out && i < b->count; i++)
		b->handles_out[i] = (void *)range_at(b->type, b->elems, b->elem_size, i).ptr;
	if (f)
		f(mt_nvtx_chained(domain), b);
	for (size_t i = 0; c.t && b && i < b->count; i++) {
		struct vrange v = range_at(b->type, b->elems, b->elem_size, i);
		uint64_t handle = b->handles_out ? (uint64_t)(uintptr_t)b->handles_out[i] :
				  (uint64_t)(uintptr_t)v.ptr;

		record(&c, MT_NVMEM_REGION_REGISTER, (uint64_t)(uintptr_t)b->heap,
		       (uint64_t)(uintptr_t)v.ptr, v.size, handle, 0, b->type, NULL, NULL);
	}
}

static void regions_resize(const void *domain, const struct regions_resize *b)
{
	struct call c = enter(domain);
	void (*f)(void *, const void *) = chained(CB_RegionsResize);

	if (f)
		f(mt_nvtx_chained(domain), b);
	for (size_t i = 0; c.t && b && i < b->count; i++) {
		struct vrange v = range_at(b->type, b->elems, b->elem_size, i);

		record(&c, MT_NVMEM_REGION_RESIZE, 0, (uint64_t)(uintptr_t)v.ptr, v.size, 0, 0,
		       b->type, NULL, NULL);
	}
}

static void regions_unregister(const void *domain, const struct regions_unregister *b)
{
	struct call c = enter(domain);
	void (*f)(void *, const void *) = chained(CB_RegionsUnregister);

	if (f)
		f(mt_nvtx_chained(domain), b);
	for (size_t i = 0; c.t && b && b->elems && b->elem_size >= sizeof(void *) && i < b->count; i++) {
		uint64_t ref = (uint64_t)(uintptr_t)*(void *const *)((const char *)b->elems + i * b->elem_size);

		record(&c, MT_NVMEM_REGION_UNREGISTER, 0, b->ref_type == REF_HANDLE ? 0 : ref, 0,
		       b->ref_type == REF_HANDLE ? ref : 0, b->ref_type, 0, NULL, NULL);
	}
}

/* --- the entry point ----------------------------------------------------- */

static void *const mem_fns[CB_MEM_OWN] = {
	[CB_HeapRegister] = (void *)heap_register,
	[CB_HeapUnregister] = (void *)heap_unregister,
	[CB_HeapReset] = (void *)heap_reset,
	[CB_RegionsRegister] = (void *)regions_register,
	[CB_RegionsResize] = (void *)regions_resize,
	[CB_RegionsUnregister] = (void *)regions_unregister,
};

MT_EXPORT int InitializeInjectionNvtxExtension(struct ext_module_info *info)
{
	if (!info || info->struct_size < sizeof *info || !info->segments)
		return 0;
	mt_init();
	int mem = info->module_id == MODULE_MEM && info->compat_id == COMPAT_MEM &&
		  info->nsegments >= 1 && info->segments[0].slots;
	int ok = chain(info, mem);

	if (!mem)
		return ok;
	for (size_t i = 0; i < CB_MEM_OWN && i < info->segments[0].slot_count; i++)
		info->segments[0].slots[i] = (intptr_t)mem_fns[i];
	return 1;
}
