/*
 * test-analyze-reader.c - the trace reader (analyze/trace/trace-read.c) on
 * synthetic traces built here straight from trace-format.h: decoded values,
 * slab and time rules, damage a killed process leaves (torn record, cut
 * file), malformed input that must be refused with the exact message, and
 * the resident memory of a walk and of a merge (stream.c) over a large one.
 *
 * The builder below writes records the way the recorder does: body first,
 * head last, slab magic last.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/stream.h"
#include "testhelp.h"
#include "trace/trace-read.h"

#define START_MONO 1000000000ull
#define HS 4096             /* header_size of the test traces: their slab size */

/* --- a tiny trace builder ------------------------------------------------ */

struct tb {
	unsigned char *buf;
	size_t size;
	uint32_t slab;
};

struct cursor {
	struct tb *tb;
	size_t pos, end;
};

static void tb_init(struct tb *tb, uint32_t slab, unsigned nslabs)
{
	struct mt_file_header h;

	tb->slab = slab;
	tb->size = (size_t)slab * (nslabs + 1);   /* header_size = slab, as the writer does */
	tb->buf = malloc(tb->size);
	memset(tb->buf, 0, tb->size);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = 1;              /* classic records only: format 1 */
	h.header_size = slab;
	h.slab_size = slab;
	h.pid = 4242;
	h.start_wall_ns = 1700000000000000000ull;
	h.start_mono_ns = START_MONO;
	h.run_id = 77;
	memcpy(tb->buf, &h, sizeof(h));
}

static struct mt_file_header *tb_header(struct tb *tb)
{
	return (struct mt_file_header *)tb->buf;
}

static struct cursor tb_slab(struct tb *tb, unsigned k, uint32_t tid, uint64_t base)
{
	size_t start = (size_t)(k + 1) * tb->slab;
	struct mt_slab_header sh = { 0, tid, base };
	struct cursor c = { tb, start + sizeof(sh), start + tb->slab };
	uint32_t magic = MT_SLAB_MAGIC;

	memcpy(tb->buf + start, &sh, sizeof(sh));
	memcpy(tb->buf + start, &magic, 4);
	return c;
}

/* Appends a record of size bytes (head included); with_head 0 leaves it torn. */
static void put_rec(struct cursor *c, const void *rec, size_t size, int with_head)
{
	if (c->pos + size > c->end) {
		fprintf(stderr, "test builder: record does not fit\n");
		abort();
	}
	memcpy(c->tb->buf + c->pos + 4, (const char *)rec + 4, size - 4);
	if (with_head)
		memcpy(c->tb->buf + c->pos, rec, 4);
	c->pos += size;
}

static struct mt_head head(uint8_t type, uint8_t size8, uint8_t a, int8_t b)
{
	struct mt_head h = { type, size8, a, b };
	return h;
}

static void put_event(struct cursor *c, uint8_t type, uint8_t kind, int8_t dev, uint32_t delta,
		      uint64_t addr, uint64_t bytes, uint16_t api, uint32_t stack)
{
	struct mt_event e;

	memset(&e, 0, sizeof(e));
	e.h = head(type, sizeof(e) / 8, kind, dev);
	e.time_delta = delta;
	e.addr = addr;
	e.bytes = bytes;
	e.api = api;
	e.stack_id = stack;
	put_rec(c, &e, sizeof(e), 1);
}

/* A long record: fixed part + strings, padded to 8. */
static void put_long(struct cursor *c, const void *fixed, size_t fixed_len, const void *str,
		     size_t str_len)
{
	size_t size = (fixed_len + str_len + 7) / 8 * 8;
	unsigned char rec[4096];

	memset(rec, 0, size);
	memcpy(rec, fixed, fixed_len);
	memcpy(rec + fixed_len, str, str_len);
	((struct mt_long_head *)rec)->size = (uint32_t)size;
	put_rec(c, rec, size, 1);
}

static void put_process(struct cursor *c)
{
	static const char s[] = "node1" "a\0b c\0" "/bin/x";
	struct mt_process p;

	memset(&p, 0, sizeof(p));
	p.lh.h = head(MT_REC_PROCESS, 0, 0, -1);
	p.pid = 4242;
	p.ppid = 1;
	p.rank = 3;
	p.local_rank = -1;
	p.world_size = 8;
	p.hostname_len = 5;
	p.cmdline_len = 6;
	p.exe_len = 6;
	put_long(c, &p, sizeof(p), s, 17);
}

static const char *tmp_path(void)
{
	static char path[64];

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/memtrace-reader.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0) {
			perror("mkstemp");
			exit(1);
		}
		close(fd);
	}
	return path;
}

static void write_file(const void *buf, size_t len)
{
	FILE *f = fopen(tmp_path(), "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror("write");
		exit(1);
	}
}

/* Writes len bytes of tb to the temp file and opens it. */
static struct trace *open_tb(struct tb *tb, size_t len, char *err, size_t errlen)
{
	write_file(tb->buf, len);
	return trace_open(tmp_path(), err, errlen);
}

static int next(struct trace_iter *it, struct trace_rec *r)
{
	memset(r, 0, sizeof(*r));
	return trace_next(it, r);
}

/* Expects open to fail with exactly "'PATH': " + msg. */
static void expect_error(struct tb *tb, size_t len, const char *msg)
{
	char err[512], want[512];
	struct trace *t = open_tb(tb, len, err, sizeof(err));

	snprintf(want, sizeof(want), "'%s': %s", tmp_path(), msg);
	CHECK(t == NULL);
	if (t)
		trace_close(t);
	else
		CHECK_EQ_STR(err, want);
	CHECK_EQ_U64(t ? 0 : errno, EINVAL);
}

/* --- the tests ----------------------------------------------------------- */

/*
 * The sample trace: five 4 KiB slabs. Slab 0 (thread 100) holds process,
 * driver, module, stack, alloc, timebase, free; slab 1 (thread 200) alloc_ex,
 * pool, meminfo, two unknown records and two notes; slab 2 was never written;
 * slab 3 (thread 100) one alloc and the exit record (exit(3)); slab 4 has a
 * damaged slab magic. With torn, slab 3 also ends in a torn record. Format
 * 1.1.
 */
static void build_sample(struct tb *tb_out, int torn)
{
	struct tb tb;
	struct cursor c;

	tb_init(&tb, 4096, 5);
	tb_header(&tb)->version_minor = 1;
	c = tb_slab(&tb, 0, 100, START_MONO + 10);
	put_process(&c);
	{
		struct mt_driver d = { head(MT_REC_DRIVER, 2, 0, -1), 13000, 0 };
		put_rec(&c, &d, sizeof(d), 1);
	}
	{
		struct mt_module m;
		const char s[] = "\xab\xcd" "/lib/libcuda.so.1";
		memset(&m, 0, sizeof(m));
		m.lh.h = head(MT_REC_MODULE, 0, 0, -1);
		m.base = 0x7f0000000000;
		m.start = 0x7f0000001000;
		m.end = 0x7f0000009000;
		m.time_delta = 7;
		m.build_id_len = 2;
		m.path_len = 17;
		put_long(&c, &m, sizeof(m), s, 19);
	}
	{
		struct { struct mt_stack s; uint64_t ips[2]; } st;
		memset(&st, 0, sizeof(st));
		st.s.lh.h = head(MT_REC_STACK, 0, 0, 0);
		st.s.id = 1;
		st.s.depth = 2;
		st.ips[0] = 0x401234;
		st.ips[1] = 0x401300;
		put_long(&c, &st, sizeof(st), "", 0);
	}
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE | MT_KIND_RUNTIME, 0, 50, 0x7f1000000000,
		  1 << 20, MT_API_cudaMalloc, 1);
	{
		struct mt_timebase tbr = { head(MT_REC_TIMEBASE, 2, 0, 0), 0, START_MONO + 5000000000ull };
		put_rec(&c, &tbr, sizeof(tbr), 1);
	}
	put_event(&c, MT_REC_FREE, MT_KIND_DEVICE, -1, 5, 0x7f1000000000, 0, MT_API_cuMemFree_v2, 0);

	/* Slab 1: a second thread, every other record type. */
	c = tb_slab(&tb, 1, 200, START_MONO + 100);
	{
		struct mt_event_ex x;
		memset(&x, 0, sizeof(x));
		x.e.h = head(MT_REC_ALLOC_EX, 6, MT_KIND_ASYNC, 1);
		x.e.time_delta = 1;
		x.e.addr = 0x7f2000000000;
		x.e.bytes = 4096;
		x.e.api = MT_API_cuMemAllocAsync;
		x.x1 = 0x5000;
		x.x2 = 0x6000;
		put_rec(&c, &x, sizeof(x), 1);
	}
	{
		struct mt_pool p;
		memset(&p, 0, sizeof(p));
		p.h = head(MT_REC_POOL, 6, 0, 1);
		p.time_delta = 2;
		p.pool = 0x6000;
		p.reserved = 1 << 21;
		p.used = 4096;
		p.api = MT_API_cuMemAllocAsync;
		put_rec(&c, &p, sizeof(p), 1);
	}
	{
		struct mt_meminfo m = { head(MT_REC_MEMINFO, 4, 0, 1), 3, 1000, 2000, 0 };
		put_rec(&c, &m, sizeof(m), 1);
	}
	{
		uint64_t unknown[3] = { 0 };
		struct mt_head h = head(99, 3, 1, 2);
		memcpy(unknown, &h, 4);
		unknown[2] = 0xdeadbeef;
		put_rec(&c, unknown, sizeof(unknown), 1);
	}
	{
		uint64_t unknown_long[4] = { 0 };
		struct mt_long_head lh = { head(100, 0, 0, 0), 32 };
		memcpy(unknown_long, &lh, 8);
		unknown_long[3] = 1;
		put_rec(&c, unknown_long, sizeof(unknown_long), 1);
	}
	{
		struct mt_note n;
		memset(&n, 0, sizeof(n));
		n.lh.h = head(MT_REC_NOTE, 0, 0, 0);
		n.time_delta = 4;
		n.len = 5;
		put_long(&c, &n, sizeof(n), "hello", 5);
		/* what dump must escape: quote, backslash, controls, bad UTF-8 */
		static const char esc[] = "a\"b\\c\td\ne\x01" "f\xffg\xc3\xa9h\xe2\x82";
		n.time_delta = 4;
		n.len = sizeof(esc) - 1;
		put_long(&c, &n, sizeof(n), esc, sizeof(esc) - 1);
	}
	/* Slab 2 claimed but never written: no magic, skipped. Slab 3: thread 100 again. */
	c = tb_slab(&tb, 3, 100, START_MONO + 9000000000ull);
	put_event(&c, MT_REC_ALLOC, MT_KIND_ARRAY | MT_KIND_ESTIMATED, 0, 0, 0x10, 64,
		  MT_API_cuArrayCreate_v2, 0);
	{
		struct mt_exit x = { head(MT_REC_EXIT, 2, MT_EXIT_EXIT, 0), 7, 3, 0 };
		put_rec(&c, &x, sizeof(x), 1);
	}
	/* Slab 4: a slab header with a wrong magic, and a record: skipped. */
	c = tb_slab(&tb, 4, 300, 0);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 0, 0x20, 64, MT_API_cuMemAlloc_v2, 0);
	tb.buf[HS + 4 * 4096] ^= 1;
	if (torn) {
		c = tb_slab(&tb, 3, 100, START_MONO + 9000000000ull);
		c.pos += 32 + 16;
		struct mt_event e;
		memset(&e, 0, sizeof(e));
		e.h = head(MT_REC_FREE, 4, MT_KIND_ARRAY, 0);
		e.addr = 0x10;
		put_rec(&c, &e, sizeof(e), 0);
	}
	*tb_out = tb;
}

