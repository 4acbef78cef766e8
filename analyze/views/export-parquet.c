/*
 * export-parquet.c - `memtrace export --format parquet -o DIR FILE...`
 * (docs/warehouse.md): the run as Parquet tables (store/parquet.h) under
 *
 *   DIR/TABLE/run_id=R/host=H/rank=K/part-T.parquet   per process
 *   DIR/TABLE/run_id=R/part-0.parquet                 per run
 *
 * T is the trace's number in the run (1, 2, ...: the database's `trace`),
 * so two processes of one (host, rank) never share a file name.
 *
 * How: the analysis runs as for `memtrace report` (pipeline.c, no
 * database) with a sink that pairs each allocation with its first free as
 * the database's loader does (store/db-load.c) and writes one allocations
 * row for both, into one writer per process; those writers keep one page
 * of values each and put their finished pages in one spill file, so the
 * memory of many ranks stays bounded (a page is 512 to 65536 rows, fewer
 * the more traces). Every other table comes from the run model once the
 * analysis is done: the figures the report prints, never computed here.
 *
 * Everything is written under DIR/.memtrace-tmp-PID/ first; once all is
 * written, each table's run_id=R directory is renamed into DIR/TABLE/,
 * the runs table last, so a reader sees a run whole or not at all. A run
 * already in DIR is refused, never overwritten; another run's partitions
 * stay beside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/framework.h"
#include "store/parquet.h"
#include "views/export-parquet.h"
#include "views/export.h"
#include "views/utf8.h"
#include "model/metrics.h"

#define SPILL_BUDGET_ROWS 850000u  /* page rows of all allocation writers */

/* --- keys -------------------------------------------------------------------- */

