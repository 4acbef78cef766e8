/*
 * account.c - the analysis pass: one walk over the run's records in time
 * order that pairs every free with the allocation it ends and keeps, per
 * device, what the process holds from the driver (reserved) and what its
 * buffers use (allocated). The metric modules (peak.c, leaks.c, frag.c,
 * failures.c) are called at each change.
 *
 * How it works: live allocations sit in the live set (live.c), keyed by
 * (process, name space, address), so memory grows with what is live at
 * once, never with the number of events. Name spaces keep apart what may
 * share a number: pointers (device, managed, pinned host, stream-ordered:
 * cudaFree frees any of them), registered host ranges, arrays, imported
 * pointers, VMM physical handles, reservations and mappings. A VMM handle
 * counts while it has a reference (create + retains - releases) or a
 * mapping. Pools are a small table: a pool counts its latest POOL record's
 * reserved, or its live stream-ordered bytes until it has one.
 *
 * Every change is applied to the process's device (pdev) and to the
 * device of the run it is on (gdev: same host, same index), so several
 * processes sum on wall-clock time. After pass 1 the replay walks the
 * stream again up to each peak and has peak.c look at what was live there;
 * during it the metric calls are off (replay). The pass also keeps the
 * timeline of every device, the rows every view draws. On a long walk the
 * merge runs on a second thread that hands the records over in batches
 * (walk_threaded), in the same order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis.h"
#include "model/framework.h"
#include "model/nvtxmem.h"
#include "model/categories.h"
#include "model/ranges.h"
#include "model/live.h"
#include "model/metrics.h"

struct priv {
	struct live_set live;
	struct htab site_tab;       /* sites by site_key() */
	size_t cap_sites;
	an_caching_fn caching;
	void *caching_ctx;
	int replay;
	int stop_by_t;              /* a replay to a time: stop before the first */
	uint64_t stop_t;            /*   record later than stop_t */
	uint64_t *sample_reserved;  /* per dev: reserved when its sample came */
	int *host_of;               /* per proc: host index */
	uint64_t *remaining;        /* per proc: records not walked yet */
	uint64_t records_left;      /* of all procs, not walked yet */
	int oom;                    /* a timeline or sample could not be kept */
	uint64_t feed_seq, feed_rn; /* analysis_feed(): events, records so far */
	uint64_t tl_w[2];           /* timeline bucket width: of a run's
	                               device, of a process's own */
	uint64_t tl_duration;       /* ... for this duration */
	int tl_nprocs;              /* ... and number of processes */
};

#define PRIV(a) ((struct priv *)(a)->priv)

void an_hostname(const struct analysis *a, int proc, const char **s, size_t *len)
{
	const struct mt_process *pr = stream_proc(a->s, proc)->process;
	struct trace_bytes h, c, e;

	*s = "";
	*len = 0;
	if (!pr)
		return;
	trace_process_strings(pr, &h, &c, &e);
	*s = h.p;
	*len = h.len;
}

/* --- devices ------------------------------------------------------------- */

static int new_dev(struct analysis *a, int proc, int dev)
{
	struct an_dev *d;
	struct priv *p = PRIV(a);
	void *n = realloc(a->devs, (size_t)(a->ndevs + 1) * sizeof(*a->devs));

	if (!n)
		return -1;
	a->devs = n;
	n = realloc(p->sample_reserved, (size_t)(a->ndevs + 1) * sizeof(uint64_t));
	if (!n)
		return -1;
	p->sample_reserved = n;
	p->sample_reserved[a->ndevs] = 0;
	d = &a->devs[a->ndevs];
	memset(d, 0, sizeof(*d));
	d->proc = proc;
	d->dev = dev;
	d->gdev = -1;
	return a->ndevs++;
}

/* The pdev of (proc, dev), created with its gdev on first use; -1 on error
   or for dev < 0. */
static int pdev_of(struct analysis *a, int proc, int dev)
{
	struct an_proc *pr = &a->procs[proc];
	struct priv *p = PRIV(a);
	int pd, gd = -1;

	if (dev < 0 || dev >= AN_MAX_DEV)
		return -1;
	if (pr->pdev[dev] >= 0)
		return pr->pdev[dev];
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (d->proc == -1 && d->dev == dev && p->host_of[proc] == d->host) {
			gd = i;
			break;
		}
	}
	if (gd < 0) {
		gd = new_dev(a, -1, dev);
		if (gd < 0)
			return -1;
		a->devs[gd].host = p->host_of[proc];
		a->devs[gd].host_proc = proc;
	}
	pd = new_dev(a, proc, dev);
	if (pd < 0)
		return -1;
	a->devs[pd].gdev = gd;
	a->devs[pd].host = p->host_of[proc];
	a->devs[pd].host_proc = proc;
	pr->pdev[dev] = pd;
	return pd;
}

/* Adds delta to one field of both a pdev and its gdev. */
#define MEM_ADD(a, pd, field, delta) do { \
	(a)->devs[pd].m.field += (uint64_t)(delta); \
	(a)->devs[(a)->devs[pd].gdev].m.field += (uint64_t)(delta); \
} while (0)

static void tl_keep(struct analysis *a, struct an_dev *d, const struct an_tl_row *row)
{
	if (d->ntl == d->cap_tl) {
		uint32_t c = d->cap_tl ? d->cap_tl * 2 : 256;
		void *n = realloc(d->tl, c * sizeof(*d->tl));

		if (!n) {
			PRIV(a)->oom = 1;
			return;
		}
		d->tl = n;
		d->cap_tl = c;
	}
	d->tl[d->ntl++] = *row;
}

/* x / w == b, without the division (b * w does not overflow: b is some
   time / w) */
static int in_bucket(uint64_t x, uint64_t b, uint64_t w)
{
	return x >= b * w && x - b * w < w;
}

/*
 * The timeline every view draws, at most three rows per 1/4000 of the
 * run and device: the first change in a time bucket, its highest point (so
 * the peak is always a row), and the state at the end of the bucket
 * before, so that steps end where they really end. In a run of more than
 * 16 processes a process's own device has 64000/N buckets (at least 250),
 * so that the rows do not grow with the number of traces.
 */
