/*
 * fuzz-trace.c - libFuzzer target for everything in memtrace that reads a
 * trace: the validating reader (analyze/trace/trace-read.c), `memtrace dump`, and
 * `memtrace report` with its SQLite loader and analysis.
 *
 * A trace is untrusted input (a file from another user's process, or one
 * damaged by a crash), so the reader promises that trace_open() either
 * refuses a file with one message or hands out records that are safe to read
 * through their structs. Each input is checked three ways:
 *
 *   1. trace_open_buffer() on an 8-byte aligned copy; on success every
 *      record is walked twice (the validation walk and trace_next() must
 *      agree on the count), every accessor is called, and every byte a record
 *      claims (strings, frames, the record body) is read, so ASan sees any
 *      read past the buffer;
 *   2. the same bytes with the file header of a real trace forced in front,
 *      so mutations reach the records instead of dying at the magic check;
 *   3. cmd_dump() on the bytes through a memfd, with stdout on /dev/null:
 *      the printing and escaping code, and trace_open()'s mmap path;
 *   4. cmd_report() on the same file, loading an in-memory SQLite database
 *      (--db :memory:) and printing the text report, then --no-db --json:
 *      the merge, the loader, every metric and both report writers.
 *      (`memtrace plot` runs the same pipeline and then gnuplot, a process
 *      per input: left out.)
 *
 * Any abort() below is a broken promise of the reader, not of the input.
 *
 * Built by `make fuzz` with -fsanitize=fuzzer,address,undefined; seeds are
 * in tests/fuzz/corpus/ (real traces, cut to a small slab size).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "trace/trace-read.h"

static int memfd = -1;
static char memfd_path[64];
static volatile uint64_t sink;

/* Reads n bytes so ASan checks them, without the compiler dropping it. */
static void touch(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++)
		h = h * 31 + s[i];
	sink += h;
}

static void walk_all(struct trace *t)
{
	struct trace_iter it;
	struct trace_rec rec;
	const struct trace_stats *st = trace_stats(t);
	const struct mt_process *proc = trace_process(t);
	char buf[512];
	uint64_t n = 0, events = 0;

	touch(trace_header(t), sizeof(struct mt_file_header));
	touch(trace_path(t), strlen(trace_path(t)));
	for (unsigned i = 0; trace_warning(t, i, buf, sizeof(buf)) == 0; i++)
		touch(buf, strlen(buf));
	if (proc) {
		struct trace_bytes h, c, e;
		trace_process_strings(proc, &h, &c, &e);
		touch(h.p, h.len);
		touch(c.p, c.len);
		touch(e.p, e.len);
	}

	trace_iter_init(&it, t);
	while (trace_next(&it, &rec)) {
		const struct mt_head *hd = rec.p;
		n++;
		touch(rec.p, rec.size);
		sink += rec.time_ns + rec.tid + rec.offset;
		switch (rec.type) {
		case MT_REC_PROCESS: {
			struct trace_bytes h, c, e;
			trace_process_strings(rec.p, &h, &c, &e);
			touch(h.p, h.len);
			touch(c.p, c.len);
			touch(e.p, e.len);
			break;
		}
		case MT_REC_MODULE: {
			struct trace_bytes id, path;
			trace_module_strings(rec.p, &id, &path);
			touch(id.p, id.len);
			touch(path.p, path.len);
			break;
		}
		case MT_REC_STACK: {
			const struct mt_stack *s = rec.p;
			touch(s->ips, (size_t)s->depth * sizeof(s->ips[0]));
			if (s->id == 0)
				abort();        /* the reader promised ids > 0 */
			break;
		}
		case MT_REC_NOTE: {
			struct trace_bytes b = trace_note_text(rec.p);
			touch(b.p, b.len);
			break;
		}
		case MT_REC_SHM: {
			struct trace_bytes b = trace_shm_name(rec.p);
			const char *op = trace_shm_op_name(hd->a);
			touch(b.p, b.len);
			if (op)
				touch(op, strlen(op));
			break;
		}
		case MT_REC_PYCODE: {
			struct trace_bytes f, q, l;
			trace_pycode_strings(rec.p, &f, &q, &l);
			touch(f.p, f.len);
			touch(q.p, q.len);
			touch(l.p, l.len);
			break;
		}
		case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX: {
			const struct mt_event *e = rec.p;
			const char *a = trace_api_name(e->api), *k = trace_kind_name(e->h.a);
			events++;
			if (a)
				touch(a, strlen(a));
			if (k)
				touch(k, strlen(k));
			break;
		}
		}
		if (trace_type_name(hd->type))
			touch(trace_type_name(hd->type), 1);
		if (rec.size % 8 || rec.size < sizeof(struct mt_head))
			abort();
	}
	/* trace_next() walks exactly what trace_open() validated and counted. */
	if (n != st->records || events != st->events)
		abort();
}

static void open_buffer(const uint8_t *data, size_t size)
{
	char err[512];
	/* 8-byte aligned, and exactly size bytes so ASan catches overreads. */
	void *copy = malloc(size ? size : 1);
	struct trace *t;

	if (!copy)
		return;
	memcpy(copy, data, size);
	t = trace_open_buffer(copy, size, "fuzz.bin", err, sizeof(err));
	if (t) {
		walk_all(t);
		trace_close(t);
	} else if (!err[0] || strchr(err, '\n')) {
		abort();                /* a refusal is always one line */
	}
	free(copy);
}

/* A valid version-1 header with a 4 KiB slab; mutations go into the slabs. */
static void open_with_header(const uint8_t *data, size_t size)
{
	struct mt_file_header h;
	size_t len = 4096 + size;
	unsigned char *buf;

	if (size > 1 << 20)
		return;
	buf = calloc(1, len);
	if (!buf)
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = MT_FORMAT_VERSION;
	h.header_size = 4096;
	h.slab_size = 4096;
	h.pid = 1;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 4096, data, size);
	open_buffer(buf, len);
	free(buf);
}

static void dump_memfd(const uint8_t *data, size_t size)
{
	char arg0[] = "dump", *argv[] = { arg0, memfd_path, NULL };

	if (memfd < 0 || ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
		return;
	if (cmd_dump(2, argv) > 2)
		abort();                /* dump exits 0, 1 or 2 */
	fflush(stdout);
}

static void report_memfd(void)
{
	char a0[] = "report", db[] = "--db", mem[] = ":memory:", json[] = "--json",
	     nodb[] = "--no-db";
	char *text_argv[] = { a0, db, mem, memfd_path, NULL };
	char *json_argv[] = { a0, nodb, json, memfd_path, NULL };

	if (memfd < 0)
		return;
	if (cmd_report(4, text_argv) > 2 || cmd_report(4, json_argv) > 2)
		abort();                /* report exits 0, 1 or 2 */
	fflush(stdout);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memfd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (memfd >= 0)
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	/* dump's output is not what is being checked; its one-line messages
	   on stderr are silenced by -close_fd_mask=2 (make fuzz) */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	open_buffer(data, size);
	open_with_header(data, size);
	dump_memfd(data, size);
	report_memfd();
	return 0;
}
