/*
 * recorder.c - the core of libmemtrace.so: per-thread state, events, device
 * memory samples and pool sampling, process start and exit.
 *
 * Hook ordering (hooks-*.c follow it): an allocation is recorded after the
 * real call returned, with the time taken then; a free is recorded after the
 * real call too, but with the time taken before it. Sorted by time, an
 * address is therefore always freed before another thread can be seen
 * receiving it again, without a table or a lock on the hot path; the
 * analyzer pairs frees with allocations by address (by handle for VMM).
 * Failed calls are recorded with their result.
 *
 * Labels: a runtime wrapper (cudaMalloc) sets the thread's label; driver
 * events recorded inside carry the label as their API, so one cudaMalloc is
 * one event. A runtime call that returns without any driver event inside
 * (a driver the wrappers could not reach) is recorded at the runtime level.
 * So is a failed driver call inside a runtime call: the event then carries
 * the cudaError_t the program got, not the driver's CUresult.
 *
 * Exit: the trace's last record says how the process ended (MT_REC_EXIT).
 * exit() and a return from main reach an on_exit() handler registered by
 * mt_init() (the constructor, or the first hooked call when another
 * library's constructor runs first), always before the C library registers
 * the destructors' runner: so it runs after every destructor and every
 * atexit handler of a library (run with its destructors), and sees the
 * status. _exit() and _Exit() are wrapped (exit() reaches the kernel
 * through the C library's own _exit, not these). No signal handler is
 * installed: a killed process simply has no exit record.
 *
 * Threading: everything per thread lives in initial-exec TLS. Shared state
 * is the writer's (slab claims are atomic), the stack table (lock-free), a
 * small pool table (a mutex, only on stream-ordered calls), and per-device
 * sample times and growth counters (a CAS picks the one thread that
 * samples; a thread adds to a counter only at 1/16 of a sample's step).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "mt.h"
#include "ranges.h"

#define MAX_DEVICES 64
#define MAX_POOLS 256

static __thread struct mt_thread thread_state;
static int traced;                        /* this process records */
int mt_inited;                            /* mt_init() ran (mt.h) */
static _Atomic uint64_t last_sample[MAX_DEVICES];
static _Atomic uint64_t last_owed[MAX_DEVICES];   /* last sample taken at a free */

/*
 * Samples at new highs (MEMTRACE_SAMPLE_GROWTH_US). The recorder does not
 * know a device's reserved memory: frees carry neither size nor device
 * (the analyzer pairs them by address), and keeping it exact would take a
 * table of every live allocation on the hot path. What it can count is
 * the bytes allocated on a device since its last sample. That is an upper
 * bound on how much the device's traced memory grew since then (frees
 * only lower it), so a new high that is 1% (of the device used at that
 * sample) above the sampled state cannot happen without that count
 * reaching the step first. The count never makes a sample wrong, only
 * more frequent than strictly needed (a loop that allocates and frees is
 * sampled although it sets no new high): a sample is a measurement, so an
 * extra one can never make a figure wrong, and the rate limit bounds them.
 *
 * A thread keeps its count in TLS and adds it to the device's counter at
 * 1/16 of the step (or at once for a large allocation), so the hot path
 * is a TLS add and one relaxed load of a rarely written line; with N
 * threads allocating at once, up to N/16 of a step may not have reached
 * the counter yet (a sample later, never a wrong one).
 *
 * When the count is due but the last sample is younger than the rate
 * limit, the thread owes the sample. It takes it at its next allocation
 * once the limit has passed, or at the start of its next free, before the
 * real call (mt_free_enter, with the free's own time: no clock read is
 * added), so the sample measures the state the free is about to lower.
 * Samples taken at frees have a window of their own (last_owed): a burst
 * of allocations freed at once is measured at its top even when it began
 * within the limit of the previous sample. So a device gets at most two
 * of these samples per limit (one at an allocation, one at a free); a
 * high freed within the limit of the previous sample taken at a free goes
 * unmeasured, as before: the report then says how long before the peak
 * its sample was taken.
 */
