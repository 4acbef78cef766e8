/*
 * report.c - builds the run model from an analysis: its sites (sites.c),
 * what each device held at its peak by site, and the leak candidates, each
 * site listed once with every reason it is one. Also the formatting
 * helpers the views share.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/cuda-errors.h"
#include "model/report.h"

/* --- lists of sites ------------------------------------------------------- */

struct held { uint32_t site; int proc; uint64_t bytes, count; };

static int cmp_held(const void *x, const void *y)
{
	const struct held *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct rep_entry *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->site->id < b->site->id ? -1 : a->site->id > b->site->id;
}

static void entry_of(struct rep_entry *e, const struct site *s)
{
	memset(e, 0, sizeof(*e));
	e->site = s;
	e->dev = s->dev;
	e->proc = s->proc;
	e->stack = s->stack;
	e->caching = s->caching;
	e->st = s->st;
}

static void list_sort(struct rep_list *l, int n)
{
	qsort(l->v, (size_t)n, sizeof(*l->v), cmp_entry);
	l->total = n;
	l->n = n < REP_TOP ? n : REP_TOP;
}

/* What a device held at a moment (sb, by analysis site), by the report's
   site, largest first. */
static int sites_list(const struct report *r, const struct an_sitebytes *sb, uint32_t nsb,
		      struct rep_list *l)
{
	struct held *h = calloc(nsb + 1, sizeof(*h));
	int n = 0;

	l->v = calloc(nsb + 1, sizeof(*l->v));
	if (!h || !l->v) {
		free(h);
		free(l->v);
		l->v = NULL;
		return -1;
	}
	for (uint32_t i = 0; i < nsb; i++) {
		h[i].site = r->sites.of[sb[i].site];
		h[i].proc = r->a->sites[sb[i].site].proc;
		h[i].bytes = sb[i].bytes;
		h[i].count = sb[i].count;
	}
	qsort(h, nsb, sizeof(*h), cmp_held);
	for (uint32_t i = 0; i < nsb; i++) {
		struct rep_entry *e = &l->v[n - 1];

		if (!i || h[i].site != h[i - 1].site) {
			e = &l->v[n++];
			entry_of(e, &r->sites.v[h[i].site]);
			e->proc = h[i].proc;
		}
		if (!i || h[i].site != h[i - 1].site || h[i].proc != h[i - 1].proc)
			e->nprocs++;
		e->bytes += h[i].bytes;
		e->count += h[i].count;
	}
	free(h);
	list_sort(l, n);
	return 0;
}

int report_sites_list(const struct report *r, const struct an_sitebytes *sb, uint32_t n,
		      struct rep_list *l)
{
	return sites_list(r, sb, n, l);
}

/* What a device held at its peak, by site, largest first. */
static int at_peak(struct report *r, const struct an_dev *d, struct rep_list *l)
{
	return sites_list(r, d->peak_sites, d->npeak_sites, l);
}

/* Leak candidates (cache 0) or caching allocators' segments at exit (1). */
static int at_exit(struct report *r, int cache, struct rep_list *l)
{
	int n = 0;

	l->v = calloc(r->sites.n + 1, sizeof(*l->v));
	if (!l->v)
		return -1;
	for (uint32_t i = 0; i < r->sites.n; i++) {
		const struct site *s = &r->sites.v[i];
		struct rep_entry *e = &l->v[n];

		if (s->caching != cache || !(s->exit_bytes || (!cache && s->growing)))
			continue;
		entry_of(e, s);
		e->bytes = s->exit_bytes;
		e->count = s->exit_count;
		e->nprocs = s->nprocs;
		e->at_exit = s->exit_bytes != 0;
		e->growing = !cache && s->growing;
		n++;
	}
	list_sort(l, n);
	return 0;
}

