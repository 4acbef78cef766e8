/*
 * plot.c - the plots of one device, as TSV files drawn by gnuplot:
 *
 *   timeline-devN.tsv       scripts/timeline.gp  reserved and allocated over
 *     (+ .used.tsv, .marks.tsv,                  time; device used at each
 *      .failures.tsv)                            memory sample; peak, failures
 *   addrmap-devN.tsv        scripts/addrmap.gp   each allocation a box from its
 *                                                allocation to its free over its
 *                                                address range
 *   sites-devN.tsv          scripts/sites.gp     top sites at the peak
 *
 * The address map. Boxes are collected by a sink of the analysis pass (the
 * model keeps no lifetimes). At most PLOT_MAP_MAX are drawn, the largest,
 * and the picture and the TSV say so. Only those are kept: each device of
 * the run has a heap of its largest `keep` ended boxes (the smallest on
 * top, replaced by a larger one), so memory is bounded by what is live
 * plus what is drawn, however long the run. The y axis is laid out per process
 * (address spaces of two processes are unrelated), each process's boxes in
 * address order: a cluster is a run of boxes whose ranges overlap or touch
 * (a box whose start equals the cluster's end joins it, and the cluster's
 * end grows as each box joins, so touching boxes sit end to end). Between
 * two clusters, an empty address range keeps its real height when it is
 * small and is squeezed to one fixed gap when larger; so boxes that are
 * alive at the same time never share a y range.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "views/format.h"
#include "views/plot.h"

static const double MIB = 1048576.0;

/* --- the address map: allocations with their lifetimes ------------------- */

struct box { uint64_t t0, t1, lo, hi, seq; int dev, proc, live; uint32_t stack; uint64_t stream; };

/* The largest ended boxes of one device of the run. */
struct heap {
	struct box *v;
	size_t n, cap;
	size_t all;                 /* boxes the device had, kept or not */
};

struct plot_map {
	struct box *live;           /* open addressing by seq */
	size_t cap, n;
	size_t keep;                /* boxes kept per device */
	struct heap *dev;           /* per device index of the run (gdev) */
	int ndev;
	const struct analysis *a;   /* the sink's: a record's device of the run */
};

static uint64_t hmix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static int map_grow(struct plot_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct box *n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->live[i].seq)
			continue;
		size_t j = hmix(m->live[i].seq) & (cap - 1);

		while (n[j].seq)
			j = (j + 1) & (cap - 1);
		n[j] = m->live[i];
	}
	free(m->live);
	m->live = n;
	m->cap = cap;
	return 0;
}

/* Is box x drawn before box y when not all can be: the larger first, the
   earlier of two as large. */
static int before(const struct box *x, const struct box *y)
{
	uint64_t sx = x->hi - x->lo, sy = y->hi - y->lo;

	return sx != sy ? sx > sy : x->seq < y->seq;
}

static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		struct box t;

		if (l < h->n && before(&h->v[w], &h->v[l]))
			w = l;
		if (r < h->n && before(&h->v[w], &h->v[r]))
			w = r;
		if (w == i)
			return;
		t = h->v[i];
		h->v[i] = h->v[w];
		h->v[w] = t;
		i = w;
	}
}

static void sift_up(struct heap *h, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct box t;

		if (!before(&h->v[p], &h->v[i]))
			return;
		t = h->v[i];
		h->v[i] = h->v[p];
		h->v[p] = t;
		i = p;
	}
}

/* An ended (or, at the end, still live) box: kept when it is among its
   device's largest keep. */
static int map_done(struct plot_map *m, const struct box *b)
{
	int pd, g;
	struct heap *h;

	if (!m->a || b->proc < 0 || b->proc >= m->a->nprocs || b->dev < 0 || b->dev >= AN_MAX_DEV ||
	    (pd = m->a->procs[b->proc].pdev[b->dev]) < 0 || (g = m->a->devs[pd].gdev) < 0)
		return 0;
	if (g >= m->ndev) {
		void *n = realloc(m->dev, (size_t)(g + 1) * sizeof(*m->dev));

		if (!n)
			return -1;
		m->dev = n;
		memset(m->dev + m->ndev, 0, (size_t)(g + 1 - m->ndev) * sizeof(*m->dev));
		m->ndev = g + 1;
	}
	h = &m->dev[g];
	h->all++;
	if (h->n == m->keep) {
		if (!h->n || !before(b, &h->v[0]))
			return 0;
		h->v[0] = *b;
		sift_down(h, 0);
		return 0;
	}
	if (h->n == h->cap) {
		size_t c = h->cap ? h->cap * 2 : 1024;
		void *n;

		if (c > m->keep)
			c = m->keep;
		if (!(n = realloc(h->v, c * sizeof(*h->v))))
			return -1;
		h->v = n;
		h->cap = c;
	}
	h->v[h->n++] = *b;
	sift_up(h, h->n - 1);
	return 0;
}