static void timeline_add(struct analysis *a, struct an_dev *d, uint64_t t)
{
	/* a process's own device in a run of many gets fewer buckets, so
	   that the rows of all of them stay about 64 K in all */
	struct priv *p = PRIV(a);
	int own = d->proc >= 0;
	uint64_t w, b;
	struct an_tl_row row = { t, d->reserved, d->allocated };

	if (p->tl_duration != a->duration || p->tl_nprocs != a->nprocs || !p->tl_w[own]) {
		for (int k = 0; k < 2; k++) {
			uint64_t nb = k && a->nprocs > 16 ? 64000 / (uint64_t)a->nprocs : 4000;

			p->tl_w[k] = a->duration / (nb < 250 ? 250 : nb) + 1;
		}
		p->tl_duration = a->duration;
		p->tl_nprocs = a->nprocs;
	}
	w = p->tl_w[own];
	/* the bucket of the change before, without a division, mostly */
	b = d->tl_started && in_bucket(t, d->tl_bucket, w) ? d->tl_bucket : t / w;

	if (b != d->tl_bucket || !d->tl_started) {
		if (d->tl_pending)
			tl_keep(a, d, &d->tl_last);
		d->tl_pending = 0;
		d->tl_max = 0;
		d->tl_bucket = b;
		d->tl_started = 1;
	}
	if (d->reserved > d->tl_max || !d->ntl) {
		if (d->reserved > d->tl_max)
			d->tl_max = d->reserved;
		/* a second new maximum in the bucket replaces the first: the
		   bucket keeps its first change and its highest point */
		if (d->ntl >= 2 && in_bucket(d->tl[d->ntl - 1].t, b, w) &&
		    in_bucket(d->tl[d->ntl - 2].t, b, w))
			d->tl[d->ntl - 1] = row;
		else
			tl_keep(a, d, &row);
		d->tl_pending = 0;
		return;
	}
	d->tl_pending = 1;
	d->tl_last = row;
}

/* The last row: the state at the end of the run, or for a process's own
   device, at the end of that process (what it left at exit). */
static void timeline_end(struct analysis *a, struct an_dev *d)
{
	uint64_t end = d->proc >= 0 ? stream_proc(a->s, d->proc)->last_t : a->duration;
	struct an_tl_row row = { end, d->reserved, d->allocated };

	if (d->tl_pending)
		tl_keep(a, d, &d->tl_last);
	d->tl_pending = 0;
	if (d->ntl && d->tl[d->ntl - 1].t < end)
		tl_keep(a, d, &row);
}

static void sample_keep(struct analysis *a, struct an_dev *d, uint64_t t, int proc)
{
	if (d->nsamples == d->cap_samples) {
		uint32_t c = d->cap_samples ? d->cap_samples * 2 : 64;
		void *n = realloc(d->samples, c * sizeof(*d->samples));

		if (!n) {
			PRIV(a)->oom = 1;
			return;
		}
		d->samples = n;
		d->cap_samples = c;
	}
	d->samples[d->nsamples++] = (struct an_sample){ t, d->sample_used, d->sample_total, proc };
}

/* Recomputes reserved/allocated of a dev after a change at time t. */
static void settle(struct analysis *a, int di, uint64_t t, uint64_t seq, int proc, uint16_t api,
		   uint32_t stack, uint64_t bytes)
{
	struct an_dev *d = &a->devs[di];
	uint64_t r = d->m.plain + d->m.cache_seg + d->m.vmm_phys + d->m.pool_part;
	uint64_t al = d->m.plain + d->m.async_live + d->m.vmm_mapped;
	int64_t delta = (int64_t)(r - d->reserved);

	if (!PRIV(a)->replay)
		frag_advance(d, t);
	d->used = 1;
	d->reserved = r;
	d->allocated = al < r ? al : r;
	if (PRIV(a)->replay)
		return;
	peak_check(a, d, t, seq, proc, api, stack, bytes, PRIV(a)->sample_reserved[di]);
	if (d->proc >= 0) {
		struct an_proc *pr = &a->procs[d->proc];

		pr->reserved_all += (uint64_t)delta;
		ranges_mem(a, d->proc, t, pr->reserved_all);
		if (pr->reserved_all > pr->peak_all) {
			pr->peak_all = pr->reserved_all;
			pr->peak_all_time = t;
		}
	} else {
		a->greserved_all += (uint64_t)delta;
		if (a->greserved_all > a->gpeak_all) {
			a->gpeak_all = a->greserved_all;
			a->gpeak_all_time = t;
		}
	}
	timeline_add(a, d, t);
}

static void settle_pdev(struct analysis *a, int pd, uint64_t t, uint64_t seq, int proc,
			uint16_t api, uint32_t stack, uint64_t bytes)
{
	if (pd < 0)
		return;
	settle(a, pd, t, seq, proc, api, stack, bytes);
	settle(a, a->devs[pd].gdev, t, seq, proc, api, stack, bytes);
}

/* --- sites --------------------------------------------------------------- */

static uint64_t site_key(int proc, uint32_t stack, int dev, int host)
{
	return (uint64_t)stack | (uint64_t)(uint8_t)(dev + 1) << 32 | (uint64_t)host << 40 |
	       (uint64_t)(uint16_t)proc << 48;
}

/* The site's index; UINT32_MAX when out of memory. */
static uint32_t site_get(struct analysis *a, int proc, uint32_t stack, int dev, int host)
{
	struct priv *p = PRIV(a);
	uint64_t key = site_key(proc, stack, dev, host), h = hash_mix(key);
	struct htab_probe pr;
	struct htab_ref *r;
	struct an_site *s;

	for (r = htab_find(&p->site_tab, h, &pr); r; r = htab_more(&p->site_tab, &pr)) {
		s = &a->sites[r->i];
		if (site_key(s->proc, s->stack, s->dev, s->host) == key)
			return r->i;
	}
	if (a->nsites == p->cap_sites) {
		size_t c = p->cap_sites ? p->cap_sites * 2 : 256;
		void *n = realloc(a->sites, c * sizeof(*a->sites));

		if (!n)
			return UINT32_MAX;
		a->sites = n;
		p->cap_sites = c;
	}
	s = &a->sites[a->nsites];
	memset(s, 0, sizeof(*s));
	s->proc = proc;
	s->stack = stack;
	s->dev = (int16_t)dev;
	s->host = (uint8_t)host;
	s->caching = !host && stack && p->caching && p->caching(p->caching_ctx, proc, stack);
	if (s->caching)
		a->procs[proc].caching_seen = 1;
	if (!(r = htab_add(&p->site_tab, h)))
		return UINT32_MAX;
	r->i = a->nsites;
	return a->nsites++;
}