static uint64_t h_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t h_str(uint64_t h, const char *s)
{
	return h_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static uint64_t h_u64(uint64_t h, uint64_t v)
{
	return h_bytes(h, &v, sizeof(v));
}

#define H0 1469598103934665603ull
#define KEY(h) ((int64_t)((h) & INT64_MAX))     /* 63 bits: never negative */

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* A stack's key: its shown frames, resolved (function, file, line), else
   the module's file name and the offset: the same in every process and
   across rebuilds of a binary whose symbols did not move. 0: no frames. */
static int64_t stack_key(const struct sym_stack *st)
{
	uint64_t h = H0;

	if (!st || !st->nframes)
		return 0;
	for (int i = 0; i < st->nframes; i++) {
		const struct sym_frame *f = &st->frames[i];

		if (f->function) {
			h = h_str(h, f->function);
			h = h_str(h, f->file);
			h = h_u64(h, (uint64_t)f->line);
		} else {
			h = h_str(h, base_name(f->module));
			h = h_u64(h, f->offset);
		}
	}
	return KEY(h) ? KEY(h) : 1;
}

/* A site's key: what the report groups sites by (the frames' key, device,
   caching allocator or not). */
static int64_t site_key(const struct site *s)
{
	uint64_t h = h_str(H0, s->key);

	h = h_u64(h, (uint64_t)(int64_t)s->dev);
	h = h_u64(h, (uint64_t)s->caching);
	return KEY(h);
}

/* --- paths ------------------------------------------------------------------- */

/* A partition value: bytes outside [A-Za-z0-9._-] as %XX, as Hive escapes
   them; an empty value, or ".", is "_". */
static void part_value(char *out, size_t len, const char *p, size_t n)
{
	size_t k = 0;

	if (!n && len > 1) {
		out[k++] = '_';
	}
	for (size_t i = 0; i < n && k + 4 < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-')
			out[k++] = (char)c;
		else
			k += (size_t)snprintf(out + k, len - k, "%%%02X", c);
	}
	if (k == 1 && out[0] == '.')
		out[0] = '_';
	out[k < len ? k : len - 1] = 0;
}

static int mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] == '/' || !buf[i]) {
			char c = buf[i];

			buf[i] = 0;
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	}
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static void rm_tree(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t run_id_of(const struct stream *s)
{
	const struct sproc *p = stream_proc(s, 0);
	const struct mt_file_header *h = trace_header(p->t);

	if (h->run_id)
		return h->run_id;
	return (uint64_t)KEY(h_u64(h_str(H0, trace_path(p->t)), h->start_wall_ns));
}

static void proc_host(const struct stream *s, int i, const char **h, size_t *hl)
{
	const struct sproc *p = stream_proc(s, i);
	struct trace_bytes hb = { "", 0 }, c, e;

	if (p->process)
		trace_process_strings(p->process, &hb, &c, &e);
	*h = hb.p;
	*hl = hb.len;
}

/* proc_key: the run, host, pid and monotonic start of each process, so two
   boots' pid 1234 never collide; NULL when out of memory */
static int64_t *proc_keys(const struct stream *s)
{
	int n = stream_nprocs(s);
	int64_t *v = calloc((size_t)n + 1, sizeof(*v));
	uint64_t run = run_id_of(s);

	for (int i = 0; v && i < n; i++) {
		const struct sproc *p = stream_proc(s, i);
		const char *h;
		size_t hl;
		uint64_t k;

		proc_host(s, i, &h, &hl);
		k = h_u64(H0, run);
		k = h_bytes(k, h, hl);
		k = h_u64(k, p->process ? p->process->pid : trace_header(p->t)->pid);
		k = h_u64(k, trace_header(p->t)->start_mono_ns);
		v[i] = KEY(k) ? KEY(k) : 1;
	}
	return v;
}

/* --- the allocations sink ---------------------------------------------------- */

struct pend {
	uint64_t seq, time, addr, bytes;
	uint32_t tid, stack;
	int proc;
	uint16_t api;
	int8_t device;
	uint8_t a;
};

struct sinkx {
	struct an_sink sink;
	const char *tmp;
	struct pq_spill *spill;
	struct pq_writer **w;       /* per process, created at its first row */
	int nw;
	uint32_t page_rows;
	uint64_t nevents;
	struct pipeline *pipe;      /* its stream is open while the pass runs */
	int64_t *keys;              /* proc_key per process, at the first row */
	struct pend *slot;          /* open addressing by seq; 0 empty */
	size_t cap, n;
	char msg[512];
};

enum { A_PROC, A_ID, A_NS, A_TID, A_KIND, A_FLAGS, A_DEV, A_API, A_ADDR, A_BYTES, A_STACK,
       A_FREE_ID, A_FREE_NS, A_FREE_TID, A_FREE_API, A_FREE_FLAGS, A_FREE_STACK, A_NCOLS };

static const struct pq_col alloc_cols[A_NCOLS] = {
	{ "proc_key", PQ_INT64, 0 }, { "id", PQ_INT64, 0 }, { "alloc_ns", PQ_INT64, 0 }, { "tid", PQ_INT64, 0 },
	{ "kind", PQ_STRING, 0 }, { "flags", PQ_INT16, 0 }, { "device", PQ_INT16, 0 },
	{ "api", PQ_STRING, 0 }, { "addr", PQ_INT64, 0 }, { "bytes", PQ_INT64, 0 },
	{ "stack", PQ_INT64, 0 }, { "free_id", PQ_INT64, 1 }, { "free_ns", PQ_INT64, 1 },
	{ "free_tid", PQ_INT64, 1 }, { "free_api", PQ_STRING, 1 },
	{ "free_flags", PQ_INT16, 1 }, { "free_stack", PQ_INT64, 1 },
};

static size_t ph(uint64_t seq, size_t cap)
{
	return (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct pend *p_find(struct sinkx *x, uint64_t seq)
{
	if (!x->cap)
		return NULL;
	for (size_t i = ph(seq, x->cap);; i = (i + 1) & (x->cap - 1)) {
		if (x->slot[i].seq == seq)
			return &x->slot[i];
		if (!x->slot[i].seq)
			return NULL;
	}
}

static struct pend *p_add(struct sinkx *x, uint64_t seq)
{
	if ((x->n + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1024;
		struct pend *s = calloc(cap, sizeof(*s));

		if (!s)
			return NULL;
		for (size_t i = 0; i < x->cap; i++) {
			if (!x->slot[i].seq)
				continue;
			size_t j = ph(x->slot[i].seq, cap);

			while (s[j].seq)
				j = (j + 1) & (cap - 1);
			s[j] = x->slot[i];
		}
		free(x->slot);
		x->slot = s;
		x->cap = cap;
	}
	size_t i = ph(seq, x->cap);

	while (x->slot[i].seq)
		i = (i + 1) & (x->cap - 1);
	x->slot[i].seq = seq;
	x->n++;
	return &x->slot[i];
}

/* backward-shift deletion keeps the probe chains whole */
static void p_del(struct sinkx *x, struct pend *p)
{
	size_t i = (size_t)(p - x->slot), j = i;

	for (;;) {
		j = (j + 1) & (x->cap - 1);
		if (!x->slot[j].seq)
			break;
		size_t k = ph(x->slot[j].seq, x->cap);

		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			x->slot[i] = x->slot[j];
			i = j;
		}
	}
	x->slot[i].seq = 0;
	x->n--;
}

static const char *api_name(unsigned api, char *buf, size_t len)
{
	const char *n = trace_api_name(api);

	if (n)
		return n;
	snprintf(buf, len, "%u", api);
	return buf;
}

static const char *kind_name(unsigned kind, char *buf, size_t len)
{
	const char *n = trace_kind_name(kind);

	if (n)
		return n;
	snprintf(buf, len, "%u", kind);
	return buf;
}

static char *alloc_tmp_path(const struct sinkx *x, int proc)
{
	char *p = NULL;

	if (asprintf(&p, "%s/alloc-%d.parquet", x->tmp, proc) < 0)
		return NULL;
	return p;
}

static struct pq_writer *alloc_writer(struct sinkx *x, int proc)
{
	if (proc >= x->nw) {
		int n = proc + 64;
		struct pq_writer **w = realloc(x->w, (size_t)n * sizeof(*w));

		if (!w)
			return NULL;
		memset(w + x->nw, 0, (size_t)(n - x->nw) * sizeof(*w));
		x->w = w;
		x->nw = n;
	}
	if (!x->w[proc]) {
		struct pq_opts o = { .page_rows = x->page_rows, .spill = x->spill,
				     .created_by = "memtrace version " MEMTRACE_VERSION };
		char *path = alloc_tmp_path(x, proc);

		if (!path)
			return NULL;
		x->w[proc] = pq_open(path, alloc_cols, A_NCOLS, &o, x->msg, sizeof(x->msg));
		free(path);
	}
	return x->w[proc];
}

static int alloc_row(struct sinkx *x, int proc, const struct pend *p, uint64_t free_seq,
		     uint64_t free_t, uint32_t free_tid, unsigned free_api, unsigned free_flags,
		     uint32_t free_stack)
{
	struct pq_writer *w = alloc_writer(x, proc);
	char b[16];
	const char *s;

	if (!w || (!x->keys && !(x->keys = proc_keys(x->pipe->s)))) {
		x->sink.errmsg = x->msg[0] ? x->msg : NULL;
		return -1;
	}
	pq_i64(w, A_PROC, x->keys[proc]);
	pq_i64(w, A_ID, (int64_t)p->seq);
	pq_i64(w, A_NS, (int64_t)p->time);
	pq_i64(w, A_TID, p->tid);
	s = kind_name(p->a & MT_KIND_MASK, b, sizeof(b));
	pq_str(w, A_KIND, s, strlen(s));
	pq_i64(w, A_FLAGS, p->a & ~MT_KIND_MASK);
	pq_i64(w, A_DEV, p->device);
	s = api_name(p->api, b, sizeof(b));
	pq_str(w, A_API, s, strlen(s));
	pq_i64(w, A_ADDR, (int64_t)p->addr);
	pq_i64(w, A_BYTES, (int64_t)p->bytes);
	pq_i64(w, A_STACK, p->stack);
	if (free_seq) {
		pq_i64(w, A_FREE_ID, (int64_t)free_seq);
		pq_i64(w, A_FREE_NS, (int64_t)free_t);
		pq_i64(w, A_FREE_TID, free_tid);
		s = api_name(free_api, b, sizeof(b));
		pq_str(w, A_FREE_API, s, strlen(s));
		pq_i64(w, A_FREE_FLAGS, free_flags);
		pq_i64(w, A_FREE_STACK, free_stack);
	}
	if (pq_end_row(w)) {
		snprintf(x->msg, sizeof(x->msg), "%s", pq_error(w));
		x->sink.errmsg = x->msg;
		return -1;
	}
	return 0;
}

static int sink_record(void *ctx, const struct analysis *a, const struct srec *r, uint64_t seq,
		       uint64_t alloc_seq, uint64_t bytes, int dev)
{
	struct sinkx *x = ctx;
	const struct mt_event *e;
	struct pend *pa;
	int is_free;

	if (r->rec.type != MT_REC_ALLOC && r->rec.type != MT_REC_FREE &&
	    r->rec.type != MT_REC_ALLOC_EX && r->rec.type != MT_REC_FREE_EX)
		return 0;
	e = r->rec.p;
	is_free = r->rec.type == MT_REC_FREE || r->rec.type == MT_REC_FREE_EX;
	x->nevents = seq;
	if (e->result)
		return 0;           /* failures: the model's list */
	if (!is_free) {
		if (!(pa = p_add(x, seq))) {
			x->sink.errmsg = NULL;
			return -1;
		}
		pa->proc = r->proc;
		pa->time = r->t;
		pa->tid = r->rec.tid;
		pa->a = e->h.a;
		pa->device = e->h.b;
		pa->api = e->api;
		pa->addr = e->addr;
		pa->bytes = e->bytes;
		pa->stack = e->stack_id;
		return 0;
	}
	if (alloc_seq && (pa = p_find(x, alloc_seq))) {
		struct pend p = *pa;
		int64_t ev_bytes = (int64_t)(!e->bytes ? bytes : e->bytes);
		int same = p.device == dev && (int64_t)p.bytes == ev_bytes &&
			(p.a & MT_KIND_MASK) == (e->h.a & MT_KIND_MASK);

		p_del(x, pa);
		if (same)
			return alloc_row(x, p.proc, &p, seq, r->t, r->rec.tid, e->api,
					 e->h.a & ~MT_KIND_MASK, e->stack_id);
		return alloc_row(x, p.proc, &p, 0, 0, 0, 0, 0, 0);
	}
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct pend *)a)->seq, y = ((const struct pend *)b)->seq;

	return (x > y) - (x < y);
}

/* The allocations never freed, in their order, at the end of the pass. */
static int sink_end(void *ctx)
{
	struct sinkx *x = ctx;
	size_t n = 0;

	for (size_t i = 0; i < x->cap; i++)
		if (x->slot[i].seq)
			x->slot[n++] = x->slot[i];
	if (n)
		qsort(x->slot, n, sizeof(*x->slot), by_seq);
	for (size_t i = 0; i < n; i++)
		if (alloc_row(x, x->slot[i].proc, &x->slot[i], 0, 0, 0, 0, 0, 0))
			return -1;
	free(x->slot);
	x->slot = NULL;
	x->cap = x->n = 0;
	return 0;
}

/* --- the model's tables ------------------------------------------------------ */

struct ex {
	const struct report *r;
	const struct analysis *a;
	const char *tmp;
	uint64_t run_id;
	char run_part[32];
	char **proc_part;           /* per process: "host=H/rank=K" */
	int64_t *proc_key;
	char *err;
	size_t errlen;
	struct buf8 { char *p; size_t cap; } u;    /* valid UTF-8 of a string */
};

/* s as valid UTF-8: a byte that is not is the code point of its value
   (U+00XX), as the report's JSON writes it. */
static const char *utf8(struct ex *x, const char *s, size_t n, size_t *out)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t k = 0;

	if (x->u.cap < n * 2 + 1) {
		char *p = realloc(x->u.p, n * 2 + 1);

		if (!p) {
			*out = 0;
			return "";
		}
		x->u.p = p;
		x->u.cap = n * 2 + 1;
	}
	for (size_t i = 0; i < n;) {
		size_t l = c[i] < 0x80 ? 1 : utf8_len(c + i, n - i);

		if (l) {
			memcpy(x->u.p + k, c + i, l);
			k += l;
			i += l;
		} else {
			x->u.p[k++] = (char)(0xc0 | c[i] >> 6);
			x->u.p[k++] = (char)(0x80 | (c[i] & 0x3f));
			i++;
		}
	}
	*out = k;
	return x->u.p;
}

