/*
 * nvtx.c - NVTX v3 injection: the program's NVTX ranges, marks and thread
 * names become range records (ranges.c), with no change to the program.
 *
 * How NVTX finds us. NVTX v3 is header-only (the CUDA toolkit's nvtx3/):
 * each library that uses it has its own copy of its globals, a table of
 * function pointers that start as "init" stubs. The first NVTX call of a
 * copy reads NVTX_INJECTION64_PATH, dlopen()s that library, looks up
 * InitializeInjectionNvtx2 and calls it with the copy's nvtxGetExportTable
 * (nvtxDetail/nvtxInit.h); the export table's GetModuleFunctionTable hands
 * out, per module (CORE, CORE2, CUDA, ...), an array of pointers to the
 * copy's function pointer slots, indexed by callback id (NVTX_CBID_*). The
 * tool writes its functions into the slots it implements; the copy sets
 * the rest to no-ops. `memtrace run` sets NVTX_INJECTION64_PATH to
 * libmemtrace.so itself: already preloaded, dlopen() returns this very
 * instance, and each copy of NVTX in the process (the program's, each
 * library's) calls InitializeInjectionNvtx2 once.
 *
 * Chaining. When the user had set NVTX_INJECTION64_PATH (their own tool,
 * Nsight Systems' injection), `memtrace run` passes it on in
 * MEMTRACE_NVTX_CHAIN. Then, at each copy's initialization, memtrace loads
 * that library (once) and calls its InitializeInjectionNvtx2 with an
 * export table of its own: for CORE and CORE2 the slots it hands out are
 * memtrace's shadow slots, for every other module the copy's own (memtrace
 * does not record those). memtrace's functions record, then call the
 * shadow slot the tool filled, and return the tool's answer: both see
 * every call. Range ids and domain/string handles are the tool's when it
 * gives one (memtrace keeps its own inside the handles it returns: the
 * program passes memtrace's handle back, memtrace passes the tool's on).
 * A library that fails to load, lacks the entry point or whose init
 * returns 0 is said once on stderr; memtrace goes on alone. NVTX's memory
 * extension (nvtx-mem.c) chains to the same library, through its own
 * entry point.
 *
 * The types below are NVTX's ABI (nvtxDetail/nvtxTypes.h, nvToolsExt.h),
 * copied so that the recorder builds where the nvtx3 headers are missing;
 * the tests build their clients with the real headers.
 *
 * Misuse is recorded as it happened and left to the analyzer to report (a
 * pop with nothing open, ranges left open at exit, an end on another
 * thread): the recorder keeps no table of open ranges. A pop with nothing
 * open on the thread returns -1, as NVTX documents.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "nvtx.h"
#include "ranges.h"

/* --- NVTX's ABI ---------------------------------------------------------- */

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;           /* array of pointers to slots */
typedef const void *(*nvtx_get_export_table)(uint32_t id);
typedef int (*nvtx_init_fn)(nvtx_get_export_table get);

enum { ETID_CALLBACKS = 1, ETID_VERSIONINFO = 3 };
enum { MODULE_CORE = 1, MODULE_CORE2 = 5, MODULE_SIZE = 7 };

struct export_callbacks {
	size_t struct_size;
	int (*get_module_table)(int module, nvtx_table *out, unsigned int *size);
};

enum core_cbid {
	CORE_MarkEx = 1, CORE_MarkA, CORE_MarkW, CORE_RangeStartEx, CORE_RangeStartA,
	CORE_RangeStartW, CORE_RangeEnd, CORE_RangePushEx, CORE_RangePushA, CORE_RangePushW,
	CORE_RangePop, CORE_NameCategoryA, CORE_NameCategoryW, CORE_NameOsThreadA,
	CORE_NameOsThreadW, CORE_SIZE
};
enum core2_cbid {
	CORE2_DomainMarkEx = 1, CORE2_DomainRangeStartEx, CORE2_DomainRangeEnd,
	CORE2_DomainRangePushEx, CORE2_DomainRangePop, CORE2_DomainResourceCreate,
	CORE2_DomainResourceDestroy, CORE2_DomainNameCategoryA, CORE2_DomainNameCategoryW,
	CORE2_DomainRegisterStringA, CORE2_DomainRegisterStringW, CORE2_DomainCreateA,
	CORE2_DomainCreateW, CORE2_DomainDestroy, CORE2_Initialize, CORE2_SIZE
};

enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };

struct event_attr {                     /* nvtxEventAttributes_v2 */
	uint16_t version;
	uint16_t size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	uint64_t payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};

/* What memtrace hands out as an nvtxDomainHandle_t or nvtxStringHandle_t:
   its own string id and the chained tool's handle. Never freed (domains
   and registered strings live as long as the program, as in NVTX). */
struct handle {
	uint32_t magic;
	uint32_t id;                    /* MT_REC_STRING id, 0: not written */
	void *chained;
	char *text;                     /* a domain's name, for a later file */
};
#define HANDLE_MAGIC 0x6d74684eu

/* The time of the call being recorded: one clock read per call. */
static __thread uint64_t call_now;

static struct mt_thread *enter(void)
{
	struct mt_thread *t = mt_thread();

	if (t)
		call_now = mt_now();
	return t;
}

/* --- the chained tool ---------------------------------------------------- */

static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;
static int chain_tried, chain_ok;
static nvtx_init_fn chain_init;
static nvtx_fn shadow_core[CORE_SIZE + 1], shadow_core2[CORE2_SIZE + 1];
static nvtx_fn *shadow_core_tab[CORE_SIZE + 1], *shadow_core2_tab[CORE2_SIZE + 1];
static nvtx_get_export_table current_get;      /* during a chained init */
static struct export_callbacks chain_callbacks;

#define CHAINED(tab, id, type) ((type)__atomic_load_n(&(tab)[id], __ATOMIC_ACQUIRE))

static int chain_get_module_table(int module, nvtx_table *out, unsigned int *size)
{
	if (module == MODULE_CORE || module == MODULE_CORE2) {
		if (out)
			*out = module == MODULE_CORE ? shadow_core_tab : shadow_core2_tab;
		if (size)
			*size = module == MODULE_CORE ? CORE_SIZE : CORE2_SIZE;
		return 1;
	}
	const struct export_callbacks *real = current_get ? current_get(ETID_CALLBACKS) : NULL;
	return real && real->get_module_table ? real->get_module_table(module, out, size) : 0;
}

static const void *chain_get_export_table(uint32_t id)
{
	if (id == ETID_CALLBACKS)
		return &chain_callbacks;
	return current_get ? current_get(id) : NULL;
}

static int warned_chain;
static void *chain_lib;

/* Loads MEMTRACE_NVTX_CHAIN, once; chain_lock held. */
static void chain_load(void)
{
	const char *path = getenv("MEMTRACE_NVTX_CHAIN");

	if (chain_tried || !path || !*path)
		return;
	chain_tried = 1;
	for (int i = 0; i <= CORE_SIZE; i++)
		shadow_core_tab[i] = i && i < CORE_SIZE ? &shadow_core[i] : NULL;
	for (int i = 0; i <= CORE2_SIZE; i++)
		shadow_core2_tab[i] = i && i < CORE2_SIZE ? &shadow_core2[i] : NULL;
	chain_callbacks.struct_size = sizeof chain_callbacks;
	chain_callbacks.get_module_table = chain_get_module_table;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		mt_warn_once(&warned_chain, "cannot load the NVTX injection library '%s' "
			     "(NVTX_INJECTION64_PATH before memtrace): %s; memtrace records "
			     "NVTX alone", path, e ? e : "?");
	} else if (!(chain_init = (nvtx_init_fn)dlsym(h, "InitializeInjectionNvtx2"))) {
		mt_warn_once(&warned_chain, "the NVTX injection library '%s' has no "
			     "InitializeInjectionNvtx2; memtrace records NVTX alone", path);
	} else {
		chain_ok = 1;
		chain_lib = h;
	}
}

