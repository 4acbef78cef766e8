/*
 * stream.c - streams, events and stream capture. Nothing runs on a
 * simulated GPU, so every stream is always idle: queries succeed and
 * synchronizing only does what a synchronize does to memory, which is to
 * let the stream-ordered pools of the device release unused chunks
 * (cuStreamSynchronize, cuEventSynchronize; cuCtxSynchronize in device.c).
 *
 * Stream handles 0, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean the
 * current context's device. Capture (cuStreamBeginCapture*) is a flag on
 * the stream; while it is set, cuMemAllocAsync on that stream behaves like
 * a graph allocation node (pool.c). The legacy stream cannot capture
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), the per-thread one can.
 * cuStreamEndCapture returns one dummy graph handle; graphs are not
 * simulated.
 */
#include <stdlib.h>

#include "sim.h"

struct sim_stream {
	struct sim_obj obj;
	struct sim_ctx *ctx;
	int dev;
	unsigned flags;
	int priority;
	int capturing;
	uint64_t id;
};

struct sim_event {
	struct sim_obj obj;
	int dev; /* of the last stream it was recorded on, else its context's */
	unsigned flags;
};

static __thread int per_thread_capturing;
static uint64_t next_stream_id = 1;
static char dummy_graph; /* the one graph handle; graphs are not simulated */

static int builtin(CUstream s)
{
	return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

static int per_thread(CUstream s, int ptsz)
{
	return s == CU_STREAM_PER_THREAD || (s == NULL && ptsz);
}

CUresult sim_stream_device(CUstream s, int ptsz, int *dev, int *capturing)
{
	struct sim_stream *st;

	if (builtin(s)) {
		*capturing = per_thread(s, ptsz) && per_thread_capturing;
		return sim_current_device(dev);
	}
	if (!(st = sim_obj_get(s, SIM_STREAM)))
		return CUDA_ERROR_INVALID_HANDLE;
	*dev = st->dev;
	*capturing = st->capturing;
	return CUDA_SUCCESS;
}

/* --- creation ----------------------------------------------------------------- */

static CUresult stream_create(CUstream *ph, unsigned flags, int priority)
{
	struct sim_stream *st;
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS)
		return r;
	if (!(st = calloc(1, sizeof(*st))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	st->ctx = sim_ctx_current();
	st->dev = dev;
	st->flags = flags;
	st->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
	sim_lock();
	st->id = next_stream_id++;
	sim_obj_add(&st->obj, SIM_STREAM);
	sim_unlock();
	*ph = (CUstream)st;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_create(ph, flags, 0);
}

SIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority)
{
	return stream_create(ph, flags, priority);
}

static CUresult stream_destroy(CUstream s)
{
	struct sim_stream *st;

	SIM_NEED_INIT();
	sim_lock();
	st = sim_obj_get(s, SIM_STREAM);
	if (st)
		sim_obj_del(&st->obj);
	sim_unlock();
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	free(st);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s) { return stream_destroy(s); }
SIM_EXPORT CUresult cuStreamDestroy(CUstream s) { return stream_destroy(s); }

/* --- synchronization and queries ------------------------------------------------- */

static CUresult stream_sync(CUstream s, int ptsz, const char *fn)
{
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	if (r == CUDA_SUCCESS && capturing)
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (r == CUDA_SUCCESS)
		sim_pool_release_device(dev, fn);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuStreamSynchronize(CUstream s) { return stream_sync(s, 0, "cuStreamSynchronize"); }
SIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s) { return stream_sync(s, 1, "cuStreamSynchronize_ptsz"); }

static CUresult stream_check(CUstream s, int ptsz, int *dev)
{
	int d, capturing;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, dev ? dev : &d, &capturing);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuStreamQuery(CUstream s) { return stream_check(s, 0, NULL); }
SIM_EXPORT CUresult cuStreamQuery_ptsz(CUstream s) { return stream_check(s, 1, NULL); }

static CUresult stream_device(CUstream s, int ptsz, CUdevice *dev)
{
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	return stream_check(s, ptsz, dev);
}

SIM_EXPORT CUresult cuStreamGetDevice(CUstream s, CUdevice *dev) { return stream_device(s, 0, dev); }
SIM_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *dev) { return stream_device(s, 1, dev); }

