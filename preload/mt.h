/*
 * mt.h - the recorder's internal API, shared by the files of preload/.
 *
 * Layers, from the hooks down:
 *   hooks-driver.c, hooks-runtime.c   one wrapper per CUDA function
 *   resolve.c (+ dlsym-stub.S)        dlsym and cuGetProcAddress answers
 *   real.c                            where the real functions are
 *   recorder.c                        the core API below: per-thread state,
 *                                     events, device and pool sampling
 *   stacks.c, modules.c               backtraces and the module map
 *   framework.c                       framework.h's entry points: a
 *                                     framework allocator's own records
 *   writer.c                          the crash-safe trace file
 *   config.c                          the MEMTRACE_* variables
 * Unit tests call the core API directly, without LD_PRELOAD.
 */
#ifndef MEMTRACE_MT_H
#define MEMTRACE_MT_H

#include <stddef.h>
#include <stdint.h>
#include "memtrace/trace-format.h"
#include "variants.h"

#define MT_EXPORT __attribute__((visibility("default")))
#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* config.c */
struct mt_config {
	char output[4096];      /* MEMTRACE_OUTPUT, made absolute at load */
	int root_pid;           /* MEMTRACE_ROOT_PID, 0 when unset */
	int follow;             /* MEMTRACE_FOLLOW */
	int depth;              /* MEMTRACE_DEPTH, 0..MT_MAX_DEPTH */
	uint64_t sample_ns;     /* MEMTRACE_SAMPLE_MS in ns, 0: no periodic */
	uint64_t growth_ns;     /* MEMTRACE_SAMPLE_GROWTH_US in ns, 0: none at new highs */
	uint64_t run_id;        /* MEMTRACE_RUN_ID */
	int resolve_log;        /* MEMTRACE_RESOLVE_LOG descriptor, or -1 */
	int python;             /* MEMTRACE_PYTHON: Python frames in stacks */
	int torch;              /* MEMTRACE_TORCH: PyTorch capture asked for */
	int stack_cache;        /* MEMTRACE_STACK_CACHE: per-thread unwind cache */
	int stack_check;        /* MEMTRACE_STACK_CHECK: each stack against a full unwind */
	char python_version[16];/* MEMTRACE_PYTHON_VERSION (tests): pretend */
};
extern struct mt_config mt_config;
void mt_config_load(void);

/* Per-thread state. Lives in initial-exec TLS: no allocation, no locks. */
struct mt_thread {
	uint32_t tid;
	uint32_t epoch;         /* writer epoch (bumped by fork) it belongs to */
	uint16_t label;         /* outermost runtime API in progress, 0: none */
	uint8_t in_driver;      /* inside a driver wrapper: pass nested calls */
	uint8_t label_events;   /* events recorded under the current label */
	uint8_t label_failed;   /* a failed call under it, left to the label */
	uint8_t keyed;          /* its slab goes back when the thread ends */
	uint8_t own_slabs;      /* never takes another thread's slab tail */
	uint16_t young;         /* bytes of its events in the shared young slab */
	char *slab_pos, *slab_end;
	uint64_t time_base;
	struct mt_compact_state c;  /* what its slab's compact events count from */
};

/* recorder.c: the core API used by every hook. */
/* Config, real functions, fork and exit handlers: once, from the
   constructor or the first hooked call, whichever comes first. */
extern int mt_inited;
void mt_init(void);
uint64_t mt_now(void);
/* The calling thread's state, or NULL when this process is not traced. */
struct mt_thread *mt_thread(void);
/* Enter a driver wrapper: NULL means "just call the real function". */
struct mt_thread *mt_driver_enter(void);
void mt_driver_leave(struct mt_thread *t);
/* mt_driver_enter for a free: *t0 its time, taken before the real call
   (and a memory sample the thread owes taken then, before the free). */
struct mt_thread *mt_free_enter(uint64_t *t0);
/*
 * Record one event. type is MT_REC_ALLOC or MT_REC_FREE; kind may carry
 * MT_KIND_ESTIMATED / MT_KIND_RUNTIME; x (NULL or two values) makes it an
 * _EX record. api is the called variant: the thread's label wins over it.
 */
void mt_event(struct mt_thread *t, int type, int kind, int device, int api,
	      uint64_t time, uint64_t addr, uint64_t bytes, int result,
	      const uint64_t *x);
