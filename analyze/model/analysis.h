/*
 * analysis.h - what the analysis of a run computes, and the pass that
 * computes it (account.c), with the metric modules it feeds (metrics.h:
 * peak.c, leaks.c, frag.c, failures.c) over the live set (live.h).
 * docs/analysis.md defines every number and says where it is computed.
 *
 * The modules depend one way: account.c calls the metrics and keeps the
 * live set; the metrics read the live set; nothing calls back into
 * account.c.
 *
 * Naming: a "pdev" is one device as one process sees it; a "gdev" is one
 * physical device of the run (host name + device index), the sum of the
 * pdevs of every process on it. A "site" is one stack of one process on one
 * pdev (or in pinned host memory).
 *
 * Functions return -1 / NULL with a message in err on failure; they never
 * print.
 */
#ifndef MEMTRACE_ANALYSIS_H
#define MEMTRACE_ANALYSIS_H

#include <stdint.h>
#include <stdio.h>

#include "trace/stream.h"

#define AN_MAX_DEV 128              /* device indexes 0..127 (head.b is int8_t) */
#define AN_TOP 3                    /* top holders kept per failure */
#define AN_MAX_FAILURES 1000        /* failures kept in detail */
#define AN_HIST 64                  /* power-of-two size buckets */
#define LEAK_K 5                    /* growing: new maxima at least this often */

/* Memory state of a device; pdevs and gdevs both. */
struct an_mem {
	uint64_t plain;             /* live device, managed, array bytes (not cache) */
	uint64_t cache_seg;         /* live segments of a known caching allocator */
	uint64_t vmm_phys;          /* VMM physical bytes alive (lifetime rule) */
	uint64_t vmm_mapped;        /* bytes mapped into reservations */
	uint64_t async_live;        /* live stream-ordered allocations */
	uint64_t pool_part;         /* sum over pools: latest reserved, or live
	                               async bytes when no POOL record yet */
};

/* One row of a timeline: the state from t until the next row. */
struct an_tl_row { uint64_t t, reserved, allocated; };

/* One cuMemGetInfo sample of a device: what it used at time t. */
struct an_sample { uint64_t t, used, total; int proc; };

struct an_peak {
	uint64_t reserved, allocated, time;
	uint64_t seq;               /* number of the record that set it (from 1) */
	uint64_t used;              /* device used at the nearest sample (0: none) */
	uint64_t sample_time;       /* when that sample was taken */
	int64_t untraced;           /* used - reserved at that sample */
	int has_sample;
	int pending;                /* a sample right after it would be exact */
	/* the call that set it */
	int proc;
	uint16_t api;
	uint32_t stack;
	uint64_t bytes;
};

struct an_extent {              /* free space inside a pool or reservation */
	int pool;                   /* 1 pool, 0 VMM reservation */
	uint64_t addr;              /* pool handle or reservation address */
	uint64_t size;              /* pool reserved or reservation size */
	uint64_t free_total, free_largest;
};

struct an_sitebytes { uint32_t site; uint64_t bytes, count; };

struct an_dev {
	int proc;                   /* -1 for a gdev */
	int dev;                    /* device index */
	int gdev;                   /* for a pdev: its gdev; -1 for a gdev */
	int host;                   /* host index (gdevs differ by host) */
	int host_proc;              /* a process on that host */
	int used;                   /* anything happened on it */
	struct an_mem m;
	uint64_t reserved, allocated;       /* now */
	struct an_peak peak;
	/* the latest memory sample */
	uint64_t sample_used, sample_total, sample_time;
	int has_sample;
	uint64_t pend_free, pend_total, pend_time;  /* a sample not applied yet */
	int has_pend;
	uint64_t last_t;            /* time of the last change, for the integrals */
	double int_cached, int_reserved;    /* byte * ns */
	/* pdev: reserved when the process ended; gdev: the sum of that over
	   its processes, each at its own exit (not one moment) */
	uint64_t left_at_exit;
	uint64_t live_at_end;       /* reserved at the end of the run */
	uint64_t hist_count[AN_HIST], hist_bytes[AN_HIST];
	/* filled by the replay to the peak */
	struct an_sitebytes *peak_sites;
	uint32_t npeak_sites;
	struct an_extent *extents;
	uint32_t nextents;
	int snap_done;
	/* reserved and allocated over time, what every view draws (see
	   timeline_add in account.c for how rows are kept) */
	struct an_tl_row *tl;
	uint32_t ntl, cap_tl;
	uint64_t tl_bucket, tl_max;
	struct an_tl_row tl_last;   /* a change not kept yet */
	int tl_pending, tl_started;
	/* gdev: every memory sample of the device, in time order */
	struct an_sample *samples;
	uint32_t nsamples, cap_samples;
};

