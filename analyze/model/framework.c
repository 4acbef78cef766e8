/*
 * framework.c - the framework's allocator (framework.h), rebuilt from its
 * FW_EVENT records during the analysis pass.
 *
 * How it works: every block (alloc .. free_completed) and every segment
 * (segment_alloc .. segment_free, or a mapped range of an expandable
 * segment) is kept with the numbers of the FW events that began and ended
 * it, so memory grows with the number of blocks, not of events; live ones
 * are found by address in small hash tables. Running sums per device of
 * each process and of the run give reserved/allocated/awaiting at once,
 * their peaks (the first moment of each maximum) and the timeline. What
 * needs the layout of the segments (inactive split, largest free block,
 * who held what) is computed after the pass at the few moments that are
 * reported: the peaks, each OOM and the end, by looking at the blocks and
 * segments live after that event number.
 *
 * Block sizes. PyTorch's history gives each alloc the size the tensor
 * asked for (orig_size), while its allocated_bytes counts blocks: the
 * request rounded by round_size(), or the whole free block when
 * should_split() keeps the remainder in it (c10/cuda/
 * CUDACachingAllocator.cpp, alloc_found_block). The model rebuilds each
 * block as PyTorch made it, from the same rules and the settings the
 * drain recorded (an "alloc_settings" note: max_split_size, expandable
 * segments, roundup_power2_divisions): it keeps PyTorch's free blocks
 * (extents of segments not in a block, merged with free neighbours of the
 * same segment as try_merge_blocks does, mapped pages of expandable
 * segments merged with each other), takes an alloc's free block at its
 * address, and splits it or not as should_split() does. Rebuilt, not read:
 * the history is all PyTorch hands over without a cost per block, and the
 * rules are few and stable since 1.10. Where the events do not fit (an
 * alloc where no free block begins, larger than its free block, a
 * segment given back while a block is in it: lost events, a private
 * pool's checkpoint restore, settings changed by a path the drain did not
 * see), the case is counted in drift_* and the report says so; and each
 * drain that could read PyTorch's counters without anything changing in
 * between writes them (MT_FW_CHECK), so every such moment is compared
 * with PyTorch's own allocated_bytes, requested_bytes and reserved_bytes.
 *
 * A process's share leaves the device of the run when the process ends
 * before the run does (as account.c does for CUDA-level memory): its
 * blocks and segments then no longer count there.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/framework.h"
#include "model/framework.h"
#include "model/live.h"
#include "model/metrics.h"
#include "model/sites.h"

#define MAX_FRAMES 64

/* c10/cuda/CUDACachingAllocator.cpp */
#define K_MIN_BLOCK 512u            /* kMinBlockSize */
#define K_SMALL_SIZE (1ull << 20)   /* kSmallSize: the small pool's largest */
#define NDIV 16                     /* kRoundUpPowerOfTwoIntervals */

/* The allocator's settings from one "alloc_settings" note, from its time
   on (CUDAAllocatorConfig). */
struct cfg {
	uint64_t t;
	uint64_t max_split;         /* max_split_size; UINT64_MAX: unset */
	int expandable;             /* expandable_segments */
	uint32_t div[NDIV];         /* roundup_power2_divisions per interval */
};

/* A free block of PyTorch's: [lo, hi) of segment seg (UINT32_MAX: mapped
   pages of an expandable segment). */
struct ext {
	uint64_t lo, hi;
	uint32_t seg;
	int proc;
	int live;
};
/* A stack of a process on a device, and its site (several stacks may
   share one site: the same frames). */
struct stack_site {
	uint64_t sk;
	uint32_t site;
};

struct priv {
	struct htab blocks;         /* addr -> live block */
	struct htab ext_lo, ext_hi; /* lo -> free block, hi -> free block */
	struct ext *exts;
	uint32_t next, cap_exts;
	uint32_t *ext_free;         /* indexes of exts not in use */
	uint32_t nfree;
	struct cfg **cfgs;          /* per process, by time */
	uint32_t *ncfgs;
	struct htab stacks;         /* (proc, dev, stack) -> stack_sites */
	struct stack_site *stack_sites;
	uint32_t nstack_sites, cap_stack_sites;
	struct htab keys;           /* (dev, key) -> site */
	uint32_t *live_segs;        /* indexes of live segments */
	size_t nlive_segs, cap_live_segs;
	uint64_t cap_blocks, cap_segs;
	uint32_t cap_sites, cap_ooms;
	int *host_of;               /* per process: host index */
	uint64_t *release_seq;      /* per process: its share left the run */
	int *fdev_of;               /* per process * AN_MAX_DEV: index, -1 */
	uint32_t *ninfo;            /* per process: FW_INFO records its cfgs
	                               were read from (a trace followed while
	                               it is written gains more) */
	int nprocs;
};

#define PRIV(m) ((struct priv *)(m)->priv)

const char *fw_verdict_name(enum fw_verdict v)
{
	switch (v) {
	case FW_FRAGMENTATION: return "fragmentation";
	case FW_OTHER_STREAM: return "cache held by another stream";
	case FW_FULL: return "the device is full of tensors";
	case FW_OUTSIDE: return "memory outside PyTorch";
	}
	return "unknown";
}

/* --- hash tables -------------------------------------------------------- */

/* The tables below are the one hash table's (htab.h) of struct htab_ref,
   indexes into the arrays of the model, keyed by hash_mix() of a 64-bit
   key. */
#define NONE UINT32_MAX

/* The index of the entry of key that eq accepts; NONE when none. */
static uint32_t ht_get(const struct htab *h, uint64_t key, int (*eq)(const void *, uint32_t, uint64_t),
		       const void *ctx)
{
	struct htab_probe pr;

	for (struct htab_ref *r = htab_find(h, hash_mix(key), &pr); r; r = htab_more(h, &pr))
		if (eq(ctx, r->i, key))
			return r->i;
	return NONE;
}

/* Indexes entry i under key. 0, or -1 when out of memory. */
static int ht_put(struct htab *h, uint64_t key, uint32_t i)
{
	struct htab_ref *r = htab_add(h, hash_mix(key));

	if (!r)
		return -1;
	r->i = i;
	return 0;
}

/* Takes entry i, indexed under key, out of h. */
static void ht_del(struct htab *h, uint64_t key, uint32_t i)
{
	struct htab_probe pr;
	struct htab_ref *r = htab_find(h, hash_mix(key), &pr);

	while (r->i != i)
		r = htab_more(h, &pr);
	htab_del(h, r);
}

static int grow(void **p, uint64_t *cap, uint64_t need, size_t size)
{
	uint64_t c = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * size);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/* --- the allocator's settings ------------------------------------------- */

static uint64_t note_u64(struct trace_bytes tx, const char *key, uint64_t dflt)
{
	size_t at = 0;
	struct trace_bytes v = trace_note_value(tx, key, &at);
	uint64_t n = 0;

	if (!v.p || !v.len || v.p[0] < '0' || v.p[0] > '9')
		return dflt;
	for (size_t c = 0; c < v.len && v.p[c] >= '0' && v.p[c] <= '9'; c++)
		n = n * 10 + (uint64_t)(v.p[c] - '0');
	return n;
}

static int cmp_cfg(const void *x, const void *y)
{
	const struct cfg *a = x, *b = y;

	return a->t < b->t ? -1 : a->t > b->t;
}

/*
 * The "alloc_settings" notes of process i (python/memtrace_torch.py
 * writes one when it arms and one each time the program changes them),
 * by time. max_split_size=0 means unset; roundup_power2_divisions lists
 * the 16 intervals' divisions from 1 MiB up.
 */
