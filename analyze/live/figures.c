/*
 * figures.c - one frame of a running job's figures (figures.h), its text
 * for `memtrace top --once` and its Prometheus exposition.
 *
 * The GPU figures are read from the analysis (an_dev, an_proc, an_site,
 * failures, OOM retry signatures), the framework's from its model (fw_dev,
 * fw_site: framework.c, fed by the same pass), the ranges' (ranges_now of
 * ranges.c, the same pass: the step and range open now, the last step's
 * peak) and the shared memory state from shm.c over the records fed. Sites are the report's: sites_build()
 * groups the pass's stacks as the report does, each shown by its id and
 * rep_site_name(); tensor sites by their id and fw_site_name().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "live/figures.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "model/report.h"
#include "model/sites.h"
#include "model/symbols.h"
#include "views/format.h"

struct lv *lv_new(void)
{
	return calloc(1, sizeof(struct lv));
}

void lv_free(struct lv *v)
{
	if (!v)
		return;
	free(v->devs);
	free(v->pdevs);
	free(v->procs);
	free(v->sites);
	free(v->mark);
	free(v->fwdevs);
	free(v->tsites);
	free(v);
}

/* --- what only the watching process sees --------------------------------- */

static int read_rss(uint32_t pid, uint64_t *rss)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1) {
			*rss = (uint64_t)kb * 1024;
			found = 1;
			break;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static void read_host(struct lv_host *h)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	struct statvfs sv;

	h->has_mem = 0;
	if (f) {
		int got = 0;

		while (fgets(line, sizeof(line), f)) {
			unsigned long long kb;

			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
				h->mem_total = (uint64_t)kb * 1024;
				got |= 1;
			} else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				h->mem_available = (uint64_t)kb * 1024;
				got |= 2;
			}
		}
		fclose(f);
		h->has_mem = got == 3;
	}
	h->has_shm = statvfs("/dev/shm", &sv) == 0;
	if (h->has_shm) {
		h->shm_size = (uint64_t)sv.f_blocks * sv.f_frsize;
		h->shm_free = (uint64_t)sv.f_bavail * sv.f_frsize;
	}
}

/* --- sites ----------------------------------------------------------------- */

/* By device, then the report's site id (then name: sites not named). */
static int cmp_name(const void *x, const void *y)
{
	const struct lv_site *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return strcmp(a->name, b->name);
}

static enum lv_sort sort_by;

static int cmp_sort(const void *x, const void *y)
{
	const struct lv_site *a = x, *b = y;

	switch (sort_by) {
	case LV_SORT_COUNT:
		if (a->count != b->count)
			return a->count > b->count ? -1 : 1;
		break;
	case LV_SORT_GROWTH:
		if (a->growth != b->growth)
			return a->growth > b->growth ? -1 : 1;
		break;
	default:
		break;
	}
	if (a->live != b->live)
		return a->live > b->live ? -1 : 1;
	return cmp_name(x, y);
}

