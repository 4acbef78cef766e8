/*
 * html.h - `memtrace view`: the run model as one self-contained HTML page
 * (docs/view.md). The page embeds the JSON report (report_json) and, for
 * what the JSON lacks, data taken straight from the model: per device the
 * timeline rows, the device-used samples, everything held at the peak by
 * site and the address map's boxes; every site of the run; the framework's
 * timelines. Its JavaScript only lays that out and draws it.
 *
 * Functions return 0 / -1 (with a message in err); they never print.
 */
#ifndef MEMTRACE_HTML_H
#define MEMTRACE_HTML_H

#include <stdio.h>

#include "model/report.h"
#include "views/plot.h"

#define HTML_MAP_MAX 20000          /* boxes of an address map: the largest */

/* Writes the page of report r (m: the address map's boxes, NULL none). */
int html_write(const struct report *r, const struct plot_map *m, FILE *f, char *err,
	       size_t errlen);

#endif
