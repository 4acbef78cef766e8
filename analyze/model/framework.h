/*
 * framework.h - a framework's own allocator (PyTorch's caching allocator),
 * from the MT_REC_FW_EVENT records of the traces: per device of each
 * process and of the run, reserved (its segments) = allocated (tensor
 * blocks) + cached (free blocks), with the free space inside the segments
 * at the peak of allocated, at the peak of reserved and at each OOM; its
 * tensor sites (blocks grouped by their FW stack's frames); tensor leak
 * candidates; the verdict of each OOM. docs/analysis.md defines each
 * number.
 *
 * The pass (account.c) hands every FW_EVENT to fw_record() in time order
 * and calls fw_end() once after it; the figures then sit in
 * analysis.fw (NULL when the run has no FW event). Functions return -1
 * when out of memory; they never print.
 */
#ifndef MEMTRACE_FRAMEWORK_MODEL_H
#define MEMTRACE_FRAMEWORK_MODEL_H

#include <stdint.h>

#include "model/analysis.h"
#include "model/ranges.h"

#define FW_NEVER UINT64_MAX         /* an event that did not happen */

/* Why an OOM happened, in words (fw_verdict_name). */
enum fw_verdict {
	FW_FRAGMENTATION = 1,       /* cached >= requested, no free block as large */
	FW_OTHER_STREAM,            /* cached < requested <= cached + awaiting free */
	FW_FULL,                    /* tensors fill the device */
	FW_OUTSIDE,                 /* memory outside the framework took the room */
};

/* The framework's allocator on one device at one moment, in PyTorch's
   own terms (memory_stats() of c10/cuda/CUDACachingAllocator.cpp). */
struct fw_state {
	uint64_t t;                 /* run time, ns */
	uint64_t seq;               /* after FW event number seq (from 1) */
	uint64_t reserved;          /* live segments, mapped bytes:
	                               reserved_bytes */
	uint64_t allocated;         /* block bytes from alloc to free_requested:
	                               allocated_bytes */
	uint64_t requested;         /* requested bytes from alloc to
	                               free_completed: requested_bytes */
	uint64_t awaiting;          /* block bytes from free_requested to
	                               free_completed (record_stream) */
	uint64_t cached;            /* reserved - allocated (awaiting included) */
	uint64_t inactive_split;    /* free blocks of split segments, expandable
	                               segments left out: inactive_split_bytes */
	uint64_t largest_free;      /* largest free block */
	uint64_t pool_free[2];      /* free block bytes of the small [0] and the
	                               large [1] pool */
	uint64_t pool_largest[2];   /* their largest free block */
	uint32_t segments, blocks;
};

/* What a tensor site held at a moment. */
struct fw_held { uint32_t site; uint64_t bytes, count; };

/* A moment and the tensor sites live then, largest first. */
struct fw_moment {
	struct fw_state st;
	struct fw_held *held;
	uint32_t nheld;
};

struct fw_dev {
	int proc;                   /* -1: the device of the run */
	int dev;
	int host;                   /* host index (by host name) */
	int run;                    /* a process's device: its run device's index */
	/* now, during the pass; after it, at the end */
	uint64_t reserved, allocated, requested, awaiting;
	struct fw_moment peak_alloc, peak_req, peak_res;
	struct fw_state end;        /* at the process's end / the run's end */
	/* memtrace's CUDA-level view of the same device (0 when it saw none) */
	int has_cuda;
	uint64_t cuda_at_peak_res;  /* CUDA-level reserved at the framework's
	                               peak of reserved */
	uint64_t cuda_peak;         /* CUDA-level peak reserved */
	uint64_t allocs, segment_allocs, maps, ooms;
	/* PyTorch's own peaks (memory_stats()), the last MT_FW_PEAKS read */
	int has_torch_peaks;
	uint64_t torch_peaks_t;
	uint64_t torch_peak_reserved, torch_peak_allocated, torch_peak_requested;
	/* framework reserved and allocated over time (timeline rule of
	   account.c: a few rows per 1/4000 of the run) */
	struct an_tl_row *tl;
	uint64_t *tl_req;           /* requested at each row: tl_req[i] with tl[i] */
	uint32_t ntl, cap_tl;
	uint64_t tl_bucket, tl_max, tl_max_alloc;
	struct an_tl_row tl_last;
	uint64_t tl_last_req;
	int tl_pending, tl_started;
};

struct fw_oom {
	int proc, dev;
	int fdev;                   /* index in fw->devs of (proc, dev) */
	uint64_t requested;         /* the request, rounded (size of the event) */
	uint64_t device_free;       /* x of the event: the framework's view */
	int has_total;
	uint64_t device_total;      /* from the process's latest cuMemGetInfo */
	int has_cuda;
	uint64_t cuda_reserved;     /* memtrace's reserved of the process then */
	int64_t outside;            /* total - free - framework reserved */
	uint32_t stack;
	struct rg_at at;            /* the step, phase and module then */
	struct fw_state st;
	enum fw_verdict verdict;
	struct fw_held top[AN_TOP];
	int ntop;
};

struct fw_block {
	uint64_t addr;
	uint64_t size;              /* the block: round_size() of the request,
	                               or the whole free block when not split */
	uint64_t req;               /* the request (the event's size) */
	uint64_t stream;
	uint64_t s_alloc, s_freq, s_fdone;      /* event numbers; FW_NEVER */
	uint64_t t_alloc, t_freq, t_fdone;      /* run times, when they happened */
	uint32_t stack, site;
	uint32_t seg;               /* its segment (index in segs), or
	                               UINT32_MAX in an expandable segment */
	int proc, fdev;
	uint8_t pool;               /* 0 small, 1 large */
	uint8_t mapped;             /* in an expandable segment */
	uint8_t category;           /* enum cat (categories.c, after the pass) */
	struct rg_at at;            /* the step, phase and module open when it
	                               was allocated (ranges_at) */
};