static void site_add(struct analysis *a, uint32_t si, uint64_t bytes, uint64_t t)
{
	struct an_site *s;

	if (si == UINT32_MAX || PRIV(a)->replay)
		return;
	s = &a->sites[si];
	s->live += bytes;
	s->count++;
	s->total_bytes += bytes;
	s->total_count++;
	if (s->live > s->max)
		leaks_on_grow(s, t);
}

static void site_sub(struct analysis *a, uint32_t si, uint64_t bytes)
{
	struct an_site *s;

	if (si == UINT32_MAX || PRIV(a)->replay)
		return;
	s = &a->sites[si];
	s->live -= bytes < s->live ? bytes : s->live;
	if (s->count)
		s->count--;
}

/* --- pools --------------------------------------------------------------- */

/* Recomputes what a pool adds to its device's pool_part. */
static void pool_settle(struct analysis *a, struct an_pool *q)
{
	uint64_t part;

	if (q->destroyed)
		part = q->async_live;
	else
		part = q->has_record ? q->reserved : q->async_live;
	if (q->pdev >= 0 && part != q->part)
		MEM_ADD(a, q->pdev, pool_part, part - q->part);
	q->part = part;
}

/* --- events -------------------------------------------------------------- */

static int ns_of(unsigned kind)
{
	switch (kind) {
	case MT_KIND_HOST_REGISTER: return NS_HOSTREG;
	case MT_KIND_ARRAY: return NS_ARRAY;
	case MT_KIND_FOREIGN: return NS_FOREIGN;
	case MT_KIND_VMM_PHYS: case MT_KIND_VMM_RETAIN: return NS_PHYS;
	case MT_KIND_VMM_RESERVE: return NS_RESERVE;
	case MT_KIND_VMM_MAP: return NS_MAP;
	default: return NS_PTR;
	}
}

struct ctx {
	struct analysis *a;
	const struct srec *r;
	uint64_t seq;               /* events so far: the event's number */
	uint64_t rn;                /* records so far: where a peak is */
	struct an_sink *sink;
};

/* Ends a live allocation (not VMM handles: see phys_maybe_release). */
static void end_live(struct ctx *c, struct an_live *e, uint64_t t)
{
	struct analysis *a = c->a;
	struct an_proc *pr = &a->procs[e->proc];
	const struct mt_event *ev = c->r->rec.p;
	int pd = e->pdev;

	switch (e->kind) {
	case MT_KIND_DEVICE: case MT_KIND_MANAGED: case MT_KIND_ARRAY:
		if (pd >= 0) {
			if (e->caching)
				MEM_ADD(a, pd, cache_seg, -e->bytes);
			else
				MEM_ADD(a, pd, plain, -e->bytes);
		}
		site_sub(a, e->site, e->bytes);
		break;
	case MT_KIND_HOST:
		pr->host_live -= e->bytes;
		site_sub(a, e->site, e->bytes);
		break;
	case MT_KIND_HOST_REGISTER:
		pr->hostreg_live -= e->bytes;
		break;
	case MT_KIND_FOREIGN:
		pr->foreign_live -= e->bytes;
		break;
	case MT_KIND_ASYNC: {
		struct an_pool *q = pool_get(&PRIV(a)->live, e->proc, e->x1, pd);

		if (pd >= 0)
			MEM_ADD(a, pd, async_live, -e->bytes);
		if (q) {
			q->async_live -= e->bytes < q->async_live ? e->bytes : q->async_live;
			pool_settle(a, q);
		}
		site_sub(a, e->site, e->bytes);
		break;
	}
	case MT_KIND_VMM_PHYS:
		if (pd >= 0)
			MEM_ADD(a, pd, vmm_phys, -e->bytes);
		site_sub(a, e->site, e->bytes);
		break;
	default:
		break;
	}
	settle_pdev(a, pd, t, c->rn, c->r->proc, ev->api, ev->stack_id, e->bytes);
	live_del(&PRIV(a)->live, e);
}

static void phys_maybe_release(struct ctx *c, struct an_live *h, uint64_t t)
{
	if (h->refs == 0 && h->maps == 0)
		end_live(c, h, t);
}

static int sink_rec(struct ctx *c, uint64_t alloc_seq, uint64_t bytes, int dev)
{
	if (!c->sink || PRIV(c->a)->replay)
		return 0;
	return c->sink->record(c->sink->ctx, c->a, c->r, c->seq, alloc_seq, bytes, dev);
}