struct an_site {
	int proc;
	uint32_t stack;
	int16_t dev;                /* -1: pinned host */
	uint8_t host;               /* 1: pinned host memory */
	uint8_t caching;            /* a known caching allocator's segments */
	uint64_t live, count;       /* now */
	uint64_t max;               /* highest live */
	uint32_t nmax;              /* times live set a new max */
	uint64_t first_max_t, last_max_t;
	uint64_t total_bytes, total_count;
};

struct an_failure {
	uint64_t time;
	int proc;
	uint32_t tid;
	uint16_t api;
	int dev;
	uint64_t requested;
	uint16_t error;
	int runtime;                /* error is a cudaError_t */
	uint32_t stack;
	uint64_t reserved;          /* the process's reserved on dev then */
	uint64_t free_after;        /* free bytes of the next sample */
	int has_free_after;
	struct an_sitebytes top[AN_TOP];
	int ntop;
};

/* A failed allocation, frees on the same thread, then a retry (frag.c). */
struct an_oomsig {
	uint64_t time;              /* of the failure */
	int proc;
	uint32_t tid;
	int dev;
	uint64_t requested, freed;
	uint32_t nfrees;
	uint64_t retry_bytes;
	uint16_t retry_result;
	uint64_t retry_time;
};

/* How a process ended, as its trace tells. */
enum an_end {
	AN_END_UNKNOWN,             /* a trace older than exit records */
	AN_END_EXIT,                /* exit(status) or return from main */
	AN_END_UNDERSCORE_EXIT,     /* _exit(status), as forked workers do */
	AN_END_KILLED,              /* no clean exit: a signal, a crash, SIGKILL */
	AN_END_EXEC,                /* exec()ed: its pid goes on in a later trace */
};

struct an_proc {
	enum an_end end;
	int exit_status;            /* for AN_END_EXIT and _UNDERSCORE_EXIT */
	uint64_t end_time;          /* its exit record, else its last record */
	uint64_t events, failed;
	uint64_t by_api[MT_API_MAX];
	uint64_t failed_by_api[MT_API_MAX];
	uint64_t unknown_frees;
	uint64_t host_live, host_peak, host_peak_time;      /* pinned host */
	uint64_t hostreg_live, hostreg_peak;                /* registered host */
	uint64_t foreign_live, foreign_peak;                /* imported, not counted */
	uint64_t estimated_bytes;   /* array bytes whose size is an estimate */
	int pdev[AN_MAX_DEV];       /* index into analysis.devs, -1 none */
	uint64_t reserved_all, peak_all, peak_all_time;     /* over all devices */
	int caching_seen;           /* a caching allocator was recognized */
	int sample_pending;         /* a pdev has a sample to apply */
};

