/*
 * ranges.c - range records (format 2.1): the program's own units of time.
 * NVTX calls (nvtx.c), the marker API of include/memtrace/markers.h and
 * memtrace's Python API (through memtrace_range_record, exported here) all
 * end in mt_range_write(): one MT_REC_RANGE in the calling thread's slab,
 * at the time of the call, so its thread and time are an event's.
 *
 * Strings (domains and messages) are interned: each distinct string is
 * written once per file as an MT_REC_STRING and records carry its id. The
 * table is open addressing over a fixed array (never rehashed), the bytes
 * in an mmap'd arena, both reserved and not committed: no malloc. Lookups
 * are lock-free: an entry is filled under str_lock, its bytes first and
 * its id last (a release store), so a reader that sees the id sees the
 * bytes; a new string takes the lock, looks again and writes its record
 * (in the caller's slab, committed) before publishing the id, so no range
 * record names a string the file lacks. When the table or the arena is
 * full, new strings are still written, each under a fresh id (no longer
 * shared): "step 123456" for a million steps costs a record per step.
 *
 * Cost: a push or pop is a hash of its strings (already interned: no
 * lock), a clock read and a 16-byte record; bench/range-loop.c measures it.
 * After fork the child's table starts empty: ids belong to a file.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <wchar.h>
#include "ranges.h"

#define SLOTS (1u << 16)
#define MAX_USED (SLOTS / 4 * 3)
#define ARENA_BYTES (32u << 20)

struct str_entry {
	uint64_t hash;
	uint64_t off;           /* of the bytes in the arena */
	uint32_t len;
	_Atomic uint32_t id;    /* 0: empty; stored last */
};

static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER;
static struct str_entry *table;
static char *arena;
static size_t arena_used;
static uint32_t used_slots;
static uint32_t next_id = 1;
static _Atomic uint32_t str_epoch;      /* writer epoch of the table */
static _Atomic int table_state;         /* 0 none, 1 ready, -1 failed */
static _Atomic uint64_t next_range = 1;
static __thread int depth;

static int table_init(void)
{
	int s = atomic_load_explicit(&table_state, memory_order_acquire);

	if (s)
		return s > 0 ? 0 : -1;
	void *t = mmap(NULL, SLOTS * sizeof *table, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED || a == MAP_FAILED) {
		if (t != MAP_FAILED)
			munmap(t, SLOTS * sizeof *table);
		if (a != MAP_FAILED)
			munmap(a, ARENA_BYTES);
		atomic_store(&table_state, -1);
		return -1;
	}
	table = t;
	arena = a;
	atomic_store_explicit(&table_state, 1, memory_order_release);
	return 0;
}

/* FNV-1a */
static uint64_t hash_bytes(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

/* The id of the string in the table, 0 none; *slot the empty slot where
   it would go (NULL: the table is full of other strings). */
static uint32_t lookup(uint64_t h, const char *s, size_t len, struct str_entry **slot)
{
	*slot = NULL;
	for (uint32_t i = (uint32_t)h & (SLOTS - 1), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		struct str_entry *e = &table[i];
		uint32_t id = atomic_load_explicit(&e->id, memory_order_acquire);

		if (!id) {
			*slot = e;
			return 0;
		}
		if (e->hash == h && e->len == len && !memcmp(arena + e->off, s, len))
			return id;
	}
	return 0;
}

static int write_string(struct mt_thread *t, uint64_t now, uint32_t id, const char *s, size_t len)
{
	size_t size = (sizeof(struct mt_string) + len + 7) & ~(size_t)7;
	uint32_t delta;
	struct mt_string *r = mt_writer_reserve(t, size, now, &delta);

	if (!r)
		return -1;
	memset((char *)r + size - 8, 0, 8);
	r->lh.size = (uint32_t)size;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
	mt_writer_commit(r, (struct mt_head){ MT_REC_STRING, 0, 0, 0 });
	return 0;
}

/* A fork or the first call: the child's file has none of the strings. */
static void sync_epoch(void)
{
	uint32_t e = mt_writer_epoch();

	if (atomic_load(&str_epoch) == e)
		return;
	if (table)
		memset(table, 0, SLOTS * sizeof *table);
	arena_used = 0;
	used_slots = 0;
	next_id = 1;
	atomic_store(&str_epoch, e);
}

uint32_t mt_string_id(struct mt_thread *t, uint64_t now, const char *s, size_t len)
{
	struct str_entry *slot;
	uint32_t id;

	if (!s || !mt_writer_ready(t, now))
		return 0;
	if (len > MT_STRING_MAX) {
		len = MT_STRING_MAX;
		/* not in the middle of a UTF-8 sequence */
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	if (table_init() < 0)
		return 0;
	uint64_t h = hash_bytes(s, len);
	if (atomic_load_explicit(&str_epoch, memory_order_relaxed) == mt_writer_epoch() &&
	    (id = lookup(h, s, len, &slot)))
		return id;
	pthread_mutex_lock(&str_lock);
	sync_epoch();
	id = lookup(h, s, len, &slot);
	if (!id && write_string(t, now, next_id, s, len) == 0) {
		id = next_id++;
		if (slot && used_slots < MAX_USED && ARENA_BYTES - arena_used >= len) {
			memcpy(arena + arena_used, s, len);
			slot->hash = h;
			slot->off = arena_used;
			slot->len = (uint32_t)len;
			atomic_store_explicit(&slot->id, id, memory_order_release);
			arena_used += (len + 7) & ~(size_t)7;
			used_slots++;
		}
	}
	pthread_mutex_unlock(&str_lock);
	return id;
}

uint32_t mt_string_id_w(struct mt_thread *t, uint64_t now, const wchar_t *s)
{
	char buf[MT_STRING_MAX + 4];
	size_t n = 0;

	if (!s)
		return 0;
	for (; *s && n + 4 <= MT_STRING_MAX; s++) {
		uint32_t c = (uint32_t)*s;

		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xe0 | c >> 12);
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[n++] = (char)(0xf0 | c >> 18);
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return mt_string_id(t, now, buf, n);
}

void mt_range_write(struct mt_thread *t, uint64_t now, int op, int origin, uint32_t domain,
		    uint32_t message, uint64_t id, int has_id)
{
	size_t size = has_id ? sizeof(struct mt_range_id) : sizeof(struct mt_range);
	uint32_t delta;
	struct mt_range_id *r = mt_writer_reserve(t, size, now, &delta);

	if (!r)
		return;
	r->r.time_delta = delta;
	r->r.domain = domain;
	r->r.message = message;
	if (has_id)
		r->id = id;
	mt_writer_commit(r, (struct mt_head){ MT_REC_RANGE, (uint8_t)(size / 8), (uint8_t)op,
					      (int8_t)origin });
}

uint64_t mt_range_new_id(void)
{
	return atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed);
}

int mt_range_depth(int delta)
{
	if (delta < 0) {
		if (depth <= 0)
			return -1;
		return --depth;
	}
	return depth++;
}

static uint32_t str_id(struct mt_thread *t, uint64_t now, const char *s)
{
	return s ? mt_string_id(t, now, s, strlen(s)) : 0;
}

/* The entry point of include/memtrace/markers.h and python/memtrace.py. */
MT_EXPORT int memtrace_range_record(int op, int origin, const char *domain, const char *message,
				    uint64_t id, uint64_t *out)
{
	struct mt_thread *t = mt_thread();
	int ret = 0;

	if (out)
		*out = 0;
	if (op < MT_RANGE_PUSH || op > MT_RANGE_NAME_THREAD || origin < 1 || origin > 127)
		return -1;
	if (op == MT_RANGE_PUSH)
		ret = mt_range_depth(1);
	else if (op == MT_RANGE_POP)
		ret = mt_range_depth(-1);
	if (!t)
		return op == MT_RANGE_PUSH || op == MT_RANGE_POP ? ret : -1;
	if (op == MT_RANGE_START) {
		id = mt_range_new_id();
		if (out)
			*out = id;
	}
	uint64_t now = mt_now();
	uint32_t d = str_id(t, now, domain);
	uint32_t m = op == MT_RANGE_POP || op == MT_RANGE_END ? 0 : str_id(t, now, message);
	mt_range_write(t, now, op, origin, d, m, id,
		       op == MT_RANGE_START || op == MT_RANGE_END || op == MT_RANGE_NAME_THREAD);
	return ret;
}

/* The child of fork: the lock may have been held by a thread that is not
   here; the table starts over at the first call (sync_epoch). */
void mt_ranges_fork_child(void)
{
	pthread_mutex_init(&str_lock, NULL);
}