static int cmp_gdev(const void *x, const void *y, void *ctx)
{
	const struct analysis *a = ctx;
	const struct an_dev *p = &a->devs[*(const int *)x], *q = &a->devs[*(const int *)y];

	if (p->host != q->host)
		return p->host < q->host ? -1 : 1;
	return p->dev < q->dev ? -1 : p->dev > q->dev;
}

/* Processes whose framework capture said it was off, and why. */
static void capture_off(struct report *r)
{
	for (int i = 0; i < r->a->nprocs; i++) {
		const struct trace *t = stream_proc(r->a->s, i)->t;
		struct trace_bytes tx, off;
		size_t at;

		for (uint32_t k = 0; trace_fw_info(t, k, &tx, NULL) == 0; k++) {
			at = 0;
			off = trace_note_value(tx, "torch=", &at);
			if (off.p && off.len == 3 && !memcmp(off.p, "off", 3)) {
				at = 0;
				r->fw_off[i] = trace_note_value(tx, "reason=", &at);
				if (!r->fw_off[i].p)
					r->fw_off[i] = (struct trace_bytes){ "off", 3 };
			}
		}
	}
}

int report_devices(struct report *r, const struct analysis *a, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->a = a;
	r->top_peak_proc = -1;
	r->gdevs = calloc((size_t)a->ndevs + 1, sizeof(int));
	if (!r->gdevs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < a->ndevs; i++)
		if (a->devs[i].proc < 0 && a->devs[i].used)
			r->gdevs[r->ngdevs++] = i;
	qsort_r(r->gdevs, (size_t)r->ngdevs, sizeof(int), cmp_gdev, (void *)a);
	return 0;
}

/* --- the ranks table ------------------------------------------------------ */

static int cmp_bytes(struct trace_bytes x, struct trace_bytes y)
{
	size_t n = x.len < y.len ? x.len : y.len;
	int c = n ? memcmp(x.p, y.p, n) : 0;

	return c ? c : (x.len > y.len) - (x.len < y.len);
}

