/*
 * follow.c - follows the traces of a running job and feeds their records
 * to the analysis pass in time order (follow.h).
 *
 * How it works: each trace file is read with pread, never mapped (the
 * writer cuts the file's unused tail at exit, which would fault a
 * mapping). A slab in use is copied into a buffer of its own, from the end
 * of its last complete record on, and decoded by the reader's resumable
 * slab walker (trace_slab_iter): a record is complete once its head is
 * written, and pread copies in address order, so a head read as non-zero
 * has its body before it in the copy. Side records (process, modules,
 * stacks, exit) are taken as they are read; state records wait in their
 * slab's buffer, one per slab at the head of a heap ordered by the merge
 * order of stream.h (stream_orders_state, stream_order_before: run time, a
 * free first, process, slab), the one `memtrace report` merges by, and
 * leave it up to the watermark. A slab's buffer is freed once the slab is
 * done (its thread went on to another slab, or the process ended) and its
 * last record fed.
 *
 * Framework records: FW events are state records like the others and go
 * to the same pass (account.c hands them to framework.c's fw_record), in
 * the same order. Their stacks and notes (FW_STACK, FW_INFO) are side
 * records in the slab of the thread that handed a batch over, possibly
 * behind a record waiting in the heap, so a second walker per slab (ahead)
 * runs over every byte read as soon as it is read: it copies them, and
 * notes the times of all the records read (the process's first and last,
 * as the reader's trace_stats gives them to the report). framework.c reads
 * them through the process's struct trace, as for the report: the
 * follower keeps one in memory per process (trace_open_buffer) holding
 * only those records, made again when more of them came. An FW event
 * whose stack has not been read yet waits (with everything after it) for
 * the next poll, unless its process ended or the poll flushes.
 *
 * Range names (STRING records, model/ranges.h) are side records that the
 * pass itself keeps: each goes to it as soon as it is read (the ranges
 * that name it come after it in its slab), or, read before the pass
 * began, at its start.
 *
 * Damage: slabs and records are validated by the reader's own rules
 * (trace_slab_iter, the checks `memtrace report` makes); where the report
 * would refuse the rest of a trace, the records before it are fed, none
 * after, its process is over and marked damaged (damaged()), and the
 * reader's warning line is given once (follow_warning).
 *
 * A process that ended (its exit record, or its pid gone) and whose
 * records were all fed leaves the run's devices just before the next
 * record of the run after its last one, as the report's pass does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live/follow.h"
#include "model/analysis.h"
#include "model/symbols.h"
#include "trace/stream.h"
#include "trace/trace-read.h"

struct fslab {
	struct ftrace *ft;
	uint64_t index;             /* slab number in its file */
	unsigned char *buf;         /* slab_size bytes, NULL once done */
	struct trace_slab_iter it;
	struct trace_slab_iter ahead;   /* every record read, at once */
	int final;                  /* the last read got all it will hold */
	size_t consumed;            /* start of the last record read */
	uint32_t tid;
	int superseded;             /* its thread has a later slab */
	int done;                   /* nothing more will come */
	int waiting;                /* the walker found no complete record */
	int has_peek;
	struct trace_rec peek;      /* the next state record */
	uint64_t key, last_key;
	uint8_t rank;
	struct trace_span span;     /* of the records read (ahead) */
	int nread;                  /* records read (ahead) */
	int spanned;                /* its span is in its file's */
};

struct ftrace {
	char *path;
	int fd;
	struct mt_file_header h;
	int proc;                   /* -1 until its process record is read */
	int fi;                     /* index in files */
	struct fslab **slabs;       /* by slab number; NULL: not started */
	uint64_t nslabs, first_open;
	int exit_seen, gone, finished;
	void *process;              /* a copy of its PROCESS record */
	void **copies;              /* copies of its modules and stacks */
	size_t ncopies, cap_copies;
	struct trace_rec *strings;  /* STRING records read before the pass
	                               began (copies): fed at its start */
	size_t nstrings, cap_strings;
	char cmd[64];
	/* the run times of all its records read (ahead), and the slab of the
	   last one */
	uint64_t min_t, max_t, max_slab;
	/* the trace in memory that the model reads the process's side
	   records from (FW_STACK, FW_INFO, PYCODE): appended to, never moved
	   (symbols.c keeps pointers into it), a region of side_cap bytes */
	unsigned char *side;
	size_t side_len, side_cap, side_pos;
	void **old_sides;           /* regions outgrown: still pointed into */
	size_t *old_caps, nold;
	uint8_t *fw_known;          /* FW stack ids read */
	size_t cap_known;
	int fw_dirty;
	struct trace *fwt;
	size_t npeek;               /* its slabs with a record in the heap */
	int fed_out;                /* ended, and every record fed */
	int released;               /* left the run's devices */
	/* the reader's checks (trace-read.h), as the records are read */
	struct trace_stats st;      /* torn, truncated, overlapping */
	struct trace_span *spans;   /* of its slabs done, with records */
	size_t nspans, cap_spans;
	int exits;                  /* EXIT records read */
	char damage[512];           /* what makes the trace corrupt, "" none */
	uint64_t damage_off;        /* its file offset: nothing of the file
	                               from there on is fed */
	int damage_final;           /* a bad record or a second EXIT: nothing
	                               is read after it. A second FW_STACK is
	                               damage too, but trace_open() says it
	                               only when no such record follows: the
	                               file is still read for one */
	unsigned said;              /* warnings given (follow_warning), bits */
};

