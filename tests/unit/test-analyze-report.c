/*
 * test-analyze-report.c - the analysis pass (analyze/model/account.c and the
 * metric modules) on traces built here, with numbers worked out by hand:
 * the merge of slabs into time order, a free before the next allocation at
 * the same address, pool accounting with and without POOL records, the
 * VMM lifetime rule, frees of unknown addresses, two processes summed on
 * wall-clock time, and the growth test of leak candidates.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "model/metrics.h"
#include "testhelp.h"

#define SLAB 4096
#define MiB (1ull << 20)

struct tb {
	unsigned char *buf;
	size_t size;
};

struct cur {
	struct tb *tb;
	size_t pos;
};

static void tb_init(struct tb *tb, unsigned nslabs, uint64_t wall, uint32_t pid)
{
	struct mt_file_header h;

	tb->size = (size_t)SLAB * (nslabs + 1);
	if (posix_memalign((void **)&tb->buf, 4096, tb->size))
		abort();
	memset(tb->buf, 0, tb->size);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = MT_FORMAT_VERSION;
	h.header_size = SLAB;
	h.slab_size = SLAB;
	h.pid = pid;
	h.start_wall_ns = wall;
	h.start_mono_ns = 1000;
	memcpy(tb->buf, &h, sizeof(h));
}

static struct cur slab(struct tb *tb, unsigned k, uint32_t tid)
{
	struct mt_slab_header sh = { MT_SLAB_MAGIC, tid, 1000 };
	struct cur c = { tb, (size_t)(k + 1) * SLAB + sizeof(sh) };

	memcpy(tb->buf + (size_t)(k + 1) * SLAB, &sh, sizeof(sh));
	return c;
}

static void ev(struct cur *c, int is_free, unsigned kind, int dev, uint32_t t, uint64_t addr,
	       uint64_t bytes, uint64_t x1, uint64_t x2, int ex)
{
	struct mt_event_ex e;
	size_t size = ex ? sizeof(e) : sizeof(e.e);

	memset(&e, 0, sizeof(e));
	e.e.h.type = (uint8_t)(is_free ? (ex ? MT_REC_FREE_EX : MT_REC_FREE) :
			       (ex ? MT_REC_ALLOC_EX : MT_REC_ALLOC));
	e.e.h.size8 = (uint8_t)(size / 8);
	e.e.h.a = (uint8_t)kind;
	e.e.h.b = (int8_t)dev;
	e.e.time_delta = t;
	e.e.addr = addr;
	e.e.bytes = bytes;
	e.e.api = is_free ? MT_API_cudaFree : MT_API_cudaMalloc;
	e.x1 = x1;
	e.x2 = x2;
	memcpy(c->tb->buf + c->pos, &e, size);
	c->pos += size;
}

static void pool(struct cur *c, int dev, uint32_t t, uint64_t handle, uint64_t reserved,
		 uint64_t used)
{
	struct mt_pool p;

	memset(&p, 0, sizeof(p));
	p.h.type = MT_REC_POOL;
	p.h.size8 = sizeof(p) / 8;
	p.h.b = (int8_t)dev;
	p.time_delta = t;
	p.pool = handle;
	p.reserved = reserved;
	p.used = used;
	memcpy(c->tb->buf + c->pos, &p, sizeof(p));
	c->pos += sizeof(p);
}

#define ALLOC(c, kind, t, addr, bytes) ev(c, 0, kind, 0, t, addr, bytes, 0, 0, 0)
#define FREE(c, kind, t, addr) ev(c, 1, kind, -1, t, addr, 0, 0, 0, 0)

static struct analysis *run(struct tb *tbs, int n, struct trace **tr, struct stream **s)
{
	char err[256];
	struct analysis *a;

	for (int i = 0; i < n; i++) {
		tr[i] = trace_open_buffer(tbs[i].buf, tbs[i].size, "t", err, sizeof(err));
		if (!tr[i]) {
			fprintf(stderr, "trace: %s\n", err);
			exit(1);
		}
	}
	*s = stream_open(tr, n, err, sizeof(err));
	if (!*s)
		exit(1);
	a = analysis_run(*s, NULL, NULL, NULL, err, sizeof(err));
	if (!a) {
		fprintf(stderr, "analysis: %s\n", err);
		exit(1);
	}
	return a;
}

static void done(struct analysis *a, struct stream *s, struct trace **tr, struct tb *tbs, int n)
{
	analysis_free(a);
	stream_close(s);
	for (int i = 0; i < n; i++) {
		trace_close(tr[i]);
		free(tbs[i].buf);
	}
}

static const struct an_dev *pdev(const struct analysis *a, int proc, int dev)
{
	return &a->devs[a->procs[proc].pdev[dev]];
}

int main(void)
{
	struct tb tb[2];
	struct trace *tr[2];
	struct stream *s;
	struct analysis *a;
	struct cur c1, c2;

	TEST("slabs merge in time order; a free precedes the reuse of its address") {
		tb_init(&tb[0], 2, 1000000, 1);
		c1 = slab(&tb[0], 0, 10);       /* thread 10 */
		c2 = slab(&tb[0], 1, 11);       /* thread 11, interleaved */
		ALLOC(&c1, MT_KIND_DEVICE, 100, 0x1000, 1 * MiB);
		FREE(&c1, MT_KIND_DEVICE, 300, 0x1000);
		ALLOC(&c1, MT_KIND_DEVICE, 500, 0x5000, 8 * MiB);
		FREE(&c1, MT_KIND_DEVICE, 600, 0x5000);
		ALLOC(&c2, MT_KIND_DEVICE, 200, 0x2000, 2 * MiB);   /* peak 3 MiB at 200 */
		ALLOC(&c2, MT_KIND_DEVICE, 301, 0x1000, 4 * MiB);   /* reuses 0x1000 */
		FREE(&c2, MT_KIND_DEVICE, 700, 0x1000);
		FREE(&c2, MT_KIND_DEVICE, 701, 0x9999);             /* unknown */
		a = run(tb, 1, tr, &s);
		const struct an_dev *d = pdev(a, 0, 0);
		/* 2 + 4 + 8 = 14 MiB at 500 */
		CHECK_EQ_U64(d->peak.reserved, 14 * MiB);
		CHECK_EQ_U64(d->peak.allocated, 14 * MiB);
		CHECK_EQ_U64(d->peak.time, 500);             /* origin: the header's start */
		CHECK_EQ_U64(d->left_at_exit, 2 * MiB);
		CHECK_EQ_U64(a->procs[0].unknown_frees, 1);
		CHECK_EQ_U64(a->events, 8);
		CHECK_EQ_U64(d->npeak_sites, 1);                   /* all stack 0 */
		CHECK_EQ_U64(d->peak_sites[0].bytes, 14 * MiB);
		CHECK_EQ_U64(d->peak_sites[0].count, 3);
		done(a, s, tr, tb, 1);
	}

	TEST("pools: live async bytes until a POOL record, then its reserved") {
		tb_init(&tb[0], 1, 1000000, 1);
		c1 = slab(&tb[0], 0, 10);
		ev(&c1, 0, MT_KIND_ASYNC, 0, 100, 0x7000, 1 * MiB, 0x50, 0x6000, 1);
		pool(&c1, 0, 101, 0x6000, 4 * MiB, 1 * MiB);
		ev(&c1, 0, MT_KIND_ASYNC, 0, 200, 0x7000 + MiB, 1 * MiB, 0x50, 0x6000, 1);
		pool(&c1, 0, 201, 0x6000, 4 * MiB, 2 * MiB);
		ev(&c1, 1, MT_KIND_ASYNC, -1, 300, 0x7000, 0, 0x50, 0, 1);
		pool(&c1, 0, 301, 0x6000, 4 * MiB, 1 * MiB);
		pool(&c1, 0, 400, 0x6000, 0, 0);                   /* trimmed */
		a = run(tb, 1, tr, &s);
		const struct an_dev *d = pdev(a, 0, 0);
		CHECK_EQ_U64(d->peak.reserved, 4 * MiB);
		CHECK_EQ_U64(d->peak.allocated, 1 * MiB);          /* first moment of 4 MiB */
		CHECK_EQ_U64(d->left_at_exit, 0);
		CHECK_EQ_U64(d->nextents, 1);
		CHECK_EQ_U64(d->extents[0].free_total, 3 * MiB);
		CHECK_EQ_U64(d->extents[0].free_largest, 3 * MiB);
		done(a, s, tr, tb, 1);
	}

	TEST("VMM: a handle counts until released and unmapped") {
		tb_init(&tb[0], 1, 1000000, 1);
		c1 = slab(&tb[0], 0, 10);
		ALLOC(&c1, MT_KIND_VMM_RESERVE, 100, 0x100000, 16 * MiB);
		ev(&c1, 0, MT_KIND_VMM_PHYS, 0, 110, 0xaa, 2 * MiB, 2 * MiB, 1, 1);
		ev(&c1, 0, MT_KIND_VMM_MAP, -1, 120, 0x100000, 2 * MiB, 0xaa, 0, 1);
		ev(&c1, 1, MT_KIND_VMM_PHYS, -1, 130, 0xaa, 0, 0, 0, 1);     /* released, mapped */
		ALLOC(&c1, MT_KIND_DEVICE, 140, 0x1000, 1 * MiB);          /* peak: 3 MiB */
		ev(&c1, 1, MT_KIND_VMM_MAP, -1, 150, 0x100000, 2 * MiB, 0, 0, 0);  /* unmap: goes */
		a = run(tb, 1, tr, &s);
		const struct an_dev *d = pdev(a, 0, 0);
		CHECK_EQ_U64(d->peak.reserved, 3 * MiB);
		CHECK_EQ_U64(d->peak.allocated, 3 * MiB);
		CHECK_EQ_U64(d->left_at_exit, 1 * MiB);
		CHECK_EQ_U64(d->nextents, 1);
		CHECK_EQ_U64(d->extents[0].free_total, 14 * MiB);
		CHECK_EQ_U64(d->extents[0].free_largest, 14 * MiB);
		done(a, s, tr, tb, 1);
	}

	TEST("two processes on one device, summed on wall-clock time") {
		/* process 1 starts 1 us later (wall), with the same monotonic base */
		tb_init(&tb[0], 1, 1000000, 1);
		tb_init(&tb[1], 1, 1001000, 2);
		c1 = slab(&tb[0], 0, 10);
		c2 = slab(&tb[1], 0, 20);
		ALLOC(&c1, MT_KIND_DEVICE, 100, 0x1000, 1 * MiB);
		FREE(&c1, MT_KIND_DEVICE, 1500, 0x1000);      /* wall 1001500 */
		ALLOC(&c2, MT_KIND_DEVICE, 100, 0x1000, 2 * MiB);   /* wall 1001100: overlaps */
		FREE(&c2, MT_KIND_DEVICE, 1000, 0x1000);
		a = run(tb, 2, tr, &s);
		const struct an_dev *g = &a->devs[pdev(a, 0, 0)->gdev];
		CHECK_EQ_U64(pdev(a, 0, 0)->peak.reserved, 1 * MiB);
		CHECK_EQ_U64(pdev(a, 1, 0)->peak.reserved, 2 * MiB);
		CHECK_EQ_U64(pdev(a, 0, 0)->gdev, pdev(a, 1, 0)->gdev);
		CHECK_EQ_U64(g->peak.reserved, 3 * MiB);
		CHECK_EQ_U64(g->peak.time, 1100);             /* 1001100 - origin 1000000 */
		CHECK_EQ_U64(g->npeak_sites, 2);
		done(a, s, tr, tb, 2);
	}

	TEST("leaks: growing needs K new maxima over half the run, kept to the end") {
		tb_init(&tb[0], 1, 1000000, 1);
		c1 = slab(&tb[0], 0, 10);
		for (int i = 0; i < 6; i++)                   /* 6 maxima, t = 100..600 */
			ALLOC(&c1, MT_KIND_DEVICE, 100 + 100 * (uint32_t)i, 0x1000 + (uint64_t)i * 0x100, MiB);
		ALLOC(&c1, MT_KIND_MANAGED, 1000, 0x9000, MiB);   /* the run ends at 1000 */
		a = run(tb, 1, tr, &s);
		CHECK_EQ_U64(a->nsites, 1);                   /* one stack (0), one device */
		CHECK_EQ_U64(a->sites[0].nmax, 7);
		CHECK(leaks_is_growing(a, &a->sites[0]));
		done(a, s, tr, tb, 1);

		tb_init(&tb[0], 1, 1000000, 1);
		c1 = slab(&tb[0], 0, 10);
		for (int i = 0; i < 6; i++)                   /* maxima only at the start */
			ALLOC(&c1, MT_KIND_DEVICE, 100 + (uint32_t)i, 0x1000 + (uint64_t)i * 0x100, MiB);
		FREE(&c1, MT_KIND_DEVICE, 5000, 0x1000);
		ALLOC(&c1, MT_KIND_DEVICE, 10000, 0x1000, 1);
		a = run(tb, 1, tr, &s);
		CHECK(!leaks_is_growing(a, &a->sites[0]));
		done(a, s, tr, tb, 1);
	}
	return test_report(__FILE__);
}