static void test_decode(void)
{
	struct tb tb;
	struct trace *t;
	struct trace_iter it;
	struct trace_rec r;
	char err[512];

	build_sample(&tb, 0);

	TEST("decode: open") {
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (!t) {
			fprintf(stderr, "%s\n", err);
			return;
		}
		CHECK_EQ_U64(trace_header(t)->pid, 4242);
		CHECK_EQ_U64(trace_header(t)->run_id, 77);
		CHECK_EQ_U64(trace_stats(t)->records, 16);
		CHECK_EQ_U64(trace_stats(t)->events, 4);
		CHECK_EQ_U64(trace_stats(t)->unknown, 2);
		CHECK_EQ_U64(trace_stats(t)->slabs, 3);
		CHECK_EQ_U64(trace_stats(t)->torn, 0);
		CHECK_EQ_U64(trace_stats(t)->cut_bytes, 0);
		CHECK(trace_warning(t, 0, err, sizeof(err)) == -1);
		CHECK(trace_process(t) != NULL);
	}

	trace_iter_init(&it, t);
	TEST("decode: process") {
		struct trace_bytes host, cmdline, exe;
		const struct mt_process *p;

		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_PROCESS);
		CHECK_EQ_U64(r.size, 64);
		CHECK_EQ_U64(r.tid, 100);
		CHECK_EQ_U64(r.time_ns, START_MONO + 10);
		CHECK_EQ_U64(r.offset, HS + 16);
		CHECK(r.p == trace_process(t));
		p = r.p;
		CHECK_EQ_U64(p->pid, 4242);
		CHECK_EQ_U64(p->rank, 3);
		CHECK(p->local_rank == -1);
		CHECK_EQ_U64(p->world_size, 8);
		trace_process_strings(p, &host, &cmdline, &exe);
		CHECK(host.len == 5 && !memcmp(host.p, "node1", 5));
		CHECK(cmdline.len == 6 && !memcmp(cmdline.p, "a\0b c\0", 6));
		CHECK(exe.len == 6 && !memcmp(exe.p, "/bin/x", 6));
	}
	TEST("decode: driver, module, stack") {
		struct trace_bytes id, path;
		const struct mt_module *m;
		const struct mt_stack *s;

		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_DRIVER);
		CHECK_EQ_U64(((const struct mt_driver *)r.p)->driver_version, 13000);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_MODULE);
		CHECK_EQ_U64(r.time_ns, START_MONO + 17);
		m = r.p;
		CHECK_EQ_U64(m->start, 0x7f0000001000);
		trace_module_strings(m, &id, &path);
		CHECK(id.len == 2 && !memcmp(id.p, "\xab\xcd", 2));
		CHECK(path.len == 17 && !memcmp(path.p, "/lib/libcuda.so.1", 17));
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_STACK);
		s = r.p;
		CHECK_EQ_U64(s->id, 1);
		CHECK_EQ_U64(s->depth, 2);
		CHECK_EQ_U64(s->ips[1], 0x401300);
	}
	TEST("decode: events and timebase") {
		const struct mt_event *e;

		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_ALLOC);
		CHECK_EQ_U64(r.time_ns, START_MONO + 60);
		e = r.p;
		CHECK_EQ_U64(e->h.a, MT_KIND_DEVICE | MT_KIND_RUNTIME);
		CHECK_EQ_U64(e->h.b, 0);
		CHECK_EQ_U64(e->addr, 0x7f1000000000);
		CHECK_EQ_U64(e->bytes, 1 << 20);
		CHECK_EQ_U64(e->api, MT_API_cudaMalloc);
		CHECK_EQ_U64(e->stack_id, 1);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_TIMEBASE);
		CHECK_EQ_U64(r.time_ns, START_MONO + 5000000000ull);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_FREE);
		CHECK_EQ_U64(r.time_ns, START_MONO + 5000000005ull);
		CHECK_EQ_U64(((const struct mt_event *)r.p)->h.b, -1);
	}
	TEST("decode: second slab, second thread") {
		const struct mt_event_ex *x;

		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_ALLOC_EX);
		CHECK_EQ_U64(r.tid, 200);
		CHECK_EQ_U64(r.time_ns, START_MONO + 101);
		CHECK_EQ_U64(r.offset, HS + 4096 + 16);
		x = r.p;
		CHECK_EQ_U64(x->x1, 0x5000);
		CHECK_EQ_U64(x->x2, 0x6000);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_POOL);
		CHECK_EQ_U64(r.time_ns, START_MONO + 102);
		CHECK_EQ_U64(((const struct mt_pool *)r.p)->reserved, 1 << 21);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_MEMINFO);
		CHECK_EQ_U64(r.time_ns, START_MONO + 103);
		CHECK_EQ_U64(((const struct mt_meminfo *)r.p)->total_bytes, 2000);
	}
	TEST("decode: unknown types are skipped by size") {
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, 99);
		CHECK_EQ_U64(r.size, 24);
		CHECK_EQ_U64(r.time_ns, START_MONO + 100);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, 100);
		CHECK_EQ_U64(r.size, 32);
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_NOTE);
		CHECK_EQ_U64(r.time_ns, START_MONO + 104);
		struct trace_bytes n = trace_note_text(r.p);
		CHECK(n.len == 5 && !memcmp(n.p, "hello", 5));
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_NOTE);
		CHECK_EQ_U64(trace_note_text(r.p).len, 18);
	}
	TEST("decode: unwritten slab skipped, later slab read") {
		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_ALLOC);
		CHECK_EQ_U64(r.tid, 100);
		CHECK_EQ_U64(r.time_ns, START_MONO + 9000000000ull);
		CHECK_EQ_U64(((const struct mt_event *)r.p)->h.a, MT_KIND_ARRAY | MT_KIND_ESTIMATED);
	}
	TEST("decode: the exit record, last") {
		struct trace_exit x;

		CHECK(next(&it, &r) == 1);
		CHECK_EQ_U64(r.type, MT_REC_EXIT);
		CHECK_EQ_U64(r.size, 16);
		CHECK_EQ_U64(r.time_ns, START_MONO + 9000000007ull);
		CHECK(next(&it, &r) == 0);
		CHECK(next(&it, &r) == 0);
		trace_exit(t, &x);
		CHECK_EQ_U64(x.recorded, 1);
		CHECK_EQ_U64(x.promised, 1);
		CHECK_EQ_U64(x.how, MT_EXIT_EXIT);
		CHECK_EQ_U64(x.status, 3);
		CHECK_EQ_U64(x.time_ns, START_MONO + 9000000007ull);
		CHECK_EQ_U64(x.tid, 100);
	}
	TEST("decode: walk twice") {
		unsigned n = 0;

		trace_iter_init(&it, t);
		while (next(&it, &r))
			n++;
		CHECK_EQ_U64(n, 16);
	}
	TEST("decode: same from a buffer") {
		struct trace *b = trace_open_buffer(tb.buf, tb.size, "mem", err, sizeof(err));

		CHECK(b != NULL);
		if (b) {
			CHECK_EQ_U64(trace_stats(b)->records, 16);
			CHECK_EQ_STR(trace_path(b), "mem");
			trace_close(b);
		}
	}
	trace_close(t);
	free(tb.buf);
}