struct follow {
	char *dir;                  /* the folder to look in */
	char *stem, *base;          /* STEM and STEM.bin when following a trace */
	uint64_t run_id;            /* of the named trace, once read (0: any) */
	int run_id_given;           /* follow_set_run_id() */
	struct ftrace **files;
	int nfiles;
	struct sproc *procs;        /* by proc index */
	struct follow_proc *info;
	int *proc_file;             /* file of each proc */
	int nprocs, cap_procs;
	struct stream *s;
	struct analysis *a;
	int64_t origin;             /* run origin, ns since the epoch */
	int origin_set;
	struct fslab **heap;
	size_t nheap, cap_heap;
	uint64_t fed, late, bytes_read, last_fed_key, last_fw_key;
	int pending;                /* processes fed out, not released yet */
	char host[256];
	struct shm_op *shm;
	size_t nshm, cap_shm;
	struct symbols *sy;
	int missed;                 /* traces the last look could not open:
	                               no file descriptor left */
	int closed;                 /* traces closed (ended) by this poll */
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *n;

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

/* The records the merge orders (stream.h): events, pools, memory samples,
   shared memory operations and framework events. */
#define is_state stream_orders_state

/* A slab's place in the merge order of stream.h: by process, then file
   order. */
static uint64_t slab_order(const struct fslab *sl)
{
	return (uint64_t)(uint32_t)sl->ft->proc << 40 | (sl->index & ((1ull << 40) - 1));
}

/* --- the heap of slabs with a record waiting ------------------------------- */

static int before(const struct fslab *a, const struct fslab *b)
{
	return stream_order_before(a->key, a->rank, slab_order(a), b->key, b->rank, slab_order(b));
}

static void heap_up(struct follow *f, size_t i)
{
	while (i > 0) {
		size_t up = (i - 1) / 2;
		struct fslab *t;

		if (!before(f->heap[i], f->heap[up]))
			return;
		t = f->heap[i];
		f->heap[i] = f->heap[up];
		f->heap[up] = t;
		i = up;
	}
}

static void heap_down(struct follow *f, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct fslab *t;

		if (l < f->nheap && before(f->heap[l], f->heap[m]))
			m = l;
		if (l + 1 < f->nheap && before(f->heap[l + 1], f->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = f->heap[i];
		f->heap[i] = f->heap[m];
		f->heap[m] = t;
		i = m;
	}
}

static int heap_push(struct follow *f, struct fslab *sl)
{
	if (grow((void **)&f->heap, &f->cap_heap, f->nheap + 1, sizeof(*f->heap)))
		return -1;
	f->heap[f->nheap++] = sl;
	sl->ft->npeek++;
	heap_up(f, f->nheap - 1);
	return 0;
}

/* --- processes -------------------------------------------------------------- */

static uint64_t run_time(const struct follow *f, const struct ftrace *ft, uint64_t mono)
{
	int64_t t = (int64_t)(mono + ft->h.start_wall_ns - ft->h.start_mono_ns - (uint64_t)f->origin);

	return t > 0 ? (uint64_t)t : 0;
}

static uint64_t now_run(const struct follow *f)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - f->origin);
}

/* The run's length so far: until now while a process may still write, else
   until the last record of the processes that ended. */
static uint64_t run_length(const struct follow *f)
{
	uint64_t end = 0;

	for (int i = 0; i < f->nprocs; i++) {
		if (!f->info[i].exited && !f->info[i].gone)
			return now_run(f);
		if (f->info[i].last_t > end)
			end = f->info[i].last_t;
	}
	return f->nprocs ? end : now_run(f);
}

static void *copy_rec(const struct trace_rec *r)
{
	void *p = malloc(r->size);

	if (p)
		memcpy(p, r->p, r->size);
	return p;
}

static int keep_copy(struct ftrace *ft, void *p)
{
	if (!p || grow((void **)&ft->copies, &ft->cap_copies, ft->ncopies + 1, sizeof(void *))) {
		free(p);
		return -1;
	}
	ft->copies[ft->ncopies++] = p;
	return 0;
}

/* The process ended: its last record is the last one read (the reader's
   last_t for the report). */
static void proc_ended(struct follow *f, struct ftrace *ft)
{
	f->procs[ft->proc].last_t = ft->max_t;
	f->procs[ft->proc].first_t = ft->min_t;
}

/* Makes ft a process of the run (its index is the next one). */
static int add_proc(struct follow *f, int fi)
{
	struct ftrace *ft = f->files[fi];
	size_t cap = (size_t)f->cap_procs;
	struct sproc *sp;
	struct follow_proc *in;

	if (grow((void **)&f->procs, &cap, (size_t)f->nprocs + 1, sizeof(*f->procs)))
		return -1;
	cap = (size_t)f->cap_procs;
	if (grow((void **)&f->info, &cap, (size_t)f->nprocs + 1, sizeof(*f->info)))
		return -1;
	cap = (size_t)f->cap_procs;
	if (grow((void **)&f->proc_file, &cap, (size_t)f->nprocs + 1, sizeof(int)))
		return -1;
	f->cap_procs = (int)cap;
	sp = &f->procs[f->nprocs];
	memset(sp, 0, sizeof(*sp));
	sp->process = ft->process;
	sp->shift = (int64_t)(ft->h.start_wall_ns - ft->h.start_mono_ns - (uint64_t)f->origin);
	sp->first_t = ft->min_t;
	sp->last_t = now_run(f);
	ft->fw_dirty = 1;
	in = &f->info[f->nprocs];
	memset(in, 0, sizeof(*in));
	in->path = ft->path;
	in->pid = ft->h.pid;
	in->rank = -1;
	in->cmdline = ft->cmd;
	if (ft->process) {
		const struct mt_process *p = ft->process;
		struct trace_bytes h, c, e;
		size_t n = 0;

		in->pid = p->pid;
		in->rank = p->rank;
		trace_process_strings(p, &h, &c, &e);
		in->local = h.len == strlen(f->host) && !memcmp(h.p, f->host, h.len);
		while (n < c.len && n + 1 < sizeof(ft->cmd) && c.p[n])
			n++;
		memcpy(ft->cmd, c.p, n);
		ft->cmd[n] = 0;
	}
	f->proc_file[f->nprocs] = fi;
	ft->proc = f->nprocs++;
	if (ft->damage[0]) {
		/* damaged before its process record was taken */
		in->damaged = 1;
		in->gone = !ft->exit_seen;
		proc_ended(f, ft);
	}
	if (!f->s) {
		f->s = stream_of_procs(f->procs, f->nprocs, (uint64_t)f->origin, now_run(f));
		if (!f->s)
			return -1;
	}
	stream_set_procs(f->s, f->procs, f->nprocs, now_run(f));
	if (f->a)
		return analysis_add_procs(f->a);
	return 0;
}


#define SIDE_HEADER 4096
#define SIDE_SLAB MT_SLAB_SIZE
#define SIDE_FIRST_CAP (4u << 20)