static int cfg_load(struct analysis *a, struct priv *p, int i)
{
	const struct sproc *sp = stream_proc(a->s, i);
	struct trace_bytes tx;
	uint64_t tn;

	free(p->cfgs[i]);
	p->cfgs[i] = NULL;
	p->ncfgs[i] = 0;
	p->ninfo[i] = trace_fw_ninfo(sp->t);
	for (uint32_t k = 0; trace_fw_info(sp->t, k, &tx, &tn) == 0; k++) {
		size_t at = 0;
		struct cfg c = { .t = tn };
		struct trace_bytes d;
		void *n;

		if (!trace_note_value(tx, "alloc_settings=", &at).p)
			continue;
		c.t = (int64_t)tn + sp->shift > 0 ? (uint64_t)((int64_t)tn + sp->shift) : 0;
		c.max_split = note_u64(tx, "max_split_size=", 0);
		if (!c.max_split)
			c.max_split = UINT64_MAX;
		c.expandable = note_u64(tx, "expandable_segments=", 0) != 0;
		at = 0;
		d = trace_note_value(tx, "roundup_power2_divisions=", &at);
		for (size_t q = 0, k2 = 0; d.p && q < d.len && k2 < NDIV; k2++) {
			uint32_t v = 0;

			for (; q < d.len && d.p[q] >= '0' && d.p[q] <= '9'; q++)
				v = v * 10 + (uint32_t)(d.p[q] - '0');
			c.div[k2] = v;
			if (q < d.len && d.p[q] == ',')
				q++;
			else
				break;
		}
		n = realloc(p->cfgs[i], (p->ncfgs[i] + 1) * sizeof(c));
		if (!n)
			return -1;
		p->cfgs[i] = n;
		p->cfgs[i][p->ncfgs[i]++] = c;
	}
	if (p->ncfgs[i])
		qsort(p->cfgs[i], p->ncfgs[i], sizeof(struct cfg), cmp_cfg);
	return 0;
}

/* The settings of process proc at run time t: the last note before it
   (the first one when t is earlier: PyTorch's clock fit may put the first
   events a little before the note), PyTorch's defaults without any. */
static const struct cfg *cfg_at(const struct priv *p, int proc, uint64_t t)
{
	static const struct cfg dflt = { .max_split = UINT64_MAX };
	const struct cfg *c = p->ncfgs[proc] ? &p->cfgs[proc][0] : &dflt;

	for (uint32_t k = 1; k < p->ncfgs[proc] && p->cfgs[proc][k].t <= t; k++)
		c = &p->cfgs[proc][k];
	return c;
}

