/*
 * diff-text.c - `memtrace diff` for a person: the figures of each device
 * before and after with their change, then the sites whose bytes changed
 * at the peak and at exit, largest change first, and the steps, step N
 * against step N, when a run has steps (model/diff.c computes
 * everything; docs/diff.md).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/framework.h"
#include "views/format.h"

static const char *const labels[DF_NFIGS] = {
	[DF_PEAK_RESERVED] = "peak reserved",
	[DF_PEAK_ALLOCATED] = "peak allocated",
	[DF_CACHED] = "cached at the peak",
	[DF_USED] = "device used at the peak",
	[DF_UNTRACED] = "untraced at the peak",
	[DF_LEFT_AT_EXIT] = "left at exit",
	[DF_FAILURES] = "failed allocations",
	[DF_OOM_RETRIES] = "OOM retries",
	[DF_FW_PEAK_ALLOCATED] = "peak allocated",
	[DF_FW_PEAK_REQUESTED] = "peak requested",
	[DF_FW_PEAK_RESERVED] = "peak reserved",
	[DF_FW_CACHED] = "cached at peak allocated",
	[DF_FW_LEFT_AT_EXIT] = "tensors left at exit",
	[DF_FW_OOMS] = "out-of-memory errors",
	[DF_STEP_PEAK] = "peak reserved",
	[DF_GROWTH_PER_STEP] = "growth per step",
};

static int is_count(int fig)
{
	return fig == DF_FAILURES || fig == DF_OOM_RETRIES || fig == DF_FW_OOMS;
}

/* A figure in a rotating buffer: a size, a count, or "-" when unknown;
   sign: with "+" or "-" in front. */
static const char *fig_str(int fig, int64_t v, int known, int sign)
{
	static char buf[8][40];
	static int k;
	uint64_t m = (uint64_t)(v < 0 ? -v : v);
	char *b;

	k = (k + 1) % 8;
	b = buf[k];
	if (!known)
		return "-";
	if (is_count(fig)) {
		snprintf(b, sizeof(buf[k]), "%s%" PRIu64, sign && v ? (v < 0 ? "-" : "+") : "", m);
	} else {
		char s[32];

		snprintf(b, sizeof(buf[k]), "%s%s", sign && v ? (v < 0 ? "-" : "+") : "",
			 rep_size(s, sizeof(s), m));
	}
	return b;
}

/* A row's figures after its label: before, after, the change. */
static void row_values(FILE *f, int fig, const struct diff_fig *x, int both)
{
	fprintf(f, " %12s", fig_str(fig, x->before, x->has_before, 0));
	fprintf(f, " %12s", fig_str(fig, x->after, x->has_after, 0));
	if (both && x->has_before && x->has_after) {
		int64_t c = x->after - x->before;

		fprintf(f, " %12s", fig_str(fig, c, 1, 1));
		if (x->before && c)
			fprintf(f, "  %+.1f%%", (double)c * 100.0 / (double)x->before);
		else if (c)
			fputs("  new", f);
	}
	fputc('\n', f);
}

static void row(FILE *f, int fig, const struct diff_fig *x, int both)
{
	fprintf(f, "  %-24s", labels[fig]);
	row_values(f, fig, x, both);
}

/* The cached share of reserved at the peak, before and after. */
static void share(FILE *f, const struct diff_fig *x)
{
	char sb[16] = "-", sa[16] = "-";

	if (x[DF_PEAK_RESERVED].has_before && x[DF_PEAK_RESERVED].before)
		snprintf(sb, sizeof(sb), "%.1f%%", (double)x[DF_CACHED].before * 100.0 /
			 (double)x[DF_PEAK_RESERVED].before);
	if (x[DF_PEAK_RESERVED].has_after && x[DF_PEAK_RESERVED].after)
		snprintf(sa, sizeof(sa), "%.1f%%", (double)x[DF_CACHED].after * 100.0 /
			 (double)x[DF_PEAK_RESERVED].after);
	fprintf(f, "  %-24s %12s %12s\n", "cached share", sb, sa);
}

/* A site by its name, the one every view shows (rep_site_name; a tensor
   site: fw_site_name), escaped for a terminal. */
