/*
 * cmd-plot.c - memtrace plot [-o DIR] [--format png|svg] FILE...: writes
 * the data of three plots per device as TSV files and draws them with
 * gnuplot and the scripts in scripts/ (each also usable by hand):
 *
 *   timeline-devN.tsv (+ .marks.tsv)  scripts/timeline.gp  reserved,
 *       allocated and device used over time, the peak and failures marked
 *   addrmap-devN.tsv                  scripts/addrmap.gp   each allocation a
 *       box from its allocation to its free over its address range
 *   sites-devN.tsv                    scripts/sites.gp     top sites at the peak
 *
 * The scripts are found beside the executable: ../scripts (the build tree,
 * build/memtrace) or ../share/memtrace (installed, PREFIX/bin/memtrace).
 * The address map keeps at most MAP_MAX boxes (the largest) and squeezes
 * address ranges nobody used out of the y axis.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"

#define MAP_MAX 20000

static const char usage_text[] =
	"usage: memtrace plot [-o DIR] [--format png|svg] [--sysroot DIR] [--debug-dir DIR] FILE...\n"
	"\n"
	"Draws, per device, the memory timeline (reserved, allocated and device used,\n"
	"with the peak and failures marked), the address-space map (each allocation\n"
	"a box from its allocation to its free over its addresses) and the top sites\n"
	"at the peak, with gnuplot. The data is written beside each picture as TSV,\n"
	"and each script also runs by hand:\n"
	"  gnuplot -c scripts/timeline.gp DIR/timeline-dev0.tsv out.png\n"
	"\n"
	"options:\n"
	"  -o, --output DIR  where to write (default: FILE.plots beside the first trace)\n"
	"  --format FMT      png (default) or svg\n"
	"  --sysroot DIR, --debug-dir DIR   as for 'memtrace report'\n"
	"\n"
	"Options take their value as --opt=V or --opt V (-oDIR or -o DIR), anywhere\n"
	"before '--'.\n"
	"\n"
	"When stderr is a terminal and the work takes more than a second, one line\n"
	"there shows its progress (\"memtrace: loading 42%\"), cleared at the end.\n"
	"\n"
	"exit status: 0 success, 1 invalid trace, gnuplot missing or failing,\n"
	"2 usage error or missing file\n";

enum { OPT_FORMAT = 256, OPT_SYSROOT, OPT_DEBUG_DIR };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ NULL, 0, NULL, 0 },
};

/* --- the address map: allocations with their lifetimes ------------------- */

struct box { uint64_t t0, t1, lo, hi, seq; int dev, proc; };

struct amap {
	struct box *live;           /* open addressing by seq */
	size_t cap, n;
	struct box *done;
	size_t ndone, capdone;
	int oom;
};

static uint64_t hmix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static int amap_grow(struct amap *m)
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

static void amap_done(struct amap *m, const struct box *b)
{
	if (m->ndone == m->capdone) {
		size_t c = m->capdone ? m->capdone * 2 : 1024;
		void *n = realloc(m->done, c * sizeof(*m->done));

		if (!n) {
			m->oom = 1;
			return;
		}
		m->done = n;
		m->capdone = c;
	}
	m->done[m->ndone++] = *b;
}

static int on_map(uint8_t kind)
{
	return kind == MT_KIND_DEVICE || kind == MT_KIND_MANAGED || kind == MT_KIND_ASYNC ||
	       kind == MT_KIND_VMM_MAP;
}

