/*
 * check-units.c - the figures of `memtrace check` in the program's own
 * units (docs/check.md, "The program's units"): rules scoped to a range
 * ([range:NAME]), a step or a span of steps ([step:N], [step:A-B]) or
 * pytest tests ([test:GLOB]), and the steps' growth_per_step and
 * first_step_excess, read from the ranges model (model/ranges.h).
 *
 * A scope is a set of range instances: a range's are those whose range
 * name ("domain:name", digit runs as N: "step N") or own name
 * ("io:load", "step 3") is NAME or matches it as a glob (fnmatch); a
 * step's, the run's steps (the step range's instances) whose number is in
 * A-B; a test's, the pytest tests (origin pytest) whose nodeid is GLOB or
 * matches it. peak is the highest reserved of an instance, the level at
 * its start included (the report's range peaks); tensor_peak_allocated
 * the framework's allocated likewise; leaked what the instance held more
 * at its end than at its start, 0 when less (of the framework's allocated
 * when the run has PyTorch's events, as the report's tests table). A test
 * scope has one result per test; the others one, of the instance with the
 * highest figure. growth_per_step and first_step_excess of a span are
 * those of the ranges model (the run's, without a scope) over the span's
 * steps alone. A scope that matches nothing is a result that fails and
 * says why: a renamed test or a run without steps never passes.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/trace-format.h"
#include "model/check.h"
#include "model/ranges.h"

static const char no_steps[] = "the run has no steps (no range named like a step: 'step N', "
			       "'iteration N', 'batch N'; docs/units.md)";

/* NAME exactly, or matching it as a glob. */
static int name_hit(const char *glob, const char *s)
{
	return !strcmp(glob, s) || !fnmatch(glob, s, 0);
}

static int is_test(const struct rg_inst *in)
{
	return in->origin == MT_ORIGIN_PYTEST;
}

static int in_scope(const struct rg_model *m, const struct rg_inst *in,
		    const struct chk_rule *rule)
{
	const struct rg_group *g = &m->groups[in->group];
	char b[1024];

	switch (rule->scope) {
	case CHK_STEP:
		return (int)in->group == m->step_group && in->step_no >= rule->step_from &&
		       in->step_no <= rule->step_to;
	case CHK_TEST:
		return is_test(in) && name_hit(rule->scope_name, in->name);
	case CHK_RANGE:
		if (name_hit(rule->scope_name, rg_group_name(b, sizeof(b), g)))
			return 1;
		snprintf(b, sizeof(b), "%s%s%s", g->domain ? g->domain : "", g->domain ? ":" : "",
			 in->name);
		return name_hit(rule->scope_name, b);
	default:
		return 0;
	}
}

/* Which of an instance's figures a rule reads (leaked: what it held more
   at its end than at its start, of the framework's allocated when the run
   has it), as an RG_BEST_* index. */
static int best_of(const struct rg_model *m, enum chk_metric metric)
{
	return metric == CHK_LEAKED ? (m->has_fw ? RG_BEST_FW_KEPT : RG_BEST_RES_KEPT) :
	       metric == CHK_TENSOR_PEAK_ALLOCATED ? RG_BEST_FW : RG_BEST_RES;
}

static uint64_t inst_figure(const struct rg_model *m, const struct rg_inst *in,
			    enum chk_metric metric)
{
	return rg_best_value(in, best_of(m, metric));
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/*
 * growth_per_step and first_step_excess of the run's steps numbered
 * from-to, as the ranges model works them out for all of them: (reserved
 * at the end of the last - of the first) / (steps - 1), and the first
 * one's peak - the (upper) median peak of the others. 1, 0 when fewer
 * than two steps (*n their count), -1 out of memory.
 */
static int span(const struct rg_model *m, const struct chk_rule *rule, uint32_t *n,
		int64_t *v)
{
	const struct rg_inst *f = NULL, *l = NULL;
	uint64_t *others;
	uint32_t k = 0;

	*n = 0;
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (in_scope(m, &m->inst[m->steps[i]], rule)) {
			l = &m->inst[m->steps[i]];
			f = f ? f : l;
			++*n;
		}
	if (*n < 2)
		return 0;
	if (rule->metric == CHK_GROWTH_PER_STEP) {
		*v = ((int64_t)l->res1 - (int64_t)f->res1) / (int64_t)(*n - 1);
		return 1;
	}
	if (!(others = malloc((*n - 1) * sizeof(*others))))
		return -1;
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (&m->inst[m->steps[i]] != f && in_scope(m, &m->inst[m->steps[i]], rule))
			others[k++] = m->inst[m->steps[i]].res_peak;
	qsort(others, k, sizeof(*others), cmp_u64);
	*v = (int64_t)f->res_peak - (int64_t)others[k / 2];
	free(others);
	return 1;
}

/* growth_per_step, first_step_excess: signed; the run's (the ranges
   model's) or a span's. */
static int step_figure(const struct report *r, const struct chk_rule *rule,
		       struct chk_result *x)
{
	const struct rg_model *m = r->a->ranges;
	uint32_t n = 0;
	int got;