static int do_free(struct ctx *c, const struct mt_event *e, unsigned kind, uint64_t t)
{
	struct analysis *a = c->a;
	struct priv *p = PRIV(a);
	int proc = c->r->proc;
	struct an_live *l;
	uint64_t aseq = 0, bytes = 0;
	int dev = -1;

	if (kind == MT_KIND_POOL) {
		for (size_t i = 0; i < p->live.npools; i++) {
			struct an_pool *q = &p->live.pools[i];

			if (q->handle == e->addr && q->proc == proc && !q->destroyed) {
				q->destroyed = 1;
				pool_settle(a, q);
				settle_pdev(a, q->pdev, t, c->rn, proc, e->api, e->stack_id, 0);
			}
		}
		return sink_rec(c, 0, 0, -1);
	}
	if (kind == MT_KIND_VMM_MAP) {
		/* cuMemUnmap(addr, size) may cover several mappings */
		uint64_t at = e->addr, end = e->addr + (e->bytes ? e->bytes : 1);
		int found = 0;

		while (at < end && (l = live_find(&p->live, proc, NS_MAP, at))) {
			struct an_live *h;
			uint64_t b = l->bytes, handle = l->x1;
			int pd = l->pdev;

			if (!found) {
				aseq = l->seq;
				dev = pd >= 0 ? a->devs[pd].dev : -1;
			}
			found = 1;
			bytes += b;
			if (pd >= 0)
				MEM_ADD(a, pd, vmm_mapped, -b);
			live_del(&p->live, l);  /* h after it: a delete moves records */
			h = live_find(&p->live, proc, NS_PHYS, handle);
			settle_pdev(a, pd, t, c->rn, proc, e->api, e->stack_id, b);
			if (h) {
				if (h->maps)
					h->maps--;
				phys_maybe_release(c, h, t);
			}
			at += b ? b : 1;
		}
		if (!found)
			a->procs[proc].unknown_frees++;
		return sink_rec(c, aseq, bytes, dev);
	}
	l = live_find(&p->live, proc, ns_of(kind), e->addr);
	if (!l && ns_of(kind) != NS_PTR)
		l = live_find(&p->live, proc, NS_PTR, e->addr);
	if (!l) {
		a->procs[proc].unknown_frees++;
		return sink_rec(c, 0, 0, -1);
	}
	aseq = l->seq;
	bytes = l->bytes;
	dev = l->pdev >= 0 ? a->devs[l->pdev].dev : -1;
	if (l->ns == NS_PHYS) {
		if (l->refs)
			l->refs--;
		phys_maybe_release(c, l, t);
	} else {
		if (!p->replay)
			frag_oom_free(a, proc, c->r->rec.tid, bytes);
		end_live(c, l, t);
	}
	return sink_rec(c, aseq, bytes, dev);
}

static int do_alloc(struct ctx *c, const struct mt_event *e, unsigned kind, uint64_t t)
{
	struct analysis *a = c->a;
	struct priv *p = PRIV(a);
	int proc = c->r->proc;
	struct an_proc *pr = &a->procs[proc];
	const struct mt_event_ex *x = c->r->rec.type == MT_REC_ALLOC_EX ? c->r->rec.p : NULL;
	int dev = e->h.b, pd, replaced;
	struct an_live *l;

	if (kind == MT_KIND_VMM_RETAIN) {
		l = live_find(&p->live, proc, NS_PHYS, e->addr);
		if (l)
			l->refs++;
		return sink_rec(c, 0, 0, dev);
	}
	if (kind == MT_KIND_POOL) {
		pool_get(&PRIV(a)->live, proc, e->addr, pdev_of(a, proc, dev));
		return sink_rec(c, 0, 0, dev);
	}
	if (kind == MT_KIND_VMM_MAP && x) {
		struct an_live *h = live_find(&p->live, proc, NS_PHYS, x->x1);

		if (h && h->pdev >= 0)
			dev = a->devs[h->pdev].dev;
	}
	pd = pdev_of(a, proc, dev);
	if (dev >= 0 && pd < 0)
		return -1;
	l = live_put(&p->live, proc, ns_of(kind), e->addr, &replaced);
	if (!l)
		return -1;
	if (replaced) {             /* its free was not seen: end it first */
		if (l->ns == NS_PHYS)
			l->refs = l->maps = 0;
		end_live(c, l, t);
		l = live_put(&p->live, proc, ns_of(kind), e->addr, &replaced);
		if (!l)
			return -1;
	}
	l->kind = (uint8_t)kind;
	l->bytes = e->bytes;
	l->seq = c->seq;
	l->pdev = pd;
	switch (kind) {
	case MT_KIND_DEVICE: case MT_KIND_MANAGED: case MT_KIND_ARRAY:
		if (pd < 0)
			break;
		l->site = site_get(a, proc, e->stack_id, dev, 0);
		l->caching = l->site != UINT32_MAX && a->sites[l->site].caching;
		if (l->caching)
			MEM_ADD(a, pd, cache_seg, e->bytes);
		else
			MEM_ADD(a, pd, plain, e->bytes);
		if (e->h.a & MT_KIND_ESTIMATED)
			pr->estimated_bytes += e->bytes;
		break;
	case MT_KIND_HOST:
		l->site = site_get(a, proc, e->stack_id, -1, 1);
		pr->host_live += e->bytes;
		if (pr->host_live > pr->host_peak) {
			pr->host_peak = pr->host_live;
			pr->host_peak_time = t;
		}
		break;
	case MT_KIND_HOST_REGISTER:
		pr->hostreg_live += e->bytes;
		if (pr->hostreg_live > pr->hostreg_peak)
			pr->hostreg_peak = pr->hostreg_live;
		break;
	case MT_KIND_FOREIGN:
		pr->foreign_live += e->bytes;
		if (pr->foreign_live > pr->foreign_peak)
			pr->foreign_peak = pr->foreign_live;
		break;
	case MT_KIND_ASYNC: {
		struct an_pool *q;

		if (pd < 0)
			break;
		l->x1 = x ? x->x2 : 0;
		q = pool_get(&PRIV(a)->live, proc, l->x1, pd);
		if (!q)
			return -1;
		if (q->pdev < 0)
			q->pdev = pd;
		l->site = site_get(a, proc, e->stack_id, dev, 0);
		MEM_ADD(a, pd, async_live, e->bytes);
		q->async_live += e->bytes;
		pool_settle(a, q);
		break;
	}
	case MT_KIND_VMM_PHYS:
		l->refs = 1;
		if (pd >= 0) {
			l->site = site_get(a, proc, e->stack_id, dev, 0);
			MEM_ADD(a, pd, vmm_phys, e->bytes);
		}
		break;
	case MT_KIND_VMM_MAP: {
		struct an_live *h;

		l->x1 = x ? x->x1 : 0;
		h = live_find(&p->live, proc, NS_PHYS, l->x1);
		if (h)
			h->maps++;
		if (pd >= 0)
			MEM_ADD(a, pd, vmm_mapped, e->bytes);
		break;
	}
	default:                    /* reservations: address space only */
		break;
	}
	if (l->site != UINT32_MAX && !p->replay) {
		site_add(a, l->site, e->bytes, t);
		if (!a->sites[l->site].host) {
			frag_hist_add(&a->devs[pd], e->bytes);
			frag_hist_add(&a->devs[a->devs[pd].gdev], e->bytes);
		}
	}
	settle_pdev(a, pd, t, c->rn, proc, e->api, e->stack_id, e->bytes);
	if (!p->replay)
		frag_oom_alloc(a, proc, c->r->rec.tid, e->bytes, 0, t);
	return sink_rec(c, 0, e->bytes, dev);
}

