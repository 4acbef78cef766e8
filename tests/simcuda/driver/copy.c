/*
 * copy.c - copies, memsets, managed-memory hints, modules and kernel
 * launches: enough for programs to call them. They validate their handles
 * and device ranges and leave simulated device memory alone; where both
 * sides are real host memory (pageable, pinned, registered or managed) the
 * copy or memset is really done, so programs can check their data.
 * Modules hold no code: every function name resolves, no global does.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim.h"

/*
 * Checks one side of a copy: a device-side range must lie in a known
 * allocation. *host says whether the bytes are real host memory.
 */
static CUresult side(uint64_t p, uint64_t n, int device_side, int *host)
{
	struct sim_alloc *a;

	*host = 1;
	if (!device_side)
		return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	a = sim_alloc_containing(p);
	if (!a || n > a->node.key + a->size - p)
		return CUDA_ERROR_INVALID_VALUE;
	*host = a->kind == SIM_K_HOST || a->kind == SIM_K_HOST_REGISTER || a->kind == SIM_K_MANAGED;
	return CUDA_SUCCESS;
}

/* dev_dst / dev_src: whether that side is a device pointer (may be host-backed). */
static CUresult copy(uint64_t dst, uint64_t src, uint64_t n, int dev_dst, int dev_src)
{
	int dev, hd, hs;
	CUresult r;

	SIM_NEED_INIT();
	if (n == 0)
		return CUDA_SUCCESS;
	sim_lock();
	if ((r = sim_current_device(&dev)) == CUDA_SUCCESS &&
	    (r = side(dst, n, dev_dst, &hd)) == CUDA_SUCCESS)
		r = side(src, n, dev_src, &hs);
	sim_unlock();
	if (r == CUDA_SUCCESS && hd && hs)
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return r;
}

static CUresult stream_ok(CUstream s, int ptsz)
{
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	sim_unlock();
	return r;
}

static CUresult copy_async(uint64_t dst, uint64_t src, uint64_t n, int dd, int ds, CUstream s, int ptsz)
{
	CUresult r = stream_ok(s, ptsz);

	return r == CUDA_SUCCESS ? copy(dst, src, n, dd, ds) : r;
}

#define P(x) ((uint64_t)(uintptr_t)(x))

SIM_EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(d, s, n, 1, 1); }
SIM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(d, s, n, 1, 1); }
SIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(d, s, n, 1, 1, st, 0); }
SIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(d, s, n, 1, 1, st, 1); }

SIM_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr_v1 d, const void *s, unsigned int n) { return copy(d, P(s), n, 1, 0); }
SIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return copy(d, P(s), n, 1, 0); }
SIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return copy(d, P(s), n, 1, 0); }
SIM_EXPORT CUresult cuMemcpyDtoH(void *d, CUdeviceptr_v1 s, unsigned int n) { return copy(P(d), s, n, 0, 1); }
SIM_EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return copy(P(d), s, n, 0, 1); }
SIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) { return copy(P(d), s, n, 0, 1); }
SIM_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned int n) { return copy(d, s, n, 1, 1); }
SIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(d, s, n, 1, 1); }
SIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(d, s, n, 1, 1); }

SIM_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 d, const void *s, unsigned int n, CUstream st) { return copy_async(d, P(s), n, 1, 0, st, 0); }
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { return copy_async(d, P(s), n, 1, 0, st, 0); }
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream st) { return copy_async(d, P(s), n, 1, 0, st, 1); }
SIM_EXPORT CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr_v1 s, unsigned int n, CUstream st) { return copy_async(P(d), s, n, 0, 1, st, 0); }
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(P(d), s, n, 0, 1, st, 0); }
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(P(d), s, n, 0, 1, st, 1); }
SIM_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned int n, CUstream st) { return copy_async(d, s, n, 1, 1, st, 0); }
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(d, s, n, 1, 1, st, 0); }
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return copy_async(d, s, n, 1, 1, st, 1); }

static CUresult peer(uint64_t d, CUcontext dc, uint64_t s, CUcontext sc, uint64_t n)
{
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	sim_lock();
	if (!sim_obj_get(dc, SIM_CTX) || !sim_obj_get(sc, SIM_CTX))
		r = CUDA_ERROR_INVALID_CONTEXT;
	sim_unlock();
	return r == CUDA_SUCCESS ? copy(d, s, n, 1, 1) : r;
}