	x->is_signed = 1;
	if (!m || m->step_group < 0) {
		snprintf(x->missing, sizeof(x->missing), "%s", no_steps);
		return 0;
	}
	if (rule->scope == CHK_ALL) {
		n = m->nsteps;
		got = m->has_growth;
		x->svalue = rule->metric == CHK_GROWTH_PER_STEP ? m->growth : m->first_vs_steady;
	} else if ((got = span(m, rule, &n, &x->svalue)) < 0) {
		return -1;
	}
	if (!got)
		snprintf(x->missing, sizeof(x->missing), "the run has %" PRIu32 " step%s%s: a "
			 "figure per step needs two", n, n == 1 ? "" : "s",
			 rule->scope == CHK_ALL ? "" : " in that span");
	return 0;
}

/* Why a scope matched no instance. */
static void none(const struct rg_model *m, const struct chk_rule *rule, struct chk_result *x)
{
	uint32_t tests = 0;

	switch (rule->scope) {
	case CHK_STEP:
		if (m->step_group < 0)
			snprintf(x->missing, sizeof(x->missing), "%s", no_steps);
		else if (rule->step_from == rule->step_to)
			snprintf(x->missing, sizeof(x->missing), "the run has no step %" PRIu32
				 " (%" PRIu32 " steps, %" PRIu32 " to %" PRIu32 ")", rule->step_from,
				 m->nsteps, m->inst[m->steps[0]].step_no,
				 m->inst[m->steps[m->nsteps - 1]].step_no);
		else
			snprintf(x->missing, sizeof(x->missing), "the run has no step in %" PRIu32
				 "-%" PRIu32 " (%" PRIu32 " steps, %" PRIu32 " to %" PRIu32 ")",
				 rule->step_from, rule->step_to, m->nsteps,
				 m->inst[m->steps[0]].step_no, m->inst[m->steps[m->nsteps - 1]].step_no);
		break;
	case CHK_TEST:
		for (uint32_t i = 0; i < m->ninst; i++)
			tests += is_test(&m->inst[i]);
		if (tests)
			snprintf(x->missing, sizeof(x->missing), "no test of the run's %" PRIu32
				 " matches '%s'", tests, rule->scope_name);
		else
			snprintf(x->missing, sizeof(x->missing), "the run has no pytest test "
				 "(`memtrace run pytest ...`: docs/units.md)");
		break;
	default:
		snprintf(x->missing, sizeof(x->missing), "no range of the run's %" PRIu32
			 " matches '%s'", m->ngroups, rule->scope_name);
		break;
	}
}

int check_unit_figures(const struct report *r, const struct chk_rule *rule,
		       struct chk_outcome *o)
{
	const struct rg_model *m = r->a->ranges;
	struct chk_result *x = NULL;
	int multi = r->a->nprocs > 1;

	if (rule->metric == CHK_GROWTH_PER_STEP || rule->metric == CHK_FIRST_STEP_EXCESS) {
		if (!(x = check_result_add(o, rule, -1, -1)))
			return -1;
		return step_figure(r, rule, x);
	}
	if (!m) {
		if (!(x = check_result_add(o, rule, -1, -1)))
			return -1;
		snprintf(x->missing, sizeof(x->missing), "the run has no range records (NVTX "
			 "ranges, memtrace's markers, pytest tests: docs/units.md)");
		return 0;
	}
	if (rule->metric == CHK_TENSOR_PEAK_ALLOCATED && !m->has_fw) {
		if (!(x = check_result_add(o, rule, -1, -1)))
			return -1;
		check_no_framework(r, x);
		return 0;
	}
	/* a range scope: its names' highest instances (the others are folded
	   away, docs/units.md); a step or test scope: its instances, kept */
	uint32_t n = rule->scope == CHK_RANGE ? m->nnames : m->ninst;
	for (uint32_t i = 0; i < n; i++) {
		const struct rg_inst *in;
		uint64_t v;

		if (rule->scope == CHK_RANGE) {
			int b = m->names[i].best[best_of(m, rule->metric)];

			if (b < 0)
				continue;
			in = &m->inst[b];
		} else {
			in = &m->inst[i];
		}
		if (!in_scope(m, in, rule))
			continue;
		v = inst_figure(m, in, rule->metric);
		if (rule->scope == CHK_TEST || !x) {
			if (!(x = check_result_add(o, rule, -1, multi ? in->proc : -1)))
				return -1;
		} else if (v <= x->value) {
			continue;
		}
		x->in = in;
		x->value = v;
		x->proc = multi ? in->proc : -1;
	}
	if (!x) {
		if (!(x = check_result_add(o, rule, -1, -1)))
			return -1;
		none(m, rule, x);
	}
	return 0;
}

const char *check_unit_name(char *buf, size_t len, const struct report *r,
			    const struct rg_inst *in)
{
	const struct rg_group *g = &r->a->ranges->groups[in->group];

	snprintf(buf, len, "%s%s%s", g->domain ? g->domain : "", g->domain ? ":" : "", in->name);
	return buf;
}

int64_t check_unit_step(const struct report *r, const struct rg_inst *in)
{
	return in->step >= 0 ? (int64_t)r->a->ranges->inst[in->step].step_no : -1;
}

int check_unit_is_test(const struct rg_inst *in)
{
	return is_test(in);
}

int check_unit_is_step(const struct report *r, const struct rg_inst *in)
{
	return (int)in->group == r->a->ranges->step_group;
}

const struct rg_inst *check_unit_next_test(const struct report *r, uint32_t *i)
{
	const struct rg_model *m = r->a->ranges;

	for (; m && *i < m->ninst; ++*i)
		if (is_test(&m->inst[*i]))
			return &m->inst[(*i)++];
	return NULL;
}