/* Applies the memory samples of a process that wait for its next event. */
static void flush_samples(struct analysis *a, int proc)
{
	struct an_proc *pr = &a->procs[proc];

	if (!pr->sample_pending)
		return;
	pr->sample_pending = 0;
	for (int k = 0; k < AN_MAX_DEV; k++) {
		int pd = pr->pdev[k];
		struct an_dev *p;

		if (pd < 0 || !a->devs[pd].has_pend)
			continue;
		p = &a->devs[pd];
		p->has_pend = 0;
		for (int g = 0; g < 2; g++) {
			int di = g ? p->gdev : pd;
			struct an_dev *d = &a->devs[di];

			d->sample_total = p->pend_total;
			d->sample_used = p->pend_total - (p->pend_free < p->pend_total ?
							  p->pend_free : p->pend_total);
			d->sample_time = p->pend_time;
			d->has_sample = 1;
			d->used = 1;
			PRIV(a)->sample_reserved[di] = d->reserved;
			peak_sample(d, p->pend_time);
			if (g)
				sample_keep(a, d, p->pend_time, proc);
		}
		failures_sample(a, proc, k, p->pend_free);
	}
}

static int do_event(struct ctx *c)
{
	struct analysis *a = c->a;
	const struct srec *r = c->r;
	const struct mt_event *e = r->rec.p;
	unsigned kind = e->h.a & MT_KIND_MASK;
	int is_free = r->rec.type == MT_REC_FREE || r->rec.type == MT_REC_FREE_EX;
	struct an_proc *pr = &a->procs[r->proc];
	unsigned api = e->api < MT_API_MAX ? e->api : 0;

	flush_samples(a, r->proc);
	ranges_thread(a, r->rec.tid);
	if (!PRIV(a)->replay) {
		pr->events++;
		a->events++;
		pr->by_api[api]++;
		a->by_api[api]++;
	}
	if (e->result != 0) {
		if (PRIV(a)->replay)
			return 0;
		pr->failed++;
		a->failed++;
		pr->failed_by_api[api]++;
		a->failed_by_api[api]++;
		if (!is_free && kind != MT_KIND_VMM_RETAIN && kind != MT_KIND_POOL) {
			int pd = pdev_of(a, r->proc, e->h.b);

			if (failures_add(a, r->t, r->proc, r->rec.tid, e, e->h.b,
					 pd >= 0 ? &a->devs[pd] : NULL))
				return -1;
			frag_oom_failed(a, r->proc, r->rec.tid, e->h.b, e->bytes, e->result, r->t);
			nvmem_failure(a, r->proc, r->t);
		}
		return sink_rec(c, 0, is_free ? 0 : e->bytes, e->h.b);
	}
	return is_free ? do_free(c, e, kind, r->t) : do_alloc(c, e, kind, r->t);
}

static int do_record(struct ctx *c)
{
	struct analysis *a = c->a;
	const struct srec *r = c->r;

	switch (r->rec.type) {
	case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX:
		return do_event(c);
	case MT_REC_POOL: {
		const struct mt_pool *m = r->rec.p;
		int pd = pdev_of(a, r->proc, m->h.b);
		struct an_pool *q = pool_get(&PRIV(a)->live, r->proc, m->pool, pd);

		if (!q)
			return -1;
		if (q->pdev < 0)
			q->pdev = pd;
		q->has_record = 1;
		q->reserved = m->reserved;
		q->used = m->used;
		pool_settle(a, q);
		settle_pdev(a, q->pdev, r->t, c->rn, r->proc, m->api, 0, 0);
		break;
	}
	case MT_REC_FW_EVENT:
		if (!PRIV(a)->replay && fw_record(a, r))
			return -1;
		if (!PRIV(a)->replay)
			ranges_fw(a, r->proc, r->t);
		break;
	case MT_REC_RANGE: case MT_REC_STRING:     /* ranges.h */
		if (!PRIV(a)->replay && ranges_record(a, r))
			return -1;
		break;
	case MT_REC_NVTX_MEM:                       /* nvtxmem.h */
		if (!PRIV(a)->replay && nvmem_record(a, r))
			return -1;
		break;
	case MT_REC_MEMINFO: {
		const struct mt_meminfo *m = r->rec.p;
		int pd = pdev_of(a, r->proc, m->h.b);

		if (pd < 0 || PRIV(a)->replay)
			break;
		/* applied before the process's next event: the POOL records
		   that the same call wrote after it belong to the state the
		   sample saw */
		a->devs[pd].pend_free = m->free_bytes;
		a->devs[pd].pend_total = m->total_bytes;
		a->devs[pd].pend_time = r->t;
		a->devs[pd].has_pend = 1;
		a->procs[r->proc].sample_pending = 1;
		break;
	}
	default:
		break;
	}
	return c->sink && !PRIV(a)->replay ? c->sink->record(c->sink->ctx, c->a, r, 0, 0, 0, -1) : 0;
}

/*
 * A process ended (its last record). When records of other processes
 * follow, the driver has taken back what it still held, so its share
 * leaves the devices of the run; a process that ends with the run keeps
 * its share to the end, which is what the run left live. Its own pdevs
 * keep their state either way: that is what it left live at exit.
 */
static void proc_exit(struct analysis *a, int proc, uint64_t t, uint64_t seq)
{
	struct an_proc *pr = &a->procs[proc];

	flush_samples(a, proc);
	if (!PRIV(a)->records_left)
		return;
	PRIV(a)->live.released[proc] = 1;
	for (int k = 0; k < AN_MAX_DEV; k++) {
		int pd = pr->pdev[k];
		struct an_dev *g;
		const struct an_mem *m;

		if (pd < 0)
			continue;
		g = &a->devs[a->devs[pd].gdev];
		m = &a->devs[pd].m;
		g->m.plain -= m->plain;
		g->m.cache_seg -= m->cache_seg;
		g->m.vmm_phys -= m->vmm_phys;
		g->m.vmm_mapped -= m->vmm_mapped;
		g->m.async_live -= m->async_live;
		g->m.pool_part -= m->pool_part;
		settle(a, a->devs[pd].gdev, t, seq, proc, 0, 0, 0);
	}
}

