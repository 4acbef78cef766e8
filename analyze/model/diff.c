/*
 * diff.c - two runs compared: processes matched by rank (else by command
 * and order), devices by host and index, sites by their resolved frames
 * (function and file, the line as a tie-breaker). docs/diff.md says how.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "trace/trace-read.h"

static const char *const fig_names[DF_NFIGS] = {
	[DF_PEAK_RESERVED] = "peak_reserved_bytes",
	[DF_PEAK_ALLOCATED] = "peak_allocated_bytes",
	[DF_CACHED] = "cached_bytes_at_peak",
	[DF_USED] = "device_used_bytes_at_peak",
	[DF_UNTRACED] = "untraced_bytes_at_peak",
	[DF_LEFT_AT_EXIT] = "left_at_exit_bytes",
	[DF_FAILURES] = "failures",
	[DF_OOM_RETRIES] = "oom_retries",
	[DF_FW_PEAK_ALLOCATED] = "tensor_peak_allocated_bytes",
	[DF_FW_PEAK_REQUESTED] = "peak_requested_bytes",
	[DF_FW_PEAK_RESERVED] = "framework_peak_reserved_bytes",
	[DF_FW_CACHED] = "cached_bytes_at_peak_allocated",
	[DF_FW_LEFT_AT_EXIT] = "tensor_left_at_exit_bytes",
	[DF_FW_OOMS] = "ooms",
	[DF_STEP_PEAK] = "step_peak_reserved_bytes",
	[DF_GROWTH_PER_STEP] = "growth_per_step_bytes",
};

static const char *const fig_words[DF_NFIGS] = {
	[DF_PEAK_RESERVED] = "peak",
	[DF_PEAK_ALLOCATED] = "allocated_peak",
	[DF_CACHED] = "cached",
	[DF_USED] = "used",
	[DF_UNTRACED] = "untraced",
	[DF_LEFT_AT_EXIT] = "live_at_exit",
	[DF_FAILURES] = "failures",
	[DF_OOM_RETRIES] = "oom_retries",
	[DF_FW_PEAK_ALLOCATED] = "tensor_peak_allocated",
	[DF_FW_PEAK_REQUESTED] = "requested_peak",
	[DF_FW_PEAK_RESERVED] = "framework_reserved_peak",
	[DF_FW_CACHED] = "framework_cached",
	[DF_FW_LEFT_AT_EXIT] = "tensor_live_at_exit",
	[DF_FW_OOMS] = "ooms",
	[DF_STEP_PEAK] = "step_peak",
	[DF_GROWTH_PER_STEP] = "growth_per_step",
};

const char *diff_figure_name(enum diff_figure f)
{
	return f < DF_NFIGS ? fig_names[f] : NULL;
}

const char *diff_figure_word(enum diff_figure f)
{
	return f < DF_NFIGS ? fig_words[f] : NULL;
}

int diff_figure_parse(const char *word)
{
	for (int i = 0; i < DF_NFIGS; i++)
		if (!strcmp(word, fig_names[i]) || !strcmp(word, fig_words[i]))
			return i;
	return -1;
}

/* --- processes --------------------------------------------------------- */

static int proc_rank(const struct analysis *a, int i)
{
	const struct sproc *p = stream_proc(a->s, i);

	return p->process ? p->process->rank : -1;
}

static int all_ranked(const struct analysis *a)
{
	for (int i = 0; i < a->nprocs; i++)
		if (proc_rank(a, i) < 0)
			return 0;
	return a->nprocs > 0;
}

/* The program a process ran: the last part of its argv[0]. */
static struct trace_bytes program(const struct analysis *a, int i)
{
	int ai = 0;
	struct trace_bytes x = rep_command_arg(a, i, &ai);

	for (size_t k = x.len; x.p && k > 0; k--)
		if (x.p[k - 1] == '/') {
			x.p += k;
			x.len -= k;
			break;
		}
	return x;
}

/* 1 when processes i of a and j of b ran the same program (the
   arguments may differ: they are often the change compared). */
static int same_command(const struct analysis *a, int i, const struct analysis *b, int j)
{
	struct trace_bytes x = program(a, i), y = program(b, j);

	if (!x.p || !y.p)
		return !x.p && !y.p;
	return x.len == y.len && !memcmp(x.p, y.p, x.len);
}

