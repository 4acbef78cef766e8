/*
 * report-nvtxmem.c - the text report's section on pools announced by NVTX
 * (model/nvtxmem.h, docs/units.md "Pools announced by NVTX"): per pool its
 * heaps, and its regions (buffers) against its free space (cache) in holes,
 * at its peak, at the failed allocations of its process and at the end;
 * the sites that registered its regions; the program's misuse.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/nvtxmem.h"
#include "views/format.h"
#include "views/report-nvtxmem.h"

#define NM_SITES 5                  /* sites listed per pool */

static const char *SZ(uint64_t v)
{
	static char buf[8][32];
	static int i;

	i = (i + 1) & 7;
	return rep_size(buf[i], sizeof(buf[i]), v);
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

const struct an_failure *report_nvtxmem_failure(const struct analysis *a, int proc, uint64_t t)
{
	for (uint32_t i = 0; i < a->nfailures; i++)
		if (a->failures[i].proc == proc && a->failures[i].time == t)
			return &a->failures[i];
	return NULL;
}

/* "48.0 MiB in 12 regions, 52.0 MiB free in 9 holes, largest 20.0 MiB" */
static void state(FILE *f, const struct nm_state *s, int heaps)
{
	if (heaps)
		fprintf(f, "%s in %" PRIu32 " heap%s: ", SZ(s->size), s->heaps, plural(s->heaps));
	fprintf(f, "%s in %" PRIu32 " region%s, ", SZ(s->live), s->regions, plural(s->regions));
	if (s->size == s->live)
		fputs("no free space", f);
	else if (!s->counted)
		fprintf(f, "%s free (holes not counted: the budget of the walks was spent)",
			SZ(s->size - s->live));
	else
		fprintf(f, "%s free in %" PRIu32 " hole%s, largest %s", SZ(s->size - s->live), s->holes,
			plural(s->holes), SZ(s->largest));
}

/* Sites by their highest live bytes, then in the order they came. */
static int cmp_site(const void *x, const void *y, void *ctx)
{
	const struct nm_pool *q = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint64_t a = q->sites[i].max, b = q->sites[j].max;

	return a > b ? -1 : a < b ? 1 : (i > j) - (i < j);
}

/* The frames a site's name shows: SITE_NAME_FRAMES, more while another
   site of the pool reads the same (as sites.h names the run's sites). */
static int name_frames(const struct report *r, const struct nm_pool *q, uint32_t i)
{
	const struct sym_stack *st = sym_stack(r->sy, r->a->s, q->proc, q->sites[i].stack);
	char b[4096], c[4096];
	int nf = SITE_NAME_FRAMES;

	for (uint32_t j = 0; j < q->nsites && nf < SITE_NAME_MAX; j++) {
		if (j == i)
			continue;
		const struct sym_stack *o = sym_stack(r->sy, r->a->s, q->proc, q->sites[j].stack);
		while (nf < SITE_NAME_MAX && !strcmp(rep_stack_name(b, sizeof b, st, nf, NULL),
						     rep_stack_name(c, sizeof c, o, nf, NULL)))
			nf++;
	}
	return nf;
}

static void pool(FILE *f, const struct report *r, const struct nm_pool *q)
{
	const struct analysis *a = r->a;
	const struct nm_state *head = q->nfail ? &q->fail[0] : &q->peak;
	int several = q->heaps_registered > 1;
	char tm[32], b[4096];

	fputs("  ", f);
	if (a->nprocs > 1)
		fprintf(f, "pid %" PRIu32 ": ", rep_pid(a, q->proc));
	fputs("pool '", f);
	rep_text_str(f, nvmem_pool_name(q), strlen(nvmem_pool_name(q)));
	putc('\'', f);
	if (q->name && q->domain && strcmp(q->name, q->domain)) {
		fputs(" of domain '", f);
		rep_text_str(f, q->domain, strlen(q->domain));
		putc('\'', f);
	}
	if (several)
		fprintf(f, " (NVTX, %" PRIu32 " heaps, the first at 0x%" PRIx64 "): ", q->heaps_registered,
			q->addr);
	else
		fprintf(f, " (NVTX heap, %s at 0x%" PRIx64 "): ", SZ(head->size), q->addr);
	state(f, head, several);
	fprintf(f, "%s\n", q->nfail ? ", at its process's first failed allocation" : ", at its peak");
	if (q->nfail) {
		fprintf(f, "    at its peak (%s): ", rep_time(tm, sizeof(tm), q->peak.t));
		state(f, &q->peak, several);
		putc('\n', f);
	}
	for (uint32_t i = 0; i < q->nfail && i < NM_FAILURES; i++) {
		const struct an_failure *fl = report_nvtxmem_failure(a, q->proc, q->fail[i].t);

		fprintf(f, "    at the failure at %s", rep_time(tm, sizeof(tm), q->fail[i].t));
		if (fl)
			fprintf(f, " (%s of %s)", trace_api_name(fl->api), SZ(fl->requested));
		fputs(": ", f);
		state(f, &q->fail[i], several);
		if (fl && q->fail[i].counted && q->fail[i].largest < fl->requested &&
		    q->fail[i].size - q->fail[i].live >= fl->requested)
			fputs(": enough free, but in pieces", f);
		putc('\n', f);
	}
	if (q->nfail > NM_FAILURES)
		fprintf(f, "    ... and %" PRIu32 " more failures\n", q->nfail - NM_FAILURES);
	if (q->now.regions)
		fprintf(f, "    at the end: %s in %" PRIu32 " region%s still registered\n", SZ(q->now.live),
			q->now.regions, plural(q->now.regions));
	else
		fprintf(f, "    at the end: no region registered, %" PRIu32 " heap%s left\n",
			q->heaps_open, plural(q->heaps_open));
	if (q->resets)
		fprintf(f, "    reset %" PRIu64 " time%s\n", q->resets, plural(q->resets));
	fprintf(f, "    %" PRIu64 " region%s registered, by site (highest live):\n",
		q->regions_registered, plural(q->regions_registered));
	uint32_t *order = malloc((q->nsites ? q->nsites : 1) * sizeof *order);
	uint32_t n = order ? q->nsites : 0;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, cmp_site, (void *)q);
	if (n > NM_SITES)
		n = NM_SITES;
	for (uint32_t i = 0; i < n; i++) {
		const struct nm_site *s = &q->sites[order[i]];
		const struct sym_stack *st = sym_stack(r->sy, a->s, q->proc, s->stack);

		fprintf(f, "      %10s  %5" PRIu64 " region%s  ", SZ(s->max), s->registered,
			s->registered == 1 ? " " : "s");
		rep_stack_name(b, sizeof(b), st, name_frames(r, q, order[i]), NULL);
		rep_text_str(f, b, strlen(b));
		putc('\n', f);
	}
	free(order);
	if (q->nsites > NM_SITES)
		fprintf(f, "      ... %" PRIu32 " more sites\n", q->nsites - NM_SITES);
}