#define GROW_MIN ((uint64_t)1 << 20)   /* the least step: 1 MiB */
#define GROW_FLUSH_SHIFT 4             /* hand bytes on at 1/16 of a step */

/* grown is written by every thread's hand-overs, step only by samples and
   read at every allocation: apart, so that hand-overs do not evict the
   line each allocation reads. */
struct dev_growth {
	_Atomic uint64_t grown;   /* bytes allocated since the last sample (handed on) */
} __attribute__((aligned(64)));
static struct dev_growth growth[MAX_DEVICES];
static _Atomic uint64_t grow_step[MAX_DEVICES] __attribute__((aligned(64)));   /* 1% of the device used at its last sample */

/* The calling thread's bytes not yet handed on (of device dev), and the
   device + 1 it owes a sample of (0: none). */
static __thread struct { int dev; int owed; uint64_t bytes, due; } tgrow;   /* due: when owed may be paid */
static int driver_version_written;

struct pool_state { uint64_t pool, reserved, used; int device; };
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_state pools[MAX_POOLS];
static int n_pools;

uint64_t mt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct mt_thread *mt_thread(void)
{
	if (MT_UNLIKELY(!mt_inited))
		mt_init();
	return traced && mt_writer_active() ? &thread_state : NULL;
}

struct mt_thread *mt_driver_enter(void)
{
	struct mt_thread *t = mt_thread();
	if (!t || t->in_driver)
		return NULL;
	t->in_driver = 1;
	return t;
}

static void sample_owed(struct mt_thread *t, uint64_t now);

struct mt_thread *mt_free_enter(uint64_t *t0)
{
	struct mt_thread *t = mt_driver_enter();

	*t0 = t ? mt_now() : 0;
	if (t && MT_UNLIKELY(tgrow.owed))
		sample_owed(t, *t0);
	return t;
}

void mt_driver_leave(struct mt_thread *t)
{
	t->in_driver = 0;
}

void mt_warn_once(int *flag, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED))
		return;
	n = snprintf(buf, sizeof buf, "memtrace: warning: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	(void)!write(2, buf, (size_t)n);
}

int mt_current_device(void)
{
	static CUresult (*get)(CUdevice *);
	CUdevice d;

	if (!get && !(get = (CUresult (*)(CUdevice *))mt_driver_sym("cuCtxGetDevice")))
		return -1;
	return get(&d) == CUDA_SUCCESS ? d : -1;
}

int mt_stream_device(void *stream)
{
	static CUresult (*get)(CUstream, CUdevice *);
	CUdevice d;

	if (!get && !(get = (CUresult (*)(CUstream, CUdevice *))mt_driver_sym("cuStreamGetDevice")))
		return mt_current_device();
	return get((CUstream)stream, &d) == CUDA_SUCCESS ? d : -1;
}

static void write_meminfo(struct mt_thread *t, int device, uint64_t now)
{
	static CUresult (*get_info)(size_t *, size_t *);
	size_t free_b, total_b;

	if (!get_info && !(get_info = (CUresult (*)(size_t *, size_t *))mt_driver_sym("cuMemGetInfo_v2")))
		return;
	/* The growth count restarts before the measurement: bytes handed on
	   meanwhile count towards the next sample (at worst one too early). */
	atomic_store_explicit(&growth[device].grown, 0, memory_order_relaxed);
	if (tgrow.dev == device)
		tgrow.bytes = 0;
	if (get_info(&free_b, &total_b) != CUDA_SUCCESS)
		return;
	uint64_t used = total_b > free_b ? total_b - free_b : 0;
	atomic_store_explicit(&grow_step[device], used / 100 > GROW_MIN ? used / 100 : GROW_MIN,
			      memory_order_relaxed);
	struct mt_meminfo m = { { MT_REC_MEMINFO, sizeof m / 8, 0, (int8_t)device }, 0, free_b, total_b, 0 };
	(void)mt_writer_put(t, &m, sizeof m, now);
}