/* Room for need more bytes in the current slab of ft's trace in memory
   (a new slab, a larger region). -1 on memory failure. */
static int side_room(struct ftrace *ft, size_t need)
{
	if (ft->side && ft->side_pos + need <= SIDE_SLAB)
		return 0;
	if (!ft->side || ft->side_len + SIDE_SLAB > ft->side_cap) {
		size_t cap = ft->side_cap ? ft->side_cap * 2 : SIDE_FIRST_CAP;
		unsigned char *n = mmap(NULL, cap, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (n == MAP_FAILED)
			return -1;
		if (ft->side) {
			void *o = realloc(ft->old_sides, (ft->nold + 1) * sizeof(void *));
			void *c = realloc(ft->old_caps, (ft->nold + 1) * sizeof(size_t));

			if (o)
				ft->old_sides = o;
			if (c)
				ft->old_caps = c;
			if (!o || !c) {
				munmap(n, cap);
				return -1;
			}
			memcpy(n, ft->side, ft->side_len);
			ft->old_sides[ft->nold] = ft->side;
			ft->old_caps[ft->nold++] = ft->side_cap;
		} else {
			struct mt_file_header h = ft->h;

			h.header_size = SIDE_HEADER;
			h.slab_size = SIDE_SLAB;
			memcpy(n, &h, sizeof(h));
			ft->side_len = SIDE_HEADER;
		}
		ft->side = n;
		ft->side_cap = cap;
	}
	{
		/* each slab a thread of its own: their times never overlap one
		   of the same thread */
		struct mt_slab_header sh = { MT_SLAB_MAGIC,
					     (uint32_t)((ft->side_len - SIDE_HEADER) / SIDE_SLAB + 1), 0 };

		memcpy(ft->side + ft->side_len, &sh, sizeof(sh));
		ft->side_pos = sizeof(sh);
		ft->side_len += SIDE_SLAB;
	}
	return 0;
}

/*
 * A side record the model reads through the process's struct trace
 * (FW_STACK, FW_INFO: framework.c; PYCODE: symbols.c), appended to its
 * trace in memory; an FW_INFO after a TIMEBASE of its own time.
 */
static int keep_side(struct ftrace *ft, const struct trace_rec *r)
{
	size_t need = r->size + (r->type == MT_REC_FW_INFO ? sizeof(struct mt_timebase) : 0);
	unsigned char *at;

	if (r->size > SIDE_SLAB - sizeof(struct mt_slab_header) - sizeof(struct mt_timebase) ||
	    r->size % 8)
		return 0;
	if (side_room(ft, need))
		return -1;
	at = ft->side + ft->side_len - SIDE_SLAB + ft->side_pos;
	if (r->type == MT_REC_FW_INFO) {
		struct mt_timebase tb = { { MT_REC_TIMEBASE, sizeof(tb) / 8, 0, 0 }, 0, r->time_ns };
		struct mt_fw_info fi;

		memcpy(at, &tb, sizeof(tb));
		at += sizeof(tb);
		memcpy(at, r->p, r->size);
		memcpy(&fi, at, sizeof(fi));
		fi.time_delta = 0;
		memcpy(at, &fi, sizeof(fi));
	} else {
		memcpy(at, r->p, r->size);
	}
	ft->side_pos += need;
	if (r->type == MT_REC_FW_STACK) {
		uint32_t id = ((const struct mt_fw_stack *)r->p)->id;

		if (id < (16u << 20)) {
			size_t cap = ft->cap_known;

			if (grow((void **)&ft->fw_known, &cap, (size_t)id + 1, 1))
				return -1;
			memset(ft->fw_known + ft->cap_known, 0, cap - ft->cap_known);
			ft->cap_known = cap;
			ft->fw_known[id] = 1;
		}
	}
	ft->fw_dirty = 1;
	return 0;
}

/* Whether the FW stack of an FW event was read (or cannot come). */
static int fw_stack_read(const struct ftrace *ft, const struct trace_rec *r)
{
	uint32_t id = ((const struct mt_fw_event *)r->p)->stack_id;

	return !id || id >= (16u << 20) || ft->exit_seen || ft->gone ||
	       (id < ft->cap_known && ft->fw_known[id]);
}

/*
 * The trace is corrupt from file offset off on (its message in
 * ft->damage), where `memtrace report` refuses it: its records before that
 * are fed, none after, and its process is over (damaged); final: nothing
 * more is read (ftrace.damage_final). at: the slab it is in.
 */
static void damaged(struct follow *f, struct fslab *at, uint64_t off, int final)
{
	struct ftrace *ft = at->ft;

	if (!ft->gone || !ft->damage_off || off < ft->damage_off)
		ft->damage_off = off;
	ft->damage_final = final;
	ft->gone = 1;
	/* nothing more is read: what was is all there will be (the slab at
	   the damage is pumped next, up to it) */
	for (uint64_t k = ft->first_open; k < ft->nslabs; k++) {
		struct fslab *sl = ft->slabs[k];

		if (sl && sl != at) {
			sl->final = 1;
			if (sl->waiting && !sl->has_peek)
				sl->done = 1;
		}
	}
	if (ft->proc >= 0) {
		f->info[ft->proc].damaged = 1;
		if (!ft->exit_seen)
			f->info[ft->proc].gone = 1;
		proc_ended(f, ft);
	}
}

/* The walker ahead: every record read now, for its time, and the
   framework's side records. -1 on memory failure only. */
static int scan_ahead(struct follow *f, struct fslab *sl)
{
	struct ftrace *ft = sl->ft;
	struct trace_rec r;
	int rc;

	while (!ft->damage_final && (rc = trace_slab_iter_next(&sl->ahead, &r)) != 0) {
		uint64_t t;

		if (rc < 0) {
			snprintf(ft->damage, sizeof(ft->damage), "'%s': %s", ft->path, sl->ahead.err);
			damaged(f, sl, sl->ahead.file_off + sl->ahead.pos, 1);
			break;
		}
		/* what trace_open() refuses across records */
		if (r.type == MT_REC_EXIT && ft->exits++) {
			trace_second_exit(ft->damage, sizeof(ft->damage), ft->path, r.offset);
			damaged(f, sl, r.offset, 1);
			break;
		}
		if (r.type == MT_REC_FW_STACK) {
			uint32_t id = ((const struct mt_fw_stack *)r.p)->id;

			if (id < ft->cap_known && ft->fw_known[id]) {
				if (!ft->damage[0]) {
					trace_second_fw_stack(ft->damage, sizeof(ft->damage), ft->path,
							      r.offset, id);
					damaged(f, sl, r.offset, 0);
				}
				continue;   /* not in the trace in memory, which
				               would refuse it */
			}
		}
		trace_span_note(&sl->span, &r, !sl->nread++);
		t = run_time(f, ft, r.time_ns);

		if (t < ft->min_t)
			ft->min_t = t;
		if (t > ft->max_t || (t == ft->max_t && sl->index > ft->max_slab)) {
			ft->max_t = t;
			ft->max_slab = sl->index;
		}
		if ((r.type == MT_REC_FW_STACK || r.type == MT_REC_FW_INFO ||
		     r.type == MT_REC_PYCODE) && keep_side(ft, &r))
			return -1;
	}
	return 0;
}

/*
 * The process's trace in memory, opened again over what it holds now and
 * checked by trace_open_buffer() as any trace: what framework.c reads of a
 * process (trace_fw_stack_frames, trace_fw_info) and symbols.c of its
 * Python code is then what the report reads of its file. -1 on memory
 * failure.
 */
static int side_open(struct follow *f, struct ftrace *ft)
{
	struct trace *t;
	char err[256];

	if (!ft->side && side_room(ft, 0))
		return -1;
	t = trace_open_buffer(ft->side, ft->side_len, ft->path, err, sizeof(err));
	ft->fw_dirty = 0;
	if (!t)
		return ft->fwt ? 0 : -1;    /* cannot be: its records were checked */
	trace_close(ft->fwt);
	ft->fwt = t;
	f->procs[ft->proc].t = t;
	return 0;
}

/* A STRING record: to the pass now, or kept for its start. */
static int take_string(struct follow *f, struct ftrace *ft, const struct trace_rec *r)
{
	struct trace_rec c = *r;

	if (f->a) {
		struct srec sr = { *r, ft->proc, run_time(f, ft, r->time_ns) };

		return analysis_feed(f->a, &sr);
	}
	if (!(c.p = copy_rec(r)) ||
	    grow((void **)&ft->strings, &ft->cap_strings, ft->nstrings + 1, sizeof(c))) {
		free((void *)c.p);
		return -1;
	}
	ft->strings[ft->nstrings++] = c;
	return 0;
}

/* The STRING records kept until the pass began, to it. */
static int feed_strings(struct follow *f)
{
	for (int i = 0; i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];

		for (size_t k = 0; k < ft->nstrings; k++) {
			struct srec sr = { ft->strings[k], ft->proc, run_time(f, ft, ft->strings[k].time_ns) };

			if (analysis_feed(f->a, &sr))
				return -1;
			free((void *)ft->strings[k].p);
		}
		free(ft->strings);
		ft->strings = NULL;
		ft->nstrings = ft->cap_strings = 0;
	}
	return 0;
}