static void site_name(FILE *f, const struct report *r, const struct diff_site *s)
{
	char b[4096];

	if (s->ta || s->tb)
		fw_site_name(b, sizeof(b), r->a, s->ta ? s->ta : s->tb, NULL);
	else
		rep_site_name(b, sizeof(b), s->a ? s->a : s->b, NULL);
	rep_text_str(f, b, strlen(b));
}

static const char *status(uint64_t b, uint64_t a)
{
	if (!b)
		return "appeared";
	if (!a)
		return "disappeared";
	return a > b ? "grew" : "shrank";
}

static void sites(FILE *f, const struct diff *d, const struct diff_site *v, const int *order,
		  int n, const char *title)
{
	char s1[32], s2[32];
	int exit_ = !strncmp(title, "left", 4);

	fprintf(f, "\n%s %s, by change:\n", v == d->tsites ? "tensor sites" : "sites", title);
	if (!n)
		fputs("  none changed\n", f);
	for (int i = 0; i < n && i < REP_TOP; i++) {
		const struct diff_site *s = &v[order[i]];
		uint64_t b = exit_ ? s->exit_b : s->peak_b, a = exit_ ? s->exit_a : s->peak_a;
		int after = s->a || s->ta;

		fprintf(f, "  %12s  %-11s %10s -> %-10s  ", fig_str(DF_PEAK_RESERVED, (int64_t)a - (int64_t)b, 1, 1),
			status(b, a), rep_size(s1, sizeof(s1), b), rep_size(s2, sizeof(s2), a));
		if (s->dev >= 0)
			fprintf(f, "device %d  ", s->dev);
		else
			fputs("host  ", f);
		site_name(f, after ? d->ra : d->rb, s);
		if (s->match == DM_FUZZY)
			fputs("  [fuzzy: lines differ]", f);
		else if (s->match == DM_BEFORE_ONLY)
			fputs("  [site only before]", f);
		else if (s->match == DM_AFTER_ONLY)
			fputs("  [site only after]", f);
		fputc('\n', f);
	}
	if (n > REP_TOP)
		fprintf(f, "  ... %d more (--json lists all)\n", n - REP_TOP);
}

/* The rows of devs (n), figures from..to: a device's, or a process's. */
static void dev_rows(FILE *f, const struct diff *d, const struct diff_dev *devs, int n, int ngdev,
		     int from, int to)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;
	char name[256];

	for (int i = 0; i < n; i++) {
		const struct diff_dev *r = &devs[i];
		int both = r->db >= 0 && r->da >= 0;

		fputc('\n', f);
		if (i >= ngdev) {
			fprintf(f, "process %" PRIu32 " -> %" PRIu32 "%s, device %d", rep_pid(b, r->pb),
				rep_pid(a, r->pa), d->by_rank ? " (same rank)" : "", r->dev);
		} else if (from >= DF_FW_FIRST) {
			fprintf(f, "device %d", r->dev);
		} else {
			const struct report *rr = r->db >= 0 ? d->rb : d->ra;

			fputs(rep_dev_name(rr, &rr->a->devs[r->db >= 0 ? r->db : r->da], name,
					   sizeof(name)), f);
		}
		if (!both)
			fprintf(f, ": only %s, no device corresponds", r->db >= 0 ? "before" : "after");
		fprintf(f, "\n  %-24s %12s %12s %12s\n", "", "before", "after", "change");
		for (int k = from; k < to; k++) {
			row(f, k, &r->f[k], both);
			if (k == DF_CACHED)
				share(f, r->f);
		}
	}
}

/* The step numbers of one run only, as spans: "4-5, 9". */
static void only(FILE *f, const struct diff *d, int after)
{
	int n = 0;

	fprintf(f, "  steps only %s: ", after ? "after" : "before");
	for (int i = 0; i < d->nsteps; i++) {
		const struct diff_fig *p = &d->steps[i].peak;
		int j = i;

		if (after ? p->has_before : p->has_after)
			continue;
		while (j + 1 < d->nsteps && d->steps[j + 1].no == d->steps[j].no + 1 &&
		       (after ? !d->steps[j + 1].peak.has_before : !d->steps[j + 1].peak.has_after))
			j++;
		fprintf(f, "%s%" PRIu32, n++ ? ", " : "", d->steps[i].no);
		if (j > i)
			fprintf(f, "-%" PRIu32, d->steps[j].no);
		i = j;
	}
	fputs(n ? "\n" : "none\n", f);
}

