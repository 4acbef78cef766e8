/*
 * resolve.c - the answers to "where is function X": dlsym and
 * cuGetProcAddress, the two ways programs reach the driver without binding
 * to its symbols (../docs and cuda-facts §1: the CUDA runtime itself asks
 * libcuda for cuGetProcAddress_v2 with dlsym, then everything else through
 * it, about 440 look-ups before cuInit).
 *
 * Rules, in order:
 * - The real look-up runs first. Only a successful, non-NULL answer is
 *   replaced, so "not found" and symbolStatus reach the caller untouched.
 * - The wrapper is chosen by the variant the driver really returned: its
 *   pointer is compared with each variant's exported symbol; when it matches
 *   none (a driver may hand out internal entry points), the variant is the
 *   one the driver's own rule selects: the newest whose version is <= the
 *   requested one, the _ptsz form when the per-thread flag asked for it and
 *   exists. Never by base name alone.
 * - The real pointer goes into the variant's slot (real.c), so the wrapper
 *   calls exactly what the caller would have called.
 * - Everything not wrapped passes through: cuGetExportTable, every
 *   non-memory function, every unknown name.
 * Look-ups happen in constructors and before cuInit: nothing here allocates,
 * locks or records.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL   /* the 4-argument cuGetProcAddress */
#include <cuda.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "mt.h"

struct variant_info { const char *name, *base; int version, ptsz; };

static const struct variant_info variants[] = {
#define MT_VARIANT_INFO(v, b, ver, p) [MT_V_##v] = { #v, #b, ver, p },
	MT_DRIVER_VARIANTS(MT_VARIANT_INFO)
#undef MT_VARIANT_INFO
};
#define N_DRIVER_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

extern void *const mt_driver_wrappers[];   /* hooks-driver.c */
extern void *const mt_runtime_wrappers[];  /* hooks-runtime.c */
const char *mt_variant_name(enum mt_variant v);

void *mt_wrapper_of(enum mt_variant v)
{
	if (v == MT_V_cuGetProcAddress)
		return (void *)&cuGetProcAddress;
	if (v == MT_V_cuGetProcAddress_v2)
		return (void *)&cuGetProcAddress_v2;
	return v < N_DRIVER_VARIANTS ? mt_driver_wrappers[v] : mt_runtime_wrappers[v - N_DRIVER_VARIANTS];
}

static int variant_by_name(const char *name)
{
	for (int v = 0; v < MT_V_COUNT; v++)
		if (strcmp(mt_variant_name((enum mt_variant)v), name) == 0)
			return v;
	return -1;
}

/* A module's import of name: memtrace's wrapper, and in *real the function
   of the loaded driver or runtime it forwards to; NULL when not wrapped. */
void *mt_import_wrapper(const char *name, void **real)
{
	int v = variant_by_name(name);

	if (v < 0)
		return NULL;
	*real = v < N_DRIVER_VARIANTS ? mt_driver_sym(name) : mt_runtime_sym(name);
	if (!*real || mt_is_own(*real))
		return NULL;
	return mt_wrapper_of((enum mt_variant)v);
}

/* The exported symbol of a variant in the loaded driver, looked up once. */
static void *exported(int v)
{
	static void *_Atomic cache[N_DRIVER_VARIANTS];
	static const char none;
	void *p = atomic_load_explicit(&cache[v], memory_order_relaxed);
	if (!p) {
		p = mt_driver_sym(variants[v].name);
		if (!p)
			p = (void *)&none;
		atomic_store_explicit(&cache[v], p, memory_order_relaxed);
	}
	return p;
}

/* Which variant the driver returned for (base, version, flags): -1 if none
   of memtrace's. */
static int returned_variant(const char *base, int version, cuuint64_t flags, void *fn)
{
	int best = -1, best_ptsz = -1, any = 0;
	int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;

	for (int v = 0; v < N_DRIVER_VARIANTS; v++) {
		if (strcmp(variants[v].base, base) != 0)
			continue;
		any = 1;
		if (exported(v) == fn)
			return v;
		if (variants[v].version > version)
			continue;
		int *slot = variants[v].ptsz ? &best_ptsz : &best;
		if (*slot < 0 || variants[v].version > variants[*slot].version)
			*slot = v;
	}
	if (!any)
		return -1;
	return want_ptsz && best_ptsz >= 0 ? best_ptsz : best;
}

static void wrap_answer(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	if (MT_UNLIKELY(!mt_inited))
		mt_init();
	if (!symbol || !pfn || !*pfn || mt_is_own(*pfn))
		return;
	if (symbol[0] != 'c' || symbol[1] != 'u')
		return;
	int v = returned_variant(symbol, version, flags, *pfn);
	if (v < 0)
		return;
	mt_real_set((enum mt_variant)v, *pfn);
	*pfn = mt_wrapper_of((enum mt_variant)v);
	if (mt_config.resolve_log >= 0) {
		char line[256];
		int n = snprintf(line, sizeof line, "wrap %s %d %llu %s\n", symbol, version,
				 (unsigned long long)flags, variants[v].name);
		if (n > 0 && n < (int)sizeof line)
			(void)!write(mt_config.resolve_log, line, (size_t)n);
	}
}

/* cuGetProcAddress (CUDA 11.3, 4 arguments). */
MT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t) =
		(CUresult (*)(const char *, void **, int, cuuint64_t))mt_real_get(MT_V_cuGetProcAddress);
	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = real(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS)
		wrap_answer(symbol, pfn, cudaVersion, flags);
	return r;
}

/* cuGetProcAddress_v2 (CUDA 12.0, 5 arguments, symbolStatus kept). */
MT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				       CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
		(CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))
			mt_real_get(MT_V_cuGetProcAddress_v2);
	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (r == CUDA_SUCCESS)
		wrap_answer(symbol, pfn, cudaVersion, flags);
	return r;
}

/*
 * Called by dlsym (dlsym-stub.S) with the caller's arguments. Returns the
 * answer, or NULL for "ask the real dlsym" (which then runs as if called by
 * the caller itself). RTLD_NEXT look-ups always pass: they are relative to
 * the caller, and another interposer looking for the next cuMemAlloc_v2
 * must get it.
 *
 * Before the recorder has started, a look-up that memtrace would pass on
 * anyway starts nothing and only finds the real dlsym: a sanitizer's
 * runtime linked into the traced program (ASan) resolves its interceptors
 * with dlsym(RTLD_NEXT, ...) before any constructor runs, and until it has
 * done so each libc call it intercepts jumps through a still empty pointer:
 * mt_init's getcwd and open, mt_modules_redirect's dl_iterate_phdr would
 * crash the program there. The recorder starts at its constructor or its
 * first hooked call instead.
 */
void *mt_dlsym_filter(void *handle, const char *name)
{
	int passed = handle == RTLD_NEXT || !name || name[0] != 'c' || name[1] != 'u';

	if (MT_UNLIKELY(!mt_inited)) {
		if (passed) {
			mt_real_find_dlsym();
			return NULL;
		}
		mt_init();
	}
	mt_modules_redirect();
	if (passed)
		return NULL;
	int v = variant_by_name(name);
	if (v < 0 || !mt_real_dlsym)
		return NULL;
	void *fn = mt_real_dlsym(handle, name);
	if (!fn)
		return NULL;
	if (mt_is_own(fn))
		return fn;      /* RTLD_DEFAULT found memtrace's own export */
	mt_real_set((enum mt_variant)v, fn);
	return mt_wrapper_of((enum mt_variant)v);
}