/* A side record: what the model looks up later, copied. */
static int take_side(struct follow *f, struct ftrace *ft, const struct trace_rec *r)
{
	struct sproc *sp = ft->proc >= 0 ? &f->procs[ft->proc] : NULL;

	switch (r->type) {
	case MT_REC_PROCESS:
		if (ft->process)
			break;
		if (!(ft->process = copy_rec(r)))
			return -1;
		/* known before its other records: host, pid, stacks */
		if (ft->proc < 0 && add_proc(f, ft->fi))
			return -1;
		break;
	case MT_REC_EXIT:
		ft->exit_seen = 1;
		if (ft->proc >= 0) {
			f->info[ft->proc].exited = 1;
			proc_ended(f, ft);
		}
		break;
	case MT_REC_FW_STACK: case MT_REC_FW_INFO:
		break;          /* taken by the walker ahead */
	case MT_REC_STRING:
		if (sp)
			return take_string(f, ft, r);
		break;
	case MT_REC_DRIVER:
		if (sp)
			sp->driver_version = ((const struct mt_driver *)r->p)->driver_version;
		break;
	case MT_REC_STACK: {
		const struct mt_stack *st = r->p;
		size_t cap;
		void *c;

		if (!sp || st->id >= (16u << 20))
			break;
		if (st->id >= sp->nstacks) {
			cap = sp->nstacks;
			if (grow((void **)&sp->stacks, &cap, (size_t)st->id + 1, sizeof(void *)))
				return -1;
			memset(sp->stacks + sp->nstacks, 0, (cap - sp->nstacks) * sizeof(void *));
			sp->nstacks = (uint32_t)cap;
		}
		if (sp->stacks[st->id])
			break;
		c = copy_rec(r);
		if (keep_copy(ft, c))
			return -1;
		sp->stacks[st->id] = c;
		break;
	}
	case MT_REC_MODULE: {
		size_t cap = sp ? sp->nmodules : 0;
		void *c;

		if (!sp)
			break;
		/* nmodules is also the capacity: grown one by one, rarely */
		if (grow((void **)&sp->modules, &cap, (size_t)sp->nmodules + 1, sizeof(void *)))
			return -1;
		c = copy_rec(r);
		if (keep_copy(ft, c))
			return -1;
		sp->modules[sp->nmodules++] = c;
		break;
	}
	}
	return 0;
}

/*
 * Reads the slab's records until its next state record (peek) or until
 * nothing complete is there; -1 on memory failure only (damage ends the
 * slab).
 */