static int build_sites(struct lv *v, struct follow *f, enum lv_sort sort, int proc, int dev)
{
	struct analysis *a = follow_analysis(f);
	struct symbols *sy = follow_symbols(f);
	struct sites ss;
	char err[256];
	int n = 0, m = 0, named = 0;

	if ((uint32_t)v->cap_sites < a->nsites) {
		void *g = realloc(v->sites, a->nsites * sizeof(*v->sites));

		if (!g)
			return -1;
		v->sites = g;
		v->cap_sites = (int)a->nsites;
	}
	/* the report's sites: its ids, its names */
	if (sy && a->nsites && sites_build(&ss, a, sy, err, sizeof(err)) == 0)
		named = 1;
	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];
		uint64_t base = i < v->nmark ? v->mark[i] : 0;
		struct lv_site *o;

		if (!s->live && s->live == base)
			continue;
		if ((proc >= 0 && s->proc != proc) || (dev >= 0 && s->dev != dev))
			continue;
		o = &v->sites[n++];
		if (named) {
			const struct site *g = site_of(&ss, i);

			o->id = g->id;
			rep_site_name(o->name, sizeof(o->name), g, NULL);
		} else {
			o->id = 0;
			snprintf(o->name, sizeof(o->name), s->stack ? "stack %d:%u" : "(no stack)",
				 s->proc, s->stack);
		}
		o->dev = s->host ? -1 : s->dev;
		o->proc = s->proc;
		o->live = s->live;
		o->count = s->count;
		o->growth = (int64_t)(s->live - base);
	}
	if (n > 1)      /* v->sites is NULL while no site was ever seen */
		qsort(v->sites, (size_t)n, sizeof(*v->sites), cmp_name);
	for (int i = 0; i < n; i++) {
		if (m && !cmp_name(&v->sites[m - 1], &v->sites[i])) {
			struct lv_site *o = &v->sites[m - 1];

			o->live += v->sites[i].live;
			o->count += v->sites[i].count;
			o->growth += v->sites[i].growth;
			if (o->proc != v->sites[i].proc)
				o->proc = -1;
			continue;
		}
		v->sites[m++] = v->sites[i];
	}
	sort_by = sort;
	if (m > 1)
		qsort(v->sites, (size_t)m, sizeof(*v->sites), cmp_sort);
	v->nsites = m;
	if (named)
		sites_free(&ss);
	return 0;
}

/* --- the framework's allocator ---------------------------------------------- */

static void host_of(const struct analysis *a, int proc, char *buf, size_t len);

