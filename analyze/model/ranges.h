/*
 * ranges.h - the program's own units of time (docs/units.md): the range
 * records of the traces (NVTX ranges, memtrace's markers, pytest tests) as
 * instances with the memory each held: per instance the process's reserved
 * (over all its devices) at its start, its peak inside and at its end, and
 * the framework's allocated when the run has FW events; per range (domain
 * and name, digit runs read as one name: "step 1", "step 2" are "step N")
 * the highest instance; the range and step in which each process's peak
 * happened; steps (instances of a range named like a step) with the growth
 * per step and the site that grows; the program's misuse, counted.
 *
 * The pass (account.c) hands every RANGE and STRING record to
 * ranges_record() in time order, says which thread each event is on
 * (ranges_thread()), each change of a process's reserved (ranges_mem())
 * and of its framework allocated (ranges_fw()), and calls ranges_end()
 * once after the pass; the figures then sit in analysis.ranges (NULL when
 * the run has no range record). Functions return -1 when out of memory.
 */
#ifndef MEMTRACE_RANGES_MODEL_H
#define MEMTRACE_RANGES_MODEL_H

#include <stdint.h>

#include "model/analysis.h"

#define RG_MAX_OPEN 4096            /* open instances followed per process */
#define RG_SNAP_BUDGET 50000000u    /* site copies for the growth's site */

struct rg_inst {
	int proc;
	uint32_t tid, end_tid;          /* the thread that opened / closed it */
	uint32_t group;                 /* index in rg_model.groups */
	int parent;                     /* the instance it is nested in (same
	                                   thread and domain), -1 none */
	int step;                       /* the step instance open when it
	                                   started (itself for a step), -1 */
	uint8_t op;                     /* MT_RANGE_PUSH or MT_RANGE_START */
	uint8_t origin;                 /* enum mt_range_origin */
	uint8_t open;                   /* never closed: its process's end */
	uint8_t is_step;
	uint16_t depth;                 /* nesting on its thread and domain */
	uint32_t step_no;               /* a step's number: from its name, else
	                                   its place among the steps (from 1) */
	uint64_t id;                    /* a START's id */
	uint64_t t0, t1;                /* run times */
	uint64_t res0, res_peak, res1;  /* reserved at the start, highest
	                                   inside, at the end */
	uint64_t res_peak_t;
	uint64_t fw0, fw_peak, fw1;     /* the framework's allocated, same */
	char *name;                     /* its own name (as recorded) */
};

struct rg_group {
	char *domain;                   /* NULL: the default domain */
	char *name;                     /* the name, digit runs as "N" when its
	                                   instances' names differ */
	int is_step;
	uint32_t count, open;
	int origin;
	int peak_inst;                  /* its instance with the highest peak */
	int fw_peak_inst;               /* ... of framework allocated, -1 */
	uint64_t total_ns;
};

#define RG_MAX_MARKS 100000         /* marks kept with their time */

/* A mark (nvtxMark, memtrace_mark): an instant. */
struct rg_mark {
	int proc;
	uint32_t tid;
	uint64_t t;
	char *name;                     /* "domain:name", "name" in the default
	                                   domain */
};

/* Where a process's peak of reserved happened. */
struct rg_peak {
	int proc;
	uint64_t reserved, t;
	int inst;                       /* innermost open instance on the thread
	                                   that reached it (else in the process),
	                                   -1 none */
	int step;                       /* the step instance open then, -1 */
};

struct rg_model {
	struct rg_inst *inst;
	uint32_t ninst, cap;
	struct rg_group *groups;
	uint32_t ngroups;
	uint64_t records, marks, thread_names;
	struct rg_mark *mark;           /* the first RG_MAX_MARKS marks */
	uint32_t nmark;
	int has_fw;                     /* framework figures are there */
	/* misuse, as recorded */
	uint64_t pops_unmatched;        /* a pop with nothing open on its thread
	                                   and domain */
	uint32_t pop_tid;               /* the first such pop's thread */
	uint64_t ends_unmatched;        /* an end whose start is not there */
	uint64_t ends_other_thread;     /* a start ended on another thread
	                                   (allowed by NVTX: said, not wrong) */
	int other_thread_inst;          /* the first of those */
	uint64_t left_open;             /* open when its process ended */
	int left_open_inst;             /* the first of those */
	uint64_t not_followed;          /* opened past RG_MAX_OPEN open ones */
	/* per process, and the run's highest */
	struct rg_peak *peaks;          /* [nprocs] */
	int nprocs;
	int peak_proc;                  /* -1: nothing reserved */
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
	void *priv;
};

int ranges_record(struct analysis *a, const struct srec *r);
void ranges_thread(struct analysis *a, uint32_t tid);
void ranges_mem(struct analysis *a, int proc, uint64_t t, uint64_t reserved);
void ranges_fw(struct analysis *a, int proc, uint64_t t);
int ranges_end(struct analysis *a);
void ranges_free(struct rg_model *m);

/* Where process proc is now, during the pass (memtrace top, the
   metrics): the innermost open step (a step-named instance; the run's
   step range is only chosen at the end), the latest range opened and
   open that is no step, and the step that ended last; NULL each when
   none. Names as "domain:name" ("name" in the default domain). */
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
/* "domain:name" or "name" for the default domain, into buf. */
const char *rg_group_name(char *buf, size_t len, const struct rg_group *g);

#endif