/* Calls the chained library's init for this copy of NVTX. */
static void chain(nvtx_get_export_table get)
{
	pthread_mutex_lock(&chain_lock);
	chain_load();
	if (chain_ok) {
		current_get = get;
		int ok = chain_init(chain_get_export_table);
		current_get = NULL;
		if (!ok) {
			mt_warn_once(&warned_chain, "the NVTX injection library '%s' failed to "
				     "initialize; memtrace records NVTX alone",
				     getenv("MEMTRACE_NVTX_CHAIN"));
			chain_ok = 0;
			memset(shadow_core, 0, sizeof shadow_core);
			memset(shadow_core2, 0, sizeof shadow_core2);
		}
	}
	pthread_mutex_unlock(&chain_lock);
}

void *mt_nvtx_chain_lib(void)
{
	pthread_mutex_lock(&chain_lock);
	chain_load();
	void *h = chain_ok ? chain_lib : NULL;
	pthread_mutex_unlock(&chain_lock);
	return h;
}

/* --- recording ----------------------------------------------------------- */

static uint32_t handle_id(struct mt_thread *t, const void *p)
{
	struct handle *h = (struct handle *)p;

	if (!h || h->magic != HANDLE_MAGIC)
		return 0;
	/* ids belong to a file: the string is interned again (cheaply) */
	return h->text ? mt_string_id(t, call_now, h->text, strlen(h->text)) : 0;
}

static void *handle_chained(const void *p)
{
	const struct handle *h = p;
	return h && h->magic == HANDLE_MAGIC ? h->chained : (void *)p;
}

void *mt_nvtx_chained(const void *handle)
{
	return handle_chained(handle);
}

const char *mt_nvtx_text(const void *handle)
{
	const struct handle *h = handle;
	return h && h->magic == HANDLE_MAGIC ? h->text : NULL;
}

static uint32_t attr_message(struct mt_thread *t, const struct event_attr *a)
{
	if (!a || a->size < offsetof(struct event_attr, message) + sizeof(void *))
		return 0;
	switch (a->message_type) {
	case MSG_ASCII:
		return a->message.ascii ? mt_string_id(t, call_now, a->message.ascii, strlen(a->message.ascii)) : 0;
	case MSG_UNICODE:
		return mt_string_id_w(t, call_now, a->message.unicode);
	case MSG_REGISTERED:
		return handle_id(t, a->message.registered);
	}
	return 0;
}

/* The attributes the chained tool gets: a registered message carries the
   tool's string handle, not memtrace's. */
static const struct event_attr *attr_for_chain(const struct event_attr *a, struct event_attr *copy)
{
	if (!a || a->size < offsetof(struct event_attr, message) + sizeof(void *) ||
	    a->message_type != MSG_REGISTERED)
		return a;
	memcpy(copy, a, sizeof *copy);
	copy->message.registered = handle_chained(a->message.registered);
	return copy;
}

static void record(int op, uint32_t domain_id_or_0, const void *domain, uint32_t message,
		   uint64_t id, int has_id, struct mt_thread *t)
{
	uint32_t d = domain ? handle_id(t, domain) : domain_id_or_0;
	mt_range_write(t, call_now, op, MT_ORIGIN_NVTX, d, message, id, has_id);
}

/* CORE */
static void mark_ex(const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;

	if (t)
		record(MT_RANGE_MARK, 0, NULL, attr_message(t, a), 0, 0, t);
	void (*f)(const void *) = CHAINED(shadow_core, CORE_MarkEx, void (*)(const void *));
	if (f)
		f(attr_for_chain(a, &c));
}

static void mark_a(const char *m)
{
	struct mt_thread *t = enter();

	if (t)
		record(MT_RANGE_MARK, 0, NULL, m ? mt_string_id(t, call_now, m, strlen(m)) : 0, 0, 0, t);
	void (*f)(const char *) = CHAINED(shadow_core, CORE_MarkA, void (*)(const char *));
	if (f)
		f(m);
}

