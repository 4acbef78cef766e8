/*
 * test-analyze-ranks.c - the ranks table of a run of many processes
 * (report.c ranks_build, both views) on traces built here with peaks
 * chosen by hand: rows by host, device and rank, the median peak, the one
 * highest peak flagged (none when it is shared), failed and killed
 * processes flagged, full sections for the three highest peaks and the
 * flagged ones, and no table at 8 processes or fewer.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "model/report.h"
#include "testhelp.h"

#define SLAB 4096
#define MiB (1ull << 20)

struct tb {
	unsigned char *buf;
	size_t size, pos;
};

static void put(struct tb *tb, const void *p, size_t len)
{
	memcpy(tb->buf + tb->pos, p, len);
	tb->pos += len;
}

static void ev(struct tb *tb, int is_free, int dev, uint32_t t, uint64_t addr, uint64_t bytes,
	       unsigned result)
{
	struct mt_event e;

	memset(&e, 0, sizeof(e));
	e.h.type = (uint8_t)(is_free ? MT_REC_FREE : MT_REC_ALLOC);
	e.h.size8 = sizeof(e) / 8;
	e.h.a = MT_KIND_DEVICE;
	e.h.b = (int8_t)(is_free ? -1 : dev);
	e.time_delta = t;
	e.addr = addr;
	e.bytes = bytes;
	e.api = is_free ? MT_API_cuMemFree_v2 : MT_API_cuMemAlloc_v2;
	e.result = (uint16_t)result;
	put(tb, &e, sizeof(e));
}

/*
 * One process: rank on host, allocates peak bytes on dev at t=10 and frees
 * them at t=20; fail: then a cuMemAlloc of 1 GiB fails; killed: no exit
 * record (the trace is format 1.1, which promises one on a clean exit).
 */
static void proc(struct tb *tb, int rank, const char *host, int dev, uint64_t peak, int fail,
		 int killed)
{
	struct mt_file_header h;
	struct mt_slab_header sh = { MT_SLAB_MAGIC, 100u + (uint32_t)rank, 1000 };
	struct mt_process p;
	size_t hl = strlen(host), len = (sizeof(p) + hl + 2 + 7) & ~(size_t)7;
	unsigned char pad[64] = { 0 };

	tb->size = 2 * SLAB;
	if (posix_memalign((void **)&tb->buf, 4096, tb->size))
		abort();
	memset(tb->buf, 0, tb->size);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = 1;
	h.version_minor = 1;
	h.header_size = SLAB;
	h.slab_size = SLAB;
	h.pid = 1000u + (uint32_t)rank;
	h.start_wall_ns = 1700000000000000000ull;
	h.start_mono_ns = 1000;
	memcpy(tb->buf, &h, sizeof(h));
	tb->pos = SLAB;
	put(tb, &sh, sizeof(sh));
	memset(&p, 0, sizeof(p));
	p.lh.h.type = MT_REC_PROCESS;
	p.lh.size = (uint32_t)len;
	p.pid = h.pid;
	p.ppid = 1;
	p.rank = rank;
	p.local_rank = rank;
	p.world_size = 16;
	p.hostname_len = (uint16_t)hl;
	p.cmdline_len = 2;
	put(tb, &p, sizeof(p));
	put(tb, host, hl);
	put(tb, "x", 2);
	put(tb, pad, len - sizeof(p) - hl - 2);
	ev(tb, 0, dev, 10, 0x7f0000000000ull, peak, 0);
	ev(tb, 1, dev, 20, 0x7f0000000000ull, 0, 0);
	if (fail)
		ev(tb, 0, dev, 30, 0, 1024 * MiB, 2);
	if (!killed) {
		struct mt_exit x;

		memset(&x, 0, sizeof(x));
		x.h.type = MT_REC_EXIT;
		x.h.size8 = sizeof(x) / 8;
		x.h.a = MT_EXIT_EXIT;
		x.time_delta = 40;
		put(tb, &x, sizeof(x));
	}
}

struct run {
	struct tb tb[16];
	struct trace *t[16];
	struct stream *s;
	struct analysis *a;
	struct symbols *sy;
	struct report r;
	int n;
};

static void run_open(struct run *u, int n)
{
	char err[256];
	struct sym_opts o = { NULL, NULL };

	u->n = n;
	for (int i = 0; i < n; i++) {
		u->t[i] = trace_open_buffer(u->tb[i].buf, u->tb[i].size, "t", err, sizeof(err));
		if (!u->t[i]) {
			fprintf(stderr, "trace %d: %s\n", i, err);
			exit(1);
		}
	}
	u->s = stream_open(u->t, n, err, sizeof(err));
	u->sy = u->s ? sym_open(&o, NULL, err, sizeof(err)) : NULL;
	u->a = u->sy ? analysis_run(u->s, NULL, NULL, NULL, err, sizeof(err)) : NULL;
	if (!u->a || report_build(&u->r, u->a, u->sy, err, sizeof(err))) {
		fprintf(stderr, "run: %s\n", err);
		exit(1);
	}
}