void report_nvtxmem_text(const struct report *r, FILE *f)
{
	static const char *const words[NM_NMISUSE] = {
		[NM_OUTSIDE_HEAP] = "a region not inside its heap",
		[NM_UNKNOWN_HEAP] = "a heap handle never registered (or unregistered)",
		[NM_UNKNOWN_REGION] = "an unregister or resize of no registered region",
		[NM_OVERLAP] = "a region over one still registered",
	};
	const struct nm_model *m = r->a->nvmem;
	char tm[32];

	if (!m)
		return;
	fprintf(f, "\npools announced by NVTX (nvToolsExtMem.h): %" PRIu32 " pool%s; their regions "
		"are buffers, the rest of their heaps free space (the pool's cache)\n", m->npools,
		plural(m->npools));
	for (uint32_t i = 0; i < m->npools; i++)
		pool(f, r, &m->pools[i]);
	for (int k = 0; k < NM_NMISUSE; k++)
		if (m->misuse[k]) {
			fprintf(f, "  misuse: %" PRIu64 " time%s %s, left out (the first at %s", m->misuse[k],
				plural(m->misuse[k]), words[k], rep_time(tm, sizeof(tm), m->first[k].t));
			if (r->a->nprocs > 1)
				fprintf(f, " in pid %" PRIu32, rep_pid(r->a, m->first[k].proc));
			fprintf(f, ": 0x%" PRIx64, m->first[k].addr);
			if (m->first[k].size)
				fprintf(f, ", %s", SZ(m->first[k].size));
			fputs(")\n", f);
		}
	if (m->process_wide)
		fprintf(f, "  note: %" PRIu64 " region%s of the process-wide heap (no pool): left out\n",
			m->process_wide, plural(m->process_wide));
	if (m->other_type)
		fprintf(f, "  note: %" PRIu64 " heap%s or region%s not of virtual addresses: left out\n",
			m->other_type, plural(m->other_type), plural(m->other_type));
	if (m->unknown_ops)
		fprintf(f, "  note: %" PRIu64 " record%s of an operation this memtrace does not know: "
			"skipped\n", m->unknown_ops, plural(m->unknown_ops));
}
