/*
 * test-analyze-htab.c - the one hash table (analyze/model/htab.h). Keys
 * are found among colliding ones (every key of the collision checks has
 * the same hash, so only the caller's compare tells them apart), survive
 * the table's growth, and a delete from the middle of a probe run leaves
 * every other key findable (the backward shift); counts and sizes worked
 * out by hand: 16 records at first, doubling past 3/4 full.
 */
#include <stdlib.h>

#include "model/htab.h"
#include "testhelp.h"

struct rec {
	uint32_t hash;
	uint32_t val;
	uint64_t key;
};

static struct rec *get(struct htab *t, uint64_t key, uint64_t hash)
{
	struct htab_probe pr;

	for (struct rec *r = htab_find(t, hash, &pr); r; r = htab_more(t, &pr))
		if (r->key == key)
			return r;
	return NULL;
}

static struct rec *put(struct htab *t, uint64_t key, uint64_t hash)
{
	struct rec *r = htab_add(t, hash);

	if (r) {
		r->key = key;
		r->val = (uint32_t)key * 3;
	}
	return r;
}

int main(void)
{
	TEST("empty table: nothing found, no room taken") {
		struct htab t = HTAB_INIT(struct rec);

		CHECK(get(&t, 1, hash_mix(1)) == NULL);
		CHECK(t.rec == NULL);
		htab_free(&t);
	}
	TEST("12 keys fit 16 records, the 13th doubles them") {
		struct htab t = HTAB_INIT(struct rec);

		for (uint64_t k = 0; k < 12; k++)
			CHECK(put(&t, k, hash_mix(k)) != NULL);
		CHECK_EQ_U64(t.mask + 1, 16);
		CHECK(put(&t, 12, hash_mix(12)) != NULL);
		CHECK_EQ_U64(t.mask + 1, 32);
		CHECK_EQ_U64(t.n, 13);
		for (uint64_t k = 0; k < 13; k++) {
			struct rec *r = get(&t, k, hash_mix(k));

			CHECK(r && r->val == k * 3);
		}
		htab_free(&t);
	}
	TEST("colliding keys: the caller's compare picks; deletes shift back") {
		struct htab t = HTAB_INIT(struct rec);
		uint64_t h = 0x1234;    /* one hash for all */

		for (uint64_t k = 1; k <= 40; k++)
			put(&t, k, h);
		put(&t, 1000, h + 1);   /* home next to theirs: inside their run */
		CHECK_EQ_U64(t.n, 41);
		for (uint64_t k = 1; k <= 40; k += 2)
			htab_del(&t, get(&t, k, h));
		CHECK_EQ_U64(t.n, 21);
		for (uint64_t k = 1; k <= 40; k++) {
			struct rec *r = get(&t, k, h);

			if (k % 2)
				CHECK(r == NULL);
			else
				CHECK(r && r->val == k * 3);
		}
		CHECK(get(&t, 1000, h + 1) != NULL);
		CHECK(get(&t, 1000, h) == NULL);
		htab_clear(&t);
		CHECK_EQ_U64(t.n, 0);
		CHECK(get(&t, 2, h) == NULL);
		htab_free(&t);
	}
	TEST("100,000 keys, half deleted: the rest found, the deleted not") {
		struct htab t = HTAB_INIT(struct rec);
		int bad = 0;

		for (uint64_t k = 0; k < 100000; k++)
			put(&t, k, hash_mix(k));
		CHECK_EQ_U64(t.mask + 1, 262144);   /* 131,072 * 3/4 = 98,304 < 100,000 */
		for (uint64_t k = 0; k < 100000; k += 2)
			htab_del(&t, get(&t, k, hash_mix(k)));
		for (uint64_t k = 0; k < 100000; k++) {
			struct rec *r = get(&t, k, hash_mix(k));

			bad += (k % 2) ? !(r && r->val == (uint32_t)k * 3) : r != NULL;
		}
		CHECK_EQ_U64(bad, 0);
		CHECK_EQ_U64(t.n, 50000);
		htab_free(&t);
	}
	TEST("a hash whose low 32 bits are 0 is kept as 1 (0 marks empty)") {
		struct htab t = HTAB_INIT(struct htab_ref);
		struct htab_ref *r = htab_add(&t, 0x500000000ull);

		CHECK(r && r->hash == 1);
		CHECK_EQ_U64(htab_hash32(0x500000000ull), 1);
		htab_free(&t);
	}
	TEST("hash_bytes: FNV-1a of the bytes, mixed; the seed counts") {
		CHECK_EQ_U64(hash_bytes("a", 1, 0), hash_mix(0xaf63dc4c8601ec8cull));
		CHECK(hash_bytes("a", 1, 0) != hash_bytes("a", 1, 1));
	}
	return test_report(__FILE__);
}