/* --- the merge on a thread of its own ------------------------------------ */

/*
 * On two cores the merge (stream_next: the heap, the decoding of compact
 * records) runs on a thread of its own and hands the records over in
 * batches, in the order it made them; the pass runs on the caller's
 * thread. A decoded record lives in its cursor until the cursor moves on,
 * so the batch keeps a copy of it; the other records point into the trace,
 * which stays mapped. Walks of fewer records than MERGE_THREAD_MIN stay on
 * one thread.
 */
#define BATCH 2048
#define NBATCH 8
#ifndef MERGE_THREAD_MIN                /* -DMERGE_THREAD_MIN=1: every walk */
#define MERGE_THREAD_MIN (4 * BATCH)
#endif

union rec_copy {
	struct mt_event_ex ev;
	struct mt_fw_event fw;
};

struct batch {
	size_t n;
	struct srec r[BATCH];
	union rec_copy copy[BATCH];
};

struct merger {
	struct stream *s;
	struct batch b[NBATCH];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t filled, taken;     /* batches handed over, and taken back */
	int done;                   /* the merge is at its end */
	int stop;                   /* the pass wants no more */
	int merge_waits, pass_waits;/* a side sleeps until the ring is half
	                               empty (merge) or half full (pass), so
	                               that the threads wake each other seldom */
};

static void *merge_main(void *arg)
{
	struct merger *m = arg;
	int more = 1;

	while (more) {
		struct batch *b;

		pthread_mutex_lock(&m->mu);
		if (m->filled - m->taken == NBATCH) {
			m->merge_waits = 1;
			while (m->filled - m->taken > NBATCH / 2 && !m->stop)
				pthread_cond_wait(&m->cv, &m->mu);
			m->merge_waits = 0;
		}
		more = !m->stop;
		pthread_mutex_unlock(&m->mu);
		if (!more)
			break;
		b = &m->b[m->filled % NBATCH];
		for (b->n = 0; b->n < BATCH; b->n++) {
			struct srec *r = &b->r[b->n];
			uint8_t ty;

			if (!stream_next(m->s, r)) {
				more = 0;
				break;
			}
			ty = r->rec.type;
			if (((ty >= MT_REC_ALLOC && ty <= MT_REC_FREE_EX) || ty == MT_REC_FW_EVENT) &&
			    r->rec.size <= sizeof(b->copy[0])) {
				memcpy(&b->copy[b->n], r->rec.p, r->rec.size);
				r->rec.p = &b->copy[b->n];
			}
		}
		pthread_mutex_lock(&m->mu);
		m->filled++;
		m->done = !more;
		if (m->pass_waits && (m->done || m->filled - m->taken >= NBATCH / 2))
			pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
	}
	return NULL;
}

/* The next batch, NULL at the end; the one before is given back. */
static struct batch *merger_take(struct merger *m, struct batch *prev)
{
	struct batch *b = NULL;

	pthread_mutex_lock(&m->mu);
	if (prev) {
		m->taken++;
		if (m->merge_waits && m->filled - m->taken <= NBATCH / 2)
			pthread_cond_broadcast(&m->cv);
	}
	if (m->filled == m->taken && !m->done) {
		m->pass_waits = 1;
		while (m->filled - m->taken < NBATCH / 2 && !m->done)
			pthread_cond_wait(&m->cv, &m->mu);
		m->pass_waits = 0;
	}
	if (m->filled != m->taken)
		b = &m->b[m->taken % NBATCH];
	pthread_mutex_unlock(&m->mu);
	return b;
}