/*
 * cuMemGetInfo_v2 measures the current context's device, so a device is
 * sampled only by a thread whose current device it is: when first used,
 * after a failed allocation, at most every MEMTRACE_SAMPLE_MS, and when
 * its allocations grew by a step (grew), at most every
 * MEMTRACE_SAMPLE_GROWTH_US (else the thread owes it: sample_owed).
 */
static void maybe_sample(struct mt_thread *t, int device, uint64_t now, int failed, int grew)
{
	if (device < 0 || device >= MAX_DEVICES)
		return;
	uint64_t last = atomic_load_explicit(&last_sample[device], memory_order_relaxed);
	uint64_t since = now > last ? now - last : 0;   /* another thread's later sample: 0 */
	int due = last == 0 || failed || (mt_config.sample_ns && since >= mt_config.sample_ns) ||
		  (grew && since >= mt_config.growth_ns);
	if (!due) {
		if (grew) {
			tgrow.owed = device + 1;
			tgrow.due = atomic_load_explicit(&last_owed[device], memory_order_relaxed) +
				    mt_config.growth_ns;
		}
		return;
	}
	if (!atomic_compare_exchange_strong(&last_sample[device], &last, now))
		return;   /* another thread samples it now */
	if (mt_current_device() == device) {
		if (tgrow.owed == device + 1)
			tgrow.owed = 0;
		write_meminfo(t, device, now);
	} else if (last == 0)
		atomic_store(&last_sample[device], 0);   /* not sampled yet */
}

/* A successful allocation of bytes on device: 1 when the device's count
   since its last sample reached the step (growth_ns is not 0). */
static inline int grow_add(int device, uint64_t bytes)
{
	if (MT_UNLIKELY(tgrow.dev != device)) {
		if (tgrow.bytes)
			atomic_fetch_add_explicit(&growth[tgrow.dev].grown, tgrow.bytes, memory_order_relaxed);
		tgrow.dev = device;
		tgrow.bytes = 0;
	}
	tgrow.bytes += bytes;
	uint64_t step = atomic_load_explicit(&grow_step[device], memory_order_relaxed);
	if (MT_LIKELY(tgrow.bytes < step >> GROW_FLUSH_SHIFT))
		return 0;
	uint64_t g = atomic_fetch_add_explicit(&growth[device].grown, tgrow.bytes, memory_order_relaxed) +
		     tgrow.bytes;
	tgrow.bytes = 0;
	return g >= (step ? step : GROW_MIN);
}

/* At a free's start: the sample this thread owes, once the rate limit
   lets it (not when another thread sampled since: the count is then under
   its step again). */
static void sample_owed(struct mt_thread *t, uint64_t now)
{
	int device = tgrow.owed - 1;

	if (now < tgrow.due)
		return;   /* too soon: no shared line read */
	uint64_t step = atomic_load_explicit(&grow_step[device], memory_order_relaxed);
	if (atomic_load_explicit(&growth[device].grown, memory_order_relaxed) < (step ? step : GROW_MIN)) {
		tgrow.owed = 0;
		return;
	}
	uint64_t lo = atomic_load_explicit(&last_owed[device], memory_order_relaxed);
	if (lo && (now < lo || now - lo < mt_config.growth_ns)) {
		tgrow.due = lo + mt_config.growth_ns;   /* another thread's, meanwhile */
		return;
	}
	if (!mt_writer_ready(t, now) || !atomic_compare_exchange_strong(&last_owed[device], &lo, now))
		return;
	if (mt_current_device() != device)
		return;   /* owed still: the next free may be on this device */
	tgrow.owed = 0;
	atomic_store_explicit(&last_sample[device], now, memory_order_relaxed);
	write_meminfo(t, device, now);
}

static void write_driver_version(struct mt_thread *t)
{
	static CUresult (*get)(int *);
	int v;
	uint32_t delta;

	if (__atomic_exchange_n(&driver_version_written, 1, __ATOMIC_RELAXED))
		return;
	if (!get && !(get = (CUresult (*)(int *))mt_driver_sym("cuDriverGetVersion")))
		return;
	if (get(&v) != CUDA_SUCCESS)
		return;
	struct mt_driver *d = mt_writer_reserve(t, sizeof *d, mt_now(), &delta);
	if (!d)
		return;
	d->driver_version = v;
	d->pad = 0;
	mt_writer_commit(d, (struct mt_head){ MT_REC_DRIVER, sizeof *d / 8, 0, 0 });
}

