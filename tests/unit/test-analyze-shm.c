/*
 * test-analyze-shm.c - the shared memory analysis (analyze/model/shm.c) on
 * constructed records: the two PyTorch strategies, leaks, peaks, several
 * processes, failures; and the reader's checks of MT_REC_SHM records.
 * The end-to-end tests (tests/t60x-shm-*.sh) see the module through
 * `memtrace report`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "model/shm.h"
#include "testhelp.h"

#define MiB (1ull << 20)

static struct shm_op ops[256];
static size_t nops;

static void op(int proc, uint64_t t, int kind, int fd, int flags, int err, uint64_t size,
	       uint64_t addr, const char *name)
{
	struct shm_op o = { proc, t, (uint8_t)kind, fd, flags, err, size, addr, (uint32_t)(100 + nops),
			    name, (uint32_t)strlen(name) };
	ops[nops++] = o;
}

#define PROT_RW 3

/* shm_open(O_CREAT|O_EXCL|O_RDWR) + ftruncate + mmap at t, t+1, t+2 */
static void create(int proc, uint64_t t, int fd, uint64_t size, uint64_t addr, const char *name)
{
	op(proc, t, MT_SHM_OPEN, fd, O_CREAT | O_EXCL | O_RDWR, 0, 0, 0, name);
	op(proc, t + 1, MT_SHM_TRUNCATE, fd, 0, 0, size, 0, name);
	op(proc, t + 2, MT_SHM_MMAP, fd, PROT_RW, 0, size, addr, name);
}

static int analyze(struct shm_result *r, int nprocs, const uint64_t *end)
{
	static const uint32_t pids[] = { 1000, 1001, 1002 };
	char err[256];
	int rc = shm_analyze(r, ops, nops, nprocs, pids, end, err, sizeof err);
	if (rc)
		fprintf(stderr, "shm_analyze: %s\n", err);
	nops = 0;
	return rc;
}

/* A one-slab trace holding one shm record; name_len as given. */
static struct trace *shm_trace(uint32_t name_len, uint32_t size, char *err, size_t errlen)
{
	static uint64_t buf[3 * 4096 / 8];
	struct mt_file_header *h = (void *)buf;
	struct mt_slab_header sh = { MT_SLAB_MAGIC, 7, 5000 };
	struct mt_shm *s = (void *)((char *)buf + 4096 + sizeof sh);

	memset(buf, 0, sizeof buf);
	memcpy(h->magic, MT_MAGIC, 8);
	h->version = MT_FORMAT_VERSION;
	h->header_size = h->slab_size = 4096;
	h->start_mono_ns = 1000;
	memcpy((char *)buf + 4096, &sh, sizeof sh);
	s->lh.size = size;
	s->time_delta = 25;
	s->fd = 9;
	s->flags = O_CREAT | O_RDWR;
	s->name_len = name_len;
	s->stack_id = 3;
	memcpy(s + 1, "/torch_1_2_3", 12);
	s->lh.h = (struct mt_head){ MT_REC_SHM, 0, MT_SHM_OPEN, 0 };
	return trace_open_buffer(buf, sizeof buf, "shm.bin", err, errlen);
}

