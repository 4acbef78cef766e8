/*
 * ranges.h - the program's own units of time (docs/units.md): the range
 * records of the traces (NVTX ranges, memtrace's markers, pytest tests,
 * PyTorch's phases, steps and modules) as instances with the memory each
 * held: per instance the process's reserved (over all its devices) at its
 * start, its peak inside and at its end, and the framework's allocated
 * when the run has FW events; per range (domain and name, digit runs read
 * as one name: "step 1", "step 2" are "step N") its count, time and
 * highest instance; the range, step, phase and module in which each
 * process's peaks happened and each OOM; steps (instances of a range
 * named like a step) with the growth per step and the site that grows;
 * per PyTorch module its peak; the program's misuse, counted.
 *
 * Memory is O(open instances + names + ranges + kept instances): an
 * instance is folded into its range's figures when it closes; only steps
 * and tests are kept whole (inst[]), and each range's highest instance as
 * a copy (its peak_inst, fw_peak_inst).
 *
 * The views that draw every instance (the Perfetto export, the page) ask
 * for a log first (ranges_keep_log()): the first RG_MAX_SLICES instances
 * as compact slices, in the order they closed (those left open at their
 * process's end last), and the first RG_MAX_MARKS marks with their time,
 * with counts of what was left out, so a view says when it is cut. The
 * report and memtrace top keep none of it.
 *
 * The pass (account.c) hands every RANGE and STRING record to
 * ranges_record() in time order, says which thread each event is on
 * (ranges_thread()), each change of a process's reserved (ranges_mem())
 * and of its framework allocated (ranges_fw()), and calls ranges_end()
 * once after the pass; the figures then sit in analysis.ranges (NULL when
 * the run has no range record); categories.c fills the category splits
 * after that. Functions return -1 when out of memory.
 */
#ifndef MEMTRACE_RANGES_MODEL_H
#define MEMTRACE_RANGES_MODEL_H

#include <stdint.h>

#include "model/analysis.h"
#include "model/categories.h"

#define RG_MAX_OPEN 4096            /* open instances followed per process */
#define RG_SNAP_BUDGET 50000000u    /* site copies for the growth's site */
#define RG_MAX_SLICES 1000000       /* instances logged (ranges_keep_log): 96
                                       bytes each, 96 MB at most; Perfetto's
                                       UI slows past a few million slices */
#define RG_MAX_MARKS 100000         /* marks logged with their time */

/* Where something happened: the step, phase and module open then. */
struct rg_at {
	int step;                   /* index in inst of the step, -1 none */
	int phase;                  /* index in names of the innermost open
	                               push of domain "torch", -1 none */
	int module;                 /* ... of domain "torch.module", -1 none */
};

/* A kept instance: a step, a test, or a copy of a range's highest. */
struct rg_inst {
	int proc;
	uint32_t tid, end_tid;          /* the thread that opened / closed it */
	uint32_t group;                 /* index in rg_model.groups */
	uint32_t nm;                    /* index in rg_model.names */
	const char *name;               /* its own name: names[nm].name */
	int step;                       /* the step open when it started
	                                   (itself for a step), -1 */
	uint8_t op;                     /* MT_RANGE_PUSH or MT_RANGE_START */
	uint8_t origin;                 /* enum mt_range_origin */
	uint8_t open;                   /* never closed: its process's end */
	uint8_t is_step;
	uint32_t step_no;               /* a step's number: from its name, else
	                                   its place among the steps (from 1) */
	uint64_t seq;                   /* its place among all instances, in
	                                   the order they opened */
	uint64_t id;                    /* a START's id */
	uint64_t t0, t1;                /* run times */
	uint64_t res0, res_peak, res1;  /* reserved at the start, highest
	                                   inside, at the end */
	uint64_t res_peak_t;
	uint64_t fw0, fw_peak, fw1;     /* the framework's allocated, same */
	uint64_t fw_peak_t, fw_peak_seq;        /* its first moment (FW event) */
	struct cat_split split;         /* a step's: at its fw_peak */
};

