/*
 * html.c - the page of `memtrace view` (docs/view.md): one HTML file with
 * its styles, scripts and data inside, nothing loaded from elsewhere.
 *
 *   <style>   analyze/views/html/uPlot.min.css, view.css
 *   <body>    analyze/views/html/view.html
 *   <script type="application/json" id="memtrace-data">
 *             { "report": the JSON report (report_json, docs/report-json.md),
 *               "devices": per device of the run, in the report's order: its
 *                 title, timeline rows, samples, what it held at its peak by
 *                 site (all of them, not the top 10), each process's own
 *                 timeline rows on it and its address map,
 *               "sites": every site of the run, with its frames,
 *               "framework": the framework's timelines (absent: none) }
 *   <script>  uPlot.iife.min.js, view.js (they only draw: no figure of the
 *             page is computed there)
 *
 * The static parts are linked in as C arrays (the Makefile makes
 * build/gen/html-assets.c from analyze/views/html/ with xxd -i).
 *
 * No string of a trace may end the data script: the whole data is written
 * through one filter that turns every '<' into \u003c, which only occurs
 * inside JSON strings, where it means the same character.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/format.h"
#include "model/framework.h"
#include "views/html.h"

/* build/gen/html-assets.c */
extern const unsigned char view_html[], view_css[], view_js[], uPlot_iife_min_js[],
	uPlot_min_css[];
extern const unsigned int view_html_len, view_css_len, view_js_len, uPlot_iife_min_js_len,
	uPlot_min_css_len;

#define MAX_FRAMES 64               /* frames of a site kept in the page */

static void put(FILE *f, const unsigned char *p, unsigned int n)
{
	fwrite(p, 1, n, f);
}

static void frame(FILE *f, const struct sym_frame *fr)
{
	fputs("{\"function\":", f);
	if (fr->function)
		rep_json_str(f, fr->function, strlen(fr->function));
	else
		fputs("null", f);
	fputs(",\"file\":", f);
	if (fr->file)
		rep_json_str(f, fr->file, strlen(fr->file));
	else
		fputs("null", f);
	fprintf(f, ",\"line\":%d,\"module\":", fr->line);
	rep_json_str(f, fr->module, strlen(fr->module));
	fprintf(f, ",\"offset\":\"0x%" PRIx64 "\",\"python\":%s}", fr->offset,
		fr->python ? "true" : "false");
}

/* The frames a person reads: from the main frame outward, as the report. */
static void frames(FILE *f, const struct sym_stack *st)
{
	const struct sym_frame *m = st ? rep_main_frame(st) : NULL;
	int from = m ? (int)(m - st->frames) : 0, n = 0;

	fputc('[', f);
	for (int i = from; st && i < st->nframes && n < MAX_FRAMES; i++, n++) {
		if (n)
			fputc(',', f);
		frame(f, &st->frames[i]);
	}
	fputc(']', f);
}

static void sites(FILE *f, const struct report *r)
{
	fputs("\"sites\":[", f);
	for (uint32_t i = 0; i < r->sites.n; i++) {
		const struct site *s = &r->sites.v[i];

		fprintf(f,
			"%s\n{\"site\":%" PRIu32 ",\"device\":%d,\"caching_allocator\":%s,"
			"\"processes\":%d,\"allocations\":%" PRIu64 ",\"allocated_bytes\":%" PRIu64
			",\"live_at_exit_bytes\":%" PRIu64 ",\"live_at_exit_count\":%" PRIu64
			",\"growing\":%s,\"frames\":",
			i ? "," : "", s->id, s->dev, s->caching ? "true" : "false", s->nprocs,
			s->allocs, s->bytes, s->exit_bytes, s->exit_count,
			s->growing ? "true" : "false");
		frames(f, s->st);
		fputc('}', f);
	}
	fputs("]", f);
}

/* The site id of an allocation of proc on device dev with stack, 0 none:
   a->sites is searched once per device into a table by (proc, stack). */
struct site_key { int proc; uint32_t stack; uint32_t id; };

static int cmp_key(const void *x, const void *y)
{
	const struct site_key *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static uint32_t site_id(const struct site_key *k, size_t n, int proc, uint32_t stack)
{
	struct site_key want = { proc, stack, 0 };
	const struct site_key *h = bsearch(&want, k, n, sizeof(*k), cmp_key);

	return h ? h->id : 0;
}

static int addrmap(FILE *f, const struct report *r, const struct plot_map *m, int di)
{
	const struct analysis *a = r->a;
	struct plot_box *v;
	struct site_key *k;
	size_t n, nall, nk = 0;
	int dev = a->devs[di].dev;

	if (!m) {
		fputs("null", f);
		return 0;
	}
	if (plot_map_boxes(a, m, di, HTML_MAP_MAX, &v, &n, &nall))
		return -1;
	if (!(k = malloc((a->nsites + 1) * sizeof(*k)))) {
		free(v);
		return -1;
	}
	/* caching allocators' segments are sites of their own: a box is the
	   plain site of its stack unless only a caching one exists */
	for (uint32_t i = 0; i < a->nsites; i++)
		if (a->sites[i].dev == dev && !a->sites[i].host)
			k[nk++] = (struct site_key){ a->sites[i].proc, a->sites[i].stack,
						     site_of(&r->sites, i)->id };
	qsort(k, nk, sizeof(*k), cmp_key);
	fprintf(f, "{\"shown\":%zu,\"total\":%zu,\"max\":%d,\"boxes\":[", n, nall, HTML_MAP_MAX);
	/* [t0, t1, y_lo, y_hi, bytes, pid, site, live, "address"] */
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32
			",%" PRIu32 ",%d,\"0x%" PRIx64 "\"]",
			i ? ",\n" : "", v[i].t0, v[i].t1, v[i].y_lo, v[i].y_hi, v[i].bytes,
			rep_pid(a, v[i].proc), site_id(k, nk, v[i].proc, v[i].stack), v[i].live,
			v[i].addr);
	fputs("]}", f);
	free(k);
	free(v);
	return 0;
}