static int on_map(uint8_t kind)
{
	return kind == MT_KIND_DEVICE || kind == MT_KIND_MANAGED || kind == MT_KIND_ASYNC ||
	       kind == MT_KIND_VMM_MAP;
}

static int map_record(void *ctx, const struct analysis *a, const struct srec *r, uint64_t seq,
		      uint64_t alloc_seq, uint64_t bytes, int dev)
{
	struct plot_map *m = ctx;
	const struct mt_event *e = r->rec.p;

	m->a = a;
	(void)bytes;
	if (r->rec.type == MT_REC_ALLOC || r->rec.type == MT_REC_ALLOC_EX) {
		struct box b = { r->t, 0, e->addr, e->addr + e->bytes, seq, dev, r->proc, 0,
				 e->stack_id, 0 };
		size_t j;

		if (r->rec.type == MT_REC_ALLOC_EX && (e->h.a & MT_KIND_MASK) == MT_KIND_ASYNC)
			b.stream = ((const struct mt_event_ex *)r->rec.p)->x1;

		if (e->result || !on_map(e->h.a & MT_KIND_MASK) || dev < 0 || dev >= AN_MAX_DEV ||
		    !e->bytes)
			return 0;
		if ((m->n + 1) * 2 > m->cap && map_grow(m))
			return -1;
		for (j = hmix(seq) & (m->cap - 1); m->live[j].seq; j = (j + 1) & (m->cap - 1))
			;
		m->live[j] = b;
		m->n++;
		return 0;
	}
	if ((r->rec.type != MT_REC_FREE && r->rec.type != MT_REC_FREE_EX) || !alloc_seq || !m->cap)
		return 0;
	for (size_t j = hmix(alloc_seq) & (m->cap - 1); m->live[j].seq; j = (j + 1) & (m->cap - 1)) {
		if (m->live[j].seq != alloc_seq)
			continue;
		m->live[j].t1 = r->t;
		if (map_done(m, &m->live[j]))
			return -1;
		/* backward-shift delete */
		size_t i = j, k = j;

		for (;;) {
			k = (k + 1) & (m->cap - 1);
			if (!m->live[k].seq)
				break;
			size_t h = hmix(m->live[k].seq) & (m->cap - 1);

			if ((k > i && (h <= i || h > k)) || (k < i && h <= i && h > k)) {
				m->live[i] = m->live[k];
				i = k;
			}
		}
		m->live[i].seq = 0;
		m->n--;
		break;
	}
	return 0;
}

/* After the last record: what is still live ends with the run. */
static int map_end(void *ctx)
{
	struct plot_map *m = ctx;

	for (size_t i = 0; i < m->cap; i++) {
		if (!m->live[i].seq)
			continue;
		m->live[i].live = 1;
		if (map_done(m, &m->live[i]))
			return -1;
		m->live[i].seq = 0;
	}
	m->n = 0;
	return 0;
}

struct plot_map *plot_map_new(size_t keep)
{
	struct plot_map *m = calloc(1, sizeof(struct plot_map));

	if (m)
		m->keep = keep;
	return m;
}

void plot_map_free(struct plot_map *m)
{
	if (!m)
		return;
	free(m->live);
	for (int i = 0; i < m->ndev; i++)
		free(m->dev[i].v);
	free(m->dev);
	free(m);
}

struct an_sink plot_map_sink(struct plot_map *m)
{
	struct an_sink s = { .ctx = m, .record = map_record, .end = map_end };

	return s;
}

static int cmp_bytes_desc(const void *x, const void *y)
{
	const struct box *a = x, *b = y;
	uint64_t sa = a->hi - a->lo, sb = b->hi - b->lo;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_layout(const void *x, const void *y)
{
	const struct box *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* "2,000,000" */
static const char *grouped(char *buf, size_t len, uint64_t v)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
	return buf;
}

/* The gap that stands for a squeezed empty range: 1/50 of what is drawn. */
static uint64_t map_gap(const struct box *v, size_t n)
{
	uint64_t total = 0, cl_hi = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].proc != v[i - 1].proc || v[i].lo > cl_hi) {
			total += v[i].hi - v[i].lo;
			cl_hi = v[i].hi;
		} else if (v[i].hi > cl_hi) {
			total += v[i].hi - cl_hi;
			cl_hi = v[i].hi;
		}
	}
	return total / 50 + 1;
}

