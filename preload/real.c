/*
 * real.c - where the real CUDA functions are.
 *
 * Each wrapped variant has one slot holding its real function. A slot is
 * filled by whoever learns it first: resolve.c when the driver answers a
 * dlsym or cuGetProcAddress look-up (the pointer the driver really handed
 * out), or lazily here, for a program that bound to memtrace's exported
 * symbol directly: dlsym(RTLD_NEXT) from this library, and when the next
 * library is not in the global scope (loaded RTLD_LOCAL as a dependency of a
 * dlopened object) the already loaded libcuda.so.1 / libcudart.so.N by name.
 *
 * The real dlsym is the next one after this library (mt_real_init): glibc
 * does not export its internal __libc_dlsym / _dl_sym, and this library's
 * own dlsym (resolve.c) must not call itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include "mt.h"

void *(*mt_real_dlsym)(void *, const char *);

static const char *const variant_names[MT_V_COUNT] = {
#define MT_VARIANT_NAME(v, base, version, ptsz) [MT_V_##v] = #v,
	MT_DRIVER_VARIANTS(MT_VARIANT_NAME)
#undef MT_VARIANT_NAME
#define MT_RUNTIME_NAME(name) [MT_V_##name] = #name,
	MT_RUNTIME_FUNCTIONS(MT_RUNTIME_NAME)
#undef MT_RUNTIME_NAME
};

static void *_Atomic slots[MT_V_COUNT];
static uintptr_t own_start, own_end;

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo && me < hi) {
			own_start = lo;
			own_end = hi;
			return 1;
		}
	}
	return 0;
}

/*
 * The next dlsym after this library, which the stub jumps to: glibc's, or
 * another preload tool's that comes after libmemtrace in LD_PRELOAD.
 * dlvsym finds only versioned definitions (glibc's, or a tool exporting
 * its own under glibc's versions, as this library does); a tool's plain
 * unversioned dlsym is found by an unversioned RTLD_NEXT look-up, made
 * here from this library's code with the dlsym dlvsym found. Only dlvsym
 * and dlsym are called: no sanitizer intercepts them, so this is safe while
 * a sanitizer's runtime is still setting itself up (resolve.c).
 */
void mt_real_find_dlsym(void)
{
	typedef void *(*dlsym_fn)(void *, const char *);
	dlsym_fn vsym, next;

	if (mt_real_dlsym)
		return;
	vsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!vsym)
		vsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (!vsym)
		vsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
	if (!vsym)
		return;
	next = (dlsym_fn)vsym(RTLD_NEXT, "dlsym");
	__atomic_store_n(&mt_real_dlsym, next && !mt_is_own((void *)next) ? next : vsym, __ATOMIC_RELEASE);
}

/* The real dlsym, and this library's own code for mt_is_own. */
void mt_real_init(void)
{
	if (!own_end)
		dl_iterate_phdr(find_own, (void *)(uintptr_t)&mt_real_init);
	mt_real_find_dlsym();
}

int mt_is_own(const void *p)
{
	return (uintptr_t)p >= own_start && (uintptr_t)p < own_end;
}

static void *loaded(const char *const *sonames)
{
	for (; *sonames; sonames++) {
		void *h = dlopen(*sonames, RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			return h;   /* a reference we keep: the library stays */
	}
	return NULL;
}

static void *driver_handle(void)
{
	static void *_Atomic handle;
	static const char *const names[] = { "libcuda.so.1", "libcuda.so", NULL };
	void *h = atomic_load_explicit(&handle, memory_order_acquire);
	if (!h && (h = loaded(names)))
		atomic_store_explicit(&handle, h, memory_order_release);
	return h;
}

static void *runtime_handle(void)
{
	static void *_Atomic handle;
	static const char *const names[] = {
		"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL
	};
	void *h = atomic_load_explicit(&handle, memory_order_acquire);
	if (!h && (h = loaded(names)))
		atomic_store_explicit(&handle, h, memory_order_release);
	return h;
}

void *mt_driver_sym(const char *name)
{
	void *h = driver_handle();
	return h && mt_real_dlsym ? mt_real_dlsym(h, name) : NULL;
}

void *mt_runtime_sym(const char *name)
{
	void *fn;

	if (!mt_real_dlsym)
		return NULL;
	fn = mt_real_dlsym(RTLD_NEXT, name);
	if (!fn || mt_is_own(fn)) {
		void *h = runtime_handle();
		fn = h ? mt_real_dlsym(h, name) : NULL;
	}
	return fn && !mt_is_own(fn) ? fn : NULL;
}

void mt_real_set(enum mt_variant v, void *fn)
{
	void *expected = NULL;
	if (fn && !mt_is_own(fn))
		atomic_compare_exchange_strong(&slots[v], &expected, fn);
}

void *mt_real_get(enum mt_variant v)
{
	void *fn = atomic_load_explicit(&slots[v], memory_order_acquire);
	if (MT_LIKELY(fn))
		return fn;
	if (!mt_real_dlsym)
		mt_real_init();
	if (!mt_real_dlsym)
		return NULL;
	fn = mt_real_dlsym(RTLD_NEXT, variant_names[v]);
	if (!fn || mt_is_own(fn)) {
		void *h = v < MT_V_cudaMalloc ? driver_handle() : runtime_handle();
		fn = h ? mt_real_dlsym(h, variant_names[v]) : NULL;
	}
	mt_real_set(v, fn);
	return atomic_load_explicit(&slots[v], memory_order_acquire);
}

const char *mt_variant_name(enum mt_variant v)
{
	return variant_names[v];
}
