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
#include "views/format.h"

static int is_count(const struct chk_rule *rule)
{
	return rule->metric == CHK_FAILURES || rule->metric == CHK_OOM_RETRIES;
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

const char *check_site(char *buf, size_t len, const struct chk_result *x)
{
	const struct sym_frame *fr = rep_main_frame(x->st);
	const char *m;

	if (!fr)
		return NULL;
	if (fr->function && fr->file && fr->line)
		snprintf(buf, len, "%s at %s:%d", fr->function, fr->file, fr->line);
	else if (fr->function)
		snprintf(buf, len, "%s in %s", fr->function, (m = strrchr(fr->module, '/')) ?
			 m + 1 : fr->module);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, (m = strrchr(fr->module, '/')) ? m + 1 :
			 fr->module, fr->offset);
	return buf;
}

void check_describe(FILE *f, const struct report *r, const struct chk_result *x)
{
	const struct analysis *a = r->a;
	char site[1024], b[32];

	if (x->missing[0]) {
		fprintf(f, "%s", x->missing);
		return;
	}
	fprintf(f, "%s ", x->what);
	figure(f, x->rule, x->value);
	if (x->dev >= 0)
		fprintf(f, " on device %d", x->dev);
	if (x->proc >= 0) {
		const struct sproc *p = stream_proc(a->s, x->proc);

		fprintf(f, " %s pid %" PRIu32, x->dev >= 0 ? "in" : "of", rep_pid(a, x->proc));
		if (p->process && p->process->rank >= 0)
			fprintf(f, " [rank %d]", p->process->rank);
	}
	if (x->dev < 0 && x->proc < 0)
		fputs(x->rule->metric == CHK_PEAK ? " over all devices" : " in the run", f);
	if (x->has_baseline) {
		fputs(", baseline ", f);
		figure(f, x->rule, x->baseline);
		fputs(", limit ", f);
		figure(f, x->rule, x->limit);
	}
	if (x->suppressed)
		fprintf(f, " (%s more hidden by suppressions)", rep_size(b, sizeof(b), x->suppressed));
	if (check_site(site, sizeof(site), x)) {
		fprintf(f, "; top site %s", site);
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
