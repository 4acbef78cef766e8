/*
 * figures.h - what `memtrace top` and the metrics show of a running job:
 * one frame of figures taken from the analysis the follower feeds
 * (follow.h), plus what only the watching process can see (each traced
 * process's resident memory from /proc, the machine's free memory and
 * /dev/shm), the history of each device's reserved bytes for the
 * sparklines, and a mark to measure the sites' growth from.
 *
 * Every GPU figure is a field of struct analysis (model/analysis.h), as
 * `memtrace report` computes it for the records fed so far, and every
 * figure of a framework's allocator (PyTorch's) one of its struct
 * fw_model (model/framework.h), which the same pass feeds, and each
 * figure of the program's ranges and steps one of its rg_model
 * (model/ranges.h, read through ranges_now): nothing here counts memory
 * on its own. Sites are the report's (sites_build), named
 * as every view names them (rep_site_name, fw_site_name).
 */
#ifndef MEMTRACE_FIGURES_H
#define MEMTRACE_FIGURES_H

#include <stdint.h>
#include <stdio.h>

#include "live/follow.h"

#define LV_HISTORY 120              /* sparkline: the last frames */

struct lv_dev {                     /* a device of the run (host + index) */
	int di;                     /* its gdev in analysis.devs */
	int dev;
	char host[128];
	uint64_t reserved, allocated, cached, peak, peak_time;
	uint64_t used, total;       /* latest memory sample */
	int64_t untraced;           /* used - reserved now */
	int has_sample;
	uint64_t failures, oom_retries;
	uint64_t hist[LV_HISTORY];  /* reserved at the last frames, oldest first */
	int nhist;
};

struct lv_pdev {                    /* one process on one device */
	int proc, dev, di;
	uint64_t reserved, allocated, cached, peak;
	uint64_t failures, oom_retries;
};

/* damaged: its trace is corrupt from some record on (follow_warning) */
enum lv_state { LV_RUNNING, LV_EXITED, LV_KILLED, LV_DAMAGED };
/* "running", "exited", "killed", "damaged" */
const char *lv_state_name(enum lv_state s);

struct lv_proc {
	int proc;
	uint32_t pid;
	int32_t rank;
	enum lv_state state;
	char host[128];
	const char *command;
	uint64_t reserved, peak;    /* over its devices */
	uint64_t live_allocs, failures, oom_retries, events;
	uint64_t pinned, pinned_peak;
	uint64_t shm_bytes;         /* /dev/shm bytes of the segments it made */
	uint64_t rss;               /* resident memory (0: not known) */
	int has_rss;
	/* its units of time now (ranges_now, model/ranges.h): the step open
	   (0: none), the latest range open that is no step ("" none), the
	   step that ended last (has_last_step) with its peak and its end */
	uint32_t step, last_step;
	int has_last_step;
	uint64_t last_step_peak, last_step_end;
	char step_name[256], range[256];
};

struct lv_site {
	uint32_t id;                /* the report's site id (JSON "site") */
	char name[512];             /* rep_site_name: the name every view shows */
	int dev;                    /* -1: pinned host memory */
	int proc;                   /* its process, -1 when several */
	uint64_t live, count;
	int64_t growth;             /* live - live at the mark (or at start) */
};

/* A framework's allocator (PyTorch's) on a device of the run or of one
   process: struct fw_dev's figures now, in PyTorch's terms. */
struct lv_fwdev {
	int proc;                   /* -1: the device of the run */
	int dev;
	char host[128];
	uint64_t reserved, allocated, requested, cached, awaiting;
	uint64_t peak_allocated, peak_requested, peak_reserved;
	uint64_t ooms;
};

/* A tensor site (struct fw_site) holding blocks now. */
struct lv_tsite {
	uint32_t id;                /* the report's tensor site id
	                               (framework.sites[].site) */
	int dev;
	char name[512];             /* fw_site_name */
	const char *file, *function;    /* its main frame; NULL: no stack */
	uint32_t line;
	uint64_t live, peak;        /* block bytes now, and their highest */
};

struct lv_host {
	uint64_t mem_total, mem_available;  /* /proc/meminfo */
	uint64_t shm_size, shm_free;        /* statvfs of /dev/shm */
	int has_mem, has_shm;
	uint64_t shm_now, shm_peak, shm_segments;   /* of the run's segments */
};

struct lv {
	uint64_t time;              /* run time of the frame */
	uint64_t records, late;
	int nprocs, nrunning;
	struct lv_dev *devs;
	int ndevs;
	struct lv_pdev *pdevs;
	int npdevs;
	struct lv_proc *procs;
	struct lv_site *sites;
	int nsites, cap_sites;
	struct lv_host host;
	/* the framework's allocator: has_fw once an FW event was fed */
	int has_fw;
	uint64_t fw_events;
	int has_ranges;             /* range records were fed */
	struct lv_fwdev *fwdevs;
	int nfwdevs;
	struct lv_tsite *tsites;
	int ntsites;
	/* the mark: each analysis site's live bytes then */
	uint64_t *mark;
	uint32_t nmark;
	int marked;                 /* a mark was set (else growth is since start) */
	/* private */
	void *priv;
};

enum lv_sort { LV_SORT_BYTES, LV_SORT_COUNT, LV_SORT_GROWTH };

struct lv *lv_new(void);
void lv_free(struct lv *v);
/* Takes a new frame from f: sites sorted by sort, of process proc (-1
   all) and device dev (-1 all). */
int lv_update(struct lv *v, struct follow *f, enum lv_sort sort, int proc, int dev);
/* Growth is measured from now on. */
void lv_mark(struct lv *v, struct follow *f);

/* The processes in the order views list them (by pid): order[nprocs]. */
void lv_order(const struct lv *v, int *order);
/* The frame as text, for --once; exact bytes when bytes is set. */
void lv_text(FILE *out, const struct lv *v, int bytes, int max_sites);
/* The frame as JSON, for --once --json (docs/top.md). */
void lv_json(FILE *out, const struct lv *v);
/*
 * The frame in the Prometheus text exposition format (docs/metrics.md),
 * with at most top_k sites and top_k tensor sites.
 */
void lv_metrics(FILE *out, const struct lv *v, int top_k);

#endif
