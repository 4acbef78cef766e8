/*
 * stream.c - a k-way merge of the slabs of one or more traces into one
 * global time order.
 *
 * How it works: a slab is written by one thread and is in time order, so
 * the merge keeps a cursor per slab in a binary heap keyed by the run time
 * of the cursor's next record; a thread's slabs follow one another in time,
 * so one cursor walks them in turn (chain_slabs) and the heap holds about
 * one cursor per thread. stream_open() takes from the reader what
 * trace_open() noted while it validated each file (trace_slabs(): each
 * slab's first record and the iterator just after it, its times;
 * trace_long_records(): the module, stack and note records), so the file
 * is not walked again before the merge, and finds the run's origin and end. The heap holds small entries (the key and the
 * cursor's number), so that a sift moves 24 bytes, not the cursor; memory
 * grows with the number of slabs (one per 64 KiB of trace), not with the
 * number of records.
 *
 * A cursor reads its slab only once it reaches the top of the heap, walks no
 * further than its slab's end, and the reader lets go of the slab when the
 * cursor leaves it: the trace's pages in memory are those of the slabs being
 * merged (a few per thread that wrote at the same time), not the file.
 *
 * Ties: at the same nanosecond a free comes before an allocation (the
 * recorder takes a free's time before the call and an allocation's after
 * it), then lower process index, then file order.
 *
 * Only the records that change the state the analysis follows (events,
 * pool and memory samples, shared memory operations, framework events) are
 * in time order within a slab. The others are written as a side effect of an event and
 * may carry a later time than the event after them: an allocation's time is
 * taken when the call returns, then its stack is interned, which writes
 * MODULE records stamped when the modules are read. So a record of the
 * other kinds is merged at the time of the next state record of its slab
 * (it comes just before that one), and keeps its own time in srec.t.
 * Framework events (FW_EVENT) sit in slabs of their own, written long after
 * they happened; their stacks and notes (FW_STACK, FW_INFO) are side records
 * in the slab of the thread that handed them over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/stream.h"

#define MAX_STACK_ID (16u << 20)    /* larger ids are ignored */

/* The state record a cursor is merged at: the next one from rec on. */
struct due {
	uint64_t time_ns;           /* its time (rec's own when the slab has no
	                               state record after rec) */
	uint64_t offset;            /* its file offset (past the slab: none) */
	uint8_t type;
};

struct cursor {
	struct trace_iter it;       /* positioned after rec */
	struct trace_rec rec;       /* the next record of this slab */
	struct due due;
	uint64_t key;               /* run time of due */
	uint32_t order;             /* its slab's start, for a stable tie-break */
	uint8_t rank;               /* 0 free, 1 anything else */
	int proc;
};

/* A slab's first record, found by stream_open(). */
struct slab_start {
	struct trace_iter it;       /* positioned after rec */
	struct trace_rec rec;
	struct due due;
	int proc;
	uint64_t min_t, max_t;      /* the times of its records */
	int64_t next;               /* the same thread's next slab, merged by
	                               the same cursor; -1 none */
	int chained;                /* some slab's next: not a cursor of its own */
};

/* A heap entry: what orders cursor ci, copied from it. */
struct hent {
	uint64_t key;
	uint32_t order;
	uint32_t ci;
	uint8_t rank;
};

struct stream {
	struct sproc *procs;
	int nprocs;
	struct slab_start *starts;
	size_t nstarts;
	struct cursor *cur;         /* nheap of them in use, by heap[].ci */
	struct hent *heap;
	size_t nheap;
	int top_given;              /* heap[0]'s record was handed out: move
	                               on at the next call, not before, so the
	                               slab is not let go while it is read */
	uint64_t origin_wall, duration;
	uint64_t nrecords;          /* in all traces: one whole walk */
	uint64_t nshm;              /* SHM records in all traces */
	uint64_t done;              /* handed out since the last rewind */
	stream_progress_fn progress;
	void *progress_ctx;
	int external;               /* procs belong to the caller (stream_of_procs) */
};

static int is_free(uint8_t type)
{
	return type == MT_REC_FREE || type == MT_REC_FREE_EX;
}

/* A record whose time orders the analysis's state. */
static int is_state(uint8_t type)
{
	return (type >= MT_REC_ALLOC && type <= MT_REC_FREE_EX) || type == MT_REC_POOL ||
	       type == MT_REC_MEMINFO || type == MT_REC_SHM || type == MT_REC_FW_EVENT ||
	       type == MT_REC_RANGE;
}

