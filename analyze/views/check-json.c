/*
 * check-json.c - `memtrace check --json`: every result (one per rule, or
 * per device for the rules that are per device) with its figure, limit and
 * place, and what each suppression hid. docs/check.md documents the fields.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/check.h"
#include "views/format.h"

static void str(FILE *f, const char *s)
{
	rep_json_str(f, s, strlen(s));
}

int check_json(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
	       FILE *f)
{
	char site[1024];

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
		} else {
			fprintf(f, "\"value\":%" PRIu64 ",\"limit\":%" PRIu64, x->value, x->limit);
			if (x->has_baseline)
				fprintf(f, ",\"baseline\":%" PRIu64, x->baseline);
			if (x->rule->metric == CHK_LIVE_AT_EXIT)
				fprintf(f, ",\"suppressed\":%" PRIu64, x->suppressed);
		}
		if (x->dev >= 0)
			fprintf(f, ",\"device\":%d", x->dev);
		if (x->proc >= 0) {
			const struct sproc *p = stream_proc(r->a->s, x->proc);

			fprintf(f, ",\"pid\":%" PRIu32, rep_pid(r->a, x->proc));
			if (p->process && p->process->rank >= 0)
				fprintf(f, ",\"rank\":%d", p->process->rank);
		}
		if (fr && check_site(site, sizeof(site), x)) {
			fputs(",\"site\":{\"where\":", f);
			str(f, site);
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