static void match_procs(struct diff *d)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;

	d->by_rank = all_ranked(b) && all_ranked(a);
	if (!d->by_rank && b->nprocs == 1 && a->nprocs == 1) {
		/* one process each: they correspond, whatever they ran */
		d->pair_b[0] = d->pair_a[0] = 0;
		d->procs_correspond = 1;
		return;
	}
	for (int i = 0; i < b->nprocs; i++) {
		for (int j = 0; j < a->nprocs; j++) {
			if (d->pair_a[j] >= 0)
				continue;
			if (d->by_rank ? proc_rank(b, i) == proc_rank(a, j) : same_command(b, i, a, j)) {
				d->pair_b[i] = j;
				d->pair_a[j] = i;
				break;
			}
		}
	}
	d->procs_correspond = b->nprocs == a->nprocs;
	for (int i = 0; i < b->nprocs; i++)
		if (d->pair_b[i] < 0)
			d->procs_correspond = 0;
}

/* --- devices ----------------------------------------------------------- */

static int same_host(const struct analysis *b, int db, const struct analysis *a, int da)
{
	const char *hb, *ha;
	size_t lb, la;

	if (b->nhosts <= 1 && a->nhosts <= 1)
		return 1;
	an_hostname(b, b->devs[db].host_proc, &hb, &lb);
	an_hostname(a, a->devs[da].host_proc, &ha, &la);
	return lb == la && !memcmp(hb, ha, lb);
}

/* Failures and OOM retries on device index di of a (a gdev or a pdev). */
static int on_dev(const struct analysis *a, int proc, int dev, int di)
{
	int pd;

	if (dev < 0 || dev >= AN_MAX_DEV || (pd = a->procs[proc].pdev[dev]) < 0)
		return 0;
	return pd == di || a->devs[pd].gdev == di;
}

static void figures(struct diff_fig *f, const struct analysis *a, int di, int after)
{
	const struct an_dev *d = &a->devs[di];
	int64_t v[DF_NFIGS] = { 0 };
	int known[DF_NFIGS];

	for (int i = 0; i < DF_FW_FIRST; i++)
		known[i] = 1;
	for (int i = DF_FW_FIRST; i < DF_NFIGS; i++)
		known[i] = 0;   /* the framework's, the steps': not a device's */
	v[DF_PEAK_RESERVED] = (int64_t)d->peak.reserved;
	v[DF_PEAK_ALLOCATED] = (int64_t)d->peak.allocated;
	v[DF_CACHED] = (int64_t)(d->peak.reserved - d->peak.allocated);
	v[DF_USED] = (int64_t)d->peak.used;
	v[DF_UNTRACED] = d->peak.untraced;
	known[DF_USED] = known[DF_UNTRACED] = d->peak.has_sample;
	v[DF_LEFT_AT_EXIT] = (int64_t)d->left_at_exit;
	for (uint32_t i = 0; i < a->nfailures; i++)
		v[DF_FAILURES] += on_dev(a, a->failures[i].proc, a->failures[i].dev, di);
	for (uint32_t i = 0; i < a->noomsigs; i++)
		v[DF_OOM_RETRIES] += on_dev(a, a->oomsigs[i].proc, a->oomsigs[i].dev, di);
	for (int i = 0; i < DF_NFIGS; i++) {
		if (after) {
			f[i].after = v[i];
			f[i].has_after = known[i];
		} else {
			f[i].before = v[i];
			f[i].has_before = known[i];
		}
	}
}

static struct diff_dev *add_dev(struct diff *d, int dev, int db, int da, int pb, int pa)
{
	struct diff_dev *r = &d->devs[d->ndevs++];

	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->db = db;
	r->da = da;
	r->pb = pb;
	r->pa = pa;
	if (db >= 0)
		figures(r->f, d->rb->a, db, 0);
	if (da >= 0)
		figures(r->f, d->ra->a, da, 1);
	return r;
}

