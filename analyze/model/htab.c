/*
 * htab.c - the growing and the deletion of the one hash table (htab.h,
 * where the design is; lookups are inline there).
 *
 * Growing doubles the records when one more would make the table more
 * than 3/4 full and puts every record back from its stored hash: keys are
 * not looked at. Deletion is the backward shift of linear probing: the
 * records after the hole that probed past it move into it, so that every
 * run stays whole without tombstones.
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

/* The empty record where hash h's probe run ends. */
static void *hole(const struct htab *t, uint32_t h)
{
	uint32_t i = h & t->mask;

	while (*(uint32_t *)htab_at(t, i))
		i = (i + 1) & t->mask;
	return htab_at(t, i);
}

static int grow(struct htab *t)
{
	struct htab n = *t;
	uint64_t cap = t->rec ? ((uint64_t)t->mask + 1) * 2 : 16;

	if (cap > UINT32_MAX || !(n.rec = calloc((size_t)cap, t->size)))
		return -1;
	n.mask = (uint32_t)(cap - 1);
	for (uint32_t i = 0; t->rec && i <= t->mask; i++) {
		const uint32_t *r = htab_at(t, i);

		if (*r)
			memcpy(hole(&n, *r), r, t->size);
	}
	free(t->rec);
	*t = n;
	return 0;
}

void *htab_add(struct htab *t, uint64_t hash)
{
	uint32_t h = htab_hash32(hash), *r;

	if ((!t->rec || (uint64_t)(t->n + 1) * 4 > ((uint64_t)t->mask + 1) * 3) && grow(t))
		return NULL;
	r = hole(t, h);
	memset(r, 0, t->size);
	*r = h;
	t->n++;
	return r;
}

void htab_del(struct htab *t, void *r)
{
	uint32_t i = (uint32_t)(((unsigned char *)r - t->rec) / t->size), j = i;

	for (;;) {
		uint32_t *rj, k;

		j = (j + 1) & t->mask;
		rj = htab_at(t, j);
		if (!*rj)
			break;
		k = *rj & t->mask;
		/* j moves into the hole i when its home k is not in (i, j],
		   cyclically */
		if (((j - k) & t->mask) >= ((j - i) & t->mask)) {
			memcpy(htab_at(t, i), rj, t->size);
			i = j;
		}
	}
	*(uint32_t *)htab_at(t, i) = 0;
	t->n--;
}

void htab_clear(struct htab *t)
{
	if (t->rec)
		memset(t->rec, 0, ((size_t)t->mask + 1) * t->size);
	t->n = 0;
}

void htab_free(struct htab *t)
{
	free(t->rec);
	t->rec = NULL;
	t->mask = t->n = 0;
}
