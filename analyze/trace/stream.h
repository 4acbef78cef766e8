/*
 * stream.h - the records of one or more traces in one global time order.
 *
 * The traces of a run (one file per process) are merged on wall-clock time:
 * a record's run time is its CLOCK_MONOTONIC time shifted by its file's
 * start_wall_ns - start_mono_ns, minus the run's origin (the earliest record
 * or header start of all files), so every time is >= 0 ns.
 *
 * Functions return NULL / -1 with a message in err on failure; they never
 * print.
 */
#ifndef MEMTRACE_STREAM_H
#define MEMTRACE_STREAM_H

#include <stdint.h>

#include "trace/trace-read.h"

struct stream;

struct srec {
	struct trace_rec rec;
	int proc;               /* index of the trace in the array given */
	uint64_t t;             /* ns since the run's origin */
};

/* One process: what stream_open() collected from its trace. */
struct sproc {
	struct trace *t;
	const struct mt_process *process;       /* NULL when the trace has none */
	const struct mt_module **modules;       /* in file order */
	uint32_t nmodules;
	const struct mt_note **notes;           /* the recorder's notes, in file order */
	uint32_t nnotes;
	const struct mt_stack **stacks;         /* indexed by stack id; may be NULL */
	uint32_t nstacks;                       /* size of stacks[] */
	int32_t driver_version;                 /* 0 when not recorded */
	int64_t shift;                          /* run time = mono time + shift */
	uint64_t first_t, last_t;               /* run times of its first / last record */
	uint64_t events;
};

/*
 * The merge order, the one every reader of a run uses (this merge, and
 * analyze/live/follow.c's of traces still being written): state records
 * (stream_orders_state) by run time; at the same nanosecond a free before
 * anything else (stream_rank: the recorder takes a free's time before the
 * call and an allocation's after it); then by slab order: the process's
 * index, then the slab's place in its file (order: any number that grows
 * with both, e.g. proc << 40 | slab). Records of other types are merged
 * just before the next state record of their slab.
 */
static inline int stream_orders_state(uint8_t type)
{
	return (type >= MT_REC_ALLOC && type <= MT_REC_FREE_EX) || type == MT_REC_POOL ||
	       type == MT_REC_MEMINFO || type == MT_REC_SHM || type == MT_REC_FW_EVENT ||
	       type == MT_REC_RANGE || type == MT_REC_NVTX_MEM;
}

static inline uint8_t stream_rank(uint8_t type)
{
	return !(type == MT_REC_FREE || type == MT_REC_FREE_EX);
}

/* a goes before b: (time, rank, order) of each. */
static inline int stream_order_before(uint64_t ta, uint8_t ra, uint64_t oa, uint64_t tb,
				      uint8_t rb, uint64_t ob)
{
	if (ta != tb)
		return ta < tb;
	if (ra != rb)
		return ra < rb;
	return oa < ob;
}

/* Merges the n traces (which stay owned by the caller). */
struct stream *stream_open(struct trace **traces, int n, char *err, size_t errlen);
void stream_close(struct stream *s);
/* Starts the walk over from the first record. */
void stream_rewind(struct stream *s);
/* The next record in time order: 1, or 0 at the end. */
int stream_next(struct stream *s, struct srec *out);

/*
 * Progress of the walks, for a person waiting: fn(ctx, done, total) is
 * called by stream_rewind() with done 0, then by stream_next() every
 * STREAM_PROGRESS_EVERY records, with the records handed out since the
 * rewind and the records of a whole walk (a walk may stop early). fn NULL
 * stops the calls.
 */
#define STREAM_PROGRESS_EVERY 16384
typedef void (*stream_progress_fn)(void *ctx, uint64_t done, uint64_t total);
void stream_set_progress(struct stream *s, stream_progress_fn fn, void *ctx);

/*
 * A stream over processes another module keeps and feeds record by record
 * (analyze/live/follow.c): it hands out no records itself, stream_proc(i)
 * is procs[i], and the array stays the caller's (stream_close() frees
 * neither it nor what it points to). stream_set_procs() says where the
 * array is now and how long the run is so far, after it grew.
 */
struct stream *stream_of_procs(struct sproc *procs, int n, uint64_t origin_wall,
			       uint64_t duration);
void stream_set_procs(struct stream *s, struct sproc *procs, int n, uint64_t duration);

int stream_nprocs(const struct stream *s);
const struct sproc *stream_proc(const struct stream *s, int i);
/* The run's origin in ns since the epoch, and its length in ns. */
uint64_t stream_origin_wall(const struct stream *s);
uint64_t stream_duration(const struct stream *s);
/* Shared memory records in all the traces (a pass looking only for them
   can skip the walk when there are none); UINT64_MAX when not counted
   (stream_of_procs). */
uint64_t stream_shm_records(const struct stream *s);
/* The stack record of a process, or NULL. */
const struct mt_stack *stream_stack(const struct stream *s, int proc, uint32_t id);

#endif