static int log2_floor(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* CUDAAllocatorConfig::roundup_power2_divisions: intervals from 1 MiB. */
static uint32_t divisions(const struct cfg *c, uint64_t size)
{
	int l = log2_floor(size), start = 20;
	int k = l > start ? l - start : 0;

	return c->div[k < NDIV ? k : NDIV - 1];
}

/* roundup_power2_next_division of CUDACachingAllocator.cpp */
static uint64_t next_division(uint64_t size, uint32_t div)
{
	uint64_t floor2, step, lo;

	if (!(size & (size - 1)))
		return size;
	floor2 = 1ull << log2_floor(size);
	step = floor2 >> log2_floor(div);
	if (!step)
		return floor2 << 1;
	lo = size & ~(step - 1);
	return lo == size ? size : lo + step;
}

/* round_size of CUDACachingAllocator.cpp */
static uint64_t round_size(const struct cfg *c, uint64_t size)
{
	uint32_t div;

	if (size < K_MIN_BLOCK)
		return K_MIN_BLOCK;
	div = divisions(c, size);
	if (div > 1 && size > (uint64_t)K_MIN_BLOCK * div)
		return next_division(size, div);
	return K_MIN_BLOCK * ((size + K_MIN_BLOCK - 1) / K_MIN_BLOCK);
}

/* should_split of CUDACachingAllocator.cpp: the global expandable setting,
   not the block's segment, decides. */
static int should_split(const struct cfg *c, int small, uint64_t block, uint64_t size)
{
	uint64_t remaining = block - size;

	if (small || c->expandable)
		return remaining >= K_MIN_BLOCK;
	return size < c->max_split && remaining > K_SMALL_SIZE;
}

/* --- PyTorch's free blocks ---------------------------------------------- */

struct ext_ctx { const struct priv *p; int proc; };

static int lo_eq(const void *ctx, uint32_t v, uint64_t lo)
{
	const struct ext_ctx *c = ctx;

	return c->p->exts[v].lo == lo && c->p->exts[v].proc == c->proc;
}

static int hi_eq(const void *ctx, uint32_t v, uint64_t hi)
{
	const struct ext_ctx *c = ctx;

	return c->p->exts[v].hi == hi && c->p->exts[v].proc == c->proc;
}

/* The free block of proc beginning (hi 0) or ending (hi 1) at addr:
   its index, or UINT32_MAX. */
static uint32_t ext_find(struct priv *p, int proc, uint64_t addr, int hi)
{
	struct ext_ctx c = { p, proc };
	return hi ? ht_get(&p->ext_hi, addr, hi_eq, &c) : ht_get(&p->ext_lo, addr, lo_eq, &c);
}

static void ext_unlink(struct priv *p, uint32_t e)
{
	ht_del(&p->ext_lo, p->exts[e].lo, e);
	ht_del(&p->ext_hi, p->exts[e].hi, e);
	p->exts[e].live = 0;
	p->ext_free[p->nfree++] = e;
}

/* try_merge_blocks: a neighbour merges when it is of the same segment, or
   both are mapped pages of expandable segments. */
static int ext_mergeable(const struct ext *x, uint32_t seg)
{
	return x->seg == seg;
}

/* [lo, hi) of seg becomes a free block of proc, merged with its free
   neighbours. 0, or -1 when out of memory. */
static int ext_add(struct priv *p, int proc, uint64_t lo, uint64_t hi, uint32_t seg)
{
	uint32_t e, n;

	if (lo >= hi)
		return 0;
	if ((n = ext_find(p, proc, lo, 1)) != UINT32_MAX && ext_mergeable(&p->exts[n], seg)) {
		lo = p->exts[n].lo;
		ext_unlink(p, n);
	}
	if ((n = ext_find(p, proc, hi, 0)) != UINT32_MAX && ext_mergeable(&p->exts[n], seg)) {
		hi = p->exts[n].hi;
		ext_unlink(p, n);
	}
	if (p->nfree)
		e = p->ext_free[--p->nfree];
	else {
		if (p->next == p->cap_exts) {
			uint32_t c = p->cap_exts ? p->cap_exts * 2 : 256;
			void *x = realloc(p->exts, c * sizeof(*p->exts));
			void *y = x ? realloc(p->ext_free, c * sizeof(*p->ext_free)) : NULL;

			if (x)
				p->exts = x;
			if (!y)
				return -1;
			p->ext_free = y;
			p->cap_exts = c;
		}
		e = p->next++;
	}
	p->exts[e] = (struct ext){ lo, hi, seg, proc, 1 };
	if (ht_put(&p->ext_lo, lo, e))
		return -1;
	if (ht_put(&p->ext_hi, hi, e)) {
		ht_del(&p->ext_lo, lo, e);
		return -1;
	}
	return 0;
}

/*
 * Takes [lo, hi) of proc out of the free blocks (a segment given back, an
 * expandable segment's pages unmapped), keeping the parts of a free block
 * outside it. Returns 1 when the whole range was free, 0 when some of it
 * was not (drift), -1 when out of memory. Rare events: a scan is fine.
 */
static int ext_cut(struct priv *p, int proc, uint64_t lo, uint64_t hi)
{
	uint64_t covered = 0;

	for (uint32_t e = 0; e < p->next; e++) {
		struct ext x = p->exts[e];

		if (!x.live || x.proc != proc || x.hi <= lo || x.lo >= hi)
			continue;
		ext_unlink(p, e);
		covered += (x.hi < hi ? x.hi : hi) - (x.lo > lo ? x.lo : lo);
		if (x.lo < lo && ext_add(p, proc, x.lo, lo, x.seg))
			return -1;
		if (x.hi > hi && ext_add(p, proc, hi, x.hi, x.seg))
			return -1;
	}
	return covered == hi - lo;
}

static void priv_free(struct priv *p, int nprocs)
{
	htab_free(&p->blocks);
	htab_free(&p->stacks);
	free(p->stack_sites);
	htab_free(&p->keys);
	htab_free(&p->ext_lo);
	htab_free(&p->ext_hi);
	free(p->exts);
	free(p->ext_free);
	if (p->cfgs)
		for (int i = 0; i < nprocs; i++)
			free(p->cfgs[i]);
	free(p->cfgs);
	free(p->ncfgs);
	free(p->live_segs);
	free(p->host_of);
	free(p->release_seq);
	free(p->fdev_of);
	free(p->ninfo);
	free(p);
}

/* --- setup -------------------------------------------------------------- */

/*
 * The per-process state for processes [p->nprocs, a->nprocs): all of them
 * for a report; for a run followed while it is written (memtrace top),
 * also those that appear after the first FW event.
 */
static int procs_add(struct analysis *a, struct priv *p)
{
	int n = a->nprocs, old = p->nprocs;
	void *v;

	if (n <= old)
		return 0;
#define GROW(field, size) \
	do { \
		if (!(v = realloc(p->field, ((size_t)n + 1) * (size)))) \
			return -1; \
		p->field = v; \
	} while (0)
	GROW(host_of, sizeof(int));
	GROW(release_seq, sizeof(uint64_t));
	GROW(fdev_of, AN_MAX_DEV * sizeof(int));
	GROW(cfgs, sizeof(*p->cfgs));
	GROW(ncfgs, sizeof(*p->ncfgs));
	GROW(ninfo, sizeof(*p->ninfo));
#undef GROW
	for (int i = old; i <= n; i++) {
		p->cfgs[i] = NULL;
		p->ncfgs[i] = 0;
		p->ninfo[i] = 0;
		p->host_of[i] = 0;
		p->release_seq[i] = 0;
	}
	p->nprocs = n;
	for (int i = old; i < n; i++) {
		const char *h, *h2;
		size_t hl, hl2;
		int nh = i ? p->host_of[i - 1] + 1 : 0;

		p->release_seq[i] = FW_NEVER;
		for (int k = 0; k < AN_MAX_DEV; k++)
			p->fdev_of[i * AN_MAX_DEV + k] = -1;
		an_hostname(a, i, &h, &hl);
		p->host_of[i] = -1;
		for (int j = 0; j < i; j++) {
			if (p->host_of[j] >= nh)
				nh = p->host_of[j] + 1;
			an_hostname(a, j, &h2, &hl2);
			if (p->host_of[i] < 0 && hl == hl2 && !memcmp(h, h2, hl))
				p->host_of[i] = p->host_of[j];
		}
		if (p->host_of[i] < 0)
			p->host_of[i] = nh;
		if (cfg_load(a, p, i))
			return -1;
	}
	return 0;
}

static struct fw_model *fw_get(struct analysis *a)
{
	struct fw_model *m;
	struct priv *p;
	int n = a->nprocs;

	if (a->fw)
		return a->fw;
	m = calloc(1, sizeof(*m));
	p = calloc(1, sizeof(*p));
	if (!m || !p)
		goto fail;
	m->priv = p;
	p->blocks = p->stacks = p->keys = p->ext_lo = p->ext_hi = HTAB_INIT(struct htab_ref);
	if (procs_add(a, p))
		goto fail;
	m->drift_first_t = FW_NEVER;
	a->fw = m;
	return m;
fail:
	if (p)
		priv_free(p, n);
	free(p);
	free(m);
	return NULL;
}

static int new_dev(struct fw_model *m, int proc, int dev, int host)
{
	void *n = realloc(m->devs, (size_t)(m->ndevs + 1) * sizeof(*m->devs));
	struct fw_dev *d;

	if (!n)
		return -1;
	m->devs = n;
	d = &m->devs[m->ndevs];
	memset(d, 0, sizeof(*d));
	d->proc = proc;
	d->dev = dev;
	d->host = host;
	d->run = -1;
	return m->ndevs++;
}

/* The device of (proc, dev), made with its run device on first use. */
static int fdev_of(struct fw_model *m, int proc, int dev)
{
	struct priv *p = PRIV(m);
	int *slot = &p->fdev_of[proc * AN_MAX_DEV + dev];
	int host = p->host_of[proc], run = -1, pd;

	if (*slot >= 0)
		return *slot;
	for (int i = 0; i < m->ndevs; i++)
		if (m->devs[i].proc < 0 && m->devs[i].dev == dev && m->devs[i].host == host)
			run = i;
	if (run < 0 && (run = new_dev(m, -1, dev, host)) < 0)
		return -1;
	if ((pd = new_dev(m, proc, dev, host)) < 0)
		return -1;
	m->devs[pd].run = run;
	*slot = pd;
	return pd;
}

/* --- sites -------------------------------------------------------------- */

/* Not the user's code: the framework, installed packages, the standard
   library, frozen modules. */
static int library_file(const char *f, size_t len)
{
	if (!len || f[0] == '<')
		return 1;
	return memmem(f, len, "/torch/", 7) || memmem(f, len, "site-packages/", 14) ||
	       memmem(f, len, "dist-packages/", 14) || memmem(f, len, "/lib/python", 11) ||
	       (len >= 6 && !memcmp(f, "torch/", 6));
}

struct key_ctx { struct fw_model *m; int dev; const char *key; };

static int key_eq(const void *ctx, uint32_t v, uint64_t kh)
{
	const struct key_ctx *c = ctx;
	const struct fw_site *s = &c->m->sites[v];

	(void)kh;
	return s->dev == c->dev && !strcmp(s->key, c->key);
}

static int stack_eq(const void *ctx, uint32_t v, uint64_t sk)
{
	return ((const struct priv *)ctx)->stack_sites[v].sk == sk;
}

/* Notes that stack key sk has site si. 0, or -1 when out of memory. */
static int stack_site_add(struct priv *p, uint64_t sk, uint32_t si)
{
	if (p->nstack_sites == p->cap_stack_sites) {
		uint32_t c = p->cap_stack_sites ? p->cap_stack_sites * 2 : 64;
		void *n = realloc(p->stack_sites, c * sizeof(*p->stack_sites));

		if (!n)
			return -1;
		p->stack_sites = n;
		p->cap_stack_sites = c;
	}
	if (ht_put(&p->stacks, sk, p->nstack_sites))
		return -1;
	p->stack_sites[p->nstack_sites++] = (struct stack_site){ sk, si };
	return 0;
}

/* The site of a FW stack of proc on dev; UINT32_MAX when out of memory. */
static uint32_t site_get(struct analysis *a, struct fw_model *m, int proc, int dev, uint32_t stack)
{
	struct priv *p = PRIV(m);
	uint64_t sk = (uint64_t)proc << 40 | (uint64_t)(uint8_t)dev << 32 | stack;
	uint32_t j = ht_get(&p->stacks, sk, stack_eq, p);
	struct trace_fw_frame fr[MAX_FRAMES];
	uint32_t nf = 0, user = UINT32_MAX;
	char *key = NULL;
	size_t klen = 0;
	FILE *f;
	struct key_ctx kc;
	uint64_t kh;
	struct fw_site *s;

	if (j != NONE)
		return p->stack_sites[j].site;
	if (stack)
		nf = trace_fw_stack_frames(stream_proc(a->s, proc)->t, stack, fr, MAX_FRAMES);
	if (nf > MAX_FRAMES)
		nf = MAX_FRAMES;
	f = open_memstream(&key, &klen);
	if (!f)
		return UINT32_MAX;
	for (uint32_t i = 0; i < nf; i++) {
		fprintf(f, "%.*s:%" PRIu32 " %.*s|", (int)fr[i].file_len, fr[i].file, fr[i].line,
			(int)fr[i].function_len, fr[i].function);
		if (user == UINT32_MAX && !library_file(fr[i].file, fr[i].file_len))
			user = i;
	}
	if (fclose(f))
		return UINT32_MAX;
	kc = (struct key_ctx){ m, dev, key };
	kh = hash_bytes(key, strlen(key), (uint64_t)(dev + 2));
	j = ht_get(&p->keys, kh, key_eq, &kc);
	if (j != NONE) {
		free(key);
		return stack_site_add(p, sk, j) ? UINT32_MAX : j;
	}
	if (m->nsites == p->cap_sites) {
		uint32_t c = p->cap_sites ? p->cap_sites * 2 : 64;
		void *n = realloc(m->sites, c * sizeof(*m->sites));

		if (!n) {
			free(key);
			return UINT32_MAX;
		}
		m->sites = n;
		p->cap_sites = c;
	}
	s = &m->sites[m->nsites];
	memset(s, 0, sizeof(*s));
	s->id = m->nsites + 1;
	s->dev = dev;
	s->proc = proc;
	s->stack = stack;
	s->key = key;
	s->g.proc = proc;
	if (nf) {
		uint32_t mf = user != UINT32_MAX ? user : 0;

		s->user = user != UINT32_MAX;
		s->main_frame = (int)mf;
		s->file = strndup(fr[mf].file, fr[mf].file_len);
		s->function = strndup(fr[mf].function, fr[mf].function_len);
		s->line = fr[mf].line;
		if (!s->file || !s->function) {
			free(s->file);
			free(s->function);
			free(key);
			return UINT32_MAX;
		}
	}
	if (ht_put(&p->keys, kh, m->nsites) || stack_site_add(p, sk, m->nsites))
		return UINT32_MAX;
	return m->nsites++;
}

/* --- the pass ----------------------------------------------------------- */

static void tl_keep(struct fw_dev *d, const struct an_tl_row *row, uint64_t requested)
{
	if (d->ntl == d->cap_tl) {
		uint32_t c = d->cap_tl ? d->cap_tl * 2 : 256;
		void *n = realloc(d->tl, c * sizeof(*d->tl));
		void *q = n ? realloc(d->tl_req, c * sizeof(*d->tl_req)) : NULL;

		if (n)
			d->tl = n;
		if (!n || !q)
			return;     /* a row fewer: the picture stays right in shape */
		d->tl_req = q;
		d->cap_tl = c;
	}
	d->tl_req[d->ntl] = requested;
	d->tl[d->ntl++] = *row;
}

/* The timeline rule of account.c: first change of a bucket, each new
   maximum of reserved or of allocated in it, and the state at the end of
   the bucket before. */
static void tl_add(struct analysis *a, struct fw_dev *d, uint64_t t)
{
	uint64_t w = a->duration / 4000 + 1, b = t / w;
	struct an_tl_row row = { t, d->reserved, d->allocated };

	if (b != d->tl_bucket || !d->tl_started) {
		if (d->tl_pending)
			tl_keep(d, &d->tl_last, d->tl_last_req);
		d->tl_pending = 0;
		d->tl_max = d->tl_max_alloc = 0;
		d->tl_bucket = b;
		d->tl_started = 1;
	}
	/* a new maximum of either: both peaks are rows */
	if (d->reserved > d->tl_max || d->allocated > d->tl_max_alloc || !d->ntl) {
		if (d->reserved > d->tl_max)
			d->tl_max = d->reserved;
		if (d->allocated > d->tl_max_alloc)
			d->tl_max_alloc = d->allocated;
		tl_keep(d, &row, d->requested);
		d->tl_pending = 0;
		return;
	}
	d->tl_pending = 1;
	d->tl_last = row;
	d->tl_last_req = d->requested;
}

/* memtrace's CUDA-level reserved of (proc, dev), or of the run's device. */
static int cuda_dev(const struct analysis *a, int proc, int dev, int run)
{
	int pd;

	if (proc < 0 || dev < 0 || dev >= AN_MAX_DEV)
		return -1;
	pd = a->procs[proc].pdev[dev];
	if (pd < 0)
		return -1;
	return run ? a->devs[pd].gdev : pd;
}

static void settle(struct analysis *a, struct fw_model *m, int di, uint64_t t, uint64_t seq,
		   int proc)
{
	struct fw_dev *d = &m->devs[di];

	if (d->allocated > d->peak_alloc.st.allocated) {
		d->peak_alloc.st.allocated = d->allocated;
		d->peak_alloc.st.seq = seq;
		d->peak_alloc.st.t = t;
	}
	if (d->requested > d->peak_req.st.requested) {
		d->peak_req.st.requested = d->requested;
		d->peak_req.st.seq = seq;
		d->peak_req.st.t = t;
	}
	if (d->reserved > d->peak_res.st.reserved) {
		int cd = cuda_dev(a, proc, d->dev, d->proc < 0);

		d->peak_res.st.reserved = d->reserved;
		d->peak_res.st.seq = seq;
		d->peak_res.st.t = t;
		d->cuda_at_peak_res = cd >= 0 ? a->devs[cd].reserved : 0;
	}
	tl_add(a, d, t);
}

/* Adds (sign 1) or takes away (-1) bytes of one sum of a device and of
   its run device (when the process still counts there). */
#define ADD(m, pd, field, v, proc) do { \
	(m)->devs[pd].field += (v); \
	if (PRIV(m)->release_seq[proc] == FW_NEVER) \
		(m)->devs[(m)->devs[pd].run].field += (v); \
} while (0)