static void put_str(struct ex *x, struct pq_writer *w, int col, const char *s, size_t n)
{
	size_t k;
	const char *v = utf8(x, s ? s : "", s ? n : 0, &k);

	pq_str(w, col, v, k);
}

static void put_cstr(struct ex *x, struct pq_writer *w, int col, const char *s)
{
	if (s)
		put_str(x, w, col, s, strlen(s));
}

static void put_frames(struct ex *x, struct pq_writer *w, int col, const struct sym_stack *st)
{
	char b[4096];

	for (int i = 0; st && i < st->nframes; i++) {
		size_t n = export_frame_text(&st->frames[i], b, sizeof(b)), k;
		const char *v = utf8(x, b, n, &k);

		pq_list_add(w, col, v, k);
	}
}

/* A table's file of process proc (-1: the run's) under the temporary tree. */
static struct pq_writer *open_table(struct ex *x, const char *table, int proc,
				    const struct pq_col *cols, int ncols)
{
	struct pq_opts o = { .created_by = "memtrace version " MEMTRACE_VERSION };
	char dir[4096], path[4200];
	struct pq_writer *w;

	if (proc >= 0)
		snprintf(dir, sizeof(dir), "%s/%s/%s/%s", x->tmp, table, x->run_part,
			 x->proc_part[proc]);
	else
		snprintf(dir, sizeof(dir), "%s/%s/%s", x->tmp, table, x->run_part);
	if (mkdirs(dir)) {
		snprintf(x->err, x->errlen, "cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/part-%d.parquet", dir, proc >= 0 ? proc + 1 : 0);
	if (!(w = pq_open(path, cols, ncols, &o, x->err, x->errlen)))
		return NULL;
	pq_meta(w, "memtrace.table", table);
	pq_meta(w, "memtrace.format_version", "1");
	return w;
}

static int end_row(struct ex *x, struct pq_writer *w)
{
	if (!pq_end_row(w))
		return 0;
	snprintf(x->err, x->errlen, "%s", pq_error(w));
	return -1;
}

static int close_table(struct ex *x, struct pq_writer *w)
{
	return pq_close(w, x->err, x->errlen);
}

#define NCOLS(c) ((int)(sizeof(c) / sizeof((c)[0])))

static int t_processes(struct ex *x)
{
	static const struct pq_col c[] = {
		{ "proc_key", PQ_INT64, 0 }, { "trace", PQ_INT32, 0 }, { "pid", PQ_INT64, 0 },
		{ "ppid", PQ_INT64, 1 }, { "hostname", PQ_STRING, 0 },
		{ "global_rank", PQ_INT32, 1 }, { "local_rank", PQ_INT32, 1 },
		{ "world_size", PQ_INT32, 1 }, { "command", PQ_STRING, 0 },
		{ "exe", PQ_STRING, 0 }, { "trace_path", PQ_STRING, 0 },
		{ "start_wall", PQ_TIMESTAMP_NS, 0 }, { "start_mono_ns", PQ_INT64, 0 },
		{ "first_ns", PQ_INT64, 0 }, { "last_ns", PQ_INT64, 0 },
		{ "ended", PQ_STRING, 1 }, { "exit_status", PQ_INT32, 1 },
		{ "end_ns", PQ_INT64, 0 }, { "events", PQ_INT64, 0 }, { "failed", PQ_INT64, 0 },
		{ "unknown_frees", PQ_INT64, 0 }, { "peak_reserved_bytes", PQ_INT64, 0 },
		{ "peak_t_ns", PQ_INT64, 0 }, { "host_pinned_peak_bytes", PQ_INT64, 0 },
		{ "driver_version", PQ_INT32, 0 }, { "framework_off", PQ_STRING, 1 },
		{ "recorder_notes", PQ_STRING_LIST, 0 },
	};
	const struct analysis *a = x->a;

	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *p = stream_proc(a->s, i);
		const struct an_proc *ap = &a->procs[i];
		const struct mt_file_header *hd = trace_header(p->t);
		struct trace_bytes h = { "", 0 }, cmd = { "", 0 }, e = { "", 0 }, arg;
		struct pq_writer *w = open_table(x, "processes", i, c, NCOLS(c));
		char *cl = NULL;
		size_t cn = 0;
		FILE *m;
		int ai = 0, k = 0;

		if (!w)
			return -1;
		if (p->process)
			trace_process_strings(p->process, &h, &cmd, &e);
		pq_i64(w, k++, x->proc_key[i]);
		pq_i64(w, k++, i + 1);
		pq_i64(w, k++, rep_pid(a, i));
		if (p->process)
			pq_i64(w, k, p->process->ppid);
		k++;
		put_str(x, w, k++, h.p, h.len);
		if (p->process && p->process->rank >= 0)
			pq_i64(w, k, p->process->rank);
		k++;
		if (p->process && p->process->local_rank >= 0)
			pq_i64(w, k, p->process->local_rank);
		k++;
		if (p->process && p->process->world_size >= 0)
			pq_i64(w, k, p->process->world_size);
		k++;
		if ((m = open_memstream(&cl, &cn))) {
			while ((arg = rep_command_arg(a, i, &ai)).p)
				fprintf(m, "%s%.*s", ai > 1 ? " " : "", (int)arg.len, arg.p);
			fclose(m);
		}
		put_str(x, w, k++, cl ? cl : "", cl ? cn : 0);
		free(cl);
		put_str(x, w, k++, e.p, e.len);
		put_cstr(x, w, k++, trace_path(p->t));
		pq_i64(w, k++, (int64_t)hd->start_wall_ns);
		pq_i64(w, k++, (int64_t)hd->start_mono_ns);
		pq_i64(w, k++, (int64_t)p->first_t);
		pq_i64(w, k++, (int64_t)p->last_t);
		put_cstr(x, w, k++, rep_end_name(ap->end));
		if (ap->end == AN_END_EXIT || ap->end == AN_END_UNDERSCORE_EXIT)
			pq_i64(w, k, ap->exit_status);
		k++;
		pq_i64(w, k++, (int64_t)ap->end_time);
		pq_i64(w, k++, (int64_t)ap->events);
		pq_i64(w, k++, (int64_t)ap->failed);
		pq_i64(w, k++, (int64_t)ap->unknown_frees);
		pq_i64(w, k++, (int64_t)ap->peak_all);
		pq_i64(w, k++, (int64_t)ap->peak_all_time);
		pq_i64(w, k++, (int64_t)ap->host_peak);
		pq_i64(w, k++, p->driver_version);
		if (x->r->fw_off && x->r->fw_off[i].p)
			put_str(x, w, k, x->r->fw_off[i].p, x->r->fw_off[i].len);
		k++;
		for (uint32_t n = 0; n < p->nnotes; n++) {
			struct trace_bytes t = trace_note_text(p->notes[n]);
			size_t l;
			const char *v = utf8(x, t.p, t.len, &l);

			pq_list_add(w, k, v, l);
		}
		if (end_row(x, w) || close_table(x, w))
			return -1;
	}
	return 0;
}