static int amap_record(void *ctx, const struct srec *r, uint64_t seq, uint64_t alloc_seq,
		       uint64_t bytes, int dev)
{
	struct amap *m = ctx;
	const struct mt_event *e = r->rec.p;

	if (r->rec.type != MT_REC_ALLOC && r->rec.type != MT_REC_ALLOC_EX &&
	    r->rec.type != MT_REC_FREE && r->rec.type != MT_REC_FREE_EX)
		return 0;
	if (r->rec.type == MT_REC_ALLOC || r->rec.type == MT_REC_ALLOC_EX) {
		struct box b = { r->t, 0, e->addr, e->addr + e->bytes, seq, dev, r->proc };
		size_t j;

		if (e->result || !on_map(e->h.a & MT_KIND_MASK) || dev < 0 || !e->bytes)
			return 0;
		if ((m->n + 1) * 2 > m->cap && amap_grow(m))
			return -1;
		for (j = hmix(seq) & (m->cap - 1); m->live[j].seq; j = (j + 1) & (m->cap - 1))
			;
		m->live[j] = b;
		m->n++;
		return 0;
	}
	if (!alloc_seq || !m->cap)
		return 0;
	for (size_t j = hmix(alloc_seq) & (m->cap - 1); m->live[j].seq; j = (j + 1) & (m->cap - 1)) {
		if (m->live[j].seq != alloc_seq)
			continue;
		m->live[j].t1 = r->t;
		amap_done(m, &m->live[j]);
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
	(void)bytes;
	return 0;
}

static int cmp_bytes_desc(const void *x, const void *y)
{
	const struct box *a = x, *b = y;
	uint64_t sa = a->hi - a->lo, sb = b->hi - b->lo;

	return sa != sb ? (sa > sb ? -1 : 1) : 0;
}

static int cmp_lo(const void *x, const void *y)
{
	const struct box *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Writes the boxes of device dev, the address axis compacted. */
static int write_amap(struct amap *m, int dev, uint64_t end, const char *path)
{
	struct box *v = malloc((m->ndone + 1) * sizeof(*v));
	size_t n = 0;
	FILE *f;
	uint64_t gap, minw = end / 500;

	if (!v)
		return -1;
	for (size_t i = 0; i < m->ndone; i++)
		if (m->done[i].dev == dev)
			v[n++] = m->done[i];
	if (n > MAP_MAX) {
		qsort(v, n, sizeof(*v), cmp_bytes_desc);
		n = MAP_MAX;
	}
	qsort(v, n, sizeof(*v), cmp_lo);
	f = fopen(path, "w");
	if (!f) {
		free(v);
		return -1;
	}
	fputs("# t_alloc_s\tt_free_s\ty_lo_MiB\ty_hi_MiB\tprocess\n", f);
	/* clusters of overlapping ranges, laid out one after the other with a
	   small gap: the empty address space between them is squeezed out */
	gap = 0;
	{
		uint64_t base = 0, off = 0, cl_lo = 0, cl_hi = 0;

		for (size_t i = 0; i < n; i++) {
			if (i == 0 || v[i].lo > cl_hi) {
				if (i)
					off += (cl_hi - cl_lo) + gap;
				cl_lo = v[i].lo;
				cl_hi = v[i].hi;
				base = cl_lo;
				for (size_t k = i + 1; k < n && v[k].lo < cl_hi; k++)
					if (v[k].hi > cl_hi)
						cl_hi = v[k].hi;
				if (!gap)
					gap = (cl_hi - cl_lo) / 20 + 1;
			}
			uint64_t t1 = v[i].t1 ? v[i].t1 : end;

			if (t1 - v[i].t0 < minw)        /* visible, however short */
				t1 = v[i].t0 + minw;
			fprintf(f, "%.9f\t%.9f\t%.4f\t%.4f\t%d\n", v[i].t0 / 1e9, t1 / 1e9,
				(off + v[i].lo - base) / 1048576.0, (off + v[i].hi - base) / 1048576.0,
				v[i].proc);
		}
	}
	free(v);
	return fclose(f);
}

/* --- running gnuplot ----------------------------------------------------- */

static int find_gnuplot(char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, len, "%.*s/gnuplot", (int)n, path);
		if (n && access(buf, X_OK) == 0)
			return 0;
		path += n + (c ? 1 : 0);
	}
	return -1;
}

static int find_scripts(char *buf, size_t len)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	static const char *const rel[] = { "../scripts", "../share/memtrace" };

	if (n <= 0)
		return -1;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		char probe[PATH_MAX + 128];

		snprintf(buf, len, "%s/%s", exe, rel[i]);
		snprintf(probe, sizeof(probe), "%s/timeline.gp", buf);
		if (access(probe, R_OK) == 0)
			return 0;
	}
	return -1;
}

