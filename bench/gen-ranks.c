/*
 * gen-ranks.c - writes the traces of a synthetic multi-node run, for the
 * many-ranks bench and tests: RANKS processes on HOSTS hosts of DEVS devices
 * each, every one a valid trace (format header, one slab per 64 KiB, a
 * process record with host, rank and local rank, then EVENTS cudaMalloc /
 * cudaFree records, then an exit record). Each host has its own
 * monotonic clock and its wall clock offset by a few milliseconds, as real
 * nodes do, so the analyzer must merge them on wall time.
 *
 * Every rank keeps a window of at most 32 live blocks of sizes drawn from
 * its own generator; rank RANKS*5/7 also takes one 6 GiB block for a while
 * (the clearly highest peak), and ranks RANKS/3 and 2*RANKS/3+1 (when
 * distinct and present) end with a failed cudaMalloc of 80 GiB
 * (cudaErrorMemoryAllocation); the first then exits with status 1, the
 * second is killed (no exit record). Blocks still live at the end are
 * freed first, so nothing leaks.
 *
 * usage: gen-ranks DIR [RANKS [EVENTS [HOSTS [DEVS]]]]
 *   (default 1024 ranks, 100000 events, 8 hosts, 8 devices): writes
 *   DIR/rank-NNNN.bin and prints one line per rank on stdout:
 *   "rank host device peak_bytes failures events", the figures a report must
 *   find for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/trace-format.h"

#define WINDOW 32
#define STEP_NS 1000u
#define BIG (6ull << 30)
#define OOM_BYTES (80ull << 30)
#define CUDA_ERROR_MEMORY_ALLOCATION 2

struct out {
	FILE *f;
	unsigned char slab[MT_SLAB_SIZE];
	size_t pos;                 /* in slab; 0: no slab open */
	uint64_t base;              /* the open slab's time base */
	uint32_t tid;
};

static void flush_slab(struct out *o)
{
	if (!o->pos)
		return;
	memset(o->slab + o->pos, 0, sizeof(o->slab) - o->pos);
	if (fwrite(o->slab, 1, sizeof(o->slab), o->f) != sizeof(o->slab)) {
		perror("gen-ranks: write");
		exit(1);
	}
	o->pos = 0;
}

/* Room for len bytes at time t: a new slab when full or when t is too far
   from the time base for a 32-bit delta. */
static unsigned char *room(struct out *o, size_t len, uint64_t t)
{
	if (o->pos && (o->pos + len > sizeof(o->slab) || t - o->base > 0xf0000000u))
		flush_slab(o);
	if (!o->pos) {
		struct mt_slab_header sh = { MT_SLAB_MAGIC, o->tid, t };

		memcpy(o->slab, &sh, sizeof(sh));
		o->pos = sizeof(sh);
		o->base = t;
	}
	o->pos += len;
	return o->slab + o->pos - len;
}

static void event(struct out *o, int is_free, int dev, uint64_t t, uint64_t addr, uint64_t bytes,
		  unsigned result)
{
	struct mt_event e;
	unsigned char *at = room(o, sizeof(e), t);     /* first: it may start a
	                                                   slab, with a new base */

	memset(&e, 0, sizeof(e));
	e.h.type = is_free ? MT_REC_FREE : MT_REC_ALLOC;
	e.h.size8 = sizeof(e) / 8;
	e.h.a = MT_KIND_DEVICE | MT_KIND_RUNTIME;
	e.h.b = (int8_t)(is_free ? -1 : dev);
	e.time_delta = (uint32_t)(t - o->base);
	e.addr = addr;
	e.bytes = bytes;
	e.api = is_free ? MT_API_cudaFree : MT_API_cudaMalloc;
	e.result = (uint16_t)result;
	memcpy(at, &e, sizeof(e));
}

static void process(struct out *o, uint32_t pid, int rank, int local, int world, const char *host)
{
	char cmd[64];
	size_t hl = strlen(host), cl, el, len;
	const char *exe = "/opt/train/bin/train";
	struct mt_process p;
	unsigned char *b;

	cl = (size_t)snprintf(cmd, sizeof(cmd), "train%c--rank=%d%c", 0, rank, 0);
	el = strlen(exe);
	len = (sizeof(p) + hl + cl + el + 7) & ~(size_t)7;
	memset(&p, 0, sizeof(p));
	p.lh.h.type = MT_REC_PROCESS;
	p.lh.size = (uint32_t)len;
	p.pid = pid;
	p.ppid = 1;
	p.rank = rank;
	p.local_rank = local;
	p.world_size = world;
	p.hostname_len = (uint16_t)hl;
	p.cmdline_len = (uint32_t)cl;
	p.exe_len = (uint16_t)el;
	b = room(o, len, o->base);
	memset(b, 0, len);
	memcpy(b + sizeof(p), host, hl);
	memcpy(b + sizeof(p) + hl, cmd, cl);
	memcpy(b + sizeof(p) + hl + cl, exe, el);
	memcpy(b, &p, sizeof(p));
}

static void exit_rec(struct out *o, uint64_t t, int status)
{
	struct mt_exit x;
	unsigned char *at = room(o, sizeof(x), t);

	memset(&x, 0, sizeof(x));
	x.h.type = MT_REC_EXIT;
	x.h.size8 = sizeof(x) / 8;
	x.h.a = MT_EXIT_EXIT;
	x.time_delta = (uint32_t)(t - o->base);
	x.status = status;
	memcpy(at, &x, sizeof(x));
}

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