static void match_devs(struct diff *d)
{
	const struct report *rb = d->rb, *ra = d->ra;
	const struct analysis *b = rb->a, *a = ra->a;
	char *used = calloc((size_t)ra->ngdevs + 1, 1);

	for (int i = 0; i < rb->ngdevs; i++) {
		int gb = rb->gdevs[i], ga = -1;

		for (int j = 0; j < ra->ngdevs && ga < 0; j++)
			if (!used[j] && a->devs[ra->gdevs[j]].dev == b->devs[gb].dev &&
			    same_host(b, gb, a, ra->gdevs[j])) {
				used[j] = 1;
				ga = ra->gdevs[j];
			}
		add_dev(d, b->devs[gb].dev, gb, ga, -1, -1);
	}
	for (int j = 0; j < ra->ngdevs; j++)
		if (!used[j])
			add_dev(d, a->devs[ra->gdevs[j]].dev, -1, ra->gdevs[j], -1, -1);
	free(used);
	d->ngdev_rows = d->ndevs;
	/* per process, when a run has several and they correspond */
	if (!d->procs_correspond || (b->nprocs < 2 && a->nprocs < 2))
		return;
	for (int p = 0; p < b->nprocs; p++) {
		int q = d->pair_b[p];

		for (int dev = 0; dev < AN_MAX_DEV; dev++) {
			int db = b->procs[p].pdev[dev], da = a->procs[q].pdev[dev];

			if (db >= 0 || da >= 0)
				add_dev(d, dev, db, da, p, q);
		}
	}
}

/* --- sites ------------------------------------------------------------- */

/* The file without "./" and "dir/.." parts, so that two spellings of one
   path compare equal. */
static void clean_path(const char *in, char *out, size_t len)
{
	size_t n = 0, starts[256];
	int depth = 0;

	out[0] = 0;
	if (*in == '/' && len > 1)
		out[n++] = '/';
	while (*in) {
		const char *e = strchr(in, '/');
		size_t l = e ? (size_t)(e - in) : strlen(in);

		if ((l == 1 && in[0] == '.') || l == 0) {
			/* nothing */
		} else if (l == 2 && in[0] == '.' && in[1] == '.' && depth > 0) {
			n = starts[--depth];
		} else if (n + l + 2 < len) {
			if (depth < 256)
				starts[depth++] = n;
			if (n && out[n - 1] != '/')
				out[n++] = '/';
			memcpy(out + n, in, l);
			n += l;
		}
		out[n] = 0;
		in += l + (e != NULL);
	}
}

/* The frames of a site as the diff matches them; lines 0 leaves them out. */
static char *site_key(const struct site *s, int lines)
{
	size_t cap = 256, n = 0;
	char *k = malloc(cap), path[1024];

	if (!k)
		return NULL;
	n = (size_t)snprintf(k, cap, "%d/%d|", s->dev, s->caching);
	for (int i = 0; s->st && i < s->st->nframes; i++) {
		const struct sym_frame *f = &s->st->frames[i];
		const char *m = strrchr(f->module ? f->module : "", '/');
		size_t need;

		path[0] = 0;
		if (f->file)
			clean_path(f->file, path, sizeof(path));
		need = strlen(f->function ? f->function : "") + strlen(path) +
		       strlen(m ? m : "") + 32;
		if (n + need >= cap) {
			char *k2 = realloc(k, cap = 2 * (n + need));

			if (!k2) {
				free(k);
				return NULL;
			}
			k = k2;
		}
		if (f->function || f->file)
			n += (size_t)snprintf(k + n, cap - n, "%s@%s:%d|", f->function ? f->function : "",
					      f->file ? path : "", lines ? f->line : 0);
		else    /* no symbol: the module alone, never an address */
			n += (size_t)snprintf(k + n, cap - n, "?%s|",
					      m ? m + 1 : (f->module ? f->module : ""));
	}
	return k;
}