static int cmp_tsite(const void *x, const void *y)
{
	const struct lv_tsite *a = x, *b = y;

	if (a->live != b->live)
		return a->live > b->live ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The framework model's figures now: the devices of the run first, then
   those of each process (the report's order), and the tensor sites
   holding blocks, largest first. */
static int build_fw(struct lv *v, struct analysis *a, int proc, int dev)
{
	struct fw_model *m = a->fw;
	void *g;

	v->nfwdevs = v->ntsites = 0;
	v->has_fw = m != NULL;
	if (!m)
		return 0;
	v->fw_events = m->events;
	if (!(g = realloc(v->fwdevs, ((size_t)m->ndevs + 1) * sizeof(*v->fwdevs))))
		return -1;
	v->fwdevs = g;
	if (!(g = realloc(v->tsites, ((size_t)m->nsites + 1) * sizeof(*v->tsites))))
		return -1;
	v->tsites = g;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < m->ndevs; i++) {
			const struct fw_dev *d = &m->devs[i];
			struct lv_fwdev *o;

			if ((d->proc < 0) == !!k || (dev >= 0 && d->dev != dev) ||
			    (proc >= 0 && d->proc >= 0 && d->proc != proc))
				continue;
			o = &v->fwdevs[v->nfwdevs++];
			o->proc = d->proc;
			o->dev = d->dev;
			host_of(a, d->proc >= 0 ? d->proc : 0, o->host, sizeof(o->host));
			o->reserved = d->reserved;
			o->allocated = d->allocated;
			o->requested = d->requested;
			o->awaiting = d->awaiting;
			o->cached = d->reserved - d->allocated;
			o->peak_allocated = d->peak_alloc.st.allocated;
			o->peak_requested = d->peak_req.st.requested;
			o->peak_reserved = d->peak_res.st.reserved;
			o->ooms = d->ooms;
		}
	if (fw_name_sites(m))
		return -1;
	for (uint32_t i = 0; i < m->nsites; i++) {
		const struct fw_site *s = &m->sites[i];
		struct lv_tsite *o;

		if (!s->live || (dev >= 0 && s->dev != dev))
			continue;
		o = &v->tsites[v->ntsites++];
		o->id = s->id;
		o->dev = s->dev;
		fw_site_name(o->name, sizeof(o->name), a, s, NULL);
		o->file = s->file;
		o->function = s->function;
		o->line = s->line;
		o->live = s->live;
		o->peak = s->max;
	}
	if (v->ntsites > 1)
		qsort(v->tsites, (size_t)v->ntsites, sizeof(*v->tsites), cmp_tsite);
	return 0;
}

void lv_mark(struct lv *v, struct follow *f)
{
	struct analysis *a = follow_analysis(f);
	uint64_t *m;

	if (!a)
		return;
	m = realloc(v->mark, (a->nsites ? a->nsites : 1) * sizeof(*m));
	if (!m)
		return;
	v->mark = m;
	for (uint32_t i = 0; i < a->nsites; i++)
		m[i] = a->sites[i].live;
	v->nmark = a->nsites;
	v->marked = 1;
}

/* --- the frame ------------------------------------------------------------- */

static void host_of(const struct analysis *a, int proc, char *buf, size_t len)
{
	const char *h;
	size_t hl;

	an_hostname(a, proc, &h, &hl);
	if (hl >= len)
		hl = len - 1;
	memcpy(buf, h, hl);
	buf[hl] = 0;
}

/* Process i's step and range now, from the ranges model. */
static void ranges_proc(struct lv_proc *p, const struct analysis *a, int i)
{
	struct rg_now now;

	ranges_now(a, i, &now);
	p->step = now.step ? now.step_no : 0;
	snprintf(p->step_name, sizeof(p->step_name), "%s", now.step_name);
	snprintf(p->range, sizeof(p->range), "%s", now.range_name);
	p->has_last_step = now.last_step != NULL;
	p->last_step = now.last_step_no;
	p->last_step_peak = now.last_step ? now.last_step->res_peak : 0;
	p->last_step_end = now.last_step ? now.last_step->res1 : 0;
}

int lv_update(struct lv *v, struct follow *f, enum lv_sort sort, int proc, int dev)
{
	struct analysis *a = follow_analysis(f);
	struct lv_dev *old = v->devs;
	int nold = v->ndevs, ng = 0, np = 0;
	struct shm_result shm;
	char err[256];
	uint64_t bytes;

	read_host(&v->host);
	follow_counts(f, &v->records, &v->late, &bytes);
	v->nprocs = v->nrunning = 0;
	v->ndevs = v->npdevs = v->nsites = 0;
	v->has_fw = v->nfwdevs = v->ntsites = 0;
	if (!a)
		return 0;
	v->devs = NULL;
	free(v->pdevs);
	free(v->procs);
	v->pdevs = NULL;
	v->procs = calloc((size_t)(a->nprocs ? a->nprocs : 1), sizeof(*v->procs));
	if (a->ndevs) {
		v->devs = calloc((size_t)a->ndevs, sizeof(*v->devs));
		v->pdevs = calloc((size_t)a->ndevs, sizeof(*v->pdevs));
	}
	if (!v->procs || (a->ndevs && (!v->devs || !v->pdevs))) {
		free(old);
		return -1;
	}
	v->time = a->duration;
	v->nprocs = a->nprocs;
	for (int i = 0; i < a->nprocs; i++) {
		const struct follow_proc *fp = follow_proc(f, i);
		const struct an_proc *ap = &a->procs[i];
		struct lv_proc *p = &v->procs[i];

		p->proc = i;
		p->pid = fp->pid;
		p->rank = fp->rank;
		p->state = fp->damaged ? LV_DAMAGED : fp->exited ? LV_EXITED :
			   fp->gone ? LV_KILLED : LV_RUNNING;
		v->nrunning += p->state == LV_RUNNING;
		host_of(a, i, p->host, sizeof(p->host));
		p->command = fp->cmdline;
		p->reserved = ap->reserved_all;
		p->peak = ap->peak_all;
		p->events = ap->events;
		p->pinned = ap->host_live;
		p->pinned_peak = ap->host_peak;
		p->has_rss = p->state == LV_RUNNING && fp->local && read_rss(p->pid, &p->rss) == 0;
		ranges_proc(p, a, i);
	}
	v->has_ranges = a->ranges != NULL;
	for (uint32_t i = 0; i < a->nsites; i++)
		v->procs[a->sites[i].proc].live_allocs += a->sites[i].count;
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (d->proc < 0) {
			struct lv_dev *o = &v->devs[ng++];

			o->di = i;
			o->dev = d->dev;
			host_of(a, d->host_proc, o->host, sizeof(o->host));
			o->reserved = d->reserved;
			o->allocated = d->allocated;
			o->cached = d->reserved - d->allocated;
			o->peak = d->peak.reserved;
			o->peak_time = d->peak.time;
			o->has_sample = d->has_sample;
			o->used = d->sample_used;
			o->total = d->sample_total;
			o->untraced = d->has_sample ? (int64_t)(d->sample_used - d->reserved) : 0;
			/* the history goes on from the last frame's */
			for (int k = 0; k < nold; k++)
				if (old[k].di == i) {
					memcpy(o->hist, old[k].hist, sizeof(o->hist));
					o->nhist = old[k].nhist;
				}
			if (o->nhist == LV_HISTORY)
				memmove(o->hist, o->hist + 1, (LV_HISTORY - 1) * sizeof(o->hist[0]));
			else
				o->nhist++;
			o->hist[o->nhist - 1] = o->reserved;
		} else {
			struct lv_pdev *o = &v->pdevs[np++];

			o->proc = d->proc;
			o->dev = d->dev;
			o->di = i;
			o->reserved = d->reserved;
			o->allocated = d->allocated;
			o->cached = d->reserved - d->allocated;
			o->peak = d->peak.reserved;
		}
	}
	free(old);
	v->ndevs = ng;
	v->npdevs = np;
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *x = &a->failures[i];
		int pd;

		v->procs[x->proc].failures++;
		for (int k = 0; k < np; k++)
			if (v->pdevs[k].proc == x->proc && v->pdevs[k].dev == x->dev)
				v->pdevs[k].failures++;
		pd = x->dev >= 0 && x->dev < AN_MAX_DEV ? a->procs[x->proc].pdev[x->dev] : -1;
		for (int k = 0; pd >= 0 && k < ng; k++)
			if (v->devs[k].di == a->devs[pd].gdev)
				v->devs[k].failures++;
	}
	for (uint32_t i = 0; i < a->noomsigs; i++) {
		const struct an_oomsig *x = &a->oomsigs[i];

		v->procs[x->proc].oom_retries++;
		for (int k = 0; k < np; k++)
			if (v->pdevs[k].proc == x->proc && v->pdevs[k].dev == x->dev)
				v->pdevs[k].oom_retries++;
	}
	memset(&v->host.shm_now, 0, 3 * sizeof(uint64_t));
	if (follow_shm(f, &shm, err, sizeof(err)) == 0) {
		v->host.shm_now = shm.all.now;
		v->host.shm_peak = shm.all.peak;
		v->host.shm_segments = shm.all.present;
		for (int i = 0; i < shm.nprocs && i < v->nprocs; i++)
			v->procs[i].shm_bytes = shm.per_proc[i].now;
		shm_result_free(&shm);
	}
	if (build_fw(v, a, proc, dev))
		return -1;
	return build_sites(v, f, sort, proc, dev);
}

