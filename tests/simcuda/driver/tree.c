/*
 * tree.c - the one ordered structure of the simulated driver: a treap keyed
 * by address whose nodes also carry the largest `len` of their subtree, and
 * the first-fit range allocator ("arena") built on it.
 *
 * The same treap holds allocations (exact and interior look-ups), handles,
 * and the free spans of every address range (device spaces, small pages,
 * pool chunks, VMM reservations), where `maxlen` makes first fit O(log n):
 * descend left while the left subtree has a span long enough.
 * Priorities are a hash of the node's address, so no shared RNG state.
 * Callers hold sim_lock.
 */
#include <stdlib.h>

#include "sim.h"

static uint32_t prio_of(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static void update(struct sim_node *n)
{
	uint64_t m = n->len;
	if (n->l && n->l->maxlen > m) m = n->l->maxlen;
	if (n->r && n->r->maxlen > m) m = n->r->maxlen;
	n->maxlen = m;
}

/* Splits t into keys < key (*a) and keys >= key (*b). */
static void split(struct sim_node *t, uint64_t key, struct sim_node **a, struct sim_node **b)
{
	if (!t) { *a = *b = NULL; return; }
	if (t->key < key) {
		split(t->r, key, &t->r, b);
		*a = t;
	} else {
		split(t->l, key, a, &t->l);
		*b = t;
	}
	update(t);
}

static struct sim_node *merge(struct sim_node *a, struct sim_node *b)
{
	if (!a) return b;
	if (!b) return a;
	if (a->prio > b->prio) {
		a->r = merge(a->r, b);
		update(a);
		return a;
	}
	b->l = merge(a, b->l);
	update(b);
	return b;
}

static struct sim_node *insert(struct sim_node *t, struct sim_node *n)
{
	if (!t) return n;
	if (n->prio > t->prio) {
		split(t, n->key, &n->l, &n->r);
		update(n);
		return n;
	}
	if (n->key < t->key) t->l = insert(t->l, n);
	else t->r = insert(t->r, n);
	update(t);
	return t;
}

static struct sim_node *erase(struct sim_node *t, uint64_t key)
{
	if (!t) return NULL;
	if (t->key == key) return merge(t->l, t->r);
	if (key < t->key) t->l = erase(t->l, key);
	else t->r = erase(t->r, key);
	update(t);
	return t;
}

void sim_tree_insert(struct sim_tree *t, struct sim_node *n)
{
	n->l = n->r = NULL;
	n->prio = prio_of(n);
	n->maxlen = n->len;
	t->root = insert(t->root, n);
}

void sim_tree_remove(struct sim_tree *t, struct sim_node *n)
{
	t->root = erase(t->root, n->key);
}

struct sim_node *sim_tree_find(const struct sim_tree *t, uint64_t key)
{
	struct sim_node *n = t->root;
	while (n && n->key != key)
		n = key < n->key ? n->l : n->r;
	return n;
}

/* The node with the largest key <= key, or NULL. */
struct sim_node *sim_tree_floor(const struct sim_tree *t, uint64_t key)
{
	struct sim_node *n = t->root, *best = NULL;
	while (n) {
		if (n->key <= key) { best = n; n = n->r; }
		else n = n->l;
	}
	return best;
}

/* The node with the smallest key whose len >= need, or NULL. */
struct sim_node *sim_tree_first_fit(const struct sim_tree *t, uint64_t need)
{
	struct sim_node *n = t->root;
	if (!n || n->maxlen < need) return NULL;
	for (;;) {
		if (n->l && n->l->maxlen >= need) n = n->l;
		else if (n->len >= need) return n;
		else n = n->r;
	}
}

/* --- arena ---------------------------------------------------------------- */

static struct sim_node *span_new(uint64_t start, uint64_t len)
{
	struct sim_node *n = malloc(sizeof(*n));
	if (n) { n->key = start; n->len = len; }
	return n;
}

/* Returns 0, or -1 when out of host memory. */
int sim_arena_init(struct sim_arena *a, uint64_t base, uint64_t size, uint64_t gran)
{
	struct sim_node *n = span_new(base, size);
	a->spans.root = NULL;
	a->base = base; a->size = size; a->gran = gran;
	if (!n) return -1;
	sim_tree_insert(&a->spans, n);
	return 0;
}

/* Lowest free address for size (rounded to gran) aligned to align; 0 if none. */
uint64_t sim_arena_alloc(struct sim_arena *a, uint64_t size, uint64_t align)
{
	struct sim_node *n, *back;
	uint64_t start, end, nend;

	size = sim_roundup(size, a->gran);
	if (align < a->gran) align = a->gran;
	n = sim_tree_first_fit(&a->spans, size + (align - a->gran));
	if (!n) return 0;
	start = sim_roundup(n->key, align);
	end = start + size;
	nend = n->key + n->len;
	back = NULL;
	if (end < nend && !(back = span_new(end, nend - end)))
		return 0;
	sim_tree_remove(&a->spans, n);
	if (start > n->key) {
		n->len = start - n->key;
		sim_tree_insert(&a->spans, n);
	} else {
		free(n);
	}
	if (back) sim_tree_insert(&a->spans, back);
	return start;
}

/* Gives [addr, addr+size) back, merged with free neighbours. */
void sim_arena_free(struct sim_arena *a, uint64_t addr, uint64_t size)
{
	struct sim_node *prev, *next, *n;
	uint64_t start = addr, len = sim_roundup(size, a->gran);

	prev = sim_tree_floor(&a->spans, addr);
	if (prev && prev->key + prev->len == addr) {
		sim_tree_remove(&a->spans, prev);
		start = prev->key;
		len += prev->len;
		n = prev;
	} else {
		n = span_new(0, 0);
		if (!n) return; /* the span leaks from the range; nothing breaks */
	}
	next = sim_tree_find(&a->spans, addr + sim_roundup(size, a->gran));
	if (next) {
		sim_tree_remove(&a->spans, next);
		len += next->len;
		free(next);
	}
	n->key = start;
	n->len = len;
	sim_tree_insert(&a->spans, n);
}

int sim_arena_fits(const struct sim_arena *a, uint64_t size)
{
	return a->spans.root && a->spans.root->maxlen >= size;
}

int sim_arena_empty(const struct sim_arena *a)
{
	return a->spans.root && a->spans.root->maxlen == a->size;
}

static void free_all(struct sim_node *n)
{
	if (!n) return;
	free_all(n->l);
	free_all(n->r);
	free(n);
}

void sim_arena_destroy(struct sim_arena *a)
{
	free_all(a->spans.root);
	a->spans.root = NULL;
}
