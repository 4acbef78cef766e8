/*
 * test-preload-writer.c - the recorder core without LD_PRELOAD: events go
 * through mt_event into a real trace file, which this test then parses with
 * its own minimal reader (independent of analyze/), checking exact values:
 * header, slab layout, the process record first, event fields, time bases,
 * slab roll-over, stack interning, framework records in slabs of their own
 * (and what a batch of them costs).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "memtrace/framework.h"
#include "mt.h"
#include "testhelp.h"

static char *file;
static size_t file_size;

static void load(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	free(file);
	file = NULL;
	file_size = 0;
	if (fd < 0 || fstat(fd, &st) != 0)
		return;
	file = malloc((size_t)st.st_size + 1);
	file_size = (size_t)read(fd, file, (size_t)st.st_size);
	close(fd);
}

/*
 * An independent reading of format 2's compact events (docs/trace-format.md)
 * into the classic event they stand for; time_delta is left 0 and the
 * absolute time goes to *time. Returns 0, or -1 when the body is malformed.
 */
struct cstate { uint64_t time, addr, x1, x2; uint32_t kda[3], stack[3]; };
static uint32_t cur_tid;                /* the owner of the record walked */

static uint64_t uvar(const unsigned char **q)
{
	uint64_t v = 0;
	for (int sh = 0;; sh += 7) {
		unsigned char b = *(*q)++;
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
}

static uint64_t zvar(const unsigned char **q)
{
	uint64_t v = uvar(q);
	return (v >> 1) ^ (0 - (v & 1));
}

union dec { struct mt_event_ex ev; struct mt_fw_event fw; };

static int decode(const unsigned char *q, const unsigned char *end, struct cstate *c,
		  union dec *u, uint64_t *time)
{
	unsigned tag = *q++, cls = tag & 3;
	struct mt_event_ex *ev = &u->ev;
	uint32_t kda;

	memset(u, 0, sizeof *u);
	c->time += zvar(&q);
	c->addr += zvar(&q);
	if (!(tag & MT_CT_SAME_KDA)) {
		kda = q[0] | (uint32_t)q[1] << 8;
		q += 2;
		kda |= (uint32_t)uvar(&q) << 16;
		c->kda[cls] = kda;
	}
	kda = c->kda[cls];
	ev->e.bytes = tag & MT_CT_BYTES0 ? 0 : uvar(&q);
	if (!(tag & MT_CT_SAME_STACK))
		c->stack[cls] = (uint32_t)uvar(&q);
	ev->e.result = tag & MT_CT_RESULT ? (uint16_t)uvar(&q) : 0;
	if ((tag & MT_CT_EX) && !(tag & MT_CT_SAME_X)) {
		c->x1 = uvar(&q);
		c->x2 = uvar(&q);
	}
	if (tag & MT_CT_EX) {
		ev->x1 = c->x1;
		ev->x2 = c->x2;
	}
	ev->e.h.type = (uint8_t)((cls == 1 ? MT_REC_FREE : MT_REC_ALLOC) + (tag & MT_CT_EX ? 2 : 0));
	ev->e.h.size8 = tag & MT_CT_EX ? 6 : 4;
	ev->e.h.a = (uint8_t)kda;
	ev->e.h.b = (int8_t)(kda >> 8);
	ev->e.api = (uint16_t)(kda >> 16);
	ev->e.addr = c->addr;
	ev->e.stack_id = c->stack[cls];
	*time = c->time;
	if (cls == 2) {         /* a framework event */
		struct mt_fw_event fw = { .h = { MT_REC_FW_EVENT, 7, (uint8_t)kda, (int8_t)(kda >> 8) },
			.addr = c->addr, .size = ev->e.bytes, .stream = ev->x1, .x = ev->x2,
			.stack_id = c->stack[cls] };
		u->fw = fw;
	}
	return q == end ? 0 : -1;
}

static int misaligned, malformed;
static int cur_slab;                    /* index of the slab walked */

/* Calls fn for every record of every slab, in file order (compact events
   decoded: fn gets the classic event with their time as its base). */
static int walk(void (*fn)(const struct mt_head *, const char *rec, uint64_t base, void *), void *arg)
{
	const struct mt_file_header *h = (const void *)file;
	int slabs = 0;
	for (size_t off = h->header_size; off + MT_SLAB_SIZE <= file_size; off += MT_SLAB_SIZE) {
		const struct mt_slab_header *s = (const void *)(file + off);
		struct cstate c;
		if (s->magic != MT_SLAB_MAGIC)
			continue;
		cur_slab = (int)((off - h->header_size) / MT_SLAB_SIZE);
		slabs++;
		uint64_t base = s->time_base;
		size_t pos = sizeof *s;
		memset(&c, 0, sizeof c);
		c.time = base;
		cur_tid = s->tid;
		while (pos < MT_SLAB_SIZE) {
			const unsigned char *b = (const unsigned char *)file + off + pos;
			if (*b == 0)
				break;
			if (*b & 0x80) {
				union dec u;
				uint64_t time;
				size_t len = *b & 0x7fu;
				if (len) {
					malformed += decode(b + 1, b + 1 + len, &c, &u, &time) != 0;
					fn(&u.ev.e.h, (const char *)&u, time, arg);
				}
				pos += 1 + len;
				continue;
			}
			misaligned += pos % 8 != 0;
			const struct mt_head *hd = (const void *)b;
			size_t size = hd->size8 ? hd->size8 * 8u : ((const struct mt_long_head *)hd)->size;
			if (hd->type == MT_REC_TIMEBASE)
				base = ((const struct mt_timebase *)hd)->time_base;
			if (hd->type == MT_REC_OWNER) {
				base = ((const struct mt_owner *)hd)->time_base;
				cur_tid = ((const struct mt_owner *)hd)->tid;
				memset(&c, 0, sizeof c);
				c.time = base;
			}
			fn(hd, (const char *)hd, base, arg);
			pos += size;
		}
	}
	return slabs;
}

struct tally {
	int process, events, stacks, timebases, first_type, exits, last_type, exit_how;
	int32_t exit_status;
	uint64_t last_time, bytes_sum, exit_time;
	uint32_t stack_ids[8];
};

static void count(const struct mt_head *h, const char *rec, uint64_t base, void *arg)
{
	struct tally *t = arg;
	if (!t->first_type)
		t->first_type = h->type;
	if (h->type == MT_REC_PROCESS)
		t->process++;
	if (h->type == MT_REC_TIMEBASE)
		t->timebases++;
	if (h->type == MT_REC_STACK)
		t->stacks++;
	/* FW slabs and other threads' slabs may come later in the file */
	if (h->type != MT_REC_FW_EVENT && cur_tid == (uint32_t)getpid())
		t->last_type = h->type;
	if (h->type == MT_REC_EXIT) {
		const struct mt_exit *x = (const void *)rec;
		t->exits++;
		t->exit_how = h->a;
		t->exit_status = x->status;
		t->exit_time = base + x->time_delta;
	}
	if (h->type == MT_REC_ALLOC || h->type == MT_REC_FREE) {
		const struct mt_event *e = (const void *)rec;
		if (t->events < 8)
			t->stack_ids[t->events] = e->stack_id;
		t->events++;
		t->bytes_sum += e->bytes;
		t->last_time = base + e->time_delta;
	}
}

/* Framework records per slab: FW events in slabs holding nothing else, in
   time order, under the caller's tid; stacks and notes elsewhere. */
struct fw_tally {
	int fw_slabs, mixed_slabs, unordered, wrong_tid, stacks, infos;
	uint64_t events, first_time, last_time;
	uint32_t last_stack_nframes;
};

#define MAX_SLABS 256
static struct { int fw, other; uint32_t tid; uint64_t last; } per_slab[MAX_SLABS];

static void fw_cb(const struct mt_head *hd, const char *rec, uint64_t base, void *arg)
{
	struct fw_tally *t = arg;

	if (cur_slab >= MAX_SLABS)
		return;
	if (hd->type == MT_REC_FW_EVENT) {
		uint64_t time = base + ((const struct mt_fw_event *)rec)->time_delta;
		if (time < per_slab[cur_slab].last)
			t->unordered++;
		if (!t->events)
			t->first_time = time;
		per_slab[cur_slab].last = t->last_time = time;
		t->events++;
		per_slab[cur_slab].fw++;
		per_slab[cur_slab].tid = cur_tid;
	} else {
		per_slab[cur_slab].other++;
	}
	if (hd->type == MT_REC_FW_STACK) {
		t->stacks++;
		t->last_stack_nframes = ((const struct mt_fw_stack *)rec)->nframes;
	}
	t->infos += hd->type == MT_REC_FW_INFO;
}

/* (FW events are compact records in format 2: walk() decodes them.) */
static void fw_count(struct fw_tally *t, uint32_t tid)
{
	memset(t, 0, sizeof *t);
	memset(per_slab, 0, sizeof per_slab);
	walk(fw_cb, t);
	for (int k = 0; k < MAX_SLABS; k++)
		if (per_slab[k].fw) {
			t->fw_slabs++;
			t->mixed_slabs += per_slab[k].other > 0;
			t->wrong_tid += per_slab[k].tid != tid;
		}
}

/* Packs one frame as memtrace_fw_stack() takes it. */
static size_t pack_frame(unsigned char *out, size_t at, uint32_t line, const char *file_name,
			 const char *func)
{
	struct mt_fw_frame f = { line, (uint16_t)strlen(file_name), (uint16_t)strlen(func) };

	memcpy(out + at, &f, sizeof f);
	memcpy(out + at + sizeof f, file_name, f.file_len);
	memcpy(out + at + sizeof f + f.file_len, func, f.func_len);
	return at + sizeof f + f.file_len + f.func_len;
}

/*
 * Linked into this test, the recorder's "own frames" are the whole
 * executable, and up to 16 leading ones are dropped. So two stacks differ
 * here only by depth: a recursion deeper than 16 frames makes the other.
 */
static __attribute__((noinline)) uint32_t site_a(struct mt_thread *t) { return mt_stack_capture(t); }
static __attribute__((noinline)) uint32_t site_b(struct mt_thread *t, int n)
{
	uint32_t id = n ? site_b(t, n - 1) : mt_stack_capture(t);
	__asm__ volatile("" ::: "memory");   /* no tail call */
	return id;
}

/* --- compact events: round trip, and slab tails of ended threads -------- */

struct want { int cls, kind, device, api; uint64_t time, addr, bytes; uint32_t stack; int result;
	      int ex; uint64_t x[2]; };
static struct want wants[16];
static int nwants;
static uint64_t rt_base;

struct got { struct mt_event_ex ev; uint64_t time; uint32_t tid; };
static struct got gots[4096];
static int ngots, nowners;
static uint32_t only_tid;

static void collect(const struct mt_head *h, const char *rec, uint64_t base, void *arg)
{
	(void)arg;
	if (h->type == MT_REC_OWNER)
		nowners++;
	if (h->type < MT_REC_ALLOC || h->type > MT_REC_FREE_EX || ngots == 4096)
		return;
	if (only_tid && cur_tid != only_tid)
		return;
	if (!only_tid && ((const struct mt_event *)rec)->stack_id != 9 &&
	    ((const struct mt_event *)rec)->stack_id != 10)
		return;     /* only the short threads' */
	memset(&gots[ngots], 0, sizeof gots[ngots]);
	memcpy(&gots[ngots].ev, rec, h->type >= MT_REC_ALLOC_EX ? sizeof(struct mt_event_ex) :
	       sizeof(struct mt_event));
	gots[ngots].time = base + ((const struct mt_event *)rec)->time_delta;
	gots[ngots++].tid = cur_tid;
}

static void *roundtrip_thread(void *arg)
{
	struct mt_thread *t = mt_thread();
	uint64_t now = mt_now();

	*(uint32_t *)arg = (uint32_t)syscall(SYS_gettid);
	rt_base = now;
	struct want w[] = {
		{ MT_CT_ALLOC, MT_KIND_DEVICE | MT_KIND_RUNTIME, 0, MT_API_cudaMalloc, now, 0x7ffff000, 1, 1, 0, 0, { 0, 0 } },
		/* back in time, address going down, a free without bytes */
		{ MT_CT_FREE, MT_KIND_DEVICE, -1, MT_API_cuMemFree_v2, now - 1000, 0x1000, 0, 2, 0, 0, { 0, 0 } },
		/* 2^40 ns later, every field at its largest */
		{ MT_CT_ALLOC, MT_KIND_ASYNC, 127, 0xffff, now + (1ull << 40), UINT64_MAX, UINT64_MAX,
		  UINT32_MAX, 0xffff, 1, { UINT64_MAX, 0 } },
		/* and from there back to 0 */
		{ MT_CT_ALLOC, MT_KIND_ARRAY | MT_KIND_ESTIMATED | MT_KIND_RUNTIME, -128, 0, now, 0, 0, 0, 2, 0, { 0, 0 } },
		{ MT_CT_FREE, MT_KIND_VMM_MAP, 3, MT_API_cuMemUnmap, now + 1, 0xdead0000, 1ull << 50, 2, 0, 1, { 1, 2 } },
		/* the same x1, x2, kind, device, api and stack as the last */
		{ MT_CT_FREE, MT_KIND_VMM_MAP, 3, MT_API_cuMemUnmap, now + 1, 0xdead0000, 7, 2, 0, 1, { 1, 2 } },
		{ MT_CT_FREE, MT_KIND_VMM_MAP, 3, MT_API_cuMemUnmap, now + 2, 0xdead0000, 7, 2, 1, 1, { 1, 3 } },
		/* the first alloc's kind, device, api and stack again */
		{ MT_CT_ALLOC, MT_KIND_DEVICE | MT_KIND_RUNTIME, 0, MT_API_cudaMalloc, now + 3, 0x7ffff000, 4096, 1, 0, 0, { 0, 0 } },
	};
	/* A slab of its own first: a young thread's events would go to the
	   shared young slabs, split between them where time goes back. */
	mt_note(t, "a slab of its own");
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		if (i == 3)
			mt_note(t, "a classic record between compact ones");
		mt_write_event(t, w[i].cls, w[i].kind, w[i].device, w[i].api, w[i].time, w[i].addr,
			       w[i].bytes, w[i].stack, w[i].result, w[i].ex ? w[i].x : NULL);
		wants[i] = w[i];
	}
	nwants = (int)(sizeof w / sizeof w[0]);
	return NULL;
}

