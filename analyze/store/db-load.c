/*
 * db-load.c - the bulk load of a run's records into SQLite, on a thread of
 * its own.
 *
 * How it works: the analysis pass hands every record to the sink here,
 * which copies it as a row of integers into a batch (one array per table).
 * A full batch goes to the loader thread, which inserts each table's rows
 * with one statement, INSERT INTO T SELECT * FROM temp.load_T, where
 * load_T is a virtual table over the batch: SQLite appends the rows in one
 * loop rather than one bind per value and one step per row (about 0.35 us
 * a row instead of 1 us on the bench machine). There are two batches: the
 * pass fills one while the thread inserts the other, so loading and
 * analysis share the two cores of a small machine. When the pass ends (the
 * sink's end()), the thread inserts the last batch, runs the closing SQL
 * (commit, index) and stops, while the analysis replays to its peaks and
 * walks the shared memory records.
 *
 * An error on the thread (a full disk) is kept; the next sink call returns
 * it, so the pass stops, and db_load_wait() reports it. Where SQLite was
 * built without threads, or a thread cannot be started, batches are
 * inserted by the caller instead: slower, same rows.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db-load.h"

#define BATCH_ROWS 4096

enum { T_EVENTS, T_EVENT_EX, T_POOLS, T_MEMINFO, T_NOTES, NTABLES };

/* The tables loaded here, with their columns in schema order. */
static const struct table {
	const char *name;
	int ncols;
	int null_if_zero;           /* this column's 0 is NULL (-1: none) */
	int text;                   /* this column is the row's text (-1: none) */
	int auto_id;                /* column 0 is the rowid, 1, 2, ... in
	                               insertion order: SQLite assigns it, which
	                               spares a look-up per row (a third of the
	                               insert's time) */
} tables[NTABLES] = {
	[T_EVENTS] = { "events", 14, 13, -1, 1 },
	[T_EVENT_EX] = { "event_ex", 3, -1, -1, 0 },
	[T_POOLS] = { "pools", 8, -1, -1, 0 },
	[T_MEMINFO] = { "meminfo", 6, -1, -1, 0 },
	[T_NOTES] = { "notes", 4, -1, 3, 0 },
};

struct batch {
	int64_t *vals[NTABLES];     /* n[t] rows of tables[t].ncols values */
	struct trace_bytes *text;   /* the notes' text: bytes of the trace */
	uint32_t n[NTABLES];
};

struct db_load {
	sqlite3 *h;
	const char *path;
	char *closing_sql;
	sqlite3_stmt *insert[NTABLES];
	struct an_sink sink;
	struct batch b[2];
	struct batch *fill;         /* the pass's */
	const struct batch *reading;    /* what the virtual tables show */
	int threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *pending;      /* handed to the thread, not yet in */
	int ending, aborting, failed;
	uint64_t nevents;           /* event rows so far: the next one's id */
	char msg[512];              /* the thread's error */
};

/* --- the virtual table over a batch ------------------------------------------ */

/* "c0, c1, ..." for table t, the first column written as first. */
static void column_list(char *buf, size_t len, int t, const char *first)
{
	size_t n = (size_t)snprintf(buf, len, "%s", first);

	for (int c = 1; c < tables[t].ncols && n < len; c++)
		n += (size_t)snprintf(buf + n, len - n, ", c%d", c);
}

struct load_vtab {
	sqlite3_vtab base;
	struct db_load *l;
	int table;
};

struct load_cursor {
	sqlite3_vtab_cursor base;
	uint32_t row;
};