/* --- text ------------------------------------------------------------------ */

static const struct lv *order_of;

static int cmp_pid(const void *x, const void *y)
{
	const struct lv_proc *a = &order_of->procs[*(const int *)x];
	const struct lv_proc *b = &order_of->procs[*(const int *)y];

	return a->pid != b->pid ? (a->pid < b->pid ? -1 : 1) : a->proc - b->proc;
}

void lv_order(const struct lv *v, int *order)
{
	for (int i = 0; i < v->nprocs; i++)
		order[i] = i;
	order_of = v;
	qsort(order, (size_t)v->nprocs, sizeof(int), cmp_pid);
}

static const char *sz(char *buf, size_t len, uint64_t b, int bytes)
{
	if (bytes) {
		snprintf(buf, len, "%" PRIu64, b);
		return buf;
	}
	return rep_size(buf, len, b);
}

const char *lv_state_name(enum lv_state s)
{
	return s == LV_EXITED ? "exited" : s == LV_KILLED ? "killed" :
	       s == LV_DAMAGED ? "damaged" : "running";
}

/* The steps and ranges of each process now (v->has_ranges). */
static void lv_text_ranges(FILE *out, const struct lv *v, int bytes)
{
	char b1[32], b2[32], st[16], ls[16];
	int *order = calloc((size_t)(v->nprocs ? v->nprocs : 1), sizeof(int));

	if (!order)
		return;
	lv_order(v, order);
	fprintf(out, "\n%-6s %8s %6s %9s %12s %12s  %s\n", "RANGES", "PID", "STEP", "LAST STEP",
		"ITS PEAK", "AT ITS END", "RANGE NOW");
	for (int j = 0; j < v->nprocs; j++) {
		const struct lv_proc *p = &v->procs[order[j]];

		snprintf(st, sizeof(st), "%" PRIu32, p->step);
		snprintf(ls, sizeof(ls), "%" PRIu32, p->last_step);
		fprintf(out, "%-6s %8u %6s %9s %12s %12s  %s\n", "ranges", p->pid, p->step ? st : "-",
			p->has_last_step ? ls : "-",
			p->has_last_step ? sz(b1, sizeof(b1), p->last_step_peak, bytes) : "-",
			p->has_last_step ? sz(b2, sizeof(b2), p->last_step_end, bytes) : "-",
			*p->range ? p->range : "-");
	}
	free(order);
}

