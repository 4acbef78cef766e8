/*
 * report-ranges.c - the text report's section on the program's own units
 * of time (model/ranges.h, docs/units.md): where each peak happened, per
 * range the highest instance, the steps and their growth, per test its
 * peak and leak, and the program's misuse of ranges.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "model/ranges.h"
#include "views/format.h"
#include "views/report-ranges.h"

#define RG_TABLE 20                 /* ranges listed */
#define RG_TESTS 50                 /* tests listed */

static const char *SZ(uint64_t v)
{
	static char buf[8][32];
	static int i;

	i = (i + 1) & 7;
	return rep_size(buf[i], sizeof(buf[i]), v);
}

static const char *SSZ(int64_t v)
{
	static char buf[4][40];
	static int i;
	char tmp[32];

	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", v < 0 ? "-" : "",
		 rep_size(tmp, sizeof(tmp), (uint64_t)(v < 0 ? -v : v)));
	return buf[i];
}

static void qname(FILE *f, const char *s)
{
	putc('\'', f);
	rep_text_str(f, s, strlen(s));
	putc('\'', f);
}

/* "step 3, phase forward, module GPT.layers.3" (what is known of at),
   each part after sep, then ", "; the number of parts. */
static int at_words(FILE *f, const struct rg_model *m, const struct rg_at *at, const char *sep)
{
	int n = 0;

	if (at->step >= 0)
		fprintf(f, "%sstep %" PRIu32, n++ ? ", " : sep, m->inst[at->step].step_no);
	if (at->phase >= 0) {
		fprintf(f, "%sphase ", n++ ? ", " : sep);
		rep_text_str(f, m->names[at->phase].name, strlen(m->names[at->phase].name));
	}
	if (at->module >= 0) {
		fprintf(f, "%smodule ", n++ ? ", " : sep);
		rep_text_str(f, m->names[at->module].name, strlen(m->names[at->module].name));
	}
	return n;
}

/* "in range 'forward' (step 3, phase forward, module GPT.layers.3)" */
static void where(FILE *f, const struct rg_model *m, int group, int nm, const struct rg_at *at)
{
	char buf[512];

	if (group >= 0) {
		fputs("in range ", f);
		qname(f, rg_group_name(buf, sizeof buf, &m->groups[group]));
		if (nm >= 0 && strcmp(m->names[nm].name, m->groups[group].name)) {
			fputs(" (", f);
			qname(f, m->names[nm].name);
			putc(')', f);
		}
	} else {
		fputs("outside every range", f);
	}
	if (at_words(f, m, at, " ("))
		putc(')', f);
}

/* ": parameters 10.0 MiB, ..., temporaries 4.0 MiB; cache 8.0 MiB"; the
   three named categories only when the run has categories notes. */
static void split_words(FILE *f, const struct rg_model *m, const struct cat_split *s)
{
	if (!s->has)
		return;
	if (m->cats.notes) {
		for (int c = 0; c < CAT_N; c++)
			fprintf(f, "%s%s %s", c ? ", " : ": ", cat_name(c), SZ(s->bytes[c]));
	} else {
		fprintf(f, ": activations %s, other tensors %s (no categories note)",
			SZ(s->bytes[CAT_ACTIVATIONS]), SZ(s->allocated - s->bytes[CAT_ACTIVATIONS]));
	}
	fprintf(f, "; cache %s", SZ(s->reserved > s->allocated ? s->reserved - s->allocated : 0));
}

/* "in step 2, phase forward, module X", else the range as where() says */
static void where_fw(FILE *f, const struct rg_model *m, int group, int nm, const struct rg_at *at)
{
	if (!at_words(f, m, at, "in "))
		where(f, m, group, nm, at);
}

static int cmp_module(const void *x, const void *y, void *ctx)
{
	const struct rg_model *m = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint64_t pa = m->names[i].fw_peak, pb = m->names[j].fw_peak;

	return pa > pb ? -1 : pa < pb ? 1 : (i > j) - (i < j);
}