void mt_event(struct mt_thread *t, int type, int kind, int device, int api,
	      uint64_t time, uint64_t addr, uint64_t bytes, int result,
	      const uint64_t *x)
{
	if (MT_UNLIKELY(t->label && result != 0)) {
		t->label_failed = 1;        /* the runtime wrapper records it */
		return;
	}
	if (MT_UNLIKELY(!mt_writer_ready(t, time)))
		return;
	uint32_t stack = mt_stack_capture(t);

	if (MT_UNLIKELY(!driver_version_written))
		write_driver_version(t);
	if (t->label) {
		api = t->label;
		t->label_events++;
	}
	mt_write_event(t, type == MT_REC_FREE ? MT_CT_FREE : MT_CT_ALLOC, kind, device, api, time,
		       addr, bytes, stack, result, x);
	if (device >= 0 && (kind & MT_KIND_MASK) != MT_KIND_HOST && (kind & MT_KIND_MASK) != MT_KIND_HOST_REGISTER) {
		int is_free = type == MT_REC_FREE || type == MT_REC_FREE_EX;
		int grew = !is_free && result == 0 && device < MAX_DEVICES && mt_config.growth_ns &&
			   (grow_add(device, bytes) || tgrow.owed == device + 1);
		maybe_sample(t, device, time, result != 0 && !is_free, grew);
	}
}

void mt_note(struct mt_thread *t, const char *text)
{
	size_t len = strlen(text);
	size_t size = (sizeof(struct mt_note) + len + 7) & ~(size_t)7;
	uint32_t delta;
	struct mt_note *n = mt_writer_reserve(t, size, mt_now(), &delta);

	if (!n)
		return;
	memset(n, 0, size);
	n->lh.size = (uint32_t)size;
	n->time_delta = delta;
	n->len = (uint32_t)len;
	memcpy(n + 1, text, len);
	mt_writer_commit(n, (struct mt_head){ MT_REC_NOTE, 0, 0, 0 });
}

/* --- pools ---------------------------------------------------------------- */

static struct pool_state *pool_find(uint64_t pool, int add)
{
	for (int i = 0; i < n_pools; i++)
		if (pools[i].pool == pool)
			return &pools[i];
	if (!add || n_pools == MAX_POOLS)
		return NULL;
	pools[n_pools] = (struct pool_state){ pool, 0, 0, -1 };
	return &pools[n_pools++];
}

void mt_pool_known(uint64_t pool, int device)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pools_lock);
	struct pool_state *p = pool_find(pool, 1);
	if (p && device >= 0)
		p->device = device;
	pthread_mutex_unlock(&pools_lock);
}

uint64_t mt_device_pool(int device)
{
	static CUresult (*get)(CUmemoryPool *, CUdevice);
	CUmemoryPool pool;

	if (device < 0 || (!get && !(get = (CUresult (*)(CUmemoryPool *, CUdevice))mt_driver_sym("cuDeviceGetMemPool"))))
		return 0;
	if (get(&pool, device) != CUDA_SUCCESS)
		return 0;
	mt_pool_known((uint64_t)(uintptr_t)pool, device);
	return (uint64_t)(uintptr_t)pool;
}

static void write_pool(struct mt_thread *t, const struct pool_state *p, int api)
{
	uint32_t delta;
	struct mt_pool *r = mt_writer_reserve(t, sizeof *r, mt_now(), &delta);

	if (!r)
		return;
	memset(r, 0, sizeof *r);
	r->time_delta = delta;
	r->pool = p->pool;
	r->reserved = p->reserved;
	r->used = p->used;
	r->api = (uint16_t)(t->label ? t->label : api);
	mt_writer_commit(r, (struct mt_head){ MT_REC_POOL, sizeof *r / 8, 0, (int8_t)p->device });
}