static void merger_stop(struct merger *m)
{
	pthread_mutex_lock(&m->mu);
	m->stop = 1;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* One record of a walk; 1 when the walk is to stop, -1 on error. */
static int walk_one(struct ctx *c, uint64_t stop, int (*at)(struct analysis *, uint64_t seq))
{
	struct analysis *a = c->a;
	const struct srec *r = c->r;

	if (PRIV(a)->stop_by_t && r->t > PRIV(a)->stop_t)
		return 1;
	if (r->rec.type >= MT_REC_ALLOC && r->rec.type <= MT_REC_FREE_EX)
		c->seq++;
	c->rn++;
	if (do_record(c))
		return -1;
	PRIV(a)->records_left--;
	if (--PRIV(a)->remaining[r->proc] == 0)
		proc_exit(a, r->proc, r->t, c->rn);
	if (at && at(a, c->rn))
		return -1;
	return PRIV(a)->replay && c->rn >= stop;
}

/* walk() with the merge on a thread: -1 when the thread cannot start
   (nothing walked: *started 0), or walk()'s result. */
static int walk_threaded(struct ctx *c, uint64_t stop, int (*at)(struct analysis *, uint64_t seq),
			 int *started)
{
	struct merger *m = calloc(1, sizeof(*m));
	struct batch *b = NULL;
	pthread_t th;
	int rc = 0;

	*started = 0;
	if (!m)
		return -1;
	m->s = c->a->s;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	if (pthread_create(&th, NULL, merge_main, m) != 0) {
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
		free(m);
		return -1;
	}
	*started = 1;
	while (rc == 0 && (b = merger_take(m, b))) {
		for (size_t i = 0; i < b->n && rc == 0; i++) {
			c->r = &b->r[i];
			rc = walk_one(c, stop, at);
		}
	}
	merger_stop(m);
	pthread_join(th, NULL);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
	return rc < 0 ? -1 : 0;
}

/* One walk: pass 1 when replay is 0; with replay, stops after the record
   numbered stop (from 1) and calls at(rn) after every record. */
static int walk(struct analysis *a, struct an_sink *sink, uint64_t stop,
		int (*at)(struct analysis *, uint64_t seq))
{
	struct srec r;
	struct ctx c = { a, &r, 0, 0, sink };
	int rc, started;

	PRIV(a)->records_left = 0;
	for (int i = 0; i < a->nprocs; i++) {
		PRIV(a)->remaining[i] = trace_stats(stream_proc(a->s, i)->t)->records;
		PRIV(a)->records_left += PRIV(a)->remaining[i];
		PRIV(a)->live.released[i] = 0;
	}
	stream_rewind(a->s);
	if ((PRIV(a)->replay ? stop : PRIV(a)->records_left) >= MERGE_THREAD_MIN) {
		rc = walk_threaded(&c, stop, at, &started);
		if (started)
			return rc;
	}
	c.r = &r;
	while (stream_next(a->s, &r))
		if ((rc = walk_one(&c, stop, at)))
			return rc < 0 ? -1 : 0;
	return 0;
}

/* Clears the live state for the replay (sites and peaks stay). */
static void reset_for_replay(struct analysis *a)
{
	struct priv *p = PRIV(a);

	live_reset(&p->live);
	p->replay = 1;
	for (int i = 0; i < a->ndevs; i++) {
		memset(&a->devs[i].m, 0, sizeof(a->devs[i].m));
		a->devs[i].reserved = a->devs[i].allocated = 0;
	}
}

/*
 * How each process ended, from its trace's exit record. A trace that
 * promises one and has none was killed, unless a later trace of the same
 * pid and host shows the process went on under a new program (exec).
 */
static void proc_ends(struct analysis *a)
{
	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *sp = stream_proc(a->s, i);
		struct an_proc *pr = &a->procs[i];
		struct trace_exit x;

		trace_exit(sp->t, &x);
		pr->end_time = sp->last_t;
		if (x.recorded) {
			int64_t t = (int64_t)(x.time_ns + (uint64_t)sp->shift);

			pr->end = x.how == MT_EXIT__EXIT ? AN_END_UNDERSCORE_EXIT : AN_END_EXIT;
			pr->exit_status = x.status;
			pr->end_time = t > 0 ? (uint64_t)t : 0;
		} else if (!trace_stats(sp->t)->records) {
			/* no records at all (cut after its header, or zeroed): it
			   did not end cleanly as far as anyone can tell */
			pr->end = AN_END_KILLED;
		} else if (!x.promised || !sp->process) {
			pr->end = AN_END_UNKNOWN;
		} else {
			pr->end = AN_END_KILLED;
			for (int j = 0; j < a->nprocs; j++) {
				const struct sproc *o = stream_proc(a->s, j);

				if (j != i && o->process && o->process->pid == sp->process->pid &&
				    PRIV(a)->host_of[j] == PRIV(a)->host_of[i] && o->first_t >= sp->last_t)
					pr->end = AN_END_EXEC;
			}
		}
	}
}

/* --- the replay to the peaks --------------------------------------------- */

struct stop { uint64_t seq; int dev; };

static struct stop *stops;
static size_t nstops, next_stop;