/* Reads one property of a stream; built-in streams have the defaults. */
static CUresult stream_get(CUstream s, int ptsz, struct sim_stream *out)
{
	struct sim_stream *st;
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	sim_lock();
	if (builtin(s)) {
		out->ctx = sim_ctx_current();
		out->flags = 0;
		out->priority = 0;
		out->id = per_thread(s, ptsz) ? 2 : 1;
		if (!out->ctx || !out->ctx->alive)
			r = CUDA_ERROR_INVALID_CONTEXT;
	} else if ((st = sim_obj_get(s, SIM_STREAM))) {
		*out = *st;
		out->id += 2;
	} else {
		r = CUDA_ERROR_INVALID_HANDLE;
	}
	sim_unlock();
	return r;
}

#define STREAM_GETTER(name, type, field, ptsz) \
SIM_EXPORT CUresult name(CUstream s, type *v) \
{ \
	struct sim_stream st; \
	CUresult r; \
	if (!v) \
		return CUDA_ERROR_INVALID_VALUE; \
	if ((r = stream_get(s, ptsz, &st)) == CUDA_SUCCESS) \
		*v = (type)st.field; \
	return r; \
}
STREAM_GETTER(cuStreamGetCtx, CUcontext, ctx, 0)
STREAM_GETTER(cuStreamGetCtx_ptsz, CUcontext, ctx, 1)
STREAM_GETTER(cuStreamGetFlags, unsigned int, flags, 0)
STREAM_GETTER(cuStreamGetFlags_ptsz, unsigned int, flags, 1)
STREAM_GETTER(cuStreamGetPriority, int, priority, 0)
STREAM_GETTER(cuStreamGetPriority_ptsz, int, priority, 1)
STREAM_GETTER(cuStreamGetId, unsigned long long, id, 0)
STREAM_GETTER(cuStreamGetId_ptsz, unsigned long long, id, 1)

static CUresult stream_ctx_v2(CUstream s, int ptsz, CUcontext *pctx, CUgreenCtx *green)
{
	struct sim_stream st;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = stream_get(s, ptsz, &st)) == CUDA_SUCCESS) {
		*pctx = (CUcontext)st.ctx;
		if (green)
			*green = NULL;
	}
	return r;
}

SIM_EXPORT CUresult cuStreamGetCtx_v2(CUstream s, CUcontext *pctx, CUgreenCtx *green)
{
	return stream_ctx_v2(s, 0, pctx, green);
}

SIM_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream s, CUcontext *pctx, CUgreenCtx *green)
{
	return stream_ctx_v2(s, 1, pctx, green);
}

static CUresult stream_wait_event(CUstream s, int ptsz, CUevent e)
{
	CUresult r = stream_check(s, ptsz, NULL);

	if (r == CUDA_SUCCESS) {
		sim_lock();
		if (!sim_obj_get(e, SIM_EVENT))
			r = CUDA_ERROR_INVALID_HANDLE;
		sim_unlock();
	}
	return r;
}

SIM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	(void)flags;
	return stream_wait_event(s, 0, e);
}

SIM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags)
{
	(void)flags;
	return stream_wait_event(s, 1, e);
}

/* Host work runs at once on the calling thread: the stream is always idle. */
static CUresult host_func(CUstream s, int ptsz, CUhostFn fn, void *data)
{
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	sim_unlock();
	if (r == CUDA_SUCCESS && !capturing)
		fn(data);
	return r;
}

SIM_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) { return host_func(s, 0, fn, data); }
SIM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data) { return host_func(s, 1, fn, data); }

static CUresult add_callback(CUstream s, int ptsz, CUstreamCallback cb, void *data)
{
	CUresult r;

	if (!cb)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = stream_check(s, ptsz, NULL)) == CUDA_SUCCESS)
		cb(s, CUDA_SUCCESS, data);
	return r;
}

SIM_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
	(void)flags;
	return add_callback(s, 0, cb, data);
}

SIM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
	(void)flags;
	return add_callback(s, 1, cb, data);
}

/* --- capture ---------------------------------------------------------------------- */