struct blk_ctx { struct fw_model *m; int proc; };

static int blk_eq(const void *ctx, uint32_t v, uint64_t addr)
{
	const struct blk_ctx *c = ctx;

	return c->m->blocks[v].addr == addr && c->m->blocks[v].proc == c->proc;
}

/* The live block of proc at addr, NONE when none. */
static uint32_t block_find(struct fw_model *m, int proc, uint64_t addr)
{
	struct blk_ctx c = { m, proc };

	return ht_get(&PRIV(m)->blocks, addr, blk_eq, &c);
}

static void drift(struct fw_model *m, uint64_t *counter, uint64_t t)
{
	(*counter)++;
	if (m->drift_first_t == FW_NEVER)
		m->drift_first_t = t;
}

/* free_requested of block b at seq: allocated_bytes drops (free() of
   CUDACachingAllocator.cpp), the tensor site lets go of it. */
static void block_requested(struct fw_model *m, struct fw_block *b, uint64_t seq, uint64_t t)
{
	struct fw_site *s = b->site != UINT32_MAX ? &m->sites[b->site] : NULL;

	b->s_freq = seq;
	b->t_freq = t;
	ADD(m, b->fdev, allocated, -b->size, b->proc);
	ADD(m, b->fdev, awaiting, b->size, b->proc);
	if (s) {
		s->live -= b->size < s->live ? b->size : s->live;
		s->g.live = s->live;
	}
}

/* Ends block b: free completed at seq (a lost free: at its next alloc);
   requested_bytes drops (free_block) and the block is free again. */