static void mark_w(const wchar_t *m)
{
	struct mt_thread *t = enter();

	if (t)
		record(MT_RANGE_MARK, 0, NULL, mt_string_id_w(t, call_now, m), 0, 0, t);
	void (*f)(const wchar_t *) = CHAINED(shadow_core, CORE_MarkW, void (*)(const wchar_t *));
	if (f)
		f(m);
}

/* A start: the chained tool's id when it gives one, else memtrace's. */
static uint64_t start_common(struct mt_thread *t, uint32_t domain, uint32_t message,
			     uint64_t chained_id, int has_chained)
{
	uint64_t id = has_chained && chained_id ? chained_id : mt_range_new_id();

	if (t)
		mt_range_write(t, call_now, MT_RANGE_START, MT_ORIGIN_NVTX, domain, message, id, 1);
	return id;
}

static uint64_t range_start_ex(const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;
	uint64_t (*f)(const void *) = CHAINED(shadow_core, CORE_RangeStartEx, uint64_t (*)(const void *));
	uint64_t cid = f ? f(attr_for_chain(a, &c)) : 0;

	return start_common(t, 0, t ? attr_message(t, a) : 0, cid, f != NULL);
}

static uint64_t range_start_a(const char *m)
{
	struct mt_thread *t = enter();
	uint64_t (*f)(const char *) = CHAINED(shadow_core, CORE_RangeStartA, uint64_t (*)(const char *));
	uint64_t cid = f ? f(m) : 0;

	return start_common(t, 0, t && m ? mt_string_id(t, call_now, m, strlen(m)) : 0, cid, f != NULL);
}

static uint64_t range_start_w(const wchar_t *m)
{
	struct mt_thread *t = enter();
	uint64_t (*f)(const wchar_t *) = CHAINED(shadow_core, CORE_RangeStartW, uint64_t (*)(const wchar_t *));
	uint64_t cid = f ? f(m) : 0;

	return start_common(t, 0, t ? mt_string_id_w(t, call_now, m) : 0, cid, f != NULL);
}

static void range_end(uint64_t id)
{
	struct mt_thread *t = enter();

	if (t)
		mt_range_write(t, call_now, MT_RANGE_END, MT_ORIGIN_NVTX, 0, 0, id, 1);
	void (*f)(uint64_t) = CHAINED(shadow_core, CORE_RangeEnd, void (*)(uint64_t));
	if (f)
		f(id);
}

static int push_common(struct mt_thread *t, uint32_t domain, uint32_t message, int chained,
		       int has_chained)
{
	int depth = mt_range_depth(1);

	if (t)
		mt_range_write(t, call_now, MT_RANGE_PUSH, MT_ORIGIN_NVTX, domain, message, 0, 0);
	return has_chained ? chained : depth;
}

static int range_push_ex(const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;
	uint32_t m = t ? attr_message(t, a) : 0;
	int (*f)(const void *) = CHAINED(shadow_core, CORE_RangePushEx, int (*)(const void *));

	return push_common(t, 0, m, f ? f(attr_for_chain(a, &c)) : 0, f != NULL);
}

static int range_push_a(const char *msg)
{
	struct mt_thread *t = enter();
	uint32_t m = t && msg ? mt_string_id(t, call_now, msg, strlen(msg)) : 0;
	int (*f)(const char *) = CHAINED(shadow_core, CORE_RangePushA, int (*)(const char *));

	return push_common(t, 0, m, f ? f(msg) : 0, f != NULL);
}

static int range_push_w(const wchar_t *msg)
{
	struct mt_thread *t = enter();
	uint32_t m = t ? mt_string_id_w(t, call_now, msg) : 0;
	int (*f)(const wchar_t *) = CHAINED(shadow_core, CORE_RangePushW, int (*)(const wchar_t *));

	return push_common(t, 0, m, f ? f(msg) : 0, f != NULL);
}