typedef CUresult (*pool_attr_fn)(CUmemoryPool, CUmemPool_attribute, void *);

/* Looked up before pools_lock is taken: the look-up may take the loader
   lock, and a thread holding that one (in a constructor) may want ours. */
static pool_attr_fn pool_attr(void)
{
	static pool_attr_fn get;
	if (!get)
		get = (pool_attr_fn)mt_driver_sym("cuMemPoolGetAttribute");
	return get;
}

/* Read a pool's attributes and write a POOL record if they changed. */
static void sample_locked(struct mt_thread *t, struct pool_state *p, int api, pool_attr_fn get)
{
	cuuint64_t reserved, used;

	if (get((CUmemoryPool)(uintptr_t)p->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) != CUDA_SUCCESS ||
	    get((CUmemoryPool)(uintptr_t)p->pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) != CUDA_SUCCESS)
		return;
	if (reserved == p->reserved && used == p->used)
		return;
	p->reserved = reserved;
	p->used = used;
	write_pool(t, p, api);
}

void mt_pool_sample(struct mt_thread *t, uint64_t pool, int api)
{
	pool_attr_fn get = pool_attr();

	if (!get || !mt_writer_ready(t, mt_now()))
		return;
	pthread_mutex_lock(&pools_lock);
	struct pool_state *p = pool_find(pool, 1);
	if (p)
		sample_locked(t, p, api, get);
	pthread_mutex_unlock(&pools_lock);
}

void mt_pools_sample_all(struct mt_thread *t, int api)
{
	pool_attr_fn get;

	if (!__atomic_load_n(&n_pools, __ATOMIC_RELAXED) || !(get = pool_attr()) || !mt_writer_ready(t, mt_now()))
		return;
	pthread_mutex_lock(&pools_lock);
	for (int i = 0; i < n_pools; i++)
		sample_locked(t, &pools[i], api, get);
	pthread_mutex_unlock(&pools_lock);
}

/* A destroyed pool gives everything back and leaves the table, so a reused
   handle starts afresh. */
void mt_pool_forget(struct mt_thread *t, uint64_t pool, int api)
{
	if (!mt_writer_ready(t, mt_now()))
		return;
	pthread_mutex_lock(&pools_lock);
	struct pool_state *p = pool_find(pool, 0);
	if (p) {
		if (p->reserved || p->used) {
			p->reserved = p->used = 0;
			write_pool(t, p, api);
		}
		*p = pools[--n_pools];
	}
	pthread_mutex_unlock(&pools_lock);
}

/* --- process start, fork, exit --------------------------------------------- */

static size_t read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, cap, f);
		fclose(f);
	}
	return n;
}

static int env_int(const char *name)
{
	const char *s = getenv(name);
	return s && *s ? atoi(s) : -1;
}

/* Called by the writer once the file exists: who we are, what is loaded. */
void mt_on_file_open(struct mt_thread *t)
{
	char host[256] = "", exe[4096], cmd[8192];
	size_t host_len, exe_len, cmd_len;
	ssize_t n;
	uint32_t delta;

	gethostname(host, sizeof host - 1);
	host_len = strnlen(host, sizeof host - 1);
	n = readlink("/proc/self/exe", exe, sizeof exe);
	exe_len = n > 0 ? (size_t)n : 0;
	/* As /proc has it: each argument followed by a NUL, so an empty last
	   argument survives. */
	cmd_len = read_file("/proc/self/cmdline", cmd, sizeof cmd);

	size_t size = (sizeof(struct mt_process) + host_len + exe_len + cmd_len + 7) & ~(size_t)7;
	struct mt_process *p = mt_writer_reserve(t, size, mt_now(), &delta);
	if (p) {
		memset(p, 0, size);
		p->lh.size = (uint32_t)size;
		p->pid = (uint32_t)getpid();
		p->ppid = (uint32_t)getppid();
		p->rank = env_int("RANK");
		p->local_rank = env_int("LOCAL_RANK");
		p->world_size = env_int("WORLD_SIZE");
		p->hostname_len = (uint16_t)host_len;
		p->exe_len = (uint16_t)exe_len;
		p->cmdline_len = (uint32_t)cmd_len;
		char *s = (char *)(p + 1);
		memcpy(s, host, host_len);
		memcpy(s + host_len, cmd, cmd_len);
		memcpy(s + host_len + cmd_len, exe, exe_len);
		mt_writer_commit(p, (struct mt_head){ MT_REC_PROCESS, 0, 0, 0 });
	}
	if (mt_config.depth > 0)
		mt_modules_write(t, 1);
}