static int block_done(struct fw_model *m, struct fw_block *b, uint64_t seq, uint64_t t)
{
	if (b->s_freq == FW_NEVER)
		block_requested(m, b, seq, t);
	b->s_fdone = seq;
	b->t_fdone = t;
	ADD(m, b->fdev, awaiting, -b->size, b->proc);
	ADD(m, b->fdev, requested, -b->req, b->proc);
	return ext_add(PRIV(m), b->proc, b->addr, b->addr + b->size, b->mapped ? UINT32_MAX : b->seg);
}

/*
 * The block an alloc of e->size at e->addr was given, as
 * alloc_found_block made it: the free block beginning there, split after
 * round_size(size) when should_split() says so, else whole.
 */
static int block_shape(struct fw_model *m, const struct srec *r, const struct mt_fw_event *e,
		       struct fw_block *b)
{
	struct priv *p = PRIV(m);
	const struct cfg *c = cfg_at(p, r->proc, r->t);
	uint64_t size = round_size(c, e->size);
	int small = size <= K_SMALL_SIZE;
	uint32_t x = ext_find(p, r->proc, e->addr, 0);
	struct ext f;

	b->size = size;
	b->pool = !small;
	b->seg = UINT32_MAX;
	if (x == UINT32_MAX) {
		drift(m, &m->drift_no_block, r->t);
		return 0;
	}
	f = p->exts[x];
	ext_unlink(p, x);
	b->seg = f.seg;
	b->mapped = f.seg == UINT32_MAX;
	if (f.seg != UINT32_MAX && m->segs[f.seg].pool < 0)
		m->segs[f.seg].pool = b->pool;
	if (f.hi - f.lo < size) {
		drift(m, &m->drift_small_block, r->t);
		return 0;
	}
	if (!should_split(c, small, f.hi - f.lo, size))
		b->size = f.hi - f.lo;
	return ext_add(p, r->proc, f.lo + b->size, f.hi, f.seg);
}

static int do_alloc(struct analysis *a, struct fw_model *m, const struct srec *r,
		    const struct mt_fw_event *e, int pd, uint64_t seq)
{
	struct priv *p = PRIV(m);
	uint32_t j = block_find(m, r->proc, e->addr);
	struct fw_block *b;
	struct fw_site *s;
	uint32_t si;

	if (j != NONE) {            /* its free was not seen: end it here */
		if (block_done(m, &m->blocks[j], seq, r->t))
			return -1;
		ht_del(&p->blocks, e->addr, j);
	}
	if (grow((void **)&m->blocks, &p->cap_blocks, m->nblocks + 1, sizeof(*m->blocks)))
		return -1;
	si = site_get(a, m, r->proc, e->h.b, e->stack_id);
	if (si == UINT32_MAX)
		return -1;
	b = &m->blocks[m->nblocks];
	memset(b, 0, sizeof(*b));
	b->addr = e->addr;
	b->req = e->size;
	b->stream = e->stream;
	b->s_alloc = seq;
	b->t_alloc = r->t;
	b->s_freq = b->s_fdone = b->t_freq = b->t_fdone = FW_NEVER;
	b->stack = e->stack_id;
	b->site = si;
	b->proc = r->proc;
	b->fdev = pd;
	ranges_at(a, r->proc, r->rec.tid, &b->at);
	if (block_shape(m, r, e, b) || ht_put(&p->blocks, e->addr, (uint32_t)m->nblocks))
		return -1;
	m->nblocks++;
	ADD(m, pd, allocated, b->size, r->proc);
	ADD(m, pd, requested, b->req, r->proc);
	m->devs[pd].allocs++;
	s = &m->sites[si];
	s->allocs++;
	s->bytes += b->size;
	s->live += b->size;
	s->g.live = s->live;
	if (s->live > s->max)
		s->max = s->live;
	if (s->g.live > s->g.max)
		leaks_on_grow(&s->g, r->t);
	return 0;
}

static int seg_new(struct fw_model *m, int proc, int pd, uint64_t addr, uint64_t size,
		   uint64_t stream, uint64_t seq, uint64_t t, int mapped)
{
	struct priv *p = PRIV(m);
	struct fw_seg *g;

	if (grow((void **)&m->segs, &p->cap_segs, m->nsegs + 1, sizeof(*m->segs)))
		return -1;
	if (p->nlive_segs == p->cap_live_segs) {
		size_t c = p->cap_live_segs ? p->cap_live_segs * 2 : 64;
		void *n = realloc(p->live_segs, c * sizeof(*p->live_segs));

		if (!n)
			return -1;
		p->live_segs = n;
		p->cap_live_segs = c;
	}
	g = &m->segs[m->nsegs];
	g->addr = addr;
	g->size = size;
	g->stream = stream;
	g->s_alloc = seq;
	g->s_free = FW_NEVER;
	g->t_alloc = t;
	g->t_free = FW_NEVER;
	g->proc = proc;
	g->fdev = pd;
	g->mapped = mapped;
	g->pool = -1;
	p->live_segs[p->nlive_segs++] = (uint32_t)m->nsegs++;
	ADD(m, pd, reserved, size, proc);
	return 0;
}

/* Ends live segment number i (of live_segs) at seq. */
static void seg_end(struct fw_model *m, size_t i, uint64_t seq, uint64_t t)
{
	struct priv *p = PRIV(m);
	struct fw_seg *g = &m->segs[p->live_segs[i]];

	g->s_free = seq;
	g->t_free = t;
	ADD(m, g->fdev, reserved, -g->size, g->proc);
	p->live_segs[i] = p->live_segs[--p->nlive_segs];
}

/* segment_free ends the segment at addr; segment_unmap ends the mapped
   ranges inside [addr, addr + size), keeping the parts outside it. Either
   takes its range out of the free blocks: PyTorch gives back only free
   memory (release_block, unmap_block). */
static int seg_free(struct fw_model *m, int proc, const struct mt_fw_event *e, uint64_t seq,
		    uint64_t t, int unmap)
{
	struct priv *p = PRIV(m);
	uint64_t lo = e->addr, hi = e->addr + e->size;
	int found = 0, whole;

	for (size_t i = 0; i < p->nlive_segs;) {
		struct fw_seg g = m->segs[p->live_segs[i]];
		uint64_t end = g.addr + g.size;

		if (g.proc != proc || g.mapped != unmap ||
		    (unmap ? (end <= lo || g.addr >= hi) : g.addr != e->addr)) {
			i++;
			continue;
		}
		found = 1;
		seg_end(m, i, seq, t);
		if (!unmap)
			hi = end;
		if (unmap && g.addr < lo &&
		    seg_new(m, proc, g.fdev, g.addr, lo - g.addr, g.stream, seq, t, 1))
			return -1;
		if (unmap && end > hi &&
		    seg_new(m, proc, g.fdev, hi, end - hi, g.stream, seq, t, 1))
			return -1;
		if (!unmap)
			break;
	}
	if (!found) {
		m->unknown_frees++;
		return 0;
	}
	if ((whole = ext_cut(p, proc, lo, hi)) < 0)
		return -1;
	if (!whole)
		drift(m, &m->drift_seg_busy, t);
	return 0;
}

/* A process that ended before this moment leaves the devices of the run. */
static void release_ended(struct analysis *a, struct fw_model *m, uint64_t t, uint64_t seq)
{
	struct priv *p = PRIV(m);

	for (int i = 0; i < p->nprocs; i++) {
		if (p->release_seq[i] != FW_NEVER || stream_proc(a->s, i)->last_t >= t)
			continue;
		for (int k = 0; k < AN_MAX_DEV; k++) {
			int pd = p->fdev_of[i * AN_MAX_DEV + k];
			struct fw_dev *d, *g;

			if (pd < 0)
				continue;
			d = &m->devs[pd];
			g = &m->devs[d->run];
			g->reserved -= d->reserved;
			g->allocated -= d->allocated;
			g->requested -= d->requested;
			g->awaiting -= d->awaiting;
			tl_add(a, g, t);
		}
		p->release_seq[i] = seq;
	}
}

