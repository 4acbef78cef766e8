/*
 * check-junit.c - `memtrace check --junit FILE`: JUnit XML, so that a CI
 * system shows a failed check as a failed test with its line of text.
 *
 * Suite "memtrace check": one testcase per result of the run's rules
 * (those without a test scope, and a test scope's that matched no test),
 * a <failure> for each that failed. Suite "memtrace check: pytest tests",
 * when the run has pytest tests (domain "pytest", docs/units.md): one
 * testcase per test, named as pytest's own junitxml names it (classname
 * the nodeid's path without ".py", '/' as '.', and its classes; name the
 * function with its parameters), holding the verdicts of the rules scoped
 * to it ([test:GLOB]) in <system-out>, and a <failure> with the lines of
 * those that failed. A test no rule is about passes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/check.h"
#include "model/ranges.h"

static void xmln(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

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

static void xml(FILE *f, const char *s)
{
	xmln(f, s, strlen(s));
}

/* What a result found, in words (check_describe), malloc'd; NULL when
   out of memory. */
static char *line_of(const struct report *r, const struct chk_result *x)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	check_describe(m, r, x);
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

static int on_test(const struct chk_result *x)
{
	return x->rule->scope == CHK_TEST && x->in;
}

/* pytest's junitxml names: "dir/test_a.py::TestB::test_c[1]" is classname
   "dir.test_a.TestB", name "test_c[1]". */
static void test_names(FILE *f, const char *nodeid)
{
	const char *last = nodeid, *p, *sep = strstr(nodeid, "::");
	size_t file = sep ? (size_t)(sep - nodeid) : strlen(nodeid);

	for (p = nodeid; (p = strstr(p, "::")); p += 2)
		last = p + 2;
	if (file > 3 && !strncmp(nodeid + file - 3, ".py", 3))
		file -= 3;
	fputs("<testcase classname=\"", f);
	for (size_t i = 0; i < file; i++) {
		if (nodeid[i] == '/')
			putc('.', f);
		else
			xmln(f, nodeid + i, 1);
	}
	/* the classes between the file and the function */
	for (p = sep; p && p + 2 < last; ) {
		const char *q = strstr(p + 2, "::");

		putc('.', f);
		xmln(f, p + 2, (size_t)(q - p - 2));
		p = q;
	}
	fputs("\" name=\"", f);
	xml(f, last == nodeid ? nodeid : last);
	fputs("\"", f);
}

static int run_cases(const struct chk_outcome *o, const struct report *r, FILE *f)
{
	for (int i = 0; i < o->n; i++) {
		const struct chk_result *x = &o->v[i];
		char *text;

		if (on_test(x))
			continue;
		if (!(text = line_of(r, x)))
			return -1;
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
	return 0;
}

/* One test's testcase: its rules' verdicts, the failed ones' lines. */
static int test_case(const struct chk_outcome *o, const struct report *r,
		     const struct rg_inst *in, FILE *f)
{
	int failed = 0, any = 0;

	test_names(f, in->name);
	for (int i = 0; i < o->n; i++)
		if (on_test(&o->v[i]) && o->v[i].in == in) {
			any = 1;
			failed += !o->v[i].pass;
		}
	if (!any) {
		fputs("/>\n", f);
		return 0;
	}
	fputs(">\n", f);
	for (int pass = 0; pass < 2; pass++) {
		int first = 1;

		if (!pass && !failed)
			continue;
		for (int i = 0; i < o->n; i++) {
			const struct chk_result *x = &o->v[i];
			char *text;

			if (!on_test(x) || x->in != in || (!pass && x->pass))
				continue;
			if (!(text = line_of(r, x)))
				return -1;
			if (first)
				fputs(pass ? "<system-out>" : "<failure message=\"", f);
			if (!pass && first) {
				xml(f, text);
				fputs("\">", f);
			}
			if (!first)
				putc('\n', f);
			if (pass)
				fputs(x->pass ? "PASS " : "FAIL ", f);
			xml(f, x->rule->text);
			fputs(": ", f);
			xml(f, text);
			first = 0;
			free(text);
		}
		fputs(pass ? "</system-out>\n" : "</failure>\n", f);
	}
	fputs("</testcase>\n", f);
	return 0;
}

int check_junit(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
		FILE *f)
{
	const struct rg_inst *in;
	int nrun = 0, frun = 0, ntests = 0, ftests = 0;
	uint32_t it = 0;

	(void)rs;
	for (int i = 0; i < o->n; i++)
		if (!on_test(&o->v[i])) {
			nrun++;
			frun += !o->v[i].pass;
		}
	while ((in = check_unit_next_test(r, &it))) {
		int bad = 0;

		ntests++;
		for (int i = 0; i < o->n; i++)
			bad |= on_test(&o->v[i]) && o->v[i].in == in && !o->v[i].pass;
		ftests += bad;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites tests=\"%d\" failures=\"%d\">\n"
		"<testsuite name=\"memtrace check\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n",
		nrun + ntests, frun + ftests, nrun, frun);
	if (run_cases(o, r, f))
		return -1;
	fputs("</testsuite>\n", f);
	if (ntests) {
		fprintf(f, "<testsuite name=\"memtrace check: pytest tests\" tests=\"%d\" "
			"failures=\"%d\" errors=\"0\">\n", ntests, ftests);
		for (it = 0; (in = check_unit_next_test(r, &it));)
			if (test_case(o, r, in, f))
				return -1;
		fputs("</testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	return ferror(f) ? -1 : 0;
}
