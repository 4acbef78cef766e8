/*
 * stacks.c - native backtraces, interned: each distinct stack is written
 * once as an MT_REC_STACK record and events carry its id.
 *
 * How it works. libunwind's unw_backtrace walks the caller's frames with
 * its per-thread cache of unwind info. memtrace's own frames (the innermost
 * ones, inside this library) are dropped. The stack is hashed and looked up
 * in a lock-free open-addressing table of pointers to immutable entries:
 * a miss builds the entry, id included, in a bump-allocated arena and
 * publishes it with a compare-and-swap into the empty slot; the thread whose
 * CAS wins writes the record. A losing thread re-reads the slot (the winner
 * may have inserted the same stack) and probes on. Nothing is ever removed,
 * so readers need no lock and no reclamation. If a thread is killed between
 * its CAS and its record, events of other threads may name an id without a
 * record; the analyzer shows those as unknown stacks.
 *
 * Where the thread runs Python code, pyframes.c splices the Python frames
 * into the native ones before interning; a mixed stack is hashed and
 * grouped like any other.
 *
 * When the table is three quarters full or the arena is spent, new stacks
 * get id 0 ("not recorded") rather than slow the program down.
 * After fork the child starts with an empty table: its ids and stack
 * records belong to its own trace file.
 *
 * The unwind cache (x86-64). A program allocates from few call paths, so
 * each thread keeps its last CACHE_WAYS stacks, each with where every
 * frame's return address lives on the stack: frame i's ip was read from
 * slot[i] = its stack pointer - 8 (the CFA of frame i - 1). A capture reads
 * its own stack pointer; for each entry filled at the same stack pointer it
 * compares the words at slot[1..n] with ip[1..n] and, on a match, returns
 * the entry's id without unwinding or hashing. This is exactly the stack
 * unw_backtrace gives, by induction from frame 0 (this function: a fixed
 * frame, the same stack pointer): when frame i has the same ip and stack
 * pointer, its CFA is the same (the CFA of a return address is fixed by
 * the code and the stack pointer there), so frame i + 1's ip is read from
 * the same slot, which holds the same word. Two call paths reaching a leaf
 * through the same caller differ in some slot, so they are two stacks.
 * Where that premise fails, a frame whose stack pointer moves at run time
 * at the call (alloca, a variable-length array) could be taken for
 * another stack only if, besides, the old return address were still lying
 * in dead stack at its old slot. Signal frames (not return addresses) and
 * frames whose slot does not hold their ip are never cached. A miss walks
 * with unw_step (the stack pointers are needed), libunwind set to its
 * per-thread cache so no lock is taken; a thread whose lookups mostly miss
 * stops filling and unwinds with unw_backtrace as before. The cache is
 * mmap'ed on a thread's fifth capture (short-lived threads never pay for
 * it), unmapped when the thread exits (a pthread key), and its entries die
 * with the table after fork (a generation). MEMTRACE_STACK_CACHE=0 turns
 * it off.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mt.h"

#define TABLE_SLOTS (1u << 20)
#define TABLE_MAX_USED (TABLE_SLOTS / 4 * 3)
#define ARENA_BYTES (256u << 20)    /* reserved, not committed */
#define SKIP_MAX 16                 /* own frames at most */

struct stack_entry {
	uint64_t hash;
	uint32_t id;
	uint32_t depth;
	uint64_t ips[];
};

static struct stack_entry *_Atomic *table;
static char *arena;
static _Atomic size_t arena_used;
static _Atomic uint32_t next_id = 1;
static _Atomic uint32_t used_slots;

#if defined(__x86_64__)
#define CACHE 1
#define CACHE_WAYS 8
#define CACHE_PROBE 64              /* lookups per hit-rate check */
#define CACHE_LATER 4               /* captures of a thread before its cache */

struct cached {
	uintptr_t sp;               /* stack pointer of the capture, 0: empty */
	uint32_t gen, id;
	int n;                      /* frames 0..n-1, own ones included */
	int skip;                   /* own frames first */
	int py;                     /* id is of a stack with Python frames */
	uint64_t *ips, *slots;      /* n of each; slots[0] unused */
};

