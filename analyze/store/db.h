/*
 * db.h - the SQLite database of a run: schema (docs/schema.md), loading,
 * the check that lets a report reuse a database loaded before (db.c,
 * db-load.c), and the run model's tables (db-model.c).
 *
 * Functions return NULL / -1 with a message in err on failure; they never
 * print.
 */
#ifndef MEMTRACE_DB_H
#define MEMTRACE_DB_H

#include <sqlite3.h>

#include "model/analysis.h"
#include "model/report.h"
#include "model/symbols.h"

#define DB_SCHEMA_VERSION 4

struct db;

/*
 * Opens path for the traces given. *fresh is set to 1 when the database
 * must be (and now is being) loaded: then db_sink() gives the sink that
 * inserts the records (on a thread of its own, db-load.c; the sink's end()
 * starts the commit and the index there), and db_finish() waits until that
 * is done and reports any error of the load. 0 when an
 * existing database matches the traces (same paths, sizes and mtimes, and
 * newer than each): it is reused as is. A file at path that is not a
 * memtrace database is refused, never overwritten.
 */
struct db *db_open(const char *path, const char *const *traces, struct trace **t, int n,
		   struct stream *s, int *fresh, char *err, size_t errlen);
struct an_sink *db_sink(struct db *d);
int db_finish(struct db *d, char *err, size_t errlen);
/* The run model's tables (db-model.c), written again by each report. */
int db_save_model(struct db *d, const struct report *r, char *err, size_t errlen);
sqlite3 *db_handle(struct db *d);
void db_close(struct db *d);

#endif