static int gnuplot(const char *gp, const char *dir, const char *script, const char *const *args,
		   char *err, size_t errlen)
{
	char sc[PATH_MAX + 64];
	const char *argv[12];
	int n = 0, st;
	pid_t pid;

	snprintf(sc, sizeof(sc), "%s/%s", dir, script);
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
		execv(gp, (char *const *)argv);
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

/* The model's timeline of a device: one row per change kept. */
static int write_timeline(const struct an_dev *d, const char *path)
{
	const double mib = 1048576.0;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("# time_s\treserved_MiB\tallocated_MiB\tcached_MiB\n", f);
	for (uint32_t i = 0; i < d->ntl; i++) {
		const struct an_tl_row *r = &d->tl[i];

		fprintf(f, "%.9f\t%.3f\t%.3f\t%.3f\n", r->t / 1e9, r->reserved / mib,
			r->allocated / mib, (r->reserved - r->allocated) / mib);
	}
	return fclose(f);
}

/* The device's memory samples: points, never a line between them. */
static int write_samples(const struct an_dev *d, const char *path)
{
	FILE *f;

	if (!d->nsamples) {
		unlink(path);
		return 0;
	}
	if (!(f = fopen(path, "w")))
		return -1;
	fputs("# time_s\tdevice_used_MiB\n", f);
	for (uint32_t i = 0; i < d->nsamples; i++)
		fprintf(f, "%.9f\t%.3f\n", d->samples[i].t / 1e9, d->samples[i].used / 1048576.0);
	return fclose(f);
}

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

static void label(FILE *f, const struct sym_stack *st)
{
	const struct sym_frame *fr = rep_main_frame(st);
	const char *file;
	char buf[160];

	if (!fr) {
		fputs("(no stack)", f);
		return;
	}
	file = fr->file ? strrchr(fr->file, '/') : NULL;
	file = file ? file + 1 : fr->file;
	if (fr->function)
		snprintf(buf, sizeof(buf), "%s (%s:%d)", fr->function, file ? file : "?", fr->line);
	else
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, strrchr(fr->module, '/') ?
			 strrchr(fr->module, '/') + 1 : fr->module, fr->offset);
	for (char *c = buf; *c; c++)
		if (*c == '\t' || *c == '\n' || *c == '"' || (unsigned char)*c < 0x20)
			*c = ' ';
	if (strlen(buf) > 56) {        /* keep the end: the method and the line */
		fputs("...", f);
		fputs(buf + strlen(buf) - 53, f);
	} else {
		fputs(buf, f);
	}
}

