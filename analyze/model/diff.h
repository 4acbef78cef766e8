/*
 * diff.h - two runs compared (diff.c): their processes and devices matched,
 * the figures of each device before and after, and the sites matched by
 * their resolved frames, never by addresses or ids, so that two builds of
 * one program still compare; the runs' steps (model/ranges.h) aligned by
 * their numbers, step N against step N. The views (views/diff-text.c, diff-json.c)
 * format it; docs/diff.md defines it.
 */
#ifndef MEMTRACE_DIFF_H
#define MEMTRACE_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "model/report.h"

/* The figures compared per device, in the order the views show them. */
enum diff_figure {
	DF_PEAK_RESERVED,
	DF_PEAK_ALLOCATED,
	DF_CACHED,              /* reserved - allocated at the peak */
	DF_USED,                /* device used at the peak (a sample) */
	DF_UNTRACED,            /* used - reserved at that sample */
	DF_LEFT_AT_EXIT,
	DF_FAILURES,
	DF_OOM_RETRIES,
	/* the framework's (PyTorch's allocator, model/framework.h): rows of
	   struct diff.fwdevs */
	DF_FW_PEAK_ALLOCATED,   /* allocated_bytes at its peak */
	DF_FW_PEAK_REQUESTED,   /* requested_bytes at its peak */
	DF_FW_PEAK_RESERVED,    /* the framework's reserved at its peak */
	DF_FW_CACHED,           /* cached at the peak of allocated */
	DF_FW_LEFT_AT_EXIT,     /* tensor leak candidates' bytes left at exit */
	DF_FW_OOMS,             /* out-of-memory errors */
	/* the steps' (model/ranges.h), of the run, not per device */
	DF_STEP_PEAK,           /* a step's peak of reserved (struct diff.steps) */
	DF_GROWTH_PER_STEP,     /* reserved at a step's end, per step */
	DF_NFIGS
};
#define DF_FW_FIRST DF_FW_PEAK_ALLOCATED
#define DF_STEP_FIRST DF_STEP_PEAK

struct diff_fig {
	int64_t before, after;
	int has_before, has_after;  /* 0: not known on that side */
};

/* A device (gdev) of the run, or one process's device (pdev); in
   struct diff.fwdevs, a framework device (struct fw_dev). */
struct diff_dev {
	int dev;                    /* device index */
	int db, da;                 /* index in a->devs (fwdevs: a->fw->devs)
	                               before / after, -1 none */
	int pb, pa;                 /* processes of a pdev row, -1 for a gdev */
	struct diff_fig f[DF_NFIGS];
};

enum diff_match { DM_EXACT, DM_FUZZY, DM_BEFORE_ONLY, DM_AFTER_ONLY };

struct diff_site {
	int dev;                    /* -1 pinned host */
	const struct site *b, *a;   /* NULL when the run has no such site */
	const struct fw_site *tb, *ta;  /* tensor sites (struct diff.tsites) */
	enum diff_match match;
	uint64_t peak_b, peak_a;    /* held at its device's peak */
	uint64_t exit_b, exit_a;    /* left at exit */
};

/* A step number of either run, and its peak: the highest of the steps of
   that number (one per process that has it); has_before / has_after: the
   run has a step of that number. */
struct diff_step {
	uint32_t no;
	struct diff_fig peak;
};

struct diff {
	const struct report *rb, *ra;
	/* processes: correspond only when every process has its pair */
	int procs_correspond;
	int by_rank;                /* matched by rank, else by command and order */
	int *pair_b;                /* per process before: the after one, -1 none */
	int *pair_a;                /* per process after: the before one, -1 none */
	struct diff_dev *devs;      /* gdev rows, then pdev rows */
	int ndevs, ngdev_rows;
	struct diff_site *sites;
	int nsites;
	int nmatch[4];              /* sites per enum diff_match */
	int *at_peak, npeak;        /* sites whose peak bytes changed, ranked */
	int *at_exit, nexit;        /* sites whose exit bytes changed, ranked */
	/* the framework's: present when either run has framework records */
	int has_fw;
	struct diff_dev *fwdevs;    /* the run's framework devices, then the
	                               processes' (as devs) */
	int nfwdevs, nfw_gdev_rows;
	struct diff_site *tsites;   /* tensor sites matched by their Python
	                               frames; peak_*: held at the peak of
	                               allocated of their device */
	int ntsites;
	int tnmatch[4];
	int *t_at_peak, ntpeak;
	int *t_at_exit, ntexit;
	/* the steps: each run's step range ("step N"; NULL: no steps), the
	   step numbers of either run in order, how many both runs have, and
	   the growth per step (has_*: that run has two steps or more) */
	const char *steps_b, *steps_a;
	uint32_t nsteps_b, nsteps_a;
	struct diff_step *steps;
	int nsteps, nsteps_both;
	struct diff_fig growth;
};

int diff_build(struct diff *d, const struct report *before, const struct report *after,
	       char *err, size_t errlen);
void diff_free(struct diff *d);

/* "peak_reserved_bytes" ...: the JSON name of a figure */
const char *diff_figure_name(enum diff_figure f);
/* "peak", "allocated_peak" ...: the short --fail-if word of a figure */
const char *diff_figure_word(enum diff_figure f);
/* The figure named (JSON name or the short --fail-if word), or -1. */
int diff_figure_parse(const char *word);

/*
 * --fail-if: 1 when on some device both runs have (a framework figure:
 * some framework device), figure f grew by more
 * than limit (a percent of the figure before when pct; bytes or a count
 * otherwise); 0 when it did not.
 */
int diff_exceeds(const struct diff *d, enum diff_figure f, double limit, int pct);
/* Why figure f cannot be compared (a step figure where a run has no steps,
   no step in both runs, or fewer than two steps), NULL when it can: a
   --fail-if on it is then taken as holding, never as passing. */
const char *diff_missing(const struct diff *d, enum diff_figure f);

/* The views; files name the traces of each side. */
int diff_text(const struct diff *d, FILE *f);
/* fail_why: not NULL when the --fail-if could not be judged (diff_missing) */
int diff_json(const struct diff *d, FILE *f, const char *fail_if, int fail_holds,
	      const char *fail_why);

/* views/diff-plot.c: the timelines of both runs as an overlay, per device
   both have, into o->dir (diff-devN.tsv, .marks.tsv, .png); *nplots the
   devices drawn. Returns 0, or -1 with a message in err. */
struct plot_out;
int diff_plot(const struct diff *d, const struct plot_out *o, int *nplots, char *err,
	      size_t errlen);

#endif