static void test_damage(void)
{
	struct tb tb;
	struct cursor c;
	struct trace *t;
	struct trace_iter it;
	struct trace_rec r;
	char err[512], want[512];

	TEST("torn record: loads what is before it, warns once") {
		tb_init(&tb, 4096, 2);
		c = tb_slab(&tb, 0, 1, START_MONO);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x100, 10, MT_API_cuMemAlloc_v2, 0);
		{
			struct mt_event e;
			memset(&e, 0, sizeof(e));
			e.h = head(MT_REC_ALLOC, 4, MT_KIND_DEVICE, 0);
			e.addr = 0x200;
			put_rec(&c, &e, sizeof(e), 0);
		}
		c = tb_slab(&tb, 1, 2, START_MONO);
		put_event(&c, MT_REC_FREE, MT_KIND_DEVICE, 0, 1, 0x100, 0, MT_API_cuMemFree_v2, 0);
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			CHECK_EQ_U64(trace_stats(t)->records, 2);
			CHECK_EQ_U64(trace_stats(t)->torn, 1);
			CHECK(trace_warning(t, 0, err, sizeof(err)) == 0);
			snprintf(want, sizeof(want),
				 "'%s': 1 torn record skipped (the process was killed while writing)",
				 tmp_path());
			CHECK_EQ_STR(err, want);
			CHECK(trace_warning(t, 1, err, sizeof(err)) == -1);
			trace_iter_init(&it, t);
			CHECK(next(&it, &r) == 1);
			CHECK_EQ_U64(((const struct mt_event *)r.p)->addr, 0x100);
			CHECK(next(&it, &r) == 1);
			CHECK_EQ_U64(r.type, MT_REC_FREE);
			CHECK(next(&it, &r) == 0);
			trace_close(t);
		}
		free(tb.buf);
	}

	TEST("truncated: a cut slab loads its whole records") {
		tb_init(&tb, 4096, 2);
		c = tb_slab(&tb, 0, 1, START_MONO);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x100, 10, MT_API_cuMemAlloc_v2, 0);
		c = tb_slab(&tb, 1, 2, START_MONO);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 2, 0x200, 10, MT_API_cuMemAlloc_v2, 0);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 3, 0x300, 10, MT_API_cuMemAlloc_v2, 0);
		/* cut in the middle of the third event */
		t = open_tb(&tb, HS + 4096 + 16 + 32 + 20, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			CHECK_EQ_U64(trace_stats(t)->records, 2);
			CHECK_EQ_U64(trace_stats(t)->cut_bytes, 68);
			CHECK_EQ_U64(trace_stats(t)->torn, 0);
			CHECK(trace_warning(t, 0, err, sizeof(err)) == 0);
			snprintf(want, sizeof(want), "'%s': truncated: the last slab has 68 of 4096 bytes; "
				 "loaded the records before the cut", tmp_path());
			CHECK_EQ_STR(err, want);
			trace_close(t);
		}
		/* cut inside a record head, and inside the slab header */
		t = open_tb(&tb, HS + 4096 + 16 + 32 + 6, err, sizeof(err));
		CHECK(t != NULL && trace_stats(t)->records == 2);
		trace_close(t);
		t = open_tb(&tb, HS + 4096 + 10, err, sizeof(err));
		CHECK(t != NULL && trace_stats(t)->records == 1 && trace_stats(t)->slabs == 1);
		trace_close(t);
		/* a header and no slab at all: valid, but it holds no records,
		   which the recorder never leaves: warned */
		t = open_tb(&tb, HS, err, sizeof(err));
		CHECK(t != NULL && trace_stats(t)->records == 0 && !trace_stats(t)->truncated);
		if (t) {
			CHECK(trace_warning(t, 0, err, sizeof(err)) == 0);
			snprintf(want, sizeof(want), "'%s': holds no records: cut or never written",
				 tmp_path());
			CHECK_EQ_STR(err, want);
			CHECK(trace_warning(t, 1, err, sizeof(err)) == -1);
		}
		trace_close(t);
		/* only the 64-byte header: killed before the first slab existed */
		t = open_tb(&tb, MT_FILE_HEADER_SIZE, err, sizeof(err));
		CHECK(t != NULL && trace_stats(t)->records == 0 && trace_stats(t)->truncated);
		if (t) {
			CHECK(trace_warning(t, 0, err, sizeof(err)) == 0);
			snprintf(want, sizeof(want), "'%s': truncated before the first slab (64 of 4096 "
				 "header bytes); holds no records: cut or never written", tmp_path());
			CHECK_EQ_STR(err, want);
			CHECK(trace_warning(t, 1, err, sizeof(err)) == -1);
		}
		trace_close(t);
		free(tb.buf);
	}
}

static void test_malformed(void)
{
	struct tb tb;
	struct cursor c;
	char err[512], want[512];
	struct trace *t;
	int e;

	tb_init(&tb, 4096, 1);
	c = tb_slab(&tb, 0, 1, START_MONO);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x100, 10, MT_API_cuMemAlloc_v2, 0);

	TEST("file header") {
		struct mt_file_header *h = tb_header(&tb);

		expect_error(&tb, 3, "not a memtrace trace (bad magic)");
		expect_error(&tb, 40, "truncated trace header (40 of 64 bytes)");
		h->magic[0] = 'X';
		expect_error(&tb, tb.size, "not a memtrace trace (bad magic)");
		h->magic[0] = 'M';
		h->version = 7;
		expect_error(&tb, tb.size, "trace format 7 is newer than this memtrace (reads up to 2)");
		h->version = 0;
		expect_error(&tb, tb.size, "bad trace format version 0");
		h->version = 1;
		h->header_size = 72;
		expect_error(&tb, tb.size, "bad header size 72 (a multiple of 4096 up to 16777216 expected)");
		h->header_size = 0;
		expect_error(&tb, tb.size, "bad header size 0 (a multiple of 4096 up to 16777216 expected)");
		h->header_size = 64;
		expect_error(&tb, tb.size, "bad header size 64 (a multiple of 4096 up to 16777216 expected)");
		h->header_size = 4096;
		h->slab_size = 12288;
		expect_error(&tb, tb.size,
			     "bad slab size 12288 (a power of two from 4096 to 16777216 expected)");
		h->slab_size = 2048;
		expect_error(&tb, tb.size,
			     "bad slab size 2048 (a power of two from 4096 to 16777216 expected)");
		h->slab_size = 32u << 20;
		expect_error(&tb, tb.size,
			     "bad slab size 33554432 (a power of two from 4096 to 16777216 expected)");
		h->slab_size = 4096;
	}

	TEST("empty file, directory, missing file, fifo") {
		write_file("", 0);
		t = trace_open(tmp_path(), err, sizeof(err));
		CHECK(t == NULL);
		snprintf(want, sizeof(want), "'%s': empty file, not a memtrace trace", tmp_path());
		CHECK_EQ_STR(err, want);
		t = trace_open("/", err, sizeof(err));
		e = errno;
		CHECK(t == NULL);
		CHECK_EQ_STR(err, "cannot read '/': Is a directory");
		CHECK_EQ_U64(e, EISDIR);
		t = trace_open("/nonexistent/trace.bin", err, sizeof(err));
		e = errno;
		CHECK(t == NULL);
		CHECK_EQ_STR(err, "cannot open '/nonexistent/trace.bin': No such file or directory");
		CHECK_EQ_U64(e, ENOENT);
		{
			char fifo[80];
			snprintf(fifo, sizeof(fifo), "%s.fifo", tmp_path());
			if (mkfifo(fifo, 0600) == 0) {
				t = trace_open(fifo, err, sizeof(err));
				CHECK(t == NULL);
				snprintf(want, sizeof(want), "cannot read '%s': not a regular file", fifo);
				CHECK_EQ_STR(err, want);
				unlink(fifo);
			}
		}
	}

	const size_t rec0 = HS + 16;
	unsigned char *p = tb.buf + rec0;
	unsigned char saved[64];
	memcpy(saved, p, sizeof(saved));
#define RESTORE() memcpy(p, saved, sizeof(saved))

	TEST("oversized and undersized records") {
		/* a short record running past the slab end, after a long unknown one */
		{
			size_t end = HS + 4096;
			struct mt_long_head fill = { head(100, 0, 0, 0), (uint32_t)(end - 8 - c.pos) };
			memcpy(tb.buf + c.pos, &fill, sizeof(fill));
			memcpy(tb.buf + end - 8, (struct mt_head[]){ head(99, 2, 0, 0) }, 4);
			snprintf(want, sizeof(want),
				 "corrupt record at offset %#zx: size 16 runs past the slab end", end - 8);
			expect_error(&tb, tb.size, want);
			memset(tb.buf + c.pos, 0, end - c.pos);
		}

		/* a long record with a huge size */
		struct mt_long_head lh = { head(MT_REC_NOTE, 0, 0, 0), 0x7ffffff8 };
		memcpy(p, &lh, sizeof(lh));
		expect_error(&tb, tb.size, "corrupt record at offset 0x1010: size 2147483640 runs past the slab end");
		lh.size = 4;
		memcpy(p, &lh, sizeof(lh));
		expect_error(&tb, tb.size, "corrupt record at offset 0x1010: bad size 4");
		lh.size = 20;
		memcpy(p, &lh, sizeof(lh));
		expect_error(&tb, tb.size, "corrupt record at offset 0x1010: bad size 20");
		lh.size = 8;
		memcpy(p, &lh, sizeof(lh));
		expect_error(&tb, tb.size, "corrupt note record at offset 0x1010: size 8, at least 16 expected");
		RESTORE();

		/* an event too small, and one in the long encoding */
		p[1] = 2;
		expect_error(&tb, tb.size, "corrupt alloc record at offset 0x1010: size 16, at least 32 expected");
		p[1] = 0;
		memcpy(p + 4, (uint32_t[]){ 32 }, 4);
		expect_error(&tb, tb.size, "corrupt alloc record at offset 0x1010: long size encoding");
		RESTORE();
		lh.h = head(MT_REC_PROCESS, 5, 0, 0);
		memcpy(p, &lh.h, 4);
		expect_error(&tb, tb.size, "corrupt process record at offset 0x1010: short size encoding");
		RESTORE();

		/* type 0 with a non-zero head */
		p[0] = 0;
		expect_error(&tb, tb.size, "corrupt record at offset 0x1010: type 0");
		RESTORE();
	}

	TEST("string and frame lengths past the record") {
		struct mt_process pr;
		struct mt_note n;
		struct { struct mt_stack s; uint64_t ips[2]; } st;

		memset(&pr, 0, sizeof(pr));
		pr.lh.h = head(MT_REC_PROCESS, 0, 0, 0);
		pr.lh.size = 48;
		pr.hostname_len = 4;
		pr.exe_len = 0xffff;
		pr.cmdline_len = 0xffffffff;
		memcpy(p, &pr, sizeof(pr));
		expect_error(&tb, tb.size, "corrupt process record at offset 0x1010: strings need "
			     "4295032874 bytes, the record has 48");

		memset(&n, 0, sizeof(n));
		n.lh.h = head(MT_REC_NOTE, 0, 0, 0);
		n.lh.size = 24;
		n.len = 9;
		memcpy(p, &n, sizeof(n));
		expect_error(&tb, tb.size, "corrupt note record at offset 0x1010: strings need 25 bytes, "
			     "the record has 24");

		memset(&st, 0, sizeof(st));
		st.s.lh.h = head(MT_REC_STACK, 0, 0, 0);
		st.s.lh.size = 32;
		st.s.id = 1;
		st.s.depth = 0x40000000;
		memcpy(p, &st, sizeof(st));
		expect_error(&tb, tb.size, "corrupt stack record at offset 0x1010: frames need "
			     "8589934608 bytes, the record has 32");
		st.s.depth = 2;
		st.s.id = 0;
		memcpy(p, &st, sizeof(st));
		expect_error(&tb, tb.size, "corrupt stack record at offset 0x1010: id 0");
		RESTORE();

		struct mt_module m;
		memset(&m, 0, sizeof(m));
		m.lh.h = head(MT_REC_MODULE, 0, 0, 0);
		m.lh.size = 48;
		m.build_id_len = 20;
		m.path_len = 1;
		memcpy(p, &m, sizeof(m));
		expect_error(&tb, tb.size, "corrupt module record at offset 0x1010: strings need "
			     "61 bytes, the record has 48");
		RESTORE();
	}

	TEST("still valid after the damage is undone") {
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL && trace_stats(t)->records == 1);
		trace_close(t);
	}
	free(tb.buf);
}