static const struct pq_col dev_cols[] = {
	{ "proc_key", PQ_INT64, 0 }, { "host", PQ_STRING, 0 }, { "device", PQ_INT16, 0 },
	{ "peak_reserved_bytes", PQ_INT64, 0 }, { "peak_allocated_bytes", PQ_INT64, 0 },
	{ "peak_t_ns", PQ_INT64, 0 }, { "peak_set_by_api", PQ_STRING, 1 },
	{ "peak_set_by_bytes", PQ_INT64, 1 }, { "device_used_bytes", PQ_INT64, 1 },
	{ "sample_ns", PQ_INT64, 1 }, { "untraced_bytes", PQ_INT64, 1 },
	{ "left_at_exit_bytes", PQ_INT64, 0 }, { "live_at_end_bytes", PQ_INT64, 0 },
};

static void dev_row(struct ex *x, struct pq_writer *w, const struct an_dev *d)
{
	const char *h;
	size_t hl;
	char b[16];
	int k = 0;

	if (d->proc >= 0)
		pq_i64(w, k, x->proc_key[d->proc]);
	else
		pq_i64(w, k, 0);
	k++;
	an_hostname(x->a, d->proc >= 0 ? d->proc : d->host_proc, &h, &hl);
	put_str(x, w, k++, h, hl);
	pq_i64(w, k++, d->dev);
	pq_i64(w, k++, (int64_t)d->peak.reserved);
	pq_i64(w, k++, (int64_t)d->peak.allocated);
	pq_i64(w, k++, (int64_t)d->peak.time);
	if (d->peak.reserved) {
		const char *s = api_name(d->peak.api, b, sizeof(b));

		put_str(x, w, k, s, strlen(s));
		pq_i64(w, k + 1, (int64_t)d->peak.bytes);
	}
	k += 2;
	if (d->peak.has_sample) {
		pq_i64(w, k, (int64_t)d->peak.used);
		pq_i64(w, k + 1, (int64_t)d->peak.sample_time);
		pq_i64(w, k + 2, d->peak.untraced);
	}
	k += 3;
	pq_i64(w, k++, (int64_t)d->left_at_exit);
	pq_i64(w, k++, (int64_t)d->live_at_end);
	(void)k;
}

static const struct pq_col tl_cols[] = {
	{ "proc_key", PQ_INT64, 0 }, { "host", PQ_STRING, 0 }, { "device", PQ_INT16, 0 },
	{ "t_ns", PQ_INT64, 0 }, { "reserved_bytes", PQ_INT64, 0 },
	{ "allocated_bytes", PQ_INT64, 0 }, { "cached_bytes", PQ_INT64, 0 },
};