struct stack_cache {
	struct cached e[CACHE_WAYS];
	unsigned next;              /* way to replace */
	unsigned lookups, hits;     /* since the last probe */
	int off;                    /* filling stopped: lookups left to skip */
	size_t bytes;               /* of the mapping */
};

static __thread struct stack_cache *tcache;
static __thread unsigned plain_first;   /* captures before the cache */
static int cache_on;
static _Atomic uint32_t cache_gen;
static pthread_key_t cache_key;
#endif

#ifdef CACHE
static void cache_free(void *p)
{
	struct stack_cache *c = p;
	if (c == tcache)
		tcache = NULL;
	munmap(c, c->bytes);
}
#endif

static int table_init(void)
{
	static _Atomic int done;
	if (MT_LIKELY(atomic_load_explicit(&done, memory_order_acquire)))
		return table ? 0 : -1;
	/* First caller maps; a racing caller may map too and lose its copy. */
	void *t = mmap(NULL, TABLE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED || a == MAP_FAILED) {
		if (t != MAP_FAILED)
			munmap(t, TABLE_SLOTS * sizeof(void *));
		if (a != MAP_FAILED)
			munmap(a, ARENA_BYTES);
		atomic_store_explicit(&done, 1, memory_order_release);
		return -1;
	}
	void *expected = NULL;
	if (!atomic_compare_exchange_strong((_Atomic(void *) *)&table, &expected, t)) {
		munmap(t, TABLE_SLOTS * sizeof(void *));
		munmap(a, ARENA_BYTES);
	} else {
		arena = a;
#ifdef CACHE
		if (mt_config.stack_cache && pthread_key_create(&cache_key, cache_free) == 0) {
			/* unw_step's own cache: per thread, no lock */
			unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
			cache_on = 1;
		}
#endif
	}
	atomic_store_explicit(&done, 1, memory_order_release);
	return 0;
}

static uint64_t hash_ips(const uint64_t *ips, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)n;
	for (int i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	return h;
}

static void write_stack(struct mt_thread *t, const struct stack_entry *e)
{
	size_t size = sizeof(struct mt_stack) + e->depth * sizeof(uint64_t);
	uint32_t delta;
	struct mt_stack *r = mt_writer_reserve(t, size, mt_now(), &delta);

	if (!r)
		return;
	r->lh.size = (uint32_t)size;
	r->id = e->id;
	r->depth = e->depth;
	memcpy(r->ips, e->ips, e->depth * sizeof(uint64_t));
	mt_writer_commit(r, (struct mt_head){ MT_REC_STACK, 0, 0, 0 });
}

static uint32_t intern(struct mt_thread *t, const uint64_t *ips, int n)
{
	uint64_t h = hash_ips(ips, n);
	size_t bytes = sizeof(struct stack_entry) + (size_t)n * sizeof(uint64_t);
	struct stack_entry *mine = NULL;

	for (uint32_t i = (uint32_t)h & (TABLE_SLOTS - 1);; i = (i + 1) & (TABLE_SLOTS - 1)) {
		struct stack_entry *e = atomic_load_explicit(&table[i], memory_order_acquire);
		if (!e) {
			if (atomic_load_explicit(&used_slots, memory_order_relaxed) >= TABLE_MAX_USED)
				return 0;
			if (!mine) {
				size_t off = atomic_fetch_add(&arena_used, (bytes + 7) & ~(size_t)7);
				if (off + bytes > ARENA_BYTES)
					return 0;
				mine = (struct stack_entry *)(arena + off);
				mine->hash = h;
				mine->depth = (uint32_t)n;
				/* Taken before publishing, so no reader sees 0; a
				   lost race wastes the number, which is harmless. */
				mine->id = atomic_fetch_add(&next_id, 1);
				memcpy(mine->ips, ips, (size_t)n * sizeof(uint64_t));
			}
			if (atomic_compare_exchange_strong(&table[i], &e, mine)) {
				atomic_fetch_add_explicit(&used_slots, 1, memory_order_relaxed);
				if (mt_modules_maybe_changed())
					mt_modules_write(t, 1);
				write_stack(t, mine);
				return mine->id;
			}
			/* Lost the race: e now holds the winner; check it below. */
		}
		if (e->hash == h && e->depth == (uint32_t)n &&
		    memcmp(e->ips, ips, (size_t)n * sizeof(uint64_t)) == 0)
			return e->id;
	}
}