/* The due of a record with nothing after it that is due. */
static struct due due_self(const struct trace_rec *r)
{
	struct due d = { r->time_ns, UINT64_MAX, r->type };

	return d;
}

static struct due due_at(const struct trace_rec *r)
{
	struct due d = { r->time_ns, r->offset, r->type };

	return d;
}

static int before(const struct hent *a, const struct hent *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return a->order < b->order;
}

/*
 * Moves heap[i] down to its place. When it stays (the cursor on top is
 * still the earliest: records of one thread in a row) two comparisons;
 * otherwise the hole goes down to a leaf along the earlier children, one
 * comparison a level, and the entry rises from there (a cursor that moved
 * on mostly belongs near the bottom: half the comparisons of the usual
 * sift with hundreds of traces interleaved).
 */
static void sift_down(struct stream *s, size_t i)
{
	struct hent *h = s->heap, x = h[i];
	size_t n = s->nheap, hole = i, c = 2 * i + 1;

	if (c >= n || (before(&x, &h[c]) && (c + 1 >= n || before(&x, &h[c + 1]))))
		return;
	while ((c = 2 * hole + 1) < n) {
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		h[hole] = h[c];
		hole = c;
	}
	while (hole > i) {
		size_t up = (hole - 1) / 2;

		if (!before(&x, &h[up]))
			break;
		h[hole] = h[up];
		hole = up;
	}
	h[hole] = x;
}

/* A run time: mono time + the process's shift, at least 0. */
static uint64_t run_time(const struct stream *s, int proc, uint64_t time_ns)
{
	int64_t t = (int64_t)(time_ns + (uint64_t)s->procs[proc].shift);

	return t > 0 ? (uint64_t)t : 0;
}

static void set_key(struct stream *s, struct cursor *c)
{
	c->key = run_time(s, c->proc, c->due.time_ns);
	c->rank = !is_free(c->due.type);
}

/* c moved to a new rec: finds its due, looking ahead only past the last. */
static void find_due(struct cursor *c)
{
	struct trace_iter ahead;
	struct trace_rec r;

	if (is_state(c->rec.type)) {
		c->due = due_at(&c->rec);
		return;
	}
	if (c->rec.offset < c->due.offset)
		return;         /* still before the state record found before */
	ahead = c->it;
	while (trace_next_in_slab(&ahead, &r))
		if (is_state(r.type)) {
			c->due = due_at(&r);
			return;
		}
	c->due = due_self(&c->rec);
}

/* c starts on slab i. */
static void cursor_at(struct stream *s, struct cursor *c, size_t i)
{
	c->it = s->starts[i].it;
	c->rec = s->starts[i].rec;
	c->due = s->starts[i].due;
	c->proc = s->starts[i].proc;
	c->order = (uint32_t)i;
	set_key(s, c);
}

static struct hent hent_of(const struct cursor *c, uint32_t ci)
{
	struct hent h = { c->key, c->order, ci, c->rank };

	return h;
}

void stream_rewind(struct stream *s)
{
	s->nheap = 0;
	for (size_t i = 0; i < s->nstarts; i++)
		if (!s->starts[i].chained) {
			struct cursor *c = &s->cur[s->nheap];

			cursor_at(s, c, i);
			s->heap[s->nheap] = hent_of(c, (uint32_t)s->nheap);
			s->nheap++;
		}
	s->top_given = 0;
	for (size_t i = s->nheap / 2; i-- > 0;)
		sift_down(s, i);
	s->done = 0;
	if (s->progress)
		s->progress(s->progress_ctx, 0, s->nrecords);
}

void stream_set_progress(struct stream *s, stream_progress_fn fn, void *ctx)
{
	s->progress = fn;
	s->progress_ctx = ctx;
}

