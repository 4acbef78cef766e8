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
#include <stdio.h>

#include "model/report.h"
#include "views/plot.h"

/* Chrome trace-event JSON: counters, instants for failures and OOM
   retries, process and thread names. */
int export_perfetto(const struct report *r, FILE *f, char *err, size_t errlen);

/* Folded stacks, root first, one line per site: bytes held at each
   device's peak (at_exit 0) or left at exit (at_exit 1). */
int export_collapsed(const struct report *r, int at_exit, FILE *f, char *err, size_t errlen);

/* A pickle (protocol 2) in the layout of torch.cuda.memory._snapshot():
   from the framework's records when the run has them, else from the
   CUDA-level allocations collected in m. */
int export_torch(const struct report *r, const struct plot_map *m, FILE *f, char *err,
		 size_t errlen);

/* A frame as one line of text: "function (file:line)" or "module+0xoff";
   the file and module as they are (full paths). */
size_t export_frame_text(const struct sym_frame *fr, char *buf, size_t len);

#endif