int main(void)
{
	struct shm_result r;

	TEST("file_system strategy: named segments, two left behind") {
		create(0, 100, 3, 1 * MiB, 0xa000, "/s0");
		op(0, 103, MT_SHM_MUNMAP, -1, 0, 0, 1 * MiB, 0xa000, "/s0");
		op(0, 104, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/s0");
		create(0, 200, 3, 2 * MiB, 0xb000, "/s1");
		op(0, 204, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/s1");
		create(0, 300, 3, 3 * MiB, 0xc000, "/s2");
		op(0, 304, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/s2");
		op(0, 400, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/s0");
		op(0, 500, MT_SHM_OPEN, 3, O_RDWR, 0, 0, 0, "/s1");   /* attach to our own */
		op(0, 501, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/s1");
		CHECK(analyze(&r, 1, NULL) == 0);
		CHECK_EQ_U64(r.all.created, 3);
		CHECK_EQ_U64(r.all.named, 3);
		CHECK_EQ_U64(r.all.at_once, 0);
		CHECK_EQ_U64(r.all.attached, 0);
		CHECK_EQ_U64(r.all.present, 2);
		CHECK_EQ_U64(r.all.present_bytes, 5 * MiB);
		CHECK_EQ_U64(r.all.peak, 6 * MiB);
		CHECK_EQ_U64(r.all.peak_t, 301);
		CHECK_EQ_U64(r.all.now, 5 * MiB);
		CHECK_EQ_U64(r.nsegs, 3);
		CHECK_EQ_U64(r.segs[2].stack, 100 + 9);     /* the creating open's stack */
		CHECK(r.segs[0].unlinked && !r.segs[1].unlinked);
		CHECK_EQ_U64(r.ops, 16);
		shm_result_free(&r);
	}

	TEST("file_descriptor strategy: unlinked at once, held by descriptor and mapping") {
		char names[4][8];   /* as the trace's strings: alive while r is read */

		for (int i = 0; i < 4; i++) {
			char *name = names[i];
			snprintf(name, sizeof names[i], "/fd%d", i);
			create(0, 100 + 10 * (uint64_t)i, 3 + i, 1 * MiB, 0x10000 * (uint64_t)(i + 1), name);
			op(0, 103 + 10 * (uint64_t)i, MT_SHM_UNLINK, -1, 0, 0, 0, 0, name);
		}
		op(0, 200, MT_SHM_MUNMAP, -1, 0, 0, 1 * MiB, 0x10000, "/fd0");
		op(0, 201, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/fd0");
		op(0, 202, MT_SHM_CLOSE, 4, 0, 0, 0, 0, "/fd1");    /* still mapped */
		CHECK(analyze(&r, 1, (const uint64_t[]){ 1000 }) == 0);
		CHECK_EQ_U64(r.all.created, 4);
		CHECK_EQ_U64(r.all.at_once, 4);
		CHECK_EQ_U64(r.all.named, 0);
		CHECK_EQ_U64(r.all.present, 0);
		CHECK_EQ_U64(r.all.peak, 4 * MiB);
		CHECK_EQ_U64(r.all.peak_t, 131);
		CHECK_EQ_U64(r.all.now, 0);             /* the process ended at 1000 */
		shm_result_free(&r);
	}

	TEST("closed, then unlinked: named; the mapping holds the bytes until munmap") {
		create(0, 100, 3, 4 * MiB, 0xa000, "/late");
		op(0, 103, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/late");
		op(0, 104, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/late");
		create(0, 110, 3, 1 * MiB, 0xb000, "/other");     /* 5 MiB held */
		op(0, 120, MT_SHM_MUNMAP, -1, 0, 0, 4 * MiB, 0xa000, "/late");
		op(0, 121, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/other");
		op(0, 122, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/other");   /* creator fd closed: named */
		CHECK(analyze(&r, 1, (const uint64_t[]){ 1000 }) == 0);
		CHECK_EQ_U64(r.all.named, 2);
		CHECK_EQ_U64(r.all.at_once, 0);
		CHECK_EQ_U64(r.all.peak, 5 * MiB);
		CHECK_EQ_U64(r.all.peak_t, 111);
		CHECK_EQ_U64(r.all.now, 0);
		shm_result_free(&r);
	}

	TEST("workers: per process totals, a name unlinked by another process, merged peak") {
		/* worker 1 leaves two (killed), worker 2 makes one the parent unlinks */
		create(1, 100, 3, 1 * MiB, 0xa000, "/w1a");
		op(1, 103, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/w1a");
		create(1, 110, 3, 2 * MiB, 0xb000, "/w1b");
		op(1, 113, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/w1b");
		create(2, 105, 3, 4 * MiB, 0xa000, "/w2");
		op(2, 108, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/w2");
		op(0, 300, MT_SHM_OPEN, 5, O_RDWR, 0, 0, 0, "/w2");
		op(0, 301, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/w2");
		op(0, 302, MT_SHM_CLOSE, 5, 0, 0, 0, 0, "/w2");
		/* an inherited descriptor closed in a child: matched by nothing, harmless */
		op(2, 109, MT_SHM_CLOSE, 7, 0, 0, 0, 0, "/w1a");
		CHECK(analyze(&r, 3, (const uint64_t[]){ 400, 200, 200 }) == 0);
		CHECK_EQ_U64(r.all.created, 3);
		CHECK_EQ_U64(r.all.present, 2);
		CHECK_EQ_U64(r.all.present_bytes, 3 * MiB);
		CHECK_EQ_U64(r.all.peak, 7 * MiB);
		CHECK_EQ_U64(r.all.peak_t, 111);
		CHECK_EQ_U64(r.per_proc[0].created, 0);
		CHECK_EQ_U64(r.per_proc[1].created, 2);
		CHECK_EQ_U64(r.per_proc[1].present, 2);
		CHECK_EQ_U64(r.per_proc[1].peak, 3 * MiB);
		CHECK_EQ_U64(r.per_proc[2].created, 1);
		CHECK_EQ_U64(r.per_proc[2].present, 0);
		CHECK_EQ_U64(r.per_proc[2].peak, 4 * MiB);
		CHECK_EQ_U64(r.segs[1].unlink_proc, 0);     /* /w2: created second */
		CHECK_EQ_U64(r.pids[1], 1001);
		shm_result_free(&r);
	}

	TEST("attach, failures, fallocate, unknown unlink, same-time order") {
		op(0, 100, MT_SHM_OPEN, 3, O_RDWR, 0, 0, 0, "/theirs");
		op(0, 101, MT_SHM_TRUNCATE, 3, 0, 0, 8 * MiB, 0, "/theirs");
		op(0, 110, MT_SHM_OPEN, -1, O_CREAT | O_EXCL | O_RDWR, EEXIST, 0, 0, "/theirs");
		op(0, 120, MT_SHM_OPEN, 4, O_CREAT | O_RDWR, 0, 0, 0, "/f");
		op(0, 121, MT_SHM_FALLOCATE, 4, 0, ENOSPC, 64 * MiB, 0, "/f");
		op(0, 122, MT_SHM_FALLOCATE, 4, 0, 0, 2 * MiB, 0, "/f");
		op(0, 123, MT_SHM_FALLOCATE, 4, 1, 0, 9 * MiB, 0, "/f");
		op(0, 124, MT_SHM_FALLOCATE, 4, 0, 0, 1 * MiB, 0, "/f");   /* never shrinks */
		op(0, 130, MT_SHM_UNLINK, -1, 0, ENOENT, 0, 0, "/gone");
		op(0, 131, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/never-seen");
		/* same time: close before the open that reuses the number */
		op(0, 140, MT_SHM_CLOSE, 4, 0, 0, 0, 0, "/f");
		op(0, 140, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/f");
		op(0, 140, MT_SHM_OPEN, 4, O_CREAT | O_RDWR, 0, 0, 0, "/f");
		CHECK(analyze(&r, 1, NULL) == 0);
		CHECK_EQ_U64(r.all.attached, 1);
		CHECK_EQ_U64(r.all.created, 2);
		CHECK_EQ_U64(r.all.named, 2);
		CHECK_EQ_U64(r.all.present, 1);
		CHECK_EQ_U64(r.all.peak, 2 * MiB);      /* attached bytes are not ours */
		CHECK_EQ_U64(r.failed[MT_SHM_OPEN], 1);
		CHECK_EQ_U64(r.failed[MT_SHM_FALLOCATE], 1);
		CHECK_EQ_U64(r.failed[MT_SHM_UNLINK], 1);
		CHECK_EQ_U64(r.failed_nospc, 1);
		CHECK_EQ_U64(r.unknown_unlinks, 1);
		CHECK_EQ_U64(r.segs[1].size, 2 * MiB);
		CHECK_EQ_U64(r.segs[1].max_size, 2 * MiB);
		CHECK(r.segs[1].unlinked && !r.segs[2].unlinked);
		shm_result_free(&r);
	}

	TEST("text and JSON sections") {
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		create(0, 1000000000, 3, 3 * MiB, 0xa000, "/torch_\"1\"");
		op(0, 1000000004, MT_SHM_CLOSE, 3, 0, 0, 0, 0, "/torch_\"1\"");
		create(1, 2000000000, 3, 1 * MiB, 0xa000, "/fd");
		op(1, 2000000003, MT_SHM_UNLINK, -1, 0, 0, 0, 0, "/fd");
		op(1, 2000000004, MT_SHM_OPEN, -1, O_CREAT | O_RDWR, ENOSPC, 0, 0, "/x");
		CHECK(analyze(&r, 2, NULL) == 0);
		f = open_memstream(&buf, &len);
		shm_render_text(f, &r, NULL, NULL);
		fclose(f);
		CHECK_EQ_STR(buf,
			"POSIX shared memory (/dev/shm)\n"
			"  segments created: 2 (1 named, 1 unlinked at once)\n"
			"  peak total size: 4.0 MiB at 2.000 s\n"
			"  still present at exit: 1 segment, 3.0 MiB\n"
			"    /torch_\\\"1\\\"  3.0 MiB  pid 1000  created at 1.000 s\n"
			"      stack 100\n"
			"  by process:\n"
			"    pid 1000: 1 created (1 named, 0 unlinked at once), peak 3.0 MiB, 1 present at exit (3.0 MiB)\n"
			"    pid 1001: 1 created (0 named, 1 unlinked at once), peak 1.0 MiB, 0 present at exit (0 B)\n"
			"  failed calls: 1 (1 open), 1 of them out of space (ENOSPC): /dev/shm is full\n");
		free(buf);
		f = open_memstream(&buf, &len);
		shm_render_json(f, &r);
		fclose(f);
		CHECK(strstr(buf, "{\"created\":2,\"named\":1,\"unlinked_at_once\":1,\"attached\":0,"
			      "\"peak_bytes\":4194304,\"peak_time_ns\":2000000001,\"present_at_exit\":1,"
			      "\"present_bytes\":3145728,") == buf);
		CHECK(strstr(buf, "\"segments_present\":[{\"name\":\"/torch_\\\"1\\\"\",\"pid\":1000,"
			      "\"size\":3145728,\"stack\":100,\"created_ns\":1000000000}]") != NULL);
		CHECK(strstr(buf, "\"failed_nospc\":1") != NULL);
		free(buf);
		shm_result_free(&r);
		/* nothing at all without records */
		CHECK(analyze(&r, 1, NULL) == 0);
		f = open_memstream(&buf, &len);
		shm_render_text(f, &r, NULL, NULL);
		fclose(f);
		CHECK_EQ_U64(len, 0);
		free(buf);
		shm_result_free(&r);
	}

	TEST("reader: shm records are checked and decoded") {
		char err[256];
		struct trace *t = shm_trace(12, 64, err, sizeof err);
		struct trace_iter it;
		struct trace_rec rec;
		struct shm_op o;

		CHECK(t != NULL);
		if (t) {
			trace_iter_init(&it, t);
			CHECK(trace_next(&it, &rec) == 1);
			CHECK_EQ_U64(rec.type, MT_REC_SHM);
			CHECK_EQ_U64(rec.time_ns, 5025);
			shm_op_from_rec(&rec, 0, rec.time_ns, &o);
			CHECK_EQ_U64(o.op, MT_SHM_OPEN);
			CHECK_EQ_U64(o.fd, 9);
			CHECK_EQ_U64(o.stack, 3);
			CHECK(o.name_len == 12 && !memcmp(o.name, "/torch_1_2_3", 12));
			CHECK_EQ_STR(trace_type_name(MT_REC_SHM), "shm");
			CHECK_EQ_STR(trace_shm_op_name(MT_SHM_MUNMAP), "munmap");
			trace_close(t);
		}
		CHECK(shm_trace(17, 64, err, sizeof err) == NULL);
		CHECK_EQ_STR(err, "'shm.bin': corrupt shm record at offset 0x1010: strings need 65 bytes, the record has 64");
		CHECK(shm_trace(0, 40, err, sizeof err) == NULL);
		CHECK_EQ_STR(err, "'shm.bin': corrupt shm record at offset 0x1010: size 40, at least 48 expected");
	}

	return test_report(__FILE__);
}
