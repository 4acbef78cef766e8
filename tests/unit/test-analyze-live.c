/*
 * test-analyze-live.c - the live path of memtrace top (analyze/live/): a
 * trace file written here in steps, as a recorder would, followed by
 * follow.c. After each step the analysis fed so far has the figures worked
 * out by hand; a poll copies only from the last record read on (never the
 * records before it); a trace with no exit record whose pid is gone is
 * done after one more read. The same records fed through analysis_feed()
 * give what analysis_run() gives, peaks included.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "live/follow.h"
#include "testhelp.h"

#define SLAB 4096
#define MiB (1ull << 20)
#define DEAD_PID 0x7ffffff0u       /* above pid_max: never a live process */

static unsigned char buf[SLAB * 2] __attribute__((aligned(4096)));
static size_t pos = SLAB + sizeof(struct mt_slab_header);

static void ev(int is_free, uint32_t t, uint64_t addr, uint64_t bytes)
{
	struct mt_event e;

	memset(&e, 0, sizeof(e));
	e.h.type = (uint8_t)(is_free ? MT_REC_FREE : MT_REC_ALLOC);
	e.h.size8 = (uint8_t)(sizeof(e) / 8);
	e.h.a = MT_KIND_DEVICE;
	e.h.b = (int8_t)(is_free ? -1 : 0);
	e.time_delta = t;
	e.addr = addr;
	e.bytes = bytes;
	e.api = is_free ? MT_API_cudaFree : MT_API_cudaMalloc;
	memcpy(buf + pos, &e, sizeof(e));
	pos += sizeof(e);
}

/* The process record (first in slab 0): this host, so its pid is looked at. */
static void process(uint32_t pid)
{
	struct mt_process p;
	char host[64] = "";
	size_t hl, size;

	gethostname(host, sizeof(host) - 1);
	hl = strlen(host);
	size = (sizeof(p) + hl + 4 + 7) / 8 * 8;
	memset(&p, 0, sizeof(p));
	p.lh.h.type = MT_REC_PROCESS;
	p.lh.size = (uint32_t)size;
	p.pid = pid;
	p.rank = -1;
	p.hostname_len = (uint16_t)hl;
	p.cmdline_len = 4;
	memcpy(buf + pos, &p, sizeof(p));
	memcpy(buf + pos + sizeof(p), host, hl);
	memcpy(buf + pos + sizeof(p) + hl, "job", 4);
	pos += size;
}

/* Writes buf[from, to) to the file, as the recorder's stores would land. */
static void put(int fd, size_t from, size_t to)
{
	if (pwrite(fd, buf + from, to - from, (off_t)from) != (ssize_t)(to - from))
		abort();
}

static const struct an_dev *dev0(const struct analysis *a)
{
	return &a->devs[a->procs[0].pdev[0]];
}

int main(void)
{
	char dir[] = "/tmp/memtrace-live.XXXXXX", path[64], err[256];
	struct mt_file_header h;
	struct mt_slab_header sh = { MT_SLAB_MAGIC, 7, 1000 };
	struct follow *f;
	struct analysis *a;
	uint64_t fed, late, bytes, before;
	size_t first, last;
	int fd;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.bin", dir);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = MT_FORMAT_VERSION;
	h.version_minor = 1;
	h.header_size = SLAB;
	h.slab_size = SLAB;
	h.pid = DEAD_PID;
	h.start_wall_ns = 1000000;
	h.start_mono_ns = 1000;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + SLAB, &sh, sizeof(sh));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 2 * SLAB))
		return 1;

	TEST("the first records: 1 MiB then 4 MiB") {
		process(DEAD_PID);
		ev(0, 100, 0x1000, 1 * MiB);
		last = pos;
		ev(0, 200, 0x2000, 4 * MiB);
		put(fd, 0, pos);
		f = follow_open(path, NULL, NULL, err, sizeof(err));
		CHECK(f != NULL);
		CHECK_EQ_U64(follow_poll(f, 1, err, sizeof(err)), 2);
		a = follow_analysis(f);
		CHECK(a != NULL);
		CHECK_EQ_U64(dev0(a)->reserved, 5 * MiB);
		CHECK_EQ_U64(dev0(a)->peak.reserved, 5 * MiB);
		follow_counts(f, &fed, &late, &bytes);
		CHECK_EQ_U64(bytes, SLAB);          /* the slab, to its end */
	}

	TEST("a free and 2 MiB more: only the new part is copied") {
		first = pos;
		ev(1, 300, 0x2000, 0);
		ev(0, 400, 0x3000, 2 * MiB);
		put(fd, first, pos);
		before = bytes;
		CHECK_EQ_U64(follow_poll(f, 1, err, sizeof(err)), 2);
		CHECK_EQ_U64(dev0(a)->reserved, 3 * MiB);
		CHECK_EQ_U64(dev0(a)->peak.reserved, 5 * MiB);
		CHECK_EQ_U64(a->events, 4);
		follow_counts(f, &fed, &late, &bytes);
		/* from the start of the last record read (the 4 MiB one) on */
		CHECK_EQ_U64(bytes - before, SLAB - (last - SLAB));
		CHECK_EQ_U64(fed, 4);
		CHECK_EQ_U64(late, 0);
	}

	TEST("no exit record and no such pid: killed, done after one more read") {
		/* the pid never lived: the first poll saw it gone, and the
		   second (the one more read, which still found records) ended
		   the file; a poll after that finds nothing */
		CHECK_EQ_U64(follow_proc(f, 0)->gone, 1);
		CHECK(follow_done(f));
		CHECK_EQ_U64(follow_poll(f, 1, err, sizeof(err)), 0);
		CHECK(follow_done(f));
		CHECK_EQ_U64(follow_proc(f, 0)->gone, 1);
		CHECK_EQ_U64(follow_proc(f, 0)->pid, DEAD_PID);
		CHECK(!strcmp(follow_proc(f, 0)->cmdline, "job"));
		follow_close(f);
	}

	TEST("fed record by record = analysis_run, to the peaks") {
		struct trace *t = trace_open(path, err, sizeof(err));
		struct stream *s1, *s2;
		struct analysis *whole, *fedan;
		struct srec r;

		CHECK(t != NULL);
		s1 = stream_open(&t, 1, err, sizeof(err));
		s2 = stream_open(&t, 1, err, sizeof(err));
		whole = analysis_run(s1, NULL, NULL, NULL, err, sizeof(err));
		fedan = analysis_begin(s2, NULL, NULL, err, sizeof(err));
		CHECK(whole && fedan);
		while (stream_next(s2, &r))
			CHECK_EQ_U64(analysis_feed(fedan, &r), 0);
		/* analysis_run's replay leaves reserved at the peak: its end
		   state is left_at_exit */
		CHECK_EQ_U64(dev0(fedan)->reserved, dev0(whole)->left_at_exit);
		CHECK_EQ_U64(dev0(fedan)->reserved, 3 * MiB);
		CHECK_EQ_U64(dev0(fedan)->peak.reserved, dev0(whole)->peak.reserved);
		CHECK_EQ_U64(dev0(fedan)->peak.time, dev0(whole)->peak.time);
		CHECK_EQ_U64(dev0(fedan)->peak.time, 200);
		CHECK_EQ_U64(fedan->events, whole->events);
		CHECK_EQ_U64(fedan->nsites, whole->nsites);
		analysis_free(fedan);
		analysis_free(whole);
		stream_close(s1);
		stream_close(s2);
		trace_close(t);
	}
	close(fd);
	unlink(path);
	rmdir(dir);
	return test_report(__FILE__);
}