static int tl_rows(struct ex *x, struct pq_writer *w, const struct an_dev *d)
{
	const char *h;
	size_t hl;

	an_hostname(x->a, d->proc >= 0 ? d->proc : d->host_proc, &h, &hl);
	for (uint32_t k = 0; k < d->ntl; k++) {
		pq_i64(w, 0, d->proc >= 0 ? x->proc_key[d->proc] : 0);
		put_str(x, w, 1, h, hl);
		pq_i64(w, 2, d->dev);
		pq_i64(w, 3, (int64_t)d->tl[k].t);
		pq_i64(w, 4, (int64_t)d->tl[k].reserved);
		pq_i64(w, 5, (int64_t)d->tl[k].allocated);
		pq_i64(w, 6, (int64_t)(d->tl[k].reserved - d->tl[k].allocated));
		if (end_row(x, w))
			return -1;
	}
	return 0;
}

/* devices and timeline: each process's devices, and the run's (gdevs) */
static int t_devices(struct ex *x)
{
	const struct analysis *a = x->a;
	struct pq_writer *w, *t;

	for (int p = 0; p < a->nprocs; p++) {
		if (!(w = open_table(x, "devices", p, dev_cols, NCOLS(dev_cols))))
			return -1;
		if (!(t = open_table(x, "timeline", p, tl_cols, NCOLS(tl_cols)))) {
			pq_abort(w);
			return -1;
		}
		for (int k = 0; k < AN_MAX_DEV; k++) {
			int di = a->procs[p].pdev[k];

			if (di < 0 || !a->devs[di].used)
				continue;
			dev_row(x, w, &a->devs[di]);
			if (end_row(x, w) || tl_rows(x, t, &a->devs[di])) {
				pq_abort(w);
				pq_abort(t);
				return -1;
			}
		}
		if (close_table(x, w)) {
			pq_abort(t);
			return -1;
		}
		if (close_table(x, t))
			return -1;
	}
	if (!(w = open_table(x, "run_devices", -1, dev_cols + 1, NCOLS(dev_cols) - 1)))
		return -1;
	if (!(t = open_table(x, "run_timeline", -1, tl_cols + 1, NCOLS(tl_cols) - 1))) {
		pq_abort(w);
		return -1;
	}
	for (int g = 0; g < x->r->ngdevs; g++) {
		const struct an_dev *d = &a->devs[x->r->gdevs[g]];
		const char *h;
		size_t hl;

		/* the same columns without proc_key: write them shifted */
		an_hostname(a, d->host_proc, &h, &hl);
		put_str(x, w, 0, h, hl);
		pq_i64(w, 1, d->dev);
		pq_i64(w, 2, (int64_t)d->peak.reserved);
		pq_i64(w, 3, (int64_t)d->peak.allocated);
		pq_i64(w, 4, (int64_t)d->peak.time);
		if (d->peak.reserved) {
			char b[16];
			const char *s = api_name(d->peak.api, b, sizeof(b));

			put_str(x, w, 5, s, strlen(s));
			pq_i64(w, 6, (int64_t)d->peak.bytes);
		}
		if (d->peak.has_sample) {
			pq_i64(w, 7, (int64_t)d->peak.used);
			pq_i64(w, 8, (int64_t)d->peak.sample_time);
			pq_i64(w, 9, d->peak.untraced);
		}
		pq_i64(w, 10, (int64_t)d->left_at_exit);
		pq_i64(w, 11, (int64_t)d->live_at_end);
		if (end_row(x, w))
			goto bad;
		for (uint32_t k = 0; k < d->ntl; k++) {
			put_str(x, t, 0, h, hl);
			pq_i64(t, 1, d->dev);
			pq_i64(t, 2, (int64_t)d->tl[k].t);
			pq_i64(t, 3, (int64_t)d->tl[k].reserved);
			pq_i64(t, 4, (int64_t)d->tl[k].allocated);
			pq_i64(t, 5, (int64_t)(d->tl[k].reserved - d->tl[k].allocated));
			if (end_row(x, t))
				goto bad;
		}
	}
	if (close_table(x, w)) {
		pq_abort(t);
		return -1;
	}
	return close_table(x, t);
bad:
	pq_abort(w);
	pq_abort(t);
	return -1;
}

/* sites (each stack of a process on a device, with its report site) and
   stacks (every recorded stack of a process, resolved) */