int stream_next(struct stream *s, struct srec *out)
{
	struct cursor *c;

	if (s->top_given) {
		c = &s->cur[s->heap[0].ci];
		s->top_given = 0;
		if (trace_next_in_slab(&c->it, &c->rec)) {
			find_due(c);
			set_key(s, c);
			s->heap[0] = hent_of(c, s->heap[0].ci);
		} else {
			int64_t next = s->starts[c->order].next;

			trace_slab_done(s->procs[c->proc].t, &c->rec);
			if (next >= 0) {
				cursor_at(s, c, (size_t)next);
				s->heap[0] = hent_of(c, s->heap[0].ci);
			} else {
				s->heap[0] = s->heap[--s->nheap];
			}
		}
		if (s->nheap)
			sift_down(s, 0);
	}
	if (!s->nheap)
		return 0;
	c = &s->cur[s->heap[0].ci];
	out->rec = c->rec;
	trace_rec_rebind(&out->rec, &c->it);
	out->proc = c->proc;
	out->t = is_state(c->rec.type) ? c->key : run_time(s, c->proc, c->rec.time_ns);
	s->top_given = 1;
	if (++s->done % STREAM_PROGRESS_EVERY == 0 && s->progress)
		s->progress(s->progress_ctx, s->done, s->nrecords);
	return 1;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *n;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * elem);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/*
 * Collects one trace's slab starts and long records from what trace_open()
 * noted while it validated the file: no second walk of the records.
 */
static int scan_trace(struct stream *s, int pi, size_t *cap_starts, int64_t *first_wall,
		      int64_t *last_wall)
{
	struct sproc *p = &s->procs[pi];
	const struct mt_file_header *h = trace_header(p->t);
	const struct trace_stats *ts = trace_stats(p->t);
	const struct trace_slab_info *si;
	const struct mt_driver *drv = trace_driver(p->t);
	const void *const *recs;
	size_t nsi;
	uint32_t nrecs;
	int64_t wshift = (int64_t)(h->start_wall_ns - h->start_mono_ns);

	p->process = trace_process(p->t);
	*first_wall = (int64_t)h->start_wall_ns;
	*last_wall = ts->last_wall_ns;
	si = trace_slabs(p->t, &nsi);
	if (grow((void **)&s->starts, cap_starts, s->nstarts + nsi, sizeof(*s->starts)))
		return -1;
	for (size_t k = 0; k < nsi; k++) {
		struct slab_start *st = &s->starts[s->nstarts++];
		/* unsigned: hostile times must wrap, not overflow (found by fuzzing) */
		int64_t w = (int64_t)(si[k].first.time_ns + (uint64_t)wshift);

		st->it = si[k].it;
		st->rec = si[k].first;
		trace_rec_rebind(&st->rec, &st->it);
		st->due.time_ns = si[k].due_time;
		st->due.offset = si[k].due_offset;
		st->due.type = si[k].due_type;
		st->proc = pi;
		st->min_t = si[k].min_t;
		st->max_t = si[k].max_t;
		st->next = -1;
		st->chained = 0;
		if (w < *first_wall)
			*first_wall = w;
	}
	s->nrecords += ts->records;
	s->nshm += ts->shm;
	p->events = ts->events;
	if (drv)
		p->driver_version = drv->driver_version;
	recs = trace_long_records(p->t, MT_REC_MODULE, &nrecs);
	if (nrecs) {
		if (!(p->modules = malloc(nrecs * sizeof(void *))))
			return -1;
		memcpy(p->modules, recs, nrecs * sizeof(void *));
		p->nmodules = nrecs;
	}
	recs = trace_long_records(p->t, MT_REC_NOTE, &nrecs);
	if (nrecs) {
		if (!(p->notes = malloc(nrecs * sizeof(void *))))
			return -1;
		memcpy(p->notes, recs, nrecs * sizeof(void *));
		p->nnotes = nrecs;
	}
	recs = trace_long_records(p->t, MT_REC_STACK, &nrecs);
	for (uint32_t k = 0, cap_stk = 0; k < nrecs; k++) {
		const struct mt_stack *st = recs[k];

		if (st->id >= MAX_STACK_ID)
			continue;
		if (st->id >= p->nstacks) {
			size_t old = cap_stk, cap = cap_stk;

			if (grow((void **)&p->stacks, &cap, st->id + 1, sizeof(void *)))
				return -1;
			cap_stk = (uint32_t)cap;
			memset(p->stacks + old, 0, (cap_stk - old) * sizeof(void *));
			p->nstacks = cap_stk;
		}
		p->stacks[st->id] = st;
	}
	return 0;
}

static int cmp_start(const void *x, const void *y, void *ctx)
{
	const struct slab_start *st = ctx, *a = &st[*(const size_t *)x], *b = &st[*(const size_t *)y];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->rec.tid != b->rec.tid)
		return a->rec.tid < b->rec.tid ? -1 : 1;
	if (a->min_t != b->min_t)
		return a->min_t < b->min_t ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/*
 * Links each slab to the next one of the same thread when every record of
 * the first is no later than every record of the second: one cursor then
 * merges them one after the other, so the heap holds a cursor per thread
 * writing at the time rather than one per slab (log2 of 5,000 slabs of a
 * 10 M-event trace was a dozen levels per record). Slabs whose times
 * overlap (a damaged or hostile file) stay cursors of their own.
 */