void lv_text(FILE *out, const struct lv *v, int bytes, int max_sites)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32];

	fprintf(out, "memtrace top: %d process%s (%d running), %" PRIu64 " records, %s\n",
		v->nprocs, v->nprocs == 1 ? "" : "es", v->nrunning, v->records,
		rep_duration(b1, sizeof(b1), v->time));
	if (v->host.has_mem)
		fprintf(out, "host: memory available %s of %s\n",
			sz(b1, sizeof(b1), v->host.mem_available, bytes),
			sz(b2, sizeof(b2), v->host.mem_total, bytes));
	fprintf(out, "shm: run %s in %" PRIu64 " segment%s, peak %s",
		sz(b1, sizeof(b1), v->host.shm_now, bytes), v->host.shm_segments,
		v->host.shm_segments == 1 ? "" : "s", sz(b2, sizeof(b2), v->host.shm_peak, bytes));
	if (v->host.has_shm)
		fprintf(out, "; /dev/shm free %s of %s", sz(b3, sizeof(b3), v->host.shm_free, bytes),
			sz(b4, sizeof(b4), v->host.shm_size, bytes));
	fputc('\n', out);
	fprintf(out, "\n%-12s %4s %12s %12s %12s %12s %12s %12s %8s\n", "HOST", "DEV", "RESERVED",
		"ALLOCATED", "CACHED", "USED", "UNTRACED", "PEAK", "FAILURES");
	for (int i = 0; i < v->ndevs; i++) {
		const struct lv_dev *d = &v->devs[i];

		fprintf(out, "%-12s %4d %12s %12s %12s %12s %12s %12s %8" PRIu64 "\n",
			*d->host ? d->host : "-", d->dev, sz(b1, sizeof(b1), d->reserved, bytes),
			sz(b2, sizeof(b2), d->allocated, bytes), sz(b3, sizeof(b3), d->cached, bytes),
			d->has_sample ? sz(b4, sizeof(b4), d->used, bytes) : "-",
			d->has_sample && d->untraced >= 0 ?
			sz(b5, sizeof(b5), (uint64_t)d->untraced, bytes) : "-",
			sz(b6, sizeof(b6), d->peak, bytes), d->failures);
	}
	int *order = calloc((size_t)(v->nprocs ? v->nprocs : 1), sizeof(int));

	if (!order)
		return;
	lv_order(v, order);
	fprintf(out, "\n%8s %5s %-8s %4s %12s %12s %12s %12s %6s %5s %5s %12s %12s %12s  %s\n",
		"PID", "RANK", "STATE", "DEV", "RESERVED", "ALLOCATED", "CACHED", "PEAK", "LIVE",
		"FAIL", "RETRY", "RSS", "PINNED", "SHM", "COMMAND");
	for (int j = 0; j < v->nprocs; j++) {
		int i = order[j];
		const struct lv_proc *p = &v->procs[i];
		int rows = 0;

		for (int k = 0; k <= v->npdevs; k++) {
			const struct lv_pdev *d = k < v->npdevs ? &v->pdevs[k] : NULL;
			char rank[16];

			if (d ? d->proc != i : rows)
				continue;
			snprintf(rank, sizeof(rank), "%d", p->rank);
			fprintf(out, "%8u %5s %-8s %4s %12s %12s %12s %12s %6" PRIu64 " %5" PRIu64
				" %5" PRIu64 " %12s %12s %12s  %s\n", p->pid, p->rank >= 0 ? rank : "-",
				lv_state_name(p->state), d ? (snprintf(b8, sizeof(b8), "%d", d->dev), b8) : "-",
				sz(b1, sizeof(b1), d ? d->reserved : 0, bytes),
				sz(b2, sizeof(b2), d ? d->allocated : 0, bytes),
				sz(b3, sizeof(b3), d ? d->cached : 0, bytes),
				sz(b4, sizeof(b4), d ? d->peak : 0, bytes), p->live_allocs,
				d ? d->failures : p->failures, d ? d->oom_retries : p->oom_retries,
				p->has_rss ? sz(b5, sizeof(b5), p->rss, bytes) : "-",
				sz(b6, sizeof(b6), p->pinned, bytes), sz(b7, sizeof(b7), p->shm_bytes, bytes),
				p->command && *p->command ? p->command : "-");
			rows++;
		}
	}
	free(order);
	if (v->has_fw) {
		fprintf(out, "\n%-6s %-12s %4s %8s %12s %12s %12s %12s %12s %5s\n", "TORCH", "HOST",
			"DEV", "PID", "RESERVED", "ALLOCATED", "REQUESTED", "CACHED", "PEAK-ALLOC",
			"OOMS");
		for (int i = 0; i < v->nfwdevs; i++) {
			const struct lv_fwdev *d = &v->fwdevs[i];
			char pid[16];

			snprintf(pid, sizeof(pid), "%u", d->proc >= 0 ? v->procs[d->proc].pid : 0);
			fprintf(out, "%-6s %-12s %4d %8s %12s %12s %12s %12s %12s %5" PRIu64 "\n",
				"torch", *d->host ? d->host : "-", d->dev, d->proc >= 0 ? pid : "-",
				sz(b1, sizeof(b1), d->reserved, bytes),
				sz(b2, sizeof(b2), d->allocated, bytes),
				sz(b3, sizeof(b3), d->requested, bytes),
				sz(b4, sizeof(b4), d->cached, bytes),
				sz(b5, sizeof(b5), d->peak_allocated, bytes), d->ooms);
		}
		fprintf(out, "\n%4s %12s %12s %5s  %s\n", "DEV", "TENSORS", "PEAK", "ID", "TENSOR SITE");
		for (int i = 0; i < v->ntsites && (max_sites < 0 || i < max_sites); i++) {
			const struct lv_tsite *t = &v->tsites[i];

			fprintf(out, "%4d %12s %12s %5u  %s\n", t->dev, sz(b1, sizeof(b1), t->live, bytes),
				sz(b2, sizeof(b2), t->peak, bytes), t->id, t->name);
		}
	}
	if (v->has_ranges)
		lv_text_ranges(out, v, bytes);
	fprintf(out, "\n%4s %12s %8s %12s %5s  %s\n", "DEV", "LIVE", "COUNT",
		v->marked ? "SINCE MARK" : "SINCE START", "ID", "SITE");
	for (int i = 0; i < v->nsites && (max_sites < 0 || i < max_sites); i++) {
		const struct lv_site *s = &v->sites[i];
		char dev[16];

		snprintf(dev, sizeof(dev), "%d", s->dev);
		if (bytes)
			snprintf(b2, sizeof(b2), "%+" PRId64, s->growth);
		else {
			rep_size(b2 + 1, sizeof(b2) - 1, (uint64_t)(s->growth < 0 ? -s->growth : s->growth));
			b2[0] = s->growth < 0 ? '-' : '+';
		}
		fprintf(out, "%4s %12s %8" PRIu64 " %12s %5u  %s\n", s->dev < 0 ? "host" : dev,
			sz(b1, sizeof(b1), s->live, bytes), s->count, b2, s->id, s->name);
	}
}