/* The framework's side: each process's peak of allocated, each OOM, the
   modules' peaks. */
static void fw_lines(const struct report *r, FILE *f)
{
	const struct analysis *a = r->a;
	const struct rg_model *m = a->ranges;
	char tm[32];

	for (int i = 0; m->peaks && i < m->nprocs; i++) {
		const struct rg_peak *pk = &m->peaks[i];

		if (!pk->has_fw)
			continue;
		if (a->nprocs > 1)
			fprintf(f, "  pid %" PRIu32 ":", rep_pid(a, i));
		fprintf(f, "  peak %s allocated ", SZ(pk->fw));
		where_fw(f, m, pk->fw_group, pk->fw_nm, &pk->fw_at);
		split_words(f, m, &pk->fw_split);
		fprintf(f, " at %s\n", rep_time(tm, sizeof tm, pk->fw_t));
	}
	for (uint32_t i = 0; i < m->nooms; i++) {
		const struct fw_oom *o = &a->fw->ooms[i];

		fprintf(f, "  out of memory (pid %" PRIu32 ", device %d) asking %s ", rep_pid(a, o->proc),
			o->dev, SZ(o->requested));
		if (!at_words(f, m, &o->at, "in "))
			fputs("outside every step, phase and module", f);
		split_words(f, m, &m->ooms[i].split);
		fprintf(f, " at %s\n", rep_time(tm, sizeof tm, o->st.t));
	}
	uint32_t nmod = 0, mods[m->nnames ? m->nnames : 1];
	for (uint32_t i = 0; i < m->nnames; i++)
		if (m->names[i].kind == RG_MODULE && m->names[i].has_peak)
			mods[nmod++] = i;
	if (!nmod)
		return;
	qsort_r(mods, nmod, sizeof mods[0], cmp_module, (void *)m);
	fprintf(f, "  modules (domain torch.module): %" PRIu32 ", by their highest allocated while "
		"open; held by its tensors: those allocated inside it then\n", nmod);
	for (uint32_t k = 0; k < nmod && k < RG_TABLE; k++) {
		const struct rg_name *e = &m->names[mods[k]];

		fputs("    ", f);
		rep_text_str(f, e->name, strlen(e->name));
		fprintf(f, "%*s %10s", strlen(e->name) < 30 ? (int)(30 - strlen(e->name)) : 0, "",
			SZ(e->fw_peak));
		if (e->peak_step >= 0)
			fprintf(f, "  step %" PRIu32, m->inst[e->peak_step].step_no);
		fprintf(f, "  held by its tensors %s", SZ(e->split.own));
		split_words(f, m, &e->split);
		putc('\n', f);
	}
	if (nmod > RG_TABLE)
		fprintf(f, "    ... and %" PRIu32 " more modules (memtrace report --json lists all)\n",
			nmod - RG_TABLE);
}

static int cmp_peak(const void *x, const void *y, void *ctx)
{
	const struct rg_model *m = ctx;
	const struct rg_group *a = &m->groups[*(const uint32_t *)x], *b = &m->groups[*(const uint32_t *)y];
	uint64_t pa = m->inst[a->peak_inst].res_peak, pb = m->inst[b->peak_inst].res_peak;

	return pa > pb ? -1 : pa < pb ? 1 : (*(const uint32_t *)x > *(const uint32_t *)y) -
					       (*(const uint32_t *)x < *(const uint32_t *)y);
}