/* The native frames after skip, Python ones spliced in, interned; *py
   says whether there were Python frames. */
static uint32_t intern_native(struct mt_thread *t, const uint64_t *ips, int n, int depth, int *py)
{
	uint64_t mixed[MT_MAX_DEPTH];
	int m;

	*py = 0;
	if (n > 0 && (m = mt_py_splice(t, ips, n, mixed, depth)) > 0) {
		*py = 1;
		return intern(t, mixed, m);
	}
	if (n > depth)
		n = depth;
	if (n <= 0)
		return 0;
	return intern(t, ips, n);
}

#ifdef CACHE
static struct stack_cache *cache_get(int depth)
{
	int frames = depth + SKIP_MAX;
	size_t bytes = sizeof(struct stack_cache) + (size_t)CACHE_WAYS * 2 * (size_t)frames * sizeof(uint64_t);
	struct stack_cache *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	uint64_t *p = (uint64_t *)(c + 1);
	for (int i = 0; i < CACHE_WAYS; i++, p += 2 * frames) {
		c->e[i].ips = p;
		c->e[i].slots = p + frames;
	}
	c->bytes = bytes;
	if (pthread_setspecific(cache_key, c) != 0) {
		munmap(c, bytes);
		return NULL;
	}
	return tcache = c;
}

/* Every frame's return address still where the entry found it: from
   frame 2, the first whose slot is not below this function's stack. */
static int cache_valid(const struct cached *e)
{
	const uint64_t *ips = e->ips, *slots = e->slots;
	int i = 2, n = e->n;

	/* Four at a time, one branch each: the loads are independent. */
	for (; i + 4 <= n; i += 4) {
		uint64_t d = (*(const uint64_t *)(uintptr_t)slots[i] ^ ips[i]) |
			     (*(const uint64_t *)(uintptr_t)slots[i + 1] ^ ips[i + 1]) |
			     (*(const uint64_t *)(uintptr_t)slots[i + 2] ^ ips[i + 2]) |
			     (*(const uint64_t *)(uintptr_t)slots[i + 3] ^ ips[i + 3]);
		if (d)
			return 0;
	}
	for (; i < n; i++)
		if (*(const uint64_t *)(uintptr_t)slots[i] != ips[i])
			return 0;
	return 1;
}

/* Unwind from here with unw_step into e, keeping where each return address
   was read; 0 when a frame is not a plain call frame (do not cache). */
static __attribute__((noinline)) int cache_walk(struct cached *e, int max)
{
	unw_context_t uc;
	unw_cursor_t cur;
	unw_word_t ip, sp;
	int n = 0, ok = 1, r;

	if (unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0)
		return -1;
	do {
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) != 0)
			return -1;
		if (n > 0 && (unw_is_signal_frame(&cur) > 0 || sp < 8 || *(const uint64_t *)(sp - 8) != ip))
			ok = 0;
		e->ips[n] = ip;
		e->slots[n] = sp - 8;
		n++;
	} while (n < max && (r = unw_step(&cur)) > 0);
	e->n = n;
	return ok;
}
#endif

static __attribute__((noinline)) uint32_t capture_plain(struct mt_thread *t, int depth)
{
	void *buf[MT_MAX_DEPTH + SKIP_MAX];
	int n, skip = 0, py;

	n = unw_backtrace(buf, depth + SKIP_MAX);
	while (skip < n && skip < SKIP_MAX && mt_is_own(buf[skip]))
		skip++;
	return intern_native(t, (const uint64_t *)(buf + skip), n - skip, depth, &py);
}