/* rows t[], reserved[], allocated[] of a timeline, as "t":[..],... */
static void rows(FILE *f, const struct an_tl_row *tl, uint32_t n)
{
	fputs("\"t\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", tl[i].t);
	fputs("],\"reserved\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", tl[i].reserved);
	fputs("],\"allocated\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", tl[i].allocated);
	fputc(']', f);
}

/* Each process's own rows on the device of the run di (its pdev), in the
   model's order of processes: what the page stacks or shows alone. Its
   last row is its end; after_end is what it still holds from then on (0
   when its memory went back to the device when it ended). */
static void procs(FILE *f, const struct analysis *a, int di)
{
	int n = 0;

	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *p = &a->devs[i];

		if (p->proc < 0 || p->gdev != di || !p->ntl)
			continue;
		fprintf(f, "%s\n{\"pid\":%" PRIu32 ",\"proc\":%d,\"timeline\":{", n++ ? "," : "",
			rep_pid(a, p->proc), p->proc);
		rows(f, p->tl, p->ntl);
		/* from its last row on: 0 when its memory went back at its end */
		fprintf(f, "},\"after_end\":%" PRIu64 "}", p->live_at_end);
	}
}

static int device(FILE *f, const struct report *r, const struct plot_map *m, int di)
{
	const struct an_dev *d = &r->a->devs[di];
	const struct rep_list *l = &r->dev_sites[di];
	char title[512];

	plot_dev_title(r, di, title, sizeof(title));
	fputs("{\"title\":", f);
	rep_json_str(f, title, strlen(title));
	fprintf(f, ",\"device\":%d,\n\"timeline\":{", d->dev);
	rows(f, d->tl, d->ntl);
	fputs("},\n\"samples\":{\"t\":[", f);
	for (uint32_t i = 0; i < d->nsamples; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", d->samples[i].t);
	fputs("],\"used\":[", f);
	for (uint32_t i = 0; i < d->nsamples; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", d->samples[i].used);
	fputs("]},\n\"peak_sites\":[", f);
	for (int i = 0; i < l->total; i++)
		fprintf(f, "%s{\"site\":%" PRIu32 ",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			i ? "," : "", l->v[i].site->id, l->v[i].bytes, l->v[i].count);
	fputs("],\n\"processes\":[", f);
	procs(f, r->a, di);
	fputs("],\n\"address_map\":", f);
	if (addrmap(f, r, m, di))
		return -1;
	fputc('}', f);
	return 0;
}

/* The framework's own allocator, per device of the run: its timeline. */
static void framework(FILE *f, const struct fw_model *fw)
{
	int n = 0;

	fputs(",\n\"framework\":[", f);
	for (int i = 0; i < fw->ndevs; i++) {
		const struct fw_dev *d = &fw->devs[i];

		if (d->proc != -1)
			continue;
		fprintf(f, "%s{\"device\":%d,\"host\":%d,", n++ ? "," : "", d->dev, d->host);
		rows(f, d->tl, d->ntl);
		fputc('}', f);
	}
	fputs("]", f);
}

/* The data object, into a memory buffer. */
static int data(const struct report *r, const struct plot_map *m, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int rc = 0;

	if (!f)
		return -1;
	fputs("{\"report\":", f);
	if (report_json(r, f))
		rc = -1;
	fputs(",\n\"devices\":[", f);
	for (int g = 0; g < r->ngdevs && !rc; g++) {
		if (g)
			fputs(",\n", f);
		rc = device(f, r, m, r->gdevs[g]);
	}
	fputs("],\n", f);
	sites(f, r);
	if (r->a->fw)
		framework(f, r->a->fw);
	fputs("}\n", f);
	if (fclose(f) || rc) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}

int html_write(const struct report *r, const struct plot_map *m, FILE *f, char *err,
	       size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, from = 0;

	if (data(r, m, &buf, &len)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"memtrace " MEMTRACE_VERSION "\">\n"
	      "<title>memtrace view</title>\n<style>\n", f);
	put(f, uPlot_min_css, uPlot_min_css_len);
	fputs("\n", f);
	put(f, view_css, view_css_len);
	fputs("</style>\n</head>\n<body>\n", f);
	put(f, view_html, view_html_len);
	fputs("<script type=\"application/json\" id=\"memtrace-data\">", f);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '<')
			continue;
		fwrite(buf + from, 1, i - from, f);
		fputs("\\u003c", f);
		from = i + 1;
	}
	fwrite(buf + from, 1, len - from, f);
	fputs("</script>\n<script>\n", f);
	put(f, uPlot_iife_min_js, uPlot_iife_min_js_len);
	fputs("\n</script>\n<script>\n", f);
	put(f, view_js, view_js_len);
	fputs("</script>\n</body>\n</html>\n", f);
	free(buf);
	if (ferror(f)) {
		snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
