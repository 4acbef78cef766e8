/*
 * db-load.h - the bulk load of a run's records into the SQLite database,
 * on a thread of its own (db.c owns the schema and decides when to load).
 *
 * Functions return NULL / -1 with a message in err on failure; they never
 * print.
 */
#ifndef MEMTRACE_DB_LOAD_H
#define MEMTRACE_DB_LOAD_H

#include <sqlite3.h>

#include "model/analysis.h"

struct db_load;

/*
 * Starts loading into h, which must be inside a transaction and may be
 * used from another thread meanwhile (opened SQLITE_OPEN_FULLMUTEX).
 * closing_sql runs once every row is in (commit, indexes). path is for
 * messages.
 */
struct db_load *db_load_start(sqlite3 *h, const char *path, const char *closing_sql, char *err,
			      size_t errlen);
/* The sink the analysis pass feeds; its end() hands over the last rows. */
struct an_sink *db_load_sink(struct db_load *l);
/* Waits until the rows are in and closing_sql has run: 0, or -1 with the
   loader's error in err. Then frees l. */
int db_load_wait(struct db_load *l, char *err, size_t errlen);
/* Stops a load that will not be finished (the pass failed) and frees l. */
void db_load_abort(struct db_load *l);

#endif
