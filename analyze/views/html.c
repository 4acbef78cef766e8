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
 *               "framework": the framework's timelines (absent: none),
 *               "units": the program's ranges (absent: none): per step of
 *                 report.ranges.steps its growth (at its end - at its
 *                 start), per test of report.ranges.tests what it leaked,
 *                 and the outer ranges (RANGES_MAX at most) to draw on
 *                 the timelines: start, end, range, pid, its own name
 *                 ("domain:name" outside the default domain), left open,
 *                 from the ranges model's log (the first RG_MAX_SLICES
 *                 instances that ended), with what the log and RANGES_MAX
 *                 left out (instances_left_out, ranges_left_out) }
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
#include "model/ranges.h"
#include "views/html.h"

/* build/gen/html-assets.c */
extern const unsigned char view_html[], view_css[], view_js[], uPlot_iife_min_js[],
	uPlot_min_css[];
extern const unsigned int view_html_len, view_css_len, view_js_len, uPlot_iife_min_js_len,
	uPlot_min_css_len;

#define MAX_FRAMES 64               /* frames of a site kept in the page */
#define RANGES_MAX 5000             /* outer ranges drawn on the timelines */

static int fw_of_gdev(const struct report *r, int di);

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

/* "name":"...","folded":N: the one name of a call path every view shows
   (rep_stack_name), and the library frames inside its main one. */
static void stack_name(FILE *f, const struct sym_stack *st, int nframes)
{
	char b[4096];
	int folded = 0;

	rep_stack_name(b, sizeof(b), st, nframes, &folded);
	fputs("\"name\":", f);
	rep_json_str(f, b, strlen(b));
	fprintf(f, ",\"folded\":%d", folded > 0 ? folded : 0);
}

static void site_name(FILE *f, const struct site *s)
{
	stack_name(f, s->st, s->name_frames);
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
		fputc(',', f);
		site_name(f, s);
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

/* rows t[], reserved[], allocated[], cached[] of a timeline, as "t":[..],... */
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
	/* cached = reserved - allocated, the model's definition, so that the
	   page draws it and computes nothing */
	fputs("],\"cached\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", tl[i].reserved - tl[i].allocated);
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
	fputs("],\n\"peak_set_by\":", f);
	/* as the text report says them: who reached the peak, and when the
	   device-used sample beside it was taken */
	if (d->peak.reserved && d->peak.bytes) {
		fputc('{', f);
		stack_name(f, sym_stack(r->sy, r->a->s, d->peak.proc, d->peak.stack), 2);
		fputc('}', f);
	} else
		fputs("null", f);
	fputs(",\"sample_when\":", f);
	if (d->peak.reserved && d->peak.has_sample) {
		const struct an_peak *pk = &d->peak;
		char tm[32], b[96];

		if (pk->sample_time == pk->time)
			snprintf(b, sizeof(b), "sampled at the peak");
		else
			snprintf(b, sizeof(b), "sampled %s %s the peak",
				 rep_duration(tm, sizeof(tm), pk->sample_time > pk->time ?
					      pk->sample_time - pk->time : pk->time - pk->sample_time),
				 pk->sample_time > pk->time ? "after" : "before");
		rep_json_str(f, b, strlen(b));
	} else
		fputs("null", f);
	fprintf(f, ",\"framework\":%d", fw_of_gdev(r, di));
	fputs(",\n\"address_map\":", f);
	if (addrmap(f, r, m, di))
		return -1;
	fputc('}', f);
	return 0;
}

/* Each failure of the report's list (a->failures, in its order): the
   failed call's name and its top holders', as the text report names them. */
static void failures(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;

	fputs(",\n\"failures\":[", f);
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];

		fputs(i ? ",\n{" : "\n{", f);
		stack_name(f, sym_stack(r->sy, a->s, fl->proc, fl->stack), 2);
		fputs(",\"holders\":[", f);
		for (int k = 0; k < fl->ntop; k++) {
			const struct site *s = site_of(&r->sites, fl->top[k].site);

			fprintf(f, "%s{\"site\":%" PRIu32 ",", k ? "," : "", s->id);
			site_name(f, s);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]", f);
}

/* Each process (in the report's order): its warnings, as the text report
   says them under the process. */