static int vt_connect(sqlite3 *h, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **errp)
{
	struct load_vtab *v;
	char cols[160], decl[192];
	int t;

	for (t = 0; t < NTABLES; t++)
		if (argc == 4 && !strcmp(argv[3], tables[t].name))
			break;
	if (t == NTABLES) {
		*errp = sqlite3_mprintf("memtrace_load: unknown table");
		return SQLITE_ERROR;
	}
	column_list(cols, sizeof(cols), t, "c0");
	snprintf(decl, sizeof(decl), "CREATE TABLE x(%s)", cols);
	if (sqlite3_declare_vtab(h, decl) != SQLITE_OK)
		return SQLITE_ERROR;
	v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->l = aux;
	v->table = t;
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	(void)v;
	info->estimatedCost = BATCH_ROWS;
	info->estimatedRows = BATCH_ROWS;
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct load_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)v;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *c)
{
	sqlite3_free(c);
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *c, int idx, const char *idxs, int argc,
		     sqlite3_value **argv)
{
	(void)idx, (void)idxs, (void)argc, (void)argv;
	((struct load_cursor *)c)->row = 0;
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *c)
{
	((struct load_cursor *)c)->row++;
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *c)
{
	const struct load_vtab *v = (const struct load_vtab *)c->pVtab;

	return ((struct load_cursor *)c)->row >= v->l->reading->n[v->table];
}

static int vt_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
	const struct load_vtab *v = (const struct load_vtab *)c->pVtab;
	const struct table *t = &tables[v->table];
	const struct batch *b = v->l->reading;
	uint32_t row = ((struct load_cursor *)c)->row;
	int64_t x = b->vals[v->table][(size_t)row * (size_t)t->ncols + (size_t)col];

	if (col == t->text)
		sqlite3_result_text(ctx, b->text[row].p, (int)b->text[row].len, SQLITE_STATIC);
	else if (col == t->null_if_zero && !x)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, x);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *rowid)
{
	*rowid = ((struct load_cursor *)c)->row;
	return SQLITE_OK;
}

static const sqlite3_module load_module = {
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

/* --- inserting a batch --------------------------------------------------------- */

/* Runs on the loader thread (or the caller's, unthreaded). */
static int insert_batch(struct db_load *l, struct batch *b)
{
	l->reading = b;
	for (int t = 0; t < NTABLES; t++) {
		int rc;

		if (!b->n[t])
			continue;
		rc = sqlite3_step(l->insert[t]);
		sqlite3_reset(l->insert[t]);
		if (rc != SQLITE_DONE) {
			snprintf(l->msg, sizeof(l->msg), "'%s': %s", l->path, sqlite3_errmsg(l->h));
			return -1;
		}
		b->n[t] = 0;
	}
	return 0;
}

static int run_closing(struct db_load *l)
{
	char *m = NULL;

	if (sqlite3_exec(l->h, l->closing_sql, NULL, NULL, &m) != SQLITE_OK) {
		snprintf(l->msg, sizeof(l->msg), "'%s': %s", l->path, m ? m : sqlite3_errmsg(l->h));
		sqlite3_free(m);
		return -1;
	}
	return 0;
}

static void *loader_main(void *arg)
{
	struct db_load *l = arg;
	int failed = 0;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!l->pending && !l->ending)
			pthread_cond_wait(&l->cv, &l->mu);
		if (l->pending && !l->aborting) {
			struct batch *b = l->pending;

			pthread_mutex_unlock(&l->mu);
			failed = insert_batch(l, b);
			pthread_mutex_lock(&l->mu);
			l->failed = failed;
			l->pending = NULL;
			pthread_cond_broadcast(&l->cv);
			if (failed)
				break;
			continue;
		}
		if (l->ending)
			break;
	}
	pthread_mutex_unlock(&l->mu);
	if (!failed && !l->aborting && run_closing(l))
		l->failed = 1;      /* read after the join */
	return NULL;
}