struct fw_seg {
	uint64_t addr, size, stream;
	uint64_t s_alloc, s_free;
	uint64_t t_alloc, t_free;       /* run times; t_free FW_NEVER */
	int proc, fdev;
	int mapped;                 /* expandable segment pages */
	int pool;                   /* 0 small, 1 large, -1 no block seen yet */
};

/* A check of the rebuilt figures against PyTorch's own counters
   (memory_stats() read by a drain, MT_FW_CHECK) that found them unequal. */
struct fw_mismatch {
	uint64_t t;
	int proc, dev;
	const char *what;           /* "allocated", "requested", "reserved" */
	uint64_t ours, theirs;
};

struct fw_site {
	uint32_t id;                /* from 1, in the order of first allocation */
	int dev;
	int proc;                   /* the process and FW stack of its first */
	uint32_t stack;             /*   allocation */
	char *key;                  /* "file:line function|..." innermost first */
	char *file, *function;      /* its main frame: the user's, else the
	                               innermost; NULL when no stack */
	uint32_t line;
	int user;                   /* the main frame is in the user's code */
	int main_frame;             /* its index among the frames */
	int name_frames;            /* frames of its name (fw_site_name): at
	                               least SITE_NAME_FRAMES, more when another
	                               tensor site's read the same that far */
	uint64_t allocs, bytes;     /* over the run */
	uint64_t live, max;         /* live bytes now, and their highest */
	struct an_site g;           /* for the growth test of leaks.c */
	uint64_t exit_bytes, exit_count;        /* never freed */
	int growing, interrupted;
};

struct fw_model {
	struct fw_dev *devs;
	int ndevs;
	struct fw_block *blocks;
	uint64_t nblocks;
	struct fw_seg *segs;
	uint64_t nsegs;
	struct fw_site *sites;      /* sites[id - 1] */
	uint32_t nsites;
	struct fw_oom *ooms;
	uint32_t nooms;
	uint32_t *leaks;            /* site indexes: tensor leak candidates,
	                               largest left at exit first */
	uint32_t nleaks;
	uint64_t events, unknown_frees, no_device;
	uint64_t dropped;           /* "dropped=N" of FW_INFO notes, summed */
	uint64_t drains, drain_ns;  /* _snapshot() calls and their time */
	uint64_t resyncs;           /* drains that searched their position */
	uint64_t budget_gaps;       /* the budget let the ring turn over */
	uint64_t program_history;   /* the program's own _record_memory_history */
	int drain_timing;           /* entries had no time_us: drain times */
	/* Block sizes are rebuilt from PyTorch's rules (framework.c); where
	   the events do not fit them, the case is counted here. */
	uint64_t drift_no_block;    /* an alloc where no free block began */
	uint64_t drift_small_block; /* an alloc larger than its free block */
	uint64_t drift_seg_busy;    /* a segment freed or unmapped while not free */
	uint64_t drift_first_t;     /* the first of them; FW_NEVER: none */
	/* MT_FW_CHECK events: PyTorch's counters read at a drain */
	uint64_t checks, check_bad;
	struct fw_mismatch first_bad;
	void *priv;
};

/* account.c: one FW_EVENT of pass 1; then once after the pass. */
int fw_record(struct analysis *a, const struct srec *r);
int fw_end(struct analysis *a);
void fw_free(struct fw_model *m);

/*
 * A tensor site's name, the one every view shows: its Python frames from
 * the main one (the user's) outward, name_frames of them, each
 * "file.py:12 function" (the file's base name), joined with " < ";
 * "(no stack recorded)" without frames. Raw text: each view escapes it.
 * *folded (may be NULL): the framework's frames inside the main one.
 * Returns buf.
 */
const char *fw_site_name(char *buf, size_t len, const struct analysis *a,
			 const struct fw_site *s, int *folded);

/*
 * The state of device di (an index in m->devs) after FW event number seq,
 * as the report's moments are computed (its time set to t): the blocks
 * with s_alloc <= seq < s_fdone and the segments with s_alloc <= seq <
 * s_free that count on di then (fw_counts_at); with held not NULL, the
 * tensor sites live then, largest first (the caller frees *held).
 * Returns -1 when out of memory.
 */
int fw_state_at(const struct fw_model *m, int di, uint64_t seq, uint64_t t, struct fw_state *st,
		struct fw_held **held, uint32_t *nheld);
/* Does a block or segment of proc on fdev count on device di after
   event seq (its own device; for a run's device, while its process's
   share has not left it)? */
int fw_counts_at(const struct fw_model *m, int di, int fdev, int proc, uint64_t seq);
/* The number of the last FW event at or before run time t (0: none). */
uint64_t fw_seq_at(const struct fw_model *m, uint64_t t);

/*
 * Sets name_frames of every tensor site (how many frames fw_site_name
 * shows: at least SITE_NAME_FRAMES, more where two sites read the same
 * that far). fw_end() calls it; a view of a pass still being fed (memtrace
 * top) calls it before naming sites. -1 when out of memory.
 */
int fw_name_sites(struct fw_model *m);

/* "fragmentation", "cache held by another stream", ... */
const char *fw_verdict_name(enum fw_verdict v);

#endif