static void processes(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;
	char w[512];

	fputs(",\n\"processes\":[", f);
	for (int i = 0; i < a->nprocs; i++) {
		fprintf(f, "%s{\"pid\":%" PRIu32 ",\"warnings\":[", i ? ",\n" : "\n", rep_pid(a, i));
		for (unsigned k = 0; !rep_proc_warning(a, i, k, w, sizeof(w)); k++) {
			if (k)
				fputc(',', f);
			rep_json_str(f, w, strlen(w));
		}
		fputs("]}", f);
	}
	fputs("]", f);
}

/* --- the program's units of time (model/ranges.h) ------------------------ */

/* Drawn on the timelines: a range no other encloses on its thread and
   domain, or one a step encloses (the phases of a step); steps are the
   bands, from report.ranges.steps. */
static int outer(const struct rg_model *m, const struct rg_slice *in)
{
	return (int)in->group != m->step_group &&
	       (in->parent_group < 0 || in->parent_group == m->step_group);
}

static void units(FILE *f, const struct report *r)
{
	const struct rg_model *m = r->a->ranges;
	uint32_t n = 0, more = 0;
	char b[512];

	if (!m)
		return;
	/* in the order of report.ranges.steps and .tests (report-json.c) */
	fputs(",\n\"units\":{\"steps\":[", f);
	for (uint32_t k = 0; k < m->nsteps; k++) {
		const struct rg_inst *in = &m->inst[m->steps[k]];

		fprintf(f, "%s{\"growth_bytes\":%" PRId64 "}", k ? "," : "",
			(int64_t)in->res1 - (int64_t)in->res0);
	}
	fputs("],\"tests\":[", f);
	for (uint32_t i = 0; i < m->ninst; i++) {
		const struct rg_inst *in = &m->inst[i];
		uint64_t held = m->has_fw ? in->fw0 : in->res0, end = m->has_fw ? in->fw1 : in->res1;

		if (in->origin != MT_ORIGIN_PYTEST)
			continue;
		fprintf(f, "%s{\"leaked_bytes\":%" PRIu64 "}", n++ ? "," : "", end > held ? end - held : 0);
	}
	fputs("],\"ranges\":[", f);
	n = 0;   /* [start_ns, end_ns, range, pid, name, open_at_exit] */
	for (uint32_t i = 0; i < m->nslices; i++) {
		const struct rg_slice *in = &m->slices[i];
		const struct rg_name *e = &m->names[in->nm];

		if (!outer(m, in))
			continue;
		if (n == RANGES_MAX) {
			more++;
			continue;
		}
		fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",", n++ ? ",\n" : "\n", in->t0, in->t1);
		rg_group_name(b, sizeof b, &m->groups[in->group]);
		rep_json_str(f, b, strlen(b));
		fprintf(f, ",%" PRIu32 ",", rep_pid(r->a, in->proc));
		if (e->domain)
			snprintf(b, sizeof b, "%s:%s", e->domain, e->name);
		else
			snprintf(b, sizeof b, "%s", e->name);
		rep_json_str(f, b, strlen(b));
		fprintf(f, ",%d]", in->open);
	}
	fprintf(f, "],\"ranges_left_out\":%" PRIu32 ",\"instances_logged\":%" PRIu32
		",\"instances_left_out\":%" PRIu64 "}", more, m->nslices, m->instances - m->nslices);
}

/* --- the framework (PyTorch's caching allocator) ------------------------- */

/* The framework's device of the run on the report's device di, -1 none:
   its index among the run's devices of fw->devs (the order of
   report.framework.devices, which lists them first). */
static int fw_of_gdev(const struct report *r, int di)
{
	const struct fw_model *m = r->a->fw;
	const struct an_dev *d = &r->a->devs[di];

	for (int i = 0, n = 0; m && i < m->ndevs; i++) {
		if (m->devs[i].proc >= 0)
			continue;
		if (m->devs[i].dev == d->dev && m->devs[i].host == d->host)
			return n;
		n++;
	}
	return -1;
}

/* The tensor sites a moment held, all of them, largest first. */
static void held(FILE *f, const char *k, const struct fw_moment *mo)
{
	fprintf(f, ",\"%s\":[", k);
	for (uint32_t i = 0; i < mo->nheld; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
			mo->held[i].site + 1, mo->held[i].bytes, mo->held[i].count);
	fputc(']', f);
}