static int t_sites(struct ex *x)
{
	static const struct pq_col sc[] = {
		{ "proc_key", PQ_INT64, 0 }, { "stack", PQ_INT64, 0 },
		{ "device", PQ_INT16, 0 }, { "site_key", PQ_INT64, 0 },
		{ "site_id", PQ_INT32, 0 }, { "stack_key", PQ_INT64, 0 },
		{ "caching", PQ_BOOL, 0 }, { "name", PQ_STRING, 0 },
		{ "function", PQ_STRING, 1 }, { "file", PQ_STRING, 1 }, { "line", PQ_INT32, 1 },
		{ "allocs", PQ_INT64, 0 }, { "bytes_total", PQ_INT64, 0 },
		{ "max_live_bytes", PQ_INT64, 0 }, { "live_at_peak_bytes", PQ_INT64, 0 },
		{ "live_at_peak_count", PQ_INT64, 0 }, { "left_at_exit_bytes", PQ_INT64, 0 },
		{ "left_at_exit_count", PQ_INT64, 0 }, { "growing", PQ_BOOL, 0 },
	};
	static const struct pq_col kc[] = {
		{ "proc_key", PQ_INT64, 0 }, { "stack", PQ_INT64, 0 },
		{ "stack_key", PQ_INT64, 0 }, { "frames", PQ_STRING_LIST, 0 },
	};
	const struct analysis *a = x->a;
	uint64_t *pk_bytes = calloc((size_t)a->nsites + 1, sizeof(*pk_bytes));
	uint64_t *pk_count = calloc((size_t)a->nsites + 1, sizeof(*pk_count));
	uint32_t **by_proc = NULL;
	uint32_t *nby = NULL;
	char name[4096];
	int rc = -1;

	if (!pk_bytes || !pk_count)
		goto oom;
	/* what each stack held at its own process's peak on that device */
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (d->proc < 0)
			continue;
		for (uint32_t k = 0; k < d->npeak_sites; k++) {
			pk_bytes[d->peak_sites[k].site] += d->peak_sites[k].bytes;
			pk_count[d->peak_sites[k].site] += d->peak_sites[k].count;
		}
	}
	by_proc = calloc((size_t)a->nprocs, sizeof(*by_proc));
	nby = calloc((size_t)a->nprocs, sizeof(*nby));
	if (!by_proc || !nby)
		goto oom;
	for (uint32_t i = 0; i < a->nsites; i++)
		nby[a->sites[i].proc]++;
	for (int p = 0; p < a->nprocs; p++) {
		if (!(by_proc[p] = malloc(((size_t)nby[p] + 1) * sizeof(**by_proc))))
			goto oom;
		nby[p] = 0;
	}
	for (uint32_t i = 0; i < a->nsites; i++)
		by_proc[a->sites[i].proc][nby[a->sites[i].proc]++] = i;
	for (int p = 0; p < a->nprocs; p++) {
		const struct sproc *sp = stream_proc(a->s, p);
		struct pq_writer *w = open_table(x, "sites", p, sc, NCOLS(sc));

		if (!w)
			goto out;
		for (uint32_t j = 0; j < nby[p]; j++) {
			uint32_t i = by_proc[p][j];
			const struct an_site *as = &a->sites[i];
			const struct site *s = site_of(&x->r->sites, i);
			const struct sym_stack *st = sym_stack(x->r->sy, a->s, p, as->stack);
			const struct sym_frame *f = rep_main_frame(s->st);
			int k = 0;

			pq_i64(w, k++, x->proc_key[p]);
			pq_i64(w, k++, as->stack);
			pq_i64(w, k++, as->dev);
			pq_i64(w, k++, site_key(s));
			pq_i64(w, k++, s->id);
			pq_i64(w, k++, stack_key(st));
			pq_bool(w, k++, as->caching);
			rep_site_name(name, sizeof(name), s, NULL);
			put_cstr(x, w, k++, name);
			if (f) {
				put_cstr(x, w, k, f->function);
				put_cstr(x, w, k + 1, f->file);
				if (f->line)
					pq_i64(w, k + 2, f->line);
			}
			k += 3;
			pq_i64(w, k++, (int64_t)as->total_count);
			pq_i64(w, k++, (int64_t)as->total_bytes);
			pq_i64(w, k++, (int64_t)as->max);
			pq_i64(w, k++, (int64_t)pk_bytes[i]);
			pq_i64(w, k++, (int64_t)pk_count[i]);
			pq_i64(w, k++, (int64_t)as->live);
			pq_i64(w, k++, (int64_t)as->count);
			pq_bool(w, k++, leaks_is_growing(a, as));
			if (end_row(x, w)) {
				pq_abort(w);
				goto out;
			}
		}
		if (close_table(x, w))
			goto out;
		if (!(w = open_table(x, "stacks", p, kc, NCOLS(kc))))
			goto out;
		for (uint32_t id = 0; id < sp->nstacks; id++) {
			const struct sym_stack *st;

			if (!sp->stacks[id])
				continue;
			if (!(st = sym_stack(x->r->sy, a->s, p, id))) {
				pq_abort(w);
				goto oom;
			}
			pq_i64(w, 0, x->proc_key[p]);
			pq_i64(w, 1, id);
			pq_i64(w, 2, stack_key(st));
			put_frames(x, w, 3, st);
			if (end_row(x, w)) {
				pq_abort(w);
				goto out;
			}
		}
		if (close_table(x, w))
			goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(x->err, x->errlen, "out of memory");
out:
	for (int p = 0; by_proc && p < a->nprocs; p++)
		free(by_proc[p]);
	free(by_proc);
	free(nby);
	free(pk_bytes);
	free(pk_count);
	return rc;
}

static int t_failures(struct ex *x)
{
	static const struct pq_col c[] = {
		{ "proc_key", PQ_INT64, 0 }, { "t_ns", PQ_INT64, 0 },
		{ "time", PQ_TIMESTAMP_NS, 0 }, { "tid", PQ_INT64, 0 },
		{ "api", PQ_STRING, 0 }, { "device", PQ_INT16, 0 },
		{ "requested_bytes", PQ_INT64, 0 }, { "error", PQ_INT32, 0 },
		{ "error_name", PQ_STRING, 1 }, { "error_api", PQ_STRING, 0 },
		{ "reserved_bytes", PQ_INT64, 0 }, { "device_free_bytes", PQ_INT64, 1 },
		{ "stack", PQ_INT64, 0 }, { "stack_key", PQ_INT64, 0 },
		{ "frames", PQ_STRING_LIST, 0 },
	};
	const struct analysis *a = x->a;
	uint64_t origin = stream_origin_wall(a->s);

	for (int p = 0; p < a->nprocs; p++) {
		struct pq_writer *w = open_table(x, "failures", p, c, NCOLS(c));

		if (!w)
			return -1;
		for (uint32_t i = 0; i < a->nfailures; i++) {
			const struct an_failure *fl = &a->failures[i];
			const struct sym_stack *st;
			const char *s;

			if (fl->proc != p)
				continue;
			st = sym_stack(x->r->sy, a->s, p, fl->stack);
			pq_i64(w, 0, x->proc_key[p]);
			pq_i64(w, 1, (int64_t)fl->time);
			pq_i64(w, 2, (int64_t)(origin + fl->time));
			pq_i64(w, 3, fl->tid);
			s = trace_api_name(fl->api);
			put_cstr(x, w, 4, s ? s : "unknown");
			pq_i64(w, 5, fl->dev);
			pq_i64(w, 6, (int64_t)fl->requested);
			pq_i64(w, 7, fl->error);
			put_cstr(x, w, 8, rep_error_name(fl->error, fl->runtime));
			put_cstr(x, w, 9, fl->runtime ? "runtime" : "driver");
			pq_i64(w, 10, (int64_t)fl->reserved);
			if (fl->has_free_after)
				pq_i64(w, 11, (int64_t)fl->free_after);
			pq_i64(w, 12, fl->stack);
			pq_i64(w, 13, stack_key(st));
			put_frames(x, w, 14, st);
			if (end_row(x, w)) {
				pq_abort(w);
				return -1;
			}
		}
		if (close_table(x, w))
			return -1;
	}
	return 0;
}