/* Hands the filled batch over and takes the other one. */
static int submit(struct db_load *l)
{
	if (!l->threaded) {
		if (insert_batch(l, l->fill)) {
			l->failed = 1;
			l->sink.errmsg = l->msg;
			return -1;
		}
		return 0;
	}
	pthread_mutex_lock(&l->mu);
	while (l->pending && !l->failed)
		pthread_cond_wait(&l->cv, &l->mu);
	if (!l->failed) {
		l->pending = l->fill;
		pthread_cond_broadcast(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	if (l->failed) {
		l->sink.errmsg = l->msg;
		return -1;
	}
	l->fill = l->fill == &l->b[0] ? &l->b[1] : &l->b[0];
	return 0;
}

/* --- the sink ------------------------------------------------------------------------ */

/* A row of table t in the batch being filled; NULL when the loader failed. */
static int64_t *new_row(struct db_load *l, int t)
{
	struct batch *b = l->fill;

	if (b->n[t] == BATCH_ROWS && submit(l))
		return NULL;
	b = l->fill;
	return &b->vals[t][(size_t)b->n[t]++ * (size_t)tables[t].ncols];
}

static int sink_record(void *ctx, const struct srec *r, uint64_t seq, uint64_t alloc_seq,
		       uint64_t bytes, int dev)
{
	struct db_load *l = ctx;
	int64_t *v;

	switch (r->rec.type) {
	case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX: {
		const struct mt_event *e = r->rec.p;
		int is_free = r->rec.type == MT_REC_FREE || r->rec.type == MT_REC_FREE_EX;

		/* events.id is assigned by SQLite: the pass must number
		   events 1, 2, ... as they come, as it does */
		if (seq != ++l->nevents) {
			snprintf(l->msg, sizeof(l->msg), "internal error: event %llu loaded as %llu",
				 (unsigned long long)seq, (unsigned long long)l->nevents);
			l->sink.errmsg = l->msg;
			return -1;
		}
		if (!(v = new_row(l, T_EVENTS)))
			return -1;
		v[0] = (int64_t)seq;
		v[1] = r->proc + 1;
		v[2] = (int64_t)r->t;
		v[3] = r->rec.tid;
		v[4] = is_free;
		v[5] = e->h.a & MT_KIND_MASK;
		v[6] = e->h.a & ~MT_KIND_MASK;
		v[7] = is_free ? dev : e->h.b;
		v[8] = e->api;
		v[9] = (int64_t)e->addr;
		v[10] = (int64_t)(is_free && !e->bytes ? bytes : e->bytes);
		v[11] = e->result;
		v[12] = e->stack_id;
		v[13] = (int64_t)alloc_seq;     /* 0: NULL */
		if (r->rec.type == MT_REC_ALLOC_EX || r->rec.type == MT_REC_FREE_EX) {
			const struct mt_event_ex *x = r->rec.p;

			if (!(v = new_row(l, T_EVENT_EX)))
				return -1;
			v[0] = (int64_t)seq;
			v[1] = (int64_t)x->x1;
			v[2] = (int64_t)x->x2;
		}
		return 0;
	}
	case MT_REC_POOL: {
		const struct mt_pool *p = r->rec.p;

		if (!(v = new_row(l, T_POOLS)))
			return -1;
		v[0] = r->proc + 1;
		v[1] = (int64_t)r->t;
		v[2] = r->rec.tid;
		v[3] = p->h.b;
		v[4] = (int64_t)p->pool;
		v[5] = (int64_t)p->reserved;
		v[6] = (int64_t)p->used;
		v[7] = p->api;
		return 0;
	}
	case MT_REC_MEMINFO: {
		const struct mt_meminfo *m = r->rec.p;

		if (!(v = new_row(l, T_MEMINFO)))
			return -1;
		v[0] = r->proc + 1;
		v[1] = (int64_t)r->t;
		v[2] = r->rec.tid;
		v[3] = m->h.b;
		v[4] = (int64_t)m->free_bytes;
		v[5] = (int64_t)m->total_bytes;
		return 0;
	}
	case MT_REC_NOTE:
		if (!(v = new_row(l, T_NOTES)))
			return -1;
		v[0] = r->proc + 1;
		v[1] = (int64_t)r->t;
		v[2] = r->rec.tid;
		l->fill->text[l->fill->n[T_NOTES] - 1] = trace_note_text(r->rec.p);
		return 0;
	default:
		return 0;
	}
}

/* The pass is over: the last rows, then the closing SQL, on the thread. */
static int sink_end(void *ctx)
{
	struct db_load *l = ctx;
	int any = 0;

	for (int t = 0; t < NTABLES; t++)
		any |= l->fill->n[t] != 0;
	if (any && submit(l))
		return -1;
	if (!l->threaded)
		return 0;
	pthread_mutex_lock(&l->mu);
	l->ending = 1;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return 0;
}

/* --- start and stop ---------------------------------------------------------- */

/* Frees l once no thread runs: the virtual tables and the module go too,
   as they point to l. */
static void free_load(struct db_load *l)
{
	char sql[64];

	for (int t = 0; t < NTABLES; t++) {
		sqlite3_finalize(l->insert[t]);
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS temp.load_%s", tables[t].name);
		sqlite3_exec(l->h, sql, NULL, NULL, NULL);
		free(l->b[0].vals[t]);
		free(l->b[1].vals[t]);
	}
	sqlite3_create_module_v2(l->h, "memtrace_load", NULL, NULL, NULL);
	free(l->b[0].text);
	free(l->b[1].text);
	free(l->closing_sql);
	if (l->threaded) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
	}
	free(l);
}

struct db_load *db_load_start(sqlite3 *h, const char *path, const char *closing_sql, char *err,
			      size_t errlen)
{
	struct db_load *l = calloc(1, sizeof(*l));
	char cols[160], sql[256];

	if (!l || !(l->closing_sql = strdup(closing_sql))) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->h = h;
	l->path = path;
	for (int k = 0; k < 2; k++) {
		for (int t = 0; t < NTABLES; t++)
			if (!(l->b[k].vals[t] = malloc(BATCH_ROWS * sizeof(int64_t) *
						       (size_t)tables[t].ncols)))
				goto nomem;
		if (!(l->b[k].text = malloc(BATCH_ROWS * sizeof(*l->b[k].text))))
			goto nomem;
	}
	l->fill = &l->b[0];
	if (sqlite3_create_module_v2(h, "memtrace_load", &load_module, l, NULL) != SQLITE_OK)
		goto sqlerr;
	for (int t = 0; t < NTABLES; t++) {
		snprintf(sql, sizeof(sql), "CREATE VIRTUAL TABLE temp.load_%s USING memtrace_load(%s)",
			 tables[t].name, tables[t].name);
		if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
			goto sqlerr;
		column_list(cols, sizeof(cols), t, tables[t].auto_id ? "NULL" : "c0");
		snprintf(sql, sizeof(sql), "INSERT INTO %s SELECT %s FROM temp.load_%s",
			 tables[t].name, cols, tables[t].name);
		if (sqlite3_prepare_v2(h, sql, -1, &l->insert[t], NULL) != SQLITE_OK)
			goto sqlerr;
	}
	l->sink.ctx = l;
	l->sink.record = sink_record;
	l->sink.end = sink_end;
	if (sqlite3_threadsafe() && !pthread_mutex_init(&l->mu, NULL)) {
		if (!pthread_cond_init(&l->cv, NULL)) {
			l->threaded = pthread_create(&l->thread, NULL, loader_main, l) == 0;
			if (!l->threaded)
				pthread_cond_destroy(&l->cv);
		}
		if (!l->threaded)
			pthread_mutex_destroy(&l->mu);
	}
	return l;
nomem:
	snprintf(err, errlen, "out of memory");
	free_load(l);
	return NULL;
sqlerr:
	snprintf(err, errlen, "'%s': %s", path, sqlite3_errmsg(h));
	free_load(l);
	return NULL;
}

struct an_sink *db_load_sink(struct db_load *l)
{
	return &l->sink;
}

int db_load_wait(struct db_load *l, char *err, size_t errlen)
{
	int rc;

	if (l->threaded)
		pthread_join(l->thread, NULL);
	else if (!l->failed && run_closing(l))
		l->failed = 1;
	rc = l->failed ? -1 : 0;
	if (rc)
		snprintf(err, errlen, "%s", l->msg);
	free_load(l);
	return rc;
}

void db_load_abort(struct db_load *l)
{
	if (!l)
		return;
	if (l->threaded) {
		pthread_mutex_lock(&l->mu);
		l->aborting = l->ending = 1;
		pthread_cond_broadcast(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->thread, NULL);
	}
	free_load(l);
}
