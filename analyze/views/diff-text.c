/*
 * diff-text.c - `memtrace diff` for a person: the figures of each device
 * before and after with their change, then the sites whose bytes changed
 * at the peak and at exit, largest change first (model/diff.c computes
 * everything; docs/diff.md).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
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
};

static int is_count(int fig)
{
	return fig == DF_FAILURES || fig == DF_OOM_RETRIES;
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

static void row(FILE *f, int fig, const struct diff_fig *x, int both)
{
	fprintf(f, "  %-24s %12s", labels[fig], fig_str(fig, x->before, x->has_before, 0));
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

static void frame(FILE *f, const struct sym_frame *fr)
{
	const char *b;

	if (fr->function) {
		rep_text_str(f, fr->function, strlen(fr->function));
		if (fr->file) {
			b = strrchr(fr->file, '/');
			fputs(" (", f);
			rep_text_str(f, b ? b + 1 : fr->file, strlen(b ? b + 1 : fr->file));
			fprintf(f, ":%d)", fr->line);
		}
	} else {
		b = strrchr(fr->module, '/');
		fputs(b ? b + 1 : (fr->module[0] ? fr->module : "?"), f);
	}
}

static void chain(FILE *f, const struct sym_stack *st)
{
	const struct sym_frame *m = rep_main_frame(st);
	int n = 0;

	if (!m) {
		fputs("(no stack recorded)", f);
		return;
	}
	for (int i = (int)(m - st->frames); i < st->nframes && n < 3; i++, n++) {
		if (n)
			fputs(" < ", f);
		frame(f, &st->frames[i]);
	}
}

static const char *status(uint64_t b, uint64_t a)
{
	if (!b)
		return "appeared";
	if (!a)
		return "disappeared";
	return a > b ? "grew" : "shrank";
}

static void sites(FILE *f, const struct diff *d, const int *order, int n, int exit_)
{
	char s1[32], s2[32];

	fprintf(f, "\nsites %s, by change:\n", exit_ ? "left at exit" : "at the peak");
	if (!n)
		fputs("  none changed\n", f);
	for (int i = 0; i < n && i < REP_TOP; i++) {
		const struct diff_site *s = &d->sites[order[i]];
		uint64_t b = exit_ ? s->exit_b : s->peak_b, a = exit_ ? s->exit_a : s->peak_a;
		const struct site *show = s->a ? s->a : s->b;

		fprintf(f, "  %12s  %-11s %10s -> %-10s  ", fig_str(DF_PEAK_RESERVED, (int64_t)a - (int64_t)b, 1, 1),
			status(b, a), rep_size(s1, sizeof(s1), b), rep_size(s2, sizeof(s2), a));
		if (s->dev >= 0)
			fprintf(f, "device %d  ", s->dev);
		else
			fputs("host  ", f);
		chain(f, show->st);
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

int diff_text(const struct diff *d, FILE *f)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;
	char name[256];

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
	for (int i = 0; i < d->ndevs; i++) {
		const struct diff_dev *r = &d->devs[i];
		const struct report *rr = r->db >= 0 ? d->rb : d->ra;
		const struct an_dev *ad = &rr->a->devs[r->db >= 0 ? r->db : r->da];
		int both = r->db >= 0 && r->da >= 0;

		fputc('\n', f);
		if (r->pb >= 0)
			fprintf(f, "process %" PRIu32 " -> %" PRIu32 "%s, device %d", rep_pid(b, r->pb),
				rep_pid(a, r->pa), d->by_rank ? " (same rank)" : "", r->dev);
		else
			fputs(rep_dev_name(rr, ad, name, sizeof(name)), f);
		if (!both)
			fprintf(f, ": only %s, no device corresponds", r->db >= 0 ? "before" : "after");
		fprintf(f, "\n  %-24s %12s %12s %12s\n", "", "before", "after", "change");
		for (int k = 0; k < DF_NFIGS; k++) {
			row(f, k, &r->f[k], both);
			if (k == DF_CACHED)
				share(f, r->f);
		}
	}
	fprintf(f, "\nsites: %d matched exactly, %d fuzzy (function and file only), %d only before, "
		"%d only after\n", d->nmatch[DM_EXACT], d->nmatch[DM_FUZZY], d->nmatch[DM_BEFORE_ONLY],
		d->nmatch[DM_AFTER_ONLY]);
	sites(f, d, d->at_peak, d->npeak, 0);
	sites(f, d, d->at_exit, d->nexit, 1);
	return ferror(f) ? -1 : 0;
}