/* An instance as the views that draw each one need it (no strings: its
   name is names[nm]); figures as in struct rg_inst. */
struct rg_slice {
	uint64_t t0, t1;
	uint64_t res0, res_peak, res1;
	uint64_t fw0, fw_peak, fw1;
	int proc;
	uint32_t tid, end_tid;
	uint32_t nm, group;
	int step;                       /* index in inst of its step, -1 */
	int parent_group;               /* the range of the push it is nested
	                                   in (same thread and domain), -1 */
	uint8_t op, origin, open;
};

/* A mark (nvtxMark, memtrace_mark): an instant. */
struct rg_mark {
	int proc;
	uint32_t tid;
	uint64_t t;
	char *name;                     /* "domain:name", "name" in the default
	                                   domain */
};

/* What a name's best[] instances are the highest of. */
enum {
	RG_BEST_RES,                    /* reserved peak */
	RG_BEST_FW,                     /* framework allocated peak */
	RG_BEST_RES_KEPT,               /* reserved end - start, 0 when less */
	RG_BEST_FW_KEPT,                /* framework allocated, same */
	RG_NBEST
};

/* A distinct (domain, name) pair as recorded. */
struct rg_name {
	char *key;                      /* "domain\x1fname" */
	char *domain;                   /* NULL: the default domain */
	const char *name;               /* inside key */
	uint32_t group;
	uint8_t is_step, kind;          /* kind: RG_PHASE, RG_MODULE, 0 */
	uint32_t step_no;
	/* the highest of its instances (the level at their start included):
	   of reserved, and of framework allocated with its moment, process
	   and step (the report's per-module figures) */
	int has_peak;                   /* an instance closed or left open */
	uint64_t res_peak;
	int peak_proc;
	uint64_t fw_peak, fw_peak_t, fw_peak_seq;
	int peak_step;                  /* index in inst, -1 */
	struct cat_split split;         /* at fw_peak_seq, modules only */
	/* its instances a check over a range names (index in inst, -1): the
	   first of the highest by RG_BEST_* (the pass's copies in own[] when
	   the instance is not kept whole) */
	int best[RG_NBEST], own[RG_NBEST];
	int parent;                     /* the module whose qualified path is
	                                   the longest prefix of this one at a
	                                   '.' ("GPT.layers" for
	                                   "GPT.layers.3"), -1 */
};
#define RG_PHASE 1                  /* domain "torch" */
#define RG_MODULE 2                 /* domain "torch.module" */

struct rg_group {
	char *domain;                   /* NULL: the default domain */
	char *name;                     /* the name, digit runs as "N" when its
	                                   instances' names differ */
	int is_step;
	uint32_t count, open;
	int origin;
	int peak_inst;                  /* index in inst: its instance with the
	                                   highest peak (the first of them) */
	int fw_peak_inst;               /* ... of framework allocated, -1 */
	uint64_t total_ns;
};

/* Where a process's peaks happened. */
struct rg_peak {
	int proc;
	uint64_t reserved, t;
	int group, nm;                  /* the innermost open instance on the
	                                   thread that reached it (else in the
	                                   process): its range and name, -1 */
	struct rg_at at;
	/* the framework's allocated, summed over the process's devices */
	int has_fw;
	uint64_t fw, fw_t, fw_seq;
	int fw_group, fw_nm;
	struct rg_at fw_at;
	struct cat_split fw_split;      /* at fw_seq */
};

/* What the framework held at each of its OOMs (fw->ooms[i] for ooms[i];
   where it happened: fw->ooms[i].at). */
struct rg_oom {
	struct cat_split split;
};

