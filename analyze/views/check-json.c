/*
 * check-json.c - `memtrace check --json`: every result (one per rule, or
 * per device for the rules that are per device) with its figure, limit and
 * place, and what each suppression hid. docs/check.md documents the fields.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/check.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "views/format.h"

static void str(FILE *f, const char *s)
{
	rep_json_str(f, s, strlen(s));
}

static void share(FILE *f, const char *k, double v)
{
	fprintf(f, ",\"%s\":%.4f", k, v);
}

/* A tensor site: its name and main frame, its id in the report's
   "framework"."sites" */
static void tensor_site(FILE *f, const struct report *r, const struct fw_site *s, uint64_t bytes,
			uint64_t count, int with_count)
{
	char name[4096];

	fputs("{\"where\":", f);
	str(f, fw_site_name(name, sizeof(name), r->a, s, NULL));
	fprintf(f, ",\"tensor_site\":%" PRIu32, s->id);
	if (s->function) {
		fputs(",\"function\":", f);
		str(f, s->function);
	}
	if (s->file) {
		fputs(",\"file\":", f);
		str(f, s->file);
		fprintf(f, ",\"line\":%" PRIu32, s->line);
	}
	fprintf(f, ",\"bytes\":%" PRIu64, bytes);
	if (with_count)
		fprintf(f, ",\"count\":%" PRIu64, count);
	putc('}', f);
}

/* The instance of a unit scope's figure: "test" (its nodeid) or "range"
   (its name with its domain), the "step" it was in, "open" when it was
   never closed. */
static void unit(FILE *f, const struct report *r, const struct rg_inst *in)
{
	char nm[1024];
	int64_t step = check_unit_step(r, in);

	fputs(check_unit_is_test(in) ? ",\"test\":" : ",\"range\":", f);
	str(f, check_unit_is_test(in) ? in->name : check_unit_name(nm, sizeof(nm), r, in));
	if (step >= 0)
		fprintf(f, ",\"step\":%" PRId64, step);
	if (in->open)
		fputs(",\"open\":true", f);
}

int check_json(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
	       FILE *f)
{
	char site[4096];

	fprintf(f, "{\"version\":1,\"passed\":%s,\"checks\":%d,\"failed\":%d,\"results\":[",
		o->failed ? "false" : "true", o->n, o->failed);
	for (int i = 0; i < o->n; i++) {
		const struct chk_result *x = &o->v[i];
		const struct sym_frame *fr = rep_main_frame(x->st);

		fprintf(f, "%s\n{\"rule\":", i ? "," : "");
		str(f, x->rule->text);
		fprintf(f, ",\"pass\":%s,", x->pass ? "true" : "false");
		if (x->missing[0]) {
			fputs("\"error\":", f);
			str(f, x->missing);
		} else if (x->is_share) {
			fprintf(f, "\"value\":%.4f", x->share);
			share(f, "limit", x->share_limit);
			fprintf(f, ",\"drains\":%" PRIu64 ",\"drain_ns\":%" PRIu64, x->value,
				x->site_bytes);
		} else if (x->is_signed) {
			fprintf(f, "\"value\":%" PRId64 ",\"limit\":%" PRIu64, x->svalue, x->limit);
		} else {
			fprintf(f, "\"value\":%" PRIu64 ",\"limit\":%" PRIu64, x->value, x->limit);
			if (x->has_baseline)
				fprintf(f, ",\"baseline\":%" PRIu64, x->baseline);
			if (x->rule->metric == CHK_LIVE_AT_EXIT)
				fprintf(f, ",\"suppressed\":%" PRIu64 ",\"cache_at_exit\":%" PRIu64,
					x->suppressed, x->cached);
		}
		if (x->in)
			unit(f, r, x->in);
		if (x->dev >= 0)
			fprintf(f, ",\"device\":%d", x->dev);
		if (x->proc >= 0) {
			const struct sproc *p = stream_proc(r->a->s, x->proc);

			fprintf(f, ",\"pid\":%" PRIu32, rep_pid(r->a, x->proc));
			if (p->process && p->process->rank >= 0)
				fprintf(f, ",\"rank\":%d", p->process->rank);
		}
		if (x->oom) {
			const struct fw_oom *m = x->oom;

			fprintf(f, ",\"oom\":{\"time_ns\":%" PRIu64 ",\"pid\":%" PRIu32
				",\"device\":%d,\"requested_bytes\":%" PRIu64 ",\"verdict\":",
				m->st.t, rep_pid(r->a, m->proc), m->dev, m->requested);
			str(f, fw_verdict_name(m->verdict));
			fprintf(f, ",\"cached_bytes\":%" PRIu64 ",\"largest_free_block_bytes\":%"
				PRIu64 "}", m->st.cached, m->st.largest_free);
		}
		if (x->fws) {
			fputs(",\"site\":", f);
			tensor_site(f, r, x->fws, x->site_bytes, 0, 0);
		} else if (fr && check_site(site, sizeof(site), r, x)) {
			fputs(",\"site\":{\"where\":", f);
			str(f, site);
			if (x->site)
				fprintf(f, ",\"site\":%" PRIu32, x->site->id);
			if (fr->function) {
				fputs(",\"function\":", f);
				str(f, fr->function);
			}
			if (fr->file) {
				fputs(",\"file\":", f);
				str(f, fr->file);
				fprintf(f, ",\"line\":%d", fr->line);
			}
			fprintf(f, ",\"bytes\":%" PRIu64 "}", x->site_bytes);
		}
		if (x->nleaks) {
			fputs(",\"tensor_leaks\":[", f);
			for (int k = 0; k < x->nleaks; k++) {
				fputs(k ? "," : "", f);
				tensor_site(f, r, x->leaks[k].s, x->leaks[k].bytes, x->leaks[k].count, 1);
			}
			putc(']', f);
		}
		putc('}', f);
	}
	fputs("],\n\"suppressions\":[", f);
	for (int i = 0; i < rs->ns; i++) {
		fprintf(f, "%s{\"suppression\":", i ? "," : "");
		str(f, rs->s[i].text);
		fprintf(f, ",\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 "}", rs->s[i].bytes,
			rs->s[i].count);
	}
	fputs("]}\n", f);
	return ferror(f) ? -1 : 0;
}
