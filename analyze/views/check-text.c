/*
 * check-text.c - the text of `memtrace check`: one line per rule that
 * failed (the rule, the figure, where, the top site with file:line), one
 * line per suppression with what it hid, then the verdict; when every rule
 * passed, the verdict alone, one line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/check.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "views/format.h"

static int is_count(const struct chk_rule *rule)
{
	return rule->metric == CHK_FAILURES || rule->metric == CHK_OOM_RETRIES ||
	       (rule->metric >= CHK_OOMS && rule->metric <= CHK_OOM_OUTSIDE);
}

static void figure(FILE *f, const struct chk_rule *rule, uint64_t v)
{
	char b[32];

	if (is_count(rule))
		fprintf(f, "%" PRIu64, v);
	else if (v < 1024)
		fprintf(f, "%s", rep_size(b, sizeof(b), v));
	else
		fprintf(f, "%s (%" PRIu64 " B)", rep_size(b, sizeof(b), v), v);
}

const char *check_site(char *buf, size_t len, const struct report *r, const struct chk_result *x)
{
	if (x->fws)
		return fw_site_name(buf, len, r->a, x->fws, NULL);
	if (x->site)
		return rep_site_name(buf, len, x->site, NULL);
	if (rep_main_frame(x->st))
		return rep_stack_name(buf, len, x->st, x->nframes ? x->nframes : SITE_NAME_FRAMES,
				      NULL);
	return NULL;
}

/* A name from the model, raw: escaped for a terminal as the report does. */
static void name(FILE *f, const char *s)
{
	rep_text_str(f, s, strlen(s));
}

/* The first OOM of an OOM rule: when, the request, the verdict and the
   allocator's state then (the report's "framework out-of-memory errors"). */
static void oom_line(FILE *f, const struct report *r, const struct chk_result *x)
{
	const struct fw_oom *o = x->oom;
	char tm[32], b1[32], b2[32], b3[32];

	fprintf(f, "; %s %s", x->value == 1 ? "at" : "the first at",
		rep_time(tm, sizeof(tm), o->st.t));
	if (x->proc < 0)
		fprintf(f, " in pid %" PRIu32, rep_pid(r->a, o->proc));
	if (x->dev < 0)
		fprintf(f, " on device %d", o->dev);
	fprintf(f, ": a request of %s failed: %s (cached %s, largest free block %s)",
		rep_size(b1, sizeof(b1), o->requested), fw_verdict_name(o->verdict),
		rep_size(b2, sizeof(b2), o->st.cached), rep_size(b3, sizeof(b3), o->st.largest_free));
}

/* The instance a unit scope's figure is of: " in test 'NODEID'", " in
   step 3", " in range 'forward' (step 3)". */
static void unit_where(FILE *f, const struct report *r, const struct rg_inst *in)
{
	char nm[1024];
	int64_t step = check_unit_step(r, in);

	if (check_unit_is_step(r, in)) {
		fprintf(f, " in step %" PRId64, step);
	} else {
		fputs(check_unit_is_test(in) ? " in test '" : " in range '", f);
		name(f, check_unit_is_test(in) ? in->name : check_unit_name(nm, sizeof(nm), r, in));
		putc('\'', f);
		if (step >= 0)
			fprintf(f, " (step %" PRId64 ")", step);
	}
	if (in->open)
		fputs(" (left open: measured to its process's end)", f);
}

