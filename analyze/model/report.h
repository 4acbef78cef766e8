/*
 * report.h - the run model every view reads: the analysis (analysis.h),
 * its sites (sites.h), what each device held at its peak by site, the leak
 * candidates, the POSIX shared memory of the run (shm.h); and the words
 * and accessors the views share (views/format.h formats them). Views
 * format this; they compute nothing of their own.
 */
#ifndef MEMTRACE_REPORT_H
#define MEMTRACE_REPORT_H

#include <stdio.h>

#include "model/analysis.h"
#include "model/shm.h"
#include "model/sites.h"
#include "model/symbols.h"

#define REP_FORMAT_VERSION 2
#define REP_TOP 10                  /* entries per list */
#define REP_RANKS_INLINE 8          /* more processes than this: the ranks
                                       table instead of a section each */
#define REP_RANKS_FULL 3            /* ... and full sections only for this
                                       many highest peaks and flagged ranks */

/* A process in the ranks table: why it stands out. */
enum {
	REP_RANK_TOP_PEAK = 1,          /* the highest peak of the run */
	REP_RANK_FAILED = 2,            /* a call failed (an OOM, ...) */
	REP_RANK_KILLED = 4,            /* ended without a clean exit */
	REP_RANK_FULL = 8,              /* gets its full section */
};

/* One row of the ranks table (runs of more than REP_RANKS_INLINE processes). */
struct rep_rank {
	int proc;
	int rank;                       /* -1: the process said none */
	struct trace_bytes host;
	int dev;                        /* the device of its highest peak, -1 none */
	uint64_t peak;                  /* reserved over all its devices */
	uint64_t failed;
	int flags;
};

/* What one site holds in a list: at a peak, or left at exit. */
struct rep_entry {
	const struct site *site;
	uint64_t bytes, count;
	int dev;                        /* device index, -1 pinned host */
	int proc;                       /* one of the processes (for the frames) */
	uint32_t stack;
	int nprocs;                     /* processes holding it in this list */
	int caching;
	int at_exit;                    /* leaks: left live at exit */
	int growing;                    /* leaks: kept growing */
	const struct sym_stack *st;
};

struct rep_list {
	struct rep_entry *v;
	int n;                          /* shown: at most REP_TOP */
	int total;                      /* all of them, v[0..total) */
};

struct report {
	const struct analysis *a;
	struct symbols *sy;
	int *gdevs;                     /* gdev indexes in a->devs, by host, device */
	int ngdevs;
	struct sites sites;             /* every site of the run */
	struct rep_list *dev_sites;     /* per a->devs index: top sites at its peak */
	struct rep_list leaks;          /* leak candidates: left at exit or growing */
	struct rep_list cache_exit;     /* caching allocators' segments at exit */
	int caching_seen;
	const char *db_path;            /* NULL: none */
	struct trace_bytes *fw_off;     /* per process: why the framework's
	                                   allocator was not recorded ("reason="
	                                   of a "torch=off" note); p NULL: none */
	struct shm_result shm;          /* /dev/shm segments (pipeline_run fills
	                                   it; all zero when not run) */
	/* the ranks table: 0 rows unless a->nprocs > REP_RANKS_INLINE; sorted
	   by host, device, rank */
	struct rep_rank *ranks;
	int nranks;
	int *rank_row;                  /* per process: its row in ranks */
	int top_peak_proc;              /* -1: no process reserved anything, or
	                                   the highest peak is shared */
	uint64_t top_peak;              /* the highest peak of a process */
	int top_peak_shared;            /* processes with that peak */
	uint64_t median_peak;           /* of the processes' peaks */
	int nflagged_failed, nflagged_killed;
};

int report_build(struct report *r, const struct analysis *a, struct symbols *sy, char *err,
		 size_t errlen);
/* Only the devices of the run (gdevs): for a summary that needs no sites. */
int report_devices(struct report *r, const struct analysis *a, char *err, size_t errlen);
void report_free(struct report *r);

/* What a device held at a moment by analysis site (analysis_at's sites),
   as a list of the report's sites like dev_sites: sites whose stacks read
   the same are one entry, largest first. The caller frees l->v. */
int report_sites_list(const struct report *r, const struct an_sitebytes *sb, uint32_t n,
		      struct rep_list *l);

int report_text(const struct report *r, FILE *f);
int report_json(const struct report *r, FILE *f);

/* --- helpers ------------------------------------------------------------ */
/* How a process ended: "exit", "_exit", "killed", "exec"; NULL unknown
   (the database and JSON use these words). */
const char *rep_end_name(enum an_end end);
/* "CUDA_ERROR_OUT_OF_MEMORY" / "cudaErrorMemoryAllocation", or NULL */
const char *rep_error_name(unsigned code, int runtime);
/* the process's pid and command (arguments joined with spaces) */
uint32_t rep_pid(const struct analysis *a, int proc);
struct trace_bytes rep_command_arg(const struct analysis *a, int proc, int *argi);
/* the frame a person would look at first: the user's, else the first */
const struct sym_frame *rep_main_frame(const struct sym_stack *st);
/*
 * The name of a call path, the one every view shows (docs/analysis.md,
 * "Sites"): its frames from the main one (the user's) outward, nframes of
 * them at most, each "function (file.c:12)" (the file's base name),
 * "function (module.so)" without a line, or "module.so+0x1f" without a
 * symbol (" [inlined]" after a frame inlined into the next), joined with
 * " < "; "(no stack recorded)" without frames. Raw
 * text: each view escapes it. *folded (may be NULL): the library frames
 * inside the main one, which the name leaves out. Returns buf.
 */
const char *rep_stack_name(char *buf, size_t len, const struct sym_stack *st, int nframes,
			   int *folded);
/*
 * The i-th warning of process proc, as every view says it: the reader's
 * (trace_warning: records cut off, torn, slabs copied twice), then the
 * frees of addresses no traced allocation held. 0, -1 when there is no
 * i-th.
 */
int rep_proc_warning(const struct analysis *a, int proc, unsigned i, char *buf, size_t len);
/* A site's name: rep_stack_name with the site's name_frames. */
const char *rep_site_name(char *buf, size_t len, const struct site *s, int *folded);

#endif