struct rg_model {
	struct rg_inst *inst;           /* kept instances */
	uint32_t ninst, cap;
	uint64_t instances;             /* every instance followed */
	struct rg_name *names;
	uint32_t nnames, cap_names;
	struct rg_group *groups;
	uint32_t ngroups, cap_groups;
	uint64_t records, marks, thread_names;
	/* the log (ranges_keep_log(); else empty): the first RG_MAX_SLICES
	   instances closed, the first RG_MAX_MARKS marks; instances - nslices
	   and marks - nmark were left out */
	struct rg_slice *slices;
	uint32_t nslices, cap_slices;
	struct rg_mark *mark;
	uint32_t nmark;
	int logged;                     /* the log was asked for */
	int has_fw;                     /* framework figures are there */
	int has_modules;                /* a range of domain "torch.module" */
	/* misuse, as recorded */
	uint64_t pops_unmatched;        /* a pop with nothing open on its thread
	                                   and domain */
	uint32_t pop_tid;               /* the first such pop's thread */
	uint64_t ends_unmatched;        /* an end whose start is not there */
	uint64_t ends_other_thread;     /* a start ended on another thread
	                                   (allowed by NVTX: said, not wrong) */
	int other_thread_nm;            /* the first of those: its name */
	uint64_t left_open;             /* open when its process ended */
	int left_open_nm;               /* the first of those: its name */
	uint64_t not_followed;          /* opened past RG_MAX_OPEN open ones */
	/* per process, and the run's highest */
	struct rg_peak *peaks;          /* [nprocs] */
	int nprocs;
	int peak_proc;                  /* -1: nothing reserved */
	struct rg_oom *ooms;            /* [fw->nooms] */
	uint32_t nooms;
	/* steps: the step range with the most instances */
	int step_group;                 /* -1 none */
	uint32_t *steps;                /* its instances, in start order */
	uint32_t nsteps;
	int has_growth;                 /* nsteps >= 2 */
	int64_t growth;                 /* reserved at the end of a step: (last -
	                                   first) / (nsteps - 1), bytes */
	int64_t fw_growth;              /* the same of framework allocated */
	int64_t first_vs_steady;        /* peak of the first step - the median
	                                   peak of the others */
	int growth_site;                /* a->sites index of the site whose live
	                                   bytes grew most from the end of the
	                                   first step to the end of the last
	                                   one followed; -1 none */
	int64_t growth_site_bytes;      /* its growth per step */
	uint32_t growth_from, growth_to;        /* step numbers of that span */
	struct cat_model cats;          /* categories.c */
	void *priv;
};

int ranges_record(struct analysis *a, const struct srec *r);
void ranges_thread(struct analysis *a, uint32_t tid);
void ranges_mem(struct analysis *a, int proc, uint64_t t, uint64_t reserved);
void ranges_fw(struct analysis *a, int proc, uint64_t t);
int ranges_end(struct analysis *a);
void ranges_free(struct rg_model *m);

/* The models made from now on keep the log (on 1) or not (0, the
   default): the views that draw every instance call it before their
   pass. */
void ranges_keep_log(int on);

/* The step, phase and module open in process proc now (during the pass):
   the innermost on thread tid, else the latest opened in the process.
   All -1 when the run has no range record yet. */
void ranges_at(const struct analysis *a, int proc, uint32_t tid, struct rg_at *at);

/* Where process proc is now, during the pass (memtrace top, the
   metrics): the innermost open step (a step-named instance; the run's
   step range is only chosen at the end), the latest range opened and
   open that is no step, and the step that ended last; NULL each when
   none (pointers valid until the next record). Names as "domain:name"
   ("name" in the default domain). */
struct rg_now {
	const struct rg_inst *step, *range, *last_step;
	uint32_t step_no, last_step_no; /* from the name, else the place among
	                                   the process's step-named instances */
	char step_name[256], range_name[256];
};
void ranges_now(const struct analysis *a, int proc, struct rg_now *now);

/* A step-like name: "step", "step 3", "train_step#12", "Iteration 4",
   "batch 7" (the word, then digits or nothing); *no: its number, 0 none. */
int rg_is_step_name(const char *name, uint32_t *no);
/* The figure of an instance that rg_name.best[k] is the highest of. */
uint64_t rg_best_value(const struct rg_inst *in, int k);
/* "domain:name" or "name" for the default domain, into buf. */
const char *rg_group_name(char *buf, size_t len, const struct rg_group *g);

#endif