SIM_EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { return peer(d, dc, s, sc, n); }
SIM_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { return peer(d, dc, s, sc, n); }

SIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
	CUresult r = stream_ok(st, 0);
	return r == CUDA_SUCCESS ? peer(d, dc, s, sc, n) : r;
}

SIM_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
	CUresult r = stream_ok(st, 1);
	return r == CUDA_SUCCESS ? peer(d, dc, s, sc, n) : r;
}

/* --- memset ------------------------------------------------------------------------ */

/* Sets height rows of width elements of esize bytes, rows pitch bytes apart. */
static CUresult set2d(uint64_t d, uint64_t pitch, uint32_t v, unsigned esize, uint64_t width, uint64_t height)
{
	uint64_t span;
	int dev, host;
	CUresult r;

	SIM_NEED_INIT();
	if (height == 0 || width == 0)
		return CUDA_SUCCESS;
	if (d % esize || (height > 1 && pitch < width * esize))
		return CUDA_ERROR_INVALID_VALUE;
	span = (height - 1) * pitch + width * esize;
	sim_lock();
	if ((r = sim_current_device(&dev)) == CUDA_SUCCESS)
		r = side(d, span, 1, &host);
	sim_unlock();
	if (r != CUDA_SUCCESS || !host)
		return r;
	for (uint64_t y = 0; y < height; y++) {
		unsigned char *row = (unsigned char *)(uintptr_t)(d + y * pitch);
		for (uint64_t x = 0; x < width; x++)
			memcpy(row + x * esize, &v, esize); /* little-endian: the low bytes */
	}
	return CUDA_SUCCESS;
}

static CUresult set2d_async(uint64_t d, uint64_t pitch, uint32_t v, unsigned esize,
			    uint64_t w, uint64_t h, CUstream s, int ptsz)
{
	CUresult r = stream_ok(s, ptsz);

	return r == CUDA_SUCCESS ? set2d(d, pitch, v, esize, w, h) : r;
}

#define MEMSET(T, BITS, ES) \
SIM_EXPORT CUresult cuMemsetD##BITS(CUdeviceptr_v1 d, T v, unsigned int n) { return set2d(d, 0, v, ES, n, 1); } \
SIM_EXPORT CUresult cuMemsetD##BITS##_v2(CUdeviceptr d, T v, size_t n) { return set2d(d, 0, v, ES, n, 1); } \
SIM_EXPORT CUresult cuMemsetD##BITS##_v2_ptds(CUdeviceptr d, T v, size_t n) { return set2d(d, 0, v, ES, n, 1); } \
SIM_EXPORT CUresult cuMemsetD##BITS##Async(CUdeviceptr d, T v, size_t n, CUstream s) { return set2d_async(d, 0, v, ES, n, 1, s, 0); } \
SIM_EXPORT CUresult cuMemsetD##BITS##Async_ptsz(CUdeviceptr d, T v, size_t n, CUstream s) { return set2d_async(d, 0, v, ES, n, 1, s, 1); } \
SIM_EXPORT CUresult cuMemsetD2D##BITS(CUdeviceptr_v1 d, unsigned int p, T v, unsigned int w, unsigned int h) { return set2d(d, p, v, ES, w, h); } \
SIM_EXPORT CUresult cuMemsetD2D##BITS##_v2(CUdeviceptr d, size_t p, T v, size_t w, size_t h) { return set2d(d, p, v, ES, w, h); } \
SIM_EXPORT CUresult cuMemsetD2D##BITS##_v2_ptds(CUdeviceptr d, size_t p, T v, size_t w, size_t h) { return set2d(d, p, v, ES, w, h); } \
SIM_EXPORT CUresult cuMemsetD2D##BITS##Async(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) { return set2d_async(d, p, v, ES, w, h, s, 0); } \
SIM_EXPORT CUresult cuMemsetD2D##BITS##Async_ptsz(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) { return set2d_async(d, p, v, ES, w, h, s, 1); }

MEMSET(unsigned char, 8, 1)
MEMSET(unsigned short, 16, 2)
MEMSET(unsigned int, 32, 4)

/* --- managed memory hints ------------------------------------------------------------- */