static int pump(struct follow *f, struct fslab *sl)
{
	struct ftrace *ft = sl->ft;

	while (!sl->has_peek && !sl->done) {
		struct trace_rec r;
		int rc = trace_slab_iter_next(&sl->it, &r);

		if (rc == 0) {
			sl->waiting = 1;
			if (sl->final)
				sl->done = 1;
			return 0;
		}
		if (rc < 0 || (ft->damage[0] && r.offset >= ft->damage_off)) {
			sl->done = 1;
			break;
		}
		sl->waiting = 0;
		/* the start of the last record read: its size in the file is
		   not rec.size for a compact record (format 2), so the next copy
		   starts there and reads that one record's bytes again */
		sl->consumed = (size_t)(r.offset - sl->it.file_off);
		sl->tid = r.tid;
		if (!is_state(r.type)) {
			if (take_side(f, ft, &r))
				return -1;
			continue;
		}
		sl->peek = r;
		sl->has_peek = 1;
		sl->key = run_time(f, ft, r.time_ns);
		sl->rank = stream_rank(r.type);
		if (heap_push(f, sl))
			return -1;
	}
	return 0;
}

static void slab_free(struct fslab *sl)
{
	free(sl->buf);
	sl->buf = NULL;
}

/* Copies what slab k of ft gained and reads its new records. */
static int read_slab(struct follow *f, struct ftrace *ft, uint64_t k, uint64_t fsize)
{
	uint64_t ss = ft->h.slab_size, off = ft->h.header_size + k * ss;
	struct fslab *sl = ft->slabs[k];
	uint64_t want;
	ssize_t got;
	int final;

	if (!sl) {
		struct mt_slab_header sh;

		if (fsize < off + sizeof(sh) || pread(ft->fd, &sh, sizeof(sh), (off_t)off) !=
		    (ssize_t)sizeof(sh) || sh.magic != MT_SLAB_MAGIC)
			return 0;
		sl = calloc(1, sizeof(*sl));
		if (!sl || !(sl->buf = malloc(ss))) {
			free(sl);
			return -1;
		}
		sl->ft = ft;
		sl->waiting = 1;
		sl->index = k;
		sl->tid = sh.tid;
		ft->slabs[k] = sl;
		trace_slab_iter_init(&sl->it, sl->buf, 0, ft->h.version);
		sl->it.slab_size = ss;
		sl->it.file_off = off;
		sl->ahead = sl->it;
		/* the thread went on to this slab: its earlier ones are full */
		for (uint64_t j = ft->first_open; j < k; j++)
			if (ft->slabs[j] && ft->slabs[j]->tid == sh.tid)
				ft->slabs[j]->superseded = 1;
	}
	if (sl->done)
		return 0;
	/* nothing more can come once this read is done: the thread was on a
	   later slab, or the process ended, before it */
	final = sl->superseded || ft->exit_seen || ft->gone;
	/* from the start of the last record read: a record waiting in the
	   heap is there, and its bytes do not change */
	want = off + ss <= fsize ? ss : fsize > off ? fsize - off : 0;
	if (want > sl->consumed) {
		got = pread(ft->fd, sl->buf + sl->consumed, want - sl->consumed,
			    (off_t)(off + sl->consumed));
		if (got > 0) {
			f->bytes_read += (uint64_t)got;
			trace_slab_iter_more(&sl->it, sl->consumed + (size_t)got);
			trace_slab_iter_more(&sl->ahead, sl->consumed + (size_t)got);
		}
	}
	if (scan_ahead(f, sl) < 0)
		return -1;
	sl->final = final;
	if (pump(f, sl) < 0)
		return -1;
	if (final && sl->waiting)
		sl->done = 1;
	return 0;
}

/* --- files ------------------------------------------------------------------ */

static int known(const struct follow *f, const char *path)
{
	for (int i = 0; i < f->nfiles; i++)
		if (!strcmp(f->files[i]->path, path))
			return 1;
	return 0;
}

static int wanted_name(const struct follow *f, const char *name)
{
	size_t n = strlen(name), s;

	if (!f->stem)
		return n > 4 && !strcmp(name + n - 4, ".bin");
	s = strlen(f->stem);
	if (!strcmp(name, f->base))
		return 1;
	return n > s + 5 && !strncmp(name, f->stem, s) && name[s] == '.' &&
	       !strcmp(name + n - 4, ".bin");
}

/* Opens path if it is a trace of the run. */
static int try_file(struct follow *f, const char *path, int named)
{
	struct mt_file_header h;
	struct ftrace *ft;
	size_t cap = (size_t)f->nfiles;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		/* no descriptor left: looked for again once ended traces are
		   closed */
		if (errno == EMFILE || errno == ENFILE)
			f->missed++;
		return 0;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, MT_MAGIC, sizeof(h.magic)) || h.version == 0 ||
	    h.version > MT_FORMAT_VERSION || h.header_size < MT_FILE_HEADER_SIZE ||
	    h.header_size % 4096 || h.slab_size < 4096 || h.slab_size > (1u << 24) ||
	    (h.slab_size & (h.slab_size - 1))) {
		close(fd);
		return 0;
	}
	if (named || (!f->run_id && !f->nfiles && !f->run_id_given))
		f->run_id = h.run_id;
	else if (f->run_id && h.run_id != f->run_id) {
		close(fd);
		return 0;
	}
	ft = calloc(1, sizeof(*ft));
	if (!ft || !(ft->path = strdup(path)) ||
	    grow((void **)&f->files, &cap, (size_t)f->nfiles + 1, sizeof(*f->files))) {
		if (ft)
			free(ft->path);
		free(ft);
		close(fd);
		return -1;
	}
	ft->fd = fd;
	ft->fi = f->nfiles;
	ft->h = h;
	ft->proc = -1;
	if (!f->origin_set || (int64_t)h.start_wall_ns < f->origin) {
		/* a later file that started earlier moves nothing already fed:
		   only the first files set the origin */
		if (!f->origin_set)
			f->origin = (int64_t)h.start_wall_ns;
		f->origin_set = 1;
	}
	ft->min_t = ft->max_t = run_time(f, ft, h.start_mono_ns);
	f->files[f->nfiles++] = ft;
	return 0;
}