void mt_writer_atfork_prepare(void);
void mt_writer_atfork_parent(void);
void mt_modules_atfork_prepare(void);
void mt_modules_atfork_parent(void);

static void atfork_prepare(void)
{
	pthread_mutex_lock(&pools_lock);
	mt_modules_atfork_prepare();
	mt_writer_atfork_prepare();
}

static void atfork_parent(void)
{
	mt_writer_atfork_parent();
	mt_modules_atfork_parent();
	pthread_mutex_unlock(&pools_lock);
}

static void atfork_child(void)
{
	mt_writer_fork_child();
	mt_modules_fork_child();
	mt_stacks_fork_child();
	mt_fw_fork_child();
	mt_ranges_fork_child();
	pthread_mutex_init(&pools_lock, NULL);
	for (int i = 0; i < n_pools; i++)
		pools[i].reserved = pools[i].used = 0;
	for (int d = 0; d < MAX_DEVICES; d++) {
		atomic_store(&last_sample[d], 0);
		atomic_store(&last_owed[d], 0);
		atomic_store(&growth[d].grown, 0);
		atomic_store(&grow_step[d], 0);
	}
	tgrow.bytes = 0;
	tgrow.owed = 0;
	driver_version_written = 0;
	if (!mt_config.follow)
		traced = 0;
}

static int exit_handler_set;               /* on_exit() took mt_exited */
static void (*real_exit_fn)(int);          /* the C library's _exit */

static void mt_exited(int status, void *arg)
{
	(void)arg;
	if (traced) {
		mt_fw_python_check();
		mt_writer_close(&thread_state, MT_EXIT_EXIT, status);
	}
}

/* _exit and _Exit: the record, then the real call (the system call itself
   when it could not be found: _exit must not return). */
static __attribute__((noreturn)) void exit_now(int status)
{
	if (traced)
		mt_writer_close(&thread_state, MT_EXIT__EXIT, status);
	if (real_exit_fn)
		real_exit_fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

MT_EXPORT void _exit(int status)
{
	exit_now(status);
}

MT_EXPORT void _Exit(int status)
{
	exit_now(status);
}

/*
 * Start once per process image, whichever comes first: this library's
 * constructor, or the first hooked call (another library's constructor can
 * run before ours and allocate). The on_exit handler is registered here,
 * before the C library registers the destructors' runner, so it runs after
 * every destructor whichever constructor ran first.
 */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	mt_config_load();
	mt_real_init();
	traced = mt_config.follow || !mt_config.root_pid || mt_config.root_pid == getpid();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	/* Looked up now: _exit may be called from a signal handler, where
	   dlsym is not safe. */
	if (mt_real_dlsym)
		real_exit_fn = (void (*)(int))mt_real_dlsym(RTLD_NEXT, "_exit");
	exit_handler_set = on_exit(mt_exited, NULL) == 0;
	__atomic_store_n(&mt_inited, 1, __ATOMIC_RELEASE);
}

void mt_init(void)
{
	pthread_once(&init_once, init);
}

__attribute__((constructor)) static void mt_start(void)
{
	mt_init();
}

/* Destructors run before mt_exited, which closes the trace, and another
   library's destructor may still free after this one: nothing is closed
   here unless on_exit failed (then without an exit record). */
__attribute__((destructor)) static void mt_stop(void)
{
	if (!exit_handler_set)
		mt_writer_close(&thread_state, 0, 0);
}