static uint64_t *peak_bytes(const struct report *r)
{
	uint64_t *v = calloc((size_t)r->sites.n + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (int i = 0; i < r->ngdevs; i++) {
		const struct rep_list *l = &r->dev_sites[r->gdevs[i]];

		for (int k = 0; k < l->total; k++)
			v[l->v[k].site->id - 1] += l->v[k].bytes;
	}
	return v;
}

static int64_t change(uint64_t b, uint64_t a)
{
	return (int64_t)a - (int64_t)b;
}

static const struct diff_site *rank_sites;
static int rank_exit;

static int cmp_rank(const void *x, const void *y)
{
	const struct diff_site *p = &rank_sites[*(const int *)x], *q = &rank_sites[*(const int *)y];
	int64_t cp = rank_exit ? change(p->exit_b, p->exit_a) : change(p->peak_b, p->peak_a);
	int64_t cq = rank_exit ? change(q->exit_b, q->exit_a) : change(q->peak_b, q->peak_a);
	uint64_t ap = (uint64_t)(cp < 0 ? -cp : cp), aq = (uint64_t)(cq < 0 ? -cq : cq);

	if (ap != aq)
		return ap > aq ? -1 : 1;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return *(const int *)x - *(const int *)y;
}

/* Counts the sites v[0..n) by match, lists those whose peak or exit bytes
   changed, and ranks both lists by the size of the change. */
static void rank_changes(const struct diff_site *v, int n, int nmatch[4], int *at_peak,
			 int *npeak, int *at_exit, int *nexit)
{
	for (int i = 0; i < n; i++) {
		nmatch[v[i].match]++;
		if (v[i].peak_a != v[i].peak_b)
			at_peak[(*npeak)++] = i;
		if (v[i].exit_a != v[i].exit_b)
			at_exit[(*nexit)++] = i;
	}
	rank_sites = v;
	rank_exit = 0;
	qsort(at_peak, (size_t)*npeak, sizeof(int), cmp_rank);
	rank_exit = 1;
	qsort(at_exit, (size_t)*nexit, sizeof(int), cmp_rank);
}

static int match_sites(struct diff *d)
{
	const struct sites *sb = &d->rb->sites, *sa = &d->ra->sites;
	uint64_t *pb = peak_bytes(d->rb), *pa = peak_bytes(d->ra);
	char **kb[2], **ka[2];
	int *of_a = calloc((size_t)sa->n + 1, sizeof(int)), rc = -1;

	kb[0] = calloc((size_t)sb->n + 1, sizeof(char *));
	kb[1] = calloc((size_t)sb->n + 1, sizeof(char *));
	ka[0] = calloc((size_t)sa->n + 1, sizeof(char *));
	ka[1] = calloc((size_t)sa->n + 1, sizeof(char *));
	d->sites = calloc((size_t)sb->n + sa->n + 1, sizeof(*d->sites));
	d->at_peak = calloc((size_t)sb->n + sa->n + 1, sizeof(int));
	d->at_exit = calloc((size_t)sb->n + sa->n + 1, sizeof(int));
	if (!pb || !pa || !of_a || !kb[0] || !kb[1] || !ka[0] || !ka[1] || !d->sites ||
	    !d->at_peak || !d->at_exit)
		goto out;
	for (int l = 0; l < 2; l++) {
		for (uint32_t i = 0; i < sb->n; i++)
			if (!(kb[l][i] = site_key(&sb->v[i], !l)))
				goto out;
		for (uint32_t i = 0; i < sa->n; i++)
			if (!(ka[l][i] = site_key(&sa->v[i], !l)))
				goto out;
	}
	for (uint32_t i = 0; i < sb->n; i++) {
		struct diff_site *s = &d->sites[d->nsites++];

		s->dev = sb->v[i].dev;
		s->b = &sb->v[i];
		s->match = DM_BEFORE_ONLY;
		s->peak_b = pb[i];
		s->exit_b = sb->v[i].exit_bytes;
	}
	/* exact frames first, then function and file alone: fuzzy */
	for (int l = 0; l < 2; l++) {
		for (uint32_t j = 0; j < sa->n; j++) {
			if (of_a[j])
				continue;
			for (int i = 0; i < d->nsites; i++) {
				struct diff_site *s = &d->sites[i];

				if (s->a || strcmp(kb[l][s->b->id - 1], ka[l][j]))
					continue;
				s->a = &sa->v[j];
				s->match = l ? DM_FUZZY : DM_EXACT;
				of_a[j] = 1;
				break;
			}
		}
	}
	for (uint32_t j = 0; j < sa->n; j++) {
		struct diff_site *s;

		if (!of_a[j]) {
			s = &d->sites[d->nsites++];
			s->dev = sa->v[j].dev;
			s->a = &sa->v[j];
			s->match = DM_AFTER_ONLY;
		}
	}
	for (int i = 0; i < d->nsites; i++) {
		struct diff_site *s = &d->sites[i];

		if (s->a) {
			s->peak_a = pa[s->a->id - 1];
			s->exit_a = s->a->exit_bytes;
		}
	}
	rank_changes(d->sites, d->nsites, d->nmatch, d->at_peak, &d->npeak, d->at_exit, &d->nexit);
	rc = 0;
out:
	for (int l = 0; l < 2; l++) {
		for (uint32_t i = 0; kb[l] && i < sb->n; i++)
			free(kb[l][i]);
		for (uint32_t i = 0; ka[l] && i < sa->n; i++)
			free(ka[l][i]);
		free(kb[l]);
		free(ka[l]);
	}
	free(pb);
	free(pa);
	free(of_a);
	return rc;
}

/* --- the framework: PyTorch's allocator (model/framework.h) ------------ */

/* The figures of framework device fi of a, as the report gives them: the
   peaks of allocated, requested and reserved, cached at the peak of
   allocated, the tensor leak candidates' bytes left at exit (a process's
   device: its blocks never freed, at its end) and the OOMs. */
static void fw_figures(struct diff_fig *f, const struct analysis *a, int fi, int after)
{
	const struct fw_model *m = a->fw;
	const struct fw_dev *d = &m->devs[fi];
	int64_t v[DF_NFIGS] = { 0 };

	v[DF_FW_PEAK_ALLOCATED] = (int64_t)d->peak_alloc.st.allocated;
	v[DF_FW_PEAK_REQUESTED] = (int64_t)d->peak_req.st.requested;
	v[DF_FW_PEAK_RESERVED] = (int64_t)d->peak_res.st.reserved;
	v[DF_FW_CACHED] = (int64_t)d->peak_alloc.st.cached;
	if (d->proc >= 0) {
		v[DF_FW_LEFT_AT_EXIT] = (int64_t)d->end.allocated;
	} else {
		for (uint32_t i = 0; i < m->nleaks; i++)
			if (m->sites[m->leaks[i]].dev == d->dev)
				v[DF_FW_LEFT_AT_EXIT] += (int64_t)m->sites[m->leaks[i]].exit_bytes;
	}
	for (uint32_t i = 0; i < m->nooms; i++)
		v[DF_FW_OOMS] += m->ooms[i].dev == d->dev && (d->proc < 0 || m->ooms[i].proc == d->proc);
	for (int i = DF_FW_FIRST; i < DF_STEP_FIRST; i++) {
		if (after) {
			f[i].after = v[i];
			f[i].has_after = 1;
		} else {
			f[i].before = v[i];
			f[i].has_before = 1;
		}
	}
}

static struct diff_dev *add_fwdev(struct diff *d, int dev, int fb, int fa, int pb, int pa)
{
	struct diff_dev *r = &d->fwdevs[d->nfwdevs++];

	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->db = fb;
	r->da = fa;
	r->pb = pb;
	r->pa = pa;
	if (fb >= 0)
		fw_figures(r->f, d->rb->a, fb, 0);
	if (fa >= 0)
		fw_figures(r->f, d->ra->a, fa, 1);
	return r;
}

/* The host name of a framework device's host index. */
static void fw_host(const struct analysis *a, const struct fw_dev *fd, const char **h, size_t *l)
{
	*h = "";
	*l = 0;
	for (int i = 0; i < a->ndevs; i++)
		if (a->devs[i].host == fd->host) {
			an_hostname(a, a->devs[i].host_proc, h, l);
			return;
		}
}

static int fw_same(const struct analysis *b, int fb, const struct analysis *a, int fa)
{
	const struct fw_dev *x = &b->fw->devs[fb], *y = &a->fw->devs[fa];
	const char *hb, *ha;
	size_t lb, la;

	if (x->dev != y->dev)
		return 0;
	if (b->nhosts <= 1 && a->nhosts <= 1)
		return 1;
	fw_host(b, x, &hb, &lb);
	fw_host(a, y, &ha, &la);
	return lb == la && !memcmp(hb, ha, lb);
}

/* The framework devices of process p before and q after (-1, -1: the
   run's), matched by device (and host). */
static int fw_match(struct diff *d, int p, int q)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;
	int nb = b->fw ? b->fw->ndevs : 0, na = a->fw ? a->fw->ndevs : 0;
	char *used = calloc((size_t)na + 1, 1);

	if (!used)
		return -1;
	for (int i = 0; i < nb; i++) {
		int fa = -1;

		if (b->fw->devs[i].proc != p)
			continue;
		for (int j = 0; j < na && fa < 0; j++)
			if (!used[j] && a->fw->devs[j].proc == q && fw_same(b, i, a, j)) {
				used[j] = 1;
				fa = j;
			}
		add_fwdev(d, b->fw->devs[i].dev, i, fa, p, q);
	}
	for (int j = 0; j < na; j++)
		if (!used[j] && a->fw->devs[j].proc == q)
			add_fwdev(d, a->fw->devs[j].dev, -1, j, p, q);
	free(used);
	return 0;
}