static __attribute__((noinline)) uint32_t capture(struct mt_thread *t, int depth)
{
#ifdef CACHE
	struct stack_cache *c = tcache;
	uintptr_t sp;
	uint32_t gen;

	/* A thread's first few stacks are unwound plainly: a short-lived
	   thread does not pay for a cache it would not use. */
	if (!cache_on || (!c && (++plain_first <= CACHE_LATER || !(c = cache_get(depth)))))
		return capture_plain(t, depth);
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	gen = atomic_load_explicit(&cache_gen, memory_order_relaxed);
	c->lookups++;
	for (int i = 0; i < CACHE_WAYS; i++) {
		struct cached *e = &c->e[i];
		if (e->sp == sp && e->gen == gen && cache_valid(e)) {
			uint64_t mixed[MT_MAX_DEPTH];
			int m, py;
			c->hits++;
			/* Python frames change under the same native stack. */
			if (mt_config.python && (m = mt_py_splice(t, e->ips + e->skip, e->n - e->skip, mixed, depth)) > 0)
				return intern(t, mixed, m);
			if (e->py)
				return intern_native(t, e->ips + e->skip, e->n - e->skip, depth, &py);
			return e->id;
		}
	}
	/* Mostly misses (every stack new): stop paying for the walk a while. */
	if (c->off > 0) {
		if (--c->off == 0)
			c->lookups = c->hits = 0;
		return capture_plain(t, depth);
	}
	if (c->lookups >= CACHE_PROBE) {
		c->off = c->hits * 4 < c->lookups ? CACHE_PROBE * 16 : 0;
		c->lookups = c->hits = 0;
		if (c->off)
			return capture_plain(t, depth);
	}
	struct cached *e = &c->e[c->next++ % CACHE_WAYS];
	int skip = 0, py;
	e->sp = 0;
	int ok = cache_walk(e, depth + SKIP_MAX);
	if (ok < 0)
		return capture_plain(t, depth);
	while (skip < e->n && skip < SKIP_MAX && mt_is_own((const void *)(uintptr_t)e->ips[skip]))
		skip++;
	uint32_t id = intern_native(t, e->ips + skip, e->n - skip, depth, &py);
	/* Frames past the depth need no check: they are not in the stack. */
	if (e->n > skip + depth)
		e->n = skip + depth;
	if (ok && skip > 0) {
		e->skip = skip;
		e->py = py;
		e->id = id;
		e->gen = gen;
		e->sp = sp;
	}
	return id;
#else
	return capture_plain(t, depth);
#endif
}

/* MEMTRACE_STACK_CHECK=1: the stack given, then the one unw_backtrace
   gives from the same place; a difference is written as a note. */
static __attribute__((noinline)) uint32_t capture_checked(struct mt_thread *t, int depth)
{
	static _Atomic unsigned notes;
	uint32_t id = capture(t, depth), full = capture_plain(t, depth);
	char text[96];

	if (id != full && atomic_fetch_add(&notes, 1) < 1000) {
		snprintf(text, sizeof text, "stack check: stack %u given, full unwind %u", id, full);
		mt_note(t, text);
	}
	return id;
}

uint32_t mt_stack_capture(struct mt_thread *t)
{
	int depth = mt_config.depth;

	if (depth == 0 || table_init() != 0)
		return 0;
	if (MT_UNLIKELY(mt_config.stack_check))
		return capture_checked(t, depth);
	return capture(t, depth);
}

void mt_stacks_fork_child(void)
{
	if (!table)
		return;
	/* Fresh zero pages in place: same addresses, nothing to reallocate. */
	mmap(table, TABLE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	mmap(arena, ARENA_BYTES, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	atomic_store(&arena_used, 0);
	atomic_store(&used_slots, 0);
	atomic_store(&next_id, 1);
#ifdef CACHE
	atomic_fetch_add(&cache_gen, 1);   /* the ids were the parent's */
#endif
	mt_py_fork_child();
}