static int cmp_rank(const void *x, const void *y)
{
	const struct rep_rank *a = x, *b = y;
	int c = cmp_bytes(a->host, b->host);

	if (c)
		return c;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->proc - b->proc;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* By peak, highest first, then by process: for the full sections. */
static int cmp_peak(const void *x, const void *y, void *ctx)
{
	const struct analysis *a = ctx;
	int p = *(const int *)x, q = *(const int *)y;

	if (a->procs[p].peak_all != a->procs[q].peak_all)
		return a->procs[p].peak_all > a->procs[q].peak_all ? -1 : 1;
	return p - q;
}

/*
 * The rows of the ranks table and their flags: the highest peak (the first
 * process with it), every process with a failed call or killed, and full
 * sections for those and the REP_RANKS_FULL highest peaks.
 */
static int ranks_build(struct report *r)
{
	const struct analysis *a = r->a;
	int n = a->nprocs;
	uint64_t *peaks;
	int *order;

	r->top_peak_proc = -1;
	if (n <= REP_RANKS_INLINE)
		return 0;
	r->ranks = calloc((size_t)n, sizeof(*r->ranks));
	r->rank_row = calloc((size_t)n, sizeof(*r->rank_row));
	peaks = calloc((size_t)n, sizeof(*peaks));
	order = calloc((size_t)n, sizeof(*order));
	if (!r->ranks || !r->rank_row || !peaks || !order) {
		free(peaks);
		free(order);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct an_proc *ap = &a->procs[i];
		const struct sproc *p = stream_proc(a->s, i);
		struct rep_rank *k = &r->ranks[i];
		uint64_t best = 0;

		k->proc = i;
		k->rank = p->process ? p->process->rank : -1;
		k->dev = -1;
		if (p->process) {
			struct trace_bytes c, e;

			trace_process_strings(p->process, &k->host, &c, &e);
		}
		for (int d = 0; d < AN_MAX_DEV; d++)
			if (ap->pdev[d] >= 0 && (k->dev < 0 || a->devs[ap->pdev[d]].peak.reserved > best)) {
				k->dev = d;
				best = a->devs[ap->pdev[d]].peak.reserved;
			}
		k->peak = ap->peak_all;
		k->failed = ap->failed;
		if (ap->failed) {
			k->flags |= REP_RANK_FAILED | REP_RANK_FULL;
			r->nflagged_failed++;
		}
		if (ap->end == AN_END_KILLED) {
			k->flags |= REP_RANK_KILLED | REP_RANK_FULL;
			r->nflagged_killed++;
		}
		peaks[i] = ap->peak_all;
		order[i] = i;
	}
	qsort_r(order, (size_t)n, sizeof(*order), cmp_peak, (void *)a);
	/* an outlier only when no other process reached it */
	r->top_peak = a->procs[order[0]].peak_all;
	while (r->top_peak_shared < n && a->procs[order[r->top_peak_shared]].peak_all == r->top_peak)
		r->top_peak_shared++;
	if (r->top_peak && r->top_peak_shared == 1) {
		r->top_peak_proc = order[0];
		r->ranks[order[0]].flags |= REP_RANK_TOP_PEAK;
	}
	for (int i = 0; i < n && i < REP_RANKS_FULL; i++)
		if (a->procs[order[i]].peak_all)
			r->ranks[order[i]].flags |= REP_RANK_FULL;
	qsort(peaks, (size_t)n, sizeof(*peaks), cmp_u64);
	r->median_peak = n % 2 ? peaks[n / 2] : (peaks[n / 2 - 1] + peaks[n / 2]) / 2;
	qsort(r->ranks, (size_t)n, sizeof(*r->ranks), cmp_rank);
	for (int i = 0; i < n; i++)
		r->rank_row[r->ranks[i].proc] = i;
	r->nranks = n;
	free(peaks);
	free(order);
	return 0;
}

int report_build(struct report *r, const struct analysis *a, struct symbols *sy, char *err,
		 size_t errlen)
{
	if (report_devices(r, a, err, errlen))
		return -1;
	r->sy = sy;
	if (sites_build(&r->sites, a, sy, err, errlen)) {
		report_free(r);
		return -1;
	}
	r->dev_sites = calloc((size_t)a->ndevs + 1, sizeof(*r->dev_sites));
	r->fw_off = calloc((size_t)a->nprocs + 1, sizeof(*r->fw_off));
	if (!r->dev_sites || !r->fw_off)
		goto nomem;
	capture_off(r);
	for (int i = 0; i < a->ndevs; i++)
		if (at_peak(r, &a->devs[i], &r->dev_sites[i]))
			goto nomem;
	if (at_exit(r, 0, &r->leaks) || at_exit(r, 1, &r->cache_exit))
		goto nomem;
	for (int i = 0; i < a->nprocs; i++)
		r->caching_seen |= a->procs[i].caching_seen;
	if (ranks_build(r))
		goto nomem;
	return 0;
nomem:
	report_free(r);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void report_free(struct report *r)
{
	if (r->dev_sites)
		for (int i = 0; i < r->a->ndevs; i++)
			free(r->dev_sites[i].v);
	free(r->dev_sites);
	free(r->gdevs);
	free(r->fw_off);
	free(r->leaks.v);
	free(r->cache_exit.v);
	free(r->ranks);
	free(r->rank_row);
	sites_free(&r->sites);
	shm_result_free(&r->shm);
	memset(r, 0, sizeof(*r));
}

/* --- helpers ------------------------------------------------------------ */

const char *rep_end_name(enum an_end end)
{
	switch (end) {
	case AN_END_EXIT: return "exit";
	case AN_END_UNDERSCORE_EXIT: return "_exit";
	case AN_END_KILLED: return "killed";
	case AN_END_EXEC: return "exec";
	case AN_END_UNKNOWN: break;
	}
	return NULL;
}

/* The name of a failure's code in the table of the API that returned it. */
const char *rep_error_name(unsigned code, int runtime)
{
	return cuda_error_name(code, runtime);
}

uint32_t rep_pid(const struct analysis *a, int proc)
{
	const struct sproc *p = stream_proc(a->s, proc);

	return p->process ? p->process->pid : trace_header(p->t)->pid;
}

/* Argument *argi of the process's command line (advances *argi); len 0 and
   p NULL past the last. */
struct trace_bytes rep_command_arg(const struct analysis *a, int proc, int *argi)
{
	const struct sproc *p = stream_proc(a->s, proc);
	struct trace_bytes h, c, e, out = { NULL, 0 };
	size_t start = 0;
	int k = 0;

	if (!p->process)
		return out;
	trace_process_strings(p->process, &h, &c, &e);
	while (c.len && c.p[c.len - 1] == 0)
		c.len--;
	for (size_t i = 0; i <= c.len; i++) {
		if (i == c.len || c.p[i] == 0) {
			if (k == *argi && (i > start || c.len)) {
				out.p = c.p + start;
				out.len = i - start;
				(*argi)++;
				return out;
			}
			k++;
			start = i + 1;
		}
	}
	return out;
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

const char *rep_stack_name(char *buf, size_t len, const struct sym_stack *st, int nframes,
			   int *folded)
{
	const struct sym_frame *m = rep_main_frame(st);
	size_t o = 0;
	int n = 0;

	if (folded)
		*folded = m ? (int)(m - st->frames) : 0;
	if (!len)
		return buf;
	buf[0] = 0;
	if (!m) {
		snprintf(buf, len, "(no stack recorded)");
		return buf;
	}
	for (int i = (int)(m - st->frames); i < st->nframes && n < nframes && o + 1 < len;
	     i++, n++) {
		const struct sym_frame *fr = &st->frames[i];
		int w;

		if (fr->function && fr->file)
			w = snprintf(buf + o, len - o, "%s%s (%s:%d)", n ? " < " : "", fr->function,
				     base(fr->file), fr->line);
		else if (fr->function)
			w = snprintf(buf + o, len - o, "%s%s (%s)", n ? " < " : "", fr->function,
				     base(fr->module));
		else
			w = snprintf(buf + o, len - o, "%s%s+0x%" PRIx64, n ? " < " : "",
				     fr->module[0] ? base(fr->module) : "?", fr->offset);
		if (w < 0)
			break;
		o += (size_t)w < len - o ? (size_t)w : len - o - 1;
		if (fr->inlined && o + 1 < len) {
			w = snprintf(buf + o, len - o, " [inlined]");
			o += w > 0 && (size_t)w < len - o ? (size_t)w : len - o - 1;
		}
	}
	return buf;
}

const char *rep_site_name(char *buf, size_t len, const struct site *s, int *folded)
{
	return rep_stack_name(buf, len, s->st, s->name_frames, folded);
}

const struct sym_frame *rep_main_frame(const struct sym_stack *st)
{
	if (!st || !st->nframes)
		return NULL;
	for (int i = 0; i < st->nframes; i++)
		if (st->frames[i].user)
			return &st->frames[i];
	return &st->frames[0];
}

int rep_proc_warning(const struct analysis *a, int proc, unsigned i, char *buf, size_t len)
{
	const struct sproc *p = stream_proc(a->s, proc);
	const struct an_proc *ap = &a->procs[proc];
	unsigned n = 0;

	while (!trace_warning(p->t, n, buf, len)) {
		if (n == i)
			return 0;
		n++;
	}
	if (i != n || !ap->unknown_frees)
		return -1;
	snprintf(buf, len, "%" PRIu64 " free%s of an address no traced allocation holds "
		 "(allocated before tracing began, or records lost)", ap->unknown_frees,
		 ap->unknown_frees == 1 ? "" : "s");
	return 0;
}