static int match_fwdevs(struct diff *d)
{
	const struct analysis *b = d->rb->a, *a = d->ra->a;
	int n = (b->fw ? b->fw->ndevs : 0) + (a->fw ? a->fw->ndevs : 0);

	if (!(d->fwdevs = calloc((size_t)n + 1, sizeof(*d->fwdevs))))
		return -1;
	if (fw_match(d, -1, -1))
		return -1;
	d->nfw_gdev_rows = d->nfwdevs;
	if (!d->procs_correspond || (b->nprocs < 2 && a->nprocs < 2))
		return 0;
	for (int p = 0; p < b->nprocs; p++)
		if (fw_match(d, p, d->pair_b[p]))
			return -1;
	return 0;
}

/* The Python frames of a tensor site as the diff matches them: the
   device, then each frame's file (cleaned), line (0 when lines is 0) and
   function, innermost first. */
static char *tsite_key(const struct analysis *a, const struct fw_site *s, int lines)
{
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;
	char *k = NULL, path[1024], file[1024];
	size_t len = 0;
	FILE *f = open_memstream(&k, &len);

	if (!f)
		return NULL;
	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(a->s, s->proc)->t, s->stack, fr, 64);
	fprintf(f, "%d|", s->dev);
	for (uint32_t i = 0; i < nf && i < 64; i++) {
		snprintf(file, sizeof(file), "%.*s", (int)fr[i].file_len, fr[i].file);
		clean_path(file, path, sizeof(path));
		fprintf(f, "%s:%" PRIu32 " %.*s|", path, lines ? fr[i].line : 0,
			(int)fr[i].function_len, fr[i].function);
	}
	if (fclose(f)) {
		free(k);
		return NULL;
	}
	return k;
}

