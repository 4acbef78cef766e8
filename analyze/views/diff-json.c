/*
 * diff-json.c - `memtrace diff --json`: the comparison of model/diff.c
 * for machines, as docs/diff.md documents it (the steps too: "steps").
 */
#include <inttypes.h>
#include <string.h>

#include "model/diff.h"
#include "model/framework.h"
#include "trace/trace-read.h"
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

/* A tensor site's Python frames, innermost first. */
static void fw_frames(FILE *f, const struct report *r, const struct fw_site *s)
{
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;

	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(r->a->s, s->proc)->t, s->stack, fr, 64);
	fputs("[", f);
	for (uint32_t i = 0; i < nf && i < 64; i++) {
		fputs(i ? ", {\"file\": " : "{\"file\": ", f);
		rep_json_str(f, fr[i].file, fr[i].file_len);
		fprintf(f, ", \"line\": %" PRIu32 ", \"function\": ", fr[i].line);
		rep_json_str(f, fr[i].function, fr[i].function_len);
		fputc('}', f);
	}
	fputs("]", f);
}

static void sites(FILE *f, const struct diff *d, const struct diff_site *v, const int *order,
		  int n, int exit_)
{
	char name[4096];

	for (int i = 0; i < n; i++) {
		const struct diff_site *s = &v[order[i]];
		uint64_t b = exit_ ? s->exit_b : s->peak_b, a = exit_ ? s->exit_a : s->peak_a;
		int tensor = s->ta || s->tb;
		const struct report *shown = s->a || s->ta ? d->ra : d->rb;

		fprintf(f, "%s\n    {\"device\": ", i ? "," : "");
		if (s->dev >= 0)
			fprintf(f, "%d", s->dev);
		else
			fputs("\"host\"", f);
		fprintf(f, ", \"status\": \"%s\", \"match\": \"%s\", ",
			!b ? "appeared" : !a ? "disappeared" : a > b ? "grew" : "shrank",
			match_names[s->match]);
		if (!tensor)
			fprintf(f, "\"caching_allocator\": %s, ",
				(s->a ? s->a : s->b)->caching ? "true" : "false");
		fprintf(f, "\"before_bytes\": %" PRIu64 ", \"after_bytes\": %" PRIu64
			", \"change_bytes\": %" PRId64 ", \"before_site\": ", b, a,
			(int64_t)a - (int64_t)b);
		if (s->b || s->tb)
			fprintf(f, "%" PRIu32, s->b ? s->b->id : s->tb->id);
		else
			fputs("null", f);
		fputs(", \"after_site\": ", f);
		if (s->a || s->ta)
			fprintf(f, "%" PRIu32, s->a ? s->a->id : s->ta->id);
		else
			fputs("null", f);
		fputs(", \"name\": ", f);
		if (tensor) {
			const struct fw_site *t = s->ta ? s->ta : s->tb;

			jstr(f, fw_site_name(name, sizeof(name), shown->a, t, NULL));
			fputs(", \"function\": ", f);
			jstr(f, t->function);
			fputs(", \"file\": ", f);
			jstr(f, t->file);
			fprintf(f, ", \"line\": %" PRIu32 ", \"frames\": ", t->line);
			fw_frames(f, shown, t);
		} else {
			jstr(f, rep_site_name(name, sizeof(name), s->a ? s->a : s->b, NULL));
			fputs(", \"frames\": ", f);
			frames(f, (s->a ? s->a : s->b)->st);
		}
		fputc('}', f);
	}
}

/* The rows of devs from i0 to i1 (JSON objects), figures from..to. */
static void dev_rows(FILE *f, const struct diff *d, const struct diff_dev *devs, int i0, int i1,
		     int from, int to)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;

	for (int i = i0; i < i1; i++) {
		const struct diff_dev *r = &devs[i];
		const char *h = "";
		size_t hl = 0;

		if (from < DF_FW_FIRST) {
			const struct report *rr = r->db >= 0 ? d->rb : d->ra;

			an_hostname(rr->a, rr->a->devs[r->db >= 0 ? r->db : r->da].host_proc, &h, &hl);
		} else {
			const struct analysis *x = r->db >= 0 ? b : a;
			const struct fw_dev *fd = &x->fw->devs[r->db >= 0 ? r->db : r->da];

			for (int k = 0; k < x->ndevs; k++)
				if (x->devs[k].host == fd->host) {
					an_hostname(x, x->devs[k].host_proc, &h, &hl);
					break;
				}
		}
		fprintf(f, "%s\n    {\"device\": %d, \"hostname\": ", i > i0 ? "," : "", r->dev);
		rep_json_str(f, h, hl);
		if (r->pb >= 0)
			fprintf(f, ", \"before_pid\": %" PRIu32 ", \"after_pid\": %" PRIu32,
				rep_pid(b, r->pb), rep_pid(a, r->pa));
		fprintf(f, ", \"in\": \"%s\"",
			r->db >= 0 && r->da >= 0 ? "both" : r->db >= 0 ? "before_only" : "after_only");
		for (int k = from; k < to; k++) {
			fputs(", ", f);
			fig(f, diff_figure_name(k), &r->f[k]);
		}
		fputc('}', f);
	}
}

