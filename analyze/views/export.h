/*
 * export.h - `memtrace export`: the run model written in the formats of
 * other tools (docs/export.md): Chrome/Perfetto trace-event JSON
 * (export-perfetto.c), folded stacks for flame graphs (export-collapsed.c)
 * and a torch.cuda.memory._snapshot() pickle for PyTorch's memory_viz
 * (export-torch.c). Every number comes from the model (model/report.h,
 * model/framework.h) or, for the allocations with their lifetimes, from the
 * collector of the analysis pass that `memtrace plot` uses (views/plot.h).
 *
 * Functions return 0 / -1 (with a message in err); they never print.
 */
#ifndef MEMTRACE_EXPORT_H
#define MEMTRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/report.h"
#include "views/plot.h"

/* --at: the moment an export shows (docs/export.md). */
enum export_when { EXPORT_PEAK, EXPORT_EXIT, EXPORT_OOM, EXPORT_TIME };

struct export_at {
	enum export_when when;
	uint32_t n;                 /* oom:N, from 1 */
	uint64_t t;                 /* TIME: ns since the run's start */
};

/* Parses peak, exit, oom, oom:N, +12.5ms, 12500000 (ns), 3s, 40us, ...;
   -1 with a message in err when it is none of them. */
int export_at_parse(const char *s, struct export_at *at, char *err, size_t errlen);

/* The moment resolved on the model: what each device shows. */
struct export_moment {
	struct export_at at;
	uint64_t t;                 /* oom, TIME: the moment (run time, ns) */
	int fw_oom;                 /* oom: index in a->fw->ooms, else -1 */
	int failure;                /* oom without framework records: index
	                               in a->failures, else -1 */
	uint64_t fw_seq;            /* oom, TIME: the framework's last event
	                               then (fw_seq_at); exit: all of them */
	struct an_at *cuda;         /* oom, TIME: every device of a->devs then
	                               (analysis_at); NULL otherwise */
	char label[64];             /* "peak", "exit", "oom:1", "+12.500000 ms" */
};

/* Resolves at on the run: -1 with a message in err when the run has no
   such moment (oom:3 of a run with 2, a time past its end) or out of
   memory. a is r->a (analysis_at replays it). */
int export_moment(struct analysis *a, const struct report *r, const struct export_at *at,
		  struct export_moment *m, char *err, size_t errlen);
void export_moment_free(const struct analysis *a, struct export_moment *m);

/* The time up to which device di (a gdev, or a pdev: its gdev's) shows
   its CUDA-level memory: its peak's time, the moment, or UINT64_MAX at
   exit (everything). */
uint64_t export_dev_t(const struct report *r, const struct export_moment *m, int di);

/* The framework's state of fw device fdi (a process's: its run
   device's moment) at the moment: the event number (peak: its peak of
   allocated) into *seq and the time into *t (UINT64_MAX at exit). */
void export_fw_at(const struct report *r, const struct export_moment *m, int fdi, uint64_t *seq,
		  uint64_t *t);

/* The framework's run device of gdev di that holds tensor blocks, or -1:
   such a device is shown in PyTorch's terms. */
int export_fw_of_gdev(const struct report *r, int di);

/* Chrome trace-event JSON: counters, instants for failures and OOM
   retries, process and thread names, up to the moment (m->at EXIT: all). */
int export_perfetto(const struct report *r, const struct export_moment *m, FILE *f, char *err,
		    size_t errlen);

/* When the ranges model's log (model/ranges.h) left instances or marks
   out: 1 and "N of M range instances shown (...)" into buf; else 0. */
struct rg_model;
int export_ranges_cut(const struct rg_model *m, char *buf, size_t len);

/* Folded stacks, root first, one line per site: what each device held at
   the moment (exit: left at exit); tensor sites on a framework's device. */
int export_collapsed(const struct report *r, const struct export_moment *m, FILE *f, char *err,
		     size_t errlen);

/* A pickle (protocol 4) in the layout of torch.cuda.memory._snapshot() at
   the moment: from the framework's records when the run has them, else from
   the CUDA-level allocations collected in m. */
int export_torch(const struct report *r, const struct export_moment *at,
		 const struct plot_map *m, FILE *f, char *err, size_t errlen);

/* A frame as one line of text: "function (file:line)" or "module+0xoff";
   the file and module as they are (full paths). */
size_t export_frame_text(const struct sym_frame *fr, char *buf, size_t len);

#endif