static int pop_common(struct mt_thread *t, uint32_t domain, int chained, int has_chained)
{
	int depth = mt_range_depth(-1);

	if (t)
		mt_range_write(t, call_now, MT_RANGE_POP, MT_ORIGIN_NVTX, domain, 0, 0, 0);
	return has_chained ? chained : depth;
}

static int range_pop(void)
{
	struct mt_thread *t = enter();
	int (*f)(void) = CHAINED(shadow_core, CORE_RangePop, int (*)(void));

	return pop_common(t, 0, f ? f() : 0, f != NULL);
}

static void name_os_thread_a(uint32_t tid, const char *name)
{
	struct mt_thread *t = enter();

	if (t)
		mt_range_write(t, call_now, MT_RANGE_NAME_THREAD, MT_ORIGIN_NVTX, 0,
			       name ? mt_string_id(t, call_now, name, strlen(name)) : 0, tid, 1);
	void (*f)(uint32_t, const char *) =
		CHAINED(shadow_core, CORE_NameOsThreadA, void (*)(uint32_t, const char *));
	if (f)
		f(tid, name);
}

static void name_os_thread_w(uint32_t tid, const wchar_t *name)
{
	struct mt_thread *t = enter();

	if (t)
		mt_range_write(t, call_now, MT_RANGE_NAME_THREAD, MT_ORIGIN_NVTX, 0, mt_string_id_w(t, call_now, name),
			       tid, 1);
	void (*f)(uint32_t, const wchar_t *) =
		CHAINED(shadow_core, CORE_NameOsThreadW, void (*)(uint32_t, const wchar_t *));
	if (f)
		f(tid, name);
}

/* CORE2: domains */
static void domain_mark_ex(const void *domain, const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;

	if (t)
		record(MT_RANGE_MARK, 0, domain, attr_message(t, a), 0, 0, t);
	void (*f)(void *, const void *) =
		CHAINED(shadow_core2, CORE2_DomainMarkEx, void (*)(void *, const void *));
	if (f)
		f(handle_chained(domain), attr_for_chain(a, &c));
}

static uint64_t domain_range_start_ex(const void *domain, const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;
	uint64_t (*f)(void *, const void *) =
		CHAINED(shadow_core2, CORE2_DomainRangeStartEx, uint64_t (*)(void *, const void *));
	uint64_t cid = f ? f(handle_chained(domain), attr_for_chain(a, &c)) : 0;

	return start_common(t, t ? handle_id(t, domain) : 0, t ? attr_message(t, a) : 0, cid,
			    f != NULL);
}

static void domain_range_end(const void *domain, uint64_t id)
{
	struct mt_thread *t = enter();

	if (t)
		mt_range_write(t, call_now, MT_RANGE_END, MT_ORIGIN_NVTX, handle_id(t, domain), 0, id, 1);
	void (*f)(void *, uint64_t) =
		CHAINED(shadow_core2, CORE2_DomainRangeEnd, void (*)(void *, uint64_t));
	if (f)
		f(handle_chained(domain), id);
}

static int domain_range_push_ex(const void *domain, const struct event_attr *a)
{
	struct mt_thread *t = enter();
	struct event_attr c;
	uint32_t d = t ? handle_id(t, domain) : 0, m = t ? attr_message(t, a) : 0;
	int (*f)(void *, const void *) =
		CHAINED(shadow_core2, CORE2_DomainRangePushEx, int (*)(void *, const void *));

	return push_common(t, d, m, f ? f(handle_chained(domain), attr_for_chain(a, &c)) : 0,
			   f != NULL);
}

static int domain_range_pop(const void *domain)
{
	struct mt_thread *t = enter();
	int (*f)(void *) = CHAINED(shadow_core2, CORE2_DomainRangePop, int (*)(void *));

	return pop_common(t, t ? handle_id(t, domain) : 0, f ? f(handle_chained(domain)) : 0,
			  f != NULL);
}

static struct handle *new_handle(const char *utf8, size_t len, void *chained)
{
	struct handle *h = calloc(1, sizeof *h);