static int chain_slabs(struct stream *s)
{
	size_t *ix = malloc((s->nstarts ? s->nstarts : 1) * sizeof(*ix));

	if (!ix)
		return -1;
	for (size_t i = 0; i < s->nstarts; i++)
		ix[i] = i;
	qsort_r(ix, s->nstarts, sizeof(*ix), cmp_start, s->starts);
	for (size_t k = 1; k < s->nstarts; k++) {
		struct slab_start *a = &s->starts[ix[k - 1]], *b = &s->starts[ix[k]];

		if (a->proc == b->proc && a->rec.tid == b->rec.tid && a->max_t <= b->min_t) {
			a->next = (int64_t)ix[k];
			b->chained = 1;
		}
	}
	free(ix);
	return 0;
}

struct stream *stream_open(struct trace **traces, int n, char *err, size_t errlen)
{
	struct stream *s = calloc(1, sizeof(*s));
	size_t cap_starts = 0;
	int64_t origin = INT64_MAX, end = INT64_MIN;

	if (!s || !(s->procs = calloc((size_t)n, sizeof(*s->procs))))
		goto nomem;
	s->nprocs = n;
	for (int i = 0; i < n; i++) {
		int64_t fw, lw;

		s->procs[i].t = traces[i];
		if (scan_trace(s, i, &cap_starts, &fw, &lw))
			goto nomem;
		s->procs[i].first_t = (uint64_t)fw;   /* made relative below */
		s->procs[i].last_t = (uint64_t)lw;
		if (fw < origin)
			origin = fw;
		if (lw > end)
			end = lw;
	}
	if (n == 0)
		origin = end = 0;
	s->origin_wall = (uint64_t)origin;
	/* unsigned: hostile times must wrap, not overflow (found by fuzzing) */
	s->duration = (uint64_t)end - (uint64_t)origin;
	for (int i = 0; i < n; i++) {
		const struct mt_file_header *h = trace_header(traces[i]);
		struct sproc *p = &s->procs[i];

		p->shift = (int64_t)(h->start_wall_ns - h->start_mono_ns - (uint64_t)origin);
		p->first_t -= (uint64_t)origin;
		p->last_t -= (uint64_t)origin;
	}
	if (chain_slabs(s))
		goto nomem;
	s->heap = calloc(s->nstarts ? s->nstarts : 1, sizeof(*s->heap));
	s->cur = calloc(s->nstarts ? s->nstarts : 1, sizeof(*s->cur));
	if (!s->heap || !s->cur)
		goto nomem;
	stream_rewind(s);
	return s;
nomem:
	snprintf(err, errlen, "out of memory");
	stream_close(s);
	errno = ENOMEM;
	return NULL;
}

void stream_close(struct stream *s)
{
	if (!s)
		return;
	for (int i = 0; !s->external && s->procs && i < s->nprocs; i++) {
		free(s->procs[i].modules);
		free(s->procs[i].notes);
		free(s->procs[i].stacks);
	}
	if (!s->external)
		free(s->procs);
	free(s->starts);
	free(s->heap);
	free(s->cur);
	free(s);
}

struct stream *stream_of_procs(struct sproc *procs, int n, uint64_t origin_wall,
			       uint64_t duration)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->external = 1;
	stream_set_procs(s, procs, n, duration);
	s->origin_wall = origin_wall;
	return s;
}

void stream_set_procs(struct stream *s, struct sproc *procs, int n, uint64_t duration)
{
	s->procs = procs;
	s->nprocs = n;
	s->duration = duration;
}

int stream_nprocs(const struct stream *s) { return s->nprocs; }
const struct sproc *stream_proc(const struct stream *s, int i) { return &s->procs[i]; }
uint64_t stream_origin_wall(const struct stream *s) { return s->origin_wall; }
uint64_t stream_duration(const struct stream *s) { return s->duration; }
uint64_t stream_shm_records(const struct stream *s) { return s->external ? UINT64_MAX : s->nshm; }

const struct mt_stack *stream_stack(const struct stream *s, int proc, uint32_t id)
{
	const struct sproc *p = &s->procs[proc];

	return id < p->nstacks ? p->stacks[id] : NULL;
}