/* The steps, step N against step N (when a run has steps): the first
   DIFF_STEPS in both, then the growth per step and the steps of one run. */
#define DIFF_STEPS 20
static void steps(FILE *f, const struct diff *d)
{
	char b[64];
	int n = 0;

	if (!d->steps_b && !d->steps_a)
		return;
	fputs("\nsteps, step N against step N: ", f);
	if (d->steps_b)
		fprintf(f, "%" PRIu32 " of '%s' before", d->nsteps_b, d->steps_b);
	else
		fputs("none before", f);
	if (d->steps_a)
		fprintf(f, ", %" PRIu32 " of '%s' after", d->nsteps_a, d->steps_a);
	else
		fputs(", none after", f);
	fprintf(f, "; %d in both\n  %-24s %12s %12s %12s\n", d->nsteps_both, "", "before", "after",
		"change");
	for (int i = 0; i < d->nsteps; i++) {
		if (!d->steps[i].peak.has_before || !d->steps[i].peak.has_after)
			continue;
		if (n++ == DIFF_STEPS) {
			fprintf(f, "  ... %d more (--json lists all)\n", d->nsteps_both - DIFF_STEPS);
			break;
		}
		snprintf(b, sizeof(b), "step %" PRIu32 ": peak", d->steps[i].no);
		fprintf(f, "  %-24s", b);
		row_values(f, DF_STEP_PEAK, &d->steps[i].peak, 1);
	}
	row(f, DF_GROWTH_PER_STEP, &d->growth, 1);
	only(f, d, 0);
	only(f, d, 1);
}

int diff_text(const struct diff *d, FILE *f)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;

	fprintf(f, "before: %d process%s; after: %d process%s\n", b->nprocs,
		b->nprocs == 1 ? "" : "es", a->nprocs, a->nprocs == 1 ? "" : "es");
	if (d->procs_correspond && !d->by_rank && b->nprocs == 1 && a->nprocs == 1)
		fputs("processes: one in each run\n", f);
	else if (d->procs_correspond)
		fprintf(f, "processes: they correspond, matched by %s\n",
			d->by_rank ? "rank" : "program and order");
	else
		fprintf(f, "processes: they do not correspond (%d before, %d after, matched by %s): "
			"only the devices are compared\n", b->nprocs, a->nprocs,
			d->by_rank ? "rank" : "program and order");
	dev_rows(f, d, d->devs, d->ndevs, d->ngdev_rows, 0, DF_FW_FIRST);
	fprintf(f, "\nsites: %d matched exactly, %d fuzzy (function and file only), %d only before, "
		"%d only after\n", d->nmatch[DM_EXACT], d->nmatch[DM_FUZZY], d->nmatch[DM_BEFORE_ONLY],
		d->nmatch[DM_AFTER_ONLY]);
	sites(f, d, d->sites, d->at_peak, d->npeak, "at the peak");
	sites(f, d, d->sites, d->at_exit, d->nexit, "left at exit");
	steps(f, d);
	if (!d->has_fw)
		return ferror(f) ? -1 : 0;
	fprintf(f, "\nframework: PyTorch (%s before, %s after)\n", b->fw ? "recorded" : "not recorded",
		a->fw ? "recorded" : "not recorded");
	dev_rows(f, d, d->fwdevs, d->nfwdevs, d->nfw_gdev_rows, DF_FW_FIRST, DF_STEP_FIRST);
	fprintf(f, "\ntensor sites: %d matched exactly, %d fuzzy (Python files and functions only), "
		"%d only before, %d only after\n", d->tnmatch[DM_EXACT], d->tnmatch[DM_FUZZY],
		d->tnmatch[DM_BEFORE_ONLY], d->tnmatch[DM_AFTER_ONLY]);
	sites(f, d, d->tsites, d->t_at_peak, d->ntpeak, "at the peak of allocated");
	sites(f, d, d->tsites, d->t_at_exit, d->ntexit, "left at exit");
	return ferror(f) ? -1 : 0;
}