static void matches(FILE *f, const int *nmatch)
{
	fputc('{', f);
	for (int k = 0; k < 4; k++)
		fprintf(f, "%s\"%s\": %d", k ? ", " : "", match_names[k], nmatch[k]);
	fputc('}', f);
}

/* The steps aligned by number: each run's step range, the numbers in
   both with their peaks, those in one run only. */
static void steps(FILE *f, const struct diff *d)
{
	const char *names[2] = { d->steps_b, d->steps_a };
	const uint32_t counts[2] = { d->nsteps_b, d->nsteps_a };
	int n = 0;

	if (!d->steps_b && !d->steps_a) {
		fputs("null", f);
		return;
	}
	for (int k = 0; k < 2; k++) {
		fputs(k ? ", \"after\": " : "{\"before\": ", f);
		if (names[k]) {
			fputs("{\"range\": ", f);
			jstr(f, names[k]);
			fprintf(f, ", \"count\": %" PRIu32 "}", counts[k]);
		} else {
			fputs("null", f);
		}
	}
	fputs(",\n    ", f);
	fig(f, diff_figure_name(DF_GROWTH_PER_STEP), &d->growth);
	fprintf(f, ",\n    \"in_both\": %d, \"steps\": [", d->nsteps_both);
	for (int i = 0; i < d->nsteps; i++)
		if (d->steps[i].peak.has_before && d->steps[i].peak.has_after) {
			fprintf(f, "%s\n      {\"step\": %" PRIu32 ", ", n++ ? "," : "", d->steps[i].no);
			fig(f, "peak_reserved_bytes", &d->steps[i].peak);
			fputc('}', f);
		}
	for (int k = 0; k < 2; k++) {
		n = 0;
		fputs(k ? "], \"only_after\": [" : "],\n    \"only_before\": [", f);
		for (int i = 0; i < d->nsteps; i++)
			if (k ? !d->steps[i].peak.has_before : !d->steps[i].peak.has_after)
				fprintf(f, "%s%" PRIu32, n++ ? ", " : "", d->steps[i].no);
	}
	fputs("]}", f);
}

int diff_json(const struct diff *d, FILE *f, const char *fail_if, int fail_holds,
	      const char *fail_why)
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
	dev_rows(f, d, d->devs, 0, d->ngdev_rows, 0, DF_FW_FIRST);
	fputs("\n  ],\n  \"process_devices\": [", f);
	dev_rows(f, d, d->devs, d->ngdev_rows, d->ndevs, 0, DF_FW_FIRST);
	fputs("\n  ],\n  \"site_matches\": ", f);
	matches(f, d->nmatch);
	fputs(",\n  \"sites_at_peak\": [", f);
	sites(f, d, d->sites, d->at_peak, d->npeak, 0);
	fputs("\n  ],\n  \"sites_at_exit\": [", f);
	sites(f, d, d->sites, d->at_exit, d->nexit, 1);
	fputs("\n  ],\n  \"framework\": ", f);
	if (d->has_fw) {
		fprintf(f, "{\"before\": %s, \"after\": %s,\n  \"devices\": [",
			b->fw ? "true" : "false", a->fw ? "true" : "false");
		dev_rows(f, d, d->fwdevs, 0, d->nfw_gdev_rows, DF_FW_FIRST, DF_STEP_FIRST);
		fputs("\n  ],\n  \"process_devices\": [", f);
		dev_rows(f, d, d->fwdevs, d->nfw_gdev_rows, d->nfwdevs, DF_FW_FIRST, DF_STEP_FIRST);
		fputs("\n  ],\n  \"tensor_site_matches\": ", f);
		matches(f, d->tnmatch);
		fputs(",\n  \"tensor_sites_at_peak\": [", f);
		sites(f, d, d->tsites, d->t_at_peak, d->ntpeak, 0);
		fputs("\n  ],\n  \"tensor_sites_at_exit\": [", f);
		sites(f, d, d->tsites, d->t_at_exit, d->ntexit, 1);
		fputs("\n  ]}", f);
	} else {
		fputs("null", f);
	}
	fputs(",\n  \"steps\": ", f);
	steps(f, d);
	fputs(",\n  \"fail_if\": ", f);
	if (fail_if) {
		fputs("{\"expression\": ", f);
		jstr(f, fail_if);
		fprintf(f, ", \"holds\": %s", fail_holds ? "true" : "false");
		if (fail_why) {
			fputs(", \"error\": ", f);
			jstr(f, fail_why);
		}
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs("\n}\n", f);
	return ferror(f) ? -1 : 0;
}