static int discover(struct follow *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, was = f->missed;

	f->missed = 0;
	if (f->stem && !f->nfiles) {
		/* the named trace first: it gives the run id (a parent that
		   makes no CUDA call has none: its workers' traces are taken) */
		snprintf(path, sizeof(path), "%s/%s", f->dir, f->base);
		if (try_file(f, path, 1) < 0)
			rc = -1;
	}
	if (!d) {
		/* no descriptor for the folder either: what was missed still is */
		if (errno == EMFILE || errno == ENFILE)
			f->missed = was > f->missed ? was : f->missed ? f->missed : 1;
		return rc;
	}
	while ((de = readdir(d))) {
		if (!wanted_name(f, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, de->d_name);
		if (known(f, path))
			continue;
		if (grow((void **)&names, &cap, n + 1, sizeof(char *)) || !(names[n] = strdup(path))) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	/* in name order, so process numbers do not depend on the directory */
	for (size_t i = 0; i + 1 < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < n; i++) {
		if (!rc && try_file(f, names[i], 0) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Reads what ft gained. */
static int read_file(struct follow *f, int fi)
{
	struct ftrace *ft = f->files[fi];
	struct stat st;
	uint64_t n, ss = ft->h.slab_size;
	int just_known = 0;

	if (ft->finished || ft->damage_final || fstat(ft->fd, &st) < 0)
		return 0;
	n = (uint64_t)st.st_size > ft->h.header_size ?
	    ((uint64_t)st.st_size - ft->h.header_size + ss - 1) / ss : 0;
	if (n > ft->nslabs) {
		void *g = realloc(ft->slabs, n * sizeof(*ft->slabs));

		if (!g)
			return -1;
		ft->slabs = g;
		memset(ft->slabs + ft->nslabs, 0, (n - ft->nslabs) * sizeof(*ft->slabs));
		ft->nslabs = n;
	}
	if (ft->proc < 0) {
		just_known = 1;
		/* the process record comes first in slab 0: the process is known
		   (host, pid) before any of its records is fed */
		if (!ft->nslabs || read_slab(f, ft, 0, (uint64_t)st.st_size) < 0)
			return ft->nslabs ? -1 : 0;
		/* a trace older than process records: known at its first event */
		if (ft->proc < 0 && (!ft->slabs[0] || !ft->slabs[0]->has_peek))
			return 0;
		if (ft->proc < 0 && add_proc(f, fi))
			return -1;
	}
	/* slab 0 was just read when the process became known */
	for (uint64_t k = ft->first_open + (just_known && !ft->first_open);
	     k < ft->nslabs && !ft->damage_final; k++)
		if (read_slab(f, ft, k, (uint64_t)st.st_size) < 0)
			return -1;
	return 0;
}

/*
 * A slab done, before its buffer goes: the reader's checks of a slab as a
 * whole (trace_open() makes them once it walked the file): a torn record
 * at its end, and whether it repeats an earlier slab of its thread.
 * -1 on memory failure.
 */
static int slab_checked(struct ftrace *ft, struct fslab *sl)
{
	sl->spanned = 1;
	if (trace_slab_torn(&sl->ahead))
		ft->st.torn++;
	if (!sl->nread)
		return 0;
	if (grow((void **)&ft->spans, &ft->cap_spans, ft->nspans + 1, sizeof(*ft->spans)))
		return -1;
	if (trace_span_summed(&sl->span))
		sl->span.sum = trace_slab_sum(sl->buf, sl->ahead.avail, ft->h.version);
	ft->spans[ft->nspans++] = sl->span;
	ft->st.overlapping = trace_count_overlaps(ft->spans, ft->nspans, &ft->st.overlap_tid);
	return 0;
}

/* The file is over (closed): a length that cuts a slab, as the reader
   says it. */
static void file_checked(struct ftrace *ft)
{
	struct stat st;
	uint64_t ss = ft->h.slab_size;

	if (fstat(ft->fd, &st) < 0 || (uint64_t)st.st_size < ft->h.header_size)
		return;
	ft->st.file_size = (uint64_t)st.st_size;
	ft->st.cut_bytes = ((uint64_t)st.st_size - ft->h.header_size) % ss;
	ft->st.truncated = ft->st.cut_bytes != 0;
}

/* Marks what will not grow any more, and frees what is done. -1 on memory
   failure. */
static int settle_file(struct follow *f, struct ftrace *ft)
{
	int open = 0;

	if (ft->proc >= 0 && !ft->exit_seen && !ft->gone && f->info[ft->proc].local &&
	    kill((pid_t)f->info[ft->proc].pid, 0) < 0 && errno == ESRCH) {
		ft->gone = 1;
		f->info[ft->proc].gone = 1;
		proc_ended(f, ft);
		/* one more read after the pid is gone: then nothing can come */
		return 0;
	}
	for (uint64_t k = ft->first_open; k < ft->nslabs; k++) {
		struct fslab *sl = ft->slabs[k];

		if (!sl)
			continue;
		if (sl->done && !sl->spanned && sl->buf && slab_checked(ft, sl) < 0)
			return -1;
		if (sl->done && !sl->has_peek)
			slab_free(sl);
		if (!sl->done || sl->has_peek)
			open = 1;
		if (!open && k == ft->first_open) {
			/* never looked at again: memory follows the open slabs */
			ft->first_open = k + 1;
			free(sl);
			ft->slabs[k] = NULL;
		}
	}
	if (!open && (ft->exit_seen || ft->gone) && ft->proc >= 0 && !ft->finished) {
		ft->finished = 1;
		if (!ft->damage[0])
			file_checked(ft);
		close(ft->fd);
		ft->fd = -1;
		f->closed++;
	}
	return 0;
}

/* The time up to which every record has been read. */
static uint64_t watermark(const struct follow *f)
{
	uint64_t now = now_run(f), floor = now > FOLLOW_GRACE_NS ? now - FOLLOW_GRACE_NS : 0;
	uint64_t w = floor;
	int any = 0;

	for (int i = 0; i < f->nfiles; i++) {
		const struct ftrace *ft = f->files[i];

		if (ft->finished || ft->exit_seen || ft->gone)
			continue;
		for (uint64_t k = ft->first_open; k < ft->nslabs; k++) {
			const struct fslab *sl = ft->slabs[k];
			uint64_t seen;

			if (!sl || sl->done || sl->has_peek)
				continue;
			seen = sl->last_key > floor ? sl->last_key : floor;
			if (!any || seen < w)
				w = seen;
			any = 1;
		}
	}
	return w;
}

static int keep_shm(struct follow *f, const struct srec *r)
{
	struct shm_op *o;
	char *name;

	if (grow((void **)&f->shm, &f->cap_shm, f->nshm + 1, sizeof(*f->shm)))
		return -1;
	o = &f->shm[f->nshm];
	shm_op_from_rec(&r->rec, r->proc, r->t, o);
	name = malloc(o->name_len ? o->name_len : 1);
	if (!name)
		return -1;
	memcpy(name, o->name, o->name_len);
	o->name = name;
	f->nshm++;
	return 0;
}

/* Segments of a known caching allocator, as `memtrace report` tells them. */
static int caching_cb(void *ctx, int proc, uint32_t stack)
{
	struct follow *f = ctx;

	return f->sy ? sym_is_caching(f->sy, f->s, proc, stack) : 0;
}

/* ft ended and each of its records read was fed: it leaves the run's
   devices before the next record after its last one (release_before). */
static void fed_out_check(struct follow *f, struct ftrace *ft)
{
	if (ft->fed_out || ft->npeek || !(ft->exit_seen || ft->gone))
		return;
	for (uint64_t k = ft->first_open; k < ft->nslabs; k++)
		if (ft->slabs[k] && !ft->slabs[k]->done && !ft->slabs[k]->waiting)
			return;
	ft->fed_out = 1;
	f->pending += !ft->released;
}

/*
 * Before the record at the top of sl: the processes over by then leave
 * the run's devices, as the report's pass lets a process go after its last
 * record when records of others follow (account.c, proc_exit()).
 */
static int release_before(struct follow *f, const struct fslab *sl)
{
	for (int i = 0; f->pending && i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];

		if (!ft->fed_out || ft->released || ft == sl->ft || ft->proc < 0)
			continue;
		if (!stream_order_before(ft->max_t, 1, (uint64_t)(uint32_t)ft->proc << 40 | ft->max_slab,
					 sl->key, sl->rank, slab_order(sl)))
			continue;
		analysis_proc_gone(f->a, ft->proc, ft->max_t);
		ft->released = 1;
		f->pending--;
	}
	return 0;
}

static long poll_once(struct follow *f, int flush, char *err, size_t errlen)
{
	uint64_t w;
	long n = 0;

	if (discover(f) < 0)
		goto nomem;
	for (int i = 0; i < f->nfiles; i++)
		if (read_file(f, i) < 0)
			goto nomem;
	if (f->s)
		stream_set_procs(f->s, f->procs, f->nprocs, run_length(f));
	if (f->s && !f->a) {
		f->a = analysis_begin(f->s, caching_cb, f, err, errlen);
		if (!f->a)
			return -1;
		if (feed_strings(f))
			goto nomem;
	} else if (f->a && analysis_add_procs(f->a)) {
		goto nomem;
	}
	for (int i = 0; i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];

		if (ft->proc >= 0 && (ft->fw_dirty || !ft->fwt) && side_open(f, ft) < 0)
			goto nomem;
		/* a running process goes on: the framework's model keeps it on
		   the run's devices (the report's last_t once it ended) */
		if (ft->proc >= 0 && !ft->exit_seen && !ft->gone)
			f->procs[ft->proc].last_t = now_run(f) > ft->max_t ? now_run(f) : ft->max_t;
	}
	w = flush ? UINT64_MAX : watermark(f);
	while (f->nheap && f->heap[0]->key <= w) {
		struct fslab *sl = f->heap[0];
		struct ftrace *ft = sl->ft;
		struct srec r;
		int fw = sl->peek.type == MT_REC_FW_EVENT;

		/* its stack first: the rest waits for the next poll */
		if (fw && !flush && !fw_stack_read(ft, &sl->peek))
			break;
		if (release_before(f, sl) < 0)
			goto nomem;
		r.rec = sl->peek;
		r.proc = ft->proc;
		r.t = sl->key;
		/* FW events come in batches of earlier times: late among
		   themselves only */
		if (r.t < (fw ? f->last_fw_key : f->last_fed_key))
			f->late++;
		else if (fw)
			f->last_fw_key = r.t;
		else
			f->last_fed_key = r.t;
		if (analysis_feed(f->a, &r) || (r.rec.type == MT_REC_SHM && keep_shm(f, &r)))
			goto nomem;
		f->info[r.proc].last_t = r.t;
		f->procs[r.proc].events += r.rec.type >= MT_REC_ALLOC && r.rec.type <= MT_REC_FREE_EX;
		f->fed++;
		n++;
		sl->last_key = sl->key;
		sl->has_peek = 0;
		ft->npeek--;
		f->heap[0] = f->heap[--f->nheap];
		if (f->nheap)
			heap_down(f, 0);
		if (pump(f, sl) < 0)
			goto nomem;
		fed_out_check(f, ft);
	}
	for (int i = 0; i < f->nfiles; i++)
		if (settle_file(f, f->files[i]) < 0)
			goto nomem;
	/* a process over gives its memory back to the run's devices when
	   another one goes on after it (report: "when records of other
	   processes follow") */
	for (int i = 0; f->a && i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];
		int after = 0;

		if (!ft->finished || ft->proc < 0 || ft->released)
			continue;
		for (int j = 0; j < f->nfiles && !after; j++) {
			const struct ftrace *o = f->files[j];

			after = j != i && o->proc >= 0 && (!o->finished || o->max_t > ft->max_t);
		}
		if (after) {
			analysis_proc_gone(f->a, ft->proc, ft->max_t);
			ft->released = 1;
			f->pending -= ft->fed_out;
		}
	}
	return n;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * One read of everything, again while traces were left unopened for want
 * of file descriptors and this read closed some or fed records (their
 * processes ending):
 * a run of more processes than descriptors is followed whole once most of
 * them are over (a trace closed keeps its figures).
 */
long follow_poll(struct follow *f, int flush, char *err, size_t errlen)
{
	long n = 0, r;
	int rounds = 0, idle = 0;

	/* a trace is closed a read or two after its last record was fed */
	do {
		f->closed = 0;
		if ((r = poll_once(f, flush, err, errlen)) < 0)
			return -1;
		n += r;
		idle = f->closed || r > 0 ? 0 : idle + 1;
	} while (f->missed && idle < 3 && ++rounds < (flush ? 100000 : 16));
	return n;
}

int follow_missed(const struct follow *f) { return f->missed; }

/* The kinds of warning of a trace, each given once (ftrace.said). */
enum { SAID_DAMAGE = 1, SAID_TORN = 2, SAID_CUT = 4, SAID_OVERLAP = 8 };

int follow_warning(struct follow *f, char *buf, size_t len)
{
	for (int i = 0; i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];
		struct trace_stats one = { .records = 1 };

		if (ft->damage[0] && !(ft->said & SAID_DAMAGE)) {
			ft->said |= SAID_DAMAGE;
			snprintf(buf, len, "%s: `memtrace report` refuses this trace; its figures here "
				 "stop before the damage", ft->damage);
			return 0;
		}
		/* the reader's warning of one kind: the stats of that kind alone */
		if (ft->st.torn && !(ft->said & SAID_TORN)) {
			ft->said |= SAID_TORN;
			one.torn = ft->st.torn;
		} else if (ft->st.truncated && !(ft->said & SAID_CUT)) {
			ft->said |= SAID_CUT;
			one.truncated = 1;
			one.cut_bytes = ft->st.cut_bytes;
			one.file_size = ft->st.file_size;
		} else if (ft->st.overlapping && !(ft->said & SAID_OVERLAP)) {
			ft->said |= SAID_OVERLAP;
			one.overlapping = ft->st.overlapping;
			one.overlap_tid = ft->st.overlap_tid;
		} else {
			continue;
		}
		return trace_stats_warning(ft->path, &one, ft->h.header_size, ft->h.slab_size, 0,
					   buf, len);
	}
	return -1;
}

struct follow *follow_open(const char *path, const char *dir, const struct sym_opts *sym,
			   char *err, size_t errlen)
{
	struct follow *f = calloc(1, sizeof(*f));
	struct rlimit rl;

	/* a trace open per process followed: as many as the hard limit */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	if (!f)
		goto nomem;
	if (sym && !(f->sy = sym_open(sym, NULL, err, errlen))) {
		follow_close(f);
		return NULL;
	}
	gethostname(f->host, sizeof(f->host) - 1);
	if (path) {
		const char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		size_t bl = strlen(base);

		f->dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
		f->base = strdup(base);
		f->stem = strndup(base, bl > 4 && !strcmp(base + bl - 4, ".bin") ? bl - 4 : bl);
		if (!f->dir || !f->base || !f->stem)
			goto nomem;
	} else {
		struct stat st;

		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot read '%s': %s", dir,
				 stat(dir, &st) < 0 ? strerror(errno) : strerror(ENOTDIR));
			follow_close(f);
			return NULL;
		}
		if (!(f->dir = strdup(dir)))
			goto nomem;
	}
	return f;
nomem:
	snprintf(err, errlen, "out of memory");
	follow_close(f);
	return NULL;
}

