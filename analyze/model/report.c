/*
 * report.c - builds the content of a report from an analysis: groups
 * sites whose resolved frames are equal (the same line of code in several
 * processes, or in several stacks that differ only in hidden frames), picks
 * the leak candidates, and marks the stacks shown so that only those are
 * symbolized and saved. Also the formatting helpers of both report forms.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/report.h"
#include "views/utf8.h"

/* --- grouping ----------------------------------------------------------- */

static size_t frames_key(const struct sym_stack *st, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; st && i < st->nframes && n < len; i++) {
		const struct sym_frame *f = &st->frames[i];

		if (f->function || f->file)
			n += (size_t)snprintf(buf + n, len - n, "%s@%s:%d|", f->function ? f->function : "",
					      f->file ? f->file : "", f->line);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s+%" PRIx64 "|", f->module, f->offset);
	}
	return n;
}

struct group { struct rep_entry e; char *key; int last_proc; };

static int cmp_entry(const void *x, const void *y)
{
	const struct rep_entry *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* Groups (site, bytes, count) items into list; -1 when out of memory. */
static int group(struct report *r, const struct an_sitebytes *items, size_t n,
		 struct rep_list *list)
{
	const struct analysis *a = r->a;
	struct group *g = calloc(n ? n : 1, sizeof(*g));
	size_t ng = 0;
	char key[4096];
	int rc = -1;

	if (!g)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct an_site *s = &a->sites[items[i].site];
		const struct sym_stack *st = sym_stack(r->sy, a->s, s->proc, s->stack);
		size_t k;

		if (!st)
			goto out;
		frames_key(st, key, sizeof(key));
		for (k = 0; k < ng; k++)
			if (g[k].e.dev == s->dev && g[k].e.caching == s->caching &&
			    !strcmp(g[k].key, key))
				break;
		if (k == ng) {
			if (!(g[k].key = strdup(key)))
				goto out;
			g[k].e.dev = s->dev;
			g[k].e.proc = s->proc;
			g[k].e.stack = s->stack;
			g[k].e.caching = s->caching;
			g[k].e.st = st;
			g[k].e.nprocs = 1;
			g[k].last_proc = s->proc;
			ng++;
		} else if (g[k].last_proc != s->proc) {
			g[k].e.nprocs++;
			g[k].last_proc = s->proc;
		}
		g[k].e.bytes += items[i].bytes;
		g[k].e.count += items[i].count;
	}
	list->v = calloc(ng ? ng : 1, sizeof(*list->v));
	if (!list->v)
		goto out;
	for (size_t k = 0; k < ng; k++)
		list->v[k] = g[k].e;
	qsort(list->v, ng, sizeof(*list->v), cmp_entry);
	list->total = (int)ng;
	list->n = ng < REP_TOP ? (int)ng : REP_TOP;
	rc = 0;
out:
	for (size_t k = 0; k < ng; k++)
		free(g[k].key);
	free(g);
	return rc;
}

static int cmp_gdev(const void *x, const void *y, void *ctx)
{
	const struct analysis *a = ctx;
	const struct an_dev *p = &a->devs[*(const int *)x], *q = &a->devs[*(const int *)y];

	if (p->host != q->host)
		return p->host < q->host ? -1 : 1;
	return p->dev < q->dev ? -1 : p->dev > q->dev;
}

/* Marks the sites whose stacks a list shows. */
static void mark(const struct analysis *a, const struct an_sitebytes *items, size_t n,
		 const struct rep_list *l)
{
	for (size_t i = 0; i < n; i++) {
		struct an_site *s = &a->sites[items[i].site];

		for (int k = 0; k < l->n; k++)
			if (l->v[k].proc == s->proc && l->v[k].stack == s->stack)
				s->shown = 1;
	}
}

