/*
 * diff-plot.c - `memtrace diff --plot DIR`: the timelines of both runs of a
 * comparison (model/diff.c) as one overlay per device both runs have,
 *
 *   diff-devN.tsv        time_s since each run's own start, then reserved
 *                        and allocated before, reserved and allocated after
 *                        (MiB): the rows of both timelines merged by time,
 *                        each side holding its last value
 *   diff-devN.marks.tsv  the peak of each run
 *   diff-devN.png        drawn by scripts/diff-timeline.gp
 *
 * Every figure is a model's (an_dev.tl and an_dev.peak of each run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "model/diff.h"
#include "trace/trace-read.h"
#include "views/format.h"
#include "views/plot.h"

#define PATHLEN (PATH_MAX + 128)

static const double MIB = 1048576.0;

static int cannot_write(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
	return -1;
}

/* The rows of both timelines merged by time: at each time either has a
   row, the state of each from its last row (0 before its first). */
static int write_overlay(const struct an_dev *b, const struct an_dev *a, const char *path)
{
	FILE *f = fopen(path, "w");
	struct an_tl_row zb = { 0, 0, 0 }, za = { 0, 0, 0 };
	const struct an_tl_row *rb = &zb, *ra = &za;
	uint32_t i = 0, j = 0;

	if (!f)
		return -1;
	fputs("# time_s\tbefore_reserved_MiB\tbefore_allocated_MiB\tafter_reserved_MiB\t"
	      "after_allocated_MiB\n", f);
	while (i < b->ntl || j < a->ntl) {
		uint64_t t;

		if (j >= a->ntl || (i < b->ntl && b->tl[i].t <= a->tl[j].t))
			t = b->tl[i].t;
		else
			t = a->tl[j].t;
		while (i < b->ntl && b->tl[i].t == t)
			rb = &b->tl[i++];
		while (j < a->ntl && a->tl[j].t == t)
			ra = &a->tl[j++];
		fprintf(f, "%.9f\t%.3f\t%.3f\t%.3f\t%.3f\n", t / 1e9, rb->reserved / MIB,
			rb->allocated / MIB, ra->reserved / MIB, ra->allocated / MIB);
	}
	return fclose(f);
}

static int write_marks(const struct an_dev *b, const struct an_dev *a, const char *path)
{
	FILE *f = fopen(path, "w");
	char sz[32];

	if (!f)
		return -1;
	fprintf(f, "%.9f\t%.3f\tbefore\tpeak before %s\n", b->peak.time / 1e9,
		b->peak.reserved / MIB, rep_size(sz, sizeof(sz), b->peak.reserved));
	fprintf(f, "%.9f\t%.3f\tafter\tpeak after %s\n", a->peak.time / 1e9,
		a->peak.reserved / MIB, rep_size(sz, sizeof(sz), a->peak.reserved));
	return fclose(f);
}

/* A run by its traces: "plain.bin", "rank0.bin +3 more". */
static void run_name(const struct report *r, char *buf, size_t len)
{
	const struct analysis *a = r->a;
	const char *p = a->nprocs ? trace_path(stream_proc(a->s, 0)->t) : NULL;
	const char *slash = p ? strrchr(p, '/') : NULL;

	if (!p) {
		snprintf(buf, len, "?");
		return;
	}
	if (a->nprocs > 1)
		snprintf(buf, len, "%.100s +%d more", slash ? slash + 1 : p, a->nprocs - 1);
	else
		snprintf(buf, len, "%.100s", slash ? slash + 1 : p);
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '"')
			*c = '?';
}

int diff_plot(const struct diff *d, const struct plot_out *o, int *nplots, char *err,
	      size_t errlen)
{
	char nb[128], na[128];

	*nplots = 0;
	run_name(d->rb, nb, sizeof(nb));
	run_name(d->ra, na, sizeof(na));
	for (int k = 0; k < d->ngdev_rows; k++) {
		const struct diff_dev *dd = &d->devs[k];
		const struct an_dev *b, *a;
		char name[64], dn[256], tsv[PATHLEN], marks[PATHLEN], png[PATHLEN], title[768];

		if (dd->db < 0 || dd->da < 0)
			continue;
		b = &d->rb->a->devs[dd->db];
		a = &d->ra->a->devs[dd->da];
		if (d->rb->a->nhosts > 1 || d->ra->a->nhosts > 1)
			snprintf(name, sizeof(name), "h%d-dev%d", a->host, a->dev);
		else
			snprintf(name, sizeof(name), "dev%d", a->dev);
		snprintf(tsv, sizeof(tsv), "%s/diff-%s.tsv", o->dir, name);
		snprintf(marks, sizeof(marks), "%s/diff-%s.marks.tsv", o->dir, name);
		snprintf(png, sizeof(png), "%s/diff-%s.%s", o->dir, name, o->fmt);
		if (write_overlay(b, a, tsv))
			return cannot_write(tsv, err, errlen);
		if (write_marks(b, a, marks))
			return cannot_write(marks, err, errlen);
		rep_dev_name(d->ra, a, dn, sizeof(dn));
		snprintf(title, sizeof(title), "%s (before) vs %s (after), %s: GPU memory over time",
			 nb, na, dn);
		{
			const char *args[] = { tsv, png, marks, title, NULL };

			if (plot_gnuplot(o, "diff-timeline.gp", args, err, errlen))
				return -1;
		}
		(*nplots)++;
	}
	return 0;
}
