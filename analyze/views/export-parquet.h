/*
 * export-parquet.h - `memtrace export --format parquet -o DIR FILE...`: the
 * run as Hive-partitioned Parquet tables under DIR, for a warehouse engine
 * (docs/warehouse.md). It runs the analysis itself, with a sink that
 * writes the allocations as the pass pairs them; every other table is the
 * run model (model/report.h, model/framework.h), as the database's model
 * tables are.
 */
#ifndef MEMTRACE_EXPORT_PARQUET_H
#define MEMTRACE_EXPORT_PARQUET_H

#include <stddef.h>

#include "cli/pipeline.h"

/* The layout's version: the `format_version` of the runs table. */
#define PQX_FORMAT_VERSION 1

/*
 * Exports the traces into dir (created when missing). warn() gets the
 * warnings the report gives about damaged traces. Returns 0, or -1 with a
 * message in err and *status the exit status (1, or 2 for a missing
 * file); on failure nothing of this run is left in dir.
 */
int export_parquet(char **files, int nfiles, struct pipeline_opts *o, const char *dir,
		   void (*warn)(const char *msg), int *status, char *err, size_t errlen);

#endif
