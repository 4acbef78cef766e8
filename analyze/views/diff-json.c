/*
 * diff-json.c - `memtrace diff --json`: the comparison of model/diff.c
 * for machines, as docs/diff.md documents it.
 */
#include <inttypes.h>
#include <string.h>

#include "model/diff.h"
#include "views/format.h"

#define DIFF_FORMAT_VERSION 1

static void jstr(FILE *f, const char *s)
{
	if (s)
		rep_json_str(f, s, strlen(s));
	else
		fputs("null", f);
}

static void fig(FILE *f, const char *name, const struct diff_fig *x)
{
	fprintf(f, "\"%s\": {\"before\": ", name);
	if (x->has_before)
		fprintf(f, "%" PRId64, x->before);
	else
		fputs("null", f);
	fputs(", \"after\": ", f);
	if (x->has_after)
		fprintf(f, "%" PRId64, x->after);
	else
		fputs("null", f);
	if (x->has_before && x->has_after) {
		fprintf(f, ", \"change\": %" PRId64 ", \"change_percent\": ", x->after - x->before);
		if (x->before)
			fprintf(f, "%.3f", (double)(x->after - x->before) * 100.0 / (double)x->before);
		else
			fputs("null", f);
	} else {
		fputs(", \"change\": null, \"change_percent\": null", f);
	}
	fputc('}', f);
}

static void side(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;

	fprintf(f, "{\"processes\": [");
	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *p = stream_proc(a->s, i);

		fprintf(f, "%s{\"pid\": %" PRIu32 ", \"rank\": %d, \"trace\": ", i ? ", " : "",
			rep_pid(a, i), p->process ? p->process->rank : -1);
		jstr(f, trace_path(p->t));
		fputc('}', f);
	}
	fputs("]}", f);
}

static void frames(FILE *f, const struct sym_stack *st)
{
	fputs("[", f);
	for (int i = 0; st && i < st->nframes; i++) {
		const struct sym_frame *fr = &st->frames[i];

		fputs(i ? ", {\"function\": " : "{\"function\": ", f);
		jstr(f, fr->function);
		fputs(", \"file\": ", f);
		jstr(f, fr->file);
		fprintf(f, ", \"line\": %d, \"module\": ", fr->line);
		jstr(f, fr->module);
		fputc('}', f);
	}
	fputs("]", f);
}

static const char *const match_names[] = {
	[DM_EXACT] = "exact", [DM_FUZZY] = "fuzzy",
	[DM_BEFORE_ONLY] = "before_only", [DM_AFTER_ONLY] = "after_only",
};

static void sites(FILE *f, const struct diff *d, const int *order, int n, int exit_)
{
	for (int i = 0; i < n; i++) {
		const struct diff_site *s = &d->sites[order[i]];
		uint64_t b = exit_ ? s->exit_b : s->peak_b, a = exit_ ? s->exit_a : s->peak_a;

		fprintf(f, "%s\n    {\"device\": ", i ? "," : "");
		if (s->dev >= 0)
			fprintf(f, "%d", s->dev);
		else
			fputs("\"host\"", f);
		fprintf(f, ", \"status\": \"%s\", \"match\": \"%s\", \"caching_allocator\": %s, "
			"\"before_bytes\": %" PRIu64 ", \"after_bytes\": %" PRIu64
			", \"change_bytes\": %" PRId64 ", \"before_site\": ",
			!b ? "appeared" : !a ? "disappeared" : a > b ? "grew" : "shrank",
			match_names[s->match], (s->a ? s->a : s->b)->caching ? "true" : "false",
			b, a, (int64_t)a - (int64_t)b);
		if (s->b)
			fprintf(f, "%" PRIu32, s->b->id);
		else
			fputs("null", f);
		fputs(", \"after_site\": ", f);
		if (s->a)
			fprintf(f, "%" PRIu32, s->a->id);
		else
			fputs("null", f);
		fputs(", \"frames\": ", f);
		frames(f, (s->a ? s->a : s->b)->st);
		fputc('}', f);
	}
}