int plot_map_boxes(const struct analysis *a, const struct plot_map *m, int di, size_t max,
		   struct plot_box **out, size_t *nout, size_t *nall)
{
	const struct heap *h = di >= 0 && di < m->ndev ? &m->dev[di] : NULL;
	struct box *v = malloc(((h ? h->n : 0) + 1) * sizeof(*v));
	struct plot_box *o;
	size_t n = h ? h->n : 0;
	uint64_t gap, off = 0, base = 0, cl_hi = 0;

	if (!v)
		return -1;
	if (n)
		memcpy(v, h->v, n * sizeof(*v));
	*nall = h ? h->all : 0;
	if (n > max) {
		qsort(v, n, sizeof(*v), cmp_bytes_desc);
		n = max;
	}
	qsort(v, n, sizeof(*v), cmp_layout);
	if (!(o = malloc((n + 1) * sizeof(*o)))) {
		free(v);
		return -1;
	}
	gap = map_gap(v, n);
	for (size_t i = 0; i < n; i++) {
		if (i == 0) {
			base = v[i].lo;
			cl_hi = v[i].hi;
		} else if (v[i].proc != v[i - 1].proc || v[i].lo > cl_hi) {
			/* a new cluster: after the previous one, with the empty
			   range between them (another process: a gap) */
			uint64_t hole = v[i].proc != v[i - 1].proc ? gap : v[i].lo - cl_hi;

			off += cl_hi - base + (hole < gap ? hole : gap);
			base = v[i].lo;
			cl_hi = v[i].hi;
		} else if (v[i].hi > cl_hi) {
			cl_hi = v[i].hi;
		}
		o[i] = (struct plot_box){ v[i].t0, v[i].live ? a->duration : v[i].t1,
					  off + v[i].lo - base, off + v[i].hi - base, v[i].lo,
					  v[i].hi - v[i].lo, v[i].proc, v[i].dev, v[i].stack, v[i].live,
					  v[i].stream };
	}
	free(v);
	*out = o;
	*nout = n;
	return 0;
}

/* Writes the boxes of gdev di, laid out (see the top of the file); note
   gets what the picture must say about boxes left out ("" when none). */
static int write_map(const struct analysis *a, const struct plot_map *m, int di,
		     const char *path, char *note, size_t notelen, size_t *nboxes)
{
	struct plot_box *v;
	size_t n, nall;
	FILE *f;

	*note = 0;
	if (plot_map_boxes(a, m, di, PLOT_MAP_MAX, &v, &n, &nall))
		return -1;
	if (nall > n) {
		char s1[32], s2[32];

		snprintf(note, notelen, "largest %s of %s allocations shown",
			 grouped(s1, sizeof(s1), n), grouped(s2, sizeof(s2), nall));
	}
	*nboxes = n;
	if (!(f = fopen(path, "w"))) {
		free(v);
		return -1;
	}
	if (*note)
		fprintf(f, "# %s\n", note);
	fputs("# t_alloc_s\tt_free_s\ty_lo_MiB\ty_hi_MiB\tprocess\taddress\tlive_at_end\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.9f\t%.9f\t%.4f\t%.4f\t%d\t0x%" PRIx64 "\t%d\n", v[i].t0 / 1e9,
			v[i].t1 / 1e9, v[i].y_lo / MIB, v[i].y_hi / MIB, v[i].proc, v[i].addr,
			v[i].live);
	free(v);
	return fclose(f);
}

/* --- the timeline -------------------------------------------------------- */

/* The model's timeline of a device: one row per change kept. */
static int write_timeline(const struct an_dev *d, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("# time_s\treserved_MiB\tallocated_MiB\tcached_MiB\n", f);
	for (uint32_t i = 0; i < d->ntl; i++) {
		const struct an_tl_row *r = &d->tl[i];

		fprintf(f, "%.9f\t%.3f\t%.3f\t%.3f\n", r->t / 1e9, r->reserved / MIB,
			r->allocated / MIB, (r->reserved - r->allocated) / MIB);
	}
	return fclose(f);
}