struct analysis {
	struct stream *s;
	int nprocs;
	struct an_proc *procs;
	struct an_dev *devs;        /* pdevs and gdevs */
	int ndevs;
	uint64_t duration;
	/* totals */
	uint64_t events, failed;
	uint64_t by_api[MT_API_MAX];
	uint64_t failed_by_api[MT_API_MAX];
	uint64_t gpeak_all, gpeak_all_time, greserved_all;
	int nhosts;                 /* distinct host names */
	struct an_site *sites;
	uint32_t nsites;
	struct an_failure *failures;
	uint32_t nfailures;
	uint64_t failures_total;
	struct an_oomsig *oomsigs;
	uint32_t noomsigs;
	struct live_set *live;      /* what is live now (live.h), for the metrics */
	struct fw_model *fw;        /* framework.h: a framework's own allocator
	                               (NULL: the run has no FW_EVENT record) */
	struct rg_model *ranges;    /* ranges.h: the program's units of time
	                               (NULL: the run has no range record) */
	struct nm_model *nvmem;     /* nvtxmem.h: pools announced by NVTX
	                               (NULL: the run has no NVTX_MEM record) */
	/* private to account.c */
	void *priv;
};

/*
 * Callbacks of the pass for the loader: an allocation/free paired (free
 * events get the id of the allocation event they end; 0 when unknown).
 */
struct an_sink {
	void *ctx;
	/* every record, in time order; for events, alloc_seq is the sequence
	   number of the allocation a free ends (0: none), bytes and dev the
	   freed allocation's; a is the analysis being built (a record's
	   process and device can be looked up in it) */
	int (*record)(void *ctx, const struct analysis *a, const struct srec *r, uint64_t seq,
		      uint64_t alloc_seq, uint64_t bytes, int dev);
	/* may be NULL: called once, after the last record of the pass */
	int (*end)(void *ctx);
	/* set by the sink when record() or end() fails (NULL: out of memory) */
	const char *errmsg;
};

/*
 * Returns 1 when the stack of proc is a known caching allocator's (decided
 * by the caller from symbols), 0 otherwise.
 */
typedef int (*an_caching_fn)(void *ctx, int proc, uint32_t stack);

/* Runs the whole analysis: pass 1 (sink may be NULL), then the replay to
   every peak. */
struct analysis *analysis_run(struct stream *s, struct an_sink *sink, an_caching_fn caching,
			      void *caching_ctx, char *err, size_t errlen);
void analysis_free(struct analysis *a);

/*
 * The same pass fed record by record, for a run still being written
 * (analyze/live/): analysis_begin() sets up the processes stream s has
 * now (a stream_of_procs() one); analysis_add_procs() takes the ones it
 * has gained since; analysis_feed() applies one record, the next in time
 * order (its proc must be known); analysis_proc_gone() says a process
 * ended (all its records fed) while the run goes on, so what it held
 * leaves the run's devices. The figures of struct analysis are then those
 * of the records fed so far, as analysis_run() has them after pass 1 (no
 * replay to the peaks: peak_sites stay empty). analysis_run() is begin +
 * the walk + the end of the run.
 */
struct analysis *analysis_begin(struct stream *s, an_caching_fn caching, void *caching_ctx,
				char *err, size_t errlen);
int analysis_add_procs(struct analysis *a);
int analysis_feed(struct analysis *a, const struct srec *r);
void analysis_proc_gone(struct analysis *a, int proc, uint64_t t);

/* One device at a moment of the run (analysis_at). */
struct an_at {
	uint64_t reserved, allocated;
	struct an_sitebytes *sites;     /* what it held by site, largest first
	                                   (the caller frees it) */
	uint32_t nsites;
};

/*
 * The state of every device of a->devs (out[a->ndevs]) after record
 * number rn (from 1, as an_peak.seq), or, rn 0, after every record of
 * time <= t: by a replay of the stream, as at the peaks. Only after
 * analysis_run(); the analysis's figures are unchanged, its live set is
 * left at that moment. Returns -1 when out of memory.
 */
int analysis_at(struct analysis *a, uint64_t rn, uint64_t t, struct an_at *out);

/* Host name of a process ("" when unknown), for gdev grouping. */
void an_hostname(const struct analysis *a, int proc, const char **p, size_t *len);

#endif