static uint32_t short_tids[50];

static void *short_thread(void *arg)
{
	struct mt_thread *t = mt_thread();
	long i = (long)arg;

	short_tids[i] = (uint32_t)syscall(SYS_gettid);
	mt_write_event(t, MT_CT_ALLOC, MT_KIND_DEVICE, 0, MT_API_cuMemAlloc_v2, mt_now(),
		       0x5000, 4096 * (uint64_t)(i + 1), 9, 0, NULL);
	mt_write_event(t, MT_CT_FREE, MT_KIND_DEVICE, -1, MT_API_cuMemFree_v2, mt_now(), 0x5000, 0, 10,
		       0, NULL);
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/memtrace-unit.XXXXXX", path[256];
	struct tally tally = { 0 };

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/w.bin", dir);
	setenv("MEMTRACE_OUTPUT", path, 1);
	setenv("MEMTRACE_DEPTH", "0", 1);
	mt_config_load();

	TEST("events land in a slab after the process record") {
		struct mt_thread *t = mt_thread();
		CHECK(t != NULL);
		uint64_t now = mt_now();
		mt_event(t, MT_REC_ALLOC, MT_KIND_DEVICE, 0, MT_API_cuMemAlloc_v2, now, 0x1000, 4096, 0, NULL);
		mt_event(t, MT_REC_ALLOC, MT_KIND_DEVICE, 1, MT_API_cudaMalloc, now + 10, 0x2000, 8192, 0, NULL);
		mt_event(t, MT_REC_FREE, MT_KIND_DEVICE, -1, MT_API_cuMemFree_v2, now + 20, 0x1000, 0, 0, NULL);
		/* 5 s later: the 32-bit delta overflows, a time base follows */
		mt_event(t, MT_REC_ALLOC, MT_KIND_HOST, -1, MT_API_cuMemHostAlloc, now + 5000000000ull, 0x3000, 100, 0, NULL);
		load(path);
		CHECK(file_size >= 2 * MT_SLAB_SIZE);
		const struct mt_file_header *h = (const void *)file;
		CHECK(memcmp(h->magic, MT_MAGIC, 8) == 0);
		CHECK_EQ_U64(h->version, MT_FORMAT_VERSION);
		CHECK_EQ_U64(h->version_minor, MT_FORMAT_MINOR);
		CHECK_EQ_U64(h->header_size, MT_SLAB_SIZE);
		CHECK_EQ_U64(h->pid, getpid());
		CHECK_EQ_U64(walk(count, &tally), 1);
		CHECK_EQ_U64(tally.first_type, MT_REC_PROCESS);
		CHECK_EQ_U64(tally.process, 1);
		CHECK_EQ_U64(tally.events, 4);
		CHECK_EQ_U64(tally.bytes_sum, 4096 + 8192 + 100);
		/* compact events carry 64-bit time deltas: no time base record */
		CHECK_EQ_U64(tally.timebases, 0);
		CHECK_EQ_U64(tally.last_time, now + 5000000000ull);
		CHECK_EQ_U64(misaligned + malformed, 0);
		CHECK_EQ_U64(tally.stack_ids[0], 0);
	}

	TEST("a thread rolls over to new slabs and loses nothing") {
		struct mt_thread *t = mt_thread();
		uint64_t now = mt_now();
		for (int i = 0; i < 40000; i++)
			mt_event(t, MT_REC_ALLOC, MT_KIND_DEVICE, 0, MT_API_cuMemAlloc_v2, now + (uint64_t)i, 0x10000 + (uint64_t)i, 1, 0, NULL);
		load(path);
		memset(&tally, 0, sizeof tally);
		int slabs = walk(count, &tally);
		CHECK_EQ_U64(tally.events, 40004);
		/* 40000 x 5 B (length, tag, time +1, addr +1, bytes 1) fill
		   3 slabs of 65520 bytes and part of a fourth */
		CHECK_EQ_U64(slabs, 4);
	}

	TEST("a stack is interned once; another call site gets another id") {
		mt_config.depth = 16;
		struct mt_thread *t = mt_thread();
		uint32_t a1 = site_a(t), a2 = site_a(t), b = site_b(t, 24);
		CHECK(a1 != 0);
		CHECK_EQ_U64(a1, a2);
		CHECK(b != a1);
		load(path);
		memset(&tally, 0, sizeof tally);
		walk(count, &tally);
		CHECK_EQ_U64(tally.stacks, 2);
	}

	TEST("framework: stacks interned by their bytes, in the caller's slab") {
		unsigned char a[64], b[64];
		size_t alen = pack_frame(a, 0, 42, "train.py", "step");
		alen = pack_frame(a, alen, 7, "nn.py", "forward");
		size_t blen = pack_frame(b, 0, 42, "train.py", "stop");
		uint32_t ida = memtrace_fw_stack(a, alen, 2);
		CHECK(ida > 0);
		CHECK_EQ_U64(memtrace_fw_stack(a, alen, 2), ida);
		uint32_t idb = memtrace_fw_stack(b, blen, 1);
		CHECK(idb > 0 && idb != ida);
		CHECK_EQ_U64(memtrace_fw_stack(a, alen, 1), 0);       /* bytes left over */
		CHECK_EQ_U64(memtrace_fw_stack(a, alen - 1, 2), 0);   /* frame cut */
		CHECK_EQ_U64(memtrace_fw_stack(a, alen + 1, 2), 0);
		CHECK_EQ_U64(memtrace_fw_info("framework=test\n", 15), 0);
		/* A stack too big for one record keeps its innermost frames that fit. */
		static unsigned char big[40 * 1024];
		char name[1100];
		size_t blen2 = 0;
		memset(name, 'x', sizeof name - 1);
		name[sizeof name - 1] = 0;
		for (int i = 0; i < 30; i++)
			blen2 = pack_frame(big, blen2, (uint32_t)i, name, "f");
		uint32_t idc = memtrace_fw_stack(big, blen2, 30);
		CHECK(idc > 0 && idc != ida && idc != idb);
		load(path);
		struct fw_tally fw;
		fw_count(&fw, (uint32_t)syscall(SYS_gettid));
		CHECK_EQ_U64(fw.stacks, 3);
		CHECK_EQ_U64(fw.infos, 1);
		/* (16384 - 16) / (8 + 1099 + 1) = 14 frames of 1108 bytes */
		CHECK_EQ_U64(fw.last_stack_nframes, 14);
		CHECK_EQ_U64(fw.fw_slabs, 0);
	}

	TEST("framework: events in slabs of their own, in time order; the cost of a batch") {
		enum { N = 10000 };
		static struct mt_fw_input ev[N];
		struct timespec t0, t1;
		uint64_t base = mt_now();
		for (int i = 0; i < N; i++)
			ev[i] = (struct mt_fw_input){ .action = 1 + i % 8, .device = i % 2,
				.time_ns = base + (uint64_t)i * 100, .addr = 0x1000 + (uint64_t)i * 512,
				.size = 512, .stack_id = 1 };
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int n = memtrace_fw_events(ev, N);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK_EQ_U64(n, N);
		double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / N;
		printf("unit %s: memtrace_fw_events: %.1f ns per event (a batch of %d)\n", __FILE__, ns, N);
		CHECK(ns < 2000);
		/* a batch that goes back in time (and an action no record can hold) */
		struct mt_fw_input back[3] = {
			{ .action = MT_FW_ALLOC, .time_ns = base + 50, .addr = 0x99 },
			{ .action = 0, .time_ns = base + 60 },
			{ .action = MT_FW_FREE_REQUESTED, .time_ns = base + 70, .addr = 0x99 },
		};
		CHECK_EQ_U64(memtrace_fw_events(back, 3), 2);
		CHECK_EQ_U64(memtrace_fw_events(back, 0), 0);
		load(path);
		struct fw_tally fw;
		fw_count(&fw, (uint32_t)syscall(SYS_gettid));
		CHECK_EQ_U64(fw.events, N + 2);
		/* compact: length, tag, time +100 (2 bytes), addr +512 (2), a new
		   action and device (3: api 0), size 512 (2) = 11 bytes; 65520 / 11
		   = 5956 events per slab: 2 slabs, then one more for the batch
		   that went back */
		CHECK_EQ_U64(fw.fw_slabs, 3);
		CHECK_EQ_U64(fw.mixed_slabs, 0);
		CHECK_EQ_U64(fw.unordered, 0);
		CHECK_EQ_U64(fw.wrong_tid, 0);
		CHECK_EQ_U64(fw.first_time, base);
		CHECK_EQ_U64(fw.last_time, base + 70);
	}

	TEST("compact events round-trip every field, extreme values included") {
		pthread_t th;
		uint32_t tid = 0;
		CHECK(pthread_create(&th, NULL, roundtrip_thread, &tid) == 0);
		pthread_join(th, NULL);
		load(path);
		ngots = 0;
		only_tid = tid;
		misaligned = malformed = 0;
		walk(collect, NULL);
		only_tid = 0;
		CHECK_EQ_U64(misaligned + malformed, 0);
		CHECK_EQ_U64(ngots, nwants);
		for (int i = 0; i < ngots && i < nwants; i++) {
			const struct mt_event_ex *g = &gots[i].ev;
			const struct want *w = &wants[i];
			CHECK_EQ_U64(g->e.h.type, (w->cls == MT_CT_FREE ? MT_REC_FREE : MT_REC_ALLOC) + (w->ex ? 2 : 0));
			CHECK_EQ_U64(g->e.h.a, (uint8_t)w->kind);
			CHECK_EQ_U64((uint64_t)(int64_t)g->e.h.b, (uint64_t)(int64_t)w->device);
			CHECK_EQ_U64(g->e.api, (uint16_t)w->api);
			CHECK_EQ_U64(gots[i].time, w->time);
			CHECK_EQ_U64(g->e.addr, w->addr);
			CHECK_EQ_U64(g->e.bytes, w->bytes);
			CHECK_EQ_U64(g->e.stack_id, w->stack);
			CHECK_EQ_U64(g->e.result, (uint16_t)w->result);
			CHECK_EQ_U64(g->x1, w->ex ? w->x[0] : 0);
			CHECK_EQ_U64(g->x2, w->ex ? w->x[1] : 0);
		}
	}

	TEST("a thread that ended gives its slab's tail to the next one: no record changes thread") {
		load(path);
		memset(&tally, 0, sizeof tally);
		int slabs = walk(count, &tally);
		for (long i = 0; i < 50; i++) {
			pthread_t th;
			CHECK(pthread_create(&th, NULL, short_thread, (void *)i) == 0);
			pthread_join(th, NULL);
		}
		load(path);
		ngots = nowners = 0;
		walk(collect, NULL);
		/* the 50 threads took over the round-trip thread's tail in turn */
		CHECK_EQ_U64(walk(count, &tally), slabs);
		CHECK_EQ_U64(nowners, 50);
		int found = 0;
		for (int i = 0; i < ngots; i++) {
			const struct mt_event *e = &gots[i].ev.e;
			if (e->stack_id != 9 && e->stack_id != 10)
				continue;
			if (e->stack_id == 9) {
				long k = (long)(e->bytes / 4096) - 1;
				CHECK(k >= 0 && k < 50 && e->bytes % 4096 == 0);
				if (k >= 0 && k < 50) {
					CHECK_EQ_U64(gots[i].tid, short_tids[k]);
					/* its free follows it, under the same thread */
					CHECK(i + 1 < ngots && gots[i + 1].ev.e.stack_id == 10 &&
					      gots[i + 1].tid == short_tids[k]);
				}
			}
			found++;
		}
		CHECK_EQ_U64(found, 100);
	}

	TEST("at exit: the exit record last, then the file cut after the last slab") {
		struct mt_thread *t = mt_thread();
		uint64_t before = mt_now();
		mt_writer_close(t, MT_EXIT_EXIT, 3);
		uint64_t after = mt_now();
		struct stat st;
		CHECK(stat(path, &st) == 0);
		CHECK_EQ_U64((uint64_t)st.st_size % MT_SLAB_SIZE, 0);
		CHECK((st.st_mode & 0777) == 0600);
		load(path);
		memset(&tally, 0, sizeof tally);
		walk(count, &tally);
		CHECK_EQ_U64(tally.events, 40004 + 4 + 100);   /* _EX not counted */
		CHECK_EQ_U64(tally.exits, 1);
		CHECK_EQ_U64(tally.last_type, MT_REC_EXIT);
		CHECK_EQ_U64(tally.exit_how, MT_EXIT_EXIT);
		CHECK_EQ_U64(tally.exit_status, 3);
		CHECK(tally.exit_time >= before && tally.exit_time <= after);
	}

	TEST("after the end nothing more is recorded, and no second exit record") {
		struct mt_thread *t = &(struct mt_thread){ 0 };
		mt_event(t, MT_REC_ALLOC, MT_KIND_DEVICE, 0, MT_API_cuMemAlloc_v2, mt_now(), 0x9000, 1, 0, NULL);
		mt_writer_close(t, MT_EXIT__EXIT, 5);
		CHECK(mt_thread() == NULL);
		load(path);
		memset(&tally, 0, sizeof tally);
		walk(count, &tally);
		CHECK_EQ_U64(tally.events, 40004 + 4 + 100);   /* _EX not counted */
		CHECK_EQ_U64(tally.exits, 1);
		CHECK_EQ_U64(tally.exit_status, 3);
	}
	TEST("a record in flight at the end (a signal handler called _exit): the exit record in a new slab") {
		char path2[300];
		snprintf(path2, sizeof path2, "%s/w.%d.bin", dir, (int)getpid());
		mt_writer_fork_child();     /* a new file, as a forked child gets */
		struct mt_thread *t = mt_thread();
		CHECK(t != NULL);
		uint64_t now = mt_now();
		mt_event(t, MT_REC_ALLOC, MT_KIND_DEVICE, 0, MT_API_cuMemAlloc_v2, now, 0x1000, 4096, 0, NULL);
		uint32_t delta;
		struct mt_event *e = mt_writer_reserve(t, sizeof *e, now, &delta);
		CHECK(e != NULL);
		e->addr = 0x2000;           /* body written, head not yet */
		mt_writer_close(t, MT_EXIT__EXIT, 7);
		load(path2);
		memset(&tally, 0, sizeof tally);
		CHECK_EQ_U64(walk(count, &tally), 2);
		CHECK_EQ_U64(tally.events, 1);
		CHECK_EQ_U64(tally.exits, 1);
		CHECK_EQ_U64(tally.exit_how, MT_EXIT__EXIT);
		CHECK_EQ_U64(tally.exit_status, 7);
		CHECK_EQ_U64(file_size, 3 * MT_SLAB_SIZE);
		unlink(path2);
	}
	unlink(path);
	rmdir(dir);
	return test_report(__FILE__);
}
