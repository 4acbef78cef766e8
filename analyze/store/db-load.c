/*
 * db-load.c - the bulk load of a run's records into SQLite, on a thread of
 * its own.
 *
 * How it works: the analysis pass hands every record to the sink here,
 * which copies it as a row of integers into a batch (one array per table).
 * An allocation waits in a hash table until its first free, then both go
 * as one allocs row (the pass tells which allocation a free ends); those
 * never freed go at the end of the pass, in their order. One row per
 * allocation instead of one per event: half the rows and the work of
 * SQLite's virtual machine, and no index to pair frees with allocations
 * (a first report of 10 M events: 4.0-4.7 s of CPU instead of 7.2-7.8).
 * A full batch goes to the loader thread, which inserts each table's rows
 * with one statement, INSERT INTO T SELECT * FROM temp.load_T, where
 * load_T is a virtual table over the batch: SQLite appends the rows in one
 * loop rather than one bind per value and one step per row (10 M events,
 * 5 M allocs rows: 3.9-4.8 s of CPU in all, against 6.3-8.0 with a
 * prepared INSERT and bound values). There are two batches: the
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

/* allocs' columns, named: its rowid comes after them (the order rows are
   written in, by their free) */
#define ALLOCS_COLS "(id, trace, time_ns, tid, kind, flags, device, api, addr, bytes," \
	" stack, free_id, free_ns, free_tid, free_api, free_flags, free_stack)"

enum { T_ALLOCS, T_FAILURES, T_FREES, T_EVENT_EX, T_POOLS, T_MEMINFO, T_NOTES, NTABLES };

/* allocs' columns: the allocation's, then its free's (NULL: not freed) */
enum { A_ID, A_TRACE, A_TIME, A_TID, A_KIND, A_FLAGS, A_DEVICE, A_API, A_ADDR, A_BYTES,
       A_STACK, A_FREE_ID, A_FREE_NS, A_FREE_TID, A_FREE_API, A_FREE_FLAGS, A_FREE_STACK,
       A_NCOLS };

/* The tables loaded here, with their columns in schema order. */
static const struct table {
	const char *name;
	int ncols;
	int null_if_zero;           /* this column's 0 is NULL (-1: none) */
	int null_from;              /* when this column is 0, it and every
	                               column after it are NULL (-1: none) */
	int text;                   /* this column is the row's text (-1: none) */
} tables[NTABLES] = {
	[T_ALLOCS] = { "allocs", A_NCOLS, -1, A_FREE_ID, -1 },
	[T_FAILURES] = { "failures", 13, -1, -1, -1 },
	[T_FREES] = { "frees", 12, 11, -1, -1 },
	[T_EVENT_EX] = { "event_ex", 3, -1, -1, -1 },
	[T_POOLS] = { "pools", 8, -1, -1, -1 },
	[T_MEMINFO] = { "meminfo", 6, -1, -1, -1 },
	[T_NOTES] = { "notes", 4, -1, -1, 3 },
};

/*
 * The allocations not written yet, by event number: an allocs row is
 * written when its first free comes (or at the end of the pass), so the
 * loader keeps what the pass holds live, an allocation's columns up to
 * its stack (and the retained handles and pools, which no free names:
 * few). Open addressing, linear probing; seq 0 is an empty slot.
 */
struct pending {
	uint64_t seq;               /* the event number */
	uint64_t time, addr, bytes;
	uint32_t trace, tid, stack;
	uint16_t api;
	int8_t device;
	uint8_t a;                  /* kind and flags, as recorded */
};

struct pend_map {
	struct pending *slot;
	size_t cap, n;              /* cap: a power of two */
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
	uint64_t nevents;           /* events so far: the next one's number */
	struct pend_map pend;
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
	uint32_t row, n;
	const int64_t *r;           /* the row's values */
	uint32_t slow;              /* its columns that are text or NULL */
	int ncols;
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

/* The cursor on its row: where its values are, which columns are not
   plain integers. */
static void cursor_row(struct load_cursor *k)
{
	const struct load_vtab *v = (const struct load_vtab *)k->base.pVtab;
	const struct table *t = &tables[v->table];

	if (k->row >= k->n)
		return;
	k->r = &v->l->reading->vals[v->table][(size_t)k->row * (size_t)k->ncols];
	k->slow = 0;
	if (t->text >= 0)
		k->slow |= 1u << t->text;
	if (t->null_if_zero >= 0 && !k->r[t->null_if_zero])
		k->slow |= 1u << t->null_if_zero;
	if (t->null_from >= 0 && !k->r[t->null_from])
		k->slow |= ~0u << t->null_from;
}

static int vt_filter(sqlite3_vtab_cursor *c, int idx, const char *idxs, int argc,
		     sqlite3_value **argv)
{
	struct load_cursor *k = (struct load_cursor *)c;
	const struct load_vtab *v = (const struct load_vtab *)c->pVtab;

	(void)idx, (void)idxs, (void)argc, (void)argv;
	k->row = 0;
	k->n = v->l->reading->n[v->table];
	k->ncols = tables[v->table].ncols;
	cursor_row(k);
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *c)
{
	struct load_cursor *k = (struct load_cursor *)c;

	k->row++;
	cursor_row(k);
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *c)
{
	const struct load_cursor *k = (const struct load_cursor *)c;

	return k->row >= k->n;
}

/* Called for every value loaded: kept to a load and a call. */
static int vt_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
	const struct load_cursor *k = (const struct load_cursor *)c;