/* Sets or clears the capture flag of s; begin 1 to start, 0 to end. */
static CUresult capture(CUstream s, int ptsz, int begin)
{
	struct sim_stream *st = NULL;
	int dev, capturing, *flag;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	if (r == CUDA_SUCCESS && builtin(s) && !per_thread(s, ptsz))
		r = begin ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_ERROR_ILLEGAL_STATE;
	if (r == CUDA_SUCCESS) {
		st = builtin(s) ? NULL : sim_obj_get(s, SIM_STREAM);
		flag = st ? &st->capturing : &per_thread_capturing;
		if (*flag == begin)
			r = begin ? CUDA_ERROR_ILLEGAL_STATE : CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
		else
			*flag = begin;
	}
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuStreamBeginCapture(CUstream s) { return capture(s, 0, 1); }
SIM_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s) { return capture(s, 1, 1); }

SIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	(void)mode;
	return capture(s, 0, 1);
}

SIM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	(void)mode;
	return capture(s, 1, 1);
}

static CUresult end_capture(CUstream s, int ptsz, CUgraph *graph)
{
	CUresult r;

	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	r = capture(s, ptsz, 0);
	*graph = r == CUDA_SUCCESS ? (CUgraph)&dummy_graph : NULL;
	return r;
}

SIM_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { return end_capture(s, 0, g); }
SIM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g) { return end_capture(s, 1, g); }

static CUresult is_capturing(CUstream s, int ptsz, CUstreamCaptureStatus *status)
{
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	sim_unlock();
	if (r == CUDA_SUCCESS)
		*status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return r;
}

SIM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { return is_capturing(s, 0, st); }
SIM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return is_capturing(s, 1, st); }

/* --- events ------------------------------------------------------------------------ */

SIM_EXPORT CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
	struct sim_event *e;
	int dev;
	CUresult r;

	SIM_NEED_INIT();
	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = sim_current_device(&dev)) != CUDA_SUCCESS)
		return r;
	if (!(e = calloc(1, sizeof(*e))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->dev = dev;
	e->flags = flags;
	sim_lock();
	sim_obj_add(&e->obj, SIM_EVENT);
	sim_unlock();
	*ph = (CUevent)e;
	return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent h)
{
	struct sim_event *e;

	SIM_NEED_INIT();
	sim_lock();
	if ((e = sim_obj_get(h, SIM_EVENT)))
		sim_obj_del(&e->obj);
	sim_unlock();
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	free(e);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuEventDestroy_v2(CUevent e) { return event_destroy(e); }
SIM_EXPORT CUresult cuEventDestroy(CUevent e) { return event_destroy(e); }

static CUresult event_record(CUevent h, CUstream s, int ptsz)
{
	struct sim_event *e;
	int dev, capturing;
	CUresult r;

	SIM_NEED_INIT();
	sim_lock();
	r = sim_stream_device(s, ptsz, &dev, &capturing);
	if (r == CUDA_SUCCESS && !(e = sim_obj_get(h, SIM_EVENT)))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (r == CUDA_SUCCESS)
		e->dev = dev;
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) { return event_record(e, s, 0); }
SIM_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return event_record(e, s, 1); }

SIM_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
	(void)flags;
	return event_record(e, s, 0);
}

SIM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{
	(void)flags;
	return event_record(e, s, 1);
}

SIM_EXPORT CUresult cuEventSynchronize(CUevent h)
{
	struct sim_event *e;

	SIM_NEED_INIT();
	sim_lock();
	if ((e = sim_obj_get(h, SIM_EVENT)))
		sim_pool_release_device(e->dev, "cuEventSynchronize");
	sim_unlock();
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuEventQuery(CUevent h)
{
	struct sim_event *e;

	SIM_NEED_INIT();
	sim_lock();
	e = sim_obj_get(h, SIM_EVENT);
	sim_unlock();
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	CUresult r = CUDA_SUCCESS;

	SIM_NEED_INIT();
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim_obj_get(a, SIM_EVENT) || !sim_obj_get(b, SIM_EVENT))
		r = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	*ms = 0.0f;
	return r;
}

SIM_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }
SIM_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }
