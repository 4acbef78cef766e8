/*
 * htab.h - the one hash table of the analyzer's model: the live set, the
 * sites, the framework model, the ranges model's names and shared memory's
 * maps. (The database loader's pending allocations, the Parquet writer's
 * and export's dictionaries and plot's live boxes still have tables of
 * their own.)
 *
 * How it works: open addressing with linear probing over records of the
 * caller's type, stored in the table, each beginning with a uint32_t: 32
 * bits of its key's hash (never 0; 0 is an empty record). A lookup walks
 * the probe run from the hash's home and hands the caller each record
 * whose stored hash matches, for the caller to compare its own key (a live
 * block compares three fields, a dictionary value its bytes): a run of
 * other keys costs a 32-bit compare each, and the record found is already
 * in the cache line that was compared, one cache miss a lookup. A table of
 * { hash, index } records indexes an array the caller keeps in order (the
 * sites). At most 3/4 full (then it doubles, each record put back from its
 * stored hash, keys not looked at); deletion shifts the run back, so there
 * are no tombstones. Records move when the table grows or a record is
 * deleted: a pointer to one is good until the next htab_add() or htab_del().
 *
 *   struct htab t = HTAB_INIT(struct rec);
 *   struct htab_probe pr;
 *   for (struct rec *r = htab_find(&t, h, &pr); r; r = htab_more(&t, &pr))
 *           if (same_key(r, key))
 *                   return r;
 *   r = htab_add(&t, h);          (zeroed but for r->hash; fill the key in)
 *
 * Measured in bench/RESULTS.md (the analyzer rows); tested by
 * tests/unit/test-analyze-htab.c.
 */
#ifndef MEMTRACE_HTAB_H
#define MEMTRACE_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct htab {
	unsigned char *rec;         /* mask + 1 records; NULL: none yet */
	uint32_t mask;
	uint32_t n;                 /* records in use */
	uint32_t size;              /* bytes a record */
};

/* An empty table of records of type T (its first member the uint32_t hash). */
#define HTAB_INIT(T) ((struct htab){ NULL, 0, 0, sizeof(T) })

/* A record that indexes an array of the caller's. */
struct htab_ref {
	uint32_t hash;
	uint32_t i;
};

/* Where a lookup is: htab_find() starts it, htab_more() goes on. */
struct htab_probe {
	uint32_t i, hash;
};

/* A 64-bit finalizer (MurmurHash3's): integer keys' hash. */
static inline uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* The hash of n bytes (FNV-1a, then mixed), seeded with seed. */
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

/* The 32 bits of hash a record keeps (0 is taken by empty records). */
static inline uint32_t htab_hash32(uint64_t hash)
{
	uint32_t h = (uint32_t)hash;

	return h ? h : 1;
}

/* Record i of the table (no bounds check). */
static inline void *htab_at(const struct htab *t, uint32_t i)
{
	return t->rec + (size_t)i * t->size;
}

/* The next record after pr whose hash matches; NULL at the run's end. */
static inline void *htab_more(const struct htab *t, struct htab_probe *pr)
{
	for (;;) {
		uint32_t *r = htab_at(t, pr->i);

		pr->i = (pr->i + 1) & t->mask;
		if (!*r)
			return NULL;
		if (*r == pr->hash)
			return r;
	}
}

/* The first record whose hash matches hash; NULL when none. */
static inline void *htab_find(const struct htab *t, uint64_t hash, struct htab_probe *pr)
{
	if (!t->rec)
		return NULL;
	pr->hash = htab_hash32(hash);
	pr->i = pr->hash & t->mask;
	return htab_more(t, pr);
}

/* A new record under hash (the caller has made sure its key is not there
   yet): zeroed but for its hash. NULL when out of memory (the table is as
   it was). */
void *htab_add(struct htab *t, uint64_t hash);
/* Takes record r (of this table) out. */
void htab_del(struct htab *t, void *r);
/* Forgets every record, keeping the room. */
void htab_clear(struct htab *t);
void htab_free(struct htab *t);

#endif