/*
 * Random damage to a valid trace must give a clean open or a clean error,
 * and every record handed out must lie inside the file (run with ASAN=1 to
 * catch a stray read).
 */
static void test_mutations(void)
{
	struct tb tb;
	struct cursor c;
	char err[512];
	unsigned seed = 12345, opened = 0, stray = 0;

	tb_init(&tb, 4096, 3);
	for (unsigned k = 0; k < 3; k++) {
		c = tb_slab(&tb, k, k + 1, START_MONO);
		if (k == 0)
			put_process(&c);
		for (unsigned i = 0; i < 20; i++)
			put_event(&c, MT_REC_ALLOC + i % 2, MT_KIND_DEVICE, 0, i, 0x1000 * i, i, 1, 0);
	}
	/* malloc'd to the exact length, so ASAN sees a read past the end */
	unsigned char *copy = malloc(tb.size);

	TEST("mutations never read out of bounds") {
		for (unsigned n = 0; n < 20000; n++) {
			size_t len = tb.size;
			struct trace *t;

			memcpy(copy, tb.buf, tb.size);
			for (unsigned j = 0, nj = 1 + (unsigned)rand_r(&seed) % 4; j < nj; j++) {
				size_t at = (size_t)rand_r(&seed) % tb.size;
				/* aim at heads and sizes more often than not */
				if (rand_r(&seed) % 2)
					at = (at & ~(size_t)7) + rand_r(&seed) % 8;
				copy[at] = (unsigned char)rand_r(&seed);
			}
			if (rand_r(&seed) % 8 == 0)
				len = (size_t)rand_r(&seed) % tb.size + 1;
			unsigned char *cut = malloc(len);
			memcpy(cut, copy, len);
			t = trace_open_buffer(cut, len, "fuzz", err, sizeof(err));
			if (!t) {
				free(cut);
				continue;
			}
			opened++;
			struct trace_iter it;
			struct trace_rec r;
			trace_iter_init(&it, t);
			while (trace_next(&it, &r)) {
				const unsigned char *rp = r.p;
				if (rp < cut + HS || rp + r.size > cut + len)
					stray++;
			}
			trace_close(t);
			free(cut);
		}
		CHECK_EQ_U64(stray, 0);
		CHECK(opened > 1000);
	}
	free(copy);
	free(tb.buf);
}

/*
 * How the process ended: a trace of format 1.0 promises nothing; one of 1.1
 * without an exit record was killed; two exit records, or one in the wrong
 * size, are refused.
 */
static void test_exit(void)
{
	struct tb tb;
	struct cursor c;
	struct trace *t;
	struct trace_exit x;
	char err[512];

	tb_init(&tb, 4096, 2);
	c = tb_slab(&tb, 0, 1, START_MONO);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x100, 10, MT_API_cuMemAlloc_v2, 0);

	TEST("exit: a format 1.0 trace promises nothing") {
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			memset(&x, 0xff, sizeof(x));
			trace_exit(t, &x);
			CHECK_EQ_U64(x.recorded, 0);
			CHECK_EQ_U64(x.promised, 0);
			CHECK_EQ_U64(x.how, 0);
			CHECK_EQ_U64(x.status, 0);
			CHECK_EQ_U64(x.time_ns, 0);
			trace_close(t);
		}
	}
	TEST("exit: a format 1.1 trace without one: killed") {
		tb_header(&tb)->version_minor = 1;
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			trace_exit(t, &x);
			CHECK_EQ_U64(x.recorded, 0);
			CHECK_EQ_U64(x.promised, 1);
			trace_close(t);
		}
	}
	TEST("exit: _exit(-1) of another thread, in its own slab; a later minor is read") {
		struct mt_exit r = { head(MT_REC_EXIT, 2, MT_EXIT__EXIT, 0), 40, -1, 0 };

		tb_header(&tb)->version_minor = 9;
		c = tb_slab(&tb, 1, 2, START_MONO + 1000);
		put_rec(&c, &r, sizeof(r), 1);
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			trace_exit(t, &x);
			CHECK_EQ_U64(x.recorded, 1);
			CHECK_EQ_U64(x.promised, 1);
			CHECK_EQ_U64(x.how, MT_EXIT__EXIT);
			CHECK(x.status == -1);
			CHECK_EQ_U64(x.time_ns, START_MONO + 1040);
			CHECK_EQ_U64(x.tid, 2);
			CHECK_EQ_U64(trace_stats(t)->records, 2);
			CHECK_EQ_U64(trace_stats(t)->unknown, 0);
			trace_close(t);
		}
	}
	TEST("exit: a second exit record is refused") {
		struct mt_exit r = { head(MT_REC_EXIT, 2, MT_EXIT_EXIT, 0), 50, 0, 0 };

		put_rec(&c, &r, sizeof(r), 1);
		expect_error(&tb, tb.size, "corrupt exit record at offset 0x2020: a second exit record");
	}
	TEST("exit: the wrong size or encoding is refused") {
		uint64_t small = 0;
		struct mt_head h = head(MT_REC_EXIT, 1, MT_EXIT_EXIT, 0);

		c = tb_slab(&tb, 1, 2, START_MONO + 1000);
		memset(tb.buf + c.pos, 0, 64);
		memcpy(&small, &h, 4);
		put_rec(&c, &small, sizeof(small), 1);
		expect_error(&tb, tb.size, "corrupt exit record at offset 0x2010: size 8, at least 16 expected");
		c = tb_slab(&tb, 1, 2, START_MONO + 1000);
		memset(tb.buf + c.pos, 0, 64);
		{
			struct { struct mt_long_head lh; uint64_t pad; } l = { { head(MT_REC_EXIT, 0, 1, 0), 16 }, 0 };
			put_rec(&c, &l, sizeof(l), 1);
		}
		expect_error(&tb, tb.size, "corrupt exit record at offset 0x2010: long size encoding");
	}
	free(tb.buf);
}

static void test_names(void)
{
	TEST("names") {
		CHECK_EQ_STR(trace_api_name(MT_API_cudaMalloc), "cudaMalloc");
		CHECK_EQ_STR(trace_api_name(MT_API_cuMemGetInfo_v2), "cuMemGetInfo_v2");
		CHECK_EQ_STR(trace_api_name(0), "unknown");
		CHECK(trace_api_name(127) == NULL);
		CHECK(trace_api_name(100000) == NULL);
		CHECK_EQ_STR(trace_kind_name(MT_KIND_HOST_REGISTER), "host_register");
		CHECK_EQ_STR(trace_kind_name(MT_KIND_POOL | MT_KIND_RUNTIME), "pool");
		CHECK_EQ_STR(trace_kind_name(MT_KIND_ARRAY | MT_KIND_ESTIMATED), "array");
		CHECK(trace_kind_name(0) == NULL);
		CHECK(trace_kind_name(13) == NULL);
		CHECK_EQ_STR(trace_type_name(MT_REC_FREE_EX), "free");
		CHECK_EQ_STR(trace_type_name(MT_REC_EXIT), "exit");
		CHECK_EQ_STR(trace_exit_how_name(MT_EXIT_EXIT), "exit");
		CHECK_EQ_STR(trace_exit_how_name(MT_EXIT__EXIT), "_exit");
		CHECK(trace_exit_how_name(0) == NULL);
		CHECK(trace_exit_how_name(3) == NULL);
		CHECK(trace_type_name(0) == NULL);
		CHECK(trace_type_name(200) == NULL);
		CHECK_EQ_STR(trace_type_name(MT_REC_FW_EVENT), "fw_event");
		CHECK_EQ_STR(trace_type_name(MT_REC_FW_STACK), "fw_stack");
		CHECK_EQ_STR(trace_type_name(MT_REC_FW_INFO), "fw_info");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_ALLOC), "alloc");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_FREE_REQUESTED), "free_requested");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_SEGMENT_UNMAP), "segment_unmap");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_OOM), "oom");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_CHECK), "check");
		CHECK_EQ_STR(trace_fw_action_name(MT_FW_PEAKS), "peaks");
		CHECK(trace_fw_action_name(0) == NULL);
		CHECK(trace_fw_action_name(11) == NULL);
	}
}

