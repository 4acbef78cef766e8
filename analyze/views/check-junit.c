/*
 * check-junit.c - `memtrace check --junit FILE`: JUnit XML, one testcase
 * per result, a <failure> for each rule that failed, so that a CI system
 * shows a failed check as a failed test with its line of text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/check.h"

static void xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 && c != '\n' && c != '\t')
			putc('?', f);  /* not allowed in XML 1.0 */
		else
			putc(c, f);
	}
}

int check_junit(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
		FILE *f)
{
	(void)rs;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites tests=\"%d\" failures=\"%d\">\n"
		"<testsuite name=\"memtrace check\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n",
		o->n, o->failed, o->n, o->failed);
	for (int i = 0; i < o->n; i++) {
		const struct chk_result *x = &o->v[i];
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		if (!m)
			return -1;
		check_describe(m, r, x);
		if (fclose(m)) {
			free(text);
			return -1;
		}
		fputs("<testcase classname=\"memtrace.check\" name=\"", f);
		xml(f, x->rule->text);
		if (x->dev >= 0)
			fprintf(f, " (device %d)", x->dev);
		fputs("\"", f);
		if (x->pass) {
			fputs("/>\n", f);
		} else {
			fputs(">\n<failure message=\"", f);
			xml(f, text);
			fputs("\">", f);
			xml(f, x->rule->text);
			fputs(": ", f);
			xml(f, text);
			fputs("</failure>\n</testcase>\n", f);
		}
		free(text);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	return ferror(f) ? -1 : 0;
}