/* The device's memory samples: each true at its time only. */
static int write_samples(const struct an_dev *d, const char *path)
{
	FILE *f;

	if (!d->nsamples) {
		unlink(path);
		return 0;
	}
	if (!(f = fopen(path, "w")))
		return -1;
	fputs("# time_s\tdevice_used_MiB\tdevice_total_MiB\n", f);
	for (uint32_t i = 0; i < d->nsamples; i++)
		fprintf(f, "%.9f\t%.3f\t%.3f\n", d->samples[i].t / 1e9, d->samples[i].used / MIB,
			d->samples[i].total / MIB);
	return fclose(f);
}

static int write_marks(const struct an_dev *d, const char *path)
{
	FILE *f = fopen(path, "w");
	char sz[32];

	if (!f)
		return -1;
	if (d->peak.reserved)
		fprintf(f, "%.9f\t%.3f\tpeak\tpeak %s\n", d->peak.time / 1e9,
			d->peak.reserved / MIB, rep_size(sz, sizeof(sz), d->peak.reserved));
	return fclose(f);
}

/* The failed allocations on gdev di; *nfail their number (no file: none). */
static int write_failures(const struct analysis *a, int di, const char *path, int *nfail)
{
	FILE *f = NULL;

	*nfail = 0;
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];
		int fpd = fl->dev >= 0 && fl->dev < AN_MAX_DEV ? a->procs[fl->proc].pdev[fl->dev] : -1;

		if (fpd < 0 || a->devs[fpd].gdev != di)
			continue;
		if (!(*nfail)++ && !(f = fopen(path, "w")))
			return -1;
		fprintf(f, "%.9f\t%.3f\tfailure\tfailed\n", fl->time / 1e9, fl->reserved / MIB);
	}
	if (f)
		return fclose(f);
	unlink(path);
	return 0;
}

/* --- titles and labels --------------------------------------------------- */

/* The program a person knows the process by: the executable's name, or for
   "python3 script.py" the script's. */
static void program(const struct analysis *a, int proc, char *buf, size_t len)
{
	int ai = 0;
	struct trace_bytes x = rep_command_arg(a, proc, &ai), y;
	size_t k;

	if (!x.p || !x.len) {
		snprintf(buf, len, "?");
		return;
	}
	for (k = x.len; k > 0 && x.p[k - 1] != '/'; k--)
		;
	y = rep_command_arg(a, proc, &ai);
	if (x.len - k >= 6 && !memcmp(x.p + k, "python", 6) && y.p && y.len && y.p[0] != '-') {
		x = y;
		for (k = x.len; k > 0 && x.p[k - 1] != '/'; k--)
			;
	}
	snprintf(buf, len, "%.*s", (int)(x.len - k > 60 ? 60 : x.len - k), x.p + k);
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '"')
			*c = '?';
}

void plot_dev_title(const struct report *r, int di, char *buf, size_t len)
{
	const struct analysis *a = r->a;
	const struct an_dev *d = &a->devs[di];
	char dn[256], prog[80];
	int n = 0, one = -1;

	rep_dev_name(r, d, dn, sizeof(dn));
	for (int p = 0; p < a->nprocs; p++) {
		int pd = d->dev >= 0 && d->dev < AN_MAX_DEV ? a->procs[p].pdev[d->dev] : -1;

		if (pd >= 0 && a->devs[pd].gdev == di && a->devs[pd].used) {
			n++;
			one = p;
		}
	}
	if (n != 1) {
		snprintf(buf, len, "%d processes, %s", n, dn);
		return;
	}
	program(a, one, prog, sizeof(prog));
	{
		const struct sproc *sp = stream_proc(a->s, one);

		if (sp->process && sp->process->rank >= 0)
			snprintf(buf, len, "%s (rank %d), %s", prog, (int)sp->process->rank, dn);
		else
			snprintf(buf, len, "%s (pid %" PRIu32 "), %s", prog, rep_pid(a, one), dn);
	}
}

#define PLOT_LABEL_MAX 100

/* A site's label: its name (rep_site_name, as every view), cut at the
   end past what a chart's axis holds. */
void plot_site_label(const struct rep_list *l, int i, char *buf, size_t len)
{
	const struct rep_entry *e = &l->v[i];

	if (!len)
		return;
	if (e->site)
		rep_site_name(buf, len, e->site, NULL);
	else
		rep_stack_name(buf, len, e->st, SITE_NAME_FRAMES, NULL);
	if (strlen(buf) > PLOT_LABEL_MAX && len > PLOT_LABEL_MAX)
		strcpy(buf + PLOT_LABEL_MAX - 3, "...");
}

/* --- running gnuplot ----------------------------------------------------- */