int main(int argc, char **argv)
{
	int ranks = argc > 2 ? atoi(argv[2]) : 1024;
	long events = argc > 3 ? atol(argv[3]) : 100000;
	int hosts = argc > 4 ? atoi(argv[4]) : 8;
	int devs = argc > 5 ? atoi(argv[5]) : 8;
	int per_host, big_rank, oom1, oom2;

	if (argc < 2 || ranks < 1 || events < 4 || hosts < 1 || devs < 1 || devs > 64) {
		fputs("usage: gen-ranks DIR [RANKS [EVENTS [HOSTS [DEVS]]]]\n", stderr);
		return 2;
	}
	per_host = (ranks + hosts - 1) / hosts;
	big_rank = ranks * 5 / 7;
	oom1 = ranks >= 3 ? ranks / 3 : -1;
	oom2 = ranks >= 3 ? 2 * ranks / 3 + 1 : -1;
	if (oom2 == big_rank)
		oom2++;
	if (oom2 >= ranks)
		oom2 = -1;
	if (oom1 == big_rank)
		oom1 = -1;
	for (int r = 0; r < ranks; r++) {
		static struct out o;
		struct mt_file_header h;
		char path[4096], host[32];
		int hi = r / per_host, local = r % per_host, dev = local % devs;
		int oom = r == oom1 || r == oom2, failures = 0;
		uint64_t addr[WINDOW], size[WINDOW], seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)r * 7919;
		uint64_t live = 0, peak = 0, t, mono0, next_addr;
		long n = 0, big_at = r == big_rank ? events / 2 : -1;
		int head = 0, nlive = 0;

		snprintf(host, sizeof(host), "node%02d", hi);
		snprintf(path, sizeof(path), "%s/rank-%04d.bin", argv[1], r);
		o.f = fopen(path, "wb");
		if (!o.f) {
			fprintf(stderr, "gen-ranks: cannot create '%s': %s\n", path, strerror(errno));
			return 1;
		}
		o.pos = 0;
		o.tid = 100000u + (uint32_t)r;
		/* each host's monotonic clock starts somewhere else; its wall
		   clock is off by up to 7 ms; ranks start 10 us apart */
		mono0 = 1000000000000ull * (uint64_t)(hi + 1) + (uint64_t)local * 10000u;
		memset(&h, 0, sizeof(h));
		memcpy(h.magic, MT_MAGIC, 8);
		h.version = MT_FORMAT_VERSION;
		h.version_minor = 1;
		h.header_size = MT_SLAB_SIZE;
		h.slab_size = MT_SLAB_SIZE;
		h.pid = 1000u + (uint32_t)r;
		h.start_mono_ns = mono0;
		h.start_wall_ns = 1796000000000000000ull + (uint64_t)local * 10000u +
				  (uint64_t)hi * 977000u;
		memset(o.slab, 0, sizeof(o.slab));
		memcpy(o.slab, &h, sizeof(h));
		fwrite(o.slab, 1, MT_SLAB_SIZE, o.f);
		t = mono0 + 1000;
		o.base = t;
		process(&o, h.pid, r, local, ranks, host);
		next_addr = 0x7f0000000000ull + ((uint64_t)dev << 36);
		/* leave room for the final frees, the big block's pair and the
		   failed call */
		while (n < events - nlive - (oom ? 1 : 0) - (big_at >= 0 ? 2 : 0)) {
			t += STEP_NS;
			if (n == big_at) {
				event(&o, 0, dev, t, 0x7e0000000000ull, BIG, 0);
				live += BIG;
				peak = live > peak ? live : peak;
				n++;
				continue;
			}
			if (big_at >= 0 && n == big_at + 1001) {
				event(&o, 1, dev, t, 0x7e0000000000ull, 0, 0);
				live -= BIG;
				big_at = -1;
				n++;
				continue;
			}
			if (nlive < WINDOW && (nlive == 0 || next(&seed) % 3)) {
				int k = (head + nlive) % WINDOW;

				size[k] = ((next(&seed) % 4096) + 1) << 16;     /* 64 KiB .. 256 MiB */
				addr[k] = next_addr;
				next_addr += size[k];
				event(&o, 0, dev, t, addr[k], size[k], 0);
				live += size[k];
				if (live > peak)
					peak = live;
				nlive++;
			} else {
				event(&o, 1, dev, t, addr[head], 0, 0);
				live -= size[head];
				head = (head + 1) % WINDOW;
				nlive--;
			}
			n++;
		}
		if (big_at >= 0) {              /* too few events to free it in the loop */
			event(&o, 1, dev, t += STEP_NS, 0x7e0000000000ull, 0, 0);
			live -= BIG;
			n++;
		}
		while (nlive) {
			event(&o, 1, dev, t += STEP_NS, addr[head], 0, 0);
			live -= size[head];
			head = (head + 1) % WINDOW;
			nlive--;
			n++;
		}
		if (oom) {
			event(&o, 0, dev, t += STEP_NS, 0, OOM_BYTES, CUDA_ERROR_MEMORY_ALLOCATION);
			failures++;
			n++;
		}
		if (r != oom2)          /* the second one is killed: no exit record */
			exit_rec(&o, t += STEP_NS, oom);
		flush_slab(&o);
		if (fclose(o.f) != 0) {
			fprintf(stderr, "gen-ranks: '%s': %s\n", path, strerror(errno));
			return 1;
		}
		printf("%d %s %d %" PRIu64 " %d %ld\n", r, host, dev, peak, failures, n);
	}
	return 0;
}