static int t_framework(struct ex *x)
{
	static const struct pq_col bc[] = {
		{ "proc_key", PQ_INT64, 0 }, { "device", PQ_INT16, 0 }, { "addr", PQ_INT64, 0 },
		{ "size", PQ_INT64, 0 }, { "requested", PQ_INT64, 0 }, { "stream", PQ_INT64, 0 },
		{ "alloc_ns", PQ_INT64, 0 }, { "free_requested_ns", PQ_INT64, 1 },
		{ "free_completed_ns", PQ_INT64, 1 }, { "fw_site_id", PQ_INT32, 0 },
		{ "stack", PQ_INT64, 0 },
	};
	static const struct pq_col sc[] = {
		{ "fw_site_id", PQ_INT32, 0 }, { "device", PQ_INT16, 0 },
		{ "function", PQ_STRING, 1 }, { "file", PQ_STRING, 1 }, { "line", PQ_INT32, 1 },
		{ "user", PQ_BOOL, 0 }, { "frames", PQ_STRING_LIST, 0 },
		{ "proc_key", PQ_INT64, 0 }, { "allocs", PQ_INT64, 0 }, { "bytes", PQ_INT64, 0 },
		{ "peak_bytes", PQ_INT64, 0 }, { "exit_bytes", PQ_INT64, 0 },
		{ "exit_count", PQ_INT64, 0 }, { "leak_at_exit", PQ_BOOL, 0 },
		{ "leak_growing", PQ_BOOL, 0 },
	};
	const struct analysis *a = x->a;
	const struct fw_model *m = a->fw;
	struct pq_writer *w;

	if (!m)
		return 0;
	for (int p = 0; p < a->nprocs; p++) {
		if (!(w = open_table(x, "fw_blocks", p, bc, NCOLS(bc))))
			return -1;
		for (uint64_t i = 0; i < m->nblocks; i++) {
			const struct fw_block *b = &m->blocks[i];

			if (b->proc != p)
				continue;
			pq_i64(w, 0, x->proc_key[p]);
			pq_i64(w, 1, m->devs[b->fdev].dev);
			pq_i64(w, 2, (int64_t)b->addr);
			pq_i64(w, 3, (int64_t)b->size);
			pq_i64(w, 4, (int64_t)b->req);
			pq_i64(w, 5, (int64_t)b->stream);
			pq_i64(w, 6, (int64_t)b->t_alloc);
			if (b->t_freq != FW_NEVER)
				pq_i64(w, 7, (int64_t)b->t_freq);
			if (b->t_fdone != FW_NEVER)
				pq_i64(w, 8, (int64_t)b->t_fdone);
			pq_i64(w, 9, b->site + 1);
			pq_i64(w, 10, b->stack);
			if (end_row(x, w)) {
				pq_abort(w);
				return -1;
			}
		}
		if (close_table(x, w))
			return -1;
	}
	if (!(w = open_table(x, "fw_sites", -1, sc, NCOLS(sc))))
		return -1;
	for (uint32_t i = 0; i < m->nsites; i++) {
		const struct fw_site *s = &m->sites[i];
		struct trace_fw_frame fr[64];
		uint32_t nf = 0;

		pq_i64(w, 0, s->id);
		pq_i64(w, 1, s->dev);
		put_cstr(x, w, 2, s->function);
		put_cstr(x, w, 3, s->file);
		if (s->file)
			pq_i64(w, 4, s->line);
		pq_bool(w, 5, s->user);
		if (s->stack)
			nf = trace_fw_stack_frames(stream_proc(a->s, s->proc)->t, s->stack, fr, 64);
		for (uint32_t k = 0; k < nf && k < 64; k++) {
			char *t = NULL;
			int n = asprintf(&t, "%.*s:%u %.*s", (int)fr[k].file_len, fr[k].file,
					 fr[k].line, (int)fr[k].function_len, fr[k].function);
			size_t l;
			const char *v;

			if (n < 0)
				continue;
			v = utf8(x, t, (size_t)n, &l);
			pq_list_add(w, 6, v, l);
			free(t);
		}
		pq_i64(w, 7, x->proc_key[s->proc]);
		pq_i64(w, 8, (int64_t)s->allocs);
		pq_i64(w, 9, (int64_t)s->bytes);
		pq_i64(w, 10, (int64_t)s->max);
		pq_i64(w, 11, (int64_t)s->exit_bytes);
		pq_i64(w, 12, (int64_t)s->exit_count);
		pq_bool(w, 13, s->exit_bytes != 0);
		pq_bool(w, 14, s->growing);
		if (end_row(x, w)) {
			pq_abort(w);
			return -1;
		}
	}
	return close_table(x, w);
}