	if (!(k->slow & (1u << col))) {
		sqlite3_result_int64(ctx, k->r[col]);
	} else if (col == tables[((const struct load_vtab *)c->pVtab)->table].text) {
		const struct load_vtab *v = (const struct load_vtab *)c->pVtab;
		struct trace_bytes x = v->l->reading->text[k->row];

		sqlite3_result_text(ctx, x.p, (int)x.len, SQLITE_STATIC);
	} else {
		sqlite3_result_null(ctx);
	}
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

/* --- the allocations not written yet ------------------------------------------ */

static int64_t *new_row(struct db_load *l, int t);

static size_t pend_hash(uint64_t seq, size_t cap)
{
	return (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct pending *pend_find(struct pend_map *m, uint64_t seq)
{
	if (!m->cap)
		return NULL;
	for (size_t i = pend_hash(seq, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->slot[i].seq == seq)
			return &m->slot[i];
		if (!m->slot[i].seq)
			return NULL;
	}
}

/* A new slot for seq (not in m); NULL when out of memory. */
static struct pending *pend_add(struct pend_map *m, uint64_t seq)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		struct pending *old = m->slot, *ns = calloc(cap, sizeof(*ns));

		if (!ns)
			return NULL;
		for (size_t k = 0; k < m->cap; k++) {
			if (!old[k].seq)
				continue;
			for (i = pend_hash(old[k].seq, cap); ns[i].seq;
			     i = (i + 1) & (cap - 1))
				;
			ns[i] = old[k];
		}
		free(old);
		m->slot = ns;
		m->cap = cap;
	}
	for (i = pend_hash(seq, m->cap); m->slot[i].seq; i = (i + 1) & (m->cap - 1))
		;
	m->slot[i].seq = seq;
	m->n++;
	return &m->slot[i];
}

/* Removes p, moving back the entries after it that probed past it. */
static void pend_del(struct pend_map *m, struct pending *p)
{
	size_t i = (size_t)(p - m->slot), j = i;

	for (;;) {
		size_t k;

		j = (j + 1) & (m->cap - 1);
		if (!m->slot[j].seq)
			break;
		k = pend_hash(m->slot[j].seq, m->cap);
		/* j's entry may fill the hole at i unless its home k lies
		   cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->slot[i] = m->slot[j];
		i = j;
	}
	m->slot[i].seq = 0;
	m->n--;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct pending *)a)->seq, y = ((const struct pending *)b)->seq;

	return (x > y) - (x < y);
}

/* An allocs row of p, its free's columns NULL for now. */
static void pend_row(int64_t *v, const struct pending *p)
{
	v[A_ID] = (int64_t)p->seq;
	v[A_TRACE] = p->trace;
	v[A_TIME] = (int64_t)p->time;
	v[A_TID] = p->tid;
	v[A_KIND] = p->a & MT_KIND_MASK;
	v[A_FLAGS] = p->a & ~MT_KIND_MASK;
	v[A_DEVICE] = p->device;
	v[A_API] = p->api;
	v[A_ADDR] = (int64_t)p->addr;
	v[A_BYTES] = (int64_t)p->bytes;
	v[A_STACK] = p->stack;
	v[A_FREE_ID] = 0;
}

/* The allocations never freed, in their order, at the end of the pass. */
static int pend_flush(struct db_load *l)
{
	struct pend_map *m = &l->pend;
	size_t n = 0;
	int64_t *v;

	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].seq)
			m->slot[n++] = m->slot[i];
	if (n)
		qsort(m->slot, n, sizeof(*m->slot), by_id);
	for (size_t i = 0; i < n; i++) {
		if (!(v = new_row(l, T_ALLOCS)))
			return -1;
		pend_row(v, &m->slot[i]);
	}
	free(m->slot);
	memset(m, 0, sizeof(*m));
	return 0;
}

/* A row of table t in the batch being filled; NULL when the loader failed. */
static int64_t *new_row(struct db_load *l, int t)
{
	struct batch *b = l->fill;

	if (b->n[t] == BATCH_ROWS && submit(l))
		return NULL;
	b = l->fill;
	return &b->vals[t][(size_t)b->n[t]++ * (size_t)tables[t].ncols];
}

static int sink_record(void *ctx, const struct analysis *a, const struct srec *r, uint64_t seq,
		       uint64_t alloc_seq, uint64_t bytes, int dev)
{
	struct db_load *l = ctx;
	int64_t *v;

	switch (r->rec.type) {
	case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX: {
		const struct mt_event *e = r->rec.p;
		int is_free = r->rec.type == MT_REC_FREE || r->rec.type == MT_REC_FREE_EX;
		int64_t ev_dev = is_free ? dev : e->h.b;
		int64_t ev_bytes = (int64_t)(is_free && !e->bytes ? bytes : e->bytes);
		struct pending *pa;

		/* the pass numbers events 1, 2, ... as they come: the ids of
		   allocs, failures and frees together */
		if (seq != ++l->nevents) {
			snprintf(l->msg, sizeof(l->msg), "internal error: event %llu loaded as %llu",
				 (unsigned long long)seq, (unsigned long long)l->nevents);
			l->sink.errmsg = l->msg;
			return -1;
		}
		if (e->result) {
			if (!(v = new_row(l, T_FAILURES)))
				return -1;
			v[0] = (int64_t)seq;
			v[1] = r->proc + 1;
			v[2] = (int64_t)r->t;
			v[3] = r->rec.tid;
			v[4] = is_free;
			v[5] = e->h.a & MT_KIND_MASK;
			v[6] = e->h.a & ~MT_KIND_MASK;
			v[7] = ev_dev;
			v[8] = e->api;
			v[9] = (int64_t)e->addr;
			v[10] = ev_bytes;
			v[11] = e->result;
			v[12] = e->stack_id;
		} else if (!is_free) {
			if (!(pa = pend_add(&l->pend, seq))) {
				l->sink.errmsg = NULL;
				return -1;
			}
			pa->trace = (uint32_t)r->proc + 1;
			pa->time = r->t;
			pa->tid = r->rec.tid;
			pa->a = e->h.a;
			pa->device = e->h.b;
			pa->api = e->api;
			pa->addr = e->addr;
			pa->bytes = e->bytes;
			pa->stack = e->stack_id;
		} else if (alloc_seq && (pa = pend_find(&l->pend, alloc_seq)) &&
			   pa->device == ev_dev && (int64_t)pa->bytes == ev_bytes &&
			   (pa->a & MT_KIND_MASK) == (e->h.a & MT_KIND_MASK)) {
			/* the allocation's first free, of what it allocated and of
			   its kind: one allocs row for both */
			if (!(v = new_row(l, T_ALLOCS)))
				return -1;
			pend_row(v, pa);
			pend_del(&l->pend, pa);
			v[A_FREE_ID] = (int64_t)seq;
			v[A_FREE_NS] = (int64_t)r->t;
			v[A_FREE_TID] = r->rec.tid;
			v[A_FREE_API] = e->api;
			v[A_FREE_FLAGS] = e->h.a & ~MT_KIND_MASK;
			v[A_FREE_STACK] = e->stack_id;
		} else {
			/* a free of nothing known, a handle's later release, an
			   unmap of other bytes than mapped, a free of another
			   kind: a frees row (and the allocation's own row now,
			   without its free) */
			if (alloc_seq && (pa = pend_find(&l->pend, alloc_seq))) {
				if (!(v = new_row(l, T_ALLOCS)))
					return -1;
				pend_row(v, pa);
				pend_del(&l->pend, pa);
			}
			if (!(v = new_row(l, T_FREES)))
				return -1;
			v[0] = (int64_t)seq;
			v[1] = r->proc + 1;
			v[2] = (int64_t)r->t;
			v[3] = r->rec.tid;
			v[4] = e->h.a & MT_KIND_MASK;
			v[5] = e->h.a & ~MT_KIND_MASK;
			v[6] = ev_dev;
			v[7] = e->api;
			v[8] = (int64_t)e->addr;
			v[9] = ev_bytes;
			v[10] = e->stack_id;
			v[11] = (int64_t)alloc_seq;     /* 0: NULL */
		}
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

	if (pend_flush(l))
		return -1;
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
	free(l->pend.slot);
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
	char cols[160], sql[512];

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
		column_list(cols, sizeof(cols), t, "c0");
		snprintf(sql, sizeof(sql), "INSERT INTO %s%s SELECT %s FROM temp.load_%s",
			 tables[t].name, t == T_ALLOCS ? ALLOCS_COLS : "", cols, tables[t].name);
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