/* MT_FW_CHECK: PyTorch's counters of (proc, device) against the model's. */
static void check(struct fw_model *m, const struct srec *r, const struct mt_fw_event *e, int pd)
{
	const struct fw_dev *d = &m->devs[pd];
	const char *what = NULL;
	uint64_t ours = 0, theirs = 0;

	m->checks++;
	if (d->allocated != e->size)
		what = "allocated", ours = d->allocated, theirs = e->size;
	else if (d->requested != e->x)
		what = "requested", ours = d->requested, theirs = e->x;
	else if (d->reserved != e->addr)
		what = "reserved", ours = d->reserved, theirs = e->addr;
	if (!what)
		return;
	if (!m->check_bad++)
		m->first_bad = (struct fw_mismatch){ r->t, r->proc, e->h.b, what, ours, theirs };
}

int fw_record(struct analysis *a, const struct srec *r)
{
	const struct mt_fw_event *e = r->rec.p;
	struct fw_model *m;
	uint64_t seq;
	int pd, proc = r->proc;

	if (r->rec.type != MT_REC_FW_EVENT)
		return 0;
	if (!(m = fw_get(a)) || procs_add(a, PRIV(m)))
		return -1;
	/* settings noted since they were read (a trace still written) */
	if (trace_fw_ninfo(stream_proc(a->s, proc)->t) != PRIV(m)->ninfo[proc] &&
	    cfg_load(a, PRIV(m), proc))
		return -1;
	seq = ++m->events;
	release_ended(a, m, r->t, seq - 1);
	if (e->h.b < 0) {
		m->no_device++;
		return 0;
	}
	if ((pd = fdev_of(m, proc, e->h.b)) < 0)
		return -1;
	switch (e->h.a) {
	case MT_FW_ALLOC:
		if (do_alloc(a, m, r, e, pd, seq))
			return -1;
		break;
	case MT_FW_FREE_REQUESTED: case MT_FW_FREE_COMPLETED: {
		uint32_t j = block_find(m, proc, e->addr);
		struct fw_block *b;

		if (j == NONE) {
			m->unknown_frees++;
			return 0;
		}
		b = &m->blocks[j];
		if (e->h.a == MT_FW_FREE_COMPLETED) {
			if (block_done(m, b, seq, r->t))
				return -1;
			ht_del(&PRIV(m)->blocks, e->addr, j);
		} else if (b->s_freq == FW_NEVER)
			block_requested(m, b, seq, r->t);
		break;
	}
	case MT_FW_SEGMENT_ALLOC: case MT_FW_SEGMENT_MAP: {
		int map = e->h.a == MT_FW_SEGMENT_MAP;

		if (seg_new(m, proc, pd, e->addr, e->size, e->stream, seq, r->t, map) ||
		    ext_add(PRIV(m), proc, e->addr, e->addr + e->size,
			    map ? UINT32_MAX : (uint32_t)(m->nsegs - 1)))
			return -1;
		if (map)
			m->devs[pd].maps++;
		else
			m->devs[pd].segment_allocs++;
		break;
	}
	case MT_FW_SEGMENT_FREE: case MT_FW_SEGMENT_UNMAP:
		if (seg_free(m, proc, e, seq, r->t, e->h.a == MT_FW_SEGMENT_UNMAP))
			return -1;
		break;
	case MT_FW_CHECK:
		check(m, r, e, pd);
		return 0;
	case MT_FW_PEAKS: {
		struct fw_dev *d = &m->devs[pd];

		d->has_torch_peaks = 1;
		d->torch_peaks_t = r->t;
		d->torch_peak_reserved = e->addr;
		d->torch_peak_allocated = e->size;
		d->torch_peak_requested = e->x;
		return 0;
	}
	case MT_FW_OOM: {
		struct fw_oom *o;
		int cd = cuda_dev(a, proc, e->h.b, 0);

		if (m->nooms == PRIV(m)->cap_ooms) {
			uint32_t c = PRIV(m)->cap_ooms ? PRIV(m)->cap_ooms * 2 : 16;
			void *n = realloc(m->ooms, c * sizeof(*m->ooms));

			if (!n)
				return -1;
			m->ooms = n;
			PRIV(m)->cap_ooms = c;
		}
		o = &m->ooms[m->nooms++];
		memset(o, 0, sizeof(*o));
		o->proc = proc;
		o->dev = e->h.b;
		o->fdev = pd;
		o->requested = e->size;
		o->device_free = e->x;
		o->stack = e->stack_id;
		ranges_at(a, proc, r->rec.tid, &o->at);
		o->st.seq = seq;
		o->st.t = r->t;
		m->devs[pd].ooms++;
		if (cd >= 0) {
			const struct an_dev *d = &a->devs[cd];

			o->has_cuda = 1;
			o->cuda_reserved = d->reserved;
			if (d->has_pend || d->has_sample) {
				o->has_total = 1;
				o->device_total = d->has_pend ? d->pend_total : d->sample_total;
			}
		}
		return 0;
	}
	default:
		return 0;
	}
	settle(a, m, pd, r->t, seq, proc);
	if (PRIV(m)->release_seq[proc] == FW_NEVER)
		settle(a, m, m->devs[pd].run, r->t, seq, proc);
	return 0;
}

/* --- after the pass: the moments ---------------------------------------- */

struct ref { int proc; uint64_t addr, size; uint32_t i; };