/* Per tensor site of a: the bytes it held at the peak of allocated of its
   device (the run's framework devices). */
static uint64_t *tpeak_bytes(const struct analysis *a)
{
	const struct fw_model *m = a->fw;
	uint64_t *v = calloc((m ? m->nsites : 0) + 1, sizeof(*v));

	if (!v || !m)
		return v;
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_moment *mo = &m->devs[i].peak_alloc;

		if (m->devs[i].proc >= 0)
			continue;
		for (uint32_t k = 0; k < mo->nheld; k++)
			v[mo->held[k].site] += mo->held[k].bytes;
	}
	return v;
}

static int match_tsites(struct diff *d)
{
	const struct analysis *rb = d->rb->a, *ra = d->ra->a;
	uint32_t nb = rb->fw ? rb->fw->nsites : 0, na = ra->fw ? ra->fw->nsites : 0;
	uint64_t *pb = tpeak_bytes(rb), *pa = tpeak_bytes(ra);
	char **kb[2] = { NULL, NULL }, **ka[2] = { NULL, NULL };
	int *of_a = calloc((size_t)na + 1, sizeof(int)), rc = -1;

	for (int l = 0; l < 2; l++) {
		kb[l] = calloc((size_t)nb + 1, sizeof(char *));
		ka[l] = calloc((size_t)na + 1, sizeof(char *));
	}
	d->tsites = calloc((size_t)nb + na + 1, sizeof(*d->tsites));
	d->t_at_peak = calloc((size_t)nb + na + 1, sizeof(int));
	d->t_at_exit = calloc((size_t)nb + na + 1, sizeof(int));
	if (!pb || !pa || !of_a || !kb[0] || !kb[1] || !ka[0] || !ka[1] || !d->tsites ||
	    !d->t_at_peak || !d->t_at_exit)
		goto out;
	for (int l = 0; l < 2; l++) {
		for (uint32_t i = 0; i < nb; i++)
			if (!(kb[l][i] = tsite_key(rb, &rb->fw->sites[i], !l)))
				goto out;
		for (uint32_t i = 0; i < na; i++)
			if (!(ka[l][i] = tsite_key(ra, &ra->fw->sites[i], !l)))
				goto out;
	}
	for (uint32_t i = 0; i < nb; i++) {
		struct diff_site *s = &d->tsites[d->ntsites++];

		s->tb = &rb->fw->sites[i];
		s->dev = s->tb->dev;
		s->match = DM_BEFORE_ONLY;
		s->peak_b = pb[i];
		s->exit_b = s->tb->exit_bytes;
	}
	/* exact frames first, then files and functions alone: fuzzy */
	for (int l = 0; l < 2; l++)
		for (uint32_t j = 0; j < na; j++) {
			if (of_a[j])
				continue;
			for (int i = 0; i < d->ntsites; i++) {
				struct diff_site *s = &d->tsites[i];

				if (s->ta || strcmp(kb[l][s->tb->id - 1], ka[l][j]))
					continue;
				s->ta = &ra->fw->sites[j];
				s->match = l ? DM_FUZZY : DM_EXACT;
				of_a[j] = 1;
				break;
			}
		}
	for (uint32_t j = 0; j < na; j++)
		if (!of_a[j]) {
			struct diff_site *s = &d->tsites[d->ntsites++];

			s->ta = &ra->fw->sites[j];
			s->dev = s->ta->dev;
			s->match = DM_AFTER_ONLY;
		}
	for (int i = 0; i < d->ntsites; i++) {
		struct diff_site *s = &d->tsites[i];

		if (s->ta) {
			s->peak_a = pa[s->ta->id - 1];
			s->exit_a = s->ta->exit_bytes;
		}
	}
	rank_changes(d->tsites, d->ntsites, d->tnmatch, d->t_at_peak, &d->ntpeak, d->t_at_exit,
		     &d->ntexit);
	rc = 0;
out:
	for (int l = 0; l < 2; l++) {
		for (uint32_t i = 0; kb[l] && i < nb; i++)
			free(kb[l][i]);
		for (uint32_t i = 0; ka[l] && i < na; i++)
			free(ka[l][i]);
		free(kb[l]);
		free(ka[l]);
	}
	free(pb);
	free(pa);
	free(of_a);
	return rc;
}