int cmd_plot(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline p;
	struct amap m;
	struct an_sink sink = { .ctx = &m, .record = amap_record };
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	const char *outdir = NULL, *fmt = "png";
	char dir[PATH_MAX], gp[PATH_MAX], scripts[PATH_MAX + 32], err[1024];
	int nfiles = 0, status = 1, c;

	if (!files) {
		cli_error("out of memory");
		return 1;
	}
	memset(&o, 0, sizeof(o));
	memset(&m, 0, sizeof(m));
	optind = 0;
	while ((c = cli_getopt("plot", argc, argv, ":ho:", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			free(files);
			return 0;
		case 'o':
			outdir = optarg;
			break;
		case OPT_FORMAT:
			fmt = optarg;
			break;
		case OPT_SYSROOT:
			o.sym.sysroot = optarg;
			break;
		case OPT_DEBUG_DIR:
			o.sym.debug_dir = optarg;
			break;
		default:
			free(files);
			return EXIT_USAGE;
		}
	}
	while (optind < argc)
		files[nfiles++] = argv[optind++];
	if (strcmp(fmt, "png") && strcmp(fmt, "svg")) {
		free(files);
		return cli_usage_error("plot", "unknown format '%s' (png or svg)", fmt);
	}
	if (!nfiles) {
		free(files);
		return cli_usage_error("plot", "no trace FILE given");
	}
	if (find_gnuplot(gp, sizeof(gp))) {
		cli_error("gnuplot not found in PATH: install it (e.g. 'apt-get install gnuplot-nox') "
			  "to draw plots");
		free(files);
		return 1;
	}
	if (find_scripts(scripts, sizeof(scripts))) {
		cli_error("cannot find the gnuplot scripts (timeline.gp) in ../scripts or "
			  "../share/memtrace beside the memtrace executable");
		free(files);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", outdir ? outdir : files[0]);
	if (!outdir)
		strncat(dir, ".plots", sizeof(dir) - strlen(dir) - 1);
	o.no_db = 1;
	o.out_dir = dir;
	o.sink = &sink;
	if (pipeline_run(&p, files, nfiles, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	status = 1;
	for (size_t i = 0; i < m.cap; i++)          /* still live at the end */
		if (m.live[i].seq)
			amap_done(&m, &m.live[i]);
	for (int g = 0; g < p.r.ngdevs; g++) {
		int di = p.r.gdevs[g];
		const struct an_dev *d = &p.a->devs[di];
		const struct rep_list *l = &p.r.dev_sites[di];
		char name[64], tsv[PATH_MAX + 128], used[PATH_MAX + 128], png[PATH_MAX + 128],
		     marks[PATH_MAX + 128], fails[PATH_MAX + 128], title[400], dn[256];
		FILE *f;
		int nfail;

		if (p.a->nhosts > 1)
			snprintf(name, sizeof(name), "h%d-dev%d", d->host, d->dev);
		else
			snprintf(name, sizeof(name), "dev%d", d->dev);
		rep_dev_name(&p.r, d, dn, sizeof(dn));
		/* timeline */
		snprintf(tsv, sizeof(tsv), "%s/timeline-%s.tsv", dir, name);
		snprintf(used, sizeof(used), "%s/timeline-%s.used.tsv", dir, name);
		if (write_timeline(d, tsv) || write_samples(d, used)) {
			cli_error("cannot write '%s': %s", tsv, strerror(errno));
			goto out;
		}
		snprintf(marks, sizeof(marks), "%s/timeline-%s.marks.tsv", dir, name);
		f = fopen(marks, "w");
		if (!f) {
			cli_error("cannot write '%s': %s", marks, strerror(errno));
			goto out;
		}
		if (d->peak.reserved) {
			char sz[32];

			fprintf(f, "%.9f\t%.3f\tpeak\tpeak %s\n", d->peak.time / 1e9,
				d->peak.reserved / 1048576.0, rep_size(sz, sizeof(sz), d->peak.reserved));
		}
		fclose(f);
		nfail = 0;
		snprintf(fails, sizeof(fails), "%s/timeline-%s.failures.tsv", dir, name);
		for (uint32_t i = 0; i < p.a->nfailures; i++) {
			const struct an_failure *fl = &p.a->failures[i];
			int fpd = fl->dev >= 0 && fl->dev < AN_MAX_DEV ? p.a->procs[fl->proc].pdev[fl->dev] : -1;

			if (fpd < 0 || p.a->devs[fpd].gdev != di)
				continue;
			if (!nfail++ && !(f = fopen(fails, "w"))) {
				cli_error("cannot write '%s': %s", fails, strerror(errno));
				goto out;
			}
			fprintf(f, "%.9f\t%.3f\tfailure\tfailed\n", fl->time / 1e9,
				fl->reserved / 1048576.0);
		}
		if (nfail)
			fclose(f);
		else
			unlink(fails);
		snprintf(png, sizeof(png), "%s/timeline-%s.%s", dir, name, fmt);
		snprintf(title, sizeof(title), "%s: GPU memory over time", dn);
		{
			const char *args[] = { tsv, png, d->peak.reserved ? marks : "", title,
					       nfail ? fails : "", d->nsamples ? used : NULL, NULL };

			if (gnuplot(gp, scripts, "timeline.gp", args, err, sizeof(err)))
				goto gperr;
		}
		/* address map */
		snprintf(tsv, sizeof(tsv), "%s/addrmap-%s.tsv", dir, name);
		if (write_amap(&m, d->dev, p.a->duration, tsv)) {
			cli_error("cannot write '%s': %s", tsv, strerror(errno));
			goto out;
		}
		snprintf(png, sizeof(png), "%s/addrmap-%s.%s", dir, name, fmt);
		snprintf(title, sizeof(title), "%s: allocations by address over time", dn);
		{
			const char *args[] = { tsv, png, title, NULL };

			if (m.ndone && gnuplot(gp, scripts, "addrmap.gp", args, err, sizeof(err)))
				goto gperr;
		}
		/* top sites */
		if (!l->n)
			continue;
		snprintf(tsv, sizeof(tsv), "%s/sites-%s.tsv", dir, name);
		f = fopen(tsv, "w");
		if (!f) {
			cli_error("cannot write '%s': %s", tsv, strerror(errno));
			goto out;
		}
		for (int i = 0; i < l->n; i++) {
			label(f, l->v[i].st);
			fprintf(f, "\t%.3f\n", l->v[i].bytes / 1048576.0);
		}
		fclose(f);
		snprintf(png, sizeof(png), "%s/sites-%s.%s", dir, name, fmt);
		snprintf(title, sizeof(title), "%s: top sites at the peak", dn);
		{
			const char *args[] = { tsv, png, title, NULL };

			if (gnuplot(gp, scripts, "sites.gp", args, err, sizeof(err)))
				goto gperr;
		}
	}
	printf("wrote plots for %d device%s to %s/\n", p.r.ngdevs, p.r.ngdevs == 1 ? "" : "s", dir);
	status = 0;
	goto out;
gperr:
	cli_error("%s", err);
out:
	pipeline_free(&p);
	free(m.live);
	free(m.done);
	free(files);
	return status;
}
