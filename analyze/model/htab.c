/*
 * htab.c - the growing and the deletion of the one hash table (htab.h,
 * where the design is; lookups are inline there).
 *
 * Growing doubles the slots when an entry would make the table more than
 * half full and puts every slot back from its stored hash: the entries are
 * not looked at. Deletion is the backward shift of linear probing: the
 * slots after the hole that probed past it move into it, so that every run
 * stays whole without tombstones.
 */
#include <stdlib.h>
#include <string.h>

#include "model/htab.h"

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return hash_mix(h);
}

static void put(struct htab_slot *slot, uint32_t mask, struct htab_slot s)
{
	uint32_t i = s.hash & mask;

	while (slot[i].ref)
		i = (i + 1) & mask;
	slot[i] = s;
}

static int grow(struct htab *t)
{
	uint32_t cap = t->slot ? (t->mask + 1) * 2 : 16;
	struct htab_slot *n;

	if (cap == 0 || !(n = calloc(cap, sizeof(*n))))
		return -1;
	for (uint32_t i = 0; t->slot && i <= t->mask; i++)
		if (t->slot[i].ref)
			put(n, cap - 1, t->slot[i]);
	free(t->slot);
	t->slot = n;
	t->mask = cap - 1;
	return 0;
}

int htab_add(struct htab *t, uint64_t hash, uint32_t idx)
{
	struct htab_slot s = { (uint32_t)hash, idx + 1 };

	if ((!t->slot || (uint64_t)(t->n + 1) * 2 > (uint64_t)t->mask + 1) && grow(t))
		return -1;
	put(t->slot, t->mask, s);
	t->n++;
	return 0;
}

/* The slot that indexes idx under hash; the caller knows it is there. */
static uint32_t slot_of(const struct htab *t, uint64_t hash, uint32_t idx)
{
	uint32_t i = (uint32_t)hash & t->mask;

	while (t->slot[i].ref != idx + 1)
		i = (i + 1) & t->mask;
	return i;
}

void htab_del(struct htab *t, uint64_t hash, uint32_t idx)
{
	uint32_t i = slot_of(t, hash, idx), j = i;

	for (;;) {
		uint32_t k;

		j = (j + 1) & t->mask;
		if (!t->slot[j].ref)
			break;
		k = t->slot[j].hash & t->mask;
		/* j moves into the hole i when its home k is not in (i, j],
		   cyclically */
		if (((j - k) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].ref = 0;
	t->n--;
}

void htab_move(struct htab *t, uint64_t hash, uint32_t from, uint32_t to)
{
	t->slot[slot_of(t, hash, from)].ref = to + 1;
}

void htab_clear(struct htab *t)
{
	if (t->slot)
		memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof(*t->slot));
	t->n = 0;
}

void htab_free(struct htab *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