void follow_close(struct follow *f)
{
	if (!f)
		return;
	analysis_free(f->a);
	stream_close(f->s);
	if (f->sy)
		sym_close(f->sy);
	for (int i = 0; i < f->nfiles; i++) {
		struct ftrace *ft = f->files[i];

		if (ft->fd >= 0)
			close(ft->fd);
		for (uint64_t k = 0; k < ft->nslabs; k++)
			if (ft->slabs[k]) {
				slab_free(ft->slabs[k]);
				free(ft->slabs[k]);
			}
		for (size_t j = 0; j < ft->ncopies; j++)
			free(ft->copies[j]);
		for (size_t j = 0; j < ft->nstrings; j++)
			free((void *)ft->strings[j].p);
		free(ft->strings);
		free(ft->fw_known);
		free(ft->spans);
		trace_close(ft->fwt);
		if (ft->side)
			munmap(ft->side, ft->side_cap);
		for (size_t j = 0; j < ft->nold; j++)
			munmap(ft->old_sides[j], ft->old_caps[j]);
		free(ft->old_sides);
		free(ft->old_caps);
		free(ft->copies);
		free(ft->slabs);
		free(ft->process);
		free(ft->path);
		free(ft);
	}
	for (int i = 0; i < f->nprocs; i++) {
		free(f->procs[i].stacks);
		free(f->procs[i].modules);
	}
	for (size_t i = 0; i < f->nshm; i++)
		free((void *)f->shm[i].name);
	free(f->shm);
	free(f->files);
	free(f->procs);
	free(f->info);
	free(f->proc_file);
	free(f->heap);
	free(f->dir);
	free(f->stem);
	free(f->base);
	free(f);
}