static int gnuplot(const struct plot_out *o, const char *script, const char *const *args,
		   char *err, size_t errlen)
{
	char sc[PATH_MAX + 64];
	const char *argv[12];
	int n = 0, st;
	pid_t pid;

	snprintf(sc, sizeof(sc), "%s/%s", o->scripts, script);
	argv[n++] = "gnuplot";
	argv[n++] = "-c";
	argv[n++] = sc;
	while (*args && n < 11)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execv(o->gnuplot, (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "gnuplot failed on '%s' drawing '%s'", script, argv[4]);
		return -1;
	}
	return 0;
}

int plot_gnuplot(const struct plot_out *o, const char *script, const char *const *args,
		 char *err, size_t errlen)
{
	return gnuplot(o, script, args, err, errlen);
}

/* --- one device ---------------------------------------------------------- */

#define PATHLEN (PATH_MAX + 128)

static int cannot_write(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
	return -1;
}

int plot_device(const struct report *r, const struct plot_map *m, int di,
		const struct plot_out *o, char *err, size_t errlen)
{
	const struct analysis *a = r->a;
	const struct an_dev *d = &a->devs[di];
	const struct rep_list *l = &r->dev_sites[di];
	size_t nboxes;
	char name[64], tsv[PATHLEN], used[PATHLEN], png[PATHLEN], marks[PATHLEN], fails[PATHLEN],
	     title[512], who[400], note[128];
	FILE *f;
	int nfail;

	if (a->nhosts > 1)
		snprintf(name, sizeof(name), "h%d-dev%d", d->host, d->dev);
	else
		snprintf(name, sizeof(name), "dev%d", d->dev);
	plot_dev_title(r, di, who, sizeof(who));

	/* timeline */
	snprintf(tsv, sizeof(tsv), "%s/timeline-%s.tsv", o->dir, name);
	snprintf(used, sizeof(used), "%s/timeline-%s.used.tsv", o->dir, name);
	snprintf(marks, sizeof(marks), "%s/timeline-%s.marks.tsv", o->dir, name);
	snprintf(fails, sizeof(fails), "%s/timeline-%s.failures.tsv", o->dir, name);
	if (write_timeline(d, tsv))
		return cannot_write(tsv, err, errlen);
	if (write_samples(d, used))
		return cannot_write(used, err, errlen);
	if (write_marks(d, marks))
		return cannot_write(marks, err, errlen);
	if (write_failures(a, di, fails, &nfail))
		return cannot_write(fails, err, errlen);
	snprintf(png, sizeof(png), "%s/timeline-%s.%s", o->dir, name, o->fmt);
	snprintf(title, sizeof(title), "%s: GPU memory over time", who);
	{
		const char *args[] = { tsv, png, d->peak.reserved ? marks : "", title,
				       nfail ? fails : "", d->nsamples ? used : NULL, NULL };

		if (gnuplot(o, "timeline.gp", args, err, errlen))
			return -1;
	}

	/* address map */
	if (m) {
		snprintf(tsv, sizeof(tsv), "%s/addrmap-%s.tsv", o->dir, name);
		if (write_map(a, m, di, tsv, note, sizeof(note), &nboxes))
			return cannot_write(tsv, err, errlen);
		snprintf(png, sizeof(png), "%s/addrmap-%s.%s", o->dir, name, o->fmt);
		snprintf(title, sizeof(title), "%s: allocations by address over time", who);
		{
			const char *args[] = { tsv, png, title, note, NULL };

			if (nboxes && gnuplot(o, "addrmap.gp", args, err, errlen))
				return -1;
		}
	}

	/* top sites */
	if (!l->n)
		return 0;
	snprintf(tsv, sizeof(tsv), "%s/sites-%s.tsv", o->dir, name);
	if (!(f = fopen(tsv, "w")))
		return cannot_write(tsv, err, errlen);
	for (int i = 0; i < l->n; i++) {
		char lb[256];

		plot_site_label(l, i, lb, sizeof(lb));
		fprintf(f, "%s\t%.3f\n", lb, l->v[i].bytes / MIB);
	}
	if (fclose(f))
		return cannot_write(tsv, err, errlen);
	snprintf(png, sizeof(png), "%s/sites-%s.%s", o->dir, name, o->fmt);
	snprintf(title, sizeof(title), "%s: top sites at the peak", who);
	{
		const char *args[] = { tsv, png, title, NULL };

		return gnuplot(o, "sites.gp", args, err, errlen);
	}
}