/* Address ranges the segments (and blocks) of a device ever covered,
   merged: each drawn at y from its offset, the empty ranges between them
   squeezed out, as the CUDA-level address map does. */
struct fw_range { uint64_t lo, hi, y; };

static int cmp_range(const void *x, const void *y)
{
	const struct fw_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static uint64_t range_y(const struct fw_range *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].lo <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return n ? v[lo].y + (addr - v[lo].lo) : addr;
}

struct fw_pick { uint64_t size; uint64_t i; };

static int cmp_pick(const void *x, const void *y)
{
	const struct fw_pick *a = x, *b = y;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int cmp_pick_i(const void *x, const void *y)
{
	const struct fw_pick *a = x, *b = y;

	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * The tensor-level address map of the run's device rd: every segment (the
 * frame) and the largest HTML_MAP_MAX blocks, each
 *   segments: [t_alloc, t_free, y_lo, y_hi, bytes, pid, live, "address", mapped]
 *   blocks:   [t_alloc, t_free_requested, y_lo, y_hi, block bytes, pid,
 *              site, live, "address", requested bytes, t_free_completed]
 * in allocation order; t_free is the process's end when never freed.
 */
static int fw_map(FILE *f, const struct report *r, int rd)
{
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;
	struct fw_range *v;
	struct fw_pick *pk;
	size_t nv = 0, npk = 0, nall = 0, w = 0;

	if (!(v = malloc((m->nsegs + m->nblocks + 1) * sizeof(*v))))
		return -1;
	if (!(pk = malloc((m->nblocks + 1) * sizeof(*pk)))) {
		free(v);
		return -1;
	}
	for (uint64_t i = 0; i < m->nsegs; i++)
		if (m->devs[m->segs[i].fdev].run == rd && m->segs[i].size)
			v[nv++] = (struct fw_range){ m->segs[i].addr, m->segs[i].addr + m->segs[i].size, 0 };
	for (uint64_t i = 0; i < m->nblocks; i++) {
		const struct fw_block *b = &m->blocks[i];

		if (m->devs[b->fdev].run != rd || b->s_alloc == FW_NEVER)
			continue;
		nall++;
		pk[npk++] = (struct fw_pick){ b->size, i };
		if (b->seg == UINT32_MAX)
			v[nv++] = (struct fw_range){ b->addr, b->addr + b->size, 0 };
	}
	qsort(v, nv, sizeof(*v), cmp_range);
	for (size_t i = 0; i < nv; i++) {
		if (w && v[i].lo <= v[w - 1].hi) {
			if (v[i].hi > v[w - 1].hi)
				v[w - 1].hi = v[i].hi;
			continue;
		}
		v[w] = v[i];
		v[w].y = w ? v[w - 1].y + (v[w - 1].hi - v[w - 1].lo) : 0;
		w++;
	}
	nv = w;
	if (npk > HTML_MAP_MAX) {
		qsort(pk, npk, sizeof(*pk), cmp_pick);
		npk = HTML_MAP_MAX;
		qsort(pk, npk, sizeof(*pk), cmp_pick_i);
	}
	fprintf(f, ",\"address_map\":{\"shown\":%zu,\"total\":%zu,\"max\":%d,\"segments\":[", npk,
		nall, HTML_MAP_MAX);
	w = 0;
	for (uint64_t i = 0; i < m->nsegs; i++) {
		const struct fw_seg *g = &m->segs[i];
		int live = g->t_free == FW_NEVER;

		if (m->devs[g->fdev].run != rd || !g->size)
			continue;
		fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32
			",%d,\"0x%" PRIx64 "\",%d]", w++ ? ",\n" : "", g->t_alloc,
			live ? m->devs[g->fdev].end.t : g->t_free, range_y(v, nv, g->addr),
			range_y(v, nv, g->addr) + g->size, g->size, rep_pid(a, g->proc), live, g->addr,
			g->mapped);
	}
	fputs("],\"blocks\":[", f);
	for (size_t k = 0; k < npk; k++) {
		const struct fw_block *b = &m->blocks[pk[k].i];
		int live = b->t_freq == FW_NEVER;
		uint64_t end = m->devs[b->fdev].end.t;

		fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32
			",%" PRIu32 ",%d,\"0x%" PRIx64 "\",%" PRIu64 ",%" PRIu64 "]", k ? ",\n" : "",
			b->t_alloc, live ? end : b->t_freq, range_y(v, nv, b->addr),
			range_y(v, nv, b->addr) + b->size, b->size, rep_pid(a, b->proc),
			b->site == UINT32_MAX ? 0 : m->sites[b->site].id, live, b->addr, b->req,
			b->t_fdone == FW_NEVER ? end : b->t_fdone);
	}
	fputs("]}", f);
	free(pk);
	free(v);
	return 0;
}