void follow_set_run_id(struct follow *f, uint64_t run_id)
{
	f->run_id = run_id;
	f->run_id_given = run_id != 0;
}

struct analysis *follow_analysis(struct follow *f) { return f->a; }
struct symbols *follow_symbols(struct follow *f) { return f->sy; }
int follow_nprocs(const struct follow *f) { return f->nprocs; }
const struct follow_proc *follow_proc(const struct follow *f, int i) { return &f->info[i]; }

int follow_done(const struct follow *f)
{
	if (!f->nprocs || f->nheap)
		return 0;
	for (int i = 0; i < f->nfiles; i++)
		if (f->files[i]->proc >= 0 && !f->files[i]->finished)
			return 0;
	return 1;
}

void follow_counts(const struct follow *f, uint64_t *fed, uint64_t *late, uint64_t *bytes_read)
{
	*fed = f->fed;
	*late = f->late;
	*bytes_read = f->bytes_read;
}

int follow_shm(struct follow *f, struct shm_result *out, char *err, size_t errlen)
{
	struct shm_op *ops = malloc((f->nshm ? f->nshm : 1) * sizeof(*ops));
	uint32_t *pids = calloc(f->nprocs ? (size_t)f->nprocs : 1, sizeof(*pids));
	int rc;

	if (!ops || !pids) {
		free(ops);
		free(pids);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (f->nshm)
		memcpy(ops, f->shm, f->nshm * sizeof(*ops));
	for (int i = 0; i < f->nprocs; i++)
		pids[i] = f->info[i].pid;
	rc = shm_analyze(out, ops, f->nshm, f->nprocs, pids, NULL, err, errlen);
	free(ops);
	free(pids);
	return rc;
}