static void put_module(struct cursor *c, uint32_t delta)
{
	struct mt_module m;
	const char path[] = "/lib/x.so";

	memset(&m, 0, sizeof(m));
	m.lh.h = head(MT_REC_MODULE, 0, 0, -1);
	m.start = 0x7f0000001000;
	m.end = 0x7f0000009000;
	m.time_delta = delta;
	m.path_len = sizeof(path) - 1;
	put_long(c, &m, sizeof(m), path, sizeof(path) - 1);
}

/*
 * The merge orders by the records that change state; the others (here a
 * MODULE read while the allocation after it was being recorded, stamped
 * later than that allocation) come just before the next state record of
 * their slab and keep their own time. Thread 1 allocated at +0, then read
 * two modules (+900, +950); thread 2 allocated at +500 and freed at +600.
 */
static void test_merge_order(void)
{
	struct tb tb;
	struct cursor c;
	struct trace *t;
	struct stream *st;
	struct srec r;
	char err[256], got[512] = "";

	TEST("merge: records written out of time order") {
		tb_init(&tb, 4096, 2);
		c = tb_slab(&tb, 0, 1, START_MONO);
		put_module(&c, 900);
		put_module(&c, 950);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 0, 0x1000, 256, MT_API_cudaMalloc, 0);
		put_module(&c, 970);
		c = tb_slab(&tb, 1, 2, START_MONO);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 500, 0x2000, 256, MT_API_cudaMalloc, 0);
		put_event(&c, MT_REC_FREE, MT_KIND_DEVICE, -1, 600, 0x2000, 0, MT_API_cudaFree, 0);
		t = open_tb(&tb, tb.size, err, sizeof(err));
		free(tb.buf);
		CHECK(t != NULL);
		if (!t)
			break;
		st = stream_open(&t, 1, err, sizeof(err));
		CHECK(st != NULL);
		while (st && stream_next(st, &r)) {
			size_t len = strlen(got);

			snprintf(got + len, sizeof(got) - len, "%s%s@%" PRIu64 "/%u", len ? " " : "",
				 trace_type_name(r.rec.type), r.t, r.rec.tid);
		}
		CHECK_EQ_STR(got, "module@900/1 module@950/1 alloc@0/1 alloc@500/2 free@600/2 "
			     "module@970/1");
		stream_close(st);
		trace_close(t);
	}
}

/*
 * The run starts at the earliest header start or record: a slab whose time
 * base is 1000 ns before its header's start (the first event of a thread
 * whose file another thread created) moves the origin back by 1000 ns.
 */
static void test_origin(void)
{
	struct tb tb;
	struct cursor c;
	struct trace *t;
	struct stream *st;
	struct srec r;
	char err[256];

	TEST("origin: a record before the header's start") {
		tb_init(&tb, 4096, 2);
		c = tb_slab(&tb, 0, 1, START_MONO + 200);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 0, 0x1000, 256, MT_API_cudaMalloc, 0);
		c = tb_slab(&tb, 1, 2, START_MONO - 1000);
		put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 0, 0x2000, 256, MT_API_cudaMalloc, 0);
		t = open_tb(&tb, tb.size, err, sizeof(err));
		free(tb.buf);
		CHECK(t != NULL);
		if (!t)
			break;
		st = stream_open(&t, 1, err, sizeof(err));
		CHECK(st != NULL);
		if (st) {
			CHECK_EQ_U64(stream_origin_wall(st), trace_header(t)->start_wall_ns - 1000);
			CHECK(stream_next(st, &r) == 1);
			CHECK_EQ_U64(r.t, 0);
			CHECK_EQ_U64(r.rec.tid, 2);
			CHECK(stream_next(st, &r) == 1);
			CHECK_EQ_U64(r.t, 1200);
			CHECK_EQ_U64(stream_duration(st), 1200);
			stream_close(st);
		}
		trace_close(t);
	}
}

/* --- framework records (format 1.2) --------------------------------------- */

static void put_fw_event(struct cursor *c, uint8_t action, int8_t dev, uint32_t delta,
			 uint64_t addr, uint64_t size, uint64_t stream, uint64_t x, uint32_t stack)
{
	struct mt_fw_event e;

	memset(&e, 0, sizeof(e));
	e.h = head(MT_REC_FW_EVENT, sizeof(e) / 8, action, dev);
	e.time_delta = delta;
	e.addr = addr;
	e.size = size;
	e.stream = stream;
	e.x = x;
	e.stack_id = stack;
	put_rec(c, &e, sizeof(e), 1);
}

/* Packs frames "file", line, "function", ... as memtrace_fw_stack() takes
   them; returns the packed length. */
static size_t pack_frames(unsigned char *out, unsigned n, const char *const *file,
			  const uint32_t *line, const char *const *func)
{
	size_t len = 0;

	for (unsigned i = 0; i < n; i++) {
		struct mt_fw_frame f = { line[i], (uint16_t)strlen(file[i]), (uint16_t)strlen(func[i]) };
		memcpy(out + len, &f, sizeof(f));
		len += sizeof(f);
		memcpy(out + len, file[i], f.file_len);
		len += f.file_len;
		memcpy(out + len, func[i], f.func_len);
		len += f.func_len;
	}
	return len;
}

static void put_fw_stack(struct cursor *c, uint32_t id, unsigned n, const char *const *file,
			 const uint32_t *line, const char *const *func)
{
	unsigned char frames[1024];
	struct mt_fw_stack s;
	size_t len = pack_frames(frames, n, file, line, func);

	memset(&s, 0, sizeof(s));
	s.lh.h = head(MT_REC_FW_STACK, 0, 0, 0);
	s.id = id;
	s.nframes = n;
	put_long(c, &s, sizeof(s), frames, len);
}

static void put_fw_info(struct cursor *c, uint32_t delta, const char *text)
{
	struct mt_fw_info r;

	memset(&r, 0, sizeof(r));
	r.lh.h = head(MT_REC_FW_INFO, 0, 0, 0);
	r.time_delta = delta;
	r.len = (uint32_t)strlen(text);
	put_long(c, &r, sizeof(r), text, r.len);
}

/*
 * The framework records of a 1.2 trace: thread 7 ran a CUDA allocation at
 * +100 and handed over two stacks and an info note (its own slab, slab 0);
 * its drain wrote the events in a slab of their own (slab 1, tid 7 too),
 * with times before and after the CUDA allocation: segment_alloc +50,
 * alloc +60 (stack 2), free_requested +150, free_completed +170, oom +200.
 */
static void build_fw(struct tb *tb)
{
	static const char *const file[] = { "train.py", "/lib/torch/nn.py" };
	static const char *const func[] = { "step", "forward" };
	static const uint32_t line[] = { 42, 7 };
	struct cursor c;

	tb_init(tb, 4096, 2);
	tb_header(tb)->version_minor = 2;
	c = tb_slab(tb, 0, 7, START_MONO);
	put_process(&c);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE | MT_KIND_RUNTIME, 0, 100, 0x7f0000000000,
		  2 << 20, MT_API_cudaMalloc, 0);
	put_fw_stack(&c, 2, 2, file, line, func);
	put_fw_stack(&c, 1, 1, file + 1, line + 1, func + 1);
	put_fw_info(&c, 120, "framework=torch\nversion=2.11.0\n");
	c = tb_slab(tb, 1, 7, START_MONO + 50);
	put_fw_event(&c, MT_FW_SEGMENT_ALLOC, 0, 0, 0x7f0000000000, 2 << 20, 0, 0, 1);
	put_fw_event(&c, MT_FW_ALLOC, 0, 10, 0x7f0000000000, 512, 0, 0, 2);
	put_fw_event(&c, MT_FW_FREE_REQUESTED, 0, 100, 0x7f0000000000, 512, 0, 0, 2);
	put_fw_event(&c, MT_FW_FREE_COMPLETED, 0, 120, 0x7f0000000000, 512, 0, 0, 2);
	put_fw_event(&c, MT_FW_OOM, 0, 150, 0, 1ull << 40, 0x1234, 4096, 0);
}