static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int cmp_held(const void *x, const void *y)
{
	const struct fw_held *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Does a block or segment of proc on fdev count on device di after seq? */
static int counts(const struct fw_model *m, int di, int fdev, int proc, uint64_t seq)
{
	if (m->devs[di].proc >= 0)
		return fdev == di;
	return m->devs[fdev].run == di && seq < PRIV(m)->release_seq[proc];
}

/*
 * The state of device di after FW event seq: sums, PyTorch's free blocks
 * (the gaps between blocks in a segment, or in a run of mapped pages of
 * an expandable segment: with real block sizes these are exactly the
 * free blocks, since PyTorch merges free neighbours), and (held not NULL)
 * the tensor sites live then.
 */
static int state_at(const struct fw_model *m, int di, uint64_t seq, struct fw_state *st,
		    struct fw_held **held, uint32_t *nheld)
{
	struct ref *sg = NULL, *bl = NULL;
	size_t ns = 0, nb = 0, k = 0;
	uint64_t *by = NULL, *cnt = NULL;
	uint64_t t = st->t;

	memset(st, 0, sizeof(*st));
	st->t = t;
	st->seq = seq;
	sg = malloc((m->nsegs + 1) * sizeof(*sg));
	bl = malloc((m->nblocks + 1) * sizeof(*bl));
	if (held) {
		by = calloc(m->nsites + 1, sizeof(*by));
		cnt = calloc(m->nsites + 1, sizeof(*cnt));
	}
	if (!sg || !bl || (held && (!by || !cnt)))
		goto nomem;
	for (uint64_t i = 0; i < m->nsegs; i++) {
		const struct fw_seg *g = &m->segs[i];

		if (g->s_alloc > seq || g->s_free <= seq || !counts(m, di, g->fdev, g->proc, seq))
			continue;
		sg[ns++] = (struct ref){ g->proc, g->addr, g->size, (uint32_t)i };
		st->reserved += g->size;
		st->segments++;
	}
	for (uint64_t i = 0; i < m->nblocks; i++) {
		const struct fw_block *b = &m->blocks[i];

		if (b->s_alloc > seq || b->s_fdone <= seq || !counts(m, di, b->fdev, b->proc, seq))
			continue;
		bl[nb++] = (struct ref){ b->proc, b->addr, b->size, (uint32_t)i };
		st->requested += b->req;
		st->blocks++;
		if (b->s_freq <= seq) {
			st->awaiting += b->size;
			continue;
		}
		st->allocated += b->size;
		if (held && b->site != UINT32_MAX) {
			by[b->site] += b->size;
			cnt[b->site]++;
		}
	}
	qsort(sg, ns, sizeof(*sg), cmp_ref);
	qsort(bl, nb, sizeof(*bl), cmp_ref);
	for (size_t i = 0; i < ns;) {
		const struct fw_seg *g = &m->segs[sg[i].i];
		int proc = sg[i].proc, mapped = g->mapped, pool = g->pool, split = 0;
		uint64_t lo = sg[i].addr, hi = lo + sg[i].size, at, gap, free_bytes = 0;
		uint64_t largest = 0;

		/* pieces of an expandable segment that touch are one extent */
		while (mapped && i + 1 < ns && m->segs[sg[i + 1].i].mapped &&
		       sg[i + 1].proc == proc && sg[i + 1].addr == hi) {
			i++;
			hi += sg[i].size;
		}
		i++;
		while (k < nb && (bl[k].proc < proc || (bl[k].proc == proc && bl[k].addr < lo)))
			k++;
		at = lo;
		for (; k < nb && bl[k].proc == proc && bl[k].addr < hi; k++) {
			uint64_t b_end = bl[k].addr + bl[k].size;

			gap = bl[k].addr > at ? bl[k].addr - at : 0;
			free_bytes += gap;
			if (gap > largest)
				largest = gap;
			if (pool < 0)
				pool = m->blocks[bl[k].i].pool;
			split = 1;
			if (b_end > at)
				at = b_end;
		}
		gap = hi > at ? hi - at : 0;
		free_bytes += gap;
		if (gap > largest)
			largest = gap;
		/* a segment no block was ever taken from: a 2 MiB cudaMalloc
		   (kSmallBuffer) is the small pool's; the large pool's are
		   >= 10 MiB (get_allocation_size) */
		if (pool < 0)
			pool = !mapped && hi - lo == 2u << 20 ? 0 : 1;
		if (largest > st->largest_free)
			st->largest_free = largest;
		if (largest > st->pool_largest[pool])
			st->pool_largest[pool] = largest;
		st->pool_free[pool] += free_bytes;
		/* inactive split: free blocks of segments that also hold a block;
		   free_block leaves expandable segments out */
		if (split && !mapped)
			st->inactive_split += free_bytes;
	}
	st->cached = st->reserved > st->allocated ? st->reserved - st->allocated : 0;
	if (held) {
		uint32_t n = 0;

		*held = calloc(m->nsites + 1, sizeof(**held));
		if (!*held)
			goto nomem;
		for (uint32_t i = 0; i < m->nsites; i++)
			if (by[i])
				(*held)[n++] = (struct fw_held){ i, by[i], cnt[i] };
		qsort(*held, n, sizeof(**held), cmp_held);
		*nheld = n;
	}
	free(sg);
	free(bl);
	free(by);
	free(cnt);
	return 0;
nomem:
	free(sg);
	free(bl);
	free(by);
	free(cnt);
	return -1;
}

int fw_state_at(const struct fw_model *m, int di, uint64_t seq, uint64_t t, struct fw_state *st,
		struct fw_held **held, uint32_t *nheld)
{
	st->t = t;
	if (held)
		*held = NULL;
	return state_at(m, di, seq, st, held, nheld);
}

int fw_counts_at(const struct fw_model *m, int di, int fdev, int proc, uint64_t seq)
{
	return counts(m, di, fdev, proc, seq);
}

/* The events come in time order: the last one at or before t is the
   highest event number among those of time <= t. */
uint64_t fw_seq_at(const struct fw_model *m, uint64_t t)
{
	uint64_t seq = 0;

#define AT(s_, t_) do { if ((s_) != FW_NEVER && (t_) <= t && (s_) > seq) seq = (s_); } while (0)
	for (uint64_t i = 0; i < m->nblocks; i++) {
		const struct fw_block *b = &m->blocks[i];

		AT(b->s_alloc, b->t_alloc);
		AT(b->s_freq, b->t_freq);
		AT(b->s_fdone, b->t_fdone);
	}
	for (uint64_t i = 0; i < m->nsegs; i++) {
		AT(m->segs[i].s_alloc, m->segs[i].t_alloc);
		AT(m->segs[i].s_free, m->segs[i].t_free);
	}
	for (uint32_t i = 0; i < m->nooms; i++)
		AT(m->ooms[i].st.seq, m->ooms[i].st.t);
#undef AT
	return seq;
}

/*
 * The verdict of an OOM (docs/analysis.md), on PyTorch's own blocks and
 * in the pool the request would come from (a request over 1 MiB can only
 * use the large pool): fragmentation when that pool's free blocks could
 * hold the request but none is as large; another stream's when only the
 * blocks awaiting free would make them large enough; else the device is
 * full of tensors when they are at least half of it (or its size is not
 * known), and memory outside the framework when it would have made room
 * for the request.
 */
static enum fw_verdict verdict(const struct fw_oom *o)
{
	const struct fw_state *s = &o->st;
	int pool = o->requested > K_SMALL_SIZE;
	uint64_t free_bytes = s->pool_free[pool];

	if (free_bytes >= o->requested && s->pool_largest[pool] < o->requested)
		return FW_FRAGMENTATION;
	if (free_bytes < o->requested && free_bytes + s->awaiting >= o->requested)
		return FW_OTHER_STREAM;
	if (!o->has_total || s->allocated * 2 >= o->device_total)
		return FW_FULL;
	if (o->outside > 0 && (uint64_t)o->outside + o->device_free >= o->requested)
		return FW_OUTSIDE;
	return FW_FULL;
}

const char *fw_site_name(char *buf, size_t len, const struct analysis *a,
			 const struct fw_site *s, int *folded)
{
	struct trace_fw_frame fr[MAX_FRAMES];
	uint32_t nf = 0;
	size_t o = 0;
	int n = 0;

	if (folded)
		*folded = 0;
	if (!len)
		return buf;
	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(a->s, s->proc)->t, s->stack, fr, MAX_FRAMES);
	if (nf > MAX_FRAMES)
		nf = MAX_FRAMES;
	if (!nf) {
		snprintf(buf, len, "(no stack recorded)");
		return buf;
	}
	if (folded)
		*folded = s->main_frame;
	buf[0] = 0;
	for (uint32_t i = (uint32_t)s->main_frame; i < nf && n < s->name_frames && o + 1 < len;
	     i++, n++) {
		const char *b = fr[i].file;
		int bl = (int)fr[i].file_len, w;

		for (uint32_t k = 0; k < fr[i].file_len; k++)
			if (fr[i].file[k] == '/') {
				b = fr[i].file + k + 1;
				bl = (int)(fr[i].file_len - k - 1);
			}
		w = snprintf(buf + o, len - o, "%s%.*s:%" PRIu32 " %.*s", n ? " < " : "", bl, b,
			     fr[i].line, (int)fr[i].function_len, fr[i].function);
		if (w < 0)
			break;
		o += (size_t)w < len - o ? (size_t)w : len - o - 1;
	}
	return buf;
}

/* The key of a tensor site from its main frame: the frames its name
   shows, "file:line function|" each. */