/* Device of the calling thread's current context, -1 if none. */
int mt_current_device(void);
/* Device of a stream (its context's), -1 if not known. */
int mt_stream_device(void *stream);
/* Pool bookkeeping: remember a pool's device; sample pools after api. */
void mt_pool_known(uint64_t pool, int device);
uint64_t mt_device_pool(int device);
void mt_pool_sample(struct mt_thread *t, uint64_t pool, int api);
void mt_pools_sample_all(struct mt_thread *t, int api);
void mt_pool_forget(struct mt_thread *t, uint64_t pool, int api);
void mt_note(struct mt_thread *t, const char *text);
void mt_warn_once(int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* real.c */
extern void *(*mt_real_dlsym)(void *, const char *);
void mt_real_init(void);
void mt_real_find_dlsym(void);
/* The real function of a variant (driver or runtime), resolved lazily. */
void *mt_real_get(enum mt_variant v);
/* Remember what the driver handed out for a variant; first answer wins. */
void mt_real_set(enum mt_variant v, void *fn);
/* A function of the loaded libcuda.so.1 that memtrace calls itself. */
void *mt_driver_sym(const char *name);
/* The same of the CUDA runtime the wrappers forward to, or NULL. */
void *mt_runtime_sym(const char *name);
/* True when p is one of libmemtrace's own functions. */
int mt_is_own(const void *p);

/* resolve.c */
void *mt_wrapper_of(enum mt_variant v);
void *mt_import_wrapper(const char *name, void **real);

/* writer.c */
int mt_writer_active(void);
/* Open the file if this is the first record of the process (writing the
   process and module records first); 0 when nothing can be written.
   Call it before taking any lock that record writers take. The fast path
   (file open, thread state of this epoch) is inline: it runs per event. */
enum { W_CLOSED, W_OPEN, W_DISABLED, W_CLOSING };
extern _Atomic int mt_writer_state;
extern _Atomic uint32_t mt_writer_epoch_now;
int mt_writer_ready_slow(struct mt_thread *t, uint64_t time);
static inline int mt_writer_ready(struct mt_thread *t, uint64_t time)
{
	if (MT_LIKELY(__atomic_load_n((int *)&mt_writer_state, __ATOMIC_RELAXED) == W_OPEN &&
		      t->epoch == __atomic_load_n((uint32_t *)&mt_writer_epoch_now, __ATOMIC_RELAXED)))
		return 1;
	return mt_writer_ready_slow(t, time);
}
/* Space for a record of size bytes (multiple of 8) at time t in the
   thread's slab, its delta in *delta; NULL when nothing can be written. */
void *mt_writer_reserve(struct mt_thread *t, size_t size, uint64_t time,
			uint32_t *delta);
/* Writes the classic record of size bytes (a multiple of 8, at most 64)
   built at rec, its head first, then a uint32_t time delta that is filled
   in here, at time: where a young thread has no slab yet, into the slab
   young threads share (writer.c); 0, or -1 when nothing was written. */
int mt_writer_put(struct mt_thread *t, void *rec, size_t size, uint64_t time);
/* Publish a record: stores its head last, with release ordering. */
static inline void mt_writer_commit(void *record, struct mt_head head)
{
	uint32_t word;
	__builtin_memcpy(&word, &head, 4);
	__atomic_store_n((uint32_t *)record, word, __ATOMIC_RELEASE);
}
/* Write one event as a compact record (cls: enum mt_compact_tag class;
   x: NULL or x1, x2). */
void mt_write_event(struct mt_thread *t, int cls, int kind, int device, int api, uint64_t time,
		    uint64_t addr, uint64_t bytes, uint32_t stack, int result, const uint64_t *x);
void mt_writer_fork_child(void);
/* From the SIGBUS handler: 1 when addr is in the trace's mapping (the file
   was cut under it): the trace is then dead, its mapping harmless memory. */
int mt_writer_fault(const void *addr);

/* sigbus.c: memtrace's SIGBUS handler (installed when the trace file is
   created), in front of the program's own, which it keeps as the program
   set it; recheck after a window is mapped (someone may have replaced it
   without sigaction). */
void mt_sigbus_install(void);
void mt_sigbus_recheck(void);
/* The end of the process: nothing is recorded after this; how > 0 (enum
   mt_exit_how) writes the exit record as the last record, from t. */
void mt_writer_close(struct mt_thread *t, int how, int status);
uint32_t mt_writer_epoch(void);

/* stacks.c: the id of the caller's backtrace, 0 when depth is 0. */
uint32_t mt_stack_capture(struct mt_thread *t);
void mt_stacks_fork_child(void);

/* pyframes.c: the native ips (innermost first) with the calling thread's
   Python frames spliced in, at most depth of them, into out; returns how
   many, or 0 when the thread runs no Python code (use native alone). */
int mt_py_splice(struct mt_thread *t, const uint64_t *native, int n, uint64_t *out, int depth);
void mt_py_fork_child(void);

/* framework.c: the child of fork lets go of the parent's lock. */
void mt_fw_fork_child(void);
/* At a normal exit: a note when PyTorch capture was asked for but the
   interpreter skipped memtrace's bootstrap (python -I, -E, -S). */
void mt_fw_python_check(void);

/* modules.c: write module records for objects not written yet. */
void mt_modules_write(struct mt_thread *t, int force_scan);
int mt_modules_maybe_changed(void);
/* Point new modules' imports of wrapped functions that bypass memtrace
   (RTLD_DEEPBIND) at the wrappers; cheap when nothing was loaded. */
void mt_modules_redirect(void);
void mt_modules_fork_child(void);

#endif
