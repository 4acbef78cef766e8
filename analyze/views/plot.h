/*
 * plot.h - the plots of `memtrace plot`: per device of the run, the data of
 * a timeline, an address map and the top sites as TSV files, drawn by
 * gnuplot with the scripts in scripts/. Every figure drawn comes from the
 * analysis (model/analysis.h) and the report's site groups (model/report.h);
 * the view only lays the address map out and words the labels.
 *
 * Functions return 0 / -1 (with a message in err); they never print.
 */
#ifndef MEMTRACE_PLOT_H
#define MEMTRACE_PLOT_H

#include <stddef.h>

#include "model/analysis.h"
#include "model/report.h"

#define PLOT_MAP_MAX 20000          /* boxes drawn on an address map: the largest */

/* The allocations of the run with their lifetimes, collected during the
   analysis pass: plot_map_sink() gives the sink to pass to it. */
struct plot_map;

/* keep: the boxes kept per device of the run, the largest (SIZE_MAX: all) */
struct plot_map *plot_map_new(size_t keep);
void plot_map_free(struct plot_map *m);
struct an_sink plot_map_sink(struct plot_map *m);

/* One allocation of an address map, laid out: y_lo..y_hi are its place on
   the map's y axis in bytes (address ranges squeezed, see plot.c); t1 is
   the run's end for what was live then. */
struct plot_box {
	uint64_t t0, t1, y_lo, y_hi, addr, bytes;
	int proc, dev;              /* dev: the device index in that process */
	uint32_t stack;
	int live;
	uint64_t stream;            /* stream-ordered: its stream, else 0 */
};

/* The boxes of gdev di (an index in r->a->devs), at most max (the
   largest), in layout order; *nall counts all of them. The caller frees
   *out. Returns 0, or -1 when out of memory. */
int plot_map_boxes(const struct analysis *a, const struct plot_map *m, int di, size_t max,
		   struct plot_box **out, size_t *nout, size_t *nall);

struct plot_out {
	const char *dir;            /* where the TSV and pictures go */
	const char *fmt;            /* "png" or "svg" */
	const char *gnuplot;        /* the gnuplot executable */
	const char *scripts;        /* the folder of timeline.gp, addrmap.gp, sites.gp */
};

/* Writes the TSV files of gdev di (an index in r->a->devs) and draws its
   timeline, address map (m may be NULL: none) and top sites. */
int plot_device(const struct report *r, const struct plot_map *m, int di,
		const struct plot_out *o, char *err, size_t errlen);

/* Runs gnuplot -c SCRIPTS/script with args (NULL-ended, at most 8). */
int plot_gnuplot(const struct plot_out *o, const char *script, const char *const *args,
		 char *err, size_t errlen);

/* The label of site i of list l in the sites plot: its name, as every
   view shows it (rep_site_name), cut past 100 bytes. */
void plot_site_label(const struct rep_list *l, int i, char *buf, size_t len);

/* "leak (pid 1234), device 0" / "train.py (rank 1), device 1" /
   "3 processes, device 0" */
void plot_dev_title(const struct report *r, int di, char *buf, size_t len);

#endif