static void run_close(struct run *u)
{
	report_free(&u->r);
	analysis_free(u->a);
	sym_close(u->sy);
	stream_close(u->s);
	for (int i = 0; i < u->n; i++) {
		trace_close(u->t[i]);
		free(u->tb[i].buf);
	}
}

/* The row of rank k in the table. */
static const struct rep_rank *row_of(const struct report *r, int rank)
{
	for (int i = 0; i < r->nranks; i++)
		if (r->ranks[i].rank == rank)
			return &r->ranks[i];
	return NULL;
}

int main(void)
{
	TEST("ten ranks: order, median, flags, full sections") {
		/* peak MiB by rank; host a holds ranks 0-4, host b 5-9; device
		   rank % 2; rank 2 fails a call, rank 6 is killed */
		static const uint64_t peak[10] = { 3, 5, 2, 8, 4, 6, 1, 7, 12, 5 };
		static const int order[10] = { 0, 2, 4, 1, 3, 6, 8, 5, 7, 9 };
		static const int flags[10] = {
			0, 0, REP_RANK_FAILED | REP_RANK_FULL, REP_RANK_FULL, 0,
			0, REP_RANK_KILLED | REP_RANK_FULL, REP_RANK_FULL,
			REP_RANK_TOP_PEAK | REP_RANK_FULL, 0,
		};
		struct run u;
		char *text = NULL;
		size_t tlen = 0;
		FILE *f;

		memset(&u, 0, sizeof(u));
		for (int i = 0; i < 10; i++)
			proc(&u.tb[i], i, i < 5 ? "a" : "b", i % 2, peak[i] * MiB, i == 2, i == 6);
		run_open(&u, 10);
		CHECK_EQ_U64(u.r.nranks, 10);
		for (int i = 0; i < 10 && i < u.r.nranks; i++)
			CHECK_EQ_U64(u.r.ranks[i].rank, order[i]);
		for (int k = 0; k < 10; k++) {
			const struct rep_rank *w = row_of(&u.r, k);

			CHECK(w != NULL);
			if (!w)
				continue;
			CHECK_EQ_U64(w->peak, peak[k] * MiB);
			CHECK_EQ_U64(w->dev, k % 2);
			CHECK_EQ_U64(w->failed, k == 2);
			CHECK_EQ_U64(w->flags, flags[k]);
			CHECK_EQ_U64(w->host.len, 1);
		}
		CHECK_EQ_U64(u.r.median_peak, 5 * MiB);
		CHECK_EQ_U64(u.r.top_peak, 12 * MiB);
		CHECK_EQ_U64(u.r.top_peak_shared, 1);
		CHECK_EQ_U64(u.r.top_peak_proc, 8);
		CHECK_EQ_U64(u.r.nflagged_failed, 1);
		CHECK_EQ_U64(u.r.nflagged_killed, 1);

		f = open_memstream(&text, &tlen);
		CHECK(f && report_text(&u.r, f) == 0);
		if (f)
			fclose(f);
		CHECK(text && strstr(text, "\n  highest peak: rank 8 (pid 1008) on b dev 0, 12.0 MiB "
				     "(the median process 5.00 MiB)\n"));
		CHECK(text && strstr(text, "\n  failed calls (1): rank 2 (pid 1002) on a dev 0, 1 failed\n"));
		CHECK(text && strstr(text, "\n  killed or crashed (1): rank 6 (pid 1006) on b dev 0\n"));
		CHECK(text && strstr(text, "\n  b               0      8     1008     12.0 MiB       0"
				     "  highest peak\n"));
		CHECK(text && strstr(text, "\n  a               0      2     1002     2.00 MiB       1"
				     "  FAILED\n"));
		free(text);
		run_close(&u);
	}

	TEST("nine equal peaks: no outlier, three full sections") {
		struct run u;

		memset(&u, 0, sizeof(u));
		for (int i = 0; i < 9; i++)
			proc(&u.tb[i], i, "h", 0, 4 * MiB, 0, 0);
		run_open(&u, 9);
		CHECK_EQ_U64(u.r.nranks, 9);
		CHECK_EQ_U64(u.r.top_peak_proc, (uint64_t)-1);
		CHECK_EQ_U64(u.r.top_peak_shared, 9);
		CHECK_EQ_U64(u.r.median_peak, 4 * MiB);
		for (int i = 0; i < u.r.nranks; i++)
			CHECK_EQ_U64(u.r.ranks[i].flags, i < 3 ? REP_RANK_FULL : 0);
		run_close(&u);
	}

	TEST("eight processes: no ranks table") {
		struct run u;

		memset(&u, 0, sizeof(u));
		for (int i = 0; i < 8; i++)
			proc(&u.tb[i], i, "h", 0, (uint64_t)(i + 1) * MiB, i == 1, 0);
		run_open(&u, 8);
		CHECK_EQ_U64(u.r.nranks, 0);
		CHECK(u.r.ranks == NULL);
		run_close(&u);
	}
	return test_report(__FILE__);
}