static void test_fw(void)
{
	struct tb tb;
	struct trace *t;
	struct trace_iter it;
	struct trace_rec r;
	char err[512];

	build_fw(&tb);
	TEST("fw: stacks by id, frames, info") {
		struct trace_fw_frame f[4];
		struct trace_bytes text;
		uint64_t time;

		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (!t)
			break;
		CHECK_EQ_U64(trace_stats(t)->fw_events, 5);
		CHECK_EQ_U64(trace_stats(t)->events, 1);
		CHECK_EQ_U64(trace_stats(t)->unknown, 0);
		CHECK(trace_fw_stack(t, 0) == NULL);
		CHECK(trace_fw_stack(t, 3) == NULL);
		CHECK(trace_fw_stack(t, 1) != NULL && trace_fw_stack(t, 1)->nframes == 1);
		CHECK_EQ_U64(trace_fw_stack_frames(t, 2, f, 4), 2);
		CHECK_EQ_U64(f[0].file_len, 8);
		CHECK(!memcmp(f[0].file, "train.py", 8));
		CHECK_EQ_U64(f[0].function_len, 4);
		CHECK(!memcmp(f[0].function, "step", 4));
		CHECK_EQ_U64(f[0].line, 42);
		CHECK_EQ_U64(f[1].file_len, 16);
		CHECK(!memcmp(f[1].file, "/lib/torch/nn.py", 16));
		CHECK(!memcmp(f[1].function, "forward", 7));
		CHECK_EQ_U64(f[1].line, 7);
		memset(f, 0, sizeof(f));
		CHECK_EQ_U64(trace_fw_stack_frames(t, 2, f, 1), 2);     /* says how many */
		CHECK_EQ_U64(f[0].line, 42);
		CHECK(f[1].file == NULL);
		CHECK_EQ_U64(trace_fw_stack_frames(t, 1, f, 4), 1);
		CHECK(!memcmp(f[0].function, "forward", 7) && f[0].line == 7);
		CHECK_EQ_U64(trace_fw_stack_frames(t, 9, f, 4), 0);
		CHECK_EQ_U64(trace_fw_ninfo(t), 1);
		CHECK(trace_fw_info(t, 0, &text, &time) == 0);
		CHECK_EQ_U64(text.len, 31);
		CHECK(!memcmp(text.p, "framework=torch\nversion=2.11.0\n", 31));
		CHECK_EQ_U64(time, START_MONO + 120);
		CHECK(trace_fw_info(t, 1, &text, NULL) == -1);
		trace_close(t);
	}

	TEST("fw: decoded records") {
		const struct mt_fw_event *e;

		t = open_tb(&tb, tb.size, err, sizeof(err));
		if (!t)
			break;
		trace_iter_init(&it, t);
		for (int i = 0; i < 6; i++)
			CHECK(next(&it, &r));
		CHECK_EQ_U64(r.type, MT_REC_FW_EVENT);
		CHECK_EQ_U64(r.size, 56);
		CHECK_EQ_U64(r.tid, 7);
		CHECK_EQ_U64(r.time_ns, START_MONO + 50);
		e = r.p;
		CHECK_EQ_U64(e->h.a, MT_FW_SEGMENT_ALLOC);
		CHECK_EQ_U64(e->size, 2 << 20);
		CHECK_EQ_U64(e->stack_id, 1);
		for (int i = 0; i < 4; i++)
			CHECK(next(&it, &r));
		e = r.p;
		CHECK_EQ_U64(e->h.a, MT_FW_OOM);
		CHECK_EQ_U64(r.time_ns, START_MONO + 200);
		CHECK_EQ_U64(e->x, 4096);
		CHECK_EQ_U64(e->stream, 0x1234);
		CHECK(!next(&it, &r));
		trace_close(t);
	}

	/* FW events are state records: merged by their own time, around the
	   CUDA allocation of thread 7's slab. The process record comes just
	   before that allocation, the next state record of its slab; the
	   stacks (no time of their own: the slab's base) and the note follow
	   it, there being no state record after them. */
	TEST("fw: merged by time") {
		struct stream *st;
		struct srec sr;
		char got[512] = "";

		t = open_tb(&tb, tb.size, err, sizeof(err));
		if (!t)
			break;
		st = stream_open(&t, 1, err, sizeof(err));
		CHECK(st != NULL);
		while (st && stream_next(st, &sr)) {
			size_t len = strlen(got);
			const char *what = trace_type_name(sr.rec.type);

			if (sr.rec.type == MT_REC_FW_EVENT)
				what = trace_fw_action_name(((const struct mt_fw_event *)sr.rec.p)->h.a);
			snprintf(got + len, sizeof(got) - len, "%s%s@%" PRIu64, len ? " " : "", what,
				 (uint64_t)(sr.rec.time_ns - START_MONO));
		}
		CHECK_EQ_STR(got, "segment_alloc@50 alloc@60 process@0 alloc@100 fw_stack@0 "
			     "fw_stack@0 fw_info@120 free_requested@150 free_completed@170 oom@200");
		stream_close(st);
		trace_close(t);
	}

	TEST("fw: malformed records are refused") {
		size_t off_stack2, off_stack1, off_info, off_ev;
		struct trace_iter it2;

		t = open_tb(&tb, tb.size, err, sizeof(err));
		if (!t)
			break;
		trace_iter_init(&it2, t);
		next(&it2, &r);
		next(&it2, &r);
		next(&it2, &r);
		off_stack2 = r.offset;
		next(&it2, &r);
		off_stack1 = r.offset;
		next(&it2, &r);
		off_info = r.offset;
		next(&it2, &r);
		off_ev = r.offset;
		trace_close(t);

		unsigned char saved[4096];
		memcpy(saved, tb.buf + HS, sizeof(saved));
		char msg[256];
		struct mt_fw_stack *st2 = (void *)(tb.buf + off_stack2);
		struct mt_fw_stack *st1 = (void *)(tb.buf + off_stack1);

		st1->id = 2;
		snprintf(msg, sizeof(msg), "corrupt fw_stack record at offset %#zx: a second fw_stack "
			 "with id 2", off_stack1);
		expect_error(&tb, tb.size, msg);
		st1->id = 0;
		snprintf(msg, sizeof(msg), "corrupt fw_stack record at offset %#zx: id 0", off_stack1);
		expect_error(&tb, tb.size, msg);
		memcpy(tb.buf + HS, saved, sizeof(saved));
		/* stack 2: 16 + (8 + 8 + 4) + (8 + 16 + 7) = 67 bytes, a 72-byte record */
		st2->nframes = 3;
		snprintf(msg, sizeof(msg), "corrupt fw_stack record at offset %#zx: frames need 75 "
			 "bytes, the record has 72", off_stack2);
		expect_error(&tb, tb.size, msg);
		st2->nframes = 0xffffffff;
		expect_error(&tb, tb.size, msg);
		st2->nframes = 2;
		/* the second frame's function 13 bytes instead of 7 */
		((struct mt_fw_frame *)((unsigned char *)(st2 + 1) + 20))->func_len = 13;
		snprintf(msg, sizeof(msg), "corrupt fw_stack record at offset %#zx: frames need 73 "
			 "bytes, the record has 72", off_stack2);
		expect_error(&tb, tb.size, msg);
		memcpy(tb.buf + HS, saved, sizeof(saved));
		((struct mt_fw_info *)(tb.buf + off_info))->len = 41;
		snprintf(msg, sizeof(msg), "corrupt fw_info record at offset %#zx: strings need 57 "
			 "bytes, the record has 48", off_info);
		expect_error(&tb, tb.size, msg);
		memcpy(tb.buf + HS, saved, sizeof(saved));
		memcpy(saved, tb.buf + HS + 4096, sizeof(saved));
		((struct mt_head *)(tb.buf + off_ev))->a = 0;
		snprintf(msg, sizeof(msg), "corrupt fw_event record at offset %#zx: action 0", off_ev);
		expect_error(&tb, tb.size, msg);
		((struct mt_head *)(tb.buf + off_ev))->a = MT_FW_SEGMENT_ALLOC;
		((struct mt_head *)(tb.buf + off_ev))->size8 = 6;
		snprintf(msg, sizeof(msg), "corrupt fw_event record at offset %#zx: size 48, at least "
			 "56 expected", off_ev);
		expect_error(&tb, tb.size, msg);
		memcpy(tb.buf + HS + 4096, saved, sizeof(saved));
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t)
			trace_close(t);
	}
	free(tb.buf);
}