void check_describe(FILE *f, const struct report *r, const struct chk_result *x)
{
	const struct analysis *a = r->a;
	char site[4096], b[32];

	if (x->missing[0]) {
		fprintf(f, "%s", x->missing);
		return;
	}
	if (x->is_share) {
		fprintf(f, "%s %.2f%% of the run (%" PRIu64 " drain%s, %s), limit %.2f%%", x->what,
			100.0 * x->share, x->value, x->value == 1 ? "" : "s",
			rep_duration(b, sizeof(b), x->site_bytes), 100.0 * x->share_limit);
		return;
	}
	if (x->is_signed) {
		uint64_t mag = x->svalue < 0 ? -(uint64_t)x->svalue : (uint64_t)x->svalue;

		fprintf(f, "%s %s%s (%" PRId64 " B)", x->what, x->svalue < 0 ? "-" : "",
			rep_size(b, sizeof(b), mag), x->svalue);
		if (x->rule->scope == CHK_STEP)
			fprintf(f, " over steps %" PRIu32 "-%" PRIu32, x->rule->step_from,
				x->rule->step_to);
		fputs(", limit ", f);
		figure(f, x->rule, x->limit);
		return;
	}
	fprintf(f, "%s ", x->what);
	figure(f, x->rule, x->value);
	if (x->in)
		unit_where(f, r, x->in);
	if (x->dev >= 0)
		fprintf(f, " on device %d", x->dev);
	if (x->proc >= 0) {
		const struct sproc *p = stream_proc(a->s, x->proc);

		fprintf(f, " %s pid %" PRIu32, x->dev >= 0 ? "in" : "of", rep_pid(a, x->proc));
		if (p->process && p->process->rank >= 0)
			fprintf(f, " [rank %d]", p->process->rank);
	}
	if (x->dev < 0 && x->proc < 0 && !x->in)
		fputs(x->rule->metric == CHK_PEAK ? " over all devices" : " in the run", f);
	if (x->has_baseline) {
		fputs(", baseline ", f);
		figure(f, x->rule, x->baseline);
		fputs(", limit ", f);
		figure(f, x->rule, x->limit);
	}
	if (x->suppressed)
		fprintf(f, " (%s more hidden by suppressions)", rep_size(b, sizeof(b), x->suppressed));
	if (x->cached)
		fprintf(f, " (and %s held by a caching allocator at exit: its cache, not a leak)",
			rep_size(b, sizeof(b), x->cached));
	if (x->oom)
		oom_line(f, r, x);
	if (x->nleaks) {
		fputs(x->nleaks == 1 ? "; tensor leak candidate " : "; tensor leak candidates ", f);
		for (int i = 0; i < x->nleaks; i++) {
			fputs(i ? ", " : "", f);
			name(f, fw_site_name(site, sizeof(site), a, x->leaks[i].s, NULL));
			fprintf(f, " (%s, %" PRIu64 " tensor%s)", rep_size(b, sizeof(b), x->leaks[i].bytes),
				x->leaks[i].count, x->leaks[i].count == 1 ? "" : "s");
		}
	} else if (check_site(site, sizeof(site), r, x)) {
		fprintf(f, "; %s ", x->fws ? (x->oom ? "top tensor holder" : "top tensor site") :
			"top site");
		name(f, site);
		if (x->site_bytes)
			fprintf(f, " (%s)", rep_size(b, sizeof(b), x->site_bytes));
	} else if (x->rule->metric == CHK_UNTRACED) {
		fputs("; the CUDA context, kernels and libraries (no call to point at)", f);
	}
}

int check_text(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
	       FILE *f)
{
	char b[32];

	for (int i = 0; i < o->n; i++) {
		const struct chk_result *x = &o->v[i];

		if (x->pass)
			continue;
		fprintf(f, "FAIL %s: ", x->rule->text);
		check_describe(f, r, x);
		putc('\n', f);
	}
	if (o->failed) {
		for (int i = 0; i < rs->ns; i++)
			fprintf(f, "suppressed %s: %s in %" PRIu64 " block%s\n", rs->s[i].text,
				rep_size(b, sizeof(b), rs->s[i].bytes), rs->s[i].count,
				rs->s[i].count == 1 ? "" : "s");
		fprintf(f, "memtrace check: %d of %d check%s failed\n", o->failed, o->n,
			o->n == 1 ? "" : "s");
	} else {
		fprintf(f, "memtrace check: all %d check%s passed (%d rule%s)", o->n,
			o->n == 1 ? "" : "s", rs->n, rs->n == 1 ? "" : "s");
		for (int i = 0; i < rs->ns; i++)
			fprintf(f, "%s%s hid %s in %" PRIu64 " block%s", i ? ", " : "; ",
				rs->s[i].text, rep_size(b, sizeof(b), rs->s[i].bytes), rs->s[i].count,
				rs->s[i].count == 1 ? "" : "s");
		putc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}