	if (!h)
		return NULL;
	h->magic = HANDLE_MAGIC;
	h->chained = chained;
	h->text = strndup(utf8 ? utf8 : "", len);
	struct mt_thread *t = enter();
	if (t && h->text)
		h->id = mt_string_id(t, call_now, h->text, strlen(h->text));
	return h;
}

/* Handles are rare: a malloc'd copy is cheap enough. */
char *mt_nvtx_wide_utf8(const wchar_t *w)
{
	size_t n = w ? wcslen(w) : 0;
	char *s = malloc(n * 4 + 1), *q = s;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)w[i];

		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80) {
			*q++ = (char)c;
		} else if (c < 0x800) {
			*q++ = (char)(0xc0 | c >> 6);
			*q++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*q++ = (char)(0xe0 | c >> 12);
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		} else {
			*q++ = (char)(0xf0 | c >> 18);
			*q++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*q = 0;
	return s;
}

static void *domain_create_a(const char *name)
{
	void *(*f)(const char *) = CHAINED(shadow_core2, CORE2_DomainCreateA, void *(*)(const char *));
	void *c = f ? f(name) : NULL;

	return new_handle(name, name ? strlen(name) : 0, c);
}

static void *domain_create_w(const wchar_t *name)
{
	void *(*f)(const wchar_t *) = CHAINED(shadow_core2, CORE2_DomainCreateW, void *(*)(const wchar_t *));
	void *c = f ? f(name) : NULL;
	char *s = mt_nvtx_wide_utf8(name);
	void *h = new_handle(s, s ? strlen(s) : 0, c);

	free(s);
	return h;
}

static void domain_destroy(void *domain)
{
	void (*f)(void *) = CHAINED(shadow_core2, CORE2_DomainDestroy, void (*)(void *));

	if (f)
		f(handle_chained(domain));
	/* the handle stays: a record may still name it */
}

static void *register_string_a(const void *domain, const char *s)
{
	void *(*f)(void *, const char *) =
		CHAINED(shadow_core2, CORE2_DomainRegisterStringA, void *(*)(void *, const char *));
	void *c = f ? f(handle_chained(domain), s) : NULL;

	return new_handle(s, s ? strlen(s) : 0, c);
}

static void *register_string_w(const void *domain, const wchar_t *s)
{
	void *(*f)(void *, const wchar_t *) =
		CHAINED(shadow_core2, CORE2_DomainRegisterStringW, void *(*)(void *, const wchar_t *));
	void *c = f ? f(handle_chained(domain), s) : NULL;
	char *u = mt_nvtx_wide_utf8(s);
	void *h = new_handle(u, u ? strlen(u) : 0, c);

	free(u);
	return h;
}

/* Calls memtrace does not record go straight to the chained tool. */
static void *resource_create(const void *domain, void *attribs)
{
	void *(*f)(void *, void *) =
		CHAINED(shadow_core2, CORE2_DomainResourceCreate, void *(*)(void *, void *));
	return f ? f(handle_chained(domain), attribs) : NULL;
}

static void resource_destroy(void *r)
{
	void (*f)(void *) = CHAINED(shadow_core2, CORE2_DomainResourceDestroy, void (*)(void *));
	if (f)
		f(r);
}

static void name_category_a(uint32_t cat, const char *name)
{
	void (*f)(uint32_t, const char *) =
		CHAINED(shadow_core, CORE_NameCategoryA, void (*)(uint32_t, const char *));
	if (f)
		f(cat, name);
}

static void name_category_w(uint32_t cat, const wchar_t *name)
{
	void (*f)(uint32_t, const wchar_t *) =
		CHAINED(shadow_core, CORE_NameCategoryW, void (*)(uint32_t, const wchar_t *));
	if (f)
		f(cat, name);
}

static void domain_name_category_a(const void *d, uint32_t cat, const char *name)
{
	void (*f)(void *, uint32_t, const char *) =
		CHAINED(shadow_core2, CORE2_DomainNameCategoryA, void (*)(void *, uint32_t, const char *));
	if (f)
		f(handle_chained(d), cat, name);
}