/* --- steps, aligned by their numbers (model/ranges.h) ------------------ */

static int cmp_step(const void *x, const void *y)
{
	const struct diff_step *a = x, *b = y;

	return (a->no > b->no) - (a->no < b->no);
}

/* The steps of run r as rows of one side (after: the after side's), by
   number, each the highest peak of that number; *n rows; the step
   range's name into *name (NULL: no steps). */
static struct diff_step *run_steps(const struct report *r, int after, int *n, const char **name,
				   uint32_t *count, struct diff_fig *growth)
{
	const struct rg_model *m = r->a->ranges;
	struct diff_step *v;
	int k = 0;

	*n = 0;
	*name = NULL;
	*count = 0;
	if (!m || m->step_group < 0)
		return NULL;
	*name = m->groups[m->step_group].name;
	*count = m->nsteps;
	if (after) {
		growth->after = m->growth;
		growth->has_after = m->has_growth;
	} else {
		growth->before = m->growth;
		growth->has_before = m->has_growth;
	}
	if (!(v = calloc(m->nsteps, sizeof(*v))))
		return NULL;
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const struct rg_inst *in = &m->inst[m->steps[i]];

		v[i].no = in->step_no;
		if (after) {
			v[i].peak.after = (int64_t)in->res_peak;
			v[i].peak.has_after = 1;
		} else {
			v[i].peak.before = (int64_t)in->res_peak;
			v[i].peak.has_before = 1;
		}
	}
	qsort(v, m->nsteps, sizeof(*v), cmp_step);
	/* one row per number: the highest peak of it */
	for (uint32_t i = 0; i < m->nsteps; i++) {
		if (k && v[k - 1].no == v[i].no) {
			if (v[i].peak.after > v[k - 1].peak.after)
				v[k - 1].peak.after = v[i].peak.after;
			if (v[i].peak.before > v[k - 1].peak.before)
				v[k - 1].peak.before = v[i].peak.before;
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
	return v;
}

static int match_steps(struct diff *d)
{
	int nb, na, i = 0, j = 0;
	struct diff_step *b = run_steps(d->rb, 0, &nb, &d->steps_b, &d->nsteps_b, &d->growth);
	struct diff_step *a = run_steps(d->ra, 1, &na, &d->steps_a, &d->nsteps_a, &d->growth);

	if ((d->steps_b && !b) || (d->steps_a && !a) ||
	    !(d->steps = calloc((size_t)(nb + na) + 1, sizeof(*d->steps)))) {
		free(b);
		free(a);
		return -1;
	}
	while (i < nb || j < na) {
		struct diff_step *s = &d->steps[d->nsteps++];

		if (j >= na || (i < nb && b[i].no < a[j].no)) {
			*s = b[i++];
		} else if (i >= nb || a[j].no < b[i].no) {
			*s = a[j++];
		} else {
			*s = b[i++];
			s->peak.after = a[j].peak.after;
			s->peak.has_after = 1;
			j++;
			d->nsteps_both++;
		}
	}
	free(b);
	free(a);
	return 0;
}

int diff_build(struct diff *d, const struct report *before, const struct report *after,
	       char *err, size_t errlen)
{
	const struct analysis *b = before->a, *a = after->a;
	int nrows = before->ngdevs + after->ngdevs + 2 * AN_MAX_DEV * (b->nprocs + 1);

	memset(d, 0, sizeof(*d));
	d->rb = before;
	d->ra = after;
	d->pair_b = malloc(((size_t)b->nprocs + 1) * sizeof(int));
	d->pair_a = malloc(((size_t)a->nprocs + 1) * sizeof(int));
	d->devs = calloc((size_t)nrows, sizeof(*d->devs));
	if (!d->pair_b || !d->pair_a || !d->devs)
		goto oom;
	for (int i = 0; i < b->nprocs; i++)
		d->pair_b[i] = -1;
	for (int j = 0; j < a->nprocs; j++)
		d->pair_a[j] = -1;
	match_procs(d);
	match_devs(d);
	if (match_sites(d))
		goto oom;
	d->has_fw = b->fw || a->fw;
	if (d->has_fw && (match_fwdevs(d) || match_tsites(d)))
		goto oom;
	if (match_steps(d))
		goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	diff_free(d);
	return -1;
}

void diff_free(struct diff *d)
{
	free(d->pair_b);
	free(d->pair_a);
	free(d->devs);
	free(d->sites);
	free(d->at_peak);
	free(d->at_exit);
	free(d->fwdevs);
	free(d->tsites);
	free(d->t_at_peak);
	free(d->t_at_exit);
	free(d->steps);
	memset(d, 0, sizeof(*d));
}

const char *diff_missing(const struct diff *d, enum diff_figure f)
{
	if (f < DF_STEP_FIRST)
		return NULL;
	if (!d->steps_b || !d->steps_a)
		return !d->steps_b && !d->steps_a ? "neither run has steps" : !d->steps_b ?
		       "the run before has no steps" : "the run after has no steps";
	if (f == DF_STEP_PEAK && !d->nsteps_both)
		return "no step number is in both runs";
	if (f == DF_GROWTH_PER_STEP && (!d->growth.has_before || !d->growth.has_after))
		return "a run has one step: a growth per step needs two";
	return NULL;
}

/* x grew by more than limit (a percent of before when pct; when before is
   0 or less, any growth). */
static int grew_over(const struct diff_fig *x, double limit, int pct)
{
	double grew = (double)(x->after - x->before);

	return pct ? (x->before > 0 ? grew * 100.0 / (double)x->before > limit : grew > 0) :
	       grew > limit;
}

int diff_exceeds(const struct diff *d, enum diff_figure f, double limit, int pct)
{
	const struct diff_dev *rows = f >= DF_FW_FIRST ? d->fwdevs : d->devs;
	int n = f >= DF_FW_FIRST ? d->nfw_gdev_rows : d->ngdev_rows;

	if (f == DF_GROWTH_PER_STEP)
		return !diff_missing(d, f) && grew_over(&d->growth, limit, pct);
	if (f == DF_STEP_PEAK) {
		for (int i = 0; i < d->nsteps; i++)
			if (d->steps[i].peak.has_before && d->steps[i].peak.has_after &&
			    grew_over(&d->steps[i].peak, limit, pct))
				return 1;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const struct diff_fig *x = &rows[i].f[f];

		if (rows[i].db < 0 || rows[i].da < 0 || !x->has_before || !x->has_after)
			continue;
		if (grew_over(x, limit, pct))
			return 1;
	}
	return 0;
}