int diff_json(const struct diff *d, FILE *f, const char *fail_if, int fail_holds)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;

	fprintf(f, "{\n  \"format_version\": %d,\n  \"before\": ", DIFF_FORMAT_VERSION);
	side(f, d->rb);
	fputs(",\n  \"after\": ", f);
	side(f, d->ra);
	fprintf(f, ",\n  \"processes\": {\"correspond\": %s, \"matched_by\": \"%s\", \"pairs\": [",
		d->procs_correspond ? "true" : "false", d->by_rank ? "rank" :
		b->nprocs == 1 && a->nprocs == 1 ? "single" : "program");
	for (int i = 0, n = 0; i < b->nprocs; i++)
		if (d->pair_b[i] >= 0)
			fprintf(f, "%s{\"before_pid\": %" PRIu32 ", \"after_pid\": %" PRIu32 "}",
				n++ ? ", " : "", rep_pid(b, i), rep_pid(a, d->pair_b[i]));
	fputs("], \"before_only\": [", f);
	for (int i = 0, n = 0; i < b->nprocs; i++)
		if (d->pair_b[i] < 0)
			fprintf(f, "%s%" PRIu32, n++ ? ", " : "", rep_pid(b, i));
	fputs("], \"after_only\": [", f);
	for (int i = 0, n = 0; i < a->nprocs; i++)
		if (d->pair_a[i] < 0)
			fprintf(f, "%s%" PRIu32, n++ ? ", " : "", rep_pid(a, i));
	fputs("]},\n  \"devices\": [", f);
	for (int i = 0; i < d->ndevs; i++) {
		const struct diff_dev *r = &d->devs[i];
		const struct report *rr = r->db >= 0 ? d->rb : d->ra;
		const struct an_dev *ad = &rr->a->devs[r->db >= 0 ? r->db : r->da];
		const char *h;
		size_t hl;

		if (i == d->ngdev_rows)
			fputs("\n  ],\n  \"process_devices\": [", f);
		an_hostname(rr->a, ad->host_proc, &h, &hl);
		fprintf(f, "%s\n    {\"device\": %d, \"hostname\": ", i && i != d->ngdev_rows ? "," : "",
			r->dev);
		rep_json_str(f, h, hl);
		if (r->pb >= 0)
			fprintf(f, ", \"before_pid\": %" PRIu32 ", \"after_pid\": %" PRIu32,
				rep_pid(b, r->pb), rep_pid(a, r->pa));
		fprintf(f, ", \"in\": \"%s\"",
			r->db >= 0 && r->da >= 0 ? "both" : r->db >= 0 ? "before_only" : "after_only");
		for (int k = 0; k < DF_NFIGS; k++) {
			fputs(", ", f);
			fig(f, diff_figure_name(k), &r->f[k]);
		}
		fputc('}', f);
	}
	if (d->ngdev_rows == d->ndevs)
		fputs("\n  ],\n  \"process_devices\": [", f);
	fputs("\n  ],\n  \"site_matches\": {", f);
	for (int k = 0; k < 4; k++)
		fprintf(f, "%s\"%s\": %d", k ? ", " : "", match_names[k], d->nmatch[k]);
	fputs("},\n  \"sites_at_peak\": [", f);
	sites(f, d, d->at_peak, d->npeak, 0);
	fputs("\n  ],\n  \"sites_at_exit\": [", f);
	sites(f, d, d->at_exit, d->nexit, 1);
	fputs("\n  ],\n  \"fail_if\": ", f);
	if (fail_if) {
		fputs("{\"expression\": ", f);
		jstr(f, fail_if);
		fprintf(f, ", \"holds\": %s}", fail_holds ? "true" : "false");
	} else {
		fputs("null", f);
	}
	fputs("\n}\n", f);
	return ferror(f) ? -1 : 0;
}
