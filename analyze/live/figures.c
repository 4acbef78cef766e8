/*
 * figures.c - one frame of a running job's figures (figures.h), its text
 * for `memtrace top --once` and its Prometheus exposition.
 *
 * The GPU figures are read from the analysis (an_dev, an_proc, an_site,
 * failures, OOM retry signatures) and the shared memory state from shm.c
 * over the records fed; sites are named by their first user frame and
 * merged by name and device, as the report merges equal frames.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "live/figures.h"
#include "model/report.h"
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

static void frame_name(const struct sym_frame *fr, char *buf, size_t len)
{
	const char *file = fr->file, *slash;

	if (file && (slash = strrchr(file, '/')) && !fr->python)
		file = slash + 1;
	if (fr->function && file && fr->line)
		snprintf(buf, len, "%s:%d %s", file, fr->line, fr->function);
	else if (fr->function)
		snprintf(buf, len, "%s", fr->function);
	else {
		const char *m = fr->module && *fr->module ? fr->module : "?";

		if ((slash = strrchr(m, '/')))
			m = slash + 1;
		snprintf(buf, len, "%s+0x%" PRIx64, m, fr->offset);
	}
}

static void site_name(struct follow *f, const struct an_site *s, char *buf, size_t len)
{
	struct symbols *sy = follow_symbols(f);
	const struct sym_stack *st = NULL;
	struct analysis *a = follow_analysis(f);

	if (sy && s->stack)
		st = sym_stack(sy, a->s, s->proc, s->stack);
	if (!st || !st->nframes) {
		snprintf(buf, len, s->stack ? "stack %d:%u" : "(no stack)", s->proc, s->stack);
		return;
	}
	frame_name(rep_main_frame(st), buf, len);
}

static int cmp_name(const void *x, const void *y)
{
	const struct lv_site *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
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
	int n = 0, m = 0;

	if ((uint32_t)v->cap_sites < a->nsites) {
		void *g = realloc(v->sites, a->nsites * sizeof(*v->sites));

		if (!g)
			return -1;
		v->sites = g;
		v->cap_sites = (int)a->nsites;
	}
	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];
		uint64_t base = i < v->nmark ? v->mark[i] : 0;
		struct lv_site *o;

		if (!s->live && s->live == base)
			continue;
		if ((proc >= 0 && s->proc != proc) || (dev >= 0 && s->dev != dev))
			continue;
		o = &v->sites[n++];
		site_name(f, s, o->name, sizeof(o->name));
		o->dev = s->host ? -1 : s->dev;
		o->proc = s->proc;
		o->live = s->live;
		o->count = s->count;
		o->growth = (int64_t)(s->live - base);
	}
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
	qsort(v->sites, (size_t)m, sizeof(*v->sites), cmp_sort);
	v->nsites = m;
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
		p->state = fp->exited ? LV_EXITED : fp->gone ? LV_KILLED : LV_RUNNING;
		v->nrunning += p->state == LV_RUNNING;
		host_of(a, i, p->host, sizeof(p->host));
		p->command = fp->cmdline;
		p->reserved = ap->reserved_all;
		p->peak = ap->peak_all;
		p->events = ap->events;
		p->pinned = ap->host_live;
		p->pinned_peak = ap->host_peak;
		p->has_rss = p->state == LV_RUNNING && fp->local && read_rss(p->pid, &p->rss) == 0;
	}
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

static const char *state_name(enum lv_state s)
{
	return s == LV_EXITED ? "exited" : s == LV_KILLED ? "killed" : "running";
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
				state_name(p->state), d ? (snprintf(b8, sizeof(b8), "%d", d->dev), b8) : "-",
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
	fprintf(out, "\n%4s %12s %8s %12s  %s\n", "DEV", "LIVE", "COUNT",
		v->marked ? "SINCE MARK" : "SINCE START", "SITE");
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
		fprintf(out, "%4s %12s %8" PRIu64 " %12s  %s\n", s->dev < 0 ? "host" : dev,
			sz(b1, sizeof(b1), s->live, bytes), s->count, b2, s->name);
	}
}