static int cmp_stop(const void *x, const void *y)
{
	const struct stop *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int at_stop(struct analysis *a, uint64_t rn)
{
	for (; next_stop < nstops && stops[next_stop].seq == rn; next_stop++)
		if (peak_snapshot(a, stops[next_stop].dev))
			return -1;
	return 0;
}

/*
 * Walks the records again up to the last peak and has peak.c look at the
 * live set when each device's peak is reached. The metrics are off meanwhile
 * (replay), and per-process counters keep the values of pass 1.
 */
static int replay_to_peaks(struct analysis *a)
{
	struct an_proc *saved = malloc((size_t)(a->nprocs ? a->nprocs : 1) * sizeof(*saved));
	int rc = -1;

	stops = calloc((size_t)a->ndevs + 1, sizeof(*stops));
	nstops = next_stop = 0;
	if (!saved || !stops)
		goto out;
	memcpy(saved, a->procs, (size_t)a->nprocs * sizeof(*saved));
	for (int i = 0; i < a->ndevs; i++) {
		if (a->devs[i].peak.reserved && a->devs[i].peak.seq) {
			stops[nstops].seq = a->devs[i].peak.seq;
			stops[nstops].dev = i;
			nstops++;
		}
	}
	qsort(stops, nstops, sizeof(*stops), cmp_stop);
	rc = 0;
	if (nstops) {
		reset_for_replay(a);
		rc = walk(a, NULL, stops[nstops - 1].seq, at_stop);
	}
	memcpy(a->procs, saved, (size_t)a->nprocs * sizeof(*saved));
out:
	free(saved);
	free(stops);
	stops = NULL;
	return rc;
}

/*
 * A moment of the run after the analysis: walks the records again (as the
 * replay to the peaks does, the metrics off) up to record number rn, or,
 * rn 0, every record of time <= t, and fills out[i] for each device i of
 * a->devs: its reserved and allocated then and what it held by site
 * (peak_group). The figures of the analysis stay those of pass 1.
 */
int analysis_at(struct analysis *a, uint64_t rn, uint64_t t, struct an_at *out)
{
	struct an_proc *saved = malloc((size_t)(a->nprocs ? a->nprocs : 1) * sizeof(*saved));
	struct priv *p = PRIV(a);
	int rc = -1;

	memset(out, 0, (size_t)a->ndevs * sizeof(*out));
	if (!saved)
		return -1;
	memcpy(saved, a->procs, (size_t)a->nprocs * sizeof(*saved));
	reset_for_replay(a);
	p->stop_by_t = !rn;
	p->stop_t = t;
	rc = walk(a, NULL, rn ? rn : UINT64_MAX, NULL);
	p->stop_by_t = 0;
	memcpy(a->procs, saved, (size_t)a->nprocs * sizeof(*saved));
	free(saved);
	for (int i = 0; !rc && i < a->ndevs; i++) {
		out[i].reserved = a->devs[i].reserved;
		out[i].allocated = a->devs[i].allocated;
		rc = peak_group(a, i, &out[i].sites, &out[i].nsites);
	}
	return rc;
}

/* The host index of process i, from the processes before it. */
static void host_index(struct analysis *a, int i)
{
	struct priv *p = PRIV(a);
	const char *h;
	size_t hl;

	for (int k = 0; k < AN_MAX_DEV; k++)
		a->procs[i].pdev[k] = -1;
	an_hostname(a, i, &h, &hl);
	p->host_of[i] = a->nhosts;
	for (int j = 0; j < i; j++) {
		const char *h2;
		size_t hl2;

		an_hostname(a, j, &h2, &hl2);
		if (hl == hl2 && !memcmp(h, h2, hl)) {
			p->host_of[i] = p->host_of[j];
			break;
		}
	}
	if (p->host_of[i] == a->nhosts)
		a->nhosts++;
}

struct analysis *analysis_begin(struct stream *s, an_caching_fn caching, void *caching_ctx,
				char *err, size_t errlen)
{
	struct analysis *a = calloc(1, sizeof(*a));
	struct priv *p = calloc(1, sizeof(*p));
	int n = stream_nprocs(s);

	if (!a || !p)
		goto nomem;
	a->priv = p;
	a->live = &p->live;
	a->s = s;
	a->nprocs = n;
	a->duration = stream_duration(s);
	a->procs = calloc((size_t)(n ? n : 1), sizeof(*a->procs));
	p->host_of = calloc((size_t)(n ? n : 1), sizeof(int));
	p->remaining = calloc((size_t)(n ? n : 1), sizeof(uint64_t));
	p->live.released = calloc((size_t)(n ? n : 1), 1);
	if (!a->procs || !p->host_of || !p->remaining || !p->live.released)
		goto nomem;
	p->live.tab = HTAB_INIT(struct an_live);
	p->site_tab = HTAB_INIT(struct htab_ref);
	frag_reset();
	p->caching = caching;
	p->caching_ctx = caching_ctx;
	for (int i = 0; i < n; i++)
		host_index(a, i);
	return a;
nomem:
	errno = ENOMEM;
	snprintf(err, errlen, "out of memory");
	analysis_free(a);
	if (!a)
		free(p);
	return NULL;
}

/* --- feeding the pass record by record (memtrace top) --------------------- */

int analysis_add_procs(struct analysis *a)
{
	struct priv *p = PRIV(a);
	int n = stream_nprocs(a->s), old = a->nprocs;
	void *np, *nh, *nr, *nl;

	a->duration = stream_duration(a->s);
	if (n <= old)
		return 0;
	np = realloc(a->procs, (size_t)n * sizeof(*a->procs));
	if (np)
		a->procs = np;
	nh = realloc(p->host_of, (size_t)n * sizeof(int));
	if (nh)
		p->host_of = nh;
	nr = realloc(p->remaining, (size_t)n * sizeof(uint64_t));
	if (nr)
		p->remaining = nr;
	nl = realloc(p->live.released, (size_t)n);
	if (nl)
		p->live.released = nl;
	if (!np || !nh || !nr || !nl) {
		errno = ENOMEM;
		return -1;
	}
	memset(a->procs + old, 0, (size_t)(n - old) * sizeof(*a->procs));
	memset(p->remaining + old, 0, (size_t)(n - old) * sizeof(uint64_t));
	memset(p->live.released + old, 0, (size_t)(n - old));
	a->nprocs = n;
	for (int i = old; i < n; i++)
		host_index(a, i);
	return 0;
}

int analysis_feed(struct analysis *a, const struct srec *r)
{
	struct priv *p = PRIV(a);
	struct ctx c = { a, r, p->feed_seq, p->feed_rn, NULL };

	if (r->rec.type >= MT_REC_ALLOC && r->rec.type <= MT_REC_FREE_EX)
		c.seq++;
	c.rn++;
	p->feed_seq = c.seq;
	p->feed_rn = c.rn;
	if (r->proc >= a->nprocs) {
		errno = EINVAL;
		return -1;
	}
	if (do_record(&c) || p->oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void analysis_proc_gone(struct analysis *a, int proc, uint64_t t)
{
	if (proc < 0 || proc >= a->nprocs || PRIV(a)->live.released[proc])
		return;
	PRIV(a)->records_left = 1;      /* the run goes on */
	proc_exit(a, proc, t, PRIV(a)->feed_rn);
}

struct analysis *analysis_run(struct stream *s, struct an_sink *sink, an_caching_fn caching,
			      void *caching_ctx, char *err, size_t errlen)
{
	struct analysis *a = analysis_begin(s, caching, caching_ctx, err, errlen);
	struct priv *p;

	if (!a)
		return NULL;
	p = a->priv;
	if (walk(a, sink, 0, NULL) || (sink && sink->end && sink->end(sink->ctx))) {
		if (!sink || !sink->errmsg)
			goto fail;
		snprintf(err, errlen, "%s", sink->errmsg);
		goto failed;
	}
	for (int i = 0; i < a->ndevs; i++) {
		struct an_dev *d = &a->devs[i];

		frag_advance(d, a->duration);
		timeline_end(a, d);
		if (d->proc >= 0) {
			d->left_at_exit = d->reserved;
			d->live_at_end = p->live.released[d->proc] ? 0 : d->reserved;
			a->devs[d->gdev].left_at_exit += d->reserved;
		} else {
			d->live_at_end = d->reserved;
		}
	}
	if (p->oom)
		goto nomem;
	proc_ends(a);
	if (fw_end(a) || ranges_end(a) || cat_end(a) || nvmem_end(a) || replay_to_peaks(a))
		goto nomem;
	return a;
nomem:
	errno = ENOMEM;
fail:
	snprintf(err, errlen, "out of memory");
failed:
	analysis_free(a);
	return NULL;
}

void analysis_free(struct analysis *a)
{
	struct priv *p;

	if (!a)
		return;
	p = a->priv;
	if (p) {
		live_free(&p->live);
		htab_free(&p->site_tab);
		free(p->sample_reserved);
		free(p->host_of);
		free(p->remaining);
		free(p->live.released);
		free(p);
	}
	for (int i = 0; i < a->ndevs; i++) {
		free(a->devs[i].peak_sites);
		free(a->devs[i].extents);
		free(a->devs[i].tl);
		free(a->devs[i].samples);
	}
	free(a->devs);
	free(a->procs);
	free(a->sites);
	free(a->failures);
	free(a->oomsigs);
	fw_free(a->fw);
	ranges_free(a->ranges);
	nvmem_free(a->nvmem);
	free(a);
}
