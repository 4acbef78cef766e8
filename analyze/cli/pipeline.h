/*
 * pipeline.h - what `memtrace report` and `memtrace plot` both do: open
 * the traces, merge them, load the database (or reuse it), analyze,
 * symbolize and build the report's content.
 */
#ifndef MEMTRACE_PIPELINE_H
#define MEMTRACE_PIPELINE_H

#include "model/analysis.h"
#include "store/db.h"
#include "model/report.h"
#include "model/symbols.h"

struct pipeline_opts {
	const char *db_path;        /* NULL: FILE.db beside the first trace */
	int no_db;                  /* analyze without a database */
	int devices_only;           /* no symbols, sites nor shared memory: the
	                               figures per device only (run's summary) */
	const char *out_dir;        /* created once the traces are valid, or NULL */
	struct an_sink *sink;       /* gets every record when no_db */
	struct sym_opts sym;
};

struct pipeline {
	struct trace **t;
	char **files;               /* the name of each of t (distinct traces) */
	int n;
	struct stream *s;
	struct db *db;
	int db_fresh;
	char *db_path;
	struct symbols *sy;
	struct analysis *a;
	struct report r;
	int have_report;
};

/*
 * Runs everything; warnings about damaged traces go through warn(). On
 * failure returns -1 with a message in err and *status the exit status
 * (1 bad input or runtime error, 2 missing file), and everything it had
 * opened freed: pipeline_free() is then not needed (and harmless).
 */
int pipeline_run(struct pipeline *p, char **files, int n, const struct pipeline_opts *o,
		 void (*warn)(const char *msg), int *status, char *err, size_t errlen);
void pipeline_free(struct pipeline *p);

#endif