void report_ranges_text(const struct report *r, FILE *f)
{
	const struct analysis *a = r->a;
	const struct rg_model *m = a->ranges;
	char tm[32], buf[512];

	if (!m)
		return;
	uint32_t ntests = 0;
	for (uint32_t i = 0; i < m->ninst; i++)
		ntests += m->inst[i].origin == MT_ORIGIN_PYTEST;
	fprintf(f, "\nranges and steps (NVTX, memtrace's markers): %" PRIu64 " range instance%s "
		"of %" PRIu32 " range%s, %" PRIu64 " mark%s\n", m->instances, m->instances == 1 ? "" : "s",
		m->ngroups, m->ngroups == 1 ? "" : "s", m->marks, m->marks == 1 ? "" : "s");
	for (int i = 0; m->peaks && i < m->nprocs; i++) {
		const struct rg_peak *pk = &m->peaks[i];

		if (!pk->reserved)
			continue;
		if (a->nprocs > 1)
			fprintf(f, "  pid %" PRIu32 ":", rep_pid(a, i));
		fprintf(f, "  peak %s reserved ", SZ(pk->reserved));
		where(f, m, pk->group, pk->nm, &pk->at);
		fprintf(f, " at %s\n", rep_time(tm, sizeof tm, pk->t));
	}
	if (m->has_fw)
		fw_lines(r, f);
	if (m->ngroups) {
		uint32_t order[RG_TABLE], n = 0, all[m->ngroups];

		for (uint32_t g = 0; g < m->ngroups; g++)
			all[g] = g;
		qsort_r(all, m->ngroups, sizeof all[0], cmp_peak, (void *)m);
		for (uint32_t g = 0; g < m->ngroups && n < RG_TABLE; g++)
			order[n++] = all[g];
		fprintf(f, "  %-32s %9s %12s %12s  %s\n", "range", "instances", "peak", "held at start",
			m->has_fw ? "framework allocated peak, step of the peak" : "step of the peak");
		for (uint32_t k = 0; k < n; k++) {
			const struct rg_group *g = &m->groups[order[k]];
			const struct rg_inst *in = &m->inst[g->peak_inst];

			fputs("  ", f);
			rg_group_name(buf, sizeof buf, g);
			rep_text_str(f, buf, strlen(buf) > 32 ? 32 : strlen(buf));
			fprintf(f, "%*s %9" PRIu32 " %12s %12s  ", strlen(buf) < 32 ? (int)(32 - strlen(buf)) : 0,
				"", g->count, SZ(in->res_peak), SZ(in->res0));
			if (m->has_fw && g->fw_peak_inst >= 0)
				fprintf(f, "%s, ", SZ(m->inst[g->fw_peak_inst].fw_peak));
			if (in->step >= 0)
				fprintf(f, "step %" PRIu32, m->inst[in->step].step_no);
			else
				putc('-', f);
			if (g->open)
				fprintf(f, " (%" PRIu32 " left open)", g->open);
			putc('\n', f);
		}
		if (m->ngroups > n)
			fprintf(f, "  ... and %" PRIu32 " more ranges (memtrace report --json lists all)\n",
				m->ngroups - n);
	}
	if (m->step_group >= 0) {
		const struct rg_group *g = &m->groups[m->step_group];

		fprintf(f, "  steps: %" PRIu32 " instance%s of ", m->nsteps, m->nsteps == 1 ? "" : "s");
		qname(f, rg_group_name(buf, sizeof buf, g));
		putc('\n', f);
		for (uint32_t k = 0; k < m->nsteps && k < 10; k++) {
			const struct rg_inst *in = &m->inst[m->steps[k]];
			fprintf(f, "    step %-6" PRIu32 " peak %10s  at its end %10s", in->step_no,
				SZ(in->res_peak), SZ(in->res1));
			if (m->has_fw)
				fprintf(f, "  framework allocated peak %s, at its end %s", SZ(in->fw_peak),
					SZ(in->fw1));
			if (m->cats.notes && in->split.has) {
				fputs("\n      at its allocated peak", f);
				split_words(f, m, &in->split);
			}
			putc('\n', f);
		}
		if (m->nsteps > 10)
			fprintf(f, "    ... and %" PRIu32 " more steps\n", m->nsteps - 10);
		if (m->has_growth) {
			fprintf(f, "  growth: reserved at a step's end grows %s a step", SSZ(m->growth));
			if (m->has_fw)
				fprintf(f, ", framework allocated %s a step", SSZ(m->fw_growth));
			fprintf(f, "; the first step's peak is %s against the others' median\n",
				SSZ(m->first_vs_steady));
			if (m->growth_site >= 0 && m->growth_site_bytes > 0) {
				fprintf(f, "    grows %s a step from ", SZ((uint64_t)m->growth_site_bytes));
				rep_site_name(buf, sizeof buf, site_of(&r->sites, (uint32_t)m->growth_site), NULL);
				rep_text_str(f, buf, strlen(buf));
				fprintf(f, " (site %" PRIu32 "), steps %" PRIu32 "-%" PRIu32 "\n",
					site_of(&r->sites, (uint32_t)m->growth_site)->id, m->growth_from,
					m->growth_to);
			}
		}
	}
	if (ntests) {
		uint32_t shown = 0;

		fprintf(f, "  tests: %" PRIu32 "\n  %-48s %12s %12s\n", ntests, "test", "peak", "leaked");
		for (uint32_t i = 0; i < m->ninst && shown < RG_TESTS; i++) {
			const struct rg_inst *in = &m->inst[i];
			uint64_t held = m->has_fw ? in->fw0 : in->res0, end = m->has_fw ? in->fw1 : in->res1;

			if (in->origin != MT_ORIGIN_PYTEST)
				continue;
			shown++;
			fputs("  ", f);
			rep_text_str(f, in->name, strlen(in->name));
			fprintf(f, "%*s %12s %12s\n", strlen(in->name) < 48 ? (int)(48 - strlen(in->name)) : 0,
				"", SZ(m->has_fw ? in->fw_peak : in->res_peak), SZ(end > held ? end - held : 0));
		}
	}
	if (m->pops_unmatched)
		fprintf(f, "  said: %" PRIu64 " pop%s with no range open on its thread and domain "
			"(first on thread %" PRIu32 "): left out\n", m->pops_unmatched,
			m->pops_unmatched == 1 ? "" : "s", m->pop_tid);
	if (m->ends_unmatched)
		fprintf(f, "  said: %" PRIu64 " range end%s with no start of that id: left out\n",
			m->ends_unmatched, m->ends_unmatched == 1 ? "" : "s");
	if (m->left_open) {
		fprintf(f, "  said: %" PRIu64 " range%s left open when the process ended (first ",
			m->left_open, m->left_open == 1 ? "" : "s");
		qname(f, m->names[m->left_open_nm].name);
		fputs("): measured to the end\n", f);
	}
	if (m->ends_other_thread) {
		fprintf(f, "  said: %" PRIu64 " range%s ended on another thread than it started (first ",
			m->ends_other_thread, m->ends_other_thread == 1 ? "" : "s");
		qname(f, m->names[m->other_thread_nm].name);
		fputs("): measured across threads\n", f);
	}
	if (m->cats.unmatched)
		fprintf(f, "  said: %" PRIu64 " of %" PRIu64 " storages named by categories notes were "
			"inside no live tensor block: not counted\n", m->cats.unmatched, m->cats.entries);
	if (m->cats.bad || m->cats.bad_notes)
		fprintf(f, "  said: categories notes: %" PRIu64 " line%s unreadable, %" PRIu64 " note%s "
			"missing a category's line (cut): the storages lost count as activations or "
			"temporaries unless another note names them\n", m->cats.bad,
			m->cats.bad == 1 ? "" : "s", m->cats.bad_notes, m->cats.bad_notes == 1 ? "" : "s");
	if (m->not_followed)
		fprintf(f, "  said: %" PRIu64 " range%s opened while %d were open in the process: "
			"not measured\n", m->not_followed, m->not_followed == 1 ? "" : "s", RG_MAX_OPEN);
}
