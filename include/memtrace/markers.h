/*
 * markers.h - memtrace's marker API for C and C++: name the program's own
 * units of time (phases, steps, tests) so that memtrace's report speaks in
 * them ("peak 1.2 GiB in range 'forward' (step 3)"). Header-only: include
 * it and call the functions; nothing to link.
 *
 *   #include <memtrace/markers.h>
 *   memtrace_push("train", "step 3");      nested, per thread and domain
 *   memtrace_push("train", "forward");
 *   ...
 *   memtrace_pop("train");
 *   memtrace_pop("train");
 *   uint64_t id = memtrace_start("io", "prefetch");  may end on any thread
 *   memtrace_end(id);
 *   memtrace_mark(NULL, "epoch 1");        an instant
 *
 * domain NULL is NVTX's default domain: the same records as nvtxRangePushA
 * and friends (preload/nvtx.c), so a program that already uses NVTX needs
 * none of this. A program that runs without memtrace finds no recorder:
 * each call looks the recorder's entry point up once (dlsym(RTLD_DEFAULT),
 * glibc 2.34 and later need no -ldl; older ones do) and is then a test
 * of a null pointer. Thread-safe; never fails the caller.
 *
 * The entry point libmemtrace.so exports (the Python API uses it too):
 *   int memtrace_range_record(int op, int origin, const char *domain,
 *                             const char *message, uint64_t id, uint64_t *out)
 * op is enum mt_range_op of trace-format.h, origin enum mt_range_origin.
 * It returns the nesting depth (push, pop: of the range it opened or
 * closed, from 0; -1 for a pop with nothing open) or 0, and for a start
 * the new range's id in *out; -1 when nothing is recorded.
 */
#ifndef MEMTRACE_MARKERS_H
#define MEMTRACE_MARKERS_H

#include <dlfcn.h>
#include <stdint.h>

typedef int (*memtrace_range_record_fn)(int op, int origin, const char *domain,
					const char *message, uint64_t id, uint64_t *out);

static inline memtrace_range_record_fn memtrace__entry(void)
{
	/* 1: not looked up yet; NULL: no recorder in this process */
	static memtrace_range_record_fn fn = (memtrace_range_record_fn)1;
	memtrace_range_record_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);

	if (f == (memtrace_range_record_fn)1) {
		f = (memtrace_range_record_fn)dlsym(RTLD_DEFAULT, "memtrace_range_record");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* Opens a range on this thread (in domain, NULL: the default); returns
   its depth from 0, or -1 without memtrace. */
static inline int memtrace_push(const char *domain, const char *name)
{
	memtrace_range_record_fn f = memtrace__entry();
	return f ? f(1, 2, domain, name, 0, 0) : -1;
}

/* Closes this thread's innermost open range of domain; its depth, or -1
   (nothing open, or no memtrace). */
static inline int memtrace_pop(const char *domain)
{
	memtrace_range_record_fn f = memtrace__entry();
	return f ? f(2, 2, domain, 0, 0, 0) : -1;
}

/* Starts a range that any thread may end; its id (0 without memtrace). */
static inline uint64_t memtrace_start(const char *domain, const char *name)
{
	memtrace_range_record_fn f = memtrace__entry();
	uint64_t id = 0;

	if (f)
		f(3, 2, domain, name, 0, &id);
	return id;
}

static inline void memtrace_end(uint64_t id)
{
	memtrace_range_record_fn f = memtrace__entry();

	if (f && id)
		f(4, 2, 0, 0, id, 0);
}

/* An instant: "epoch 3", "checkpoint saved". */
static inline void memtrace_mark(const char *domain, const char *name)
{
	memtrace_range_record_fn f = memtrace__entry();

	if (f)
		f(5, 2, domain, name, 0, 0);
}

#endif