/* --- JSON ------------------------------------------------------------------ */

static void jstr(FILE *out, const char *k, const char *s)
{
	fprintf(out, "\"%s\": ", k);
	if (s)
		rep_json_str(out, s, strlen(s));
	else
		fputs("null", out);
}

static void lv_json_fw(FILE *out, const struct lv *v)
{
	fprintf(out, ",\n  \"framework\": ");
	if (!v->has_fw) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\n    \"name\": \"PyTorch\",\n    \"events\": %" PRIu64
		",\n    \"devices\": [", v->fw_events);
	for (int i = 0; i < v->nfwdevs; i++) {
		const struct lv_fwdev *d = &v->fwdevs[i];

		fprintf(out, "%s\n      {\"device\": %d, \"pid\": ", i ? "," : "", d->dev);
		if (d->proc >= 0)
			fprintf(out, "%u", v->procs[d->proc].pid);
		else
			fputs("null", out);
		fputs(", ", out);
		jstr(out, "hostname", d->host);
		fprintf(out, ", \"reserved_bytes\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64
			", \"requested_bytes\": %" PRIu64 ", \"cached_bytes\": %" PRIu64
			", \"awaiting_free_bytes\": %" PRIu64 ", \"peak_allocated_bytes\": %" PRIu64
			", \"peak_requested_bytes\": %" PRIu64 ", \"peak_reserved_bytes\": %" PRIu64
			", \"ooms\": %" PRIu64 "}", d->reserved, d->allocated, d->requested, d->cached,
			d->awaiting, d->peak_allocated, d->peak_requested, d->peak_reserved, d->ooms);
	}
	fputs("\n    ],\n    \"sites\": [", out);
	for (int i = 0; i < v->ntsites; i++) {
		const struct lv_tsite *t = &v->tsites[i];

		fprintf(out, "%s\n      {\"site\": %u, \"device\": %d, ", i ? "," : "", t->id, t->dev);
		jstr(out, "name", t->name);
		fputs(", ", out);
		jstr(out, "function", t->function);
		fputs(", ", out);
		jstr(out, "file", t->file);
		fprintf(out, ", \"line\": %u, \"live_bytes\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
			"}", t->line, t->live, t->peak);
	}
	fputs("\n    ]\n  }", out);
}