static void domain_name_category_w(const void *d, uint32_t cat, const wchar_t *name)
{
	void (*f)(void *, uint32_t, const wchar_t *) =
		CHAINED(shadow_core2, CORE2_DomainNameCategoryW, void (*)(void *, uint32_t, const wchar_t *));
	if (f)
		f(handle_chained(d), cat, name);
}

static void initialize(const void *reserved)
{
	void (*f)(const void *) = CHAINED(shadow_core2, CORE2_Initialize, void (*)(const void *));
	if (f)
		f(reserved);
}

/* --- the entry point ----------------------------------------------------- */

static nvtx_fn const core_fns[CORE_SIZE] = {
	[CORE_MarkEx] = (nvtx_fn)mark_ex, [CORE_MarkA] = (nvtx_fn)mark_a,
	[CORE_MarkW] = (nvtx_fn)mark_w, [CORE_RangeStartEx] = (nvtx_fn)range_start_ex,
	[CORE_RangeStartA] = (nvtx_fn)range_start_a, [CORE_RangeStartW] = (nvtx_fn)range_start_w,
	[CORE_RangeEnd] = (nvtx_fn)range_end, [CORE_RangePushEx] = (nvtx_fn)range_push_ex,
	[CORE_RangePushA] = (nvtx_fn)range_push_a, [CORE_RangePushW] = (nvtx_fn)range_push_w,
	[CORE_RangePop] = (nvtx_fn)range_pop, [CORE_NameCategoryA] = (nvtx_fn)name_category_a,
	[CORE_NameCategoryW] = (nvtx_fn)name_category_w,
	[CORE_NameOsThreadA] = (nvtx_fn)name_os_thread_a,
	[CORE_NameOsThreadW] = (nvtx_fn)name_os_thread_w,
};

static nvtx_fn const core2_fns[CORE2_SIZE] = {
	[CORE2_DomainMarkEx] = (nvtx_fn)domain_mark_ex,
	[CORE2_DomainRangeStartEx] = (nvtx_fn)domain_range_start_ex,
	[CORE2_DomainRangeEnd] = (nvtx_fn)domain_range_end,
	[CORE2_DomainRangePushEx] = (nvtx_fn)domain_range_push_ex,
	[CORE2_DomainRangePop] = (nvtx_fn)domain_range_pop,
	[CORE2_DomainResourceCreate] = (nvtx_fn)resource_create,
	[CORE2_DomainResourceDestroy] = (nvtx_fn)resource_destroy,
	[CORE2_DomainNameCategoryA] = (nvtx_fn)domain_name_category_a,
	[CORE2_DomainNameCategoryW] = (nvtx_fn)domain_name_category_w,
	[CORE2_DomainRegisterStringA] = (nvtx_fn)register_string_a,
	[CORE2_DomainRegisterStringW] = (nvtx_fn)register_string_w,
	[CORE2_DomainCreateA] = (nvtx_fn)domain_create_a,
	[CORE2_DomainCreateW] = (nvtx_fn)domain_create_w,
	[CORE2_DomainDestroy] = (nvtx_fn)domain_destroy,
	[CORE2_Initialize] = (nvtx_fn)initialize,
};

static void fill(const struct export_callbacks *cb, int module, const nvtx_fn *fns, unsigned n)
{
	nvtx_table table = NULL;
	unsigned size = 0;

	if (!cb->get_module_table(module, &table, &size) || !table)
		return;
	/* size: the number of entries after the invalid one; an older NVTX
	   has fewer, a newer one more (left to it) */
	for (unsigned i = 1; i < n && i <= size; i++)
		if (fns[i] && table[i])
			*table[i] = fns[i];
}

MT_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get)
{
	const struct export_callbacks *cb = get ? get(ETID_CALLBACKS) : NULL;

	if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_table)
		return 0;
	mt_init();
	chain(get);
	fill(cb, MODULE_CORE, core_fns, CORE_SIZE);
	fill(cb, MODULE_CORE2, core2_fns, CORE2_SIZE);
	return 1;
}