/*
 * The framework's allocator: per device of the run (in the order of
 * report.framework.devices), the report's device it sits on, its timeline
 * (with requested), every tensor site each moment held, its OOMs, its
 * address map; every tensor site's name and frames. Its figures are the
 * report's (report.framework); this adds what the JSON lists only in part.
 */
static int framework(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;
	char b[4096];
	int n = 0;

	fputs(",\n\"framework\":{\"devices\":[", f);
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_dev *d = &m->devs[i];
		int gd = -1, ok = 0;

		if (d->proc >= 0)
			continue;
		for (int g = 0; g < r->ngdevs; g++)
			if (fw_of_gdev(r, r->gdevs[g]) == n)
				gd = g;
		if (gd >= 0)
			plot_dev_title(r, r->gdevs[gd], b, sizeof(b));
		else
			snprintf(b, sizeof(b), "device %d", d->dev);
		fprintf(f, "%s\n{\"report\":%d,\"device\":%d,\"gdev\":%d,\"title\":", n ? "," : "", n,
			d->dev, gd);
		rep_json_str(f, b, strlen(b));
		fputs(",\"timeline\":{", f);
		rows(f, d->tl, d->ntl);
		fputs(",\"requested\":[", f);
		for (uint32_t k = 0; k < d->ntl; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", d->tl_req ? d->tl_req[k] : 0);
		fputs("]}", f);
		held(f, "peak_allocated", &d->peak_alloc);
		held(f, "peak_requested", &d->peak_req);
		held(f, "peak_reserved", &d->peak_res);
		fputs(",\"ooms\":[", f);
		for (uint32_t k = 0; k < m->nooms; k++)
			if (m->devs[m->ooms[k].fdev].run == i)
				fprintf(f, "%s%" PRIu32, ok++ ? "," : "", k);
		fputc(']', f);
		if (fw_map(f, r, i))
			return -1;
		fputc('}', f);
		n++;
	}
	fputs("],\n\"sites\":[", f);
	for (uint32_t i = 0; i < m->nsites; i++) {
		const struct fw_site *s = &m->sites[i];
		struct trace_fw_frame fr[MAX_FRAMES];
		uint32_t nf = 0;
		int folded = 0;

		fw_site_name(b, sizeof(b), a, s, &folded);
		fprintf(f, "%s\n{\"site\":%" PRIu32 ",\"device\":%d,\"name\":", i ? "," : "", s->id, s->dev);
		rep_json_str(f, b, strlen(b));
		fprintf(f, ",\"folded\":%d,\"frames\":[", folded);
		/* from the main frame outward, as the CUDA-level sites' */
		if (s->stack)
			nf = trace_fw_stack_frames(stream_proc(a->s, s->proc)->t, s->stack, fr, MAX_FRAMES);
		if (nf > MAX_FRAMES)
			nf = MAX_FRAMES;
		for (uint32_t k = (uint32_t)s->main_frame; k < nf; k++) {
			fputs(k > (uint32_t)s->main_frame ? ",{\"file\":" : "{\"file\":", f);
			rep_json_str(f, fr[k].file, fr[k].file_len);
			fprintf(f, ",\"line\":%" PRIu32 ",\"function\":", fr[k].line);
			rep_json_str(f, fr[k].function, fr[k].function_len);
			fputs(",\"python\":true}", f);
		}
		fputs("]}", f);
	}
	fputs("]}", f);
	return 0;
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
	failures(f, r);
	processes(f, r);
	units(f, r);
	if (r->a->fw && framework(f, r))
		rc = -1;
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