/* A process's step and range now (only when the run has ranges). */
static void lv_json_ranges(FILE *out, const struct lv_proc *p)
{
	fputs(", \"step\": ", out);
	if (p->step) {
		fprintf(out, "{\"step\": %" PRIu32 ", ", p->step);
		jstr(out, "name", p->step_name);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs(", ", out);
	jstr(out, "range", *p->range ? p->range : NULL);
	fputs(", \"last_step\": ", out);
	if (p->has_last_step)
		fprintf(out, "{\"step\": %" PRIu32 ", \"peak_reserved_bytes\": %" PRIu64
			", \"reserved_at_end_bytes\": %" PRIu64 "}", p->last_step, p->last_step_peak,
			p->last_step_end);
	else
		fputs("null", out);
}

void lv_json(FILE *out, const struct lv *v)
{
	int *order = calloc((size_t)(v->nprocs ? v->nprocs : 1), sizeof(int));

	if (!order)
		return;
	lv_order(v, order);
	fprintf(out, "{\n  \"time_ns\": %" PRIu64 ",\n  \"records\": %" PRIu64
		",\n  \"late_records\": %" PRIu64 ",\n  \"devices\": [", v->time, v->records, v->late);
	for (int i = 0; i < v->ndevs; i++) {
		const struct lv_dev *d = &v->devs[i];

		fprintf(out, "%s\n    {", i ? "," : "");
		jstr(out, "hostname", d->host);
		fprintf(out, ", \"device\": %d, \"reserved_bytes\": %" PRIu64 ", \"allocated_bytes\": %"
			PRIu64 ", \"cached_bytes\": %" PRIu64 ", \"peak_reserved_bytes\": %" PRIu64
			", \"failures\": %" PRIu64, d->dev, d->reserved, d->allocated, d->cached, d->peak,
			d->failures);
		if (d->has_sample)
			fprintf(out, ", \"used_bytes\": %" PRIu64 ", \"total_bytes\": %" PRIu64
				", \"untraced_bytes\": %" PRId64 "}", d->used, d->total, d->untraced);
		else
			fputs(", \"used_bytes\": null, \"total_bytes\": null, \"untraced_bytes\": null}", out);
	}
	fputs("\n  ],\n  \"processes\": [", out);
	for (int j = 0; j < v->nprocs; j++) {
		const struct lv_proc *p = &v->procs[order[j]];
		int first = 1;

		fprintf(out, "%s\n    {\"pid\": %u, \"rank\": ", j ? "," : "", p->pid);
		if (p->rank >= 0)
			fprintf(out, "%d", p->rank);
		else
			fputs("null", out);
		fprintf(out, ", \"state\": \"%s\", ", lv_state_name(p->state));
		jstr(out, "hostname", p->host);
		fputs(", ", out);
		jstr(out, "command", p->command);
		fprintf(out, ", \"reserved_bytes\": %" PRIu64 ", \"peak_reserved_bytes\": %" PRIu64
			", \"live_allocations\": %" PRIu64 ", \"failures\": %" PRIu64
			", \"oom_retries\": %" PRIu64 ", \"pinned_bytes\": %" PRIu64
			", \"shm_bytes\": %" PRIu64 ", \"resident_bytes\": ", p->reserved, p->peak,
			p->live_allocs, p->failures, p->oom_retries, p->pinned, p->shm_bytes);
		if (p->has_rss)
			fprintf(out, "%" PRIu64, p->rss);
		else
			fputs("null", out);
		if (v->has_ranges)
			lv_json_ranges(out, p);
		fputs(", \"devices\": [", out);
		for (int k = 0; k < v->npdevs; k++) {
			const struct lv_pdev *d = &v->pdevs[k];

			if (d->proc != order[j])
				continue;
			fprintf(out, "%s{\"device\": %d, \"reserved_bytes\": %" PRIu64
				", \"allocated_bytes\": %" PRIu64 ", \"cached_bytes\": %" PRIu64
				", \"peak_reserved_bytes\": %" PRIu64 ", \"failures\": %" PRIu64
				", \"oom_retries\": %" PRIu64 "}", first ? "" : ", ", d->dev, d->reserved,
				d->allocated, d->cached, d->peak, d->failures, d->oom_retries);
			first = 0;
		}
		fputs("]}", out);
	}
	free(order);
	fputs("\n  ],\n  \"sites\": [", out);
	for (int i = 0; i < v->nsites; i++) {
		const struct lv_site *s = &v->sites[i];

		fprintf(out, "%s\n    {\"site\": %u, \"device\": ", i ? "," : "", s->id);
		if (s->dev >= 0)
			fprintf(out, "%d", s->dev);
		else
			fputs("\"host\"", out);
		fputs(", ", out);
		jstr(out, "name", s->name);
		fprintf(out, ", \"live_bytes\": %" PRIu64 ", \"count\": %" PRIu64
			", \"growth_bytes\": %" PRId64 "}", s->live, s->count, s->growth);
	}
	fputs("\n  ]", out);
	lv_json_fw(out, v);
	fprintf(out, ",\n  \"shm\": {\"bytes\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
		", \"segments\": %" PRIu64 "}\n}\n", v->host.shm_now, v->host.shm_peak,
		v->host.shm_segments);
}