static CUresult range_ok(uint64_t p, uint64_t n)
{
	int host;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = side(p, n, 1, &host);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev)
{
	(void)advice; (void)dev;
	return range_ok(p, n);
}

SIM_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
	(void)advice; (void)loc;
	return range_ok(p, n);
}

static CUresult prefetch(uint64_t p, uint64_t n, CUstream s, int ptsz)
{
	CUresult r = stream_ok(s, ptsz);

	return r == CUDA_SUCCESS ? range_ok(p, n) : r;
}

SIM_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	(void)dev;
	return prefetch(p, n, s, 0);
}

SIM_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	(void)dev;
	return prefetch(p, n, s, 1);
}

SIM_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
	(void)loc; (void)flags;
	return prefetch(p, n, s, 0);
}

SIM_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
	(void)loc; (void)flags;
	return prefetch(p, n, s, 1);
}

/* --- modules and launches ----------------------------------------------------------------- */

struct sim_func {
	struct sim_obj obj;
	struct sim_func *next;
};

struct sim_module {
	struct sim_obj obj;
	struct sim_func *funcs;
};

static CUresult module_new(CUmodule *out, const void *image)
{
	struct sim_module *m;
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS)
		return r;
	if (!(m = calloc(1, sizeof(*m))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	sim_obj_add(&m->obj, SIM_MODULE);
	sim_unlock();
	*out = (CUmodule)m;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuModuleLoad(CUmodule *out, const char *path)
{
	struct stat st;

	if (path && stat(path, &st) < 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	return module_new(out, path);
}

SIM_EXPORT CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
	return module_new(out, image);
}

SIM_EXPORT CUresult cuModuleLoadDataEx(CUmodule *out, const void *image, unsigned int n,
				       CUjit_option *options, void **values)
{
	(void)n; (void)options; (void)values;
	return module_new(out, image);
}

SIM_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *out, const void *fatbin)
{
	return module_new(out, fatbin);
}

SIM_EXPORT CUresult cuModuleUnload(CUmodule h)
{
	struct sim_module *m;

	SIM_NEED_INIT();
	sim_lock();
	if ((m = sim_obj_get(h, SIM_MODULE))) {
		sim_obj_del(&m->obj);
		while (m->funcs) {
			struct sim_func *f = m->funcs;
			m->funcs = f->next;
			sim_obj_del(&f->obj);
			free(f);
		}
	}
	sim_unlock();
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	free(m);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule h, const char *name)
{
	struct sim_module *m;
	struct sim_func *f;

	SIM_NEED_INIT();
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(f = calloc(1, sizeof(*f))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_lock();
	if ((m = sim_obj_get(h, SIM_MODULE))) {
		f->next = m->funcs;
		m->funcs = f;
		sim_obj_add(&f->obj, SIM_FUNC);
	}
	sim_unlock();
	if (!m) {
		free(f);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*out = (CUfunction)f;
	return CUDA_SUCCESS;
}

static CUresult get_global(CUmodule h, const char *name)
{
	struct sim_module *m;

	SIM_NEED_INIT();
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	m = sim_obj_get(h, SIM_MODULE);
	sim_unlock();
	return m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule h, const char *name)
{
	(void)dptr; (void)bytes;
	return get_global(h, name);
}

SIM_EXPORT CUresult cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule h, const char *name)
{
	(void)dptr; (void)bytes;
	return get_global(h, name);
}

static CUresult launch(CUfunction f, CUstream s, int ptsz)
{
	CUresult r = stream_ok(s, ptsz);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (!sim_obj_get(f, SIM_FUNC))
		r = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return r;
}

#define LAUNCH_ARGS CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
	unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s

SIM_EXPORT CUresult cuLaunchKernel(LAUNCH_ARGS, void **params, void **extra)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)params; (void)extra;
	return launch(f, s, 0);
}

SIM_EXPORT CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **params, void **extra)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)params; (void)extra;
	return launch(f, s, 1);
}

SIM_EXPORT CUresult cuLaunchCooperativeKernel(LAUNCH_ARGS, void **params)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)params;
	return launch(f, s, 0);
}

SIM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **params)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)params;
	return launch(f, s, 1);
}

SIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	(void)params; (void)extra;
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->hStream, 0);
}

SIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	(void)params; (void)extra;
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->hStream, 1);
}