int report_build(struct report *r, const struct analysis *a, struct symbols *sy, char *err,
		 size_t errlen)
{
	struct an_sitebytes *items = NULL;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->a = a;
	r->sy = sy;
	r->gdevs = calloc((size_t)a->ndevs + 1, sizeof(int));
	r->dev_sites = calloc((size_t)a->ndevs + 1, sizeof(*r->dev_sites));
	items = calloc((size_t)a->nsites + 1, sizeof(*items));
	if (!r->gdevs || !r->dev_sites || !items)
		goto nomem;
	for (int i = 0; i < a->ndevs; i++)
		if (a->devs[i].proc < 0 && a->devs[i].used)
			r->gdevs[r->ngdevs++] = i;
	qsort_r(r->gdevs, (size_t)r->ngdevs, sizeof(int), cmp_gdev, (void *)a);
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];
		size_t m = d->npeak_sites < 200 ? d->npeak_sites : 200;

		if (group(r, d->peak_sites, m, &r->dev_sites[i]))
			goto nomem;
		mark(a, d->peak_sites, m, &r->dev_sites[i]);
	}
	for (int pass = 0; pass < 3; pass++) {
		struct rep_list *l = pass == 0 ? &r->leaks_exit : pass == 1 ? &r->cache_exit :
				     &r->leaks_growing;

		n = 0;
		for (uint32_t i = 0; i < a->nsites; i++) {
			const struct an_site *s = &a->sites[i];
			int take;

			if (pass == 2)
				take = leaks_is_growing(a, s);
			else
				take = s->live && s->caching == (pass == 1);
			if (take) {
				items[n].site = i;
				items[n].bytes = s->live;
				items[n].count = s->count;
				n++;
			}
		}
		if (group(r, items, n, l))
			goto nomem;
		mark(a, items, n, l);
	}
	for (uint32_t i = 0; i < a->nfailures; i++)
		for (int k = 0; k < a->failures[i].ntop; k++)
			a->sites[a->failures[i].top[k].site].shown = 1;
	for (int i = 0; i < a->nprocs; i++)
		r->caching_seen |= a->procs[i].caching_seen;
	free(items);
	return 0;
nomem:
	free(items);
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
	free(r->leaks_exit.v);
	free(r->leaks_growing.v);
	free(r->cache_exit.v);
	shm_result_free(&r->shm);
	memset(r, 0, sizeof(*r));
}

/* --- helpers ------------------------------------------------------------ */

const char *rep_size(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)b;
	int u = -1;

	if (b < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", b);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

const char *rep_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

const char *rep_time(char *buf, size_t len, uint64_t ns)
{
	char d[32];

	snprintf(buf, len, "+%s", rep_duration(d, sizeof(d), ns));
	return buf;
}

const char *rep_error_name(unsigned code, int runtime)
{
	static const struct { unsigned code; const char *drv, *rt; } names[] = {
		{ 1, "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue" },
		{ 2, "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation" },
		{ 3, "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError" },
		{ 4, "CUDA_ERROR_DEINITIALIZED", "cudaErrorCudartUnloading" },
		{ 100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice" },
		{ 101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice" },
		{ 201, "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized" },
		{ 400, "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle" },
		{ 801, "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == code)
			return runtime ? names[i].rt : names[i].drv;
	return NULL;
}

void rep_json_str(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!str) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t u;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c >= 0x20 && c < 0x7f) {
			putc(c, f);
		} else if (c >= 0x80 && (u = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, u, f);
			i += u;
			continue;
		} else {
			fprintf(f, "\\u%04x", c);
		}
		i++;
	}
	putc('"', f);
}

void rep_text_str(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; str && i < n;) {
		unsigned char c = s[i];
		size_t u;

		if (c >= 0x20 && c < 0x7f) {
			putc(c, f);
		} else if (c >= 0x80 && (u = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, u, f);
			i += u;
			continue;
		} else {
			fprintf(f, "\\x%02x", c);
		}
		i++;
	}
}

const char *rep_dev_name(const struct report *r, const struct an_dev *d, char *buf, size_t len)
{
	if (r->a->nhosts > 1) {
		const char *h;
		size_t hl;

		an_hostname(r->a, d->host_proc, &h, &hl);
		snprintf(buf, len, "%.*s:%d", (int)(hl < 200 ? hl : 200), h, d->dev);
	} else {
		snprintf(buf, len, "device %d", d->dev);
	}
	return buf;
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

const struct sym_frame *rep_main_frame(const struct sym_stack *st)
{
	if (!st || !st->nframes)
		return NULL;
	for (int i = 0; i < st->nframes; i++)
		if (st->frames[i].user)
			return &st->frames[i];
	return &st->frames[0];
}
