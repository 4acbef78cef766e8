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
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdatomic.h>
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

uint32_t mt_stack_capture(struct mt_thread *t)
{
	void *buf[MT_MAX_DEPTH + SKIP_MAX];
	uint64_t mixed[MT_MAX_DEPTH];
	int depth = mt_config.depth, n, skip = 0, m;

	if (depth == 0 || table_init() != 0)
		return 0;
	n = unw_backtrace(buf, depth + SKIP_MAX);
	while (skip < n && skip < SKIP_MAX && mt_is_own(buf[skip]))
		skip++;
	n -= skip;
	/* Python frames, where the interpreter's loop is (pyframes.c). */
	if (n > 0 && (m = mt_py_splice(t, (const uint64_t *)(buf + skip), n, mixed, depth)) > 0)
		return intern(t, mixed, m);
	if (n > depth)
		n = depth;
	if (n <= 0)
		return 0;
	return intern(t, (const uint64_t *)(buf + skip), n);
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
	mt_py_fork_child();
}