static const char *key_from_main(const struct fw_site *s)
{
	const char *k = s->key;

	for (int i = 0; i < s->main_frame && k; i++) {
		k = strchr(k, '|');
		if (k)
			k++;
	}
	return k ? k : "";
}

static int cmp_fw_named(const void *x, const void *y)
{
	return strcmp(key_from_main(*(const struct fw_site *const *)x),
		      key_from_main(*(const struct fw_site *const *)y));
}

/* Frames the keys of two tensor sites share from their main frames. */
static int fw_shared(const struct fw_site *a, const struct fw_site *b)
{
	const char *p = key_from_main(a), *q = key_from_main(b);
	int n = 0;

	for (; *p && *p == *q; p++, q++)
		if (*p == '|')
			n++;
	return n;
}

/* name_frames of every tensor site, as sites.c does for CUDA-level ones. */
int fw_name_sites(struct fw_model *m)
{
	struct fw_site **v = malloc((m->nsites + 1) * sizeof(*v));

	if (!v)
		return -1;
	for (uint32_t i = 0; i < m->nsites; i++)
		v[i] = &m->sites[i];
	qsort(v, m->nsites, sizeof(*v), cmp_fw_named);
	for (uint32_t i = 0; i < m->nsites; i++) {
		int k = 0, n;

		if (i > 0 && (n = fw_shared(v[i], v[i - 1])) > k)
			k = n;
		if (i + 1 < m->nsites && (n = fw_shared(v[i], v[i + 1])) > k)
			k = n;
		k = k + 1 < SITE_NAME_FRAMES ? SITE_NAME_FRAMES : k + 1;
		v[i]->name_frames = k > SITE_NAME_MAX ? SITE_NAME_MAX : k;
	}
	free(v);
	return 0;
}

static int cmp_leak(const void *x, const void *y, void *ctx)
{
	const struct fw_site *s = ctx, *a = &s[*(const uint32_t *)x], *b = &s[*(const uint32_t *)y];

	if (a->exit_bytes != b->exit_bytes)
		return a->exit_bytes > b->exit_bytes ? -1 : 1;
	if (a->max != b->max)
		return a->max > b->max ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * What the drains said in the FW_INFO notes of every process, summed:
 * "dropped=N" (events the history lost), "drain_ns=N" (each _snapshot()
 * timed), "resync=" (the position of the last drained entry had to be
 * searched), "timing=drain" (no time_us), "budget_gap_s=" (the budget let
 * the ring turn over), "program_history=" (the program's own call).
 */
static void notes(const struct analysis *a, struct fw_model *m)
{
	for (int i = 0; i < a->nprocs; i++) {
		const struct trace *t = stream_proc(a->s, i)->t;
		struct trace_bytes tx;

		for (uint32_t k = 0; trace_fw_info(t, k, &tx, NULL) == 0; k++) {
			size_t at = 0;

			m->dropped += note_u64(tx, "dropped=", 0);
			if (trace_note_value(tx, "drain_ns=", &at).p) {
				m->drains++;
				m->drain_ns += note_u64(tx, "drain_ns=", 0);
			}
			at = 0;
			m->resyncs += trace_note_value(tx, "resync=", &at).p != NULL;
			at = 0;
			m->budget_gaps += trace_note_value(tx, "budget_gap_s=", &at).p != NULL;
			at = 0;
			m->program_history += trace_note_value(tx, "program_history=", &at).p != NULL;
			at = 0;
			if (trace_note_value(tx, "timing=", &at).p)
				m->drain_timing = 1;
		}
	}
}

int fw_end(struct analysis *a)
{
	struct fw_model *m = a->fw;

	if (!m)
		return 0;
	for (int i = 0; i < m->ndevs; i++) {
		struct fw_dev *d = &m->devs[i];
		int cd;

		if (d->tl_pending)
			tl_keep(d, &d->tl_last, d->tl_last_req);
		d->tl_pending = 0;
		if (d->peak_alloc.st.seq &&
		    state_at(m, i, d->peak_alloc.st.seq, &d->peak_alloc.st, &d->peak_alloc.held,
			     &d->peak_alloc.nheld))
			return -1;
		if (d->peak_req.st.seq &&
		    state_at(m, i, d->peak_req.st.seq, &d->peak_req.st, &d->peak_req.held,
			     &d->peak_req.nheld))
			return -1;
		if (d->peak_res.st.seq &&
		    state_at(m, i, d->peak_res.st.seq, &d->peak_res.st, &d->peak_res.held,
			     &d->peak_res.nheld))
			return -1;
		d->end.t = d->proc >= 0 ? stream_proc(a->s, d->proc)->last_t : a->duration;
		if (state_at(m, i, m->events, &d->end, NULL, NULL))
			return -1;
		cd = d->proc >= 0 ? cuda_dev(a, d->proc, d->dev, 0) : -1;
		if (d->proc < 0) {
			/* the run's device: memtrace's device of the same host */
			for (int k = 0; k < a->ndevs; k++)
				if (a->devs[k].proc < 0 && a->devs[k].dev == d->dev &&
				    a->devs[k].host == d->host)
					cd = k;
		}
		if (cd >= 0 && a->devs[cd].used) {
			d->has_cuda = 1;
			d->cuda_peak = a->devs[cd].peak.reserved;
		}
	}
	for (uint32_t i = 0; i < m->nooms; i++) {
		struct fw_oom *o = &m->ooms[i];
		struct fw_held *h = NULL;
		uint32_t nh = 0;

		if (state_at(m, o->fdev, o->st.seq, &o->st, &h, &nh))
			return -1;
		for (uint32_t k = 0; k < nh && k < AN_TOP; k++)
			o->top[o->ntop++] = h[k];
		free(h);
		if (o->has_total)
			o->outside = (int64_t)o->device_total - (int64_t)o->device_free -
				     (int64_t)o->st.reserved;
		o->verdict = verdict(o);
	}
	for (uint64_t i = 0; i < m->nblocks; i++) {
		const struct fw_block *b = &m->blocks[i];
		struct fw_site *s;

		if (b->s_freq != FW_NEVER || b->site == UINT32_MAX)
			continue;
		s = &m->sites[b->site];
		s->exit_bytes += b->size;
		s->exit_count++;
		if (a->procs[b->proc].end == AN_END_KILLED)
			s->interrupted = 1;
	}
	m->leaks = calloc(m->nsites + 1, sizeof(*m->leaks));
	if (!m->leaks)
		return -1;
	for (uint32_t i = 0; i < m->nsites; i++) {
		struct fw_site *s = &m->sites[i];

		s->growing = leaks_is_growing(a, &s->g);
		if (s->exit_bytes || s->growing)
			m->leaks[m->nleaks++] = i;
	}
	qsort_r(m->leaks, m->nleaks, sizeof(*m->leaks), cmp_leak, m->sites);
	if (fw_name_sites(m))
		return -1;
	notes(a, m);
	return 0;
}

void fw_free(struct fw_model *m)
{
	struct priv *p;

	if (!m)
		return;
	p = m->priv;
	if (p)
		priv_free(p, p->nprocs);
	for (int i = 0; i < m->ndevs; i++) {
		free(m->devs[i].peak_alloc.held);
		free(m->devs[i].peak_req.held);
		free(m->devs[i].peak_res.held);
		free(m->devs[i].tl);
		free(m->devs[i].tl_req);
	}
	for (uint32_t i = 0; i < m->nsites; i++) {
		free(m->sites[i].key);
		free(m->sites[i].file);
		free(m->sites[i].function);
	}
	free(m->devs);
	free(m->blocks);
	free(m->segs);
	free(m->sites);
	free(m->ooms);
	free(m->leaks);
	free(m);
}