/* This process's resident file-backed memory in KiB. */
static uint64_t rss_file_kib(void)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "RssFile:", 8))
			kib = strtoull(line + 8, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/*
 * A 16 MiB trace of four threads whose 64 KiB slabs interleave in time:
 * opening it (the check walks every record) and merging it in time order
 * must keep no more than a few slab groups of it in memory, and the merge
 * must hand out every record in order.
 */
static void test_resident(void)
{
	enum { NSLABS = 256, PER_SLAB = (65536 - sizeof(struct mt_slab_header)) / 32 };
	struct tb tb;
	struct trace *t;
	struct stream *st;
	struct srec r;
	char err[256];
	uint64_t base_kib, max_kib, n = 0, last = 0, unordered = 0;

	TEST("resident memory of a walk and a merge") {
		tb_init(&tb, 65536, NSLABS);
		for (unsigned k = 0; k < NSLABS; k++) {
			/* thread 1 + k % 4; its slabs follow each other in time */
			struct cursor c = tb_slab(&tb, k, 1 + k % 4, START_MONO + (k / 4) * 1000000ull);

			for (unsigned i = 0; i < PER_SLAB; i++)
				put_event(&c, i % 2 ? MT_REC_FREE : MT_REC_ALLOC, MT_KIND_DEVICE, 0,
					  i * 100 + k % 4, 0x10000 + i * 256, 256, 1, 0);
		}
		write_file(tb.buf, tb.size);
		free(tb.buf);
		base_kib = rss_file_kib();
		t = trace_open(tmp_path(), err, sizeof(err));
		CHECK(t != NULL);
		if (!t)
			break;
		CHECK_EQ_U64(trace_stats(t)->events, (uint64_t)NSLABS * PER_SLAB);
		CHECK(rss_file_kib() < base_kib + 2048);
		st = stream_open(&t, 1, err, sizeof(err));
		CHECK(st != NULL);
		max_kib = rss_file_kib();
		while (st && stream_next(st, &r)) {
			if (r.t < last)
				unordered++;
			last = r.t;
			if (++n % 4096 == 0 && rss_file_kib() > max_kib)
				max_kib = rss_file_kib();
		}
		CHECK_EQ_U64(n, (uint64_t)NSLABS * PER_SLAB);
		CHECK_EQ_U64(unordered, 0);
		/* 16 MiB of trace; the merge reads slabs of one or two groups */
		CHECK(max_kib < base_kib + 4096);
		stream_close(st);
		trace_close(t);
	}
}

/*
 * Many traces open at once (the ranks of a run): 40 mappings of one 4 MiB
 * trace (64 slabs of one thread), merged together. Their records tie, so
 * the merge moves through all 40 side by side; each trace may keep about
 * the slab it reads in memory (64 KiB, and as much again that the kernel
 * maps around a fault), not the 1 MiB group around it: under 8 MiB of the
 * 160 mapped, where 1 MiB groups kept up to 40.
 */
static void test_resident_many(void)
{
	enum { NT = 100, NSLABS = 64, PER_SLAB = (65536 - sizeof(struct mt_slab_header)) / 32 };
	struct tb tb;
	struct trace *t[NT];
	struct stream *st;
	struct srec r;
	char err[256];
	uint64_t base_kib, max_kib = 0, n = 0;
	int opened = 0;

	TEST("resident memory of a merge of many traces") {
		tb_init(&tb, 65536, NSLABS);
		for (unsigned k = 0; k < NSLABS; k++) {
			struct cursor c = tb_slab(&tb, k, 1, START_MONO + k * 1000000ull);

			for (unsigned i = 0; i < PER_SLAB; i++)
				put_event(&c, i % 2 ? MT_REC_FREE : MT_REC_ALLOC, MT_KIND_DEVICE, 0,
					  i * 100, 0x10000 + i * 256, 256, 1, 0);
		}
		/* written a slab at a time, as the recorder writes: the page
		   cache then holds it in pieces no larger than a slab (one
		   write of 4 MiB may give folios of 2 MiB, mapped whole) */
		write_file(tb.buf, 0);
		for (size_t off = 0; off < tb.size; off += 65536) {
			FILE *f = fopen(tmp_path(), "ab");

			if (!f || fwrite(tb.buf + off, 1, 65536, f) != 65536 || fclose(f) != 0) {
				perror("write");
				exit(1);
			}
		}
		free(tb.buf);
		base_kib = rss_file_kib();
		for (opened = 0; opened < NT; opened++) {
			t[opened] = trace_open(tmp_path(), err, sizeof(err));
			CHECK(t[opened] != NULL);
			if (!t[opened])
				break;
		}
		if (opened < NT)
			break;
		st = stream_open(t, NT, err, sizeof(err));
		CHECK(st != NULL);
		while (st && stream_next(st, &r))
			if (++n % 1024 == 0 && rss_file_kib() > max_kib)
				max_kib = rss_file_kib();
		CHECK_EQ_U64(n, (uint64_t)NT * NSLABS * PER_SLAB);
		/* 100 mappings of the 4 MiB file: resident in the process, the
		   runs of slabs left and not let go of yet (MANY_RESIDENT, 64
		   MiB over all traces), the 100 slabs being read and what is
		   mapped around them, and the test's own pages: 70 MiB when
		   measured. Groups alone (1 MiB a trace) kept 106 MiB. */
		CHECK(max_kib < base_kib + 64 * 1024 + 8 * 1024);
		stream_close(st);
	}
	while (opened-- > 0)
		trace_close(t[opened]);
}

/*
 * test-analyze-reader --write-sample FILE [torn] [run_id=N] [pid=N]: the
 * sample trace, for the tNNN cases; with fw, the framework records' sample
 * of build_fw() instead.
 */
static int write_sample(int argc, char **argv)
{
	struct tb tb;
	FILE *f;
	int torn = 0, fw = 0;

	for (int i = 3; i < argc; i++) {
		torn |= !strcmp(argv[i], "torn");
		fw |= !strcmp(argv[i], "fw");
	}
	if (fw)
		build_fw(&tb);
	else
		build_sample(&tb, torn);
	for (int i = 3; i < argc; i++) {
		if (!strncmp(argv[i], "run_id=", 7))
			tb_header(&tb)->run_id = strtoull(argv[i] + 7, NULL, 10);
		else if (!strncmp(argv[i], "pid=", 4))
			tb_header(&tb)->pid = (uint32_t)strtoul(argv[i] + 4, NULL, 10);
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(tb.buf, 1, tb.size, f) != tb.size || fclose(f) != 0) {
		perror(argv[2]);
		return 1;
	}
	free(tb.buf);
	return 0;
}

/* Format 2: compact records decoded from the bytes docs/trace-format.md
   gives, padding, an owner record, and malformed compact records. */
static void test_compact(void)
{
	static const unsigned char slab[] = {
		/* 0x1010: the worked example's alloc, 18 bytes */
		0x91, 0x00, 0xb8, 0x17, 0x80, 0x80, 0x80, 0x80, 0xc8, 0xce, 0x3f, 0x01, 0x00, 0x02,
		0x80, 0x80, 0x40, 0x03,
		/* 0x1022: a free 100 ns later at the same address, bytes 0, device
		   -1, api 7, stack 4 */
		0x88, 0x41, 0xc8, 0x01, 0x00, 0x01, 0xff, 0x07, 0x04,
		/* 0x102b: padding to 0x1030, then an owner record: tid 32 from
		   START_MONO + 5000 */
		0x80, 0x80, 0x80, 0x80, 0x80,
		MT_REC_OWNER, 2, 0, 0, 32, 0, 0, 0, 0x88, 0xdd, 0x9a, 0x3b, 0, 0, 0, 0,
		/* 0x1040: an alloc_ex 1 ns before the owner's base, at address -1
		   (state starts over: kind, device, api, stack 0), result 2, x1 5,
		   x2 6 */
		0x86, 0x7c, 0x01, 0x01, 0x02, 0x05, 0x06,
	};
	struct trace_iter it;
	struct trace_rec r;
	struct trace *t;
	char err[512];
	struct tb tb;
	struct cursor c;

	TEST("format 2: compact records, padding and an owner record") {
		tb_init(&tb, HS, 1);
		tb_header(&tb)->version = 2;
		c = tb_slab(&tb, 0, 31, START_MONO);
		memcpy(tb.buf + c.pos, slab, sizeof(slab));
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			const struct mt_event *e;
			const struct mt_event_ex *x;

			CHECK_EQ_U64(trace_stats(t)->events, 3);
			CHECK_EQ_U64(trace_stats(t)->torn, 0);
			trace_iter_init(&it, t);
			CHECK(next(&it, &r) == 1);
			e = r.p;
			CHECK_EQ_U64(r.type, MT_REC_ALLOC);
			CHECK_EQ_U64(r.offset, 0x1010);
			CHECK_EQ_U64(r.tid, 31);
			CHECK_EQ_U64(r.time_ns, START_MONO + 1500);
			CHECK_EQ_U64(r.size, sizeof(struct mt_event));
			CHECK_EQ_U64(e->h.a, MT_KIND_DEVICE);
			CHECK_EQ_U64((uint64_t)(int64_t)e->h.b, 0);
			CHECK_EQ_U64(e->addr, 0x7f3a40000000ull);
			CHECK_EQ_U64(e->bytes, 1048576);
			CHECK_EQ_U64(e->stack_id, 3);
			CHECK_EQ_U64(e->api, MT_API_cuMemAlloc_v2);
			CHECK_EQ_U64(e->result, 0);
			CHECK_EQ_U64(e->time_delta, 1500);
			CHECK(next(&it, &r) == 1);
			e = r.p;
			CHECK_EQ_U64(r.type, MT_REC_FREE);
			CHECK_EQ_U64(r.offset, 0x1022);
			CHECK_EQ_U64(r.time_ns, START_MONO + 1600);
			CHECK_EQ_U64(e->addr, 0x7f3a40000000ull);
			CHECK_EQ_U64(e->bytes, 0);
			CHECK_EQ_U64((uint64_t)(int64_t)e->h.b, (uint64_t)-1);
			CHECK_EQ_U64(e->api, MT_API_cuMemFree_v2);
			CHECK_EQ_U64(e->stack_id, 4);
			CHECK(next(&it, &r) == 1);
			CHECK_EQ_U64(r.type, MT_REC_OWNER);
			CHECK_EQ_U64(r.offset, 0x1030);
			CHECK_EQ_U64(r.tid, 32);
			CHECK_EQ_U64(r.time_ns, START_MONO + 5000);
			CHECK(next(&it, &r) == 1);
			x = r.p;
			CHECK_EQ_U64(r.type, MT_REC_ALLOC_EX);
			CHECK_EQ_U64(r.tid, 32);
			CHECK_EQ_U64(r.time_ns, START_MONO + 4999);
			CHECK_EQ_U64(r.size, sizeof(struct mt_event_ex));
			CHECK_EQ_U64(x->e.addr, UINT64_MAX);
			CHECK_EQ_U64(x->e.h.a, 0);
			CHECK_EQ_U64(x->e.api, 0);
			CHECK_EQ_U64(x->e.stack_id, 0);
			CHECK_EQ_U64(x->e.bytes, 0);
			CHECK_EQ_U64(x->e.result, 2);
			CHECK_EQ_U64(x->x1, 5);
			CHECK_EQ_U64(x->x2, 6);
			CHECK(next(&it, &r) == 0);
			trace_close(t);
		}
	}

	TEST("format 2: malformed compact records are refused") {
		unsigned char *p = tb.buf + c.pos;

		p[0x12] = 0x89;         /* the free swallows a padding byte */
		expect_error(&tb, tb.size, "corrupt compact record at offset 0x1022: bytes after its fields");
		p[0x12] = 0x88;
		p[0x1b] = MT_REC_TIMEBASE;      /* a classic record at 0x102b */
		expect_error(&tb, tb.size, "corrupt record at offset 0x102b: not 8-byte aligned");
		p[0x1b] = 0x80;
		p[0] = 0x83;            /* the alloc's time varint never ends */
		p[3] = 0x97;
		expect_error(&tb, tb.size, "corrupt compact record at offset 0x1010: bad varint");
		memset(p, 0, 40);
		/* a long filler up to 0x1fe8, 4 bytes of padding, then a compact
		   record of 128 bytes at 0x1fec: 20 are left in the slab */
		{
			struct mt_long_head fill = { head(100, 0, 0, 0), 0xfd8 };
			memcpy(p, &fill, sizeof(fill));
			memset(p + 0xfd8, 0x80, 4);
			p[0xfdc] = 0xff;
		}
		expect_error(&tb, tb.size, "corrupt compact record at offset 0x1fec: size 128 runs past the slab end");
		free(tb.buf);
	}
}

/* The slab walker follows a slab while it is written: 0 until a record is
   whole and published, then the record; damage is -1 with a message. */