static int t_runs(struct ex *x)
{
	static const struct pq_col c[] = {
		{ "run_id", PQ_INT64, 0 }, { "start_wall", PQ_TIMESTAMP_NS, 0 },
		{ "duration_ns", PQ_INT64, 0 }, { "processes", PQ_INT32, 0 },
		{ "hosts", PQ_INT32, 0 }, { "world_size", PQ_INT32, 1 },
		{ "command", PQ_STRING, 0 }, { "memtrace_version", PQ_STRING, 0 },
		{ "format_version", PQ_INT32, 0 }, { "trace_format", PQ_STRING, 0 },
		{ "exported_at", PQ_TIMESTAMP_NS, 0 }, { "events", PQ_INT64, 0 },
		{ "failed", PQ_INT64, 0 }, { "failures_total", PQ_INT64, 0 },
		{ "peak_reserved_bytes", PQ_INT64, 0 }, { "peak_t_ns", PQ_INT64, 0 },
	};
	const struct analysis *a = x->a;
	const struct sproc *p0 = stream_proc(a->s, 0);
	const struct mt_file_header *hd = trace_header(p0->t);
	struct pq_writer *w = open_table(x, "runs", -1, c, NCOLS(c));
	struct trace_bytes arg;
	struct timespec now;
	char tf[32], *cl = NULL;
	size_t cn = 0;
	int ai = 0, ws = -1;
	FILE *m;

	if (!w)
		return -1;
	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *p = stream_proc(a->s, i);

		if (p->process && p->process->world_size > ws)
			ws = p->process->world_size;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	pq_i64(w, 0, (int64_t)x->run_id);
	pq_i64(w, 1, (int64_t)stream_origin_wall(a->s));
	pq_i64(w, 2, (int64_t)a->duration);
	pq_i64(w, 3, a->nprocs);
	pq_i64(w, 4, a->nhosts);
	if (ws >= 0)
		pq_i64(w, 5, ws);
	if ((m = open_memstream(&cl, &cn))) {
		while ((arg = rep_command_arg(a, 0, &ai)).p)
			fprintf(m, "%s%.*s", ai > 1 ? " " : "", (int)arg.len, arg.p);
		fclose(m);
	}
	put_str(x, w, 6, cl ? cl : "", cl ? cn : 0);
	free(cl);
	put_cstr(x, w, 7, MEMTRACE_VERSION);
	pq_i64(w, 8, PQX_FORMAT_VERSION);
	snprintf(tf, sizeof(tf), "%u.%u", hd->version, hd->version_minor);
	put_cstr(x, w, 9, tf);
	pq_i64(w, 10, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	pq_i64(w, 11, (int64_t)a->events);
	pq_i64(w, 12, (int64_t)a->failed);
	pq_i64(w, 13, (int64_t)a->failures_total);
	pq_i64(w, 14, (int64_t)a->gpeak_all);
	pq_i64(w, 15, (int64_t)a->gpeak_all_time);
	if (end_row(x, w)) {
		pq_abort(w);
		return -1;
	}
	return close_table(x, w);
}

/* --- the run's keys and partitions --------------------------------------------- */

static int keys(struct ex *x, const struct analysis *a)
{
	int n = a->nprocs;

	x->run_id = run_id_of(a->s);
	snprintf(x->run_part, sizeof(x->run_part), "run_id=%" PRIu64, x->run_id);
	x->proc_part = calloc((size_t)n + 1, sizeof(*x->proc_part));
	x->proc_key = proc_keys(a->s);
	if (!x->proc_part || !x->proc_key)
		return -1;
	for (int i = 0; i < n; i++) {
		const struct sproc *p = stream_proc(a->s, i);
		const char *h;
		size_t hl;
		char hv[1024], rv[32];

		an_hostname(a, i, &h, &hl);
		part_value(hv, sizeof(hv), h, hl);
		if (p->process && p->process->rank >= 0)
			snprintf(rv, sizeof(rv), "%d", p->process->rank);
		else
			snprintf(rv, sizeof(rv), "pid-%u", rep_pid(a, i));
		if (asprintf(&x->proc_part[i], "host=%s/rank=%s", hv, rv) < 0) {
			x->proc_part[i] = NULL;
			return -1;
		}
	}
	return 0;
}

static const char *const tables[] = {
	"processes", "devices", "timeline", "allocations", "failures", "sites", "stacks",
	"fw_blocks", "run_devices", "run_timeline", "fw_sites", "runs",
};

/* Moves the allocations' files into their partitions. */
static int place_allocs(struct ex *x, struct sinkx *sx)
{
	for (int p = 0; p < x->a->nprocs; p++) {
		char dir[4096], path[4200];
		char *from = alloc_tmp_path(sx, p);
		struct pq_writer *w = p < sx->nw ? sx->w[p] : NULL;

		if (!from)
			return -1;
		if (!w) {           /* no allocation: an empty table all the same */
			struct pq_opts o = { .created_by = "memtrace version " MEMTRACE_VERSION };

			w = pq_open(from, alloc_cols, A_NCOLS, &o, x->err, x->errlen);
			if (!w) {
				free(from);
				return -1;
			}
		}
		if (p < sx->nw)
			sx->w[p] = NULL;
		pq_meta(w, "memtrace.table", "allocations");
		pq_meta(w, "memtrace.format_version", "1");
		if (pq_close(w, x->err, x->errlen)) {
			free(from);
			return -1;
		}
		snprintf(dir, sizeof(dir), "%s/allocations/%s/%s", x->tmp, x->run_part,
			 x->proc_part[p]);
		snprintf(path, sizeof(path), "%s/part-%d.parquet", dir, p + 1);
		if (mkdirs(dir) || rename(from, path)) {
			snprintf(x->err, x->errlen, "cannot move %s to %s: %s", from, path,
				 strerror(errno));
			free(from);
			return -1;
		}
		free(from);
	}
	return 0;
}

/* Every table's run_id=R into dir/TABLE/, the runs table last. */
static int publish(struct ex *x, const char *dir)
{
	char from[4096], to[4096];
	struct stat st;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(to, sizeof(to), "%s/%s/%s", dir, tables[i], x->run_part);
		if (!lstat(to, &st)) {
			snprintf(x->err, x->errlen,
				 "%s already holds run %" PRIu64 " (%s): not overwritten", dir,
				 x->run_id, to);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s/%s", x->tmp, tables[i], x->run_part);
		if (lstat(from, &st))
			continue;   /* a table this run has no rows for (fw_*) */
		snprintf(to, sizeof(to), "%s/%s", dir, tables[i]);
		if (mkdirs(to)) {
			snprintf(x->err, x->errlen, "cannot create %s: %s", to, strerror(errno));
			return -1;
		}
		snprintf(to, sizeof(to), "%s/%s/%s", dir, tables[i], x->run_part);
		if (rename(from, to)) {
			snprintf(x->err, x->errlen, "cannot rename %s to %s: %s", from, to,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A run partly published (a rename failed midway) is taken back out. */
static void unpublish(struct ex *x, const char *dir)
{
	char to[4096];

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(to, sizeof(to), "%s/%s/%s", dir, tables[i], x->run_part);
		rm_tree(to);
	}
}

int export_parquet(char **files, int nfiles, struct pipeline_opts *o, const char *dir,
		   void (*warn)(const char *msg), int *status, char *err, size_t errlen)
{
	struct pipeline p;
	struct sinkx sx;
	struct ex x;
	char tmp[4096], spill[4200];
	int rc = -1, published = 0, have_pipe = 0;

	memset(&p, 0, sizeof(p));
	memset(&sx, 0, sizeof(sx));
	memset(&x, 0, sizeof(x));
	*status = 1;
	if (mkdirs(dir)) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s/.memtrace-tmp-%d", dir, (int)getpid());
	rm_tree(tmp);
	if (mkdir(tmp, 0777)) {
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	snprintf(spill, sizeof(spill), "%s/spill", tmp);
	if (!(sx.spill = pq_spill_open(spill, err, errlen)))
		goto out;
	sx.tmp = tmp;
	sx.page_rows = SPILL_BUDGET_ROWS / (uint32_t)(nfiles > 0 ? nfiles : 1);
	if (sx.page_rows < 512)
		sx.page_rows = 512;
	if (sx.page_rows > 65536)
		sx.page_rows = 65536;
	sx.pipe = &p;
	sx.sink.ctx = &sx;
	sx.sink.record = sink_record;
	sx.sink.end = sink_end;
	o->no_db = 1;
	o->sink = &sx.sink;
	if (pipeline_run(&p, files, nfiles, o, warn, status, err, errlen))
		goto out;
	have_pipe = 1;
	*status = 1;
	x.r = &p.r;
	x.a = p.a;
	x.tmp = tmp;
	x.err = err;
	x.errlen = errlen;
	if (keys(&x, p.a)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (place_allocs(&x, &sx) || t_processes(&x) || t_devices(&x) || t_sites(&x) ||
	    t_failures(&x) || t_framework(&x) || t_runs(&x))
		goto out;
	pq_spill_close(sx.spill);
	sx.spill = NULL;
	if (publish(&x, dir)) {
		published = 1;
		goto out;
	}
	rc = 0;
	*status = 0;
out:
	if (rc && published && !strstr(err, "not overwritten"))
		unpublish(&x, dir);
	for (int i = 0; i < sx.nw; i++)
		pq_abort(sx.w[i]);
	free(sx.w);
	free(sx.slot);
	free(sx.keys);
	pq_spill_close(sx.spill);
	rm_tree(tmp);
	for (int i = 0; x.proc_part && x.a && i < x.a->nprocs; i++)
		free(x.proc_part[i]);
	free(x.proc_part);
	free(x.proc_key);
	free(x.u.p);
	if (have_pipe)
		pipeline_free(&p);
	return rc;
}
