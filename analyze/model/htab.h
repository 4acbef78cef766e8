/*
 * htab.h - the one hash table of the analyzer: an index from hashes to
 * the entries of an array the caller owns (sites, live allocations, shared
 * memory segments, pending allocations, dictionary values).
 *
 * How it works: open addressing with linear probing over slots of 8 bytes,
 * 32 bits of the key's hash and the entry's index + 1 (0: empty). A lookup
 * walks the probe run from the hash's home and hands the caller each entry
 * whose stored hash matches, for the caller to compare its own key (the
 * table never sees keys: a site compares four fields, a dictionary value
 * its bytes); a run of other keys costs a 32-bit compare per slot, not a
 * look at their entries. The table is at most half full (it doubles), so
 * runs stay short; deletion shifts the run back, so there are no
 * tombstones. Entries never move because of the table: an index stays
 * good until the caller moves its own array.
 *
 *   struct htab_probe pr;
 *   for (uint32_t i = htab_find(&t, h, &pr); i != HTAB_NONE; i = htab_more(&t, &pr))
 *           if (same_key(&ents[i], key))
 *                   return &ents[i];
 *   ... append the entry at index n, then htab_add(&t, h, n)
 *
 * A zeroed struct htab is an empty table. Measured in bench/RESULTS.md
 * (the analyzer rows) and tests/unit/test-analyze-htab.c.
 */
#ifndef MEMTRACE_HTAB_H
#define MEMTRACE_HTAB_H

#include <stddef.h>
#include <stdint.h>

#define HTAB_NONE UINT32_MAX

struct htab_slot {
	uint32_t hash;              /* the low 32 bits of the key's hash */
	uint32_t ref;               /* the entry's index + 1; 0 empty */
};

struct htab {
	struct htab_slot *slot;     /* mask + 1 of them; NULL: none yet */
	uint32_t mask;
	uint32_t n;                 /* entries */
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

/* The next entry after pr whose hash matches; HTAB_NONE at the run's end. */
static inline uint32_t htab_more(const struct htab *t, struct htab_probe *pr)
{
	for (;;) {
		const struct htab_slot *s = &t->slot[pr->i];

		pr->i = (pr->i + 1) & t->mask;
		if (!s->ref)
			return HTAB_NONE;
		if (s->hash == pr->hash)
			return s->ref - 1;
	}
}

/* The first entry whose hash matches hash; HTAB_NONE when none. */
static inline uint32_t htab_find(const struct htab *t, uint64_t hash, struct htab_probe *pr)
{
	if (!t->slot)
		return HTAB_NONE;
	pr->hash = (uint32_t)hash;
	pr->i = pr->hash & t->mask;
	return htab_more(t, pr);
}

/* Indexes entry idx under hash (the caller has made sure it is not there
   yet). 0, or -1 when out of memory (the table is as it was). */
int htab_add(struct htab *t, uint64_t hash, uint32_t idx);
/* Takes entry idx, indexed under hash, out of the table. */
void htab_del(struct htab *t, uint64_t hash, uint32_t idx);
/* The entry indexed as from is now at index to (the caller moved it). */
void htab_move(struct htab *t, uint64_t hash, uint32_t from, uint32_t to);
/* Forgets every entry, keeping the slots. */
void htab_clear(struct htab *t);
void htab_free(struct htab *t);

#endif