static void test_slab_iter(void)
{
	struct tb tb;
	struct trace_slab_iter si;
	struct trace_rec r;
	struct cursor c;
	const unsigned char *slab;
	size_t second;

	tb_init(&tb, HS, 1);
	slab = tb.buf + HS;
	c = tb_slab(&tb, 0, 31, START_MONO);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 5, 0x1000, 64, MT_API_cuMemAlloc, 0);
	second = c.pos - HS;
	trace_slab_iter_init(&si, slab, 8, 1);
	CHECK(trace_slab_iter_next(&si, &r) == 0);              /* header not there */
	trace_slab_iter_more(&si, 16 + 20);
	CHECK(trace_slab_iter_next(&si, &r) == 0);              /* event cut at 20 of 32 */
	CHECK(si.zero == 0);
	trace_slab_iter_more(&si, HS);
	CHECK(trace_slab_iter_next(&si, &r) == 1);
	CHECK(r.type == MT_REC_ALLOC && r.tid == 31 && r.time_ns == START_MONO + 5);
	CHECK(r.offset == 16 && ((const struct mt_event *)r.p)->bytes == 64);
	CHECK(trace_slab_iter_next(&si, &r) == 0 && si.zero == 1);
	put_event(&c, MT_REC_FREE, MT_KIND_DEVICE, 0, 9, 0x1000, 0, MT_API_cuMemFree, 0);
	CHECK(trace_slab_iter_next(&si, &r) == 1);              /* resumed */
	CHECK(r.type == MT_REC_FREE && r.time_ns == START_MONO + 9 && r.offset == second);
	tb.buf[c.pos + 1] = 4;                                  /* type 0, size 32 */
	CHECK(trace_slab_iter_next(&si, &r) == -1);
	CHECK_EQ_STR(si.err, "corrupt record at offset 0x50: type 0");
	free(tb.buf);
}

/* What trace_open() notes for the merge: the slabs with records, their
   first record, times and first state record; the long records. */
static void test_slab_info(void)
{
	struct tb tb;
	struct trace *t;
	struct trace_rec r;
	struct trace_iter it;
	const struct trace_slab_info *si;
	const void *const *recs;
	char err[256];
	size_t n;
	uint32_t nr;

	build_sample(&tb, 0);
	t = open_tb(&tb, tb.size, err, sizeof(err));
	CHECK(t != NULL);
	if (!t)
		return;
	si = trace_slabs(t, &n);
	CHECK(n == 3);                          /* slabs 0, 1 and 3 */
	CHECK(si[0].first.type == MT_REC_PROCESS && si[0].first.tid == 100);
	CHECK(si[0].first.offset == HS + 16);
	CHECK(si[0].min_t == START_MONO + 10 && si[0].max_t == START_MONO + 5000000005ull);
	CHECK(si[0].due_type == MT_REC_ALLOC && si[0].due_time == START_MONO + 60);
	it = si[0].it;                          /* resumes after the first record */
	CHECK(trace_next_in_slab(&it, &r) == 1 && r.type == MT_REC_DRIVER);
	CHECK(si[1].first.type == MT_REC_ALLOC_EX && si[1].first.tid == 200);
	CHECK(si[1].first.offset == HS + 4096 + 16 && si[1].due_offset == si[1].first.offset);
	CHECK(si[1].min_t == START_MONO + 100 && si[1].max_t == START_MONO + 104);  /* unknown: the base */
	CHECK(si[2].first.type == MT_REC_ALLOC && si[2].first.offset == HS + 3 * 4096 + 16);
	CHECK(si[2].min_t == START_MONO + 9000000000ull && si[2].due_type == MT_REC_ALLOC);
	recs = trace_long_records(t, MT_REC_MODULE, &nr);
	CHECK(nr == 1 && ((const struct mt_module *)recs[0])->end == 0x7f0000009000);
	recs = trace_long_records(t, MT_REC_STACK, &nr);
	CHECK(nr == 1 && ((const struct mt_stack *)recs[0])->depth == 2);
	recs = trace_long_records(t, MT_REC_NOTE, &nr);
	CHECK(nr == 2 && ((const struct mt_note *)recs[0])->len == 5);
	CHECK(trace_long_records(t, MT_REC_ALLOC, &nr) == NULL && nr == 0);
	CHECK(trace_driver(t) && trace_driver(t)->driver_version == 13000);
	CHECK(trace_stats(t)->shm == 0);
	trace_close(t);
	free(tb.buf);
}

/*
 * A trace of 600 slabs of 4 KiB (two 1 MiB groups or more) is checked in
 * two halves on two threads, from slab 256 on: what trace_open() notes and
 * refuses is what one walk in file order would.
 */
static void test_halves(void)
{
	struct tb tb;
	struct cursor c;
	struct trace *t;
	struct trace_rec r;
	struct trace_iter it;
	struct trace_exit x;
	const struct trace_slab_info *si;
	char err[512], msg[256];
	size_t n, exit300, bad400;
	uint32_t nr;
	uint64_t walked = 0;

	tb_init(&tb, 4096, 600);
	c = tb_slab(&tb, 0, 1, START_MONO);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x100, 10, MT_API_cuMemAlloc_v2, 0);
	put_module(&c, 2);
	c = tb_slab(&tb, 300, 2, START_MONO + 1000);
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x200, 20, MT_API_cuMemAlloc_v2, 0);
	put_module(&c, 3);
	exit300 = c.pos;
	{
		struct mt_exit e = { head(MT_REC_EXIT, 2, MT_EXIT_EXIT, 0), 5, 9, 0 };
		put_rec(&c, &e, sizeof(e), 1);
	}
	c = tb_slab(&tb, 599, 3, START_MONO + 2000);
	put_event(&c, MT_REC_FREE, MT_KIND_DEVICE, 0, 1, 0x100, 0, MT_API_cuMemFree_v2, 0);

	TEST("two halves: slabs, long records and the exit of both") {
		t = open_tb(&tb, tb.size, err, sizeof(err));
		CHECK(t != NULL);
		if (t) {
			si = trace_slabs(t, &n);
			CHECK(n == 3);
			CHECK(n == 3 && si[1].first.offset == 301 * 4096 + 16 && si[1].first.tid == 2);
			CHECK(n == 3 && si[2].first.type == MT_REC_FREE && si[2].min_t == START_MONO + 2001);
			it = si[1].it;              /* made in the second half */
			CHECK(trace_next_in_slab(&it, &r) == 1 && r.type == MT_REC_MODULE);
			CHECK(trace_long_records(t, MT_REC_MODULE, &nr) && nr == 2);
			CHECK_EQ_U64(trace_stats(t)->records, 6);
			CHECK_EQ_U64(trace_stats(t)->events, 3);
			trace_exit(t, &x);
			CHECK(x.recorded && x.tid == 2 && x.status == 9);
			trace_iter_init(&it, t);
			while (next(&it, &r))
				walked++;
			CHECK_EQ_U64(walked, 6);
			trace_close(t);
		}
	}
	c = tb_slab(&tb, 10, 4, START_MONO + 500);
	{
		struct mt_exit e = { head(MT_REC_EXIT, 2, MT_EXIT_EXIT, 0), 5, 1, 0 };
		put_rec(&c, &e, sizeof(e), 1);
	}
	TEST("two halves: a second exit record in the second half is refused at its offset") {
		snprintf(msg, sizeof(msg), "corrupt exit record at offset %#zx: a second exit record",
			 exit300);
		expect_error(&tb, tb.size, msg);
	}
	c = tb_slab(&tb, 400, 5, START_MONO + 1500);
	bad400 = c.pos;
	put_event(&c, MT_REC_ALLOC, MT_KIND_DEVICE, 0, 1, 0x300, 30, MT_API_cuMemAlloc_v2, 0);
	tb.buf[c.pos - 32] = 0;                 /* type 0 */
	TEST("two halves: the second exit comes before a bad record after it") {
		expect_error(&tb, tb.size, msg);
	}
	memset(tb.buf + 11 * 4096, 0, 4096);    /* slab 10 gone: one exit left */
	TEST("two halves: a bad record in the second half") {
		snprintf(msg, sizeof(msg), "corrupt record at offset %#zx: type 0", bad400);
		expect_error(&tb, tb.size, msg);
	}
	free(tb.buf);
}

/* The rule for repeated slabs (trace_count_overlaps) on spans set by hand:
   times that overlap, and copies told by their bytes where a span is a
   point (a young slab its thread wrote one event to) or a framework's. */
static void test_overlaps(void)
{
	struct span_case {
		const char *name;
		struct trace_span v[3];
		size_t n;
		uint64_t want;
	} cases[] = {
		{ "overlaps: one slab after the other", { { 7, 0, 0, 1, 5, 0 }, { 7, 0, 0, 6, 9, 0 } }, 2, 0 },
		{ "overlaps: a slab copied", { { 7, 0, 0, 1, 5, 0 }, { 7, 0, 0, 1, 5, 0 } }, 2, 1 },
		{ "overlaps: two threads at one time", { { 7, 0, 0, 1, 5, 0 }, { 8, 0, 0, 1, 5, 0 } }, 2, 0 },
		{ "overlaps: a point after a slab that ends at it", { { 7, 0, 0, 1, 5, 0 }, { 7, 0, 1, 5, 5, 11 } }, 2, 0 },
		{ "overlaps: a point slab copied", { { 7, 0, 1, 5, 5, 11 }, { 7, 0, 0, 1, 4, 0 }, { 7, 0, 1, 5, 5, 11 } }, 3, 1 },
		{ "overlaps: two point slabs at one time, other bytes", { { 7, 0, 1, 5, 5, 11 }, { 7, 0, 1, 5, 5, 12 } }, 2, 0 },
		{ "overlaps: framework batches that overlap", { { 7, 1, 0, 1, 9, 21 }, { 7, 1, 0, 3, 5, 22 } }, 2, 0 },
		{ "overlaps: a framework batch copied", { { 7, 1, 0, 3, 9, 21 }, { 7, 1, 0, 3, 9, 21 } }, 2, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t tid = 0;

		TEST(cases[i].name) {
			CHECK(trace_count_overlaps(cases[i].v, cases[i].n, &tid) == cases[i].want);
			CHECK(tid == (cases[i].want ? 7u : 0u));
		}
	}
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--write-sample"))
		return write_sample(argc, argv);
	test_decode();
	test_damage();
	test_malformed();
	test_mutations();
	test_names();
	test_exit();
	test_resident();
	test_resident_many();
	test_merge_order();
	test_origin();
	test_fw();
	test_slab_iter();
	test_compact();
	test_slab_info();
	test_halves();
	test_overlaps();
	unlink(tmp_path());
	return test_report(__FILE__);
}
